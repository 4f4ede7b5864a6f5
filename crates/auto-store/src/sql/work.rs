//! A workflow run's steps, its work (timers, inputs, orders) and how servers claim it, the
//! events sent to runs, and the listening tasks a step begins and ends.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use sqlx::Transaction;
use sqlx::types::Json;

use super::rows::work_from_row;
use super::runs::{end_run_in, insert_ended_runs, insert_run, touch_run};
use super::{Reserved, SqlStore, insert_events, now_in, playbook_pk_in, reserve_seqs};
use crate::dialect::{Dialect, Stamp, StoredTime, built_sql, sql};
use crate::shared::{check_ending_status, last_run_seq, own_events, run_not_found, step_events};
use crate::{
    LISTENERS_MAX, NewEvent, NewListener, NewRun, NewWork, PlaybookRef, Result, RunEnding,
    RunInboxEvent, StepCommitted, StoreError, Work, WorkflowStep,
};

pub(super) async fn commit_step<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    run_id: &str,
    step: Arc<WorkflowStep>,
) -> Result<StepCommitted> {
    if let Some(whole_runs) = &store.whole_runs
        && WholeRun::is_whole(&step)
    {
        // Bound where it stands: the caller keeps it to commit again after a fault.
        let (step, last_run_seq) = prepare_shared_step(run_id, step)?;
        let run = whole_runs
            .commit(playbook, WholeRun::new(step, last_run_seq))
            .await?;
        return Ok(StepCommitted {
            version: 0,
            run: Some(run),
        });
    }
    // Taken apart into its statements' binds: a copy when the caller keeps it.
    let mut step = Arc::unwrap_or_clone(step);
    let (events, last_run_seq) = prepare_step(run_id, &mut step)?;
    let event_count = i64::try_from(events.len()).unwrap_or(i64::MAX);
    let mut tx = store.begin().await?;
    let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
    let mut run = match &step.start {
        Some(new) => Some(insert_run(&mut tx, playbook, &reserved, new, last_run_seq).await?),
        None => None,
    };
    let version = if kept_snapshot(&step) {
        write_snapshot(&mut tx, &reserved, run_id, &step).await?
    } else {
        0
    };
    let pk = reserved.playbook_pk;
    let children = ended_children(&step, &events);
    insert_ended_runs(&mut tx, playbook, &reserved, &children).await?;
    // A run recorded with this step has no work and no listeners yet, and its row is as the
    // step leaves it unless it ends.
    let fresh = step.start.is_some();
    match &step.ending {
        // An ended run waits for nothing: its timers and pending inputs go, and its parent
        // hears of the ending. The step's own work (cancelling its children) stays.
        Some(ending) => {
            run =
                Some(end_run_in(&mut tx, playbook, &reserved, run_id, ending, last_run_seq).await?);
            insert_events(&mut tx, playbook, &reserved, events).await?;
            if !fresh {
                sql::<D>(DELETE_RUN_WORK)
                    .bind(pk)
                    .bind(run_id)
                    .execute(&mut tx)
                    .await?;
            }
        }
        None => {
            if !fresh {
                touch_run(&mut tx, playbook, &reserved, run_id, last_run_seq).await?;
            }
            insert_events(&mut tx, playbook, &reserved, events).await?;
        }
    }
    insert_work(&mut tx, pk, run_id, &reserved.now, &step.add_work).await?;
    if let Some(id) = step.done_work {
        sql::<D>(DELETE_WORK).bind(id).execute(&mut tx).await?;
    }
    delete_work_keys(&mut tx, pk, run_id, &step.cancel_work).await?;
    let last_seq = reserved.first_seq - 1 + event_count;
    listen_in(&mut tx, pk, run_id, &step, last_seq).await?;
    tx.commit().await?;
    Ok(StepCommitted { version, run })
}

/// A run that begins and ends in its first step, and does nothing else a step may do (no
/// work added or removed, no count of its tree's open calls): what a workflow that runs
/// through without waiting commits, its calls' runs with it. It keeps no snapshot and no
/// listener, so it is its runs and its events, and a database may record it in one statement.
/// The step is held as its caller shares it, each event with its run's id, and read where it
/// stands: a copy of its events and runs would cost more than binding them.
pub(crate) struct WholeRun {
    step: Arc<WorkflowStep>,
    /// The last `run_seq` of each of its runs: the run's first, then its calls' runs'.
    last_run_seqs: Vec<i64>,
}

