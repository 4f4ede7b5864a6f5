//! Workflow runs: the shell around the engine's functional core (DESIGN §4).
//!
//! The engine (`auto_engine::workflow::engine`) turns `(snapshot, input, time)` into a new
//! snapshot, commands and step events, and reads no clock and does no I/O. This module is the
//! rest: it starts a run, commits each step in one store transaction (the snapshot
//! compare-and-set on its version, the step events, the run's ending, and the work the
//! commands make), and runs the scheduler that claims due work from the store: a timer that
//! fired, a child run to start and wait for, a child to cancel, a cancel of the run. A waiting
//! run holds no memory and no task, only its rows; a server that stops loses nothing, since the
//! next one claims the due work (a claim is a lease) and goes on.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use auto_engine::definitions::DefinitionType;
use auto_engine::workflow::engine::{
    self, CallOutcome, Command, Ending, Input, RunInfo, RunState, Step, Workflow,
};
use auto_store::{
    DefinitionKey, DefinitionVersion, NewEvent, NewListener, NewRun, NewWork, PlaybookRef, Run,
    RunEnding, RunStatus, StoreError, Work, WorkflowStep,
};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tracing::Instrument;

use crate::auth::{Caller, Role};
use crate::documents::{Checked, no_longer_parses};
use crate::problem::{Problem, Reason};
use crate::runner::Runner;
use crate::runs::{
    Ask, Lineage, RunAnswer, check_workflow_input, definition_not_found, ending_fact, fact,
    new_run, rejection, run_fact, started_fact, succeeded, taken,
};
use crate::service::{Service, store_problem};
use crate::work::{CancelCall, ChildEnded, Order, StartCall, WorkItem, ended_key};

mod calls;
mod scheduler;
mod stretch;

use scheduler::retrying_faults;
pub use scheduler::{
    IDLE_POLL, STORE_FAULT_PAUSE, STORE_FAULT_RETRIES, Scheduler, WORK_BATCH, WORK_LEASE,
    spawn_scheduler,
};
use stretch::Stretch;
pub use stretch::{STRETCH_CALLS_MAX, STRETCH_TIME_MS_MAX};

/// The key of a run's start as work: a run that earlier versions recorded apart from its first
/// step, which the scheduler takes.
const START_KEY: &str = "start";
/// "Calls above a run: 8": the deepest a run may sit below the workflow at the top.
pub const CALL_DEPTH_MAX: i64 = 8;
/// How many times a step whose snapshot another step changed first (another server's, or a
/// start's) is applied again at once, on the snapshot as it is then, before the item is left
/// for its lease.
const COMMIT_TRIES: usize = 32;

/// The work that hands an event sent to the run (`send_run_event`) to its workflow: one item
/// per event id, applied as soon as a server claims it.
pub(crate) fn event_work(event_id: &str, event: Value) -> NewWork {
    WorkItem::from(Input::EventReceived { event }).to_work(format!("event:{event_id}"), None)
}

/// The work that offers a run an event of the playbook its listening task heard: taken now
/// or let pass. Keyed as a sent event is, so the same event reaches the run once either way.
pub(crate) fn heard_work(event_id: &str, event: Value) -> NewWork {
    WorkItem::from(Input::EventHeard { event }).to_work(format!("event:{event_id}"), None)
}

