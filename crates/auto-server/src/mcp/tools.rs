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
        .with_title(descriptions::title(op))
        .with_raw_output_schema(Arc::new(output_schema(op)))
        .with_annotations(annotations)
}

/// A schema with every subschema written out in place, so a tool's schema stands alone.
fn inline(schema_fn: fn(&mut schemars::SchemaGenerator) -> schemars::Schema) -> Value {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut generator = settings.into_generator();
    let mut schema = schema_fn(&mut generator).to_value();
    portable_schema(&mut schema);
    schema
}

/// The formats schemars writes for Rust's number types, which JSON Schema does not define.
const RUST_NUMBER_FORMATS: [&str; 12] = [
    "int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "uint64", "uint",
    "float", "double",
];

/// Writes a schema as every MCP client takes it, meaning the same:
///
/// - each boolean subschema as an object: `true` (any value, what schemars gives a
///   `serde_json::Value` field) as `{}`, `false` as `{"not": {}}`. JSON Schema allows both
///   forms, but the MCP TypeScript SDK (the Inspector, and the clients built on it) refuses a
///   tool list whose schema has a property that is not an object. `additionalProperties: false`
///   stays as it is: that form is the common one, and no client refuses it;
/// - without the `format` of a Rust number type (`uint64`), which a validator such as the
///   Inspector's warns of at every call; `minimum` still says what it meant.
fn portable_schema(schema: &mut Value) {
    const MAPS: [&str; 5] = [
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
    ];
    const LISTS: [&str; 4] = ["prefixItems", "allOf", "anyOf", "oneOf"];
    const ONES: [&str; 7] = [
        "items",
        "contains",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
    ];
    let Value::Object(object) = schema else {
        return;
    };
    if object
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| RUST_NUMBER_FORMATS.contains(&format))
    {
        object.remove("format");
    }
    for (keyword, value) in object.iter_mut() {
        let keyword = keyword.as_str();
        if MAPS.contains(&keyword) {
            if let Value::Object(subschemas) = value {
                subschemas.values_mut().for_each(object_schema);
            }
        } else if LISTS.contains(&keyword) {
            if let Value::Array(subschemas) = value {
                subschemas.iter_mut().for_each(object_schema);
            }
        } else if ONES.contains(&keyword)
            || (keyword == "additionalProperties" && value.is_object())
        {
            object_schema(value);
        }
    }
}

