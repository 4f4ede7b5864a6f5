//! The cloud providers against their doubles, end to end through the HTTP client: Azure OpenAI
//! (v1 API, `api-key`), Gemini and Claude on Vertex AI (Bearer access token, the publisher paths)
//! and Amazon Bedrock Converse (SigV4). For each: a text answer, a JSON answer with the schema
//! sent as that provider documents, usage, a 429 retried after its `retry-after`, credentials
//! rejected without the secret in any detail, and a request too long.

mod common;

use std::time::{Duration, Instant};

use auto_models::{
    FailureBecause, FinishReason, Message, ModelFailure, OutputContract, RejectionKind,
    RejectionReason, ToolCall, ToolSpec, Usage, rejection_for,
};
use auto_testkit::{ProviderKind, RecordedRequest, Reply, ScriptedToolCall};
use common::{
    Setup, TEST_ACCESS_KEY_ID, TEST_KEY, TEST_LOCATION, TEST_PROJECT, fast, providers, request,
    setup, setup_named,
};
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

/// No header and no failure carries the secret.
fn assert_no_secret(setup: &Setup, failure: Option<&ModelFailure>) {
    for sent in setup.double.requests() {
        for (name, value) in &sent.headers {
            if name == "api-key" || name == "authorization" && !value.starts_with("AWS4-") {
                continue;
            }
            assert!(!value.contains(TEST_KEY), "{name} carries the secret");
        }
    }
    if let Some(failure) = failure {
        assert!(!format!("{failure:?}").contains(TEST_KEY), "{failure:?}");
        assert!(!rejection_for(failure).detail.contains(TEST_KEY));
    }
    assert!(!format!("{:?}", setup.providers).contains(TEST_KEY));
    assert!(!format!("{:?}", setup.providers).contains(TEST_ACCESS_KEY_ID));
}

/// A 429 asking for 1 s, then an answer: the answer is taken after the wait.
async fn rate_limited_then_answered(setup: &Setup, model: &str, limit: Reply) {
    setup.double.script([
        limit.with_header("retry-after", "1"),
        Reply::Text("ok".into()),
    ]);
    let started = Instant::now();
    let answer = setup
        .providers
        .call(&request(model), &fast())
        .await
        .expect("the retry answers");
    assert_eq!(answer.text, "ok");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "retry-after honoured"
    );
    assert_eq!(setup.double.requests().len(), 2);
}

async fn credentials_rejected(setup: &Setup, model: &str, status: u16) -> ModelFailure {
    let failure = setup
        .providers
        .call(&request(model), &fast())
        .await
        .expect_err("credentials rejected");
    assert_eq!(failure.because, FailureBecause::CredentialsRejected);
    assert_eq!(failure.status, Some(status));
    assert_eq!(
        setup.double.requests().len(),
        1,
        "credentials are not retried"
    );
    let rejection = rejection_for(&failure);
    assert_eq!(
        (rejection.reason, rejection.http_status),
        (RejectionReason::Unavailable, 503)
    );
    assert!(
        rejection.detail.contains(&format!("HTTP {status}")),
        "{}",
        rejection.detail
    );
    assert_no_secret(setup, Some(&failure));
    failure
}

async fn too_long(setup: &Setup, model: &str) {
    let failure = setup
        .providers
        .call(&request(model), &fast())
        .await
        .expect_err("too long");
    assert_eq!(
        failure.because,
        FailureBecause::RequestTooLong,
        "{failure:?}"
    );
    let rejection = rejection_for(&failure);
    assert_eq!(
        (rejection.reason, rejection.kind),
        (RejectionReason::Conflict, Some(RejectionKind::Unworkable))
    );
}

fn last(setup: &Setup) -> RecordedRequest {
    setup.double.requests().pop().expect("a request")
}

// ---------------------------------------------------------------------------------------------
// Azure OpenAI

#[tokio::test]
async fn azure_text_request_goes_to_the_v1_api_with_the_api_key_header() {
    let setup = setup(ProviderKind::Azure).await;
    setup.double.script([Reply::Text("Hello.".to_owned())]);
    let mut request = request("azure/my-gpt-5-deployment");
    request.settings.seed = Some(7);
    request.settings.stop_sequences = vec!["END".to_owned()];
    let answer = setup
        .providers
        .call(&request, &fast())
        .await
        .expect("an answer");
    assert_eq!(answer.text, "Hello.");
    assert_eq!(
        (answer.finish_reason, answer.raw_finish_reason.as_deref()),
        (FinishReason::Stop, Some("stop"))
    );
    assert_eq!(answer.response_id.as_deref(), Some("chatcmpl-double-1"));
    let sent = last(&setup);
    assert_eq!(sent.path, "/openai/v1/chat/completions");
    assert_eq!(sent.header("api-key"), Some(TEST_KEY));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body,
        json!({
            "model": "my-gpt-5-deployment",
            "messages": [{ "role": "system", "content": "Be brief." }, { "role": "user", "content": "Say hello." }],
            "max_completion_tokens": 1024,
            "seed": 7,
            "stop": ["END"],
        })
    );
}

