//! Triggers through HTTP: workflows that start on the playbook's events and at their times,
//! with the page's rules ("Triggers", "Event filters", "Schedules", "When a trigger applies",
//! "Trigger limits"), and listen tasks that hear the playbook's events ("Waiting for events").
//!
//! The servers here sweep every 50 ms; the schedule tests move the clock the schedules read
//! (`[scheduler] clock_offset_ms`) instead of waiting, except one that waits for the real
//! clock's next minute.

mod common;

use std::sync::Arc;
use std::time::Duration;

use auto_server::config::RunLimits;
use auto_server::reasoning_runs::Models;
use common::{TestServer, test_store, wait_for, workflow};
use serde_json::{Value, json};

/// Starts on each high-priority brief submitted; its output is the brief it started on.
const ON_BRIEF: &str = include_str!("data/start-on-a-high-priority-brief.yaml");

fn limits(offset_ms: i64) -> RunLimits {
    RunLimits {
        sweep_ms: 50,
        clock_offset_ms: offset_ms,
        ..RunLimits::default()
    }
}

async fn server() -> TestServer {
    TestServer::start_with_config("[scheduler]\nsweep_ms = 50\n").await
}

async fn server_on(store: Arc<dyn auto_store::Store>, offset_ms: i64) -> TestServer {
    let dir = tempfile::tempdir().expect("a directory");
    TestServer::start_limited(store, Vec::new(), Models::none(), limits(offset_ms), dir).await
}

async fn update(server: &TestServer, pb: &str, name: &str, source: &str) -> Value {
    let reply = server.update_definition(pb, "workflow", name, source).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    reply.body
}

async fn publish(server: &TestServer, pb: &str, event: Value) -> Value {
    let reply = server.post(&format!("{pb}/events"), event).await;
    assert_eq!(reply.status, 201, "{:#}", reply.body);
    reply.body
}

/// The runs of a workflow as listed (without input and output), oldest first.
async fn runs_of(server: &TestServer, pb: &str, name: &str) -> Vec<Value> {
    let reply = server
        .get(&format!("{pb}/runs?type=workflow&name={name}&limit=1000"))
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    let mut runs = reply.body["runs"].as_array().expect("runs").clone();
    runs.reverse();
    runs
}

/// Each run in full, with its input and output.
async fn in_full(server: &TestServer, pb: &str, runs: &[Value]) -> Vec<Value> {
    let mut full = Vec::new();
    for listed in runs {
        full.push(run(server, pb, listed["run_id"].as_str().expect("a run id")).await);
    }
    full
}

/// Waits until the workflow has `count` runs, all ended, within `within`.
async fn ended_runs(
    server: &TestServer,
    pb: &str,
    name: &str,
    count: usize,
    within: Duration,
) -> Vec<Value> {
    wait_for(within, &format!("{count} ended runs of {name}"), || async {
        let runs = runs_of(server, pb, name).await;
        (runs.len() >= count && runs.iter().all(|r| r["status"] != "started")).then_some(runs)
    })
    .await
}

async fn run(server: &TestServer, pb: &str, run_id: &str) -> Value {
    let reply = server.get(&format!("{pb}/runs/{run_id}")).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    reply.body
}

/// Events of a type, in order.
async fn events_of(server: &TestServer, pb: &str, event_type: &str) -> Vec<Value> {
    server.events(pb, &format!("type={event_type}")).await
}

/// A few sweeps.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(400)).await;
}

