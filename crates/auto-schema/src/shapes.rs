//! The output shapes of supplement §6: their published JSON Schemas, and the rules a shape
//! adds beyond its schema (unique category names; each series line's x strictly increasing
//! and of one kind; table rows as long as the columns, each cell of its column's type).

use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use crate::formats::{date_time_instant, is_date};
use crate::messages::{Fault, type_name};
use crate::validate::{CompiledSchema, ValidationIssue};

/// The shapes `output.shape` may name.
pub const SHAPE_NAMES: &[&str] = &["text", "categories", "series", "table"];

/// The JSON Schema a shape publishes as the definition's `output_schema`, and sends to the
/// provider as `output.schema` would be. The page's optional fields (`title?`, `unit?`, a
/// column's `type?`) are written as the reasoning page asks of a schema every provider
/// accepts: "list every property in required. Write an optional property as nullable", since
/// OpenAI and Azure strict structured outputs refuse an optional property. An answer may
/// still leave them out, and a null one reads back as absent ([`shape_output`]).
pub fn shape_schema(name: &str) -> Option<Value> {
    let title = json!({"type": ["string", "null"]});
    let unit = json!({"type": ["string", "null"]});
    Some(match name {
        "text" => {
            object(json!({"title": title, "text": {"type": "string", "description": "Markdown"}}))
        }
        "categories" => object(
            json!({"title": title, "unit": unit, "categories": {"type": "array", "items": object(
                json!({"name": {"type": "string"}, "value": {"type": "number"}}))}}),
        ),
        "series" => object(
            json!({"title": title, "unit": unit, "lines": {"type": "array", "items": object(
                json!({"name": {"type": "string"}, "points": {"type": "array", "items": object(
                    json!({"x": {"anyOf": [
                        {"type": "string", "format": "date"},
                        {"type": "string", "format": "date-time"},
                        {"type": "number"}]},
                        "y": {"type": "number"}}))}}))}}),
        ),
        "table" => object(
            json!({"title": title, "columns": {"type": "array", "items": object(
                json!({"name": {"type": "string"}, "type": {
                    "type": ["string", "null"],
                    "enum": ["string", "number", "boolean", "date", null]}}))},
                "rows": {"type": "array", "items": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}}}}),
        ),
        _ => return None,
    })
}

/// An object of these properties, each required and no other allowed.
fn object(properties: Value) -> Value {
    let required: Vec<&String> = properties
        .as_object()
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// A change made to one object of an answer, given the names of its optional fields.
type FieldEdit<'a> = dyn FnMut(&mut Map<String, Value>, &[&str]) + 'a;

/// A table column's optional field.
const OPTIONAL_IN_COLUMN: &[&str] = &["type"];

/// A shape's optional fields at its root.
fn optional_at_root(name: &str) -> &'static [&'static str] {
    match name {
        "categories" | "series" => &["title", "unit"],
        _ => &["title"],
    }
}

/// Applies `edit` to each object of an answer that holds optional fields of the shape, with
/// the names of those fields.
fn optional_places(name: &str, answer: &mut Value, edit: &mut FieldEdit<'_>) {
    let Value::Object(root) = answer else {
        return;
    };
    edit(root, optional_at_root(name));
    if name == "table"
        && let Some(Value::Array(columns)) = root.get_mut("columns")
    {
        for column in columns {
            if let Value::Object(column) = column {
                edit(column, OPTIONAL_IN_COLUMN);
            }
        }
    }
}

/// The answer as the run keeps it: under a shape, an optional field that is null reads back as
/// absent, as the page's `title?` writes it; without a shape, the answer as it is.
pub fn shape_output(shape: Option<&str>, mut answer: Value) -> Value {
    let Some(name) = shape else {
        return answer;
    };
    optional_places(name, &mut answer, &mut |object, fields| {
        for field in fields {
            if object.get(*field).is_some_and(Value::is_null) {
                object.shift_remove(*field);
            }
        }
    });
    answer
}

