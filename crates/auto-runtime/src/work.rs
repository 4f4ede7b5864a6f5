//! The work a run has waiting, typed. Every item the store keeps is one [`WorkItem`],
//! serialised by serde and read back by serde: an input of a workflow run (the engine's own
//! [`Input`], applied to its snapshot in the order received) or an order carried out beside a
//! run (a child to start or cancel, a child's ending to hand its caller, a request to expire
//! or deliver). The store keeps the payload as given; no other module writes or reads one.
//!
//! The serialised forms are those earlier versions wrote, so work that waited across an
//! upgrade is read as it was meant. Beside the item a payload may hold `trace`, the W3C trace
//! context (`traceparent`, `tracestate`) of the span that left the work, so the step that
//! carries it out, on whichever server and however much later, goes on in the same trace; it
//! is written only while traces are exported, and a payload without it reads as before.

use std::collections::HashMap;

use auto_engine::workflow::engine::Input;
use auto_store::NewWork;
use auto_tools::client::trace_context;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The key of a payload that holds the trace context beside the item.
const TRACE_KEY: &str = "trace";

/// The W3C trace context of a span, as the propagator writes it into headers.
pub type TraceContext = HashMap<String, String>;

/// One work item of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum WorkItem {
    /// An input of a workflow run: `{"input": "<kind>", ...}`.
    Input(Input),
    /// An order carried out beside a run: `{"<order>": {...}}`.
    Order(Order),
}

