//! `auto check` on reasoning documents, as the built binary runs: each issue printed after the
//! file's name in the page's form and exit 1; a good file exits 0, its warnings printed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const AUTO: &str = env!("CARGO_BIN_EXE_auto");

fn write(dir: &Path, name: &str, source: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, source).expect("the file is written");
    path
}

fn check(files: &[&Path]) -> Output {
    Command::new(AUTO)
        .arg("check")
        .args(files)
        .output()
        .expect("auto runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn a_broken_document_prints_each_issue_and_exits_1() {
    let dir = tempfile::tempdir().expect("a directory");
    let file = write(
        dir.path(),
        "review.reasoning.md",
        "---\nmodel: anthropic/claude-sonnet-4-5\nconfig:\n  temperature: warm\n  seed: -1\n---\nHi\n",
    );
    let output = check(&[&file]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let name = file.display();
    assert_eq!(
        stdout(&output),
        format!(
            "{name}: Line 4, /config/temperature: Expected number.\n\
             {name}: Line 5, /config/seed: Expected a whole number of 0 or more.\n"
        )
    );
}

#[test]
fn a_good_document_exits_0_and_prints_its_warnings() {
    let dir = tempfile::tempdir().expect("a directory");
    let good = write(
        dir.path(),
        "greet.reasoning.md",
        "---\ndescription: Greets\nmodel: openai/gpt-5\n---\nHello {{ input.name }}\n",
    );
    let warned = write(
        dir.path(),
        "add.reasoning.md",
        "---\nmodel: anthropic/claude-sonnet-4-5\noutput:\n  format: json\n  schema:\n    type: object\n    properties:\n      total: { type: number, minimum: 0 }\n    required: [total]\n    additionalProperties: false\n---\nAdd up {{ input.items | json }}\n",
    );
    let output = check(&[&good, &warned]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        stdout(&output),
        format!(
            "{good}: ok (reasoning)\n\
             {warned}: ok (reasoning)\n\
             {warned}: warning: Line 8, /output/schema/properties/total/minimum: minimum is not enforced while Anthropic models write the answer; an answer outside it fails as output_invalid (anthropic, bedrock, bedrock-anthropic, vertex-anthropic)\n",
            good = good.display(),
            warned = warned.display(),
        )
    );
}

#[test]
fn one_broken_file_among_good_ones_exits_1() {
    let dir = tempfile::tempdir().expect("a directory");
    let good = write(
        dir.path(),
        "a.reasoning.md",
        "---\nmodel: openai/gpt-5\n---\nHi\n",
    );
    let broken = write(dir.path(), "b.md", "no front matter\n");
    let output = Command::new(AUTO)
        .args(["check", "--type", "reasoning"])
        .arg(&good)
        .arg(&broken)
        .output()
        .expect("auto runs");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        stdout(&output),
        format!(
            "{}: ok (reasoning)\n{}: Line 1: The document must start with front matter: a --- line.\n",
            good.display(),
            broken.display()
        )
    );
}

#[test]
fn json_lists_each_issue_with_its_place() {
    let dir = tempfile::tempdir().expect("a directory");
    let broken = write(
        dir.path(),
        "review.reasoning.md",
        "---\nmodel: anthropic/claude-sonnet-4-5\nconfig:\n  temperature: warm\n---\nHi\n",
    );
    let workflow = write(
        dir.path(),
        "flow.yaml",
        "document:\n  dsl: 1.0.3\n  namespace: t\n  name: flow\n  version: 1.0.0\ndo:\n  - a:\n      wait: soon\n",
    );
    let output = Command::new(AUTO)
        .args(["check", "--json"])
        .arg(&broken)
        .arg(&workflow)
        .output()
        .expect("auto runs");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["ok"], false);
    let issues = report["issues"].as_array().expect("issues");
    assert_eq!(
        issues[0],
        serde_json::json!({
            "file": broken.display().to_string(),
            "line": 4,
            "column": null,
            "pointer": "/config/temperature",
            "message": "Line 4, /config/temperature: Expected number.",
        })
    );
    let in_workflow: Vec<&serde_json::Value> = issues
        .iter()
        .filter(|i| i["file"] == workflow.display().to_string())
        .collect();
    assert!(!in_workflow.is_empty(), "{report:#}");
    assert!(in_workflow[0]["line"].as_u64().is_some(), "{report:#}");
    assert!(in_workflow[0]["column"].as_u64().is_some(), "{report:#}");
    assert!(
        in_workflow[0]["pointer"]
            .as_str()
            .unwrap()
            .starts_with("/do/0"),
        "{report:#}"
    );

    let good = write(
        dir.path(),
        "greet.reasoning.md",
        "---\nmodel: openai/gpt-5\n---\nHello\n",
    );
    let output = Command::new(AUTO)
        .args(["check", "--json"])
        .arg(&good)
        .output()
        .expect("auto runs");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(
        report,
        serde_json::json!({"ok": true, "issues": [], "warnings": []})
    );
}
