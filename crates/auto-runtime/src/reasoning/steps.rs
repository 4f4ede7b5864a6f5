//! The steps of a reasoning run with tools, in the run's core (reasoning page, "Tools",
//! "Limits on calls", "Limits on time and failures"): each step is one model call with the
//! tools offered; each tool call it asks for is checked ([`Ledger`]), started, and its result
//! given to the model in the next step. Once the run has used its calls, or its budget would
//! not cover another step, the last step is made without tools, the calls so far told as data.
//! A run that goes on after a restart rebuilds its conversation from what it kept.

use std::collections::VecDeque;
use std::time::Duration;

use auto_models::{FailureBecause, Message, ModelAnswer, ModelFailure, ModelRequest, ToolCall};
use auto_schema::json_bytes;
use auto_tools::limits::{DESCRIPTION_BYTES_MAX, RUN_CALLS_MAX, SERVER_FAILURES_MAX};
use auto_tools::{CallBecause, CallOutcome, content};
use serde_json::{Value, json};

use super::core::{Calling, Command, Core, Input, Moment, Offer, OfferedTool, Phase, kept_calls};
use super::endings::{
    after_tools, answer_output, cancelled, cannot_finish, finish, model_because, model_rejection,
    output_invalid, too_long_detail,
};
use super::history::{CancelOrder, ModelCallStarted, ToolEnding};
use super::ledger::{Called, Ledger, Refusal, told_again};
use super::record::{
    Prompt, answered_data, failed_data, json_size_and_sha256, message_kept, output_contract,
    sha256_hex, started_data, strip_content, unusable_answer_data, was_sent,
};
use crate::reasoning_room::{StepCount, cut_to_room, result_room_bytes};

/// The state of a run's steps.
#[derive(Debug, Default)]
pub(crate) struct Steps {
    pub offer: Offer,
    pub ledger: Ledger,
    /// The conversation the next step sends.
    pub conversation: Vec<Message>,
    /// What the next step adds to the conversation, as the run keeps it.
    pub added: Value,
    /// The step is the last, made without tools.
    pub last_step: bool,
    /// What the step before spent and sent.
    pub last_count: Option<StepCount>,
}

impl Steps {
    pub(super) fn new(offer: Offer, prompt: &Prompt) -> Steps {
        Steps {
            offer,
            ledger: Ledger::default(),
            conversation: vec![Message::User(prompt.message.clone())],
            added: prompt.kept(),
            last_step: false,
            last_count: None,
        }
    }
}

/// One call of a step: its result already known (given back from what the run kept, or
/// refused), or to make.
#[derive(Debug)]
pub(crate) enum Pending {
    Ready(Message),
    Make(ToolCall),
}

/// The tool calls of a step under way.
#[derive(Debug)]
pub(crate) struct ToolCalls {
    pub pending: VecDeque<Pending>,
    /// What the model reads in the next step, in order.
    pub results: Vec<Message>,
    /// The bytes each result may take.
    pub room: Option<usize>,
    /// The step's answer (its text and calls), which the next step's conversation holds;
    /// `None` for a step the rebuilt conversation holds already.
    pub step: Option<(String, Vec<ToolCall>)>,
    /// The call under way.
    pub current: Option<Current>,
}

/// A tool call under way.
#[derive(Debug)]
pub(crate) struct Current {
    call: ToolCall,
    tool: usize,
    number: u32,
    arguments: String,
}

