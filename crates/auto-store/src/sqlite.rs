//! The store on SQLite: one file in WAL mode with `synchronous=FULL`, held by one server through
//! an exclusive lock on `<file>.lock`. Writes go through one connection in `BEGIN IMMEDIATE`
//! transactions; reads use a small pool beside it. Times are kept as RFC 3339 text in UTC with
//! milliseconds, so that text order is time order, and JSON as text.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Timelike, Utc};
use serde::Serialize;
use serde_json::Value;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteRow,
};
use sqlx::{Row, Sqlite, Transaction};

use crate::dialect::{Dialect, Engine, StoredTime};
use crate::shared::{deep_json, kept_source, migrations};
use crate::sql::quiet::Quiet;
use crate::sql::{KeptDefinitions, Opener, RawGroup, Reserved, SqlStore};
use crate::{NewEvent, Result, StoreError};

/// How many connections read beside the one that writes.
const READ_CONNECTIONS_MAX: u32 = 4;

/// How long a statement waits for SQLite's own file lock before it fails. Only this process
/// writes, so waits are short: a checkpoint, or a reader that holds the file briefly.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl Dialect for Sqlite {
    type Time = String;

    const ENGINE: Engine = Engine::Sqlite;

    async fn begin(pool: &SqlitePool) -> Result<Transaction<'static, Sqlite>> {
        // IMMEDIATE takes the write lock at the start, so a transaction never fails half way
        // for want of it; sqlx rolls it back if the future is dropped.
        match pool.begin_with("BEGIN IMMEDIATE").await {
            Ok(tx) => Ok(tx),
            // A transaction that failed at a fault SQLite answers by rolling back itself (a
            // full disk: SQLITE_FULL, SQLITE_IOERR) leaves sqlx counting it open, as its own
            // ROLLBACK then fails, and sqlx refuses every later BEGIN on that connection. The
            // connection is closed, and the write goes on a new one.
            Err(sqlx::Error::InvalidSavePointStatement | sqlx::Error::BeginFailed) => {
                tracing::warn!(
                    "the SQLite writer's connection was left inside a failed transaction; it is opened again"
                );
                if let Err(error) = pool.acquire().await?.close().await {
                    tracing::warn!(%error, "the SQLite writer's connection did not close cleanly");
                }
                Ok(pool.begin_with("BEGIN IMMEDIATE").await?)
            }
            Err(other) => Err(other.into()),
        }
    }

    /// SQLite's `'now'` is this process's reading of the system clock, cut to the
    /// millisecond: the same reading is taken here, without a round trip to the connection's
    /// thread.
    fn local_now() -> Option<DateTime<Utc>> {
        let now = Utc::now();
        now.with_nanosecond(now.nanosecond() / 1_000_000 * 1_000_000)
    }

    fn json(row: &SqliteRow, column: &str, what: &str) -> Result<Option<Value>> {
        let text: Option<String> = row.try_get(column)?;
        text.map(|text| deep_json(&text, what)).transpose()
    }

    /// Inserts the events under seqs from `reserved.first_seq`, in one statement (or one each when
    /// one is larger than [`LARGE_EVENT_BYTES`]).
    async fn insert_events(
        tx: &mut Transaction<'static, Sqlite>,
        reserved: &Reserved<Sqlite>,
        events: &[NewEvent],
    ) -> Result<(), sqlx::Error> {
        let inputs = event_inputs(events)?;
        if any_large(&inputs) {
            for (input, seq) in inputs.iter().zip(reserved.first_seq..) {
                sqlx::query(INSERT_EVENT)
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
                    .bind(&reserved.now.stored)
                    .execute(&mut **tx)
                    .await?;
            }
        } else {
            insert_event_batch(tx, reserved, &inputs).await?;
        }
        Ok(())
    }

    async fn check_writable(store: &SqlStore<Sqlite>) -> Result<()> {
        // A page of data written over the probe's one row, in a committed transaction: the
        // commit writes to the log as any change does, and the page must be found. The table
        // is made by the first probe and kept: a table made and dropped each time would
        // change the schema, and every connection to the file would read it again and
        // prepare its statements anew at its next one, the group writer's included.
        let mut tx = store.begin().await?;
        for statement in [
            "CREATE TABLE IF NOT EXISTS write_probe (id INTEGER PRIMARY KEY, x BLOB NOT NULL)",
            "INSERT OR REPLACE INTO write_probe (id, x) VALUES (1, zeroblob(4096))",
        ] {
            sqlx::query(statement).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }
}

