//! Interaction functions that ask a system through a tool (supplement §7): "With `tool:
//! server/tool` and `arguments` (a template rendering JSON) instead of `to`, the run calls that
//! tool once and its result, checked against `output.schema`, is the answer, within 70
//! seconds."
//!
//! A run checks its input and renders its arguments, then, as a reasoning run checks its tools
//! before the model is called (reasoning page, "Before the model is called"), finds the server
//! configured for the playbook, the tool allowed and listed: a problem there ends the run
//! `unavailable`, kind `tool_not_offered` or `tool_server_failed`, and nothing is called. The
//! call is recorded `tool_call_started` before it is sent and `tool_call_answered` or
//! `tool_call_failed` after. The result (its structured content, or its text read as JSON) that
//! matches the output contract ends the run `succeeded` with it as output. A run that called its
//! tool and cannot take its result (a tool error, a result that does not match, a failure, the
//! 70 seconds) ends as a tool-calling reasoning run that cannot finish: `unavailable`, kind
//! `tools_unfinished`, when the server marks the tool read-only, `conflict`, kind
//! `effect_unknown`, otherwise, with the `because` of what stopped it.
//!
//! The 70 seconds bound one attempt's work: opening the server, listing its tools and the
//! call. An attempt that stopped with its server is taken over once its last event is older
//! than that bound: a call recorded without an answer is made again only when its server marks
//! the tool read-only; otherwise the run ends `effect_unknown`, because `call_outcome_unknown`,
//! and the tool is never called twice.

use std::sync::Arc;
use std::time::Duration;

use auto_engine::interaction::{Asks, InteractionDocument, render_arguments};
use auto_schema::json_bytes;
use auto_store::{DefinitionKey, EventFilter, PlaybookRef, Run, RunEnding, RunStatus};
use auto_tools::limits::ARGUMENTS_BYTES_MAX;
use auto_tools::{CallBecause, CallOutcome, ListedTool, ToolServerConfig, content};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::auth::Caller;
use crate::documents::Checked;
use crate::interaction_runs::core::{ToolResume, tool_resume};
use crate::interaction_runs::{cancelled, contract_issues, title};
use crate::problem::{Problem, ProblemIssue, Reason};
use crate::reasoning::history::{Fact, ToolCallRecord, ToolCallStarted, ToolEnding};
use crate::reasoning::record::interrupted_tool_call;
use crate::reasoning_runs::{COMMIT_MARGIN_MS, CancelOrder, Recorder, sha256_hex};
use crate::reasoning_tools::bound_words;
use crate::runs::{Ask, OUTPUT_BYTES_MAX, RunAnswer, answer_of, rejection, still_running};
use crate::service::{Service, store_problem};

/// The tool a run calls, as its server lists it.
struct Target {
    server: Arc<ToolServerConfig>,
    listed: ListedTool,
}

impl Target {
    /// "crm/find-owner (read-only)": the tool in the words of an ending.
    fn words(&self) -> String {
        let name = format!("{}/{}", self.server.name, self.listed.name);
        if self.listed.read_only {
            format!("{name} (read-only)")
        } else {
            name
        }
    }
}

impl Service {
    /// A new run of a tool interaction: its input and arguments, the run recorded, the call.
    pub(crate) async fn tool_interaction(
        &self,
        caller: &Caller,
        pb: &PlaybookRef,
        key: &DefinitionKey,
        version: i64,
        ask: Ask,
        document: &InteractionDocument,
    ) -> Result<RunAnswer, Problem> {
        let arguments = match prepare_arguments(key, document, &ask.input).await {
            Ok(arguments) => arguments,
            Err(problem) => {
                return self
                    .start_and_end(caller, pb, key, version, ask, problem)
                    .await;
            }
        };
        let run = self.start(caller, pb, key, version, ask).await?;
        self.perform_tool_call(pb, &run, document, arguments, 1)
            .await
    }

