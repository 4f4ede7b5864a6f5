//! The save-time check of a schema: every rule of the reasoning page's "Answers that are
//! JSON", each refusal with its pointer from the schema root, all of them collected.

use serde::Serialize;
use serde_json::Value;

use crate::cycles::{in_place_loops, ref_target};
use crate::draft::{Draft, choose_draft};
use crate::formats::FORMATS;
use crate::json_bytes;
use crate::limits::{ENUM_VALUES_MAX, SCHEMA_BYTES_MAX, SCHEMA_DEPTH_MAX, WARNINGS_MAX};
use crate::messages::fault_of;
use crate::pointer::{first_too_deep, push, push_index, unescape};
use crate::validate::{build, prepare};
use crate::walk::{SchemaNode, schema_nodes};
use crate::warnings::{SchemaWarning, schema_warnings};

/// Whether a schema describes a definition's input or its output. An input schema's root must
/// be an object, and provider warnings concern output schemas alone, since only they are sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SchemaRole {
    Input,
    Output,
    /// An output that no model writes: what a person answers to an interaction's request (or
    /// a program returns). Any root, and no provider warnings, since no provider sees it.
    Answer,
}

/// One reason the schema is refused, at a JSON pointer from the schema root.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SchemaProblem {
    pub pointer: String,
    pub text: String,
}

/// What the save-time check found: refusals, warnings (at most [`WARNINGS_MAX`]) and the
/// draft the schema is read as.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SchemaReport {
    pub problems: Vec<SchemaProblem>,
    pub warnings: Vec<SchemaWarning>,
    pub draft: Draft,
}

