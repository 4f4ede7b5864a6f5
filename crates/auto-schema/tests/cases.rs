//! The data-driven corpus: each file of `tests/cases/` holds a schema (or a shape), what to
//! do with it, and the exact problems, warnings or issues expected. `UPDATE_EXPECT=1` rewrites
//! the `expect` of every file from what the code does now; review the diff.
//!
//! A file is a JSON object with:
//! - `about`: what the case shows, in a sentence;
//! - `schema` and `role` (`input` or `output`): the save-time check, expected as `problems`
//!   and `warnings` rendered under `/input/schema` or `/output/schema`, and the `draft`;
//! - or `schema` and `instances`: validation, expected per instance as `answer` and `input`
//!   messages (capped as a rejection shows them);
//! - or `shape` and `instances`: an output shape's check, expected as `answer` messages;
//! - or `tool` and `schema`: the warnings of a tool's input schema.

use std::fs;
use std::path::{Path, PathBuf};

use auto_schema::{
    CompiledSchema, SchemaRole, check_schema, check_shape, render_answer_issues,
    render_input_issues, tool_schema_warnings,
};
use serde_json::{Value, json};

#[test]
fn every_case_gives_what_it_expects() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let mut failures = Vec::new();
    let files = case_files();
    assert!(!files.is_empty(), "no case under tests/cases");
    for path in files {
        let text = fs::read_to_string(&path).expect("a case file is readable");
        let mut case: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
        let actual = run(&case);
        if case.get("expect") == Some(&actual) {
            continue;
        }
        if update {
            case["expect"] = actual;
            let rewritten = serde_json::to_string_pretty(&case).expect("a Value serializes");
            fs::write(&path, rewritten + "\n").expect("a case file is writable");
        } else {
            failures.push(format!(
                "{}\n  expected: {}\n  actual:   {}",
                path.display(),
                case.get("expect").map(Value::to_string).unwrap_or_default(),
                actual
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ (UPDATE_EXPECT=1 rewrites them):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn case_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("tests/cases exists")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn run(case: &Value) -> Value {
    if let Some(tool) = case.get("tool").and_then(Value::as_str) {
        return json!({ "warnings": tool_schema_warnings(tool, &case["schema"]) });
    }
    if let Some(shape) = case.get("shape").and_then(Value::as_str) {
        let results: Vec<Value> = instances(case)
            .iter()
            .map(
                |instance| json!({ "answer": render_answer_issues(&check_shape(shape, instance)) }),
            )
            .collect();
        return json!({ "instances": results });
    }
    if case.get("instances").is_some() {
        return validate(case);
    }
    check(case)
}

fn instances(case: &Value) -> Vec<Value> {
    case["instances"].as_array().cloned().unwrap_or_default()
}

fn check(case: &Value) -> Value {
    let (role, prefix) = match case["role"].as_str() {
        Some("input") => (SchemaRole::Input, "/input/schema"),
        _ => (SchemaRole::Output, "/output/schema"),
    };
    let report = check_schema(&case["schema"], role);
    let problems: Vec<String> = report
        .problems
        .iter()
        .map(|p| format!("{prefix}{}: {}", p.pointer, p.text))
        .collect();
    let warnings: Vec<String> = report
        .warnings
        .iter()
        .map(|w| format!("{prefix}{}: {}", w.pointer, w.text))
        .collect();
    json!({ "draft": report.draft, "problems": problems, "warnings": warnings })
}

fn validate(case: &Value) -> Value {
    let compiled = match CompiledSchema::compile(&case["schema"]) {
        Ok(compiled) => compiled,
        Err(error) => return json!({ "compile_error": error.to_string() }),
    };
    let results: Vec<Value> = instances(case)
        .iter()
        .map(|instance| {
            let issues = compiled.validate(instance);
            assert_eq!(
                issues.is_empty(),
                compiled.is_valid(instance),
                "is_valid agrees"
            );
            json!({
                "answer": render_answer_issues(&issues),
                "input": render_input_issues(&issues),
            })
        })
        .collect();
    json!({ "instances": results })
}
