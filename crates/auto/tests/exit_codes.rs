//! One meaning per exit code, as `auto --help` lists them, each code caused once; and the
//! shell completion scripts.

mod common;

use std::process::Command;

use common::{AUTO, auto_at, auto_with_stdin, code, stderr, stdout};

/// Nothing listens here: a request to it would exit 3.
const NOWHERE: &str = "http://127.0.0.1:9";

#[test]
fn the_help_lists_every_exit_code() {
    let output = Command::new(AUTO)
        .arg("--help")
        .output()
        .expect("auto runs");
    assert_eq!(code(&output), 0);
    let help = stdout(&output);
    let listed: Vec<&str> = help
        .split("Exit codes:\n")
        .nth(1)
        .expect("an Exit codes section")
        .lines()
        .filter_map(|l| l.trim_start().split_once("  ").map(|(n, _)| n))
        .filter(|n| n.parse::<u8>().is_ok())
        .collect();
    assert_eq!(listed, ["0", "1", "2", "3", "4", "5"], "{help}");
}

#[test]
fn each_code_has_one_cause() {
    let dir = tempfile::tempdir().expect("a directory");
    let good = dir.path().join("greet.reasoning.md");
    std::fs::write(&good, "---\nmodel: openai/gpt-5\n---\nHello\n").expect("written");
    let broken = dir.path().join("bad.reasoning.md");
    std::fs::write(&broken, "no front matter\n").expect("written");

    // 0: done.
    let ok = auto_at(NOWHERE, &["check", good.to_str().unwrap()]);
    assert_eq!(code(&ok), 0, "{}", stderr(&ok));

    // 1: issues found (the server's refusals are 1 too: see the client tests).
    let issues = auto_at(NOWHERE, &["check", broken.to_str().unwrap()]);
    assert_eq!(code(&issues), 1, "{}", stderr(&issues));

    // 2: the command line, and nothing else.
    for args in [
        &["runs", "list", "--bogus"][..],
        &["completion", "tcsh"],
        &["check", "--type", "poem", good.to_str().unwrap()],
        &["check", dir.path().join("notes.txt").to_str().unwrap()],
        &["run", "computation/x", "--input", "{nope"],
        &["org", "list", "--url", "not a url"],
        &["mcp", "--url", NOWHERE, "--key", "two\nlines"],
    ] {
        let output = auto_at(NOWHERE, args);
        assert_eq!(code(&output), 2, "{args:?}: {}", stderr(&output));
    }

    // 3: the server cannot be reached.
    let unreachable = auto_at(NOWHERE, &["org", "list"]);
    assert_eq!(code(&unreachable), 3, "{}", stderr(&unreachable));

    // 4: a file, folder or stdin named that cannot be read or holds no JSON.
    let missing = dir.path().join("missing.json");
    let at_missing = format!("@{}", missing.display());
    let missing_document = dir.path().join("missing.reasoning.md");
    for args in [
        &["check", missing_document.to_str().unwrap()][..],
        &["run", "computation/x", "--input", &at_missing],
        &["apply", missing.to_str().unwrap()],
        &[
            "def",
            "create",
            "reasoning",
            "x",
            "--file",
            missing.to_str().unwrap(),
        ],
    ] {
        let output = auto_at(NOWHERE, args);
        assert_eq!(code(&output), 4, "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("cannot read"),
            "{}",
            stderr(&output)
        );
    }
    let stdin = auto_with_stdin(NOWHERE, &["run", "computation/x", "--input", "-"], "[1,");
    assert_eq!(code(&stdin), 4, "{}", stderr(&stdin));
    let not_object = auto_with_stdin(NOWHERE, &["tools", "call", "s", "t", "-"], "[1]");
    assert_eq!(code(&not_object), 4, "{}", stderr(&not_object));
    let inline = auto_at(NOWHERE, &["tools", "call", "s", "t", "[1]"]);
    assert_eq!(code(&inline), 2, "{}", stderr(&inline));

    // 5: a server that cannot start.
    std::fs::write(dir.path().join("auto.toml"), "listen = 42\n").expect("written");
    let serve = Command::new(AUTO)
        .args(["serve", "--config", "auto.toml", "--listen", "127.0.0.1:0"])
        .current_dir(dir.path())
        .output()
        .expect("auto serve runs");
    assert_eq!(code(&serve), 5, "{}", stderr(&serve));
}

#[test]
fn completion_scripts_name_the_commands() {
    let script = |shell: &str| {
        let output = Command::new(AUTO)
            .args(["completion", shell])
            .output()
            .expect("auto runs");
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        stdout(&output)
    };
    for shell in ["bash", "zsh", "fish"] {
        let text = script(shell);
        for command in ["runs", "def", "apply", "completion", "cancel", "versions"] {
            assert!(text.contains(command), "{shell} lacks {command}");
        }
    }
    assert!(script("zsh").starts_with("#compdef auto"));
    assert!(script("fish").contains("complete -c auto"));

    // bash registers it, when there is a bash to source it in.
    let Ok(bash) = Command::new("bash")
        .args([
            "-c",
            &format!("source <({AUTO} completion bash) && complete -p auto"),
        ])
        .output()
    else {
        return;
    };
    assert_eq!(code(&bash), 0, "{}", stderr(&bash));
    assert_eq!(
        stdout(&bash),
        "complete -o bashdefault -o default -o nosort -F _auto auto\n"
    );
}
