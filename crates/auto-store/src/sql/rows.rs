//! The model's values read from the rows the store's statements return, on either database.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::dialect::{Dialect, SqlRow};
use crate::shared::{parse_request_status, parse_run_status, parse_status};
use crate::{
    DefinitionKey, DefinitionVersion, Event, Listener, Org, Playbook, PlaybookRef, RecallView,
    Request, Result, Run, RunInboxEvent, StoreError, Trigger, TriggerStart, Work,
};

/// The columns `event_from_row` reads, in the order a `SELECT` lists them.
macro_rules! event_columns {
    () => {
        "SELECT seq, id, type, source, subject, time, datacontenttype, data, extensions, \
         run_id, run_seq, recorded_at FROM events"
    };
}
pub(crate) use event_columns;

/// The condition of `events_type_idx` on PostgreSQL (migration 0012): the types outside
/// [`crate::LOG_ORDER_EVENT_TYPES`]. A statement that repeats it may read that index.
macro_rules! indexed_event_types {
    () => {
        "type NOT IN ('run_started', 'run_succeeded', 'step_started', 'step_completed', \
         'call_started', 'call_ended', 'model_call_started', 'model_call_answered', \
         'tool_call_started', 'tool_call_answered', 'wait_started', 'wait_ended')"
    };
}
/// The same condition on SQLite (migration 0014), as a chain of comparisons: SQLite would
/// build `NOT IN`'s list as a temporary B-tree for every event it inserts.
macro_rules! sqlite_indexed_event_types {
    () => {
        "type <> 'run_started' AND type <> 'run_succeeded' AND type <> 'step_started' \
         AND type <> 'step_completed' AND type <> 'call_started' AND type <> 'call_ended' \
         AND type <> 'model_call_started' AND type <> 'model_call_answered' \
         AND type <> 'tool_call_started' AND type <> 'tool_call_answered' \
         AND type <> 'wait_started' AND type <> 'wait_ended'"
    };
}
pub(crate) use {indexed_event_types, sqlite_indexed_event_types};

/// The columns `definition_from_row` reads, from `definitions d` joined with
/// `definition_versions v`.
macro_rules! definition_columns {
    () => {
        "SELECT d.def_type, d.name, d.status, d.latest_version, d.created_at, d.updated_at, \
         v.version, v.source, v.overview, v.diagram, v.description, v.derived, v.saved_seq, \
         v.saved_at \
         FROM definitions d JOIN definition_versions v ON v.definition_pk = d.pk"
    };
}
pub(crate) use definition_columns;

pub(crate) fn event_from_row<D: Dialect>(row: &SqlRow<D>) -> Result<Event> {
    let extensions = match row.json("extensions", "an event's attributes")? {
        Value::Object(map) => map,
        other => {
            return Err(StoreError::Corrupt(format!(
                "an event's attributes are {other}, not an object"
            )));
        }
    };
    // A source and a time kept as NULL are the run's own and the time of recording
    // (migration 0015).
    let run_id: Option<String> = row.get("run_id")?;
    let recorded_at = row.time("recorded_at")?;
    let source = match (row.get::<Option<String>>("source")?, &run_id) {
        (Some(source), _) => source,
        (None, Some(run_id)) => crate::shared::run_source(run_id),
        (None, None) => {
            return Err(StoreError::Corrupt(
                "an event without a run has no source".into(),
            ));
        }
    };
    let time = row.optional_time("time")?.unwrap_or(recorded_at);
    Ok(Event {
        seq: row.get("seq")?,
        id: row.get("id")?,
        event_type: row.get("type")?,
        source,
        subject: row.get("subject")?,
        time,
        datacontenttype: row.get("datacontenttype")?,
        data: row.optional_json("data", "an event's data")?,
        extensions,
        run_id,
        run_seq: row.get("run_seq")?,
        recorded_at,
    })
}

pub(crate) fn definition_from_row<D: Dialect>(row: &SqlRow<D>) -> Result<DefinitionVersion> {
    let version: i64 = row.get("version")?;
    let latest_version: i64 = row.get("latest_version")?;
    // The latest version was last touched when the definition was (saved or retired); an
    // older one when it was saved.
    let updated_at = if version == latest_version {
        row.time("updated_at")?
    } else {
        row.time("saved_at")?
    };
    let status: String = row.get("status")?;
    Ok(DefinitionVersion {
        key: DefinitionKey {
            def_type: row.get("def_type")?,
            name: row.get("name")?,
        },
        version,
        status: parse_status(&status)?,
        source: row.get("source")?,
        overview: row.get("overview")?,
        diagram: row.get("diagram")?,
        description: row.get("description")?,
        derived: row.json("derived", "a definition's derived JSON")?,
        created_at: row.time("created_at")?,
        updated_at,
        saved_seq: row.get("saved_seq")?,
    })
}

pub(crate) fn org_from_row<D: Dialect>(row: &SqlRow<D>) -> Result<Org> {
    Ok(Org {
        id: row.get("id")?,
        title: row.get("title")?,
        created_at: row.time("created_at")?,
    })
}

