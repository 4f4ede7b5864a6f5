//! Interaction functions (supplement §7): Markdown with YAML front matter that asks a person
//! (`to`, `expires`, optional `notify`) or a system through a tool (`tool`, `arguments`), with
//! the input and output contracts every function takes, and a body: the Liquid template of the
//! request the person reads.
//!
//! Checking is pure, like every checker here. Rendering a run's request is pure too: the caller
//! passes the run's start as text and the render's clock as a closure.

use auto_doc::{Issue, YamlConfig, read_markdown};
use auto_template::{CheckConfig, RenderLimits, Template};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::computation::check_output;
use crate::definitions::{Checked, DefinitionChecker};
use crate::reasoning::{Fields, check_description, check_input, parse_tool};
use crate::workflow::{IsoError, RUN_DURATION_MS_DEFAULT, YEARS_MONTHS, in_words, parse_iso};

const TOP_KEYS: [&str; 8] = [
    "description",
    "to",
    "expires",
    "notify",
    "tool",
    "arguments",
    "input",
    "output",
];

/// "An interaction function that calls a tool ... 70 seconds" (workflow page, "Calling a
/// function"): the bound of the tool's one call.
pub const TOOL_CALL_MS_MAX: u64 = 70_000;

/// Who is asked, once rendered: at most this many characters. The pages give no bound; a name,
/// an address or a team fits in far less, and the inbox shows it on one line.
pub const TO_CHARS_MAX: usize = 1_024;

/// A webhook's name in `notify`: what the configuration may name one (`[webhooks.NAME]`).
pub const WEBHOOK_NAME_CHARS_MAX: usize = 64;

/// The variables the templates of an interaction read: the run's input and its start, as a
/// reasoning template reads them.
pub const INTERACTION_ROOTS: [&str; 3] = auto_template::REASONING_ROOTS;

/// Whom the run asks.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Asks {
    /// A person, named by the rendered `to`, who answers through the inbox within `expires`.
    Person {
        to: String,
        /// The source line of `to`, for a problem found when it is rendered.
        to_line: u32,
        expires_ms: u64,
        notify: Option<String>,
    },
    /// A system, through one call of a tool whose result is the answer.
    Tool {
        server: String,
        tool: String,
        arguments: String,
        /// The source line of `arguments`, for a problem found when it is rendered.
        arguments_line: u32,
    },
}

/// An interaction function's document after it passed the checks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InteractionDocument {
    pub description: Option<String>,
    pub asks: Asks,
    pub input_schema: Option<Value>,
    pub input_default: Option<Map<String, Value>>,
    /// The answer's contract: the written schema, or the shape's.
    pub output_schema: Option<Value>,
    pub output_shape: Option<String>,
    /// The request's template, which the person reads.
    pub body: String,
    /// The source line of the body's first line.
    pub body_first_line: u32,
    pub warnings: Vec<String>,
}

impl InteractionDocument {
    /// The longest a run of it may wait for its answer, in milliseconds ("Calling a function":
    /// its `expires`, or the tool call's 70 seconds).
    pub fn longest_run_ms(&self) -> u64 {
        match &self.asks {
            Asks::Person { expires_ms, .. } => *expires_ms,
            Asks::Tool { .. } => TOOL_CALL_MS_MAX,
        }
    }
}

/// The checker `create_definition` runs for the type interaction.
#[derive(Clone, Copy, Debug)]
pub struct InteractionChecker {
    /// The longest a run may last (`WORKFLOW_MAX_DURATION`): `expires` may not be longer.
    pub run_duration_ms: u64,
}

impl Default for InteractionChecker {
    fn default() -> Self {
        Self {
            run_duration_ms: RUN_DURATION_MS_DEFAULT,
        }
    }
}

impl DefinitionChecker for InteractionChecker {
    fn check(&self, source: &str) -> Result<Checked, Vec<Issue>> {
        let document = check_interaction(source, self.run_duration_ms)?;
        Ok(Checked {
            description: document.description,
            warnings: document.warnings,
            input_schema: document.input_schema,
            output_schema: document.output_schema,
            ..Checked::default()
        })
    }
}

