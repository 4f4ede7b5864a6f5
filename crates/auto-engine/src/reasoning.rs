//! Reasoning function documents: the save-time rules of the reasoning page ("A function
//! document", "Fields", "How a document is checked", "The template", "Answers that are JSON",
//! "Tools", "Provider options").
//!
//! The front matter is read strictly by `auto-doc`; this module checks each field of the
//! page's table, hands schemas to `auto-schema` and the template to `auto-template`, and maps
//! every problem to its line and pointer.

use std::collections::HashSet;
use std::sync::Arc;

use auto_doc::{Issue, Located, YamlConfig, pointer, read_markdown};
use auto_schema::{CompiledSchema, SchemaRole, check_schema, shape_schema};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::definitions::{Checked, DefinitionChecker};
use crate::provider_options;

/// "config.max_output_tokens: A whole number from 1 to 64,000; 1,024 when left out."
pub const MAX_OUTPUT_TOKENS_MIN: u64 = 1;
pub const MAX_OUTPUT_TOKENS_MAX: u64 = 64_000;
pub const MAX_OUTPUT_TOKENS_DEFAULT: u64 = 1_024;
/// "description: Text of 1 to 1,000 characters."
pub const DESCRIPTION_CHARS_MAX: usize = 1_000;
/// "config.reasoning: none, minimal, low, medium, high or xhigh."
pub const REASONING_EFFORTS: [&str; 6] = ["none", "minimal", "low", "medium", "high", "xhigh"];
/// "output.shape: The name of an output shape, series, categories, table or text."
pub const OUTPUT_SHAPES: [&str; 4] = ["series", "categories", "table", "text"];
/// A tool server's name in `tools`: what the configuration may name a server or connection.
pub const TOOL_SERVER_CHARS_MAX: usize = 64;
/// A tool's name, as MCP names tools (1 to 128 characters).
pub const TOOL_NAME_CHARS_MAX: usize = 128;

const TOP_KEYS: [&str; 7] = [
    "description",
    "model",
    "config",
    "input",
    "output",
    "provider_options",
    "tools",
];
const CONFIG_KEYS: [&str; 6] = [
    "max_output_tokens",
    "temperature",
    "top_p",
    "seed",
    "stop_sequences",
    "reasoning",
];
const INPUT_KEYS: [&str; 2] = ["schema", "default"];
const OUTPUT_KEYS: [&str; 3] = ["format", "schema", "shape"];

/// The settings of a reasoning function, as a run reads them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ReasoningConfig {
    pub max_output_tokens: u64,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub seed: Option<u64>,
    pub stop_sequences: Vec<String>,
    pub reasoning: Option<String>,
}

/// A tool the function may call: `server/tool`, or `server/*` for every allowed tool.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ToolRef {
    pub server: String,
    /// `None` for `server/*`.
    pub tool: Option<String>,
}

/// A reasoning function's document after it passed the checks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReasoningDocument {
    pub description: Option<String>,
    pub model: String,
    pub config: ReasoningConfig,
    pub input_schema: Option<Value>,
    pub input_default: Option<Map<String, Value>>,
    /// `json` when the answer is JSON (a schema or a shape), else `text`.
    pub output_format: String,
    pub output_schema: Option<Value>,
    pub output_shape: Option<String>,
    pub provider_options: Map<String, Value>,
    pub tools: Vec<ToolRef>,
    pub template: String,
    /// The line of the source where the template starts.
    pub template_first_line: u32,
    pub warnings: Vec<String>,
    /// What every run uses of the fields above, built once when the document is checked.
    #[serde(skip)]
    pub built: ReasoningBuilt,
}

/// The parts of a reasoning document that a run uses built rather than as written: its
/// template parsed, its input schema compiled, and the schema its answer is checked against
/// compiled. Built with the check, so a run renders and validates without parsing or
/// compiling anything again (compiling a schema cost a tenth of a run's own time).
#[derive(Clone, Debug)]
pub struct ReasoningBuilt {
    pub template: Arc<auto_template::Template>,
    /// The input schema's validator, or why it cannot be built.
    pub input_schema: Option<Result<Arc<CompiledSchema>, String>>,
    /// The output schema's validator when the answer is checked against a schema (not a
    /// shape), or why it cannot be built.
    pub output_schema: Option<Result<Arc<CompiledSchema>, String>>,
}

