//! The task tree and its driver: every task kind of this slice, flow, data between tasks,
//! catches and retries, timeouts, calls and forks.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use auto_problem::{Problem, ProblemIssue, Reason};
use auto_script::InputBudget;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::super::CALLABLE_TYPES;
use super::errors::{OUTPUT_BYTES_MAX, WorkflowError, call_error, problem, rejection};
use super::eval::{TaskVar, Vars};
use super::events::{EventBook, Listening, Receipt};
use super::{
    CALL_WAIT_MARGIN_MS, CallOutcome, Command, Ending, Input, Kind, RunInfo, RunState, Step,
    StepEvent, TaskInfo, Workflow, ids,
};
use crate::definitions::check_name;

mod attempts;
mod calls;
mod step;
mod tree;

#[cfg(test)]
pub(super) use step::events_bytes;
pub(super) use step::{apply, start};
use tree::*;

/// "Tasks without waiting: 10,000" (workflow page, "Limits"): past this, one input ends the
/// run at once, rejected as unavailable with a runtime error of status 500.
pub const TASKS_WITHOUT_WAITING_MAX: u32 = 10_000;
/// "Input of a run, or of a call: 256 KiB as JSON".
pub const CALL_INPUT_BYTES_MAX: usize = 256 * 1024;
/// "Data a run holds at once: 4 MiB: its values as JSON, the document, and 4 KiB a task under
/// way" (workflow page, "Limits"): past this, the run ends at once, rejected as unavailable
/// with a runtime error of status 500. The engine counts its whole snapshot as the values.
pub const DATA_HELD_BYTES_MAX: usize = 4 * 1024 * 1024;
/// What each task under way counts towards [`DATA_HELD_BYTES_MAX`].
pub const TASK_HELD_BYTES: usize = 4 * 1024;
/// "Inputs a run takes: 100,000: its start, each answer of a function, each timer and each
/// event" (workflow page, "Limits"): one more ends the run at once, rejected as unavailable
/// with a runtime error of status 500.
pub const INPUTS_MAX: u32 = 100_000;
/// "One value kept across a wait: 1,572,864 bytes (1.5 MiB) as JSON, less the rest of its
/// recorded change": what a step that leaves the run waiting records (the snapshot it keeps
/// and the step's events) must fit in this; past it the run ends at once, rejected as
/// unavailable with a runtime error of status 500.
pub const KEPT_ACROSS_WAIT_BYTES_MAX: usize = 1_572_864;
/// "Recorded history of a run: 512 MiB as JSON": the step events a run records over its life;
/// a step that would pass it ends the run the same way.
pub const HISTORY_BYTES_MAX: u64 = 512 * 1024 * 1024;
/// The id of the document's timeout timer.
const RUN_TIMER: &str = "timeout:/";
/// The timer of the longest a run may last (`WORKFLOW_MAX_DURATION`), set at its start.
pub const OVERRUN_TIMER_ID: &str = "overrun:/";

/// The pointers of the listen tasks under way beneath a frame.
pub(super) fn listening_pointers(frame: &Frame, out: &mut Vec<String>) {
    let Some(task) = &frame.task else { return };
    match &task.body {
        Body::Listen { .. } => out.push(task.pointer.clone()),
        Body::Do { frame } => listening_pointers(frame, out),
        Body::For {
            frame: Some(frame), ..
        } => listening_pointers(frame, out),
        Body::Try { phase, .. } => match phase {
            TryPhase::Trying { frame } | TryPhase::Recovering { frame } => {
                listening_pointers(frame, out);
            }
            TryPhase::Delay { .. } => {}
        },
        Body::Fork { branches } => {
            for branch in branches {
                if let Branch::Running { frame } = branch {
                    listening_pointers(frame, out);
                }
            }
        }
        Body::For { frame: None, .. } | Body::Call { .. } | Body::Wait { .. } => {}
    }
}

/// A task list under way: where it is, the data handed to its current task, the loop and
/// catch names its tasks see, and the task under way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    list: String,
    index: usize,
    data: Value,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    locals: Vec<(String, Value)>,
    /// A fork's branch: the one task at `index`, then the branch ends.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    single: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task: Option<Box<TaskRun>>,
}

