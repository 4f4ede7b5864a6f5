//! The workflow corpus: each `tests/workflow/*.yaml` is a document followed by a `# expect:`
//! block of comments holding the exact issues of its save, or `# expect: accepted`. Run with
//! `UPDATE_EXPECT=1` to rewrite the blocks from what the checker says now.

use std::fs;
use std::path::{Path, PathBuf};

use auto_engine::definitions::{CheckError, Checkers, DefinitionType};

const EXPECT_MARK: &str = "# expect:";

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workflow");
    let mut paths: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("the corpus directory exists")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    paths
}

/// What the checker says of `source`, as the expect block writes it.
fn verdict(source: &str) -> Vec<String> {
    match Checkers::standard().check(DefinitionType::Workflow, source) {
        Ok(_) => vec!["accepted".to_owned()],
        Err(CheckError::Issues(issues)) => issues.iter().map(ToString::to_string).collect(),
        Err(other) => vec![format!("{other:?}")],
    }
}

fn split(text: &str) -> (&str, Vec<String>) {
    match text.find(EXPECT_MARK) {
        Some(at) => {
            let (source, block) = text.split_at(at);
            let block = &block[EXPECT_MARK.len()..];
            let mut lines = block.lines();
            let first = lines.next().unwrap_or_default().trim();
            let mut expected: Vec<String> = Vec::new();
            if !first.is_empty() {
                expected.push(first.to_owned());
            }
            expected.extend(
                lines
                    .map(|line| line.strip_prefix("# ").unwrap_or(line).to_owned())
                    .filter(|line| !line.is_empty()),
            );
            (source, expected)
        }
        None => (text, Vec::new()),
    }
}

fn render(source: &str, verdict: &[String]) -> String {
    if verdict == ["accepted"] {
        return format!("{source}{EXPECT_MARK} accepted\n");
    }
    let mut text = format!("{source}{EXPECT_MARK}\n");
    for line in verdict {
        text.push_str("# ");
        text.push_str(line);
        text.push('\n');
    }
    text
}

#[test]
fn corpus() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    let paths = cases();
    assert!(!paths.is_empty(), "the corpus has cases");
    for path in paths {
        let text = fs::read_to_string(&path).expect("a case is UTF-8");
        let (source, expected) = split(&text);
        let actual = verdict(source);
        if actual == expected {
            continue;
        }
        if update {
            fs::write(&path, render(source, &actual)).expect("the case can be rewritten");
        } else {
            failures.push(format!(
                "{}:\n  expected: {expected:#?}\n  actual: {actual:#?}",
                path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
