//! Group commit: one writer per database that gathers the changes of concurrent runs into one
//! transaction, so that they share one commit and one fsync, and answers each caller once the
//! commit that holds its change is durable.
//!
//! A change is a function of the writer's transaction. The writer takes every change waiting
//! when it is free (up to [`GROUP_CHANGES_MAX`]), runs each inside a savepoint of its own, and
//! commits once: a change that fails is rolled back to its savepoint and answered with its own
//! error, and the others go on; a commit that fails answers every change in the group with it.
//! Nothing waits on purpose for a group to fill: changes gather while the commit before them
//! is being written, so one at a time costs what it did before, and many at once share.
//!
//! The writer is a task of its own, so a caller that stops waiting (its request dropped) cuts
//! nothing short for the others. Written here rather than taken from a crate: what it groups
//! are our own transactions, with our own savepoint and error rules.
//!
//! On SQLite's file a second writer, [`RawGroup`], groups the hot changes the same way but
//! makes them synchronously on the writer connection's own handle (see `sqlite_changes`): the
//! two writers share the pool's one connection, so their groups take turns.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use sqlx::sqlite::SqlitePool;
use sqlx::{Pool, Transaction};
use tokio::runtime::RuntimeFlavor;
use tokio::sync::{mpsc, oneshot};

use super::sqlite_changes::raw_fault;
use crate::dialect::{Dialect, sql};
use crate::{Result, StoreError};

/// How many changes one commit holds at most: enough that a burst of concurrent runs shares a
/// commit, few enough that the first of them is not kept long for the last.
pub(crate) const GROUP_CHANGES_MAX: usize = 64;

/// A change's future, borrowing the group's transaction.
pub(crate) type ChangeFuture<'t, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 't>>;

/// What a change made: its value, of the type its caller asked for, or its error.
type Made = Result<Box<dyn Any + Send>>;

/// A change as a writer holds it: the change (of type `M`), and where its answer goes.
struct Change<M> {
    make: M,
    answer: oneshot::Sender<Made>,
}

/// A change, its type erased.
type Make<D> = Box<
    dyn for<'t> FnOnce(&'t mut Transaction<'static, D>) -> ChangeFuture<'t, Box<dyn Any + Send>>
        + Send,
>;

/// Boxes a change: a function, so that the closure's signature is the higher-ranked one.
fn boxed<D: Dialect, F>(make: F) -> Make<D>
where
    F: for<'t> FnOnce(&'t mut Transaction<'static, D>) -> ChangeFuture<'t, Box<dyn Any + Send>>
        + Send
        + 'static,
{
    Box::new(make)
}

/// The handle to a database's group writer.
pub(crate) struct Group<D: Dialect> {
    changes: mpsc::UnboundedSender<Change<Make<D>>>,
}

impl<D: Dialect> Group<D> {
    /// Starts the writer of the changes made on `pool` (which must be the pool of the one
    /// connection that writes).
    pub(crate) fn start(pool: Pool<D>) -> Self {
        let (changes, waiting) = mpsc::unbounded_channel();
        tokio::spawn(write(pool, waiting));
        Group { changes }
    }

    /// Makes `change` in the next group and answers once the group is committed.
    pub(crate) async fn change<T, F>(&self, change: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'t> FnOnce(&'t mut Transaction<'static, D>) -> ChangeFuture<'t, T> + Send + 'static,
    {
        let make = boxed::<D, _>(move |tx| {
            Box::pin(async move {
                change(tx)
                    .await
                    .map(|value| Box::new(value) as Box<dyn Any + Send>)
            })
        });
        made_by(&self.changes, make).await
    }
}

/// Hands `make` to the writer of `changes` and answers with what it made, of the type its
/// caller made it, once its group is committed.
async fn made_by<T: 'static, M>(changes: &mpsc::UnboundedSender<Change<M>>, make: M) -> Result<T> {
    let (answer, answered) = oneshot::channel();
    changes
        .send(Change { make, answer })
        .map_err(|_| writer_gone())?;
    let made = answered.await.map_err(|_| writer_gone())??;
    Ok(*made
        .downcast::<T>()
        .expect("a change's answer is of the type its caller made"))
}

