//! The records the store keeps and the changes it takes.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A playbook, named by its org and its own id.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PlaybookRef {
    pub org: String,
    pub playbook: String,
}

impl PlaybookRef {
    pub fn new(org: impl Into<String>, playbook: impl Into<String>) -> Self {
        Self {
            org: org.into(),
            playbook: playbook.into(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Org {
    pub id: String,
    pub title: Option<String>,
    pub created_at: DateTime<Utc>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Playbook {
    pub org: String,
    pub id: String,
    pub title: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A definition, named by its type and name within a playbook.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DefinitionKey {
    pub def_type: String,
    pub name: String,
}

impl DefinitionKey {
    pub fn new(def_type: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            def_type: def_type.into(),
            name: name.into(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefinitionStatus {
    Active,
    Retired,
}

impl DefinitionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Retired => "retired",
        }
    }
}

/// A version of a definition as saved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewDefinitionVersion {
    pub key: DefinitionKey,
    pub source: String,
    /// `None` keeps the overview of the version before (an update that leaves it out).
    pub overview: Option<String>,
    pub diagram: String,
    pub description: Option<String>,
    /// What the type's checker derived from the source (warnings, schemas, triggers, ...):
    /// opaque to the store.
    pub derived: Value,
    /// A workflow's triggers, kept beside the version (one per kind): the save keeps those it
    /// leaves as they were, starts again those it changes or adds, and stops the others.
    #[serde(default)]
    pub triggers: Vec<NewTrigger>,
}

/// A trigger a workflow's version names: its kind (`event`, `cron` or `every`) and what
/// get_definition shows of it, compared as a whole to tell whether a save changed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewTrigger {
    pub kind: String,
    pub spec: Value,
}

/// A trigger as kept: where it stands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Trigger {
    pub playbook: PlaybookRef,
    pub workflow: String,
    pub kind: String,
    pub spec: Value,
    /// The version of the workflow it starts now.
    pub version: i64,
    /// The seq of the record that saved it as it is; it matches nothing before.
    pub since_seq: i64,
    /// The database's time of that record.
    pub saved_at: DateTime<Utc>,
    /// An event trigger: the last seq it matched.
    pub cursor_seq: i64,
    /// A schedule: its next due time, once computed.
    pub due_at: Option<DateTime<Utc>>,
    /// A schedule: the run it started last.
    pub running_run_id: Option<String>,
    /// An event trigger changed before it read every event recorded until the save: the
    /// filters those events are matched with, oldest first.
    #[serde(default)]
    pub earlier: Vec<EarlierFilters>,
}

/// The filters an event trigger had until a save changed them, for the events it had not
/// read yet: those of seq below `until_seq`, the save's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EarlierFilters {
    pub filters: Value,
    pub until_seq: i64,
}

impl Trigger {
    /// The filters an event of `seq` is matched with: the earlier ones in force when it was
    /// recorded, or the trigger's own.
    pub fn filters_at(&self, seq: i64) -> &Value {
        self.earlier
            .iter()
            .find(|earlier| seq < earlier.until_seq)
            .map_or(&self.spec["filters"], |earlier| &earlier.filters)
    }
}

/// The earlier filters a save keeps when it changes an event trigger that stands at
/// `cursor_seq`: those it had, and its filters until now when events before the save's `seq`
/// are unread; only entries with events still to read.
pub fn earlier_after_change(
    earlier: Vec<EarlierFilters>,
    spec: &Value,
    cursor_seq: i64,
    seq: i64,
) -> Vec<EarlierFilters> {
    let mut kept: Vec<EarlierFilters> = earlier
        .into_iter()
        .filter(|earlier| earlier.until_seq > cursor_seq + 1)
        .collect();
    if cursor_seq + 1 < seq {
        kept.push(EarlierFilters {
            filters: spec["filters"].clone(),
            until_seq: seq,
        });
    }
    kept
}

/// A run an event trigger matched, to start when its minute has room.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TriggerStart {
    pub run_id: String,
    pub workflow: String,
    /// The seq of the event it matched; starts are taken in this order.
    pub event_seq: i64,
    /// What the run starts with: opaque to the store.
    pub start: Value,
    /// How many times a server took it and could not start it.
    pub attempts: i64,
}

/// What became of a start a server took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartOutcome {
    /// The run is recorded; the start stays a minute, counted in the rate.
    Started,
    /// It could not be taken at that moment: it waits again for the next sweep.
    Again,
    /// It is given up (refused, or tried too often).
    Dropped,
}

