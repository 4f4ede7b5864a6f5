//! The data's lifecycle: purging the runs that ended before a time, with their events, one
//! bounded batch a transaction, and deleting a playbook or an org with everything it holds.
//!
//! A purge leaves the playbook's `last_seq` as it was, so a `seq` is never given twice: the
//! events it removes leave holes in the log, which readers by cursor (`after_seq`) step over.
//! It never removes a run that is still started, a run whose parent is still started (the
//! parent may still read it), a run with a started child, a run whose request is still open,
//! nor a run with an event that a follower of the log has not read yet: the folded `seq` of
//! each view of an active recall function (a stalled view holds the purge back at its fold, so
//! its events are never lost silently), the cursor of each event trigger and of each listening
//! task.

use chrono::{DateTime, Utc};

use super::{SqlStore, playbook_pk_in};
use crate::dialect::{Dialect, StoredTime, built_sql, sql};
use crate::{Deleted, PlaybookRef, Purged, Result, StoreError};

/// The tables whose rows belong to one run of a playbook (`playbook_pk = $1 AND run_id = $2`),
/// removed with the run, the run's own row last.
const RUN_TABLES: [&str; 8] = [
    "events",
    "run_inbox",
    "workflow_states",
    "requests",
    "work",
    "trigger_starts",
    "listeners",
    "runs",
];

/// The tables whose rows belong to a playbook (`playbook_pk = $1`), in an order the foreign
/// keys allow; `definition_versions` goes through `definitions` before them, the playbook's
/// row after.
const PLAYBOOK_TABLES: [&str; 12] = [
    "events",
    "run_inbox",
    "workflow_states",
    "requests",
    "work",
    "trigger_starts",
    "listeners",
    "triggers",
    "views",
    "runs",
    "definition_versions",
    "definitions",
];

/// One batch of a purge: up to `batch` runs of the playbook that ended before `ended_before`
/// and that nothing still needs, with their events and the rows they left, in one transaction.
pub(super) async fn purge_batch<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    ended_before: DateTime<Utc>,
    batch: u32,
) -> Result<Purged> {
    let mut tx = store.begin().await?;
    let playbook_pk = playbook_pk_in(&mut tx, playbook).await?;
    // The last seq every follower of the log has read: no run with an event after it goes.
    let followed: Option<i64> = sql::<D>(
        "SELECT min(s) FROM ( \
         SELECT v.folded_seq AS s FROM views v JOIN definitions d \
         ON d.playbook_pk = v.playbook_pk AND d.def_type = 'recall' AND d.name = v.name \
         AND d.status = 'active' WHERE v.playbook_pk = $1 \
         UNION ALL SELECT cursor_seq FROM triggers WHERE playbook_pk = $1 AND kind = 'event' \
         UNION ALL SELECT cursor_seq FROM listeners WHERE playbook_pk = $1) AS cursors",
    )
    .bind(playbook_pk)
    .scalar(&mut tx)
    .await?;
    let run_ids: Vec<String> = built_sql::<D>(format!(
        "SELECT r.run_id FROM runs r WHERE r.playbook_pk = $1 AND r.started_at < $2 \
         AND r.status <> 'started' AND r.ended_at < $2 \
         AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.playbook_pk = r.playbook_pk \
             AND p.run_id = r.parent_run_id AND p.status = 'started') \
         AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.playbook_pk = r.playbook_pk \
             AND c.root_run_id = COALESCE(r.root_run_id, r.run_id) \
             AND c.parent_run_id = r.run_id AND c.status = 'started') \
         AND NOT EXISTS (SELECT 1 FROM requests q WHERE q.playbook_pk = r.playbook_pk \
             AND q.run_id = r.run_id AND q.status = 'open') \
         AND NOT EXISTS (SELECT 1 FROM events e WHERE e.playbook_pk = r.playbook_pk \
             AND e.run_id = r.run_id AND e.seq > $3) \
         ORDER BY r.started_at, r.run_id LIMIT $4{}",
        D::FOR_UPDATE
    ))
    .bind(playbook_pk)
    .bind(D::Time::from_time(ended_before))
    .bind(followed.unwrap_or(i64::MAX))
    .bind(i64::from(batch))
    .fetch_all_as(&mut tx, |row| row.at(0))
    .await?;
    let mut purged = Purged::default();
    for run_id in &run_ids {
        purged.events +=
            sql::<D>("SELECT count(*) FROM events WHERE playbook_pk = $1 AND run_id = $2")
                .bind(playbook_pk)
                .bind(run_id.as_str())
                .scalar::<i64>(&mut tx)
                .await?;
        for table in RUN_TABLES {
            built_sql::<D>(format!(
                "DELETE FROM {table} WHERE playbook_pk = $1 AND run_id = $2"
            ))
            .bind(playbook_pk)
            .bind(run_id.as_str())
            .execute(&mut tx)
            .await?;
        }
        purged.runs += 1;
    }
    tx.commit().await?;
    Ok(purged)
}

