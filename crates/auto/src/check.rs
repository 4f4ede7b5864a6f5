//! `auto check FILE...`: the server's checkers, offline. Prints every issue; exit 1 when any.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use auto_engine::definitions::{CheckError, Checkers, DefinitionType};
use clap::Args;

#[derive(Args)]
pub struct CheckArgs {
    /// The documents. The type comes from --type, or from a name such as
    /// review.reasoning.md; a .yaml or .yml file is a workflow.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The type of every file.
    #[arg(long = "type")]
    def_type: Option<String>,
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
    let forced = match &args.def_type {
        Some(text) => Some(text.parse::<DefinitionType>().map_err(anyhow::Error::msg)?),
        None => None,
    };
    let mut failed = false;
    for path in &args.files {
        let Some(def_type) = forced.or_else(|| type_from_path(path)) else {
            bail!(
                "cannot tell the type of {}: pass --type, or name it NAME.TYPE.md",
                path.display()
            );
        };
        let source = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        match checkers.check(def_type, &source) {
            Ok(checked) => {
                println!("{}: ok ({def_type})", path.display());
                for warning in checked.warnings {
                    println!("{}: warning: {warning}", path.display());
                }
            }
            Err(CheckError::Issues(issues)) => {
                failed = true;
                for issue in issues {
                    println!("{}: {}", path.display(), issue.message());
                }
            }
            Err(CheckError::NotSupported(t)) => {
                failed = true;
                println!(
                    "{}: a {} cannot be checked yet: this build has no checker for it",
                    path.display(),
                    t.noun()
                );
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