/// The columns `view_from_row` reads, from `views`.
macro_rules! view_columns {
    () => {
        "name, version, revision, view, folded_seq, built, stalled, updated_at"
    };
}
pub(crate) use view_columns;

pub(crate) fn view_from_row<D: Dialect>(row: &SqlRow<D>) -> Result<RecallView> {
    Ok(RecallView {
        name: row.get("name")?,
        version: row.get("version")?,
        revision: row.get("revision")?,
        view: row.json("view", "a recall function's view")?,
        folded_seq: row.get("folded_seq")?,
        built: row.get("built")?,
        stalled: row.optional_json("stalled", "a stalled view's event")?,
        updated_at: row.time("updated_at")?,
    })
}

pub(crate) fn playbook_from_row<D: Dialect>(row: &SqlRow<D>) -> Result<Playbook> {
    Ok(Playbook {
        org: row.get("org")?,
        id: row.get("id")?,
        title: row.get("title")?,
        created_at: row.time("created_at")?,
    })
}

/// A row a run is read from: one sqlx returned, or one read on the writer's own handle
/// (see `sqlite_changes`), so that a run is read one way.
pub(crate) trait RunRow {
    fn text(&self, column: &str) -> Result<String>;
    fn optional_text(&self, column: &str) -> Result<Option<String>>;
    fn int(&self, column: &str) -> Result<i64>;
    fn optional_int(&self, column: &str) -> Result<Option<i64>>;
    fn time(&self, column: &str) -> Result<DateTime<Utc>>;
    fn optional_time(&self, column: &str) -> Result<Option<DateTime<Utc>>>;
    fn json(&self, column: &str, what: &str) -> Result<Value>;
    fn optional_json(&self, column: &str, what: &str) -> Result<Option<Value>>;
}

impl<D: Dialect> RunRow for SqlRow<D> {
    fn text(&self, column: &str) -> Result<String> {
        self.get(column)
    }
    fn optional_text(&self, column: &str) -> Result<Option<String>> {
        self.get(column)
    }
    fn int(&self, column: &str) -> Result<i64> {
        self.get(column)
    }
    fn optional_int(&self, column: &str) -> Result<Option<i64>> {
        self.get(column)
    }
    fn time(&self, column: &str) -> Result<DateTime<Utc>> {
        SqlRow::time(self, column)
    }
    fn optional_time(&self, column: &str) -> Result<Option<DateTime<Utc>>> {
        SqlRow::optional_time(self, column)
    }
    fn json(&self, column: &str, what: &str) -> Result<Value> {
        SqlRow::json(self, column, what)
    }
    fn optional_json(&self, column: &str, what: &str) -> Result<Option<Value>> {
        SqlRow::optional_json(self, column, what)
    }
}

/// A run, from the columns of [`crate::shared::run_columns`].
pub(crate) fn run_from_row(row: &impl RunRow) -> Result<Run> {
    let status = row.text("status")?;
    Ok(Run {
        run_id: row.text("run_id")?,
        key: DefinitionKey {
            def_type: row.text("def_type")?,
            name: row.text("name")?,
        },
        definition_version: row.int("definition_version")?,
        status: parse_run_status(&status)?,
        input: row.json("input", "a run's input")?,
        output: row.optional_json("output", "a run's output")?,
        record: row.optional_json("record", "a run's record")?,
        problem: row.optional_json("problem", "a run's problem")?,
        started_by: row.text("started_by")?,
        parent_run_id: row.optional_text("parent_run_id")?,
        task_reference: row.optional_text("task_reference")?,
        depth: row.optional_int("depth")?,
        call_depth: row.optional_int("call_depth")?,
        parent_call_id: row.optional_text("parent_call_id")?,
        root_run_id: row.optional_text("root_run_id")?,
        trigger: row.optional_json("trigger_info", "a run's trigger")?,
        attempt: row.int("attempt")?,
        last_run_seq: row.int("last_run_seq")?,
        last_event_at: row.time("last_event_at")?,
        started_at: row.time("started_at")?,
        ended_at: row.optional_time("ended_at")?,
    })
}

/// A request, from the columns of [`crate::shared::request_columns`].
pub(crate) fn request_from_row<D: Dialect>(row: &SqlRow<D>) -> Result<Request> {
    let status: String = row.get("status")?;
    Ok(Request {
        request_id: row.get("request_id")?,
        run_id: row.get("run_id")?,
        key: DefinitionKey {
            def_type: row.get("def_type")?,
            name: row.get("name")?,
        },
        definition_version: row.get("definition_version")?,
        to: row.get("to_whom")?,
        message: row.get("message")?,
        input: row.json("input", "a request's input")?,
        output_schema: row.optional_json("output_schema", "a request's output schema")?,
        status: parse_request_status(&status)?,
        created_at: row.time("created_at")?,
        expires_at: row.time("expires_at")?,
        answered_by: row.get("answered_by")?,
        answer: row.optional_json("answer", "a request's answer")?,
        closed_at: row.optional_time("closed_at")?,
    })
}

