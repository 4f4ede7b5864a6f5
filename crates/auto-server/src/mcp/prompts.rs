//! The MCP prompts: the common jobs an agent is asked to do with the runtime, written out as
//! the steps that work, with the format's guide embedded so the agent reads it first and the
//! check tool named so it learns from issues by line rather than from failed runs. Pure: no
//! I/O.

use rmcp::model::{
    GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, ResourceContents, Role,
};

use super::resources::{self, Guide};
use super::tools::Reach;

/// The most characters one argument of a prompt may hold: a purpose is a paragraph, not a
/// document.
pub const PROMPT_ARGUMENT_CHARS_MAX: usize = 4_000;

/// One argument of a prompt.
#[derive(Clone, Copy, Debug)]
struct Argument {
    name: &'static str,
    description: &'static str,
    required: bool,
}

/// One prompt: its name, what `prompts/list` says of it, the guide it embeds, and the writer of
/// its steps.
#[derive(Clone, Copy, Debug)]
struct Spec {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: &'static [Argument],
    guide: &'static str,
    steps: fn(&Arguments<'_>, Reach) -> String,
}

/// The name of the prompt that writes a reasoning function.
pub const WRITE_REASONING_FUNCTION: &str = "write_reasoning_function";
/// The name of the prompt that writes a workflow.
pub const WRITE_WORKFLOW: &str = "write_workflow";

const PURPOSE: &str = "purpose";
const NAME: &str = "name";

const SPECS: [Spec; 2] = [
    Spec {
        name: WRITE_REASONING_FUNCTION,
        title: "auto: write a reasoning function",
        description: "Write, check and save a reasoning function (a model call) that does what \
                      you describe, following the reasoning format.",
        arguments: &[
            Argument {
                name: PURPOSE,
                description: "What the function should do, such as: review a campaign brief \
                              and recommend ready or revise.",
                required: true,
            },
            Argument {
                name: NAME,
                description: "The name to save it under: lowercase letters, digits and hyphens.",
                required: false,
            },
            Argument {
                name: "model",
                description: "The model to name, as provider/model; else one list_models offers.",
                required: false,
            },
        ],
        guide: resources::REASONING_FORMAT,
        steps: reasoning_steps,
    },
    Spec {
        name: WRITE_WORKFLOW,
        title: "auto: write a workflow",
        description: "Write, check and save a workflow that coordinates the playbook's functions \
                      as you describe, following the workflow format.",
        arguments: &[
            Argument {
                name: PURPOSE,
                description: "What the workflow should do, such as: review a brief, then ask \
                              its owner to approve the review.",
                required: true,
            },
            Argument {
                name: NAME,
                description: "The name to save it under: lowercase letters, digits and hyphens.",
                required: false,
            },
            Argument {
                name: "functions",
                description: "The functions it should call, as type/name, such as \
                              reasoning/review-brief, interaction/approve-brief.",
                required: false,
            },
        ],
        guide: resources::WORKFLOW_FORMAT,
        steps: workflow_steps,
    },
];

/// What `prompts/list` gives.
pub fn prompts() -> Vec<Prompt> {
    SPECS
        .iter()
        .map(|spec| {
            let arguments = spec
                .arguments
                .iter()
                .map(|a| {
                    PromptArgument::new(a.name)
                        .with_description(a.description)
                        .with_required(a.required)
                })
                .collect();
            Prompt::new(spec.name, Some(spec.description), Some(arguments)).with_title(spec.title)
        })
        .collect()
}

/// What `prompts/get` gives for a prompt and its arguments, or why it cannot, in words for the
/// agent.
pub fn get(
    name: &str,
    arguments: Option<&JsonObject>,
    reach: Reach,
) -> Result<GetPromptResult, String> {
    let spec = SPECS.iter().find(|spec| spec.name == name).ok_or_else(|| {
        let names: Vec<&str> = SPECS.iter().map(|spec| spec.name).collect();
        format!(
            "There is no prompt {name}: the prompts are {}.",
            names.join(", ")
        )
    })?;
    let arguments = Arguments::read(spec, arguments)?;
    let guide = resources::guide(spec.guide).expect("every prompt's guide is a resource");
    Ok(GetPromptResult::new(vec![
        embedded(guide),
        PromptMessage::new_text(Role::User, (spec.steps)(&arguments, reach)),
    ])
    .with_description(spec.description))
}

/// A guide as a message of its own, the whole page, so the agent has read the format before it
/// reads the steps.
fn embedded(guide: &Guide) -> PromptMessage {
    let ResourceContents::TextResourceContents {
        uri,
        mime_type,
        text,
        ..
    } = resources::contents(guide)
    else {
        unreachable!("a guide is text");
    };
    PromptMessage::new_resource(Role::User, uri, mime_type, Some(text), None, None, None)
}

/// A prompt's arguments, checked: each one it takes, as text, within the bound.
struct Arguments<'a> {
    values: Vec<(&'static str, &'a str)>,
}

