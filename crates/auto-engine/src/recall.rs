//! Recall functions (supplement §7): Markdown with YAML front matter (description, input schema
//! and defaults, output schema or shape, and `events`, the 1 to 64 exact CloudEvents types the
//! function folds) and one fenced `ts` block exporting `initial` (a JSON value),
//! `fold(view, event)` (the next view) and `answer(view, input)`.
//!
//! What is pure lives here: the document's checks, one fold, the first view, and the answer
//! checked against the output contract. Keeping the view up to date as events are recorded is
//! the runtime's (`recall_runs`).

use auto_doc::{Issue, YamlConfig, read_markdown};
use auto_schema::{SchemaRole, shape_schema};
use auto_script::{ExportCall, ModuleShape, RequiredExport, ScriptError};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::computation::{Unworkable, check_output, find_program, output_checked};
use crate::definitions::{Checked, DefinitionChecker};
use crate::reasoning::{Fields, check_description, check_input};

const TOP_KEYS: [&str; 4] = ["description", "input", "output", "events"];

/// The most event types one recall function folds (supplement §7: "1 to 64").
pub const RECALL_EVENT_TYPES_MAX: usize = 64;

/// The most bytes a view may hold as JSON: a fold whose view grows past it stops the view.
pub const RECALL_VIEW_BYTES_MAX: usize = 16 * 1024 * 1024;

/// What a recall function's program exports.
pub const RECALL_EXPORTS: [RequiredExport; 3] = [
    RequiredExport {
        name: "initial",
        function: false,
    },
    RequiredExport {
        name: "fold",
        function: true,
    },
    RequiredExport {
        name: "answer",
        function: true,
    },
];

/// A recall function's document after it passed the checks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecallDocument {
    pub description: Option<String>,
    pub input_schema: Option<Value>,
    pub input_default: Option<Map<String, Value>>,
    /// The output contract: the written schema, or the shape's.
    pub output_schema: Option<Value>,
    pub output_shape: Option<String>,
    /// The event types it folds, in the document's order.
    pub events: Vec<String>,
    /// The TypeScript program.
    pub program: String,
    /// The source line of the program's first line.
    pub program_first_line: u32,
    pub warnings: Vec<String>,
}

impl RecallDocument {
    /// Whether the function folds events of `event_type`.
    pub fn folds(&self, event_type: &str) -> bool {
        self.events.iter().any(|t| t == event_type)
    }
}

/// The checker `create_definition` runs for the type recall.
#[derive(Clone, Copy, Debug, Default)]
pub struct RecallChecker;

impl DefinitionChecker for RecallChecker {
    fn check(&self, source: &str) -> Result<Checked, Vec<Issue>> {
        let document = check_recall(source)?;
        Ok(Checked {
            description: document.description,
            warnings: document.warnings,
            input_schema: document.input_schema,
            output_schema: document.output_schema,
            ..Checked::default()
        })
    }
}

/// Checks a recall function's source; the document, or every problem found.
pub fn check_recall(source: &str) -> Result<RecallDocument, Vec<Issue>> {
    let read = read_markdown(source, &YamlConfig::front_matter());
    let mut fields = Fields::new(&read.front_matter, &read.issues);
    let mut warnings = Vec::new();
    if !read.complete {
        return Err(fields.issues);
    }
    if !fields.doc.value().is_object() {
        fields.at(
            "",
            "The front matter must be a mapping of the fields description, input, output and events.",
        );
        return Err(fields.issues);
    }
    fields.only_keys("", &TOP_KEYS);
    let description = check_description(&mut fields);
    let input = check_input(&mut fields, &mut warnings);
    let (output_schema, output_shape) =
        check_output(&mut fields, &mut warnings, SchemaRole::Answer);
    let events = check_events(&mut fields);
    let program = match find_program(read.body, read.body_first_line, "recall function") {
        Ok((program, first_line)) => {
            let shape = ModuleShape::Exports(&RECALL_EXPORTS);
            for problem in auto_script::check_module(&program, &[], shape) {
                let line = first_line + problem.line.saturating_sub(1);
                fields
                    .issues
                    .push(Issue::at(line, problem.column, "", problem.text));
            }
            Some((program, first_line))
        }
        Err(issue) => {
            fields.issues.push(issue);
            None
        }
    };
    match (fields.issues.is_empty(), program) {
        (true, Some((program, program_first_line))) => Ok(RecallDocument {
            description,
            input_schema: input.schema,
            input_default: input.default,
            output_schema: output_schema.or_else(|| output_shape.as_deref().and_then(shape_schema)),
            output_shape,
            events,
            program,
            program_first_line,
            warnings: warnings.iter().map(Issue::message).collect(),
        }),
        _ => Err(fields.issues),
    }
}

