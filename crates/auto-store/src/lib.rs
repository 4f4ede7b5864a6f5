//! The store: everything a playbook does, as an event log, beside orgs, playbooks and the
//! versions of definitions.
//!
//! One [`Store`] trait, implemented once over two databases (its transactions are written for
//! both, and only what really differs is per database): SQLite (the default, one server, which
//! holds an exclusive lock on its file) and PostgreSQL (several servers). The store knows nothing of
//! definitions' formats: a definition's source is text and what a checker derived from it is
//! opaque JSON.
//!
//! Architecture invariant: every change is one transaction: a definition's new version and
//! the event that records it commit together, or neither does.
//!
//! Tests open a store of their own with [`open`]`("sqlite::memory:")` (one connection, gone
//! with the store) or, on PostgreSQL, [`open_postgres_isolated`] (a fresh schema per store, so
//! tests running at once on one database do not see each other).

mod dialect;
mod model;
mod postgres;
mod shared;
mod sql;
mod sqlite;

pub use model::*;
pub use postgres::open_postgres_isolated;

use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;

/// What can go wrong in the store. `Conflict` and `NotFound` are expected outcomes the service
/// turns into problem documents; the rest are faults.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The change conflicts with what is stored: a duplicate id, a definition that changed or
    /// was retired since it was read, a run number already taken.
    #[error("conflict: {0}")]
    Conflict(String),
    /// A limit the change asked the store to keep would be passed (the calls waiting under one
    /// top workflow): nothing was written.
    #[error("limit reached: {0}")]
    LimitReached(String),
    /// The thing the change needs (an org, a playbook, a definition) is not there.
    #[error("not found: {0}")]
    NotFound(String),
    /// Another server holds the SQLite file.
    #[error("{0}")]
    Locked(String),
    /// The database URL is not one the store can open.
    #[error("{0}")]
    BadUrl(String),
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// The commit a change was grouped into failed (or the group could not go on): the change
    /// is not stored. Every change of the group is answered with the same fault.
    #[error("database: {0}")]
    Commit(std::sync::Arc<sqlx::Error>),
    #[error("migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("stored data is not valid: {0}")]
    Corrupt(String),
}

impl StoreError {
    /// Whether the fault may clear by itself, so that the same change can be tried again: a
    /// connection cut or reset (PostgreSQL `57P01 admin_shutdown` and the other `57P0x`, any
    /// `08xxx` connection exception), a pool that had no connection in time, a serialization
    /// failure or deadlock (`40001`, `40P01`), a server short of resources (`53xxx`), or a
    /// SQLite database that is busy, locked, full, read-only or failed at its disk.
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Database(error) => transient(error),
            StoreError::Commit(error) => transient(error),
            _ => false,
        }
    }
}

