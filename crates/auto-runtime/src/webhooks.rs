//! `[webhooks.NAME]` of `auto.toml` and the delivery of one request to one of them (supplement
//! §7: "Where `notify` names a webhook the operator configured, the request is posted there").
//!
//! A webhook is a URL (http or https), headers whose values are secrets read from the
//! environment or a file as every secret of the configuration is, a `timeout` for one delivery
//! and a `retry_delay` before the second attempt (the third waits twice as long). This module
//! knows how to post once; the retries are work in the store (`interaction_delivery`), so a
//! restart neither loses nor repeats a delivery beyond at-least-once, which the
//! `Idempotency-Key` header lets the receiver fold.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use auto_tools::config::{Secret, parse_duration, read_secret};
use serde_json::Value;

/// How long one delivery waits for the webhook unless the operator sets another.
pub const WEBHOOK_TIMEOUT_MS_DEFAULT: u64 = 10_000;
/// The longest `timeout` the configuration takes: a delivery is carried out under the
/// scheduler's lease of its work item (30 seconds), and must end well inside it, or another
/// server would claim the item and post the request a second time meanwhile.
pub const WEBHOOK_TIMEOUT_MS_MAX: u64 = 20_000;
/// The wait before the second attempt unless the operator sets another; the third waits twice
/// as long ("retried with backoff").
pub const WEBHOOK_RETRY_DELAY_MS_DEFAULT: u64 = 5_000;
/// "A delivery that fails three times ends the run `unanswered`, kind `undelivered`."
pub const DELIVERY_ATTEMPTS_MAX: u32 = 3;
/// A webhook's answer body kept in a failed attempt's event, at most (the receiver's words
/// help the operator; its whole page does not).
pub const ANSWER_EXCERPT_CHARS_MAX: usize = 200;
/// The header that lets a receiver fold a request delivered twice: its value is the request id.
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";

/// Every webhook the operator configured, by name.
#[derive(Clone, Debug, Default)]
pub struct Webhooks {
    hooks: BTreeMap<String, Arc<Webhook>>,
}

/// One configured webhook.
#[derive(Clone, Debug)]
pub struct Webhook {
    pub name: String,
    pub url: String,
    pub headers: Vec<(String, Secret)>,
    pub timeout: Duration,
    pub retry_delay: Duration,
}

const KEYS: [&str; 4] = ["url", "headers", "timeout", "retry_delay"];

impl Webhooks {
    /// Reads `[webhooks]`: a table of webhooks by name; a problem names the webhook and the
    /// setting, such as `webhooks.ops.url: expected an http or https URL`.
    pub fn from_config(table: &toml::Table) -> Result<Self, String> {
        let mut hooks = BTreeMap::new();
        for (name, entry) in table {
            let at = format!("webhooks.{name}");
            if !is_webhook_name(name) {
                return Err(format!(
                    "{at}: a webhook's name is a lowercase letter, then up to 63 lowercase letters, digits and hyphens, as notify names it"
                ));
            }
            let entry = entry
                .as_table()
                .ok_or_else(|| format!("{at}: expected a table with url"))?;
            let hook = parse_webhook(name, entry).map_err(|message| format!("{at}.{message}"))?;
            hooks.insert(name.clone(), Arc::new(hook));
        }
        Ok(Self { hooks })
    }

    /// The webhook of this name, when the operator configured it.
    pub fn get(&self, name: &str) -> Option<Arc<Webhook>> {
        self.hooks.get(name).cloned()
    }

    /// The names configured, in order.
    pub fn names(&self) -> Vec<&str> {
        self.hooks.keys().map(String::as_str).collect()
    }
}

/// What `notify` may name (the engine checks the document's side of the same rule).
fn is_webhook_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name.len() <= auto_engine::interaction::WEBHOOK_NAME_CHARS_MAX
}

