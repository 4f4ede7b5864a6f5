//! The event types and sources the playbook keeps for its own facts, in one place.
//!
//! The workflow page ("Emitting an event"): "A type or a source the playbook keeps for its own
//! facts is refused when the document is saved." The facts are the ones a filter matches
//! ("Event filters"): run_started, run_succeeded, run_rejected and run_failed with the source
//! `/runs/<run id>`, and definition_created, definition_updated and definition_retired about
//! definitions; the playbook also records event_published for each event published or emitted,
//! and reaction_refused when a trigger does not start a run ("Trigger limits"). The publish
//! path and the emit task read these lists, so both refuse the same names.

/// Event types only the playbook records: its facts, and the history of its runs (model and
/// tool calls, steps, requests, filters), which nobody else may publish or emit either.
pub const KEPT_EVENT_TYPES: &[&str] = &[
    "run_started",
    "run_succeeded",
    "run_rejected",
    "run_failed",
    "run_cancel_requested",
    "definition_created",
    "definition_updated",
    "definition_retired",
    "event_published",
    "event_received",
    "events_taken",
    "reaction_refused",
    "model_call_started",
    "model_call_answered",
    "model_call_failed",
    "tool_call_started",
    "tool_call_answered",
    "tool_call_failed",
    "step_started",
    "step_completed",
    "step_failed",
    "step_retried",
    "wait_started",
    "wait_ended",
    "call_started",
    "call_ended",
    "request_opened",
    "request_answered",
    "request_expired",
    "request_cancelled",
    "filter_failed",
    "filter_disabled",
];

/// The playbook's facts a filter matches ("Event filters": "the playbook's facts about runs,
/// run_started, run_succeeded, run_rejected and run_failed, and about definitions,
/// definition_created, definition_updated and definition_retired"). The rest of
/// [`KEPT_EVENT_TYPES`] is the playbook's history, which no filter hears.
pub const FACT_TYPES: &[&str] = &[
    "run_started",
    "run_succeeded",
    "run_rejected",
    "run_failed",
    "definition_created",
    "definition_updated",
    "definition_retired",
];

/// Attributes the playbook sets on its events; a sender or an emit task may not set them.
pub const KEPT_ATTRIBUTES: &[&str] = &[
    "seq",
    "run_id",
    "data_bytes",
    "caller",
    "depth",
    "calldepth",
    "definitionversion",
    "triggerkind",
    "triggerreference",
];

/// Path prefixes of the sources of the playbook's facts: `/runs/<run id>` and
/// `/definitions/<type>/<name>`. The bare segments themselves are kept too.
pub const KEPT_SOURCE_PREFIXES: [&str; 2] = ["/runs", "/definitions"];

/// Whether `event_type` is one the playbook keeps for its own facts.
pub fn is_kept_type(event_type: &str) -> bool {
    KEPT_EVENT_TYPES.contains(&event_type)
}

/// Whether `event_type` is of the playbook's history ("The rest of the playbook's history,
/// such as tool calls, steps, requests and answers, is not among them"): kept for itself, and
/// not one of the facts a filter matches.
pub fn is_history_type(event_type: &str) -> bool {
    is_kept_type(event_type) && !FACT_TYPES.contains(&event_type)
}

/// Whether `source` is a source the playbook keeps: `/runs`, `/definitions`, or a path under
/// either.
pub fn is_kept_source(source: &str) -> bool {
    KEPT_SOURCE_PREFIXES.iter().any(|prefix| {
        source
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_sources_are_the_fact_paths_and_nothing_beside_them() {
        assert!(is_kept_source("/runs/abc"));
        assert!(is_kept_source("/definitions"));
        assert!(!is_kept_source("/runsx"));
        assert!(!is_kept_source("https://example.com/runs/1"));
        assert!(is_kept_type("run_started"));
        assert!(!is_kept_type("com.example.brief.submitted"));
        // Facts are heard; the history is not; an event of the playbook's own is not history.
        assert!(!is_history_type("run_succeeded"));
        assert!(!is_history_type("definition_created"));
        for history in [
            "step_started",
            "call_ended",
            "request_opened",
            "model_call_started",
        ] {
            assert!(is_history_type(history), "{history}");
        }
        for history in ["tool_call_failed", "reaction_refused", "filter_failed"] {
            assert!(is_history_type(history), "{history}");
        }
        assert!(!is_history_type("com.example.brief.submitted"));
        assert!(FACT_TYPES.iter().all(|t| is_kept_type(t)));
    }
}
