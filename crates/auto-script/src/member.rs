//! The quick answer to an expression that only reads a member of one of its variables:
//! `$data.x`, `$input.order.id`, `$item`.
//!
//! Such reads are most of a workflow's expressions (a call's `with`, an `if` on a field), and
//! what the sandbox does for one (finding the compiled function, handing it its frozen inputs,
//! calling it, reading the value back) is several thousand instructions where the read is a
//! few map lookups. The answer must be the sandbox's, so this read gives up, returning `None`
//! and leaving the expression to the sandbox, wherever JavaScript could answer otherwise than
//! a lookup in the variable's JSON:
//!
//! - a text that is not a `$` name and `.member`s of ASCII identifier characters, between
//!   spaces, tabs and line ends;
//! - a name the evaluation is not given (a `ReferenceError` in the sandbox);
//! - a step onto anything but an object that holds the member as its own: an array's or a
//!   string's `length`, a missing member (`undefined`), what `Object.prototype` holds, and
//!   `__proto__` in any case;
//! - a value with an object key of digits alone, which JavaScript orders before the others;
//! - a value past [`MEMBER_VALUE_DEPTH_MAX`] levels or [`MEMBER_VALUE_BYTES_MAX`] bytes of
//!   strings and keys, which the sandbox's own limits then judge.
//!
//! A number comes back as its trip through a double in the sandbox gives it ([`number_of`]):
//! `2.0` as `2`, an integer past 2^53 rounded.

use serde_json::{Map, Value as JsonValue};

use crate::convert::number_of;

/// The deepest value the quick read gives back; deeper ones go through the sandbox.
pub(crate) const MEMBER_VALUE_DEPTH_MAX: usize = 32;
/// The most bytes of strings and keys the quick read copies; larger values go through the
/// sandbox.
pub(crate) const MEMBER_VALUE_BYTES_MAX: usize = 64 * 1024;

/// What `expression` gives with `vars`, when it is a read of a member path and the sandbox
/// would give the same; `None` otherwise.
pub(crate) fn read(expression: &str, vars: &[(&str, &JsonValue)]) -> Option<JsonValue> {
    let text = expression.trim_matches([' ', '\t', '\n', '\r']);
    let mut steps = text.split('.');
    let name = steps.next()?;
    if !name.starts_with('$') || !is_identifier(name) {
        return None;
    }
    let &(_, mut value) = vars.iter().find(|(given, _)| *given == name)?;
    for member in steps {
        if !is_identifier(member) || member == "__proto__" {
            return None;
        }
        value = value.as_object()?.get(member)?;
    }
    let mut bytes = 0;
    copy(value, 0, &mut bytes)
}

/// An identifier of ASCII characters: a letter, `_` or `$`, then those or digits.
fn is_identifier(text: &str) -> bool {
    let mut chars = text.bytes();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || matches!(first, b'_' | b'$'))
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$'))
}

/// `value` as the sandbox would give it back, or `None` where it might not.
fn copy(value: &JsonValue, depth: usize, bytes: &mut usize) -> Option<JsonValue> {
    Some(match value {
        JsonValue::Null | JsonValue::Bool(_) => value.clone(),
        JsonValue::Number(n) => number_of(n.as_f64()?).0,
        JsonValue::String(text) => {
            count(bytes, text.len())?;
            value.clone()
        }
        JsonValue::Array(items) => {
            let depth = deeper(depth)?;
            let copied = items.iter().map(|item| copy(item, depth, bytes));
            JsonValue::Array(copied.collect::<Option<_>>()?)
        }
        JsonValue::Object(members) => {
            let depth = deeper(depth)?;
            let mut copied = Map::with_capacity(members.len());
            for (key, member) in members {
                if key.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                count(bytes, key.len())?;
                copied.insert(key.clone(), copy(member, depth, bytes)?);
            }
            JsonValue::Object(copied)
        }
    })
}

fn deeper(depth: usize) -> Option<usize> {
    (depth < MEMBER_VALUE_DEPTH_MAX).then_some(depth + 1)
}

fn count(bytes: &mut usize, more: usize) -> Option<()> {
    *bytes = bytes.saturating_add(more);
    (*bytes <= MEMBER_VALUE_BYTES_MAX).then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Reads at the limits: a value of `MEMBER_VALUE_DEPTH_MAX` levels and of
    /// `MEMBER_VALUE_BYTES_MAX` bytes is read, one past either is left to the sandbox.
    #[test]
    fn reads_stop_at_their_limits() {
        let nest = |levels: usize| (0..levels).fold(json!(1), |inner, _| json!([inner]));
        let at = nest(MEMBER_VALUE_DEPTH_MAX);
        assert_eq!(read("$data", &[("$data", &at)]), Some(at.clone()));
        let past = nest(MEMBER_VALUE_DEPTH_MAX + 1);
        assert_eq!(read("$data", &[("$data", &past)]), None);
        let at = json!({ "k": "x".repeat(MEMBER_VALUE_BYTES_MAX - 1) });
        assert_eq!(read("$data.k", &[("$data", &at)]), Some(at["k"].clone()));
        assert_eq!(read("$data", &[("$data", &at)]), Some(at.clone()));
        let past = json!({ "kk": "x".repeat(MEMBER_VALUE_BYTES_MAX - 1) });
        assert_eq!(read("$data", &[("$data", &past)]), None);
    }

    /// What the read takes and what it leaves to the sandbox.
    #[test]
    fn only_own_members_of_plain_objects_are_read() {
        let data = json!({
            "x": 1, "s": "text", "a": [1, 2], "o": { "b": { "c": true } }, "n": null,
            "f": 2.0, "big": 9_007_199_254_740_993_u64, "digits": { "1": 1, "b": 2 },
        });
        let vars = [("$data", &data)];
        assert_eq!(read(" $data.x\n", &vars), Some(json!(1)));
        assert_eq!(read("$data.o.b.c", &vars), Some(json!(true)));
        assert_eq!(read("$data.o", &vars), Some(json!({ "b": { "c": true } })));
        assert_eq!(read("$data.n", &vars), Some(JsonValue::Null));
        assert_eq!(read("$data.f", &vars), Some(json!(2)));
        assert_eq!(
            read("$data.big", &vars),
            Some(json!(9_007_199_254_740_992_u64))
        );
        for left in [
            "$data.missing",
            "$data.s.length",
            "$data.a.length",
            "$data.n.x",
            "$data.toString",
            "$data.__proto__",
            "$data.digits",
            "$data.x + 1",
            "$data['x']",
            "$data?.x",
            "$data.",
            "$input.x",
            "data.x",
            "\u{85}$data.x",
            "$data.é",
        ] {
            assert_eq!(read(left, &vars), None, "{left}");
        }
    }
}
