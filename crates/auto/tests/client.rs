//! The client commands against a running `auto serve`: orgs, playbooks, definitions and
//! events, for people and as JSON, and a rejection printed with exit code 1.

use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const AUTO: &str = env!("CARGO_BIN_EXE_auto");

const EXAMPLE: &str = "---
description: Reviews a campaign brief against the team's criteria
model: anthropic/claude-sonnet-4-5
config:
  max_output_tokens: 800
input:
  schema:
    type: object
    properties:
      brief: { type: string }
      criteria: { type: string }
    required: [brief, criteria]
---

{% system %}Review the brief using the supplied criteria. Identify missing evidence. Do not invent facts.{% endsystem %}
Brief: {{ input.brief }}
Criteria: {{ input.criteria }}
";

struct Server {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve() -> Server {
    let dir = tempfile::tempdir().expect("a directory");
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("an address")
        .port();
    let child = Command::new(AUTO)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("auto serve starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the server did not listen within 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
        _dir: dir,
    }
}

fn auto(server: &Server, args: &[&str]) -> Output {
    Command::new(AUTO)
        .args(args)
        .env("AUTO_URL", &server.url)
        .env("AUTO_ORG", "acme")
        .env("AUTO_PLAYBOOK", "main")
        .output()
        .expect("auto runs")
}

fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

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
    assert!(!refused.status.success());
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
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("is `auto serve` running?"));
}