/// Why the run stops inside a step.
enum Stop {
    /// A bound or failure of "Limits on time and failures", with its `because` and words.
    Bound(&'static str, String),
    Cancelled(CancelOrder),
}

/// "The tool's description is cut to 4 KiB", at a character boundary.
pub(crate) fn cut_description(description: &str) -> String {
    let mut end = description.len().min(DESCRIPTION_BYTES_MAX);
    while !description.is_char_boundary(end) {
        end -= 1;
    }
    description[..end].to_owned()
}

/// The words of a run's bound: "The run reached its bound of 10 minutes."
pub(crate) fn bound_reached(bound: Duration) -> String {
    format!("The run reached its bound of {}.", bound_words(bound))
}

/// A bound in words: whole minutes, whole seconds, or milliseconds.
pub(crate) fn bound_words(bound: Duration) -> String {
    match bound.as_millis() {
        ms if ms > 0 && ms % 60_000 == 0 => plural((ms / 60_000) as u64, "minute"),
        ms if ms > 0 && ms % 1_000 == 0 => plural((ms / 1_000) as u64, "second"),
        ms => format!("{ms} ms"),
    }
}

fn plural(n: u64, unit: &str) -> String {
    format!("{n} {unit}{}", if n == 1 { "" } else { "s" })
}

impl Offer {
    fn specs(&self) -> Vec<auto_models::ToolSpec> {
        self.tools
            .iter()
            .map(|tool| auto_models::ToolSpec {
                name: tool.model_name.clone(),
                description: cut_description(&tool.listed.description),
                input_schema: tool.listed.input_schema.clone(),
            })
            .collect()
    }

    fn find(&self, model_name: &str) -> Option<usize> {
        self.tools.iter().position(|t| t.model_name == model_name)
    }
}

impl Core<'_> {
    /// The time since the run started.
    fn elapsed(&self, moment: &Moment) -> Duration {
        (moment.now - self.setup.run.started_at)
            .to_std()
            .unwrap_or(Duration::ZERO)
    }

    /// What is left of the run's input tokens (`REASONING_MAX_INPUT_TOKENS`).
    fn budget_left(&self) -> u64 {
        self.setup
            .max_input_tokens
            .saturating_sub(self.spending.input_tokens())
    }

    /// The next step: the run's bound checked, the last step decided, the model called.
    pub(super) fn next_step(&mut self, moment: &Moment, mut out: Vec<Command>) -> Vec<Command> {
        let run = self.setup.run;
        let ended = self.history.a_call_ended();
        let bound = self.setup.run_bound;
        let elapsed = self.elapsed(moment);
        if elapsed >= bound {
            let record = self.spending.record(ended);
            let ending = cannot_finish(
                run,
                &self.steps.ledger,
                "run_bound",
                &bound_reached(bound),
                record,
            );
            return self.end(out, ending);
        }
        // "Before each step, the runtime estimates that step's input from the step before.
        // When the remaining budget would not cover another step after it, that step is the
        // last, and it is made without tools."
        let budget_short = self.steps.last_count.is_some_and(|step| {
            let estimate = estimated_input(step, &self.steps.added);
            self.budget_left() < estimate.saturating_mul(2)
        });
        let steps = &mut self.steps;
        if !steps.last_step && (steps.ledger.calls_made >= RUN_CALLS_MAX || budget_short) {
            // "Once the run has used all its calls ... the model answers from what it has,
            // without tools", the calls so far told as text.
            steps.last_step = true;
            let told = told_again(
                &self.prompt.message,
                &steps.ledger.called,
                self.setup.marker_seed,
            );
            steps.added = json!([{ "role": "user", "content": told }]);
            steps.conversation = vec![Message::User(told)];
        }
        let offered = if steps.last_step {
            Vec::new()
        } else {
            steps.offer.specs()
        };
        // Invariant: a run goes on to its steps only once its model was read (`go_on_with`).
        let model = self.model.clone().expect("a run with tools has a model");
        let number = self.next_number();
        let names: Vec<String> = offered.iter().map(|t| t.name.clone()).collect();
        let keep = self.steps.offer.keeps_content;
        let kept = keep.then(|| self.steps.added.clone());
        let started = started_data(
            number,
            &model.to_string(),
            &names,
            &self.steps.added,
            kept.clone(),
        );
        let request = ModelRequest {
            model: model.clone(),
            system: self.prompt.system.clone(),
            messages: self.steps.conversation.clone(),
            settings: self.settings.clone(),
            output: output_contract(self.setup.document),
            tools: offered,
            provider_options: self.setup.document.provider_options.clone(),
        };
        // The call is cut at the run's bound, which counts from the run's start.
        let left = bound.saturating_sub(elapsed);
        self.phase = Phase::Calling(Calling {
            started: ModelCallStarted {
                number,
                model: model.to_string(),
                messages: kept,
            },
            with_tools: true,
            cut_possible: left < self.setup.call_bound,
            ended_before: ended,
        });
        out.push(Command::CallModel {
            started,
            request,
            bound: self.setup.call_bound.min(left),
        });
        out
    }

