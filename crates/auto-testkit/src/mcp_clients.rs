//! The MCP project's own clients, to drive our MCP server as a user's agent would rather than
//! only with the client of the Rust SDK it is built on:
//!
//! - the official Python SDK (PyPI `mcp`): `AUTO_MCP_PYTHON` names the python of a virtual
//!   environment that has it (`scripts/mcp-python` makes one and prints that path);
//! - the MCP Inspector's command-line mode (npm `@modelcontextprotocol/inspector`):
//!   `AUTO_MCP_INSPECTOR` names its executable (`scripts/mcp-inspector` installs it).
//!
//! And the client generators integrators run on the OpenAPI document (PyPI
//! `openapi-python-client`, npm `openapi-typescript` with `openapi-fetch`):
//! `AUTO_OPENAPI_CLIENTS` names the folder `scripts/openapi-clients` installs them in.
//!
//! And the Standard Webhooks project's own Python library (PyPI `standardwebhooks`), the
//! verifier receivers use on our signed webhook deliveries: `AUTO_STANDARDWEBHOOKS` names the
//! python of a virtual environment that has it (`scripts/standardwebhooks`).
//!
//! `.ci/run` sets them all. Without a variable the tests that need it skip with a note printed
//! once; under CI (`CI` set) they fail, so a client that did not install cannot pass unseen.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Once;

/// The environment variable that names the python with the `mcp` SDK.
pub const MCP_PYTHON_VARIABLE: &str = "AUTO_MCP_PYTHON";
/// The environment variable that names the Inspector's executable.
pub const MCP_INSPECTOR_VARIABLE: &str = "AUTO_MCP_INSPECTOR";

/// The environment variable that names the folder of the OpenAPI client generators.
pub const OPENAPI_CLIENTS_VARIABLE: &str = "AUTO_OPENAPI_CLIENTS";

/// The environment variable that names the python with the `standardwebhooks` library.
pub const STANDARD_WEBHOOKS_VARIABLE: &str = "AUTO_STANDARDWEBHOOKS";

/// The python that has the Standard Webhooks library; `None`, after a note, outside CI when
/// `AUTO_STANDARDWEBHOOKS` is not set.
///
/// # Panics
/// Under CI (`CI` set) when the variable is not set.
pub fn standard_webhooks_python() -> Option<PathBuf> {
    static NOTE: Once = Once::new();
    installed(
        STANDARD_WEBHOOKS_VARIABLE,
        "scripts/standardwebhooks",
        "python3",
        &NOTE,
    )
}

/// The folder of the OpenAPI client generators (`venv/bin/openapi-python-client`,
/// `node/node_modules/.bin/openapi-typescript`); `None`, after a note, outside CI when
/// `AUTO_OPENAPI_CLIENTS` is not set.
///
/// # Panics
/// Under CI (`CI` set) when the variable is not set.
pub fn openapi_clients() -> Option<PathBuf> {
    static NOTE: Once = Once::new();
    installed(
        OPENAPI_CLIENTS_VARIABLE,
        "scripts/openapi-clients",
        "python3 and npm",
        &NOTE,
    )
}

/// The python that has the official MCP Python SDK; `None`, after a note, outside CI when
/// `AUTO_MCP_PYTHON` is not set.
///
/// # Panics
/// Under CI (`CI` set) when the variable is not set.
pub fn mcp_python() -> Option<PathBuf> {
    static NOTE: Once = Once::new();
    installed(MCP_PYTHON_VARIABLE, "scripts/mcp-python", "python3", &NOTE)
}

/// The MCP Inspector's executable; `None`, after a note, outside CI when `AUTO_MCP_INSPECTOR`
/// is not set.
///
/// # Panics
/// Under CI (`CI` set) when the variable is not set.
pub fn mcp_inspector() -> Option<PathBuf> {
    static NOTE: Once = Once::new();
    installed(
        MCP_INSPECTOR_VARIABLE,
        "scripts/mcp-inspector",
        "node and npm",
        &NOTE,
    )
}

/// The path a variable names; under CI a missing one is a failure, elsewhere a note.
fn installed(variable: &str, script: &str, needs: &str, note: &Once) -> Option<PathBuf> {
    match std::env::var_os(variable).filter(|path| !path.is_empty()) {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) => panic!(
            "{variable} is not set: under CI the client suites must run; .ci/run sets it from {script}"
        ),
        None => {
            note.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "note: the tests with this client are skipped: {variable} is not set (export {variable}=\"$({script})\"; it needs {needs})"
                );
            });
            None
        }
    }
}
