//! A server killed with SIGKILL in the middle of a reasoning run's model call: after a restart,
//! a request with the run's id is refused as `taken` while the run's last event is recent, then
//! goes on with the run from its events: the call cut off ends as `interrupted`, the call is
//! made again under the next number, and every number has exactly one ending.

mod common;

use std::time::Duration;

use auto_testkit::{ProviderDouble, ProviderKind, Reply};
use common::{Client, PLAYBOOK_PATH, serve_in, wait_for};
use serde_json::{Value, json};

const REVIEW: &str = include_str!("data/review-a-brief.md");

/// The model-call events of a run: each type with its call's number, in order.
async fn model_calls(api: &Client, run_id: &str) -> Vec<(String, u64)> {
    api.events(PLAYBOOK_PATH, &format!("run_id={run_id}"))
        .await
        .iter()
        .filter(|e| {
            e["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("model_call_"))
        })
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_owned(),
                e["data"]["number"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_cut_off_by_sigkill_finishes_after_a_restart() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    double.script([Reply::Hang]);
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join("auto.toml"),
        format!(
            "database = \"sqlite://auto.db\"\n[providers.anthropic]\nbase_url = \"{}\"\napi_key = {{ file = \"key\" }}\n[limits]\nmodel_call_bound_ms = 6000\n",
            double.base_url()
        ),
    )
    .expect("the configuration");
    std::fs::write(dir.path().join("key"), "sk-ant-crash-test-secret").expect("the key");
    let debug = [("RUST_LOG", "debug")];

    let mut first = serve_in(dir.path(), &debug);
    let api = first.client();
    let pb = api.playbook().await;
    api.save_definition(&pb, "reasoning", "review", REVIEW)
        .await;

    let request = json!({"input": {"brief": "Autumn range"}, "run_id": "crash-1"});
    let cut_off = {
        let runs = format!("{}{pb}/definitions/reasoning/review/runs", api.url);
        let (http, request) = (api.http.clone(), request.clone());
        tokio::spawn(async move { http.post(runs).json(&request).send().await })
    };
    double.wait_for_requests(1, Duration::from_secs(20)).await;
    first.kill();
    assert!(cut_off.await.expect("the client task").is_err());

    double.script([Reply::Text("After the restart.".into())]);
    let mut second = serve_in(dir.path(), &debug);
    let api = second.client();
    let run = || api.start_run(&pb, "reasoning", "review", request.clone());

    // The run's last event is recent: the attempt that wrote it may still be going on.
    let early = run().await;
    assert_eq!(early.status, 409, "{:#}", early.body);
    assert_eq!(early.body["kind"], "taken", "{:#}", early.body);

    let body = wait_for(
        Duration::from_secs(60),
        "the run taken up again",
        || async {
            let reply = run().await;
            if reply.status != 200 {
                assert_eq!(reply.body["kind"], "taken", "{:#}", reply.body);
            }
            (reply.status == 200).then_some(reply.body)
        },
    )
    .await;
    assert_eq!(body["output"], "After the restart.");
    assert_eq!(double.requests().len(), 2);

    assert_eq!(
        model_calls(&api, "crash-1").await,
        [
            ("model_call_started".to_owned(), 1),
            ("model_call_failed".to_owned(), 1),
            ("model_call_started".to_owned(), 2),
            ("model_call_answered".to_owned(), 2),
        ]
    );
    let events = api.events(&pb, "run_id=crash-1").await;
    let failed = events
        .iter()
        .find(|e| e["type"] == "model_call_failed")
        .expect("the interrupted call");
    assert_eq!(failed["data"]["because"], "interrupted");

    // Asked again, the run is answered from its record.
    let again = run().await;
    assert_eq!(
        (again.status.as_u16(), &again.body["output"]),
        (200, &body["output"])
    );
    assert_eq!(double.requests().len(), 2);
    second.kill();

    // The key went to the provider, and to no log line of either server.
    assert_eq!(
        double.requests()[1].header("x-api-key"),
        Some("sk-ant-crash-test-secret")
    );
    let log = [first.log_lines(), second.log_lines()].concat().join("\n");
    assert!(
        log.contains("model call answered"),
        "the log shows the call"
    );
    assert!(!log.contains("crash-test-secret"), "{log}");
}

const DAYS: &str = include_str!("data/days-in-a-month.md");

const LATER: &str = include_str!("data/wait-then-count-the-days.yaml");

const NAP: &str = include_str!("data/nap-then-wake.yaml");

const PARENT: &str = include_str!("data/call-the-nap.yaml");

const APPROVE: &str = include_str!("data/approve-the-plan.md");

const ASK: &str = include_str!("data/ask-for-approval.yaml");

/// A folder whose `auto.toml` keeps the store in the SQLite file `auto.db` beside it.
fn sqlite_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join("auto.toml"),
        "database = \"sqlite://auto.db\"\n",
    )
    .expect("the configuration");
    dir
}