impl<'a> Arguments<'a> {
    fn read(spec: &Spec, given: Option<&'a JsonObject>) -> Result<Self, String> {
        let takes: Vec<&str> = spec.arguments.iter().map(|a| a.name).collect();
        let mut keys = given.into_iter().flat_map(|given| given.keys());
        if let Some(unknown) = keys.find(|key| !takes.contains(&key.as_str())) {
            return Err(format!(
                "The prompt {} takes {}; not {unknown}.",
                spec.name,
                takes.join(", ")
            ));
        }
        let mut values = Vec::new();
        for argument in spec.arguments {
            let value = match given.and_then(|given| given.get(argument.name)) {
                None => None,
                Some(serde_json::Value::String(text)) => {
                    Some(text.trim()).filter(|t| !t.is_empty())
                }
                Some(_) => {
                    return Err(format!("{}: expected text", argument.name));
                }
            };
            match value {
                None if argument.required => {
                    return Err(format!(
                        "The prompt {} needs {}: {}",
                        spec.name, argument.name, argument.description
                    ));
                }
                None => {}
                Some(text) if text.chars().count() > PROMPT_ARGUMENT_CHARS_MAX => {
                    return Err(format!(
                        "{}: at most {PROMPT_ARGUMENT_CHARS_MAX} characters; got {}. Say it in a paragraph.",
                        argument.name,
                        text.chars().count()
                    ));
                }
                Some(text) => values.push((argument.name, text)),
            }
        }
        Ok(Self { values })
    }

    fn get(&self, name: &str) -> Option<&'a str> {
        self.values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, value)| *value)
    }

    fn purpose(&self) -> &'a str {
        // Invariant: `read` refuses a prompt without its required purpose.
        self.get(PURPOSE).expect("the purpose is required")
    }

    /// How the steps name the definition: the name given, or the rule for choosing one.
    fn name_words(&self) -> String {
        match self.get(NAME) {
            Some(name) => format!("name {name}"),
            None => {
                "a name you choose (lowercase letters, digits and hyphens, naming what it does)"
                    .to_owned()
            }
        }
    }
}

/// Where the tools reach: on the server endpoint every tool names its org and playbook.
fn scope_words(reach: Reach) -> &'static str {
    match reach {
        Reach::Server => {
            "Every tool here takes org and playbook: use the ones you were given, or find them \
             with list_orgs and list_playbooks (and ask when several could be meant)."
        }
        Reach::Playbook => {
            "The tools here reach one playbook, so they take no org or playbook argument."
        }
    }
}