/// How a queue of matched starts went.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Queued {
    /// Starts now waiting.
    pub queued: u32,
    /// Starts refused because the workflow had as many waiting as it may.
    pub refused: u32,
}

/// A listen task that hears the playbook's events while it listens.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewListener {
    /// The task's reference in its run's document.
    pub reference: String,
    /// Its filters whose type is written out, as the document writes them.
    pub filters: Value,
}

/// A listening task as kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Listener {
    pub playbook: PlaybookRef,
    pub run_id: String,
    pub reference: String,
    pub workflow: String,
    pub version: i64,
    pub filters: Value,
    /// The last seq it was offered; it began after the step that started it.
    pub cursor_seq: i64,
}

/// A saved version of a definition, with the definition's status.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DefinitionVersion {
    pub key: DefinitionKey,
    pub version: i64,
    pub status: DefinitionStatus,
    pub source: String,
    pub overview: Option<String>,
    pub diagram: String,
    pub description: Option<String>,
    pub derived: Value,
    /// When version 1 was saved.
    pub created_at: DateTime<Utc>,
    /// When this version was saved, or the definition retired.
    pub updated_at: DateTime<Utc>,
    /// The `seq` of the event that saved this version.
    pub saved_seq: i64,
}

/// An event to append. The store gives it its `seq` and the database's time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewEvent {
    pub id: String,
    pub event_type: String,
    pub source: String,
    pub subject: Option<String>,
    /// The CloudEvents `time` the sender gave; `None` takes the database's time of recording.
    pub time: Option<DateTime<Utc>>,
    pub datacontenttype: Option<String>,
    pub data: Option<Value>,
    /// Every other attribute (CloudEvents extensions such as `caller`, `depth`).
    pub extensions: Map<String, Value>,
    pub run_id: Option<String>,
    pub run_seq: Option<i64>,
}

impl NewEvent {
    /// An event with only the required attributes.
    pub fn new(
        id: impl Into<String>,
        event_type: impl Into<String>,
        source: impl Into<String>,
    ) -> Self {
        Self {
            id: id.into(),
            event_type: event_type.into(),
            source: source.into(),
            subject: None,
            time: None,
            datacontenttype: None,
            data: None,
            extensions: Map::new(),
            run_id: None,
            run_seq: None,
        }
    }
}

/// An event as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Playbook-wide order, from 1, without gaps visible to a reader that follows it.
    pub seq: i64,
    pub id: String,
    pub event_type: String,
    pub source: String,
    pub subject: Option<String>,
    pub time: DateTime<Utc>,
    pub datacontenttype: Option<String>,
    pub data: Option<Value>,
    pub extensions: Map<String, Value>,
    pub run_id: Option<String>,
    pub run_seq: Option<i64>,
    /// The database's time when it was appended.
    pub recorded_at: DateTime<Utc>,
}

/// Which events `list_events` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventFilter {
    pub run_id: Option<String>,
    pub event_type: Option<String>,
    /// Only events with a greater `seq`.
    pub after_seq: Option<i64>,
    /// At most this many; 0 (the default) means [`crate::EVENTS_PAGE_MAX`], and a larger value
    /// is cut to it.
    pub limit: u32,
}