/// Checks an interaction function's source against a run's longest duration; the document,
/// or every problem found.
pub fn check_interaction(
    source: &str,
    run_duration_ms: u64,
) -> Result<InteractionDocument, Vec<Issue>> {
    let read = read_markdown(source, &YamlConfig::front_matter());
    let mut fields = Fields::new(&read.front_matter, &read.issues);
    if !read.complete {
        return Err(fields.issues);
    }
    if !fields.doc.value().is_object() {
        fields.at(
            "",
            "The front matter must be a mapping of the fields description, to, expires, notify, tool, arguments, input and output.",
        );
        return Err(fields.issues);
    }
    fields.only_keys("", &TOP_KEYS);
    let description = check_description(&mut fields);
    let mut warnings = Vec::new();
    let input = check_input(&mut fields, &mut warnings);
    let roots_config = CheckConfig {
        input_fields: input.closed_fields.clone(),
    };
    let asks = check_asks(&mut fields, &roots_config, run_duration_ms);
    // A person writes the answer, not a model: no provider's limits apply to its schema.
    let (output_schema, output_shape) =
        check_output(&mut fields, &mut warnings, auto_schema::SchemaRole::Answer);
    check_body(&mut fields, read.body, read.body_first_line, &roots_config);
    match asks {
        Some(asks) if fields.issues.is_empty() => Ok(InteractionDocument {
            description,
            asks,
            input_schema: input.schema,
            input_default: input.default,
            output_schema: output_schema
                .or_else(|| output_shape.as_deref().and_then(auto_schema::shape_schema)),
            output_shape,
            body: read.body.to_owned(),
            body_first_line: read.body_first_line,
            warnings: warnings.iter().map(Issue::message).collect(),
        }),
        _ => Err(fields.issues.into_iter().map(as_sentence).collect()),
    }
}

/// Every problem is a sentence, as the reasoning page writes them; the template checker leaves
/// the period to its caller.
fn as_sentence(mut issue: Issue) -> Issue {
    if !issue.text.ends_with(['.', '?', '!']) {
        issue.text.push('.');
    }
    issue
}

/// `to` with `expires` (and `notify`), or `tool` with `arguments`: one of the two.
fn check_asks(fields: &mut Fields<'_>, config: &CheckConfig, run_duration_ms: u64) -> Option<Asks> {
    let has = |fields: &Fields<'_>, key: &str| fields.get(&format!("/{key}")).is_some();
    match (has(fields, "to"), has(fields, "tool")) {
        (true, true) => {
            fields.at(
                "/tool",
                "Not allowed beside to: an interaction asks a person (to) or a system (tool), not both.",
            );
            None
        }
        (false, false) => {
            fields.at(
                "/to",
                "Required: who is asked, as a template such as '{{ input.owner }}', or tool and arguments to ask a system.",
            );
            None
        }
        (true, false) => {
            for key in ["arguments"] {
                if has(fields, key) {
                    fields.at(&format!("/{key}"), "Allowed only with tool.");
                }
            }
            let to = template_field(fields, "/to", config);
            let expires_ms = check_expires(fields, "/expires", run_duration_ms);
            let notify = check_notify(fields);
            Some(Asks::Person {
                to: to?,
                to_line: fields.doc.value_position("/to").line,
                expires_ms: expires_ms?,
                notify,
            })
        }
        (false, true) => {
            for key in ["expires", "notify"] {
                if has(fields, key) {
                    fields.at(
                        &format!("/{key}"),
                        "Allowed only with to: a tool's call is bounded by its 70 seconds.",
                    );
                }
            }
            let tool = fields.string("/tool");
            let parsed = tool.as_deref().and_then(parse_tool);
            let (server, tool_name) = match parsed {
                Some(found) if found.tool.is_some() => (found.server, found.tool),
                _ => {
                    if tool.is_some() {
                        fields.at("/tool", "Expected server/tool, such as crm/find-owner.");
                    }
                    (String::new(), None)
                }
            };
            if !has(fields, "arguments") {
                fields.at(
                    "/arguments",
                    "Required with tool: a template that renders the tool's arguments as JSON.",
                );
            }
            let arguments = template_field(fields, "/arguments", config);
            Some(Asks::Tool {
                server,
                tool: tool_name?,
                arguments: arguments?,
                arguments_line: fields.doc.value_position("/arguments").line,
            })
        }
    }
}

/// A one-field template (`to`, `arguments`): a string checked as the body is.
pub(crate) fn template_field(
    fields: &mut Fields<'_>,
    pointer: &str,
    config: &CheckConfig,
) -> Option<String> {
    let text = fields.string(pointer)?;
    let problems = auto_template::check_with_roots(&text, config, &INTERACTION_ROOTS);
    let mut valid = problems.is_empty();
    for problem in problems {
        fields.at(pointer, problem.text);
    }
    if valid && parsed_system_line(&text).is_some() {
        fields.at(pointer, "A system block is not allowed here.");
        valid = false;
    }
    valid.then_some(text)
}

