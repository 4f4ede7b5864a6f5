//! The hot changes on SQLite's file (a workflow step, a run started, its events recorded, its
//! ending), made synchronously through rusqlite on the group writer's own connection.
//!
//! Why they exist beside the shared ones: sqlx runs each SQLite connection on a thread of its
//! own, so every statement of a change is a round trip between a tokio worker and that thread
//! (a futex wake and a context switch each way), and a step is about ten statements. Here a
//! whole group of changes runs on the writer's connection in one go, its statements prepared
//! once for the connection's life ([`super::group::RawGroup`]), with no hop per statement.
//!
//! They are the shared changes (`work::commit_step`, `runs::start`, `runs::end`,
//! `runs::record_events`) step for step: the same checks and errors (`shared`), the same values
//! returned (`rows::run_from_row`, `recorded_events`), the same SQL text but in two ways that
//! only pay on a connection where a statement costs no round trip. A change's events go in a
//! few multi-row inserts ([`EVENT_BATCHES`]), not one statement each; and no statement here
//! has `RETURNING`, which SQLite answers through a temporary table made for each statement:
//! an insert or update tells what it did by the rows it changed; a run given back is made
//! from what was inserted (`Run::as_inserted`), or read by its key after an update. The store
//! suite runs every case on both: on a SQLite file these are the changes it tests, on
//! PostgreSQL the shared ones.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use std::sync::{Arc, LazyLock};

use rusqlite::types::{ToSqlOutput, Value as SqlValue};
use rusqlite::{Connection, Row, ToSql};
use serde_json::Value;
use sqlx::Sqlite;
use sqlx::error::{DatabaseError, ErrorKind};

use super::group::RawGroup;
use super::rows::{RunRow, run_from_row};
use super::runs::{
    NOTIFY_PARENT, OPEN_CALLS, RunParam, SELECT_RUN, STORED_RUN_STATE, end_run_change,
    insert_runs_change, run_params, run_taken, touch_run_change,
};
use super::work::{
    DELETE_LISTENER, DELETE_LISTENERS, DELETE_RUN_WORK, DELETE_WORK, DELETE_WORK_KEY,
    INSERT_LISTENER, INSERT_SNAPSHOT_CHANGE, INSERT_WORK, UPDATE_SNAPSHOT_CHANGE, ended_children,
    kept_snapshot, prepare_shared_step, snapshot_taken,
};
use super::{RESERVE_KEEP, Reserved, first_seq, recorded_events, reserve_read_sql, seq_count};
use crate::dialect::{Stamp, StoredTime};
use crate::shared::{
    check_ending_status, deep_json, event_insert_error, kept_source, open_calls_reached,
    playbook_not_found, run_change_refused, run_columns, run_events,
};
use crate::sqlite::{EventTexts, INSERT_EVENTS_OR_FAIL_INTO, event_texts};
use crate::{
    Event, LISTENERS_MAX, NewEvent, NewListener, NewRun, NewWork, PlaybookRef, Result, Run,
    RunEnding, StepCommitted, StoreError, WorkflowStep,
};

type Reserve = Reserved<Sqlite>;

