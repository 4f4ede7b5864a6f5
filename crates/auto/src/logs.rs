//! The server's log on stderr with the secrets of its tool servers taken out of every line, as
//! they are taken out of a run's events: a server's error page that repeats the request's
//! `Authorization` header, which rmcp's transport logs as it came, must not put the token in
//! the log.

use std::io::Write;
use std::sync::RwLock;

use tracing_subscriber::fmt::MakeWriter;

/// The texts no log line may carry, set once the configuration is read.
static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Keeps these texts out of every line logged from now on. A JSON log escapes what it quotes,
/// so the escaped form of each is kept out too.
pub fn keep_out<'a>(secrets: impl IntoIterator<Item = &'a str>) {
    let mut kept = SECRETS.write().unwrap_or_else(|p| p.into_inner());
    for secret in secrets {
        kept.push(secret.to_owned());
        let escaped = serde_json::to_string(secret).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        if escaped != secret {
            kept.push(escaped.to_owned());
        }
    }
}

/// Standard error, each event's line written whole once its secrets are replaced.
pub struct ScrubbedStderr;

impl<'a> MakeWriter<'a> for ScrubbedStderr {
    type Writer = EventWriter;

    fn make_writer(&'a self) -> Self::Writer {
        EventWriter { line: Vec::new() }
    }
}

/// Gathers one event's text (the formatter may write it in parts) and writes it when dropped.
pub struct EventWriter {
    line: Vec<u8>,
}

impl Write for EventWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.line.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for EventWriter {
    fn drop(&mut self) {
        let line = scrubbed(&String::from_utf8_lossy(&self.line));
        // Nothing is left to tell of a log that cannot be written.
        let _ = std::io::stderr().lock().write_all(line.as_bytes());
    }
}

/// `text` with every text kept out replaced by `[secret removed]`.
fn scrubbed(text: &str) -> String {
    let secrets = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    auto_tools::content::scrub(text, &secrets)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_loses_the_secrets_as_text_and_as_json_escapes_them() {
        keep_out(["Bearer tok-\"quoted\"-5e1"]);
        let text = "fail to get common stream: Unexpected server response: HTTP 500: authorization: Bearer tok-\"quoted\"-5e1";
        assert_eq!(
            scrubbed(text),
            "fail to get common stream: Unexpected server response: HTTP 500: authorization: [secret removed]"
        );
        let json = r#"{"fields":{"message":"authorization: Bearer tok-\"quoted\"-5e1"}}"#;
        assert_eq!(
            scrubbed(json),
            r#"{"fields":{"message":"authorization: [secret removed]"}}"#
        );
    }
}
