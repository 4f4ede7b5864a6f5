//! The functional core of a workflow's run (DESIGN §4, "A workflow's run: a deterministic
//! state machine"): `(state, input, time) -> (state, commands, events, ending)`.
//!
//! It does no I/O, reads no clock and starts no task: [`start`] and [`apply`] take the time the
//! shell recorded for the input, run every branch that can go on until each waits or ends, and
//! hand back the new snapshot ([`RunState`], serde JSON the shell stores as it is), the work the
//! shell enqueues ([`Command`]: child runs, timers, cancels), the step events of the run's
//! history and, when the run ended, its [`Ending`]. The same inputs give the same step: every
//! id is derived from the run id, the task's reference and a count of that task's attempts, and
//! expressions see `now_ms`, never a clock.
//!
//! The snapshot is the task tree: each task list under way is a [`Frame`] (position, data,
//! loop and catch names), each task under way a `TaskRun` holding what its kind waits for (a
//! call, a timer, a retry's delay, the branches of a fork). An input marks the leaf it is for
//! (a call's ending, a timer that fired) and the whole tree is driven again from its root;
//! what does not wait goes on, what waits stays.
//!
//! Ids, for the shell's records: a call's `call_id` is `call:<reference>#<n>` and its
//! `child_run_id` is the parent's run id (hashed when longer than 96 bytes or outside the run
//! id rule), a dot and 24 hex digits of the parent id, the reference and `n`; `n` counts the
//! times that task started a call in the run (its attempts and iterations). A timer's id is
//! `<purpose>:<reference>#<n>`, the purpose one of `wait`, `retry` (a retry's delay),
//! `attempt` (`limit.attempt.duration`), `timeout` (a task's) and `call` (a call's wait);
//! the document's timeout is `timeout:/`.
//!
//! Events: an event sent to the run comes in as [`Input::EventReceived`] and is kept in the
//! snapshot until a `listen` task takes it (module `events`); an `emit` task hands the shell
//! [`Command::EmitEvent`], which it records in the playbook with the step. An emitted event's
//! id is `<run id>.emit.<24 hex digits of the run id, the reference and n>`, `n` counting the
//! task's emits in the run, so a step taken again emits the same id.
//!
//! Additions to the interface the shell was promised, each documented where it is declared:
//! [`RunInfo::new`] and the fields `functions_ms`, `function_default_ms` and `run_duration_ms`
//! (the call waits settled at the start, and the longest a run may last);
//! `CallOutcome::Rejected` also takes a problem whose reason is `failed` (a runtime error of
//! status 500), and one without a title for a child that could not be reached (`unavailable`,
//! communication 503, under the page's own title).

mod errors;
mod eval;
pub(crate) mod events;
pub(crate) mod ids;
mod run;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};

use auto_doc::{Issue, YamlConfig, read_yaml};
use auto_problem::Problem;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::{SwitchCase, TaskKind, TaskList, WorkflowDocument};
use super::{RUN_DURATION_MS_DEFAULT, WorkflowLimits, check_workflow};

pub use errors::{
    ERROR_TYPE_BASE, OUTPUT_BYTES_MAX, PROBLEM_TYPE_BASE, WorkflowError, call_error, rejection,
};
pub use events::{
    EMITTED_EVENT_BYTES_MAX, EVENTS_EMITTED_BYTES_MAX, EVENTS_EMITTED_MAX,
    EVENTS_RECEIVED_BYTES_MAX, EVENTS_RECEIVED_MAX, EVENTS_WAITING_BYTES_MAX, EVENTS_WAITING_MAX,
    EventBook,
};
pub use run::{
    CALL_INPUT_BYTES_MAX, DATA_HELD_BYTES_MAX, Frame, HISTORY_BYTES_MAX, INPUTS_MAX,
    KEPT_ACROSS_WAIT_BYTES_MAX, OVERRUN_TIMER_ID, TASK_HELD_BYTES, TASKS_WITHOUT_WAITING_MAX,
};

/// "A task waits for the longest its definition's run may take, plus one minute."
pub const CALL_WAIT_MARGIN_MS: u64 = 60_000;