pub(super) async fn commit_step(
    group: &RawGroup,
    playbook: &PlaybookRef,
    run_id: &str,
    step: Arc<WorkflowStep>,
) -> Result<StepCommitted> {
    let (step, last_run_seq) = prepare_shared_step(run_id, step)?;
    let texts = event_texts(&step.events)?;
    let event_count = i64::try_from(step.events.len()).unwrap_or(i64::MAX);
    let playbook = playbook.clone();
    let run_id = run_id.to_owned();
    group
        .change(move |c| {
            let (playbook, run_id) = (&playbook, run_id.as_str());
            let reserved = reserve(c, playbook, step.events.len())?;
            // A run that begins and ends in this step is recorded as it ended, as its calls'
            // runs are: one insert, where a run inserted started would be ended by an update.
            let mut run = match (&step.start, &step.ending) {
                (Some(new), Some(ending)) => Some(insert_whole_run(
                    c,
                    playbook,
                    &reserved,
                    new,
                    ending,
                    last_run_seq,
                )?),
                (Some(new), None) => Some(insert_run(c, playbook, &reserved, new, last_run_seq)?),
                (None, _) => None,
            };
            let version = if kept_snapshot(&step) {
                write_snapshot(c, &reserved, run_id, &step)?
            } else {
                0
            };
            let pk = reserved.playbook_pk;
            insert_ended_runs(c, playbook, &reserved, &ended_children(&step, &step.events))?;
            match (&step.ending, step.start.is_some()) {
                // Recorded as it ended above: it has no work and no listeners yet.
                (Some(_), true) => insert_events(c, playbook, &reserved, &step.events, &texts)?,
                (Some(ending), false) => {
                    run = Some(end_run_in(
                        c,
                        playbook,
                        &reserved,
                        run_id,
                        ending,
                        last_run_seq,
                    )?);
                    insert_events(c, playbook, &reserved, &step.events, &texts)?;
                    execute(c, DELETE_RUN_WORK, &[&pk, &run_id])?;
                }
                (None, fresh) => {
                    if !fresh {
                        touch_run(c, playbook, &reserved, run_id, last_run_seq)?;
                    }
                    insert_events(c, playbook, &reserved, &step.events, &texts)?;
                }
            }
            insert_work(c, pk, run_id, &reserved.now, &step.add_work)?;
            if let Some(id) = step.done_work {
                execute(c, DELETE_WORK, &[&id])?;
            }
            for key in &step.cancel_work {
                execute(c, DELETE_WORK_KEY, &[&pk, &run_id, key])?;
            }
            let last_seq = reserved.first_seq - 1 + event_count;
            listen_in(c, pk, run_id, &step, last_seq)?;
            Ok(StepCommitted { version, run })
        })
        .await
}

pub(super) async fn start(
    group: &RawGroup,
    playbook: &PlaybookRef,
    new: NewRun,
    events: Vec<NewEvent>,
) -> Result<(Run, Vec<Event>)> {
    let (events, last_run_seq) = run_events(&new.run_id, events)?;
    with_events(group, playbook, events, move |c, playbook, reserved| {
        insert_run(c, playbook, reserved, &new, last_run_seq)
    })
    .await
}

pub(super) async fn record_events(
    group: &RawGroup,
    playbook: &PlaybookRef,
    run_id: &str,
    events: Vec<NewEvent>,
) -> Result<Vec<Event>> {
    let (events, last_run_seq) = run_events(run_id, events)?;
    let run_id = run_id.to_owned();
    let ((), events) = with_events(group, playbook, events, move |c, playbook, reserved| {
        touch_run(c, playbook, reserved, &run_id, last_run_seq)
    })
    .await?;
    Ok(events)
}

pub(super) async fn end(
    group: &RawGroup,
    playbook: &PlaybookRef,
    run_id: &str,
    ending: RunEnding,
    events: Vec<NewEvent>,
) -> Result<(Run, Vec<Event>)> {
    check_ending_status(ending.status, run_id)?;
    let (events, last_run_seq) = run_events(run_id, events)?;
    let run_id = run_id.to_owned();
    with_events(group, playbook, events, move |c, playbook, reserved| {
        end_run_in(c, playbook, reserved, &run_id, &ending, last_run_seq)
    })
    .await
}

/// A change that reserves the seqs of `events`, makes `before` under them and writes the
/// events; what `before` made, and the events as recorded. The events are shared with the
/// change, which may be made twice, and taken back once it is committed: the group drops a
/// change before answering it, so they are the caller's alone by then (copied only if not).
async fn with_events<T: Send + 'static>(
    group: &RawGroup,
    playbook: &PlaybookRef,
    events: Vec<NewEvent>,
    mut before: impl FnMut(&Connection, &PlaybookRef, &Reserve) -> Result<T> + Send + 'static,
) -> Result<(T, Vec<Event>)> {
    let playbook = playbook.clone();
    let texts = event_texts(&events)?;
    let events = Arc::new(events);
    let written = events.clone();
    let (made, reserved) = group
        .change(move |c| {
            let reserved = reserve(c, &playbook, written.len())?;
            let made = before(c, &playbook, &reserved)?;
            insert_events(c, &playbook, &reserved, &written, &texts)?;
            Ok((made, reserved))
        })
        .await?;
    let events = Arc::try_unwrap(events).unwrap_or_else(|shared| shared.as_ref().clone());
    Ok((made, recorded_events(events, &reserved)))
}

