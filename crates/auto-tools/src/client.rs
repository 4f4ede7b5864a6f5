//! The MCP client on `rmcp`: opens a configured server (Streamable HTTP, or stdio by the
//! operator's command), lists its tools and calls one, each call bounded by the server's
//! `timeout`, carrying the run id in its `_meta` under `auto.on/run_id`, and cancelled (with
//! `notifications/cancelled`) when the run is.
//!
//! A failure is classified in the page's words: before the model is called, as the `because` of
//! `tool_server_failed` (`unreachable`, `failing`, `rate_limited`, `key_refused`,
//! `scope_lacking`); for a call, as the `because` of `tool_call_failed`.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, JsonObject, RequestMetaObject, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError,
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::config::{INHERITED_ENV_VARS, Secret, ToolServerConfig, Transport};
use crate::limits::{RESULT_BYTES_MAX, RETRY_AFTER_MS_MAX};

/// The key of a call's `_meta` that carries the run id.
pub const RUN_ID_META_KEY: &str = "auto.on/run_id";
/// How often one call waits out a 429 whose `Retry-After` asks for at most 10 seconds before
/// the 429 counts as a server failure.
pub const RATE_LIMIT_WAITS_MAX: u32 = 3;

/// Makes rustls's ring provider the process's default, once: rmcp's reqwest (0.13, built
/// without a provider of its own) builds its TLS client from the default provider and panics
/// without one. Anything in a process that builds such a client (an MCP client of rmcp, say)
/// calls this first; opening a tool server does, and so does starting the server.
pub fn install_tls_provider() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        // Err only when another provider was installed first, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Why a server cannot be used: the `because` of `tool_server_failed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerBecause {
    /// "The server cannot be reached, or does not respond in time."
    Unreachable,
    /// "The server fails, or refuses to list its tools."
    Failing,
    /// "The server asks the run to slow down."
    RateLimited,
    /// "The server did not accept the key the runtime gives it."
    KeyRefused,
    /// "The server asks for a scope its credential lacks."
    ScopeLacking,
}

impl ServerBecause {
    pub fn as_str(self) -> &'static str {
        match self {
            ServerBecause::Unreachable => "unreachable",
            ServerBecause::Failing => "failing",
            ServerBecause::RateLimited => "rate_limited",
            ServerBecause::KeyRefused => "key_refused",
            ServerBecause::ScopeLacking => "scope_lacking",
        }
    }
}

/// A server that could not be opened, listed or called.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerFailure {
    pub because: ServerBecause,
    /// What went wrong, in words for the operator; never a secret of the server.
    pub detail: String,
    /// The wait a 429 asked for.
    pub retry_after_ms: Option<u64>,
    /// The scope a 403 named.
    pub scope: Option<String>,
}

/// One tool as the server lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct ListedTool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// "when the server marks the tool read-only" (`readOnlyHint`).
    pub read_only: bool,
}

/// Why a call did not answer: the `because` of `tool_call_failed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallBecause {
    /// The server refused the call's arguments (JSON-RPC -32602, Invalid params): the model's
    /// mistake, not the server failing.
    ArgumentsRefused,
    ServerFailure,
    TimedOut,
    TooLarge,
    Cancelled,
}

impl CallBecause {
    pub fn as_str(self) -> &'static str {
        match self {
            CallBecause::ArgumentsRefused => "arguments_refused",
            CallBecause::ServerFailure => "server_failure",
            CallBecause::TimedOut => "timed_out",
            CallBecause::TooLarge => "too_large",
            CallBecause::Cancelled => "cancelled",
        }
    }
}

/// What one call came to.
#[derive(Clone, Debug, PartialEq)]
pub enum CallOutcome {
    /// The tool answered: the `CallToolResult` as JSON, which may be marked `isError`.
    Answered {
        result: Value,
        jsonrpc_id: Value,
        duration_ms: u64,
    },
    Failed {
        because: CallBecause,
        message: String,
        jsonrpc_id: Option<Value>,
        duration_ms: u64,
    },
}

/// An open connection to one server.
pub struct Connection {
    pub server: Arc<ToolServerConfig>,
    service: RunningService<RoleClient, ClientConfig>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("server", &self.server.name)
            .finish()
    }
}

