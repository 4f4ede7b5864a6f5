//! Inputs built once: a variable whose value is the same as in an earlier evaluation is handed
//! to the code as the same JavaScript value, built and frozen then, rather than built again.
//!
//! Building an input is most of what an evaluation costs (QuickJS defines every member anew),
//! and the expressions of a workflow read the same `$input`, `$data`, `$context` and
//! `$workflow` many times over. So the sandbox keeps, for each variable name, the last value it
//! was given with the frozen tree built from it, and hands that tree out again while the value
//! stays the same (compared member by member, in order, since order is what code sees).
//!
//! Frozen is not what the page promises: the code may write to its variables, each evaluation
//! on its own copy. The sandbox keeps that promise by running again, on inputs built for that
//! evaluation alone, any evaluation that could have told the difference:
//!
//! - Code that writes to a frozen value throws (expressions are strict), so an evaluation on
//!   kept inputs that fails is run again; one that succeeds wrote nothing to them.
//! - A `catch` (or a `finally`, which the guard gives a catch) could swallow such a throw, so
//!   an evaluation in which anything was caught is run again.
//! - `Object.isFrozen`, `getOwnPropertyDescriptor`, `Reflect.set` and the few other functions
//!   that answer differently for a frozen value without throwing mark the evaluation, which is
//!   run again (the prelude wraps them).
//!
//! Only a run out of time or work is not run again: the code behaved the same until then, and
//! running it again could only spend the same budget twice.
//!
//! Reading out is faster too: a kept object that the code hands back as it is (a filter's
//! items) is frozen, so it still holds what it was built from, and its JSON value is that
//! value, made as the walk out would make it, without reading it member by member.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use rquickjs::{Ctx, Persistent, Value};
use serde_json::Value as JsonValue;

use crate::convert::{Frozen, Node, array_index, decimal_len, number_of, quoted_len, to_js};

/// Values, leaves and containers, that the kept inputs may hold together. What they hold lives
/// in the sandbox's 64 MiB, about 100 bytes a value, so the kept inputs take at most a tenth
/// of it; a larger value is built for each evaluation as before.
pub const INPUT_CACHE_VALUES_MAX: usize = 65_536;
/// Variable names whose last value is kept.
pub const INPUT_CACHE_NAMES_MAX: usize = 16;

/// The identity of a JavaScript object: its address, which QuickJS never moves. rquickjs hashes
/// a value by its tag and its bits, which for an object are its address, so this hasher keeps
/// the last 64-bit word it is given.
#[derive(Default)]
struct Address(u64);

impl Hasher for Address {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _bytes: &[u8]) {}
    fn write_u64(&mut self, word: u64) {
        self.0 = word;
    }
}

/// A hash of an identity: addresses are aligned, so their bits are mixed before hashbrown
/// takes the low ones for the bucket and the high ones for the tag.
#[derive(Default)]
pub(crate) struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        let mixed = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        mixed ^ (mixed >> 29)
    }
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }
    fn write_u64(&mut self, word: u64) {
        self.0 = word;
    }
}

pub(crate) fn identity(value: &Value<'_>) -> u64 {
    let mut address = Address::default();
    value.hash(&mut address);
    address.finish()
}

/// What reading a kept container back gives: the bytes of its JSON text, the levels it nests,
/// and whether its value reads back as it is (its numbers as the engine holds them and no
/// array-index names, which the engine puts first).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Measure {
    pub bytes: usize,
    pub height: usize,
    pub normal: bool,
}

impl Measure {
    /// Whether the value can be given back as it was built, read at `depth` open containers
    /// after `bytes` of text: it reads back the same, and nests and fits within the bounds.
    pub(crate) fn fits(self, depth: usize, bytes: usize) -> bool {
        self.normal
            && depth + self.height <= crate::budget::VALUE_DEPTH_MAX
            && bytes + self.bytes <= crate::budget::VALUE_TEXT_BYTES_MAX
    }
}

/// One variable's kept value and the frozen tree built from it.
struct Kept {
    id: u32,
    name: String,
    value: JsonValue,
    root: Persistent<Value<'static>>,
    /// The tree's containers in the order they were opened; the first is the root.
    nodes: Vec<Node>,
    /// The identities of `nodes`, to forget them with the value.
    identities: Vec<u64>,
    /// What reading each of `nodes` back gives.
    measures: Vec<Measure>,
    values: usize,
}

/// The kept inputs of one sandbox. Invariant: every object whose identity is in `containers`
/// is alive and unchanged, since the kept root holds it and it is frozen.
#[derive(Default)]
pub(crate) struct InputCache {
    kept: Vec<Kept>,
    /// Object identity: which kept value, and which of its nodes.
    containers: HashMap<u64, (u32, u32), BuildHasherDefault<IdentityHasher>>,
    values: usize,
    next_id: u32,
}

