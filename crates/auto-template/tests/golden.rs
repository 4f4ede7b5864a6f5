//! The public golden-liquid suite (`jg-rp/golden-liquid`), run under our rules.
//!
//! The suite is not committed. `scripts/fetch-golden-liquid.sh` puts a copy at
//! `tests/golden/golden_liquid.json` (ignored by git), or `GOLDEN_LIQUID` names a file. Without
//! either, the test says so and passes.
//!
//! A case's data becomes the template's variables, in place of `input`, `today` and `now`. Cases
//! our rules exclude are counted by rule and listed (run with `--nocapture`): partials
//! (`include`, `render`, `layout`, `block`), `capture`, names the data does not define (our
//! check refuses them at save), a variable named by another's value (`{{ [name] }}`: the
//! save cannot know which name it reads), fields the data does not have read outside a condition or
//! `default` (our render stops there), and templates that render nothing (a message may not be
//! empty). Every other case must pass, except those `tests/golden_known_failures.txt` lists
//! with the reason (mostly Ruby Liquid's behaviour where LiquidJS, which we follow, differs):
//! the test fails when a case fails that is not listed, and when a listed case passes, so the
//! list stays exact. `GOLDEN_LIQUID_REPORT_ONLY=1` only reports.

use std::collections::BTreeMap;
use std::path::PathBuf;

use auto_template::{
    CheckConfig, RenderErrorKind, RenderLimits, check_with_roots, parse, render_with_roots,
};
use serde_json::Value as Json;

fn suite_path() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("GOLDEN_LIQUID") {
        return Some(PathBuf::from(path));
    }
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/golden_liquid.json");
    local.exists().then_some(local)
}

