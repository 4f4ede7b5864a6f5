//! Events and workflow runs through HTTP: `send_run_event` to a run whose listen task takes
//! the event, an event kept until the task listens and across a restart, the refusals, and an
//! emit task's event in the playbook's events.

mod common;

use std::time::Duration;

use std::sync::Arc;

use auto_server::config::{RunLimits, WORK_LEASE_MS_MIN};
use auto_server::reasoning_runs::Models;
use common::TestServer;
use common::failing_store::FailingStore;
use serde_json::{Value, json};

const LISTEN: &str = include_str!("data/keep-an-approval.yaml");

const WAIT_THEN_LISTEN: &str = include_str!("data/wait-then-hear-an-approval.yaml");

const EMIT: &str = include_str!("data/emit-an-approval.yaml");

async fn start(server: &TestServer, pb: &str, name: &str, run_id: &str) {
    let reply = server
        .post(
            &format!("{pb}/definitions/workflow/{name}/runs"),
            json!({"input": {"brief": "b-7"}, "run_id": run_id}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    assert_eq!(reply.body["status"], "started");
}

async fn send(server: &TestServer, pb: &str, run_id: &str, event: Value) -> common::Reply {
    server
        .post(&format!("{pb}/runs/{run_id}/events"), event)
        .await
}

#[tokio::test]
async fn a_listening_run_takes_the_event_sent_to_it_and_ends_with_its_data() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "approval", LISTEN)
        .await;
    start(&server, &pb, "approval", "l-1").await;
    let other = send(
        &server,
        &pb,
        "l-1",
        json!({"type": "com.example.other", "id": "o"}),
    )
    .await;
    assert_eq!(other.status, 202, "{:#}", other.body);
    assert_eq!(
        other.body,
        json!({"run_id": "l-1", "id": "o", "duplicate": false})
    );
    // The same id again is ignored, and still accepted.
    let again = send(
        &server,
        &pb,
        "l-1",
        json!({"type": "com.example.approved", "id": "o"}),
    )
    .await;
    assert_eq!(again.status, 202, "{:#}", again.body);
    assert_eq!(again.body["duplicate"], true);
    let approved = send(
        &server,
        &pb,
        "l-1",
        json!({"type": "com.example.approved", "id": "a", "data": {"verdict": "approve"}}),
    )
    .await;
    assert_eq!(approved.status, 202, "{:#}", approved.body);
    let run = server.ended(&pb, "l-1", Duration::from_secs(10)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!({"approval": {"verdict": "approve"}}));
    // The run's history tells what it received and took.
    let events = server.get(&format!("{pb}/events?run_id=l-1")).await;
    let types: Vec<&str> = events.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types.iter().filter(|t| **t == "event_received").count(), 2);
    assert!(types.contains(&"events_taken"), "{types:?}");
    // A run that ended takes no more events.
    let late = send(&server, &pb, "l-1", json!({"type": "com.example.approved"})).await;
    let problem = late.assert_problem(404, "not_found");
    assert_eq!(
        problem["detail"],
        "The run l-1 has ended; it takes no more events."
    );
    // A retry of an event it received is answered as a retry, though it has ended.
    let retry = send(
        &server,
        &pb,
        "l-1",
        json!({"type": "com.example.approved", "id": "a", "data": {"verdict": "approve"}}),
    )
    .await;
    assert_eq!(retry.status, 202, "{:#}", retry.body);
    assert_eq!(retry.body["duplicate"], true);
}

#[tokio::test]
async fn an_event_sent_before_the_task_listens_is_kept_for_it() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "later", WAIT_THEN_LISTEN)
        .await;
    start(&server, &pb, "later", "k-1").await;
    let early = send(
        &server,
        &pb,
        "k-1",
        json!({"type": "com.example.approved", "data": 1}),
    )
    .await;
    assert_eq!(early.status, 202, "{:#}", early.body);
    let second = send(
        &server,
        &pb,
        "k-1",
        json!({"type": "com.example.approved", "data": 2}),
    )
    .await;
    assert_eq!(second.status, 202, "{:#}", second.body);
    let run = server.ended(&pb, "k-1", Duration::from_secs(10)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!([1]));
}

