//! How a reasoning run ends (reasoning page, "How a run ends", "Answers that are JSON", and
//! for a run that called tools "Limits on time and failures"): the answer checked, the output
//! and the record of a run that succeeded, and the problem of every other ending, each with
//! the spending the run keeps. Pure: each ending is built from what the run holds.

use auto_engine::input::depth_exceeds;
use auto_engine::reasoning::ReasoningDocument;
use auto_models::{
    FailureBecause, ModelAnswer, ModelFailure, RejectionKind, RejectionReason, Settings,
    rejection_for,
};
use auto_schema::{ValidationIssue, check_shape, json_bytes, render_answer_issues};
use auto_store::{Run, RunEnding, RunStatus};
use serde_json::{Value, json};

use super::history::{CancelOrder, ModelCall, ModelEnding};
use super::ledger::{Ledger, called_words};
use super::record::{INPUT_FIELDS, Prompt, Spending, settings_record};
use crate::problem::{Problem, ProblemIssue, Reason};
use crate::runs::{OUTPUT_BYTES_MAX, rejection};

/// "The output and the record may be at most 1 MiB together."
pub const OUTPUT_AND_RECORD_BYTES_MAX: usize = 1_048_576;
/// "An answer may nest at most 128 levels deep."
pub const ANSWER_DEPTH_MAX: usize = 128;
/// "warnings: ... at most 20".
pub const RECORD_WARNINGS_MAX: usize = 20;

pub(crate) fn title(run: &Run, what: &str) -> String {
    format!("The reasoning function {} {what}", run.key.name)
}

/// The run's rejection for a model call that failed.
pub(crate) fn model_rejection(
    run: &Run,
    failure: &ModelFailure,
    record: Option<Value>,
) -> RunEnding {
    let decided = rejection_for(failure);
    let reason = match decided.reason {
        RejectionReason::InvalidInput => Reason::InvalidInput,
        RejectionReason::Conflict => Reason::Conflict,
        RejectionReason::Unavailable => Reason::Unavailable,
        RejectionReason::Cancelled => Reason::Cancelled,
    };
    let what = match failure.because {
        FailureBecause::ContentRefused => "was refused by its model",
        FailureBecause::ModelNotAllowed | FailureBecause::ProviderNotConfigured => {
            "cannot use its model"
        }
        FailureBecause::OutputInvalid => "got an answer it cannot use",
        FailureBecause::DefinitionInvalid | FailureBecause::RequestTooLong => {
            "was refused by its provider"
        }
        _ => "could not get an answer from its model",
    };
    let mut problem = Problem::new(reason, title(run, what), decided.detail);
    if let Some(kind) = decided.kind {
        problem = problem.with_kind(match kind {
            RejectionKind::Unworkable => "unworkable",
            RejectionKind::ModelNotOffered => "model_not_offered",
        });
    }
    problem.because = Some(decided.because.as_str().to_owned());
    problem.retry_after_seconds = decided.retry_after_seconds;
    let mut ending = rejection(problem, &run.run_id);
    ending.record = record;
    ending
}

pub(crate) fn cancelled(run: &Run, order: &CancelOrder, record: Option<Value>) -> RunEnding {
    let mut problem = Problem::new(Reason::Cancelled, title(run, "was cancelled"), &order.words)
        .with_kind(&order.kind);
    problem.because = Some("cancelled".into());
    let mut ending = rejection(problem, &run.run_id);
    ending.record = record;
    ending
}

pub(crate) fn without_content(run: &Run, spending: &Spending) -> RunEnding {
    let mut problem = Problem::new(
        Reason::Unavailable,
        title(run, "cannot go on"),
        "The server restarted before the run finished, and the run kept no content to go on from; run it again.",
    );
    problem.because = Some("restarted_without_content".into());
    let mut ending = rejection(problem, &run.run_id);
    ending.record = spending.record(true);
    ending
}

