//! The decision tables of a reasoning run's core, without I/O: each case is a function, what
//! the run recorded before, and the inputs that follow, each with the commands the core gives,
//! one line a command. Every case is run twice: the same history and inputs give the same
//! commands.

use std::time::Duration;

use auto_engine::reasoning::{ReasoningDocument, check_reasoning};
use auto_models::{FailureBecause, FinishReason, ModelAnswer, ModelFailure, ToolCall, Usage};
use auto_store::{Run, RunStatus};
use auto_tools::{CallBecause, CallOutcome, ListedTool};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

use super::core::{Command, Core, Input, Moment, Offer, OfferedTool, Setup, cancel_idle};
use super::history::{CancelOrder, Fact, History};
use super::record::{
    Prompt, answered_data, failed_data, interrupted_model_call, interrupted_tool_call,
    unusable_answer_data,
};
use crate::problem::Problem;

const TEXT: &str = "---\nmodel: anthropic/claude-sonnet-4-5\n---\nSay hi.\n";
const JSON: &str = "---\nmodel: anthropic/claude-sonnet-4-5\noutput:\n  format: json\n  schema:\n    type: object\n    required: [score]\n    properties:\n      score: { type: integer }\n---\nScore it.\n";
const TOOLS: &str =
    "---\nmodel: anthropic/claude-sonnet-4-5\ntools: [graph/lookup, graph/write]\n---\nFind x.\n";
const MODEL: &str = "anthropic/claude-sonnet-4-5";

/// One step of a case: the input (none for the start), the moment, and the commands shown.
struct Step {
    input: Option<Input>,
    moment: Moment,
    expected: &'static [&'static str],
}

struct Case {
    name: &'static str,
    document: &'static str,
    /// The run's events before this attempt, as recorded.
    history: Vec<(&'static str, Value)>,
    /// Changes to the deployment's setup.
    setup: fn(&mut Setup<'_>),
    steps: Vec<Step>,
}

fn started_at() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
        .expect("a time")
        .with_timezone(&Utc)
}

/// A moment `seconds` after the run started, without a cancel.
fn at(seconds: i64) -> Moment {
    Moment {
        now: started_at() + chrono::Duration::seconds(seconds),
        cancel: None,
    }
}

fn cancelled_at(seconds: i64) -> Moment {
    Moment {
        cancel: Some(CancelOrder::new("Stop.", None)),
        ..at(seconds)
    }
}

fn step(input: Option<Input>, expected: &'static [&'static str]) -> Step {
    Step {
        input,
        moment: at(1),
        expected,
    }
}

fn run() -> Run {
    serde_json::from_value(json!({
        "run_id": "r1",
        "key": { "def_type": "reasoning", "name": "f" },
        "definition_version": 1,
        "status": "started",
        "input": {},
        "output": null,
        "record": null,
        "problem": null,
        "started_by": "local",
        "parent_run_id": null,
        "task_reference": null,
        "depth": null,
        "call_depth": null,
        "trigger": null,
        "parent_call_id": null,
        "root_run_id": null,
        "attempt": 1,
        "last_run_seq": 1,
        "last_event_at": started_at(),
        "started_at": started_at(),
        "ended_at": null,
    }))
    .expect("a run")
}

