//! Values nested to the limit at every door: a value may nest 512 levels ("Nested values: 512
//! levels", workflow page; "The input may be at most 256 KiB as JSON and 512 levels deep",
//! reasoning page). Whatever is accepted reads back through every listing and read, and one
//! level more is refused at the door with a problem.

mod common;

use std::time::Duration;

use common::TestServer;
use serde_json::{Value, json};

/// "Nested values: 512 levels" (workflow page, "Limits").
const VALUE_DEPTH_MAX: usize = 512;

/// A value `levels` deep: lists around a number (the outer list is level 1).
fn nested(levels: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..levels {
        value = json!([value]);
    }
    value
}

const LISTEN: &str = include_str!("data/keep-a-deep-event.yaml");

const SET: &str = include_str!("data/set-ok.yaml");

const ECHO: &str = include_str!("data/echo-or-nest.md");

#[tokio::test]
async fn event_data_512_levels_deep_is_kept_and_read_back_and_513_is_refused() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let deep = nested(VALUE_DEPTH_MAX);
    let reply = server
        .post(
            &format!("{pb}/events"),
            json!({"type": "com.example.deep", "id": "deep", "data": deep}),
        )
        .await;
    assert_eq!(reply.status, 201, "{:#}", reply.body);
    assert_eq!(reply.body["data"], deep);
    // The listing (its data is under 2 KiB, so shown) and the event alone read it back.
    let events = server.all_events(&pb).await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["data"], deep);
    let listed = server
        .get(&format!("{pb}/events?type=com.example.deep"))
        .await;
    assert_eq!(listed.status, 200, "{:#}", listed.body);
    assert_eq!(listed.body["events"][0]["data"], deep);
    let one = server.get(&format!("{pb}/events/deep")).await;
    assert_eq!(one.status, 200, "{:#}", one.body);
    assert_eq!(one.body["data"], deep);
    // One level more is refused, and nothing is recorded.
    let past = server
        .post(
            &format!("{pb}/events"),
            json!({"type": "com.example.deep", "id": "past", "data": nested(VALUE_DEPTH_MAX + 1)}),
        )
        .await;
    let problem = past.assert_problem(422, "invalid_input");
    assert_eq!(
        problem["detail"],
        "The body nests lists and objects deeper than 513 levels."
    );
    assert_eq!(server.all_events(&pb).await.len(), 1);
}

#[tokio::test]
async fn an_event_with_deep_data_sent_to_a_run_is_taken() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "listener", LISTEN)
        .await;
    let runs = format!("{pb}/definitions/workflow/listener/runs");
    let reply = server.post(&runs, json!({"run_id": "l-1"})).await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    // The run's output holds the data one level down: `{got: data}`.
    let data = nested(VALUE_DEPTH_MAX - 1);
    let sent = server
        .post(
            &format!("{pb}/runs/l-1/events"),
            json!({"type": "com.example.deep", "id": "e-1", "data": data}),
        )
        .await;
    assert_eq!(sent.status, 202, "{:#}", sent.body);
    let run = server.ended(&pb, "l-1", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!({"got": data}));
    let history = server.get(&format!("{pb}/events?run_id=l-1")).await;
    assert_eq!(history.status, 200, "{:#}", history.body);
    // Data at the limit is taken too; the list a listen task gives would nest one level past
    // it, so the task fails with the page's error and the run ends rather than waiting.
    let reply = server.post(&runs, json!({"run_id": "l-2"})).await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let sent = server
        .post(
            &format!("{pb}/runs/l-2/events"),
            json!({"type": "com.example.deep", "id": "e-2", "data": nested(VALUE_DEPTH_MAX)}),
        )
        .await;
    assert_eq!(sent.status, 202, "{:#}", sent.body);
    let run = server.ended(&pb, "l-2", Duration::from_secs(20)).await;
    assert_ne!(run["status"], "succeeded", "{run:#}");
    let history = server.get(&format!("{pb}/events?run_id=l-2")).await;
    assert_eq!(history.status, 200, "{:#}", history.body);
}

