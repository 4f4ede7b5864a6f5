//! What a reasoning run writes: the data of its events (reasoning page, "What a run records",
//! "The run's model calls"), the prompt as the run keeps it, the settings as the record shows
//! them and the spending summed over its calls. The shapes here are the stable surface the
//! server's tests read back byte for byte; `history.rs` reads them.

use auto_engine::reasoning::ReasoningDocument;
use auto_models::{
    FailureBecause, FinishReason, Message, ModelAnswer, ModelFailure, OutputContract,
    ReasoningEffort, Settings,
};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::history::{ModelCall, ModelCallEnded};
use crate::problem::ProblemIssue;

/// The rendered prompt: the system instructions and the one user message.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Prompt {
    pub(crate) system: Option<String>,
    pub(crate) message: String,
}

impl Prompt {
    /// The messages the first call adds, as the run keeps them.
    pub(crate) fn kept(&self) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = &self.system {
            messages.push(json!({ "role": "system", "content": system }));
        }
        messages.push(json!({ "role": "user", "content": self.message }));
        Value::Array(messages)
    }

    /// The prompt the first call kept, when it kept one.
    pub(crate) fn from_kept(messages: Option<&Value>) -> Option<Prompt> {
        let mut prompt = Prompt {
            system: None,
            message: String::new(),
        };
        let mut user = false;
        for message in messages?.as_array()? {
            let content = message["content"].as_str()?.to_owned();
            match message["role"].as_str()? {
                "system" => prompt.system = Some(content),
                "user" => {
                    prompt.message = content;
                    user = true;
                }
                _ => return None,
            }
        }
        user.then_some(prompt)
    }
}

/// Spending over the model calls that ended: usage, time and cost.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Spending {
    pub(crate) usage: Option<Map<String, Value>>,
    pub(crate) duration_ms: u64,
    pub(crate) cost_usd: Option<f64>,
}

/// The counts of usage, in the order the record shows them.
const USAGE_FIELDS: [&str; 6] = [
    "input_uncached",
    "cache_read",
    "cache_write",
    "output_text",
    "output_reasoning",
    "total",
];

/// The counts of usage that are input.
pub(crate) const INPUT_FIELDS: [&str; 3] = ["input_uncached", "cache_read", "cache_write"];

impl Spending {
    pub(crate) fn add(&mut self, ended: &ModelCallEnded) {
        self.duration_ms += ended.duration_ms;
        if let Some(cost) = ended.cost_usd {
            *self.cost_usd.get_or_insert(0.0) += cost;
        }
        if let Some(usage) = &ended.usage {
            let sum = self.usage.get_or_insert_with(|| {
                USAGE_FIELDS
                    .iter()
                    .map(|f| ((*f).to_owned(), json!(0)))
                    .collect()
            });
            for field in USAGE_FIELDS {
                // A count the provider did not report is null, and stays null in the sum.
                let added = match (sum.get(field).and_then(Value::as_u64), usage.get(field)) {
                    (Some(a), Some(Value::Number(b))) => b.as_u64().map(|b| json!(a + b)),
                    _ => None,
                };
                sum.insert(field.to_owned(), added.unwrap_or(Value::Null));
            }
        }
    }

    pub(crate) fn of(calls: &[ModelCall]) -> Spending {
        let mut spending = Spending::default();
        for ended in calls.iter().filter_map(|c| c.ended.as_ref()) {
            spending.add(ended.data());
        }
        spending
    }

    /// The input tokens the run's calls used.
    pub(crate) fn input_tokens(&self) -> u64 {
        self.usage.as_ref().map_or(0, |usage| {
            INPUT_FIELDS
                .iter()
                .filter_map(|f| usage.get(*f).and_then(Value::as_u64))
                .sum()
        })
    }

    /// The record a rejected run keeps: only usage, duration_ms and cost_usd; none before any
    /// model call ended.
    pub(crate) fn record(&self, calls_ended: bool) -> Option<Value> {
        if !calls_ended {
            return None;
        }
        let mut record = json!({
            "usage": self.usage.clone().map_or(Value::Null, Value::Object),
            "duration_ms": self.duration_ms,
        });
        if let Some(cost) = self.cost_usd {
            record["cost_usd"] = json!(cost);
        }
        Some(record)
    }
}

pub(crate) fn max_output_tokens(document: &ReasoningDocument) -> u32 {
    u32::try_from(document.config.max_output_tokens).unwrap_or(u32::MAX)
}

pub(crate) fn settings_of(document: &ReasoningDocument) -> Settings {
    let config = &document.config;
    Settings {
        max_output_tokens: max_output_tokens(document),
        temperature: config.temperature,
        top_p: config.top_p,
        seed: config.seed,
        stop_sequences: config.stop_sequences.clone(),
        reasoning: config
            .reasoning
            .as_deref()
            .and_then(|r| serde_json::from_value::<ReasoningEffort>(json!(r)).ok()),
    }
}

