//! `auto run` for the types that call out or wait: a reasoning function against a provider
//! double (the answer printed, `--record`, `auto runs get`, a run the provider refuses), and a
//! workflow that waits, followed to its end with `--wait`.

mod common;

use auto_testkit::{ProviderDouble, ProviderKind, Reply};
use common::{auto, code, json_of, serve_with_config, stderr, stdout};

const REVIEW: &str = include_str!("data/review-a-brief-with-an-input-schema.md");

#[tokio::test(flavor = "multi_thread")]
async fn a_reasoning_function_runs_from_the_shell() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = serve_with_config(&format!(
        "[providers.anthropic]\nbase_url = \"{}\"\n",
        double.base_url()
    ));
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("review.md");
    std::fs::write(&file, REVIEW).expect("written");
    let input = dir.path().join("input.json");
    std::fs::write(&input, r#"{"brief": "Autumn range"}"#).expect("written");
    let (file, input) = (file.to_str().unwrap(), input.to_str().unwrap());
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    let created = auto(
        &server,
        &["def", "create", "reasoning", "review", "--file", file],
    );
    assert_eq!(code(&created), 0, "{}", stderr(&created));

    double.script([Reply::Text("The brief is missing evidence.".into())]);
    let ran = auto(
        &server,
        &[
            "run",
            "reasoning/review",
            "--input",
            &format!("@{input}"),
            "--run-id",
            "cli-1",
            "--record",
        ],
    );
    assert_eq!(code(&ran), 0, "{}", stderr(&ran));
    assert_eq!(stdout(&ran), "The brief is missing evidence.\n");
    let record = stderr(&ran);
    assert!(record.starts_with("record of the run cli-1:"), "{record}");
    assert!(record.contains("\"max_output_tokens\": 400"), "{record}");
    assert!(record.contains("\"finish_reason\": \"stop\""), "{record}");

    let got = auto(&server, &["runs", "get", "cli-1", "--json"]);
    let run = json_of(&got);
    assert_eq!(run["status"], "succeeded");
    assert_eq!(
        run["record"]["model"]["resolved"],
        "anthropic/claude-sonnet-4-5"
    );
    let sent = &double.requests()[0].body;
    assert_eq!(sent["max_tokens"], 400);

    // The provider refuses the credentials: the problem is printed and the exit is 1.
    double.script([Reply::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    )]);
    let refused = auto(
        &server,
        &["run", "reasoning/review", "--input", r#"{"brief": "x"}"#],
    );
    assert_eq!(code(&refused), 1);
    let printed = stderr(&refused);
    assert!(
        printed.starts_with(
            "error: The reasoning function review could not get an answer from its model\n"
        ),
        "{printed}"
    );
    assert!(printed.contains("anthropic answered HTTP 401"), "{printed}");
}

const PAUSE: &str = include_str!("data/pause-then-keep-the-note.yaml");

#[test]
fn a_workflow_is_followed_to_its_end_with_wait() {
    let server = common::serve();
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("pause.yaml");
    std::fs::write(&file, PAUSE).expect("written");
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    let created = auto(
        &server,
        &[
            "def",
            "create",
            "workflow",
            "pause",
            "--file",
            file.to_str().unwrap(),
        ],
    );
    assert_eq!(code(&created), 0, "{}", stderr(&created));
    // Without --wait: the run id, and how to follow it.
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
    assert_eq!(stdout(&started), "p-1\n");
    // With --wait: the output once it ended.
    let followed = auto(
        &server,
        &[
            "run",
            "workflow/pause",
            "--input",
            r#"{"note": "b"}"#,
            "--run-id",
            "p-2",
            "--wait",
        ],
    );
    assert_eq!(code(&followed), 0, "{}", stderr(&followed));
    assert_eq!(stdout(&followed), "{\n  \"seen\": \"b\"\n}\n");
}
