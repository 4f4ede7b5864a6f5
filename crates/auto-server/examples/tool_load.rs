//! Load test of tool calls: the runtime's own cost per tool call (everything but the tool and
//! the model) and the memory of a run that reads a 10 MB tool result.
//!
//! ```sh
//! cargo run --release -p auto-server --example tool_load -- 200
//! ```
//!
//! It starts a server in this process on a SQLite file in a temporary folder, a provider double
//! and the testkit's scripted MCP server, both on loopback and answering at once. Each run of a
//! reasoning function asks for tool calls in one step and then answers. Runs that make one call
//! and runs that make eleven are timed one after another (the argument: how many of each); the
//! difference over ten calls is the cost of one call, which still includes the MCP server's own
//! handling on loopback, so it is an upper bound. Then one run reads a 10 MB result of the
//! `huge` tool, with the process's peak resident memory read before and after (`VmHWM`); the
//! MCP server that builds the 10 MB answer runs in this process too, and its copies count. The
//! provider counts the first step's input at about 1.5 bytes a token, so the result is cut to
//! the room that leaves in a 200,000-token context window before the model reads it.

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::{Duration, Instant};

use auto_server::Options;
use auto_server::auth::Keys;
use auto_testkit::{McpDouble, ProviderDouble, ProviderKind, Reply, ScriptedToolCall};
use serde_json::{Value, json};

const HUGE_BYTES: u64 = 10_000_000;

/// This process's memory in KiB from `/proc/self/status`: `VmRSS` now, or `VmHWM` its peak.
fn memory_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn lookups(run: usize, count: usize) -> Reply {
    Reply::ToolCalls(
        (0..count)
            .map(|n| ScriptedToolCall {
                call_id: format!("c{run}-{n}"),
                name: "graph__lookup".into(),
                arguments: json!({"q": format!("{run}-{n}")}),
            })
            .collect(),
    )
}

async fn post(http: &reqwest::Client, url: &str, body: Value) -> (u16, Value) {
    let reply = http.post(url).json(&body).send().await.expect("a reply");
    let status = reply.status().as_u16();
    (status, reply.json().await.unwrap_or(Value::Null))
}

/// Runs `runs` runs one after another, each asking for `calls` lookups; the median run.
async fn timed(
    http: &reqwest::Client,
    pb: &str,
    provider: &ProviderDouble,
    runs: usize,
    calls: usize,
    tag: &str,
) -> Duration {
    let mut times = Vec::with_capacity(runs);
    for run in 0..runs {
        provider.script([lookups(run, calls), Reply::Text("Found.".into())]);
        let started = Instant::now();
        let (status, body) = post(
            http,
            &format!("{pb}/definitions/reasoning/finder/runs"),
            json!({"input": {"q": "x"}, "run_id": format!("{tag}-{run}")}),
        )
        .await;
        times.push(started.elapsed());
        assert_eq!(status, 200, "{body:#}");
    }
    times.sort();
    times[times.len() / 2]
}

#[tokio::main]
async fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map(|n| n.parse().expect("a number of runs"))
        .unwrap_or(200);
    let provider = ProviderDouble::start(ProviderKind::Anthropic).await;
    let mcp = McpDouble::start().await;
    let dir = tempfile::tempdir().expect("a directory");
    let store = auto_store::open(&format!(
        "sqlite://{}",
        dir.path().join("auto.db").display()
    ))
    .await
    .expect("a store");
    let config = auto_server::config::Config::parse(&format!(
        "[providers.anthropic]\nbase_url = \"{}\"\n\n[[tool_servers]]\nname = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\n",
        provider.base_url(),
        mcp.url()
    ))
    .expect("a configuration");
    let handle = auto_server::start(Options {
        listen: "127.0.0.1:0".parse().expect("an address"),
        store,
        keys: Keys::default(),
        checkers: auto_server::server_checkers(),
        models: config.models().expect("the models"),
        limits: Default::default(),
        http: Default::default(),
        retention: Default::default(),
    })
    .await
    .expect("the server starts");
    let base = handle.url();
    let http = reqwest::Client::new();
    post(&http, &format!("{base}/v1/orgs"), json!({"id": "acme"})).await;
    post(
        &http,
        &format!("{base}/v1/orgs/acme/playbooks"),
        json!({"id": "main"}),
    )
    .await;
    let pb = format!("{base}/v1/orgs/acme/playbooks/main");
    let source = "---\nmodel: anthropic/claude-sonnet-4-5\ntools: [graph/lookup, graph/huge]\n---\nFind {{ input.q }}.\n";
    let (status, body) = post(
        &http,
        &format!("{pb}/definitions"),
        json!({"type": "reasoning", "name": "finder", "source": source, "diagram": "none"}),
    )
    .await;
    assert_eq!(status, 201, "{body:#}");

    // Warm up, then runs of one call against runs of eleven; 0 runs measures memory alone.
    timed(&http, &pb, &provider, 20, 1, "warm").await;
    if runs > 0 {
        let one = timed(&http, &pb, &provider, runs, 1, "one").await;
        let eleven = timed(&http, &pb, &provider, runs, 11, "eleven").await;
        let per_call = eleven.saturating_sub(one) / 10;
        println!(
            "runs of 1 call: median {:.2} ms; of 11 calls: median {:.2} ms; per call: {:.3} ms ({runs} runs each)",
            one.as_secs_f64() * 1e3,
            eleven.as_secs_f64() * 1e3,
            per_call.as_secs_f64() * 1e3
        );
    }

    let before_peak = memory_kib("VmHWM:");
    let before_rss = memory_kib("VmRSS:");
    // The provider counts the first step's input as a real one would (a few bytes a token),
    // which sets the room a result gets in the next.
    provider.script([
        Reply::Http {
            status: 200,
            headers: Vec::new(),
            body: json!({
                "id": "msg_huge", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": "huge", "name": "graph__huge",
                             "input": {"bytes": HUGE_BYTES}}],
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 1000, "output_tokens": 20},
            }),
        },
        Reply::Text("Read it.".into()),
    ]);
    let (status, body) = post(
        &http,
        &format!("{pb}/definitions/reasoning/finder/runs"),
        json!({"input": {"q": "huge"}, "run_id": "huge-1"}),
    )
    .await;
    assert_eq!(status, 200, "{body:#}");
    let after_peak = memory_kib("VmHWM:");
    let after_rss = memory_kib("VmRSS:");
    println!(
        "a run reading a {} MB result: peak resident memory {} MiB before, {} MiB after (+{} MiB); resident {} MiB before, {} MiB after",
        HUGE_BYTES / 1_000_000,
        before_peak / 1024,
        after_peak / 1024,
        after_peak.saturating_sub(before_peak) / 1024,
        before_rss / 1024,
        after_rss / 1024
    );
    handle.stop().await.expect("the server stops");
}
