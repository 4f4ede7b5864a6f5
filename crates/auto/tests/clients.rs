//! The client packages in `clients/`, against a live server: the code generated from the
//! OpenAPI document is what the server serves now (`clients/python/auto_api`,
//! `clients/typescript/src/api.d.ts`; `scripts/clients-generate` writes them again), and each
//! package's hand-written layer runs, waits, follows a run's events and answers a request
//! (`clients/python/tests/live.py`, `clients/typescript/tests/live.ts`, the TypeScript compiled
//! by tsc in strict mode first).
//!
//! The generators come from `scripts/openapi-clients` (`AUTO_OPENAPI_CLIENTS`); without them
//! the tests skip with a note, and under CI they fail.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::serve;
use serde_json::{Value, json};

/// Set to write the generated code into `clients/` rather than compare it.
const WRITE_VARIABLE: &str = "AUTO_CLIENTS_WRITE";

fn clients() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../clients")
}

/// What each package's live script saw, the same for both.
fn expected() -> Value {
    json!({
        "computation": {"x": 42},
        "refused": "invalid_input",
        "started": "started",
        "wrong_answer": "invalid_input",
        "interaction": {"approved": true},
        "events": ["run_started", "request_opened", "request_answered", "run_succeeded"],
    })
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

/// Every file under `dir`, by its path from `dir`, with its text; none when it is not there.
fn files(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut found = BTreeMap::new();
    if !dir.is_dir() {
        return found;
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "__pycache__") {
                    stack.push(path);
                }
            } else {
                let text = std::fs::read_to_string(&path).unwrap();
                found.insert(path.strip_prefix(dir).unwrap().to_path_buf(), text);
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn the_generated_code_is_what_the_served_document_gives() {
    let Some(tools) = auto_testkit::openapi_clients() else {
        return;
    };
    let server = serve();
    let document = server.client().get("/v1/openapi.json").await;
    assert_eq!(document.status, 200);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("openapi.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&document.body).unwrap()).unwrap();

    let python = dir.path().join("auto_api");
    let output = Command::new(tools.join("venv/bin/openapi-python-client"))
        .args(["generate", "--meta", "none", "--config"])
        .arg(clients().join("python/openapi-python-client.yaml"))
        .arg("--path")
        .arg(&path)
        .arg("--output-path")
        .arg(&python)
        .current_dir(dir.path())
        .output()
        .expect("openapi-python-client runs");
    succeeded("openapi-python-client", output);
    let typescript = dir.path().join("api.d.ts");
    let output = Command::new(tools.join("node/node_modules/.bin/openapi-typescript"))
        .arg(&path)
        .arg("-o")
        .arg(&typescript)
        .output()
        .expect("openapi-typescript runs");
    succeeded("openapi-typescript", output);

    let committed_python = clients().join("python/auto_api");
    let committed_typescript = clients().join("typescript/src/api.d.ts");
    if std::env::var_os(WRITE_VARIABLE).is_some() {
        let _ = std::fs::remove_dir_all(&committed_python);
        for (file, text) in files(&python) {
            let to = committed_python.join(file);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::write(to, text).unwrap();
        }
        std::fs::copy(&typescript, &committed_typescript).unwrap();
        return;
    }
    let again = "run scripts/clients-generate and commit clients/";
    let (made, kept) = (files(&python), files(&committed_python));
    let made_names: Vec<&PathBuf> = made.keys().collect();
    let kept_names: Vec<&PathBuf> = kept.keys().collect();
    assert_eq!(
        made_names, kept_names,
        "the Python client's files differ: {again}"
    );
    for (file, text) in &made {
        assert!(kept[file] == *text, "{} differs: {again}", file.display());
    }
    assert!(
        std::fs::read_to_string(&typescript).unwrap()
            == std::fs::read_to_string(&committed_typescript).unwrap(),
        "clients/typescript/src/api.d.ts differs: {again}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_package_runs_waits_follows_and_answers() {
    let Some(tools) = auto_testkit::openapi_clients() else {
        return;
    };
    let server = serve();
    server.client().playbook().await;
    let output = Command::new(tools.join("venv/bin/python"))
        .arg(clients().join("python/tests/live.py"))
        .args([server.url.as_str(), "acme", "main"])
        .env("PYTHONPATH", clients().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python runs");
    let seen: Value = serde_json::from_str(&succeeded("the Python package", output)).unwrap();
    assert_eq!(seen, expected());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_typescript_package_compiles_strictly_and_runs_waits_follows_and_answers() {
    let Some(tools) = auto_testkit::openapi_clients() else {
        return;
    };
    let server = serve();
    server.client().playbook().await;
    let dir = tempfile::tempdir().unwrap();
    let package = clients().join("typescript");
    for file in ["package.json", "tsconfig.json"] {
        std::fs::copy(package.join(file), dir.path().join(file)).unwrap();
    }
    for folder in ["src", "tests"] {
        std::fs::create_dir(dir.path().join(folder)).unwrap();
        for (file, text) in files(&package.join(folder)) {
            std::fs::write(dir.path().join(folder).join(file), text).unwrap();
        }
    }
    std::os::unix::fs::symlink(
        tools.join("node/node_modules"),
        dir.path().join("node_modules"),
    )
    .unwrap();
    let output = Command::new(tools.join("node/node_modules/.bin/tsc"))
        .args(["-p", "."])
        .current_dir(dir.path())
        .output()
        .expect("tsc runs");
    succeeded("tsc", output);
    let output = Command::new("node")
        .arg("dist/tests/live.js")
        .args([server.url.as_str(), "acme", "main"])
        .current_dir(dir.path())
        .output()
        .expect("node runs");
    let seen: Value = serde_json::from_str(&succeeded("the TypeScript package", output)).unwrap();
    assert_eq!(seen, expected());
}