impl Frame {
    fn new(list: &str, data: Value, locals: Vec<(String, Value)>) -> Self {
        Self {
            list: list.to_owned(),
            index: 0,
            data,
            locals,
            single: false,
            task: None,
        }
    }
}

/// A task under way.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct TaskRun {
    pointer: String,
    /// Its input after input.from (`$input`); none when it has no input.from, and its input
    /// is what it was handed, the data of its list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input: Option<Value>,
    started_at_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_due_ms: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout_timer: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    timed_out: bool,
    body: Body,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Body {
    Do {
        frame: Frame,
    },
    For {
        items: Vec<Value>,
        next: usize,
        data: Value,
        frame: Option<Frame>,
    },
    Try {
        /// Retries made so far.
        retries: u32,
        first_ms: i64,
        phase: TryPhase,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        attempt_timer: Option<String>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        attempt_timed_out: bool,
    },
    Fork {
        branches: Vec<Branch>,
    },
    Call {
        call_id: String,
        child_run_id: String,
        def_type: String,
        name: String,
        wait_timer: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delivered: Option<Delivered>,
    },
    Wait {
        timer_id: String,
        fired: bool,
    },
    Listen {
        listening: Listening,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "snake_case")]
enum TryPhase {
    Trying { frame: Frame },
    Delay { timer_id: String, fired: bool },
    Recovering { frame: Frame },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
enum Branch {
    Running { frame: Frame },
    Done { output: Value },
    Failed { error: WorkflowError },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
enum Delivered {
    Output { output: Value },
    Problem { problem: Problem },
    TimedOut,
}

/// How a task list stopped driving.
enum Flow {
    Waiting,
    /// It ran past its last task (or a branch's one task).
    Finished(Value),
    /// `then: exit`.
    Exited(Value),
    /// `then: end`: the run ends with this output.
    End(Value),
    Raised(WorkflowError),
    /// A limit that ends the run at once; no catch takes it.
    Abort(WorkflowError),
}

/// How a task stopped driving.
pub(super) enum TaskEnd {
    Waiting,
    /// Its output, and the `then` a switch's case chose.
    Done(Value, Option<String>),
    End(Value),
    Raised(WorkflowError),
    Abort(WorkflowError),
}

impl From<Flow> for TaskEnd {
    fn from(flow: Flow) -> Self {
        match flow {
            Flow::Waiting => TaskEnd::Waiting,
            Flow::Finished(v) | Flow::Exited(v) => TaskEnd::Done(v, None),
            Flow::End(v) => TaskEnd::End(v),
            Flow::Raised(e) => TaskEnd::Raised(e),
            Flow::Abort(e) => TaskEnd::Abort(e),
        }
    }
}

/// One input's work: the run's variables, the input's expression budget, and what it emits.
pub(super) struct Engine<'a> {
    pub wf: &'a Workflow,
    pub info: &'a RunInfo,
    pub now_ms: i64,
    pub budget: InputBudget,
    pub context: Value,
    /// The run's input, for `$workflow`.
    pub(super) workflow_input: Value,
    /// `$workflow`, made the first time an expression names it: most never do, and it holds
    /// the whole definition.
    pub(super) workflow_var: OnceCell<Value>,
    pub run_duration_ms: u64,
    counters: BTreeMap<String, u32>,
    functions_ms: BTreeMap<String, u64>,
    function_default_ms: u64,
    run_deadline_ms: i64,
    pub(super) commands: Vec<Command>,
    events: Vec<StepEvent>,
    tasks_started: u32,
    /// The events sent to the run and emitted by it.
    pub(super) book: EventBook,
    /// The id of the playbook's event heard in this step ([`Input::EventHeard`]): let pass
    /// when no listening task took it.
    heard: Option<String>,
}

fn workflow_name(wf: &Workflow, info: &RunInfo) -> String {
    info.definition
        .get("name")
        .and_then(Value::as_str)
        .map_or_else(|| wf.document.name.clone(), str::to_owned)
}

impl<'a> Engine<'a> {
    fn new(wf: &'a Workflow, info: &'a RunInfo, state: &RunState, now_ms: i64) -> Self {
        Self {
            wf,
            info,
            now_ms,
            budget: InputBudget::new(),
            context: state.context.clone(),
            workflow_input: state.workflow_input.clone(),
            workflow_var: OnceCell::new(),
            run_duration_ms: info.run_duration_ms,
            counters: state.counters.clone(),
            functions_ms: state.functions_ms.clone(),
            function_default_ms: state.function_default_ms,
            run_deadline_ms: state.run_deadline_ms,
            commands: Vec::new(),
            events: Vec::new(),
            tasks_started: 0,
            book: state.events.clone(),
            heard: None,
        }
    }