/// The work and the cancelled keys the engine's commands make.
fn work_of(commands: &[Command]) -> (Vec<NewWork>, Vec<String>) {
    let mut add = Vec::new();
    let mut cancel = Vec::new();
    for command in commands {
        match command {
            Command::SetTimer { timer_id, due_ms } => add.push(
                WorkItem::from(Input::TimerFired {
                    timer_id: timer_id.clone(),
                })
                .to_work(
                    format!("timer:{timer_id}"),
                    chrono::DateTime::from_timestamp_millis(*due_ms),
                ),
            ),
            Command::CancelTimer { timer_id } => cancel.push(format!("timer:{timer_id}")),
            Command::StartCall {
                call_id,
                child_run_id,
                def_type,
                name,
                input,
                wait_ms,
            } => {
                let order = Order::StartCall(StartCall {
                    call_id: call_id.clone(),
                    child_run_id: child_run_id.clone(),
                    def_type: def_type.clone(),
                    name: name.clone(),
                    input: input.clone(),
                    wait_ms: *wait_ms,
                });
                add.push(WorkItem::from(order).to_work(format!("call:{call_id}"), None));
            }
            Command::CancelCall {
                call_id,
                child_run_id,
                kind,
            } => {
                cancel.push(format!("call:{call_id}"));
                let order = Order::CancelCall(CancelCall {
                    call_id: call_id.clone(),
                    child_run_id: child_run_id.clone(),
                    kind: kind.clone(),
                });
                add.push(WorkItem::from(order).to_work(format!("cancel:{call_id}"), None));
            }
            // Recorded with the step's events (`commit_of`), not as work.
            Command::EmitEvent { .. } => {}
        }
    }
    (add, cancel)
}

/// Which step of its run a stretch begins with.
enum At {
    /// The first step of a run recorded with it.
    Start(NewRun),
    /// The first step of a run recorded before it, whose start is the work item `work`.
    FirstStep { work: i64 },
    /// A step applying the work item `work` to the snapshot at `version`.
    Step { version: i64, work: i64 },
}

impl At {
    /// The work item the step applies.
    fn applying(&self) -> Option<i64> {
        match self {
            At::Start(_) => None,
            At::FirstStep { work } | At::Step { work, .. } => Some(*work),
        }
    }
}

/// Where a stretch happens: the run's workflow, what the engine knows of the run, and the
/// listen tasks under way before it.
struct Place<'a> {
    workflow: &'a Workflow,
    info: &'a RunInfo,
    listening_before: Vec<(String, Vec<Value>)>,
}

/// The run's ending as the store keeps it; an output past the 1 MiB a run keeps is
/// `conflict` kind `oversized`.
fn run_ending(run: &Run, ending: Ending) -> RunEnding {
    match ending {
        Ending::Succeeded { output } => succeeded(run, output, None),
        Ending::Rejected { problem } => rejection(problem, &run.run_id),
    }
}

/// "A start the server cannot take at that moment is refused unavailable: 'The workflow cannot
/// start now; try again shortly'": the store could not record it, and nothing was recorded.
fn cannot_start(name: &str, error: StoreError) -> Problem {
    match error {
        StoreError::Database(_) | StoreError::Commit(_) | StoreError::Locked(_) => {
            tracing::warn!(%error, workflow = %name, "a workflow's start could not be recorded");
            Problem::new(
                Reason::Unavailable,
                format!("The workflow {name} cannot start now"),
                "The workflow cannot start now; try again shortly",
            )
        }
        other => store_problem(other),
    }
}

/// The runner of workflows: "A workflow runs once for each run id": a request with the id of
/// a run gets the run as it stands, and a run rejected as unavailable or failed is not run
/// again.
pub(crate) struct Workflows;

impl Runner for Workflows {
    async fn begin(
        &self,
        service: &Service,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        ask: Ask,
        definition: &DefinitionVersion,
    ) -> Result<RunAnswer, Problem> {
        check_workflow_input(&key.name, &ask.input)?;
        service
            .start_workflow(caller, pb, key, ask, definition)
            .await
    }

    async fn again(
        &self,
        _: &Service,
        _: &PlaybookRef,
        _: &DefinitionKey,
        run: Run,
    ) -> Result<RunAnswer, Problem> {
        let unavailable = run
            .problem
            .as_ref()
            .is_some_and(|p| p["reason"] == "unavailable");
        if run.status == RunStatus::Failed || (run.status == RunStatus::Rejected && unavailable) {
            return Err(Problem::conflict(
                "The run id is used",
                format!(
                    "The workflow run {} ended {} and a workflow runs once for each run id; start a new run under a new run id.",
                    run.run_id,
                    run.status.as_str()
                ),
            ));
        }
        Ok(crate::runs::answer_of(&run))
    }

