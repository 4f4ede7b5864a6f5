//! The guides' examples (`docs/examples/`) are real: each passes `auto check` without a warning,
//! each is shown in full in a guide of `docs/definitions/`, and those that need no model
//! provider are saved and run against a real `auto serve` with the commands and outputs the
//! guides give.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{auto, json_of, stdout, wait_for_blocking};
use serde_json::{Value, json};

fn docs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

fn examples() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(docs().join("examples"))
        .expect("docs/examples")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    files
}

#[test]
fn every_example_passes_the_checkers_and_is_shown_whole_in_a_guide() {
    let guides: Vec<String> = std::fs::read_dir(docs().join("definitions"))
        .expect("docs/definitions")
        .map(|entry| std::fs::read_to_string(entry.expect("an entry").path()).expect("a guide"))
        .collect();
    for file in examples() {
        let output = std::process::Command::new(common::AUTO)
            .arg("check")
            .arg(&file)
            .output()
            .expect("auto check runs");
        assert!(
            output.status.success(),
            "{}: {}{}",
            file.display(),
            stdout(&output),
            common::stderr(&output)
        );
        // A warning is a mistake in a guide too, such as a flow mapping's comma that made a
        // description's second half a keyword.
        let printed = format!("{}{}", stdout(&output), common::stderr(&output));
        assert!(
            !printed.contains("warning"),
            "{}: {printed}",
            file.display()
        );
        let text = std::fs::read_to_string(&file).expect("the example");
        assert!(
            guides.iter().any(|guide| guide.contains(&text)),
            "{} is not shown whole in any guide of docs/definitions",
            file.display()
        );
    }
}

fn example(name: &str) -> String {
    docs().join("examples").join(name).display().to_string()
}

fn ok(server: &common::Server, args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    json_of(&auto(server, &args))
}