/// A time as stored: RFC 3339 text in UTC.
impl StoredTime for String {
    /// With exactly three fractional digits, like the database's clock, so that text order is
    /// time order.
    fn from_time(time: DateTime<Utc>) -> String {
        time.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
    }

    fn to_time(self) -> Result<DateTime<Utc>> {
        DateTime::parse_from_rfc3339(&self)
            .map(|time| time.with_timezone(&Utc))
            .map_err(|error| StoreError::Corrupt(format!("the time {self:?}: {error}")))
    }
}

/// Opens the SQLite store a `sqlite:` URL names (see [`crate::open`]).
pub(crate) async fn open(url: &str) -> Result<SqlStore<Sqlite>> {
    let options = SqliteConnectOptions::from_str(url).map_err(|error| {
        StoreError::BadUrl(format!("the SQLite database URL is not valid: {error}"))
    })?;
    if is_in_memory(url) {
        return open_in_memory(options).await;
    }
    let path = options.get_filename().to_owned();
    let file_lock = lock_database_file(&path)?;
    let options = CONNECTION_PRAGMAS.iter().fold(
        options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(BUSY_TIMEOUT),
        |options, (name, value)| options.pragma(*name, *value),
    );
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
    migrations!("sqlite").run(&writer).await?;
    let reader = pool_options()
        .max_connections(READ_CONNECTIONS_MAX)
        .connect_with(options)
        .await?;
    tracing::info!(path = %path.display(), "the SQLite store is open");
    let raw_path = path.clone();
    let open_raw: Opener = Box::new(move || open_raw(&raw_path));
    Ok(SqlStore {
        whole_runs: None,
        quiet: Arc::new(Quiet::pooled(reader.clone())),
        raw: Some(RawGroup::start(writer.clone(), open_raw)),
        writer,
        reader,
        _file_lock: Some(file_lock),
        kept: KeptDefinitions::Alone(Default::default()),
    })
}

async fn open_in_memory(options: SqliteConnectOptions) -> Result<SqlStore<Sqlite>> {
    // The database lives as long as its connection: the pool keeps exactly one, for ever.
    let pool = pool_options()
        .max_connections(1)
        .min_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(options.foreign_keys(true))
        .await?;
    migrations!("sqlite").run(&pool).await?;
    Ok(SqlStore {
        whole_runs: None,
        quiet: Arc::new(Quiet::pooled(pool.clone())),
        writer: pool.clone(),
        reader: pool,
        _file_lock: None,
        raw: None,
        kept: KeptDefinitions::Alone(Default::default()),
    })
}

/// What every connection to the file is set to, sqlx's and the group writer's alike.
const CONNECTION_PRAGMAS: [(&str, &str); 3] = [
    ("foreign_keys", "ON"),
    ("synchronous", "FULL"),
    // A transaction's savepoints (one for each change of a group) and a statement that may
    // fail part way keep the pages they would restore in a journal of their own, which SQLite
    // writes to a temporary file past 64 KiB: kept in memory instead, it costs no write and
    // no file.
    ("temp_store", "MEMORY"),
];

