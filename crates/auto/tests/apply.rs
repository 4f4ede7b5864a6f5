//! `auto apply DIR` against a running `auto serve`: a first apply creates, a second changes
//! nothing, an edit makes the next version with its diff, a broken file stops the whole set,
//! `--prune` retires, `--dry-run` changes nothing, and `--json` prints what a program reads.

mod common;

use std::path::Path;

use common::{Server, auto, code, json_of, serve, stderr, stdout};
use serde_json::Value;

const MONTH_WINDOW: &str = include_str!("data/month-window.md");

const DAYS: &str = include_str!("data/days-in-a-month-in-words.md");

const GREET: &str = include_str!("data/greet.md");

const PAUSE: &str = include_str!("data/pause-then-keep-the-note.yaml");

const OVERVIEW: &str = "Gives the first and last day of a month, for reports.\n";

const DIAGRAM: &str = "flowchart LR\n  month --> window\n";

/// A server with the org acme and the playbook main, and an empty folder.
fn playbook() -> (Server, tempfile::TempDir) {
    let server = serve();
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    (server, tempfile::tempdir().expect("a directory"))
}

fn write(dir: &Path, file: &str, text: &str) {
    let path = dir.join(file);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("the folder");
    std::fs::write(path, text).expect("written");
}

/// The folder of the tour: a computation with its overview and diagram, a reasoning
/// function, a workflow, and a computation named by its file at the top.
fn folder(dir: &Path) {
    write(dir, "computations/month-window.md", MONTH_WINDOW);
    write(dir, "computations/month-window.overview.md", OVERVIEW);
    write(dir, "computations/month-window.diagram.mmd", DIAGRAM);
    write(dir, "reasoning/greet.md", GREET);
    write(dir, "workflows/pause.yaml", PAUSE);
    write(dir, "days.computation.md", DAYS);
    write(dir, "README.md", "Not a definition.\n");
}

fn apply(server: &Server, dir: &Path, flags: &[&str]) -> std::process::Output {
    let dir = dir.to_str().expect("a UTF-8 path");
    let mut args = vec!["apply", dir];
    args.extend(flags);
    auto(server, &args)
}

