//! Cutting a Markdown source into its YAML front matter and its body, keeping line numbers:
//! the opening `---` is line 1, so the front matter starts at line 2.
//!
//! The front matter opens with a first line of exactly `---` and closes at the next line of
//! exactly `---`; either may carry trailing spaces or tabs, and lines may end in `\n` or `\r\n`.
//! A UTF-8 byte order mark before the opening line is ignored. YAML's `...` does not close the
//! front matter: one way to write it is enough, and `...` inside reads as the end of the YAML
//! document, so text after it is refused as a second document.

use crate::issue::Issue;
use crate::position::Position;
use crate::texts;
use crate::yaml::{YamlConfig, read_yaml};
use crate::{Located, YamlRead};

/// The line that opens and closes the front matter.
const DELIMITER: &str = "---";

/// A Markdown source cut in two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrontMatter<'s> {
    /// The text between the two `---` lines, with its line endings.
    pub yaml: &'s str,
    /// Lines of the source before `yaml`: always 1, the opening `---`.
    pub yaml_line_offset: u32,
    /// Everything after the closing `---` line.
    pub body: &'s str,
    /// The line of the source where `body` starts, counted from 1.
    pub body_first_line: u32,
}

/// Cuts `source` at its front matter, or says why it cannot, at line 1.
pub fn split_front_matter(source: &str) -> Result<FrontMatter<'_>, Issue> {
    let source_without_bom = source.strip_prefix('\u{feff}').unwrap_or(source);
    let mut lines = Lines {
        rest: source_without_bom,
        offset: 0,
        line: 0,
    };
    let opening = lines.next().filter(|line| is_delimiter(line.text));
    let Some(opening) = opening else {
        return Err(Issue::at_line(1, "", texts::FRONT_MATTER_MISSING));
    };
    let yaml_start = opening.end;
    for line in lines.by_ref() {
        if is_delimiter(line.text) {
            let yaml = &source_without_bom[yaml_start..line.start];
            return Ok(FrontMatter {
                yaml,
                yaml_line_offset: 1,
                body: &source_without_bom[line.end..],
                body_first_line: line.number.saturating_add(1),
            });
        }
    }
    Err(Issue::at_line(1, "", texts::FRONT_MATTER_UNCLOSED))
}

/// A reasoning function's source read: its front matter as JSON with positions, its body
/// (the template) and every problem found in the front matter.
#[derive(Clone, Debug)]
pub struct MarkdownRead<'s> {
    /// The front matter; `null` at line 1 when there is none.
    pub front_matter: Located,
    pub body: &'s str,
    pub body_first_line: u32,
    pub issues: Vec<Issue>,
    /// See [`YamlRead::complete`]; false when the front matter is missing or unclosed.
    pub complete: bool,
}

/// Splits `source` and reads its front matter with `config` (whose `line_offset` is replaced by
/// the front matter's own). Use [`YamlConfig::front_matter`] for a reasoning function.
pub fn read_markdown<'s>(source: &'s str, config: &YamlConfig) -> MarkdownRead<'s> {
    match split_front_matter(source) {
        Ok(split) => {
            let config = YamlConfig {
                line_offset: split.yaml_line_offset,
                ..*config
            };
            let YamlRead {
                document,
                issues,
                complete,
            } = read_yaml(split.yaml, &config);
            MarkdownRead {
                front_matter: document,
                body: split.body,
                body_first_line: split.body_first_line,
                issues,
                complete,
            }
        }
        Err(issue) => {
            let config = YamlConfig {
                line_offset: 0,
                ..*config
            };
            let first = Position { line: 1, column: 1 };
            MarkdownRead {
                front_matter: read_yaml("", &config).document,
                body: source,
                body_first_line: 1,
                issues: vec![config.form.issue(first, "", issue.text)],
                complete: false,
            }
        }
    }
}

/// `---`, allowing trailing spaces and tabs.
fn is_delimiter(line: &str) -> bool {
    line.trim_end_matches([' ', '\t']) == DELIMITER
}

