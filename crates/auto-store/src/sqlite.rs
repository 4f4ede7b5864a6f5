//! The store on SQLite: one file in WAL mode with `synchronous=FULL`, held by one server through
//! an exclusive lock on `<file>.lock`. Writes go through one connection in `BEGIN IMMEDIATE`
//! transactions; reads use a small pool beside it.

use std::borrow::Cow;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use serde_json::{Map, Value};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
    SqliteSynchronous,
};
use sqlx::{AssertSqlSafe, Row, SqlSafeStr, Sqlite, Transaction};

use crate::shared::{
    check_close_status, check_ending_status, deep_json, definition_change_refused,
    event_insert_error, list_requests_sql, list_runs_sql, open_calls_reached, page_limit,
    parse_request_status, parse_run_status, parse_status, playbook_not_found, recorded_event,
    request_change_refused, request_columns, requests_page_limit, run_change_refused, run_columns,
    run_events, run_not_found, runs_page_limit, saved_version, single, triggered_workflows_reached,
};
use crate::{
    DefinitionKey, DefinitionVersion, EarlierFilters, Event, EventFilter, LISTENERS_MAX, Listener,
    NewDefinitionVersion, NewEvent, NewListener, NewRequest, NewRun, NewTrigger, NewWork, Org,
    Playbook, PlaybookRef, Queued, Request, RequestClose, RequestFilter, Result, Run, RunEnding,
    RunFilter, RunInboxEvent, StartOutcome, Store, StoreError, TRIGGER_START_LEASE_SECONDS,
    TRIGGERED_WORKFLOWS_MAX, Trigger, TriggerStart, Work, WorkflowStep, earlier_after_change,
};

/// How many connections read beside the one that writes.
const READ_CONNECTIONS_MAX: u32 = 4;

/// How long a statement waits for SQLite's own file lock before it fails. Only this process
/// writes, so waits are short: a checkpoint, or a reader that holds the file briefly.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The database's clock, as the text the times it stamps are stored in: RFC 3339 in UTC with
/// milliseconds, so that text order is time order.
macro_rules! now_sql {
    () => {
        "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
    };
}

const MIGRATION_STORE: &str = include_str!("../migrations/sqlite/0001_store.sql");
const MIGRATION_RUNS: &str = include_str!("../migrations/sqlite/0002_runs.sql");
const MIGRATION_WORKFLOWS: &str = include_str!("../migrations/sqlite/0003_workflows.sql");
const MIGRATION_REQUESTS: &str = include_str!("../migrations/sqlite/0004_requests.sql");
const MIGRATION_CALLS: &str = include_str!("../migrations/sqlite/0005_calls.sql");
const MIGRATION_RUN_INBOX: &str = include_str!("../migrations/sqlite/0006_run_inbox.sql");
const MIGRATION_TRIGGERS: &str = include_str!("../migrations/sqlite/0007_triggers.sql");
const MIGRATION_EARLIER_FILTERS: &str =
    include_str!("../migrations/sqlite/0008_earlier_filters.sql");
const MIGRATION_ORDERED_WORK: &str = include_str!("../migrations/sqlite/0009_ordered_work.sql");
const MIGRATION_ENDING_WORK: &str = include_str!("../migrations/sqlite/0010_ending_work.sql");

/// The columns `event_from_row` reads, in the order a `SELECT` lists them.
macro_rules! event_columns {
    () => {
        "SELECT seq, id, type, source, subject, time, datacontenttype, data, extensions, \
         run_id, run_seq, recorded_at FROM events"
    };
}

/// The columns `definition_from_row` reads, from `definitions d` joined with
/// `definition_versions v`.
macro_rules! definition_columns {
    () => {
        "SELECT d.def_type, d.name, d.status, d.latest_version, d.created_at, d.updated_at, \
         v.version, v.source, v.overview, v.diagram, v.description, v.derived, v.saved_seq, \
         v.saved_at \
         FROM definitions d JOIN definition_versions v ON v.definition_pk = d.pk"
    };
}

/// The SQLite store.
pub(crate) struct SqliteStore {
    /// One connection: every change is serialized here.
    writer: SqlitePool,
    /// Reads; the same pool as `writer` for an in-memory database, which exists only on its
    /// one connection.
    reader: SqlitePool,
    /// Held for the life of the store: while it is, no other server opens the file.
    _file_lock: Option<File>,
}

impl SqliteStore {
    pub(crate) async fn open(url: &str) -> Result<Self> {
        let options = SqliteConnectOptions::from_str(url).map_err(|error| {
            StoreError::BadUrl(format!("the SQLite database URL is not valid: {error}"))
        })?;
        if is_in_memory(url) {
            return Self::open_in_memory(options).await;
        }
        let path = options.get_filename().to_owned();
        let file_lock = lock_database_file(&path)?;
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT);
        // A connection whose transaction rolled back (a write that failed, at a full disk or
        // a file SQLite opened read-only without saying so, as it does a file it may not
        // write) is closed before the next write, which opens a new one: so a fault that
        // cleared leaves nothing behind on the connection.
        let rolled_back = Arc::new(AtomicBool::new(false));
        let hook = rolled_back.clone();
        let writer = pool_options()
            .max_connections(1)
            .after_connect(move |connection, _| {
                let hook = hook.clone();
                Box::pin(async move {
                    connection
                        .lock_handle()
                        .await?
                        .set_rollback_hook(move || hook.store(true, Ordering::Release));
                    Ok(())
                })
            })
            .before_acquire(move |_, _| {
                let keep = !rolled_back.swap(false, Ordering::AcqRel);
                Box::pin(async move { Ok(keep) })
            })
            .connect_with(options.clone())
            .await?;
        migrator().run(&writer).await?;
        let reader = pool_options()
            .max_connections(READ_CONNECTIONS_MAX)
            .connect_with(options)
            .await?;
        tracing::info!(path = %path.display(), "the SQLite store is open");
        Ok(Self {
            writer,
            reader,
            _file_lock: Some(file_lock),
        })
    }

    async fn open_in_memory(options: SqliteConnectOptions) -> Result<Self> {
        // The database lives as long as its connection: the pool keeps exactly one, for ever.
        let pool = pool_options()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_with(options.foreign_keys(true))
            .await?;
        migrator().run(&pool).await?;
        Ok(Self {
            writer: pool.clone(),
            reader: pool,
            _file_lock: None,
        })
    }

    async fn begin(&self) -> Result<Transaction<'static, Sqlite>> {
        // IMMEDIATE takes the write lock at the start, so a transaction never fails half way
        // for want of it; sqlx rolls it back if the future is dropped.
        match self.writer.begin_with("BEGIN IMMEDIATE").await {
            Ok(tx) => Ok(tx),
            // A transaction that failed at a fault SQLite answers by rolling back itself (a
            // full disk: SQLITE_FULL, SQLITE_IOERR) leaves sqlx counting it open, as its own
            // ROLLBACK then fails, and sqlx refuses every later BEGIN on that connection. The
            // connection is closed, and the write goes on a new one.
            Err(sqlx::Error::InvalidSavePointStatement | sqlx::Error::BeginFailed) => {
                tracing::warn!(
                    "the SQLite writer's connection was left inside a failed transaction; it is opened again"
                );
                if let Err(error) = self.writer.acquire().await?.close().await {
                    tracing::warn!(%error, "the SQLite writer's connection did not close cleanly");
                }
                Ok(self.writer.begin_with("BEGIN IMMEDIATE").await?)
            }
            Err(other) => Err(other.into()),
        }
    }

    /// The request whose `column` (its id, or its run's) is `value`.
    async fn request_where(
        &self,
        playbook: &PlaybookRef,
        column: &'static str,
        value: &str,
    ) -> Result<Option<Request>> {
        // Invariant: `column` is one of two fixed names, never the caller's text.
        debug_assert!(matches!(column, "request_id" | "run_id"));
        let sql = format!(
            concat!(
                "SELECT ",
                request_columns!(),
                " FROM requests WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = ?1 \
                 AND id = ?2) AND {} = ?3"
            ),
            column
        );
        sqlx::query(AssertSqlSafe(sql))
            .bind(&playbook.org)
            .bind(&playbook.playbook)
            .bind(value)
            .fetch_optional(&self.reader)
            .await?
            .as_ref()
            .map(request_from_row)
            .transpose()
    }

    /// Fails with `NotFound` unless the playbook exists.
    async fn require_playbook(&self, playbook: &PlaybookRef) -> Result<i64> {
        sqlx::query_scalar("SELECT pk FROM playbooks WHERE org = ?1 AND id = ?2")
            .bind(&playbook.org)
            .bind(&playbook.playbook)
            .fetch_optional(&self.reader)
            .await?
            .ok_or_else(|| playbook_not_found(playbook))
    }
}

fn pool_options() -> SqlitePoolOptions {
    // A connection to a file in this process does not go stale: checking it before each use
    // would cost a round trip to its thread for nothing.
    SqlitePoolOptions::new().test_before_acquire(false)
}

/// Whether a SQLite URL names an in-memory database.
fn is_in_memory(url: &str) -> bool {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
        .unwrap_or(url);
    let database = rest.split('?').next().unwrap_or(rest);
    database == ":memory:" || rest.contains("mode=memory")
}

/// Takes the exclusive lock on `<path>.lock`, or fails with `Locked` when another server (or
/// another store in this process) holds it.
fn lock_database_file(path: &Path) -> Result<File> {
    let mut lock_path = PathBuf::from(path).into_os_string();
    lock_path.push(".lock");
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|error| {
            let message = format!("the lock file {}: {error}", Path::new(&lock_path).display());
            StoreError::Database(sqlx::Error::Io(std::io::Error::new(error.kind(), message)))
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(StoreError::Locked(format!(
            "the database file {} is in use by another auto server (it is locked)",
            path.display()
        ))),
        Err(TryLockError::Error(error)) => Err(StoreError::Database(sqlx::Error::Io(error))),
    }
}

