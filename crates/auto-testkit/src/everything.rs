//! The MCP project's reference server, npm `@modelcontextprotocol/server-everything`, as a
//! third party's tool server: its executable from `AUTO_MCP_EVERYTHING` (`scripts/mcp-everything`
//! installs it, `.ci/run` sets it), to run over stdio, or started over Streamable HTTP on a free
//! port.
//!
//! Without the variable the tests that need it skip with a note; under CI (`CI` set) they fail.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Once;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// The environment variable that names the server's executable.
pub const EVERYTHING_VARIABLE: &str = "AUTO_MCP_EVERYTHING";

/// How many free ports `start_http` tries before it gives up.
const HTTP_START_TRIES: usize = 5;

/// server-everything serving Streamable HTTP; dropping it stops the process.
#[derive(Debug)]
pub struct Everything {
    child: Child,
    port: u16,
    /// Its log since it listened, for a test that failed to show.
    log: std::sync::Mutex<std::sync::mpsc::Receiver<String>>,
}

impl Drop for Everything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Everything {
    /// The executable; `None`, after a note printed once, when the variable is unset outside
    /// CI.
    ///
    /// # Panics
    /// Under CI (`CI` set) when the variable is not: the tests must not skip there.
    pub fn executable() -> Option<PathBuf> {
        static NOTE: Once = Once::new();
        match std::env::var_os(EVERYTHING_VARIABLE).filter(|path| !path.is_empty()) {
            Some(path) => Some(PathBuf::from(path)),
            None if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) => panic!(
                "AUTO_MCP_EVERYTHING is not set: under CI the tool suites must run against server-everything; .ci/run sets it from scripts/mcp-everything"
            ),
            None => {
                NOTE.call_once(|| {
                    let _ = writeln!(
                        std::io::stderr(),
                        "note: the server-everything tests are skipped: AUTO_MCP_EVERYTHING is not set (export AUTO_MCP_EVERYTHING=\"$(scripts/mcp-everything)\"; it needs node and npm)"
                    );
                });
                None
            }
        }
    }

    /// Starts it over Streamable HTTP on a free loopback port and waits until it says it
    /// listens. A port found free may be taken before the server binds it (by a double a test
    /// beside this one starts): the server says so and exits, and another port is tried, so a
    /// test never talks to someone else's listener.
    ///
    /// # Panics
    /// When it cannot start, or does not listen within 20 seconds, or loses every port it tries.
    pub fn start_http() -> Option<Everything> {
        let executable = Self::executable()?;
        for _ in 0..HTTP_START_TRIES {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let mut child = Command::new(&executable)
                .arg("streamableHttp")
                .env("PORT", port.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap_or_else(|e| panic!("{} cannot start: {e}", executable.display()));
            // Its log, read to the end on a thread of its own, so that it never blocks writing.
            let stderr = child.stderr.take().expect("a piped stderr");
            let (lines, log) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let _ = lines.send(line);
                }
            });
            let listening = format!("listening on port {port}");
            let deadline = Instant::now() + Duration::from_secs(20);
            loop {
                match log.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                    Ok(line) if line.contains(&listening) => {
                        let log = std::sync::Mutex::new(log);
                        return Some(Everything { child, port, log });
                    }
                    Ok(_) => continue,
                    // It exited (the port was taken meanwhile): another port.
                    Err(RecvTimeoutError::Disconnected) => break,
                    Err(RecvTimeoutError::Timeout) => {
                        let _ = child.kill();
                        panic!("server-everything did not listen on port {port} within 20 seconds");
                    }
                }
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("server-everything lost each of the {HTTP_START_TRIES} free ports it was given")
    }

    /// What it logged since it listened and was not read yet, a line each.
    pub fn log(&self) -> String {
        let log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        log.try_iter().collect::<Vec<_>>().join("\n")
    }

    /// Its Streamable HTTP endpoint.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}
