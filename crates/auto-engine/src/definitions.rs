//! What every definition shares, whatever its type: its type, its name, the envelope of a save
//! (source size, overview, diagram) and the registry of per-type checkers.
//!
//! A type without a checker cannot be saved: nothing is ever stored unchecked.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use auto_doc::{Issue, Issues};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// "A definition has a name (`^[a-z][a-z0-9-]{0,63}$`)" (supplement §1).
pub const DEFINITION_NAME_CHARS_MAX: usize = 64;

/// "An overview holds 1 character to 16,384 bytes in UTF-8." (reasoning page, "The overview")
pub const OVERVIEW_BYTES_MAX: usize = 16_384;

/// "A diagram holds at most 8,192 bytes in UTF-8" (reasoning page, "The overview").
pub const DIAGRAM_BYTES_MAX: usize = 8_192;

/// "Source document: 65,536 bytes in UTF-8" (workflow page, "Limits").
pub const WORKFLOW_SOURCE_BYTES_MAX: usize = 65_536;

/// The Markdown types (reasoning and the other functions) hold a template of up to 65,536
/// characters (up to 4 bytes each in UTF-8) beside front matter with up to two schemas of
/// 65,536 bytes; the pages give no bound for the whole document, so this one lets each part
/// reach its own limit and still bounds what a save may send.
pub const MARKDOWN_SOURCE_BYTES_MAX: usize = 524_288;

/// The six types a playbook holds (supplement §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DefinitionType {
    Reasoning,
    Workflow,
    Interaction,
    Computation,
    Recall,
    Prediction,
}

impl DefinitionType {
    pub const ALL: [DefinitionType; 6] = [
        Self::Reasoning,
        Self::Workflow,
        Self::Interaction,
        Self::Computation,
        Self::Recall,
        Self::Prediction,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Reasoning => "reasoning",
            Self::Workflow => "workflow",
            Self::Interaction => "interaction",
            Self::Computation => "computation",
            Self::Recall => "recall",
            Self::Prediction => "prediction",
        }
    }

    /// How the pages name a definition of this type in a sentence: "the reasoning function
    /// review-brief", "the workflow monthly".
    pub fn noun(self) -> &'static str {
        match self {
            Self::Workflow => "workflow",
            Self::Reasoning => "reasoning function",
            Self::Interaction => "interaction function",
            Self::Computation => "computation function",
            Self::Recall => "recall function",
            Self::Prediction => "prediction function",
        }
    }

    /// The most bytes a source of this type may hold.
    pub fn source_bytes_max(self) -> usize {
        match self {
            Self::Workflow => WORKFLOW_SOURCE_BYTES_MAX,
            _ => MARKDOWN_SOURCE_BYTES_MAX,
        }
    }
}

impl fmt::Display for DefinitionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DefinitionType {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == text)
            .ok_or_else(|| {
                format!(
                    "{text:?} is not a definition type: it is one of reasoning, workflow, \
                 interaction, computation, recall or prediction."
                )
            })
    }
}

/// Checks a definition name against `^[a-z][a-z0-9-]{0,63}$`.
pub fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest_ok = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if first_ok && rest_ok && name.len() <= DEFINITION_NAME_CHARS_MAX {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a definition name: a lowercase letter, then up to 63 lowercase \
             letters, digits and hyphens."
        ))
    }
}

/// Checks an overview: 1 character to [`OVERVIEW_BYTES_MAX`] bytes.
pub fn check_overview(overview: &str) -> Result<(), String> {
    if overview.is_empty() {
        return Err("The overview is empty: it holds 1 character to 16,384 bytes.".into());
    }
    if overview.len() > OVERVIEW_BYTES_MAX {
        return Err(format!(
            "The overview holds {} bytes: at most 16,384 bytes in UTF-8.",
            overview.len()
        ));
    }
    Ok(())
}

/// The first words a diagram's first line may start with.
pub const DIAGRAM_KINDS: [&str; 3] = ["flowchart", "graph", "stateDiagram"];

/// Checks a diagram: Mermaid whose first line starts with `flowchart`, `graph` or
/// `stateDiagram`, at most [`DIAGRAM_BYTES_MAX`] bytes, or the word `none`.
pub fn check_diagram(diagram: &str) -> Result<(), String> {
    if diagram.len() > DIAGRAM_BYTES_MAX {
        return Err(format!(
            "The diagram holds {} bytes: at most 8,192 bytes in UTF-8.",
            diagram.len()
        ));
    }
    if diagram == "none" {
        return Ok(());
    }
    let first_line = diagram.lines().next().unwrap_or("").trim_start();
    if DIAGRAM_KINDS
        .iter()
        .any(|kind| first_line.starts_with(kind))
    {
        Ok(())
    } else {
        Err(
            "The diagram is not a flowchart or a state diagram: its first line starts with \
             flowchart, graph or stateDiagram, or the diagram is the word none."
                .into(),
        )
    }
}

