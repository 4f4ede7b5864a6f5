//! The client commands against a running `auto serve`: orgs, playbooks, definitions and
//! events, for people and as JSON, a rejection printed with exit code 1, a command line wrong
//! before any request with 2, and a server that is not there with 3.

mod common;

use std::process::Command;

use common::{AUTO, auto, code, json_of, serve};

const EXAMPLE: &str = include_str!("data/review-brief-page-example.md");

#[test]
fn a_playbook_is_managed_from_the_shell() {
    let server = serve();
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("review.reasoning.md");
    std::fs::write(&file, EXAMPLE).expect("written");
    let file = file.to_str().expect("a UTF-8 path");

    assert_eq!(
        json_of(&auto(&server, &["org", "create", "acme", "--json"]))["id"],
        "acme"
    );
    assert_eq!(
        json_of(&auto(&server, &["playbook", "create", "main", "--json"]))["id"],
        "main"
    );

    let created = json_of(&auto(
        &server,
        &[
            "def",
            "create",
            "reasoning",
            "review",
            "--file",
            file,
            "--json",
        ],
    ));
    assert_eq!(created["version"], 1);
    assert_eq!(
        created["description"],
        "Reviews a campaign brief against the team's criteria"
    );

    let listed = auto(&server, &["def", "list"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains("reasoning/review\tv1\tactive"), "{text}");

    let published = json_of(&auto(
        &server,
        &[
            "events",
            "publish",
            "com.example.x",
            "--data",
            "{\"n\": 1}",
            "--json",
        ],
    ));
    assert_eq!(published["data"]["n"], 1);
    let events = json_of(&auto(&server, &["events", "list", "--json"]));
    let types: Vec<&str> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["definition_created", "com.example.x"]);

    assert_eq!(
        json_of(&auto(
            &server,
            &["def", "retire", "reasoning", "review", "--json"]
        ))["status"],
        "retired"
    );
    let refused = auto(
        &server,
        &["def", "update", "reasoning", "review", "--file", file],
    );
    assert_eq!(code(&refused), 1, "the exit code of a rejection");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("error: The definition is retired"),
        "{stderr}"
    );
}

#[test]
fn a_server_that_is_not_there_is_an_error() {
    let output = Command::new(AUTO)
        .args(["org", "list", "--url", "http://127.0.0.1:9"])
        .output()
        .expect("auto runs");
    assert_eq!(code(&output), 3, "the exit code of an unreachable server");
    assert!(String::from_utf8_lossy(&output.stderr).contains("is `auto serve` running?"));
}

#[test]
fn a_wrong_command_line_exits_2_before_any_request() {
    // The URL leads nowhere: a request would exit 3.
    let nowhere = "http://127.0.0.1:9";
    let output = common::auto_at(nowhere, &["events", "publish", "x", "--data", "{nope}"]);
    assert_eq!(code(&output), 2);
    assert_eq!(
        common::stderr(&output),
        "error: --data is not JSON: line 1, column 2: key must be a string\n"
    );
    let output = common::auto_at(
        nowhere,
        &[
            "def",
            "create",
            "reasoning",
            "x",
            "--file",
            "/nonexistent/x.md",
        ],
    );
    // A file that cannot be read is no wrong command line: exit 4.
    assert_eq!(code(&output), 4);
    assert_eq!(
        common::stderr(&output),
        "error: cannot read /nonexistent/x.md: No such file or directory (os error 2)\n"
    );
}

/// `auto purge`, `auto playbook delete` and `auto org delete`: each answers what it removed;
/// a time in the future is refused with exit code 1, a missing `--ended-before` with 2.
#[test]
fn purges_and_deletes_from_the_shell() {
    let server = serve();
    auto(&server, &["org", "create", "acme", "--json"]);
    auto(&server, &["playbook", "create", "main", "--json"]);
    auto(&server, &["playbook", "create", "other", "--json"]);

    let purged = json_of(&auto(
        &server,
        &["purge", "--ended-before", "2020-01-01T00:00:00Z", "--json"],
    ));
    assert_eq!(
        (purged["runs"].clone(), purged["events"].clone()),
        (0.into(), 0.into())
    );
    let text = auto(
        &server,
        &["purge", "--ended-before", "2020-01-01T00:00:00Z"],
    );
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("purged 0 runs and 0 events"),
        "{text:?}"
    );
    let future = auto(
        &server,
        &["purge", "--ended-before", "2999-01-01T00:00:00Z"],
    );
    assert_eq!(code(&future), 1);
    assert!(
        String::from_utf8_lossy(&future.stderr).contains("is in the future"),
        "{future:?}"
    );
    assert_eq!(code(&auto(&server, &["purge"])), 2);

    let deleted = json_of(&auto(&server, &["playbook", "delete", "other", "--json"]));
    assert_eq!(deleted["playbooks"], 1);
    assert_eq!(code(&auto(&server, &["playbook", "delete", "other"])), 1);
    let org = auto(&server, &["org", "delete", "acme", "--force"]);
    assert!(
        String::from_utf8_lossy(&org.stdout).contains("deleted 1 playbooks"),
        "{org:?}"
    );
}
