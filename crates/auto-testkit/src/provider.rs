//! [`ProviderDouble`]: one scripted provider server on loopback, speaking one wire protocol.
//!
//! The test pushes [`Reply`] values onto the double's queue; each request it receives takes the
//! next one. A request that finds the queue empty is answered 500 with a body saying so, which
//! makes a missing script line fail loudly instead of hanging, unless the test gave the double a
//! reply to answer whenever the queue is empty ([`ProviderDouble::answer_always`]), as a load
//! test does.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};

/// The wire protocol a double speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// Anthropic Messages: `POST /v1/messages`.
    Anthropic,
    /// OpenAI Chat Completions, and every OpenAI-compatible gateway: `POST /v1/chat/completions`.
    OpenAiChat,
    /// Google Gemini: `POST /v1beta/models/{model}:generateContent`.
    Gemini,
    /// Azure OpenAI: `POST /openai/v1/chat/completions` (the v1 API, model in the body), or
    /// `POST /openai/deployments/{deployment}/chat/completions?api-version=...`; the key in
    /// `api-key`; errors as `{"error": {"code", "message"}}`.
    Azure,
    /// Gemini on Vertex AI:
    /// `POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent`.
    VertexGemini,
    /// Claude on Vertex AI:
    /// `POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict`;
    /// answers and errors in Anthropic's shape, but 401 and 403 in Google's, from Vertex AI's
    /// front end.
    VertexAnthropic,
    /// Amazon Bedrock Converse: `POST /model/{modelId}/converse`; every response carries
    /// `x-amzn-requestid`, errors are `{"message"}` with the error's name in `x-amzn-errortype`.
    Bedrock,
}

impl ProviderKind {
    /// Whether a request's path is one the provider serves; a request elsewhere is answered 404
    /// in the provider's error shape without taking a scripted reply.
    fn serves(self, path: &str) -> bool {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        match self {
            ProviderKind::Anthropic | ProviderKind::OpenAiChat | ProviderKind::Gemini => true,
            ProviderKind::Azure => {
                (path == "/openai/v1/chat/completions" && query.is_empty())
                    || (path.starts_with("/openai/deployments/")
                        && path.ends_with("/chat/completions")
                        && query.starts_with("api-version="))
            }
            ProviderKind::VertexGemini => {
                vertex_model(path, "google", ":generateContent").is_some()
            }
            ProviderKind::VertexAnthropic => {
                vertex_model(path, "anthropic", ":rawPredict").is_some()
            }
            ProviderKind::Bedrock => bedrock_model(path).is_some(),
        }
    }
}

/// The model of `/v1/projects/{p}/locations/{l}/publishers/{publisher}/models/{model}{verb}`.
fn vertex_model<'a>(path: &'a str, publisher: &str, verb: &str) -> Option<&'a str> {
    let rest = path.strip_prefix("/v1/projects/")?;
    let (project, rest) = rest.split_once("/locations/")?;
    let (location, rest) = rest.split_once("/publishers/")?;
    let rest = rest.strip_prefix(publisher)?.strip_prefix("/models/")?;
    let model = rest.strip_suffix(verb)?;
    let plain = |part: &str| !part.is_empty() && !part.contains('/');
    (plain(project) && plain(location) && plain(model)).then_some(model)
}

/// The model id of `/model/{modelId}/converse`, percent-decoded.
fn bedrock_model(path: &str) -> Option<String> {
    let encoded = path.strip_prefix("/model/")?.strip_suffix("/converse")?;
    if encoded.is_empty() || encoded.contains('/') {
        return None;
    }
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' && index + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[index + 1..index + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// One tool call a scripted answer asks for.
#[derive(Debug, Clone)]
pub struct ScriptedToolCall {
    pub call_id: String,
    pub name: String,
    pub arguments: Value,
}

/// What the double answers to one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A successful text answer that ends normally, with small token counts.
    Text(String),
    /// A successful answer whose text is this JSON value.
    Json(Value),
    /// A successful answer that asks for these tool calls.
    ToolCalls(Vec<ScriptedToolCall>),
    /// An error in the provider's own error shape, with extra response headers such as
    /// `retry-after`.
    Error {
        status: u16,
        headers: Vec<(String, String)>,
        error_type: String,
        message: String,
    },
    /// Exactly this status, headers and JSON body: for usage, finish reasons and anything the
    /// helpers above do not shape.
    Http {
        status: u16,
        headers: Vec<(String, String)>,
        body: Value,
    },
    /// The inner reply, after a delay.
    Delayed(Duration, Box<Reply>),
    /// No answer at all until the double is dropped.
    Hang,
    /// Status 200 and the start of a body, then the connection is cut.
    Cut,
    /// A conversation of one round of tools, whatever order runs arrive in: these tool calls
    /// to a request that offers tools and carries no tool result yet, `then` to any other.
    UntilToolResults {
        calls: Vec<ScriptedToolCall>,
        then: Box<Reply>,
    },
}

