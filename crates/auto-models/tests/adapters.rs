//! Each adapter against its provider double: the request body for text, JSON output and tools,
//! usage normalised to uncached / cache read / cache write, and finish reasons.

mod common;

use auto_models::{
    FailureBecause, FinishReason, Message, OutputContract, ToolCall, ToolSpec, Usage,
};
use auto_testkit::{ProviderDouble, ProviderKind, Reply, ScriptedToolCall};
use common::{TEST_KEY, fast, request, setup};
use serde_json::{Value, json};

fn schema() -> Value {
    json!({ "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"], "additionalProperties": false })
}

fn tool() -> ToolSpec {
    ToolSpec {
        name: "graph__search".to_owned(),
        description: "Searches the graph".to_owned(),
        input_schema: json!({ "type": "object", "properties": { "q": { "type": "string" } } }),
    }
}

fn scripted_call() -> ScriptedToolCall {
    ScriptedToolCall {
        call_id: "call_1".to_owned(),
        name: "graph__search".to_owned(),
        arguments: json!({ "q": "x" }),
    }
}

#[tokio::test]
async fn anthropic_text_request_and_answer() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup.double.script([Reply::Text("Hello.".to_owned())]);
    let mut request = request("anthropic/claude-sonnet-4-5");
    request.settings.temperature = Some(0.2);
    request.settings.stop_sequences = vec!["END".to_owned()];
    let answer = setup
        .providers
        .call(&request, &fast())
        .await
        .expect("an answer");
    assert_eq!(answer.text, "Hello.");
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(answer.raw_finish_reason.as_deref(), Some("end_turn"));
    assert_eq!(answer.resolved_model, "anthropic/claude-sonnet-4-5");
    assert_eq!(answer.answered_model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(answer.response_id.as_deref(), Some("msg_double_1"));
    let sent = &setup.double.requests()[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(TEST_KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        sent.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 1024,
            "system": "Be brief.",
            "messages": [{ "role": "user", "content": "Say hello." }],
            "temperature": 0.2,
            "stop_sequences": ["END"],
        })
    );
    assert_eq!(
        answer.request_bytes,
        serde_json::to_vec(&sent.body).unwrap().len() as u64
    );
}

#[tokio::test]
async fn anthropic_json_output_tools_and_thinking() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup
        .double
        .script([Reply::ToolCalls(vec![scripted_call()])]);
    let mut request = request("anthropic/claude-sonnet-4-5");
    request.output = OutputContract::Json { schema: schema() };
    request.tools = vec![tool()];
    request.settings.seed = Some(7);
    request.provider_options.insert(
        "anthropic".to_owned(),
        json!({ "thinking": { "type": "enabled", "budgetTokens": 2000 } }),
    );
    request.messages.push(Message::AssistantToolCalls {
        text: String::new(),
        calls: vec![ToolCall {
            call_id: "c0".into(),
            name: "graph__search".into(),
            arguments: json!({}),
        }],
    });
    for id in ["c0", "c0b"] {
        request.messages.push(Message::ToolResult {
            call_id: id.into(),
            name: "graph__search".into(),
            content: "[]".into(),
            is_error: false,
        });
    }
    let answer = setup
        .providers
        .call(&request, &fast())
        .await
        .expect("an answer");
    assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        answer.tool_calls,
        vec![ToolCall {
            call_id: "call_1".into(),
            name: "graph__search".into(),
            arguments: json!({ "q": "x" })
        }]
    );
    assert!(
        answer
            .warnings
            .iter()
            .any(|warning| warning.contains("config.seed")),
        "{:?}",
        answer.warnings
    );
    let body = &setup.double.requests()[0].body;
    assert_eq!(
        body["output_config"],
        json!({ "format": { "type": "json_schema", "schema": schema() } })
    );
    assert_eq!(body["tools"][0]["input_schema"], tool().input_schema);
    assert_eq!(
        body["thinking"],
        json!({ "type": "enabled", "budget_tokens": 2000 })
    );
    assert!(body.get("seed").is_none());
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        3,
        "both tool results go back in one user turn: {messages:?}"
    );
    assert_eq!(messages[1]["content"][0]["type"], "tool_use");
    assert_eq!(messages[2]["content"][1]["tool_use_id"], "c0b");
}

