//! The playbook's events as the API takes and shows them: CloudEvents 1.0 in JSON, with the
//! workflow page's limits ("An event: 256 KiB as JSON; `type`, `id` 256 characters; `source`,
//! `subject` 1,024") and the types, sources and attributes the playbook keeps for itself.

use auto_engine::events_kept::{is_kept_source, is_kept_type};
use auto_schema::json_bytes;
use auto_store::{Event, EventFilter, NewEvent, Run};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::api::EventOut;
use crate::auth::Caller;
use crate::problem::{Problem, ProblemIssue};

/// "An event: 256 KiB as JSON" (workflow page, "Limits").
pub const EVENT_BYTES_MAX: usize = 262_144;
/// "`type`, `id` 256 characters".
pub const EVENT_TYPE_CHARS_MAX: usize = 256;
pub const EVENT_ID_CHARS_MAX: usize = 256;
/// "`source`, `subject` 1,024".
pub const EVENT_SOURCE_CHARS_MAX: usize = 1_024;
pub const EVENT_SUBJECT_CHARS_MAX: usize = 1_024;
/// "A listing shows `data` when it is at most 2 KiB and `data_bytes` otherwise" (supplement §2).
pub const LISTED_DATA_BYTES_MAX: usize = 2_048;
/// Events a listing returns unless `limit` says otherwise.
pub const EVENTS_PAGE_DEFAULT: u32 = 100;
/// The most events one page of a listing returns.
pub const EVENTS_PAGE_MAX: u32 = 1_000;
/// CloudEvents: extension attribute names are lowercase letters and digits, at most 20 of them
/// recommended; we hold senders to it so every attribute can be named in a filter.
pub const EXTENSION_NAME_CHARS_MAX: usize = 20;

/// Attributes the playbook sets on its events; a sender may not set them. One list with the
/// emit task's.
pub use auto_engine::events_kept::KEPT_ATTRIBUTES;

/// `/callers/<caller>`, the caller id percent-encoded as one segment of a path.
pub fn caller_source(caller: &str) -> String {
    let mut encoded = String::with_capacity(caller.len());
    for byte in caller.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    format!("/callers/{encoded}")
}

struct Fields {
    issues: Vec<ProblemIssue>,
}

impl Fields {
    fn text(
        &mut self,
        map: &mut Map<String, Value>,
        name: &str,
        max: usize,
        required: bool,
    ) -> Option<String> {
        let pointer = format!("/{name}");
        match map.remove(name) {
            None | Some(Value::Null) if required => {
                self.issues.push(ProblemIssue::field(
                    pointer,
                    format!("The event has no {name}: it is required."),
                ));
                None
            }
            None | Some(Value::Null) => None,
            Some(Value::String(text)) if text.is_empty() => {
                self.issues.push(ProblemIssue::field(
                    pointer,
                    format!("The event's {name} is empty."),
                ));
                None
            }
            Some(Value::String(text)) if text.chars().count() > max => {
                self.issues.push(ProblemIssue::field(
                    pointer,
                    format!("The event's {name} is longer than {max} characters."),
                ));
                None
            }
            Some(Value::String(text)) => Some(text),
            Some(_) => {
                self.issues.push(ProblemIssue::field(
                    pointer,
                    format!("The event's {name} must be a string."),
                ));
                None
            }
        }
    }
}

