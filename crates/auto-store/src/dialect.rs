//! What a database brings to the one store ([`crate::sql::SqlStore`]): the few statements and
//! value forms that differ between SQLite and PostgreSQL, behind the [`Dialect`] trait, and the
//! typed statements and rows the shared transactions are written with.
//!
//! The shared code names `D: Dialect` and nothing else: every Rust type it binds or reads is
//! listed once, among `Dialect`'s supertraits ([`Bind`], [`Read`]), so no function repeats
//! sqlx's bounds. A parameter is encoded as it is bound, so it may borrow.

use std::future::Future;

use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::query::Query;
use sqlx::types::Json;
use sqlx::{
    AssertSqlSafe, ColumnIndex, Database, Decode, Encode, Executor, IntoArguments, Pool, Row,
    Transaction, Type,
};

use crate::sql::{Reserved, SqlStore};
use crate::{NewEvent, PlaybookRef, Result};

/// A database the store runs on. Its SQL is the shared SQL but for the [`Engine`]'s few
/// fragments, and what is here: how times and JSON are kept, how a change begins, the batch
/// insert of events, and the checks and locks of its own.
pub(crate) trait Dialect:
    Database<Arguments: IntoArguments<Self>, Row: Columns, Connection: OnConnection<Self>>
    + for<'q> Bind<'q, i64>
    + for<'q> Bind<'q, Option<i64>>
    + for<'q> Bind<'q, bool>
    + for<'q> Bind<'q, f64>
    + for<'q> Bind<'q, &'q str>
    + for<'q> Bind<'q, Option<&'q str>>
    + for<'q> Bind<'q, Json<&'q Value>>
    + for<'q> Bind<'q, Option<Json<&'q Value>>>
    + for<'q> Bind<'q, &'q [u8]>
    + for<'q> Bind<'q, Option<&'q [u8]>>
    + Read<i64>
    + Read<Option<i64>>
    + Read<bool>
    + Read<String>
    + Read<Option<String>>
    + Read<Vec<u8>>
{
    /// A time as the database keeps it: text on SQLite, `timestamptz` on PostgreSQL.
    type Time: StoredTime
        + Type<Self>
        + for<'e> Encode<'e, Self>
        + for<'r> Decode<'r, Self>
        + Clone
        + Send
        + Sync
        + 'static;

    /// Which database this is.
    const ENGINE: Engine;

    /// What [`crate::Store::kind`] says.
    const KIND: &'static str = Self::ENGINE.kind();

    /// The database's clock, as an SQL expression of type [`Dialect::Time`].
    const NOW: &'static str = Self::ENGINE.now();

    /// The function that returns the greater of two values.
    const GREATEST: &'static str = Self::ENGINE.greatest();

    /// What a `SELECT` that reads a row a change goes on to decide by ends with, so that the
    /// row stays as read until the commit; empty where the database needs nothing.
    const FOR_UPDATE: &'static str = Self::ENGINE.for_update();

    /// What a `SELECT` of an org ends with, so that the org stays while a playbook is made in
    /// it; empty where the database needs nothing.
    const FOR_KEY_SHARE: &'static str = Self::ENGINE.for_key_share();

    /// What the claim's choice of work ends with, so that claimers at once pass each other's
    /// items by; empty where the database needs nothing.
    const SKIP_LOCKED: &'static str = Self::ENGINE.skip_locked();

    /// The database's time `lease_ms` (the statement's parameter `$1`, a float) from now.
    const LEASE_UNTIL: &'static str = Self::ENGINE.lease_until();

    /// A run's `problem.reason`, as text (null for a run without a problem).
    const PROBLEM_REASON: &'static str = Self::ENGINE.problem_reason();

    /// A JSON column, read without serde_json's limit of 128 levels (see
    /// [`crate::shared::deep_json`]).
    fn json(row: &Self::Row, column: &str, what: &str) -> Result<Option<Value>>;

    /// Begins a change on the pool that writes.
    fn begin(pool: &Pool<Self>) -> impl Future<Output = Result<Transaction<'static, Self>>> + Send {
        async { Ok(pool.begin().await?) }
    }

    /// Inserts a change's events under the seqs it reserved, as the database does it fastest.
    /// The caller turns a failure into the store's error.
    fn insert_events(
        tx: &mut Transaction<'static, Self>,
        reserved: &Reserved<Self>,
        events: &[NewEvent],
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send;

    /// An event's time as it reads back: as given, unless the database keeps less of it.
    fn kept_time(time: DateTime<Utc>) -> DateTime<Utc> {
        time
    }

    /// The database's clock read without asking the database, where its clock is this
    /// machine's and reads the same: `None` where it must be asked.
    fn local_now() -> Option<DateTime<Utc>> {
        None
    }

    /// Serializes the steps that begin listening in one playbook, where the database does not
    /// already: nothing by default.
    fn lock_listeners(
        tx: &mut Transaction<'static, Self>,
        playbook_pk: i64,
    ) -> impl Future<Output = Result<()>> + Send {
        let _ = (tx, playbook_pk);
        async { Ok(()) }
    }

    /// What [`crate::Store::check_writable`] does on this database.
    fn check_writable(store: &SqlStore<Self>) -> impl Future<Output = Result<()>> + Send;
}

