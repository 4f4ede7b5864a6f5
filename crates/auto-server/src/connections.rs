//! Connections: the accept loop and hyper on each connection, held to the `[http]` limits
//! ([`HttpLimits`]): a connection limit, the time to send a request's head (which also closes
//! an idle connection), the time to send its body, and the size of its target and headers.
//!
//! Every answer is a problem document, also those hyper gives by itself: a request hyper cannot
//! read (bad framing, a head larger than its buffer, more than 100 headers, a target beyond
//! 64 KiB) is answered by hyper with an empty 400, 431 or 414, and hyper has no hook to change
//! it. So each connection's writes pass through [`ProblemAnswers`], which puts a problem document
//! in place of such an answer.
//!
//! **Invariant:** no handler answers 400, 414 or 431 with an empty body: `http::observe` makes
//! every error a problem document and [`limit_request`] answers its own as one, so an empty
//! answer with one of those statuses is hyper's.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, oneshot};

use crate::config::HttpLimits;
use crate::http::ProblemAnswer;
use crate::problem::{Problem, Reason};

/// How long the loop waits after an error of `accept` that is not the client's (out of file
/// descriptors, say) before it accepts again.
const ACCEPT_PAUSE_MS: u64 = 100;
/// How long a connection past the limit is given to read its 503 before it is closed.
const REFUSAL_MS_MAX: u64 = 1_000;