    async fn cancel(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
        kind: Option<&str>,
    ) -> Result<(), Problem> {
        service.cancel_workflow(pb, run, words, kind).await
    }
}

impl Service {
    /// The parsed workflow of a run's version.
    async fn workflow_of(&self, pb: &PlaybookRef, run: &Run) -> Result<Arc<Workflow>, Problem> {
        self.checked_version(pb, &run.key, run.definition_version)
            .await?
            .as_deref()
            .and_then(Checked::workflow)
            .cloned()
            .ok_or_else(|| no_longer_parses(&run.key))
    }

    fn run_info(&self, run: &Run) -> RunInfo {
        let mut info = RunInfo::new(
            run.run_id.clone(),
            json!({ "type": "workflow", "name": run.key.name, "version": run.definition_version }),
            run.started_at.timestamp_millis(),
        );
        info.run_duration_ms = self.limits.workflow_max_duration_ms;
        // "The longest run of any function other than a workflow": an interaction that asks
        // a person may wait as long as a run may last, so the deployment's limit.
        info.function_default_ms = self.limits.workflow_max_duration_ms;
        info
    }

    /// How long a run of a checked interaction or reasoning function may last: "its model's
    /// deadline, or its tool loop's bound when it names tools" (the loop's many calls, not
    /// one); an interaction that asks a person, as long as it may wait.
    fn longest_run_ms(&self, checked: &Checked) -> Option<u64> {
        let longest = match checked {
            Checked::Interaction(document) => return Some(document.longest_run_ms()),
            Checked::Reasoning(document) => {
                let mut longest = self.models.quiet_after(document);
                if !document.tools.is_empty() {
                    let tokens = crate::reasoning_runs::max_output_tokens(document);
                    longest = longest.max(self.models.run_bound(tokens));
                }
                longest
            }
            _ => return None,
        };
        Some(u64::try_from(longest.as_millis()).unwrap_or(u64::MAX))
    }

    /// "Calling a function": the function's own maximum for each definition the workflow
    /// names, settled when the run starts. A definition not saved yet, or of a type without a
    /// bound of its own here, takes the engine's default (the longest a run may last).
    async fn functions_ms(
        &self,
        pb: &PlaybookRef,
        workflow: &Workflow,
    ) -> std::collections::BTreeMap<String, u64> {
        let mut bounds = std::collections::BTreeMap::new();
        for used in &workflow.document().uses {
            let Some((def_type, name)) = used.split_once('/') else {
                continue;
            };
            let bound = match def_type {
                "computation" => Some(auto_script::PROGRAM_TIME_MS_MAX),
                "interaction" | "reasoning" => {
                    let key = DefinitionKey::new(def_type, name);
                    match self.store.get_definition(pb, &key).await {
                        Ok(Some(saved)) => self
                            .checked(pb, &key, saved.version, &saved.source)
                            .and_then(|checked| self.longest_run_ms(&checked)),
                        _ => None,
                    }
                }
                _ => None,
            };
            if let Some(bound) = bound {
                bounds.insert(used.clone(), bound);
            }
        }
        bounds
    }

