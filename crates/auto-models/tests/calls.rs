//! How a call ends when it does not simply answer: retries within the bound, the bound itself,
//! cancellation, credentials, requests too long, models and providers the operator did not
//! configure, and the gateway rules (cost header, allowed provider options).

mod common;

use std::time::{Duration, Instant};

use auto_models::{CallOptions, FailureBecause, RejectionKind, RejectionReason, rejection_for};
use auto_testkit::{ProviderKind, Reply};
use common::{TEST_KEY, fast, gateway, request, setup, setup_with};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_429_then_an_answer_succeeds_after_the_wait_it_asked_for() {
    let setup = setup(ProviderKind::OpenAiChat).await;
    setup.double.script([
        Reply::error(429, "rate_limit_exceeded", "slow down").with_header("retry-after-ms", "300"),
        Reply::Text("ok".into()),
    ]);
    let started = Instant::now();
    let answer = setup
        .providers
        .call(&request("openai/gpt-5"), &fast())
        .await
        .expect("the retry answers");
    assert_eq!(answer.text, "ok");
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "retry-after-ms honoured"
    );
    assert_eq!(setup.double.requests().len(), 2);
}

#[tokio::test]
async fn retry_after_in_seconds_is_honoured() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup.double.script([
        Reply::error(529, "overloaded_error", "Overloaded").with_header("retry-after", "1"),
        Reply::Text("ok".into()),
    ]);
    let started = Instant::now();
    setup
        .providers
        .call(&request("anthropic/m"), &fast())
        .await
        .expect("the retry answers");
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn three_503s_fail_provider_unavailable_after_two_retries() {
    let setup = setup(ProviderKind::Gemini).await;
    setup
        .double
        .script((0..3).map(|_| Reply::error(503, "UNAVAILABLE", "The model is overloaded.")));
    let failure = setup
        .providers
        .call(&request("google/gemini-2.5-flash"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::ProviderUnavailable);
    assert_eq!(failure.status, Some(503));
    assert_eq!(setup.double.requests().len(), 3, "one call and two retries");
    let rejection = rejection_for(&failure);
    assert_eq!(
        (rejection.reason, rejection.http_status),
        (RejectionReason::Unavailable, 503)
    );
    assert!(
        rejection.detail.contains("google answered HTTP 503"),
        "{}",
        rejection.detail
    );
}

#[tokio::test]
async fn x_should_retry_false_stops_retries() {
    let setup = setup(ProviderKind::OpenAiChat).await;
    setup
        .double
        .script([Reply::error(500, "server_error", "boom").with_header("x-should-retry", "false")]);
    let failure = setup
        .providers
        .call(&request("openai/gpt-5"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::ProviderUnavailable);
    assert_eq!(setup.double.requests().len(), 1);
}

#[tokio::test]
async fn a_cut_connection_is_retried() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup.double.script([Reply::Cut, Reply::Text("ok".into())]);
    let answer = setup
        .providers
        .call(&request("anthropic/m"), &fast())
        .await
        .expect("the retry answers");
    assert_eq!(answer.text, "ok");
}

#[tokio::test]
async fn a_429_asking_for_longer_than_the_bound_fails_rate_limited_with_the_seconds() {
    let setup = setup(ProviderKind::OpenAiChat).await;
    setup.double.script([
        Reply::error(429, "rate_limit_exceeded", "slow down").with_header("retry-after", "30")
    ]);
    let options = CallOptions {
        bound: Some(Duration::from_secs(2)),
        ..fast()
    };
    let failure = setup
        .providers
        .call(&request("openai/gpt-5"), &options)
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::RateLimited);
    assert_eq!(failure.retry_after_ms, Some(30_000));
    let rejection = rejection_for(&failure);
    assert_eq!(rejection.retry_after_seconds, Some(30));
    assert_eq!(rejection.reason, RejectionReason::Unavailable);
    assert_eq!(
        setup.double.requests().len(),
        1,
        "no retry that cannot finish within the bound"
    );
}

