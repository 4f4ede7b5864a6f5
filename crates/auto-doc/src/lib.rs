//! Source text to JSON with positions, and the `Issue` type every checker reports with.
//!
//! Documents, templates and expressions are checked before anything is stored; each problem is
//! an [`Issue`] with its line, optional column, JSON pointer and message, collected in
//! [`Issues`], which sorts them in line order, reports a duplicate once and cuts the list at
//! [`ISSUES_SHOWN_MAX`] with a count line, as both format pages require.

mod issue;

pub use issue::{ISSUES_SHOWN_MAX, Issue, Issues};
