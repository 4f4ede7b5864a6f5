//! The data's lifecycle end to end: purging ended runs, deleting a playbook and an org, and
//! the retention sweep, over HTTP on the suite's store (SQLite, or PostgreSQL with
//! `AUTO_TEST_STORE=postgres`).

mod common;

use std::sync::Arc;
use std::time::Duration;

use auto_server::auth::{KeyEntry, Role, new_key};
use common::{TestServer, test_store, workflow};
use serde_json::{Value, json};

const MONTH_WINDOW: &str = include_str!("data/month-window.md");
const PB: &str = "/v1/orgs/acme/playbooks/main";

/// A workflow that waits an hour: it stays started, with a timer in the work queue.
fn waits_an_hour() -> String {
    workflow("do:\n  - pause:\n      wait: PT1H\n  - done:\n      set:\n        waited: true\n")
}

async fn server_on_store(config: &str) -> (TestServer, Arc<dyn auto_store::Store>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = test_store(dir.path()).await;
    let server = TestServer::start_with_config_on(store.clone(), config, dir).await;
    (server, store)
}

async fn month_runs(server: &TestServer, ids: &[&str]) {
    for id in ids {
        let reply = server
            .post(
                &format!("{PB}/definitions/computation/month-window/runs"),
                json!({"input": {"month": "2026-02"}, "run_id": id}),
            )
            .await;
        assert_eq!(reply.status, 200, "{:#}", reply.body);
    }
}

fn seqs(events: &[Value]) -> Vec<i64> {
    events.iter().map(|e| e["seq"].as_i64().unwrap()).collect()
}

