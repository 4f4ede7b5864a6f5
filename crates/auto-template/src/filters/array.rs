//! List filters, as LiquidJS writes them: a value that is not a list is read as a list of
//! itself, nil as an empty list. A property argument may be a dotted path (`"author.name"`);
//! an item without it reads as nil, as in LiquidJS.

use std::cmp::Ordering;
use std::collections::HashSet;

use serde_json::Value as Json;

use super::{Args, Budget, Result, to_number};
use crate::value::{Number, Value, compare, equals};

/// The filters on lists, one arm for each as the page lists them; that is why it is long.
pub(super) fn apply<'a>(
    name: &str,
    input: &Value<'a>,
    args: &Args<'_, 'a>,
    budget: &mut Budget,
) -> Result<Option<Value<'a>>> {
    let items = || input.to_items();
    let value: Result<Value<'a>> = match name {
        "join" => join(&items(), args, budget),
        "first" => Ok(first_or_last(input, 0)),
        "last" => Ok(first_or_last(input, -1)),
        "reverse" => {
            let mut items = items();
            items.reverse();
            Ok(Value::array(items))
        }
        "sort" => Ok(sort(items(), args.get(0), false)),
        "sort_natural" => Ok(sort(items(), args.get(0), true)),
        "size" => Ok(Value::Int(size(input))),
        "map" => {
            let path = args.text(0);
            Ok(Value::array(
                items().iter().map(|item| dig(item, &path)).collect(),
            ))
        }
        "sum" => Ok(sum(&items(), args.get(0))),
        "compact" => {
            let path = args.get(0).map(Value::to_text);
            let kept = items()
                .into_iter()
                .filter(|item| match &path {
                    Some(path) => !dig(item, path).is_nil(),
                    None => !item.is_nil(),
                })
                .collect();
            Ok(Value::array(kept))
        }
        "concat" => {
            let mut items = items();
            items.extend(args.get(0).map(Value::to_items).unwrap_or_default());
            Ok(Value::array(items))
        }
        "push" => {
            let mut items = items();
            items.push(args.get(0).cloned().unwrap_or(Value::Nil));
            Ok(Value::array(items))
        }
        "unshift" => {
            let mut items = items();
            items.insert(0, args.get(0).cloned().unwrap_or(Value::Nil));
            Ok(Value::array(items))
        }
        "pop" => {
            let mut items = items();
            items.pop();
            Ok(Value::array(items))
        }
        "shift" => {
            let mut items = items();
            if !items.is_empty() {
                items.remove(0);
            }
            Ok(Value::array(items))
        }
        "slice" => Ok(slice(input, args)),
        "where" | "reject" => {
            let include = name == "where";
            let property = args.get(0).cloned().unwrap_or(Value::Nil);
            let kept = items()
                .into_iter()
                .filter(|item| item_matches(item, &property, args.get(1)) == include)
                .collect();
            Ok(Value::array(kept))
        }
        "find" | "find_index" | "has" => {
            let property = args.get(0).cloned().unwrap_or(Value::Nil);
            let mut found = None;
            for (index, item) in items().into_iter().enumerate() {
                if has_no_properties(&item) {
                    return Ok(Some(Value::Nil));
                }
                if item_matches(&item, &property, args.get(1)) {
                    found = Some((index, item));
                    break;
                }
            }
            Ok(match (name, found) {
                ("has", found) => Value::Bool(found.is_some()),
                ("find", Some((_, item))) => item,
                ("find_index", Some((index, _))) => Value::Int(index as i64),
                _ => Value::Nil,
            })
        }
        "uniq" => Ok(uniq(items(), args.get(0))),
        "array_to_sentence_string" => {
            let connector = args
                .get(0)
                .map_or_else(|| "and".to_string(), |c| c.to_text().to_string());
            let words: Vec<String> = items().iter().map(js_string).collect();
            budget.charge(words.iter().map(|w| w.len() as u64 + 2).sum())?;
            Ok(match words.as_slice() {
                [] => Value::string(""),
                [one] => Value::string(one.as_str()),
                [a, b] => Value::string(format!("{a} {connector} {b}")),
                [rest @ .., last] => {
                    Value::string(format!("{}, {connector} {last}", rest.join(", ")))
                }
            })
        }
        _ => return Ok(None),
    };
    value.map(Some)
}