impl Reply {
    /// An error reply with the provider's error shape and no extra headers.
    pub fn error(status: u16, error_type: &str, message: &str) -> Reply {
        Reply::Error {
            status,
            headers: Vec::new(),
            error_type: error_type.to_owned(),
            message: message.to_owned(),
        }
    }

    /// The same reply with one more response header (for [`Reply::Error`] and [`Reply::Http`]).
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        match &mut self {
            Reply::Error { headers, .. } | Reply::Http { headers, .. } => {
                headers.push((name.to_owned(), value.to_owned()));
            }
            Reply::Delayed(_, inner) => {
                let taken = std::mem::replace(inner.as_mut(), Reply::Hang);
                **inner = taken.with_header(name, value);
            }
            _ => {}
        }
        self
    }

    /// A 200 reply with exactly this body.
    pub fn body(body: Value) -> Reply {
        Reply::Http {
            status: 200,
            headers: Vec::new(),
            body,
        }
    }
}

/// One request the double received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    /// The path and query, such as `/v1/messages`.
    pub path: String,
    /// Header names in lowercase, values as sent.
    pub headers: Vec<(String, String)>,
    /// The body as JSON; `Value::Null` when it was not JSON.
    pub body: Value,
}

impl RecordedRequest {
    /// The value of a header, by its lowercase name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header_name, _)| header_name == name)
            .map(|(_, value)| value.as_str())
    }
}

/// The replies still to give, then the one given whenever none is left.
#[derive(Default)]
struct Script {
    queue: VecDeque<Reply>,
    always: Option<Reply>,
}

impl Script {
    fn extend(&mut self, replies: impl IntoIterator<Item = Reply>) {
        self.queue.extend(replies);
    }

    fn pop_front(&mut self) -> Option<Reply> {
        self.queue.pop_front().or_else(|| self.always.clone())
    }
}

struct Shared {
    kind: ProviderKind,
    script: Mutex<Script>,
    requests: Mutex<Vec<RecordedRequest>>,
    request_arrived: Notify,
    closed: watch::Receiver<bool>,
    /// Over TLS, the connections whose handshake began.
    handshakes: std::sync::atomic::AtomicUsize,
}

/// A scripted provider server on `127.0.0.1`. Dropping it stops the server and releases every
/// request still held by [`Reply::Hang`].
pub struct ProviderDouble {
    base_url: String,
    shared: Arc<Shared>,
    close: watch::Sender<bool>,
}

impl std::fmt::Debug for ProviderDouble {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ProviderDouble")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl ProviderDouble {
    /// Starts a double on an ephemeral loopback port.
    ///
    /// # Panics
    /// When no loopback port can be bound: a test cannot go on without its double.
    pub async fn start(kind: ProviderKind) -> ProviderDouble {
        Self::start_serving(kind, false).await
    }

    /// The same double over TLS, at `https://127.0.0.1:PORT`, with a certificate signed by an
    /// authority made for it that no client trusts: a provider whose certificate is not
    /// trusted. It records no request, since none gets past the handshake.
    pub async fn start_tls(kind: ProviderKind) -> ProviderDouble {
        Self::start_serving(kind, true).await
    }