/// Built from the document's own fields, which the document's equality compares.
impl PartialEq for ReasoningBuilt {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The checker `create_definition` runs for the type reasoning.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReasoningChecker;

impl DefinitionChecker for ReasoningChecker {
    fn check(&self, source: &str) -> Result<Checked, Vec<Issue>> {
        let document = check_reasoning(source)?;
        Ok(Checked {
            description: document.description,
            warnings: document.warnings,
            input_schema: document.input_schema,
            output_schema: document.output_schema,
            ..Checked::default()
        })
    }
}

/// Collects issues against the front matter's positions.
pub(crate) struct Fields<'a> {
    pub(crate) doc: &'a Located,
    pub(crate) issues: Vec<Issue>,
    /// Where the YAML reader already found a problem (an alias, a number that is not finite, a
    /// key written twice). The reader leaves `null` or one of the values there, so a field's
    /// own check at or under such a place would report the same problem a second time, in
    /// other words ("Aliases are not allowed." then "Expected string.").
    read_problems: Vec<String>,
}

impl<'a> Fields<'a> {
    /// Fields over a read front matter, starting with the reader's own issues.
    pub(crate) fn new(doc: &'a Located, read_issues: &[Issue]) -> Self {
        let read_problems = read_issues
            .iter()
            .filter(|issue| !issue.path.is_empty())
            .map(|issue| issue.path.clone())
            .collect();
        Self {
            doc,
            issues: read_issues.to_vec(),
            read_problems,
        }
    }

    pub(crate) fn at(&mut self, pointer: &str, text: impl Into<String>) {
        if !self.already_reported(pointer) {
            self.issues.push(self.doc.issue_at(pointer, text));
        }
    }

    fn at_key(&mut self, pointer: &str, text: impl Into<String>) {
        if !self.already_reported(pointer) {
            self.issues.push(self.doc.issue_at_key(pointer, text));
        }
    }

    fn already_reported(&self, pointer: &str) -> bool {
        self.read_problems.iter().any(|at| {
            pointer == at
                || pointer
                    .strip_prefix(at.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        })
    }

    /// The value at `pointer`, borrowed from the document rather than from `self`, so that a
    /// check may hold it while it reports issues: schemas are large and are not copied.
    pub(crate) fn get(&self, pointer: &str) -> Option<&'a Value> {
        self.doc.value().pointer(pointer)
    }

    /// Refuses every key of the mapping at `pointer` outside `allowed`.
    pub(crate) fn only_keys(&mut self, pointer: &str, allowed: &[&str]) {
        let Some(Value::Object(map)) = self.get(pointer) else {
            return;
        };
        let unknown: Vec<String> = map
            .keys()
            .filter(|k| !allowed.contains(&k.as_str()))
            .cloned()
            .collect();
        for key in unknown {
            let at = pointer::child_pointer(pointer, &key);
            let text = format!(
                "Unknown key: the keys here are {}.",
                provider_options::and_list(allowed)
            );
            self.at_key(&at, text);
        }
    }

    /// The mapping at `pointer`, or an issue when something else is there.
    pub(crate) fn object(&mut self, pointer: &str) -> Option<&'a Map<String, Value>> {
        match self.get(pointer)? {
            Value::Object(map) => Some(map),
            _ => {
                self.at(pointer, "Expected object.");
                None
            }
        }
    }

    pub(crate) fn string(&mut self, pointer: &str) -> Option<String> {
        match self.get(pointer)? {
            Value::String(text) => Some(text.clone()),
            _ => {
                self.at(pointer, "Expected string.");
                None
            }
        }
    }

    pub(crate) fn number(&mut self, pointer: &str) -> Option<f64> {
        match self.get(pointer)? {
            Value::Number(n) => n.as_f64(),
            _ => {
                self.at(pointer, "Expected number.");
                None
            }
        }
    }

    /// A whole number within `min..=max`, or `text` at the pointer.
    pub(crate) fn whole(&mut self, pointer: &str, min: u64, max: u64, text: &str) -> Option<u64> {
        let value = self.get(pointer)?;
        let whole = value.as_u64().or_else(|| {
            value
                .as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
                .map(|f| f as u64)
        });
        match whole {
            Some(n) if (min..=max).contains(&n) => Some(n),
            _ => {
                self.at(pointer, text);
                None
            }
        }
    }
}

