//! The changes to runs: a run started, started again, its events recorded, its ending, and the
//! ending's news to its parent.

use serde_json::Value;
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
    let mut tx = store.begin().await?;
    let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
    let run = insert_run(&mut tx, playbook, &reserved, &new, last_run_seq).await?;
    let events = insert_events(&mut tx, playbook, &reserved, events).await?;
    tx.commit().await?;
    Ok((run, events))
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
    let mut tx = store.begin().await?;
    let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
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
    .fetch_optional(&mut tx)
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

pub(super) async fn record_events<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    run_id: &str,
    events: Vec<NewEvent>,
) -> Result<Vec<Event>> {
    let (events, last_run_seq) = run_events(run_id, events)?;
    let mut tx = store.begin().await?;
    let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
    touch_run(&mut tx, playbook, &reserved, run_id, last_run_seq).await?;
    let events = insert_events(&mut tx, playbook, &reserved, events).await?;
    tx.commit().await?;
    Ok(events)
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
    let mut tx = store.begin().await?;
    let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
    let run = end_run_in(&mut tx, playbook, &reserved, run_id, &ending, last_run_seq).await?;
    let events = insert_events(&mut tx, playbook, &reserved, events).await?;
    tx.commit().await?;
    Ok((run, events))
}

/// The status and attempt of a run, when there is one.
pub(super) async fn stored_run_state<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook_pk: i64,
    run_id: &str,
) -> Result<Option<(String, i64)>> {
    let row = sql::<D>(STORED_RUN_STATE)
        .bind(playbook_pk)
        .bind(run_id)
        .fetch_optional(&mut *tx)
        .await?;
    row.map(|row| Ok((row.get("status")?, row.get("attempt")?)))
        .transpose()
}

/// The status and attempt of the run `$2` of the playbook `$1`.
pub(super) const STORED_RUN_STATE: &str =
    "SELECT status, attempt FROM runs WHERE playbook_pk = $1 AND run_id = $2";

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
    let updated: Option<i64> = built_sql::<D>(touch_run_sql::<D>())
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

/// The statement of [`touch_run`]: the run `$2` of the playbook `$1`, at `last_run_seq` `$3`
/// and time `$4`; it returns the run's attempt when it is `started`.
pub(super) fn touch_run_sql<D: Dialect>() -> String {
    format!("{} RETURNING attempt", touch_run_change::<D>())
}

/// [`touch_run_sql`] without what it returns: the run was touched when it changed a row.
pub(super) fn touch_run_change<D: Dialect>() -> String {
    format!(
        "UPDATE runs SET last_run_seq = {}(last_run_seq, $3), last_event_at = $4 \
         WHERE playbook_pk = $1 AND run_id = $2 AND status = 'started'",
        D::GREATEST
    )
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
        let open: i64 = sql::<D>(OPEN_CALLS)
            .bind(reserved.playbook_pk)
            .bind(root.as_str())
            .scalar(&mut *tx)
            .await?;
        if open >= max {
            return Err(open_calls_reached(root, open, max));
        }
    }
    let statement = built_sql::<D>(insert_run_sql());
    let row = bind_run(statement, reserved, new, last_run_seq, None)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(row) = row else {
        return Err(run_taken(playbook, &new.run_id));
    };
    run_from_row(&row)
}

/// The runs of the tree under `$2` of the playbook `$1` that are `started`.
pub(super) const OPEN_CALLS: &str = "SELECT count(*) FROM runs WHERE playbook_pk = $1 \
    AND root_run_id = $2 AND status = 'started'";

/// The statement of [`insert_run`], with the parameters of [`run_params`]: it returns the run
/// unless the playbook has one of its id.
pub(super) fn insert_run_sql() -> String {
    format!("{} RETURNING {}", insert_runs_change(1), run_columns!())
}

/// The statement of [`insert_ended_runs`] for `count` runs, each with the parameters of
/// [`run_params`]: it returns the ids of those inserted.
pub(super) fn insert_ended_runs_sql(count: usize) -> String {
    format!("{} RETURNING run_id", insert_runs_change(count))
}

/// The insert of `count` runs, each with the parameters of [`run_params`], that passes over a
/// run whose id the playbook has, returning nothing.
pub(super) fn insert_runs_change(count: usize) -> String {
    let values: Vec<String> = (0..count)
        .map(|index| run_values(index * RUN_VALUES))
        .collect();
    format!(
        "INSERT INTO runs {RUN_INSERT_COLUMNS} VALUES {} \
         ON CONFLICT (playbook_pk, run_id) DO NOTHING",
        values.join(", ")
    )
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
    let mut statement = built_sql::<D>(insert_ended_runs_sql(runs.len()));
    for (new, last_run_seq, ending) in runs {
        statement = bind_run(statement, reserved, new, *last_run_seq, Some(ending));
    }
    let inserted: Vec<String> = statement
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|row| row.at(0))
        .collect::<Result<_>>()?;
    check_ended_runs(playbook, runs, &inserted)
}

/// `Conflict` unless every one of `runs` is among those `inserted`.
pub(super) fn check_ended_runs(
    playbook: &PlaybookRef,
    runs: &[(&NewRun, i64, &RunEnding)],
    inserted: &[String],
) -> Result<()> {
    match runs
        .iter()
        .find(|(new, _, _)| !inserted.contains(&new.run_id))
    {
        Some((taken, _, _)) => Err(run_taken(playbook, &taken.run_id)),
        None => Ok(()),
    }
}

