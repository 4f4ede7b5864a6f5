//! `GET /v1/openapi.json`: the OpenAPI 3.1 description, generated from the operation table and
//! the body types' JSON Schemas (schemars), the same types the handlers decode and encode.
//!
//! The table is written here rather than derived from handler attributes (utoipa) because the
//! same table also names each operation's MCP tool, its read-only hint and its description for
//! a model; one table serves HTTP, MCP and the CLI, and schemars is what the MCP SDK takes.

use schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};

use crate::api::*;
use crate::problem::Problem;

type SchemaFn = fn(&mut SchemaGenerator) -> schemars::Schema;

fn schema<T: JsonSchema>(generator: &mut SchemaGenerator) -> schemars::Schema {
    generator.subschema_for::<T>()
}

/// One operation of the API.
pub struct Operation {
    /// The operation's name, also its MCP tool name where it has one.
    pub name: &'static str,
    pub method: &'static str,
    pub path: &'static str,
    pub summary: &'static str,
    pub read_only: bool,
    pub request: Option<SchemaFn>,
    pub response: SchemaFn,
    pub success: u16,
    /// Query parameters, each `(name, description)`.
    pub query: &'static [(&'static str, &'static str)],
    /// A body field set to `true` on every request: an MCP tool that is another operation's
    /// request with a flag (`dry_run` is `execute` with `dry_run: true`). Such an entry adds
    /// no path to the OpenAPI document, whose operation is the one it names.
    pub flag: Option<&'static str>,
}

const PB: &str = "/v1/orgs/{org}/playbooks/{pb}";

macro_rules! pb_path {
    ($rest:literal) => {
        concat!("/v1/orgs/{org}/playbooks/{pb}", $rest)
    };
}

