//! What an interaction run decides, apart from doing it: pure functions from what the run and
//! its request recorded, and what happened, to the step the shell takes (`interaction_runs` for
//! a person's request, `interaction_tools` for a tool's call). The shell reads the store,
//! performs the step and commits it; these tables are tested without any I/O.

use auto_store::RequestStatus;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::reasoning::history::{ToolCallRecord, ToolEnding};

/// What happened to a person's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Happening {
    /// `answer_interaction`, with whether the answer matches the output contract.
    Answer { matches: bool },
    /// The work item that expires the request fell due.
    ExpiryDue,
    /// The run was cancelled (`cancel_run`, or a workflow that stopped waiting).
    Cancel,
}

/// What a request does with what happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RequestStep {
    /// Close the request with this status and end its run, in one transaction.
    Close(RequestStatus),
    /// An answer that came after the request's time: the request expires now, and the answer
    /// is refused in the words of its expiry.
    ExpireThenRefuse,
    /// Refused in the words of how the request closed: it takes nothing more.
    RefuseClosed,
    /// The answer misses the contract: refused with its issues, and the request stays open.
    RefuseAnswer,
    /// Nothing is left to do (an expiry due for a request that closed).
    Nothing,
}

/// The step of a request that stands at `status`, due to expire at `expires_at`, when
/// `happening` happens at `now` (the store's clock).
pub(crate) fn request_step(
    status: RequestStatus,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
    happening: Happening,
) -> RequestStep {
    let open = status == RequestStatus::Open;
    match happening {
        Happening::Answer { .. } if !open => RequestStep::RefuseClosed,
        // "An open request past its time expires rather than take a late answer", even when
        // its expiry has not been taken from the queue yet.
        Happening::Answer { .. } if now >= expires_at => RequestStep::ExpireThenRefuse,
        Happening::Answer { matches: false } => RequestStep::RefuseAnswer,
        Happening::Answer { matches: true } => RequestStep::Close(RequestStatus::Answered),
        Happening::ExpiryDue if open => RequestStep::Close(RequestStatus::Expired),
        Happening::ExpiryDue => RequestStep::Nothing,
        Happening::Cancel if open => RequestStep::Close(RequestStatus::Cancelled),
        Happening::Cancel => RequestStep::RefuseClosed,
    }
}

/// After a close lost its commit to another change of the run: try again while the request
/// is open (the other change took the event number), refuse once it closed.
pub(crate) fn after_lost_close(status: RequestStatus) -> RequestStep {
    if status == RequestStatus::Open {
        RequestStep::Close(RequestStatus::Open)
    } else {
        RequestStep::RefuseClosed
    }
}

/// The event a request's close records, by the status it closes with.
pub(crate) fn close_event(status: RequestStatus) -> &'static str {
    match status {
        RequestStatus::Answered => "request_answered",
        RequestStatus::Expired => "request_expired",
        RequestStatus::Cancelled => "request_cancelled",
        RequestStatus::Undelivered | RequestStatus::Open => "request_undelivered",
    }
}

/// How a tool interaction whose attempt stopped with its server goes on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ToolResume<'a> {
    /// The attempt's last event is younger than its bound: it may still be going on.
    StillRunning,
    /// Nothing was called yet: the arguments are rendered and the call made, the first.
    Call,
    /// The call answered and its result was kept: the result is checked as it would have
    /// been.
    TakeResult(&'a Value),
    /// The call answered but its server keeps no content: the run cannot finish, `because`
    /// `restarted_without_content`.
    NoContent,
    /// The call failed: the run ends as the failure said.
    Failed { because: &'a str, message: &'a str },
    /// The call has no ending and its tool only reads: the call is recorded interrupted and
    /// made again, numbered `number`.
    CallAgain { number: u64 },
    /// The call has no ending and its tool may change something: the call is recorded
    /// interrupted and the run ends `effect_unknown`, because `call_outcome_unknown`; the tool
    /// is never called twice.
    OutcomeUnknown,
}

