//! Events in a run: the events sent to it, kept until a `listen` task takes them ("Waiting for
//! events"), and the events its `emit` tasks record in the playbook ("Emitting an event"), with
//! the limits of the page's table on both.
//!
//! The events sent to a run are part of its snapshot ([`EventBook`]): the shell hands each to
//! the engine as `Input::EventReceived`, the engine keeps it, earliest first, and every time the
//! tree is driven a listening task takes the earliest kept events its filters match. So an
//! event sent before a task listens and one sent while it listens go the same way.

use auto_schema::json_bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::super::expressions::enclosed;
use super::errors::WorkflowError;
use super::eval::{Vars, iso8601};
use super::run::{Engine, TaskEnd};
use super::{Command, TaskInfo, ids};
use crate::events_kept::{KEPT_ATTRIBUTES, is_kept_source, is_kept_type};

/// "Events waiting to be taken: 64, or 1 MiB as JSON" (workflow page, "Limits"): one more ends
/// the run at once, rejected.
pub const EVENTS_WAITING_MAX: usize = 64;
pub const EVENTS_WAITING_BYTES_MAX: usize = 1024 * 1024;
/// "Events over a run's life: 1,024, or 4 MiB as JSON": one more ends the run at once,
/// rejected.
pub const EVENTS_RECEIVED_MAX: usize = 1_024;
pub const EVENTS_RECEIVED_BYTES_MAX: usize = 4 * 1024 * 1024;
/// "Events a run emits: 1,024, or 4 MiB as JSON, over its life": "An emit beyond the limit on
/// emitted events fails its task with a runtime error of status 500".
pub const EVENTS_EMITTED_MAX: u32 = 1_024;
pub const EVENTS_EMITTED_BYTES_MAX: usize = 4 * 1024 * 1024;
/// "An emitted event: 240 KiB as JSON": a larger one "fails it with a validation error of
/// status 400".
pub const EMITTED_EVENT_BYTES_MAX: usize = 240 * 1024;
/// "`type`, `id` 256 characters; `source`, `subject` 1,024" (an event's attributes).
pub const EVENT_TYPE_CHARS_MAX: usize = 256;
pub const EVENT_SOURCE_CHARS_MAX: usize = 1_024;
pub const EVENT_SUBJECT_CHARS_MAX: usize = 1_024;
/// CloudEvents: an extension attribute's name is lowercase letters and digits, at most 20.
pub const EXTENSION_NAME_CHARS_MAX: usize = 20;

/// The events of a run: those kept for its listening tasks, what it received and emitted over
/// its life. Part of the snapshot.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EventBook {
    /// Events received and not taken yet, earliest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    inbox: Vec<Kept>,
    /// The id of every event received, in order: a second event with one of them is ignored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    received_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "is_zero")]
    received_bytes: usize,
    #[serde(default, skip_serializing_if = "is_zero")]
    emitted: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    emitted_bytes: usize,
}

fn is_zero<T: Default + PartialEq>(n: &T) -> bool {
    *n == T::default()
}

/// An event kept for the run: its number among the events received (its order), its size, the
/// event as the shell handed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Kept {
    n: usize,
    bytes: usize,
    event: Value,
}

/// What the run does with an event sent to it.
pub(super) enum Receipt {
    /// An id received before: the event is ignored.
    Duplicate,
    Kept,
    /// Past the limits on a run's life: the run ends with this error.
    Refused(WorkflowError),
}

