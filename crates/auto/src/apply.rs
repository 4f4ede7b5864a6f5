//! `auto apply DIR`: sync a folder of definitions to a playbook. It checks every document with
//! the server's checkers and refuses the whole set on any issue; then reads the playbook's
//! definitions (`list_definitions`, and `get_definition` for overviews), prints the plan
//! (create, update with a diff, unchanged, and with `--prune` retire) and applies it with
//! `create_definition`, `update_definition` and `retire_definition`.
//!
//! The plan is data on stdout; notes, progress and errors go to stderr. Applying is not one
//! transaction: a save the server refuses half way stops the rest, and applying again goes on
//! from there, since what was saved shows as unchanged.

mod folder;
mod plan;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use auto_engine::definitions::DefinitionType;
use reqwest::Method;
use serde_json::{Value, json};

use self::folder::{Document, Finding};
use self::plan::{Action, Held, Plan, Step};
use crate::client::{Client, pb_path, print_problem};
use crate::{PlaybookArgs, Remote};

/// The layout `auto apply --help` shows.
pub const LAYOUT: &str = "\
The folder:
  reasoning/NAME.md      interactions/NAME.md   computations/NAME.md
  recalls/NAME.md        predictions/NAME.md    workflows/NAME.yaml (or .yml)
  NAME.TYPE.md and NAME.yaml at the top, as `auto check` reads them.
Beside a document, its file name without the extension, then:
  .overview.md   the overview (reasoning/review.overview.md); a workflow's is generated
  .diagram.mmd   the Mermaid diagram (reasoning/review.diagram.mmd); without one, none
Names starting with a dot, and README.md, are not read.

Every document is checked first, as the server checks a save; any issue stops the whole set
and nothing is changed. Exit 0 when applied, 1 on an issue or a refusal.";

#[derive(clap::Args)]
pub struct ApplyArgs {
    /// The folder of definitions.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Also retire the playbook's definitions the folder no longer holds.
    #[arg(long)]
    prune: bool,
    /// Print the plan and change nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    at: PlaybookArgs,
    #[command(flatten)]
    remote: Remote,
}

