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
    let problem = json!({"description": "A rejection, as a problem document.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}});
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
            "default": {"description": "A rejection, as a problem document.", "content": {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}},
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
    generator.subschema_for::<Problem>();
    let schemas = generator.take_definitions(true);
    json!({
        "openapi": "3.1.0",
        "info": {"title": "auto", "version": env!("CARGO_PKG_VERSION"), "description": "A durable runtime for AI playbooks."},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    })
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
