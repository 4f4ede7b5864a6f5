//! A server killed with SIGKILL in the middle of a tool call that is not read-only: after a
//! restart the run is not performed again from that call. The call ends `interrupted`, the run
//! ends `conflict`, kind `effect_unknown`, with `because: "call_outcome_unknown"`, and the tool
//! server's own log shows the tool called once.

mod common;

use std::time::Duration;

use auto_testkit::harness;
use auto_testkit::{McpDouble, ProviderDouble, ProviderKind, Reply, ScriptedToolCall};
use common::{PLAYBOOK_PATH, Server, serve_in, wait_for};
use serde_json::{Value, json};

const NOTER: &str = include_str!("data/note-with-the-writing-tool.md");

/// The request of a run of `run_id` with the input `{"q": "x"}`.
fn request(run_id: &str) -> Value {
    json!({"input": {"q": "x"}, "run_id": run_id})
}

/// Starts a server on `dir`, saves the reasoning function `name`, starts a run of it
/// (`request(run_id)`) and kills the server with SIGKILL once the tool server has had `calls`
/// calls, cutting the run off.
async fn cut_off(
    dir: &std::path::Path,
    mcp: &McpDouble,
    name: &str,
    source: &str,
    run_id: &str,
    calls: usize,
) {
    let mut first = serve_in(dir, &[]);
    let api = first.client();
    let pb = api.playbook().await;
    api.save_definition(&pb, "reasoning", name, source).await;
    let cut_off = {
        let runs = format!("{}{pb}/definitions/reasoning/{name}/runs", api.url);
        let (http, request) = (api.http.clone(), request(run_id));
        tokio::spawn(async move { http.post(runs).json(&request).send().await })
    };
    // The tool calls are under way at the tool server: the server is killed now.
    assert_eq!(
        mcp.wait_for_calls(calls, Duration::from_secs(30))
            .await
            .len(),
        calls
    );
    first.kill();
    assert!(cut_off.await.expect("the client task").is_err());
}

/// Starts the next server on `dir` and asks for the run until no other attempt may be going
/// on with it; gives the server and that answer.
async fn asked_again(dir: &std::path::Path, name: &str, run_id: &str) -> (Server, harness::Reply) {
    let second = serve_in(dir, &[]);
    let api = second.client();
    let answer = wait_for(
        Duration::from_secs(60),
        "the run taken up again",
        || async {
            let reply = api
                .start_run(PLAYBOOK_PATH, "reasoning", name, request(run_id))
                .await;
            (reply.body["kind"] != "taken").then_some(reply)
        },
    )
    .await;
    (second, answer)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_call_that_writes_cut_off_by_sigkill_is_never_made_again() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    double.script([Reply::ToolCalls(vec![ScriptedToolCall {
        call_id: "w1".into(),
        name: "notes__write".into(),
        arguments: json!({"q": "x", "ms": 60_000}),
    }])]);
    let mcp = McpDouble::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join("auto.toml"),
        format!(
            "database = \"sqlite://auto.db\"\n[providers.anthropic]\nbase_url = \"{}\"\napi_key = {{ file = \"key\" }}\n[limits]\nmodel_call_bound_ms = 3000\n\n[[tool_servers]]\nname = \"notes\"\nurl = \"{}\"\norgs = [\"acme\"]\ntimeout = \"3s\"\n",
            double.base_url(),
            mcp.url()
        ),
    )
    .expect("the configuration");
    std::fs::write(dir.path().join("key"), "sk-ant-crash-tools").expect("the key");
    cut_off(dir.path(), &mcp, "noter", NOTER, "crash-tools-1", 1).await;
    let (mut second, answer) = asked_again(dir.path(), "noter", "crash-tools-1").await;
    let body = answer.assert_problem(409, "conflict").clone();
    assert_eq!(body["kind"], "effect_unknown", "{body:#}");
    assert_eq!(body["because"], "call_outcome_unknown", "{body:#}");
    assert!(
        body["detail"]
            .as_str()
            .is_some_and(|d| d.contains("notes/write")),
        "{body:#}"
    );

    // The tool server's own log: the tool that writes was called once, never again.
    assert_eq!(mcp.calls().len(), 1);
    // The call has its ending, and the model was asked once.
    let api = second.client();
    let events = api.events(PLAYBOOK_PATH, "run_id=crash-tools-1").await;
    let failed = events
        .iter()
        .find(|e| e["type"] == "tool_call_failed")
        .expect("the interrupted call");
    assert_eq!(failed["data"]["because"], "interrupted");
    assert_eq!(failed["data"]["number"], 1);
    assert_eq!(double.requests().len(), 1);

    // Asked again, the same run id never runs that work again.
    let again = api
        .start_run(
            PLAYBOOK_PATH,
            "reasoning",
            "noter",
            request("crash-tools-1"),
        )
        .await;
    assert_eq!(again.status, 409, "{:#}", again.body);
    assert_eq!(again.body["kind"], "tools_called", "{:#}", again.body);
    assert_eq!(mcp.calls().len(), 1);
    second.kill();
}

