//! The server's log as an operator reads it: `--log-json` writes JSON lines only, a request's
//! lines name its org, playbook and run, and no colour codes go where no terminal reads them.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use common::{AUTO, free_port, wait_exit, wait_for_blocking};
use serde_json::Value;

/// `auto serve` in `dir` on `port`, with these arguments after it, its stderr a pipe and no
/// `NO_COLOR`: the server alone decides whether to colour.
fn serve(dir: &std::path::Path, port: u16, extra: &[&str]) -> Child {
    Command::new(AUTO)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--database", "sqlite://auto.db"])
        .args(extra)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("auto serve starts")
}

/// One HTTP/1.1 request; the status of the answer.
fn request(port: u16, method: &str, path: &str, body: &str) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("a connection");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("the request is sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("an answer");
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|status| status.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {answer}"))
}

/// Starts a server, makes requests that name an org, a playbook and a run, and stops it.
fn served_log(extra: &[&str]) -> String {
    let dir = tempfile::tempdir().expect("a directory");
    let port = free_port();
    let child = serve(dir.path(), port, extra);
    wait_for_blocking(Duration::from_secs(30), "the server listening", || {
        TcpStream::connect(("127.0.0.1", port)).ok()
    });
    assert_eq!(request(port, "POST", "/v1/orgs", r#"{"id":"acme"}"#), 201);
    let playbooks = "/v1/orgs/acme/playbooks";
    assert_eq!(request(port, "POST", playbooks, r#"{"id":"ops"}"#), 201);
    let run = "/v1/orgs/acme/playbooks/ops/runs/r-404";
    assert_eq!(request(port, "GET", run, ""), 404);
    let output = stop(child);
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stderr).expect("a log in UTF-8")
}

/// Stops the server with SIGTERM and gives its output once it has exited.
fn stop(child: Child) -> Output {
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    wait_exit(child, Duration::from_secs(30))
}

#[test]
fn log_json_writes_json_lines_only_and_each_request_names_its_place() {
    let log = served_log(&["--log-json"]);
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let messages: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["fields"]["message"].as_str())
        .collect();
    assert!(messages.contains(&"auto is serving"), "{log}");
    assert!(messages.contains(&"auto is stopping"), "{log}");
    let run_request = lines
        .iter()
        .find(|l| l["fields"]["message"] == "request" && l["fields"]["status"] == 404)
        .unwrap_or_else(|| panic!("the run's request in {log}"));
    assert_eq!(run_request["span"]["org"], "acme", "{run_request}");
    assert_eq!(run_request["span"]["playbook"], "ops", "{run_request}");
    assert_eq!(run_request["span"]["run_id"], "r-404", "{run_request}");
    assert!(!log.contains('\u{1b}'), "{log}");
}

#[test]
fn a_server_that_cannot_start_says_why_in_json_too() {
    let dir = tempfile::tempdir().expect("a directory");
    let port = free_port();
    let child = serve(dir.path(), port, &["--log-json"]);
    wait_for_blocking(Duration::from_secs(30), "the server listening", || {
        TcpStream::connect(("127.0.0.1", port)).ok()
    });
    // A second server on the same file is refused: its reason is a JSON line as well.
    let second = serve(dir.path(), free_port(), &["--log-json"]);
    let output = second.wait_with_output().expect("its output");
    assert_eq!(output.status.code(), Some(5), "a server that cannot start");
    let log = String::from_utf8(output.stderr).expect("UTF-8");
    let lines: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let last = lines.last().expect("a line");
    assert_eq!(last["level"], "ERROR", "{log}");
    assert_eq!(last["fields"]["message"], "auto could not serve", "{log}");
    assert!(
        last["fields"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("locked")),
        "{log}"
    );
    assert!(stop(child).status.success());
}

#[test]
fn a_text_log_into_a_pipe_has_no_colour_codes_and_names_the_place() {
    let log = served_log(&[]);
    assert!(!log.contains('\u{1b}'), "{log:?}");
    let line = log
        .lines()
        .find(|l| l.contains("request") && l.contains("status=404"))
        .unwrap_or_else(|| panic!("the run's request in {log}"));
    assert!(line.contains("org=acme"), "{line}");
    assert!(line.contains("playbook=ops"), "{line}");
    assert!(line.contains("run_id=r-404"), "{line}");
}
