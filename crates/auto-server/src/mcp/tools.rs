//! The MCP tools, generated from the operation table: one tool per operation, its input schema
//! the body's schema with the path and query parameters beside it, its output schema the
//! response's. Pure: no I/O.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use super::descriptions;
use crate::openapi::{OPERATIONS, Operation};

/// The path every playbook's operations live under; a scoped endpoint serves only these.
pub(crate) const PLAYBOOK_PATH: &str = "/v1/orgs/{org}/playbooks/{pb}";

/// Whether the endpoint names the playbook (then the tools take no `org` or `playbook`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// `/mcp`: every operation, each naming its org and playbook in its arguments.
    Server,
    /// `/v1/orgs/{org}/playbooks/{pb}/mcp`: the playbook's operations only.
    Playbook,
}

/// The operations an endpoint of this reach serves.
pub(crate) fn operations(reach: Reach) -> impl Iterator<Item = &'static Operation> {
    OPERATIONS
        .iter()
        .filter(move |op| reach == Reach::Server || op.path.starts_with(PLAYBOOK_PATH))
}

/// The operation a tool name names, if this reach serves it.
pub(crate) fn operation(reach: Reach, name: &str) -> Option<&'static Operation> {
    operations(reach).find(|op| op.name == name)
}

/// The argument that carries a path parameter: `{pb}` is `playbook`, the rest keep their names.
pub(crate) fn argument_of_parameter(parameter: &str) -> &str {
    match parameter {
        "pb" => "playbook",
        other => other,
    }
}

/// The path parameters of an operation, in order, such as `org`, `pb`, `type`, `name`.
pub(crate) fn path_parameters(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
}

/// Whether a path parameter is left out because the endpoint names it.
pub(crate) fn named_by_endpoint(reach: Reach, parameter: &str) -> bool {
    reach == Reach::Playbook && matches!(parameter, "org" | "pb")
}

fn parameter_description(parameter: &str) -> &'static str {
    match parameter {
        "org" => "The org's id, such as acme (see list_orgs).",
        "pb" => "The playbook's id within the org, such as support (see list_playbooks).",
        "type" => {
            "The definition's type: reasoning, workflow, interaction, computation, recall or \
             prediction."
        }
        "name" => "The definition's name, unique among the playbook's definitions of its type.",
        "event_id" => "The event's id, as publish_event or list_playbook_events showed it.",
        "run_id" => "The run's id, as the run or list_runs showed it.",
        "request_id" => "The request's id, as list_requests showed it.",
        "server" => "The tool server's name, as search showed it, such as graph.",
        "tool" => "The tool's name on its server, as search showed it, such as search.",
        _ => "A path parameter of the operation.",
    }
}

/// Every tool of an endpoint of this reach.
pub fn tools(reach: Reach) -> Vec<Tool> {
    operations(reach).map(|op| tool(op, reach)).collect()
}

fn tool(op: &Operation, reach: Reach) -> Tool {
    let description = descriptions::for_model(op);
    let mut annotations = ToolAnnotations::new().read_only(op.read_only);
    if !op.read_only {
        annotations = annotations
            .destructive(op.method == "delete")
            .idempotent(matches!(op.method, "put" | "delete"));
    }
    Tool::new(op.name, description, Arc::new(input_schema(op, reach)))
        .with_raw_output_schema(Arc::new(output_schema(op)))
        .with_annotations(annotations)
}

/// A schema with every subschema written out in place, so a tool's schema stands alone.
fn inline(schema_fn: fn(&mut schemars::SchemaGenerator) -> schemars::Schema) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut generator = settings.into_generator();
    schema_fn(&mut generator).to_value()
}