const READER: &str = include_str!("data/find-with-the-lookup-tool.md");

/// Killed in the middle of a read-only call, the run goes on after a restart: the answered call
/// of the step is given back to the model, the read-only call without an answer is made again
/// under the next number, and the run answers.
#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_call_cut_off_by_sigkill_is_made_again_and_the_run_answers() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    double.script([Reply::ToolCalls(vec![
        ScriptedToolCall {
            call_id: "quick".into(),
            name: "notes__lookup".into(),
            arguments: json!({"q": "first"}),
        },
        ScriptedToolCall {
            call_id: "long".into(),
            name: "notes__lookup".into(),
            arguments: json!({"q": "second", "ms": 60_000}),
        },
    ])]);
    let mcp = McpDouble::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join("auto.toml"),
        format!(
            "database = \"sqlite://auto.db\"\n[providers.anthropic]\nbase_url = \"{}\"\napi_key = {{ file = \"key\" }}\n[limits]\nmodel_call_bound_ms = 3000\n\n[[tool_servers]]\nname = \"notes\"\nurl = \"{}\"\norgs = [\"acme\"]\ntimeout = \"2s\"\n",
            double.base_url(),
            mcp.url()
        ),
    )
    .expect("the configuration");
    std::fs::write(dir.path().join("key"), "sk-ant-crash-tools").expect("the key");
    cut_off(dir.path(), &mcp, "reader", READER, "crash-tools-2", 2).await;

    double.script([Reply::Text("Found both.".into())]);
    let (mut second, answer) = asked_again(dir.path(), "reader", "crash-tools-2").await;
    assert_eq!(answer.status, 200, "{:#}", answer.body);
    let body = answer.body;
    assert_eq!(body["output"], "Found both.");
    // The answered call was not made again; the cut-off read-only call was, once.
    let made: Vec<Value> = mcp
        .calls()
        .iter()
        .map(|c| c.arguments["q"].clone())
        .collect();
    assert_eq!(made, [json!("first"), json!("second"), json!("second")]);
    // The model read the kept answer of the first call and the second call's new outcome.
    let requests = double.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1].body["messages"].to_string();
    assert!(sent.contains(r#"lookup: {\"q\":\"first\"}"#), "{sent}");
    let events = second
        .client()
        .events(PLAYBOOK_PATH, "run_id=crash-tools-2")
        .await;
    let tool_events: Vec<(String, u64)> = events
        .iter()
        .filter(|e| {
            e["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("tool_call_"))
        })
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_owned(),
                e["data"]["number"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        tool_events,
        [
            ("tool_call_started".to_owned(), 1),
            ("tool_call_answered".to_owned(), 1),
            ("tool_call_started".to_owned(), 2),
            ("tool_call_failed".to_owned(), 2),
            ("tool_call_started".to_owned(), 3),
            ("tool_call_failed".to_owned(), 3),
        ]
    );
    second.kill();
}
