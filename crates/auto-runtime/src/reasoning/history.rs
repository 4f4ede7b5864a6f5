//! A reasoning run's history, typed: each event an attempt recorded, read once with serde into a
//! [`Fact`], and folded into the [`History`] the run's core decides from. The event types and
//! their data are those the reasoning page's "What a run records" and the supplement's run
//! events name; what is written is built in `record.rs`, what is read is declared here, and a
//! field the decisions never read is not declared.

use auto_models::{FailureBecause, FinishReason};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::problem::ProblemIssue;

/// How a run was cancelled: the words of its ending, and its kind: `requested` by
/// `cancel_run`, `parent_ended` or `deadline` from a workflow that no longer waits for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CancelOrder {
    pub words: String,
    pub kind: String,
}

impl CancelOrder {
    /// `kind` is `requested` when none is given.
    pub(crate) fn new(words: impl Into<String>, kind: Option<&str>) -> Self {
        Self {
            words: words.into(),
            kind: kind.unwrap_or("requested").to_owned(),
        }
    }

    /// A cancel whose order was not kept: a plain request.
    pub(crate) fn unspoken() -> Self {
        Self::new(UNSPOKEN_WORDS, None)
    }
}

/// The words of a cancel whose order was not kept.
const UNSPOKEN_WORDS: &str = "The run was cancelled.";

/// One event of a run, as the core reads it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fact {
    /// `run_started`: an attempt begins; what came before belongs to an earlier attempt.
    RunStarted,
    ModelCallStarted(ModelCallStarted),
    ModelCallAnswered(ModelCallEnded),
    ModelCallFailed(ModelCallEnded),
    ToolCallStarted(ToolCallStarted),
    ToolCallAnswered(ToolCallEnded),
    ToolCallFailed(ToolCallEnded),
    RunCancelRequested(CancelRequested),
    /// An event no decision of the run reads (its ending, a delivery, ...).
    Other,
}

impl Fact {
    /// Reads one recorded event. `Err` names the event whose data is not what this runtime
    /// writes: the run is not guessed on from a history it cannot read.
    pub(crate) fn read(event_type: &str, data: &Value) -> Result<Fact, String> {
        let fact = match event_type {
            "run_started" => Fact::RunStarted,
            "model_call_started" => Fact::ModelCallStarted(parse(event_type, data)?),
            "model_call_answered" => Fact::ModelCallAnswered(parse(event_type, data)?),
            "model_call_failed" => Fact::ModelCallFailed(parse(event_type, data)?),
            "tool_call_started" => Fact::ToolCallStarted(parse(event_type, data)?),
            "tool_call_answered" => Fact::ToolCallAnswered(parse(event_type, data)?),
            "tool_call_failed" => Fact::ToolCallFailed(parse(event_type, data)?),
            "run_cancel_requested" => Fact::RunCancelRequested(parse(event_type, data)?),
            _ => Fact::Other,
        };
        Ok(fact)
    }
}

fn parse<T: serde::de::DeserializeOwned>(event_type: &str, data: &Value) -> Result<T, String> {
    // An event recorded without data reads as one with none of its fields.
    let empty = Value::Object(Map::new());
    let data = if data.is_null() { &empty } else { data };
    T::deserialize(data).map_err(|e| format!("a run's {event_type} event cannot be read: {e}"))
}

/// `model_call_started`: the call's number and model, and the messages it added when the run
/// keeps them (only the first call keeps the prompt; a call of a run with tools keeps what it
/// added to the conversation).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct ModelCallStarted {
    pub number: u64,
    pub model: String,
    /// `None` for `null` or absent.
    pub messages: Option<Value>,
}

/// `model_call_answered` or `model_call_failed`: what either may hold.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct ModelCallEnded {
    pub number: u64,
    pub duration_ms: u64,
    pub cost_usd: Option<f64>,
    /// The counts of the call, a count the provider did not report `null`.
    pub usage: Option<Map<String, Value>>,
    pub finish_reason: Option<FinishReason>,
    pub raw_finish_reason: Option<String>,
    pub response_id: Option<String>,
    pub resolved_model: Option<String>,
    pub answered_model: Option<String>,
    pub warnings: Vec<String>,
    pub request_bytes: u64,
    pub response_bytes: u64,
    /// The tool calls a step asked for (each with its id, name, tool, server and digest).
    pub tool_calls: Vec<Value>,
    /// The answer as kept: absent when a server of the run does not keep content.
    pub response: Option<KeptResponse>,
    // Of a failed call:
    pub because: Option<FailureBecause>,
    pub provider: String,
    pub status: Option<u16>,
    pub detail: String,
    pub retry_after_ms: Option<u64>,
    pub other_providers_configured: bool,
    pub certificate_untrusted: bool,
    pub issues: Option<Vec<ProblemIssue>>,
}

