//! `date` and its relatives, in UTC only. A value is a number of seconds since 1970, a string
//! of digits read the same way, an ISO 8601 date or date and time, or `now`/`today` (the run's
//! start, never the machine's clock). Any other value passes through unchanged, as in LiquidJS.

use std::fmt::Write as _;

use super::{Args, Budget, Result};
use crate::value::Value;

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// LiquidJS's default format.
const DEFAULT_FORMAT: &str = "%A, %B %-e, %Y at %-l:%M %P %z";

pub(super) fn apply<'a>(
    name: &str,
    input: &Value<'a>,
    args: &Args<'_, 'a>,
    budget: &mut Budget,
) -> Result<Option<Value<'a>>> {
    let format = match name {
        "date" => match args.get(0) {
            None | Some(Value::Nil) => DEFAULT_FORMAT.to_string(),
            Some(format) => format.to_text().to_string(),
        },
        "date_to_xmlschema" => "%Y-%m-%dT%H:%M:%S%:z".into(),
        "date_to_rfc822" => "%a, %d %b %Y %H:%M:%S %z".into(),
        "date_to_string" | "date_to_long_string" => {
            let month = if name == "date_to_string" { "%b" } else { "%B" };
            match (
                args.get(0).map(|v| v.to_text().to_string()),
                args.get(1).map(|v| v.to_text().to_string()),
            ) {
                (Some(kind), Some(style)) if kind == "ordinal" && style == "US" => {
                    format!("{month} %o, %Y")
                }
                (Some(kind), _) if kind == "ordinal" => format!("%o {month} %Y"),
                _ => format!("%d {month} %Y"),
            }
        }
        _ => return Ok(None),
    };
    let Some(instant) = parse(input, budget.now_seconds) else {
        return Ok(Some(input.clone()));
    };
    budget.charge(format.len() as u64)?;
    Ok(Some(Value::string(strftime(instant, &format))))
}

/// Milliseconds since 1970 in UTC.
#[derive(Debug, Clone, Copy)]
struct Instant(i64);

fn parse(value: &Value<'_>, now: Option<i64>) -> Option<Instant> {
    const SECONDS_MAX: f64 = 8.64e12;
    let from_seconds = |s: f64| {
        (s.is_finite() && s.abs() <= SECONDS_MAX).then(|| Instant((s * 1000.0).round() as i64))
    };
    match value {
        Value::Int(i) => from_seconds(*i as f64),
        Value::Float(f) => from_seconds(*f),
        Value::Str(s) => {
            let s = s.trim();
            if s == "now" || s == "today" {
                return now.map(|n| Instant(n * 1000));
            }
            if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                return from_seconds(s.parse::<f64>().ok()?);
            }
            parse_iso(s).or_else(|| parse_month_day_year(s))
        }
        _ => None,
    }
}

/// `2026-04-01`, `2026-04-01T09:30`, `2026-04-01 09:30:00.5Z`, `2026-04-01T09:30:00+02:00`.
fn parse_iso(s: &str) -> Option<Instant> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = s.get(from..from + len)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let mut millis = days_from_civil(year, month, day) * 86_400_000;
    let mut rest = &s[10..];
    if let Some(time) = rest.strip_prefix('T').or_else(|| rest.strip_prefix(' ')) {
        let (hour, minute) = (num_of(time, 0)?, num_of(time, 3)?);
        if time.as_bytes().get(2) != Some(&b':') || hour > 23 || minute > 59 {
            return None;
        }
        millis += (hour * 3600 + minute * 60) * 1000;
        rest = &time[5..];
        if let Some(seconds) = rest.strip_prefix(':') {
            let whole = num_of(seconds, 0)?;
            if whole > 59 {
                return None;
            }
            millis += whole * 1000;
            rest = &seconds[2..];
            if let Some(fraction) = rest.strip_prefix('.') {
                let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
                let first3: String = fraction[..digits]
                    .chars()
                    .chain("000".chars())
                    .take(3)
                    .collect();
                millis += first3.parse::<i64>().ok()?;
                rest = &fraction[digits..];
            }
        }
        let offset = match rest.trim_start() {
            "" | "Z" | "z" => 0,
            zone => parse_offset(zone)?,
        };
        millis -= offset * 60_000;
    } else if !rest.is_empty() {
        return None;
    }
    Some(Instant(millis))
}

/// `March 14, 2016` and `Mar 14 2016`, as JavaScript's `Date` reads them (in UTC here).
fn parse_month_day_year(s: &str) -> Option<Instant> {
    let mut words = s.split([' ', ',']).filter(|w| !w.is_empty());
    let month_word = words.next()?.to_lowercase();
    let month = MONTHS.iter().position(|m| {
        let m = m.to_lowercase();
        month_word.len() >= 3 && m.starts_with(&month_word)
    })? as i64
        + 1;
    let day: i64 = words.next()?.parse().ok()?;
    let year: i64 = words.next()?.parse().ok()?;
    if words.next().is_some() || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(Instant(days_from_civil(year, month, day) * 86_400_000))
}

fn num_of(s: &str, from: usize) -> Option<i64> {
    let part = s.get(from..from + 2)?;
    part.bytes()
        .all(|c| c.is_ascii_digit())
        .then(|| part.parse().ok())?
}

