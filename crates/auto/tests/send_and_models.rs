//! `auto runs send` hands an event to a waiting run (`send_run_event`), a retry with the same
//! id ignored; `auto models` lists what an org's reasoning functions may name (`list_models`).

mod common;

use common::{auto, code, json_of, serve, stderr, stdout};

const HEAR: &str = include_str!("data/hear-go.yaml");

#[test]
fn an_event_sent_from_the_shell_reaches_the_listening_run_once() {
    let server = serve();
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("hear.yaml");
    std::fs::write(&file, HEAR).expect("written");
    let created = auto(
        &server,
        &[
            "def",
            "create",
            "workflow",
            "hear",
            "--file",
            file.to_str().expect("a UTF-8 path"),
        ],
    );
    assert_eq!(code(&created), 0, "{}", stderr(&created));
    let started = auto(&server, &["run", "workflow/hear", "--run-id", "h-1"]);
    assert_eq!(code(&started), 0, "{}", stderr(&started));

    let send = [
        "runs",
        "send",
        "h-1",
        "com.example.go",
        "--data",
        r#"{"ok": true}"#,
        "--id",
        "go-1",
    ];
    let sent = auto(&server, &send);
    assert_eq!(code(&sent), 0, "{}", stderr(&sent));
    assert_eq!(stdout(&sent), "go-1: sent to the run h-1\n");
    let again = auto(&server, &send);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(
        stdout(&again),
        "go-1: the run h-1 received this event before; ignored\n"
    );

    let followed = auto(&server, &["runs", "follow", "h-1"]);
    assert_eq!(code(&followed), 0, "{}", stderr(&followed));
    assert_eq!(json_of(&followed), serde_json::json!([{"ok": true}]));

    // Data that is not JSON is refused before any request.
    let wrong = auto(&server, &["runs", "send", "h-1", "t", "--data", "{nope"]);
    assert_eq!(code(&wrong), 2, "{}", stderr(&wrong));
    // A run that has ended takes no more events.
    let late = auto(&server, &["runs", "send", "h-1", "com.example.go"]);
    assert_eq!(code(&late), 1, "{}", stderr(&late));
}

#[test]
fn the_models_an_org_may_name_are_listed() {
    let server = serve();
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    let listed = auto(&server, &["models"]);
    assert_eq!(code(&listed), 0, "{}", stderr(&listed));
    assert_eq!(
        stdout(&listed),
        "no provider is configured: add [providers.NAME] to auto.toml\n"
    );
    let json = json_of(&auto(&server, &["models", "--json"]));
    assert_eq!(json["models"], serde_json::json!([]));
    assert_eq!(json["providers"], serde_json::json!([]));
    let unknown = auto(&server, &["models", "--org", "nobody"]);
    assert_eq!(code(&unknown), 1, "{}", stderr(&unknown));
}
