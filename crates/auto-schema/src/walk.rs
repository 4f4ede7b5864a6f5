//! Every subschema of a schema document, found by the keywords that hold schemas, so that a
//! property named `pattern` or an enum value shaped like a schema is never read as one.

use serde_json::Value;

use crate::pointer::{push, push_index};

/// Keywords whose value is an object of named subschemas.
pub(crate) const MAP_OF_SCHEMAS: &[&str] = &[
    "properties",
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];

/// Keywords whose value is one subschema.
pub(crate) const ONE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "not",
    "propertyNames",
    "contains",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];

/// Keywords whose value is a list of subschemas.
pub(crate) const LIST_OF_SCHEMAS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// One subschema and where it sits.
#[derive(Clone, Debug)]
pub(crate) struct SchemaNode<'a> {
    /// JSON pointer from the schema root.
    pub pointer: String,
    pub value: &'a Value,
}

/// The subschemas held directly by one schema object, with their pointers, in document order.
pub(crate) fn children<'a>(node: &'a Value, at: &str) -> Vec<SchemaNode<'a>> {
    let Value::Object(map) = node else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in map {
        let key_at = push(at, key);
        let keyword = key.as_str();
        if MAP_OF_SCHEMAS.contains(&keyword) {
            if let Value::Object(named) = value {
                for (name, sub) in named {
                    out.push(SchemaNode {
                        pointer: push(&key_at, name),
                        value: sub,
                    });
                }
            }
        } else if ONE_SCHEMA.contains(&keyword) {
            out.push(SchemaNode {
                pointer: key_at,
                value,
            });
        } else if LIST_OF_SCHEMAS.contains(&keyword) || keyword == "items" {
            match value {
                Value::Array(list) => {
                    out.extend(list.iter().enumerate().map(|(i, sub)| SchemaNode {
                        pointer: push_index(&key_at, i),
                        value: sub,
                    }))
                }
                _ if keyword == "items" => out.push(SchemaNode {
                    pointer: key_at,
                    value,
                }),
                _ => {}
            }
        } else if keyword == "dependencies"
            && let Value::Object(named) = value
        {
            // Draft-07: a dependency is a schema or a list of names; only schemas are walked.
            for (name, sub) in named.iter().filter(|(_, sub)| !sub.is_array()) {
                out.push(SchemaNode {
                    pointer: push(&key_at, name),
                    value: sub,
                });
            }
        }
    }
    out.retain(|child| child.value.is_object() || child.value.is_boolean());
    out
}

/// Every subschema of `root`, the root first, in document order. Iterative: a hostile depth
/// cannot exhaust the stack.
pub(crate) fn schema_nodes(root: &Value) -> Vec<SchemaNode<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![SchemaNode {
        pointer: String::new(),
        value: root,
    }];
    while let Some(node) = stack.pop() {
        let mut below = children(node.value, &node.pointer);
        below.reverse();
        stack.extend(below);
        out.push(node);
    }
    out
}
