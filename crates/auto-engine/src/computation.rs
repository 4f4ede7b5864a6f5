//! Computation functions (supplement §7): Markdown with YAML front matter (description, input
//! schema and defaults, output schema or shape) and one fenced `ts` block whose default export
//! is a function from the input to the output. A run executes it in the QuickJS sandbox, with
//! the clock fixed to the run's start.

use auto_doc::{Issue, YamlConfig, read_markdown};
use auto_schema::{CompiledSchema, SchemaRole, check_shape, shape_schema};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::definitions::{Checked, DefinitionChecker};
use crate::reasoning::{Fields, OUTPUT_SHAPES, check_description, check_input, check_schema_at};

const TOP_KEYS: [&str; 3] = ["description", "input", "output"];
const OUTPUT_KEYS: [&str; 2] = ["schema", "shape"];
/// The info strings that open the program's fenced block.
pub const PROGRAM_FENCES: [&str; 2] = ["ts", "typescript"];

/// A computation function's document after it passed the checks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ComputationDocument {
    pub description: Option<String>,
    pub input_schema: Option<Value>,
    pub input_default: Option<Map<String, Value>>,
    /// The output contract: the written schema, or the shape's.
    pub output_schema: Option<Value>,
    pub output_shape: Option<String>,
    /// The TypeScript program.
    pub program: String,
    /// The source line of the program's first line.
    pub program_first_line: u32,
    /// What the schemas' providers-neutral checks warn of, such as keywords the runtime does
    /// not know.
    pub warnings: Vec<String>,
}

/// The checker `create_definition` runs for the type computation.
#[derive(Clone, Copy, Debug, Default)]
pub struct ComputationChecker;

impl DefinitionChecker for ComputationChecker {
    fn check(&self, source: &str) -> Result<Checked, Vec<Issue>> {
        let document = check_computation(source)?;
        Ok(Checked {
            description: document.description,
            warnings: document.warnings,
            input_schema: document.input_schema,
            output_schema: document.output_schema,
            ..Checked::default()
        })
    }
}

/// The one fenced `ts` block of a body of a `noun` (such as "computation function"): its text
/// and its first line in the source, or the issue.
pub(crate) fn find_program(
    body: &str,
    body_first_line: u32,
    noun: &str,
) -> Result<(String, u32), Issue> {
    let mut blocks = Vec::new();
    let mut open: Option<(u32, String, Vec<&str>)> = None;
    for (index, line) in body.lines().enumerate() {
        let number = body_first_line + index as u32;
        let trimmed = line.trim_end();
        match &mut open {
            Some((_, fence, lines)) if trimmed.trim_start() == fence.as_str() => {
                let (start, _, lines) = open.take().unwrap_or_default();
                blocks.push((start, lines.join("\n")));
                let _ = lines;
            }
            Some((_, _, lines)) => lines.push(line),
            None => {
                let start = trimmed.trim_start();
                let fence_len = start.chars().take_while(|&c| c == '`').count();
                if fence_len >= 3 && PROGRAM_FENCES.contains(&start[fence_len..].trim()) {
                    open = Some((number + 1, "`".repeat(fence_len), Vec::new()));
                }
            }
        }
    }
    if let Some((start, _, _)) = open {
        return Err(Issue::at_line(start - 1, "", "The ts block is not closed."));
    }
    match blocks.len() {
        1 => Ok(blocks.remove(0)).map(|(start, text)| (text, start)),
        0 => Err(Issue::at_line(
            body_first_line,
            "",
            format!(
                "The body has no ```ts block: a {noun}'s program is the one fenced ts block of its body."
            ),
        )),
        _ => Err(Issue::at_line(
            blocks[1].0 - 1,
            "",
            format!("The body has more than one ```ts block: a {noun} has one program."),
        )),
    }
}

/// Checks a computation function's source; the document, or every problem found.
pub fn check_computation(source: &str) -> Result<ComputationDocument, Vec<Issue>> {
    let read = read_markdown(source, &YamlConfig::front_matter());
    let mut fields = Fields::new(&read.front_matter, &read.issues);
    let mut warnings = Vec::new();
    if !read.complete {
        return Err(fields.issues);
    }
    if !fields.doc.value().is_object() && !fields.doc.value().is_null() {
        fields.at(
            "",
            "The front matter must be a mapping of the fields description, input and output.",
        );
        return Err(fields.issues);
    }
    fields.only_keys("", &TOP_KEYS);
    let description = check_description(&mut fields);
    let input = check_input(&mut fields, &mut warnings);
    let (input_schema, input_default) = (input.schema, input.default);
    let (output_schema, output_shape) =
        check_output(&mut fields, &mut warnings, SchemaRole::Answer);
    let program = match find_program(read.body, read.body_first_line, "computation function") {
        Ok((program, first_line)) => {
            for problem in auto_script::check_program(&program, &[]) {
                let line = first_line + problem.line.saturating_sub(1);
                fields
                    .issues
                    .push(Issue::at(line, problem.column, "", problem.text));
            }
            Some((program, first_line))
        }
        Err(issue) => {
            fields.issues.push(issue);
            None
        }
    };
    match (fields.issues.is_empty(), program) {
        (true, Some((program, program_first_line))) => Ok(ComputationDocument {
            description,
            input_schema,
            input_default,
            output_schema: output_schema.or_else(|| output_shape.as_deref().and_then(shape_schema)),
            output_shape,
            program,
            program_first_line,
            warnings: warnings.iter().map(Issue::message).collect(),
        }),
        _ => Err(fields.issues),
    }
}

