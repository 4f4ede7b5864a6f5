//! A strict YAML 1.2 reader: the parser's event stream, folded into a JSON value with the place
//! of every value, and every problem the pages forbid collected as an [`Issue`].
//!
//! Anchors, aliases, tags, a key written twice, a list or mapping as a key, more than one
//! document, numbers that are not finite and nesting past the caller's limit are all refused.
//! Plain scalars are resolved by the core schema here (see `scalar.rs`), not by a loader.
//!
//! **Architecture Invariant:** reading never recurses and never panics. The parser is a state
//! machine over an explicit stack, the builder below keeps its own stack of open collections
//! bounded by [`NESTING_DEPTH_CEILING`], and a subtree past the limit is skipped with a counter.

mod scalar;

use std::borrow::Cow;

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Span, Tag};
use serde_json::{Map, Value};

use crate::issue::Issue;
use crate::pointer::child_pointer;
use crate::position::{IssueForm, Located, Place, Position, Positions};
use crate::texts;
use scalar::{Resolved, resolve_plain};

/// "Nesting is limited to 72 levels." (reasoning page, "How a document is checked": the front
/// matter). A level is one mapping or list: the front matter's own mapping is level 1.
pub const FRONT_MATTER_NESTING_MAX: usize = 72;

/// "Nested values: 512 levels" (workflow page, "Limits"), counted as
/// [`FRONT_MATTER_NESTING_MAX`] is: one level per mapping or list.
pub const WORKFLOW_NESTING_MAX: usize = 512;

/// The deepest nesting any caller may ask for, whatever its configuration says: a
/// `serde_json::Value` is dropped recursively, so a tree deeper than this could overflow the
/// stack when it is freed.
pub const NESTING_DEPTH_CEILING: usize = 1024;

/// The parser reads brackets and braces (flow collections) at most this deep and reports
/// `recursion limit exceeded` past it, whatever our limit is.
const PARSER_FLOW_DEPTH_MAX: usize = 255;

/// The words the parser uses when flow collections nest past [`PARSER_FLOW_DEPTH_MAX`].
const PARSER_FLOW_DEPTH_WORDS: &str = "recursion limit exceeded";

/// The words the parser uses for an alias whose anchor was not defined before it.
const PARSER_UNKNOWN_ANCHOR_WORDS: &str = "while parsing node, found unknown anchor";

/// How a text is read and how its issues are reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct YamlConfig {
    /// Mappings and lists nested deeper than this are refused (capped at
    /// [`NESTING_DEPTH_CEILING`]).
    pub depth_max: usize,
    /// How many lines of the saved source come before the text: 1 for front matter, which
    /// starts after the opening `---`; 0 for a whole YAML document.
    pub line_offset: u32,
    /// Line only, or line and column.
    pub form: IssueForm,
}

impl YamlConfig {
    /// Front matter of a reasoning function: 72 levels, lines only, after the opening `---`.
    pub const fn front_matter() -> Self {
        Self {
            depth_max: FRONT_MATTER_NESTING_MAX,
            line_offset: 1,
            form: IssueForm::Line,
        }
    }

    /// A workflow document: 512 levels, lines and columns, from the first line.
    pub const fn workflow() -> Self {
        Self {
            depth_max: WORKFLOW_NESTING_MAX,
            line_offset: 0,
            form: IssueForm::LineAndColumn,
        }
    }
}

/// What reading a text gave: the value it could build, and every problem found.
#[derive(Clone, Debug)]
pub struct YamlRead {
    /// The value with the place of each of its values. An alias, a number that is not finite
    /// and a value nested too deep stand as `null`; of a key written twice the first stays;
    /// after a syntax error the value holds what came before it.
    pub document: Located,
    /// Every problem, in the order found (not sorted; [`crate::Issues`] sorts).
    pub issues: Vec<Issue>,
    /// False after a syntax error or a cut for depth: the tree then lacks parts of the text,
    /// so a checker that reports missing keys would report wrongly.
    pub complete: bool,
}

