//! Provider warnings: the parts of a schema that a provider rejects or does not enforce, and
//! the keywords the runtime does not know. A schema with warnings is still saved.
//!
//! Sources, read when this was written (re-check them when a provider changes):
//! - the reasoning page, "Answers that are JSON" and "Tools" (the rules and the text's form);
//! - OpenAI, Structured Outputs, "Supported schemas" (platform.openai.com/docs/guides/
//!   structured-outputs): root an object and not `anyOf`; `additionalProperties: false` and
//!   every property in `required`; supported: `anyOf`, `$ref`/`$defs`, strings' `pattern` and
//!   `format` (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid), numbers'
//!   bounds and `multipleOf`, arrays' `minItems`/`maxItems`; not supported: `allOf`, `not`,
//!   `if`/`then`/`else`, `dependent*`, and keywords outside that list; Azure OpenAI documents
//!   the same subset;
//! - Anthropic, "Structured outputs", JSON Schema limitations (platform.claude.com/docs/en/
//!   build-with-claude/structured-outputs): no recursive schemas, no numeric bounds or
//!   `multipleOf`, no `minLength`/`maxLength`, no array bounds beyond `minItems` 0 or 1; the
//!   SDKs strip them, as our adapter does, so they are not enforced while the model writes;
//!   Its complexity limits (24 optional properties, 16 schemas with `anyOf` or a list of
//!   types, across a request's strict schemas) were read as a converter's documentation
//!   quotes them (hex.pm, lang_schema, LangSchema.Converter.Anthropic);
//! - Google, Gemini API "Structured output", JSON Schema support (ai.google.dev/gemini-api/
//!   docs/structured-output): `responseJsonSchema` takes `type`, `title`, `description`,
//!   `enum`, `format`, `minimum`, `maximum`, `items`, `prefixItems`, `minItems`, `maxItems`,
//!   `properties`, `required`, `additionalProperties`, `anyOf`, `$ref`, `$defs`, and ignores
//!   other keywords; "very large or deeply nested schemas may be rejected";
//! - the project's NOTES.md, "Providers" (wire facts of each structured-output API).

use serde::Serialize;
use serde_json::Value;

use crate::check::SchemaRole;
use crate::cycles::recursive_loops;
use crate::json_bytes;
use crate::limits::{
    ANTHROPIC_OPTIONAL_PROPERTIES_MAX, ANTHROPIC_UNION_SCHEMAS_MAX, GOOGLE_SCHEMA_BYTES_WARN,
    GOOGLE_SCHEMA_DEPTH_WARN, OPENAI_ENUM_VALUES_MAX, OPENAI_OBJECT_DEPTH_MAX,
    OPENAI_PROPERTIES_MAX, WARNINGS_MAX,
};
use crate::pointer::{depth, push};
use crate::walk::{SchemaNode, schema_nodes};

/// The providers that serve Anthropic models, as the page's warning names them.
pub const ANTHROPIC_PROVIDERS: &[&str] = &[
    "anthropic",
    "bedrock",
    "bedrock-anthropic",
    "vertex-anthropic",
];

/// The providers of OpenAI's strict structured outputs.
pub const OPENAI_PROVIDERS: &[&str] = &["openai", "azure"];

/// The providers of Google's Gemini models.
pub const GOOGLE_PROVIDERS: &[&str] = &["google", "vertex"];

/// One part of a schema a provider rejects or does not enforce, or a keyword the runtime does
/// not know, at a JSON pointer from the schema root.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SchemaWarning {
    pub pointer: String,
    pub text: String,
    /// The providers the warning concerns, as its text names them; none for a keyword the
    /// runtime does not know, which concerns every provider.
    #[serde(skip)]
    pub providers: &'static [&'static str],
}

impl SchemaWarning {
    /// Whether a run of a definition whose model names `provider` (the part of
    /// `provider/model` before the slash) can reach a provider the warning concerns.
    ///
    /// The checker sees the definition, not the operator's configuration, and an alias may
    /// send a model elsewhere (the supplement's `"anthropic/claude-sonnet-4-5" =
    /// "bedrock-anthropic/anthropic.claude-sonnet-4-5"`). The warnings are about provider
    /// families, and aliases move a model between the providers of its family, so a provider
    /// of a known family reaches every provider of that family; a gateway, or a name the
    /// runtime does not know, may front any model and reaches every provider. An alias that
    /// moves a model to another family is the operator's choice made after the save: its run
    /// ends with the provider's own refusal quoted, as any refused request does.
    pub fn reaches(&self, provider: &str) -> bool {
        let family = [ANTHROPIC_PROVIDERS, OPENAI_PROVIDERS, GOOGLE_PROVIDERS]
            .into_iter()
            .find(|family| family.contains(&provider));
        match family {
            None => true,
            Some(family) => {
                self.providers.is_empty() || self.providers.iter().any(|p| family.contains(p))
            }
        }
    }
}

