//! `run_definition`, `get_run`, `list_runs` and `cancel_run`: what the runs of every type
//! share (DESIGN §3): the run-id rules, a request met by the run it names, the attempt in
//! flight, the start and the ending with their facts, the cancel's checks and words. What
//! differs between the types is their [`Runner`](crate::runner::Runner)'s.
//!
//! A run goes on in a task of its own, so a caller that goes away does not stop it; two
//! requests for one run in one server share that task and make one attempt.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tracing::Instrument;

use auto_engine::definitions::DefinitionType;
use auto_engine::input::{INPUT_BYTES_MAX, prepare_input};
use auto_schema::{CompiledSchema, json_bytes};
use auto_store::{
    DefinitionKey, DefinitionStatus, DefinitionVersion, NewEvent, NewRun, PlaybookRef, Run,
    RunEnding, RunFilter, RunStatus, StoreError,
};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::api::{CancelRun, RunDefinition, RunList, RunOut};
use crate::auth::{Caller, Permission};
use crate::problem::{Problem, ProblemIssue, Reason};
use crate::runner::Runners;
use crate::service::{Service, store_problem};
use crate::work::{ChildEnded, Order, WorkItem, ended_key};

/// "`run_id` is the caller's (1 to 128 of `[A-Za-z0-9._:-]`) or a new UUIDv7" (supplement §2).
pub const RUN_ID_CHARS_MAX: usize = 128;
/// "Output of a run: 1,048,574 bytes as JSON, which with the run's record makes 1 MiB."
pub const OUTPUT_BYTES_MAX: usize = 1_048_574;
/// A `run_succeeded` fact carries the output as its data up to this size, and `output_bytes`
/// past it, so the fact stays within the 256 KiB of an event.
pub const FACT_OUTPUT_BYTES_MAX: usize = 240 * 1024;
/// The runs a listing returns unless `limit` says otherwise, and at most.
pub const RUNS_PAGE_DEFAULT: u32 = 50;
pub const RUNS_PAGE_MAX: u32 = 1_000;

/// What `run_definition` answers: a run that ended (200), one still going (202), or its
/// rejection as a problem document carrying the run id.
#[derive(Debug)]
pub enum RunAnswer {
    Ended(RunOut),
    Started(RunOut),
    Rejected(Problem),
}

pub(crate) type Outcome = Result<RunAnswer, Problem>;
type Shared = watch::Receiver<Option<Arc<Outcome>>>;

/// Runs under way in this server, by playbook and run id.
#[derive(Clone, Default)]
pub struct InFlight {
    runs: Arc<Mutex<HashMap<(PlaybookRef, String), Shared>>>,
}

impl std::fmt::Debug for InFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InFlight")
    }
}

pub fn check_run_id(run_id: &str) -> Result<(), String> {
    let ok = (1..=RUN_ID_CHARS_MAX).contains(&run_id.len())
        && run_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | ':' | '-'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{run_id:?} is not a run id: 1 to 128 letters, digits, and . _ : -"
        ))
    }
}

/// A run as the API shows it.
pub fn run_out(run: &Run, full: bool) -> RunOut {
    RunOut {
        run_id: run.run_id.clone(),
        def_type: run.key.def_type.clone(),
        name: run.key.name.clone(),
        definition_version: run.definition_version,
        status: run.status.as_str().into(),
        input: full.then(|| run.input.clone()),
        output: if full { run.output.clone() } else { None },
        record: run.record.clone(),
        problem: run.problem.clone(),
        started_by: run.started_by.clone(),
        started_at: run.started_at,
        ended_at: run.ended_at,
    }
}

pub(crate) fn answer_of(run: &Run) -> RunAnswer {
    match run.status {
        RunStatus::Succeeded => RunAnswer::Ended(run_out(run, true)),
        RunStatus::Started => RunAnswer::Started(run_out(run, true)),
        RunStatus::Rejected | RunStatus::Failed => {
            match run.problem.clone().map(serde_json::from_value::<Problem>) {
                Some(Ok(problem)) => RunAnswer::Rejected(problem),
                _ => RunAnswer::Ended(run_out(run, true)),
            }
        }
    }
}

