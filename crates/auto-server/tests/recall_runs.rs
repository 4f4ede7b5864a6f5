//! Recall functions end to end through HTTP: a view folded from the playbook's events and
//! answered from; kept up to date as events are recorded; built again for a new version;
//! stalled by a fold that throws and unstalled by a fix; refused at save with its problems.

mod common;

use common::TestServer;
use serde_json::{Value, json};

/// Orders by month: the count and the total of each month's orders.
fn orders_by_month(answer: &str) -> String {
    format!(
        r#"---
description: Orders by month, from order.placed events.
events: [order.placed]
input:
  schema:
    type: object
    properties:
      month: {{type: string}}
    required: [month]
---
Each order placed counts in its month.

```ts
type View = Record<string, {{ count: number; total: number }}>;
export const initial: View = {{}};
export function fold(view: View, event: any): View {{
  if (event.data.bad) throw new Error("order " + event.data.id + " has no amount");
  const month = event.data.month;
  const seen = view[month] ?? {{ count: 0, total: 0 }};
  view[month] = {{ count: seen.count + 1, total: seen.total + event.data.amount }};
  return view;
}}
export function answer(view: View, input: {{ month: string }}) {{
  const month = view[input.month] ?? {{ count: 0, total: 0 }};
  return {answer};
}}
```
"#
    )
}

async fn publish(server: &TestServer, pb: &str, event_type: &str, data: Value) -> Value {
    let reply = server
        .post(
            &format!("{pb}/events"),
            json!({"type": event_type, "source": "/shop", "data": data}),
        )
        .await;
    assert_eq!(reply.status, 201, "{:#}", reply.body);
    reply.body
}

async fn ask(server: &TestServer, pb: &str, month: &str) -> (u16, Value) {
    let reply = server
        .start_run(pb, "recall", "orders", json!({"input": {"month": month}}))
        .await;
    (reply.status.as_u16(), reply.body)
}

#[tokio::test]
async fn a_view_is_folded_from_the_log_kept_up_to_date_and_built_again_for_a_new_version() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    // Events recorded before the save are folded too: a view is built from the whole log.
    publish(
        &server,
        &pb,
        "order.placed",
        json!({"id": 1, "month": "2026-01", "amount": 10}),
    )
    .await;
    publish(&server, &pb, "order.cancelled", json!({"id": 1})).await;
    let saved = server
        .save_definition(&pb, "recall", "orders", &orders_by_month("month.count"))
        .await;
    assert_eq!(saved["version"], 1);
    publish(
        &server,
        &pb,
        "order.placed",
        json!({"id": 2, "month": "2026-01", "amount": 5}),
    )
    .await;
    publish(
        &server,
        &pb,
        "order.placed",
        json!({"id": 3, "month": "2026-02", "amount": 7}),
    )
    .await;
    let (status, run) = ask(&server, &pb, "2026-01").await;
    assert_eq!(status, 200, "{run:#}");
    assert_eq!(run["status"], "succeeded");
    assert_eq!(run["output"], 2);
    assert_eq!(ask(&server, &pb, "2026-02").await.1["output"], 1);
    assert_eq!(ask(&server, &pb, "2026-03").await.1["output"], 0);
    // An event recorded just before a run is in its answer.
    publish(
        &server,
        &pb,
        "order.placed",
        json!({"id": 4, "month": "2026-02", "amount": 1}),
    )
    .await;
    assert_eq!(ask(&server, &pb, "2026-02").await.1["output"], 2);
    // A new version folds from the start: totals rather than counts.
    let updated = server
        .update_definition(&pb, "recall", "orders", &orders_by_month("month.total"))
        .await;
    assert_eq!(updated.status, 200, "{:#}", updated.body);
    assert_eq!(ask(&server, &pb, "2026-01").await.1["output"], 15);
    assert_eq!(ask(&server, &pb, "2026-02").await.1["output"], 8);
    // Its input is checked as any function's.
    let reply = server
        .start_run(&pb, "recall", "orders", json!({"input": {}}))
        .await;
    reply.assert_problem(422, "invalid_input");
    // A recall run finishes within its call: it cannot be cancelled.
    let run_id = ask(&server, &pb, "2026-01").await.1["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    server
        .post(&format!("{pb}/runs/{run_id}/cancel"), json!({}))
        .await
        .assert_problem(409, "conflict");
}