#[tokio::test]
async fn an_event_sent_before_a_restart_is_taken_by_the_next_server() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::test_store(dir.path()).await;
    let models = auto_server::reasoning_runs::Models::none;
    let first = TestServer::start_on(
        store.clone(),
        Vec::new(),
        models(),
        tempfile::tempdir().unwrap(),
    )
    .await;
    let pb = first.playbook().await;
    first
        .save_definition(&pb, "workflow", "later", WAIT_THEN_LISTEN)
        .await;
    start(&first, &pb, "later", "r-1").await;
    let sent = send(
        &first,
        &pb,
        "r-1",
        json!({"type": "com.example.approved", "data": "kept"}),
    )
    .await;
    assert_eq!(sent.status, 202, "{:#}", sent.body);
    first.handle.unwrap().stop().await.unwrap();
    let second = TestServer::start_on(store, Vec::new(), models(), dir).await;
    let run = second.ended(&pb, "r-1", Duration::from_secs(10)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!(["kept"]));
}

#[tokio::test]
async fn events_to_no_run_to_a_run_of_a_function_or_malformed_are_refused() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let none = send(
        &server,
        &pb,
        "nobody",
        json!({"type": "com.example.approved"}),
    )
    .await;
    let problem = none.assert_problem(404, "not_found");
    assert_eq!(problem["detail"], "The playbook main has no run nobody.");
    server
        .save_definition(&pb, "workflow", "approval", LISTEN)
        .await;
    start(&server, &pb, "approval", "m-1").await;
    let untyped = send(&server, &pb, "m-1", json!({"data": 1})).await;
    untyped.assert_problem(422, "invalid_input");
    assert_eq!(
        untyped.issue_messages(),
        ["The event has no type: it is required."]
    );
    let long = send(
        &server,
        &pb,
        "m-1",
        json!({"type": "t", "id": "i".repeat(257)}),
    )
    .await;
    long.assert_problem(422, "invalid_input");
    assert_eq!(
        long.issue_messages(),
        ["The event's id is longer than 256 characters."]
    );
    let at = send(
        &server,
        &pb,
        "m-1",
        json!({"type": "t", "id": "i".repeat(256)}),
    )
    .await;
    assert_eq!(at.status, 202, "{:#}", at.body);
    let kept = send(&server, &pb, "m-1", json!({"type": "run_started"})).await;
    kept.assert_problem(422, "invalid_input");
    let cancel = server
        .post(&format!("{pb}/runs/m-1/cancel"), json!({}))
        .await;
    assert_eq!(cancel.status, 200, "{:#}", cancel.body);
}