    pub(super) fn count(&mut self, purpose: &str, pointer: &str) -> u32 {
        let n = self
            .counters
            .entry(format!("{purpose}:{pointer}"))
            .or_insert(0);
        *n += 1;
        *n
    }

    pub(super) fn event(&mut self, event_type: &str, info: &TaskInfo, extra: Value) {
        let mut data = json!({ "name": info.name, "reference": info.pointer });
        if let Value::Object(extra) = extra {
            for (key, value) in extra {
                data[key] = value;
            }
        }
        self.events.push(StepEvent {
            event_type: event_type.to_owned(),
            data,
        });
    }

    fn set_timer(&mut self, purpose: &str, pointer: &str, due_ms: i64) -> String {
        let n = self.count(purpose, pointer);
        let timer_id = ids::timer_id(purpose, pointer, n);
        self.commands.push(Command::SetTimer {
            timer_id: timer_id.clone(),
            due_ms,
        });
        timer_id
    }

    fn cancel_timer(&mut self, timer_id: &str) {
        self.commands.push(Command::CancelTimer {
            timer_id: timer_id.to_owned(),
        });
    }

    // ---- task lists ----

    fn drive_list(&mut self, frame: &mut Frame) -> Flow {
        let wf = self.wf;
        loop {
            let tasks = wf.list(&frame.list);
            if frame.task.is_none() {
                if frame.index >= tasks.len() {
                    return Flow::Finished(frame.data.clone());
                }
                let info = wf.task(&tasks[frame.index]);
                self.tasks_started += 1;
                if self.tasks_started > TASKS_WITHOUT_WAITING_MAX {
                    let error = WorkflowError::runtime(
                        "The run went through 10,000 tasks without waiting, the most one input may run.",
                    );
                    return Flow::Abort(error.at(&info.pointer, &info.name));
                }
                let raw = frame.data.clone();
                let vars_task = TaskVar {
                    pointer: &info.pointer,
                    input: &raw,
                    started_at_ms: self.now_ms,
                    output: None,
                };
                if let Some(condition) = wf.field(info, "if") {
                    let vars = Vars {
                        data: Some(&raw),
                        task: Some(vars_task),
                        locals: &frame.locals,
                        ..Vars::default()
                    };
                    match self.condition(condition, &vars) {
                        Ok(true) => {}
                        Ok(false) => {
                            if frame.single {
                                return Flow::Finished(raw);
                            }
                            frame.index += 1;
                            continue;
                        }
                        Err(error) => {
                            let error = error.at(&info.pointer, &info.name);
                            self.event("step_failed", info, json!({ "error": error.to_value() }));
                            return Flow::Raised(error);
                        }
                    }
                }
                self.event("step_started", info, json!({}));
                match self.start_task(info, raw, &frame.locals) {
                    Ok(Started::Now(end, input)) => {
                        let now = self.now_ms;
                        if let Some(flow) = self.after_task(frame, info, end, input, now) {
                            return flow;
                        }
                        continue;
                    }
                    Ok(Started::Running(run)) => frame.task = Some(run),
                    Err(error) => {
                        let error = error.at(&info.pointer, &info.name);
                        self.event("step_failed", info, json!({ "error": error.to_value() }));
                        return Flow::Raised(error);
                    }
                }
            }
            let Some(mut run) = frame.task.take() else {
                continue;
            };
            let info = wf.task(&run.pointer);
            let end = self.drive_task(&mut run, &frame.locals, &frame.data);
            if matches!(end, TaskEnd::Waiting) {
                if run.timeout_timer.is_none()
                    && let Some(due) = run.timeout_due_ms
                {
                    run.timeout_timer = Some(self.set_timer("timeout", &run.pointer, due));
                }
                frame.task = Some(run);
                return Flow::Waiting;
            }
            if let Some(timer) = &run.timeout_timer
                && !run.timed_out
            {
                let timer = timer.clone();
                self.cancel_timer(&timer);
            }
            if matches!(end, TaskEnd::End(_) | TaskEnd::Abort(_)) {
                // The run ends from inside this task: what its other branches wait for is
                // cancelled here, since the task leaves the tree.
                let mut commands = Vec::new();
                cancel_body(&run.body, "parent_ended", &mut commands);
                self.commands.extend(commands);
            }
            let input = run.input.unwrap_or_else(|| frame.data.clone());
            if let Some(flow) = self.after_task(frame, info, end, input, run.started_at_ms) {
                return flow;
            }
        }
    }

