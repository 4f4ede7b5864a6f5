//! `auto tools search|show|call` against a real server whose tool server is the testkit's MCP
//! server: what a person reads, the arguments checked before any request, and a refusal.

mod common;

use auto_testkit::McpDouble;
use common::{Server, auto, code, serve_with_config, stderr, stdout};

async fn run(server: &Server, args: &[&str]) -> std::process::Output {
    let url = server.url.clone();
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::auto_at(&url, &args)
    })
    .await
    .expect("auto ends")
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_are_searched_shown_and_called_from_the_command_line() {
    let mcp = McpDouble::start().await;
    let server = serve_with_config(&format!(
        "[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\nallowed = [\"lookup\", \"write\"]\n",
        mcp.url()
    ));
    let url = server.url.clone();
    tokio::task::spawn_blocking(move || {
        let _ = common::auto_at(&url, &["org", "create", "acme"]);
        let _ = common::auto_at(&url, &["playbook", "create", "main"]);
    })
    .await
    .expect("setup");

    let output = run(&server, &["tools", "search", "write", "down"]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "graph (http)");
    assert!(
        lines[1].starts_with("  graph/write  Writes a thing down."),
        "{text}"
    );
    assert!(lines[2].starts_with("  graph/lookup  read-only"), "{text}");

    let output = run(&server, &["tools", "show", "graph", "lookup"]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        stdout(&output)
            .starts_with("graph/lookup  read-only\nthe model sees it as graph__lookup\n")
    );

    let output = run(
        &server,
        &["tools", "call", "graph", "lookup", r#"{"q": "rust"}"#],
    )
    .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "lookup: {\"q\":\"rust\"}\n");
    assert_eq!(mcp.calls().len(), 1);

    let output = run(
        &server,
        &["tools", "call", "graph", "write", "{}", "--dry-run"],
    )
    .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("ok   The arguments hold 2 bytes"),
        "{}",
        stderr(&output)
    );
    assert_eq!(mcp.calls().len(), 1);

    // Arguments that are not an object are refused before any request.
    let output = run(&server, &["tools", "call", "graph", "write", "[1]"]).await;
    assert_eq!(code(&output), 2, "{}", stderr(&output));
    assert!(stderr(&output).contains("the arguments must be a JSON object"));

    // A tool the operator does not allow: the problem document, exit 1.
    let output = run(&server, &["tools", "show", "graph", "deny"]).await;
    assert_eq!(code(&output), 1);
    assert!(
        stderr(&output).contains("does not allow the tool deny on graph"),
        "{}",
        stderr(&output)
    );
    let _ = auto;
}
