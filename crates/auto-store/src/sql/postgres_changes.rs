//! The hot change on PostgreSQL: a run that begins and ends in its first step ([`WholeRun`]),
//! what a workflow that runs through without waiting commits, recorded in one statement that
//! commits alone, with the whole runs of its playbook that wait with it ([`WholeRuns`]).
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
//! for the database's own work and its commit only. What is left is one commit after another,
//! so the whole runs of a playbook that arrive while its statement commits go together in the
//! next, as longer arrays: one lock, one commit and one round trip for all of them. Written here
//! rather than taken from a crate for the same reason as SQLite's group writer (`group`): what it
//! groups are our own changes, with our own rule that each stands or falls alone.
//!
//! It is the shared step's change for such a run (`work::commit_step`), row for row: the same
//! columns and values (`runs::run_params`), the same time (`clock_timestamp()` read under the
//! lock, as `reserve_sql` reads it), the same checks and errors (`shared`), the run returned as
//! the step recorded it (`rows::run_from_row`). The store suite's cases of such steps run here on
//! PostgreSQL.

use std::collections::HashMap;
use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use sqlx::Postgres;
use sqlx::postgres::{PgDatabaseError, PgPool};
use sqlx::types::Json;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;

use super::rows::run_from_row;
use super::runs::run_taken;
use super::{WholeRun, seq_count};
use crate::dialect::SqlRow;
use crate::shared::{event_insert_error, kept_source, playbook_not_found, run_columns};
use crate::{NewEvent, NewRun, NewWork, PlaybookRef, Result, Run, RunEnding, StoreError};

/// The statement of [`record`], put together once.
static WHOLE_RUN_SQL: LazyLock<String> = LazyLock::new(whole_run_sql);

/// The statement of [`record`]. `$1`/`$2` the playbook, `$3` the count of events;
/// `$4`-`$25` the runs' columns as arrays; `$26`-`$35` the events' as arrays, in order;
/// `$36`-`$39` the work the runs' endings add to their parents; `$40` the ids of the runs the
/// changes are of. It returns those runs as recorded, and no row when there is no such playbook.
/// The text of the whole-run statement, for the connections that prepare it ahead.
pub(crate) fn whole_run_statement() -> &'static str {
    WHOLE_RUN_SQL.as_str()
}

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
             t.time, t.datacontenttype, t.data, t.extensions, t.run_id, \
             t.run_seq, s.now \
             FROM s, UNNEST($26::text[], $27::text[], $28::text[], $29::text[], \
             $30::timestamptz[], $31::text[], $32::jsonb[], $33::jsonb[], $34::text[], \
             $35::int8[]) WITH ORDINALITY AS t(id, type, source, subject, time, \
             datacontenttype, data, extensions, run_id, run_seq, ord) ORDER BY t.ord), \
             w AS (INSERT INTO work (playbook_pk, run_id, key, due_at, payload, ordered) \
             SELECT s.pk, n.run_id, n.key, s.now, n.payload, n.ordered \
             FROM s, UNNEST($36::text[], $37::text[], $38::bytea[], $39::bool[]) \
             AS n(run_id, key, payload, ordered) \
             ON CONFLICT (playbook_pk, run_id, key) DO NOTHING) \
             SELECT {} FROM r WHERE r.run_id = ANY($40::text[])"
        ),
        run_columns!()
    )
}

/// How many whole runs of one playbook one statement records at most: enough that a burst of
/// concurrent runs shares a statement and a commit, few enough that the first is not kept long
/// for the last.
pub(crate) const GROUP_RUNS_MAX: usize = 64;

/// A whole run as it waits for its group, and where its answer goes.
struct Pending {
    whole: WholeRun,
    answer: oneshot::Sender<Result<Run>>,
}

impl Pending {
    /// The id of the run the change is of (its calls' runs come after it).
    fn run_id(&self) -> &str {
        self.whole.run().map_or("", |run| run.run_id.as_str())
    }

    /// Its run among those `recorded`: none there when the playbook was not.
    fn recorded_run(
        &self,
        recorded: &mut HashMap<String, Run>,
        playbook: &PlaybookRef,
    ) -> Result<Run> {
        recorded
            .remove(self.run_id())
            .ok_or_else(|| playbook_not_found(playbook))
    }