impl EventBook {
    /// Keeps an event sent to the run, unless its id was received before or it is one more
    /// than a run takes over its life.
    pub(super) fn receive(&mut self, event: Value) -> Receipt {
        let id = event.get("id").and_then(Value::as_str).unwrap_or_default();
        if self.received_ids.iter().any(|seen| seen == id) {
            return Receipt::Duplicate;
        }
        let bytes = json_bytes(&event).unwrap_or(usize::MAX);
        self.received_ids.push(id.to_owned());
        self.received_bytes = self.received_bytes.saturating_add(bytes);
        let count = self.received_ids.len();
        if count > EVENTS_RECEIVED_MAX {
            return Receipt::Refused(WorkflowError::runtime(format!(
                "The run received {count} events; a run takes at most 1,024 over its life."
            )));
        }
        if self.received_bytes > EVENTS_RECEIVED_BYTES_MAX {
            return Receipt::Refused(WorkflowError::runtime(format!(
                "The run received {} bytes of events as JSON; a run takes at most 4 MiB over its life.",
                self.received_bytes
            )));
        }
        self.inbox.push(Kept {
            n: count,
            bytes,
            event,
        });
        Receipt::Kept
    }

    /// The error that ends the run when more events wait than a run keeps.
    pub(super) fn waiting_past_limits(&self) -> Option<WorkflowError> {
        let count = self.inbox.len();
        if count > EVENTS_WAITING_MAX {
            return Some(WorkflowError::runtime(format!(
                "{count} events wait to be taken; a run keeps at most 64."
            )));
        }
        let bytes: usize = self.inbox.iter().map(|k| k.bytes).sum();
        if bytes > EVENTS_WAITING_BYTES_MAX {
            return Some(WorkflowError::runtime(format!(
                "The events waiting to be taken hold {bytes} bytes as JSON; a run keeps at most 1 MiB."
            )));
        }
        None
    }

    /// Puts events a task took back among those waiting, in the order they were received.
    fn put_back(&mut self, events: Vec<Kept>) {
        for kept in events {
            let at = self.inbox.partition_point(|k| k.n < kept.n);
            self.inbox.insert(at, kept);
        }
    }

    /// Lets a heard event pass when it still waits: no task took it, so it leaves the run as
    /// if it never came, its id and size no longer counted among those received.
    pub(super) fn let_pass(&mut self, id: &str) {
        let waiting = |k: &Kept| k.event.get("id").and_then(Value::as_str) == Some(id);
        let Some(at) = self.inbox.iter().position(waiting) else {
            return;
        };
        let kept = self.inbox.remove(at);
        self.received_bytes = self.received_bytes.saturating_sub(kept.bytes);
        if let Some(seen) = self.received_ids.iter().rposition(|seen| seen == id) {
            self.received_ids.remove(seen);
        }
    }

    /// Whether an event of this id was received (and not let pass).
    pub(super) fn has_received(&self, id: &str) -> bool {
        self.received_ids.iter().any(|seen| seen == id)
    }

    /// How many events wait to be taken.
    pub fn waiting(&self) -> usize {
        self.inbox.len()
    }
}

/// The body of a listen task under way: a slot for each event it takes (one for `one` and
/// `any`, one for each filter of `all`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct Listening {
    taken: Vec<Option<Kept>>,
}

/// How a listen task takes its events.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `one`, or `any`: one event that matches any filter.
    First,
    /// `all`: one event for each filter.
    Each,
}