/// "Retrying under a run id", for every type: a request under the id of a run started for
/// another definition, or with another input, is refused, whatever became of that run.
pub(crate) fn same_request(run: &Run, key: &DefinitionKey, input: &Value) -> Result<(), Problem> {
    if run.key == *key && run.input == *input {
        return Ok(());
    }
    Err(Problem::conflict(
        "The run id is taken",
        format!(
            "The run {} was started for {}/{} with another input; use a new run id.",
            run.run_id, run.key.def_type, run.key.name
        ),
    ))
}

/// A run to record, with its place in a tree of calls when a workflow's call starts it.
pub(crate) fn new_run(
    run_id: &str,
    key: &DefinitionKey,
    definition_version: i64,
    input: Value,
    caller: &Caller,
    lineage: Option<Lineage>,
    origin: Option<Origin>,
) -> NewRun {
    let mut new = NewRun::new(
        run_id,
        key.clone(),
        definition_version,
        input,
        caller.id.clone(),
    );
    if let Some(lineage) = lineage {
        // Its ending reaches the call that waits for it as an input of the caller.
        let ended = Order::ChildEnded(ChildEnded {
            call_id: lineage.parent_call_id.clone(),
            child_run_id: run_id.to_owned(),
        });
        let key = ended_key(&lineage.parent_call_id);
        new.ending_work = Some(WorkItem::from(ended).to_work(key, None));
        new.parent_run_id = Some(lineage.parent_run_id);
        new.parent_call_id = Some(lineage.parent_call_id);
        new.task_reference = Some(lineage.task_reference);
        new.call_depth = Some(lineage.call_depth);
        new.root_run_id = Some(lineage.root_run_id);
        new.open_calls_max = Some(lineage.open_calls_max);
        new.depth = lineage.depth;
    }
    if let Some(origin) = origin {
        new.depth = Some(origin.depth);
        new.trigger = Some(origin.trigger);
    }
    new
}

/// The run `new` as the store records it when it starts at `at`: attempt 1, its
/// `run_started` its only event. What a caller that records the run with more (a workflow's
/// first step, a call performed within its caller's step) works from before it is recorded.
pub(crate) fn started_run(new: &NewRun, at: chrono::DateTime<chrono::Utc>) -> Run {
    Run::as_inserted(new, at, 1, None)
}

/// The attributes a fact about a run carries, each where the run has it (workflow page,
/// "Event filters"): `depth`, one more than the run's ("An event or fact about a run has one
/// more than the run"), `calldepth`, and `triggerkind` and `triggerreference` of the trigger
/// that started it.
pub(crate) fn run_attributes(
    event: &mut NewEvent,
    depth: Option<i64>,
    call_depth: Option<i64>,
    trigger: Option<&Value>,
) {
    if let Some(depth) = depth {
        event.extensions.insert("depth".into(), json!(depth + 1));
    }
    if let Some(call_depth) = call_depth {
        event
            .extensions
            .insert("calldepth".into(), json!(call_depth));
    }
    if let Some(trigger) = trigger {
        for (attribute, field) in [("triggerkind", "kind"), ("triggerreference", "reference")] {
            if let Some(value) = trigger.get(field).filter(|v| v.is_string()) {
                event.extensions.insert(attribute.into(), value.clone());
            }
        }
    }
}

/// A run's `run_started` fact, with the attributes of [`run_attributes`].
pub(crate) fn started_fact(new: &NewRun, run_seq: i64) -> NewEvent {
    let mut event = fact(
        &new.run_id,
        run_seq,
        "run_started",
        &new.key,
        &new.started_by,
        new.definition_version,
    );
    run_attributes(&mut event, new.depth, new.call_depth, new.trigger.as_ref());
    if let Some(trigger) = &new.trigger {
        event.data = Some(json!({
            "trigger": trigger,
            "message": started_words(&new.key, trigger),
        }));
    }
    event
}

/// The words of a triggered run's `run_started` fact, which "say which kind started it, such
/// as 'was started by its cron schedule'" (workflow page, "Triggers").
pub(crate) fn started_words(key: &DefinitionKey, trigger: &Value) -> String {
    let name = &key.name;
    let text = |field: &str| trigger.get(field).and_then(Value::as_str).unwrap_or("?");
    match text("kind") {
        "event" => format!(
            "The workflow {name} was started by its event trigger, for the event {}.",
            text("event_id")
        ),
        "cron" => format!(
            "The workflow {name} was started by its cron schedule, due at {}.",
            text("due")
        ),
        "every" => format!(
            "The workflow {name} was started by its every schedule, due at {}.",
            text("due")
        ),
        other => format!("The workflow {name} was started by its trigger {other}."),
    }
}