/// The databases the store runs on, and the fragments of SQL that differ between them, side
/// by side.
#[derive(Clone, Copy)]
pub(crate) enum Engine {
    /// One writer, which holds the whole database from `BEGIN IMMEDIATE`: no row locks. Times
    /// are RFC 3339 text in UTC with milliseconds, so that text order is time order.
    Sqlite,
    /// Several servers: rows a change decides by are locked to its commit.
    Postgres,
}

impl Engine {
    const fn kind(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }

    const fn now(self) -> &'static str {
        match self {
            Engine::Sqlite => "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
            Engine::Postgres => "clock_timestamp()",
        }
    }

    const fn greatest(self) -> &'static str {
        match self {
            Engine::Sqlite => "max",
            Engine::Postgres => "GREATEST",
        }
    }

    const fn for_update(self) -> &'static str {
        match self {
            Engine::Sqlite => "",
            Engine::Postgres => " FOR UPDATE",
        }
    }

    const fn for_key_share(self) -> &'static str {
        match self {
            Engine::Sqlite => "",
            Engine::Postgres => " FOR KEY SHARE",
        }
    }

    const fn skip_locked(self) -> &'static str {
        match self {
            Engine::Sqlite => "",
            Engine::Postgres => " FOR UPDATE SKIP LOCKED",
        }
    }

    const fn lease_until(self) -> &'static str {
        match self {
            Engine::Sqlite => {
                "strftime('%Y-%m-%dT%H:%M:%fZ', 'now', printf('+%.3f seconds', $1 / 1000.0))"
            }
            Engine::Postgres => "clock_timestamp() + make_interval(secs => $1 / 1000.0)",
        }
    }

    pub(crate) const fn problem_reason(self) -> &'static str {
        match self {
            Engine::Sqlite => "json_extract(problem, '$.reason')",
            Engine::Postgres => "(problem ->> 'reason')",
        }
    }

    /// The database's time `seconds` ago, as an SQL expression.
    pub(crate) fn seconds_ago(self, seconds: i64) -> String {
        match self {
            Engine::Sqlite => {
                format!("strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-{seconds} seconds')")
            }
            Engine::Postgres => format!("(clock_timestamp() - interval '{seconds} seconds')"),
        }
    }
}

/// A time as a database keeps it.
pub(crate) trait StoredTime: Sized {
    /// A time given to the store (a due time, an expiry), as kept.
    fn from_time(time: DateTime<Utc>) -> Self;

    /// A time kept, read back.
    fn to_time(self) -> Result<DateTime<Utc>>;
}

/// A connection as sqlx's executor.
fn executor<D: Dialect>(connection: &mut D::Connection) -> impl Executor<'_, Database = D> {
    connection.executor()
}

/// A connection that sqlx runs statements on.
pub(crate) trait OnConnection<DB: Database> {
    fn executor(&mut self) -> impl Executor<'_, Database = DB>;
}

impl<C, DB: Database> OnConnection<DB> for C
where
    for<'c> &'c mut C: Executor<'c, Database = DB>,
{
    fn executor(&mut self) -> impl Executor<'_, Database = DB> {
        self
    }
}

/// A Rust value the database takes as a parameter, which may borrow for `'q`.
pub(crate) trait Bind<'q, T>: Database {
    fn bind_to(
        query: Query<'static, Self, Self::Arguments>,
        value: T,
    ) -> Query<'static, Self, Self::Arguments>;
}

impl<'q, DB: Database, T> Bind<'q, T> for DB
where
    T: Type<DB> + Encode<'q, DB>,
{
    fn bind_to(
        query: Query<'static, Self, Self::Arguments>,
        value: T,
    ) -> Query<'static, Self, Self::Arguments> {
        query.bind(value)
    }
}