    /// The store's form of one stretch `at` its place in the run: its events numbered after
    /// `run`'s, with the facts of the children it performed where they happened, its ending
    /// fact, the work its commands make, and the run itself when it is recorded with it.
    fn commit_of(
        &self,
        run: &Run,
        place: &Place<'_>,
        stretch: Stretch,
        at: &At,
    ) -> Result<WorkflowStep, Problem> {
        let Place {
            workflow,
            listening_before,
            ..
        } = place;
        let Stretch {
            step,
            performed,
            endings,
        } = stretch;
        // The listen tasks that began or stopped hearing the playbook's events with the step.
        let listening_after = engine::listening(workflow, &step.state);
        let listen = listening_after
            .iter()
            .filter(|(pointer, _)| !listening_before.iter().any(|(p, _)| p == pointer))
            .map(|(pointer, filters)| NewListener {
                reference: pointer.clone(),
                filters: Value::Array(filters.clone()),
            })
            .collect();
        let unlisten = listening_before
            .iter()
            .filter(|(pointer, _)| !listening_after.iter().any(|(p, _)| p == pointer))
            .map(|(pointer, _)| pointer.clone())
            .collect();
        let mut seq = run.last_run_seq;
        let mut events: Vec<NewEvent> = Vec::new();
        let mut children = Vec::new();
        let mut performed = performed.into_iter().peekable();
        for (at, e) in step.events.into_iter().enumerate() {
            while let Some(child) = performed.next_if(|child| child.after == at) {
                events.extend(child.events);
                children.push(child.child);
            }
            seq += 1;
            events.push(run_fact(run, seq, &e.event_type, e.data));
        }
        for child in performed {
            events.extend(child.events);
            children.push(child.child);
        }
        // "An emit task records an event in the playbook, as publish_event would", in the
        // same transaction as the step that emitted it.
        for command in &step.commands {
            if let Command::EmitEvent { event } = command {
                events.push(crate::events::emitted(run, event)?);
            }
        }
        let ending = step.ending.map(|ending| run_ending(run, ending));
        if let Some(ending) = &ending {
            events.push(ending_fact(run, seq + 1, ending));
        }
        let mut commands = step.commands;
        if ending.is_some() {
            // "An ended run waits for nothing": the timers the stretch set (the run's overrun
            // among them) would only wait to be dropped.
            commands.retain(|command| !matches!(command, Command::SetTimer { .. }));
        }
        let (mut add_work, cancel_work) = work_of(&commands);
        add_work.extend(endings);
        let state = serde_json::to_value(&step.state).map_err(|e| Problem::internal(&e))?;
        let (expected_version, start) = match at {
            At::Start(new) => {
                events.insert(0, started_fact(new, 1));
                (None, Some(new.clone()))
            }
            At::FirstStep { .. } => (None, None),
            At::Step { version, .. } => (Some(*version), None),
        };
        Ok(WorkflowStep {
            expected_version,
            state,
            events,
            add_work,
            done_work: at.applying(),
            cancel_work,
            listen,
            unlisten,
            ending,
            children,
            start,
        })
    }

    /// Takes a run's first step with its input, the functions it calls bounded as they stand
    /// now, and commits the stretch it begins.
    async fn first_step_of(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        workflow: &Workflow,
        input: Value,
        at: &At,
    ) -> Result<Result<Option<Run>, StoreError>, Problem> {
        let mut info = self.run_info(run);
        info.functions_ms = self.functions_ms(pb, workflow).await;
        let now_ms = chrono::Utc::now().timestamp_millis();
        let step = engine::start(workflow, &info, input, now_ms);
        let place = Place {
            workflow,
            info: &info,
            listening_before: Vec::new(),
        };
        self.commit_stretch(pb, run, place, step, at).await
    }

    /// Commits the stretch that begins with `step` in one transaction, `at` its place in the
    /// run. A stretch whose performed children the
    /// store could not record, past its passing faults, is committed again without them: its
    /// calls go through the queue, which tells each call what came of its child. The outer
    /// `Err` is a step that could not be put in the store's form.
    async fn commit_stretch(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        place: Place<'_>,
        step: Step,
        at: &At,
    ) -> Result<Result<Option<Run>, StoreError>, Problem> {
        let performs = step.commands.iter().any(stretch::may_perform);
        let unperformed = performs.then(|| step.clone());
        let stretch = self.stretch(pb, run, &place, step, at.applying()).await;
        let performed = !stretch.performed.is_empty();
        let mut committed = self.commit_once(pb, run, &place, stretch, at).await?;
        // A conflict is another step's, which the caller applies this input after; but a
        // run recorded with this stretch has no other step: the conflict is a child's id.
        let retry = |error: &StoreError| {
            !matches!(error, StoreError::Conflict(_)) || matches!(at, At::Start(_))
        };
        if let (Err(error), true, Some(step)) = (&committed, performed, unperformed)
            && retry(error)
        {
            tracing::warn!(
                run_id = %run.run_id,
                %error,
                "the children a step performed could not be recorded; its calls go through the queue"
            );
            let stretch = Stretch::unperformed(step);
            committed = self.commit_once(pb, run, &place, stretch, at).await?;
        }
        Ok(committed)
    }

