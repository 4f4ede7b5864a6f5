//! Workflow runs end to end through HTTP: the page's `for` example, a timer, a call of a
//! computation function, a cancel, a run that outlasts its server, and the run id rules.

mod common;

use std::time::{Duration, Instant};

use common::{TestServer, WORKFLOW_HEADER, wait_for, workflow};
use serde_json::{Value, json};

const TOTAL: &str = include_str!("data/sum-the-lines.yaml");

const WAIT_THEN_SET: &str = include_str!("data/wait-then-set.yaml");

const DAYS: &str = include_str!("data/days-in-a-month.md");

const CALLS: &str = include_str!("data/count-the-days.yaml");

#[tokio::test]
async fn the_pages_for_example_adds_up_the_lines() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "total", TOTAL)
        .await;
    let input = json!({"lines": [{"amount": 120}, {"amount": 80}, {"amount": 45}]});
    let reply = server
        .start_run(
            &pb,
            "workflow",
            "total",
            json!({"input": input, "run_id": "sum-1"}),
        )
        .await;
    assert_eq!(
        reply.status, 200,
        "ended before its first wait: {:#}",
        reply.body
    );
    assert_eq!(reply.body["status"], "succeeded");
    assert_eq!(reply.body["output"], json!({"sum": 245}));
    // The story of the run is in its events.
    let types = server.event_types(&pb, "sum-1").await;
    assert_eq!(types.first().map(String::as_str), Some("run_started"));
    assert_eq!(types.last().map(String::as_str), Some("run_succeeded"));
    assert!(types.iter().any(|t| t == "step_completed"), "{types:?}");
    // The same id and input give the run as it stands; another input is refused.
    let again = server
        .start_run(
            &pb,
            "workflow",
            "total",
            json!({"input": input, "run_id": "sum-1"}),
        )
        .await;
    assert_eq!(again.body["output"], json!({"sum": 245}));
    let other = server
        .start_run(
            &pb,
            "workflow",
            "total",
            json!({"input": {"lines": []}, "run_id": "sum-1"}),
        )
        .await;
    other.assert_problem(409, "conflict");
}

#[tokio::test]
async fn a_wait_is_a_timer_and_the_run_goes_on_after_it() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "pause", WAIT_THEN_SET)
        .await;
    let started = Instant::now();
    let reply = server
        .start_run(
            &pb,
            "workflow",
            "pause",
            json!({"input": {"note": "hi"}, "run_id": "w-1"}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    assert_eq!(reply.body["status"], "started");
    let run = server.ended(&pb, "w-1", Duration::from_secs(10)).await;
    assert!(started.elapsed() >= Duration::from_secs(1));
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!({"waited": true, "seen": "hi"}));
}

const ADD_ONE: &str = include_str!("data/add-one.md");

const ADD_THREE_TIMES: &str = include_str!("data/add-three-times.yaml");

