//! OpenAI Chat Completions (`POST /chat/completions` under the base URL), for OpenAI, for
//! every OpenAI-compatible gateway and for Azure OpenAI: JSON output through a strict
//! `response_format.json_schema`, tools as functions, and usage whose `prompt_tokens` includes
//! cached tokens and whose `completion_tokens` includes reasoning.
//!
//! Azure OpenAI is spoken through its v1 API, `POST {base}/openai/v1/chat/completions` with the
//! deployment's name as `model` and the key in the `api-key` header. Azure documents the v1 API
//! (generally available since August 2025) as the way forward: it needs no dated `api-version`,
//! takes the same body as OpenAI's, and gets new features without a version change, while the
//! dated versions of `/openai/deployments/{deployment}/chat/completions?api-version=...` are
//! retired one after another. An operator whose resource still needs a dated version sets
//! `api_version`, and the request takes the deployments path, with the deployment in the path
//! and no `model` in the body.

use serde_json::{Map, Value, json};

use super::{Parsed, Prepared, count};
use crate::options::ProviderExtras;
use crate::types::{FinishReason, Message, ModelRequest, OutputContract, ToolCall, Usage};

/// The name the JSON output's schema is sent under; OpenAI requires one.
const OUTPUT_SCHEMA_NAME: &str = "output";

/// Which endpoint speaks Chat Completions.
#[derive(Debug, Clone, Copy)]
pub(super) enum Flavour<'a> {
    OpenAi,
    Gateway,
    /// Azure OpenAI; with a dated `api-version`, its older deployments path.
    Azure {
        api_version: Option<&'a str>,
    },
}

impl Flavour<'_> {
    pub(super) fn from_gateway(is_gateway: bool) -> Flavour<'static> {
        if is_gateway {
            Flavour::Gateway
        } else {
            Flavour::OpenAi
        }
    }
}

pub(super) fn build(
    model: &str,
    flavour: Flavour<'_>,
    request: &ModelRequest,
    extras: ProviderExtras,
) -> Prepared {
    let settings = &request.settings;
    let is_gateway = matches!(flavour, Flavour::Gateway);
    let path = match flavour {
        Flavour::OpenAi | Flavour::Gateway => "/chat/completions".to_owned(),
        Flavour::Azure { api_version: None } => "/openai/v1/chat/completions".to_owned(),
        Flavour::Azure {
            api_version: Some(version),
        } => format!(
            "/openai/deployments/{}/chat/completions?api-version={version}",
            crate::sigv4::encode_segment(model)
        ),
    };
    let mut body = Map::new();
    if !matches!(
        flavour,
        Flavour::Azure {
            api_version: Some(_)
        }
    ) {
        body.insert("model".into(), json!(model));
    }
    body.insert("messages".into(), Value::Array(messages(request)));
    // OpenAI's reasoning models take only max_completion_tokens; gateways in front of other
    // providers commonly read only the older max_tokens.
    let limit_field = if is_gateway {
        "max_tokens"
    } else {
        "max_completion_tokens"
    };
    body.insert(limit_field.into(), json!(settings.max_output_tokens));
    if let Some(temperature) = settings.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = settings.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if let Some(seed) = settings.seed {
        body.insert("seed".into(), json!(seed));
    }
    if !settings.stop_sequences.is_empty() {
        body.insert("stop".into(), json!(settings.stop_sequences));
    }
    if let Some(effort) = settings.reasoning {
        body.insert("reasoning_effort".into(), json!(effort.as_str()));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": { "name": tool.name, "description": tool.description, "parameters": tool.input_schema },
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let OutputContract::Json { schema } = &request.output {
        body.insert(
            "response_format".into(),
            json!({
                "type": "json_schema",
                "json_schema": { "name": OUTPUT_SCHEMA_NAME, "schema": schema, "strict": true },
            }),
        );
    }
    body.extend(extras.top_level);
    Prepared {
        path,
        headers: Vec::new(),
        body: Value::Object(body),
        warnings: extras.warnings,
    }
}

fn messages(request: &ModelRequest) -> Vec<Value> {
    let mut wire = Vec::new();
    if let Some(system) = &request.system {
        wire.push(json!({ "role": "system", "content": system }));
    }
    for message in &request.messages {
        wire.push(match message {
            Message::User(text) => json!({ "role": "user", "content": text }),
            Message::Assistant(text) => json!({ "role": "assistant", "content": text }),
            Message::AssistantToolCalls { text, calls } => {
                let calls: Vec<Value> = calls
                    .iter()
                    .map(|call| {
                        json!({
                            "id": call.call_id,
                            "type": "function",
                            "function": { "name": call.name, "arguments": call.arguments.to_string() },
                        })
                    })
                    .collect();
                let content = if text.is_empty() { Value::Null } else { json!(text) };
                json!({ "role": "assistant", "content": content, "tool_calls": calls })
            }
            Message::ToolResult {
                call_id, content, ..
            } => json!({ "role": "tool", "tool_call_id": call_id, "content": content }),
        });
    }
    wire
}

pub(super) fn parse(body: &Value) -> Result<Parsed, String> {
    let choice = body["choices"].get(0).ok_or("the answer has no choices")?;
    let message = &choice["message"];
    let mut parsed = Parsed {
        text: message["content"].as_str().unwrap_or_default().to_owned(),
        ..Parsed::default()
    };
    if let Some(refusal) = message["refusal"]
        .as_str()
        .filter(|refusal| !refusal.is_empty())
    {
        parsed.refused = true;
        parsed
            .warnings
            .push(format!("the model refused: {refusal}"));
    }
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let raw_arguments = call["function"]["arguments"].as_str().unwrap_or("{}");
        let arguments = serde_json::from_str(raw_arguments)
            .unwrap_or_else(|_| Value::String(raw_arguments.to_owned()));
        parsed.tool_calls.push(ToolCall {
            call_id: call["id"].as_str().unwrap_or_default().to_owned(),
            name: call["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            arguments,
        });
    }
    let raw = choice["finish_reason"].as_str().map(str::to_owned);
    parsed.finish_reason = Some(match raw.as_deref() {
        Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        _ => FinishReason::Other,
    });
    parsed.raw_finish_reason = raw;
    parsed.usage = usage(&body["usage"]);
    parsed.response_id = body["id"].as_str().map(str::to_owned);
    parsed.answered_model = body["model"].as_str().map(str::to_owned);
    Ok(parsed)
}

fn usage(usage: &Value) -> Usage {
    let prompt = count(&usage["prompt_tokens"]);
    let cached = count(&usage["prompt_tokens_details"]["cached_tokens"]);
    let completion = count(&usage["completion_tokens"]);
    let reasoning = count(&usage["completion_tokens_details"]["reasoning_tokens"]);
    // OpenAI counts cached tokens inside prompt_tokens and reasoning inside completion_tokens;
    // take them out so each count stands alone.
    Usage {
        input_uncached: prompt.map(|prompt| prompt.saturating_sub(cached.unwrap_or(0))),
        cache_read: cached,
        cache_write: None,
        output_text: completion.map(|completion| completion.saturating_sub(reasoning.unwrap_or(0))),
        output_reasoning: reasoning,
        total: count(&usage["total_tokens"]),
    }
}