    async fn start_serving(kind: ProviderKind, tls: bool) -> ProviderDouble {
        let (close, closed) = watch::channel(false);
        let shared = Arc::new(Shared {
            kind,
            script: Mutex::new(Script::default()),
            requests: Mutex::new(Vec::new()),
            request_arrived: Notify::new(),
            closed,
            handshakes: std::sync::atomic::AtomicUsize::new(0),
        });
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .expect("a loopback port for the provider double");
        let address = listener.local_addr().expect("the double's bound address");
        let app = Router::new().fallback(answer).with_state(shared.clone());
        let mut stop = close.subscribe();
        if tls {
            let (config, _authority) = crate::mcp::tls_config();
            let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
            let counted = shared.clone();
            tokio::spawn(async move {
                loop {
                    let accepted = tokio::select! {
                        accepted = listener.accept() => accepted,
                        _ = stop.wait_for(|closed| *closed) => return,
                    };
                    let Ok((tcp, _)) = accepted else { return };
                    counted
                        .handshakes
                        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let (acceptor, app) = (acceptor.clone(), app.clone());
                    tokio::spawn(async move {
                        // A client that refuses the certificate ends its handshake here.
                        let Ok(stream) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let service = hyper_util::service::TowerToHyperService::new(app);
                        let _ = hyper_util::server::conn::auto::Builder::new(
                            hyper_util::rt::TokioExecutor::new(),
                        )
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                    });
                }
            });
        } else {
            tokio::spawn(async move {
                let shutdown = async move {
                    let _ = stop.wait_for(|closed| *closed).await;
                };
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(shutdown)
                    .await;
            });
        }
        let scheme = if tls { "https" } else { "http" };
        let root = format!("{scheme}://{address}");
        let base_url = match kind {
            ProviderKind::Anthropic => root,
            ProviderKind::OpenAiChat => format!("{root}/v1"),
            ProviderKind::Gemini => format!("{root}/v1beta"),
            ProviderKind::Azure
            | ProviderKind::VertexGemini
            | ProviderKind::VertexAnthropic
            | ProviderKind::Bedrock => root,
        };
        ProviderDouble {
            base_url,
            shared,
            close,
        }
    }

    /// The URL to configure as the provider's `base_url`: the root for Anthropic, `/v1` for
    /// OpenAI and gateways, `/v1beta` for Gemini, as each provider's own base URL is written; the
    /// root for Azure (its resource's URL), Vertex AI and Bedrock.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Appends replies to the script; requests take them in order.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        lock(&self.shared.script).extend(replies);
    }

    /// Answers `reply` to every request once the script is used up, so the double never runs
    /// out: for load tests, which send more requests than anyone would script. The requests are
    /// still recorded.
    pub fn answer_always(&self, reply: Reply) {
        lock(&self.shared.script).always = Some(reply);
    }

    /// Over TLS, how many connections began a handshake: each attempt a client makes.
    pub fn handshakes(&self) -> usize {
        self.shared
            .handshakes
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Waits until at least `count` requests have arrived, or `timeout` passes; returns the
    /// requests received either way.
    pub async fn wait_for_requests(&self, count: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let arrived = self.shared.request_arrived.notified();
            let requests = self.requests();
            if requests.len() >= count {
                return requests;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return self.requests();
            }
        }
    }
}

