//! What both stores share: the errors they report, the page size, and events and versions as
//! a change saved them.

use chrono::{DateTime, Utc};

use crate::{
    DefinitionKey, DefinitionStatus, DefinitionVersion, EVENTS_PAGE_MAX, Event, EventFilter,
    NewDefinitionVersion, NewEvent, PlaybookRef, RUNS_PAGE_MAX, Result, RunFilter, RunStatus,
    StoreError,
};

/// The columns of `runs` a run is read from, in the order both stores' `run_from_row` read
/// them by name.
macro_rules! run_columns {
    () => {
        "run_id, def_type, name, definition_version, status, input, output, record, problem, \
         started_by, parent_run_id, task_reference, depth, call_depth, trigger_info, attempt, \
         last_run_seq, last_event_at, started_at, ended_at, parent_call_id, root_run_id"
    };
}
pub(crate) use run_columns;

/// The columns of `requests` a request is read from, by name in both stores'
/// `request_from_row`.
macro_rules! request_columns {
    () => {
        "request_id, run_id, def_type, name, definition_version, to_whom, message, input, \
         output_schema, status, created_at, expires_at, answered_by, answer, closed_at"
    };
}
pub(crate) use request_columns;

/// How many events a filter asks for: its `limit`, where 0, and any value above
/// [`EVENTS_PAGE_MAX`], mean `EVENTS_PAGE_MAX`.
pub(crate) fn page_limit(filter: &EventFilter) -> i64 {
    page_size(filter.limit, EVENTS_PAGE_MAX)
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

/// A page of a playbook's runs or requests, newest first: its statement, and the values of its
/// parameters, which are bound after the playbook's pk (`$1`) and before the limit.
pub(crate) struct PageQuery<'a> {
    pub(crate) sql: String,
    pub(crate) params: Vec<PageParam<'a>>,
    pub(crate) limit: i64,
}

/// A value a page's statement is given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum PageParam<'a> {
    Text(&'a str),
    /// A time, bound as the database keeps its times.
    Time(DateTime<Utc>),
}

/// A condition of a page beyond the listing's own: `{expression} {op} $n` for a value given.
pub(crate) struct PageCondition<'a> {
    pub(crate) expression: &'static str,
    pub(crate) op: &'static str,
    pub(crate) value: PageParam<'a>,
}

/// What a page lists: the table, its columns, and the time and id it is ordered by (both
/// descending).
struct Listing {
    table: &'static str,
    columns: &'static str,
    time_column: &'static str,
    id_column: &'static str,
}

/// The page of `listing` after the row of id `after` (when given), with the rows whose
/// columns equal the filters given. Only the filter's conditions are in the statement, so each
/// combination is planned for its own index; the cursor row is found without them, so a row
/// whose status changed since the page before still marks its place.
fn page_query<'a>(
    listing: &Listing,
    filters: &[(&str, Option<&'a str>)],
    conditions: Vec<PageCondition<'a>>,
    index_condition: Option<&str>,
    after: Option<&'a str>,
    limit: i64,
) -> PageQuery<'a> {
    let Listing {
        table,
        columns,
        time_column,
        id_column,
    } = listing;
    let mut sql = format!("SELECT {columns} FROM {table} WHERE playbook_pk = $1");
    let mut params = Vec::new();
    for (column, value) in filters {
        if let Some(value) = value {
            params.push(PageParam::Text(value));
            sql.push_str(&format!(" AND {column} = ${}", params.len() + 1));
        }
    }
    for PageCondition {
        expression,
        op,
        value,
    } in conditions
    {
        params.push(value);
        sql.push_str(&format!(" AND {expression} {op} ${}", params.len() + 1));
    }
    if let Some(condition) = index_condition {
        sql.push_str(" AND ");
        sql.push_str(condition);
    }
    if let Some(after) = after {
        params.push(PageParam::Text(after));
        sql.push_str(&format!(
            " AND ({time_column}, {id_column}) < (SELECT {time_column}, {id_column} FROM {table} \
             WHERE playbook_pk = $1 AND {id_column} = ${})",
            params.len() + 1
        ));
    }
    sql.push_str(&format!(
        " ORDER BY {time_column} DESC, {id_column} DESC LIMIT ${}",
        params.len() + 2
    ));
    PageQuery { sql, params, limit }
}