/// Checks a reasoning function's source; the document, or every problem found.
pub fn check_reasoning(source: &str) -> Result<ReasoningDocument, Vec<Issue>> {
    let read = read_markdown(source, &YamlConfig::front_matter());
    let mut fields = Fields::new(&read.front_matter, &read.issues);
    if !read.complete {
        return Err(fields.issues);
    }
    if !fields.doc.value().is_object() {
        fields.at("", "The front matter must be a mapping of the fields description, model, config, input, output, provider_options and tools.");
        return Err(fields.issues);
    }
    fields.only_keys("", &TOP_KEYS);
    let description = check_description(&mut fields);
    let model = check_model(&mut fields);
    let config = check_config(&mut fields);
    let mut warnings = Vec::new();
    let input = check_input(&mut fields, &mut warnings);
    let model_provider = model
        .as_deref()
        .and_then(|m| m.split_once('/'))
        .map(|(p, _)| p);
    let output = check_output(&mut fields, &mut warnings, model_provider);
    let provider_options = check_provider_options(&mut fields);
    let tools = check_tools(&mut fields);
    check_template(
        &mut fields,
        read.body,
        read.body_first_line,
        input.closed_fields,
    );
    if !fields.issues.is_empty() {
        return Err(fields.issues.into_iter().map(as_sentence).collect());
    }
    let published_output_schema = output
        .schema
        .or_else(|| output.shape.as_deref().and_then(shape_schema));
    let built = ReasoningBuilt {
        // A template the check passed parses; its problems, were it not to.
        template: Arc::new(auto_template::parse(read.body).map_err(|problems| {
            problems
                .into_iter()
                .map(|problem| as_sentence(template_issue(read.body_first_line, problem)))
                .collect::<Vec<_>>()
        })?),
        input_schema: input.schema.as_ref().map(built_schema),
        output_schema: match (&output.shape, &published_output_schema) {
            (None, Some(schema)) => Some(built_schema(schema)),
            _ => None,
        },
    };
    Ok(ReasoningDocument {
        description,
        model: model.unwrap_or_default(),
        config,
        input_schema: input.schema,
        input_default: input.default,
        output_format: output.format,
        output_schema: published_output_schema,
        output_shape: output.shape,
        provider_options,
        tools,
        template: read.body.to_owned(),
        template_first_line: read.body_first_line,
        warnings: shown_warnings(warnings),
        built,
    })
}

/// The reasoning page writes every problem as a sentence ("Expected number.", "effort is not
/// offered: the front matter sets it."); the schema and template checkers leave the final
/// period to their caller.
fn as_sentence(mut issue: Issue) -> Issue {
    if !issue.text.ends_with(['.', '?', '!']) {
        issue.text.push('.');
    }
    issue
}

/// "A definition shows at most 100 warnings": in line order, as problems are, each once.
/// The sort is stable, so warnings on one line keep the order the schema checker gave them.
fn shown_warnings(mut warnings: Vec<Issue>) -> Vec<String> {
    warnings.sort_by_key(|warning| warning.line);
    let mut seen = HashSet::new();
    warnings
        .into_iter()
        .map(|warning| warning.message())
        .filter(|message| seen.insert(message.clone()))
        .take(auto_schema::WARNINGS_MAX)
        .collect()
}

pub(crate) fn check_description(fields: &mut Fields<'_>) -> Option<String> {
    let text = fields.string("/description")?;
    let chars = text.chars().count();
    if chars == 0 || chars > DESCRIPTION_CHARS_MAX {
        fields.at("/description", "Expected text of 1 to 1,000 characters.");
        return None;
    }
    Some(text)
}