    /// Commits a stretch once, past the store's passing faults, and wakes what its commit
    /// concerns; the run as the commit left it, when it recorded or ended the run.
    async fn commit_once(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        place: &Place<'_>,
        stretch: Stretch,
        at: &At,
    ) -> Result<Result<Option<Run>, StoreError>, Problem> {
        let commit = self.commit_of(run, place, stretch, at)?;
        let adds_work = !commit.add_work.is_empty();
        let counted = crate::telemetry::tally(&commit.events);
        // Shared with each attempt, not copied for it.
        let commit = Arc::new(commit);
        let committed = retrying_faults(StoreError::is_transient, || {
            self.store
                .commit_workflow_step(pb, &run.run_id, Arc::clone(&commit))
        })
        .await;
        if let Ok(step) = &committed {
            self.telemetry.count(counted, step.run.as_ref());
            if adds_work {
                self.scheduler.wake();
            }
            self.triggers.wake_if_active();
        }
        Ok(committed.map(|committed| committed.run))
    }

    /// Starts a new workflow run and takes its first step: 200 when it ended before its first
    /// wait, 202 while it goes on.
    pub(crate) async fn start_workflow(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        ask: Ask,
        definition: &DefinitionVersion,
    ) -> Result<RunAnswer, Problem> {
        let version = definition.version;
        let workflow = self
            .checked(pb, key, version, &definition.source)
            .as_deref()
            .and_then(Checked::workflow)
            .cloned()
            .ok_or_else(|| no_longer_parses(key))?;
        let (new, run) = self
            .run_to_record(caller, key, version, ask)
            .await
            .map_err(|error| cannot_start(&key.name, error))?;
        // The run and its first step are one transaction: a run is never recorded without it.
        let committed = self
            .first_step_of(pb, &run, &workflow, run.input.clone(), &At::Start(new))
            .await?
            .map_err(|error| match error {
                StoreError::Conflict(_) => taken(error),
                other => cannot_start(&key.name, other),
            })?;
        // A step that records its run gives it back as recorded (or ended).
        let run =
            committed.ok_or_else(|| Problem::internal(&"a workflow's first step gave no run"))?;
        Ok(crate::runs::answer_of(&run))
    }

    /// Asks a workflow run to stop: recorded at once as work of the run, so it outlasts a
    /// restart; the run ends cancelled within a moment.
    pub(crate) async fn cancel_workflow(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
        kind: Option<&str>,
    ) -> Result<(), Problem> {
        let mut event = fact(
            &run.run_id,
            0,
            "run_cancel_requested",
            &run.key,
            &run.started_by,
            run.definition_version,
        );
        event.run_seq = None;
        event.data = Some(json!({ "detail": words, "kind": kind.unwrap_or("requested") }));
        self.store
            .record_run_events(pb, &run.run_id, vec![event])
            .await
            .map_err(taken)?;
        self.store
            .add_work(
                pb,
                &run.run_id,
                vec![
                    WorkItem::from(Input::Cancel {
                        detail: words.to_owned(),
                        kind: kind.map(str::to_owned),
                    })
                    .to_work("cancel", None),
                ],
            )
            .await
            .map_err(store_problem)?;
        self.scheduler.wake();
        Ok(())
    }

    /// Carries out one claimed item: whether it was done. A commit another server won, or a
    /// run that ended, drops the item; after a fault, an ordered input is tried again before
    /// its run's next (`apply_in_turn`), and an order is claimed again once its lease ends.
    async fn handle_work(&self, item: &Work) -> bool {
        let span = tracing::info_span!(
            "step",
            org = %item.playbook.org,
            playbook = %item.playbook.playbook,
            run_id = %item.run_id,
            key = %item.key
        );
        match WorkItem::read_traced(&item.payload) {
            Ok((read, trace)) => {
                // The step goes on in the trace of the span that left the work.
                crate::work::continue_trace(&span, &trace);
                self.carry_out(item, read).instrument(span).await
            }
            Err(error) => {
                let _entered = span.enter();
                // Kept, to be read by a server that can (a later version), and told once: it
                // is claimed again later.
                if self.scheduler.count_unreadable(item.id) {
                    tracing::error!(
                        run_id = %item.run_id,
                        key = %item.key,
                        %error,
                        "a work item this server cannot read is kept for one that can"
                    );
                }
                false
            }
        }
    }

