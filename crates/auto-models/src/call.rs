//! [`Providers::call`]: one model call within its bound. It checks the allowed models and the
//! provider options before anything is sent, sends the request, retries HTTP 408, 409, 429, 5xx
//! and failed connections at most twice within the bound (honouring `retry-after`,
//! `retry-after-ms` and `x-should-retry`), and classifies every ending.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::{Endpoint, ModelRef, Providers};
use crate::failure::{FailureBecause, ModelFailure};
use crate::limits::{
    MODEL_CALL_RETRIES_MAX, PROVIDER_WORDS_CHARS_MAX, RETRY_BACKOFF_BASE_MS, WARNINGS_MAX,
    model_call_bound,
};
use crate::options::provider_extras;
use crate::sigv4;
use crate::types::{FinishReason, ModelAnswer, ModelRequest, OutputContract};
use crate::wire::{self, Parsed, Prepared};

/// How one call is bounded and stopped.
#[derive(Debug, Clone)]
pub struct CallOptions {
    /// Fires to end the call at once as `cancelled`.
    pub cancel: CancellationToken,
    /// The call's bound; `None` takes the page's 60 s + 25 ms × max_output_tokens. Tests
    /// shorten it.
    pub bound: Option<Duration>,
    /// The wait before the first retry when the provider gave no hint; doubled after.
    pub retry_backoff: Duration,
}

impl Default for CallOptions {
    fn default() -> Self {
        CallOptions {
            cancel: CancellationToken::new(),
            bound: None,
            retry_backoff: Duration::from_millis(RETRY_BACKOFF_BASE_MS),
        }
    }
}

/// One HTTP exchange that reached a status.
struct Exchange {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

/// What one attempt came to.
enum Attempt {
    Answered(Exchange),
    /// Could not connect, or the connection was cut before the answer was whole.
    Transport(String),
    /// The request could not be signed; nothing was sent.
    Unsigned(String),
    /// The provider's TLS certificate is not trusted, in rustls's words; nothing was sent.
    Untrusted(String),
}

impl Providers {
    /// Sends one model call and returns the answer, or why there is none.
    pub async fn call(
        &self,
        request: &ModelRequest,
        options: &CallOptions,
    ) -> Result<ModelAnswer, ModelFailure> {
        let started = Instant::now();
        let result = self.call_within_bound(request, options, started).await;
        let duration_ms = elapsed_ms(started);
        match result {
            Ok(mut answer) => {
                answer.duration_ms = duration_ms;
                tracing::debug!(
                    model = %answer.resolved_model,
                    finish_reason = answer.finish_reason.as_str(),
                    duration_ms,
                    "model call answered"
                );
                Ok(answer)
            }
            Err(mut failure) => {
                failure.duration_ms = duration_ms;
                tracing::info!(
                    provider = %failure.provider,
                    because = failure.because.as_str(),
                    status = ?failure.status,
                    "model call failed"
                );
                Err(failure)
            }
        }
    }

    fn endpoint_for(&self, model: &ModelRef) -> Result<(&Endpoint, ModelRef), ModelFailure> {
        if !self.is_allowed(model) {
            return Err(ModelFailure::new(
                FailureBecause::ModelNotAllowed,
                &model.provider,
                None,
                format!("{model} is outside the models the operator allows"),
            ));
        }
        let resolved = self.resolve(model);
        match self.endpoints.get(&resolved.provider) {
            Some(endpoint) => Ok((endpoint, resolved)),
            None => {
                let configured = self.configured();
                let aliases = self.alias_list();
                let mut failure = ModelFailure::new(
                    FailureBecause::ProviderNotConfigured,
                    &resolved.provider,
                    None,
                    format!(
                        "the provider {} is not configured; configured: {}; aliases: {}",
                        resolved.provider,
                        if configured.is_empty() {
                            "none".to_owned()
                        } else {
                            configured.join(", ")
                        },
                        if aliases.is_empty() {
                            "none".to_owned()
                        } else {
                            aliases.join(", ")
                        },
                    ),
                );
                failure.other_providers_configured = !configured.is_empty();
                Err(failure)
            }
        }
    }

