//! The store on PostgreSQL, shared by several servers. The database's clock is
//! `clock_timestamp()`. A playbook's `seq`s are taken under its row's lock, held to the commit,
//! so appends to one playbook commit in `seq` order and a follower never finds an earlier `seq`
//! after a later one. Rows a change decides by are locked (`FOR UPDATE`) to its commit; times
//! are `timestamptz`, JSON is `jsonb`.

use std::hash::{BuildHasher, Hasher};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use chrono::{DateTime, TimeZone, Utc};
use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions, PgRow};
use sqlx::types::Json;
use sqlx::{AssertSqlSafe, Postgres, Row, Transaction};

use crate::dialect::{Dialect, Engine, StoredTime};
use crate::shared::{deep_json, migrations};
use crate::sql::postgres_changes::{WholeRuns, bind_events, whole_run_statement};
use crate::sql::quiet::Quiet;
use crate::sql::{KeptDefinitions, Reserved, SqlStore};
use crate::{NewEvent, Result, StoreError};

/// How many connections one server keeps to the database.
const CONNECTIONS_MAX: u32 = 10;

/// Schemas that `open_postgres_isolated` made longer ago than this are dropped when it makes a
/// new one: tests leave theirs behind, and a test runs for far less.
const ISOLATED_SCHEMA_AGE_MAX_S: u64 = 24 * 60 * 60;

/// The prefix of the schemas `open_postgres_isolated` makes: `t_<unix seconds>_<16 hex>`.
const ISOLATED_SCHEMA_PREFIX: &str = "t_";

/// The first key of the advisory lock a step takes to count a playbook's listeners (the second
/// is the playbook's key, folded into `int4`): [`crate::LISTENERS_MAX`] holds across servers.
const LISTENERS_LOCK_CLASS: i32 = 4_096;

impl Dialect for Postgres {
    type Time = DateTime<Utc>;

    const ENGINE: Engine = Engine::Postgres;

    /// A `json`/`jsonb` column read as raw text (sqlx's own `Json` decode keeps serde_json's
    /// limit), which serde_json skips over without recursing, then parsed by [`deep_json`].
    fn json(row: &PgRow, column: &str, what: &str) -> Result<Option<Value>> {
        let raw: Option<Json<Box<sqlx::types::JsonRawValue>>> = row.try_get(column)?;
        raw.map(|Json(raw)| deep_json(raw.get(), what)).transpose()
    }

    fn kept_time(time: DateTime<Utc>) -> DateTime<Utc> {
        stored_time(time)
    }

    async fn lock_listeners(
        tx: &mut Transaction<'static, Postgres>,
        playbook_pk: i64,
    ) -> Result<()> {
        // The listeners' count holds across servers: one step at a time counts a playbook's.
        sqlx::query("SELECT pg_advisory_xact_lock($1, ($2 % 2147483647)::int)")
            .bind(LISTENERS_LOCK_CLASS)
            .bind(playbook_pk)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }

    /// Inserts the events under seqs from `reserved.first_seq`, in one statement over arrays.
    async fn insert_events(
        tx: &mut Transaction<'static, Postgres>,
        reserved: &Reserved<Postgres>,
        events: &[NewEvent],
    ) -> Result<(), sqlx::Error> {
        let query = sqlx::query(
            "INSERT INTO events (playbook_pk, seq, id, type, source, subject, time, datacontenttype, \
             data, extensions, run_id, run_seq, recorded_at) \
             SELECT $1, $2 + t.ord - 1, t.id, t.type, t.source, t.subject, t.time, \
             t.datacontenttype, t.data, t.extensions, t.run_id, t.run_seq, $3 \
             FROM UNNEST($4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], \
             $9::text[], $10::jsonb[], $11::jsonb[], $12::text[], $13::int8[]) WITH ORDINALITY \
             AS t(id, type, source, subject, time, datacontenttype, data, extensions, run_id, \
             run_seq, ord) ORDER BY t.ord",
        )
        .bind(reserved.playbook_pk)
        .bind(reserved.first_seq)
        .bind(reserved.now.at);
        let events: Vec<&NewEvent> = events.iter().collect();
        bind_events(query, &events).execute(&mut **tx).await?;
        Ok(())
    }

    async fn check_writable(store: &SqlStore<Postgres>) -> Result<()> {
        // A standby in recovery, or a database set to read-only transactions, takes no writes.
        let writable: bool = sqlx::query_scalar(
            "SELECT NOT pg_is_in_recovery() AND current_setting('transaction_read_only') = 'off'",
        )
        .fetch_one(&store.reader)
        .await?;
        if writable {
            Ok(())
        } else {
            Err(StoreError::Database(sqlx::Error::Protocol(
                "the database takes no writes (read-only or in recovery)".into(),
            )))
        }
    }
}

/// A time as kept: `timestamptz`, which sqlx reads and writes as it is.
impl StoredTime for DateTime<Utc> {
    fn from_time(time: DateTime<Utc>) -> Self {
        time
    }

