//! The functional core of a reasoning run: `(history, input, moment) -> commands`.
//!
//! [`Core::start`] takes what this attempt of the run recorded (its typed [`History`]) and
//! decides how the run goes on: a model call the server stopped during is closed as
//! `interrupted`, a cancel asked through another server ends the run, a call that answered or
//! failed decides the ending and is never made again, and otherwise the prompt is taken from
//! the first call's kept messages or rendered, and the model called. [`Core::apply`] takes
//! what a command came to ([`Input`]: the prompt rendered, the tools opened, the model's answer
//! or failure, a tool's outcome, a cancel seen among the run's events) with the [`Moment`] the
//! shell saw it at (the time, and a cancel ordered in this server), and gives the next
//! commands. Each batch of commands is records followed by at most one command that waits for
//! an input, or the run's ending.
//!
//! It does no I/O and reads no clock or randomness: the shell (`reasoning_runs::perform`)
//! performs the [`Command`]s in order and feeds back what they came to. The invariant that a
//! run is performed from what it recorded lives in the shell's meaning of
//! [`Command::CallModel`] and [`Command::CallTool`]: the call's start is recorded, under the
//! run's next `run_seq`, before anything is sent, and its ending ([`Command::Record`]) after.
//!
//! The steps of a run with tools are `steps.rs`.

use std::collections::VecDeque;
use std::time::Duration;

use auto_engine::reasoning::ReasoningDocument;
use auto_models::{
    FailureBecause, Message, ModelAnswer, ModelFailure, ModelRef, ModelRequest, Settings, ToolCall,
};
use auto_store::{Run, RunEnding, RunStatus};
use auto_tools::{CallOutcome, ListedTool};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::endings::{
    Finished, after_tools, answer_output, call_outcome_unknown, cancelled, cannot_finish, finish,
    model_because, model_rejection, output_invalid, without_content,
};
use super::history::{
    CancelOrder, History, ModelCall, ModelCallEnded, ModelCallStarted, ModelEnding, ToolCallEnded,
    ToolEnding,
};
use super::ledger::Ledger;
use super::record::{
    Prompt, Spending, answer_from_kept, answered_data, failed_data, failure_from_kept,
    interrupted_model_call, interrupted_tool_call, output_contract, settings_of, started_data,
    unusable_answer_data, was_sent,
};
use super::steps::{Pending, Steps, ToolCalls};
use crate::problem::Problem;
use crate::runs::rejection;

/// What the core knows of the run besides its history: the run, its document and the
/// deployment's bounds, settled by the shell before the run goes on.
#[derive(Clone, Debug)]
pub(crate) struct Setup<'a> {
    pub run: &'a Run,
    pub document: &'a ReasoningDocument,
    /// The bound of one model call (`Models::bound`).
    pub call_bound: Duration,
    /// The bound of a whole tool-calling run, from the run's start (`Models::run_bound`).
    pub run_bound: Duration,
    /// `REASONING_MAX_INPUT_TOKENS`: the input tokens a run's model calls may use.
    pub max_input_tokens: u64,
    /// Whether the operator offers the run's model (allowed, and its provider configured):
    /// "A run whose model is not offered contacts no tool server".
    pub model_offered: bool,
    /// The model's context window, as the catalog knows it.
    pub context_window: Option<u64>,
    /// The marker of the last step's block of results: random to the shell, so the model
    /// cannot guess it.
    pub marker_seed: u64,
}

/// What the shell saw when it handed the core an input.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Moment {
    pub now: DateTime<Utc>,
    /// The order of a cancel of the run in this server, once one was given.
    pub cancel: Option<CancelOrder>,
}

impl Moment {
    /// The order of the cancel that stopped a call; a plain request when none was kept.
    pub(super) fn cancel_order(&self) -> CancelOrder {
        self.cancel.clone().unwrap_or_else(CancelOrder::unspoken)
    }
}

/// One tool the run offers the model, as the core needs it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OfferedTool {
    /// The name the model calls it by.
    pub model_name: String,
    pub server: String,
    pub listed: ListedTool,
    /// Whether its server keeps the arguments and results of calls (`record_content`).
    pub record_content: bool,
    /// Where a result carries the server's own request id (`request_id`).
    pub request_id: Option<String>,
}

