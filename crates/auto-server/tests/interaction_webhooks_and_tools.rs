//! Interaction functions that notify a webhook or ask a system through a tool, end to end
//! through HTTP: a webhook on loopback receives the request with its idempotency key, a
//! webhook that fails three times leaves the request `undelivered`, one that fails once is
//! tried again, one with a `secret` gets deliveries signed as Standard Webhooks says, which the
//! scheme's own Python library verifies and refuses once tampered with; a tool interaction answered by the scripted MCP server, its result refused by
//! the schema, a tool error, a server failure, the tool past the bound, arguments that are not
//! JSON, a tool not allowed or a server not bound, and a run whose call of a tool that writes
//! was cut off by a stop, which is never called again.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use auto_testkit::McpDouble;
use axum::http::{HeaderMap, StatusCode};
use common::{TestServer, wait_for};
use serde_json::{Value, json};

const NOTIFY: &str = include_str!("data/notify-owner-through-webhook.md");

/// One request the webhook received.
#[derive(Clone, Debug)]
struct Received {
    headers: HeaderMap,
    body: Value,
    /// The body's bytes as they came, which a signature covers.
    raw: String,
}

/// A webhook on loopback that answers each post with the next scripted status (the last one
/// again once the script is used), and keeps every post.
struct Hook {
    url: String,
    received: Arc<Mutex<Vec<Received>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Hook {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Hook {
    async fn start(statuses: &[u16]) -> Hook {
        let received = Arc::new(Mutex::new(Vec::<Received>::new()));
        let statuses = statuses.to_vec();
        let kept = received.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
                let kept = kept.clone();
                let statuses = statuses.clone();
                async move {
                    let mut kept = kept.lock().unwrap();
                    kept.push(Received {
                        headers,
                        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
                        raw: String::from_utf8_lossy(&body).into_owned(),
                    });
                    let status = statuses[(kept.len() - 1).min(statuses.len() - 1)];
                    let status = StatusCode::from_u16(status).unwrap();
                    (status, if status.is_success() { "" } else { "down" })
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Hook {
            url,
            received,
            task,
        }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

/// A file holding a secret, read as the configuration reads `{ file = ... }`.
fn secret_file(dir: &tempfile::TempDir, text: &str) -> String {
    let path = dir.path().join("secret");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

async fn run(
    server: &TestServer,
    pb: &str,
    name: &str,
    run_id: &str,
    input: Value,
) -> common::Reply {
    let body = json!({"run_id": run_id, "input": input});
    server.start_run(pb, "interaction", name, body).await
}

async fn run_events(server: &TestServer, pb: &str, run_id: &str) -> Vec<Value> {
    server.events(pb, &format!("run_id={run_id}")).await
}

/// Waits until `check` holds of the run's events, within 20 seconds.
async fn events_until(
    server: &TestServer,
    pb: &str,
    run_id: &str,
    check: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    wait_for(Duration::from_secs(20), "the run's events", || async {
        let events = run_events(server, pb, run_id).await;
        check(&events).then_some(events)
    })
    .await
}

async fn hook_server(hook: &Hook, dir: &tempfile::TempDir) -> (TestServer, String) {
    hook_server_with(hook, dir, "").await
}

/// The server of `hook_server` with more settings of the webhook `ops`.
async fn hook_server_with(
    hook: &Hook,
    dir: &tempfile::TempDir,
    settings: &str,
) -> (TestServer, String) {
    let config = format!(
        "[webhooks.ops]\nurl = \"{}\"\nheaders = {{ Authorization = {{ file = {:?} }} }}\nretry_delay = \"50ms\"\n{settings}",
        hook.url,
        secret_file(dir, "Bearer hook-token\n")
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "interaction", "notify-owner", NOTIFY)
        .await;
    (server, pb)
}

#[tokio::test]
async fn the_webhook_receives_the_request_with_its_idempotency_key() {
    let dir = tempfile::tempdir().unwrap();
    let hook = Hook::start(&[200]).await;
    let (server, pb) = hook_server(&hook, &dir).await;
    let reply = run(
        &server,
        &pb,
        "notify-owner",
        "n-1",
        json!({"owner": "ana@example.com"}),
    )
    .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let events = events_until(&server, &pb, "n-1", |events| {
        events.iter().any(|e| e["type"] == "request_delivered")
    })
    .await;
    let inbox = server.get(&format!("{pb}/requests")).await;
    let request = inbox.body["requests"][0].clone();
    let request_id = request["request_id"].as_str().unwrap();
    let received = hook.received();
    assert_eq!(received.len(), 1);
    let post = &received[0];
    assert_eq!(post.headers["idempotency-key"], request_id);
    assert_eq!(post.headers["authorization"], "Bearer hook-token");
    assert_eq!(post.headers["content-type"], "application/json");
    // Without a secret, nothing is signed.
    assert!(post.headers.get("webhook-signature").is_none());
    let mut expected = request.clone();
    expected["org"] = json!("acme");
    expected["playbook"] = json!("main");
    expected["how_to_answer"] = json!({
        "operation": "answer_interaction",
        "method": "POST",
        "path": format!("/v1/orgs/acme/playbooks/main/requests/{request_id}/answer"),
        "body": {"answer": "a JSON value that matches output_schema"},
    });
    assert_eq!(post.body, expected);
    assert_eq!(post.body["status"], "open");
    assert_eq!(post.body["to"], "ana@example.com");
    assert_eq!(
        post.body["message"],
        "Please approve the brief of ana@example.com.\n"
    );
    let delivered = events
        .iter()
        .find(|e| e["type"] == "request_delivered")
        .unwrap();
    assert_eq!(delivered["data"]["attempt"], 1);
    assert_eq!(delivered["data"]["status"], 200);
    assert_eq!(delivered["data"]["webhook"], "ops");
    assert_eq!(delivered["data"]["request_id"], request_id);

    let answered = server
        .post(
            &format!("{pb}/requests/{request_id}/answer"),
            json!({"answer": {"verdict": "approve"}}),
        )
        .await;
    assert_eq!(answered.status, 200, "{:#}", answered.body);
    let run = server.get(&format!("{pb}/runs/n-1")).await;
    assert_eq!(run.body["status"], "succeeded");
    assert_eq!(
        server.event_types(&pb, "n-1").await,
        [
            "run_started",
            "request_opened",
            "request_delivered",
            "request_answered",
            "run_succeeded"
        ]
    );
}

#[tokio::test]
async fn a_webhook_failing_three_times_leaves_the_request_undelivered() {
    let dir = tempfile::tempdir().unwrap();
    let hook = Hook::start(&[500]).await;
    let (server, pb) = hook_server(&hook, &dir).await;
    let reply = run(
        &server,
        &pb,
        "notify-owner",
        "n-2",
        json!({"owner": "ana@example.com"}),
    )
    .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let run = server.ended(&pb, "n-2", Duration::from_secs(20)).await;
    let inbox = server.get(&format!("{pb}/requests")).await;
    let request = &inbox.body["requests"][0];
    let request_id = request["request_id"].as_str().unwrap();
    assert_eq!(request["status"], "undelivered");
    assert_eq!(run["status"], "rejected");
    let problem = &run["problem"];
    assert_eq!(problem["reason"], "unanswered");
    assert_eq!(problem["kind"], "undelivered");
    assert_eq!(problem["status"], 410);
    assert_eq!(
        problem["title"],
        "The interaction function notify-owner was not answered"
    );
    assert_eq!(
        problem["detail"],
        format!(
            "The request {request_id} to ana@example.com could not be delivered to the webhook ops: its 3 attempts failed, the last because the webhook answered HTTP 500: down."
        )
    );
    let received = hook.received();
    assert_eq!(received.len(), 3);
    assert!(
        received
            .iter()
            .all(|r| r.headers["idempotency-key"] == request_id)
    );
    let events = run_events(&server, &pb, "n-2").await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "run_started",
            "request_opened",
            "request_delivery_failed",
            "request_delivery_failed",
            "request_delivery_failed",
            "request_undelivered",
            "run_rejected"
        ]
    );
    for (attempt, event) in events[2..5].iter().enumerate() {
        assert_eq!(event["data"]["attempt"], attempt + 1);
        assert_eq!(event["data"]["status"], 500);
        assert_eq!(
            event["data"]["message"],
            "the webhook answered HTTP 500: down"
        );
    }
    let late = server
        .post(
            &format!("{pb}/requests/{request_id}/answer"),
            json!({"answer": {"verdict": "approve"}}),
        )
        .await;
    let body = late.assert_problem(409, "conflict");
    assert_eq!(
        body["detail"],
        format!(
            "The request {request_id} could not be delivered and its run ended; it takes no answer now."
        )
    );
}

#[tokio::test]
async fn a_webhook_failing_once_is_tried_again_and_the_request_stays_answerable() {
    let dir = tempfile::tempdir().unwrap();
    let hook = Hook::start(&[503, 204]).await;
    let (server, pb) = hook_server(&hook, &dir).await;
    let reply = run(
        &server,
        &pb,
        "notify-owner",
        "n-3",
        json!({"owner": "o@example.com"}),
    )
    .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let events = events_until(&server, &pb, "n-3", |events| {
        events.iter().any(|e| e["type"] == "request_delivered")
    })
    .await;
    let failed = events
        .iter()
        .find(|e| e["type"] == "request_delivery_failed")
        .unwrap();
    assert_eq!(failed["data"]["attempt"], 1);
    assert_eq!(
        failed["data"]["message"],
        "the webhook answered HTTP 503: down"
    );
    let delivered = events
        .iter()
        .find(|e| e["type"] == "request_delivered")
        .unwrap();
    assert_eq!(delivered["data"]["attempt"], 2);
    assert_eq!(delivered["data"]["status"], 204);
    assert_eq!(hook.received().len(), 2);
    let open = server.get(&format!("{pb}/requests?status=open")).await;
    let request_id = open.body["requests"][0]["request_id"].as_str().unwrap();
    let answered = server
        .post(
            &format!("{pb}/requests/{request_id}/answer"),
            json!({"answer": {"verdict": "revise"}}),
        )
        .await;
    assert_eq!(answered.status, 200, "{:#}", answered.body);
    let run = server.get(&format!("{pb}/runs/n-3")).await;
    assert_eq!(run.body["output"], json!({"verdict": "revise"}));
}

/// A Standard Webhooks secret: `whsec_` and the base64 of 24 bytes, the fewest it takes.
const SIGNING_SECRET: &str = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";

#[tokio::test]
async fn a_webhook_with_a_secret_gets_deliveries_signed_as_standard_webhooks_says() {
    let dir = tempfile::tempdir().unwrap();
    let hook = Hook::start(&[503, 200]).await;
    let secret_path = dir.path().join("signing");
    std::fs::write(&secret_path, format!("{SIGNING_SECRET}\n")).unwrap();
    let settings = format!(
        "secret = {{ file = {:?} }}\n",
        secret_path.display().to_string()
    );
    let (server, pb) = hook_server_with(&hook, &dir, &settings).await;
    let reply = run(
        &server,
        &pb,
        "notify-owner",
        "s-1",
        json!({"owner": "ana@example.com"}),
    )
    .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    events_until(&server, &pb, "s-1", |events| {
        events.iter().any(|e| e["type"] == "request_delivered")
    })
    .await;
    let inbox = server.get(&format!("{pb}/requests")).await;
    let request_id = inbox.body["requests"][0]["request_id"].as_str().unwrap();
    let received = hook.received();
    assert_eq!(
        received.len(),
        2,
        "the first attempt failed, the second took it"
    );
    let key = auto_runtime::webhooks::SigningKey::from_whsec(SIGNING_SECRET).unwrap();
    let now = chrono::Utc::now().timestamp();
    for post in &received {
        // The message id is the request id on every attempt; the key of idempotency stays.
        assert_eq!(post.headers["webhook-id"], request_id);
        assert_eq!(post.headers["idempotency-key"], request_id);
        let timestamp: i64 = post.headers["webhook-timestamp"]
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            (now - 60..=now).contains(&timestamp),
            "{timestamp} vs {now}"
        );
        assert_eq!(
            post.headers["webhook-signature"],
            key.signature(request_id, timestamp, post.raw.as_bytes())
                .as_str()
        );
        assert!(
            !post.raw.contains(SIGNING_SECRET) && !post.raw.contains("C2FVsBQ"),
            "{}",
            post.raw
        );
    }

    // The scheme's own library, as a receiver runs it: the deliveries as received pass, a
    // changed body, an old timestamp or another secret do not.
    let Some(python) = auto_testkit::standard_webhooks_python() else {
        return;
    };
    let deliveries: Vec<Value> = received
        .iter()
        .map(|post| {
            let headers: serde_json::Map<String, Value> =
                ["webhook-id", "webhook-timestamp", "webhook-signature"]
                    .iter()
                    .map(|name| {
                        (
                            name.to_string(),
                            json!(post.headers[*name].to_str().unwrap()),
                        )
                    })
                    .collect();
            json!({"headers": headers, "body": post.raw})
        })
        .collect();
    let verdicts = verify_with_standard_webhooks(
        &python,
        &json!({"secret": SIGNING_SECRET, "deliveries": deliveries}),
    );
    assert_eq!(verdicts.len(), 2);
    for verdict in verdicts {
        assert_eq!(
            verdict,
            json!({
                "as_received": "ok",
                "tampered_body": "No matching signature found",
                "old_timestamp": "Message timestamp too old",
                "other_secret": "No matching signature found",
            })
        );
    }
}

/// Runs `tests/standardwebhooks/verify.py` on `order`: one verdict per delivery.
fn verify_with_standard_webhooks(python: &std::path::Path, order: &Value) -> Vec<Value> {
    use std::io::Write as _;
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/standardwebhooks/verify.py");
    let mut child = std::process::Command::new(python)
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} cannot start: {e}", python.display()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(order.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn a_webhook_that_is_not_configured_refuses_the_run_before_anyone_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let hook = Hook::start(&[200]).await;
    let (server, pb) = hook_server(&hook, &dir).await;
    server
        .save_definition(
            &pb,
            "interaction",
            "notify-team",
            &NOTIFY.replace("notify: ops", "notify: team"),
        )
        .await;
    let reply = run(&server, &pb, "notify-team", "t-1", json!({"owner": "o"})).await;
    let body = reply.assert_problem(503, "unavailable");
    assert_eq!(body["kind"], "webhook_not_configured");
    assert_eq!(
        body["title"],
        "The interaction function notify-team cannot notify"
    );
    assert_eq!(
        body["detail"],
        "The webhook team that notify names is not configured, so nobody was asked; ask the operator to configure it under [webhooks.team]. The webhooks configured: ops."
    );
    let inbox = server.get(&format!("{pb}/requests")).await;
    assert!(inbox.body["requests"].as_array().unwrap().is_empty());
    assert!(hook.received().is_empty());
}

// Tools.

const FIND_OWNER: &str = include_str!("data/find-owner-with-tool.md");

/// A server whose tool server `graph` is the scripted MCP double, bound to `acme`, with a
/// header secret and `extra` configuration; the interaction `ask-NAME` saved for each tool.
async fn tool_server(
    double: &McpDouble,
    dir: &tempfile::TempDir,
    extra: &str,
    tools: &[&str],
) -> (TestServer, String) {
    let config = format!(
        "[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\nheaders = {{ Authorization = {{ file = {:?} }} }}\n{extra}",
        double.url(),
        secret_file(dir, "Bearer tok-12345\n")
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = server.playbook().await;
    for tool in tools {
        server
            .save_definition(
                &pb,
                "interaction",
                &format!("ask-{tool}"),
                &FIND_OWNER.replace("TOOL", tool),
            )
            .await;
    }
    (server, pb)
}

#[tokio::test]
async fn a_tool_answers_and_its_result_is_the_output() {
    let double = McpDouble::start().await;
    double.add_json_tool("echo", "Answers its arguments as JSON.", false);
    let dir = tempfile::tempdir().unwrap();
    let (server, pb) = tool_server(&double, &dir, "", &["echo"]).await;
    let reply = run(&server, &pb, "ask-echo", "e-1", json!({"account": "a-1"})).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["status"], "succeeded");
    assert_eq!(reply.body["output"], json!({"account": "a-1"}));
    assert_eq!(reply.body["record"], json!({"tool": "graph/echo"}));
    let calls = double.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].arguments, json!({"account": "a-1", "ms": 0}));
    assert_eq!(calls[0].meta["auto.on/run_id"], "e-1");
    let events = run_events(&server, &pb, "e-1").await;
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "run_started",
            "tool_call_started",
            "tool_call_answered",
            "run_succeeded"
        ]
    );
    assert_eq!(events[1]["data"]["server"], "graph");
    assert_eq!(events[1]["data"]["tool"], "echo");
    assert_eq!(events[1]["data"]["read_only"], false);
    assert_eq!(
        events[1]["data"]["arguments"],
        json!({"account": "a-1", "ms": 0})
    );
    assert_eq!(events[2]["data"]["is_error"], false);
    // Asked again under its id, the run is what it recorded: the tool is not called again.
    let again = run(&server, &pb, "ask-echo", "e-1", json!({"account": "a-1"})).await;
    assert_eq!(again.body["output"], json!({"account": "a-1"}));
    assert_eq!(double.calls().len(), 1);
    // No request is left in the inbox: the tool answered.
    let inbox = server.get(&format!("{pb}/requests")).await;
    assert!(inbox.body["requests"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn structured_content_is_the_answer_and_must_match_the_schema() {
    let double = McpDouble::start().await;
    double.add_json_tool("echo", "Answers its arguments as JSON.", true);
    let dir = tempfile::tempdir().unwrap();
    let (server, pb) = tool_server(&double, &dir, "", &["structured", "echo"]).await;
    // `structured` answers {"rows": [1, 2]}: no account.
    let reply = run(
        &server,
        &pb,
        "ask-structured",
        "s-1",
        json!({"account": "a-1"}),
    )
    .await;
    let body = reply.assert_problem(503, "unavailable");
    assert_eq!(body["kind"], "tools_unfinished");
    assert_eq!(body["because"], "output_invalid");
    assert_eq!(
        body["title"],
        "The interaction function ask-structured could not finish after calling its tool"
    );
    assert_eq!(
        body["detail"],
        "The tool's result does not match the output schema: account: is required. The run called graph/structured (read-only), which only reads, so nothing was changed; a new run may ask again."
    );
    assert_eq!(body["issues"][0]["pointer"], "/output/account");
    // Text read as JSON is checked the same way.
    let long = run(
        &server,
        &pb,
        "ask-echo",
        "s-2",
        json!({"account": "a-123456"}),
    )
    .await;
    let body = long.assert_problem(503, "unavailable");
    assert_eq!(
        long.issue_messages(),
        ["account: expected at most 5 characters"]
    );
    assert_eq!(body["because"], "output_invalid");
}

#[tokio::test]
async fn a_tool_error_or_a_failing_server_ends_the_run_after_its_call() {
    let double = McpDouble::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (server, pb) = tool_server(&double, &dir, "", &["deny", "broken", "lookup"]).await;
    let denied = run(&server, &pb, "ask-deny", "d-1", json!({"account": "a-1"})).await;
    let body = denied.assert_problem(503, "unavailable");
    assert_eq!(body["kind"], "tools_unfinished");
    assert_eq!(body["because"], "tool_error");
    // The server's secret, which it echoed, is scrubbed out of the words.
    assert_eq!(
        body["detail"],
        "The tool answered with an error: denied by policy for [secret removed]. The run called graph/deny (read-only), which only reads, so nothing was changed; a new run may ask again."
    );
    let broken = run(&server, &pb, "ask-broken", "b-1", json!({"account": "a-1"})).await;
    let body = broken.assert_problem(409, "conflict");
    assert_eq!(body["kind"], "effect_unknown");
    assert_eq!(body["because"], "server_failed");
    assert_eq!(
        body["detail"],
        "The tool server failed during the call: it answered with an error: the backend failed for [secret removed]. The run called graph/broken; a tool its server does not mark read-only may already have changed something outside the playbook, so check before running the work again."
    );
    let failed = run_events(&server, &pb, "b-1").await;
    assert_eq!(failed[2]["type"], "tool_call_failed");
    assert_eq!(failed[2]["data"]["because"], "server_failure");
    // A result that is prose, not JSON.
    let prose = run(&server, &pb, "ask-lookup", "l-1", json!({"account": "a-1"})).await;
    let body = prose.assert_problem(503, "unavailable");
    assert_eq!(
        body["detail"],
        "The tool's result is text that is not JSON (expected value at line 1 column 1). The run called graph/lookup (read-only), which only reads, so nothing was changed; a new run may ask again."
    );
}

#[tokio::test]
async fn a_slow_tool_past_the_bound_ends_the_run() {
    let double = McpDouble::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (server, pb) = tool_server(
        &double,
        &dir,
        "[limits]\ninteraction_tool_bound_ms = 700\n",
        &["slow"],
    )
    .await;
    let started = Instant::now();
    let reply = run(
        &server,
        &pb,
        "ask-slow",
        "w-1",
        json!({"account": "a-1", "ms": 5000}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    let body = reply.assert_problem(503, "unavailable");
    assert_eq!(body["kind"], "tools_unfinished");
    assert_eq!(body["because"], "run_bound");
    assert_eq!(
        body["detail"],
        "The run reached its bound of 700 ms. The run called graph/slow (read-only), which only reads, so nothing was changed; a new run may ask again."
    );
    let events = run_events(&server, &pb, "w-1").await;
    assert_eq!(events[2]["type"], "tool_call_failed");
    assert_eq!(events[2]["data"]["because"], "timed_out");
    assert_eq!(
        events[2]["data"]["message"],
        "the tool did not answer within the run's 700 ms"
    );
}

#[tokio::test]
async fn a_tool_that_cannot_be_used_is_never_called() {
    let double = McpDouble::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (server, pb) = tool_server(
        &double,
        &dir,
        "allowed = [\"lookup\", \"write\"]\n",
        &["deny", "nothing"],
    )
    .await;
    let reply = run(&server, &pb, "ask-deny", "x-1", json!({"account": "a-1"})).await;
    let body = reply.assert_problem(503, "unavailable");
    assert_eq!(body["kind"], "tool_not_offered");
    assert_eq!(body["because"], "tool_not_allowed");
    assert_eq!(
        body["detail"],
        "The tool graph/deny is outside the tools the operator allows on graph, so it was not called; the server allows lookup, write."
    );
    let reply = run(
        &server,
        &pb,
        "ask-nothing",
        "x-2",
        json!({"account": "a-1"}),
    )
    .await;
    let body = reply.assert_problem(503, "unavailable");
    assert_eq!(body["because"], "tool_not_allowed");
    assert!(double.calls().is_empty());
    // Arguments that do not render JSON.
    let raw = FIND_OWNER
        .replace("TOOL", "lookup")
        .replace("{{ input.account | json }}", "{{ input.account }}");
    server
        .save_definition(&pb, "interaction", "ask-raw", &raw)
        .await;
    let reply = run(&server, &pb, "ask-raw", "x-3", json!({"account": "a-1"})).await;
    let body = reply.assert_problem(422, "invalid_input");
    assert_eq!(
        body["title"],
        "The interaction function ask-raw cannot render its arguments"
    );
    assert_eq!(
        reply.issue_messages(),
        [
            "Line 4: arguments renders text that is not JSON (expected value at line 1 column 13); write each value with the json filter, such as {{ input.account | json }}"
        ]
    );
    assert_eq!(body["issues"][0]["path"], "/arguments");
    assert!(double.calls().is_empty());
}

#[tokio::test]
async fn a_server_bound_to_other_playbooks_is_not_offered_and_a_listed_tool_is_required() {
    let double = McpDouble::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (server, pb) =
        tool_server(&double, &dir, "playbooks = [\"acme/other\"]\n", &["lookup"]).await;
    let reply = run(&server, &pb, "ask-lookup", "y-1", json!({"account": "a-1"})).await;
    let body = reply.assert_problem(503, "unavailable");
    assert_eq!(body["kind"], "tool_not_offered");
    assert_eq!(body["because"], "tool_server_not_configured");
    assert_eq!(
        body["detail"],
        "The tool server graph is not configured for this playbook, so the tool graph/lookup was not called; ask the operator to configure it under tool_servers."
    );
    let double_all = McpDouble::start().await;
    let dir = tempfile::tempdir().unwrap();
    let (server, pb) = tool_server(&double_all, &dir, "", &["missing"]).await;
    let reply = run(
        &server,
        &pb,
        "ask-missing",
        "y-2",
        json!({"account": "a-1"}),
    )
    .await;
    let body = reply.assert_problem(503, "unavailable");
    assert_eq!(body["because"], "tool_not_listed");
    assert_eq!(
        body["detail"],
        "The tool server graph does not list the tool missing, so it was not called; call search to see the tools it lists."
    );
    assert_eq!(
        body["title"],
        "The interaction function ask-missing cannot call its tool"
    );
}

/// A server stopped while the run called a tool that writes: the run, asked again once its
/// attempt is over, ends `effect_unknown` and the tool is not called again.
#[tokio::test]
async fn a_call_cut_off_by_a_stop_is_not_made_again_for_a_tool_that_writes() {
    let double = McpDouble::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\n[limits]\ninteraction_tool_bound_ms = 200\n",
        double.url()
    );
    let config = auto_server::config::Config::parse(&config).unwrap();
    let store = common::test_store(dir.path()).await;
    let server = TestServer::start_limited(
        store.clone(),
        Vec::new(),
        config.models().unwrap(),
        Default::default(),
        tempfile::tempdir().unwrap(),
    )
    .await;
    let pb = server.playbook().await;
    server
        .save_definition(
            &pb,
            "interaction",
            "ask-write",
            &FIND_OWNER.replace("TOOL", "write"),
        )
        .await;
    // What a stopped attempt leaves: the run started and its call recorded, without an answer.
    let playbook = auto_store::PlaybookRef::new("acme", "main");
    let input = json!({"account": "a-1"});
    let new = common::recorded_run("c-1", "interaction", "ask-write", input.clone());
    let event = |id: &str, event_type: &str, run_seq: i64, data: Value| {
        let mut event = auto_store::NewEvent::new(id, event_type, "/runs/c-1");
        event.run_id = Some("c-1".into());
        event.run_seq = Some(run_seq);
        event.data = Some(data);
        event
    };
    store
        .start_run(
            &playbook,
            new,
            vec![event("c-1-1", "run_started", 1, Value::Null)],
        )
        .await
        .unwrap();
    let started = json!({"number": 1, "server": "graph", "tool": "write", "read_only": false, "arguments_bytes": 26});
    store
        .record_run_events(
            &playbook,
            "c-1",
            vec![event("c-1-2", "tool_call_started", 2, started)],
        )
        .await
        .unwrap();
    // While an attempt may still be going on, the run is taken.
    let early = run(&server, &pb, "ask-write", "c-1", input.clone()).await;
    let body = early.assert_problem(409, "conflict");
    assert_eq!(body["kind"], "taken");
    // Past the bound and the commit margin, the run goes on from what it recorded.
    let body = wait_for(
        Duration::from_secs(20),
        "the run taken up again",
        || async {
            let reply = run(&server, &pb, "ask-write", "c-1", input.clone()).await;
            (reply.body["kind"] != "taken").then(|| reply.assert_problem(409, "conflict").clone())
        },
    )
    .await;
    assert_eq!(body["kind"], "effect_unknown");
    assert_eq!(body["because"], "call_outcome_unknown");
    assert_eq!(
        body["detail"],
        "The server restarted while the run called its tool, which its server does not mark read-only, so it was not called again. The run called graph/write; a tool its server does not mark read-only may already have changed something outside the playbook, so check before running the work again."
    );
    assert!(double.calls().is_empty());
    assert_eq!(
        server.event_types(&pb, "c-1").await,
        [
            "run_started",
            "tool_call_started",
            "tool_call_failed",
            "run_rejected"
        ]
    );
}
