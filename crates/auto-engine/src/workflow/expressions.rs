//! Expressions in their places: which `$` names each place offers (the page's table under
//! "Expressions" and "Data between tasks"), where a `${ }` string or a bare expression sits in
//! the document, and the check of each through `auto-script`.

use auto_doc::pointer;
use auto_script::{Place, ScriptOrigin, check_expression};
use serde_json::Value;

use super::read::Reader;

/// What every task's expressions may read, whatever their field.
const TASK_NAMES: [&str; 4] = ["$context", "$workflow", "$runtime", "$task"];
/// What the document's own input.from, output.as and timeout may read.
const DOCUMENT_NAMES: [&str; 2] = ["$workflow", "$runtime"];

/// The `$` names a place offers, each written with its `$`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Scope {
    names: Vec<String>,
}

impl Scope {
    /// The top task list: the names every task has.
    pub fn top() -> Self {
        Self::of(&TASK_NAMES)
    }

    /// The document's own fields, outside any task.
    pub fn document() -> Self {
        Self::of(&DOCUMENT_NAMES)
    }

    /// A trigger or listen filter: `$data` alone, since the playbook matches it without the
    /// run.
    pub fn filter() -> Self {
        Self::of(&["$data"])
    }

    /// A catch's conditions, or a named error, retry or timeout: the task's input and the
    /// error, under `$error` or the name `catch.as` gives.
    pub fn catch_scope(error_name: Option<&str>) -> Self {
        let error = error_name.map_or_else(|| "$error".to_owned(), |name| format!("${name}"));
        Self::top().with(&["$data", "$input", &error])
    }

    fn of(names: &[&str]) -> Self {
        Self {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
        }
    }

    /// This scope and `extra`.
    pub fn with(&self, extra: &[&str]) -> Self {
        let mut names = self.names.clone();
        for name in extra {
            if !names.iter().any(|n| n == name) {
                names.push((*name).to_owned());
            }
        }
        Self { names }
    }
}

/// The text between `${` and `}` of a `${ }` string, and its byte offset in the string.
pub(crate) fn enclosed(text: &str) -> Option<(&str, usize)> {
    let start = text.len() - text.trim_start().len();
    let trimmed = text.trim();
    let inner = trimmed.strip_prefix("${")?.strip_suffix('}')?;
    Some((inner, start + 2))
}

/// Whether a value is written as an expression.
pub(super) fn is_expression(value: &Value) -> bool {
    value.as_str().is_some_and(|text| enclosed(text).is_some())
}

impl Reader<'_> {
    /// Checks `text`, which starts at byte `offset` of the string at `at`, as one expression
    /// whose free names `scope` offers.
    pub fn expression(&mut self, at: &str, value: &str, offset: usize, text: &str, scope: &Scope) {
        if self.timed_out {
            return;
        }
        if self.expired.is_some_and(|expired| expired()) {
            self.timed_out = true;
            return;
        }
        let names: Vec<&str> = scope.names.iter().map(String::as_str).collect();
        let problems = check_expression(text, &Place::offering(&names));
        if problems.is_empty() {
            return;
        }
        let origin = self.origin(at, value, offset);
        for problem in problems {
            self.issues.push(problem.to_issue(&origin, at));
        }
    }

    /// Where byte `offset` of the string at `at` sits in the source: after an opening quote,
    /// or on the first line of a block scalar's content.
    fn origin(&self, at: &str, value: &str, offset: usize) -> ScriptOrigin {
        let position = self.doc.value_position(at);
        let mut lines = self
            .source
            .lines()
            .skip(position.line.saturating_sub(1) as usize);
        let line_text = lines.next().unwrap_or_default();
        let indicator = line_text
            .chars()
            .nth(position.column.saturating_sub(1) as usize);
        let (mut line, mut column) = (position.line, position.column);
        match indicator {
            Some('\'' | '"') => column += 1,
            Some('|' | '>') => {
                let content = lines.find(|l| !l.trim().is_empty()).unwrap_or_default();
                let indent = content.len() - content.trim_start_matches(' ').len();
                line += 1;
                column = u32::try_from(indent).unwrap_or(0) + 1;
            }
            _ => {}
        }
        let indent = column.saturating_sub(1);
        let prefix = value.get(..offset).unwrap_or_default();
        match prefix.rfind('\n') {
            None => column += u32::try_from(prefix.chars().count()).unwrap_or(0),
            Some(last) => {
                line += u32::try_from(prefix.matches('\n').count()).unwrap_or(0);
                column =
                    indent + 1 + u32::try_from(prefix[last + 1..].chars().count()).unwrap_or(0);
            }
        }
        ScriptOrigin::new(line, column, indent)
    }

    /// A field that is an expression even without `${ }`: if, when, exceptWhen, for.in, while.
    pub fn bare(&mut self, at: &str, scope: &Scope) {
        match self.get(at) {
            Some(Value::String(text)) => {
                let (inner, offset) = enclosed(text).unwrap_or((text, 0));
                if inner.trim().is_empty() {
                    self.at(at, "Expected an expression, not empty text.");
                } else {
                    self.expression(at, text, offset, inner, scope);
                }
            }
            Some(Value::Bool(_)) | None => {}
            Some(_) => self.at(at, "Expected an expression."),
        }
    }

    /// A value that may hold `${ }` strings anywhere: a template.
    pub fn template(&mut self, at: &str, value: &Value, scope: &Scope) {
        match value {
            Value::String(text) => {
                if let Some((inner, offset)) = enclosed(text) {
                    self.expression(at, text, offset, inner, scope);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.template(&format!("{at}/{i}"), item, scope);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    self.template(&pointer::child_pointer(at, key), item, scope);
                }
            }
            _ => {}
        }
    }

    /// input.from, output.as, export.as: a string is an expression even without `${ }`;
    /// a mapping or list is a template.
    pub fn shaping(&mut self, at: &str, value: &Value, scope: &Scope) {
        if value.is_string() {
            self.bare(at, scope);
        } else {
            self.template(at, value, scope);
        }
    }
}
