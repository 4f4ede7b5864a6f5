//! How long saving a reasoning function spends in its checker: the page's example (which must
//! stay well under a millisecond, since every run checks the document again), and a large
//! document near every limit at once: two schemas of about 60 KB and a template of about
//! 60,000 characters with close to 1,000 names. And the same for a workflow: the workflow page's
//! example, and a generated workflow of about 500 tasks of every common kind with expressions,
//! both to stay well under the page's 2 seconds.

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;

use auto_engine::definitions::{Checkers, DefinitionType};
use auto_engine::reasoning::check_reasoning;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The example of the reasoning page, "A function document".
const PAGE_EXAMPLE: &str = "---
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

/// Properties in each schema of the large document.
const LARGE_PROPERTIES: usize = 220;
/// Characters of plain text in the large document's template.
const LARGE_TEMPLATE_TEXT_CHARS: usize = 50_000;

/// A schema with [`LARGE_PROPERTIES`] properties, each with a description, bounds and a
/// nested object, as JSON (which YAML reads as flow).
fn large_schema(with_bounds: bool) -> String {
    let properties: Vec<String> = (0..LARGE_PROPERTIES)
        .map(|i| {
            let bounds = if with_bounds {
                ", \"minLength\": 1, \"maxLength\": 200"
            } else {
                ""
            };
            format!(
                "\"field{i}\": {{\"type\": \"object\", \"description\": \"Field number {i} of the record\", \
                 \"properties\": {{\"name\": {{\"type\": \"string\"{bounds}}}, \"day\": {{\"type\": \"string\", \
                 \"format\": \"date\"}}, \"kind\": {{\"enum\": [\"a\", \"b\", \"c\"]}}}}, \
                 \"required\": [\"name\", \"day\", \"kind\"], \"additionalProperties\": false}}"
            )
        })
        .collect();
    let names: Vec<String> = (0..LARGE_PROPERTIES)
        .map(|i| format!("\"field{i}\""))
        .collect();
    format!(
        "{{\"type\": \"object\", \"properties\": {{{}}}, \"required\": [{}], \"additionalProperties\": false}}",
        properties.join(", "),
        names.join(", ")
    )
}

/// A document with two large schemas, defaults, options, tools and a long template.
fn large_document() -> String {
    let mut template =
        String::from("{% system %}You check records against the policy.{% endsystem %}\n");
    // One output per property, of three names each (input, the field, json): 660 names.
    for i in 0..LARGE_PROPERTIES {
        template.push_str(&format!("Field {i}: {{{{ input.field{i} | json }}}}\n"));
    }
    let line = "The record is read in full and each field is compared with the policy.\n";
    while template.len() < LARGE_TEMPLATE_TEXT_CHARS {
        template.push_str(line);
    }
    format!(
        "---\ndescription: Checks a large record\nmodel: anthropic/claude-sonnet-4-5\n\
         config:\n  max_output_tokens: 4000\n  temperature: 0.2\n\
         input:\n  schema: {}\n  default:\n    field0: {{ name: first, day: 2026-01-01, kind: a }}\n\
         output:\n  format: json\n  schema: {}\n\
         provider_options:\n  anthropic:\n    thinking: {{ type: enabled, budgetTokens: 2000 }}\n\
         tools: [graph/search, notes/*]\n---\n{template}",
        large_schema(false),
        large_schema(true),
    )
}

/// The workflow page's example, "A workflow document" (the corpus keeps it, with its verdict
/// after it).
fn workflow_page_example() -> &'static str {
    let text = include_str!("../tests/workflow/000-page-example.yaml");
    &text[..text.find("# expect:").unwrap_or(text.len())]
}

/// Blocks of [`WORKFLOW_BLOCK_TASKS`] tasks in the generated workflow.
const WORKFLOW_BLOCKS: usize = 39;
/// Tasks in one block, nested ones counted: a set, a call, a switch, a for with a set, a fork
/// of a call and a wait, a try of a call with a retry and a recovering set, a wait under an if
/// and a set that exports.
const WORKFLOW_BLOCK_TASKS: usize = 13;