fn parse_webhook(name: &str, entry: &toml::Table) -> Result<Webhook, String> {
    if let Some(key) = entry.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "{key} is not a setting of a webhook; the settings are {}",
            KEYS.join(", ")
        ));
    }
    let url = entry
        .get("url")
        .and_then(toml::Value::as_str)
        .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
        .filter(|u| reqwest::Url::parse(u).is_ok())
        .ok_or("url: expected an http or https URL, such as https://hooks.example.com/auto")?;
    let mut headers = Vec::new();
    if let Some(table) = entry.get("headers") {
        let table = table
            .as_table()
            .ok_or("headers: expected a table of header names and secrets")?;
        for (header, value) in table {
            reqwest::header::HeaderName::from_bytes(header.as_bytes())
                .map_err(|_| format!("headers.{header}: not a header name"))?;
            let secret = read_secret(&format!("headers.{header}"), value)?;
            reqwest::header::HeaderValue::from_str(&secret.value)
                .map_err(|_| format!("headers.{header}: the secret is not a header value"))?;
            headers.push((header.clone(), secret));
        }
    }
    let duration = |key: &str, default_ms: u64| -> Result<Duration, String> {
        match entry.get(key) {
            None => Ok(Duration::from_millis(default_ms)),
            Some(value) => value.as_str().and_then(parse_duration).ok_or_else(|| {
                format!("{key}: expected a duration above zero such as \"10s\", \"500ms\" or \"2m\"; got {value}")
            }),
        }
    };
    let timeout = duration("timeout", WEBHOOK_TIMEOUT_MS_DEFAULT)?;
    if timeout > Duration::from_millis(WEBHOOK_TIMEOUT_MS_MAX) {
        return Err(format!(
            "timeout: at most 20s, so a delivery ends within the lease of its work; got {}",
            entry["timeout"]
        ));
    }
    Ok(Webhook {
        name: name.to_owned(),
        url: url.to_owned(),
        headers,
        timeout,
        retry_delay: duration("retry_delay", WEBHOOK_RETRY_DELAY_MS_DEFAULT)?,
    })
}

/// How one attempt went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The webhook's HTTP status, when it answered.
    pub status: Option<u16>,
    /// Why it failed, in words for the operator; `None` when the webhook took the request
    /// (a 2xx).
    pub failure: Option<String>,
    pub duration_ms: u64,
}

impl Webhook {
    /// The wait before attempt `next` (2 or 3): `retry_delay`, then twice it.
    pub fn delay_before(&self, next: u32) -> Duration {
        self.retry_delay
            .saturating_mul(1 << next.saturating_sub(2).min(8))
    }

    /// Posts `body` once, with the request id as the idempotency key, within `timeout`.
    pub async fn post(&self, client: &reqwest::Client, body: &Value, request_id: &str) -> Attempt {
        let started = Instant::now();
        let mut request = client
            .post(&self.url)
            .timeout(self.timeout)
            .header(IDEMPOTENCY_HEADER, request_id)
            .json(body);
        for (name, secret) in &self.headers {
            request = request.header(name.as_str(), secret.value.as_str());
        }
        let outcome = request.send().await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        match outcome {
            Ok(response) if response.status().is_success() => Attempt {
                status: Some(response.status().as_u16()),
                failure: None,
                duration_ms,
            },
            Ok(response) => {
                let status = response.status().as_u16();
                let text = response.text().await.unwrap_or_default();
                let excerpt: String = text.trim().chars().take(ANSWER_EXCERPT_CHARS_MAX).collect();
                let words = if excerpt.is_empty() {
                    format!("the webhook answered HTTP {status}")
                } else {
                    format!("the webhook answered HTTP {status}: {excerpt}")
                };
                Attempt {
                    status: Some(status),
                    failure: Some(self.scrubbed(&words)),
                    duration_ms,
                }
            }
            Err(error) => {
                let words = if error.is_timeout() {
                    format!(
                        "the webhook did not answer within {} ms",
                        self.timeout.as_millis()
                    )
                } else if error.is_connect() {
                    "the webhook cannot be reached".to_owned()
                } else {
                    "the request to the webhook failed".to_owned()
                };
                Attempt {
                    status: None,
                    failure: Some(words),
                    duration_ms,
                }
            }
        }
    }