    /// Carries out a claimed item that was read.
    async fn carry_out(&self, item: &Work, read: WorkItem) -> bool {
        let outcome = match read {
            WorkItem::Input(input) => self.apply_input(item, input).await,
            WorkItem::Order(Order::StartCall(call)) => self.start_call(item, call).await,
            WorkItem::Order(Order::CancelCall(call)) => self.cancel_call(item, &call).await,
            WorkItem::Order(Order::ChildEnded(ended)) => self.child_ended(item, ended).await,
            WorkItem::Order(Order::ExpireRequest(expiry)) => {
                self.expire_request(item, &expiry.request_id).await
            }
            WorkItem::Order(Order::DeliverRequest(delivery)) => {
                self.deliver_request(item, &delivery).await
            }
        };
        if let Err(problem) = outcome {
            tracing::warn!(
                run_id = %item.run_id,
                key = %item.key,
                detail = %problem.detail,
                "a workflow's work could not be done; it is claimed again later"
            );
            return false;
        }
        true
    }

    /// Applies an input to its run's snapshot and commits the step.
    async fn apply_input(&self, item: &Work, input: Input) -> Result<(), Problem> {
        let pb = &item.playbook;
        for _ in 0..COMMIT_TRIES {
            let run = self
                .store
                .get_run(pb, &item.run_id)
                .await
                .map_err(store_problem)?;
            let Some(run) = run.filter(|r| r.status == RunStatus::Started) else {
                // A start whose run was never recorded (its request failed) is dropped once
                // it is old; until then the request that added it may still record the run.
                let young = item.key == START_KEY
                    && chrono::Utc::now() - item.due_at < chrono::Duration::minutes(1);
                if young {
                    return Ok(());
                }
                return self.store.finish_work(item.id).await.map_err(store_problem);
            };
            let snapshot = self
                .store
                .get_workflow_state(pb, &run.run_id)
                .await
                .map_err(store_problem)?;
            let Some((version, state)) = snapshot else {
                if let Input::Start { input } = &input {
                    return self.first_step(pb, &run, input.clone(), item.id).await;
                }
                return Err(Problem::internal(&"a started workflow run has no snapshot"));
            };
            let workflow = match self.workflow_of(pb, &run).await {
                Ok(workflow) => workflow,
                Err(problem) if problem.reason == Reason::Conflict => {
                    let snapshot = Some((version, state));
                    match self
                        .end_unparsed(pb, item.id, &run, snapshot, problem)
                        .await?
                    {
                        true => return Ok(()),
                        // Another step came first: apply the input on the run as it is now.
                        false => continue,
                    }
                }
                Err(other) => return Err(other),
            };
            let state: RunState =
                serde_json::from_value(state).map_err(|e| Problem::internal(&e))?;
            let now_ms = chrono::Utc::now().timestamp_millis();
            let before = engine::listening(&workflow, &state);
            let info = self.run_info(&run);
            let step = engine::apply(&workflow, &info, state, input.clone(), now_ms);
            let place = Place {
                workflow: &workflow,
                info: &info,
                listening_before: before,
            };
            let at = At::Step {
                version,
                work: item.id,
            };
            match self.commit_stretch(pb, &run, place, step, &at).await? {
                Ok(_) => return Ok(()),
                // Another step of the run committed first (a timer and a call's ending at
                // once): read the run again and apply this input after it.
                Err(StoreError::Conflict(_)) => continue,
                Err(other) => return Err(store_problem(other)),
            }
        }
        Err(Problem::internal(&"a workflow step kept conflicting"))
    }