/// `events`: 1 to [`RECALL_EVENT_TYPES_MAX`] event types, each a non-empty string, none twice.
fn check_events(fields: &mut Fields<'_>) -> Vec<String> {
    let Some(value) = fields.get("/events") else {
        fields.at(
            "",
            "The field events is missing: a recall function names the event types it folds, such as events: [order.placed].",
        );
        return Vec::new();
    };
    let Value::Array(items) = value else {
        fields.at("/events", "Expected a list of event types.");
        return Vec::new();
    };
    if items.is_empty() || items.len() > RECALL_EVENT_TYPES_MAX {
        fields.at(
            "/events",
            format!(
                "A recall function folds 1 to {RECALL_EVENT_TYPES_MAX} event types; this lists {}.",
                items.len()
            ),
        );
        return Vec::new();
    }
    let mut events: Vec<String> = Vec::new();
    for (index, item) in items.iter().enumerate() {
        let at = format!("/events/{index}");
        match item {
            Value::String(text) if text.trim().is_empty() => {
                fields.at(&at, "An event type is not empty.");
            }
            Value::String(text) if events.contains(text) => {
                fields.at(&at, format!("The event type {text} is listed twice."));
            }
            Value::String(text) => events.push(text.clone()),
            _ => fields.at(&at, "Expected string."),
        }
    }
    events
}

/// Why a view could not be made or go on: the program threw, a budget stopped it, or the view
/// is not data the runtime keeps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldError {
    pub detail: String,
}

/// The view before any event: the program's `initial`.
pub fn initial_view(document: &RecallDocument) -> Result<Value, FoldError> {
    let view =
        auto_script::with_sandbox(|sandbox| sandbox.read_export(&document.program, "initial", 0))
            .map_err(|error| FoldError {
            detail: script_words(document, "initial", error),
        })?;
    view_within_limit(view)
}

/// The view after `event` (the envelope as `list_playbook_events` gives it), with the clock at
/// the event's time (`now_ms`). Blocks the thread for up to a fold's time budget.
pub fn fold(
    document: &RecallDocument,
    view: &Value,
    event: &Value,
    now_ms: i64,
) -> Result<Value, FoldError> {
    let next = auto_script::with_sandbox(|sandbox| {
        sandbox.call_export(
            &document.program,
            "fold",
            &[("$view", view), ("$event", event)],
            now_ms,
            ExportCall::Fold,
        )
    })
    .map_err(|error| FoldError {
        detail: script_words(document, "fold", error),
    })?;
    view_within_limit(next)
}

fn view_within_limit(view: Value) -> Result<Value, FoldError> {
    let bytes = serde_json::to_vec(&view)
        .map(|v| v.len())
        .unwrap_or(usize::MAX);
    if bytes > RECALL_VIEW_BYTES_MAX {
        return Err(FoldError {
            detail: format!(
                "The view is {bytes} bytes as JSON, more than the {RECALL_VIEW_BYTES_MAX} a view may hold."
            ),
        });
    }
    Ok(view)
}