fn parsed_system_line(text: &str) -> Option<u32> {
    auto_template::parse(text)
        .ok()
        .and_then(|template| template.system_block_line())
}

const EXPIRES_FORM: &str = "Expected an ISO 8601 duration such as P2D or PT30M, in weeks, days, hours, minutes and seconds.";

/// `expires` (at `pointer`): required with `to`, longer than no time, at most the longest a
/// run may last.
pub(crate) fn check_expires(
    fields: &mut Fields<'_>,
    pointer: &str,
    run_duration_ms: u64,
) -> Option<u64> {
    if fields.get(pointer).is_none() {
        fields.at(
            pointer,
            "Required with to: how long the request waits for an answer, such as P2D.",
        );
        return None;
    }
    let text = fields.string(pointer)?;
    let ms = match parse_iso(&text) {
        Ok(ms) => ms,
        Err(IsoError::YearsOrMonths) => {
            fields.at(pointer, YEARS_MONTHS);
            return None;
        }
        Err(IsoError::Form) => {
            fields.at(pointer, EXPIRES_FORM);
            return None;
        }
    };
    if ms == 0 {
        fields.at(pointer, "The duration must be longer than no time.");
        return None;
    }
    if ms > run_duration_ms {
        fields.at(
            pointer,
            format!(
                "The duration is longer than a run may last: at most {}.",
                in_words(run_duration_ms)
            ),
        );
        return None;
    }
    Some(ms)
}

/// `notify`: the name of a webhook the operator configured. Which names are configured is the
/// server's to know; the document only names one.
fn check_notify(fields: &mut Fields<'_>) -> Option<String> {
    let name = fields.string("/notify")?;
    let mut chars = name.chars();
    let well_formed = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name.len() <= WEBHOOK_NAME_CHARS_MAX;
    if !well_formed {
        fields.at(
            "/notify",
            "Expected the name of a webhook: a lowercase letter, then up to 63 lowercase letters, digits and hyphens.",
        );
        return None;
    }
    Some(name)
}

fn check_body(fields: &mut Fields<'_>, body: &str, first_line: u32, config: &CheckConfig) {
    let offset = first_line.saturating_sub(1);
    let problems = auto_template::check_with_roots(body, config, &INTERACTION_ROOTS);
    let clean = problems.is_empty();
    for problem in problems {
        fields.issues.push(problem.to_issue(offset, ""));
    }
    if clean && let Some(line) = parsed_system_line(body) {
        fields.issues.push(Issue::at_line(
            line.saturating_add(offset),
            "",
            "An interaction's body has no system block: the person reads the whole body.",
        ));
    }
}

/// Which template of the document a render problem is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderedPart {
    To,
    Body,
    Arguments,
}

/// Why a request could not be rendered: the run ends `invalid_input`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestRenderError {
    pub part: RenderedPart,
    /// The line in the source (the `to` field's line for `to`).
    pub line: u32,
    pub text: String,
    /// `/input/<field>` when the template read a field the input lacks.
    pub field_pointer: Option<String>,
}

/// A request, rendered from a run's input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedRequest {
    /// Who is asked: the rendered `to`, trimmed.
    pub to: String,
    /// The rendered body, Markdown.
    pub message: String,
}

/// What a render reads beside the input: the run's start, as `today` and `now` text.
#[derive(Clone, Copy)]
pub struct RenderClock<'a> {
    pub today: &'a str,
    pub now: &'a str,
    /// Asked during the render; true stops it (`RENDER_TIME_MS_MAX` of the reasoning page).
    pub expired: &'a dyn Fn() -> bool,
}

/// Renders one template of the document with the run's prepared input.
fn render_part(
    source: &str,
    part: RenderedPart,
    line_of: &dyn Fn(u32) -> u32,
    input: &Value,
    clock: RenderClock<'_>,
) -> Result<String, RequestRenderError> {
    let fail = |line: u32, text: String, field_pointer: Option<String>| RequestRenderError {
        part,
        line,
        text,
        field_pointer,
    };
    let template: Template = auto_template::parse(source).map_err(|_| {
        fail(
            line_of(1),
            "The saved template no longer parses".into(),
            None,
        )
    })?;
    let today = Value::String(clock.today.to_owned());
    let now = Value::String(clock.now.to_owned());
    let roots = [
        (INTERACTION_ROOTS[0], input),
        (INTERACTION_ROOTS[1], &today),
        (INTERACTION_ROOTS[2], &now),
    ];
    auto_template::render_with_roots(&template, &roots, &RenderLimits::new(clock.expired))
        .map(|rendered| rendered.message)
        .map_err(|error| fail(line_of(error.line), error.text, error.field_pointer))
}

