//! `auto mcp` as an agent starts it: a child process speaking MCP over stdio, on a store of
//! its own, listing the tools and running calls as `local`, with the workflow scheduler running
//! beside them.

mod common;

use common::{AUTO, wait_for};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::process::Command;

async fn start(dir: &std::path::Path, scope: &[&str]) -> RunningService<RoleClient, ()> {
    let mut command = Command::new(AUTO);
    command
        .args(["mcp", "--database", "sqlite://auto.db"])
        .args(scope)
        .current_dir(dir);
    let transport = TokioChildProcess::new(command).expect("auto mcp starts");
    ().serve(transport).await.expect("the MCP client connects")
}

async fn call(client: &RunningService<RoleClient, ()>, name: &str, arguments: Value) -> Value {
    let arguments = arguments.as_object().expect("an object").clone();
    let result: CallToolResult = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await
        .expect("the call is answered");
    assert_eq!(result.is_error, Some(false), "{result:#?}");
    result.structured_content.expect("structured content")
}

#[tokio::test]
async fn auto_mcp_serves_the_tools_over_stdio() {
    let dir = tempfile::tempdir().expect("a directory");
    let client = start(dir.path(), &[]).await;
    let tools = client.list_all_tools().await.expect("the tools");
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    for name in [
        "create_org",
        "create_definition",
        "publish_event",
        "get_event",
    ] {
        assert!(names.contains(&name.to_owned()), "{name} in {names:?}");
    }
    assert_eq!(
        call(&client, "create_org", json!({"id": "acme"})).await["id"],
        json!("acme")
    );
    call(
        &client,
        "create_playbook",
        json!({"org": "acme", "id": "main"}),
    )
    .await;
    client.cancel().await.expect("the client stops");

    // The same store, one playbook: the tools take no org or playbook.
    let client = start(dir.path(), &["--org", "acme", "--playbook", "main"]).await;
    let tools = client.list_all_tools().await.expect("the tools");
    assert!(tools.iter().all(|t| t.name != "create_org"));
    assert!(tools.iter().all(|t| {
        !t.input_schema["properties"]
            .as_object()
            .unwrap()
            .contains_key("org")
    }));
    let event = call(&client, "publish_event", json!({"type": "com.acme.ping"})).await;
    assert_eq!(event["source"], json!("/callers/local"));
    client.cancel().await.expect("the client stops");
}

/// A workflow that waits a second, then sets its output.
const WAITS: &str = include_str!("data/wait-a-second.yaml");

#[tokio::test]
async fn a_workflow_that_waits_goes_on_while_auto_mcp_serves() {
    let dir = tempfile::tempdir().expect("a directory");
    let client = start(dir.path(), &[]).await;
    call(&client, "create_org", json!({"id": "acme"})).await;
    call(
        &client,
        "create_playbook",
        json!({"org": "acme", "id": "main"}),
    )
    .await;
    let pb = json!({"org": "acme", "playbook": "main"});
    let with_pb = |extra: Value| {
        let mut arguments = pb.clone();
        arguments
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        arguments
    };
    call(
        &client,
        "create_definition",
        with_pb(json!({"type": "workflow", "name": "waits", "source": WAITS, "diagram": "none"})),
    )
    .await;
    let started = call(
        &client,
        "run_definition",
        with_pb(json!({"type": "workflow", "name": "waits", "run_id": "w-1"})),
    )
    .await;
    assert_eq!(started["status"], json!("started"), "{started:#}");
    // The timer is work in the store: only a scheduler claims it, and `auto mcp` runs one.
    let within = std::time::Duration::from_secs(30);
    let run = wait_for(within, "the run's end", || async {
        let run = call(&client, "get_run", with_pb(json!({"run_id": "w-1"}))).await;
        (run["status"] != "started").then_some(run)
    })
    .await;
    assert_eq!(run["status"], json!("succeeded"), "{run:#}");
    assert_eq!(run["output"], json!({"waited": true}));
    client.cancel().await.expect("the client stops");
}
