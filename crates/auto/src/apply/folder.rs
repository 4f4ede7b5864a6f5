//! A folder of definitions as `auto apply` reads it: which file holds which definition, its
//! overview and diagram beside it, and every issue found on the way, each with its file and,
//! for a document, its line.
//!
//! The layout, and the words of the command's help:
//!
//! - a type folder holds `NAME.md` documents of its type: `reasoning/`, `interactions/`,
//!   `computations/`, `recalls/`, `predictions/`, and `workflows/` with `NAME.yaml` or
//!   `NAME.yml`;
//! - at the top, a document says its type in its name, as `auto check` reads it:
//!   `NAME.TYPE.md`, or `NAME.yaml`/`NAME.yml` for a workflow;
//! - beside a document, its file name without the extension then `.overview.md` holds the
//!   overview and `.diagram.mmd` the Mermaid diagram (`reasoning/review.overview.md`,
//!   `review.reasoning.diagram.mmd`); without a diagram file the diagram is the word `none`, as
//!   `auto def create` sends it; a workflow's overview is generated, so it takes none;
//! - files and folders whose name starts with `.`, and `README.md`, are not read.
//!
//! Reading is the only I/O here; the checks are the server's own ([`server_checkers`]), so the
//! issues are those a save would answer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use auto_engine::definitions::{
    CheckError, Checkers, DefinitionType, check_diagram, check_name, check_overview,
};
use auto_server::server_checkers;
use serde_json::{Value, json};

use crate::InputError;

/// The folder each type's documents sit in.
pub const TYPE_FOLDERS: [(&str, DefinitionType); 6] = [
    ("reasoning", DefinitionType::Reasoning),
    ("workflows", DefinitionType::Workflow),
    ("interactions", DefinitionType::Interaction),
    ("computations", DefinitionType::Computation),
    ("recalls", DefinitionType::Recall),
    ("predictions", DefinitionType::Prediction),
];

/// "A definition has a name" and a type; a playbook holds one definition of each pair.
pub type Key = (DefinitionType, String);

/// One definition the folder holds, as a save would send it.
#[derive(Debug)]
pub struct Document {
    pub def_type: DefinitionType,
    pub name: String,
    pub file: PathBuf,
    pub source: String,
    pub overview: Option<Companion>,
    pub diagram: Option<Companion>,
}

impl Document {
    /// The diagram a save sends: the file's text, or the word `none` without one.
    pub fn diagram_text(&self) -> &str {
        self.diagram.as_ref().map_or("none", |d| d.text.as_str())
    }

    /// `TYPE/NAME`, as `auto run` names a definition.
    pub fn id(&self) -> String {
        format!("{}/{}", self.def_type, self.name)
    }
}

/// An overview or a diagram beside its document.
#[derive(Debug)]
pub struct Companion {
    pub file: PathBuf,
    pub text: String,
}

/// A problem of the folder or of one of its documents, with what to do about it when that is
/// not plain from the message.
#[derive(Debug, PartialEq)]
pub struct Finding {
    pub file: PathBuf,
    /// The line in the file, for an issue a checker placed.
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// The JSON pointer into the document; empty when the issue has no place in it.
    pub pointer: String,
    /// The message: a checker's own, as the pages show it (`Line 4, /config/temperature:
    /// Expected number.`), or this module's.
    pub message: String,
    pub hint: Option<String>,
}

impl Finding {
    fn file(file: &Path, message: impl Into<String>, hint: Option<String>) -> Self {
        Self {
            file: file.to_owned(),
            line: None,
            column: None,
            pointer: String::new(),
            message: message.into(),
            hint,
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "file": self.file.display().to_string(),
            "line": self.line,
            "column": self.column,
            "pointer": self.pointer,
            "message": self.message,
            "hint": self.hint,
        })
    }
}

/// What a folder holds: its documents, and every issue found reading and checking them.
#[derive(Debug, Default)]
pub struct Folder {
    pub documents: Vec<Document>,
    pub findings: Vec<Finding>,
}

/// Reads and checks a folder. An error is a folder that cannot be read at all
/// ([`InputError`]); anything wrong inside it is a finding.
pub fn read(dir: &Path) -> Result<Folder> {
    let mut files = Files::default();
    let entries = sorted_entries(dir)
        .with_context(|| InputError(format!("cannot read the folder {}", dir.display())))?;
    for path in entries {
        let name = file_name(&path);
        if path.is_dir() {
            match TYPE_FOLDERS.iter().find(|(folder, _)| *folder == name) {
                Some((_, def_type)) => read_type_folder(&path, *def_type, &mut files),
                None => files.findings.push(Finding::file(
                    &path,
                    "is not a folder apply reads",
                    Some(folders_hint()),
                )),
            }
        } else if !name.eq_ignore_ascii_case("README.md") {
            files.add(&path, None);
        }
    }
    let mut folder = files.pair();
    let checkers = server_checkers();
    for document in &folder.documents {
        check(&checkers, document, &mut folder.findings);
    }
    Ok(folder)
}