impl Drop for ProviderDouble {
    fn drop(&mut self) {
        let _ = self.close.send(true);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A test that panicked while holding the lock has already failed; its data is still usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

async fn answer(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let recorded = RecordedRequest {
        method: method.to_string(),
        path: uri
            .path_and_query()
            .map_or_else(|| uri.path().to_owned(), ToString::to_string),
        headers: headers
            .iter()
            .map(|(name, value)| {
                let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
                (name.as_str().to_owned(), value)
            })
            .collect(),
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let model = requested_model(shared.kind, &recorded);
    let served = shared.kind.serves(&recorded.path);
    let refusal = served
        .then(|| schema_refusal(shared.kind, &recorded.body))
        .flatten();
    let carries_results = carries_tool_results(&recorded.body);
    let offers_tools = recorded.body["tools"]
        .as_array()
        .is_some_and(|tools| !tools.is_empty());
    let number = {
        let mut requests = lock(&shared.requests);
        requests.push(recorded);
        requests.len()
    };
    shared.request_arrived.notify_waiters();
    let extra = kind_headers(shared.kind, number);
    if !served {
        let body = error_body(
            shared.kind,
            404,
            "NotFound",
            "the double serves no such path",
        );
        return json_response(404, &extra, &body);
    }
    if let Some((error_type, body)) = refusal {
        // The provider refuses the schema before any model sees the request: no scripted
        // reply is taken.
        let mut headers = extra;
        if shared.kind == ProviderKind::Bedrock {
            headers.push((
                "x-amzn-errortype".to_owned(),
                format!("{error_type}:http://internal.amazon.com/coral/com.amazon.bedrock/"),
            ));
        }
        return json_response(400, &headers, &body);
    }
    let reply = match lock(&shared.script).pop_front() {
        Some(Reply::UntilToolResults { then, .. }) if carries_results || !offers_tools => {
            Some(*then)
        }
        Some(Reply::UntilToolResults { calls, .. }) => Some(Reply::ToolCalls(calls)),
        other => other,
    };
    match reply {
        Some(reply) => render(&shared, reply, &model, &extra).await,
        None => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "the provider double's script has no reply left for this request",
        )
            .into_response(),
    }
}

/// Whether a request carries the results of tool calls, in any of the protocols' shapes:
/// Anthropic's `tool_result` blocks, a `tool` role (chat completions), Responses'
/// `function_call_output`, Gemini's `functionResponse`, Bedrock's `toolResult`.
fn carries_tool_results(body: &Value) -> bool {
    let text = body.to_string();
    [
        "\"tool_result\"",
        "\"role\":\"tool\"",
        "\"function_call_output\"",
        "\"functionResponse\"",
        "\"toolResult\"",
    ]
    .iter()
    .any(|marker| text.contains(marker))
}

/// Headers the provider puts on every response: Bedrock's request id.
fn kind_headers(kind: ProviderKind, number: usize) -> Vec<(String, String)> {
    match kind {
        ProviderKind::Bedrock => vec![(
            "x-amzn-requestid".to_owned(),
            format!("double-request-{number}"),
        )],
        _ => Vec::new(),
    }
}

fn requested_model(kind: ProviderKind, request: &RecordedRequest) -> String {
    let path = request.path.split('?').next().unwrap_or_default();
    match kind {
        ProviderKind::VertexGemini => vertex_model(path, "google", ":generateContent")
            .unwrap_or_default()
            .to_owned(),
        ProviderKind::VertexAnthropic => vertex_model(path, "anthropic", ":rawPredict")
            .unwrap_or_default()
            .to_owned(),
        ProviderKind::Bedrock => bedrock_model(path).unwrap_or_default(),
        ProviderKind::Azure if path.starts_with("/openai/deployments/") => path
            .trim_start_matches("/openai/deployments/")
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned(),
        ProviderKind::Gemini => request
            .path
            .split("/models/")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .unwrap_or_default()
            .to_owned(),
        _ => request.body["model"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    }
}

async fn render(
    shared: &Shared,
    reply: Reply,
    model: &str,
    extra: &[(String, String)],
) -> Response {
    let mut reply = reply;
    let with_extra = |headers: &[(String, String)]| {
        let mut all = extra.to_vec();
        all.extend(headers.iter().cloned());
        all
    };
    loop {
        match reply {
            Reply::Delayed(delay, inner) => {
                tokio::time::sleep(delay).await;
                reply = *inner;
            }
            Reply::Hang => {
                let mut closed = shared.closed.clone();
                let _ = closed.wait_for(|closed| *closed).await;
                return StatusCode::SERVICE_UNAVAILABLE.into_response();
            }
            Reply::Cut => return cut_response(),
            // Chosen by the request in `answer`; met here only inside another reply.
            Reply::UntilToolResults { calls, .. } => reply = Reply::ToolCalls(calls),
            Reply::Http {
                status,
                headers,
                body,
            } => return json_response(status, &with_extra(&headers), &body),
            Reply::Error {
                status,
                headers,
                error_type,
                message,
            } => {
                let body = error_body(shared.kind, status, &error_type, &message);
                let mut headers = with_extra(&headers);
                if shared.kind == ProviderKind::Bedrock {
                    headers.push((
                        "x-amzn-errortype".to_owned(),
                        format!(
                            "{error_type}:http://internal.amazon.com/coral/com.amazon.bedrock/"
                        ),
                    ));
                }
                return json_response(status, &headers, &body);
            }
            Reply::Text(text) => {
                let body = text_body(shared.kind, model, &text);
                return json_response(200, extra, &body);
            }
            Reply::Json(value) => {
                let body = text_body(shared.kind, model, &value.to_string());
                return json_response(200, extra, &body);
            }
            Reply::ToolCalls(calls) => {
                let body = tool_calls_body(shared.kind, model, &calls);
                return json_response(200, extra, &body);
            }
        }
    }
}

fn json_response(status: u16, headers: &[(String, String)], body: &Value) -> Response {
    let mut builder = Response::builder()
        .status(status)
        .header("content-type", "application/json");
    for (name, value) in headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    builder
        .body(Body::from(body.to_string()))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

fn cut_response() -> Response {
    let chunks = futures::stream::iter([
        Ok(Bytes::from_static(b"{\"id\":")),
        Err(std::io::Error::other("the double cuts the connection")),
    ]);
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .header("content-length", "4096")
        .body(Body::from_stream(chunks))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

fn error_body(kind: ProviderKind, status: u16, error_type: &str, message: &str) -> Value {
    match kind {
        // Vertex AI's front end answers a bad token itself, in Google's shape.
        ProviderKind::VertexAnthropic if matches!(status, 401 | 403) => json!({
            "error": { "code": status, "message": message, "status": error_type },
        }),
        ProviderKind::Anthropic | ProviderKind::VertexAnthropic => json!({
            "type": "error",
            "error": { "type": error_type, "message": message },
        }),
        ProviderKind::OpenAiChat => json!({
            "error": { "message": message, "type": error_type, "param": null, "code": error_type },
        }),
        ProviderKind::Gemini | ProviderKind::VertexGemini => json!({
            "error": { "code": status, "message": message, "status": error_type },
        }),
        ProviderKind::Azure => json!({
            "error": { "code": error_type, "message": message },
        }),
        ProviderKind::Bedrock => json!({ "message": message }),
    }
}

fn text_body(kind: ProviderKind, model: &str, text: &str) -> Value {
    match kind {
        ProviderKind::Anthropic | ProviderKind::VertexAnthropic => json!({
            "id": "msg_double_1",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{ "type": "text", "text": text }],
            "stop_reason": "end_turn",
            "stop_sequence": null,
            "usage": {
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }),
        ProviderKind::OpenAiChat | ProviderKind::Azure => json!({
            "id": "chatcmpl-double-1",
            "object": "chat.completion",
            "created": 1_780_000_000,
            "model": model,
            "choices": [{
                "index": 0,
                "message": { "role": "assistant", "content": text, "refusal": null },
                "finish_reason": "stop",
            }],
            "usage": {
                "prompt_tokens": 10,
                "completion_tokens": 5,
                "total_tokens": 15,
                "prompt_tokens_details": { "cached_tokens": 0 },
                "completion_tokens_details": { "reasoning_tokens": 0 },
            },
        }),
        ProviderKind::Gemini | ProviderKind::VertexGemini => json!({
            "candidates": [{
                "content": { "role": "model", "parts": [{ "text": text }] },
                "finishReason": "STOP",
                "index": 0,
            }],
            "usageMetadata": { "promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15 },
            "modelVersion": model,
            "responseId": "double-response-1",
        }),
        ProviderKind::Bedrock => json!({
            "output": { "message": { "role": "assistant", "content": [{ "text": text }] } },
            "stopReason": "end_turn",
            "usage": { "inputTokens": 10, "outputTokens": 5, "totalTokens": 15 },
            "metrics": { "latencyMs": 120 },
        }),
    }
}

fn tool_calls_body(kind: ProviderKind, model: &str, calls: &[ScriptedToolCall]) -> Value {
    match kind {
        ProviderKind::Anthropic | ProviderKind::VertexAnthropic => {
            let content: Vec<Value> = calls
                .iter()
                .map(|call| {
                    json!({ "type": "tool_use", "id": call.call_id, "name": call.name, "input": call.arguments })
                })
                .collect();
            let mut body = text_body(kind, model, "");
            body["content"] = Value::Array(content);
            body["stop_reason"] = json!("tool_use");
            body
        }
        ProviderKind::OpenAiChat | ProviderKind::Azure => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.call_id,
                        "type": "function",
                        "function": { "name": call.name, "arguments": call.arguments.to_string() },
                    })
                })
                .collect();
            let mut body = text_body(kind, model, "");
            body["choices"][0]["message"] =
                json!({ "role": "assistant", "content": null, "tool_calls": tool_calls });
            body["choices"][0]["finish_reason"] = json!("tool_calls");
            body
        }
        ProviderKind::Bedrock => {
            let content: Vec<Value> = calls
                .iter()
                .map(|call| {
                    json!({ "toolUse": { "toolUseId": call.call_id, "name": call.name, "input": call.arguments } })
                })
                .collect();
            let mut body = text_body(kind, model, "");
            body["output"]["message"]["content"] = Value::Array(content);
            body["stopReason"] = json!("tool_use");
            body
        }
        ProviderKind::Gemini | ProviderKind::VertexGemini => {
            let parts: Vec<Value> = calls
                .iter()
                .map(|call| {
                    json!({ "functionCall": { "id": call.call_id, "name": call.name, "args": call.arguments } })
                })
                .collect();
            let mut body = text_body(kind, model, "");
            body["candidates"][0]["content"]["parts"] = Value::Array(parts);
            body
        }
    }
}

/// The output schema a request sends, where the provider reads it: Anthropic's
/// `output_config.format.schema`, Bedrock's `outputConfig.textFormat` (a JSON string), and
/// OpenAI's and Azure's strict `response_format.json_schema` with its name.
fn sent_schema(kind: ProviderKind, body: &Value) -> Option<(Value, String)> {
    match kind {
        ProviderKind::Anthropic | ProviderKind::VertexAnthropic => body
            .pointer("/output_config/format/schema")
            .map(|schema| (schema.clone(), String::new())),
        ProviderKind::Bedrock => body
            .pointer("/outputConfig/textFormat/structure/jsonSchema/schema")
            .and_then(Value::as_str)
            .and_then(|text| serde_json::from_str(text).ok())
            .map(|schema| (schema, String::new())),
        ProviderKind::OpenAiChat | ProviderKind::Azure => {
            let format = body.pointer("/response_format/json_schema")?;
            (format["strict"] == json!(true)).then(|| {
                let name = format["name"].as_str().unwrap_or_default().to_owned();
                (format["schema"].clone(), name)
            })
        }
        ProviderKind::Gemini | ProviderKind::VertexGemini => None,
    }
}

/// A refusal of the request's output schema as the real API gives it: the error's type and
/// the whole body. Anthropic (directly and on Vertex AI) and Bedrock refuse numeric, length
/// and count bounds (a `minItems` of 0 or 1 aside) and `oneOf`; OpenAI's and Azure's strict
/// structured outputs refuse a root that is not an object, an object without
/// `"additionalProperties": false`, and a property missing from `required`.
fn schema_refusal(kind: ProviderKind, body: &Value) -> Option<(String, Value)> {
    let (schema, name) = sent_schema(kind, body)?;
    match kind {
        ProviderKind::Anthropic | ProviderKind::VertexAnthropic => {
            let message = format!(
                "output_config.format.schema: {}",
                anthropic_fault(&schema, &mut Vec::new())?
            );
            Some((
                "invalid_request_error".to_owned(),
                json!({ "type": "error", "error": { "type": "invalid_request_error", "message": message } }),
            ))
        }
        ProviderKind::Bedrock => {
            let message = format!(
                "The model returned the following errors: output_config.format.schema: {}",
                anthropic_fault(&schema, &mut Vec::new())?
            );
            Some((
                "ValidationException".to_owned(),
                json!({ "message": message }),
            ))
        }
        ProviderKind::OpenAiChat | ProviderKind::Azure => {
            let fault = strict_fault(&schema, &mut Vec::new(), true)?;
            let message = format!("Invalid schema for response_format '{name}': {fault}");
            Some((
                "invalid_request_error".to_owned(),
                json!({ "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "param": "response_format",
                    "code": null,
                } }),
            ))
        }
        ProviderKind::Gemini | ProviderKind::VertexGemini => None,
    }
}