pub(crate) fn fact(
    run_id: &str,
    run_seq: i64,
    event_type: &str,
    key: &DefinitionKey,
    caller: &str,
    version: i64,
) -> NewEvent {
    let mut event = NewEvent::new(new_event_id(), event_type, ["/runs/", run_id].concat());
    event.subject = Some([key.def_type.as_str(), "/", &key.name].concat());
    event.run_id = Some(run_id.into());
    event.run_seq = Some(run_seq);
    event.extensions.insert("caller".into(), json!(caller));
    event
        .extensions
        .insert("definitionversion".into(), json!(version));
    event
}

/// A new event's id, a UUIDv7, written out directly: every event the runtime records takes
/// one (a run a fact at each of its steps), and the formatting machinery of `to_string` was
/// most of what an id cost.
pub(crate) fn new_event_id() -> String {
    let mut buffer = uuid::Uuid::encode_buffer();
    uuid::Uuid::now_v7()
        .hyphenated()
        .encode_lower(&mut buffer)
        .to_owned()
}

/// A fact of `run` numbered `run_seq`, with its data.
pub(crate) fn run_fact(run: &Run, run_seq: i64, event_type: &str, data: Value) -> NewEvent {
    let mut event = fact(
        &run.run_id,
        run_seq,
        event_type,
        &run.key,
        &run.started_by,
        run.definition_version,
    );
    event.data = Some(data);
    event
}

/// The fact that ends a run, with the data the workflow page gives it.
pub(crate) fn ending_fact(run: &Run, run_seq: i64, ending: &RunEnding) -> NewEvent {
    let event_type = match ending.status {
        RunStatus::Succeeded => "run_succeeded",
        RunStatus::Failed => "run_failed",
        _ => "run_rejected",
    };
    let mut event = run_fact(run, run_seq, event_type, Value::Null);
    run_attributes(&mut event, run.depth, run.call_depth, run.trigger.as_ref());
    event.data = match (ending.status, &ending.output, &ending.problem) {
        (RunStatus::Succeeded, Some(output), _) => {
            let bytes = json_bytes(output).unwrap_or(0);
            Some(if bytes <= FACT_OUTPUT_BYTES_MAX {
                output.clone()
            } else {
                json!({ "output_bytes": bytes })
            })
        }
        (_, _, Some(problem)) => {
            Some(json!({ "reason": problem["reason"], "kind": problem["kind"] }))
        }
        _ => None,
    };
    event
}

/// A run's success as the store keeps it: an output past the 1 MiB a run keeps ends the run
/// `conflict` of the kind `oversized` instead.
pub(crate) fn succeeded(run: &Run, output: Value, record: Option<Value>) -> RunEnding {
    let bytes = json_bytes(&output).unwrap_or(usize::MAX);
    if bytes > OUTPUT_BYTES_MAX {
        let noun = run
            .key
            .def_type
            .parse::<DefinitionType>()
            .map_or("definition", DefinitionType::noun);
        let problem = Problem::conflict(
            format!("The {noun} {} gave an output too large", run.key.name),
            format!("The output holds {bytes} bytes as JSON; a run keeps at most 1,048,574."),
        )
        .with_kind("oversized");
        return rejection(problem, &run.run_id);
    }
    RunEnding {
        status: RunStatus::Succeeded,
        output: Some(output),
        record,
        problem: None,
    }
}

/// A run's rejection as the store keeps it, carrying the run's id: `failed` when the server
/// broke down, `rejected` otherwise.
pub(crate) fn rejection(problem: Problem, run_id: &str) -> RunEnding {
    let mut problem = problem;
    problem.run_id = Some(run_id.into());
    let status = if problem.reason == Reason::Failed {
        RunStatus::Failed
    } else {
        RunStatus::Rejected
    };
    RunEnding {
        status,
        output: None,
        record: None,
        problem: serde_json::to_value(&problem).ok(),
    }
}