/// Renders `to` and the body of a person's request with the run's prepared input.
pub fn render_request(
    document: &InteractionDocument,
    input: &Value,
    clock: RenderClock<'_>,
) -> Result<RenderedRequest, RequestRenderError> {
    let Asks::Person { to, to_line, .. } = &document.asks else {
        return Err(RequestRenderError {
            part: RenderedPart::To,
            line: 1,
            text: "The function asks a system through a tool, not a person".into(),
            field_pointer: None,
        });
    };
    let offset = document.body_first_line.saturating_sub(1);
    let to_text = render_to(to, *to_line, input, clock)?;
    let message = render_part(
        &document.body,
        RenderedPart::Body,
        &|line| line.saturating_add(offset),
        input,
        clock,
    )?;
    Ok(RenderedRequest {
        to: to_text,
        message,
    })
}

/// Renders `to` (written at `to_line`), whom a request asks, with the run's prepared input:
/// trimmed, named, and at most [`TO_CHARS_MAX`] characters.
pub fn render_to(
    to: &str,
    to_line: u32,
    input: &Value,
    clock: RenderClock<'_>,
) -> Result<String, RequestRenderError> {
    let to_text =
        render_part(to, RenderedPart::To, &|_| to_line, input, clock).map_err(|mut error| {
            if error.text == "The message renders empty" {
                error.text = "to renders empty: the request names nobody to ask".into();
            }
            error
        })?;
    let to_text = to_text.trim().to_owned();
    let to_chars = to_text.chars().count();
    if to_chars > TO_CHARS_MAX {
        return Err(RequestRenderError {
            part: RenderedPart::To,
            line: to_line,
            text: format!(
                "to renders {to_chars} characters: who is asked is at most 1,024 characters"
            ),
            field_pointer: None,
        });
    }
    Ok(to_text)
}

