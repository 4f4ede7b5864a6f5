//! The run of a reasoning function, from its recorded events: the reasoning page's "How a run
//! works", "The template", "Answers that are JSON", "How a run ends", "What a run records",
//! "The run's model calls" and "A run performed again". The tools of a function, and its
//! steps that call them, are `reasoning_tools`.
//!
//! A run is performed from what it recorded. [`perform`] reads the run's events of this attempt
//! first: with no model call yet it checks the input and renders the template; with a call that
//! was started and never ended (the server stopped) it closes that call as `interrupted` and
//! makes it again from the messages the first call kept, under the next number; with a call
//! that answered it takes the kept answer and never calls again. Every event goes under the
//! run's next `run_seq`, so of two attempts at once the second stops at its first event, before
//! it calls anything.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use auto_engine::input::{depth_exceeds, prepare_input};
use auto_engine::reasoning::ReasoningDocument;
use auto_models::{
    CallOptions, Catalog, FailureBecause, FinishReason, Message, ModelAnswer, ModelFailure,
    ModelRef, ModelRequest, OutputContract, Providers, ReasoningEffort, RejectionKind,
    RejectionReason, Settings, model_call_bound, rejection_for,
};
use auto_schema::{CompiledSchema, ValidationIssue, check_shape, render_answer_issues};
use auto_store::{EventFilter, PlaybookRef, Run, RunEnding, RunStatus, Store};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::problem::{Problem, ProblemIssue, Reason};
use crate::runs::{OUTPUT_BYTES_MAX, fact, rejection, taken};
use crate::service::store_problem;

/// "The output and the record may be at most 1 MiB together."
pub const OUTPUT_AND_RECORD_BYTES_MAX: usize = 1_048_576;
/// "An answer may nest at most 128 levels deep."
pub const ANSWER_DEPTH_MAX: usize = 128;
/// "warnings: ... at most 20".
pub const RECORD_WARNINGS_MAX: usize = 20;
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

/// How a run was cancelled: the words of its ending, and its kind: `requested` by
/// `cancel_run`, `parent_ended` or `deadline` from a workflow that no longer waits for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CancelOrder {
    pub words: String,
    pub kind: String,
}

impl CancelOrder {
    /// `kind` is `requested` when none is given.
    pub(crate) fn new(words: impl Into<String>, kind: Option<&str>) -> Self {
        Self {
            words: words.into(),
            kind: kind.unwrap_or("requested").to_owned(),
        }
    }

    /// A cancel whose order was not kept: a plain request.
    pub(crate) fn unspoken() -> Self {
        Self::new(UNSPOKEN_WORDS, None)
    }

    /// The order recorded in a `run_cancel_requested` event's data.
    fn of_event(data: &Value) -> Self {
        Self::new(
            data["detail"].as_str().unwrap_or(UNSPOKEN_WORDS),
            data["kind"].as_str(),
        )
    }
}

/// The words of a cancel whose order was not kept.
const UNSPOKEN_WORDS: &str = "The run was cancelled.";

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
}

