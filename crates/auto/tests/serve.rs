//! `auto serve` as a process: it starts on a SQLite file, a second server on the same file is
//! refused, SIGTERM stops it cleanly, and `auto check` and `auto key new` behave.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{AUTO, free_port, wait_exit, wait_for_blocking};

fn serve(dir: &std::path::Path, port: u16) -> Child {
    Command::new(AUTO)
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--database",
            "sqlite://auto.db",
        ])
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("auto serve starts")
}

fn wait_healthy(port: u16) {
    wait_for_blocking(Duration::from_secs(30), "the server listening", || {
        std::net::TcpStream::connect(("127.0.0.1", port)).ok()
    });
}

fn wait_for_file(path: &std::path::Path) {
    wait_for_blocking(Duration::from_secs(30), "the store's file", || {
        path.exists().then_some(())
    });
}

/// `auto serve` in `dir` on a free port, once its store's file is there and it listens: the
/// store is made before the server listens, and waiting for both keeps a port another test
/// took meanwhile from passing for this server.
fn started(dir: &std::path::Path) -> Child {
    let port = free_port();
    let server = serve(dir, port);
    wait_for_file(&dir.join("auto.db"));
    wait_healthy(port);
    server
}

#[test]
fn a_second_server_on_the_same_file_is_refused_and_sigterm_stops_cleanly() {
    let dir = tempfile::tempdir().expect("a directory");
    let first = started(dir.path());

    let second = serve(dir.path(), free_port());
    let output = wait_exit(second, Duration::from_secs(30));
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("locked"), "{stderr}");

    let status = Command::new("kill")
        .args(["-TERM", &first.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let output = wait_exit(first, Duration::from_secs(30));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("auto is stopping"));

    // Once it stopped, the file is free again.
    let again = started(dir.path());
    Command::new("kill")
        .args(["-TERM", &again.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(wait_exit(again, Duration::from_secs(30)).status.success());
}

/// The server runs without transparent huge pages (the kernel's own account of the process
/// says so): a first burst of requests otherwise zeroes a fresh 2 MiB page for each new
/// thread's heap.
#[cfg(target_os = "linux")]
#[test]
fn the_server_runs_without_transparent_huge_pages() {
    let dir = tempfile::tempdir().expect("a directory");
    let server = started(dir.path());
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.id()))
        .expect("the process's status");
    let line = status
        .lines()
        .find(|line| line.starts_with("THP_enabled:"))
        .unwrap_or_else(|| panic!("no THP_enabled line in {status}"));
    assert_eq!(line.split_whitespace().nth(1), Some("0"), "{line}");
    let mut server = server;
    server.kill().expect("the server stops");
    let output = server.wait_with_output().expect("the server's output");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("huge pages"), "{stderr}");
}

#[test]
fn no_keys_means_loopback_only() {
    let dir = tempfile::tempdir().expect("a directory");
    let child = Command::new(AUTO)
        .args(["serve", "--listen", "0.0.0.0:0"])
        .current_dir(dir.path())
        .stderr(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("auto serve starts");
    let output = wait_exit(child, Duration::from_secs(30));
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("refusing to listen on 0.0.0.0:0"));
}

#[test]
fn a_bad_configuration_is_refused_at_start() {
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(dir.path().join("auto.toml"), "lissten = \"x\"\n").expect("written");
    let output = Command::new(AUTO)
        .args(["serve", "--config", "auto.toml"])
        .current_dir(dir.path())
        .output()
        .expect("auto runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown field `lissten`"));
}

#[test]
fn a_store_that_cannot_be_opened_is_named_without_its_password() {
    // A port that is no number: refused at once, with the URL in the message.
    let dir = tempfile::tempdir().expect("a directory");
    let output = Command::new(AUTO)
        .args([
            "serve",
            "--database",
            "postgres://app:pw-7c1e@127.0.0.1:five/auto",
        ])
        .current_dir(dir.path())
        .output()
        .expect("auto runs");
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains("cannot open the store postgres://app:***@127.0.0.1:five/auto: "),
        "{err}"
    );
    assert!(!err.contains("pw-7c1e"), "{err}");
}

#[test]
fn key_new_prints_a_key_and_its_hash() {
    let output = Command::new(AUTO)
        .args(["key", "new"])
        .output()
        .expect("auto runs");
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("key:  auto_"), "{stdout}");
    assert!(stdout.contains("hash: sha256:"), "{stdout}");
}

#[test]
fn check_needs_a_type_it_can_tell() {
    let dir = tempfile::tempdir().expect("a directory");
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "x").expect("written");
    let output = Command::new(AUTO)
        .arg("check")
        .arg(&file)
        .output()
        .expect("auto runs");
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot tell the type"));
}