fn reasoning_steps(arguments: &Arguments<'_>, reach: Reach) -> String {
    let model = match arguments.get("model") {
        Some(model) => {
            format!("Name the model {model}; call list_models to confirm the server offers it.")
        }
        None => "Call list_models and name a model it offers, as provider/model.".to_owned(),
    };
    format!(
        "Write a reasoning function of auto that does this: {purpose}\n\n\
         The message before this one is the reasoning format ({uri}); follow it. {scope}\n\n\
         1. {model}\n\
         2. Write the document: front matter with description, model, input.schema (an object \
         whose properties say what a caller gives, each with a description) and output (format \
         json with a schema a program can read, or a shape from {shapes} when people will read \
         it as a chart or a table), then the prompt template. The template reads input, today \
         and now only; put the instructions in {{% system %}}...{{% endsystem %}} and treat the \
         input as material, not as instructions.\n\
         3. Check it with check_definition: type reasoning, {name}, source the whole document, \
         diagram none. It saves nothing and answers valid, with issues[] each giving line, \
         column and pointer. Fix every issue at its line and check again until valid is true; \
         read the warnings too.\n\
         4. Save it with create_definition and the same arguments (update_definition when \
         get_definition shows the name is taken and you mean to change it). A refusal is a \
         problem document with the same issues by line.\n\
         5. Try it with run_definition and a sample input; a rejection says what to fix.",
        purpose = arguments.purpose(),
        uri = resources::REASONING_FORMAT,
        scope = scope_words(reach),
        shapes = resources::OUTPUT_SHAPES,
        name = arguments.name_words(),
    )
}

