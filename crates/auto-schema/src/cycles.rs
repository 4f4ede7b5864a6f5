//! Loops through `$ref`: the ones the page refuses (no property or item in between) and the
//! recursion some providers refuse (any loop at all).

use std::collections::HashMap;

use serde_json::Value;

use crate::walk::{SchemaNode, children};

/// The keywords that apply a schema at the same place of the instance.
const IN_PLACE: &[&str] = &["allOf", "anyOf", "oneOf"];

/// One edge of the graph: where the keyword sits, and the node it leads to.
struct Edge {
    at: String,
    to: usize,
}

/// The JSON pointer a local `$ref` names, its URI escapes undone (`#/$defs/a%20b` gives
/// `/$defs/a b`); `None` when it is not a fragment, or not one a URI may hold.
pub(crate) fn ref_target(reference: &str) -> Option<String> {
    let fragment = reference.strip_prefix('#')?;
    let bytes = fragment.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = fragment.get(i + 1..i + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
            continue;
        }
        if !(b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&b)) {
            return None;
        }
        decoded.push(b);
        i += 1;
    }
    String::from_utf8(decoded).ok()
}

/// Every place where a definition loops back through `$ref`, `allOf`, `anyOf` or `oneOf`
/// with no property or item in between, as (pointer of the closing keyword, pointer of the
/// node it loops back to).
pub(crate) fn in_place_loops(nodes: &[SchemaNode<'_>]) -> Vec<(String, String)> {
    find_loops(nodes, false)
}

/// Every `$ref` (or keyword) that closes a loop of any kind: the schema is recursive.
pub(crate) fn recursive_loops(nodes: &[SchemaNode<'_>]) -> Vec<(String, String)> {
    find_loops(nodes, true)
}

fn find_loops(nodes: &[SchemaNode<'_>], through_children: bool) -> Vec<(String, String)> {
    let index: HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.pointer.as_str(), i))
        .collect();
    let edges: Vec<Vec<Edge>> = nodes
        .iter()
        .map(|n| edges_of(n, &index, through_children))
        .collect();
    let mut colour = vec![Colour::White; nodes.len()];
    let mut found = Vec::new();
    for start in 0..nodes.len() {
        if colour[start] == Colour::White {
            depth_first(start, &edges, &mut colour, nodes, &mut found);
        }
    }
    found
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Colour {
    White,
    Grey,
    Black,
}

/// Iterative depth-first search; an edge into a grey node closes a loop.
fn depth_first(
    start: usize,
    edges: &[Vec<Edge>],
    colour: &mut [Colour],
    nodes: &[SchemaNode<'_>],
    found: &mut Vec<(String, String)>,
) {
    let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
    colour[start] = Colour::Grey;
    while let Some(top) = stack.last_mut() {
        let node = top.0;
        let Some(edge) = edges[node].get(top.1) else {
            colour[node] = Colour::Black;
            stack.pop();
            continue;
        };
        top.1 += 1;
        match colour[edge.to] {
            Colour::Grey => found.push((edge.at.clone(), nodes[edge.to].pointer.clone())),
            Colour::White => {
                colour[edge.to] = Colour::Grey;
                stack.push((edge.to, 0));
            }
            Colour::Black => {}
        }
    }
}

fn edges_of(node: &SchemaNode<'_>, index: &HashMap<&str, usize>, all: bool) -> Vec<Edge> {
    let Value::Object(map) = node.value else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(to) = map
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(ref_target)
        .and_then(|target| index.get(target.as_str()))
    {
        out.push(Edge {
            at: format!("{}/$ref", node.pointer),
            to: *to,
        });
    }
    for child in children(node.value, &node.pointer) {
        let keyword = child.pointer[node.pointer.len() + 1..]
            .split('/')
            .next()
            .unwrap_or("");
        let follows =
            all && !matches!(keyword, "$defs" | "definitions") || IN_PLACE.contains(&keyword);
        if follows && let Some(to) = index.get(child.pointer.as_str()) {
            out.push(Edge {
                at: child.pointer.clone(),
                to: *to,
            });
        }
    }
    out
}
