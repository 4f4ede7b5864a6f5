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

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use auto_engine::definitions::DefinitionType;
use auto_engine::workflow::engine::{
    self, CallOutcome, Command, Ending, Input, RunInfo, RunState, Step, Workflow,
};
use auto_store::{
    DefinitionKey, DefinitionVersion, NewEvent, NewRun, NewWork, PlaybookRef, Run, RunEnding,
    RunStatus, StoreError, Work, WorkflowStep,
};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::api::RunDefinition;
use crate::auth::{Caller, Role};
use crate::problem::{Problem, Reason};
use crate::runs::{OUTPUT_BYTES_MAX, RunAnswer, ending_fact, fact, taken};
use crate::service::{Service, store_problem};

/// How long a server holds the work it claimed; past it, another server may take it. A call
/// whose child runs longer may be claimed again meanwhile: the child's derived run id makes the
/// second claim find the same run rather than start another, and its ending is added once.
pub const WORK_LEASE: Duration = Duration::from_secs(30);
/// How many items one claim takes.
pub const WORK_BATCH: u32 = 32;
/// The longest the scheduler sleeps without looking for due work.
pub const IDLE_POLL: Duration = Duration::from_millis(500);
/// How often a call whose child goes on past its request looks at the child again.
pub const CHILD_POLL: Duration = Duration::from_millis(500);
/// Parsed workflows kept, by playbook, name and version.
const WORKFLOW_CACHE_MAX: usize = 1_000;
/// The key of a run's start as work, and how long after the request it falls due.
const START_KEY: &str = "start";
const START_GRACE: chrono::Duration = chrono::Duration::seconds(10);
/// How many steps a run may take at once before a retry of its commit gives up.
const COMMIT_TRIES: usize = 3;

/// Parsed workflows, by playbook, name and version.
type WorkflowCache = HashMap<(PlaybookRef, String, i64), Arc<Workflow>>;

/// What wakes the scheduler, and the workflows it parsed.
#[derive(Clone, Debug, Default)]
pub struct Scheduler {
    wake: Arc<Notify>,
    workflows: Arc<Mutex<WorkflowCache>>,
}

impl Scheduler {
    /// Tells the scheduler that work was added.
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}

/// Runs the scheduler of this server until the process ends.
pub fn spawn_scheduler(service: Service) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let claimed = match service.store.claim_work(WORK_LEASE, WORK_BATCH).await {
                Ok(claimed) => claimed,
                Err(error) => {
                    tracing::warn!(%error, "the scheduler cannot claim work");
                    tokio::time::sleep(IDLE_POLL).await;
                    continue;
                }
            };
            if claimed.is_empty() {
                let wait = match service.store.next_work_due().await {
                    Ok(Some(due)) => (due - chrono::Utc::now())
                        .to_std()
                        .unwrap_or(Duration::ZERO)
                        .min(IDLE_POLL),
                    _ => IDLE_POLL,
                };
                tokio::select! {
                    () = service.scheduler.wake.notified() => {}
                    () = tokio::time::sleep(wait.max(Duration::from_millis(5))) => {}
                }
                continue;
            }
            for item in claimed {
                let service = service.clone();
                tokio::spawn(async move { service.handle_work(item).await });
            }
        }
    })
}

/// A work item's payload, as this module writes it.
fn input_payload(input: &Input) -> Value {
    match input {
        Input::Start { input } => json!({ "input": "start", "value": input }),
        Input::TimerFired { timer_id } => json!({ "input": "timer", "timer_id": timer_id }),
        Input::Cancel { detail } => json!({ "input": "cancel", "detail": detail }),
        Input::CallEnded { call_id, outcome } => {
            let outcome = match outcome {
                CallOutcome::Succeeded { output } => json!({ "output": output }),
                CallOutcome::Rejected { problem } => json!({ "problem": problem }),
            };
            json!({ "input": "call_ended", "call_id": call_id, "outcome": outcome })
        }
    }
}

