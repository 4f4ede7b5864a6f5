//! [`Aimock`]: a third party's emulator of the providers' APIs, npm `@copilotkit/aimock`, as a
//! child process on a free loopback port. Our doubles ([`crate::ProviderDouble`]) speak the wire
//! protocols as we read them; aimock speaks them as someone else read them, so a mistake we made
//! twice, in an adapter and in its double, shows against it.
//!
//! `scripts/aimock` installs the pinned version and prints its executable, which the tests find
//! through `AUTO_AIMOCK`. Without it [`Aimock::start`] returns `None` after a note, so a machine
//! without node still runs the suites; under CI (`CI` set) it panics instead.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Once, PoisonError, mpsc};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The variable that names aimock's executable.
pub const AIMOCK_VARIABLE: &str = "AUTO_AIMOCK";

/// How long aimock may take to say where it listens.
const START_WAIT: Duration = Duration::from_secs(20);

/// One aimock process serving the fixtures a test gave it. Killed when dropped.
pub struct Aimock {
    child: Child,
    url: String,
    api_keys: Vec<String>,
    errors: Arc<Mutex<String>>,
    dir: tempfile::TempDir,
}

impl std::fmt::Debug for Aimock {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Aimock")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Aimock {
    /// The executable from `AUTO_AIMOCK`; `None`, after a note printed once, when it is unset
    /// outside CI.
    ///
    /// # Panics
    /// Under CI (`CI` set) when `AUTO_AIMOCK` is not: the tests must not skip there.
    pub fn executable() -> Option<PathBuf> {
        static NOTE: Once = Once::new();
        match std::env::var_os(AIMOCK_VARIABLE).filter(|path| !path.is_empty()) {
            Some(path) => Some(PathBuf::from(path)),
            None if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) => panic!(
                "AUTO_AIMOCK is not set: under CI the tests must run against aimock; .ci/run sets it from scripts/aimock"
            ),
            None => {
                // Past the test harness's capture, so the note shows in a plain `cargo test`.
                NOTE.call_once(|| {
                    let _ = writeln!(
                        std::io::stderr(),
                        "note: the aimock tests are skipped: AUTO_AIMOCK is not set (export AUTO_AIMOCK=\"$(scripts/aimock)\"; it needs node and npm)"
                    );
                });
                None
            }
        }
    }

    /// Starts aimock serving `fixtures` (a list of aimock fixtures). With `api_keys`, aimock
    /// answers 401 to a request that carries none of them. `None` when the tests skip.
    ///
    /// # Panics
    /// When aimock cannot start or does not say where it listens within 20 seconds.
    pub fn start(fixtures: Value, api_keys: &[&str]) -> Option<Aimock> {
        let executable = Self::executable()?;
        let dir = tempfile::tempdir().expect("a temporary folder");
        let fixture_file = dir.path().join("fixtures.json");
        write_json(&fixture_file, &json!({ "fixtures": fixtures }));
        let mut config = json!({ "llm": { "fixtures": fixture_file, "logLevel": "warn" } });
        if !api_keys.is_empty() {
            config["auth"] = json!({ "apiKeys": api_keys });
        }
        let config_file = dir.path().join("aimock.json");
        write_json(&config_file, &config);
        let mut child = Command::new(&executable)
            .arg("--config")
            .arg(&config_file)
            .args(["--port", "0", "--host", "127.0.0.1"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| {
                panic!("aimock at {} cannot start: {error}", executable.display())
            });
        // Both pipes are drained so aimock never blocks on a full one; its errors are kept.
        let errors = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().expect("aimock's stderr");
        let sink = Arc::clone(&errors);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut errors = sink.lock().unwrap_or_else(PoisonError::into_inner);
                errors.push_str(&line);
                errors.push('\n');
            }
        });
        // aimock prints "aimock server listening on http://127.0.0.1:PORT" once it listens.
        let (sender, receiver) = mpsc::channel();
        let stdout = child.stdout.take().expect("aimock's stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(at) = line.find("listening on ") {
                    let _ = sender.send(line[at + "listening on ".len()..].trim().to_owned());
                }
            }
        });
        let url = match receiver.recv_timeout(START_WAIT) {
            Ok(url) => url.trim_end_matches('/').to_owned(),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                std::thread::sleep(Duration::from_millis(100));
                panic!(
                    "aimock did not say where it listens within {START_WAIT:?}; its errors: {}",
                    errors.lock().unwrap_or_else(PoisonError::into_inner)
                );
            }
        };
        Some(Aimock {
            child,
            url,
            api_keys: api_keys.iter().map(|key| (*key).to_owned()).collect(),
            errors,
            dir,
        })
    }

    /// aimock's root URL, without a trailing slash, such as `http://127.0.0.1:41234`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A folder that lives as long as this aimock, for key files and the like.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// What aimock wrote on stderr so far.
    pub fn errors(&self) -> String {
        self.errors
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The requests aimock received and how it answered each (`response.status`), oldest
    /// first.
    ///
    /// # Panics
    /// When aimock does not answer with its journal.
    pub async fn journal(&self) -> Vec<Value> {
        let mut headers = String::new();
        if let Some(key) = self.api_keys.first() {
            headers = format!("x-api-key: {key}\r\n");
        }
        let body = get(&self.url, "/__aimock/journal", &headers)
            .await
            .unwrap_or_else(|error| panic!("aimock's journal: {error}"));
        let journal: Value = serde_json::from_slice(&body).unwrap_or_else(|error| {
            panic!(
                "aimock's journal is not JSON ({error}): {}",
                String::from_utf8_lossy(&body)
            )
        });
        journal.as_array().cloned().unwrap_or_default()
    }
}

impl Drop for Aimock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(
        path,
        serde_json::to_vec_pretty(value).expect("JSON serialises"),
    )
    .unwrap_or_else(|error| panic!("{} cannot be written: {error}", path.display()));
}

/// A plain HTTP/1.1 GET of `path` from `http://host:port`, returning the body of a 200: enough
/// for aimock's control API, without an HTTP client in this crate.
async fn get(url: &str, path: &str, headers: &str) -> Result<Vec<u8>, String> {
    let authority = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url} is not an http:// URL"))?;
    let mut stream = tokio::net::TcpStream::connect(authority)
        .await
        .map_err(|e| e.to_string())?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nhost: {authority}\r\naccept: application/json\r\n{headers}connection: close\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .await
        .map_err(|e| e.to_string())?;
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("the response has no end of headers")?;
    let head = String::from_utf8_lossy(&response[..split]).to_ascii_lowercase();
    let body = &response[split + 4..];
    if !head.starts_with("http/1.1 200") {
        return Err(format!(
            "{}: {}",
            head.lines().next().unwrap_or_default(),
            String::from_utf8_lossy(body)
        ));
    }
    if head.contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        Ok(body.to_vec())
    }
}

/// The body of a chunked transfer encoding.
fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("a chunk without its size line")?;
        let size_text = String::from_utf8_lossy(&body[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("{size_text:?} is not a chunk size"))?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = body.get(..size).ok_or("a chunk cut short")?;
        out.extend_from_slice(chunk);
        body = body.get(size + 2..).ok_or("a chunk without its end")?;
    }
}
