//! A real `auto serve` on a free loopback port and a temporary directory, and the `auto`
//! binary run against it as a user would, with AUTO_URL, AUTO_ORG=acme and AUTO_PLAYBOOK=main.

#![allow(dead_code)]

use std::io::Write;
use std::net::TcpListener;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const AUTO: &str = env!("CARGO_BIN_EXE_auto");

pub struct Server {
    child: Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn serve() -> Server {
    serve_with_config("")
}

/// A server whose `auto.toml` holds this text.
pub fn serve_with_config(config: &str) -> Server {
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(dir.path().join("auto.toml"), config).expect("the configuration");
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("an address")
        .port();
    let child = Command::new(AUTO)
        .args([
            "serve",
            "--config",
            "auto.toml",
            "--listen",
            &format!("127.0.0.1:{port}"),
        ])
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

/// `auto ARGS` against a server at `url`.
pub fn auto_at(url: &str, args: &[&str]) -> Output {
    auto_with_stdin(url, args, "")
}

/// `auto ARGS` against a server at `url`, with `stdin` on its standard input.
pub fn auto_with_stdin(url: &str, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(AUTO)
        .args(args)
        .env("AUTO_URL", url)
        .env("AUTO_ORG", "acme")
        .env("AUTO_PLAYBOOK", "main")
        .env_remove("AUTO_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("auto runs");
    // A command that does not read its stdin may end first; the broken pipe is no failure.
    let _ = child
        .stdin
        .take()
        .expect("its stdin")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("auto ends")
}

pub fn auto(server: &Server, args: &[&str]) -> Output {
    auto_at(&server.url, args)
}

pub fn json_of(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON on stdout")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The exit code, which a signal would leave out.
pub fn code(output: &Output) -> i32 {
    output.status.code().expect("an exit code")
}