fn no_change(_: &mut Setup<'_>) {}

fn prompt(message: &str) -> Prompt {
    Prompt {
        system: None,
        message: message.into(),
    }
}

fn answer(text: &str) -> ModelAnswer {
    ModelAnswer {
        text: text.into(),
        tool_calls: Vec::new(),
        finish_reason: FinishReason::Stop,
        raw_finish_reason: Some("end_turn".into()),
        usage: Usage {
            input_uncached: Some(600),
            output_text: Some(10),
            ..Usage::default()
        },
        response_id: None,
        resolved_model: MODEL.into(),
        answered_model: None,
        warnings: Vec::new(),
        cost_usd: None,
        request_bytes: 2_400,
        response_bytes: 100,
        duration_ms: 40,
    }
}

fn asking(calls: &[(&str, &str, Value)]) -> ModelAnswer {
    ModelAnswer {
        tool_calls: calls
            .iter()
            .map(|(id, name, arguments)| ToolCall {
                call_id: (*id).into(),
                name: (*name).into(),
                arguments: arguments.clone(),
            })
            .collect(),
        finish_reason: FinishReason::ToolCalls,
        ..answer("")
    }
}

fn failure(because: FailureBecause) -> ModelFailure {
    ModelFailure {
        because,
        provider: "anthropic".into(),
        status: None,
        detail: "the provider said no".into(),
        retry_after_ms: None,
        usage: None,
        finish_reason: None,
        raw_finish_reason: None,
        other_providers_configured: false,
        cost_usd: None,
        duration_ms: 20,
        certificate_untrusted: false,
    }
}

fn tool(name: &str, read_only: bool) -> OfferedTool {
    OfferedTool {
        model_name: format!("graph__{name}"),
        server: "graph".into(),
        listed: ListedTool {
            name: name.into(),
            description: format!("The {name} tool."),
            input_schema: json!({ "type": "object" }),
            read_only,
        },
        record_content: true,
        request_id: None,
    }
}

fn offer() -> Offer {
    Offer {
        tools: vec![tool("lookup", true), tool("write", false)],
        warnings: Vec::new(),
        secrets: Vec::new(),
        keeps_content: true,
    }
}

fn answered_tool(text: &str) -> Input {
    Input::ToolCalled {
        outcome: CallOutcome::Answered {
            result: json!({ "content": [{ "type": "text", "text": text }] }),
            jsonrpc_id: json!(1),
            duration_ms: 5,
        },
        past_bound: false,
    }
}

fn failed_tool(because: CallBecause, past_bound: bool) -> Input {
    Input::ToolCalled {
        outcome: CallOutcome::Failed {
            because,
            message: "the server failed".into(),
            jsonrpc_id: None,
            duration_ms: 5,
        },
        past_bound,
    }
}

/// `model_call_started` of the first call, which keeps the prompt.
fn first_started(document: &str) -> (&'static str, Value) {
    let message = document
        .rsplit("---\n")
        .next()
        .unwrap_or_default()
        .trim_end();
    let kept = json!([{ "role": "user", "content": message }]);
    (
        "model_call_started",
        json!({ "number": 1, "model": MODEL, "tools_offered": [], "messages_bytes": 1, "messages": kept }),
    )
}

/// `model_call_answered` of a step that asked for one call of `tool`, with its content.
fn step_asked(number: u64, call_id: &str, tool: &str) -> (&'static str, Value) {
    let mut data = answered_data(number, &answer(""));
    let call =
        json!({ "call_id": call_id, "name": format!("graph__{tool}"), "arguments": { "q": "x" } });
    data["tool_calls"] = json!([{ "call_id": call_id, "name": format!("graph__{tool}") }]);
    data["response"] = json!({ "text": "", "tool_calls": [call] });
    ("model_call_answered", data)
}

fn tool_started(number: u64, call_id: &str, tool: &str, read_only: bool) -> (&'static str, Value) {
    (
        "tool_call_started",
        json!({ "number": number, "call_id": call_id, "server": "graph", "tool": tool, "read_only": read_only }),
    )
}

// Longer than 100 lines because it is the decision table itself: one list of short cases,
// read top to bottom.
fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "a new run renders its prompt, calls its model once and ends with the answer",
            document: TEXT,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Say hi.")))),
                    &["call model #1 tools=[] messages=1 kept bound=64000ms"],
                ),
                step(
                    Some(Input::ModelCalled(Ok(answer("hi")))),
                    &["record model_call_answered #1", "end succeeded \"hi\""],
                ),
            ],
        },
        Case {
            name: "an input the template refuses ends the run before any call",
            document: TEXT,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Err(Problem::invalid_input("t", "d")))),
                    &["end rejected invalid_input"],
                ),
            ],
        },
        Case {
            name: "a call that answered is never made again",
            document: TEXT,
            history: vec![
                first_started(TEXT),
                ("model_call_answered", answered_data(1, &answer("hi"))),
            ],
            setup: no_change,
            steps: vec![step(None, &["end succeeded \"hi\""])],
        },
        Case {
            name: "a call the server stopped during is closed as interrupted and made again",
            document: TEXT,
            history: vec![first_started(TEXT)],
            setup: no_change,
            steps: vec![
                step(
                    None,
                    &[
                        "record model_call_failed #1 interrupted",
                        "call model #2 tools=[] messages=1 bound=64000ms",
                    ],
                ),
                step(
                    Some(Input::ModelCalled(Ok(answer("hi")))),
                    &["record model_call_answered #2", "end succeeded \"hi\""],
                ),
            ],
        },
        Case {
            name: "only the last attempt's events count",
            document: TEXT,
            history: vec![
                first_started(TEXT),
                ("model_call_answered", answered_data(1, &answer("hi"))),
                ("run_started", json!({})),
            ],
            setup: no_change,
            steps: vec![step(None, &["render"])],
        },
        Case {
            name: "a call that failed decides the ending",
            document: TEXT,
            history: vec![
                first_started(TEXT),
                (
                    "model_call_failed",
                    failed_data(1, &failure(FailureBecause::RateLimited)),
                ),
            ],
            setup: no_change,
            steps: vec![step(
                None,
                &["end rejected unavailable because=rate_limited record"],
            )],
        },
        Case {
            name: "a cancel asked through another server ends the run before its next call",
            document: TEXT,
            history: vec![
                first_started(TEXT),
                (
                    "run_cancel_requested",
                    json!({ "detail": "Stop.", "kind": "deadline" }),
                ),
            ],
            setup: no_change,
            steps: vec![step(
                None,
                &[
                    "record model_call_failed #1 interrupted",
                    "end rejected cancelled/deadline because=cancelled record",
                ],
            )],
        },
        Case {
            name: "a cancel seen when the call's start is recorded: nothing is sent",
            document: TEXT,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Say hi.")))),
                    &["call model #1 tools=[] messages=1 kept bound=64000ms"],
                ),
                step(
                    Some(Input::CancelSeen(CancelOrder::new(
                        "The parent ended.",
                        Some("parent_ended"),
                    ))),
                    &["end rejected cancelled/parent_ended because=cancelled"],
                ),
            ],
        },
        Case {
            name: "a call cancelled in this server ends with the order given",
            document: TEXT,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Say hi.")))),
                    &["call model #1 tools=[] messages=1 kept bound=64000ms"],
                ),
                Step {
                    input: Some(Input::ModelCalled(Err(failure(FailureBecause::Cancelled)))),
                    moment: cancelled_at(2),
                    expected: &[
                        "record model_call_failed #1 cancelled",
                        "end rejected cancelled/requested because=cancelled record",
                    ],
                },
            ],
        },
        Case {
            name: "an answer that does not match the schema is recorded as failed",
            document: JSON,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Score it.")))),
                    &["call model #1 tools=[] messages=1 kept bound=64000ms"],
                ),
                step(
                    Some(Input::ModelCalled(Ok(answer("seven")))),
                    &[
                        "record model_call_failed #1 output_invalid",
                        "end rejected unavailable because=output_invalid record",
                    ],
                ),
            ],
        },
        Case {
            name: "an unusable answer kept decides again without a call",
            document: JSON,
            history: vec![
                first_started(JSON),
                (
                    "model_call_failed",
                    unusable_answer_data(1, &answer("seven"), "anthropic", "no", &[]),
                ),
            ],
            setup: no_change,
            steps: vec![step(
                None,
                &["end rejected unavailable because=output_invalid record"],
            )],
        },
        Case {
            name: "a call refused before it was sent keeps no spending",
            document: TEXT,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Say hi.")))),
                    &["call model #1 tools=[] messages=1 kept bound=64000ms"],
                ),
                step(
                    Some(Input::ModelCalled(Err(failure(
                        FailureBecause::ModelNotAllowed,
                    )))),
                    &[
                        "record model_call_failed #1 model_not_allowed",
                        "end rejected unavailable/model_not_offered because=model_not_allowed",
                    ],
                ),
            ],
        },
        Case {
            name: "a run with tools opens them, calls one, and answers from its result",
            document: TOOLS,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Find x.")))),
                    &["open tools"],
                ),
                step(
                    Some(Input::ToolsOpened(Ok(offer()))),
                    &[
                        "call model #1 tools=[graph__lookup,graph__write] messages=1 kept bound=64000ms",
                    ],
                ),
                step(
                    Some(Input::ModelCalled(Ok(asking(&[(
                        "c1",
                        "graph__lookup",
                        json!({ "q": "x" }),
                    )])))),
                    &[
                        "record model_call_answered #1",
                        "call tool graph/lookup #1 left=599000ms",
                    ],
                ),
                step(
                    Some(answered_tool("x is 7")),
                    &[
                        "record tool_call_answered #1",
                        "call model #2 tools=[graph__lookup,graph__write] messages=3 kept bound=64000ms",
                    ],
                ),
                step(
                    Some(Input::ModelCalled(Ok(answer("7")))),
                    &["record model_call_answered #2", "end succeeded \"7\""],
                ),
            ],
        },
        Case {
            name: "a run whose model is not offered contacts no tool server",
            document: TOOLS,
            history: vec![],
            setup: |setup| setup.model_offered = false,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Find x.")))),
                    &["call model #1 tools=[] messages=1 kept bound=64000ms"],
                ),
            ],
        },
        Case {
            name: "tools that cannot be opened end the run before the model is called",
            document: TOOLS,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Find x.")))),
                    &["open tools"],
                ),
                step(
                    Some(Input::ToolsOpened(Err(Problem::new(
                        crate::problem::Reason::Unavailable,
                        "t",
                        "d",
                    )
                    .with_kind("tool_server_failed")))),
                    &["end rejected unavailable/tool_server_failed"],
                ),
            ],
        },
        Case {
            name: "calls the run cannot make are refused, not sent, and the model is told",
            document: TOOLS,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Find x.")))),
                    &["open tools"],
                ),
                step(
                    Some(Input::ToolsOpened(Ok(offer()))),
                    &[
                        "call model #1 tools=[graph__lookup,graph__write] messages=1 kept bound=64000ms",
                    ],
                ),
                step(
                    Some(Input::ModelCalled(Ok(asking(&[
                        ("c1", "graph__nope", json!({})),
                        ("c2", "graph__lookup", json!("not an object")),
                    ])))),
                    &[
                        "record model_call_answered #1",
                        "call model #2 tools=[graph__lookup,graph__write] messages=4 kept bound=64000ms",
                    ],
                ),
            ],
        },
        Case {
            name: "the server stopped during a read-only tool call: the call is made again",
            document: TOOLS,
            history: vec![
                first_started(TOOLS),
                step_asked(1, "c1", "lookup"),
                tool_started(1, "c1", "lookup", true),
            ],
            setup: no_change,
            steps: vec![
                step(
                    None,
                    &["record tool_call_failed #1 interrupted", "open tools"],
                ),
                step(
                    Some(Input::ToolsOpened(Ok(offer()))),
                    &["call tool graph/lookup #2 left=599000ms"],
                ),
                step(
                    Some(answered_tool("x is 7")),
                    &[
                        "record tool_call_answered #2",
                        "call model #2 tools=[graph__lookup,graph__write] messages=3 kept bound=64000ms",
                    ],
                ),
            ],
        },
        Case {
            name: "the server stopped during a call of a tool that may write: effect_unknown",
            document: TOOLS,
            history: vec![
                first_started(TOOLS),
                step_asked(1, "c1", "write"),
                tool_started(1, "c1", "write", false),
            ],
            setup: no_change,
            steps: vec![step(
                None,
                &[
                    "record tool_call_failed #1 interrupted",
                    "end rejected conflict/effect_unknown because=call_outcome_unknown record",
                ],
            )],
        },
        Case {
            name: "a run that kept no content cannot go on after a restart",
            document: TOOLS,
            history: vec![first_started(TOOLS), {
                let (kind, mut data) = step_asked(1, "c1", "lookup");
                data.as_object_mut().map(|d| d.remove("response"));
                (kind, data)
            }],
            setup: no_change,
            steps: vec![step(
                None,
                &["end rejected unavailable because=restarted_without_content record"],
            )],
        },
        Case {
            name: "a run past its bound makes no next step",
            document: TOOLS,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Find x.")))),
                    &["open tools"],
                ),
                Step {
                    input: Some(Input::ToolsOpened(Ok(offer()))),
                    moment: at(600),
                    expected: &["end rejected unavailable because=run_bound"],
                },
            ],
        },
        Case {
            name: "a tool call cut at the run's bound ends the run as unfinished",
            document: TOOLS,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Find x.")))),
                    &["open tools"],
                ),
                step(
                    Some(Input::ToolsOpened(Ok(offer()))),
                    &[
                        "call model #1 tools=[graph__lookup,graph__write] messages=1 kept bound=64000ms",
                    ],
                ),
                Step {
                    input: Some(Input::ModelCalled(Ok(asking(&[(
                        "c1",
                        "graph__lookup",
                        json!({ "q": "x" }),
                    )])))),
                    moment: at(590),
                    expected: &[
                        "record model_call_answered #1",
                        "call tool graph/lookup #1 left=10000ms",
                    ],
                },
                Step {
                    input: Some(failed_tool(CallBecause::ServerFailure, true)),
                    moment: at(600),
                    expected: &[
                        "record tool_call_failed #1 timed_out",
                        "end rejected unavailable/tools_unfinished because=run_bound record",
                    ],
                },
            ],
        },
        Case {
            name: "a step near the end of the budget is the last, made without tools",
            document: TOOLS,
            history: vec![],
            setup: |setup| setup.max_input_tokens = 1_000,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Find x.")))),
                    &["open tools"],
                ),
                step(
                    Some(Input::ToolsOpened(Ok(offer()))),
                    &[
                        "call model #1 tools=[graph__lookup,graph__write] messages=1 kept bound=64000ms",
                    ],
                ),
                step(
                    Some(Input::ModelCalled(Ok(asking(&[(
                        "c1",
                        "graph__write",
                        json!({ "q": "x" }),
                    )])))),
                    &[
                        "record model_call_answered #1",
                        "call tool graph/write #1 left=599000ms",
                    ],
                ),
                step(
                    Some(answered_tool("done")),
                    &[
                        "record tool_call_answered #1",
                        "call model #2 tools=[] messages=1 kept bound=64000ms",
                    ],
                ),
                step(
                    Some(Input::ModelCalled(Ok(asking(&[(
                        "c2",
                        "graph__write",
                        json!({ "q": "y" }),
                    )])))),
                    &[
                        "record model_call_answered #2",
                        "end rejected conflict/effect_unknown because=no_answer record",
                    ],
                ),
            ],
        },
        Case {
            name: "a run whose tool servers failed five times stops",
            document: TOOLS,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Find x.")))),
                    &["open tools"],
                ),
                step(
                    Some(Input::ToolsOpened(Ok(offer()))),
                    &[
                        "call model #1 tools=[graph__lookup,graph__write] messages=1 kept bound=64000ms",
                    ],
                ),
                step(
                    Some(Input::ModelCalled(Ok(asking(&[
                        ("c1", "graph__lookup", json!({ "q": 1 })),
                        ("c2", "graph__lookup", json!({ "q": 2 })),
                        ("c3", "graph__lookup", json!({ "q": 3 })),
                        ("c4", "graph__lookup", json!({ "q": 4 })),
                        ("c5", "graph__lookup", json!({ "q": 5 })),
                        ("c6", "graph__lookup", json!({ "q": 6 })),
                    ])))),
                    &[
                        "record model_call_answered #1",
                        "call tool graph/lookup #1 left=599000ms",
                    ],
                ),
                step(
                    Some(failed_tool(CallBecause::ServerFailure, false)),
                    &[
                        "record tool_call_failed #1 server_failure",
                        "call tool graph/lookup #2 left=599000ms",
                    ],
                ),
                step(
                    Some(failed_tool(CallBecause::TimedOut, false)),
                    &[
                        "record tool_call_failed #2 timed_out",
                        "call tool graph/lookup #3 left=599000ms",
                    ],
                ),
                step(
                    Some(failed_tool(CallBecause::ArgumentsRefused, false)),
                    &[
                        "record tool_call_failed #3 arguments_refused",
                        "call tool graph/lookup #4 left=599000ms",
                    ],
                ),
                step(
                    Some(failed_tool(CallBecause::ServerFailure, false)),
                    &[
                        "record tool_call_failed #4 server_failure",
                        "call tool graph/lookup #5 left=599000ms",
                    ],
                ),
                step(
                    Some(failed_tool(CallBecause::ServerFailure, false)),
                    &[
                        "record tool_call_failed #5 server_failure",
                        "call tool graph/lookup #6 left=599000ms",
                    ],
                ),
                step(
                    Some(failed_tool(CallBecause::ServerFailure, false)),
                    &[
                        "record tool_call_failed #6 server_failure",
                        "end rejected unavailable/tools_unfinished because=server_failed record",
                    ],
                ),
            ],
        },
        Case {
            name: "a cancel in this server stops the run before its next tool call",
            document: TOOLS,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Find x.")))),
                    &["open tools"],
                ),
                step(
                    Some(Input::ToolsOpened(Ok(offer()))),
                    &[
                        "call model #1 tools=[graph__lookup,graph__write] messages=1 kept bound=64000ms",
                    ],
                ),
                Step {
                    input: Some(Input::ModelCalled(Ok(asking(&[(
                        "c1",
                        "graph__lookup",
                        json!({ "q": "x" }),
                    )])))),
                    moment: cancelled_at(3),
                    expected: &[
                        "record model_call_answered #1",
                        "end rejected cancelled/requested because=cancelled record",
                    ],
                },
            ],
        },
        Case {
            name: "a model that failed once tools were called ends as unfinished",
            document: TOOLS,
            history: vec![],
            setup: no_change,
            steps: vec![
                step(None, &["render"]),
                step(
                    Some(Input::Rendered(Ok(prompt("Find x.")))),
                    &["open tools"],
                ),
                step(
                    Some(Input::ToolsOpened(Ok(offer()))),
                    &[
                        "call model #1 tools=[graph__lookup,graph__write] messages=1 kept bound=64000ms",
                    ],
                ),
                step(
                    Some(Input::ModelCalled(Ok(asking(&[(
                        "c1",
                        "graph__lookup",
                        json!({ "q": "x" }),
                    )])))),
                    &[
                        "record model_call_answered #1",
                        "call tool graph/lookup #1 left=599000ms",
                    ],
                ),
                step(
                    Some(answered_tool("x is 7")),
                    &[
                        "record tool_call_answered #1",
                        "call model #2 tools=[graph__lookup,graph__write] messages=3 kept bound=64000ms",
                    ],
                ),
                step(
                    Some(Input::ModelCalled(Err(failure(FailureBecause::TimedOut)))),
                    &[
                        "record model_call_failed #2 timed_out",
                        "end rejected unavailable/tools_unfinished because=model_unavailable record",
                    ],
                ),
            ],
        },
    ]
}