#[tokio::test]
async fn a_run_input_512_levels_deep_is_taken_and_read_back_and_513_is_refused() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "computation", "echo", ECHO)
        .await;
    server.save_definition(&pb, "workflow", "flow", SET).await;
    // The input object is level 1.
    let input = json!({"d": nested(VALUE_DEPTH_MAX - 1)});
    let computed = server
        .post(
            &format!("{pb}/definitions/computation/echo/runs"),
            json!({"run_id": "c-1", "input": input}),
        )
        .await;
    assert_eq!(computed.status, 200, "{:#}", computed.body);
    assert_eq!(computed.body["status"], "succeeded", "{:#}", computed.body);
    assert_eq!(computed.body["output"], input);
    let got = server.get(&format!("{pb}/runs/c-1")).await;
    assert_eq!(got.status, 200, "{:#}", got.body);
    assert_eq!(got.body["input"], input);
    assert_eq!(got.body["output"], input);
    let started = server
        .post(
            &format!("{pb}/definitions/workflow/flow/runs"),
            json!({"run_id": "w-1", "input": input}),
        )
        .await;
    // It ends before its first wait, so within the call.
    assert_eq!(started.status, 200, "{:#}", started.body);
    let run = server.ended(&pb, "w-1", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["input"], input);
    let listed = server.get(&format!("{pb}/runs")).await;
    assert_eq!(listed.status, 200, "{:#}", listed.body);
    assert_eq!(server.get(&format!("{pb}/events")).await.status, 200);
    // One level more is refused at the door, for every type, and no run is made.
    let past = json!({"d": nested(VALUE_DEPTH_MAX)});
    for (def_type, name) in [("computation", "echo"), ("workflow", "flow")] {
        let reply = server
            .post(
                &format!("{pb}/definitions/{def_type}/{name}/runs"),
                json!({"run_id": format!("{def_type}-past"), "input": past}),
            )
            .await;
        let problem = reply.assert_problem(422, "invalid_input");
        assert_eq!(
            problem["detail"],
            "The body nests lists and objects deeper than 513 levels."
        );
        let none = server.get(&format!("{pb}/runs/{def_type}-past")).await;
        assert_eq!(none.status, 404, "{:#}", none.body);
    }
}

#[tokio::test]
async fn a_deep_output_is_kept_and_one_past_the_sandbox_limit_ends_the_run() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "computation", "echo", ECHO)
        .await;
    let runs = format!("{pb}/definitions/computation/echo/runs");
    // `{v: ...}` with 199 lists inside: 200 levels.
    let reply = server
        .post(&runs, json!({"run_id": "d-200", "input": {"levels": 199}}))
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["status"], "succeeded", "{:#}", reply.body);
    assert_eq!(reply.body["output"], json!({"v": nested(199)}));
    let got = server.get(&format!("{pb}/runs/d-200")).await;
    assert_eq!(got.body["output"], json!({"v": nested(199)}));
    // 512 levels is the most a value holds.
    let reply = server
        .post(&runs, json!({"run_id": "d-512", "input": {"levels": 511}}))
        .await;
    assert_eq!(reply.body["status"], "succeeded", "{:#}", reply.body);
    let got = server.get(&format!("{pb}/runs/d-512")).await;
    assert_eq!(got.body["output"], json!({"v": nested(511)}));
    // One more, and the run ends with the sandbox's words rather than staying started.
    let reply = server
        .post(&runs, json!({"run_id": "d-513", "input": {"levels": 512}}))
        .await;
    let problem = reply.assert_problem(409, "conflict");
    assert_eq!(problem["kind"], "unworkable");
    assert_eq!(
        problem["detail"],
        "The program threw: RangeError: The value nests deeper than 512 levels"
    );
    let got = server.get(&format!("{pb}/runs/d-513")).await;
    assert_eq!(got.body["status"], "rejected", "{:#}", got.body);
    assert_eq!(got.body["problem"], *problem);
}