/// The tools a run opened: what it offers, the warnings of their schemas, and the secrets of
/// its servers, which no model call and no record receives.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Offer {
    pub tools: Vec<OfferedTool>,
    pub warnings: Vec<String>,
    pub secrets: Vec<String>,
    /// Whether every server of the run keeps content.
    pub keeps_content: bool,
}

/// What a command came to.
#[derive(Debug)]
pub(crate) enum Input {
    /// [`Command::Render`]: the input checked and the template rendered, or the problem.
    Rendered(Result<Prompt, Problem>),
    /// [`Command::OpenTools`]: the tools offered, or the run's `tool_not_offered` or
    /// `tool_server_failed`.
    ToolsOpened(Result<Offer, Problem>),
    /// A call's start was not recorded: a cancel asked through another server came first.
    CancelSeen(CancelOrder),
    ModelCalled(Result<ModelAnswer, ModelFailure>),
    /// A tool's outcome; `past_bound` when the run's bound cut the call.
    ToolCalled {
        outcome: CallOutcome,
        past_bound: bool,
    },
}

/// What the shell does next, in order.
#[derive(Clone, Debug)]
pub(crate) enum Command {
    /// Records an event that claims no call number: a call's ending, after the call's start
    /// (`Recorder::record_following`).
    Record {
        event_type: &'static str,
        data: Value,
        /// The model call the event ends, which must not have an ending already.
        ends_call: Option<u64>,
    },
    /// Checks the run's input and renders its template: [`Input::Rendered`].
    Render,
    /// Opens the run's tool servers and lists their tools: [`Input::ToolsOpened`].
    OpenTools,
    /// Records `model_call_started` under the run's next number, then sends the request
    /// within `bound`: [`Input::ModelCalled`], or [`Input::CancelSeen`] with nothing sent.
    CallModel {
        started: Value,
        request: ModelRequest,
        bound: Duration,
    },
    /// Records `tool_call_started` under the run's next number, then calls the tool, cut
    /// after `time_left`: [`Input::ToolCalled`], or [`Input::CancelSeen`] with nothing sent.
    CallTool {
        started: Value,
        server: String,
        tool: String,
        arguments: Map<String, Value>,
        time_left: Duration,
    },
    /// The run ends so; nothing follows.
    End(RunEnding),
}

/// What the core waits for.
#[derive(Debug)]
pub(crate) enum Phase {
    Starting,
    Rendering,
    OpeningTools,
    /// A model call is under way.
    Calling(Calling),
    /// The tool calls of a step are under way.
    ToolCalls(ToolCalls),
    Ended,
}

/// A model call under way.
#[derive(Debug)]
pub(crate) struct Calling {
    pub started: ModelCallStarted,
    /// A step of a run with tools, rather than the one call of a run without.
    pub with_tools: bool,
    /// Whether the run's bound is shorter than the call's own, so a time-out is the run's.
    pub cut_possible: bool,
    /// Whether a call of the run had ended before this one.
    pub ended_before: bool,
}

/// The state of one attempt of a reasoning run.
#[derive(Debug)]
pub(crate) struct Core<'a> {
    pub(super) setup: Setup<'a>,
    pub(super) settings: Settings,
    pub(super) history: History,
    pub(super) spending: Spending,
    /// The run called tools before this attempt.
    pub(super) tool_steps: bool,
    pub(super) prompt: Prompt,
    pub(super) model: Option<ModelRef>,
    pub(super) phase: Phase,
    pub(super) steps: Steps,
}

impl<'a> Core<'a> {
    pub(crate) fn new(setup: Setup<'a>, history: History) -> Self {
        let spending = Spending::of(&history.calls);
        Core {
            settings: settings_of(setup.document),
            model: setup.document.model.parse::<ModelRef>().ok(),
            setup,
            history,
            spending,
            tool_steps: false,
            prompt: Prompt {
                system: None,
                message: String::new(),
            },
            phase: Phase::Starting,
            steps: Steps::default(),
        }
    }

