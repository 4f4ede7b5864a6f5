//! One runner per type of definition that runs, behind one interface. `runs` does what every
//! type shares (the run-id rules, a request met by the run it names, the in-flight attempt, the
//! ending and its fact, the cancel's checks and words); a [`Runner`] does what differs: how a
//! new run begins, what a request under the id of a recorded run gets, and how a started run
//! stops.
//!
//! Computation and reasoning functions finish within their call and share the reasoning page's
//! "Retrying under a run id" (a [`Function`] each); interactions and workflows answer in
//! `interaction_runs` and `workflow_runs`.

use std::sync::Arc;

use auto_engine::computation::{ComputationDocument, run_computation, run_computation_briefly};
use auto_engine::definitions::DefinitionType;
use auto_store::{
    DefinitionKey, DefinitionVersion, NewRun, PlaybookRef, Run, RunEnding, RunStatus,
};
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::documents::{self, Checked};
use crate::interaction_runs::Interactions;
use crate::problem::{Problem, ProblemIssue};
use crate::reasoning_runs::{self, CancelOrder};
use crate::runs::{
    Ask, Outcome, answer_of, fact, prepared_input, rejection, run_attributes, still_running,
    succeeded, taken,
};
use crate::service::{Service, store_problem};
use crate::workflow_runs::Workflows;

/// A computation run is bounded by its program's 10 seconds; an attempt whose last event is
/// younger than this (plus a margin for the commit) may still be going on elsewhere.
pub const COMPUTATION_RUN_BOUND_MS: i64 = 10_000 + 5_000;

/// What differs between the types that run.
pub(crate) trait Runner {
    /// A request under a run id nothing recorded: the run of `definition` (the latest version
    /// of `key`, as the request read it) starts, and is performed or set going.
    async fn begin(
        &self,
        service: &Service,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        ask: Ask,
        definition: &DefinitionVersion,
    ) -> Outcome;

    /// A request for the same definition and input under the id of the recorded `run`.
    async fn again(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        run: Run,
    ) -> Outcome;

    /// Stops the started `run` for `words`, with the kind of the cancellation (`requested`
    /// when `None`; a workflow that waited for it gives `parent_ended` or `deadline`).
    async fn cancel(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
        kind: Option<&str>,
    ) -> Result<(), Problem>;
}

/// Evaluates `$body` with `$runner` bound to the runner of `$runners`: the one place a
/// [`Runners`] names its runner. (`Runner`'s methods are `async`, so it is not object safe;
/// each arm is the body for one runner's type.)
macro_rules! with_runner {
    ($runners:expr, $runner:ident => $body:expr) => {
        match $runners {
            Runners::Computation => {
                let $runner = Computation;
                $body
            }
            Runners::Reasoning => {
                let $runner = Reasoning;
                $body
            }
            Runners::Interaction => {
                let $runner = Interactions;
                $body
            }
            Runners::Workflow => {
                let $runner = Workflows;
                $body
            }
            Runners::Recall => {
                let $runner = crate::recall_runs::Recall;
                $body
            }
            Runners::Prediction => {
                let $runner = crate::prediction_runs::Predictions;
                $body
            }
        }
    };
}

/// The runner of each type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Runners {
    Computation,
    Reasoning,
    Interaction,
    Workflow,
    Recall,
    Prediction,
}

impl Runners {
    /// The runner of `def_type`.
    pub(crate) fn of(def_type: DefinitionType) -> Self {
        match def_type {
            DefinitionType::Computation => Self::Computation,
            DefinitionType::Reasoning => Self::Reasoning,
            DefinitionType::Interaction => Self::Interaction,
            DefinitionType::Workflow => Self::Workflow,
            DefinitionType::Recall => Self::Recall,
            DefinitionType::Prediction => Self::Prediction,
        }
    }

    /// The runner of a recorded run.
    pub(crate) fn of_run(run: &Run) -> Result<Self, Problem> {
        let def_type =
            run.key.def_type.parse::<DefinitionType>().map_err(|_| {
                Problem::internal(&format!("a run of the type {}", run.key.def_type))
            })?;
        Ok(Self::of(def_type))
    }

