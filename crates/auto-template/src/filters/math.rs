//! Number filters. JavaScript's numbers, except that two whole numbers stay whole: their sum,
//! difference, product and quotient (`divided_by` divides them as whole numbers, rounding
//! down), unless the result leaves the 64-bit range.

use super::{Args, FilterError, Result, to_number};
use crate::value::{Number, Value};

pub(super) fn apply<'a>(
    name: &str,
    input: &Value<'a>,
    args: &Args<'_, 'a>,
) -> Result<Option<Value<'a>>> {
    let value = to_number(input);
    let arg = || args.number(0);
    let result = match name {
        "abs" => Ok(match value {
            Number::Int(i) => i
                .checked_abs()
                .map_or(Number::Float((i as f64).abs()), Number::Int),
            Number::Float(f) => Number::Float(f.abs()),
        }),
        "ceil" => Ok(whole(value.as_f64().ceil())),
        "floor" => Ok(whole(value.as_f64().floor())),
        "round" => Ok(round(value, arg())),
        "at_least" => Ok(if arg().as_f64() > value.as_f64() {
            arg()
        } else {
            value
        }),
        "at_most" => Ok(if arg().as_f64() < value.as_f64() {
            arg()
        } else {
            value
        }),
        "plus" => Ok(add(value, arg())),
        "minus" => Ok(match (value, arg()) {
            (Number::Int(a), Number::Int(b)) => a
                .checked_sub(b)
                .map_or(Number::Float(a as f64 - b as f64), Number::Int),
            (a, b) => Number::Float(a.as_f64() - b.as_f64()),
        }),
        "times" => Ok(match (value, arg()) {
            (Number::Int(a), Number::Int(b)) => a
                .checked_mul(b)
                .map_or(Number::Float(a as f64 * b as f64), Number::Int),
            (a, b) => Number::Float(a.as_f64() * b.as_f64()),
        }),
        "divided_by" => divide(value, arg()),
        "modulo" => modulo(value, arg()),
        // JavaScript's Number(): what does not read as a number is NaN.
        "to_integer" => Ok(match input {
            Value::Bool(_) | Value::Nil | Value::Int(_) | Value::Float(_) => value,
            Value::Str(s) if s.trim().is_empty() => Number::Int(0),
            other => other.to_number().unwrap_or(Number::Float(f64::NAN)),
        }),
        _ => return Ok(None),
    };
    result.map(|n| Some(n.into_value()))
}

pub(super) fn add(a: Number, b: Number) -> Number {
    match (a, b) {
        (Number::Int(a), Number::Int(b)) => a
            .checked_add(b)
            .map_or(Number::Float(a as f64 + b as f64), Number::Int),
        (a, b) => Number::Float(a.as_f64() + b.as_f64()),
    }
}

/// A whole float as a whole number when it fits, so that it prints without a fraction.
fn whole(f: f64) -> Number {
    if f.is_finite() && f.abs() < 9.0e15 {
        Number::Int(f as i64)
    } else {
        Number::Float(f)
    }
}

fn divide(a: Number, b: Number) -> Result<Number> {
    if b.as_f64() == 0.0 {
        return Err(FilterError::Invalid(
            "divided_by cannot divide by zero".into(),
        ));
    }
    Ok(match (a, b) {
        (Number::Int(a), Number::Int(b)) => {
            // Rounds down, as Liquid's integer division does.
            let (a, b) = (a as i128, b as i128);
            let mut q = a / b;
            if a % b != 0 && ((a < 0) != (b < 0)) {
                q -= 1;
            }
            i64::try_from(q).map_or(Number::Float(q as f64), Number::Int)
        }
        (a, b) => Number::Float(a.as_f64() / b.as_f64()),
    })
}

fn modulo(a: Number, b: Number) -> Result<Number> {
    if b.as_f64() == 0.0 {
        return Err(FilterError::Invalid("modulo cannot divide by zero".into()));
    }
    Ok(match (a, b) {
        (Number::Int(a), Number::Int(b)) => {
            let (a, b) = (a as i128, b as i128);
            Number::Int((((a % b) + b) % b) as i64)
        }
        (a, b) => {
            let (a, b) = (a.as_f64(), b.as_f64());
            Number::Float(((a % b) + b) % b)
        }
    })
}

/// LiquidJS's `round`: half away from zero, at `digits` places, by shifting the decimal point
/// in the number's text so that 1.005 rounds as it reads.
fn round(value: Number, digits: Number) -> Number {
    // Beyond 400 places either way a double has no digits left to round.
    let digits = digits.as_f64().clamp(-400.0, 400.0) as i32;
    if digits == 0 {
        return match value {
            Number::Int(i) => Number::Int(i),
            Number::Float(f) => whole(f.abs().round().copysign(f)),
        };
    }
    let v = value.as_f64();
    let scaled = shift_decimal(v.abs(), digits);
    // Past 2^53 (or NaN) the number has no decimals left to round.
    if scaled.is_nan() || scaled > 9_007_199_254_740_991.0 {
        return value;
    }
    let rounded = shift_decimal(scaled.round(), -digits);
    Number::Float(if v < 0.0 { -rounded } else { rounded })
}

fn shift_decimal(n: f64, exponent: i32) -> f64 {
    let text = crate::value::format_number(n);
    let (mantissa, power) = text.split_once('e').unwrap_or((&text, "0"));
    let power: i32 = power.parse().unwrap_or(0);
    format!("{mantissa}e{}", power.saturating_add(exponent))
        .parse()
        .unwrap_or(f64::NAN)
}