    fn answer(self, run: Result<Run>) {
        // The caller may have stopped waiting: its run stands all the same.
        let _ = self.answer.send(run);
    }
}

/// The handle to the writer of whole runs on PostgreSQL: it records the whole runs of one
/// playbook that wait together in one statement, while the statement before them commits, and
/// those of different playbooks side by side. Nothing waits on purpose for a group to fill.
pub(crate) struct WholeRuns {
    waiting: mpsc::UnboundedSender<(PlaybookRef, Pending)>,
}

impl WholeRuns {
    pub(crate) fn start(pool: PgPool) -> Self {
        let (waiting, received) = mpsc::unbounded_channel();
        tokio::spawn(write(pool, received));
        WholeRuns { waiting }
    }

    /// Records `whole` with the whole runs of its playbook waiting with it; the run as
    /// recorded once its statement committed. `NotFound` when the playbook does not exist;
    /// `Conflict` when one of its runs' ids is taken in the playbook, or an event's id or its
    /// run's number; then nothing of it is recorded.
    pub(crate) async fn commit(&self, playbook: &PlaybookRef, whole: WholeRun) -> Result<Run> {
        let (answer, answered) = oneshot::channel();
        self.waiting
            .send((playbook.clone(), Pending { whole, answer }))
            .map_err(|_| writer_gone())?;
        answered.await.map_err(|_| writer_gone())?
    }
}

fn writer_gone() -> StoreError {
    StoreError::Database(sqlx::Error::PoolClosed)
}

/// The writer: one statement in flight a playbook, the whole runs that arrive meanwhile its
/// next group.
async fn write(pool: PgPool, mut received: mpsc::UnboundedReceiver<(PlaybookRef, Pending)>) {
    let mut queued: HashMap<PlaybookRef, Vec<Pending>> = HashMap::new();
    let mut busy: HashMap<tokio::task::Id, PlaybookRef> = HashMap::new();
    let mut in_flight: JoinSet<()> = JoinSet::new();
    let mut open = true;
    while open || !in_flight.is_empty() {
        tokio::select! {
            arrived = received.recv(), if open => match arrived {
                Some((playbook, pending)) => queued.entry(playbook).or_default().push(pending),
                None => open = false,
            },
            Some(done) = in_flight.join_next_with_id(), if !in_flight.is_empty() => {
                let id = match done {
                    Ok((id, ())) => id,
                    Err(error) => error.id(),
                };
                busy.remove(&id);
            }
        }
        while let Ok((playbook, pending)) = received.try_recv() {
            queued.entry(playbook).or_default().push(pending);
        }
        queued.retain(|playbook, group| {
            if group.is_empty() {
                return false;
            }
            if busy.values().any(|held| held == playbook) {
                return true;
            }
            let next = next_group(group);
            let (pool, held) = (pool.clone(), playbook.clone());
            let task = in_flight.spawn(async move { commit_group(&pool, &held, next).await });
            busy.insert(task.id(), playbook.clone());
            !group.is_empty()
        });
    }
}

/// The next group of a playbook's waiting runs, in the order they came: at most
/// [`GROUP_RUNS_MAX`], the rest left waiting.
fn next_group(waiting: &mut Vec<Pending>) -> Vec<Pending> {
    let take = waiting.len().min(GROUP_RUNS_MAX);
    waiting.drain(..take).collect()
}

/// Records a group of whole runs of one playbook in one statement, and answers each; when the
/// database refuses the statement, each is recorded alone, so that one refused (its id taken)
/// is answered with its own error and the others are recorded.
async fn commit_group(pool: &PgPool, playbook: &PlaybookRef, group: Vec<Pending>) {
    match record(pool, playbook, &group).await {
        Ok(mut recorded) => {
            for pending in group {
                let run = pending.recorded_run(&mut recorded, playbook);
                pending.answer(run);
            }
        }
        Err(error) if group.len() == 1 => {
            if let Some(pending) = group.into_iter().next() {
                pending.answer(Err(error));
            }
        }
        Err(_) => {
            for pending in group {
                let run = match record(pool, playbook, std::slice::from_ref(&pending)).await {
                    Ok(mut recorded) => pending.recorded_run(&mut recorded, playbook),
                    Err(error) => Err(error),
                };
                pending.answer(run);
            }
        }
    }
}