#[tokio::test]
async fn a_provider_that_never_answers_times_out_at_the_bound() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup.double.script([Reply::Hang]);
    let bound = Duration::from_millis(400);
    let started = Instant::now();
    let options = CallOptions {
        bound: Some(bound),
        ..fast()
    };
    let failure = setup
        .providers
        .call(&request("anthropic/m"), &options)
        .await
        .unwrap_err();
    let elapsed = started.elapsed();
    assert_eq!(failure.because, FailureBecause::TimedOut);
    assert!(
        elapsed >= bound && elapsed < bound + Duration::from_secs(2),
        "{elapsed:?}"
    );
    assert_eq!(rejection_for(&failure).reason, RejectionReason::Unavailable);
}

#[tokio::test]
async fn a_cancel_ends_the_call_at_once() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup.double.script([Reply::Hang]);
    let options = fast();
    let cancel = options.cancel.clone();
    let request = request("anthropic/m");
    let call = setup.providers.call(&request, &options);
    let (result, ()) = tokio::join!(call, async {
        setup.double.wait_for_requests(1, WAIT).await;
        cancel.cancel();
    });
    let failure = result.unwrap_err();
    assert_eq!(failure.because, FailureBecause::Cancelled);
    assert_eq!(rejection_for(&failure).reason, RejectionReason::Cancelled);
}