    /// Calls the tool under the run's bound and ends the run with what it came to.
    async fn perform_tool_call(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        document: &InteractionDocument,
        arguments: Map<String, Value>,
        number: u64,
    ) -> Result<RunAnswer, Problem> {
        let (token, slot) = self.cancels.register(pb, &run.run_id);
        let ending = self
            .call_ending(pb, run, document, arguments, number, &token)
            .await;
        self.cancels.forget(pb, &run.run_id);
        let (mut ending, next_seq) = ending?;
        // A cancel that came once the tool had answered leaves the answer standing.
        if token.is_cancelled()
            && ending.status != RunStatus::Succeeded
            && let Some(order) = slot.lock().unwrap_or_else(|p| p.into_inner()).clone()
        {
            ending = cancelled(run, &order);
        }
        let ended = self.end(pb, run, next_seq, ending).await?;
        Ok(answer_of(&ended))
    }

    /// The run's ending and the number its ending fact takes.
    async fn call_ending(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        document: &InteractionDocument,
        arguments: Map<String, Value>,
        number: u64,
        token: &CancellationToken,
    ) -> Result<(RunEnding, i64), Problem> {
        let Asks::Tool { server, tool, .. } = &document.asks else {
            return Err(Problem::internal(&"a person's interaction has no tool"));
        };
        let bound = self.models.interaction_tool_bound();
        let deadline = tokio::time::Instant::now() + bound;
        let mut recorder = Recorder::new(self.store.as_ref(), pb, run);
        let opened = tokio::time::timeout_at(deadline, self.open_target(pb, run, server, tool));
        let (connection, target) = match opened.await {
            Ok(Ok(found)) => found,
            Ok(Err(problem)) => return Ok((rejection(problem, &run.run_id), recorder.next_seq)),
            Err(_) => {
                let mut problem = Problem::new(
                    Reason::Unavailable,
                    title(&run.key.name, "could not call its tool"),
                    format!(
                        "The run reached its bound of {} before the tool server {server} was opened, so the tool was not called; try again later.",
                        bound_words(bound)
                    ),
                );
                problem.because = Some("run_bound".into());
                return Ok((rejection(problem, &run.run_id), recorder.next_seq));
            }
        };
        let arguments_json = serde_json::to_vec(&arguments).unwrap_or_default();
        let mut started = json!({
            "number": number,
            "call_id": format!("{}#{number}", run.run_id),
            "server": target.server.name,
            "tool": target.listed.name,
            "arguments_bytes": arguments_json.len(),
            "read_only": target.listed.read_only,
        });
        if target.server.record_content {
            started["arguments_sha256"] = json!(sha256_hex(&arguments_json));
            started["arguments"] = Value::Object(arguments.clone());
        }
        let recorded = recorder.record("tool_call_started", started).await;
        if let Err(problem) = recorded {
            connection.close().await;
            return Err(problem);
        }
        let outcome = call_within(&connection, &target, arguments, run, deadline, token).await;
        connection.close().await;
        let ending = self
            .record_outcome(
                &mut recorder,
                run,
                document,
                &target,
                number,
                outcome,
                bound,
            )
            .await?;
        Ok((ending, recorder.next_seq))
    }

    /// The server configured for the playbook, the tool allowed, the server opened and the
    /// tool listed; or the run's `tool_not_offered` or `tool_server_failed`.
    async fn open_target(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        server: &str,
        tool: &str,
    ) -> Result<(auto_tools::Connection, Target), Problem> {
        let name = &run.key.name;
        let Some(config) = self.models.tools.find(&pb.org, &pb.playbook, server) else {
            return Err(not_offered(
                name,
                "tool_server_not_configured",
                format!(
                    "The tool server {server} is not configured for this playbook, so the tool {server}/{tool} was not called; ask the operator to configure it under tool_servers."
                ),
            ));
        };
        if !config.allows(tool) {
            let allowed = config.allowed.as_deref().unwrap_or_default().join(", ");
            return Err(not_offered(
                name,
                "tool_not_allowed",
                format!(
                    "The tool {server}/{tool} is outside the tools the operator allows on {server}, so it was not called; the server allows {allowed}."
                ),
            ));
        }
        let connection = auto_tools::open(config.clone())
            .await
            .map_err(|failure| server_failed(name, server, &failure))?;
        let listed = match connection.list_tools().await {
            Ok(listed) => listed,
            Err(failure) => {
                connection.close().await;
                return Err(server_failed(name, server, &failure));
            }
        };
        let Some(listed) = listed.into_iter().find(|l| l.name == tool) else {
            connection.close().await;
            return Err(not_offered(
                name,
                "tool_not_listed",
                format!(
                    "The tool server {server} does not list the tool {tool}, so it was not called; call search to see the tools it lists."
                ),
            ));
        };
        Ok((
            connection,
            Target {
                server: config,
                listed,
            },
        ))
    }

