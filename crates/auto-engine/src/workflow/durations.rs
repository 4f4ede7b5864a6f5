//! Durations ("Durations", "Limits"): an ISO 8601 string in weeks, days, hours, minutes and
//! seconds, a mapping of days to milliseconds, or an expression; and the fields that hold
//! them: timeouts and retry policies.

use auto_doc::pointer;
use serde_json::Value;

use super::expressions::{Scope, enclosed};
use super::read::Reader;

const MS_PER_SECOND: u64 = 1_000;
const MS_PER_MINUTE: u64 = 60 * MS_PER_SECOND;
const MS_PER_HOUR: u64 = 60 * MS_PER_MINUTE;
const MS_PER_DAY: u64 = 24 * MS_PER_HOUR;
const MS_PER_WEEK: u64 = 7 * MS_PER_DAY;

/// "Duration of a run: 30 days" (workflow page, "Limits").
pub const RUN_DURATION_MS_DEFAULT: u64 = 30 * MS_PER_DAY;
/// "WORKFLOW_MAX_DURATION sets 2 hours to 365 days": the least it may be set to.
pub const RUN_DURATION_MS_MIN: u64 = 2 * MS_PER_HOUR;
/// The most `WORKFLOW_MAX_DURATION` may be set to.
pub const RUN_DURATION_MS_MAX: u64 = 365 * MS_PER_DAY;

const DURATION_KEYS: [&str; 5] = ["days", "hours", "minutes", "seconds", "milliseconds"];
const DURATION_FORM: &str = "Expected a duration: ISO 8601 such as PT30M or P7D, in weeks, days, hours, minutes and seconds, or a mapping of days, hours, minutes, seconds and milliseconds.";
pub(crate) const YEARS_MONTHS: &str = "Years and months are refused because their length varies: use weeks, days, hours, minutes and seconds.";
const RETRY_KEYS: [&str; 6] = ["delay", "backoff", "jitter", "limit", "when", "exceptWhen"];

/// Why a duration string is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum IsoError {
    Form,
    YearsOrMonths,
}

/// Milliseconds of an ISO 8601 duration in weeks, days, hours, minutes and seconds.
pub fn parse_iso(text: &str) -> Result<u64, IsoError> {
    let rest = text.strip_prefix('P').ok_or(IsoError::Form)?;
    let (date, time) = match rest.split_once('T') {
        Some((date, time)) if !time.is_empty() => (date, Some(time)),
        Some(_) => return Err(IsoError::Form),
        None => (rest, None),
    };
    if date.is_empty() && time.is_none() {
        return Err(IsoError::Form);
    }
    let mut total = 0u64;
    let mut add = |amount: f64, unit_ms: u64| -> Result<(), IsoError> {
        let ms = amount * unit_ms as f64;
        if !ms.is_finite() || ms > u64::MAX as f64 / 2.0 {
            return Err(IsoError::Form);
        }
        total = total.saturating_add(ms.round() as u64);
        Ok(())
    };
    for (amount, unit) in units(date)? {
        match unit {
            'Y' | 'M' => return Err(IsoError::YearsOrMonths),
            'W' => add(amount, MS_PER_WEEK)?,
            'D' => add(amount, MS_PER_DAY)?,
            _ => return Err(IsoError::Form),
        }
    }
    for (amount, unit) in time.map(units).transpose()?.unwrap_or_default() {
        match unit {
            'H' => add(amount, MS_PER_HOUR)?,
            'M' => add(amount, MS_PER_MINUTE)?,
            'S' => add(amount, MS_PER_SECOND)?,
            _ => return Err(IsoError::Form),
        }
    }
    Ok(total)
}

/// The number-and-letter pairs of one part of a duration, such as `1W2D`.
fn units(part: &str) -> Result<Vec<(f64, char)>, IsoError> {
    let mut found = Vec::new();
    let mut number = String::new();
    for c in part.chars() {
        if c.is_ascii_digit() || c == '.' || c == ',' {
            number.push(if c == ',' { '.' } else { c });
        } else if c.is_ascii_uppercase() {
            if number.is_empty() {
                return Err(IsoError::Form);
            }
            let amount: f64 = number.parse().map_err(|_| IsoError::Form)?;
            found.push((amount, c));
            number.clear();
        } else {
            return Err(IsoError::Form);
        }
    }
    if number.is_empty() {
        Ok(found)
    } else {
        Err(IsoError::Form)
    }
}

/// A length of time in words, for issues: "30 days", "2 hours".
pub fn in_words(ms: u64) -> String {
    let plural = |n: u64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    match ms {
        0 => "no time".to_owned(),
        _ if ms.is_multiple_of(MS_PER_DAY) => plural(ms / MS_PER_DAY, "day"),
        _ if ms.is_multiple_of(MS_PER_HOUR) => plural(ms / MS_PER_HOUR, "hour"),
        _ if ms.is_multiple_of(MS_PER_MINUTE) => plural(ms / MS_PER_MINUTE, "minute"),
        _ if ms.is_multiple_of(MS_PER_SECOND) => plural(ms / MS_PER_SECOND, "second"),
        _ => plural(ms, "millisecond"),
    }
}

