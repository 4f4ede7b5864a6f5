//! The expressions corpus: `tests/cases/expressions.txt`, each expression with its variables and
//! the value or error the sandbox must give. `UPDATE_EXPECT=1` rewrites the expectations.

use std::fmt::Write as _;
use std::path::PathBuf;

use auto_script::{InputBudget, Sandbox, ScriptError, evaluate};
use serde_json::{Map, Value};

const NOW_MS_DEFAULT: i64 = 1_790_000_000_000;

#[derive(Debug)]
struct Case {
    /// The lines before the expression (comments, blank lines), written back as they are.
    preamble: Vec<String>,
    expression: String,
    vars_line: Option<String>,
    now_line: Option<String>,
    expected: String,
}

fn corpus_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/cases/expressions.txt")
}

fn parse(text: &str) -> (Vec<Case>, Vec<String>) {
    let mut cases = Vec::new();
    let mut preamble = Vec::new();
    let mut expression: Vec<String> = Vec::new();
    let mut vars_line = None;
    let mut now_line = None;
    for line in text.lines() {
        if let Some(expected) = line.strip_prefix("=> ") {
            cases.push(Case {
                preamble: std::mem::take(&mut preamble),
                expression: std::mem::take(&mut expression).join("\n"),
                vars_line: vars_line.take(),
                now_line: now_line.take(),
                expected: expected.to_owned(),
            });
        } else if line.starts_with("vars: ") {
            vars_line = Some(line.to_owned());
        } else if line.starts_with("now: ") {
            now_line = Some(line.to_owned());
        } else if expression.is_empty() && (line.is_empty() || line.starts_with('#')) {
            preamble.push(line.to_owned());
        } else {
            expression.push(line.to_owned());
        }
    }
    (cases, preamble)
}

fn rendered(result: &Result<Value, ScriptError>) -> String {
    match result {
        Ok(value) => value.to_string(),
        Err(error @ ScriptError::Expression { message, .. }) => {
            format!("error {}: {message}", error.status())
        }
        Err(error @ ScriptError::Runtime { message, limit }) => {
            format!("error {} {limit:?}: {message}", error.status())
        }
    }
}

fn run(case: &Case) -> String {
    run_in(case, |expression, vars, now_ms, budget| {
        evaluate(expression, vars, now_ms, budget)
    })
}

fn run_in(
    case: &Case,
    mut evaluate: impl FnMut(
        &str,
        &[(&str, &Value)],
        i64,
        &mut InputBudget,
    ) -> Result<Value, ScriptError>,
) -> String {
    let vars: Map<String, Value> = case
        .vars_line
        .as_deref()
        .map(|line| serde_json::from_str(&line["vars: ".len()..]).expect("vars: is a JSON object"))
        .unwrap_or_default();
    let now_ms = case.now_line.as_deref().map_or(NOW_MS_DEFAULT, |line| {
        line["now: ".len()..]
            .trim()
            .parse()
            .expect("now: is a number")
    });
    let vars: Vec<(&str, &Value)> = vars
        .iter()
        .map(|(name, value)| (name.as_str(), value))
        .collect();
    let mut budget = InputBudget::new();
    rendered(&evaluate(&case.expression, &vars, now_ms, &mut budget))
}