#[tokio::test]
async fn anthropic_usage_counts_cache_reads_apart() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup.double.script([Reply::body(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{ "type": "text", "text": "ok" }], "stop_reason": "max_tokens",
        "usage": { "input_tokens": 100, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 50, "output_tokens": 20 },
    }))]);
    let answer = setup
        .providers
        .call(&request("anthropic/m"), &fast())
        .await
        .expect("an answer");
    assert_eq!(
        answer.usage,
        Usage {
            input_uncached: Some(100),
            cache_read: Some(900),
            cache_write: Some(50),
            output_text: Some(20),
            output_reasoning: None,
            total: Some(1070)
        }
    );
    assert_eq!(
        answer.finish_reason,
        FinishReason::Length,
        "a text answer cut off still succeeds"
    );
}

#[tokio::test]
async fn anthropic_refusal_is_content_refused_with_usage() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup.double.script([Reply::body(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m",
        "content": [], "stop_reason": "refusal", "usage": { "input_tokens": 5, "output_tokens": 0 },
    }))]);
    let failure = setup
        .providers
        .call(&request("anthropic/m"), &fast())
        .await
        .expect_err("a refusal");
    assert_eq!(failure.because, FailureBecause::ContentRefused);
    assert_eq!(failure.finish_reason, Some(FinishReason::ContentFilter));
    assert_eq!(failure.raw_finish_reason.as_deref(), Some("refusal"));
    assert_eq!(
        failure.usage.and_then(|usage| usage.input_uncached),
        Some(5)
    );
}

#[tokio::test]
async fn anthropic_context_window_exceeded_is_length_and_pause_turn_is_other() {
    let setup = setup(ProviderKind::Anthropic).await;
    let body = |reason: &str| {
        Reply::body(json!({
            "id": "m", "model": "m", "content": [{ "type": "text", "text": "x" }], "stop_reason": reason, "usage": {},
        }))
    };
    setup
        .double
        .script([body("model_context_window_exceeded"), body("pause_turn")]);
    let first = setup
        .providers
        .call(&request("anthropic/m"), &fast())
        .await
        .unwrap();
    assert_eq!(first.finish_reason, FinishReason::Length);
    let second = setup
        .providers
        .call(&request("anthropic/m"), &fast())
        .await
        .unwrap();
    assert_eq!(
        (second.finish_reason, second.raw_finish_reason.as_deref()),
        (FinishReason::Other, Some("pause_turn"))
    );
    assert_eq!(
        second.usage,
        Usage::default(),
        "counts the provider did not report are null"
    );
}

#[tokio::test]
async fn json_answer_cut_off_is_output_invalid_with_length() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup.double.script([Reply::body(json!({
        "id": "m", "model": "m", "content": [{ "type": "text", "text": "{\"ok\":" }], "stop_reason": "max_tokens",
        "usage": { "input_tokens": 3, "output_tokens": 1024 },
    }))]);
    let mut request = request("anthropic/m");
    request.output = OutputContract::Json { schema: schema() };
    let failure = setup
        .providers
        .call(&request, &fast())
        .await
        .expect_err("cut off");
    assert_eq!(failure.because, FailureBecause::OutputInvalid);
    assert_eq!(failure.finish_reason, Some(FinishReason::Length));
    let rejection = auto_models::rejection_for(&failure);
    assert_eq!(rejection.http_status, 409);
    assert!(
        rejection.detail.ends_with("raise config.max_output_tokens"),
        "{}",
        rejection.detail
    );
}

