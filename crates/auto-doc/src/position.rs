//! Where each value of a read document sits in its source, so that a checker that finds a
//! problem at a JSON pointer can report the line (and column) the author sees.

use std::collections::HashMap;

use serde_json::Value;

use crate::issue::Issue;
use crate::pointer::parent_pointer;

/// A place in the saved source: both numbers count from 1, the column in Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

/// Where one value of the tree was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Place {
    /// The key that names the value in its mapping; `None` for an item of a list and the root.
    pub key: Option<Position>,
    /// The value's first character: its anchor or tag when it has one, its opening quote or
    /// bracket; for a block mapping its first key, for a block list its first `-` (or, for a
    /// list not indented under its key, its first item). A literal or folded block scalar
    /// starts on the line after its `|` or `>`.
    pub value: Position,
}

/// Which of the two pages' forms an issue takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum IssueForm {
    /// `Line 4, /config/temperature: Expected number.` (reasoning front matter).
    #[default]
    Line,
    /// `Line 7, column 12: at /do/1/loop/for: It needs in` (workflows).
    LineAndColumn,
}

impl IssueForm {
    /// An issue at `position` in this form.
    pub fn issue(self, position: Position, pointer: &str, text: impl Into<String>) -> Issue {
        match self {
            IssueForm::Line => Issue::at_line(position.line, pointer, text),
            IssueForm::LineAndColumn => Issue::at(position.line, position.column, pointer, text),
        }
    }
}

/// The place of every value of a document, by its escaped JSON pointer (`""` is the root).
#[derive(Clone, Debug, Default)]
pub struct Positions {
    places: HashMap<String, Place>,
}

impl Positions {
    /// The place of the value at `pointer`, when the document has one there.
    pub fn get(&self, pointer: &str) -> Option<&Place> {
        self.places.get(pointer)
    }

    /// The place of the value at `pointer`, or else of its nearest ancestor that exists, with
    /// the pointer found. `None` only for an empty table (a document never gives one).
    pub fn nearest<'p>(&self, pointer: &'p str) -> Option<(&'p str, &Place)> {
        let mut at = pointer;
        loop {
            if let Some(place) = self.places.get(at) {
                return Some((at, place));
            }
            at = parent_pointer(at)?;
        }
    }

    /// How many values have a place.
    pub fn len(&self) -> usize {
        self.places.len()
    }

    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// Every pointer with its place, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Place)> {
        self.places
            .iter()
            .map(|(pointer, place)| (pointer.as_str(), place))
    }

    /// Records a place; the first one recorded for a pointer stays.
    pub(crate) fn insert(&mut self, pointer: String, place: Place) {
        self.places.entry(pointer).or_insert(place);
    }
}

/// A JSON value read from a source, with where each of its values was written and the form its
/// issues take.
#[derive(Clone, Debug)]
pub struct Located {
    value: Value,
    positions: Positions,
    form: IssueForm,
    /// Where problems with no better place go: the start of the text that was read.
    start: Position,
}

impl Located {
    /// Invariant: `positions` has the root pointer `""`, or `start` stands in for it.
    pub(crate) fn new(
        value: Value,
        positions: Positions,
        form: IssueForm,
        start: Position,
    ) -> Self {
        Self {
            value,
            positions,
            form,
            start,
        }
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    pub fn into_value(self) -> Value {
        self.value
    }

    pub fn positions(&self) -> &Positions {
        &self.positions
    }

    pub fn form(&self) -> IssueForm {
        self.form
    }

    /// Where the value at `pointer` starts, or its nearest existing ancestor when the pointer
    /// names something the document lacks (a missing key: the mapping that should hold it).
    pub fn value_position(&self, pointer: &str) -> Position {
        self.positions
            .nearest(pointer)
            .map_or(self.start, |(_, place)| place.value)
    }

    /// Where the key naming the value at `pointer` is written; for an item of a list, the root
    /// or a missing pointer, where the value (or nearest ancestor's value) starts.
    pub fn key_position(&self, pointer: &str) -> Position {
        match self.positions.get(pointer) {
            Some(Place { key: Some(key), .. }) => *key,
            _ => self.value_position(pointer),
        }
    }

    /// An issue at the value of `pointer` (see [`Located::value_position`]), carrying
    /// `pointer` itself, in this document's form.
    pub fn issue_at(&self, pointer: &str, text: impl Into<String>) -> Issue {
        self.form.issue(self.value_position(pointer), pointer, text)
    }

    /// An issue at the key of `pointer` (see [`Located::key_position`]): for a key that is not
    /// allowed, say.
    pub fn issue_at_key(&self, pointer: &str, text: impl Into<String>) -> Issue {
        self.form.issue(self.key_position(pointer), pointer, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, column: u32) -> Position {
        Position { line, column }
    }

    fn sample(form: IssueForm) -> Located {
        let mut positions = Positions::default();
        positions.insert(
            String::new(),
            Place {
                key: None,
                value: at(2, 1),
            },
        );
        positions.insert(
            "/config".into(),
            Place {
                key: Some(at(4, 1)),
                value: at(5, 3),
            },
        );
        positions.insert(
            "/config/top_p".into(),
            Place {
                key: Some(at(5, 3)),
                value: at(5, 10),
            },
        );
        Located::new(Value::Null, positions, form, at(2, 1))
    }

    #[test]
    fn an_existing_pointer_takes_its_value_line() {
        let issue = sample(IssueForm::Line).issue_at("/config/top_p", "Expected number.");
        assert_eq!(issue.message(), "Line 5, /config/top_p: Expected number.");
    }

    #[test]
    fn a_missing_key_falls_back_to_the_nearest_ancestor() {
        let issue = sample(IssueForm::LineAndColumn).issue_at("/config/seed/x", "Bad.");
        assert_eq!(issue.message(), "Line 5, column 3: at /config/seed/x: Bad.");
        let issue = sample(IssueForm::Line).issue_at("/model", "It needs model.");
        assert_eq!(issue.message(), "Line 2, /model: It needs model.");
    }

    #[test]
    fn a_key_issue_takes_the_key_position() {
        let issue = sample(IssueForm::LineAndColumn).issue_at_key("/config", "Unknown key.");
        assert_eq!(
            issue.message(),
            "Line 4, column 1: at /config: Unknown key."
        );
        let issue = sample(IssueForm::LineAndColumn).issue_at_key("", "Root.");
        assert_eq!(issue.message(), "Line 2, column 1: Root.");
    }

    #[test]
    fn the_first_place_recorded_stays() {
        let mut positions = Positions::default();
        positions.insert(
            "/a".into(),
            Place {
                key: None,
                value: at(1, 1),
            },
        );
        positions.insert(
            "/a".into(),
            Place {
                key: None,
                value: at(9, 9),
            },
        );
        assert_eq!(positions.get("/a").map(|p| p.value), Some(at(1, 1)));
    }
}
