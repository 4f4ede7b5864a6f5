//! Connections the store keeps for its hottest reads on PostgreSQL (a run's definition, the
//! database's clock), lent without sqlx's tests. sqlx 0.9's pool checks a connection with a
//! round trip to the server (`Sync`, then `ReadyForQuery`) when it lends it and again when it
//! takes it back, so a statement made through it costs three round trips, each a wake-up of
//! the server's process and of ours: on the three-call workflow, whose run reads two
//! definitions and the clock, six of the nine round trips of its reads were those tests.
//!
//! Here a connection goes back as it is when its statement succeeded; when the statement
//! failed, or its caller stopped waiting part way (the two cases sqlx's test on return is
//! there for), it is dropped, which closes its socket. A connection idle for longer than
//! [`QUIET_IDLE_UNTESTED_MAX`] is tested before it is lent, so one whose server went away while
//! nothing used it is found out before a statement is sent on it; one in steady use is not.
//! Past [`QUIET_CONNECTIONS_MAX`] in use, a statement goes to sqlx's pool as before.
//!
//! Written here rather than taken from a crate: sqlx's pool cannot be told not to test, and the
//! store's statements are sqlx's, made on sqlx's connections.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sqlx::{Connection, Database, Pool};

/// How many connections the store keeps of its own, beside sqlx's pool.
pub(crate) const QUIET_CONNECTIONS_MAX: usize = 8;

/// How long a kept connection may wait unused and still be lent without a test.
pub(crate) const QUIET_IDLE_UNTESTED_MAX: Duration = Duration::from_secs(1);

/// The store's own connections, and sqlx's pool for when they are all in use (or, where
/// `options` is `None`, for every statement).
pub(crate) struct Quiet<D: Database> {
    pool: Pool<D>,
    options: Option<<D::Connection as Connection>::Options>,
    idle: Mutex<Vec<(D::Connection, Instant)>>,
    /// Connections open, idle or lent.
    open: AtomicUsize,
}

/// Where a statement lent a connection runs.
pub(crate) enum Lent<'a, D: Database> {
    Own(OwnConnection<'a, D>),
    Pooled(sqlx::pool::PoolConnection<D>),
}

/// One of the store's own connections, lent: kept again only when [`OwnConnection::keep`]
/// is called, dropped otherwise.
pub(crate) struct OwnConnection<'a, D: Database> {
    quiet: &'a Quiet<D>,
    connection: Option<D::Connection>,
}

impl<D: Database> Quiet<D> {
    /// Connections of the store's own, opened with `options` as needed.
    pub(crate) fn new(pool: Pool<D>, options: <D::Connection as Connection>::Options) -> Self {
        Quiet {
            pool,
            options: Some(options),
            idle: Mutex::default(),
            open: AtomicUsize::new(0),
        }
    }

    /// sqlx's pool alone.
    pub(crate) fn pooled(pool: Pool<D>) -> Self {
        Quiet {
            pool,
            options: None,
            idle: Mutex::default(),
            open: AtomicUsize::new(0),
        }
    }

