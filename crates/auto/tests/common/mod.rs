//! A real `auto serve` on a free loopback port and a temporary directory, and the `auto`
//! binary run against it as a user would, with AUTO_URL, AUTO_ORG=acme and AUTO_PLAYBOOK=main.
//! A test talks to the server over HTTP through the shared [`auto_testkit::harness`], from
//! [`Server::client`].

#![allow(
    dead_code,
    unused_imports,
    reason = "each test file uses a different part of the harness"
)]

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

pub use auto_testkit::harness::{Client, PLAYBOOK_PATH, wait_for, wait_for_blocking};
use serde_json::Value;

pub const AUTO: &str = env!("CARGO_BIN_EXE_auto");

pub struct Server {
    child: Child,
    pub url: String,
    /// Every line the server has logged so far on stderr.
    pub log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    /// The thread that reads the log, to its end once the server has stopped.
    reader: Option<std::thread::JoinHandle<()>>,
    /// The directory the server runs in, when the harness made it.
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    /// The lines logged so far.
    pub fn log_lines(&self) -> Vec<String> {
        self.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A client of the server, with no key.
    pub fn client(&self) -> Client {
        Client::new(&self.url)
    }

    /// Kills the server with SIGKILL, as a crash would, and waits until its log is read to the
    /// end.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("the killed server's status");
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the log is read");
        }
    }
}

impl Server {
    /// The server's process id, for a test that signals it.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Stops the server with SIGTERM, as an operator does, and waits until it has exited and
    /// its log is read to the end; whether it exited cleanly.
    pub fn terminate(&mut self) -> bool {
        Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        let status = self.child.wait().expect("the stopped server's status");
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the log is read");
        }
        status.success()
    }
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

/// A server whose `auto.toml` holds this text. It listens on a port the system picks, and
/// the harness reads the address it prints: a port picked here and freed before the server
/// binds it could be taken by another process in between.
pub fn serve_with_config(config: &str) -> Server {
    serve_with_env(config, &[])
}

/// [`serve_with_config`] with these variables added to the server's environment.
pub fn serve_with_env(config: &str, env: &[(&str, &str)]) -> Server {
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(dir.path().join("auto.toml"), config).expect("the configuration");
    let mut server = serve_in(dir.path(), env);
    server._dir = Some(dir);
    server
}

/// A server in `dir`, which holds its `auto.toml`, with these variables added to its
/// environment: a test that restarts the server on the same directory starts it here again.
pub fn serve_in(dir: &std::path::Path, env: &[(&str, &str)]) -> Server {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(AUTO)
        .args(["serve", "--config", "auto.toml", "--listen", "127.0.0.1:0"])
        .current_dir(dir)
        .envs(env.iter().copied())
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("auto serve starts");
    let stderr = child.stderr.take().expect("its stderr");
    let (found, url) = std::sync::mpsc::channel();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let lines = log.clone();
    // The server's log is read to its end, so the server never blocks on a full pipe.
    let reader = std::thread::spawn(move || {
        let mut found = Some(found);
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            lines
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(line.clone());
            if let Some(rest) = line.strip_prefix("auto is serving ")
                && let Some(url) = rest.split_whitespace().next()
                && let Some(found) = found.take()
            {
                let _ = found.send(url.to_owned());
            }
        }
    });
    let url = url
        .recv_timeout(Duration::from_secs(30))
        .expect("the server listens within 30 s");
    Server {
        child,
        url,
        log,
        reader: Some(reader),
        _dir: None,
    }
}

/// `auto ARGS` against a server at `url`.
pub fn auto_at(url: &str, args: &[&str]) -> Output {
    auto_with_stdin(url, args, "")
}

/// The command `auto ARGS` against a server at `url`, for a test that reads it as it goes.
pub fn auto_command(url: &str, args: &[&str]) -> Command {
    let mut command = Command::new(AUTO);
    command
        .args(args)
        .env("AUTO_URL", url)
        .env("AUTO_ORG", "acme")
        .env("AUTO_PLAYBOOK", "main")
        .env_remove("AUTO_KEY");
    command
}

/// `auto ARGS` against a server at `url`, with `stdin` on its standard input.
pub fn auto_with_stdin(url: &str, args: &[&str], stdin: &str) -> Output {
    let mut child = auto_command(url, args)
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

/// A loopback port free when asked (another process may take it before the server binds it),
/// and never one given before in this test binary: the kernel may hand a port it just freed to
/// the next bind, so two tests that run at once could otherwise start their servers on one
/// port, and one would talk to the other's (a reset answer, a server that never started).
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    loop {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = listener.local_addr().expect("an address").port();
        if GIVEN.lock().expect("the ports given").insert(port) {
            return port;
        }
    }
}

/// Waits for `child` to exit within `within`, and gives its output; kills it and fails if not.
pub fn wait_exit(mut child: Child, within: Duration) -> Output {
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        if child.try_wait().expect("a status").is_some() {
            return child.wait_with_output().expect("its output");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("the process did not exit within {within:?}");
}