/// Turns a published event into one to append, or the problems with it.
pub fn published(caller: &Caller, mut map: Map<String, Value>) -> Result<NewEvent, Problem> {
    let size = json_bytes(&map).unwrap_or(usize::MAX);
    if size > EVENT_BYTES_MAX {
        return Err(Problem::invalid_request(vec![ProblemIssue::field(
            "",
            format!("The event holds {size} bytes as JSON: at most 262,144 (256 KiB)."),
        )]));
    }
    let mut fields = Fields { issues: Vec::new() };
    let event_type = fields.text(&mut map, "type", EVENT_TYPE_CHARS_MAX, true);
    let id = fields.text(&mut map, "id", EVENT_ID_CHARS_MAX, false);
    let source = fields.text(&mut map, "source", EVENT_SOURCE_CHARS_MAX, false);
    let subject = fields.text(&mut map, "subject", EVENT_SUBJECT_CHARS_MAX, false);
    let datacontenttype = fields.text(&mut map, "datacontenttype", EVENT_SOURCE_CHARS_MAX, false);
    let time_text = fields.text(&mut map, "time", 64, false);
    let specversion = fields.text(&mut map, "specversion", 16, false);
    let data = map.remove("data");
    if let Some(t) = &event_type
        && is_kept_type(t)
    {
        fields.issues.push(ProblemIssue::field(
            "/type",
            format!("The type {t} is kept for the playbook's own facts: publish events of a type of your own, such as com.example.{t}."),
        ));
    }
    if let Some(s) = &source
        && is_kept_source(s)
    {
        fields.issues.push(ProblemIssue::field(
            "/source",
            format!("The source {s} is kept for the playbook's own facts: /runs/ and /definitions/ name runs and definitions."),
        ));
    }
    if let Some(v) = &specversion
        && v != "1.0"
    {
        fields.issues.push(ProblemIssue::field(
            "/specversion",
            format!("The specversion {v} is not 1.0."),
        ));
    }
    let time = time_text.and_then(|text| match DateTime::parse_from_rfc3339(&text) {
        Ok(time) => Some(time.with_timezone(&Utc)),
        Err(_) => {
            fields.issues.push(ProblemIssue::field(
                "/time",
                format!("The time {text:?} is not an RFC 3339 time such as 2026-04-01T09:30:00Z."),
            ));
            None
        }
    });
    let extensions = extension_attributes(map, &mut fields.issues);
    if !fields.issues.is_empty() {
        return Err(Problem::invalid_request(fields.issues));
    }
    let mut event = NewEvent::new(
        id.unwrap_or_else(crate::runs::new_event_id),
        event_type.unwrap_or_default(),
        source.unwrap_or_else(|| caller_source(&caller.id)),
    );
    event.subject = subject;
    event.time = time;
    event.datacontenttype = datacontenttype;
    event.data = data;
    event.extensions = extensions;
    event
        .extensions
        .insert("caller".into(), Value::String(caller.id.clone()));
    // "An event published from outside has depth 1." (workflow page, "Trigger limits")
    event.extensions.insert("depth".into(), json!(1));
    Ok(event)
}

/// The event an emit task recorded (`Command::EmitEvent`, checked by the engine), as the
/// playbook keeps it: in the run that emitted it, with the caller the run acts for and one
/// level deeper than the run ("A workflow whose trigger matches it starts, one level deeper
/// than the run that emitted it"; a run no reaction started counts as depth 0).
pub fn emitted(run: &Run, event: &Value) -> Result<NewEvent, Problem> {
    let Value::Object(map) = event else {
        return Err(Problem::internal(&"an emitted event is not a mapping"));
    };
    let mut map = map.clone();
    let mut take = |name: &str| match map.remove(name) {
        Some(Value::String(text)) => Some(text),
        _ => None,
    };
    let (id, event_type, source) = (take("id"), take("type"), take("source"));
    let (subject, time, datacontenttype) = (take("subject"), take("time"), take("datacontenttype"));
    map.remove("specversion");
    let (Some(id), Some(event_type), Some(source)) = (id, event_type, source) else {
        return Err(Problem::internal(
            &"an emitted event lacks its id, type or source",
        ));
    };
    let mut new = NewEvent::new(id, event_type, source);
    new.subject = subject;
    new.time = time
        .and_then(|text| DateTime::parse_from_rfc3339(&text).ok())
        .map(|time| time.with_timezone(&Utc));
    new.datacontenttype = datacontenttype;
    new.data = map.remove("data");
    new.extensions = map;
    new.extensions
        .insert("caller".into(), Value::String(run.started_by.clone()));
    new.extensions
        .insert("depth".into(), json!(run.depth.unwrap_or(0) + 1));
    new.run_id = Some(run.run_id.clone());
    Ok(new)
}

fn extension_attributes(
    map: Map<String, Value>,
    issues: &mut Vec<ProblemIssue>,
) -> Map<String, Value> {
    let mut kept = Map::new();
    for (name, value) in map {
        let pointer = format!("/{}", name.replace('~', "~0").replace('/', "~1"));
        if KEPT_ATTRIBUTES.contains(&name.as_str()) {
            issues.push(ProblemIssue::field(
                pointer,
                format!("The attribute {name} is set by the playbook, not by a sender."),
            ));
        } else if name.is_empty()
            || name.len() > EXTENSION_NAME_CHARS_MAX
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        {
            issues.push(ProblemIssue::field(
                pointer,
                format!("The attribute {name:?} is not a CloudEvents attribute name: 1 to 20 lowercase letters and digits."),
            ));
        } else if !matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
            issues.push(ProblemIssue::field(
                pointer,
                format!("The attribute {name} must be a string, a number or a boolean."),
            ));
        } else {
            kept.insert(name, value);
        }
    }
    kept
}