/// Where a run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Started,
    Succeeded,
    Rejected,
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "started",
            Self::Succeeded => "succeeded",
            Self::Rejected => "rejected",
            Self::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Started, Self::Succeeded, Self::Rejected, Self::Failed]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// A run to record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewRun {
    pub run_id: String,
    pub key: DefinitionKey,
    pub definition_version: i64,
    pub input: Value,
    /// The caller it acts for, such as `local`, a key's caller id, or `playbook:<id>`.
    pub started_by: String,
    pub parent_run_id: Option<String>,
    pub task_reference: Option<String>,
    pub depth: Option<i64>,
    pub call_depth: Option<i64>,
    /// What started it, when a trigger did: opaque to the store.
    pub trigger: Option<Value>,
    /// The call of `parent_run_id` this run answers.
    pub parent_call_id: Option<String>,
    /// The work this run's ending adds to `parent_run_id`, in the same transaction: how its
    /// caller hears of it. Kept as given; the store writes no work of its own.
    pub ending_work: Option<NewWork>,
    /// The workflow at the top of the tree of calls this run is in; `None` for that top run.
    pub root_run_id: Option<String>,
    /// With `root_run_id`: the run is refused with [`crate::StoreError::LimitReached`] when
    /// this many runs under that root are started already, counted and inserted atomically.
    pub open_calls_max: Option<i64>,
    /// When it started, where its starter settled it before recording it (a workflow's first
    /// step reads it); the database's time of the recording otherwise.
    pub started_at: Option<DateTime<Utc>>,
}

impl NewRun {
    /// A top run of `key`'s version `definition_version`: no parent, lineage, trigger or
    /// ending work, started at the database's time.
    pub fn new(
        run_id: impl Into<String>,
        key: DefinitionKey,
        definition_version: i64,
        input: Value,
        started_by: impl Into<String>,
    ) -> Self {
        NewRun {
            run_id: run_id.into(),
            key,
            definition_version,
            input,
            started_by: started_by.into(),
            parent_run_id: None,
            task_reference: None,
            depth: None,
            call_depth: None,
            trigger: None,
            parent_call_id: None,
            ending_work: None,
            root_run_id: None,
            open_calls_max: None,
            started_at: None,
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunEnding {
    /// `Succeeded`, `Rejected` or `Failed`; never `Started`.
    pub status: RunStatus,
    pub output: Option<Value>,
    pub record: Option<Value>,
    /// The problem document of a rejection or failure: opaque to the store.
    pub problem: Option<Value>,
}

/// A run as recorded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub run_id: String,
    pub key: DefinitionKey,
    pub definition_version: i64,
    pub status: RunStatus,
    pub input: Value,
    pub output: Option<Value>,
    pub record: Option<Value>,
    pub problem: Option<Value>,
    pub started_by: String,
    pub parent_run_id: Option<String>,
    pub task_reference: Option<String>,
    pub depth: Option<i64>,
    pub call_depth: Option<i64>,
    pub trigger: Option<Value>,
    pub parent_call_id: Option<String>,
    pub root_run_id: Option<String>,
    /// 1 for the first attempt; raised by `restart_run`.
    pub attempt: i64,
    /// The highest `run_seq` recorded for the run, 0 before any.
    pub last_run_seq: i64,
    /// The database's time of the run's last event.
    pub last_event_at: DateTime<Utc>,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
}

impl Run {
    /// The run `new` as a store inserts it at `at` (the database's time of the change), its
    /// last event numbered `last_run_seq`, started or, with `ending`, ended in the same change:
    /// attempt 1, started at `at` unless its starter settled a time. What a read of the row
    /// gives, so neither the store's writer nor a caller working ahead of the write reads it.
    pub fn as_inserted(
        new: &NewRun,
        at: DateTime<Utc>,
        last_run_seq: i64,
        ending: Option<&RunEnding>,
    ) -> Run {
        Run {
            run_id: new.run_id.clone(),
            key: new.key.clone(),
            definition_version: new.definition_version,
            status: ending.map_or(RunStatus::Started, |ending| ending.status),
            input: new.input.clone(),
            output: ending.and_then(|ending| ending.output.clone()),
            record: ending.and_then(|ending| ending.record.clone()),
            problem: ending.and_then(|ending| ending.problem.clone()),
            started_by: new.started_by.clone(),
            parent_run_id: new.parent_run_id.clone(),
            task_reference: new.task_reference.clone(),
            depth: new.depth,
            call_depth: new.call_depth,
            trigger: new.trigger.clone(),
            parent_call_id: new.parent_call_id.clone(),
            root_run_id: new.root_run_id.clone(),
            attempt: 1,
            last_run_seq,
            last_event_at: at,
            started_at: new.started_at.unwrap_or(at),
            ended_at: ending.map(|_| at),
        }
    }
}

/// Which runs `list_runs` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunFilter {
    pub def_type: Option<String>,
    pub name: Option<String>,
    pub status: Option<RunStatus>,
    /// Only runs whose problem has this `reason` (`invalid_input`, `conflict`, ...).
    pub reason: Option<String>,
    /// Only runs started at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only runs started before this time.
    pub until: Option<DateTime<Utc>>,
    /// Only runs listed after this one (newest first): the `run_id` of the last run of the page
    /// before.
    pub after_run_id: Option<String>,
    pub limit: u32,
}

/// One step of a workflow run, committed in one transaction (DESIGN §4): the new snapshot
/// (compare-and-set on its version), the step's events, the work it adds, the work it consumed
/// or cancelled, and, when the run ends with this step, its ending (whose fact is among
/// `events`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkflowStep {
    /// The snapshot's version when it was loaded; `None` for the run's first step.
    pub expected_version: Option<i64>,
    pub state: Value,
    /// Events of the run, each with the `run_seq` its writer expects.
    pub events: Vec<NewEvent>,
    pub add_work: Vec<NewWork>,
    /// The work item this step applied, removed with it.
    pub done_work: Option<i64>,
    /// Keys of the run's work items to remove (timers no longer wanted).
    pub cancel_work: Vec<String>,
    /// Listen tasks that begin to hear the playbook's events with this step, from the seq
    /// after its last event; past [`crate::LISTENERS_MAX`] a playbook, one is not kept.
    pub listen: Vec<NewListener>,
    /// References of the run's listen tasks that stop with this step.
    pub unlisten: Vec<String>,
    pub ending: Option<RunEnding>,
    /// Runs the step began and ended within it (calls it performed at once), recorded with
    /// it; their events are among `events`, each under its own run id.
    pub children: Vec<EndedChild>,
    /// The run this step is the first step of, recorded `started` with it in one transaction
    /// (its `run_started` among `events`), so a run is never recorded without its first step.
    /// `Conflict` when the playbook has a run of its id.
    pub start: Option<NewRun>,
}