/// Calls of computation functions are performed in the step that makes them: a workflow of
/// three calls ends within its start request, answered 200, and each child run is recorded as
/// a call's child is, begun and ended, its facts between the call's.
#[tokio::test]
async fn computation_calls_are_performed_within_the_step_that_makes_them() {
    let (server, store, pb) = server_and_store().await;
    server
        .save_definition(&pb, "computation", "add-one", ADD_ONE)
        .await;
    server
        .save_definition(&pb, "workflow", "add-three-times", ADD_THREE_TIMES)
        .await;
    let reply = server
        .start_run(
            &pb,
            "workflow",
            "add-three-times",
            json!({"input": {"x": 0}, "run_id": "a-1"}),
        )
        .await;
    assert_eq!(
        reply.status, 200,
        "ended within its start: {:#}",
        reply.body
    );
    assert_eq!(reply.body["status"], "succeeded");
    assert_eq!(reply.body["output"], json!({"x": 3}));
    let runs = server.get(&format!("{pb}/runs?type=computation")).await;
    let children = runs.body["runs"].as_array().unwrap();
    assert_eq!(children.len(), 3, "{:#}", runs.body);
    for child in children {
        assert_eq!(child["status"], "succeeded", "{child:#}");
        assert!(
            child["run_id"].as_str().unwrap().starts_with("a-1."),
            "{child:#}"
        );
    }
    // Each child's facts sit between its call's start and the step's end, in order.
    let events = server.all_events(&pb).await;
    let story: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| {
            let run = e["source"].as_str()?.strip_prefix("/runs/")?;
            let run = if run == "a-1" { "parent" } else { "child" };
            Some((run.to_owned(), e["type"].as_str()?.to_owned()))
        })
        .filter(|(_, t)| t.starts_with("run_") || t == "call_started" || t == "call_ended")
        .collect();
    let mut expected = vec![("parent", "run_started")];
    for _ in 0..3 {
        expected.extend([
            ("parent", "call_started"),
            ("child", "run_started"),
            ("child", "run_succeeded"),
            ("parent", "call_ended"),
        ]);
    }
    expected.push(("parent", "run_succeeded"));
    let expected: Vec<(String, String)> = expected
        .into_iter()
        .map(|(r, t)| (r.to_owned(), t.to_owned()))
        .collect();
    assert_eq!(story, expected);
    // A child's id is the call's, and asking for it again gives it as it ended.
    let child_id = children[0]["run_id"].as_str().unwrap();
    let again = server.get(&format!("{pb}/runs/{child_id}")).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.body["status"], "succeeded");
    // An ended run waits for nothing: it left no timer behind, nor any other work.
    assert_eq!(store.next_work_due().await.unwrap(), None);
}

const ADD_ONE_FOR_EACH: &str = include_str!("data/add-one-for-each.yaml");

/// A stretch performs at most `STRETCH_CALLS_MAX` calls before it commits: a run of that many
/// computation calls ends within its request; one more, and the last goes through the queue,
/// so the run answers 202 and ends after it, with every child run once.
#[tokio::test]
async fn a_stretch_performs_at_most_its_calls_and_the_queue_takes_the_next() {
    use auto_server::workflow_runs::STRETCH_CALLS_MAX;
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "computation", "add-one", ADD_ONE)
        .await;
    server
        .save_definition(&pb, "workflow", "add-one-for-each", ADD_ONE_FOR_EACH)
        .await;
    let start = |count: usize, run_id: &str| {
        let items: Vec<usize> = (0..count).collect();
        json!({"input": {"items": items, "x": 0}, "run_id": run_id})
    };
    let at = server
        .start_run(
            &pb,
            "workflow",
            "add-one-for-each",
            start(STRETCH_CALLS_MAX, "at"),
        )
        .await;
    assert_eq!(at.status, 200, "{:#}", at.body);
    assert_eq!(at.body["output"]["x"], STRETCH_CALLS_MAX, "{:#}", at.body);
    let past = server
        .start_run(
            &pb,
            "workflow",
            "add-one-for-each",
            start(STRETCH_CALLS_MAX + 1, "past"),
        )
        .await;
    assert_eq!(past.status, 202, "{:#}", past.body);
    let run = server.ended(&pb, "past", Duration::from_secs(10)).await;
    assert_eq!(run["output"]["x"], STRETCH_CALLS_MAX + 1, "{run:#}");
    let runs = server
        .get(&format!("{pb}/runs?type=computation&limit=1000"))
        .await;
    assert_eq!(
        runs.body["runs"].as_array().unwrap().len(),
        2 * STRETCH_CALLS_MAX + 1,
        "{:#}",
        runs.body
    );
}