/// One subschema: a boolean written as an object, then its own subschemas.
fn object_schema(schema: &mut Value) {
    match schema {
        Value::Bool(true) => *schema = json!({}),
        Value::Bool(false) => *schema = json!({"not": {}}),
        _ => portable_schema(schema),
    }
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
        let mut schema =
            crate::openapi::generators::inline_parameter_schema(op.name, parameter, true);
        schema["description"] = json!(parameter_description(parameter));
        properties.insert(argument.into(), schema);
        required.push(argument.into());
    }
    for (name, description) in op.query {
        let mut schema = crate::openapi::generators::inline_parameter_schema(op.name, name, false);
        schema["description"] = json!(description);
        properties.insert((*name).into(), schema);
    }
    if let Some(Value::Object(own)) = body.remove("properties") {
        properties.extend(own);
    }
    // The field the tool always sets is not the caller's to give.
    if let Some(flag) = op.flag {
        properties.remove(flag);
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
/// Without its descriptions: the tool's description says what comes back, and the schema's
/// names and types are what a client checks; the words would be read at every tools/list.
pub(crate) fn output_schema(op: &Operation) -> JsonObject {
    let mut schema = inline(op.response);
    without_descriptions(&mut schema);
    match schema {
        Value::Object(object) => object,
        _ => Map::new(),
    }
}

/// Removes every `description` keyword of a schema (not a property named description).
fn without_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            object.remove("description");
            for (keyword, value) in object.iter_mut() {
                if keyword == "properties" || keyword == "$defs" {
                    if let Value::Object(subschemas) = value {
                        subschemas.values_mut().for_each(without_descriptions);
                    }
                } else {
                    without_descriptions(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(without_descriptions),
        _ => {}
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

    /// Every subschema in a `properties` map, anywhere in a schema, is an object.
    fn assert_property_schemas_are_objects(schema: &Value, at: &str) {
        match schema {
            Value::Object(object) => {
                if let Some(Value::Object(properties)) = object.get("properties") {
                    for (name, property) in properties {
                        assert!(property.is_object(), "{at}/properties/{name}: {property}");
                    }
                }
                for (key, value) in object {
                    assert_property_schemas_are_objects(value, &format!("{at}/{key}"));
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    assert_property_schemas_are_objects(item, &format!("{at}/{index}"));
                }
            }
            _ => {}
        }
    }

    #[test]
    fn schemas_are_written_as_every_client_takes_them() {
        for reach in [Reach::Server, Reach::Playbook] {
            for tool in tools(reach) {
                let input = Value::Object(tool.input_schema.as_ref().clone());
                assert_property_schemas_are_objects(&input, &format!("{} input", tool.name));
                let output = Value::Object(tool.output_schema.as_ref().unwrap().as_ref().clone());
                assert_property_schemas_are_objects(&output, &format!("{} output", tool.name));
            }
        }
        // What schemars gives a `serde_json::Value` field is written as the empty schema.
        let get_run = output_schema(operation(Reach::Server, "get_run").unwrap());
        assert_eq!(get_run["properties"]["record"], json!({}));
        let mut schema = json!({"properties": {"a": true, "b": {"items": false}},
                                "additionalProperties": false});
        portable_schema(&mut schema);
        assert_eq!(
            schema,
            json!({"properties": {"a": {}, "b": {"items": {"not": {}}}},
                   "additionalProperties": false})
        );
        let mut schema = json!({"properties": {"n": {"type": "integer", "format": "uint64",
                                                     "minimum": 0},
                                               "d": {"type": "string", "format": "date"}}});
        portable_schema(&mut schema);
        assert_eq!(
            schema,
            json!({"properties": {"n": {"type": "integer", "minimum": 0},
                                  "d": {"type": "string", "format": "date"}}})
        );
    }

    #[test]
    fn a_runs_input_is_published_as_an_object() {
        let schema = schema_of(Reach::Playbook, "run_definition");
        let input = &schema["properties"]["input"];
        assert_eq!(input["type"], json!("object"), "{schema:#}");
        assert!(input.get("default").is_none(), "{schema:#}");
        assert_eq!(schema["required"], json!(["type", "name"]));
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

#[cfg(test)]
mod size {
    use super::*;

    /// What a tools/list of the server endpoint may weigh, at most, as JSON: an agent reads it
    /// whole before its first call (it was 82 KB with a paragraph repeated in every tool and the
    /// output schemas' words; 43 KB without, 44.4 KB with each tool's title, 47.1 KB with the
    /// three tools that purge and delete). A tool added past this must make room first.
    const TOOL_LIST_BYTES_MAX: usize = 48_000;

    #[test]
    fn the_tool_list_is_read_whole_by_an_agent_so_it_stays_small() {
        let tools = tools(Reach::Server);
        let bytes = serde_json::to_vec(&tools).unwrap().len();
        assert!(bytes <= TOOL_LIST_BYTES_MAX, "{bytes} bytes");
        // No sentence is repeated from one tool's description to every other's.
        let first = tools[0].description.as_deref().unwrap();
        for sentence in first.split(". ") {
            let everywhere = tools
                .iter()
                .all(|t| t.description.as_deref().unwrap().contains(sentence));
            assert!(!everywhere, "in every description: {sentence}");
        }
        // Output schemas keep their names and types, not their words.
        let run = tools.iter().find(|t| t.name == "get_run").unwrap();
        let output = serde_json::to_string(&**run.output_schema.as_ref().unwrap()).unwrap();
        assert!(!output.contains("\"description\""), "{output}");
        assert!(output.contains("\"started_at\""), "{output}");
    }
}
