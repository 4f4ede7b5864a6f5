//! The hot change on PostgreSQL: a run that begins and ends in its first step ([`WholeRun`]),
//! what a workflow that runs through without waiting commits, recorded in one statement that
//! commits alone.
//!
//! Why it exists beside the shared step: a change that records events takes its playbook's
//! `seq`s under the playbook row's lock and holds it to its commit, so that a follower of the
//! log never finds an earlier `seq` after a later one. In the step's transaction the lock is
//! taken by its first statement and held over every statement after it and the `COMMIT`, each
//! a round trip to the server's process, which on loaded cores waits its turn for a CPU
//! between them: one playbook's changes then go one at a time at the pace of those round
//! trips. Here the runs, the events and the news to a parent are data-modifying parts of one
//! `WITH` statement sent without a transaction around it, so PostgreSQL takes the lock,
//! writes every row and commits without a word from the server in between: the lock is held
//! for the database's own work and its commit only.
//!
//! It is the shared step's change for such a run (`work::commit_step`), row for row: the same
//! columns and values (`runs::run_params`), the same time (`clock_timestamp()` read under the
//! lock, as `reserve_sql` reads it), the same checks and errors (`shared`), the run returned as
//! the step recorded it (`rows::run_from_row`). The store suite's cases of such steps run here on
//! PostgreSQL.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use sqlx::Postgres;
use sqlx::postgres::{PgDatabaseError, PgPool};
use sqlx::types::Json;

use super::rows::run_from_row;
use super::runs::run_taken;
use super::{WholeRun, seq_count};
use crate::dialect::SqlRow;
use crate::shared::{event_insert_error, playbook_not_found, run_columns};
use crate::{NewEvent, NewRun, PlaybookRef, Result, Run, RunEnding, StoreError};

/// The statement of [`commit_whole_run`]. `$1`/`$2` the playbook, `$3` the count of events;
/// `$4`-`$25` the runs' columns as arrays, the run first; `$26`-`$35` the events' as arrays, in
/// order; `$36`-`$39` the work the run's ending adds to its parent (null for none). It returns
/// the run as recorded, and no row when there is no such playbook.
fn whole_run_sql() -> String {
    format!(
        concat!(
            "WITH s AS (UPDATE playbooks SET last_seq = last_seq + $3 WHERE org = $1 AND id = $2 \
             RETURNING pk, last_seq - $3 AS before, clock_timestamp() AS now), \
             r AS (INSERT INTO runs (playbook_pk, run_id, def_type, name, definition_version, \
             status, input, started_by, parent_run_id, task_reference, depth, call_depth, \
             trigger_info, attempt, last_run_seq, last_event_at, started_at, parent_call_id, \
             root_run_id, ending_work_key, ending_work_payload, ending_work_ordered, output, \
             record, problem, ended_at) \
             SELECT s.pk, u.run_id, u.def_type, u.name, u.definition_version, u.status, u.input, \
             u.started_by, u.parent_run_id, u.task_reference, u.depth, u.call_depth, \
             u.trigger_info, 1, u.last_run_seq, s.now, COALESCE(u.started_at, s.now), \
             u.parent_call_id, u.root_run_id, u.ending_work_key, u.ending_work_payload, \
             u.ending_work_ordered, u.output, u.record, u.problem, s.now \
             FROM s, UNNEST($4::text[], $5::text[], $6::text[], $7::int8[], $8::text[], \
             $9::jsonb[], $10::text[], $11::text[], $12::text[], $13::int8[], $14::int8[], \
             $15::jsonb[], $16::int8[], $17::timestamptz[], $18::text[], $19::text[], \
             $20::text[], $21::bytea[], $22::bool[], $23::jsonb[], $24::jsonb[], $25::jsonb[]) \
             AS u(run_id, def_type, name, definition_version, status, input, started_by, \
             parent_run_id, task_reference, depth, call_depth, trigger_info, last_run_seq, \
             started_at, parent_call_id, root_run_id, ending_work_key, ending_work_payload, \
             ending_work_ordered, output, record, problem) \
             RETURNING ",
            run_columns!(),
            "), \
             e AS (INSERT INTO events (playbook_pk, seq, id, type, source, subject, time, \
             datacontenttype, data, extensions, run_id, run_seq, recorded_at) \
             SELECT s.pk, s.before + t.ord, t.id, t.type, t.source, t.subject, \
             COALESCE(t.time, s.now), t.datacontenttype, t.data, t.extensions, t.run_id, \
             t.run_seq, s.now \
             FROM s, UNNEST($26::text[], $27::text[], $28::text[], $29::text[], \
             $30::timestamptz[], $31::text[], $32::jsonb[], $33::jsonb[], $34::text[], \
             $35::int8[]) WITH ORDINALITY AS t(id, type, source, subject, time, \
             datacontenttype, data, extensions, run_id, run_seq, ord) ORDER BY t.ord), \
             w AS (INSERT INTO work (playbook_pk, run_id, key, due_at, payload, ordered) \
             SELECT s.pk, $36, $37, s.now, $38, $39 FROM s \
             WHERE $36::text IS NOT NULL AND $37::text IS NOT NULL \
             ON CONFLICT (playbook_pk, run_id, key) DO NOTHING) \
             SELECT {} FROM r WHERE r.run_id = $4[1]"
        ),
        run_columns!()
    )
}

