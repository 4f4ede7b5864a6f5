//! The JSON Schema subset of the format pages: which schemas may be saved
//! ([`check_schema`]), what the providers do with them ([`SchemaWarning`],
//! [`tool_schema_warnings`]), how inputs and answers are validated with our own words
//! ([`CompiledSchema`]), and the output shapes ([`shape_schema`], [`check_shape`]).
//!
//! Everything here is pure: no I/O, no clock, and no `$ref` ever leaves the document.

mod check;
mod cycles;
mod draft;
mod formats;
mod limits;
mod messages;
mod pointer;
mod shapes;
mod validate;
mod walk;
mod warnings;

pub use check::{SchemaProblem, SchemaReport, SchemaRole, check_schema};
pub use draft::Draft;
pub use formats::{FORMATS, format_example, is_valid_format};
pub use limits::*;
pub use shapes::{SHAPE_NAMES, check_shape, shape_schema};
pub use validate::{
    CompileError, CompiledSchema, ValidationIssue, render_answer_issues, render_input_issues,
};
pub use warnings::{
    ANTHROPIC_PROVIDERS, GOOGLE_PROVIDERS, OPENAI_PROVIDERS, SchemaWarning, tool_schema_warnings,
};
