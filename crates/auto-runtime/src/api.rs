//! The bodies the operations take and give: the stable surface of HTTP, MCP and the CLI.
//!
//! Each type derives `JsonSchema`, and the OpenAPI description (and later the MCP tool
//! schemas) are generated from these same types, so the documents cannot drift from the code.

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::problem::ProblemIssue;

/// `POST /v1/orgs`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateOrg {
    /// `^[a-z0-9][a-z0-9-]{0,62}$`
    pub id: String,
    /// 1 to 200 characters.
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct OrgOut {
    pub id: String,
    pub title: Option<String>,
    pub created_at: DateTime<Utc>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct OrgList {
    pub orgs: Vec<OrgOut>,
}

/// `POST /v1/orgs/{org}/playbooks`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreatePlaybook {
    /// `^[a-z0-9][a-z0-9-]{0,62}$`
    pub id: String,
    /// 1 to 200 characters.
    #[serde(default)]
    pub title: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct PlaybookOut {
    pub org: String,
    pub id: String,
    pub title: Option<String>,
    pub created_at: DateTime<Utc>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct PlaybookList {
    pub playbooks: Vec<PlaybookOut>,
}

/// One model `list_models` offers.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ModelOut {
    /// The reference a reasoning function writes as `model`, such as
    /// `anthropic/claude-sonnet-4-5`.
    pub id: String,
    pub provider: String,
    /// The most tokens a call's input and output may hold together, from the model catalog.
    pub context_window: Option<u64>,
    /// The most output tokens the model writes, from the model catalog.
    pub max_output_tokens: Option<u64>,
    /// For an alias: the model it resolves to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub alias_of: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ModelList {
    pub models: Vec<ModelOut>,
    /// The operator's allowed patterns, such as `my-gateway/*`, which also admit models the
    /// catalog does not list; null when every model of a configured provider is allowed.
    pub allowed: Option<Vec<String>>,
    /// The configured providers and gateways.
    pub providers: Vec<String>,
}

/// `create_definition`: saves version 1 of a new definition.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateDefinition {
    /// reasoning, workflow, interaction, computation, recall or prediction.
    #[serde(rename = "type")]
    pub def_type: String,
    /// `^[a-z][a-z0-9-]{0,63}$`
    pub name: String,
    /// The document: Markdown with YAML front matter, or a workflow's YAML.
    pub source: String,
    /// Markdown for the person who runs the business: 1 character to 16,384 bytes.
    #[serde(default)]
    pub overview: Option<String>,
    /// Mermaid whose first line starts with flowchart, graph or stateDiagram, at most 8,192
    /// bytes, or the word none. Required on every save.
    pub diagram: String,
}

/// `update_definition`: saves the next version; an update that changes nothing makes none.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateDefinition {
    pub source: String,
    /// Left out: the overview saved before is kept.
    #[serde(default)]
    pub overview: Option<String>,
    pub diagram: String,
}

/// A trigger of a workflow, as `get_definition` shows it.
pub type TriggerOut = Value;

/// A definition as `get_definition` returns it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct DefinitionOut {
    #[serde(rename = "type")]
    pub def_type: String,
    pub name: String,
    pub version: i64,
    /// active or retired.
    pub status: String,
    pub description: Option<String>,
    pub source: String,
    /// Left out by `list_definitions`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overview: Option<String>,
    pub diagram: String,
    pub warnings: Vec<String>,
    pub input_schema: Option<Value>,
    pub output_schema: Option<Value>,
    pub triggers: Vec<TriggerOut>,
    /// For an active workflow with triggers: the id of the event that saved its current version.
    pub triggers_since: Option<String>,
    /// The active definitions of the playbook that use this one, as `type/name`.
    pub used_by: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// `check_definition`: what a save of the body would say; nothing is saved.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct DefinitionCheck {
    /// Whether a save would be taken.
    pub valid: bool,
    /// What a save would be refused for, as in its problem document: fields and the document's
    /// issues, each with its line where it has one.
    pub issues: Vec<ProblemIssue>,
    /// The warnings the definition would be saved with.
    pub warnings: Vec<String>,
    pub input_schema: Option<Value>,
    pub output_schema: Option<Value>,
    /// A workflow's generated overview, with its diagram.
    pub overview: Option<String>,
}

/// `list_definition_versions`: every saved version, oldest first.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct DefinitionVersions {
    pub versions: Vec<DefinitionOut>,
}

/// `get_caller`: who the request's key is, and what it may do.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct CallerOut {
    /// The caller id: the key's, or `local` on a server without keys.
    pub caller: String,
    /// admin, editor (definitions), runner (runs and events) or viewer (reads).
    pub role: String,
    /// The one org the key reaches; null for every org.
    pub org: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct DefinitionList {
    pub definitions: Vec<DefinitionOut>,
}