    /// A step's model call failed.
    pub(super) fn step_failed(
        &mut self,
        calling: &Calling,
        mut failure: ModelFailure,
        moment: &Moment,
        mut out: Vec<Command>,
    ) -> Vec<Command> {
        let run = self.setup.run;
        let bound = self.setup.run_bound;
        let cut = failure.because == FailureBecause::TimedOut && calling.cut_possible;
        if cut {
            failure.detail = format!("the call was cut: {}", bound_reached(bound));
        }
        let data = failed_data(calling.started.number, &failure);
        self.record_model_ending(&mut out, "model_call_failed", data);
        let ended = was_sent(&failure) || calling.ended_before;
        if failure.because == FailureBecause::Cancelled {
            let record = self.spending.record(true);
            return self.end(out, cancelled(run, &moment.cancel_order(), record));
        }
        let ledger = &self.steps.ledger;
        if cut {
            let record = self.spending.record(ended);
            let ending = cannot_finish(run, ledger, "run_bound", &bound_reached(bound), record);
            return self.end(out, ending);
        }
        let mut ending = model_rejection(run, &failure, self.spending.record(ended));
        if failure.because == FailureBecause::RequestTooLong && !ledger.called.is_empty() {
            too_long_detail(&mut ending, ledger, &self.history.calls);
        }
        let ending = after_tools(run, ledger, ending, model_because(failure.because));
        self.end(out, ending)
    }

    /// A step's model call answered: the run's answer, or tool calls to make.
    pub(super) fn step_answered(
        &mut self,
        calling: &Calling,
        answer: ModelAnswer,
        moment: &Moment,
        mut out: Vec<Command>,
    ) -> Vec<Command> {
        let secrets: Vec<&str> = self
            .steps
            .offer
            .secrets
            .iter()
            .map(String::as_str)
            .collect();
        let answer = scrubbed(answer, &secrets);
        let number = calling.started.number;
        if answer.tool_calls.is_empty() {
            return self.final_answer(answer, number, out);
        }
        let data = tool_step_data(number, &answer, &self.steps.offer);
        self.record_model_ending(&mut out, "model_call_answered", data);
        if self.steps.last_step {
            let record = self.spending.record(true);
            let ending = cannot_finish(
                self.setup.run,
                &self.steps.ledger,
                "no_answer",
                "The model asked for tools in the last step, which is made without tools, instead of answering.",
                record,
            );
            return self.end(out, ending);
        }
        let step = StepCount {
            input_tokens: input_tokens(&answer.usage),
            output_tokens: output_tokens(&answer.usage),
            request_bytes: answer.request_bytes,
        };
        let room = result_room_bytes(
            self.setup.context_window,
            self.budget_left(),
            step,
            answer.tool_calls.len(),
        );
        self.steps.last_count = Some(step);
        let calls = ToolCalls {
            pending: answer
                .tool_calls
                .iter()
                .cloned()
                .map(Pending::Make)
                .collect(),
            results: Vec::new(),
            room,
            step: Some((answer.text, answer.tool_calls)),
            current: None,
        };
        self.advance_tools(calls, moment, out)
    }

    /// The model answered without asking for tools: the answer checked, and the run's output.
    fn final_answer(
        &mut self,
        mut answer: ModelAnswer,
        number: u64,
        mut out: Vec<Command>,
    ) -> Vec<Command> {
        let run = self.setup.run;
        let keep = self.steps.offer.keeps_content;
        if let Err((detail, issues)) = answer_output(self.setup.document, &answer) {
            let provider = self.model.as_ref().map_or("", |m| m.provider.as_str());
            let mut data = unusable_answer_data(number, &answer, provider, &detail, &issues);
            if !keep {
                strip_content(&mut data, &["response", "response_sha256"]);
            }
            self.record_model_ending(&mut out, "model_call_failed", data);
            let ending = output_invalid(run, &detail, issues, &self.spending);
            let ending = after_tools(run, &self.steps.ledger, ending, None);
            return self.end(out, ending);
        }
        let mut data = answered_data(number, &answer);
        if !keep {
            strip_content(&mut data, &["response", "response_sha256"]);
        }
        self.record_model_ending(&mut out, "model_call_answered", data);
        let mut warnings = self.steps.offer.warnings.clone();
        warnings.append(&mut answer.warnings);
        answer.warnings = warnings;
        let ending = finish(&self.finished(&self.prompt), &answer);
        let ending = match ending.status {
            auto_store::RunStatus::Succeeded => ending,
            _ => after_tools(run, &self.steps.ledger, ending, None),
        };
        self.end(out, ending)
    }