/// Bounds Anthropic models do not receive ("numeric, length and count bounds").
const ANTHROPIC_BOUNDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// Keywords outside OpenAI's supported list that our subset still allows.
const OPENAI_UNSUPPORTED: &[&str] = &[
    "allOf",
    "not",
    "oneOf",
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "propertyNames",
];

/// The formats OpenAI's strict structured outputs accept.
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Keywords our subset allows that Gemini's `responseJsonSchema` ignores.
const GOOGLE_IGNORED: &[&str] = &[
    "allOf",
    "not",
    "oneOf",
    "const",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "propertyNames",
];

/// Keywords the runtime knows: it checks them, or they only annotate.
const KNOWN: &[&str] = &[
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "items",
    "prefixItems",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxProperties",
    "minProperties",
    "required",
    "properties",
    "additionalProperties",
    "propertyNames",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "format",
    "$ref",
    "$defs",
    "definitions",
    "$schema",
    "$id",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Keywords the save-time check refuses; they get a problem, not a warning.
const REFUSED: &[&str] = &[
    "pattern",
    "patternProperties",
    "if",
    "then",
    "else",
    "contains",
    "minContains",
    "maxContains",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
];

fn providers(list: &[&str]) -> String {
    list.join(", ")
}

/// A warning that concerns every provider: a keyword the runtime does not know.
fn warning(pointer: &str, text: String) -> SchemaWarning {
    SchemaWarning {
        pointer: pointer.to_owned(),
        text,
        providers: &[],
    }
}

fn anthropic_warning(pointer: &str, text: String) -> SchemaWarning {
    SchemaWarning {
        providers: ANTHROPIC_PROVIDERS,
        ..warning(pointer, text)
    }
}

fn openai_warning(pointer: &str, text: String) -> SchemaWarning {
    SchemaWarning {
        providers: OPENAI_PROVIDERS,
        ..warning(pointer, text)
    }
}

fn google_warning(pointer: &str, text: String) -> SchemaWarning {
    SchemaWarning {
        providers: GOOGLE_PROVIDERS,
        ..warning(pointer, text)
    }
}

/// "<keyword> is not enforced while <Family> models write the answer; an answer outside it
/// fails as output_invalid (<providers>)", the page's form.
fn not_enforced(keyword: &str, family: &str, list: &[&str]) -> String {
    format!(
        "{keyword} is not enforced while {family} models write the answer; an answer outside it fails as output_invalid ({})",
        providers(list)
    )
}

fn openai_rejects(what: &str) -> String {
    format!(
        "{what} is not supported by OpenAI and Azure strict structured outputs, which reject the schema; the run ends as conflict, unworkable ({})",
        providers(OPENAI_PROVIDERS)
    )
}

/// Every warning of a schema, in document order, each once.
pub(crate) fn schema_warnings(
    schema: &Value,
    nodes: &[SchemaNode<'_>],
    role: SchemaRole,
) -> Vec<SchemaWarning> {
    let mut out = Vec::new();
    if role == SchemaRole::Output {
        out.extend(openai_root(schema));
        out.extend(openai_sizes(nodes));
        out.extend(anthropic_sizes(nodes));
        out.extend(google_size(schema));
    }
    for node in nodes {
        out.extend(unknown_keywords(node, role));
        if role == SchemaRole::Output {
            out.extend(keyword_gaps(node));
            out.extend(openai_object(node));
        }
    }
    if role == SchemaRole::Output {
        for (at, _) in recursive_loops(nodes) {
            out.push(anthropic_warning(&at, format!(
                "$ref makes the schema recursive, which Anthropic models do not accept; the run ends as conflict, unworkable ({})",
                providers(ANTHROPIC_PROVIDERS)
            )));
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|w| seen.insert(w.clone()));
    out
}

fn unknown_keywords(node: &SchemaNode<'_>, role: SchemaRole) -> Vec<SchemaWarning> {
    let Value::Object(map) = node.value else {
        return Vec::new();
    };
    let consequence = match role {
        SchemaRole::Output => "it is sent to the provider but not checked",
        SchemaRole::Input | SchemaRole::Answer => "it is not checked",
    };
    map.keys()
        .filter(|k| !KNOWN.contains(&k.as_str()) && !REFUSED.contains(&k.as_str()))
        .map(|k| {
            warning(
                &push(&node.pointer, k),
                format!("{k} is not a keyword the runtime knows; {consequence}"),
            )
        })
        .collect()
}

/// Keywords one provider family rejects or does not enforce.
fn keyword_gaps(node: &SchemaNode<'_>) -> Vec<SchemaWarning> {
    let Value::Object(map) = node.value else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, value) in map {
        let at = push(&node.pointer, key);
        let keyword = key.as_str();
        if is_anthropic_bound(keyword, value) {
            out.push(anthropic_warning(
                &at,
                not_enforced(keyword, "Anthropic", ANTHROPIC_PROVIDERS),
            ));
        }
        if keyword == "oneOf" {
            out.push(anthropic_warning(&at, format!(
                "oneOf is received as anyOf by Anthropic models; an answer that matches more than one fails as output_invalid ({})",
                providers(ANTHROPIC_PROVIDERS)
            )));
        }
        if OPENAI_UNSUPPORTED.contains(&keyword) {
            out.push(openai_warning(&at, openai_rejects(keyword)));
        }
        if let Some(format) = value
            .as_str()
            .filter(|f| keyword == "format" && !OPENAI_FORMATS.contains(f))
        {
            out.push(openai_warning(
                &at,
                openai_rejects(&format!("format {format}")),
            ));
        }
        if GOOGLE_IGNORED.contains(&keyword) {
            out.push(google_warning(
                &at,
                not_enforced(keyword, "Google", GOOGLE_PROVIDERS),
            ));
        }
    }
    out
}

/// Anthropic accepts `minItems` of 0 or 1; every other bound is stripped.
pub(crate) fn is_anthropic_bound(keyword: &str, value: &Value) -> bool {
    ANTHROPIC_BOUNDS.contains(&keyword)
        && !(keyword == "minItems" && value.as_u64().is_some_and(|n| n <= 1))
}

fn openai_root(schema: &Value) -> Option<SchemaWarning> {
    let is_object = schema.get("type").and_then(Value::as_str) == Some("object");
    (!is_object).then(|| {
        openai_warning("", format!(
            "OpenAI and Azure strict structured outputs accept only \"type\": \"object\" at the root; the run ends as conflict, unworkable ({})",
            providers(OPENAI_PROVIDERS)
        ))
    })
}

/// Every object needs `additionalProperties: false` and every property in `required`.
fn openai_object(node: &SchemaNode<'_>) -> Vec<SchemaWarning> {
    let Value::Object(map) = node.value else {
        return Vec::new();
    };
    let is_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => map.contains_key("properties"),
    };
    if !is_object {
        return Vec::new();
    }
    let mut out = Vec::new();
    if map.get("additionalProperties") != Some(&Value::Bool(false)) {
        out.push(openai_warning(&node.pointer, format!(
            "an object without \"additionalProperties\": false is rejected by OpenAI and Azure strict structured outputs; the run ends as conflict, unworkable ({})",
            providers(OPENAI_PROVIDERS)
        )));
    }
    let required: Vec<&str> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = map.get("properties").and_then(Value::as_object);
    for name in properties.into_iter().flat_map(|p| p.keys()) {
        if !required.contains(&name.as_str()) {
            let at = push(&push(&node.pointer, "properties"), name);
            out.push(openai_warning(&at, format!(
                "{name} is not in required, and OpenAI and Azure strict structured outputs reject an optional property: list it in required and make it nullable, such as \"type\": [\"string\", \"null\"] ({})",
                providers(OPENAI_PROVIDERS)
            )));
        }
    }
    out
}

/// Anthropic's complexity limits: optional properties, and schemas with `anyOf` or a list of
/// types (the nullable fields OpenAI asks for count here).
fn anthropic_sizes(nodes: &[SchemaNode<'_>]) -> Vec<SchemaWarning> {
    let (mut optional, mut unions) = (0, 0);
    for node in nodes {
        let required: Vec<&Value> = node
            .value
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().collect())
            .unwrap_or_default();
        if let Some(properties) = node.value.get("properties").and_then(Value::as_object) {
            optional += properties
                .keys()
                .filter(|k| !required.iter().any(|r| r.as_str() == Some(k.as_str())))
                .count();
        }
        if node.value.get("anyOf").is_some() || node.value.get("type").is_some_and(Value::is_array)
        {
            unions += 1;
        }
    }
    let anthropic = providers(ANTHROPIC_PROVIDERS);
    let mut out = Vec::new();
    if optional > ANTHROPIC_OPTIONAL_PROPERTIES_MAX {
        out.push(anthropic_warning("", format!(
            "Anthropic models accept at most {ANTHROPIC_OPTIONAL_PROPERTIES_MAX} optional properties in a schema; this one has {optional}; the run ends as conflict, unworkable ({anthropic})"
        )));
    }
    if unions > ANTHROPIC_UNION_SCHEMAS_MAX {
        out.push(anthropic_warning("", format!(
            "Anthropic models accept at most {ANTHROPIC_UNION_SCHEMAS_MAX} schemas with anyOf or a list of types; this one has {unions}; the run ends as conflict, unworkable ({anthropic})"
        )));
    }
    out
}

/// Whether a schema describes an object: its type says so, or it lists properties.
fn is_object_schema(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => schema.get("properties").is_some(),
    }
}