/// Every operation the server has.
pub const OPERATIONS: &[Operation] = &[
    Operation {
        name: "get_caller",
        method: "get",
        path: "/v1/me",
        summary: "Who the request's key is: its caller id, its role and the org it reaches (null for every org).",
        read_only: true,
        request: None,
        response: schema::<CallerOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "create_org",
        method: "post",
        path: "/v1/orgs",
        summary: "Create an org.",
        read_only: false,
        request: Some(schema::<CreateOrg>),
        response: schema::<OrgOut>,
        success: 201,
        query: &[],
        flag: None,
    },
    Operation {
        name: "list_orgs",
        method: "get",
        path: "/v1/orgs",
        summary: "List the orgs the caller can reach.",
        read_only: true,
        request: None,
        response: schema::<OrgList>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "get_org",
        method: "get",
        path: "/v1/orgs/{org}",
        summary: "Read an org.",
        read_only: true,
        request: None,
        response: schema::<OrgOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "delete_org",
        method: "delete",
        path: "/v1/orgs/{org}",
        summary: "Delete an org and every playbook in it, as delete_playbook does (admins only). Refused while runs are started unless force is true.",
        read_only: false,
        request: None,
        response: schema::<DeletedOut>,
        success: 200,
        query: &[(
            "force",
            "true: delete even while runs are started, removing them as they are.",
        )],
        flag: None,
    },
    Operation {
        name: "create_playbook",
        method: "post",
        path: "/v1/orgs/{org}/playbooks",
        summary: "Create a playbook in an org.",
        read_only: false,
        request: Some(schema::<CreatePlaybook>),
        response: schema::<PlaybookOut>,
        success: 201,
        query: &[],
        flag: None,
    },
    Operation {
        name: "list_playbooks",
        method: "get",
        path: "/v1/orgs/{org}/playbooks",
        summary: "List an org's playbooks.",
        read_only: true,
        request: None,
        response: schema::<PlaybookList>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "list_models",
        method: "get",
        path: "/v1/orgs/{org}/models",
        summary: "List the models a reasoning function may name.",
        read_only: true,
        request: None,
        response: schema::<ModelList>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "get_playbook",
        method: "get",
        path: PB,
        summary: "Read a playbook.",
        read_only: true,
        request: None,
        response: schema::<PlaybookOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "delete_playbook",
        method: "delete",
        path: PB,
        summary: "Delete a playbook with its definitions, runs, events, requests, triggers and waiting work (admins only). Refused while runs are started unless force is true, which removes them as they are. The id may be created again, empty.",
        read_only: false,
        request: None,
        response: schema::<DeletedOut>,
        success: 200,
        query: &[(
            "force",
            "true: delete even while runs are started, removing them as they are.",
        )],
        flag: None,
    },
    Operation {
        name: "purge_runs",
        method: "post",
        path: pb_path!("/purge"),
        summary: "Remove the playbook's runs that ended before a past time, with their events (admins only). Runs that are still needed stay: started ones, children of started runs, and runs with events a recall view, event trigger or listening task has not read. Purged seqs are holes in the log, never reused.",
        read_only: false,
        request: Some(schema::<PurgeRuns>),
        response: schema::<PurgeOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "create_definition",
        method: "post",
        path: pb_path!("/definitions"),
        summary: "Check a definition's document and save it as version 1.",
        read_only: false,
        request: Some(schema::<CreateDefinition>),
        response: schema::<DefinitionOut>,
        success: 201,
        query: &[],
        flag: None,
    },
    Operation {
        name: "list_definitions",
        method: "get",
        path: pb_path!("/definitions"),
        summary: "List the playbook's definitions, without their overviews.",
        read_only: true,
        request: None,
        response: schema::<DefinitionList>,
        success: 200,
        query: &[("type", "Only definitions of this type.")],
        flag: None,
    },
    Operation {
        name: "get_definition",
        method: "get",
        path: pb_path!("/definitions/{type}/{name}"),
        summary: "Read a definition's latest version, or the version asked for, with its overview.",
        read_only: true,
        request: None,
        response: schema::<DefinitionOut>,
        success: 200,
        query: &[(
            "version",
            "This saved version (from 1) instead of the latest.",
        )],
        flag: None,
    },
    Operation {
        name: "list_definition_versions",
        method: "get",
        path: pb_path!("/definitions/{type}/{name}/versions"),
        summary: "List every saved version of a definition, oldest first, each with its document and overview.",
        read_only: true,
        request: None,
        response: schema::<DefinitionVersions>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "check_definition",
        method: "post",
        path: pb_path!("/definitions/check"),
        summary: "Check a definition as create_definition would and save nothing: its issues by line, or the warnings and schemas it would be saved with.",
        read_only: true,
        request: Some(schema::<CreateDefinition>),
        response: schema::<DefinitionCheck>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "update_definition",
        method: "put",
        path: pb_path!("/definitions/{type}/{name}"),
        summary: "Check a changed document and save it as the next version; an update that changes nothing makes none.",
        read_only: false,
        request: Some(schema::<UpdateDefinition>),
        response: schema::<DefinitionOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "retire_definition",
        method: "delete",
        path: pb_path!("/definitions/{type}/{name}"),
        summary: "Retire a definition: it runs no more and takes no updates; its versions stay.",
        read_only: false,
        request: None,
        response: schema::<DefinitionOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "run_definition",
        method: "post",
        path: pb_path!("/definitions/{type}/{name}/runs"),
        summary: "Run the latest active version of a definition: 200 with a run that ended, 202 with a run still going, or its rejection.",
        read_only: false,
        request: Some(schema::<RunDefinition>),
        response: schema::<RunOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "get_run",
        method: "get",
        path: pb_path!("/runs/{run_id}"),
        summary: "Read a run: its status, input, output, record and problem.",
        read_only: true,
        request: None,
        response: schema::<RunOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "list_runs",
        method: "get",
        path: pb_path!("/runs"),
        summary: "List the playbook's runs, newest first, without input and output.",
        read_only: true,
        request: None,
        response: schema::<RunList>,
        success: 200,
        query: &[
            ("type", "Only runs of definitions of this type."),
            ("name", "Only runs of definitions of this name."),
            ("status", "started, succeeded, rejected or failed."),
            (
                "reason",
                "Only runs whose problem has this reason: invalid_input, forbidden, not_found, \
                 conflict, unavailable, cancelled, unanswered or failed.",
            ),
            (
                "since",
                "Only runs started at or after this time (RFC 3339).",
            ),
            ("until", "Only runs started before this time (RFC 3339)."),
            ("after", "The next of the page before."),
            (
                "limit",
                "At most this many runs, 1 to 1,000; 50 by default.",
            ),
        ],
        flag: None,
    },
    Operation {
        name: "cancel_run",
        method: "post",
        path: pb_path!("/runs/{run_id}/cancel"),
        summary: "Cancel a run that has not ended.",
        read_only: false,
        request: Some(schema::<CancelRun>),
        response: schema::<RunOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "send_run_event",
        method: "post",
        path: pb_path!("/runs/{run_id}/events"),
        summary: "Send a CloudEvents event to a workflow run, kept until one of its listen tasks takes it: 202, also for an id the run received before.",
        read_only: false,
        request: Some(schema::<EventIn>),
        response: schema::<RunEventOut>,
        success: 202,
        query: &[],
        flag: None,
    },
    Operation {
        name: "list_requests",
        method: "get",
        path: pb_path!("/requests"),
        summary: "List the playbook's inbox: the requests interaction functions' runs left for people, newest first.",
        read_only: true,
        request: None,
        response: schema::<RequestList>,
        success: 200,
        query: &[
            (
                "status",
                "open, answered, expired, undelivered or cancelled.",
            ),
            ("after", "The next of the page before."),
            (
                "limit",
                "At most this many requests, 1 to 1,000; 50 by default.",
            ),
        ],
        flag: None,
    },
    Operation {
        name: "answer_interaction",
        method: "post",
        path: pb_path!("/requests/{request_id}/answer"),
        summary: "Answer an open request: an answer that matches its output_schema ends its run succeeded with the answer as output.",
        read_only: false,
        request: Some(schema::<AnswerInteraction>),
        response: schema::<RequestOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "publish_event",
        method: "post",
        path: pb_path!("/events"),
        summary: "Publish a CloudEvents event to the playbook.",
        read_only: false,
        request: Some(schema::<EventIn>),
        response: schema::<EventOut>,
        success: 201,
        query: &[],
        flag: None,
    },
    Operation {
        name: "list_playbook_events",
        method: "get",
        path: pb_path!("/events"),
        summary: "List the playbook's events in order, a page at a time.",
        read_only: true,
        request: None,
        response: schema::<EventList>,
        success: 200,
        query: &[
            ("run_id", "Only the events of this run."),
            ("type", "Only events of this type."),
            ("after", "The next of the page before."),
            (
                "limit",
                "At most this many events, 1 to 1,000; 100 by default.",
            ),
        ],
        flag: None,
    },
    Operation {
        name: "get_event",
        method: "get",
        path: pb_path!("/events/{event_id}"),
        summary: "Read one event in full.",
        read_only: true,
        request: None,
        response: schema::<EventOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "search",
        method: "get",
        path: pb_path!("/tool-servers/search"),
        summary: "List the tool servers set up for the playbook with the tools the operator allows on each, ranked by terms.",
        read_only: true,
        request: None,
        response: schema::<crate::tool_operations::ToolServerList>,
        success: 200,
        query: &[(
            "terms",
            "A few words describing what the function should do; the tools that match them come first.",
        )],
        flag: None,
    },
    Operation {
        name: "introspect",
        method: "get",
        path: pb_path!("/tool-servers/{server}/tools/{tool}"),
        summary: "Read one tool of a tool server in full, with the schema of its arguments.",
        read_only: true,
        request: None,
        response: schema::<crate::tool_operations::ToolDetail>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "execute",
        method: "post",
        path: pb_path!("/tool-servers/{server}/tools/{tool}/execute"),
        summary: "Call one tool once, as a run would, and return what the run's model would see; with dry_run, report what the call would check and call nothing.",
        read_only: false,
        request: Some(schema::<crate::tool_operations::ExecuteTool>),
        response: schema::<crate::tool_operations::ExecuteOut>,
        success: 200,
        query: &[],
        flag: None,
    },
    Operation {
        name: "dry_run",
        method: "post",
        path: pb_path!("/tool-servers/{server}/tools/{tool}/execute"),
        summary: "Report what calling one tool would check (configured, allowed, listed, the size of its arguments) and call nothing: execute with dry_run.",
        read_only: true,
        request: Some(schema::<crate::tool_operations::ExecuteTool>),
        response: schema::<crate::tool_operations::ExecuteOut>,
        success: 200,
        query: &[],
        flag: Some("dry_run"),
    },
];

