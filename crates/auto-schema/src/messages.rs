//! Our own words for every way a value can fail a schema, in the two styles the pages use:
//! an answer's (`Expected a string in the format date, such as 2026-04-01`, after its
//! pointer) and an input's (`expected a date such as 2026-04-01`, after its field name).

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError};
use serde_json::Value;

use crate::formats::{format_example, format_noun};
use crate::limits::ENUM_VALUES_NAMED_MAX;

/// What went wrong, without where.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Fault {
    Type {
        expected: Vec<&'static str>,
        found: &'static str,
    },
    Required,
    NotAllowedProperty,
    Enum(Vec<Value>),
    Const(Value),
    Minimum(Value),
    ExclusiveMinimum(Value),
    Maximum(Value),
    ExclusiveMaximum(Value),
    MultipleOf(f64),
    MinLength(u64),
    MaxLength(u64),
    MinItems(u64),
    MaxItems(u64),
    UniqueItems,
    MinProperties(u64),
    MaxProperties(u64),
    Format(String),
    AnyOf,
    /// An `anyOf` or a `oneOf` none of whose forms matched, each form described.
    Forms(Vec<String>),
    OneOfNone,
    OneOfMany,
    Not,
    False,
    PropertyName,
    TooDeep(usize),
    Other,
}

/// The fault an error of the validator stands for. Required and additional properties come
/// back as [`Fault::Required`] and [`Fault::NotAllowedProperty`]; the caller moves their
/// pointer to the property.
pub(crate) fn fault_of(error: &ValidationError<'_>) -> Fault {
    let found = type_name(error.instance());
    match error.kind() {
        ValidationErrorKind::Type { kind } => Fault::Type {
            expected: expected_types(kind),
            found,
        },
        ValidationErrorKind::Required { .. } => Fault::Required,
        ValidationErrorKind::AdditionalProperties { .. } => Fault::NotAllowedProperty,
        ValidationErrorKind::Enum { options } => {
            Fault::Enum(options.as_array().cloned().unwrap_or_default())
        }
        ValidationErrorKind::Constant { expected_value } => {
            Fault::Const((**expected_value).clone())
        }
        ValidationErrorKind::Minimum { limit } => Fault::Minimum(limit.clone()),
        ValidationErrorKind::ExclusiveMinimum { limit } => Fault::ExclusiveMinimum(limit.clone()),
        ValidationErrorKind::Maximum { limit } => Fault::Maximum(limit.clone()),
        ValidationErrorKind::ExclusiveMaximum { limit } => Fault::ExclusiveMaximum(limit.clone()),
        ValidationErrorKind::MultipleOf { multiple_of } => Fault::MultipleOf(*multiple_of),
        ValidationErrorKind::MinLength { limit } => Fault::MinLength(*limit),
        ValidationErrorKind::MaxLength { limit } => Fault::MaxLength(*limit),
        ValidationErrorKind::MinItems { limit } => Fault::MinItems(*limit),
        ValidationErrorKind::MaxItems { limit } => Fault::MaxItems(*limit),
        ValidationErrorKind::UniqueItems => Fault::UniqueItems,
        ValidationErrorKind::MinProperties { limit } => Fault::MinProperties(*limit),
        ValidationErrorKind::MaxProperties { limit } => Fault::MaxProperties(*limit),
        ValidationErrorKind::Format { format } => Fault::Format(format.clone()),
        ValidationErrorKind::AnyOf { .. } => Fault::AnyOf,
        ValidationErrorKind::OneOfNotValid { .. } => Fault::OneOfNone,
        ValidationErrorKind::OneOfMultipleValid { .. } => Fault::OneOfMany,
        ValidationErrorKind::Not { .. } => Fault::Not,
        ValidationErrorKind::FalseSchema => Fault::False,
        ValidationErrorKind::PropertyNames { .. } => Fault::PropertyName,
        _ => Fault::Other,
    }
}

fn expected_types(kind: &TypeKind) -> Vec<&'static str> {
    match kind {
        TypeKind::Single(single) => vec![json_type_noun(*single)],
        TypeKind::Multiple(set) => set.iter().map(json_type_noun).collect(),
    }
}

/// Words for one form of an `anyOf` or `oneOf`, when it is simple enough to say: a type, a
/// type with a format, a const or an enum.
pub(crate) fn form_noun(form: &Value) -> Option<String> {
    let map = form.as_object()?;
    let known = ["type", "format", "const", "enum", "description", "title"];
    if !map.keys().all(|k| known.contains(&k.as_str())) {
        return None;
    }
    if let Some(value) = map.get("const") {
        return Some(format!("exactly {value}"));
    }
    if let Some(Value::Array(values)) = map.get("enum") {
        return Some(format!("one of {}", enum_list(values)));
    }
    let nouns: Vec<String> = match map.get("type")? {
        Value::String(name) => vec![type_word(name)?.to_owned()],
        Value::Array(names) => names
            .iter()
            .map(|n| n.as_str().and_then(type_word).map(str::to_owned))
            .collect::<Option<_>>()?,
        _ => return None,
    };
    match map.get("format").and_then(Value::as_str) {
        Some(format) => Some(format!("{} in the format {format}", either(&nouns))),
        None => Some(either(&nouns)),
    }
}