/// Renders a tool interaction's `arguments` with the run's prepared input, and reads the text
/// as the JSON object of arguments the tool is called with.
pub fn render_arguments(
    document: &InteractionDocument,
    input: &Value,
    clock: RenderClock<'_>,
) -> Result<Map<String, Value>, RequestRenderError> {
    let Asks::Tool {
        arguments,
        arguments_line,
        ..
    } = &document.asks
    else {
        return Err(RequestRenderError {
            part: RenderedPart::Arguments,
            line: 1,
            text: "The function asks a person, not a system through a tool".into(),
            field_pointer: None,
        });
    };
    let line = *arguments_line;
    let fail = |text: String| RequestRenderError {
        part: RenderedPart::Arguments,
        line,
        text,
        field_pointer: None,
    };
    let text = render_part(arguments, RenderedPart::Arguments, &|_| line, input, clock).map_err(
        |mut error| {
            if error.text == "The message renders empty" {
                error.text = "arguments renders empty: a tool is called with a JSON object".into();
            }
            error
        },
    )?;
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(fail(
            "arguments renders JSON that is not an object: a tool is called with a JSON object"
                .into(),
        )),
        Err(error) => Err(fail(format!(
            "arguments renders text that is not JSON ({error}); write each value with the json filter, such as {{{{ input.account | json }}}}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const APPROVE: &str = "---\ndescription: Asks the campaign owner to approve a reviewed brief\nto: '{{ input.owner }}'\nexpires: P2D\ninput:\n  schema:\n    type: object\n    required: [owner, review]\n    properties:\n      owner: { type: string }\n      review: { type: string }\n---\nThe review of your campaign brief is ready:\n\n{{ input.review }}\n";

    fn never() -> bool {
        false
    }

    fn clock() -> RenderClock<'static> {
        RenderClock {
            today: "2026-01-02",
            now: "2026-01-02T03:04:05.000Z",
            expired: &never,
        }
    }

    #[test]
    fn the_page_example_renders_its_request() {
        let document = check_interaction(APPROVE, RUN_DURATION_MS_DEFAULT).unwrap();
        assert_eq!(document.longest_run_ms(), 2 * 24 * 3_600_000);
        let rendered = render_request(
            &document,
            &json!({"owner": " ana@example.com ", "review": "Ready"}),
            clock(),
        )
        .unwrap();
        assert_eq!(rendered.to, "ana@example.com");
        assert_eq!(
            rendered.message,
            "The review of your campaign brief is ready:\n\nReady\n"
        );
    }

    #[test]
    fn to_is_bounded_at_its_edge() {
        let document = check_interaction(APPROVE, RUN_DURATION_MS_DEFAULT).unwrap();
        let at = |n: usize| {
            render_request(
                &document,
                &json!({"owner": "x".repeat(n), "review": "R"}),
                clock(),
            )
        };
        assert_eq!(at(TO_CHARS_MAX).unwrap().to.len(), TO_CHARS_MAX);
        let past = at(TO_CHARS_MAX + 1).unwrap_err();
        assert_eq!(past.part, RenderedPart::To);
        assert_eq!(past.line, 3);
        assert_eq!(
            past.text,
            "to renders 1025 characters: who is asked is at most 1,024 characters"
        );
        let empty = at(0).unwrap_err();
        assert_eq!(
            empty.text,
            "to renders empty: the request names nobody to ask"
        );
    }

    #[test]
    fn a_missing_field_is_named_at_its_line() {
        let document = check_interaction(APPROVE, RUN_DURATION_MS_DEFAULT).unwrap();
        let error = render_request(&document, &json!({"owner": "o"}), clock()).unwrap_err();
        assert_eq!(error.part, RenderedPart::Body);
        assert_eq!(error.line, 15);
        assert_eq!(error.field_pointer.as_deref(), Some("/input/review"));
    }

    const FIND_OWNER: &str = "---\ntool: crm/find-owner\narguments: '{\"account\": {{ input.account | json }}}'\n---\nFinds the owner.\n";

    #[test]
    fn arguments_render_a_json_object() {
        let document = check_interaction(FIND_OWNER, RUN_DURATION_MS_DEFAULT).unwrap();
        assert_eq!(document.longest_run_ms(), TOOL_CALL_MS_MAX);
        let arguments =
            render_arguments(&document, &json!({"account": "a \"1\""}), clock()).unwrap();
        assert_eq!(Value::Object(arguments), json!({"account": "a \"1\""}));
    }

    #[test]
    fn arguments_that_are_not_a_json_object_are_named_at_their_line() {
        let with = |arguments: &str| {
            let source =
                FIND_OWNER.replace("'{\"account\": {{ input.account | json }}}'", arguments);
            let document = check_interaction(&source, RUN_DURATION_MS_DEFAULT).unwrap();
            render_arguments(&document, &json!({"account": "a-1"}), clock()).unwrap_err()
        };
        let raw = with("'{\"account\": {{ input.account }}}'");
        assert_eq!(raw.part, RenderedPart::Arguments);
        assert_eq!(raw.line, 3);
        assert_eq!(
            raw.text,
            "arguments renders text that is not JSON (expected value at line 1 column 13); write each value with the json filter, such as {{ input.account | json }}"
        );
        assert_eq!(
            with("'[1]'").text,
            "arguments renders JSON that is not an object: a tool is called with a JSON object"
        );
        assert_eq!(
            with("'{% if false %}x{% endif %}'").text,
            "arguments renders empty: a tool is called with a JSON object"
        );
    }

    /// "An interaction function that calls a tool ... 70 seconds".
    #[test]
    fn a_tool_call_is_bounded_by_70_seconds() {
        assert_eq!(TOOL_CALL_MS_MAX, 70_000);
    }

    #[test]
    fn expires_at_the_longest_a_run_may_last_and_one_second_past() {
        let with = |expires: &str| APPROVE.replace("expires: P2D", &format!("expires: {expires}"));
        assert!(check_interaction(&with("P30D"), RUN_DURATION_MS_DEFAULT).is_ok());
        let issues = check_interaction(&with("P30DT1S"), RUN_DURATION_MS_DEFAULT).unwrap_err();
        assert_eq!(
            issues.iter().map(Issue::message).collect::<Vec<_>>(),
            vec!["Line 4, /expires: The duration is longer than a run may last: at most 30 days."]
        );
        let two_hours = 2 * 3_600_000;
        assert!(check_interaction(&with("PT2H"), two_hours).is_ok());
        assert!(check_interaction(&with("PT2H0M1S"), two_hours).is_err());
    }
}