impl ModelCallEnded {
    /// Whether the call asked for tools.
    pub(crate) fn asked_for_tools(&self) -> bool {
        !self.tool_calls.is_empty()
    }
}

/// A model's answer as its call's event keeps it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct KeptResponse {
    pub text: Option<String>,
    /// A step's calls, with their arguments; `None` for an answer without tools.
    pub tool_calls: Option<Vec<KeptToolCall>>,
}

/// One tool call a step asked for, as kept.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct KeptToolCall {
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
}

/// `tool_call_started`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct ToolCallStarted {
    pub number: u64,
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub read_only: bool,
}

/// `tool_call_answered` or `tool_call_failed`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct ToolCallEnded {
    pub number: u64,
    /// The result as kept: absent when its server does not keep content.
    pub result: Option<Value>,
    pub because: Option<String>,
    pub message: Option<String>,
}

/// `run_cancel_requested`: the order of a cancel asked through another server.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub(crate) struct CancelRequested {
    pub detail: Option<String>,
    pub kind: Option<String>,
}

impl CancelRequested {
    pub(crate) fn order(&self) -> CancelOrder {
        CancelOrder::new(
            self.detail.as_deref().unwrap_or(UNSPOKEN_WORDS),
            self.kind.as_deref(),
        )
    }
}

/// How a model call ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ModelEnding {
    Answered(ModelCallEnded),
    Failed(ModelCallEnded),
}

impl ModelEnding {
    pub(crate) fn data(&self) -> &ModelCallEnded {
        match self {
            ModelEnding::Answered(data) | ModelEnding::Failed(data) => data,
        }
    }

    /// Whether the call failed because its server stopped during it.
    pub(crate) fn interrupted(&self) -> bool {
        matches!(self, ModelEnding::Failed(data) if data.because == Some(FailureBecause::Interrupted))
    }
}

/// One model call as the run's events tell it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ModelCall {
    pub started: ModelCallStarted,
    pub ended: Option<ModelEnding>,
}

impl ModelCall {
    pub(crate) fn number(&self) -> u64 {
        self.started.number
    }
}

/// How a tool call ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ToolEnding {
    Answered(ToolCallEnded),
    Failed(ToolCallEnded),
}

/// One tool call as the run's events tell it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ToolCallRecord {
    pub started: ToolCallStarted,
    pub ended: Option<ToolEnding>,
}

/// What this attempt of the run recorded before.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct History {
    pub calls: Vec<ModelCall>,
    /// The tool calls this attempt recorded: `tool_call_started` and its ending, if any.
    pub tool_calls: Vec<ToolCallRecord>,
    pub cancel_requested: Option<CancelOrder>,
}

impl History {
    /// The history of the last attempt among a run's events, in their order.
    pub(crate) fn of(facts: impl IntoIterator<Item = Fact>) -> History {
        let mut history = History::default();
        for fact in facts {
            history.add(fact);
        }
        history
    }

    /// Adds one fact. An ending finds its call by number, the latest first.
    pub(crate) fn add(&mut self, fact: Fact) {
        match fact {
            // This attempt's events come after its own `run_started`.
            Fact::RunStarted => *self = History::default(),
            Fact::ModelCallStarted(started) => self.calls.push(ModelCall {
                started,
                ended: None,
            }),
            Fact::ModelCallAnswered(data) => self.end_model_call(ModelEnding::Answered(data)),
            Fact::ModelCallFailed(data) => self.end_model_call(ModelEnding::Failed(data)),
            Fact::ToolCallStarted(started) => self.tool_calls.push(ToolCallRecord {
                started,
                ended: None,
            }),
            Fact::ToolCallAnswered(data) => self.end_tool_call(ToolEnding::Answered(data)),
            Fact::ToolCallFailed(data) => self.end_tool_call(ToolEnding::Failed(data)),
            Fact::RunCancelRequested(cancel) => self.cancel_requested = Some(cancel.order()),
            Fact::Other => {}
        }
    }

    fn end_model_call(&mut self, ending: ModelEnding) {
        let number = ending.data().number;
        if let Some(call) = self.calls.iter_mut().rev().find(|c| c.number() == number) {
            call.ended = Some(ending);
        }
    }

    fn end_tool_call(&mut self, ending: ToolEnding) {
        let number = match &ending {
            ToolEnding::Answered(data) | ToolEnding::Failed(data) => data.number,
        };
        if let Some(call) = self
            .tool_calls
            .iter_mut()
            .rev()
            .find(|c| c.started.number == number)
        {
            call.ended = Some(ending);
        }
    }

    /// Whether a model call of this attempt ended (answered or failed).
    pub(crate) fn a_call_ended(&self) -> bool {
        self.calls.iter().any(|c| c.ended.is_some())
    }

    /// Whether the call numbered `number` has an ending.
    pub(crate) fn call_ended(&self, number: u64) -> bool {
        self.calls
            .iter()
            .any(|c| c.number() == number && c.ended.is_some())
    }
}