/// The group's runs and events in one statement committed alone: the runs the changes are of,
/// by id, as recorded (none when the playbook does not exist).
async fn record(
    pool: &PgPool,
    playbook: &PlaybookRef,
    group: &[Pending],
) -> Result<HashMap<String, Run>> {
    let runs: Vec<(&NewRun, i64, &RunEnding)> = group
        .iter()
        .flat_map(|pending| pending.whole.runs())
        .collect();
    let events: Vec<&NewEvent> = group
        .iter()
        .flat_map(|pending| pending.whole.events())
        .collect();
    let count = seq_count(events.len())?;
    // A run's ending reaches its parent through the work it was started with.
    let news: Vec<(&str, &NewWork)> = group
        .iter()
        .filter_map(|pending| {
            let run = pending.whole.run()?;
            Some((run.parent_run_id.as_deref()?, run.ending_work.as_ref()?))
        })
        .collect();
    let heads: Vec<&str> = group.iter().map(Pending::run_id).collect();
    let query = sqlx::query(sqlx::AssertSqlSafe(WHOLE_RUN_SQL.as_str()))
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
    let query = bind_events(query, &events)
        .bind(news.iter().map(|(parent, _)| *parent).collect::<Vec<_>>())
        .bind(
            news.iter()
                .map(|(_, work)| work.key.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            news.iter()
                .map(|(_, work)| work.payload.as_slice())
                .collect::<Vec<_>>(),
        )
        .bind(
            news.iter()
                .map(|(_, work)| work.ordered)
                .collect::<Vec<_>>(),
        )
        .bind(heads);
    match query.fetch_all(pool).await {
        Ok(rows) => rows
            .into_iter()
            .map(|row| {
                let run = run_from_row(&SqlRow::<Postgres>(row))?;
                Ok((run.run_id.clone(), run))
            })
            .collect(),
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
pub(crate) fn bind_events<'q>(query: PgQuery<'q>, events: &[&'q NewEvent]) -> PgQuery<'q> {
    let ids: Vec<&str> = events.iter().map(|event| event.id.as_str()).collect();
    let types: Vec<&str> = events
        .iter()
        .map(|event| event.event_type.as_str())
        .collect();
    // A run's own source and an unstated time are kept as NULL (migration 0015).
    let sources: Vec<Option<&str>> = events.iter().map(|event| kept_source(event)).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DefinitionKey, RunStatus, WorkflowStep};
    use std::sync::Arc;

    fn pending(index: usize) -> Pending {
        let run = NewRun::new(
            format!("w{index}"),
            DefinitionKey::new("workflow", "flow"),
            1,
            Value::Null,
            "local",
        );
        let ending = RunEnding {
            status: RunStatus::Succeeded,
            output: None,
            record: None,
            problem: None,
        };
        let step = WorkflowStep {
            ending: Some(ending),
            start: Some(run),
            ..WorkflowStep::default()
        };
        Pending {
            whole: WholeRun::new(Arc::new(step), 0),
            answer: oneshot::channel().0,
        }
    }

    /// A group takes at most `GROUP_RUNS_MAX` of a playbook's waiting runs, in order: that
    /// many go in one, and of one more, the last goes in the next.
    #[test]
    fn a_group_holds_at_most_its_runs() {
        for (waiting, groups) in [
            (GROUP_RUNS_MAX, vec![GROUP_RUNS_MAX]),
            (GROUP_RUNS_MAX + 1, vec![GROUP_RUNS_MAX, 1]),
        ] {
            let mut queue: Vec<Pending> = (0..waiting).map(pending).collect();
            let mut sizes = Vec::new();
            let mut first_ids = Vec::new();
            while !queue.is_empty() {
                let group = next_group(&mut queue);
                sizes.push(group.len());
                first_ids.push(group[0].run_id().to_owned());
            }
            assert_eq!(sizes, groups);
            assert_eq!(first_ids[0], "w0");
            if let Some(second) = first_ids.get(1) {
                assert_eq!(second, &format!("w{GROUP_RUNS_MAX}"));
            }
        }
    }
}