/// What a request asks to run: under which id, with which input, and, for a run a
/// workflow's call starts, where it sits.
#[derive(Clone, Debug)]
pub(crate) struct Ask {
    pub run_id: String,
    pub input: Value,
    pub lineage: Option<Lineage>,
    pub origin: Option<Origin>,
    /// Whether the run id was made for this request (a UUIDv7 of this server's): no run has
    /// it, so none is looked for before the run starts.
    pub fresh: bool,
}

/// What a run a trigger starts carries: the depth of what it matched, and the trigger.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Origin {
    pub depth: i64,
    /// `{kind, reference}` and what it matched (`event_id` or `due`).
    pub trigger: Value,
}

/// Where a run a workflow's call starts sits: its parent, the call it answers, and its tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Lineage {
    pub parent_run_id: String,
    pub parent_call_id: String,
    pub task_reference: String,
    /// 1 for a run a top workflow called.
    pub call_depth: i64,
    /// The workflow at the top of the tree.
    pub root_run_id: String,
    /// The caller's depth in a chain of triggers, which its calls share.
    pub depth: Option<i64>,
    /// `WORKFLOW_MAX_OPEN_CALLS`: the store refuses the run past it.
    pub open_calls_max: i64,
}

impl Service {
    /// `run_definition`: the caller's request, checked, then [`Service::run`].
    pub async fn run_definition(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        type_text: &str,
        name: &str,
        body: RunDefinition,
    ) -> Outcome {
        caller.require(&pb.org, Permission::Run)?;
        // The playbook is not read first: reading the definition shows it is there (and when
        // the definition is not, `run` tells which is missing). A request refused on its own
        // terms is still refused for a missing playbook first.
        let Ok(def_type) = type_text.parse::<DefinitionType>() else {
            self.require_playbook(pb).await?;
            return Err(definition_not_found(pb, type_text, name));
        };
        if let Some(run_id) = &body.run_id
            && let Err(message) = check_run_id(run_id)
        {
            self.require_playbook(pb).await?;
            return Err(Problem::invalid_request(vec![ProblemIssue::field(
                "/run_id", message,
            )]));
        }
        let fresh = body.run_id.is_none();
        let ask = Ask {
            run_id: body
                .run_id
                .unwrap_or_else(|| uuid::Uuid::now_v7().to_string()),
            input: body.input.unwrap_or_else(|| json!({})),
            lineage: None,
            origin: None,
            fresh,
        };
        self.run(caller, pb, def_type, name, ask).await
    }

