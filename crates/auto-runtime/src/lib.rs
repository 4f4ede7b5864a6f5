//! The runtime: runs of every definition type, apart from HTTP. The operations (`service`),
//! starting a run under the run-id rules, performing reasoning, computation, interaction and
//! workflow runs, resuming them after a restart, cancelling, the work queue and its scheduler
//! (`workflow_runs`, `work`), triggers and schedules (`triggers`), interaction delivery. It
//! knows no HTTP: `auto-server` is its face, and renders its problems as HTTP answers.

pub mod api;
pub mod auth;
pub mod documents;
pub mod events;
pub mod interaction_delivery;
pub mod interaction_runs;
pub mod interaction_tools;
pub mod lifecycle;
pub mod limits;
pub mod prediction_runs;
pub mod problem;
mod reasoning;
pub mod reasoning_room;
pub mod reasoning_runs;
pub mod reasoning_tools;
pub mod recall_runs;
pub mod run_events;
pub mod runner;
pub mod runs;
pub mod service;
pub mod telemetry;
pub mod tool_operations;
pub mod triggers;
pub mod webhooks;
pub mod work;
pub mod workflow_runs;

use std::sync::Arc;

use auto_engine::definitions::Checkers;
use tokio::task::JoinHandle;

use crate::service::Service;

/// How long a stopping server waits for its scheduler to finish the claim under way.
const SCHEDULER_STOP: std::time::Duration = std::time::Duration::from_secs(10);

/// What works beside the API of a service: the workflow scheduler, which claims due work
/// (timers, calls, cancels) from the store, the sweep of triggers and listening tasks, and the
/// retention sweep that purges ended runs past their playbook's retention.
/// Without them a workflow run that waits never goes on.
pub struct Workers {
    service: Service,
    scheduler: JoinHandle<()>,
    sweep: JoinHandle<()>,
    retention: JoinHandle<()>,
}

impl Workers {
    /// Starts both on the service's store.
    pub fn spawn(service: &Service) -> Self {
        Self {
            service: service.clone(),
            scheduler: workflow_runs::spawn_scheduler(service.clone()),
            sweep: triggers::spawn_sweep(service.clone()),
            retention: lifecycle::spawn_retention(service.clone()),
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
        if tokio::time::timeout(SCHEDULER_STOP, self.retention)
            .await
            .is_err()
        {
            tracing::warn!("the retention sweep did not stop in time");
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
        .with(
            DefinitionType::Prediction,
            Arc::new(auto_engine::prediction::PredictionChecker { run_duration_ms }),
        )
}
