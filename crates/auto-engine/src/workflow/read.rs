//! Reading a workflow document: the top fields ("Document fields"), `use`, `evaluate`, the
//! document's schemas, and the reader every other stage writes its issues through.

use auto_doc::{Issue, Located, YamlConfig, pointer, read_yaml};
use auto_schema::{SchemaRole, check_schema, shape_schema};
use serde_json::{Map, Value};

use super::model::WorkflowDocument;
use super::{DSL_VERSIONS, WorkflowLimits};
use crate::reasoning::OUTPUT_SHAPES;

const TOP_KEYS: [&str; 8] = [
    "document", "input", "use", "do", "schedule", "evaluate", "output", "timeout",
];
const DOCUMENT_KEYS: [&str; 8] = [
    "dsl",
    "namespace",
    "name",
    "version",
    "title",
    "summary",
    "tags",
    "metadata",
];
const USE_KEYS: [&str; 3] = ["errors", "retries", "timeouts"];
/// `use` fields the DSL has and the runtime does not support ("Saving a document").
const USE_REFUSED: [&str; 5] = [
    "catalogs",
    "extensions",
    "functions",
    "secrets",
    "authentications",
];

/// Collects issues against the document's positions, and what later checks need to know.
pub(super) struct Reader<'a> {
    pub doc: &'a Located,
    pub source: &'a str,
    pub issues: Vec<Issue>,
    pub limits: &'a WorkflowLimits,
    pub expired: Option<&'a dyn Fn() -> bool>,
    pub timed_out: bool,
    pub use_errors: Vec<String>,
    pub use_retries: Vec<String>,
    pub use_timeouts: Vec<String>,
    pub uses: Vec<String>,
}

impl<'a> Reader<'a> {
    pub fn at(&mut self, pointer: &str, text: impl Into<String>) {
        self.issues.push(self.doc.issue_at(pointer, text));
    }

    pub fn at_key(&mut self, pointer: &str, text: impl Into<String>) {
        self.issues.push(self.doc.issue_at_key(pointer, text));
    }

    pub fn get(&self, pointer: &str) -> Option<&'a Value> {
        self.doc.value().pointer(pointer)
    }

    /// Refuses every key of the mapping at `pointer` outside `allowed`.
    pub fn only_keys(&mut self, pointer: &str, allowed: &[&str]) {
        let Some(Value::Object(map)) = self.get(pointer) else {
            return;
        };
        for key in map.keys().filter(|k| !allowed.contains(&k.as_str())) {
            let at = pointer::child_pointer(pointer, key);
            let text = format!("Unknown key: the keys here are {}.", allowed.join(", "));
            self.at_key(&at, text);
        }
    }

    /// The mapping at `pointer`, or an issue when something else is there.
    pub fn object(&mut self, pointer: &str) -> Option<&'a Map<String, Value>> {
        match self.get(pointer)? {
            Value::Object(map) => Some(map),
            _ => {
                self.at(pointer, "Expected a mapping.");
                None
            }
        }
    }

    pub fn string(&mut self, pointer: &str) -> Option<&'a str> {
        match self.get(pointer)? {
            Value::String(text) => Some(text),
            _ => {
                self.at(pointer, "Expected text.");
                None
            }
        }
    }

    /// A required string: "It needs <field>" at the parent when missing.
    pub fn required_string(&mut self, parent: &str, field: &str) -> Option<&'a str> {
        let at = pointer::child_pointer(parent, field);
        if self.get(&at).is_none() {
            if self.get(parent).is_some_and(Value::is_object) {
                self.at(parent, format!("It needs {field}"));
            }
            return None;
        }
        self.string(&at)
    }
}