impl Recorder<'_> {
    pub(crate) async fn record(&mut self, event_type: &str, data: Value) -> Result<(), Stopped> {
        let mut event = fact(
            &self.run.run_id,
            self.next_seq,
            event_type,
            &self.run.key,
            &self.run.started_by,
            self.run.definition_version,
        );
        event.data = Some(data);
        self.store
            .record_run_events(self.pb, &self.run.run_id, vec![event])
            .await
            .map_err(taken)?;
        self.next_seq += 1;
        Ok(())
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
                    let now = self
                        .store
                        .get_run(self.pb, &self.run.run_id)
                        .await
                        .map_err(store_problem)?;
                    let Some(now) = now.filter(|r| {
                        r.status == RunStatus::Started && r.attempt == self.run.attempt
                    }) else {
                        return Err(problem);
                    };
                    let history = read_history(self.store, self.pb, &now).await?;
                    if let Some(number) = ends_call
                        && history
                            .calls
                            .iter()
                            .any(|c| c.number == number && c.ended.is_some())
                    {
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
}

impl Recorder<'_> {
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
                let now = self
                    .store
                    .get_run(self.pb, &self.run.run_id)
                    .await
                    .map_err(store_problem)?;
                let Some(now) =
                    now.filter(|r| r.status == RunStatus::Started && r.attempt == self.run.attempt)
                else {
                    return Err(problem);
                };
                match read_history(self.store, self.pb, &now)
                    .await?
                    .cancel_requested
                {
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

impl Recorder<'_> {
    /// A call started and never ended (its server stopped during it) ends as interrupted.
    async fn close_open_call(&mut self, calls: &mut [CallRecord]) -> Result<(), Stopped> {
        let Some(open) = calls.last_mut().filter(|c| c.ended.is_none()) else {
            return Ok(());
        };
        let provider = open.started["model"]
            .as_str()
            .and_then(|m| m.split('/').next())
            .unwrap_or("");
        let data = json!({
            "number": open.number,
            "because": FailureBecause::Interrupted.as_str(),
            "provider": provider,
            "detail": "the server stopped before the call ended",
            "duration_ms": 0,
        });
        self.record_following("model_call_failed", data.clone(), Some(open.number))
            .await?;
        open.ended = Some(("model_call_failed".to_owned(), data));
        Ok(())
    }
}

/// How often an event that claims no call number looks for the run's next number.
const FOLLOWING_TRIES: usize = 8;

/// One model call as the run's events tell it.
#[derive(Debug, Clone)]
pub(crate) struct CallRecord {
    pub(crate) number: u64,
    pub(crate) started: Value,
    /// `model_call_answered` or `model_call_failed`, with its data.
    pub(crate) ended: Option<(String, Value)>,
}

/// What this attempt of the run recorded before.
#[derive(Debug, Default)]
pub(crate) struct History {
    pub(crate) calls: Vec<CallRecord>,
    pub(crate) cancel_requested: Option<CancelOrder>,
    /// The tool calls this attempt recorded: `tool_call_started` and its ending, if any.
    pub(crate) tool_calls: Vec<CallRecord>,
}

async fn read_history(store: &dyn Store, pb: &PlaybookRef, run: &Run) -> Result<History, Stopped> {
    let filter = EventFilter {
        run_id: Some(run.run_id.clone()),
        ..EventFilter::default()
    };
    let events = store
        .list_events(pb, &filter)
        .await
        .map_err(store_problem)?;
    // This attempt's events come after its own `run_started`.
    let start = events
        .iter()
        .rposition(|e| e.event_type == "run_started")
        .map_or(0, |i| i + 1);
    let mut history = History::default();
    for event in &events[start..] {
        let data = event.data.clone().unwrap_or(Value::Null);
        match event.event_type.as_str() {
            "model_call_started" => history.calls.push(CallRecord {
                number: data["number"].as_u64().unwrap_or(0),
                started: data,
                ended: None,
            }),
            "model_call_answered" | "model_call_failed" => {
                let number = data["number"].as_u64();
                if let Some(call) = history
                    .calls
                    .iter_mut()
                    .rev()
                    .find(|c| Some(c.number) == number)
                {
                    call.ended = Some((event.event_type.clone(), data));
                }
            }
            "tool_call_started" => history.tool_calls.push(CallRecord {
                number: data["number"].as_u64().unwrap_or(0),
                started: data,
                ended: None,
            }),
            "tool_call_answered" | "tool_call_failed" => {
                let number = data["number"].as_u64();
                if let Some(call) = history
                    .tool_calls
                    .iter_mut()
                    .rev()
                    .find(|c| Some(c.number) == number)
                {
                    call.ended = Some((event.event_type.clone(), data));
                }
            }
            "run_cancel_requested" => {
                history.cancel_requested = Some(CancelOrder::of_event(&data));
            }
            _ => {}
        }
    }
    Ok(history)
}

/// The rendered prompt: the system instructions and the one user message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Prompt {
    pub(crate) system: Option<String>,
    pub(crate) message: String,
}

impl Prompt {
    /// The messages the first call adds, as the run keeps them.
    pub(crate) fn kept(&self) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = &self.system {
            messages.push(json!({ "role": "system", "content": system }));
        }
        messages.push(json!({ "role": "user", "content": self.message }));
        Value::Array(messages)
    }

    fn from_kept(messages: &Value) -> Option<Prompt> {
        let mut prompt = Prompt {
            system: None,
            message: String::new(),
        };
        let mut user = false;
        for message in messages.as_array()? {
            let content = message["content"].as_str()?.to_owned();
            match message["role"].as_str()? {
                "system" => prompt.system = Some(content),
                "user" => {
                    prompt.message = content;
                    user = true;
                }
                _ => return None,
            }
        }
        user.then_some(prompt)
    }
}

/// Spending over the model calls that ended: usage, time and cost.
#[derive(Debug, Default, Clone)]
pub(crate) struct Spending {
    pub(crate) usage: Option<Map<String, Value>>,
    pub(crate) duration_ms: u64,
    pub(crate) cost_usd: Option<f64>,
}

const USAGE_FIELDS: [&str; 6] = [
    "input_uncached",
    "cache_read",
    "cache_write",
    "output_text",
    "output_reasoning",
    "total",
];