/// Reads one YAML document strictly. Never panics, whatever `text` holds.
pub fn read_yaml(text: &str, config: &YamlConfig) -> YamlRead {
    let mut builder = Builder::new(config);
    for event in Parser::new_from_str(text) {
        match event {
            Ok((event, span)) => builder.on_event(event, span),
            Err(error) => {
                builder.on_syntax_error(&error);
                break;
            }
        }
    }
    builder.finish()
}

/// Which kind of collection an event opens.
#[derive(Clone, Copy)]
enum Collection {
    Mapping,
    Sequence,
}

/// An open mapping or list, with the pointer of its place.
enum Frame {
    Sequence {
        pointer: String,
        items: Vec<Value>,
    },
    Mapping {
        pointer: String,
        entries: Map<String, Value>,
        key: KeyState,
    },
}

/// Where an open mapping stands between a key and its value.
enum KeyState {
    /// The next node is a key.
    Waiting,
    /// The next node is the value of this key.
    Ready { key: String, at: Position },
    /// The next node is the value of a key that was refused; it is read and left out.
    Dropped,
}

/// What the next node is for.
enum Slot {
    Key,
    Value {
        pointer: String,
        key: Option<Position>,
    },
    /// The value of a refused key, or a node of a later document.
    Ignored,
}

struct Builder<'c> {
    config: &'c YamlConfig,
    depth_max: usize,
    stack: Vec<Frame>,
    /// How many collections deep we are inside a subtree that is read and left out.
    skipping: usize,
    root: Option<Value>,
    positions: Positions,
    issues: Vec<Issue>,
    documents: usize,
    complete: bool,
}

impl<'c> Builder<'c> {
    fn new(config: &'c YamlConfig) -> Self {
        Self {
            config,
            depth_max: config.depth_max.min(NESTING_DEPTH_CEILING),
            stack: Vec::new(),
            skipping: 0,
            root: None,
            positions: Positions::default(),
            issues: Vec::new(),
            documents: 0,
            complete: true,
        }
    }

    fn on_event(&mut self, event: Event<'_>, span: Span) {
        let at = self.position(span.start);
        match event {
            Event::DocumentStart(_) => self.on_document_start(at),
            Event::Alias(_) => self.on_alias(at),
            Event::Scalar(text, style, anchor, tag) => {
                self.on_scalar(text, style, Properties::new(anchor, tag.as_ref(), at));
            }
            Event::SequenceStart(anchor, tag) => {
                self.on_collection_start(
                    Collection::Sequence,
                    Properties::new(anchor, tag.as_ref(), at),
                );
            }
            Event::MappingStart(anchor, tag) => {
                self.on_collection_start(
                    Collection::Mapping,
                    Properties::new(anchor, tag.as_ref(), at),
                );
            }
            Event::SequenceEnd | Event::MappingEnd => self.on_collection_end(),
            Event::Nothing | Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
        }
    }

    fn on_document_start(&mut self, at: Position) {
        self.documents += 1;
        if self.documents == 2 {
            self.report(at, "", texts::SEVERAL_DOCUMENTS);
        }
    }

    fn on_alias(&mut self, at: Position) {
        if self.skipping > 0 {
            return;
        }
        match self.next_slot() {
            Slot::Key => {
                let pointer = self.open_pointer().to_owned();
                self.report(at, &pointer, texts::ALIAS);
                self.set_key(KeyState::Dropped);
            }
            Slot::Value { pointer, key } => {
                self.report(at, &pointer, texts::ALIAS);
                self.place(pointer, key, at, Value::Null);
            }
            Slot::Ignored => self.end_dropped_value(),
        }
    }

    fn on_scalar(&mut self, text: Cow<'_, str>, style: ScalarStyle, properties: Properties) {
        if self.skipping > 0 {
            return;
        }
        match self.next_slot() {
            Slot::Key => self.on_key(text.into_owned(), properties),
            Slot::Value { pointer, key } => {
                self.report_properties(&properties, &pointer);
                let value = match style {
                    ScalarStyle::Plain => self.resolve(&text, properties.at, &pointer),
                    _ => Value::String(text.into_owned()),
                };
                self.place(pointer, key, properties.at, value);
            }
            Slot::Ignored => self.end_dropped_value(),
        }
    }