#[tokio::test]
async fn a_call_runs_the_function_and_hands_on_its_output() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "computation", "days", DAYS)
        .await;
    server
        .save_definition(&pb, "workflow", "count", CALLS)
        .await;
    let reply = server
        .start_run(
            &pb,
            "workflow",
            "count",
            json!({"input": {"month": "2024-02"}, "run_id": "c-1"}),
        )
        .await;
    assert!(
        reply.status == 200 || reply.status == 202,
        "{:#}",
        reply.body
    );
    let run = server.ended(&pb, "c-1", Duration::from_secs(10)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!({"month": "2024-02", "days": 29}));
    // The child run is there under its derived id, and ran once.
    let runs = server.get(&format!("{pb}/runs?type=computation")).await;
    assert_eq!(
        runs.body["runs"].as_array().unwrap().len(),
        1,
        "{:#}",
        runs.body
    );

    // A child that refuses its input raises the error the page gives, which ends the run.
    let reply = run_ending(&server, &pb, "count", json!({"month": "2024"}), "c-2").await;
    assert_eq!(reply["status"], "rejected", "{reply:#}");
    let problem = &reply["problem"];
    assert_eq!(problem["reason"], "invalid_input", "{problem:#}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.starts_with("The computation function days refused its input, at the step count"),
        "{detail}"
    );
}

async fn run_ending(
    server: &TestServer,
    pb: &str,
    name: &str,
    input: Value,
    run_id: &str,
) -> Value {
    let reply = server
        .start_run(
            pb,
            "workflow",
            name,
            json!({"input": input, "run_id": run_id}),
        )
        .await;
    assert!(reply.status != 500, "{:#}", reply.body);
    server.ended(pb, run_id, Duration::from_secs(10)).await
}

#[tokio::test]
async fn cancel_run_ends_a_waiting_workflow() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let long = workflow("do:\n  - pause:\n      wait: PT1H\n");
    server.save_definition(&pb, "workflow", "long", &long).await;
    let reply = server
        .start_run(&pb, "workflow", "long", json!({"run_id": "l-1"}))
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let cancel = server
        .post(
            &format!("{pb}/runs/l-1/cancel"),
            json!({"detail": "No longer needed."}),
        )
        .await;
    assert_eq!(cancel.status, 200, "{:#}", cancel.body);
    let run = server.ended(&pb, "l-1", Duration::from_secs(10)).await;
    assert_eq!(run["status"], "rejected");
    assert_eq!(run["problem"]["reason"], "cancelled", "{run:#}");
    assert_eq!(run["problem"]["kind"], "requested");
    assert!(
        run["problem"]["detail"]
            .as_str()
            .unwrap()
            .contains("No longer needed."),
        "{run:#}"
    );
    let again = server
        .post(&format!("{pb}/runs/l-1/cancel"), json!({}))
        .await;
    again.assert_problem(409, "conflict");
}

/// A run waiting on a timer outlasts its server: the next server on the same store fires the
/// timer and ends the run.
#[tokio::test]
async fn a_waiting_run_outlasts_its_server() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::test_store(dir.path()).await;
    let first = TestServer::start_on(
        store.clone(),
        Vec::new(),
        auto_server::reasoning_runs::Models::none(),
        tempfile::tempdir().unwrap(),
    )
    .await;
    let pb = first.playbook().await;
    first
        .save_definition(&pb, "workflow", "pause", WAIT_THEN_SET)
        .await;
    let reply = first
        .start_run(
            &pb,
            "workflow",
            "pause",
            json!({"input": {"note": "kept"}, "run_id": "o-1"}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    first.handle.unwrap().stop().await.unwrap();
    let second = TestServer::start_on(
        store,
        Vec::new(),
        auto_server::reasoning_runs::Models::none(),
        dir,
    )
    .await;
    let run = second.ended(&pb, "o-1", Duration::from_secs(10)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!({"waited": true, "seen": "kept"}));
}

#[tokio::test]
async fn a_workflow_calls_a_workflow_and_its_overview_names_who_uses_it() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let inner = workflow("do:\n  - double:\n      set:\n        n: ${ $data.n * 2 }\n");
    let outer = workflow(
        "do:\n  - twice:\n      call: run_definition\n      with:\n        type: workflow\n        name: inner\n        input: { n: '${ $data.n }' }\n",
    );
    server
        .save_definition(&pb, "workflow", "inner", &inner)
        .await;
    server
        .save_definition(&pb, "workflow", "outer", &outer)
        .await;
    let got = server
        .get(&format!("{pb}/definitions/workflow/inner"))
        .await;
    assert_eq!(
        got.body["used_by"],
        json!(["workflow/outer"]),
        "{:#}",
        got.body
    );
    let overview = got.body["overview"].as_str().unwrap();
    assert!(overview.contains("## Used by"), "{overview}");
    assert!(overview.contains("- The workflow outer."), "{overview}");
    let reply = server
        .start_run(
            &pb,
            "workflow",
            "outer",
            json!({"input": {"n": 21}, "run_id": "nest"}),
        )
        .await;
    assert!(
        reply.status == 200 || reply.status == 202,
        "{:#}",
        reply.body
    );
    let run = server.ended(&pb, "nest", Duration::from_secs(10)).await;
    assert_eq!(run["output"], json!({"n": 42}), "{run:#}");
}

