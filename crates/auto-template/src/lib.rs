//! Liquid as the reasoning page defines it: a template is parsed to an AST with line numbers,
//! checked when it is saved (names, tags, filters, the system block, the limits), and rendered
//! against a run's input with limits on time, memory and size.
//!
//! The engine is our own (DESIGN.md, the `auto-template` row): it follows LiquidJS's semantics
//! within the page's rules. It does no I/O and reads no clock: the time limit is a closure the
//! caller passes in [`RenderLimits`], asked every [`CLOCK_CHECK_STEPS`] steps of work.
//!
//! Lines are counted from 1 at the first line of the template; the caller adds the offset of
//! the template in its document.

mod ast;
mod check;
mod expr;
mod filters;
mod lexer;
mod parser;
mod render;
mod value;

pub use check::{CheckConfig, check, check_with_roots};
pub use parser::parse;
pub use render::{RenderError, RenderErrorKind, RenderLimits, Rendered, render, render_with_roots};

use auto_doc::Issue;

/// "Length of the template: 65,536 characters. Refused when saved." (reasoning page, Limits.)
pub const TEMPLATE_CHARS_MAX: usize = 65_536;

/// "Names in tags and outputs: 1,000. Refused when saved." Every variable, property, filter
/// and keyword inside `{{ }}` and `{% %}` counts. (reasoning page, Limits.)
pub const TEMPLATE_NAMES_MAX: usize = 1_000;

/// "Time to render: 200 ms. The run ends as invalid_input." (reasoning page, Limits.)
pub const RENDER_TIME_MS_MAX: u64 = 200;

/// "Memory that filters and ranges may charge: 5,000,000 characters or items." Charged over
/// the whole render: each string a filter makes charges its characters, each list its items,
/// each range its items before the first is made. (reasoning page, Limits.)
pub const RENDER_CHARGE_MAX: u64 = 5_000_000;

/// "Rendered instructions, and rendered message: 200,000 characters each." (reasoning page,
/// Limits.)
pub const RENDERED_CHARS_MAX: usize = 200_000;

/// "A template that nests tags or parentheses more deeply than the engine can parse (about
/// 2,000 levels of tags) is refused when saved." Blocks nest at most this deep.
pub const TAG_NESTING_MAX: usize = 2_000;

/// Parentheses and brackets in one expression nest at most this deep (the page's "deeper than
/// the engine can parse").
pub const EXPRESSION_NESTING_MAX: usize = 64;

/// How many steps of work (nodes, loop iterations, filter calls) pass between two questions to
/// the caller's clock closure.
pub const CLOCK_CHECK_STEPS: u64 = 256;

/// The variables a reasoning template reads (reasoning page, The template).
pub const REASONING_ROOTS: [&str; 3] = ["input", "today", "now"];

/// A parsed template, ready to render any number of times.
#[derive(Debug, Clone)]
pub struct Template {
    pub(crate) nodes: Vec<ast::Node>,
    /// Bytes of text at the top level, reserved for the message before the render starts.
    pub(crate) text_bytes: usize,
}

impl Template {
    /// The line of the template's system block, when it has one: a host whose template is read
    /// by a person rather than sent to a model (an interaction's request) has no use for one.
    pub fn system_block_line(&self) -> Option<u32> {
        self.nodes.iter().find_map(|node| match node {
            ast::Node::System { line, .. } => Some(*line),
            _ => None,
        })
    }
}

/// One problem found in a template when it is saved.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TemplateProblem {
    /// Line in the template, counted from 1.
    pub line: u32,
    /// The problem, in words a user reads.
    pub text: String,
}

impl TemplateProblem {
    pub(crate) fn new(line: u32, text: impl Into<String>) -> Self {
        Self {
            line,
            text: text.into(),
        }
    }

    /// The problem as an issue of the document, whose template starts after `line_offset`
    /// lines (the front matter), under the pointer `path` (such as `/source`; empty for none).
    pub fn to_issue(&self, line_offset: u32, path: &str) -> Issue {
        Issue::at_line(
            self.line.saturating_add(line_offset),
            path,
            self.text.clone(),
        )
    }
}
