//! Triggers and event filters ("Triggers", "Event filters", "Schedules", "Waiting for
//! events"): schedule.on, schedule.cron and schedule.every, and the filters of listen tasks,
//! which share their form and their `$data`-only expressions.

use auto_doc::pointer;
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use serde_json::Value;

use super::expressions::{Scope, is_expression};
use super::model::Schedule;
use super::read::Reader;
use crate::events_kept::is_history_type;

/// "on.any a list of 1 to 64 filters" ("Event filters"; "Filters of an event trigger: 64").
pub const FILTERS_MAX: usize = 64;
/// "every is a duration of at least a minute" ("Schedules").
pub const EVERY_MS_MIN: u64 = 60_000;
/// Attributes a filter names as a whole number from 1.
const COUNTED_ATTRIBUTES: [&str; 3] = ["depth", "calldepth", "definitionversion"];
/// Days of the month in each month, February in a leap year.
const MONTH_DAYS: [u16; 12] = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

const CRON_FIELDS: &str =
    "A cron has the five fields minute, hour, day of month, month and day of week, read in UTC.";
const NO_TIME: &str = "The cron names no time: no month has the days it names.";

/// Parses a five-field cron as the page reads it: no seconds, no years, none of the
/// extensions `L`, `W`, `#`, `?`, `@` or `+`, and at least one time it names.
pub(super) fn parse_cron(text: &str) -> Result<Cron, String> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(CRON_FIELDS.to_owned());
    }
    let extension = text.contains(['#', '?', '@', '+'])
        || fields[2].to_ascii_uppercase().contains(['L', 'W'])
        || fields[4].to_ascii_uppercase().contains('L');
    if extension {
        return Err(format!(
            "{CRON_FIELDS} The extensions L, W, #, ?, + and @ names are not taken."
        ));
    }
    let parser = CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build();
    let cron = parser
        .parse(text)
        .map_err(|error| format!("{CRON_FIELDS} {error}."))?;
    let pattern = &cron.pattern;
    let months = pattern.months.values();
    let days = pattern.days.values();
    let day_fits = days.iter().any(|day| {
        months.iter().any(|m| {
            usize::from(*m)
                .checked_sub(1)
                .and_then(|i| MONTH_DAYS.get(i))
                .is_some_and(|len| day <= len)
        })
    });
    let weekday_fits = !pattern.is_dow_wildcard() && !pattern.days_of_week.values().is_empty();
    if pattern.minutes.values().is_empty()
        || pattern.hours.values().is_empty()
        || !(day_fits || weekday_fits)
    {
        return Err(NO_TIME.to_owned());
    }
    Ok(cron)
}

/// The first time after `after_ms` (milliseconds since the epoch, UTC) that a saved cron
/// names, or `None` when none comes (a cron that passed the save names one every year).
pub fn cron_next_ms(text: &str, after_ms: i64) -> Option<i64> {
    let cron = parse_cron(text).ok()?;
    let after = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(after_ms)?;
    let next = cron.find_next_occurrence(&after, false).ok()?;
    Some(next.timestamp_millis())
}

/// The latest time at or before `at_ms` that a saved cron names.
pub fn cron_latest_ms(text: &str, at_ms: i64) -> Option<i64> {
    let cron = parse_cron(text).ok()?;
    let at = chrono::DateTime::<chrono::Utc>::from_timestamp_millis(at_ms)?;
    let latest = cron.find_previous_occurrence(&at, true).ok()?;
    Some(latest.timestamp_millis())
}

/// A cron in words, read in UTC where it reads plainly, as written otherwise.
pub fn cron_in_words(text: &str) -> String {
    let fields: Vec<&str> = text.split_whitespace().collect();
    let as_written = format!("on the cron schedule {text} (UTC)");
    let [minute, hour, day, month, weekday] = fields[..] else {
        return as_written;
    };
    let number = |field: &str, max: u16| field.parse::<u16>().ok().filter(|n| *n <= max);
    let time = match (number(minute, 59), number(hour, 23), hour) {
        (Some(m), Some(h), _) => format!("at {h:02}:{m:02} UTC"),
        (Some(m), None, "*") => format!("at minute {m} of every hour, UTC"),
        _ => return as_written,
    };
    let days = match (day, month, weekday) {
        ("*", "*", "*") => "every day".to_owned(),
        ("*", "*", days) => match weekdays_in_words(days) {
            Some(words) => format!("on {words}"),
            None => return as_written,
        },
        (day, "*", "*") => match number(day, 31) {
            Some(d) if d >= 1 => format!("on day {d} of every month"),
            _ => return as_written,
        },
        _ => return as_written,
    };
    format!("{time}, {days}")
}