    /// Records how the call ended, and the run's ending from it.
    #[expect(
        clippy::too_many_arguments,
        reason = "the state of the one call, passed whole"
    )]
    async fn record_outcome(
        &self,
        recorder: &mut Recorder<'_>,
        run: &Run,
        document: &InteractionDocument,
        target: &Target,
        number: u64,
        outcome: Outcome,
        bound: Duration,
    ) -> Result<RunEnding, Problem> {
        let secrets = target.server.secrets();
        match outcome {
            Outcome::Called(CallOutcome::Answered {
                result,
                jsonrpc_id,
                duration_ms,
            }) => {
                let kept = content::scrub_value(&result, &secrets);
                let mut data = json!({
                    "number": number,
                    "is_error": content::is_error(&result),
                    "result_bytes": json_bytes(&result).unwrap_or(0),
                    "duration_ms": duration_ms,
                    "jsonrpc_id": jsonrpc_id,
                });
                if let Some(path) = target.server.request_id.as_deref()
                    && let Some(id) = content::at_path(&result, path)
                {
                    data["request_id"] = id.clone();
                }
                if target.server.record_content {
                    data["result_sha256"] =
                        json!(sha256_hex(&serde_json::to_vec(&kept).unwrap_or_default()));
                    data["result"] = kept.clone();
                }
                recorder
                    .record_following("tool_call_answered", data, None)
                    .await?;
                result_ending(
                    run,
                    document,
                    &target.words(),
                    target.listed.read_only,
                    &kept,
                )
            }
            Outcome::Called(CallOutcome::Failed {
                because,
                message,
                jsonrpc_id,
                duration_ms,
            }) => {
                let message = content::scrub(&message, &secrets);
                let data = json!({
                    "number": number,
                    "because": because.as_str(),
                    "message": message,
                    "duration_ms": duration_ms,
                    "jsonrpc_id": jsonrpc_id,
                });
                recorder
                    .record_following("tool_call_failed", data, None)
                    .await?;
                Ok(failed_ending(run, target, because.as_str(), &message))
            }
            Outcome::Bound { duration_ms } => {
                let message = format!(
                    "the tool did not answer within the run's {}",
                    bound_words(bound)
                );
                let data = json!({
                    "number": number,
                    "because": CallBecause::TimedOut.as_str(),
                    "message": message,
                    "duration_ms": duration_ms,
                });
                recorder
                    .record_following("tool_call_failed", data, None)
                    .await?;
                Ok(cannot_finish(
                    run,
                    &target.words(),
                    target.listed.read_only,
                    "run_bound",
                    &format!("The run reached its bound of {}.", bound_words(bound)),
                ))
            }
        }
    }

    /// A started tool interaction asked again under its id: `None` for an interaction that
    /// asks a person; otherwise the run goes on from what it recorded once no attempt can
    /// still be going on with it, and `taken` before.
    pub(crate) async fn resume_tool_interaction(
        &self,
        pb: &PlaybookRef,
        run: &Run,
    ) -> Result<Option<RunAnswer>, Problem> {
        let checked = self
            .checked_version(pb, &run.key, run.definition_version)
            .await?;
        let Some(document) = checked.as_deref().and_then(Checked::interaction) else {
            return Ok(None);
        };
        if !matches!(document.asks, Asks::Tool { .. }) {
            return Ok(None);
        }
        let quiet_ms = self.models.interaction_tool_bound().as_millis() as i64
            + i64::try_from(COMMIT_MARGIN_MS).unwrap_or(i64::MAX);
        let age_ms =
            (self.store.now().await.map_err(store_problem)? - run.last_event_at).num_milliseconds();
        let recorded = self.recorded_call(pb, run).await?;
        let answer = match (tool_resume(recorded.as_ref(), age_ms, quiet_ms), &recorded) {
            (ToolResume::StillRunning, _) => return Err(still_running(&run.run_id)),
            (ToolResume::Call, _) | (_, None) => self.first_tool_call(pb, run, document).await?,
            (step, Some(call)) => {
                self.resume_after_call(pb, run, document, &call.started, step)
                    .await?
            }
        };
        Ok(Some(answer))
    }

    /// The run's first call: its arguments rendered, or the run refused.
    async fn first_tool_call(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        document: &InteractionDocument,
    ) -> Result<RunAnswer, Problem> {
        match prepare_arguments(&run.key, document, &run.input).await {
            Ok(arguments) => {
                self.perform_tool_call(pb, run, document, arguments, 1)
                    .await
            }
            Err(problem) => {
                let ending = rejection(problem, &run.run_id);
                let ended = self.end(pb, run, run.last_run_seq + 1, ending).await?;
                Ok(answer_of(&ended))
            }
        }
    }

    /// Goes on after the call the run recorded, `started`, as [`tool_resume`] decided: its
    /// recorded ending taken again, or, for a call without an answer, the call made again when
    /// its tool only reads, or the run ended `effect_unknown`.
    async fn resume_after_call(
        &self,
        pb: &PlaybookRef,
        run: &Run,
        document: &InteractionDocument,
        started: &ToolCallStarted,
        step: ToolResume<'_>,
    ) -> Result<RunAnswer, Problem> {
        let words = if started.read_only {
            format!("{}/{} (read-only)", started.server, started.tool)
        } else {
            format!("{}/{}", started.server, started.tool)
        };
        let ending = match step {
            ToolResume::TakeResult(result) => {
                result_ending(run, document, &words, started.read_only, result)?
            }
            ToolResume::NoContent => cannot_finish(
                run,
                &words,
                started.read_only,
                "restarted_without_content",
                "The server restarted before the run finished, and the run kept no content to go on from, since its tool server has record_content: false.",
            ),
            ToolResume::Failed { because, message } => {
                recorded_failure_ending(run, &words, started.read_only, because, message)
            }
            ToolResume::CallAgain { .. } | ToolResume::OutcomeUnknown => {
                Recorder::new(self.store.as_ref(), pb, run)
                    .record_following(
                        "tool_call_failed",
                        interrupted_tool_call(started.number),
                        None,
                    )
                    .await?;
                let run = self
                    .store
                    .get_run(pb, &run.run_id)
                    .await
                    .map_err(store_problem)?
                    .ok_or_else(|| Problem::internal(&"a run vanished"))?;
                if let ToolResume::CallAgain { number } = step {
                    let arguments = prepare_arguments(&run.key, document, &run.input).await?;
                    return self
                        .perform_tool_call(pb, &run, document, arguments, number)
                        .await;
                }
                let ending = cannot_finish(
                    &run,
                    &words,
                    false,
                    "call_outcome_unknown",
                    "The server restarted while the run called its tool, which its server does not mark read-only, so it was not called again.",
                );
                let ended = self.end(pb, &run, run.last_run_seq + 1, ending).await?;
                return Ok(answer_of(&ended));
            }
            ToolResume::StillRunning | ToolResume::Call => {
                return Err(Problem::internal(&"a call resumed before it was made"));
            }
        };
        let ended = self.end(pb, run, run.last_run_seq + 1, ending).await?;
        Ok(answer_of(&ended))
    }

    /// The run's last call as its history holds it, when it made one.
    async fn recorded_call(
        &self,
        pb: &PlaybookRef,
        run: &Run,
    ) -> Result<Option<ToolCallRecord>, Problem> {
        let filter = EventFilter {
            run_id: Some(run.run_id.clone()),
            ..EventFilter::default()
        };
        let events = self
            .store
            .list_events(pb, &filter)
            .await
            .map_err(store_problem)?;
        let mut last: Option<ToolCallRecord> = None;
        for event in &events {
            let data = event.data.as_ref().unwrap_or(&Value::Null);
            let ending =
                match Fact::read(&event.event_type, data).map_err(|e| Problem::internal(&e))? {
                    Fact::ToolCallStarted(started) => {
                        last = Some(ToolCallRecord {
                            started,
                            ended: None,
                        });
                        continue;
                    }
                    Fact::ToolCallAnswered(ended) => ToolEnding::Answered(ended),
                    Fact::ToolCallFailed(ended) => ToolEnding::Failed(ended),
                    _ => continue,
                };
            if let Some(call) = last.as_mut() {
                call.ended = Some(ending);
            }
        }
        // A call that ended as interrupted was made again, or its run ended.
        Ok(last)
    }
}