    /// The first step of a run whose server stopped before taking it.
    async fn first_step(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        input: Value,
        work_id: i64,
    ) -> Result<(), Problem> {
        let workflow = match self.workflow_of(pb, run).await {
            Ok(workflow) => workflow,
            Err(problem) if problem.reason == Reason::Conflict => {
                // Another server that took the first step meanwhile has this run.
                return self
                    .end_unparsed(pb, work_id, run, None, problem)
                    .await
                    .map(|_| ());
            }
            Err(other) => return Err(other),
        };
        match self
            .first_step_of(pb, run, &workflow, input, &At::FirstStep { work: work_id })
            .await?
        {
            // Another server took the first step: this start is spent.
            Ok(_) | Err(StoreError::Conflict(_)) => {
                self.scheduler.wake();
                Ok(())
            }
            Err(other) => Err(store_problem(other)),
        }
    }

    /// Ends a run whose version no longer parses (a deployment's limits became stricter since
    /// it was saved) as `failed`: the runtime cannot go on with it, and it would otherwise be
    /// claimed again at every lease. The problem says why, in the words a start gives.
    /// `false` when another step of the run committed first.
    async fn end_unparsed(
        &self,
        pb: &PlaybookRef,
        work_id: i64,
        run: &Run,
        snapshot: Option<(i64, Value)>,
        unparsed: Problem,
    ) -> Result<bool, Problem> {
        let mut problem = Problem::new(Reason::Failed, unparsed.title, unparsed.detail);
        problem.run_id = Some(run.run_id.clone());
        let ending = RunEnding {
            status: RunStatus::Failed,
            output: None,
            record: None,
            problem: Some(serde_json::to_value(&problem).map_err(|e| Problem::internal(&e))?),
        };
        let (expected_version, state) = match snapshot {
            Some((version, state)) => (Some(version), state),
            None => (None, json!({})),
        };
        let step = WorkflowStep {
            expected_version,
            state,
            events: vec![ending_fact(run, run.last_run_seq + 1, &ending)],
            add_work: Vec::new(),
            done_work: Some(work_id),
            cancel_work: Vec::new(),
            listen: Vec::new(),
            unlisten: Vec::new(),
            ending: Some(ending),
            children: Vec::new(),
            start: None,
        };
        let counted = crate::telemetry::tally(&step.events);
        match self
            .store
            .commit_workflow_step(pb, &run.run_id, Arc::new(step))
            .await
        {
            Ok(committed) => {
                self.telemetry.count(counted, committed.run.as_ref());
                self.triggers.wake_if_active();
                Ok(true)
            }
            Err(StoreError::Conflict(_)) => Ok(false),
            Err(other) => Err(store_problem(other)),
        }
    }
}