impl Spending {
    pub(crate) fn add(&mut self, ended: &Value) {
        self.duration_ms += ended["duration_ms"].as_u64().unwrap_or(0);
        if let Some(cost) = ended["cost_usd"].as_f64() {
            *self.cost_usd.get_or_insert(0.0) += cost;
        }
        if let Some(usage) = ended["usage"].as_object() {
            let sum = self.usage.get_or_insert_with(|| {
                USAGE_FIELDS
                    .iter()
                    .map(|f| ((*f).to_owned(), json!(0)))
                    .collect()
            });
            for field in USAGE_FIELDS {
                // A count the provider did not report is null, and stays null in the sum.
                let added = match (sum.get(field).and_then(Value::as_u64), usage.get(field)) {
                    (Some(a), Some(Value::Number(b))) => b.as_u64().map(|b| json!(a + b)),
                    _ => None,
                };
                sum.insert(field.to_owned(), added.unwrap_or(Value::Null));
            }
        }
    }

    fn of(calls: &[CallRecord]) -> Spending {
        let mut spending = Spending::default();
        for call in calls {
            if let Some((_, ended)) = &call.ended {
                spending.add(ended);
            }
        }
        spending
    }

    /// The record a rejected run keeps: only usage, duration_ms and cost_usd; none before any
    /// model call ended.
    pub(crate) fn record(&self, calls_ended: bool) -> Option<Value> {
        if !calls_ended {
            return None;
        }
        let mut record = json!({
            "usage": self.usage.clone().map_or(Value::Null, Value::Object),
            "duration_ms": self.duration_ms,
        });
        if let Some(cost) = self.cost_usd {
            record["cost_usd"] = json!(cost);
        }
        Some(record)
    }
}

pub(crate) fn max_output_tokens(document: &ReasoningDocument) -> u32 {
    u32::try_from(document.config.max_output_tokens).unwrap_or(u32::MAX)
}

pub(crate) fn settings_of(document: &ReasoningDocument) -> Settings {
    let config = &document.config;
    Settings {
        max_output_tokens: max_output_tokens(document),
        temperature: config.temperature,
        top_p: config.top_p,
        seed: config.seed,
        stop_sequences: config.stop_sequences.clone(),
        reasoning: config
            .reasoning
            .as_deref()
            .and_then(|r| serde_json::from_value::<ReasoningEffort>(json!(r)).ok()),
    }
}

/// The settings as the record shows them: those sent, the default max_output_tokens filled.
fn settings_record(settings: &Settings) -> Value {
    let mut record = json!({ "max_output_tokens": settings.max_output_tokens });
    if let Some(t) = settings.temperature {
        record["temperature"] = json!(t);
    }
    if let Some(p) = settings.top_p {
        record["top_p"] = json!(p);
    }
    if let Some(seed) = settings.seed {
        record["seed"] = json!(seed);
    }
    if !settings.stop_sequences.is_empty() {
        record["stop_sequences"] = json!(settings.stop_sequences);
    }
    if let Some(reasoning) = settings.reasoning {
        record["reasoning"] = json!(reasoning.as_str());
    }
    record
}