const MODEL_FORM: &str =
    "Expected a model reference in provider/model form, such as anthropic/claude-sonnet-4-5.";

fn check_model(fields: &mut Fields<'_>) -> Option<String> {
    if fields.get("/model").is_none() {
        fields.at("/model", "Required: a model reference in provider/model form, such as anthropic/claude-sonnet-4-5.");
        return None;
    }
    let text = fields.string("/model")?;
    // The provider is a provider's name or a gateway's, and a gateway's name is "a lowercase
    // letter, then up to 31 letters, digits and hyphens"; the model's id is the provider's own
    // (it may hold further slashes, as a gateway's `org/model` does).
    let well_formed = text.split_once('/').is_some_and(|(provider, model)| {
        provider_options::is_gateway_shaped(provider)
            && !model.is_empty()
            && !model.chars().any(char::is_whitespace)
    });
    if !well_formed {
        fields.at("/model", MODEL_FORM);
        return None;
    }
    Some(text)
}

fn check_config(fields: &mut Fields<'_>) -> ReasoningConfig {
    let mut config = ReasoningConfig {
        max_output_tokens: MAX_OUTPUT_TOKENS_DEFAULT,
        ..ReasoningConfig::default()
    };
    if fields.object("/config").is_none() {
        return config;
    }
    fields.only_keys("/config", &CONFIG_KEYS);
    if let Some(n) = fields.whole(
        "/config/max_output_tokens",
        MAX_OUTPUT_TOKENS_MIN,
        MAX_OUTPUT_TOKENS_MAX,
        "Expected a whole number from 1 to 64,000.",
    ) {
        config.max_output_tokens = n;
    }
    config.temperature = fields.number("/config/temperature");
    config.top_p = fields.number("/config/top_p");
    config.seed = fields.whole(
        "/config/seed",
        0,
        u64::MAX,
        "Expected a whole number of 0 or more.",
    );
    if let Some(value) = fields.get("/config/stop_sequences") {
        match value {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    match item {
                        Value::String(text) => config.stop_sequences.push(text.clone()),
                        _ => fields.at(&format!("/config/stop_sequences/{i}"), "Expected string."),
                    }
                }
            }
            _ => fields.at("/config/stop_sequences", "Expected a list of strings."),
        }
    }
    if let Some(effort) = fields.string("/config/reasoning") {
        if REASONING_EFFORTS.contains(&effort.as_str()) {
            config.reasoning = Some(effort);
        } else {
            fields.at(
                "/config/reasoning",
                "Expected one of none, minimal, low, medium, high or xhigh.",
            );
        }
    }
    config
}

/// Checks a schema written at `base` (such as `/input/schema`): its problems become issues,
/// its warnings (provider gaps, keywords the runtime does not know) join `warnings`. True when
/// the schema may be saved.
pub(crate) fn check_schema_at(
    fields: &mut Fields<'_>,
    warnings: &mut Vec<Issue>,
    base: &str,
    schema: &Value,
    role: SchemaRole,
) -> bool {
    check_schema_reaching(fields, warnings, base, schema, role, None)
}

/// [`check_schema_at`], keeping only the warnings about providers a run of a model of
/// `provider` can reach ([`auto_schema::SchemaWarning::reaches`]); all of them without one.
fn check_schema_reaching(
    fields: &mut Fields<'_>,
    warnings: &mut Vec<Issue>,
    base: &str,
    schema: &Value,
    role: SchemaRole,
    provider: Option<&str>,
) -> bool {
    let report = check_schema(schema, role);
    for problem in &report.problems {
        fields.at(&format!("{base}{}", problem.pointer), problem.text.clone());
    }
    let reached = report
        .warnings
        .into_iter()
        .filter(|warning| provider.is_none_or(|provider| warning.reaches(provider)));
    for warning in reached {
        let at = format!("{base}{}", warning.pointer);
        warnings.push(fields.doc.issue_at(&at, warning.text));
    }
    report.problems.is_empty()
}