#[tokio::test]
async fn azure_json_answer_sends_a_strict_json_schema_and_its_own_options() {
    let setup = setup(ProviderKind::Azure).await;
    setup.double.script([Reply::Json(json!({ "ok": true }))]);
    let mut request = request("azure/dep");
    request.output = OutputContract::Json { schema: schema() };
    request.settings.reasoning = Some(auto_models::ReasoningEffort::Low);
    // "openai: openai, and azure when there are no azure options".
    request
        .provider_options
        .insert("openai".into(), json!({ "textVerbosity": "high" }));
    request
        .provider_options
        .insert("azure".into(), json!({ "textVerbosity": "low" }));
    let answer = setup.providers.call(&request, &fast()).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&answer.text).unwrap(),
        json!({ "ok": true })
    );
    let body = last(&setup).body;
    assert_eq!(
        body["response_format"],
        json!({ "type": "json_schema", "json_schema": { "name": "output", "schema": schema(), "strict": true } })
    );
    assert_eq!(body["reasoning_effort"], "low");
    assert_eq!(body["verbosity"], "low");
}

#[tokio::test]
async fn azure_usage_takes_cached_and_reasoning_tokens_out() {
    let setup = setup(ProviderKind::Azure).await;
    setup.double.script([Reply::body(json!({
        "id": "chatcmpl-az", "model": "gpt-5-2025-08-07",
        "choices": [{ "index": 0, "message": { "role": "assistant", "content": "x" }, "finish_reason": "length" }],
        "usage": { "prompt_tokens": 1000, "completion_tokens": 300, "total_tokens": 1300,
                   "prompt_tokens_details": { "cached_tokens": 800 }, "completion_tokens_details": { "reasoning_tokens": 200 } },
    }))]);
    let answer = setup
        .providers
        .call(&request("azure/dep"), &fast())
        .await
        .unwrap();
    assert_eq!(answer.finish_reason, FinishReason::Length);
    assert_eq!(answer.answered_model.as_deref(), Some("gpt-5-2025-08-07"));
    assert_eq!(
        answer.usage,
        Usage {
            input_uncached: Some(200),
            cache_read: Some(800),
            cache_write: None,
            output_text: Some(100),
            output_reasoning: Some(200),
            total: Some(1300)
        }
    );
}

#[tokio::test]
async fn azure_with_a_dated_api_version_takes_the_deployments_path() {
    let setup = setup_named(
        ProviderKind::Azure,
        "azure",
        "api_version = \"2024-10-21\"",
        "",
    )
    .await;
    setup.double.script([Reply::Text("ok".into())]);
    setup
        .providers
        .call(&request("azure/my-deployment"), &fast())
        .await
        .expect("an answer");
    let sent = last(&setup);
    assert_eq!(
        sent.path,
        "/openai/deployments/my-deployment/chat/completions?api-version=2024-10-21"
    );
    assert!(
        sent.body.get("model").is_none(),
        "the deployment is in the path"
    );
}

#[tokio::test]
async fn azure_429_is_retried_after_retry_after() {
    let setup = setup(ProviderKind::Azure).await;
    let limit = Reply::error(
        429,
        "429",
        "Requests to the ChatCompletions_Create Operation have exceeded the rate limit. Please retry after 1 second.",
    );
    rate_limited_then_answered(&setup, "azure/dep", limit).await;
}

#[tokio::test]
async fn azure_401_is_credentials_rejected_without_the_key() {
    let setup = setup(ProviderKind::Azure).await;
    setup.double.script([Reply::error(
        401,
        "401",
        &format!("Access denied due to invalid subscription key {TEST_KEY} or wrong API endpoint."),
    )]);
    credentials_rejected(&setup, "azure/dep", 401).await;
}