/// The answer as the schema is checked against it: an optional field left out reads as null.
fn with_optional_nulls(name: &str, answer: &Value) -> Value {
    let mut filled = answer.clone();
    optional_places(name, &mut filled, &mut |object, fields| {
        for field in fields {
            object.entry(*field).or_insert(Value::Null);
        }
    });
    filled
}

/// Every issue of an answer against a shape: its schema first, then, when the schema
/// matches, the shape's own rules. An unknown shape name gives one issue.
pub fn check_shape(name: &str, answer: &Value) -> Vec<ValidationIssue> {
    let Some(compiled) = compiled_shape(name) else {
        return vec![issue(
            "",
            answer,
            format!("There is no output shape named {name}"),
        )];
    };
    let issues = compiled.validate(&with_optional_nulls(name, answer));
    if !issues.is_empty() {
        return issues;
    }
    match name {
        "categories" => category_rules(answer),
        "series" => series_rules(answer),
        "table" => table_rules(answer),
        _ => Vec::new(),
    }
}

/// Each shape's schema compiled once for the life of the process.
fn compiled_shape(name: &str) -> Option<&'static CompiledSchema> {
    static COMPILED: OnceLock<HashMap<&'static str, CompiledSchema>> = OnceLock::new();
    let all = COMPILED.get_or_init(|| {
        SHAPE_NAMES
            .iter()
            .filter_map(|n| Some((*n, CompiledSchema::compile(&shape_schema(n)?).ok()?)))
            .collect()
    });
    all.get(name)
}

fn issue(pointer: &str, answer: &Value, words: String) -> ValidationIssue {
    let mut issue = ValidationIssue::new(pointer.to_owned(), answer, &Fault::Other);
    issue.field_text = lowercase_first(&words);
    issue.text = words;
    issue
}

fn lowercase_first(words: &str) -> String {
    let mut chars = words.chars();
    chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default()
}

fn items<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// "names unique".
fn category_rules(answer: &Value) -> Vec<ValidationIssue> {
    let mut first_at: HashMap<&str, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, category) in items(answer, "categories").iter().enumerate() {
        let Some(name) = category.get("name").and_then(Value::as_str) else {
            continue;
        };
        if let Some(first) = first_at.get(name) {
            out.push(issue(&format!("/categories/{i}/name"), answer, format!(
                "Repeats the category name {}, already at /categories/{first}/name; category names must be unique",
                Value::from(name)
            )));
        } else {
            first_at.insert(name, i);
        }
    }
    out
}

/// The kind of an x value of a series: a date, a date-time or a number.
#[derive(Clone, Copy, PartialEq, Eq)]
enum XKind {
    Date,
    DateTime,
    Number,
}

impl XKind {
    fn of(x: &Value) -> Option<Self> {
        match x {
            Value::Number(_) => Some(XKind::Number),
            Value::String(s) if is_date(s) => Some(XKind::Date),
            Value::String(s) if date_time_instant(s).is_some() => Some(XKind::DateTime),
            _ => None,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            XKind::Date => "a date",
            XKind::DateTime => "a date-time",
            XKind::Number => "a number",
        }
    }
}