/// The step of a started tool interaction taken over after its server stopped: `recorded` is
/// its last call, `quiet_ms` how long after its last event (`age_ms` ago) an attempt may still
/// be going on.
pub(crate) fn tool_resume(
    recorded: Option<&ToolCallRecord>,
    age_ms: i64,
    quiet_ms: i64,
) -> ToolResume<'_> {
    if age_ms < quiet_ms {
        return ToolResume::StillRunning;
    }
    let Some(call) = recorded else {
        return ToolResume::Call;
    };
    match &call.ended {
        Some(ToolEnding::Answered(data)) => match &data.result {
            Some(result) => ToolResume::TakeResult(result),
            None => ToolResume::NoContent,
        },
        Some(ToolEnding::Failed(data)) => ToolResume::Failed {
            because: data.because.as_deref().unwrap_or("server_failure"),
            message: data.message.as_deref().unwrap_or_default(),
        },
        None if call.started.read_only => ToolResume::CallAgain {
            number: call.started.number + 1,
        },
        None => ToolResume::OutcomeUnknown,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::reasoning::history::{ToolCallEnded, ToolCallStarted};

    #[test]
    fn a_request_decides_by_its_status_its_time_and_what_happened() {
        use Happening::*;
        use RequestStatus::*;
        use RequestStep as Step;
        let expires = "2026-12-02T10:00:00Z".parse::<DateTime<Utc>>().unwrap();
        let before = expires - chrono::Duration::milliseconds(1);
        let good = Answer { matches: true };
        let bad = Answer { matches: false };
        let cases = [
            // (status, now, happening, step)
            (Open, before, good, Step::Close(Answered)),
            (Open, before, bad, Step::RefuseAnswer),
            (Open, expires, good, Step::ExpireThenRefuse),
            (Open, expires, bad, Step::ExpireThenRefuse),
            (Answered, before, good, Step::RefuseClosed),
            (Expired, before, good, Step::RefuseClosed),
            (Cancelled, before, bad, Step::RefuseClosed),
            (Undelivered, expires, good, Step::RefuseClosed),
            (Open, expires, ExpiryDue, Step::Close(Expired)),
            // The queue's clock may run a little ahead of the store's.
            (Open, before, ExpiryDue, Step::Close(Expired)),
            (Answered, expires, ExpiryDue, Step::Nothing),
            (Cancelled, expires, ExpiryDue, Step::Nothing),
            (Open, before, Cancel, Step::Close(Cancelled)),
            (Open, expires, Cancel, Step::Close(Cancelled)),
            (Answered, before, Cancel, Step::RefuseClosed),
            (Expired, expires, Cancel, Step::RefuseClosed),
        ];
        for (status, now, happening, step) in cases {
            assert_eq!(
                request_step(status, expires, now, happening),
                step,
                "{status:?} at {now} on {happening:?}"
            );
        }
    }

    #[test]
    fn a_lost_close_is_tried_again_only_while_the_request_is_open() {
        assert_eq!(
            after_lost_close(RequestStatus::Open),
            RequestStep::Close(RequestStatus::Open)
        );
        for status in [
            RequestStatus::Answered,
            RequestStatus::Expired,
            RequestStatus::Cancelled,
            RequestStatus::Undelivered,
        ] {
            assert_eq!(after_lost_close(status), RequestStep::RefuseClosed);
        }
    }

    #[test]
    fn each_close_records_its_event() {
        assert_eq!(close_event(RequestStatus::Answered), "request_answered");
        assert_eq!(close_event(RequestStatus::Expired), "request_expired");
        assert_eq!(close_event(RequestStatus::Cancelled), "request_cancelled");
        assert_eq!(
            close_event(RequestStatus::Undelivered),
            "request_undelivered"
        );
    }

    fn call(read_only: bool, ended: Option<ToolEnding>) -> ToolCallRecord {
        ToolCallRecord {
            started: ToolCallStarted {
                number: 1,
                call_id: "c1".into(),
                server: "crm".into(),
                tool: "find-owner".into(),
                read_only,
            },
            ended,
        }
    }

    #[test]
    fn a_tool_interaction_goes_on_from_its_last_call_and_never_calls_twice_what_may_change() {
        let result = json!({"owner": "ana"});
        let answered = ToolEnding::Answered(ToolCallEnded {
            number: 1,
            result: Some(result.clone()),
            ..ToolCallEnded::default()
        });
        let no_content = ToolEnding::Answered(ToolCallEnded {
            number: 1,
            ..ToolCallEnded::default()
        });
        let failed = ToolEnding::Failed(ToolCallEnded {
            number: 1,
            because: Some("tool_error".into()),
            message: Some("no such owner".into()),
            ..ToolCallEnded::default()
        });
        let failed_unsaid = ToolEnding::Failed(ToolCallEnded::default());
        let cases: Vec<(Option<ToolCallRecord>, i64, ToolResume)> = vec![
            // (last call, age in ms of the last event, step) with a bound of 75,000 ms
            (None, 74_999, ToolResume::StillRunning),
            (Some(call(false, None)), 0, ToolResume::StillRunning),
            (None, 75_000, ToolResume::Call),
            (
                Some(call(true, Some(answered.clone()))),
                75_000,
                ToolResume::TakeResult(&result),
            ),
            (
                Some(call(false, Some(answered))),
                80_000,
                ToolResume::TakeResult(&result),
            ),
            (
                Some(call(false, Some(no_content))),
                80_000,
                ToolResume::NoContent,
            ),
            (
                Some(call(true, Some(failed))),
                80_000,
                ToolResume::Failed {
                    because: "tool_error",
                    message: "no such owner",
                },
            ),
            (
                Some(call(false, Some(failed_unsaid))),
                80_000,
                ToolResume::Failed {
                    because: "server_failure",
                    message: "",
                },
            ),
            (
                Some(call(true, None)),
                80_000,
                ToolResume::CallAgain { number: 2 },
            ),
            (Some(call(false, None)), 80_000, ToolResume::OutcomeUnknown),
        ];
        for (recorded, age_ms, step) in &cases {
            assert_eq!(
                tool_resume(recorded.as_ref(), *age_ms, 75_000),
                *step,
                "{recorded:?} after {age_ms} ms"
            );
        }
    }
}