impl InputCache {
    /// The frozen tree of `value` for the variable `name`: the kept one when the value is the
    /// same as last time, else one built now and kept. `None` when the value is not kept (a
    /// leaf, or too large), so the caller builds it as usual.
    pub(crate) fn get<'js>(
        &mut self,
        ctx: &Ctx<'js>,
        name: &str,
        value: &JsonValue,
    ) -> rquickjs::Result<Option<Value<'js>>> {
        if !matches!(value, JsonValue::Array(_) | JsonValue::Object(_)) {
            return Ok(None);
        }
        if let Some(kept) = self.kept.iter().find(|kept| kept.name == name)
            && same(&kept.value, value)
        {
            return Ok(Some(kept.root.clone().restore(ctx)?));
        }
        self.forget(|kept| kept.name == name);
        let Some(values) = count_values(value, INPUT_CACHE_VALUES_MAX) else {
            return Ok(None);
        };
        while !self.kept.is_empty()
            && (self.values + values > INPUT_CACHE_VALUES_MAX
                || self.kept.len() >= INPUT_CACHE_NAMES_MAX)
        {
            let oldest = self.kept[0].id;
            self.forget(|kept| kept.id == oldest);
        }
        let mut nodes = Vec::new();
        let mut identities = Vec::new();
        let root = to_js(
            ctx,
            value,
            Some(&mut Frozen {
                nodes: &mut nodes,
                identities: &mut identities,
            }),
        )?;
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        for (node, identity) in identities.iter().enumerate() {
            self.containers
                .insert(*identity, (id, u32::try_from(node).unwrap_or(u32::MAX)));
        }
        self.values += values;
        self.kept.push(Kept {
            id,
            name: name.to_owned(),
            value: value.clone(),
            root: Persistent::save(ctx, root.clone()),
            measures: measure(value),
            nodes,
            identities,
            values,
        });
        Ok(Some(root))
    }

    /// The JSON value a kept object was built from, with what reading it back gives, if
    /// `identity` is one.
    pub(crate) fn source(&self, identity: u64) -> Option<(&JsonValue, Measure)> {
        let (id, node) = *self.containers.get(&identity)?;
        let kept = self.kept.iter().find(|kept| kept.id == id)?;
        let node = usize::try_from(node).ok()?;
        let measure = *kept.measures.get(node)?;
        // The positions from the root down, found from the node up; a shallow node, the
        // common one, needs no allocation.
        let mut shallow = [0_usize; 16];
        let mut deep = Vec::new();
        let mut depth = 0;
        let mut at = node;
        while let Some(step) = kept.nodes.get(at) {
            let Some(parent) = step.parent else { break };
            match shallow.get_mut(depth) {
                Some(slot) => *slot = step.position,
                None => deep.push(step.position),
            }
            depth += 1;
            at = usize::try_from(parent).ok()?;
        }
        let path = shallow[..depth.min(shallow.len())]
            .iter()
            .chain(&deep)
            .rev();
        let mut value = &kept.value;
        for position in path {
            value = match value {
                JsonValue::Array(items) => items.get(*position)?,
                JsonValue::Object(members) => members.values().nth(*position)?,
                _ => return None,
            };
        }
        Some((value, measure))
    }

    /// The values the kept inputs hold together.
    pub(crate) fn values(&self) -> usize {
        self.values
    }

    /// Forgets every kept value, as after the sandbox ran out of memory.
    pub(crate) fn clear(&mut self) {
        self.forget(|_| true);
    }

    fn forget(&mut self, which: impl Fn(&Kept) -> bool) {
        let containers = &mut self.containers;
        let values = &mut self.values;
        self.kept.retain(|kept| {
            if !which(kept) {
                return true;
            }
            for identity in &kept.identities {
                containers.remove(identity);
            }
            *values -= kept.values;
            false
        });
    }
}