    /// Runs the definition `name` of `def_type` as `caller` asks, under the run-id rules: a
    /// request and a workflow's call (whose `ask` carries its lineage) alike. The definition
    /// must be active and of a type that runs. Two requests for one run in this server share
    /// one attempt, which goes on in a task of its own.
    #[tracing::instrument(
        name = "run",
        skip_all,
        fields(org = %pb.org, playbook = %pb.playbook, run_id = %ask.run_id, definition = %format_args!("{}/{name}", def_type.as_str()))
    )]
    pub(crate) async fn run(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        def_type: DefinitionType,
        name: &str,
        ask: Ask,
    ) -> Outcome {
        let key = DefinitionKey::new(def_type.as_str(), name);
        let Some(definition) = self
            .store
            .get_definition(pb, &key)
            .await
            .map_err(store_problem)?
        else {
            self.require_playbook(pb).await?;
            return Err(definition_not_found(pb, def_type.as_str(), name));
        };
        if definition.status == DefinitionStatus::Retired {
            return Err(Problem::conflict(
                "The definition is retired",
                format!(
                    "The {} {name} is retired and runs no more.",
                    def_type.noun()
                ),
            ));
        }
        let runner = Runners::of(def_type);
        let slot = (pb.clone(), ask.run_id.clone());
        let receiver = {
            let mut runs = self
                .in_flight
                .runs
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            match runs.get(&slot) {
                Some(receiver) => receiver.clone(),
                None => {
                    let (sender, receiver) = watch::channel(None);
                    runs.insert(slot.clone(), receiver.clone());
                    let service = self.clone();
                    let (caller, pb) = (caller.clone(), pb.clone());
                    // The attempt goes on if the caller leaves, within the run's span.
                    let attempt = async move {
                        let outcome = service
                            .attempt(&caller, &pb, runner, &key, ask, &definition)
                            .await;
                        service
                            .in_flight
                            .runs
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .remove(&slot);
                        let _ = sender.send(Some(Arc::new(outcome)));
                    };
                    tokio::spawn(attempt.in_current_span());
                    receiver
                }
            }
        };
        wait_for(receiver).await
    }

    /// One request's attempt at a run: a new run, or what the run its id names gets.
    async fn attempt(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        runner: Runners,
        key: &DefinitionKey,
        ask: Ask,
        definition: &DefinitionVersion,
    ) -> Outcome {
        let existing = if ask.fresh {
            None
        } else {
            self.store
                .get_run(pb, &ask.run_id)
                .await
                .map_err(store_problem)?
        };
        match existing {
            None => runner.begin(self, caller, pb, key, ask, definition).await,
            Some(run) => {
                same_request(&run, key, &ask.input)?;
                runner.again(self, pb, key, run).await
            }
        }
    }

    pub(crate) async fn start(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        version: i64,
        ask: Ask,
    ) -> Result<Run, Problem> {
        let new = new_run(
            &ask.run_id,
            key,
            version,
            ask.input,
            caller,
            ask.lineage,
            None,
        );
        self.record_start(pb, new).await
    }

    /// The new run `ask` asks for, not recorded yet, starting at the database's time now (which
    /// the runner reads as the run's own), and the run it is once recorded: for a runner that
    /// records it with its first step or fact rather than on its own.
    pub(crate) async fn run_to_record(
        &self,
        caller: &Caller,
        key: &DefinitionKey,
        version: i64,
        ask: Ask,
    ) -> Result<(NewRun, Run), StoreError> {
        let at = self.store.now().await?;
        let mut new = new_run(
            &ask.run_id,
            key,
            version,
            ask.input,
            caller,
            ask.lineage,
            ask.origin,
        );
        new.started_at = Some(at);
        let run = started_run(&new, at);
        Ok((new, run))
    }

    /// Records the new run `new` started, with its `run_started`.
    pub(crate) async fn record_start(&self, pb: &PlaybookRef, new: NewRun) -> Result<Run, Problem> {
        let event = started_fact(&new, 1);
        let counted = crate::telemetry::tally(std::slice::from_ref(&event));
        let (run, _) = self
            .store
            .start_run(pb, new, vec![event])
            .await
            .map_err(taken)?;
        self.telemetry.count(counted, None);
        Ok(run)
    }

    /// Ends a run with its ending fact. A cancel asked through another server may have taken
    /// the number the fact expected; the fact then goes after it, as long as the run is still
    /// this attempt's and started.
    pub(crate) async fn end(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        run_seq: i64,
        ending: RunEnding,
    ) -> Result<Run, Problem> {
        self.end_after(pb, run, run_seq, &[], ending).await
    }

    /// As [`Service::end`], with the facts `before` (a type and its data each) recorded in the
    /// same commit ahead of the ending's, numbered from `run_seq`: the end of the run's last
    /// call, which costs no commit of its own.
    pub(crate) async fn end_after(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        run_seq: i64,
        before: &[(&str, Value)],
        ending: RunEnding,
    ) -> Result<Run, Problem> {
        let mut run_seq = run_seq;
        for _ in 0..8 {
            let mut events: Vec<NewEvent> = before
                .iter()
                .zip(run_seq..)
                .map(|((event_type, data), seq)| run_fact(run, seq, event_type, data.clone()))
                .collect();
            let ending_seq = run_seq + i64::try_from(before.len()).unwrap_or(0);
            events.push(ending_fact(run, ending_seq, &ending));
            let counted = crate::telemetry::tally(&events);
            match self
                .store
                .end_run(pb, &run.run_id, ending.clone(), events)
                .await
            {
                Ok((ended, _)) => {
                    self.telemetry.count(counted, Some(&ended));
                    self.triggers.wake_if_active();
                    return Ok(ended);
                }
                Err(StoreError::Conflict(detail)) => {
                    let now = self
                        .store
                        .get_run(pb, &run.run_id)
                        .await
                        .map_err(store_problem)?;
                    match now {
                        Some(now)
                            if now.status == RunStatus::Started && now.attempt == run.attempt =>
                        {
                            run_seq = now.last_run_seq + 1;
                        }
                        _ => return Err(taken(StoreError::Conflict(detail))),
                    }
                }
                Err(other) => return Err(store_problem(other)),
            }
        }
        Err(taken(StoreError::Conflict(
            "the run's numbers kept moving".into(),
        )))
    }

    pub async fn get_run(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        run_id: &str,
    ) -> Result<RunOut, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let run = self
            .store
            .get_run(pb, run_id)
            .await
            .map_err(store_problem)?;
        run.map(|r| run_out(&r, true))
            .ok_or_else(|| run_not_found(pb, run_id))
    }

    pub async fn list_runs(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        query: RunQuery,
    ) -> Result<RunList, Problem> {
        caller.require(&pb.org, Permission::Read)?;
        self.require_playbook(pb).await?;
        let filter = query.into_filter()?;
        let limit = filter.limit as usize;
        let runs = self
            .store
            .list_runs(pb, &filter)
            .await
            .map_err(store_problem)?;
        let next = crate::service::next_cursor(&runs, limit, |r| r.run_id.clone());
        Ok(RunList {
            runs: runs.iter().map(|r| run_out(r, false)).collect(),
            next,
        })
    }

    pub async fn cancel_run(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        run_id: &str,
        body: CancelRun,
    ) -> Result<RunOut, Problem> {
        self.cancel_run_as(caller, pb, run_id, body, None).await
    }

    /// `cancel_run` with the kind of the cancellation: `requested` when `None`; the workflow
    /// that waited for the run gives `parent_ended` or `deadline`.
    pub(crate) async fn cancel_run_as(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        run_id: &str,
        body: CancelRun,
        kind: Option<&str>,
    ) -> Result<RunOut, Problem> {
        caller.require(&pb.org, Permission::Run)?;
        self.require_playbook(pb).await?;
        let run = self
            .store
            .get_run(pb, run_id)
            .await
            .map_err(store_problem)?
            .ok_or_else(|| run_not_found(pb, run_id))?;
        if run.status != RunStatus::Started {
            let mut problem = Problem::conflict(
                "The run has ended",
                format!(
                    "The run {run_id} has already ended with the status {}; a run that has ended cannot be cancelled.",
                    run.status.as_str()
                ),
            );
            problem.run_id = Some(run_id.to_owned());
            return Err(problem);
        }
        let words = body
            .detail
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| format!("The run was cancelled by {}.", caller.id));
        Runners::of_run(&run)?
            .cancel(self, pb, &run, &words, kind)
            .await?;
        self.get_run(caller, pb, run_id).await
    }
}