/// Every operation's `default` response: a rejection, as a problem document.
fn problem_response() -> Value {
    json!({"description": "A rejection, as a problem document.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}})
}

fn path_parameters(path: &str) -> Vec<Value> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
        .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
        .collect()
}

fn operation_object(op: &Operation, generator: &mut SchemaGenerator) -> Value {
    let mut parameters = path_parameters(op.path);
    parameters.extend(op.query.iter().map(|(name, description)| {
        json!({"name": name, "in": "query", "required": false, "description": description, "schema": {"type": "string"}})
    }));
    let problem = problem_response();
    let mut object = json!({
        "operationId": op.name,
        "summary": op.summary,
        "parameters": parameters,
        "responses": {
            op.success.to_string(): {"description": "Success.", "content": {"application/json": {"schema": (op.response)(generator)}}},
            "default": problem,
        },
        "x-read-only": op.read_only,
    });
    if let Some(request) = op.request {
        object["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": request(generator)}}});
    }
    object
}

/// The events stream: HTTP only, as an MCP tool answers once.
pub const EVENTS_STREAM_PATH: &str = pb_path!("/events/stream");

fn events_stream(generator: &mut SchemaGenerator) -> Value {
    let mut parameters = path_parameters(EVENTS_STREAM_PATH);
    for (name, description) in [
        ("run_id", "Only the events of this run."),
        ("type", "Only events of this type."),
        (
            "after",
            "Only events after this seq, or end: only those recorded from now on; Last-Event-ID takes its place.",
        ),
    ] {
        parameters.push(json!({"name": name, "in": "query", "required": false, "description": description, "schema": {"type": "string"}}));
    }
    parameters.push(json!({"name": "Last-Event-ID", "in": "header", "required": false, "description": "The id (seq) of the last event read, to resume after it.", "schema": {"type": "string"}}));
    let event = generator.subschema_for::<EventOut>();
    json!({"get": {
        "operationId": "stream_playbook_events",
        "summary": "Follow the playbook's log as server-sent events: each message's id is the event's seq, its event the event's type, its data the event as list_playbook_events shows it; resumable with Last-Event-ID; ends when the server stops.",
        "parameters": parameters,
        "responses": {
            "200": {"description": "The stream.", "content": {"text/event-stream": {"schema": {"type": "string"}, "x-message-data": event}}},
            "default": problem_response(),
        },
        "x-read-only": true,
    }})
}

