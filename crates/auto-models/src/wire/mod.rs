//! The adapters, one per wire protocol: each builds the request body from a [`ModelRequest`]
//! and reads the provider's answer back into the runtime's words. Pure: no I/O here.

mod anthropic;
mod gemini;
mod openai;

use serde_json::Value;

use crate::config::WireProtocol;
use crate::options::ProviderExtras;
use crate::types::{FinishReason, ModelRequest, ToolCall, Usage};

/// A request ready to send: the path under the base URL, the headers besides the credential's,
/// and the body.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) path: String,
    pub(crate) headers: Vec<(&'static str, &'static str)>,
    pub(crate) body: Value,
    pub(crate) warnings: Vec<String>,
}

/// A provider's answer, read into the runtime's words.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub(crate) text: String,
    pub(crate) tool_calls: Vec<ToolCall>,
    pub(crate) finish_reason: Option<FinishReason>,
    pub(crate) raw_finish_reason: Option<String>,
    pub(crate) usage: Usage,
    pub(crate) response_id: Option<String>,
    pub(crate) answered_model: Option<String>,
    pub(crate) warnings: Vec<String>,
    /// The model refused: a refusal stop reason, a refusal field, or a blocked prompt.
    pub(crate) refused: bool,
}

/// Where a protocol takes its credential.
pub(crate) fn credential_header(protocol: WireProtocol) -> (&'static str, bool) {
    match protocol {
        WireProtocol::AnthropicMessages => ("x-api-key", false),
        WireProtocol::OpenAiChat => ("authorization", true),
        WireProtocol::GeminiGenerateContent => ("x-goog-api-key", false),
    }
}

pub(crate) fn build(
    protocol: WireProtocol,
    model: &str,
    is_gateway: bool,
    request: &ModelRequest,
    extras: ProviderExtras,
) -> Prepared {
    match protocol {
        WireProtocol::AnthropicMessages => anthropic::build(model, request, extras),
        WireProtocol::OpenAiChat => openai::build(model, is_gateway, request, extras),
        WireProtocol::GeminiGenerateContent => gemini::build(model, request, extras),
    }
}

pub(crate) fn parse(protocol: WireProtocol, body: &Value) -> Result<Parsed, String> {
    match protocol {
        WireProtocol::AnthropicMessages => anthropic::parse(body),
        WireProtocol::OpenAiChat => openai::parse(body),
        WireProtocol::GeminiGenerateContent => gemini::parse(body),
    }
}

/// The error message field of an error body, in each protocol's shape, and its type or code.
pub(crate) fn error_fields(body: &Value) -> (Option<&str>, Vec<&str>) {
    let error = &body["error"];
    let message = error["message"].as_str();
    let codes = ["type", "code", "status"]
        .iter()
        .filter_map(|field| error[field].as_str())
        .collect();
    (message, codes)
}

fn sum(values: &[Option<u64>]) -> Option<u64> {
    let known: Vec<u64> = values.iter().flatten().copied().collect();
    (!known.is_empty()).then(|| known.iter().sum())
}

fn count(value: &Value) -> Option<u64> {
    value.as_u64()
}