#[tokio::test]
async fn openai_text_json_and_tools_request() {
    let setup = setup(ProviderKind::OpenAiChat).await;
    setup.double.script([
        Reply::Json(json!({ "ok": true })),
        Reply::ToolCalls(vec![scripted_call()]),
    ]);
    let mut request = request("openai/gpt-5-mini");
    request.output = OutputContract::Json { schema: schema() };
    request.settings.seed = Some(7);
    request.settings.reasoning = Some(auto_models::ReasoningEffort::Low);
    request.provider_options.insert(
        "openai".into(),
        json!({ "textVerbosity": "low", "logitBias": { "50256": -100 } }),
    );
    let answer = setup
        .providers
        .call(&request, &fast())
        .await
        .expect("an answer");
    assert_eq!(
        serde_json::from_str::<Value>(&answer.text).unwrap(),
        json!({ "ok": true })
    );
    let sent = &setup.double.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(
        sent.body,
        json!({
            "model": "gpt-5-mini",
            "messages": [{ "role": "system", "content": "Be brief." }, { "role": "user", "content": "Say hello." }],
            "max_completion_tokens": 1024,
            "seed": 7,
            "reasoning_effort": "low",
            "response_format": { "type": "json_schema", "json_schema": { "name": "output", "schema": schema(), "strict": true } },
            "verbosity": "low",
            "logit_bias": { "50256": -100 },
        })
    );

    let mut request = request.clone();
    request.output = OutputContract::Text;
    request.tools = vec![tool()];
    request.messages.push(Message::AssistantToolCalls {
        text: String::new(),
        calls: vec![ToolCall {
            call_id: "c0".into(),
            name: "graph__search".into(),
            arguments: json!({ "q": "a" }),
        }],
    });
    request.messages.push(Message::ToolResult {
        call_id: "c0".into(),
        name: "graph__search".into(),
        content: "[1]".into(),
        is_error: false,
    });
    let answer = setup
        .providers
        .call(&request, &fast())
        .await
        .expect("an answer");
    assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
    assert_eq!(answer.tool_calls[0].arguments, json!({ "q": "x" }));
    let body = &setup.double.requests()[1].body;
    assert_eq!(
        body["tools"][0],
        json!({ "type": "function", "function": { "name": "graph__search", "description": "Searches the graph", "parameters": tool().input_schema } })
    );
    assert_eq!(
        body["messages"][2]["tool_calls"][0]["function"]["arguments"],
        "{\"q\":\"a\"}"
    );
    assert_eq!(
        body["messages"][3],
        json!({ "role": "tool", "tool_call_id": "c0", "content": "[1]" })
    );
}

#[tokio::test]
async fn openai_usage_takes_cached_and_reasoning_tokens_out() {
    let setup = setup(ProviderKind::OpenAiChat).await;
    setup.double.script([Reply::body(json!({
        "id": "chatcmpl-1", "model": "gpt-5-2026", "choices": [{ "index": 0, "message": { "role": "assistant", "content": "x" }, "finish_reason": "content_filter" }],
        "usage": { "prompt_tokens": 1000, "completion_tokens": 300, "total_tokens": 1300,
                   "prompt_tokens_details": { "cached_tokens": 800 }, "completion_tokens_details": { "reasoning_tokens": 200 } },
    }))]);
    let failure = setup
        .providers
        .call(&request("openai/gpt-5"), &fast())
        .await
        .expect_err("filtered");
    assert_eq!(failure.because, FailureBecause::ContentRefused);
    assert_eq!(
        failure.usage,
        Some(Usage {
            input_uncached: Some(200),
            cache_read: Some(800),
            cache_write: None,
            output_text: Some(100),
            output_reasoning: Some(200),
            total: Some(1300)
        })
    );
}

#[tokio::test]
async fn openai_refusal_field_is_content_refused() {
    let setup = setup(ProviderKind::OpenAiChat).await;
    setup.double.script([Reply::body(json!({
        "id": "c", "model": "m", "choices": [{ "index": 0, "message": { "role": "assistant", "content": null, "refusal": "I can't help with that." }, "finish_reason": "stop" }],
    }))]);
    let failure = setup
        .providers
        .call(&request("openai/gpt-5"), &fast())
        .await
        .expect_err("refused");
    assert_eq!(failure.because, FailureBecause::ContentRefused);
    assert_eq!(auto_models::rejection_for(&failure).http_status, 422);
}