#[tokio::test]
async fn azure_context_length_exceeded_is_request_too_long() {
    let setup = setup(ProviderKind::Azure).await;
    setup.double.script([Reply::error(
        400,
        "context_length_exceeded",
        "This model's maximum context length is 128000 tokens.",
    )]);
    too_long(&setup, "azure/dep").await;
}

#[tokio::test]
async fn azure_content_filter_on_the_prompt_is_content_refused() {
    let setup = setup(ProviderKind::Azure).await;
    setup.double.script([Reply::error(
        400,
        "content_filter",
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
    )]);
    let failure = setup
        .providers
        .call(&request("azure/dep"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::ContentRefused);
    assert_eq!(rejection_for(&failure).http_status, 422);
}

// ---------------------------------------------------------------------------------------------
// Gemini on Vertex AI

fn vertex_path(publisher: &str, model: &str, verb: &str) -> String {
    format!(
        "/v1/projects/{TEST_PROJECT}/locations/{TEST_LOCATION}/publishers/{publisher}/models/{model}:{verb}"
    )
}

#[tokio::test]
async fn vertex_gemini_text_request_goes_to_the_publisher_path_with_a_bearer_token() {
    let setup = setup(ProviderKind::VertexGemini).await;
    setup.double.script([Reply::Text("Hello.".to_owned())]);
    let mut request = request("vertex/gemini-2.5-flash");
    request.settings.seed = Some(3);
    request.settings.temperature = Some(0.5);
    let answer = setup.providers.call(&request, &fast()).await.unwrap();
    assert_eq!(answer.text, "Hello.");
    assert_eq!(answer.response_id.as_deref(), Some("double-response-1"));
    assert_eq!(answer.answered_model.as_deref(), Some("gemini-2.5-flash"));
    let sent = last(&setup);
    assert_eq!(
        sent.path,
        vertex_path("google", "gemini-2.5-flash", "generateContent")
    );
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(sent.header("x-goog-api-key"), None);
    assert_eq!(
        sent.body,
        json!({
            "systemInstruction": { "parts": [{ "text": "Be brief." }] },
            "contents": [{ "role": "user", "parts": [{ "text": "Say hello." }] }],
            "generationConfig": { "maxOutputTokens": 1024, "temperature": 0.5, "seed": 3 },
        })
    );
}

#[tokio::test]
async fn vertex_gemini_json_answer_sends_response_json_schema_and_vertex_options() {
    let setup = setup(ProviderKind::VertexGemini).await;
    setup.double.script([Reply::Json(json!({ "ok": true }))]);
    let mut request = request("vertex/gemini-2.5-pro");
    request.output = OutputContract::Json { schema: schema() };
    // "google: ... vertex when there are no googleVertex or vertex options": not read here.
    request.provider_options.insert(
        "google".into(),
        json!({ "thinkingConfig": { "thinkingBudget": 1 } }),
    );
    request.provider_options.insert(
        "googleVertex".into(),
        json!({ "thinkingConfig": { "thinkingBudget": 512 } }),
    );
    let answer = setup.providers.call(&request, &fast()).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&answer.text).unwrap(),
        json!({ "ok": true })
    );
    let config = &last(&setup).body["generationConfig"];
    assert_eq!(config["responseMimeType"], "application/json");
    assert_eq!(config["responseJsonSchema"], schema());
    assert_eq!(config["thinkingConfig"], json!({ "thinkingBudget": 512 }));
}

#[tokio::test]
async fn vertex_gemini_usage_counts_cached_and_thinking_tokens_apart() {
    let setup = setup(ProviderKind::VertexGemini).await;
    setup.double.script([Reply::body(json!({
        "candidates": [{ "content": { "role": "model", "parts": [{ "text": "x" }] }, "finishReason": "STOP" }],
        "usageMetadata": { "promptTokenCount": 1000, "cachedContentTokenCount": 600, "candidatesTokenCount": 40, "thoughtsTokenCount": 300, "totalTokenCount": 1340 },
        "modelVersion": "gemini-2.5-flash", "responseId": "r1",
    }))]);
    let answer = setup
        .providers
        .call(&request("vertex/gemini-2.5-flash"), &fast())
        .await
        .unwrap();
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
}

#[tokio::test]
async fn vertex_gemini_429_is_retried_after_retry_after() {
    let setup = setup(ProviderKind::VertexGemini).await;
    let limit = Reply::error(429, "RESOURCE_EXHAUSTED", "Resource exhausted.");
    rate_limited_then_answered(&setup, "vertex/gemini-2.5-flash", limit).await;
}

