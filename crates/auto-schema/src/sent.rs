//! The schema each provider family receives. The runtime validates an answer against the
//! schema as written; what is sent is the part the provider accepts. The reasoning page:
//! "Expect Anthropic models not to receive numeric, length and count bounds (minimum,
//! maxLength, minItems, uniqueItems and the like). The runtime still checks them, so an answer
//! outside them fails. The same holds for oneOf, which Anthropic models receive as anyOf."

use serde_json::{Map, Value};

use crate::walk::{LIST_OF_SCHEMAS, MAP_OF_SCHEMAS, ONE_SCHEMA};
use crate::warnings::is_anthropic_bound;

/// The schema as Anthropic models receive it, directly, on Bedrock and on Vertex AI: every
/// bound [`crate::ANTHROPIC_PROVIDERS`] are warned about removed (`minItems` of 0 or 1 is
/// kept, as Anthropic accepts it), and `oneOf` sent as `anyOf`. Only keywords are touched: a
/// property named `minimum`, or an enum value, is left as written.
pub fn anthropic_schema(schema: &Value) -> Value {
    let mut sent = schema.clone();
    strip(&mut sent);
    sent
}

fn strip(node: &mut Value) {
    let Value::Object(map) = node else {
        return;
    };
    map.retain(|keyword, value| !is_anthropic_bound(keyword, value));
    if let Some(one_of) = map.shift_remove("oneOf") {
        match map.get_mut("anyOf") {
            // Both written: the oneOf's alternatives join allOf as one more anyOf.
            Some(_) => {
                let mut extra = Map::new();
                extra.insert("anyOf".to_owned(), one_of);
                match map
                    .entry("allOf")
                    .or_insert_with(|| Value::Array(Vec::new()))
                {
                    Value::Array(all) => all.push(Value::Object(extra)),
                    other => *other = Value::Array(vec![Value::Object(extra)]),
                }
            }
            None => {
                map.insert("anyOf".to_owned(), one_of);
            }
        }
    }
    for (keyword, value) in map.iter_mut() {
        let keyword = keyword.as_str();
        if MAP_OF_SCHEMAS.contains(&keyword) {
            if let Value::Object(named) = value {
                named.values_mut().for_each(strip);
            }
        } else if ONE_SCHEMA.contains(&keyword) {
            strip(value);
        } else if LIST_OF_SCHEMAS.contains(&keyword) || keyword == "items" {
            match value {
                Value::Array(list) => list.iter_mut().for_each(strip),
                other if keyword == "items" => strip(other),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bounds_go_and_one_of_becomes_any_of_but_names_and_values_stay() {
        let written = json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["minimum", "tags", "choice"],
            "properties": {
                "minimum": {"type": "integer", "minimum": 1, "maximum": 9, "multipleOf": 3, "enum": [3, 6, 9]},
                "tags": {"type": "array", "minItems": 2, "maxItems": 5, "uniqueItems": true,
                         "items": {"type": "string", "minLength": 1, "maxLength": 20}},
                "few": {"type": "array", "minItems": 1, "items": {"const": {"minimum": 4}}},
                "choice": {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "number", "exclusiveMinimum": 0}]},
                "both": {"anyOf": [{"type": "string"}], "oneOf": [{"type": "number"}]}
            },
            "$defs": {"n": {"type": "number", "minimum": 0}}
        });
        let sent = anthropic_schema(&written);
        assert_eq!(
            sent,
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["minimum", "tags", "choice"],
                "properties": {
                    "minimum": {"type": "integer", "enum": [3, 6, 9]},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "few": {"type": "array", "minItems": 1, "items": {"const": {"minimum": 4}}},
                    "choice": {"anyOf": [{"type": "string"}, {"type": "number"}]},
                    "both": {"anyOf": [{"type": "string"}], "allOf": [{"anyOf": [{"type": "number"}]}]}
                },
                "$defs": {"n": {"type": "number"}}
            })
        );
    }
}