    /// The first commands of this attempt, from what the run recorded.
    pub(crate) fn start(&mut self) -> Vec<Command> {
        let mut out = Vec::new();
        // A call started and never ended: the server stopped during it. It ends as interrupted.
        let open = self.history.calls.last().filter(|c| c.ended.is_none());
        if let Some(data) = open.map(|c| interrupted_model_call(c.number(), &c.started.model)) {
            self.record_model_ending(&mut out, "model_call_failed", data);
        }
        if let Some(order) = self.history.cancel_requested.clone() {
            let record = self.spending.record(self.history.a_call_ended());
            return self.end(out, cancelled(self.setup.run, &order, record));
        }
        // A run that called tools goes on from its tool calls (reasoning page, "A run
        // performed again").
        self.tool_steps = !self.setup.document.tools.is_empty() && self.called_tools();
        if self.tool_steps
            && let Some(ending) = self.resume_after_tools(&mut out)
        {
            return self.end(out, ending);
        }
        if let Some(ending) = self.decided_by_last_call() {
            return self.end(out, ending);
        }
        // The prompt: from the first call's kept messages when the run called before, else
        // the input checked and the template rendered now.
        match self.history.calls.first() {
            Some(first) => match Prompt::from_kept(first.started.messages.as_ref()) {
                Some(prompt) => self.go_on_with(prompt, out),
                None => {
                    let ending = without_content(self.setup.run, &self.spending);
                    let ending = self.settle(ending, None);
                    self.end(out, ending)
                }
            },
            None => {
                self.phase = Phase::Rendering;
                out.push(Command::Render);
                out
            }
        }
    }

    /// The commands that follow what the last command came to.
    pub(crate) fn apply(&mut self, input: Input, moment: &Moment) -> Vec<Command> {
        let out = Vec::new();
        match (std::mem::replace(&mut self.phase, Phase::Ended), input) {
            (Phase::Rendering, Input::Rendered(Ok(prompt))) => self.go_on_with(prompt, out),
            (Phase::Rendering, Input::Rendered(Err(problem))) => {
                self.end(out, rejection(problem, &self.setup.run.run_id))
            }
            (Phase::OpeningTools, Input::ToolsOpened(Ok(offer))) => {
                self.begin_steps(offer, moment, out)
            }
            (Phase::OpeningTools, Input::ToolsOpened(Err(problem))) => {
                let mut ending = rejection(problem, &self.setup.run.run_id);
                ending.record = self.spending.record(self.history.a_call_ended());
                let ending = self.resumed(ending, None);
                self.end(out, ending)
            }
            (Phase::Calling(calling), Input::CancelSeen(order)) => {
                let record = self.spending.record(calling.ended_before);
                self.end(out, cancelled(self.setup.run, &order, record))
            }
            (Phase::Calling(calling), Input::ModelCalled(result)) => {
                self.history.calls.push(ModelCall {
                    started: calling.started.clone(),
                    ended: None,
                });
                match (calling.with_tools, result) {
                    (false, Ok(answer)) => self.answered_alone(&calling, &answer, out),
                    (false, Err(failure)) => self.failed_alone(&calling, failure, moment, out),
                    (true, Ok(answer)) => self.step_answered(&calling, answer, moment, out),
                    (true, Err(failure)) => self.step_failed(&calling, failure, moment, out),
                }
            }
            (Phase::ToolCalls(calls), input) => self.tool_input(calls, input, moment, out),
            (phase, input) => {
                // Invariant: the shell hands the core only what the last command asked for.
                let problem = Problem::internal(&format!(
                    "a reasoning run got {input:?} while it waited in {phase:?}"
                ));
                self.end(out, rejection(problem, &self.setup.run.run_id))
            }
        }
    }

    /// Ends the run: nothing follows.
    pub(super) fn end(&mut self, mut out: Vec<Command>, ending: RunEnding) -> Vec<Command> {
        self.phase = Phase::Ended;
        out.push(Command::End(ending));
        out
    }