/// The body's schema, with the path parameters the endpoint does not name and the query
/// parameters added as properties beside the body's own.
pub(crate) fn input_schema(op: &Operation, reach: Reach) -> JsonObject {
    let mut body = match op.request.map(inline) {
        Some(Value::Object(object)) => object,
        _ => json!({"type": "object", "additionalProperties": false})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    };
    // The body type's own description speaks of HTTP; the tool's description says it better.
    body.remove("description");
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    for parameter in path_parameters(op.path).filter(|p| !named_by_endpoint(reach, p)) {
        let argument = argument_of_parameter(parameter);
        properties.insert(
            argument.into(),
            json!({"type": "string", "description": parameter_description(parameter)}),
        );
        required.push(argument.into());
    }
    for (name, description) in op.query {
        properties.insert(
            (*name).into(),
            json!({"type": "string", "description": description}),
        );
    }
    if let Some(Value::Object(own)) = body.remove("properties") {
        properties.extend(own);
    }
    if let Some(Value::Array(own)) = body.remove("required") {
        required.extend(own);
    }
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    schema.insert("properties".into(), Value::Object(properties));
    schema.insert("required".into(), Value::Array(required));
    // What is left of the body's schema (additionalProperties) applies as it did.
    body.remove("type");
    schema.extend(body);
    schema
}

/// The response's schema. Every response is a JSON object, as MCP wants of an output schema.
pub(crate) fn output_schema(op: &Operation) -> JsonObject {
    match inline(op.response) {
        Value::Object(object) => object,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema_of(reach: Reach, name: &str) -> Value {
        let op = operation(reach, name).expect("the operation");
        Value::Object(input_schema(op, reach))
    }

    #[test]
    fn every_operation_is_a_tool_of_the_server_endpoint() {
        let names: Vec<_> = tools(Reach::Server)
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        let expected: Vec<_> = OPERATIONS.iter().map(|op| op.name.to_owned()).collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn the_playbook_endpoint_serves_only_the_playbooks_operations_without_org_or_playbook() {
        let names: Vec<_> = tools(Reach::Playbook)
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert!(!names.contains(&"create_org".to_owned()));
        assert!(names.contains(&"create_definition".to_owned()));
        for tool in tools(Reach::Playbook) {
            let properties = tool.input_schema["properties"].as_object().unwrap();
            assert!(!properties.contains_key("org"), "{}", tool.name);
            assert!(!properties.contains_key("playbook"), "{}", tool.name);
        }
    }

    #[test]
    fn create_definition_takes_its_body_beside_org_and_playbook() {
        let schema = schema_of(Reach::Server, "create_definition");
        let required = schema["required"].as_array().unwrap();
        for field in ["org", "playbook", "type", "name", "source", "diagram"] {
            assert!(required.contains(&json!(field)), "{field}: {schema:#}");
        }
        assert!(!required.contains(&json!("overview")));
        assert_eq!(schema["additionalProperties"], json!(false));
        assert_eq!(schema["type"], json!("object"));
    }

    #[test]
    fn path_and_query_parameters_are_properties() {
        let schema = schema_of(Reach::Playbook, "get_definition");
        assert_eq!(schema["required"], json!(["type", "name"]));
        let schema = schema_of(Reach::Playbook, "list_playbook_events");
        let properties = schema["properties"].as_object().unwrap();
        for name in ["run_id", "type", "after", "limit"] {
            assert!(properties.contains_key(name), "{name}");
        }
        assert_eq!(schema["required"], json!([]));
    }

    #[test]
    fn no_body_field_shadows_a_parameter() {
        for op in OPERATIONS {
            let Some(request) = op.request else { continue };
            let body = inline(request);
            let Some(fields) = body["properties"].as_object() else {
                continue;
            };
            for parameter in path_parameters(op.path) {
                let argument = argument_of_parameter(parameter);
                assert!(!fields.contains_key(argument), "{} {argument}", op.name);
            }
            for (name, _) in op.query {
                assert!(!fields.contains_key(*name), "{} {name}", op.name);
            }
        }
    }

    #[test]
    fn output_schemas_are_objects_and_reads_are_marked_read_only() {
        for tool in tools(Reach::Server) {
            let output = tool.output_schema.as_ref().expect("an output schema");
            assert_eq!(output["type"], json!("object"), "{}", tool.name);
            let op = operation(Reach::Server, &tool.name).unwrap();
            let annotations = tool.annotations.as_ref().unwrap();
            assert_eq!(
                annotations.read_only_hint,
                Some(op.read_only),
                "{}",
                tool.name
            );
        }
    }
}