#[tokio::test]
async fn vertex_gemini_401_is_credentials_rejected_without_the_token() {
    let setup = setup(ProviderKind::VertexGemini).await;
    setup.double.script([Reply::error(
        401,
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token.",
    )]);
    credentials_rejected(&setup, "vertex/gemini-2.5-flash", 401).await;
}

#[tokio::test]
async fn vertex_gemini_input_token_count_exceeded_is_request_too_long() {
    let setup = setup(ProviderKind::VertexGemini).await;
    setup.double.script([Reply::error(
        400,
        "INVALID_ARGUMENT",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    )]);
    too_long(&setup, "vertex/gemini-2.5-flash").await;
}

#[tokio::test]
async fn a_renewed_token_file_is_read_before_the_next_call() {
    let setup = setup(ProviderKind::VertexGemini).await;
    setup
        .double
        .script([Reply::Text("a".into()), Reply::Text("b".into())]);
    let model = "vertex/gemini-2.5-flash";
    setup
        .providers
        .call(&request(model), &fast())
        .await
        .unwrap();
    std::fs::write(setup.key_path(), "renewed-token\n").unwrap();
    setup
        .providers
        .call(&request(model), &fast())
        .await
        .unwrap();
    let requests = setup.double.requests();
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(
        requests[1].header("authorization"),
        Some("Bearer renewed-token")
    );
}

// ---------------------------------------------------------------------------------------------
// Claude on Vertex AI

#[tokio::test]
async fn vertex_anthropic_text_request_uses_raw_predict_and_the_vertex_version() {
    let setup = setup(ProviderKind::VertexAnthropic).await;
    setup.double.script([Reply::Text("Hello.".to_owned())]);
    let mut request = request("vertex-anthropic/claude-sonnet-4-5@20250929");
    request.settings.top_p = Some(0.9);
    let answer = setup.providers.call(&request, &fast()).await.unwrap();
    assert_eq!(answer.text, "Hello.");
    assert_eq!(answer.raw_finish_reason.as_deref(), Some("end_turn"));
    assert_eq!(answer.response_id.as_deref(), Some("msg_double_1"));
    assert_eq!(
        answer.resolved_model,
        "vertex-anthropic/claude-sonnet-4-5@20250929"
    );
    let sent = last(&setup);
    assert_eq!(
        sent.path,
        vertex_path("anthropic", "claude-sonnet-4-5@20250929", "rawPredict")
    );
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(sent.header("anthropic-version"), None);
    assert_eq!(sent.header("x-api-key"), None);
    assert_eq!(
        sent.body,
        json!({
            "max_tokens": 1024,
            "system": "Be brief.",
            "messages": [{ "role": "user", "content": "Say hello." }],
            "top_p": 0.9,
            "anthropic_version": "vertex-2023-10-16",
        })
    );
}

#[tokio::test]
async fn vertex_anthropic_json_answer_sends_output_config_and_vertex_thinking() {
    let setup = setup(ProviderKind::VertexAnthropic).await;
    setup.double.script([Reply::Json(json!({ "ok": true }))]);
    let mut request = request("vertex-anthropic/claude-sonnet-4-5@20250929");
    request.output = OutputContract::Json { schema: schema() };
    request.provider_options.insert(
        "anthropic".into(),
        json!({ "thinking": { "type": "enabled", "budgetTokens": 1024 } }),
    );
    request.provider_options.insert(
        "googleVertex".into(),
        json!({ "thinking": { "type": "enabled", "budgetTokens": 2048 }, "safetySettings": [] }),
    );
    let answer = setup.providers.call(&request, &fast()).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&answer.text).unwrap(),
        json!({ "ok": true })
    );
    assert!(
        answer
            .warnings
            .iter()
            .any(|warning| warning.contains("googleVertex.safetySettings")),
        "{:?}",
        answer.warnings
    );
    let body = last(&setup).body;
    assert_eq!(
        body["output_config"],
        json!({ "format": { "type": "json_schema", "schema": schema() } })
    );
    assert_eq!(
        body["thinking"],
        json!({ "type": "enabled", "budget_tokens": 2048 })
    );
    assert!(body.get("model").is_none());
}

#[tokio::test]
async fn vertex_anthropic_usage_counts_cache_apart() {
    let setup = setup(ProviderKind::VertexAnthropic).await;
    setup.double.script([Reply::body(json!({
        "id": "msg_vrtx_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{ "type": "text", "text": "ok" }], "stop_reason": "end_turn",
        "usage": { "input_tokens": 100, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 50, "output_tokens": 20 },
    }))]);
    let answer = setup
        .providers
        .call(
            &request("vertex-anthropic/claude-sonnet-4-5@20250929"),
            &fast(),
        )
        .await
        .unwrap();
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
}

