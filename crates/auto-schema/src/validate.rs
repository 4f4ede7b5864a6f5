//! Validation at run time: a schema compiled once (`Send + Sync`, cache it per schema), and
//! every distinct issue of an input or an answer in our own words.

use std::collections::HashSet;
use std::fmt;

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde::Serialize;
use serde_json::Value;

use crate::check::{SchemaProblem, SchemaRole, schema_problems};
use crate::draft::Draft;
use crate::formats::{is_date, is_date_time, is_email, is_time, is_uri, is_uuid};
use crate::limits::{ANSWER_DEPTH_MAX, VALIDATION_ISSUES_SHOWN_MAX};
use crate::messages::{Fault, fault_of, form_noun};
use crate::pointer::{first_too_deep, push, unescape};
use crate::walk::schema_nodes;

/// A schema ready to validate: it passed [`check_schema`](crate::check_schema) and was built once.
#[derive(Debug)]
pub struct CompiledSchema {
    validator: jsonschema::Validator,
    schema: Value,
    draft: Draft,
}

/// Why a schema could not be compiled: the save-time check's problems, or (never expected
/// after the check) the validator's own refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    pub problems: Vec<SchemaProblem>,
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown: Vec<String> = self
            .problems
            .iter()
            .map(|p| format!("{}: {}", p.pointer, p.text))
            .collect();
        write!(f, "the schema cannot be compiled: {}", shown.join("; "))
    }
}

impl std::error::Error for CompileError {}

/// One way an input or an answer fails its schema.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ValidationIssue {
    /// JSON pointer into the instance, such as `/day`; empty for the instance itself.
    pub pointer: String,
    /// The answer style's words, such as `Expected a string in the format date, such as
    /// 2026-04-01`.
    pub text: String,
    /// The field as an input refusal names it, such as `day` or `lines[0].name`; `input` for
    /// the whole input.
    pub field: String,
    /// The input style's words, such as `expected a date such as 2026-04-01`.
    pub field_text: String,
    /// The `description` of the field's schema, when it has one.
    pub description: Option<String>,
}

impl ValidationIssue {
    pub(crate) fn new(pointer: String, instance: &Value, fault: &Fault) -> Self {
        let field = field_name(instance, &pointer);
        let (text, field_text) = (fault.answer_words(), fault.input_words());
        Self {
            pointer,
            text,
            field,
            field_text,
            description: None,
        }
    }

    /// `/day: Expected a string in the format date, such as 2026-04-01`; the text alone for
    /// the answer itself.
    pub fn answer_message(&self) -> String {
        if self.pointer.is_empty() {
            self.text.clone()
        } else {
            format!("{}: {}", self.pointer, self.text)
        }
    }

    /// `day: expected a date such as 2026-04-01`, or with the field's description,
    /// `month, The month to report on: expected at least 6 characters`.
    pub fn input_message(&self) -> String {
        match &self.description {
            Some(description) => format!("{}, {description}: {}", self.field, self.field_text),
            None => format!("{}: {}", self.field, self.field_text),
        }
    }
}

/// At most [`VALIDATION_ISSUES_SHOWN_MAX`] answer messages, each once, then
/// `K more issues are not shown.`
pub fn render_answer_issues(issues: &[ValidationIssue]) -> Vec<String> {
    capped(issues.iter().map(ValidationIssue::answer_message))
}

/// At most [`VALIDATION_ISSUES_SHOWN_MAX`] input messages, each once, then
/// `K more issues are not shown.`
pub fn render_input_issues(issues: &[ValidationIssue]) -> Vec<String> {
    capped(issues.iter().map(ValidationIssue::input_message))
}

fn capped(messages: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    let mut distinct: Vec<String> = messages.filter(|m| seen.insert(m.clone())).collect();
    if distinct.len() > VALIDATION_ISSUES_SHOWN_MAX {
        let hidden = distinct.len() - VALIDATION_ISSUES_SHOWN_MAX;
        distinct.truncate(VALIDATION_ISSUES_SHOWN_MAX);
        distinct.push(count_line(hidden));
    }
    distinct
}

/// `K more issues are not shown.`
fn count_line(hidden: usize) -> String {
    let noun = if hidden == 1 {
        "issue is"
    } else {
        "issues are"
    };
    format!("{hidden} more {noun} not shown.")
}