impl WholeRun {
    /// Whether `step` is a whole run.
    pub(super) fn is_whole(step: &WorkflowStep) -> bool {
        let counted = step
            .start
            .as_ref()
            .is_some_and(|run| run.root_run_id.is_some() && run.open_calls_max.is_some());
        step.start.is_some()
            && step.ending.is_some()
            && !counted
            && step.add_work.is_empty()
            && step.done_work.is_none()
            && step.cancel_work.is_empty()
    }

    /// A whole run of `step`, whose events each name their run, `last_run_seq` its run's.
    pub(super) fn new(step: Arc<WorkflowStep>, last_run_seq: i64) -> Self {
        let mut last_run_seqs = vec![last_run_seq];
        last_run_seqs.extend(
            ended_children(&step, &step.events)
                .into_iter()
                .map(|(_, last, _)| last),
        );
        WholeRun {
            step,
            last_run_seqs,
        }
    }

    /// The run first, then the runs of its calls, each with its last `run_seq` and its ending.
    pub(crate) fn runs(&self) -> impl Iterator<Item = (&NewRun, i64, &RunEnding)> {
        let step = &*self.step;
        let head = step.start.as_ref().zip(step.ending.as_ref());
        let children = step
            .children
            .iter()
            .map(|child| (&child.run, &child.ending));
        head.into_iter()
            .chain(children)
            .zip(&self.last_run_seqs)
            .map(|((run, ending), last)| (run, *last, ending))
    }

    /// The run the step is of.
    pub(crate) fn run(&self) -> Option<&NewRun> {
        self.step.start.as_ref()
    }

    /// Every event of the step, each with its run's id.
    pub(crate) fn events(&self) -> &[NewEvent] {
        &self.step.events
    }
}

/// Whether the step writes the run's snapshot: not when it records the run and ends it, since
/// only a started run's snapshot is ever read (to take its next step), and the run's id, taken
/// by the insert, already refuses a second first step.
pub(super) fn kept_snapshot(step: &WorkflowStep) -> bool {
    step.start.is_none() || step.ending.is_none()
}

/// Refuses a step that cannot be made, before anything changes: the step's events (each with
/// its run's id), taken out of it, and the highest `run_seq` among its run's.
pub(super) fn prepare_step(run_id: &str, step: &mut WorkflowStep) -> Result<(Vec<NewEvent>, i64)> {
    let events = std::mem::take(&mut step.events);
    step_events(run_id, &checked_children(run_id, step)?, events)
}

/// As [`prepare_step`], of a step its caller keeps to commit again after a fault: read where it
/// stands, and copied only when one of its events lacks a run id (no step of the runtime's).
/// The step, each event with its run's id, and the highest `run_seq` among its run's.
pub(super) fn prepare_shared_step(
    run_id: &str,
    mut step: Arc<WorkflowStep>,
) -> Result<(Arc<WorkflowStep>, i64)> {
    let last_run_seq = last_run_seq(run_id, &checked_children(run_id, &step)?, &step.events)?;
    if step.events.iter().any(|event| event.run_id.is_none()) {
        own_events(run_id, &mut Arc::make_mut(&mut step).events);
    }
    Ok((step, last_run_seq))
}

/// The ids of the runs a step performed, once its ending and theirs are checked.
fn checked_children<'a>(run_id: &str, step: &'a WorkflowStep) -> Result<Vec<&'a str>> {
    if let Some(ending) = &step.ending {
        check_ending_status(ending.status, run_id)?;
    }
    for child in &step.children {
        check_ending_status(child.ending.status, &child.run.run_id)?;
    }
    Ok(step
        .children
        .iter()
        .map(|child| child.run.run_id.as_str())
        .collect())
}