/// The runs of a type, up to 1,000.
async fn runs_of(api: &Client, query: &str) -> Vec<Value> {
    let reply = api
        .get(&format!("{PLAYBOOK_PATH}/runs?{query}&limit=1000"))
        .await;
    reply.body["runs"].as_array().cloned().unwrap_or_default()
}

/// The open requests of the inbox, up to 1,000.
async fn open_requests(api: &Client) -> Vec<Value> {
    let reply = api
        .get(&format!("{PLAYBOOK_PATH}/requests?status=open&limit=1000"))
        .await;
    reply.body["requests"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Two hundred workflows waiting when the server is killed with SIGKILL: a hundred on timers
/// (then a call of a computation), fifty on a child workflow that waits, fifty on a person's
/// answer. The next server fires every timer, hears every child's ending, takes every answer,
/// and every run ends as it would have, with no child run started twice.
#[tokio::test(flavor = "multi_thread")]
async fn waiting_workflows_outlast_a_sigkill() {
    const TIMERS: usize = 100;
    const CALLS: usize = 50;
    const ASKS: usize = 50;
    let dir = sqlite_folder();
    let mut first = serve_in(dir.path(), &[]);
    let api = first.client();
    let pb = api.playbook().await;
    for (def_type, name, source) in [
        ("computation", "days", DAYS),
        ("workflow", "later", LATER),
        ("workflow", "nap", NAP),
        ("workflow", "parent", PARENT),
        ("interaction", "approve", APPROVE),
        ("workflow", "ask", ASK),
    ] {
        api.save_definition(&pb, def_type, name, source).await;
    }
    let start = async |name: &str, run_id: String, input: Value| {
        let reply = api
            .start_run(
                &pb,
                "workflow",
                name,
                json!({"input": input, "run_id": run_id}),
            )
            .await;
        assert_eq!(reply.status, 202, "{:#}", reply.body);
    };
    for i in 0..TIMERS {
        let month = format!("2024-{:02}", i % 12 + 1);
        start("later", format!("later-{i}"), json!({ "month": month })).await;
    }
    for i in 0..CALLS {
        start("parent", format!("parent-{i}"), json!({ "n": i })).await;
    }
    for i in 0..ASKS {
        start(
            "ask",
            format!("ask-{i}"),
            json!({ "owner": format!("owner-{i}") }),
        )
        .await;
    }
    // Every child and request is under way before the kill.
    wait_for(
        Duration::from_secs(60),
        "every child and request under way",
        || async {
            let naps = runs_of(&api, "type=workflow&name=nap").await.len();
            let asked = open_requests(&api).await.len();
            (naps == CALLS && asked == ASKS).then_some(())
        },
    )
    .await;
    first.kill();

    let mut second = serve_in(dir.path(), &[]);
    let api = second.client();
    // The requests outlived the server: each is answered through the next one.
    let open = open_requests(&api).await;
    assert_eq!(open.len(), ASKS);
    for request in &open {
        let id = request["request_id"].as_str().expect("an id");
        let reply = api
            .post(
                &format!("{pb}/requests/{id}/answer"),
                json!({"answer": {"verdict": "approve"}}),
            )
            .await;
        assert_eq!(reply.status, 200, "{:#}", reply.body);
    }
    let within = Duration::from_secs(90);
    for i in 0..TIMERS {
        let run = api.ended(&pb, &format!("later-{i}"), within).await;
        assert_eq!(run["status"], "succeeded", "{run:#}");
        let month = i % 12 + 1;
        let days = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
        assert_eq!(run["output"], json!({"days": days}), "later-{i}");
    }
    for i in 0..CALLS {
        let run = api.ended(&pb, &format!("parent-{i}"), within).await;
        assert_eq!(run["output"], json!({"slept": i}), "{run:#}");
    }
    for i in 0..ASKS {
        let run = api.ended(&pb, &format!("ask-{i}"), within).await;
        assert_eq!(run["output"], json!({"verdict": "approve"}), "{run:#}");
    }
    // One child run per call: none was started twice.
    assert_eq!(runs_of(&api, "type=computation").await.len(), TIMERS);
    assert_eq!(runs_of(&api, "type=workflow&name=nap").await.len(), CALLS);
    assert_eq!(runs_of(&api, "type=interaction").await.len(), ASKS);
    second.kill();
}

const ADD_ONE: &str = include_str!("data/add-one.md");

const ADD_THREE_TIMES: &str = include_str!("data/add-three-times.yaml");

/// Two hundred workflows of three computation calls started at once, and the server killed
/// with SIGKILL while their stretches commit: a run, its three children and its ending are one
/// transaction, so after the restart each run is there ended, with its three children once, or
/// not there at all, and starting it again under its id runs it once.
#[tokio::test(flavor = "multi_thread")]
async fn runs_committed_together_end_once_across_a_sigkill() {
    const RUNS: usize = 200;
    let dir = sqlite_folder();
    let mut first = serve_in(dir.path(), &[]);
    let api = first.client();
    let pb = api.playbook().await;
    api.save_definition(&pb, "computation", "add-one", ADD_ONE)
        .await;
    api.save_definition(&pb, "workflow", "add-three-times", ADD_THREE_TIMES)
        .await;
    let body = |i: usize| json!({"input": {"x": 0}, "run_id": format!("three-{i}")});
    let mut starts = Vec::new();
    for i in 0..RUNS {
        let (api, pb) = (api.clone(), pb.clone());
        let url = format!("{}{pb}/definitions/workflow/add-three-times/runs", api.url);
        starts.push(tokio::spawn(async move {
            let sent = api.http.post(url).json(&body(i)).send().await;
            sent.is_ok_and(|response| response.status() == 200)
        }));
    }
    // Killed once some have committed and while others are still on their way.
    wait_for(Duration::from_secs(30), "some runs committed", || async {
        (runs_of(&api, "type=workflow").await.len() >= 10).then_some(())
    })
    .await;
    first.kill();
    let mut answered = Vec::new();
    for start in starts {
        answered.push(start.await.unwrap_or(false));
    }

    let mut second = serve_in(dir.path(), &[]);
    let api = second.client();
    let recorded = runs_of(&api, "type=workflow").await;
    for run in &recorded {
        assert_eq!(run["status"], "succeeded", "{run:#}");
    }
    let children = runs_of(&api, "type=computation").await;
    assert_eq!(children.len(), 3 * recorded.len(), "{children:#?}");
    for (i, answered) in answered.iter().enumerate() {
        let run_id = format!("three-{i}");
        let known = recorded.iter().any(|run| run["run_id"] == run_id.as_str());
        // A run answered 200 was on disk before its answer.
        assert!(
            known || !answered,
            "{run_id} was answered but is not recorded"
        );
        let reply = api
            .start_run(&pb, "workflow", "add-three-times", body(i))
            .await;
        assert_eq!(reply.status, 200, "{:#}", reply.body);
        assert_eq!(reply.body["output"], json!({"x": 3}), "{:#}", reply.body);
    }
    // Every run once, every child once.
    assert_eq!(runs_of(&api, "type=workflow").await.len(), RUNS);
    assert_eq!(runs_of(&api, "type=computation").await.len(), 3 * RUNS);
    second.kill();
}

/// A server killed with SIGKILL while a schedule waits, and due times passing while no server
/// runs (the next server reads a clock five and a half minutes on): only the latest missed
/// time runs, once.
#[tokio::test(flavor = "multi_thread")]
async fn after_a_sigkill_only_the_latest_missed_time_runs() {
    let dir = tempfile::tempdir().expect("a directory");
    let config = |offset_ms: i64| {
        format!(
            "database = \"sqlite://auto.db\"\n[scheduler]\nsweep_ms = 50\nclock_offset_ms = {offset_ms}\n"
        )
    };
    std::fs::write(dir.path().join("auto.toml"), config(0)).expect("the configuration");
    let mut first = serve_in(dir.path(), &[]);
    let api = first.client();
    let pb = api.playbook().await;
    let source = "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: tick\n  version: 1.0.0\nschedule:\n  every: PT1M\ndo:\n  - a:\n      set:\n        due: ${ $data.schedule.due }\n";
    let saved = api.save_definition(&pb, "workflow", "tick", source).await;
    // The sweep has read the first due time, a minute after the save.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(runs_of(&api, "type=workflow").await.is_empty());
    first.kill();
    std::fs::write(dir.path().join("auto.toml"), config(330_000)).expect("the configuration");
    let mut second = serve_in(dir.path(), &[]);
    let api = second.client();
    let runs = wait_for(Duration::from_secs(20), "a run ended", || async {
        let runs = runs_of(&api, "type=workflow").await;
        (!runs.is_empty() && runs.iter().all(|r| r["status"] != "started")).then_some(runs)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let again = runs_of(&api, "type=workflow").await;
    let run_id = runs[0]["run_id"].as_str().expect("a run id");
    let run = api.get(&format!("{pb}/runs/{run_id}")).await.body;
    second.kill();
    assert_eq!(again.len(), 1, "{again:#?}");
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let saved_at = chrono::DateTime::parse_from_rfc3339(saved["updated_at"].as_str().unwrap())
        .expect("a time");
    let due = chrono::DateTime::parse_from_rfc3339(run["output"]["due"].as_str().unwrap())
        .expect("a time");
    let after = (due - saved_at).num_milliseconds();
    assert!(
        (299_000..=301_000).contains(&after),
        "the due time {due} is {after} ms after the save, not the fifth minute"
    );
}