    /// Records a model call's ending, and keeps it in the history and the spending.
    pub(super) fn record_model_ending(
        &mut self,
        out: &mut Vec<Command>,
        event_type: &'static str,
        data: Value,
    ) {
        // Invariant: `record.rs` writes what `history.rs` reads; the decision tables check it.
        let ended = ModelCallEnded::deserialize(&data).expect("a call's ending reads back");
        let number = ended.number;
        self.spending.add(&ended);
        if let Some(call) = self
            .history
            .calls
            .iter_mut()
            .rev()
            .find(|c| c.number() == number)
        {
            call.ended = Some(match event_type {
                "model_call_answered" => ModelEnding::Answered(ended),
                _ => ModelEnding::Failed(ended),
            });
        }
        out.push(Command::Record {
            event_type,
            data,
            ends_call: Some(number),
        });
    }

    /// The number of the run's next model call.
    pub(super) fn next_number(&self) -> u64 {
        self.history
            .calls
            .iter()
            .map(ModelCall::number)
            .max()
            .unwrap_or(0)
            + 1
    }

    /// Whether the run's history shows tool calls asked for or made.
    fn called_tools(&self) -> bool {
        !self.history.tool_calls.is_empty()
            || self
                .history
                .calls
                .iter()
                .any(|c| c.ended.as_ref().is_some_and(|e| e.data().asked_for_tools()))
    }

    /// An ending met before the run's next call names the tools once it called them.
    fn settle(&self, ending: RunEnding, failed: Option<FailureBecause>) -> RunEnding {
        if self.tool_steps {
            self.resumed(ending, failed)
        } else {
            ending
        }
    }

    /// The ending of a run that goes on from what it recorded and ends before its next call,
    /// or as a model call it recorded failed: once it called a tool, `tools_unfinished` or
    /// `effect_unknown` naming the tools it called, as every other ending of a tool-calling
    /// run ("an ending it meets before its first call ... names the tools it called").
    fn resumed(&self, ending: RunEnding, failed: Option<FailureBecause>) -> RunEnding {
        if ending.status == RunStatus::Succeeded {
            return ending;
        }
        let because = failed.and_then(model_because);
        let ledger = Ledger::of_records(&self.history.tool_calls);
        after_tools(self.setup.run, &ledger, ending, because)
    }

    /// A run that called tools and then stopped with its server (reasoning page, "A run
    /// performed again"). Each call without an answer ends as interrupted. When one of them is
    /// of a tool its server does not mark read-only, the run ends `effect_unknown`,
    /// `call_outcome_unknown`; when the run kept no content to go on from, it ends
    /// `restarted_without_content`. Otherwise `None`: the run goes on (its steps rebuild the
    /// conversation), making the interrupted read-only calls again.
    fn resume_after_tools(&mut self, out: &mut Vec<Command>) -> Option<RunEnding> {
        let ledger = Ledger::of_records(&self.history.tool_calls);
        let mut unanswered_effect = false;
        for call in self
            .history
            .tool_calls
            .iter_mut()
            .filter(|c| c.ended.is_none())
        {
            unanswered_effect |= !call.started.read_only;
            let data = interrupted_tool_call(call.started.number);
            // Invariant: `record.rs` writes what `history.rs` reads.
            let ended = ToolCallEnded::deserialize(&data).expect("a call's ending reads back");
            call.ended = Some(ToolEnding::Failed(ended));
            out.push(Command::Record {
                event_type: "tool_call_failed",
                data,
                ends_call: None,
            });
        }
        let record = self.spending.record(self.history.a_call_ended());
        if unanswered_effect {
            return Some(call_outcome_unknown(self.setup.run, &ledger, record));
        }
        let kept = self.history.calls.iter().all(|c| match &c.ended {
            Some(ended) if ended.data().asked_for_tools() => ended
                .data()
                .response
                .as_ref()
                .is_some_and(|r| r.tool_calls.is_some()),
            _ => true,
        }) && self.history.tool_calls.iter().all(|c| match &c.ended {
            Some(ToolEnding::Answered(data)) => data.result.is_some(),
            _ => true,
        }) && self
            .history
            .calls
            .first()
            .is_some_and(|c| c.started.messages.as_ref().is_some_and(Value::is_array));
        (!kept).then(|| {
            cannot_finish(
                self.setup.run,
                &ledger,
                "restarted_without_content",
                "The server restarted before the run finished, and the run kept no content to go on from, since a tool server of the run has record_content: false.",
                record,
            )
        })
    }