/// OpenAI's totals: properties, objects nested in objects, and enum values.
fn openai_sizes(nodes: &[SchemaNode<'_>]) -> Vec<SchemaWarning> {
    let mut out = Vec::new();
    let (mut properties, mut enum_values) = (0, 0);
    let mut deepest: Option<&SchemaNode<'_>> = None;
    let mut deepest_level = 0;
    for node in nodes {
        properties += node
            .value
            .get("properties")
            .and_then(Value::as_object)
            .map_or(0, |p| p.len());
        enum_values += node
            .value
            .get("enum")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        // Objects within objects: each `properties` step on the way down is one level.
        let level = node
            .pointer
            .split('/')
            .filter(|s| *s == "properties")
            .count()
            + 1;
        if is_object_schema(node.value) && level > deepest_level {
            (deepest, deepest_level) = (Some(node), level);
        }
    }
    let openai = providers(OPENAI_PROVIDERS);
    if properties > OPENAI_PROPERTIES_MAX {
        out.push(openai_warning("", format!(
            "OpenAI and Azure strict structured outputs accept at most 5,000 properties in a schema; this one has {properties} ({openai})"
        )));
    }
    if let Some(node) = deepest.filter(|_| deepest_level > OPENAI_OBJECT_DEPTH_MAX) {
        out.push(openai_warning(&node.pointer, format!(
            "OpenAI and Azure strict structured outputs accept objects nested at most {OPENAI_OBJECT_DEPTH_MAX} levels deep; this object is at level {deepest_level} ({openai})"
        )));
    }
    if enum_values > OPENAI_ENUM_VALUES_MAX {
        out.push(openai_warning("", format!(
            "OpenAI and Azure strict structured outputs accept at most 1,000 enum values in a schema; this one has {enum_values} ({openai})"
        )));
    }
    out
}

/// "Keep schemas small: Google notes that very large or deeply nested schemas may be
/// rejected."
fn google_size(schema: &Value) -> Vec<SchemaWarning> {
    let mut out = Vec::new();
    // Invariant: serializing a `Value` cannot fail (its keys are strings).
    let bytes = json_bytes(schema).unwrap_or(0);
    if bytes > GOOGLE_SCHEMA_BYTES_WARN {
        out.push(google_warning("", format!(
            "Google notes that very large schemas may be rejected; this one is {bytes} bytes as JSON ({})",
            providers(GOOGLE_PROVIDERS)
        )));
    }
    let levels = depth(schema);
    if levels > GOOGLE_SCHEMA_DEPTH_WARN {
        out.push(google_warning("", format!(
            "Google notes that deeply nested schemas may be rejected; this one nests {levels} levels ({})",
            providers(GOOGLE_PROVIDERS)
        )));
    }
    out
}

/// The parts of a tool's input schema that are not portable, as the run's warnings name
/// them: `graph__search inputSchema#/properties/query/maxLength: ...`. Tools are not sent
/// as strict structured outputs, so only what a provider ignores or refuses is named: the
/// bounds Anthropic models do not receive, what Gemini ignores, the keywords outside JSON
/// Schema's vocabulary, and recursion. At most [`WARNINGS_MAX`].
pub fn tool_schema_warnings(tool_name: &str, schema: &Value) -> Vec<String> {
    let nodes = schema_nodes(schema);
    let mut out = Vec::new();
    for node in &nodes {
        let Value::Object(map) = node.value else {
            continue;
        };
        for (key, value) in map {
            let families = tool_gap_families(key, value);
            if families.is_empty() {
                continue;
            }
            let (names, list): (Vec<&str>, Vec<&[&str]>) = families.into_iter().unzip();
            let list: Vec<&str> = list.concat();
            out.push(format!(
                "{tool_name} inputSchema#{}: {key} may be ignored while {} models write the arguments ({})",
                push(&node.pointer, key),
                names.join(" and "),
                providers(&list)
            ));
        }
    }
    for (at, _) in recursive_loops(&nodes) {
        out.push(format!(
            "{tool_name} inputSchema#{at}: $ref makes the schema recursive, which some providers refuse ({}, {})",
            providers(ANTHROPIC_PROVIDERS),
            providers(GOOGLE_PROVIDERS)
        ));
    }
    out.dedup();
    out.truncate(WARNINGS_MAX);
    out
}

fn tool_gap_families(keyword: &str, value: &Value) -> Vec<(&'static str, &'static [&'static str])> {
    let mut families = Vec::new();
    if is_anthropic_bound(keyword, value) || keyword == "oneOf" {
        families.push(("Anthropic", ANTHROPIC_PROVIDERS));
    }
    if GOOGLE_IGNORED.contains(&keyword) || REFUSED.contains(&keyword) {
        families.push(("Google", GOOGLE_PROVIDERS));
    }
    families
}