#[tokio::test]
async fn vertex_anthropic_429_is_retried_after_retry_after() {
    let setup = setup(ProviderKind::VertexAnthropic).await;
    let limit = Reply::error(429, "rate_limit_error", "Rate limited.");
    rate_limited_then_answered(&setup, "vertex-anthropic/claude-haiku-4-5@20251001", limit).await;
}

#[tokio::test]
async fn vertex_anthropic_403_is_credentials_rejected_without_the_token() {
    let setup = setup(ProviderKind::VertexAnthropic).await;
    setup.double.script([Reply::error(
        403,
        "PERMISSION_DENIED",
        "Permission 'aiplatform.endpoints.predict' denied on resource.",
    )]);
    credentials_rejected(&setup, "vertex-anthropic/claude-haiku-4-5@20251001", 403).await;
}

#[tokio::test]
async fn vertex_anthropic_prompt_too_long_is_request_too_long() {
    let setup = setup(ProviderKind::VertexAnthropic).await;
    setup.double.script([Reply::error(
        400,
        "invalid_request_error",
        "prompt is too long: 210000 tokens > 200000 maximum",
    )]);
    too_long(&setup, "vertex-anthropic/claude-haiku-4-5@20251001").await;
}

// ---------------------------------------------------------------------------------------------
// Amazon Bedrock Converse

/// `AWS4-HMAC-SHA256 Credential=<key id>/<yyyymmdd>/us-east-1/bedrock/aws4_request,
/// SignedHeaders=<headers>, Signature=<64 hex>`.
fn assert_signed(sent: &RecordedRequest, signed_headers: &str) {
    let authorization = sent
        .header("authorization")
        .expect("an authorization header");
    let rest = authorization
        .strip_prefix(&format!(
            "AWS4-HMAC-SHA256 Credential={TEST_ACCESS_KEY_ID}/"
        ))
        .unwrap_or_else(|| panic!("{authorization}"));
    let (date, rest) = rest.split_at(8);
    assert!(date.bytes().all(|b| b.is_ascii_digit()), "{authorization}");
    let signature = rest
        .strip_prefix(&format!(
            "/us-east-1/bedrock/aws4_request, SignedHeaders={signed_headers}, Signature="
        ))
        .unwrap_or_else(|| panic!("{authorization}"));
    assert_eq!(signature.len(), 64, "{authorization}");
    assert!(
        signature
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    );
    let amz_date = sent.header("x-amz-date").expect("x-amz-date");
    assert!(
        amz_date.starts_with(date) && amz_date.ends_with('Z'),
        "{amz_date}"
    );
}

#[tokio::test]
async fn bedrock_text_request_is_signed_and_takes_the_request_id() {
    let setup = setup(ProviderKind::Bedrock).await;
    setup.double.script([Reply::Text("Hello.".to_owned())]);
    let mut request = request("bedrock/amazon.nova-pro-v1:0");
    request.settings.temperature = Some(0.2);
    request.settings.top_p = Some(0.9);
    request.settings.stop_sequences = vec!["END".to_owned()];
    let answer = setup.providers.call(&request, &fast()).await.unwrap();
    assert_eq!(answer.text, "Hello.");
    assert_eq!(
        (answer.finish_reason, answer.raw_finish_reason.as_deref()),
        (FinishReason::Stop, Some("end_turn"))
    );
    assert_eq!(answer.response_id.as_deref(), Some("double-request-1"));
    let sent = last(&setup);
    assert_eq!(sent.path, "/model/amazon.nova-pro-v1%3A0/converse");
    assert_signed(&sent, "content-type;host;x-amz-date");
    assert_eq!(sent.header("x-amz-security-token"), None);
    assert_no_secret(&setup, None);
    assert_eq!(
        sent.body,
        json!({
            "messages": [{ "role": "user", "content": [{ "text": "Say hello." }] }],
            "system": [{ "text": "Be brief." }],
            "inferenceConfig": { "maxTokens": 1024, "temperature": 0.2, "topP": 0.9, "stopSequences": ["END"] },
        })
    );
}

