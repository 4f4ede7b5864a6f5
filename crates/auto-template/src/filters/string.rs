//! String filters, as LiquidJS writes them. Lengths count Unicode scalar values.

use super::{Args, Budget, Result};
use crate::value::{Text, Value};

pub(super) fn apply<'a>(
    name: &str,
    input: &Value<'a>,
    args: &Args<'_, 'a>,
    budget: &mut Budget,
) -> Result<Option<Value<'a>>> {
    let text = || input.to_text();
    let value: Result<Value<'a>> = match name {
        "append" => {
            let (left, right) = (text(), args.text(0));
            Ok(concat(&[&left, &right], budget)?)
        }
        "prepend" => {
            let (left, right) = (text(), args.text(0));
            Ok(concat(&[&right, &left], budget)?)
        }
        "capitalize" => {
            let s = text();
            let mut chars = s.chars();
            Ok(match chars.next() {
                Some(first) => {
                    let rest = chars.as_str();
                    let mut out = String::with_capacity(s.len());
                    out.extend(first.to_uppercase());
                    if rest.is_ascii() {
                        let at = out.len();
                        out.push_str(rest);
                        out[at..].make_ascii_lowercase();
                    } else {
                        out.push_str(&rest.to_lowercase());
                    }
                    Value::string(out)
                }
                None => Value::string(""),
            })
        }
        "downcase" => Ok(Value::string(text().to_lowercase())),
        "upcase" => Ok(Value::string(text().to_uppercase())),
        "lstrip" => Ok(strip_with(&text(), args.get(0), true, false)),
        "rstrip" => Ok(strip_with(&text(), args.get(0), false, true)),
        "strip" => Ok(strip_with(&text(), args.get(0), true, true)),
        "strip_newlines" => Ok(Value::string(text().replace("\r\n", "").replace('\n', ""))),
        "squish" => Ok(Value::string(
            text().split_whitespace().collect::<Vec<_>>().join(" "),
        )),
        "normalize_whitespace" => Ok(Value::string(normalize_whitespace(&text()))),
        "remove" => Ok(Value::string(text().replace(&*args.text(0), ""))),
        "remove_first" => Ok(Value::string(text().replacen(&*args.text(0), "", 1))),
        "remove_last" => Ok(Value::string(replace_last(&text(), &args.text(0), ""))),
        "replace" => replace_all(&text(), &args.text(0), &args.text(1), budget),
        "replace_first" => {
            let (s, from, to) = (text(), args.text(0), args.text(1));
            budget.charge((s.len() + to.len()) as u64)?;
            Ok(Value::string(s.replacen(&*from, &to, 1)))
        }
        "replace_last" => {
            let (s, from, to) = (text(), args.text(0), args.text(1));
            budget.charge((s.len() + to.len()) as u64)?;
            Ok(Value::string(replace_last(&s, &from, &to)))
        }
        "split" => split(&text(), &args.text(0), budget),
        "truncate" => Ok(truncate(input, args)),
        "truncatewords" => Ok(truncatewords(&text(), args)),
        "number_of_words" => {
            let s = text();
            Ok(Value::Int(s.split_whitespace().count() as i64))
        }
        _ => return Ok(None),
    };
    value.map(Some)
}

/// Joins strings after charging their length, so a long result is refused before it is made.
pub(super) fn concat<'a>(parts: &[&str], budget: &mut Budget) -> Result<Value<'a>> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    budget.charge(len as u64)?;
    let mut out = String::with_capacity(len);
    parts.iter().for_each(|p| out.push_str(p));
    // The result is charged again by `apply`; take the first charge back.
    budget.charged = budget.charged.saturating_sub(len as u64);
    Ok(Value::string(out))
}

fn strip_with<'a>(s: &str, chars: Option<&Value<'a>>, start: bool, end: bool) -> Value<'a> {
    let set: Option<Vec<char>> = chars
        .filter(|c| c.is_truthy())
        .map(|c| c.to_text().chars().collect());
    let trimmed = match (&set, start, end) {
        (None, true, true) => s.trim(),
        (None, true, false) => s.trim_start(),
        (None, false, _) => s.trim_end(),
        (Some(set), true, true) => s.trim_matches(|c| set.contains(&c)),
        (Some(set), true, false) => s.trim_start_matches(|c| set.contains(&c)),
        (Some(set), false, _) => s.trim_end_matches(|c| set.contains(&c)),
    };
    Value::string(trimmed)
}

fn normalize_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

fn replace_last(s: &str, from: &str, to: &str) -> String {
    match s.rfind(from) {
        Some(at) => format!("{}{}{}", &s[..at], to, &s[at + from.len()..]),
        None => s.to_string(),
    }
}

fn replace_all<'a>(s: &str, from: &str, to: &str, budget: &mut Budget) -> Result<Value<'a>> {
    // JavaScript's split-and-join: an empty pattern goes between every character.
    let count = if from.is_empty() {
        s.chars().count().saturating_sub(1)
    } else {
        s.matches(from).count()
    };
    let size = s.len() as u64 + (count as u64).saturating_mul(to.len() as u64);
    budget.charge(size)?;
    budget.charged = budget.charged.saturating_sub(size);
    if from.is_empty() {
        let chars: Vec<String> = s.chars().map(String::from).collect();
        return Ok(Value::string(chars.join(to)));
    }
    Ok(Value::string(s.replace(from, to)))
}

fn split<'a>(s: &str, separator: &str, budget: &mut Budget) -> Result<Value<'a>> {
    budget.charge(s.chars().count() as u64)?;
    let mut parts: Vec<Value<'a>> = if separator.is_empty() {
        s.chars().map(|c| Value::string(c.to_string())).collect()
    } else {
        s.split(separator).map(Value::string).collect()
    };
    while parts.last().and_then(Value::as_str) == Some("") {
        parts.pop();
    }
    Ok(Value::array(parts))
}

fn truncate<'a>(input: &Value<'a>, args: &Args<'_, 'a>) -> Value<'a> {
    let s = input.to_text();
    let length = args
        .get(0)
        .map_or(50, |v| super::to_number(v).as_f64() as i64);
    let ellipsis: Text<'a> = args.get(1).map_or(Text::Borrowed("..."), Value::to_text);
    let chars = s.chars().count() as i64;
    if chars <= length {
        return input.clone();
    }
    let keep = length
        .saturating_sub(ellipsis.chars().count() as i64)
        .max(0) as usize;
    let mut out: String = s.chars().take(keep).collect();
    out.push_str(&ellipsis);
    Value::string(out)
}

fn truncatewords<'a>(s: &str, args: &Args<'_, 'a>) -> Value<'a> {
    let words = args
        .get(0)
        .map_or(15, |v| super::to_number(v).as_f64() as i64)
        .max(1) as usize;
    let ellipsis: Text<'a> = args.get(1).map_or(Text::Borrowed("..."), Value::to_text);
    let all: Vec<&str> = s.split_whitespace().collect();
    if all.len() <= words {
        return Value::string(s);
    }
    let mut out = all[..words].join(" ");
    out.push_str(&ellipsis);
    Value::string(out)
}
