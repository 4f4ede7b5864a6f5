//! `auto runs follow ID` against a running `auto serve`: a run's history printed on stderr as
//! it is recorded, then its output on stdout and exit 0, or its problem and exit 1.

mod common;

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::Stdio;

use common::{Server, auto, auto_command, code, json_of, serve, stderr, stdout};

const MONTH_WINDOW: &str = include_str!("data/last-day-of-a-month.md");

const PAUSE: &str = include_str!("data/pause-then-keep-the-note.yaml");

const SLOW: &str = include_str!("data/wait-two-seconds.yaml");

const GIVE_UP: &str = include_str!("data/wait-then-give-up.yaml");

/// A server with the org acme, the playbook main and the definitions saved with `auto apply`.
fn saved() -> Server {
    let server = serve();
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    let dir = tempfile::tempdir().expect("a directory");
    let write = |file: &str, text: &str| {
        let path = dir.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).expect("the folder");
        std::fs::write(path, text).expect("written");
    };
    write("computations/month-window.md", MONTH_WINDOW);
    write("workflows/pause.yaml", PAUSE);
    write("workflows/give-up.yaml", GIVE_UP);
    write("workflows/slow.yaml", SLOW);
    let applied = apply_dir(&server, dir.path());
    assert_eq!(code(&applied), 0, "{}", stderr(&applied));
    server
}

fn apply_dir(server: &Server, dir: &Path) -> std::process::Output {
    auto(server, &["apply", dir.to_str().expect("a UTF-8 path")])
}

/// The event types of the lines `follow` printed, in order.
fn step_types(printed: &str) -> Vec<&str> {
    printed
        .lines()
        .filter_map(|line| line.split_whitespace().nth(1))
        .collect()
}

#[test]
fn a_computation_run_ends_with_its_output() {
    let server = saved();
    let ran = auto(
        &server,
        &[
            "run",
            "computation/month-window",
            "--input",
            r#"{"month": "2024-02"}"#,
            "--run-id",
            "feb",
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    let followed = auto(&server, &["runs", "follow", "feb"]);
    assert_eq!(code(&followed), 0, "{}", stderr(&followed));
    assert_eq!(stdout(&followed), "{\n  \"last\": 29\n}\n");
    assert_eq!(
        step_types(&stderr(&followed)),
        ["run_started", "run_succeeded"]
    );
    let as_json = json_of(&auto(&server, &["runs", "follow", "feb", "--json"]));
    assert_eq!(as_json["status"], "succeeded");
    assert_eq!(as_json["output"]["last"], 29);
}

#[test]
fn a_failing_computation_run_ends_with_its_problem() {
    let server = saved();
    let ran = auto(
        &server,
        &[
            "run",
            "computation/month-window",
            "--input",
            r#"{"month": "soon"}"#,
            "--run-id",
            "soon",
        ],
    );
    assert_eq!(code(&ran), 1, "{}", stderr(&ran));
    let followed = auto(&server, &["runs", "follow", "soon"]);
    assert_eq!(code(&followed), 1, "{}", stderr(&followed));
    assert_eq!(stdout(&followed), "");
    let err = stderr(&followed);
    assert_eq!(step_types(&err)[0], "run_started", "{err}");
    assert!(
        err.contains(&stderr(&ran)),
        "the problem the run answered:\n{err}"
    );
}

#[test]
fn a_workflow_is_followed_step_by_step_to_its_output() {
    let server = saved();
    let started = auto(
        &server,
        &[
            "run",
            "workflow/pause",
            "--input",
            r#"{"note": "a"}"#,
            "--run-id",
            "p-1",
        ],
    );
    assert_eq!(code(&started), 0, "{}", stderr(&started));
    assert_eq!(
        stderr(&started),
        "The run p-1 has started and goes on; follow it with `auto runs follow p-1`.\n"
    );
    let followed = auto(&server, &["runs", "follow", "p-1"]);
    assert_eq!(code(&followed), 0, "{}", stderr(&followed));
    assert_eq!(stdout(&followed), "{\n  \"seen\": \"a\"\n}\n");
    let err = stderr(&followed);
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines[0].contains("run_started"), "{err}");
    let pause = lines
        .iter()
        .position(|l| l.contains("step_started") && l.ends_with("/do/0/pause"))
        .unwrap_or_else(|| panic!("the pause starts:\n{err}"));
    let done = lines
        .iter()
        .position(|l| l.contains("step_completed") && l.ends_with("/do/1/done"))
        .unwrap_or_else(|| panic!("the last step completes:\n{err}"));
    assert!(pause < done, "{err}");
    assert!(lines.last().unwrap().contains("run_succeeded"), "{err}");
    // Each event once, though the run was read several times while it waited.
    let mut seen = lines.clone();
    seen.dedup();
    assert_eq!(seen, lines, "{err}");
}

#[test]
fn a_failing_workflow_ends_with_its_problem_and_exit_1() {
    let server = saved();
    let started = auto(&server, &["run", "workflow/give-up", "--run-id", "g-1"]);
    assert_eq!(code(&started), 0, "{}", stderr(&started));
    let followed = auto(&server, &["runs", "follow", "g-1"]);
    assert_eq!(code(&followed), 1, "{}", stderr(&followed));
    assert_eq!(stdout(&followed), "");
    let err = stderr(&followed);
    assert!(
        err.lines()
            .any(|l| l.contains("step_failed") && l.contains("/do/1/give-up")),
        "{err}"
    );
    assert!(
        err.ends_with(
            "  run_rejected\nerror: The workflow give-up stopped\n  The work could not be done, \
             at the step give-up.\n"
        ),
        "the problem ends it:\n{err}"
    );

    let missing = auto(&server, &["runs", "follow", "nope"]);
    assert_eq!(code(&missing), 1);
    assert_eq!(
        stderr(&missing),
        "error: Not found\n  The playbook main has no run nope.\n"
    );
}

#[test]
fn steps_are_printed_while_the_run_goes_on() {
    let server = saved();
    let started = auto(&server, &["run", "workflow/slow", "--run-id", "s-1"]);
    assert_eq!(code(&started), 0, "{}", stderr(&started));
    let mut follow = auto_command(&server.url, &["runs", "follow", "s-1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("auto runs follow starts");
    let mut lines = BufReader::new(follow.stderr.take().expect("its stderr")).lines();
    let mut printed = Vec::new();
    while !printed
        .last()
        .is_some_and(|l: &String| l.contains("wait_started"))
    {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("the wait starts: {printed:?}"))
            .expect("a line");
        printed.push(line);
    }
    // The run waits two seconds: the wait was printed before the run ended.
    let run = json_of(&auto(&server, &["runs", "get", "s-1", "--json"]));
    assert_eq!(run["status"], "started", "{printed:?}");
    printed.extend(lines.map(|l| l.expect("a line")));
    let mut output = String::new();
    follow
        .stdout
        .take()
        .expect("its stdout")
        .read_to_string(&mut output)
        .expect("the output");
    assert!(follow.wait().expect("it ends").success(), "{printed:?}");
    assert_eq!(output, "{\n  \"done\": true\n}\n");
    assert!(
        printed.last().unwrap().contains("run_succeeded"),
        "{printed:?}"
    );
}
