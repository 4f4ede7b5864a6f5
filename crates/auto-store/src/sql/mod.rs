//! The store, on either database: one [`SqlStore`] over a [`Dialect`], whose transactions are
//! written once. This module holds the store and the reads; the changes are in its submodules,
//! by what they change.
//!
//! Architecture invariant: every change takes the playbook's seqs first ([`reserve_seqs`]),
//! when it appends events. On PostgreSQL raising `last_seq` takes the playbook's row lock, held
//! to the commit, so appends to one playbook commit in `seq` order; on SQLite the one writer's
//! `BEGIN IMMEDIATE` serializes every change.

mod definitions;
mod group;
mod latest;
mod lifecycle;
pub(crate) mod postgres_changes;
pub(crate) mod quiet;
mod requests;
mod rows;
mod runs;
pub(crate) mod sqlite_changes;
mod triggers;
pub(crate) mod wal_writes;
mod work;

use std::fs::File;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use sqlx::{Pool, Transaction};

use crate::dialect::{Dialect, Engine, SqlRow, Stamp, StoredTime, built_sql, sql};
use crate::shared::{
    PageParam, PageQuery, event_insert_error, page_limit, parse_status, playbook_not_found,
    recorded_event, requests_page, run_columns, runs_page,
};
use crate::{
    DefinitionKey, DefinitionVersion, Deleted, Event, EventFilter, LOG_ORDER_EVENT_TYPES, Listener,
    NewDefinitionVersion, NewEvent, NewRequest, NewRun, NewWork, Org, Playbook, PlaybookRef,
    Purged, Queued, RecallView, Request, RequestClose, RequestFilter, Result, Run, RunEnding,
    RunFilter, RunInboxEvent, StartOutcome, StepCommitted, Store, StoreError, Trigger,
    TriggerStart, ViewHead, Work, WorkBacklog, WorkflowStep,
};

pub(crate) use group::{Opener, RawGroup};
pub(crate) use latest::KeptDefinitions;
use rows::{definition_columns, definition_from_row, event_from_row, org_from_row};
use rows::{event_columns, indexed_event_types, sqlite_indexed_event_types};
use rows::{playbook_from_row, run_from_row, view_columns, view_from_row};
pub(crate) use work::WholeRun;

/// The store on a database of dialect `D`.
pub(crate) struct SqlStore<D: Dialect> {
    /// The pool every change goes through: on SQLite one connection, on which changes are
    /// serialized.
    pub(crate) writer: Pool<D>,
    /// Reads: the same pool as `writer` on PostgreSQL, and for SQLite's in-memory database,
    /// which exists only on its one connection.
    pub(crate) reader: Pool<D>,
    /// SQLite's lock on `<file>.lock`, held for the life of the store: while it is, no other
    /// server opens the file.
    pub(crate) _file_lock: Option<File>,
    /// On SQLite's file, the group writer of the hot changes (a workflow step, a run started,
    /// its events, its ending), made on a connection of its own without a thread hop per
    /// statement (see [`sqlite_changes`]).
    pub(crate) raw: Option<RawGroup>,
    /// The latest version of each definition read, kept as the database allows (see
    /// [`latest`]).
    pub(crate) kept: latest::KeptDefinitions,
    /// On PostgreSQL, the writer of the runs that begin and end in their first step, those
    /// of a playbook that wait together in one statement (see [`postgres_changes`]).
    pub(crate) whole_runs: Option<postgres_changes::WholeRuns>,
    /// The hottest reads' connections: on PostgreSQL, the store's own, lent without sqlx's
    /// round trips that test them (see [`quiet`]); elsewhere `reader`.
    pub(crate) quiet: std::sync::Arc<quiet::Quiet<D>>,
}

/// The seqs a change takes, and the database's time of the change.
pub(crate) struct Reserved<D: Dialect> {
    pub(crate) playbook_pk: i64,
    pub(crate) first_seq: i64,
    pub(crate) now: Stamp<D>,
}

/// Takes `count` seqs for the playbook in the change's transaction, or fails with `NotFound`.
/// The time is read in the same statement, so it does not go back as seq goes on (unless the
/// clock does).
pub(crate) async fn reserve_seqs<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook: &PlaybookRef,
    count: usize,
) -> Result<Reserved<D>> {
    let count = seq_count(count)?;
    let row = built_sql::<D>(reserve_sql::<D>())
        .bind_playbook(playbook)
        .bind(count)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or_else(|| playbook_not_found(playbook))?;
    Ok(Reserved {
        playbook_pk: row.get("pk")?,
        first_seq: first_seq(playbook, row.get("last_seq")?, count),
        now: Stamp::new(row.get("now")?)?,
    })
}

/// How many seqs a change of `count` events takes.
pub(crate) fn seq_count(count: usize) -> Result<i64> {
    i64::try_from(count)
        .map_err(|_| StoreError::Conflict(format!("{count} events are too many for one change")))
}

