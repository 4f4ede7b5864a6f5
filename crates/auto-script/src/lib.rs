//! TypeScript for playbooks: the save-time check of expressions and programs, type stripping,
//! and the bounded QuickJS sandbox they run in.
//!
//! - [`check_expression`] and [`check_program`] say, with the compiler's words and positions,
//!   why a text is not one expression or one module, or which free name its place lacks.
//! - [`strip_expression`] and [`strip_program`] turn accepted TypeScript into JavaScript.

mod check;
mod library;
mod position;
mod strip;

pub use check::{
    CheckTimedOut, DEFAULT_EXPORT_NOT_FUNCTION, DOCUMENT_CHECK_TIME_MS_MAX, DocumentCheck,
    NO_DEFAULT_EXPORT, NO_MODULES, NOT_ONE_EXPRESSION, Place, cannot_find_name, check_expression,
    check_program,
};
pub use library::{LIBRARY_GLOBALS, is_library_global};
pub use position::{Position, ScriptOrigin, ScriptProblem};
pub use strip::{STRIP_CACHE_ENTRIES_MAX, StrippedProgram, strip_expression, strip_program};
