//! The `[http]` limits and HTTP's own refusals, met by raw TCP clients as a hostile or broken
//! client meets them: a slow head, an idle connection, a slow body, one connection past the
//! limit, a target and headers at their limits and one byte past, bad framing, and a method a
//! route does not take. Every answer is a problem document.

mod common;

use std::time::{Duration, Instant};

use common::{TestServer, wait_for};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long a test waits for the server to answer or close; far above every timeout set here.
const WAIT_MS_MAX: u64 = 10_000;

async fn server(http: &str) -> TestServer {
    TestServer::start_with_config(&format!("[http]\n{http}\n")).await
}

async fn connect(server: &TestServer) -> TcpStream {
    let addr = server.url.trim_start_matches("http://").to_owned();
    TcpStream::connect(addr).await.expect("a connection")
}

/// An answer as it came over the wire.
#[derive(Debug)]
struct Answer {
    status: u16,
    /// Names in lower case.
    headers: Vec<(String, String)>,
    body: Value,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A problem document of this status, reason and kind.
    fn assert_problem(&self, status: u16, reason: &str, kind: &str) -> &Value {
        assert_eq!(self.status, status, "{self:#?}");
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "{self:#?}"
        );
        assert_eq!(self.body["status"], status, "{self:#?}");
        assert_eq!(self.body["reason"], reason, "{self:#?}");
        assert_eq!(self.body["kind"], kind, "{self:#?}");
        assert_eq!(
            self.body["type"],
            format!("https://on.auto/problems/{kind}"),
            "{self:#?}"
        );
        &self.body
    }
}

/// Reads one answer: its head, then as many bytes of body as its `content-length` says.
async fn read_answer(stream: &mut TcpStream) -> Answer {
    let mut bytes = Vec::new();
    let deadline = Instant::now() + Duration::from_millis(WAIT_MS_MAX);
    loop {
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
            let mut lines = head.split("\r\n");
            let status: u16 = lines
                .next()
                .and_then(|line| line.split(' ').nth(1))
                .and_then(|code| code.parse().ok())
                .unwrap_or_else(|| panic!("a status line: {head}"));
            let headers: Vec<(String, String)> = lines
                .filter_map(|line| line.split_once(':'))
                .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
                .collect();
            let length: usize = headers
                .iter()
                .find(|(n, _)| n == "content-length")
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0);
            if bytes.len() >= end + 4 + length {
                let body = &bytes[end + 4..end + 4 + length];
                let body = serde_json::from_slice(body)
                    .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into()));
                return Answer {
                    status,
                    headers,
                    body,
                };
            }
        }
        let mut chunk = [0u8; 16 * 1024];
        let left = deadline.saturating_duration_since(Instant::now());
        let n = tokio::time::timeout(left, stream.read(&mut chunk))
            .await
            .expect("an answer in time")
            .expect("the connection reads");
        assert!(
            n > 0,
            "the connection closed before a whole answer: {:?}",
            String::from_utf8_lossy(&bytes)
        );
        bytes.extend_from_slice(&chunk[..n]);
    }
}

/// Sends `request` on a new connection and reads the answer.
async fn exchange(server: &TestServer, request: &[u8]) -> Answer {
    let mut stream = connect(server).await;
    stream
        .write_all(request)
        .await
        .expect("the request is sent");
    read_answer(&mut stream).await
}

/// Waits until the server closes the connection (end of stream, or a reset) and says how long
/// that took from `since`.
async fn closed_after(stream: &mut TcpStream, since: Instant) -> Duration {
    let mut chunk = [0u8; 1024];
    let deadline = Duration::from_millis(WAIT_MS_MAX);
    loop {
        match tokio::time::timeout(deadline, stream.read(&mut chunk)).await {
            Err(_) => panic!("the connection stayed open for {WAIT_MS_MAX} ms"),
            Ok(Ok(0) | Err(_)) => return since.elapsed(),
            Ok(Ok(_)) => {}
        }
    }
}

const HEADER_TIMEOUT: Duration = Duration::from_millis(500);

#[tokio::test]
async fn a_head_sent_too_slowly_is_closed_after_the_header_timeout() {
    let server = server("header_timeout = \"500ms\"").await;
    let started = Instant::now();
    let mut stream = connect(&server).await;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .expect("half a head");
    let waited = closed_after(&mut stream, started).await;
    assert!(waited >= HEADER_TIMEOUT, "closed after {waited:?}");
}

#[tokio::test]
async fn an_idle_connection_is_closed_after_the_header_timeout() {
    let server = server("header_timeout = \"500ms\"").await;
    // A connection that never sends.
    let started = Instant::now();
    let mut stream = connect(&server).await;
    let waited = closed_after(&mut stream, started).await;
    assert!(waited >= HEADER_TIMEOUT, "closed after {waited:?}");
    // A connection kept alive after an answer.
    let mut stream = connect(&server).await;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .expect("a request");
    let answer = read_answer(&mut stream).await;
    assert_eq!(answer.status, 200, "{answer:#?}");
    let answered = Instant::now();
    let waited = closed_after(&mut stream, answered).await;
    assert!(
        waited >= HEADER_TIMEOUT - Duration::from_millis(50),
        "closed after {waited:?}"
    );
}