fn writer_gone() -> StoreError {
    StoreError::Database(sqlx::Error::PoolClosed)
}

/// The next group: waits for a change and takes every other one waiting. `false` once the
/// store is gone.
async fn gather<M>(
    waiting: &mut mpsc::UnboundedReceiver<Change<M>>,
    group: &mut Vec<Change<M>>,
) -> bool {
    let Some(first) = waiting.recv().await else {
        return false;
    };
    group.push(first);
    while group.len() < GROUP_CHANGES_MAX {
        match waiting.try_recv() {
            Ok(change) => group.push(change),
            Err(_) => break,
        }
    }
    true
}

/// The writer: waits for a change, takes every other one waiting, and commits them together.
async fn write<D: Dialect>(pool: Pool<D>, mut waiting: mpsc::UnboundedReceiver<Change<Make<D>>>) {
    let mut group = Vec::with_capacity(GROUP_CHANGES_MAX);
    while gather(&mut waiting, &mut group).await {
        commit_group(&pool, group.drain(..)).await;
    }
}

/// Makes the changes in one transaction, each in a savepoint of its own when there are
/// several, commits, and answers each.
async fn commit_group<D: Dialect>(
    pool: &Pool<D>,
    group: impl ExactSizeIterator<Item = Change<Make<D>>>,
) {
    let alone = group.len() == 1;
    let mut tx = match D::begin(pool).await {
        Ok(tx) => tx,
        Err(error) => {
            let error = Arc::new(into_sqlx(error));
            for change in group {
                refuse(change, &error);
            }
            return;
        }
    };
    let mut made = Vec::with_capacity(group.len());
    let mut broken: Option<Arc<sqlx::Error>> = None;
    for change in group {
        if let Some(error) = &broken {
            refuse(change, error);
            continue;
        }
        if !alone && let Err(error) = savepoint(&mut tx, "SAVEPOINT grouped").await {
            let error = Arc::new(error);
            refuse(change, &error);
            broken = Some(error);
            continue;
        }
        let result = (change.make)(&mut tx).await;
        if !alone {
            let end = if result.is_err() {
                match savepoint(&mut tx, "ROLLBACK TO grouped").await {
                    Ok(()) => savepoint(&mut tx, "RELEASE grouped").await,
                    Err(error) => Err(error),
                }
            } else {
                savepoint(&mut tx, "RELEASE grouped").await
            };
            if let Err(error) = end {
                // The transaction cannot go on: the changes before this one are lost with it,
                // and the rest are answered with the fault without being made.
                broken = Some(Arc::new(error));
            }
        }
        made.push((result, change.answer));
    }
    let all_failed = made.iter().all(|(result, _)| result.is_err());
    let commit = match broken {
        Some(error) => {
            drop(tx);
            Some(error)
        }
        // Nothing to keep (and a change alone that failed may have left a part of itself).
        None if all_failed => {
            drop(tx);
            None
        }
        None => tx.commit().await.err().map(Arc::new),
    };
    answer(made, commit);
}

/// Answers each change of a group with what it made, or with the commit's fault.
fn answer(made: Vec<(Made, oneshot::Sender<Made>)>, commit: Option<Arc<sqlx::Error>>) {
    for (result, answer) in made {
        let result = match (result, &commit) {
            (Ok(_), Some(error)) => Err(StoreError::Commit(error.clone())),
            (result, _) => result,
        };
        // The caller may have stopped waiting: its change stands all the same.
        let _ = answer.send(result);
    }
}

async fn savepoint<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    statement: &'static str,
) -> Result<(), sqlx::Error> {
    sql::<D>(statement)
        .execute(&mut *tx)
        .await
        .map_err(into_sqlx)
}

