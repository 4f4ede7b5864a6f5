//! Triggers and listening tasks: the starts an event trigger queues and servers take at the
//! rate allowed, schedules moved to their next due time, and listeners' cursors.

use chrono::{DateTime, Utc};
use sqlx::types::Json;

use super::rows::{listener_from_row, trigger_from_row, trigger_start_from_row};
use super::{SqlStore, playbook_pk_in};
use crate::dialect::{Dialect, StoredTime, built_sql, sql};
use crate::{
    Listener, PlaybookRef, Queued, Result, StartOutcome, TRIGGER_START_LEASE_SECONDS, Trigger,
    TriggerStart,
};

/// Taken starts whose run exists are forgotten after this long.
const TAKEN_START_KEPT_SECONDS: i64 = 120;

/// The window in which a trigger's starts are counted against its rate.
const START_RATE_WINDOW_SECONDS: i64 = 60;

pub(super) async fn list<D: Dialect>(store: &SqlStore<D>) -> Result<Vec<Trigger>> {
    sql::<D>(
        "SELECT p.org AS org, p.id AS playbook, t.workflow, t.kind, t.spec, t.version, \
         t.since_seq, t.saved_at, t.cursor_seq, t.due_at, t.running_run_id, t.earlier \
         FROM triggers t JOIN playbooks p ON p.pk = t.playbook_pk \
         ORDER BY t.playbook_pk, t.workflow, t.kind",
    )
    .fetch_all_as(&store.reader, trigger_from_row)
    .await
}

/// Where an event trigger's reading stands: the save it was read under, and the seq it read
/// to.
pub(super) struct Cursor {
    pub(super) since_seq: i64,
    pub(super) cursor_seq: i64,
}

pub(super) async fn queue_starts<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    workflow: &str,
    cursor: Cursor,
    starts: Vec<TriggerStart>,
    waiting_max: i64,
) -> Result<Queued> {
    let Cursor {
        since_seq,
        cursor_seq,
    } = cursor;
    let mut tx = store.begin().await?;
    let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
    // The trigger's row stays locked to the commit (SQLite's writer is the only one): two
    // servers queue one after the other.
    let moved = built_sql::<D>(format!(
        "UPDATE triggers SET cursor_seq = {}(cursor_seq, $4) WHERE playbook_pk = $1 \
         AND workflow = $2 AND kind = 'event' AND since_seq = $3 RETURNING since_seq",
        D::GREATEST
    ))
    .bind(playbook_pk)
    .bind(workflow)
    .bind(since_seq)
    .bind(cursor_seq)
    .fetch_optional(&mut tx)
    .await?;
    let mut queued = Queued::default();
    if moved.is_none() {
        return Ok(queued);
    }
    let mut waiting: i64 = sql::<D>(
        "SELECT count(*) FROM trigger_starts WHERE playbook_pk = $1 AND workflow = $2 \
         AND taken_at IS NULL",
    )
    .bind(playbook_pk)
    .bind(workflow)
    .scalar(&mut tx)
    .await?;
    for start in starts {
        let known: bool = sql::<D>(
            "SELECT EXISTS (SELECT 1 FROM runs WHERE playbook_pk = $1 AND run_id = $2) \
             OR EXISTS (SELECT 1 FROM trigger_starts WHERE playbook_pk = $1 AND run_id = $2)",
        )
        .bind(playbook_pk)
        .bind(start.run_id.as_str())
        .scalar(&mut tx)
        .await?;
        if known {
            continue;
        }
        if waiting >= waiting_max {
            queued.refused += 1;
            continue;
        }
        built_sql::<D>(format!(
            "INSERT INTO trigger_starts (playbook_pk, run_id, workflow, event_seq, start, \
             queued_at) VALUES ($1, $2, $3, $4, $5, {}) \
             ON CONFLICT (playbook_pk, run_id) DO NOTHING",
            D::NOW
        ))
        .bind(playbook_pk)
        .bind(start.run_id.as_str())
        .bind(workflow)
        .bind(start.event_seq)
        .bind(Json(&start.start))
        .execute(&mut tx)
        .await?;
        waiting += 1;
        queued.queued += 1;
    }
    tx.commit().await?;
    Ok(queued)
}