/// The statement that takes `$3` seqs for the playbook `$1`/`$2`: its `pk`, the `last_seq` it
/// raised and the database's time (`now`).
pub(crate) fn reserve_sql<D: Dialect>() -> String {
    format!(
        "UPDATE playbooks SET last_seq = last_seq + $3 WHERE org = $1 AND id = $2 \
         RETURNING pk, last_seq, {} AS now",
        D::NOW
    )
}

/// [`reserve_sql`] in two statements that return nothing they change, for one writer: the
/// playbook `$1`/`$2`'s `pk`, its `last_seq` raised by `$3` and the database's time (`now`);
/// then the raised `last_seq` `$2` kept for the playbook `$1`.
pub(crate) fn reserve_read_sql<D: Dialect>() -> String {
    format!(
        "SELECT pk, last_seq + $3 AS last_seq, {} AS now FROM playbooks \
         WHERE org = $1 AND id = $2",
        D::NOW
    )
}
/// A definition's version `$5` (its latest when `$5` is null) by the playbook `$1`/`$2`, its
/// type `$3` and its name `$4`: every run request reads it.
const DEFINITION_AT: &str = concat!(
    definition_columns!(),
    " JOIN playbooks p ON p.pk = d.playbook_pk \
     WHERE p.org = $1 AND p.id = $2 AND d.def_type = $3 AND d.name = $4 \
     AND v.version = COALESCE($5, d.latest_version)"
);

/// A definition's stamp (`latest::DefinitionStamp`): `$1`/`$2` the playbook, `$3`/`$4` the key.
const DEFINITION_STAMP: &str = "SELECT d.pk, d.latest_version, d.status FROM definitions d \
     JOIN playbooks p ON p.pk = d.playbook_pk \
     WHERE p.org = $1 AND p.id = $2 AND d.def_type = $3 AND d.name = $4";

pub(crate) const RESERVE_KEEP: &str = "UPDATE playbooks SET last_seq = $2 WHERE pk = $1";

/// The first of the `count` seqs a change took, from the `last_seq` it raised.
pub(crate) fn first_seq(playbook: &PlaybookRef, last_seq: i64, count: i64) -> i64 {
    // Invariant: last_seq only grows, by the number of events each change appends, so it is
    // at least this change's count; anything else would number events twice.
    assert!(
        last_seq >= count,
        "playbook {playbook:?} has last_seq {last_seq} after taking {count}"
    );
    last_seq - count + 1
}

/// Inserts a change's events under the seqs it reserved. `Conflict` when one breaks a unique
/// rule of the log (its id, or its run's number, taken): then the change must roll back.
pub(crate) async fn insert_events<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook: &PlaybookRef,
    reserved: &Reserved<D>,
    events: Vec<NewEvent>,
) -> Result<Vec<Event>> {
    D::insert_events(tx, reserved, &events)
        .await
        .map_err(|error| event_insert_error(error, playbook))?;
    Ok(recorded_events(events, reserved))
}

/// A change's events as they were stored under the seqs it reserved.
pub(crate) fn recorded_events<D: Dialect>(
    events: Vec<NewEvent>,
    reserved: &Reserved<D>,
) -> Vec<Event> {
    events
        .into_iter()
        .zip(reserved.first_seq..)
        .map(|(mut event, seq)| {
            event.time = event.time.map(D::kept_time);
            recorded_event(event, seq, reserved.now.at)
        })
        .collect()
}

/// The database's time, read inside a change.
pub(crate) async fn now_in<D: Dialect>(tx: &mut Transaction<'static, D>) -> Result<Stamp<D>> {
    let stored: D::Time = built_sql::<D>(format!("SELECT {}", D::NOW))
        .fetch_one(&mut *tx)
        .await?
        .at(0)?;
    Stamp::new(stored)
}

/// The playbook's key, inside a change; `NotFound` when there is no such playbook.
pub(crate) async fn playbook_pk_in<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook: &PlaybookRef,
) -> Result<i64> {
    sql::<D>("SELECT pk FROM playbooks WHERE org = $1 AND id = $2")
        .bind_playbook(playbook)
        .scalar_optional(&mut *tx)
        .await?
        .ok_or_else(|| playbook_not_found(playbook))
}