/// A CloudEvents 1.0 event in JSON, as `publish_event` takes it: `type` is required, `id`
/// (a new one when left out), `source` (`/callers/<caller>` when left out), `subject`, `time`,
/// `datacontenttype`, `data` and extension attributes are optional.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct EventIn(pub Map<String, Value>);

/// An event as the playbook recorded it: the CloudEvents attributes, with `seq` (its order in
/// the playbook), `run_id` where it belongs to a run, and in a listing `data_bytes` instead of
/// `data` when the data is larger than 2 KiB.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct EventOut(pub Map<String, Value>);

/// What `send_run_event` answers (202): the run, the event's id (a new one when the event had
/// none), and whether the run had received an event of that id before, in which case this one
/// was ignored.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct RunEventOut {
    pub run_id: String,
    pub id: String,
    pub duplicate: bool,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct EventList {
    pub events: Vec<EventOut>,
    /// Pass as `after` for the next page; null when this page is the last.
    pub next: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct Health {
    pub status: String,
    pub store: String,
    pub version: String,
}

/// `run_definition`: runs the latest active version of a definition.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunDefinition {
    /// The input object; `{}` when left out.
    // Published as a JSON object, the only input a run takes, so that a client that builds
    // arguments from the schema (the MCP Inspector turns text into JSON only for an object or
    // array) sends an object; any other value is still decoded here and refused by the run
    // with the field's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Map<String, Value>")]
    pub input: Option<Value>,
    /// Your id for the run, 1 to 128 of `[A-Za-z0-9._:-]`, to read it later or retry it; a new
    /// UUIDv7 when left out.
    #[serde(default)]
    pub run_id: Option<String>,
}

/// A run, as `get_run` returns it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct RunOut {
    pub run_id: String,
    #[serde(rename = "type")]
    pub def_type: String,
    pub name: String,
    pub definition_version: i64,
    /// started, succeeded, rejected or failed.
    pub status: String,
    /// Left out by `list_runs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Value>,
    pub record: Option<Value>,
    /// The problem document of a rejected or failed run.
    pub problem: Option<Value>,
    pub started_by: String,
    pub started_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct RunList {
    pub runs: Vec<RunOut>,
    /// Pass as `after` for the next page; null when this page is the last.
    pub next: Option<String>,
}

/// `cancel_run`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CancelRun {
    /// Why, in the words of whoever cancels it.
    #[serde(default)]
    pub detail: Option<String>,
}

/// The definition a request belongs to.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct RequestDefinition {
    #[serde(rename = "type")]
    pub def_type: String,
    pub name: String,
    pub version: i64,
}

/// A request of the inbox: what an interaction function's run asks a person.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct RequestOut {
    pub request_id: String,
    /// The interaction's run, which ends with the answer.
    pub run_id: String,
    pub definition: RequestDefinition,
    /// Who is asked: the definition's `to`, rendered with the run's input.
    pub to: String,
    /// The request, Markdown: the definition's body rendered with the run's input.
    pub message: String,
    /// The run's input.
    pub input: Value,
    /// The JSON Schema the answer must match; null when any JSON value answers.
    pub output_schema: Option<Value>,
    /// open, answered, expired, undelivered or cancelled.
    pub status: String,
    pub created_at: DateTime<Utc>,
    /// When an open request expires and its run ends unanswered.
    pub expires_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<Value>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct RequestList {
    pub requests: Vec<RequestOut>,
    /// Pass as `after` for the next page; null when this page is the last.
    pub next: Option<String>,
}

/// `answer_interaction`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerInteraction {
    /// The answer: a JSON value matching the request's output_schema.
    pub answer: Value,
}

/// `POST /v1/orgs/{org}/playbooks/{pb}/purge`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PurgeRuns {
    /// RFC 3339, such as `2025-01-31T00:00:00Z`, not in the future: the runs that ended before
    /// it are removed with their events.
    pub ended_before: String,
}

/// What a purge removed.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct PurgeOut {
    pub ended_before: DateTime<Utc>,
    /// Runs removed.
    pub runs: i64,
    /// Events of those runs removed: their `seq`s are holes in the log, never given again.
    pub events: i64,
}

/// What deleting a playbook or an org removed.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct DeletedOut {
    pub playbooks: i64,
    pub definitions: i64,
    /// Every run, ended or not.
    pub runs: i64,
    /// The runs among them that were still started (a delete with `force`).
    pub started_runs: i64,
    /// Every event of the logs.
    pub events: i64,
}
