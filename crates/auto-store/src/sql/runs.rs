//! The changes to runs: a run started, started again, its events recorded, its ending, and the
//! ending's news to its parent.

use sqlx::Transaction;
use sqlx::types::Json;

use super::rows::run_from_row;
use super::{Reserved, SqlStore, insert_events, reserve_seqs};
use crate::dialect::{Dialect, Statement, StoredTime, built_sql, sql};
use crate::shared::{
    check_ending_status, open_calls_reached, run_change_refused, run_columns, run_events,
};
use crate::{Event, NewEvent, NewRun, PlaybookRef, Result, Run, RunEnding, StoreError};

pub(super) async fn start<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    new: NewRun,
    events: Vec<NewEvent>,
) -> Result<(Run, Vec<Event>)> {
    let (events, last_run_seq) = run_events(&new.run_id, events)?;
    let playbook = playbook.clone();
    store
        .change(move |tx| {
            Box::pin(async move {
                let reserved = reserve_seqs(&mut *tx, &playbook, events.len()).await?;
                let run = insert_run(&mut *tx, &playbook, &reserved, &new, last_run_seq).await?;
                let events = insert_events(&mut *tx, &playbook, &reserved, events).await?;
                Ok((run, events))
            })
        })
        .await
}

/// What `restart_run` asks of a run's next attempt.
pub(super) struct NextAttempt {
    /// The attempt the run is at: compare-and-set.
    pub(super) expected_attempt: i64,
    /// The version of its definition the attempt runs.
    pub(super) definition_version: i64,
}

pub(super) async fn restart<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    run_id: &str,
    attempt: NextAttempt,
    events: Vec<NewEvent>,
) -> Result<(Run, Vec<Event>)> {
    let NextAttempt {
        expected_attempt,
        definition_version,
    } = attempt;
    let (events, last_run_seq) = run_events(run_id, events)?;
    let playbook = playbook.clone();
    let run_id = run_id.to_owned();
    store
        .change(move |tx| {
            Box::pin(async move {
                let run_id = run_id.as_str();
                let playbook = &playbook;
                let reserved = reserve_seqs(&mut *tx, playbook, events.len()).await?;
                let row = built_sql::<D>(format!(
        concat!(
            "UPDATE runs SET status = 'started', output = NULL, record = NULL, problem = NULL, \
             ended_at = NULL, attempt = attempt + 1, last_run_seq = {}(last_run_seq, $4), \
             last_event_at = $5, started_at = $5, definition_version = $6 \
             WHERE playbook_pk = $1 AND run_id = $2 AND status <> 'started' AND attempt = $3 \
             RETURNING ",
            run_columns!()
        ),
        D::GREATEST
    ))
    .bind(reserved.playbook_pk)
    .bind(run_id)
    .bind(expected_attempt)
    .bind(last_run_seq)
    .bind(&reserved.now.stored)
    .bind(definition_version)
    .fetch_optional(&mut *tx)
    .await?;
                let Some(row) = row else {
                    let stored = stored_run_state(&mut *tx, reserved.playbook_pk, run_id).await?;
                    return Err(run_change_refused(
                        playbook,
                        run_id,
                        stored,
                        Some(expected_attempt),
                    )?);
                };
                let run = run_from_row(&row)?;
                let events = insert_events(&mut *tx, playbook, &reserved, events).await?;
                Ok((run, events))
            })
        })
        .await
}

pub(super) async fn record_events<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    run_id: &str,
    events: Vec<NewEvent>,
) -> Result<Vec<Event>> {
    let (events, last_run_seq) = run_events(run_id, events)?;
    let playbook = playbook.clone();
    let run_id = run_id.to_owned();
    store
        .change(move |tx| {
            Box::pin(async move {
                let reserved = reserve_seqs(&mut *tx, &playbook, events.len()).await?;
                touch_run(&mut *tx, &playbook, &reserved, &run_id, last_run_seq).await?;
                insert_events(&mut *tx, &playbook, &reserved, events).await
            })
        })
        .await
}