    async fn call_within_bound(
        &self,
        request: &ModelRequest,
        options: &CallOptions,
        started: Instant,
    ) -> Result<ModelAnswer, ModelFailure> {
        let (endpoint, resolved) = self.endpoint_for(&request.model)?;
        let extras = provider_extras(self, endpoint, &request.provider_options)?;
        let prepared = wire::build(endpoint, &resolved.model, request, extras);
        let bound = options
            .bound
            .unwrap_or_else(|| model_call_bound(request.settings.max_output_tokens));
        let deadline = started + bound;
        let body = serde_json::to_vec(&prepared.body).unwrap_or_default();
        let mut attempt_number = 0;
        loop {
            let attempt = tokio::select! {
                () = options.cancel.cancelled() => return Err(cancelled(endpoint)),
                outcome = tokio::time::timeout_at(deadline, self.send(endpoint, &prepared, &body)) => outcome,
            };
            let Ok(attempt) = attempt else {
                return Err(timed_out(endpoint, bound));
            };
            let (failure, retryable) = match attempt {
                Attempt::Answered(exchange) if (200..300).contains(&exchange.status) => {
                    return answer(
                        endpoint,
                        &resolved,
                        request,
                        &prepared,
                        body.len(),
                        exchange,
                    );
                }
                Attempt::Answered(exchange) => classify(endpoint, &exchange),
                Attempt::Transport(what) => (not_reached(endpoint, &what), true),
                // The operator's to fix: no retry mends it.
                Attempt::Untrusted(what) => (untrusted(endpoint, &what), false),
                Attempt::Unsigned(what) => (
                    ModelFailure::new(
                        FailureBecause::CredentialsRejected,
                        &endpoint.name,
                        None,
                        format!("{}: {what} with the configured credentials", endpoint.name),
                    ),
                    false,
                ),
            };
            if !retryable || attempt_number >= MODEL_CALL_RETRIES_MAX {
                return Err(failure);
            }
            let wait = failure.retry_after_ms.map_or_else(
                || options.retry_backoff * 2u32.pow(attempt_number),
                Duration::from_millis,
            );
            if Instant::now() + wait >= deadline {
                return Err(failure);
            }
            tracing::debug!(provider = %endpoint.name, wait_ms = wait.as_millis() as u64, "retrying the model call");
            tokio::select! {
                () = options.cancel.cancelled() => return Err(cancelled(endpoint)),
                () = tokio::time::sleep(wait) => {}
            }
            attempt_number += 1;
        }
    }

    async fn send(&self, endpoint: &Endpoint, prepared: &Prepared, body: &[u8]) -> Attempt {
        let url = format!("{}{}", endpoint.base_url, prepared.path);
        let mut builder = self
            .client
            .post(&url)
            .header("content-type", "application/json")
            .body(body.to_vec());
        for (name, value) in &prepared.headers {
            builder = builder.header(*name, *value);
        }
        if let Some(secret) = &endpoint.api_key
            && let Some((header, bearer)) = wire::credential_header(endpoint.protocol)
        {
            let secret = secret.current();
            let value = if bearer {
                format!("Bearer {secret}")
            } else {
                secret
            };
            builder = builder.header(header, value);
        }
        // A protocol that signs its requests signs each attempt, over the exact body bytes.
        if let Some(aws) = &endpoint.aws {
            let signed = sigv4::signing_headers(
                aws,
                &url,
                &[("content-type", "application/json")],
                body,
                std::time::SystemTime::now(),
            );
            match signed {
                Ok(headers) => {
                    for (name, value) in headers {
                        builder = builder.header(name, value);
                    }
                }
                Err(what) => return Attempt::Unsigned(what),
            }
        }
        let response = match builder.send().await {
            Ok(response) => response,
            Err(error) => {
                if let Some(words) = untrusted_certificate(&error) {
                    return Attempt::Untrusted(words);
                }
                // The error's text carries the URL, never a header: no credential reaches it.
                return Attempt::Transport(transport_words(&error));
            }
        };
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        match response.bytes().await {
            Ok(bytes) => Attempt::Answered(Exchange {
                status,
                headers,
                body: bytes.to_vec(),
            }),
            Err(error) => Attempt::Transport(transport_words(&error)),
        }
    }
}

/// The certificate rustls refused under a request's error (one no trusted root vouches for,
/// expired, or for another name), in rustls's words.
fn untrusted_certificate(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(rustls::Error::InvalidCertificate(certificate)) =
            error.downcast_ref::<rustls::Error>()
        {
            return Some(format!("{certificate:?}"));
        }
        // An I/O error's source skips the error it wraps: follow the wrapped one.
        current = match error.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => error.source(),
        };
    }
    None
}

fn transport_words(error: &reqwest::Error) -> String {
    if error.is_connect() {
        "could not connect".to_owned()
    } else {
        "the connection closed before the answer was complete".to_owned()
    }
}

