//! Triggers: workflows that start themselves, and listen tasks that hear the playbook
//! (workflow page, "Triggers", "Event filters", "Schedules", "When a trigger applies",
//! "Trigger limits", "Waiting for events").
//!
//! Every server sweeps, each `[scheduler] sweep_ms` (a second by default) and soon after it
//! records an event. A sweep follows the log of each playbook with event triggers or
//! listening tasks from their cursors, matches their filters in the sandbox under a filter's
//! own bounds, and queues the runs the matches start in the store together with the moved
//! cursor, in one transaction; it then starts what each workflow's minute has room for, and
//! the schedules that fell due. A triggered run's id is derived from the workflow, its
//! version, the trigger and the event or due time, so two servers that match one event or one
//! time start one run; the rate is counted in the store, where both servers see it.
//!
//! What the page lets the playbook keep in memory is kept here, in each server: the stops of
//! each filter (3 in a row, with no completed evaluation between, disable it for that
//! version), the failures recorded once a version, and the refusals, recorded at most once a
//! minute with their count and last reason.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use auto_engine::events_kept::is_history_type;
use auto_engine::workflow::filters::{FilterOutcome, match_filter, written_type};
use auto_engine::workflow::{cron_latest_ms, cron_next_ms};
use auto_store::{
    DefinitionKey, DefinitionStatus, Event, EventFilter, Listener, NewEvent, PlaybookRef,
    RunStatus, StartOutcome, Trigger, TriggerStart,
};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio::sync::Notify;

use crate::auth::{Caller, Role};
use crate::events::event_out;
use crate::problem::{Problem, Reason};
use crate::runs::{Ask, Origin};
use crate::service::{Service, store_problem};

mod schedules;

/// "A workflow's event trigger starts at most 60 runs of it a minute, across its filters."
pub const EVENT_TRIGGER_RUNS_PER_MINUTE: i64 = 60;
/// "More wait for a later minute, up to 1,000 of them; one more is refused."
pub const EVENT_TRIGGER_WAITING_MAX: i64 = 1_000;
/// "A chain of runs started by events stops at a depth of 8."
pub const TRIGGER_DEPTH_MAX: i64 = 8;
/// "One it cannot take at that moment is tried again at each sweep, about twenty times,
/// before it is given up."
pub const START_TRIES_MAX: i64 = 20;
/// "A filter so stopped 3 times in a row, with no completed evaluation between, has a defect
/// of its own."
pub const FILTER_STOPS_MAX: u32 = 3;
/// "At most once a minute": how often a workflow's refusals are recorded.
pub const REFUSALS_RECORDED_EVERY: Duration = Duration::from_secs(60);
/// Every this many sweeps, each workflow's waiting starts are looked at, not only those this
/// server queued: a server that queued them may have stopped.
const FULL_PASS_EVERY: u64 = 20;
/// The events one sweep reads of a playbook; the rest wait for the next sweep.
const EVENTS_A_SWEEP: u32 = 1_000;
/// The reference of each kind of trigger ("its place in the document").
const ON: &str = "/schedule/on";

/// A schedule's reading of time: the next due time after one, or the latest at or before.
type TimeFn = Box<dyn Fn(i64) -> Option<i64> + Send + Sync>;

/// A filter's place, for its stops and its records: playbook, workflow, version, and where.
type FilterKey = (PlaybookRef, String, i64, String);

/// What a server remembers of the playbooks' filters and refusals, and what wakes its sweep.
#[derive(Clone, Debug, Default)]
pub struct Triggers {
    wake: Arc<Notify>,
    memory: Arc<Mutex<Memory>>,
    stopping: Arc<std::sync::atomic::AtomicBool>,
    /// Whether the last sweep found triggers or listening tasks: only then does a run's
    /// fact or emitted event ask for a sweep before the next interval.
    active: Arc<std::sync::atomic::AtomicBool>,
}

#[derive(Debug, Default)]
struct Memory {
    /// Stops in a row of each filter.
    stops: HashMap<FilterKey, u32>,
    /// Filters stopped [`FILTER_STOPS_MAX`] times in a row: evaluated no more.
    disabled: HashSet<FilterKey>,
    /// Filters whose expression raised, recorded once.
    failed: HashSet<FilterKey>,
    refusals: HashMap<(PlaybookRef, String), Refusals>,
    /// Sweeps that could not start a schedule's due time, by trigger and time.
    schedule_tries: HashMap<(PlaybookRef, String, String, i64), i64>,
    /// Workflows whose event trigger may have starts waiting, as this server queued them.
    pending: HashSet<(PlaybookRef, String)>,
    /// Sweeps made; every [`FULL_PASS_EVERY`]th takes every workflow's waiting starts, also
    /// those another server queued.
    sweeps: u64,
}