impl Reader<'_> {
    /// The duration at `at` in milliseconds; `None` when it is an expression or refused.
    /// `bounded` refuses one longer than a run may last.
    pub fn duration(&mut self, at: &str, scope: &Scope, bounded: bool) -> Option<u64> {
        let value = self.get(at)?;
        let ms = match value {
            Value::String(text) => {
                if let Some((inner, offset)) = enclosed(text) {
                    self.expression(at, text, offset, inner, scope);
                    return None;
                }
                match parse_iso(text) {
                    Ok(ms) => ms,
                    Err(IsoError::YearsOrMonths) => {
                        self.at(at, YEARS_MONTHS);
                        return None;
                    }
                    Err(IsoError::Form) => {
                        self.at(at, DURATION_FORM);
                        return None;
                    }
                }
            }
            Value::Object(map) => {
                let mut total = 0u64;
                let mut valid = true;
                for (key, amount) in map {
                    let item = pointer::child_pointer(at, key);
                    let unit = match key.as_str() {
                        "days" => MS_PER_DAY,
                        "hours" => MS_PER_HOUR,
                        "minutes" => MS_PER_MINUTE,
                        "seconds" => MS_PER_SECOND,
                        "milliseconds" => 1,
                        "years" | "months" => {
                            self.at_key(&item, YEARS_MONTHS);
                            valid = false;
                            continue;
                        }
                        _ => {
                            let text = format!(
                                "Unknown key: the keys here are {}.",
                                DURATION_KEYS.join(", ")
                            );
                            self.at_key(&item, text);
                            valid = false;
                            continue;
                        }
                    };
                    match amount.as_f64() {
                        Some(n) if n >= 0.0 && n.is_finite() => {
                            let ms = (n * unit as f64).min(u64::MAX as f64 / 2.0);
                            total = total.saturating_add(ms.round() as u64);
                        }
                        _ => {
                            self.at(&item, "Expected a number of 0 or more.");
                            valid = false;
                        }
                    }
                }
                if !valid {
                    return None;
                }
                total
            }
            _ => {
                self.at(at, DURATION_FORM);
                return None;
            }
        };
        if bounded && ms > self.limits.run_duration_ms {
            let text = format!(
                "The duration is longer than a run may last: at most {}.",
                in_words(self.limits.run_duration_ms)
            );
            self.at(at, text);
            return None;
        }
        Some(ms)
    }

    /// A task's or the document's `timeout`: a name in `use.timeouts`, or `after` and a
    /// duration.
    pub fn timeout(&mut self, at: &str, value: &Value, scope: &Scope) {
        match value {
            Value::String(name) => {
                if !self.use_timeouts.iter().any(|n| n == name) {
                    self.at(
                        at,
                        format!("No timeout {name:?} in use.timeouts: the reference must exist."),
                    );
                }
            }
            Value::Object(_) => self.timeout_definition(at, scope),
            _ => self.at(
                at,
                "Expected after and a duration, or the name of a timeout in use.timeouts.",
            ),
        }
    }

    /// `{ after: duration }`.
    pub fn timeout_definition(&mut self, at: &str, scope: &Scope) {
        if self.object(at).is_none() {
            return;
        }
        self.only_keys(at, &["after"]);
        if self.get(&format!("{at}/after")).is_none() {
            self.at(at, "It needs after");
            return;
        }
        self.duration(&format!("{at}/after"), scope, true);
    }

    /// A retry policy, inline or in `use.retries`.
    pub fn retry_policy(&mut self, at: &str, scope: &Scope) {
        if self.object(at).is_none() {
            return;
        }
        self.only_keys(at, &RETRY_KEYS);
        self.duration(&format!("{at}/delay"), scope, true);
        let backoff = format!("{at}/backoff");
        if let Some(Value::Object(map)) = self.get(&backoff) {
            if map.len() != 1 {
                self.at(&backoff, "Expected one of constant, linear or exponential.");
            }
            self.only_keys(&backoff, &["constant", "linear", "exponential"]);
        } else if self.get(&backoff).is_some() {
            self.at(&backoff, "Expected one of constant, linear or exponential.");
        }
        let jitter = format!("{at}/jitter");
        if self.get(&jitter).is_some() && self.object(&jitter).is_some() {
            self.only_keys(&jitter, &["from", "to"]);
            self.duration(&format!("{jitter}/from"), scope, true);
            self.duration(&format!("{jitter}/to"), scope, true);
        }
        let limit = format!("{at}/limit");
        if self.get(&limit).is_some() && self.object(&limit).is_some() {
            self.only_keys(&limit, &["attempt", "duration"]);
            self.duration(&format!("{limit}/duration"), scope, true);
            let attempt = format!("{limit}/attempt");
            if self.get(&attempt).is_some() && self.object(&attempt).is_some() {
                self.only_keys(&attempt, &["count", "duration"]);
                self.duration(&format!("{attempt}/duration"), scope, true);
                let count = format!("{attempt}/count");
                if let Some(value) = self.get(&count)
                    && value.as_u64().is_none()
                {
                    self.at(&count, "Expected a whole number of 0 or more.");
                }
            }
        }
        self.bare(&format!("{at}/when"), scope);
        self.bare(&format!("{at}/exceptWhen"), scope);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_durations_in_weeks_to_seconds() {
        assert_eq!(parse_iso("PT30M"), Ok(30 * MS_PER_MINUTE));
        assert_eq!(parse_iso("P7D"), Ok(7 * MS_PER_DAY));
        assert_eq!(parse_iso("P1W"), Ok(MS_PER_WEEK));
        assert_eq!(parse_iso("PT1.5S"), Ok(1_500));
        assert_eq!(parse_iso("P1Y"), Err(IsoError::YearsOrMonths));
        assert_eq!(parse_iso("P1M"), Err(IsoError::YearsOrMonths));
        assert_eq!(parse_iso("P"), Err(IsoError::Form));
        assert_eq!(parse_iso("PT"), Err(IsoError::Form));
        assert_eq!(parse_iso("30M"), Err(IsoError::Form));
        assert_eq!(in_words(RUN_DURATION_MS_DEFAULT), "30 days");
    }
}