    /// What a tool call or its start came to, while a step's calls are under way.
    pub(super) fn tool_input(
        &mut self,
        mut calls: ToolCalls,
        input: Input,
        moment: &Moment,
        mut out: Vec<Command>,
    ) -> Vec<Command> {
        let current = calls.current.take();
        let (current, outcome, past_bound) = match (current, input) {
            (Some(_), Input::CancelSeen(order)) => {
                return self.stop(Stop::Cancelled(order), out);
            }
            (
                Some(current),
                Input::ToolCalled {
                    outcome,
                    past_bound,
                },
            ) => (current, outcome, past_bound),
            (current, input) => {
                // Invariant: the shell hands the core only what the last command asked for.
                let problem = crate::problem::Problem::internal(&format!(
                    "a reasoning run got {input:?} while it waited for {current:?}"
                ));
                let ending = crate::runs::rejection(problem, &self.setup.run.run_id);
                return self.end(out, ending);
            }
        };
        let bound = self.setup.run_bound;
        let mut outcome = outcome;
        if past_bound
            && let CallOutcome::Failed {
                because, message, ..
            } = &mut outcome
        {
            *because = CallBecause::TimedOut;
            *message = format!("the call was cut: {}", bound_reached(bound));
        }
        let tool = self.steps.offer.tools[current.tool].clone();
        let read = read_outcome(
            &tool,
            current.number,
            &outcome,
            &self.steps.offer.secrets,
            calls.room,
            &mut self.steps.ledger,
            moment,
        );
        out.push(Command::Record {
            event_type: read.event_type,
            data: read.data,
            ends_call: None,
        });
        self.steps.ledger.called.push(Called {
            call_id: current.call.call_id.clone(),
            server: tool.server.clone(),
            tool: tool.listed.name.clone(),
            read_only: tool.listed.read_only,
            arguments: current.arguments,
            seen: read.seen.clone(),
            is_error: read.is_error,
        });
        if past_bound {
            return self.stop(Stop::Bound("run_bound", bound_reached(bound)), out);
        }
        if let Some(stop) = read.stop {
            return self.stop(stop, out);
        }
        calls.results.push(Message::ToolResult {
            call_id: current.call.call_id,
            name: current.call.name,
            content: read.seen,
            is_error: read.is_error,
        });
        self.advance_tools(calls, moment, out)
    }