    /// A webhook that echoes a header back must not put its secret into the run's history.
    fn scrubbed(&self, text: &str) -> String {
        let secrets: Vec<&str> = self.headers.iter().map(|(_, s)| s.value.as_str()).collect();
        auto_tools::content::scrub(text, &secrets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn webhooks(text: &str) -> Result<Webhooks, String> {
        let file: toml::Table = toml::from_str(text).unwrap();
        Webhooks::from_config(file["webhooks"].as_table().unwrap())
    }

    #[test]
    fn a_webhook_takes_a_url_headers_from_secrets_and_durations() {
        let path = std::env::temp_dir().join(format!("auto-webhook-{}", std::process::id()));
        std::fs::write(&path, "Bearer hook-token\n").unwrap();
        let hooks = webhooks(&format!(
            "[webhooks.ops]\nurl = \"https://hooks.example.com/auto\"\nheaders = {{ Authorization = {{ file = {:?} }} }}\n[webhooks.slack-2]\nurl = \"http://127.0.0.1:9/x\"\ntimeout = \"20s\"\nretry_delay = \"50ms\"\n",
            path.display().to_string()
        ))
        .unwrap();
        assert_eq!(hooks.names(), ["ops", "slack-2"]);
        let ops = hooks.get("ops").unwrap();
        assert_eq!(ops.headers[0].1.value, "Bearer hook-token");
        assert_eq!(
            ops.timeout,
            Duration::from_millis(WEBHOOK_TIMEOUT_MS_DEFAULT)
        );
        assert_eq!(ops.delay_before(2), Duration::from_secs(5));
        assert_eq!(ops.delay_before(3), Duration::from_secs(10));
        let slack = hooks.get("slack-2").unwrap();
        assert_eq!(slack.timeout, Duration::from_millis(WEBHOOK_TIMEOUT_MS_MAX));
        assert_eq!(slack.delay_before(3), Duration::from_millis(100));
        assert!(!format!("{ops:?}").contains("hook-token"));
        assert!(hooks.get("other").is_none());
    }

    #[test]
    fn problems_name_the_webhook_and_the_setting() {
        let cases = [
            (
                "[webhooks.ops]\nurl = \"ftp://x\"",
                "webhooks.ops.url: expected an http or https URL, such as https://hooks.example.com/auto",
            ),
            (
                "[webhooks.ops]\nurl = \"http://x\"\nheaders = { Authorization = \"Bearer x\" }",
                "webhooks.ops.headers.Authorization must be read from the environment or a file: write { env = \"NAME\" } or { file = \"PATH\" }",
            ),
            (
                "[webhooks.ops]\nurl = \"http://x\"\ntimeout = \"21s\"",
                "webhooks.ops.timeout: at most 20s, so a delivery ends within the lease of its work; got \"21s\"",
            ),
            (
                "[webhooks.ops]\nurl = \"http://x\"\nretry_delay = \"0s\"",
                "webhooks.ops.retry_delay: expected a duration above zero such as \"10s\", \"500ms\" or \"2m\"; got \"0s\"",
            ),
            (
                "[webhooks.ops]\nurl = \"http://x\"\nsecret = 1",
                "webhooks.ops.secret is not a setting of a webhook; the settings are url, headers, timeout, retry_delay",
            ),
            (
                "[webhooks.Ops]\nurl = \"http://x\"",
                "webhooks.Ops: a webhook's name is a lowercase letter, then up to 63 lowercase letters, digits and hyphens, as notify names it",
            ),
            (
                "[webhooks]\nops = 1",
                "webhooks.ops: expected a table with url",
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(webhooks(text).unwrap_err(), expected, "{text}");
        }
    }
}
