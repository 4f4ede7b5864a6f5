//! Checking never panics: random schemas built from the vocabulary, with odd values in every
//! place, go through the check, the compile and a validation. Deterministic: the seed is
//! printed on failure through the case index.

use auto_schema::{CompiledSchema, SchemaRole, check_schema, check_shape, tool_schema_warnings};
use serde_json::{Map, Value, json};

/// A small linear congruential generator: enough variety, no dependency, same run each time.
struct Random(u64);

impl Random {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % below.max(1)
    }
}

const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "items",
    "prefixItems",
    "required",
    "additionalProperties",
    "enum",
    "const",
    "format",
    "$ref",
    "$defs",
    "definitions",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "minimum",
    "maxLength",
    "minItems",
    "uniqueItems",
    "description",
    "$schema",
    "$id",
    "pattern",
    "if",
    "nullable",
    "propertyNames",
    "dependencies",
];

const STRINGS: &[&str] = &[
    "object",
    "string",
    "number",
    "integer",
    "array",
    "null",
    "boolean",
    "date",
    "date-time",
    "time",
    "email",
    "uri",
    "uuid",
    "#/$defs/a",
    "#/definitions/a",
    "#/$defs/a%20b",
    "#",
    "#/$defs/é",
    "http://json-schema.org/draft-07/schema#",
    "2026-04-01",
    "00:00:0é0Z",
    "a",
    "",
];

fn scalar(random: &mut Random) -> Value {
    match random.next(6) {
        0 => Value::Null,
        1 => json!(random.next(2) == 0),
        2 => json!(random.next(20) as i64 - 5),
        3 => json!(random.next(100) as f64 / 7.0),
        _ => json!(STRINGS[random.next(STRINGS.len())]),
    }
}

fn value(random: &mut Random, depth: usize) -> Value {
    if depth == 0 {
        return scalar(random);
    }
    match random.next(4) {
        0 => scalar(random),
        1 => Value::Array(
            (0..random.next(4))
                .map(|_| value(random, depth - 1))
                .collect(),
        ),
        _ => {
            let mut map = Map::new();
            for _ in 0..random.next(5) {
                let key = if random.next(4) == 0 {
                    "a"
                } else {
                    KEYWORDS[random.next(KEYWORDS.len())]
                };
                map.insert(key.to_owned(), value(random, depth - 1));
            }
            Value::Object(map)
        }
    }
}

#[test]
fn random_schemas_and_instances_never_panic() {
    let mut random = Random(0x5eed);
    let mut compiled_count = 0;
    for _case in 0..3_000 {
        let schema = value(&mut random, 5);
        let instance = value(&mut random, 4);
        let _ = check_schema(&schema, SchemaRole::Input);
        let saved = check_schema(&schema, SchemaRole::Output).is_ok();
        let _ = tool_schema_warnings("t__t", &schema);
        let compiled = CompiledSchema::compile(&schema);
        // A schema that may be saved always compiles, and one that is refused never does.
        assert_eq!(saved, compiled.is_ok(), "{schema}");
        if let Ok(compiled) = compiled {
            compiled_count += 1;
            let issues = compiled.validate(&instance);
            assert_eq!(issues.is_empty(), compiled.is_valid(&instance));
            for issue in &issues {
                let _ = (issue.answer_message(), issue.input_message());
            }
        }
        for shape in ["text", "categories", "series", "table"] {
            let _ = check_shape(shape, &instance);
        }
    }
    // Invariant of the test: enough random schemas pass the check for validation to be tried.
    assert!(
        compiled_count > 300,
        "only {compiled_count} schemas compiled"
    );
}
