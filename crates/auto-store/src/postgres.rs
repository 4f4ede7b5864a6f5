//! The store on PostgreSQL, shared by several servers. The database's clock is
//! `clock_timestamp()`. A playbook's `seq`s are taken under its row's lock, held to the commit,
//! so appends to one playbook commit in `seq` order and a follower never finds an earlier `seq`
//! after a later one.

use std::borrow::Cow;
use std::hash::{BuildHasher, Hasher};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use chrono::{DateTime, TimeZone, Utc};
use serde_json::{Map, Value};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::types::Json;
use sqlx::{AssertSqlSafe, Postgres, Row, SqlSafeStr, Transaction};

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

/// How many connections one server keeps to the database.
const CONNECTIONS_MAX: u32 = 10;

/// Schemas that `open_postgres_isolated` made longer ago than this are dropped when it makes a
/// new one: tests leave theirs behind, and a test runs for far less.
const ISOLATED_SCHEMA_AGE_MAX_S: u64 = 24 * 60 * 60;

/// The prefix of the schemas `open_postgres_isolated` makes: `t_<unix seconds>_<16 hex>`.
const ISOLATED_SCHEMA_PREFIX: &str = "t_";

const MIGRATION_STORE: &str = include_str!("../migrations/postgres/0001_store.sql");
const MIGRATION_RUNS: &str = include_str!("../migrations/postgres/0002_runs.sql");
const MIGRATION_WORKFLOWS: &str = include_str!("../migrations/postgres/0003_workflows.sql");
const MIGRATION_REQUESTS: &str = include_str!("../migrations/postgres/0004_requests.sql");
const MIGRATION_CALLS: &str = include_str!("../migrations/postgres/0005_calls.sql");
const MIGRATION_RUN_INBOX: &str = include_str!("../migrations/postgres/0006_run_inbox.sql");
const MIGRATION_TRIGGERS: &str = include_str!("../migrations/postgres/0007_triggers.sql");
const MIGRATION_EARLIER_FILTERS: &str =
    include_str!("../migrations/postgres/0008_earlier_filters.sql");
const MIGRATION_ORDERED_WORK: &str = include_str!("../migrations/postgres/0009_ordered_work.sql");
const MIGRATION_ENDING_WORK: &str = include_str!("../migrations/postgres/0010_ending_work.sql");

/// The columns `event_from_row` reads.
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

/// The PostgreSQL store.
pub(crate) struct PgStore {
    pool: PgPool,
}

impl PgStore {
    pub(crate) async fn open(url: &str) -> Result<Self> {
        Self::open_with(connect_options(url)?).await
    }

    async fn open_with(options: PgConnectOptions) -> Result<Self> {
        let pool = PgPoolOptions::new()
            .max_connections(CONNECTIONS_MAX)
            .connect_with(options)
            .await?;
        // sqlx's migrator holds an advisory lock while it runs: servers starting together
        // migrate once.
        migrator().run(&pool).await?;
        tracing::info!("the PostgreSQL store is open");
        Ok(Self { pool })
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
                " FROM requests WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $1 \
                 AND id = $2) AND {} = $3"
            ),
            column
        );
        sqlx::query(AssertSqlSafe(sql))
            .bind(&playbook.org)
            .bind(&playbook.playbook)
            .bind(value)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(request_from_row)
            .transpose()
    }

    /// Fails with `NotFound` unless the playbook exists.
    async fn require_playbook(&self, playbook: &PlaybookRef) -> Result<i64> {
        sqlx::query_scalar("SELECT pk FROM playbooks WHERE org = $1 AND id = $2")
            .bind(&playbook.org)
            .bind(&playbook.playbook)
            .fetch_optional(&self.pool)
            .await?
            .ok_or_else(|| playbook_not_found(playbook))
    }
}

fn connect_options(url: &str) -> Result<PgConnectOptions> {
    // The error names the fault, never the URL, which may hold a password.
    PgConnectOptions::from_str(url).map_err(|error| {
        StoreError::BadUrl(format!("the PostgreSQL database URL is not valid: {error}"))
    })
}

/// Opens a PostgreSQL store in a schema of its own, made for it, so that tests running at once
/// on one database do not see each other's data: every pooled connection has its
/// `search_path` set to the new schema `t_<unix seconds>_<random>`. For tests only (the store's
/// and the server's): schemas older than a day are dropped when a new one is made.
pub async fn open_postgres_isolated(url: &str) -> Result<Arc<dyn crate::Store>> {
    let options = connect_options(url)?;
    let now_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let schema = format!("{ISOLATED_SCHEMA_PREFIX}{now_s}_{:016x}", random_u64());
    let admin = PgPoolOptions::new()
        .max_connections(1)
        .connect_with(options.clone())
        .await?;
    drop_stale_schemas(&admin, now_s).await?;
    // Invariant: `schema` is made of ASCII letters, digits and `_` only (built just above).
    sqlx::raw_sql(AssertSqlSafe(format!("CREATE SCHEMA \"{schema}\"")))
        .execute(&admin)
        .await?;
    admin.close().await;
    let store = PgStore::open_with(options.options([("search_path", schema.as_str())])).await?;
    Ok(Arc::new(store))
}

/// Drops the schemas of isolated stores made more than `ISOLATED_SCHEMA_AGE_MAX_S` ago.
async fn drop_stale_schemas(admin: &PgPool, now_s: u64) -> Result<()> {
    let names: Vec<String> =
        sqlx::query_scalar("SELECT nspname::text FROM pg_namespace WHERE starts_with(nspname, $1)")
            .bind(ISOLATED_SCHEMA_PREFIX)
            .fetch_all(admin)
            .await?;
    for name in names {
        let Some(made_s) = isolated_schema_time(&name) else {
            continue;
        };
        if made_s.saturating_add(ISOLATED_SCHEMA_AGE_MAX_S) < now_s {
            // Invariant: `isolated_schema_time` accepted only letters, digits and `_`.
            let sql = format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE");
            sqlx::raw_sql(AssertSqlSafe(sql)).execute(admin).await?;
        }
    }
    Ok(())
}

/// The time in an isolated store's schema name, when the name is one.
fn isolated_schema_time(name: &str) -> Option<u64> {
    let rest = name.strip_prefix(ISOLATED_SCHEMA_PREFIX)?;
    let (seconds, random) = rest.split_once('_')?;
    let is_random = random.len() == 16 && random.bytes().all(|byte| byte.is_ascii_hexdigit());
    let is_seconds = !seconds.is_empty() && seconds.bytes().all(|byte| byte.is_ascii_digit());
    if is_random && is_seconds {
        seconds.parse().ok()
    } else {
        None
    }
}

/// A random number from the standard library's randomly keyed hasher, mixed with a counter
/// and the time, for schema names.
fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    hasher.finish()
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

/// A time as PostgreSQL keeps it: `timestamptz` has microseconds, and sqlx sends a time as
/// whole microseconds since 2000-01-01, dropping the rest.
fn stored_time(time: DateTime<Utc>) -> DateTime<Utc> {
    let postgres_epoch = Utc.with_ymd_and_hms(2000, 1, 1, 0, 0, 0).single();
    let Some(postgres_epoch) = postgres_epoch else {
        return time;
    };
    match (time - postgres_epoch).num_microseconds() {
        Some(micros) => postgres_epoch + chrono::Duration::microseconds(micros),
        None => time,
    }
}