    /// The last call that answered or failed decides, and nothing is called again; a last
    /// call that asked for tools goes on with them, and one the server stopped during is made
    /// again.
    fn decided_by_last_call(&self) -> Option<RunEnding> {
        let ended = self.history.calls.last()?.ended.as_ref()?;
        if (self.tool_steps && ended.data().asked_for_tools()) || ended.interrupted() {
            return None;
        }
        let run = self.setup.run;
        Some(match ended {
            ModelEnding::Answered(data) => {
                let prompt = self
                    .history
                    .calls
                    .first()
                    .and_then(|c| Prompt::from_kept(c.started.messages.as_ref()));
                let Some(prompt) = prompt else {
                    return Some(self.settle(without_content(run, &self.spending), None));
                };
                let ending = finish(&self.finished(&prompt), &answer_from_kept(data));
                self.settle(ending, None)
            }
            ModelEnding::Failed(data)
                if data.because == Some(FailureBecause::OutputInvalid) && data.issues.is_some() =>
            {
                let issues = data.issues.clone().unwrap_or_default();
                self.settle(
                    output_invalid(run, &data.detail, issues, &self.spending),
                    None,
                )
            }
            ModelEnding::Failed(data) => {
                let failure = failure_from_kept(data);
                let ending = model_rejection(run, &failure, self.spending.record(true));
                self.settle(ending, Some(failure.because))
            }
        })
    }

    pub(super) fn finished<'b>(&'b self, prompt: &'b Prompt) -> Finished<'b> {
        Finished {
            run: self.setup.run,
            document: self.setup.document,
            settings: &self.settings,
            prompt,
            calls: &self.history.calls,
            spending: &self.spending,
        }
    }

    /// With the prompt: the tools opened first when the run has them and its model is
    /// offered, else the model called.
    fn go_on_with(&mut self, prompt: Prompt, mut out: Vec<Command>) -> Vec<Command> {
        self.prompt = prompt;
        let Some(model) = self.model.clone() else {
            let problem = Problem::internal(&"a saved reasoning function names no model");
            return self.end(out, rejection(problem, &self.setup.run.run_id));
        };
        // "A run checks its tools after it confirms that its model is offered, and before it
        // calls the model. A run whose model is not offered contacts no tool server": that
        // run goes on to the call below, which is refused before anything is sent.
        if !self.setup.document.tools.is_empty() && self.setup.model_offered {
            self.phase = Phase::OpeningTools;
            out.push(Command::OpenTools);
            return out;
        }
        self.call_alone(&model, out)
    }

    /// The one model call of a run without tools.
    fn call_alone(&mut self, model: &ModelRef, mut out: Vec<Command>) -> Vec<Command> {
        let number = self.next_number();
        let messages = self.prompt.kept();
        // Only the first call keeps the prompt; a call made again reads it from there.
        let kept = self.history.calls.is_empty().then(|| messages.clone());
        let started = started_data(
            number,
            &model.to_string(),
            &[],
            &messages,
            Some(kept.clone().unwrap_or(Value::Null)),
        );
        let request = ModelRequest {
            model: model.clone(),
            system: self.prompt.system.clone(),
            messages: vec![Message::User(self.prompt.message.clone())],
            settings: self.settings.clone(),
            output: output_contract(self.setup.document),
            tools: Vec::new(),
            provider_options: self.setup.document.provider_options.clone(),
        };
        self.phase = Phase::Calling(Calling {
            started: ModelCallStarted {
                number,
                model: model.to_string(),
                messages: kept,
            },
            with_tools: false,
            cut_possible: false,
            ended_before: self.history.a_call_ended(),
        });
        out.push(Command::CallModel {
            started,
            request,
            bound: self.setup.call_bound,
        });
        out
    }