/// `1-5` as "Monday to Friday", `1,3` as "Monday and Wednesday".
fn weekdays_in_words(field: &str) -> Option<String> {
    let day = |text: &str| {
        text.parse::<usize>()
            .ok()
            .filter(|n| *n <= 7)
            .map(|n| WEEKDAYS[n % 7])
    };
    if let Some((from, to)) = field.split_once('-') {
        return Some(format!("{} to {}", day(from)?, day(to)?));
    }
    let names: Vec<&str> = field.split(',').map(day).collect::<Option<_>>()?;
    Some(match names.as_slice() {
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
        [] => return None,
    })
}

impl Reader<'_> {
    /// `schedule`: each trigger checked and kept.
    pub fn schedule(&mut self) -> Schedule {
        let mut schedule = Schedule::default();
        let Some(Value::Object(map)) = self.get("/schedule") else {
            if self.get("/schedule").is_some() {
                self.at("/schedule", "Expected a mapping of on, cron and every.");
            }
            return schedule;
        };
        for key in map.keys() {
            let at = pointer::child_pointer("/schedule", key);
            match key.as_str() {
                "on" | "cron" | "every" => {}
                "after" => self.at_key(
                    &at,
                    "schedule.after is refused: a trigger starts one run for each event or time.",
                ),
                _ => self.at_key(&at, "Unknown key: the keys here are on, cron, every."),
            }
        }
        if !["on", "cron", "every"].iter().any(|k| map.contains_key(*k)) {
            self.at(
                "/schedule",
                "A schedule names a trigger: on, cron or every.",
            );
        }
        if map.contains_key("on") && self.object("/schedule/on").is_some() {
            schedule.on = self.event_consumption("/schedule/on", true);
        }
        if let Some(text) = map.get("cron").and(self.string("/schedule/cron")) {
            match parse_cron(text) {
                Ok(_) => schedule.cron = Some(text.to_owned()),
                Err(words) => self.at("/schedule/cron", words),
            }
        }
        if let Some(every) = map.get("every") {
            if is_expression(every) {
                self.at(
                    "/schedule/every",
                    "Expected a duration written out: a schedule is read before any run exists.",
                );
            } else if let Some(ms) = self.duration("/schedule/every", &Scope::document(), false) {
                if ms < EVERY_MS_MIN {
                    self.at("/schedule/every", "schedule.every is at least a minute.");
                } else {
                    schedule.every_ms = Some(ms);
                }
            }
        }
        schedule
    }

    /// `schedule.on` or `listen.to`: one, any or all, with their filters.
    pub fn event_consumption(&mut self, at: &str, trigger: bool) -> Option<Vec<Value>> {
        let map = self.get(at)?.as_object()?;
        for key in map.keys() {
            let key_at = pointer::child_pointer(at, key);
            match (key.as_str(), trigger) {
                ("one" | "any", _) | ("all", false) => {}
                ("all", true) => self.at_key(
                    &key_at,
                    "schedule.on.all is refused: a trigger starts one run for each event.",
                ),
                ("until", true) => self.at_key(
                    &key_at,
                    "schedule.on.until is refused: a trigger starts one run for each event.",
                ),
                ("until", false) => self.at_key(&key_at, "listen with until is not supported."),
                _ => self.at_key(&key_at, "Unknown key: the keys here are one, any, all."),
            }
        }
        let mut filters = Vec::new();
        let present: Vec<&str> = ["one", "any", "all"]
            .into_iter()
            .filter(|k| map.contains_key(*k))
            .collect();
        if present.is_empty() {
            self.at(
                at,
                if trigger {
                    "It needs one or any"
                } else {
                    "It needs one, any or all"
                },
            );
            return None;
        }
        if present.len() > 1 {
            self.at(at, "Expected one of one, any and all.");
        }
        if map.contains_key("one") {
            filters.extend(self.filter(&format!("{at}/one"), trigger));
        }
        for list in ["any", "all"] {
            let list_at = format!("{at}/{list}");
            let Some(value) = map.get(list) else { continue };
            if list == "all" && trigger {
                continue;
            }
            let Value::Array(items) = value else {
                self.at(&list_at, "Expected a list of filters.");
                continue;
            };
            if items.is_empty() || (trigger && items.len() > FILTERS_MAX) {
                self.at(
                    &list_at,
                    format!("Expected 1 to 64 filters; this list has {}.", items.len()),
                );
            }
            let mut seen: Vec<&Value> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let item_at = format!("{list_at}/{i}");
                let with = item.get("with");
                if trigger && let Some(with) = with {
                    if seen.contains(&with) {
                        self.at(
                            &item_at,
                            "An earlier filter has this type and these attributes: a filter is written once.",
                        );
                    }
                    seen.push(with);
                }
                filters.extend(self.filter(&item_at, trigger));
            }
        }
        Some(filters)
    }

    /// One filter: `with` and the attributes it names; for a trigger, a type written out.
    fn filter(&mut self, at: &str, trigger: bool) -> Option<Value> {
        self.object(at)?;
        if self.get(&format!("{at}/correlate")).is_some() {
            let text = if trigger {
                "correlate is not supported."
            } else {
                "listen with correlate is not supported."
            };
            self.at_key(&format!("{at}/correlate"), text);
        }
        self.only_keys(at, &["with", "correlate"]);
        let with_at = format!("{at}/with");
        let Some(with) = self.get(&with_at) else {
            self.at(at, "It needs with");
            return None;
        };
        let attributes = self.object(&with_at)?;
        // "The rest of the playbook's history, such as tool calls, steps, requests and
        // answers, is not among them": a filter of such a type would never match.
        if let Some(Value::String(kind)) = attributes.get("type")
            && !is_expression(&attributes["type"])
            && is_history_type(kind)
        {
            self.at(
                &format!("{with_at}/type"),
                format!(
                    "The type {kind} is of the playbook's history, which no filter hears: a filter hears the playbook's events and its facts about runs and definitions."
                ),
            );
        }
        if trigger {
            match attributes.get("type") {
                Some(Value::String(_)) if !is_expression(&attributes["type"]) => {}
                Some(_) => self.at(
                    &format!("{with_at}/type"),
                    "A trigger filter's type is written out: a trigger is matched before any run exists.",
                ),
                None => self.at(
                    &with_at,
                    "It needs type, written out: a trigger is matched before any run exists.",
                ),
            }
            for name in COUNTED_ATTRIBUTES {
                if let Some(value) = attributes.get(name)
                    && value.as_u64().is_none_or(|n| n < 1)
                {
                    self.at(
                        &format!("{with_at}/{name}"),
                        format!("Expected {name} as a whole number from 1."),
                    );
                }
            }
        }
        self.template(&with_at, with, &Scope::filter());
        Some(with.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crons_that_name_no_time_or_take_extensions_are_refused() {
        assert!(parse_cron("0 9 * * 1-5").is_ok());
        assert!(parse_cron("0 0 29 2 *").is_ok());
        assert_eq!(parse_cron("0 0 30 2 *").err().as_deref(), Some(NO_TIME));
        assert!(parse_cron("0 0 30 2 1").is_ok());
        assert!(parse_cron("0 0 * *").is_err());
        assert!(parse_cron("0 0 0 * * *").is_err());
        assert!(parse_cron("0 0 L * *").is_err());
        assert!(parse_cron("@daily").is_err());
        assert!(parse_cron("61 0 * * *").is_err());
    }

    #[test]
    fn cron_times_are_read_in_utc_with_either_day_field() {
        let at = |text: &str| {
            chrono::DateTime::parse_from_rfc3339(text)
                .unwrap()
                .timestamp_millis()
        };
        // Friday 2026-11-27 10:00 UTC: the next working-day 09:00 is Monday's.
        let friday = at("2026-11-27T10:00:00Z");
        assert_eq!(
            cron_next_ms("0 9 * * 1-5", friday),
            Some(at("2026-11-30T09:00:00Z"))
        );
        assert_eq!(
            cron_latest_ms("0 9 * * 1-5", friday),
            Some(at("2026-11-27T09:00:00Z"))
        );
        // A time the cron names is its own latest, and not its own next.
        let nine = at("2026-11-27T09:00:00Z");
        assert_eq!(cron_latest_ms("0 9 * * 1-5", nine), Some(nine));
        assert_eq!(
            cron_next_ms("0 9 * * 1-5", nine),
            Some(at("2026-11-30T09:00:00Z"))
        );
        // Both day fields restricted: a day that matches either is due (the 1st, or a Monday).
        assert_eq!(
            cron_next_ms("0 0 1 * 1", at("2026-11-27T10:00:00Z")),
            Some(at("2026-11-30T00:00:00Z"))
        );
        assert_eq!(
            cron_next_ms("0 0 1 * 1", at("2026-11-30T10:00:00Z")),
            Some(at("2026-12-01T00:00:00Z"))
        );
    }

    #[test]
    fn plain_crons_read_in_words() {
        assert_eq!(
            cron_in_words("0 9 * * 1-5"),
            "at 09:00 UTC, on Monday to Friday"
        );
        assert_eq!(cron_in_words("30 6 * * *"), "at 06:30 UTC, every day");
        assert_eq!(
            cron_in_words("0 0 1 * *"),
            "at 00:00 UTC, on day 1 of every month"
        );
        assert_eq!(
            cron_in_words("*/5 * * * *"),
            "on the cron schedule */5 * * * * (UTC)"
        );
    }
}
