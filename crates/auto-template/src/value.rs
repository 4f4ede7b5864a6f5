//! The values a render works with: the input's JSON, borrowed and never copied, and the
//! strings, numbers and lists the template makes. How they print, compare and count follows
//! LiquidJS (JavaScript's rules for numbers, `[object Object]` for an object).

use std::cmp::Ordering;
use std::fmt::Write as _;
use std::ops::Deref;
use std::rc::Rc;

use serde_json::Value as Json;

/// A string borrowed from the template or the input, or made during the render.
#[derive(Debug, Clone)]
pub(crate) enum Text<'a> {
    Borrowed(&'a str),
    Shared(Rc<str>),
}

impl Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            Text::Shared(s) => s,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Value<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Text<'a>),
    Array(Rc<Vec<Value<'a>>>),
    /// An object or a list of the input, read in place.
    Json(&'a Json),
    /// `(start..end)`, both included; its items are made only when it is read.
    Range(i64, i64),
    Empty,
    Blank,
}

/// Values nest at most this deep when printed, compared or written as JSON; the input's own
/// limit (512 levels) is below it, so only a value the template builds could reach it.
pub(crate) const VALUE_DEPTH_MAX: usize = 1_000;

/// A value turned into text for a filter stops growing past this many bytes: four bytes for
/// each character the render may charge, so the charge, not the memory, is what refuses it.
pub(crate) const TEXT_BYTES_MAX: usize = crate::RENDER_CHARGE_MAX as usize * 4;

impl<'a> Value<'a> {
    pub(crate) fn from_json(json: &'a Json) -> Self {
        match json {
            Json::Null => Value::Nil,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(s) => Value::Str(Text::Borrowed(s)),
            Json::Array(_) | Json::Object(_) => Value::Json(json),
        }
    }

    pub(crate) fn string(s: impl Into<Rc<str>>) -> Self {
        Value::Str(Text::Shared(s.into()))
    }

    pub(crate) fn array(items: Vec<Value<'a>>) -> Self {
        Value::Array(Rc::new(items))
    }

    pub(crate) fn is_truthy(&self) -> bool {
        !matches!(self, Value::Nil | Value::Bool(false))
    }

    pub(crate) fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn is_array(&self) -> bool {
        matches!(
            self,
            Value::Array(_) | Value::Json(Json::Array(_)) | Value::Range(..)
        )
    }

    /// How many items a list holds without making them.
    pub(crate) fn len_items(&self) -> Option<u64> {
        match self {
            Value::Array(items) => Some(items.len() as u64),
            Value::Json(Json::Array(items)) => Some(items.len() as u64),
            Value::Range(start, end) => Some(range_len(*start, *end)),
            _ => None,
        }
    }

    /// The items of a list; any other value is a list of itself (nil: of nothing), as LiquidJS's
    /// filters read it. The caller charges a range's length before asking.
    pub(crate) fn to_items(&self) -> Vec<Value<'a>> {
        match self {
            Value::Array(items) => items.as_ref().clone(),
            Value::Json(Json::Array(items)) => items.iter().map(Value::from_json).collect(),
            Value::Range(start, end) if start <= end => (*start..=*end).map(Value::Int).collect(),
            Value::Range(..) | Value::Nil => Vec::new(),
            other => vec![other.clone()],
        }
    }

    /// The item at `index`, counted from the end when negative.
    pub(crate) fn item(&self, index: i64) -> Option<Value<'a>> {
        let len = self.len_items()? as i64;
        let index = if index < 0 { index + len } else { index };
        if index < 0 || index >= len {
            return None;
        }
        match self {
            Value::Array(items) => items.get(index as usize).cloned(),
            Value::Json(Json::Array(items)) => items.get(index as usize).map(Value::from_json),
            Value::Range(start, _) => Some(Value::Int(start + index)),
            _ => None,
        }
    }

    /// A property: an object's own key, or a list's `size`, `first` and `last`, or a
    /// string's `size`. None when there is none: a missing field.
    pub(crate) fn property(&self, key: &str) -> Option<Value<'a>> {
        match self {
            Value::Json(Json::Object(map)) => match object_get(map, key) {
                Some(found) => Some(Value::from_json(found)),
                // Liquid's `size` of an object without its own `size` field: its field count.
                None if key == "size" => Some(Value::Int(map.len() as i64)),
                None => None,
            },
            _ if self.is_array() => match key {
                "size" => self.len_items().map(|n| Value::Int(n as i64)),
                "first" => self.item(0),
                "last" => self.item(-1),
                _ => None,
            },
            Value::Str(s) if key == "size" => Some(Value::Int(s.chars().count() as i64)),
            _ => None,
        }
    }

    /// The value as text, as `{{ }}` prints it, stopping once `out` holds more than
    /// `bytes_max` bytes (a list can repeat one long string many times).
    pub(crate) fn render_into(&self, out: &mut String, bytes_max: usize) {
        self.render_into_from(out, 0, bytes_max);
    }

    /// [`Self::render_into`] at the end of `out`, whose text from `start` on is the value's.
    pub(crate) fn render_into_from(&self, out: &mut String, start: usize, bytes_max: usize) {
        self.render_at(out, 0, start.saturating_add(bytes_max));
    }

    fn render_at(&self, out: &mut String, depth: usize, cap: usize) {
        if depth > VALUE_DEPTH_MAX || out.len() > cap {
            return;
        }
        match self {
            Value::Nil | Value::Empty | Value::Blank => {}
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                push_int(out, *i);
            }
            Value::Float(f) => out.push_str(&format_number(*f)),
            Value::Str(s) => out.push_str(s),
            Value::Json(Json::Object(_)) => out.push_str("[object Object]"),
            Value::Json(Json::Array(items)) => {
                items
                    .iter()
                    .for_each(|i| Value::from_json(i).render_at(out, depth + 1, cap));
            }
            Value::Json(scalar) => Value::from_json(scalar).render_at(out, depth, cap),
            Value::Array(items) => items.iter().for_each(|i| i.render_at(out, depth + 1, cap)),
            Value::Range(start, end) => {
                // A range prints as the list it stands for; its length was charged.
                for i in *start..=*end {
                    if out.len() > cap {
                        break;
                    }
                    push_int(out, i);
                }
            }
        }
    }

    pub(crate) fn to_text(&self) -> Text<'a> {
        match self {
            Value::Str(s) => s.clone(),
            other => {
                let mut out = String::new();
                other.render_into(&mut out, TEXT_BYTES_MAX);
                Text::Shared(out.into())
            }
        }
    }

    /// The value as a number, when it is one or a string that reads as one.
    pub(crate) fn to_number(&self) -> Option<Number> {
        match self {
            Value::Int(i) => Some(Number::Int(*i)),
            Value::Float(f) => Some(Number::Float(*f)),
            Value::Str(s) => parse_number(s.trim()),
            _ => None,
        }
    }
}

