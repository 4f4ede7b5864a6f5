//! What both stores share: the errors they report, the page size, and events and versions as
//! a change saved them.

use chrono::{DateTime, Utc};

use crate::{
    DefinitionKey, DefinitionStatus, DefinitionVersion, EVENTS_PAGE_MAX, Event, EventFilter,
    NewDefinitionVersion, NewEvent, PlaybookRef, Result, StoreError,
};

/// How many events a filter asks for: its `limit`, where 0, and any value above
/// [`EVENTS_PAGE_MAX`], mean `EVENTS_PAGE_MAX`.
pub(crate) fn page_limit(filter: &EventFilter) -> i64 {
    let limit = if filter.limit == 0 {
        EVENTS_PAGE_MAX
    } else {
        filter.limit.min(EVENTS_PAGE_MAX)
    };
    i64::from(limit)
}

/// Turns a failed event insert into `Conflict` when it broke one of the event log's unique
/// rules, naming the rule; any other failure stays a database fault.
pub(crate) fn event_insert_error(error: sqlx::Error, playbook: &PlaybookRef) -> StoreError {
    let sqlx::Error::Database(database_error) = &error else {
        return StoreError::Database(error);
    };
    if !database_error.is_unique_violation() {
        return StoreError::Database(error);
    }
    // PostgreSQL names the constraint; SQLite names the columns in its message.
    let rule = database_error
        .constraint()
        .unwrap_or_else(|| database_error.message());
    let PlaybookRef { org, playbook } = playbook;
    if rule.contains("run_seq") {
        StoreError::Conflict(format!(
            "an event of the same run with the same number is already recorded in playbook {org}/{playbook}"
        ))
    } else {
        StoreError::Conflict(format!(
            "an event with the same id is already recorded in playbook {org}/{playbook}"
        ))
    }
}

/// The error for a playbook that is not there.
pub(crate) fn playbook_not_found(playbook: &PlaybookRef) -> StoreError {
    StoreError::NotFound(format!("playbook {}/{}", playbook.org, playbook.playbook))
}

/// The error for a definition that is not there.
pub(crate) fn definition_not_found(playbook: &PlaybookRef, key: &DefinitionKey) -> StoreError {
    StoreError::NotFound(format!(
        "{} definition {} in playbook {}/{}",
        key.def_type, key.name, playbook.org, playbook.playbook
    ))
}

/// Why a compare-and-set on a definition's latest version did not apply, from what is stored
/// now: its status and latest version, or nothing.
pub(crate) fn definition_change_refused(
    playbook: &PlaybookRef,
    key: &DefinitionKey,
    stored: Option<(String, i64)>,
    expected_version: Option<i64>,
) -> StoreError {
    let Some((status, latest_version)) = stored else {
        return definition_not_found(playbook, key);
    };
    let what = format!("{} definition {}", key.def_type, key.name);
    if status == DefinitionStatus::Retired.as_str() {
        return StoreError::Conflict(format!("the {what} is retired"));
    }
    match expected_version {
        Some(expected) => StoreError::Conflict(format!(
            "the {what} is at version {latest_version}, not {expected}: it changed since it was read"
        )),
        None => StoreError::Conflict(format!("the {what} changed meanwhile")),
    }
}

/// Reads a definition's status as stored.
pub(crate) fn parse_status(status: &str) -> Result<DefinitionStatus> {
    match status {
        "active" => Ok(DefinitionStatus::Active),
        "retired" => Ok(DefinitionStatus::Retired),
        other => Err(StoreError::Corrupt(format!(
            "a definition's status is {other:?}"
        ))),
    }
}

/// The event as it was stored.
pub(crate) fn recorded_event(event: NewEvent, seq: i64, now: DateTime<Utc>) -> Event {
    Event {
        seq,
        id: event.id,
        event_type: event.event_type,
        source: event.source,
        subject: event.subject,
        time: event.time.unwrap_or(now),
        datacontenttype: event.datacontenttype,
        data: event.data,
        extensions: event.extensions,
        run_id: event.run_id,
        run_seq: event.run_seq,
        recorded_at: now,
    }
}

/// The one event of a change that appends one.
pub(crate) fn single(events: Vec<Event>) -> Result<Event> {
    let count = events.len();
    let mut events = events.into_iter();
    match (events.next(), events.next()) {
        (Some(event), None) => Ok(event),
        _ => Err(StoreError::Corrupt(format!(
            "a change appended {count} events, not one"
        ))),
    }
}

/// A version just saved, as `get_definition` would read it.
pub(crate) fn saved_version(
    new: NewDefinitionVersion,
    version: i64,
    overview: Option<String>,
    created_at: DateTime<Utc>,
    saved_at: DateTime<Utc>,
    saved_seq: i64,
) -> DefinitionVersion {
    DefinitionVersion {
        key: new.key,
        version,
        status: DefinitionStatus::Active,
        source: new.source,
        overview,
        diagram: new.diagram,
        description: new.description,
        derived: new.derived,
        created_at,
        updated_at: saved_at,
        saved_seq,
    }
}
