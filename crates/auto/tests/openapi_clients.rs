//! The server's OpenAPI document as integrators use it: the document a live server serves is
//! given to openapi-python-client and to openapi-typescript, and a small script on each
//! generated client saves a computation and an interaction, runs the computation (200), starts
//! the interaction (202), answers its request from the inbox and waits for its run to succeed
//! (`tests/openapi-clients/`). The TypeScript script is compiled by tsc in strict mode against
//! the generated types first, so a type the document gets wrong fails the compile.
//!
//! The generators come from `scripts/openapi-clients` (`AUTO_OPENAPI_CLIENTS`); without them
//! the tests skip with a note, and under CI they fail.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::serve;
use serde_json::{Value, json};

/// What each script saw, the same for both.
fn expected() -> Value {
    json!({
        "computation": {"x": 42},
        "refused": "invalid_input",
        "started": "started",
        "message": "Approve the release of 2.0?\n",
        "interaction": {"approved": true},
    })
}

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/openapi-clients")
}

fn succeeded(what: &str, output: Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    stdout
}

/// A server with the playbook acme/main, and its document written in `dir`.
async fn served(dir: &Path) -> (common::Server, PathBuf) {
    let server = serve();
    let api = server.client();
    api.playbook().await;
    let document = api.get("/v1/openapi.json").await;
    assert_eq!(document.status, 200);
    let path = dir.join("openapi.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&document.body).unwrap()).unwrap();
    (server, path)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_python_client_generated_from_the_document_saves_runs_and_answers() {
    let Some(tools) = auto_testkit::openapi_clients() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (server, document) = served(dir.path()).await;
    let generated = dir.path().join("python");
    let output = Command::new(tools.join("venv/bin/openapi-python-client"))
        .args(["generate", "--path"])
        .arg(&document)
        .arg("--output-path")
        .arg(&generated)
        .current_dir(dir.path())
        .output()
        .expect("openapi-python-client runs");
    let said = succeeded("openapi-python-client", output);
    assert!(!said.contains("Error"), "{said}");
    let output = Command::new(tools.join("venv/bin/python"))
        .arg(scripts().join("python_client.py"))
        .args([server.url.as_str(), "acme", "main"])
        .env("PYTHONPATH", &generated)
        .output()
        .expect("python runs");
    let seen: Value = serde_json::from_str(&succeeded("the Python script", output)).unwrap();
    assert_eq!(seen, expected());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_typescript_client_generated_from_the_document_compiles_strictly_and_runs() {
    let Some(tools) = auto_testkit::openapi_clients() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (server, document) = served(dir.path()).await;
    let node = tools.join("node/node_modules");
    let work = dir.path().join("ts");
    std::fs::create_dir(&work).unwrap();
    std::fs::copy(scripts().join("client.ts"), work.join("client.ts")).unwrap();
    std::fs::write(work.join("package.json"), r#"{"type": "module"}"#).unwrap();
    std::os::unix::fs::symlink(&node, work.join("node_modules")).unwrap();
    let output = Command::new(node.join(".bin/openapi-typescript"))
        .arg(&document)
        .args(["-o", "api.d.ts"])
        .current_dir(&work)
        .output()
        .expect("openapi-typescript runs");
    succeeded("openapi-typescript", output);
    let output = Command::new(node.join(".bin/tsc"))
        .args([
            "--strict",
            "--noEmitOnError",
            "--target",
            "es2022",
            "--module",
            "nodenext",
            "--moduleResolution",
            "nodenext",
            "client.ts",
        ])
        .current_dir(&work)
        .output()
        .expect("tsc runs");
    succeeded("tsc", output);
    let output = Command::new("node")
        .arg("client.js")
        .args([server.url.as_str(), "acme", "main"])
        .current_dir(&work)
        .output()
        .expect("node runs");
    let seen: Value = serde_json::from_str(&succeeded("the TypeScript script", output)).unwrap();
    assert_eq!(seen, expected());
}