    fn on_key(&mut self, key: String, properties: Properties) {
        let pointer = child_pointer(self.open_pointer(), &key);
        self.report_properties(&properties, &pointer);
        let Some(Frame::Mapping { entries, .. }) = self.stack.last() else {
            return; // Invariant: a key slot exists only atop an open mapping.
        };
        if entries.contains_key(&key) {
            self.report(properties.at, &pointer, &texts::duplicate_key(&key));
            self.set_key(KeyState::Dropped);
        } else {
            self.set_key(KeyState::Ready {
                key,
                at: properties.at,
            });
        }
    }

    fn on_collection_start(&mut self, collection: Collection, properties: Properties) {
        if self.skipping > 0 {
            self.skipping += 1;
            return;
        }
        match self.next_slot() {
            Slot::Key => {
                let pointer = self.open_pointer().to_owned();
                self.report_properties(&properties, &pointer);
                self.report(properties.at, &pointer, texts::COMPLEX_KEY);
                self.set_key(KeyState::Dropped);
                self.skipping = 1;
            }
            Slot::Value { pointer, key } => self.open(collection, pointer, key, &properties),
            Slot::Ignored => {
                // The whole subtree is skipped, so the mapping may expect its next key now.
                self.end_dropped_value();
                self.skipping = 1;
            }
        }
    }

    fn open(
        &mut self,
        collection: Collection,
        pointer: String,
        key: Option<Position>,
        at: &Properties,
    ) {
        self.report_properties(at, &pointer);
        if self.stack.len() >= self.depth_max {
            self.report(at.at, &pointer, &texts::too_deep(self.depth_max));
            self.complete = false;
            self.place(pointer, key, at.at, Value::Null);
            self.skipping = 1;
            return;
        }
        self.positions
            .insert(pointer.clone(), Place { key, value: at.at });
        self.stack.push(match collection {
            Collection::Mapping => Frame::Mapping {
                pointer,
                entries: Map::new(),
                key: KeyState::Waiting,
            },
            Collection::Sequence => Frame::Sequence {
                pointer,
                items: Vec::new(),
            },
        });
    }

    fn on_collection_end(&mut self) {
        if self.skipping > 0 {
            self.skipping -= 1;
            return;
        }
        if let Some(frame) = self.stack.pop() {
            let value = match frame {
                Frame::Sequence { items, .. } => Value::Array(items),
                Frame::Mapping { entries, .. } => Value::Object(entries),
            };
            self.attach(value);
        }
    }

    fn on_syntax_error(&mut self, error: &ScanError) {
        let words = error.info();
        let text = match words {
            PARSER_FLOW_DEPTH_WORDS if self.depth_max < PARSER_FLOW_DEPTH_MAX => {
                texts::too_deep(self.depth_max)
            }
            PARSER_FLOW_DEPTH_WORDS => texts::FLOW_TOO_DEEP.to_owned(),
            // An alias of an anchor not yet seen is an alias all the same (often a plain value
            // that starts with `*`): say so rather than speak of anchors the author never wrote.
            PARSER_UNKNOWN_ANCHOR_WORDS => texts::ALIAS.to_owned(),
            _ => texts::invalid_yaml(words),
        };
        let at = self.position(*error.marker());
        self.report(at, "", &text);
        self.complete = false;
    }

    /// Closes what is still open (after a syntax error) and hands the value over.
    fn finish(mut self) -> YamlRead {
        self.skipping = 0;
        while !self.stack.is_empty() {
            self.on_collection_end();
        }
        let start = Position {
            line: self.config.line_offset.saturating_add(1),
            column: 1,
        };
        self.positions.insert(
            String::new(),
            Place {
                key: None,
                value: start,
            },
        );
        let value = self.root.take().unwrap_or(Value::Null);
        YamlRead {
            document: Located::new(value, self.positions, self.config.form, start),
            issues: self.issues,
            complete: self.complete,
        }
    }

