//! The changes to definitions: a new one, its next version, its retirement, and the triggers
//! a workflow's save keeps, starts and stops.

use serde_json::Value;
use sqlx::Transaction;
use sqlx::types::Json;

use super::rows::{definition_columns, definition_from_row, from_json};
use super::{Reserved, SqlStore, insert_events, reserve_seqs};
use crate::dialect::{Dialect, sql};
use crate::shared::{
    definition_change_refused, saved_version, single, triggered_workflows_reached,
};
use crate::{
    DefinitionKey, DefinitionVersion, EarlierFilters, Event, NewDefinitionVersion, NewEvent,
    NewTrigger, PlaybookRef, Result, StoreError, TRIGGERED_WORKFLOWS_MAX, earlier_after_change,
};

pub(super) async fn create<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    new: NewDefinitionVersion,
    event: NewEvent,
) -> Result<(DefinitionVersion, Event)> {
    let mut tx = store.begin().await?;
    let reserved = reserve_seqs(&mut tx, playbook, 1).await?;
    let definition_pk: Option<i64> = sql::<D>(
        "INSERT INTO definitions (playbook_pk, def_type, name, status, latest_version, \
         created_at, updated_at) VALUES ($1, $2, $3, 'active', 1, $4, $4) \
         ON CONFLICT (playbook_pk, def_type, name) DO NOTHING RETURNING pk",
    )
    .bind(reserved.playbook_pk)
    .bind(new.key.def_type.as_str())
    .bind(new.key.name.as_str())
    .bind(&reserved.now.stored)
    .scalar_optional(&mut tx)
    .await?;
    let Some(definition_pk) = definition_pk else {
        return Err(StoreError::Conflict(format!(
            "a {} definition named {} exists (active or retired)",
            new.key.def_type, new.key.name
        )));
    };
    let (overview, event) =
        save_version(&mut tx, playbook, &reserved, definition_pk, 1, &new, event).await?;
    tx.commit().await?;
    let now = reserved.now.at;
    Ok((saved_version(new, 1, overview, now, now, event.seq), event))
}

pub(super) async fn update<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    expected_version: i64,
    new: NewDefinitionVersion,
    event: NewEvent,
) -> Result<(DefinitionVersion, Event)> {
    let mut tx = store.begin().await?;
    let reserved = reserve_seqs(&mut tx, playbook, 1).await?;
    let row = sql::<D>(
        "UPDATE definitions SET latest_version = latest_version + 1, updated_at = $5 \
         WHERE playbook_pk = $1 AND def_type = $2 AND name = $3 AND status = 'active' \
         AND latest_version = $4 RETURNING pk, latest_version, created_at",
    )
    .bind(reserved.playbook_pk)
    .bind(new.key.def_type.as_str())
    .bind(new.key.name.as_str())
    .bind(expected_version)
    .bind(&reserved.now.stored)
    .fetch_optional(&mut tx)
    .await?;
    let Some(row) = row else {
        let stored = stored_status(&mut tx, reserved.playbook_pk, &new.key).await?;
        return Err(definition_change_refused(
            playbook,
            &new.key,
            stored,
            Some(expected_version),
        ));
    };
    let version: i64 = row.get("latest_version")?;
    let created_at = row.time("created_at")?;
    let definition_pk = row.get("pk")?;
    let (overview, event) = save_version(
        &mut tx,
        playbook,
        &reserved,
        definition_pk,
        version,
        &new,
        event,
    )
    .await?;
    tx.commit().await?;
    Ok((
        saved_version(
            new,
            version,
            overview,
            created_at,
            reserved.now.at,
            event.seq,
        ),
        event,
    ))
}

