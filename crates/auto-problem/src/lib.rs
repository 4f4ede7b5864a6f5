//! Problem documents (RFC 9457): every rejection the API gives and every run's rejection, in
//! the supplement's shape, with the one problem type base. The engine builds a workflow's
//! rejection with it and reads a child's; the runtime answers with it; the server renders it.
//!
//! `reason` fixes the status: `invalid_input` 422, `forbidden` 403, `not_found` 404,
//! `conflict` 409, `unavailable` 503, `cancelled` 409, `unanswered` 410. A fault inside the
//! server is `failed` 500 with a detail that says nothing of the internals (they go to the log).
//! A refusal of HTTP itself keeps HTTP's status and names its kind (see [`Problem::with_status`]).

use auto_doc::Issue;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The base of every problem type: `https://on.auto/problems/<reason or kind>`.
pub const PROBLEM_TYPE_BASE: &str = "https://on.auto/problems/";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    InvalidInput,
    Forbidden,
    NotFound,
    Conflict,
    Unavailable,
    Cancelled,
    Unanswered,
    /// The server broke down; never a rejection the caller caused.
    Failed,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidInput => "invalid_input",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::Unavailable => "unavailable",
            Self::Cancelled => "cancelled",
            Self::Unanswered => "unanswered",
            Self::Failed => "failed",
        }
    }

    pub fn status(self) -> u16 {
        match self {
            Self::InvalidInput => 422,
            Self::Forbidden => 403,
            Self::NotFound => 404,
            Self::Conflict | Self::Cancelled => 409,
            Self::Unavailable => 503,
            Self::Unanswered => 410,
            Self::Failed => 500,
        }
    }
}

/// One problem of a rejected input: where (a pointer into the request, and for a document its
/// line and the pointer inside it) and what, in the pages' words.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProblemIssue {
    /// Where in the request body: `/source`, `/name`, `/input/day`.
    pub pointer: String,
    /// The line in the document, counted from 1, for an issue of `/source`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The column in the line, counted from 1 in characters, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// Where inside the document, for an issue of `/source`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The problem in the pages' words, with its line, such as `Line 4, /config/temperature:
    /// Expected number.`
    pub message: String,
}

impl ProblemIssue {
    pub fn field(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            line: None,
            column: None,
            path: None,
            message: message.into(),
        }
    }

    /// An issue of a document sent under `pointer` (such as `/source`).
    pub fn in_document(pointer: &str, issue: &Issue) -> Self {
        Self {
            pointer: pointer.into(),
            line: Some(issue.line),
            column: issue.column,
            path: (!issue.path.is_empty()).then(|| issue.path.clone()),
            message: issue.message(),
        }
    }
}

/// A rejection, as a problem document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Problem {
    /// `https://on.auto/problems/` and the reason.
    #[serde(rename = "type")]
    pub problem_type: String,
    /// What was refused, in a sentence.
    pub title: String,
    /// The HTTP status of the reason.
    pub status: u16,
    /// invalid_input, forbidden, not_found, conflict, unavailable, cancelled, unanswered or
    /// failed.
    pub reason: Reason,
    /// The pages' finer kind of the reason, such as unworkable, expired or rebuilding.
    pub kind: Option<String>,
    /// What caused it, where the pages name a cause, such as model_unavailable.
    pub because: Option<String>,
    /// What happened and what to do, in words.
    pub detail: String,
    /// The run that was rejected, for a run's rejection.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The seconds a provider asked to wait before trying again, when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u64>,
    /// Each problem of the input: where (its pointer, and for a document its line, column
    /// and path) and what, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub issues: Vec<ProblemIssue>,
}

impl Problem {
    pub fn new(reason: Reason, title: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            problem_type: format!("{PROBLEM_TYPE_BASE}{}", reason.as_str()),
            title: title.into(),
            status: reason.status(),
            reason,
            kind: None,
            because: None,
            detail: detail.into(),
            run_id: None,
            retry_after_seconds: None,
            issues: Vec::new(),
        }
    }

    /// Sets the kind; the problem type then names the kind, as the pages' types do.
    pub fn with_kind(mut self, kind: impl Into<String>) -> Self {
        let kind = kind.into();
        self.problem_type = format!("{PROBLEM_TYPE_BASE}{kind}");
        self.kind = Some(kind);
        self
    }

    /// Gives the problem HTTP's own status, for a refusal of HTTP itself that no reason's
    /// status says: 400 (bad framing), 405 (a route's wrong method), 408 (a body too slow), 414
    /// (a target too long), 431 (headers too large); and 401 for a request without a known key.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Sets what caused it, where the pages name a cause.
    pub fn with_because(mut self, because: impl Into<String>) -> Self {
        self.because = Some(because.into());
        self
    }

    pub fn with_issues(mut self, issues: Vec<ProblemIssue>) -> Self {
        self.issues = issues;
        self
    }

    /// Reads a problem document that may leave out what its reason implies (its type and
    /// status) and its words (title and detail: empty when absent). `None` without a known
    /// reason.
    pub fn read(value: &serde_json::Value) -> Option<Self> {
        let reason: Reason = serde_json::from_value(value.get("reason")?.clone()).ok()?;
        let mut full = serde_json::to_value(Self::new(reason, "", "")).ok()?;
        for (field, given) in value.as_object()? {
            full[field.as_str()] = given.clone();
        }
        serde_json::from_value(full).ok()
    }

    pub fn invalid_input(title: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(Reason::InvalidInput, title, detail)
    }

    /// A request body or query with problems at fields.
    pub fn invalid_request(issues: Vec<ProblemIssue>) -> Self {
        let detail = issues
            .iter()
            .map(|i| i.message.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        Self::invalid_input("The request is not valid", detail).with_issues(issues)
    }

    pub fn not_found(detail: impl Into<String>) -> Self {
        Self::new(Reason::NotFound, "Not found", detail)
    }

    pub fn conflict(title: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(Reason::Conflict, title, detail)
    }

    pub fn forbidden(detail: impl Into<String>) -> Self {
        Self::new(Reason::Forbidden, "Forbidden", detail)
    }

    /// A fault inside the server. The cause goes to the log, never to the caller.
    pub fn internal(cause: &dyn std::fmt::Display) -> Self {
        tracing::error!(%cause, "request failed inside the server");
        Self::new(
            Reason::Failed,
            "The server could not complete the request",
            "The server broke down while handling the request; it is logged. Try again later.",
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_problem_reads_back_as_it_was_written_and_fills_what_its_reason_implies() {
        let written = Problem::new(Reason::Conflict, "Stopped", "It stopped.")
            .with_kind("unworkable")
            .with_because("tool_error")
            .with_issues(vec![ProblemIssue::field("/output", "Expected a number.")]);
        let value = serde_json::to_value(&written).unwrap();
        assert_eq!(Problem::read(&value), Some(written));
        let short = Problem::read(&json!({"reason": "unavailable", "detail": "down"})).unwrap();
        assert_eq!(
            (
                short.problem_type.as_str(),
                short.status,
                short.title.as_str()
            ),
            ("https://on.auto/problems/unavailable", 503, "")
        );
        assert_eq!(short.detail, "down");
        assert_eq!(Problem::read(&json!({"reason": "unreachable"})), None);
        assert_eq!(Problem::read(&json!({"status": 500})), None);
    }
}
