//! `/metrics` scraped and parsed as Prometheus does: what the runtime counts of runs, steps,
//! model calls, tool calls, triggers and the work queue, and the process's own figures.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use auto_testkit::{McpDouble, ProviderDouble, ProviderKind, Reply, ScriptedToolCall};
use common::{TestServer, wait_for, workflow};
use serde_json::json;

const ON_BRIEF: &str = include_str!("data/start-on-a-high-priority-brief.yaml");

/// One sample of the page: its name, labels and value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// The page at `/metrics`, read by the OpenMetrics text grammar: `# HELP`, `# TYPE` and
/// `# UNIT` lines, samples `name{label="value",...} value` with `\\`, `\"` and `\n` escaped
/// in values, and `# EOF` last. Anything else fails the test.
async fn scrape(server: &TestServer) -> Vec<Sample> {
    let reply = server.get("/metrics").await;
    assert_eq!(reply.status, 200);
    let text = reply.body.as_str().expect("a text page").to_owned();
    let body = text
        .strip_suffix("# EOF\n")
        .expect("an OpenMetrics page ends with # EOF");
    body.lines()
        .filter(|line| {
            let comment = ["# HELP ", "# TYPE ", "# UNIT "]
                .iter()
                .any(|p| line.starts_with(p));
            assert!(comment || !line.starts_with('#'), "a stray comment: {line}");
            !comment
        })
        .map(|line| parse_sample(line).unwrap_or_else(|| panic!("not a sample: {line}")))
        .collect()
}

fn parse_sample(line: &str) -> Option<Sample> {
    let name_end = line.find(['{', ' '])?;
    let name = &line[..name_end];
    let name_ok = name.chars().enumerate().all(|(i, c)| {
        c.is_ascii_alphabetic() || c == '_' || c == ':' || (i > 0 && c.is_ascii_digit())
    });
    if name.is_empty() || !name_ok {
        return None;
    }
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(inner) = rest.strip_prefix('{') {
        rest = inner;
        while let Some((key, after)) = rest.split_once("=\"") {
            let key = key.strip_prefix(',').unwrap_or(key);
            let mut value = String::new();
            let mut chars = after.char_indices();
            let end = loop {
                match chars.next()? {
                    (at, '"') => break at,
                    (_, '\\') => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        other @ ('\\' | '"') => value.push(other),
                        _ => return None,
                    },
                    (_, other) => value.push(other),
                }
            };
            labels.insert(key.to_owned(), value);
            rest = &after[end + 1..];
            if !rest.starts_with([',', '}']) {
                return None;
            }
            if let Some(done) = rest.strip_prefix('}') {
                rest = done;
                break;
            }
        }
        if rest.starts_with('}') || rest.contains('=') {
            return None;
        }
    }
    let value = rest.strip_prefix(' ')?.split(' ').next()?.parse().ok()?;
    Some(Sample {
        name: name.to_owned(),
        labels,
        value,
    })
}

/// The value of the one sample of `name` whose labels include `labels`; `None` when there is
/// no such sample.
fn sample(page: &[Sample], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let found: Vec<f64> = page
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
        .collect();
    assert!(found.len() <= 1, "{name} {labels:?} matches {found:?}");
    found.first().copied()
}

fn value(page: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    sample(page, name, labels)
        .unwrap_or_else(|| panic!("no sample {name} {labels:?} among {page:#?}"))
}

