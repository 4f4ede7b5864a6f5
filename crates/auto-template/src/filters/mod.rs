//! The filters: LiquidJS's standard set, checked by name and number of arguments when a
//! template is saved, and applied with a charge against the render's memory budget.
//!
//! Left out on purpose, each refused when saved with the reason: `sample` (random, so a run
//! would render differently each time), the `_exp` filters (their expression is a string the
//! save cannot check for names), `group_by` (it builds objects, which this engine does not),
//! and `sha256`/`hmac_sha256`.

mod array;
pub(crate) mod date;
mod encode;
mod math;
mod string;

use crate::ast::FilterCall;
use crate::value::{Number, Text, Value};

/// How a filter failed.
#[derive(Debug)]
pub(crate) enum FilterError {
    /// The filter rejects its value or arguments; the text says why.
    Invalid(String),
    /// The charge went over the render's limit.
    Charge,
}

/// The render's memory budget, and what filters may know of the run.
#[derive(Debug)]
pub(crate) struct Budget {
    pub charged: u64,
    pub max: u64,
    /// The run's start in seconds since 1970, for `"now" | date`.
    pub now_seconds: Option<i64>,
}

impl Budget {
    pub(crate) fn charge(&mut self, items: u64) -> Result<()> {
        self.charged = self.charged.saturating_add(items);
        if self.charged > self.max {
            Err(FilterError::Charge)
        } else {
            Ok(())
        }
    }
}

pub(crate) type Result<T> = std::result::Result<T, FilterError>;

/// Arguments of one call.
pub(crate) struct Args<'v, 'a> {
    pub positional: &'v [Value<'a>],
    pub named: &'v [(&'v str, Value<'a>)],
}

impl<'a> Args<'_, 'a> {
    pub(crate) fn get(&self, index: usize) -> Option<&Value<'a>> {
        self.positional.get(index)
    }

    pub(crate) fn named(&self, key: &str) -> Option<&Value<'a>> {
        self.named.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The argument as text; nil and absent read as empty.
    pub(crate) fn text(&self, index: usize) -> Text<'a> {
        self.get(index).map_or(Text::Borrowed(""), Value::to_text)
    }

    /// The argument as a number, as JavaScript's `+value || 0` reads it.
    pub(crate) fn number(&self, index: usize) -> Number {
        self.get(index).map_or(Number::Int(0), to_number)
    }
}

/// A value as a number, as LiquidJS's filters read it: not a number reads as 0.
pub(crate) fn to_number(value: &Value<'_>) -> Number {
    match value {
        Value::Bool(true) => Number::Int(1),
        // JavaScript reads a list through its text: `+[3]` is 3, `+[]` is 0, `+[1, 2]` is NaN.
        _ if value.is_array() => match value.len_items() {
            Some(1) => value
                .item(0)
                .map_or(Number::Int(0), |item| to_number(&item)),
            _ => Number::Int(0),
        },
        other => match other.to_number() {
            Some(Number::Float(f)) if f.is_nan() => Number::Int(0),
            Some(n) => n,
            None => Number::Int(0),
        },
    }
}

/// Name, fewest and most positional arguments.
const FILTERS: &[(&str, usize, usize)] = &[
    ("abs", 0, 0),
    ("append", 1, 1),
    ("array_to_sentence_string", 0, 1),
    ("at_least", 1, 1),
    ("at_most", 1, 1),
    ("base64_decode", 0, 0),
    ("base64_encode", 0, 0),
    ("base64_url_safe_decode", 0, 0),
    ("base64_url_safe_encode", 0, 0),
    ("capitalize", 0, 0),
    ("ceil", 0, 0),
    ("cgi_escape", 0, 0),
    ("compact", 0, 1),
    ("concat", 1, 1),
    ("date", 0, 1),
    ("date_to_long_string", 0, 2),
    ("date_to_rfc822", 0, 0),
    ("date_to_string", 0, 2),
    ("date_to_xmlschema", 0, 0),
    ("default", 0, 1),
    ("divided_by", 1, 1),
    ("downcase", 0, 0),
    ("escape", 0, 0),
    ("escape_once", 0, 0),
    ("find", 1, 2),
    ("find_index", 1, 2),
    ("first", 0, 0),
    ("floor", 0, 0),
    ("has", 1, 2),
    ("inspect", 0, 1),
    ("join", 0, 1),
    ("json", 0, 1),
    ("jsonify", 0, 1),
    ("last", 0, 0),
    ("lstrip", 0, 1),
    ("map", 1, 1),
    ("minus", 1, 1),
    ("modulo", 1, 1),
    ("newline_to_br", 0, 0),
    ("normalize_whitespace", 0, 0),
    ("number_of_words", 0, 1),
    ("plus", 1, 1),
    ("pop", 0, 0),
    ("prepend", 1, 1),
    ("push", 1, 1),
    ("raw", 0, 0),
    ("reject", 1, 2),
    ("remove", 1, 1),
    ("remove_first", 1, 1),
    ("remove_last", 1, 1),
    ("replace", 1, 2),
    ("replace_first", 1, 2),
    ("replace_last", 1, 2),
    ("reverse", 0, 0),
    ("round", 0, 1),
    ("rstrip", 0, 1),
    ("shift", 0, 0),
    ("size", 0, 0),
    ("slice", 1, 2),
    ("slugify", 0, 2),
    ("sort", 0, 1),
    ("sort_natural", 0, 1),
    ("split", 1, 1),
    ("squish", 0, 0),
    ("strip", 0, 1),
    ("strip_html", 0, 0),
    ("strip_newlines", 0, 0),
    ("sum", 0, 1),
    ("times", 1, 1),
    ("to_integer", 0, 0),
    ("truncate", 0, 2),
    ("truncatewords", 0, 2),
    ("uniq", 0, 1),
    ("unshift", 1, 1),
    ("upcase", 0, 0),
    ("uri_escape", 0, 0),
    ("url_decode", 0, 0),
    ("url_encode", 0, 0),
    ("where", 1, 2),
    ("xml_escape", 0, 0),
];

