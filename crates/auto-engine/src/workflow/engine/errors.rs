//! A workflow's errors ("Errors, retries and timeouts"), the error a child's rejection raises
//! ("When the function's run does not succeed") and the run's rejection ("How a run ends").

use auto_problem::{Problem, ProblemIssue, Reason};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// "The short types of the errors the runtime raises ... are under
/// `https://open-workflow-specification.org/spec/1.0.0/errors/`".
pub const ERROR_TYPE_BASE: &str = "https://open-workflow-specification.org/spec/1.0.0/errors/";
/// The problem types of a function's run: `https://on.auto/problems/<reason or kind>`.
pub use auto_problem::PROBLEM_TYPE_BASE;
/// "Output of a run: 1,048,574 bytes as JSON".
pub const OUTPUT_BYTES_MAX: usize = 1_048_574;

/// An error of a run: "a type (a URI), an integer status, an instance that names the task that
/// raised it as a JSON Pointer, and an optional title and detail", with the kind, because and
/// issues of a function's rejection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkflowError {
    #[serde(rename = "type")]
    pub error_type: String,
    pub status: u16,
    #[serde(default)]
    pub instance: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub because: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issues: Option<Value>,
    /// The name of the task that raised it, for the rejection's detail; empty for the run's
    /// own (its input.from, output.as, timeout).
    #[serde(default)]
    pub step: String,
}

impl WorkflowError {
    /// An error of one of the runtime's short types.
    pub fn short(short: &str, status: u16, title: &str, detail: impl Into<String>) -> Self {
        Self {
            error_type: format!("{ERROR_TYPE_BASE}{short}"),
            status,
            instance: String::new(),
            title: Some(title.to_owned()),
            detail: Some(detail.into()),
            kind: None,
            because: None,
            issues: None,
            step: String::new(),
        }
    }

    pub fn expression(detail: impl Into<String>) -> Self {
        Self::short("expression", 400, "An expression failed", detail)
    }

    pub fn validation(detail: impl Into<String>) -> Self {
        Self::short("validation", 400, "A value is not valid", detail)
    }

    pub fn configuration(detail: impl Into<String>) -> Self {
        Self::short(
            "configuration",
            400,
            "The workflow is not configured to go on",
            detail,
        )
    }

    pub fn runtime(detail: impl Into<String>) -> Self {
        Self::short("runtime", 500, "A limit of the run was exceeded", detail)
    }

    pub fn timeout(detail: impl Into<String>) -> Self {
        Self::short("timeout", 408, "The step ran out of time", detail)
    }

    /// The error of an expression that gave no value: an expression error 400, or a runtime
    /// error 500 when a budget ran out.
    pub fn from_script(error: &auto_script::ScriptError) -> Self {
        match error {
            auto_script::ScriptError::Expression { message, .. } => Self::expression(message),
            auto_script::ScriptError::Runtime { message, .. } => Self::runtime(message),
        }
    }

    /// Places an error that has no place yet at the task `pointer` named `step`.
    pub fn at(mut self, pointer: &str, step: &str) -> Self {
        if self.instance.is_empty() {
            self.instance = pointer.to_owned();
        }
        if self.step.is_empty() {
            self.step = step.to_owned();
        }
        self
    }

    /// `$error`: the error without the step's name.
    pub fn to_value(&self) -> Value {
        let mut value = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut value {
            map.remove("step");
        }
        value
    }

    /// Whether the error's type is `short` of the runtime's types.
    pub fn is_short(&self, short: &str) -> bool {
        self.error_type
            .strip_prefix(ERROR_TYPE_BASE)
            .is_some_and(|s| s == short)
    }

    /// `<title, or else type>, at the step <name>: <detail>`.
    pub fn words(&self) -> String {
        let head = self
            .title
            .clone()
            .unwrap_or_else(|| self.error_type.clone());
        let mut text = head;
        if !self.step.is_empty() {
            text.push_str(&format!(", at the step {}", self.step));
        }
        match self.detail.as_deref().filter(|d| !d.is_empty()) {
            Some(detail) => text.push_str(&format!(": {detail}")),
            None => text.push('.'),
        }
        text
    }

    /// Whether each field `with` names equals the error's (`details` is the detail). A `type`
    /// may be written short, as `timeout`.
    pub fn matches(&self, with: &Map<String, Value>) -> bool {
        let mine = self.to_value();
        with.iter().all(|(key, wanted)| match key.as_str() {
            "type" => wanted.as_str().is_some_and(|t| {
                t == self.error_type || format!("{ERROR_TYPE_BASE}{t}") == self.error_type
            }),
            "status" => wanted.as_u64() == Some(u64::from(self.status)),
            "details" => mine.get("detail").unwrap_or(&Value::Null) == wanted,
            other => mine.get(other).unwrap_or(&Value::Null) == wanted,
        })
    }
}