/// A claimed work item, from `id, run_id, key, due_at, payload, org, playbook, ordered`.
pub(crate) fn work_from_row<D: Dialect>(row: &SqlRow<D>) -> Result<Work> {
    Ok(Work {
        id: row.get("id")?,
        run_id: row.get("run_id")?,
        key: row.get("key")?,
        due_at: row.time("due_at")?,
        payload: row.get("payload")?,
        playbook: PlaybookRef::new(row.get::<String>("org")?, row.get::<String>("playbook")?),
        ordered: row.get("ordered")?,
    })
}

/// An event sent to a run, from `event_id, seq, event, received_at`.
pub(crate) fn inbox_event_from_row<D: Dialect>(
    row: &SqlRow<D>,
    run_id: &str,
) -> Result<RunInboxEvent> {
    Ok(RunInboxEvent {
        run_id: run_id.to_owned(),
        event_id: row.get("event_id")?,
        seq: row.get("seq")?,
        event: row.json("event", "an event sent to a run")?,
        received_at: row.time("received_at")?,
    })
}

/// A trigger, from `org, playbook, workflow, kind, spec, version, since_seq, saved_at,
/// cursor_seq, due_at, running_run_id, earlier`.
pub(crate) fn trigger_from_row<D: Dialect>(row: &SqlRow<D>) -> Result<Trigger> {
    Ok(Trigger {
        playbook: PlaybookRef::new(row.get::<String>("org")?, row.get::<String>("playbook")?),
        workflow: row.get("workflow")?,
        kind: row.get("kind")?,
        spec: row.json("spec", "a trigger")?,
        version: row.get("version")?,
        since_seq: row.get("since_seq")?,
        saved_at: row.time("saved_at")?,
        cursor_seq: row.get("cursor_seq")?,
        due_at: row.optional_time("due_at")?,
        running_run_id: row.get("running_run_id")?,
        earlier: match row.optional_json("earlier", "a trigger's earlier filters")? {
            Some(earlier) => from_json(earlier, "a trigger's earlier filters")?,
            None => Vec::new(),
        },
    })
}

/// A listening task, from `org, playbook, run_id, reference, workflow, version, filters,
/// cursor_seq`.
pub(crate) fn listener_from_row<D: Dialect>(row: &SqlRow<D>) -> Result<Listener> {
    Ok(Listener {
        playbook: PlaybookRef::new(row.get::<String>("org")?, row.get::<String>("playbook")?),
        run_id: row.get("run_id")?,
        reference: row.get("reference")?,
        workflow: row.get("workflow")?,
        version: row.get("version")?,
        filters: row.json("filters", "a listener's filters")?,
        cursor_seq: row.get("cursor_seq")?,
    })
}

/// A start a trigger queued, from `run_id, workflow, event_seq, start, attempts`.
pub(crate) fn trigger_start_from_row<D: Dialect>(row: &SqlRow<D>) -> Result<TriggerStart> {
    Ok(TriggerStart {
        run_id: row.get("run_id")?,
        workflow: row.get("workflow")?,
        event_seq: row.get("event_seq")?,
        start: row.json("start", "a trigger's start")?,
        attempts: row.get("attempts")?,
    })
}

/// A typed value out of stored JSON.
pub(crate) fn from_json<T: serde::de::DeserializeOwned>(value: Value, what: &str) -> Result<T> {
    serde_json::from_value(value).map_err(|error| StoreError::Corrupt(format!("{what}: {error}")))
}

#[cfg(test)]
mod tests {
    /// The words run together, as SQL reads them: spaces, tabs and line ends count as one.
    fn squeezed(text: &str) -> String {
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The type index's condition is written for each database twice (the statement's macro,
    /// the migration) beside the constant: they must say the same.
    #[test]
    fn the_type_index_condition_is_one_list() {
        let quoted: Vec<String> = crate::LOG_ORDER_EVENT_TYPES
            .iter()
            .map(|t| format!("'{t}'"))
            .collect();
        let postgres = format!("type NOT IN ({})", quoted.join(", "));
        let sqlite = quoted
            .iter()
            .map(|t| format!("type <> {t}"))
            .collect::<Vec<_>>()
            .join(" AND ");
        assert_eq!(squeezed(indexed_event_types!()), postgres);
        assert_eq!(squeezed(sqlite_indexed_event_types!()), sqlite);
        for (migration, condition) in [
            (
                include_str!("../../migrations/sqlite/0014_type_index_condition.sql"),
                &sqlite,
            ),
            (
                include_str!("../../migrations/sqlite/0015_lean_events.sql"),
                &sqlite,
            ),
            (
                include_str!("../../migrations/postgres/0012_lean_indexes.sql"),
                &postgres,
            ),
        ] {
            let migration = squeezed(migration).replace("( ", "(");
            assert!(
                migration.contains(&format!("WHERE {condition};")),
                "{migration}"
            );
        }
    }
}
