//! What schemas cost: compiling and validating a typical output schema, and the save-time
//! check of a typical and of a large one (about 60 KB, near the 64 KiB limit).

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use auto_schema::{CompiledSchema, SchemaRole, check_schema};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use std::hint::black_box;

/// A review's answer: a few fields, a list of findings, an enum, formats, a definition.
fn typical_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["verdict", "score", "reviewed_on", "owner", "findings", "next_steps"],
        "properties": {
            "verdict": {"enum": ["ready", "revise"], "description": "Ready or Revise"},
            "score": {"type": "number", "minimum": 0, "maximum": 10},
            "reviewed_on": {"type": "string", "format": "date"},
            "owner": {"type": "string", "format": "email"},
            "findings": {"type": "array", "maxItems": 20, "items": {"$ref": "#/$defs/finding"}},
            "next_steps": {"type": "array", "items": {"type": "string", "maxLength": 200}}
        },
        "$defs": {
            "finding": {
                "type": "object",
                "additionalProperties": false,
                "required": ["criterion", "met", "evidence", "link"],
                "properties": {
                    "criterion": {"type": "string"},
                    "met": {"type": "boolean"},
                    "evidence": {"type": ["string", "null"]},
                    "link": {"type": ["string", "null"], "format": "uri"}
                }
            }
        }
    })
}

fn typical_answer(valid: bool) -> Value {
    let findings: Vec<Value> = (0..8)
        .map(|i| {
            json!({"criterion": format!("c{i}"), "met": i % 2 == 0,
            "evidence": "Seen in the brief", "link": "https://example.com/brief#p2"})
        })
        .collect();
    json!({
        "verdict": if valid { "ready" } else { "maybe" },
        "score": if valid { 7.5 } else { 11.0 },
        "reviewed_on": "2026-04-01",
        "owner": "name@example.com",
        "findings": findings,
        "next_steps": ["Add the budget", "Name the audience"]
    })
}

/// About 61 KB, under the 64 KiB limit: 240 properties, each a small object.
fn large_schema() -> Value {
    let properties: serde_json::Map<String, Value> = (0..240)
        .map(|i| (format!("field_{i:03}"), json!({
            "type": "object", "additionalProperties": false, "required": ["value", "unit"],
            "description": "A measured value and its unit, as the report states it",
            "properties": {"value": {"type": "number", "minimum": 0}, "unit": {"enum": ["kg", "m", "s"]}}
        })))
        .collect();
    let required: Vec<String> = properties.keys().cloned().collect();
    json!({"type": "object", "additionalProperties": false, "required": required, "properties": properties})
}

fn benches(c: &mut Criterion) {
    let typical = typical_schema();
    let large = large_schema();
    eprintln!(
        "large schema: {} bytes",
        serde_json::to_vec(&large).map(|v| v.len()).unwrap_or(0)
    );
    let compiled = CompiledSchema::compile(&typical).expect("the typical schema compiles");
    let (good, bad) = (typical_answer(true), typical_answer(false));
    assert!(compiled.validate(&good).is_empty() && !compiled.validate(&bad).is_empty());

    c.bench_function("compile typical", |b| {
        b.iter(|| CompiledSchema::compile(black_box(&typical)))
    });
    c.bench_function("validate typical, valid", |b| {
        b.iter(|| compiled.validate(black_box(&good)))
    });
    c.bench_function("validate typical, 2 issues", |b| {
        b.iter(|| compiled.validate(black_box(&bad)))
    });
    c.bench_function("is_valid typical", |b| {
        b.iter(|| compiled.is_valid(black_box(&good)))
    });
    c.bench_function("check typical", |b| {
        b.iter(|| check_schema(black_box(&typical), SchemaRole::Output))
    });
    c.bench_function("check large", |b| {
        b.iter(|| check_schema(black_box(&large), SchemaRole::Output))
    });
}

criterion_group!(schema, benches);
criterion_main!(schema);