/// What a save records beside its definition's row: its event, its version row and, for a
/// workflow, its triggers. Returns the version's overview and the event.
async fn save_version<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook: &PlaybookRef,
    reserved: &Reserved<D>,
    definition_pk: i64,
    version: i64,
    new: &NewDefinitionVersion,
    event: NewEvent,
) -> Result<(Option<String>, Event)> {
    let event = single(insert_events(tx, playbook, reserved, vec![event]).await?)?;
    // The overview is taken from the version before when `new` has none.
    let overview = sql::<D>(
        "INSERT INTO definition_versions (definition_pk, version, source, overview, diagram, \
         description, derived, saved_seq, saved_at) \
         VALUES ($1, $2, $3, COALESCE($4, (SELECT overview FROM definition_versions \
         WHERE definition_pk = $1 AND version = $2 - 1)), $5, $6, $7, $8, $9) \
         RETURNING overview",
    )
    .bind(definition_pk)
    .bind(version)
    .bind(new.source.as_str())
    .bind(new.overview.as_deref())
    .bind(new.diagram.as_str())
    .bind(new.description.as_deref())
    .bind(Json(&new.derived))
    .bind(event.seq)
    .bind(&reserved.now.stored)
    .scalar(&mut *tx)
    .await?;
    if new.key.def_type == "workflow" {
        let saved = TriggerSave {
            playbook_pk: reserved.playbook_pk,
            workflow: &new.key.name,
            version,
            seq: event.seq,
            saved_at: &reserved.now.stored,
        };
        sync_triggers(tx, &saved, &new.triggers).await?;
    }
    Ok((overview, event))
}

pub(super) async fn retire<D: Dialect>(
    store: &SqlStore<D>,
    playbook: &PlaybookRef,
    key: &DefinitionKey,
    event: NewEvent,
) -> Result<(DefinitionVersion, Event)> {
    let mut tx = store.begin().await?;
    let reserved = reserve_seqs(&mut tx, playbook, 1).await?;
    let retired: Option<i64> = sql::<D>(
        "UPDATE definitions SET status = 'retired', updated_at = $4, retired_seq = $5 \
         WHERE playbook_pk = $1 AND def_type = $2 AND name = $3 AND status = 'active' \
         RETURNING pk",
    )
    .bind(reserved.playbook_pk)
    .bind(key.def_type.as_str())
    .bind(key.name.as_str())
    .bind(&reserved.now.stored)
    .bind(reserved.first_seq)
    .scalar_optional(&mut tx)
    .await?;
    let Some(definition_pk) = retired else {
        let stored = stored_status(&mut tx, reserved.playbook_pk, key).await?;
        return Err(definition_change_refused(playbook, key, stored, None));
    };
    // "Retiring the workflow stops every trigger."
    if key.def_type == "workflow" {
        sql::<D>("DELETE FROM triggers WHERE playbook_pk = $1 AND workflow = $2")
            .bind(reserved.playbook_pk)
            .bind(key.name.as_str())
            .execute(&mut tx)
            .await?;
    }
    let event = single(insert_events(&mut tx, playbook, &reserved, vec![event]).await?)?;
    let row = sql::<D>(concat!(
        definition_columns!(),
        " WHERE d.pk = $1 AND v.version = d.latest_version"
    ))
    .bind(definition_pk)
    .fetch_one(&mut tx)
    .await?;
    let definition = definition_from_row(&row)?;
    tx.commit().await?;
    Ok((definition, event))
}

/// The status and latest version of a definition, when there is one.
async fn stored_status<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    playbook_pk: i64,
    key: &DefinitionKey,
) -> Result<Option<(String, i64)>> {
    let row = sql::<D>(
        "SELECT status, latest_version FROM definitions \
         WHERE playbook_pk = $1 AND def_type = $2 AND name = $3",
    )
    .bind(playbook_pk)
    .bind(key.def_type.as_str())
    .bind(key.name.as_str())
    .fetch_optional(&mut *tx)
    .await?;
    row.map(|row| Ok((row.get("status")?, row.get("latest_version")?)))
        .transpose()
}

/// A workflow's save, as its triggers see it.
struct TriggerSave<'a, D: Dialect> {
    playbook_pk: i64,
    workflow: &'a str,
    /// The version saved.
    version: i64,
    /// The seq of the save's event.
    seq: i64,
    saved_at: &'a D::Time,
}

/// A trigger as a save finds it.
struct KeptTrigger {
    kind: String,
    spec: Value,
    cursor_seq: i64,
    earlier: Option<Value>,
}