pub(crate) fn time_text(time: &DateTime<Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// An event as the API shows it; `full` shows `data` whatever its size.
pub fn event_out(event: &Event, full: bool) -> EventOut {
    let mut map = Map::new();
    map.insert("specversion".into(), json!("1.0"));
    map.insert("id".into(), json!(event.id));
    map.insert("type".into(), json!(event.event_type));
    map.insert("source".into(), json!(event.source));
    if let Some(subject) = &event.subject {
        map.insert("subject".into(), json!(subject));
    }
    map.insert("time".into(), json!(time_text(&event.time)));
    if let Some(content_type) = &event.datacontenttype {
        map.insert("datacontenttype".into(), json!(content_type));
    }
    if let Some(data) = &event.data {
        let bytes = json_bytes(data).unwrap_or(0);
        if full || bytes <= LISTED_DATA_BYTES_MAX {
            map.insert("data".into(), data.clone());
        } else {
            map.insert("data_bytes".into(), json!(bytes));
        }
    }
    for (name, value) in &event.extensions {
        map.insert(name.clone(), value.clone());
    }
    if let Some(run_id) = &event.run_id {
        map.insert("run_id".into(), json!(run_id));
    }
    map.insert("seq".into(), json!(event.seq));
    map.insert("recorded_at".into(), json!(time_text(&event.recorded_at)));
    EventOut(map)
}

/// The query of `list_playbook_events`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct EventQuery {
    pub run_id: Option<String>,
    #[serde(rename = "type")]
    pub event_type: Option<String>,
    pub after: Option<String>,
    pub limit: Option<String>,
}

impl EventQuery {
    pub fn into_filter(self) -> Result<EventFilter, Problem> {
        let mut issues = Vec::new();
        let after_seq = match self.after.as_deref() {
            None | Some("") => None,
            Some(text) => match text.parse::<i64>() {
                Ok(seq) if seq >= 0 => Some(seq),
                _ => {
                    issues.push(ProblemIssue::field(
                        "/query/after",
                        format!("after {text:?} is not a cursor: pass the next of a page before."),
                    ));
                    None
                }
            },
        };
        let limit = crate::runs::page_limit(
            self.limit.as_deref(),
            (EVENTS_PAGE_DEFAULT, EVENTS_PAGE_MAX),
            &mut issues,
        );
        if !issues.is_empty() {
            return Err(Problem::invalid_request(issues));
        }
        Ok(EventFilter {
            run_id: self.run_id,
            event_type: self.event_type,
            after_seq,
            limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn publish(value: Value) -> Result<NewEvent, Problem> {
        published(&Caller::local(), value.as_object().unwrap().clone())
    }

    #[test]
    fn limits_at_the_edge() {
        let at = "t".repeat(EVENT_TYPE_CHARS_MAX);
        assert!(publish(json!({"type": at})).is_ok());
        let past = "t".repeat(EVENT_TYPE_CHARS_MAX + 1);
        let problem = publish(json!({"type": past})).unwrap_err();
        assert_eq!(
            problem.issues[0].message,
            "The event's type is longer than 256 characters."
        );
        let source = format!("/{}", "s".repeat(EVENT_SOURCE_CHARS_MAX - 1));
        assert!(publish(json!({"type": "a", "source": source})).is_ok());
        assert!(publish(json!({"type": "a", "source": format!("{source}s")})).is_err());
        assert!(publish(json!({"type": "a", "subject": "s".repeat(1024)})).is_ok());
        assert!(publish(json!({"type": "a", "subject": "s".repeat(1025)})).is_err());
        assert!(publish(json!({"type": "a", "id": "i".repeat(256)})).is_ok());
        assert!(publish(json!({"type": "a", "id": "i".repeat(257)})).is_err());
    }

    #[test]
    fn the_whole_event_is_bounded() {
        let overhead = serde_json::to_vec(&json!({"type": "a", "data": ""}))
            .unwrap()
            .len();
        let data = "x".repeat(EVENT_BYTES_MAX - overhead);
        assert!(publish(json!({"type": "a", "data": data})).is_ok());
        let data = "x".repeat(EVENT_BYTES_MAX - overhead + 1);
        assert!(publish(json!({"type": "a", "data": data})).is_err());
    }

    #[test]
    fn kept_types_sources_and_attributes_are_refused() {
        assert!(publish(json!({"type": "run_started"})).is_err());
        assert!(publish(json!({"type": "a", "source": "/runs/x"})).is_err());
        assert!(publish(json!({"type": "a", "source": "/definitions"})).is_err());
        assert!(publish(json!({"type": "a", "source": "/runsx"})).is_ok());
        assert!(publish(json!({"type": "a", "depth": 3})).is_err());
        assert!(publish(json!({"type": "a", "region": "eu"})).is_ok());
        assert!(publish(json!({"type": "a", "Region": "eu"})).is_err());
        assert!(publish(json!({"type": "a", "region": {"x": 1}})).is_err());
    }

    #[test]
    fn published_events_get_their_defaults() {
        let event = publish(json!({"type": "com.example.x"})).unwrap();
        assert_eq!(event.source, "/callers/local");
        assert_eq!(event.extensions["depth"], json!(1));
        assert_eq!(caller_source("a b/c"), "/callers/a%20b%2Fc");
    }
}