/// The W3C trace context of the current span (`traceparent`, and `tracestate` when there is
/// one), as the process's propagator writes it into headers; empty when no trace is being
/// exported. A run's tool connections carry it, and so does the work a run leaves.
pub fn trace_context() -> HashMap<String, String> {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let context = tracing::Span::current().context();
    let mut fields = HashMap::new();
    opentelemetry::global::get_text_map_propagator(|propagator| {
        propagator.inject_context(&context, &mut fields);
    });
    fields
}

/// [`trace_context`] as the headers of a request.
fn trace_headers() -> Vec<(http::HeaderName, http::HeaderValue)> {
    trace_context()
        .into_iter()
        .filter_map(|(name, value): (String, String)| {
            let name = http::HeaderName::from_bytes(name.as_bytes()).ok()?;
            let value = http::HeaderValue::from_str(&value).ok()?;
            Some((name, value))
        })
        .collect()
}

fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("auto", env!("CARGO_PKG_VERSION")),
    )
}

/// Opens the server within its timeout: connects, or starts its command, and initializes.
pub async fn open(server: Arc<ToolServerConfig>) -> Result<Connection, ServerFailure> {
    let bound = server.timeout;
    let opening = async {
        match &server.transport {
            Transport::Http {
                url,
                headers,
                roots,
            } => {
                let mut custom = HashMap::new();
                for (name, secret) in headers {
                    let name = http::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                        failure(ServerBecause::Failing, "a header name is not valid")
                    })?;
                    let value = http::HeaderValue::from_str(&secret.value).map_err(|_| {
                        failure(ServerBecause::Failing, "a header's value is not valid")
                    })?;
                    custom.insert(name, value);
                }
                // The run's trace goes on at the server: its `traceparent` rides on every
                // request of the connection, which the run opens for itself.
                for (name, value) in trace_headers() {
                    custom.entry(name).or_insert(value);
                }
                install_tls_provider();
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom)
                    .max_json_response_size(RESULT_BYTES_MAX);
                let transport = if roots.is_empty() {
                    StreamableHttpClientTransport::from_config(config)
                } else {
                    // As rmcp's own client, without following redirects.
                    let mut builder = reqwest013::Client::builder()
                        .pool_max_idle_per_host(0)
                        .redirect(reqwest013::redirect::Policy::none());
                    for root in roots {
                        let root = reqwest013::Certificate::from_pem(root).map_err(|_| {
                            failure(
                                ServerBecause::Failing,
                                "a certificate of ca_file is not valid",
                            )
                        })?;
                        builder = builder.add_root_certificate(root);
                    }
                    let client = builder.build().map_err(|_| {
                        failure(ServerBecause::Failing, "the TLS client could not be built")
                    })?;
                    StreamableHttpClientTransport::with_client(client, config)
                };
                client_config()
                    .serve(transport)
                    .await
                    .map_err(|e| classify_init(&e))
            }
            Transport::Stdio { command, env } => {
                let mut process = tokio::process::Command::new(&command[0]);
                process.args(&command[1..]);
                set_environment(&mut process, env);
                let (transport, _) = TokioChildProcess::builder(process)
                    .stderr(Stdio::null())
                    .spawn()
                    .map_err(|e| {
                        failure(
                            ServerBecause::Unreachable,
                            &format!("its command cannot be started: {}", e.kind()),
                        )
                    })?;
                client_config()
                    .serve(transport)
                    .await
                    .map_err(|e| classify_init(&e))
            }
        }
    };
    match tokio::time::timeout(bound, opening).await {
        Ok(Ok(service)) => Ok(Connection { server, service }),
        Ok(Err(failure)) => Err(failure),
        Err(_) => Err(failure(
            ServerBecause::Unreachable,
            &format!("it did not answer within {} ms", bound.as_millis()),
        )),
    }
}

/// Gives a command's process only the variables of [`INHERITED_ENV_VARS`] from the server's
/// environment, and the entry's `env`: the server's own secrets (a provider's API key, a
/// database URL) are not the tool server's to read. As the official SDKs, a value that starts
/// with `()` (a shell function exported by bash) is not passed on.
fn set_environment(process: &mut tokio::process::Command, env: &[(String, Secret)]) {
    process.env_clear();
    for name in INHERITED_ENV_VARS {
        if let Some(value) = std::env::var_os(name)
            && !value.as_encoded_bytes().starts_with(b"()")
        {
            process.env(name, value);
        }
    }
    for (name, secret) in env {
        process.env(name, &secret.value);
    }
}

