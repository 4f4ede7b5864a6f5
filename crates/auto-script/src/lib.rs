//! TypeScript for playbooks: the save-time check of expressions and programs, type stripping,
//! and the bounded QuickJS sandbox they run in.
//!
//! - [`check_expression`] and [`check_program`] say, with the compiler's words and positions,
//!   why a text is not one expression or one module, or which free name its place lacks.
//! - [`strip_expression`] and [`strip_program`] turn accepted TypeScript into JavaScript.
//! - [`Sandbox`] runs them: one prepared, frozen QuickJS context per thread, with the work,
//!   time and memory budgets of the workflow page, the recorded clock and JSON values in and out.
//!   [`evaluate`] and [`run_program`] use the calling thread's sandbox. A variable whose value
//!   stays the same from one evaluation to the next is handed out again as the frozen tree
//!   built from it, and an evaluation that could tell runs again on its own (see `inputs.rs`).
//!
//! What the engine cannot give exactly, and what is done instead:
//!
//! - QuickJS counts 10,000 steps per checkpoint per context, and the count carries over from
//!   one evaluation to the next, so an evaluation's first checkpoint may come early: the 251st
//!   checkpoint, which stops an expression, falls between its 2,500,001st and 2,510,000th step.
//! - Builtins count no steps (`Array(1e6).fill(0)`, `'x'.repeat(n)`, `indexOf`), and the
//!   clock is read at checkpoints only; memory (64 MiB) bounds what a builtin can do, and a
//!   loop over builtins reaches a checkpoint every 10,000 steps.
//! - The memory limit is an `InternalError` that `try` could catch; the guard makes every
//!   `catch` report it first, so the expression cannot catch it (see `guard.rs`).
//! - Promise stays an intrinsic (QuickJS aborts without it) but is no global, and async code is
//!   refused; a sandbox that still ends an evaluation with queued promise jobs is rebuilt.
//! - The compiler has no nesting limit of its own: texts are held to the document's 65,536
//!   bytes and compiled on a stack sized for their length (see `depth.rs`); QuickJS checks its
//!   own stack, which is held to 512 KiB.

mod budget;
mod bytecode;
mod check;
mod convert;
mod depth;
mod freeze;
mod guard;
mod inputs;
mod library;
mod member;
mod plain;
mod position;
mod sandbox;
mod stack_top;
mod strip;
mod tangle;

pub use budget::{
    BRIEF_PROGRAM_CHECKPOINTS_MAX, BRIEF_PROGRAM_TIME_MS_MAX, CHECKPOINT_STEPS,
    COMPILED_CACHE_BYTES_MAX, COMPILED_CACHE_ENTRIES_MAX, EXPRESSION_CHECKPOINTS_MAX,
    EXPRESSION_ERROR_STATUS, FOLD_CHECKPOINTS_MAX, FOLD_TIME_MS_MAX, INPUT_CHECKPOINTS_MAX,
    INPUT_TIME_MS_MAX, InputBudget, Limit, PROGRAM_CHECKPOINTS_MAX, PROGRAM_TIME_MS_MAX,
    RUNTIME_ERROR_STATUS, SANDBOX_BYTES_MAX, SANDBOX_STACK_BYTES_MAX, ScriptError, VALUE_DEPTH_MAX,
    VALUE_TEXT_BYTES_MAX,
};
pub use check::{
    CheckTimedOut, DEFAULT_EXPORT_NOT_FUNCTION, DOCUMENT_CHECK_TIME_MS_MAX, DocumentCheck,
    ModuleShape, NO_DEFAULT_EXPORT, NO_MODULES, NOT_ONE_EXPRESSION, Place, RequiredExport,
    TOO_LONG, cannot_find_name, check_expression, check_module, check_program, export_not_function,
    export_not_value, missing_export,
};
pub use depth::{COMPILER_STACK_BYTES_BASE, COMPILER_STACK_BYTES_PER_TEXT_BYTE, SCRIPT_BYTES_MAX};
pub use guard::{NO_ASYNC, RESERVED_NAME};
pub use inputs::{INPUT_CACHE_NAMES_MAX, INPUT_CACHE_VALUES_MAX};
pub use library::{LIBRARY_GLOBALS, is_library_global};
pub use position::{Position, ScriptOrigin, ScriptProblem};
pub use sandbox::{ExportCall, Sandbox, evaluate, run_program, run_program_briefly, with_sandbox};
pub use strip::{STRIP_CACHE_ENTRIES_MAX, StrippedProgram, strip_expression, strip_program};
pub use tangle::{
    ANGLE_NESTING_MAX, ANGLE_TOO_DEEP, ARROW_HEADS_MAX, ARROW_HEADS_TOO_DEEP,
    SPECULATION_BYTES_MAX, SPECULATION_TOO_LONG,
};