/// The seqs a change takes, and the database's time of the change.
struct Reserved {
    playbook_pk: i64,
    first_seq: i64,
    now: DateTime<Utc>,
}

/// Takes `count` seqs for the playbook, or fails with `NotFound`. Raising `last_seq` locks the
/// playbook's row until the transaction ends, so the next change to the playbook takes its seqs
/// only after this one committed (or rolled back): seqs become visible in order. The time is
/// read under the lock, so it does not go back as seq goes on (unless the clock does).
async fn reserve_seqs(
    tx: &mut Transaction<'static, Postgres>,
    playbook: &PlaybookRef,
    count: usize,
) -> Result<Reserved> {
    let count = i64::try_from(count)
        .map_err(|_| StoreError::Conflict(format!("{count} events are too many for one change")))?;
    let row = sqlx::query(
        "UPDATE playbooks SET last_seq = last_seq + $3 WHERE org = $1 AND id = $2 \
         RETURNING pk, last_seq, clock_timestamp()",
    )
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
    Ok(Reserved {
        playbook_pk: row.try_get(0)?,
        first_seq: last_seq - count + 1,
        now: row.try_get(2)?,
    })
}

/// Inserts the events under seqs from `reserved.first_seq`, in one statement over arrays.
async fn insert_events(
    tx: &mut Transaction<'static, Postgres>,
    playbook: &PlaybookRef,
    reserved: &Reserved,
    events: Vec<NewEvent>,
) -> Result<Vec<Event>> {
    let ids: Vec<&str> = events.iter().map(|event| event.id.as_str()).collect();
    let types: Vec<&str> = events
        .iter()
        .map(|event| event.event_type.as_str())
        .collect();
    let sources: Vec<&str> = events.iter().map(|event| event.source.as_str()).collect();
    let subjects: Vec<Option<&str>> = events
        .iter()
        .map(|event| event.subject.as_deref())
        .collect();
    let times: Vec<Option<DateTime<Utc>>> = events.iter().map(|event| event.time).collect();
    let content_types: Vec<Option<&str>> = events
        .iter()
        .map(|event| event.datacontenttype.as_deref())
        .collect();
    let data: Vec<Option<Json<&Value>>> = events
        .iter()
        .map(|event| event.data.as_ref().map(Json))
        .collect();
    let extensions: Vec<Json<&Map<String, Value>>> =
        events.iter().map(|event| Json(&event.extensions)).collect();
    let run_ids: Vec<Option<&str>> = events.iter().map(|event| event.run_id.as_deref()).collect();
    let run_seqs: Vec<Option<i64>> = events.iter().map(|event| event.run_seq).collect();
    sqlx::query(
        "INSERT INTO events (playbook_pk, seq, id, type, source, subject, time, datacontenttype, \
         data, extensions, run_id, run_seq, recorded_at) \
         SELECT $1, $2 + t.ord - 1, t.id, t.type, t.source, t.subject, COALESCE(t.time, $3), \
         t.datacontenttype, t.data, t.extensions, t.run_id, t.run_seq, $3 \
         FROM UNNEST($4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], \
         $9::text[], $10::jsonb[], $11::jsonb[], $12::text[], $13::int8[]) WITH ORDINALITY \
         AS t(id, type, source, subject, time, datacontenttype, data, extensions, run_id, \
         run_seq, ord) ORDER BY t.ord",
    )
    .bind(reserved.playbook_pk)
    .bind(reserved.first_seq)
    .bind(reserved.now)
    .bind(ids)
    .bind(types)
    .bind(sources)
    .bind(subjects)
    .bind(times)
    .bind(content_types)
    .bind(data)
    .bind(extensions)
    .bind(run_ids)
    .bind(run_seqs)
    .execute(&mut **tx)
    .await
    .map_err(|error| event_insert_error(error, playbook))?;
    Ok(events
        .into_iter()
        .zip(reserved.first_seq..)
        .map(|(mut event, seq)| {
            event.time = event.time.map(stored_time);
            recorded_event(event, seq, reserved.now)
        })
        .collect())
}

/// A `json`/`jsonb` column read without serde_json's limit of 128 levels (sqlx's own `Json`
/// decode keeps it): taken as raw text, which serde_json skips over without recursing, then
/// parsed by [`deep_json`], so what was accepted up to 512 levels deep reads back.
fn deep_column<I>(row: &PgRow, column: I, what: &str) -> Result<Option<Value>>
where
    I: sqlx::ColumnIndex<PgRow>,
{
    let raw: Option<Json<Box<sqlx::types::JsonRawValue>>> = row.try_get(column)?;
    raw.map(|Json(raw)| deep_json(raw.get(), what)).transpose()
}

/// [`deep_column`] of a column that is never null.
fn deep_required<I>(row: &PgRow, column: I, what: &str) -> Result<Value>
where
    I: sqlx::ColumnIndex<PgRow>,
{
    deep_column(row, column, what)?.ok_or_else(|| StoreError::Corrupt(format!("{what} is missing")))
}

fn event_from_row(row: &PgRow) -> Result<Event> {
    let data = deep_column(row, "data", "an event's data")?;
    let extensions = match deep_required(row, "extensions", "an event's attributes")? {
        Value::Object(map) => map,
        other => {
            return Err(StoreError::Corrupt(format!(
                "an event's attributes are {other}, not an object"
            )));
        }
    };
    Ok(Event {
        seq: row.try_get("seq")?,
        id: row.try_get("id")?,
        event_type: row.try_get("type")?,
        source: row.try_get("source")?,
        subject: row.try_get("subject")?,
        time: row.try_get("time")?,
        datacontenttype: row.try_get("datacontenttype")?,
        data,
        extensions,
        run_id: row.try_get("run_id")?,
        run_seq: row.try_get("run_seq")?,
        recorded_at: row.try_get("recorded_at")?,
    })
}

fn definition_from_row(row: &PgRow) -> Result<DefinitionVersion> {
    let version: i64 = row.try_get("version")?;
    let latest_version: i64 = row.try_get("latest_version")?;
    // The latest version was last touched when the definition was (saved or retired); an
    // older one when it was saved.
    let updated_at = if version == latest_version {
        row.try_get("updated_at")?
    } else {
        row.try_get("saved_at")?
    };
    let derived = deep_required(row, "derived", "a definition's derived JSON")?;
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
        derived,
        created_at: row.try_get("created_at")?,
        updated_at,
        saved_seq: row.try_get("saved_seq")?,
    })
}

fn org_from_row(row: &PgRow) -> Result<Org> {
    Ok(Org {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        created_at: row.try_get("created_at")?,
    })
}

fn playbook_from_row(row: &PgRow) -> Result<Playbook> {
    Ok(Playbook {
        org: row.try_get("org")?,
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        created_at: row.try_get("created_at")?,
    })
}