#[tokio::test]
async fn a_body_sent_too_slowly_is_answered_408_and_closed() {
    let server = server("body_timeout = \"500ms\"").await;
    let started = Instant::now();
    let mut stream = connect(&server).await;
    stream
        .write_all(
            b"POST /v1/orgs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\":",
        )
        .await
        .expect("a head and part of a body");
    let answer = read_answer(&mut stream).await;
    assert!(started.elapsed() >= Duration::from_millis(500));
    let problem = answer.assert_problem(408, "invalid_input", "body_timed_out");
    assert_eq!(
        problem["detail"],
        "The body was not sent whole within 500 ms of the headers (http.body_timeout)."
    );
    assert_eq!(answer.header("connection"), Some("close"));
    closed_after(&mut stream, started).await;
    // A body sent in time is read as ever.
    let answer = exchange(
        &server,
        b"POST /v1/orgs HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"id\":\"acme\"}",
    )
    .await;
    assert_eq!(answer.status, 201, "{answer:#?}");
}

#[tokio::test]
async fn a_connection_past_the_limit_is_answered_503_until_one_closes() {
    let server = server("connections_max = 2").await;
    // Two connections, each answered once and kept open: both are being served.
    let mut open = Vec::new();
    for _ in 0..2 {
        let mut stream = connect(&server).await;
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .expect("a request");
        assert_eq!(read_answer(&mut stream).await.status, 200);
        open.push(stream);
    }
    let healthz = b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let answer = exchange(&server, healthz).await;
    let problem = answer.assert_problem(503, "unavailable", "too_many_connections");
    assert_eq!(
        problem["detail"],
        "The server serves at most 2 connections at once (http.connections_max); try again once one closes."
    );
    // Once one closes, a new connection is served.
    drop(open.pop());
    let within = Duration::from_millis(WAIT_MS_MAX);
    wait_for(within, "a connection freed", || async {
        let answer = exchange(&server, healthz).await;
        if answer.status != 200 {
            answer.assert_problem(503, "unavailable", "too_many_connections");
        }
        (answer.status == 200).then_some(())
    })
    .await;
}

/// `GET <target>` with `Connection: close`.
fn get(target: &str, extra_headers: &str) -> Vec<u8> {
    format!("GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{extra_headers}\r\n")
        .into_bytes()
}

#[tokio::test]
async fn a_target_longer_than_uri_bytes_max_is_answered_414() {
    let server = server("uri_bytes_max = 100").await;
    let target = |bytes: usize| format!("/healthz?pad={}", "a".repeat(bytes - 13));
    assert_eq!(target(100).len(), 100);
    let answer = exchange(&server, &get(&target(100), "")).await;
    assert_eq!(answer.status, 200, "{answer:#?}");
    let answer = exchange(&server, &get(&target(101), "")).await;
    let problem = answer.assert_problem(414, "invalid_input", "uri_too_long");
    assert_eq!(
        problem["detail"],
        "The path and query are longer than 100 bytes (http.uri_bytes_max)."
    );
}

#[tokio::test]
async fn headers_larger_than_header_bytes_max_are_answered_431() {
    let server = server("header_bytes_max = 8192").await;
    // The head with a padding header of `pad` bytes.
    let request = |pad: usize| get("/healthz", &format!("X-Pad: {}\r\n", "p".repeat(pad)));
    let bare = request(0).len();
    let at_limit = request(8192 - bare);
    assert_eq!(at_limit.len(), 8192);
    let answer = exchange(&server, &at_limit).await;
    assert_eq!(answer.status, 200, "{answer:#?}");
    let answer = exchange(&server, &request(8192 - bare + 1)).await;
    let problem = answer.assert_problem(431, "invalid_input", "headers_too_large");
    assert_eq!(
        problem["detail"],
        "The request line and headers are larger than 8192 bytes (http.header_bytes_max), or there are more than 100 headers."
    );
    // More headers than hyper reads is refused by hyper itself, with the same problem.
    let many: String = (0..101).map(|i| format!("X-H{i}: v\r\n")).collect();
    let answer = exchange(&server, &get("/healthz", &many)).await;
    answer.assert_problem(431, "invalid_input", "headers_too_large");
}

#[tokio::test]
async fn a_request_hyper_cannot_read_is_answered_400() {
    let server = server("").await;
    let cases: [&[u8]; 3] = [
        b"POST /v1/orgs HTTP/1.1\r\nHost: x\r\nContent-Length: 12x\r\n\r\n",
        b"POST /v1/orgs HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        b"NOT HTTP AT ALL\r\n\r\n",
    ];
    for request in cases {
        let answer = exchange(&server, request).await;
        let problem = answer.assert_problem(400, "invalid_input", "bad_request");
        assert_eq!(problem["title"], "The request is not valid HTTP");
        assert_eq!(answer.header("connection"), Some("close"));
    }
}

#[tokio::test]
async fn a_method_a_route_does_not_take_is_answered_405_with_allow() {
    let server = server("").await;
    for method in ["DELETE", "BREW"] {
        let request = format!("{method} /v1/orgs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        let answer = exchange(&server, request.as_bytes()).await;
        let problem = answer.assert_problem(405, "invalid_input", "method_not_allowed");
        assert_eq!(
            problem["detail"],
            format!(
                "The route /v1/orgs does not take {method}: the Allow header names its methods (see /v1/openapi.json)."
            )
        );
        let allow = answer.header("allow").expect("an Allow header");
        let mut methods: Vec<&str> = allow.split(',').map(str::trim).collect();
        methods.sort_unstable();
        assert_eq!(methods, ["GET", "HEAD", "POST"], "{allow}");
    }
    // A method on a path that is no route: 404, as any other.
    let answer = exchange(
        &server,
        b"BREW /nowhere HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .await;
    assert_eq!(answer.status, 404, "{answer:#?}");
    assert_eq!(answer.body["reason"], "not_found", "{answer:#?}");
}
