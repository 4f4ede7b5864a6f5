//! Group commit on SQLite's file: one writer that gathers the changes of concurrent runs into
//! one transaction, so that they share one commit and one fsync, and answers each caller once
//! the commit that holds its change is durable.
//!
//! A change is a function of the writer's connection, which may be made more than once. The
//! writer takes every change waiting when it is free (up to [`GROUP_CHANGES_MAX`]), makes them
//! one after the other in one transaction, and commits once. A change that fails takes the
//! group back: the transaction is rolled back and the group made again with each change inside
//! a savepoint of its own, where the one that fails is rolled back to its savepoint and answered
//! with its own error, and the others go on; a commit that fails answers every change in the
//! group with it. Savepoints only after a failure, because they cost every change that does not
//! fail: SQLite copies each page a savepoint's change writes to a journal of the savepoint
//! first, a tenth of the writer's work on a workflow step (it is the writer's work that runs one
//! change at a time), while a change fails seldom (a run changed by another, a taken id).
//! Nothing waits on purpose for a group to fill: changes gather while the commit before them
//! is being written, so one at a time costs what it did before, and many at once share.
//!
//! The changes are made synchronously, through rusqlite, on a connection of the writer's own
//! (see `sqlite_changes`), kept from one group to the next with its prepared statements: sqlx
//! runs each connection on a thread of its own, where every statement is a round trip between
//! threads. Every other write goes through sqlx's one writer connection; the group writer holds
//! that connection (without using it) while it makes a group, so the two never write at once
//! and neither waits on SQLite's file lock. After a fault that rolled a group back, the
//! connection is opened anew, as sqlx's is, so a fault that cleared leaves nothing behind.
//! The writer is a thread of its own, which waits for changes and for its turn through the
//! runtime's handle, so a caller that stops waiting (its request dropped) cuts nothing short
//! for the others, and a group's statements hold no worker of the runtime: as a task under
//! `block_in_place`, each group handed its worker's place to another thread and back, a tenth
//! of the server's CPU a run (three-call workflow at 16 in flight).
//!
//! Except a change alone: one that finds no change waiting for the writer, its connection free
//! and the turn free is the group the writer would make of it, so its caller makes and commits
//! it on its own thread, in the poll that sent it (so a caller that stops waiting cuts nothing
//! short there either). That spares the hand-over to the writer's thread and the answer's way
//! back, two wake-ups of a sleeping thread on the change's path: a reasoning run one at a time
//! (two commits) went from 0.97-0.99 ms to 0.87-0.93 at the median, in turns, with no loss at
//! 16 or 200 in flight, where changes wait for the writer and go to it as before.
//!
//! Written here rather than taken from a crate: what it groups are our own transactions, with
//! our own savepoint and error rules. On PostgreSQL, grouping transactions in savepoints was
//! measured and not kept; its runs that begin and end in their first step are grouped as one
//! statement instead (`postgres_changes`).

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use sqlx::sqlite::SqlitePool;
use tokio::sync::{mpsc, oneshot};

use super::sqlite_changes::raw_fault;
use crate::{Result, StoreError};

/// How many changes one commit holds at most: enough that a burst of concurrent runs shares a
/// commit, few enough that the first of them is not kept long for the last.
pub(crate) const GROUP_CHANGES_MAX: usize = 64;

/// What a change made: its value, of the type its caller asked for, or its error.
type Made = Result<Box<dyn Any + Send>>;

/// A change as the writer holds it: the change, and where its answer goes.
struct Change {
    make: RawMake,
    answer: oneshot::Sender<Made>,
}

impl Change {
    /// Where the change's answer goes, the change itself dropped: what it holds (the events of
    /// a start, say) is its caller's alone again by the time the answer arrives.
    fn into_answer(self) -> oneshot::Sender<Made> {
        self.answer
    }
}

fn writer_gone() -> StoreError {
    StoreError::Database(sqlx::Error::PoolClosed)
}

