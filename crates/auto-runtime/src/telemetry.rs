//! What the runtime counts for `/metrics`: runs started and ended, workflow steps, model calls,
//! tool calls and trigger firings, as Prometheus families (`prometheus-client`) the server
//! registers beside its own.
//!
//! Runs and steps are counted from the facts a change committed, once the store said it
//! committed them, so a change the store refused counts nothing and every server counts only
//! what it committed itself: the sum over the servers of a deployment is the deployment's.
//! Model and tool calls are counted where they are made, whatever the run then records.

use std::sync::atomic::AtomicU64;

use auto_models::{ModelAnswer, ModelFailure, ModelRef, Usage};
use auto_store::{NewEvent, Run, RunStatus};
use auto_tools::client::CallOutcome;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use serde_json::Value;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TypeLabels {
    r#type: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndedLabels {
    r#type: String,
    status: String,
    /// The problem's reason; empty for a run that succeeded.
    reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DurationLabels {
    r#type: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StepLabels {
    /// `completed`, `failed` or `retried`.
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    provider: String,
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelOutcomeLabels {
    provider: String,
    model: String,
    /// `answered` or `failed`.
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelFailureLabels {
    provider: String,
    model: String,
    /// The failure's `because`, as the reasoning page names it.
    because: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TokenLabels {
    provider: String,
    model: String,
    /// `input`, `cache_read`, `cache_write`, `output` or `reasoning`.
    kind: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolLabels {
    server: String,
    tool: String,
    /// `answered`, `error` (the tool answered with `isError`) or `failed` (no answer).
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolServerLabels {
    server: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TriggerLabels {
    /// The trigger's kind: `event`, `cron` or `every`.
    kind: String,
    /// `started`, `again` (tried later) or `refused`.
    outcome: String,
}

/// Seconds, from 1 ms to about 9 hours: a computation takes milliseconds, a reasoning run
/// seconds to minutes, a workflow waiting for a person hours.
fn run_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 3.0, 16))
}

/// Seconds, from 10 ms to about 11 minutes: a model or tool call.
fn call_buckets() -> Histogram {
    Histogram::new(exponential_buckets(0.01, 2.0, 17))
}

/// The runtime's metric families; clones share their counts.
#[derive(Clone)]
pub struct Telemetry {
    runs_started: Family<TypeLabels, Counter>,
    runs_ended: Family<EndedLabels, Counter>,
    run_duration: Family<DurationLabels, Histogram>,
    steps: Family<StepLabels, Counter>,
    model_calls: Family<ModelOutcomeLabels, Counter>,
    model_failures: Family<ModelFailureLabels, Counter>,
    model_tokens: Family<TokenLabels, Counter>,
    model_cost: Family<ModelLabels, Counter<f64, AtomicU64>>,
    model_duration: Family<ModelLabels, Histogram>,
    tool_calls: Family<ToolLabels, Counter>,
    tool_duration: Family<ToolServerLabels, Histogram>,
    triggers: Family<TriggerLabels, Counter>,
}

impl Default for Telemetry {
    fn default() -> Self {
        Self {
            runs_started: Family::default(),
            runs_ended: Family::default(),
            run_duration: Family::new_with_constructor(run_buckets),
            steps: Family::default(),
            model_calls: Family::default(),
            model_failures: Family::default(),
            model_tokens: Family::default(),
            model_cost: Family::default(),
            model_duration: Family::new_with_constructor(call_buckets),
            tool_calls: Family::default(),
            tool_duration: Family::new_with_constructor(call_buckets),
            triggers: Family::default(),
        }
    }
}

impl Telemetry {
    /// Adds every family to `registry` (the server's, prefixed `auto_`).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "runs_started",
            "Runs recorded started, by definition type",
            self.runs_started.clone(),
        );
        registry.register(
            "runs_ended",
            "Runs recorded ended, by definition type, status and the problem's reason",
            self.runs_ended.clone(),
        );
        registry.register(
            "run_duration_seconds",
            "From a run's start to its end, for runs that ran past the change that started them",
            self.run_duration.clone(),
        );
        registry.register(
            "workflow_steps",
            "Workflow task steps recorded, by outcome",
            self.steps.clone(),
        );
        registry.register(
            "model_calls",
            "Model calls made, by provider, model and outcome",
            self.model_calls.clone(),
        );
        registry.register(
            "model_call_failures",
            "Model calls that failed, by provider, model and because",
            self.model_failures.clone(),
        );
        registry.register(
            "model_tokens",
            "Tokens the providers reported, by provider, model and kind",
            self.model_tokens.clone(),
        );
        registry.register(
            "model_cost_usd",
            "What model calls cost in US dollars, where the provider or gateway said",
            self.model_cost.clone(),
        );
        registry.register(
            "model_call_duration_seconds",
            "How long a model call took, retries within it included",
            self.model_duration.clone(),
        );
        registry.register(
            "tool_calls",
            "Tool calls made, by server, tool and outcome",
            self.tool_calls.clone(),
        );
        registry.register(
            "tool_call_duration_seconds",
            "How long a tool call took, by server",
            self.tool_duration.clone(),
        );
        registry.register(
            "trigger_starts",
            "Runs triggers tried to start, by trigger kind and outcome",
            self.triggers.clone(),
        );
    }

    /// Counts what [`tally`] read of a change, once the store committed the change, and how
    /// long `run` took when the change left it ended.
    pub(crate) fn count(&self, tally: Tally, run: Option<&Run>) {
        for def_type in tally.started {
            let labels = TypeLabels { r#type: def_type };
            self.runs_started.get_or_create(&labels).inc();
        }
        for labels in tally.ended {
            self.runs_ended.get_or_create(&labels).inc();
        }
        for (outcome, count) in STEP_OUTCOMES.iter().zip(tally.steps) {
            if count > 0 {
                let labels = StepLabels {
                    outcome: (*outcome).to_owned(),
                };
                self.steps.get_or_create(&labels).inc_by(count);
            }
        }
        if let Some(run) = run {
            self.ended(run);
        }
    }

    /// Observes the duration of `run` when it has ended.
    fn ended(&self, run: &Run) {
        let (Some(ended_at), status) = (run.ended_at, run.status) else {
            return;
        };
        let status = match status {
            RunStatus::Succeeded => "succeeded",
            RunStatus::Failed => "failed",
            RunStatus::Rejected => "rejected",
            RunStatus::Started => return,
        };
        let seconds = (ended_at - run.started_at).num_milliseconds().max(0) as f64 / 1000.0;
        let labels = DurationLabels {
            r#type: run.key.def_type.clone(),
            status: status.to_owned(),
        };
        self.run_duration.get_or_create(&labels).observe(seconds);
    }

    /// Counts one model call of `model` (as the definition names it) and what it came to.
    pub(crate) fn model_called(
        &self,
        model: &ModelRef,
        result: &Result<ModelAnswer, ModelFailure>,
    ) {
        let (labels, outcome, usage, cost, duration_ms) = match result {
            Ok(answer) => {
                let (provider, name) = answer
                    .resolved_model
                    .split_once('/')
                    .unwrap_or((&model.provider, &model.model));
                let labels = ModelLabels {
                    provider: provider.to_owned(),
                    model: name.to_owned(),
                };
                (
                    labels,
                    "answered",
                    Some(&answer.usage),
                    answer.cost_usd,
                    answer.duration_ms,
                )
            }
            Err(failure) => {
                let labels = ModelLabels {
                    provider: model.provider.clone(),
                    model: model.model.clone(),
                };
                let failed = ModelFailureLabels {
                    provider: labels.provider.clone(),
                    model: labels.model.clone(),
                    because: failure.because.as_str().to_owned(),
                };
                self.model_failures.get_or_create(&failed).inc();
                (
                    labels,
                    "failed",
                    failure.usage.as_ref(),
                    failure.cost_usd,
                    failure.duration_ms,
                )
            }
        };
        let counted = ModelOutcomeLabels {
            provider: labels.provider.clone(),
            model: labels.model.clone(),
            outcome: outcome.to_owned(),
        };
        self.model_calls.get_or_create(&counted).inc();
        if let Some(usage) = usage {
            self.tokens(&labels, usage);
        }
        if let Some(cost) = cost.filter(|c| c.is_finite() && *c > 0.0) {
            self.model_cost.get_or_create(&labels).inc_by(cost);
        }
        self.model_duration
            .get_or_create(&labels)
            .observe(duration_ms as f64 / 1000.0);
    }

    fn tokens(&self, labels: &ModelLabels, usage: &Usage) {
        let kinds = [
            ("input", usage.input_uncached),
            ("cache_read", usage.cache_read),
            ("cache_write", usage.cache_write),
            ("output", usage.output_text),
            ("reasoning", usage.output_reasoning),
        ];
        for (kind, count) in kinds {
            if let Some(count) = count.filter(|c| *c > 0) {
                let labels = TokenLabels {
                    provider: labels.provider.clone(),
                    model: labels.model.clone(),
                    kind: kind.to_owned(),
                };
                self.model_tokens.get_or_create(&labels).inc_by(count);
            }
        }
    }

    /// Counts one call of `tool` on `server` and what it came to.
    pub(crate) fn tool_called(&self, server: &str, tool: &str, outcome: &CallOutcome) {
        let (outcome, duration_ms) = tool_outcome(outcome);
        let labels = ToolLabels {
            server: server.to_owned(),
            tool: tool.to_owned(),
            outcome: outcome.to_owned(),
        };
        self.tool_calls.get_or_create(&labels).inc();
        let labels = ToolServerLabels {
            server: server.to_owned(),
        };
        self.tool_duration
            .get_or_create(&labels)
            .observe(duration_ms as f64 / 1000.0);
    }

    /// Counts a trigger's try to start a run.
    pub(crate) fn trigger_start(&self, kind: &str, outcome: &str) {
        let labels = TriggerLabels {
            kind: kind.to_owned(),
            outcome: outcome.to_owned(),
        };
        self.triggers.get_or_create(&labels).inc();
    }
}

/// What a tool call came to, as its metric and span name it, and how long it took.
pub(crate) fn tool_outcome(outcome: &CallOutcome) -> (&'static str, u64) {
    match outcome {
        CallOutcome::Answered {
            result,
            duration_ms,
            ..
        } => {
            let error = result.get("isError").and_then(Value::as_bool) == Some(true);
            (if error { "error" } else { "answered" }, *duration_ms)
        }
        CallOutcome::Failed { duration_ms, .. } => ("failed", *duration_ms),
    }
}

/// Records on a model call's span what the call came to and the tokens it used.
pub(crate) fn record_model_call(span: &tracing::Span, called: &Result<ModelAnswer, ModelFailure>) {
    let (outcome, usage) = match called {
        Ok(answer) => ("answered", Some(&answer.usage)),
        Err(failure) => (failure.because.as_str(), failure.usage.as_ref()),
    };
    span.record("outcome", outcome);
    if let Some(usage) = usage {
        let input = [usage.input_uncached, usage.cache_read, usage.cache_write];
        if input.iter().any(Option::is_some) {
            span.record(
                "gen_ai.usage.input_tokens",
                input.iter().flatten().sum::<u64>(),
            );
        }
        let output = [usage.output_text, usage.output_reasoning];
        if output.iter().any(Option::is_some) {
            span.record(
                "gen_ai.usage.output_tokens",
                output.iter().flatten().sum::<u64>(),
            );
        }
    }
}

/// The outcomes of a workflow's step, as its facts name them after `step_`.
const STEP_OUTCOMES: [&str; 3] = ["completed", "failed", "retried"];

/// The run and step facts of a change about to be committed: read before the store takes the
/// events, counted once it committed them.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    started: Vec<String>,
    ended: Vec<EndedLabels>,
    steps: [u64; 3],
}

/// Reads the facts of `events` that [`Telemetry::count`] counts.
pub(crate) fn tally(events: &[NewEvent]) -> Tally {
    let mut tally = Tally::default();
    for event in events {
        let status = match event.event_type.as_str() {
            "run_started" => {
                tally.started.push(type_of(event).to_owned());
                continue;
            }
            "run_succeeded" => "succeeded",
            "run_failed" => "failed",
            "run_rejected" => "rejected",
            other => {
                let step = other.strip_prefix("step_");
                if let Some(i) = step.and_then(|s| STEP_OUTCOMES.iter().position(|o| *o == s)) {
                    tally.steps[i] += 1;
                }
                continue;
            }
        };
        let reason = event
            .data
            .as_ref()
            .and_then(|data| data.get("reason"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        tally.ended.push(EndedLabels {
            r#type: type_of(event).to_owned(),
            status: status.to_owned(),
            reason: reason.to_owned(),
        });
    }
    tally
}

/// The definition type of a run's fact, from its subject `type/name`.
fn type_of(event: &NewEvent) -> &str {
    event
        .subject
        .as_deref()
        .and_then(|subject| subject.split_once('/'))
        .map_or("unknown", |(def_type, _)| def_type)
}