/// An item as JavaScript's `String()` writes it inside `Array.prototype.join`: a list's items
/// joined by commas, nil as nothing. (Printed by `{{ }}`, a list has no separators.)
fn js_string(item: &Value<'_>) -> String {
    js_string_at(item, 0)
}

fn js_string_at(item: &Value<'_>, depth: usize) -> String {
    if item.is_array() && depth < crate::value::VALUE_DEPTH_MAX {
        let parts: Vec<String> = item
            .to_items()
            .iter()
            .map(|i| js_string_at(i, depth + 1))
            .collect();
        return parts.join(",");
    }
    item.to_text().to_string()
}

/// An item's property along a dotted path; nil when it has none.
fn dig<'a>(item: &Value<'a>, path: &str) -> Value<'a> {
    let mut value = item.clone();
    for key in path.split('.') {
        match value.property(key) {
            Some(next) => value = next,
            None => return Value::Nil,
        }
    }
    value
}

/// An item Ruby Liquid cannot read a property of (nil, true, false): `find`, `find_index` and
/// `has` give nil when they come to one before a match, as Ruby Liquid does. (LiquidJS passes
/// over it; where no item matches, as in golden-liquid's cases, its `find` gives nil too.)
fn has_no_properties(item: &Value<'_>) -> bool {
    matches!(item, Value::Nil | Value::Bool(_))
}

/// Whether an item matches `where`, `reject`, `find`, `find_index` and `has`: its property
/// equals the value given, or, with no value (or nil), is truthy. As Ruby Liquid reads it, a
/// string item "has" a property that is a substring of it, and any other item matches a
/// property equal to it.
fn item_matches(item: &Value<'_>, property: &Value<'_>, expected: Option<&Value<'_>>) -> bool {
    let expected = expected.filter(|e| !e.is_nil());
    let value = match (item, property) {
        (Value::Str(s), Value::Str(p)) => {
            if s.contains(&**p) {
                property.clone()
            } else {
                Value::Nil
            }
        }
        _ if item.is_array() || matches!(item, Value::Json(_)) => dig(item, &property.to_text()),
        _ if expected.is_none() => return equals(item, property),
        _ => Value::Nil,
    };
    match expected {
        None => value.is_truthy(),
        Some(expected) => equals(&value, expected),
    }
}

fn join<'a>(items: &[Value<'a>], args: &Args<'_, 'a>, budget: &mut Budget) -> Result<Value<'a>> {
    let separator = match args.get(0) {
        None | Some(Value::Nil) => crate::value::Text::Borrowed(" "),
        Some(other) => other.to_text(),
    };
    let texts: Vec<String> = items.iter().map(js_string).collect();
    let size = texts.iter().map(|t| t.len() as u64).sum::<u64>()
        + (separator.len() as u64).saturating_mul(texts.len().saturating_sub(1) as u64);
    // Charged before the string is made: a list can repeat one long string many times.
    budget.charge(size)?;
    budget.charged = budget.charged.saturating_sub(size);
    let parts: Vec<&str> = texts.iter().map(String::as_str).collect();
    Ok(Value::string(parts.join(&separator)))
}

fn first_or_last<'a>(input: &Value<'a>, index: i64) -> Value<'a> {
    match input {
        Value::Str(s) => {
            let c = if index == 0 {
                s.chars().next()
            } else {
                s.chars().next_back()
            };
            c.map_or(Value::string(""), |c| Value::string(c.to_string()))
        }
        _ if input.is_array() => input.item(index).unwrap_or(Value::Nil),
        _ => Value::string(""),
    }
}

fn size(input: &Value<'_>) -> i64 {
    match input {
        Value::Str(s) => s.chars().count() as i64,
        Value::Json(Json::Object(map)) => map.len() as i64,
        other => other.len_items().unwrap_or(0) as i64,
    }
}