/// A checked workflow, ready to run: the typed document and the raw JSON of the source.
#[derive(Clone, Debug)]
pub struct Workflow {
    document: WorkflowDocument,
    raw: Value,
    index: Index,
    source_bytes: usize,
}

impl Workflow {
    /// Reads and checks `source` (with the default limits) and indexes its tasks.
    pub fn from_source(source: &str) -> Result<Workflow, Vec<Issue>> {
        Self::from_source_with(source, &WorkflowLimits::default())
    }

    /// Addition: as [`Workflow::from_source`], with the deployment's limits (a
    /// `WORKFLOW_MAX_DURATION` longer than 30 days lets durations that long through).
    pub fn from_source_with(source: &str, limits: &WorkflowLimits) -> Result<Workflow, Vec<Issue>> {
        let document = check_workflow(source, limits, None)?;
        let raw = read_yaml(source, &YamlConfig::workflow())
            .document
            .value()
            .clone();
        let mut index = Index::default();
        index.add_list(&document.tasks, "");
        for info in index.tasks.values_mut() {
            info.path = node_path(&raw, &info.pointer);
        }
        Ok(Workflow {
            document,
            raw,
            index,
            source_bytes: source.len(),
        })
    }

    pub fn document(&self) -> &WorkflowDocument {
        &self.document
    }

    fn raw(&self, pointer: &str) -> Option<&Value> {
        resolve(&self.raw, pointer)
    }

    /// The field `field` (a pointer below the task, such as `with` or `output/as`, whose
    /// names hold no `~` or `/`) of the task `info`: found from the task's own node, which
    /// the index found once, rather than by its whole pointer, made and parsed again.
    fn field(&self, info: &TaskInfo, field: &str) -> Option<&Value> {
        let node = match &info.path {
            Some(path) => follow(&self.raw, path)?,
            None => resolve(&self.raw, &info.pointer)?,
        };
        field
            .split('/')
            .try_fold(node, |node, name| node.as_object()?.get(name))
    }

    fn task(&self, pointer: &str) -> &TaskInfo {
        &self.index.tasks[pointer]
    }

    fn list(&self, pointer: &str) -> &[String] {
        self.index.lists.get(pointer).map_or(&[], Vec::as_slice)
    }
}

/// The value at a JSON pointer (RFC 6901) in `root`, as `Value::pointer` finds it, without
/// its two allocations a token: a step looks up each of its task's fields by pointer, and
/// tokens with no `~` to unescape, nearly all, are compared where they stand.
fn resolve<'a>(root: &'a Value, pointer: &str) -> Option<&'a Value> {
    if pointer.is_empty() {
        return Some(root);
    }
    let tokens = pointer.strip_prefix('/')?;
    tokens.split('/').try_fold(root, |node, token| {
        let token: std::borrow::Cow<'_, str> = if token.contains('~') {
            token.replace("~1", "/").replace("~0", "~").into()
        } else {
            token.into()
        };
        match node {
            Value::Object(map) => map.get(token.as_ref()),
            Value::Array(items) => {
                let index = token.as_ref();
                // As RFC 6901 reads an index: digits, no leading zero but `0` itself.
                if index.is_empty()
                    || !index.bytes().all(|b| b.is_ascii_digit())
                    || (index.len() > 1 && index.starts_with('0'))
                {
                    return None;
                }
                items.get(index.parse::<usize>().ok()?)
            }
            _ => None,
        }
    })
}

/// Where the node at `pointer` is in `root`: at each level its position, in an array or in a
/// map's order; `None` when the pointer does not resolve.
fn node_path(root: &Value, pointer: &str) -> Option<Vec<usize>> {
    let mut path = Vec::new();
    let mut node = root;
    for token in pointer.strip_prefix('/')?.split('/') {
        // The token as `resolve` reads it (unescaped, an index by RFC 6901's rule), one level.
        let next = resolve(node, &["/", token].concat())?;
        let position = match node {
            Value::Object(map) => map.values().position(|value| std::ptr::eq(value, next))?,
            Value::Array(items) => items.iter().position(|value| std::ptr::eq(value, next))?,
            _ => return None,
        };
        path.push(position);
        node = next;
    }
    Some(path)
}