/// An object's field: a small object is searched in order, cheaper than hashing the key.
pub(crate) fn object_get<'a>(
    map: &'a serde_json::Map<String, Json>,
    key: &str,
) -> Option<&'a Json> {
    if map.len() <= 16 {
        map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

/// A whole number's digits, written without the formatting machinery (a loop prints many).
pub(crate) fn push_int(out: &mut String, i: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = i.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        out.push('-');
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
}

pub(crate) fn range_len(start: i64, end: i64) -> u64 {
    if end < start {
        0
    } else {
        (end as i128 - start as i128 + 1) as u64
    }
}

/// A number with Liquid's distinction between whole numbers and the rest, kept so that
/// `divided_by` divides two whole numbers as whole numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Number {
    Int(i64),
    Float(f64),
}

impl Number {
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(f) => f,
        }
    }

    pub(crate) fn into_value<'a>(self) -> Value<'a> {
        match self {
            Number::Int(i) => Value::Int(i),
            Number::Float(f) => Value::Float(f),
        }
    }
}

pub(crate) fn parse_number(text: &str) -> Option<Number> {
    if text.is_empty() {
        return None;
    }
    if let Ok(i) = text.parse::<i64>() {
        return Some(Number::Int(i));
    }
    let valid = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
    if valid {
        text.parse::<f64>().ok().map(Number::Float)
    } else {
        None
    }
}