fn now_plus(ms: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::milliseconds(ms))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// A purge removes the runs that ended before the time with their events, answers what it
/// removed, and leaves holes in the log that listings and cursors read across; the next
/// event is numbered after the highest ever given. Bad input is refused with a problem.
#[tokio::test]
async fn a_purge_removes_ended_runs_and_the_log_reads_across_its_holes() {
    let (server, _store) = server_on_store("").await;
    server.playbook().await;
    server
        .save_definition(PB, "computation", "month-window", MONTH_WINDOW)
        .await;
    month_runs(&server, &["r1", "r2", "r3"]).await;
    let before = server.all_events(PB).await;
    let last_before = *seqs(&before).last().unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;

    let purged = server
        .post(
            &format!("{PB}/purge"),
            json!({"ended_before": now_plus(-5)}),
        )
        .await;
    assert_eq!(purged.status, 200, "{:#}", purged.body);
    assert_eq!(purged.body["runs"], 3);
    let run_events = before.iter().filter(|e| e["run_id"].is_string()).count();
    assert_eq!(purged.body["events"], run_events as i64);
    server
        .get(&format!("{PB}/runs/r1"))
        .await
        .assert_problem(404, "not_found");
    let runs = server.get(&format!("{PB}/runs")).await;
    assert_eq!(runs.body["runs"], json!([]));

    // What stays is the playbook's own log (its definition_created), in order.
    let after = server.all_events(PB).await;
    assert_eq!(after.len(), before.len() - run_events);
    month_runs(&server, &["r4"]).await;
    let read = server.all_events(PB).await;
    assert!(seqs(&read).windows(2).all(|w| w[0] < w[1]));
    assert!(
        seqs(&read)[after.len()] > last_before,
        "a seq is never given twice"
    );
    // A cursor inside the hole reads on from the next event.
    let from_hole = server
        .events(PB, &format!("after={}", last_before - 1))
        .await;
    assert_eq!(
        seqs(&from_hole).first().copied(),
        Some(last_before + 1),
        "{from_hole:#?}"
    );

    // Nothing ended before then: nothing is removed.
    let none = server
        .post(
            &format!("{PB}/purge"),
            json!({"ended_before": "2000-01-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(
        (none.body["runs"].clone(), none.body["events"].clone()),
        (json!(0), json!(0))
    );

    let bad = server
        .post(&format!("{PB}/purge"), json!({"ended_before": "yesterday"}))
        .await;
    bad.assert_problem(422, "invalid_input");
    assert!(bad.issue_messages()[0].contains("not an RFC 3339 time"));
    let future = server
        .post(
            &format!("{PB}/purge"),
            json!({"ended_before": now_plus(60_000)}),
        )
        .await;
    future.assert_problem(422, "invalid_input");
    assert!(future.issue_messages()[0].contains("is in the future"));
    server
        .post(&format!("{PB}/purge"), json!({"before": now_plus(-5)}))
        .await
        .assert_problem(422, "invalid_input");
    server
        .post(
            "/v1/orgs/acme/playbooks/nope/purge",
            json!({"ended_before": now_plus(-5)}),
        )
        .await
        .assert_problem(404, "not_found");
    assert_eq!(server.get("/healthz").await.status, 200);
}

/// Deleting a playbook with a run waiting on a timer is refused without `force`; with it,
/// the run, its timer and the playbook's triggers are gone from the work queue, the server
/// stays healthy, and the id is created again empty.
#[tokio::test]
async fn deleting_a_playbook_removes_its_runs_and_work_and_frees_its_id() {
    let (server, store) = server_on_store("").await;
    server.playbook().await;
    server
        .save_definition(PB, "workflow", "flow", &waits_an_hour())
        .await;
    let started = server
        .start_run(PB, "workflow", "flow", json!({"run_id": "waits"}))
        .await;
    assert!(started.status.as_u16() < 300, "{:#}", started.body);
    common::wait_for(Duration::from_secs(10), "the timer", || async {
        (store.work_backlog().await.unwrap().items > 0).then_some(())
    })
    .await;

    let refused = server.delete(PB).await;
    refused.assert_problem(409, "conflict");
    assert!(
        refused.body["detail"]
            .as_str()
            .unwrap()
            .contains("?force=true"),
        "{:#}",
        refused.body
    );
    server
        .delete(&format!("{PB}?force=yes"))
        .await
        .assert_problem(422, "invalid_input");
    assert_eq!(server.get(PB).await.status, 200, "nothing changed");

    let deleted = server.delete(&format!("{PB}?force=true")).await;
    assert_eq!(deleted.status, 200, "{:#}", deleted.body);
    assert_eq!(deleted.body["playbooks"], 1);
    assert_eq!(deleted.body["definitions"], 1);
    assert_eq!(deleted.body["runs"], 1);
    assert_eq!(deleted.body["started_runs"], 1);
    assert_eq!(
        store.work_backlog().await.unwrap().items,
        0,
        "no work is left"
    );
    assert!(store.list_triggers().await.unwrap().is_empty());
    server.get(PB).await.assert_problem(404, "not_found");
    server.delete(PB).await.assert_problem(404, "not_found");
    assert_eq!(server.get("/healthz").await.status, 200);

    // The id starts again empty, and a definition of the same name is version 1 of its own.
    let again = server
        .post("/v1/orgs/acme/playbooks", json!({"id": "main"}))
        .await;
    assert_eq!(again.status, 201, "{:#}", again.body);
    assert!(server.all_events(PB).await.is_empty());
    server
        .save_definition(PB, "computation", "month-window", MONTH_WINDOW)
        .await;
    month_runs(&server, &["waits"]).await;
    let run = server.get(&format!("{PB}/runs/waits")).await;
    assert_eq!(run.body["status"], "succeeded", "{:#}", run.body);
}

/// Deleting an org takes every playbook in it; only an admin of the org may delete or purge.
#[tokio::test]
async fn only_an_admin_deletes_an_org_and_purges() {
    let (admin_key, admin_hash) = new_key();
    let (runner_key, runner_hash) = new_key();
    let server = TestServer::start_with_keys(vec![
        KeyEntry::new("boss", "acme", Role::Admin, &admin_hash).unwrap(),
        KeyEntry::new("bot", "acme", Role::Runner, &runner_hash).unwrap(),
    ])
    .await;
    let admin = server.with_key(&admin_key);
    let runner = server.with_key(&runner_key);
    admin.playbook().await;
    let other = admin
        .post("/v1/orgs/acme/playbooks", json!({"id": "other"}))
        .await;
    assert_eq!(other.status, 201);
    runner
        .post(
            &format!("{PB}/purge"),
            json!({"ended_before": now_plus(-5)}),
        )
        .await
        .assert_problem(403, "forbidden");
    runner.delete(PB).await.assert_problem(403, "forbidden");
    runner
        .delete("/v1/orgs/acme")
        .await
        .assert_problem(403, "forbidden");
    let deleted = admin.delete("/v1/orgs/acme").await;
    assert_eq!(deleted.status, 200, "{:#}", deleted.body);
    assert_eq!(deleted.body["playbooks"], 2);
    admin
        .get("/v1/orgs/acme")
        .await
        .assert_problem(404, "not_found");
    admin
        .delete("/v1/orgs/acme")
        .await
        .assert_problem(404, "not_found");
    let again = admin.post("/v1/orgs", json!({"id": "acme"})).await;
    assert_eq!(again.status, 201);
}

/// The retention sweep purges the runs that ended more than the playbook's days ago (the
/// clock shifted two days on), and leaves a playbook that keeps its runs longer.
#[tokio::test]
async fn the_retention_sweep_purges_past_each_playbooks_days() {
    let config = "[limits]\nretain_runs_days = 1\n\
                  [playbooks.\"acme/keep\"]\nretain_runs_days = 3\n\
                  [scheduler]\nretention_ms = 50\nclock_offset_ms = 172800000\n";
    let (server, _store) = server_on_store(config).await;
    server.playbook().await;
    let keep = "/v1/orgs/acme/playbooks/keep";
    assert_eq!(
        server
            .post("/v1/orgs/acme/playbooks", json!({"id": "keep"}))
            .await
            .status,
        201
    );
    for pb in [PB, keep] {
        server
            .save_definition(pb, "computation", "month-window", MONTH_WINDOW)
            .await;
        let reply = server
            .post(
                &format!("{pb}/definitions/computation/month-window/runs"),
                json!({"input": {"month": "2026-02"}, "run_id": "old"}),
            )
            .await;
        assert_eq!(reply.status, 200, "{:#}", reply.body);
    }
    common::wait_for(Duration::from_secs(10), "the sweep", || async {
        (server.get(&format!("{PB}/runs/old")).await.status == 404).then_some(())
    })
    .await;
    assert_eq!(server.get(&format!("{keep}/runs/old")).await.status, 200);
    assert_eq!(server.get("/healthz").await.status, 200);
}

/// Purges and deletes while runs start and end beside them: every request is answered, the
/// server stays healthy, and what is left reads whole.
#[tokio::test]
async fn purges_and_deletes_during_activity_leave_the_server_working() {
    let (server, store) = server_on_store("").await;
    server.playbook().await;
    let other = "/v1/orgs/acme/playbooks/other";
    assert_eq!(
        server
            .post("/v1/orgs/acme/playbooks", json!({"id": "other"}))
            .await
            .status,
        201
    );
    for pb in [PB, other] {
        server
            .save_definition(pb, "computation", "month-window", MONTH_WINDOW)
            .await;
        server
            .save_definition(pb, "workflow", "flow", &waits_an_hour())
            .await;
    }
    let client = common::Client::new(server.url.clone());
    let busy = tokio::spawn(async move {
        let mut answered = 0;
        for n in 0..30 {
            for pb in [PB, "/v1/orgs/acme/playbooks/other"] {
                let reply = client
                    .post(
                        &format!("{pb}/definitions/computation/month-window/runs"),
                        json!({"input": {"month": "2026-02"}, "run_id": format!("m{n}")}),
                    )
                    .await;
                // A run in the playbook being deleted may find it gone: a problem, not a fault.
                assert!(
                    reply.status == 200 || reply.status == 404,
                    "{} {:#}",
                    reply.status,
                    reply.body
                );
                answered += 1;
            }
            client
                .start_run(
                    pb_of(n),
                    "workflow",
                    "flow",
                    json!({"run_id": format!("w{n}")}),
                )
                .await;
        }
        answered
    });
    for _ in 0..5 {
        let purged = server
            .post(
                &format!("{PB}/purge"),
                json!({"ended_before": now_plus(-1)}),
            )
            .await;
        assert_eq!(purged.status, 200, "{:#}", purged.body);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let deleted = server.delete(&format!("{other}?force=true")).await;
    assert_eq!(deleted.status, 200, "{:#}", deleted.body);
    assert_eq!(busy.await.expect("the runs"), 60);
    assert_eq!(server.get("/healthz").await.status, 200);

    // What is left of the purged playbook is whole: each run's events are all there.
    let runs = server.get(&format!("{PB}/runs")).await;
    for run in runs.body["runs"].as_array().unwrap() {
        let id = run["run_id"].as_str().unwrap();
        let types = server.event_types(PB, id).await;
        assert_eq!(
            types.first().map(String::as_str),
            Some("run_started"),
            "{id}"
        );
    }
    // Each waiting workflow of `main` holds its work; once `main` is deleted too, no work is
    // left for the scheduler.
    let waiting = server.get(&format!("{PB}/runs?status=started")).await;
    assert!(!waiting.body["runs"].as_array().unwrap().is_empty());
    assert!(store.work_backlog().await.unwrap().items > 0);
    let deleted = server.delete(&format!("{PB}?force=true")).await;
    assert_eq!(deleted.status, 200, "{:#}", deleted.body);
    assert_eq!(store.work_backlog().await.unwrap().items, 0);
    assert_eq!(server.get("/healthz").await.status, 200);
}

fn pb_of(n: usize) -> &'static str {
    if n.is_multiple_of(2) {
        PB
    } else {
        "/v1/orgs/acme/playbooks/other"
    }
}