/// The node a [`node_path`] leads to.
fn follow<'a>(root: &'a Value, path: &[usize]) -> Option<&'a Value> {
    path.iter().try_fold(root, |node, &position| match node {
        Value::Object(map) => map.values().nth(position),
        Value::Array(items) => items.get(position),
        _ => None,
    })
}

/// Every task list and task of the document by pointer.
#[derive(Clone, Debug, Default)]
struct Index {
    /// A list's pointer -> its tasks' pointers, in order.
    lists: HashMap<String, Vec<String>>,
    tasks: HashMap<String, TaskInfo>,
}

#[derive(Clone, Debug)]
struct TaskInfo {
    name: String,
    pointer: String,
    /// Where the task's node is in the raw document ([`node_path`]).
    path: Option<Vec<usize>>,
    then: Option<String>,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Call {
        def_type: Option<String>,
        def_name: Option<String>,
    },
    Set,
    Do(String),
    Switch(Vec<SwitchCase>),
    For {
        each: String,
        at: String,
        list: String,
    },
    Fork {
        list: String,
        compete: bool,
    },
    Try {
        list: String,
        recovery: Option<String>,
    },
    Raise,
    Wait,
    Listen,
    Emit,
}

impl Index {
    fn add_list(&mut self, list: &TaskList, _parent: &str) {
        let pointers = list.tasks.iter().map(|t| t.pointer.clone()).collect();
        self.lists.insert(list.pointer.clone(), pointers);
        for task in &list.tasks {
            let kind = match &task.kind {
                TaskKind::Call { def_type, def_name } => Kind::Call {
                    def_type: def_type.clone(),
                    def_name: def_name.clone(),
                },
                TaskKind::Set => Kind::Set,
                TaskKind::Do { tasks } => {
                    self.add_list(tasks, &task.pointer);
                    Kind::Do(tasks.pointer.clone())
                }
                TaskKind::Switch { cases } => Kind::Switch(cases.clone()),
                TaskKind::For { each, at, tasks } => {
                    self.add_list(tasks, &task.pointer);
                    Kind::For {
                        each: format!("${each}"),
                        at: format!("${at}"),
                        list: tasks.pointer.clone(),
                    }
                }
                TaskKind::Fork { branches, compete } => {
                    self.add_list(branches, &task.pointer);
                    Kind::Fork {
                        list: branches.pointer.clone(),
                        compete: *compete,
                    }
                }
                TaskKind::Try {
                    tasks, recovery, ..
                } => {
                    self.add_list(tasks, &task.pointer);
                    if let Some(recovery) = recovery {
                        self.add_list(recovery, &task.pointer);
                    }
                    Kind::Try {
                        list: tasks.pointer.clone(),
                        recovery: recovery.as_ref().map(|r| r.pointer.clone()),
                    }
                }
                TaskKind::Raise { .. } => Kind::Raise,
                TaskKind::Wait => Kind::Wait,
                TaskKind::Listen => Kind::Listen,
                TaskKind::Emit { .. } => Kind::Emit,
            };
            self.tasks.insert(
                task.pointer.clone(),
                TaskInfo {
                    name: task.name.clone(),
                    pointer: task.pointer.clone(),
                    path: None,
                    then: task.then.clone(),
                    kind,
                },
            );
        }
    }
}

/// Who the run is, for `$workflow` and for derived ids, and what its start settles.
#[derive(Clone, Debug, PartialEq)]
pub struct RunInfo {
    pub run_id: String,
    /// `{type: "workflow", name, version}`.
    pub definition: Value,
    pub started_at_ms: i64,
    /// Addition: the function's own maximum ("Calling a function", the table), in ms, of each
    /// `type/name` the shell knows when the run starts. The engine adds the minute. Read at
    /// [`start`] only: "The wait is settled when the workflow starts".
    pub functions_ms: BTreeMap<String, u64>,
    /// Addition: "the longest run of any function other than a workflow", for a task whose
    /// type or name is an expression or names a definition missing from `functions_ms`.
    pub function_default_ms: u64,
    /// Addition: the longest a run may last (`WORKFLOW_MAX_DURATION`, 30 days by default); a
    /// called workflow's maximum, and the bound of every wait.
    pub run_duration_ms: u64,
}

