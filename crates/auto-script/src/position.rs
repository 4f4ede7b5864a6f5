//! Lines and columns: from byte offsets in a script's text, and from the script's text into the
//! document that holds it.
//!
//! Columns count Unicode scalar values from 1, as [`auto_doc::Issue`] does; a line ends at
//! `\n`, `\r\n` or a lone `\r`, as YAML reads them, so a position points where a person
//! editing the document sees it.

use auto_doc::Issue;

/// A line and a column, both counted from 1; the column in Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// Line, counted from 1.
    pub line: u32,
    /// Column in Unicode scalar values, counted from 1.
    pub column: u32,
}

impl Position {
    /// The line and column of byte `offset` in `text`; an offset past the end, or inside a
    /// character, is taken at the next character boundary or the end.
    pub fn of_offset(text: &str, offset: usize) -> Self {
        let mut walker = Walker::default();
        walker.walk_to(text, offset);
        walker.position
    }
}

/// Walks a text once, keeping the position of the next character.
#[derive(Debug)]
struct Walker {
    position: Position,
    /// Byte offset of the next character.
    offset: usize,
    after_carriage_return: bool,
}

impl Default for Walker {
    fn default() -> Self {
        Self {
            position: Position { line: 1, column: 1 },
            offset: 0,
            after_carriage_return: false,
        }
    }
}

impl Walker {
    /// Moves to byte `target` of `text`, or to the first character boundary past it, or the end.
    fn walk_to(&mut self, text: &str, target: usize) {
        let rest = text.get(self.offset..).unwrap_or_default();
        for character in rest.chars() {
            if self.offset >= target {
                break;
            }
            match character {
                '\n' if self.after_carriage_return => {}
                '\n' | '\r' => {
                    self.position.line = self.position.line.saturating_add(1);
                    self.position.column = 1;
                }
                _ => self.position.column = self.position.column.saturating_add(1),
            }
            self.after_carriage_return = character == '\r';
            self.offset += character.len_utf8();
        }
    }
}

/// Problems found at byte offsets of `text`, with their positions, computed in one pass over
/// the text: a text of 65,536 bytes may hold tens of thousands of problems.
pub(crate) fn locate_all(text: &str, found: Vec<(u32, String)>) -> Vec<ScriptProblem> {
    let mut order: Vec<usize> = (0..found.len()).collect();
    order.sort_by_key(|&index| found[index].0);
    let mut positions = vec![Position { line: 1, column: 1 }; found.len()];
    let mut walker = Walker::default();
    for index in order {
        walker.walk_to(text, found[index].0 as usize);
        positions[index] = walker.position;
    }
    found
        .into_iter()
        .zip(positions)
        .map(|((_, text), Position { line, column })| ScriptProblem { line, column, text })
        .collect()
}

/// Where a script's text starts in its document, so that a problem found in the text can be
/// reported at its place in the document.
///
/// The text must be a copy of the document's characters: in a YAML plain or quoted scalar that
/// spans lines, or a block scalar, each line after the first starts after the indentation the
/// scalar strips, which `continuation_indent` gives (0 when the text is taken verbatim).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptOrigin {
    /// Position of the script's first character in the document.
    pub start: Position,
    /// Columns before each later line of the script in the document.
    pub continuation_indent: u32,
}

impl ScriptOrigin {
    /// A script whose first character sits at `line`, `column` of its document, whose later
    /// lines are copied from the document without their first `continuation_indent` columns.
    pub fn new(line: u32, column: u32, continuation_indent: u32) -> Self {
        Self {
            start: Position { line, column },
            continuation_indent,
        }
    }

    /// The document position of `position`, a position in the script's text.
    pub fn locate(&self, position: Position) -> Position {
        if position.line <= 1 {
            Position {
                line: self.start.line,
                column: self
                    .start
                    .column
                    .saturating_add(position.column.saturating_sub(1)),
            }
        } else {
            Position {
                line: self.start.line.saturating_add(position.line - 1),
                column: self.continuation_indent.saturating_add(position.column),
            }
        }
    }
}

/// One problem a check found in a script, at its position in the script's text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ScriptProblem {
    /// Line in the script's text, counted from 1.
    pub line: u32,
    /// Column in the script's text, in Unicode scalar values, counted from 1.
    pub column: u32,
    /// The compiler's words, such as `Cannot find name '$nope'.`
    pub text: String,
}

impl ScriptProblem {
    pub(crate) fn at_offset(source: &str, offset: usize, text: impl Into<String>) -> Self {
        let Position { line, column } = Position::of_offset(source, offset);
        Self {
            line,
            column,
            text: text.into(),
        }
    }

    /// The problem's position in the script's text.
    pub fn position(&self) -> Position {
        Position {
            line: self.line,
            column: self.column,
        }
    }

    /// The problem as an issue of the document that holds the script, at the JSON pointer
    /// `path` of the value the script is written in.
    pub fn to_issue(&self, origin: &ScriptOrigin, path: &str) -> Issue {
        let Position { line, column } = origin.locate(self.position());
        Issue::at(line, column, path, self.text.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_count_characters_and_every_line_break() {
        let text = "aé\r\nb\rc\nd";
        assert_eq!(
            Position::of_offset(text, 0),
            Position { line: 1, column: 1 }
        );
        assert_eq!(
            Position::of_offset(text, 3),
            Position { line: 1, column: 3 }
        );
        assert_eq!(
            Position::of_offset(text, 5),
            Position { line: 2, column: 1 }
        );
        assert_eq!(
            Position::of_offset(text, 7),
            Position { line: 3, column: 1 }
        );
        assert_eq!(
            Position::of_offset(text, 9),
            Position { line: 4, column: 1 }
        );
        assert_eq!(
            Position::of_offset(text, 99),
            Position { line: 4, column: 2 }
        );
    }

    #[test]
    fn the_first_line_shifts_by_the_start_and_later_lines_by_the_indent() {
        let origin = ScriptOrigin::new(8, 13, 6);
        assert_eq!(
            origin.locate(Position {
                line: 1,
                column: 11
            }),
            Position {
                line: 8,
                column: 23
            }
        );
        assert_eq!(
            origin.locate(Position { line: 3, column: 2 }),
            Position {
                line: 10,
                column: 8
            }
        );
        let problem = ScriptProblem {
            line: 1,
            column: 11,
            text: "Cannot find name '$nope'.".into(),
        };
        assert_eq!(
            problem.to_issue(&origin, "/do/1/read/set/n").to_string(),
            "Line 8, column 23: at /do/1/read/set/n: Cannot find name '$nope'."
        );
    }
}
