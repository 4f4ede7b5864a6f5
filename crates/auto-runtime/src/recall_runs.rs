//! Recall functions' views and runs (supplement §7, "recall").
//!
//! A view is kept in the store with the last `seq` of the log it has met, so it goes on from
//! there after a restart; a new version starts again from `initial`. Each event of the named
//! types is folded once, in `seq` order: a batch of folds is kept only if the row is still as
//! it was read (its `revision`), so two folders (two runs, a run and a build, two servers)
//! never both apply a batch: the one that loses reads the row again and goes on from it.
//!
//! Folding happens where it is needed: a run folds what the view has not met before it
//! answers, so an answer sees every event recorded before the run; a save of a version, and a
//! run that finds more than [`RECALL_RUN_FOLDS_MAX`] events to meet, set a build going in the
//! background, one per view in a server, and runs answer `unavailable`, kind `rebuilding`,
//! until the view has caught up once. A fold that throws stops the view at that event: runs
//! are `conflict`, kind `stalled`, naming the event and the error, until a new version.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use auto_engine::recall::{self, RecallDocument};
use auto_store::{EventFilter, NewRun, PlaybookRef, RecallView, Run, RunEnding};
use serde_json::{Value, json};

use crate::documents::Checked;
use crate::events::event_out;
use crate::problem::{Problem, ProblemIssue, Reason};
use crate::runner::{Finish, Function};
use crate::runs::{prepared_input, rejection, succeeded};
use crate::service::{Service, store_problem};

/// How many events of the log a fold batch reads; what it folds is kept in one change.
pub const RECALL_FOLD_BATCH_MAX: u32 = 512;

/// How many events of the log a run meets itself before it answers; a view further behind is
/// built in the background while runs answer `rebuilding`.
pub const RECALL_RUN_FOLDS_MAX: i64 = 8_192;

/// How many events of other types a view passes over before it keeps how far it went, so a
/// run does not read them again.
pub const RECALL_PASSED_KEPT_EVERY: i64 = 4_096;

/// A recall run answers within its call: it folds at most [`RECALL_RUN_FOLDS_MAX`] events,
/// each within a fold's second, and answers within a program's 10 seconds; an attempt whose
/// last event is younger than this may still be going on elsewhere.
pub const RECALL_RUN_BOUND_MS: i64 = 60_000;

/// The views a build is going on for in this server.
#[derive(Clone, Debug, Default)]
pub(crate) struct Builds {
    going: Arc<Mutex<HashSet<(PlaybookRef, String)>>>,
}

impl Builds {
    fn begin(&self, pb: &PlaybookRef, name: &str) -> bool {
        self.going
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert((pb.clone(), name.to_owned()))
    }

    fn end(&self, pb: &PlaybookRef, name: &str) {
        self.going
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(pb.clone(), name.to_owned()));
    }
}

/// Where a view stands after a catch-up.
#[derive(Debug)]
enum Standing {
    /// Up to date with the log as read: the view to answer from.
    Ready(Value),
    /// Not caught up yet: being built.
    Rebuilding,
    /// A fold threw: what `stalled` records.
    Stalled(Value),
}

/// How far a catch-up may go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reach {
    /// A run's: at most [`RECALL_RUN_FOLDS_MAX`] events.
    Run,
    /// A build's: to the end of the log.
    Build,
}