/// `super::reserve_seqs`.
fn reserve(c: &Connection, playbook: &PlaybookRef, count: usize) -> Result<Reserve> {
    static READ: LazyLock<String> = LazyLock::new(reserve_read_sql::<Sqlite>);
    let count = seq_count(count)?;
    let params: [&dyn ToSql; 3] = [&playbook.org, &playbook.playbook, &count];
    let (playbook_pk, last_seq, now) = query_optional(c, &READ, &params, |row| {
        Ok((int(row, "pk")?, int(row, "last_seq")?, text(row, "now")?))
    })?
    .ok_or_else(|| playbook_not_found(playbook))?;
    execute(c, RESERVE_KEEP, &[&playbook_pk, &last_seq])?;
    Ok(Reserved {
        playbook_pk,
        first_seq: first_seq(playbook, last_seq, count),
        now: Stamp::new(now)?,
    })
}

/// `super::insert_events`, as `Sqlite::insert_events` inserts them; the events as recorded
/// are made by the caller (`recorded_events`), once the change is committed. `texts` are the
/// events' [`EventTexts`], made by the caller before the change: serializing them is work the
/// writer, which makes one change at a time, need not do.
fn insert_events(
    c: &Connection,
    playbook: &PlaybookRef,
    reserved: &Reserve,
    events: &[NewEvent],
    texts: &[EventTexts],
) -> Result<()> {
    match write_events(c, reserved, events, texts) {
        Err(StoreError::Database(error)) => Err(event_insert_error(error, playbook)),
        other => other,
    }
}

fn write_events(
    c: &Connection,
    reserved: &Reserve,
    events: &[NewEvent],
    texts: &[EventTexts],
) -> Result<()> {
    // The events in as few statements as the batch sizes make (a step's twenty events in
    // three), each prepared once for the connection: what SQLite does for each statement it
    // runs (finding it in the cache, binding, opening and closing its cursors and statement
    // journal) is most of what a small event costs, where the rows alone are not.
    assert_eq!(events.len(), texts.len(), "each event's texts");
    let (pk, now) = (&reserved.playbook_pk, &reserved.now.stored);
    let mut seqs = reserved.first_seq..;
    let mut at = 0;
    while at < events.len() {
        let (sql, rows) = event_batch(events.len() - at);
        let batch = events[at..at + rows].iter().zip(&texts[at..at + rows]);
        let mut statement = c.prepare_cached(sql).map_err(db)?;
        let mut place = 0;
        let mut bind = |value: &dyn ToSql| {
            place += 1;
            statement.raw_bind_parameter(place, value).map_err(db)
        };
        // Once for the batch: every row's playbook and time of recording.
        bind(pk)?;
        bind(now)?;
        for ((event, texts), seq) in batch.zip(seqs.by_ref()) {
            bind(&seq)?;
            bind(&event.id)?;
            bind(&event.event_type)?;
            bind(&kept_source(event))?;
            bind(&event.subject)?;
            bind(&texts.time)?;
            bind(&event.datacontenttype)?;
            bind(&texts.data)?;
            bind(&texts.extensions)?;
            bind(&event.run_id)?;
            bind(&event.run_seq)?;
        }
        statement.raw_execute().map_err(db)?;
        at += rows;
    }
    Ok(())
}

/// The sizes of the event batches one statement inserts: a batch takes the largest that fits.
const EVENT_BATCHES: [usize; 6] = [32, 16, 8, 4, 2, 1];

/// The statement that inserts the next batch of `waiting` events, and how many it takes:
/// [`crate::sqlite::INSERT_EVENT`]'s row as many times, every row's playbook and time of
/// recording its first two parameters ([`BATCH_COLUMNS`]) and its own numbered on after them.
///
/// `OR FAIL`: an event refused (its id or its run's number taken) stops the statement and
/// leaves the rows before it in the transaction, where `ABORT` would take them back. Nothing
/// here keeps a change that failed (the group rolls it back to its savepoint, or rolls back
/// the transaction; see `group`), so the two come to the same; but to take its rows back,
/// `ABORT` has SQLite copy every page a statement of several rows changes to a journal first,
/// about a tenth of a workflow step's work on the writer (with the foreign keys the writer's
/// connection does not check, see `crate::sqlite::RAW_CONNECTION_PRAGMAS`).
fn event_batch(waiting: usize) -> (&'static str, usize) {
    static STATEMENTS: LazyLock<Vec<String>> = LazyLock::new(|| {
        EVENT_BATCHES
            .iter()
            .map(|&rows| {
                let values: Vec<String> = (0..rows)
                    .map(|row| {
                        let own: Vec<String> = (1..=EVENT_COLUMNS)
                            .map(|n| format!("?{}", BATCH_COLUMNS + row * EVENT_COLUMNS + n))
                            .collect();
                        format!("(?1, {}, ?2)", own.join(", "))
                    })
                    .collect();
                format!("{INSERT_EVENTS_OR_FAIL_INTO} VALUES {}", values.join(", "))
            })
            .collect()
    });
    let (index, rows) = EVENT_BATCHES
        .iter()
        .enumerate()
        .find(|&(_, &rows)| rows <= waiting)
        .map_or((EVENT_BATCHES.len() - 1, 1), |(index, &rows)| (index, rows));
    (STATEMENTS[index].as_str(), rows)
}