#[test]
fn every_expression_gives_what_the_corpus_says() {
    let path = corpus_path();
    let text = std::fs::read_to_string(&path).expect("the corpus is readable");
    let (cases, trailer) = parse(&text);
    assert!(
        cases.len() > 100,
        "the corpus has its cases: {}",
        cases.len()
    );
    let mut failures = Vec::new();
    let mut updated = String::new();
    for case in &cases {
        let actual = run(case);
        if actual != case.expected {
            failures.push(format!(
                "{}\n  expected: {}\n  actual:   {actual}",
                case.expression, case.expected
            ));
        }
        for line in &case.preamble {
            let _ = writeln!(updated, "{line}");
        }
        let _ = writeln!(updated, "{}", case.expression);
        for line in case.vars_line.iter().chain(case.now_line.iter()) {
            let _ = writeln!(updated, "{line}");
        }
        let _ = writeln!(updated, "=> {actual}");
    }
    for line in &trailer {
        let _ = writeln!(updated, "{line}");
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

/// Kept inputs are the sandbox's own business: every case gives the same in a sandbox that
/// builds its inputs for each evaluation, and in one that keeps them, when the value is built
/// and kept and when it is handed out again.
#[test]
fn every_expression_gives_the_same_with_inputs_kept_or_built_each_time() {
    let text = std::fs::read_to_string(corpus_path()).expect("the corpus is readable");
    let (cases, _) = parse(&text);
    let mut built = Sandbox::new().expect("a sandbox");
    built.keep_inputs(false);
    let mut kept = Sandbox::new().expect("a sandbox");
    let mut failures = Vec::new();
    let mut most_kept = 0;
    for case in &cases {
        let expected = run_in(case, |e, v, n, b| built.evaluate(e, v, n, b));
        assert_eq!(
            built.kept_values(),
            0,
            "nothing is kept when keeping is off"
        );
        for round in ["built and kept", "kept"] {
            let actual = run_in(case, |e, v, n, b| kept.evaluate(e, v, n, b));
            if actual != expected {
                failures.push(format!(
                    "{} ({round})\n  built each time: {expected}\n  kept:   {actual}",
                    case.expression
                ));
            }
        }
        most_kept = most_kept.max(kept.kept_values());
    }
    assert!(most_kept > 0, "the kept sandbox kept inputs");
    assert_none_differ(&failures);
}

/// Each corpus case run by `reference`, then by the sandbox of each of `rounds` (its name and
/// its place in `sandboxes`; one sandbox may take two rounds, the second with what the first
/// kept): what each round gave that `reference` did not, none when they all agree.
fn differences(
    reference: &mut Sandbox,
    sandboxes: &mut [Sandbox],
    rounds: &[(&str, usize)],
) -> Vec<String> {
    let text = std::fs::read_to_string(corpus_path()).expect("the corpus is readable");
    let (cases, _) = parse(&text);
    let mut failures = Vec::new();
    for case in &cases {
        let expected = run_in(case, |e, v, n, b| reference.evaluate(e, v, n, b));
        for &(round, which) in rounds {
            let sandbox = &mut sandboxes[which];
            let actual = run_in(case, |e, v, n, b| sandbox.evaluate(e, v, n, b));
            if actual != expected {
                failures.push(format!(
                    "{} ({round})\n  expected: {expected}\n  actual:   {actual}",
                    case.expression
                ));
            }
        }
    }
    failures
}

fn assert_none_differ(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The quick read of plain data is the sandbox's own business too: every case gives the same
/// when every value goes through the full walk, and when the quick read comes first, with
/// inputs kept and built.
#[test]
fn every_expression_gives_the_same_with_or_without_the_quick_read_of_plain_data() {
    let mut walked = Sandbox::new().expect("a sandbox");
    walked.read_plain_first(false);
    walked.keep_inputs(false);
    let mut quick_built = Sandbox::new().expect("a sandbox");
    quick_built.keep_inputs(false);
    let quick = Sandbox::new().expect("a sandbox");
    let failures = differences(
        &mut walked,
        &mut [quick_built, quick],
        &[
            ("quick, inputs built", 0),
            ("quick, inputs kept", 1),
            ("quick, inputs kept again", 1),
        ],
    );
    assert_none_differ(&failures);
}

/// The quick read of a member is the sandbox's own business too: every case gives the same
/// when every expression runs, and when a read of a member is answered from its variable.
#[test]
fn every_expression_gives_the_same_with_or_without_the_quick_read_of_members() {
    let mut ran = Sandbox::new().expect("a sandbox");
    ran.read_members_first(false);
    let quick = Sandbox::new().expect("a sandbox");
    let failures = differences(&mut ran, &mut [quick], &[("members read", 0)]);
    assert_none_differ(&failures);
}

/// Reads of members the quick read answers and those it leaves, each the same as the sandbox
/// gives when it runs the expression.
#[test]
fn reads_of_members_give_what_the_sandbox_gives() {
    let data = serde_json::json!({
        "x": 1, "s": "text", "a": [1, 2.5, "b"], "o": { "b": { "c": true, "d": null } },
        "f": 2.0, "neg": -0.0, "big": 9_007_199_254_740_993_u64, "small": -7,
        "digits": { "b": 2, "1": 1 }, "class": "reserved", "u": "é\u{1F600}",
    });
    let item = serde_json::json!({ "name": "n" });
    let vars = [("$data", &data), ("$item", &item)];
    let mut ran = Sandbox::new().expect("a sandbox");
    ran.read_members_first(false);
    let mut quick = Sandbox::new().expect("a sandbox");
    for expression in [
        "$data.x",
        " $data.o.b ",
        "$data.o.b.c",
        "$data.o.b.d",
        "$data.a",
        "$data.f",
        "$data.neg",
        "$data.big",
        "$data.small",
        "$data.digits",
        "$data.class",
        "$data.u",
        "$data",
        "$item.name",
        "$data.missing",
        "$data.s.length",
        "$data.a.length",
        "$data.o.b.d.e",
        "$data.constructor",
        "$data.__proto__",
        "$data.x\n",
        "$nothing.x",
    ] {
        let mut budget = InputBudget::new();
        let expected = ran.evaluate(expression, &vars, NOW_MS_DEFAULT, &mut budget);
        let mut budget = InputBudget::new();
        let actual = quick.evaluate(expression, &vars, NOW_MS_DEFAULT, &mut budget);
        assert_eq!(actual, expected, "{expression:?}");
    }
}