/// Deletes a playbook and everything it holds, in one transaction. `Conflict` when a run of
/// it is still started and `force` is not given; `NotFound` when there is no such playbook.
pub(super) async fn delete_playbook<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    force: bool,
) -> Result<Deleted> {
    let mut tx = store.begin().await?;
    let deleted = delete_playbook_in(&mut tx, playbook, force).await?;
    tx.commit().await?;
    Ok(deleted)
}

/// Deletes an org, its playbooks and everything they hold, in one transaction. `Conflict`
/// when a run of one of them is still started and `force` is not given; `NotFound` when there
/// is no such org.
pub(super) async fn delete_org<D: Dialect>(
    store: &SqlStore<D>,
    org: &str,
    force: bool,
) -> Result<Deleted> {
    let mut tx = store.begin().await?;
    // The org's row, locked (on PostgreSQL) so that no playbook is made in it meanwhile.
    let found: Option<String> = built_sql::<D>(format!(
        "SELECT id FROM orgs WHERE id = $1{}",
        D::FOR_UPDATE
    ))
    .bind(org)
    .scalar_optional(&mut tx)
    .await?;
    if found.is_none() {
        return Err(StoreError::NotFound(format!("org {org}")));
    }
    let ids: Vec<String> = sql::<D>("SELECT id FROM playbooks WHERE org = $1 ORDER BY id")
        .bind(org)
        .fetch_all_as(&mut tx, |row| row.at(0))
        .await?;
    let mut deleted = Deleted::default();
    for id in ids {
        let one = delete_playbook_in(&mut tx, &PlaybookRef::new(org, id), force).await?;
        deleted.add(&one);
    }
    sql::<D>("DELETE FROM orgs WHERE id = $1")
        .bind(org)
        .execute(&mut tx)
        .await?;
    tx.commit().await?;
    Ok(deleted)
}

async fn delete_playbook_in<D: Dialect>(
    tx: &mut sqlx::Transaction<'static, D>,
    playbook: &PlaybookRef,
    force: bool,
) -> Result<Deleted> {
    // The playbook's row, locked (on PostgreSQL): a change that appends to its log or adds a
    // row under it waits for this one, and then finds no playbook.
    let playbook_pk: i64 = built_sql::<D>(format!(
        "SELECT pk FROM playbooks WHERE org = $1 AND id = $2{}",
        D::FOR_UPDATE
    ))
    .bind_playbook(playbook)
    .scalar_optional(&mut *tx)
    .await?
    .ok_or_else(|| crate::shared::playbook_not_found(playbook))?;
    let count = |what: &'static str| sql::<D>(what).bind(playbook_pk);
    let started: i64 =
        count("SELECT count(*) FROM runs WHERE playbook_pk = $1 AND status = 'started'")
            .scalar(&mut *tx)
            .await?;
    if started > 0 && !force {
        return Err(StoreError::Conflict(format!(
            "the playbook {}/{} has {started} runs still started",
            playbook.org, playbook.playbook
        )));
    }
    let deleted = Deleted {
        playbooks: 1,
        runs: count("SELECT count(*) FROM runs WHERE playbook_pk = $1")
            .scalar(&mut *tx)
            .await?,
        started_runs: started,
        events: count("SELECT count(*) FROM events WHERE playbook_pk = $1")
            .scalar(&mut *tx)
            .await?,
        definitions: count("SELECT count(*) FROM definitions WHERE playbook_pk = $1")
            .scalar(&mut *tx)
            .await?,
    };
    for table in PLAYBOOK_TABLES {
        let statement = if table == "definition_versions" {
            "DELETE FROM definition_versions WHERE definition_pk IN \
             (SELECT pk FROM definitions WHERE playbook_pk = $1)"
                .to_owned()
        } else {
            format!("DELETE FROM {table} WHERE playbook_pk = $1")
        };
        built_sql::<D>(statement)
            .bind(playbook_pk)
            .execute(&mut *tx)
            .await?;
    }
    sql::<D>("DELETE FROM playbooks WHERE pk = $1")
        .bind(playbook_pk)
        .execute(&mut *tx)
        .await?;
    Ok(deleted)
}
