//! `auto run` and `auto runs` against a running `auto serve`: a computation function run with
//! its input inline, from a file and from stdin; the run id rules; a refused input; reading,
//! listing and cancelling runs; and the command lines refused before any request.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;

use common::{Server, auto, auto_at, auto_with_stdin, code, json_of, serve, stderr, stdout};
use serde_json::json;

const MONTH_WINDOW: &str = include_str!("data/month-window-described.md");

const DAYS: &str = include_str!("data/days-in-a-month-in-words.md");

const FEBRUARY: &str = "{\n  \"first\": \"2026-02-01\",\n  \"last\": \"2026-02-28\"\n}\n";

/// A server with the org acme, the playbook main and the two computation functions.
fn saved() -> (Server, tempfile::TempDir) {
    let server = serve();
    let dir = tempfile::tempdir().expect("a directory");
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    for (name, source) in [("month-window", MONTH_WINDOW), ("days", DAYS)] {
        let file = dir.path().join(format!("{name}.computation.md"));
        std::fs::write(&file, source).expect("written");
        let file = file.to_str().expect("a UTF-8 path");
        json_of(&auto(
            &server,
            &[
                "def",
                "create",
                "computation",
                name,
                "--file",
                file,
                "--json",
            ],
        ));
    }
    (server, dir)
}

