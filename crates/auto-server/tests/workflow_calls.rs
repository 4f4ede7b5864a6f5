//! Calls between runs through HTTP: a child's ending reaching its waiting parent through the
//! store, the limits on calls ("Calls above a run: 8"; "Calls waiting under one run"), and
//! the longest a run may last (`WORKFLOW_MAX_DURATION`, `cancelled` kind `overrun`).

mod common;

use std::time::Duration;

use common::{TestServer, wait_for, workflow};
use serde_json::{Value, json};

/// Calls itself with `n - 1` until `n` is 0, counting the levels on the way back up.
const DEEP: &str = include_str!("data/call-itself-down-to-zero.yaml");

const SLEEPER: &str = include_str!("data/sleep-a-second.yaml");

/// `BRANCHES` branches, each calling the sleeper.
fn fan_out(branches: usize) -> String {
    let mut text = String::from("do:\n  - all:\n      fork:\n        branches:\n");
    for n in 0..branches {
        text.push_str(&format!(
            "          - b{n}:\n              call: run_definition\n              with: {{ type: workflow, name: sleeper }}\n"
        ));
    }
    workflow(&text)
}

async fn start(server: &TestServer, pb: &str, name: &str, body: Value) {
    let reply = server
        .post(&format!("{pb}/definitions/workflow/{name}/runs"), body)
        .await;
    assert!(
        reply.status == 200 || reply.status == 202,
        "{:#}",
        reply.body
    );
}

#[tokio::test]
async fn calls_reach_eight_deep_and_the_ninth_is_refused() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server.save_definition(&pb, "workflow", "deep", DEEP).await;

    // At the limit: the top run and eight calls below it.
    start(
        &server,
        &pb,
        "deep",
        json!({"input": {"n": 8}, "run_id": "eight"}),
    )
    .await;
    let run = server.ended(&pb, "eight", Duration::from_secs(30)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(run["output"], json!({"n": 8, "levels": 8}));

    // One past: the run that would sit a ninth call below the top is refused as a conflict,
    // which its calling task raises as a runtime error; each workflow above stops in turn.
    start(
        &server,
        &pb,
        "deep",
        json!({"input": {"n": 9}, "run_id": "nine"}),
    )
    .await;
    let run = server.ended(&pb, "nine", Duration::from_secs(30)).await;
    assert_eq!(run["status"], "rejected", "{run:#}");
    let detail = run["problem"]["detail"].as_str().unwrap();
    assert!(
        detail.contains(
            "The run would sit 9 calls below the workflow at the top; workflows that call workflows reach at most 8 calls deep."
        ),
        "{detail}"
    );
    // The refused run was never recorded: nine runs in each tree, the top and eight below.
    let runs = server
        .get(&format!("{pb}/runs?type=workflow&name=deep&limit=100"))
        .await;
    assert_eq!(
        runs.body["runs"].as_array().unwrap().len(),
        18,
        "{:#}",
        runs.body
    );
}

#[tokio::test]
async fn the_calls_waiting_under_one_top_workflow_are_bounded() {
    let server = TestServer::start_with_config("[limits]\nworkflow_max_open_calls = 2").await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "sleeper", SLEEPER)
        .await;
    server
        .save_definition(&pb, "workflow", "two", &fan_out(2))
        .await;
    server
        .save_definition(&pb, "workflow", "three", &fan_out(3))
        .await;

    // At the limit: two calls wait at once, and both end.
    start(&server, &pb, "two", json!({"run_id": "two"})).await;
    let run = server.ended(&pb, "two", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(
        run["output"],
        json!([{"slept": true}, {"slept": true}]),
        "{run:#}"
    );

    // One past: the third call is refused; its branch raises it and the fork stops.
    start(&server, &pb, "three", json!({"run_id": "three"})).await;
    let run = server.ended(&pb, "three", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "rejected", "{run:#}");
    assert_eq!(run["problem"]["reason"], "invalid_input", "{run:#}");
    let detail = run["problem"]["detail"].as_str().unwrap();
    assert!(
        detail.contains(
            "The runs under the workflow run three wait for 2 calls at once, the most this deployment allows (WORKFLOW_MAX_OPEN_CALLS is 2)."
        ),
        "{detail}"
    );
}

#[tokio::test]
async fn a_waiting_parent_hears_its_childs_ending_and_a_cancel_reaches_the_child() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let long = "do:\n  - nap:\n      wait: PT1H\n";
    server
        .save_definition(&pb, "workflow", "long", &workflow(long))
        .await;
    let waiter =
        "do:\n  - ask:\n      call: run_definition\n      with: { type: workflow, name: long }\n";
    server
        .save_definition(&pb, "workflow", "waiter", &workflow(waiter))
        .await;
    start(&server, &pb, "waiter", json!({"run_id": "w"})).await;
    // The child is recorded under an id derived from the parent, and goes on.
    let child = wait_for(Duration::from_secs(10), "the child run", || async {
        let runs = server.get(&format!("{pb}/runs?name=long")).await;
        runs.body["runs"].as_array().unwrap().first().cloned()
    })
    .await;
    let child_id = child["run_id"].as_str().unwrap().to_owned();
    assert!(child_id.starts_with("w."), "{child_id}");
    // Cancelling the child ends it; its ending reaches the parent, which raises it.
    let reply = server
        .post(
            &format!("{pb}/runs/{child_id}/cancel"),
            json!({"detail": "Not needed"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    let child = server.ended(&pb, &child_id, Duration::from_secs(10)).await;
    assert_eq!(child["problem"]["kind"], "requested", "{child:#}");
    let parent = server.ended(&pb, "w", Duration::from_secs(10)).await;
    assert_eq!(parent["status"], "rejected", "{parent:#}");
    // A cancellation of a run it called, uncaught, rejects it as invalid_input.
    assert_eq!(parent["problem"]["reason"], "invalid_input", "{parent:#}");

    // Cancelling the parent cancels the child it waits for, with the kind parent_ended.
    start(&server, &pb, "waiter", json!({"run_id": "v"})).await;
    let child_id = wait_for(Duration::from_secs(10), "the child run of v", || async {
        let runs = server.get(&format!("{pb}/runs?name=long")).await;
        runs.body["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["run_id"].as_str().unwrap().starts_with("v."))
            .map(|r| r["run_id"].as_str().unwrap().to_owned())
    })
    .await;
    let reply = server.post(&format!("{pb}/runs/v/cancel"), json!({})).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    let parent = server.ended(&pb, "v", Duration::from_secs(10)).await;
    assert_eq!(parent["problem"]["kind"], "requested", "{parent:#}");
    let child = server.ended(&pb, &child_id, Duration::from_secs(10)).await;
    assert_eq!(child["problem"]["reason"], "cancelled", "{child:#}");
    assert_eq!(child["problem"]["kind"], "parent_ended", "{child:#}");
}