    /// Goes through a step's calls in order: each result known or refused is kept for the
    /// model, the first to make is started; once none is left, the next step.
    pub(super) fn advance_tools(
        &mut self,
        mut calls: ToolCalls,
        moment: &Moment,
        mut out: Vec<Command>,
    ) -> Vec<Command> {
        while let Some(pending) = calls.pending.pop_front() {
            let call = match pending {
                Pending::Ready(message) => {
                    calls.results.push(message);
                    continue;
                }
                Pending::Make(call) => call,
            };
            let refused = |refusal: Refusal| Message::ToolResult {
                call_id: call.call_id.clone(),
                name: call.name.clone(),
                content: refusal.words(),
                is_error: true,
            };
            let Some(index) = self.steps.offer.find(&call.name) else {
                calls
                    .results
                    .push(refused(Refusal::UnknownTool(call.name.clone())));
                continue;
            };
            let Value::Object(arguments) = &call.arguments else {
                calls.results.push(refused(Refusal::NotAnObject));
                continue;
            };
            let arguments_json = serde_json::to_vec(&call.arguments).unwrap_or_default();
            let digest = sha256_hex(&arguments_json);
            if let Err(refusal) = self
                .steps
                .ledger
                .check(&call.name, arguments_json.len(), &digest)
            {
                calls.results.push(refused(refusal));
                continue;
            }
            if let Some(order) = &moment.cancel {
                return self.stop(Stop::Cancelled(order.clone()), out);
            }
            let bound = self.setup.run_bound;
            let elapsed = self.elapsed(moment);
            if elapsed >= bound {
                return self.stop(Stop::Bound("run_bound", bound_reached(bound)), out);
            }
            let number = self.steps.ledger.count(&call.name, &digest, &call.call_id);
            let tool = &self.steps.offer.tools[index];
            let mut started = json!({
                "number": number,
                "call_id": call.call_id,
                "server": tool.server,
                "tool": tool.listed.name,
                "arguments_bytes": arguments_json.len(),
                "read_only": tool.listed.read_only,
            });
            if tool.record_content {
                started["arguments_sha256"] = json!(digest);
                started["arguments"] = call.arguments.clone();
            }
            out.push(Command::CallTool {
                started,
                server: tool.server.clone(),
                tool: tool.listed.name.clone(),
                arguments: arguments.clone(),
                time_left: bound.saturating_sub(elapsed),
            });
            calls.current = Some(Current {
                tool: index,
                number,
                arguments: String::from_utf8_lossy(&arguments_json).into_owned(),
                call,
            });
            self.phase = Phase::ToolCalls(calls);
            return out;
        }
        let steps = &mut self.steps;
        steps.added = Value::Array(calls.results.iter().map(message_kept).collect());
        if let Some((text, asked)) = calls.step {
            steps
                .conversation
                .push(Message::AssistantToolCalls { text, calls: asked });
        }
        steps.conversation.extend(calls.results);
        self.next_step(moment, out)
    }

    /// The run stops inside a step.
    fn stop(&mut self, stop: Stop, out: Vec<Command>) -> Vec<Command> {
        let run = self.setup.run;
        let record = self.spending.record(true);
        let ending = match stop {
            Stop::Cancelled(order) => cancelled(run, &order, record),
            Stop::Bound(because, detail) => {
                cannot_finish(run, &self.steps.ledger, because, &detail, record)
            }
        };
        self.end(out, ending)
    }

    /// The state of a run that goes on after its server stopped, rebuilt from what it kept:
    /// the calls of the last step (their results, or `Make` for a call to make now), the
    /// calls counted, and the conversation.
    pub(super) fn rebuild(&self) -> (Vec<Pending>, Ledger, Vec<Message>) {
        let mut ledger = Ledger::default();
        let mut conversation = vec![Message::User(self.prompt.message.clone())];
        let mut last = Vec::new();
        let steps: Vec<_> = self
            .history
            .calls
            .iter()
            .filter_map(|c| c.ended.as_ref().map(|e| e.data()))
            .filter(|data| data.asked_for_tools())
            .collect();
        for (index, data) in steps.iter().enumerate() {
            let (text, asked) = kept_calls(data);
            let results: Vec<Option<Message>> = asked
                .iter()
                .map(|call| self.replayed(&mut ledger, call))
                .collect();
            conversation.push(Message::AssistantToolCalls {
                text,
                calls: asked.clone(),
            });
            if index + 1 == steps.len() {
                last = results
                    .into_iter()
                    .zip(asked)
                    .map(|(result, call)| result.map_or(Pending::Make(call), Pending::Ready))
                    .collect();
            } else {
                // An earlier step answered all its calls before the next model call was made.
                conversation.extend(results.into_iter().flatten());
            }
        }
        (last, ledger, conversation)
    }