/// The input contract as read.
pub(crate) struct InputParts {
    pub(crate) schema: Option<Value>,
    pub(crate) default: Option<Map<String, Value>>,
    /// The fields a template may name, when the schema lists its properties and sets
    /// `additionalProperties: false`.
    pub(crate) closed_fields: Option<Vec<String>>,
}

pub(crate) fn check_input(fields: &mut Fields<'_>, warnings: &mut Vec<Issue>) -> InputParts {
    if fields.object("/input").is_none() {
        return InputParts {
            schema: None,
            default: None,
            closed_fields: None,
        };
    }
    fields.only_keys("/input", &INPUT_KEYS);
    let schema = fields.get("/input/schema");
    let schema_ok = match &schema {
        Some(schema) => {
            check_schema_at(fields, warnings, "/input/schema", schema, SchemaRole::Input)
        }
        None => true,
    };
    let default = fields.object("/input/default");
    let written_default = fields.get("/input/default").filter(|_| default.is_some());
    if let (Some(schema), Some(written), true) = (schema, written_default, schema_ok) {
        check_default(fields, schema, written);
    }
    let closed_fields = schema.and_then(closed_properties);
    InputParts {
        schema: schema.cloned(),
        default: default.cloned(),
        closed_fields,
    }
}

fn closed_properties(schema: &Value) -> Option<Vec<String>> {
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return None;
    }
    let properties = schema.get("properties")?.as_object()?;
    Some(properties.keys().cloned().collect())
}

/// The root keywords that speak of fields the defaults may leave to the input: "Required
/// fields may be left for the input to supply", and a count of properties is met only once the
/// input's own fields join the defaults.
const DEFAULT_RELAXED_KEYWORDS: [&str; 2] = ["required", "minProperties"];

/// "input.default must match the input schema for the fields it names. Required fields may
/// be left for the input to supply."
///
/// The defaults are checked against the input schema without its root's
/// [`DEFAULT_RELAXED_KEYWORDS`]. A field's own schema applies whole, `required` within it
/// too: the input's field replaces the default's whole, so a default must stand alone. The
/// issues use the answer's words ("Expected a number of at least 10"), since the pointer
/// already names the field.
fn check_default(fields: &mut Fields<'_>, schema: &Value, default: &Value) {
    let mut relaxed = schema.clone();
    if let Some(map) = relaxed.as_object_mut() {
        for keyword in DEFAULT_RELAXED_KEYWORDS {
            map.remove(keyword);
        }
    }
    let Ok(compiled) = CompiledSchema::compile(&relaxed) else {
        return;
    };
    for issue in compiled.validate(default) {
        fields.at(
            &format!("/input/default{}", issue.pointer),
            issue.text.clone(),
        );
    }
}

/// The output contract as read.
struct OutputParts {
    /// `json` when the answer is JSON (a schema or a shape), else `text`.
    format: String,
    schema: Option<Value>,
    shape: Option<String>,
}

/// "output.format: text, the default, or json"; "output.schema: With json. Not allowed with
/// text"; "output.shape: the answer is JSON of that shape. Not allowed beside output.schema
/// or with text".
///
/// A shape alone makes the answer JSON: the page says so of the shape, and only refuses it
/// with text written out. A schema alone is refused: the page allows it only with json, and
/// the format is text when left out, so the answer would not be read as JSON at all.
fn check_output(
    fields: &mut Fields<'_>,
    warnings: &mut Vec<Issue>,
    model_provider: Option<&str>,
) -> OutputParts {
    if fields.object("/output").is_none() {
        return OutputParts {
            format: "text".into(),
            schema: None,
            shape: None,
        };
    }
    fields.only_keys("/output", &OUTPUT_KEYS);
    let format = fields.string("/output/format");
    let format_ok = match format.as_deref() {
        None | Some("text") | Some("json") => true,
        Some(_) => {
            fields.at("/output/format", "Expected text or json.");
            false
        }
    };
    let json_written = format.as_deref() == Some("json");
    let schema = fields.get("/output/schema");
    let shape = fields.string("/output/shape");
    if let Some(schema) = &schema {
        match format.as_deref() {
            Some("json") => {
                check_schema_reaching(
                    fields,
                    warnings,
                    "/output/schema",
                    schema,
                    SchemaRole::Output,
                    model_provider,
                );
            }
            Some("text") => fields.at("/output/schema", "Not allowed with output.format text."),
            None => fields.at(
                "/output/schema",
                "Allowed only with output.format json; the format is text when left out.",
            ),
            Some(_) => {}
        }
    }
    if json_written && schema.is_none() && shape.is_none() {
        fields.at(
            "/output/schema",
            "Required with output.format json: a JSON Schema the answer must match.",
        );
    }
    if let Some(shape) = &shape {
        if !OUTPUT_SHAPES.contains(&shape.as_str()) {
            fields.at(
                "/output/shape",
                "Expected one of series, categories, table or text.",
            );
        } else if schema.is_some() {
            fields.at("/output/shape", "Not allowed beside output.schema.");
        } else if format.as_deref() == Some("text") {
            fields.at("/output/shape", "Not allowed with output.format text.");
        }
    }
    let json = format_ok && (json_written || shape.is_some());
    OutputParts {
        format: if json { "json".into() } else { "text".into() },
        schema: schema.cloned(),
        shape,
    }
}