fn type_word(name: &str) -> Option<&'static str> {
    Some(match name {
        "null" => "null",
        "boolean" => "a boolean",
        "integer" => "a whole number",
        "number" => "a number",
        "string" => "a string",
        "array" => "a list",
        "object" => "an object",
        _ => return None,
    })
}

fn json_type_noun(kind: JsonType) -> &'static str {
    match kind {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean",
        JsonType::Integer => "a whole number",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "a list",
        JsonType::Object => "an object",
    }
}

/// The noun of a value's own type, as a "found" clause names it.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|f| f.fract() != 0.0) => {
            "a number with a fraction"
        }
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// "a, b or c".
fn either(nouns: &[String]) -> String {
    match nouns {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

fn plural(count: u64, one: &str, many: &str) -> String {
    if count == 1 {
        format!("1 {one}")
    } else {
        format!("{count} {many}")
    }
}

fn enum_list(values: &[Value]) -> String {
    let mut named: Vec<String> = values
        .iter()
        .take(ENUM_VALUES_NAMED_MAX)
        .map(Value::to_string)
        .collect();
    if values.len() > ENUM_VALUES_NAMED_MAX {
        named.push(format!("{} more", values.len() - ENUM_VALUES_NAMED_MAX));
    }
    either(&named)
}

impl Fault {
    /// The words after "Expected " or "expected ", shared by both styles where they agree;
    /// `None` for faults whose two styles differ.
    fn expectation(&self) -> Option<String> {
        Some(match self {
            Fault::Type { expected, found } => {
                let nouns: Vec<String> = expected.iter().map(|s| (*s).to_owned()).collect();
                format!("{}, found {found}", either(&nouns))
            }
            Fault::Enum(values) => format!("one of {}", enum_list(values)),
            Fault::Const(value) => format!("exactly {value}"),
            Fault::Minimum(limit) => format!("a number of at least {limit}"),
            Fault::ExclusiveMinimum(limit) => format!("a number greater than {limit}"),
            Fault::Maximum(limit) => format!("a number of at most {limit}"),
            Fault::ExclusiveMaximum(limit) => format!("a number less than {limit}"),
            Fault::MultipleOf(step) => format!("a multiple of {}", Value::from(*step)),
            Fault::MinLength(n) => format!("at least {}", plural(*n, "character", "characters")),
            Fault::MaxLength(n) => format!("at most {}", plural(*n, "character", "characters")),
            Fault::MinItems(n) => format!("at least {}", plural(*n, "item", "items")),
            Fault::MaxItems(n) => format!("at most {}", plural(*n, "item", "items")),
            Fault::UniqueItems => "every item to be different".to_owned(),
            Fault::MinProperties(n) => format!("at least {}", plural(*n, "property", "properties")),
            Fault::MaxProperties(n) => format!("at most {}", plural(*n, "property", "properties")),
            Fault::Forms(forms) => either(forms),
            Fault::AnyOf => "a value that matches at least one of the allowed forms".to_owned(),
            Fault::OneOfNone => {
                "a value that matches exactly one of the allowed forms; it matches none".to_owned()
            }
            Fault::OneOfMany => {
                "a value that matches exactly one of the allowed forms; it matches more than one"
                    .to_owned()
            }
            _ => return None,
        })
    }

    /// The answer style, after `<pointer>: `.
    pub(crate) fn answer_words(&self) -> String {
        if let Some(words) = self.expectation() {
            return format!("Expected {words}");
        }
        match self {
            Fault::Required => "Missing: the schema requires it".to_owned(),
            Fault::NotAllowedProperty => {
                "Not allowed: the schema does not list this property".to_owned()
            }
            Fault::Format(format) => match format_example(format) {
                Some(example) => {
                    format!("Expected a string in the format {format}, such as {example}")
                }
                None => format!("Expected a string in the format {format}"),
            },
            Fault::Not | Fault::False => "Not allowed: the schema accepts no value here".to_owned(),
            Fault::PropertyName => "Has a property name the schema does not allow".to_owned(),
            Fault::TooDeep(max) => {
                format!("Nests deeper than {max} levels, the most an answer may")
            }
            _ => "Does not match the schema".to_owned(),
        }
    }

    /// The input style, after `<field>: ` or `<field>, <description>: `.
    pub(crate) fn input_words(&self) -> String {
        if let Some(words) = self.expectation() {
            return format!("expected {words}");
        }
        match self {
            Fault::Required => "is required".to_owned(),
            Fault::NotAllowedProperty => "is not a field the input takes".to_owned(),
            Fault::Format(format) => match format_example(format) {
                Some(example) => format!("expected {} such as {example}", format_noun(format)),
                None => format!("expected a string in the format {format}"),
            },
            Fault::Not | Fault::False => "is not allowed".to_owned(),
            Fault::PropertyName => "has a field name that is not allowed".to_owned(),
            Fault::TooDeep(max) => format!("nests deeper than {max} levels"),
            _ => "does not match the schema".to_owned(),
        }
    }
}
