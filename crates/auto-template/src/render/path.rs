//! Reading a variable's path: the loops' variables, the names the template assigned, the
//! host's variables; and, when a field is missing, its name and pointer for the error.

use serde_json::Value as Json;

use super::{RenderError, RenderErrorKind, Renderer};
use crate::ast::{Literal, Operand, Segment};
use crate::value::Value;

impl<'a> Renderer<'a, '_> {
    pub(crate) fn path(
        &mut self,
        root: &'a str,
        segments: &'a [Segment],
        line: u32,
        lenient: bool,
    ) -> Result<Value<'a>, RenderError> {
        let (mut value, consumed) = match self.lookup_root(root, segments, line, lenient)? {
            Some(found) => found,
            None if lenient => return Ok(Value::Nil),
            None => {
                let text = format!("{root} is read before the tag that creates it");
                return Err(RenderError::new(
                    line,
                    RenderErrorKind::UndefinedVariable,
                    text,
                ));
            }
        };
        // The field's name and pointer are written only when it is missing; an index read
        // from another variable is kept for that.
        let mut indices: Vec<Value<'a>> = Vec::new();
        for (at, segment) in segments.iter().enumerate().skip(consumed) {
            let next = match segment {
                Segment::Key(key) => value.property(key),
                Segment::Index(index) => {
                    let index = self.operand(index, line, lenient)?;
                    let next = match &index {
                        Value::Int(i) => value.item(*i),
                        other => value.property(&other.to_text()),
                    };
                    indices.push(index);
                    next
                }
            };
            value = match next {
                Some(next) => next,
                None if lenient => return Ok(Value::Nil),
                None => {
                    let (shown, pointer) = describe_path(root, &segments[consumed..=at], &indices);
                    return Err(self.missing(root, shown, pointer, line));
                }
            };
        }
        Ok(value)
    }

    fn missing(
        &self,
        root: &str,
        mut shown: String,
        mut pointer: String,
        line: u32,
    ) -> RenderError {
        // A loop's item read from the input is named by where it is in the input.
        let origin = self
            .loops
            .iter()
            .rev()
            .find(|l| l.binds(root))
            .and_then(|l| l.origin(root, &self.roots));
        if let Some((origin_root, origin_shown, origin_pointer)) = origin {
            shown = format!("{origin_shown}{}", &shown[root.len()..]);
            pointer = format!(
                "{origin_pointer}{}",
                &pointer[1 + escape_pointer(root).len()..]
            );
            let mut error = RenderError::new(
                line,
                RenderErrorKind::MissingField,
                format!("{shown} is missing from the {origin_root}"),
            );
            error.field_pointer = Some(pointer);
            return error;
        }
        // Only an object has fields to point at: `today.year` reads past a string.
        let is_object = self.roots.get(root).is_some_and(|json| json.is_object());
        if is_object && self.is_root(root) {
            let mut error = RenderError::new(
                line,
                RenderErrorKind::MissingField,
                format!("{shown} is missing from the {root}"),
            );
            error.field_pointer = Some(pointer);
            error
        } else {
            RenderError::new(
                line,
                RenderErrorKind::MissingField,
                format!("{shown} is missing"),
            )
        }
    }

    /// Whether `root` reads the host's variable rather than a name the template created.
    pub(crate) fn is_root(&self, root: &str) -> bool {
        !self.vars.contains_key(root)
            && !self.counters.contains_key(root)
            && !self.loops.iter().any(|l| l.binds(root))
    }

    /// The value a root name stands for, and how many segments reading it used.
    fn lookup_root(
        &mut self,
        root: &'a str,
        segments: &'a [Segment],
        line: u32,
        lenient: bool,
    ) -> Result<Option<(Value<'a>, usize)>, RenderError> {
        if let Some(found) = self.loop_variable(root, segments, line, lenient)? {
            return Ok(Some(found));
        }
        if let Some(value) = self.vars.get(root) {
            return Ok(Some((value.clone(), 0)));
        }
        if let Some(counter) = self.counters.get(root) {
            return Ok(Some((Value::Int(*counter), 0)));
        }
        Ok(self.roots.get(root).map(|json| (Value::from_json(json), 0)))
    }
}

/// Where a loop's collection is in the host's variables, when it is a plain path into one:
/// the root's name, the path as written and its pointer.
pub(crate) fn collection_origin(
    roots: &super::FastMap<&str, &Json>,
    shadowed: bool,
    operand: &Operand,
) -> Option<(String, String, String)> {
    let Operand::Path { root, segments } = operand else {
        return None;
    };
    if shadowed || !roots.contains_key(root.as_str()) {
        return None;
    }
    let mut indices = Vec::new();
    for segment in segments {
        match segment {
            Segment::Key(_) => {}
            Segment::Index(Operand::Literal(Literal::Int(i))) => indices.push(Value::Int(*i)),
            Segment::Index(_) => return None,
        }
    }
    let (shown, pointer) = describe_path(root, segments, &indices);
    Some((root.clone(), shown, pointer))
}

/// A path as the template wrote it (`input.items[2].name`) and as a JSON pointer
/// (`/input/items/2/name`), with the values its dynamic indices took.
fn describe_path(root: &str, segments: &[Segment], indices: &[Value<'_>]) -> (String, String) {
    let mut shown = root.to_string();
    let mut pointer = format!("/{}", escape_pointer(root));
    let mut indices = indices.iter();
    for segment in segments {
        let index = match segment {
            Segment::Key(key) => {
                shown.push('.');
                shown.push_str(key);
                pointer.push('/');
                pointer.push_str(&escape_pointer(key));
                continue;
            }
            Segment::Index(_) => indices.next().cloned().unwrap_or(Value::Nil),
        };
        match index {
            Value::Int(i) => {
                shown.push_str(&format!("[{i}]"));
                pointer.push_str(&format!("/{i}"));
            }
            other => {
                let key = other.to_text();
                shown.push_str(&format!("[\"{}\"]", &*key));
                pointer.push('/');
                pointer.push_str(&escape_pointer(&key));
            }
        }
    }
    (shown, pointer)
}

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
