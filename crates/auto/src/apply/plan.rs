//! The plan of `auto apply`: what the folder holds beside what the playbook holds, as the
//! definitions to create, to update (with a unified diff of each part that changed), to leave
//! unchanged and, with `--prune`, to retire. Pure: the playbook's definitions come in as data.
//!
//! A part counts as changed exactly when the server would save a new version for it
//! (`update_definition`): the source or the diagram differs, or the folder has an overview
//! that differs. Without an overview file the saved overview is kept while nothing else
//! changes, and dropped by the next version, as the API does.

use std::collections::BTreeMap;

use auto_engine::definitions::DefinitionType;
use serde_json::{Value, json};
use similar::TextDiff;

use super::folder::{Document, Finding, Key};

/// A definition as the playbook holds it: its latest version, as much as the plan compares.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub def_type: DefinitionType,
    pub name: String,
    pub version: i64,
    pub retired: bool,
    pub source: String,
    pub diagram: String,
    /// `None` for a workflow, whose overview the server writes, and for a definition that has
    /// none.
    pub overview: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Create,
    Update,
    Unchanged,
    Retire,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Update => "update",
            Self::Unchanged => "unchanged",
            Self::Retire => "retire",
        }
    }
}

/// One part of a definition that a save changes, and how.
#[derive(Debug, PartialEq)]
pub struct Change {
    /// `source`, `overview` or `diagram`.
    pub part: &'static str,
    /// A unified diff, from the playbook's version to the folder's.
    pub diff: String,
}

/// What the plan does to one definition.
#[derive(Debug)]
pub struct Step<'a> {
    pub action: Action,
    pub def_type: DefinitionType,
    pub name: String,
    /// The folder's document; `None` for a definition to retire.
    pub document: Option<&'a Document>,
    /// The playbook's latest version; `None` for a definition to create.
    pub version_before: Option<i64>,
    pub changes: Vec<Change>,
}

impl Step<'_> {
    /// `TYPE/NAME`, as `auto run` names a definition.
    pub fn id(&self) -> String {
        format!("{}/{}", self.def_type, self.name)
    }

    /// The version the playbook holds once the step is applied.
    pub fn version_after(&self) -> i64 {
        match (self.action, self.version_before) {
            (Action::Update, Some(version)) => version + 1,
            (_, Some(version)) => version,
            (_, None) => 1,
        }
    }

    /// The step as `--json` prints it; `version` is the one the server answered, once applied.
    pub fn to_json(&self, version: Option<i64>) -> Value {
        json!({
            "action": self.action.as_str(),
            "type": self.def_type.as_str(),
            "name": self.name,
            "file": self.document.map(|d| d.file.display().to_string()),
            "version_before": self.version_before,
            "version": version.unwrap_or_else(|| self.version_after()),
            "changes": self.changes.iter().map(|c| json!({"part": c.part, "diff": c.diff})).collect::<Vec<_>>(),
        })
    }
}

/// The steps in the order they are applied, and what stops the whole set.
#[derive(Debug, Default)]
pub struct Plan<'a> {
    pub steps: Vec<Step<'a>>,
    /// The active definitions the folder does not hold, kept without `--prune`, as `TYPE/NAME`.
    pub kept: Vec<String>,
    /// Documents whose names the playbook retired: a retired name cannot be used again.
    pub findings: Vec<Finding>,
}

impl Plan<'_> {
    /// How many steps take each action.
    pub fn count(&self, action: Action) -> usize {
        self.steps.iter().filter(|s| s.action == action).count()
    }
}

/// The order saves go in: functions before the workflows that call them, recall functions
/// before the predictions they feed. Retiring goes the other way.
fn apply_rank(def_type: DefinitionType) -> u8 {
    match def_type {
        DefinitionType::Reasoning => 0,
        DefinitionType::Computation => 1,
        DefinitionType::Interaction => 2,
        DefinitionType::Recall => 3,
        DefinitionType::Prediction => 4,
        DefinitionType::Workflow => 5,
    }
}