/// What a committed step of a workflow run left: the snapshot's new version (0 when the step
/// recorded the run and ended it: no snapshot is kept of a run that never waited), and the run
/// as the step left it when the step recorded it or ended it (read back by the commit itself,
/// so the caller need not read it again).
#[derive(Clone, Debug, PartialEq)]
pub struct StepCommitted {
    pub version: i64,
    pub run: Option<Run>,
}

/// A run that began and ended within its caller's step: recorded `started` and ended in the
/// step's transaction, so nobody sees it started. `Conflict` when the playbook has a run of
/// its id.
#[derive(Clone, Debug, PartialEq)]
pub struct EndedChild {
    pub run: NewRun,
    pub ending: RunEnding,
}

/// Work due to a run: an input to apply or a command to carry out, once per key and run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewWork {
    pub key: String,
    /// When it is due; `None` for at once.
    pub due_at: Option<DateTime<Utc>>,
    /// What the runtime reads to carry it out: opaque to the store, kept as given.
    pub payload: Vec<u8>,
    /// An input of its run, applied to its snapshot: the run's inputs are applied one at a
    /// time in the order they were received (due time, then id), and no server claims one
    /// while an earlier one is leased to another. A command carried out beside the run (a
    /// call to start, a request to deliver) is not.
    pub ordered: bool,
}

/// A work item claimed by this server until its lease ends.
#[derive(Clone, Debug, PartialEq)]
pub struct Work {
    pub id: i64,
    pub playbook: PlaybookRef,
    pub run_id: String,
    pub key: String,
    pub due_at: DateTime<Utc>,
    /// As [`NewWork::payload`].
    pub payload: Vec<u8>,
    /// As [`NewWork::ordered`].
    pub ordered: bool,
}

/// The work queue at one moment: what `/metrics` shows of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkBacklog {
    /// Every item, timers that fall due later included.
    pub items: i64,
    /// Items due now that no server holds: what the servers have yet to claim.
    pub due: i64,
    /// How long the oldest of those has been due, by the database's clock; zero when none is.
    pub oldest_due_ms: i64,
}

