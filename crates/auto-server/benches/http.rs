//! `create_definition` through HTTP: the whole path a save takes (parse the body, check the
//! reasoning page's example document, commit the version and its event with fsync) on SQLite,
//! and on PostgreSQL when `AUTO_TEST_POSTGRES` holds a URL.

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use auto_server::auth::Keys;
use auto_server::{Handle, Options};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

const EXAMPLE: &str = "---
description: Reviews a campaign brief against the team's criteria
model: anthropic/claude-sonnet-4-5
config:
  max_output_tokens: 800
input:
  schema:
    type: object
    properties:
      brief: { type: string }
      criteria: { type: string }
    required: [brief, criteria]
---

{% system %}Review the brief using the supplied criteria. Identify missing evidence. Do not invent facts.{% endsystem %}
Brief: {{ input.brief }}
Criteria: {{ input.criteria }}
";

async fn start(store: Arc<dyn auto_store::Store>) -> Handle {
    let handle = auto_server::start(Options {
        listen: "127.0.0.1:0".parse().expect("an address"),
        store,
        keys: Keys::default(),
        checkers: auto_server::server_checkers(),
        models: auto_server::reasoning_runs::Models::none(),
        limits: Default::default(),
        http: Default::default(),
        retention: Default::default(),
    })
    .await
    .expect("the server starts");
    let http = reqwest::Client::new();
    let url = handle.url();
    http.post(format!("{url}/v1/orgs"))
        .json(&json!({"id": "bench"}))
        .send()
        .await
        .expect("org");
    http.post(format!("{url}/v1/orgs/bench/playbooks"))
        .json(&json!({"id": "main"}))
        .send()
        .await
        .expect("playbook");
    handle
}

fn bench_store(c: &mut Criterion, label: &str, runtime: &tokio::runtime::Runtime, handle: &Handle) {
    let http = reqwest::Client::new();
    let url = format!("{}/v1/orgs/bench/playbooks/main/definitions", handle.url());
    let counter = AtomicU64::new(0);
    c.bench_function(&format!("create_definition/http/{label}"), |b| {
        b.iter(|| {
            let n = counter.fetch_add(1, Ordering::Relaxed);
            let body = json!({"type": "reasoning", "name": format!("review-{n}"), "source": EXAMPLE, "diagram": "none"});
            runtime.block_on(async {
                let response = http.post(&url).json(&body).send().await.expect("an answer");
                assert_eq!(response.status().as_u16(), 201);
            })
        })
    });
}

fn create_definition(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let dir = tempfile::tempdir().expect("a directory");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let handle =
        runtime.block_on(async { start(auto_store::open(&url).await.expect("SQLite")).await });
    bench_store(c, "sqlite", &runtime, &handle);
    if let Ok(pg) = std::env::var("AUTO_TEST_POSTGRES") {
        let handle = runtime.block_on(async {
            start(
                auto_store::open_postgres_isolated(&pg)
                    .await
                    .expect("PostgreSQL"),
            )
            .await
        });
        bench_store(c, "postgres", &runtime, &handle);
    }
}

criterion_group!(benches, create_definition);
criterion_main!(benches);