fn folders_hint() -> String {
    let folders: Vec<String> = TYPE_FOLDERS.iter().map(|(f, _)| format!("{f}/")).collect();
    format!(
        "apply reads the type folders {} and NAME.TYPE.md, NAME.yaml and their overview and \
         diagram at the top; move anything else out of the folder",
        folders.join(", ")
    )
}

/// The entries of a folder by name, without those whose name starts with a dot.
fn sorted_entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if !file_name(&path).starts_with('.') {
            paths.push(path);
        }
    }
    paths.sort();
    Ok(paths)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read_type_folder(dir: &Path, def_type: DefinitionType, files: &mut Files) {
    let entries = match sorted_entries(dir) {
        Ok(entries) => entries,
        Err(error) => {
            files
                .findings
                .push(Finding::file(dir, format!("cannot be read: {error}"), None));
            return;
        }
    };
    for path in entries {
        if path.is_dir() {
            files.findings.push(Finding::file(
                &path,
                "is a folder inside a type folder, which apply does not read",
                Some(folders_hint()),
            ));
        } else {
            files.add(&path, Some(def_type));
        }
    }
}

/// The files of a folder sorted into documents and companions, before they are paired.
#[derive(Default)]
struct Files {
    documents: Vec<(Document, PathBuf)>,
    /// Overviews and diagrams by the path of their document without its extension.
    overviews: BTreeMap<PathBuf, Companion>,
    diagrams: BTreeMap<PathBuf, Companion>,
    findings: Vec<Finding>,
}

/// What a file is, by its name and folder.
#[derive(Debug, PartialEq)]
enum Kind {
    Overview {
        base: String,
    },
    Diagram {
        base: String,
    },
    Document {
        def_type: DefinitionType,
        name: String,
        base: String,
    },
    Unknown {
        hint: String,
    },
}

/// Tells a file's kind from its name, in a type folder or at the top.
fn kind_of(file_name: &str, folder_type: Option<DefinitionType>) -> Kind {
    use DefinitionType::Workflow;
    if let Some(base) = file_name.strip_suffix(".overview.md") {
        return Kind::Overview { base: base.into() };
    }
    if let Some(base) = file_name.strip_suffix(".diagram.mmd") {
        return Kind::Diagram { base: base.into() };
    }
    let yaml_hint = || Kind::Unknown {
        hint: "a workflow is a YAML document: name it NAME.yaml".into(),
    };
    let markdown_hint = |def_type: DefinitionType| Kind::Unknown {
        hint: format!(
            "a {} is a Markdown document: name it NAME.md",
            def_type.noun()
        ),
    };
    let yaml = file_name
        .strip_suffix(".yaml")
        .or_else(|| file_name.strip_suffix(".yml"));
    if let Some(base) = yaml {
        return match folder_type {
            None | Some(Workflow) => Kind::Document {
                def_type: Workflow,
                name: base.into(),
                base: base.into(),
            },
            Some(def_type) => markdown_hint(def_type),
        };
    }
    let Some(base) = file_name.strip_suffix(".md") else {
        return match folder_type {
            Some(Workflow) => yaml_hint(),
            Some(def_type) => markdown_hint(def_type),
            None => Kind::Unknown {
                hint: folders_hint(),
            },
        };
    };
    match folder_type {
        Some(Workflow) => yaml_hint(),
        Some(def_type) => Kind::Document {
            def_type,
            name: base.into(),
            base: base.into(),
        },
        None => match base.rsplit_once('.').map(|(n, t)| (n, t.parse())) {
            Some((_, Ok(Workflow))) => yaml_hint(),
            Some((name, Ok(def_type))) => Kind::Document {
                def_type,
                name: name.into(),
                base: base.into(),
            },
            _ => Kind::Unknown {
                hint: format!(
                    "name it {base}.TYPE.md, such as {base}.reasoning.md, or put it in a type \
                     folder, such as reasoning/{file_name}"
                ),
            },
        },
    }
}

/// A file's text, or a finding when it cannot be read.
fn read_file(path: &Path, findings: &mut Vec<Finding>) -> Option<Companion> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(Companion {
            file: path.to_owned(),
            text,
        }),
        Err(error) => {
            findings.push(Finding::file(
                path,
                format!("cannot be read: {error}"),
                None,
            ));
            None
        }
    }
}

impl Files {
    fn add(&mut self, path: &Path, folder_type: Option<DefinitionType>) {
        let with_base = |base: &str| path.with_file_name(base);
        match kind_of(&file_name(path), folder_type) {
            Kind::Unknown { hint } => self.findings.push(Finding::file(
                path,
                "is not a definition, an overview or a diagram",
                Some(hint),
            )),
            Kind::Overview { base } => {
                if let Some(overview) = read_file(path, &mut self.findings) {
                    self.overviews.insert(with_base(&base), overview);
                }
            }
            Kind::Diagram { base } => {
                if let Some(diagram) = read_file(path, &mut self.findings) {
                    self.diagrams.insert(with_base(&base), diagram);
                }
            }
            Kind::Document {
                def_type,
                name,
                base,
            } => {
                if let Some(read) = read_file(path, &mut self.findings) {
                    let document = Document {
                        def_type,
                        name,
                        file: read.file,
                        source: read.text,
                        overview: None,
                        diagram: None,
                    };
                    self.documents.push((document, with_base(&base)));
                }
            }
        }
    }