pub(crate) fn output_contract(document: &ReasoningDocument) -> OutputContract {
    match (&document.output_shape, &document.output_schema) {
        (Some(shape), _) => OutputContract::Json {
            schema: auto_schema::shape_schema(shape).unwrap_or(Value::Null),
        },
        (None, Some(schema)) => OutputContract::Json {
            schema: schema.clone(),
        },
        (None, None) => OutputContract::Text,
    }
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The size of a value as JSON, and its SHA-256 when asked, written through without a copy of
/// the text: a tool's result may be megabytes.
pub(crate) fn json_size_and_sha256(value: &Value, hash: bool) -> (usize, Option<String>) {
    struct Through {
        bytes: usize,
        hasher: Option<Sha256>,
    }
    impl std::io::Write for Through {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes += buf.len();
            if let Some(hasher) = &mut self.hasher {
                hasher.update(buf);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut through = Through {
        bytes: 0,
        hasher: hash.then(Sha256::new),
    };
    // Writing JSON into memory does not fail.
    let _ = serde_json::to_writer(&mut through, value);
    let digest = through.hasher.map(|hasher| hex::encode(hasher.finalize()));
    (through.bytes, digest)
}

pub(crate) fn title(run: &Run, what: &str) -> String {
    format!("The reasoning function {} {what}", run.key.name)
}

/// Performs a started reasoning run from what it recorded. `Ok` is the run's ending with the
/// `run_seq` its ending fact takes; `Err` means the run was not ended by this attempt.
pub async fn perform(
    store: &dyn Store,
    models: &Models,
    cancels: &Cancels,
    pb: &PlaybookRef,
    run: &Run,
    document: &ReasoningDocument,
) -> Result<(RunEnding, i64), Stopped> {
    let history = read_history(store, pb, run).await?;
    let mut recorder = Recorder {
        store,
        pb,
        run,
        next_seq: run.last_run_seq + 1,
        cancel_seen: None,
    };
    let (token, cancel_words) = cancels.register(pb, &run.run_id);
    let ending = go_on(
        &mut recorder,
        models,
        run,
        document,
        history,
        &token,
        &cancel_words,
    )
    .await;
    cancels.forget(pb, &run.run_id);
    Ok((ending?, recorder.next_seq))
}

async fn go_on(
    recorder: &mut Recorder<'_>,
    models: &Models,
    run: &Run,
    document: &ReasoningDocument,
    history: History,
    token: &CancellationToken,
    cancel_words: &CancelSlot,
) -> Result<RunEnding, Stopped> {
    let mut calls = history.calls;
    let mut spending = Spending::of(&calls);
    let settings = settings_of(document);

    // A call started and never ended: the server stopped during it. It ends as interrupted.
    recorder.close_open_call(&mut calls).await?;

    if let Some(order) = &history.cancel_requested {
        let ended = calls.iter().any(|c| c.ended.is_some());
        return Ok(cancelled(run, order, spending.record(ended)));
    }

    // A run that called tools goes on from its tool calls (reasoning page, "A run performed
    // again").
    let mut tool_history = history.tool_calls;
    let tool_steps =
        !document.tools.is_empty() && crate::reasoning_tools::called_tools(&tool_history, &calls);
    if tool_steps
        && let Some(ending) = crate::reasoning_tools::resume_after_tools(
            recorder,
            run,
            &mut tool_history,
            &calls,
            &spending,
        )
        .await?
    {
        return Ok(ending);
    }
    // An ending met before the run's next call, once it called tools, names them.
    let settle = |ending: RunEnding, failed: Option<FailureBecause>| {
        if tool_steps {
            crate::reasoning_tools::resumed_ending(run, &tool_history, ending, failed)
        } else {
            ending
        }
    };

    // The last call that answered or failed decides, and nothing is called again; a last
    // call that asked for tools goes on with them.
    if let Some(last) = calls.last()
        && let Some((kind, data)) = &last.ended
        && !(tool_steps && crate::reasoning_tools::asked_for_tools(data))
        && data["because"] != json!(FailureBecause::Interrupted.as_str())
    {
        let prompt = calls
            .first()
            .and_then(|c| Prompt::from_kept(&c.started["messages"]));
        return Ok(match kind.as_str() {
            "model_call_answered" => {
                let answer = answer_from_kept(data);
                let Some(prompt) = prompt else {
                    return Ok(settle(without_content(run, &spending), None));
                };
                settle(
                    finish(
                        run, document, &settings, &prompt, &answer, &calls, &spending,
                    ),
                    None,
                )
            }
            _ if data["because"] == json!(FailureBecause::OutputInvalid.as_str())
                && data["issues"].is_array() =>
            {
                let issues = serde_json::from_value(data["issues"].clone()).unwrap_or_default();
                let detail = data["detail"].as_str().unwrap_or_default();
                settle(output_invalid(run, detail, issues, &spending), None)
            }
            _ => {
                let failure = failure_from_kept(data);
                settle(
                    model_rejection(run, &failure, spending.record(true)),
                    Some(failure.because),
                )
            }
        });
    }

    // The prompt: from the first call's kept messages when the run called before, else the
    // input checked and the template rendered now.
    let prompt = match calls.first() {
        Some(first) => match Prompt::from_kept(&first.started["messages"]) {
            Some(prompt) => prompt,
            None => return Ok(settle(without_content(run, &spending), None)),
        },
        None => match prepare_and_render(run, document).await {
            Ok(prompt) => prompt,
            Err(problem) => return Ok(rejection(problem, &run.run_id)),
        },
    };

    let Ok(model) = document.model.parse::<ModelRef>() else {
        return Ok(rejection(
            Problem::internal(&"a saved reasoning function names no model"),
            &run.run_id,
        ));
    };
    let request = ModelRequest {
        model: model.clone(),
        system: prompt.system.clone(),
        messages: vec![Message::User(prompt.message.clone())],
        settings: settings.clone(),
        output: output_contract(document),
        tools: Vec::new(),
        provider_options: document.provider_options.clone(),
    };
    // "A run checks its tools after it confirms that its model is offered, and before it
    // calls the model. A run whose model is not offered contacts no tool server": that run
    // goes on to the call below, which is refused before anything is sent.
    if !document.tools.is_empty()
        && models.providers.is_allowed(&model)
        && models
            .providers
            .configured()
            .contains(&models.providers.resolve(&model).provider.as_str())
    {
        let step = crate::reasoning_tools::Start {
            models,
            run,
            document,
            prompt: &prompt,
            model: &model,
            settings: &settings,
            token,
            cancel_words,
            tool_history: &tool_history,
        };
        return crate::reasoning_tools::run_with_tools(recorder, step, calls, spending).await;
    }
    let number = calls.iter().map(|c| c.number).max().unwrap_or(0) + 1;
    let messages = prompt.kept();
    let messages_bytes = serde_json::to_vec(&messages).unwrap_or_default();
    let started = json!({
        "number": number,
        "model": model.to_string(),
        "tools_offered": [],
        "messages_bytes": messages_bytes.len(),
        "messages_sha256": sha256_hex(&messages_bytes),
        "messages": if calls.is_empty() { messages } else { Value::Null },
    });
    if let Err(order) = recorder
        .start_call("model_call_started", started.clone())
        .await?
    {
        let ended = calls.iter().any(|c| c.ended.is_some());
        return Ok(cancelled(run, &order, spending.record(ended)));
    }
    let options = CallOptions {
        cancel: token.clone(),
        bound: Some(models.bound(settings.max_output_tokens)),
        retry_backoff: models.retry_backoff,
    };
    let result = models.providers.call(&request, &options).await;
    calls.push(CallRecord {
        number,
        started,
        ended: None,
    });
    match result {
        Ok(answer) => {
            if let Err((detail, issues)) = answer_output(document, &answer) {
                let data = unusable_answer_data(number, &answer, &model.provider, &detail, &issues);
                recorder
                    .record_following("model_call_failed", data.clone(), Some(number))
                    .await?;
                spending.add(&data);
                return Ok(output_invalid(run, &detail, issues, &spending));
            }
            let data = answered_data(number, &answer);
            recorder
                .record_following("model_call_answered", data.clone(), Some(number))
                .await?;
            spending.add(&data);
            if let Some(call) = calls.last_mut() {
                call.ended = Some(("model_call_answered".to_owned(), data));
            }
            Ok(finish(
                run, document, &settings, &prompt, &answer, &calls, &spending,
            ))
        }
        Err(failure) => {
            let data = failed_data(number, &failure);
            recorder
                .record_following("model_call_failed", data.clone(), Some(number))
                .await?;
            spending.add(&data);
            // A call refused before anything was sent spent nothing.
            let sent = was_sent(&failure);
            let ended = sent || calls.iter().rev().skip(1).any(|c| c.ended.is_some());
            if failure.because == FailureBecause::Cancelled {
                let order = cancel_order(cancel_words);
                return Ok(cancelled(run, &order, spending.record(true)));
            }
            Ok(settle(
                model_rejection(run, &failure, spending.record(ended)),
                Some(failure.because),
            ))
        }
    }
}

/// Whether a failed call reached the provider: a model outside the allowed ones, a provider
/// not configured and an option the gateway does not allow are refused before anything is
/// sent, and spend nothing.
pub(crate) fn was_sent(failure: &ModelFailure) -> bool {
    match failure.because {
        FailureBecause::ModelNotAllowed | FailureBecause::ProviderNotConfigured => false,
        FailureBecause::ProviderUnavailable if failure.certificate_untrusted => false,
        FailureBecause::DefinitionInvalid => failure.status.is_some(),
        _ => true,
    }
}

/// Step 1 and 2 of "How a run works": the input and the template.
async fn prepare_and_render(run: &Run, document: &ReasoningDocument) -> Result<Prompt, Problem> {
    let schema = document
        .input_schema
        .as_ref()
        .map(CompiledSchema::compile)
        .transpose()
        .map_err(|e| Problem::internal(&e))?;
    let input = prepare_input(
        Some(&run.input),
        document.input_default.as_ref(),
        schema.as_ref(),
    )
    .map_err(|issues| {
        let issues: Vec<ProblemIssue> = issues
            .into_iter()
            .map(|i| ProblemIssue::field(i.pointer, i.message))
            .collect();
        let detail = issues
            .iter()
            .map(|i| i.message.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        Problem::invalid_input(title(run, "refused its input"), detail).with_issues(issues)
    })?;
    let template = auto_template::parse(&document.template)
        .map_err(|_| Problem::internal(&"a saved template no longer parses"))?;
    let today = run.started_at.format("%Y-%m-%d").to_string();
    let now = run
        .started_at
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let offset = document.template_first_line.saturating_sub(1);
    let rendered = tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let limit = Duration::from_millis(auto_template::RENDER_TIME_MS_MAX);
        let expired = move || started.elapsed() >= limit;
        auto_template::render(
            &template,
            &input,
            &today,
            &now,
            &auto_template::RenderLimits::new(&expired),
        )
    })
    .await
    .map_err(|e| Problem::internal(&e))?;
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

pub(crate) fn answered_data(number: u64, answer: &ModelAnswer) -> Value {
    let response = json!({ "text": answer.text });
    let response_bytes = serde_json::to_vec(&response).unwrap_or_default();
    let mut data = json!({
        "number": number,
        "finish_reason": answer.finish_reason.as_str(),
        "raw_finish_reason": answer.raw_finish_reason,
        "usage": answer.usage,
        "response_id": answer.response_id,
        "duration_ms": answer.duration_ms,
        "request_bytes": answer.request_bytes,
        "response_bytes": answer.response_bytes,
        "resolved_model": answer.resolved_model,
        "answered_model": answer.answered_model,
        "warnings": answer.warnings,
        "tool_calls": [],
        "response_sha256": sha256_hex(&response_bytes),
        "response": response,
    });
    if let Some(cost) = answer.cost_usd {
        data["cost_usd"] = json!(cost);
    }
    data
}

pub(crate) fn failed_data(number: u64, failure: &ModelFailure) -> Value {
    let mut data = json!({
        "number": number,
        "because": failure.because.as_str(),
        "provider": failure.provider,
        "detail": failure.detail,
        "duration_ms": failure.duration_ms,
    });
    if let Some(status) = failure.status {
        data["status"] = json!(status);
    }
    if let Some(usage) = &failure.usage {
        data["usage"] = json!(usage);
    }
    if let Some(cost) = failure.cost_usd {
        data["cost_usd"] = json!(cost);
    }
    if let Some(finish) = failure.finish_reason {
        data["finish_reason"] = json!(finish.as_str());
        data["raw_finish_reason"] = json!(failure.raw_finish_reason);
    }
    if let Some(ms) = failure.retry_after_ms {
        data["retry_after_ms"] = json!(ms);
    }
    if failure.other_providers_configured {
        data["other_providers_configured"] = json!(true);
    }
    if failure.certificate_untrusted {
        data["certificate_untrusted"] = json!(true);
    }
    data
}

/// A finish reason as an event keeps it.
fn finish_reason(text: &Value) -> Option<FinishReason> {
    serde_json::from_value(text.clone()).ok()
}

/// A failed call as its event kept it, for a run that goes on after the server stopped.
fn failure_from_kept(data: &Value) -> ModelFailure {
    let because = serde_json::from_value(data["because"].clone())
        .unwrap_or(FailureBecause::ProviderUnavailable);
    ModelFailure {
        because,
        provider: data["provider"].as_str().unwrap_or_default().to_owned(),
        status: data["status"].as_u64().and_then(|s| u16::try_from(s).ok()),
        detail: data["detail"].as_str().unwrap_or_default().to_owned(),
        retry_after_ms: data["retry_after_ms"].as_u64(),
        usage: None,
        finish_reason: finish_reason(&data["finish_reason"]),
        raw_finish_reason: data["raw_finish_reason"].as_str().map(str::to_owned),
        other_providers_configured: data["other_providers_configured"] == json!(true),
        cost_usd: data["cost_usd"].as_f64(),
        duration_ms: data["duration_ms"].as_u64().unwrap_or(0),
        certificate_untrusted: data["certificate_untrusted"] == json!(true),
    }
}

/// An answered call as its event kept it.
fn answer_from_kept(data: &Value) -> ModelAnswer {
    let text = |key: &str| data[key].as_str().map(str::to_owned);
    ModelAnswer {
        text: data["response"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        tool_calls: Vec::new(),
        finish_reason: finish_reason(&data["finish_reason"]).unwrap_or(FinishReason::Other),
        raw_finish_reason: text("raw_finish_reason"),
        usage: auto_models::Usage::default(),
        response_id: text("response_id"),
        resolved_model: text("resolved_model").unwrap_or_default(),
        answered_model: text("answered_model"),
        warnings: data["warnings"]
            .as_array()
            .map(|w| {
                w.iter()
                    .filter_map(|w| w.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        cost_usd: data["cost_usd"].as_f64(),
        request_bytes: data["request_bytes"].as_u64().unwrap_or(0),
        response_bytes: data["response_bytes"].as_u64().unwrap_or(0),
        duration_ms: data["duration_ms"].as_u64().unwrap_or(0),
    }
}

/// The run's rejection for a model call that failed.
pub(crate) fn model_rejection(
    run: &Run,
    failure: &ModelFailure,
    record: Option<Value>,
) -> RunEnding {
    let decided = rejection_for(failure);
    let reason = match decided.reason {
        RejectionReason::InvalidInput => Reason::InvalidInput,
        RejectionReason::Conflict => Reason::Conflict,
        RejectionReason::Unavailable => Reason::Unavailable,
        RejectionReason::Cancelled => Reason::Cancelled,
    };
    let what = match failure.because {
        FailureBecause::ContentRefused => "was refused by its model",
        FailureBecause::ModelNotAllowed | FailureBecause::ProviderNotConfigured => {
            "cannot use its model"
        }
        FailureBecause::OutputInvalid => "got an answer it cannot use",
        FailureBecause::DefinitionInvalid | FailureBecause::RequestTooLong => {
            "was refused by its provider"
        }
        _ => "could not get an answer from its model",
    };
    let mut problem = Problem::new(reason, title(run, what), decided.detail);
    if let Some(kind) = decided.kind {
        problem = problem.with_kind(match kind {
            RejectionKind::Unworkable => "unworkable",
            RejectionKind::ModelNotOffered => "model_not_offered",
        });
    }
    problem.because = Some(decided.because.as_str().to_owned());
    problem.retry_after_seconds = decided.retry_after_seconds;
    let mut ending = rejection(problem, &run.run_id);
    ending.record = record;
    ending
}

pub(crate) fn cancelled(run: &Run, order: &CancelOrder, record: Option<Value>) -> RunEnding {
    let mut problem = Problem::new(Reason::Cancelled, title(run, "was cancelled"), &order.words)
        .with_kind(&order.kind);
    problem.because = Some("cancelled".into());
    let mut ending = rejection(problem, &run.run_id);
    ending.record = record;
    ending
}

pub(crate) fn without_content(run: &Run, spending: &Spending) -> RunEnding {
    let mut problem = Problem::new(
        Reason::Unavailable,
        title(run, "cannot go on"),
        "The server restarted before the run finished, and the run kept no content to go on from; run it again.",
    );
    problem.because = Some("restarted_without_content".into());
    let mut ending = rejection(problem, &run.run_id);
    ending.record = spending.record(true);
    ending
}

/// The model's JSON answer: the text itself, or inside one Markdown code fence when a
/// provider wraps it so.
fn parse_json_answer(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .map_or(trimmed, str::trim);
    let mut deserializer = serde_json::Deserializer::from_str(unfenced);
    deserializer.disable_recursion_limit();
    let value = serde::Deserialize::deserialize(&mut deserializer)
        .and_then(|v: Value| deserializer.end().map(|()| v))
        .map_err(|e| format!("The answer is not JSON: {e}"))?;
    if depth_exceeds(&value, ANSWER_DEPTH_MAX) {
        return Err("The answer nests deeper than the 128 levels an answer may".into());
    }
    Ok(value)
}

/// "A JSON answer does not match the schema: unavailable, with the first issues: try again",
/// keeping the spending of the calls that ended.
pub(crate) fn output_invalid(
    run: &Run,
    detail: &str,
    issues: Vec<ProblemIssue>,
    spending: &Spending,
) -> RunEnding {
    let mut problem = Problem::new(
        Reason::Unavailable,
        title(run, "got an answer that does not match its schema"),
        format!("{detail}: try again"),
    )
    .with_issues(issues);
    problem.because = Some(FailureBecause::OutputInvalid.as_str().into());
    let mut ending = rejection(problem, &run.run_id);
    ending.record = spending.record(true);
    ending
}

/// `model_call_failed` for an answer the run cannot use because it does not match its
/// schema: the call's spending, the answer as kept, and the issues.
pub(crate) fn unusable_answer_data(
    number: u64,
    answer: &ModelAnswer,
    provider: &str,
    detail: &str,
    issues: &[ProblemIssue],
) -> Value {
    let answered = answered_data(number, answer);
    let mut data = json!({
        "number": number,
        "because": FailureBecause::OutputInvalid.as_str(),
        "provider": provider,
        "detail": detail,
        "duration_ms": answer.duration_ms,
        "usage": answer.usage,
        "finish_reason": answer.finish_reason.as_str(),
        "raw_finish_reason": answer.raw_finish_reason,
        "response_id": answer.response_id,
        "resolved_model": answer.resolved_model,
        "answered_model": answer.answered_model,
        "issues": issues,
        "response_sha256": answered["response_sha256"],
        "response": answered["response"],
    });
    if let Some(cost) = answer.cost_usd {
        data["cost_usd"] = json!(cost);
    }
    data
}

/// Steps 4 and 5: the answer checked, the output and the record.
pub(crate) fn finish(
    run: &Run,
    document: &ReasoningDocument,
    settings: &Settings,
    prompt: &Prompt,
    answer: &ModelAnswer,
    calls: &[CallRecord],
    spending: &Spending,
) -> RunEnding {
    let output = match answer_output(document, answer) {
        Ok(output) => output,
        Err((detail, issues)) => return output_invalid(run, &detail, issues, spending),
    };
    let output_bytes = serde_json::to_vec(&output).map_or(usize::MAX, |b| b.len());
    let requested = calls
        .last()
        .and_then(|c| c.started["model"].as_str())
        .unwrap_or(&document.model)
        .to_owned();
    let mut warnings = answer.warnings.clone();
    warnings.truncate(RECORD_WARNINGS_MAX);
    let mut record = json!({
        "model": {
            "requested": requested,
            "resolved": answer.resolved_model,
            "answered": answer.answered_model,
        },
        "settings": settings_record(settings),
        "output_format": document.output_format,
        "finish_reason": answer.finish_reason.as_str(),
        "raw_finish_reason": answer.raw_finish_reason,
        "usage": spending.usage.clone().map_or(Value::Null, Value::Object),
        "response_id": answer.response_id,
        "warnings": warnings,
        "duration_ms": spending.duration_ms,
        "prompt": {
            "instructions": prompt.system,
            "message": prompt.message,
            "truncated": false,
        },
    });
    if let Some(cost) = spending.cost_usd {
        record["cost_usd"] = json!(cost);
    }
    let record_bytes = serde_json::to_vec(&record).map_or(usize::MAX, |b| b.len());
    if output_bytes.saturating_add(record_bytes) > OUTPUT_AND_RECORD_BYTES_MAX {
        let without_prompt =
            record_bytes - serde_json::to_vec(&record["prompt"]).map_or(0, |b| b.len());
        // The room left for the prompt, less the keys and quotes around it.
        let room = OUTPUT_AND_RECORD_BYTES_MAX
            .saturating_sub(output_bytes)
            .saturating_sub(without_prompt)
            .saturating_sub(128);
        if output_bytes > OUTPUT_BYTES_MAX || room == 0 {
            let problem = Problem::conflict(
                title(run, "got an answer too large to record"),
                format!(
                    "The answer holds {output_bytes} bytes as JSON; with the run's record a run keeps at most 1 MiB: lower config.max_output_tokens."
                ),
            )
            .with_kind("unworkable");
            let mut ending = rejection(problem, &run.run_id);
            ending.record = spending.record(true);
            return ending;
        }
        record["prompt"] = truncated_prompt(prompt, room);
    }
    RunEnding {
        status: RunStatus::Succeeded,
        output: Some(output),
        record: Some(record),
        problem: None,
    }
}

/// The start of the instructions and of the message within `room` bytes of JSON, each cut at
/// a character boundary, with `truncated: true`.
fn truncated_prompt(prompt: &Prompt, room: usize) -> Value {
    let system = prompt.system.as_deref().unwrap_or_default();
    let total = system.len() + prompt.message.len();
    // JSON escapes may grow a text up to six times; leave room for the worst.
    let budget = room / 6;
    let share = |text: &str| -> String {
        let keep = (budget * text.len()).checked_div(total).unwrap_or(0);
        let mut end = keep.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text[..end].to_owned()
    };
    json!({
        "instructions": prompt.system.as_ref().map(|s| share(s)),
        "message": share(&prompt.message),
        "truncated": true,
    })
}

pub(crate) fn answer_output(
    document: &ReasoningDocument,
    answer: &ModelAnswer,
) -> Result<Value, (String, Vec<ProblemIssue>)> {
    if document.output_format != "json" {
        return Ok(Value::String(answer.text.clone()));
    }
    let value = parse_json_answer(&answer.text)
        .map_err(|words| (words.clone(), vec![ProblemIssue::field("/output", words)]))?;
    let issues: Vec<ValidationIssue> = match (&document.output_shape, &document.output_schema) {
        (Some(shape), _) => check_shape(shape, &value),
        (None, Some(schema)) => match CompiledSchema::compile(schema) {
            Ok(compiled) => compiled.validate(&value),
            Err(error) => {
                return Err((
                    format!("The output schema cannot be used: {error}"),
                    Vec::new(),
                ));
            }
        },
        (None, None) => Vec::new(),
    };
    if issues.is_empty() {
        return Ok(auto_schema::shape_output(
            document.output_shape.as_deref(),
            value,
        ));
    }
    let messages = render_answer_issues(&issues);
    let found = issues
        .iter()
        .map(|issue| (format!("/output{}", issue.pointer), issue.answer_message()))
        .collect();
    let problem_issues = auto_schema::shown_issues(found, "/output")
        .into_iter()
        .map(|(pointer, message)| ProblemIssue::field(pointer, message))
        .collect();
    Err((
        format!(
            "The model's answer does not match the output schema ({})",
            messages.join("; ")
        ),
        problem_issues,
    ))
}

/// Ends a run that is not going on anywhere as cancelled, closing a call left open.
pub(crate) async fn cancel_idle(
    store: &dyn Store,
    pb: &PlaybookRef,
    run: &Run,
    order: &CancelOrder,
) -> Result<(RunEnding, i64), Stopped> {
    let history = read_history(store, pb, run).await?;
    let mut recorder = Recorder {
        store,
        pb,
        run,
        next_seq: run.last_run_seq + 1,
        cancel_seen: None,
    };
    let mut calls = history.calls;
    recorder.close_open_call(&mut calls).await?;
    let spending = Spending::of(&calls);
    let ended = calls.iter().any(|c| c.ended.is_some());
    Ok((
        cancelled(run, order, spending.record(ended)),
        recorder.next_seq,
    ))
}

/// Records that a cancel was asked of a run going on elsewhere: it stops before its next model
/// call.
pub(crate) async fn request_cancel(
    store: &dyn Store,
    pb: &PlaybookRef,
    run: &Run,
    order: &CancelOrder,
) -> Result<(), Stopped> {
    let mut recorder = Recorder {
        store,
        pb,
        run,
        next_seq: run.last_run_seq + 1,
        cancel_seen: None,
    };
    recorder
        .record_following(
            "run_cancel_requested",
            json!({ "detail": order.words, "kind": order.kind }),
            None,
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

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
