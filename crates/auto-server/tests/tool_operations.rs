//! The tool-server operations end to end through HTTP against the testkit's MCP server:
//! `search` ranked by terms, `introspect`, `execute` recorded in the playbook's history, and
//! `dry_run`, which calls nothing.

mod common;

use auto_testkit::McpDouble;
use common::TestServer;
use serde_json::{Value, json};

async fn setup(extra: &str) -> (McpDouble, TestServer, String) {
    let mcp = McpDouble::start().await;
    let config = format!(
        "[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\n{extra}",
        mcp.url()
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = server.playbook().await;
    (mcp, server, pb)
}

#[tokio::test]
async fn search_lists_the_allowed_tools_ranked_by_terms() {
    let (mcp, server, pb) = setup("allowed = [\"lookup\", \"write\", \"slow\"]\n").await;
    let reply = server
        .get(&format!("{pb}/tool-servers/search?terms=write%20down"))
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    let servers = reply.body["servers"].as_array().expect("servers");
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0]["name"], "graph");
    assert_eq!(servers[0]["transport"], "http");
    let names: Vec<&str> = servers[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names[0], "write");
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["lookup", "slow", "write"]);
    assert_eq!(servers[0]["tools"][0]["model_name"], "graph__write");
    assert_eq!(servers[0]["tools"][0]["read_only"], false);
    // Searching calls no tool.
    assert!(mcp.calls().is_empty());
}

#[tokio::test]
async fn introspect_reads_one_tool_with_its_schema_and_not_found_names_what_to_do() {
    let (_mcp, server, pb) = setup("allowed = [\"lookup\"]\n").await;
    let reply = server
        .get(&format!("{pb}/tool-servers/graph/tools/lookup"))
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["model_name"], "graph__lookup");
    assert_eq!(reply.body["read_only"], true);
    assert_eq!(
        reply.body["input_schema"]["properties"]["q"]["maxLength"],
        200
    );
    let warnings = reply.body["warnings"].as_array().expect("warnings");
    assert!(
        warnings.iter().any(|w| w
            .as_str()
            .is_some_and(|w| w.starts_with("graph__lookup inputSchema#/properties/q/maxLength"))),
        "{warnings:?}"
    );
    let reply = server
        .get(&format!("{pb}/tool-servers/graph/tools/write"))
        .await;
    let problem = reply.assert_problem(404, "not_found");
    assert_eq!(
        problem["detail"],
        "The operator does not allow the tool write on graph; call search to see the tools allowed."
    );
    let reply = server
        .get(&format!("{pb}/tool-servers/other/tools/lookup"))
        .await;
    reply.assert_problem(404, "not_found");
}

#[tokio::test]
async fn execute_calls_once_as_a_run_would_and_records_the_call() {
    let (mcp, server, pb) = setup("").await;
    let reply = server
        .post(
            &format!("{pb}/tool-servers/graph/tools/lookup/execute"),
            json!({"arguments": {"q": "rust"}}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["content"], r#"lookup: {"q":"rust"}"#);
    assert_eq!(reply.body["is_error"], false);
    let calls = mcp.calls();
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0].meta["auto.on/run_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("execute-")),
        "{:#}",
        calls[0].meta
    );
    let events = server.all_events(&pb).await;
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types, ["tool_call_started", "tool_call_answered"]);
    assert_eq!(events[0]["id"], reply.body["event_id"]);
    assert_eq!(events[0]["data"]["arguments"], json!({"q": "rust"}));
    assert_eq!(events[1]["data"]["is_error"], false);
}

#[tokio::test]
async fn dry_run_reports_the_checks_and_calls_nothing() {
    let (mcp, server, pb) = setup("").await;
    let reply = server
        .post(
            &format!("{pb}/tool-servers/graph/tools/write/execute"),
            json!({"arguments": {"q": "x"}, "dry_run": true}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["dry_run"], true);
    assert_eq!(reply.body["read_only"], false);
    let checks: Vec<(&str, bool)> = reply.body["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .map(|c| (c["check"].as_str().unwrap_or(""), c["passed"] == true))
        .collect();
    assert_eq!(
        checks,
        [
            ("configured", true),
            ("allowed", true),
            ("listed", true),
            ("arguments_bytes", true)
        ]
    );
    assert!(mcp.calls().is_empty());
    assert!(server.all_events(&pb).await.is_empty());

    // Arguments past 16 KiB fail their check, and nothing is sent even without dry_run.
    let reply = server
        .post(
            &format!("{pb}/tool-servers/graph/tools/write/execute"),
            json!({"arguments": {"q": "y".repeat(16 * 1024)}}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["checks"][3]["passed"], false);
    assert_eq!(reply.body["content"], Value::Null);
    assert!(mcp.calls().is_empty());
}
