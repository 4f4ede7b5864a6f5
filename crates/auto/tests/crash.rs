//! A server killed with SIGKILL in the middle of a reasoning run's model call: after a restart,
//! a request with the run's id is refused as `taken` while the run's last event is recent, then
//! goes on with the run from its events: the call cut off ends as `interrupted`, the call is
//! made again under the next number, and every number has exactly one ending.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use auto_testkit::{ProviderDouble, ProviderKind, Reply};
use serde_json::{Value, json};

const AUTO: &str = env!("CARGO_BIN_EXE_auto");

const REVIEW: &str = r#"---
model: anthropic/claude-sonnet-4-5
config:
  max_output_tokens: 200
---
{% system %}Review the brief.{% endsystem %}
Brief: {{ input.brief }}
"#;

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    listener.local_addr().expect("an address").port()
}

fn serve(dir: &std::path::Path, port: u16) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("server.log"))
        .expect("a log file");
    Command::new(AUTO)
        .args([
            "serve",
            "--config",
            "auto.toml",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
        .current_dir(dir)
        .env("RUST_LOG", "debug")
        .stdout(Stdio::null())
        .stderr(Stdio::from(log))
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
async fn a_run_cut_off_by_sigkill_finishes_after_a_restart() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    double.script([Reply::Hang]);
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join("auto.toml"),
        format!(
            "database = \"sqlite://auto.db\"\n[providers.anthropic]\nbase_url = \"{}\"\napi_key = {{ file = \"key\" }}\n[limits]\nmodel_call_bound_ms = 6000\n",
            double.base_url()
        ),
    )
    .expect("the configuration");
    std::fs::write(dir.path().join("key"), "sk-ant-crash-test-secret").expect("the key");
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
    let pb = format!("{base}/v1/orgs/acme/playbooks/main");
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
        format!("{pb}/definitions"),
        json!({"type": "reasoning", "name": "review", "source": REVIEW, "diagram": "none"}),
    )
    .await;
    assert_eq!(status, 201, "{body:#}");

    let runs = format!("{pb}/definitions/reasoning/review/runs");
    let request = json!({"input": {"brief": "Autumn range"}, "run_id": "crash-1"});
    let cut_off = {
        let (http, runs, request) = (http.clone(), runs.clone(), request.clone());
        tokio::spawn(async move { http.post(runs).json(&request).send().await })
    };
    double.wait_for_requests(1, Duration::from_secs(20)).await;
    first.kill().expect("SIGKILL");
    first.wait().expect("the killed server's status");
    assert!(cut_off.await.expect("the client task").is_err());

    double.script([Reply::Text("After the restart.".into())]);
    let port = free_port();
    let mut second = serve(dir.path(), port);
    let base = format!("http://127.0.0.1:{port}");
    wait_healthy(&http, &base).await;
    let pb = format!("{base}/v1/orgs/acme/playbooks/main");
    let runs = format!("{pb}/definitions/reasoning/review/runs");

    // The run's last event is recent: the attempt that wrote it may still be going on.
    let (status, body) = post(&http, runs.clone(), request.clone()).await;
    assert_eq!(status, 409, "{body:#}");
    assert_eq!(body["kind"], "taken", "{body:#}");

    let deadline = Instant::now() + Duration::from_secs(60);
    let body = loop {
        let (status, body) = post(&http, runs.clone(), request.clone()).await;
        if status == 200 {
            break body;
        }
        assert_eq!(body["kind"], "taken", "{body:#}");
        assert!(
            Instant::now() < deadline,
            "the run was never taken up again"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(body["output"], "After the restart.");
    assert_eq!(double.requests().len(), 2);

    let events: Value = http
        .get(format!("{pb}/events?run_id=crash-1"))
        .send()
        .await
        .expect("events")
        .json()
        .await
        .expect("JSON");
    let calls: Vec<(String, u64)> = events["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| {
            e["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("model_call_"))
        })
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_owned(),
                e["data"]["number"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("model_call_started".to_owned(), 1),
            ("model_call_failed".to_owned(), 1),
            ("model_call_started".to_owned(), 2),
            ("model_call_answered".to_owned(), 2),
        ]
    );
    let failed = events["events"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["type"] == "model_call_failed"))
        .expect("the interrupted call");
    assert_eq!(failed["data"]["because"], "interrupted");

    // Asked again, the run is answered from its record.
    let (status, again) = post(&http, runs, request).await;
    assert_eq!((status, &again["output"]), (200, &body["output"]));
    assert_eq!(double.requests().len(), 2);
    second.kill().expect("stop");
    let _ = second.wait();

    // The key went to the provider, and to no log line of either server.
    assert_eq!(
        double.requests()[1].header("x-api-key"),
        Some("sk-ant-crash-test-secret")
    );
    let log = std::fs::read_to_string(dir.path().join("server.log")).expect("the log");
    assert!(
        log.contains("model call answered"),
        "the log shows the call"
    );
    assert!(!log.contains("crash-test-secret"), "{log}");
}