/// The next group: `first`, and every other change waiting, up to [`GROUP_CHANGES_MAX`].
fn gather(first: Change, waiting: &mut mpsc::UnboundedReceiver<Change>) -> Vec<Change> {
    let mut group = vec![first];
    while group.len() < GROUP_CHANGES_MAX {
        match waiting.try_recv() {
            Ok(change) => group.push(change),
            Err(_) => break,
        }
    }
    group
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

/// A change the group could not make: answered with the group's fault, not made.
fn refuse(change: Change, error: &Arc<sqlx::Error>) {
    let _ = change.answer.send(Err(StoreError::Commit(error.clone())));
}

/// How many prepared statements the writer's connection keeps: more than the kinds of
/// statement its changes run (about 25).
const STATEMENTS_CACHED: usize = 64;

/// A change made on the writer's own connection: synchronous, its type erased. Made again
/// when a group is made again, so it keeps what it writes and makes its answer from it anew.
type RawMake = Box<dyn FnMut(&rusqlite::Connection) -> Made + Send>;

/// Opens the writer's own connection to the file, set as sqlx's connections are.
pub(crate) type Opener = Box<dyn Fn() -> rusqlite::Result<rusqlite::Connection> + Send + Sync>;

/// The handle to SQLite's group writer of changes made on its own connection.
pub(crate) struct RawGroup {
    changes: mpsc::UnboundedSender<Change>,
    writer: Arc<Writer>,
}

/// What the writer thread and a caller alone share: the writer's connection, held by whoever
/// commits on it, how to open it anew, sqlx's pool whose one connection is the turn, and how
/// many changes wait for the writer thread.
struct Writer {
    own: std::sync::Mutex<Option<rusqlite::Connection>>,
    open: Opener,
    pool: SqlitePool,
    waiting: AtomicUsize,
}

type Own<'w> = std::sync::MutexGuard<'w, Option<rusqlite::Connection>>;

impl Writer {
    /// The connection, waiting for a caller alone that commits on it.
    fn own(&self) -> Own<'_> {
        self.own.lock().unwrap_or_else(opened_anew)
    }
}

