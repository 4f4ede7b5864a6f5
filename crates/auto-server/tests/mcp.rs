//! MCP over Streamable HTTP, driven by a real MCP client: the tools of both endpoints, calls
//! that succeed and calls that are rejected, and keys.

mod common;

use auto_server::auth::{KeyEntry, Role, new_key};
use common::TestServer;
use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, ProtocolVersion, Tool};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ClientConfig>;

async fn try_connect(
    url: String,
    key: Option<&str>,
    version: ProtocolVersion,
) -> Result<Client, rmcp::service::ClientInitializeError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(key) = key {
        config = config.auth_header(key);
    }
    ClientConfig::default()
        .with_protocol_version(version)
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
}

async fn connect_with(url: String, key: Option<&str>, version: ProtocolVersion) -> Client {
    try_connect(url, key, version)
        .await
        .expect("the MCP client connects")
}

async fn connect(server: &TestServer, path: &str, key: Option<&str>) -> Client {
    connect_with(
        format!("{}{path}", server.url),
        key,
        ProtocolVersion::LATEST,
    )
    .await
}

async fn call(client: &Client, name: &str, arguments: Value) -> CallToolResult {
    let arguments = arguments
        .as_object()
        .expect("arguments are an object")
        .clone();
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await
        .expect("the call is answered")
}

/// The structured content of a call that succeeded.
fn ok(result: &CallToolResult) -> &Value {
    assert_eq!(result.is_error, Some(false), "{result:#?}");
    result
        .structured_content
        .as_ref()
        .expect("structured content")
}

/// The problem document of a rejected call, checked to be one.
fn problem(result: &CallToolResult, status: u16, reason: &str) -> Value {
    assert_eq!(result.is_error, Some(true), "{result:#?}");
    let text = &result.content[0].as_text().expect("a text block").text;
    let problem: Value = serde_json::from_str(text).expect("the text is a problem document");
    assert_eq!(problem["status"], json!(status), "{problem:#}");
    assert_eq!(problem["reason"], json!(reason), "{problem:#}");
    assert!(
        problem["type"]
            .as_str()
            .is_some_and(|t| t.starts_with("https://on.auto/problems/"))
    );
    problem
}

fn tool<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

