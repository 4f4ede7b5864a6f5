//! YAML 1.2 core schema resolution of plain (unquoted) scalars, done here rather than by a
//! loader so that `yes`, `on`, `2026-10-01`, `12:30` and `1_000` stay strings and `.inf` is
//! caught. Quoted and block scalars never come here: they are always strings.

use serde_json::{Number, Value};

/// What a plain scalar means, or why it cannot be kept.
#[derive(Debug, PartialEq)]
pub(crate) enum Resolved {
    Value(Value),
    /// `.inf`, `.nan`, or a number too large for a 64-bit float: numbers must be finite.
    NotFinite,
}

/// Resolves a plain scalar by the core schema's regular expressions (YAML 1.2.2 §10.3.2).
pub(crate) fn resolve_plain(text: &str) -> Resolved {
    if matches!(text, "" | "~" | "null" | "Null" | "NULL") {
        return Resolved::Value(Value::Null);
    }
    if let Some(boolean) = resolve_bool(text) {
        return Resolved::Value(Value::Bool(boolean));
    }
    if matches!(text, ".nan" | ".NaN" | ".NAN") {
        return Resolved::NotFinite;
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return Resolved::NotFinite;
    }
    if let Some(resolved) = resolve_integer(text) {
        return resolved;
    }
    if is_core_float(unsigned) {
        return finite(text.parse::<f64>().unwrap_or(f64::INFINITY));
    }
    Resolved::Value(Value::String(text.to_owned()))
}

fn resolve_bool(text: &str) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// `[-+]?[0-9]+`, `0o[0-7]+` or `0x[0-9a-fA-F]+`. An integer past `u64` (or below `i64`) is
/// kept as the nearest 64-bit float, as JavaScript would read it; past the float range it is
/// refused as not finite.
fn resolve_integer(text: &str) -> Option<Resolved> {
    if let Some(digits) = text.strip_prefix("0o") {
        return radix_digits(digits, 8).then(|| radix_integer(digits, 8));
    }
    if let Some(digits) = text.strip_prefix("0x") {
        return radix_digits(digits, 16).then(|| radix_integer(digits, 16));
    }
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    if !radix_digits(unsigned, 10) {
        return None;
    }
    let number = if text.starts_with('-') {
        text.parse::<i64>().ok().map(Number::from)
    } else {
        unsigned.parse::<u64>().ok().map(Number::from)
    };
    Some(match number {
        Some(number) => Resolved::Value(Value::Number(number)),
        // Decimal digits only, so the float parse cannot fail; an overflow gives infinity.
        None => finite(text.parse::<f64>().unwrap_or(f64::INFINITY)),
    })
}

fn radix_digits(digits: &str, radix: u32) -> bool {
    !digits.is_empty() && digits.chars().all(|c| c.is_digit(radix))
}

/// Invariant: `digits` holds at least one digit of `radix`, nothing else.
fn radix_integer(digits: &str, radix: u32) -> Resolved {
    if let Ok(number) = u64::from_str_radix(digits, radix) {
        return Resolved::Value(Value::Number(Number::from(number)));
    }
    let float = digits
        .chars()
        .filter_map(|c| c.to_digit(radix))
        .fold(0.0_f64, |total, digit| {
            total * f64::from(radix) + f64::from(digit)
        });
    finite(float)
}

/// `(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?` after an optional sign. Every text it
/// accepts is also accepted by Rust's float parser.
fn is_core_float(unsigned: &str) -> bool {
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(&unsigned[at + 1..])),
        None => (unsigned, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some((whole, fraction)) => {
            let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
            all_digits(whole) && all_digits(fraction) && !(whole.is_empty() && fraction.is_empty())
        }
        None => radix_digits(mantissa, 10),
    };
    let exponent_ok = exponent.is_none_or(|exponent| {
        radix_digits(exponent.strip_prefix(['-', '+']).unwrap_or(exponent), 10)
    });
    mantissa_ok && exponent_ok
}

fn finite(float: f64) -> Resolved {
    match Number::from_f64(float) {
        Some(number) if float.is_finite() => Resolved::Value(Value::Number(number)),
        _ => Resolved::NotFinite,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn value(text: &str) -> Value {
        match resolve_plain(text) {
            Resolved::Value(value) => value,
            Resolved::NotFinite => panic!("{text} was refused"),
        }
    }

    #[test]
    fn nulls_and_booleans_follow_the_core_schema() {
        for text in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(value(text), Value::Null, "{text}");
        }
        for text in ["true", "True", "TRUE"] {
            assert_eq!(value(text), json!(true));
        }
        assert_eq!(value("FALSE"), json!(false));
        for text in ["nULL", "tRUE", "yes", "no", "on", "off", "y", "n"] {
            assert_eq!(value(text), json!(text), "{text}");
        }
    }

    #[test]
    fn integers_in_three_bases() {
        assert_eq!(value("0o17"), json!(15));
        assert_eq!(value("0x1F"), json!(31));
        assert_eq!(value("0x1f"), json!(31));
        assert_eq!(value("-42"), json!(-42));
        assert_eq!(value("+42"), json!(42));
        assert_eq!(value("007"), json!(7));
        assert_eq!(value("-0"), json!(0));
        for text in [
            "0X1F", "0O17", "0o", "0x", "0o8", "-0x1", "0b101", "1_000", "12:30",
        ] {
            assert_eq!(value(text), json!(text), "{text}");
        }
    }

    #[test]
    fn integers_past_64_bits_become_floats() {
        assert_eq!(value("18446744073709551615"), json!(u64::MAX));
        assert_eq!(
            value("18446744073709551616"),
            json!(18_446_744_073_709_551_616.0)
        );
        assert_eq!(value("-9223372036854775808"), json!(i64::MIN));
        assert_eq!(
            value("-9223372036854775809"),
            json!(-9_223_372_036_854_775_809.0)
        );
        assert_eq!(
            value("0x10000000000000000"),
            json!(18_446_744_073_709_551_616.0)
        );
        assert_eq!(resolve_plain(&"9".repeat(400)), Resolved::NotFinite);
        assert_eq!(
            resolve_plain(&format!("0x{}", "f".repeat(300))),
            Resolved::NotFinite
        );
    }

    #[test]
    fn floats_and_what_is_not_finite() {
        assert_eq!(value("1.5"), json!(1.5));
        assert_eq!(value(".5"), json!(0.5));
        assert_eq!(value("-.5"), json!(-0.5));
        assert_eq!(value("1."), json!(1.0));
        assert_eq!(value("1e3"), json!(1000.0));
        assert_eq!(value("1.E-2"), json!(0.01));
        for text in [
            ".inf", "-.inf", "+.Inf", ".INF", ".nan", ".NaN", ".NAN", "1e400",
        ] {
            assert_eq!(resolve_plain(text), Resolved::NotFinite, "{text}");
        }
        for text in [
            ".", "e5", "1e", "1.2.3", "inf", "nan", "NaN", "Infinity", ".Nan", "1e+",
        ] {
            assert_eq!(value(text), json!(text), "{text}");
        }
    }

    #[test]
    fn dates_and_times_stay_strings() {
        for text in ["2026-10-01", "2026-10-01T12:00:00Z", "12:30", "1:30:00"] {
            assert_eq!(value(text), json!(text));
        }
    }
}
