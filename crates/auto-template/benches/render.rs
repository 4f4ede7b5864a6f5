//! Parse and render figures: a typical prompt template, and golden-liquid's benchmark template
//! (fixture 002, 9.5 KB) when `scripts/fetch-golden-liquid.sh` has put a copy under
//! `tests/golden/benchmark/` (it is not committed).

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::path::PathBuf;

use auto_template::{RenderLimits, parse, render, render_with_roots};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value as Json, json};

/// Shared with `bench/liquidjs/bench.js`, which times LiquidJS on the same template.
const PROMPT: &str = include_str!("../bench/liquidjs/prompt.liquid");

fn prompt_input() -> Json {
    let criteria: Vec<Json> = (0..12)
        .map(|i| json!({"name": format!("criterion {i}"), "description": "  Is the claim supported by evidence that a reader can check?  "}))
        .collect();
    json!({
        "company": "Acme",
        "brief": "Launch the spring campaign for the new kettle in three markets. ".repeat(20),
        "criteria": criteria,
        "attachments": [{"title": "Plan"}, {"title": "Budget"}, {"title": "Research"}],
        "context": {"market": ["FR", "DE", "ES"], "budget": 125000.5, "owner": {"name": "Ada", "team": "Growth"}},
    })
}

fn benchmark_fixture() -> Option<(String, Json)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/benchmark");
    let template = std::fs::read_to_string(dir.join("index.liquid")).ok()?;
    let data = serde_json::from_str(&std::fs::read_to_string(dir.join("data.json")).ok()?).ok()?;
    Some((template, data))
}

fn bench(c: &mut Criterion) {
    let input = prompt_input();
    c.bench_function("prompt/parse", |b| {
        b.iter(|| parse(black_box(PROMPT)).unwrap())
    });
    let template = parse(PROMPT).unwrap();
    let limits = RenderLimits::default();
    c.bench_function("prompt/render", |b| {
        b.iter(|| {
            render(
                &template,
                black_box(&input),
                "2026-04-01",
                "2026-04-01T09:30:00Z",
                &limits,
            )
            .unwrap()
        })
    });
    let Some((source, data)) = benchmark_fixture() else {
        eprintln!(
            "golden-liquid's benchmark fixture is not here; run scripts/fetch-golden-liquid.sh"
        );
        return;
    };
    let roots: Vec<(&str, &Json)> = data
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    c.bench_function("golden-002/parse", |b| {
        b.iter(|| parse(black_box(&source)).unwrap())
    });
    let template = parse(&source).unwrap();
    c.bench_function("golden-002/render", |b| {
        b.iter(|| render_with_roots(&template, black_box(&roots), &limits).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