/// The OpenAPI 3.1 document.
pub fn document() -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.definitions_path = "/components/schemas/".into();
    let mut generator = settings.into_generator();
    let mut paths = Map::new();
    for op in OPERATIONS.iter().filter(|op| op.flag.is_none()) {
        let entry = paths.entry(op.path).or_insert_with(|| json!({}));
        entry[op.method] = operation_object(op, &mut generator);
    }
    paths.insert(EVENTS_STREAM_PATH.into(), events_stream(&mut generator));
    paths.insert("/healthz".into(), healthz(&mut generator));
    paths.insert("/metrics".into(), metrics());
    generator.subschema_for::<Problem>();
    let schemas = generator.take_definitions(true);
    let mut document = json!({
        "openapi": "3.1.0",
        "info": {"title": "auto", "version": env!("CARGO_PKG_VERSION"), "description": "A durable runtime for AI playbooks: reasoning functions, workflows, interactions, computations, recall and prediction, every run recorded step by step."},
        "servers": [{"url": "/", "description": "The server that serves this document."}],
        "tags": TAGS.iter().map(|(name, description)| json!({"name": name, "description": description})).collect::<Vec<_>>(),
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "A key of the server's configuration; a server with no key listens on loopback and takes none."}},
        },
        "security": [{"bearer": []}],
    });
    generators::settle(&mut document);
    document
}

/// The resources, each operation's tag.
const TAGS: &[(&str, &str)] = &[
    ("caller", "Who the key is."),
    ("orgs", "Orgs and their models."),
    (
        "playbooks",
        "Playbooks, which hold definitions, runs and events.",
    ),
    (
        "definitions",
        "Definitions: saved, checked, versioned and retired.",
    ),
    (
        "runs",
        "Runs of definitions: started, read, listed and cancelled.",
    ),
    (
        "requests",
        "The inbox: requests to people and their answers.",
    ),
    (
        "events",
        "The playbook's log of CloudEvents, published, read and followed.",
    ),
    ("tools", "The MCP tool servers a playbook reaches."),
    ("server", "The server's health and metrics."),
];

/// The tag of the operation at `path`.
fn tag_of(path: &str) -> &'static str {
    if path == "/v1/me" {
        return "caller";
    }
    if path == "/healthz" || path == "/metrics" {
        return "server";
    }
    if path.ends_with("/runs") {
        return "runs";
    }
    let Some(rest) = path.strip_prefix(PB) else {
        return if path.starts_with("/v1/orgs/{org}/playbooks") {
            "playbooks"
        } else {
            "orgs"
        };
    };
    match rest.split('/').nth(1).unwrap_or("") {
        "definitions" => "definitions",
        "runs" => "runs",
        "requests" => "requests",
        "events" => "events",
        "tool-servers" => "tools",
        _ => "playbooks",
    }
}