    /// One call of a step as the run kept it: its answer or failure given back, a refusal made
    /// again, or `None` for a call without an answer, to make now.
    fn replayed(&self, ledger: &mut Ledger, call: &ToolCall) -> Option<Message> {
        let arguments_json = serde_json::to_vec(&call.arguments).unwrap_or_default();
        let digest = sha256_hex(&arguments_json);
        let kept = self
            .history
            .tool_calls
            .iter()
            .rev()
            .find(|c| c.started.call_id == call.call_id);
        let message = |content: String, is_error: bool| Message::ToolResult {
            call_id: call.call_id.clone(),
            name: call.name.clone(),
            content,
            is_error,
        };
        let Some(kept) = kept else {
            // Never sent: refused then, or not reached before the server stopped.
            return match ledger.check(&call.name, arguments_json.len(), &digest) {
                Err(refusal) => Some(message(refusal.words(), true)),
                Ok(()) if self.steps.offer.find(&call.name).is_none() => Some(message(
                    Refusal::UnknownTool(call.name.clone()).words(),
                    true,
                )),
                Ok(()) => None,
            };
        };
        ledger.count(&call.name, &digest, &call.call_id);
        let (seen, is_error) = match &kept.ended {
            Some(ToolEnding::Answered(data)) => {
                let result = data.result.as_ref().unwrap_or(&Value::Null);
                (content::model_text(result), content::is_error(result))
            }
            Some(ToolEnding::Failed(data)) if data.because.as_deref() == Some("interrupted") => {
                return None;
            }
            ended => {
                let data = match ended {
                    Some(ToolEnding::Failed(data)) => Some(data),
                    _ => None,
                };
                let because = data.and_then(|d| d.because.as_deref());
                if matches!(because, Some("server_failure" | "timed_out")) {
                    ledger.server_failures += 1;
                }
                let words = data.and_then(|d| d.message.as_deref()).unwrap_or_default();
                (format!("The call failed: {words}"), true)
            }
        };
        ledger.called.push(Called {
            call_id: call.call_id.clone(),
            server: kept.started.server.clone(),
            tool: kept.started.tool.clone(),
            read_only: kept.started.read_only,
            arguments: String::from_utf8_lossy(&arguments_json).into_owned(),
            seen: seen.clone(),
            is_error,
        });
        Some(message(seen, is_error))
    }
}

fn input_tokens(usage: &auto_models::Usage) -> Option<u64> {
    let parts = [usage.input_uncached, usage.cache_read, usage.cache_write];
    parts
        .iter()
        .any(Option::is_some)
        .then(|| parts.iter().flatten().sum())
}

fn output_tokens(usage: &auto_models::Usage) -> Option<u64> {
    let parts = [usage.output_text, usage.output_reasoning];
    parts
        .iter()
        .any(Option::is_some)
        .then(|| parts.iter().flatten().sum())
}

/// The next step's input, from the step before: its input and what this step adds, converted
/// at its ratio of bytes to tokens.
fn estimated_input(step: StepCount, added: &Value) -> u64 {
    let Some(input) = step.input_tokens.filter(|t| *t > 0) else {
        return 0;
    };
    let added_bytes = json_bytes(added).unwrap_or(0) as f64;
    let bytes_per_token = (step.request_bytes as f64 / input as f64).max(1.0);
    input + (added_bytes / bytes_per_token) as u64
}

/// The answer with every secret of the run's servers scrubbed from its text and its calls'
/// arguments: "a secret of a tool server in the prompt or in the model's answer reaches no
/// model call and no tool".
fn scrubbed(mut answer: ModelAnswer, secrets: &[&str]) -> ModelAnswer {
    if secrets.is_empty() {
        return answer;
    }
    answer.text = content::scrub(&answer.text, secrets);
    for call in &mut answer.tool_calls {
        call.arguments = content::scrub_value(&call.arguments, secrets);
    }
    answer
}

