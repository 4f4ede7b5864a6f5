//! Recall functions' views and runs (supplement §7, "recall").
//!
//! A view is kept in the store with the last `seq` of the log it has met, so it goes on from
//! there after a restart; a new version starts again from `initial`. Each event of the named
//! types is folded once, in `seq` order: a batch of folds is kept only if the row is still as
//! it was read (its `revision`), so two folders (a run and the follower, two servers) never
//! both apply a batch: the one that loses reads the row again and goes on from it.
//!
//! One follower of each playbook's log keeps its views up to date: set going by the sweep,
//! soon after an event is recorded, and by a save, it reads each batch of the log once and
//! folds it into every view of the playbook that has not met it, holding each view in the
//! store while it does ([`RECALL_HOLD`]), so that on several servers one server folds a view
//! at a time, and a server that stopped is taken over once its hold ends. A view being built
//! (a first save, a new version) goes on from where it was kept after a restart.
//!
//! A run folds what its view has not met yet before it answers, so an answer sees every event
//! recorded before the run; a view more than [`RECALL_RUN_FOLDS_MAX`] events behind is left to
//! the follower, and runs answer `unavailable`, kind `rebuilding`, until the view has caught up
//! once. A fold that throws stops the view at that event: runs are `conflict`, kind `stalled`,
//! naming the event and the error, until a new version.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use auto_engine::recall::{self, RecallDocument};
use auto_store::{
    DefinitionKey, DefinitionStatus, Event, EventFilter, NewRun, PlaybookRef, RecallView, Run,
    RunEnding,
};
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

/// How long a server holds a view it folds; it renews the hold while it goes on, and another
/// server takes the view over once a hold ends.
pub const RECALL_HOLD: Duration = Duration::from_secs(30);

/// A recall run answers within its call: it folds at most [`RECALL_RUN_FOLDS_MAX`] events,
/// each within a fold's second, and answers within a program's 10 seconds; an attempt whose
/// last event is younger than this may still be going on elsewhere.
pub const RECALL_RUN_BOUND_MS: i64 = 60_000;

/// The playbooks whose views a follower is folding in this server, each with whether it
/// should look again before it ends: something was saved or kept meanwhile.
#[derive(Clone, Debug, Default)]
pub(crate) struct Follows {
    going: Arc<Mutex<HashMap<PlaybookRef, bool>>>,
}

impl Follows {
    /// Whether a follower of `pb` is to begin; one going on is told to look again instead.
    fn begin(&self, pb: &PlaybookRef) -> bool {
        let mut going = self.going.lock().unwrap_or_else(|p| p.into_inner());
        match going.get_mut(pb) {
            Some(again) => {
                *again = true;
                false
            }
            None => {
                going.insert(pb.clone(), false);
                true
            }
        }
    }