#[tokio::test]
async fn an_emitted_event_is_one_of_the_playbooks_events() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "announce", EMIT)
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/workflow/announce/runs"),
            json!({"input": {"brief": "b-7"}, "run_id": "e-1"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["output"], json!({"brief": "b-7"}));
    let listed = server
        .get(&format!("{pb}/events?type=com.example.brief.approved"))
        .await;
    let found = listed.body["events"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{:#}", listed.body);
    let emitted = &found[0];
    assert_eq!(emitted["source"], "https://example.com/campaigns");
    assert_eq!(emitted["data"], json!({"brief": "b-7"}));
    assert_eq!(emitted["run_id"], "e-1");
    assert_eq!(emitted["caller"], "local");
    assert_eq!(emitted["depth"], 1);
    let id = emitted["id"].as_str().unwrap();
    assert!(id.starts_with("e-1.emit."), "{id}");
    let published = server
        .get(&format!("{pb}/events?type=event_published"))
        .await;
    let published = &published.body["events"][0];
    assert_eq!(published["run_id"], "e-1");
    assert_eq!(published["subject"], "workflow/announce");
    assert_eq!(published["data"]["event"]["id"], json!(id));
    let full = server.get(&format!("{pb}/events/{id}")).await;
    assert_eq!(full.status, 200, "{:#}", full.body);
}

/// A run that listens for 50 events in a loop, one at a time, and ends with the data of each
/// in the order it took them.
const LISTEN_LOOP: &str = include_str!("data/count-ticks.yaml");

/// How many events the ordering tests send, and how many senders send them at once.
const BURST: usize = 50;
const SENDERS: usize = 5;

/// Starts the listening loop under `run_id` with an empty list as its input.
async fn start_loop(server: &TestServer, pb: &str, run_id: &str) {
    let reply = server
        .post(
            &format!("{pb}/definitions/workflow/ticks/runs"),
            json!({"input": [], "run_id": run_id}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
}

/// POSTs each sender's bodies to `path` one after the other, each acknowledged before the
/// next, with all senders at once; returns each sender's statuses.
async fn post_at_once(server: &TestServer, path: &str, senders: Vec<Vec<Value>>) -> Vec<u16> {
    let mut tasks = tokio::task::JoinSet::new();
    for bodies in senders {
        let (http, url) = (server.http.clone(), format!("{}{path}", server.url));
        tasks.spawn(async move {
            let mut statuses = Vec::new();
            for body in bodies {
                let reply = http.post(&url).json(&body).send().await.expect("an answer");
                statuses.push(reply.status().as_u16());
            }
            statuses
        });
    }
    tasks.join_all().await.into_iter().flatten().collect()
}

/// Sends the numbers 0 to BURST - 1 to the run as ticks, each acknowledged before the next is
/// sent, to each of `servers` in turn.
async fn send_in_turn(servers: &[&TestServer], pb: &str, run_id: &str) {
    for n in 0..BURST {
        let server = servers[n % servers.len()];
        let tick = json!({"type": "com.example.tick", "data": n});
        let reply = send(server, pb, run_id, tick).await;
        assert_eq!(reply.status, 202, "{:#}", reply.body);
    }
}

/// The data of the events a run took, in the order it took them: its output. The run ends
/// well within the 30 s lease of a work item, so no event waited for one.
async fn taken_order(server: &TestServer, pb: &str, run_id: &str) -> Vec<Value> {
    let run = server.ended(pb, run_id, Duration::from_secs(20)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    run["output"].as_array().expect("a list").clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_sent_one_after_another_are_taken_in_the_order_received() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "ticks", LISTEN_LOOP)
        .await;
    start_loop(&server, &pb, "o-1").await;
    send_in_turn(&[&server], &pb, "o-1").await;
    let expected: Vec<Value> = (0..BURST).map(|n| json!(n)).collect();
    assert_eq!(taken_order(&server, &pb, "o-1").await, expected);
}

/// An input the server could not apply holds its run back: the inputs received after it,
/// though the server holds them claimed, wait for it, and the run goes on from it once the
/// hold ends (twice here, the second hold longer than the first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_that_could_not_be_applied_is_not_passed_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let failing = FailingStore::new(common::test_store(dir.path()).await);
    let store: Arc<dyn auto_store::Store> = failing.clone();
    let limits = RunLimits {
        work_lease_ms: WORK_LEASE_MS_MIN,
        ..RunLimits::default()
    };
    let server = TestServer::start_limited(store, Vec::new(), Models::none(), limits, dir).await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "ticks", LISTEN_LOOP)
        .await;
    start_loop(&server, &pb, "o-5").await;
    failing.fail_state_reads_of("o-5", 2);
    send_in_turn(&[&server], &pb, "o-5").await;
    let expected: Vec<Value> = (0..BURST).map(|n| json!(n)).collect();
    assert_eq!(taken_order(&server, &pb, "o-5").await, expected);
    assert_eq!(failing.state_faults_left("o-5"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_sent_at_once_are_taken_in_the_order_received() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "ticks", LISTEN_LOOP)
        .await;
    start_loop(&server, &pb, "o-2").await;
    // Five senders at once, each sending its ten events in order: whatever the interleaving,
    // each sender's events are received, and so taken, in the order it sent them.
    let senders = (0..SENDERS)
        .map(|s| {
            (0..BURST / SENDERS)
                .map(|n| json!({"type": "com.example.tick", "data": [s, n]}))
                .collect()
        })
        .collect();
    let statuses = post_at_once(&server, &format!("{pb}/runs/o-2/events"), senders).await;
    assert!(statuses.iter().all(|s| *s == 202), "{statuses:?}");
    let taken = taken_order(&server, &pb, "o-2").await;
    assert_eq!(taken.len(), BURST, "{taken:?}");
    for s in 0..SENDERS {
        let of_sender: Vec<&Value> = taken.iter().filter(|d| d[0] == s).map(|d| &d[1]).collect();
        let expected: Vec<Value> = (0..BURST / SENDERS).map(|n| json!(n)).collect();
        assert_eq!(of_sender, expected.iter().collect::<Vec<_>>(), "{taken:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_published_at_once_are_heard_in_the_order_of_the_log() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "ticks", LISTEN_LOOP)
        .await;
    // The run listens once its start is answered.
    start_loop(&server, &pb, "o-3").await;
    let senders = (0..SENDERS)
        .map(|s| {
            (0..BURST / SENDERS)
                .map(|n| json!({"type": "com.example.tick", "data": s * 100 + n}))
                .collect()
        })
        .collect();
    let statuses = post_at_once(&server, &format!("{pb}/events"), senders).await;
    assert!(statuses.iter().all(|s| *s == 201), "{statuses:?}");
    let logged: Vec<Value> = server
        .all_events(&pb)
        .await
        .into_iter()
        .filter(|e| e["type"] == "com.example.tick")
        .map(|e| e["data"].clone())
        .collect();
    assert_eq!(logged.len(), BURST);
    assert_eq!(taken_order(&server, &pb, "o-3").await, logged);
}

/// Two servers on one store, as two `auto serve` on one database.
async fn two_servers() -> (TestServer, TestServer) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = common::test_store(dir.path()).await;
    let none = auto_server::reasoning_runs::Models::none;
    let a = TestServer::start_on(store.clone(), Vec::new(), none(), dir).await;
    let other = tempfile::tempdir().expect("a temporary directory");
    let b = TestServer::start_on(store, Vec::new(), none(), other).await;
    (a, b)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_sent_to_two_servers_are_taken_in_the_order_received() {
    let (a, b) = two_servers().await;
    let pb = a.playbook().await;
    a.save_definition(&pb, "workflow", "ticks", LISTEN_LOOP)
        .await;
    start_loop(&a, &pb, "o-4").await;
    // To one server and then the other: the run's inputs are claimed by either, and applied
    // by one at a time in the order received.
    send_in_turn(&[&a, &b], &pb, "o-4").await;
    let expected: Vec<Value> = (0..BURST).map(|n| json!(n)).collect();
    assert_eq!(taken_order(&b, &pb, "o-4").await, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_published_at_once_on_two_servers_are_heard_in_the_order_of_the_log() {
    let (a, b) = two_servers().await;
    let pb = a.playbook().await;
    a.save_definition(&pb, "workflow", "ticks", LISTEN_LOOP)
        .await;
    start_loop(&a, &pb, "o-5").await;
    // Five senders on each server at once, each publishing five events in order.
    let senders = |base: usize| {
        (0..SENDERS)
            .map(|s| {
                (0..BURST / SENDERS / 2)
                    .map(|n| json!({"type": "com.example.tick", "data": base + s * 100 + n}))
                    .collect()
            })
            .collect::<Vec<_>>()
    };
    let path = format!("{pb}/events");
    let (on_a, on_b) = tokio::join!(
        post_at_once(&a, &path, senders(0)),
        post_at_once(&b, &path, senders(10_000)),
    );
    assert!(
        on_a.iter().chain(&on_b).all(|s| *s == 201),
        "{on_a:?} {on_b:?}"
    );
    let logged: Vec<Value> = a
        .all_events(&pb)
        .await
        .into_iter()
        .filter(|e| e["type"] == "com.example.tick")
        .map(|e| e["data"].clone())
        .collect();
    assert_eq!(logged.len(), BURST);
    assert_eq!(taken_order(&b, &pb, "o-5").await, logged);
}