fn migrator() -> Migrator {
    Migrator::with_migrations(vec![
        Migration::new(
            1,
            Cow::Borrowed("the store"),
            MigrationType::Simple,
            MIGRATION_STORE.into_sql_str(),
            false,
        ),
        Migration::new(
            2,
            Cow::Borrowed("runs"),
            MigrationType::Simple,
            MIGRATION_RUNS.into_sql_str(),
            false,
        ),
        Migration::new(
            3,
            Cow::Borrowed("workflows"),
            MigrationType::Simple,
            MIGRATION_WORKFLOWS.into_sql_str(),
            false,
        ),
        Migration::new(
            4,
            Cow::Borrowed("requests"),
            MigrationType::Simple,
            MIGRATION_REQUESTS.into_sql_str(),
            false,
        ),
        Migration::new(
            5,
            Cow::Borrowed("calls"),
            MigrationType::Simple,
            MIGRATION_CALLS.into_sql_str(),
            false,
        ),
        Migration::new(
            6,
            Cow::Borrowed("run inbox"),
            MigrationType::Simple,
            MIGRATION_RUN_INBOX.into_sql_str(),
            false,
        ),
        Migration::new(
            7,
            Cow::Borrowed("triggers"),
            MigrationType::Simple,
            MIGRATION_TRIGGERS.into_sql_str(),
            false,
        ),
        Migration::new(
            8,
            Cow::Borrowed("earlier filters"),
            MigrationType::Simple,
            MIGRATION_EARLIER_FILTERS.into_sql_str(),
            false,
        ),
        Migration::new(
            9,
            Cow::Borrowed("ordered work"),
            MigrationType::Simple,
            MIGRATION_ORDERED_WORK.into_sql_str(),
            false,
        ),
        Migration::new(
            10,
            Cow::Borrowed("ending work"),
            MigrationType::Simple,
            MIGRATION_ENDING_WORK.into_sql_str(),
            false,
        ),
    ])
}

/// A time as stored: RFC 3339 in UTC, with as many fractional digits as it has.
fn format_time(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

fn parse_time(text: &str) -> Result<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(text)
        .map(|time| time.with_timezone(&Utc))
        .map_err(|error| StoreError::Corrupt(format!("the time {text:?}: {error}")))
}

/// Stored JSON, read without serde_json's limit of 128 levels: what was accepted nests up to
/// the 512 levels a value may (see [`deep_json`]), and must read back.
fn parse_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_value(deep_json(text, what)?)
        .map_err(|error| StoreError::Corrupt(format!("{what}: {error}")))
}

/// The seqs a change takes, and the database's time of the change.
struct Reserved {
    playbook_pk: i64,
    first_seq: i64,
    now: DateTime<Utc>,
    now_text: String,
}

/// Takes `count` seqs for the playbook in the change's transaction, or fails with `NotFound`.
async fn reserve_seqs(
    tx: &mut Transaction<'static, Sqlite>,
    playbook: &PlaybookRef,
    count: usize,
) -> Result<Reserved> {
    let count = i64::try_from(count)
        .map_err(|_| StoreError::Conflict(format!("{count} events are too many for one change")))?;
    let row = sqlx::query(concat!(
        "UPDATE playbooks SET last_seq = last_seq + ?3 WHERE org = ?1 AND id = ?2 \
         RETURNING pk, last_seq, ",
        now_sql!()
    ))
    .bind(&playbook.org)
    .bind(&playbook.playbook)
    .bind(count)
    .fetch_optional(&mut **tx)
    .await?
    .ok_or_else(|| playbook_not_found(playbook))?;
    let last_seq: i64 = row.try_get(1)?;
    // Invariant: last_seq only grows, by the number of events each change appends, so it is
    // at least this change's count; anything else would number events twice.
    assert!(
        last_seq >= count,
        "playbook {playbook:?} has last_seq {last_seq} after taking {count}"
    );
    let now_text: String = row.try_get(2)?;
    Ok(Reserved {
        playbook_pk: row.try_get(0)?,
        first_seq: last_seq - count + 1,
        now: parse_time(&now_text)?,
        now_text,
    })
}

/// One event as the batch insert reads it from its JSON array. `data` and `extensions` are
/// JSON texts inside strings, so that they are stored exactly as serialized.
#[derive(Serialize)]
struct EventInput<'a> {
    id: &'a str,
    r#type: &'a str,
    source: &'a str,
    subject: Option<&'a str>,
    time: Option<String>,
    datacontenttype: Option<&'a str>,
    data: Option<String>,
    extensions: String,
    run_id: Option<&'a str>,
    run_seq: Option<i64>,
}

fn to_json_text<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value)
        .map_err(|error| StoreError::Corrupt(format!("a value is not JSON: {error}")))
}

/// An event this large (its data and extensions as JSON) is inserted by a statement of its own.
const LARGE_EVENT_BYTES: usize = 64 * 1024;