/// The parameters of a batch that every row of it takes: `?1` the playbook, `?2` the time of
/// recording, bound once for the statement rather than for each row.
const BATCH_COLUMNS: usize = 2;

/// The parameters of one event's own, after [`BATCH_COLUMNS`]: seq, id, type, source, subject,
/// time, datacontenttype, data, extensions, run_id and run_seq.
const EVENT_COLUMNS: usize = 11;

/// `runs::touch_run`.
fn touch_run(
    c: &Connection,
    playbook: &PlaybookRef,
    reserved: &Reserve,
    run_id: &str,
    last_run_seq: i64,
) -> Result<()> {
    let params: [&dyn ToSql; 4] = [
        &reserved.playbook_pk,
        &run_id,
        &last_run_seq,
        &reserved.now.stored,
    ];
    static TOUCH: LazyLock<String> = LazyLock::new(touch_run_change::<Sqlite>);
    if changed(c, &TOUCH, &params)? == 0 {
        let stored = stored_run_state(c, reserved.playbook_pk, run_id)?;
        return Err(run_change_refused(playbook, run_id, stored, None)?);
    }
    Ok(())
}

/// `runs::stored_run_state`.
fn stored_run_state(
    c: &Connection,
    playbook_pk: i64,
    run_id: &str,
) -> Result<Option<(String, i64)>> {
    query_optional(c, STORED_RUN_STATE, &[&playbook_pk, &run_id], |row| {
        Ok((text(row, "status")?, int(row, "attempt")?))
    })
}

/// `runs::insert_run`.
fn insert_run(
    c: &Connection,
    playbook: &PlaybookRef,
    reserved: &Reserve,
    new: &NewRun,
    last_run_seq: i64,
) -> Result<Run> {
    insert_one_run(c, playbook, reserved, new, last_run_seq, None)?;
    // What a read of the row would give, made without reading it.
    Ok(Run::as_inserted(new, reserved.now.at, last_run_seq, None))
}

/// A run that begins and ends in one step: `runs::insert_run` and `end_run_in` in one insert,
/// its parent told of the ending as `end_run_in` tells it.
fn insert_whole_run(
    c: &Connection,
    playbook: &PlaybookRef,
    reserved: &Reserve,
    new: &NewRun,
    ending: &RunEnding,
    last_run_seq: i64,
) -> Result<Run> {
    insert_one_run(c, playbook, reserved, new, last_run_seq, Some(ending))?;
    if new.parent_run_id.is_some() {
        let params: [&dyn ToSql; 3] = [&reserved.playbook_pk, &new.run_id, &reserved.now.stored];
        execute(c, NOTIFY_PARENT, &params)?;
    }
    Ok(Run::as_inserted(
        new,
        reserved.now.at,
        last_run_seq,
        Some(ending),
    ))
}

/// Inserts the run `new`, started or as it ended, once its tree's count of open calls has
/// room for it.
fn insert_one_run(
    c: &Connection,
    playbook: &PlaybookRef,
    reserved: &Reserve,
    new: &NewRun,
    last_run_seq: i64,
    ending: Option<&RunEnding>,
) -> Result<()> {
    if let (Some(root), Some(max)) = (&new.root_run_id, new.open_calls_max) {
        let open = query_optional(c, OPEN_CALLS, &[&reserved.playbook_pk, root], |row| {
            row.get::<_, i64>(0).map_err(db)
        })?
        .unwrap_or(0);
        if open >= max {
            return Err(open_calls_reached(root, open, max));
        }
    }
    static INSERT: LazyLock<String> = LazyLock::new(|| insert_runs_change(1));
    let params = run_params(reserved, new, last_run_seq, ending);
    let params: Vec<&dyn ToSql> = params.iter().map(|param| param as &dyn ToSql).collect();
    if changed(c, &INSERT, &params)? == 0 {
        return Err(run_taken(playbook, &new.run_id));
    }
    Ok(())
}