/// The connection of a caller that panicked while holding it, dropped so that it is opened
/// anew: what it was in the middle of is rolled back.
fn opened_anew(poisoned: std::sync::PoisonError<Own<'_>>) -> Own<'_> {
    let mut own = poisoned.into_inner();
    *own = None;
    own
}

impl RawGroup {
    /// Starts the writer whose connections `open` opens, taking turns with the writes made
    /// on `pool`'s one connection.
    pub(crate) fn start(pool: SqlitePool, open: Opener) -> Self {
        let (changes, waiting) = mpsc::unbounded_channel();
        let runtime = tokio::runtime::Handle::current();
        let writer = Arc::new(Writer {
            own: std::sync::Mutex::new(None),
            open,
            pool,
            waiting: AtomicUsize::new(0),
        });
        let thread = writer.clone();
        std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || runtime.block_on(write_raw(thread, waiting)))
            .expect("a thread for the SQLite group writer");
        RawGroup { changes, writer }
    }

    /// Makes `change` in the next group and answers once the group is committed. `change` may
    /// be made twice (once more when another change of its group fails), each time from the
    /// state before it; it is dropped before its answer is sent.
    ///
    /// A change that finds nothing waiting, the connection free and the turn free is made
    /// and committed by its caller, on its own thread, as a group of one: that is the group
    /// the writer would have made, without handing the change to its thread and the answer
    /// back (two wake-ups of a sleeping thread, a fifth of a lone commit's time).
    pub(crate) async fn change<T, F>(&self, mut change: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnMut(&rusqlite::Connection) -> Result<T> + Send + 'static,
    {
        let make: RawMake = Box::new(move |connection| {
            change(connection).map(|value| Box::new(value) as Box<dyn Any + Send>)
        });
        let (answer, answered) = oneshot::channel();
        if let Some(change) = self.alone(Change { make, answer }) {
            self.writer.waiting.fetch_add(1, Ordering::AcqRel);
            if self.changes.send(change).is_err() {
                self.writer.waiting.fetch_sub(1, Ordering::AcqRel);
                return Err(writer_gone());
            }
        }
        let made = answered.await.map_err(|_| writer_gone())??;
        Ok(*made
            .downcast::<T>()
            .expect("a change's answer is of the type its caller made"))
    }

    /// Commits `change` here when nothing waits for the writer and both the connection and
    /// the turn are free; gives it back otherwise.
    fn alone(&self, change: Change) -> Option<Change> {
        let writer = &*self.writer;
        if writer.waiting.load(Ordering::Acquire) != 0 {
            return Some(change);
        }
        let mut own = match writer.own.try_lock() {
            Ok(own) => own,
            Err(std::sync::TryLockError::WouldBlock) => return Some(change),
            Err(std::sync::TryLockError::Poisoned(poisoned)) => opened_anew(poisoned),
        };
        let Some(turn) = writer.pool.try_acquire() else {
            return Some(change);
        };
        *own = commit_on(own.take(), &writer.open, vec![change]);
        drop(own);
        drop(turn);
        None
    }
}

/// The writer of the changes made on its own connection, run on a thread of its own.
async fn write_raw(writer: Arc<Writer>, mut waiting: mpsc::UnboundedReceiver<Change>) {
    while let Some(first) = waiting.recv().await {
        // The turn: while the writer holds sqlx's one writer connection, no other write runs.
        // Taken before the group is, so the changes that come meanwhile go in it.
        let turn = writer.pool.acquire().await;
        // A caller alone may be committing on the connection: the group waits for it.
        let mut own = writer.own();
        let group = gather(first, &mut waiting);
        writer.waiting.fetch_sub(group.len(), Ordering::AcqRel);
        let turn = match turn {
            Ok(connection) => connection,
            Err(error) => {
                refuse_all(group, error);
                continue;
            }
        };
        // The group runs on the writer's thread, without a hop per statement.
        *own = commit_on(own.take(), &writer.open, group);
        drop(own);
        drop(turn);
    }
}

/// Makes and commits `group` on the writer's connection, opened anew when there is none; the
/// connection, when it may be kept.
fn commit_on(
    connection: Option<rusqlite::Connection>,
    open: &Opener,
    group: Vec<Change>,
) -> Option<rusqlite::Connection> {
    let connection = match connection {
        Some(connection) => connection,
        None => match open() {
            Ok(connection) => {
                // Room for every statement the changes run, so none is prepared twice.
                connection.set_prepared_statement_cache_capacity(STATEMENTS_CACHED);
                connection
            }
            Err(error) => {
                refuse_all(group, raw_fault(error));
                return None;
            }
        },
    };
    commit_raw_group(&connection, group).then_some(connection)
}

fn refuse_all(group: Vec<Change>, error: sqlx::Error) {
    let error = Arc::new(error);
    for change in group {
        refuse(change, &error);
    }
}

/// The changes in one `BEGIN IMMEDIATE` transaction, committed, and each answered: all made
/// one after the other, or, when one of them fails, made again each in a savepoint of its own.
/// Whether the connection may be kept: it is outside any transaction, and no fault of the
/// database's rolled the group back (a change refused for what it asked, such as a taken id, is
/// no fault of the connection's).
fn commit_raw_group(connection: &rusqlite::Connection, mut group: Vec<Change>) -> bool {
    if let Err(error) = run(connection, "BEGIN IMMEDIATE") {
        refuse_all(group, error);
        return false;
    }
    if let Some(made) = made_together(connection, &mut group) {
        let made = group
            .into_iter()
            .zip(made)
            .map(|(change, made)| (made, change.into_answer()));
        return commit_made(connection, made.collect(), None);
    }
    // One failed: nothing of the group stays, and each change is made again alone.
    let again = if connection.is_autocommit() {
        run(connection, "BEGIN IMMEDIATE")
    } else {
        run(connection, "ROLLBACK").and_then(|()| run(connection, "BEGIN IMMEDIATE"))
    };
    if let Err(error) = again {
        refuse_all(group, error);
        return false;
    }
    let mut made = Vec::with_capacity(group.len());
    let mut broken: Option<Arc<sqlx::Error>> = None;
    for mut change in group {
        if let Some(error) = &broken {
            refuse(change, error);
            continue;
        }
        if let Err(error) = run(connection, "SAVEPOINT grouped") {
            let error = Arc::new(error);
            refuse(change, &error);
            broken = Some(error);
            continue;
        }
        let result = (change.make)(connection);
        let end = if result.is_err() {
            run(connection, "ROLLBACK TO grouped").and_then(|()| run(connection, "RELEASE grouped"))
        } else {
            run(connection, "RELEASE grouped")
        };
        if let Err(error) = end {
            // The transaction cannot go on: the changes before this one are lost with it,
            // and the rest are answered with the fault without being made.
            broken = Some(Arc::new(error));
        }
        made.push((result, change.into_answer()));
    }
    commit_made(connection, made, broken)
}

/// What every change of `group` made, one after the other in the transaction; `None` at the
/// first that fails (the others are not made) when there are several. A change alone keeps
/// what it made, failed or not: there is nothing to make again.
fn made_together(connection: &rusqlite::Connection, group: &mut [Change]) -> Option<Vec<Made>> {
    let mut made = Vec::with_capacity(group.len());
    let alone = group.len() == 1;
    for change in group.iter_mut() {
        let result = (change.make)(connection);
        if result.is_err() && !alone {
            return None;
        }
        made.push(result);
    }
    Some(made)
}

/// Commits what the changes `made`, unless the group is `broken` or none of them made
/// anything, rolls back what is not committed, and answers each change. Whether the
/// connection may be kept (see [`commit_raw_group`]).
fn commit_made(
    connection: &rusqlite::Connection,
    made: Vec<(Made, oneshot::Sender<Made>)>,
    broken: Option<Arc<sqlx::Error>>,
) -> bool {
    let all_failed = made.iter().all(|(result, _)| result.is_err());
    let faulted = made
        .iter()
        .any(|(result, _)| matches!(result, Err(StoreError::Database(_) | StoreError::Commit(_))));
    let commit = match broken {
        Some(error) => Some(error),
        // Nothing to keep (and a change alone that failed may have left a part of itself).
        None if all_failed => None,
        None => run(connection, "COMMIT").err().map(Arc::new),
    };
    let mut keep = commit.is_none() && !faulted;
    if !connection.is_autocommit() {
        // A group broken, failed or whose commit failed: nothing of it stays.
        if let Err(error) = run(connection, "ROLLBACK") {
            tracing::warn!(%error, "the SQLite writer's transaction did not roll back");
            keep = false;
        }
    }
    answer(made, commit);
    keep
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

    /// sqlx's one connection to a new file in WAL mode at `path`.
    async fn wal_file(path: &std::path::Path) -> sqlx::SqlitePool {
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{}", path.display()))
            .unwrap()
            .create_if_missing(true)
            .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal);
        SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .unwrap()
    }

    /// A new file at `path` with a table `t (x INTEGER PRIMARY KEY)`, sqlx's connection to it
    /// and a group writer of its own.
    async fn table_group(path: &std::path::Path) -> (sqlx::SqlitePool, RawGroup) {
        let pool = wal_file(path).await;
        sqlx::query("CREATE TABLE t (x INTEGER PRIMARY KEY)")
            .execute(&pool)
            .await
            .unwrap();
        let path = path.to_owned();
        let opener: Opener = Box::new(move || rusqlite::Connection::open(&path));
        (pool.clone(), RawGroup::start(pool, opener))
    }

    /// A group takes every change waiting up to `GROUP_CHANGES_MAX`: that many go in one, and
    /// of one more, the last goes in the next group.
    #[tokio::test]
    async fn a_group_holds_at_most_its_changes() {
        for (waiting, groups) in [
            (GROUP_CHANGES_MAX, vec![GROUP_CHANGES_MAX]),
            (GROUP_CHANGES_MAX + 1, vec![GROUP_CHANGES_MAX, 1]),
        ] {
            let (changes, mut queue) = mpsc::unbounded_channel();
            for _ in 0..waiting {
                let (answer, _) = oneshot::channel();
                let make: RawMake = Box::new(|_| Ok(Box::new(()) as Box<dyn Any + Send>));
                changes.send(Change { make, answer }).unwrap();
            }
            let mut sizes = Vec::new();
            for _ in 0..groups.len() {
                let first = queue.recv().await.expect("a change waiting");
                sizes.push(gather(first, &mut queue).len());
            }
            assert_eq!(sizes, groups);
            assert!(queue.is_empty());
        }
    }

    /// A change alone, with the connection and the turn free, is committed on its caller's
    /// thread; one sent while the turn is held goes to the writer's thread, and so does one
    /// sent while another waits for it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_change_alone_is_committed_by_its_caller() {
        let dir = tempfile::tempdir().unwrap();
        let (pool, group) = table_group(&dir.path().join("t.db")).await;
        let thread = |x: i64| {
            group.change(move |connection| {
                connection
                    .execute("INSERT INTO t (x) VALUES (?1)", [x])
                    .map_err(|error| StoreError::Database(raw_fault(error)))?;
                Ok(std::thread::current().name().map(str::to_owned))
            })
        };
        // sqlx gives its connection back to the pool a moment after each use.
        let idle = || async {
            while pool.num_idle() == 0 {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
        };
        let writer = Some("sqlite-writer".to_owned());
        idle().await;
        let alone = thread(1).await.unwrap();
        assert_ne!(alone, writer, "made by its caller");
        let held = pool.acquire().await.unwrap();
        let give_back = async move {
            tokio::task::yield_now().await;
            drop(held);
        };
        let (first, second, ()) = tokio::join!(thread(2), thread(3), give_back);
        assert_eq!(
            [first.unwrap(), second.unwrap()],
            [writer.clone(), writer.clone()]
        );
        idle().await;
        assert_ne!(thread(4).await.unwrap(), writer);
        let stored: Vec<i64> = sqlx::query_scalar("SELECT x FROM t ORDER BY x")
            .fetch_all(&pool)
            .await
            .unwrap();
        assert_eq!(stored, [1, 2, 3, 4]);
    }

    /// On a runtime of several threads (the writer on a thread of its own), changes sent at
    /// once to the writer stand or fall each alone: one that wrote and then failed leaves
    /// nothing, the others commit, and sqlx's writes go on beside the writer's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn raw_changes_stand_or_fall_each_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (pool, group) = table_group(&dir.path().join("t.db")).await;
        let group = Arc::new(group);
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

    /// A group whose changes all succeed makes each once, without savepoints; one that fails
    /// sends the group back to be made again, each change in a savepoint of its own, where the
    /// one that fails leaves nothing and the others are committed. (Changes sent while the
    /// writer waits for its turn, sqlx's connection held here, go in one group.)
    #[tokio::test]
    async fn a_group_is_made_again_in_savepoints_only_when_a_change_fails() {
        let dir = tempfile::tempdir().unwrap();
        let (pool, group) = table_group(&dir.path().join("t.db")).await;
        let made = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let change = |x: i64, refused: bool| {
            let made = made.clone();
            group.change(move |connection| {
                made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                connection
                    .execute("INSERT INTO t (x) VALUES (?1)", [x])
                    .map_err(|error| StoreError::Database(raw_fault(error)))?;
                if refused {
                    return Err(StoreError::Conflict(format!("{x} refused")));
                }
                Ok(x)
            })
        };
        // Sends its changes while the writer waits for its turn, then gives the turn back.
        let held = pool.acquire().await.unwrap();
        let give_back = async move {
            tokio::task::yield_now().await;
            drop(held);
        };
        let together = tokio::join!(
            change(1, false),
            change(2, false),
            change(3, false),
            give_back
        );
        assert_eq!(
            [
                together.0.unwrap(),
                together.1.unwrap(),
                together.2.unwrap()
            ],
            [1, 2, 3]
        );
        assert_eq!(
            made.swap(0, std::sync::atomic::Ordering::Relaxed),
            3,
            "each made once"
        );

        let held = pool.acquire().await.unwrap();
        let give_back = async move {
            tokio::task::yield_now().await;
            drop(held);
        };
        let (first, refused, last, ()) = tokio::join!(
            change(4, false),
            change(5, true),
            change(6, false),
            give_back
        );
        assert_eq!(first.unwrap(), 4);
        assert!(matches!(refused, Err(StoreError::Conflict(message)) if message == "5 refused"));
        assert_eq!(last.unwrap(), 6);
        // 4 and 5 together, then 4, 5 and 6 each in its savepoint.
        assert_eq!(made.load(std::sync::atomic::Ordering::Relaxed), 5);
        let stored: Vec<i64> = sqlx::query_scalar("SELECT x FROM t ORDER BY x")
            .fetch_all(&pool)
            .await
            .unwrap();
        assert_eq!(stored, [1, 2, 3, 4, 6]);
    }

    /// The writer keeps its connection from one group to the next, also past a change refused
    /// for what it asked; after a fault of the database's it opens a new one. (A temporary
    /// table lives as long as the connection that made it.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_writer_keeps_its_connection_until_a_fault() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let pool = wal_file(&path).await;
        let opener: Opener = Box::new(move || rusqlite::Connection::open(&path));
        let group = RawGroup::start(pool, opener);
        let marked = |connection: &rusqlite::Connection| -> Result<bool> {
            connection
                .query_row(
                    "SELECT count(*) FROM sqlite_temp_master WHERE name = 'marker'",
                    [],
                    |row| row.get::<_, i64>(0),
                )
                .map(|count| count == 1)
                .map_err(|error| StoreError::Database(raw_fault(error)))
        };
        group
            .change(|connection| {
                connection
                    .execute("CREATE TEMP TABLE marker (x)", [])
                    .map_err(|error| StoreError::Database(raw_fault(error)))
            })
            .await
            .unwrap();
        assert!(group.change(marked).await.unwrap());
        let refused = group
            .change(|_| -> Result<()> { Err(StoreError::Conflict("taken".into())) })
            .await;
        assert!(matches!(refused, Err(StoreError::Conflict(_))));
        assert!(group.change(marked).await.unwrap(), "kept past a refusal");
        let fault = group
            .change(|_| -> Result<()> { Err(StoreError::Database(sqlx::Error::PoolTimedOut)) })
            .await;
        assert!(matches!(fault, Err(StoreError::Database(_))));
        assert!(
            !group.change(marked).await.unwrap(),
            "opened anew after a fault"
        );
    }
}