pub async fn run(args: ApplyArgs) -> Result<ExitCode> {
    let folder = folder::read(&args.dir)?;
    let client = Client::new(args.remote);
    if !folder.findings.is_empty() {
        return refuse(&client, &folder.findings);
    }
    let held = match read_playbook(&client, &args.at, &folder.documents).await? {
        Ok(held) => held,
        Err(problem) => {
            let code = client.refused(&problem)?;
            if problem["status"] == 404 && !client.remote.json {
                eprintln!(
                    "hint: create the playbook with `auto playbook create {} --org {}`",
                    args.at.playbook, args.at.org
                );
            }
            return Ok(code);
        }
    };
    let plan = plan::plan(&folder.documents, &held, args.prune);
    if !plan.findings.is_empty() {
        return refuse(&client, &plan.findings);
    }
    let paint = Paint::stdout();
    if !client.remote.json {
        print_plan(&plan, paint);
    }
    if args.dry_run {
        if client.remote.json {
            print_json(&plan, true, &[], None)?;
        } else {
            eprintln!("Dry run: {}; nothing was changed.", counts(&plan, true));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let (versions, refused) = apply(&client, &args.at, &plan).await?;
    if client.remote.json {
        print_json(&plan, false, &versions, refused.as_ref())?;
        return Ok(if refused.is_some() {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    match refused {
        Some((id, problem)) => {
            print_problem(&problem);
            eprintln!(
                "Stopped at {id}: {} of {} changes were applied before it; apply again once it \
                 is fixed.",
                versions.len(),
                changes(&plan).count()
            );
            Ok(ExitCode::FAILURE)
        }
        None => {
            eprintln!("Applied: {}.", counts(&plan, false));
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Prints every finding, each with its file and, for a document, its line; exit 1.
fn refuse(client: &Client, findings: &[Finding]) -> Result<ExitCode> {
    if client.remote.json {
        let issues: Vec<Value> = findings.iter().map(Finding::to_json).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"applied": false, "issues": issues}))?
        );
        return Ok(ExitCode::FAILURE);
    }
    let files: std::collections::BTreeSet<&PathBuf> = findings.iter().map(|f| &f.file).collect();
    eprintln!(
        "error: {} {} in {} {}; nothing was applied",
        findings.len(),
        plural(findings.len(), "issue", "issues"),
        files.len(),
        plural(files.len(), "file", "files"),
    );
    for finding in findings {
        eprintln!("  {}: {}", finding.file.display(), finding.message);
        if let Some(hint) = &finding.hint {
            eprintln!("    hint: {hint}");
        }
    }
    Ok(ExitCode::FAILURE)
}

fn plural<'a>(n: usize, one: &'a str, more: &'a str) -> &'a str {
    if n == 1 { one } else { more }
}

/// The playbook's definitions, with the overview of each the folder also holds;
/// `Ok(Err(problem))` is a refusal.
async fn read_playbook(
    client: &Client,
    at: &PlaybookArgs,
    documents: &[Document],
) -> Result<Result<Vec<Held>, Value>> {
    let answer = client
        .send(Method::GET, &format!("{}/definitions", pb_path(at)), None)
        .await?;
    if !answer.ok() {
        return Ok(Err(answer.body));
    }
    let mut held = Vec::new();
    for definition in answer.body["definitions"].as_array().into_iter().flatten() {
        // A type this client does not know cannot be in the folder, nor be pruned by it.
        let Some(mut found) = held_of(definition) else {
            continue;
        };
        let in_folder = documents
            .iter()
            .any(|d| d.def_type == found.def_type && d.name == found.name);
        // A workflow's overview is the server's own writing: never compared.
        if in_folder && !found.retired && found.def_type != DefinitionType::Workflow {
            let path = format!(
                "{}/definitions/{}/{}",
                pb_path(at),
                found.def_type,
                found.name
            );
            let answer = client.send(Method::GET, &path, None).await?;
            if !answer.ok() {
                return Ok(Err(answer.body));
            }
            found.overview = answer.body["overview"].as_str().map(String::from);
        }
        held.push(found);
    }
    Ok(Ok(held))
}

fn held_of(definition: &Value) -> Option<Held> {
    Some(Held {
        def_type: definition["type"].as_str()?.parse().ok()?,
        name: definition["name"].as_str()?.to_owned(),
        version: definition["version"].as_i64()?,
        retired: definition["status"] == "retired",
        source: definition["source"].as_str()?.to_owned(),
        diagram: definition["diagram"].as_str()?.to_owned(),
        overview: None,
    })
}

/// The steps that change something, in order.
fn changes<'a, 'p>(plan: &'p Plan<'a>) -> impl Iterator<Item = &'p Step<'a>> {
    plan.steps.iter().filter(|s| s.action != Action::Unchanged)
}

/// What was saved and whether a save was refused.
type Applied = (Vec<(String, i64)>, Option<(String, Value)>);

/// Applies the steps in order, stopping at the first the server refuses. Returns the version
/// of each step applied, by `TYPE/NAME`, and the refused step's id and problem.
async fn apply(client: &Client, at: &PlaybookArgs, plan: &Plan<'_>) -> Result<Applied> {
    let total = changes(plan).count();
    let progress = std::io::stderr().is_terminal();
    let mut versions = Vec::new();
    for (index, step) in changes(plan).enumerate() {
        if progress {
            eprint!("\r\x1b[2Kapplying {}/{total} {}", index + 1, step.id());
        }
        let (method, path, body) = request_of(at, step);
        let answer = client.send(method, &path, body).await?;
        if !answer.ok() {
            if progress {
                eprint!("\r\x1b[2K");
            }
            return Ok((versions, Some((step.id(), answer.body))));
        }
        let version = answer.body["version"]
            .as_i64()
            .unwrap_or(step.version_after());
        versions.push((step.id(), version));
    }
    if progress {
        eprint!("\r\x1b[2K");
    }
    Ok((versions, None))
}

/// The request a step sends.
fn request_of(at: &PlaybookArgs, step: &Step) -> (Method, String, Option<Value>) {
    let definitions = format!("{}/definitions", pb_path(at));
    let one = format!("{definitions}/{}/{}", step.def_type, step.name);
    let save = |document: &Document| {
        let mut body = json!({
            "source": document.source,
            "diagram": document.diagram_text(),
        });
        if let Some(overview) = &document.overview {
            body["overview"] = json!(overview.text);
        }
        body
    };
    match (step.action, step.document) {
        (Action::Create, Some(document)) => {
            let mut body = save(document);
            body["type"] = json!(step.def_type.as_str());
            body["name"] = json!(step.name);
            (Method::POST, definitions, Some(body))
        }
        (Action::Update, Some(document)) => (Method::PUT, one, Some(save(document))),
        (Action::Retire, None) => (Method::DELETE, one, None),
        // Invariant: `plan::plan` gives a document to every step but a retire, and `apply`
        // skips the unchanged; anything else would save or retire the wrong definition.
        (action, document) => unreachable!(
            "a step {action:?} {} with a document: {}",
            step.id(),
            document.is_some()
        ),
    }
}

/// `1 to create, 2 unchanged, ...` before applying; `1 created, ...` after.
fn counts(plan: &Plan, planned: bool) -> String {
    let words = if planned {
        ["to create", "to update", "unchanged", "to retire"]
    } else {
        ["created", "updated", "unchanged", "retired"]
    };
    let actions = [
        Action::Create,
        Action::Update,
        Action::Unchanged,
        Action::Retire,
    ];
    actions
        .iter()
        .zip(words)
        .map(|(action, word)| format!("{} {word}", plan.count(*action)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The plan for people: one line a definition, the diff of each update below its line, and a
/// note on stderr of the definitions kept without `--prune`.
fn print_plan(plan: &Plan, paint: Paint) {
    for step in &plan.steps {
        let version = match (step.action, step.version_before) {
            (Action::Update, Some(before)) => format!("v{before} -> v{}", step.version_after()),
            _ => format!("v{}", step.version_after()),
        };
        let file = step
            .document
            .filter(|_| step.action != Action::Unchanged)
            .map(|d| format!("  {}", d.file.display()))
            .unwrap_or_default();
        let action = format!("{:<10}", step.action.as_str());
        let colour = match step.action {
            Action::Create => GREEN,
            Action::Update => YELLOW,
            Action::Unchanged => "",
            Action::Retire => RED,
        };
        println!(
            "{} {} {version}{file}",
            paint.paint(colour, &action),
            step.id()
        );
        for change in &step.changes {
            for line in change.diff.lines() {
                println!("{}", paint.diff_line(line));
            }
        }
    }
    if !plan.kept.is_empty() {
        eprintln!(
            "The playbook also holds {} the folder does not: {}.",
            plural(plan.kept.len(), "a definition", "definitions"),
            plan.kept.join(", ")
        );
        eprintln!("hint: --prune retires them");
    }
}

/// The plan, or what was applied, as JSON on stdout.
fn print_json(
    plan: &Plan,
    dry_run: bool,
    versions: &[(String, i64)],
    refused: Option<&(String, Value)>,
) -> Result<()> {
    let definitions: Vec<Value> = plan
        .steps
        .iter()
        .map(|step| {
            let id = step.id();
            let saved = versions.iter().find(|(v, _)| *v == id).map(|(_, v)| *v);
            let mut value = step.to_json(saved);
            if !dry_run && step.action != Action::Unchanged {
                value["applied"] = json!(saved.is_some());
            }
            value
        })
        .collect();
    let mut out = json!({
        "dry_run": dry_run,
        "applied": !dry_run && refused.is_none(),
        "definitions": definitions,
        "kept": plan.kept,
    });
    if let Some((id, problem)) = refused {
        out["stopped_at"] = json!(id);
        out["problem"] = problem.clone();
    }
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(())
}

const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const RED: &str = "\x1b[31m";
const CYAN: &str = "\x1b[36m";
const BOLD: &str = "\x1b[1m";

/// Colour for stdout: only on a terminal, and never when `NO_COLOR` is set (no-color.org).
#[derive(Clone, Copy)]
struct Paint {
    on: bool,
}

impl Paint {
    fn stdout() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            on: std::io::stdout().is_terminal() && !no_color,
        }
    }

    fn paint(self, colour: &str, text: &str) -> String {
        if self.on && !colour.is_empty() {
            format!("{colour}{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    fn diff_line(self, line: &str) -> String {
        let colour = if line.starts_with("---") || line.starts_with("+++") {
            BOLD
        } else if line.starts_with("@@") {
            CYAN
        } else if line.starts_with('+') {
            GREEN
        } else if line.starts_with('-') {
            RED
        } else {
            ""
        };
        self.paint(colour, line)
    }
}