/// What the call came to within the run's bound.
enum Outcome {
    Called(CallOutcome),
    /// The run's bound passed during the call, which was cancelled.
    Bound {
        duration_ms: u64,
    },
}

/// Calls the tool once; the call is cancelled (`notifications/cancelled`) when the run's bound
/// passes or the run is cancelled.
async fn call_within(
    connection: &auto_tools::Connection,
    target: &Target,
    arguments: Map<String, Value>,
    run: &Run,
    deadline: tokio::time::Instant,
    token: &CancellationToken,
) -> Outcome {
    let started = std::time::Instant::now();
    let call_token = token.child_token();
    let call = connection.call(&target.listed.name, arguments, &run.run_id, &call_token);
    tokio::pin!(call);
    tokio::select! {
        outcome = &mut call => Outcome::Called(outcome),
        () = tokio::time::sleep_until(deadline) => {
            call_token.cancel();
            let _ = call.await;
            Outcome::Bound {
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            }
        }
    }
}

/// The input checked and the arguments rendered, within their bounds; or the run's
/// `invalid_input`.
async fn prepare_arguments(
    key: &DefinitionKey,
    document: &InteractionDocument,
    input: &Value,
) -> Result<Map<String, Value>, Problem> {
    let rendered =
        crate::interaction_runs::render_with_input(key, document, input, render_arguments).await?;
    let refused = |line: u32, text: &str, pointer: Option<String>| {
        let message = format!("Line {line}: {text}");
        let issue = ProblemIssue {
            pointer: pointer.unwrap_or_else(|| "/input".into()),
            line: Some(line),
            column: None,
            path: Some("/arguments".into()),
            message: message.clone(),
        };
        Problem::invalid_input(title(&key.name, "cannot render its arguments"), message)
            .with_issues(vec![issue])
    };
    let arguments = rendered.map_err(|e| refused(e.line, &e.text, e.field_pointer))?;
    let bytes = json_bytes(&arguments).unwrap_or(usize::MAX);
    if bytes > ARGUMENTS_BYTES_MAX {
        return Err(refused_size(key, bytes));
    }
    Ok(arguments)
}