    /// The model answered the one call of a run without tools.
    fn answered_alone(
        &mut self,
        calling: &Calling,
        answer: &ModelAnswer,
        mut out: Vec<Command>,
    ) -> Vec<Command> {
        let run = self.setup.run;
        let number = calling.started.number;
        if let Err((detail, issues)) = answer_output(self.setup.document, answer) {
            let provider = self.model.as_ref().map_or("", |m| m.provider.as_str());
            let data = unusable_answer_data(number, answer, provider, &detail, &issues);
            self.record_model_ending(&mut out, "model_call_failed", data);
            let ending = output_invalid(run, &detail, issues, &self.spending);
            return self.end(out, ending);
        }
        let data = answered_data(number, answer);
        self.record_model_ending(&mut out, "model_call_answered", data);
        let ending = finish(&self.finished(&self.prompt), answer);
        self.end(out, ending)
    }

    /// The one call of a run without tools failed.
    fn failed_alone(
        &mut self,
        calling: &Calling,
        failure: ModelFailure,
        moment: &Moment,
        mut out: Vec<Command>,
    ) -> Vec<Command> {
        let data = failed_data(calling.started.number, &failure);
        self.record_model_ending(&mut out, "model_call_failed", data);
        // A call refused before anything was sent spent nothing.
        let ended = was_sent(&failure) || calling.ended_before;
        if failure.because == FailureBecause::Cancelled {
            let record = self.spending.record(true);
            return self.end(
                out,
                cancelled(self.setup.run, &moment.cancel_order(), record),
            );
        }
        let ending = model_rejection(self.setup.run, &failure, self.spending.record(ended));
        let ending = self.settle(ending, Some(failure.because));
        self.end(out, ending)
    }

    /// Opens the steps of a run with tools; a run that goes on after a restart first makes
    /// the calls of its last step that have no answer, in order.
    fn begin_steps(&mut self, offer: Offer, moment: &Moment, out: Vec<Command>) -> Vec<Command> {
        self.steps = Steps::new(offer, &self.prompt);
        let asked = self
            .history
            .calls
            .iter()
            .any(|c| c.ended.as_ref().is_some_and(|e| e.data().asked_for_tools()));
        if !asked {
            return self.next_step(moment, out);
        }
        let (pending, ledger, conversation) = self.rebuild();
        self.steps.ledger = ledger;
        self.steps.conversation = conversation;
        let calls = ToolCalls {
            pending: pending.into_iter().collect::<VecDeque<Pending>>(),
            results: Vec::new(),
            room: None,
            step: None,
            current: None,
        };
        self.advance_tools(calls, moment, out)
    }
}

/// The commands that end a run not going on anywhere as cancelled: a call left open closed
/// as interrupted, then the ending with the spending of the calls that ended.
pub(crate) fn cancel_idle(run: &Run, history: History, order: &CancelOrder) -> Vec<Command> {
    let mut out = Vec::new();
    let mut spending = Spending::of(&history.calls);
    let mut ended = history.a_call_ended();
    if let Some(open) = history.calls.last().filter(|c| c.ended.is_none()) {
        let data = interrupted_model_call(open.number(), &open.started.model);
        // Invariant: `record.rs` writes what `history.rs` reads.
        spending.add(&ModelCallEnded::deserialize(&data).expect("a call's ending reads back"));
        ended = true;
        out.push(Command::Record {
            event_type: "model_call_failed",
            data,
            ends_call: Some(open.number()),
        });
    }
    out.push(Command::End(cancelled(run, order, spending.record(ended))));
    out
}

/// The tool calls a step asked for, as its kept answer holds them.
pub(super) fn kept_calls(data: &ModelCallEnded) -> (String, Vec<ToolCall>) {
    let response = data.response.clone().unwrap_or_default();
    let calls = response
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .map(|c| ToolCall {
            call_id: c.call_id,
            name: c.name,
            arguments: c.arguments,
        })
        .collect();
    (response.text.unwrap_or_default(), calls)
}
