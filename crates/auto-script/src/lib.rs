//! TypeScript for playbooks: the save-time check of expressions and programs, type stripping,
//! and the bounded QuickJS sandbox they run in.
//!
//! - [`check_expression`] and [`check_program`] say, with the compiler's words and positions,
//!   why a text is not one expression or one module, or which free name its place lacks.
//! - [`strip_expression`] and [`strip_program`] turn accepted TypeScript into JavaScript.
//! - [`Sandbox`] runs them: one prepared, frozen QuickJS context per thread, with the work,
//!   time and memory budgets of the workflow page, the recorded clock and JSON values in and out.

mod check;
mod guard;
mod library;
mod position;
mod sandbox;
mod strip;

pub use check::{
    CheckTimedOut, DEFAULT_EXPORT_NOT_FUNCTION, DOCUMENT_CHECK_TIME_MS_MAX, DocumentCheck,
    NO_DEFAULT_EXPORT, NO_MODULES, NOT_ONE_EXPRESSION, Place, cannot_find_name, check_expression,
    check_program,
};
pub use guard::{NO_ASYNC, RESERVED_NAME};
pub use library::{LIBRARY_GLOBALS, is_library_global};
pub use position::{Position, ScriptOrigin, ScriptProblem};
pub use sandbox::*;
pub use strip::{STRIP_CACHE_ENTRIES_MAX, StrippedProgram, strip_expression, strip_program};
