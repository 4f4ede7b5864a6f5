//! A server killed with SIGKILL while it builds predictions from series people uploaded: after
//! a restart, each build's request and run agree (answered and succeeded, or open and started),
//! the build kept is one series' whole, the requests left open take their answer again, and no
//! build is recorded twice.

mod common;

use common::serve_in;
use serde_json::{Value, json};

/// Builds asked for at once.
const BUILDS: usize = 4;
/// Points of each uploaded series: enough that a build takes a while in a test build.
const POINTS: usize = 10_000;

const UPLOADED: &str = "---\ndescription: Load ahead\nsource:\n  request: {to: ops, expires: P2D}\nhorizon: 24\nperiod: PT1H\nseason: 24\n---\nThe load of the next day, hour by hour.\n";

/// The series build `k` is answered with: its own level, a daily season and a slow trend.
fn series(k: usize) -> Value {
    let points: Vec<Value> = (0..POINTS)
        .map(|i| {
            let hour = (i % 24) as f64 / 24.0 * std::f64::consts::TAU;
            let y = 100.0 + 1_000.0 * k as f64 + 10.0 * hour.sin() + 0.01 * i as f64;
            json!({"x": i, "y": y})
        })
        .collect();
    json!({"lines": [{"name": "load", "points": points}]})
}

/// The build whose series `history` is, when it is one of them whole.
fn whose(history: &[Value]) -> Option<usize> {
    (0..BUILDS).find(|k| {
        let expected = series(*k);
        history
            == expected["lines"][0]["points"]
                .as_array()
                .unwrap()
                .as_slice()
    })
}

/// The history a question answers: the series of the build kept.
async fn kept_history(api: &common::Client, pb: &str) -> Vec<Value> {
    let question = api
        .start_run(
            pb,
            "prediction",
            "load-ahead",
            json!({"input": {"periods": 2}}),
        )
        .await;
    assert_eq!(question.status, 200, "{:#}", question.body);
    question.body["output"]["lines"][0]["points"]
        .as_array()
        .unwrap()
        .clone()
}

async fn requests_by_run(api: &common::Client, pb: &str) -> Vec<(String, Value)> {
    let reply = api.get(&format!("{pb}/requests")).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    reply.body["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["run_id"].as_str().unwrap().to_owned(), r.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn builds_killed_midway_keep_one_whole_series_and_finish_once_answered_again() {
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join("auto.toml"),
        "database = \"sqlite://auto.db\"\n",
    )
    .expect("the configuration");
    let mut first = serve_in(dir.path(), &[]);
    let api = first.client();
    let pb = api.playbook().await;
    api.save_definition(&pb, "prediction", "load-ahead", UPLOADED)
        .await;
    for k in 0..BUILDS {
        let reply = api
            .start_run(
                &pb,
                "prediction",
                "load-ahead",
                json!({"run_id": format!("build-{k}"), "input": {"build": true}}),
            )
            .await;
        assert_eq!(reply.status, 202, "{:#}", reply.body);
    }
    let requests = requests_by_run(&api, &pb).await;
    assert_eq!(requests.len(), BUILDS);

    // Every series uploaded at once; the server is killed as soon as one is taken.
    let mut answers = tokio::task::JoinSet::new();
    for (run_id, request) in &requests {
        let k: usize = run_id["build-".len()..].parse().unwrap();
        let path = format!(
            "{pb}/requests/{}/answer",
            request["request_id"].as_str().unwrap()
        );
        let api = api.clone();
        answers.spawn(async move { api.post(&path, json!({"answer": series(k)})).await.status });
    }
    let taken_first = answers.join_next().await.expect("an answer");
    first.kill();
    let mut unanswered = usize::from(taken_first.is_err());
    while let Some(answered) = answers.join_next().await {
        // A post cut by the kill fails in its task.
        if !matches!(answered, Ok(status) if status == 200) {
            unanswered += 1;
        }
    }
    assert!(
        unanswered > 0,
        "every series was taken before the kill, which proves nothing"
    );

    let second = serve_in(dir.path(), &[]);
    let api = second.client();
    let mut open = Vec::new();
    for (run_id, request) in requests_by_run(&api, &pb).await {
        let run = api.get(&format!("{pb}/runs/{run_id}")).await.body;
        // The request and its run close together, or not at all.
        match request["status"].as_str().unwrap() {
            "answered" => assert_eq!(run["status"], "succeeded", "{run:#}"),
            "open" => {
                assert_eq!(run["status"], "started", "{run:#}");
                open.push((run_id, request["request_id"].as_str().unwrap().to_owned()));
            }
            other => panic!("the request of {run_id} is {other}"),
        }
    }
    assert!(!open.is_empty(), "a request the kill cut stays open");

    // The build kept, if any, is one uploaded series whole.
    let history = kept_history(&api, &pb).await;
    assert!(
        whose(&history).is_some(),
        "the kept history is no series whole"
    );

    // The requests left open take their series again, and every build ends once.
    let mut last = None;
    for (run_id, request_id) in open {
        let k: usize = run_id["build-".len()..].parse().unwrap();
        let reply = api
            .post(
                &format!("{pb}/requests/{request_id}/answer"),
                json!({"answer": series(k)}),
            )
            .await;
        assert_eq!(reply.status, 200, "{:#}", reply.body);
        last = Some(k);
    }
    for k in 0..BUILDS {
        let run_id = format!("build-{k}");
        let run = api.get(&format!("{pb}/runs/{run_id}")).await.body;
        assert_eq!(run["status"], "succeeded", "{run:#}");
        assert_eq!(run["output"]["points"], POINTS);
        assert_eq!(
            api.event_types(&pb, &run_id).await,
            [
                "run_started",
                "request_opened",
                "request_answered",
                "prediction_built",
                "run_succeeded"
            ]
        );
    }
    let history = kept_history(&api, &pb).await;
    assert_eq!(
        whose(&history),
        last,
        "the last build answered is the one kept"
    );
}