/// `arguments` rendered past the 16 KiB a call may send ("A call that sends more than 16 KiB
/// of arguments is refused").
fn refused_size(key: &DefinitionKey, bytes: usize) -> Problem {
    let message = format!(
        "arguments renders {bytes} bytes of JSON, more than the {ARGUMENTS_BYTES_MAX} bytes (16 KiB) a call may send"
    );
    Problem::invalid_input(
        title(&key.name, "cannot render its arguments"),
        message.clone(),
    )
    .with_issues(vec![ProblemIssue::field("/input", message)])
}

/// The ending of a call that answered: the result is the answer when it is no error and
/// matches the output contract.
fn result_ending(
    run: &Run,
    document: &InteractionDocument,
    words: &str,
    read_only: bool,
    result: &Value,
) -> Result<RunEnding, Problem> {
    if content::is_error(result) {
        let text: String = content::model_text(result).chars().take(500).collect();
        return Ok(cannot_finish(
            run,
            words,
            read_only,
            "tool_error",
            &format!("The tool answered with an error: {text}."),
        ));
    }
    let answer = match answer_of_result(result) {
        Ok(answer) => answer,
        Err(why) => {
            return Ok(cannot_finish(run, words, read_only, "output_invalid", &why));
        }
    };
    let bytes = json_bytes(&answer).unwrap_or(usize::MAX);
    if bytes > OUTPUT_BYTES_MAX {
        return Ok(cannot_finish(
            run,
            words,
            read_only,
            "output_invalid",
            &format!(
                "The tool's result holds {bytes} bytes as JSON, more than the 1,048,574 a run's output keeps."
            ),
        ));
    }
    let issues = contract_issues(
        document.output_schema.as_ref(),
        document.output_shape.as_deref(),
        &answer,
        "output",
    )?;
    if !issues.is_empty() {
        let found = issues
            .iter()
            .map(|i| i.message.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        let mut ending = cannot_finish(
            run,
            words,
            read_only,
            "output_invalid",
            &format!("The tool's result does not match the output schema: {found}."),
        );
        if let Some(problem) = ending.problem.as_mut() {
            problem["issues"] = serde_json::to_value(&issues).unwrap_or(Value::Null);
        }
        return Ok(ending);
    }
    // A shape's optional field the tool gave as null reads back as absent, as in every run.
    let output = auto_schema::shape_output(document.output_shape.as_deref(), answer);
    Ok(RunEnding {
        status: RunStatus::Succeeded,
        output: Some(output),
        record: Some(json!({ "tool": words })),
        problem: None,
    })
}

/// The answer a result gives: its structured content, or else its text read as JSON.
fn answer_of_result(result: &Value) -> Result<Value, String> {
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        return Ok(structured.clone());
    }
    let texts: Vec<&str> = result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect()
        })
        .unwrap_or_default();
    if texts.is_empty() {
        return Err(
            "The tool's result holds neither structured content nor text to read as the answer."
                .into(),
        );
    }
    let text = texts.join("\n");
    serde_json::from_str(&text)
        .map_err(|error| format!("The tool's result is text that is not JSON ({error})."))
}