fn healthz(generator: &mut SchemaGenerator) -> Value {
    let health = generator.subschema_for::<Health>();
    json!({"get": {
        "operationId": "healthz",
        "summary": "Whether the server can reach and write its store.",
        "description": "200 with the store's kind and the server's version while the server can write to its store; 503 `unavailable`, kind `store_unavailable`, otherwise. Takes no key.",
        "security": [],
        "parameters": [],
        "responses": {
            "200": {"description": "The server and its store are up.", "content": {"application/json": {"schema": health}}},
            "default": problem_response(),
        },
        "x-read-only": true,
    }})
}

fn metrics() -> Value {
    json!({"get": {
        "operationId": "metrics",
        "summary": "The server's metrics, in the OpenMetrics text format Prometheus scrapes.",
        "description": "Counters and histograms of requests, runs, model calls and the store, in the OpenMetrics text exposition format.",
        "parameters": [],
        "responses": {
            "200": {"description": "The metrics.", "content": {"application/openmetrics-text": {"schema": {"type": "string"}}}},
            "default": problem_response(),
        },
        "x-read-only": true,
    }})
}

/// What client generators need that the types' own schemas leave unsaid, set on the whole
/// document at the end. openapi-python-client refuses a boolean schema (`output: true`, any
/// JSON), so each is written `{}`; a field the server holds as text but that takes a fixed
/// set of values is an `enum`; each parameter has its type, description and bounds; the
/// bodies of events name their attributes.
pub(crate) mod generators {
    use serde_json::{Value, json};

    use auto_engine::definitions::DefinitionType;

    const RUN_STATUSES: [&str; 4] = ["started", "succeeded", "rejected", "failed"];
    const REQUEST_STATUSES: [&str; 5] = ["open", "answered", "expired", "undelivered", "cancelled"];
    const DEFINITION_STATUSES: [&str; 2] = ["active", "retired"];

    /// The fixed sets of values, each a schema of its own. (Reason replaces what schemars
    /// writes for it: one variant's doc comment makes it a oneOf of strings.)
    const SETS: [&str; 5] = [
        "DefinitionType",
        "RunStatus",
        "RequestStatus",
        "DefinitionStatus",
        "Reason",
    ];

    fn set_schema(name: &str) -> Value {
        let (values, description) = match name {
            "DefinitionType" => (types(), "A definition's type."),
            "RunStatus" => (json!(RUN_STATUSES), "Where a run stands."),
            "RequestStatus" => (json!(REQUEST_STATUSES), "Where a request stands."),
            "DefinitionStatus" => (json!(DEFINITION_STATUSES), "Whether a definition runs."),
            _ => (
                reasons(),
                "Why a run or a request was refused; failed: the server broke down, never a rejection the caller caused.",
            ),
        };
        json!({"type": "string", "enum": values, "description": description})
    }

    /// One parameter's schema standing alone, its set written out rather than referred to:
    /// an MCP tool's input schema has no components to refer to.
    pub(crate) fn inline_parameter_schema(operation: &str, name: &str, in_path: bool) -> Value {
        let place = if in_path { "path" } else { "query" };
        let mut parameter = json!({"name": name, "in": place, "schema": {"type": "string"}});
        settle_parameter(operation, &mut parameter);
        let schema = parameter["schema"].take();
        match schema["$ref"].as_str().and_then(|r| r.rsplit('/').next()) {
            Some(set) => set_schema(set),
            None => schema,
        }
    }

    fn reference(name: &str) -> Value {
        json!({"$ref": format!("#/components/schemas/{name}")})
    }

    fn types() -> Value {
        json!(
            DefinitionType::ALL
                .iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
        )
    }

    fn reasons() -> Value {
        json!(auto_runtime::runs::REASONS)
    }