fn check_provider_options(fields: &mut Fields<'_>) -> Map<String, Value> {
    let Some(options) = fields.object("/provider_options") else {
        return Map::new();
    };
    for (namespace, value) in options {
        let at = pointer::child_pointer("/provider_options", namespace);
        for refusal in provider_options::check_namespace(namespace, value) {
            let pointer = format!("{at}{}", refusal.pointer);
            if refusal.at_key {
                fields.at_key(&pointer, refusal.text);
            } else {
                fields.at(&pointer, refusal.text);
            }
        }
    }
    options.clone()
}

fn check_tools(fields: &mut Fields<'_>) -> Vec<ToolRef> {
    let Some(value) = fields.get("/tools") else {
        return Vec::new();
    };
    let Value::Array(items) = value else {
        fields.at(
            "/tools",
            "Expected a list of tools, each server/tool or server/*.",
        );
        return Vec::new();
    };
    let mut seen = HashSet::new();
    let mut tools = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let at = format!("/tools/{i}");
        match item.as_str().and_then(parse_tool) {
            Some(tool) if !seen.insert(tool.clone()) => {
                fields.at(
                    &at,
                    format!("{} is listed twice.", item.as_str().unwrap_or_default()),
                );
            }
            Some(tool) => tools.push(tool),
            None => fields.at(
                &at,
                "Expected server/tool or server/*, such as graph/search or notes/*.",
            ),
        }
    }
    tools
}

pub(crate) fn parse_tool(text: &str) -> Option<ToolRef> {
    let (server, tool) = text.split_once('/')?;
    let server_ok = (1..=TOOL_SERVER_CHARS_MAX).contains(&server.len())
        && server
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !server_ok {
        return None;
    }
    if tool == "*" {
        return Some(ToolRef {
            server: server.into(),
            tool: None,
        });
    }
    let tool_ok = (1..=TOOL_NAME_CHARS_MAX).contains(&tool.len())
        && tool
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    tool_ok.then(|| ToolRef {
        server: server.into(),
        tool: Some(tool.into()),
    })
}

fn check_template(
    fields: &mut Fields<'_>,
    body: &str,
    first_line: u32,
    input_fields: Option<Vec<String>>,
) {
    let config = auto_template::CheckConfig { input_fields };
    for problem in auto_template::check(body, &config) {
        fields.issues.push(template_issue(first_line, problem));
    }
}

/// A template's problem at its line in the source, the template starting at `first_line`.
fn template_issue(first_line: u32, problem: auto_template::TemplateProblem) -> Issue {
    let line = first_line.saturating_add(problem.line).saturating_sub(1);
    Issue::at_line(line, "", problem.text)
}

/// A schema's validator as a run keeps it, or why it cannot be built.
fn built_schema(schema: &Value) -> Result<Arc<CompiledSchema>, String> {
    CompiledSchema::compile(schema)
        .map(Arc::new)
        .map_err(|error| error.to_string())
}