impl RunInfo {
    /// A run with the default limits: 30 days for a run, and as much for any function.
    pub fn new(run_id: impl Into<String>, definition: Value, started_at_ms: i64) -> Self {
        Self {
            run_id: run_id.into(),
            definition,
            started_at_ms,
            functions_ms: BTreeMap::new(),
            function_default_ms: RUN_DURATION_MS_DEFAULT,
            run_duration_ms: RUN_DURATION_MS_DEFAULT,
        }
    }
}

/// The snapshot the shell stores between steps (serde JSON, opaque to the shell).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// The top task list and everything under way beneath it.
    root: Frame,
    /// `$context`.
    context: Value,
    /// `$workflow.input`: the run's input before `input.from`.
    workflow_input: Value,
    /// The run's input after `input.from`: `$input` of the document's `output.as`.
    run_input: Value,
    /// How many times each purpose at each reference was counted (call, wait, retry, timeout):
    /// the attempt part of every derived id.
    counters: BTreeMap<String, u32>,
    /// The waits settled at the start: `type/name` -> the function's own maximum.
    functions_ms: BTreeMap<String, u64>,
    function_default_ms: u64,
    /// The latest a task may wait: the start plus the longest a run may last.
    run_deadline_ms: i64,
    /// The document's timeout: when it falls due, and its timer once set.
    run_timeout_due_ms: Option<i64>,
    run_timer: Option<String>,
    /// Inputs taken: the start, and each call's ending, timer and event the run waited for.
    #[serde(default)]
    inputs: u32,
    /// The step events recorded over the run's life, as JSON ([`HISTORY_BYTES_MAX`]).
    #[serde(default)]
    history_bytes: u64,
    /// The events sent to the run and kept for its listening tasks, and those it emitted.
    #[serde(default)]
    events: EventBook,
    ended: bool,
}

impl RunState {
    /// Whether the run has ended; an ended run takes no more inputs.
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// The events sent to the run and not taken yet.
    pub fn events_waiting(&self) -> usize {
        self.events.waiting()
    }

    /// The snapshot as JSON text, for the shell to store.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A stored snapshot. Use this rather than `serde_json::from_str`: a snapshot nests deeper
    /// than serde_json's default limit of 128 (64 task lists, each a few levels, around values
    /// of up to 512 levels), so the limit is lifted here; what it holds was bounded when it
    /// was made.
    pub fn from_json(text: &str) -> Result<RunState, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        deserializer.disable_recursion_limit();
        let state = RunState::deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(state)
    }
}

/// An input of a run after its start. Serialised as the shell keeps it until it is applied:
/// an object whose `input` names the variant (`{"input": "timer", "timer_id": ...}`), the
/// form runs waiting since earlier versions hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "input", rename_all = "snake_case")]
pub enum Input {
    Start {
        #[serde(rename = "value")]
        input: Value,
    },
    CallEnded {
        call_id: String,
        outcome: CallOutcome,
    },
    #[serde(rename = "timer")]
    TimerFired { timer_id: String },
    /// `cancel_run`, or the workflow waiting for this run: `kind` is `requested` when `None`,
    /// otherwise the kind the canceller gives (`parent_ended`, `deadline`).
    Cancel {
        #[serde(default)]
        detail: String,
        #[serde(default)]
        kind: Option<String>,
    },
    /// Addition: an event sent to the run (`send_run_event`), as CloudEvents JSON with at
    /// least `id`, `type`, `source` and `time`. One whose id the run received before changes
    /// nothing.
    #[serde(rename = "event")]
    EventReceived { event: Value },
    /// Addition: an event of the playbook that a filter with a written type of a listening
    /// task matched, heard without the run ("Waiting for events"). It reaches the run only
    /// while the task listens: a listening task takes it in this step, or the run lets it
    /// pass, never keeping it for a later task nor counting it among the events it received.
    #[serde(rename = "heard")]
    EventHeard { event: Value },
}

