//! `[webhooks.NAME]` of `auto.toml` and the delivery of one request to one of them (supplement
//! §7: "Where `notify` names a webhook the operator configured, the request is posted there").
//!
//! A webhook is a URL (http or https), headers whose values are secrets read from the
//! environment or a file as every secret of the configuration is, a `timeout` for one delivery
//! and a `retry_delay` before the second attempt (the third waits twice as long). This module
//! knows how to post once; the retries are work in the store (`interaction_delivery`), so a
//! restart neither loses nor repeats a delivery beyond at-least-once, which the
//! `Idempotency-Key` header lets the receiver fold.
//!
//! With a `secret`, each delivery is signed as the Standard Webhooks scheme says
//! (<https://www.standardwebhooks.com>): `webhook-id` (the request id, the same on every
//! attempt), `webhook-timestamp` (whole seconds) and `webhook-signature`, `v1,` and the base64
//! of an HMAC-SHA256 over `id.timestamp.body` keyed with the secret's bytes, so a receiver's
//! own library of the scheme can check it. The signing is a few lines over the `hmac` crate:
//! the scheme's libraries for Rust are receivers' crates and would pull a second HTTP stack.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use auto_tools::config::{Secret, parse_duration, read_secret};
use base64::Engine as _;
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

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
/// The Standard Webhooks header of the message id: the request id, so it stays the same on
/// every attempt of one delivery.
pub const WEBHOOK_ID_HEADER: &str = "webhook-id";
/// The Standard Webhooks header of the moment of the attempt, in whole seconds since the epoch.
pub const WEBHOOK_TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// The Standard Webhooks header of the signature: `v1,` and the base64 of the HMAC-SHA256.
pub const WEBHOOK_SIGNATURE_HEADER: &str = "webhook-signature";
/// How a webhook's `secret` begins, as the scheme writes its secrets: `whsec_`, then base64.
pub const WEBHOOK_SECRET_PREFIX: &str = "whsec_";
/// The fewest bytes a secret decodes to ("The secret key should be between 24 bytes (192 bits)
/// and 64 bytes (512 bits)", the Standard Webhooks specification).
pub const WEBHOOK_SECRET_BYTES_MIN: usize = 24;
/// The most bytes a secret decodes to (the same sentence of the specification).
pub const WEBHOOK_SECRET_BYTES_MAX: usize = 64;

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
    /// The key that signs each delivery, when the operator gave a `secret`.
    pub signing: Option<SigningKey>,
}

/// The bytes of a webhook's `secret`, decoded from `whsec_` + base64; never printed.
#[derive(Clone)]
pub struct SigningKey {
    bytes: Vec<u8>,
    /// The secret as written, scrubbed from anything the webhook answers.
    written: String,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SigningKey(..)")
    }
}

impl SigningKey {
    /// Reads a secret written as the scheme writes them: `whsec_`, then the base64 (padded or
    /// not) of 24 to 64 bytes.
    pub fn from_whsec(written: &str) -> Result<Self, String> {
        let encoded = written.strip_prefix(WEBHOOK_SECRET_PREFIX).ok_or_else(|| {
            format!("expected whsec_ followed by the base64 of {WEBHOOK_SECRET_BYTES_MIN} to {WEBHOOK_SECRET_BYTES_MAX} random bytes, as Standard Webhooks writes secrets; {MAKE_A_SECRET}")
        })?;
        let bytes = SECRET_BASE64
            .decode(encoded)
            .map_err(|_| format!("the part after whsec_ is not base64; {MAKE_A_SECRET}"))?;
        if !(WEBHOOK_SECRET_BYTES_MIN..=WEBHOOK_SECRET_BYTES_MAX).contains(&bytes.len()) {
            return Err(format!(
                "the secret decodes to {} bytes; Standard Webhooks takes {WEBHOOK_SECRET_BYTES_MIN} to {WEBHOOK_SECRET_BYTES_MAX}: {MAKE_A_SECRET}",
                bytes.len()
            ));
        }
        Ok(Self {
            bytes,
            written: written.to_owned(),
        })
    }

