//! `auto check FILE...`: the server's checkers, offline. Prints every issue, as lines or with
//! `--json` as one JSON document; exit 1 when any.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use auto_engine::definitions::{CheckError, Checkers, DefinitionType};
use clap::Args;
use serde_json::{Value, json};

use crate::{InputError, UsageError};

#[derive(Args)]
pub struct CheckArgs {
    /// The documents. The type comes from --type, or from a name such as
    /// review.reasoning.md; a .yaml or .yml file is a workflow.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The type of every file: reasoning, workflow, interaction, computation, recall or
    /// prediction.
    #[arg(long = "type", value_name = "TYPE", value_parser = parse_type)]
    def_type: Option<DefinitionType>,
    /// Print `{"ok", "issues", "warnings"}` as JSON: each issue with its file, line, column
    /// (when known), pointer and message; each warning with its file and message.
    #[arg(long)]
    json: bool,
}

fn parse_type(text: &str) -> Result<DefinitionType, String> {
    text.parse()
}

/// The type a file's name implies: `NAME.TYPE.md`, or a workflow for `.yaml`/`.yml`.
pub fn type_from_path(path: &Path) -> Option<DefinitionType> {
    let name = path.file_name()?.to_str()?;
    if name.ends_with(".yaml") || name.ends_with(".yml") {
        return Some(DefinitionType::Workflow);
    }
    let stem = name.strip_suffix(".md")?;
    let (_, type_text) = stem.rsplit_once('.')?;
    type_text.parse().ok()
}

pub fn run(args: CheckArgs) -> Result<ExitCode> {
    let checkers = Checkers::standard();
    let mut issues: Vec<Value> = Vec::new();
    let mut warnings: Vec<Value> = Vec::new();
    let mut failed = false;
    for path in &args.files {
        let file = path.display().to_string();
        let Some(def_type) = args.def_type.or_else(|| type_from_path(path)) else {
            return Err(UsageError(format!(
                "cannot tell the type of {file}: pass --type, or name it NAME.TYPE.md"
            ))
            .into());
        };
        let source =
            std::fs::read_to_string(path).context(InputError(format!("cannot read {file}")))?;
        match checkers.check(def_type, &source) {
            Ok(checked) => {
                if !args.json {
                    println!("{file}: ok ({def_type})");
                }
                for warning in checked.warnings {
                    if args.json {
                        warnings.push(json!({"file": file, "message": warning.to_string()}));
                    } else {
                        println!("{file}: warning: {warning}");
                    }
                }
            }
            Err(CheckError::Issues(found)) => {
                failed = true;
                for issue in found {
                    if args.json {
                        issues.push(json!({
                            "file": file,
                            "line": issue.line,
                            "column": issue.column,
                            "pointer": issue.path,
                            "message": issue.message(),
                        }));
                    } else {
                        println!("{file}: {}", issue.message());
                    }
                }
            }
            Err(CheckError::NotSupported(t)) => {
                failed = true;
                let message = format!(
                    "a {} cannot be checked yet: this build has no checker for it",
                    t.noun()
                );
                if args.json {
                    issues.push(json!({
                        "file": file, "line": null, "column": null, "pointer": "",
                        "message": message,
                    }));
                } else {
                    println!("{file}: {message}");
                }
            }
        }
    }
    if args.json {
        let report = json!({"ok": !failed, "issues": issues, "warnings": warnings});
        println!("{}", serde_json::to_string_pretty(&report)?);
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