const DAYS: &str = r#"---
description: How many days a month has
---
```ts
export default function (input: { month: string }) {
  const [year, month] = input.month.split("-").map(Number);
  return { days: new Date(Date.UTC(year, month, 0)).getUTCDate() };
}
```
"#;

const LATER: &str = "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: later\n  version: 1.0.0\ndo:\n  - pause:\n      wait: PT3S\n  - count:\n      call: run_definition\n      with:\n        type: computation\n        name: days\n        input: { month: '${ $data.month }' }\n";

const NAP: &str = "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: nap\n  version: 1.0.0\ndo:\n  - pause:\n      wait: PT3S\n  - up:\n      set: { slept: '${ $data.n }' }\n";

const PARENT: &str = "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: parent\n  version: 1.0.0\ndo:\n  - child:\n      call: run_definition\n      with:\n        type: workflow\n        name: nap\n        input: { n: '${ $data.n }' }\n";

const APPROVE: &str = r#"---
description: Asks the owner to approve
to: '{{ input.owner }}'
expires: PT1H
input:
  schema:
    type: object
    required: [owner]
    properties:
      owner: { type: string }
output:
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, revise] }
---
Please approve the plan, {{ input.owner }}.
"#;

const ASK: &str = "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: ask\n  version: 1.0.0\ndo:\n  - approval:\n      call: run_definition\n      with:\n        type: interaction\n        name: approve\n        input: { owner: '${ $data.owner }' }\n";

async fn get(http: &reqwest::Client, url: String) -> Value {
    http.get(url)
        .send()
        .await
        .expect("a reply")
        .json()
        .await
        .expect("JSON")
}

