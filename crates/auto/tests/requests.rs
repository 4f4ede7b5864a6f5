//! `auto requests` and `auto answer` against a running `auto serve`: an interaction's run
//! leaves a request in the inbox, a wrong answer is refused (exit 1) and the request stays
//! open, an answer from stdin ends the run, and the command lines refused before any request
//! (exit 2) or that reach no server (exit 3).

mod common;

use common::{auto, auto_at, auto_with_stdin, code, json_of, serve, stderr, stdout};

const APPROVE: &str = include_str!("data/approve-a-reviewed-brief.md");

#[test]
fn the_inbox_is_listed_and_answered_from_the_shell() {
    let server = serve();
    let dir = tempfile::tempdir().expect("a directory");
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    let file = dir.path().join("approve.interaction.md");
    std::fs::write(&file, APPROVE).expect("written");
    json_of(&auto(
        &server,
        &[
            "def",
            "create",
            "interaction",
            "approve-campaign-brief",
            "--file",
            file.to_str().expect("a UTF-8 path"),
            "--json",
        ],
    ));
    let started = auto(
        &server,
        &[
            "run",
            "interaction/approve-campaign-brief",
            "--run-id",
            "ask-1",
            "--input",
            r#"{"owner": "ana@example.com", "review": "Ready"}"#,
        ],
    );
    assert_eq!(code(&started), 0, "{}", stderr(&started));
    assert_eq!(stdout(&started), "ask-1\n");

    let open = auto(&server, &["requests", "--status", "open"]);
    assert_eq!(code(&open), 0, "{}", stderr(&open));
    let text = stdout(&open);
    assert!(
        text.contains(
            "  open  to ana@example.com  interaction/approve-campaign-brief v1  expires "
        ),
        "{text}"
    );
    assert!(
        text.contains("\n    The review of your campaign brief is ready:\n"),
        "{text}"
    );
    let listed = json_of(&auto(&server, &["requests", "--json"]));
    let request_id = listed["requests"][0]["request_id"]
        .as_str()
        .expect("a request id")
        .to_owned();
    assert_eq!(listed["requests"][0]["run_id"], "ask-1");

    let wrong = auto(&server, &["answer", &request_id, r#"{"verdict": "maybe"}"#]);
    assert_eq!(code(&wrong), 1, "{}", stderr(&wrong));
    assert!(
        stderr(&wrong).starts_with("error: The answer does not match what the request asks for\n"),
        "{}",
        stderr(&wrong)
    );
    let still = json_of(&auto(&server, &["requests", "--status", "open", "--json"]));
    assert_eq!(still["requests"][0]["request_id"], request_id.as_str());

    let right = auto_with_stdin(
        &server.url,
        &["answer", &request_id, "-"],
        r#"{"verdict": "approve"}"#,
    );
    assert_eq!(code(&right), 0, "{}", stderr(&right));
    assert_eq!(
        stdout(&right),
        format!("The request {request_id} is answered; its run ask-1 ended with the answer.\n")
    );
    let run = json_of(&auto(&server, &["runs", "get", "ask-1", "--json"]));
    assert_eq!(run["status"], "succeeded");
    assert_eq!(run["output"], serde_json::json!({"verdict": "approve"}));

    let twice = auto(
        &server,
        &["answer", &request_id, r#"{"verdict": "revise"}"#],
    );
    assert_eq!(code(&twice), 1);
    assert!(
        stderr(&twice).starts_with("error: The request is not open\n"),
        "{}",
        stderr(&twice)
    );

    let empty = auto(&server, &["requests", "--status", "open"]);
    assert_eq!(code(&empty), 0);
    assert_eq!(stderr(&empty), "no requests\n");
}

#[test]
fn command_lines_refused_before_any_request() {
    let server = serve();
    let not_json = auto(&server, &["answer", "r-1", "{verdict"]);
    assert_eq!(code(&not_json), 2, "{}", stderr(&not_json));
    // A file that cannot be read is no wrong command line: exit 4.
    let no_file = auto(&server, &["answer", "r-1", "@/no/such/file.json"]);
    assert_eq!(code(&no_file), 4, "{}", stderr(&no_file));
    let bad_status = auto(&server, &["requests", "--status", "waiting"]);
    assert_eq!(code(&bad_status), 2, "{}", stderr(&bad_status));
    let unreachable = auto_at("http://127.0.0.1:9", &["requests"]);
    assert_eq!(code(&unreachable), 3, "{}", stderr(&unreachable));
}
