//! A run's input, as every function type takes it: the defaults applied, the size bounded, and
//! the result checked against the input schema with the field's words ("How a run works",
//! step 1).

use auto_schema::CompiledSchema;
use serde_json::{Map, Value};

/// "The input may be at most 256 KiB as JSON and 512 levels deep."
pub const INPUT_BYTES_MAX: usize = 262_144;
pub const INPUT_DEPTH_MAX: usize = 512;

/// One reason an input is refused: where (a pointer under `/input`) and the field's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputIssue {
    pub pointer: String,
    pub message: String,
}

/// Whether `value` nests deeper than `max` levels; iterative, so a hostile value cannot
/// overflow the stack.
pub fn depth_exceeds(value: &Value, max: usize) -> bool {
    // Iterative, so a hostile input cannot overflow the stack.
    let mut stack = vec![(value, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        if depth > max {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

/// Applies `input.default` to the supplied input (`{}` when there is none), bounds it and
/// checks it against the schema.
pub fn prepare_input(
    supplied: Option<&Value>,
    defaults: Option<&Map<String, Value>>,
    schema: Option<&CompiledSchema>,
) -> Result<Value, Vec<InputIssue>> {
    let whole = |message: String| {
        vec![InputIssue {
            pointer: "/input".into(),
            message,
        }]
    };
    let mut input = match supplied {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(_) => return Err(whole("input: expected a JSON object".into())),
    };
    let bytes = serde_json::to_vec(&input)
        .map(|b| b.len())
        .unwrap_or(usize::MAX);
    if bytes > INPUT_BYTES_MAX {
        return Err(whole(format!(
            "input: holds {bytes} bytes as JSON, more than the 262,144 (256 KiB) a run takes"
        )));
    }
    let value = Value::Object(input.clone());
    if depth_exceeds(&value, INPUT_DEPTH_MAX) {
        return Err(whole(
            "input: nests deeper than the 512 levels a run takes".into(),
        ));
    }
    if let Some(defaults) = defaults {
        for (field, default) in defaults {
            input
                .entry(field.clone())
                .or_insert_with(|| default.clone());
        }
    }
    let input = Value::Object(input);
    if let Some(schema) = schema {
        let issues = schema.validate(&input);
        if !issues.is_empty() {
            // "It lists at most 20, then one line that counts the rest."
            let found = issues
                .iter()
                .map(|issue| (format!("/input{}", issue.pointer), issue.input_message()))
                .collect();
            return Err(auto_schema::shown_issues(found, "/input")
                .into_iter()
                .map(|(pointer, message)| InputIssue { pointer, message })
                .collect());
        }
    }
    Ok(input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_apply_before_the_schema() {
        let schema = CompiledSchema::compile(&json!({"type": "object", "required": ["a", "b"], "properties": {"a": {"type": "string"}, "b": {"type": "number"}}})).unwrap();
        let defaults = json!({"b": 2}).as_object().cloned().unwrap();
        let input =
            prepare_input(Some(&json!({"a": "x"})), Some(&defaults), Some(&schema)).unwrap();
        assert_eq!(input, json!({"a": "x", "b": 2}));
        let input = prepare_input(
            Some(&json!({"a": "x", "b": 5})),
            Some(&defaults),
            Some(&schema),
        )
        .unwrap();
        assert_eq!(input["b"], 5);
        assert!(prepare_input(None, Some(&defaults), Some(&schema)).is_err());
        assert_eq!(prepare_input(None, None, None).unwrap(), json!({}));
    }

    #[test]
    fn the_page_example_of_a_format() {
        let schema = CompiledSchema::compile(
            &json!({"type": "object", "properties": {"day": {"type": "string", "format": "date"}}}),
        )
        .unwrap();
        let issues =
            prepare_input(Some(&json!({"day": "tomorrow"})), None, Some(&schema)).unwrap_err();
        assert_eq!(
            issues,
            vec![InputIssue {
                pointer: "/input/day".into(),
                message: "day: expected a date such as 2026-04-01".into()
            }]
        );
    }

    #[test]
    fn size_and_depth_at_the_edge() {
        let overhead = serde_json::to_vec(&json!({"s": ""})).unwrap().len();
        let at = json!({"s": "x".repeat(INPUT_BYTES_MAX - overhead)});
        assert!(prepare_input(Some(&at), None, None).is_ok());
        let past = json!({"s": "x".repeat(INPUT_BYTES_MAX - overhead + 1)});
        assert!(prepare_input(Some(&past), None, None).is_err());
        // The input object is level 1; 511 lists inside it make 512 levels.
        let mut ok = json!(1);
        for _ in 0..INPUT_DEPTH_MAX - 1 {
            ok = json!([ok]);
        }
        let past = json!({"d": [ok.clone()]});
        assert!(prepare_input(Some(&json!({"d": ok})), None, None).is_ok());
        assert!(prepare_input(Some(&past), None, None).is_err());
        assert!(prepare_input(Some(&json!([1])), None, None).is_err());
    }
}
