//! The check corpus: `tests/cases/check.txt`, each expression or program with the names its
//! place offers and the exact problems the save-time check reports. `UPDATE_EXPECT=1` rewrites
//! the expectations.

use std::fmt::Write as _;
use std::path::PathBuf;

use auto_script::{Place, ScriptProblem, check_expression, check_program};

#[derive(Debug)]
struct Case {
    header: Vec<String>,
    kind: String,
    offers: Vec<String>,
    source: String,
    expected: Vec<String>,
}

fn parse(text: &str) -> (Vec<String>, Vec<Case>) {
    let mut preamble = Vec::new();
    let mut cases: Vec<Case> = Vec::new();
    let mut in_source = false;
    let mut source: Vec<&str> = Vec::new();
    for line in text.lines() {
        if let Some(kind) = line.strip_prefix("=== ") {
            cases.push(Case {
                header: vec![line.to_owned()],
                kind: kind.to_owned(),
                offers: Vec::new(),
                source: String::new(),
                expected: Vec::new(),
            });
            in_source = false;
        } else if let Some(case) = cases.last_mut() {
            if let Some(offers) = line.strip_prefix("offers:") {
                case.header.push(line.to_owned());
                case.offers = offers.split_whitespace().map(str::to_owned).collect();
                in_source = true;
                source.clear();
            } else if in_source && line == "---" {
                case.source = source.join("\n");
                in_source = false;
            } else if in_source {
                source.push(line);
            } else if !line.is_empty() {
                case.expected.push(line.to_owned());
            }
        } else {
            preamble.push(line.to_owned());
        }
    }
    (preamble, cases)
}

fn rendered(problems: &[ScriptProblem]) -> Vec<String> {
    if problems.is_empty() {
        return vec!["ok".to_owned()];
    }
    problems
        .iter()
        .map(|p| format!("{}:{} {}", p.line, p.column, p.text))
        .collect()
}

fn run(case: &Case) -> Vec<String> {
    let offers: Vec<&str> = case.offers.iter().map(String::as_str).collect();
    match case.kind.as_str() {
        "expression" => rendered(&check_expression(&case.source, &Place::offering(&offers))),
        "program" => rendered(&check_program(&case.source, &offers)),
        other => panic!("unknown kind of case: {other}"),
    }
}

#[test]
fn every_check_reports_what_the_corpus_says() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases/check.txt");
    let text = std::fs::read_to_string(&path).expect("the corpus is readable");
    let (preamble, cases) = parse(&text);
    assert!(
        cases.len() > 30,
        "the corpus has its cases: {}",
        cases.len()
    );
    let mut failures = Vec::new();
    let mut updated = String::new();
    for line in &preamble {
        let _ = writeln!(updated, "{line}");
    }
    for (index, case) in cases.iter().enumerate() {
        let actual = run(case);
        if actual != case.expected {
            failures.push(format!(
                "{}\n  expected: {:?}\n  actual:   {actual:?}",
                case.source, case.expected
            ));
        }
        if index > 0 {
            let _ = writeln!(updated);
        }
        for line in &case.header {
            let _ = writeln!(updated, "{line}");
        }
        let _ = writeln!(updated, "{}\n---", case.source);
        for line in &actual {
            let _ = writeln!(updated, "{line}");
        }
    }
    if std::env::var_os("UPDATE_EXPECT").is_some() {
        std::fs::write(&path, updated).expect("the corpus is writable");
        return;
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