#[test]
fn a_computation_runs_from_the_shell() {
    let (server, dir) = saved();
    let target = "computation/month-window";

    let inline = auto(
        &server,
        &["run", target, "--input", r#"{"month": "2026-02"}"#],
    );
    assert_eq!(code(&inline), 0, "{}", stderr(&inline));
    assert_eq!(stdout(&inline), FEBRUARY, "JSON output, pretty");
    assert_eq!(stderr(&inline), "");

    let file = dir.path().join("input.json");
    std::fs::write(&file, "{\n  \"month\": \"2026-02\"\n}\n").expect("written");
    let at_file = format!("@{}", file.display());
    let from_file = auto(&server, &["run", target, "--input", &at_file]);
    assert_eq!(code(&from_file), 0, "{}", stderr(&from_file));
    assert_eq!(stdout(&from_file), FEBRUARY);

    let from_stdin = auto_with_stdin(
        &server.url,
        &["run", target, "--input", "-"],
        r#"{"month": "2026-02"}"#,
    );
    assert_eq!(code(&from_stdin), 0, "{}", stderr(&from_stdin));
    assert_eq!(stdout(&from_stdin), FEBRUARY);

    let text = auto(
        &server,
        &[
            "run",
            "computation/days",
            "--input",
            r#"{"month": "2024-02"}"#,
        ],
    );
    assert_eq!(code(&text), 0, "{}", stderr(&text));
    assert_eq!(stdout(&text), "2024-02 has 29 days\n", "text output, plain");

    let recorded = auto(
        &server,
        &[
            "run",
            target,
            "--input",
            r#"{"month": "2026-02"}"#,
            "--record",
        ],
    );
    assert_eq!(stdout(&recorded), FEBRUARY, "the record stays off stdout");
    let err = stderr(&recorded);
    let (head, record) = err.split_once('\n').expect("two parts");
    assert!(
        head.starts_with("record of the run ") && head.ends_with(':'),
        "{err}"
    );
    let run_id = &head["record of the run ".len()..head.len() - 1];
    let record: serde_json::Value = serde_json::from_str(record).expect("the record as JSON");
    assert!(record["duration_ms"].is_u64(), "{err}");
    let got = json_of(&auto(&server, &["runs", "get", run_id, "--json"]));
    assert_eq!(got["record"], record, "the record is the run's");
}

#[test]
fn a_run_id_returns_what_was_recorded() {
    let (server, _dir) = saved();
    let args = [
        "run",
        "computation/month-window",
        "--input",
        r#"{"month": "2026-02"}"#,
        "--run-id",
        "feb",
        "--json",
    ];
    let first = json_of(&auto(&server, &args));
    assert_eq!(first["run_id"], "feb");
    assert_eq!(first["status"], "succeeded");
    assert_eq!(first["input"], json!({"month": "2026-02"}));
    assert_eq!(
        first["output"],
        json!({"first": "2026-02-01", "last": "2026-02-28"})
    );
    let again = json_of(&auto(&server, &args));
    assert_eq!(first, again, "the recorded run, not a second one");
    let events = json_of(&auto(
        &server,
        &["events", "list", "--run-id", "feb", "--json"],
    ));
    assert_eq!(events["events"].as_array().unwrap().len(), 2);

    let other = auto(
        &server,
        &[
            "run",
            "computation/month-window",
            "--input",
            r#"{"month": "2026-03"}"#,
            "--run-id",
            "feb",
        ],
    );
    assert_eq!(code(&other), 1);
    assert_eq!(
        stderr(&other),
        "error: The run id is taken\n  The run feb was started for computation/month-window \
         with another input; use a new run id.\n"
    );
}

#[test]
fn a_refused_input_prints_its_issue_and_exits_1() {
    let (server, _dir) = saved();
    let refused = auto(
        &server,
        &[
            "run",
            "computation/month-window",
            "--input",
            r#"{"month": "2026"}"#,
            "--run-id",
            "short",
        ],
    );
    assert_eq!(code(&refused), 1);
    assert_eq!(stdout(&refused), "");
    assert_eq!(
        stderr(&refused),
        "error: The computation function month-window refused its input\n  \
         /input/month: month, The month to report on: expected at least 7 characters\n"
    );
    let as_json = auto(&server, &["run", "computation/month-window", "--json"]);
    assert_eq!(code(&as_json), 1);
    let problem: serde_json::Value = serde_json::from_slice(&as_json.stdout).expect("JSON");
    assert_eq!(problem["reason"], "invalid_input");
    assert_eq!(problem["issues"][0]["pointer"], "/input/month");

    let missing = auto(&server, &["run", "computation/nope"]);
    assert_eq!(code(&missing), 1);
    assert_eq!(
        stderr(&missing),
        "error: Not found\n  The playbook main has no computation definition nope.\n"
    );
}

#[test]
fn runs_are_read_listed_and_cancelled() {
    let (server, _dir) = saved();
    let run = |month: &str, run_id: &str| {
        auto(
            &server,
            &[
                "run",
                "computation/month-window",
                "--input",
                &format!(r#"{{"month": "{month}"}}"#),
                "--run-id",
                run_id,
            ],
        )
    };
    assert_eq!(code(&run("2026-02", "feb")), 0);
    assert_eq!(code(&run("2026", "short")), 1);

    let got = auto(&server, &["runs", "get", "feb"]);
    assert_eq!(code(&got), 0, "{}", stderr(&got));
    let text = stdout(&got);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "run:        feb");
    assert_eq!(lines[1], "definition: computation/month-window v1");
    assert_eq!(lines[2], "status:     succeeded");
    assert!(lines[3].starts_with("started:    ") && lines[3].ends_with(" by local"));
    assert!(lines[4].starts_with("ended:      ") && lines[4].contains(", after "));
    assert_eq!(lines[5], r#"input:      {"month":"2026-02"}"#);
    assert!(lines[6].starts_with(r#"record:     {"duration_ms":"#));
    assert_eq!(lines[7], "output:");
    assert_eq!(lines[8..].join("\n") + "\n", FEBRUARY);

    let short = stdout(&auto(&server, &["runs", "get", "short"]));
    assert!(short.contains("status:     rejected\n"), "{short}");
    assert!(
        short.contains(
            "problem:    The computation function month-window refused its input\n  \
             /input/month: month, The month to report on: expected at least 7 characters\n"
        ),
        "{short}"
    );
    assert!(!short.contains("output:"), "{short}");

    let as_json = json_of(&auto(&server, &["runs", "get", "feb", "--json"]));
    assert_eq!(as_json["output"]["last"], "2026-02-28");

    let nope = auto(&server, &["runs", "get", "nope"]);
    assert_eq!(code(&nope), 1);
    assert_eq!(
        stderr(&nope),
        "error: Not found\n  The playbook main has no run nope.\n"
    );

    let listed = auto(&server, &["runs", "list"]);
    assert_eq!(code(&listed), 0, "{}", stderr(&listed));
    let table = stdout(&listed);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(
        rows[0],
        [
            "RUN ID",
            "DEFINITION",
            "VERSION",
            "STATUS",
            "STARTED",
            "DURATION"
        ]
    );
    assert_eq!(rows.len(), 3, "{table}");
    assert_eq!(
        rows[1][..4],
        ["short", "computation/month-window", "v1", "rejected"]
    );
    assert_eq!(
        rows[2][..4],
        ["feb", "computation/month-window", "v1", "succeeded"]
    );
    assert_eq!(rows[2][4].len(), "2026-02-01T09:30:00Z".len(), "{table}");
    assert!(
        rows[2][5].ends_with(" ms") || rows[2][5].ends_with(" s"),
        "{table}"
    );
    let header = table.lines().next().unwrap();
    let first = table.lines().nth(1).unwrap();
    assert_eq!(
        header.find("DEFINITION"),
        first.find("computation/"),
        "columns line up:\n{table}"
    );

    let rejected = stdout(&auto(&server, &["runs", "list", "--status", "rejected"]));
    assert_eq!(rejected.lines().count(), 2, "{rejected}");
    assert!(rejected.lines().nth(1).unwrap().starts_with("short "));
    let page = auto(&server, &["runs", "list", "--limit", "1"]);
    assert_eq!(stdout(&page).lines().count(), 2);
    assert_eq!(stderr(&page), "more: --after short\n");
    let next = stdout(&auto(
        &server,
        &["runs", "list", "--limit", "1", "--after", "short"],
    ));
    assert!(next.lines().nth(1).unwrap().starts_with("feb "), "{next}");
    let none = auto(&server, &["runs", "list", "--name", "days"]);
    assert_eq!(
        (stdout(&none).as_str(), stderr(&none).as_str()),
        ("", "no runs\n")
    );
    let listed = json_of(&auto(&server, &["runs", "list", "--json"]));
    assert_eq!(listed["runs"].as_array().unwrap().len(), 2);

    let cancel = auto(
        &server,
        &["runs", "cancel", "feb", "--detail", "no longer needed"],
    );
    assert_eq!(code(&cancel), 1);
    assert_eq!(
        stderr(&cancel),
        "Cancelling the run feb...\nerror: The run has ended\n  The run feb has already ended with the status succeeded; a \
         run that has ended cannot be cancelled.\n"
    );
    let cancel = auto(&server, &["runs", "cancel", "nope"]);
    assert_eq!(code(&cancel), 1);
    assert_eq!(
        stderr(&cancel),
        "Cancelling the run nope...\nerror: Not found\n  The playbook main has no run nope.\n"
    );
}

#[test]
fn a_wrong_command_line_is_refused_before_any_request() {
    // The URL leads nowhere: a request would exit 3.
    let nowhere = "http://127.0.0.1:9";
    let refused = |args: &[&str]| {
        let output = auto_at(nowhere, args);
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
        assert_eq!(stdout(&output), "");
        stderr(&output)
    };
    let target = "computation/month-window";

    assert_eq!(
        refused(&["run", target, "--input", r#"{"month": }"#]),
        "error: --input is not JSON: line 1, column 11: expected value\n"
    );
    assert_eq!(
        refused(&["run", target, "--input", "month=2026-02"]),
        "error: --input is not JSON: line 1, column 1: expected value\n"
    );
    assert_eq!(
        refused(&["run", target, "--input", " "]),
        "error: --input is empty; it takes JSON, such as {}\n"
    );
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("input.json");
    std::fs::write(&file, "{\n  \"month\": \"2026-02\",\n}\n").expect("written");
    // A file or stdin that cannot be read or holds no JSON is no wrong command line: exit 4.
    let unusable = |args: &[&str], stdin: &str| {
        let output = auto_with_stdin(nowhere, args, stdin);
        assert_eq!(code(&output), 4, "{args:?}: {}", stderr(&output));
        assert_eq!(stdout(&output), "");
        stderr(&output)
    };
    let at_file = format!("@{}", file.display());
    assert_eq!(
        unusable(&["run", target, "--input", &at_file], ""),
        format!("error: {at_file} is not JSON: line 3, column 1: trailing comma\n")
            .replace("error: @", "error: --input @")
    );
    let missing = format!("@{}", dir.path().join("missing.json").display());
    assert_eq!(
        unusable(&["run", target, "--input", &missing], ""),
        format!("error: cannot read --input {missing}: No such file or directory (os error 2)\n")
    );
    let output = auto_with_stdin(nowhere, &["run", target, "--input", "-"], "[1, 2");
    assert_eq!(code(&output), 4);
    assert_eq!(
        stderr(&output),
        "error: --input - (stdin) is not JSON: line 1, column 5: EOF while parsing a list\n"
    );

    assert_eq!(
        refused(&["run", "month-window"]),
        "error: invalid value 'month-window' for '<TYPE/NAME>': \"month-window\" is not \
         TYPE/NAME, such as computation/month-window.\n\nFor more information, try '--help'.\n"
    );
    assert_eq!(
        refused(&["run", "compute/month-window"]),
        "error: invalid value 'compute/month-window' for '<TYPE/NAME>': \"compute\" is not a \
         definition type: it is one of reasoning, workflow, interaction, computation, recall or \
         prediction.\n\nFor more information, try '--help'.\n"
    );
    assert_eq!(
        refused(&["run", "computation/Month"]),
        "error: invalid value 'computation/Month' for '<TYPE/NAME>': \"Month\" is not a \
         definition name: a lowercase letter, then up to 63 lowercase letters, digits and \
         hyphens.\n\nFor more information, try '--help'.\n"
    );
    assert_eq!(
        refused(&["run", target, "--run-id", "a b"]),
        "error: invalid value 'a b' for '--run-id <RUN_ID>': \"a b\" is not a run id: 1 to 128 \
         letters, digits, and . _ : -\n\nFor more information, try '--help'.\n"
    );
    let status = refused(&["runs", "list", "--status", "done"]);
    assert!(
        status.starts_with("error: invalid value 'done' for '--status <STATUS>'"),
        "{status}"
    );
    let limit = refused(&["runs", "list", "--limit", "0"]);
    assert!(
        limit.starts_with("error: invalid value '0' for '--limit <LIMIT>'"),
        "{limit}"
    );
}

#[test]
fn an_unreachable_server_exits_3() {
    let output = auto_at(
        "http://127.0.0.1:9",
        &["run", "computation/month-window", "--input", "{}"],
    );
    assert_eq!(code(&output), 3);
    let err = stderr(&output);
    assert!(
        err.starts_with(
            "error: cannot reach http://127.0.0.1:9/v1/orgs/acme/playbooks/main/definitions/\
             computation/month-window/runs; is `auto serve` running?"
        ),
        "{err}"
    );
    let output = auto_at("http://127.0.0.1:9", &["runs", "list"]);
    assert_eq!(code(&output), 3);
}

/// A run that goes on past its request comes back 202 `started`: no runner does that yet, so a
/// stand-in server answers it.
#[test]
fn a_run_that_goes_on_prints_its_id_and_how_to_follow_it() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}", listener.local_addr().expect("an address"));
    let run = json!({
        "run_id": "0197a1b2-0000-7000-8000-000000000001", "type": "workflow", "name": "monthly",
        "definition_version": 3, "status": "started", "input": {}, "record": null,
        "problem": null, "started_by": "local", "started_at": "2026-02-01T09:30:00Z",
        "ended_at": null
    });
    let body = run.to_string();
    let stand_in = std::thread::spawn(move || {
        let mut requests = Vec::new();
        for _ in 0..2 {
            let (stream, _) = listener.accept().expect("a connection");
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).expect("a header line");
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().expect("a length");
                }
                if line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let mut sent = vec![0; length];
            reader.read_exact(&mut sent).expect("the body");
            requests.push((head, String::from_utf8(sent).expect("UTF-8")));
            write!(
                reader.get_mut(),
                "HTTP/1.1 202 Accepted\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .expect("answered");
        }
        requests
    });

    let output = auto_at(&url, &["run", "workflow/monthly", "--run-id", "m-1"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "0197a1b2-0000-7000-8000-000000000001\n");
    assert_eq!(
        stderr(&output),
        "The run 0197a1b2-0000-7000-8000-000000000001 has started and goes on; follow it with \
         `auto runs follow 0197a1b2-0000-7000-8000-000000000001`.\n"
    );
    let output = auto_at(&url, &["run", "workflow/monthly", "--json"]);
    assert_eq!(code(&output), 0);
    assert_eq!(json_of(&output), run);

    let requests = stand_in.join().expect("the stand-in");
    assert!(
        requests[0]
            .0
            .starts_with("POST /v1/orgs/acme/playbooks/main/definitions/workflow/monthly/runs "),
        "{}",
        requests[0].0
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&requests[0].1).unwrap(),
        json!({"run_id": "m-1"})
    );
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&requests[1].1).unwrap(),
        json!({})
    );
}