/// Records `whole` in one statement committed alone; the run as recorded. `NotFound` when the
/// playbook does not exist; `Conflict` when one of its runs' ids is taken in the playbook, or
/// an event's id or its run's number; then nothing is recorded.
pub(crate) async fn commit_whole_run(
    pool: &PgPool,
    playbook: &PlaybookRef,
    whole: WholeRun<'_>,
) -> Result<Run> {
    let WholeRun { runs, events } = whole;
    let count = seq_count(events.len())?;
    let (run, _, _) = runs[0];
    // A run's ending reaches its parent through the work it was started with.
    let news = run.parent_run_id.as_deref().and(run.ending_work.as_ref());
    let statement = whole_run_sql();
    let query = sqlx::query(sqlx::AssertSqlSafe(statement))
        .bind(playbook.org.as_str())
        .bind(playbook.playbook.as_str())
        .bind(count)
        .bind(column(&runs, |r, _, _| r.run_id.as_str()))
        .bind(column(&runs, |r, _, _| r.key.def_type.as_str()))
        .bind(column(&runs, |r, _, _| r.key.name.as_str()))
        .bind(column(&runs, |r, _, _| r.definition_version))
        .bind(column(&runs, |_, _, ending| ending.status.as_str()))
        .bind(column(&runs, |r, _, _| Json(&r.input)))
        .bind(column(&runs, |r, _, _| r.started_by.as_str()))
        .bind(column(&runs, |r, _, _| r.parent_run_id.as_deref()))
        .bind(column(&runs, |r, _, _| r.task_reference.as_deref()))
        .bind(column(&runs, |r, _, _| r.depth))
        .bind(column(&runs, |r, _, _| r.call_depth))
        .bind(column(&runs, |r, _, _| r.trigger.as_ref().map(Json)))
        .bind(column(&runs, |_, last_run_seq, _| last_run_seq))
        .bind(column(&runs, |r, _, _| r.started_at))
        .bind(column(&runs, |r, _, _| r.parent_call_id.as_deref()))
        .bind(column(&runs, |r, _, _| r.root_run_id.as_deref()))
        .bind(column(&runs, |r, _, _| {
            r.ending_work.as_ref().map(|work| work.key.as_str())
        }))
        .bind(column(&runs, |r, _, _| {
            r.ending_work.as_ref().map(|work| work.payload.as_slice())
        }))
        .bind(column(&runs, |r, _, _| {
            r.ending_work.as_ref().is_some_and(|work| work.ordered)
        }))
        .bind(column(&runs, |_, _, ending| {
            ending.output.as_ref().map(Json)
        }))
        .bind(column(&runs, |_, _, ending| {
            ending.record.as_ref().map(Json)
        }))
        .bind(column(&runs, |_, _, ending| {
            ending.problem.as_ref().map(Json)
        }));
    let query = bind_events(query, events)
        .bind(news.and(run.parent_run_id.as_deref()))
        .bind(news.map(|work| work.key.as_str()))
        .bind(news.map(|work| work.payload.as_slice()))
        .bind(news.is_some_and(|work| work.ordered));
    match query.fetch_optional(pool).await {
        Ok(Some(row)) => run_from_row(&SqlRow::<Postgres>(row)),
        Ok(None) => Err(playbook_not_found(playbook)),
        Err(error) => Err(whole_run_error(error, playbook, &runs)),
    }
}

