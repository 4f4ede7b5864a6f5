//! Source text to JSON with positions, and the `Issue` type every checker reports with.
//!
//! Documents, templates and expressions are checked before anything is stored; each problem is
//! an [`Issue`] with its line, optional column, JSON pointer and message, collected in
//! [`Issues`], which sorts them in line order, reports a duplicate once and cuts the list at
//! [`ISSUES_SHOWN_MAX`] with a count line, as both format pages require.
//!
//! - [`read_yaml`] reads a YAML document strictly into a [`Located`] value: JSON with the line
//!   and column of every value's key and value, by JSON pointer.
//! - [`split_front_matter`] cuts a Markdown source into its front matter and body, and
//!   [`read_markdown`] does both steps for a reasoning function's source.
//! - [`texts`] holds the words of every issue reported here.
//!
//! Decisions the pages leave open, taken here:
//!
//! - A nesting level is one mapping or list: a front matter's own mapping is level 1, a scalar
//!   adds none. 72 levels are read, 73 refused (512 and 513 for a workflow).
//! - The parser reads brackets and braces only 255 deep; past that the text is refused with our
//!   nesting message (or, when the caller allows more than 255, with
//!   [`texts::FLOW_TOO_DEEP`]). Block style nests to the caller's limit.
//! - An integer past `u64` (or below `i64`) becomes the nearest 64-bit float, as JavaScript
//!   would read it; one past the float range is refused as not finite. Octal and hexadecimal
//!   integers take no sign (the core schema's rule), so `-0x1` is a string.
//! - A key is its text as written, whatever it would resolve to: `1: a` has the key `"1"`, and
//!   `1` and `"1"` in one mapping are the same key written twice.
//! - Only `---` closes front matter; YAML's `...` does not.
//! - After a syntax error reading stops (the parser cannot go on) and the issues found before
//!   it are kept; `complete` tells a checker the tree lacks the rest.

mod front_matter;
mod issue;
pub mod pointer;
mod position;
pub mod texts;
mod yaml;

pub use front_matter::{FrontMatter, MarkdownRead, read_markdown, split_front_matter};
pub use issue::{ISSUES_SHOWN_MAX, Issue, Issues};
pub use position::{IssueForm, Located, Place, Position, Positions};
pub use yaml::{
    FRONT_MATTER_NESTING_MAX, NESTING_DEPTH_CEILING, WORKFLOW_NESTING_MAX, YamlConfig, YamlRead,
    read_yaml,
};