/// The events that saved or retired a definition, in order.
fn definition_events(server: &Server) -> Vec<String> {
    let events = json_of(&auto(server, &["events", "list", "--json"]));
    events["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| e["type"].as_str().expect("a type").to_owned())
        .filter(|t| t.starts_with("definition_"))
        .collect()
}

fn get(server: &Server, target: &str) -> Value {
    let (def_type, name) = target.split_once('/').expect("TYPE/NAME");
    json_of(&auto(server, &["def", "get", def_type, name, "--json"]))
}

#[test]
fn a_first_apply_creates_and_a_second_changes_nothing() {
    let (server, dir) = playbook();
    folder(dir.path());
    let d = dir.path().display();

    let first = apply(&server, dir.path(), &[]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    assert_eq!(
        stdout(&first),
        format!(
            "create     reasoning/greet v1  {d}/reasoning/greet.md\n\
             create     computation/days v1  {d}/days.computation.md\n\
             create     computation/month-window v1  {d}/computations/month-window.md\n\
             create     workflow/pause v1  {d}/workflows/pause.yaml\n"
        ),
        "functions first, then workflows"
    );
    assert_eq!(
        stderr(&first),
        "Applied: 4 created, 0 updated, 0 unchanged, 0 retired.\n"
    );
    let saved = get(&server, "computation/month-window");
    assert_eq!(saved["version"], 1);
    assert_eq!(saved["source"], MONTH_WINDOW);
    assert_eq!(saved["overview"], OVERVIEW);
    assert_eq!(saved["diagram"], DIAGRAM);
    assert_eq!(get(&server, "computation/days")["diagram"], "none");
    assert_eq!(get(&server, "workflow/pause")["source"], PAUSE);
    let ran = auto(
        &server,
        &[
            "run",
            "computation/days",
            "--input",
            r#"{"month": "2024-02"}"#,
        ],
    );
    assert_eq!(stdout(&ran), "2024-02 has 29 days\n", "{}", stderr(&ran));

    let second = apply(&server, dir.path(), &[]);
    assert_eq!(code(&second), 0, "{}", stderr(&second));
    assert_eq!(
        stdout(&second),
        "unchanged  reasoning/greet v1\n\
         unchanged  computation/days v1\n\
         unchanged  computation/month-window v1\n\
         unchanged  workflow/pause v1\n"
    );
    assert_eq!(
        stderr(&second),
        "Applied: 0 created, 0 updated, 4 unchanged, 0 retired.\n"
    );
    assert_eq!(definition_events(&server), ["definition_created"; 4]);
}

#[test]
fn an_edited_file_makes_the_next_version_and_shows_its_diff() {
    let (server, dir) = playbook();
    folder(dir.path());
    assert_eq!(code(&apply(&server, dir.path(), &[])), 0);
    let d = dir.path().display();

    write(
        dir.path(),
        "days.computation.md",
        &DAYS.replace("has ${", "holds ${"),
    );
    write(
        dir.path(),
        "computations/month-window.diagram.mmd",
        "flowchart LR\n  month --> first\n  month --> last\n",
    );
    let edited = apply(&server, dir.path(), &[]);
    assert_eq!(code(&edited), 0, "{}", stderr(&edited));
    assert_eq!(
        stdout(&edited),
        format!(
            "unchanged  reasoning/greet v1\n\
             update     computation/days v1 -> v2  {d}/days.computation.md\n\
             --- computation/days v1 source\n\
             +++ {d}/days.computation.md\n\
             @@ -4,6 +4,6 @@\n \
             ```ts\n \
             export default function (input: {{ month: string }}) {{\n   \
             const [year, month] = input.month.split(\"-\").map(Number);\n\
             -  return `${{input.month}} has ${{new Date(Date.UTC(year, month, 0)).getUTCDate()}} days`;\n\
             +  return `${{input.month}} holds ${{new Date(Date.UTC(year, month, 0)).getUTCDate()}} days`;\n \
             }}\n \
             ```\n\
             update     computation/month-window v1 -> v2  {d}/computations/month-window.md\n\
             --- computation/month-window v1 diagram\n\
             +++ {d}/computations/month-window.diagram.mmd\n\
             @@ -1,2 +1,3 @@\n \
             flowchart LR\n\
             -  month --> window\n\
             +  month --> first\n\
             +  month --> last\n\
             unchanged  workflow/pause v1\n"
        )
    );
    assert_eq!(
        stderr(&edited),
        "Applied: 0 created, 2 updated, 2 unchanged, 0 retired.\n"
    );
    let days = get(&server, "computation/days");
    assert_eq!(days["version"], 2);
    let ran = auto(
        &server,
        &[
            "run",
            "computation/days",
            "--input",
            r#"{"month": "2024-02"}"#,
        ],
    );
    assert_eq!(stdout(&ran), "2024-02 holds 29 days\n", "{}", stderr(&ran));
    let window = get(&server, "computation/month-window");
    assert_eq!(window["version"], 2);
    assert_eq!(
        window["overview"], OVERVIEW,
        "the overview file is sent again"
    );
    assert_eq!(
        definition_events(&server)[4..],
        ["definition_updated", "definition_updated"]
    );
}

const BROKEN_REASONING: &str =
    "---\nmodel: anthropic/claude-sonnet-4-5\nconfig:\n  temperature: warm\n  seed: -1\n---\nHi\n";

#[test]
fn a_broken_file_stops_the_whole_set() {
    let (server, dir) = playbook();
    folder(dir.path());
    write(dir.path(), "reasoning/review.md", BROKEN_REASONING);
    write(
        dir.path(),
        "workflows/pause.diagram.mmd",
        "sequenceDiagram\n  a->>b: hi\n",
    );
    write(dir.path(), "notes.md", "Ideas.\n");
    write(dir.path(), "workflows/pause.overview.md", "Waits.\n");
    write(dir.path(), "computations/gone.diagram.mmd", DIAGRAM);
    write(
        dir.path(),
        "predictions/views.md",
        "---\nhorizon: 12\n---\n",
    );
    let d = dir.path().display();

    let refused = apply(&server, dir.path(), &[]);
    assert_eq!(code(&refused), 1, "{}", stderr(&refused));
    assert_eq!(stdout(&refused), "");
    assert_eq!(
        stderr(&refused),
        format!(
            "error: 8 issues in 6 files; nothing was applied\n  \
             {d}/notes.md: is not a definition, an overview or a diagram\n    \
             hint: name it notes.TYPE.md, such as notes.reasoning.md, or put it in a type \
             folder, such as reasoning/notes.md\n  \
             {d}/workflows/pause.overview.md: is the overview of a workflow, which the server \
             writes from its document\n    \
             hint: remove the file; describe the workflow in its document\n  \
             {d}/computations/gone.diagram.mmd: has no definition beside it\n    \
             hint: an overview or diagram sits beside its document and shares its name: \
             reasoning/review.md takes reasoning/review.overview.md and \
             reasoning/review.diagram.mmd\n  \
             {d}/predictions/views.md: Line 2: The field period is missing: the time between two \
             points of the series, such as period: P1M.\n  \
             {d}/predictions/views.md: Line 2: The field source is missing: where the series \
             comes from, such as source: {{recall: orders-by-month}}.\n  \
             {d}/reasoning/review.md: Line 4, /config/temperature: Expected number.\n  \
             {d}/reasoning/review.md: Line 5, /config/seed: Expected a whole number of 0 or \
             more.\n  \
             {d}/workflows/pause.diagram.mmd: The diagram is not a flowchart or a state \
             diagram: its first line starts with flowchart, graph or stateDiagram, or the \
             diagram is the word none.\n"
        )
    );
    let listed = json_of(&auto(&server, &["def", "list", "--json"]));
    assert_eq!(
        listed["definitions"],
        serde_json::json!([]),
        "nothing saved"
    );

    let as_json = apply(&server, dir.path(), &["--json"]);
    assert_eq!(code(&as_json), 1);
    let out: Value = serde_json::from_slice(&as_json.stdout).expect("JSON on stdout");
    assert_eq!(out["applied"], false);
    let issues = out["issues"].as_array().expect("issues");
    assert_eq!(issues.len(), 8);
    assert_eq!(issues[0]["line"], Value::Null);
    assert!(issues[0]["hint"].is_string());
    assert_eq!(issues[5]["file"], format!("{d}/reasoning/review.md"));
    assert_eq!(issues[5]["line"], 4);
    assert_eq!(issues[5]["pointer"], "/config/temperature");
    assert_eq!(
        issues[5]["message"],
        "Line 4, /config/temperature: Expected number."
    );
}

#[test]
fn a_workflow_issue_has_its_line_and_column_and_a_retired_name_is_refused() {
    let (server, dir) = playbook();
    folder(dir.path());
    assert_eq!(code(&apply(&server, dir.path(), &[])), 0);
    json_of(&auto(
        &server,
        &["def", "retire", "computation", "days", "--json"],
    ));
    write(
        dir.path(),
        "workflows/pause.yaml",
        &PAUSE.replace("wait: PT1S", "wait: soon"),
    );
    let d = dir.path().display();

    let refused = apply(&server, dir.path(), &[]);
    assert_eq!(code(&refused), 1, "{}", stderr(&refused));
    let err = stderr(&refused);
    assert!(
        err.starts_with(&format!(
            "error: 1 issue in 1 file; nothing was applied\n  {d}/workflows/pause.yaml: Line 8, \
             column 13: at /do/0/pause/wait: "
        )),
        "{err}"
    );

    write(dir.path(), "workflows/pause.yaml", PAUSE);
    let refused = apply(&server, dir.path(), &[]);
    assert_eq!(code(&refused), 1, "{}", stderr(&refused));
    assert_eq!(
        stderr(&refused),
        format!(
            "error: 1 issue in 1 file; nothing was applied\n  {d}/days.computation.md: The \
             computation function days was retired; its name cannot be used again.\n    \
             hint: give the definition a new name, or remove the file\n"
        )
    );
    assert_eq!(
        definition_events(&server),
        [
            "definition_created",
            "definition_created",
            "definition_created",
            "definition_created",
            "definition_retired"
        ]
    );
}

#[test]
fn prune_retires_what_the_folder_no_longer_holds_and_dry_run_changes_nothing() {
    let (server, dir) = playbook();
    folder(dir.path());
    assert_eq!(code(&apply(&server, dir.path(), &[])), 0);
    std::fs::remove_file(dir.path().join("days.computation.md")).expect("removed");
    std::fs::remove_file(dir.path().join("workflows/pause.yaml")).expect("removed");
    write(
        dir.path(),
        "reasoning/greet.md",
        &GREET.replace("Hello", "Hi"),
    );

    let kept = apply(&server, dir.path(), &["--dry-run"]);
    assert_eq!(code(&kept), 0, "{}", stderr(&kept));
    assert!(
        stdout(&kept).starts_with("update     reasoning/greet v1 -> v2  "),
        "{}",
        stdout(&kept)
    );
    assert_eq!(
        stderr(&kept),
        "The playbook also holds definitions the folder does not: computation/days, \
         workflow/pause.\nhint: --prune retires them\n\
         Dry run: 0 to create, 1 to update, 1 unchanged, 0 to retire; nothing was changed.\n"
    );

    let dry = apply(&server, dir.path(), &["--prune", "--dry-run"]);
    assert_eq!(code(&dry), 0, "{}", stderr(&dry));
    let plan = stdout(&dry);
    assert!(
        plan.ends_with(
            "unchanged  computation/month-window v1\n\
             retire     workflow/pause v1\n\
             retire     computation/days v1\n"
        ),
        "callers retire first:\n{plan}"
    );
    assert_eq!(
        stderr(&dry),
        "Dry run: 0 to create, 1 to update, 1 unchanged, 2 to retire; nothing was changed.\n"
    );
    assert_eq!(definition_events(&server), ["definition_created"; 4]);
    assert_eq!(get(&server, "reasoning/greet")["version"], 1);

    let pruned = apply(&server, dir.path(), &["--prune"]);
    assert_eq!(code(&pruned), 0, "{}", stderr(&pruned));
    assert_eq!(stdout(&pruned), plan, "the plan the dry run showed");
    assert_eq!(
        stderr(&pruned),
        "Applied: 0 created, 1 updated, 1 unchanged, 2 retired.\n"
    );
    assert_eq!(get(&server, "workflow/pause")["status"], "retired");
    assert_eq!(get(&server, "computation/days")["status"], "retired");
    assert_eq!(get(&server, "reasoning/greet")["version"], 2);
    let again = apply(&server, dir.path(), &["--prune"]);
    assert_eq!(
        stderr(&again),
        "Applied: 0 created, 0 updated, 2 unchanged, 0 retired.\n",
        "what is retired stays retired"
    );
}

#[test]
fn json_prints_the_plan_and_what_was_applied() {
    let (server, dir) = playbook();
    folder(dir.path());
    let d = dir.path().display();

    let dry = apply(&server, dir.path(), &["--dry-run", "--json"]);
    let plan = json_of(&dry);
    assert_eq!(plan["dry_run"], true);
    assert_eq!(plan["applied"], false);
    assert_eq!(plan["definitions"].as_array().expect("steps").len(), 4);
    assert_eq!(plan["definitions"][0]["action"], "create");
    assert_eq!(plan["definitions"][0]["type"], "reasoning");
    assert_eq!(plan["definitions"][0]["name"], "greet");
    assert_eq!(
        plan["definitions"][0]["file"],
        format!("{d}/reasoning/greet.md")
    );
    assert_eq!(definition_events(&server), Vec::<String>::new());

    json_of(&apply(&server, dir.path(), &["--json"]));
    write(
        dir.path(),
        "reasoning/greet.md",
        &GREET.replace("Hello", "Hi"),
    );
    let applied = json_of(&apply(&server, dir.path(), &["--json"]));
    assert_eq!(applied["dry_run"], false);
    assert_eq!(applied["applied"], true);
    let greet = &applied["definitions"][0];
    assert_eq!(greet["action"], "update");
    assert_eq!(greet["applied"], true);
    assert_eq!(greet["version_before"], 1);
    assert_eq!(greet["version"], 2);
    assert_eq!(greet["changes"][0]["part"], "source");
    assert!(
        greet["changes"][0]["diff"]
            .as_str()
            .expect("a diff")
            .contains("\n-Hello {{ input.name }}\n+Hi {{ input.name }}\n"),
        "{greet}"
    );
    assert_eq!(applied["definitions"][1]["action"], "unchanged");
    assert!(applied["definitions"][1].get("applied").is_none());
}

#[test]
fn a_playbook_that_is_not_there_is_refused_with_a_hint() {
    let server = serve();
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    let dir = tempfile::tempdir().expect("a directory");
    folder(dir.path());
    let refused = apply(&server, dir.path(), &[]);
    assert_eq!(code(&refused), 1);
    assert_eq!(
        stderr(&refused),
        "error: Not found\n  The org acme has no playbook main.\n\
         hint: create the playbook with `auto playbook create main --org acme`\n"
    );
    let missing = apply(&server, &dir.path().join("nope"), &[]);
    assert_eq!(code(&missing), 4, "a folder that cannot be read");
    assert!(
        stderr(&missing).starts_with("error: cannot read the folder "),
        "{}",
        stderr(&missing)
    );
}