/// What a server does for a run beside applying its inputs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// A workflow's call: start (or find, by its id) the child run.
    StartCall(StartCall),
    /// Stop a child the workflow no longer waits for.
    CancelCall(CancelCall),
    /// A child ended: its caller applies its output or problem as the call's ending. An input
    /// of the caller, though the child's run is read when it is applied.
    ChildEnded(ChildEnded),
    /// An interaction's request is due to expire.
    ExpireRequest(Expiry),
    /// An attempt to post an interaction's request to its webhook.
    DeliverRequest(Delivery),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartCall {
    pub call_id: String,
    pub child_run_id: String,
    #[serde(rename = "type")]
    pub def_type: String,
    pub name: String,
    pub input: Value,
    pub wait_ms: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelCall {
    pub call_id: String,
    pub child_run_id: String,
    /// `parent_ended` or `deadline`.
    pub kind: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildEnded {
    pub call_id: String,
    pub child_run_id: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Expiry {
    pub request_id: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    pub request_id: String,
    pub webhook: String,
    /// 1 for the first attempt.
    pub attempt: u32,
}

impl WorkItem {
    /// Whether it is an input of its run, applied to its snapshot one at a time in the order
    /// received, rather than an order that may take long and goes at once.
    pub fn is_input(&self) -> bool {
        matches!(self, Self::Input(_) | Self::Order(Order::ChildEnded(_)))
    }

    /// The item as the store keeps it, under `key` (once per run), due at `due_at` or at once,
    /// with the trace context of the current span when traces are exported.
    pub fn to_work(&self, key: impl Into<String>, due_at: Option<DateTime<Utc>>) -> NewWork {
        self.to_work_in(key, due_at, &trace_context())
    }

    /// [`Self::to_work`] with the trace context `trace` (none when empty).
    pub fn to_work_in(
        &self,
        key: impl Into<String>,
        due_at: Option<DateTime<Utc>>,
        trace: &TraceContext,
    ) -> NewWork {
        // Invariant: every variant is plain data, which serde_json always serialises, and
        // every variant is a JSON object.
        let payload = if trace.is_empty() {
            serde_json::to_vec(self).unwrap_or_default()
        } else {
            let mut value = serde_json::to_value(self).unwrap_or_default();
            if let Value::Object(fields) = &mut value {
                fields.insert(TRACE_KEY.into(), serde_json::json!(trace));
            }
            serde_json::to_vec(&value).unwrap_or_default()
        };
        NewWork {
            key: key.into(),
            due_at,
            payload,
            ordered: self.is_input(),
        }
    }

    /// The item a stored payload holds, or why none can be read from it. Read without
    /// serde_json's limit of 128 levels: an input or an event nests up to 512, and was bounded
    /// before it was written.
    pub fn read(payload: &[u8]) -> Result<Self, serde_json::Error> {
        Self::read_traced(payload).map(|(item, _)| item)
    }

    /// [`Self::read`], and the trace context the payload holds (empty when none).
    pub fn read_traced(payload: &[u8]) -> Result<(Self, TraceContext), serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_slice(payload);
        deserializer.disable_recursion_limit();
        let mut value = Value::deserialize(&mut deserializer)?;
        deserializer.end()?;
        let trace = match &mut value {
            Value::Object(fields) => match fields.remove(TRACE_KEY) {
                Some(Value::Object(trace)) => trace
                    .into_iter()
                    .filter_map(|(name, value)| Some((name, value.as_str()?.to_owned())))
                    .collect(),
                Some(_) => {
                    return Err(serde::de::Error::custom(
                        "a work item's trace is not an object",
                    ));
                }
                None => TraceContext::new(),
            },
            _ => TraceContext::new(),
        };
        Ok((Self::deserialize(value)?, trace))
    }
}

/// Makes `span` a child of the span whose trace context `trace` is, when it names one.
pub fn continue_trace(span: &tracing::Span, trace: &TraceContext) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    if trace.is_empty() {
        return;
    }
    let parent =
        opentelemetry::global::get_text_map_propagator(|propagator| propagator.extract(trace));
    let _ = span.set_parent(parent);
}

impl From<Input> for WorkItem {
    fn from(input: Input) -> Self {
        Self::Input(input)
    }
}

impl From<Order> for WorkItem {
    fn from(order: Order) -> Self {
        Self::Order(order)
    }
}

/// The key of a child's ending among its caller's work: one a call, whether the child's own
/// ending or a refusal to start it comes first.
pub fn ended_key(call_id: &str) -> String {
    format!("ended:{call_id}")
}

#[cfg(test)]
mod tests {
    use auto_engine::workflow::engine::CallOutcome;
    use serde_json::json;

    use super::*;

    /// Each kind of item, and the payload earlier versions wrote for it: read back as the
    /// same item, and written as that payload.
    #[test]
    fn every_item_reads_and_writes_the_payload_earlier_versions_kept() {
        let cases: Vec<(WorkItem, Value)> = vec![
            (
                Input::Start {
                    input: json!({"x": 0}),
                }
                .into(),
                json!({"input": "start", "value": {"x": 0}}),
            ),
            (
                Input::TimerFired {
                    timer_id: "wait:/do/0#1".into(),
                }
                .into(),
                json!({"input": "timer", "timer_id": "wait:/do/0#1"}),
            ),
            (
                Input::Cancel {
                    detail: "Stopped.".into(),
                    kind: Some("deadline".into()),
                }
                .into(),
                json!({"input": "cancel", "detail": "Stopped.", "kind": "deadline"}),
            ),
            (
                Input::EventReceived {
                    event: json!({"id": "e-1"}),
                }
                .into(),
                json!({"input": "event", "event": {"id": "e-1"}}),
            ),
            (
                Input::EventHeard {
                    event: json!({"id": "e-2"}),
                }
                .into(),
                json!({"input": "heard", "event": {"id": "e-2"}}),
            ),
            (
                Input::CallEnded {
                    call_id: "call:/do/0#1".into(),
                    outcome: CallOutcome::Succeeded {
                        output: json!(null),
                    },
                }
                .into(),
                json!({"input": "call_ended", "call_id": "call:/do/0#1", "outcome": {"output": null}}),
            ),
            (
                Input::CallEnded {
                    call_id: "call:/do/0#2".into(),
                    outcome: CallOutcome::Rejected {
                        problem: crate::problem::Problem::new(
                            crate::problem::Reason::Unavailable,
                            "Down",
                            "It is down.",
                        ),
                    },
                }
                .into(),
                json!({"input": "call_ended", "call_id": "call:/do/0#2", "outcome": {"problem": {
                    "type": "https://on.auto/problems/unavailable", "title": "Down", "status": 503,
                    "reason": "unavailable", "kind": null, "because": null, "detail": "It is down."
                }}}),
            ),
            (
                Order::StartCall(StartCall {
                    call_id: "call:/do/0#1".into(),
                    child_run_id: "r.0".into(),
                    def_type: "computation".into(),
                    name: "double".into(),
                    input: json!({"n": 1}),
                    wait_ms: 70_000,
                })
                .into(),
                json!({"start_call": {"call_id": "call:/do/0#1", "child_run_id": "r.0", "type": "computation", "name": "double", "input": {"n": 1}, "wait_ms": 70_000}}),
            ),
            (
                Order::CancelCall(CancelCall {
                    call_id: "call:/do/0#1".into(),
                    child_run_id: "r.0".into(),
                    kind: "parent_ended".into(),
                })
                .into(),
                json!({"cancel_call": {"call_id": "call:/do/0#1", "child_run_id": "r.0", "kind": "parent_ended"}}),
            ),
            (
                Order::ChildEnded(ChildEnded {
                    call_id: "call:/do/0#1".into(),
                    child_run_id: "r.0".into(),
                })
                .into(),
                json!({"child_ended": {"call_id": "call:/do/0#1", "child_run_id": "r.0"}}),
            ),
            (
                Order::ExpireRequest(Expiry {
                    request_id: "q-1".into(),
                })
                .into(),
                json!({"expire_request": {"request_id": "q-1"}}),
            ),
            (
                Order::DeliverRequest(Delivery {
                    request_id: "q-1".into(),
                    webhook: "ops".into(),
                    attempt: 2,
                })
                .into(),
                json!({"deliver_request": {"request_id": "q-1", "webhook": "ops", "attempt": 2}}),
            ),
        ];
        for (item, payload) in cases {
            assert_eq!(WorkItem::read(&bytes(&payload)).unwrap(), item, "{payload}");
            let written = item.to_work("k", None).payload;
            assert_eq!(serde_json::from_slice::<Value>(&written).unwrap(), payload);
        }
        // A cancel of an early version had no kind.
        assert_eq!(
            WorkItem::read(&bytes(&json!({"input": "cancel", "detail": "Stop."}))).unwrap(),
            Input::Cancel {
                detail: "Stop.".into(),
                kind: None
            }
            .into()
        );
    }

    #[test]
    fn inputs_and_endings_are_ordered_and_orders_are_not() {
        let ended = Order::ChildEnded(ChildEnded {
            call_id: "c".into(),
            child_run_id: "r".into(),
        });
        assert!(WorkItem::from(ended).to_work("ended:c", None).ordered);
        assert!(
            WorkItem::from(Input::TimerFired {
                timer_id: "t".into()
            })
            .is_input()
        );
        let expiry = Order::ExpireRequest(Expiry {
            request_id: "q".into(),
        });
        assert!(!WorkItem::from(expiry).to_work("expire", None).ordered);
    }

    #[test]
    fn a_payload_of_no_known_shape_is_refused() {
        for payload in [
            json!({"input": "teleport"}),
            json!({"start_call": {"call_id": "c"}}),
            json!({"deliver_request": {"request_id": "q", "webhook": "w", "attempt": -1}}),
            json!([1, 2]),
        ] {
            assert!(WorkItem::read(&bytes(&payload)).is_err(), "{payload}");
        }
        // Nor is what is not JSON at all (a damaged row), nor JSON as PostgreSQL's `jsonb`
        // wrote it when the payload was kept as JSON, which reads as any other.
        assert!(WorkItem::read(b"\xff\x00").is_err());
        assert_eq!(
            WorkItem::read(br#"{"input": "timer", "timer_id": "t"}"#).unwrap(),
            Input::TimerFired {
                timer_id: "t".into()
            }
            .into()
        );
    }

    /// The trace context of the span that left the work rides beside the item, and is read
    /// back apart from it; a payload without one (every earlier version's) has none.
    #[test]
    fn a_trace_context_rides_beside_the_item() {
        let item = WorkItem::from(Input::TimerFired {
            timer_id: "t".into(),
        });
        let trace: TraceContext = [(
            "traceparent".to_owned(),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".to_owned(),
        )]
        .into();
        let written = item.to_work_in("timer:t", None, &trace).payload;
        assert_eq!(
            serde_json::from_slice::<Value>(&written).unwrap(),
            json!({"input": "timer", "timer_id": "t", "trace": {
                "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            }})
        );
        assert_eq!(
            WorkItem::read_traced(&written).unwrap(),
            (item.clone(), trace)
        );
        let order = WorkItem::from(Order::ExpireRequest(Expiry {
            request_id: "q".into(),
        }));
        let written = order
            .to_work_in("expire", None, &[("traceparent".into(), "x".into())].into())
            .payload;
        assert_eq!(WorkItem::read(&written).unwrap(), order);
        let (_, none) = WorkItem::read_traced(br#"{"input": "timer", "timer_id": "t"}"#).unwrap();
        assert!(none.is_empty());
        assert!(
            WorkItem::read_traced(br#"{"input": "timer", "timer_id": "t", "trace": 1}"#).is_err()
        );
        // Without an exporter the current span has no context to write.
        assert!(trace_context().is_empty());
        assert_eq!(
            item.to_work("timer:t", None).payload,
            serde_json::to_vec(&item).unwrap()
        );
    }

    #[test]
    fn an_input_nested_deeper_than_serde_json_reads_by_default_is_read() {
        let mut value = json!(1);
        for _ in 0..512 {
            value = json!([value]);
        }
        let item = WorkItem::from(Input::Start { input: value });
        let written = item.to_work("start", None).payload;
        assert_eq!(WorkItem::read(&written).unwrap(), item);
    }

    fn bytes(payload: &Value) -> Vec<u8> {
        serde_json::to_vec(payload).unwrap()
    }
}