fn answer(
    endpoint: &Endpoint,
    resolved: &ModelRef,
    request: &ModelRequest,
    prepared: &Prepared,
    request_bytes: usize,
    exchange: Exchange,
) -> Result<ModelAnswer, ModelFailure> {
    let cost_usd = cost(endpoint, &exchange.headers);
    let parsed = serde_json::from_slice::<Value>(&exchange.body)
        .map_err(|error| error.to_string())
        .and_then(|body| wire::parse(endpoint.protocol, &body));
    let parsed: Parsed = match parsed {
        Ok(mut parsed) => {
            if let Some(header) = wire::response_id_header(endpoint.protocol) {
                parsed.response_id = header_text(&exchange.headers, header).map(str::to_owned);
            }
            parsed
        }
        Err(problem) => {
            let mut failure = ModelFailure::new(
                FailureBecause::ProviderUnavailable,
                &endpoint.name,
                Some(exchange.status),
                format!(
                    "{} answered HTTP {} with a body this runtime cannot read: {problem}",
                    endpoint.name, exchange.status
                ),
            );
            failure.cost_usd = cost_usd;
            return Err(failure);
        }
    };
    let finish_reason = parsed.finish_reason.unwrap_or(FinishReason::Other);
    let unusable = if parsed.refused || finish_reason == FinishReason::ContentFilter {
        Some((
            FailureBecause::ContentRefused,
            "the model refused the content under its policy",
        ))
    } else if finish_reason == FinishReason::Length
        && matches!(request.output, OutputContract::Json { .. })
    {
        Some((
            FailureBecause::OutputInvalid,
            "the JSON answer was cut off at max_output_tokens",
        ))
    } else {
        None
    };
    if let Some((because, what)) = unusable {
        let mut failure = ModelFailure::new(
            because,
            &endpoint.name,
            Some(exchange.status),
            format!("{}: {what}", endpoint.name),
        );
        failure.usage = Some(parsed.usage);
        failure.finish_reason = Some(finish_reason);
        failure.raw_finish_reason = parsed.raw_finish_reason;
        failure.cost_usd = cost_usd;
        return Err(failure);
    }
    let mut warnings = prepared.warnings.clone();
    warnings.extend(parsed.warnings);
    warnings.truncate(WARNINGS_MAX);
    Ok(ModelAnswer {
        text: parsed.text,
        tool_calls: parsed.tool_calls,
        finish_reason,
        raw_finish_reason: parsed.raw_finish_reason,
        usage: parsed.usage,
        response_id: parsed.response_id,
        resolved_model: resolved.to_string(),
        answered_model: parsed.answered_model,
        warnings,
        cost_usd,
        request_bytes: request_bytes as u64,
        response_bytes: exchange.body.len() as u64,
        duration_ms: 0,
    })
}

fn cost(endpoint: &Endpoint, headers: &HeaderMap) -> Option<f64> {
    let header = endpoint.gateway.as_ref()?.cost_header.as_deref()?;
    headers
        .get(header)?
        .to_str()
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|cost| cost.is_finite() && *cost >= 0.0)
}

/// The failure an HTTP error status means, and whether it may be retried: the providers'
/// statuses and error bodies in one table of arms, which is why it is long.
fn classify(endpoint: &Endpoint, exchange: &Exchange) -> (ModelFailure, bool) {
    use FailureBecause as B;
    let status = exchange.status;
    let body: Value = serde_json::from_slice(&exchange.body).unwrap_or(Value::Null);
    let (message, codes) = wire::error_fields(
        endpoint.protocol,
        &body,
        header_text(&exchange.headers, "x-amzn-errortype"),
    );
    let message = message.as_deref();
    let has_code = |wanted: &[&str]| codes.iter().any(|code| wanted.contains(&code.as_str()));
    let (because, meaning, retryable, quote) = match status {
        _ if has_code(CREDENTIAL_CODES) => (
            B::CredentialsRejected,
            "the provider rejects the credentials",
            false,
            false,
        ),
        _ if has_code(RATE_CODES) => (
            B::RateLimited,
            "the provider limits the rate of requests",
            true,
            false,
        ),
        // Azure OpenAI's content filter rejects a prompt with HTTP 400 and this code.
        400 if has_code(&["content_filter"]) => (
            B::ContentRefused,
            "the provider's content filter refused the prompt",
            false,
            true,
        ),
        401 | 403 => (
            B::CredentialsRejected,
            "the provider rejects the credentials",
            false,
            false,
        ),
        408 => (
            B::TimedOut,
            "the provider did not respond in time",
            true,
            false,
        ),
        409 => (
            B::ProviderUnavailable,
            "the provider cannot serve the request now",
            true,
            true,
        ),
        413 => (B::RequestTooLong, "the request is too long", false, false),
        429 => (
            B::RateLimited,
            "the provider limits the rate of requests",
            true,
            false,
        ),
        _ if too_long(&codes, message) => {
            (B::RequestTooLong, "the request is too long", false, true)
        }
        400 | 422 => (
            B::DefinitionInvalid,
            "the provider rejects the model, the schema or a setting",
            false,
            true,
        ),
        404 => (
            B::DefinitionInvalid,
            "the provider does not offer the model",
            false,
            true,
        ),
        500..=599 => (
            B::ProviderUnavailable,
            "the provider cannot serve now",
            true,
            false,
        ),
        _ => (
            B::ProviderUnavailable,
            "the provider cannot serve the request",
            false,
            false,
        ),
    };
    let mut detail = format!("{} answered HTTP {status}: {meaning}", endpoint.name);
    // Provider messages about the request are safe to quote; those about credentials may echo
    // part of a key, and are never quoted.
    if quote && let Some(message) = message {
        let words: String = message.chars().take(PROVIDER_WORDS_CHARS_MAX).collect();
        detail.push_str(&format!(" ({words})"));
    }
    let mut failure = ModelFailure::new(because, &endpoint.name, Some(status), detail);
    failure.retry_after_ms = retry_after_ms(&exchange.headers);
    if let Some(seconds) = failure.retry_after_ms.filter(|_| because == B::RateLimited) {
        failure
            .detail
            .push_str(&format!("; it asks to wait {} s", seconds.div_ceil(1000)));
    }
    let retryable = match header_text(&exchange.headers, "x-should-retry") {
        Some("true") => true,
        Some("false") => false,
        _ => retryable,
    };
    (failure, retryable)
}