/// A server, the store it runs on (for what a test writes as another server would have), and
/// its playbook.
async fn server_and_store() -> (TestServer, std::sync::Arc<dyn auto_store::Store>, String) {
    let dir = tempfile::tempdir().unwrap();
    let store = common::test_store(dir.path()).await;
    let none = auto_server::reasoning_runs::Models::none();
    let server = TestServer::start_on(store.clone(), Vec::new(), none, dir).await;
    let pb = server.playbook().await;
    (server, store, pb)
}

/// A work item no server of this version can read (one a later version wrote, or a damaged
/// row) is kept for a server that can, told in the log, and counted in `/metrics`; the work
/// beside it goes on.
#[tokio::test]
async fn a_work_item_that_cannot_be_read_is_kept_and_counted() {
    let (server, store, pb) = server_and_store().await;
    let playbook = auto_store::PlaybookRef::new("acme", "main");
    store
        .add_work(
            &playbook,
            "later",
            vec![auto_store::NewWork {
                key: "teleport".into(),
                due_at: None,
                payload: br#"{"teleport": {"to": "mars"}}"#.to_vec(),
                ordered: false,
            }],
        )
        .await
        .unwrap();
    wait_for(
        Duration::from_secs(10),
        "an unreadable work item counted",
        || async {
            let metrics = server.get("/metrics").await;
            let text = metrics.body.as_str().unwrap_or_default();
            text.contains("auto_work_unreadable_total 1").then_some(())
        },
    )
    .await;
    // Kept: still waiting, held by this server's lease.
    assert!(store.next_work_due().await.unwrap().is_some());
    // The server goes on with other work.
    server
        .save_definition(&pb, "workflow", "total", TOTAL)
        .await;
    let reply = server
        .start_run(
            &pb,
            "workflow",
            "total",
            json!({"input": {"lines": [{"amount": 1}]}, "run_id": "t-1"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
}

/// A server that stopped after recording a run and before its first step: the next server
/// takes the start from the store's work and runs it.
#[tokio::test]
async fn a_run_recorded_without_its_first_step_is_started_by_the_next_server() {
    let (server, store, pb) = server_and_store().await;
    server
        .save_definition(&pb, "workflow", "total", TOTAL)
        .await;
    // What a server that stopped at that moment left: the start as work, and the run.
    let playbook = auto_store::PlaybookRef::new("acme", "main");
    let input = json!({"lines": [{"amount": 2}, {"amount": 3}]});
    store
        .add_work(
            &playbook,
            "orphan",
            vec![auto_store::NewWork {
                key: "start".into(),
                due_at: None,
                payload: json!({"input": "start", "value": input})
                    .to_string()
                    .into_bytes(),
                ordered: true,
            }],
        )
        .await
        .unwrap();
    let mut started = auto_store::NewEvent::new("orphan-1", "run_started", "/runs/orphan");
    started.run_seq = Some(1);
    store
        .start_run(
            &playbook,
            common::recorded_run("orphan", "workflow", "total", input),
            vec![started],
        )
        .await
        .unwrap();
    let run = server.ended(&pb, "orphan", Duration::from_secs(10)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!({"sum": 5}));
}

#[tokio::test]
async fn a_workflow_runs_input_is_at_most_256_kib() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let echo = "do:\n  - keep:\n      set:\n        n: ${ $data.length }\n";
    server
        .save_definition(&pb, "workflow", "echo", &workflow(echo))
        .await;
    // A text of n characters is n + 2 bytes as JSON.
    let at = json!("x".repeat(262_144 - 2));
    let reply = server
        .start_run(
            &pb,
            "workflow",
            "echo",
            json!({"input": at, "run_id": "in-1"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["output"], json!({"n": 262_142}));
    let past = json!("x".repeat(262_144 - 1));
    let reply = server
        .start_run(
            &pb,
            "workflow",
            "echo",
            json!({"input": past, "run_id": "in-2"}),
        )
        .await;
    let problem = reply.assert_problem(422, "invalid_input");
    assert_eq!(problem["title"], "The workflow echo refused its input");
    assert_eq!(
        reply.issue_messages(),
        ["input: holds 262145 bytes as JSON, more than the 262,144 (256 KiB) a run takes"]
    );
    // Nothing was recorded under the refused id.
    let none = server.get(&format!("{pb}/runs/in-2")).await;
    none.assert_problem(404, "not_found");
}

/// A retry of 2 seconds' delay under a limit of `limit`: "No retry starts once this much time
/// has passed since the first attempt".
fn retry_within(limit: &str) -> String {
    format!(
        "do:\n  - t:\n      try:\n        - fail:\n            raise:\n              error: {{ type: https://example.com/down, status: 503 }}\n      catch:\n        retry:\n          delay: PT2S\n          limit:\n            duration: {limit}\n        do:\n          - give-up:\n              set: {{ gave_up: true }}\n"
    )
}

#[tokio::test]
async fn a_retry_that_would_start_past_its_limit_duration_does_not_start() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    // The retry would start 2 seconds after the first attempt, at the limit: it does not, and
    // the catch's do runs at once, so the run ends within its request.
    server
        .save_definition(&pb, "workflow", "at", &workflow(&retry_within("PT2S")))
        .await;
    let reply = server
        .start_run(&pb, "workflow", "at", json!({"run_id": "rt-1"}))
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["output"], json!({"gave_up": true}));
    // A millisecond more: the retry starts, fails again, and none follows it.
    let within = "{ seconds: 2, milliseconds: 1 }";
    server
        .save_definition(&pb, "workflow", "within", &workflow(&retry_within(within)))
        .await;
    let reply = server
        .start_run(&pb, "workflow", "within", json!({"run_id": "rt-2"}))
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let run = server.ended(&pb, "rt-2", Duration::from_secs(10)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!({"gave_up": true}));
    let events = server.all_events(&pb).await;
    let retried = events
        .iter()
        .filter(|e| e["type"] == "step_retried" && e["run_id"] == "rt-2")
        .count();
    assert_eq!(retried, 1, "{events:#?}");
}

#[tokio::test]
async fn a_run_whose_version_no_longer_parses_ends_failed() {
    // Saved and started where a run may last 60 days, with a wait of 40; the next server on
    // the store lets a run last the default 30, under which the document no longer parses.
    let dir = tempfile::tempdir().unwrap();
    let store = common::test_store(dir.path()).await;
    let long = auto_server::config::RunLimits {
        workflow_max_duration_ms: 60 * 24 * 3_600_000,
        ..Default::default()
    };
    let first = TestServer::start_limited(
        store.clone(),
        Vec::new(),
        auto_server::reasoning_runs::Models::none(),
        long,
        tempfile::tempdir().unwrap(),
    )
    .await;
    let pb = first.playbook().await;
    let body = "do:\n  - pause:\n      wait: PT1S\n  - long:\n      wait: P40D\n";
    first
        .save_definition(&pb, "workflow", "long", &workflow(body))
        .await;
    let reply = first
        .start_run(&pb, "workflow", "long", json!({"run_id": "np-1"}))
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    first.handle.unwrap().stop().await.unwrap();
    let second = TestServer::start_on(
        store,
        Vec::new(),
        auto_server::reasoning_runs::Models::none(),
        dir,
    )
    .await;
    let failed = second.ended(&pb, "np-1", Duration::from_secs(10)).await;
    assert_eq!(failed["status"], "failed", "{failed:#}");
    assert_eq!(failed["problem"]["reason"], "failed");
    assert_eq!(
        failed["problem"]["title"],
        "The workflow long no longer parses"
    );
    assert_eq!(
        failed["problem"]["detail"],
        "Its document no longer passes the checks of this runtime; save a new version."
    );
    let facts: Vec<Value> = second
        .all_events(&pb)
        .await
        .into_iter()
        .filter(|e| e["type"] == "run_failed" && e["run_id"] == "np-1")
        .collect();
    assert_eq!(facts.len(), 1, "{facts:#?}");
    // "Running it again with the id of a run that ... failed, is refused with conflict".
    let again = second
        .start_run(&pb, "workflow", "long", json!({"run_id": "np-1"}))
        .await;
    let problem = again.assert_problem(409, "conflict");
    assert_eq!(
        problem["detail"],
        "The workflow run np-1 ended failed and a workflow runs once for each run id; start a new run under a new run id."
    );
}

#[tokio::test]
async fn then_end_inside_a_loop_ends_the_run_with_the_current_output() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let body = r#"do:
  - loop:
      for:
        each: n
        in: '${ [1, 2, 3, 4] }'
      do:
        - add:
            set:
              sum: '${ ($data.sum ?? 0) + $n }'
        - stop:
            if: '${ $n === 2 }'
            set:
              stopped_at: '${ $n }'
              sum: '${ $data.sum }'
            then: end
  - after:
      set: { after: true }
output:
  as: '${ ({ ...$data, shaped: true }) }'
"#;
    server
        .save_definition(&pb, "workflow", "stop", &workflow(body))
        .await;
    let reply = server
        .start_run(&pb, "workflow", "stop", json!({"run_id": "end-1"}))
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    // The third and fourth items never ran, nor did the task after the loop; the document's
    // output.as still shapes the output.
    assert_eq!(
        reply.body["output"],
        json!({"stopped_at": 2, "sum": 3, "shaped": true})
    );
}

#[tokio::test]
async fn a_competing_fork_whose_branches_all_fail_raises_the_first_branchs_error() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    // The first branch fails after the second: the error is still the first's, by its place.
    let body = r#"do:
  - race:
      fork:
        compete: true
        branches:
          - slow:
              do:
                - pause:
                    wait: PT1S
                - slow-fails:
                    raise:
                      error: { type: https://example.com/slow, status: 503, title: The slow branch failed }
          - quick:
              raise:
                error: { type: https://example.com/quick, status: 400, title: The quick branch failed }
  - after:
      set: { after: true }
"#;
    server
        .save_definition(&pb, "workflow", "race", &workflow(body))
        .await;
    let reply = server
        .start_run(&pb, "workflow", "race", json!({"run_id": "race-1"}))
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let raced = server.ended(&pb, "race-1", Duration::from_secs(10)).await;
    assert_eq!(raced["status"], "rejected", "{raced:#}");
    assert_eq!(raced["problem"]["reason"], "unavailable", "{raced:#}");
    assert_eq!(
        raced["problem"]["detail"], "The slow branch failed, at the step slow-fails.",
        "{raced:#}"
    );
    // One branch that succeeds wins, though the other failed first.
    let wins = body.replace(
        "raise:\n                      error: { type: https://example.com/slow, status: 503, title: The slow branch failed }",
        "set: { won: slow }",
    );
    server
        .save_definition(&pb, "workflow", "race-won", &workflow(&wins))
        .await;
    let reply = server
        .start_run(&pb, "workflow", "race-won", json!({"run_id": "race-2"}))
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let raced = server.ended(&pb, "race-2", Duration::from_secs(10)).await;
    assert_eq!(raced["status"], "succeeded", "{raced:#}");
    assert_eq!(raced["output"], json!({"after": true}));
}

#[tokio::test]
async fn the_id_of_an_unavailable_workflow_run_is_not_run_again() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let raise = |status: u16| {
        format!(
            "{WORKFLOW_HEADER}do:\n  - stop:\n      raise:\n        error: {{ type: https://example.com/stop, status: {status}, title: Stopped }}\n"
        )
    };
    server
        .save_definition(&pb, "workflow", "down", &raise(503))
        .await;
    let first = server
        .start_run(&pb, "workflow", "down", json!({"run_id": "u-1"}))
        .await;
    first.assert_problem(503, "unavailable");
    let again = server
        .start_run(&pb, "workflow", "down", json!({"run_id": "u-1"}))
        .await;
    let problem = again.assert_problem(409, "conflict");
    assert_eq!(problem["title"], "The run id is used");
    assert_eq!(
        problem["detail"],
        "The workflow run u-1 ended rejected and a workflow runs once for each run id; start a new run under a new run id."
    );
    // A run rejected for another reason is given as it ended.
    server
        .save_definition(&pb, "workflow", "refuses", &raise(400))
        .await;
    let first = server
        .start_run(&pb, "workflow", "refuses", json!({"run_id": "u-2"}))
        .await;
    first.assert_problem(422, "invalid_input");
    let again = server
        .start_run(&pb, "workflow", "refuses", json!({"run_id": "u-2"}))
        .await;
    again.assert_problem(422, "invalid_input");
}

#[tokio::test]
async fn a_start_the_store_cannot_take_is_unavailable_and_a_child_it_cannot_start_unreachable() {
    let dir = tempfile::tempdir().unwrap();
    let failing = common::failing_store::FailingStore::new(common::test_store(dir.path()).await);
    let store: std::sync::Arc<dyn auto_store::Store> = failing.clone();
    let server = TestServer::start_on(
        store,
        Vec::new(),
        auto_server::reasoning_runs::Models::none(),
        dir,
    )
    .await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "blocked", TOTAL)
        .await;
    server
        .save_definition(&pb, "computation", "days", DAYS)
        .await;
    let caller = r#"do:
  - count:
      try:
        - call-days:
            call: run_definition
            with: { type: computation, name: days, input: { month: '2026-02' } }
      catch:
        errors:
          with: { type: communication }
        do:
          - tell:
              set:
                type: '${ $error.type }'
                status: '${ $error.status }'
                title: '${ $error.title }'
"#;
    server
        .save_definition(&pb, "workflow", "caller", &workflow(caller))
        .await;
    failing.refuse_starts_of("blocked");
    failing.refuse_starts_of("days");
    // "A start the server cannot take at that moment is refused unavailable".
    let reply = server
        .start_run(&pb, "workflow", "blocked", json!({"run_id": "b-1"}))
        .await;
    let problem = reply.assert_problem(503, "unavailable");
    assert_eq!(problem["title"], "The workflow blocked cannot start now");
    assert_eq!(
        problem["detail"],
        "The workflow cannot start now; try again shortly"
    );
    server
        .get(&format!("{pb}/runs/b-1"))
        .await
        .assert_problem(404, "not_found");
    // A child the server cannot start "could not be reached": communication, 503.
    let reply = server
        .start_run(&pb, "workflow", "caller", json!({"run_id": "c-1"}))
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let ended_run = server.ended(&pb, "c-1", Duration::from_secs(10)).await;
    assert_eq!(ended_run["status"], "succeeded", "{ended_run:#}");
    assert_eq!(
        ended_run["output"],
        json!({
            "type": "https://open-workflow-specification.org/spec/1.0.0/errors/communication",
            "status": 503,
            "title": "The computation function days was unavailable",
        })
    );
}
