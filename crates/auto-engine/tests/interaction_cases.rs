//! The interaction corpus: every `tests/interaction/*.md` is an interaction function's source,
//! checked as `create_definition` checks it (through the registry, so the 20-issue cap
//! applies), and compared with its sibling `*.expected`. `UPDATE_EXPECT=1` rewrites the
//! expected files. The form is the reasoning corpus's (`tests/reasoning/README.md`): `refused`
//! and each issue's message, or `accepted` and what the checker read.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use auto_engine::definitions::{CheckError, Checkers, DefinitionType};
use auto_engine::interaction::{Asks, check_interaction};
use auto_engine::workflow::RUN_DURATION_MS_DEFAULT;

/// What a case's source gives, in the expected file's form.
fn outcome(source: &str) -> String {
    let mut out = String::new();
    match Checkers::standard().check(DefinitionType::Interaction, source) {
        Ok(checked) => {
            // Invariant: the registry accepted the source, so the checker does too.
            let document = check_interaction(source, RUN_DURATION_MS_DEFAULT)
                .expect("the registry accepted it");
            out.push_str("accepted\n");
            if let Some(description) = &checked.description {
                writeln!(out, "description: {description}").ok();
            }
            match &document.asks {
                Asks::Person {
                    to,
                    to_line,
                    expires_ms,
                    notify,
                } => {
                    writeln!(out, "to: {to} (line {to_line})").ok();
                    writeln!(out, "expires_ms: {expires_ms}").ok();
                    if let Some(notify) = notify {
                        writeln!(out, "notify: {notify}").ok();
                    }
                }
                Asks::Tool {
                    server,
                    tool,
                    arguments,
                    ..
                } => {
                    writeln!(out, "tool: {server}/{tool}").ok();
                    writeln!(out, "arguments: {arguments}").ok();
                }
            }
            if let Some(shape) = &document.output_shape {
                writeln!(out, "output: shape {shape}").ok();
            } else if document.output_schema.is_some() {
                writeln!(out, "output: schema").ok();
            }
            writeln!(out, "body from line {}", document.body_first_line).ok();
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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interaction");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the corpus folder")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
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
        if found != expected {
            failures.push(format!(
                "{}\n--- expected\n{expected}--- found\n{found}",
                case.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
