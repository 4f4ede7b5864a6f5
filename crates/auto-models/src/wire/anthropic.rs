//! Anthropic Messages (`POST /v1/messages`): system as a top-level string, tool results as
//! user-turn `tool_result` blocks, JSON output through `output_config.format`, and usage whose
//! `input_tokens` already leaves out cache reads and writes.
//!
//! Vertex AI serves Claude with the same body at
//! `POST {base}/v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict`,
//! but with the model only in the path and `anthropic_version: "vertex-2023-10-16"` in the body
//! instead of the `anthropic-version` header; its answers and errors are Anthropic's. JSON output
//! is the same `output_config.format`, which Vertex AI serves for the Claude models it lists once
//! the project's organisation policy allows the feature; otherwise its 400 is quoted as the
//! provider's rejection of the schema.

use serde_json::{Map, Value, json};

use super::{Parsed, Prepared, count, sum};
use crate::options::ProviderExtras;
use crate::types::{FinishReason, Message, ModelRequest, OutputContract, ToolCall, Usage};

/// The API version the adapter is written against.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The version Vertex AI takes in the body of a Claude request.
const VERTEX_ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

/// The request for Claude on Vertex AI: `path` is the `...:rawPredict` path.
pub(super) fn build_vertex(path: &str, request: &ModelRequest, extras: ProviderExtras) -> Prepared {
    let mut prepared = build("", request, extras);
    if let Value::Object(body) = &mut prepared.body {
        body.shift_remove("model");
        body.insert(
            "anthropic_version".to_owned(),
            json!(VERTEX_ANTHROPIC_VERSION),
        );
    }
    prepared.path = path.to_owned();
    prepared.headers.clear();
    prepared
}

pub(super) fn build(model: &str, request: &ModelRequest, extras: ProviderExtras) -> Prepared {
    let settings = &request.settings;
    let mut warnings = extras.warnings;
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(settings.max_output_tokens));
    if let Some(system) = &request.system {
        body.insert("system".into(), json!(system));
    }
    body.insert("messages".into(), Value::Array(messages(&request.messages)));
    if let Some(temperature) = settings.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = settings.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if !settings.stop_sequences.is_empty() {
        body.insert("stop_sequences".into(), json!(settings.stop_sequences));
    }
    if settings.seed.is_some() {
        warnings.push("config.seed is not sent: Anthropic models take no seed".to_owned());
    }
    if let Some(effort) = settings.reasoning {
        warnings.push(format!(
            "config.reasoning {} is not sent to Anthropic models; provider_options.anthropic.thinking sets their reasoning",
            effort.as_str()
        ));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({ "name": tool.name, "description": tool.description, "input_schema": tool.input_schema })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let OutputContract::Json { schema } = &request.output {
        // Anthropic refuses numeric, length and count bounds and oneOf with a 400; the runtime
        // still checks the answer against the schema as written.
        body.insert(
            "output_config".into(),
            json!({ "format": { "type": "json_schema", "schema": auto_schema::anthropic_schema(schema) } }),
        );
    }
    body.extend(extras.top_level);
    Prepared {
        path: "/v1/messages".to_owned(),
        headers: vec![("anthropic-version", ANTHROPIC_VERSION)],
        body: Value::Object(body),
        warnings,
    }
}

fn messages(messages: &[Message]) -> Vec<Value> {
    let mut wire: Vec<Value> = Vec::new();
    for message in messages {
        match message {
            Message::User(text) => wire.push(json!({ "role": "user", "content": text })),
            Message::Assistant(text) => wire.push(json!({ "role": "assistant", "content": text })),
            Message::AssistantToolCalls { text, calls } => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(json!({ "type": "text", "text": text }));
                }
                content.extend(calls.iter().map(|call| {
                    json!({ "type": "tool_use", "id": call.call_id, "name": call.name, "input": call.arguments })
                }));
                wire.push(json!({ "role": "assistant", "content": content }));
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => {
                let block = json!({
                    "type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error,
                });
                // Every result of one step goes back in one user turn.
                let merged = wire.last_mut().and_then(|last| {
                    let is_results = last["role"] == "user"
                        && last["content"].as_array().is_some_and(|blocks| {
                            blocks.iter().all(|block| block["type"] == "tool_result")
                        });
                    if is_results {
                        last["content"].as_array_mut()
                    } else {
                        None
                    }
                });
                match merged {
                    Some(blocks) => blocks.push(block),
                    None => wire.push(json!({ "role": "user", "content": [block] })),
                }
            }
        }
    }
    wire
}

pub(super) fn parse(body: &Value) -> Result<Parsed, String> {
    let content = body["content"]
        .as_array()
        .ok_or("the answer has no content list")?;
    let mut parsed = Parsed::default();
    for block in content {
        match block["type"].as_str() {
            Some("text") => parsed
                .text
                .push_str(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => parsed.tool_calls.push(ToolCall {
                call_id: block["id"].as_str().unwrap_or_default().to_owned(),
                name: block["name"].as_str().unwrap_or_default().to_owned(),
                arguments: block["input"].clone(),
            }),
            _ => {}
        }
    }
    let raw = body["stop_reason"].as_str().map(str::to_owned);
    parsed.finish_reason = Some(match raw.as_deref() {
        Some("end_turn" | "stop_sequence") => FinishReason::Stop,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("refusal") => FinishReason::ContentFilter,
        _ => FinishReason::Other,
    });
    parsed.refused = raw.as_deref() == Some("refusal");
    parsed.raw_finish_reason = raw;
    let usage = &body["usage"];
    let (input, read, write, output) = (
        count(&usage["input_tokens"]),
        count(&usage["cache_read_input_tokens"]),
        count(&usage["cache_creation_input_tokens"]),
        count(&usage["output_tokens"]),
    );
    // Anthropic's input_tokens already excludes cache reads and writes; its output count
    // includes thinking and does not split it out.
    parsed.usage = Usage {
        input_uncached: input,
        cache_read: read,
        cache_write: write,
        output_text: output,
        output_reasoning: None,
        total: sum(&[input, read, write, output]),
    };
    parsed.response_id = body["id"].as_str().map(str::to_owned);
    parsed.answered_model = body["model"].as_str().map(str::to_owned);
    Ok(parsed)
}