/// Whether a database's fault may clear by itself (see [`StoreError::is_transient`]).
fn transient(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::WorkerCrashed => true,
        sqlx::Error::Database(database) => {
            let code = database.code().unwrap_or_default();
            let sqlite = database
                .try_downcast_ref::<sqlx::sqlite::SqliteError>()
                .is_some()
                || database
                    .try_downcast_ref::<sql::sqlite_changes::RawSqliteError>()
                    .is_some();
            if sqlite {
                // SQLite's extended code; the primary is its low byte: BUSY 5, LOCKED 6,
                // READONLY 8, IOERR 10, FULL 13.
                code.parse::<i32>()
                    .is_ok_and(|code| matches!(code & 0xff, 5 | 6 | 8 | 10 | 13))
            } else {
                code.starts_with("08")
                    || code.starts_with("53")
                    || matches!(&*code, "40001" | "40P01" | "57P01" | "57P02" | "57P03")
            }
        }
        _ => false,
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The store's operations. The same test suite runs on both databases.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// Which implementation this is: `sqlite` or `postgres`.
    fn kind(&self) -> &'static str;

    /// The database's clock. Ages of events are read from it, never from the machine's.
    async fn now(&self) -> Result<DateTime<Utc>>;

    /// Whether the store can write at this moment, for `/healthz`: on SQLite a small change
    /// that needs a new page is made and committed (so a full disk, a read-only file or a
    /// wedged connection shows), on PostgreSQL the database says it takes writes. Nothing it
    /// does is seen by any other operation.
    async fn check_writable(&self) -> Result<()>;

    /// Closes the store's connections and waits until they are: on SQLite the log is written
    /// back into the file and removed, and the file is free for another process. Every later
    /// operation fails. A server calls it last, as it stops.
    async fn close(&self);

    async fn create_org(&self, id: &str, title: Option<&str>) -> Result<Org>;
    async fn get_org(&self, id: &str) -> Result<Option<Org>>;
    async fn list_orgs(&self) -> Result<Vec<Org>>;

    /// Fails with `NotFound` when the org does not exist, `Conflict` when the playbook does.
    async fn create_playbook(&self, org: &str, id: &str, title: Option<&str>) -> Result<Playbook>;
    async fn get_playbook(&self, playbook: &PlaybookRef) -> Result<Option<Playbook>>;
    /// The `seq` of the playbook's last event committed (0 before any), where a follower that
    /// wants only what comes next starts; `NotFound` when the playbook does not exist. Every
    /// event up to it is visible: appends to one playbook commit in `seq` order.
    async fn log_end(&self, playbook: &PlaybookRef) -> Result<i64>;

    /// The kept view of the playbook's recall function `name`, if one is kept.
    async fn get_view(&self, playbook: &PlaybookRef, name: &str) -> Result<Option<RecallView>>;
    /// Keeps `view` (its `revision` is ignored) and answers the row as kept, or `None` when the
    /// row is not as the writer read it: with `expected_revision`, the row of that revision
    /// and the same version; without, no row, or a row of an older version (a new version's
    /// view replaces it).
    async fn put_view(
        &self,
        playbook: &PlaybookRef,
        view: &RecallView,
        expected_revision: Option<i64>,
    ) -> Result<Option<RecallView>>;
    /// The views kept (without their values), of one playbook or of every playbook, by
    /// playbook then name: what a follower of the log needs to know of each.
    async fn list_views(&self, playbook: Option<&PlaybookRef>) -> Result<Vec<ViewHead>>;
    /// Holds the view of `name` for `holder` (a server, by an id of its own) for `lease`, when
    /// no other holder's lease is live: one server folds a view at a time. `false` when another
    /// holds it or there is no such view. Holding leaves the view's `revision` as it was.
    async fn hold_view(
        &self,
        playbook: &PlaybookRef,
        name: &str,
        holder: &str,
        lease: std::time::Duration,
    ) -> Result<bool>;
    /// The org's playbooks by id; `NotFound` when the org does not exist.
    async fn list_playbooks(&self, org: &str) -> Result<Vec<Playbook>>;

    /// Saves version 1 of a new definition and appends `event` (its `definition_created`), in
    /// one transaction. `Conflict` when a definition of that type and name exists, active or
    /// retired.
    async fn create_definition(
        &self,
        playbook: &PlaybookRef,
        new: NewDefinitionVersion,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)>;

    /// Saves the next version of an active definition whose latest version is
    /// `expected_version`, and appends `event`, in one transaction. `Conflict` when the latest
    /// version is another one or the definition is retired; `NotFound` when there is none.
    async fn update_definition(
        &self,
        playbook: &PlaybookRef,
        expected_version: i64,
        new: NewDefinitionVersion,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)>;

    /// Marks an active definition retired and appends `event`, in one transaction. The
    /// versions stay. `Conflict` when it is retired already; `NotFound` when there is none.
    async fn retire_definition(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)>;

    /// The latest version of a definition, active or retired.
    async fn get_definition(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
    ) -> Result<Option<DefinitionVersion>>;

    async fn get_definition_version(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        version: i64,
    ) -> Result<Option<DefinitionVersion>>;

    /// The latest version of each definition, of one type or all, ordered by type then name
    /// (byte order on both stores). `NotFound` when the playbook does not exist.
    async fn list_definitions(
        &self,
        playbook: &PlaybookRef,
        def_type: Option<&str>,
    ) -> Result<Vec<DefinitionVersion>>;

    /// Appends events in one transaction, numbered in order with the playbook's next `seq`s.
    /// `Conflict` when an id is taken in the playbook or a `(run_id, run_seq)` is; then none is
    /// appended. `NotFound` when the playbook does not exist.
    async fn append_events(
        &self,
        playbook: &PlaybookRef,
        events: Vec<NewEvent>,
    ) -> Result<Vec<Event>>;

    /// Events in `seq` order, after `after_seq`, at most `limit` (0 means
    /// [`EVENTS_PAGE_MAX`], and no page is larger). `NotFound` when the playbook does not exist.
    /// A follower that reads by cursor never misses an event: one that is not visible yet can
    /// only have a greater `seq` than every event visible. The `seq`s are gapless from 1 but
    /// where [`Store::purge_runs`] removed events: a `seq` is never given again.
    async fn list_events(&self, playbook: &PlaybookRef, filter: &EventFilter)
    -> Result<Vec<Event>>;

    async fn get_event(&self, playbook: &PlaybookRef, id: &str) -> Result<Option<Event>>;

    // Runs. A run's events carry its `run_id` and the `run_seq` the caller expects next; the
    // unique `(run_id, run_seq)` refuses a second attempt that numbers the same event, so of
    // two attempts that go on at once the second stops at its first event. Each change below
    // gives its events the run's `run_id` when they have none (`Conflict` when one names
    // another run), raises the run's `last_run_seq` to their highest `run_seq`, and sets its
    // `last_event_at` to the database's time of the change.

    /// Records a new run as `started` (attempt 1) with its first events (its `run_started`),
    /// in one transaction. `Conflict` when the playbook has a run of that id.
    async fn start_run(
        &self,
        playbook: &PlaybookRef,
        new: NewRun,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)>;

    /// Starts an ended run again under its id (the next attempt): status `started`, output,
    /// record, problem and `ended_at` cleared, `attempt` raised by one, at `definition_version`
    /// (the definition runs again, at its latest version) and `started_at` the database's time
    /// now (the attempt's `today`, `now` and bound count from it), with `events`, in one
    /// transaction. Compare-and-set: `Conflict` unless the run's attempt is `expected_attempt`
    /// and it has ended. `last_run_seq` stays: its events go on numbering after those of the
    /// attempts before.
    async fn restart_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        expected_attempt: i64,
        definition_version: i64,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)>;

    /// Appends events of a run that is `started`, each with the `run_seq` its writer expects;
    /// updates the run's `last_run_seq` and `last_event_at`. `Conflict` when a number is taken
    /// or the run has ended; `NotFound` when there is no such run.
    async fn record_run_events(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        events: Vec<NewEvent>,
    ) -> Result<Vec<Event>>;

    /// Ends a `started` run with its ending and its last events (its `run_succeeded`, ...), in
    /// one transaction; `ended_at` is the database's time. `Conflict` when it has ended, and
    /// when `ending.status` is `Started`, which ends nothing (then nothing changes).
    async fn end_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        ending: RunEnding,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)>;

    async fn get_run(&self, playbook: &PlaybookRef, run_id: &str) -> Result<Option<Run>>;

    /// Runs newest first (by `started_at`, then `run_id`, both descending), filtered, after the
    /// cursor, at most `limit` (0 means [`RUNS_PAGE_MAX`], and no page is larger). A cursor
    /// that names no run of the playbook gives an empty page. `NotFound` when the playbook does
    /// not exist.
    async fn list_runs(&self, playbook: &PlaybookRef, filter: &RunFilter) -> Result<Vec<Run>>;

    // Workflow runs (DESIGN §4).

    /// Commits one step of a started workflow run in one transaction. `Conflict` when the
    /// snapshot's version is not `expected_version` (another server took the run over), when
    /// a snapshot exists and `expected_version` is `None`, when the run is not started, or when
    /// an event's `run_seq` is taken; then nothing changes. Returns the snapshot's new version,
    /// with the run as the step left it when the step recorded it or ended it. The step is
    /// shared, so that a caller that commits it again after a passing fault keeps it without a
    /// copy; a store copies it only where it must.
    async fn commit_workflow_step(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        step: Arc<WorkflowStep>,
    ) -> Result<StepCommitted>;

    /// The run's snapshot and its version.
    async fn get_workflow_state(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Option<(i64, Value)>>;

    /// Adds work for a run outside a step (a child's ending, a cancel); an item whose key the
    /// run has already is kept as it is.
    async fn add_work(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        work: Vec<NewWork>,
    ) -> Result<()>;

    /// Claims for `claimer` (a server's scheduler, by an id of its own) up to `limit` items
    /// that are due and not held by a live lease, oldest due first, holding each for `lease`.
    /// Two claimers never hold one item at once, and an ordered input is not claimed while an
    /// earlier ordered input of its run is held by another claimer (or not claimed with it):
    /// a run's inputs go to one claimer at a time, in order.
    async fn claim_work(
        &self,
        claimer: &str,
        lease: std::time::Duration,
        limit: u32,
    ) -> Result<Vec<Work>>;

    /// Removes a work item that was carried out.
    async fn finish_work(&self, id: i64) -> Result<()>;

    /// How many runs under the top run `root_run_id` are still started: the calls its tree
    /// waits for.
    async fn count_open_calls(&self, playbook: &PlaybookRef, root_run_id: &str) -> Result<i64>;

    /// When the next item may be claimed: when it falls due, or, while a server holds it, when
    /// its lease ends; `None` when there is no work.
    async fn next_work_due(&self) -> Result<Option<DateTime<Utc>>>;

    /// The work queue as a whole, every playbook's, read once for `/metrics`.
    async fn work_backlog(&self) -> Result<WorkBacklog>;

    /// When the run's next input (an ordered item: a timer, an event, a child's ending, a
    /// cancel) falls due, held or not, leaving out the item `except`; `None` when it has none.
    async fn next_input_due(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        except: Option<i64>,
    ) -> Result<Option<DateTime<Utc>>>;

    // The events sent to workflow runs.

    /// Keeps an event sent to a run in the run's inbox under `event_id`, numbered after the
    /// run's earlier events, and adds `work` for the run (the input that hands the event to
    /// it), in one transaction. `Ok(None)` when the run has an event of that id already: then
    /// nothing changes. `NotFound` when the playbook has no run of that id that is `started`.
    async fn receive_run_event(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        event_id: &str,
        event: Value,
        work: NewWork,
    ) -> Result<Option<RunInboxEvent>>;

    /// The events a run received, in the order it received them.
    async fn list_run_inbox(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Vec<RunInboxEvent>>;

    // Interaction requests: the inbox (supplement §2, "A request").

    /// Records a new run as `started` with its first events, the request it leaves in the
    /// inbox (`open`), and its work (the expiry), in one transaction. `Conflict` when the
    /// playbook has a run of that id or a request of that id; then nothing is recorded.
    async fn start_interaction(
        &self,
        playbook: &PlaybookRef,
        new: NewRun,
        events: Vec<NewEvent>,
        request: NewRequest,
        work: Vec<NewWork>,
    ) -> Result<(Run, Request)>;

    /// Closes an open request and ends its run, in one transaction: the request's status
    /// (with who answered and the answer), the run's ending exactly as [`Store::end_run`]
    /// records it, the run's last events, and the removal of the run's work of `done_work`
    /// keys (the expiry). `Conflict` when the request is not open or the run has ended, and
    /// when `close.status` is `Open`; then nothing changes. `NotFound` when there is no such
    /// request.
    async fn close_request(
        &self,
        playbook: &PlaybookRef,
        request_id: &str,
        close: RequestClose,
        ending: RunEnding,
        events: Vec<NewEvent>,
        done_work: Vec<String>,
    ) -> Result<(Request, Run)>;

    async fn get_request(
        &self,
        playbook: &PlaybookRef,
        request_id: &str,
    ) -> Result<Option<Request>>;

    /// The request a run left, when it left one.
    async fn get_request_of_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Option<Request>>;

    /// Requests newest first (by `created_at`, then `request_id`, both descending), filtered,
    /// after the cursor, at most `limit`. A cursor that names no request of the playbook gives
    /// an empty page. `NotFound` when the playbook does not exist.
    async fn list_requests(
        &self,
        playbook: &PlaybookRef,
        filter: &RequestFilter,
    ) -> Result<Vec<Request>>;

    // Triggers and listening tasks (workflow page, "Triggers", "Waiting for events").

    /// Every trigger of every playbook, by playbook, workflow and kind.
    async fn list_triggers(&self) -> Result<Vec<Trigger>>;

    /// Queues the starts an event trigger matched and moves its cursor to `cursor_seq`, in one
    /// transaction. A start whose run exists or that waits already is left out; past
    /// `waiting_max` starts waiting for the workflow, one is refused. Nothing changes when the
    /// workflow's event trigger is no longer the one saved at `since_seq`.
    #[allow(clippy::too_many_arguments)]
    async fn queue_trigger_starts(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        since_seq: i64,
        cursor_seq: i64,
        starts: Vec<TriggerStart>,
        waiting_max: i64,
    ) -> Result<Queued>;

    /// Takes, in event order, the waiting starts of a workflow's event trigger that fit in
    /// its minute (at most `per_minute` taken in the last 60 seconds, by the database's
    /// clock), with any taken over [`TRIGGER_START_LEASE_SECONDS`] ago whose run was never
    /// recorded. Starts taken over two minutes ago whose run exists are forgotten.
    async fn take_trigger_starts(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        per_minute: i64,
    ) -> Result<Vec<TriggerStart>>;

    /// What became of a start a server took.
    async fn settle_trigger_start(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        outcome: StartOutcome,
    ) -> Result<()>;

    /// Moves a schedule trigger to its next due time and names the run it started, if any,
    /// compare-and-set on the due time it had; `false` when another server moved it first or
    /// the trigger is no longer the one saved at `since_seq`.
    #[allow(clippy::too_many_arguments)]
    async fn move_schedule(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        kind: &str,
        since_seq: i64,
        expected_due_at: Option<DateTime<Utc>>,
        due_at: DateTime<Utc>,
        running_run_id: Option<&str>,
    ) -> Result<bool>;

    /// Every listening task of every playbook.
    async fn list_listeners(&self) -> Result<Vec<Listener>>;

    /// Records that a listening task was offered the events up to `cursor_seq`.
    async fn advance_listener(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        reference: &str,
        cursor_seq: i64,
    ) -> Result<()>;

    // The data's lifecycle.

    /// One batch of a purge, in one transaction: removes up to `batch` runs of the playbook
    /// that ended before `ended_before`, oldest started first, with their events, inbox,
    /// snapshot, request, work and trigger starts. It leaves a run that is still started, one
    /// whose parent is still started, one with a started child, one whose request is open, and
    /// one with an event after the `seq` a follower of the log has read (the view of an active
    /// recall function, a stalled one included; an event trigger; a listening task). The
    /// playbook's `last_seq` stays, so no `seq` is given twice: the log has holes where the
    /// events were. Fewer than `batch` runs removed means none is left to remove. `NotFound`
    /// when the playbook does not exist.
    async fn purge_runs(
        &self,
        playbook: &PlaybookRef,
        ended_before: DateTime<Utc>,
        batch: u32,
    ) -> Result<Purged>;

    /// Deletes a playbook with its definitions, runs, log, requests, work, triggers and views,
    /// in one transaction; its id may be used again afterwards, for a playbook that starts
    /// empty. `Conflict` (and nothing changes) when a run of it is still started, unless
    /// `force`. `NotFound` when there is no such playbook.
    async fn delete_playbook(&self, playbook: &PlaybookRef, force: bool) -> Result<Deleted>;

    /// Deletes an org and each of its playbooks as [`Store::delete_playbook`] does, in one
    /// transaction. `Conflict` when a run of one of them is still started, unless `force`.
    /// `NotFound` when there is no such org.
    async fn delete_org(&self, org: &str, force: bool) -> Result<Deleted>;
}

/// "Workflows with triggers: 1,024 a playbook, whatever their triggers; one more is refused
/// `conflict`" (workflow page, "Limits"): a save past it fails with
/// [`StoreError::LimitReached`].
pub const TRIGGERED_WORKFLOWS_MAX: i64 = 1_024;

/// "Tasks listening to a playbook: 4,096 at once; one more hears only events sent to its
/// run."
pub const LISTENERS_MAX: i64 = 4_096;

/// A start a server took and did not settle is taken again after this long, unless its run
/// was recorded.
pub const TRIGGER_START_LEASE_SECONDS: i64 = 30;

/// The most events one `list_events` returns; a filter's `limit` of 0 asks for this many.
pub const EVENTS_PAGE_MAX: u32 = 10_000;

/// The event types every run records, which `events_type_idx` leaves out (migration 0012):
/// they are dense in the log, so a listing of one by type reads the log in `seq` order and
/// soon fills its page, and recording them writes no page of that index.
pub(crate) const LOG_ORDER_EVENT_TYPES: [&str; 12] = [
    "run_started",
    "run_succeeded",
    "step_started",
    "step_completed",
    "call_started",
    "call_ended",
    "model_call_started",
    "model_call_answered",
    "tool_call_started",
    "tool_call_answered",
    "wait_started",
    "wait_ended",
];

/// The most runs one `list_runs` returns; a filter's `limit` of 0 asks for this many.
pub const RUNS_PAGE_MAX: u32 = 1_000;

/// The most requests one `list_requests` returns; a filter's `limit` of 0 asks for this many.
pub const REQUESTS_PAGE_MAX: u32 = 1_000;

/// Opens the store a URL names, creating the database and running migrations when needed:
/// `sqlite://path` (created when missing; refused with `Locked` while another server holds
/// it), `sqlite::memory:` for tests, or `postgres://...`.
pub async fn open(url: &str) -> Result<Arc<dyn Store>> {
    // Only the scheme goes into a message: the rest of a URL may hold a password.
    let scheme = url.split_once(':').map(|(scheme, _)| scheme);
    match scheme {
        Some("sqlite") => Ok(Arc::new(sqlite::open(url).await?)),
        Some("postgres" | "postgresql") => Ok(Arc::new(postgres::open(url).await?)),
        Some(other) => Err(StoreError::BadUrl(format!(
            "the database URL's scheme {other:?} is not one the store knows: use sqlite://path or postgres://..."
        ))),
        None => Err(StoreError::BadUrl(
            "the database URL has no scheme: use sqlite://path or postgres://...".into(),
        )),
    }
}