impl Service {
    /// Waits for the attempt at a run going on in this server, when there is one.
    pub(crate) async fn wait_in_flight(&self, pb: &PlaybookRef, run_id: &str) {
        let slot = (pb.clone(), run_id.to_owned());
        let receiver = self
            .in_flight
            .runs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&slot)
            .cloned();
        if let Some(receiver) = receiver {
            let _ = wait_for(receiver).await;
        }
    }
}

async fn wait_for(mut receiver: Shared) -> Outcome {
    loop {
        if let Some(outcome) = receiver.borrow().clone() {
            return match outcome.as_ref() {
                Ok(RunAnswer::Ended(run)) => Ok(RunAnswer::Ended(run.clone())),
                Ok(RunAnswer::Started(run)) => Ok(RunAnswer::Started(run.clone())),
                Ok(RunAnswer::Rejected(problem)) => Ok(RunAnswer::Rejected(problem.clone())),
                Err(problem) => Err(problem.clone()),
            };
        }
        if receiver.changed().await.is_err() {
            return Err(Problem::internal(&"a run's task ended without an outcome"));
        }
    }
}

pub(crate) fn still_running(run_id: &str) -> Problem {
    Problem::conflict(
        "The run is still running",
        format!("The run {run_id} is still running; ask again once it has ended."),
    )
    .with_kind("taken")
}

/// A conflict on a run's change means another attempt got there first.
pub(crate) fn taken(error: StoreError) -> Problem {
    match error {
        StoreError::Conflict(_) => Problem::conflict(
            "The run is still running",
            "Another attempt of this run recorded first; ask again once it has ended.",
        )
        .with_kind("taken"),
        other => store_problem(other),
    }
}

pub(crate) fn definition_not_found(pb: &PlaybookRef, type_text: &str, name: &str) -> Problem {
    Problem::not_found(format!(
        "The playbook {} has no {type_text} definition {name}.",
        pb.playbook
    ))
}