/// A row whose columns are found by name and by place.
pub(crate) trait Columns: Row {
    fn by_name<'r, T>(&'r self, column: &str) -> Result<T>
    where
        T: Decode<'r, Self::Database> + Type<Self::Database>;

    fn by_place<'r, T>(&'r self, index: usize) -> Result<T>
    where
        T: Decode<'r, Self::Database> + Type<Self::Database>;
}

impl<R: Row> Columns for R
where
    for<'a> &'a str: ColumnIndex<R>,
    usize: ColumnIndex<R>,
{
    fn by_name<'r, T>(&'r self, column: &str) -> Result<T>
    where
        T: Decode<'r, Self::Database> + Type<Self::Database>,
    {
        Ok(self.try_get(column)?)
    }

    fn by_place<'r, T>(&'r self, index: usize) -> Result<T>
    where
        T: Decode<'r, Self::Database> + Type<Self::Database>,
    {
        Ok(self.try_get(index)?)
    }
}

/// A Rust value read from a column, by name or by place.
pub(crate) trait Read<T>: Database {
    fn read(row: &Self::Row, column: &str) -> Result<T>;
    fn read_at(row: &Self::Row, index: usize) -> Result<T>;
}

impl<DB, T> Read<T> for DB
where
    DB: Database<Row: Columns>,
    T: Type<DB> + for<'r> Decode<'r, DB>,
{
    fn read(row: &Self::Row, column: &str) -> Result<T> {
        row.by_name(column)
    }

    fn read_at(row: &Self::Row, index: usize) -> Result<T> {
        row.by_place(index)
    }
}

/// Where a statement runs: inside a change, or on a pool.
pub(crate) enum On<'a, D: Database> {
    Connection(&'a mut D::Connection),
    Pool(&'a Pool<D>),
    /// The store's own connections for its hottest reads (see `sql::quiet`).
    Quiet(&'a crate::sql::quiet::Quiet<D>),
}

impl<'a, D: Database> From<&'a crate::sql::quiet::Quiet<D>> for On<'a, D> {
    fn from(quiet: &'a crate::sql::quiet::Quiet<D>) -> Self {
        On::Quiet(quiet)
    }
}

impl<'a, D: Database> From<&'a mut Transaction<'static, D>> for On<'a, D> {
    fn from(tx: &'a mut Transaction<'static, D>) -> Self {
        On::Connection(&mut **tx)
    }
}

impl<'a, D: Database> From<&'a Pool<D>> for On<'a, D> {
    fn from(pool: &'a Pool<D>) -> Self {
        On::Pool(pool)
    }
}

/// One SQL statement with its parameters, bound in the order of their numbers (`$1`, `$2`,
/// ...: both databases read them so).
pub(crate) struct Statement<D: Dialect> {
    query: Query<'static, D, D::Arguments>,
}

/// A statement of fixed text.
pub(crate) fn sql<D: Dialect>(text: &'static str) -> Statement<D> {
    Statement {
        query: sqlx::query(text),
    }
}

/// A statement whose text is fixed text and a dialect's constants, put together at run time.
pub(crate) fn built_sql<D: Dialect>(text: String) -> Statement<D> {
    // Invariant: callers build `text` of fixed text and `Dialect` constants only, never of a
    // caller's value: those go in as parameters.
    Statement {
        query: sqlx::query(AssertSqlSafe(text)),
    }
}

impl<D: Dialect> Statement<D> {
    /// Binds the next parameter.
    pub(crate) fn bind<'q, T>(self, value: T) -> Self
    where
        D: Bind<'q, T>,
    {
        Statement {
            query: D::bind_to(self.query, value),
        }
    }

    /// Binds the next two parameters: the org and the id of a playbook.
    pub(crate) fn bind_playbook(self, playbook: &PlaybookRef) -> Self {
        self.bind(playbook.org.as_str())
            .bind(playbook.playbook.as_str())
    }