fn run_from_row(row: &PgRow) -> Result<Run> {
    let json = |column: &str| deep_column(row, column, column);
    let input = deep_required(row, "input", "an input")?;
    Ok(Run {
        run_id: row.try_get("run_id")?,
        key: DefinitionKey {
            def_type: row.try_get("def_type")?,
            name: row.try_get("name")?,
        },
        definition_version: row.try_get("definition_version")?,
        status: parse_run_status(row.try_get("status")?)?,
        input,
        output: json("output")?,
        record: json("record")?,
        problem: json("problem")?,
        started_by: row.try_get("started_by")?,
        parent_run_id: row.try_get("parent_run_id")?,
        task_reference: row.try_get("task_reference")?,
        depth: row.try_get("depth")?,
        call_depth: row.try_get("call_depth")?,
        parent_call_id: row.try_get("parent_call_id")?,
        root_run_id: row.try_get("root_run_id")?,
        trigger: json("trigger_info")?,
        attempt: row.try_get("attempt")?,
        last_run_seq: row.try_get("last_run_seq")?,
        last_event_at: row.try_get("last_event_at")?,
        started_at: row.try_get("started_at")?,
        ended_at: row.try_get("ended_at")?,
    })
}

/// The status and attempt of a run, when there is one.
async fn stored_run_state(
    tx: &mut Transaction<'static, Postgres>,
    playbook_pk: i64,
    run_id: &str,
) -> Result<Option<(String, i64)>> {
    let row =
        sqlx::query("SELECT status, attempt FROM runs WHERE playbook_pk = $1 AND run_id = $2")
            .bind(playbook_pk)
            .bind(run_id)
            .fetch_optional(&mut **tx)
            .await?;
    row.map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .transpose()
}

/// Records a new run as `started` inside a change's transaction: refused with `LimitReached`
/// past the calls its tree may wait for (`open_calls_max`), and with `Conflict` when the
/// playbook has a run of that id. Shared by `start_run` and `start_interaction`.
async fn insert_run(
    tx: &mut Transaction<'static, Postgres>,
    playbook: &PlaybookRef,
    reserved: &Reserved,
    new: &NewRun,
    last_run_seq: i64,
) -> Result<Run> {
    if let (Some(root), Some(max)) = (&new.root_run_id, new.open_calls_max) {
        // The top run's row is the lock of its tree's count, held until commit.
        sqlx::query("SELECT 1 FROM runs WHERE playbook_pk = $1 AND run_id = $2 FOR UPDATE")
            .bind(reserved.playbook_pk)
            .bind(root)
            .execute(&mut **tx)
            .await?;
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM runs WHERE playbook_pk = $1 AND root_run_id = $2 \
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
         VALUES ($1, $2, $3, $4, $5, 'started', $6, $7, $8, $9, $10, $11, $12, 1, $13, $14, \
         $14, $15, $16, $17, $18, $19) ON CONFLICT (playbook_pk, run_id) DO NOTHING RETURNING ",
        run_columns!()
    ))
    .bind(reserved.playbook_pk)
    .bind(&new.run_id)
    .bind(&new.key.def_type)
    .bind(&new.key.name)
    .bind(new.definition_version)
    .bind(Json(&new.input))
    .bind(&new.started_by)
    .bind(&new.parent_run_id)
    .bind(&new.task_reference)
    .bind(new.depth)
    .bind(new.call_depth)
    .bind(new.trigger.as_ref().map(Json))
    .bind(last_run_seq)
    .bind(reserved.now)
    .bind(&new.parent_call_id)
    .bind(&new.root_run_id)
    .bind(new.ending_work.as_ref().map(|w| &w.key))
    .bind(new.ending_work.as_ref().map(|w| Json(&w.payload)))
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
    tx: &mut Transaction<'static, Postgres>,
    playbook: &PlaybookRef,
    reserved: &Reserved,
    run_id: &str,
    ending: &RunEnding,
    last_run_seq: i64,
) -> Result<Run> {
    let row = sqlx::query(concat!(
        "UPDATE runs SET status = $3, output = $4, record = $5, problem = $6, ended_at = $8, \
         last_run_seq = GREATEST(last_run_seq, $7), last_event_at = $8 \
         WHERE playbook_pk = $1 AND run_id = $2 AND status = 'started' RETURNING ",
        run_columns!()
    ))
    .bind(reserved.playbook_pk)
    .bind(run_id)
    .bind(ending.status.as_str())
    .bind(ending.output.as_ref().map(Json))
    .bind(ending.record.as_ref().map(Json))
    .bind(ending.problem.as_ref().map(Json))
    .bind(last_run_seq)
    .bind(reserved.now)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(row) = row else {
        let stored = stored_run_state(tx, reserved.playbook_pk, run_id).await?;
        return Err(run_change_refused(playbook, run_id, stored, None)?);
    };
    // A child's ending reaches its parent in the same transaction.
    notify_parent(tx, reserved.playbook_pk, run_id, reserved.now).await?;
    run_from_row(&row)
}

fn request_from_row(row: &PgRow) -> Result<Request> {
    let json = |column: &str| deep_column(row, column, column);
    let input = deep_required(row, "input", "an input")?;
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
        input,
        output_schema: json("output_schema")?,
        status: parse_request_status(row.try_get("status")?)?,
        created_at: row.try_get("created_at")?,
        expires_at: row.try_get("expires_at")?,
        answered_by: row.try_get("answered_by")?,
        answer: json("answer")?,
        closed_at: row.try_get("closed_at")?,
    })
}

/// Saves a version row, its overview taken from the version before when `new` has none, and
/// returns the overview saved.
async fn insert_version(
    tx: &mut Transaction<'static, Postgres>,
    definition_pk: i64,
    version: i64,
    new: &NewDefinitionVersion,
    saved_seq: i64,
    saved_at: DateTime<Utc>,
) -> Result<Option<String>> {
    let overview = sqlx::query_scalar(
        "INSERT INTO definition_versions (definition_pk, version, source, overview, diagram, \
         description, derived, saved_seq, saved_at) \
         VALUES ($1, $2, $3, COALESCE($4, (SELECT overview FROM definition_versions \
         WHERE definition_pk = $1 AND version = $2 - 1)), $5, $6, $7, $8, $9) \
         RETURNING overview",
    )
    .bind(definition_pk)
    .bind(version)
    .bind(&new.source)
    .bind(&new.overview)
    .bind(&new.diagram)
    .bind(&new.description)
    .bind(Json(&new.derived))
    .bind(saved_seq)
    .bind(saved_at)
    .fetch_one(&mut **tx)
    .await?;
    Ok(overview)
}

/// The status and latest version of a definition, when there is one.
async fn stored_status(
    tx: &mut Transaction<'static, Postgres>,
    playbook_pk: i64,
    key: &DefinitionKey,
) -> Result<Option<(String, i64)>> {
    let row = sqlx::query(
        "SELECT status, latest_version FROM definitions \
         WHERE playbook_pk = $1 AND def_type = $2 AND name = $3",
    )
    .bind(playbook_pk)
    .bind(&key.def_type)
    .bind(&key.name)
    .fetch_optional(&mut **tx)
    .await?;
    row.map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
        .transpose()
}

#[async_trait]
impl Store for PgStore {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    async fn now(&self) -> Result<DateTime<Utc>> {
        Ok(sqlx::query_scalar("SELECT clock_timestamp()")
            .fetch_one(&self.pool)
            .await?)
    }