    fn to_time(self) -> Result<DateTime<Utc>> {
        Ok(self)
    }
}

/// Opens the PostgreSQL store a `postgres:` URL names (see [`crate::open`]).
pub(crate) async fn open(url: &str) -> Result<SqlStore<Postgres>> {
    open_with(connect_options(url)?).await
}

async fn open_with(options: PgConnectOptions) -> Result<SqlStore<Postgres>> {
    let pool = PgPoolOptions::new()
        .max_connections(CONNECTIONS_MAX)
        .connect_with(options.clone())
        .await?;
    // sqlx's migrator holds an advisory lock while it runs: servers starting together
    // migrate once.
    migrations!("postgres").run(&pool).await?;
    let quiet = Arc::new(Quiet::new(pool.clone(), options));
    tokio::spawn(warm_pool(pool.clone(), quiet.clone()));
    tracing::info!("the PostgreSQL store is open");
    Ok(SqlStore {
        whole_runs: Some(WholeRuns::start(pool.clone())),
        quiet,
        writer: pool.clone(),
        reader: pool,
        _file_lock: None,
        raw: None,
        // Other servers change definitions on the same database: what is kept is checked.
        kept: KeptDefinitions::Stamped(Default::default()),
    })
}

/// Opens the connections the pool keeps and prepares on each the statement every run request
/// makes (the whole-run statement), then the store's own connections for its hottest reads
/// (`quiet`), in the background of a store that is already serving.
///
/// Why: a connection's first use of a statement costs PostgreSQL a parse and a plan, and its
/// first read of each table and index the loading of their descriptions into the backend's
/// caches; the first burst of concurrent runs after a start opened the pool's connections and
/// met all of that at once, and ran at about 0.8 of the next burst. In the background, because
/// a server that waits for ten connections before it listens starts late behind a slow link.
/// Best effort: a statement not prepared here is prepared on first use, as before; the pool
/// closes connections idle for long (sqlx's idle timeout), and those it opens again warm as
/// they are used.
async fn warm_pool(pool: PgPool, quiet: Arc<Quiet<Postgres>>) {
    use sqlx::{Executor, SqlSafeStr};
    let mut held = Vec::new();
    for _ in 0..CONNECTIONS_MAX {
        match pool.try_acquire() {
            Some(connection) => held.push(connection),
            None if pool.size() < CONNECTIONS_MAX => match pool.acquire().await {
                Ok(connection) => held.push(connection),
                Err(error) => {
                    tracing::debug!(%error, "the pool was not warmed whole");
                    break;
                }
            },
            // Every connection is in use: the store is warming itself.
            None => break,
        }
    }
    for connection in &mut held {
        if let Err(error) = connection
            .prepare(AssertSqlSafe(whole_run_statement()).into_sql_str())
            .await
        {
            tracing::debug!(%error, "a statement was not prepared ahead");
        }
    }
    drop(held);
    quiet.warm().await;
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
    Ok(Arc::new(open_isolated(url).await?))
}