pub(super) async fn end<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    run_id: &str,
    ending: RunEnding,
    events: Vec<NewEvent>,
) -> Result<(Run, Vec<Event>)> {
    check_ending_status(ending.status, run_id)?;
    let (events, last_run_seq) = run_events(run_id, events)?;
    let playbook = playbook.clone();
    let run_id = run_id.to_owned();
    store
        .change(move |tx| {
            Box::pin(async move {
                let reserved = reserve_seqs(&mut *tx, &playbook, events.len()).await?;
                let run = end_run_in(
                    &mut *tx,
                    &playbook,
                    &reserved,
                    &run_id,
                    &ending,
                    last_run_seq,
                )
                .await?;
                let events = insert_events(&mut *tx, &playbook, &reserved, events).await?;
                Ok((run, events))
            })
        })
        .await
}

/// The status and attempt of a run, when there is one.
pub(super) async fn stored_run_state<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook_pk: i64,
    run_id: &str,
) -> Result<Option<(String, i64)>> {
    let row = sql::<D>("SELECT status, attempt FROM runs WHERE playbook_pk = $1 AND run_id = $2")
        .bind(playbook_pk)
        .bind(run_id)
        .fetch_optional(&mut *tx)
        .await?;
    row.map(|row| Ok((row.get("status")?, row.get("attempt")?)))
        .transpose()
}

/// Records that a `started` run has new events: raises its `last_run_seq` to `last_run_seq`
/// and sets its `last_event_at`. `Conflict` when the run has ended; `NotFound` when there is
/// none.
pub(super) async fn touch_run<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook: &PlaybookRef,
    reserved: &Reserved<D>,
    run_id: &str,
    last_run_seq: i64,
) -> Result<()> {
    let updated: Option<i64> = built_sql::<D>(format!(
        "UPDATE runs SET last_run_seq = {}(last_run_seq, $3), last_event_at = $4 \
         WHERE playbook_pk = $1 AND run_id = $2 AND status = 'started' RETURNING attempt",
        D::GREATEST
    ))
    .bind(reserved.playbook_pk)
    .bind(run_id)
    .bind(last_run_seq)
    .bind(&reserved.now.stored)
    .scalar_optional(&mut *tx)
    .await?;
    if updated.is_none() {
        let stored = stored_run_state(tx, reserved.playbook_pk, run_id).await?;
        return Err(run_change_refused(playbook, run_id, stored, None)?);
    }
    Ok(())
}

/// Records a new run as `started` inside a change's transaction: refused with `LimitReached`
/// past the calls its tree may wait for (`open_calls_max`), and with `Conflict` when the
/// playbook has a run of that id. Shared by `start_run` and `start_interaction`.
pub(super) async fn insert_run<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook: &PlaybookRef,
    reserved: &Reserved<D>,
    new: &NewRun,
    last_run_seq: i64,
) -> Result<Run> {
    if let (Some(root), Some(max)) = (&new.root_run_id, new.open_calls_max) {
        // The count holds until the commit: on PostgreSQL the top run's row is the lock of its
        // tree's count; SQLite has one writer.
        if !D::FOR_UPDATE.is_empty() {
            built_sql::<D>(format!(
                "SELECT 1 FROM runs WHERE playbook_pk = $1 AND run_id = $2{}",
                D::FOR_UPDATE
            ))
            .bind(reserved.playbook_pk)
            .bind(root.as_str())
            .execute(&mut *tx)
            .await?;
        }
        let open: i64 = sql::<D>(
            "SELECT count(*) FROM runs WHERE playbook_pk = $1 AND root_run_id = $2 \
             AND status = 'started'",
        )
        .bind(reserved.playbook_pk)
        .bind(root.as_str())
        .scalar(&mut *tx)
        .await?;
        if open >= max {
            return Err(open_calls_reached(root, open, max));
        }
    }
    let statement = built_sql::<D>(format!(
        "INSERT INTO runs {RUN_INSERT_COLUMNS} VALUES {} \
         ON CONFLICT (playbook_pk, run_id) DO NOTHING RETURNING {}",
        run_values(0),
        run_columns!()
    ));
    let row = bind_run(statement, reserved, new, last_run_seq, None)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(row) = row else {
        return Err(run_taken(playbook, &new.run_id));
    };
    run_from_row(&row)
}