/// A workflow's triggers after a save: one left as it was keeps its row (cursor, due time,
/// running run) and starts the new version; one changed or added starts from the save; one
/// removed stops. A workflow that had none and has some counts against
/// [`TRIGGERED_WORKFLOWS_MAX`]; saves of triggers are serialized by the playbook's seqs (its row
/// lock on PostgreSQL), so two saves cannot both take the last place.
async fn sync_triggers<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    save: &TriggerSave<'_, D>,
    triggers: &[NewTrigger],
) -> Result<()> {
    let kept = sql::<D>(
        "SELECT kind, spec, cursor_seq, earlier FROM triggers \
         WHERE playbook_pk = $1 AND workflow = $2",
    )
    .bind(save.playbook_pk)
    .bind(save.workflow)
    .fetch_all(&mut *tx)
    .await?
    .iter()
    .map(|row| {
        Ok(KeptTrigger {
            kind: row.get("kind")?,
            spec: row.json("spec", "a trigger")?,
            cursor_seq: row.get("cursor_seq")?,
            earlier: row.optional_json("earlier", "a trigger's earlier filters")?,
        })
    })
    .collect::<Result<Vec<_>>>()?;
    if kept.is_empty() && !triggers.is_empty() {
        let workflows: i64 =
            sql::<D>("SELECT count(DISTINCT workflow) FROM triggers WHERE playbook_pk = $1")
                .bind(save.playbook_pk)
                .scalar(&mut *tx)
                .await?;
        if workflows >= TRIGGERED_WORKFLOWS_MAX {
            return Err(triggered_workflows_reached(workflows));
        }
    }
    for before in &kept {
        if !triggers.iter().any(|t| t.kind == before.kind) {
            sql::<D>("DELETE FROM triggers WHERE playbook_pk = $1 AND workflow = $2 AND kind = $3")
                .bind(save.playbook_pk)
                .bind(save.workflow)
                .bind(before.kind.as_str())
                .execute(&mut *tx)
                .await?;
        }
    }
    for trigger in triggers {
        let before = kept.iter().find(|kept| kept.kind == trigger.kind);
        save_trigger(tx, save, trigger, before).await?;
    }
    Ok(())
}

/// Saves one trigger of a workflow's save, given the row it had before, if any.
async fn save_trigger<D: Dialect>(
    tx: &mut Transaction<'static, D>,
    save: &TriggerSave<'_, D>,
    trigger: &NewTrigger,
    before: Option<&KeptTrigger>,
) -> Result<()> {
    if before.is_some_and(|before| before.spec == trigger.spec) {
        sql::<D>(
            "UPDATE triggers SET version = $4 \
             WHERE playbook_pk = $1 AND workflow = $2 AND kind = $3",
        )
        .bind(save.playbook_pk)
        .bind(save.workflow)
        .bind(trigger.kind.as_str())
        .bind(save.version)
        .execute(&mut *tx)
        .await?;
        return Ok(());
    }
    // A changed event trigger keeps its earlier filters for the events it has not read.
    let seq = save.seq;
    let (cursor, earlier) = match before {
        Some(before) if before.kind == "event" => {
            let earlier: Vec<EarlierFilters> = match &before.earlier {
                Some(earlier) => from_json(earlier.clone(), "a trigger's earlier filters")?,
                None => Vec::new(),
            };
            let earlier = earlier_after_change(earlier, &before.spec, before.cursor_seq, seq);
            let cursor = if earlier.is_empty() {
                seq - 1
            } else {
                before.cursor_seq
            };
            (cursor, earlier)
        }
        _ => (seq - 1, Vec::new()),
    };
    let earlier = match earlier.is_empty() {
        true => None,
        false => Some(serde_json::to_value(&earlier).map_err(|error| {
            StoreError::Corrupt(format!("a trigger's earlier filters: {error}"))
        })?),
    };
    sql::<D>(
        "INSERT INTO triggers (playbook_pk, workflow, kind, spec, version, since_seq, \
         saved_at, cursor_seq, earlier) VALUES ($1, $2, $3, $5, $4, $6, $7, $8, $9) \
         ON CONFLICT (playbook_pk, workflow, kind) DO UPDATE SET spec = excluded.spec, \
         version = excluded.version, since_seq = excluded.since_seq, \
         saved_at = excluded.saved_at, cursor_seq = excluded.cursor_seq, due_at = NULL, \
         earlier = excluded.earlier",
    )
    .bind(save.playbook_pk)
    .bind(save.workflow)
    .bind(trigger.kind.as_str())
    .bind(save.version)
    .bind(Json(&trigger.spec))
    .bind(seq)
    .bind(save.saved_at)
    .bind(cursor)
    .bind(earlier.as_ref().map(Json))
    .execute(&mut *tx)
    .await?;
    Ok(())
}