fn run_not_found(pb: &PlaybookRef, run_id: &str) -> Problem {
    Problem::not_found(format!("The playbook {} has no run {run_id}.", pb.playbook))
}

/// "Input of a run, or of a call: 256 KiB as JSON": a workflow takes any JSON value as its
/// input, no larger than the input of any other run ([`INPUT_BYTES_MAX`]).
pub(crate) fn check_workflow_input(name: &str, input: &Value) -> Result<(), Problem> {
    let bytes = json_bytes(input).unwrap_or(usize::MAX);
    if bytes <= INPUT_BYTES_MAX {
        return Ok(());
    }
    let message =
        format!("input: holds {bytes} bytes as JSON, more than the 262,144 (256 KiB) a run takes");
    Err(
        Problem::invalid_input(format!("The workflow {name} refused its input"), &message)
            .with_issues(vec![ProblemIssue::field("/input", message)]),
    )
}

/// A run's input with the defaults applied, checked against the input schema; or the
/// `invalid_input` problem, titled `refused_title`, with each issue at its field.
pub(crate) fn prepared_input(
    input: &Value,
    schema: Option<&Value>,
    defaults: Option<&serde_json::Map<String, Value>>,
    refused_title: &str,
) -> Result<Value, Problem> {
    let schema = schema
        .map(CompiledSchema::compile)
        .transpose()
        .map_err(|e| Problem::internal(&e))?;
    prepared_input_with(input, schema.as_ref(), defaults, refused_title)
}

/// [`prepared_input`] against a schema compiled already.
pub(crate) fn prepared_input_with(
    input: &Value,
    schema: Option<&CompiledSchema>,
    defaults: Option<&serde_json::Map<String, Value>>,
    refused_title: &str,
) -> Result<Value, Problem> {
    prepare_input(Some(input), defaults, schema).map_err(|issues| {
        let issues: Vec<ProblemIssue> = issues
            .into_iter()
            .map(|i| ProblemIssue::field(i.pointer, i.message))
            .collect();
        let detail = issues
            .iter()
            .map(|i| i.message.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        Problem::invalid_input(refused_title, detail).with_issues(issues)
    })
}

/// A list's `limit` query: `default` when it is absent or empty; a whole number from 1 to
/// `max`, or an issue at `/query/limit` (and `default`, so the other fields are still read).
pub(crate) fn page_limit(
    text: Option<&str>,
    (default, max): (u32, u32),
    issues: &mut Vec<ProblemIssue>,
) -> u32 {
    match text {
        None | Some("") => default,
        Some(text) => match text.parse::<u32>() {
            Ok(n) if (1..=max).contains(&n) => n,
            _ => {
                issues.push(ProblemIssue::field(
                    "/query/limit",
                    format!("limit {text:?} is not a whole number from 1 to {max}."),
                ));
                default
            }
        },
    }
}

/// The query of `list_runs`.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct RunQuery {
    #[serde(rename = "type")]
    pub def_type: Option<String>,
    pub name: Option<String>,
    pub status: Option<String>,
    /// The reason of the run's problem: one of [`REASONS`].
    pub reason: Option<String>,
    /// Runs started at or after this time (RFC 3339).
    pub since: Option<String>,
    /// Runs started before this time (RFC 3339).
    pub until: Option<String>,
    pub after: Option<String>,
    pub limit: Option<String>,
}

/// The reasons a run's problem may give, as `list_runs` takes them.
pub const REASONS: [Reason; 8] = [
    Reason::InvalidInput,
    Reason::Forbidden,
    Reason::NotFound,
    Reason::Conflict,
    Reason::Unavailable,
    Reason::Cancelled,
    Reason::Unanswered,
    Reason::Failed,
];

/// A time of `list_runs`' query, at `/query/{name}`: RFC 3339, or an issue.
fn query_time(
    name: &str,
    text: Option<&str>,
    issues: &mut Vec<ProblemIssue>,
) -> Option<chrono::DateTime<chrono::Utc>> {
    let text = text.filter(|t| !t.is_empty())?;
    match chrono::DateTime::parse_from_rfc3339(text) {
        Ok(time) => Some(time.to_utc()),
        Err(_) => {
            issues.push(ProblemIssue::field(
                format!("/query/{name}"),
                format!(
                    "{name} {text:?} is not a time in RFC 3339 form, such as 2026-12-01T09:30:00Z."
                ),
            ));
            None
        }
    }
}