    pub(super) fn settle(document: &mut Value) {
        no_boolean_schemas(document);
        let schemas = &mut document["components"]["schemas"];
        if let Some(schemas) = schemas.as_object_mut() {
            schemas.values_mut().for_each(no_null_defaults);
        }
        // Each set once, as a schema of its own, so a generated client has one enum of each.
        for name in SETS {
            schemas[name] = set_schema(name);
        }
        for (schema, property, set) in [
            ("RunOut", "type", "DefinitionType"),
            ("RunOut", "status", "RunStatus"),
            ("DefinitionOut", "type", "DefinitionType"),
            ("DefinitionOut", "status", "DefinitionStatus"),
            ("RequestOut", "status", "RequestStatus"),
            ("RequestDefinition", "type", "DefinitionType"),
            ("CreateDefinition", "type", "DefinitionType"),
            ("DefinitionCheck", "type", "DefinitionType"),
        ] {
            let slot = schemas
                .get_mut(schema)
                .and_then(|s| s.get_mut("properties"))
                .and_then(|p| p.get_mut(property));
            if let Some(slot @ Value::Object(_)) = slot {
                *slot = reference(set);
            }
        }
        schemas["EventIn"] = event_in();
        schemas["EventOut"] = event_out();
        let paths = document["paths"].as_object_mut().expect("paths");
        for (path, item) in paths.iter_mut() {
            for operation in item.as_object_mut().expect("a path item").values_mut() {
                settle_operation(path, operation);
            }
        }
    }

    /// A CloudEvents 1.0 event as `publish_event` and `send_run_event` take it.
    fn event_in() -> Value {
        json!({
            "type": "object",
            "description": "A CloudEvents 1.0 event in JSON. `type` is required; `id` is a new one when left out and `source` `/callers/<caller>`; extension attributes (lowercase letters and digits) may be added beside them.",
            "required": ["type"],
            "properties": {
                "specversion": {"type": "string", "enum": ["1.0"], "description": "The CloudEvents version, 1.0 when left out."},
                "id": {"type": "string", "description": "The event's id; a new one when left out. An id the playbook (or the run) received before is not recorded again."},
                "type": {"type": "string", "description": "What happened, such as order.placed."},
                "source": {"type": "string", "description": "Who says it happened, a URI reference; /callers/<caller> when left out."},
                "subject": {"type": "string", "description": "What it happened to, within the source."},
                "time": {"type": "string", "format": "date-time", "description": "When it happened; when it was recorded when left out."},
                "datacontenttype": {"type": "string", "description": "The media type of data; application/json when left out."},
                "data": {"description": "What happened, as JSON."},
            },
            "additionalProperties": {},
        })
    }

    /// An event as the playbook recorded it, as `list_playbook_events`, `get_event` and the
    /// stream give it.
    fn event_out() -> Value {
        json!({
            "type": "object",
            "description": "An event as the playbook recorded it: the CloudEvents attributes, with seq (its order in the playbook), run_id where it belongs to a run, the attributes the workflow page names where they apply, and in a listing data_bytes instead of data when the data is larger than 2 KiB.",
            "required": ["specversion", "id", "type", "source", "time", "seq"],
            "properties": {
                "specversion": {"type": "string"},
                "id": {"type": "string"},
                "type": {"type": "string", "description": "What happened: a run's fact (run_started, run_succeeded...) or a published event's type."},
                "source": {"type": "string"},
                "subject": {"type": "string"},
                "time": {"type": "string", "format": "date-time"},
                "datacontenttype": {"type": "string"},
                "data": {"description": "What happened, as JSON."},
                "data_bytes": {"type": "integer", "minimum": 0, "description": "In a listing, the size of data left out for being larger than 2 KiB."},
                "seq": {"type": "integer", "minimum": 1, "description": "The event's place in the playbook's log."},
                "run_id": {"type": "string", "description": "The run the event belongs to."},
                "recorded_at": {"type": "string", "format": "date-time", "description": "When the playbook recorded it."},
            },
            "additionalProperties": {},
        })
    }

    fn settle_operation(path: &str, operation: &mut Value) {
        if operation.get("description").is_none() {
            operation["description"] = operation["summary"].clone();
        }
        operation["tags"] = json!([super::tag_of(path)]);
        let name = operation["operationId"].as_str().unwrap_or("").to_owned();
        if let Some(parameters) = operation["parameters"].as_array_mut() {
            for parameter in parameters {
                settle_parameter(&name, parameter);
            }
        }
        if name == "run_definition" {
            let answer = operation["responses"]["200"].clone();
            operation["responses"]["200"]["description"] =
                json!("The run ended within the call: succeeded, rejected or failed.");
            operation["responses"]["202"] = answer;
            operation["responses"]["202"]["description"] = json!(
                "The run started and goes on (a workflow, a request to a person, a run past its wait): follow it with get_run."
            );
        }
    }