    /// What follows a task that stopped: its output.as and export.as, its event, and the flow
    /// its `then` names. `None` goes on with the list.
    fn after_task(
        &mut self,
        frame: &mut Frame,
        info: &TaskInfo,
        end: TaskEnd,
        input: Value,
        started_at_ms: i64,
    ) -> Option<Flow> {
        let (output, chosen) = match end {
            TaskEnd::Waiting => return Some(Flow::Waiting),
            TaskEnd::End(v) => return Some(Flow::End(v)),
            TaskEnd::Abort(e) => return Some(Flow::Abort(e)),
            TaskEnd::Raised(error) => {
                let error = error.at(&info.pointer, &info.name);
                self.event("step_failed", info, json!({ "error": error.to_value() }));
                return Some(Flow::Raised(error));
            }
            TaskEnd::Done(output, chosen) => (output, chosen),
        };
        let output = match self.shape_output(info, &input, started_at_ms, output, &frame.locals) {
            Ok(output) => output,
            Err(error) => {
                let error = error.at(&info.pointer, &info.name);
                self.event("step_failed", info, json!({ "error": error.to_value() }));
                return Some(Flow::Raised(error));
            }
        };
        self.event("step_completed", info, json!({ "output": output }));
        frame.data = output.clone();
        let then = chosen.or_else(|| info.then.clone());
        match then.as_deref() {
            None | Some("continue") => {
                if frame.single {
                    return Some(Flow::Finished(output));
                }
                frame.index += 1;
                None
            }
            Some("exit") => Some(Flow::Exited(output)),
            Some("end") => Some(Flow::End(output)),
            Some(name) => {
                let tasks = self.wf.list(&frame.list);
                match tasks.iter().position(|p| self.wf.task(p).name == name) {
                    Some(index) => {
                        frame.index = index;
                        None
                    }
                    None => Some(Flow::Raised(
                        WorkflowError::configuration(format!("No task {name} in this list."))
                            .at(&info.pointer, &info.name),
                    )),
                }
            }
        }
    }

    /// output.as, then export.as (which sets `$context`).
    fn shape_output(
        &mut self,
        info: &TaskInfo,
        input: &Value,
        started_at_ms: i64,
        output: Value,
        locals: &[(String, Value)],
    ) -> Result<Value, WorkflowError> {
        let wf = self.wf;
        let mut output = output;
        if let Some(shape) = wf.field(info, "output/as") {
            let vars = Vars {
                data: Some(&output),
                input: Some(input),
                task: Some(TaskVar {
                    pointer: &info.pointer,
                    input,
                    started_at_ms,
                    output: Some(&output),
                }),
                locals,
                ..Vars::default()
            };
            output = self.shaping(shape, &vars)?;
        }
        if let Some(shape) = wf.field(info, "export/as") {
            let vars = Vars {
                data: Some(&output),
                input: Some(input),
                output: Some(&output),
                task: Some(TaskVar {
                    pointer: &info.pointer,
                    input,
                    started_at_ms,
                    output: Some(&output),
                }),
                locals,
            };
            self.context = self.shaping(shape, &vars)?;
        }
        Ok(output)
    }