/// Serves `app` on `listener` until `stopped`, then lets the connections under way finish.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: HttpLimits,
    stopped: oneshot::Receiver<()>,
) -> io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.connections_max));
    let graceful = GracefulShutdown::new();
    let builder = builder(&limits);
    tokio::pin!(stopped);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    pause_after(&error).await;
                    continue;
                }
            },
            _ = &mut stopped => break,
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            tokio::spawn(refuse(stream, limits.connections_max));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            // hyper reads a new connection's first bytes (to tell HTTP/1.1 from HTTP/2) without
            // a timer; its own header timeout starts after them.
            let mut first = [0u8; 1];
            match tokio::time::timeout(limits.header_timeout, stream.peek(&mut first)).await {
                Ok(Ok(n)) if n > 0 => {}
                _ => return,
            }
            let io = TokioIo::new(ProblemAnswers::new(stream, limits));
            let connection = builder.serve_connection(io, service);
            if let Err(error) = watcher.watch(connection).await {
                tracing::debug!(%error, "a connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// HTTP/1.1 with the limits of the head and a timer for them, and HTTP/2 (prior knowledge).
fn builder(limits: &HttpLimits) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(hyper_buffer_bytes(limits));
    builder.http2().timer(TokioTimer::new());
    builder
}

/// hyper's buffer for a request's head: twice `header_bytes_max`, so that [`limit_request`]
/// measures the head exactly at its limit and hyper's own refusal (431) is the backstop.
fn hyper_buffer_bytes(limits: &HttpLimits) -> usize {
    limits.header_bytes_max.saturating_mul(2)
}

/// An error of `accept`: the client's own (it reset the connection before it was taken) is
/// passed over; any other (out of file descriptors) waits a little, as the connections that
/// hold them may close.
async fn pause_after(error: &io::Error) {
    let the_clients = matches!(
        error.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionRefused
    );
    if !the_clients {
        tracing::warn!(%error, "cannot accept a connection");
        tokio::time::sleep(Duration::from_millis(ACCEPT_PAUSE_MS)).await;
    }
}

/// Answers a connection past the limit 503 and closes it.
async fn refuse(mut stream: TcpStream, connections_max: usize) {
    let problem = Problem::new(
        Reason::Unavailable,
        "The server is serving as many connections as it takes",
        format!(
            "The server serves at most {connections_max} connections at once (http.connections_max); try again once one closes."
        ),
    )
    .with_kind("too_many_connections");
    let answer = raw_answer(StatusCode::SERVICE_UNAVAILABLE, &problem);
    let refusal = async {
        stream.write_all(&answer).await?;
        stream.shutdown().await?;
        // What the client sent is read and dropped, so that closing does not reset the
        // connection before the client has read the answer.
        let mut sink = [0u8; 4096];
        while stream.read(&mut sink).await? > 0 {}
        io::Result::Ok(())
    };
    let _ = tokio::time::timeout(Duration::from_millis(REFUSAL_MS_MAX), refusal).await;
}

/// A whole HTTP/1.1 answer carrying `problem`, which closes the connection.
fn raw_answer(status: StatusCode, problem: &Problem) -> Vec<u8> {
    let body = serde_json::to_vec(problem).unwrap_or_default();
    let mut answer = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/problem+json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    answer
}

/// A problem of HTTP itself: reason `invalid_input` with HTTP's status and a kind.
fn protocol_problem(
    status: StatusCode,
    kind: &str,
    title: &str,
    detail: impl Into<String>,
) -> Problem {
    Problem::invalid_input(title, detail)
        .with_kind(kind)
        .with_status(status.as_u16())
}

/// The problem in place of hyper's own empty answer with `status`.
fn problem_for_hypers(status: StatusCode, limits: &HttpLimits) -> Problem {
    match status {
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => headers_too_large(limits),
        StatusCode::URI_TOO_LONG => uri_too_long(limits),
        _ => protocol_problem(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "The request is not valid HTTP",
            "The server cannot read the request: its request line, a header or its framing (Content-Length, Transfer-Encoding) is not valid HTTP/1.1.",
        ),
    }
}

fn headers_too_large(limits: &HttpLimits) -> Problem {
    protocol_problem(
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        "headers_too_large",
        "The request's headers are too large",
        format!(
            "The request line and headers are larger than {} bytes (http.header_bytes_max), or there are more than 100 headers.",
            limits.header_bytes_max
        ),
    )
}

fn uri_too_long(limits: &HttpLimits) -> Problem {
    protocol_problem(
        StatusCode::URI_TOO_LONG,
        "uri_too_long",
        "The request's target is too long",
        format!(
            "The path and query are longer than {} bytes (http.uri_bytes_max).",
            limits.uri_bytes_max
        ),
    )
}

/// Holds each request to the limits hyper does not measure: its target, its head, and the time
/// its body takes, which is read whole here (every route reads a JSON body whole anyway) within
/// `body_timeout` of the head.
pub(crate) async fn limit_request(
    State(limits): State<HttpLimits>,
    request: Request,
    next: Next,
) -> Response {
    let target_bytes = request.uri().to_string().len();
    if target_bytes > limits.uri_bytes_max {
        return ProblemAnswer(uri_too_long(&limits)).into_response();
    }
    if head_bytes(&request, target_bytes) > limits.header_bytes_max {
        return ProblemAnswer(headers_too_large(&limits)).into_response();
    }
    let (parts, body) = request.into_parts();
    let reading = axum::body::to_bytes(body, crate::mcp::MESSAGE_BYTES_MAX);
    let bytes = match tokio::time::timeout(limits.body_timeout, reading).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => return ProblemAnswer(crate::http::too_large()).into_response(),
        Err(_) => {
            let problem = protocol_problem(
                StatusCode::REQUEST_TIMEOUT,
                "body_timed_out",
                "The request's body did not arrive in time",
                format!(
                    "The body was not sent whole within {} ms of the headers (http.body_timeout).",
                    limits.body_timeout.as_millis()
                ),
            );
            let mut response = ProblemAnswer(problem).into_response();
            // The rest of the body is not read: the connection cannot carry another request.
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
        .await
}

/// The bytes of a request's line and headers as HTTP/1.1 writes them:
/// `METHOD TARGET HTTP/1.1`, each `name: value`, each line ended by CR LF, and the empty line.
fn head_bytes(request: &Request, target_bytes: usize) -> usize {
    let line = request.method().as_str().len() + 1 + target_bytes + " HTTP/1.1\r\n".len();
    let headers: usize = request
        .headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + 2 + value.len() + 2)
        .sum();
    line + headers + 2
}

/// A connection's stream whose writes put a problem document in place of hyper's own empty
/// answer to a request it could not read (see the module's invariant).
struct ProblemAnswers {
    stream: TcpStream,
    limits: HttpLimits,
    /// The answer in place of hyper's, and how much of it is written.
    pending: Option<(Vec<u8>, usize)>,
}

impl ProblemAnswers {
    fn new(stream: TcpStream, limits: HttpLimits) -> Self {
        Self {
            stream,
            limits,
            pending: None,
        }
    }

    /// Writes what is left of the answer put in place of hyper's.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((answer, written)) = &mut self.pending {
            if *written == answer.len() {
                self.pending = None;
                break;
            }
            let n = ready!(Pin::new(&mut self.stream).poll_write(cx, &answer[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        Poll::Ready(Ok(()))
    }
}

/// The status of hyper's own answer, when `bytes` are one: a head alone, with no body, of a
/// status hyper gives to a request it cannot read.
fn hypers_own_answer(bytes: &[u8]) -> Option<StatusCode> {
    let status = [
        StatusCode::BAD_REQUEST,
        StatusCode::URI_TOO_LONG,
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
    ]
    .into_iter()
    .find(|status| bytes.starts_with(format!("HTTP/1.1 {} ", status.as_u16()).as_bytes()))?;
    let head_only = bytes.ends_with(b"\r\n\r\n")
        && bytes.windows(4).position(|w| w == b"\r\n\r\n") == Some(bytes.len() - 4);
    let text = String::from_utf8_lossy(bytes).to_ascii_lowercase();
    (head_only && text.contains("\r\ncontent-length: 0\r\n")).then_some(status)
}

impl AsyncRead for ProblemAnswers {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for ProblemAnswers {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        if let Some(status) = hypers_own_answer(bytes) {
            let problem = problem_for_hypers(status, &this.limits);
            this.pending = Some((raw_answer(status, &problem), 0));
            // Written now as far as the socket takes it; the rest by the flush hyper makes.
            if let Poll::Ready(Err(error)) = this.poll_pending(cx) {
                return Poll::Ready(Err(error));
            }
            return Poll::Ready(Ok(bytes.len()));
        }
        Pin::new(&mut this.stream).poll_write(cx, bytes)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_pending(cx))?;
        Pin::new(&mut this.stream).poll_shutdown(cx)
    }

    // Not vectored, so that hyper writes a head in one buffer, where it can be recognised.
    fn is_write_vectored(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypers_own_answers_are_told_from_the_services() {
        let own = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\ndate: Tue, 01 Dec 2026 16:00:00 GMT\r\n\r\n";
        assert_eq!(hypers_own_answer(own), Some(StatusCode::BAD_REQUEST));
        let own = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(
            hypers_own_answer(own),
            Some(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE)
        );
        // A problem document, an empty answer of another status, a head with a body after it.
        let problem = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 2\r\n\r\n{}";
        assert_eq!(hypers_own_answer(problem), None);
        let empty = b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(hypers_own_answer(empty), None);
        let two = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n";
        assert_eq!(hypers_own_answer(two), None);
    }
}