/// One column of the runs, in their order: what `value` takes of each.
fn column<'a, T>(
    runs: &[(&'a NewRun, i64, &'a RunEnding)],
    value: impl Fn(&'a NewRun, i64, &'a RunEnding) -> T,
) -> Vec<T> {
    runs.iter()
        .map(|(run, last_run_seq, ending)| value(run, *last_run_seq, ending))
        .collect()
}

type PgQuery<'q> = sqlx::query::Query<'q, Postgres, sqlx::postgres::PgArguments>;

/// Binds the events' columns as ten arrays, in the order of `events`.
pub(crate) fn bind_events<'q>(query: PgQuery<'q>, events: &'q [NewEvent]) -> PgQuery<'q> {
    let ids: Vec<&str> = events.iter().map(|event| event.id.as_str()).collect();
    let types: Vec<&str> = events
        .iter()
        .map(|event| event.event_type.as_str())
        .collect();
    let sources: Vec<&str> = events.iter().map(|event| event.source.as_str()).collect();
    let subjects: Vec<Option<&str>> = events
        .iter()
        .map(|event| event.subject.as_deref())
        .collect();
    let times: Vec<Option<DateTime<Utc>>> = events.iter().map(|event| event.time).collect();
    let content_types: Vec<Option<&str>> = events
        .iter()
        .map(|event| event.datacontenttype.as_deref())
        .collect();
    let data: Vec<Option<Json<&Value>>> = events
        .iter()
        .map(|event| event.data.as_ref().map(Json))
        .collect();
    let extensions: Vec<Json<&Map<String, Value>>> =
        events.iter().map(|event| Json(&event.extensions)).collect();
    let run_ids: Vec<Option<&str>> = events.iter().map(|event| event.run_id.as_deref()).collect();
    let run_seqs: Vec<Option<i64>> = events.iter().map(|event| event.run_seq).collect();
    query
        .bind(ids)
        .bind(types)
        .bind(sources)
        .bind(subjects)
        .bind(times)
        .bind(content_types)
        .bind(data)
        .bind(extensions)
        .bind(run_ids)
        .bind(run_seqs)
}

/// The store's error for a whole run the database refused: a run's id taken names that run, an
/// event's rule broken is what the shared insert of events says.
fn whole_run_error(
    error: sqlx::Error,
    playbook: &PlaybookRef,
    runs: &[(&NewRun, i64, &RunEnding)],
) -> StoreError {
    let taken_run = match &error {
        sqlx::Error::Database(database_error)
            if database_error.is_unique_violation()
                && database_error.constraint() == Some("runs_pkey") =>
        {
            // PostgreSQL names the key: `Key (playbook_pk, run_id)=(7, <id>) already exists.`
            let detail = database_error
                .try_downcast_ref::<PgDatabaseError>()
                .and_then(PgDatabaseError::detail)
                .unwrap_or_default();
            Some(
                runs.iter()
                    .map(|(run, _, _)| run.run_id.as_str())
                    .find(|id| detail.contains(&format!(", {id}) already exists")))
                    .unwrap_or(runs[0].0.run_id.as_str()),
            )
        }
        _ => None,
    };
    match taken_run {
        Some(run_id) => run_taken(playbook, run_id),
        None => event_insert_error(error, playbook),
    }
}