/// What reading back each container of `value` gives, in the order [`to_js`] opens them
/// (a container before its members, members in order). Keeps its own stack.
fn measure(value: &JsonValue) -> Vec<Measure> {
    enum Open<'a> {
        Array(std::slice::Iter<'a, JsonValue>),
        Object(serde_json::map::Iter<'a>),
    }
    let mut measures: Vec<Measure> = Vec::new();
    // Each open container with its node and whether a member was taken from it.
    let mut stack: Vec<(Open<'_>, usize, bool)> = Vec::new();
    let mut next = Some(value);
    loop {
        // A leaf's bytes and whether it reads back as it is, or a container opened.
        let mut made: Option<Measure> = None;
        match next.take() {
            Some(JsonValue::Array(items)) => {
                stack.push((Open::Array(items.iter()), measures.len(), false));
                measures.push(opened());
            }
            Some(JsonValue::Object(members)) => {
                stack.push((Open::Object(members.iter()), measures.len(), false));
                measures.push(opened());
            }
            Some(leaf) => made = Some(leaf_measure(leaf)),
            None => {}
        }
        loop {
            let Some((open, node, taken)) = stack.last_mut() else {
                return measures;
            };
            let node = *node;
            let first = !std::mem::replace(taken, true);
            if let Some(child) = made.take() {
                let parent = &mut measures[node];
                parent.bytes += child.bytes;
                parent.height = parent.height.max(child.height + 1);
                parent.normal &= child.normal;
            }
            let child = match open {
                Open::Array(items) => items.next().inspect(|_| {
                    measures[node].bytes += usize::from(!first);
                }),
                Open::Object(members) => members.next().map(|(name, member)| {
                    let parent = &mut measures[node];
                    parent.bytes += quoted_len(name) + 1 + usize::from(!first);
                    parent.normal &= array_index(name).is_none();
                    member
                }),
            };
            if child.is_some() {
                next = child;
                break;
            }
            stack.pop();
            made = Some(measures[node]);
        }
    }
}

/// A container just opened: its brackets, one level.
fn opened() -> Measure {
    Measure {
        bytes: 2,
        height: 1,
        normal: true,
    }
}

/// A leaf's text bytes and whether it reads back as it is; a leaf adds no level.
fn leaf_measure(value: &JsonValue) -> Measure {
    let (bytes, normal) = match value {
        JsonValue::Null => (4, true),
        JsonValue::Bool(b) => (if *b { 4 } else { 5 }, true),
        JsonValue::String(text) => (quoted_len(text), true),
        JsonValue::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => (decimal_len(i64::from(i)), true),
            None => {
                let (read, bytes) = number_of(n.as_f64().unwrap_or(f64::NAN));
                (bytes, same(&read, value))
            }
        },
        JsonValue::Array(_) | JsonValue::Object(_) => (2, false),
    };
    Measure {
        bytes,
        height: 0,
        normal,
    }
}

/// The values (leaves and containers) of `value`, or `None` past `max`.
fn count_values(value: &JsonValue, max: usize) -> Option<usize> {
    let mut count = 0;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        count += 1;
        if count > max {
            return None;
        }
        match value {
            JsonValue::Array(items) => pending.extend(items),
            JsonValue::Object(members) => pending.extend(members.values()),
            _ => {}
        }
    }
    Some(count)
}

/// Whether two values build the same JavaScript value: the same members in the same order and
/// numbers of the same kind and bits (so `-0.0` differs from `0`, and `1.0` from `1`, which
/// only costs a rebuild).
fn same(a: &JsonValue, b: &JsonValue) -> bool {
    // Containers met below the top wait here; a flat value needs no allocation.
    let mut pending = Vec::new();
    let mut next = Some((a, b));
    while let Some((a, b)) = next.take().or_else(|| pending.pop()) {
        let equal = match (a, b) {
            (JsonValue::Null, JsonValue::Null) => true,
            (JsonValue::Bool(x), JsonValue::Bool(y)) => x == y,
            (JsonValue::Number(x), JsonValue::Number(y)) => same_number(x, y),
            (JsonValue::String(x), JsonValue::String(y)) => x == y,
            (JsonValue::Array(x), JsonValue::Array(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|(vx, vy)| same_leaf_or_push(vx, vy, &mut pending))
            }
            (JsonValue::Object(x), JsonValue::Object(y)) => {
                x.len() == y.len()
                    && x.iter().zip(y).all(|((kx, vx), (ky, vy))| {
                        kx == ky && same_leaf_or_push(vx, vy, &mut pending)
                    })
            }
            _ => false,
        };
        if !equal {
            return false;
        }
    }
    true
}

/// Numbers of the same kind and value, with `-0.0` apart from `0.0` (serde_json's equality
/// holds them equal, and the engine does not).
fn same_number(x: &serde_json::Number, y: &serde_json::Number) -> bool {
    x == y && (!x.is_f64() || x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits))
}

/// Compares two members at once when they are strings or small numbers, the common leaves;
/// else leaves them for [`same`]'s loop.
fn same_leaf_or_push<'a>(
    a: &'a JsonValue,
    b: &'a JsonValue,
    pending: &mut Vec<(&'a JsonValue, &'a JsonValue)>,
) -> bool {
    match (a, b) {
        (JsonValue::String(x), JsonValue::String(y)) => x == y,
        (JsonValue::Number(x), JsonValue::Number(y)) => same_number(x, y),
        _ => {
            pending.push((a, b));
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_same_value_is_the_same_members_in_the_same_order() {
        assert!(same(
            &json!({"a": [1, "x", null]}),
            &json!({"a": [1, "x", null]})
        ));
        assert!(!same(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})));
        assert!(!same(&json!([1, 2]), &json!([1, 2, 3])));
        assert!(!same(&json!(-0.0), &json!(0.0)));
        assert!(!same(&json!(1.0), &json!(1)));
        assert!(same(&json!(0.5), &json!(0.5)));
        assert!(same(&json!(u64::MAX), &json!(u64::MAX)));
        assert!(!same(&json!({"a": {"b": 1}}), &json!({"a": {"b": 2}})));
    }

    #[test]
    fn values_are_counted_up_to_the_bound() {
        assert_eq!(count_values(&json!({"a": [1, 2], "b": {}}), 10), Some(5));
        assert_eq!(count_values(&json!([1, 2, 3]), 3), None);
        assert_eq!(count_values(&json!([1, 2, 3]), 4), Some(4));
    }
}