impl Connection {
    /// Every tool the server lists, within its timeout.
    pub async fn list_tools(&self) -> Result<Vec<ListedTool>, ServerFailure> {
        let bound = self.server.timeout;
        let listed = tokio::time::timeout(bound, self.service.list_all_tools()).await;
        let tools = match listed {
            Err(_) => {
                return Err(failure(
                    ServerBecause::Unreachable,
                    &format!("it did not list its tools within {} ms", bound.as_millis()),
                ));
            }
            Ok(Err(error)) => return Err(classify_service(&error)),
            Ok(Ok(tools)) => tools,
        };
        Ok(tools
            .into_iter()
            .map(|tool| ListedTool {
                name: tool.name.to_string(),
                description: tool.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object(tool.input_schema.as_ref().clone()),
                read_only: tool
                    .annotations
                    .and_then(|a| a.read_only_hint)
                    .unwrap_or(false),
            })
            .collect())
    }

    /// Calls one tool once, as a run makes a call: bounded by the server's timeout, a 429 that
    /// asks for at most 10 seconds waited out, the run id in `_meta`.
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        run_id: &str,
        cancel: &CancellationToken,
    ) -> CallOutcome {
        let started = Instant::now();
        let mut waits = 0;
        loop {
            let outcome = self
                .call_once(tool, arguments.clone(), run_id, cancel, started)
                .await;
            match outcome {
                Err((failure, jsonrpc_id))
                    if failure.because == ServerBecause::RateLimited
                        && waits < RATE_LIMIT_WAITS_MAX
                        && failure
                            .retry_after_ms
                            .is_some_and(|ms| ms <= RETRY_AFTER_MS_MAX) =>
                {
                    let _ = jsonrpc_id;
                    waits += 1;
                    let wait = Duration::from_millis(failure.retry_after_ms.unwrap_or(0));
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = cancel.cancelled() => {
                            return failed(CallBecause::Cancelled, "the run was cancelled".into(), None, started);
                        }
                    }
                }
                Err((failure, jsonrpc_id)) => {
                    return failed(
                        CallBecause::ServerFailure,
                        failure.detail,
                        jsonrpc_id,
                        started,
                    );
                }
                Ok(outcome) => return outcome,
            }
        }
    }

    async fn call_once(
        &self,
        tool: &str,
        arguments: JsonObject,
        run_id: &str,
        cancel: &CancellationToken,
        started: Instant,
    ) -> Result<CallOutcome, (ServerFailure, Option<Value>)> {
        let mut meta = RequestMetaObject::new();
        meta.0.0.insert(RUN_ID_META_KEY.to_owned(), json!(run_id));
        let options = PeerRequestOptions::with_timeout(self.server.timeout).with_meta(meta);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(
            CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments),
        ));
        let handle = match self
            .service
            .send_cancellable_request(request, options)
            .await
        {
            Ok(handle) => handle,
            Err(error) => return Err((classify_service(&error), None)),
        };
        let jsonrpc_id = serde_json::to_value(&handle.id).unwrap_or(Value::Null);
        let peer = handle.peer.clone();
        let id = handle.id.clone();
        let response = tokio::select! {
            response = handle.await_response() => response,
            () = cancel.cancelled() => {
                // The server is told the call is cancelled; its answer, if any, is not read.
                let _ = peer
                    .notify_cancelled(rmcp::model::CancelledNotificationParam::new(
                        Some(id),
                        Some("the run was cancelled".into()),
                    ))
                    .await;
                return Ok(failed(CallBecause::Cancelled, "the run was cancelled".into(), Some(jsonrpc_id), started));
            }
        };
        match response {
            Ok(ServerResult::CallToolResult(result)) => Ok(CallOutcome::Answered {
                result: serde_json::to_value(&result).unwrap_or(Value::Null),
                jsonrpc_id,
                duration_ms: elapsed_ms(started),
            }),
            Ok(_) => Err((
                failure(
                    ServerBecause::Failing,
                    "it answered the call with something other than a tool result",
                ),
                Some(jsonrpc_id),
            )),
            Err(ServiceError::Timeout { timeout }) => Ok(failed(
                CallBecause::TimedOut,
                format!("the tool did not answer within {} ms", timeout.as_millis()),
                Some(jsonrpc_id),
                started,
            )),
            Err(ServiceError::McpError(data))
                if data.code == rmcp::model::ErrorCode::INVALID_PARAMS =>
            {
                Ok(failed(
                    CallBecause::ArgumentsRefused,
                    format!("the server refused the arguments: {}", data.message),
                    Some(jsonrpc_id),
                    started,
                ))
            }
            Err(error) if too_large(&error) => Ok(failed(
                CallBecause::TooLarge,
                format!("the result is larger than the {RESULT_BYTES_MAX} bytes the runtime reads"),
                Some(jsonrpc_id),
                started,
            )),
            Err(error) => Err((classify_service(&error), Some(jsonrpc_id))),
        }
    }

    /// Closes the connection, and stops the server's process for stdio.
    pub async fn close(self) {
        let _ = self.service.cancel().await;
    }
}