fn sum<'a>(items: &[Value<'a>], path: Option<&Value<'a>>) -> Value<'a> {
    let path = path.map(Value::to_text);
    let mut total = Number::Int(0);
    for item in items {
        let value = match &path {
            Some(path) => dig(item, path),
            None => item.clone(),
        };
        total = super::math::add(total, to_number(&value));
    }
    total.into_value()
}

fn sort<'a>(mut items: Vec<Value<'a>>, path: Option<&Value<'a>>, natural: bool) -> Value<'a> {
    let path = path.map(Value::to_text);
    let key = |item: &Value<'a>| match &path {
        Some(path) => dig(item, path),
        None => item.clone(),
    };
    let mut keyed: Vec<(Value<'a>, Value<'a>)> = items.drain(..).map(|i| (key(&i), i)).collect();
    keyed.sort_by(|(a, _), (b, _)| match (a.is_nil(), b.is_nil()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ if natural => a.to_text().to_lowercase().cmp(&b.to_text().to_lowercase()),
        _ => compare(a, b).unwrap_or(Ordering::Equal),
    });
    Value::array(keyed.into_iter().map(|(_, item)| item).collect())
}

/// A key under which JavaScript's `Set` would hold a value: by value for strings, numbers,
/// booleans and nil; by identity for the input's objects and lists.
#[derive(Hash, PartialEq, Eq)]
enum UniqKey {
    Nil,
    Bool(bool),
    Number(u64),
    Text(String),
    Object(usize),
}

fn uniq_key(value: &Value<'_>) -> UniqKey {
    match value {
        Value::Nil => UniqKey::Nil,
        Value::Bool(b) => UniqKey::Bool(*b),
        Value::Int(i) => UniqKey::Number((*i as f64).to_bits()),
        Value::Float(f) => UniqKey::Number(if *f == 0.0 { 0 } else { f.to_bits() }),
        Value::Str(s) => UniqKey::Text(s.to_string()),
        Value::Json(json) => UniqKey::Object(std::ptr::from_ref(*json) as usize),
        Value::Array(items) => UniqKey::Object(std::rc::Rc::as_ptr(items) as usize),
        other => UniqKey::Text(other.to_text().to_string()),
    }
}

fn uniq<'a>(items: Vec<Value<'a>>, path: Option<&Value<'a>>) -> Value<'a> {
    let path = path.map(Value::to_text);
    let mut seen = HashSet::new();
    let kept = items
        .into_iter()
        .filter(|item| {
            let key = match &path {
                Some(path) => dig(item, path),
                None => item.clone(),
            };
            seen.insert(uniq_key(&key))
        })
        .collect();
    Value::array(kept)
}

fn slice<'a>(input: &Value<'a>, args: &Args<'_, 'a>) -> Value<'a> {
    let begin = to_number(args.get(0).unwrap_or(&Value::Int(0))).as_f64() as i64;
    let length = args.get(1).map_or(1, |v| to_number(v).as_f64() as i64);
    match input {
        Value::Nil => Value::array(Vec::new()),
        _ if input.is_array() => {
            let len = input.len_items().unwrap_or(0) as i64;
            let begin = if begin < 0 { len + begin } else { begin };
            if begin < 0 || length < 0 {
                return Value::array(Vec::new());
            }
            // Only the items kept are made: JavaScript's slice(begin, begin + length).
            let end = begin.saturating_add(length).min(len);
            Value::array(
                (begin..end)
                    .filter_map(|i| input.item(i))
                    .collect::<Vec<_>>(),
            )
        }
        _ => {
            let text = input.to_text();
            let begin = if begin < 0 {
                text.chars().count() as i64 + begin
            } else {
                begin
            };
            if begin < 0 || length < 0 {
                return Value::string("");
            }
            if text.is_ascii() {
                let start = (begin as usize).min(text.len());
                let end = start.saturating_add(length as usize).min(text.len());
                return Value::string(&text[start..end]);
            }
            // The characters from `begin`, `length` of them, found without a list of them.
            let mut indices = text.char_indices().map(|(at, _)| at).skip(begin as usize);
            let Some(start) = indices.next() else {
                return Value::string("");
            };
            let end = if length == 0 {
                start
            } else {
                indices.nth((length - 1) as usize).unwrap_or(text.len())
            };
            Value::string(&text[start..end])
        }
    }
}