/// Checks a workflow's source; the document, or every problem found (unsorted; the registry
/// sorts, removes duplicates and caps them). `expired` is asked before each expression.
pub fn check_workflow(
    source: &str,
    limits: &WorkflowLimits,
    expired: Option<&dyn Fn() -> bool>,
) -> Result<WorkflowDocument, Vec<Issue>> {
    let read = read_yaml(source, &YamlConfig::workflow());
    let mut reader = Reader {
        doc: &read.document,
        source,
        issues: read.issues.clone(),
        limits,
        expired,
        timed_out: false,
        use_errors: Vec::new(),
        use_retries: Vec::new(),
        use_timeouts: Vec::new(),
        uses: Vec::new(),
    };
    if !read.complete {
        return Err(reader.issues);
    }
    if !reader.doc.value().is_object() {
        reader.at(
            "",
            "A workflow is a mapping with document, do and the other fields of the DSL.",
        );
        return Err(reader.issues);
    }
    reader.only_keys("", &TOP_KEYS);
    let mut document = WorkflowDocument::default();
    read_header(&mut reader, &mut document);
    read_use(&mut reader);
    read_evaluate(&mut reader);
    read_input(&mut reader, &mut document);
    read_output(&mut reader, &mut document);
    if let Some(value) = reader.get("/timeout") {
        reader.timeout("/timeout", value, &super::expressions::Scope::document());
    }
    document.schedule = reader.schedule();
    if reader.get("/do").is_none() {
        reader.at("", "It needs do");
    } else {
        document.tasks = reader.task_list("/do", 1, &super::expressions::Scope::top(), false);
    }
    if reader.timed_out {
        reader.at("", auto_script::CheckTimedOut.to_string());
    }
    if !reader.issues.is_empty() {
        return Err(reader.issues);
    }
    document.uses = reader.uses;
    Ok(document)
}

fn read_header(reader: &mut Reader<'_>, document: &mut WorkflowDocument) {
    if reader.get("/document").is_none() {
        reader.at("", "It needs document");
        return;
    }
    if reader.object("/document").is_none() {
        return;
    }
    reader.only_keys("/document", &DOCUMENT_KEYS);
    if let Some(dsl) = reader.required_string("/document", "dsl") {
        if DSL_VERSIONS.contains(&dsl) {
            document.dsl = dsl.to_owned();
        } else {
            reader.at(
                "/document/dsl",
                "Expected a DSL version from 1.0.0 to 1.0.3.",
            );
        }
    }
    for field in ["namespace", "name"] {
        if let Some(text) = reader.required_string("/document", field) {
            if text.is_empty() {
                reader.at(
                    &format!("/document/{field}"),
                    "Expected a name, not empty text.",
                );
            } else if field == "name" {
                document.name = text.to_owned();
            } else {
                document.namespace = text.to_owned();
            }
        }
    }
    if let Some(version) = reader.required_string("/document", "version") {
        if is_semantic_version(version) {
            document.version = version.to_owned();
        } else {
            reader.at(
                "/document/version",
                "Expected a semantic version, such as 1.0.0.",
            );
        }
    }
    document.title = reader.string("/document/title").map(str::to_owned);
    document.summary = reader.string("/document/summary").map(str::to_owned);
}

/// `major.minor.patch`, each a whole number without leading zeros, with an optional
/// pre-release or build part.
fn is_semantic_version(text: &str) -> bool {
    let core = text.split(['-', '+']).next().unwrap_or_default();
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts.iter().all(|part| {
            !part.is_empty()
                && part.bytes().all(|b| b.is_ascii_digit())
                && (part.len() == 1 || !part.starts_with('0'))
        })
}