#[tokio::test]
async fn bedrock_json_answer_sends_the_schema_as_a_string_in_output_config() {
    let setup = setup(ProviderKind::Bedrock).await;
    setup.double.script([Reply::Json(json!({ "ok": true }))]);
    let mut request = request("bedrock/amazon.nova-pro-v1:0");
    request.output = OutputContract::Json { schema: schema() };
    request.settings.seed = Some(1);
    request.provider_options.insert(
        "bedrock".into(),
        json!({ "reasoningConfig": { "type": "enabled", "maxReasoningEffort": "low" } }),
    );
    request.provider_options.insert(
        "amazonBedrock".into(),
        json!({ "reasoningConfig": { "type": "enabled", "maxReasoningEffort": "high", "budgetTokens": 10 } }),
    );
    let answer = setup.providers.call(&request, &fast()).await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&answer.text).unwrap(),
        json!({ "ok": true })
    );
    for expected in ["config.seed", "reasoningConfig.budgetTokens"] {
        assert!(
            answer
                .warnings
                .iter()
                .any(|warning| warning.contains(expected)),
            "{expected}: {:?}",
            answer.warnings
        );
    }
    let body = last(&setup).body;
    let format = &body["outputConfig"]["textFormat"];
    assert_eq!(format["type"], "json_schema");
    let sent_schema = format["structure"]["jsonSchema"]["schema"]
        .as_str()
        .expect("the schema as a JSON string");
    assert_eq!(
        serde_json::from_str::<Value>(sent_schema).unwrap(),
        schema()
    );
    assert_eq!(format["structure"]["jsonSchema"]["name"], "output");
    // "amazonBedrock: bedrock"; "bedrock: bedrock when there are no amazonBedrock options".
    assert_eq!(
        body["additionalModelRequestFields"],
        json!({ "reasoningConfig": { "type": "enabled", "maxReasoningEffort": "high" } })
    );
}

#[tokio::test]
async fn bedrock_anthropic_reads_anthropic_thinking_into_additional_fields() {
    let setup = setup_named(ProviderKind::Bedrock, "bedrock-anthropic", "", "").await;
    setup.double.script([Reply::Text("ok".into())]);
    let mut request = request("bedrock-anthropic/us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    request.provider_options.insert(
        "bedrock".into(),
        json!({ "reasoningConfig": { "maxReasoningEffort": "medium" } }),
    );
    request.provider_options.insert(
        "anthropic".into(),
        json!({ "thinking": { "type": "enabled", "budgetTokens": 2000 } }),
    );
    setup.providers.call(&request, &fast()).await.unwrap();
    let sent = last(&setup);
    assert_eq!(
        sent.path,
        "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
    );
    assert_eq!(
        sent.body["additionalModelRequestFields"],
        json!({
            "output_config": { "effort": "medium" },
            "thinking": { "type": "enabled", "budget_tokens": 2000 },
        })
    );
}

#[tokio::test]
async fn bedrock_tool_calls_go_and_come_back_in_converse_blocks() {
    let setup = setup(ProviderKind::Bedrock).await;
    setup
        .double
        .script([Reply::ToolCalls(vec![ScriptedToolCall {
            call_id: "tooluse_1".into(),
            name: "graph__search".into(),
            arguments: json!({ "q": "x" }),
        }])]);
    let mut request = request("bedrock/amazon.nova-pro-v1:0");
    request.tools = vec![tool()];
    request.messages.push(Message::AssistantToolCalls {
        text: "Looking.".into(),
        calls: vec![ToolCall {
            call_id: "c0".into(),
            name: "graph__search".into(),
            arguments: json!({}),
        }],
    });
    for (id, is_error) in [("c0", false), ("c0b", true)] {
        request.messages.push(Message::ToolResult {
            call_id: id.into(),
            name: "graph__search".into(),
            content: "[]".into(),
            is_error,
        });
    }
    let answer = setup.providers.call(&request, &fast()).await.unwrap();
    assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        answer.tool_calls,
        vec![ToolCall {
            call_id: "tooluse_1".into(),
            name: "graph__search".into(),
            arguments: json!({ "q": "x" })
        }]
    );
    let body = last(&setup).body;
    assert_eq!(
        body["toolConfig"],
        json!({ "tools": [{ "toolSpec": { "name": "graph__search", "description": "Searches the graph", "inputSchema": { "json": tool().input_schema } } }] })
    );
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.len(),
        3,
        "both results in one user turn: {messages:?}"
    );
    assert_eq!(
        messages[1]["content"],
        json!([{ "text": "Looking." }, { "toolUse": { "toolUseId": "c0", "name": "graph__search", "input": {} } }])
    );
    assert_eq!(
        messages[2]["content"][1],
        json!({ "toolResult": { "toolUseId": "c0b", "content": [{ "text": "[]" }], "status": "error" } })
    );
}