/// An event sent to a workflow run (`send_run_event`), as its inbox keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInboxEvent {
    pub run_id: String,
    pub event_id: String,
    /// Its order among the events the run received, from 1.
    pub seq: i64,
    /// The event, opaque to the store.
    pub event: Value,
    /// The database's time when it was kept.
    pub received_at: DateTime<Utc>,
}

/// Where a request of the inbox stands (supplement §2, "A request").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    Open,
    Answered,
    Expired,
    Undelivered,
    Cancelled,
}

impl RequestStatus {
    pub const ALL: [RequestStatus; 5] = [
        Self::Open,
        Self::Answered,
        Self::Expired,
        Self::Undelivered,
        Self::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Answered => "answered",
            Self::Expired => "expired",
            Self::Undelivered => "undelivered",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// A request to leave in the inbox, beside the run that asks it. The store stamps
/// `created_at` with the database's time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewRequest {
    pub request_id: String,
    /// Who is asked: the rendered `to`.
    pub to: String,
    /// The rendered body, Markdown.
    pub message: String,
    /// The run's input, as the request shows it.
    pub input: Value,
    /// What the answer must match, when the definition says.
    pub output_schema: Option<Value>,
    pub expires_at: DateTime<Utc>,
}

/// A request as recorded. Its definition and version are its run's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub request_id: String,
    pub run_id: String,
    pub key: DefinitionKey,
    pub definition_version: i64,
    pub to: String,
    pub message: String,
    pub input: Value,
    pub output_schema: Option<Value>,
    pub status: RequestStatus,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub answered_by: Option<String>,
    pub answer: Option<Value>,
    /// The database's time when it stopped being open.
    pub closed_at: Option<DateTime<Utc>>,
}

/// How an open request closes: its new status and, for an answer, who gave which.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestClose {
    /// Any status but `Open`.
    pub status: RequestStatus,
    pub answered_by: Option<String>,
    pub answer: Option<Value>,
}

/// Which requests `list_requests` returns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestFilter {
    pub status: Option<RequestStatus>,
    /// Only requests listed after this one (newest first): the `request_id` of the last
    /// request of the page before.
    pub after_request_id: Option<String>,
    /// At most this many; 0 means [`crate::REQUESTS_PAGE_MAX`], and a larger value is cut to
    /// it.
    pub limit: u32,
}

/// A recall function's view as kept (see the `views` table): the view of one version, the last
/// seq of the log it met, whether it has caught up with the log once, and where a fold threw.
#[derive(Clone, Debug, PartialEq)]
pub struct RecallView {
    pub name: String,
    pub version: i64,
    /// Raised by every change; a writer names the revision it read.
    pub revision: i64,
    pub view: Value,
    pub folded_seq: i64,
    pub built: bool,
    /// The event a fold threw at and its error, as the runtime wrote them.
    pub stalled: Option<Value>,
    pub updated_at: DateTime<Utc>,
}

/// A recall function's view as a follower of the log sees it: where it is and how far it has
/// come, without its value.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewHead {
    pub playbook: PlaybookRef,
    pub name: String,
    pub version: i64,
    pub folded_seq: i64,
    pub built: bool,
    pub stalled: bool,
}

/// What one batch of a purge removed: runs, and the events they recorded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Purged {
    pub runs: i64,
    pub events: i64,
}

impl Purged {
    /// Adds what another batch removed.
    pub fn add(&mut self, other: &Purged) {
        self.runs += other.runs;
        self.events += other.events;
    }
}

/// What deleting a playbook or an org removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deleted {
    pub playbooks: i64,
    pub definitions: i64,
    /// Every run, ended or not.
    pub runs: i64,
    /// The runs among them that were still started (only with `force`).
    pub started_runs: i64,
    /// Every event of the log.
    pub events: i64,
}

impl Deleted {
    /// Adds what deleting another playbook removed.
    pub fn add(&mut self, other: &Deleted) {
        self.playbooks += other.playbooks;
        self.definitions += other.definitions;
        self.runs += other.runs;
        self.started_runs += other.started_runs;
        self.events += other.events;
    }
}
