//! The task tree and its driver: every task kind of this slice, flow, data between tasks,
//! catches and retries, timeouts, calls and forks.

use std::collections::BTreeMap;

use auto_script::InputBudget;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::super::CALLABLE_TYPES;
use super::errors::{OUTPUT_BYTES_MAX, WorkflowError, call_error, problem, rejection};
use super::eval::{TaskVar, Vars, time_value};
use super::events::{EventBook, Listening, Receipt};
use super::{
    CALL_WAIT_MARGIN_MS, CallOutcome, Command, Ending, Input, Kind, RunInfo, RunState, Step,
    StepEvent, TaskInfo, Workflow, ids,
};
use crate::definitions::check_name;

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
    Problem { problem: Value },
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
    pub workflow_var: Value,
    pub runtime_var: Value,
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
            workflow_var: json!({
                "id": info.run_id,
                "definition": info.definition,
                "input": state.workflow_input,
                "startedAt": time_value(info.started_at_ms),
            }),
            runtime_var: json!({
                "name": "auto-runtime",
                "version": env!("CARGO_PKG_VERSION"),
                "metadata": { "type": "workflow" },
            }),
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
                if let Some(condition) = wf.raw(&format!("{}/if", info.pointer)) {
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
        if let Some(shape) = wf.raw(&format!("{}/output/as", info.pointer)) {
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
        if let Some(shape) = wf.raw(&format!("{}/export/as", info.pointer)) {
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

    /// Begins a task: input.from, its timeout, and its kind's first move.
    fn start_task(
        &mut self,
        info: &TaskInfo,
        raw: Value,
        locals: &[(String, Value)],
    ) -> Result<Started, WorkflowError> {
        let wf = self.wf;
        let at = |field: &str| format!("{}/{field}", info.pointer);
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
        let shaped = wf.raw(&at("input/from")).is_some();
        let input = match wf.raw(&at("input/from")) {
            Some(from) => self.shaping(from, &raw_vars(&raw))?,
            None => raw.clone(),
        };
        let timeout_due_ms = match wf.raw(&at("timeout")) {
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
                let template = wf.raw(&at("set")).cloned().unwrap_or(Value::Null);
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
                let value = wf.raw(&at("for/in")).cloned().unwrap_or(Value::Null);
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
                let value = wf.raw(&at("wait")).cloned().unwrap_or(Value::Null);
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

    /// The error a raise task raises: inline, named in use.errors, or computed.
    fn raised_error(
        &mut self,
        info: &TaskInfo,
        vars: &Vars<'_>,
    ) -> Result<WorkflowError, WorkflowError> {
        let wf = self.wf;
        let written = wf
            .raw(&format!("{}/raise/error", info.pointer))
            .cloned()
            .unwrap_or(Value::Null);
        let template = match &written {
            Value::String(name) if super::super::expressions::enclosed(name).is_none() => wf
                .raw(&format!("/use/errors/{}", pointer_escape(name)))
                .cloned()
                .unwrap_or(Value::Null),
            other => other.clone(),
        };
        let value = self.template(&template, vars)?;
        let no_error = || {
            WorkflowError::configuration(
                "The raise names no error with a type and a status from 100 to 599.",
            )
        };
        let error_type = value
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(no_error)?;
        let status = value
            .get("status")
            .and_then(Value::as_u64)
            .filter(|s| (100..=599).contains(s))
            .ok_or_else(no_error)?;
        let text = |field: &str| match value.get(field) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        };
        Ok(WorkflowError {
            error_type: error_type.to_owned(),
            status: status as u16,
            instance: text("instance").unwrap_or_default(),
            title: text("title"),
            detail: text("detail"),
            kind: text("kind"),
            because: text("because"),
            issues: value.get("issues").filter(|v| !v.is_null()).cloned(),
            step: String::new(),
        }
        .at(&info.pointer, &info.name))
    }

    fn start_call(
        &mut self,
        info: &TaskInfo,
        written_type: Option<&str>,
        written_name: Option<&str>,
        vars: &Vars<'_>,
    ) -> Result<Body, WorkflowError> {
        let wf = self.wf;
        let with = wf
            .raw(&format!("{}/with", info.pointer))
            .cloned()
            .unwrap_or(Value::Null);
        let def_type = self.template(with.get("type").unwrap_or(&Value::Null), vars)?;
        let name = self.template(with.get("name").unwrap_or(&Value::Null), vars)?;
        let input = match with.get("input") {
            Some(input) => self.template(input, vars)?,
            None => json!({}),
        };
        let def_type = def_type
            .as_str()
            .filter(|t| CALLABLE_TYPES.contains(t))
            .ok_or_else(|| {
                WorkflowError::validation(format!(
                    "The call's type {def_type} is not one of reasoning, interaction, prediction, recall, computation or workflow."
                ))
            })?
            .to_owned();
        let name = match name.as_str() {
            Some(text) => match check_name(text) {
                Ok(()) => text.to_owned(),
                Err(words) => return Err(WorkflowError::validation(words)),
            },
            None => {
                return Err(WorkflowError::validation(format!(
                    "The call's name {name} is not a definition name."
                )));
            }
        };
        let bytes = serde_json::to_vec(&input).map_or(usize::MAX, |b| b.len());
        if bytes > CALL_INPUT_BYTES_MAX {
            return Err(WorkflowError::validation(format!(
                "The call's input holds {bytes} bytes as JSON; a call takes at most 262,144."
            )));
        }
        // "A task whose with.type or with.name is an expression waits as long as the longest
        // run of any function other than a workflow, plus one minute."
        let own_ms = match (written_type, written_name) {
            (Some("workflow"), Some(_)) => self.run_duration_ms,
            (Some(t), Some(n)) => self
                .functions_ms
                .get(&format!("{t}/{n}"))
                .copied()
                .unwrap_or(self.function_default_ms),
            _ => self.function_default_ms,
        };
        let due = self
            .now_ms
            .saturating_add(own_ms.saturating_add(CALL_WAIT_MARGIN_MS) as i64)
            .min(self.run_deadline_ms);
        let wait_ms = u64::try_from(due.saturating_sub(self.now_ms)).unwrap_or(0);
        let attempt = self.count("call", &info.pointer);
        let call_id = ids::call_id(&info.pointer, attempt);
        let child_run_id = ids::child_run_id(&self.info.run_id, &info.pointer, attempt);
        self.commands.push(Command::StartCall {
            call_id: call_id.clone(),
            child_run_id: child_run_id.clone(),
            def_type: def_type.clone(),
            name: name.clone(),
            input,
            wait_ms,
        });
        let wait_timer = self.set_timer("call", &info.pointer, due);
        self.event(
            "call_started",
            info,
            json!({ "call_id": call_id, "child_run_id": child_run_id, "type": def_type, "definition": name }),
        );
        Ok(Body::Call {
            call_id,
            child_run_id,
            def_type,
            name,
            wait_timer,
            delivered: None,
        })
    }

    /// Goes on with a task under way.
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
                        if let Some(condition) = wf.raw(&format!("{}/while", info.pointer)) {
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

    fn drive_try(
        &mut self,
        run: &mut TaskRun,
        locals: &[(String, Value)],
        input: Value,
    ) -> TaskEnd {
        let wf = self.wf;
        let info = wf.task(&run.pointer);
        let Kind::Try { list, recovery } = &info.kind else {
            return TaskEnd::Abort(WorkflowError::runtime("The task is not a try."));
        };
        let Body::Try {
            retries,
            first_ms,
            phase,
            attempt_timer,
            attempt_timed_out,
        } = &mut run.body
        else {
            return TaskEnd::Abort(WorkflowError::runtime("The task is not a try."));
        };
        loop {
            match phase {
                TryPhase::Delay { fired, .. } => {
                    if !*fired {
                        return TaskEnd::Waiting;
                    }
                    *phase = TryPhase::Trying {
                        frame: Frame::new(list, input.clone(), locals.to_vec()),
                    };
                }
                TryPhase::Recovering { frame } => return self.drive_list(frame).into(),
                TryPhase::Trying { frame } => {
                    let flow = if *attempt_timed_out {
                        *attempt_timed_out = false;
                        *attempt_timer = None;
                        let mut commands = Vec::new();
                        cancel_frame(frame, "deadline", &mut commands);
                        self.commands.extend(commands);
                        Flow::Raised(
                            WorkflowError::timeout(format!(
                                "An attempt of the step {} ran past its limit.",
                                info.name
                            ))
                            .at(&info.pointer, &info.name),
                        )
                    } else {
                        self.drive_list(frame)
                    };
                    let error = match flow {
                        Flow::Waiting => {
                            if attempt_timer.is_none()
                                && let Some(ms) = self.attempt_limit(info, &input, locals)
                            {
                                let due = self.now_ms.saturating_add(ms as i64);
                                *attempt_timer =
                                    Some(self.set_timer("attempt", &info.pointer, due));
                            }
                            return TaskEnd::Waiting;
                        }
                        Flow::Raised(error) => error,
                        other => {
                            if let Some(timer) = attempt_timer.take() {
                                self.cancel_timer(&timer);
                            }
                            return other.into();
                        }
                    };
                    if let Some(timer) = attempt_timer.take() {
                        self.cancel_timer(&timer);
                    }
                    match self.catch(info, &input, &error, locals, *retries, *first_ms) {
                        Err(failure) => return TaskEnd::Raised(failure),
                        Ok(Caught::No) => return TaskEnd::Raised(error),
                        Ok(Caught::Retry(delay_ms)) => {
                            *retries += 1;
                            self.event(
                                "step_retried",
                                info,
                                json!({ "retry": *retries, "delay_ms": delay_ms, "error": error.to_value() }),
                            );
                            if delay_ms == 0 {
                                *phase = TryPhase::Trying {
                                    frame: Frame::new(list, input.clone(), locals.to_vec()),
                                };
                            } else {
                                let due = self.now_ms.saturating_add(delay_ms as i64);
                                let timer_id = self.set_timer("retry", &info.pointer, due);
                                *phase = TryPhase::Delay {
                                    timer_id,
                                    fired: false,
                                };
                                return TaskEnd::Waiting;
                            }
                        }
                        Ok(Caught::Recover) => {
                            let Some(recovery) = recovery else {
                                // "Without catch.do, a task whose retries ran out hands on its
                                // own input as its output."
                                return TaskEnd::Done(input, None);
                            };
                            let name = wf
                                .raw(&format!("{}/catch/as", info.pointer))
                                .and_then(Value::as_str)
                                .map_or_else(|| "$error".to_owned(), |n| format!("${n}"));
                            let mut inner = locals.to_vec();
                            inner.retain(|(n, _)| *n != name);
                            inner.push((name, error.to_value()));
                            *phase = TryPhase::Recovering {
                                frame: Frame::new(recovery, input.clone(), inner),
                            };
                        }
                    }
                }
            }
        }
    }

    /// `limit.attempt.duration` of the catch's retry policy, when it has one.
    fn attempt_limit(
        &mut self,
        info: &TaskInfo,
        input: &Value,
        locals: &[(String, Value)],
    ) -> Option<u64> {
        let policy = self.retry_policy(info)?;
        let duration = policy.pointer("/limit/attempt/duration")?.clone();
        let vars = Vars {
            data: Some(input),
            input: Some(input),
            locals,
            ..Vars::default()
        };
        self.duration(&duration, &vars).ok()
    }

    fn retry_policy(&self, info: &TaskInfo) -> Option<Value> {
        let wf = self.wf;
        match wf.raw(&format!("{}/catch/retry", info.pointer))? {
            Value::String(name) => wf
                .raw(&format!("/use/retries/{}", pointer_escape(name)))
                .cloned(),
            other => Some(other.clone()),
        }
    }

    /// Whether the catch takes `error`, and then whether a retry remains.
    fn catch(
        &mut self,
        info: &TaskInfo,
        input: &Value,
        error: &WorkflowError,
        locals: &[(String, Value)],
        retries: u32,
        first_ms: i64,
    ) -> Result<Caught, WorkflowError> {
        let wf = self.wf;
        let catch = wf
            .raw(&format!("{}/catch", info.pointer))
            .cloned()
            .unwrap_or(Value::Null);
        if let Some(Value::Object(with)) = catch.pointer("/errors/with")
            && !error.matches(with)
        {
            return Ok(Caught::No);
        }
        let name = catch
            .get("as")
            .and_then(Value::as_str)
            .map_or_else(|| "$error".to_owned(), |n| format!("${n}"));
        // The catch's conditions read the error under its name; a retry policy, which may sit
        // in use.retries, reads it as $error.
        let mut inner = locals.to_vec();
        inner.retain(|(n, _)| *n != name && n != "$error");
        inner.push(("$error".to_owned(), error.to_value()));
        if name != "$error" {
            inner.push((name, error.to_value()));
        }
        let vars = Vars {
            data: Some(input),
            input: Some(input),
            locals: &inner,
            ..Vars::default()
        };
        let placed = |e: WorkflowError| e.at(&info.pointer, &info.name);
        if let Some(when) = catch.get("when")
            && !self.condition(when, &vars).map_err(placed)?
        {
            return Ok(Caught::No);
        }
        if let Some(except) = catch.get("exceptWhen")
            && self.condition(except, &vars).map_err(placed)?
        {
            return Ok(Caught::No);
        }
        let Some(policy) = self.retry_policy(info) else {
            return Ok(Caught::Recover);
        };
        if let Some(count) = policy
            .pointer("/limit/attempt/count")
            .and_then(Value::as_u64)
            && u64::from(retries) >= count
        {
            return Ok(Caught::Recover);
        }
        if let Some(when) = policy.get("when")
            && !self.condition(when, &vars).map_err(placed)?
        {
            return Ok(Caught::Recover);
        }
        if let Some(except) = policy.get("exceptWhen")
            && self.condition(except, &vars).map_err(placed)?
        {
            return Ok(Caught::Recover);
        }
        let retry = retries + 1;
        let mut delay = match policy.get("delay") {
            Some(delay) => self.duration(delay, &vars).map_err(placed)? as f64,
            None => 0.0,
        };
        let backoff = policy.get("backoff").and_then(Value::as_object);
        if backoff.is_some_and(|b| b.contains_key("linear")) {
            delay *= f64::from(retry);
        } else if backoff.is_some_and(|b| b.contains_key("exponential")) {
            delay *= 2f64.powi(i32::try_from(retry - 1).unwrap_or(i32::MAX).min(1_000));
        }
        if let Some(jitter) = policy.get("jitter") {
            let from = match jitter.get("from") {
                Some(v) => self.duration(v, &vars).map_err(placed)? as f64,
                None => 0.0,
            };
            let to = match jitter.get("to") {
                Some(v) => self.duration(v, &vars).map_err(placed)? as f64,
                None => from,
            };
            let fraction = ids::fraction(&self.info.run_id, &info.pointer, retry);
            delay += from + (to - from).max(0.0) * fraction;
        }
        let delay = delay.min(self.run_duration_ms as f64).max(0.0).round() as u64;
        // "No retry starts once this much time has passed since the first attempt": the
        // retry would start when its delay ends.
        if let Some(limit) = policy.pointer("/limit/duration") {
            let ms = self.duration(limit, &vars).map_err(placed)?;
            let starts_ms = self
                .now_ms
                .saturating_add(i64::try_from(delay).unwrap_or(i64::MAX));
            if starts_ms.saturating_sub(first_ms) >= i64::try_from(ms).unwrap_or(i64::MAX) {
                return Ok(Caught::Recover);
            }
        }
        Ok(Caught::Retry(delay))
    }
}

enum Caught {
    No,
    Retry(u64),
    Recover,
}

enum Started {
    /// It ended as it began; with its input after input.from.
    Now(TaskEnd, Value),
    Running(Box<TaskRun>),
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "text",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// A name as one segment of a JSON pointer.
fn pointer_escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The cancels for everything a list under way waits for.
fn cancel_frame(frame: &Frame, kind: &str, commands: &mut Vec<Command>) {
    if let Some(run) = &frame.task {
        if let Some(timer) = &run.timeout_timer
            && !run.timed_out
        {
            commands.push(Command::CancelTimer {
                timer_id: timer.clone(),
            });
        }
        cancel_body(&run.body, kind, commands);
    }
}

fn cancel_body(body: &Body, kind: &str, commands: &mut Vec<Command>) {
    match body {
        Body::Do { frame } => cancel_frame(frame, kind, commands),
        Body::For { frame, .. } => {
            if let Some(frame) = frame {
                cancel_frame(frame, kind, commands);
            }
        }
        Body::Try {
            phase,
            attempt_timer,
            attempt_timed_out,
            ..
        } => {
            if let Some(timer) = attempt_timer
                && !attempt_timed_out
            {
                commands.push(Command::CancelTimer {
                    timer_id: timer.clone(),
                });
            }
            match phase {
                TryPhase::Trying { frame } | TryPhase::Recovering { frame } => {
                    cancel_frame(frame, kind, commands);
                }
                TryPhase::Delay { timer_id, fired } => {
                    if !fired {
                        commands.push(Command::CancelTimer {
                            timer_id: timer_id.clone(),
                        });
                    }
                }
            }
        }
        Body::Fork { branches } => {
            for branch in branches {
                if let Branch::Running { frame } = branch {
                    cancel_frame(frame, kind, commands);
                }
            }
        }
        Body::Call {
            call_id,
            child_run_id,
            wait_timer,
            delivered,
            ..
        } => {
            if delivered.is_none() {
                commands.push(Command::CancelCall {
                    call_id: call_id.clone(),
                    child_run_id: child_run_id.clone(),
                    kind: kind.to_owned(),
                });
                commands.push(Command::CancelTimer {
                    timer_id: wait_timer.clone(),
                });
            }
        }
        Body::Wait { timer_id, fired } => {
            if !fired {
                commands.push(Command::CancelTimer {
                    timer_id: timer_id.clone(),
                });
            }
        }
        // A listen waits for nothing the shell holds: its events are in the snapshot.
        Body::Listen { .. } => {}
    }
}

/// Calls `mark` on each task under way until it returns true.
fn find_run(frame: &mut Frame, mark: &mut dyn FnMut(&mut TaskRun) -> bool) -> bool {
    let Some(run) = frame.task.as_mut() else {
        return false;
    };
    if mark(run) {
        return true;
    }
    match &mut run.body {
        Body::Do { frame } => find_run(frame, mark),
        Body::For { frame, .. } => frame.as_mut().is_some_and(|f| find_run(f, mark)),
        Body::Try {
            phase: TryPhase::Trying { frame } | TryPhase::Recovering { frame },
            ..
        } => find_run(frame, mark),
        Body::Fork { branches } => branches.iter_mut().any(|b| match b {
            Branch::Running { frame } => find_run(frame, mark),
            _ => false,
        }),
        _ => false,
    }
}

/// Marks the leaf a timer is for; false when no task waits for it.
fn mark_timer(root: &mut Frame, timer_id: &str) -> bool {
    find_run(root, &mut |run: &mut TaskRun| {
        if run.timeout_timer.as_deref() == Some(timer_id) && !run.timed_out {
            run.timed_out = true;
            return true;
        }
        match &mut run.body {
            Body::Wait { timer_id: t, fired } if t == timer_id && !*fired => {
                *fired = true;
                true
            }
            Body::Call {
                wait_timer,
                delivered: delivered @ None,
                ..
            } if wait_timer == timer_id => {
                *delivered = Some(Delivered::TimedOut);
                true
            }
            Body::Try {
                phase: TryPhase::Delay { timer_id: t, fired },
                ..
            } if t == timer_id && !*fired => {
                *fired = true;
                true
            }
            Body::Try {
                attempt_timer: Some(t),
                attempt_timed_out,
                ..
            } if t == timer_id && !*attempt_timed_out => {
                *attempt_timed_out = true;
                true
            }
            _ => false,
        }
    })
}

/// Marks the call a child's ending is for; false when no task waits for it.
fn mark_call(root: &mut Frame, ended: &str, outcome: &CallOutcome) -> bool {
    find_run(root, &mut |run: &mut TaskRun| match &mut run.body {
        Body::Call {
            call_id, delivered, ..
        } if call_id == ended && delivered.is_none() => {
            *delivered = Some(match outcome {
                CallOutcome::Succeeded { output } => Delivered::Output {
                    output: output.clone(),
                },
                CallOutcome::Rejected { problem } => Delivered::Problem {
                    problem: problem.clone(),
                },
            });
            true
        }
        _ => false,
    })
}

// ---- the run ----

pub(super) fn start(wf: &Workflow, info: &RunInfo, input: Value, now_ms: i64) -> Step {
    let mut state = RunState {
        root: Frame::new("/do", Value::Null, Vec::new()),
        context: json!({}),
        workflow_input: input.clone(),
        run_input: Value::Null,
        counters: BTreeMap::new(),
        functions_ms: info.functions_ms.clone(),
        function_default_ms: info.function_default_ms,
        run_deadline_ms: info
            .started_at_ms
            .saturating_add(i64::try_from(info.run_duration_ms).unwrap_or(i64::MAX)),
        run_timeout_due_ms: None,
        run_timer: None,
        inputs: 1,
        history_bytes: 0,
        events: EventBook::default(),
        ended: false,
    };
    let mut engine = Engine::new(wf, info, &state, now_ms);
    let vars = Vars {
        data: Some(&input),
        ..Vars::default()
    };
    let prepared = (|| -> Result<(Value, Option<i64>), WorkflowError> {
        let run_input = match wf.raw("/input/from") {
            Some(from) => engine.shaping(from, &vars)?,
            None => input.clone(),
        };
        let due = match wf.raw("/timeout") {
            None => None,
            Some(timeout) => {
                let after = match timeout {
                    Value::String(name) => wf
                        .raw(&format!("/use/timeouts/{}/after", pointer_escape(name)))
                        .cloned()
                        .unwrap_or(Value::Null),
                    other => other.get("after").cloned().unwrap_or(Value::Null),
                };
                let ms = engine.duration(&after, &Vars::default())?;
                Some(now_ms.saturating_add(ms as i64))
            }
        };
        Ok((run_input, due))
    })();
    match prepared {
        Ok((run_input, due)) => {
            state.root.data = run_input.clone();
            state.run_input = run_input;
            state.run_timeout_due_ms = due;
            // "It was still running at the longest a run may last": a timer from the start.
            engine.commands.push(Command::SetTimer {
                timer_id: OVERRUN_TIMER_ID.to_owned(),
                due_ms: state.run_deadline_ms,
            });
            go_on(engine, state, None)
        }
        Err(error) => {
            let ending = Ending::Rejected {
                problem: rejection(&error, &workflow_name(wf, info)),
            };
            state.ended = true;
            finish(engine, state, Some(ending))
        }
    }
}

pub(super) fn apply(
    wf: &Workflow,
    info: &RunInfo,
    mut state: RunState,
    input: Input,
    now_ms: i64,
) -> Step {
    let unchanged = |state| Step {
        state,
        commands: Vec::new(),
        events: Vec::new(),
        ending: None,
    };
    if state.ended {
        return unchanged(state);
    }
    let mut foreign = false;
    find_run(&mut state.root, &mut |run: &mut TaskRun| {
        foreign = !wf.index.tasks.contains_key(&run.pointer);
        foreign
    });
    if foreign {
        // A snapshot of another version of the workflow: stop rather than guess.
        let engine = Engine::new(wf, info, &state, now_ms);
        let error = WorkflowError::runtime(
            "The run's snapshot names a task this version of the workflow does not have.",
        );
        let ending = Ending::Rejected {
            problem: rejection(&error, &workflow_name(wf, info)),
        };
        return end_run(engine, state, ending, "parent_ended");
    }
    match input {
        Input::Start { .. } => unchanged(state),
        Input::Cancel { detail, kind } => {
            let engine = Engine::new(wf, info, &state, now_ms);
            let name = workflow_name(wf, info);
            let problem = problem(
                "cancelled",
                Some(kind.as_deref().unwrap_or("requested")),
                None,
                &format!("The workflow {name} was cancelled"),
                &detail,
                None,
            );
            end_run(engine, state, Ending::Rejected { problem }, "parent_ended")
        }
        Input::TimerFired { timer_id } if timer_id == OVERRUN_TIMER_ID => {
            let engine = Engine::new(wf, info, &state, now_ms);
            let name = workflow_name(wf, info);
            let problem = problem(
                "cancelled",
                Some("overrun"),
                None,
                &format!("The workflow {name} ran out of time"),
                &format!(
                    "The run was still running at the longest a run may last, {}.",
                    crate::workflow::in_words(info.run_duration_ms)
                ),
                None,
            );
            end_run(engine, state, Ending::Rejected { problem }, "parent_ended")
        }
        Input::TimerFired { timer_id } => {
            if state.run_timer.as_deref() == Some(timer_id.as_str()) {
                state.run_timer = None;
                let engine = Engine::new(wf, info, &state, now_ms);
                let error = WorkflowError::short(
                    "timeout",
                    408,
                    "The run ran out of time",
                    "The run ran past the timeout of its document.",
                );
                let ending = Ending::Rejected {
                    problem: rejection(&error, &workflow_name(wf, info)),
                };
                return end_run(engine, state, ending, "deadline");
            }
            if !mark_timer(&mut state.root, &timer_id) {
                return unchanged(state);
            }
            taken(wf, info, state, now_ms, None)
        }
        Input::CallEnded { call_id, outcome } => {
            if !mark_call(&mut state.root, &call_id, &outcome) {
                return unchanged(state);
            }
            taken(wf, info, state, now_ms, None)
        }
        Input::EventReceived { event } => received(wf, info, state, event, now_ms, false),
        Input::EventHeard { event } => received(wf, info, state, event, now_ms, true),
    }
}

/// An event sent to the run: ignored when its id was received before; otherwise counted as an
/// input, kept, and offered to the listening tasks as the tree is driven. One more than a run
/// takes over its life ends it. An event of the playbook `heard` for a listening task is let
/// pass when no task takes it, so the playbook's traffic never piles up in the run.
fn received(
    wf: &Workflow,
    info: &RunInfo,
    mut state: RunState,
    event: Value,
    now_ms: i64,
    heard: bool,
) -> Step {
    let id = event.get("id").and_then(Value::as_str).map(str::to_owned);
    let summary = json!({
        "id": event.get("id"),
        "type": event.get("type"),
        "source": event.get("source"),
    });
    let receipt = state.events.receive(event);
    let mut step = match receipt {
        Receipt::Duplicate => {
            return Step {
                state,
                commands: Vec::new(),
                events: Vec::new(),
                ending: None,
            };
        }
        Receipt::Kept => taken(wf, info, state, now_ms, id.filter(|_| heard)),
        // "One event more than the event limits allow ends the run at once, rejected".
        Receipt::Refused(error) => {
            state.inputs = state.inputs.saturating_add(1);
            let engine = Engine::new(wf, info, &state, now_ms);
            let ending = Ending::Rejected {
                problem: rejection(&error, &workflow_name(wf, info)),
            };
            end_run(engine, state, ending, "parent_ended")
        }
    };
    let mut data = json!({ "event": summary });
    if heard {
        // Let pass: no longer among the run's received ids.
        let passed = step.ending.is_none()
            && !step
                .state
                .events
                .has_received(summary["id"].as_str().unwrap_or_default());
        data["heard"] = json!(true);
        data["taken"] = json!(!passed);
    }
    let received = StepEvent {
        event_type: "event_received".to_owned(),
        data,
    };
    step.events.insert(0, received);
    step
}

/// Counts an input the run waited for, then goes on, or ends the run past [`INPUTS_MAX`];
/// `heard` is the id of a playbook's event the step lets pass when no task takes it.
fn taken(
    wf: &Workflow,
    info: &RunInfo,
    mut state: RunState,
    now_ms: i64,
    heard: Option<String>,
) -> Step {
    state.inputs = state.inputs.saturating_add(1);
    let mut engine = Engine::new(wf, info, &state, now_ms);
    engine.heard = heard;
    if state.inputs > INPUTS_MAX {
        let error = WorkflowError::runtime("The run took 100,000 inputs, the most a run may take.");
        let ending = Ending::Rejected {
            problem: rejection(&error, &workflow_name(wf, info)),
        };
        return end_run(engine, state, ending, "parent_ended");
    }
    go_on(engine, state, None)
}

/// Drives the tree from its root until every branch waits or the run ends.
fn go_on(mut engine: Engine<'_>, mut state: RunState, _: Option<()>) -> Step {
    let wf = engine.wf;
    let info = engine.info;
    let mut root = std::mem::replace(&mut state.root, Frame::new("/do", Value::Null, Vec::new()));
    let flow = engine.drive_list(&mut root);
    state.root = root;
    let ending = match flow {
        Flow::Waiting => None,
        Flow::Finished(output) | Flow::Exited(output) | Flow::End(output) => {
            Some(run_output(&mut engine, &state, output))
        }
        Flow::Raised(error) | Flow::Abort(error) => Some(Ending::Rejected {
            problem: rejection(&error, &workflow_name(wf, info)),
        }),
    };
    match ending {
        Some(ending) => end_run(engine, state, ending, "parent_ended"),
        None => {
            if let Some(id) = engine.heard.take() {
                engine.book.let_pass(&id);
            }
            if let Some(error) = engine.book.waiting_past_limits() {
                let ending = Ending::Rejected {
                    problem: rejection(&error, &workflow_name(wf, info)),
                };
                return end_run(engine, state, ending, "parent_ended");
            }
            // Measured as the step will record it.
            let recorded = events_bytes(&engine.events);
            state.history_bytes = state.history_bytes.saturating_add(recorded as u64);
            state.context = engine.context.clone();
            state.counters = engine.counters.clone();
            state.events = engine.book.clone();
            let history = state.history_bytes;
            let (held, kept) = held_bytes(wf, &mut state);
            let overflow = if held > DATA_HELD_BYTES_MAX {
                Some(format!(
                    "The run holds {held} bytes at once, as JSON with its document and 4 KiB a task under way: at most 4 MiB."
                ))
            } else if kept.saturating_add(recorded) > KEPT_ACROSS_WAIT_BYTES_MAX {
                Some(format!(
                    "The run keeps {kept} bytes across its wait, as JSON, beside {recorded} bytes of the rest of the step's record: at most 1,572,864 in all."
                ))
            } else if history > HISTORY_BYTES_MAX {
                Some(format!(
                    "The run's recorded history would hold {history} bytes as JSON: at most 512 MiB."
                ))
            } else {
                None
            };
            if let Some(words) = overflow {
                let error = WorkflowError::runtime(words);
                let ending = Ending::Rejected {
                    problem: rejection(&error, &workflow_name(wf, info)),
                };
                return end_run(engine, state, ending, "parent_ended");
            }
            if state.run_timer.is_none()
                && let Some(due) = state.run_timeout_due_ms
            {
                state.run_timer = Some(RUN_TIMER.to_owned());
                engine.commands.push(Command::SetTimer {
                    timer_id: RUN_TIMER.to_owned(),
                    due_ms: due,
                });
            }
            finish(engine, state, None)
        }
    }
}

/// What a step's events record, as JSON: each one's type and data.
pub(super) fn events_bytes(events: &[StepEvent]) -> usize {
    events
        .iter()
        .map(|e| {
            e.event_type.len() + serde_json::to_vec(&e.data).map_or(usize::MAX / 2, |b| b.len())
        })
        .fold(0usize, usize::saturating_add)
}

/// What a waiting run holds: its snapshot as JSON (its values and positions), its document,
/// and 4 KiB for each task under way; and the snapshot alone, which the step keeps across
/// the wait.
fn held_bytes(wf: &Workflow, state: &mut RunState) -> (usize, usize) {
    let mut under_way = 0usize;
    find_run(&mut state.root, &mut |_: &mut TaskRun| {
        under_way += 1;
        false
    });
    let snapshot = serde_json::to_vec(&*state).map_or(usize::MAX, |b| b.len());
    let held = snapshot
        .saturating_add(wf.source_bytes)
        .saturating_add(under_way.saturating_mul(TASK_HELD_BYTES));
    (held, snapshot)
}

/// The document's output.as, then the output's bounds: its size and its shape.
fn run_output(engine: &mut Engine<'_>, state: &RunState, output: Value) -> Ending {
    let wf = engine.wf;
    let name = workflow_name(wf, engine.info);
    let output = match wf.raw("/output/as") {
        None => output,
        Some(shape) => {
            let vars = Vars {
                data: Some(&output),
                input: Some(&state.run_input),
                ..Vars::default()
            };
            match engine.shaping(shape, &vars) {
                Ok(output) => output,
                Err(error) => {
                    return Ending::Rejected {
                        problem: rejection(&error, &name),
                    };
                }
            }
        }
    };
    let bytes = serde_json::to_vec(&output).map_or(usize::MAX, |b| b.len());
    if bytes > OUTPUT_BYTES_MAX {
        return Ending::Rejected {
            problem: problem(
                "conflict",
                Some("oversized"),
                None,
                &format!("The workflow {name} gave an output too large"),
                &format!("The output holds {bytes} bytes as JSON; a run keeps at most 1,048,574."),
                None,
            ),
        };
    }
    if let Some(shape) = &wf.document.output_shape {
        let issues = auto_schema::check_shape(shape, &output);
        if !issues.is_empty() {
            let messages: Vec<String> = auto_schema::render_answer_issues(&issues);
            let listed: Vec<Value> = messages
                .iter()
                .map(|m| json!({ "pointer": "/output", "message": m }))
                .collect();
            return Ending::Rejected {
                problem: problem(
                    "conflict",
                    Some("unworkable"),
                    None,
                    &format!("The workflow {name} could not give an output"),
                    &format!(
                        "The output does not match the shape {shape}: {}",
                        messages.join("; ")
                    ),
                    Some(Value::Array(listed)),
                ),
            };
        }
    }
    Ending::Succeeded { output }
}

/// Ends the run: cancels what it still waits for with `kind`, and its own timer.
fn end_run(mut engine: Engine<'_>, mut state: RunState, ending: Ending, kind: &str) -> Step {
    // An ended run waits for nothing: no timer it set in this step outlives it (the overrun
    // timer of a run that ends in its first step, among others).
    engine
        .commands
        .retain(|c| !matches!(c, Command::SetTimer { .. }));
    let mut commands = Vec::new();
    cancel_frame(&state.root, kind, &mut commands);
    engine.commands.extend(commands);
    if let Some(timer) = state.run_timer.take() {
        engine.cancel_timer(&timer);
    }
    state.ended = true;
    finish(engine, state, Some(ending))
}

fn finish(engine: Engine<'_>, mut state: RunState, ending: Option<Ending>) -> Step {
    state.context = engine.context;
    state.counters = engine.counters;
    state.events = engine.book;
    Step {
        state,
        commands: engine.commands,
        events: engine.events,
        ending,
    }
}