impl<D: Dialect> SqlStore<D> {
    /// Begins a change.
    pub(crate) async fn begin(&self) -> Result<Transaction<'static, D>> {
        D::begin(&self.writer).await
    }

    /// Fails with `NotFound` unless the playbook exists.
    async fn require_playbook(&self, playbook: &PlaybookRef) -> Result<i64> {
        sql::<D>("SELECT pk FROM playbooks WHERE org = $1 AND id = $2")
            .bind_playbook(playbook)
            .scalar_optional(&self.reader)
            .await?
            .ok_or_else(|| playbook_not_found(playbook))
    }

    /// The playbook's `list_events` page, `NotFound` when there is no such playbook.
    async fn events_page(
        &self,
        playbook: &PlaybookRef,
        filter: &EventFilter,
    ) -> Result<Vec<Event>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        // PostgreSQL wants exactly the parameters a statement names.
        let mut statement = built_sql::<D>(events_statement::<D>(filter))
            .bind(playbook_pk)
            .bind(filter.after_seq.unwrap_or(0))
            .bind(page_limit(filter));
        if let Some(run_id) = &filter.run_id {
            statement = statement.bind(run_id.as_str());
        }
        if let Some(event_type) = &filter.event_type {
            statement = statement.bind(event_type.as_str());
        }
        statement.fetch_all_as(&self.reader, event_from_row).await
    }

    /// A page of the playbook's runs or requests, each read from its row by `from_row`;
    /// `NotFound` when there is no such playbook.
    async fn page<T>(
        &self,
        playbook: &PlaybookRef,
        query: PageQuery<'_>,
        from_row: fn(&SqlRow<D>) -> Result<T>,
    ) -> Result<Vec<T>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        let mut statement = built_sql::<D>(query.sql).bind(playbook_pk);
        for param in query.params {
            statement = match param {
                PageParam::Text(text) => statement.bind(text),
                PageParam::Time(time) => statement.bind(D::Time::from_time(time)),
            };
        }
        statement
            .bind(query.limit)
            .fetch_all_as(&self.reader, from_row)
            .await
    }

    /// After every change of a definition, committed or not: what was kept of the latest
    /// versions is forgotten.
    fn definitions_changed(&self) {
        if let latest::KeptDefinitions::Alone(latest) = &self.kept {
            latest.changed();
        }
    }

    /// The definition of the playbook named `key`, at `version` or, without one, at its latest.
    async fn definition_at(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        version: Option<i64>,
    ) -> Result<Option<DefinitionVersion>> {
        sql::<D>(DEFINITION_AT)
            .bind_playbook(playbook)
            .bind(key.def_type.as_str())
            .bind(key.name.as_str())
            .bind(version)
            .fetch_optional_as(&*self.quiet, definition_from_row)
            .await
    }

    /// The latest version of a definition, from what `stamped` keeps when the database's
    /// stamp of it is the one kept, else read whole and kept.
    async fn stamped_definition(
        &self,
        stamped: &latest::StampedDefinitions,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
    ) -> Result<Option<DefinitionVersion>> {
        let stamp = sql::<D>(DEFINITION_STAMP)
            .bind_playbook(playbook)
            .bind(key.def_type.as_str())
            .bind(key.name.as_str())
            .fetch_optional_as(&*self.quiet, |row| {
                let status: String = row.get("status")?;
                Ok(latest::DefinitionStamp {
                    pk: row.get("pk")?,
                    latest_version: row.get("latest_version")?,
                    status: parse_status(&status)?,
                })
            })
            .await?;
        let Some(stamp) = stamp else {
            stamped.forget(playbook, key);
            return Ok(None);
        };
        if let Some(kept) = stamped.get(playbook, key, stamp) {
            return Ok(Some(kept));
        }
        let found = self.definition_at(playbook, key, None).await?;
        if let Some(found) = &found {
            stamped.fill(playbook, key, stamp, found);
        }
        Ok(found)
    }

    async fn create_playbook_in(
        &self,
        org: &str,
        id: &str,
        title: Option<&str>,
    ) -> Result<Playbook> {
        let mut tx = self.begin().await?;
        // The org's row, locked (on PostgreSQL) so that the org stays while the playbook is
        // made.
        let org_exists = built_sql::<D>(format!(
            "SELECT id FROM orgs WHERE id = $1{}",
            D::FOR_KEY_SHARE
        ))
        .bind(org)
        .scalar_optional::<String>(&mut tx)
        .await?;
        if org_exists.is_none() {
            return Err(StoreError::NotFound(format!("org {org}")));
        }
        let row = built_sql::<D>(format!(
            "INSERT INTO playbooks (org, id, title, created_at) VALUES ($1, $2, $3, {}) \
             ON CONFLICT (org, id) DO NOTHING RETURNING org, id, title, created_at",
            D::NOW
        ))
        .bind(org)
        .bind(id)
        .bind(title)
        .fetch_optional(&mut tx)
        .await?
        .ok_or_else(|| StoreError::Conflict(format!("the playbook {org}/{id} exists")))?;
        let playbook = playbook_from_row(&row)?;
        tx.commit().await?;
        Ok(playbook)
    }
}

