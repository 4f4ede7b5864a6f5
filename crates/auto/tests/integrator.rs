//! The integrator's side of `auto` against a running `auto serve`: cancelling a run that waits
//! (and waiting for its end), listing cancelled runs, a definition's versions and the diff of
//! two, events without data, and a server that needs a key.

mod common;

use common::{Server, auto, auto_at, code, json_of, serve, serve_with_config, stderr, stdout};

const SLEEPY: &str = include_str!("data/wait-a-minute.yaml");

const MONTH_WINDOW: &str = include_str!("data/month-window-described.md");

/// A server with the org acme, the playbook main, and the workflow sleepy that waits a minute.
fn saved() -> Server {
    let server = serve();
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::create_dir_all(dir.path().join("workflows")).expect("the folder");
    std::fs::write(dir.path().join("workflows/sleepy.yaml"), SLEEPY).expect("written");
    let applied = auto(&server, &["apply", dir.path().to_str().expect("UTF-8")]);
    assert_eq!(code(&applied), 0, "{}", stderr(&applied));
    server
}

/// Starts the workflow sleepy under this run id; it goes on, waiting.
fn start(server: &Server, run_id: &str) {
    let started = auto(server, &["run", "workflow/sleepy", "--run-id", run_id]);
    assert_eq!(code(&started), 0, "{}", stderr(&started));
    assert_eq!(stdout(&started), format!("{run_id}\n"));
}

#[test]
fn a_run_that_waits_is_cancelled_and_listed_as_cancelled() {
    let server = saved();
    start(&server, "nap-1");
    start(&server, "nap-2");

    let waited = auto(
        &server,
        &["runs", "cancel", "nap-1", "--wait", "--detail", "not today"],
    );
    assert_eq!(code(&waited), 0, "{}", stderr(&waited));
    let said = stderr(&waited);
    assert!(said.starts_with("Cancelling the run nap-1...\n"), "{said}");
    assert!(said.ends_with("The run nap-1 ended cancelled.\n"), "{said}");
    let printed = stdout(&waited);
    assert!(printed.starts_with("run:        nap-1\n"), "{printed}");
    assert!(printed.contains("status:     rejected\n"), "{printed}");
    assert!(printed.contains("ended:      "), "{printed}");
    assert!(printed.contains("  not today\n"), "{printed}");

    // Without --wait: the run as the server answered, and how to see its end if it goes on.
    let cancelled = auto(&server, &["runs", "cancel", "nap-2", "--json"]);
    assert_eq!(code(&cancelled), 0, "{}", stderr(&cancelled));
    assert!(stderr(&cancelled).starts_with("Cancelling the run nap-2...\n"));
    let run: serde_json::Value = serde_json::from_slice(&cancelled.stdout).expect("JSON");
    assert_eq!(run["run_id"], "nap-2");
    assert!(
        run["status"] == "started" || run["problem"]["reason"] == "cancelled",
        "{run:#}"
    );
    let ended = common::wait_for_blocking(
        std::time::Duration::from_secs(30),
        "nap-2 has ended",
        || {
            let run = json_of(&auto(&server, &["runs", "get", "nap-2", "--json"]));
            (run["status"] != "started").then_some(run)
        },
    );
    assert_eq!(ended["problem"]["reason"], "cancelled", "{ended:#}");

    // A run that ended cannot be cancelled: the server's refusal, exit 1.
    let again = auto(&server, &["runs", "cancel", "nap-1", "--wait"]);
    assert_eq!(code(&again), 1);
    assert!(
        stderr(&again).contains("error: The run has ended\n"),
        "{}",
        stderr(&again)
    );

    // `--status cancelled` is rejected with the reason cancelled; a run still waiting is not.
    start(&server, "nap-3");
    let listed = auto(&server, &["runs", "list", "--status", "cancelled"]);
    assert_eq!(code(&listed), 0, "{}", stderr(&listed));
    let table = stdout(&listed);
    let mut ids: Vec<&str> = table
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, ["nap-1", "nap-2"], "{table}");
    let started = stdout(&auto(&server, &["runs", "list", "--status", "started"]));
    assert!(started.contains("nap-3"), "{started}");
    let both = auto(
        &server,
        &[
            "runs",
            "list",
            "--status",
            "cancelled",
            "--reason",
            "cancelled",
        ],
    );
    assert_eq!(code(&both), 0, "{}", stderr(&both));
    let clash = auto(
        &server,
        &[
            "runs",
            "list",
            "--status",
            "cancelled",
            "--reason",
            "failed",
        ],
    );
    assert_eq!(code(&clash), 2);
    assert!(
        stderr(&clash).contains("--status cancelled is a run rejected with the reason cancelled"),
        "{}",
        stderr(&clash)
    );
    // --since: a time ago, or RFC 3339.
    let recent = stdout(&auto(&server, &["runs", "list", "--since", "1h"]));
    assert_eq!(recent.lines().count(), 4, "{recent}");
    let future = auto(
        &server,
        &["runs", "list", "--since", "2999-01-01T00:00:00Z"],
    );
    assert_eq!(
        (stdout(&future).as_str(), stderr(&future).as_str()),
        ("", "no runs\n")
    );
    auto(&server, &["runs", "cancel", "nap-3"]);
}

