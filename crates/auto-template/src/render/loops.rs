//! `for` and `tablerow`, and the variables they bring into scope (`forloop`, `tablerowloop`),
//! as LiquidJS runs them: `offset`, then `limit`, then `reversed`; `else` when the collection
//! is empty.

use serde_json::Value as Json;

use super::{Flow, RenderError, RenderErrorKind, Renderer};
use crate::ast::{Loop, Node, Segment};
use crate::value::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoopKind {
    For,
    Tablerow,
}

pub(crate) struct LoopScope<'a> {
    kind: LoopKind,
    /// Where the collection is in the host's variables (root, path, pointer), when `for` walks
    /// a list read straight from one; `source_index` is the item's place in that list.
    /// Kept as the collection's operand; its path is written only for an error.
    origin: Option<&'a crate::ast::Operand>,
    source_index: usize,
    variable: &'a str,
    collection_text: &'a str,
    item: Value<'a>,
    index: usize,
    length: usize,
    cols: usize,
}

impl<'a> LoopScope<'a> {
    /// Where the item `root` names is in the host's variables.
    pub(crate) fn origin(
        &self,
        root: &str,
        roots: &super::FastMap<&str, &Json>,
    ) -> Option<(String, String, String)> {
        if root != self.variable {
            return None;
        }
        let (origin_root, shown, pointer) =
            super::path::collection_origin(roots, false, self.origin?)?;
        let i = self.source_index;
        Some((
            origin_root,
            format!("{shown}[{i}]"),
            format!("{pointer}/{i}"),
        ))
    }

    pub(crate) fn binds(&self, name: &str) -> bool {
        name == self.variable
            || (self.kind == LoopKind::For && name == "forloop")
            || (self.kind == LoopKind::Tablerow && name == "tablerowloop")
    }

    fn property(&self, key: &str) -> Option<Value<'a>> {
        let (i, n) = (self.index as i64, self.length as i64);
        let cols = self.cols.max(1) as i64;
        Some(match key {
            "index" => Value::Int(i + 1),
            "index0" => Value::Int(i),
            "rindex" => Value::Int(n - i),
            "rindex0" => Value::Int(n - i - 1),
            "first" => Value::Bool(i == 0),
            "last" => Value::Bool(i == n - 1),
            "length" => Value::Int(n),
            "name" => Value::string(format!("{}-{}", self.variable, self.collection_text)),
            "col" if self.kind == LoopKind::Tablerow => Value::Int(i % cols + 1),
            "col0" if self.kind == LoopKind::Tablerow => Value::Int(i % cols),
            "col_first" if self.kind == LoopKind::Tablerow => Value::Bool(i % cols == 0),
            "col_last" if self.kind == LoopKind::Tablerow => Value::Bool(i % cols + 1 == cols),
            "row" if self.kind == LoopKind::Tablerow => Value::Int(i / cols + 1),
            _ => return None,
        })
    }
}