/// The runs of a type, up to 1,000.
async fn runs_of(http: &reqwest::Client, pb: &str, query: &str) -> Vec<Value> {
    get(http, format!("{pb}/runs?{query}&limit=1000")).await["runs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// Two hundred workflows waiting when the server is killed with SIGKILL: a hundred on timers
/// (then a call of a computation), fifty on a child workflow that waits, fifty on a person's
/// answer. The next server fires every timer, hears every child's ending, takes every answer,
/// and every run ends as it would have, with no child run started twice.
#[tokio::test(flavor = "multi_thread")]
async fn waiting_workflows_outlast_a_sigkill() {
    const TIMERS: usize = 100;
    const CALLS: usize = 50;
    const ASKS: usize = 50;
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join("auto.toml"),
        "database = \"sqlite://auto.db\"\n",
    )
    .expect("the configuration");
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
    let pb = format!("{base}/v1/orgs/acme/playbooks/main");
    for (def_type, name, source) in [
        ("computation", "days", DAYS),
        ("workflow", "later", LATER),
        ("workflow", "nap", NAP),
        ("workflow", "parent", PARENT),
        ("interaction", "approve", APPROVE),
        ("workflow", "ask", ASK),
    ] {
        let (status, body) = post(
            &http,
            format!("{pb}/definitions"),
            json!({"type": def_type, "name": name, "source": source, "diagram": "none"}),
        )
        .await;
        assert_eq!(status, 201, "{name}: {body:#}");
    }
    let start = |name: &'static str, run_id: String, input: Value| {
        let (http, pb) = (http.clone(), pb.clone());
        async move {
            let (status, body) = post(
                &http,
                format!("{pb}/definitions/workflow/{name}/runs"),
                json!({"input": input, "run_id": run_id}),
            )
            .await;
            assert_eq!(status, 202, "{body:#}");
        }
    };
    for i in 0..TIMERS {
        let month = format!("2024-{:02}", i % 12 + 1);
        start("later", format!("later-{i}"), json!({ "month": month })).await;
    }
    for i in 0..CALLS {
        start("parent", format!("parent-{i}"), json!({ "n": i })).await;
    }
    for i in 0..ASKS {
        start(
            "ask",
            format!("ask-{i}"),
            json!({ "owner": format!("owner-{i}") }),
        )
        .await;
    }
    // Every child and request is under way before the kill.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let naps = runs_of(&http, &pb, "type=workflow&name=nap").await.len();
        let asked = get(&http, format!("{pb}/requests?status=open&limit=1000")).await["requests"]
            .as_array()
            .map_or(0, Vec::len);
        if naps == CALLS && asked == ASKS {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "children under way: {naps} naps, {asked} requests"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    first.kill().expect("SIGKILL");
    first.wait().expect("the killed server's status");

    let port = free_port();
    let mut second = serve(dir.path(), port);
    let base = format!("http://127.0.0.1:{port}");
    wait_healthy(&http, &base).await;
    let pb = format!("{base}/v1/orgs/acme/playbooks/main");
    // The requests outlived the server: each is answered through the next one.
    let open = get(&http, format!("{pb}/requests?status=open&limit=1000")).await;
    let open = open["requests"].as_array().expect("the inbox").clone();
    assert_eq!(open.len(), ASKS);
    for request in &open {
        let id = request["request_id"].as_str().expect("an id");
        let (status, body) = post(
            &http,
            format!("{pb}/requests/{id}/answer"),
            json!({"answer": {"verdict": "approve"}}),
        )
        .await;
        assert_eq!(status, 200, "{body:#}");
    }
    let deadline = Instant::now() + Duration::from_secs(90);
    let ended = |run_id: String| {
        let (http, pb) = (http.clone(), pb.clone());
        async move {
            loop {
                let run = get(&http, format!("{pb}/runs/{run_id}")).await;
                if run["status"] != "started" {
                    return run;
                }
                assert!(Instant::now() < deadline, "{run_id} never ended: {run:#}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    for i in 0..TIMERS {
        let run = ended(format!("later-{i}")).await;
        assert_eq!(run["status"], "succeeded", "{run:#}");
        let month = i % 12 + 1;
        let days = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
        assert_eq!(run["output"], json!({"days": days}), "later-{i}");
    }
    for i in 0..CALLS {
        let run = ended(format!("parent-{i}")).await;
        assert_eq!(run["output"], json!({"slept": i}), "{run:#}");
    }
    for i in 0..ASKS {
        let run = ended(format!("ask-{i}")).await;
        assert_eq!(run["output"], json!({"verdict": "approve"}), "{run:#}");
    }
    // One child run per call: none was started twice.
    assert_eq!(runs_of(&http, &pb, "type=computation").await.len(), TIMERS);
    assert_eq!(
        runs_of(&http, &pb, "type=workflow&name=nap").await.len(),
        CALLS
    );
    assert_eq!(runs_of(&http, &pb, "type=interaction").await.len(), ASKS);
    second.kill().expect("stop");
    let _ = second.wait();
}

/// A server killed with SIGKILL while a schedule waits, and due times passing while no server
/// runs (the next server reads a clock five and a half minutes on): only the latest missed
/// time runs, once.
#[tokio::test(flavor = "multi_thread")]
async fn after_a_sigkill_only_the_latest_missed_time_runs() {
    let dir = tempfile::tempdir().expect("a directory");
    let config = |offset_ms: i64| {
        format!(
            "database = \"sqlite://auto.db\"\n[scheduler]\nsweep_ms = 50\nclock_offset_ms = {offset_ms}\n"
        )
    };
    std::fs::write(dir.path().join("auto.toml"), config(0)).expect("the configuration");
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
    let pb = format!("{base}/v1/orgs/acme/playbooks/main");
    let source = "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: tick\n  version: 1.0.0\nschedule:\n  every: PT1M\ndo:\n  - a:\n      set:\n        due: ${ $data.schedule.due }\n";
    let (status, saved) = post(
        &http,
        format!("{pb}/definitions"),
        json!({"type": "workflow", "name": "tick", "source": source, "diagram": "none"}),
    )
    .await;
    assert_eq!(status, 201, "{saved:#}");
    // The sweep has read the first due time, a minute after the save.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(runs_of(&http, &pb, "type=workflow").await.is_empty());
    first.kill().expect("SIGKILL");
    first.wait().expect("the killed server's status");
    std::fs::write(dir.path().join("auto.toml"), config(330_000)).expect("the configuration");
    let mut second = serve(dir.path(), port);
    wait_healthy(&http, &base).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    let runs = loop {
        let runs = runs_of(&http, &pb, "type=workflow").await;
        if !runs.is_empty() && runs.iter().all(|r| r["status"] != "started") {
            break runs;
        }
        assert!(Instant::now() < deadline, "no run ended: {runs:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let again = runs_of(&http, &pb, "type=workflow").await;
    let run = get(
        &http,
        format!(
            "{pb}/runs/{}",
            runs[0]["run_id"].as_str().expect("a run id")
        ),
    )
    .await;
    second.kill().expect("stop");
    let _ = second.wait();
    assert_eq!(again.len(), 1, "{again:#?}");
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let saved_at = chrono::DateTime::parse_from_rfc3339(saved["updated_at"].as_str().unwrap())
        .expect("a time");
    let due = chrono::DateTime::parse_from_rfc3339(run["output"]["due"].as_str().unwrap())
        .expect("a time");
    let after = (due - saved_at).num_milliseconds();
    assert!(
        (299_000..=301_000).contains(&after),
        "the due time {due} is {after} ms after the save, not the fifth minute"
    );
}
