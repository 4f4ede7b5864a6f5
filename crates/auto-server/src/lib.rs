//! The server: the face of the runtime (`auto-runtime`): HTTP, MCP, bearer keys,
//! configuration loading, problem documents as HTTP answers, metrics.
//!
//! `Options -> start -> Handle`: the binary and the tests start a server the same way.

pub mod config;
mod connections;
pub mod http;
mod http_tools;
pub mod mcp;
pub mod metrics;
pub mod openapi;
mod stream;
mod studio;
pub mod traces;

// The runtime's modules, under the paths the server and its tests have always named them.
pub use auto_runtime::{
    Workers, api, auth, events, interaction_delivery, interaction_runs, interaction_tools, problem,
    reasoning_room, reasoning_runs, reasoning_tools, run_events, runs, server_checkers,
    server_checkers_with, service, tool_operations, triggers, webhooks, work, workflow_runs,
};

use std::net::SocketAddr;
use std::sync::Arc;

use auto_engine::definitions::Checkers;
use auto_store::Store;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::auth::Keys;
use crate::http::AppState;
use crate::metrics::Metrics;
use crate::service::Service;

/// What a server is started with.
pub struct Options {
    pub listen: SocketAddr,
    pub store: Arc<dyn Store>,
    pub keys: Keys,
    pub checkers: Checkers,
    /// The operator's providers and models; [`reasoning_runs::Models::none`] for none.
    pub models: reasoning_runs::Models,
    /// The limits on workflow runs; [`config::RunLimits::default`] for the page's.
    pub limits: config::RunLimits,
    /// `[http]`: the limits on connections and requests; [`config::HttpLimits::default`].
    pub http: config::HttpLimits,
    /// How long ended runs are kept; [`config::Retention::default`]: forever.
    pub retention: config::Retention,
}

/// A running server.
pub struct Handle {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    /// Told first when the server stops, so the streams under way end and let it.
    stopping: watch::Sender<bool>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Handle {
    /// The base URL, such as `http://127.0.0.1:8040`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops taking requests, lets those under way finish, and waits.
    pub async fn stop(mut self) -> std::io::Result<()> {
        self.stopping.send_replace(true);
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        self.task
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }

    /// Waits until the server stops on its own (it does not, unless it fails).
    pub async fn wait(self) -> std::io::Result<()> {
        self.task
            .await
            .unwrap_or_else(|e| Err(std::io::Error::other(e)))
    }
}

/// Binds and starts serving. Config checks (keys and loopback) are the caller's.
pub async fn start(options: Options) -> std::io::Result<Handle> {
    auto_tools::install_tls_provider();
    let listener = TcpListener::bind(options.listen).await?;
    let addr = listener.local_addr()?;
    let service = Service::new(options.store, options.checkers)
        .with_models(options.models)
        .with_limits(options.limits)
        .with_retention(options.retention);
    let mut metrics = Metrics::new();
    metrics.register_runtime(service.telemetry());
    metrics.register_counter(
        "work_unreadable",
        "Claims of a work item this server could not read; each is kept, logged and claimed again when its lease ends",
        service.unreadable_work(),
    );
    let (stopping, stopping_seen) = watch::channel(false);
    let state = AppState {
        service,
        keys: Arc::new(options.keys),
        metrics: Arc::new(metrics),
        stopping: stopping_seen,
    };
    let workers = Workers::spawn(&state.service);
    let app = mcp::mount(http::router(state.clone()), &state, addr).layer(
        axum::middleware::from_fn_with_state(options.http, connections::limit_request),
    );
    let (shutdown, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let served = connections::serve(listener, app, options.http, stopped).await;
        workers.stop().await;
        served
    });
    tracing::info!(%addr, "auto is listening");
    Ok(Handle {
        addr,
        shutdown: Some(shutdown),
        stopping,
        task,
    })
}