#[tokio::test]
async fn bedrock_usage_excludes_cache_from_input_and_stop_reasons_map() {
    let setup = setup(ProviderKind::Bedrock).await;
    let body = |reason: &str| {
        Reply::body(json!({
            "output": { "message": { "role": "assistant", "content": [
                { "reasoningContent": { "reasoningText": { "text": "thinking", "signature": "s" } } },
                { "text": "x" },
            ] } },
            "stopReason": reason,
            "usage": { "inputTokens": 100, "outputTokens": 20, "totalTokens": 1070,
                       "cacheReadInputTokens": 900, "cacheWriteInputTokens": 50 },
            "metrics": { "latencyMs": 10 },
        }))
    };
    let cases = [
        ("max_tokens", FinishReason::Length),
        ("stop_sequence", FinishReason::Stop),
        ("malformed_model_output", FinishReason::Error),
        ("malformed_tool_use", FinishReason::Error),
        ("something_new", FinishReason::Other),
    ];
    setup
        .double
        .script(cases.iter().map(|(reason, _)| body(reason)));
    for (index, (reason, expected)) in cases.iter().enumerate() {
        let answer = setup
            .providers
            .call(&request("bedrock/amazon.nova-pro-v1:0"), &fast())
            .await
            .unwrap();
        assert_eq!(answer.text, "x", "reasoning is not the answer");
        assert_eq!(
            (answer.finish_reason, answer.raw_finish_reason.as_deref()),
            (*expected, Some(*reason))
        );
        assert_eq!(
            answer.response_id,
            Some(format!("double-request-{}", index + 1))
        );
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
    }
    setup
        .double
        .script([body("guardrail_intervened"), body("content_filtered")]);
    for reason in ["guardrail_intervened", "content_filtered"] {
        let failure = setup
            .providers
            .call(&request("bedrock/amazon.nova-pro-v1:0"), &fast())
            .await
            .unwrap_err();
        assert_eq!(failure.because, FailureBecause::ContentRefused);
        assert_eq!(failure.finish_reason, Some(FinishReason::ContentFilter));
        assert_eq!(failure.raw_finish_reason.as_deref(), Some(reason));
        assert_eq!(failure.usage.and_then(|usage| usage.cache_read), Some(900));
    }
}

#[tokio::test]
async fn bedrock_throttling_429_is_retried_after_retry_after() {
    let setup = setup(ProviderKind::Bedrock).await;
    let limit = Reply::error(
        429,
        "ThrottlingException",
        "Too many requests, please wait before trying again.",
    );
    rate_limited_then_answered(&setup, "bedrock/amazon.nova-pro-v1:0", limit).await;
    let first = &setup.double.requests()[0];
    let second = &setup.double.requests()[1];
    assert_signed(second, "content-type;host;x-amz-date");
    assert_eq!(first.body, second.body);
}

#[tokio::test]
async fn bedrock_403_and_an_expired_token_are_credentials_rejected() {
    let setup = setup(ProviderKind::Bedrock).await;
    setup.double.script([Reply::error(
        403,
        "UnrecognizedClientException",
        "The security token included in the request is invalid.",
    )]);
    credentials_rejected(&setup, "bedrock/amazon.nova-pro-v1:0", 403).await;

    let setup = setup_named(ProviderKind::Bedrock, "bedrock", "", "").await;
    setup.double.script([Reply::error(
        400,
        "ExpiredTokenException",
        "The security token included in the request is expired",
    )]);
    credentials_rejected(&setup, "bedrock/amazon.nova-pro-v1:0", 400).await;
}

#[tokio::test]
async fn bedrock_input_too_long_is_request_too_long_and_other_validation_is_quoted() {
    let setup = setup(ProviderKind::Bedrock).await;
    setup.double.script([
        Reply::error(
            400,
            "ValidationException",
            "Input is too long for requested model.",
        ),
        Reply::error(
            400,
            "ValidationException",
            "The provided model identifier is invalid.",
        ),
        Reply::error(404, "ResourceNotFoundException", "Model not found."),
    ]);
    too_long(&setup, "bedrock/amazon.nova-pro-v1:0").await;
    for _ in 0..2 {
        let failure = setup
            .providers
            .call(&request("bedrock/amazon.nova-pro-v1:0"), &fast())
            .await
            .unwrap_err();
        assert_eq!(failure.because, FailureBecause::DefinitionInvalid);
        assert!(
            failure.detail.contains("invalid") || failure.detail.contains("not found"),
            "{}",
            failure.detail
        );
    }
}

