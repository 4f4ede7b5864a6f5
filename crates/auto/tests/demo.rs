//! The README's first command, `scripts/demo`, run as a newcomer runs it: without a provider
//! key it says it answers through the provider emulator and the reasoning function answers;
//! the server's log stays out of the tour; a port that is taken stops it with words that say
//! so. It runs the binary the tests built (`AUTO_BIN`) and the emulator from `scripts/aimock`
//! (`AUTO_AIMOCK`; without it the test skips with a note, and under CI it fails).

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

fn demo(port: u16) -> Output {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    Command::new(root.join("scripts/demo"))
        .env("AUTO_BIN", env!("CARGO_BIN_EXE_auto"))
        .env("AUTO_DEMO_PORT", port.to_string())
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("scripts/demo runs")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn the_demo_answers_through_the_emulator_without_a_key_and_keeps_the_log_apart() {
    if auto_testkit::Aimock::executable().is_none() {
        return;
    }
    let output = demo(free_port());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "no ANTHROPIC_API_KEY: the model is aimock, the provider emulator the tests use"
        ),
        "{stdout}"
    );
    // The review's answer, through the model's adapter and the output contract.
    assert!(stdout.contains("\"verdict\": \"revise\""), "{stdout}");
    assert!(stdout.contains("\"numeric target\""), "{stdout}");
    // Not a terminal: no colour codes.
    assert!(!stdout.contains('\u{1b}'), "{stdout}");
    // The tour's other steps ran too, and no line of the server's log is among them.
    assert!(stdout.contains("The month ends on day 28."), "{stdout}");
    for line in stdout.lines().chain(stderr.lines()) {
        assert!(
            !line.contains(" INFO ") && !line.contains("auto is serving"),
            "the server's log in the tour: {line}"
        );
    }
}

#[test]
fn a_taken_port_stops_the_demo_with_words_that_say_so() {
    if auto_testkit::Aimock::executable().is_none() {
        return;
    }
    // Something holds the port and answers nothing: the tour would not reach its server.
    let holder = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = holder.local_addr().unwrap().port();
    let output = demo(port);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "scripts/demo: 127.0.0.1:{port} is taken: something already listens there"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("AUTO_DEMO_PORT=8041"), "{stderr}");
    drop(holder);
}
