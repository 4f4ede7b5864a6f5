//! `auto tools search|show|call` against a real server whose tool server is the testkit's MCP
//! server: what a person reads, the arguments checked before any request, and a refusal; and
//! what a tool server started by command is given of the server's environment (the MCP
//! project's reference server, which prints its environment).

mod common;

use auto_testkit::{Everything, McpDouble};
use common::{Server, auto, code, serve_with_config, serve_with_env, stderr, stdout, wait_for};

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

/// Creates the org acme and its playbook main, as the commands' defaults name them.
async fn acme_main(server: &Server) {
    run(server, &["org", "create", "acme"]).await;
    run(server, &["playbook", "create", "main"]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_are_searched_shown_and_called_from_the_command_line() {
    let mcp = McpDouble::start().await;
    let server = serve_with_config(&format!(
        "[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\nallowed = [\"lookup\", \"write\"]\n",
        mcp.url()
    ));
    acme_main(&server).await;

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

/// What the server's environment holds beside the allow-list: a provider's key, which the tool
/// server must not see, and the token its entry's `env` names, which it must.
const SERVER_ONLY_SECRET: &str = "sk-ant-server-only-5f1e";
const NAMED_TOKEN: &str = "everything-token-7c2a";

#[tokio::test(flavor = "multi_thread")]
async fn a_command_is_given_the_allow_list_and_its_env_and_none_of_the_servers_secrets() {
    let Some(executable) = Everything::executable() else {
        return;
    };
    let server = serve_with_env(
        &format!(
            "[[tool_servers]]\nname = \"everything\"\ncommand = [{:?}, \"stdio\"]\norgs = [\"acme\"]\nenv = {{ EVERYTHING_TOKEN = {{ env = \"AUTO_TEST_EVERYTHING_TOKEN\" }} }}\n",
            executable.display().to_string()
        ),
        &[
            ("ANTHROPIC_API_KEY", SERVER_ONLY_SECRET),
            ("AUTO_TEST_EVERYTHING_TOKEN", NAMED_TOKEN),
        ],
    );
    acme_main(&server).await;

    let output = run(&server, &["tools", "call", "everything", "get-env", "{}"]).await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert!(!text.contains(SERVER_ONLY_SECRET), "{text}");
    let env: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let mut names: Vec<&str> = env.keys().map(String::as_str).collect();
    names.sort_unstable();
    let given = [
        "EVERYTHING_TOKEN",
        "HOME",
        "LOGNAME",
        "PATH",
        "SHELL",
        "TERM",
        "USER",
    ];
    assert!(
        names.iter().all(|name| given.contains(name)),
        "the tool server saw {names:?}"
    );
    assert!(names.contains(&"PATH") && names.contains(&"EVERYTHING_TOKEN"));
    assert_eq!(env["PATH"], std::env::var("PATH").expect("PATH"));
    // The named token reached the tool server; being a secret of the entry, it is removed from
    // what the caller reads of the result.
    assert_eq!(env["EVERYTHING_TOKEN"], "[secret removed]");
    assert!(!text.contains(NAMED_TOKEN), "{text}");
}

const GRAPH_TOKEN: &str = "Bearer graph-token-3b9d";

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_servers_header_repeated_in_its_refusal_is_kept_out_of_the_log() {
    let mcp = McpDouble::start().await;
    mcp.echo_authorization_on_streams();
    let server = serve_with_env(
        &format!(
            "[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\nheaders = {{ Authorization = {{ env = \"AUTO_TEST_GRAPH_TOKEN\" }} }}\n",
            mcp.url()
        ),
        &[("AUTO_TEST_GRAPH_TOKEN", GRAPH_TOKEN)],
    );
    acme_main(&server).await;
    let output = run(
        &server,
        &["tools", "call", "graph", "lookup", r#"{"q": "rust"}"#],
    )
    .await;
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(
        mcp.calls()[0].authorization.as_deref(),
        Some(GRAPH_TOKEN),
        "the tool server was sent its header"
    );
    // rmcp's transport logs the refused stream, with the header the server repeated in it.
    let within = std::time::Duration::from_secs(10);
    let refused = wait_for(within, "the refusal in the log", || async {
        server
            .log_lines()
            .into_iter()
            .find(|l| l.contains("fail to get common stream"))
    })
    .await;
    assert!(refused.contains("not for [secret removed]"), "{refused}");
    let lines = server.log_lines();
    assert!(
        lines.iter().all(|l| !l.contains("graph-token-3b9d")),
        "{lines:#?}"
    );
}