/// The run `run_id` as stored, which a change has just written.
fn stored_run(c: &Connection, playbook_pk: i64, run_id: &str) -> Result<Run> {
    query_optional(c, SELECT_RUN, &[&playbook_pk, &run_id], |row| {
        run_from_row(&RunColumns(row))
    })?
    .ok_or_else(|| StoreError::Corrupt(format!("the run {run_id} just written is not found")))
}

/// `runs::insert_ended_runs`, one statement for each run: on the writer's connection a
/// statement costs no round trip, and the statement of one run is prepared once for all.
fn insert_ended_runs(
    c: &Connection,
    playbook: &PlaybookRef,
    reserved: &Reserve,
    runs: &[(&NewRun, i64, &RunEnding)],
) -> Result<()> {
    if runs.is_empty() {
        return Ok(());
    }
    static INSERT: LazyLock<String> = LazyLock::new(|| insert_runs_change(1));
    for (new, last_run_seq, ending) in runs {
        let params = run_params(reserved, new, *last_run_seq, Some(ending));
        let params: Vec<&dyn ToSql> = params.iter().map(|param| param as &dyn ToSql).collect();
        if changed(c, &INSERT, &params)? == 0 {
            return Err(run_taken(playbook, &new.run_id));
        }
    }
    Ok(())
}

/// `runs::end_run_in`, with `runs::notify_parent`.
fn end_run_in(
    c: &Connection,
    playbook: &PlaybookRef,
    reserved: &Reserve,
    run_id: &str,
    ending: &RunEnding,
    last_run_seq: i64,
) -> Result<Run> {
    let params: [&dyn ToSql; 8] = [
        &reserved.playbook_pk,
        &run_id,
        &ending.status.as_str(),
        &ending.output.as_ref().map(JsonText),
        &ending.record.as_ref().map(JsonText),
        &ending.problem.as_ref().map(JsonText),
        &last_run_seq,
        &reserved.now.stored,
    ];
    static END: LazyLock<String> = LazyLock::new(end_run_change::<Sqlite>);
    if changed(c, &END, &params)? == 0 {
        let stored = stored_run_state(c, reserved.playbook_pk, run_id)?;
        return Err(run_change_refused(playbook, run_id, stored, None)?);
    }
    let ended = stored_run(c, reserved.playbook_pk, run_id)?;
    if ended.parent_run_id.is_some() {
        let params: [&dyn ToSql; 3] = [&reserved.playbook_pk, &run_id, &reserved.now.stored];
        execute(c, NOTIFY_PARENT, &params)?;
    }
    Ok(ended)
}

/// `work::write_snapshot`.
fn write_snapshot(
    c: &Connection,
    reserved: &Reserve,
    run_id: &str,
    step: &WorkflowStep,
) -> Result<i64> {
    let (pk, now, state) = (
        &reserved.playbook_pk,
        &reserved.now.stored,
        &JsonText(&step.state),
    );
    let (changed_rows, version) = match step.expected_version {
        None => (
            changed(c, INSERT_SNAPSHOT_CHANGE, &[pk, &run_id, state, now])?,
            1,
        ),
        Some(expected) => {
            let params: [&dyn ToSql; 5] = [pk, &run_id, &expected, state, now];
            (changed(c, UPDATE_SNAPSHOT_CHANGE, &params)?, expected + 1)
        }
    };
    if changed_rows == 0 {
        return Err(snapshot_taken(run_id, step.expected_version));
    }
    Ok(version)
}

/// `work::insert_work`.
fn insert_work(
    c: &Connection,
    playbook_pk: i64,
    run_id: &str,
    now: &Stamp<Sqlite>,
    work: &[NewWork],
) -> Result<()> {
    for item in work {
        let due = item
            .due_at
            .map_or_else(|| now.stored.clone(), String::from_time);
        let params: [&dyn ToSql; 6] = [
            &playbook_pk,
            &run_id,
            &item.key,
            &due,
            &item.payload,
            &item.ordered,
        ];
        execute(c, INSERT_WORK, &params)?;
    }
    Ok(())
}