fn input_of(payload: &Value) -> Option<Input> {
    let text = |key: &str| payload[key].as_str().map(str::to_owned);
    Some(match payload["input"].as_str()? {
        "start" => Input::Start {
            input: payload["value"].clone(),
        },
        "timer" => Input::TimerFired {
            timer_id: text("timer_id")?,
        },
        "cancel" => Input::Cancel {
            detail: text("detail").unwrap_or_default(),
        },
        "call_ended" => Input::CallEnded {
            call_id: text("call_id")?,
            outcome: match payload["outcome"].get("problem") {
                Some(problem) => CallOutcome::Rejected {
                    problem: problem.clone(),
                },
                None => CallOutcome::Succeeded {
                    output: payload["outcome"]["output"].clone(),
                },
            },
        },
        _ => return None,
    })
}

/// The work and the cancelled keys the engine's commands make.
fn work_of(commands: &[Command]) -> (Vec<NewWork>, Vec<String>) {
    let mut add = Vec::new();
    let mut cancel = Vec::new();
    for command in commands {
        match command {
            Command::SetTimer { timer_id, due_ms } => add.push(NewWork {
                key: format!("timer:{timer_id}"),
                due_at: chrono::DateTime::from_timestamp_millis(*due_ms),
                payload: input_payload(&Input::TimerFired {
                    timer_id: timer_id.clone(),
                }),
            }),
            Command::CancelTimer { timer_id } => cancel.push(format!("timer:{timer_id}")),
            Command::StartCall {
                call_id,
                child_run_id,
                def_type,
                name,
                input,
                wait_ms,
            } => add.push(NewWork {
                key: format!("call:{call_id}"),
                due_at: None,
                payload: json!({ "start_call": {
                    "call_id": call_id, "child_run_id": child_run_id, "type": def_type,
                    "name": name, "input": input, "wait_ms": wait_ms,
                }}),
            }),
            Command::CancelCall {
                call_id,
                child_run_id,
                kind,
            } => {
                cancel.push(format!("call:{call_id}"));
                add.push(NewWork {
                    key: format!("cancel:{call_id}"),
                    due_at: None,
                    payload: json!({ "cancel_call": {
                        "call_id": call_id, "child_run_id": child_run_id, "kind": kind,
                    }}),
                });
            }
        }
    }
    (add, cancel)
}

/// The run's ending as the store keeps it; an output past the 1 MiB a run keeps is
/// `conflict` kind `oversized`.
fn run_ending(run: &Run, ending: Ending) -> RunEnding {
    match ending {
        Ending::Succeeded { output } => {
            let bytes = serde_json::to_vec(&output).map_or(usize::MAX, |b| b.len());
            if bytes > OUTPUT_BYTES_MAX {
                let mut problem = Problem::conflict(
                    format!("The workflow {} gave an output too large", run.key.name),
                    format!(
                        "The output holds {bytes} bytes as JSON; a run keeps at most 1,048,574."
                    ),
                )
                .with_kind("oversized");
                problem.run_id = Some(run.run_id.clone());
                return RunEnding {
                    status: RunStatus::Rejected,
                    output: None,
                    record: None,
                    problem: serde_json::to_value(&problem).ok(),
                };
            }
            RunEnding {
                status: RunStatus::Succeeded,
                output: Some(output),
                record: None,
                problem: None,
            }
        }
        Ending::Rejected { mut problem } => {
            problem["run_id"] = json!(run.run_id);
            let failed = problem["reason"] == "failed";
            RunEnding {
                status: if failed {
                    RunStatus::Failed
                } else {
                    RunStatus::Rejected
                },
                output: None,
                record: None,
                problem: Some(problem),
            }
        }
    }
}

/// The caller a run acts for: who started it, within its org.
fn caller_of(run: &Run, pb: &PlaybookRef) -> Caller {
    if run.started_by == crate::auth::LOCAL_CALLER {
        return Caller::local();
    }
    Caller {
        id: run.started_by.clone(),
        org: Some(pb.org.clone()),
        role: Role::Runner,
    }
}