/// What a rejection shows of issues given as (pointer, message): each distinct issue once, in
/// the order found, at most [`VALIDATION_ISSUES_SHOWN_MAX`], then one line that counts the
/// rest, under `whole`, the pointer of the value they are issues of (such as `/input`): the
/// count line is no issue of its own, and never takes the pointer of an issue it counts.
pub fn shown_issues(issues: Vec<(String, String)>, whole: &str) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    let mut distinct: Vec<(String, String)> = issues
        .into_iter()
        .filter(|i| seen.insert(i.clone()))
        .collect();
    if distinct.len() > VALIDATION_ISSUES_SHOWN_MAX {
        let hidden = distinct.len() - VALIDATION_ISSUES_SHOWN_MAX;
        distinct.truncate(VALIDATION_ISSUES_SHOWN_MAX);
        distinct.push((whole.to_owned(), count_line(hidden)));
    }
    distinct
}

impl CompiledSchema {
    /// Checks the schema as [`check_schema`](crate::check_schema) does (an output schema's rules, which every
    /// schema follows) and builds its validator. No `$ref` leaves the document.
    pub fn compile(schema: &Value) -> Result<Self, CompileError> {
        let checked = schema_problems(schema, SchemaRole::Output);
        match checked.built {
            Some((validator, prepared)) if checked.problems.is_empty() => Ok(Self {
                validator,
                schema: prepared,
                draft: checked.draft,
            }),
            _ => Err(CompileError {
                problems: checked.problems,
            }),
        }
    }

    /// The draft the schema is read as.
    pub fn draft(&self) -> Draft {
        self.draft
    }

    /// Whether the instance matches, without building any issue.
    pub fn is_valid(&self, instance: &Value) -> bool {
        first_too_deep(instance, ANSWER_DEPTH_MAX).is_none() && self.validator.is_valid(instance)
    }

    /// Every distinct issue, in the order the validator meets them. An instance nested deeper
    /// than [`ANSWER_DEPTH_MAX`] gets that one issue alone.
    pub fn validate(&self, instance: &Value) -> Vec<ValidationIssue> {
        if let Some(at) = first_too_deep(instance, ANSWER_DEPTH_MAX) {
            return vec![ValidationIssue::new(
                at,
                instance,
                &Fault::TooDeep(ANSWER_DEPTH_MAX),
            )];
        }
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for error in self.validator.iter_errors(instance) {
            for issue in self.issues_of(&error, instance) {
                if seen.insert((issue.pointer.clone(), issue.text.clone())) {
                    out.push(issue);
                }
            }
        }
        out
    }

    fn issues_of(&self, error: &ValidationError<'_>, instance: &Value) -> Vec<ValidationIssue> {
        let base = error.instance_path().as_str();
        let node = schema_at_keyword(&self.schema, error.evaluation_path().as_str());
        let fault = match fault_of(error) {
            Fault::AnyOf => forms(node.schema, "anyOf").unwrap_or(Fault::AnyOf),
            Fault::OneOfNone => forms(node.schema, "oneOf").unwrap_or(Fault::OneOfNone),
            fault => fault,
        };
        let names: Vec<String> = match error.kind() {
            ValidationErrorKind::Required { property } => {
                vec![
                    property
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| property.to_string()),
                ]
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => unexpected.clone(),
            _ => {
                let mut issue = ValidationIssue::new(base.to_owned(), instance, &fault);
                issue.description = node.description;
                return vec![issue];
            }
        };
        names
            .iter()
            .map(|name| {
                let mut issue = ValidationIssue::new(push(base, name), instance, &fault);
                issue.description = property_description(&self.schema, node.schema, name);
                issue
            })
            .collect()
    }
}

/// The forms of an `anyOf` or `oneOf`, when each is simple enough to describe.
fn forms(holder: Option<&Value>, keyword: &str) -> Option<Fault> {
    let list = holder?.get(keyword)?.as_array()?;
    list.iter()
        .map(form_noun)
        .collect::<Option<Vec<String>>>()
        .map(Fault::Forms)
}

/// The validator of a schema, and the schema as it reads it. A refusal here is one the
/// save-time rules did not foresee; it is reported in the validator's words.
pub(crate) fn build(
    schema: &Value,
    draft: Draft,
) -> Result<(jsonschema::Validator, Value), SchemaProblem> {
    let prepared = prepare(schema, draft);
    match options(draft).build(&prepared) {
        Ok(validator) => Ok((validator, prepared)),
        Err(error) => Err(SchemaProblem {
            pointer: error.instance_path().as_str().to_owned(),
            text: format!("The validator cannot read this schema: {}", error.masked()),
        }),
    }
}