/// One line of the source: its text without the line ending, and its byte range with it.
struct Line<'s> {
    text: &'s str,
    number: u32,
    start: usize,
    end: usize,
}

/// The lines of a text, ending in `\n` or `\r\n`, with their byte ranges.
struct Lines<'s> {
    /// What is left to cut.
    rest: &'s str,
    /// Where `rest` starts in the text the iterator began with, in bytes.
    offset: usize,
    /// The number of the last line given.
    line: u32,
}

impl<'s> Iterator for Lines<'s> {
    type Item = Line<'s>;

    fn next(&mut self) -> Option<Line<'s>> {
        if self.rest.is_empty() {
            return None;
        }
        let start = self.offset;
        let length = self
            .rest
            .find('\n')
            .map_or(self.rest.len(), |newline| newline + 1);
        let (whole, rest) = self.rest.split_at(length);
        self.rest = rest;
        self.offset += length;
        self.line = self.line.saturating_add(1);
        let text = whole.strip_suffix('\n').unwrap_or(whole);
        Some(Line {
            text: text.strip_suffix('\r').unwrap_or(text),
            number: self.line,
            start,
            end: start + length,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_the_closing_line_and_counts_lines() {
        let split = split_front_matter("---\na: 1\nb: 2\n---\nBody\nmore\n").unwrap();
        assert_eq!(split.yaml, "a: 1\nb: 2\n");
        assert_eq!(split.yaml_line_offset, 1);
        assert_eq!(split.body, "Body\nmore\n");
        assert_eq!(split.body_first_line, 5);
    }

    #[test]
    fn keeps_crlf_inside_and_takes_trailing_blanks() {
        let split = split_front_matter("--- \r\na: 1\r\n---\t\r\nBody\r\n").unwrap();
        assert_eq!(split.yaml, "a: 1\r\n");
        assert_eq!(split.body, "Body\r\n");
        assert_eq!(split.body_first_line, 4);
    }

    #[test]
    fn a_source_that_ends_at_the_closing_line_has_an_empty_body() {
        let split = split_front_matter("---\n---").unwrap();
        assert_eq!((split.yaml, split.body, split.body_first_line), ("", "", 3));
    }

    #[test]
    fn refuses_what_is_not_front_matter() {
        let refused = |source| split_front_matter(source).unwrap_err().message();
        let missing = format!("Line 1: {}", texts::FRONT_MATTER_MISSING);
        let unclosed = format!("Line 1: {}", texts::FRONT_MATTER_UNCLOSED);
        assert_eq!(refused(""), missing);
        assert_eq!(refused("----\n---\n"), missing);
        assert_eq!(refused("--- # note\n---\n"), missing);
        assert_eq!(refused(" ---\n---\n"), missing);
        assert_eq!(refused("---"), unclosed);
        assert_eq!(refused("---\na: 1\n...\n"), unclosed);
        assert_eq!(refused("---\na: 1\n ---\n"), unclosed);
    }

    #[test]
    fn reads_the_front_matter_at_its_lines() {
        let source = "---\nmodel: a/b\nseed: .nan\n---\nHi\n";
        let read = read_markdown(source, &YamlConfig::front_matter());
        let messages: Vec<_> = read.issues.iter().map(Issue::message).collect();
        assert_eq!(messages, ["Line 3, /seed: Numbers must be finite."]);
        assert_eq!(read.front_matter.issue_at("/model", "Bad.").line, 2);
        assert_eq!((read.body, read.body_first_line), ("Hi\n", 5));
    }

    #[test]
    fn a_missing_front_matter_takes_the_configured_form() {
        let form = crate::IssueForm::LineAndColumn;
        let read = read_markdown(
            "Hi",
            &YamlConfig {
                form,
                ..YamlConfig::front_matter()
            },
        );
        let expected = format!("Line 1, column 1: {}", texts::FRONT_MATTER_MISSING);
        assert_eq!(read.issues[0].message(), expected);
        assert_eq!(read.front_matter.value(), &serde_json::Value::Null);
        assert!(!read.complete);
    }
}
