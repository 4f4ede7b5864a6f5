//! Event filters matched without a run (workflow page, "Event filters", "Waiting for events"):
//! the filters of a trigger's `schedule.on`, and those of a listen task whose type is written
//! out, offered the playbook's events. Each filter is held to its own bounds: 250 checkpoints
//! of work an expression, 500 the filter, 200 milliseconds of the server's time, and the
//! sandbox's 64 MiB.
//!
//! What went past a bound decides what happens next, so the outcome says which: an expression
//! that raised or overworked was caused by the event ([`FilterOutcome::Raised`]); a deadline or
//! the memory was not ([`FilterOutcome::Stopped`]), and the event is matched again later.

use std::time::Duration;

use auto_script::{InputBudget, Limit, ScriptError};
use serde_json::{Map, Value};

use super::engine::events::json_equal;
use super::expressions::enclosed;

/// "200 milliseconds of the server's time" a filter.
pub const FILTER_TIME_MS_MAX: u64 = 200;
/// "500 for the filter": the checkpoints of its expressions together.
pub const FILTER_CHECKPOINTS_MAX: u32 = auto_script::INPUT_CHECKPOINTS_MAX;

/// How one filter met one event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterOutcome {
    Matched,
    NotMatched,
    /// An expression raised, or did more than its work: no match, caused by the event.
    Raised(String),
    /// Stopped by its deadline or its memory: no match, not caused by the event.
    Stopped(String),
}

/// Whether `event` (a CloudEvent as JSON) matches a filter's `with`: each attribute written out
/// equals the event's, compared as JSON, and each written as `${ }` holds with the event's
/// attribute as `$data`; an attribute the event lacks is null. `now_ms` is the clock an
/// expression reads.
pub fn match_filter(with: &Map<String, Value>, event: &Value, now_ms: i64) -> FilterOutcome {
    let mut budget = InputBudget::with_time(Duration::from_millis(FILTER_TIME_MS_MAX));
    // Plain attributes first: they cost nothing, and most events differ in their type.
    for (name, written) in with {
        let actual = event.get(name).unwrap_or(&Value::Null);
        if written.as_str().and_then(enclosed).is_none() && !json_equal(written, actual) {
            return FilterOutcome::NotMatched;
        }
    }
    for (name, written) in with {
        let Some((expression, _)) = written.as_str().and_then(enclosed) else {
            continue;
        };
        let actual = event.get(name).unwrap_or(&Value::Null);
        match auto_script::evaluate(expression, &[("$data", actual)], now_ms, &mut budget) {
            Ok(Value::Bool(false) | Value::Null) => return FilterOutcome::NotMatched,
            Ok(_) => {}
            Err(ScriptError::Runtime {
                message,
                limit: Limit::Time | Limit::Memory,
            }) => return FilterOutcome::Stopped(message),
            Err(error) => return FilterOutcome::Raised(error.to_string()),
        }
    }
    FilterOutcome::Matched
}

/// The type a filter writes out, when it does: the filters a playbook's events reach.
pub fn written_type(with: &Map<String, Value>) -> Option<&str> {
    with.get("type")
        .and_then(Value::as_str)
        .filter(|text| enclosed(text).is_none())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// More than the sandbox's 64 MiB in one native call.
    const HUNGRY_FILTER: &str = "${ \"x\".repeat(2 ** 27).length > 0 }";

    fn with(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn attributes_written_out_compare_as_json_and_expressions_read_data() {
        let event = json!({"type": "brief", "depth": 2, "data": {"priority": "high"}});
        let filter = with(json!({"type": "brief", "data": "${ $data.priority === \"high\" }"}));
        assert_eq!(match_filter(&filter, &event, 0), FilterOutcome::Matched);
        let other = json!({"type": "brief", "data": {"priority": "low"}});
        assert_eq!(match_filter(&filter, &other, 0), FilterOutcome::NotMatched);
        assert_eq!(
            match_filter(&with(json!({"type": "brief", "depth": 2.0})), &event, 0),
            FilterOutcome::Matched
        );
        // An attribute the event lacks is null.
        assert_eq!(
            match_filter(&with(json!({"type": "brief", "subject": "x"})), &event, 0),
            FilterOutcome::NotMatched
        );
        assert_eq!(written_type(&filter), Some("brief"));
        assert_eq!(written_type(&with(json!({"type": "${ \"a\" }"}))), None);
    }

    #[test]
    fn a_raise_or_overwork_is_the_events_and_a_deadline_is_not() {
        let event = json!({"type": "t", "data": null});
        let raises = with(json!({"type": "t", "data": "${ $data.x }"}));
        assert!(matches!(
            match_filter(&raises, &event, 0),
            FilterOutcome::Raised(_)
        ));
        let busy = with(json!({"type": "t", "data": "${ (() => { for (;;) {} })() }"}));
        assert!(matches!(
            match_filter(&busy, &event, 0),
            FilterOutcome::Raised(_)
        ));
        // Past the sandbox's memory: stopped, not the event's doing.
        let hungry = with(json!({"type": "t", "data": HUNGRY_FILTER}));
        assert!(
            matches!(match_filter(&hungry, &event, 0), FilterOutcome::Stopped(_)),
            "{:?}",
            match_filter(&hungry, &event, 0)
        );
        // A type that differs is not matched, and its expressions are not evaluated.
        let other = json!({"type": "u", "data": null});
        assert_eq!(match_filter(&busy, &other, 0), FilterOutcome::NotMatched);
    }
}