/// `answer(view, input)`, its value checked against the output contract. Blocks the thread
/// for up to a program's time budget.
pub fn answer(
    document: &RecallDocument,
    view: &Value,
    input: &Value,
    now_ms: i64,
) -> Result<Value, Unworkable> {
    let value = auto_script::with_sandbox(|sandbox| {
        sandbox.call_export(
            &document.program,
            "answer",
            &[("$view", view), ("$input", input)],
            now_ms,
            ExportCall::Program,
        )
    })
    .map_err(|error| {
        let budget = !matches!(error, ScriptError::Expression { .. });
        Unworkable {
            detail: script_words(document, "answer", error),
            issues: Vec::new(),
            budget,
        }
    })?;
    output_checked(
        value,
        document.output_schema.as_ref(),
        document.output_shape.as_deref(),
    )
}

/// A script's error in a reader's words, with its line in the document when it threw.
fn script_words(document: &RecallDocument, export: &str, error: ScriptError) -> String {
    match error {
        ScriptError::Expression { message, line } => {
            let at = line
                .map(|l| format!(" (line {})", document.program_first_line + l - 1))
                .unwrap_or_default();
            format!("{export} threw{at}: {message}")
        }
        other => format!("{export} was stopped: {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn source(front: &str, program: &str) -> String {
        format!("---\n{front}\n---\nOrders by month.\n\n```ts\n{program}\n```\n")
    }

    const PROGRAM: &str = "export const initial = {};\nexport function fold(view, event) {\n  const month = event.data.month;\n  view[month] = (view[month] ?? 0) + 1;\n  return view;\n}\nexport const answer = (view, input) => ({ count: view[input.month] ?? 0 });";

    /// Each issue as its pointer and text, without its line.
    fn messages(issues: &[Issue]) -> Vec<String> {
        issues
            .iter()
            .map(|issue| match issue.path.as_str() {
                "" => issue.text.clone(),
                path => format!("{path}: {}", issue.text),
            })
            .collect()
    }

    #[test]
    fn a_recall_folds_and_answers() {
        let document = check_recall(&source("events: [order.placed]", PROGRAM)).unwrap();
        assert_eq!(document.events, ["order.placed"]);
        assert!(document.folds("order.placed"));
        let mut view = initial_view(&document).unwrap();
        assert_eq!(view, json!({}));
        for month in ["2026-01", "2026-02", "2026-01"] {
            let event = json!({"type": "order.placed", "data": {"month": month}});
            view = fold(&document, &view, &event, 0).unwrap();
        }
        assert_eq!(view, json!({"2026-01": 2, "2026-02": 1}));
        let answered = answer(&document, &view, &json!({"month": "2026-01"}), 0).unwrap();
        assert_eq!(answered, json!({"count": 2}));
    }

    #[test]
    fn events_are_one_to_64_types_none_twice() {
        let types = |n: usize| {
            let list: Vec<String> = (0..n).map(|i| format!("t.{i}")).collect();
            format!("events: [{}]", list.join(", "))
        };
        assert!(check_recall(&source(&types(64), PROGRAM)).is_ok());
        let too_many = check_recall(&source(&types(65), PROGRAM)).unwrap_err();
        assert_eq!(
            messages(&too_many),
            ["/events: A recall function folds 1 to 64 event types; this lists 65."]
        );
        let none = check_recall(&source("events: []", PROGRAM)).unwrap_err();
        assert_eq!(
            messages(&none),
            ["/events: A recall function folds 1 to 64 event types; this lists 0."]
        );
        let twice = check_recall(&source("events: [a, b, a, '', 3]", PROGRAM)).unwrap_err();
        assert_eq!(
            messages(&twice),
            [
                "/events/2: The event type a is listed twice.",
                "/events/3: An event type is not empty.",
                "/events/4: Expected string."
            ]
        );
        let missing = check_recall(&source("description: x", PROGRAM)).unwrap_err();
        assert_eq!(
            messages(&missing),
            [
                "The field events is missing: a recall function names the event types it folds, such as events: [order.placed]."
            ]
        );
    }

    #[test]
    fn the_program_exports_initial_fold_and_answer() {
        let without_fold =
            "export const initial = 0;\nexport function answer(view, input) { return view; }";
        let issues = check_recall(&source("events: [a]", without_fold)).unwrap_err();
        assert_eq!(messages(&issues), ["The program does not export fold."]);
        assert_eq!(issues[0].line, 8);
        let initial_function = "export function initial() { return 0; }\nexport const fold = (v, e) => v;\nexport const answer = 3;";
        let issues = check_recall(&source("events: [a]", initial_function)).unwrap_err();
        assert_eq!(
            messages(&issues),
            [
                "The initial export must be a value, not a function.",
                "The answer export must be a function that is neither async nor a generator."
            ]
        );
        assert_eq!((issues[0].line, issues[1].line), (7, 9));
        let no_block = "---\nevents: [a]\n---\nNo program.\n";
        assert_eq!(
            messages(&check_recall(no_block).unwrap_err()),
            [
                "The body has no ```ts block: a recall function's program is the one fenced ts block of its body."
            ]
        );
        let unknown = check_recall(&source("events: [a]\nfolds: 1", PROGRAM)).unwrap_err();
        assert_eq!(
            messages(&unknown),
            ["/folds: Unknown key: the keys here are description, input, output and events."]
        );
    }

    #[test]
    fn a_fold_that_throws_or_grows_too_large_is_an_error() {
        let throwing = "export const initial = 0;\nexport function fold(view, event) {\n  if (event.data.bad) throw new Error('bad order');\n  return view + 1;\n}\nexport const answer = (v, i) => v;";
        let document = check_recall(&source("events: [a]", throwing)).unwrap();
        assert_eq!(
            fold(&document, &json!(1), &json!({"data": {}}), 0),
            Ok(json!(2))
        );
        let error = fold(&document, &json!(1), &json!({"data": {"bad": true}}), 0).unwrap_err();
        assert!(
            error.detail.starts_with("fold threw (line 9)"),
            "{}",
            error.detail
        );
        assert!(error.detail.contains("bad order"), "{}", error.detail);
        let spinning = "export const initial = 0;\nexport function fold(view, event) { while (true) {} }\nexport const answer = (v, i) => v;";
        let document = check_recall(&source("events: [a]", spinning)).unwrap();
        let error = fold(&document, &json!(0), &json!({}), 0).unwrap_err();
        assert!(
            error
                .detail
                .contains("The fold did more than 10000 checkpoints of work."),
            "{}",
            error.detail
        );
    }

    #[test]
    fn a_view_at_the_limit_is_kept_and_one_byte_past_is_refused() {
        // A string of n characters is n + 2 bytes as JSON.
        let at_limit = json!("x".repeat(RECALL_VIEW_BYTES_MAX - 2));
        assert!(view_within_limit(at_limit).is_ok());
        let past = json!("x".repeat(RECALL_VIEW_BYTES_MAX - 1));
        assert_eq!(
            view_within_limit(past).unwrap_err().detail,
            format!(
                "The view is {} bytes as JSON, more than the {RECALL_VIEW_BYTES_MAX} a view may hold.",
                RECALL_VIEW_BYTES_MAX + 1
            )
        );
    }

    #[test]
    fn an_answer_is_checked_against_the_output_contract() {
        let front = "events: [a]\noutput:\n  schema:\n    type: object\n    properties:\n      count: {type: string}\n    required: [count]";
        let document = check_recall(&source(front, PROGRAM)).unwrap();
        let refused = answer(&document, &json!({}), &json!({"month": "x"}), 0).unwrap_err();
        assert!(!refused.issues.is_empty());
        assert!(!refused.budget);
    }
}