#[tokio::test]
async fn a_fold_that_throws_stalls_the_view_until_a_new_version() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "recall", "orders", &orders_by_month("month.count"))
        .await;
    publish(
        &server,
        &pb,
        "order.placed",
        json!({"id": 1, "month": "2026-01", "amount": 3}),
    )
    .await;
    let bad = publish(&server, &pb, "order.placed", json!({"id": 2, "bad": true})).await;
    publish(
        &server,
        &pb,
        "order.placed",
        json!({"id": 3, "month": "2026-01", "amount": 4}),
    )
    .await;
    let (status, problem) = ask(&server, &pb, "2026-01").await;
    assert_eq!(status, 409, "{problem:#}");
    assert_eq!(problem["reason"], "conflict");
    assert_eq!(problem["kind"], "stalled");
    assert_eq!(problem["title"], "The recall function orders is stalled");
    let detail = problem["detail"].as_str().unwrap();
    let event_id = bad["id"].as_str().unwrap();
    assert!(detail.contains(event_id), "{detail}");
    assert!(detail.contains("order 2 has no amount"), "{detail}");
    assert!(detail.contains("type order.placed"), "{detail}");
    // Stalled it stays, whatever comes next.
    publish(
        &server,
        &pb,
        "order.placed",
        json!({"id": 5, "month": "2026-01", "amount": 1}),
    )
    .await;
    assert_eq!(ask(&server, &pb, "2026-01").await.0, 409);
    // A new version whose fold passes the bad event by folds every event again.
    let fixed = orders_by_month("month.count").replace(
        "if (event.data.bad) throw",
        "if (event.data.bad) return view;\n  if (event.data.worse) throw",
    );
    let updated = server
        .update_definition(&pb, "recall", "orders", &fixed)
        .await;
    assert_eq!(updated.status, 200, "{:#}", updated.body);
    let (status, run) = ask(&server, &pb, "2026-01").await;
    assert_eq!(status, 200, "{run:#}");
    assert_eq!(run["output"], 3);
}

#[tokio::test]
async fn an_answer_that_misses_the_output_contract_is_unworkable() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let source = orders_by_month("month.count").replace(
        "    required: [month]\n---",
        "    required: [month]\noutput:\n  schema: {type: string}\n---",
    );
    server
        .save_definition(&pb, "recall", "orders", &source)
        .await;
    let (status, problem) = ask(&server, &pb, "2026-01").await;
    assert_eq!(status, 409, "{problem:#}");
    assert_eq!(problem["kind"], "unworkable");
    assert_eq!(problem["issues"][0]["pointer"], "/output");
}

#[tokio::test]
async fn a_recall_document_is_checked_at_save() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let types = |n: usize| {
        (0..n)
            .map(|i| format!("t.{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let with_events = |list: String| {
        orders_by_month("month.count")
            .replace("events: [order.placed]", &format!("events: [{list}]"))
    };
    server
        .save_definition(&pb, "recall", "at-limit", &with_events(types(64)))
        .await;
    let reply = server
        .post_definition(&pb, "recall", "past-limit", &with_events(types(65)))
        .await;
    reply.assert_problem(422, "invalid_input");
    let messages = reply.issue_messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0]
            .ends_with("/events: A recall function folds 1 to 64 event types; this lists 65."),
        "{messages:?}"
    );
    let without_answer =
        orders_by_month("month.count").replace("export function answer", "function answer");
    let reply = server
        .post_definition(&pb, "recall", "no-answer", &without_answer)
        .await;
    reply.assert_problem(422, "invalid_input");
    let messages = reply.issue_messages();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].ends_with(": The program does not export answer."),
        "{messages:?}"
    );
}

/// `count` order.placed events of March 2026, each of amount 1, recorded straight into the
/// store under ids that begin with `prefix`.
async fn record_orders(store: &dyn auto_store::Store, prefix: &str, count: usize) {
    let pb = auto_store::PlaybookRef::new("acme", "main");
    let ids: Vec<usize> = (0..count).collect();
    for chunk in ids.chunks(256) {
        let events = chunk
            .iter()
            .map(|i| auto_store::NewEvent {
                id: format!("{prefix}-{i}"),
                event_type: "order.placed".into(),
                source: "/shop".into(),
                subject: None,
                time: None,
                datacontenttype: Some("application/json".into()),
                data: Some(json!({"id": i, "month": "2026-03", "amount": 1})),
                extensions: Default::default(),
                run_id: None,
                run_seq: None,
            })
            .collect();
        store.append_events(&pb, events).await.expect("recorded");
    }
}

