//! Every limit at its edge: at the limit accepted, one past refused.

use auto_schema::{
    ANSWER_DEPTH_MAX, CompiledSchema, ENUM_VALUES_MAX, SCHEMA_BYTES_MAX, SCHEMA_DEPTH_MAX,
    SchemaRole, VALIDATION_ISSUES_SHOWN_MAX, WARNINGS_MAX, check_schema, render_answer_issues,
    render_input_issues,
};
use serde_json::{Value, json};

fn problems(schema: &Value) -> Vec<String> {
    check_schema(schema, SchemaRole::Output)
        .problems
        .into_iter()
        .map(|p| format!("{}: {}", p.pointer, p.text))
        .collect()
}

/// A schema of exactly `bytes` bytes as compact JSON, padded in its description.
fn schema_of_bytes(bytes: usize) -> Value {
    let empty = json!({"type": "object", "description": ""});
    let base = serde_json::to_vec(&empty).expect("serializes").len();
    let schema = json!({"type": "object", "description": "x".repeat(bytes - base)});
    assert_eq!(
        serde_json::to_vec(&schema).expect("serializes").len(),
        bytes
    );
    schema
}

#[test]
fn schema_bytes_at_the_limit_and_one_past() {
    assert_eq!(
        problems(&schema_of_bytes(SCHEMA_BYTES_MAX)),
        Vec::<String>::new()
    );
    assert_eq!(
        problems(&schema_of_bytes(SCHEMA_BYTES_MAX + 1)),
        vec![": A schema may be at most 65,536 bytes as JSON; this one is 65537 bytes"]
    );
}

/// A schema whose root object holds lists nested so that the whole is `levels` deep.
fn schema_of_depth(levels: usize) -> Value {
    let mut inner = json!([]);
    for _ in 0..levels - 2 {
        inner = json!([inner]);
    }
    json!({"type": "object", "default": inner})
}

#[test]
fn schema_depth_at_the_limit_and_one_past() {
    assert_eq!(
        problems(&schema_of_depth(SCHEMA_DEPTH_MAX)),
        Vec::<String>::new()
    );
    let deep = problems(&schema_of_depth(SCHEMA_DEPTH_MAX + 1));
    assert_eq!(deep.len(), 1);
    assert!(deep[0].starts_with("/default/0/0/"), "{deep:?}");
    assert!(deep[0].ends_with(": A schema may nest at most 64 levels of objects and lists"));
}

#[test]
fn a_hostile_depth_is_refused_without_overflowing_the_stack() {
    // Built by moving values, since `json!` with an expression would clone it recursively.
    let mut schema = json!({"type": "string"});
    for _ in 0..5_000 {
        let properties = serde_json::Map::from_iter([("a".to_owned(), schema)]);
        let mut object = serde_json::Map::new();
        object.insert("type".to_owned(), json!("object"));
        object.insert("properties".to_owned(), Value::Object(properties));
        schema = Value::Object(object);
    }
    let report = check_schema(&schema, SchemaRole::Input);
    assert_eq!(report.problems.len(), 1);
    assert!(CompiledSchema::compile(&schema).is_err());
    // Invariant of the test: dropping a deep `Value` recurses; leak it instead.
    std::mem::forget(schema);
}

fn schema_with_enum(values: usize) -> Value {
    let values: Vec<Value> = (0..values).map(Value::from).collect();
    json!({"type": "object", "properties": {"n": {"enum": values}}})
}

#[test]
fn enum_values_at_the_limit_and_one_past() {
    assert_eq!(
        problems(&schema_with_enum(ENUM_VALUES_MAX)),
        Vec::<String>::new()
    );
    assert_eq!(
        problems(&schema_with_enum(ENUM_VALUES_MAX + 1)),
        vec!["/properties/n/enum: An enum may hold at most 1,000 values; this one holds 1001"]
    );
}

fn nested_lists(levels: usize) -> Value {
    let mut value = json!([]);
    for _ in 1..levels {
        value = json!([value]);
    }
    value
}

#[test]
fn answer_depth_at_the_limit_and_one_past() {
    let compiled = CompiledSchema::compile(&json!({})).expect("the empty schema compiles");
    assert!(
        compiled
            .validate(&nested_lists(ANSWER_DEPTH_MAX))
            .is_empty()
    );
    let issues = compiled.validate(&nested_lists(ANSWER_DEPTH_MAX + 1));
    let pointer = "/0".repeat(ANSWER_DEPTH_MAX);
    assert_eq!(
        render_answer_issues(&issues),
        vec![format!(
            "{pointer}: Nests deeper than 128 levels, the most an answer may"
        )]
    );
    assert!(!compiled.is_valid(&nested_lists(ANSWER_DEPTH_MAX + 1)));
}

#[test]
fn warnings_are_capped() {
    let properties: serde_json::Map<String, Value> = (0..WARNINGS_MAX + 10)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let schema = json!({"type": "object", "properties": properties, "additionalProperties": false});
    let report = check_schema(&schema, SchemaRole::Output);
    assert_eq!(report.warnings.len(), WARNINGS_MAX);
}

fn answer_with_errors(count: usize) -> (CompiledSchema, Value) {
    let properties: serde_json::Map<String, Value> = (0..count)
        .map(|i| (format!("p{i:02}"), json!({"type": "string"})))
        .collect();
    let answer: serde_json::Map<String, Value> =
        (0..count).map(|i| (format!("p{i:02}"), json!(i))).collect();
    let schema = json!({"type": "object", "properties": properties});
    (
        CompiledSchema::compile(&schema).expect("compiles"),
        Value::Object(answer),
    )
}

