//! The run of a reasoning function, from its recorded events: the reasoning page's "How a run
//! works", "The template", "Answers that are JSON", "How a run ends", "What a run records",
//! "The run's model calls" and "A run performed again". This is the shell around the run's
//! functional core (`crate::reasoning`): it reads the run's history, hands it to the core, and
//! performs the core's commands (records, the template rendered, the tools opened, the model
//! and tools called), handing back what each came to. The tools' side of the shell is
//! `reasoning_tools`.
//!
//! A run is performed from what it recorded. [`perform`] reads the run's events of this attempt
//! first: with no model call yet the core has the input checked and the template rendered;
//! with a call that was started and never ended (the server stopped) it closes that call as
//! `interrupted` and makes it again from the messages the first call kept, under the next
//! number; with a call that answered it takes the kept answer and never calls again. Every
//! event goes under the run's next `run_seq`, and a call's start is recorded before the call
//! is sent, so of two attempts at once the second stops at its first event, before it calls
//! anything.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tracing::Instrument;

use auto_engine::reasoning::ReasoningDocument;
use auto_models::{CallOptions, Catalog, ModelRef, Providers, model_call_bound};
use auto_store::{EventFilter, NewRun, PlaybookRef, Run, RunEnding, RunStatus, Store};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::problem::{Problem, ProblemIssue};
use crate::reasoning::core::{Command, Core, Input, Moment, Setup};
use crate::reasoning::endings::title;
use crate::reasoning::history::{Fact, History};
use crate::reasoning::record::Prompt;
use crate::runner::Finish;
use crate::runs::{run_fact, started_fact, taken};
use crate::service::store_problem;

pub use crate::reasoning::endings::{
    ANSWER_DEPTH_MAX, OUTPUT_AND_RECORD_BYTES_MAX, RECORD_WARNINGS_MAX,
};
pub(crate) use crate::reasoning::history::CancelOrder;
pub(crate) use crate::reasoning::record::{max_output_tokens, sha256_hex};

/// Time an attempt needs past its last event's call bound to commit that call's ending; a run
/// whose last event is younger than the bound plus this may still be going on elsewhere.
pub const COMMIT_MARGIN_MS: u64 = 5_000;

/// The operator's models and how calls to them are bounded.
#[derive(Clone, Debug)]
pub struct Models {
    pub providers: Providers,
    /// Facts of models (context windows) and what `list_models` offers.
    pub catalog: Catalog,
    /// Shortens the page's bound of a model call (`[limits] model_call_bound_ms`); never
    /// lengthens it.
    pub call_bound: Option<Duration>,
    /// The first wait before a retry when the provider gives no hint.
    pub retry_backoff: Duration,
    /// The operator's tool servers (`[[tool_servers]]`).
    pub tools: auto_tools::ToolServers,
    /// `REASONING_MAX_INPUT_TOKENS`: the input tokens a run's model calls may use.
    pub max_input_tokens: u64,
    /// The operator's webhooks (`[webhooks.NAME]`), which an interaction's `notify` names.
    pub webhooks: crate::webhooks::Webhooks,
    /// The client that posts requests to webhooks.
    pub webhook_client: reqwest::Client,
    /// Shortens the 70 seconds of a tool interaction (`[limits] interaction_tool_bound_ms`);
    /// never lengthens it.
    pub interaction_tool_bound: Option<Duration>,
    /// Shortens the bound of a whole tool-calling reasoning run (`[limits]
    /// reasoning_run_bound_ms`); never lengthens it.
    pub run_bound: Option<Duration>,
}

impl Models {
    /// No provider configured: every reasoning run ends `unavailable`, naming none.
    pub fn none() -> Self {
        let empty = toml::Table::new();
        Models {
            providers: Providers::from_config(&empty, &empty, &empty)
                .expect("an empty configuration of models is valid"),
            catalog: Catalog::built_in(),
            call_bound: None,
            retry_backoff: CallOptions::default().retry_backoff,
            tools: auto_tools::ToolServers::default(),
            max_input_tokens: crate::reasoning_room::REASONING_MAX_INPUT_TOKENS_DEFAULT,
            webhooks: crate::webhooks::Webhooks::default(),
            webhook_client: reqwest::Client::new(),
            interaction_tool_bound: None,
            run_bound: None,
        }
    }