fn failed(
    because: CallBecause,
    message: String,
    jsonrpc_id: Option<Value>,
    started: Instant,
) -> CallOutcome {
    CallOutcome::Failed {
        because,
        message,
        jsonrpc_id,
        duration_ms: elapsed_ms(started),
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn failure(because: ServerBecause, detail: &str) -> ServerFailure {
    ServerFailure {
        because,
        detail: detail.to_owned(),
        retry_after_ms: None,
        scope: None,
    }
}

type HttpError = StreamableHttpError<reqwest013::Error>;

fn classify_init(error: &rmcp::service::ClientInitializeError) -> ServerFailure {
    use rmcp::service::ClientInitializeError as E;
    match error {
        E::TransportError { error, .. } => classify_source(error.error.as_ref()),
        E::JsonRpcError(data) => failure(
            ServerBecause::Failing,
            &format!("it refused to initialize: {}", data.message),
        ),
        E::ConnectionClosed(_) => failure(
            ServerBecause::Unreachable,
            "it closed the connection while opening",
        ),
        other => failure(
            ServerBecause::Failing,
            &format!("it could not be opened: {other}"),
        ),
    }
}

fn classify_service(error: &ServiceError) -> ServerFailure {
    match error {
        ServiceError::TransportSend(error) => classify_source(error.error.as_ref()),
        ServiceError::McpError(data) => failure(
            ServerBecause::Failing,
            &format!("it answered with an error: {}", data.message),
        ),
        ServiceError::TransportClosed => {
            failure(ServerBecause::Unreachable, "its connection closed")
        }
        ServiceError::Timeout { timeout } => failure(
            ServerBecause::Unreachable,
            &format!("it did not answer within {} ms", timeout.as_millis()),
        ),
        other => failure(ServerBecause::Failing, &other.to_string()),
    }
}

fn too_large(error: &ServiceError) -> bool {
    let ServiceError::TransportSend(error) = error else {
        return false;
    };
    matches!(
        error.error.downcast_ref::<HttpError>(),
        Some(StreamableHttpError::ResponseBodyTooLarge { .. })
    )
}

/// Reads the transport's error, walking its sources, into the page's words.
fn classify_source(error: &(dyn std::error::Error + Send + Sync + 'static)) -> ServerFailure {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = current {
        if let Some(http) = error.downcast_ref::<HttpError>() {
            return classify_http(http);
        }
        if let Some(status) = error.downcast_ref::<HttpStatusError>() {
            return classify_status(status);
        }
        if let Some(auth) = error.downcast_ref::<AuthRequiredError>() {
            let _ = auth;
            return failure(
                ServerBecause::KeyRefused,
                "it answered 401: it did not accept the key",
            );
        }
        if let Some(scope) = error.downcast_ref::<InsufficientScopeError>() {
            return scope_lacking(scope);
        }
        if let Some(reqwest) = error.downcast_ref::<reqwest013::Error>() {
            return classify_reqwest(reqwest);
        }
        if let Some(io) = error.downcast_ref::<std::io::Error>() {
            return failure(
                ServerBecause::Unreachable,
                &format!("it cannot be reached: {}", io.kind()),
            );
        }
        current = error.source();
    }
    failure(ServerBecause::Failing, &error.to_string())
}

fn classify_http(error: &HttpError) -> ServerFailure {
    match error {
        StreamableHttpError::HttpStatus(status) => classify_status(status),
        StreamableHttpError::AuthRequired(_) => failure(
            ServerBecause::KeyRefused,
            "it answered 401: it did not accept the key",
        ),
        StreamableHttpError::InsufficientScope(scope) => scope_lacking(scope),
        StreamableHttpError::Client(reqwest) => classify_reqwest(reqwest),
        // rmcp gives a status it has no variant for (a 401 without a challenge, a 403, a 4xx)
        // only as words, "HTTP 401 Unauthorized: <body>".
        StreamableHttpError::UnexpectedServerResponse(words) if status_in(words).is_some() => {
            let status = status_in(words).unwrap_or_default();
            match status {
                401 | 403 => failure(
                    ServerBecause::KeyRefused,
                    &format!("it answered {status}: it did not accept the key"),
                ),
                429 => classify_status(&HttpStatusError::new(429, None)),
                _ => failure(
                    ServerBecause::Failing,
                    &format!("it answered HTTP {status}"),
                ),
            }
        }
        StreamableHttpError::Io(io) => failure(
            ServerBecause::Unreachable,
            &format!("it cannot be reached: {}", io.kind()),
        ),
        other => failure(
            ServerBecause::Failing,
            &format!("it answered what MCP does not allow: {other}"),
        ),
    }
}

/// The status of rmcp's words "HTTP 401 Unauthorized: ...".
fn status_in(words: &str) -> Option<u16> {
    let rest = words.strip_prefix("HTTP ")?;
    rest.get(..3)?.parse().ok()
}

fn classify_status(status: &HttpStatusError) -> ServerFailure {
    if status.status == 429 {
        return ServerFailure {
            because: ServerBecause::RateLimited,
            detail: "it answered 429: it asks the run to slow down".into(),
            retry_after_ms: status.retry_after.as_deref().and_then(retry_after_ms),
            scope: None,
        };
    }
    failure(
        ServerBecause::Failing,
        &format!("it answered HTTP {}", status.status),
    )
}

fn scope_lacking(error: &InsufficientScopeError) -> ServerFailure {
    let scope = error.required_scope.clone();
    ServerFailure {
        because: ServerBecause::ScopeLacking,
        detail: match &scope {
            Some(scope) => format!("it answered 403: its credential lacks the scope {scope}"),
            None => "it answered 403: its credential lacks a scope".into(),
        },
        retry_after_ms: None,
        scope,
    }
}

fn classify_reqwest(error: &reqwest013::Error) -> ServerFailure {
    if let Some(status) = error.status() {
        let code = status.as_u16();
        return match code {
            401 => failure(
                ServerBecause::KeyRefused,
                "it answered 401: it did not accept the key",
            ),
            403 => failure(
                ServerBecause::KeyRefused,
                "it answered 403: it did not accept the key",
            ),
            _ => failure(ServerBecause::Failing, &format!("it answered HTTP {code}")),
        };
    }
    if error.is_timeout() {
        return failure(ServerBecause::Unreachable, "it did not answer in time");
    }
    if let Some(words) = tls_failure(error) {
        return failure(
            ServerBecause::Unreachable,
            &format!("its TLS certificate or handshake was refused: {words}"),
        );
    }
    if error.is_connect() {
        return failure(ServerBecause::Unreachable, "it cannot be reached");
    }
    failure(ServerBecause::Unreachable, "the request to it failed")
}

/// The TLS failure under a request's error, when there is one (such as a certificate no
/// trusted root or `ca_file` vouches for), in rustls's words.
fn tls_failure(error: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(error);
    while let Some(error) = current {
        if let Some(tls) = error.downcast_ref::<rustls::Error>() {
            return Some(tls.to_string());
        }
        // An I/O error's source skips the error it wraps (itself often an I/O error): follow
        // the wrapped one.
        current = match error.downcast_ref::<std::io::Error>() {
            Some(io) => io
                .get_ref()
                .map(|inner| inner as &(dyn std::error::Error + 'static)),
            None => error.source(),
        };
    }
    None
}

/// `Retry-After` in seconds (whole or decimal); a date or anything else is not read.
pub fn retry_after_ms(text: &str) -> Option<u64> {
    let seconds: f64 = text.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| (seconds * 1000.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_seconds() {
        assert_eq!(retry_after_ms("2"), Some(2_000));
        assert_eq!(retry_after_ms("0.5"), Some(500));
        assert_eq!(retry_after_ms("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }
}