/// The model's JSON answer: the text itself, or inside one Markdown code fence when a
/// provider wraps it so.
pub(crate) fn parse_json_answer(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    let unfenced = trimmed
        .strip_prefix("```json")
        .or_else(|| trimmed.strip_prefix("```"))
        .and_then(|rest| rest.strip_suffix("```"))
        .map_or(trimmed, str::trim);
    let mut deserializer = serde_json::Deserializer::from_str(unfenced);
    deserializer.disable_recursion_limit();
    let value = serde::Deserialize::deserialize(&mut deserializer)
        .and_then(|v: Value| deserializer.end().map(|()| v))
        .map_err(|e| format!("The answer is not JSON: {e}"))?;
    if depth_exceeds(&value, ANSWER_DEPTH_MAX) {
        return Err("The answer nests deeper than the 128 levels an answer may".into());
    }
    Ok(value)
}

/// "A JSON answer does not match the schema: unavailable, with the first issues: try again",
/// keeping the spending of the calls that ended.
pub(crate) fn output_invalid(
    run: &Run,
    detail: &str,
    issues: Vec<ProblemIssue>,
    spending: &Spending,
) -> RunEnding {
    let mut problem = Problem::new(
        Reason::Unavailable,
        title(run, "got an answer that does not match its schema"),
        format!("{detail}: try again"),
    )
    .with_issues(issues);
    problem.because = Some(FailureBecause::OutputInvalid.as_str().into());
    let mut ending = rejection(problem, &run.run_id);
    ending.record = spending.record(true);
    ending
}

/// What a finished run holds: its document and settings, its prompt, its calls and spending.
pub(crate) struct Finished<'a> {
    pub run: &'a Run,
    pub document: &'a ReasoningDocument,
    pub settings: &'a Settings,
    pub prompt: &'a Prompt,
    pub calls: &'a [ModelCall],
    pub spending: &'a Spending,
}

/// Steps 4 and 5: the answer checked, the output and the record.
pub(crate) fn finish(finished: &Finished<'_>, answer: &ModelAnswer) -> RunEnding {
    let Finished {
        run,
        document,
        settings,
        prompt,
        calls,
        spending,
    } = finished;
    let output = match answer_output(document, answer) {
        Ok(output) => output,
        Err((detail, issues)) => return output_invalid(run, &detail, issues, spending),
    };
    let output_bytes = json_bytes(&output).unwrap_or(usize::MAX);
    let requested = calls
        .last()
        .map(|c| c.started.model.clone())
        .unwrap_or_else(|| document.model.clone());
    let mut warnings = answer.warnings.clone();
    warnings.truncate(RECORD_WARNINGS_MAX);
    let mut record = json!({
        "model": {
            "requested": requested,
            "resolved": answer.resolved_model,
            "answered": answer.answered_model,
        },
        "settings": settings_record(settings),
        "output_format": document.output_format,
        "finish_reason": answer.finish_reason.as_str(),
        "raw_finish_reason": answer.raw_finish_reason,
        "usage": spending.usage.clone().map_or(Value::Null, Value::Object),
        "response_id": answer.response_id,
        "warnings": warnings,
        "duration_ms": spending.duration_ms,
        "prompt": {
            "instructions": prompt.system,
            "message": prompt.message,
            "truncated": false,
        },
    });
    if let Some(cost) = spending.cost_usd {
        record["cost_usd"] = json!(cost);
    }
    let record_bytes = json_bytes(&record).unwrap_or(usize::MAX);
    if output_bytes.saturating_add(record_bytes) > OUTPUT_AND_RECORD_BYTES_MAX {
        let without_prompt = record_bytes - json_bytes(&record["prompt"]).unwrap_or(0);
        // The room left for the prompt, less the keys and quotes around it.
        let room = OUTPUT_AND_RECORD_BYTES_MAX
            .saturating_sub(output_bytes)
            .saturating_sub(without_prompt)
            .saturating_sub(128);
        if output_bytes > OUTPUT_BYTES_MAX || room == 0 {
            let problem = Problem::conflict(
                title(run, "got an answer too large to record"),
                format!(
                    "The answer holds {output_bytes} bytes as JSON; with the run's record a run keeps at most 1 MiB: lower config.max_output_tokens."
                ),
            )
            .with_kind("unworkable");
            let mut ending = rejection(problem, &run.run_id);
            ending.record = spending.record(true);
            return ending;
        }
        record["prompt"] = truncated_prompt(prompt, room);
    }
    RunEnding {
        status: RunStatus::Succeeded,
        output: Some(output),
        record: Some(record),
        problem: None,
    }
}