    pub(crate) async fn begin(
        self,
        service: &Service,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        ask: Ask,
        definition: &DefinitionVersion,
    ) -> Outcome {
        // Each type's future in a box of its own size: unboxed, this future would be as large
        // as the largest of them (a reasoning run's, tens of KiB), copied whole each time it
        // is moved into its span and its task.
        with_runner!(self, runner => Box::pin(runner.begin(service, caller, pb, key, ask, definition)).await)
    }

    pub(crate) async fn again(
        self,
        service: &Service,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        run: Run,
    ) -> Outcome {
        with_runner!(self, runner => Box::pin(runner.again(service, pb, key, run)).await)
    }

    pub(crate) async fn cancel(
        self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
        kind: Option<&str>,
    ) -> Result<(), Problem> {
        with_runner!(self, runner => runner.cancel(service, pb, run, words, kind).await)
    }
}

/// How a performed run finishes: its ending, the `run_seq` its first fact from here takes, and
/// the facts recorded with the ending in one commit, ahead of it (the end of its last call).
pub(crate) struct Finish {
    pub(crate) ending: RunEnding,
    pub(crate) run_seq: i64,
    pub(crate) facts: Vec<(&'static str, Value)>,
    /// The run, when it ends before it recorded anything and so was never recorded itself.
    pub(crate) unrecorded: Option<NewRun>,
}

impl Finish {
    /// An ending with no fact before it, its fact numbered `run_seq`.
    pub(crate) fn at(ending: RunEnding, run_seq: i64) -> Self {
        Self {
            ending,
            run_seq,
            facts: Vec::new(),
            unrecorded: None,
        }
    }
}

/// A function that finishes within its call: performed from what its run recorded, and run
/// again under its id after a rejection that was not its input's.
pub(crate) trait Function {
    /// Whether a new run is recorded with its first fact after `run_started` (one commit)
    /// rather than on its own before it is performed: `perform` is then handed the run to
    /// record.
    const RECORDS_WITH_FIRST_FACT: bool = false;

    /// Performs a started run from what it recorded, to how it finishes; `unrecorded` is the
    /// new run not recorded yet, for a function that records it with its first fact.
    async fn perform(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        unrecorded: Option<NewRun>,
    ) -> Result<Finish, Problem>;

    /// The longest gap an attempt of `run` leaves between two events.
    async fn quiet_after_ms(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
    ) -> Result<i64, Problem>;

    /// Why a run that ended without succeeding may not run again under its id, if it may not.
    async fn never_again(
        &self,
        _service: &Service,
        _pb: &PlaybookRef,
        _run: &Run,
    ) -> Result<Option<Problem>, Problem> {
        Ok(None)
    }

    /// Stops a started run.
    async fn stop(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
        kind: Option<&str>,
    ) -> Result<(), Problem>;

    /// Whether a started run's last event is old enough that no attempt can still be going
    /// on with it.
    async fn is_quiet(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
    ) -> Result<bool, Problem> {
        let bound_ms = self.quiet_after_ms(service, pb, run).await?;
        let now = service.store.now().await.map_err(store_problem)?;
        Ok((now - run.last_event_at).num_milliseconds() >= bound_ms)
    }

    /// Performs the run and records its ending; `unrecorded` is a new run not recorded yet.
    async fn go_on(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: Run,
        unrecorded: Option<NewRun>,
    ) -> Outcome {
        let Finish {
            ending,
            run_seq,
            facts,
            unrecorded,
        } = self.perform(service, pb, &run, unrecorded).await?;
        // A run that ended before it recorded anything is recorded now, then ended.
        let run = match unrecorded {
            Some(new) => service.record_start(pb, new).await?,
            None => run,
        };
        let ended = service.end_after(pb, &run, run_seq, &facts, ending).await?;
        Ok(answer_of(&ended))
    }
}

impl<F: Function> Runner for F {
    async fn begin(
        &self,
        service: &Service,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        ask: Ask,
        definition: &DefinitionVersion,
    ) -> Outcome {
        if Self::RECORDS_WITH_FIRST_FACT {
            let (new, run) = service
                .run_to_record(caller, key, definition.version, ask)
                .await
                .map_err(store_problem)?;
            return self.go_on(service, pb, run, Some(new)).await;
        }
        let run = service
            .start(caller, pb, key, definition.version, ask)
            .await?;
        self.go_on(service, pb, run, None).await
    }