#[test]
fn the_computation_workflow_and_interaction_guides_run_as_written() {
    let server = common::serve();
    ok(&server, &["org", "create", "acme"]);
    ok(&server, &["playbook", "create", "main"]);
    let window = example("month-window.computation.md");
    ok(
        &server,
        &[
            "def",
            "create",
            "computation",
            "month-window",
            "--file",
            &window,
        ],
    );
    let run = ok(
        &server,
        &[
            "run",
            "computation/month-window",
            "--input",
            r#"{"month": "2026-02"}"#,
        ],
    );
    assert_eq!(
        run["output"],
        json!({"first": "2026-02-01", "last": "2026-02-28", "days": 28}),
        "{run:#}"
    );

    let summary = example("month-summary.workflow.yaml");
    ok(
        &server,
        &[
            "def",
            "create",
            "workflow",
            "month-summary",
            "--file",
            &summary,
        ],
    );
    // A call of a computation is performed in the step that makes it: the run ends within
    // its request.
    for (month, run_id, output) in [
        (
            "2026-02",
            "feb",
            json!({"last": "2026-02-28", "length": "short"}),
        ),
        (
            "2026-03",
            "mar",
            json!({"last": "2026-03-31", "length": "long"}),
        ),
    ] {
        let input = format!(r#"{{"month": "{month}"}}"#);
        let started = ok(
            &server,
            &[
                "run",
                "workflow/month-summary",
                "--input",
                &input,
                "--run-id",
                run_id,
            ],
        );
        assert_eq!(started["status"], json!("succeeded"), "{started:#}");
        assert_eq!(started["output"], output, "{started:#}");
        let run = ended(&server, run_id);
        assert_eq!(run["output"], output, "{run:#}");
    }

    let pause = example("pause-then-window.workflow.yaml");
    ok(
        &server,
        &[
            "def",
            "create",
            "workflow",
            "pause-then-window",
            "--file",
            &pause,
        ],
    );
    let started = ok(
        &server,
        &[
            "run",
            "workflow/pause-then-window",
            "--input",
            r#"{"month": "2024-02"}"#,
            "--run-id",
            "leap",
        ],
    );
    assert_eq!(started["status"], json!("started"), "{started:#}");
    let run = ended(&server, "leap");
    assert_eq!(run["output"]["days"], json!(29), "{run:#}");

    let approve = example("approve-expense.interaction.md");
    ok(
        &server,
        &[
            "def",
            "create",
            "interaction",
            "approve-expense",
            "--file",
            &approve,
        ],
    );
    let input = r#"{"manager": "dana@example.com", "amount": 120, "reason": "Team lunch"}"#;
    let started = ok(
        &server,
        &[
            "run",
            "interaction/approve-expense",
            "--run-id",
            "expense-1",
            "--input",
            input,
        ],
    );
    assert_eq!(started["status"], json!("started"), "{started:#}");
    let inbox = ok(&server, &["requests"]);
    let request = &inbox["requests"][0];
    assert_eq!(request["to"], json!("dana@example.com"), "{inbox:#}");
    assert!(
        request["message"].as_str().unwrap().contains("USD 120"),
        "{inbox:#}"
    );
    let request_id = request["request_id"].as_str().expect("its id").to_owned();
    ok(
        &server,
        &["answer", &request_id, r#"{"verdict": "approve"}"#],
    );
    let run = ok(&server, &["runs", "get", "expense-1"]);
    assert_eq!(run["status"], json!("succeeded"), "{run:#}");
    assert_eq!(run["output"], json!({"verdict": "approve"}));
}

/// Reads the run with `auto runs get` until it has ended.
fn ended(server: &common::Server, run_id: &str) -> Value {
    wait_for_blocking(Duration::from_secs(30), "the run's end", || {
        let run = ok(server, &["runs", "get", run_id]);
        (run["status"] != "started").then_some(run)
    })
}

#[test]
fn the_recall_guide_runs_as_written() {
    let server = common::serve();
    ok(&server, &["org", "create", "acme"]);
    ok(&server, &["playbook", "create", "main"]);
    let orders = example("orders-by-month.recall.md");
    ok(
        &server,
        &[
            "def",
            "create",
            "recall",
            "orders-by-month",
            "--file",
            &orders,
        ],
    );
    for data in [
        r#"{"placed_at": "2026-02-03T10:00:00Z", "amount": 120}"#,
        r#"{"placed_at": "2026-02-17T16:30:00Z", "amount": 80.5}"#,
        r#"{"placed_at": "2026-03-01T09:00:00Z", "amount": 42}"#,
    ] {
        ok(
            &server,
            &["events", "publish", "order.placed", "--data", data],
        );
    }
    let run = ok(
        &server,
        &[
            "run",
            "recall/orders-by-month",
            "--input",
            r#"{"month": "2026-02"}"#,
        ],
    );
    assert_eq!(
        run["output"],
        json!({"orders": 2, "total": 200.5}),
        "{run:#}"
    );
    let march = ok(
        &server,
        &[
            "run",
            "recall/orders-by-month",
            "--input",
            r#"{"month": "2026-03"}"#,
        ],
    );
    assert_eq!(
        march["output"],
        json!({"orders": 1, "total": 42}),
        "{march:#}"
    );
}

#[test]
fn the_prediction_guide_runs_as_written() {
    let server = common::serve();
    ok(&server, &["org", "create", "acme"]);
    ok(&server, &["playbook", "create", "main"]);
    for (name, file) in [
        ("recall", "orders-by-month-series"),
        ("prediction", "orders-ahead"),
    ] {
        let path = example(&format!("{file}.{name}.md"));
        ok(&server, &["def", "create", name, file, "--file", &path]);
    }
    // Two years and a half of orders: more in the spring, a few more each year.
    let months = 30;
    let count = |month: usize| 1 + [0, 0, 1, 2, 3, 2, 1, 0, 0, 1, 0, 0][month % 12] + month / 12;
    for month in 0..months {
        let placed_at = format!("{}-{:02}-10T12:00:00Z", 2024 + month / 12, month % 12 + 1);
        for _ in 0..count(month) {
            let data = json!({ "placed_at": placed_at }).to_string();
            ok(
                &server,
                &["events", "publish", "order.placed", "--data", &data],
            );
        }
    }
    let built = ok(
        &server,
        &[
            "run",
            "prediction/orders-ahead",
            "--input",
            r#"{"build": true}"#,
        ],
    );
    assert_eq!(built["status"], "succeeded", "{built:#}");
    assert_eq!(built["output"]["points"], months);
    assert_eq!(built["output"]["season"], 12);
    assert_eq!(built["output"]["candidates"].as_array().unwrap().len(), 6);
    let asked = ok(
        &server,
        &[
            "run",
            "prediction/orders-ahead",
            "--input",
            r#"{"periods": 3}"#,
        ],
    );
    let lines = asked["output"]["lines"].as_array().expect("lines");
    assert_eq!(lines[0]["name"], "history");
    assert_eq!(lines[0]["points"].as_array().unwrap().len(), months);
    assert_eq!(lines[1]["name"], "prediction");
    let xs: Vec<&Value> = lines[1]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["x"])
        .collect();
    assert_eq!(
        xs,
        [
            &json!("2026-07-01"),
            &json!("2026-08-01"),
            &json!("2026-09-01")
        ]
    );
    for point in lines[1]["points"].as_array().unwrap() {
        let y = point["y"].as_f64().expect("a number");
        assert!((0.0..20.0).contains(&y), "{asked:#}");
    }
}