impl SchemaReport {
    /// True when the schema may be saved.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// The keywords the page refuses outright.
const REFUSED: &[&str] = &[
    "if",
    "then",
    "else",
    "contains",
    "minContains",
    "maxContains",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];

/// The keywords that make `$ref` point somewhere other than `$defs` or `definitions`.
const ANCHORS: &[&str] = &[
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
];

const TYPE_NAMES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Checks a schema as create_definition does. Pure; never panics; reports every problem.
pub fn check_schema(schema: &Value, role: SchemaRole) -> SchemaReport {
    let Checked {
        problems, draft, ..
    } = schema_problems(schema, role);
    // A schema past the depth limit is refused for that alone (see `schema_problems`).
    let too_deep = first_too_deep(schema, SCHEMA_DEPTH_MAX).is_some();
    let mut warnings = if too_deep {
        Vec::new()
    } else {
        schema_warnings(schema, &schema_nodes(schema), role)
    };
    warnings.truncate(WARNINGS_MAX);
    SchemaReport {
        problems,
        warnings,
        draft,
    }
}

/// What the refusals leave: the problems, the draft, and, when there is no problem, the
/// validator built from the schema as [`prepare`] rewrote it.
pub(crate) struct Checked {
    pub problems: Vec<SchemaProblem>,
    pub draft: Draft,
    pub built: Option<(jsonschema::Validator, Value)>,
}

/// The refusals alone, and the validator when there is none: what compiling a schema needs.
/// Building is part of the check, so a schema that is saved always compiles at run time.
pub(crate) fn schema_problems(schema: &Value, role: SchemaRole) -> Checked {
    let mut problems = Vec::new();
    let draft = choose_draft(schema).unwrap_or_else(|found| {
        problems.push(problem("/$schema", refused_draft_text(&found)));
        Draft::Draft202012
    });
    if let Some(at) = first_too_deep(schema, SCHEMA_DEPTH_MAX) {
        // The other checks (the meta-schema's above all) recurse on the schema's depth, so a
        // schema past the limit is refused for its depth alone.
        problems.push(problem(
            &at,
            format!("A schema may nest at most {SCHEMA_DEPTH_MAX} levels of objects and lists"),
        ));
        return Checked {
            problems,
            draft,
            built: None,
        };
    }
    check_size(schema, &mut problems);
    if role == SchemaRole::Input {
        check_input_root(schema, &mut problems);
    }
    let nodes = schema_nodes(schema);
    for node in &nodes {
        check_node(schema, node, &mut problems);
    }
    for (at, target) in in_place_loops(&nodes) {
        problems.push(problem(&at, format!(
            "This loops back to #{target} through $ref, allOf, anyOf or oneOf, with no property or item in between"
        )));
    }
    meta_problems(schema, draft, &mut problems);
    let mut built = None;
    if problems.is_empty() {
        match build(schema, draft) {
            Ok(validator) => built = Some(validator),
            Err(refusal) => problems.push(refusal),
        }
    }
    Checked {
        problems: dedupe(problems),
        draft,
        built,
    }
}

fn problem(pointer: &str, text: impl Into<String>) -> SchemaProblem {
    SchemaProblem {
        pointer: pointer.to_owned(),
        text: text.into(),
    }
}

fn refused_draft_text(found: &str) -> String {
    format!(
        "$schema must name draft 2020-12 ({}) or draft-07 ({}), not {found}",
        Draft::Draft202012.uri(),
        Draft::Draft7.uri()
    )
}

fn check_size(schema: &Value, problems: &mut Vec<SchemaProblem>) {
    // Invariant: serializing a `Value` cannot fail (its keys are strings).
    let bytes = json_bytes(schema).unwrap_or(0);
    if bytes > SCHEMA_BYTES_MAX {
        problems.push(problem(
            "",
            format!("A schema may be at most 65,536 bytes as JSON; this one is {bytes} bytes"),
        ));
    }
}

fn check_input_root(schema: &Value, problems: &mut Vec<SchemaProblem>) {
    let text = "The root of an input schema must be \"type\": \"object\"";
    match schema.get("type") {
        Some(Value::String(name)) if name == "object" => {}
        Some(_) => problems.push(problem("/type", text)),
        None => problems.push(problem("", text)),
    }
}

/// The rules that concern one subschema and its own keywords.
fn check_node(root: &Value, node: &SchemaNode<'_>, problems: &mut Vec<SchemaProblem>) {
    let Value::Object(map) = node.value else {
        return;
    };
    for (key, value) in map {
        let at = push(&node.pointer, key);
        let keyword = key.as_str();
        let text = match keyword {
            "pattern" | "patternProperties" => Some(format!(
                "{keyword} is not allowed, because a hostile regular expression can stall validation"
            )),
            _ if REFUSED.contains(&keyword) => Some(format!("{keyword} is not allowed")),
            _ if ANCHORS.contains(&keyword) => Some(format!(
                "{keyword} is not allowed: $ref may point only to #/$defs/<name> or #/definitions/<name>"
            )),
            "format" => format_text(value),
            "$ref" => ref_text(root, value),
            "not" if value.as_object().is_none_or(|m| !m.is_empty()) => {
                Some("not may only be {}".to_owned())
            }
            "additionalProperties" if value.is_object() && map.contains_key("properties") => {
                Some("additionalProperties may not be a schema when properties is present; write true or false".to_owned())
            }
            "type" => type_text(value),
            "const" if !is_scalar(value) => Some(
                "const may contain only a string, a number, a boolean or null".to_owned(),
            ),
            "enum" => {
                check_enum(&at, value, problems);
                None
            }
            _ => None,
        };
        if let Some(text) = text {
            problems.push(problem(&at, text));
        }
    }
}

fn is_scalar(value: &Value) -> bool {
    !(value.is_array() || value.is_object())
}

fn format_text(value: &Value) -> Option<String> {
    let name = value.as_str()?;
    if FORMATS.contains(&name) {
        return None;
    }
    Some(format!(
        "format {name} is not allowed: a format is one of date, date-time, time, email, uri and uuid, which the runtime checks"
    ))
}

fn type_text(value: &Value) -> Option<String> {
    let known = |v: &Value| v.as_str().is_some_and(|name| TYPE_NAMES.contains(&name));
    let fine = match value {
        Value::Array(names) => names.iter().all(known),
        single => known(single),
    };
    (!fine).then(|| {
        "type must be string, number, integer, boolean, object, array or null, or a list of them"
            .to_owned()
    })
}

/// "$ref may point only to #/$defs/<name> or #/definitions/<name>", and the target must be
/// there.
fn ref_text(root: &Value, value: &Value) -> Option<String> {
    let only = "$ref may point only to #/$defs/<name> or #/definitions/<name>";
    let Some(reference) = value.as_str() else {
        return Some(only.to_owned());
    };
    let Some(target) = ref_target(reference) else {
        return Some(if reference.starts_with('#') {
            format!(
                "$ref {reference} is not a URI fragment: write each character other than letters, digits and -._~ as %XX, such as %20 for a space"
            )
        } else {
            format!("{only}, not {reference}")
        });
    };
    let split = [("/$defs/", "$defs"), ("/definitions/", "definitions")]
        .into_iter()
        .find_map(|(prefix, holder)| Some((holder, target.strip_prefix(prefix)?)));
    match split {
        Some((holder, name)) if !name.is_empty() && !name.contains('/') => {
            let exists = root
                .get(holder)
                .and_then(|defs| defs.get(unescape(name)))
                .is_some();
            (!exists).then(|| format!("$ref points to {reference}, which does not exist"))
        }
        _ => Some(format!("{only}, not {reference}")),
    }
}

fn check_enum(at: &str, value: &Value, problems: &mut Vec<SchemaProblem>) {
    let Value::Array(values) = value else { return };
    if values.len() > ENUM_VALUES_MAX {
        problems.push(problem(
            at,
            format!(
                "An enum may hold at most 1,000 values; this one holds {}",
                values.len()
            ),
        ));
    }
    for (i, _) in values.iter().enumerate().filter(|(_, v)| !is_scalar(v)) {
        problems.push(problem(
            &push_index(at, i),
            "enum may contain only strings, numbers, booleans and null",
        ));
    }
}

/// Whatever the meta-schema of the draft refuses that our own rules did not already name,
/// such as `"minimum": "five"`. A problem under a pointer already reported is left out.
fn meta_problems(schema: &Value, draft: Draft, problems: &mut Vec<SchemaProblem>) {
    let prepared = prepare(schema, draft);
    let Ok(meta) = jsonschema::meta::validator_for(&prepared) else {
        return;
    };
    let found: Vec<SchemaProblem> = meta
        .iter_errors(&prepared)
        .map(|error| {
            let at = error.instance_path().as_str().to_owned();
            problem(&at, fault_of(&error).answer_words())
        })
        .collect();
    for candidate in found {
        // A problem of the whole schema (its size, its root) does not cover its parts.
        let covered = problems.iter().any(|p| {
            candidate.pointer == p.pointer
                || (!p.pointer.is_empty()
                    && candidate.pointer.starts_with(&format!("{}/", p.pointer)))
        });
        if !covered {
            problems.push(candidate);
        }
    }
}

/// Each problem once, in the order found.
fn dedupe(problems: Vec<SchemaProblem>) -> Vec<SchemaProblem> {
    let mut seen = std::collections::HashSet::new();
    problems
        .into_iter()
        .filter(|p| seen.insert(p.clone()))
        .collect()
}