/// A change the group could not make: answered with the group's fault, not made.
fn refuse<M>(change: Change<M>, error: &Arc<sqlx::Error>) {
    let _ = change.answer.send(Err(StoreError::Commit(error.clone())));
}

fn into_sqlx(error: StoreError) -> sqlx::Error {
    match error {
        StoreError::Database(error) => error,
        other => sqlx::Error::Protocol(other.to_string()),
    }
}

/// How many prepared statements a group on the raw handle keeps: more than the kinds of
/// statement its changes run (about 25).
const STATEMENTS_CACHED: usize = 64;

/// A change made on the writer connection's own handle: synchronous, its type erased.
type RawMake = Box<dyn FnOnce(&rusqlite::Connection) -> Made + Send>;

/// The handle to SQLite's group writer of changes made on the connection's own handle.
pub(crate) struct RawGroup {
    changes: mpsc::UnboundedSender<Change<RawMake>>,
}

impl RawGroup {
    /// Starts the writer of the changes made on `pool`'s one connection.
    pub(crate) fn start(pool: SqlitePool) -> Self {
        let (changes, waiting) = mpsc::unbounded_channel();
        tokio::spawn(write_raw(pool, waiting));
        RawGroup { changes }
    }

    /// Makes `change` in the next group and answers once the group is committed.
    pub(crate) async fn change<T, F>(&self, change: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T> + Send + 'static,
    {
        let make: RawMake = Box::new(move |connection| {
            change(connection).map(|value| Box::new(value) as Box<dyn Any + Send>)
        });
        made_by(&self.changes, make).await
    }
}

/// The writer of the changes made on the connection's own handle.
async fn write_raw(pool: SqlitePool, mut waiting: mpsc::UnboundedReceiver<Change<RawMake>>) {
    let mut group = Vec::with_capacity(GROUP_CHANGES_MAX);
    while gather(&mut waiting, &mut group).await {
        let group = std::mem::take(&mut group);
        let mut connection = match pool.acquire().await {
            Ok(connection) => connection,
            Err(error) => {
                refuse_all(group, error);
                continue;
            }
        };
        let mut handle = match connection.lock_handle().await {
            Ok(handle) => handle,
            Err(error) => {
                refuse_all(group, error);
                continue;
            }
        };
        let raw = handle.as_raw_handle().as_ptr();
        #[allow(unsafe_code)]
        let commit = move || {
            // SAFETY: `handle`, sqlx's lock on the connection, keeps sqlx's worker thread off
            // the handle for as long as it lives, and it outlives this `Connection`, which is
            // dropped (finalizing the statements it prepared) before `commit` returns. Made with
            // `from_handle`, the `Connection` does not close the handle, which stays sqlx's.
            match unsafe { rusqlite::Connection::from_handle(raw) } {
                Ok(connection) => {
                    // Room for every statement of a group, so none is prepared twice in one.
                    connection.set_prepared_statement_cache_capacity(STATEMENTS_CACHED);
                    commit_raw_group(&connection, group);
                }
                Err(error) => refuse_all(group, raw_fault(error)),
            }
        };
        // The group runs on this thread without a hop per statement; on a runtime of several
        // threads the others take this one's tasks meanwhile.
        if tokio::runtime::Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread {
            tokio::task::block_in_place(commit);
        } else {
            commit();
        }
        drop(handle);
    }
}

fn refuse_all(group: Vec<Change<RawMake>>, error: sqlx::Error) {
    let error = Arc::new(error);
    for change in group {
        refuse(change, &error);
    }
}

/// [`commit_group`], on the connection's own handle: the changes in one `BEGIN IMMEDIATE`
/// transaction, each in a savepoint of its own when there are several, committed, and each
/// answered. The handle is left outside any transaction, as sqlx expects it.
fn commit_raw_group(connection: &rusqlite::Connection, group: Vec<Change<RawMake>>) {
    let alone = group.len() == 1;
    if let Err(error) = run(connection, "BEGIN IMMEDIATE") {
        refuse_all(group, error);
        return;
    }
    let mut made = Vec::with_capacity(group.len());
    let mut broken: Option<Arc<sqlx::Error>> = None;
    for change in group {
        if let Some(error) = &broken {
            refuse(change, error);
            continue;
        }
        if !alone && let Err(error) = run(connection, "SAVEPOINT grouped") {
            let error = Arc::new(error);
            refuse(change, &error);
            broken = Some(error);
            continue;
        }
        let result = (change.make)(connection);
        if !alone {
            let end = if result.is_err() {
                run(connection, "ROLLBACK TO grouped")
                    .and_then(|()| run(connection, "RELEASE grouped"))
            } else {
                run(connection, "RELEASE grouped")
            };
            if let Err(error) = end {
                // The transaction cannot go on: the changes before this one are lost with it,
                // and the rest are answered with the fault without being made.
                broken = Some(Arc::new(error));
            }
        }
        made.push((result, change.answer));
    }
    let all_failed = made.iter().all(|(result, _)| result.is_err());
    let commit = match broken {
        Some(error) => Some(error),
        // Nothing to keep (and a change alone that failed may have left a part of itself).
        None if all_failed => None,
        None => run(connection, "COMMIT").err().map(Arc::new),
    };
    if !connection.is_autocommit() {
        // A group broken, failed or whose commit failed: nothing of it stays. The rollback
        // hook sqlx's pool set sees it, as it sees sqlx's own.
        if let Err(error) = run(connection, "ROLLBACK") {
            tracing::warn!(%error, "the SQLite writer's transaction did not roll back");
        }
    }
    answer(made, commit);
}

/// Runs one statement of the group's own.
fn run(connection: &rusqlite::Connection, statement: &str) -> Result<(), sqlx::Error> {
    connection
        .prepare_cached(statement)
        .and_then(|mut statement| statement.execute([]))
        .map(drop)
        .map_err(raw_fault)
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};