    /// "Retrying under a run id" (reasoning page): a run that succeeded, or refused its input,
    /// is answered as it ended; after unavailable, conflict or a failure the definition runs
    /// again, its latest version, starting now; a run still started goes on here once no
    /// attempt can be going on with it elsewhere.
    async fn again(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        run: Run,
    ) -> Outcome {
        if matches!(run.status, RunStatus::Rejected | RunStatus::Failed)
            && let Some(problem) = self.never_again(service, pb, &run).await?
        {
            return Err(problem);
        }
        let run = match run.status {
            RunStatus::Succeeded => return Ok(answer_of(&run)),
            RunStatus::Rejected
                if run
                    .problem
                    .as_ref()
                    .is_some_and(|p| p["reason"] == "invalid_input") =>
            {
                return Ok(answer_of(&run));
            }
            RunStatus::Rejected | RunStatus::Failed => {
                let latest = service
                    .store
                    .get_definition(pb, key)
                    .await
                    .map_err(store_problem)?
                    .ok_or_else(|| Problem::not_found("The definition is gone."))?
                    .version;
                let mut event = fact(
                    &run.run_id,
                    run.last_run_seq + 1,
                    "run_started",
                    key,
                    &run.started_by,
                    latest,
                );
                run_attributes(&mut event, run.depth, run.call_depth, run.trigger.as_ref());
                service
                    .store
                    .restart_run(pb, &run.run_id, run.attempt, latest, vec![event])
                    .await
                    .map_err(taken)?
                    .0
            }
            RunStatus::Started => {
                if !self.is_quiet(service, pb, &run).await? {
                    return Err(still_running(&run.run_id));
                }
                run
            }
        };
        self.go_on(service, pb, run, None).await
    }

    async fn cancel(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
        kind: Option<&str>,
    ) -> Result<(), Problem> {
        self.stop(service, pb, run, words, kind).await
    }
}

/// The runner of computation functions: a program run once, within its 10 seconds.
pub(crate) struct Computation;

impl Function for Computation {
    async fn perform(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        _: Option<NewRun>,
    ) -> Result<Finish, Problem> {
        let checked = service
            .checked_version(pb, &run.key, run.definition_version)
            .await?;
        let ending = match checked.as_deref().and_then(Checked::computation) {
            Some(document) => computation_ending(run, document.clone()).await,
            None => no_longer_parses(run),
        };
        Ok(Finish::at(ending, run.last_run_seq + 1))
    }

    async fn quiet_after_ms(&self, _: &Service, _: &PlaybookRef, _: &Run) -> Result<i64, Problem> {
        Ok(COMPUTATION_RUN_BOUND_MS)
    }

    async fn stop(
        &self,
        _: &Service,
        _: &PlaybookRef,
        run: &Run,
        _: &str,
        _: Option<&str>,
    ) -> Result<(), Problem> {
        Err(within_call(run))
    }
}

/// The runner of reasoning functions: `reasoning_runs` performs them from their own events.
pub(crate) struct Reasoning;

impl Function for Reasoning {
    /// "The run is recorded ... before the model is called": its `run_started` goes with its
    /// first model call's start, one commit.
    const RECORDS_WITH_FIRST_FACT: bool = true;

    async fn perform(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        unrecorded: Option<NewRun>,
    ) -> Result<Finish, Problem> {
        let checked = service
            .checked_version(pb, &run.key, run.definition_version)
            .await?;
        match checked.as_deref().and_then(Checked::reasoning) {
            Some(document) => {
                reasoning_runs::perform(
                    service.store.as_ref(),
                    &service.models,
                    &service.cancels,
                    &service.telemetry,
                    (pb, run, unrecorded),
                    document,
                )
                .await
            }
            None => Ok(Finish {
                unrecorded,
                ..Finish::at(no_longer_parses(run), run.last_run_seq + 1)
            }),
        }
    }