/// The runs a step records as begun and ended within it, each with its last `run_seq` among
/// the step's events.
pub(super) fn ended_children<'a>(
    step: &'a WorkflowStep,
    events: &[NewEvent],
) -> Vec<(&'a NewRun, i64, &'a RunEnding)> {
    step.children
        .iter()
        .map(|child| {
            let child_id = child.run.run_id.as_str();
            let last = events
                .iter()
                .filter(|event| event.run_id.as_deref() == Some(child_id))
                .filter_map(|event| event.run_seq)
                .max()
                .unwrap_or(0);
            (&child.run, last, &child.ending)
        })
        .collect()
}

/// All the work of the run `$2` of the playbook `$1`.
pub(super) const DELETE_RUN_WORK: &str = "DELETE FROM work WHERE playbook_pk = $1 AND run_id = $2";

/// The work item `$1`.
pub(super) const DELETE_WORK: &str = "DELETE FROM work WHERE id = $1";

/// The work of key `$3` of the run `$2` of the playbook `$1`.
pub(super) const DELETE_WORK_KEY: &str =
    "DELETE FROM work WHERE playbook_pk = $1 AND run_id = $2 AND key = $3";

/// A work item: playbook_pk, run_id, key, due_at, payload, ordered; kept as it is when the run
/// has one of the key.
pub(super) const INSERT_WORK: &str = "INSERT INTO work (playbook_pk, run_id, key, due_at, \
    payload, ordered) VALUES ($1, $2, $3, $4, $5, $6) \
    ON CONFLICT (playbook_pk, run_id, key) DO NOTHING";

/// The first snapshot of the run `$2` of the playbook `$1`: `$3` at `$4`, unless the run has
/// one. [`INSERT_SNAPSHOT`] returns its version; on SQLite's writer, where `RETURNING` costs a
/// temporary table a statement, the row it inserted tells it (version 1).
macro_rules! insert_snapshot {
    () => {
        "INSERT INTO workflow_states (playbook_pk, run_id, version, state, updated_at) \
         VALUES ($1, $2, 1, $3, $4) ON CONFLICT (playbook_pk, run_id) DO NOTHING"
    };
}
pub(super) const INSERT_SNAPSHOT: &str = concat!(insert_snapshot!(), " RETURNING version");
pub(super) const INSERT_SNAPSHOT_CHANGE: &str = insert_snapshot!();

/// The next snapshot of the run `$2` of the playbook `$1` after version `$3`: `$4` at `$5`,
/// unless the snapshot is at another. [`UPDATE_SNAPSHOT`] returns its version; on SQLite's
/// writer the row it changed tells it (`$3` + 1).
macro_rules! update_snapshot {
    () => {
        "UPDATE workflow_states SET version = version + 1, state = $4, updated_at = $5 \
         WHERE playbook_pk = $1 AND run_id = $2 AND version = $3"
    };
}
pub(super) const UPDATE_SNAPSHOT: &str = concat!(update_snapshot!(), " RETURNING version");
pub(super) const UPDATE_SNAPSHOT_CHANGE: &str = update_snapshot!();

/// The refusal of a snapshot written by another step first.
pub(super) fn snapshot_taken(run_id: &str, expected_version: Option<i64>) -> StoreError {
    StoreError::Conflict(format!(
        "the snapshot of run {run_id} is not at version {expected_version:?}: another server took the run over"
    ))
}

/// The listeners of the run `$2` of the playbook `$1`.
pub(super) const DELETE_LISTENERS: &str =
    "DELETE FROM listeners WHERE playbook_pk = $1 AND run_id = $2";

/// The listener `$3` of the run `$2` of the playbook `$1`.
pub(super) const DELETE_LISTENER: &str =
    "DELETE FROM listeners WHERE playbook_pk = $1 AND run_id = $2 AND reference = $3";

/// A listener `$3` of the run `$2` of the playbook `$1`, with filters `$4`, hearing the events
/// after `$5`, unless the playbook has `$6` listeners or the run has one of the reference.
pub(super) const INSERT_LISTENER: &str = "INSERT INTO listeners (playbook_pk, run_id, \
    reference, workflow, version, filters, cursor_seq) \
    SELECT playbook_pk, run_id, $3, name, definition_version, $4, $5 \
    FROM runs WHERE playbook_pk = $1 AND run_id = $2 \
    AND (SELECT count(*) FROM listeners WHERE playbook_pk = $1) < $6 \
    ON CONFLICT (playbook_pk, run_id, reference) DO NOTHING";