/// How two x values of one kind compare: dates as text (YYYY-MM-DD sorts in time),
/// date-times as instants whatever their offsets, numbers as numbers.
fn compare_x(kind: XKind, a: &Value, b: &Value) -> Option<Ordering> {
    match kind {
        XKind::Date => Some(a.as_str()?.cmp(b.as_str()?)),
        XKind::DateTime => {
            Some(date_time_instant(a.as_str()?)?.cmp(&date_time_instant(b.as_str()?)?))
        }
        XKind::Number => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// "in each line, x strictly increasing and of one kind".
fn series_rules(answer: &Value) -> Vec<ValidationIssue> {
    let mut out = Vec::new();
    for (l, line) in items(answer, "lines").iter().enumerate() {
        let points = items(line, "points");
        let Some(kind) = points.first().and_then(|p| XKind::of(&p["x"])) else {
            continue;
        };
        for (p, pair) in points.windows(2).enumerate() {
            let (before, x) = (&pair[0]["x"], &pair[1]["x"]);
            let at = format!("/lines/{l}/points/{}/x", p + 1);
            if XKind::of(x) != Some(kind) {
                out.push(issue(&at, answer, format!(
                    "Expected {} like the line's first x; a line's x values must be of one kind",
                    kind.noun()
                )));
            } else if XKind::of(before) == Some(kind)
                && compare_x(kind, before, x) != Some(Ordering::Less)
            {
                out.push(issue(&at, answer, format!(
                    "Expected an x after {before}, the point before; a line's x values must increase strictly"
                )));
            }
        }
    }
    out
}

/// "every row as long as columns; each cell of its column's type or null".
fn table_rules(answer: &Value) -> Vec<ValidationIssue> {
    let columns = items(answer, "columns");
    let mut out = Vec::new();
    for (r, row) in items(answer, "rows").iter().enumerate() {
        let cells = row.as_array().map(Vec::as_slice).unwrap_or(&[]);
        if cells.len() != columns.len() {
            out.push(issue(
                &format!("/rows/{r}"),
                answer,
                format!(
                    "Expected {} cells, one for each column; found {}",
                    columns.len(),
                    cells.len()
                ),
            ));
        }
        for (c, (cell, column)) in cells.iter().zip(columns).enumerate() {
            if let Some(words) = cell_fault(cell, column) {
                out.push(issue(&format!("/rows/{r}/{c}"), answer, words));
            }
        }
    }
    out
}

fn cell_fault(cell: &Value, column: &Value) -> Option<String> {
    let kind = column.get("type").and_then(Value::as_str)?;
    let fits = match kind {
        _ if cell.is_null() => true,
        "string" => cell.is_string(),
        "number" => cell.is_number(),
        "boolean" => cell.is_boolean(),
        "date" => cell.as_str().is_some_and(is_date),
        _ => true,
    };
    let name = column.get("name").map(Value::to_string).unwrap_or_default();
    let expected = match kind {
        "date" => "a date such as 2026-04-01",
        "number" => "a number",
        "boolean" => "a boolean",
        _ => "a string",
    };
    (!fits).then(|| {
        format!(
            "Expected {expected} or null, as the column {name} holds {kind} values; found {}",
            type_name(cell)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{SchemaRole, check_schema};

    #[test]
    fn every_shape_schema_passes_the_save_time_check() {
        for name in SHAPE_NAMES {
            let schema = shape_schema(name).expect("every listed shape has a schema");
            let report = check_schema(&schema, SchemaRole::Output);
            assert!(report.problems.is_empty(), "{name}: {:?}", report.problems);
            // The runtime's own schemas are ones every provider accepts.
            assert!(report.warnings.is_empty(), "{name}: {:?}", report.warnings);
            assert!(compiled_shape(name).is_some(), "{name} compiles");
        }
        assert!(shape_schema("pie").is_none());
    }

    #[test]
    fn an_optional_field_may_be_left_out_or_null_and_a_null_reads_back_as_absent() {
        let written = json!({"title": null, "columns": [{"name": "a", "type": null}, {"name": "b"}], "rows": [[1, "x"]]});
        assert!(check_shape("table", &written).is_empty());
        assert_eq!(
            shape_output(Some("table"), written),
            json!({"columns": [{"name": "a"}, {"name": "b"}], "rows": [[1, "x"]]})
        );
        let series = json!({"title": "t", "unit": null, "lines": []});
        assert!(check_shape("series", &series).is_empty());
        assert_eq!(
            shape_output(Some("series"), series),
            json!({"title": "t", "lines": []})
        );
        assert!(check_shape("text", &json!({"text": "hi"})).is_empty());
        let wrong = check_shape("text", &json!({"title": 3, "text": "hi"}));
        assert_eq!(wrong.len(), 1);
        assert_eq!(wrong[0].pointer, "/title");
        let wrong = check_shape(
            "table",
            &json!({"columns": [{"name": "a", "type": "colour"}], "rows": []}),
        );
        assert_eq!(wrong[0].pointer, "/columns/0/type");
    }
}