/// `work::listen_in` (SQLite's one writer needs no lock for the count of listeners).
fn listen_in(
    c: &Connection,
    playbook_pk: i64,
    run_id: &str,
    step: &WorkflowStep,
    last_seq: i64,
) -> Result<()> {
    if step.ending.is_some() {
        if step.start.is_none() {
            execute(c, DELETE_LISTENERS, &[&playbook_pk, &run_id])?;
        }
        return Ok(());
    }
    for reference in &step.unlisten {
        execute(c, DELETE_LISTENER, &[&playbook_pk, &run_id, reference])?;
    }
    for NewListener { reference, filters } in &step.listen {
        let params: [&dyn ToSql; 6] = [
            &playbook_pk,
            &run_id,
            reference,
            &JsonText(filters),
            &last_seq,
            &LISTENERS_MAX,
        ];
        execute(c, INSERT_LISTENER, &params)?;
    }
    Ok(())
}

/// A statement of the shared SQL, prepared (once per group, then from the connection's cache)
/// with its parameters bound: each `$n` (or `?n`) takes `params[n - 1]`, as sqlx binds them.
///
/// Which `params` each of a statement's places takes is read from its parameters' names once
/// for each SQL text on each thread ([`places`]), not at every statement: asking SQLite for
/// a name and reading its number was a tenth of what binding cost the writer.
fn prepared<'c>(
    c: &'c Connection,
    sql: &'static str,
    params: &[&dyn ToSql],
) -> Result<rusqlite::CachedStatement<'c>> {
    let mut statement = c.prepare_cached(sql).map_err(db)?;
    let places = places(sql, &statement);
    for (index, &number) in places.iter().enumerate() {
        let param = number
            .checked_sub(1)
            .and_then(|place| params.get(place))
            .ok_or_else(|| {
                StoreError::Database(sqlx::Error::Protocol(format!(
                    "the statement's parameter {number} is not given: {sql}"
                )))
            })?;
        statement.raw_bind_parameter(index + 1, param).map_err(db)?;
    }
    Ok(statement)
}

/// The number of the parameter (`$n` or `?n`, from 1) each place of `statement` (`sql`
/// prepared) takes, in order; a place without a number takes its own.
///
/// Kept for each SQL text by its address and length: every statement here is a `'static`
/// text, so they name one text for as long as the process lives (the length too, since a
/// `'static` text may begin where a longer one does).
fn places(sql: &'static str, statement: &rusqlite::Statement<'_>) -> Rc<[usize]> {
    /// A SQL text's address and length.
    type Text = (usize, usize);
    thread_local! {
        static PLACES: RefCell<HashMap<Text, Rc<[usize]>>> = RefCell::new(HashMap::new());
    }
    PLACES.with(|known| {
        let key = (sql.as_ptr() as usize, sql.len());
        if let Some(places) = known.borrow().get(&key) {
            return places.clone();
        }
        let places: Rc<[usize]> = (1..=statement.parameter_count())
            .map(|index| {
                statement
                    .parameter_name(index)
                    .and_then(|name| name.get(1..))
                    .and_then(|number| number.parse::<usize>().ok())
                    .unwrap_or(index)
            })
            .collect();
        known.borrow_mut().insert(key, places.clone());
        places
    })
}

/// Runs a statement that returns no rows.
fn execute(c: &Connection, sql: &'static str, params: &[&dyn ToSql]) -> Result<()> {
    changed(c, sql, params).map(drop)
}

/// Runs a statement that returns no rows, and tells how many rows it changed.
fn changed(c: &Connection, sql: &'static str, params: &[&dyn ToSql]) -> Result<usize> {
    prepared(c, sql, params)?.raw_execute().map_err(db)
}

