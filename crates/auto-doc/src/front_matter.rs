//! Cutting a Markdown source into its YAML front matter and its body, keeping line numbers:
//! the opening `---` is line 1, so the front matter starts at line 2.
//!
//! The front matter opens with a first line of exactly `---` and closes at the next line of
//! exactly `---`; either may carry trailing spaces or tabs, and lines may end in `\n` or `\r\n`.
//! A UTF-8 byte order mark before the opening line is ignored. YAML's `...` does not close the
//! front matter: one way to write it is enough, and `...` inside reads as the end of the YAML
//! document, so text after it is refused as a second document.

use crate::issue::Issue;
use crate::position::IssueForm;
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
                form: IssueForm::Line,
                ..*config
            };
            MarkdownRead {
                front_matter: read_yaml("", &config).document,
                body: source,
                body_first_line: 1,
                issues: vec![issue],
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