/// Keywords whose value is an object of named subschemas, one subschema, or a list of them.
const NAMED_SCHEMAS: &[&str] = &["properties", "$defs", "definitions"];
const ONE_SCHEMA: &[&str] = &["additionalProperties", "not", "items"];
const SCHEMA_LISTS: &[&str] = &["anyOf", "allOf", "oneOf", "prefixItems"];

/// Each subschema directly under `schema`, with the path segments that lead to it.
fn subschemas(schema: &Value) -> Vec<(Vec<String>, &Value)> {
    let Value::Object(map) = schema else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (keyword, value) in map {
        let keyword = keyword.as_str();
        if NAMED_SCHEMAS.contains(&keyword) {
            for (name, sub) in value.as_object().into_iter().flatten() {
                out.push((vec![keyword.to_owned(), name.clone()], sub));
            }
        } else if ONE_SCHEMA.contains(&keyword) && value.is_object() {
            out.push((vec![keyword.to_owned()], value));
        } else if SCHEMA_LISTS.contains(&keyword) {
            for (index, sub) in value.as_array().into_iter().flatten().enumerate() {
                out.push((vec![keyword.to_owned(), index.to_string()], sub));
            }
        }
    }
    out
}

/// The first part of a schema Anthropic's structured outputs refuse, in its words.
fn anthropic_fault(schema: &Value, path: &mut Vec<String>) -> Option<String> {
    let map = schema.as_object()?;
    let kind = match map.get("type") {
        Some(Value::String(kind)) => kind.clone(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .unwrap_or("null")
            .to_owned(),
        _ => "any".to_owned(),
    };
    for keyword in map.keys() {
        let refused = match keyword.as_str() {
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf"
            | "minLength" | "maxLength" | "maxItems" | "uniqueItems" | "minProperties"
            | "maxProperties" => true,
            "minItems" => map[keyword].as_u64().is_none_or(|n| n > 1),
            _ => false,
        };
        if refused {
            return Some(format!(
                "For '{kind}' type, property '{keyword}' is not supported"
            ));
        }
        if keyword == "oneOf" {
            return Some("'oneOf' is not supported; use 'anyOf' instead".to_owned());
        }
    }
    for (segments, sub) in subschemas(schema) {
        let depth = path.len();
        path.extend(segments);
        let fault = anthropic_fault(sub, path);
        path.truncate(depth);
        if fault.is_some() {
            return fault;
        }
    }
    None
}

/// The first part of a schema OpenAI's strict structured outputs refuse, in its words.
fn strict_fault(schema: &Value, path: &mut Vec<String>, root: bool) -> Option<String> {
    let map = schema.as_object()?;
    let context = format!(
        "In context=({})",
        match path.len() {
            0 => String::new(),
            1 => format!("'{}',", path[0]),
            _ => path
                .iter()
                .map(|segment| format!("'{segment}'"))
                .collect::<Vec<_>>()
                .join(", "),
        }
    );
    if root && map.get("type") != Some(&json!("object")) {
        let got = map.get("type").map_or("None".to_owned(), Value::to_string);
        return Some(format!(
            "schema must be a JSON Schema of 'type: \"object\"', got 'type: {got}'."
        ));
    }
    let is_object = match map.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        _ => map.contains_key("properties"),
    };
    if is_object {
        if map.get("additionalProperties") != Some(&json!(false)) {
            return Some(format!(
                "{context}, 'additionalProperties' is required to be supplied and to be false."
            ));
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let missing = map
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|properties| properties.keys())
            .find(|name| !required.contains(&name.as_str()));
        if let Some(missing) = missing {
            return Some(format!(
                "{context}, 'required' is required to be supplied and to be an array including every key in properties. Missing '{missing}'."
            ));
        }
    }
    for (segments, sub) in subschemas(schema) {
        let depth = path.len();
        path.extend(segments);
        let fault = strict_fault(sub, path, false);
        path.truncate(depth);
        if fault.is_some() {
            return fault;
        }
    }
    None
}