/// Inserts the events under seqs from `reserved.first_seq`, in one statement (or one each when
/// one is larger than [`LARGE_EVENT_BYTES`]).
async fn insert_events(
    tx: &mut Transaction<'static, Sqlite>,
    playbook: &PlaybookRef,
    reserved: &Reserved,
    events: Vec<NewEvent>,
) -> Result<Vec<Event>> {
    let inputs = events
        .iter()
        .map(|event| {
            Ok(EventInput {
                id: &event.id,
                r#type: &event.event_type,
                source: &event.source,
                subject: event.subject.as_deref(),
                time: event.time.map(format_time),
                datacontenttype: event.datacontenttype.as_deref(),
                data: event.data.as_ref().map(to_json_text).transpose()?,
                extensions: to_json_text(&event.extensions)?,
                run_id: event.run_id.as_deref(),
                run_seq: event.run_seq,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    // A large event (a tool's result, say) goes in by its own statement: reading it out of the
    // batch's JSON array costs SQLite a copy of the whole array for each column.
    let large = inputs.iter().any(|input| {
        input.data.as_ref().map_or(0, String::len) + input.extensions.len() > LARGE_EVENT_BYTES
    });
    if large {
        for (input, seq) in inputs.iter().zip(reserved.first_seq..) {
            sqlx::query(
                "INSERT INTO events (playbook_pk, seq, id, type, source, subject, time, \
                 datacontenttype, data, extensions, run_id, run_seq, recorded_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, COALESCE(?7, ?13), ?8, ?9, ?10, ?11, ?12, ?13)",
            )
            .bind(reserved.playbook_pk)
            .bind(seq)
            .bind(input.id)
            .bind(input.r#type)
            .bind(input.source)
            .bind(input.subject)
            .bind(input.time.as_deref())
            .bind(input.datacontenttype)
            .bind(input.data.as_deref())
            .bind(&input.extensions)
            .bind(input.run_id)
            .bind(input.run_seq)
            .bind(&reserved.now_text)
            .execute(&mut **tx)
            .await
            .map_err(|error| event_insert_error(error, playbook))?;
        }
    } else {
        insert_event_batch(tx, playbook, reserved, &inputs).await?;
    }
    Ok(events
        .into_iter()
        .zip(reserved.first_seq..)
        .map(|(event, seq)| recorded_event(event, seq, reserved.now))
        .collect())
}

/// The events of `inputs` in one statement that reads them out of a JSON array.
async fn insert_event_batch(
    tx: &mut Transaction<'static, Sqlite>,
    playbook: &PlaybookRef,
    reserved: &Reserved,
    inputs: &[EventInput<'_>],
) -> Result<()> {
    sqlx::query(
        "INSERT INTO events (playbook_pk, seq, id, type, source, subject, time, datacontenttype, \
         data, extensions, run_id, run_seq, recorded_at) \
         SELECT ?1, ?2 + j.key, j.value ->> '$.id', j.value ->> '$.type', \
         j.value ->> '$.source', j.value ->> '$.subject', \
         COALESCE(j.value ->> '$.time', ?3), j.value ->> '$.datacontenttype', \
         j.value ->> '$.data', j.value ->> '$.extensions', j.value ->> '$.run_id', \
         j.value ->> '$.run_seq', ?3 \
         FROM json_each(?4) AS j ORDER BY j.key",
    )
    .bind(reserved.playbook_pk)
    .bind(reserved.first_seq)
    .bind(&reserved.now_text)
    .bind(to_json_text(&inputs)?)
    .execute(&mut **tx)
    .await
    .map_err(|error| event_insert_error(error, playbook))?;
    Ok(())
}

fn event_from_row(row: &SqliteRow) -> Result<Event> {
    let data: Option<String> = row.try_get("data")?;
    let extensions: String = row.try_get("extensions")?;
    Ok(Event {
        seq: row.try_get("seq")?,
        id: row.try_get("id")?,
        event_type: row.try_get("type")?,
        source: row.try_get("source")?,
        subject: row.try_get("subject")?,
        time: parse_time(row.try_get("time")?)?,
        datacontenttype: row.try_get("datacontenttype")?,
        data: data
            .as_deref()
            .map(|text| parse_json(text, "an event's data"))
            .transpose()?,
        extensions: parse_json::<Map<String, Value>>(&extensions, "an event's extensions")?,
        run_id: row.try_get("run_id")?,
        run_seq: row.try_get("run_seq")?,
        recorded_at: parse_time(row.try_get("recorded_at")?)?,
    })
}

fn definition_from_row(row: &SqliteRow) -> Result<DefinitionVersion> {
    let version: i64 = row.try_get("version")?;
    let latest_version: i64 = row.try_get("latest_version")?;
    // The latest version was last touched when the definition was (saved or retired); an
    // older one when it was saved.
    let updated_at = if version == latest_version {
        row.try_get("updated_at")?
    } else {
        row.try_get("saved_at")?
    };
    let derived: String = row.try_get("derived")?;
    Ok(DefinitionVersion {
        key: DefinitionKey {
            def_type: row.try_get("def_type")?,
            name: row.try_get("name")?,
        },
        version,
        status: parse_status(row.try_get("status")?)?,
        source: row.try_get("source")?,
        overview: row.try_get("overview")?,
        diagram: row.try_get("diagram")?,
        description: row.try_get("description")?,
        derived: parse_json(&derived, "a definition's derived JSON")?,
        created_at: parse_time(row.try_get("created_at")?)?,
        updated_at: parse_time(updated_at)?,
        saved_seq: row.try_get("saved_seq")?,
    })
}

fn org_from_row(row: &SqliteRow) -> Result<Org> {
    Ok(Org {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        created_at: parse_time(row.try_get("created_at")?)?,
    })
}

fn playbook_from_row(row: &SqliteRow) -> Result<Playbook> {
    Ok(Playbook {
        org: row.try_get("org")?,
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        created_at: parse_time(row.try_get("created_at")?)?,
    })
}

fn optional_json(row: &SqliteRow, column: &str, what: &str) -> Result<Option<Value>> {
    let text: Option<String> = row.try_get(column)?;
    text.as_deref()
        .map(|text| parse_json(text, what))
        .transpose()
}

fn run_from_row(row: &SqliteRow) -> Result<Run> {
    let input: String = row.try_get("input")?;
    let ended_at: Option<String> = row.try_get("ended_at")?;
    Ok(Run {
        run_id: row.try_get("run_id")?,
        key: DefinitionKey {
            def_type: row.try_get("def_type")?,
            name: row.try_get("name")?,
        },
        definition_version: row.try_get("definition_version")?,
        status: parse_run_status(row.try_get("status")?)?,
        input: parse_json(&input, "a run's input")?,
        output: optional_json(row, "output", "a run's output")?,
        record: optional_json(row, "record", "a run's record")?,
        problem: optional_json(row, "problem", "a run's problem")?,
        started_by: row.try_get("started_by")?,
        parent_run_id: row.try_get("parent_run_id")?,
        task_reference: row.try_get("task_reference")?,
        depth: row.try_get("depth")?,
        call_depth: row.try_get("call_depth")?,
        parent_call_id: row.try_get("parent_call_id")?,
        root_run_id: row.try_get("root_run_id")?,
        trigger: optional_json(row, "trigger_info", "a run's trigger")?,
        attempt: row.try_get("attempt")?,
        last_run_seq: row.try_get("last_run_seq")?,
        last_event_at: parse_time(row.try_get("last_event_at")?)?,
        started_at: parse_time(row.try_get("started_at")?)?,
        ended_at: ended_at.as_deref().map(parse_time).transpose()?,
    })
}

/// The status and attempt of a run, when there is one.
async fn stored_run_state(
    tx: &mut Transaction<'static, Sqlite>,
    playbook_pk: i64,
    run_id: &str,
) -> Result<Option<(String, i64)>> {
    let row =
        sqlx::query("SELECT status, attempt FROM runs WHERE playbook_pk = ?1 AND run_id = ?2")
            .bind(playbook_pk)
            .bind(run_id)
            .fetch_optional(&mut **tx)
            .await?;
    row.map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .transpose()
}

fn optional_json_text(value: Option<&Value>) -> Result<Option<String>> {
    value.map(to_json_text).transpose()
}

/// Records a new run as `started` inside a change's transaction: refused with `LimitReached`
/// past the calls its tree may wait for (`open_calls_max`), and with `Conflict` when the
/// playbook has a run of that id. Shared by `start_run` and `start_interaction`.
async fn insert_run(
    tx: &mut Transaction<'static, Sqlite>,
    playbook: &PlaybookRef,
    reserved: &Reserved,
    new: &NewRun,
    last_run_seq: i64,
) -> Result<Run> {
    if let (Some(root), Some(max)) = (&new.root_run_id, new.open_calls_max) {
        // The writer is the only one (SQLite has one), so the count holds until commit.
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM runs WHERE playbook_pk = ?1 AND root_run_id = ?2 \
             AND status = 'started'",
        )
        .bind(reserved.playbook_pk)
        .bind(root)
        .fetch_one(&mut **tx)
        .await?;
        if open >= max {
            return Err(open_calls_reached(root, open, max));
        }
    }
    let row = sqlx::query(concat!(
        "INSERT INTO runs (playbook_pk, run_id, def_type, name, definition_version, status, \
         input, started_by, parent_run_id, task_reference, depth, call_depth, trigger_info, \
         attempt, last_run_seq, last_event_at, started_at, parent_call_id, root_run_id, \
         ending_work_key, ending_work_payload, ending_work_ordered) \
         VALUES (?1, ?2, ?3, ?4, ?5, 'started', ?6, ?7, ?8, ?9, ?10, ?11, ?12, 1, ?13, ?14, \
         ?14, ?15, ?16, ?17, ?18, ?19) ON CONFLICT (playbook_pk, run_id) DO NOTHING RETURNING ",
        run_columns!()
    ))
    .bind(reserved.playbook_pk)
    .bind(&new.run_id)
    .bind(&new.key.def_type)
    .bind(&new.key.name)
    .bind(new.definition_version)
    .bind(to_json_text(&new.input)?)
    .bind(&new.started_by)
    .bind(&new.parent_run_id)
    .bind(&new.task_reference)
    .bind(new.depth)
    .bind(new.call_depth)
    .bind(optional_json_text(new.trigger.as_ref())?)
    .bind(last_run_seq)
    .bind(&reserved.now_text)
    .bind(&new.parent_call_id)
    .bind(&new.root_run_id)
    .bind(new.ending_work.as_ref().map(|w| &w.key))
    .bind(
        new.ending_work
            .as_ref()
            .map(|w| to_json_text(&w.payload))
            .transpose()?,
    )
    .bind(new.ending_work.as_ref().is_some_and(|w| w.ordered))
    .fetch_optional(&mut **tx)
    .await?;
    let Some(row) = row else {
        return Err(StoreError::Conflict(format!(
            "the playbook {}/{} has a run {}",
            playbook.org, playbook.playbook, new.run_id
        )));
    };
    run_from_row(&row)
}

/// Ends a `started` run inside a change's transaction: what `end_run` records, shared with
/// `close_request` so an interaction's run ends exactly as every other run does. `Conflict`
/// when the run has ended; `NotFound` when there is none.
async fn end_run_in(
    tx: &mut Transaction<'static, Sqlite>,
    playbook: &PlaybookRef,
    reserved: &Reserved,
    run_id: &str,
    ending: &RunEnding,
    last_run_seq: i64,
) -> Result<Run> {
    let row = sqlx::query(concat!(
        "UPDATE runs SET status = ?3, output = ?4, record = ?5, problem = ?6, ended_at = ?8, \
         last_run_seq = max(last_run_seq, ?7), last_event_at = ?8 \
         WHERE playbook_pk = ?1 AND run_id = ?2 AND status = 'started' RETURNING ",
        run_columns!()
    ))
    .bind(reserved.playbook_pk)
    .bind(run_id)
    .bind(ending.status.as_str())
    .bind(optional_json_text(ending.output.as_ref())?)
    .bind(optional_json_text(ending.record.as_ref())?)
    .bind(optional_json_text(ending.problem.as_ref())?)
    .bind(last_run_seq)
    .bind(&reserved.now_text)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(row) = row else {
        let stored = stored_run_state(tx, reserved.playbook_pk, run_id).await?;
        return Err(run_change_refused(playbook, run_id, stored, None)?);
    };
    // A child's ending reaches its parent in the same transaction.
    notify_parent(tx, reserved.playbook_pk, run_id, &reserved.now_text).await?;
    run_from_row(&row)
}

fn request_from_row(row: &SqliteRow) -> Result<Request> {
    let input: String = row.try_get("input")?;
    let closed_at: Option<String> = row.try_get("closed_at")?;
    Ok(Request {
        request_id: row.try_get("request_id")?,
        run_id: row.try_get("run_id")?,
        key: DefinitionKey {
            def_type: row.try_get("def_type")?,
            name: row.try_get("name")?,
        },
        definition_version: row.try_get("definition_version")?,
        to: row.try_get("to_whom")?,
        message: row.try_get("message")?,
        input: parse_json(&input, "a request's input")?,
        output_schema: optional_json(row, "output_schema", "a request's output schema")?,
        status: parse_request_status(row.try_get("status")?)?,
        created_at: parse_time(row.try_get("created_at")?)?,
        expires_at: parse_time(row.try_get("expires_at")?)?,
        answered_by: row.try_get("answered_by")?,
        answer: optional_json(row, "answer", "a request's answer")?,
        closed_at: closed_at.as_deref().map(parse_time).transpose()?,
    })
}

/// Saves a version row, its overview taken from the version before when `new` has none, and
/// returns the overview saved.
async fn insert_version(
    tx: &mut Transaction<'static, Sqlite>,
    definition_pk: i64,
    version: i64,
    new: &NewDefinitionVersion,
    saved_seq: i64,
    saved_at: &str,
) -> Result<Option<String>> {
    let overview = sqlx::query_scalar(
        "INSERT INTO definition_versions (definition_pk, version, source, overview, diagram, \
         description, derived, saved_seq, saved_at) \
         VALUES (?1, ?2, ?3, COALESCE(?4, (SELECT overview FROM definition_versions \
         WHERE definition_pk = ?1 AND version = ?2 - 1)), ?5, ?6, ?7, ?8, ?9) \
         RETURNING overview",
    )
    .bind(definition_pk)
    .bind(version)
    .bind(&new.source)
    .bind(&new.overview)
    .bind(&new.diagram)
    .bind(&new.description)
    .bind(to_json_text(&new.derived)?)
    .bind(saved_seq)
    .bind(saved_at)
    .fetch_one(&mut **tx)
    .await?;
    Ok(overview)
}

#[async_trait]
impl Store for SqliteStore {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    async fn now(&self) -> Result<DateTime<Utc>> {
        let text: String = sqlx::query_scalar(concat!("SELECT ", now_sql!()))
            .fetch_one(&self.reader)
            .await?;
        parse_time(&text)
    }

    async fn check_writable(&self) -> Result<()> {
        // A table made, given a page of data and dropped, in one committed transaction: the
        // commit writes to the log as any change does, and the page must be found. What it
        // leaves is a free page or two, which the next probe takes again.
        let mut tx = self.begin().await?;
        sqlx::query("CREATE TABLE write_probe (x BLOB)")
            .execute(&mut *tx)
            .await?;
        sqlx::query("INSERT INTO write_probe (x) VALUES (zeroblob(4096))")
            .execute(&mut *tx)
            .await?;
        sqlx::query("DROP TABLE write_probe")
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn close(&self) {
        self.reader.close().await;
        self.writer.close().await;
    }

    async fn create_org(&self, id: &str, title: Option<&str>) -> Result<Org> {
        let row = sqlx::query(concat!(
            "INSERT INTO orgs (id, title, created_at) VALUES (?1, ?2, ",
            now_sql!(),
            ") ON CONFLICT (id) DO NOTHING RETURNING id, title, created_at"
        ))
        .bind(id)
        .bind(title)
        .fetch_optional(&self.writer)
        .await?
        .ok_or_else(|| StoreError::Conflict(format!("the org {id} exists")))?;
        org_from_row(&row)
    }

    async fn get_org(&self, id: &str) -> Result<Option<Org>> {
        sqlx::query("SELECT id, title, created_at FROM orgs WHERE id = ?1")
            .bind(id)
            .fetch_optional(&self.reader)
            .await?
            .as_ref()
            .map(org_from_row)
            .transpose()
    }

    async fn list_orgs(&self) -> Result<Vec<Org>> {
        sqlx::query("SELECT id, title, created_at FROM orgs ORDER BY id")
            .fetch_all(&self.reader)
            .await?
            .iter()
            .map(org_from_row)
            .collect()
    }

    async fn create_playbook(&self, org: &str, id: &str, title: Option<&str>) -> Result<Playbook> {
        let mut tx = self.begin().await?;
        let row = sqlx::query(concat!(
            "INSERT INTO playbooks (org, id, title, created_at) SELECT orgs.id, ?2, ?3, ",
            now_sql!(),
            " FROM orgs WHERE orgs.id = ?1 \
             ON CONFLICT (org, id) DO NOTHING RETURNING org, id, title, created_at"
        ))
        .bind(org)
        .bind(id)
        .bind(title)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            let org_exists: Option<i64> = sqlx::query_scalar("SELECT 1 FROM orgs WHERE id = ?1")
                .bind(org)
                .fetch_optional(&mut *tx)
                .await?;
            return Err(match org_exists {
                Some(_) => StoreError::Conflict(format!("the playbook {org}/{id} exists")),
                None => StoreError::NotFound(format!("org {org}")),
            });
        };
        let playbook = playbook_from_row(&row)?;
        tx.commit().await?;
        Ok(playbook)
    }

    async fn get_playbook(&self, playbook: &PlaybookRef) -> Result<Option<Playbook>> {
        sqlx::query("SELECT org, id, title, created_at FROM playbooks WHERE org = ?1 AND id = ?2")
            .bind(&playbook.org)
            .bind(&playbook.playbook)
            .fetch_optional(&self.reader)
            .await?
            .as_ref()
            .map(playbook_from_row)
            .transpose()
    }

    async fn list_playbooks(&self, org: &str) -> Result<Vec<Playbook>> {
        let playbooks = sqlx::query(
            "SELECT org, id, title, created_at FROM playbooks WHERE org = ?1 ORDER BY id",
        )
        .bind(org)
        .fetch_all(&self.reader)
        .await?
        .iter()
        .map(playbook_from_row)
        .collect::<Result<Vec<_>>>()?;
        if playbooks.is_empty() && self.get_org(org).await?.is_none() {
            return Err(StoreError::NotFound(format!("org {org}")));
        }
        Ok(playbooks)
    }

    async fn create_definition(
        &self,
        playbook: &PlaybookRef,
        new: NewDefinitionVersion,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)> {
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, 1).await?;
        let definition_pk: Option<i64> = sqlx::query_scalar(
            "INSERT INTO definitions (playbook_pk, def_type, name, status, latest_version, \
             created_at, updated_at) VALUES (?1, ?2, ?3, 'active', 1, ?4, ?4) \
             ON CONFLICT (playbook_pk, def_type, name) DO NOTHING RETURNING pk",
        )
        .bind(reserved.playbook_pk)
        .bind(&new.key.def_type)
        .bind(&new.key.name)
        .bind(&reserved.now_text)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(definition_pk) = definition_pk else {
            return Err(StoreError::Conflict(format!(
                "a {} definition named {} exists (active or retired)",
                new.key.def_type, new.key.name
            )));
        };
        let event = single(insert_events(&mut tx, playbook, &reserved, vec![event]).await?)?;
        let overview = insert_version(
            &mut tx,
            definition_pk,
            1,
            &new,
            event.seq,
            &reserved.now_text,
        )
        .await?;
        if new.key.def_type == "workflow" {
            let pk = reserved.playbook_pk;
            let name = &new.key.name;
            sync_triggers(
                &mut tx,
                pk,
                name,
                1,
                &new.triggers,
                event.seq,
                &reserved.now_text,
            )
            .await?;
        }
        tx.commit().await?;
        Ok((
            saved_version(new, 1, overview, reserved.now, reserved.now, event.seq),
            event,
        ))
    }

    async fn update_definition(
        &self,
        playbook: &PlaybookRef,
        expected_version: i64,
        new: NewDefinitionVersion,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)> {
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, 1).await?;
        let row = sqlx::query(
            "UPDATE definitions SET latest_version = latest_version + 1, updated_at = ?5 \
             WHERE playbook_pk = ?1 AND def_type = ?2 AND name = ?3 AND status = 'active' \
             AND latest_version = ?4 RETURNING pk, latest_version, created_at",
        )
        .bind(reserved.playbook_pk)
        .bind(&new.key.def_type)
        .bind(&new.key.name)
        .bind(expected_version)
        .bind(&reserved.now_text)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            let stored = stored_status(&mut tx, reserved.playbook_pk, &new.key).await?;
            return Err(definition_change_refused(
                playbook,
                &new.key,
                stored,
                Some(expected_version),
            ));
        };
        let definition_pk: i64 = row.try_get("pk")?;
        let version: i64 = row.try_get("latest_version")?;
        let created_at = parse_time(row.try_get("created_at")?)?;
        let event = single(insert_events(&mut tx, playbook, &reserved, vec![event]).await?)?;
        let overview = insert_version(
            &mut tx,
            definition_pk,
            version,
            &new,
            event.seq,
            &reserved.now_text,
        )
        .await?;
        if new.key.def_type == "workflow" {
            let pk = reserved.playbook_pk;
            let name = &new.key.name;
            sync_triggers(
                &mut tx,
                pk,
                name,
                version,
                &new.triggers,
                event.seq,
                &reserved.now_text,
            )
            .await?;
        }
        tx.commit().await?;
        Ok((
            saved_version(new, version, overview, created_at, reserved.now, event.seq),
            event,
        ))
    }

    async fn retire_definition(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)> {
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, 1).await?;
        let retired: Option<i64> = sqlx::query_scalar(
            "UPDATE definitions SET status = 'retired', updated_at = ?4, retired_seq = ?5 \
             WHERE playbook_pk = ?1 AND def_type = ?2 AND name = ?3 AND status = 'active' \
             RETURNING pk",
        )
        .bind(reserved.playbook_pk)
        .bind(&key.def_type)
        .bind(&key.name)
        .bind(&reserved.now_text)
        .bind(reserved.first_seq)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(definition_pk) = retired else {
            let stored = stored_status(&mut tx, reserved.playbook_pk, key).await?;
            return Err(definition_change_refused(playbook, key, stored, None));
        };
        // "Retiring the workflow stops every trigger."
        if key.def_type == "workflow" {
            sqlx::query("DELETE FROM triggers WHERE playbook_pk = ?1 AND workflow = ?2")
                .bind(reserved.playbook_pk)
                .bind(&key.name)
                .execute(&mut *tx)
                .await?;
        }
        let event = single(insert_events(&mut tx, playbook, &reserved, vec![event]).await?)?;
        let row = sqlx::query(concat!(
            definition_columns!(),
            " WHERE d.pk = ?1 AND v.version = d.latest_version"
        ))
        .bind(definition_pk)
        .fetch_one(&mut *tx)
        .await?;
        let definition = definition_from_row(&row)?;
        tx.commit().await?;
        Ok((definition, event))
    }

    async fn get_definition(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
    ) -> Result<Option<DefinitionVersion>> {
        sqlx::query(concat!(
            definition_columns!(),
            " JOIN playbooks p ON p.pk = d.playbook_pk \
             WHERE p.org = ?1 AND p.id = ?2 AND d.def_type = ?3 AND d.name = ?4 \
             AND v.version = d.latest_version"
        ))
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .bind(&key.def_type)
        .bind(&key.name)
        .fetch_optional(&self.reader)
        .await?
        .as_ref()
        .map(definition_from_row)
        .transpose()
    }

    async fn get_definition_version(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        version: i64,
    ) -> Result<Option<DefinitionVersion>> {
        sqlx::query(concat!(
            definition_columns!(),
            " JOIN playbooks p ON p.pk = d.playbook_pk \
             WHERE p.org = ?1 AND p.id = ?2 AND d.def_type = ?3 AND d.name = ?4 \
             AND v.version = ?5"
        ))
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .bind(&key.def_type)
        .bind(&key.name)
        .bind(version)
        .fetch_optional(&self.reader)
        .await?
        .as_ref()
        .map(definition_from_row)
        .transpose()
    }

    async fn list_definitions(
        &self,
        playbook: &PlaybookRef,
        def_type: Option<&str>,
    ) -> Result<Vec<DefinitionVersion>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        sqlx::query(concat!(
            definition_columns!(),
            " WHERE d.playbook_pk = ?1 AND (?2 IS NULL OR d.def_type = ?2) \
             AND v.version = d.latest_version ORDER BY d.def_type, d.name"
        ))
        .bind(playbook_pk)
        .bind(def_type)
        .fetch_all(&self.reader)
        .await?
        .iter()
        .map(definition_from_row)
        .collect()
    }

    async fn append_events(
        &self,
        playbook: &PlaybookRef,
        events: Vec<NewEvent>,
    ) -> Result<Vec<Event>> {
        if events.is_empty() {
            self.require_playbook(playbook).await?;
            return Ok(Vec::new());
        }
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let events = insert_events(&mut tx, playbook, &reserved, events).await?;
        tx.commit().await?;
        Ok(events)
    }

    async fn list_events(
        &self,
        playbook: &PlaybookRef,
        filter: &EventFilter,
    ) -> Result<Vec<Event>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        // One statement per combination of filters, so that each can use its own index.
        let sql = match (&filter.run_id, &filter.event_type) {
            (None, None) => concat!(
                event_columns!(),
                " WHERE playbook_pk = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3"
            ),
            (Some(_), None) => concat!(
                event_columns!(),
                " WHERE playbook_pk = ?1 AND seq > ?2 AND run_id = ?4 ORDER BY seq LIMIT ?3"
            ),
            (None, Some(_)) => concat!(
                event_columns!(),
                " WHERE playbook_pk = ?1 AND seq > ?2 AND type = ?5 ORDER BY seq LIMIT ?3"
            ),
            (Some(_), Some(_)) => concat!(
                event_columns!(),
                " WHERE playbook_pk = ?1 AND seq > ?2 AND run_id = ?4 AND type = ?5 \
                 ORDER BY seq LIMIT ?3"
            ),
        };
        sqlx::query(sql)
            .bind(playbook_pk)
            .bind(filter.after_seq.unwrap_or(0))
            .bind(page_limit(filter))
            .bind(&filter.run_id)
            .bind(&filter.event_type)
            .fetch_all(&self.reader)
            .await?
            .iter()
            .map(event_from_row)
            .collect()
    }

    async fn get_event(&self, playbook: &PlaybookRef, id: &str) -> Result<Option<Event>> {
        sqlx::query(concat!(
            event_columns!(),
            " WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = ?1 AND id = ?2) \
             AND id = ?3"
        ))
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .bind(id)
        .fetch_optional(&self.reader)
        .await?
        .as_ref()
        .map(event_from_row)
        .transpose()
    }

    async fn start_run(
        &self,
        playbook: &PlaybookRef,
        new: NewRun,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)> {
        let (events, last_run_seq) = run_events(&new.run_id, events)?;
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let run = insert_run(&mut tx, playbook, &reserved, &new, last_run_seq).await?;
        let events = insert_events(&mut tx, playbook, &reserved, events).await?;
        tx.commit().await?;
        Ok((run, events))
    }

    async fn restart_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        expected_attempt: i64,
        definition_version: i64,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)> {
        let (events, last_run_seq) = run_events(run_id, events)?;
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let row = sqlx::query(concat!(
            "UPDATE runs SET status = 'started', output = NULL, record = NULL, problem = NULL, \
             ended_at = NULL, attempt = attempt + 1, last_run_seq = max(last_run_seq, ?4), \
             last_event_at = ?5, started_at = ?5, definition_version = ?6 \
             WHERE playbook_pk = ?1 AND run_id = ?2 AND status <> 'started' AND attempt = ?3 \
             RETURNING ",
            run_columns!()
        ))
        .bind(reserved.playbook_pk)
        .bind(run_id)
        .bind(expected_attempt)
        .bind(last_run_seq)
        .bind(&reserved.now_text)
        .bind(definition_version)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            let stored = stored_run_state(&mut tx, reserved.playbook_pk, run_id).await?;
            return Err(run_change_refused(
                playbook,
                run_id,
                stored,
                Some(expected_attempt),
            )?);
        };
        let run = run_from_row(&row)?;
        let events = insert_events(&mut tx, playbook, &reserved, events).await?;
        tx.commit().await?;
        Ok((run, events))
    }

    async fn record_run_events(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        events: Vec<NewEvent>,
    ) -> Result<Vec<Event>> {
        let (events, last_run_seq) = run_events(run_id, events)?;
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let updated: Option<i64> = sqlx::query_scalar(
            "UPDATE runs SET last_run_seq = max(last_run_seq, ?3), last_event_at = ?4 \
             WHERE playbook_pk = ?1 AND run_id = ?2 AND status = 'started' RETURNING attempt",
        )
        .bind(reserved.playbook_pk)
        .bind(run_id)
        .bind(last_run_seq)
        .bind(&reserved.now_text)
        .fetch_optional(&mut *tx)
        .await?;
        if updated.is_none() {
            let stored = stored_run_state(&mut tx, reserved.playbook_pk, run_id).await?;
            return Err(run_change_refused(playbook, run_id, stored, None)?);
        }
        let events = insert_events(&mut tx, playbook, &reserved, events).await?;
        tx.commit().await?;
        Ok(events)
    }

    async fn end_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        ending: RunEnding,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)> {
        check_ending_status(ending.status, run_id)?;
        let (events, last_run_seq) = run_events(run_id, events)?;
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let run = end_run_in(&mut tx, playbook, &reserved, run_id, &ending, last_run_seq).await?;
        let events = insert_events(&mut tx, playbook, &reserved, events).await?;
        tx.commit().await?;
        Ok((run, events))
    }

    async fn get_run(&self, playbook: &PlaybookRef, run_id: &str) -> Result<Option<Run>> {
        sqlx::query(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = ?1 AND id = ?2) \
             AND run_id = ?3"
        ))
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .bind(run_id)
        .fetch_optional(&self.reader)
        .await?
        .as_ref()
        .map(run_from_row)
        .transpose()
    }

    async fn list_runs(&self, playbook: &PlaybookRef, filter: &RunFilter) -> Result<Vec<Run>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        // Invariant: the statement is made of fixed text and numbered placeholders only.
        let sql = list_runs_sql(filter, |n| format!("?{n}"));
        let mut query = sqlx::query(AssertSqlSafe(sql)).bind(playbook_pk);
        if let Some(def_type) = &filter.def_type {
            query = query.bind(def_type);
        }
        if let Some(name) = &filter.name {
            query = query.bind(name);
        }
        if let Some(status) = filter.status {
            query = query.bind(status.as_str());
        }
        if let Some(after_run_id) = &filter.after_run_id {
            query = query.bind(after_run_id);
        }
        query
            .bind(runs_page_limit(filter))
            .fetch_all(&self.reader)
            .await?
            .iter()
            .map(run_from_row)
            .collect()
    }

    async fn commit_workflow_step(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        mut step: WorkflowStep,
    ) -> Result<i64> {
        if let Some(ending) = &step.ending {
            check_ending_status(ending.status, run_id)?;
        }
        let (events, last_run_seq) = run_events(run_id, std::mem::take(&mut step.events))?;
        let event_count = i64::try_from(events.len()).unwrap_or(i64::MAX);
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let state = to_json_text(&step.state)?;
        let version: Option<i64> =
            match step.expected_version {
                None => sqlx::query_scalar(
                    "INSERT INTO workflow_states (playbook_pk, run_id, version, state, updated_at) \
                     VALUES (?1, ?2, 1, ?3, ?4) ON CONFLICT (playbook_pk, run_id) DO NOTHING \
                     RETURNING version",
                )
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .bind(&state)
                .bind(&reserved.now_text)
                .fetch_optional(&mut *tx)
                .await?,
                Some(expected) => sqlx::query_scalar(
                    "UPDATE workflow_states SET version = version + 1, state = ?4, updated_at = ?5 \
                     WHERE playbook_pk = ?1 AND run_id = ?2 AND version = ?3 RETURNING version",
                )
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .bind(expected)
                .bind(&state)
                .bind(&reserved.now_text)
                .fetch_optional(&mut *tx)
                .await?,
            };
        let Some(version) = version else {
            return Err(StoreError::Conflict(format!(
                "the snapshot of run {run_id} is not at version {:?}: another server took the run over",
                step.expected_version
            )));
        };
        let changed = match &step.ending {
            Some(ending) => {
                sqlx::query_scalar::<_, i64>(
                    "UPDATE runs SET status = ?3, output = ?4, record = ?5, problem = ?6, \
                 ended_at = ?8, last_run_seq = max(last_run_seq, ?7), last_event_at = ?8 \
                 WHERE playbook_pk = ?1 AND run_id = ?2 AND status = 'started' RETURNING attempt",
                )
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .bind(ending.status.as_str())
                .bind(optional_json_text(ending.output.as_ref())?)
                .bind(optional_json_text(ending.record.as_ref())?)
                .bind(optional_json_text(ending.problem.as_ref())?)
                .bind(last_run_seq)
                .bind(&reserved.now_text)
                .fetch_optional(&mut *tx)
                .await?
            }
            None => {
                sqlx::query_scalar::<_, i64>(
                    "UPDATE runs SET last_run_seq = max(last_run_seq, ?3), last_event_at = ?4 \
                 WHERE playbook_pk = ?1 AND run_id = ?2 AND status = 'started' RETURNING attempt",
                )
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .bind(last_run_seq)
                .bind(&reserved.now_text)
                .fetch_optional(&mut *tx)
                .await?
            }
        };
        if changed.is_none() {
            let stored = stored_run_state(&mut tx, reserved.playbook_pk, run_id).await?;
            return Err(run_change_refused(playbook, run_id, stored, None)?);
        }
        insert_events(&mut tx, playbook, &reserved, events).await?;
        if step.ending.is_some() {
            // An ended run waits for nothing: its timers and pending inputs go, and its parent
            // hears of the ending. The step's own work (cancelling its children) stays.
            sqlx::query("DELETE FROM work WHERE playbook_pk = ?1 AND run_id = ?2")
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .execute(&mut *tx)
                .await?;
            notify_parent(&mut tx, reserved.playbook_pk, run_id, &reserved.now_text).await?;
        }
        insert_work(
            &mut tx,
            reserved.playbook_pk,
            run_id,
            &reserved.now_text,
            &step.add_work,
        )
        .await?;
        if let Some(id) = step.done_work {
            sqlx::query("DELETE FROM work WHERE id = ?1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        for key in &step.cancel_work {
            sqlx::query("DELETE FROM work WHERE playbook_pk = ?1 AND run_id = ?2 AND key = ?3")
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        let last_seq = reserved.first_seq - 1 + event_count;
        listen_in(&mut tx, reserved.playbook_pk, run_id, &step, last_seq).await?;
        tx.commit().await?;
        Ok(version)
    }

    async fn get_workflow_state(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Option<(i64, Value)>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        let row = sqlx::query(
            "SELECT version, state FROM workflow_states WHERE playbook_pk = ?1 AND run_id = ?2",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .fetch_optional(&self.reader)
        .await?;
        row.map(|row| {
            let state: String = row.try_get(1)?;
            Ok((row.try_get(0)?, deep_json(&state, "a workflow snapshot")?))
        })
        .transpose()
    }

    async fn add_work(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        work: Vec<NewWork>,
    ) -> Result<()> {
        let mut tx = self.begin().await?;
        let playbook_pk: i64 =
            sqlx::query_scalar("SELECT pk FROM playbooks WHERE org = ?1 AND id = ?2")
                .bind(&playbook.org)
                .bind(&playbook.playbook)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or_else(|| playbook_not_found(playbook))?;
        let now: String = sqlx::query_scalar(concat!("SELECT ", now_sql!()))
            .fetch_one(&mut *tx)
            .await?;
        insert_work(&mut tx, playbook_pk, run_id, &now, &work).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn claim_work(&self, claimer: &str, lease: Duration, limit: u32) -> Result<Vec<Work>> {
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
        let mut tx = self.begin().await?;
        // The writer's transaction is BEGIN IMMEDIATE: no other claim runs between the read
        // and the update.
        let rows = sqlx::query(concat!(
            "WITH candidates AS MATERIALIZED (SELECT id, playbook_pk, run_id, due_at, ordered \
             FROM work WHERE due_at <= ",
            now_sql!(),
            " AND (claimed_until IS NULL OR claimed_until <= ",
            now_sql!(),
            ") ORDER BY due_at, id LIMIT ?2) \
             UPDATE work SET claimed_until = strftime('%Y-%m-%dT%H:%M:%fZ', 'now', \
             printf('+%.3f seconds', ?1 / 1000.0)), claimed_by = ?3 \
             WHERE id IN (SELECT c.id FROM candidates c WHERE NOT c.ordered OR NOT EXISTS (\
             SELECT 1 FROM work w WHERE w.playbook_pk = c.playbook_pk AND w.run_id = c.run_id \
             AND w.ordered AND (w.due_at, w.id) < (c.due_at, c.id) \
             AND w.id NOT IN (SELECT id FROM candidates) \
             AND NOT COALESCE(w.claimed_by = ?3 AND w.claimed_until > ",
            now_sql!(),
            ", 0))) \
             RETURNING id, run_id, key, due_at, payload, \
             (SELECT org FROM playbooks WHERE pk = work.playbook_pk), \
             (SELECT id FROM playbooks WHERE pk = work.playbook_pk), ordered"
        ))
        .bind(lease_ms)
        .bind(i64::from(limit))
        .bind(claimer)
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        let mut claimed = rows
            .iter()
            .map(|row| {
                let payload: String = row.try_get(4)?;
                let due_at: String = row.try_get(3)?;
                Ok(Work {
                    id: row.try_get(0)?,
                    run_id: row.try_get(1)?,
                    key: row.try_get(2)?,
                    due_at: parse_time(&due_at)?,
                    payload: parse_json(&payload, "a work item")?,
                    playbook: PlaybookRef::new(
                        row.try_get::<String, _>(5)?,
                        row.try_get::<String, _>(6)?,
                    ),
                    ordered: row.try_get(7)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        claimed.sort_by(|a, b| a.due_at.cmp(&b.due_at).then(a.id.cmp(&b.id)));
        Ok(claimed)
    }

    async fn finish_work(&self, id: i64) -> Result<()> {
        sqlx::query("DELETE FROM work WHERE id = ?1")
            .bind(id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    async fn count_open_calls(&self, playbook: &PlaybookRef, root_run_id: &str) -> Result<i64> {
        let playbook_pk = self.require_playbook(playbook).await?;
        Ok(sqlx::query_scalar(
            "SELECT count(*) FROM runs WHERE playbook_pk = ?1 AND root_run_id = ?2 \
             AND status = 'started'",
        )
        .bind(playbook_pk)
        .bind(root_run_id)
        .fetch_one(&self.reader)
        .await?)
    }

    async fn next_work_due(&self) -> Result<Option<DateTime<Utc>>> {
        let due: Option<String> = sqlx::query_scalar("SELECT min(due_at) FROM work")
            .fetch_one(&self.reader)
            .await?;
        due.as_deref().map(parse_time).transpose()
    }

    async fn receive_run_event(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        event_id: &str,
        event: Value,
        work: NewWork,
    ) -> Result<Option<RunInboxEvent>> {
        let mut tx = self.begin().await?;
        let playbook_pk: i64 =
            sqlx::query_scalar("SELECT pk FROM playbooks WHERE org = ?1 AND id = ?2")
                .bind(&playbook.org)
                .bind(&playbook.playbook)
                .fetch_optional(&mut *tx)
                .await?
                .ok_or_else(|| playbook_not_found(playbook))?;
        let status: Option<String> =
            sqlx::query_scalar("SELECT status FROM runs WHERE playbook_pk = ?1 AND run_id = ?2")
                .bind(playbook_pk)
                .bind(run_id)
                .fetch_optional(&mut *tx)
                .await?;
        if status.as_deref() != Some("started") {
            return Err(run_not_found(playbook, run_id));
        }
        let now: String = sqlx::query_scalar(concat!("SELECT ", now_sql!()))
            .fetch_one(&mut *tx)
            .await?;
        // The writer's transaction is BEGIN IMMEDIATE: no other receipt numbers between the
        // read of the highest seq and the insert.
        let seq: Option<i64> = sqlx::query_scalar(
            "INSERT INTO run_inbox (playbook_pk, run_id, event_id, seq, event, received_at) \
             SELECT ?1, ?2, ?3, coalesce(max(seq), 0) + 1, ?4, ?5 FROM run_inbox \
             WHERE playbook_pk = ?1 AND run_id = ?2 \
             ON CONFLICT (playbook_pk, run_id, event_id) DO NOTHING RETURNING seq",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .bind(event_id)
        .bind(to_json_text(&event)?)
        .bind(&now)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(seq) = seq else {
            return Ok(None);
        };
        insert_work(&mut tx, playbook_pk, run_id, &now, &[work]).await?;
        tx.commit().await?;
        Ok(Some(RunInboxEvent {
            run_id: run_id.to_owned(),
            event_id: event_id.to_owned(),
            seq,
            event,
            received_at: parse_time(&now)?,
        }))
    }

    async fn list_run_inbox(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Vec<RunInboxEvent>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        let rows = sqlx::query(
            "SELECT event_id, seq, event, received_at FROM run_inbox \
             WHERE playbook_pk = ?1 AND run_id = ?2 ORDER BY seq",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .fetch_all(&self.reader)
        .await?;
        rows.iter()
            .map(|row| {
                let event: String = row.try_get(2)?;
                let received_at: String = row.try_get(3)?;
                Ok(RunInboxEvent {
                    run_id: run_id.to_owned(),
                    event_id: row.try_get(0)?,
                    seq: row.try_get(1)?,
                    event: deep_json(&event, "an event sent to a run")?,
                    received_at: parse_time(&received_at)?,
                })
            })
            .collect()
    }

    async fn start_interaction(
        &self,
        playbook: &PlaybookRef,
        new: NewRun,
        events: Vec<NewEvent>,
        request: NewRequest,
        work: Vec<NewWork>,
    ) -> Result<(Run, Request)> {
        let (events, last_run_seq) = run_events(&new.run_id, events)?;
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let run = insert_run(&mut tx, playbook, &reserved, &new, last_run_seq).await?;
        let row = sqlx::query(concat!(
            "INSERT INTO requests (playbook_pk, request_id, run_id, def_type, name, \
             definition_version, to_whom, message, input, output_schema, status, created_at, \
             expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'open', ?11, ?12) \
             ON CONFLICT DO NOTHING RETURNING ",
            request_columns!()
        ))
        .bind(reserved.playbook_pk)
        .bind(&request.request_id)
        .bind(&new.run_id)
        .bind(&new.key.def_type)
        .bind(&new.key.name)
        .bind(new.definition_version)
        .bind(&request.to)
        .bind(&request.message)
        .bind(to_json_text(&request.input)?)
        .bind(optional_json_text(request.output_schema.as_ref())?)
        .bind(&reserved.now_text)
        .bind(due_text(request.expires_at))
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            return Err(StoreError::Conflict(format!(
                "the playbook {}/{} has a request {}",
                playbook.org, playbook.playbook, request.request_id
            )));
        };
        let request = request_from_row(&row)?;
        insert_events(&mut tx, playbook, &reserved, events).await?;
        insert_work(
            &mut tx,
            reserved.playbook_pk,
            &new.run_id,
            &reserved.now_text,
            &work,
        )
        .await?;
        tx.commit().await?;
        Ok((run, request))
    }

    async fn close_request(
        &self,
        playbook: &PlaybookRef,
        request_id: &str,
        close: RequestClose,
        ending: RunEnding,
        events: Vec<NewEvent>,
        done_work: Vec<String>,
    ) -> Result<(Request, Run)> {
        check_close_status(&close, request_id)?;
        check_ending_status(ending.status, request_id)?;
        let mut tx = self.begin().await?;
        // The playbook's seqs first, as every change takes them: its row is the lock.
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let playbook_pk = reserved.playbook_pk;
        let row = sqlx::query(concat!(
            "UPDATE requests SET status = ?3, answered_by = ?4, answer = ?5, closed_at = ?6 \
             WHERE playbook_pk = ?1 AND request_id = ?2 AND status = 'open' RETURNING ",
            request_columns!()
        ))
        .bind(playbook_pk)
        .bind(request_id)
        .bind(close.status.as_str())
        .bind(&close.answered_by)
        .bind(optional_json_text(close.answer.as_ref())?)
        .bind(&reserved.now_text)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            let stored: Option<String> = sqlx::query_scalar(
                "SELECT status FROM requests WHERE playbook_pk = ?1 AND request_id = ?2",
            )
            .bind(playbook_pk)
            .bind(request_id)
            .fetch_optional(&mut *tx)
            .await?;
            return Err(request_change_refused(playbook, request_id, stored));
        };
        let request = request_from_row(&row)?;
        let (events, last_run_seq) = run_events(&request.run_id, events)?;
        let run = end_run_in(
            &mut tx,
            playbook,
            &reserved,
            &request.run_id,
            &ending,
            last_run_seq,
        )
        .await?;
        insert_events(&mut tx, playbook, &reserved, events).await?;
        for key in &done_work {
            sqlx::query("DELETE FROM work WHERE playbook_pk = ?1 AND run_id = ?2 AND key = ?3")
                .bind(playbook_pk)
                .bind(&request.run_id)
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        tx.commit().await?;
        Ok((request, run))
    }

    async fn get_request(
        &self,
        playbook: &PlaybookRef,
        request_id: &str,
    ) -> Result<Option<Request>> {
        self.request_where(playbook, "request_id", request_id).await
    }

    async fn get_request_of_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Option<Request>> {
        self.request_where(playbook, "run_id", run_id).await
    }

    async fn list_requests(
        &self,
        playbook: &PlaybookRef,
        filter: &RequestFilter,
    ) -> Result<Vec<Request>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        // Invariant: the statement is made of fixed text and numbered placeholders only.
        let sql = list_requests_sql(filter, |n| format!("?{n}"));
        let mut query = sqlx::query(AssertSqlSafe(sql)).bind(playbook_pk);
        if let Some(status) = filter.status {
            query = query.bind(status.as_str());
        }
        if let Some(after) = &filter.after_request_id {
            query = query.bind(after);
        }
        query
            .bind(requests_page_limit(filter))
            .fetch_all(&self.reader)
            .await?
            .iter()
            .map(request_from_row)
            .collect()
    }

    async fn list_triggers(&self) -> Result<Vec<Trigger>> {
        sqlx::query(
            "SELECT p.org, p.id, t.workflow, t.kind, t.spec, t.version, t.since_seq, t.saved_at, \
             t.cursor_seq, t.due_at, t.running_run_id, t.earlier FROM triggers t \
             JOIN playbooks p ON p.pk = t.playbook_pk ORDER BY t.playbook_pk, t.workflow, t.kind",
        )
        .fetch_all(&self.reader)
        .await?
        .iter()
        .map(|row| {
            let spec: String = row.try_get(4)?;
            let saved_at: String = row.try_get(7)?;
            let due_at: Option<String> = row.try_get(9)?;
            Ok(Trigger {
                playbook: PlaybookRef::new(
                    row.try_get::<String, _>(0)?,
                    row.try_get::<String, _>(1)?,
                ),
                workflow: row.try_get(2)?,
                kind: row.try_get(3)?,
                spec: parse_json(&spec, "a trigger")?,
                version: row.try_get(5)?,
                since_seq: row.try_get(6)?,
                saved_at: parse_time(&saved_at)?,
                cursor_seq: row.try_get(8)?,
                due_at: due_at.as_deref().map(parse_time).transpose()?,
                running_run_id: row.try_get(10)?,
                earlier: match row.try_get::<Option<String>, _>(11)? {
                    Some(text) => parse_json(&text, "a trigger's earlier filters")?,
                    None => Vec::new(),
                },
            })
        })
        .collect()
    }

    async fn queue_trigger_starts(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        since_seq: i64,
        cursor_seq: i64,
        starts: Vec<TriggerStart>,
        waiting_max: i64,
    ) -> Result<Queued> {
        let mut tx = self.begin().await?;
        let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
        let moved = sqlx::query(
            "UPDATE triggers SET cursor_seq = max(cursor_seq, ?4) WHERE playbook_pk = ?1 \
             AND workflow = ?2 AND kind = 'event' AND since_seq = ?3",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .bind(since_seq)
        .bind(cursor_seq)
        .execute(&mut *tx)
        .await?;
        let mut queued = Queued::default();
        if moved.rows_affected() == 0 {
            return Ok(queued);
        }
        let mut waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM trigger_starts WHERE playbook_pk = ?1 AND workflow = ?2 \
             AND taken_at IS NULL",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .fetch_one(&mut *tx)
        .await?;
        for start in starts {
            let known: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE playbook_pk = ?1 AND run_id = ?2) \
                 OR EXISTS (SELECT 1 FROM trigger_starts WHERE playbook_pk = ?1 AND run_id = ?2)",
            )
            .bind(playbook_pk)
            .bind(&start.run_id)
            .fetch_one(&mut *tx)
            .await?;
            if known {
                continue;
            }
            if waiting >= waiting_max {
                queued.refused += 1;
                continue;
            }
            sqlx::query(concat!(
                "INSERT INTO trigger_starts (playbook_pk, run_id, workflow, event_seq, start, \
                 queued_at) VALUES (?1, ?2, ?3, ?4, ?5, ",
                now_sql!(),
                ")"
            ))
            .bind(playbook_pk)
            .bind(&start.run_id)
            .bind(workflow)
            .bind(start.event_seq)
            .bind(to_json_text(&start.start)?)
            .execute(&mut *tx)
            .await?;
            waiting += 1;
            queued.queued += 1;
        }
        tx.commit().await?;
        Ok(queued)
    }

    async fn take_trigger_starts(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        per_minute: i64,
    ) -> Result<Vec<TriggerStart>> {
        let mut tx = self.begin().await?;
        let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
        sqlx::query(
            "DELETE FROM trigger_starts WHERE playbook_pk = ?1 AND workflow = ?2 \
             AND taken_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-120 seconds') \
             AND EXISTS (SELECT 1 FROM runs r WHERE r.playbook_pk = ?1 \
             AND r.run_id = trigger_starts.run_id)",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .execute(&mut *tx)
        .await?;
        let recent: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM trigger_starts WHERE playbook_pk = ?1 AND workflow = ?2 \
             AND taken_at >= strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-60 seconds')",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .fetch_one(&mut *tx)
        .await?;
        let room = (per_minute - recent).max(0);
        let rows = sqlx::query(concat!(
            "UPDATE trigger_starts SET taken_at = ",
            now_sql!(),
            " WHERE playbook_pk = ?1 AND run_id IN (\
             SELECT run_id FROM (SELECT run_id, event_seq FROM trigger_starts \
             WHERE playbook_pk = ?1 AND workflow = ?2 AND taken_at IS NULL \
             ORDER BY event_seq LIMIT ?3) \
             UNION SELECT s.run_id FROM trigger_starts s WHERE s.playbook_pk = ?1 \
             AND s.workflow = ?2 AND s.taken_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', ?4) \
             AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.playbook_pk = ?1 \
             AND r.run_id = s.run_id)) \
             RETURNING run_id, workflow, event_seq, start, attempts"
        ))
        .bind(playbook_pk)
        .bind(workflow)
        .bind(room)
        .bind(format!("-{TRIGGER_START_LEASE_SECONDS} seconds"))
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        let mut taken = rows
            .iter()
            .map(|row| {
                let start: String = row.try_get(3)?;
                Ok(TriggerStart {
                    run_id: row.try_get(0)?,
                    workflow: row.try_get(1)?,
                    event_seq: row.try_get(2)?,
                    start: parse_json(&start, "a trigger's start")?,
                    attempts: row.try_get(4)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        taken.sort_by_key(|start| start.event_seq);
        Ok(taken)
    }

    async fn settle_trigger_start(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        outcome: StartOutcome,
    ) -> Result<()> {
        let mut tx = self.begin().await?;
        let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
        let sql = match outcome {
            StartOutcome::Started => return Ok(()),
            StartOutcome::Again => {
                "UPDATE trigger_starts SET taken_at = NULL, attempts = attempts + 1 \
                 WHERE playbook_pk = ?1 AND run_id = ?2"
            }
            StartOutcome::Dropped => {
                "DELETE FROM trigger_starts WHERE playbook_pk = ?1 AND run_id = ?2"
            }
        };
        sqlx::query(sql)
            .bind(playbook_pk)
            .bind(run_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn move_schedule(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        kind: &str,
        since_seq: i64,
        expected_due_at: Option<DateTime<Utc>>,
        due_at: DateTime<Utc>,
        running_run_id: Option<&str>,
    ) -> Result<bool> {
        let mut tx = self.begin().await?;
        let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
        let moved = sqlx::query(
            "UPDATE triggers SET due_at = ?6, running_run_id = coalesce(?7, running_run_id) \
             WHERE playbook_pk = ?1 AND workflow = ?2 AND kind = ?3 AND since_seq = ?4 \
             AND due_at IS ?5",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .bind(kind)
        .bind(since_seq)
        .bind(expected_due_at.map(due_text))
        .bind(due_text(due_at))
        .bind(running_run_id)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(moved.rows_affected() == 1)
    }

    async fn list_listeners(&self) -> Result<Vec<Listener>> {
        sqlx::query(
            "SELECT p.org, p.id, l.run_id, l.reference, l.workflow, l.version, l.filters, \
             l.cursor_seq FROM listeners l JOIN playbooks p ON p.pk = l.playbook_pk \
             ORDER BY l.playbook_pk, l.run_id, l.reference",
        )
        .fetch_all(&self.reader)
        .await?
        .iter()
        .map(|row| {
            let filters: String = row.try_get(6)?;
            Ok(Listener {
                playbook: PlaybookRef::new(
                    row.try_get::<String, _>(0)?,
                    row.try_get::<String, _>(1)?,
                ),
                run_id: row.try_get(2)?,
                reference: row.try_get(3)?,
                workflow: row.try_get(4)?,
                version: row.try_get(5)?,
                filters: parse_json(&filters, "a listener's filters")?,
                cursor_seq: row.try_get(7)?,
            })
        })
        .collect()
    }

    async fn advance_listener(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        reference: &str,
        cursor_seq: i64,
    ) -> Result<()> {
        let mut tx = self.begin().await?;
        let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
        sqlx::query(
            "UPDATE listeners SET cursor_seq = max(cursor_seq, ?4) WHERE playbook_pk = ?1 \
             AND run_id = ?2 AND reference = ?3",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .bind(reference)
        .bind(cursor_seq)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

/// A step's listening tasks: those it ends or its run's ending stop; those it begins hear
/// the playbook's events recorded after `last_seq`, the step's last, unless the playbook has
/// [`LISTENERS_MAX`] listening already.
async fn listen_in(
    tx: &mut Transaction<'static, Sqlite>,
    playbook_pk: i64,
    run_id: &str,
    step: &WorkflowStep,
    last_seq: i64,
) -> Result<()> {
    if step.ending.is_some() {
        sqlx::query("DELETE FROM listeners WHERE playbook_pk = ?1 AND run_id = ?2")
            .bind(playbook_pk)
            .bind(run_id)
            .execute(&mut **tx)
            .await?;
        return Ok(());
    }
    for reference in &step.unlisten {
        sqlx::query(
            "DELETE FROM listeners WHERE playbook_pk = ?1 AND run_id = ?2 AND reference = ?3",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .bind(reference)
        .execute(&mut **tx)
        .await?;
    }
    for NewListener { reference, filters } in &step.listen {
        sqlx::query(
            "INSERT INTO listeners (playbook_pk, run_id, reference, workflow, version, filters, \
             cursor_seq) SELECT playbook_pk, run_id, ?3, name, definition_version, ?4, ?5 \
             FROM runs WHERE playbook_pk = ?1 AND run_id = ?2 \
             AND (SELECT count(*) FROM listeners WHERE playbook_pk = ?1) < ?6 \
             ON CONFLICT (playbook_pk, run_id, reference) DO NOTHING",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .bind(reference)
        .bind(to_json_text(filters)?)
        .bind(last_seq)
        .bind(LISTENERS_MAX)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// The playbook's key, inside a change.
async fn playbook_pk_in(
    tx: &mut Transaction<'static, Sqlite>,
    playbook: &PlaybookRef,
) -> Result<i64> {
    sqlx::query_scalar("SELECT pk FROM playbooks WHERE org = ?1 AND id = ?2")
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| playbook_not_found(playbook))
}

/// A workflow's triggers after a save of version `version` recorded at `seq`: one left as it
/// was keeps its row (cursor, due time, running run) and starts the new version; one changed
/// or added starts from the save; one removed stops. A workflow that had none and has some
/// counts against [`TRIGGERED_WORKFLOWS_MAX`].
async fn sync_triggers(
    tx: &mut Transaction<'static, Sqlite>,
    playbook_pk: i64,
    workflow: &str,
    version: i64,
    triggers: &[NewTrigger],
    seq: i64,
    now_text: &str,
) -> Result<()> {
    let kept: Vec<(String, String, i64, Option<String>)> = sqlx::query_as(
        "SELECT kind, spec, cursor_seq, earlier FROM triggers \
         WHERE playbook_pk = ?1 AND workflow = ?2",
    )
    .bind(playbook_pk)
    .bind(workflow)
    .fetch_all(&mut **tx)
    .await?;
    if kept.is_empty() && !triggers.is_empty() {
        let workflows: i64 = sqlx::query_scalar(
            "SELECT count(DISTINCT workflow) FROM triggers WHERE playbook_pk = ?1",
        )
        .bind(playbook_pk)
        .fetch_one(&mut **tx)
        .await?;
        if workflows >= TRIGGERED_WORKFLOWS_MAX {
            return Err(triggered_workflows_reached(workflows));
        }
    }
    for (kind, ..) in &kept {
        if !triggers.iter().any(|t| &t.kind == kind) {
            sqlx::query(
                "DELETE FROM triggers WHERE playbook_pk = ?1 AND workflow = ?2 AND kind = ?3",
            )
            .bind(playbook_pk)
            .bind(workflow)
            .bind(kind)
            .execute(&mut **tx)
            .await?;
        }
    }
    for trigger in triggers {
        let before = kept.iter().find(|(kind, ..)| kind == &trigger.kind);
        if let Some((_, spec, ..)) = before
            && serde_json::from_str::<Value>(spec).is_ok_and(|spec| spec == trigger.spec)
        {
            sqlx::query(
                "UPDATE triggers SET version = ?4 \
                 WHERE playbook_pk = ?1 AND workflow = ?2 AND kind = ?3",
            )
            .bind(playbook_pk)
            .bind(workflow)
            .bind(&trigger.kind)
            .bind(version)
            .execute(&mut **tx)
            .await?;
            continue;
        }
        // A changed event trigger keeps its earlier filters for the events it has not read.
        let (cursor, earlier) = match before {
            Some((kind, spec, cursor, earlier)) if kind == "event" => {
                let earlier: Vec<EarlierFilters> = match earlier {
                    Some(text) => parse_json(text, "a trigger's earlier filters")?,
                    None => Vec::new(),
                };
                let spec: Value = parse_json(spec, "a trigger")?;
                let earlier = earlier_after_change(earlier, &spec, *cursor, seq);
                let cursor = if earlier.is_empty() { seq - 1 } else { *cursor };
                (cursor, earlier)
            }
            _ => (seq - 1, Vec::new()),
        };
        let earlier = match earlier.is_empty() {
            true => None,
            false => Some(to_json_text(&earlier)?),
        };
        sqlx::query(
            "INSERT INTO triggers (playbook_pk, workflow, kind, spec, version, since_seq, \
             saved_at, cursor_seq, earlier) VALUES (?1, ?2, ?3, ?5, ?4, ?6, ?7, ?8, ?9) \
             ON CONFLICT (playbook_pk, workflow, kind) DO UPDATE SET spec = excluded.spec, \
             version = excluded.version, since_seq = excluded.since_seq, \
             saved_at = excluded.saved_at, cursor_seq = excluded.cursor_seq, due_at = NULL, \
             earlier = excluded.earlier",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .bind(&trigger.kind)
        .bind(version)
        .bind(to_json_text(&trigger.spec)?)
        .bind(seq)
        .bind(now_text)
        .bind(cursor)
        .bind(earlier)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// A due time as stored: RFC 3339 in UTC with exactly three fractional digits, like the
/// database's clock, so that text order is time order.
fn due_text(time: DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// A child's ending reaches its parent: the work it was started with, added to the parent
/// run in the ending's transaction.
async fn notify_parent(
    tx: &mut Transaction<'static, Sqlite>,
    playbook_pk: i64,
    run_id: &str,
    now_text: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO work (playbook_pk, run_id, key, due_at, payload, ordered) \
         SELECT playbook_pk, parent_run_id, ending_work_key, ?3, ending_work_payload, \
         ending_work_ordered FROM runs WHERE playbook_pk = ?1 AND run_id = ?2 \
         AND parent_run_id IS NOT NULL AND ending_work_key IS NOT NULL \
         ON CONFLICT (playbook_pk, run_id, key) DO NOTHING",
    )
    .bind(playbook_pk)
    .bind(run_id)
    .bind(now_text)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Inserts work items; one whose key the run has already is kept as it is.
async fn insert_work(
    tx: &mut Transaction<'static, Sqlite>,
    playbook_pk: i64,
    run_id: &str,
    now_text: &str,
    work: &[NewWork],
) -> Result<()> {
    for item in work {
        let due = item.due_at.map_or_else(|| now_text.to_owned(), due_text);
        sqlx::query(
            "INSERT INTO work (playbook_pk, run_id, key, due_at, payload, ordered) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (playbook_pk, run_id, key) DO NOTHING",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .bind(&item.key)
        .bind(due)
        .bind(to_json_text(&item.payload)?)
        .bind(item.ordered)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// The status and latest version of a definition, when there is one.
async fn stored_status(
    tx: &mut Transaction<'static, Sqlite>,
    playbook_pk: i64,
    key: &DefinitionKey,
) -> Result<Option<(String, i64)>> {
    let row = sqlx::query(
        "SELECT status, latest_version FROM definitions \
         WHERE playbook_pk = ?1 AND def_type = ?2 AND name = ?3",
    )
    .bind(playbook_pk)
    .bind(&key.def_type)
    .bind(&key.name)
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .transpose()
}