/// Records runs that began and ended within their caller's step, each as it ended, in one
/// statement. They never wait, so the calls their tree may wait for do not count them.
/// `Conflict` when the playbook has a run of one of their ids.
pub(super) async fn insert_ended_runs<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook: &PlaybookRef,
    reserved: &Reserved<D>,
    runs: &[(&NewRun, i64, &RunEnding)],
) -> Result<()> {
    if runs.is_empty() {
        return Ok(());
    }
    let values: Vec<String> = (0..runs.len())
        .map(|index| run_values(index * RUN_VALUES))
        .collect();
    let mut statement = built_sql::<D>(format!(
        "INSERT INTO runs {RUN_INSERT_COLUMNS} VALUES {} \
         ON CONFLICT (playbook_pk, run_id) DO NOTHING RETURNING run_id",
        values.join(", ")
    ));
    for (new, last_run_seq, ending) in runs {
        statement = bind_run(statement, reserved, new, *last_run_seq, Some(ending));
    }
    let inserted: Vec<String> = statement
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|row| row.at(0))
        .collect::<Result<_>>()?;
    match runs
        .iter()
        .find(|(new, _, _)| !inserted.contains(&new.run_id))
    {
        Some((taken, _, _)) => Err(run_taken(playbook, &taken.run_id)),
        None => Ok(()),
    }
}

fn run_taken(playbook: &PlaybookRef, run_id: &str) -> StoreError {
    StoreError::Conflict(format!(
        "the playbook {}/{} has a run {run_id}",
        playbook.org, playbook.playbook
    ))
}

/// The columns a new run is inserted with.
const RUN_INSERT_COLUMNS: &str = "(playbook_pk, run_id, def_type, name, definition_version, \
    status, input, started_by, parent_run_id, task_reference, depth, call_depth, trigger_info, \
    attempt, last_run_seq, last_event_at, started_at, parent_call_id, root_run_id, \
    ending_work_key, ending_work_payload, ending_work_ordered, output, record, problem, ended_at)";

/// How many parameters [`bind_run`] binds for one run.
const RUN_VALUES: usize = 24;

/// The values of one new run under [`RUN_INSERT_COLUMNS`], its parameters numbered after
/// `before`, in the order [`bind_run`] binds them.
fn run_values(before: usize) -> String {
    let p = |k: usize| format!("${}", before + k);
    format!(
        "({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, 1, {}, {}, {}, {}, {}, {}, {}, {}, \
         {}, {}, {}, CASE WHEN {} = 'started' THEN NULL ELSE {} END)",
        p(1),
        p(2),
        p(3),
        p(4),
        p(5),
        p(21),
        p(6),
        p(7),
        p(8),
        p(9),
        p(10),
        p(11),
        p(12),
        p(13),
        p(14),
        p(20),
        p(15),
        p(16),
        p(17),
        p(18),
        p(19),
        p(22),
        p(23),
        p(24),
        p(21),
        p(14),
    )
}