    /// The bound of a whole tool-calling run: "10 minutes, or one model call's limit when that
    /// is longer", or shorter when the operator says.
    pub fn run_bound(&self, max_output_tokens: u32) -> Duration {
        let page = Duration::from_millis(auto_tools::limits::RUN_BOUND_MS)
            .max(self.bound(max_output_tokens));
        self.run_bound.map_or(page, |shorter| shorter.min(page))
    }

    /// The bound of a tool interaction's call: "within 70 seconds", or shorter when the
    /// operator says.
    pub fn interaction_tool_bound(&self) -> Duration {
        let page = Duration::from_millis(auto_engine::interaction::TOOL_CALL_MS_MAX);
        self.interaction_tool_bound
            .map_or(page, |shorter| shorter.min(page))
    }

    /// The bound of one model call of a function with this `max_output_tokens`.
    pub fn bound(&self, max_output_tokens: u32) -> Duration {
        let page = model_call_bound(max_output_tokens);
        self.call_bound.map_or(page, |shorter| shorter.min(page))
    }

    /// How old a run's last event must be before a request may go on with it: no attempt that
    /// is still going leaves a longer gap between two events.
    pub fn quiet_after(&self, document: &ReasoningDocument) -> Duration {
        // A run with tools may also be inside a tool call, bounded by its server's timeout.
        let tool_bound = if document.tools.is_empty() {
            Duration::ZERO
        } else {
            self.tools.longest_timeout()
        };
        self.bound(max_output_tokens(document))
            + tool_bound
            + Duration::from_millis(COMMIT_MARGIN_MS)
    }
}

/// The order of whoever cancels a run going on in this server, once one has.
pub(crate) type CancelSlot = Arc<Mutex<Option<CancelOrder>>>;

/// What cancels one run's call, and the order of whoever cancels it.
pub(crate) type CancelEntry = (CancellationToken, CancelSlot);

/// The order in `slot`, or a plain request when none was kept.
pub(crate) fn cancel_order(slot: &CancelSlot) -> CancelOrder {
    slot.lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .unwrap_or_else(CancelOrder::unspoken)
}
type CancelMap = HashMap<(PlaybookRef, String), CancelEntry>;

/// The runs going on in this server, each with what cancels its model call.
#[derive(Clone, Debug, Default)]
pub struct Cancels {
    runs: Arc<Mutex<CancelMap>>,
}

impl Cancels {
    pub(crate) fn register(&self, pb: &PlaybookRef, run_id: &str) -> CancelEntry {
        let entry = (CancellationToken::new(), Arc::new(Mutex::new(None)));
        self.lock()
            .insert((pb.clone(), run_id.to_owned()), entry.clone());
        entry
    }

    pub(crate) fn forget(&self, pb: &PlaybookRef, run_id: &str) {
        self.lock().remove(&(pb.clone(), run_id.to_owned()));
    }