    /// Gives each document its overview and diagram; a companion without a document, a
    /// workflow's overview and a definition held twice are findings.
    fn pair(mut self) -> Folder {
        let mut documents = Vec::new();
        let mut seen: BTreeMap<Key, PathBuf> = BTreeMap::new();
        for (mut document, base) in std::mem::take(&mut self.documents) {
            document.overview = self.overviews.remove(&base);
            document.diagram = self.diagrams.remove(&base);
            let key = (document.def_type, document.name.clone());
            if let Some(first) = seen.get(&key) {
                self.findings.push(Finding::file(
                    &document.file,
                    format!("holds {} again", document.id()),
                    Some(format!(
                        "{} holds it already; keep one of the two",
                        first.display()
                    )),
                ));
                continue;
            }
            seen.insert(key, document.file.clone());
            if let (DefinitionType::Workflow, Some(overview)) =
                (document.def_type, &document.overview)
            {
                self.findings.push(Finding::file(
                    &overview.file,
                    "is the overview of a workflow, which the server writes from its document",
                    Some("remove the file; describe the workflow in its document".into()),
                ));
            }
            documents.push(document);
        }
        for companion in self.overviews.values().chain(self.diagrams.values()) {
            self.findings.push(Finding::file(
                &companion.file,
                "has no definition beside it",
                Some(
                    "an overview or diagram sits beside its document and shares its name: \
                     reasoning/review.md takes reasoning/review.overview.md and \
                     reasoning/review.diagram.mmd"
                        .into(),
                ),
            ));
        }
        Folder {
            documents,
            findings: self.findings,
        }
    }
}

/// Checks one document as a save would: its name, its source with its type's checker, its
/// overview and its diagram.
fn check(checkers: &Checkers, document: &Document, findings: &mut Vec<Finding>) {
    if let Err(message) = check_name(&document.name) {
        findings.push(Finding::file(
            &document.file,
            message,
            Some("the file's name, without its extension, is the definition's name".into()),
        ));
    }
    match checkers.check(document.def_type, &document.source) {
        Ok(_) => {}
        Err(CheckError::Issues(issues)) => {
            findings.extend(issues.into_iter().map(|issue| Finding {
                file: document.file.clone(),
                line: Some(issue.line),
                column: issue.column,
                message: issue.message(),
                pointer: issue.path,
                hint: None,
            }))
        }
        Err(CheckError::NotSupported(t)) => findings.push(Finding::file(
            &document.file,
            format!(
                "A {} cannot be saved yet: this runtime has no checker for the type {t}.",
                t.noun()
            ),
            None,
        )),
    }
    if let Some(overview) = &document.overview
        && let Err(message) = check_overview(&overview.text)
    {
        findings.push(Finding::file(&overview.file, message, None));
    }
    if let Some(diagram) = &document.diagram
        && let Err(message) = check_diagram(&diagram.text)
    {
        findings.push(Finding::file(&diagram.file, message, None));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(def_type: DefinitionType, name: &str) -> Kind {
        Kind::Document {
            def_type,
            name: name.into(),
            base: name.into(),
        }
    }

    #[test]
    fn a_type_folder_gives_the_type_and_the_top_the_name() {
        use DefinitionType::*;
        assert_eq!(
            kind_of("review.md", Some(Reasoning)),
            document(Reasoning, "review")
        );
        assert_eq!(
            kind_of("ingest.yaml", Some(Workflow)),
            document(Workflow, "ingest")
        );
        assert_eq!(kind_of("ingest.yml", None), document(Workflow, "ingest"));
        assert_eq!(
            kind_of("days.computation.md", None),
            Kind::Document {
                def_type: Computation,
                name: "days".into(),
                base: "days.computation".into(),
            }
        );
        assert_eq!(
            kind_of("review.overview.md", Some(Reasoning)),
            Kind::Overview {
                base: "review".into()
            }
        );
        assert_eq!(
            kind_of("days.computation.diagram.mmd", None),
            Kind::Diagram {
                base: "days.computation".into()
            }
        );
        for (file, folder) in [
            ("notes.md", None),
            ("ingest.md", Some(Workflow)),
            ("review.yaml", Some(Reasoning)),
            ("review.txt", Some(Reasoning)),
            ("Makefile", None),
            ("ingest.workflow.md", None),
        ] {
            assert!(
                matches!(kind_of(file, folder), Kind::Unknown { .. }),
                "{file} in {folder:?}"
            );
        }
    }
}