/// The `list_runs` page a filter asks for: at most `limit` (0 and any value above
/// [`RUNS_PAGE_MAX`] mean `RUNS_PAGE_MAX`). The reason is read from the run's problem
/// (`reason_expression`: the database's way to read `problem.reason` as text); the times
/// bound `started_at`, since inclusive and until exclusive.
pub(crate) fn runs_page<'a>(
    filter: &'a RunFilter,
    reason_expression: &'static str,
) -> PageQuery<'a> {
    let listing = Listing {
        table: "runs",
        columns: run_columns!(),
        time_column: "started_at",
        id_column: "run_id",
    };
    let filters = [
        ("def_type", filter.def_type.as_deref()),
        ("name", filter.name.as_deref()),
        ("status", filter.status.map(RunStatus::as_str)),
    ];
    let limit = page_size(filter.limit, RUNS_PAGE_MAX);
    // `runs_status_idx` keeps every status but `succeeded` (migration 0012): a statement that
    // repeats its condition may read it; the succeeded, most runs, are read in order.
    let index_condition = filter
        .status
        .filter(|status| *status != RunStatus::Succeeded)
        .map(|_| "status <> 'succeeded'");
    let mut conditions = Vec::new();
    if let Some(reason) = filter.reason.as_deref() {
        conditions.push(PageCondition {
            expression: reason_expression,
            op: "=",
            value: PageParam::Text(reason),
        });
    }
    if let Some(since) = filter.since {
        conditions.push(PageCondition {
            expression: "started_at",
            op: ">=",
            value: PageParam::Time(since),
        });
    }
    if let Some(until) = filter.until {
        conditions.push(PageCondition {
            expression: "started_at",
            op: "<",
            value: PageParam::Time(until),
        });
    }
    page_query(
        &listing,
        &filters,
        conditions,
        index_condition,
        filter.after_run_id.as_deref(),
        limit,
    )
}

/// The `list_requests` page a filter asks for: at most `limit` (0 and any value above
/// [`crate::REQUESTS_PAGE_MAX`] mean `REQUESTS_PAGE_MAX`).
pub(crate) fn requests_page(filter: &crate::RequestFilter) -> PageQuery<'_> {
    let listing = Listing {
        table: "requests",
        columns: request_columns!(),
        time_column: "created_at",
        id_column: "request_id",
    };
    let filters = [("status", filter.status.map(crate::RequestStatus::as_str))];
    let limit = page_size(filter.limit, crate::REQUESTS_PAGE_MAX);
    page_query(
        &listing,
        &filters,
        Vec::new(),
        None,
        filter.after_request_id.as_deref(),
        limit,
    )
}

/// A page's size: `limit`, where 0, and any value above `max`, mean `max`.
fn page_size(limit: u32, max: u32) -> i64 {
    i64::from(if limit == 0 { max } else { limit.min(max) })
}

/// A run's events, each given the run's id when it has none, and the highest `run_seq` among
/// them (0 when none has one). `Conflict` when an event names another run.
pub(crate) fn run_events(run_id: &str, events: Vec<NewEvent>) -> Result<(Vec<NewEvent>, i64)> {
    step_events(run_id, &[], events)
}

/// As [`run_events`], where events of the runs `children` are also the change's: each keeps
/// its own run id. The last `run_seq` is `run_id`'s.
pub(crate) fn step_events(
    run_id: &str,
    children: &[&str],
    mut events: Vec<NewEvent>,
) -> Result<(Vec<NewEvent>, i64)> {
    own_events(run_id, &mut events);
    let last_run_seq = last_run_seq(run_id, children, &events)?;
    Ok((events, last_run_seq))
}

/// Gives each of `events` without a run id `run_id`.
pub(crate) fn own_events(run_id: &str, events: &mut [NewEvent]) {
    for event in events.iter_mut().filter(|event| event.run_id.is_none()) {
        event.run_id = Some(run_id.to_owned());
    }
}

/// The highest `run_seq` among `run_id`'s `events` (0 when none has one), where an event
/// without a run id is `run_id`'s. `Conflict` when one names a run that is neither `run_id`
/// nor one of `children`.
pub(crate) fn last_run_seq(run_id: &str, children: &[&str], events: &[NewEvent]) -> Result<i64> {
    let mut last_run_seq = 0;
    for event in events {
        match event.run_id.as_deref() {
            None => {}
            Some(own) if own == run_id => {}
            Some(child) if children.contains(&child) => continue,
            Some(other) => {
                return Err(StoreError::Conflict(format!(
                    "the event {} of run {other} cannot be recorded as run {run_id}'s",
                    event.id
                )));
            }
        }
        last_run_seq = last_run_seq.max(event.run_seq.unwrap_or(0));
    }
    Ok(last_run_seq)
}