#[tokio::test]
async fn bedrock_session_token_is_sent_and_signed() {
    let setup = setup(ProviderKind::Bedrock).await;
    let mut token = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut token, b"session-token-value\n").unwrap();
    let key = common::key_file();
    let access = common::key_file();
    let config = format!(
        "[providers.bedrock]\naccess_key_id = {{ file = {access:?} }}\nsecret_access_key = {{ file = {key:?} }}\nsession_token = {{ file = {token:?} }}\nregion = \"us-east-1\"\nbase_url = {url:?}\n",
        access = access.path().display().to_string(),
        key = key.path().display().to_string(),
        token = token.path().display().to_string(),
        url = setup.double.base_url(),
    );
    let providers = providers(&config);
    setup.double.script([Reply::Text("ok".into())]);
    providers
        .call(&request("bedrock/amazon.nova-pro-v1:0"), &fast())
        .await
        .unwrap();
    let sent = last(&setup);
    assert_eq!(
        sent.header("x-amz-security-token"),
        Some("session-token-value")
    );
    let authorization = sent.header("authorization").unwrap();
    assert!(
        authorization.contains("SignedHeaders=content-type;host;x-amz-date;x-amz-security-token,"),
        "{authorization}"
    );
}

// ---------------------------------------------------------------------------------------------
// Configuration

fn config_error(config: &str) -> String {
    let table: toml::Table = toml::from_str(config).unwrap();
    let section = |name: &str| {
        table
            .get(name)
            .and_then(toml::Value::as_table)
            .cloned()
            .unwrap_or_default()
    };
    auto_models::Providers::from_config(
        &section("providers"),
        &section("gateways"),
        &section("models"),
    )
    .unwrap_err()
    .to_string()
}

#[test]
fn cloud_provider_settings_are_checked_and_secrets_are_never_inline() {
    assert_eq!(
        config_error(
            "[providers.bedrock]\naccess_key_id = \"AKIA\"\nsecret_access_key = { env = \"X\" }\nregion = \"us-east-1\"\n"
        ),
        "providers.bedrock.access_key_id must be read from the environment or a file: write { env = \"NAME\" } or { file = \"PATH\" }"
    );
    assert_eq!(
        config_error("[providers.bedrock-anthropic]\nregion = \"us-east-1\"\n"),
        "providers.bedrock-anthropic: access_key_id is required"
    );
    assert_eq!(
        config_error("[providers.bedrock]\n"),
        "providers.bedrock: region is required"
    );
    assert_eq!(
        config_error("[providers.vertex]\nlocation = \"global\"\n"),
        "providers.vertex: project is required"
    );
    assert_eq!(
        config_error("[providers.vertex-anthropic]\nproject = \"p\"\nlocation = \"us/east\"\n"),
        "providers.vertex-anthropic.location: expected a name of letters, digits, '-', '_' and '.'"
    );
    assert_eq!(
        config_error(
            "[providers.vertex]\nproject = \"p\"\nlocation = \"global\"\naccess_token = \"ya29.x\"\n"
        ),
        "providers.vertex.access_token must be read from the environment or a file: write { env = \"NAME\" } or { file = \"PATH\" }"
    );
    assert!(
        config_error("[providers.azure]\n").contains("set one of resource"),
        "a resource or a base URL is needed"
    );
}

#[tokio::test]
async fn a_double_answers_a_path_its_provider_does_not_serve_with_404() {
    // The OpenAI adapter's path on an Azure double: not one Azure serves.
    let setup = setup(ProviderKind::Azure).await;
    let key = common::key_file();
    let providers = providers(&format!(
        "[providers.openai]\napi_key = {{ file = {key:?} }}\nbase_url = {url:?}\n",
        key = key.path().display().to_string(),
        url = setup.double.base_url(),
    ));
    setup.double.script([Reply::Text("kept".into())]);
    let failure = providers
        .call(&request("openai/gpt-5"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.status, Some(404));
    assert_eq!(failure.because, FailureBecause::DefinitionInvalid);
    // The scripted reply is still there for a request on the right path.
    let answer = setup
        .providers
        .call(&request("azure/dep"), &fast())
        .await
        .unwrap();
    assert_eq!(answer.text, "kept");
}