impl Engine<'_> {
    fn listen_filters(&self, info: &TaskInfo) -> (Mode, Vec<Map<String, Value>>) {
        let to = self
            .wf
            .field(info, "listen/to")
            .cloned()
            .unwrap_or(Value::Null);
        let with = |filter: &Value| {
            filter
                .get("with")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let list = |key: &str| -> Vec<Map<String, Value>> {
            to.get(key)
                .and_then(Value::as_array)
                .map(|filters| filters.iter().map(with).collect())
                .unwrap_or_default()
        };
        if let Some(one) = to.get("one") {
            (Mode::First, vec![with(one)])
        } else if to.get("all").is_some() {
            (Mode::Each, list("all"))
        } else {
            (Mode::First, list("any"))
        }
    }

    /// A listen task begins: a slot for each event it waits for.
    pub(super) fn start_listen(&self, info: &TaskInfo) -> Listening {
        let (mode, filters) = self.listen_filters(info);
        let slots = if mode == Mode::Each { filters.len() } else { 1 };
        Listening {
            taken: vec![None; slots],
        }
    }

    /// Takes the earliest waiting events the task's filters match, in the order they were
    /// received; each goes to the first of its filters still without an event. Done when every
    /// slot holds one.
    pub(super) fn drive_listen(&mut self, info: &TaskInfo, listening: &mut Listening) -> TaskEnd {
        let (mode, filters) = self.listen_filters(info);
        let mut index = 0;
        while index < self.book.inbox.len() && listening.taken.iter().any(Option::is_none) {
            let event = self.book.inbox[index].event.clone();
            let mut slot = None;
            for (i, filter) in filters.iter().enumerate() {
                let place = if mode == Mode::Each { i } else { 0 };
                if listening.taken[place].is_some() {
                    continue;
                }
                match self.filter_matches(filter, &event) {
                    Ok(true) => {
                        slot = Some(place);
                        break;
                    }
                    Ok(false) => {}
                    Err(error) => {
                        // "A filter that raises on an event sent to the run raises an
                        // expression error at the task." The task took that event.
                        self.book.inbox.remove(index);
                        let taken = listening
                            .taken
                            .iter_mut()
                            .filter_map(Option::take)
                            .collect();
                        self.book.put_back(taken);
                        let id = event.get("id").and_then(Value::as_str).unwrap_or_default();
                        let detail = error.detail.clone().unwrap_or_default();
                        return TaskEnd::Raised(WorkflowError {
                            detail: Some(format!("The filter raised on the event {id}: {detail}")),
                            ..error
                        });
                    }
                }
            }
            match slot {
                Some(place) => listening.taken[place] = Some(self.book.inbox.remove(index)),
                None => index += 1,
            }
        }
        let Some(taken) = listening
            .taken
            .iter()
            .map(|slot| slot.as_ref().map(|kept| &kept.event))
            .collect::<Option<Vec<&Value>>>()
        else {
            return TaskEnd::Waiting;
        };
        let whole = matches!(
            self.wf.field(info, "listen/read").and_then(Value::as_str),
            Some("envelope" | "raw")
        );
        let output = taken
            .into_iter()
            .map(|event| match whole {
                true => event.clone(),
                false => event.get("data").cloned().unwrap_or(Value::Null),
            })
            .collect();
        let ids: Vec<&Value> = listening
            .taken
            .iter()
            .flatten()
            .map(|kept| &kept.event["id"])
            .collect();
        self.event("events_taken", info, json!({ "event_ids": ids }));
        TaskEnd::Done(Value::Array(output), None)
    }

    /// A listen task that stops before it took every event it waits for (its timeout) puts
    /// back those it took, for a later task to take.
    pub(super) fn release_listen(&mut self, listening: &mut Listening) {
        let taken = listening
            .taken
            .iter_mut()
            .filter_map(Option::take)
            .collect();
        self.book.put_back(taken);
    }

    /// Whether an event matches a filter's `with`: each attribute written out equals the
    /// event's, compared as JSON, and each written as `${ }` holds with the event's attribute as
    /// `$data`; an attribute the event lacks is null.
    fn filter_matches(
        &mut self,
        with: &Map<String, Value>,
        event: &Value,
    ) -> Result<bool, WorkflowError> {
        for (name, written) in with {
            let actual = event.get(name).unwrap_or(&Value::Null);
            let holds = match written.as_str().and_then(enclosed) {
                Some((expression, _)) => {
                    let vars = Vars {
                        data: Some(actual),
                        ..Vars::default()
                    };
                    let value = self.eval(expression, &vars)?;
                    !matches!(value, Value::Bool(false) | Value::Null)
                }
                None => json_equal(written, actual),
            };
            if !holds {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// An emit task: the event its `with` gives, checked, with the id made from the run and
    /// the task and the step's time unless it gives one; recorded through the step's commands.
    pub(super) fn emit(&mut self, info: &TaskInfo, vars: &Vars<'_>) -> Result<(), WorkflowError> {
        let written = self
            .wf
            .field(info, "emit/event/with")
            .cloned()
            .unwrap_or(Value::Null);
        let Value::Object(attributes) = self.template(&written, vars)? else {
            return Err(WorkflowError::validation(
                "The event's attributes are not a mapping.",
            ));
        };
        let n = self.count("emit", &info.pointer);
        let id = ids::emitted_event_id(&self.info.run_id, &info.pointer, n);
        let event = emitted_event(attributes, id, self.now_ms)?;
        let bytes = json_bytes(&event).unwrap_or(usize::MAX);
        if bytes > EMITTED_EVENT_BYTES_MAX {
            return Err(WorkflowError::validation(format!(
                "The event holds {bytes} bytes as JSON; an emitted event holds at most 245,760 (240 KiB)."
            )));
        }
        let emitted = self.book.emitted.saturating_add(1);
        if emitted > EVENTS_EMITTED_MAX {
            return Err(WorkflowError::runtime(
                "The run emitted 1,024 events, the most a run emits over its life.",
            ));
        }
        let emitted_bytes = self.book.emitted_bytes.saturating_add(bytes);
        if emitted_bytes > EVENTS_EMITTED_BYTES_MAX {
            return Err(WorkflowError::runtime(format!(
                "The run's emitted events would hold {emitted_bytes} bytes as JSON; a run emits at most 4 MiB over its life."
            )));
        }
        self.book.emitted = emitted;
        self.book.emitted_bytes = emitted_bytes;
        self.event(
            "event_published",
            info,
            json!({ "event": { "id": event["id"], "type": event["type"], "source": event["source"] } }),
        );
        self.commands.push(Command::EmitEvent { event });
        Ok(())
    }
}

/// The event an emit task records: its attributes checked as `publish_event` checks a sender's,
/// with `specversion`, the derived id, and the step's time unless it gives one.
fn emitted_event(
    mut attributes: Map<String, Value>,
    id: String,
    now_ms: i64,
) -> Result<Value, WorkflowError> {
    let mut event = Map::new();
    event.insert("specversion".into(), json!("1.0"));
    event.insert("id".into(), json!(id));
    let event_type = text(&mut attributes, "type", EVENT_TYPE_CHARS_MAX)?
        .ok_or_else(|| WorkflowError::validation("The event has no type: it is required."))?;
    if is_kept_type(&event_type) {
        return Err(WorkflowError::validation(format!(
            "The type {event_type} is one the playbook keeps for its own facts."
        )));
    }
    let source = text(&mut attributes, "source", EVENT_SOURCE_CHARS_MAX)?
        .ok_or_else(|| WorkflowError::validation("The event has no source: it is required."))?;
    if is_kept_source(&source) {
        return Err(WorkflowError::validation(format!(
            "The source {source} is one the playbook keeps for its own facts."
        )));
    }
    event.insert("type".into(), json!(event_type));
    event.insert("source".into(), json!(source));
    if let Some(subject) = text(&mut attributes, "subject", EVENT_SUBJECT_CHARS_MAX)? {
        event.insert("subject".into(), json!(subject));
    }
    let time = match text(&mut attributes, "time", 64)? {
        Some(time) if is_rfc3339(&time) => time,
        Some(time) => {
            return Err(WorkflowError::validation(format!(
                "The time {time:?} is not an RFC 3339 time such as 2026-04-01T09:30:00Z."
            )));
        }
        None => iso8601(now_ms),
    };
    event.insert("time".into(), json!(time));
    for name in ["datacontenttype", "dataschema"] {
        if let Some(value) = text(&mut attributes, name, EVENT_SOURCE_CHARS_MAX)? {
            event.insert(name.into(), json!(value));
        }
    }
    let data = attributes.remove("data");
    attributes.remove("id");
    attributes.remove("specversion");
    for (name, value) in attributes {
        if KEPT_ATTRIBUTES.contains(&name.as_str()) {
            return Err(WorkflowError::validation(format!(
                "The attribute {name} is set by the playbook, not by a sender."
            )));
        }
        let named = !name.is_empty()
            && name.len() <= EXTENSION_NAME_CHARS_MAX
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if !named {
            return Err(WorkflowError::validation(format!(
                "The attribute {name:?} is not a CloudEvents attribute name: 1 to 20 lowercase letters and digits."
            )));
        }
        match value {
            Value::Null => {}
            Value::String(_) | Value::Number(_) | Value::Bool(_) => {
                event.insert(name, value);
            }
            _ => {
                return Err(WorkflowError::validation(format!(
                    "The attribute {name} must be a string, a number or a boolean."
                )));
            }
        }
    }
    if let Some(data) = data.filter(|d| !d.is_null()) {
        event.insert("data".into(), data);
    }
    Ok(Value::Object(event))
}

/// An attribute that is text of 1 to `max` characters, or absent (null is absent).
fn text(
    attributes: &mut Map<String, Value>,
    name: &str,
    max: usize,
) -> Result<Option<String>, WorkflowError> {
    match attributes.remove(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.is_empty() => Err(WorkflowError::validation(format!(
            "The event's {name} is empty."
        ))),
        Some(Value::String(text)) if text.chars().count() > max => Err(WorkflowError::validation(
            format!("The event's {name} is longer than {max} characters."),
        )),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(WorkflowError::validation(format!(
            "The event's {name} must be a string."
        ))),
    }
}

/// Equality "compared as JSON": numbers by their value, so 1 equals 1.0.
pub(crate) fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, value)| y.get(key).is_some_and(|other| json_equal(value, other)))
        }
        _ => a == b,
    }
}