    /// Cancels the run when it is going on in this server; false when it is not.
    pub(crate) fn cancel(&self, pb: &PlaybookRef, run_id: &str, order: CancelOrder) -> bool {
        match self.lock().get(&(pb.clone(), run_id.to_owned())) {
            Some((token, slot)) => {
                *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(order);
                token.cancel();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CancelMap> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Why a perform stopped without an ending: another attempt recorded first, or the store
/// failed. The run stays as it is.
pub type Stopped = Problem;

/// Appends a run's events under its next numbers.
pub(crate) struct Recorder<'a> {
    pub(crate) store: &'a dyn Store,
    pub(crate) pb: &'a PlaybookRef,
    pub(crate) run: &'a Run,
    pub(crate) next_seq: i64,
    /// A cancel asked of the run through another server, once this attempt has seen it among
    /// the events it went past: the run stops before its next call.
    pub(crate) cancel_seen: Option<CancelOrder>,
    /// A new run not recorded yet: recorded with the first event, in one commit.
    pub(crate) unrecorded: Option<NewRun>,
    /// Whether recording the new run found its id taken: nothing of this attempt is the run's.
    lost_start: bool,
    /// Where the start of `unrecorded` is counted once it is recorded.
    pub(crate) telemetry: Option<&'a crate::telemetry::Telemetry>,
}

impl<'a> Recorder<'a> {
    /// A recorder of the run's events after the last it recorded.
    pub(crate) fn new(store: &'a dyn Store, pb: &'a PlaybookRef, run: &'a Run) -> Self {
        Recorder {
            store,
            pb,
            run,
            next_seq: run.last_run_seq + 1,
            cancel_seen: None,
            unrecorded: None,
            lost_start: false,
            telemetry: None,
        }
    }

    pub(crate) async fn record(&mut self, event_type: &str, data: Value) -> Result<(), Stopped> {
        let event = run_fact(self.run, self.next_seq, event_type, data);
        match self.unrecorded.take() {
            Some(new) => {
                let started = started_fact(&new, 1);
                let counted = crate::telemetry::tally(std::slice::from_ref(&started));
                if let Err(error) = self
                    .store
                    .start_run(self.pb, new, vec![started, event])
                    .await
                {
                    self.lost_start = matches!(error, auto_store::StoreError::Conflict(_));
                    return Err(taken(error));
                }
                if let Some(telemetry) = self.telemetry {
                    telemetry.count(counted, None);
                }
            }
            None => {
                self.store
                    .record_run_events(self.pb, &self.run.run_id, vec![event])
                    .await
                    .map_err(taken)?;
            }
        }
        self.next_seq += 1;
        Ok(())
    }

    /// The run as it is now and its history, when it is still this attempt's and started:
    /// another writer took the number this attempt expected.
    async fn now_taken(&self) -> Result<Option<(Run, History)>, Stopped> {
        // The run id was another's when this attempt came to record its run.
        if self.lost_start {
            return Ok(None);
        }
        let now = self
            .store
            .get_run(self.pb, &self.run.run_id)
            .await
            .map_err(store_problem)?;
        let Some(now) =
            now.filter(|r| r.status == RunStatus::Started && r.attempt == self.run.attempt)
        else {
            return Ok(None);
        };
        let history = read_history(self.store, self.pb, &now).await?;
        Ok(Some((now, history)))
    }

    /// Records an event that claims no call number: the end of a call that is still open
    /// (`ends_call`), or a cancel asked of the run. Another writer may have taken the next
    /// number meanwhile (a cancel asked through another server); the event then goes after
    /// it, unless the run has ended or the call has an ending already.
    pub(crate) async fn record_following(
        &mut self,
        event_type: &str,
        data: Value,
        ends_call: Option<u64>,
    ) -> Result<(), Stopped> {
        for _ in 0..FOLLOWING_TRIES {
            match self.record(event_type, data.clone()).await {
                Ok(()) => return Ok(()),
                Err(problem) if problem.kind.as_deref() == Some("taken") => {
                    let Some((now, history)) = self.now_taken().await? else {
                        return Err(problem);
                    };
                    if ends_call.is_some_and(|number| history.call_ended(number)) {
                        return Err(problem);
                    }
                    if self.cancel_seen.is_none() {
                        self.cancel_seen = history.cancel_requested;
                    }
                    self.next_seq = now.last_run_seq + 1;
                }
                Err(problem) => return Err(problem),
            }
        }
        Err(taken(auto_store::StoreError::Conflict(
            "the run's numbers kept moving".into(),
        )))
    }

    /// Records the start of a model call or a tool call under the run's next number, unless a
    /// cancel was asked of the run through another server: then nothing is recorded and the
    /// order is given back, so the run stops before the call ("a run ... going in another
    /// server, stops before its next model call or tool call"). The cancel's event takes the
    /// number this attempt expected, or one it went past while ending a call.
    pub(crate) async fn start_call(
        &mut self,
        event_type: &str,
        data: Value,
    ) -> Result<Result<(), CancelOrder>, Stopped> {
        if let Some(order) = &self.cancel_seen {
            return Ok(Err(order.clone()));
        }
        match self.record(event_type, data).await {
            Ok(()) => Ok(Ok(())),
            Err(problem) if problem.kind.as_deref() == Some("taken") => {
                let Some((now, history)) = self.now_taken().await? else {
                    return Err(problem);
                };
                match history.cancel_requested {
                    Some(order) => {
                        self.next_seq = now.last_run_seq + 1;
                        self.cancel_seen = Some(order.clone());
                        Ok(Err(order))
                    }
                    None => Err(problem),
                }
            }
            Err(problem) => Err(problem),
        }
    }
}

/// How often an event that claims no call number looks for the run's next number.
const FOLLOWING_TRIES: usize = 8;

/// The history of the run's last attempt, typed.
pub(crate) async fn read_history(
    store: &dyn Store,
    pb: &PlaybookRef,
    run: &Run,
) -> Result<History, Stopped> {
    // Only its `run_started` (run_seq 1): nothing to read. A fact another server records
    // meanwhile (a cancel) takes the number this attempt's first record expects, which then
    // reads the history again.
    if run.last_run_seq <= 1 {
        return Ok(History::default());
    }
    let filter = EventFilter {
        run_id: Some(run.run_id.clone()),
        ..EventFilter::default()
    };
    let events = store
        .list_events(pb, &filter)
        .await
        .map_err(store_problem)?;
    let mut facts = Vec::with_capacity(events.len());
    for event in &events {
        let data = event.data.as_ref().unwrap_or(&Value::Null);
        facts.push(Fact::read(&event.event_type, data).map_err(|e| Problem::internal(&e))?);
    }
    Ok(History::of(facts))
}

/// Performs a started reasoning run from what it recorded. `Ok` is how the run finishes: its
/// ending, the `run_seq` its next fact takes, and the end of its last call, recorded with the
/// ending; `Err` means the run was not ended by this attempt.
pub(crate) async fn perform(
    store: &dyn Store,
    models: &Models,
    cancels: &Cancels,
    telemetry: &crate::telemetry::Telemetry,
    (pb, run, unrecorded): (&PlaybookRef, &Run, Option<NewRun>),
    document: &ReasoningDocument,
) -> Result<Finish, Stopped> {
    let history = read_history(store, pb, run).await?;
    let (token, slot) = cancels.register(pb, &run.run_id);
    let mut recorder = Recorder::new(store, pb, run);
    recorder.unrecorded = unrecorded;
    recorder.telemetry = Some(telemetry);
    let mut shell = Shell {
        recorder,
        models,
        telemetry,
        document,
        token,
        slot,
        toolbox: None,
    };
    let ending = shell
        .drive(Core::new(setup(models, run, document), history))
        .await;
    if let Some(toolbox) = shell.toolbox.take() {
        toolbox.close().await;
    }
    cancels.forget(pb, &run.run_id);
    let (ending, facts) = ending?;
    Ok(Finish {
        ending,
        run_seq: shell.recorder.next_seq,
        facts,
        unrecorded: shell.recorder.unrecorded.take(),
    })
}

/// What the run's core knows of the deployment: its bounds, whether the model is offered.
fn setup<'a>(models: &Models, run: &'a Run, document: &'a ReasoningDocument) -> Setup<'a> {
    let tokens = max_output_tokens(document);
    let model = document.model.parse::<ModelRef>().ok();
    let providers = &models.providers;
    Setup {
        run,
        document,
        call_bound: models.bound(tokens),
        run_bound: models.run_bound(tokens),
        max_input_tokens: models.max_input_tokens,
        model_offered: model.as_ref().is_some_and(|model| {
            providers.is_allowed(model)
                && providers
                    .configured()
                    .contains(&providers.resolve(model).provider.as_str())
        }),
        context_window: model
            .as_ref()
            .and_then(|model| models.catalog.facts(model))
            .and_then(|facts| facts.context_window),
        marker_seed: rand::random(),
    }
}

/// What performs a run's commands: its recorder, the models, what cancels it, and the tools it
/// opened.
pub(crate) struct Shell<'a> {
    pub(crate) recorder: Recorder<'a>,
    pub(crate) models: &'a Models,
    pub(crate) telemetry: &'a crate::telemetry::Telemetry,
    pub(crate) document: &'a ReasoningDocument,
    pub(crate) token: CancellationToken,
    slot: CancelSlot,
    pub(crate) toolbox: Option<crate::reasoning_tools::Toolbox>,
}

impl Shell<'_> {
    /// Performs the core's commands until it ends the run: its ending, and the records that
    /// came just before it, which go into the ending's commit rather than one each.
    async fn drive(
        &mut self,
        mut core: Core<'_>,
    ) -> Result<(RunEnding, Vec<(&'static str, Value)>), Stopped> {
        let mut commands = core.start();
        loop {
            // Records come first; the last command is the one that waits, or the ending.
            let mut input = None;
            let mut records = Vec::new();
            for command in commands {
                match command {
                    Command::End(ending) => {
                        let facts = records.into_iter().map(|(t, d, _)| (t, d)).collect();
                        return Ok((ending, facts));
                    }
                    Command::Record {
                        event_type,
                        data,
                        ends_call,
                    } => records.push((event_type, data, ends_call)),
                    other => {
                        self.record_all(std::mem::take(&mut records)).await?;
                        if let Some(came) = self.perform(other).await? {
                            input = Some(came);
                        }
                    }
                }
            }
            self.record_all(records).await?;
            let Some(input) = input else {
                return Err(Problem::internal(
                    &"a reasoning run's core waits for nothing",
                ));
            };
            commands = core.apply(input, &self.moment());
        }
    }

    /// Records what the core asked to record, in order, each after the run's last event.
    async fn record_all(
        &mut self,
        records: Vec<(&'static str, Value, Option<u64>)>,
    ) -> Result<(), Stopped> {
        for (event_type, data, ends_call) in records {
            self.recorder
                .record_following(event_type, data, ends_call)
                .await?;
        }
        Ok(())
    }

    /// What the shell sees now: the time, and the order of a cancel of the run in this server.
    fn moment(&self) -> Moment {
        Moment {
            now: chrono::Utc::now(),
            cancel: self.token.is_cancelled().then(|| cancel_order(&self.slot)),
        }
    }

    /// Performs one command; what it came to, for a command that waits for it.
    async fn perform(&mut self, command: Command) -> Result<Option<Input>, Stopped> {
        let run = self.recorder.run;
        Ok(Some(match command {
            Command::Record {
                event_type,
                data,
                ends_call,
            } => {
                self.recorder
                    .record_following(event_type, data, ends_call)
                    .await?;
                return Ok(None);
            }
            Command::Render => Input::Rendered(prepare_and_render(run, self.document).await),
            Command::OpenTools => Input::ToolsOpened(self.open_tools().await),
            Command::CallModel {
                started,
                request,
                bound,
            } => {
                if let Err(order) = self
                    .recorder
                    .start_call("model_call_started", started)
                    .await?
                {
                    return Ok(Some(Input::CancelSeen(order)));
                }
                let options = CallOptions {
                    cancel: self.token.clone(),
                    bound: Some(bound),
                    retry_backoff: self.models.retry_backoff,
                };
                let span = tracing::info_span!(
                    "model_call",
                    otel.name = %format_args!("chat {}", request.model.model),
                    otel.kind = "client",
                    gen_ai.system = %request.model.provider,
                    gen_ai.request.model = %request.model.model,
                    gen_ai.usage.input_tokens = tracing::field::Empty,
                    gen_ai.usage.output_tokens = tracing::field::Empty,
                    outcome = tracing::field::Empty,
                );
                let called = self
                    .models
                    .providers
                    .call(&request, &options)
                    .instrument(span.clone())
                    .await;
                crate::telemetry::record_model_call(&span, &called);
                self.telemetry.model_called(&request.model, &called);
                Input::ModelCalled(called)
            }
            Command::CallTool {
                started,
                server,
                tool,
                arguments,
                time_left,
            } => {
                self.call_tool(started, &server, &tool, arguments, time_left)
                    .await?
            }
            Command::End(_) => return Ok(None),
        }))
    }
}

/// How long a run's render may hold the runtime's worker before it is made on a blocking thread.
const RENDER_ON_WORKER: Duration = Duration::from_millis(1);

/// Step 1 and 2 of "How a run works": the input and the template.
async fn prepare_and_render(run: &Run, document: &ReasoningDocument) -> Result<Prompt, Problem> {
    let schema = match &document.built.input_schema {
        Some(Ok(schema)) => Some(schema.as_ref()),
        Some(Err(error)) => return Err(Problem::internal(error)),
        None => None,
    };
    let input = crate::runs::prepared_input_with(
        &run.input,
        schema,
        document.input_default.as_ref(),
        &title(run, "refused its input"),
    )?;
    let template = document.built.template.clone();
    let today = run.started_at.format("%Y-%m-%d").to_string();
    let now = run
        .started_at
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let offset = document.template_first_line.saturating_sub(1);
    let render = move |limit: Duration| {
        let started = Instant::now();
        let expired = move || started.elapsed() >= limit;
        auto_template::render(
            &template,
            &input,
            &today,
            &now,
            &auto_template::RenderLimits::new(&expired),
        )
    };
    // Nearly every render ends within microseconds: made on the worker, it costs no hand-over
    // to a blocking thread and back. One that outlasts `RENDER_ON_WORKER` is made again from
    // the start on a blocking thread, under the page's whole limit (a render reads nothing but
    // its input, so a second one gives what the first would have).
    let rendered = match render(RENDER_ON_WORKER) {
        Err(error) if error.kind == auto_template::RenderErrorKind::TimeLimit => {
            let limit = Duration::from_millis(auto_template::RENDER_TIME_MS_MAX);
            tokio::task::spawn_blocking(move || render(limit))
                .await
                .map_err(|e| Problem::internal(&e))?
        }
        made => made,
    };
    match rendered {
        Ok(rendered) => Ok(Prompt {
            system: rendered.system,
            message: rendered.message,
        }),
        Err(error) => {
            let line = error.line.saturating_add(offset);
            let issue = ProblemIssue {
                pointer: error
                    .field_pointer
                    .clone()
                    .unwrap_or_else(|| "/input".into()),
                line: Some(line),
                column: None,
                path: None,
                message: format!("Line {line}: {}", error.text),
            };
            Err(Problem::invalid_input(
                title(run, "cannot render its prompt"),
                issue.message.clone(),
            )
            .with_issues(vec![issue]))
        }
    }
}

/// Ends a run that is not going on anywhere as cancelled, closing a call left open.
pub(crate) async fn cancel_idle(
    store: &dyn Store,
    pb: &PlaybookRef,
    run: &Run,
    order: &CancelOrder,
) -> Result<(RunEnding, i64), Stopped> {
    let history = read_history(store, pb, run).await?;
    let mut recorder = Recorder::new(store, pb, run);
    let mut ending = None;
    for command in crate::reasoning::core::cancel_idle(run, history, order) {
        match command {
            Command::Record {
                event_type,
                data,
                ends_call,
            } => {
                recorder
                    .record_following(event_type, data, ends_call)
                    .await?;
            }
            Command::End(end) => ending = Some(end),
            _ => {}
        }
    }
    let ending = ending.ok_or_else(|| Problem::internal(&"a cancelled run has no ending"))?;
    Ok((ending, recorder.next_seq))
}

/// Records that a cancel was asked of a run going on elsewhere: it stops before its next model
/// call.
pub(crate) async fn request_cancel(
    store: &dyn Store,
    pb: &PlaybookRef,
    run: &Run,
    order: &CancelOrder,
) -> Result<(), Stopped> {
    Recorder::new(store, pb, run)
        .record_following(
            "run_cancel_requested",
            json!({ "detail": order.words, "kind": order.kind }),
            None,
        )
        .await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::reasoning::endings::{ANSWER_DEPTH_MAX, parse_json_answer};
    use crate::reasoning::record::{json_size_and_sha256, sha256_hex};

    #[test]
    fn a_values_size_and_digest_are_those_of_its_json_text() {
        let value = json!({"rows": [1, 2, {"name": "é"}], "text": "x".repeat(10_000)});
        let text = serde_json::to_vec(&value).unwrap();
        assert_eq!(
            json_size_and_sha256(&value, true),
            (text.len(), Some(sha256_hex(&text)))
        );
        assert_eq!(json_size_and_sha256(&value, false), (text.len(), None));
    }

    fn nested(levels: usize) -> String {
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    }

    /// "An answer may nest at most 128 levels deep": at the limit accepted, one past refused.
    #[test]
    fn an_answer_nests_at_most_128_levels() {
        assert!(parse_json_answer(&nested(ANSWER_DEPTH_MAX)).is_ok());
        assert_eq!(
            parse_json_answer(&nested(ANSWER_DEPTH_MAX + 1)).unwrap_err(),
            "The answer nests deeper than the 128 levels an answer may"
        );
    }

    fn run_of(input: serde_json::Value) -> auto_store::Run {
        let at = "2026-01-01T00:00:00Z";
        serde_json::from_value(json!({
            "run_id": "r1", "key": { "def_type": "reasoning", "name": "f" },
            "definition_version": 1, "status": "started", "input": input, "output": null,
            "record": null, "problem": null, "started_by": "local", "parent_run_id": null,
            "task_reference": null, "depth": null, "call_depth": null, "trigger": null,
            "parent_call_id": null, "root_run_id": null, "attempt": 1, "last_run_seq": 1,
            "last_event_at": at, "started_at": at, "ended_at": null,
        }))
        .expect("a run")
    }

    /// A render that outlasts its turn on the worker is made again on a blocking thread under
    /// the page's whole limit, and renders; one that outlasts that limit ends as the page says.
    #[tokio::test]
    async fn a_render_longer_than_its_turn_on_the_worker_is_made_again_under_the_whole_limit() {
        let document = |body: &str| {
            auto_engine::reasoning::check_reasoning(&format!(
                "---\nmodel: anthropic/claude-sonnet-4-5\n---\n{body}\n"
            ))
            .expect("the document passes")
        };
        let run = run_of(json!({"name": "Ada"}));
        let longer = document(
            "{% for i in (1..300) %}{% for j in (1..300) %}{% endfor %}{% endfor %}Hi {{ input.name }}.",
        );
        let started = std::time::Instant::now();
        let prompt = super::prepare_and_render(&run, &longer).await.unwrap();
        assert!(started.elapsed() > super::RENDER_ON_WORKER);
        assert_eq!(prompt.message, "Hi Ada.\n");

        let too_long =
            document("{% for i in (1..3000) %}{% for j in (1..3000) %}{% endfor %}{% endfor %}Hi.");
        let problem = super::prepare_and_render(&run, &too_long)
            .await
            .unwrap_err();
        assert_eq!(
            problem.detail,
            "Line 4: The template took longer than 200 ms to render"
        );
    }

    #[test]
    fn a_fenced_json_answer_is_read() {
        assert_eq!(
            parse_json_answer("```json\n{\"a\": 1}\n```").unwrap(),
            json!({"a": 1})
        );
        assert!(
            parse_json_answer("seven")
                .unwrap_err()
                .starts_with("The answer is not JSON")
        );
    }
}
