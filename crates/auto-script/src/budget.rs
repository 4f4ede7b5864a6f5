//! The budgets an evaluation runs within, the meter the interrupt handler advances, and the
//! errors past them: the workflow page's limits as named constants, each with the page's words.

use std::time::{Duration, Instant};

/// "The engine counts one checkpoint every 10,000 of its steps, where a call or the jump of a
/// loop is a step." (workflow page, "Expressions"). QuickJS calls the interrupt handler once
/// every 10,000 steps, so each call of the handler is one checkpoint.
pub const CHECKPOINT_STEPS: u32 = 10_000;
/// "An expression may do 250 checkpoints of work."
pub const EXPRESSION_CHECKPOINTS_MAX: u32 = 250;
/// "The expressions of one input of a run may do 500 together."
pub const INPUT_CHECKPOINTS_MAX: u32 = 500;
/// "... in at most 2 seconds" (the expressions of one input together).
pub const INPUT_TIME_MS_MAX: u64 = 2_000;
/// "... and a sandbox of 64 MiB"; the same for a computation program (supplement, section 7).
pub const SANDBOX_BYTES_MAX: usize = 64 * 1024 * 1024;
/// "A value that an expression gives may nest at most 512 levels, the same as a value that a
/// run holds." An object or an array is one level.
pub const VALUE_DEPTH_MAX: usize = 512;
/// The largest value an evaluation may hand out, as JSON text. Not a page's limit: the sandbox
/// bounds what the code holds, and this bounds what leaves it, since a value read into Rust can
/// take many times its text's size (an empty array is 3 bytes of text and 32 of memory).
pub const VALUE_TEXT_BYTES_MAX: usize = 16 * 1024 * 1024;
/// A computation program's run: "10 seconds, 64 MiB, a work budget" (supplement, section 7).
pub const PROGRAM_TIME_MS_MAX: u64 = 10_000;
/// The work budget of one run of a computation program: 100,000 checkpoints are a billion
/// engine steps, about three seconds on an idle core, so the work budget rather than the clock
/// stops a runaway program on a machine that is not overloaded.
pub const PROGRAM_CHECKPOINTS_MAX: u32 = 100_000;
/// The work a computation program may do on the thread that asked for it (an async runtime's,
/// which other runs share) before it is stopped and run again from the start where blocking is
/// fine, with [`PROGRAM_CHECKPOINTS_MAX`]: a tenth of an expression's, about a quarter of a
/// millisecond. A program is pure and its clock given, so the second run gives what the first
/// would have; most programs end in no checkpoint at all and never leave the thread.
pub const BRIEF_PROGRAM_CHECKPOINTS_MAX: u32 = 25;
/// The time a program may take on the asking thread before it is run again where blocking is
/// fine (see [`BRIEF_PROGRAM_CHECKPOINTS_MAX`]).
pub const BRIEF_PROGRAM_TIME_MS_MAX: u64 = 2;
/// The work one call of a recall function's `fold` may do, in checkpoints: a fold meets each
/// event once, so it is a tenth of a program's.
pub const FOLD_CHECKPOINTS_MAX: u32 = 10_000;
/// The time one call of `fold` may take.
pub const FOLD_TIME_MS_MAX: u64 = 1_000;
/// The JavaScript stack: deep enough for a value of [`VALUE_DEPTH_MAX`] levels to go through
/// JSON, small enough to fit in a thread's 2 MiB stack with room for its Rust frames.
pub const SANDBOX_STACK_BYTES_MAX: usize = 512 * 1024;
/// Compiled expressions and programs kept per thread; past this the cache starts again empty.
pub const COMPILED_CACHE_ENTRIES_MAX: usize = 1_024;
/// Source bytes of the compiled code kept per thread: compiled code lives in the sandbox's
/// 64 MiB, so the cache must not crowd out the evaluations; past this it starts again empty.
pub const COMPILED_CACHE_BYTES_MAX: usize = 4 * 1024 * 1024;

/// The status of an expression error: the expression threw, overflowed its stack, or gave a
/// value JSON cannot carry.
pub const EXPRESSION_ERROR_STATUS: u16 = 400;
/// The status of a runtime error: a budget of work, time or memory ran out.
pub const RUNTIME_ERROR_STATUS: u16 = 500;