/// Waits until `done` holds of the kept view of `orders`, for at most 60 seconds.
async fn view_until(
    store: &dyn auto_store::Store,
    what: &str,
    done: impl Fn(&auto_store::RecallView) -> bool,
) -> auto_store::RecallView {
    let pb = auto_store::PlaybookRef::new("acme", "main");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if let Some(view) = store.get_view(&pb, "orders").await.expect("read") {
            if done(&view) {
                return view;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{what}: the view is {:?} at seq {}",
                view.view,
                view.folded_seq
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_run_folds_8192_events_itself_and_past_that_answers_rebuilding_until_the_view_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let inner = common::test_store(dir.path()).await;
    let failing = common::failing_store::FailingStore::new(inner.clone());
    // Another server holds the views and has stopped: until its hold ends, runs fold alone.
    failing.hold_views_elsewhere(true);
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
        .save_definition(&pb, "recall", "orders", &orders_by_month("month.count"))
        .await;
    // At the limit: a run meets 8,192 events itself and answers. The save recorded one, and
    // the run's own start is the last it meets.
    let logged = inner
        .log_end(&auto_store::PlaybookRef::new("acme", "main"))
        .await
        .unwrap();
    assert_eq!(logged, 1, "the save's event");
    record_orders(&*inner, "first", 8_190).await;
    let (status, run) = ask(&server, &pb, "2026-03").await;
    assert_eq!(status, 200, "{run:#}");
    assert_eq!(run["output"], 8_190);
    // One past (the first run's ending, 8,191 orders and the next run's start): the run keeps
    // what it folded and answers that the view is being built.
    record_orders(&*inner, "second", 8_191).await;
    let (status, problem) = ask(&server, &pb, "2026-03").await;
    assert_eq!(status, 503, "{problem:#}");
    assert_eq!(problem["reason"], "unavailable");
    assert_eq!(problem["kind"], "rebuilding");
    assert_eq!(
        problem["title"],
        "The recall function orders is rebuilding its view"
    );
    // The hold ends: this server's follower takes the view and brings it to the log's end,
    // with no run asking.
    failing.hold_views_elsewhere(false);
    let built = view_until(&*inner, "built by the follower", |view| {
        view.view["2026-03"]["count"] == 8_190 + 8_191
    })
    .await;
    assert!(built.built);
    let (status, run) = ask(&server, &pb, "2026-03").await;
    assert_eq!(status, 200, "{run:#}");
    assert_eq!(run["output"], 8_190 + 8_191);
}

#[tokio::test]
async fn the_follower_keeps_a_view_up_to_date_as_events_are_recorded_on_either_of_two_servers() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::test_store(dir.path()).await;
    let first = TestServer::start_on(
        store.clone(),
        Vec::new(),
        auto_server::reasoning_runs::Models::none(),
        dir,
    )
    .await;
    let second = TestServer::start_on(
        store.clone(),
        Vec::new(),
        auto_server::reasoning_runs::Models::none(),
        tempfile::tempdir().unwrap(),
    )
    .await;
    let pb = first.playbook().await;
    record_orders(&*store, "before", 1_000).await;
    first
        .save_definition(&pb, "recall", "orders", &orders_by_month("month.count"))
        .await;
    // Built from the log before any run asks.
    let built = view_until(&*store, "built", |view| view.built).await;
    assert_eq!(built.view["2026-03"]["count"], 1_000);
    // Events recorded on either server are folded as they come, each once.
    for server in [&first, &second, &first] {
        publish(
            server,
            &pb,
            "order.placed",
            json!({"id": "x", "month": "2026-04", "amount": 2}),
        )
        .await;
    }
    let kept = view_until(&*store, "three more folded", |view| {
        view.view["2026-04"]["count"] == 3
    })
    .await;
    assert_eq!(kept.view["2026-04"]["total"], 6);
    assert_eq!(kept.view["2026-03"]["count"], 1_000);
    let end = store
        .log_end(&auto_store::PlaybookRef::new("acme", "main"))
        .await
        .unwrap();
    assert_eq!(
        view_until(&*store, "at the end", |v| v.folded_seq == end)
            .await
            .folded_seq,
        end
    );
    assert_eq!(ask(&second, &pb, "2026-04").await.1["output"], 3);
}