fn required(tool: &Tool) -> Vec<String> {
    tool.input_schema["required"]
        .as_array()
        .expect("required")
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn the_server_endpoint_lists_every_operation_as_a_tool() {
    let server = TestServer::start().await;
    let client = connect(&server, "/mcp", None).await;
    let tools = client.list_all_tools().await.expect("the tools");
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    let expected: Vec<_> = auto_server::openapi::OPERATIONS
        .iter()
        .map(|op| op.name.to_owned())
        .collect();
    assert_eq!(names, expected);
    for name in [
        "create_org",
        "list_orgs",
        "get_org",
        "create_playbook",
        "list_playbooks",
        "get_playbook",
        "create_definition",
        "list_definitions",
        "get_definition",
        "update_definition",
        "retire_definition",
        "publish_event",
        "list_playbook_events",
        "get_event",
    ] {
        assert!(names.contains(&name.to_owned()), "{name}");
    }

    let read_only = |name: &str| {
        tool(&tools, name)
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
    };
    assert_eq!(read_only("list_playbook_events"), Some(true));
    assert_eq!(read_only("get_definition"), Some(true));
    assert_eq!(read_only("create_definition"), Some(false));

    let create = tool(&tools, "create_definition");
    let create_required = required(create);
    for field in ["org", "playbook", "type", "name", "source", "diagram"] {
        assert!(create_required.contains(&field.to_owned()), "{field}");
    }
    assert!(required(tool(&tools, "update_definition")).contains(&"diagram".to_owned()));
    let description = create.description.as_deref().unwrap();
    assert!(description.contains("diagram"), "{description}");
    // How a rejection comes back is said once, in the instructions, not in every tool.
    assert!(!description.contains("isError"), "{description}");
    let list = tool(&tools, "list_runs");
    let properties = &list.input_schema["properties"];
    assert_eq!(
        properties["status"]["enum"],
        json!(["started", "succeeded", "rejected", "failed"])
    );
    assert_eq!(properties["limit"]["type"], "integer");
    assert!(
        properties["reason"]["enum"]
            .as_array()
            .unwrap()
            .contains(&json!("unanswered"))
    );
    let run = tool(&tools, "run_definition");
    assert!(
        run.input_schema["properties"]["type"]["enum"]
            .as_array()
            .unwrap()
            .contains(&json!("prediction"))
    );
    assert_eq!(
        create.output_schema.as_ref().unwrap()["properties"]["version"]["type"],
        json!("integer")
    );
    assert_eq!(required(tool(&tools, "list_playbooks")), ["org"]);

    let info = client.peer_info().expect("the server's info");
    let implementation = info
        .server_info
        .as_ref()
        .expect("the server's name and version");
    assert_eq!(implementation.name, "auto");
    assert_eq!(implementation.version, env!("CARGO_PKG_VERSION"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn calls_run_the_operations_and_rejections_are_problem_documents() {
    let server = TestServer::start().await;
    let client = connect(&server, "/mcp", None).await;

    let org = call(&client, "create_org", json!({"id": "acme"})).await;
    assert_eq!(ok(&org)["id"], json!("acme"));
    let playbook = call(
        &client,
        "create_playbook",
        json!({"org": "acme", "id": "main", "title": "Main"}),
    )
    .await;
    assert_eq!(ok(&playbook)["title"], json!("Main"));

    let published = call(
        &client,
        "publish_event",
        json!({"org": "acme", "playbook": "main", "type": "com.acme.order", "data": {"n": 1}}),
    )
    .await;
    let event_id = ok(&published)["id"].as_str().unwrap().to_owned();
    let listed = call(
        &client,
        "list_playbook_events",
        json!({"org": "acme", "playbook": "main", "type": "com.acme.order", "limit": 10}),
    )
    .await;
    let events = ok(&listed)["events"].as_array().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["id"], json!(event_id));
    assert_eq!(events[0]["data"], json!({"n": 1}));

    // The same rejections as over HTTP, with their issues at the arguments' pointers.
    let taken = call(&client, "create_org", json!({"id": "acme"})).await;
    problem(&taken, 409, "conflict");
    let missing_diagram = call(
        &client,
        "create_definition",
        json!({"org": "acme", "playbook": "main", "type": "prediction", "name": "sum", "source": "ok"}),
    )
    .await;
    let missing = problem(&missing_diagram, 422, "invalid_input");
    assert_eq!(
        missing["issues"][0]["message"],
        json!("The field diagram is required."),
        "{missing:#}"
    );
    let bad_source = call(
        &client,
        "create_definition",
        json!({"org": "acme", "playbook": "main", "type": "prediction", "name": "sum",
               "source": "ok\nbad line", "diagram": "none"}),
    )
    .await;
    let issues = problem(&bad_source, 422, "invalid_input");
    assert_eq!(issues["issues"][0]["pointer"], json!("/source"));
    assert_eq!(issues["issues"][0]["line"], json!(2));
    let unknown = call(
        &client,
        "get_event",
        json!({"org": "acme", "playbook": "main", "event_id": "nope"}),
    )
    .await;
    problem(&unknown, 404, "not_found");
    let no_org = call(&client, "list_playbooks", json!({})).await;
    let no_org = problem(&no_org, 422, "invalid_input");
    assert_eq!(no_org["issues"][0]["pointer"], json!("/org"));

    // What MCP saved, HTTP reads.
    let created = call(
        &client,
        "create_definition",
        json!({"org": "acme", "playbook": "main", "type": "prediction", "name": "sum",
               "source": "Adds.", "overview": "Adds numbers.", "diagram": "none"}),
    )
    .await;
    assert_eq!(ok(&created)["version"], json!(1));
    let over_http = server
        .get("/v1/orgs/acme/playbooks/main/definitions/prediction/sum")
        .await;
    assert_eq!(over_http.body["overview"], json!("Adds numbers."));

    // An unknown tool is a protocol error, not a tool result.
    let unknown_tool = client
        .call_tool(CallToolRequestParams::new("no_such_tool"))
        .await;
    assert!(unknown_tool.is_err());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_playbooks_endpoint_reaches_that_playbook_only() {
    let server = TestServer::start().await;
    server.playbook().await;
    assert_eq!(
        server
            .post("/v1/orgs/acme/playbooks", json!({"id": "other"}))
            .await
            .status,
        201
    );
    let client = connect(&server, "/v1/orgs/acme/playbooks/main/mcp", None).await;
    let tools = client.list_all_tools().await.expect("the tools");
    assert!(tools.iter().all(|t| t.name != "create_org"));
    for tool in &tools {
        let properties = tool.input_schema["properties"].as_object().unwrap();
        assert!(!properties.contains_key("org"), "{}", tool.name);
        assert!(!properties.contains_key("playbook"), "{}", tool.name);
    }
    assert_eq!(required(tool(&tools, "get_definition")), ["type", "name"]);

    let published = call(&client, "publish_event", json!({"type": "com.acme.ping"})).await;
    ok(&published);
    let playbook = call(&client, "get_playbook", json!({})).await;
    assert_eq!(ok(&playbook)["id"], json!("main"));
    assert_eq!(
        server
            .all_events("/v1/orgs/acme/playbooks/other")
            .await
            .len(),
        0
    );

    // Naming another playbook is refused, not followed.
    let elsewhere = call(
        &client,
        "list_playbook_events",
        json!({"org": "acme", "playbook": "other"}),
    )
    .await;
    let refused = problem(&elsewhere, 422, "invalid_input");
    assert_eq!(refused["issues"][0]["pointer"], json!("/org"));
    let elsewhere = call(
        &client,
        "create_definition",
        json!({"playbook": "other", "type": "computation", "name": "x", "source": "a", "diagram": "none"}),
    )
    .await;
    problem(&elsewhere, 422, "invalid_input");
    assert!(
        server
            .get("/v1/orgs/acme/playbooks/other/definitions")
            .await
            .body["definitions"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn keys_and_roles_apply_as_over_http() {
    let (admin_key, admin_hash) = new_key();
    let (viewer_key, viewer_hash) = new_key();
    let (stranger_key, stranger_hash) = new_key();
    let server = TestServer::start_with_keys(vec![
        KeyEntry::new("boss", "acme", Role::Admin, &admin_hash).unwrap(),
        KeyEntry::new("reader", "acme", Role::Viewer, &viewer_hash).unwrap(),
        KeyEntry::new("stranger", "globex", Role::Admin, &stranger_hash).unwrap(),
    ])
    .await;
    let admin = connect(&server, "/mcp", Some(&admin_key)).await;
    ok(&call(&admin, "create_org", json!({"id": "acme"})).await);
    ok(&call(
        &admin,
        "create_playbook",
        json!({"org": "acme", "id": "main"}),
    )
    .await);

    let viewer = connect(&server, "/mcp", Some(&viewer_key)).await;
    ok(&call(&viewer, "list_playbooks", json!({"org": "acme"})).await);
    let publish = call(
        &viewer,
        "publish_event",
        json!({"org": "acme", "playbook": "main", "type": "x"}),
    )
    .await;
    problem(&publish, 403, "forbidden");

    // A key of another org: forbidden on every call into acme.
    let stranger = connect(&server, "/mcp", Some(&stranger_key)).await;
    let read = call(&stranger, "list_playbooks", json!({"org": "acme"})).await;
    problem(&read, 403, "forbidden");
    let stranger_url = format!("{}/v1/orgs/acme/playbooks/main/mcp", server.url);
    let scoped = try_connect(stranger_url, Some(&stranger_key), ProtocolVersion::LATEST).await;
    let Err(refused) = scoped else {
        panic!("a key of another org connected to its playbook's endpoint");
    };
    let refused = refused.to_string();
    assert!(refused.contains("403"), "{refused}");

    // No key, or an unknown one: nothing is served.
    let url = format!("{}/mcp", server.url);
    assert!(
        try_connect(url.clone(), None, ProtocolVersion::LATEST)
            .await
            .is_err()
    );
    assert!(
        try_connect(url, Some("auto_wrong"), ProtocolVersion::LATEST)
            .await
            .is_err()
    );
    let reply = server
        .raw(
            reqwest::Method::POST,
            "/mcp",
            Some("application/json"),
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_vec(),
        )
        .await;
    let problem = reply.assert_problem(401, "forbidden");
    assert_eq!(problem["kind"], "unauthenticated", "{problem:#}");
    for client in [admin, viewer, stranger] {
        client.cancel().await.unwrap();
    }
}

#[tokio::test]
async fn a_client_of_an_older_protocol_initializes_and_calls() {
    let server = TestServer::start().await;
    let url = format!("{}/mcp", server.url);
    let client = connect_with(url, None, ProtocolVersion::LATEST_WITH_INITIALIZE).await;
    let info = client.peer_info().expect("the server's info");
    assert_eq!(info.server_info.as_ref().unwrap().name, "auto");
    ok(&call(&client, "create_org", json!({"id": "acme"})).await);
    let orgs = call(&client, "list_orgs", json!({})).await;
    assert_eq!(ok(&orgs)["orgs"][0]["id"], json!("acme"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn send_run_event_hands_an_event_to_a_listening_run() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let source = "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: hear\n  version: 1.0.0\ndo:\n  - hear:\n      listen:\n        to:\n          one:\n            with: { type: com.acme.go }\n";
    server
        .save_definition(&pb, "workflow", "hear", source)
        .await;
    let started = server
        .post(
            &format!("{pb}/definitions/workflow/hear/runs"),
            json!({"run_id": "h-1"}),
        )
        .await;
    assert_eq!(started.status, 202, "{:#}", started.body);
    let client = connect(&server, "/mcp", None).await;
    let scope = json!({"org": "acme", "playbook": "main"});
    let mut arguments = scope.clone();
    arguments["run_id"] = json!("nobody");
    arguments["type"] = json!("com.acme.go");
    problem(
        &call(&client, "send_run_event", arguments.clone()).await,
        404,
        "not_found",
    );
    arguments["run_id"] = json!("h-1");
    arguments["id"] = json!("go-1");
    arguments["data"] = json!({"go": true});
    let sent = call(&client, "send_run_event", arguments).await;
    assert_eq!(
        ok(&sent),
        &json!({"run_id": "h-1", "id": "go-1", "duplicate": false})
    );
    let run = server
        .ended(&pb, "h-1", std::time::Duration::from_secs(10))
        .await;
    assert_eq!(run["output"], json!([{"go": true}]), "{run:#}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn dry_run_is_a_read_only_tool_that_checks_a_call_and_makes_none() {
    let double = auto_testkit::McpDouble::start().await;
    let server = TestServer::start_with_config(&format!(
        "[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\n",
        double.url()
    ))
    .await;
    server.playbook().await;
    let client = connect(&server, "/v1/orgs/acme/playbooks/main/mcp", None).await;
    let tools = client.list_all_tools().await.expect("the tools");
    let dry_run = tools.iter().find(|t| t.name == "dry_run").expect("dry_run");
    assert_eq!(
        dry_run.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );
    // The flag is the tool's own, not an argument.
    assert!(dry_run.input_schema["properties"].get("dry_run").is_none());
    let result = call(
        &client,
        "dry_run",
        json!({"server": "graph", "tool": "write", "arguments": {"q": "x"}}),
    )
    .await;
    let body = ok(&result);
    assert_eq!(body["dry_run"], true, "{body:#}");
    assert_eq!(body["read_only"], false);
    assert!(double.calls().is_empty());
    // execute makes the call.
    let result = call(
        &client,
        "execute",
        json!({"server": "graph", "tool": "write", "arguments": {"q": "x"}}),
    )
    .await;
    assert_eq!(ok(&result)["dry_run"], false);
    assert_eq!(double.calls().len(), 1);
}

#[tokio::test]
async fn the_formats_are_resources_and_the_common_jobs_prompts_on_every_endpoint() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, ResourceContents};
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    for path in ["/mcp".to_owned(), format!("{pb}/mcp")] {
        let client = connect(&server, &path, None).await;
        let info = client.peer_info().expect("the server's info");
        let implementation = info.server_info.as_ref().unwrap();
        assert_eq!(implementation.name, "auto");
        assert_eq!(
            implementation.title.as_deref(),
            Some("auto: durable runtime for AI playbooks")
        );
        let instructions = info.instructions.as_deref().unwrap();
        assert!(
            instructions.contains("auto://docs/workflow-format"),
            "{instructions}"
        );
        assert!(instructions.contains("write_workflow"), "{instructions}");

        let tools = client.list_all_tools().await.expect("the tools");
        assert_eq!(
            tool(&tools, "run_definition").title.as_deref(),
            Some("auto: run a definition")
        );
        assert!(tools.iter().all(|t| {
            t.title
                .as_deref()
                .is_some_and(|title| title.starts_with("auto: "))
        }));

        let resources = client.list_all_resources().await.expect("the resources");
        let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        assert_eq!(
            uris,
            [
                "auto://docs/reasoning-format",
                "auto://docs/workflow-format",
                "auto://docs/interaction-format",
                "auto://docs/computation-format",
                "auto://docs/recall-format",
                "auto://docs/prediction-format",
                "auto://docs/output-shapes",
            ]
        );
        for resource in &resources {
            assert_eq!(resource.mime_type.as_deref(), Some("text/markdown"));
            assert!(
                resource
                    .title
                    .as_deref()
                    .is_some_and(|t| t.starts_with("auto: the "))
            );
            assert!(resource.description.is_some());
        }
        let read = client
            .read_resource(ReadResourceRequestParams::new("auto://docs/output-shapes"))
            .await
            .expect("the resource");
        let ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text,
            ..
        } = &read.contents[0]
        else {
            panic!("{read:#?}");
        };
        assert_eq!(uri, "auto://docs/output-shapes");
        assert_eq!(mime_type.as_deref(), Some("text/markdown"));
        assert_eq!(
            text,
            &std::fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../docs/definitions/output-shapes.md"
            ))
            .unwrap()
        );
        let missing = client
            .read_resource(ReadResourceRequestParams::new("auto://docs/nope"))
            .await
            .expect_err("no such resource");
        let rmcp::ServiceError::McpError(error) = missing else {
            panic!("{missing:?}");
        };
        // -32002, which the SDK makes -32602 for a client of protocol 2026-07-28 (SEP-2164).
        assert!(
            [
                rmcp::model::ErrorCode::RESOURCE_NOT_FOUND,
                rmcp::model::ErrorCode::INVALID_PARAMS
            ]
            .contains(&error.code),
            "{error:?}"
        );
        assert_eq!(
            error.message,
            "There is no resource auto://docs/nope: list the resources to see them."
        );

        let prompts = client.list_all_prompts().await.expect("the prompts");
        let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["write_reasoning_function", "write_workflow"]);
        let arguments = json!({"purpose": "sum the days of two months", "name": "two-months"});
        let prompt = client
            .get_prompt(
                GetPromptRequestParams::new("write_workflow")
                    .with_arguments(arguments.as_object().unwrap().clone()),
            )
            .await
            .expect("the prompt");
        let messages = serde_json::to_value(&prompt.messages).unwrap();
        assert_eq!(
            messages[0]["content"]["resource"]["uri"],
            "auto://docs/workflow-format"
        );
        let steps = messages[1]["content"]["text"].as_str().unwrap();
        assert!(
            steps.contains("check_definition: type workflow, name two-months"),
            "{steps}"
        );
        let scoped = path != "/mcp";
        assert_eq!(steps.contains("take no org or playbook"), scoped, "{steps}");

        let refused = client
            .get_prompt(GetPromptRequestParams::new("write_workflow"))
            .await
            .expect_err("the purpose is required");
        let rmcp::ServiceError::McpError(error) = refused else {
            panic!("{refused:?}");
        };
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert!(
            error
                .message
                .starts_with("The prompt write_workflow needs purpose"),
            "{}",
            error.message
        );
        client.cancel().await.unwrap();
    }
}