/// Which budget ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Limit {
    /// Checkpoints of work, of the expression, of the input's expressions, or of the program.
    Work,
    /// Wall-clock time.
    Time,
    /// The sandbox's memory.
    Memory,
}

/// Why an evaluation gave no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// The code failed by itself: it threw (a stack overflow too), was not valid, or gave a
    /// value JSON cannot carry. Status [`EXPRESSION_ERROR_STATUS`].
    #[error("{message}")]
    Expression {
        /// The engine's or the code's words, such as `TypeError: cannot read property 'x' of null`.
        message: String,
        /// The program's line the error came from, for a computation program that threw.
        line: Option<u32>,
    },
    /// A budget ran out; the code cannot catch this. Status [`RUNTIME_ERROR_STATUS`].
    #[error("{message}")]
    Runtime {
        /// Which budget, in words.
        message: String,
        /// Which budget.
        limit: Limit,
    },
}

impl ScriptError {
    /// The error's status: 400 for an expression error, 500 for a runtime error.
    pub fn status(&self) -> u16 {
        match self {
            Self::Expression { .. } => EXPRESSION_ERROR_STATUS,
            Self::Runtime { .. } => RUNTIME_ERROR_STATUS,
        }
    }

    pub(crate) fn expression(message: impl Into<String>) -> Self {
        Self::Expression {
            message: message.into(),
            line: None,
        }
    }

    pub(crate) fn runtime(limit: Limit, message: impl Into<String>) -> Self {
        Self::Runtime {
            message: message.into(),
            limit,
        }
    }
}

/// What the expressions of one input of a run have used together so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputBudget {
    pub(crate) checkpoints_used: u32,
    pub(crate) time_used: Duration,
    /// The time the expressions have together, when not [`INPUT_TIME_MS_MAX`].
    pub(crate) time_max: Option<Duration>,
}

impl InputBudget {
    /// A budget nothing has used yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A budget whose expressions have `time` together instead of [`INPUT_TIME_MS_MAX`], such
    /// as an event filter's 200 milliseconds of the server's time.
    pub fn with_time(time: Duration) -> Self {
        Self {
            time_max: Some(time),
            ..Self::default()
        }
    }

    /// The time the expressions have together.
    pub fn time_max(&self) -> Duration {
        self.time_max
            .unwrap_or(Duration::from_millis(INPUT_TIME_MS_MAX))
    }

    /// Checkpoints of work used so far.
    pub fn checkpoints_used(&self) -> u32 {
        self.checkpoints_used
    }

    /// Time spent evaluating so far.
    pub fn time_used(&self) -> Duration {
        self.time_used
    }
}

/// What one evaluation may use, and what it used; shared with the interrupt handler.
#[derive(Debug)]
pub(crate) struct Meter {
    pub(crate) active: bool,
    pub(crate) checkpoints: u32,
    pub(crate) checkpoints_max: u32,
    /// Past this many checkpoints the input's budget, not the expression's, is the one spent.
    pub(crate) checkpoints_input_max: u32,
    pub(crate) deadline: Instant,
    pub(crate) tripped: Option<Trip>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Trip {
    Work,
    InputWork,
    Time,
}

impl Meter {
    pub(crate) fn idle() -> Self {
        Self {
            active: false,
            checkpoints: 0,
            checkpoints_max: 0,
            checkpoints_input_max: 0,
            deadline: Instant::now(),
            tripped: None,
        }
    }