/// The start of the instructions and of the message within `room` bytes of JSON, each cut at
/// a character boundary, with `truncated: true`.
fn truncated_prompt(prompt: &Prompt, room: usize) -> Value {
    let system = prompt.system.as_deref().unwrap_or_default();
    let total = system.len() + prompt.message.len();
    // JSON escapes may grow a text up to six times; leave room for the worst.
    let budget = room / 6;
    let share = |text: &str| -> String {
        let keep = (budget * text.len()).checked_div(total).unwrap_or(0);
        let mut end = keep.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text[..end].to_owned()
    };
    json!({
        "instructions": prompt.system.as_ref().map(|s| share(s)),
        "message": share(&prompt.message),
        "truncated": true,
    })
}

/// The run's output from the model's answer, or why the answer cannot be used and its issues.
pub(crate) fn answer_output(
    document: &ReasoningDocument,
    answer: &ModelAnswer,
) -> Result<Value, (String, Vec<ProblemIssue>)> {
    if document.output_format != "json" {
        return Ok(Value::String(answer.text.clone()));
    }
    let value = parse_json_answer(&answer.text)
        .map_err(|words| (words.clone(), vec![ProblemIssue::field("/output", words)]))?;
    let issues: Vec<ValidationIssue> = match (&document.output_shape, &document.built.output_schema)
    {
        (Some(shape), _) => check_shape(shape, &value),
        (None, Some(Ok(compiled))) => compiled.validate(&value),
        (None, Some(Err(error))) => {
            return Err((
                format!("The output schema cannot be used: {error}"),
                Vec::new(),
            ));
        }
        (None, None) => Vec::new(),
    };
    if issues.is_empty() {
        return Ok(auto_schema::shape_output(
            document.output_shape.as_deref(),
            value,
        ));
    }
    let messages = render_answer_issues(&issues);
    let found = issues
        .iter()
        .map(|issue| (format!("/output{}", issue.pointer), issue.answer_message()))
        .collect();
    let problem_issues = auto_schema::shown_issues(found, "/output")
        .into_iter()
        .map(|(pointer, message)| ProblemIssue::field(pointer, message))
        .collect();
    Err((
        format!(
            "The model's answer does not match the output schema ({})",
            messages.join("; ")
        ),
        problem_issues,
    ))
}

/// The ending of a run that cannot finish: before any tool was called, plain `unavailable`;
/// after, `tools_unfinished` (503) when every tool called only reads, `effect_unknown` (409)
/// otherwise, naming the tools in words and keeping `because`.
pub(crate) fn cannot_finish(
    run: &Run,
    ledger: &Ledger,
    because: &str,
    detail: &str,
    record: Option<Value>,
) -> RunEnding {
    let mut problem = if ledger.called.is_empty() {
        Problem::new(
            Reason::Unavailable,
            title(run, "could not finish"),
            format!("{detail} Try again later."),
        )
    } else if ledger.only_read() {
        Problem::new(
            Reason::Unavailable,
            title(run, "could not finish after calling tools"),
            format!(
                "{detail} The run called {}, which only read, so nothing was changed; a new run may do the work again.",
                called_words(&ledger.called)
            ),
        )
        .with_kind("tools_unfinished")
    } else {
        Problem::conflict(
            title(run, "could not finish after calling tools"),
            format!(
                "{detail} The run called {}; a tool its server does not mark read-only may already have changed something outside the playbook, so check before running the work again.",
                called_words(&ledger.called)
            ),
        )
        .with_kind("effect_unknown")
    };
    problem.because = Some(because.to_owned());
    let mut ending = rejection(problem, &run.run_id);
    ending.record = record;
    ending
}