/// Whether a type's runs go through this module.
pub fn is_workflow(def_type: &str) -> bool {
    def_type == DefinitionType::Workflow.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Caller;
    use crate::limits::RunLimits;

    /// A service on an in-memory store with these tool servers (`[[tool_servers]]` entries)
    /// and limits, with the playbook acme/main.
    async fn service(tool_servers: &[toml::Table], limits: RunLimits) -> (Service, PlaybookRef) {
        let mut models = crate::reasoning_runs::Models::none();
        models.tools = auto_tools::ToolServers::from_config(tool_servers).expect("tool servers");
        let store = auto_store::open("sqlite::memory:").await.expect("a store");
        let service = Service::new(
            store,
            crate::server_checkers_with(limits.workflow_max_duration_ms),
        )
        .with_models(models)
        .with_limits(limits);
        let caller = Caller::local();
        let org = serde_json::from_value(json!({ "id": "acme" })).expect("a body");
        service.create_org(&caller, org).await.expect("org");
        let playbook = serde_json::from_value(json!({ "id": "main" })).expect("a body");
        service
            .create_playbook(&caller, "acme", playbook)
            .await
            .expect("playbook");
        (service, PlaybookRef::new("acme", "main"))
    }

    async fn save(service: &Service, pb: &PlaybookRef, def_type: &str, name: &str, source: &str) {
        let body = json!({"type": def_type, "name": name, "source": source, "diagram": "none"});
        service
            .create_definition(
                &Caller::local(),
                pb,
                serde_json::from_value(body).expect("a body"),
            )
            .await
            .unwrap_or_else(|problem| panic!("{name}: {problem:?}"));
    }

    const HEADER: &str =
        "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: flow\n  version: 1.0.0\n";

    /// "A reasoning function that names tools is waited for as long as its tool loop may last
    /// (10 minutes)", not one model call and a tool's timeout; one without tools, as one call.
    #[tokio::test]
    async fn a_tool_calling_function_is_waited_for_as_long_as_its_tool_loop() {
        let mcp = auto_testkit::McpDouble::start().await;
        let graph = toml::from_str(&format!(
            "name = \"graph\"\nurl = \"{}\"\norgs = [\"acme\"]\n",
            mcp.url()
        ))
        .expect("a table");
        let (service, pb) = service(&[graph], RunLimits::default()).await;
        let finder = "---\nmodel: anthropic/claude-sonnet-4-5\ntools: [graph/lookup]\n---\nFind {{ input.q }}.\n";
        let plain = "---\nmodel: anthropic/claude-sonnet-4-5\n---\nSay {{ input.q }}.\n";
        save(&service, &pb, "reasoning", "finder", finder).await;
        save(&service, &pb, "reasoning", "plain", plain).await;
        let calls = "do:\n  - find:\n      call: run_definition\n      with: { type: reasoning, name: finder }\n  - say:\n      call: run_definition\n      with: { type: reasoning, name: plain }\n";
        let key = DefinitionKey::new("workflow", "flow");
        let checked = service
            .checked(&pb, &key, 1, &format!("{HEADER}{calls}"))
            .expect("a workflow");
        let workflow = checked.workflow().expect("a workflow");
        let bounds = service.functions_ms(&pb, workflow).await;
        let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap();
        let plain_document = auto_engine::reasoning::check_reasoning(plain).expect("checked");
        assert_eq!(
            bounds["reasoning/plain"],
            ms(service.models.quiet_after(&plain_document))
        );
        assert_eq!(
            bounds["reasoning/finder"],
            auto_tools::limits::RUN_BOUND_MS,
            "{bounds:?}"
        );
    }

    /// "A task whose with.type or with.name is an expression waits as long as the longest run
    /// of any function other than a workflow, plus one minute": the deployment's longest run,
    /// here 60 days rather than the default 30.
    #[tokio::test]
    async fn a_call_whose_target_is_an_expression_waits_the_deployments_longest_run() {
        let limits = RunLimits {
            workflow_max_duration_ms: 60 * 24 * 3_600_000,
            ..RunLimits::default()
        };
        let (service, pb) = service(&[], limits).await;
        let body = "do:\n  - pick:\n      call: run_definition\n      with: { type: computation, name: '${ $data.name }' }\n";
        save(
            &service,
            &pb,
            "workflow",
            "pick",
            &format!("{HEADER}{body}"),
        )
        .await;
        let now = chrono::Utc::now();
        let run = Run {
            run_id: "p-1".into(),
            key: DefinitionKey::new("workflow", "pick"),
            definition_version: 1,
            status: RunStatus::Started,
            input: json!({"name": "double"}),
            output: None,
            record: None,
            problem: None,
            started_by: "local".into(),
            parent_run_id: None,
            task_reference: None,
            depth: None,
            call_depth: None,
            trigger: None,
            parent_call_id: None,
            root_run_id: None,
            attempt: 1,
            last_run_seq: 1,
            last_event_at: now,
            started_at: now,
            ended_at: None,
        };
        let workflow = service
            .workflow_of(&pb, &run)
            .await
            .expect("the saved workflow");
        assert_eq!(workflow.document().uses, Vec::<String>::new());
        let info = service.run_info(&run);
        assert_eq!(info.function_default_ms, 60 * 24 * 3_600_000);
        assert_eq!(info.run_duration_ms, 60 * 24 * 3_600_000);
    }
}