impl RunQuery {
    fn into_filter(self) -> Result<RunFilter, Problem> {
        let mut issues = Vec::new();
        if let Some(text) = self.def_type.as_deref().filter(|t| !t.is_empty())
            && text.parse::<DefinitionType>().is_err()
        {
            issues.push(ProblemIssue::field(
                "/query/type",
                format!(
                    "type {text:?} is not one of reasoning, workflow, interaction, computation, recall or prediction."
                ),
            ));
        }
        let status = self
            .status
            .as_deref()
            .filter(|s| !s.is_empty())
            .and_then(|text| {
                let parsed = RunStatus::parse(text);
                if parsed.is_none() {
                    issues.push(ProblemIssue::field(
                        "/query/status",
                        format!(
                            "status {text:?} is not one of started, succeeded, rejected or failed."
                        ),
                    ));
                }
                parsed
            });
        let reason = self.reason.filter(|r| !r.is_empty());
        if let Some(text) = reason.as_deref()
            && !REASONS.iter().any(|r| r.as_str() == text)
        {
            issues.push(ProblemIssue::field(
                "/query/reason",
                format!(
                    "reason {text:?} is not one of invalid_input, forbidden, not_found, conflict, unavailable, cancelled, unanswered or failed."
                ),
            ));
        }
        let since = query_time("since", self.since.as_deref(), &mut issues);
        let until = query_time("until", self.until.as_deref(), &mut issues);
        if let (Some(since), Some(until)) = (since, until)
            && since >= until
        {
            issues.push(ProblemIssue::field(
                "/query/until",
                "until must be later than since.".to_string(),
            ));
        }
        let limit = page_limit(
            self.limit.as_deref(),
            (RUNS_PAGE_DEFAULT, RUNS_PAGE_MAX),
            &mut issues,
        );
        if !issues.is_empty() {
            return Err(Problem::invalid_request(issues));
        }
        Ok(RunFilter {
            def_type: self.def_type,
            name: self.name,
            status,
            reason,
            since,
            until,
            after_run_id: self.after.filter(|a| !a.is_empty()),
            limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fact's id is a new UUIDv7 in its hyphenated lower-case form, its source the run's and
    /// its subject the definition's, as `format!` wrote them.
    #[test]
    fn a_fact_names_its_run_and_definition_under_a_new_id() {
        let key = DefinitionKey {
            def_type: "workflow".into(),
            name: "add-three-times".into(),
        };
        let first = fact("r-1", 2, "step_started", &key, "local", 3);
        let second = fact("r-1", 3, "step_completed", &key, "local", 3);
        let id = uuid::Uuid::parse_str(&first.id).expect("a UUID");
        assert_eq!(id.get_version_num(), 7);
        assert_eq!(first.id, id.hyphenated().to_string());
        assert_ne!(first.id, second.id);
        assert_eq!(first.source, "/runs/r-1");
        assert_eq!(first.subject.as_deref(), Some("workflow/add-three-times"));
        assert_eq!(first.run_seq, Some(2));
        assert_eq!(
            serde_json::Value::Object(first.extensions),
            json!({"caller": "local", "definitionversion": 3})
        );
    }

    /// A list's limit at its edges: absent or empty takes the default; 1 and the most are
    /// taken; 0, one past the most and what is not a number are refused at `/query/limit`.
    #[test]
    fn a_page_limit_is_a_whole_number_from_one_to_the_most() {
        let read = |text: Option<&str>| {
            let mut issues = Vec::new();
            let limit = page_limit(text, (50, 1000), &mut issues);
            (limit, issues)
        };
        for (text, limit) in [
            (None, 50),
            (Some(""), 50),
            (Some("1"), 1),
            (Some("1000"), 1000),
        ] {
            assert_eq!(read(text), (limit, Vec::new()), "{text:?}");
        }
        for text in ["0", "1001", "x", "-1", "2.5"] {
            let (limit, issues) = read(Some(text));
            assert_eq!(limit, 50);
            assert_eq!(
                issues,
                vec![ProblemIssue::field(
                    "/query/limit",
                    format!("limit {text:?} is not a whole number from 1 to 1000.")
                )]
            );
        }
    }
}