    // ---- tasks ----

    /// Begins a task: input.from, its timeout, and its kind's first move. One arm for each
    /// kind of task, side by side; that is why it is long.
    fn start_task(
        &mut self,
        info: &TaskInfo,
        raw: Value,
        locals: &[(String, Value)],
    ) -> Result<Started, WorkflowError> {
        let wf = self.wf;
        let now = self.now_ms;
        let raw_vars = |raw| Vars {
            data: Some(raw),
            task: Some(TaskVar {
                pointer: &info.pointer,
                input: raw,
                started_at_ms: now,
                output: None,
            }),
            locals,
            ..Vars::default()
        };
        let shaped = wf.field(info, "input/from").is_some();
        let input = match wf.field(info, "input/from") {
            Some(from) => self.shaping(from, &raw_vars(&raw))?,
            None => raw.clone(),
        };
        let timeout_due_ms = match wf.field(info, "timeout") {
            None => None,
            Some(timeout) => {
                let after = match timeout {
                    Value::String(name) => wf
                        .raw(&format!("/use/timeouts/{}/after", pointer_escape(name)))
                        .cloned()
                        .unwrap_or(Value::Null),
                    other => other.get("after").cloned().unwrap_or(Value::Null),
                };
                let ms = self.duration(&after, &raw_vars(&raw))?;
                Some(self.now_ms.saturating_add(ms as i64))
            }
        };
        let vars = Vars {
            data: Some(&input),
            input: Some(&input),
            task: Some(TaskVar {
                pointer: &info.pointer,
                input: &input,
                started_at_ms: now,
                output: None,
            }),
            locals,
            ..Vars::default()
        };
        let body = match &info.kind {
            Kind::Set => {
                let template = wf.field(info, "set").cloned().unwrap_or(Value::Null);
                let output = self.shaping(&template, &vars)?;
                return Ok(Started::Now(TaskEnd::Done(output, None), input));
            }
            Kind::Switch(cases) => {
                let vars = Vars {
                    input: None,
                    ..vars
                };
                for case in cases {
                    let holds = match &case.when {
                        None => false,
                        Some(when) => self.condition(&Value::String(when.clone()), &vars)?,
                    };
                    if holds {
                        let then = case.then.clone();
                        return Ok(Started::Now(TaskEnd::Done(input.clone(), then), input));
                    }
                }
                let default = cases.iter().find(|c| c.when.is_none());
                let then = default.and_then(|c| c.then.clone());
                return Ok(Started::Now(TaskEnd::Done(input.clone(), then), input));
            }
            Kind::Raise => {
                let error = self.raised_error(info, &vars)?;
                return Ok(Started::Now(TaskEnd::Raised(error), input));
            }
            Kind::Emit => {
                // "An emit task records an event in the playbook ... and hands its input on."
                self.emit(info, &vars)?;
                return Ok(Started::Now(TaskEnd::Done(input.clone(), None), input));
            }
            Kind::Listen => Body::Listen {
                listening: self.start_listen(info),
            },
            Kind::Do(list) => Body::Do {
                frame: Frame::new(list, input.clone(), locals.to_vec()),
            },
            Kind::For { .. } => {
                let value = wf.field(info, "for/in").cloned().unwrap_or(Value::Null);
                let items = match self.expression_value(&value, &vars)? {
                    Value::Array(items) => items,
                    other => {
                        return Err(WorkflowError::validation(format!(
                            "for.in gave {}, not a list.",
                            kind_of(&other)
                        )));
                    }
                };
                Body::For {
                    items,
                    next: 0,
                    data: input.clone(),
                    frame: None,
                }
            }
            Kind::Try { list, .. } => Body::Try {
                retries: 0,
                first_ms: self.now_ms,
                phase: TryPhase::Trying {
                    frame: Frame::new(list, input.clone(), locals.to_vec()),
                },
                attempt_timer: None,
                attempt_timed_out: false,
            },
            Kind::Fork { list, .. } => {
                let count = wf.list(list).len();
                Body::Fork {
                    branches: (0..count)
                        .map(|index| Branch::Running {
                            frame: Frame {
                                index,
                                single: true,
                                ..Frame::new(list, input.clone(), locals.to_vec())
                            },
                        })
                        .collect(),
                }
            }
            Kind::Wait => {
                let value = wf.field(info, "wait").cloned().unwrap_or(Value::Null);
                let ms = self.duration(&value, &vars)?;
                if ms == 0 {
                    return Ok(Started::Now(TaskEnd::Done(input.clone(), None), input));
                }
                let timer_id = self.set_timer("wait", &info.pointer, now.saturating_add(ms as i64));
                self.event(
                    "wait_started",
                    info,
                    json!({ "timer_id": timer_id, "milliseconds": ms }),
                );
                Body::Wait {
                    timer_id,
                    fired: false,
                }
            }
            Kind::Call { def_type, def_name } => {
                self.start_call(info, def_type.as_deref(), def_name.as_deref(), &vars)?
            }
        };
        Ok(Started::Running(Box::new(TaskRun {
            pointer: info.pointer.clone(),
            input: shaped.then_some(input),
            started_at_ms: now,
            timeout_due_ms,
            timeout_timer: None,
            timed_out: false,
            body,
        })))
    }