/// The error a child's rejection raises at its call task (the page's table "When the
/// function's run does not succeed"): type, status, title, detail, kind, because and issues. A
/// problem without a title (a child that could not be reached) takes the page's own words.
pub fn call_error(problem: &Problem, def_type: &str, name: &str) -> WorkflowError {
    let kind = problem.kind.clone();
    let on_auto = |k: &str| format!("{PROBLEM_TYPE_BASE}{k}");
    let short = |s: &str| format!("{ERROR_TYPE_BASE}{s}");
    let (error_type, status, what) = match (problem.reason, kind.as_deref()) {
        (Reason::InvalidInput, _) => (short("validation"), 400, "refused its input"),
        (Reason::Forbidden, _) => (short("authorization"), 403, "was not allowed"),
        (Reason::NotFound, _) => (short("configuration"), 404, "was not found"),
        (Reason::Conflict, Some(k @ ("tools_called" | "effect_unknown"))) => {
            (on_auto(k), 409, "may have called its tools")
        }
        (Reason::Conflict, _) => (short("runtime"), 409, "could not give an output"),
        (Reason::Unavailable, Some(k @ ("tools_unfinished" | "rebuilding"))) => {
            (on_auto(k), 503, "was unavailable")
        }
        (Reason::Cancelled, _) => (on_auto("cancelled"), 409, "was cancelled"),
        (Reason::Unanswered, _) => (on_auto("unanswered"), 410, "was not answered"),
        (Reason::Failed, _) => (short("runtime"), 500, "failed"),
        (Reason::Unavailable, _) => (short("communication"), 503, "was unavailable"),
    };
    let title = if problem.title.is_empty() {
        if def_type == "workflow" {
            format!("The workflow {name} stopped")
        } else {
            format!("The {def_type} function {name} {what}")
        }
    } else {
        problem.title.clone()
    };
    WorkflowError {
        error_type,
        status,
        instance: String::new(),
        title: Some(title),
        detail: Some(problem.detail.clone()).filter(|d| !d.is_empty()),
        kind,
        because: problem.because.clone(),
        issues: (!problem.issues.is_empty())
            .then(|| serde_json::to_value(&problem.issues).unwrap_or(Value::Null)),
        step: String::new(),
    }
}

/// The rejection an uncaught error ends a run with ("How a run ends"): the reason and kind of
/// the page's table, the error's because for the kinds that keep it, its issues, and the
/// detail `<title>, at the step <name>: <detail>`. Issues a `raise` wrote in another shape than
/// the problem document's (a list of pointers and messages) stay in the error, not the problem.
pub fn rejection(error: &WorkflowError, workflow_name: &str) -> Problem {
    let kind_of_type = error.error_type.strip_prefix(PROBLEM_TYPE_BASE);
    let (reason, kind) = match kind_of_type {
        Some(k @ ("tools_unfinished" | "rebuilding")) => (Reason::Unavailable, Some(k.to_owned())),
        Some(k @ ("effect_unknown" | "tools_called")) => (Reason::Conflict, Some(k.to_owned())),
        Some("unanswered") => (Reason::Unanswered, error.kind.clone()),
        _ if (400..500).contains(&error.status) && error.status != 408 && error.status != 429 => {
            (Reason::InvalidInput, None)
        }
        _ => (Reason::Unavailable, None),
    };
    let because = match kind.as_deref() {
        Some("tools_unfinished" | "effect_unknown" | "rebuilding") => error.because.clone(),
        _ => None,
    };
    let issues = error
        .issues
        .clone()
        .and_then(|issues| serde_json::from_value::<Vec<ProblemIssue>>(issues).ok())
        .unwrap_or_default();
    problem(
        reason,
        kind.as_deref(),
        because.as_deref(),
        &format!("The workflow {workflow_name} stopped"),
        &error.words(),
    )
    .with_issues(issues)
}

/// A problem document of a run's rejection: its type names the kind where there is one.
pub(super) fn problem(
    reason: Reason,
    kind: Option<&str>,
    because: Option<&str>,
    title: &str,
    detail: &str,
) -> Problem {
    let mut problem = Problem::new(reason, title, detail);
    if let Some(kind) = kind {
        problem = problem.with_kind(kind);
    }
    if let Some(because) = because {
        problem = problem.with_because(because);
    }
    problem
}