/// The group writer's connection is set as sqlx's are but for one: it does not check foreign
/// keys. Every change it makes reads the playbook it writes under in its own transaction
/// (`sqlite_changes::reserve`), and a playbook is deleted only on sqlx's writer, which the
/// group writer holds while it writes, so the check could never fail; and it costs more than
/// its lookup: a statement that checks a key may abort part way, so SQLite keeps a journal of
/// every page a multi-row insert changes (see `sqlite_changes::event_batch`).
const RAW_CONNECTION_PRAGMAS: [(&str, &str); 3] = [
    ("foreign_keys", "OFF"),
    CONNECTION_PRAGMAS[1],
    CONNECTION_PRAGMAS[2],
];

/// The group writer's own connection to the file, set as [`RAW_CONNECTION_PRAGMAS`] says (the
/// file is in WAL mode already, as sqlx's writer set it), through the VFS that gathers a
/// commit's writes to the log.
pub(crate) fn open_raw(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    // Through the VFS that writes a commit's log frames in one write (`wal_writes`).
    let connection = crate::sql::wal_writes::open(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    for (name, value) in RAW_CONNECTION_PRAGMAS {
        connection.pragma_update(None, name, value)?;
    }
    Ok(connection)
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

/// An event's time as stored: RFC 3339 in UTC, with as many fractional digits as it has.
fn format_time(time: DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

/// One event as the batch insert reads it from its JSON array. `data` and `extensions` are
/// JSON texts inside strings, so that they are stored exactly as serialized.
#[derive(Serialize)]
pub(crate) struct EventInput<'a> {
    pub(crate) id: &'a str,
    pub(crate) r#type: &'a str,
    /// `None` for the run's own source (kept as NULL, migration 0015).
    pub(crate) source: Option<&'a str>,
    pub(crate) subject: Option<&'a str>,
    pub(crate) time: Option<String>,
    pub(crate) datacontenttype: Option<&'a str>,
    pub(crate) data: Option<String>,
    pub(crate) extensions: String,
    pub(crate) run_id: Option<&'a str>,
    pub(crate) run_seq: Option<i64>,
}

/// The events as the inserts bind them.
pub(crate) fn event_inputs(events: &[NewEvent]) -> Result<Vec<EventInput<'_>>, sqlx::Error> {
    Ok(events
        .iter()
        .zip(event_texts(events)?)
        .map(|(event, texts)| EventInput {
            id: &event.id,
            r#type: &event.event_type,
            source: kept_source(event),
            subject: event.subject.as_deref(),
            time: texts.time,
            datacontenttype: event.datacontenttype.as_deref(),
            data: texts.data,
            extensions: texts.extensions,
            run_id: event.run_id.as_deref(),
            run_seq: event.run_seq,
        })
        .collect())
}

/// What an event is stored as that is not one of its own fields as they are: its time, its
/// data and its extensions, as text.
pub(crate) struct EventTexts {
    pub(crate) time: Option<String>,
    pub(crate) data: Option<String>,
    pub(crate) extensions: String,
}

/// Each event's [`EventTexts`], in order. The events of one run nearly all carry the same
/// extensions (its caller, its definition's version), and a step's events alternate between
/// a run's and its children's: extensions the same as one of the two events before are not
/// written again.
pub(crate) fn event_texts(events: &[NewEvent]) -> Result<Vec<EventTexts>, sqlx::Error> {
    let mut texts: Vec<EventTexts> = Vec::with_capacity(events.len());
    for (n, event) in events.iter().enumerate() {
        let written = (n.saturating_sub(2)..n)
            .rev()
            .find(|&before| events[before].extensions == event.extensions);
        let extensions = match written {
            Some(before) => texts[before].extensions.clone(),
            None => to_json_text(&event.extensions)?,
        };
        texts.push(EventTexts {
            time: event.time.map(format_time),
            data: event.data.as_ref().map(to_json_text).transpose()?,
            extensions,
        });
    }
    Ok(texts)
}

/// Whether one of the events goes in by a statement of its own ([`INSERT_EVENT`]): a large
/// event (a tool's result, say), as reading it out of the batch's JSON array costs SQLite a
/// copy of the whole array for each column.
pub(crate) fn any_large(inputs: &[EventInput<'_>]) -> bool {
    inputs.iter().any(|input| {
        input.data.as_ref().map_or(0, String::len) + input.extensions.len() > LARGE_EVENT_BYTES
    })
}

pub(crate) fn to_json_text<T: Serialize>(value: &T) -> Result<String, sqlx::Error> {
    serde_json::to_string(value).map_err(|error| sqlx::Error::Encode(Box::new(error)))
}

/// An event this large (its data and extensions as JSON) is inserted by a statement of its own.
const LARGE_EVENT_BYTES: usize = 64 * 1024;

/// The columns an insert of events gives, in order.
macro_rules! event_columns {
    () => {
        "(playbook_pk, seq, id, type, source, subject, time, datacontenttype, data, \
         extensions, run_id, run_seq, recorded_at)"
    };
}

/// The start of an insert of events, before its rows.
macro_rules! insert_events_into {
    () => {
        concat!("INSERT INTO events ", event_columns!())
    };
}

/// One event: playbook_pk, seq, id, type, source, subject, time, datacontenttype, data,
/// extensions, run_id, run_seq, and the change's time.
pub(crate) const INSERT_EVENT: &str = concat!(
    insert_events_into!(),
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
);

/// The start of the group writer's inserts of events, put together at run time: `OR FAIL`
/// rather than the default `ABORT`, as `sqlite_changes::event_batch` says why.
pub(crate) const INSERT_EVENTS_OR_FAIL_INTO: &str =
    concat!("INSERT OR FAIL INTO events ", event_columns!());

/// The events of a JSON array of [`EventInput`] (`?4`), under the seqs from `?2` of the
/// playbook `?1`, at the change's time `?3`.
pub(crate) const INSERT_EVENT_BATCH: &str = concat!(
    insert_events_into!(),
    " SELECT ?1, ?2 + j.key, j.value ->> '$.id', j.value ->> '$.type', \
    j.value ->> '$.source', j.value ->> '$.subject', \
    j.value ->> '$.time', j.value ->> '$.datacontenttype', \
    j.value ->> '$.data', j.value ->> '$.extensions', j.value ->> '$.run_id', \
    j.value ->> '$.run_seq', ?3 \
    FROM json_each(?4) AS j ORDER BY j.key"
);

/// The events of `inputs` in one statement that reads them out of a JSON array.
async fn insert_event_batch(
    tx: &mut Transaction<'static, Sqlite>,
    reserved: &Reserved<Sqlite>,
    inputs: &[EventInput<'_>],
) -> Result<(), sqlx::Error> {
    sqlx::query(INSERT_EVENT_BATCH)
        .bind(reserved.playbook_pk)
        .bind(reserved.first_seq)
        .bind(&reserved.now.stored)
        .bind(to_json_text(&inputs)?)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared::{migration_sources, migrator};

    /// Every event's extensions are written as its own, where they are taken from an event
    /// before it and where they are not.
    #[test]
    fn each_event_gets_the_text_of_its_own_extensions() {
        let with = |pairs: &[(&str, serde_json::Value)]| {
            let mut event = NewEvent::new("e", "t", "/s");
            for (name, value) in pairs {
                event.extensions.insert((*name).to_owned(), value.clone());
            }
            event
        };
        let run = [
            ("caller", serde_json::json!("local")),
            ("definitionversion", 1.into()),
        ];
        let child = [
            ("caller", serde_json::json!("local")),
            ("calldepth", 1.into()),
        ];
        let events = [
            with(&run),
            with(&run),
            with(&child),
            with(&child),
            with(&run),
            with(&[]),
            with(&child),
            with(&run),
        ];
        let texts = event_texts(&events).unwrap();
        for (event, text) in events.iter().zip(&texts) {
            assert_eq!(
                text.extensions,
                serde_json::to_string(&event.extensions).unwrap()
            );
        }
        assert_eq!(texts[5].extensions, "{}");
    }

    /// sqlx's connections (the writer and the readers) and the group writer's own are set
    /// alike: foreign keys on, `synchronous = FULL`, temporary journals in memory.
    #[tokio::test]
    async fn every_connection_to_the_file_is_set_alike() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("alike.db");
        let store = open(&format!("sqlite://{}", path.display())).await.unwrap();
        let raw = open_raw(&path).unwrap();
        // As SQLite reads them back: ON is 1, OFF is 0, FULL is 2, MEMORY is 2. The group
        // writer's connection differs in foreign keys alone.
        let read = [(1_i64, 0_i64), (2, 2), (2, 2)];
        for (((name, _), (raw_name, _)), (expected, raw_expected)) in CONNECTION_PRAGMAS
            .iter()
            .zip(RAW_CONNECTION_PRAGMAS)
            .zip(read)
        {
            assert_eq!(*name, raw_name);
            let statement = format!("PRAGMA {name}");
            for pool in [&store.writer, &store.reader] {
                let set: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(statement.clone()))
                    .fetch_one(pool)
                    .await
                    .unwrap();
                assert_eq!(set, expected, "{name} on sqlx's connection");
            }
            let set: i64 = raw.query_row(&statement, [], |row| row.get(0)).unwrap();
            assert_eq!(set, raw_expected, "{name} on the group writer's connection");
        }
    }

    /// The health check's write leaves the schema as it found it once the probe's table is
    /// there, so it costs the connections' prepared statements nothing; it still writes.
    #[tokio::test]
    async fn the_write_probe_changes_no_schema_after_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("probe.db");
        let store = open(&format!("sqlite://{}", path.display())).await.unwrap();
        let schema = || async {
            sqlx::query_scalar::<_, i64>("PRAGMA schema_version")
                .fetch_one(&store.writer)
                .await
                .unwrap()
        };
        crate::Store::check_writable(&store).await.unwrap();
        let version = schema().await;
        sqlx::query("DELETE FROM write_probe")
            .execute(&store.writer)
            .await
            .unwrap();
        for _ in 0..3 {
            crate::Store::check_writable(&store).await.unwrap();
        }
        assert_eq!(schema().await, version, "the probe changed the schema");
        let written: i64 = sqlx::query_scalar("SELECT length(x) FROM write_probe WHERE id = 1")
            .fetch_one(&store.reader)
            .await
            .unwrap();
        assert_eq!(written, 4096);
    }

    /// The clock read without asking SQLite reads as SQLite's own `'now'`: the same
    /// millisecond of the same clock, between the readings of SQLite taken before and after.
    #[tokio::test]
    async fn the_local_clock_reads_as_sqlites() {
        assert_eq!(Sqlite::NOW, "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')");
        let pool = SqlitePool::connect("sqlite::memory:").await.unwrap();
        let sqlite_now = || async {
            let text: String = sqlx::query_scalar("SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now')")
                .fetch_one(&pool)
                .await
                .unwrap();
            text.to_time().unwrap()
        };
        for _ in 0..50 {
            let before = sqlite_now().await;
            let local = Sqlite::local_now().unwrap();
            let after = sqlite_now().await;
            assert!(
                before <= local && local <= after,
                "{before} {local} {after}"
            );
            assert_eq!(local.nanosecond() % 1_000_000, 0, "{local}");
            assert_eq!(String::from_time(local).to_time().unwrap(), local);
        }
    }

    /// A file at `url` as an earlier version left it: the first `migrations` of this one run
    /// (foreign keys off, as a file's rows may be put in out of order here).
    async fn earlier_file(url: &str, migrations: usize) -> SqlitePool {
        let options = SqliteConnectOptions::from_str(url)
            .unwrap()
            .create_if_missing(true)
            .foreign_keys(false);
        let earlier = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .unwrap();
        let sources = migration_sources!("sqlite");
        migrator(&sources[..migrations])
            .run(&earlier)
            .await
            .unwrap();
        earlier
    }

    /// Events an earlier version kept whole read the same once this version has made the table
    /// lean (migration 0015): a run's own source and a time equal to the recording's are kept as
    /// NULL, any other kept as it was, and the indexes answer as before.
    #[tokio::test]
    async fn events_kept_whole_before_read_the_same_once_lean() {
        use crate::{EventFilter, PlaybookRef, Store};
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("auto.db").display());
        let earlier = earlier_file(&url, 14).await;
        sqlx::raw_sql(
            "INSERT INTO orgs (id, created_at) VALUES ('acme', '2026-01-01T00:00:00.000Z');
             INSERT INTO playbooks (pk, org, id, created_at, last_seq)
                 VALUES (1, 'acme', 'support', '2026-01-01T00:00:00.000Z', 3);
             INSERT INTO events (playbook_pk, seq, id, type, source, subject, time,
                                 datacontenttype, data, extensions, run_id, run_seq, recorded_at)
             VALUES
                 (1, 1, 'e1', 'run_started', '/runs/r1', 'workflow/w',
                  '2026-01-01T00:00:01.000Z', NULL, NULL, '{}', 'r1', 1,
                  '2026-01-01T00:00:01.000Z'),
                 (1, 2, 'e2', 'order.placed', '/shop', NULL,
                  '2025-12-31T23:00:00.000Z', 'application/json', '{\"n\":1}', '{}', NULL, NULL,
                  '2026-01-01T00:00:02.000Z'),
                 (1, 3, 'e3', 'run_cancel_requested', '/runs/r1x', NULL,
                  '2026-01-01T00:00:03.000Z', NULL, NULL, '{}', 'r1', NULL,
                  '2026-01-01T00:00:03.000Z');",
        )
        .execute(&earlier)
        .await
        .unwrap();
        earlier.close().await;

        let store = open(&url).await.unwrap();
        let kept: Vec<(Option<String>, Option<String>)> =
            sqlx::query_as("SELECT source, time FROM events ORDER BY seq")
                .fetch_all(&store.reader)
                .await
                .unwrap();
        assert_eq!(
            kept,
            [
                (None, None),
                (
                    Some("/shop".to_owned()),
                    Some("2025-12-31T23:00:00.000Z".to_owned())
                ),
                (Some("/runs/r1x".to_owned()), None),
            ]
        );
        let playbook = PlaybookRef::new("acme", "support");
        let events = store
            .list_events(&playbook, &EventFilter::default())
            .await
            .unwrap();
        let read: Vec<(&str, String, String)> = events
            .iter()
            .map(|event| {
                (
                    event.id.as_str(),
                    event.source.clone(),
                    String::from_time(event.time),
                )
            })
            .collect();
        assert_eq!(
            read,
            [
                ("e1", "/runs/r1".into(), "2026-01-01T00:00:01.000Z".into()),
                ("e2", "/shop".into(), "2025-12-31T23:00:00.000Z".into()),
                ("e3", "/runs/r1x".into(), "2026-01-01T00:00:03.000Z".into()),
            ]
        );
        let of_run = EventFilter {
            run_id: Some("r1".into()),
            ..EventFilter::default()
        };
        let ids: Vec<String> = store
            .list_events(&playbook, &of_run)
            .await
            .unwrap()
            .into_iter()
            .map(|event| event.id)
            .collect();
        assert_eq!(ids, ["e1", "e3"]);
        let taken = sqlx::query(
            "INSERT INTO events (playbook_pk, seq, id, type, extensions, recorded_at)
             VALUES (1, 4, 'e2', 't', '{}', '2026-01-01T00:00:04.000Z')",
        )
        .execute(&store.writer)
        .await
        .unwrap_err();
        assert!(
            taken.to_string().contains("events.playbook_pk, events.id"),
            "{taken}"
        );

        // A run's events written now go in lean, and read back whole.
        let recorded =
            crate::shared::start_with_two_events(&store, &playbook, "r2", ["e5", "e6"]).await;
        let kept: Vec<(Option<String>, Option<String>)> =
            sqlx::query_as("SELECT source, time FROM events WHERE run_id = 'r2' ORDER BY seq")
                .fetch_all(&store.reader)
                .await
                .unwrap();
        assert_eq!(kept, [(None, None), (Some("/elsewhere".to_owned()), None)]);
        let of_run = EventFilter {
            run_id: Some("r2".into()),
            ..EventFilter::default()
        };
        let read = store.list_events(&playbook, &of_run).await.unwrap();
        assert_eq!(read, recorded);
        assert_eq!(read[0].source, "/runs/r2");
        assert_eq!(read[0].time, read[0].recorded_at);

        // A row without a source has one only through its run: without a run it is corrupt,
        // and said so rather than read with a made-up source.
        sqlx::query(
            "INSERT INTO events (playbook_pk, seq, id, type, extensions, recorded_at)
             VALUES (1, 100, 'e7', 'note', '{}', '2026-01-01T00:00:07.000Z')",
        )
        .execute(&store.writer)
        .await
        .unwrap();
        let corrupt = store.get_event(&playbook, "e7").await.unwrap_err();
        assert!(
            matches!(&corrupt, crate::StoreError::Corrupt(message)
                if message == "an event without a run has no source"),
            "{corrupt}"
        );
    }

    /// Runs and requests an earlier version kept read the same once this version has made
    /// their tables again with their status checked by comparisons (migration 0016), and a
    /// status outside the spec's words is still refused.
    #[tokio::test]
    async fn runs_and_requests_read_the_same_once_their_status_is_checked_by_comparisons() {
        use crate::{PlaybookRef, RequestFilter, RequestStatus, RunFilter, RunStatus, Store};
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("auto.db").display());
        // Each run's every column, to hold the rows alike before and after.
        const EVERY_COLUMN: &str = "SELECT run_id, json_array(def_type, name, definition_version, status, input, \
             output, record, problem, started_by, parent_run_id, task_reference, depth, \
             call_depth, trigger_info, attempt, last_run_seq, last_event_at, started_at, \
             ended_at, parent_call_id, root_run_id, ending_work_key, ending_work_payload, \
             ending_work_ordered) FROM runs ORDER BY run_id";
        let earlier = earlier_file(&url, 15).await;
        sqlx::raw_sql(
            "INSERT INTO orgs (id, created_at) VALUES ('acme', '2026-01-01T00:00:00.000Z');
             INSERT INTO playbooks (pk, org, id, created_at, last_seq)
                 VALUES (1, 'acme', 'support', '2026-01-01T00:00:00.000Z', 0);
             INSERT INTO runs (playbook_pk, run_id, def_type, name, definition_version, status,
                               input, output, record, problem, started_by, parent_run_id,
                               task_reference, depth, call_depth, trigger_info, attempt,
                               last_run_seq, last_event_at, started_at, ended_at,
                               parent_call_id, root_run_id, ending_work_key,
                               ending_work_payload, ending_work_ordered)
             VALUES
                 (1, 'r1', 'workflow', 'w', 2, 'started', '{\"x\":0}', NULL, NULL, NULL,
                  'local', NULL, NULL, 1, NULL, NULL, 1, 3, '2026-01-01T00:00:02.000Z',
                  '2026-01-01T00:00:01.000Z', NULL, NULL, NULL, NULL, NULL, 0),
                 (1, 'r1.c', 'computation', 'add', 1, 'succeeded', '{\"x\":0}',
                  '{\"x\":1}', '{\"duration_ms\":0}', NULL, 'local', 'r1', '/do/0/a',
                  NULL, 1, NULL, 1, 2, '2026-01-01T00:00:02.000Z',
                  '2026-01-01T00:00:02.000Z', '2026-01-01T00:00:02.000Z', 'call:/do/0/a#1',
                  'r1', 'ended:call:/do/0/a#1', 'e30=', 1),
                 (1, 'r2', 'interaction', 'ask', 1, 'started', '{}', NULL, NULL, NULL,
                  'local', NULL, NULL, NULL, NULL, NULL, 1, 1, '2026-01-01T00:00:03.000Z',
                  '2026-01-01T00:00:03.000Z', NULL, NULL, NULL, NULL, NULL, 0);
             INSERT INTO requests (playbook_pk, request_id, run_id, def_type, name,
                                   definition_version, to_whom, message, input, output_schema,
                                   status, created_at, expires_at, answered_by, answer,
                                   closed_at)
             VALUES (1, 'q1', 'r2', 'interaction', 'ask', 1, 'ops', 'Approve?', '{}', NULL,
                     'open', '2026-01-01T00:00:03.000Z', '2026-01-02T00:00:03.000Z', NULL,
                     NULL, NULL);",
        )
        .execute(&earlier)
        .await
        .unwrap();
        let before: Vec<(String, String)> = sqlx::query_as(EVERY_COLUMN)
            .fetch_all(&earlier)
            .await
            .unwrap();
        earlier.close().await;

        let store = open(&url).await.unwrap();
        let after: Vec<(String, String)> = sqlx::query_as(EVERY_COLUMN)
            .fetch_all(&store.reader)
            .await
            .unwrap();
        assert_eq!(after, before);
        let playbook = PlaybookRef::new("acme", "support");
        let child = store.get_run(&playbook, "r1.c").await.unwrap().unwrap();
        assert_eq!(child.status, RunStatus::Succeeded);
        assert_eq!(child.output, Some(serde_json::json!({"x": 1})));
        let started = RunFilter {
            status: Some(RunStatus::Started),
            ..RunFilter::default()
        };
        let ids: Vec<String> = store
            .list_runs(&playbook, &started)
            .await
            .unwrap()
            .into_iter()
            .map(|run| run.run_id)
            .collect();
        assert_eq!(ids, ["r2", "r1"]);
        let open_requests = RequestFilter {
            status: Some(RequestStatus::Open),
            ..RequestFilter::default()
        };
        let requests = store
            .list_requests(&playbook, &open_requests)
            .await
            .unwrap();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].request_id, "q1");
        assert_eq!(requests[0].run_id, "r2");

        for refused in [
            "UPDATE runs SET status = 'paused' WHERE run_id = 'r1'",
            "UPDATE requests SET status = 'snoozed' WHERE request_id = 'q1'",
        ] {
            let error = sqlx::query(refused)
                .execute(&store.writer)
                .await
                .unwrap_err();
            assert!(
                error.to_string().contains("CHECK constraint failed"),
                "{refused}: {error}"
            );
        }
    }

    /// A work item an earlier version kept as JSON text reads, once the store is opened by this
    /// version, as the bytes of that text: the payload the runtime wrote.
    #[tokio::test]
    async fn work_kept_as_json_before_reads_as_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("auto.db").display());
        let earlier = earlier_file(&url, 10).await;
        let payload = r#"{"input":"timer","timer_id":"wait:/do/0#1"}"#;
        sqlx::query(
            "INSERT INTO work (playbook_pk, run_id, key, due_at, payload, ordered) \
             VALUES (1, 'r', 'timer:wait', '2026-01-01T00:00:00.000000Z', ?, 1)",
        )
        .bind(payload)
        .execute(&earlier)
        .await
        .unwrap();
        earlier.close().await;

        let store = open(&url).await.unwrap();
        let row = sqlx::query("SELECT typeof(payload) AS kind, payload FROM work")
            .fetch_one(&store.reader)
            .await
            .unwrap();
        assert_eq!(row.get::<String, _>("kind"), "blob");
        assert_eq!(row.get::<Vec<u8>, _>("payload"), payload.as_bytes());
    }
}