    /// Whether the follower of `pb` ends now; `false` when it is to look again.
    fn end(&self, pb: &PlaybookRef) -> bool {
        let mut going = self.going.lock().unwrap_or_else(|p| p.into_inner());
        match going.get_mut(pb) {
            Some(again) if *again => {
                *again = false;
                false
            }
            _ => {
                going.remove(pb);
                true
            }
        }
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

/// Brings the view of `version` of the recall function `name` up to the end of the log, for a
/// run: at most [`RECALL_RUN_FOLDS_MAX`] events, keeping each batch it folds.
async fn catch_up(
    service: &Service,
    pb: &PlaybookRef,
    name: &str,
    version: i64,
    document: &Arc<RecallDocument>,
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
        // One event past the run's reach is read, to tell a view at its reach from one
        // beyond it.
        let room = u32::try_from(RECALL_RUN_FOLDS_MAX - met + 1).unwrap_or(u32::MAX);
        let limit = RECALL_FOLD_BATCH_MAX.min(room);
        let filter = EventFilter {
            after_seq: Some(working.folded_seq),
            limit,
            ..EventFilter::default()
        };
        let mut events = store
            .list_events(pb, &filter)
            .await
            .map_err(store_problem)?;
        let at_end = events.len() < limit as usize;
        let out_of_reach = met + events.len() as i64 > RECALL_RUN_FOLDS_MAX;
        if out_of_reach {
            events.truncate(usize::try_from(RECALL_RUN_FOLDS_MAX - met).unwrap_or(0));
        }
        met += events.len() as i64;
        unkept += events.len() as i64;
        let batch = fold_batch(
            document.clone(),
            working.view.clone(),
            working.folded_seq,
            Arc::new(events),
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
                    start_follow(service, pb);
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
            start_follow(service, pb);
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

/// Folds the events of the document's types among `events` (in `seq` order) after
/// `folded_seq` into `view`, on a blocking thread; at a fold that throws, the view stops
/// before that event.
async fn fold_batch(
    document: Arc<RecallDocument>,
    view: Value,
    folded_seq: i64,
    events: Arc<Vec<Event>>,
) -> Result<Batch, Problem> {
    tokio::task::spawn_blocking(move || {
        let mut batch = Batch {
            view,
            folded_seq,
            folded: 0,
            stalled: None,
        };
        for event in events.iter().filter(|e| e.seq > folded_seq) {
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

/// Whether a kept row is a recall function's view: a prediction's build is kept beside them
/// under a name with a `/`, which no function's name holds.
pub(crate) fn is_recall_view(name: &str) -> bool {
    !name.contains('/')
}

/// Sets the follower of the playbook's views going in the background, unless one is going on
/// in this server (which then looks again before it ends).
pub(crate) fn start_follow(service: &Service, pb: &PlaybookRef) {
    if !service.recall_follows.begin(pb) {
        return;
    }
    let (service, pb) = (service.clone(), pb.clone());
    tokio::spawn(async move {
        loop {
            if let Err(problem) = follow(&service, &pb).await {
                tracing::warn!(
                    org = %pb.org,
                    playbook = %pb.playbook,
                    detail = %problem.detail,
                    "the follower of a playbook's recall views stopped"
                );
            }
            if service.recall_follows.end(&pb) {
                break;
            }
        }
    });
}

/// What a save of a recall function sets going: its view of the saved version, from
/// `initial`, then the playbook's follower, which builds it.
pub(crate) fn saved(service: &Service, pb: &PlaybookRef, name: &str) {
    let (service, pb, name) = (service.clone(), pb.clone(), name.to_owned());
    tokio::spawn(async move {
        if let Err(problem) = begin_view(&service, &pb, &name).await {
            tracing::warn!(
                org = %pb.org,
                playbook = %pb.playbook,
                recall = %name,
                detail = %problem.detail,
                "a recall view could not begin"
            );
        }
        start_follow(&service, &pb);
    });
}

/// Keeps the view of the latest version of `name` from `initial`, unless one is kept.
async fn begin_view(service: &Service, pb: &PlaybookRef, name: &str) -> Result<(), Problem> {
    let store = service.store.as_ref();
    let key = DefinitionKey::new("recall", name);
    let Some(definition) = store
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
    match store.get_view(pb, name).await.map_err(store_problem)? {
        Some(row) if row.version >= definition.version => {}
        _ => {
            fresh_view(service, pb, name, definition.version, document).await?;
        }
    }
    Ok(())
}

/// A view the follower folds: its version's program and the row as last kept.
struct Followed {
    document: Arc<RecallDocument>,
    row: RecallView,
    held_at: Instant,
}

/// Folds the log into every view of the playbook that has not met its end and that this
/// server can hold, one batch of the log at a time for all of them.
async fn follow(service: &Service, pb: &PlaybookRef) -> Result<(), Problem> {
    let store = service.store.as_ref();
    let holder = service.scheduler.holder();
    let heads = store.list_views(Some(pb)).await.map_err(store_problem)?;
    let end = store.log_end(pb).await.map_err(store_problem)?;
    let mut followed = Vec::new();
    // A view stalled, or built and at the log's end, has nothing to fold; a save of a new
    // version begins its view first (see [`saved`]).
    let behind = heads
        .into_iter()
        .filter(|head| is_recall_view(&head.name))
        .filter(|head| !head.stalled && (!head.built || head.folded_seq < end));
    for head in behind {
        let key = DefinitionKey::new("recall", &head.name);
        let Some(definition) = store
            .get_definition(pb, &key)
            .await
            .map_err(store_problem)?
        else {
            continue;
        };
        if definition.status == DefinitionStatus::Retired {
            continue;
        }
        let checked = service
            .checked_version(pb, &key, definition.version)
            .await?;
        let Some(document) = checked.as_deref().and_then(Checked::recall) else {
            continue;
        };
        if !store
            .hold_view(pb, &head.name, holder, RECALL_HOLD)
            .await
            .map_err(store_problem)?
        {
            continue;
        }
        let row = match store
            .get_view(pb, &head.name)
            .await
            .map_err(store_problem)?
        {
            Some(row) if row.version >= definition.version => row,
            _ => fresh_view(service, pb, &head.name, definition.version, document).await?,
        };
        if row.version == definition.version && row.stalled.is_none() {
            followed.push(Followed {
                document: document.clone(),
                row,
                held_at: Instant::now(),
            });
        }
    }
    while let Some(from) = followed.iter().map(|f| f.row.folded_seq).min() {
        let filter = EventFilter {
            after_seq: Some(from),
            limit: RECALL_FOLD_BATCH_MAX,
            ..EventFilter::default()
        };
        let events = Arc::new(
            store
                .list_events(pb, &filter)
                .await
                .map_err(store_problem)?,
        );
        let at_end = events.len() < RECALL_FOLD_BATCH_MAX as usize;
        let mut going = Vec::with_capacity(followed.len());
        for mut view in followed {
            let row = &view.row;
            let batch = fold_batch(
                view.document.clone(),
                row.view.clone(),
                row.folded_seq,
                events.clone(),
            )
            .await?;
            let next = RecallView {
                view: batch.view,
                folded_seq: batch.folded_seq,
                built: row.built || (at_end && batch.stalled.is_none()),
                stalled: batch.stalled,
                ..row.clone()
            };
            if next.folded_seq == row.folded_seq
                && next.built == row.built
                && next.stalled.is_none()
            {
                going.push(view);
                continue;
            }
            let Some(kept) = store
                .put_view(pb, &next, Some(row.revision))
                .await
                .map_err(store_problem)?
            else {
                // A run kept a batch first, or a newer version replaced the row: the next look
                // goes on from what was kept.
                service.recall_follows.begin(pb);
                continue;
            };
            tracing::debug!(
                org = %pb.org,
                playbook = %pb.playbook,
                recall = %kept.name,
                from = row.folded_seq,
                to = kept.folded_seq,
                folded = batch.folded,
                built = kept.built,
                "a recall view's batch kept"
            );
            if kept.stalled.is_some() {
                continue;
            }
            view.row = kept;
            if view.held_at.elapsed() > RECALL_HOLD / 3 {
                if !store
                    .hold_view(pb, &view.row.name, holder, RECALL_HOLD)
                    .await
                    .map_err(store_problem)?
                {
                    continue;
                }
                view.held_at = Instant::now();
            }
            going.push(view);
        }
        followed = going;
        if at_end {
            break;
        }
    }
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
        Err(crate::runner::within_call(run))
    }
}

async fn recall_ending(
    service: &Service,
    pb: &PlaybookRef,
    run: &Run,
    document: &Arc<RecallDocument>,
) -> Result<RunEnding, Problem> {
    let name = &run.key.name;
    let input = match prepared_input(
        &run.input,
        document.input_schema.as_ref(),
        document.input_default.as_ref(),
        &format!("The recall function {name} refused its input"),
    ) {
        Ok(input) => input,
        Err(problem) => return Ok(rejection(problem, &run.run_id)),
    };
    let now_ms = run.started_at.timestamp_millis();
    let started = Instant::now();
    let answer = answer_from_view(
        service,
        pb,
        name,
        run.definition_version,
        document,
        input,
        now_ms,
    )
    .await?;
    let duration_ms = started.elapsed().as_millis() as u64;
    Ok(match answer {
        Ok(output) => succeeded(run, output, Some(json!({ "duration_ms": duration_ms }))),
        Err(problem) => rejection(problem, &run.run_id),
    })
}

/// The answer of the latest version of the recall function `name` to `input` (already
/// prepared against its schema), for another function that reads it (a prediction's source):
/// the view brought up to the log's end, then answered from; the refusal a run of it would
/// get, or `Ok(Err)`.
pub(crate) async fn answer_of(
    service: &Service,
    pb: &PlaybookRef,
    name: &str,
    input: Value,
    now_ms: i64,
) -> Result<Result<Value, Problem>, Problem> {
    let key = DefinitionKey::new("recall", name);
    let definition = service
        .store
        .get_definition(pb, &key)
        .await
        .map_err(store_problem)?
        .filter(|d| d.status != DefinitionStatus::Retired);
    let Some(definition) = definition else {
        return Ok(Err(Problem::not_found(format!(
            "The recall function {name} does not exist in this playbook."
        ))));
    };
    let checked = service
        .checked_version(pb, &key, definition.version)
        .await?;
    let Some(document) = checked.as_deref().and_then(Checked::recall) else {
        return Ok(Err(crate::documents::no_longer_parses(&key)));
    };
    let input = match prepared_input(
        &input,
        document.input_schema.as_ref(),
        document.input_default.as_ref(),
        &format!("The recall function {name} refused its input"),
    ) {
        Ok(input) => input,
        Err(problem) => return Ok(Err(problem)),
    };
    answer_from_view(
        service,
        pb,
        name,
        definition.version,
        document,
        input,
        now_ms,
    )
    .await
}

/// The view of `version` brought up to the log's end, then `answer(view, input)`; the refusal
/// when it is rebuilding, stalled or the answer misses the contract.
async fn answer_from_view(
    service: &Service,
    pb: &PlaybookRef,
    name: &str,
    version: i64,
    document: &Arc<RecallDocument>,
    input: Value,
    now_ms: i64,
) -> Result<Result<Value, Problem>, Problem> {
    let title = |what: &str| format!("The recall function {name} {what}");
    let view = match catch_up(service, pb, name, version, document).await? {
        Standing::Ready(view) => view,
        Standing::Rebuilding => {
            start_follow(service, pb);
            let problem = Problem::new(
                Reason::Unavailable,
                title("is rebuilding its view"),
                "Its view is being built from the playbook's events; ask again shortly.",
            )
            .with_kind("rebuilding");
            return Ok(Err(problem));
        }
        Standing::Stalled(stalled) => return Ok(Err(stalled_problem(name, &stalled))),
    };
    let program = document.clone();
    let answered =
        tokio::task::spawn_blocking(move || recall::answer(&program, &view, &input, now_ms))
            .await
            .map_err(|e| Problem::internal(&e))?;
    Ok(answered.map_err(|unworkable| {
        let issues = unworkable
            .issues
            .iter()
            .map(|m| ProblemIssue::field("/output", m.clone()))
            .collect();
        Problem::conflict(title("could not give an answer"), unworkable.detail)
            .with_kind("unworkable")
            .with_issues(issues)
    }))
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