    /// What the next node is for, from the innermost open collection.
    fn next_slot(&self) -> Slot {
        if self.documents > 1 {
            return Slot::Ignored;
        }
        match self.stack.last() {
            None if self.root.is_some() => Slot::Ignored,
            None => Slot::Value {
                pointer: String::new(),
                key: None,
            },
            Some(Frame::Sequence { pointer, items }) => Slot::Value {
                pointer: child_pointer(pointer, &items.len().to_string()),
                key: None,
            },
            Some(Frame::Mapping {
                key: KeyState::Waiting,
                ..
            }) => Slot::Key,
            Some(Frame::Mapping {
                key: KeyState::Dropped,
                ..
            }) => Slot::Ignored,
            Some(Frame::Mapping {
                pointer,
                key: KeyState::Ready { key, at },
                ..
            }) => Slot::Value {
                pointer: child_pointer(pointer, key),
                key: Some(*at),
            },
        }
    }

    /// Records a finished value's place and hands it to its collection.
    fn place(&mut self, pointer: String, key: Option<Position>, at: Position, value: Value) {
        self.positions.insert(pointer, Place { key, value: at });
        self.attach(value);
    }

    /// Hands a finished value to the innermost open collection, or makes it the root.
    fn attach(&mut self, value: Value) {
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame::Sequence { items, .. }) => items.push(value),
            Some(Frame::Mapping { entries, key, .. }) => {
                if let KeyState::Ready { key, .. } = std::mem::replace(key, KeyState::Waiting) {
                    entries.insert(key, value);
                }
            }
        }
    }

    /// After a refused key or a dropped value, the mapping's next node changes role.
    fn set_key(&mut self, state: KeyState) {
        if let Some(Frame::Mapping { key, .. }) = self.stack.last_mut() {
            *key = state;
        }
    }

    /// The value of a refused key was read: the mapping expects a key again.
    fn end_dropped_value(&mut self) {
        if let Some(Frame::Mapping {
            key: key @ KeyState::Dropped,
            ..
        }) = self.stack.last_mut()
        {
            *key = KeyState::Waiting;
        }
    }

    fn open_pointer(&self) -> &str {
        match self.stack.last() {
            Some(Frame::Sequence { pointer, .. } | Frame::Mapping { pointer, .. }) => pointer,
            None => "",
        }
    }

    fn resolve(&mut self, text: &str, at: Position, pointer: &str) -> Value {
        match resolve_plain(text) {
            Resolved::Value(value) => value,
            Resolved::NotFinite => {
                self.report(at, pointer, texts::NOT_FINITE);
                Value::Null
            }
        }
    }

    fn report_properties(&mut self, properties: &Properties, pointer: &str) {
        if properties.anchor {
            self.report(properties.at, pointer, texts::ANCHOR);
        }
        if properties.tag {
            self.report(properties.at, pointer, texts::TAG);
        }
    }

    fn report(&mut self, at: Position, pointer: &str, text: &str) {
        self.issues.push(self.config.form.issue(at, pointer, text));
    }

    /// The parser counts lines from 1 and columns from 0, both in characters.
    fn position(&self, marker: Marker) -> Position {
        let line = u32::try_from(marker.line()).unwrap_or(u32::MAX);
        let column = u32::try_from(marker.col()).unwrap_or(u32::MAX);
        Position {
            line: line.saturating_add(self.config.line_offset),
            column: column.saturating_add(1),
        }
    }
}

/// An anchor or tag written on a node, and where the node starts.
struct Properties {
    anchor: bool,
    tag: bool,
    at: Position,
}

impl Properties {
    /// The parser numbers anchors from 1; 0 means none.
    fn new(anchor_id: usize, tag: Option<&Cow<'_, Tag>>, at: Position) -> Self {
        Self {
            anchor: anchor_id != 0,
            tag: tag.is_some(),
            at,
        }
    }
}

#[cfg(test)]
mod tests;