#[tokio::test]
async fn a_401_is_credentials_rejected_without_the_providers_words() {
    let setup = setup(ProviderKind::OpenAiChat).await;
    setup.double.script([Reply::error(
        401,
        "invalid_api_key",
        &format!("Incorrect API key provided: {TEST_KEY}"),
    )]);
    let failure = setup
        .providers
        .call(&request("openai/gpt-5"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::CredentialsRejected);
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
    assert!(rejection.detail.contains("HTTP 401"));
    assert!(
        !format!("{failure:?}").contains(TEST_KEY),
        "no secret in a failure"
    );
    assert!(
        !format!("{:?}", setup.providers).contains(TEST_KEY),
        "no secret in Debug"
    );
}

#[tokio::test]
async fn a_413_and_context_length_exceeded_are_request_too_long() {
    let setup = setup(ProviderKind::OpenAiChat).await;
    setup.double.script([
        Reply::error(413, "request_too_large", "too large"),
        Reply::error(
            400,
            "context_length_exceeded",
            "This model's maximum context length is 128000 tokens.",
        ),
    ]);
    for _ in 0..2 {
        let failure = setup
            .providers
            .call(&request("openai/gpt-5"), &fast())
            .await
            .unwrap_err();
        assert_eq!(failure.because, FailureBecause::RequestTooLong);
        let rejection = rejection_for(&failure);
        assert_eq!(
            (rejection.reason, rejection.kind),
            (RejectionReason::Conflict, Some(RejectionKind::Unworkable))
        );
    }
}

#[tokio::test]
async fn anthropic_prompt_too_long_is_request_too_long() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup.double.script([Reply::error(
        400,
        "invalid_request_error",
        "prompt is too long: 210000 tokens > 200000 maximum",
    )]);
    let failure = setup
        .providers
        .call(&request("anthropic/m"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::RequestTooLong);
}

#[tokio::test]
async fn a_400_is_definition_invalid_quoting_the_provider() {
    let setup = setup(ProviderKind::Anthropic).await;
    setup.double.script([Reply::error(
        400,
        "invalid_request_error",
        "temperature: range is 0 to 1",
    )]);
    let failure = setup
        .providers
        .call(&request("anthropic/m"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::DefinitionInvalid);
    let rejection = rejection_for(&failure);
    assert_eq!(
        (rejection.reason, rejection.kind),
        (RejectionReason::Conflict, Some(RejectionKind::Unworkable))
    );
    assert!(
        rejection.detail.contains("temperature: range is 0 to 1"),
        "{}",
        rejection.detail
    );
}

#[tokio::test]
async fn a_model_outside_allowed_sends_nothing() {
    let setup = setup_with(
        ProviderKind::OpenAiChat,
        "allowed = [\"anthropic/*\", \"openai/gpt-5*\"]",
    )
    .await;
    setup.double.script([Reply::Text("ok".into())]);
    let failure = setup
        .providers
        .call(&request("openai/gpt-4o"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::ModelNotAllowed);
    let rejection = rejection_for(&failure);
    assert_eq!(
        (rejection.reason, rejection.kind),
        (
            RejectionReason::Unavailable,
            Some(RejectionKind::ModelNotOffered)
        )
    );
    assert!(
        setup.double.requests().is_empty(),
        "nothing is sent to a model outside the allowed models"
    );
    setup
        .providers
        .call(&request("openai/gpt-5-mini"), &fast())
        .await
        .expect("an allowed model answers");
}

#[tokio::test]
async fn a_provider_not_configured_names_the_configured_ones_and_the_aliases() {
    let setup = setup_with(
        ProviderKind::Anthropic,
        "aliases = { \"vendor/sonnet\" = \"anthropic/claude-sonnet-4-5\" }",
    )
    .await;
    let failure = setup
        .providers
        .call(&request("openai/gpt-5"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::ProviderNotConfigured);
    assert!(
        failure.detail.contains("configured: anthropic"),
        "{}",
        failure.detail
    );
    assert!(
        failure
            .detail
            .contains("vendor/sonnet -> anthropic/claude-sonnet-4-5"),
        "{}",
        failure.detail
    );
    let rejection = rejection_for(&failure);
    assert_eq!(
        (rejection.reason, rejection.kind),
        (
            RejectionReason::Unavailable,
            Some(RejectionKind::ModelNotOffered)
        )
    );

    let nothing = common::providers("");
    let failure = nothing
        .call(&request("openai/gpt-5"), &fast())
        .await
        .unwrap_err();
    assert_eq!(
        rejection_for(&failure).kind,
        None,
        "no kind when no provider is configured"
    );

    setup.double.script([Reply::Text("ok".into())]);
    let answer = setup
        .providers
        .call(&request("vendor/sonnet"), &fast())
        .await
        .expect("the alias answers");
    assert_eq!(answer.resolved_model, "anthropic/claude-sonnet-4-5");
    assert_eq!(
        setup.double.requests()[0].body["model"],
        "claude-sonnet-4-5"
    );
}

#[tokio::test]
async fn a_gateway_sends_allowed_options_and_reads_its_cost_header() {
    let setup = gateway(
        "my-gateway",
        "allowed_provider_options = [\"user\", \"route\"]\ncost_header = \"x-response-cost\"",
    )
    .await;
    setup.double.script([Reply::body(json!({
        "id": "g1", "model": "m", "choices": [{ "index": 0, "message": { "role": "assistant", "content": "ok" }, "finish_reason": "stop" }],
    }))
    .with_header("x-response-cost", "0.00125")]);
    let mut request = request("my-gateway/some-model");
    request
        .provider_options
        .insert("myGateway".into(), json!({ "route": "fast" }));
    request
        .provider_options
        .insert("openaiCompatible".into(), json!({ "user": "u-1" }));
    let answer = setup
        .providers
        .call(&request, &fast())
        .await
        .expect("an answer");
    assert_eq!(answer.cost_usd, Some(0.00125));
    let sent = &setup.double.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {TEST_KEY}").as_str())
    );
    assert_eq!(sent.body["route"], "fast");
    assert_eq!(sent.body["user"], "u-1");
    assert_eq!(sent.body["max_tokens"], 1024);
}

#[tokio::test]
async fn a_gateway_option_outside_the_list_is_refused_before_any_call() {
    let setup = gateway("my-gateway", "allowed_provider_options = [\"user\"]").await;
    let mut request = request("my-gateway/some-model");
    request
        .provider_options
        .insert("my-gateway".into(), json!({ "fallbacks": ["x"] }));
    let failure = setup.providers.call(&request, &fast()).await.unwrap_err();
    assert_eq!(failure.because, FailureBecause::DefinitionInvalid);
    assert!(
        failure.detail.contains("does not allow fallbacks"),
        "{}",
        failure.detail
    );
    let rejection = rejection_for(&failure);
    assert_eq!(
        (rejection.reason, rejection.kind),
        (RejectionReason::Conflict, Some(RejectionKind::Unworkable))
    );
    assert!(
        setup.double.requests().is_empty(),
        "the gateway is not called"
    );
}

#[tokio::test]
async fn a_namespace_nothing_reads_is_refused_before_any_call() {
    let setup = gateway("my-gateway", "").await;
    let mut request = request("my-gateway/some-model");
    request
        .provider_options
        .insert("other-gateway".into(), json!({ "user": "x" }));
    let failure = setup.providers.call(&request, &fast()).await.unwrap_err();
    assert_eq!(failure.because, FailureBecause::DefinitionInvalid);
    assert!(
        failure
            .detail
            .contains("no configured provider or gateway reads"),
        "{}",
        failure.detail
    );
    assert!(setup.double.requests().is_empty());
}

#[test]
fn a_gateway_cannot_allow_a_field_the_runtime_sets_and_keys_are_never_inline() {
    let table: toml::Table = toml::from_str(
        "[g]\nbase_url = \"http://127.0.0.1:1/v1\"\nallowed_provider_options = [\"temperature\"]",
    )
    .unwrap();
    let error =
        auto_models::Providers::from_config(&toml::Table::new(), &table, &toml::Table::new())
            .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("temperature is set by the runtime"),
        "{error}"
    );
    let table: toml::Table = toml::from_str("[anthropic]\napi_key = \"sk-inline\"").unwrap();
    let error =
        auto_models::Providers::from_config(&table, &toml::Table::new(), &toml::Table::new())
            .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("must be read from the environment or a file"),
        "{error}"
    );
}

#[tokio::test]
async fn a_provider_that_cannot_be_reached_is_unavailable_after_its_retries() {
    // A port that was bound and released: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let key = common::key_file();
    let providers = common::providers(&format!(
        "[providers.anthropic]\napi_key = {{ file = {:?} }}\nbase_url = \"http://127.0.0.1:{port}\"\n",
        key.path().display().to_string()
    ));
    let failure = providers
        .call(&request("anthropic/m"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::ProviderUnavailable);
    assert!(
        failure.detail.contains("could not connect"),
        "{}",
        failure.detail
    );
    assert_eq!(failure.status, None);
}

#[tokio::test]
async fn a_slow_answer_within_the_bound_is_taken() {
    let setup = setup(ProviderKind::Gemini).await;
    setup.double.script([Reply::Delayed(
        Duration::from_millis(50),
        Box::new(Reply::Text("late".into())),
    )]);
    let options = CallOptions {
        bound: Some(Duration::from_secs(5)),
        ..fast()
    };
    let answer = setup
        .providers
        .call(&request("google/gemini-2.5-flash"), &options)
        .await
        .unwrap();
    assert_eq!(answer.text, "late");
    assert!(answer.duration_ms >= 50);
}

#[tokio::test]
async fn gemini_input_token_count_exceeded_is_request_too_long() {
    let setup = setup(ProviderKind::Gemini).await;
    setup.double.script([Reply::error(
        400,
        "INVALID_ARGUMENT",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    )]);
    let failure = setup
        .providers
        .call(&request("google/gemini-2.5-flash"), &fast())
        .await
        .unwrap_err();
    assert_eq!(failure.because, FailureBecause::RequestTooLong);
    assert_eq!(failure.status, Some(400));
}
