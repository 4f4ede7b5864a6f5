//! The typed workflow a document describes: the subset of the Serverless Workflow DSL 1.0.0 to
//! 1.0.3 this runtime takes. Every task and list keeps its JSON pointer, so later stages (the
//! overview, a run) can name where in the document something was written.

use serde::Serialize;
use serde_json::{Value, json};

/// A workflow document that passed the checks.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WorkflowDocument {
    pub dsl: String,
    pub namespace: String,
    pub name: String,
    pub version: String,
    pub title: Option<String>,
    pub summary: Option<String>,
    /// `input.schema.document`.
    pub input_schema: Option<Value>,
    /// `output.schema.document`.
    pub output_schema: Option<Value>,
    /// `output.shape`.
    pub output_shape: Option<String>,
    pub schedule: Schedule,
    /// The top `do`.
    pub tasks: TaskList,
    /// Each `type/name` a call names literally, in document order, once.
    pub uses: Vec<String>,
    pub warnings: Vec<String>,
}

impl WorkflowDocument {
    /// The definition's description: the summary, or else the title.
    pub fn description(&self) -> Option<String> {
        self.summary.clone().or_else(|| self.title.clone())
    }

    /// The output schema published: the inline one, or the shape's.
    pub fn published_output_schema(&self) -> Option<Value> {
        self.output_schema.clone().or_else(|| {
            self.output_shape
                .as_deref()
                .and_then(auto_schema::shape_schema)
        })
    }

    /// The triggers as get_definition shows them: kind, reference, and filters, expression or
    /// milliseconds.
    pub fn triggers(&self) -> Vec<Value> {
        let mut triggers = Vec::new();
        if let Some(filters) = &self.schedule.on {
            triggers.push(json!({
                "kind": "event",
                "reference": "/schedule/on",
                "filters": filters,
            }));
        }
        if let Some(cron) = &self.schedule.cron {
            triggers.push(json!({
                "kind": "cron",
                "reference": "/schedule/cron",
                "expression": cron,
            }));
        }
        if let Some(ms) = self.schedule.every_ms {
            triggers.push(json!({
                "kind": "every",
                "reference": "/schedule/every",
                "milliseconds": ms,
            }));
        }
        triggers
    }
}

/// `schedule`: up to three triggers.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Schedule {
    /// The `with` of each filter of `on.one` or `on.any`.
    pub on: Option<Vec<Value>>,
    pub cron: Option<String>,
    pub every_ms: Option<u64>,
}

/// A list of named tasks, run in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TaskList {
    pub pointer: String,
    pub tasks: Vec<Task>,
}

/// One named task.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Task {
    pub name: String,
    /// Its reference: the JSON pointer of the task, such as `/do/0/review`.
    pub pointer: String,
    /// `if`, as written.
    pub condition: Option<String>,
    /// `then`: `continue`, `exit`, `end` or a task of the same list.
    pub then: Option<String>,
    pub kind: TaskKind,
}

/// What a task does.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TaskKind {
    /// `call: run_definition`; type and name when written out, not computed.
    Call {
        def_type: Option<String>,
        def_name: Option<String>,
    },
    Set,
    Do {
        tasks: TaskList,
    },
    Switch {
        cases: Vec<SwitchCase>,
    },
    For {
        each: String,
        at: String,
        tasks: TaskList,
    },
    Fork {
        branches: TaskList,
        compete: bool,
    },
    Try {
        tasks: TaskList,
        /// `catch.do`, when written.
        recovery: Option<TaskList>,
        retries: bool,
    },
    Raise {
        /// The error's title, type or the name of one in `use.errors`, as written.
        error: Option<String>,
    },
    Wait,
    Listen,
    Emit {
        event_type: Option<String>,
    },
}

/// One case of a switch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SwitchCase {
    pub name: String,
    pub when: Option<String>,
    pub then: Option<String>,
}