/// The ending of a call that failed, in the page's `because`.
fn failed_ending(run: &Run, target: &Target, because: &str, message: &str) -> RunEnding {
    if because == CallBecause::Cancelled.as_str() {
        return cancelled(run, &CancelOrder::unspoken());
    }
    recorded_failure_ending(
        run,
        &target.words(),
        target.listed.read_only,
        because,
        message,
    )
}

fn recorded_failure_ending(
    run: &Run,
    words: &str,
    read_only: bool,
    because: &str,
    message: &str,
) -> RunEnding {
    let (because, detail) = match because {
        "timed_out" => ("timed_out", format!("The call timed out: {message}.")),
        "too_large" => ("too_large", format!("The call failed: {message}.")),
        "cancelled" => return cancelled(run, &CancelOrder::unspoken()),
        _ => (
            "server_failed",
            format!("The tool server failed during the call: {message}."),
        ),
    };
    cannot_finish(run, words, read_only, because, &detail)
}

/// "When a tool-calling run cannot finish": `tools_unfinished` (503) for a tool its server
/// marks read-only, `effect_unknown` (409) otherwise, keeping `because`.
fn cannot_finish(
    run: &Run,
    words: &str,
    read_only: bool,
    because: &str,
    detail: &str,
) -> RunEnding {
    let title = title(&run.key.name, "could not finish after calling its tool");
    let mut problem = if read_only {
        Problem::new(
            Reason::Unavailable,
            title,
            format!(
                "{detail} The run called {words}, which only reads, so nothing was changed; a new run may ask again."
            ),
        )
        .with_kind("tools_unfinished")
    } else {
        Problem::conflict(
            title,
            format!(
                "{detail} The run called {words}; a tool its server does not mark read-only may already have changed something outside the playbook, so check before running the work again."
            ),
        )
        .with_kind("effect_unknown")
    };
    problem.because = Some(because.to_owned());
    rejection(problem, &run.run_id)
}

fn not_offered(name: &str, because: &str, detail: String) -> Problem {
    crate::reasoning_tools::tool_not_offered(title(name, "cannot call its tool"), because, detail)
}

fn server_failed(name: &str, server: &str, failure: &auto_tools::ServerFailure) -> Problem {
    crate::reasoning_tools::tool_server_failed(
        title(name, "cannot call its tool"),
        server,
        failure,
        "the tool",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_answers_with_its_structured_content_or_its_text_as_json() {
        let structured =
            json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"a": 1}});
        assert_eq!(answer_of_result(&structured), Ok(json!({"a": 1})));
        let text = json!({"content": [{"type": "text", "text": "{\"a\": 2}"}]});
        assert_eq!(answer_of_result(&text), Ok(json!({"a": 2})));
        let prose = json!({"content": [{"type": "text", "text": "lookup: {}"}]});
        assert_eq!(
            answer_of_result(&prose),
            Err(
                "The tool's result is text that is not JSON (expected value at line 1 column 1)."
                    .into()
            )
        );
        assert_eq!(
            answer_of_result(&json!({"content": []})),
            Err("The tool's result holds neither structured content nor text to read as the answer.".into())
        );
    }

    #[test]
    fn a_bound_is_told_in_seconds_or_milliseconds() {
        assert_eq!(bound_words(Duration::from_secs(70)), "70 seconds");
        assert_eq!(bound_words(Duration::from_millis(1_500)), "1500 ms");
    }
}