fn read_use(reader: &mut Reader<'_>) {
    let Some(map) = reader.get("/use") else {
        return;
    };
    if reader.object("/use").is_none() {
        return;
    }
    let Value::Object(map) = map else { return };
    for key in map.keys() {
        let at = pointer::child_pointer("/use", key);
        if USE_REFUSED.contains(&key.as_str()) {
            reader.at_key(&at, format!("use.{key} is not supported."));
        } else if !USE_KEYS.contains(&key.as_str()) {
            reader.at_key(
                &at,
                "Unknown key: the keys here are errors, retries, timeouts.",
            );
        }
    }
    for (kind, names) in [("errors", 0), ("retries", 1), ("timeouts", 2)] {
        let at = format!("/use/{kind}");
        let Some(entries) = reader.get(&at) else {
            continue;
        };
        if reader.object(&at).is_none() {
            continue;
        }
        let Value::Object(entries) = entries else {
            continue;
        };
        let list: Vec<String> = entries.keys().cloned().collect();
        match names {
            0 => reader.use_errors = list,
            1 => reader.use_retries = list,
            _ => reader.use_timeouts = list,
        }
        let scope = super::expressions::Scope::catch_scope(None);
        for name in entries.keys() {
            let item = pointer::child_pointer(&at, name);
            let Some(value) = reader.get(&item) else {
                continue;
            };
            match kind {
                "errors" => reader.error_definition(&item, value, &scope),
                "retries" => reader.retry_policy(&item, &scope),
                _ => reader.timeout_definition(&item, &scope),
            }
        }
    }
}

fn read_evaluate(reader: &mut Reader<'_>) {
    if reader.get("/evaluate").is_none() || reader.object("/evaluate").is_none() {
        return;
    }
    reader.only_keys("/evaluate", &["language", "mode"]);
    if let Some(language) = reader.string("/evaluate/language")
        && language != "typescript"
    {
        reader.at(
            "/evaluate/language",
            "The language is typescript: an expression that fails must fail, in the one language of the playbook.",
        );
    }
    if let Some(mode) = reader.string("/evaluate/mode")
        && mode != "strict"
    {
        reader.at(
            "/evaluate/mode",
            "The mode is strict: an expression that fails must fail.",
        );
    }
}

fn read_input(reader: &mut Reader<'_>, document: &mut WorkflowDocument) {
    if reader.get("/input").is_none() || reader.object("/input").is_none() {
        return;
    }
    reader.only_keys("/input", &["schema", "from"]);
    document.input_schema = reader.schema("/input/schema", SchemaRole::Input);
    if let Some(value) = reader.get("/input/from") {
        let scope = super::expressions::Scope::document();
        reader.shaping("/input/from", value, &scope.with(&["$data"]));
    }
}

fn read_output(reader: &mut Reader<'_>, document: &mut WorkflowDocument) {
    if reader.get("/output").is_none() || reader.object("/output").is_none() {
        return;
    }
    reader.only_keys("/output", &["as", "schema", "shape"]);
    document.output_schema = reader.schema("/output/schema", SchemaRole::Output);
    if let Some(shape) = reader.string("/output/shape") {
        if !OUTPUT_SHAPES.contains(&shape) || shape_schema(shape).is_none() {
            reader.at(
                "/output/shape",
                "Expected the name of an output shape: series, categories, table or text.",
            );
        } else if reader.get("/output/schema").is_some() {
            reader.at("/output/shape", "Not allowed beside output.schema.");
        } else {
            document.output_shape = Some(shape.to_owned());
        }
    }
    if let Some(value) = reader.get("/output/as") {
        let scope = super::expressions::Scope::document();
        reader.shaping(
            "/output/as",
            value,
            &scope.with(&["$data", "$input", "$context"]),
        );
    }
}

impl Reader<'_> {
    /// An inline JSON Schema under `document`, checked for its role; problems at their place.
    pub fn schema(&mut self, at: &str, role: SchemaRole) -> Option<Value> {
        self.get(at)?;
        self.object(at)?;
        self.only_keys(at, &["format", "document", "resource"]);
        if self.get(&format!("{at}/resource")).is_some() {
            self.at_key(
                &format!("{at}/resource"),
                "Schemas are written inline under document: an external schema is not fetched.",
            );
        }
        if let Some(format) = self.string(&format!("{at}/format"))
            && format != "json"
        {
            self.at(
                &format!("{at}/format"),
                "Schemas are written as JSON Schema: the format is json.",
            );
        }
        let document_at = format!("{at}/document");
        let schema = self.get(&document_at)?;
        let report = check_schema(schema, role);
        for problem in &report.problems {
            self.at(
                &format!("{document_at}{}", problem.pointer),
                problem.text.clone(),
            );
        }
        report.is_ok().then(|| schema.clone())
    }
}
