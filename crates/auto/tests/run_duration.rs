//! `[limits] workflow_max_duration` bounds what a save accepts: a workflow's durations and an
//! interaction's `expires` at the configured longest run are saved, one minute more is refused
//! with the checker's words.

mod common;

use common::{auto, code, json_of, serve_with_config, stderr};

fn workflow(wait: &str) -> String {
    format!(
        "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: pause\n  version: 1.0.0\ndo:\n  - pause:\n      wait: {wait}\n"
    )
}

fn interaction(expires: &str) -> String {
    format!(
        "---\ndescription: Asks for an approval\nto: ops@example.com\nexpires: {expires}\noutput:\n  schema:\n    type: object\n---\nApprove?\n"
    )
}

#[test]
fn a_configured_longest_run_bounds_the_durations_a_save_accepts() {
    let server = serve_with_config("[limits]\nworkflow_max_duration = \"PT2H\"\n");
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    let dir = tempfile::tempdir().expect("a directory");
    let save = |def_type: &str, name: &str, text: &str| {
        let file = dir.path().join(format!("{name}.txt"));
        std::fs::write(&file, text).expect("written");
        auto(
            &server,
            &[
                "def",
                "create",
                def_type,
                name,
                "--file",
                file.to_str().expect("a UTF-8 path"),
            ],
        )
    };
    let at = save("workflow", "at-limit", &workflow("PT2H"));
    assert_eq!(code(&at), 0, "{}", stderr(&at));
    let past = save("workflow", "past-limit", &workflow("PT2H1M"));
    assert_eq!(code(&past), 1, "{}", stderr(&past));
    assert!(
        stderr(&past).contains("The duration is longer than a run may last: at most 2 hours."),
        "{}",
        stderr(&past)
    );
    let at = save("interaction", "ask-at-limit", &interaction("PT2H"));
    assert_eq!(code(&at), 0, "{}", stderr(&at));
    let past = save("interaction", "ask-past-limit", &interaction("PT2H1M"));
    assert_eq!(code(&past), 1, "{}", stderr(&past));
    assert!(
        stderr(&past).contains(
            "Line 4, /expires: The duration is longer than a run may last: at most 2 hours."
        ),
        "{}",
        stderr(&past)
    );
}