#[test]
fn versions_are_listed_and_diffed() {
    let server = serve();
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("month-window.computation.md");
    let file_text = file.to_str().expect("UTF-8");
    std::fs::write(&file, MONTH_WINDOW).expect("written");
    let save = |verb: &str| {
        let saved = auto(
            &server,
            &[
                "def",
                verb,
                "computation",
                "month-window",
                "--file",
                file_text,
            ],
        );
        assert_eq!(code(&saved), 0, "{}", stderr(&saved));
    };
    save("create");
    std::fs::write(
        &file,
        MONTH_WINDOW.replace(
            "description: The first and last day of a month",
            "description: The first and the last day of a month",
        ),
    )
    .expect("written");
    save("update");

    let versions = auto(&server, &["def", "versions", "month-window"]);
    assert_eq!(code(&versions), 0, "{}", stderr(&versions));
    let lines: Vec<Vec<String>> = stdout(&versions)
        .lines()
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let mut numbers: Vec<&str> = lines.iter().map(|l| l[0].as_str()).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, ["v1", "v2"]);
    assert!(
        lines
            .iter()
            .any(|l| l[3] == "The first and the last day of a month"),
        "{lines:?}"
    );
    let typed = json_of(&auto(
        &server,
        &[
            "def",
            "versions",
            "month-window",
            "--type",
            "computation",
            "--json",
        ],
    ));
    assert_eq!(typed["versions"].as_array().unwrap().len(), 2);

    let diff = auto(&server, &["def", "diff", "month-window", "1", "2"]);
    assert_eq!(code(&diff), 0, "{}", stderr(&diff));
    assert_eq!(
        stdout(&diff),
        "--- computation/month-window v1\n\
         +++ computation/month-window v2\n\
         @@ -1,5 +1,5 @@\n \
         ---\n\
         -description: The first and last day of a month\n\
         +description: The first and the last day of a month\n \
         input:\n   \
         schema:\n     \
         type: object\n"
    );
    let same = auto(&server, &["def", "diff", "month-window", "2", "2"]);
    assert_eq!(code(&same), 0);
    assert_eq!(stdout(&same), "");
    assert_eq!(
        stderr(&same),
        "computation/month-window v2 and v2 have the same source.\n"
    );
    let as_json = json_of(&auto(
        &server,
        &["def", "diff", "month-window", "1", "2", "--json"],
    ));
    assert_eq!(as_json["from"], 1);
    assert!(as_json["diff"].as_str().unwrap().contains("+description"));

    // A version never saved, a name never saved: the server's refusal or the lookup's, exit 1.
    let missing = auto(&server, &["def", "diff", "month-window", "1", "9"]);
    assert_eq!(code(&missing), 1, "{}", stderr(&missing));
    assert!(
        stderr(&missing).starts_with("error: Not found\n"),
        "{}",
        stderr(&missing)
    );
    let nobody = auto(&server, &["def", "versions", "nobody"]);
    assert_eq!(code(&nobody), 1);
    assert_eq!(
        stderr(&nobody),
        "error: Not found\n  The playbook main has no definition nobody.\n"
    );
    // Version 0 is a wrong command line.
    let zero = auto(&server, &["def", "diff", "month-window", "0", "1"]);
    assert_eq!(code(&zero), 2, "{}", stderr(&zero));
}

#[test]
fn an_event_without_data_says_so() {
    let server = serve();
    json_of(&auto(&server, &["org", "create", "acme", "--json"]));
    json_of(&auto(&server, &["playbook", "create", "main", "--json"]));
    let published = auto(&server, &["events", "publish", "ping"]);
    assert_eq!(code(&published), 0, "{}", stderr(&published));
    assert!(
        stdout(&published).trim_end().ends_with("\t(no data)"),
        "{}",
        stdout(&published)
    );
    let with = auto(
        &server,
        &["events", "publish", "pong", "--data", "{\"n\": 1}"],
    );
    assert!(
        stdout(&with).trim_end().ends_with("\t{\"n\":1}"),
        "{}",
        stdout(&with)
    );
    let listed = stdout(&auto(&server, &["events", "list"]));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0].contains("\tping\t") && lines[0].ends_with("\t(no data)"),
        "{listed}"
    );
    assert!(lines[1].ends_with("\t{\"n\":1}"), "{listed}");
}

#[test]
fn a_server_with_keys_asks_for_one() {
    let (key, hash) = auto_server::auth::new_key();
    let server = serve_with_config(&format!(
        "[[keys]]\ncaller = \"reader\"\norg = \"acme\"\nrole = \"viewer\"\nhash = \"{hash}\"\n"
    ));
    let none = auto(&server, &["org", "list"]);
    assert_eq!(code(&none), 1);
    assert_eq!(
        stderr(&none),
        "error: Not authenticated\n  The request has no Authorization header: send \
         Authorization: Bearer <key>.\nThe server needs a key: set AUTO_KEY or pass --key (the \
         server's operator makes keys with `auto key new`).\n"
    );
    let wrong = auto(&server, &["org", "list", "--key", "auto_wrong"]);
    assert_eq!(code(&wrong), 1);
    assert!(
        stderr(&wrong).ends_with(
            "The server does not know the key sent: check AUTO_KEY or --key (the server's \
             operator makes keys with `auto key new`).\n"
        ),
        "{}",
        stderr(&wrong)
    );
    // A known key without the role: 403, the server's words, no word about keys.
    let viewer = auto_at(&server.url, &["org", "create", "acme", "--key", &key]);
    assert_eq!(code(&viewer), 1);
    let said = stderr(&viewer);
    assert!(said.starts_with("error: "), "{said}");
    assert!(!said.contains("AUTO_KEY"), "{said}");
    let listed = auto(&server, &["org", "list", "--key", &key, "--json"]);
    assert_eq!(code(&listed), 0, "{}", stderr(&listed));
}