#[test]
fn issues_shown_at_the_limit_and_past_it() {
    let (compiled, answer) = answer_with_errors(VALIDATION_ISSUES_SHOWN_MAX);
    let shown = render_answer_issues(&compiled.validate(&answer));
    assert_eq!(shown.len(), VALIDATION_ISSUES_SHOWN_MAX);

    let (compiled, answer) = answer_with_errors(VALIDATION_ISSUES_SHOWN_MAX + 1);
    let shown = render_input_issues(&compiled.validate(&answer));
    assert_eq!(shown.len(), VALIDATION_ISSUES_SHOWN_MAX + 1);
    assert_eq!(shown[0], "p00: expected a string, found a number");
    assert_eq!(
        shown[VALIDATION_ISSUES_SHOWN_MAX],
        "1 more issue is not shown."
    );

    let (compiled, answer) = answer_with_errors(25);
    let shown = render_answer_issues(&compiled.validate(&answer));
    assert_eq!(
        shown[VALIDATION_ISSUES_SHOWN_MAX],
        "5 more issues are not shown."
    );
}

#[test]
fn a_compiled_schema_can_be_shared_across_threads() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<CompiledSchema>();
}

#[test]
fn checking_never_panics_on_odd_schemas() {
    for schema in [
        json!(null),
        json!(1),
        json!("x"),
        json!([]),
        json!(true),
        json!(false),
        json!({"properties": 1}),
        json!({"items": [1]}),
        json!({"$ref": 5}),
        json!({"enum": 1}),
        json!({"allOf": {}}),
        json!({"$defs": []}),
        json!({"required": [1]}),
    ] {
        let _ = check_schema(&schema, SchemaRole::Input);
        let _ = check_schema(&schema, SchemaRole::Output);
        let _ = CompiledSchema::compile(&schema);
    }
}

fn warnings_mentioning(schema: &Value, words: &str) -> usize {
    let report = check_schema(schema, SchemaRole::Output);
    report
        .warnings
        .iter()
        .filter(|w| w.text.contains(words))
        .count()
}

#[test]
fn openai_enum_total_at_the_limit_and_one_past() {
    use auto_schema::OPENAI_ENUM_VALUES_MAX;
    let split = |total: usize| {
        let first: Vec<usize> = (0..total / 2).collect();
        let second: Vec<usize> = (total / 2..total).collect();
        json!({"type": "object", "properties": {"a": {"enum": first}, "b": {"enum": second}}})
    };
    assert_eq!(
        warnings_mentioning(&split(OPENAI_ENUM_VALUES_MAX), "enum values"),
        0
    );
    assert_eq!(
        warnings_mentioning(&split(OPENAI_ENUM_VALUES_MAX + 1), "enum values"),
        1
    );
}

/// Objects nested `levels` deep through `properties`, the root counted as level 1.
fn nested_objects(levels: usize) -> Value {
    let mut schema = json!({"type": "object"});
    for _ in 1..levels {
        schema = json!({"type": "object", "properties": {"a": schema}});
    }
    schema
}

#[test]
fn openai_object_depth_at_the_limit_and_one_past() {
    use auto_schema::OPENAI_OBJECT_DEPTH_MAX;
    let words = "nested at most";
    assert_eq!(
        warnings_mentioning(&nested_objects(OPENAI_OBJECT_DEPTH_MAX), words),
        0
    );
    assert_eq!(
        warnings_mentioning(&nested_objects(OPENAI_OBJECT_DEPTH_MAX + 1), words),
        1
    );
}

#[test]
fn google_size_warnings_at_their_thresholds() {
    use auto_schema::{GOOGLE_SCHEMA_BYTES_WARN, GOOGLE_SCHEMA_DEPTH_WARN};
    let words = "very large schemas";
    assert_eq!(
        warnings_mentioning(&schema_of_bytes(GOOGLE_SCHEMA_BYTES_WARN), words),
        0
    );
    assert_eq!(
        warnings_mentioning(&schema_of_bytes(GOOGLE_SCHEMA_BYTES_WARN + 1), words),
        1
    );
    let words = "deeply nested schemas";
    assert_eq!(
        warnings_mentioning(&schema_of_depth(GOOGLE_SCHEMA_DEPTH_WARN), words),
        0
    );
    assert_eq!(
        warnings_mentioning(&schema_of_depth(GOOGLE_SCHEMA_DEPTH_WARN + 1), words),
        1
    );
}

#[test]
fn anthropic_complexity_at_the_limit_and_one_past() {
    use auto_schema::{ANTHROPIC_OPTIONAL_PROPERTIES_MAX, ANTHROPIC_UNION_SCHEMAS_MAX};
    let optional = |count: usize| {
        let properties: serde_json::Map<String, Value> = (0..count)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        json!({"type": "object", "properties": properties})
    };
    let words = "optional properties";
    assert_eq!(
        warnings_mentioning(&optional(ANTHROPIC_OPTIONAL_PROPERTIES_MAX), words),
        0
    );
    assert_eq!(
        warnings_mentioning(&optional(ANTHROPIC_OPTIONAL_PROPERTIES_MAX + 1), words),
        1
    );
    let unions = |count: usize| {
        let properties: serde_json::Map<String, Value> = (0..count)
            .map(|i| (format!("p{i}"), json!({"type": ["string", "null"]})))
            .collect();
        let required: Vec<String> = properties.keys().cloned().collect();
        json!({"type": "object", "properties": properties, "required": required})
    };
    let words = "anyOf or a list of types";
    assert_eq!(
        warnings_mentioning(&unions(ANTHROPIC_UNION_SCHEMAS_MAX), words),
        0
    );
    assert_eq!(
        warnings_mentioning(&unions(ANTHROPIC_UNION_SCHEMAS_MAX + 1), words),
        1
    );
}