    fn settle_parameter(operation: &str, parameter: &mut Value) {
        let name = parameter["name"].as_str().unwrap_or("").to_owned();
        let in_path = parameter["in"] == "path";
        let (schema, description) = match (name.as_str(), in_path) {
            ("org", true) => (json!({"type": "string"}), "The org's name."),
            ("pb", true) => (json!({"type": "string"}), "The playbook's name."),
            ("type", true) => (reference("DefinitionType"), "The definition's type."),
            ("name", true) => (json!({"type": "string"}), "The definition's name."),
            ("run_id", true) => (json!({"type": "string"}), "The run's id."),
            ("request_id", true) => (json!({"type": "string"}), "The request's id."),
            ("event_id", true) => (json!({"type": "string"}), "The event's id."),
            ("server", true) => (json!({"type": "string"}), "The tool server's name."),
            ("tool", true) => (json!({"type": "string"}), "The tool's name."),
            ("type", false)
                if operation == "list_playbook_events" || operation == "stream_playbook_events" =>
            {
                (json!({"type": "string"}), "")
            }
            ("type", false) => (reference("DefinitionType"), ""),
            ("status", false) if operation == "list_requests" => (reference("RequestStatus"), ""),
            ("status", false) => (reference("RunStatus"), ""),
            ("reason", false) => (reference("Reason"), ""),
            ("limit", false) => {
                let max = match operation {
                    "list_runs" => auto_store::RUNS_PAGE_MAX,
                    "list_requests" => auto_store::REQUESTS_PAGE_MAX,
                    _ => auto_store::EVENTS_PAGE_MAX,
                };
                (json!({"type": "integer", "minimum": 1, "maximum": max}), "")
            }
            ("since" | "until", false) => (json!({"type": "string", "format": "date-time"}), ""),
            ("version", false) => (json!({"type": "integer", "minimum": 1}), ""),
            _ => (parameter["schema"].clone(), ""),
        };
        parameter["schema"] = schema;
        if parameter
            .get("description")
            .is_none_or(|d| d.as_str().is_none_or(str::is_empty))
        {
            parameter["description"] = json!(description);
        }
    }