/// Brings the view of `version` of the recall function `name` up to the end of the log (or as
/// far as `reach` goes), keeping each batch as it goes.
async fn catch_up(
    service: &Service,
    pb: &PlaybookRef,
    name: &str,
    version: i64,
    document: &Arc<RecallDocument>,
    reach: Reach,
) -> Result<Standing, Problem> {
    let store = service.store.as_ref();
    let mut row = match store.get_view(pb, name).await.map_err(store_problem)? {
        Some(row) if row.version >= version => row,
        _ => fresh_view(service, pb, name, version, document).await?,
    };
    // The view as advanced here, kept when it must be: every fold kept before an answer, and
    // events of other types passed over kept now and then, not at every run.
    let mut working = row.clone();
    let (mut met, mut unkept, mut folded_unkept) = (0i64, 0i64, false);
    loop {
        if working.version > version {
            // A newer version's view: this run's version is no longer kept.
            return Ok(Standing::Rebuilding);
        }
        if let Some(stalled) = &working.stalled {
            return Ok(Standing::Stalled(stalled.clone()));
        }
        let filter = EventFilter {
            after_seq: Some(working.folded_seq),
            limit: RECALL_FOLD_BATCH_MAX,
            ..EventFilter::default()
        };
        let events = store
            .list_events(pb, &filter)
            .await
            .map_err(store_problem)?;
        let at_end = events.len() < RECALL_FOLD_BATCH_MAX as usize;
        met += events.len() as i64;
        unkept += events.len() as i64;
        let batch = fold_batch(
            document.clone(),
            working.view.clone(),
            working.folded_seq,
            events,
        )
        .await?;
        folded_unkept |= batch.folded > 0;
        working = RecallView {
            view: batch.view,
            folded_seq: batch.folded_seq,
            built: working.built || (at_end && batch.stalled.is_none()),
            stalled: batch.stalled,
            ..working
        };
        let out_of_reach = reach == Reach::Run && met >= RECALL_RUN_FOLDS_MAX;
        let keep = working.stalled.is_some()
            || (working.built && !row.built)
            || (at_end && folded_unkept)
            || unkept >= RECALL_PASSED_KEPT_EVERY
            || out_of_reach;
        let changed = working.folded_seq != row.folded_seq
            || working.built != row.built
            || working.stalled != row.stalled;
        if keep && changed {
            match store
                .put_view(pb, &working, Some(row.revision))
                .await
                .map_err(store_problem)?
            {
                Some(kept) => row = kept,
                // Another folder kept its batch first: go on from what it kept.
                None => {
                    row = match store.get_view(pb, name).await.map_err(store_problem)? {
                        Some(row) => row,
                        None => fresh_view(service, pb, name, version, document).await?,
                    };
                }
            }
            working = row.clone();
            (unkept, folded_unkept) = (0, false);
            if !at_end || working.folded_seq != batch.folded_seq {
                if out_of_reach {
                    start_build(service, pb, name);
                    return Ok(Standing::Rebuilding);
                }
                continue;
            }
        }
        if let Some(stalled) = &working.stalled {
            return Ok(Standing::Stalled(stalled.clone()));
        }
        if at_end && working.built {
            return Ok(Standing::Ready(working.view));
        }
        if out_of_reach {
            start_build(service, pb, name);
            return Ok(Standing::Rebuilding);
        }
    }
}

/// The view of a version before any event, kept in place of an older version's; the row as
/// kept (another folder's, when it kept one first).
async fn fresh_view(
    service: &Service,
    pb: &PlaybookRef,
    name: &str,
    version: i64,
    document: &Arc<RecallDocument>,
) -> Result<RecallView, Problem> {
    let store = service.store.as_ref();
    let program = document.clone();
    let initial = tokio::task::spawn_blocking(move || recall::initial_view(&program))
        .await
        .map_err(|e| Problem::internal(&e))?;
    let (view, stalled) = match initial {
        Ok(view) => (view, None),
        Err(error) => (
            Value::Null,
            Some(json!({ "seq": 0, "export": "initial", "error": error.detail })),
        ),
    };
    let new = RecallView {
        name: name.to_owned(),
        version,
        revision: 0,
        view,
        folded_seq: 0,
        built: false,
        stalled,
        updated_at: chrono::Utc::now(),
    };
    if let Some(kept) = store
        .put_view(pb, &new, None)
        .await
        .map_err(store_problem)?
    {
        return Ok(kept);
    }
    store
        .get_view(pb, name)
        .await
        .map_err(store_problem)?
        .ok_or_else(|| Problem::internal(&"a recall view vanished while it was made"))
}

/// What a batch of folds gave: the view, the last seq it met, and where it stopped.
struct Batch {
    view: Value,
    folded_seq: i64,
    /// How many events it folded.
    folded: usize,
    stalled: Option<Value>,
}

/// Folds the events of the document's types among `events` (in `seq` order) into `view`, on
/// a blocking thread; at a fold that throws, the view stops before that event.
async fn fold_batch(
    document: Arc<RecallDocument>,
    view: Value,
    folded_seq: i64,
    events: Vec<auto_store::Event>,
) -> Result<Batch, Problem> {
    tokio::task::spawn_blocking(move || {
        let mut batch = Batch {
            view,
            folded_seq,
            folded: 0,
            stalled: None,
        };
        for event in &events {
            if document.folds(&event.event_type) {
                let envelope = Value::Object(event_out(event, true).0);
                let now_ms = event.recorded_at.timestamp_millis();
                match recall::fold(&document, &batch.view, &envelope, now_ms) {
                    Ok(next) => {
                        batch.view = next;
                        batch.folded += 1;
                    }
                    Err(error) => {
                        batch.stalled = Some(json!({
                            "seq": event.seq,
                            "event_id": event.id,
                            "type": event.event_type,
                            "error": error.detail,
                        }));
                        return batch;
                    }
                }
            }
            batch.folded_seq = event.seq;
        }
        batch
    })
    .await
    .map_err(|e| Problem::internal(&e))
}

/// Sets a build of the view of `name` going in the background, unless one is going on in this
/// server: it folds to the end of the log, with the latest version.
pub(crate) fn start_build(service: &Service, pb: &PlaybookRef, name: &str) {
    if !service.recall_builds.begin(pb, name) {
        return;
    }
    let (service, pb, name) = (service.clone(), pb.clone(), name.to_owned());
    tokio::spawn(async move {
        let built = build(&service, &pb, &name).await;
        service.recall_builds.end(&pb, &name);
        if let Err(problem) = built {
            tracing::warn!(
                org = %pb.org,
                playbook = %pb.playbook,
                recall = %name,
                detail = %problem.detail,
                "a recall view's build stopped"
            );
        }
    });
}