enum Outcome {
    Pass,
    Fail(String),
    Excluded(&'static str),
}

fn run_case(case: &Json) -> Outcome {
    let template = case["template"].as_str().unwrap_or_default();
    let tags: Vec<&str> = case["tags"]
        .as_array()
        .map(|t| t.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    let invalid = case["invalid"].as_bool().unwrap_or(false);
    let partial = ["include tag", "render tag", "layout tag", "block tag"];
    if case.get("templates").is_some() || tags.iter().any(|t| partial.contains(t)) {
        return Outcome::Excluded("partials: include, render, layout and block are not available");
    }
    if tags.contains(&"capture tag") {
        return Outcome::Excluded("capture is not available");
    }
    let empty = serde_json::Map::new();
    let data = case["data"].as_object().unwrap_or(&empty);
    let roots: Vec<(&str, &Json)> = data.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let names: Vec<&str> = roots.iter().map(|(k, _)| *k).collect();
    let problems = check_with_roots(template, &CheckConfig::default(), &names);
    let unknown_name = problems
        .iter()
        .any(|p| p.text.starts_with("Unknown variable"));
    // `{{ [name] }}` reads the variable another variable names, decided only at render.
    if problems.iter().any(|p| {
        p.text
            .ends_with("a variable in brackets must be named by a string")
    }) {
        return Outcome::Excluded(
            "strict names: reads a variable named by another variable's value, which no save can check",
        );
    }
    let renders_nothing = problems
        .iter()
        .any(|p| p.text.starts_with("The template must render some text"));
    let refused_otherwise = problems.iter().any(|p| {
        !p.text.starts_with("The template must render some text")
            && !p.text.starts_with("Unknown variable")
    });
    let expected: Vec<&str> = match (case["result"].as_str(), case["results"].as_array()) {
        (Some(one), _) => vec![one],
        (None, Some(many)) => many.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    let expects_nothing = expected.iter().all(|r| r.trim().is_empty());
    // An error expected is a pass only when we refuse for a reason of the case's own, not
    // because our strict names refuse what Liquid would read as nil.
    if invalid && refused_otherwise {
        return Outcome::Pass;
    } else if unknown_name {
        return Outcome::Excluded("strict names: reads a variable the data does not define");
    } else if refused_otherwise {
        return Outcome::Fail(format!("refused: {:?}", problems));
    } else if renders_nothing && (invalid || expects_nothing) {
        return Outcome::Excluded("renders nothing: a message may not be empty");
    } else if renders_nothing {
        return Outcome::Fail(format!(
            "refused as rendering nothing, expected {expected:?}"
        ));
    }
    let Ok(parsed) = parse(template) else {
        return if invalid {
            Outcome::Pass
        } else {
            Outcome::Fail("parse refused".into())
        };
    };
    let now = std::time::Instant::now();
    let expired = || now.elapsed() > std::time::Duration::from_secs(5);
    let limits = RenderLimits::new(&expired);
    let rendered = render_with_roots(&parsed, &roots, &limits);
    match rendered {
        Err(e)
            if matches!(
                e.kind,
                RenderErrorKind::MissingField | RenderErrorKind::UndefinedVariable
            ) =>
        {
            Outcome::Excluded("strict names: reads a field the data does not have")
        }
        Err(_) if invalid => Outcome::Pass,
        Ok(out) if invalid => {
            Outcome::Fail(format!("rendered {:?}, expected an error", out.message))
        }
        Ok(out) if expected.contains(&out.message.as_str()) => Outcome::Pass,
        Ok(out) => Outcome::Fail(format!(
            "rendered {:?}, expected {:?}",
            out.message, expected
        )),
        Err(e)
            if e.kind == RenderErrorKind::MessageEmpty
                && expected.iter().all(|r| r.trim().is_empty()) =>
        {
            Outcome::Excluded("renders nothing: a message may not be empty")
        }
        Err(e) => Outcome::Fail(format!("error {e}, expected {expected:?}")),
    }
}

#[test]
fn golden_liquid() {
    let Some(path) = suite_path() else {
        println!(
            "golden-liquid: no copy found; run scripts/fetch-golden-liquid.sh or set GOLDEN_LIQUID"
        );
        return;
    };
    let suite: Json =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read the suite"))
            .expect("the suite is JSON");
    let cases = suite["tests"].as_array().expect("tests");
    let mut excluded: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut failed = Vec::new();
    let mut failed_names: Vec<String> = Vec::new();
    let mut passed = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap_or_default().to_string();
        match run_case(case) {
            Outcome::Pass => passed += 1,
            Outcome::Fail(why) => {
                failed.push(format!("{name}: {why}"));
                failed_names.push(name);
            }
            Outcome::Excluded(rule) => excluded.entry(rule).or_default().push(name),
        }
    }
    let excluded_count: usize = excluded.values().map(Vec::len).sum();
    let allowed = cases.len() - excluded_count;
    for (rule, names) in &excluded {
        println!("excluded, {rule}: {}", names.len());
        for name in names {
            println!("    {name}");
        }
    }
    for failure in &failed {
        println!("FAILED {failure}");
    }
    println!(
        "golden-liquid: {passed} passed / {allowed} allowed / {} total",
        cases.len()
    );
    if std::env::var("GOLDEN_LIQUID_REPORT_ONLY").is_ok() {
        return;
    }
    let known_path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden_known_failures.txt");
    let known_text = std::fs::read_to_string(known_path).unwrap_or_default();
    let known: Vec<&str> = known_text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    let unexpected: Vec<&String> = failed_names
        .iter()
        .filter(|n| !known.contains(&n.as_str()))
        .collect();
    let fixed: Vec<&&str> = known
        .iter()
        .filter(|n| !failed_names.iter().any(|f| f == *n))
        .collect();
    assert!(
        unexpected.is_empty(),
        "cases failed that are not known failures: {unexpected:#?}"
    );
    assert!(
        fixed.is_empty(),
        "known failures now pass; take them off the list: {fixed:#?}"
    );
}

/// golden-liquid's benchmark template (fixture 002) renders as its expected result.
#[test]
fn benchmark_fixture_renders_as_expected() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/benchmark");
    let (Ok(source), Ok(data), Ok(expected)) = (
        std::fs::read_to_string(dir.join("index.liquid")),
        std::fs::read_to_string(dir.join("data.json")),
        std::fs::read_to_string(dir.join("expected_result.txt")),
    ) else {
        println!("golden-liquid benchmark fixture: no copy found");
        return;
    };
    let data: Json = serde_json::from_str(&data).unwrap();
    let mut roots: Vec<(&str, &Json)> = data
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let names: Vec<&str> = roots.iter().map(|(k, _)| *k).collect();
    assert_eq!(
        check_with_roots(&source, &CheckConfig::default(), &names),
        vec![]
    );
    // The fixture prints `"now" | date: "%Y"` as the year it was made; `now` is the run's start.
    let now = Json::String("2025-06-01T00:00:00Z".into());
    roots.push(("now", &now));
    let rendered =
        render_with_roots(&parse(&source).unwrap(), &roots, &RenderLimits::default()).unwrap();
    // The expected file ends with a newline the template does not have.
    assert_eq!(rendered.message.trim_end(), expected.trim_end());
}