/// How a child run ended: serialised as `{"output": ...}` or `{"problem": ...}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CallOutcome {
    Succeeded {
        output: Value,
    },
    /// The child's problem document: reason, kind, because, title, detail, issues, status. A
    /// reason of `failed` raises a runtime error 500.
    Rejected {
        problem: Problem,
    },
}

/// Work for the shell to enqueue with the step's commit. Serialised as `{"start_call": {...}}`,
/// a variant's name in snake case around its fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Start (or find, by its id) a child run and report its end as Input::CallEnded.
    /// `wait_ms` is the task's wait; the engine also sets a timer for it.
    StartCall {
        call_id: String,
        child_run_id: String,
        #[serde(rename = "type")]
        def_type: String,
        name: String,
        input: Value,
        wait_ms: u64,
    },
    /// Stop waiting for a child and cancel it with this kind (deadline, parent_ended).
    CancelCall {
        call_id: String,
        child_run_id: String,
        kind: String,
    },
    /// Deliver Input::TimerFired { timer_id } at due_ms (epoch ms) or later.
    SetTimer {
        timer_id: String,
        due_ms: i64,
    },
    CancelTimer {
        timer_id: String,
    },
    /// Addition: record this event in the playbook with the step, as `publish_event` would
    /// (CloudEvents JSON: `specversion`, `id`, `type`, `source`, `time`, and what the task
    /// gave). Nothing comes back.
    EmitEvent {
        event: Value,
    },
}

/// One step event for the run's history.
#[derive(Clone, Debug, PartialEq)]
pub struct StepEvent {
    pub event_type: String,
    /// At least `name` and `reference`; `output` or `error` where they apply.
    pub data: Value,
}

/// How the run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Ending {
    Succeeded {
        output: Value,
    },
    /// A problem document: type, title, status, reason, kind, because, detail, issues.
    Rejected {
        problem: Problem,
    },
}

/// What one input did.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub state: RunState,
    pub commands: Vec<Command>,
    pub events: Vec<StepEvent>,
    pub ending: Option<Ending>,
}

/// Starts a run with its input at `now_ms`.
/// The listen tasks under way in a run's snapshot whose filters hear the playbook's events
/// ("A filter whose type is written out ... also hears the events of the whole playbook"):
/// each task's reference with those filters, in document order. A shell compares the lists
/// before and after a step to know which tasks began and stopped listening.
pub fn listening(workflow: &Workflow, state: &RunState) -> Vec<(String, Vec<Value>)> {
    let mut pointers = Vec::new();
    if !state.ended {
        run::listening_pointers(&state.root, &mut pointers);
    }
    pointers
        .into_iter()
        .filter_map(|pointer| {
            let to = workflow.raw(&format!("{pointer}/listen/to"))?;
            let mut filters = Vec::new();
            for list in ["one", "any", "all"] {
                let found: Vec<&Value> = match to.get(list) {
                    Some(Value::Array(items)) => items.iter().collect(),
                    Some(one @ Value::Object(_)) => vec![one],
                    _ => Vec::new(),
                };
                for filter in found {
                    let with = filter.get("with").and_then(Value::as_object);
                    if with.is_some_and(|with| super::filters::written_type(with).is_some()) {
                        filters.push(Value::Object(with.cloned().unwrap_or_default()));
                    }
                }
            }
            (!filters.is_empty()).then_some((pointer, filters))
        })
        .collect()
}

pub fn start(workflow: &Workflow, info: &RunInfo, input: Value, now_ms: i64) -> Step {
    run::start(workflow, info, input, now_ms)
}

/// Applies one input to a run's snapshot. An input for a run that ended, for a call or a timer
/// the run no longer waits for, changes nothing. `Input::Start` on a snapshot changes nothing.
pub fn apply(
    workflow: &Workflow,
    info: &RunInfo,
    state: RunState,
    input: Input,
    now_ms: i64,
) -> Step {
    run::apply(workflow, info, state, input, now_ms)
}
