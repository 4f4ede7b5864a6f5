//! Every flowchart the overview draws is Mermaid that the real parser accepts: the overview of
//! each corpus document that saves (the page's examples among them) goes through npm
//! `mermaid`'s own `mermaid.parse`, by our program `scripts/mermaid-parse.mjs`, which
//! `scripts/mermaid` installs (pinned) and whose path it prints.
//!
//! Without `AUTO_MERMAID` the test skips with a note, so a machine without node still runs the
//! suite; under CI (`CI` set) it fails instead. `.ci/run` sets it.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use auto_engine::definitions::{Checkers, DefinitionType};

/// Our parsing program from `AUTO_MERMAID`; `None` (after a note) when it is unset outside CI.
fn parser() -> Option<PathBuf> {
    match std::env::var_os("AUTO_MERMAID").filter(|path| !path.is_empty()) {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) => panic!(
            "AUTO_MERMAID is not set: under CI every overview's flowchart must pass the real Mermaid parser; .ci/run sets it from scripts/mermaid"
        ),
        None => {
            // Past the test harness's capture, so the note shows in a plain `cargo test`.
            let _ = writeln!(
                std::io::stderr(),
                "note: the Mermaid test is skipped: AUTO_MERMAID is not set (export AUTO_MERMAID=\"$(scripts/mermaid)\"; it needs node and npm)"
            );
            None
        }
    }
}

/// Each corpus document that saves, by its file name, with its overview.
fn overviews() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workflow");
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("the corpus directory exists")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    let checkers = Checkers::standard();
    let mut overviews = Vec::new();
    for path in paths {
        let text = fs::read_to_string(&path).expect("a case is UTF-8");
        let source = &text[..text.find("# expect:").unwrap_or(text.len())];
        if let Ok(checked) = checkers.check(DefinitionType::Workflow, source) {
            let name = path
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            overviews.push((
                name,
                checked.generated_overview.expect("a workflow's overview"),
            ));
        }
    }
    overviews
}

#[test]
fn every_overview_draws_a_flowchart_mermaid_parses() {
    let overviews = overviews();
    // Invariant: the page's two examples and the flow cases are among them.
    for name in ["000-page-example", "001-page-schedule", "062-overview-flow"] {
        assert!(
            overviews.iter().any(|(n, _)| n == name),
            "{name} saves and is drawn"
        );
    }
    for (name, overview) in &overviews {
        assert_eq!(
            overview.matches("```mermaid\n").count(),
            1,
            "{name}: one flowchart"
        );
    }
    let Some(parser) = parser() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("auto-engine-mermaid-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("a temporary folder");
    let mut files = Vec::new();
    for (name, overview) in &overviews {
        let file = dir.join(format!("{name}.md"));
        fs::write(&file, overview).expect("the overview is written");
        files.push(file);
    }
    let output = Command::new("node")
        .arg(&parser)
        .args(&files)
        .output()
        .expect("node runs (scripts/mermaid needs it too)");
    let _ = fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "Mermaid refused a flowchart:\n{stderr}\n{stdout}"
    );
    assert_eq!(
        stdout.matches(": 1 diagrams").count(),
        overviews.len(),
        "every overview's flowchart was parsed:\n{stdout}"
    );
}

/// The parser itself refuses what Mermaid refuses, so a pass above means something.
#[test]
fn the_parser_refuses_a_broken_flowchart() {
    let Some(parser) = parser() else {
        return;
    };
    let mut child = Command::new("node")
        .arg(&parser)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("node runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"```mermaid\nflowchart TD\n  a -->|unless (x)| b\n```\n")
        .expect("the diagram is sent");
    let output = child.wait_with_output().expect("node ends");
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("stdin#1: Parse error"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