/// A number as JavaScript's `String(n)` writes it: `1` for 1.0, `1e+21`, `1e-7`, `0.1`.
pub(crate) fn format_number(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if f == 0.0 {
        return "0".into();
    }
    // Rust's `{:e}` gives the shortest digits that read back to the same number, as
    // JavaScript's algorithm does; only the layout differs.
    let scientific = format!("{:e}", f.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let n = exponent + 1;
    let mut out = String::new();
    if f < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{}", if n > 0 { "+" } else { "-" }, (n - 1).abs());
    }
    out
}

/// `==` as LiquidJS reads it: numbers by value, strings by content, lists item by item,
/// objects by identity, and `empty` and `blank` by what they stand for.
pub(crate) fn equals(left: &Value<'_>, right: &Value<'_>) -> bool {
    equals_at(left, right, 0)
}

fn equals_at(left: &Value<'_>, right: &Value<'_>, depth: usize) -> bool {
    if depth > VALUE_DEPTH_MAX {
        return false;
    }
    match (left, right) {
        (Value::Empty, other) | (other, Value::Empty) => is_empty(other),
        (Value::Blank, other) | (other, Value::Blank) => is_blank(other),
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Str(a), Value::Str(b)) => **a == **b,
        (Value::Json(Json::Object(a)), Value::Json(Json::Object(b))) => std::ptr::eq(a, b),
        _ if left.is_array() && right.is_array() => {
            left.len_items() == right.len_items()
                && left.len_items().unwrap_or(0) <= 100_000
                && left
                    .to_items()
                    .iter()
                    .zip(right.to_items().iter())
                    .all(|(a, b)| equals_at(a, b, depth + 1))
        }
        _ => match (left.number(), right.number()) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        },
    }
}

impl Value<'_> {
    /// The value as a number only when it is one (no reading of strings).
    pub(crate) fn number(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            Value::Json(Json::Number(n)) => n.as_f64(),
            _ => None,
        }
    }
}

pub(crate) fn is_empty(value: &Value<'_>) -> bool {
    match value {
        Value::Str(s) => s.is_empty(),
        Value::Json(Json::Object(map)) => map.is_empty(),
        Value::Empty => true,
        _ => value.len_items() == Some(0),
    }
}

pub(crate) fn is_blank(value: &Value<'_>) -> bool {
    match value {
        Value::Nil | Value::Bool(false) | Value::Blank => true,
        Value::Str(s) => s.trim().is_empty(),
        _ => is_empty(value),
    }
}

/// `<` and friends: numbers by value, strings by their characters; anything else does not
/// compare, and the comparison is false.
pub(crate) fn compare(left: &Value<'_>, right: &Value<'_>) -> Option<Ordering> {
    match (left, right) {
        (Value::Str(a), Value::Str(b)) => Some((**a).cmp(&**b)),
        _ => left.number()?.partial_cmp(&right.number()?),
    }
}

/// `contains`: a substring of a string, an item of a list.
pub(crate) fn contains(left: &Value<'_>, right: &Value<'_>) -> bool {
    match left {
        Value::Str(s) => match right {
            Value::Nil => false,
            other => s.contains(&*other.to_text()),
        },
        _ if left.is_array() => left.to_items().iter().any(|item| equals(item, right)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_javascript_does() {
        let cases = [
            (1.0, "1"),
            (1.5, "1.5"),
            (-0.25, "-0.25"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (123456789.125, "123456789.125"),
            (1.2345e-10, "1.2345e-10"),
            (0.1 + 0.2, "0.30000000000000004"),
        ];
        for (number, text) in cases {
            assert_eq!(format_number(number), text, "{number}");
        }
    }
}
