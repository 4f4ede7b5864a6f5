//! The server: the service layer of operations, and HTTP, auth, configuration and metrics
//! around it.
//!
//! `Options -> start -> Handle`: the binary and the tests start a server the same way.

pub mod api;
pub mod auth;
pub mod config;
mod connections;
pub mod events;
pub mod http;
pub mod interaction_delivery;
pub mod interaction_runs;
pub mod interaction_tools;
pub mod mcp;
pub mod metrics;
pub mod openapi;
pub mod problem;
pub mod reasoning_room;
pub mod reasoning_runs;
pub mod reasoning_tools;
pub mod run_events;
pub mod runs;
pub mod service;
pub mod tool_operations;
pub mod triggers;
pub mod webhooks;
pub mod work;
pub mod workflow_runs;

use std::net::SocketAddr;
use std::sync::Arc;

use auto_engine::definitions::Checkers;
use auto_store::Store;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::auth::Keys;
use crate::http::AppState;
use crate::metrics::Metrics;
use crate::service::Service;

/// How long a stopping server waits for its scheduler to finish the claim under way.
const SCHEDULER_STOP: std::time::Duration = std::time::Duration::from_secs(10);

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
}

/// A running server.
pub struct Handle {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    task: JoinHandle<std::io::Result<()>>,
}

impl Handle {
    /// The base URL, such as `http://127.0.0.1:8040`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops taking requests, lets those under way finish, and waits.
    pub async fn stop(mut self) -> std::io::Result<()> {
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
        .with_limits(options.limits);
    let mut metrics = Metrics::new();
    metrics.register_counter(
        "work_unreadable",
        "Claims of a work item this server could not read; each is kept, logged and claimed again when its lease ends",
        service.scheduler.unreadable.clone(),
    );
    let state = AppState {
        service,
        keys: Arc::new(options.keys),
        metrics: Arc::new(metrics),
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
        task,
    })
}

/// What works beside the API of a service: the workflow scheduler, which claims due work
/// (timers, calls, cancels) from the store, and the sweep of triggers and listening tasks.
/// Without them a workflow run that waits never goes on.
pub struct Workers {
    service: Service,
    scheduler: JoinHandle<()>,
    sweep: JoinHandle<()>,
}

impl Workers {
    /// Starts both on the service's store.
    pub fn spawn(service: &Service) -> Self {
        Self {
            service: service.clone(),
            scheduler: workflow_runs::spawn_scheduler(service.clone()),
            sweep: triggers::spawn_sweep(service.clone()),
        }
    }

    /// Claims no more work and waits for the claims under way. The items being worked on are
    /// finished, and what a killed process held is claimed again by the next once its lease
    /// ends.
    pub async fn stop(self) {
        self.service.scheduler.stop();
        self.service.triggers.stop();
        if tokio::time::timeout(SCHEDULER_STOP, self.sweep)
            .await
            .is_err()
        {
            tracing::warn!("the sweep of triggers did not stop in time");
        }
        if tokio::time::timeout(SCHEDULER_STOP, self.scheduler)
            .await
            .is_err()
        {
            tracing::warn!("the scheduler did not stop in time");
        }
    }
}

/// The checkers a server saves with: every type's checker, the workflow's expression checks
/// bounded by "A save allows the check 2 seconds of the server's wall-clock time" (workflow
/// page, "Expressions"). The engine reads no clock; the server lends it one here.
pub fn server_checkers() -> Checkers {
    server_checkers_with(auto_engine::workflow::RUN_DURATION_MS_DEFAULT)
}

/// [`server_checkers`] for a server whose runs last at most `run_duration_ms`
/// (`WORKFLOW_MAX_DURATION`): a workflow's durations and an interaction's `expires` longer than
/// that are refused at save, as the pages say, rather than failing the run later.
pub fn server_checkers_with(run_duration_ms: u64) -> Checkers {
    use auto_engine::definitions::DefinitionType;
    use auto_engine::interaction::InteractionChecker;
    use auto_engine::workflow::{WorkflowChecker, WorkflowLimits};
    use std::time::{Duration, Instant};
    let bound = Duration::from_millis(auto_script::DOCUMENT_CHECK_TIME_MS_MAX);
    let limits = WorkflowLimits {
        run_duration_ms,
        deadline: Some(Arc::new(move || {
            let started = Instant::now();
            Box::new(move || started.elapsed() > bound)
        })),
    };
    Checkers::standard()
        .with(
            DefinitionType::Workflow,
            Arc::new(WorkflowChecker::new(limits)),
        )
        .with(
            DefinitionType::Interaction,
            Arc::new(InteractionChecker { run_duration_ms }),
        )
}