/// What a type's checker derives from a source that passed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Checked {
    /// The definition's `description`.
    pub description: Option<String>,
    /// Warnings shown with the definition (at most 100).
    pub warnings: Vec<String>,
    pub input_schema: Option<Value>,
    pub output_schema: Option<Value>,
    /// A workflow's triggers; empty for the other types.
    pub triggers: Vec<Value>,
    /// A workflow's generated overview; the other types keep what the caller wrote.
    pub generated_overview: Option<String>,
    /// The definitions this one calls, as `type/name`.
    pub uses: Vec<String>,
}

/// Why a source was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum CheckError {
    /// The document has problems, each with its line and pointer.
    Issues(Vec<Issue>),
    /// The type has no checker yet.
    NotSupported(DefinitionType),
}

/// A type's checker: pure, no I/O, no clock.
pub trait DefinitionChecker: Send + Sync {
    fn check(&self, source: &str) -> Result<Checked, Vec<Issue>>;
}

/// The checkers of the types that can be saved.
#[derive(Clone, Default)]
pub struct Checkers {
    by_type: BTreeMap<DefinitionType, Arc<dyn DefinitionChecker>>,
}

impl fmt::Debug for Checkers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.by_type.keys()).finish()
    }
}

impl Checkers {
    /// The checkers this build has: every type whose checker exists.
    pub fn standard() -> Self {
        Self::default()
            .with(
                DefinitionType::Reasoning,
                Arc::new(crate::reasoning::ReasoningChecker),
            )
            .with(
                DefinitionType::Computation,
                Arc::new(crate::computation::ComputationChecker),
            )
            .with(
                DefinitionType::Interaction,
                Arc::new(crate::interaction::InteractionChecker::default()),
            )
            .with(
                DefinitionType::Recall,
                Arc::new(crate::recall::RecallChecker),
            )
            .with(
                DefinitionType::Prediction,
                Arc::new(crate::prediction::PredictionChecker::default()),
            )
            .with(
                DefinitionType::Workflow,
                Arc::new(crate::workflow::WorkflowChecker::default()),
            )
    }

    /// Adds or replaces the checker of a type.
    pub fn with(mut self, def_type: DefinitionType, checker: Arc<dyn DefinitionChecker>) -> Self {
        self.by_type.insert(def_type, checker);
        self
    }

    /// Checks a source of a type, with the envelope's size limit first.
    pub fn check(&self, def_type: DefinitionType, source: &str) -> Result<Checked, CheckError> {
        let checker = self
            .by_type
            .get(&def_type)
            .ok_or(CheckError::NotSupported(def_type))?;
        if source.len() > def_type.source_bytes_max() {
            let mut issues = Issues::new();
            issues.push(Issue::at_line(
                1,
                "",
                format!(
                    "The document holds {} bytes: a {} holds at most {} bytes in UTF-8.",
                    source.len(),
                    def_type.noun(),
                    def_type.source_bytes_max()
                ),
            ));
            return Err(CheckError::Issues(issues.into_shown()));
        }
        checker
            .check(source)
            .map_err(|found| CheckError::Issues(found.into_iter().collect::<Issues>().into_shown()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_pattern_to_the_edge() {
        assert!(check_name("a").is_ok());
        assert!(check_name(&format!("a{}", "b".repeat(63))).is_ok());
        assert!(check_name(&format!("a{}", "b".repeat(64))).is_err());
        for bad in ["", "A", "1a", "-a", "a_b", "a b", "é"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn overview_edges() {
        assert!(check_overview("x").is_ok());
        assert!(check_overview(&"x".repeat(OVERVIEW_BYTES_MAX)).is_ok());
        assert!(check_overview(&"x".repeat(OVERVIEW_BYTES_MAX + 1)).is_err());
        assert!(check_overview("").is_err());
    }

    #[test]
    fn diagram_edges() {
        assert!(check_diagram("none").is_ok());
        assert!(check_diagram("flowchart TD\n  a --> b").is_ok());
        assert!(check_diagram("graph LR\n  a --> b").is_ok());
        assert!(check_diagram("stateDiagram-v2\n  [*] --> a").is_ok());
        assert!(check_diagram("sequenceDiagram\n  a->>b: hi").is_err());
        assert!(check_diagram("").is_err());
        let at_limit = format!("graph TD\n{}", "x".repeat(DIAGRAM_BYTES_MAX - 9));
        assert_eq!(at_limit.len(), DIAGRAM_BYTES_MAX);
        assert!(check_diagram(&at_limit).is_ok());
        assert!(check_diagram(&format!("{at_limit}x")).is_err());
    }

    #[test]
    fn a_type_without_a_checker_is_not_supported() {
        let err = Checkers::default()
            .check(DefinitionType::Prediction, "x")
            .unwrap_err();
        assert_eq!(err, CheckError::NotSupported(DefinitionType::Prediction));
    }
}