impl Service {
    /// The parsed workflow of a run's version.
    async fn workflow_of(&self, pb: &PlaybookRef, run: &Run) -> Result<Arc<Workflow>, Problem> {
        let slot = (pb.clone(), run.key.name.clone(), run.definition_version);
        if let Some(found) = self
            .scheduler
            .workflows
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&slot)
        {
            return Ok(found.clone());
        }
        let version = self
            .store
            .get_definition_version(pb, &run.key, run.definition_version)
            .await
            .map_err(store_problem)?
            .ok_or_else(|| Problem::internal(&"a run's definition version is missing"))?;
        let workflow = Workflow::from_source(&version.source).map_err(|_| {
            Problem::conflict(
                format!("The workflow {} no longer parses", run.key.name),
                "Its document no longer passes the checks of this runtime; save a new version.",
            )
        })?;
        let workflow = Arc::new(workflow);
        let mut cache = self
            .scheduler
            .workflows
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if cache.len() >= WORKFLOW_CACHE_MAX {
            cache.clear();
        }
        cache.insert(slot, workflow.clone());
        Ok(workflow)
    }

    fn run_info(&self, run: &Run) -> RunInfo {
        RunInfo::new(
            run.run_id.clone(),
            json!({ "type": "workflow", "name": run.key.name, "version": run.definition_version }),
            run.started_at.timestamp_millis(),
        )
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
                "interaction" => {
                    let key = DefinitionKey::new(def_type, name);
                    match self.store.get_definition(pb, &key).await {
                        Ok(Some(definition)) => {
                            crate::interaction_runs::saved_interaction(&definition.source)
                                .map(|document| document.longest_run_ms())
                        }
                        _ => None,
                    }
                }
                "reasoning" => {
                    let key = DefinitionKey::new(def_type, name);
                    match self.store.get_definition(pb, &key).await {
                        Ok(Some(definition)) => {
                            auto_engine::reasoning::check_reasoning(&definition.source)
                                .ok()
                                .map(|document| {
                                    u64::try_from(self.models.quiet_after(&document).as_millis())
                                        .unwrap_or(u64::MAX)
                                })
                        }
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

    /// The store's form of one step: its events numbered after `run`'s, its ending fact, the
    /// work its commands make.
    fn commit_of(
        &self,
        run: &Run,
        step: Step,
        expected_version: Option<i64>,
        done_work: Option<i64>,
    ) -> Result<WorkflowStep, Problem> {
        let mut seq = run.last_run_seq;
        let mut events: Vec<NewEvent> = step
            .events
            .into_iter()
            .map(|e| {
                seq += 1;
                let mut event = fact(
                    &run.run_id,
                    seq,
                    &e.event_type,
                    &run.key,
                    &run.started_by,
                    run.definition_version,
                );
                event.data = Some(e.data);
                event
            })
            .collect();
        let ending = step.ending.map(|ending| run_ending(run, ending));
        if let Some(ending) = &ending {
            events.push(ending_fact(run, seq + 1, ending));
        }
        let (add_work, cancel_work) = work_of(&step.commands);
        let state = serde_json::to_value(&step.state).map_err(|e| Problem::internal(&e))?;
        Ok(WorkflowStep {
            expected_version,
            state,
            events,
            add_work,
            done_work,
            cancel_work,
            ending,
        })
    }

    /// Starts a new workflow run and takes its first step: 200 when it ended before its first
    /// wait, 202 while it goes on.
    pub(crate) async fn start_workflow(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        run_id: &str,
        input: Value,
        definition: &DefinitionVersion,
    ) -> Result<RunAnswer, Problem> {
        let (version, source) = (definition.version, definition.source.as_str());
        let workflow = Workflow::from_source(source).map_err(|_| {
            Problem::conflict(
                format!("The workflow {} no longer parses", key.name),
                "Its document no longer passes the checks of this runtime; save a new version.",
            )
        })?;
        if let Some(reference) = workflow.unsupported() {
            return Err(Problem::new(
                Reason::Unavailable,
                format!("The workflow {} cannot run yet", key.name),
                format!(
                    "This runtime cannot run listen and emit tasks yet; the workflow has one at {reference}."
                ),
            )
            .with_kind("not_runnable"));
        }
        let new = NewRun {
            run_id: run_id.into(),
            key: key.clone(),
            definition_version: version,
            input: input.clone(),
            started_by: caller.id.clone(),
            parent_run_id: None,
            task_reference: None,
            depth: None,
            call_depth: None,
            trigger: None,
        };
        // The start is also work of the run, due a little later and removed by the first
        // step: a server that stops between recording the run and committing that step
        // leaves it for the next server to take.
        self.store
            .add_work(
                pb,
                run_id,
                vec![NewWork {
                    key: START_KEY.into(),
                    due_at: Some(chrono::Utc::now() + START_GRACE),
                    payload: input_payload(&Input::Start {
                        input: input.clone(),
                    }),
                }],
            )
            .await
            .map_err(store_problem)?;
        let started = fact(run_id, 1, "run_started", key, &caller.id, version);
        let (run, _) = self
            .store
            .start_run(pb, new, vec![started])
            .await
            .map_err(taken)?;
        self.scheduler
            .workflows
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((pb.clone(), key.name.clone(), version), Arc::new(workflow));
        let workflow = self.workflow_of(pb, &run).await?;
        let now_ms = chrono::Utc::now().timestamp_millis();
        let mut info = self.run_info(&run);
        info.functions_ms = self.functions_ms(pb, &workflow).await;
        let step = engine::start(&workflow, &info, input, now_ms);
        let mut commit = self.commit_of(&run, step, None, None)?;
        commit.cancel_work.push(START_KEY.into());
        let adds_work = !commit.add_work.is_empty();
        self.store
            .commit_workflow_step(pb, run_id, commit)
            .await
            .map_err(taken)?;
        if adds_work {
            self.scheduler.wake();
        }
        let run = self
            .store
            .get_run(pb, run_id)
            .await
            .map_err(store_problem)?
            .ok_or_else(|| Problem::internal(&"a workflow run vanished"))?;
        Ok(crate::runs::answer_of(&run))
    }

    /// Asks a workflow run to stop: recorded at once as work of the run, so it outlasts a
    /// restart; the run ends cancelled within a moment.
    pub(crate) async fn cancel_workflow(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        words: &str,
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
        event.data = Some(json!({ "detail": words }));
        self.store
            .record_run_events(pb, &run.run_id, vec![event])
            .await
            .map_err(taken)?;
        self.store
            .add_work(
                pb,
                &run.run_id,
                vec![NewWork {
                    key: "cancel".into(),
                    due_at: None,
                    payload: input_payload(&Input::Cancel {
                        detail: words.to_owned(),
                    }),
                }],
            )
            .await
            .map_err(store_problem)?;
        self.scheduler.wake();
        Ok(())
    }

    /// Carries out one claimed item. A commit another server won, or a run that ended, drops
    /// the item; a fault leaves it to be claimed again once its lease ends.
    async fn handle_work(&self, item: Work) {
        let outcome = if let Some(call) = item.payload.get("start_call") {
            self.start_call(&item, call.clone()).await
        } else if let Some(call) = item.payload.get("cancel_call") {
            self.cancel_call(&item, call).await
        } else if let Some(expiry) = item.payload.get("expire_request") {
            let request_id = expiry["request_id"].as_str().unwrap_or_default();
            self.expire_request(&item, request_id).await
        } else {
            self.apply_input(&item).await
        };
        if let Err(problem) = outcome {
            tracing::warn!(
                run_id = %item.run_id,
                key = %item.key,
                detail = %problem.detail,
                "a workflow's work could not be done; it is claimed again later"
            );
        }
    }

    /// Applies an input to its run's snapshot and commits the step.
    async fn apply_input(&self, item: &Work) -> Result<(), Problem> {
        let pb = &item.playbook;
        let Some(input) = input_of(&item.payload) else {
            tracing::error!(key = %item.key, "a work item this server cannot read is dropped");
            return self.store.finish_work(item.id).await.map_err(store_problem);
        };
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
            let state: RunState =
                serde_json::from_value(state).map_err(|e| Problem::internal(&e))?;
            let workflow = self.workflow_of(pb, &run).await?;
            let now_ms = chrono::Utc::now().timestamp_millis();
            let step = engine::apply(
                &workflow,
                &self.run_info(&run),
                state,
                input.clone(),
                now_ms,
            );
            let commit = self.commit_of(&run, step, Some(version), Some(item.id))?;
            let adds_work = !commit.add_work.is_empty();
            match self
                .store
                .commit_workflow_step(pb, &run.run_id, commit)
                .await
            {
                Ok(_) => {
                    if adds_work {
                        self.scheduler.wake();
                    }
                    return Ok(());
                }
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
        let workflow = self.workflow_of(pb, run).await?;
        let mut info = self.run_info(run);
        info.functions_ms = self.functions_ms(pb, &workflow).await;
        let now_ms = chrono::Utc::now().timestamp_millis();
        let step = engine::start(&workflow, &info, input, now_ms);
        let commit = self.commit_of(run, step, None, Some(work_id))?;
        match self
            .store
            .commit_workflow_step(pb, &run.run_id, commit)
            .await
        {
            // Another server took the first step: this start is spent.
            Ok(_) | Err(StoreError::Conflict(_)) => {
                self.scheduler.wake();
                Ok(())
            }
            Err(other) => Err(store_problem(other)),
        }
    }

    /// Starts a child run, or finds it by its id, and reports its end to the parent.
    async fn start_call(&self, item: &Work, call: Value) -> Result<(), Problem> {
        let pb = &item.playbook;
        let text = |key: &str| call[key].as_str().unwrap_or_default().to_owned();
        let (call_id, child_run_id) = (text("call_id"), text("child_run_id"));
        let parent = self
            .store
            .get_run(pb, &item.run_id)
            .await
            .map_err(store_problem)?;
        let Some(parent) = parent.filter(|r| r.status == RunStatus::Started) else {
            return self.store.finish_work(item.id).await.map_err(store_problem);
        };
        let caller = caller_of(&parent, pb);
        let body = RunDefinition {
            input: Some(call["input"].clone()),
            run_id: Some(child_run_id.clone()),
        };
        let outcome = loop {
            let answer = self
                .run_definition(&caller, pb, &text("type"), &text("name"), body.clone())
                .await;
            match answer {
                Ok(RunAnswer::Ended(run)) => {
                    break CallOutcome::Succeeded {
                        output: run.output.unwrap_or(Value::Null),
                    };
                }
                Ok(RunAnswer::Rejected(problem)) => {
                    break CallOutcome::Rejected {
                        problem: serde_json::to_value(&problem)
                            .map_err(|e| Problem::internal(&e))?,
                    };
                }
                // The child goes on past its request (a workflow, a person's answer): look
                // again in a moment, for as long as this server holds the call.
                Ok(RunAnswer::Started(_)) => tokio::time::sleep(CHILD_POLL).await,
                Err(problem) if problem.kind.as_deref() == Some("taken") => {
                    tokio::time::sleep(CHILD_POLL).await;
                }
                Err(problem) => {
                    break CallOutcome::Rejected {
                        problem: serde_json::to_value(&problem)
                            .map_err(|e| Problem::internal(&e))?,
                    };
                }
            }
        };
        let ended = Input::CallEnded {
            call_id: call_id.clone(),
            outcome,
        };
        self.store
            .add_work(
                pb,
                &item.run_id,
                vec![NewWork {
                    key: format!("ended:{call_id}"),
                    due_at: None,
                    payload: input_payload(&ended),
                }],
            )
            .await
            .map_err(store_problem)?;
        self.store
            .finish_work(item.id)
            .await
            .map_err(store_problem)?;
        self.scheduler.wake();
        Ok(())
    }

    /// Cancels a child the parent no longer waits for.
    async fn cancel_call(&self, item: &Work, call: &Value) -> Result<(), Problem> {
        let pb = &item.playbook;
        let child_run_id = call["child_run_id"].as_str().unwrap_or_default();
        let kind = call["kind"].as_str().unwrap_or("parent_ended");
        if let Some(child) = self
            .store
            .get_run(pb, child_run_id)
            .await
            .map_err(store_problem)?
            .filter(|r| r.status == RunStatus::Started)
        {
            let words = format!(
                "The workflow run {} no longer waits for this run ({kind}).",
                item.run_id
            );
            let caller = caller_of(&child, pb);
            let cancelled = if child.key.def_type == DefinitionType::Interaction.as_str() {
                self.cancel_interaction(pb, &child, &words, kind).await
            } else {
                self.cancel_run(
                    &caller,
                    pb,
                    child_run_id,
                    crate::api::CancelRun {
                        detail: Some(words),
                    },
                )
                .await
                .map(|_| ())
            };
            if let Err(problem) = cancelled {
                tracing::debug!(detail = %problem.detail, "a child could not be cancelled");
            }
        }
        self.store.finish_work(item.id).await.map_err(store_problem)
    }
}

/// Whether a type's runs go through this module.
pub fn is_workflow(def_type: &str) -> bool {
    def_type == DefinitionType::Workflow.as_str()
}
