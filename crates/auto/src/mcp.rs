//! `auto mcp`: the server's MCP tools over stdin and stdout, for an agent that starts its MCP
//! servers as child processes.
//!
//! Two ways to reach the playbooks, one code path: the tools' calls become the API's requests
//! either for a store opened in this process (acting as `local`), or forwarded to a running
//! server (`--url`, with `--key`). Stdout carries the protocol only; logs go to stderr.

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use auto_server::config;
use auto_server::http::ProblemAnswer;
use auto_server::mcp::{Endpoint, PlaybookScope};
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use clap::Args;

const LONG_ABOUT: &str =
    "Serve the runtime's MCP tools, format guides and prompts over stdio, for a local agent.

Without --url, the tools act on the store given by --database, in this process, as the caller \
`local` (an admin of every org, as a server without keys). A SQLite store is held by one process \
at a time: while `auto serve` runs on the same file, use --url to go through that server (or \
point the agent at the server's /mcp over HTTP).

With --url, every call is forwarded to that server with --key as its bearer key, so the key's \
org and role apply as over HTTP.

With --org and --playbook, the tools act on that playbook only and take neither argument.";

#[derive(Args)]
#[command(long_about = LONG_ABOUT)]
pub struct McpArgs {
    /// The store to open in this process: sqlite://FILE or postgres://...
    #[arg(long, env = "AUTO_DATABASE", default_value = config::DEFAULT_DATABASE)]
    database: String,
    /// Forward the calls to the server at this base URL instead of opening a store.
    #[arg(long, conflicts_with = "database")]
    url: Option<String>,
    /// The bearer key to send with --url.
    #[arg(long, env = "AUTO_KEY", hide_env_values = true, requires = "url")]
    key: Option<String>,
    /// Act on this org's playbook given by --playbook only.
    #[arg(long, requires = "playbook")]
    org: Option<String>,
    /// Act on this playbook of --org only.
    #[arg(long, requires = "org")]
    playbook: Option<String>,
}

pub async fn run(args: McpArgs) -> Result<ExitCode> {
    init_logs();
    let endpoint = match (args.org, args.playbook) {
        (Some(org), Some(playbook)) => Endpoint::Playbook(PlaybookScope { org, playbook }),
        _ => Endpoint::Server,
    };
    match &args.url {
        Some(url) => {
            let api = remote_api(url, args.key.as_deref())?;
            auto_server::mcp::serve_stdio(api, endpoint).await?;
        }
        None => {
            let store = match auto_store::open(&args.database).await {
                Ok(store) => store,
                Err(error) => bail!("cannot open the store {}: {error}", args.database),
            };
            // The server's own checkers, so a save here is checked as `auto serve` checks it.
            let checkers = auto_server::server_checkers();
            auto_server::mcp::serve_local_stdio(store, checkers, endpoint).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Logs to stderr, warnings and up: stdout belongs to the protocol.
fn init_logs() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Colour codes only for a person at a terminal, never into a file or a collector.
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
}

/// Where a forwarded call goes.
struct Remote {
    base: String,
    authorization: Option<HeaderValue>,
    http: reqwest::Client,
}

/// An API that forwards every request to the server at `url`, with `key` as its bearer key.
fn remote_api(url: &str, key: Option<&str>) -> Result<axum::Router> {
    let authorization = key
        .map(|key| HeaderValue::from_str(&format!("Bearer {key}")))
        .transpose()
        .context(crate::UsageError(
            "--key is not a valid header value: a key is printable ASCII".into(),
        ))?;
    let remote = Arc::new(Remote {
        base: url.trim_end_matches('/').to_owned(),
        authorization,
        http: reqwest::Client::new(),
    });
    Ok(axum::Router::new().fallback(move |request: Request| {
        let remote = remote.clone();
        async move { forward(&remote, request).await }
    }))
}

async fn forward(remote: &Remote, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    let body = match axum::body::to_bytes(body, auto_server::http::BODY_BYTES_MAX).await {
        Ok(body) => body,
        Err(error) => return unavailable(&format!("cannot read the request: {error}")),
    };
    let mut outgoing = remote
        .http
        .request(parts.method, format!("{}{path}", remote.base))
        .body(body);
    if let Some(content_type) = parts.headers.get(header::CONTENT_TYPE) {
        outgoing = outgoing.header(header::CONTENT_TYPE, content_type);
    }
    if let Some(authorization) = &remote.authorization {
        outgoing = outgoing.header(header::AUTHORIZATION, authorization);
    }
    let answer = match outgoing.send().await {
        Ok(answer) => answer,
        Err(error) => return unavailable(&format!("cannot reach {}: {error}", remote.base)),
    };
    let status = answer.status();
    match answer.bytes().await {
        Ok(bytes) => (status, Body::from(bytes)).into_response(),
        Err(error) => unavailable(&format!(
            "cannot read the answer of {}: {error}",
            remote.base
        )),
    }
}

/// A server that cannot be reached, as a problem document a model can read.
fn unavailable(detail: &str) -> Response {
    let problem = auto_server::problem::Problem::new(
        auto_server::problem::Reason::Unavailable,
        "The server is unavailable",
        detail,
    );
    ProblemAnswer(problem).into_response()
}