    async fn check_writable(&self) -> Result<()> {
        // A standby in recovery, or a database set to read-only transactions, takes no writes.
        let writable: bool = sqlx::query_scalar(
            "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'",
        )
        .fetch_one(&self.pool)
        .await?;
        if writable {
            Ok(())
        } else {
            Err(StoreError::Database(sqlx::Error::Protocol(
                "the database takes no writes (read-only or in recovery)".into(),
            )))
        }
    }

    async fn close(&self) {
        self.pool.close().await;
    }

    async fn create_org(&self, id: &str, title: Option<&str>) -> Result<Org> {
        let row = sqlx::query(
            "INSERT INTO orgs (id, title, created_at) VALUES ($1, $2, clock_timestamp()) \
             ON CONFLICT (id) DO NOTHING RETURNING id, title, created_at",
        )
        .bind(id)
        .bind(title)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| StoreError::Conflict(format!("the org {id} exists")))?;
        org_from_row(&row)
    }

    async fn get_org(&self, id: &str) -> Result<Option<Org>> {
        sqlx::query("SELECT id, title, created_at FROM orgs WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(org_from_row)
            .transpose()
    }

    async fn list_orgs(&self) -> Result<Vec<Org>> {
        sqlx::query("SELECT id, title, created_at FROM orgs ORDER BY id")
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(org_from_row)
            .collect()
    }

    async fn create_playbook(&self, org: &str, id: &str, title: Option<&str>) -> Result<Playbook> {
        // FOR KEY SHARE keeps the org from going while the playbook is made.
        let row = sqlx::query(
            "WITH org AS (SELECT id FROM orgs WHERE id = $1 FOR KEY SHARE), \
             made AS (INSERT INTO playbooks (org, id, title, created_at) \
             SELECT org.id, $2, $3, clock_timestamp() FROM org \
             ON CONFLICT (org, id) DO NOTHING RETURNING org, id, title, created_at) \
             SELECT (SELECT count(*) FROM org) AS orgs, made.* FROM (SELECT 1) one \
             LEFT JOIN made ON true",
        )
        .bind(org)
        .bind(id)
        .bind(title)
        .fetch_one(&self.pool)
        .await?;
        let orgs: i64 = row.try_get("orgs")?;
        let made_id: Option<String> = row.try_get("id")?;
        match (orgs, made_id) {
            (0, _) => Err(StoreError::NotFound(format!("org {org}"))),
            (_, None) => Err(StoreError::Conflict(format!(
                "the playbook {org}/{id} exists"
            ))),
            (_, Some(_)) => playbook_from_row(&row),
        }
    }

    async fn get_playbook(&self, playbook: &PlaybookRef) -> Result<Option<Playbook>> {
        sqlx::query("SELECT org, id, title, created_at FROM playbooks WHERE org = $1 AND id = $2")
            .bind(&playbook.org)
            .bind(&playbook.playbook)
            .fetch_optional(&self.pool)
            .await?
            .as_ref()
            .map(playbook_from_row)
            .transpose()
    }

    async fn list_playbooks(&self, org: &str) -> Result<Vec<Playbook>> {
        let playbooks = sqlx::query(
            "SELECT org, id, title, created_at FROM playbooks WHERE org = $1 ORDER BY id",
        )
        .bind(org)
        .fetch_all(&self.pool)
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
        let mut tx = self.pool.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, 1).await?;
        let definition_pk: Option<i64> = sqlx::query_scalar(
            "INSERT INTO definitions (playbook_pk, def_type, name, status, latest_version, \
             created_at, updated_at) VALUES ($1, $2, $3, 'active', 1, $4, $4) \
             ON CONFLICT (playbook_pk, def_type, name) DO NOTHING RETURNING pk",
        )
        .bind(reserved.playbook_pk)
        .bind(&new.key.def_type)
        .bind(&new.key.name)
        .bind(reserved.now)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(definition_pk) = definition_pk else {
            return Err(StoreError::Conflict(format!(
                "a {} definition named {} exists (active or retired)",
                new.key.def_type, new.key.name
            )));
        };
        let event = single(insert_events(&mut tx, playbook, &reserved, vec![event]).await?)?;
        let overview =
            insert_version(&mut tx, definition_pk, 1, &new, event.seq, reserved.now).await?;
        if new.key.def_type == "workflow" {
            let pk = reserved.playbook_pk;
            let name = &new.key.name;
            sync_triggers(&mut tx, pk, name, 1, &new.triggers, event.seq, reserved.now).await?;
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
        let mut tx = self.pool.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, 1).await?;
        let row = sqlx::query(
            "UPDATE definitions SET latest_version = latest_version + 1, updated_at = $5 \
             WHERE playbook_pk = $1 AND def_type = $2 AND name = $3 AND status = 'active' \
             AND latest_version = $4 RETURNING pk, latest_version, created_at",
        )
        .bind(reserved.playbook_pk)
        .bind(&new.key.def_type)
        .bind(&new.key.name)
        .bind(expected_version)
        .bind(reserved.now)
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
        let created_at: DateTime<Utc> = row.try_get("created_at")?;
        let event = single(insert_events(&mut tx, playbook, &reserved, vec![event]).await?)?;
        let overview = insert_version(
            &mut tx,
            definition_pk,
            version,
            &new,
            event.seq,
            reserved.now,
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
                reserved.now,
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
        let mut tx = self.pool.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, 1).await?;
        let retired: Option<i64> = sqlx::query_scalar(
            "UPDATE definitions SET status = 'retired', updated_at = $4, retired_seq = $5 \
             WHERE playbook_pk = $1 AND def_type = $2 AND name = $3 AND status = 'active' \
             RETURNING pk",
        )
        .bind(reserved.playbook_pk)
        .bind(&key.def_type)
        .bind(&key.name)
        .bind(reserved.now)
        .bind(reserved.first_seq)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(definition_pk) = retired else {
            let stored = stored_status(&mut tx, reserved.playbook_pk, key).await?;
            return Err(definition_change_refused(playbook, key, stored, None));
        };
        // "Retiring the workflow stops every trigger."
        if key.def_type == "workflow" {
            sqlx::query("DELETE FROM triggers WHERE playbook_pk = $1 AND workflow = $2")
                .bind(reserved.playbook_pk)
                .bind(&key.name)
                .execute(&mut *tx)
                .await?;
        }
        let event = single(insert_events(&mut tx, playbook, &reserved, vec![event]).await?)?;
        let row = sqlx::query(concat!(
            definition_columns!(),
            " WHERE d.pk = $1 AND v.version = d.latest_version"
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
             WHERE p.org = $1 AND p.id = $2 AND d.def_type = $3 AND d.name = $4 \
             AND v.version = d.latest_version"
        ))
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .bind(&key.def_type)
        .bind(&key.name)
        .fetch_optional(&self.pool)
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
             WHERE p.org = $1 AND p.id = $2 AND d.def_type = $3 AND d.name = $4 \
             AND v.version = $5"
        ))
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .bind(&key.def_type)
        .bind(&key.name)
        .bind(version)
        .fetch_optional(&self.pool)
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
            " WHERE d.playbook_pk = $1 AND ($2::text IS NULL OR d.def_type = $2) \
             AND v.version = d.latest_version ORDER BY d.def_type, d.name"
        ))
        .bind(playbook_pk)
        .bind(def_type)
        .fetch_all(&self.pool)
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
        let mut tx = self.pool.begin().await?;
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
        // One statement per combination of filters, so that each is planned for its own index.
        let sql = match (&filter.run_id, &filter.event_type) {
            (None, None) => concat!(
                event_columns!(),
                " WHERE playbook_pk = $1 AND seq > $2 ORDER BY seq LIMIT $3"
            ),
            (Some(_), None) => concat!(
                event_columns!(),
                " WHERE playbook_pk = $1 AND seq > $2 AND run_id = $4 ORDER BY seq LIMIT $3"
            ),
            (None, Some(_)) => concat!(
                event_columns!(),
                " WHERE playbook_pk = $1 AND seq > $2 AND type = $4 ORDER BY seq LIMIT $3"
            ),
            (Some(_), Some(_)) => concat!(
                event_columns!(),
                " WHERE playbook_pk = $1 AND seq > $2 AND run_id = $4 AND type = $5 \
                 ORDER BY seq LIMIT $3"
            ),
        };
        let mut query = sqlx::query(sql)
            .bind(playbook_pk)
            .bind(filter.after_seq.unwrap_or(0))
            .bind(page_limit(filter));
        // PostgreSQL wants exactly the parameters a statement names.
        if let Some(run_id) = &filter.run_id {
            query = query.bind(run_id);
        }
        if let Some(event_type) = &filter.event_type {
            query = query.bind(event_type);
        }
        query
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(event_from_row)
            .collect()
    }

    async fn get_event(&self, playbook: &PlaybookRef, id: &str) -> Result<Option<Event>> {
        sqlx::query(concat!(
            event_columns!(),
            " WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) \
             AND id = $3"
        ))
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .bind(id)
        .fetch_optional(&self.pool)
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
        let mut tx = self.pool.begin().await?;
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
        let mut tx = self.pool.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let row = sqlx::query(concat!(
            "UPDATE runs SET status = 'started', output = NULL, record = NULL, problem = NULL, \
             ended_at = NULL, attempt = attempt + 1, last_run_seq = GREATEST(last_run_seq, $4), \
             last_event_at = $5, started_at = $5, definition_version = $6 \
             WHERE playbook_pk = $1 AND run_id = $2 AND status <> 'started' AND attempt = $3 \
             RETURNING ",
            run_columns!()
        ))
        .bind(reserved.playbook_pk)
        .bind(run_id)
        .bind(expected_attempt)
        .bind(last_run_seq)
        .bind(reserved.now)
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
        let mut tx = self.pool.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let updated: Option<i64> = sqlx::query_scalar(
            "UPDATE runs SET last_run_seq = GREATEST(last_run_seq, $3), last_event_at = $4 \
             WHERE playbook_pk = $1 AND run_id = $2 AND status = 'started' RETURNING attempt",
        )
        .bind(reserved.playbook_pk)
        .bind(run_id)
        .bind(last_run_seq)
        .bind(reserved.now)
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
        let mut tx = self.pool.begin().await?;
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
            " FROM runs WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) \
             AND run_id = $3"
        ))
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .bind(run_id)
        .fetch_optional(&self.pool)
        .await?
        .as_ref()
        .map(run_from_row)
        .transpose()
    }

    async fn list_runs(&self, playbook: &PlaybookRef, filter: &RunFilter) -> Result<Vec<Run>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        // Invariant: the statement is made of fixed text and numbered placeholders only.
        let sql = list_runs_sql(filter, |n| format!("${n}"));
        // PostgreSQL wants exactly the parameters a statement names.
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
            .fetch_all(&self.pool)
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
        let mut tx = self.pool.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let version: Option<i64> =
            match step.expected_version {
                None => sqlx::query_scalar(
                    "INSERT INTO workflow_states (playbook_pk, run_id, version, state, updated_at) \
                     VALUES ($1, $2, 1, $3, $4) ON CONFLICT (playbook_pk, run_id) DO NOTHING \
                     RETURNING version",
                )
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .bind(Json(&step.state))
                .bind(reserved.now)
                .fetch_optional(&mut *tx)
                .await?,
                Some(expected) => sqlx::query_scalar(
                    "UPDATE workflow_states SET version = version + 1, state = $4, updated_at = $5 \
                     WHERE playbook_pk = $1 AND run_id = $2 AND version = $3 RETURNING version",
                )
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .bind(expected)
                .bind(Json(&step.state))
                .bind(reserved.now)
                .fetch_optional(&mut *tx)
                .await?,
            };
        let Some(version) = version else {
            return Err(StoreError::Conflict(format!(
                "the snapshot of run {run_id} is not at version {:?}: another server took the run over",
                step.expected_version
            )));
        };
        let changed =
            match &step.ending {
                Some(ending) => {
                    sqlx::query_scalar::<_, i64>(
                        "UPDATE runs SET status = $3, output = $4, record = $5, problem = $6, \
                 ended_at = $8, last_run_seq = GREATEST(last_run_seq, $7), last_event_at = $8 \
                 WHERE playbook_pk = $1 AND run_id = $2 AND status = 'started' RETURNING attempt",
                    )
                    .bind(reserved.playbook_pk)
                    .bind(run_id)
                    .bind(ending.status.as_str())
                    .bind(ending.output.as_ref().map(Json))
                    .bind(ending.record.as_ref().map(Json))
                    .bind(ending.problem.as_ref().map(Json))
                    .bind(last_run_seq)
                    .bind(reserved.now)
                    .fetch_optional(&mut *tx)
                    .await?
                }
                None => sqlx::query_scalar::<_, i64>(
                    "UPDATE runs SET last_run_seq = GREATEST(last_run_seq, $3), last_event_at = $4 \
                 WHERE playbook_pk = $1 AND run_id = $2 AND status = 'started' RETURNING attempt",
                )
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .bind(last_run_seq)
                .bind(reserved.now)
                .fetch_optional(&mut *tx)
                .await?,
            };
        if changed.is_none() {
            let stored = stored_run_state(&mut tx, reserved.playbook_pk, run_id).await?;
            return Err(run_change_refused(playbook, run_id, stored, None)?);
        }
        insert_events(&mut tx, playbook, &reserved, events).await?;
        if step.ending.is_some() {
            // An ended run waits for nothing: its timers and pending inputs go, and its parent
            // hears of the ending. The step's own work (cancelling its children) stays.
            sqlx::query("DELETE FROM work WHERE playbook_pk = $1 AND run_id = $2")
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .execute(&mut *tx)
                .await?;
            notify_parent(&mut tx, reserved.playbook_pk, run_id, reserved.now).await?;
        }
        insert_work(
            &mut tx,
            reserved.playbook_pk,
            run_id,
            reserved.now,
            &step.add_work,
        )
        .await?;
        if let Some(id) = step.done_work {
            sqlx::query("DELETE FROM work WHERE id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
        }
        if !step.cancel_work.is_empty() {
            sqlx::query(
                "DELETE FROM work WHERE playbook_pk = $1 AND run_id = $2 AND key = ANY($3)",
            )
            .bind(reserved.playbook_pk)
            .bind(run_id)
            .bind(&step.cancel_work)
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
            "SELECT version, state::text FROM workflow_states WHERE playbook_pk = $1 AND run_id = $2",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .fetch_optional(&self.pool)
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
        let playbook_pk = self.require_playbook(playbook).await?;
        let mut tx = self.pool.begin().await?;
        let now: DateTime<Utc> = sqlx::query_scalar("SELECT clock_timestamp()")
            .fetch_one(&mut *tx)
            .await?;
        insert_work(&mut tx, playbook_pk, run_id, now, &work).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn claim_work(
        &self,
        claimer: &str,
        lease: std::time::Duration,
        limit: u32,
    ) -> Result<Vec<Work>> {
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
        // An input another claim holds locked (SKIP LOCKED passes it) is not among the
        // candidates, and so keeps its run's later inputs back as a lease would.
        let rows = sqlx::query(
            "WITH candidates AS MATERIALIZED (SELECT id, playbook_pk, run_id, due_at, ordered \
             FROM work WHERE due_at <= clock_timestamp() \
             AND (claimed_until IS NULL OR claimed_until <= clock_timestamp()) \
             ORDER BY due_at, id LIMIT $2 FOR UPDATE SKIP LOCKED) \
             UPDATE work SET claimed_until = clock_timestamp() + make_interval(secs => $1 / 1000.0), \
             claimed_by = $3 \
             WHERE id IN (SELECT c.id FROM candidates c WHERE NOT c.ordered OR NOT EXISTS (\
             SELECT 1 FROM work w WHERE w.playbook_pk = c.playbook_pk AND w.run_id = c.run_id \
             AND w.ordered AND (w.due_at, w.id) < (c.due_at, c.id) \
             AND w.id NOT IN (SELECT id FROM candidates) \
             AND NOT COALESCE(w.claimed_by = $3 AND w.claimed_until > clock_timestamp(), false))) \
             RETURNING id, run_id, key, due_at, payload, \
             (SELECT org FROM playbooks WHERE pk = work.playbook_pk), \
             (SELECT id FROM playbooks WHERE pk = work.playbook_pk), ordered",
        )
        .bind(lease_ms as f64)
        .bind(i64::from(limit))
        .bind(claimer)
        .fetch_all(&self.pool)
        .await?;
        let mut claimed = rows
            .iter()
            .map(|row| {
                let payload = deep_required(row, 4, "a work item")?;
                Ok(Work {
                    id: row.try_get(0)?,
                    run_id: row.try_get(1)?,
                    key: row.try_get(2)?,
                    due_at: row.try_get(3)?,
                    payload,
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
        sqlx::query("DELETE FROM work WHERE id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn count_open_calls(&self, playbook: &PlaybookRef, root_run_id: &str) -> Result<i64> {
        let playbook_pk = self.require_playbook(playbook).await?;
        Ok(sqlx::query_scalar(
            "SELECT count(*) FROM runs WHERE playbook_pk = $1 AND root_run_id = $2 \
             AND status = 'started'",
        )
        .bind(playbook_pk)
        .bind(root_run_id)
        .fetch_one(&self.pool)
        .await?)
    }

    async fn next_work_due(&self) -> Result<Option<DateTime<Utc>>> {
        let due: Option<DateTime<Utc>> = sqlx::query_scalar("SELECT min(due_at) FROM work")
            .fetch_one(&self.pool)
            .await?;
        Ok(due)
    }

    async fn receive_run_event(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        event_id: &str,
        event: Value,
        work: NewWork,
    ) -> Result<Option<RunInboxEvent>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        let mut tx = self.pool.begin().await?;
        // The run's row is locked until the commit: receipts to one run are numbered one at a
        // time, and a run that ends meanwhile waits for this one.
        let status: Option<String> = sqlx::query_scalar(
            "SELECT status FROM runs WHERE playbook_pk = $1 AND run_id = $2 FOR UPDATE",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .fetch_optional(&mut *tx)
        .await?;
        if status.as_deref() != Some("started") {
            return Err(run_not_found(playbook, run_id));
        }
        let row = sqlx::query(
            "INSERT INTO run_inbox (playbook_pk, run_id, event_id, seq, event, received_at) \
             SELECT $1, $2, $3, coalesce(max(seq), 0) + 1, $4, clock_timestamp() FROM run_inbox \
             WHERE playbook_pk = $1 AND run_id = $2 \
             ON CONFLICT (playbook_pk, run_id, event_id) DO NOTHING RETURNING seq, received_at",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .bind(event_id)
        .bind(Json(&event))
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let received_at: DateTime<Utc> = row.try_get(1)?;
        insert_work(&mut tx, playbook_pk, run_id, received_at, &[work]).await?;
        tx.commit().await?;
        Ok(Some(RunInboxEvent {
            run_id: run_id.to_owned(),
            event_id: event_id.to_owned(),
            seq: row.try_get(0)?,
            event,
            received_at,
        }))
    }

    async fn list_run_inbox(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Vec<RunInboxEvent>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        let rows = sqlx::query(
            "SELECT event_id, seq, event::text, received_at FROM run_inbox \
             WHERE playbook_pk = $1 AND run_id = $2 ORDER BY seq",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let event: String = row.try_get(2)?;
                Ok(RunInboxEvent {
                    run_id: run_id.to_owned(),
                    event_id: row.try_get(0)?,
                    seq: row.try_get(1)?,
                    event: deep_json(&event, "an event sent to a run")?,
                    received_at: row.try_get(3)?,
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
        let mut tx = self.pool.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let run = insert_run(&mut tx, playbook, &reserved, &new, last_run_seq).await?;
        let row = sqlx::query(concat!(
            "INSERT INTO requests (playbook_pk, request_id, run_id, def_type, name, \
             definition_version, to_whom, message, input, output_schema, status, created_at, \
             expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'open', $11, $12) \
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
        .bind(Json(&request.input))
        .bind(request.output_schema.as_ref().map(Json))
        .bind(reserved.now)
        .bind(request.expires_at)
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
            reserved.now,
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
        let mut tx = self.pool.begin().await?;
        // The playbook's seqs first, as every change takes them: its row is the lock.
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let playbook_pk = reserved.playbook_pk;
        let row = sqlx::query(concat!(
            "UPDATE requests SET status = $3, answered_by = $4, answer = $5, closed_at = $6 \
             WHERE playbook_pk = $1 AND request_id = $2 AND status = 'open' RETURNING ",
            request_columns!()
        ))
        .bind(playbook_pk)
        .bind(request_id)
        .bind(close.status.as_str())
        .bind(&close.answered_by)
        .bind(close.answer.as_ref().map(Json))
        .bind(reserved.now)
        .fetch_optional(&mut *tx)
        .await?;
        let Some(row) = row else {
            let stored: Option<String> = sqlx::query_scalar(
                "SELECT status FROM requests WHERE playbook_pk = $1 AND request_id = $2",
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
            sqlx::query("DELETE FROM work WHERE playbook_pk = $1 AND run_id = $2 AND key = $3")
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
        let sql = list_requests_sql(filter, |n| format!("${n}"));
        let mut query = sqlx::query(AssertSqlSafe(sql)).bind(playbook_pk);
        if let Some(status) = filter.status {
            query = query.bind(status.as_str());
        }
        if let Some(after) = &filter.after_request_id {
            query = query.bind(after);
        }
        query
            .bind(requests_page_limit(filter))
            .fetch_all(&self.pool)
            .await?
            .iter()
            .map(request_from_row)
            .collect()
    }
    async fn list_triggers(&self) -> Result<Vec<Trigger>> {
        sqlx::query(
            "SELECT p.org, p.id, t.workflow, t.kind, t.spec::text, t.version, t.since_seq, \
             t.saved_at, t.cursor_seq, t.due_at, t.running_run_id, t.earlier::text FROM triggers t \
             JOIN playbooks p ON p.pk = t.playbook_pk ORDER BY t.playbook_pk, t.workflow, t.kind",
        )
        .fetch_all(&self.pool)
        .await?
        .iter()
        .map(|row| {
            let spec: String = row.try_get(4)?;
            Ok(Trigger {
                playbook: PlaybookRef::new(
                    row.try_get::<String, _>(0)?,
                    row.try_get::<String, _>(1)?,
                ),
                workflow: row.try_get(2)?,
                kind: row.try_get(3)?,
                spec: deep_json(&spec, "a trigger")?,
                version: row.try_get(5)?,
                since_seq: row.try_get(6)?,
                saved_at: row.try_get(7)?,
                cursor_seq: row.try_get(8)?,
                due_at: row.try_get(9)?,
                running_run_id: row.try_get(10)?,
                earlier: match row.try_get::<Option<String>, _>(11)? {
                    Some(text) => earlier_filters(&text)?,
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
        let mut tx = self.pool.begin().await?;
        let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
        // The trigger's row stays locked to the commit: two servers queue one after the other.
        let moved = sqlx::query(
            "UPDATE triggers SET cursor_seq = GREATEST(cursor_seq, $4) WHERE playbook_pk = $1 \
             AND workflow = $2 AND kind = 'event' AND since_seq = $3",
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
            "SELECT count(*) FROM trigger_starts WHERE playbook_pk = $1 AND workflow = $2 \
             AND taken_at IS NULL",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .fetch_one(&mut *tx)
        .await?;
        for start in starts {
            let known: bool = sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE playbook_pk = $1 AND run_id = $2) \
                 OR EXISTS (SELECT 1 FROM trigger_starts WHERE playbook_pk = $1 AND run_id = $2)",
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
            sqlx::query(
                "INSERT INTO trigger_starts (playbook_pk, run_id, workflow, event_seq, start, \
                 queued_at) VALUES ($1, $2, $3, $4, $5, clock_timestamp()) \
                 ON CONFLICT (playbook_pk, run_id) DO NOTHING",
            )
            .bind(playbook_pk)
            .bind(&start.run_id)
            .bind(workflow)
            .bind(start.event_seq)
            .bind(Json(&start.start))
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
        let mut tx = self.pool.begin().await?;
        let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
        // Servers take a workflow's starts one at a time, so its minute is counted once.
        sqlx::query(
            "SELECT 1 FROM triggers WHERE playbook_pk = $1 AND workflow = $2 AND kind = 'event' \
             FOR UPDATE",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .fetch_optional(&mut *tx)
        .await?;
        sqlx::query(
            "DELETE FROM trigger_starts s WHERE s.playbook_pk = $1 AND s.workflow = $2 \
             AND s.taken_at < clock_timestamp() - interval '120 seconds' \
             AND EXISTS (SELECT 1 FROM runs r WHERE r.playbook_pk = $1 AND r.run_id = s.run_id)",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .execute(&mut *tx)
        .await?;
        let recent: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM trigger_starts WHERE playbook_pk = $1 AND workflow = $2 \
             AND taken_at >= clock_timestamp() - interval '60 seconds'",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .fetch_one(&mut *tx)
        .await?;
        let room = (per_minute - recent).max(0);
        let rows = sqlx::query(
            "UPDATE trigger_starts SET taken_at = clock_timestamp() \
             WHERE playbook_pk = $1 AND run_id IN (\
             (SELECT run_id FROM trigger_starts WHERE playbook_pk = $1 AND workflow = $2 \
             AND taken_at IS NULL ORDER BY event_seq LIMIT $3) \
             UNION SELECT s.run_id FROM trigger_starts s WHERE s.playbook_pk = $1 \
             AND s.workflow = $2 AND s.taken_at < clock_timestamp() - make_interval(secs => $4) \
             AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.playbook_pk = $1 \
             AND r.run_id = s.run_id)) \
             RETURNING run_id, workflow, event_seq, start::text, attempts",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .bind(room)
        .bind(TRIGGER_START_LEASE_SECONDS as f64)
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
                    start: deep_json(&start, "a trigger's start")?,
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
        let sql = match outcome {
            StartOutcome::Started => return Ok(()),
            StartOutcome::Again => {
                "UPDATE trigger_starts SET taken_at = NULL, attempts = attempts + 1 \
                 WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) \
                 AND run_id = $3"
            }
            StartOutcome::Dropped => {
                "DELETE FROM trigger_starts WHERE playbook_pk = \
                 (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) AND run_id = $3"
            }
        };
        sqlx::query(sql)
            .bind(&playbook.org)
            .bind(&playbook.playbook)
            .bind(run_id)
            .execute(&self.pool)
            .await?;
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
        let moved = sqlx::query(
            "UPDATE triggers SET due_at = $7, running_run_id = coalesce($8, running_run_id) \
             WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) \
             AND workflow = $3 AND kind = $4 AND since_seq = $5 \
             AND due_at IS NOT DISTINCT FROM $6",
        )
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .bind(workflow)
        .bind(kind)
        .bind(since_seq)
        .bind(expected_due_at)
        .bind(stored_time(due_at))
        .bind(running_run_id)
        .execute(&self.pool)
        .await?;
        Ok(moved.rows_affected() == 1)
    }

    async fn list_listeners(&self) -> Result<Vec<Listener>> {
        sqlx::query(
            "SELECT p.org, p.id, l.run_id, l.reference, l.workflow, l.version, l.filters::text, \
             l.cursor_seq FROM listeners l JOIN playbooks p ON p.pk = l.playbook_pk \
             ORDER BY l.playbook_pk, l.run_id, l.reference",
        )
        .fetch_all(&self.pool)
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
                filters: deep_json(&filters, "a listener's filters")?,
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
        sqlx::query(
            "UPDATE listeners SET cursor_seq = GREATEST(cursor_seq, $5) WHERE playbook_pk = \
             (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) AND run_id = $3 \
             AND reference = $4",
        )
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .bind(run_id)
        .bind(reference)
        .bind(cursor_seq)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

/// A child's ending reaches its parent: the work it was started with, added to the parent
/// run in the ending's transaction.
async fn notify_parent(
    tx: &mut Transaction<'static, Postgres>,
    playbook_pk: i64,
    run_id: &str,
    now: DateTime<Utc>,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO work (playbook_pk, run_id, key, due_at, payload, ordered) \
         SELECT playbook_pk, parent_run_id, ending_work_key, $3, ending_work_payload, \
         ending_work_ordered FROM runs WHERE playbook_pk = $1 AND run_id = $2 \
         AND parent_run_id IS NOT NULL AND ending_work_key IS NOT NULL \
         ON CONFLICT (playbook_pk, run_id, key) DO NOTHING",
    )
    .bind(playbook_pk)
    .bind(run_id)
    .bind(now)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Inserts work items; one whose key the run has already is kept as it is.
async fn insert_work(
    tx: &mut Transaction<'static, Postgres>,
    playbook_pk: i64,
    run_id: &str,
    now: DateTime<Utc>,
    work: &[NewWork],
) -> Result<()> {
    for item in work {
        sqlx::query(
            "INSERT INTO work (playbook_pk, run_id, key, due_at, payload, ordered) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (playbook_pk, run_id, key) DO NOTHING",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .bind(&item.key)
        .bind(item.due_at.unwrap_or(now))
        .bind(Json(&item.payload))
        .bind(item.ordered)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// A step's listening tasks: those it ends or its run's ending stop; those it begins hear
/// the playbook's events recorded after `last_seq`, the step's last, unless the playbook has
/// [`LISTENERS_MAX`] listening already.
async fn listen_in(
    tx: &mut Transaction<'static, Postgres>,
    playbook_pk: i64,
    run_id: &str,
    step: &WorkflowStep,
    last_seq: i64,
) -> Result<()> {
    if step.ending.is_some() {
        sqlx::query("DELETE FROM listeners WHERE playbook_pk = $1 AND run_id = $2")
            .bind(playbook_pk)
            .bind(run_id)
            .execute(&mut **tx)
            .await?;
        return Ok(());
    }
    if !step.unlisten.is_empty() {
        sqlx::query(
            "DELETE FROM listeners WHERE playbook_pk = $1 AND run_id = $2 AND reference = ANY($3)",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .bind(&step.unlisten)
        .execute(&mut **tx)
        .await?;
    }
    if !step.listen.is_empty() {
        // Steps that begin listening in one playbook count its listeners one after another,
        // so two committing at once cannot both take the last place.
        sqlx::query("SELECT pg_advisory_xact_lock($1, ($2 % 2147483647)::int)")
            .bind(LISTENERS_LOCK_CLASS)
            .bind(playbook_pk)
            .execute(&mut **tx)
            .await?;
    }
    for NewListener { reference, filters } in &step.listen {
        sqlx::query(
            "INSERT INTO listeners (playbook_pk, run_id, reference, workflow, version, filters, \
             cursor_seq) SELECT playbook_pk, run_id, $3, name, definition_version, $4, $5 \
             FROM runs WHERE playbook_pk = $1 AND run_id = $2 \
             AND (SELECT count(*) FROM listeners WHERE playbook_pk = $1) < $6 \
             ON CONFLICT (playbook_pk, run_id, reference) DO NOTHING",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .bind(reference)
        .bind(Json(filters))
        .bind(last_seq)
        .bind(LISTENERS_MAX)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

/// The first key of the advisory lock a step takes to count a playbook's listeners (the second
/// is the playbook's key, folded into `int4`): [`LISTENERS_MAX`] holds across servers.
const LISTENERS_LOCK_CLASS: i32 = 4_096;

/// The playbook's key, inside a change.
async fn playbook_pk_in(
    tx: &mut Transaction<'static, Postgres>,
    playbook: &PlaybookRef,
) -> Result<i64> {
    sqlx::query_scalar("SELECT pk FROM playbooks WHERE org = $1 AND id = $2")
        .bind(&playbook.org)
        .bind(&playbook.playbook)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| playbook_not_found(playbook))
}

/// A workflow's triggers after a save of version `version` recorded at `seq`: one left as it
/// was keeps its row (cursor, due time, running run) and starts the new version; one changed
/// or added starts from the save; one removed stops. A workflow that had none and has some
/// counts against [`TRIGGERED_WORKFLOWS_MAX`]; saves of triggers take the playbook's row lock
/// (through its seq), so two saves cannot both take the last place.
/// A trigger's earlier filters as kept.
fn earlier_filters(text: &str) -> Result<Vec<EarlierFilters>> {
    serde_json::from_value(deep_json(text, "a trigger's earlier filters")?)
        .map_err(|error| StoreError::Corrupt(format!("a trigger's earlier filters: {error}")))
}

async fn sync_triggers(
    tx: &mut Transaction<'static, Postgres>,
    playbook_pk: i64,
    workflow: &str,
    version: i64,
    triggers: &[NewTrigger],
    seq: i64,
    now: DateTime<Utc>,
) -> Result<()> {
    let kept: Vec<(String, String, i64, Option<String>)> = sqlx::query_as(
        "SELECT kind, spec::text, cursor_seq, earlier::text FROM triggers \
         WHERE playbook_pk = $1 AND workflow = $2",
    )
    .bind(playbook_pk)
    .bind(workflow)
    .fetch_all(&mut **tx)
    .await?;
    if kept.is_empty() && !triggers.is_empty() {
        let workflows: i64 = sqlx::query_scalar(
            "SELECT count(DISTINCT workflow) FROM triggers WHERE playbook_pk = $1",
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
                "DELETE FROM triggers WHERE playbook_pk = $1 AND workflow = $2 AND kind = $3",
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
                "UPDATE triggers SET version = $4 \
                 WHERE playbook_pk = $1 AND workflow = $2 AND kind = $3",
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
                    Some(text) => earlier_filters(text)?,
                    None => Vec::new(),
                };
                let spec: Value = deep_json(spec, "a trigger")?;
                let earlier = earlier_after_change(earlier, &spec, *cursor, seq);
                let cursor = if earlier.is_empty() { seq - 1 } else { *cursor };
                (cursor, earlier)
            }
            _ => (seq - 1, Vec::new()),
        };
        let earlier = (!earlier.is_empty()).then(|| Json(earlier));
        sqlx::query(
            "INSERT INTO triggers (playbook_pk, workflow, kind, spec, version, since_seq, \
             saved_at, cursor_seq, earlier) VALUES ($1, $2, $3, $5, $4, $6, $7, $8, $9) \
             ON CONFLICT (playbook_pk, workflow, kind) DO UPDATE SET spec = excluded.spec, \
             version = excluded.version, since_seq = excluded.since_seq, \
             saved_at = excluded.saved_at, cursor_seq = excluded.cursor_seq, due_at = NULL, \
             earlier = excluded.earlier",
        )
        .bind(playbook_pk)
        .bind(workflow)
        .bind(&trigger.kind)
        .bind(version)
        .bind(Json(&trigger.spec))
        .bind(seq)
        .bind(now)
        .bind(cursor)
        .bind(earlier)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_isolated_schema_names_are_read_as_such() {
        assert_eq!(
            isolated_schema_time("t_1700000000_0123456789abcdef"),
            Some(1_700_000_000)
        );
        assert_eq!(isolated_schema_time("t_1700000000_0123"), None);
        assert_eq!(isolated_schema_time("t_x_0123456789abcdef"), None);
        assert_eq!(isolated_schema_time("public"), None);
        assert_eq!(isolated_schema_time("t_1_0123456789abcdeg"), None);
    }
}