    /// Every row the statement returns, each read by `from_row`.
    pub(crate) async fn fetch_all_as<'a, T>(
        self,
        on: impl Into<On<'a, D>>,
        from_row: impl Fn(&SqlRow<D>) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.fetch_all(on).await?.iter().map(from_row).collect()
    }

    /// The row the statement returns, when it returns one, read by `from_row`.
    pub(crate) async fn fetch_optional_as<'a, T>(
        self,
        on: impl Into<On<'a, D>>,
        from_row: impl Fn(&SqlRow<D>) -> Result<T>,
    ) -> Result<Option<T>> {
        self.fetch_optional(on)
            .await?
            .as_ref()
            .map(from_row)
            .transpose()
    }

    /// Every row the statement returns.
    pub(crate) async fn fetch_all<'a>(self, on: impl Into<On<'a, D>>) -> Result<Vec<SqlRow<D>>> {
        let rows = match on.into() {
            On::Connection(connection) => self.query.fetch_all(executor::<D>(connection)).await?,
            // A pool runs a statement on a connection it lends for it, as sqlx's does.
            On::Pool(pool) => {
                let mut connection = pool.acquire().await?;
                self.query.fetch_all(executor::<D>(&mut connection)).await?
            }
            On::Quiet(quiet) => {
                let mut lent = quiet.lend().await?;
                let rows = self
                    .query
                    .fetch_all(executor::<D>(lent.connection()))
                    .await?;
                lent.keep();
                rows
            }
        };
        Ok(rows.into_iter().map(SqlRow).collect())
    }

    /// The row the statement returns, when it returns one (every statement this is asked of
    /// returns one at the most).
    pub(crate) async fn fetch_optional<'a>(
        self,
        on: impl Into<On<'a, D>>,
    ) -> Result<Option<SqlRow<D>>> {
        Ok(self.fetch_all(on).await?.into_iter().next())
    }

    /// The row the statement returns; a fault when it returns none.
    pub(crate) async fn fetch_one<'a>(self, on: impl Into<On<'a, D>>) -> Result<SqlRow<D>> {
        self.fetch_optional(on)
            .await?
            .ok_or(crate::StoreError::Database(sqlx::Error::RowNotFound))
    }

    /// Runs the statement, for what it changes.
    pub(crate) async fn execute<'a>(self, on: impl Into<On<'a, D>>) -> Result<()> {
        self.fetch_all(on).await?;
        Ok(())
    }

    /// The first column of the one row, when there is one.
    pub(crate) async fn scalar_optional<'a, T>(self, on: impl Into<On<'a, D>>) -> Result<Option<T>>
    where
        D: Read<T>,
    {
        self.fetch_optional(on)
            .await?
            .map(|row| row.at(0))
            .transpose()
    }

    /// The first column of the one row.
    pub(crate) async fn scalar<'a, T>(self, on: impl Into<On<'a, D>>) -> Result<T>
    where
        D: Read<T>,
    {
        self.fetch_one(on).await?.at(0)
    }
}

/// A row a statement returned, read by column name (or place) into the types of the model.
pub(crate) struct SqlRow<D: Dialect>(pub(crate) D::Row);

impl<D: Dialect> SqlRow<D> {
    pub(crate) fn get<T>(&self, column: &str) -> Result<T>
    where
        D: Read<T>,
    {
        D::read(&self.0, column)
    }

    pub(crate) fn at<T>(&self, index: usize) -> Result<T>
    where
        D: Read<T>,
    {
        D::read_at(&self.0, index)
    }

    pub(crate) fn time(&self, column: &str) -> Result<DateTime<Utc>> {
        <D as Read<D::Time>>::read(&self.0, column)?.to_time()
    }

    pub(crate) fn optional_time(&self, column: &str) -> Result<Option<DateTime<Utc>>> {
        let stored: Option<D::Time> = D::read(&self.0, column)?;
        stored.map(StoredTime::to_time).transpose()
    }

    /// A JSON column that may be null.
    pub(crate) fn optional_json(&self, column: &str, what: &str) -> Result<Option<Value>> {
        D::json(&self.0, column, what)
    }

    /// A JSON column that is never null.
    pub(crate) fn json(&self, column: &str, what: &str) -> Result<Value> {
        self.optional_json(column, what)?
            .ok_or_else(|| crate::StoreError::Corrupt(format!("{what} is missing")))
    }
}

/// The database's time of a change: as the database keeps it, to write it, and as a time.
pub(crate) struct Stamp<D: Dialect> {
    pub(crate) stored: D::Time,
    pub(crate) at: DateTime<Utc>,
}

impl<D: Dialect> Stamp<D> {
    pub(crate) fn new(stored: D::Time) -> Result<Self> {
        Ok(Stamp {
            at: stored.clone().to_time()?,
            stored,
        })
    }
}