async fn open_isolated(url: &str) -> Result<SqlStore<Postgres>> {
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
    open_with(options.options([("search_path", schema.as_str())])).await
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    /// A store in a schema of its own on the database `AUTO_TEST_POSTGRES` names; `None`, said
    /// so, without it.
    async fn isolated() -> Option<SqlStore<Postgres>> {
        let Ok(url) = std::env::var("AUTO_TEST_POSTGRES") else {
            eprintln!("skipped: AUTO_TEST_POSTGRES holds no database URL");
            return None;
        };
        Some(open_isolated(&url).await.unwrap())
    }

    /// Two stores on one schema: two servers of one database.
    async fn isolated_pair() -> Option<(SqlStore<Postgres>, SqlStore<Postgres>)> {
        let first = isolated().await?;
        let schema: String = sqlx::query_scalar("SELECT current_schema()")
            .fetch_one(&first.reader)
            .await
            .unwrap();
        let url = std::env::var("AUTO_TEST_POSTGRES").ok()?;
        let options = connect_options(&url).unwrap();
        let second = open_with(options.options([("search_path", schema.as_str())]))
            .await
            .unwrap();
        Some((first, second))
    }

    async fn latest(
        store: &SqlStore<Postgres>,
        playbook: &crate::PlaybookRef,
        key: &crate::DefinitionKey,
    ) -> crate::DefinitionVersion {
        use crate::Store;
        store.get_definition(playbook, key).await.unwrap().unwrap()
    }

    /// A server gives out the version of a definition it read before only while it is still
    /// the latest: another server's save, retirement, and deletion and making again of the
    /// same name are each read at once, and a read of what did not change is the same.
    #[tokio::test]
    async fn a_definition_kept_is_read_again_once_another_server_changed_it() {
        use crate::{
            DefinitionKey, DefinitionStatus, NewDefinitionVersion, NewEvent, PlaybookRef, Store,
        };
        let Some((reader, writer)) = isolated_pair().await else {
            return;
        };
        let playbook = PlaybookRef::new("acme", "support");
        writer.create_org("acme", None).await.unwrap();
        writer
            .create_playbook("acme", "support", None)
            .await
            .unwrap();
        let key = DefinitionKey::new("computation", "add-one");
        let saved = |source: &str| NewDefinitionVersion {
            key: key.clone(),
            source: source.into(),
            overview: None,
            diagram: "none".into(),
            description: None,
            derived: serde_json::json!({ "source": source }),
            triggers: Vec::new(),
        };
        let event = |id: &str| NewEvent::new(id, "definition_saved", "/test");
        assert_eq!(reader.get_definition(&playbook, &key).await.unwrap(), None);
        writer
            .create_definition(&playbook, saved("one"), event("e1"))
            .await
            .unwrap();
        let first = latest(&reader, &playbook, &key).await;
        assert_eq!((first.version, first.source.as_str()), (1, "one"));
        assert_eq!(
            latest(&reader, &playbook, &key).await,
            first,
            "kept, and the same"
        );
        writer
            .update_definition(&playbook, 1, saved("two"), event("e2"))
            .await
            .unwrap();
        let second = latest(&reader, &playbook, &key).await;
        assert_eq!((second.version, second.source.as_str()), (2, "two"));
        assert_eq!(second, latest(&writer, &playbook, &key).await);
        writer
            .retire_definition(&playbook, &key, event("e3"))
            .await
            .unwrap();
        assert_eq!(
            latest(&reader, &playbook, &key).await.status,
            DefinitionStatus::Retired
        );
        writer.delete_playbook(&playbook, true).await.unwrap();
        assert!(
            reader.get_definition(&playbook, &key).await.is_err()
                || reader
                    .get_definition(&playbook, &key)
                    .await
                    .unwrap()
                    .is_none()
        );
        writer
            .create_playbook("acme", "support", None)
            .await
            .unwrap();
        writer
            .create_definition(&playbook, saved("again"), event("e4"))
            .await
            .unwrap();
        writer
            .update_definition(&playbook, 1, saved("again, twice"), event("e5"))
            .await
            .unwrap();
        let made_again = latest(&reader, &playbook, &key).await;
        assert_eq!(
            (
                made_again.version,
                made_again.status,
                made_again.source.as_str()
            ),
            (2, DefinitionStatus::Active, "again, twice")
        );
        assert_eq!(made_again, latest(&writer, &playbook, &key).await);
    }

    /// A run's own source and an unstated time are kept as NULL and read back whole; any
    /// other source is kept as it is (migration 0015).
    #[tokio::test]
    async fn a_runs_events_are_kept_lean() {
        use crate::{EventFilter, PlaybookRef, Store};
        let Some(store) = isolated().await else {
            return;
        };
        store.create_org("acme", None).await.unwrap();
        store
            .create_playbook("acme", "support", None)
            .await
            .unwrap();
        let playbook = PlaybookRef::new("acme", "support");
        let recorded =
            crate::shared::start_with_two_events(&store, &playbook, "r1", ["e1", "e2"]).await;
        let kept: Vec<(Option<String>, Option<DateTime<Utc>>)> =
            sqlx::query_as("SELECT source, time FROM events ORDER BY seq")
                .fetch_all(&store.reader)
                .await
                .unwrap();
        assert_eq!(kept, [(None, None), (Some("/elsewhere".to_owned()), None)]);
        let read = store
            .list_events(&playbook, &EventFilter::default())
            .await
            .unwrap();
        assert_eq!(read, recorded);
        assert_eq!(read[0].source, "/runs/r1");
        assert_eq!(read[0].time, read[0].recorded_at);
    }

    /// A store opened on PostgreSQL opens its pool's connections after it opened, without
    /// waiting for them, and prepares the whole-run statement on each, then opens the store's
    /// own connections: moments later every connection is open, the pool's holding it.
    #[tokio::test]
    async fn the_pool_opens_and_prepares_in_the_background() {
        let Some(store) = isolated().await else {
            return;
        };
        let pool = &store.writer;
        let deadline = Instant::now() + Duration::from_secs(20);
        while pool.size() < CONNECTIONS_MAX || pool.num_idle() < CONNECTIONS_MAX as usize {
            assert!(
                Instant::now() < deadline,
                "{} connections, {} idle",
                pool.size(),
                pool.num_idle()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let mut held = Vec::new();
        for _ in 0..CONNECTIONS_MAX {
            held.push(pool.acquire().await.unwrap());
        }
        for connection in &mut held {
            let prepared: Vec<String> =
                sqlx::query_scalar("SELECT statement FROM pg_prepared_statements")
                    .fetch_all(&mut **connection)
                    .await
                    .unwrap();
            assert!(
                prepared.iter().any(|text| text == whole_run_statement()),
                "the whole-run statement is not prepared"
            );
        }
        // Then the store's own connections for its hottest reads.
        while store.quiet.idle_count() < crate::sql::quiet::QUIET_CONNECTIONS_MAX {
            assert!(
                Instant::now() < deadline,
                "{} of the store's own connections",
                store.quiet.idle_count()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

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
