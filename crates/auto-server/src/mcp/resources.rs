//! The formats as MCP resources: the repository's own guides to each definition type and to
//! the output shapes, embedded in the binary, so an agent reads how to write a document before
//! its first save instead of learning it from refusals. Pure: no I/O.

use rmcp::model::{Resource, ResourceContents};

/// A guide of `docs/definitions/`, embedded: the pages people read are the pages agents read.
macro_rules! guide_text {
    ($file:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/definitions/",
            $file
        ))
    };
}

/// The MIME type of every guide.
pub const MARKDOWN: &str = "text/markdown";

/// The most bytes one guide may weigh: an agent reads a resource whole, into its context.
pub const RESOURCE_BYTES_MAX: usize = 32_000;

/// One guide served as a resource.
#[derive(Clone, Copy, Debug)]
pub struct Guide {
    pub uri: &'static str,
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub text: &'static str,
}

/// The reasoning format's guide: what `write_reasoning_function` embeds.
pub const REASONING_FORMAT: &str = "auto://docs/reasoning-format";
/// The workflow format's guide: what `write_workflow` embeds.
pub const WORKFLOW_FORMAT: &str = "auto://docs/workflow-format";
/// The output shapes' guide.
pub const OUTPUT_SHAPES: &str = "auto://docs/output-shapes";

/// Every guide, in the order `resources/list` gives them.
pub const GUIDES: [Guide; 7] = [
    Guide {
        uri: REASONING_FORMAT,
        name: "reasoning-format",
        title: "auto: the reasoning format",
        description: "How to write a reasoning function (a model call): the document's front \
                      matter (model, input and output contracts, config, tools), its Liquid \
                      prompt, and how a run ends. Read before create_definition with type \
                      reasoning.",
        text: guide_text!("reasoning.md"),
    },
    Guide {
        uri: WORKFLOW_FORMAT,
        name: "workflow-format",
        title: "auto: the workflow format",
        description: "How to write a workflow (steps that call the playbook's functions, branch, \
                      loop, wait and listen): the YAML document's fields, its tasks, its \
                      TypeScript expressions, triggers and limits. Read before \
                      create_definition with type workflow.",
        text: guide_text!("workflow.md"),
    },
    Guide {
        uri: "auto://docs/interaction-format",
        name: "interaction-format",
        title: "auto: the interaction format",
        description: "How to write an interaction function: a question for a person (left in \
                      the inbox, optionally posted to a webhook) or a call of a system's tool.",
        text: guide_text!("interaction.md"),
    },
    Guide {
        uri: "auto://docs/computation-format",
        name: "computation-format",
        title: "auto: the computation format",
        description: "How to write a computation function: a pure, bounded TypeScript program \
                      with input and output contracts.",
        text: guide_text!("computation.md"),
    },
    Guide {
        uri: "auto://docs/recall-format",
        name: "recall-format",
        title: "auto: the recall format",
        description: "How to write a recall function: a view folded from the playbook's events, \
                      answered from.",
        text: guide_text!("recall.md"),
    },
    Guide {
        uri: "auto://docs/prediction-format",
        name: "prediction-format",
        title: "auto: the prediction format",
        description: "How to write a prediction function: a forecast fitted to a series of the \
                      playbook's data.",
        text: guide_text!("prediction.md"),
    },
    Guide {
        uri: OUTPUT_SHAPES,
        name: "output-shapes",
        title: "auto: the output shapes",
        description: "The output shapes text, categories, series and table: their JSON, their \
                      rules, and when to name one instead of an output schema.",
        text: guide_text!("output-shapes.md"),
    },
];

/// The guide a URI names.
pub fn guide(uri: &str) -> Option<&'static Guide> {
    GUIDES.iter().find(|guide| guide.uri == uri)
}

/// What `resources/list` gives for a guide.
pub fn resource(guide: &Guide) -> Resource {
    Resource::new(guide.uri, guide.name)
        .with_title(guide.title)
        .with_description(guide.description)
        .with_mime_type(MARKDOWN)
        .with_size(guide.text.len() as u64)
}

/// What `resources/read` gives for a guide: its Markdown.
pub fn contents(guide: &Guide) -> ResourceContents {
    ResourceContents::TextResourceContents {
        uri: guide.uri.to_owned(),
        mime_type: Some(MARKDOWN.to_owned()),
        text: guide.text.to_owned(),
        meta: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_guide_is_a_markdown_page_an_agent_can_read_whole() {
        let mut uris: Vec<&str> = GUIDES.iter().map(|g| g.uri).collect();
        uris.dedup();
        assert_eq!(uris.len(), GUIDES.len(), "a URI twice");
        for served in GUIDES {
            assert_eq!(served.uri, format!("auto://docs/{}", served.name));
            assert!(served.text.starts_with("# "), "{}", served.uri);
            assert!(
                served.text.len() <= RESOURCE_BYTES_MAX,
                "{}: {} bytes",
                served.uri,
                served.text.len()
            );
            assert!(served.title.starts_with("auto: "), "{}", served.uri);
            assert_eq!(guide(served.uri).map(|g| g.name), Some(served.name));
        }
        assert!(guide("auto://docs/nope").is_none());
        // The guides the prompts embed say what a writer needs.
        assert!(
            guide(WORKFLOW_FORMAT)
                .unwrap()
                .text
                .contains("## The document")
        );
        assert!(
            guide(WORKFLOW_FORMAT)
                .unwrap()
                .text
                .contains("## Expressions")
        );
        assert!(guide(OUTPUT_SHAPES).unwrap().text.contains("| `series` |"));
        assert!(
            guide(REASONING_FORMAT)
                .unwrap()
                .text
                .contains("## The document")
        );
    }

    /// The shapes' guide teaches agents by example, so each example must be an output the
    /// runtime takes: every JSON block under "## Examples" passes the shape its paragraph names.
    #[test]
    fn the_output_shapes_examples_pass_their_shapes() {
        let text = guide(OUTPUT_SHAPES).unwrap().text;
        let examples = text
            .split("## Examples")
            .nth(1)
            .expect("an Examples section");
        let mut checked = 0;
        for part in examples.split("```json\n").skip(1) {
            let (block, _) = part.split_once("```").expect("a closed block");
            let value: serde_json::Value = serde_json::from_str(block).expect(block);
            let before = &examples[..examples.find(block).unwrap()];
            let before = before.trim_end().trim_end_matches("```json").trim_end();
            let paragraph = before.rsplit("\n\n").next().unwrap();
            let shape = paragraph.split('`').nth(1).expect(paragraph);
            let issues = auto_schema::check_shape(shape, &value);
            assert!(issues.is_empty(), "{shape}: {block}: {issues:?}");
            checked += 1;
        }
        assert_eq!(checked, 3);
    }

    #[test]
    fn a_guide_is_listed_with_its_title_and_read_as_markdown() {
        let listed = serde_json::to_value(resource(&GUIDES[0])).unwrap();
        assert_eq!(listed["uri"], "auto://docs/reasoning-format");
        assert_eq!(listed["mimeType"], MARKDOWN);
        assert_eq!(listed["title"], "auto: the reasoning format");
        assert_eq!(listed["size"], GUIDES[0].text.len());
        let read = serde_json::to_value(contents(&GUIDES[1])).unwrap();
        assert_eq!(read["uri"], WORKFLOW_FORMAT);
        assert_eq!(read["mimeType"], MARKDOWN);
        assert!(read["text"].as_str().unwrap().starts_with("# Workflows"));
    }
}