/// Writes a step's snapshot: the first, or the next after `expected_version`
/// (compare-and-set); `Conflict` when another step wrote it first. The snapshot's new version.
async fn write_snapshot<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    reserved: &Reserved<D>,
    run_id: &str,
    step: &WorkflowStep,
) -> Result<i64> {
    let state = Json(&step.state);
    let version: Option<i64> = match step.expected_version {
        None => {
            sql::<D>(INSERT_SNAPSHOT)
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .bind(state)
                .bind(&reserved.now.stored)
                .scalar_optional(&mut *tx)
                .await?
        }
        Some(expected) => {
            sql::<D>(UPDATE_SNAPSHOT)
                .bind(reserved.playbook_pk)
                .bind(run_id)
                .bind(expected)
                .bind(state)
                .bind(&reserved.now.stored)
                .scalar_optional(&mut *tx)
                .await?
        }
    };
    version.ok_or_else(|| snapshot_taken(run_id, step.expected_version))
}

/// Removes the run's work of these keys.
pub(super) async fn delete_work_keys<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook_pk: i64,
    run_id: &str,
    keys: &[String],
) -> Result<()> {
    for key in keys {
        sql::<D>(DELETE_WORK_KEY)
            .bind(playbook_pk)
            .bind(run_id)
            .bind(key.as_str())
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

/// A step's listening tasks: those it ends or its run's ending stop; those it begins hear
/// the playbook's events recorded after `last_seq`, the step's last, unless the playbook has
/// [`LISTENERS_MAX`] listening already.
async fn listen_in<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook_pk: i64,
    run_id: &str,
    step: &WorkflowStep,
    last_seq: i64,
) -> Result<()> {
    if step.ending.is_some() {
        if step.start.is_none() {
            sql::<D>(DELETE_LISTENERS)
                .bind(playbook_pk)
                .bind(run_id)
                .execute(&mut *tx)
                .await?;
        }
        return Ok(());
    }
    for reference in &step.unlisten {
        sql::<D>(DELETE_LISTENER)
            .bind(playbook_pk)
            .bind(run_id)
            .bind(reference.as_str())
            .execute(&mut *tx)
            .await?;
    }
    if !step.listen.is_empty() {
        // Steps that begin listening in one playbook count its listeners one after another,
        // so two committing at once cannot both take the last place.
        D::lock_listeners(tx, playbook_pk).await?;
    }
    for NewListener { reference, filters } in &step.listen {
        sql::<D>(INSERT_LISTENER)
            .bind(playbook_pk)
            .bind(run_id)
            .bind(reference.as_str())
            .bind(Json(filters))
            .bind(last_seq)
            .bind(LISTENERS_MAX)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

/// Inserts work items, due now unless they say when; one whose key the run has already is
/// kept as it is.
pub(super) async fn insert_work<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook_pk: i64,
    run_id: &str,
    now: &Stamp<D>,
    work: &[NewWork],
) -> Result<()> {
    for item in work {
        let due = item
            .due_at
            .map_or_else(|| now.stored.clone(), D::Time::from_time);
        sql::<D>(INSERT_WORK)
            .bind(playbook_pk)
            .bind(run_id)
            .bind(item.key.as_str())
            .bind(due)
            .bind(item.payload.as_slice())
            .bind(item.ordered)
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

pub(super) async fn add<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    run_id: &str,
    work: Vec<NewWork>,
) -> Result<()> {
    let mut tx = store.begin().await?;
    let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
    let now = now_in(&mut tx).await?;
    insert_work(&mut tx, playbook_pk, run_id, &now, &work).await?;
    tx.commit().await?;
    Ok(())
}

pub(super) async fn claim<D: Dialect>(
    store: &SqlStore<D>,
    claimer: &str,
    lease: Duration,
    limit: u32,
) -> Result<Vec<Work>> {
    let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    let mut tx = store.begin().await?;
    // No other claim comes between the choice and the update: on SQLite the writer's
    // transaction is BEGIN IMMEDIATE; on PostgreSQL an input another claim holds locked (SKIP
    // LOCKED passes it) is not among the candidates, and so keeps its run's later inputs back
    // as a lease would.
    let rows = built_sql::<D>(format!(
        "WITH candidates AS MATERIALIZED (SELECT id, playbook_pk, run_id, due_at, ordered \
         FROM work WHERE due_at <= {now} \
         AND (claimed_until IS NULL OR claimed_until <= {now}) \
         ORDER BY due_at, id LIMIT $2{skip_locked}) \
         UPDATE work SET claimed_until = {lease_until}, claimed_by = $3 \
         WHERE id IN (SELECT c.id FROM candidates c WHERE NOT c.ordered OR NOT EXISTS (\
         SELECT 1 FROM work w WHERE w.playbook_pk = c.playbook_pk AND w.run_id = c.run_id \
         AND w.ordered AND (w.due_at, w.id) < (c.due_at, c.id) \
         AND w.id NOT IN (SELECT id FROM candidates) \
         AND NOT COALESCE(w.claimed_by = $3 AND w.claimed_until > {now}, false))) \
         RETURNING id, run_id, key, due_at, payload, \
         (SELECT org FROM playbooks WHERE pk = work.playbook_pk) AS org, \
         (SELECT id FROM playbooks WHERE pk = work.playbook_pk) AS playbook, ordered",
        now = D::NOW,
        skip_locked = D::SKIP_LOCKED,
        lease_until = D::LEASE_UNTIL,
    ))
    .bind(lease_ms as f64)
    .bind(i64::from(limit))
    .bind(claimer)
    .fetch_all(&mut tx)
    .await?;
    tx.commit().await?;
    let mut claimed = rows.iter().map(work_from_row).collect::<Result<Vec<_>>>()?;
    claimed.sort_by(|a, b| a.due_at.cmp(&b.due_at).then(a.id.cmp(&b.id)));
    Ok(claimed)
}

/// An event sent to a run, under the id its sender gave it.
pub(super) struct SentEvent<'a> {
    pub(super) event_id: &'a str,
    pub(super) event: Value,
}

pub(super) async fn receive_event<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    run_id: &str,
    sent: SentEvent<'_>,
    work: NewWork,
) -> Result<Option<RunInboxEvent>> {
    let SentEvent { event_id, event } = sent;
    let mut tx = store.begin().await?;
    let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
    // The run's row stays as read until the commit (locked on PostgreSQL; SQLite's writer is
    // the only one): receipts to one run are numbered one at a time, without a gap, and a run
    // that ends meanwhile waits for this one.
    let status: Option<String> = built_sql::<D>(format!(
        "SELECT status FROM runs WHERE playbook_pk = $1 AND run_id = $2{}",
        D::FOR_UPDATE
    ))
    .bind(playbook_pk)
    .bind(run_id)
    .scalar_optional(&mut tx)
    .await?;
    if status.as_deref() != Some("started") {
        return Err(run_not_found(playbook, run_id));
    }
    let row = built_sql::<D>(format!(
        "INSERT INTO run_inbox (playbook_pk, run_id, event_id, seq, event, received_at) \
         SELECT $1, $2, $3, coalesce(max(seq), 0) + 1, $4, {} FROM run_inbox \
         WHERE playbook_pk = $1 AND run_id = $2 \
         ON CONFLICT (playbook_pk, run_id, event_id) DO NOTHING RETURNING seq, received_at",
        D::NOW
    ))
    .bind(playbook_pk)
    .bind(run_id)
    .bind(event_id)
    .bind(Json(&event))
    .fetch_optional(&mut tx)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let received_at = Stamp::<D>::new(row.get("received_at")?)?;
    insert_work(&mut tx, playbook_pk, run_id, &received_at, &[work]).await?;
    tx.commit().await?;
    Ok(Some(RunInboxEvent {
        run_id: run_id.to_owned(),
        event_id: event_id.to_owned(),
        seq: row.get("seq")?,
        event,
        received_at: received_at.at,
    }))
}