/// LiquidJS filters this engine refuses, with the reason.
const REFUSED: &[(&str, &str)] = &[
    (
        "sample",
        "it picks at random, so a run would not render the same twice",
    ),
    (
        "where_exp",
        "its expression is a string the save cannot check",
    ),
    (
        "reject_exp",
        "its expression is a string the save cannot check",
    ),
    (
        "group_by_exp",
        "its expression is a string the save cannot check",
    ),
    (
        "has_exp",
        "its expression is a string the save cannot check",
    ),
    (
        "find_exp",
        "its expression is a string the save cannot check",
    ),
    (
        "find_index_exp",
        "its expression is a string the save cannot check",
    ),
    (
        "group_by",
        "it builds objects; use map, where and uniq instead",
    ),
    ("sha256", "it is not offered"),
    ("hmac_sha256", "it is not offered"),
];

/// Whether a call names a filter that exists and gives it a number of arguments it takes.
pub(crate) fn check_call(call: &FilterCall) -> std::result::Result<(), String> {
    let name = call.name.as_str();
    if let Some((_, why)) = REFUSED.iter().find(|(n, _)| *n == name) {
        return Err(format!("The {name} filter is not available: {why}"));
    }
    let Some(&(_, min, max)) = FILTERS.iter().find(|(n, _, _)| *n == name) else {
        return Err(format!("Unknown filter {name}"));
    };
    let given = call.args.len();
    if given < min || given > max {
        let wanted = match (min, max) {
            (0, 0) => "no arguments".to_string(),
            (a, b) if a == b => format!("{a} argument{}", if a == 1 { "" } else { "s" }),
            (a, b) => format!("{a} to {b} arguments"),
        };
        return Err(format!("The {name} filter takes {wanted}, not {given}"));
    }
    for (key, _) in &call.named {
        let allowed = matches!((name, key.as_str()), ("default", "allow_false"));
        if !allowed {
            return Err(format!("The {name} filter takes no argument named {key}"));
        }
    }
    Ok(())
}

/// Applies one filter, then charges what it made.
pub(crate) fn apply<'a>(
    name: &str,
    input: Value<'a>,
    positional: &[Value<'a>],
    named: &[(&str, Value<'a>)],
    budget: &mut Budget,
) -> Result<Value<'a>> {
    let args = Args { positional, named };
    let mut result = string::apply(name, &input, &args, budget)?;
    if result.is_none() {
        result = array::apply(name, &input, &args, budget)?;
    }
    if result.is_none() {
        result = math::apply(name, &input, &args)?;
    }
    if result.is_none() {
        result = encode::apply(name, &input, &args, budget)?;
    }
    if result.is_none() {
        result = date::apply(name, &input, &args, budget)?;
    }
    let Some(result) = result else {
        return Err(FilterError::Invalid(format!("Unknown filter {name}")));
    };
    budget.charge(made(&result))?;
    Ok(result)
}

/// What a result holds that did not exist before: a new string's characters, a new list's
/// items. A value read in place from the input costs nothing.
fn made(value: &Value<'_>) -> u64 {
    match value {
        Value::Str(Text::Shared(s)) => s.chars().count() as u64,
        Value::Array(items) => items.len() as u64,
        _ => 0,
    }
}
