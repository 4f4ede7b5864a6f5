//! A server killed with SIGKILL in the middle of a tool call that is not read-only: after a
//! restart the run is not performed again from that call. The call ends `interrupted`, the run
//! ends `conflict`, kind `effect_unknown`, with `because: "call_outcome_unknown"`, and the tool
//! server's own log shows the tool called once.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use auto_testkit::{McpDouble, ProviderDouble, ProviderKind, Reply, ScriptedToolCall};
use serde_json::{Value, json};

const AUTO: &str = env!("CARGO_BIN_EXE_auto");

const NOTER: &str =
    "---\nmodel: anthropic/claude-sonnet-4-5\ntools: [notes/write]\n---\nNote {{ input.q }}.\n";

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("an address").port()
}

fn serve(dir: &std::path::Path, port: u16) -> Child {
    Command::new(AUTO)
        .args([
            "serve",
            "--config",
            "auto.toml",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("auto serve starts")
}

async fn wait_healthy(http: &reqwest::Client, base: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(reply) = http.get(format!("{base}/healthz")).send().await
            && reply.status().is_success()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{base} was not healthy within 30 s");
}

async fn post(http: &reqwest::Client, url: String, body: Value) -> (u16, Value) {
    let reply = http.post(url).json(&body).send().await.expect("a reply");
    let status = reply.status().as_u16();
    (status, reply.json().await.unwrap_or(Value::Null))
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
    let http = reqwest::Client::new();

    let port = free_port();
    let mut first = serve(dir.path(), port);
    let base = format!("http://127.0.0.1:{port}");
    wait_healthy(&http, &base).await;
    assert_eq!(
        post(&http, format!("{base}/v1/orgs"), json!({"id": "acme"}))
            .await
            .0,
        201
    );
    let pb_path = "/v1/orgs/acme/playbooks/main";
    assert_eq!(
        post(
            &http,
            format!("{base}/v1/orgs/acme/playbooks"),
            json!({"id": "main"})
        )
        .await
        .0,
        201
    );
    let (status, body) = post(
        &http,
        format!("{base}{pb_path}/definitions"),
        json!({"type": "reasoning", "name": "noter", "source": NOTER, "diagram": "none"}),
    )
    .await;
    assert_eq!(status, 201, "{body:#}");
    let request = json!({"input": {"q": "x"}, "run_id": "crash-tools-1"});
    let cut_off = {
        let (http, url, request) = (
            http.clone(),
            format!("{base}{pb_path}/definitions/reasoning/noter/runs"),
            request.clone(),
        );
        tokio::spawn(async move { http.post(url).json(&request).send().await })
    };
    // The tool call is under way at the tool server: the server is killed now.
    let calls = mcp.wait_for_calls(1, Duration::from_secs(30)).await;
    assert_eq!(calls.len(), 1);
    first.kill().expect("SIGKILL");
    first.wait().expect("the killed server's status");
    assert!(cut_off.await.expect("the client task").is_err());

    let port = free_port();
    let mut second = serve(dir.path(), port);
    let base = format!("http://127.0.0.1:{port}");
    wait_healthy(&http, &base).await;
    let runs = format!("{base}{pb_path}/definitions/reasoning/noter/runs");
    let deadline = Instant::now() + Duration::from_secs(60);
    let body = loop {
        let (status, body) = post(&http, runs.clone(), request.clone()).await;
        if body["kind"] != "taken" {
            assert_eq!(status, 409, "{body:#}");
            break body;
        }
        assert!(
            Instant::now() < deadline,
            "the run was never taken up again"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
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
    let events: Value = http
        .get(format!("{base}{pb_path}/events?run_id=crash-tools-1"))
        .send()
        .await
        .expect("events")
        .json()
        .await
        .expect("JSON");
    let failed = events["events"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["type"] == "tool_call_failed"))
        .expect("the interrupted call");
    assert_eq!(failed["data"]["because"], "interrupted");
    assert_eq!(failed["data"]["number"], 1);
    assert_eq!(double.requests().len(), 1);

    // Asked again, the same run id never runs that work again.
    let (status, again) = post(&http, runs, request).await;
    assert_eq!(status, 409, "{again:#}");
    assert_eq!(again["kind"], "tools_called", "{again:#}");
    assert_eq!(mcp.calls().len(), 1);
    second.kill().expect("stop");
    let _ = second.wait();
}

const READER: &str =
    "---\nmodel: anthropic/claude-sonnet-4-5\ntools: [notes/lookup]\n---\nFind {{ input.q }}.\n";

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
    let http = reqwest::Client::new();
    let port = free_port();
    let mut first = serve(dir.path(), port);
    let base = format!("http://127.0.0.1:{port}");
    wait_healthy(&http, &base).await;
    post(&http, format!("{base}/v1/orgs"), json!({"id": "acme"})).await;
    post(
        &http,
        format!("{base}/v1/orgs/acme/playbooks"),
        json!({"id": "main"}),
    )
    .await;
    let pb_path = "/v1/orgs/acme/playbooks/main";
    let (status, body) = post(
        &http,
        format!("{base}{pb_path}/definitions"),
        json!({"type": "reasoning", "name": "reader", "source": READER, "diagram": "none"}),
    )
    .await;
    assert_eq!(status, 201, "{body:#}");
    let request = json!({"input": {"q": "x"}, "run_id": "crash-tools-2"});
    let cut_off = {
        let (http, url, request) = (
            http.clone(),
            format!("{base}{pb_path}/definitions/reasoning/reader/runs"),
            request.clone(),
        );
        tokio::spawn(async move { http.post(url).json(&request).send().await })
    };
    assert_eq!(
        mcp.wait_for_calls(2, Duration::from_secs(30)).await.len(),
        2
    );
    first.kill().expect("SIGKILL");
    first.wait().expect("the killed server's status");
    assert!(cut_off.await.expect("the client task").is_err());

    double.script([Reply::Text("Found both.".into())]);
    let port = free_port();
    let mut second = serve(dir.path(), port);
    let base = format!("http://127.0.0.1:{port}");
    wait_healthy(&http, &base).await;
    let runs = format!("{base}{pb_path}/definitions/reasoning/reader/runs");
    let deadline = Instant::now() + Duration::from_secs(60);
    let body = loop {
        let (status, body) = post(&http, runs.clone(), request.clone()).await;
        if body["kind"] != "taken" {
            assert_eq!(status, 200, "{body:#}");
            break body;
        }
        assert!(
            Instant::now() < deadline,
            "the run was never taken up again"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
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
    let events: Value = http
        .get(format!("{base}{pb_path}/events?run_id=crash-tools-2"))
        .send()
        .await
        .expect("events")
        .json()
        .await
        .expect("JSON");
    let tool_events: Vec<(String, u64)> = events["events"]
        .as_array()
        .expect("events")
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
    second.kill().expect("stop");
    let _ = second.wait();
}
