//! The JSON Schema subset of the format pages: which schemas may be saved
//! ([`check_schema`]), what the providers do with them ([`SchemaWarning`],
//! [`tool_schema_warnings`]), how inputs and answers are validated with our own words
//! ([`CompiledSchema`]), and the output shapes ([`shape_schema`], [`check_shape`]).
//!
//! Everything here is pure: no I/O, no clock, and no `$ref` ever leaves the document.
//!
//! Decisions the pages leave open, and why:
//! - A schema that [`check_schema`] accepts always compiles: the check builds the validator,
//!   and [`CompiledSchema::compile`] is the same check keeping what it built.
//! - `$id` and nested `$schema` are removed before the validator reads a schema, so
//!   `#/$defs/<name>` always means this document's root, as the check read it.
//! - A `$ref` is a URI fragment: its `%XX` escapes are undone before the name is looked up,
//!   and a fragment a URI cannot hold (a space) is refused rather than failing at run time.
//! - A schema deeper than [`SCHEMA_DEPTH_MAX`] is refused for that alone: the other checks
//!   recurse on depth.
//! - Provider warnings concern output schemas, the only ones sent as structured output; an
//!   input schema, or an output no model writes, is warned about only for keywords the
//!   runtime does not know. Each warning knows the providers it concerns, so a definition
//!   shows those its model can reach ([`SchemaWarning::reaches`]).
//! - What a provider receives is built here too ([`anthropic_schema`]), from the same list
//!   of bounds the warnings name.
//! - Google publishes no size or depth limit; [`GOOGLE_SCHEMA_BYTES_WARN`] and
//!   [`GOOGLE_SCHEMA_DEPTH_WARN`] are our thresholds for the page's "very large or deeply
//!   nested" caveat.

mod bytes;
mod check;
mod cycles;
mod draft;
mod formats;
mod limits;
mod messages;
mod pointer;
mod sent;
mod shapes;
mod validate;
mod walk;
mod warnings;

pub use bytes::json_bytes;
pub use check::{SchemaProblem, SchemaReport, SchemaRole, check_schema};
pub use draft::Draft;
pub use formats::{FORMATS, format_example, is_valid_format};
pub use limits::*;
pub use sent::anthropic_schema;
pub use shapes::{SHAPE_NAMES, check_shape, shape_output, shape_schema};
pub use validate::{
    CompileError, CompiledSchema, ValidationIssue, render_answer_issues, render_input_issues,
    shown_issues,
};
pub use warnings::{
    ANTHROPIC_PROVIDERS, GOOGLE_PROVIDERS, OPENAI_PROVIDERS, SchemaWarning, tool_schema_warnings,
};