#[tokio::test]
async fn an_event_trigger_starts_a_run_for_each_matching_event_acting_for_the_playbook() {
    let server = server().await;
    let pb = server.playbook().await;
    // Recorded before the trigger was saved: never matched.
    publish(
        &server,
        &pb,
        json!({"type": "com.example.brief.submitted", "data": {"priority": "high", "brief": "early"}}),
    )
    .await;
    let definition = server
        .save_definition(&pb, "workflow", "intake", ON_BRIEF)
        .await;
    assert_eq!(
        definition["triggers"],
        json!([{"kind": "event", "reference": "/schedule/on", "filters": [
            {"type": "com.example.brief.submitted", "data": "${ $data.priority === \"high\" }"}
        ]}])
    );
    assert!(definition["triggers_since"].is_string(), "{definition:#}");
    let high = publish(
        &server,
        &pb,
        json!({"type": "com.example.brief.submitted", "id": "b-1", "data": {"priority": "high", "brief": "spring"}}),
    )
    .await;
    publish(
        &server,
        &pb,
        json!({"type": "com.example.brief.submitted", "id": "b-2", "data": {"priority": "low", "brief": "summer"}}),
    )
    .await;
    publish(
        &server,
        &pb,
        json!({"type": "com.example.other", "id": "o-1", "data": {"priority": "high"}}),
    )
    .await;
    let runs = ended_runs(&server, &pb, "intake", 1, Duration::from_secs(10)).await;
    settle().await;
    let runs_now = runs_of(&server, &pb, "intake").await;
    assert_eq!(runs_now.len(), 1, "{runs_now:#?}");
    let run_id = runs[0]["run_id"].as_str().unwrap();
    assert!(run_id.starts_with("intake.on."), "{run_id}");
    let started = run(&server, &pb, run_id).await;
    assert_eq!(started["status"], "succeeded", "{started:#}");
    assert_eq!(started["started_by"], "playbook:main");
    assert_eq!(started["output"], json!({"brief": "spring", "events": 1}));
    // Its input is a list holding the event.
    assert_eq!(started["input"][0]["id"], "b-1");
    assert_eq!(started["input"][0]["data"], high["data"]);
    // The run's facts name the trigger and carry the depth of what it matched.
    let facts = server
        .get(&format!("{pb}/events?run_id={run_id}&type=run_started"))
        .await;
    let fact = &facts.body["events"][0];
    assert_eq!(fact["triggerkind"], "event", "{fact:#}");
    assert_eq!(fact["triggerreference"], "/schedule/on");
    assert_eq!(fact["depth"], 2, "{fact:#}");
    assert_eq!(fact["caller"], "playbook:main");
    // Its words say which kind started it; a run's fact never carries its input.
    assert_eq!(
        fact["data"]["message"],
        "The workflow intake was started by its event trigger, for the event b-1.",
        "{fact:#}"
    );
    assert_eq!(fact["data"]["trigger"]["kind"], "event");
    assert!(!fact.to_string().contains("spring"), "{fact:#}");
}

#[tokio::test]
async fn a_trigger_hears_its_own_saving_and_a_filter_by_source_leaves_it_out() {
    let server = server().await;
    let pb = server.playbook().await;
    let any_definition = r#"schedule:
  on:
    one:
      with: { type: definition_created }
do:
  - take:
      set:
        subject: ${ $data[0].subject }
"#;
    server
        .save_definition(&pb, "workflow", "on-created", &workflow(any_definition))
        .await;
    let by_source = r#"schedule:
  on:
    one:
      with: { type: definition_created, source: /definitions/workflow/target }
do:
  - take:
      set:
        subject: ${ $data[0].subject }
"#;
    server
        .save_definition(&pb, "workflow", "on-target", &workflow(by_source))
        .await;
    // "The saving itself is the first thing it can match."
    let runs = ended_runs(&server, &pb, "on-created", 2, Duration::from_secs(10)).await;
    let runs = in_full(&server, &pb, &runs).await;
    let subjects: Vec<&Value> = runs.iter().map(|r| &r["output"]["subject"]).collect();
    assert!(
        subjects.contains(&&json!("workflow/on-created"))
            && subjects.contains(&&json!("workflow/on-target")),
        "{runs:#?}"
    );
    server
        .save_definition(
            &pb,
            "workflow",
            "target",
            &workflow("do:\n  - a:\n      set: { a: 1 }\n"),
        )
        .await;
    let targeted = ended_runs(&server, &pb, "on-target", 1, Duration::from_secs(10)).await;
    let targeted = in_full(&server, &pb, &targeted).await;
    settle().await;
    assert_eq!(runs_of(&server, &pb, "on-target").await.len(), 1);
    assert_eq!(targeted[0]["output"]["subject"], "workflow/target");
}