    /// A connection for one statement.
    pub(crate) async fn lend(&self) -> Result<Lent<'_, D>, sqlx::Error> {
        let Some(options) = self.options.as_ref().filter(|_| !self.pool.is_closed()) else {
            return Ok(Lent::Pooled(self.pool.acquire().await?));
        };
        loop {
            let kept = self.idle().pop();
            let Some((mut connection, since)) = kept else {
                break;
            };
            if since.elapsed() <= QUIET_IDLE_UNTESTED_MAX || connection.ping().await.is_ok() {
                return Ok(Lent::Own(OwnConnection {
                    quiet: self,
                    connection: Some(connection),
                }));
            }
            // Gone while it waited: dropped, and the next one tried.
            self.open.fetch_sub(1, Ordering::AcqRel);
        }
        if self.open.fetch_add(1, Ordering::AcqRel) >= QUIET_CONNECTIONS_MAX {
            self.open.fetch_sub(1, Ordering::AcqRel);
            return Ok(Lent::Pooled(self.pool.acquire().await?));
        }
        match D::Connection::connect_with(options).await {
            Ok(connection) => Ok(Lent::Own(OwnConnection {
                quiet: self,
                connection: Some(connection),
            })),
            Err(error) => {
                self.open.fetch_sub(1, Ordering::AcqRel);
                Err(error)
            }
        }
    }

    /// Opens every connection it may keep, ahead of the statements that will need them: a
    /// connection opened in the middle of a burst (a server process started, its
    /// authentication) holds up the statement that waits for it by milliseconds. Stops at
    /// the first that does not open; a statement opens what is missing then.
    pub(crate) async fn warm(self: std::sync::Arc<Self>) {
        let Some(options) = &self.options else {
            return;
        };
        while self.open.fetch_add(1, Ordering::AcqRel) < QUIET_CONNECTIONS_MAX {
            match D::Connection::connect_with(options).await {
                Ok(connection) if !self.pool.is_closed() => {
                    self.idle().push((connection, Instant::now()))
                }
                Ok(_) => break,
                Err(error) => {
                    tracing::debug!(%error, "the store's own connections were not all opened");
                    break;
                }
            }
        }
        self.open.fetch_sub(1, Ordering::AcqRel);
    }

    /// Closes the connections waiting to be lent, and opens none after: as the store closes.
    pub(crate) async fn close(&self) {
        let idle = std::mem::take(&mut *self.idle());
        for (connection, _) in idle {
            self.open.fetch_sub(1, Ordering::AcqRel);
            let _ = connection.close().await;
        }
    }

    /// The connections waiting to be lent, and when each was last used.
    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<(D::Connection, Instant)>> {
        self.idle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    #[cfg(test)]
    pub(crate) fn idle_count(&self) -> usize {
        self.idle().len()
    }
}

impl<D: Database> Lent<'_, D> {
    /// The connection to run the statement on.
    pub(crate) fn connection(&mut self) -> &mut D::Connection {
        match self {
            Lent::Own(own) => own
                .connection
                .as_mut()
                .expect("a lent connection is there until it is kept"),
            Lent::Pooled(pooled) => pooled,
        }
    }

    /// The statement succeeded: the connection goes back as it is (sqlx's, through its pool).
    pub(crate) fn keep(self) {
        if let Lent::Own(mut own) = self
            && let Some(connection) = own.connection.take()
        {
            own.quiet.idle().push((connection, Instant::now()));
        }
    }
}