pub(super) fn run_taken(playbook: &PlaybookRef, run_id: &str) -> StoreError {
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
pub(super) const RUN_VALUES: usize = 24;

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
    run_params(reserved, new, last_run_seq, ending)
        .into_iter()
        .fold(statement, |statement, param| match param {
            RunParam::Int(value) => statement.bind(value),
            RunParam::Bool(value) => statement.bind(value),
            RunParam::Text(value) => statement.bind(value),
            RunParam::Json(value) => statement.bind(value.map(Json)),
            RunParam::Bytes(value) => statement.bind(value),
            RunParam::Time(value) => statement.bind(value),
        })
}

/// One parameter of a new run, as either way of making a change binds it.
pub(super) enum RunParam<'a, T> {
    Int(Option<i64>),
    Bool(bool),
    Text(Option<&'a str>),
    Json(Option<&'a Value>),
    Bytes(Option<&'a [u8]>),
    Time(T),
}

/// A new run's [`RUN_VALUES`] parameters, in the order [`run_values`] numbers them: `started`,
/// or as it ended with `ending`.
pub(super) fn run_params<'a, D: Dialect>(
    reserved: &Reserved<D>,
    new: &'a NewRun,
    last_run_seq: i64,
    ending: Option<&'a RunEnding>,
) -> [RunParam<'a, D::Time>; RUN_VALUES] {
    use RunParam::{Bool, Bytes, Int, Text, Time};
    let ending_work = new.ending_work.as_ref();
    [
        Int(Some(reserved.playbook_pk)),
        Text(Some(new.run_id.as_str())),
        Text(Some(new.key.def_type.as_str())),
        Text(Some(new.key.name.as_str())),
        Int(Some(new.definition_version)),
        RunParam::Json(Some(&new.input)),
        Text(Some(new.started_by.as_str())),
        Text(new.parent_run_id.as_deref()),
        Text(new.task_reference.as_deref()),
        Int(new.depth),
        Int(new.call_depth),
        RunParam::Json(new.trigger.as_ref()),
        Int(Some(last_run_seq)),
        Time(reserved.now.stored.clone()),
        Text(new.parent_call_id.as_deref()),
        Text(new.root_run_id.as_deref()),
        Text(ending_work.map(|work| work.key.as_str())),
        Bytes(ending_work.map(|work| work.payload.as_slice())),
        Bool(ending_work.is_some_and(|work| work.ordered)),
        Time(
            new.started_at
                .map_or_else(|| reserved.now.stored.clone(), D::Time::from_time),
        ),
        Text(Some(
            ending.map_or("started", |ending| ending.status.as_str()),
        )),
        RunParam::Json(ending.and_then(|ending| ending.output.as_ref())),
        RunParam::Json(ending.and_then(|ending| ending.record.as_ref())),
        RunParam::Json(ending.and_then(|ending| ending.problem.as_ref())),
    ]
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
    let row = built_sql::<D>(end_run_sql::<D>())
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

/// The statement of [`end_run_in`]: the run `$2` of the playbook `$1` ends with status `$3`,
/// output, record and problem `$4`-`$6`, at `last_run_seq` `$7` and time `$8`, when it is
/// `started`; it returns the run.
pub(super) fn end_run_sql<D: Dialect>() -> String {
    format!(
        concat!("{} RETURNING ", run_columns!()),
        end_run_change::<D>()
    )
}

/// [`end_run_sql`] without what it returns: the run ended when it changed a row.
pub(super) fn end_run_change<D: Dialect>() -> String {
    format!(
        "UPDATE runs SET status = $3, output = $4, record = $5, problem = $6, ended_at = $8, \
         last_run_seq = {}(last_run_seq, $7), last_event_at = $8 \
         WHERE playbook_pk = $1 AND run_id = $2 AND status = 'started'",
        D::GREATEST
    )
}

/// The run `$2` of the playbook `$1`, as the statements that return a run return it.
pub(super) const SELECT_RUN: &str = concat!(
    "SELECT ",
    run_columns!(),
    " FROM runs WHERE playbook_pk = $1 AND run_id = $2"
);

/// The statement of [`notify_parent`]: the run `$2` of the playbook `$1` ended at `$3`.
pub(super) const NOTIFY_PARENT: &str = "INSERT INTO work (playbook_pk, run_id, key, due_at, \
    payload, ordered) SELECT playbook_pk, parent_run_id, ending_work_key, $3, \
    ending_work_payload, ending_work_ordered FROM runs WHERE playbook_pk = $1 AND run_id = $2 \
    AND parent_run_id IS NOT NULL AND ending_work_key IS NOT NULL \
    ON CONFLICT (playbook_pk, run_id, key) DO NOTHING";

/// A child's ending reaches its parent: the work it was started with, added to the parent
/// run in the ending's transaction.
pub(super) async fn notify_parent<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook_pk: i64,
    run_id: &str,
    now: &D::Time,
) -> Result<()> {
    sql::<D>(NOTIFY_PARENT)
        .bind(playbook_pk)
        .bind(run_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    Ok(())
}