    async fn quiet_after_ms(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
    ) -> Result<i64, Problem> {
        let checked = service
            .checked_version(pb, &run.key, run.definition_version)
            .await?;
        Ok(match checked.as_deref().and_then(Checked::reasoning) {
            Some(document) => {
                i64::try_from(service.models.quiet_after(document).as_millis()).unwrap_or(i64::MAX)
            }
            None => 0,
        })
    }

    /// A tool-calling run that ended without succeeding is never run again under its id
    /// (reasoning page, "When a tool-calling run cannot finish").
    async fn never_again(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
    ) -> Result<Option<Problem>, Problem> {
        crate::reasoning_tools::tools_called(service.store.as_ref(), pb, run).await
    }

    async fn stop(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
        kind: Option<&str>,
    ) -> Result<(), Problem> {
        let order = CancelOrder::new(words, kind);
        if service.cancels.cancel(pb, &run.run_id, order.clone()) {
            // Going on in this server: its call ends at once, and the run with it.
            service.wait_in_flight(pb, &run.run_id).await;
        } else if self.is_quiet(service, pb, run).await? {
            // Going on nowhere: it ends now, a call left open ending as interrupted.
            let (ending, run_seq) =
                reasoning_runs::cancel_idle(service.store.as_ref(), pb, run, &order).await?;
            service.end(pb, run, run_seq, ending).await?;
        } else {
            // Going on in another server: it stops before its next model call.
            reasoning_runs::request_cancel(service.store.as_ref(), pb, run, &order).await?;
        }
        Ok(())
    }
}

/// The ending of a run whose version no longer passes this runtime's checks.
fn no_longer_parses(run: &Run) -> RunEnding {
    rejection(documents::no_longer_parses(&run.key), &run.run_id)
}

/// A computation's run: its input prepared, the program run, its output kept or refused. The
/// program runs here first, on the runtime's thread, within a brief budget, which is all most
/// programs need, and without the two thread switches a blocking thread costs (a tenth of a
/// three-call workflow's CPU); one that needs longer runs again from the start on a blocking
/// thread, with its whole budget.
pub(crate) async fn computation_ending(run: &Run, document: Arc<ComputationDocument>) -> RunEnding {
    let title = |what: &str| format!("The computation function {} {what}", run.key.name);
    let input = match prepared_input(
        &run.input,
        document.input_schema.as_ref(),
        document.input_default.as_ref(),
        &title("refused its input"),
    ) {
        Ok(input) => input,
        Err(problem) => return rejection(problem, &run.run_id),
    };
    let now_ms = run.started_at.timestamp_millis();
    let started = std::time::Instant::now();
    let result = match run_computation_briefly(&document, &input, now_ms) {
        Some(ran) => Ok(ran),
        None => {
            tokio::task::spawn_blocking(move || run_computation(&document, &input, now_ms)).await
        }
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    match result {
        Ok(Ok(output)) => succeeded(run, output, Some(json!({ "duration_ms": duration_ms }))),
        Ok(Err(unworkable)) => {
            let issues = unworkable
                .issues
                .iter()
                .map(|m| ProblemIssue::field("/output", m.clone()))
                .collect();
            let problem = Problem::conflict(title("could not give an output"), unworkable.detail)
                .with_kind("unworkable")
                .with_issues(issues);
            rejection(problem, &run.run_id)
        }
        Err(join) => rejection(Problem::internal(&join), &run.run_id),
    }
}

/// The refusal to cancel a run of a function that finishes within its call (computation,
/// recall, prediction): nothing is left to stop by the time a cancel could reach it.
pub(crate) fn within_call(run: &Run) -> Problem {
    Problem::conflict(
        "The run cannot be cancelled",
        format!(
            "The run {} is of a {} function, which finishes within its call; it cannot be cancelled.",
            run.run_id, run.key.def_type
        ),
    )
}