/// Compares the folder with the playbook.
pub fn plan<'a>(documents: &'a [Document], held: &[Held], prune: bool) -> Plan<'a> {
    let held_by_key: BTreeMap<Key, &Held> = held
        .iter()
        .map(|h| ((h.def_type, h.name.clone()), h))
        .collect();
    let mut plan = Plan::default();
    for document in documents {
        match held_by_key.get(&(document.def_type, document.name.clone())) {
            None => plan.steps.push(Step {
                action: Action::Create,
                def_type: document.def_type,
                name: document.name.clone(),
                document: Some(document),
                version_before: None,
                changes: Vec::new(),
            }),
            Some(held) if held.retired => plan.findings.push(retired_finding(document)),
            Some(held) => plan.steps.push(compare(document, held)),
        }
    }
    plan.steps
        .sort_by_key(|s| (apply_rank(s.def_type), s.name.clone()));
    let in_folder: Vec<Key> = documents
        .iter()
        .map(|d| (d.def_type, d.name.clone()))
        .collect();
    let mut gone: Vec<&Held> = held
        .iter()
        .filter(|h| !h.retired && !in_folder.contains(&(h.def_type, h.name.clone())))
        .collect();
    gone.sort_by_key(|h| (std::cmp::Reverse(apply_rank(h.def_type)), h.name.clone()));
    for held in gone {
        if prune {
            plan.steps.push(Step {
                action: Action::Retire,
                def_type: held.def_type,
                name: held.name.clone(),
                document: None,
                version_before: Some(held.version),
                changes: Vec::new(),
            });
        } else {
            plan.kept.push(format!("{}/{}", held.def_type, held.name));
        }
    }
    plan.kept.sort();
    plan
}

fn retired_finding(document: &Document) -> Finding {
    Finding {
        file: document.file.clone(),
        line: None,
        column: None,
        pointer: String::new(),
        message: format!(
            "The {} {} was retired; its name cannot be used again.",
            document.def_type.noun(),
            document.name
        ),
        hint: Some("give the definition a new name, or remove the file".into()),
    }
}

/// The update a document makes to the definition the playbook holds, or none.
fn compare<'a>(document: &'a Document, held: &Held) -> Step<'a> {
    let id = document.id();
    let before = |part: &str| format!("{id} v{} {part}", held.version);
    let mut changes = Vec::new();
    if document.source != held.source {
        changes.push(Change {
            part: "source",
            diff: diff(
                &held.source,
                &document.source,
                &before("source"),
                &document.file.display().to_string(),
            ),
        });
    }
    if document.diagram_text() != held.diagram {
        let after = match &document.diagram {
            Some(diagram) => diagram.file.display().to_string(),
            None => "none: the folder has no diagram file".into(),
        };
        changes.push(Change {
            part: "diagram",
            diff: diff(
                &held.diagram,
                document.diagram_text(),
                &before("diagram"),
                &after,
            ),
        });
    }
    let overview_before = held.overview.as_deref().unwrap_or("");
    let overview = match &document.overview {
        Some(overview) if overview.text != overview_before => {
            Some((overview.text.as_str(), overview.file.display().to_string()))
        }
        // The next version keeps no overview when the folder has none.
        None if !changes.is_empty() && !overview_before.is_empty() => {
            Some(("", "none: the folder has no overview file".into()))
        }
        _ => None,
    };
    if let Some((text, after)) = overview {
        changes.push(Change {
            part: "overview",
            diff: diff(overview_before, text, &before("overview"), &after),
        });
    }
    Step {
        action: if changes.is_empty() {
            Action::Unchanged
        } else {
            Action::Update
        },
        def_type: document.def_type,
        name: document.name.clone(),
        document: Some(document),
        version_before: Some(held.version),
        changes,
    }
}