#[async_trait]
impl<D: Dialect> Store for SqlStore<D> {
    fn kind(&self) -> &'static str {
        D::KIND
    }

    async fn now(&self) -> Result<DateTime<Utc>> {
        if let Some(now) = D::local_now() {
            return Ok(now);
        }
        let stored: D::Time = built_sql::<D>(format!("SELECT {}", D::NOW))
            .fetch_one(&*self.quiet)
            .await?
            .at(0)?;
        stored.to_time()
    }

    async fn check_writable(&self) -> Result<()> {
        D::check_writable(self).await
    }

    async fn close(&self) {
        self.quiet.close().await;
        self.reader.close().await;
        self.writer.close().await;
    }

    async fn create_org(&self, id: &str, title: Option<&str>) -> Result<Org> {
        let row = built_sql::<D>(format!(
            "INSERT INTO orgs (id, title, created_at) VALUES ($1, $2, {}) \
             ON CONFLICT (id) DO NOTHING RETURNING id, title, created_at",
            D::NOW
        ))
        .bind(id)
        .bind(title)
        .fetch_optional(&self.writer)
        .await?
        .ok_or_else(|| StoreError::Conflict(format!("the org {id} exists")))?;
        org_from_row(&row)
    }

    async fn get_org(&self, id: &str) -> Result<Option<Org>> {
        sql::<D>("SELECT id, title, created_at FROM orgs WHERE id = $1")
            .bind(id)
            .fetch_optional_as(&self.reader, org_from_row)
            .await
    }

    async fn list_orgs(&self) -> Result<Vec<Org>> {
        sql::<D>("SELECT id, title, created_at FROM orgs ORDER BY id")
            .fetch_all_as(&self.reader, org_from_row)
            .await
    }

    async fn create_playbook(&self, org: &str, id: &str, title: Option<&str>) -> Result<Playbook> {
        self.create_playbook_in(org, id, title).await
    }

    async fn get_playbook(&self, playbook: &PlaybookRef) -> Result<Option<Playbook>> {
        sql::<D>("SELECT org, id, title, created_at FROM playbooks WHERE org = $1 AND id = $2")
            .bind_playbook(playbook)
            .fetch_optional_as(&self.reader, playbook_from_row)
            .await
    }

    async fn log_end(&self, playbook: &PlaybookRef) -> Result<i64> {
        sql::<D>("SELECT last_seq FROM playbooks WHERE org = $1 AND id = $2")
            .bind_playbook(playbook)
            .scalar_optional::<i64>(&self.reader)
            .await?
            .ok_or_else(|| playbook_not_found(playbook))
    }

    async fn get_view(&self, playbook: &PlaybookRef, name: &str) -> Result<Option<RecallView>> {
        sql::<D>(concat!(
            "SELECT ",
            view_columns!(),
            " FROM views WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) \
             AND name = $3"
        ))
        .bind_playbook(playbook)
        .bind(name)
        .fetch_optional_as(&self.reader, view_from_row)
        .await
    }

    async fn put_view(
        &self,
        playbook: &PlaybookRef,
        view: &RecallView,
        expected_revision: Option<i64>,
    ) -> Result<Option<RecallView>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        let statement = match expected_revision {
            Some(_) => built_sql::<D>(format!(
                "UPDATE views SET revision = revision + 1, view = $4, folded_seq = $5, \
                 built = $6, stalled = $7, updated_at = {now} \
                 WHERE playbook_pk = $1 AND name = $2 AND version = $3 AND revision = $8 \
                 RETURNING {columns}",
                now = D::NOW,
                columns = view_columns!(),
            )),
            None => built_sql::<D>(format!(
                "INSERT INTO views AS v (playbook_pk, name, version, revision, view, folded_seq, \
                 built, stalled, updated_at) VALUES ($1, $2, $3, 1, $4, $5, $6, $7, {now}) \
                 ON CONFLICT (playbook_pk, name) DO UPDATE SET version = excluded.version, \
                 revision = v.revision + 1, view = excluded.view, \
                 folded_seq = excluded.folded_seq, built = excluded.built, \
                 stalled = excluded.stalled, updated_at = excluded.updated_at \
                 WHERE v.version < excluded.version RETURNING {columns}",
                now = D::NOW,
                columns = view_columns!(),
            )),
        };
        let mut statement = statement
            .bind(playbook_pk)
            .bind(view.name.as_str())
            .bind(view.version)
            .bind(Json(&view.view))
            .bind(view.folded_seq)
            .bind(view.built)
            .bind(view.stalled.as_ref().map(Json));
        if let Some(revision) = expected_revision {
            statement = statement.bind(revision);
        }
        let kept = statement
            .fetch_optional_as(&self.writer, view_from_row)
            .await?;
        Ok(kept)
    }

    async fn list_views(&self, playbook: Option<&PlaybookRef>) -> Result<Vec<ViewHead>> {
        let only = if playbook.is_some() {
            " WHERE p.org = $1 AND p.id = $2"
        } else {
            ""
        };
        let statement = built_sql::<D>(format!(
            "SELECT p.org, p.id AS playbook, v.name, v.version, v.folded_seq, v.built, \
             v.stalled IS NOT NULL AS stalled FROM views v \
             JOIN playbooks p ON p.pk = v.playbook_pk{only} ORDER BY p.org, p.id, v.name"
        ));
        let statement = match playbook {
            Some(playbook) => statement.bind_playbook(playbook),
            None => statement,
        };
        statement
            .fetch_all(&self.reader)
            .await?
            .iter()
            .map(|row| {
                Ok(ViewHead {
                    playbook: PlaybookRef::new(
                        row.get::<String>("org")?,
                        row.get::<String>("playbook")?,
                    ),
                    name: row.get("name")?,
                    version: row.get("version")?,
                    folded_seq: row.get("folded_seq")?,
                    built: row.get("built")?,
                    stalled: row.get("stalled")?,
                })
            })
            .collect()
    }

    async fn hold_view(
        &self,
        playbook: &PlaybookRef,
        name: &str,
        holder: &str,
        lease: Duration,
    ) -> Result<bool> {
        let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
        let held = built_sql::<D>(format!(
            "UPDATE views SET held_by = $2, held_until = {lease_until} \
             WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $3 AND id = $4) \
             AND name = $5 AND (held_by IS NULL OR held_by = $2 OR held_until <= {now}) \
             RETURNING name",
            now = D::NOW,
            lease_until = D::LEASE_UNTIL,
        ))
        .bind(lease_ms as f64)
        .bind(holder)
        .bind_playbook(playbook)
        .bind(name)
        .fetch_optional(&self.writer)
        .await?;
        Ok(held.is_some())
    }

    async fn list_playbooks(&self, org: &str) -> Result<Vec<Playbook>> {
        let playbooks =
            sql::<D>("SELECT org, id, title, created_at FROM playbooks WHERE org = $1 ORDER BY id")
                .bind(org)
                .fetch_all(&self.reader)
                .await?
                .iter()
                .map(playbook_from_row)
                .collect::<Result<Vec<_>>>()?;
        if playbooks.is_empty() && self.get_org(org).await?.is_none() {
            return Err(StoreError::NotFound(format!("org {org}")));
        }
        Ok(playbooks)
    }

    async fn create_definition(
        &self,
        playbook: &PlaybookRef,
        new: NewDefinitionVersion,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)> {
        let changed = definitions::create(self, playbook, new, event).await;
        self.definitions_changed();
        changed
    }

    async fn update_definition(
        &self,
        playbook: &PlaybookRef,
        expected_version: i64,
        new: NewDefinitionVersion,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)> {
        let changed = definitions::update(self, playbook, expected_version, new, event).await;
        self.definitions_changed();
        changed
    }

    async fn retire_definition(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        event: NewEvent,
    ) -> Result<(DefinitionVersion, Event)> {
        let changed = definitions::retire(self, playbook, key, event).await;
        self.definitions_changed();
        changed
    }

    async fn get_definition(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
    ) -> Result<Option<DefinitionVersion>> {
        let latest = match &self.kept {
            latest::KeptDefinitions::Alone(latest) => latest,
            latest::KeptDefinitions::Stamped(stamped) => {
                return self.stamped_definition(stamped, playbook, key).await;
            }
        };
        let generation = match latest.get(playbook, key) {
            Ok(kept) => return Ok(kept),
            Err(generation) => generation,
        };
        let found = self.definition_at(playbook, key, None).await?;
        latest.fill(generation, playbook, key, &found);
        Ok(found)
    }

    async fn get_definition_version(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        version: i64,
    ) -> Result<Option<DefinitionVersion>> {
        self.definition_at(playbook, key, Some(version)).await
    }

    async fn list_definitions(
        &self,
        playbook: &PlaybookRef,
        def_type: Option<&str>,
    ) -> Result<Vec<DefinitionVersion>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        sql::<D>(concat!(
            definition_columns!(),
            " WHERE d.playbook_pk = $1 AND (CAST($2 AS TEXT) IS NULL OR d.def_type = $2) \
             AND v.version = d.latest_version ORDER BY d.def_type, d.name"
        ))
        .bind(playbook_pk)
        .bind(def_type)
        .fetch_all_as(&self.reader, definition_from_row)
        .await
    }

    async fn append_events(
        &self,
        playbook: &PlaybookRef,
        events: Vec<NewEvent>,
    ) -> Result<Vec<Event>> {
        if events.is_empty() {
            self.require_playbook(playbook).await?;
            return Ok(Vec::new());
        }
        let mut tx = self.begin().await?;
        let reserved = reserve_seqs(&mut tx, playbook, events.len()).await?;
        let events = insert_events(&mut tx, playbook, &reserved, events).await?;
        tx.commit().await?;
        Ok(events)
    }

    async fn list_events(
        &self,
        playbook: &PlaybookRef,
        filter: &EventFilter,
    ) -> Result<Vec<Event>> {
        self.events_page(playbook, filter).await
    }

    async fn get_event(&self, playbook: &PlaybookRef, id: &str) -> Result<Option<Event>> {
        sql::<D>(concat!(
            event_columns!(),
            " WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) \
             AND id = $3"
        ))
        .bind_playbook(playbook)
        .bind(id)
        .fetch_optional_as(&self.reader, event_from_row)
        .await
    }

    async fn start_run(
        &self,
        playbook: &PlaybookRef,
        new: NewRun,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)> {
        if let Some(raw) = &self.raw {
            return sqlite_changes::start(raw, playbook, new, events).await;
        }
        runs::start(self, playbook, new, events).await
    }

    async fn restart_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        expected_attempt: i64,
        definition_version: i64,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)> {
        let attempt = runs::NextAttempt {
            expected_attempt,
            definition_version,
        };
        runs::restart(self, playbook, run_id, attempt, events).await
    }

    async fn record_run_events(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        events: Vec<NewEvent>,
    ) -> Result<Vec<Event>> {
        if let Some(raw) = &self.raw {
            return sqlite_changes::record_events(raw, playbook, run_id, events).await;
        }
        runs::record_events(self, playbook, run_id, events).await
    }

    async fn end_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        ending: RunEnding,
        events: Vec<NewEvent>,
    ) -> Result<(Run, Vec<Event>)> {
        if let Some(raw) = &self.raw {
            return sqlite_changes::end(raw, playbook, run_id, ending, events).await;
        }
        runs::end(self, playbook, run_id, ending, events).await
    }

    async fn get_run(&self, playbook: &PlaybookRef, run_id: &str) -> Result<Option<Run>> {
        sql::<D>(concat!(
            "SELECT ",
            run_columns!(),
            " FROM runs WHERE playbook_pk = (SELECT pk FROM playbooks WHERE org = $1 AND id = $2) \
             AND run_id = $3"
        ))
        .bind_playbook(playbook)
        .bind(run_id)
        .fetch_optional_as(&self.reader, run_from_row)
        .await
    }

    async fn list_runs(&self, playbook: &PlaybookRef, filter: &RunFilter) -> Result<Vec<Run>> {
        self.page(playbook, runs_page(filter, D::PROBLEM_REASON), run_from_row)
            .await
    }

    async fn commit_workflow_step(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        step: Arc<WorkflowStep>,
    ) -> Result<StepCommitted> {
        if let Some(raw) = &self.raw {
            return sqlite_changes::commit_step(raw, playbook, run_id, step).await;
        }
        work::commit_step(self, playbook, run_id, step).await
    }

    async fn get_workflow_state(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Option<(i64, Value)>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        let row = sql::<D>(
            "SELECT version, state FROM workflow_states WHERE playbook_pk = $1 AND run_id = $2",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .fetch_optional(&self.reader)
        .await?;
        row.map(|row| {
            Ok((
                row.get("version")?,
                row.json("state", "a workflow snapshot")?,
            ))
        })
        .transpose()
    }

    async fn add_work(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        work: Vec<NewWork>,
    ) -> Result<()> {
        work::add(self, playbook, run_id, work).await
    }

    async fn claim_work(&self, claimer: &str, lease: Duration, limit: u32) -> Result<Vec<Work>> {
        work::claim(self, claimer, lease, limit).await
    }

    async fn finish_work(&self, id: i64) -> Result<()> {
        sql::<D>("DELETE FROM work WHERE id = $1")
            .bind(id)
            .execute(&self.writer)
            .await?;
        Ok(())
    }

    async fn count_open_calls(&self, playbook: &PlaybookRef, root_run_id: &str) -> Result<i64> {
        let playbook_pk = self.require_playbook(playbook).await?;
        sql::<D>(
            "SELECT count(*) FROM runs WHERE playbook_pk = $1 AND root_run_id = $2 \
             AND status = 'started'",
        )
        .bind(playbook_pk)
        .bind(root_run_id)
        .scalar(&self.reader)
        .await
    }

    async fn next_work_due(&self) -> Result<Option<DateTime<Utc>>> {
        sql::<D>(
            "SELECT min(CASE WHEN claimed_until > due_at THEN claimed_until ELSE due_at END) \
             AS due_at FROM work",
        )
        .fetch_one(&self.reader)
        .await?
        .optional_time("due_at")
    }

    async fn work_backlog(&self) -> Result<WorkBacklog> {
        let row = built_sql::<D>(format!(
            "SELECT count(*) AS items, \
             coalesce(sum(CASE WHEN {ready} THEN 1 ELSE 0 END), 0) AS due, \
             min(CASE WHEN {ready} THEN due_at END) AS oldest_due_at, {now} AS now FROM work",
            ready = format_args!(
                "due_at <= {now} AND (claimed_until IS NULL OR claimed_until <= {now})",
                now = D::NOW
            ),
            now = D::NOW,
        ))
        .fetch_one(&self.reader)
        .await?;
        let oldest_due_ms = match row.optional_time("oldest_due_at")? {
            Some(due) => (row.time("now")? - due).num_milliseconds().max(0),
            None => 0,
        };
        Ok(WorkBacklog {
            items: row.get("items")?,
            due: row.get("due")?,
            oldest_due_ms,
        })
    }

    async fn next_input_due(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        except: Option<i64>,
    ) -> Result<Option<DateTime<Utc>>> {
        sql::<D>(
            "SELECT min(w.due_at) AS due_at FROM work w JOIN playbooks p \
             ON p.pk = w.playbook_pk WHERE p.org = $1 AND p.id = $2 AND w.run_id = $3 \
             AND w.ordered AND w.id <> $4",
        )
        .bind_playbook(playbook)
        .bind(run_id)
        .bind(except.unwrap_or(0))
        .fetch_one(&self.reader)
        .await?
        .optional_time("due_at")
    }

    async fn receive_run_event(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        event_id: &str,
        event: Value,
        work: NewWork,
    ) -> Result<Option<RunInboxEvent>> {
        let sent = work::SentEvent { event_id, event };
        work::receive_event(self, playbook, run_id, sent, work).await
    }

    async fn list_run_inbox(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Vec<RunInboxEvent>> {
        let playbook_pk = self.require_playbook(playbook).await?;
        sql::<D>(
            "SELECT event_id, seq, event, received_at FROM run_inbox \
             WHERE playbook_pk = $1 AND run_id = $2 ORDER BY seq",
        )
        .bind(playbook_pk)
        .bind(run_id)
        .fetch_all_as(&self.reader, |row| rows::inbox_event_from_row(row, run_id))
        .await
    }

    async fn start_interaction(
        &self,
        playbook: &PlaybookRef,
        new: NewRun,
        events: Vec<NewEvent>,
        request: NewRequest,
        work: Vec<NewWork>,
    ) -> Result<(Run, Request)> {
        let left = requests::LeftRequest { request, work };
        requests::start_interaction(self, playbook, new, events, left).await
    }

    async fn close_request(
        &self,
        playbook: &PlaybookRef,
        request_id: &str,
        close: RequestClose,
        ending: RunEnding,
        events: Vec<NewEvent>,
        done_work: Vec<String>,
    ) -> Result<(Request, Run)> {
        let closing = requests::Closing {
            close,
            ending,
            done_work,
        };
        requests::close(self, playbook, request_id, closing, events).await
    }

    async fn get_request(
        &self,
        playbook: &PlaybookRef,
        request_id: &str,
    ) -> Result<Option<Request>> {
        requests::request_where(self, playbook, "request_id", request_id).await
    }

    async fn get_request_of_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> Result<Option<Request>> {
        requests::request_where(self, playbook, "run_id", run_id).await
    }

    async fn list_requests(
        &self,
        playbook: &PlaybookRef,
        filter: &RequestFilter,
    ) -> Result<Vec<Request>> {
        self.page(playbook, requests_page(filter), rows::request_from_row)
            .await
    }

    async fn list_triggers(&self) -> Result<Vec<Trigger>> {
        triggers::list(self).await
    }

    async fn queue_trigger_starts(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        since_seq: i64,
        cursor_seq: i64,
        starts: Vec<TriggerStart>,
        waiting_max: i64,
    ) -> Result<Queued> {
        let cursor = triggers::Cursor {
            since_seq,
            cursor_seq,
        };
        triggers::queue_starts(self, playbook, workflow, cursor, starts, waiting_max).await
    }

    async fn take_trigger_starts(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        per_minute: i64,
    ) -> Result<Vec<TriggerStart>> {
        triggers::take_starts(self, playbook, workflow, per_minute).await
    }

    async fn settle_trigger_start(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        outcome: StartOutcome,
    ) -> Result<()> {
        triggers::settle_start(self, playbook, run_id, outcome).await
    }

    async fn move_schedule(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        kind: &str,
        since_seq: i64,
        expected_due_at: Option<DateTime<Utc>>,
        due_at: DateTime<Utc>,
        running_run_id: Option<&str>,
    ) -> Result<bool> {
        let schedule = triggers::ScheduleMove {
            kind,
            since_seq,
            expected_due_at,
            due_at,
            running_run_id,
        };
        triggers::move_schedule(self, playbook, workflow, schedule).await
    }

    async fn list_listeners(&self) -> Result<Vec<Listener>> {
        triggers::list_listeners(self).await
    }

    async fn advance_listener(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        reference: &str,
        cursor_seq: i64,
    ) -> Result<()> {
        triggers::advance_listener(self, playbook, run_id, reference, cursor_seq).await
    }

    async fn purge_runs(
        &self,
        playbook: &PlaybookRef,
        ended_before: DateTime<Utc>,
        batch: u32,
    ) -> Result<Purged> {
        lifecycle::purge_batch(self, playbook, ended_before, batch).await
    }

    async fn delete_playbook(&self, playbook: &PlaybookRef, force: bool) -> Result<Deleted> {
        let deleted = lifecycle::delete_playbook(self, playbook, force).await;
        self.definitions_changed();
        deleted
    }

    async fn delete_org(&self, org: &str, force: bool) -> Result<Deleted> {
        let deleted = lifecycle::delete_org(self, org, force).await;
        self.definitions_changed();
        deleted
    }
}

/// The `list_events` statement of a filter: one per combination of filters, so that each can
/// use its own index. `$1` the playbook, `$2` the seq after, `$3` the limit, then the run id
/// and the type, those the filter gives.
pub(crate) fn events_statement<D: Dialect>(filter: &EventFilter) -> String {
    // The index each reads, and its conditions beside the playbook and the cursor. A type
    // every run records is dense in the log, so it is read in order; any other is in the
    // type index, whose condition the statement repeats so the planner may use it.
    let (index, conditions) = match (&filter.run_id, &filter.event_type) {
        (None, None) => (None, ""),
        (Some(_), None) => (Some("events_run_idx"), " AND run_id = $4"),
        (Some(_), Some(_)) => (Some("events_run_idx"), " AND run_id = $4 AND type = $5"),
        (None, Some(event_type)) if LOG_ORDER_EVENT_TYPES.contains(&event_type.as_str()) => {
            (None, " AND type = $4")
        }
        (None, Some(_)) => (
            Some("events_type_idx"),
            match D::ENGINE {
                Engine::Sqlite => concat!(" AND type = $4 AND ", sqlite_indexed_event_types!()),
                Engine::Postgres => concat!(" AND type = $4 AND ", indexed_event_types!()),
            },
        ),
    };
    // SQLite's planner, without statistics, would rather read the log in `seq` order than
    // either index; the index gives exactly the page asked for, so it is named.
    let named = match (D::ENGINE, index) {
        (Engine::Sqlite, Some(index)) => format!(" INDEXED BY {index}"),
        _ => String::new(),
    };
    format!(
        "{}{named} WHERE playbook_pk = $1 AND seq > $2{conditions} ORDER BY seq LIMIT $3",
        event_columns!()
    )
}

#[cfg(test)]
mod plan_tests {
    use super::*;
    use crate::RunStatus;

    /// How SQLite would read `sql` on a migrated file: each step of its plan, in words.
    fn plan(connection: &rusqlite::Connection, sql: &str) -> String {
        let mut statement = connection
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap();
        // Unbound parameters are NULL: the plan does not depend on their values.
        let mut rows = statement.raw_query();
        let mut steps = Vec::new();
        while let Some(row) = rows.next().unwrap() {
            steps.push(row.get::<_, String>(3).unwrap());
        }
        steps.join("; ")
    }

    /// The indexes migration 0012 made partial are read by the statements that repeat their
    /// conditions, and the other statements read the table in order.
    #[tokio::test]
    async fn listings_read_the_lean_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plans.db");
        let _store = crate::sqlite::open(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        let c = crate::sqlite::open_raw(&path).unwrap();
        let events = |run_id: Option<&str>, event_type: Option<&str>| {
            plan(
                &c,
                &events_statement::<sqlx::Sqlite>(&EventFilter {
                    run_id: run_id.map(str::to_owned),
                    event_type: event_type.map(str::to_owned),
                    ..EventFilter::default()
                }),
            )
        };
        let rare = events(None, Some("order.placed"));
        assert!(rare.contains("USING INDEX events_type_idx"), "{rare}");
        assert!(events(None, Some("run_failed")).contains("USING INDEX events_type_idx"));
        let dense = events(None, Some("step_started"));
        assert!(dense.contains("USING PRIMARY KEY"), "{dense}");
        let of_run = events(Some("r"), None);
        assert!(of_run.contains("USING INDEX events_run_idx"), "{of_run}");
        let of_run_by_type = events(Some("r"), Some("step_started"));
        assert!(
            of_run_by_type.contains("USING INDEX events_run_idx"),
            "{of_run_by_type}"
        );
        assert!(!events(None, None).contains("TEMP B-TREE"));
        let runs = |status: Option<RunStatus>| {
            let filter = RunFilter {
                status,
                ..RunFilter::default()
            };
            plan(
                &c,
                &crate::shared::runs_page(&filter, Engine::Sqlite.problem_reason()).sql,
            )
        };
        for status in [RunStatus::Started, RunStatus::Failed, RunStatus::Rejected] {
            let read = runs(Some(status));
            assert!(read.contains("USING INDEX runs_status_idx"), "{read}");
            assert!(!read.contains("TEMP B-TREE"), "{read}");
        }
        let by_name = plan(
            &c,
            &crate::shared::runs_page(
                &RunFilter {
                    def_type: Some("workflow".into()),
                    name: Some("flow".into()),
                    after_run_id: Some("r".into()),
                    ..RunFilter::default()
                },
                Engine::Sqlite.problem_reason(),
            )
            .sql,
        );
        assert!(
            by_name.contains("USING INDEX runs_definition_idx"),
            "{by_name}"
        );
        assert!(!by_name.contains("TEMP B-TREE"), "{by_name}");
        let all = runs(None);
        assert!(all.contains("USING INDEX runs_list_idx"), "{all}");
        assert!(!all.contains("TEMP B-TREE"), "{all}");
        let succeeded = runs(Some(RunStatus::Succeeded));
        assert!(
            succeeded.contains("USING INDEX runs_list_idx"),
            "{succeeded}"
        );
        assert!(!succeeded.contains("TEMP B-TREE"), "{succeeded}");
        let open_calls = plan(&c, runs::OPEN_CALLS);
        assert!(open_calls.contains("INDEX runs_root_idx"), "{open_calls}");
    }
}