/// `output.schema` or `output.shape`, the schema checked in `role`.
pub(crate) fn check_output(
    fields: &mut Fields<'_>,
    warnings: &mut Vec<Issue>,
    role: SchemaRole,
) -> (Option<Value>, Option<String>) {
    if fields.object("/output").is_none() {
        return (None, None);
    }
    fields.only_keys("/output", &OUTPUT_KEYS);
    let schema = fields.get("/output/schema").cloned();
    if let Some(schema) = &schema {
        check_schema_at(fields, warnings, "/output/schema", schema, role);
    }
    let shape = fields.string("/output/shape");
    if let Some(shape) = &shape {
        if !OUTPUT_SHAPES.contains(&shape.as_str()) {
            fields.at(
                "/output/shape",
                "Expected one of series, categories, table or text.",
            );
        } else if schema.is_some() {
            fields.at("/output/shape", "Not allowed beside output.schema.");
        }
    }
    (schema, shape)
}

/// Why a program could not give an output: the run ends `conflict`, kind `unworkable`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unworkable {
    /// The program's words, with its line in the document when it threw.
    pub detail: String,
    /// Each way the value missed the output contract.
    pub issues: Vec<String>,
    /// Whether a budget (work, time, memory) stopped it rather than the program itself.
    pub budget: bool,
}

/// Runs the program on a prepared input with the clock at `now_ms`. Blocks the thread for up
/// to the program's time budget: the caller runs it where blocking is fine.
pub fn run_computation(
    document: &ComputationDocument,
    input: &Value,
    now_ms: i64,
) -> Result<Value, Unworkable> {
    ran(
        document,
        auto_script::run_program(&document.program, input, now_ms),
    )
}

/// Runs the program as [`run_computation`] does, on any thread, blocking it for at most
/// [`auto_script::BRIEF_PROGRAM_TIME_MS_MAX`]: `None` when the program needs longer, and must
/// be run with [`run_computation`] where blocking is fine (from the start: it is pure, so that
/// run gives what this one would have).
pub fn run_computation_briefly(
    document: &ComputationDocument,
    input: &Value,
    now_ms: i64,
) -> Option<Result<Value, Unworkable>> {
    auto_script::run_program_briefly(&document.program, input, now_ms)
        .map(|outcome| ran(document, outcome))
}

/// What a run of the program came to: its value checked against the output contract, or why
/// there is none.
fn ran(
    document: &ComputationDocument,
    outcome: Result<Value, auto_script::ScriptError>,
) -> Result<Value, Unworkable> {
    let value = outcome.map_err(|error| match error {
        auto_script::ScriptError::Expression { message, line } => {
            let at = line
                .map(|l| format!(" (line {})", document.program_first_line + l - 1))
                .unwrap_or_default();
            Unworkable {
                detail: format!("The program threw{at}: {message}"),
                issues: Vec::new(),
                budget: false,
            }
        }
        other => Unworkable {
            detail: format!("The program was stopped: {other}"),
            issues: Vec::new(),
            budget: true,
        },
    })?;
    output_checked(
        value,
        document.output_schema.as_ref(),
        document.output_shape.as_deref(),
    )
}

/// A program's value checked against the output contract (the schema, or the shape's), and
/// given the shape's form; or how it missed.
pub(crate) fn output_checked(
    value: Value,
    output_schema: Option<&Value>,
    output_shape: Option<&str>,
) -> Result<Value, Unworkable> {
    let mut issues = Vec::new();
    // A shape's schema is checked by `check_shape`, which lets an optional field be left out.
    if let Some(schema) = output_schema.filter(|_| output_shape.is_none()) {
        match CompiledSchema::compile(schema) {
            Ok(compiled) => issues.extend(auto_schema::render_answer_issues(
                &compiled.validate(&value),
            )),
            Err(error) => issues.push(error.to_string()),
        }
    }
    if issues.is_empty()
        && let Some(shape) = output_shape
    {
        issues.extend(auto_schema::render_answer_issues(&check_shape(
            shape, &value,
        )));
    }
    if issues.is_empty() {
        Ok(auto_schema::shape_output(output_shape, value))
    } else {
        Err(Unworkable {
            detail: format!(
                "The program's value does not match the output contract: {}",
                issues.join("; ")
            ),
            issues,
            budget: false,
        })
    }
}
