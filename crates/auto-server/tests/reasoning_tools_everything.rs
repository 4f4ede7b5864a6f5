//! Reasoning runs calling a third party's tool server, the MCP project's reference server
//! (npm `@modelcontextprotocol/server-everything`), over stdio (a command the operator names)
//! and over Streamable HTTP. Skipped with a note when `AUTO_MCP_EVERYTHING` is not set, and
//! failing under CI.

mod common;

use auto_testkit::{Everything, ProviderDouble, ProviderKind, Reply, ScriptedToolCall};
use common::TestServer;
use serde_json::{Value, json};

const FUNCTION: &str =
    "---\nmodel: anthropic/claude-sonnet-4-5\ntools: [everything/echo]\n---\nSay {{ input.q }}.\n";

/// A run whose model calls `everything/echo` on the server `tool_server` configures; `log`
/// tells what the tool server said, shown when the run fails.
async fn echo_through(tool_server: &str, log: impl Fn() -> String) {
    let provider = ProviderDouble::start(ProviderKind::Anthropic).await;
    provider.script([
        Reply::ToolCalls(vec![ScriptedToolCall {
            call_id: "c1".into(),
            name: "everything__echo".into(),
            arguments: json!({"message": "hello"}),
        }]),
        Reply::Text("It said hello.".into()),
    ]);
    let config = format!(
        "[providers.anthropic]\nbase_url = \"{}\"\n\n[[tool_servers]]\nname = \"everything\"\n{tool_server}\norgs = [\"acme\"]\n",
        provider.base_url()
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "reasoning", "echoer", FUNCTION)
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/reasoning/echoer/runs"),
            json!({"input": {"q": "hello"}, "run_id": "e1"}),
        )
        .await;
    assert_eq!(
        reply.status,
        200,
        "{:#}\nthe tool server's log:\n{}",
        reply.body,
        log()
    );
    assert_eq!(reply.body["output"], "It said hello.");
    let requests = provider.requests();
    assert_eq!(requests[0].body["tools"][0]["name"], "everything__echo");
    let results: Vec<Value> = requests[1].body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1);
    assert!(
        results[0].to_string().contains("Echo: hello"),
        "{:#}",
        results[0]
    );
    let events = server.all_events(&pb).await;
    let started: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_call_started")
        .collect();
    assert_eq!(started[0]["data"]["server"], "everything");
    assert_eq!(started[0]["data"]["tool"], "echo");
    // server-everything marks echo read-only.
    assert_eq!(started[0]["data"]["read_only"], true);
}

#[tokio::test]
async fn a_run_calls_server_everything_over_stdio() {
    let Some(executable) = Everything::executable() else {
        return;
    };
    echo_through(
        &format!(
            "command = [{:?}, \"stdio\"]",
            executable.display().to_string()
        ),
        String::new,
    )
    .await;
}

#[tokio::test]
async fn a_run_calls_server_everything_over_streamable_http() {
    let Some(everything) = Everything::start_http() else {
        return;
    };
    echo_through(&format!("url = \"{}\"", everything.url()), || {
        everything.log()
    })
    .await;
}