/// The options every compiled schema shares: the draft, format assertion on, and our own
/// check of each of the six formats in place of the validator's.
fn options(draft: Draft) -> jsonschema::ValidationOptions<'static> {
    jsonschema::options()
        .with_draft(draft.to_jsonschema())
        .should_validate_formats(true)
        .with_format("date", is_date)
        .with_format("date-time", is_date_time)
        .with_format("time", is_time)
        .with_format("email", is_email)
        .with_format("uri", is_uri)
        .with_format("uuid", is_uuid)
}

/// The schema as the validator reads it: `$schema` at the root names the chosen draft, and
/// `$id` and nested `$schema` are removed, so that `#/$defs/<name>` always means this
/// document's root, as the save-time check read it.
pub(crate) fn prepare(schema: &Value, draft: Draft) -> Value {
    let mut prepared = schema.clone();
    let marked: Vec<String> = schema_nodes(schema)
        .into_iter()
        .filter(|n| n.value.get("$id").is_some() || n.value.get("$schema").is_some())
        .map(|n| n.pointer)
        .collect();
    for at in marked {
        if let Some(Value::Object(map)) = prepared.pointer_mut(&at) {
            map.shift_remove("$id");
            map.shift_remove("$schema");
        }
    }
    if let Value::Object(map) = &mut prepared {
        map.insert("$schema".to_owned(), Value::from(draft.uri()));
    }
    prepared
}

/// The field of an instance pointer in an input refusal's words: `a.b[0].c`, or `input`.
fn field_name(instance: &Value, pointer: &str) -> String {
    if pointer.is_empty() {
        return "input".to_owned();
    }
    let mut out = String::new();
    let mut node = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let segment = unescape(raw);
        match node {
            Some(Value::Array(items)) => {
                out.push_str(&format!("[{segment}]"));
                node = segment.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            other => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&segment);
                node = other.and_then(|v| v.get(&segment));
            }
        }
    }
    out
}

/// The schema that holds a failing keyword, and the description that names its field.
struct KeywordSite<'a> {
    schema: Option<&'a Value>,
    description: Option<String>,
}

/// Follows an evaluation path (`/properties/month/$ref/minLength`) through the schema,
/// resolving each `$ref`, to the schema that holds the last keyword. The description is the
/// outermost one among the schemas that apply to the same place of the instance, so a
/// property's own words win over its definition's.
fn schema_at_keyword<'a>(root: &'a Value, path: &str) -> KeywordSite<'a> {
    let segments: Vec<String> = path.split('/').skip(1).map(unescape).collect();
    let mut node = root;
    let mut description = describe(node);
    let mut i = 0;
    while i + 1 < segments.len() {
        let Some((next, used, same_place)) = step(root, node, &segments[i..]) else {
            return KeywordSite {
                schema: None,
                description,
            };
        };
        node = next;
        i += used;
        if !same_place {
            description = None;
        }
        if description.is_none() {
            description = describe(node);
        }
    }
    KeywordSite {
        schema: Some(node),
        description,
    }
}

fn describe(node: &Value) -> Option<String> {
    node.get("description")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// One step of an evaluation path: the schema it leads to, how many segments it used, and
/// whether it applies at the same place of the instance.
fn step<'a>(
    root: &'a Value,
    node: &'a Value,
    segments: &[String],
) -> Option<(&'a Value, usize, bool)> {
    let keyword = segments[0].as_str();
    let named = |same: bool| Some((node.get(keyword)?.get(segments.get(1)?.as_str())?, 2, same));
    let indexed = |same: bool| {
        let index = segments.get(1)?.parse::<usize>().ok()?;
        Some((node.get(keyword)?.get(index)?, 2, same))
    };
    match keyword {
        "properties" | "patternProperties" => named(false),
        "$defs" | "definitions" | "dependentSchemas" => named(true),
        "allOf" | "anyOf" | "oneOf" => indexed(true),
        "prefixItems" => indexed(false),
        "items" if node.get("items").is_some_and(Value::is_array) => indexed(false),
        "not" => Some((node.get(keyword)?, 1, true)),
        "$ref" => {
            let target = node.get("$ref")?.as_str()?.strip_prefix('#')?;
            Some((root.pointer(target)?, 1, true))
        }
        _ => Some((node.get(keyword)?, 1, false)),
    }
}

/// The description of `properties/<name>` of the schema that failed, following one `$ref`.
fn property_description(root: &Value, holder: Option<&Value>, name: &str) -> Option<String> {
    let property = holder?.get("properties")?.get(name)?;
    describe(property).or_else(|| {
        let target = property.get("$ref")?.as_str()?.strip_prefix('#')?;
        describe(root.pointer(target)?)
    })
}