    use super::*;

    /// On a runtime of several threads (the group made in `block_in_place`), changes sent at
    /// once to the writer on the raw handle stand or fall each alone: one that wrote and then
    /// failed leaves nothing, the others commit, and the connection goes back to sqlx outside
    /// any transaction.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn raw_changes_stand_or_fall_each_alone() {
        let dir = tempfile::tempdir().unwrap();
        let options = SqliteConnectOptions::from_str(&format!(
            "sqlite://{}",
            dir.path().join("t.db").display()
        ))
        .unwrap()
        .create_if_missing(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .unwrap();
        sqlx::query("CREATE TABLE t (x INTEGER PRIMARY KEY)")
            .execute(&pool)
            .await
            .unwrap();
        let group = Arc::new(RawGroup::start(pool.clone()));
        let changes: Vec<_> = (0..48_i64)
            .map(|i| {
                let group = group.clone();
                tokio::spawn(async move {
                    group
                        .change(move |connection| {
                            connection
                                .execute("INSERT INTO t (x) VALUES (?1)", [i])
                                .map_err(|error| StoreError::Database(raw_fault(error)))?;
                            if i % 3 == 0 {
                                return Err(StoreError::Conflict(format!("{i} refused")));
                            }
                            Ok(i)
                        })
                        .await
                })
            })
            .collect();
        let mut kept = Vec::new();
        for (i, change) in (0..).zip(changes) {
            match change.await.unwrap() {
                Ok(value) => kept.push(value),
                Err(StoreError::Conflict(message)) => assert_eq!(message, format!("{i} refused")),
                Err(other) => panic!("change {i}: {other}"),
            }
        }
        let stored: Vec<i64> = sqlx::query_scalar("SELECT x FROM t ORDER BY x")
            .fetch_all(&pool)
            .await
            .unwrap();
        assert_eq!(stored, kept);
        assert_eq!(stored, (0..48).filter(|i| i % 3 != 0).collect::<Vec<_>>());
        // sqlx's own transactions go on on the connection.
        let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.unwrap();
        sqlx::query("INSERT INTO t (x) VALUES (100)")
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }
}
