//! Amazon Bedrock Converse (`POST {base}/model/{modelId}/converse`), for every model Bedrock
//! serves, Anthropic's included: the system as `system` text blocks, settings in
//! `inferenceConfig`, tools in `toolConfig`, JSON output through `outputConfig.textFormat` with
//! the schema as a JSON string, model-specific fields (reasoning) in
//! `additionalModelRequestFields`, and usage whose `inputTokens` leaves out cache reads and
//! writes, as Anthropic's does. The response id is the `x-amzn-requestid` header.
//!
//! The request is signed with SigV4 (see `crate::sigv4`), so the model id is percent-encoded in
//! the path exactly as it is signed.

use serde_json::{Map, Value, json};

use super::{Parsed, Prepared, count, sum};
use crate::options::ProviderExtras;
use crate::sigv4::encode_segment;
use crate::types::{FinishReason, Message, ModelRequest, OutputContract, ToolCall, Usage};

/// The name the JSON output's schema is sent under.
const OUTPUT_SCHEMA_NAME: &str = "output";

pub(super) fn build(model: &str, request: &ModelRequest, extras: ProviderExtras) -> Prepared {
    let settings = &request.settings;
    let mut warnings = extras.warnings;
    let mut inference = Map::new();
    inference.insert("maxTokens".into(), json!(settings.max_output_tokens));
    if let Some(temperature) = settings.temperature {
        inference.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = settings.top_p {
        inference.insert("topP".into(), json!(top_p));
    }
    if !settings.stop_sequences.is_empty() {
        inference.insert("stopSequences".into(), json!(settings.stop_sequences));
    }
    if settings.seed.is_some() {
        warnings.push("config.seed is not sent: Bedrock Converse takes no seed".to_owned());
    }
    if let Some(effort) = settings.reasoning {
        warnings.push(format!(
            "config.reasoning {} is not sent to Bedrock; provider_options.bedrock.reasoningConfig sets the reasoning of its models",
            effort.as_str()
        ));
    }
    let mut body = Map::new();
    body.insert("messages".into(), Value::Array(messages(&request.messages)));
    if let Some(system) = &request.system {
        body.insert("system".into(), json!([{ "text": system }]));
    }
    body.insert("inferenceConfig".into(), Value::Object(inference));
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({ "toolSpec": {
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": { "json": tool.input_schema },
                } })
            })
            .collect();
        body.insert("toolConfig".into(), json!({ "tools": tools }));
    }
    // Bedrock checks a schema against the subset of its structured outputs, which for every
    // model it serves leaves out what Anthropic's does (numeric, length and count bounds,
    // oneOf), and answers 400 otherwise; the runtime still checks the schema as written.
    if let OutputContract::Json { schema } = &request.output {
        body.insert(
            "outputConfig".into(),
            json!({ "textFormat": {
                "type": "json_schema",
                "structure": { "jsonSchema": { "schema": auto_schema::anthropic_schema(schema).to_string(), "name": OUTPUT_SCHEMA_NAME } },
            } }),
        );
    }
    if !extras.additional_model_request_fields.is_empty() {
        body.insert(
            "additionalModelRequestFields".into(),
            Value::Object(extras.additional_model_request_fields),
        );
    }
    Prepared {
        path: format!("/model/{}/converse", encode_segment(model)),
        headers: Vec::new(),
        body: Value::Object(body),
        warnings,
    }
}

fn messages(messages: &[Message]) -> Vec<Value> {
    let mut wire: Vec<Value> = Vec::new();
    for message in messages {
        match message {
            Message::User(text) => {
                wire.push(json!({ "role": "user", "content": [{ "text": text }] }));
            }
            Message::Assistant(text) => {
                wire.push(json!({ "role": "assistant", "content": [{ "text": text }] }));
            }
            Message::AssistantToolCalls { text, calls } => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(json!({ "text": text }));
                }
                content.extend(calls.iter().map(|call| {
                    json!({ "toolUse": { "toolUseId": call.call_id, "name": call.name, "input": call.arguments } })
                }));
                wire.push(json!({ "role": "assistant", "content": content }));
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => {
                let block = json!({ "toolResult": {
                    "toolUseId": call_id,
                    "content": [{ "text": content }],
                    "status": if *is_error { "error" } else { "success" },
                } });
                // Every result of one step goes back in one user turn.
                let merged = wire.last_mut().and_then(|last| {
                    let is_results = last["role"] == "user"
                        && last["content"].as_array().is_some_and(|blocks| {
                            blocks.iter().all(|block| block.get("toolResult").is_some())
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
    let content = body["output"]["message"]["content"]
        .as_array()
        .ok_or("the answer has no output message")?;
    let mut parsed = Parsed::default();
    for block in content {
        if let Some(text) = block["text"].as_str() {
            parsed.text.push_str(text);
        } else if let Some(call) = block.get("toolUse") {
            parsed.tool_calls.push(ToolCall {
                call_id: call["toolUseId"].as_str().unwrap_or_default().to_owned(),
                name: call["name"].as_str().unwrap_or_default().to_owned(),
                arguments: call.get("input").cloned().unwrap_or_else(|| json!({})),
            });
        }
        // reasoningContent is the model's thinking, not its answer.
    }
    let raw = body["stopReason"].as_str().map(str::to_owned);
    let reason = match raw.as_deref() {
        Some("end_turn" | "stop_sequence") => FinishReason::Stop,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("guardrail_intervened" | "content_filtered") => FinishReason::ContentFilter,
        Some("malformed_model_output" | "malformed_tool_use") => FinishReason::Error,
        _ => FinishReason::Other,
    };
    parsed.refused = reason == FinishReason::ContentFilter;
    parsed.finish_reason = Some(reason);
    parsed.raw_finish_reason = raw;
    let usage = &body["usage"];
    let (input, read, write, output) = (
        count(&usage["inputTokens"]),
        count(&usage["cacheReadInputTokens"]),
        count(&usage["cacheWriteInputTokens"]),
        count(&usage["outputTokens"]),
    );
    // Bedrock's inputTokens excludes cache reads and writes, as Anthropic's input_tokens does;
    // its outputTokens includes reasoning and does not split it out.
    parsed.usage = Usage {
        input_uncached: input,
        cache_read: read,
        cache_write: write,
        output_text: output,
        output_reasoning: None,
        total: sum(&[input, read, write, output]),
    };
    Ok(parsed)
}
