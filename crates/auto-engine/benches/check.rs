//! How long saving a reasoning function spends in its checker: the page's example (which must
//! stay well under a millisecond, since every run checks the document again), and a large
//! document near every limit at once: two schemas of about 60 KB and a template of about
//! 60,000 characters with close to 1,000 names.

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
}

criterion_group!(benches, checking);
criterion_main!(benches);