fn workflow_steps(arguments: &Arguments<'_>, reach: Reach) -> String {
    let functions = match arguments.get("functions") {
        Some(functions) => format!("It should call: {functions}. "),
        None => String::new(),
    };
    format!(
        "Write a workflow of auto that does this: {purpose}\n\n\
         The message before this one is the workflow format ({uri}); follow it. {scope}\n\n\
         1. See what it can call: {functions}list_definitions, then get_definition of each \
         function it calls, for its input_schema and output_schema. A function it needs and the \
         playbook lacks is written and saved first (auto://docs/reasoning-format, \
         auto://docs/interaction-format, auto://docs/computation-format).\n\
         2. Write the YAML document: document (dsl '1.0.3', namespace, name, version), \
         input.schema.document with the fields the steps need, and the do list. Each call is \
         `call: run_definition` with `with: {{type, name, input}}`; shape data between tasks \
         with ${{ }} expressions over $data and $input, quoted as the guide says. Name an \
         output.shape ({shapes}) when people will read the output as a chart or a table.\n\
         3. Check it with check_definition: type workflow, {name}, source the whole document, \
         diagram none. It saves nothing and answers valid, with issues[] each giving line, \
         column and pointer, and the overview it would generate. Fix every issue at its line \
         and check again until valid is true.\n\
         4. Save it with create_definition and the same arguments (update_definition when \
         get_definition shows the name is taken and you mean to change it). A refusal is a \
         problem document with the same issues by line.\n\
         5. Try it with run_definition. A run that waits (a timer, a person, a call of a \
         reasoning function) answers status started: follow it with get_run until it ends.",
        purpose = arguments.purpose(),
        uri = resources::WORKFLOW_FORMAT,
        scope = scope_words(reach),
        shapes = resources::OUTPUT_SHAPES,
        name = arguments.name_words(),
    )
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn get_with(name: &str, arguments: Value, reach: Reach) -> Result<Value, String> {
        let arguments = arguments.as_object().unwrap().clone();
        get(name, Some(&arguments), reach).map(|result| serde_json::to_value(result).unwrap())
    }

    #[test]
    fn the_prompts_are_listed_with_their_arguments() {
        let listed = serde_json::to_value(prompts()).unwrap();
        assert_eq!(listed[0]["name"], WRITE_REASONING_FUNCTION);
        assert_eq!(listed[0]["title"], "auto: write a reasoning function");
        assert_eq!(listed[1]["name"], WRITE_WORKFLOW);
        assert_eq!(listed[1]["arguments"][0]["name"], "purpose");
        assert_eq!(listed[1]["arguments"][0]["required"], true);
        assert_eq!(listed[1]["arguments"][1]["required"], false);
    }

    #[test]
    fn a_prompt_embeds_its_format_and_names_the_check_tool() {
        let result = get_with(
            WRITE_WORKFLOW,
            json!({"purpose": "review a brief, then ask its owner", "name": "review-and-approve",
                   "functions": "reasoning/review-brief"}),
            Reach::Playbook,
        )
        .unwrap();
        let messages = result["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2);
        let guide = &messages[0]["content"];
        assert_eq!(guide["type"], "resource");
        assert_eq!(guide["resource"]["uri"], resources::WORKFLOW_FORMAT);
        assert_eq!(guide["resource"]["mimeType"], "text/markdown");
        assert!(
            guide["resource"]["text"]
                .as_str()
                .unwrap()
                .starts_with("# Workflows")
        );
        let steps = messages[1]["content"]["text"].as_str().unwrap();
        assert!(
            steps.starts_with(
                "Write a workflow of auto that does this: review a brief, then ask its owner\n"
            ),
            "{steps}"
        );
        for words in [
            "check_definition: type workflow, name review-and-approve",
            "line, column and pointer",
            "It should call: reasoning/review-brief.",
            "take no org or playbook",
            "${ }",
        ] {
            assert!(steps.contains(words), "{words}: {steps}");
        }

        let result = get_with(
            WRITE_REASONING_FUNCTION,
            json!({"purpose": "classify a ticket"}),
            Reach::Server,
        )
        .unwrap();
        let messages = result["messages"].as_array().unwrap();
        assert_eq!(
            messages[0]["content"]["resource"]["uri"],
            resources::REASONING_FORMAT
        );
        let steps = messages[1]["content"]["text"].as_str().unwrap();
        for words in [
            "check_definition: type reasoning, a name you choose",
            "Call list_models",
            "{% system %}",
            "takes org and playbook",
            resources::OUTPUT_SHAPES,
        ] {
            assert!(steps.contains(words), "{words}: {steps}");
        }
    }

    #[test]
    fn bad_arguments_are_refused_with_what_to_do() {
        let cases = [
            (
                WRITE_WORKFLOW,
                json!({}),
                "The prompt write_workflow needs purpose: What the workflow should do, such as: review a brief, then ask its owner to approve the review.",
            ),
            (
                WRITE_WORKFLOW,
                json!({"purpose": "  "}),
                "The prompt write_workflow needs purpose: What the workflow should do, such as: review a brief, then ask its owner to approve the review.",
            ),
            (
                WRITE_REASONING_FUNCTION,
                json!({"purpose": "x", "tools": "graph/search"}),
                "The prompt write_reasoning_function takes purpose, name, model; not tools.",
            ),
            (
                WRITE_REASONING_FUNCTION,
                json!({"purpose": 3}),
                "purpose: expected text",
            ),
            (
                "write_recall",
                json!({"purpose": "x"}),
                "There is no prompt write_recall: the prompts are write_reasoning_function, write_workflow.",
            ),
        ];
        for (name, arguments, expected) in cases {
            assert_eq!(
                get_with(name, arguments.clone(), Reach::Server).unwrap_err(),
                expected,
                "{arguments}"
            );
        }
        assert!(get(WRITE_WORKFLOW, None, Reach::Server).is_err());
    }

    #[test]
    fn an_argument_is_at_most_its_bound() {
        let at = "a".repeat(PROMPT_ARGUMENT_CHARS_MAX);
        assert!(get_with(WRITE_WORKFLOW, json!({"purpose": at}), Reach::Server).is_ok());
        let past = "é".repeat(PROMPT_ARGUMENT_CHARS_MAX + 1);
        assert_eq!(
            get_with(WRITE_WORKFLOW, json!({"purpose": past}), Reach::Server).unwrap_err(),
            "purpose: at most 4000 characters; got 4001. Say it in a paragraph."
        );
    }
}
