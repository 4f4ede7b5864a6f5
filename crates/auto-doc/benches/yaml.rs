//! How long reading takes: the reasoning page's example source (front matter split and read),
//! and a workflow-shaped document at the page's source limit of 65,536 bytes.

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;

use auto_doc::{YamlConfig, read_markdown, read_yaml};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The example of the reasoning page, "A function document".
const REASONING_EXAMPLE: &str = "---
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

/// "Source document: 65,536 bytes in UTF-8" (workflow page, "Limits").
const WORKFLOW_SOURCE_BYTES_MAX: usize = 65_536;

/// A workflow-shaped document just under the source limit: tasks with calls, sets and inputs.
fn large_workflow() -> String {
    let mut text =
        String::from("document:\n  dsl: '1.0.0'\n  namespace: bench\n  name: large\ndo:\n");
    for step in 0.. {
        let task = format!(
            "  - step{step}:\n      call: run_definition\n      with:\n        type: reasoning\n        \
             name: review-{step}\n        input:\n          brief: \"${{ .brief }}\"\n          \
             tags: [a, b, {step}]\n          limits: {{ max: {step}, ratio: 0.5, on: true }}\n"
        );
        if text.len() + task.len() > WORKFLOW_SOURCE_BYTES_MAX {
            break;
        }
        text.push_str(&task);
    }
    text
}

fn reading(c: &mut Criterion) {
    let mut group = c.benchmark_group("read");
    group.throughput(Throughput::Bytes(REASONING_EXAMPLE.len() as u64));
    group.bench_function("reasoning_example", |b| {
        b.iter(|| read_markdown(black_box(REASONING_EXAMPLE), &YamlConfig::front_matter()))
    });
    let workflow = large_workflow();
    group.throughput(Throughput::Bytes(workflow.len() as u64));
    group.bench_function("workflow_64KiB", |b| {
        b.iter(|| read_yaml(black_box(&workflow), &YamlConfig::workflow()))
    });
    group.finish();
}

criterion_group!(benches, reading);
criterion_main!(benches);