    /// One checkpoint; true stops the code.
    pub(crate) fn checkpoint(&mut self) -> bool {
        if !self.active {
            return false;
        }
        if self.tripped.is_none() {
            self.checkpoints = self.checkpoints.saturating_add(1);
            if self.checkpoints > self.checkpoints_max {
                self.tripped = Some(Trip::Work);
            } else if self.checkpoints > self.checkpoints_input_max {
                self.tripped = Some(Trip::InputWork);
            } else if Instant::now() >= self.deadline {
                self.tripped = Some(Trip::Time);
            }
        }
        self.tripped.is_some()
    }
}

/// The budgets of one evaluation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Allowance {
    pub(crate) checkpoints_max: u32,
    pub(crate) checkpoints_input_max: u32,
    pub(crate) time: Duration,
    pub(crate) kind: CodeKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CodeKind {
    Expression,
    Program,
    /// One call of a recall function's `fold`.
    Fold,
}

pub(crate) fn trip_error(trip: Trip, kind: CodeKind) -> ScriptError {
    let message = match (trip, kind) {
        (Trip::Work, CodeKind::Expression) => {
            format!(
                "The expression did more than {EXPRESSION_CHECKPOINTS_MAX} checkpoints of work."
            )
        }
        (Trip::InputWork, CodeKind::Expression) => format!(
            "The expressions of this input did more than {INPUT_CHECKPOINTS_MAX} checkpoints of work together."
        ),
        (Trip::Work | Trip::InputWork, CodeKind::Program) => {
            format!("The program did more than {PROGRAM_CHECKPOINTS_MAX} checkpoints of work.")
        }
        (Trip::Time, CodeKind::Expression) => format!(
            "The expressions of this input ran longer than {} seconds together.",
            INPUT_TIME_MS_MAX / 1_000
        ),
        (Trip::Time, CodeKind::Program) => {
            format!(
                "The program ran longer than {} seconds.",
                PROGRAM_TIME_MS_MAX / 1_000
            )
        }
        (Trip::Work | Trip::InputWork, CodeKind::Fold) => {
            format!("The fold did more than {FOLD_CHECKPOINTS_MAX} checkpoints of work.")
        }
        (Trip::Time, CodeKind::Fold) => {
            format!("The fold ran longer than {FOLD_TIME_MS_MAX} milliseconds.")
        }
    };
    let limit = if trip == Trip::Time {
        Limit::Time
    } else {
        Limit::Work
    };
    ScriptError::runtime(limit, message)
}

pub(crate) fn too_large_error(kind: CodeKind) -> ScriptError {
    let what = match kind {
        CodeKind::Expression => "The expression's value",
        CodeKind::Program => "The program's value",
        CodeKind::Fold => "The fold's value",
    };
    ScriptError::runtime(
        Limit::Memory,
        format!(
            "{what} is larger than {} MiB as JSON.",
            VALUE_TEXT_BYTES_MAX / (1024 * 1024)
        ),
    )
}

pub(crate) fn memory_error(kind: CodeKind) -> ScriptError {
    let what = match kind {
        CodeKind::Expression => "The expression",
        CodeKind::Program => "The program",
        CodeKind::Fold => "The fold",
    };
    ScriptError::runtime(
        Limit::Memory,
        format!("{what} used more than the sandbox's 64 MiB."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meter(checkpoints_max: u32, checkpoints_input_max: u32, time: Duration) -> Meter {
        Meter {
            active: true,
            checkpoints: 0,
            checkpoints_max,
            checkpoints_input_max,
            deadline: Instant::now() + time,
            tripped: None,
        }
    }

    #[test]
    fn the_251st_checkpoint_stops_an_expression() {
        let mut meter = meter(
            EXPRESSION_CHECKPOINTS_MAX,
            INPUT_CHECKPOINTS_MAX,
            Duration::from_secs(60),
        );
        for _ in 0..EXPRESSION_CHECKPOINTS_MAX {
            assert!(!meter.checkpoint());
        }
        assert!(meter.checkpoint());
        assert_eq!(meter.tripped, Some(Trip::Work));
        assert!(meter.checkpoint(), "once stopped, it stays stopped");
        assert_eq!(meter.checkpoints, EXPRESSION_CHECKPOINTS_MAX + 1);
    }

    #[test]
    fn what_is_left_of_the_input_stops_an_expression_first() {
        let mut meter = meter(EXPRESSION_CHECKPOINTS_MAX, 20, Duration::from_secs(60));
        for _ in 0..20 {
            assert!(!meter.checkpoint());
        }
        assert!(meter.checkpoint());
        assert_eq!(meter.tripped, Some(Trip::InputWork));
    }

    #[test]
    fn the_clock_stops_at_the_first_checkpoint_past_the_deadline() {
        let mut meter = meter(
            EXPRESSION_CHECKPOINTS_MAX,
            INPUT_CHECKPOINTS_MAX,
            Duration::ZERO,
        );
        assert!(meter.checkpoint());
        assert_eq!(meter.tripped, Some(Trip::Time));
        assert_eq!(
            trip_error(Trip::Time, CodeKind::Expression).status(),
            RUNTIME_ERROR_STATUS
        );
    }

    #[test]
    fn an_idle_meter_never_stops_anything() {
        let mut idle = Meter::idle();
        assert!((0..1_000).all(|_| !idle.checkpoint()));
    }
}
