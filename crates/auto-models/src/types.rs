//! What a model call sends ([`ModelRequest`]) and what it answers ([`ModelAnswer`]), in the
//! runtime's words rather than any provider's.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::ModelRef;

/// One model call, as the run engine asks for it.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// The model as the definition names it; aliases are resolved by [`crate::Providers::call`].
    pub model: ModelRef,
    /// The rendered system block, when the template has one.
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub settings: Settings,
    pub output: OutputContract,
    pub tools: Vec<ToolSpec>,
    /// The definition's `provider_options`: namespace to options.
    pub provider_options: Map<String, Value>,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    User(String),
    Assistant(String),
    /// The model's earlier step that asked for tools, with any text it wrote beside them.
    AssistantToolCalls {
        text: String,
        calls: Vec<ToolCall>,
    },
    /// The answer of one tool call, as text the model reads.
    ToolResult {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
}

/// The front matter's `config`, with the default `max_output_tokens` filled in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    pub max_output_tokens: u32,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub seed: Option<u64>,
    pub stop_sequences: Vec<String>,
    pub reasoning: Option<ReasoningEffort>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_output_tokens: 1024,
            temperature: None,
            top_p: None,
            seed: None,
            stop_sequences: Vec::new(),
            reasoning: None,
        }
    }
}

/// `config.reasoning`: "none, minimal, low, medium, high or xhigh".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    None,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
}

impl ReasoningEffort {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::None => "none",
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
            ReasoningEffort::Xhigh => "xhigh",
        }
    }
}

/// What the answer must be.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputContract {
    Text,
    /// JSON matching this schema (the output schema, or the output shape's).
    Json {
        schema: Value,
    },
}

/// One tool the model may call, under the name the model sees.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
}

/// Why the answer ended, in the runtime's words; the provider's own word is kept beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    Length,
    ContentFilter,
    ToolCalls,
    Error,
    Other,
}

impl FinishReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content_filter",
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Error => "error",
            FinishReason::Other => "other",
        }
    }
}

/// Token counts, normalised across providers: input split into uncached, cache read and cache
/// write; output split into text and reasoning. `None` where the provider did not report it.
///
/// Invariant: `input_uncached` never includes cache reads or writes, whichever way the provider
/// counts them (OpenAI and Gemini include cached tokens in their input count; Anthropic does not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_uncached: Option<u64>,
    pub cache_read: Option<u64>,
    pub cache_write: Option<u64>,
    pub output_text: Option<u64>,
    pub output_reasoning: Option<u64>,
    pub total: Option<u64>,
}

/// The model's answer to one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelAnswer {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: FinishReason,
    pub raw_finish_reason: Option<String>,
    pub usage: Usage,
    pub response_id: Option<String>,
    /// The model as resolved through the aliases, in `provider/model` form.
    pub resolved_model: String,
    /// The model as the provider answered, when it said.
    pub answered_model: Option<String>,
    /// What the provider ignored or changed; at most [`crate::WARNINGS_MAX`].
    pub warnings: Vec<String>,
    /// What the call cost, from the gateway's cost header.
    pub cost_usd: Option<f64>,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub duration_ms: u64,
}
