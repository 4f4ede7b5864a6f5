//! The MCP project's reference server, npm `@modelcontextprotocol/server-everything`, as a
//! third party's tool server: its executable from `AUTO_MCP_EVERYTHING` (`scripts/mcp-everything`
//! installs it, `.ci/run` sets it), to run over stdio, or started over Streamable HTTP on a free
//! port.
//!
//! Without the variable the tests that need it skip with a note; under CI (`CI` set) they fail.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

/// The environment variable that names the server's executable.
pub const EVERYTHING_VARIABLE: &str = "AUTO_MCP_EVERYTHING";

/// server-everything serving Streamable HTTP; dropping it stops the process.
#[derive(Debug)]
pub struct Everything {
    child: Child,
    port: u16,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Everything {
    /// The executable; `None`, after a note printed once, when the variable is unset outside
    /// CI.
    ///
    /// # Panics
    /// Under CI (`CI` set) when the variable is not: the tests must not skip there.
    pub fn executable() -> Option<PathBuf> {
        static NOTE: Once = Once::new();
        match std::env::var_os(EVERYTHING_VARIABLE).filter(|path| !path.is_empty()) {
            Some(path) => Some(PathBuf::from(path)),
            None if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) => panic!(
                "AUTO_MCP_EVERYTHING is not set: under CI the tool suites must run against server-everything; .ci/run sets it from scripts/mcp-everything"
            ),
            None => {
                NOTE.call_once(|| {
                    let _ = writeln!(
                        std::io::stderr(),
                        "note: the server-everything tests are skipped: AUTO_MCP_EVERYTHING is not set (export AUTO_MCP_EVERYTHING=\"$(scripts/mcp-everything)\"; it needs node and npm)"
                    );
                });
                None
            }
        }
    }

    /// Starts it over Streamable HTTP on a free loopback port and waits until it listens.
    ///
    /// # Panics
    /// When it cannot start or does not listen within 20 seconds.
    pub fn start_http() -> Option<Everything> {
        let executable = Self::executable()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(&executable)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{} cannot start: {e}", executable.display()));
        let everything = Everything { child, port };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen on port {port} within 20 seconds"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(everything)
    }

    /// Its Streamable HTTP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}
