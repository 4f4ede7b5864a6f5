//! What a saved workflow publishes: description, schemas, triggers, uses and the overview
//! (a snapshot of the page's own example), and the wall-clock bound of its expression checks.

use std::fs;
use std::path::Path;
use std::sync::Arc;

use auto_engine::definitions::{Checked, Checkers, DefinitionChecker, DefinitionType};
use auto_engine::workflow::{WorkflowChecker, WorkflowLimits};
use serde_json::json;

fn case(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/workflow")
        .join(name);
    let text = fs::read_to_string(path).expect("the case exists");
    let end = text.find("# expect:").unwrap_or(text.len());
    text[..end].to_owned()
}

fn checked(name: &str) -> Checked {
    Checkers::standard()
        .check(DefinitionType::Workflow, &case(name))
        .expect("the case is accepted")
}

#[test]
fn the_page_example_publishes_its_summary_schema_and_calls() {
    let checked = checked("000-page-example.yaml");
    assert_eq!(
        checked.description.as_deref(),
        Some("Reviews a campaign brief, then asks its owner to approve the review.")
    );
    assert_eq!(
        checked
            .input_schema
            .as_ref()
            .and_then(|s| s.get("required")),
        Some(&json!(["brief", "owner"]))
    );
    assert_eq!(checked.output_schema, None);
    assert!(checked.triggers.is_empty());
    assert_eq!(
        checked.uses,
        [
            "reasoning/review-campaign-brief",
            "interaction/approve-campaign-brief"
        ]
    );
}

#[test]
fn triggers_carry_kind_reference_and_their_value() {
    let checked = checked("001-page-schedule.yaml");
    assert_eq!(
        checked.triggers,
        vec![
            json!({
                "kind": "event",
                "reference": "/schedule/on",
                "filters": [{ "type": "com.example.brief.submitted", "data": "${ $data.priority === \"high\" }" }],
            }),
            json!({ "kind": "cron", "reference": "/schedule/cron", "expression": "0 9 * * 1-5" }),
            json!({ "kind": "every", "reference": "/schedule/every", "milliseconds": 900_000 }),
        ]
    );
}

#[test]
fn the_overview_of_the_page_example_matches_its_snapshot() {
    for (case_name, snapshot) in [
        ("000-page-example.yaml", "overview-page-example.md"),
        ("001-page-schedule.yaml", "overview-page-schedule.md"),
        ("062-overview-flow.yaml", "overview-flow.md"),
    ] {
        let overview = checked(case_name)
            .generated_overview
            .expect("a workflow has an overview");
        auto_engine::definitions::check_overview(&overview).expect("the overview fits");
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/workflow")
            .join(snapshot);
        if std::env::var_os("UPDATE_EXPECT").is_some() {
            fs::write(&path, &overview).expect("the snapshot can be written");
            continue;
        }
        let expected = fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(overview, expected, "{snapshot}");
    }
}

#[test]
fn a_passed_deadline_refuses_the_document() {
    let limits = WorkflowLimits {
        deadline: Some(Arc::new(|| Box::new(|| true) as Box<dyn Fn() -> bool>)),
        ..WorkflowLimits::default()
    };
    let issues = WorkflowChecker::new(limits)
        .check(&case("000-page-example.yaml"))
        .expect_err("the check ran out of time");
    assert_eq!(
        issues.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "Line 1, column 1: Checking the document's expressions took longer than 2 seconds; simplify them or try again."
        ]
    );
}

#[test]
fn a_shorter_run_limit_refuses_longer_durations() {
    let limits = WorkflowLimits {
        run_duration_ms: 2 * 60 * 60 * 1_000,
        ..WorkflowLimits::default()
    };
    let source = "document: { dsl: 1.0.3, namespace: t, name: n, version: 1.0.0 }\ndo:\n  - a:\n      wait: PT3H\n";
    let issues = WorkflowChecker::new(limits)
        .check(source)
        .expect_err("three hours is too long");
    assert_eq!(
        issues[0].to_string(),
        "Line 4, column 13: at /do/0/a/wait: The duration is longer than a run may last: at most 2 hours."
    );
}