pub(super) async fn take_starts<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    workflow: &str,
    per_minute: i64,
) -> Result<Vec<TriggerStart>> {
    let mut tx = store.begin().await?;
    let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
    // Servers take a workflow's starts one at a time, so its minute is counted once: on
    // PostgreSQL under the trigger's row lock, on SQLite by its one writer.
    if !D::FOR_UPDATE.is_empty() {
        built_sql::<D>(format!(
            "SELECT 1 FROM triggers WHERE playbook_pk = $1 AND workflow = $2 \
             AND kind = 'event'{}",
            D::FOR_UPDATE
        ))
        .bind(playbook_pk)
        .bind(workflow)
        .fetch_optional(&mut tx)
        .await?;
    }
    built_sql::<D>(format!(
        "DELETE FROM trigger_starts WHERE playbook_pk = $1 AND workflow = $2 \
         AND taken_at < {} AND EXISTS (SELECT 1 FROM runs r WHERE r.playbook_pk = $1 \
         AND r.run_id = trigger_starts.run_id)",
        D::ENGINE.seconds_ago(TAKEN_START_KEPT_SECONDS)
    ))
    .bind(playbook_pk)
    .bind(workflow)
    .execute(&mut tx)
    .await?;
    let recent: i64 = built_sql::<D>(format!(
        "SELECT count(*) FROM trigger_starts WHERE playbook_pk = $1 AND workflow = $2 \
         AND taken_at >= {}",
        D::ENGINE.seconds_ago(START_RATE_WINDOW_SECONDS)
    ))
    .bind(playbook_pk)
    .bind(workflow)
    .scalar(&mut tx)
    .await?;
    let room = (per_minute - recent).max(0);
    let rows = built_sql::<D>(format!(
        "UPDATE trigger_starts SET taken_at = {now} WHERE playbook_pk = $1 AND run_id IN (\
         SELECT run_id FROM (SELECT run_id, event_seq FROM trigger_starts \
         WHERE playbook_pk = $1 AND workflow = $2 AND taken_at IS NULL \
         ORDER BY event_seq LIMIT $3) AS waiting \
         UNION SELECT s.run_id FROM trigger_starts s WHERE s.playbook_pk = $1 \
         AND s.workflow = $2 AND s.taken_at < {lease_ended} \
         AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.playbook_pk = $1 \
         AND r.run_id = s.run_id)) \
         RETURNING run_id, workflow, event_seq, start, attempts",
        now = D::NOW,
        lease_ended = D::ENGINE.seconds_ago(TRIGGER_START_LEASE_SECONDS),
    ))
    .bind(playbook_pk)
    .bind(workflow)
    .bind(room)
    .fetch_all(&mut tx)
    .await?;
    tx.commit().await?;
    let mut taken = rows
        .iter()
        .map(trigger_start_from_row)
        .collect::<Result<Vec<_>>>()?;
    taken.sort_by_key(|start| start.event_seq);
    Ok(taken)
}

pub(super) async fn settle_start<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    run_id: &str,
    outcome: StartOutcome,
) -> Result<()> {
    let text = match outcome {
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
    sql::<D>(text)
        .bind_playbook(playbook)
        .bind(run_id)
        .execute(&store.writer)
        .await?;
    Ok(())
}

/// A schedule trigger's move to its next due time (see [`crate::Store::move_schedule`]).
pub(super) struct ScheduleMove<'a> {
    pub(super) kind: &'a str,
    pub(super) since_seq: i64,
    pub(super) expected_due_at: Option<DateTime<Utc>>,
    pub(super) due_at: DateTime<Utc>,
    pub(super) running_run_id: Option<&'a str>,
}

pub(super) async fn move_schedule<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    workflow: &str,
    schedule: ScheduleMove<'_>,
) -> Result<bool> {
    // A schedule that had no due time is matched by `IS NULL`: the shared code binds no
    // optional time (sqlx encodes an optional value for each database apart).
    let due_at_was = match schedule.expected_due_at {
        None => "due_at IS NULL",
        Some(_) => "due_at = $8",
    };
    let mut statement = built_sql::<D>(format!(
        "UPDATE triggers SET due_at = $6, running_run_id = coalesce($7, running_run_id) \
         WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) \
         AND workflow = $3 AND kind = $4 AND since_seq = $5 AND {due_at_was} \
         RETURNING since_seq"
    ))
    .bind_playbook(playbook)
    .bind(workflow)
    .bind(schedule.kind)
    .bind(schedule.since_seq)
    .bind(D::Time::from_time(schedule.due_at))
    .bind(schedule.running_run_id);
    if let Some(expected) = schedule.expected_due_at {
        statement = statement.bind(D::Time::from_time(expected));
    }
    let moved = statement.fetch_optional(&store.writer).await?;
    Ok(moved.is_some())
}

pub(super) async fn list_listeners<D: Dialect>(store: &SqlStore<D>) -> Result<Vec<Listener>> {
    sql::<D>(
        "SELECT p.org AS org, p.id AS playbook, l.run_id, l.reference, l.workflow, l.version, \
         l.filters, l.cursor_seq FROM listeners l JOIN playbooks p ON p.pk = l.playbook_pk \
         ORDER BY l.playbook_pk, l.run_id, l.reference",
    )
    .fetch_all_as(&store.reader, listener_from_row)
    .await
}

pub(super) async fn advance_listener<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    run_id: &str,
    reference: &str,
    cursor_seq: i64,
) -> Result<()> {
    built_sql::<D>(format!(
        "UPDATE listeners SET cursor_seq = {}(cursor_seq, $5) WHERE playbook_pk = \
         (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) AND run_id = $3 \
         AND reference = $4",
        D::GREATEST
    ))
    .bind_playbook(playbook)
    .bind(run_id)
    .bind(reference)
    .bind(cursor_seq)
    .execute(&store.writer)
    .await?;
    Ok(())
}
