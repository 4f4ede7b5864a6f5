//! Traces to an OpenTelemetry collector: `auto serve` with `[telemetry] otlp_endpoint` sends
//! a span per request, run, model call and tool call over OTLP/HTTP to a collector double that
//! reads them as a collector does, continues the trace a request's `traceparent` names, and
//! passes the trace on to the tool server.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use auto_testkit::{McpDouble, ProviderDouble, ProviderKind, Reply, ScriptedToolCall};
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use common::serve_with_config;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message;
use serde_json::{Value, json};

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN_ID: &str = "00f067aa0ba902b7";

/// One span as the collector kept it.
#[derive(Clone, Debug)]
struct Span {
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    name: String,
    kind: i32,
    attributes: HashMap<String, String>,
    service: String,
}

/// What the collector double received: each export's content type, and the spans it held.
#[derive(Default)]
struct Received {
    content_types: Vec<String>,
    spans: Vec<Span>,
}

/// A collector's OTLP/HTTP traces endpoint: protobuf or JSON by `Content-Type` as the
/// specification says, anything else refused with 415 and a body that does not decode with 400.
async fn collector() -> (String, Arc<Mutex<Received>>) {
    let received = Arc::new(Mutex::new(Received::default()));
    let kept = received.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        post(move |headers: HeaderMap, body: Bytes| {
            let kept = kept.clone();
            async move {
                let content_type = headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                let request = match content_type.as_str() {
                    "application/x-protobuf" => ExportTraceServiceRequest::decode(body).ok(),
                    "application/json" => serde_json::from_slice::<Value>(&body)
                        .ok()
                        .map(|_| ExportTraceServiceRequest::default()),
                    _ => return (StatusCode::UNSUPPORTED_MEDIA_TYPE, Vec::new()),
                };
                let Some(request) = request else {
                    return (StatusCode::BAD_REQUEST, Vec::new());
                };
                let mut kept = kept.lock().unwrap();
                kept.content_types.push(content_type);
                kept.spans.extend(spans_of(&request));
                // An empty ExportTraceServiceResponse: every span accepted.
                (StatusCode::OK, Vec::new())
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, received)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn spans_of(request: &ExportTraceServiceRequest) -> Vec<Span> {
    let mut spans = Vec::new();
    for resource in &request.resource_spans {
        let service = resource
            .resource
            .as_ref()
            .and_then(|r| r.attributes.iter().find(|a| a.key == "service.name"))
            .and_then(|a| a.value.as_ref())
            .and_then(|v| match &v.value {
                Some(Any::StringValue(s)) => Some(s.clone()),
                _ => None,
            })
            .unwrap_or_default();
        for scope in &resource.scope_spans {
            for span in &scope.spans {
                let attributes = span
                    .attributes
                    .iter()
                    .map(|a| {
                        let value = match a.value.as_ref().and_then(|v| v.value.as_ref()) {
                            Some(Any::StringValue(s)) => s.clone(),
                            Some(Any::IntValue(i)) => i.to_string(),
                            Some(Any::BoolValue(b)) => b.to_string(),
                            other => format!("{other:?}"),
                        };
                        (a.key.clone(), value)
                    })
                    .collect();
                spans.push(Span {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    name: span.name.clone(),
                    kind: span.kind,
                    attributes,
                    service: service.clone(),
                });
            }
        }
    }
    spans
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_is_traced_from_the_callers_traceparent_to_the_tool_server() {
    let (collector_url, received) = collector().await;
    let provider = ProviderDouble::start(ProviderKind::Anthropic).await;
    let mcp = McpDouble::start().await;
    let config = format!(
        "[providers.anthropic]\nbase_url = \"{}\"\n\n[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\n\n[telemetry]\notlp_endpoint = \"{collector_url}\"\n",
        provider.base_url(),
        mcp.url()
    );
    let mut server = serve_with_config(&config);
    let http = reqwest::Client::new();
    let traceparent = format!("00-{TRACE_ID}-{CALLER_SPAN_ID}-01");
    let send = |method: reqwest::Method, path: &str, body: Value| {
        http.request(method, format!("{}{path}", server.url))
            .header("traceparent", &traceparent)
            .json(&body)
            .send()
    };
    let save = async |def_type: &str, name: &str, source: &str| {
        let definition =
            json!({"type": def_type, "name": name, "source": source, "diagram": "none"});
        let path = "/v1/orgs/acme/playbooks/main/definitions";
        let saved = send(reqwest::Method::POST, path, definition).await;
        assert_eq!(saved.expect("an answer").status(), 201, "{def_type}/{name}");
    };
    let created = send(reqwest::Method::POST, "/v1/orgs", json!({"id": "acme"})).await;
    assert_eq!(created.expect("an answer").status(), 201);
    let pb = "/v1/orgs/acme/playbooks";
    let created = send(reqwest::Method::POST, pb, json!({"id": "main"})).await;
    assert_eq!(created.expect("an answer").status(), 201);
    let source = "---\nmodel: anthropic/claude-sonnet-4-5\ntools: [graph/lookup]\n---\nFind {{ input.q }}.\n";
    save("reasoning", "finder", source).await;
    provider.script([
        Reply::ToolCalls(vec![ScriptedToolCall {
            call_id: "c1".into(),
            name: "graph__lookup".into(),
            arguments: json!({"q": "rust"}),
        }]),
        Reply::Text("Rust is a language.".into()),
    ]);
    let runs = format!("{pb}/main/definitions/reasoning/finder/runs");
    let ran = send(
        reqwest::Method::POST,
        &runs,
        json!({"input": {"q": "rust"}}),
    )
    .await
    .expect("an answer");
    assert_eq!(ran.status(), 200);
    // A workflow that waits: its step after the timer is the scheduler's.
    let waits = "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: waits\n  version: 1.0.0\ndo:\n  - pause:\n      wait:\n        milliseconds: 50\n  - done:\n      set:\n        x: 1\n";
    save("workflow", "waits", waits).await;
    let runs = format!("{pb}/main/definitions/workflow/waits/runs");
    let started = send(reqwest::Method::POST, &runs, json!({"run_id": "w-1"}))
        .await
        .expect("an answer");
    assert_eq!(started.status(), 202);
    let run_url = format!("{}{pb}/main/runs/w-1", server.url);
    common::wait_for(
        std::time::Duration::from_secs(20),
        "the workflow's end",
        || async {
            let run: Value = http.get(&run_url).send().await.ok()?.json().await.ok()?;
            (run["status"] == "succeeded").then_some(())
        },
    )
    .await;
    // Stopping sends what the exporter still holds.
    assert!(server.terminate(), "{:#?}", server.log_lines());

    let received = received.lock().unwrap();
    assert!(!received.spans.is_empty(), "no span reached the collector");
    assert!(
        received
            .content_types
            .iter()
            .all(|c| c == "application/x-protobuf"),
        "{:?}",
        received.content_types
    );
    let spans = &received.spans;
    let named = |name: &str| -> Vec<&Span> { spans.iter().filter(|s| s.name == name).collect() };
    // The reasoning run, and the request it ran under.
    let run: Vec<&Span> = named("run")
        .into_iter()
        .filter(|s| s.attributes["definition"] == "reasoning/finder")
        .collect();
    assert_eq!(run.len(), 1, "{spans:#?}");
    let request = spans
        .iter()
        .find(|s| s.span_id == run[0].parent_span_id)
        .unwrap_or_else(|| panic!("the run's request in {spans:#?}"));
    assert_eq!(
        request.name,
        "POST /v1/orgs/{org}/playbooks/{pb}/definitions/{type}/{name}/runs"
    );
    // The request continues the caller's trace, under the caller's span.
    assert_eq!(request.trace_id, TRACE_ID);
    assert_eq!(request.parent_span_id, CALLER_SPAN_ID);
    assert_eq!(request.kind, SpanKind::Server as i32);
    assert_eq!(request.attributes["http.response.status_code"], "200");
    assert_eq!(request.attributes["org"], "acme");
    assert_eq!(request.attributes["playbook"], "main");
    assert_eq!(request.service, "auto");
    // The model's two calls and the tool's call under the run.
    let under_run = |span: &Span| {
        let mut at = span;
        while let Some(parent) = spans.iter().find(|s| s.span_id == at.parent_span_id) {
            if parent.span_id == run[0].span_id {
                return true;
            }
            at = parent;
        }
        false
    };
    let model_calls = named("chat claude-sonnet-4-5");
    assert_eq!(model_calls.len(), 2, "{spans:#?}");
    for call in &model_calls {
        assert!(under_run(call), "{call:#?}");
        assert_eq!(call.trace_id, TRACE_ID);
        assert_eq!(call.kind, SpanKind::Client as i32);
        assert_eq!(call.attributes["gen_ai.system"], "anthropic");
        assert_eq!(call.attributes["outcome"], "answered");
    }
    let tool_calls = named("tools/call lookup");
    assert_eq!(tool_calls.len(), 1, "{spans:#?}");
    assert!(under_run(tool_calls[0]));
    assert_eq!(tool_calls[0].attributes["server"], "graph");
    assert_eq!(tool_calls[0].attributes["outcome"], "answered");
    let steps: Vec<&Span> = named("step")
        .into_iter()
        .filter(|s| s.attributes.get("run_id").map(String::as_str) == Some("w-1"))
        .collect();
    assert!(!steps.is_empty(), "{spans:#?}");
    assert_eq!(steps[0].attributes["org"], "acme");
    assert_eq!(steps[0].attributes["playbook"], "main");
    // The step after the timer goes on in the trace of the request that started the run:
    // the work it carries out holds the trace context of the span that left it.
    for step in &steps {
        assert_eq!(step.trace_id, TRACE_ID, "{step:#?}");
        assert!(
            spans.iter().any(|s| s.span_id == step.parent_span_id),
            "the span that left the work, in {spans:#?}"
        );
    }
    // The tool server was told the trace it serves.
    let calls = mcp.calls();
    assert_eq!(calls.len(), 1);
    let passed = calls[0]
        .traceparent
        .clone()
        .unwrap_or_else(|| panic!("no traceparent in {:?}", calls[0]));
    assert!(passed.starts_with(&format!("00-{TRACE_ID}-")), "{passed}");
    assert!(!passed.contains(CALLER_SPAN_ID), "{passed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_json_is_sent_as_json_and_a_bad_setting_stops_the_server_with_its_name() {
    let (collector_url, received) = collector().await;
    let config = format!(
        "[telemetry]\notlp_endpoint = \"{collector_url}\"\nprotocol = \"http/json\"\nservice_name = \"auto-test\"\n"
    );
    let mut server = serve_with_config(&config);
    let answer = reqwest::get(format!("{}/healthz", server.url))
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 200);
    assert!(server.terminate());
    let received = received.lock().unwrap();
    assert!(!received.content_types.is_empty(), "nothing was exported");
    assert!(
        received
            .content_types
            .iter()
            .all(|c| c == "application/json"),
        "{:?}",
        received.content_types
    );

    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join("auto.toml"),
        "[telemetry]\notlp_endpoint = \"http://127.0.0.1:4318\"\nsample_ratio = 2\n",
    )
    .expect("the configuration");
    let output = std::process::Command::new(common::AUTO)
        .args(["serve", "--config", "auto.toml", "--listen", "127.0.0.1:0"])
        .current_dir(dir.path())
        .output()
        .expect("auto serve runs");
    assert_eq!(output.status.code(), Some(5), "a server that cannot start");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("telemetry.sample_ratio: expected a number from 0 to 1"),
        "{stderr}"
    );
}