/// `model_call_answered` for a step that asks for tools: each call with its id, tool, server
/// and the digest of its arguments; the response (text and calls) when content is kept.
fn tool_step_data(number: u64, answer: &ModelAnswer, offer: &Offer) -> Value {
    let mut data = answered_data(number, answer);
    data["tool_calls"] = Value::Array(
        answer
            .tool_calls
            .iter()
            .map(|call| {
                let offered = offer.find(&call.name).map(|i| &offer.tools[i]);
                json!({
                    "call_id": call.call_id,
                    "name": call.name,
                    "tool": offered.map(|t| t.listed.name.clone()),
                    "server": offered.map(|t| t.server.clone()),
                    "arguments_sha256": sha256_hex(&serde_json::to_vec(&call.arguments).unwrap_or_default()),
                })
            })
            .collect(),
    );
    if offer.keeps_content {
        let response = json!({
            "text": answer.text,
            "tool_calls": answer.tool_calls.iter().map(|c| json!({
                "call_id": c.call_id, "name": c.name, "arguments": c.arguments,
            })).collect::<Vec<_>>(),
        });
        data["response_sha256"] = json!(sha256_hex(
            &serde_json::to_vec(&response).unwrap_or_default()
        ));
        data["response"] = response;
    } else {
        strip_content(&mut data, &["response", "response_sha256"]);
    }
    data
}

/// How a tool call's outcome is recorded and read.
struct Read {
    event_type: &'static str,
    data: Value,
    /// What the model reads of it.
    seen: String,
    is_error: bool,
    stop: Option<Stop>,
}

/// How a call ended: its event, what the model reads of it (the secrets scrubbed out, cut to
/// the room it has), whether it is an error, and whether the run stops.
fn read_outcome(
    tool: &OfferedTool,
    number: u32,
    outcome: &CallOutcome,
    secrets: &[String],
    room: Option<usize>,
    ledger: &mut Ledger,
    moment: &Moment,
) -> Read {
    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    match outcome {
        CallOutcome::Answered {
            result,
            jsonrpc_id,
            duration_ms,
        } => {
            let (result_bytes, _) = json_size_and_sha256(result, false);
            ledger.result_bytes += result_bytes as u64;
            let kept = content::scrub_value(result, &secrets);
            let is_error = content::is_error(result);
            let seen = content::scrub(&content::model_text(result), &secrets);
            let (seen, shown_bytes) = match room {
                Some(room) => cut_to_room(&seen, room),
                None => (seen, None),
            };
            let mut data = json!({
                "number": number,
                "is_error": is_error,
                "result_bytes": result_bytes,
                "duration_ms": duration_ms,
                "jsonrpc_id": jsonrpc_id,
            });
            let request_id = tool
                .request_id
                .as_deref()
                .and_then(|path| content::at_path(result, path));
            if let Some(id) = request_id {
                data["request_id"] = id.clone();
            }
            if let Some(shown) = shown_bytes {
                data["shown_bytes"] = json!(shown);
            }
            if tool.record_content {
                data["result_sha256"] = json!(json_size_and_sha256(&kept, true).1);
                data["result"] = kept;
            }
            Read {
                event_type: "tool_call_answered",
                data,
                seen,
                is_error,
                stop: None,
            }
        }
        CallOutcome::Failed {
            because,
            message,
            jsonrpc_id,
            duration_ms,
        } => {
            let message = content::scrub(message, &secrets);
            let data = json!({
                "number": number,
                "because": because.as_str(),
                "message": message,
                "duration_ms": duration_ms,
                "jsonrpc_id": jsonrpc_id,
            });
            let stop = failure_stop(tool, *because, &message, ledger, moment);
            Read {
                event_type: "tool_call_failed",
                data,
                seen: format!("The call failed: {message}"),
                is_error: true,
                stop,
            }
        }
    }
}

/// Whether a failed call stops the run: a cancel, or the run's servers failing too often.
fn failure_stop(
    tool: &OfferedTool,
    because: CallBecause,
    message: &str,
    ledger: &mut Ledger,
    moment: &Moment,
) -> Option<Stop> {
    match because {
        CallBecause::Cancelled => Some(Stop::Cancelled(moment.cancel_order())),
        CallBecause::ServerFailure | CallBecause::TimedOut => {
            ledger.server_failures += 1;
            (ledger.server_failures >= SERVER_FAILURES_MAX).then(|| {
                Stop::Bound(
                    "server_failed",
                    format!(
                        "The run's tool servers failed {SERVER_FAILURES_MAX} times, the most a run takes; the last: {} {message}.",
                        tool.server
                    ),
                )
            })
        }
        CallBecause::TooLarge | CallBecause::ArgumentsRefused => None,
    }
}