#[derive(Debug, Default)]
struct Refusals {
    count: u64,
    last_reason: String,
    recorded: Option<Instant>,
}

impl Triggers {
    /// Asks for a sweep soon: an event was recorded.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Asks for a sweep soon when some playbook has triggers or listening tasks: a run
    /// recorded a fact or emitted an event.
    pub fn wake_if_active(&self) {
        if self.active.load(std::sync::atomic::Ordering::Relaxed) {
            self.wake.notify_one();
        }
    }

    /// Stops the sweep after the one under way.
    pub fn stop(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.wake.notify_one();
    }

    /// Whether the server is stopping: the sweeps end.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stopping.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Runs this server's sweep until it is stopped.
pub fn spawn_sweep(service: Service) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let every = Duration::from_millis(service.limits.sweep_ms);
        loop {
            tokio::select! {
                () = service.triggers.wake.notified() => {}
                () = tokio::time::sleep(every) => {}
            }
            if service
                .triggers
                .stopping
                .load(std::sync::atomic::Ordering::SeqCst)
            {
                break;
            }
            if let Err(problem) = service.sweep().await {
                tracing::warn!(detail = ?problem.detail, "the sweep of triggers failed");
            }
        }
    })
}

/// Why a triggered start did not happen.
enum NotStarted {
    /// It cannot be taken at this moment: try again at the next sweep.
    Again(String),
    /// The playbook refuses it: not tried again.
    Refused(String),
}

/// How the filters of one trigger or listening task met one event.
enum Met {
    Matched,
    NotMatched,
    /// A filter was stopped by its deadline or memory: the event waits for a later sweep.
    Stopped,
}