    /// Drops `default: null` from an object's optional properties: it says no more than the
    /// property's absence, and openapi-typescript makes a property with a default required.
    fn no_null_defaults(schema: &mut Value) {
        let required: Vec<Value> = schema["required"].as_array().cloned().unwrap_or_default();
        if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
            for (name, property) in properties.iter_mut() {
                if !required.contains(&json!(name))
                    && let Some(property) = property.as_object_mut()
                    && property.get("default") == Some(&Value::Null)
                {
                    property.remove("default");
                }
            }
        }
    }

    /// Writes every boolean schema `true` as `{}`, which means the same: any JSON.
    fn no_boolean_schemas(value: &mut Value) {
        const ONE: [&str; 8] = [
            "items",
            "additionalProperties",
            "not",
            "contains",
            "propertyNames",
            "if",
            "then",
            "else",
        ];
        const MANY: [&str; 4] = ["properties", "patternProperties", "schemas", "$defs"];
        const LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
        match value {
            Value::Object(map) => {
                for (key, child) in map.iter_mut() {
                    let key = key.as_str();
                    if (ONE.contains(&key) || key == "schema") && *child == Value::Bool(true) {
                        *child = json!({});
                    } else if MANY.contains(&key)
                        && let Some(entries) = child.as_object_mut()
                    {
                        for entry in entries.values_mut() {
                            if *entry == Value::Bool(true) {
                                *entry = json!({});
                            }
                        }
                    } else if LISTS.contains(&key)
                        && let Some(items) = child.as_array_mut()
                    {
                        for item in items {
                            if *item == Value::Bool(true) {
                                *item = json!({});
                            }
                        }
                    }
                    no_boolean_schemas(child);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(no_boolean_schemas),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_described_with_its_schemas() {
        let doc = document();
        let create = &doc["paths"][pb_path!("/definitions")]["post"];
        assert_eq!(create["operationId"], "create_definition");
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for name in [
            "CreateDefinition",
            "DefinitionOut",
            "Problem",
            "ProblemIssue",
        ] {
            assert!(
                schemas.contains_key(name),
                "{name} missing from {:?}",
                schemas.keys()
            );
        }
        let required = &schemas["CreateDefinition"]["required"];
        assert!(required.as_array().unwrap().contains(&json!("diagram")));
    }
}

#[cfg(test)]
mod generator_tests {
    use super::*;

    /// Every schema position in the document, with its pointer.
    fn schemas_in(value: &Value, at: String, found: &mut Vec<(String, Value)>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let here = format!("{at}/{key}");
                    if ["schema", "items", "additionalProperties"].contains(&key.as_str()) {
                        found.push((here.clone(), child.clone()));
                    }
                    if key == "properties"
                        && let Some(entries) = child.as_object()
                    {
                        for (name, entry) in entries {
                            found.push((format!("{here}/{name}"), entry.clone()));
                        }
                    }
                    schemas_in(child, here, found);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    schemas_in(item, format!("{at}/{i}"), found);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn no_schema_is_the_boolean_true() {
        let mut found = Vec::new();
        schemas_in(&document(), String::new(), &mut found);
        let booleans: Vec<&String> = found
            .iter()
            .filter(|(_, schema)| *schema == Value::Bool(true))
            .map(|(at, _)| at)
            .collect();
        assert!(booleans.is_empty(), "{booleans:?}");
        // A field of any JSON is still there, as {}.
        assert_eq!(
            document()["components"]["schemas"]["RunOut"]["properties"]["output"],
            json!({})
        );
    }

    #[test]
    fn every_operation_has_a_tag_a_description_and_described_parameters() {
        let doc = document();
        let tags: Vec<&str> = TAGS.iter().map(|(name, _)| *name).collect();
        for (path, item) in doc["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap() {
                let what = format!("{method} {path}");
                assert!(
                    op["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{what}"
                );
                let tag = op["tags"][0].as_str().unwrap();
                assert!(tags.contains(&tag), "{what}: {tag}");
                for parameter in op["parameters"].as_array().unwrap() {
                    assert!(
                        parameter["description"]
                            .as_str()
                            .is_some_and(|d| !d.is_empty()),
                        "{what}: {parameter}"
                    );
                    let schema = &parameter["schema"];
                    assert!(
                        schema["type"].is_string() || schema["$ref"].is_string(),
                        "{what}: {parameter}"
                    );
                }
            }
        }
        for path in ["/healthz", "/metrics", EVENTS_STREAM_PATH] {
            assert!(doc["paths"][path]["get"].is_object(), "{path}");
        }
        assert_eq!(doc["servers"][0]["url"], "/");
    }

    #[test]
    fn a_run_answers_200_or_202_and_fixed_sets_are_enums() {
        let doc = document();
        let run = &doc["paths"][pb_path!("/definitions/{type}/{name}/runs")]["post"];
        for status in ["200", "202"] {
            assert_eq!(
                run["responses"][status]["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/RunOut",
                "{status}"
            );
        }
        let types = json!([
            "reasoning",
            "workflow",
            "interaction",
            "computation",
            "recall",
            "prediction"
        ]);
        let types_of = |mut set: Vec<Value>| {
            set.sort_by_key(|v| v.to_string());
            set
        };
        let path_type = run["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "type")
            .unwrap();
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            path_type["schema"]["$ref"],
            "#/components/schemas/DefinitionType"
        );
        assert_eq!(
            types_of(
                schemas["DefinitionType"]["enum"]
                    .as_array()
                    .unwrap()
                    .clone()
            ),
            types_of(types.as_array().unwrap().clone())
        );
        assert_eq!(
            schemas["RunOut"]["properties"]["status"]["$ref"],
            "#/components/schemas/RunStatus"
        );
        assert_eq!(
            schemas["RunStatus"]["enum"],
            json!(["started", "succeeded", "rejected", "failed"])
        );
        let list = &doc["paths"][pb_path!("/runs")]["get"]["parameters"];
        let limit = list
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "limit")
            .unwrap();
        assert_eq!(
            limit["schema"],
            json!({"type": "integer", "minimum": 1, "maximum": auto_store::RUNS_PAGE_MAX})
        );
        // An optional field's default of null would make openapi-typescript require it.
        assert!(
            schemas["RunDefinition"]["properties"]["run_id"]
                .get("default")
                .is_none()
        );
        assert_eq!(schemas["EventOut"]["properties"]["type"]["type"], "string");
        let event = &schemas["EventIn"];
        assert_eq!(event["required"], json!(["type"]));
        assert!(event["properties"]["data"].is_object());
        // The reasons listed are the problem documents' own.
        let reason = &doc["paths"][pb_path!("/runs")]["get"]["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "reason")
            .unwrap()["schema"];
        assert_eq!(reason["$ref"], "#/components/schemas/Reason");
        let reasons: Vec<Value> = auto_runtime::runs::REASONS
            .iter()
            .map(|r| serde_json::to_value(r).unwrap())
            .collect();
        assert_eq!(schemas["Reason"]["enum"], json!(reasons));
    }
}