/// Binds a new run's [`RUN_VALUES`] parameters: `started`, or as it ended with `ending`.
fn bind_run<D: Dialect>(
    statement: Statement<D>,
    reserved: &Reserved<D>,
    new: &NewRun,
    last_run_seq: i64,
    ending: Option<&RunEnding>,
) -> Statement<D> {
    let ending_work = new.ending_work.as_ref();
    statement
        .bind(reserved.playbook_pk)
        .bind(new.run_id.as_str())
        .bind(new.key.def_type.as_str())
        .bind(new.key.name.as_str())
        .bind(new.definition_version)
        .bind(Json(&new.input))
        .bind(new.started_by.as_str())
        .bind(new.parent_run_id.as_deref())
        .bind(new.task_reference.as_deref())
        .bind(new.depth)
        .bind(new.call_depth)
        .bind(new.trigger.as_ref().map(Json))
        .bind(last_run_seq)
        .bind(&reserved.now.stored)
        .bind(new.parent_call_id.as_deref())
        .bind(new.root_run_id.as_deref())
        .bind(ending_work.map(|work| work.key.as_str()))
        .bind(ending_work.map(|work| work.payload.as_slice()))
        .bind(ending_work.is_some_and(|work| work.ordered))
        .bind(
            new.started_at
                .map_or_else(|| reserved.now.stored.clone(), D::Time::from_time),
        )
        .bind(ending.map_or("started", |ending| ending.status.as_str()))
        .bind(ending.and_then(|ending| ending.output.as_ref()).map(Json))
        .bind(ending.and_then(|ending| ending.record.as_ref()).map(Json))
        .bind(ending.and_then(|ending| ending.problem.as_ref()).map(Json))
}

/// Ends a `started` run inside a change's transaction: what `end_run` records, shared with
/// `close_request` and the workflow step that ends its run, so every run ends the same way.
/// `Conflict` when the run has ended; `NotFound` when there is none.
pub(super) async fn end_run_in<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook: &PlaybookRef,
    reserved: &Reserved<D>,
    run_id: &str,
    ending: &RunEnding,
    last_run_seq: i64,
) -> Result<Run> {
    let row = built_sql::<D>(format!(
        concat!(
            "UPDATE runs SET status = $3, output = $4, record = $5, problem = $6, ended_at = $8, \
             last_run_seq = {}(last_run_seq, $7), last_event_at = $8 \
             WHERE playbook_pk = $1 AND run_id = $2 AND status = 'started' RETURNING ",
            run_columns!()
        ),
        D::GREATEST
    ))
    .bind(reserved.playbook_pk)
    .bind(run_id)
    .bind(ending.status.as_str())
    .bind(ending.output.as_ref().map(Json))
    .bind(ending.record.as_ref().map(Json))
    .bind(ending.problem.as_ref().map(Json))
    .bind(last_run_seq)
    .bind(&reserved.now.stored)
    .fetch_optional(&mut *tx)
    .await?;
    let Some(row) = row else {
        let stored = stored_run_state(tx, reserved.playbook_pk, run_id).await?;
        return Err(run_change_refused(playbook, run_id, stored, None)?);
    };
    let ended = run_from_row(&row)?;
    // A child's ending reaches its parent in the same transaction.
    if ended.parent_run_id.is_some() {
        notify_parent(tx, reserved.playbook_pk, run_id, &reserved.now.stored).await?;
    }
    Ok(ended)
}

/// A child's ending reaches its parent: the work it was started with, added to the parent
/// run in the ending's transaction.
pub(super) async fn notify_parent<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook_pk: i64,
    run_id: &str,
    now: &D::Time,
) -> Result<()> {
    sql::<D>(
        "INSERT INTO work (playbook_pk, run_id, key, due_at, payload, ordered) \
         SELECT playbook_pk, parent_run_id, ending_work_key, $3, ending_work_payload, \
         ending_work_ordered FROM runs WHERE playbook_pk = $1 AND run_id = $2 \
         AND parent_run_id IS NOT NULL AND ending_work_key IS NOT NULL \
         ON CONFLICT (playbook_pk, run_id, key) DO NOTHING",
    )
    .bind(playbook_pk)
    .bind(run_id)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    Ok(())
}