#[test]
fn a_sample_line_is_read_with_its_escapes() {
    let read =
        parse_sample(r#"a_total{route="/v1/{org}",say="a \"b\" \\ c\nd"} 2.5"#).expect("a sample");
    assert_eq!(read.name, "a_total");
    assert_eq!(read.labels["route"], "/v1/{org}");
    assert_eq!(read.labels["say"], "a \"b\" \\ c\nd");
    assert_eq!(read.value, 2.5);
    assert!(parse_sample("b 1").is_some());
    assert!(parse_sample("b{x=\"1\"}").is_none());
    assert!(parse_sample("b{x=1} 1").is_none());
    assert!(parse_sample("9b 1").is_none());
}

fn function() -> String {
    "---\nmodel: anthropic/claude-sonnet-4-5\ntools: [graph/lookup]\n---\nFind {{ input.q }}.\n"
        .into()
}

#[tokio::test]
async fn runs_model_calls_and_tool_calls_are_counted_by_what_they_came_to() {
    let provider = ProviderDouble::start(ProviderKind::Anthropic).await;
    let mcp = McpDouble::start().await;
    let config = format!(
        "[providers.anthropic]\nbase_url = \"{}\"\n\n[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\n",
        provider.base_url(),
        mcp.url()
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "reasoning", "finder", &function())
        .await;
    // One run calls the tool once and answers; the provider then refuses the next run's call.
    provider.script([
        Reply::ToolCalls(vec![ScriptedToolCall {
            call_id: "c1".into(),
            name: "graph__lookup".into(),
            arguments: json!({"q": "rust"}),
        }]),
        Reply::Text("Rust is a language.".into()),
        Reply::error(400, "invalid_request_error", "prompt is too long"),
    ]);
    let body = json!({"input": {"q": "rust"}, "run_id": "m-1"});
    let answered = server.start_run(&pb, "reasoning", "finder", body).await;
    assert_eq!(answered.status, 200, "{:#}", answered.body);
    let body = json!({"input": {"q": "go"}, "run_id": "m-2"});
    let refused = server.start_run(&pb, "reasoning", "finder", body).await;
    let problem = &refused.body;
    assert!(refused.status.as_u16() >= 400, "{problem:#}");
    let reason = problem["reason"].as_str().expect("a reason").to_owned();
    let because = problem["because"].as_str().expect("a because").to_owned();

    let page = scrape(&server).await;
    let reasoning = [("type", "reasoning")];
    assert_eq!(value(&page, "auto_runs_started_total", &reasoning), 2.0);
    let succeeded = [
        ("type", "reasoning"),
        ("status", "succeeded"),
        ("reason", ""),
    ];
    assert_eq!(value(&page, "auto_runs_ended_total", &succeeded), 1.0);
    let rejected = [
        ("type", "reasoning"),
        ("status", "rejected"),
        ("reason", reason.as_str()),
    ];
    assert_eq!(value(&page, "auto_runs_ended_total", &rejected), 1.0);
    let duration = [("type", "reasoning"), ("status", "succeeded")];
    assert_eq!(
        value(&page, "auto_run_duration_seconds_count", &duration),
        1.0
    );

    let model = [("provider", "anthropic"), ("model", "claude-sonnet-4-5")];
    let with = |extra: (&'static str, &'static str)| {
        let mut labels = model.to_vec();
        labels.push(extra);
        labels
    };
    let answered_calls = with(("outcome", "answered"));
    assert_eq!(value(&page, "auto_model_calls_total", &answered_calls), 2.0);
    assert_eq!(
        value(
            &page,
            "auto_model_calls_total",
            &with(("outcome", "failed"))
        ),
        1.0
    );
    let failures = {
        let mut labels = model.to_vec();
        labels.push(("because", because.as_str()));
        labels
    };
    assert_eq!(
        value(&page, "auto_model_call_failures_total", &failures),
        1.0
    );
    assert!(value(&page, "auto_model_tokens_total", &with(("kind", "input"))) > 0.0);
    assert!(value(&page, "auto_model_tokens_total", &with(("kind", "output"))) > 0.0);
    assert_eq!(
        value(&page, "auto_model_call_duration_seconds_count", &model),
        3.0
    );
    let tool = [
        ("server", "graph"),
        ("tool", "lookup"),
        ("outcome", "answered"),
    ];
    assert_eq!(value(&page, "auto_tool_calls_total", &tool), 1.0);
    assert_eq!(
        value(
            &page,
            "auto_tool_call_duration_seconds_count",
            &[("server", "graph")]
        ),
        1.0
    );
    // Nothing was counted that did not happen.
    assert_eq!(
        sample(&page, "auto_runs_started_total", &[("type", "workflow")]),
        None
    );

    // The process, under Prometheus's own names.
    assert!(value(&page, "process_resident_memory_bytes", &[]) > 0.0);
    assert!(value(&page, "process_cpu_seconds_total", &[]) > 0.0);
    assert!(value(&page, "process_open_fds", &[]) > 0.0);
    // The requests this server answered are still counted.
    let runs_route = [
        ("method", "POST"),
        (
            "route",
            "/v1/orgs/{org}/playbooks/{pb}/definitions/{type}/{name}/runs",
        ),
        ("status", "200"),
    ];
    assert_eq!(value(&page, "auto_http_requests_total", &runs_route), 1.0);
}

#[tokio::test]
async fn a_trigger_start_its_workflow_steps_and_the_waiting_work_are_counted() {
    let server = TestServer::start_with_config("[scheduler]\nsweep_ms = 50\n").await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "workflow", "intake", ON_BRIEF)
        .await;
    // A run that waits an hour: its timer is work in the queue, due later.
    let waits = workflow("do:\n  - pause:\n      wait: PT1H\n");
    server
        .save_definition(&pb, "workflow", "waits", &waits)
        .await;
    let reply = server
        .start_run(&pb, "workflow", "waits", json!({"run_id": "w-1"}))
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);

    let published = server
        .post(
            &format!("{pb}/events"),
            json!({"type": "com.example.brief.submitted", "data": {"priority": "high", "brief": "spring"}}),
        )
        .await;
    assert_eq!(published.status, 201, "{:#}", published.body);
    let page = wait_for(
        Duration::from_secs(10),
        "the triggered run counted",
        || async {
            let page = scrape(&server).await;
            let ended = [("type", "workflow"), ("status", "succeeded")];
            sample(&page, "auto_runs_ended_total", &ended).map(|_| page)
        },
    )
    .await;
    let started = [("kind", "event"), ("outcome", "started")];
    assert_eq!(value(&page, "auto_trigger_starts_total", &started), 1.0);
    assert_eq!(
        value(&page, "auto_runs_started_total", &[("type", "workflow")]),
        2.0
    );
    let completed = value(
        &page,
        "auto_workflow_steps_total",
        &[("outcome", "completed")],
    );
    assert!(completed >= 1.0, "{completed}");
    assert_eq!(
        sample(&page, "auto_workflow_steps_total", &[("outcome", "failed")]),
        None
    );
    // The hour's timer waits in the queue, not due: nothing lags.
    assert!(value(&page, "auto_work_items", &[]) >= 1.0);
    assert_eq!(value(&page, "auto_work_due_items", &[]), 0.0);
    assert_eq!(value(&page, "auto_work_due_lag_seconds", &[]), 0.0);
}
