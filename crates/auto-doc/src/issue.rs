//! One problem found in a document, and the ordered, deduplicated, capped list of them.
//!
//! The reasoning page renders an issue as `Line 4, /config/temperature: Expected number.`; the
//! workflow page as `Line 7, column 12: at /do/1/loop/for: It needs in`. Which form is chosen
//! follows from whether the checker knows a column: front matter checks report lines only,
//! workflow checks report both.

use std::fmt;

use serde::Serialize;

/// "A rejection lists at most 20 problems in line order, then one line that counts the rest,
/// such as Line 23: 5881 more issues are not shown." (reasoning page, "How a document is
/// checked"; the workflow page's rule is the same.)
pub const ISSUES_SHOWN_MAX: usize = 20;

/// One problem at one place of a document.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Issue {
    /// Line in the saved source, counted from 1 (the opening `---` of front matter is line 1).
    pub line: u32,
    /// Column in Unicode scalar values, counted from 1, when the checker knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// JSON pointer into the front matter or the document, with `~0` and `~1` escapes; empty
    /// when the problem has no place in the tree (a count line, a template's own line).
    pub path: String,
    /// The problem in the page's words, without its position.
    pub text: String,
}

impl Issue {
    /// An issue with a line and a pointer, rendered in the reasoning page's form.
    pub fn at_line(line: u32, path: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            line,
            column: None,
            path: path.into(),
            text: text.into(),
        }
    }

    /// An issue with a line, a column and a pointer, rendered in the workflow page's form.
    pub fn at(line: u32, column: u32, path: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            line,
            column: Some(column),
            path: path.into(),
            text: text.into(),
        }
    }

    /// The full message, as the pages show it.
    pub fn message(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.column, self.path.is_empty()) {
            (Some(column), false) => {
                write!(
                    f,
                    "Line {}, column {column}: at {}: {}",
                    self.line, self.path, self.text
                )
            }
            (Some(column), true) => write!(f, "Line {}, column {column}: {}", self.line, self.text),
            (None, false) => write!(f, "Line {}, {}: {}", self.line, self.path, self.text),
            (None, true) => write!(f, "Line {}: {}", self.line, self.text),
        }
    }
}

/// Issues as a checker collects them: in any order, possibly repeated.
#[derive(Clone, Debug, Default)]
pub struct Issues {
    found: Vec<Issue>,
}

impl Issues {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, issue: Issue) {
        self.found.push(issue);
    }

    pub fn extend(&mut self, issues: impl IntoIterator<Item = Issue>) {
        self.found.extend(issues);
    }

    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// How many distinct issues were found so far (before the cap).
    pub fn len(&self) -> usize {
        self.found.len()
    }

    /// Every distinct issue in line order (then column, then pointer, then text), without the
    /// cap. Checkers that merge issues from several sources use this.
    pub fn sorted(mut self) -> Vec<Issue> {
        self.found.sort_by(|a, b| {
            (a.line, a.column.unwrap_or(0), &a.path, &a.text).cmp(&(
                b.line,
                b.column.unwrap_or(0),
                &b.path,
                &b.text,
            ))
        });
        self.found.dedup();
        self.found
    }

    /// What a rejection shows: at most [`ISSUES_SHOWN_MAX`] issues in line order, each once,
    /// then `Line N: K more issues are not shown.` where N is the line of the first issue left
    /// out.
    pub fn into_shown(self) -> Vec<Issue> {
        let mut sorted = self.sorted();
        if sorted.len() > ISSUES_SHOWN_MAX {
            let hidden = sorted.len() - ISSUES_SHOWN_MAX;
            let first_hidden_line = sorted[ISSUES_SHOWN_MAX].line;
            sorted.truncate(ISSUES_SHOWN_MAX);
            let noun = if hidden == 1 {
                "issue is"
            } else {
                "issues are"
            };
            sorted.push(Issue::at_line(
                first_hidden_line,
                "",
                format!("{hidden} more {noun} not shown."),
            ));
        }
        sorted
    }
}

impl FromIterator<Issue> for Issues {
    fn from_iter<T: IntoIterator<Item = Issue>>(iter: T) -> Self {
        Self {
            found: iter.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_the_reasoning_form() {
        let issue = Issue::at_line(4, "/config/temperature", "Expected number.");
        assert_eq!(
            issue.message(),
            "Line 4, /config/temperature: Expected number."
        );
    }

    #[test]
    fn renders_the_workflow_form() {
        let issue = Issue::at(7, 12, "/do/1/loop/for", "It needs in");
        assert_eq!(
            issue.message(),
            "Line 7, column 12: at /do/1/loop/for: It needs in"
        );
        let issue = Issue::at(8, 23, "/do/1/read/set/n", "Cannot find name '$nope'.");
        assert_eq!(
            issue.message(),
            "Line 8, column 23: at /do/1/read/set/n: Cannot find name '$nope'."
        );
    }

    #[test]
    fn sorts_dedupes_and_caps_with_a_count_line() {
        let mut issues = Issues::new();
        for line in (1..=30).rev() {
            issues.push(Issue::at_line(line, "/a", "Bad."));
            issues.push(Issue::at_line(line, "/a", "Bad."));
        }
        let shown = issues.into_shown();
        assert_eq!(shown.len(), ISSUES_SHOWN_MAX + 1);
        assert_eq!(shown[0].line, 1);
        assert_eq!(shown[19].line, 20);
        assert_eq!(
            shown[20].message(),
            "Line 21: 10 more issues are not shown."
        );
    }

    #[test]
    fn twenty_issues_have_no_count_line() {
        let issues: Issues = (1..=20).map(|l| Issue::at_line(l, "/a", "Bad.")).collect();
        assert_eq!(issues.into_shown().len(), ISSUES_SHOWN_MAX);
        let issues: Issues = (1..=21).map(|l| Issue::at_line(l, "/a", "Bad.")).collect();
        let shown = issues.into_shown();
        assert_eq!(shown[20].message(), "Line 21: 1 more issue is not shown.");
    }
}