async fn build(service: &Service, pb: &PlaybookRef, name: &str) -> Result<(), Problem> {
    let key = auto_store::DefinitionKey::new("recall", name);
    let Some(definition) = service
        .store
        .get_definition(pb, &key)
        .await
        .map_err(store_problem)?
    else {
        return Ok(());
    };
    let checked = service
        .checked_version(pb, &key, definition.version)
        .await?;
    let Some(document) = checked.as_deref().and_then(Checked::recall) else {
        return Ok(());
    };
    catch_up(
        service,
        pb,
        name,
        definition.version,
        document,
        Reach::Build,
    )
    .await?;
    Ok(())
}

/// The runner of recall functions: the view brought up to the log's end, then answered from.
pub(crate) struct Recall;

impl Function for Recall {
    async fn perform(
        &self,
        service: &Service,
        pb: &PlaybookRef,
        run: &Run,
        _: Option<NewRun>,
    ) -> Result<Finish, Problem> {
        let checked = service
            .checked_version(pb, &run.key, run.definition_version)
            .await?;
        let ending = match checked.as_deref().and_then(Checked::recall) {
            Some(document) => recall_ending(service, pb, run, document).await?,
            None => rejection(crate::documents::no_longer_parses(&run.key), &run.run_id),
        };
        Ok(Finish::at(ending, run.last_run_seq + 1))
    }

    async fn quiet_after_ms(&self, _: &Service, _: &PlaybookRef, _: &Run) -> Result<i64, Problem> {
        Ok(RECALL_RUN_BOUND_MS)
    }

    async fn stop(
        &self,
        _: &Service,
        _: &PlaybookRef,
        run: &Run,
        _: &str,
        _: Option<&str>,
    ) -> Result<(), Problem> {
        Err(Problem::conflict(
            "The run cannot be cancelled",
            format!(
                "The run {} is of a recall function, which finishes within its call; it cannot be cancelled.",
                run.run_id
            ),
        ))
    }
}

async fn recall_ending(
    service: &Service,
    pb: &PlaybookRef,
    run: &Run,
    document: &Arc<RecallDocument>,
) -> Result<RunEnding, Problem> {
    let name = &run.key.name;
    let title = |what: &str| format!("The recall function {name} {what}");
    let input = match prepared_input(
        &run.input,
        document.input_schema.as_ref(),
        document.input_default.as_ref(),
        &title("refused its input"),
    ) {
        Ok(input) => input,
        Err(problem) => return Ok(rejection(problem, &run.run_id)),
    };
    let standing = catch_up(
        service,
        pb,
        name,
        run.definition_version,
        document,
        Reach::Run,
    )
    .await?;
    let view = match standing {
        Standing::Ready(view) => view,
        Standing::Rebuilding => {
            start_build(service, pb, name);
            let problem = Problem::new(
                Reason::Unavailable,
                title("is rebuilding its view"),
                "Its view is being built from the playbook's events; ask again shortly.",
            )
            .with_kind("rebuilding");
            return Ok(rejection(problem, &run.run_id));
        }
        Standing::Stalled(stalled) => {
            return Ok(rejection(stalled_problem(name, &stalled), &run.run_id));
        }
    };
    let program = document.clone();
    let now_ms = run.started_at.timestamp_millis();
    let started = std::time::Instant::now();
    let answered =
        tokio::task::spawn_blocking(move || recall::answer(&program, &view, &input, now_ms))
            .await
            .map_err(|e| Problem::internal(&e))?;
    let duration_ms = started.elapsed().as_millis() as u64;
    Ok(match answered {
        Ok(output) => succeeded(run, output, Some(json!({ "duration_ms": duration_ms }))),
        Err(unworkable) => {
            let issues = unworkable
                .issues
                .iter()
                .map(|m| ProblemIssue::field("/output", m.clone()))
                .collect();
            let problem = Problem::conflict(title("could not give an answer"), unworkable.detail)
                .with_kind("unworkable")
                .with_issues(issues);
            rejection(problem, &run.run_id)
        }
    })
}

/// The refusal of a run of a recall function whose view stopped at an event.
fn stalled_problem(name: &str, stalled: &Value) -> Problem {
    let error = stalled["error"]
        .as_str()
        .unwrap_or("")
        .trim_end_matches('.');
    let detail = match stalled["seq"].as_i64() {
        Some(seq) if seq > 0 => format!(
            "Its view stopped at the event {} (seq {seq}, type {}): {error}. Save a new version to build it again.",
            stalled["event_id"].as_str().unwrap_or(""),
            stalled["type"].as_str().unwrap_or(""),
        ),
        _ => format!("Its view could not begin: {error}. Save a new version to build it again."),
    };
    Problem::conflict(format!("The recall function {name} is stalled"), detail).with_kind("stalled")
}