#[tokio::test]
async fn gemini_text_json_and_tools_request() {
    let setup = setup(ProviderKind::Gemini).await;
    setup.double.script([
        Reply::Json(json!({ "ok": true })),
        Reply::ToolCalls(vec![scripted_call()]),
    ]);
    let mut request = request("google/gemini-2.5-flash");
    request.output = OutputContract::Json { schema: schema() };
    request.settings.top_p = Some(0.9);
    request.provider_options.insert(
        "google".into(),
        json!({ "thinkingConfig": { "thinkingBudget": 512 } }),
    );
    let answer = setup
        .providers
        .call(&request, &fast())
        .await
        .expect("an answer");
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    assert_eq!(answer.response_id.as_deref(), Some("double-response-1"));
    let sent = &setup.double.requests()[0];
    assert_eq!(sent.path, "/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(sent.header("x-goog-api-key"), Some(TEST_KEY));
    assert_eq!(
        sent.body,
        json!({
            "systemInstruction": { "parts": [{ "text": "Be brief." }] },
            "contents": [{ "role": "user", "parts": [{ "text": "Say hello." }] }],
            "generationConfig": {
                "maxOutputTokens": 1024, "topP": 0.9,
                "responseMimeType": "application/json", "responseJsonSchema": schema(),
                "thinkingConfig": { "thinkingBudget": 512 },
            },
        })
    );

    let mut request = request.clone();
    request.output = OutputContract::Text;
    request.tools = vec![tool()];
    let answer = setup
        .providers
        .call(&request, &fast())
        .await
        .expect("an answer");
    assert_eq!(
        answer.finish_reason,
        FinishReason::ToolCalls,
        "a tool call still ends with STOP"
    );
    assert_eq!(answer.raw_finish_reason.as_deref(), Some("STOP"));
    assert_eq!(answer.tool_calls[0].call_id, "call_1");
    let body = &setup.double.requests()[1].body;
    assert_eq!(
        body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"],
        tool().input_schema
    );
}

#[tokio::test]
async fn gemini_usage_and_provider_finish_reasons() {
    let setup = setup(ProviderKind::Gemini).await;
    let body = |reason: &str| {
        Reply::body(json!({
            "candidates": [{ "content": { "role": "model", "parts": [{ "text": "thinking", "thought": true }, { "text": "x" }] }, "finishReason": reason }],
            "usageMetadata": { "promptTokenCount": 1000, "cachedContentTokenCount": 600, "candidatesTokenCount": 40, "thoughtsTokenCount": 300, "totalTokenCount": 1340 },
            "modelVersion": "gemini-2.5-flash-001", "responseId": "r1",
        }))
    };
    setup.double.script([
        body("MAX_TOKENS"),
        body("MALFORMED_FUNCTION_CALL"),
        body("SAFETY"),
    ]);
    let answer = setup
        .providers
        .call(&request("google/gemini-2.5-flash"), &fast())
        .await
        .unwrap();
    assert_eq!(answer.text, "x", "thought parts are not the answer");
    assert_eq!(answer.finish_reason, FinishReason::Length);
    assert_eq!(
        answer.usage,
        Usage {
            input_uncached: Some(400),
            cache_read: Some(600),
            cache_write: None,
            output_text: Some(40),
            output_reasoning: Some(300),
            total: Some(1340)
        }
    );
    let answer = setup
        .providers
        .call(&request("google/gemini-2.5-flash"), &fast())
        .await
        .unwrap();
    assert_eq!(
        (answer.finish_reason, answer.raw_finish_reason.as_deref()),
        (FinishReason::Error, Some("MALFORMED_FUNCTION_CALL"))
    );
    let failure = setup
        .providers
        .call(&request("google/gemini-2.5-flash"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::ContentRefused);
}

#[tokio::test]
async fn gemini_blocked_prompt_is_content_refused() {
    let setup = setup(ProviderKind::Gemini).await;
    setup.double.script([Reply::body(json!({ "promptFeedback": { "blockReason": "PROHIBITED_CONTENT" }, "usageMetadata": { "promptTokenCount": 9 } }))]);
    let failure = setup
        .providers
        .call(&request("google/gemini-2.5-flash"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::ContentRefused);
    assert_eq!(
        failure.raw_finish_reason.as_deref(),
        Some("PROHIBITED_CONTENT")
    );
}

/// A schema with the bounds and the `oneOf` Anthropic's structured outputs refuse.
fn bounded_schema() -> Value {
    json!({
        "type": "object", "additionalProperties": false, "required": ["n", "tags", "few", "pick"],
        "properties": {
            "n": { "type": "integer", "minimum": 0, "maximum": 10, "multipleOf": 2 },
            "tags": { "type": "array", "minItems": 2, "uniqueItems": true,
                      "items": { "type": "string", "minLength": 1, "maxLength": 8 } },
            "few": { "type": "array", "minItems": 1, "items": { "type": "number", "exclusiveMinimum": 0 } },
            "pick": { "oneOf": [{ "type": "string" }, { "type": "integer" }] },
        },
    })
}

/// "Expect Anthropic models not to receive numeric, length and count bounds (minimum,
/// maxLength, minItems, uniqueItems and the like) ... oneOf, which Anthropic models receive as
/// anyOf": directly, on Vertex AI and on Bedrock, whose doubles refuse the schema as written.
#[tokio::test]
async fn anthropic_models_receive_no_bounds_and_one_of_as_any_of() {
    let received = json!({
        "type": "object", "additionalProperties": false, "required": ["n", "tags", "few", "pick"],
        "properties": {
            "n": { "type": "integer" },
            "tags": { "type": "array", "items": { "type": "string" } },
            "few": { "type": "array", "minItems": 1, "items": { "type": "number" } },
            "pick": { "anyOf": [{ "type": "string" }, { "type": "integer" }] },
        },
    });
    for (kind, model) in [
        (ProviderKind::Anthropic, "anthropic/claude-sonnet-4-5"),
        (
            ProviderKind::VertexAnthropic,
            "vertex-anthropic/claude-sonnet-4-5@20250929",
        ),
        (
            ProviderKind::Bedrock,
            "bedrock/anthropic.claude-sonnet-4-5-v1:0",
        ),
    ] {
        let setup = setup(kind).await;
        let answer = json!({ "n": 4, "tags": ["a", "b"], "few": [1], "pick": "x" });
        setup.double.script([Reply::Json(answer.clone())]);
        let mut request = request(model);
        request.output = OutputContract::Json {
            schema: bounded_schema(),
        };
        let got = setup
            .providers
            .call(&request, &fast())
            .await
            .unwrap_or_else(|failure| panic!("{kind:?}: {}", failure.detail));
        assert_eq!(serde_json::from_str::<Value>(&got.text).unwrap(), answer);
        let body = &setup.double.requests()[0].body;
        let sent = match kind {
            ProviderKind::Bedrock => serde_json::from_str(
                body["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["schema"]
                    .as_str()
                    .expect("the schema as a JSON string"),
            )
            .unwrap(),
            _ => body["output_config"]["format"]["schema"].clone(),
        };
        assert_eq!(sent, received, "{kind:?}");
    }
}

/// OpenAI's strict structured outputs refuse an optional property: the call fails with the
/// provider's own words, and the run ends as the page says of a schema the provider refuses.
#[tokio::test]
async fn a_schema_strict_outputs_refuse_fails_with_the_providers_words() {
    for kind in [ProviderKind::OpenAiChat, ProviderKind::Azure] {
        let setup = setup(kind).await;
        let mut request = request(&format!("{}/gpt-5-mini", common::provider_name(kind)));
        request.output = OutputContract::Json {
            schema: json!({ "type": "object", "additionalProperties": false, "required": ["a"],
                "properties": { "a": { "type": "string" }, "b": { "type": "string" } } }),
        };
        let failure = setup
            .providers
            .call(&request, &fast())
            .await
            .expect_err("the schema is refused");
        assert_eq!(
            failure.because,
            FailureBecause::DefinitionInvalid,
            "{kind:?}"
        );
        assert!(
            failure.detail.contains(
                "Invalid schema for response_format 'output': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'b'."
            ),
            "{kind:?}: {}",
            failure.detail
        );
        // Refused before any model: one request, no retry.
        assert_eq!(setup.double.requests().len(), 1);
    }
}

/// Posts `body` to a double at `path` and gives the status and the JSON body.
async fn post_raw(double: &ProviderDouble, path: &str, body: Value) -> (u16, Value) {
    let reply = reqwest::Client::new()
        .post(format!("{}{path}", double.base_url()))
        .json(&body)
        .send()
        .await
        .expect("the double answers");
    let status = reply.status().as_u16();
    (status, reply.json().await.expect("a JSON body"))
}

/// The doubles refuse what the real APIs refuse, with their error bodies: Anthropic (and Claude
/// on Vertex AI, and Bedrock) the numeric, length and count bounds and `oneOf`; OpenAI and
/// Azure strict structured outputs a root that is no object, an object without
/// `additionalProperties: false` and a property left out of `required`.
#[tokio::test]
async fn the_doubles_refuse_the_schemas_the_real_apis_refuse() {
    let anthropic = ProviderDouble::start(ProviderKind::Anthropic).await;
    let messages = |schema: Value| {
        json!({ "model": "claude-sonnet-4-5", "max_tokens": 10,
                "messages": [{ "role": "user", "content": "hi" }],
                "output_config": { "format": { "type": "json_schema", "schema": schema } } })
    };
    let object = |name: &str, property: Value| {
        json!({ "type": "object", "additionalProperties": false, "required": [name],
                "properties": { name: property } })
    };
    for (property, words) in [
        (
            json!({ "type": "integer", "minimum": 1 }),
            "For 'integer' type, property 'minimum' is not supported",
        ),
        (
            json!({ "type": "number", "multipleOf": 2 }),
            "For 'number' type, property 'multipleOf' is not supported",
        ),
        (
            json!({ "type": "string", "maxLength": 3 }),
            "For 'string' type, property 'maxLength' is not supported",
        ),
        (
            json!({ "type": "array", "minItems": 2 }),
            "For 'array' type, property 'minItems' is not supported",
        ),
        (
            json!({ "type": "array", "uniqueItems": true }),
            "For 'array' type, property 'uniqueItems' is not supported",
        ),
        (
            json!({ "oneOf": [{ "type": "string" }] }),
            "'oneOf' is not supported; use 'anyOf' instead",
        ),
    ] {
        let (status, body) =
            post_raw(&anthropic, "/v1/messages", messages(object("a", property))).await;
        assert_eq!(status, 400);
        assert_eq!(
            body,
            json!({ "type": "error", "error": { "type": "invalid_request_error",
                    "message": format!("output_config.format.schema: {words}") } })
        );
    }
    // What Anthropic takes: a minItems of 0 or 1, anyOf; the script's reply answers it.
    anthropic.script([Reply::Text("ok".into())]);
    let accepted = object(
        "a",
        json!({ "type": "array", "minItems": 1, "items": { "anyOf": [{ "type": "string" }] } }),
    );
    let (status, _) = post_raw(&anthropic, "/v1/messages", messages(accepted)).await;
    assert_eq!(status, 200);

    let vertex = ProviderDouble::start(ProviderKind::VertexAnthropic).await;
    let (status, body) = post_raw(
        &vertex,
        "/v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4-5:rawPredict",
        messages(object("a", json!({ "type": "string", "minLength": 1 }))),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["error"]["message"],
        "output_config.format.schema: For 'string' type, property 'minLength' is not supported"
    );

    let bedrock = ProviderDouble::start(ProviderKind::Bedrock).await;
    let schema = object("a", json!({ "type": "integer", "maximum": 3 })).to_string();
    let (status, body) = post_raw(
        &bedrock,
        "/model/anthropic.claude-sonnet-4-5-v1%3A0/converse",
        json!({ "messages": [{ "role": "user", "content": [{ "text": "hi" }] }],
                "outputConfig": { "textFormat": { "type": "json_schema",
                    "structure": { "jsonSchema": { "schema": schema, "name": "output" } } } } }),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({ "message": "The model returned the following errors: output_config.format.schema: For 'integer' type, property 'maximum' is not supported" })
    );

    for (kind, path) in [
        (ProviderKind::OpenAiChat, "/chat/completions"),
        (ProviderKind::Azure, "/openai/v1/chat/completions"),
    ] {
        let double = ProviderDouble::start(kind).await;
        let chat = |schema: Value| {
            json!({ "model": "gpt-5-mini", "messages": [{ "role": "user", "content": "hi" }],
                    "response_format": { "type": "json_schema",
                        "json_schema": { "name": "output", "schema": schema, "strict": true } } })
        };
        for (schema, words) in [
            (
                json!({ "type": "array", "items": { "type": "string" } }),
                "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"array\"'.",
            ),
            (
                json!({ "type": "object", "required": ["a"], "properties": { "a": { "type": "string" } } }),
                "In context=(), 'additionalProperties' is required to be supplied and to be false.",
            ),
            (
                json!({ "type": "object", "additionalProperties": false, "required": ["title"],
                        "properties": { "title": { "type": "string" }, "unit": { "type": "string" } } }),
                "In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'unit'.",
            ),
            (
                object(
                    "rows",
                    json!({ "type": "array", "items": { "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"] } }),
                ),
                "In context=('properties', 'rows', 'items'), 'additionalProperties' is required to be supplied and to be false.",
            ),
        ] {
            let (status, body) = post_raw(&double, path, chat(schema)).await;
            assert_eq!(status, 400, "{kind:?}");
            assert_eq!(
                body,
                json!({ "error": { "message": format!("Invalid schema for response_format 'output': {words}"),
                        "type": "invalid_request_error", "param": "response_format", "code": null } }),
                "{kind:?}"
            );
        }
        // A strict schema with a nullable property is answered from the script.
        double.script([Reply::Text("{}".into())]);
        let strict = json!({ "type": "object", "additionalProperties": false, "required": ["a"],
                             "properties": { "a": { "type": ["string", "null"] } } });
        let (status, _) = post_raw(&double, path, chat(strict)).await;
        assert_eq!(status, 200, "{kind:?}");
    }
}