impl<D: Database> Drop for OwnConnection<'_, D> {
    fn drop(&mut self) {
        if self.connection.take().is_some() {
            // Not kept: its statement failed or was cut short, and the connection with it.
            self.quiet.open.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
    use sqlx::{Executor, Sqlite};

    use super::*;

    async fn quiet(dir: &std::path::Path) -> Quiet<Sqlite> {
        let options =
            SqliteConnectOptions::from_str(&format!("sqlite://{}", dir.join("quiet.db").display()))
                .unwrap()
                .create_if_missing(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options.clone())
            .await
            .unwrap();
        Quiet::new(pool, options)
    }

    #[tokio::test]
    async fn a_connection_kept_is_lent_again_and_one_failed_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let quiet = quiet(dir.path()).await;
        let mut lent = quiet.lend().await.unwrap();
        lent.connection().execute("SELECT 1").await.unwrap();
        lent.keep();
        assert_eq!(quiet.idle_count(), 1);
        assert_eq!(quiet.open.load(Ordering::Acquire), 1);

        // Lent again, not opened anew; failed, so not kept.
        let mut lent = quiet.lend().await.unwrap();
        assert!(matches!(lent, Lent::Own(_)));
        assert_eq!(quiet.idle_count(), 0);
        assert!(lent.connection().execute("SELECT nothing").await.is_err());
        drop(lent);
        assert_eq!(quiet.idle_count(), 0);
        assert_eq!(quiet.open.load(Ordering::Acquire), 0);
    }

    #[tokio::test]
    async fn warmed_it_holds_the_most_and_lends_them() {
        let dir = tempfile::tempdir().unwrap();
        let quiet = std::sync::Arc::new(quiet(dir.path()).await);
        let lent = quiet.lend().await.unwrap();
        quiet.clone().warm().await;
        assert_eq!(quiet.open.load(Ordering::Acquire), QUIET_CONNECTIONS_MAX);
        assert_eq!(quiet.idle_count(), QUIET_CONNECTIONS_MAX - 1);
        lent.keep();
        assert_eq!(quiet.idle_count(), QUIET_CONNECTIONS_MAX);
        let mut lent = quiet.lend().await.unwrap();
        assert!(matches!(lent, Lent::Own(_)));
        lent.connection().execute("SELECT 1").await.unwrap();
    }

    #[tokio::test]
    async fn closed_it_keeps_nothing_and_lends_from_the_closed_pool() {
        let dir = tempfile::tempdir().unwrap();
        let quiet = quiet(dir.path()).await;
        let lent = quiet.lend().await.unwrap();
        lent.keep();
        quiet.pool.close().await;
        quiet.close().await;
        assert_eq!(quiet.idle_count(), 0);
        assert_eq!(quiet.open.load(Ordering::Acquire), 0);
        assert!(matches!(quiet.lend().await, Err(sqlx::Error::PoolClosed)));
    }

    #[tokio::test]
    async fn past_the_most_the_pool_lends() {
        let dir = tempfile::tempdir().unwrap();
        let quiet = quiet(dir.path()).await;
        let mut own = Vec::new();
        for _ in 0..QUIET_CONNECTIONS_MAX {
            let lent = quiet.lend().await.unwrap();
            assert!(matches!(lent, Lent::Own(_)));
            own.push(lent);
        }
        let mut pooled = quiet.lend().await.unwrap();
        assert!(matches!(pooled, Lent::Pooled(_)));
        pooled.connection().execute("SELECT 1").await.unwrap();
        pooled.keep();
        for lent in own {
            lent.keep();
        }
        assert_eq!(quiet.idle_count(), QUIET_CONNECTIONS_MAX);
        assert_eq!(quiet.open.load(Ordering::Acquire), QUIET_CONNECTIONS_MAX);
    }

    /// On PostgreSQL, a kept connection whose server process ended while it waited past the
    /// bound is tested, dropped, and another opened in its place.
    #[tokio::test]
    async fn a_connection_idle_long_whose_server_went_is_replaced() {
        use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
        let Ok(url) = std::env::var("AUTO_TEST_POSTGRES") else {
            eprintln!("skipped: AUTO_TEST_POSTGRES holds no database URL");
            return;
        };
        let options = PgConnectOptions::from_str(&url).unwrap();
        let pool = PgPoolOptions::new()
            .max_connections(2)
            .connect_with(options.clone())
            .await
            .unwrap();
        let quiet = Quiet::new(pool.clone(), options);
        let mut lent = quiet.lend().await.unwrap();
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut *lent.connection())
            .await
            .unwrap();
        lent.keep();
        let ended: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
            .bind(pid)
            .fetch_one(&pool)
            .await
            .unwrap();
        assert!(ended);
        {
            let mut idle = quiet.idle.lock().unwrap();
            let (_, since) = idle.last_mut().unwrap();
            *since -= QUIET_IDLE_UNTESTED_MAX * 2;
        }
        let mut lent = quiet.lend().await.unwrap();
        let other: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut *lent.connection())
            .await
            .unwrap();
        assert_ne!(other, pid);
        lent.keep();
        assert_eq!(quiet.open.load(Ordering::Acquire), 1);
        assert_eq!(quiet.idle_count(), 1);
    }
}