/// A workflow of `WORKFLOW_BLOCKS * WORKFLOW_BLOCK_TASKS` (507) tasks with an expression in
/// nearly every one, within the page's 65,536 bytes.
fn generated_workflow() -> String {
    let mut text = String::from(
        "document: { dsl: '1.0.3', namespace: bench, name: large, version: '1.0.0', summary: Many steps }\n\
         input:\n  schema:\n    document: { type: object, properties: { n: { type: integer }, items: { type: array } } }\n\
         use:\n  retries:\n    twice: { delay: { seconds: 1 }, backoff: { exponential: {} }, limit: { attempt: { count: 2 } } }\n\
         do:\n",
    );
    for i in 0..WORKFLOW_BLOCKS {
        let kind = ["computation", "recall", "reasoning"][i % 3];
        text.push_str(&format!(
            "  - s{i}: {{ set: {{ n: '${{ ($data.n ?? 0) + {i} }}', items: '${{ $data.items ?? [] }}' }} }}\n\
             \x20 - c{i}: {{ call: run_definition, with: {{ type: {kind}, name: f{m}, input: {{ n: '${{ $data.n }}' }} }}, output: {{ as: '${{ ({{ ...$input, c: $data }}) }}' }} }}\n\
             \x20 - w{i}: {{ switch: [ {{ hi: {{ when: '${{ $data.n > {i} }}', then: l{i} }} }}, {{ lo: {{ then: continue }} }} ] }}\n\
             \x20 - l{i}: {{ for: {{ each: x, in: '${{ $data.items }}' }}, while: '${{ $index < 10 }}', do: [ {{ a{i}: {{ set: {{ t: '${{ $x.v * 2 + $index }}' }} }} }} ] }}\n\
             \x20 - k{i}: {{ fork: {{ branches: [ {{ b{i}: {{ call: run_definition, with: {{ type: reasoning, name: r{m}, input: {{ t: '${{ $data.t }}' }} }} }} }}, {{ d{i}: {{ wait: PT1S }} }} ] }} }}\n\
             \x20 - t{i}: {{ try: [ {{ u{i}: {{ call: run_definition, with: {{ type: computation, name: g{m} }} }} }} ], catch: {{ errors: {{ with: {{ status: 503 }} }}, retry: twice, do: [ {{ v{i}: {{ set: '${{ ({{ failed: true, at: $task.name }}) }}' }} }} ] }} }}\n\
             \x20 - p{i}: {{ if: '${{ $data.n < 3 }}', wait: {{ seconds: 1 }} }}\n\
             \x20 - e{i}: {{ set: {{ done: '${{ $data.n }}' }}, export: {{ as: '${{ ({{ ...$context, e{i}: $output.done }}) }}' }} }}\n",
            m = i % 7,
        ));
    }
    text
}

fn checking(c: &mut Criterion) {
    let large = large_document();
    // Invariant: both documents pass, or the bench would time the refusal path.
    assert!(check_reasoning(PAGE_EXAMPLE).is_ok());
    if let Err(issues) = check_reasoning(&large) {
        panic!("the large document is refused: {issues:?}");
    }
    let checkers = Checkers::standard();
    let mut group = c.benchmark_group("check_reasoning");
    group.throughput(Throughput::Bytes(PAGE_EXAMPLE.len() as u64));
    group.bench_function("page_example", |b| {
        b.iter(|| checkers.check(DefinitionType::Reasoning, black_box(PAGE_EXAMPLE)))
    });
    group.throughput(Throughput::Bytes(large.len() as u64));
    group.sample_size(20);
    group.bench_function("large_document", |b| {
        b.iter(|| checkers.check(DefinitionType::Reasoning, black_box(&large)))
    });
    group.finish();

    // The workflow page: "A save allows the check 2 seconds of the server's wall-clock time."
    let workflow = generated_workflow();
    assert!(workflow.len() <= auto_engine::definitions::WORKFLOW_SOURCE_BYTES_MAX);
    // Invariant: every task is a step of the overview's numbered list.
    let steps = WORKFLOW_BLOCKS * WORKFLOW_BLOCK_TASKS;
    let overview = checkers
        .check(DefinitionType::Workflow, &workflow)
        .ok()
        .and_then(|checked| checked.generated_overview)
        .unwrap_or_default();
    assert!(overview.contains(&format!("{steps}. e{}: ", WORKFLOW_BLOCKS - 1)));
    assert!(!overview.contains(&format!("{}. ", steps + 1)));
    for source in [workflow_page_example(), workflow.as_str()] {
        match checkers.check(DefinitionType::Workflow, source) {
            Ok(checked) => assert!(checked.generated_overview.is_some()),
            Err(error) => panic!("the workflow is refused: {error:?}"),
        }
    }
    let mut group = c.benchmark_group("check_workflow");
    group.throughput(Throughput::Bytes(workflow_page_example().len() as u64));
    group.bench_function("page_example", |b| {
        b.iter(|| checkers.check(DefinitionType::Workflow, black_box(workflow_page_example())))
    });
    group.throughput(Throughput::Bytes(workflow.len() as u64));
    group.sample_size(20);
    group.bench_function("generated_507_tasks", |b| {
        b.iter(|| checkers.check(DefinitionType::Workflow, black_box(&workflow)))
    });
    group.finish();
}

criterion_group!(benches, checking);
criterion_main!(benches);
