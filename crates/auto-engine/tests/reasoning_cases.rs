//! The reasoning corpus: every `tests/reasoning/*.md` is a reasoning function's source, checked
//! as `create_definition` checks it (through the registry, so the 20-issue cap applies), and
//! compared with its sibling `*.expected`. `UPDATE_EXPECT=1` rewrites the expected files.
//!
//! The form of an expected file is described in `tests/reasoning/README.md`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use auto_engine::definitions::{CheckError, Checkers, DefinitionType};
use auto_engine::reasoning::check_reasoning;

/// What a case's source gives, in the expected file's form.
fn outcome(source: &str) -> String {
    let mut out = String::new();
    match Checkers::standard().check(DefinitionType::Reasoning, source) {
        Ok(checked) => {
            // Invariant: the registry accepted the source, so the checker does too.
            let document = check_reasoning(source).expect("the registry accepted it");
            out.push_str("accepted\n");
            if let Some(description) = &checked.description {
                writeln!(out, "description: {description}").ok();
            }
            writeln!(out, "model: {}", document.model).ok();
            writeln!(
                out,
                "max_output_tokens: {}",
                document.config.max_output_tokens
            )
            .ok();
            let shape = document
                .output_shape
                .as_deref()
                .map(|s| format!(", shape {s}"))
                .unwrap_or_default();
            writeln!(out, "output: {}{shape}", document.output_format).ok();
            if !document.tools.is_empty() {
                let tools: Vec<String> = document
                    .tools
                    .iter()
                    .map(|t| format!("{}/{}", t.server, t.tool.as_deref().unwrap_or("*")))
                    .collect();
                writeln!(out, "tools: {}", tools.join(", ")).ok();
            }
            for warning in &checked.warnings {
                writeln!(out, "warning: {warning}").ok();
            }
        }
        Err(CheckError::Issues(issues)) => {
            out.push_str("refused\n");
            for issue in issues {
                writeln!(out, "{}", issue.message()).ok();
            }
        }
        Err(CheckError::NotSupported(t)) => panic!("no checker for {t}"),
    }
    out
}

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reasoning");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the corpus folder")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .filter(|path| path.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    cases.sort();
    cases
}

#[test]
fn every_case_gives_its_expected_outcome() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let cases = cases();
    assert!(!cases.is_empty(), "the corpus is empty");
    let mut failures = Vec::new();
    for case in &cases {
        let source = std::fs::read_to_string(case).expect("a case is UTF-8");
        let found = outcome(&source);
        let expected_path = case.with_extension("expected");
        if update {
            std::fs::write(&expected_path, &found).expect("the expected file is written");
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != found {
            failures.push(format!(
                "{}\n--- expected\n{expected}--- found\n{found}",
                case.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ (UPDATE_EXPECT=1 rewrites them):\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_expected_file_has_its_case() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reasoning");
    for entry in std::fs::read_dir(&dir).expect("the corpus folder") {
        let path = entry.expect("an entry").path();
        if path.extension().is_some_and(|e| e == "expected") {
            assert!(
                path.with_extension("md").exists(),
                "{} has no case",
                path.display()
            );
        }
    }
}