/// A run that restarted while it called a tool its server does not mark read-only: that call
/// may have changed something, so it is not made again.
pub(crate) fn call_outcome_unknown(run: &Run, ledger: &Ledger, record: Option<Value>) -> RunEnding {
    let mut problem = Problem::conflict(
        title(run, "could not finish after calling tools"),
        format!(
            "The server restarted while the run called a tool its server does not mark read-only; the run called {}, and that call may already have changed something outside the playbook, so check before running the work again.",
            called_words(&ledger.called)
        ),
    )
    .with_kind("effect_unknown");
    problem.because = Some("call_outcome_unknown".into());
    let mut ending = rejection(problem, &run.run_id);
    ending.record = record;
    ending
}

/// The `because` a model failure keeps once tools were called: the page's `model_unavailable`
/// for a model that did not answer in time or could not serve.
pub(crate) fn model_because(because: FailureBecause) -> Option<&'static str> {
    match because {
        FailureBecause::TimedOut
        | FailureBecause::ProviderUnavailable
        | FailureBecause::RateLimited
        | FailureBecause::Interrupted => Some("model_unavailable"),
        _ => None,
    }
}

/// A rejection of a run that called tools becomes `tools_unfinished` or `effect_unknown`,
/// keeping its `because` (or the one given); a run that called none keeps its rejection, and
/// so does a request too long, which the page ends as `conflict`, kind `unworkable`.
pub(crate) fn after_tools(
    run: &Run,
    ledger: &Ledger,
    ending: RunEnding,
    because: Option<&str>,
) -> RunEnding {
    if ledger.called.is_empty() {
        return ending;
    }
    let problem = ending.problem.clone().unwrap_or(Value::Null);
    if problem["kind"] == "unworkable" || problem["reason"] == "cancelled" {
        return ending;
    }
    let because = because
        .map(str::to_owned)
        .or_else(|| problem["because"].as_str().map(str::to_owned))
        .unwrap_or_else(|| "failed".to_owned());
    let detail = problem["detail"].as_str().unwrap_or_default();
    cannot_finish(run, ledger, &because, detail, ending.record)
}

/// "Its detail names the signal, how many bytes the tools returned, and the input tokens the
/// provider counted for the last step."
pub(crate) fn too_long_detail(ending: &mut RunEnding, ledger: &Ledger, calls: &[ModelCall]) {
    let Some(problem) = ending.problem.as_mut() else {
        return;
    };
    let tokens = calls
        .iter()
        .rev()
        .find_map(|c| match &c.ended {
            Some(ModelEnding::Answered(data)) => Some(data.usage.as_ref()),
            _ => None,
        })
        .map(|usage| {
            INPUT_FIELDS
                .iter()
                .filter_map(|field| usage.and_then(|u| u.get(*field)).and_then(Value::as_u64))
                .sum::<u64>()
        });
    let mut detail = problem["detail"]
        .as_str()
        .unwrap_or_default()
        .trim_end()
        .to_owned();
    if !detail.ends_with('.') {
        detail.push('.');
    }
    let counted = match tokens {
        Some(tokens) => format!("the provider counted {tokens} input tokens for the last step"),
        None => "the provider counted no input tokens for the last step".to_owned(),
    };
    problem["detail"] = json!(format!(
        "{detail} The tools returned {} bytes; {counted}; ask a tool for fewer rows, fields or depth.",
        ledger.result_bytes
    ));
}