    /// `v1,` and the base64 of the HMAC-SHA256 of `{id}.{timestamp}.{body}`.
    pub fn signature(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        // Invariant: HMAC takes a key of any length, so this cannot fail.
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.bytes).expect("HMAC takes any key");
        mac.update(format!("{id}.{timestamp}.").as_bytes());
        mac.update(body);
        let digest = mac.finalize().into_bytes();
        format!(
            "v1,{}",
            base64::engine::general_purpose::STANDARD.encode(digest)
        )
    }
}

/// The end of every refusal of a secret: how to make a good one.
const MAKE_A_SECRET: &str = "make one with: echo \"whsec_$(openssl rand -base64 32)\"";

/// Standard base64 that takes the secret with or without its padding, as the scheme's own
/// libraries do.
const SECRET_BASE64: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    base64::engine::GeneralPurposeConfig::new()
        .with_decode_padding_mode(base64::engine::DecodePaddingMode::Indifferent),
);

const KEYS: [&str; 5] = ["url", "headers", "secret", "timeout", "retry_delay"];

/// The headers a delivery sets itself, which `headers` may not name.
const OWN_HEADERS: [&str; 4] = [
    IDEMPOTENCY_HEADER,
    WEBHOOK_ID_HEADER,
    WEBHOOK_TIMESTAMP_HEADER,
    WEBHOOK_SIGNATURE_HEADER,
];

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
            if OWN_HEADERS
                .iter()
                .any(|own| own.eq_ignore_ascii_case(header))
            {
                return Err(format!(
                    "headers.{header}: every delivery sets this header itself; give the signing key as `secret` instead"
                ));
            }
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
    let signing = match entry.get("secret") {
        None => None,
        Some(value) => {
            let secret = read_secret("secret", value)?;
            Some(SigningKey::from_whsec(&secret.value).map_err(|why| format!("secret: {why}"))?)
        }
    };
    Ok(Webhook {
        name: name.to_owned(),
        url: url.to_owned(),
        headers,
        timeout,
        retry_delay: duration("retry_delay", WEBHOOK_RETRY_DELAY_MS_DEFAULT)?,
        signing,
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

    /// Posts `body` once, with the request id as the idempotency key, within `timeout`; signed
    /// at `timestamp` (seconds since the epoch) when the webhook has a `secret`.
    pub async fn post(
        &self,
        client: &reqwest::Client,
        body: &Value,
        request_id: &str,
        timestamp: i64,
    ) -> Attempt {
        let started = Instant::now();
        // The exact bytes are signed and sent: a body serialized twice might differ.
        let bytes = serde_json::to_vec(body).unwrap_or_default();
        let mut request = client
            .post(&self.url)
            .timeout(self.timeout)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(IDEMPOTENCY_HEADER, request_id);
        if let Some(key) = &self.signing {
            request = request
                .header(WEBHOOK_ID_HEADER, request_id)
                .header(WEBHOOK_TIMESTAMP_HEADER, timestamp)
                .header(
                    WEBHOOK_SIGNATURE_HEADER,
                    key.signature(request_id, timestamp, &bytes),
                );
        }
        for (name, secret) in &self.headers {
            request = request.header(name.as_str(), secret.value.as_str());
        }
        let request = request.body(bytes);
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
        let secrets: Vec<&str> = (self.headers.iter().map(|(_, s)| s.value.as_str()))
            .chain(self.signing.iter().map(|key| key.written.as_str()))
            .collect();
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
                "[webhooks.ops]\nurl = \"http://x\"\nsigning = 1",
                "webhooks.ops.signing is not a setting of a webhook; the settings are url, headers, secret, timeout, retry_delay",
            ),
            (
                "[webhooks.ops]\nurl = \"http://x\"\nsecret = \"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\"",
                "webhooks.ops.secret must be read from the environment or a file: write { env = \"NAME\" } or { file = \"PATH\" }",
            ),
            (
                "[webhooks.ops]\nurl = \"http://x\"\nheaders = { webhook-signature = { env = \"HOME\" } }",
                "webhooks.ops.headers.webhook-signature: every delivery sets this header itself; give the signing key as `secret` instead",
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

    /// The example of the Standard Webhooks specification's libraries (its secret, id,
    /// timestamp, body and signature), which the PyPI `standardwebhooks` package gives too.
    #[test]
    fn a_signature_matches_the_schemes_known_vector() {
        let key = SigningKey::from_whsec("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            key.signature("msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        // Another id, timestamp or body gives another signature.
        assert_ne!(
            key.signature("msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_331, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        assert_ne!(
            key.signature("msg_p5jXN8AQM9LWM0D4loKWxJek", 1_614_265_330, b"{}"),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
        assert!(!format!("{key:?}").contains("MfKQ"));
    }

    fn whsec(bytes: usize) -> String {
        let engine = base64::engine::general_purpose::STANDARD;
        format!("{WEBHOOK_SECRET_PREFIX}{}", engine.encode(vec![7u8; bytes]))
    }

    #[test]
    fn a_secret_is_whsec_and_base64_of_24_to_64_bytes() {
        for bytes in [WEBHOOK_SECRET_BYTES_MIN, WEBHOOK_SECRET_BYTES_MAX] {
            assert_eq!(
                SigningKey::from_whsec(&whsec(bytes)).unwrap().bytes.len(),
                bytes
            );
        }
        // With or without its padding, a secret is the same key.
        let padded = whsec(25);
        assert!(padded.ends_with("=="));
        let unpadded = SigningKey::from_whsec(padded.trim_end_matches('=')).unwrap();
        assert_eq!(unpadded.bytes, vec![7u8; 25]);
        let make = "make one with: echo \"whsec_$(openssl rand -base64 32)\"";
        assert_eq!(
            SigningKey::from_whsec(&whsec(WEBHOOK_SECRET_BYTES_MIN - 1)).unwrap_err(),
            format!("the secret decodes to 23 bytes; Standard Webhooks takes 24 to 64: {make}")
        );
        assert_eq!(
            SigningKey::from_whsec(&whsec(WEBHOOK_SECRET_BYTES_MAX + 1)).unwrap_err(),
            format!("the secret decodes to 65 bytes; Standard Webhooks takes 24 to 64: {make}")
        );
        assert_eq!(
            SigningKey::from_whsec("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap_err(),
            format!(
                "expected whsec_ followed by the base64 of 24 to 64 random bytes, as Standard Webhooks writes secrets; {make}"
            )
        );
        assert_eq!(
            SigningKey::from_whsec("whsec_not base64!").unwrap_err(),
            format!("the part after whsec_ is not base64; {make}")
        );
    }

    #[test]
    fn a_secret_is_read_from_a_file_and_refused_at_load_with_the_setting_named() {
        let dir = std::env::temp_dir().join(format!("auto-webhook-secret-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good");
        std::fs::write(&good, format!("{}\n", whsec(32))).unwrap();
        let short = dir.join("short");
        std::fs::write(&short, whsec(16)).unwrap();
        let config = |path: &std::path::Path| {
            format!(
                "[webhooks.ops]\nurl = \"http://x\"\nsecret = {{ file = {:?} }}\n",
                path.display().to_string()
            )
        };
        let hooks = webhooks(&config(&good)).unwrap();
        let ops = hooks.get("ops").unwrap();
        assert_eq!(ops.signing.as_ref().unwrap().bytes, vec![7u8; 32]);
        assert!(
            webhooks("[webhooks.ops]\nurl = \"http://x\"\n")
                .unwrap()
                .get("ops")
                .unwrap()
                .signing
                .is_none()
        );
        assert_eq!(
            webhooks(&config(&short)).unwrap_err(),
            "webhooks.ops.secret: the secret decodes to 16 bytes; Standard Webhooks takes 24 to 64: make one with: echo \"whsec_$(openssl rand -base64 32)\""
        );
        assert_eq!(
            webhooks("[webhooks.ops]\nurl = \"http://x\"\nsecret = { env = \"AUTO_TEST_NO_SUCH_VARIABLE\" }").unwrap_err(),
            "webhooks.ops.secret: the environment variable AUTO_TEST_NO_SUCH_VARIABLE is not set"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
