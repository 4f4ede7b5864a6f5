//! JSON pointers (RFC 6901) and the depth of a JSON value.

use serde_json::Value;

/// `base` with one more segment, escaped as RFC 6901 asks (`~` as `~0`, `/` as `~1`).
pub(crate) fn push(base: &str, segment: &str) -> String {
    let mut out = String::with_capacity(base.len() + segment.len() + 1);
    out.push_str(base);
    out.push('/');
    for c in segment.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
    out
}

/// `base` with an array index appended.
pub(crate) fn push_index(base: &str, index: usize) -> String {
    format!("{base}/{index}")
}

/// One pointer segment with its escapes undone.
pub(crate) fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// The pointer of the first object or list that sits deeper than `max` levels, counting the
/// root container as level 1; `None` when nothing does. Iterative, so a hostile depth cannot
/// exhaust the stack.
pub(crate) fn first_too_deep(value: &Value, max: usize) -> Option<String> {
    // The common case, a value within the limit, needs no pointer: count levels alone.
    if depth(value) <= max {
        return None;
    }
    let mut stack: Vec<(&Value, String, usize)> = vec![(value, String::new(), 1)];
    while let Some((node, at, level)) = stack.pop() {
        let children: Vec<(&Value, String)> = match node {
            Value::Object(map) => map.iter().map(|(k, v)| (v, push(&at, k))).collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (v, push_index(&at, i)))
                .collect(),
            _ => continue,
        };
        if level > max {
            return Some(at);
        }
        for child in children.into_iter().rev() {
            stack.push((child.0, child.1, level + 1));
        }
    }
    None
}

/// How many levels of objects and lists a value nests (a scalar is 0).
pub(crate) fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    while let Some((node, level)) = stack.pop() {
        match node {
            Value::Object(map) => {
                deepest = deepest.max(level);
                stack.extend(map.values().map(|v| (v, level + 1)));
            }
            Value::Array(items) => {
                deepest = deepest.max(level);
                stack.extend(items.iter().map(|v| (v, level + 1)));
            }
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escapes_segments() {
        assert_eq!(push("/a", "b/c~d"), "/a/b~1c~0d");
        assert_eq!(unescape("b~1c~0d"), "b/c~d");
    }

    #[test]
    fn finds_the_first_container_too_deep() {
        let value = json!({"a": {"b": [1]}});
        assert_eq!(depth(&value), 3);
        assert_eq!(first_too_deep(&value, 3), None);
        assert_eq!(first_too_deep(&value, 2).as_deref(), Some("/a/b"));
        assert_eq!(depth(&json!(1)), 0);
    }
}
