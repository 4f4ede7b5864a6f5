//! Workflow documents: the save-time rules of the workflow page ("Document fields",
//! "Triggers", "Tasks", "Flow", "Calling a function", "Waiting for events", "Emitting an
//! event", "Errors, retries and timeouts", "Loops and parallel branches", "Expressions",
//! "Durations", "Saving a document", "The overview", "Limits").
//!
//! The YAML is read strictly by `auto-doc`, which keeps every value's position; the reader
//! here builds the typed [`model`] from it, collecting every problem with its line, column and
//! JSON pointer. Expressions go to `auto-script`'s checker with the `$` names their place
//! offers; inline schemas go to `auto-schema`.
//!
//! Checking is pure: it reads no clock. The page bounds a document's expression checks by 2
//! seconds of the server's wall-clock time; the caller measures that with the `deadline` of
//! [`WorkflowChecker`] (a closure asked before each expression), as `auto-template`'s
//! `RenderLimits` does. Without one, as in tests, nothing is timed.

mod durations;
pub mod engine;
mod expressions;
pub mod filters;
pub mod model;
mod overview;
mod read;
mod schedule;
mod tasks;

use std::sync::Arc;

use auto_doc::Issue;

use crate::definitions::{Checked, DefinitionChecker};

pub(crate) use durations::YEARS_MONTHS;
pub use durations::{
    IsoError, RUN_DURATION_MS_DEFAULT, RUN_DURATION_MS_MAX, RUN_DURATION_MS_MIN, in_words,
    parse_iso,
};
pub use overview::{overview, used_by_section};
pub use read::check_workflow;
pub use schedule::{EVERY_MS_MIN, FILTERS_MAX, cron_in_words, cron_latest_ms, cron_next_ms};

/// "Nested task lists: 64 levels" (workflow page, "Limits").
pub const TASK_LIST_NESTING_MAX: usize = 64;
/// "Branches of a fork: 32" (workflow page, "Limits").
pub const FORK_BRANCHES_MAX: usize = 32;
/// "Reference of a call task: 256 bytes in UTF-8: its JSON Pointer" (workflow page, "Limits").
pub const CALL_REFERENCE_BYTES_MAX: usize = 256;
/// "document.dsl: Required DSL version, from 1.0.0 to 1.0.3".
pub const DSL_VERSIONS: [&str; 4] = ["1.0.0", "1.0.1", "1.0.2", "1.0.3"];
/// The definition types `with.type` may name ("Calling a function").
pub const CALLABLE_TYPES: [&str; 6] = [
    "reasoning",
    "interaction",
    "prediction",
    "recall",
    "computation",
    "workflow",
];

/// Starts the wall-clock bound of one document's checks and returns the test of whether it
/// passed. The server gives one measuring `auto_script::DOCUMENT_CHECK_TIME_MS_MAX`; the
/// engine itself never reads a clock.
pub type DeadlineStart = Arc<dyn Fn() -> Box<dyn Fn() -> bool> + Send + Sync>;

/// What a save may vary: the longest a run may last, and the clock of the expression checks.
#[derive(Clone)]
pub struct WorkflowLimits {
    /// "Duration of a run: 30 days; WORKFLOW_MAX_DURATION sets 2 hours to 365 days." A
    /// duration written in the document that is longer is refused.
    pub run_duration_ms: u64,
    /// Asked before each expression; true stops the checks and refuses the document.
    pub deadline: Option<DeadlineStart>,
}

impl Default for WorkflowLimits {
    fn default() -> Self {
        Self {
            run_duration_ms: RUN_DURATION_MS_DEFAULT,
            deadline: None,
        }
    }
}

impl std::fmt::Debug for WorkflowLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkflowLimits")
            .field("run_duration_ms", &self.run_duration_ms)
            .field("deadline", &self.deadline.is_some())
            .finish()
    }
}

/// The checker `create_definition` runs for the type workflow.
#[derive(Clone, Debug, Default)]
pub struct WorkflowChecker {
    pub limits: WorkflowLimits,
}

impl WorkflowChecker {
    /// A checker with these limits.
    pub fn new(limits: WorkflowLimits) -> Self {
        Self { limits }
    }
}

impl DefinitionChecker for WorkflowChecker {
    fn check(&self, source: &str) -> Result<Checked, Vec<Issue>> {
        let expired = self.limits.deadline.as_ref().map(|start| start());
        let document = check_workflow(source, &self.limits, expired.as_deref())?;
        Ok(Checked {
            description: document.description(),
            warnings: document.warnings.clone(),
            input_schema: document.input_schema.clone(),
            output_schema: document.published_output_schema(),
            triggers: document.triggers(),
            generated_overview: Some(overview(&document)),
            uses: document.uses.clone(),
        })
    }
}
