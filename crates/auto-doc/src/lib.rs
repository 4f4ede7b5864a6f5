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