/// An RFC 3339 date and time: `2026-04-01T09:30:00Z`, with an optional fraction of a second
/// and `Z` or an offset such as `+02:00`.
fn is_rfc3339(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|part| part.iter().all(u8::is_ascii_digit))
    };
    let number = |range: std::ops::Range<usize>| -> u32 {
        text.get(range)
            .and_then(|part| part.parse().ok())
            .unwrap_or(u32::MAX)
    };
    if bytes.len() < 20
        || !digits(0..4)
        || bytes[4] != b'-'
        || !digits(5..7)
        || bytes[7] != b'-'
        || !digits(8..10)
        || !matches!(bytes[10], b'T' | b't')
        || !digits(11..13)
        || bytes[13] != b':'
        || !digits(14..16)
        || bytes[16] != b':'
        || !digits(17..19)
    {
        return false;
    }
    let in_range = (1..=12).contains(&number(5..7))
        && (1..=31).contains(&number(8..10))
        && number(11..13) <= 23
        && number(14..16) <= 59
        && number(17..19) <= 60;
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let count = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if count == 0 {
            return false;
        }
        rest = &fraction[count..];
    }
    let zone = match rest {
        "Z" | "z" => true,
        offset => {
            let b = offset.as_bytes();
            b.len() == 6
                && matches!(b[0], b'+' | b'-')
                && b[1..3].iter().all(u8::is_ascii_digit)
                && b[3] == b':'
                && b[4..6].iter().all(u8::is_ascii_digit)
                && offset[1..3].parse::<u32>().is_ok_and(|h| h <= 23)
                && offset[4..6].parse::<u32>().is_ok_and(|m| m <= 59)
        }
    };
    in_range && zone
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times() {
        assert!(is_rfc3339("2026-04-01T09:30:00Z"));
        assert!(is_rfc3339("2026-04-01T09:30:00.123+02:00"));
        assert!(!is_rfc3339("2026-04-01T09:30:00"));
        assert!(!is_rfc3339("2026-13-01T09:30:00Z"));
        assert!(!is_rfc3339("2026-04-01 09:30Z"));
        assert!(!is_rfc3339("2026-04-01T09:30:00.Z"));
    }

    #[test]
    fn json_equality_reads_numbers_by_value() {
        assert!(json_equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!json_equal(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!json_equal(&json!("1"), &json!(1)));
    }
}