/// The error for a run that is not there.
pub(crate) fn run_not_found(playbook: &PlaybookRef, run_id: &str) -> StoreError {
    StoreError::NotFound(format!(
        "run {run_id} in playbook {}/{}",
        playbook.org, playbook.playbook
    ))
}

/// Refuses an ending that is no ending: a caller's mistake, refused before anything changes.
pub(crate) fn check_ending_status(status: RunStatus, run_id: &str) -> Result<()> {
    if status == RunStatus::Started {
        return Err(StoreError::Conflict(format!(
            "the run {run_id} cannot end as started: an ending is succeeded, rejected or failed"
        )));
    }
    Ok(())
}

/// Why a change to a run did not apply, from what is stored now: its status and attempt, or
/// nothing. `expected_attempt` is the compare-and-set of `restart_run`, which wants the run
/// ended; the other changes want it `started`.
pub(crate) fn run_change_refused(
    playbook: &PlaybookRef,
    run_id: &str,
    stored: Option<(String, i64)>,
    expected_attempt: Option<i64>,
) -> Result<StoreError> {
    let Some((status, attempt)) = stored else {
        return Ok(run_not_found(playbook, run_id));
    };
    let status = parse_run_status(&status)?;
    let refusal = match expected_attempt {
        None => format!("the run {run_id} has ended ({})", status.as_str()),
        Some(_) if status == RunStatus::Started => {
            format!("the run {run_id} is still started (attempt {attempt})")
        }
        Some(expected) => format!(
            "the run {run_id} is at attempt {attempt}, not {expected}: it changed since it was read"
        ),
    };
    Ok(StoreError::Conflict(refusal))
}

/// Reads a run's status as stored.
pub(crate) fn parse_run_status(status: &str) -> Result<RunStatus> {
    RunStatus::parse(status)
        .ok_or_else(|| StoreError::Corrupt(format!("a run's status is {status:?}")))
}

/// A stored JSON value read without serde_json's limit of 128 levels: a workflow's snapshot
/// nests deeper (64 task lists around values of up to 512 levels), and what it holds was
/// bounded when it was made.
pub(crate) fn deep_json(text: &str, what: &str) -> Result<serde_json::Value> {
    use serde::Deserialize;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = serde_json::Value::deserialize(&mut deserializer)
        .and_then(|value| deserializer.end().map(|()| value))
        .map_err(|error| StoreError::Corrupt(format!("{what}: {error}")))?;
    Ok(value)
}

/// The refusal of a run past the calls its tree may wait for at once.
pub(crate) fn open_calls_reached(root: &str, open: i64, max: i64) -> StoreError {
    StoreError::LimitReached(format!(
        "The runs under the workflow run {root} wait for {open} calls at once, the most this deployment allows (WORKFLOW_MAX_OPEN_CALLS is {max})."
    ))
}

/// The error of a save that would give one workflow more with triggers than a playbook holds.
pub(crate) fn triggered_workflows_reached(workflows: i64) -> StoreError {
    StoreError::LimitReached(format!(
        "The playbook has {workflows} workflows with triggers, the most it may have; remove the schedule of one, or retire one, first."
    ))
}

/// Reads a request's status as stored.
pub(crate) fn parse_request_status(status: &str) -> Result<crate::RequestStatus> {
    crate::RequestStatus::parse(status)
        .ok_or_else(|| StoreError::Corrupt(format!("a request's status is {status:?}")))
}

/// Why an open request could not be closed, from its stored status (or its absence).
pub(crate) fn request_change_refused(
    playbook: &PlaybookRef,
    request_id: &str,
    stored: Option<String>,
) -> StoreError {
    match stored {
        None => StoreError::NotFound(format!(
            "request {request_id} in playbook {}/{}",
            playbook.org, playbook.playbook
        )),
        Some(status) => {
            StoreError::Conflict(format!("the request {request_id} is {status}, not open"))
        }
    }
}

/// `Conflict` for a close that would leave the request open, which closes nothing.
pub(crate) fn check_close_status(close: &crate::RequestClose, request_id: &str) -> Result<()> {
    if close.status == crate::RequestStatus::Open {
        return Err(StoreError::Conflict(format!(
            "the request {request_id} cannot be closed as open"
        )));
    }
    Ok(())
}