/// A run id derived from the workflow, its version, the trigger and what it matched: the
/// workflow's name (cut to 64 characters), the kind, and 24 hex digits of the rest.
pub fn triggered_run_id(workflow: &str, version: i64, reference: &str, matched: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [workflow, &version.to_string(), reference, matched] {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    let digest = hex::encode(hasher.finalize());
    let kind = reference.rsplit('/').next().unwrap_or("trigger");
    let name: String = workflow.chars().take(64).collect();
    format!("{name}.{kind}.{}", &digest[..24])
}

/// A due time as the API writes times.
fn time_text(ms: i64) -> String {
    crate::events::time_text(&DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default())
}

/// The filters of a trigger's or a listening task's `with`, in written order.
fn filters_of(list: &Value) -> Vec<Map<String, Value>> {
    list.as_array()
        .map(|filters| {
            filters
                .iter()
                .filter_map(|filter| filter.as_object().cloned())
                .collect()
        })
        .unwrap_or_default()
}

/// A record the playbook keeps about one of its workflows (a filter's failure, a refusal),
/// with the workflow's definition as its source.
fn workflow_record(workflow: &str, event_type: &str, data: Value) -> NewEvent {
    let mut event = NewEvent::new(
        crate::runs::new_event_id(),
        event_type,
        format!("/definitions/workflow/{workflow}"),
    );
    event.subject = Some(format!("workflow/{workflow}"));
    event.data = Some(data);
    event
}

/// An event as a filter and a run read it: as `get_event` shows it, without the log's own
/// numbering.
fn envelope(event: &Event) -> Value {
    let mut map = event_out(event, true).0;
    map.remove("recorded_at");
    Value::Object(map)
}

/// The chain depth of an event: its depth attribute, or 1 ("An event published from outside
/// has depth 1"; a fact of a run that no reaction started carries none).
fn depth_of(event: &Event) -> i64 {
    event
        .extensions
        .get("depth")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

impl Service {
    /// One pass over every playbook's triggers and listening tasks.
    pub async fn sweep(&self) -> Result<(), Problem> {
        let triggers = self.store.list_triggers().await.map_err(store_problem)?;
        let mut by_playbook: HashMap<&PlaybookRef, Vec<&Trigger>> = HashMap::new();
        for trigger in triggers.iter().filter(|t| t.kind == "event") {
            by_playbook
                .entry(&trigger.playbook)
                .or_default()
                .push(trigger);
        }
        let full_pass = {
            let mut memory = self.triggers.memory();
            memory.sweeps += 1;
            memory.sweeps % FULL_PASS_EVERY == 1
        };
        for (pb, triggers) in &by_playbook {
            if let Err(problem) = self.follow_events(pb, triggers).await {
                tracing::warn!(playbook = %pb.playbook, detail = ?problem.detail, "event triggers");
            }
            for trigger in triggers {
                let place = ((*pb).clone(), trigger.workflow.clone());
                let pending = self.triggers.memory().pending.remove(&place);
                if !(pending || full_pass) {
                    continue;
                }
                if let Err(problem) = self.start_waiting(pb, &trigger.workflow).await {
                    tracing::warn!(workflow = %trigger.workflow, detail = ?problem.detail, "trigger starts");
                }
            }
        }
        for trigger in triggers.iter().filter(|t| t.kind != "event") {
            if let Err(problem) = self.schedule(trigger).await {
                tracing::warn!(workflow = %trigger.workflow, detail = ?problem.detail, "schedule");
            }
        }
        let listeners = self.store.list_listeners().await.map_err(store_problem)?;
        // Recall views are kept up to date by one follower of each playbook's log.
        let views = self.store.list_views(None).await.map_err(store_problem)?;
        let mut followed = HashSet::new();
        let views: Vec<_> = views
            .into_iter()
            .filter(|head| crate::recall_runs::is_recall_view(&head.name))
            .collect();
        for head in views.iter().filter(|head| !head.stalled) {
            if followed.insert(&head.playbook) {
                crate::recall_runs::start_follow(self, &head.playbook);
            }
        }
        self.triggers.active.store(
            !triggers.is_empty() || !listeners.is_empty() || !views.is_empty(),
            std::sync::atomic::Ordering::Relaxed,
        );
        let mut listening: HashMap<&PlaybookRef, Vec<&Listener>> = HashMap::new();
        for listener in &listeners {
            listening
                .entry(&listener.playbook)
                .or_default()
                .push(listener);
        }
        for (pb, listeners) in &listening {
            if let Err(problem) = self.hear(pb, listeners).await {
                tracing::warn!(playbook = %pb.playbook, detail = ?problem.detail, "listening tasks");
            }
        }
        self.record_refusals().await;
        Ok(())
    }

    /// The events of a playbook after `cursor`, in order.
    async fn events_after(&self, pb: &PlaybookRef, cursor: i64) -> Result<Vec<Event>, Problem> {
        let filter = EventFilter {
            after_seq: Some(cursor),
            limit: EVENTS_A_SWEEP,
            ..EventFilter::default()
        };
        self.store
            .list_events(pb, &filter)
            .await
            .map_err(store_problem)
    }

    /// Matches a playbook's new events against its event triggers and queues the runs they
    /// start, each trigger with its moved cursor. One pass over the events carries each
    /// trigger's cursor, matches and refusals to the one commit at its end, which is why it
    /// is long.
    async fn follow_events(&self, pb: &PlaybookRef, triggers: &[&Trigger]) -> Result<(), Problem> {
        let Some(from) = triggers.iter().map(|t| t.cursor_seq).min() else {
            return Ok(());
        };
        let events = self.events_after(pb, from).await?;
        if events.is_empty() {
            return Ok(());
        }
        let mut owners: HashMap<String, Vec<String>> = HashMap::new();
        for trigger in triggers {
            // The filters in force when each event was recorded: those a save changed, for
            // the events the trigger had not read yet, then its own.
            let sets: Vec<(i64, Vec<Map<String, Value>>)> = trigger
                .earlier
                .iter()
                .map(|earlier| (earlier.until_seq, filters_of(&earlier.filters)))
                .chain([(i64::MAX, filters_of(&trigger.spec["filters"]))])
                .collect();
            let mut starts = Vec::new();
            let mut cursor = trigger.cursor_seq;
            let mut current_since: Option<i64> = None;
            for event in events.iter().filter(|e| e.seq > trigger.cursor_seq) {
                let Some((until, filters)) = sets.iter().find(|(until, _)| event.seq < *until)
                else {
                    break;
                };
                let hears = !is_history_type(&event.event_type)
                    && filters
                        .iter()
                        .filter_map(written_type)
                        .any(|t| t == event.event_type)
                    && !self
                        .caused_by(pb, &trigger.workflow, event, &mut owners)
                        .await?;
                if hears {
                    let version = match *until {
                        i64::MAX => trigger.version,
                        _ => self.version_at(pb, trigger, event.seq).await?,
                    };
                    let place = (pb, &trigger.workflow, version, ON);
                    match self.met(place, filters, &envelope(event)).await {
                        Met::Stopped => break,
                        Met::NotMatched => {}
                        Met::Matched => {
                            let depth = depth_of(event);
                            if depth > TRIGGER_DEPTH_MAX {
                                self.refuse(
                                    pb,
                                    &trigger.workflow,
                                    "event",
                                    format!(
                                        "the event {} is at depth {depth}, deeper than a chain of triggers may go ({TRIGGER_DEPTH_MAX})",
                                        event.id
                                    ),
                                );
                            } else {
                                // Most events come after the current version's save.
                                let current_since = match current_since {
                                    Some(seq) => seq,
                                    None => {
                                        let seq = self.saved_seq(pb, trigger).await?;
                                        current_since = Some(seq);
                                        seq
                                    }
                                };
                                let version = if event.seq >= current_since {
                                    trigger.version
                                } else {
                                    self.version_at(pb, trigger, event.seq).await?
                                };
                                starts.push(TriggerStart {
                                    run_id: triggered_run_id(
                                        &trigger.workflow,
                                        version,
                                        ON,
                                        &event.id,
                                    ),
                                    workflow: trigger.workflow.clone(),
                                    event_seq: event.seq,
                                    start: json!({
                                        "version": version,
                                        "input": [envelope(event)],
                                        "depth": depth,
                                        "trigger": {"kind": "event", "reference": ON, "event_id": event.id},
                                    }),
                                    attempts: 0,
                                });
                            }
                        }
                    }
                }
                cursor = event.seq;
            }
            if cursor == trigger.cursor_seq {
                continue;
            }
            let queued = self
                .store
                .queue_trigger_starts(
                    pb,
                    &trigger.workflow,
                    trigger.since_seq,
                    cursor,
                    starts,
                    EVENT_TRIGGER_WAITING_MAX,
                )
                .await
                .map_err(store_problem)?;
            if queued.queued > 0 {
                self.triggers
                    .memory()
                    .pending
                    .insert(((*pb).clone(), trigger.workflow.clone()));
            }
            for _ in 0..queued.refused {
                self.refuse(
                    pb,
                    &trigger.workflow,
                    "event",
                    format!("{EVENT_TRIGGER_WAITING_MAX} runs already wait for a later minute"),
                );
            }
        }
        Ok(())
    }

    /// Whether one of the workflow's own runs caused the event: a fact about one of its runs,
    /// about a run one of its runs started, or an event one of its runs emitted.
    async fn caused_by(
        &self,
        pb: &PlaybookRef,
        workflow: &str,
        event: &Event,
        owners: &mut HashMap<String, Vec<String>>,
    ) -> Result<bool, Problem> {
        let Some(run_id) = &event.run_id else {
            return Ok(false);
        };
        if !owners.contains_key(run_id) {
            let mut names = Vec::new();
            let mut next = Some(run_id.clone());
            // The run, and the runs above it up to the top of its tree of calls.
            while let Some(id) = next.take() {
                let Some(run) = self.store.get_run(pb, &id).await.map_err(store_problem)? else {
                    break;
                };
                if run.key.def_type == "workflow" {
                    names.push(run.key.name.clone());
                }
                next = run.parent_run_id.clone();
                if names.len() > 16 {
                    break;
                }
            }
            owners.insert(run_id.clone(), names);
        }
        Ok(owners
            .get(run_id)
            .is_some_and(|names| names.iter().any(|name| name == workflow)))
    }

    /// The seq of the record that saved the version a trigger starts now.
    async fn saved_seq(&self, pb: &PlaybookRef, trigger: &Trigger) -> Result<i64, Problem> {
        let key = DefinitionKey::new("workflow", &trigger.workflow);
        Ok(self
            .store
            .get_definition_version(pb, &key, trigger.version)
            .await
            .map_err(store_problem)?
            .map_or(i64::MAX, |saved| saved.saved_seq))
    }

    /// The version of a trigger's workflow that was current when the event was recorded.
    async fn version_at(
        &self,
        pb: &PlaybookRef,
        trigger: &Trigger,
        seq: i64,
    ) -> Result<i64, Problem> {
        let key = DefinitionKey::new("workflow", &trigger.workflow);
        let mut version = trigger.version;
        while version > 1 {
            match self
                .store
                .get_definition_version(pb, &key, version)
                .await
                .map_err(store_problem)?
            {
                Some(saved) if saved.saved_seq <= seq => return Ok(version),
                _ => version -= 1,
            }
        }
        Ok(version.max(1))
    }

    /// Evaluates the filters of one place on one event, keeping each filter's stops: a
    /// completed evaluation clears them, a raise is recorded once a version, and the third stop
    /// in a row disables the filter for that version, recorded once.
    async fn met(
        &self,
        place: (&PlaybookRef, &String, i64, &str),
        filters: &[Map<String, Value>],
        event: &Value,
    ) -> Met {
        let (pb, workflow, version, reference) = place;
        let key = |index: usize| -> FilterKey {
            (
                pb.clone(),
                workflow.clone(),
                version,
                format!("{reference}#{index}"),
            )
        };
        let now_ms = Utc::now().timestamp_millis() + self.limits.clock_offset_ms;
        for (index, with) in filters.iter().enumerate() {
            if written_type(with) != event.get("type").and_then(Value::as_str) {
                continue;
            }
            let key = key(index);
            if self.triggers.memory().disabled.contains(&key) {
                continue;
            }
            // Evaluated in place, as a workflow step's expressions are: a filter has 200 ms.
            let outcome = match_filter(with, event, now_ms);
            match outcome {
                FilterOutcome::Matched => {
                    self.triggers.memory().stops.remove(&key);
                    return Met::Matched;
                }
                FilterOutcome::NotMatched => {
                    self.triggers.memory().stops.remove(&key);
                }
                FilterOutcome::Raised(words) => {
                    let first = {
                        let mut memory = self.triggers.memory();
                        memory.stops.remove(&key);
                        memory.failed.insert(key.clone())
                    };
                    if first {
                        let detail = format!(
                            "The filter {index} at {reference} of version {version} raised on the event {}: {words}. It matches no event it raises on.",
                            event["id"].as_str().unwrap_or_default()
                        );
                        self.record_filter(
                            pb,
                            workflow,
                            "filter_failed",
                            reference,
                            index,
                            version,
                            detail,
                        )
                        .await;
                    }
                }
                FilterOutcome::Stopped(words) => {
                    let stops = {
                        let mut memory = self.triggers.memory();
                        let stops = memory.stops.entry(key.clone()).or_default();
                        *stops += 1;
                        let stops = *stops;
                        if stops >= FILTER_STOPS_MAX {
                            memory.disabled.insert(key.clone());
                        }
                        stops
                    };
                    if stops >= FILTER_STOPS_MAX {
                        let detail = format!(
                            "The filter {index} at {reference} of version {version} was stopped {FILTER_STOPS_MAX} times in a row ({words}); it is not evaluated again for this version. Save a new version with a cheaper filter."
                        );
                        self.record_filter(
                            pb,
                            workflow,
                            "filter_disabled",
                            reference,
                            index,
                            version,
                            detail,
                        )
                        .await;
                        // The event goes on without it: the other filters still hear it.
                        continue;
                    }
                    return Met::Stopped;
                }
            }
        }
        Met::NotMatched
    }

    #[allow(clippy::too_many_arguments)]
    async fn record_filter(
        &self,
        pb: &PlaybookRef,
        workflow: &str,
        event_type: &str,
        reference: &str,
        index: usize,
        version: i64,
        detail: String,
    ) {
        let mut event = workflow_record(
            workflow,
            event_type,
            json!({"reference": reference, "filter": index, "version": version, "detail": detail}),
        );
        event
            .extensions
            .insert("definitionversion".into(), json!(version));
        if let Err(error) = self.store.append_events(pb, vec![event]).await {
            tracing::warn!(%error, "a filter's record was not kept");
        }
    }

    /// Notes a start a trigger did not make, recorded with the others of its minute.
    fn refuse(&self, pb: &PlaybookRef, workflow: &str, kind: &str, reason: String) {
        let mut memory = self.triggers.memory();
        let refusals = memory
            .refusals
            .entry((pb.clone(), workflow.to_owned()))
            .or_default();
        refusals.count += 1;
        refusals.last_reason = format!("The {kind} trigger did not start a run: {reason}.");
    }

    /// Records each workflow's refusals as one `reaction_refused`, at most once a minute.
    async fn record_refusals(&self) {
        let due: Vec<((PlaybookRef, String), u64, String)> = {
            let mut memory = self.triggers.memory();
            memory
                .refusals
                .iter_mut()
                .filter(|(_, r)| {
                    r.count > 0
                        && r.recorded
                            .is_none_or(|at| at.elapsed() >= REFUSALS_RECORDED_EVERY)
                })
                .map(|(place, r)| {
                    let count = std::mem::take(&mut r.count);
                    r.recorded = Some(Instant::now());
                    (place.clone(), count, r.last_reason.clone())
                })
                .collect()
        };
        for ((pb, workflow), count, reason) in due {
            let event = workflow_record(
                &workflow,
                "reaction_refused",
                json!({ "count": count, "reason": reason }),
            );
            if let Err(error) = self.store.append_events(&pb, vec![event]).await {
                tracing::warn!(%error, "a reaction_refused was not kept");
            }
        }
    }

    /// Starts the waiting runs of a workflow's event trigger that its minute has room for.
    async fn start_waiting(&self, pb: &PlaybookRef, workflow: &str) -> Result<(), Problem> {
        let taken = self
            .store
            .take_trigger_starts(pb, workflow, EVENT_TRIGGER_RUNS_PER_MINUTE)
            .await
            .map_err(store_problem)?;
        // Some may wait for another try: look again at the next sweep. When nothing was
        // taken, the next queue or the full pass looks again.
        if !taken.is_empty() {
            self.triggers
                .memory()
                .pending
                .insert((pb.clone(), workflow.to_owned()));
        }
        for start in taken {
            let origin = Origin {
                depth: start.start["depth"].as_i64().unwrap_or(1),
                trigger: start.start["trigger"].clone(),
            };
            let version = start.start["version"].as_i64().unwrap_or(1);
            let input = start.start["input"].clone();
            let outcome = match self
                .start_triggered(pb, workflow, version, &start.run_id, input, origin)
                .await
            {
                Ok(()) => StartOutcome::Started,
                Err(NotStarted::Again(reason)) if start.attempts + 1 >= START_TRIES_MAX => {
                    self.refuse(
                        pb,
                        workflow,
                        "event",
                        format!("it was tried {START_TRIES_MAX} times: {reason}"),
                    );
                    StartOutcome::Dropped
                }
                Err(NotStarted::Again(_)) => StartOutcome::Again,
                Err(NotStarted::Refused(reason)) => {
                    self.refuse(pb, workflow, "event", reason);
                    StartOutcome::Dropped
                }
            };
            self.store
                .settle_trigger_start(pb, &start.run_id, outcome)
                .await
                .map_err(store_problem)?;
        }
        Ok(())
    }

    /// Starts a run of a workflow's version for a trigger, acting for the playbook. A run of
    /// that id that exists already counts as started: another server started it.
    async fn start_triggered(
        &self,
        pb: &PlaybookRef,
        workflow: &str,
        version: i64,
        run_id: &str,
        input: Value,
        origin: Origin,
    ) -> Result<(), NotStarted> {
        let kind = origin.trigger["kind"]
            .as_str()
            .unwrap_or("trigger")
            .to_owned();
        let started = self
            .start_triggered_run(pb, workflow, version, run_id, input, origin)
            .await;
        let outcome = match &started {
            Ok(()) => "started",
            Err(NotStarted::Again(_)) => "again",
            Err(NotStarted::Refused(_)) => "refused",
        };
        self.telemetry.trigger_start(&kind, outcome);
        started
    }

    /// [`Service::start_triggered`], uncounted.
    async fn start_triggered_run(
        &self,
        pb: &PlaybookRef,
        workflow: &str,
        version: i64,
        run_id: &str,
        input: Value,
        origin: Origin,
    ) -> Result<(), NotStarted> {
        let key = DefinitionKey::new("workflow", workflow);
        let again = |p: Problem| NotStarted::Again(p.detail);
        let current = self
            .store
            .get_definition(pb, &key)
            .await
            .map_err(|e| again(store_problem(e)))?;
        match current {
            None => {
                return Err(NotStarted::Refused(format!(
                    "the workflow {workflow} is gone"
                )));
            }
            Some(current) if current.status == DefinitionStatus::Retired => {
                return Err(NotStarted::Refused(format!(
                    "the workflow {workflow} is retired"
                )));
            }
            Some(_) => {}
        }
        let Some(definition) = self
            .store
            .get_definition_version(pb, &key, version)
            .await
            .map_err(|e| again(store_problem(e)))?
        else {
            return Err(NotStarted::Refused(format!(
                "version {version} of {workflow} is gone"
            )));
        };
        let caller = Caller {
            id: format!("playbook:{}", pb.playbook),
            org: Some(pb.org.clone()),
            role: Role::Runner,
        };
        let ask = Ask {
            run_id: run_id.to_owned(),
            input,
            lineage: None,
            origin: Some(origin),
            fresh: false,
        };
        match self
            .start_workflow(&caller, pb, &key, ask, &definition)
            .await
        {
            Ok(_) => Ok(()),
            Err(problem) => {
                if matches!(self.store.get_run(pb, run_id).await, Ok(Some(_))) {
                    return Ok(());
                }
                match problem.reason {
                    Reason::Unavailable | Reason::Failed => Err(again(problem)),
                    _ => Err(NotStarted::Refused(problem.detail)),
                }
            }
        }
    }

    /// Offers the playbook's new events to its listening tasks: each event that one of a
    /// task's filters with a written type matches is sent to the task's run, as an event sent
    /// with `send_run_event` is; the run's listen task then takes it.
    async fn hear(&self, pb: &PlaybookRef, listeners: &[&Listener]) -> Result<(), Problem> {
        let Some(from) = listeners.iter().map(|l| l.cursor_seq).min() else {
            return Ok(());
        };
        let events = self.events_after(pb, from).await?;
        if events.is_empty() {
            return Ok(());
        }
        let mut woke = false;
        for listener in listeners {
            let filters = filters_of(&listener.filters);
            let types: HashSet<&str> = filters.iter().filter_map(written_type).collect();
            let mut cursor = listener.cursor_seq;
            for event in events.iter().filter(|e| e.seq > listener.cursor_seq) {
                // "A run never takes an event it emitted itself."
                let own = event.run_id.as_deref() == Some(listener.run_id.as_str());
                if !own
                    && !is_history_type(&event.event_type)
                    && types.contains(event.event_type.as_str())
                {
                    let place = (
                        pb,
                        &listener.workflow,
                        listener.version,
                        listener.reference.as_str(),
                    );
                    let heard = envelope(event);
                    match self.met(place, &filters, &heard).await {
                        Met::Stopped => break,
                        Met::NotMatched => {}
                        Met::Matched => {
                            let mut sent = heard;
                            if let Some(map) = sent.as_object_mut() {
                                map.remove("seq");
                            }
                            let work = crate::workflow_runs::heard_work(&event.id, sent.clone());
                            match self
                                .store
                                .receive_run_event(pb, &listener.run_id, &event.id, sent, work)
                                .await
                            {
                                Ok(kept) => woke |= kept.is_some(),
                                // The run ended meanwhile: its listening ends with it.
                                Err(auto_store::StoreError::NotFound(_)) => break,
                                Err(error) => return Err(store_problem(error)),
                            }
                        }
                    }
                }
                cursor = event.seq;
            }
            if cursor > listener.cursor_seq {
                self.store
                    .advance_listener(pb, &listener.run_id, &listener.reference, cursor)
                    .await
                    .map_err(store_problem)?;
            }
        }
        if woke {
            self.scheduler.wake();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triggered_run_ids_are_derived_and_valid() {
        let a = triggered_run_id("digest", 2, "/schedule/on", "event-1");
        assert_eq!(a, triggered_run_id("digest", 2, "/schedule/on", "event-1"));
        assert_ne!(a, triggered_run_id("digest", 3, "/schedule/on", "event-1"));
        assert_ne!(a, triggered_run_id("digest", 2, "/schedule/on", "event-2"));
        assert!(a.starts_with("digest.on."));
        let long = triggered_run_id(
            &"w".repeat(200),
            1,
            "/schedule/every",
            "2026-01-01T00:00:00.000Z",
        );
        assert!(crate::runs::check_run_id(&long).is_ok(), "{long}");
        assert!(long.contains(".every."));
    }
}
