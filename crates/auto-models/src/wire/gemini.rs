//! Google Gemini `generateContent` (`POST /models/{model}:generateContent` under the base URL):
//! settings and JSON output in `generationConfig` (`responseMimeType` + `responseJsonSchema`),
//! tools as function declarations, and usage whose `promptTokenCount` includes cached tokens and
//! whose thinking is counted apart in `thoughtsTokenCount`.
//!
//! Vertex AI serves the same body and answer for Gemini models at
//! `POST {base}/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent`,
//! with an OAuth access token as `Authorization: Bearer`.

use serde_json::{Map, Value, json};

use super::{Parsed, Prepared, count};
use crate::options::ProviderExtras;
use crate::types::{FinishReason, Message, ModelRequest, OutputContract, ToolCall, Usage};

/// `path` is the `...:generateContent` path under the base URL, which differs between the
/// Gemini API and Vertex AI.
pub(super) fn build(path: &str, request: &ModelRequest, extras: ProviderExtras) -> Prepared {
    let settings = &request.settings;
    let mut warnings = extras.warnings;
    let mut config = Map::new();
    config.insert("maxOutputTokens".into(), json!(settings.max_output_tokens));
    if let Some(temperature) = settings.temperature {
        config.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = settings.top_p {
        config.insert("topP".into(), json!(top_p));
    }
    if let Some(seed) = settings.seed {
        config.insert("seed".into(), json!(seed));
    }
    if !settings.stop_sequences.is_empty() {
        config.insert("stopSequences".into(), json!(settings.stop_sequences));
    }
    if let Some(effort) = settings.reasoning {
        warnings.push(format!(
            "config.reasoning {} is not sent to Gemini models; provider_options.google.thinkingConfig sets their thinking",
            effort.as_str()
        ));
    }
    if let OutputContract::Json { schema } = &request.output {
        config.insert("responseMimeType".into(), json!("application/json"));
        config.insert("responseJsonSchema".into(), schema.clone());
    }
    config.extend(extras.generation_config);
    let mut body = Map::new();
    if let Some(system) = &request.system {
        body.insert(
            "systemInstruction".into(),
            json!({ "parts": [{ "text": system }] }),
        );
    }
    body.insert("contents".into(), Value::Array(contents(&request.messages)));
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({ "name": tool.name, "description": tool.description, "parametersJsonSchema": tool.input_schema })
            })
            .collect();
        body.insert(
            "tools".into(),
            json!([{ "functionDeclarations": declarations }]),
        );
    }
    body.insert("generationConfig".into(), Value::Object(config));
    body.extend(extras.top_level);
    Prepared {
        path: path.to_owned(),
        headers: Vec::new(),
        body: Value::Object(body),
        warnings,
    }
}

fn contents(messages: &[Message]) -> Vec<Value> {
    let mut wire: Vec<Value> = Vec::new();
    for message in messages {
        match message {
            Message::User(text) => {
                wire.push(json!({ "role": "user", "parts": [{ "text": text }] }))
            }
            Message::Assistant(text) => {
                wire.push(json!({ "role": "model", "parts": [{ "text": text }] }));
            }
            Message::AssistantToolCalls { text, calls } => {
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({ "text": text }));
                }
                parts.extend(calls.iter().map(|call| {
                    json!({ "functionCall": { "id": call.call_id, "name": call.name, "args": call.arguments } })
                }));
                wire.push(json!({ "role": "model", "parts": parts }));
            }
            Message::ToolResult {
                call_id,
                name,
                content,
                is_error,
            } => {
                let key = if *is_error { "error" } else { "result" };
                let mut response = Map::new();
                response.insert(key.to_owned(), json!(content));
                let part = json!({
                    "functionResponse": { "id": call_id, "name": name, "response": response },
                });
                // Every response of one step goes back in one user turn.
                let merged = wire.last_mut().and_then(|last| {
                    let is_responses = last["role"] == "user"
                        && last["parts"].as_array().is_some_and(|parts| {
                            parts
                                .iter()
                                .all(|part| part.get("functionResponse").is_some())
                        });
                    if is_responses {
                        last["parts"].as_array_mut()
                    } else {
                        None
                    }
                });
                match merged {
                    Some(parts) => parts.push(part),
                    None => wire.push(json!({ "role": "user", "parts": [part] })),
                }
            }
        }
    }
    wire
}

pub(super) fn parse(body: &Value) -> Result<Parsed, String> {
    let mut parsed = Parsed {
        usage: usage(&body["usageMetadata"]),
        response_id: body["responseId"].as_str().map(str::to_owned),
        answered_model: body["modelVersion"].as_str().map(str::to_owned),
        ..Parsed::default()
    };
    let Some(candidate) = body["candidates"].get(0) else {
        // No candidate: the prompt itself was blocked.
        let reason = body["promptFeedback"]["blockReason"]
            .as_str()
            .ok_or("the answer has no candidates")?;
        parsed.refused = true;
        parsed.finish_reason = Some(FinishReason::ContentFilter);
        parsed.raw_finish_reason = Some(reason.to_owned());
        return Ok(parsed);
    };
    for (index, part) in candidate["content"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(call) = part.get("functionCall") {
            let call_id = call["id"]
                .as_str()
                .map_or_else(|| format!("call_{}", index + 1), str::to_owned);
            parsed.tool_calls.push(ToolCall {
                call_id,
                name: call["name"].as_str().unwrap_or_default().to_owned(),
                arguments: call.get("args").cloned().unwrap_or_else(|| json!({})),
            });
        } else if part["thought"] != true
            && let Some(text) = part["text"].as_str()
        {
            parsed.text.push_str(text);
        }
    }
    let raw = candidate["finishReason"].as_str().map(str::to_owned);
    let reason = match raw.as_deref() {
        // A tool call still ends with STOP.
        Some("STOP") if !parsed.tool_calls.is_empty() => FinishReason::ToolCalls,
        Some("STOP") => FinishReason::Stop,
        Some("MAX_TOKENS") => FinishReason::Length,
        Some(
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY",
        ) => FinishReason::ContentFilter,
        Some("MALFORMED_FUNCTION_CALL") => FinishReason::Error,
        _ => FinishReason::Other,
    };
    parsed.refused = reason == FinishReason::ContentFilter;
    parsed.finish_reason = Some(reason);
    parsed.raw_finish_reason = raw;
    Ok(parsed)
}

fn usage(usage: &Value) -> Usage {
    let prompt = count(&usage["promptTokenCount"]);
    let cached = count(&usage["cachedContentTokenCount"]);
    // Gemini counts cached tokens inside promptTokenCount and thinking apart from the answer.
    Usage {
        input_uncached: prompt.map(|prompt| prompt.saturating_sub(cached.unwrap_or(0))),
        cache_read: cached,
        cache_write: None,
        output_text: count(&usage["candidatesTokenCount"]),
        output_reasoning: count(&usage["thoughtsTokenCount"]),
        total: count(&usage["totalTokenCount"]),
    }
}