/// `+02:00` or `-0530`, in minutes.
fn parse_offset(zone: &str) -> Option<i64> {
    let sign = match zone.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
    if digits.len() != 4 || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    Some(sign * (digits[..2].parse::<i64>().ok()? * 60 + digits[2..].parse::<i64>().ok()?))
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a date in the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

struct Parts {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    millis: i64,
    weekday: i64,
    yday: i64,
    seconds: i64,
}

fn parts(instant: Instant) -> Parts {
    let days = instant.0.div_euclid(86_400_000);
    let in_day = instant.0.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    Parts {
        year,
        month,
        day,
        hour: in_day / 3_600_000,
        minute: in_day / 60_000 % 60,
        second: in_day / 1000 % 60,
        millis: in_day % 1000,
        weekday: (days + 4).rem_euclid(7),
        yday: days - days_from_civil(year, 1, 1) + 1,
        seconds: instant.0.div_euclid(1000),
    }
}

fn strftime(instant: Instant, format: &str) -> String {
    let p = parts(instant);
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut flags = String::new();
        while let Some(&f) = chars.peek() {
            if "-_0^#:".contains(f) {
                flags.push(f);
                chars.next();
            } else {
                break;
            }
        }
        let mut width = String::new();
        while let Some(&d) = chars.peek() {
            if d.is_ascii_digit() {
                width.push(d);
                chars.next();
            } else {
                break;
            }
        }
        let Some(conversion) = chars.next() else {
            out.push('%');
            out.push_str(&flags);
            out.push_str(&width);
            break;
        };
        match conversion_text(&p, conversion, &flags) {
            Some((text, pad_width, pad_char)) => {
                let width = width.parse::<usize>().ok().unwrap_or(pad_width).min(1024);
                out.push_str(&pad(&text, width, pad_char, &flags));
            }
            None => {
                let _ = write!(out, "%{flags}{width}{conversion}");
            }
        }
    }
    out
}

fn pad(text: &str, width: usize, pad_char: char, flags: &str) -> String {
    let mut text = text.to_string();
    if flags.contains('^') {
        text = text.to_uppercase();
    } else if flags.contains('#') {
        text = text
            .chars()
            .map(|c| {
                if c.is_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect();
    }
    if flags.contains('-') {
        return text;
    }
    let pad_char = if flags.contains('_') {
        ' '
    } else if flags.contains('0') {
        '0'
    } else {
        pad_char
    };
    let len = text.chars().count();
    if len >= width {
        return text;
    }
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) if pad_char == '0' => ("-", rest.to_string()),
        _ => ("", text.clone()),
    };
    format!("{sign}{}{digits}", pad_char.to_string().repeat(width - len))
}

/// The text of one conversion, with its natural width and padding.
fn conversion_text(p: &Parts, conversion: char, flags: &str) -> Option<(String, usize, char)> {
    let hour12 = if p.hour % 12 == 0 { 12 } else { p.hour % 12 };
    let number = |n: i64, width: usize| Some((n.to_string(), width, '0'));
    let text = |s: &str| Some((s.to_string(), 0, ' '));
    match conversion {
        'a' => text(&DAYS[p.weekday as usize][..3]),
        'A' => text(DAYS[p.weekday as usize]),
        'b' | 'h' => text(&MONTHS[p.month as usize - 1][..3]),
        'B' => text(MONTHS[p.month as usize - 1]),
        'c' => text(&strftime_parts(p, "%a %b %e %H:%M:%S %Y")),
        'C' => number(p.year.div_euclid(100), 2),
        'd' => number(p.day, 2),
        'e' => Some((p.day.to_string(), 2, ' ')),
        'D' | 'x' => text(&strftime_parts(p, "%m/%d/%y")),
        'F' => text(&strftime_parts(p, "%Y-%m-%d")),
        'H' => number(p.hour, 2),
        'I' => number(hour12, 2),
        'j' => number(p.yday, 3),
        'k' => Some((p.hour.to_string(), 2, ' ')),
        'l' => Some((hour12.to_string(), 2, ' ')),
        'L' => number(p.millis, 3),
        'N' => number(p.millis * 1_000_000, 9),
        'm' => number(p.month, 2),
        'M' => number(p.minute, 2),
        'o' => text(&ordinal(p.day)),
        'p' => text(if p.hour < 12 { "AM" } else { "PM" }),
        'P' => text(if p.hour < 12 { "am" } else { "pm" }),
        'r' => text(&strftime_parts(p, "%I:%M:%S %p")),
        'R' => text(&strftime_parts(p, "%H:%M")),
        's' => text(&p.seconds.to_string()),
        'S' => number(p.second, 2),
        'T' | 'X' => text(&strftime_parts(p, "%H:%M:%S")),
        'u' => number(if p.weekday == 0 { 7 } else { p.weekday }, 1),
        'w' => number(p.weekday, 1),
        'U' => number((p.yday + 6 - p.weekday) / 7, 2),
        'W' => number((p.yday + 6 - (p.weekday + 6) % 7) / 7, 2),
        'y' => number(p.year.rem_euclid(100), 2),
        'Y' => number(p.year, 0),
        'z' if flags.contains(':') => text("+00:00"),
        'z' => text("+0000"),
        'Z' => text("UTC"),
        '%' => text("%"),
        _ => None,
    }
}

fn strftime_parts(p: &Parts, format: &str) -> String {
    let millis = p.seconds * 1000 + p.millis;
    strftime(Instant(millis), format)
}

/// Seconds since 1970 of an ISO 8601 date and time, such as the run's `now`.
pub(crate) fn seconds_of(text: &str) -> Option<i64> {
    parse_iso(text.trim()).map(|i| i.0.div_euclid(1000))
}

fn ordinal(day: i64) -> String {
    let suffix = match (day % 10, day % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{day}{suffix}")
}
