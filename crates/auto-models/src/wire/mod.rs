//! The adapters, one per wire protocol: each builds the request body from a [`ModelRequest`]
//! and reads the provider's answer back into the runtime's words. Pure: no I/O here.

mod anthropic;
mod bedrock;
mod gemini;
mod openai;

use serde_json::Value;

use crate::config::{Endpoint, WireProtocol};
use crate::options::ProviderExtras;
use crate::types::{FinishReason, ModelRequest, ToolCall, Usage};

/// A request ready to send: the path under the base URL, the headers besides the credential's,
/// and the body.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// Percent-encoded where it names a model the provider's ids may give reserved characters.
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

/// Where a protocol takes its credential: the header, and whether the value is `Bearer ...`.
/// `None` for Bedrock, whose requests are signed instead.
pub(crate) fn credential_header(protocol: WireProtocol) -> Option<(&'static str, bool)> {
    match protocol {
        WireProtocol::AnthropicMessages => Some(("x-api-key", false)),
        WireProtocol::OpenAiChat => Some(("authorization", true)),
        WireProtocol::GeminiGenerateContent => Some(("x-goog-api-key", false)),
        WireProtocol::AzureOpenAiChat => Some(("api-key", false)),
        WireProtocol::VertexGenerateContent | WireProtocol::VertexAnthropic => {
            Some(("authorization", true))
        }
        WireProtocol::BedrockConverse => None,
    }
}

/// The response header that carries the response's id, for protocols whose body has none:
/// "for Bedrock, its request id".
pub(crate) fn response_id_header(protocol: WireProtocol) -> Option<&'static str> {
    match protocol {
        WireProtocol::BedrockConverse => Some("x-amzn-requestid"),
        _ => None,
    }
}

pub(crate) fn build(
    endpoint: &Endpoint,
    model: &str,
    request: &ModelRequest,
    extras: ProviderExtras,
) -> Prepared {
    match endpoint.protocol {
        WireProtocol::AnthropicMessages => anthropic::build(model, request, extras),
        WireProtocol::OpenAiChat => openai::build(
            model,
            openai::Flavour::from_gateway(endpoint.gateway.is_some()),
            request,
            extras,
        ),
        WireProtocol::AzureOpenAiChat => openai::build(
            model,
            openai::Flavour::Azure {
                api_version: endpoint.placement.api_version.as_deref(),
            },
            request,
            extras,
        ),
        WireProtocol::GeminiGenerateContent => {
            gemini::build(&format!("/models/{model}:generateContent"), request, extras)
        }
        WireProtocol::VertexGenerateContent => gemini::build(
            &format!(
                "{}/publishers/google/models/{model}:generateContent",
                vertex_prefix(endpoint)
            ),
            request,
            extras,
        ),
        WireProtocol::VertexAnthropic => anthropic::build_vertex(
            &format!(
                "{}/publishers/anthropic/models/{model}:rawPredict",
                vertex_prefix(endpoint)
            ),
            request,
            extras,
        ),
        WireProtocol::BedrockConverse => bedrock::build(model, request, extras),
    }
}

/// `/v1/projects/{project}/locations/{location}`, Vertex AI's path for a project's models.
fn vertex_prefix(endpoint: &Endpoint) -> String {
    format!(
        "/v1/projects/{}/locations/{}",
        endpoint.placement.project.as_deref().unwrap_or_default(),
        endpoint.placement.location.as_deref().unwrap_or_default()
    )
}

pub(crate) fn parse(protocol: WireProtocol, body: &Value) -> Result<Parsed, String> {
    match protocol {
        WireProtocol::AnthropicMessages | WireProtocol::VertexAnthropic => anthropic::parse(body),
        WireProtocol::OpenAiChat | WireProtocol::AzureOpenAiChat => openai::parse(body),
        WireProtocol::GeminiGenerateContent | WireProtocol::VertexGenerateContent => {
            gemini::parse(body)
        }
        WireProtocol::BedrockConverse => bedrock::parse(body),
    }
}

/// The error message field of an error body, in each protocol's shape, and its type or code.
///
/// Most providers answer `{"error": {"message", "type" | "code" | "status"}}`. Bedrock answers
/// `{"message"}` and names the error in the `x-amzn-errortype` header (`ThrottlingException:...`)
/// or in `__type` (`...#ThrottlingException`); `error_type_header` is that header.
pub(crate) fn error_fields(
    protocol: WireProtocol,
    body: &Value,
    error_type_header: Option<&str>,
) -> (Option<String>, Vec<String>) {
    if protocol == WireProtocol::BedrockConverse {
        let message = body["message"]
            .as_str()
            .or_else(|| body["Message"].as_str())
            .map(str::to_owned);
        let mut codes = Vec::new();
        if let Some(header) = error_type_header {
            codes.push(header.split(':').next().unwrap_or_default().to_owned());
        }
        if let Some(kind) = body["__type"].as_str() {
            codes.push(kind.rsplit('#').next().unwrap_or_default().to_owned());
        }
        return (message, codes);
    }
    let error = &body["error"];
    let message = error["message"].as_str().map(str::to_owned);
    let codes = ["type", "code", "status"]
        .iter()
        .filter_map(|field| error[field].as_str().map(str::to_owned))
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