    /// Goes on with a task under way. One arm for each kind of task that waits or holds
    /// others, side by side so a kind's moves read in one place; that is why it is long.
    fn drive_task(
        &mut self,
        run: &mut TaskRun,
        locals: &[(String, Value)],
        handed: &Value,
    ) -> TaskEnd {
        let wf = self.wf;
        let info = wf.task(&run.pointer);
        if run.timed_out {
            if let Body::Listen { listening } = &mut run.body {
                self.release_listen(listening);
            }
            let mut commands = Vec::new();
            cancel_body(&run.body, "deadline", &mut commands);
            self.commands.extend(commands);
            return TaskEnd::Raised(
                WorkflowError::timeout(format!("The step {} ran past its timeout.", info.name))
                    .at(&info.pointer, &info.name),
            );
        }
        let input = run.input.clone().unwrap_or_else(|| handed.clone());
        match &mut run.body {
            Body::Do { frame } => self.drive_list(frame).into(),
            Body::For {
                items,
                next,
                data,
                frame,
            } => {
                let Kind::For { each, at, list } = &info.kind else {
                    return TaskEnd::Abort(WorkflowError::runtime("The task is not a for."));
                };
                loop {
                    if frame.is_none() {
                        if *next >= items.len() {
                            return TaskEnd::Done(data.clone(), None);
                        }
                        let mut inner = locals.to_vec();
                        inner.retain(|(n, _)| n != each && n != at);
                        inner.push((each.clone(), items[*next].clone()));
                        inner.push((at.clone(), json!(*next)));
                        if let Some(condition) = wf.field(info, "while") {
                            let vars = Vars {
                                data: Some(data),
                                input: Some(&input),
                                locals: &inner,
                                ..Vars::default()
                            };
                            match self.condition(condition, &vars) {
                                Ok(true) => {}
                                Ok(false) => return TaskEnd::Done(data.clone(), None),
                                Err(error) => return TaskEnd::Raised(error),
                            }
                        }
                        *frame = Some(Frame::new(list, data.clone(), inner));
                    }
                    let Some(current) = frame.as_mut() else {
                        continue;
                    };
                    match self.drive_list(current) {
                        Flow::Waiting => return TaskEnd::Waiting,
                        Flow::Finished(v) => {
                            *data = v;
                            *next += 1;
                            *frame = None;
                        }
                        Flow::Exited(v) => return TaskEnd::Done(v, None),
                        Flow::End(v) => return TaskEnd::End(v),
                        Flow::Raised(e) => return TaskEnd::Raised(e),
                        Flow::Abort(e) => return TaskEnd::Abort(e),
                    }
                }
            }
            Body::Try { .. } => self.drive_try(run, locals, input),
            Body::Fork { branches } => {
                let Kind::Fork { compete, .. } = &info.kind else {
                    return TaskEnd::Abort(WorkflowError::runtime("The task is not a fork."));
                };
                let compete = *compete;
                for i in 0..branches.len() {
                    let Branch::Running { frame } = &mut branches[i] else {
                        continue;
                    };
                    match self.drive_list(frame) {
                        Flow::Waiting => {}
                        Flow::Finished(output) | Flow::Exited(output) => {
                            branches[i] = Branch::Done {
                                output: output.clone(),
                            };
                            if compete {
                                self.cancel_branches(branches);
                                return TaskEnd::Done(output, None);
                            }
                        }
                        Flow::End(v) => return TaskEnd::End(v),
                        Flow::Abort(e) => return TaskEnd::Abort(e),
                        Flow::Raised(error) => {
                            if !compete {
                                branches[i] = Branch::Failed {
                                    error: error.clone(),
                                };
                                self.cancel_branches(branches);
                                return TaskEnd::Raised(error);
                            }
                            branches[i] = Branch::Failed { error };
                        }
                    }
                }
                if branches.iter().any(|b| matches!(b, Branch::Running { .. })) {
                    return TaskEnd::Waiting;
                }
                if compete {
                    // Every branch failed: the fork raises the first branch's error.
                    let first = branches.iter().find_map(|b| match b {
                        Branch::Failed { error } => Some(error.clone()),
                        _ => None,
                    });
                    return TaskEnd::Raised(first.unwrap_or_else(|| {
                        WorkflowError::runtime("Every branch of the fork failed.")
                    }));
                }
                let outputs = branches
                    .iter()
                    .map(|b| match b {
                        Branch::Done { output } => output.clone(),
                        _ => Value::Null,
                    })
                    .collect();
                TaskEnd::Done(Value::Array(outputs), None)
            }
            Body::Call {
                call_id,
                child_run_id,
                def_type,
                name,
                wait_timer,
                delivered,
            } => match delivered.take() {
                None => TaskEnd::Waiting,
                Some(Delivered::Output { output }) => {
                    let timer = wait_timer.clone();
                    self.cancel_timer(&timer);
                    self.event("call_ended", info, json!({ "call_id": call_id, "child_run_id": child_run_id, "output": output }));
                    TaskEnd::Done(output, None)
                }
                Some(Delivered::Problem { problem }) => {
                    let timer = wait_timer.clone();
                    self.cancel_timer(&timer);
                    self.event("call_ended", info, json!({ "call_id": call_id, "child_run_id": child_run_id, "problem": problem }));
                    TaskEnd::Raised(call_error(&problem, def_type, name))
                }
                Some(Delivered::TimedOut) => {
                    self.commands.push(Command::CancelCall {
                        call_id: call_id.clone(),
                        child_run_id: child_run_id.clone(),
                        kind: "deadline".to_owned(),
                    });
                    self.event("call_ended", info, json!({ "call_id": call_id, "child_run_id": child_run_id, "timed_out": true }));
                    TaskEnd::Raised(WorkflowError::timeout(format!(
                        "The {def_type} {name} did not end within the wait of its task."
                    )))
                }
            },
            Body::Wait { timer_id, fired } => {
                if *fired {
                    let timer_id = timer_id.clone();
                    self.event("wait_ended", info, json!({ "timer_id": timer_id }));
                    TaskEnd::Done(input, None)
                } else {
                    TaskEnd::Waiting
                }
            }
            Body::Listen { listening } => self.drive_listen(info, listening),
        }
    }

    /// Cancels every branch still running, with the kind parent_ended.
    fn cancel_branches(&mut self, branches: &[Branch]) {
        let mut commands = Vec::new();
        for branch in branches {
            if let Branch::Running { frame } = branch {
                cancel_frame(frame, "parent_ended", &mut commands);
            }
        }
        self.commands.extend(commands);
    }
}

enum Started {
    /// It ended as it began; with its input after input.from.
    Now(TaskEnd, Value),
    Running(Box<TaskRun>),
}