/// The names of the store's migrations, in order: the same on both databases, each written in
/// the database's own SQL in `migrations/<database>/`.
const MIGRATION_NAMES: [&str; 16] = [
    "the store",
    "runs",
    "workflows",
    "requests",
    "calls",
    "run inbox",
    "triggers",
    "earlier filters",
    "ordered work",
    "ending work",
    "opaque work",
    "lean indexes",
    "views",
    "type index condition",
    "lean events",
    "status checks",
];

/// The store's migrations from one database's folder (`sqlite` or `postgres`), compiled in.
macro_rules! migrations {
    ($folder:literal) => {
        $crate::shared::migrator(&$crate::shared::migration_sources!($folder))
    };
}
pub(crate) use migrations;

/// The SQL of the store's migrations from one database's folder, in order.
macro_rules! migration_sources {
    ($folder:literal) => {
        [
            include_str!(concat!("../migrations/", $folder, "/0001_store.sql")),
            include_str!(concat!("../migrations/", $folder, "/0002_runs.sql")),
            include_str!(concat!("../migrations/", $folder, "/0003_workflows.sql")),
            include_str!(concat!("../migrations/", $folder, "/0004_requests.sql")),
            include_str!(concat!("../migrations/", $folder, "/0005_calls.sql")),
            include_str!(concat!("../migrations/", $folder, "/0006_run_inbox.sql")),
            include_str!(concat!("../migrations/", $folder, "/0007_triggers.sql")),
            include_str!(concat!(
                "../migrations/",
                $folder,
                "/0008_earlier_filters.sql"
            )),
            include_str!(concat!("../migrations/", $folder, "/0009_ordered_work.sql")),
            include_str!(concat!("../migrations/", $folder, "/0010_ending_work.sql")),
            include_str!(concat!("../migrations/", $folder, "/0011_opaque_work.sql")),
            include_str!(concat!("../migrations/", $folder, "/0012_lean_indexes.sql")),
            include_str!(concat!("../migrations/", $folder, "/0013_views.sql")),
            include_str!(concat!(
                "../migrations/",
                $folder,
                "/0014_type_index_condition.sql"
            )),
            include_str!(concat!("../migrations/", $folder, "/0015_lean_events.sql")),
            include_str!(concat!(
                "../migrations/",
                $folder,
                "/0016_status_checks.sql"
            )),
        ]
    };
}
pub(crate) use migration_sources;

/// The migrator of the migrations whose SQL is `sources`, numbered from 1 and named
/// [`MIGRATION_NAMES`].
pub(crate) fn migrator(sources: &[&'static str]) -> sqlx::migrate::Migrator {
    use sqlx::SqlSafeStr;
    use sqlx::migrate::{Migration, MigrationType, Migrator};
    let migrations = MIGRATION_NAMES
        .into_iter()
        .zip(sources.iter().copied())
        .zip(1..)
        .map(|((name, sql), version)| {
            Migration::new(
                version,
                std::borrow::Cow::Borrowed(name),
                MigrationType::Simple,
                sql.into_sql_str(),
                false,
            )
        })
        .collect();
    Migrator::with_migrations(migrations)
}

/// The source of a run's own events.
pub(crate) fn run_source(run_id: &str) -> String {
    format!("/runs/{run_id}")
}

/// The source the store keeps for `event`: none when it is its run's own, which reads back as
/// [`run_source`] (migration 0015).
pub(crate) fn kept_source(event: &NewEvent) -> Option<&str> {
    let own = event.run_id.as_deref().is_some_and(|run_id| {
        event
            .source
            .strip_prefix("/runs/")
            .is_some_and(|rest| rest == run_id)
    });
    (!own).then_some(event.source.as_str())
}

/// A run `run_id` of the workflow `w` started with two events of ids `ids`: its `run_started`
/// from the run's own source, and a note from `/elsewhere`; neither gives a time.
#[cfg(test)]
pub(crate) async fn start_with_two_events(
    store: &dyn crate::Store,
    playbook: &PlaybookRef,
    run_id: &str,
    ids: [&str; 2],
) -> Vec<crate::Event> {
    let mut started = NewEvent::new(ids[0], "run_started", run_source(run_id));
    started.run_seq = Some(1);
    let mut elsewhere = NewEvent::new(ids[1], "note", "/elsewhere");
    elsewhere.run_seq = Some(2);
    let new = crate::NewRun::new(
        run_id,
        crate::DefinitionKey::new("workflow", "w"),
        1,
        serde_json::json!({}),
        "local",
    );
    store
        .start_run(playbook, new, vec![started, elsewhere])
        .await
        .unwrap()
        .1
}