impl<'a> Renderer<'a, '_> {
    /// A loop's item, or its `forloop`/`tablerowloop` with the segments that read it.
    pub(crate) fn loop_variable(
        &mut self,
        root: &str,
        segments: &'a [Segment],
        line: u32,
        lenient: bool,
    ) -> Result<Option<(Value<'a>, usize)>, RenderError> {
        let Some(at) = self.loops.iter().rposition(|l| l.binds(root)) else {
            return Ok(None);
        };
        if root == self.loops[at].variable {
            return Ok(Some((self.loops[at].item.clone(), 0)));
        }
        let kind = self.loops[at].kind;
        let mut at = at;
        let mut used = 0;
        for segment in segments {
            let Segment::Key(key) = segment else { break };
            used += 1;
            if key == "parentloop" {
                match self.loops[..at].iter().rposition(|l| l.kind == kind) {
                    Some(parent) => at = parent,
                    None => return Ok(Some((Value::Nil, used))),
                }
                continue;
            }
            return match self.loops[at].property(key) {
                Some(value) => Ok(Some((value, used))),
                None if lenient => Ok(Some((Value::Nil, used))),
                None => Err(RenderError::new(
                    line,
                    RenderErrorKind::MissingField,
                    format!("{root}.{key} is missing"),
                )),
            };
        }
        Ok(Some((Value::string("[object Object]"), used)))
    }

    pub(crate) fn for_loop(
        &mut self,
        header: &'a Loop,
        body: &'a [Node],
        otherwise: &'a [Node],
        line: u32,
        last_line: &mut u32,
    ) -> Result<Flow, RenderError> {
        let collection = self.operand(&header.collection, line, false)?;
        let origin = match collection {
            Value::Json(Json::Array(_)) => {
                let shadowed = matches!(&header.collection, crate::ast::Operand::Path { root, .. } if !self.is_root(root));
                (!shadowed).then_some(&header.collection)
            }
            _ => None,
        };
        let mut items: Vec<(usize, Value<'a>)> =
            enumerable(&collection).into_iter().enumerate().collect();
        if items.is_empty() {
            return self.nodes(otherwise, last_line);
        }
        let continue_key = header.continue_key.as_str();
        let offset = if header.offset_continue {
            Some(
                self.continue_offsets
                    .get(continue_key)
                    .copied()
                    .unwrap_or(0) as i64,
            )
        } else {
            self.whole_number(header.offset.as_ref(), line)?
        };
        if let Some(offset) = offset {
            items = js_slice(items, offset, None);
        }
        if let Some(limit) = self.whole_number(header.limit.as_ref(), line)? {
            items = js_slice(items, 0, Some(limit));
        }
        if header.reversed {
            items.reverse();
        }
        let next_offset = offset.unwrap_or(0).max(0) as usize + items.len();
        self.continue_offsets.insert(continue_key, next_offset);
        let length = items.len();
        self.loops.push(LoopScope {
            kind: LoopKind::For,
            origin,
            source_index: 0,
            variable: &header.variable,
            collection_text: &header.collection_text,
            item: Value::Nil,
            index: 0,
            length,
            cols: 0,
        });
        let result = self.loop_body(items, body, line, last_line);
        self.loops.pop();
        result.map(|_| Flow::Normal)
    }

    fn loop_body(
        &mut self,
        items: Vec<(usize, Value<'a>)>,
        body: &'a [Node],
        line: u32,
        last_line: &mut u32,
    ) -> Result<(), RenderError> {
        for (index, (source_index, item)) in items.into_iter().enumerate() {
            self.step(line)?;
            let scope = self
                .loops
                .last_mut()
                .expect("Invariant: the loop's scope was pushed");
            scope.item = item;
            scope.index = index;
            scope.source_index = source_index;
            if let Flow::Break = self.nodes(body, last_line)? {
                break;
            }
        }
        Ok(())
    }

    pub(crate) fn tablerow(
        &mut self,
        header: &'a Loop,
        body: &'a [Node],
        line: u32,
        last_line: &mut u32,
    ) -> Result<Flow, RenderError> {
        let collection = self.operand(&header.collection, line, false)?;
        let mut items = enumerable(&collection);
        let offset = self
            .whole_number(header.offset.as_ref(), line)?
            .unwrap_or(0);
        let limit = self.whole_number(header.limit.as_ref(), line)?;
        let end = offset.saturating_add(limit.unwrap_or(items.len() as i64));
        items = js_slice(items, offset, Some(end));
        let length = items.len();
        let cols = match self.whole_number(header.cols.as_ref(), line)? {
            Some(cols) if cols > 0 => cols as usize,
            _ => length,
        };
        self.loops.push(LoopScope {
            kind: LoopKind::Tablerow,
            origin: None,
            source_index: 0,
            variable: &header.variable,
            collection_text: &header.collection_text,
            item: Value::Nil,
            index: 0,
            length,
            cols,
        });
        let result = self.tablerow_body(items, body, cols, line, last_line);
        self.loops.pop();
        result.map(|_| Flow::Normal)
    }

    fn tablerow_body(
        &mut self,
        items: Vec<Value<'a>>,
        body: &'a [Node],
        cols: usize,
        line: u32,
        last_line: &mut u32,
    ) -> Result<(), RenderError> {
        let any = !items.is_empty();
        for (index, item) in items.into_iter().enumerate() {
            self.step(line)?;
            let scope = self
                .loops
                .last_mut()
                .expect("Invariant: the loop's scope was pushed");
            scope.item = item;
            scope.index = index;
            let cols = cols.max(1);
            if index % cols == 0 {
                // Ruby Liquid's layout, which golden-liquid expects; LiquidJS writes no newlines.
                if index == 0 {
                    self.write("<tr class=\"row1\">\n", line)?;
                } else {
                    self.write(
                        &format!("</tr>\n<tr class=\"row{}\">", index / cols + 1),
                        line,
                    )?;
                }
            }
            self.write(&format!("<td class=\"col{}\">", index % cols + 1), line)?;
            let flow = self.nodes(body, last_line)?;
            self.write("</td>", line)?;
            if let Flow::Break = flow {
                break;
            }
        }
        if any {
            self.write("</tr>\n", line)?;
        }
        Ok(())
    }

    fn whole_number(
        &mut self,
        operand: Option<&'a crate::ast::Operand>,
        line: u32,
    ) -> Result<Option<i64>, RenderError> {
        let Some(operand) = operand else {
            return Ok(None);
        };
        let value = self.operand(operand, line, false)?;
        match value.to_number() {
            Some(n) => Ok(Some(n.as_f64().trunc() as i64)),
            None if value.is_nil() => Ok(None),
            None => Err(RenderError::new(
                line,
                RenderErrorKind::FilterRejected,
                "A loop's limit, offset and cols must be numbers",
            )),
        }
    }
}

/// What a loop walks, as LiquidJS's `toEnumerable` reads it: a list's items, an object's
/// `[key, value]` pairs, a non-empty string as one item, nothing for the rest.
fn enumerable<'a>(value: &Value<'a>) -> Vec<Value<'a>> {
    match value {
        Value::Json(Json::Object(map)) => map
            .iter()
            .map(|(k, v)| {
                Value::array(vec![
                    Value::Str(crate::value::Text::Borrowed(k)),
                    Value::from_json(v),
                ])
            })
            .collect(),
        Value::Str(s) if !s.is_empty() => vec![value.clone()],
        _ if value.is_array() => value.to_items(),
        _ => Vec::new(),
    }
}

/// JavaScript's `Array.prototype.slice(start, end)`: negative positions count from the end.
pub(crate) fn js_slice<T>(mut items: Vec<T>, start: i64, end: Option<i64>) -> Vec<T> {
    let len = items.len() as i64;
    let at = |i: i64| if i < 0 { (len + i).max(0) } else { i.min(len) };
    let start = at(start);
    let end = end.map_or(len, at);
    if end <= start {
        return Vec::new();
    }
    items.truncate(end as usize);
    items.drain(..start as usize);
    items
}