fn setup<'a>(run: &'a Run, document: &'a ReasoningDocument) -> Setup<'a> {
    Setup {
        run,
        document,
        call_bound: Duration::from_millis(64_000),
        run_bound: Duration::from_millis(auto_tools::limits::RUN_BOUND_MS),
        max_input_tokens: 2_000_000,
        model_offered: true,
        context_window: None,
        marker_seed: 7,
    }
}

fn history(events: &[(&str, Value)]) -> History {
    History::of(
        events
            .iter()
            .map(|(kind, data)| Fact::read(kind, data).expect("a recorded event reads")),
    )
}

/// The commands of every step of a case, shown.
fn play(case: Case) -> Vec<Vec<String>> {
    let run = run();
    let document = check_reasoning(case.document).expect("a valid function");
    let mut setup = setup(&run, &document);
    (case.setup)(&mut setup);
    let mut core = Core::new(setup, history(&case.history));
    let mut shown = Vec::new();
    for step in case.steps {
        let commands = match step.input {
            None => core.start(),
            Some(input) => core.apply(input, &step.moment),
        };
        shown.push(commands.iter().map(show).collect());
    }
    shown
}

fn show(command: &Command) -> String {
    match command {
        Command::Record {
            event_type, data, ..
        } => {
            let mut line = format!("record {event_type} #{}", data["number"]);
            if let Some(because) = data["because"].as_str() {
                line.push_str(&format!(" {because}"));
            }
            line
        }
        Command::Render => "render".into(),
        Command::OpenTools => "open tools".into(),
        Command::CallModel {
            started,
            request,
            bound,
        } => {
            let tools: Vec<&str> = request.tools.iter().map(|t| t.name.as_str()).collect();
            format!(
                "call model #{} tools=[{}] messages={}{} bound={}ms",
                started["number"],
                tools.join(","),
                request.messages.len(),
                if started["messages"].is_array() {
                    " kept"
                } else {
                    ""
                },
                bound.as_millis()
            )
        }
        Command::CallTool {
            started,
            server,
            tool,
            time_left,
            ..
        } => format!(
            "call tool {server}/{tool} #{} left={}ms",
            started["number"],
            time_left.as_millis()
        ),
        Command::End(ending) => {
            if ending.status == RunStatus::Succeeded {
                let output = ending.output.clone().unwrap_or(Value::Null);
                return format!("end succeeded {output}");
            }
            let problem = ending.problem.clone().unwrap_or(Value::Null);
            let mut line = format!(
                "end {} {}",
                serde_json::to_value(ending.status)
                    .expect("a status")
                    .as_str()
                    .unwrap_or_default(),
                problem["reason"].as_str().unwrap_or_default()
            );
            if let Some(kind) = problem["kind"].as_str() {
                line.push_str(&format!("/{kind}"));
            }
            if let Some(because) = problem["because"].as_str() {
                line.push_str(&format!(" because={because}"));
            }
            if ending.record.is_some() {
                line.push_str(" record");
            }
            line
        }
    }
}