/// A unified diff by lines, three lines of context.
fn diff(before: &str, after: &str, before_label: &str, after_label: &str) -> String {
    TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(before_label, after_label)
        .to_string()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::folder::Companion;
    use super::*;

    fn document(def_type: DefinitionType, name: &str, source: &str) -> Document {
        Document {
            def_type,
            name: name.into(),
            file: PathBuf::from(format!("defs/{name}.md")),
            source: source.into(),
            overview: None,
            diagram: None,
        }
    }

    fn held(def_type: DefinitionType, name: &str, source: &str) -> Held {
        Held {
            def_type,
            name: name.into(),
            version: 1,
            retired: false,
            source: source.into(),
            diagram: "none".into(),
            overview: None,
        }
    }

    fn actions(plan: &Plan) -> Vec<(Action, String)> {
        plan.steps.iter().map(|s| (s.action, s.id())).collect()
    }

    #[test]
    fn functions_go_before_workflows_and_retiring_goes_last() {
        use DefinitionType::*;
        let documents = [
            document(Workflow, "ingest", "a\n"),
            document(Reasoning, "review", "b\n"),
            document(Computation, "days", "c\n"),
        ];
        let held = [
            held(Computation, "days", "c\n"),
            held(Reasoning, "old", "x\n"),
            held(Workflow, "old-flow", "y\n"),
            Held {
                retired: true,
                ..held(Reasoning, "gone", "z\n")
            },
        ];
        let plan = plan(&documents, &held, true);
        assert_eq!(
            actions(&plan),
            [
                (Action::Create, "reasoning/review".into()),
                (Action::Unchanged, "computation/days".into()),
                (Action::Create, "workflow/ingest".into()),
                (Action::Retire, "workflow/old-flow".into()),
                (Action::Retire, "reasoning/old".into()),
            ]
        );
        let kept = super::plan(&documents, &held, false);
        assert_eq!(kept.count(Action::Retire), 0);
        assert_eq!(kept.kept, ["reasoning/old", "workflow/old-flow"]);
    }

    #[test]
    fn an_update_shows_the_diff_of_each_part_that_changed() {
        let mut edited = document(DefinitionType::Computation, "days", "one\ntwo\n");
        edited.diagram = Some(Companion {
            file: "defs/days.diagram.mmd".into(),
            text: "flowchart LR\n".into(),
        });
        let before = Held {
            overview: Some("About days.\n".into()),
            ..held(DefinitionType::Computation, "days", "one\n")
        };
        let plan = plan(std::slice::from_ref(&edited), &[before], false);
        let step = &plan.steps[0];
        assert_eq!(step.action, Action::Update);
        assert_eq!(step.version_after(), 2);
        let parts: Vec<&str> = step.changes.iter().map(|c| c.part).collect();
        assert_eq!(parts, ["source", "diagram", "overview"]);
        assert_eq!(
            step.changes[0].diff,
            "--- computation/days v1 source\n+++ defs/days.md\n@@ -1 +1,2 @@\n one\n+two\n"
        );
        assert_eq!(
            step.changes[1].diff,
            "--- computation/days v1 diagram\n+++ defs/days.diagram.mmd\n@@ -1 +1 @@\n-none\n\
             \\ No newline at end of file\n+flowchart LR\n"
        );
        assert_eq!(
            step.changes[2].diff,
            "--- computation/days v1 overview\n+++ none: the folder has no overview file\n\
             @@ -1 +0,0 @@\n-About days.\n"
        );
    }

    #[test]
    fn a_missing_overview_alone_changes_nothing_and_a_retired_name_is_refused() {
        let same = document(DefinitionType::Reasoning, "review", "a\n");
        let before = Held {
            overview: Some("About.\n".into()),
            ..held(DefinitionType::Reasoning, "review", "a\n")
        };
        let plan = plan(
            std::slice::from_ref(&same),
            std::slice::from_ref(&before),
            false,
        );
        assert_eq!(plan.steps[0].action, Action::Unchanged);
        let retired = Held {
            retired: true,
            ..before
        };
        let plan = super::plan(std::slice::from_ref(&same), &[retired], false);
        assert!(plan.steps.is_empty());
        assert_eq!(
            plan.findings[0].message,
            "The reasoning function review was retired; its name cannot be used again."
        );
    }
}