#[tokio::test]
async fn a_workflow_does_not_start_for_what_its_own_runs_caused() {
    let server = server().await;
    let pb = server.playbook().await;
    // Starts on any workflow run that succeeded, and emits an event it also listens for.
    let echo = r#"schedule:
  on:
    any:
      - with: { type: run_succeeded }
      - with: { type: com.example.echo }
do:
  - say:
      emit:
        event:
          with:
            type: com.example.echo
            source: https://example.com/echo
            data: { of: '${ $data[0].subject }' }
"#;
    server
        .save_definition(&pb, "workflow", "echo", &workflow(echo))
        .await;
    server
        .save_definition(
            &pb,
            "workflow",
            "other",
            &workflow("do:\n  - a:\n      set: { a: 1 }\n"),
        )
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/workflow/other/runs"),
            json!({"input": {}}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    // other's run_succeeded starts echo once; echo's own fact and echo's own emitted event
    // start nothing.
    ended_runs(&server, &pb, "echo", 1, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let runs = runs_of(&server, &pb, "echo").await;
    assert_eq!(runs.len(), 1, "{runs:#?}");
    assert_eq!(events_of(&server, &pb, "com.example.echo").await.len(), 1);
}

#[tokio::test]
async fn a_chain_of_triggers_stops_at_depth_eight_and_the_refusal_is_recorded() {
    let server = server().await;
    let pb = server.playbook().await;
    let relay = |hears: &str, says: &str| {
        format!(
            r#"schedule:
  on:
    one:
      with: {{ type: com.example.{hears} }}
do:
  - say:
      emit:
        event:
          with:
            type: com.example.{says}
            source: https://example.com/relay
"#
        )
    };
    server
        .save_definition(&pb, "workflow", "ping", &workflow(&relay("ping", "pong")))
        .await;
    server
        .save_definition(&pb, "workflow", "pong", &workflow(&relay("pong", "ping")))
        .await;
    publish(&server, &pb, json!({"type": "com.example.ping"})).await;
    // ping at depths 1, 3, 5, 7; pong at 2, 4, 6, 8; the ping pong's run at 8 emits is at 9.
    ended_runs(&server, &pb, "pong", 4, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(runs_of(&server, &pb, "ping").await.len(), 4);
    assert_eq!(runs_of(&server, &pb, "pong").await.len(), 4);
    let pings = events_of(&server, &pb, "com.example.ping").await;
    let depths: Vec<i64> = pings.iter().map(|e| e["depth"].as_i64().unwrap()).collect();
    assert_eq!(depths, vec![1, 3, 5, 7, 9]);
    let refused = events_of(&server, &pb, "reaction_refused").await;
    assert_eq!(refused.len(), 1, "{refused:#?}");
    assert_eq!(refused[0]["subject"], "workflow/ping");
    assert_eq!(refused[0]["data"]["count"], 1);
    assert_eq!(
        refused[0]["data"]["reason"],
        format!(
            "The event trigger did not start a run: the event {} is at depth 9, deeper than a chain of triggers may go (8).",
            pings[4]["id"].as_str().unwrap()
        )
    );
}

#[tokio::test]
async fn an_unchanged_trigger_goes_on_a_changed_one_starts_from_its_saving_and_retiring_stops() {
    let server = server().await;
    let pb = server.playbook().await;
    let first = server
        .save_definition(&pb, "workflow", "intake", ON_BRIEF)
        .await;
    let brief = |id: &str| json!({"type": "com.example.brief.submitted", "id": id, "data": {"priority": "high", "brief": id}});
    publish(&server, &pb, brief("b-1")).await;
    ended_runs(&server, &pb, "intake", 1, Duration::from_secs(10)).await;
    // A new version that leaves the trigger as it was: it goes on, and starts version 2.
    let second = update(
        &server,
        &pb,
        "intake",
        &ON_BRIEF.replace("events:", "count:"),
    )
    .await;
    assert_eq!(second["version"], 2);
    assert_ne!(second["triggers_since"], first["triggers_since"]);
    publish(&server, &pb, brief("b-2")).await;
    let runs = ended_runs(&server, &pb, "intake", 2, Duration::from_secs(10)).await;
    assert_eq!(runs[1]["definition_version"], 2, "{runs:#?}");
    // A version without a schedule stops it.
    update(
        &server,
        &pb,
        "intake",
        &workflow("do:\n  - a:\n      set: { a: 1 }\n"),
    )
    .await;
    publish(&server, &pb, brief("b-3")).await;
    settle().await;
    assert_eq!(runs_of(&server, &pb, "intake").await.len(), 2);
    // Adding it again applies from that saving: b-3 was before it.
    update(&server, &pb, "intake", ON_BRIEF).await;
    publish(&server, &pb, brief("b-4")).await;
    let runs = ended_runs(&server, &pb, "intake", 3, Duration::from_secs(10)).await;
    settle().await;
    let runs_now = runs_of(&server, &pb, "intake").await;
    assert_eq!(runs_now.len(), 3, "{runs_now:#?}");
    assert_eq!(runs[2]["definition_version"], 4);
    // Retiring stops every trigger.
    let reply = server
        .delete(&format!("{pb}/definitions/workflow/intake"))
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    publish(&server, &pb, brief("b-5")).await;
    settle().await;
    assert_eq!(runs_of(&server, &pb, "intake").await.len(), 3);
}

#[tokio::test]
async fn a_filter_that_raises_matches_nothing_and_is_recorded_once_for_its_version() {
    let server = server().await;
    let pb = server.playbook().await;
    let fragile = r#"schedule:
  on:
    one:
      with: { type: com.example.order, data: '${ $data.lines.length > 0 }' }
do:
  - take:
      set: { n: '${ $data[0].data.lines.length }' }
"#;
    server
        .save_definition(&pb, "workflow", "orders", &workflow(fragile))
        .await;
    publish(
        &server,
        &pb,
        json!({"type": "com.example.order", "data": {}}),
    )
    .await;
    publish(
        &server,
        &pb,
        json!({"type": "com.example.order", "data": {}}),
    )
    .await;
    publish(
        &server,
        &pb,
        json!({"type": "com.example.order", "data": {"lines": [1, 2]}}),
    )
    .await;
    let runs = ended_runs(&server, &pb, "orders", 1, Duration::from_secs(10)).await;
    let runs = in_full(&server, &pb, &runs).await;
    settle().await;
    assert_eq!(runs_of(&server, &pb, "orders").await.len(), 1);
    assert_eq!(runs[0]["output"], json!({"n": 2}));
    let failed = events_of(&server, &pb, "filter_failed").await;
    assert_eq!(failed.len(), 1, "{failed:#?}");
    assert_eq!(failed[0]["subject"], "workflow/orders");
    assert_eq!(failed[0]["data"]["reference"], "/schedule/on");
    assert_eq!(failed[0]["data"]["version"], 1);
}

/// Waits until the playbook holds `count` records of `event_type`.
async fn records(server: &TestServer, pb: &str, event_type: &str, count: usize) -> Vec<Value> {
    let what = format!("{count} records of {event_type}");
    wait_for(Duration::from_secs(15), &what, || async {
        let found = events_of(server, pb, event_type).await;
        (found.len() >= count).then_some(found)
    })
    .await
}

#[tokio::test]
async fn a_filter_stopped_by_its_memory_three_times_in_a_row_is_disabled_for_its_version() {
    let server = server().await;
    let pb = server.playbook().await;
    // More than the sandbox's 64 MiB: every evaluation is stopped, which is not the event's
    // doing, so the event is left to a later sweep, three times, then the filter is off.
    let hungry = r#"schedule:
  on:
    one:
      with: { type: com.example.big, data: '${ "x".repeat(2 ** 27).length > $data.n }' }
do:
  - take:
      set: { n: 1 }
"#;
    server
        .save_definition(&pb, "workflow", "hungry", &workflow(hungry))
        .await;
    let light = "schedule:\n  on:\n    one:\n      with: { type: com.example.big }\ndo:\n  - take:\n      set: { n: 1 }\n";
    server
        .save_definition(&pb, "workflow", "light", &workflow(light))
        .await;
    publish(
        &server,
        &pb,
        json!({"type": "com.example.big", "id": "big-1", "data": {"n": 1}}),
    )
    .await;
    // Another workflow's trigger on the same events goes on meanwhile.
    ended_runs(&server, &pb, "light", 1, Duration::from_secs(10)).await;
    let disabled = records(&server, &pb, "filter_disabled", 1).await;
    assert_eq!(disabled.len(), 1, "{disabled:#?}");
    assert_eq!(disabled[0]["subject"], "workflow/hungry");
    assert_eq!(disabled[0]["data"]["reference"], "/schedule/on");
    assert_eq!(disabled[0]["data"]["version"], 1);
    let detail = disabled[0]["data"]["detail"].as_str().unwrap();
    assert!(
        detail
            .starts_with("The filter 0 at /schedule/on of version 1 was stopped 3 times in a row"),
        "{detail}"
    );
    // Off for its version: a later event is not evaluated, nothing starts, nothing more is
    // recorded, while the other workflow hears it.
    publish(
        &server,
        &pb,
        json!({"type": "com.example.big", "id": "big-2", "data": {"n": 1}}),
    )
    .await;
    ended_runs(&server, &pb, "light", 2, Duration::from_secs(10)).await;
    settle().await;
    assert!(runs_of(&server, &pb, "hungry").await.is_empty());
    assert_eq!(events_of(&server, &pb, "filter_disabled").await.len(), 1);
    assert!(events_of(&server, &pb, "filter_failed").await.is_empty());
    // A new version with a cheaper filter is evaluated again.
    update(
        &server,
        &pb,
        "hungry",
        &workflow(&hungry.replace(r#""x".repeat(2 ** 27).length"#, "2")),
    )
    .await;
    publish(
        &server,
        &pb,
        json!({"type": "com.example.big", "id": "big-3", "data": {"n": 1}}),
    )
    .await;
    let runs = ended_runs(&server, &pb, "hungry", 1, Duration::from_secs(10)).await;
    assert_eq!(runs.len(), 1, "{runs:#?}");
}

#[tokio::test]
async fn a_changed_filter_leaves_the_events_recorded_before_the_save_to_the_earlier_filter() {
    let dir = tempfile::tempdir().expect("a directory");
    let store = test_store(dir.path()).await;
    // This server sweeps only when woken: events appended straight to the store wait unread.
    let limits = RunLimits {
        sweep_ms: 600_000,
        ..RunLimits::default()
    };
    let server_dir = tempfile::tempdir().expect("a directory");
    let server = TestServer::start_limited(
        store.clone(),
        Vec::new(),
        Models::none(),
        limits,
        server_dir,
    )
    .await;
    let pb = server.playbook().await;
    let on = |event_type: &str| {
        format!(
            "schedule:\n  on:\n    one:\n      with: {{ type: {event_type} }}\ndo:\n  - take:\n      set: {{ id: '${{ $data[0].id }}' }}\n"
        )
    };
    server
        .save_definition(&pb, "workflow", "watch", &workflow(&on("com.example.a")))
        .await;
    settle().await;
    let playbook = auto_store::PlaybookRef::new("acme", "main");
    store
        .append_events(
            &playbook,
            vec![
                auto_store::NewEvent::new("a-1", "com.example.a", "/test"),
                auto_store::NewEvent::new("b-1", "com.example.b", "/test"),
            ],
        )
        .await
        .expect("appended");
    // The save wakes the sweep: a-1 and b-1 were recorded while version 1's filter applied.
    update(&server, &pb, "watch", &workflow(&on("com.example.b"))).await;
    publish(&server, &pb, json!({"type": "com.example.a", "id": "a-2"})).await;
    publish(&server, &pb, json!({"type": "com.example.b", "id": "b-2"})).await;
    ended_runs(&server, &pb, "watch", 2, Duration::from_secs(10)).await;
    settle().await;
    let runs = in_full(&server, &pb, &runs_of(&server, &pb, "watch").await).await;
    let mut started: Vec<(String, i64)> = runs
        .iter()
        .map(|r| {
            (
                r["output"]["id"].as_str().unwrap_or("?").to_owned(),
                r["definition_version"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    started.sort();
    assert_eq!(
        started,
        vec![("a-1".to_owned(), 1), ("b-2".to_owned(), 2)],
        "{runs:#?}"
    );
}

#[tokio::test]
async fn an_event_trigger_starts_sixty_runs_a_minute_keeps_a_thousand_waiting_and_refuses_more() {
    let server = server().await;
    let pb = server.playbook().await;
    server.save_definition(&pb, "workflow", "burst", &workflow("schedule:\n  on:\n    one:\n      with: { type: com.example.tick }\ndo:\n  - a:\n      set: { a: 1 }\n"))
    .await;
    for n in 0..1_061 {
        publish(
            &server,
            &pb,
            json!({"type": "com.example.tick", "id": format!("t-{n}")}),
        )
        .await;
    }
    ended_runs(&server, &pb, "burst", 60, Duration::from_secs(30)).await;
    let refused = wait_for(Duration::from_secs(10), "a refusal recorded", || async {
        let refused = events_of(&server, &pb, "reaction_refused").await;
        (!refused.is_empty()).then_some(refused)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The first minute: 60 runs, 1,000 waiting, one refused.
    assert_eq!(runs_of(&server, &pb, "burst").await.len(), 60);
    assert_eq!(refused.len(), 1, "{refused:#?}");
    assert_eq!(refused[0]["data"]["count"], 1);
    assert_eq!(
        refused[0]["data"]["reason"],
        "The event trigger did not start a run: 1000 runs already wait for a later minute."
    );
}

#[tokio::test]
async fn a_playbook_holds_1024_workflows_with_triggers_and_refuses_one_more() {
    let server = server().await;
    let pb = server.playbook().await;
    let triggered = "schedule:\n  on:\n    one:\n      with: { type: com.example.never }\ndo:\n  - a:\n      set: { a: 1 }\n";
    for n in 0..1_024 {
        server
            .save_definition(&pb, "workflow", &format!("w{n}"), &workflow(triggered))
            .await;
    }
    let refused = server
        .post_definition(&pb, "workflow", "w1024", &workflow(triggered))
        .await;
    let problem = refused.assert_problem(409, "conflict");
    assert_eq!(
        problem["title"],
        "The playbook has too many workflows with triggers"
    );
    // Without triggers it saves; and a workflow that keeps its triggers updates.
    server
        .save_definition(
            &pb,
            "workflow",
            "plain",
            &workflow("do:\n  - a:\n      set: { a: 1 }\n"),
        )
        .await;
    update(
        &server,
        &pb,
        "w0",
        &workflow(&triggered.replace("a: 1", "a: 2")),
    )
    .await;
    // One stops: the place is free again.
    update(
        &server,
        &pb,
        "w1",
        &workflow("do:\n  - a:\n      set: { a: 1 }\n"),
    )
    .await;
    server
        .save_definition(&pb, "workflow", "w1024", &workflow(triggered))
        .await;
}

#[tokio::test]
async fn a_listen_task_with_a_written_type_hears_the_playbooks_events_while_it_listens() {
    let server = server().await;
    let pb = server.playbook().await;
    let listen = r#"do:
  - hear:
      listen:
        to:
          one:
            with: { type: com.example.approved, data: '${ $data.brief === "b-7" }' }
  - done:
      set:
        approval: ${ $data[0] }
"#;
    server
        .save_definition(&pb, "workflow", "approval", &workflow(listen))
        .await;
    // Recorded before the task listened: not offered to it.
    publish(
        &server,
        &pb,
        json!({"type": "com.example.approved", "id": "early", "data": {"brief": "b-7", "by": "early"}}),
    )
    .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/workflow/approval/runs"),
            json!({"input": {}, "run_id": "a-1"}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    settle().await;
    assert_eq!(run(&server, &pb, "a-1").await["status"], "started");
    publish(
        &server,
        &pb,
        json!({"type": "com.example.approved", "id": "other", "data": {"brief": "b-8"}}),
    )
    .await;
    publish(
        &server,
        &pb,
        json!({"type": "com.example.approved", "id": "yes", "data": {"brief": "b-7", "by": "ana"}}),
    )
    .await;
    let ended = server.ended(&pb, "a-1", Duration::from_secs(10)).await;
    assert_eq!(ended["status"], "succeeded", "{ended:#}");
    assert_eq!(
        ended["output"],
        json!({"approval": {"brief": "b-7", "by": "ana"}})
    );
}

#[tokio::test]
async fn only_the_latest_missed_time_runs_after_the_runtime_was_stopped() {
    let dir = tempfile::tempdir().expect("a directory");
    let store = test_store(dir.path()).await;
    let mut first = server_on(store.clone(), 0).await;
    let pb = first.playbook().await;
    let every =
        "schedule:\n  every: PT1M\ndo:\n  - a:\n      set:\n        due: ${ $data.schedule.due }\n";
    let definition = first
        .save_definition(&pb, "workflow", "tick", &workflow(every))
        .await;
    assert_eq!(
        definition["triggers"],
        json!([{"kind": "every", "reference": "/schedule/every", "milliseconds": 60000}])
    );
    settle().await;
    assert!(runs_of(&first, &pb, "tick").await.is_empty());
    first.handle.take().expect("a server").stop().await.unwrap();
    // Five and a half minutes pass while no server runs: five times came due.
    let second = server_on(store.clone(), 330_000).await;
    let runs = ended_runs(&second, &pb, "tick", 1, Duration::from_secs(10)).await;
    let runs = in_full(&second, &pb, &runs).await;
    settle().await;
    let runs_now = runs_of(&second, &pb, "tick").await;
    assert_eq!(runs_now.len(), 1, "{runs_now:#?}");
    let saved_at =
        chrono::DateTime::parse_from_rfc3339(definition["updated_at"].as_str().unwrap()).unwrap();
    let due =
        chrono::DateTime::parse_from_rfc3339(runs[0]["output"]["due"].as_str().unwrap()).unwrap();
    let after = (due - saved_at).num_milliseconds();
    assert!(
        (299_000..=301_000).contains(&after),
        "the due time {due} is {after} ms after the save"
    );
    let started = run(&second, &pb, runs[0]["run_id"].as_str().unwrap()).await;
    assert_eq!(
        started["input"],
        json!({"schedule": {"due": runs[0]["output"]["due"]}})
    );
    assert_eq!(started["started_by"], "playbook:main");
}

#[tokio::test]
async fn a_schedule_has_one_run_at_a_time_and_skips_a_time_due_while_it_runs() {
    let dir = tempfile::tempdir().expect("a directory");
    let store = test_store(dir.path()).await;
    let mut first = server_on(store.clone(), 0).await;
    let pb = first.playbook().await;
    // Each run waits for an event that never comes.
    let slow = "schedule:\n  every: PT1M\ndo:\n  - hold:\n      listen:\n        to:\n          one:\n            with: { type: com.example.never }\n";
    first
        .save_definition(&pb, "workflow", "slow", &workflow(slow))
        .await;
    settle().await;
    first.handle.take().expect("a server").stop().await.unwrap();
    let mut second = server_on(store.clone(), 70_000).await;
    wait_for(Duration::from_secs(10), "a run started", || async {
        (!runs_of(&second, &pb, "slow").await.is_empty()).then_some(())
    })
    .await;
    second
        .handle
        .take()
        .expect("a server")
        .stop()
        .await
        .unwrap();
    // The next time comes while the first run still waits: skipped, and recorded.
    let third = server_on(store.clone(), 130_000).await;
    let refused = wait_for(Duration::from_secs(10), "a refusal recorded", || async {
        let refused = events_of(&third, &pb, "reaction_refused").await;
        (!refused.is_empty()).then_some(refused)
    })
    .await;
    let runs = runs_of(&third, &pb, "slow").await;
    assert_eq!(runs.len(), 1, "{runs:#?}");
    let reason = refused[0]["data"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("The every trigger did not start a run: the time ")
            && reason.ends_with(&format!(
                "came while its run {} still ran.",
                runs[0]["run_id"].as_str().unwrap()
            )),
        "{reason}"
    );
}

#[tokio::test]
async fn a_cron_and_an_every_start_runs_on_the_real_clock() {
    let server = server().await;
    let pb = server.playbook().await;
    let both = "schedule:\n  cron: '* * * * *'\n  every: PT1M\ndo:\n  - a:\n      set:\n        due: ${ $data.schedule.due }\n";
    server
        .save_definition(&pb, "workflow", "clock", &workflow(both))
        .await;
    let runs = ended_runs(&server, &pb, "clock", 2, Duration::from_secs(75)).await;
    let runs = in_full(&server, &pb, &runs).await;
    let mut kinds: Vec<String> = Vec::new();
    for listed in &runs[..2] {
        let run_id = listed["run_id"].as_str().unwrap();
        let facts = server
            .get(&format!("{pb}/events?run_id={run_id}&type=run_started"))
            .await;
        let fact = &facts.body["events"][0];
        let kind = fact["triggerkind"].as_str().unwrap().to_owned();
        let due = listed["output"]["due"].as_str().unwrap();
        let words = format!("The workflow clock was started by its {kind} schedule, due at {due}.");
        assert_eq!(fact["data"]["message"], words.as_str(), "{fact:#}");
        kinds.push(kind);
        let due = listed["output"]["due"].as_str().unwrap();
        assert!(due.ends_with("Z"), "{due}");
    }
    kinds.sort();
    assert_eq!(kinds, vec!["cron", "every"]);
    // A cron's time is a whole minute.
    let cron_run = runs
        .iter()
        .find(|r| r["run_id"].as_str().unwrap().contains(".cron."))
        .expect("a cron run");
    assert!(
        cron_run["output"]["due"]
            .as_str()
            .unwrap()
            .ends_with(":00.000Z"),
        "{cron_run:#}"
    );
}

#[tokio::test]
async fn two_servers_on_one_store_start_each_matched_event_and_due_time_once() {
    let dir = tempfile::tempdir().expect("a directory");
    let store = test_store(dir.path()).await;
    // Both read a clock 65 s on: the every's first time is due as soon as it is saved.
    let a = server_on(store.clone(), 65_000).await;
    let b = server_on(store.clone(), 65_000).await;
    let pb = a.playbook().await;
    let both = "schedule:\n  on:\n    one:\n      with: { type: com.example.tick }\n  every: PT1M\ndo:\n  - a:\n      set: { a: 1 }\n";
    a.save_definition(&pb, "workflow", "both", &workflow(both))
        .await;
    for n in 0..30 {
        let server = if n % 2 == 0 { &a } else { &b };
        publish(
            server,
            &pb,
            json!({"type": "com.example.tick", "id": format!("t-{n}")}),
        )
        .await;
    }
    ended_runs(&a, &pb, "both", 31, Duration::from_secs(20)).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    let runs = runs_of(&b, &pb, "both").await;
    assert_eq!(runs.len(), 31, "{runs:#?}");
    let every = runs
        .iter()
        .filter(|r| r["run_id"].as_str().unwrap().contains(".every."))
        .count();
    assert_eq!(every, 1, "{runs:#?}");
    let started = events_of(&a, &pb, "run_started").await;
    assert_eq!(started.len(), 31, "each run started once");
}

#[tokio::test]
async fn a_filter_of_the_playbooks_history_is_refused_and_its_facts_are_heard() {
    let server = server().await;
    let pb = server.playbook().await;
    let history = |kind: &str| {
        format!(
            "schedule:\n  on:\n    any:\n      - with: {{ type: {kind} }}\n      - with: {{ type: run_succeeded }}\ndo:\n  - hear:\n      listen:\n        to:\n          one:\n            with: {{ type: {kind} }}\n"
        )
    };
    for kind in [
        "step_started",
        "call_ended",
        "request_opened",
        "model_call_started",
        "tool_call_answered",
        "reaction_refused",
        "filter_failed",
    ] {
        let reply = server
            .post_definition(&pb, "workflow", "history", &workflow(&history(kind)))
            .await;
        reply.assert_problem(422, "invalid_input");
        let words = format!(
            "The type {kind} is of the playbook's history, which no filter hears: a filter hears the playbook's events and its facts about runs and definitions."
        );
        let messages = reply.issue_messages();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(
            messages[0].ends_with(&format!("at /schedule/on/any/0/with/type: {words}")),
            "{messages:?}"
        );
        assert!(
            messages[1].ends_with(&format!("at /do/0/hear/listen/to/one/with/type: {words}")),
            "{messages:?}"
        );
    }
    // A fact of the playbook is heard: a run's success starts the workflow.
    let fact = "schedule:\n  on:\n    one:\n      with: { type: run_succeeded, subject: workflow/quick }\ndo:\n  - take:\n      set:\n        seen: ${ $data[0].subject }\n";
    server
        .save_definition(&pb, "workflow", "on-success", &workflow(fact))
        .await;
    server
        .save_definition(
            &pb,
            "workflow",
            "quick",
            &workflow("do:\n  - one:\n      set: { n: 1 }\n"),
        )
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/workflow/quick/runs"),
            json!({"input": {}}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    let runs = ended_runs(&server, &pb, "on-success", 1, Duration::from_secs(10)).await;
    let run_id = runs[0]["run_id"].as_str().unwrap();
    let run = server.get(&format!("{pb}/runs/{run_id}")).await.body;
    assert_eq!(run["output"], json!({"seen": "workflow/quick"}), "{run:#}");
}