/// Every row a statement returns, each read by `read`.
fn query_all<T>(
    c: &Connection,
    sql: &'static str,
    params: &[&dyn ToSql],
    mut read: impl FnMut(&Row<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut statement = prepared(c, sql, params)?;
    let mut rows = statement.raw_query();
    let mut values = Vec::new();
    while let Some(row) = rows.next().map_err(db)? {
        values.push(read(row)?);
    }
    Ok(values)
}

/// The row a statement returns, when it returns one (it is run to its end, as sqlx's
/// `fetch_optional` runs it).
fn query_optional<T>(
    c: &Connection,
    sql: &'static str,
    params: &[&dyn ToSql],
    read: impl FnMut(&Row<'_>) -> Result<T>,
) -> Result<Option<T>> {
    Ok(query_all(c, sql, params, read)?.into_iter().next())
}

fn text(row: &Row<'_>, column: &str) -> Result<String> {
    row.get(column).map_err(db)
}

fn int(row: &Row<'_>, column: &str) -> Result<i64> {
    row.get(column).map_err(db)
}

/// A row of [`SELECT_RUN`], whose columns [`run_from_row`] reads by position: rusqlite finds a
/// column by name by asking SQLite for each column's name in turn, about twenty times a column.
struct RunColumns<'r, 's>(&'r Row<'s>);

impl RunColumns<'_, '_> {
    fn get<T: rusqlite::types::FromSql>(&self, column: &str) -> Result<T> {
        static NAMES: LazyLock<Vec<&'static str>> =
            LazyLock::new(|| run_columns!().split(", ").collect());
        let index = NAMES
            .iter()
            .position(|name| *name == column)
            .ok_or_else(|| StoreError::Corrupt(format!("a run has no column {column}")))?;
        self.0.get(index).map_err(db)
    }
}

impl RunRow for RunColumns<'_, '_> {
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
    fn time(&self, column: &str) -> Result<chrono::DateTime<chrono::Utc>> {
        self.text(column)?.to_time()
    }
    fn optional_time(&self, column: &str) -> Result<Option<chrono::DateTime<chrono::Utc>>> {
        self.optional_text(column)?
            .map(StoredTime::to_time)
            .transpose()
    }
    fn json(&self, column: &str, what: &str) -> Result<Value> {
        self.optional_json(column, what)?
            .ok_or_else(|| StoreError::Corrupt(format!("{what} is missing")))
    }
    fn optional_json(&self, column: &str, what: &str) -> Result<Option<Value>> {
        self.optional_text(column)?
            .map(|text| deep_json(&text, what))
            .transpose()
    }
}

/// JSON as SQLite keeps it: text, as sqlx's `Json` binds it.
struct JsonText<'a>(&'a Value);

impl ToSql for JsonText<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        json_text(self.0)
    }
}

fn json_text(value: &Value) -> rusqlite::Result<ToSqlOutput<'static>> {
    serde_json::to_string(value)
        .map(ToSqlOutput::from)
        .map_err(|error| rusqlite::Error::ToSqlConversionFailure(Box::new(error)))
}

impl ToSql for RunParam<'_, String> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            RunParam::Int(value) => value.to_sql(),
            RunParam::Bool(value) => value.to_sql(),
            RunParam::Text(value) => value.to_sql(),
            RunParam::Json(Some(value)) => json_text(value),
            RunParam::Json(None) => Ok(ToSqlOutput::Owned(SqlValue::Null)),
            RunParam::Bytes(value) => value.to_sql(),
            RunParam::Time(value) => value.to_sql(),
        }
    }
}

fn db(error: rusqlite::Error) -> StoreError {
    StoreError::Database(raw_fault(error))
}

/// A rusqlite error as the sqlx error sqlx would have given for it: SQLite's own faults as
/// [`RawSqliteError`], so that `is_transient` and the unique rules of the event log read
/// them as they read sqlx's.
pub(crate) fn raw_fault(error: rusqlite::Error) -> sqlx::Error {
    match error {
        rusqlite::Error::SqliteFailure(failure, message) => {
            let message = message.unwrap_or_else(|| failure.to_string());
            sqlx::Error::Database(Box::new(RawSqliteError {
                code: failure.extended_code,
                message,
            }))
        }
        rusqlite::Error::ToSqlConversionFailure(error) => sqlx::Error::Encode(error),
        other => sqlx::Error::Decode(Box::new(other)),
    }
}

/// A fault SQLite reported on the writer's connection: its extended code and message, as
/// sqlx's own `SqliteError` carries them (which only sqlx may make).
#[derive(Debug)]
pub(crate) struct RawSqliteError {
    code: i32,
    message: String,
}

impl fmt::Display for RawSqliteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // As sqlx's: "(code: N) message".
        write!(f, "(code: {}) {}", self.code, self.message)
    }
}

impl std::error::Error for RawSqliteError {}

impl DatabaseError for RawSqliteError {
    fn message(&self) -> &str {
        &self.message
    }

    fn code(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(self.code.to_string().into())
    }

    fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
        self
    }

    fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
        self
    }

    fn kind(&self) -> ErrorKind {
        use rusqlite::ffi;
        match self.code {
            ffi::SQLITE_CONSTRAINT_UNIQUE | ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                ErrorKind::UniqueViolation
            }
            ffi::SQLITE_CONSTRAINT_FOREIGNKEY => ErrorKind::ForeignKeyViolation,
            ffi::SQLITE_CONSTRAINT_NOTNULL => ErrorKind::NotNullViolation,
            ffi::SQLITE_CONSTRAINT_CHECK => ErrorKind::CheckViolation,
            _ => ErrorKind::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use rusqlite::ffi;

    use super::*;

    fn fault(code: i32) -> sqlx::Error {
        raw_fault(rusqlite::Error::SqliteFailure(
            ffi::Error::new(code),
            Some("m".into()),
        ))
    }

    /// SQLite's faults met on the writer's connection read as sqlx's own do: a full disk or a
    /// busy file may clear, a unique rule broken is one.
    #[test]
    fn raw_faults_read_as_sqlx_sqlite_errors() {
        assert!(StoreError::Database(fault(ffi::SQLITE_FULL)).is_transient());
        assert!(StoreError::Database(fault(ffi::SQLITE_BUSY)).is_transient());
        assert!(StoreError::Database(fault(ffi::SQLITE_IOERR_FSYNC)).is_transient());
        assert!(!StoreError::Database(fault(ffi::SQLITE_CONSTRAINT_UNIQUE)).is_transient());
        let sqlx::Error::Database(unique) = fault(ffi::SQLITE_CONSTRAINT_UNIQUE) else {
            panic!("a database error");
        };
        assert!(unique.is_unique_violation());
        assert_eq!(unique.to_string(), "(code: 2067) m");
    }

    /// Each place takes the parameter its number names, in whatever order the text names them
    /// and however often, the first time a text is bound and every time after, when its places
    /// come from what was kept; a number past the parameters given is refused.
    #[test]
    fn places_take_the_parameters_their_numbers_name() {
        static SQL: &str = "SELECT $2 || '/' || $1 || '/' || $2 || '/' || ?3 AS joined";
        static PAST: &str = "SELECT $1 || $4 AS joined";
        let c = Connection::open_in_memory().unwrap();
        for _ in 0..2 {
            let joined =
                query_optional(&c, SQL, &[&"a", &"b", &"c"], |row| text(row, "joined")).unwrap();
            assert_eq!(joined.as_deref(), Some("b/a/b/c"));
        }
        let error = query_optional(&c, PAST, &[&"a", &"b"], |row| text(row, "joined"))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("the statement's parameter 4 is not given"),
            "{error}"
        );
    }

    /// The statements a run's start, steps and ending make on the writer make no temporary
    /// B-tree: SQLite codes `IN (a list)` in a CHECK or an index's condition as one, made,
    /// filled and dropped again for every row (migrations 0014 and 0016 say the lists as
    /// comparisons), and `RETURNING` as a table of the rows returned. (A listen task's insert,
    /// once a listen, reads the table it writes, which SQLite keeps apart first.)
    #[tokio::test]
    async fn the_writers_statements_make_no_temporary_tree() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auto.db");
        let _store = crate::sqlite::open(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        let c = crate::sqlite::open_raw(&path).unwrap();
        let statements = [
            reserve_read_sql::<Sqlite>(),
            RESERVE_KEEP.to_owned(),
            event_batch(1).0.to_owned(),
            event_batch(20).0.to_owned(),
            insert_runs_change(1),
            touch_run_change::<Sqlite>(),
            end_run_change::<Sqlite>(),
            NOTIFY_PARENT.to_owned(),
            INSERT_WORK.to_owned(),
            INSERT_SNAPSHOT_CHANGE.to_owned(),
            UPDATE_SNAPSHOT_CHANGE.to_owned(),
        ];
        for sql in statements {
            let mut explained = c.prepare(&format!("EXPLAIN {sql}")).unwrap();
            let mut rows = explained.raw_query();
            let mut program = Vec::new();
            while let Some(row) = rows.next().unwrap() {
                program.push(row.get::<_, String>(1).unwrap());
            }
            assert!(program.iter().any(|op| op == "Halt"), "{sql}: {program:?}");
            assert!(
                !program.iter().any(|op| op == "OpenEphemeral"),
                "{sql}: {program:?}"
            );
        }
    }
}