/// Error codes that say the credentials are wrong, whatever the status: Bedrock answers an
/// expired or unknown key with 400 or 403 and one of these.
const CREDENTIAL_CODES: &[&str] = &[
    "AccessDeniedException",
    "UnrecognizedClientException",
    "InvalidSignatureException",
    "ExpiredTokenException",
    "IncompleteSignature",
    "MissingAuthenticationTokenException",
];

/// Error codes that say the rate is limited, whatever the status.
const RATE_CODES: &[&str] = &["ThrottlingException"];

/// "HTTP 413, or the error code or type context_length_exceeded or request_too_large", and
/// the providers' words for the same on a 400.
fn too_long(codes: &[String], message: Option<&str>) -> bool {
    if codes.iter().any(|code| {
        matches!(
            code.as_str(),
            "context_length_exceeded" | "request_too_large"
        )
    }) {
        return true;
    }
    let message = message.unwrap_or_default().to_ascii_lowercase();
    message.contains("prompt is too long")
        || (message.contains("input token count") && message.contains("exceeds"))
        // Bedrock's ValidationException for every model it serves.
        || message.contains("input is too long")
        || message.contains("too many input tokens")
}

fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name)?.to_str().ok().map(str::trim)
}

/// `retry-after-ms`, else `retry-after` in seconds or as an HTTP date.
fn retry_after_ms(headers: &HeaderMap) -> Option<u64> {
    if let Some(ms) =
        header_text(headers, "retry-after-ms").and_then(|text| text.parse::<f64>().ok())
    {
        return (ms.is_finite() && ms >= 0.0).then_some(ms.ceil() as u64);
    }
    let text = header_text(headers, "retry-after")?;
    if let Ok(seconds) = text.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then_some((seconds * 1000.0).ceil() as u64);
    }
    let when = chrono::DateTime::parse_from_rfc2822(text).ok()?;
    let wait = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(wait.num_milliseconds().max(0) as u64)
}

fn cancelled(endpoint: &Endpoint) -> ModelFailure {
    ModelFailure::new(
        FailureBecause::Cancelled,
        &endpoint.name,
        None,
        format!("the call to {} was cancelled", endpoint.name),
    )
}

fn timed_out(endpoint: &Endpoint, bound: Duration) -> ModelFailure {
    ModelFailure::new(
        FailureBecause::TimedOut,
        &endpoint.name,
        None,
        format!(
            "{} did not answer within the model call's limit of {} ms",
            endpoint.name,
            bound.as_millis()
        ),
    )
}

/// "A rejection for an untrusted certificate says that the operator must act", naming no
/// setting.
fn untrusted(endpoint: &Endpoint, what: &str) -> ModelFailure {
    let mut failure = ModelFailure::new(
        FailureBecause::ProviderUnavailable,
        &endpoint.name,
        None,
        format!(
            "{} cannot be used: its TLS certificate is not trusted ({what}), so nothing was sent; the operator must act before the model can be called",
            endpoint.name
        ),
    );
    failure.certificate_untrusted = true;
    failure
}

fn not_reached(endpoint: &Endpoint, what: &str) -> ModelFailure {
    ModelFailure::new(
        FailureBecause::ProviderUnavailable,
        &endpoint.name,
        None,
        format!("{} cannot be reached: {what}", endpoint.name),
    )
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}