#[test]
fn the_core_decides_as_its_tables_say() {
    let mut wrong = Vec::new();
    // Each case is played twice, from two copies of its inputs.
    for (case, again) in cases().into_iter().zip(cases()) {
        let name = case.name;
        let expected: Vec<Vec<String>> = case
            .steps
            .iter()
            .map(|s| s.expected.iter().map(|l| (*l).to_owned()).collect())
            .collect();
        let shown = play(case);
        if shown != expected {
            wrong.push(format!(
                "{name}:\n  expected {expected:#?}\n  got {shown:#?}"
            ));
        }
        // The same history and inputs give the same commands.
        assert_eq!(play(again), shown, "{name}");
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What `record.rs` writes, `history.rs` reads: the shell's records are the core's history.
#[test]
fn every_event_the_run_writes_reads_back_as_its_fact() {
    let events = [
        ("model_call_answered", answered_data(3, &answer("hi"))),
        (
            "model_call_failed",
            failed_data(3, &failure(FailureBecause::TimedOut)),
        ),
        (
            "model_call_failed",
            unusable_answer_data(3, &answer("x"), "anthropic", "no", &[]),
        ),
        ("model_call_failed", interrupted_model_call(3, MODEL)),
        ("tool_call_failed", interrupted_tool_call(3)),
    ];
    for (kind, data) in events {
        let fact = Fact::read(kind, &data).expect("a recorded event reads");
        let number = match &fact {
            Fact::ModelCallAnswered(ended) | Fact::ModelCallFailed(ended) => ended.number,
            Fact::ToolCallFailed(ended) => ended.number,
            other => panic!("{kind} read as {other:?}"),
        };
        assert_eq!(number, 3, "{kind}");
    }
    assert!(Fact::read("model_call_started", &json!({ "number": "one" })).is_err());
}

/// A run not going on anywhere ends cancelled at once, closing the call it left open.
#[test]
fn an_idle_run_is_cancelled_closing_its_open_call() {
    let run = run();
    let order = CancelOrder::new("Stop.", None);
    let open = history(&[first_started(TEXT)]);
    let shown: Vec<String> = cancel_idle(&run, open, &order).iter().map(show).collect();
    assert_eq!(
        shown,
        [
            "record model_call_failed #1 interrupted",
            "end rejected cancelled/requested because=cancelled record"
        ]
    );
    let shown: Vec<String> = cancel_idle(&run, History::default(), &order)
        .iter()
        .map(show)
        .collect();
    assert_eq!(
        shown,
        ["end rejected cancelled/requested because=cancelled"]
    );
}