/// The settings as the record shows them: those sent, the default max_output_tokens filled.
pub(crate) fn settings_record(settings: &Settings) -> Value {
    let mut record = json!({ "max_output_tokens": settings.max_output_tokens });
    if let Some(t) = settings.temperature {
        record["temperature"] = json!(t);
    }
    if let Some(p) = settings.top_p {
        record["top_p"] = json!(p);
    }
    if let Some(seed) = settings.seed {
        record["seed"] = json!(seed);
    }
    if !settings.stop_sequences.is_empty() {
        record["stop_sequences"] = json!(settings.stop_sequences);
    }
    if let Some(reasoning) = settings.reasoning {
        record["reasoning"] = json!(reasoning.as_str());
    }
    record
}

pub(crate) fn output_contract(document: &ReasoningDocument) -> OutputContract {
    match (&document.output_shape, &document.output_schema) {
        (Some(shape), _) => OutputContract::Json {
            schema: auto_schema::shape_schema(shape).unwrap_or(Value::Null),
        },
        (None, Some(schema)) => OutputContract::Json {
            schema: schema.clone(),
        },
        (None, None) => OutputContract::Text,
    }
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The size of a value as JSON, and its SHA-256 when asked, written through without a copy of
/// the text: a tool's result may be megabytes.
pub(crate) fn json_size_and_sha256(value: &Value, hash: bool) -> (usize, Option<String>) {
    struct Through {
        bytes: usize,
        hasher: Option<Sha256>,
    }
    impl std::io::Write for Through {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.bytes += buf.len();
            if let Some(hasher) = &mut self.hasher {
                hasher.update(buf);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut through = Through {
        bytes: 0,
        hasher: hash.then(Sha256::new),
    };
    // Writing JSON into memory does not fail.
    let _ = serde_json::to_writer(&mut through, value);
    let digest = through.hasher.map(|hasher| hex::encode(hasher.finalize()));
    (through.bytes, digest)
}

/// `model_call_started`: the call's number and model, the tools offered, and the messages it
/// adds (their size always; their digest and text when `messages` is given).
pub(crate) fn started_data(
    number: u64,
    model: &str,
    tools_offered: &[String],
    added: &Value,
    messages: Option<Value>,
) -> Value {
    let added_bytes = serde_json::to_vec(added).unwrap_or_default();
    let mut started = json!({
        "number": number,
        "model": model,
        "tools_offered": tools_offered,
        "messages_bytes": added_bytes.len(),
    });
    if let Some(messages) = messages {
        started["messages_sha256"] = json!(sha256_hex(&added_bytes));
        started["messages"] = messages;
    }
    started
}

pub(crate) fn answered_data(number: u64, answer: &ModelAnswer) -> Value {
    let response = json!({ "text": answer.text });
    let response_bytes = serde_json::to_vec(&response).unwrap_or_default();
    let mut data = json!({
        "number": number,
        "finish_reason": answer.finish_reason.as_str(),
        "raw_finish_reason": answer.raw_finish_reason,
        "usage": answer.usage,
        "response_id": answer.response_id,
        "duration_ms": answer.duration_ms,
        "request_bytes": answer.request_bytes,
        "response_bytes": answer.response_bytes,
        "resolved_model": answer.resolved_model,
        "answered_model": answer.answered_model,
        "warnings": answer.warnings,
        "tool_calls": [],
        "response_sha256": sha256_hex(&response_bytes),
        "response": response,
    });
    if let Some(cost) = answer.cost_usd {
        data["cost_usd"] = json!(cost);
    }
    data
}

pub(crate) fn failed_data(number: u64, failure: &ModelFailure) -> Value {
    let mut data = json!({
        "number": number,
        "because": failure.because.as_str(),
        "provider": failure.provider,
        "detail": failure.detail,
        "duration_ms": failure.duration_ms,
    });
    if let Some(status) = failure.status {
        data["status"] = json!(status);
    }
    if let Some(usage) = &failure.usage {
        data["usage"] = json!(usage);
    }
    if let Some(cost) = failure.cost_usd {
        data["cost_usd"] = json!(cost);
    }
    if let Some(finish) = failure.finish_reason {
        data["finish_reason"] = json!(finish.as_str());
        data["raw_finish_reason"] = json!(failure.raw_finish_reason);
    }
    if let Some(ms) = failure.retry_after_ms {
        data["retry_after_ms"] = json!(ms);
    }
    if failure.other_providers_configured {
        data["other_providers_configured"] = json!(true);
    }
    if failure.certificate_untrusted {
        data["certificate_untrusted"] = json!(true);
    }
    data
}

/// `model_call_failed` for a call its server stopped during: "interrupted".
pub(crate) fn interrupted_model_call(number: u64, model: &str) -> Value {
    let provider = model.split('/').next().unwrap_or("");
    json!({
        "number": number,
        "because": FailureBecause::Interrupted.as_str(),
        "provider": provider,
        "detail": "the server stopped before the call ended",
        "duration_ms": 0,
    })
}

/// `tool_call_failed` for a call its server stopped during: "interrupted".
pub(crate) fn interrupted_tool_call(number: u64) -> Value {
    json!({
        "number": number,
        "because": "interrupted",
        "message": "the server stopped before the call answered",
        "duration_ms": 0,
    })
}

/// `model_call_failed` for an answer the run cannot use because it does not match its
/// schema: the call's spending, the answer as kept, and the issues.
pub(crate) fn unusable_answer_data(
    number: u64,
    answer: &ModelAnswer,
    provider: &str,
    detail: &str,
    issues: &[ProblemIssue],
) -> Value {
    let answered = answered_data(number, answer);
    let mut data = json!({
        "number": number,
        "because": FailureBecause::OutputInvalid.as_str(),
        "provider": provider,
        "detail": detail,
        "duration_ms": answer.duration_ms,
        "usage": answer.usage,
        "finish_reason": answer.finish_reason.as_str(),
        "raw_finish_reason": answer.raw_finish_reason,
        "response_id": answer.response_id,
        "resolved_model": answer.resolved_model,
        "answered_model": answer.answered_model,
        "issues": issues,
        "response_sha256": answered["response_sha256"],
        "response": answered["response"],
    });
    if let Some(cost) = answer.cost_usd {
        data["cost_usd"] = json!(cost);
    }
    data
}

/// Removes the content a run does not keep (a server of the run has `record_content: false`).
pub(crate) fn strip_content(data: &mut Value, keys: &[&str]) {
    if let Some(map) = data.as_object_mut() {
        for key in keys {
            map.remove(*key);
        }
    }
}

/// A message of the conversation as the run keeps it.
pub(crate) fn message_kept(message: &Message) -> Value {
    match message {
        Message::ToolResult {
            call_id,
            name,
            content,
            is_error,
        } => {
            json!({"role": "tool", "call_id": call_id, "name": name, "content": content, "is_error": is_error})
        }
        Message::User(text) => json!({"role": "user", "content": text}),
        Message::Assistant(text) => json!({"role": "assistant", "content": text}),
        Message::AssistantToolCalls { text, calls } => {
            json!({"role": "assistant", "content": text, "tool_calls": calls})
        }
    }
}

/// A failed call as its event kept it, for a run that goes on after the server stopped.
pub(crate) fn failure_from_kept(data: &ModelCallEnded) -> ModelFailure {
    ModelFailure {
        because: data.because.unwrap_or(FailureBecause::ProviderUnavailable),
        provider: data.provider.clone(),
        status: data.status,
        detail: data.detail.clone(),
        retry_after_ms: data.retry_after_ms,
        usage: None,
        finish_reason: data.finish_reason,
        raw_finish_reason: data.raw_finish_reason.clone(),
        other_providers_configured: data.other_providers_configured,
        cost_usd: data.cost_usd,
        duration_ms: data.duration_ms,
        certificate_untrusted: data.certificate_untrusted,
    }
}

/// An answered call as its event kept it.
pub(crate) fn answer_from_kept(data: &ModelCallEnded) -> ModelAnswer {
    ModelAnswer {
        text: data
            .response
            .as_ref()
            .and_then(|r| r.text.clone())
            .unwrap_or_default(),
        tool_calls: Vec::new(),
        finish_reason: data.finish_reason.unwrap_or(FinishReason::Other),
        raw_finish_reason: data.raw_finish_reason.clone(),
        usage: auto_models::Usage::default(),
        response_id: data.response_id.clone(),
        resolved_model: data.resolved_model.clone().unwrap_or_default(),
        answered_model: data.answered_model.clone(),
        warnings: data.warnings.clone(),
        cost_usd: data.cost_usd,
        request_bytes: data.request_bytes,
        response_bytes: data.response_bytes,
        duration_ms: data.duration_ms,
    }
}

/// Whether a failed call reached the provider: a model outside the allowed ones, a provider
/// not configured and an option the gateway does not allow are refused before anything is
/// sent, and spend nothing.
pub(crate) fn was_sent(failure: &ModelFailure) -> bool {
    match failure.because {
        FailureBecause::ModelNotAllowed | FailureBecause::ProviderNotConfigured => false,
        FailureBecause::ProviderUnavailable if failure.certificate_untrusted => false,
        FailureBecause::DefinitionInvalid => failure.status.is_some(),
        _ => true,
    }
}
