//! `auto.toml`: the server's configuration (supplement §4). Every key is optional.
//!
//! The sections other crates read (providers, gateways and models for `auto-models`, tool
//! servers for `auto-tools`) and `[webhooks]` (for `webhooks.rs`) are kept as TOML tables here
//! and parsed by those crates and modules; unknown top-level keys are refused, so a typo
//! is reported at start rather than silently ignored.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub use auto_runtime::limits::{
    ENV_WORKFLOW_MAX_DURATION, ENV_WORKFLOW_MAX_OPEN_CALLS, RunLimits, SWEEP_MS_DEFAULT,
    SWEEP_MS_MIN, WORK_LEASE_MS_DEFAULT, WORK_LEASE_MS_MIN, WORKFLOW_MAX_OPEN_CALLS_DEFAULT,
    WORKFLOW_MAX_OPEN_CALLS_MAX,
};

pub use auto_runtime::lifecycle::{
    RETAIN_RUNS_DAYS_MAX, RETAIN_RUNS_DAYS_MIN, RETENTION_SWEEP_MS_MIN, Retention,
    check_retain_days,
};

use crate::auth::{KeyEntry, Role};

/// The address the server listens on unless told otherwise.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8040";
/// The store the server opens unless told otherwise: a SQLite file in the working directory.
pub const DEFAULT_DATABASE: &str = "sqlite://auto.db";

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub listen: Option<String>,
    pub database: Option<String>,
    #[serde(default)]
    pub providers: toml::Table,
    #[serde(default)]
    pub gateways: toml::Table,
    #[serde(default)]
    pub models: toml::Table,
    #[serde(default)]
    pub tool_servers: Vec<toml::Table>,
    #[serde(default)]
    pub keys: Vec<KeyConfig>,
    #[serde(default)]
    pub limits: toml::Table,
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    /// `[webhooks.NAME]`: where an interaction's `notify` posts its request.
    #[serde(default)]
    pub webhooks: toml::Table,
    /// `[http]`: the bounds a connection and a request are held to ([`HttpLimits`]).
    #[serde(default)]
    pub http: toml::Table,
    /// `[telemetry]`: where traces are exported ([`crate::traces::trace_export`]).
    #[serde(default)]
    pub telemetry: toml::Table,
    /// `[playbooks."org/pb"]`: what one playbook sets for itself (`retain_runs_days`).
    #[serde(default)]
    pub playbooks: toml::Table,
}

/// `[scheduler]`: how often the server sweeps its triggers and listening tasks, and, for
/// tests, a shift of the clock the schedules read.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchedulerConfig {
    /// Milliseconds between sweeps; 1,000 ("every second by default"), at least 10.
    pub sweep_ms: Option<u64>,
    /// Milliseconds added to the machine's clock when schedules read it, so a test can pass
    /// due times without waiting for them. 0 in a real deployment.
    pub clock_offset_ms: Option<i64>,
    /// Milliseconds between passes of the retention sweep; hourly by default, at least 10.
    pub retention_ms: Option<u64>,
    /// Milliseconds a server holds the work it claimed before another may take it: 30,000
    /// by default, at least 1,000.
    pub lease_ms: Option<u64>,
}

/// One `[[keys]]` entry: a caller, its org and role, and the SHA-256 of its key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyConfig {
    pub caller: String,
    pub org: String,
    pub role: Role,
    pub hash: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the configuration {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the configuration {path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
}

impl Config {
    /// Reads a configuration file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.into(),
            source,
        })?;
        Self::parse(&text).map_err(|message| ConfigError::Parse {
            path: path.into(),
            message,
        })
    }

    pub fn parse(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }

    /// The keys as the auth layer takes them, each hash checked.
    pub fn key_entries(&self) -> Result<Vec<KeyEntry>, ConfigError> {
        self.keys
            .iter()
            .map(|key| {
                KeyEntry::new(&key.caller, &key.org, key.role, &key.hash)
                    .map_err(ConfigError::Invalid)
            })
            .collect()
    }
}

impl Config {
    /// The providers, gateways, models and tool servers, with the secrets read from the
    /// environment or files, and `[limits] model_call_bound_ms`, which shortens the page's bound of a model
    /// call (it never lengthens it).
    pub fn models(&self) -> Result<crate::reasoning_runs::Models, ConfigError> {
        let providers =
            auto_models::Providers::from_config(&self.providers, &self.gateways, &self.models)
                .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        let mut models = crate::reasoning_runs::Models::none();
        models.providers = providers;
        models.catalog = auto_models::Catalog::from_config(&self.models)
            .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        models.tools = auto_tools::ToolServers::from_config(&self.tool_servers)
            .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        models.max_input_tokens = self.max_input_tokens(|var| std::env::var(var).ok())?;
        models.webhooks =
            crate::webhooks::Webhooks::from_config(&self.webhooks).map_err(ConfigError::Invalid)?;
        models.interaction_tool_bound = self.shorter_bound(LIMIT_INTERACTION_TOOL_BOUND_MS)?;
        models.call_bound = self.shorter_bound(LIMIT_MODEL_CALL_BOUND_MS)?;
        models.run_bound = self.shorter_bound(LIMIT_REASONING_RUN_BOUND_MS)?;
        for key in self.limits.keys() {
            if !LIMIT_KEYS.contains(&key.as_str()) {
                return Err(ConfigError::Invalid(format!(
                    "limits.{key} is not a limit this runtime reads; it reads {}",
                    LIMIT_KEYS.join(", ")
                )));
            }
        }
        Ok(models)
    }
}

impl Config {
    /// A `[limits]` key that shortens a bound of the pages, in milliseconds above 0.
    fn shorter_bound(&self, key: &str) -> Result<Option<std::time::Duration>, ConfigError> {
        let Some(value) = self.limits.get(key) else {
            return Ok(None);
        };
        let ms = value
            .as_integer()
            .and_then(|ms| u64::try_from(ms).ok())
            .filter(|ms| *ms > 0)
            .ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "limits.{key}: expected a whole number of milliseconds above 0"
                ))
            })?;
        Ok(Some(std::time::Duration::from_millis(ms)))
    }
}

impl Config {
    /// The limits on workflow runs: `[limits]`, then `env` (the process's environment in the
    /// server) over it.
    pub fn run_limits(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<RunLimits, ConfigError> {
        use auto_engine::workflow::{RUN_DURATION_MS_MAX, RUN_DURATION_MS_MIN, parse_iso};
        let mut limits = RunLimits::default();
        let text = |key: &str, var: &str| -> Option<(String, String)> {
            match env(var) {
                Some(value) => Some((var.to_owned(), value)),
                None => self.limits.get(key).map(|value| {
                    let value = match value {
                        toml::Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    (format!("limits.{key}"), value)
                }),
            }
        };
        if let Some((source, value)) = text("workflow_max_duration", ENV_WORKFLOW_MAX_DURATION) {
            limits.workflow_max_duration_ms = parse_iso(value.trim())
                .ok()
                .filter(|ms| (RUN_DURATION_MS_MIN..=RUN_DURATION_MS_MAX).contains(ms))
                .ok_or_else(|| {
                    ConfigError::Invalid(format!(
                        "{source}: expected an ISO 8601 duration from PT2H to P365D, such as P30D; got {value:?}"
                    ))
                })?;
        }
        if let Some((source, value)) = text("workflow_max_open_calls", ENV_WORKFLOW_MAX_OPEN_CALLS)
        {
            limits.workflow_max_open_calls = value
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| (1..=WORKFLOW_MAX_OPEN_CALLS_MAX).contains(n))
                .ok_or_else(|| {
                    ConfigError::Invalid(format!(
                        "{source}: expected a whole number from 1 to 9,999; got {value:?}"
                    ))
                })?;
        }
        if let Some(ms) = self.scheduler.sweep_ms {
            if ms < SWEEP_MS_MIN {
                return Err(ConfigError::Invalid(format!(
                    "scheduler.sweep_ms: expected at least {SWEEP_MS_MIN} milliseconds; got {ms}"
                )));
            }
            limits.sweep_ms = ms;
        }
        if let Some(ms) = self.scheduler.lease_ms {
            if ms < WORK_LEASE_MS_MIN {
                return Err(ConfigError::Invalid(format!(
                    "scheduler.lease_ms: expected at least {WORK_LEASE_MS_MIN} milliseconds; got {ms}"
                )));
            }
            limits.work_lease_ms = ms;
        }
        limits.clock_offset_ms = self.scheduler.clock_offset_ms.unwrap_or(0);
        Ok(limits)
    }
}

impl Config {
    /// How long ended runs are kept: `[limits] retain_runs_days` for every playbook, and
    /// `[playbooks."org/pb"] retain_runs_days` for one, each from 1 to 36,500 days; with
    /// `[scheduler] retention_ms`, the interval of the sweep.
    pub fn retention(&self) -> Result<Retention, ConfigError> {
        let days = |source: String, value: &toml::Value| {
            let number = value.as_integer().ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "{source}: expected a whole number of days; got {value}"
                ))
            })?;
            check_retain_days(&source, number).map_err(ConfigError::Invalid)
        };
        let mut retention = Retention::default();
        if let Some(value) = self.limits.get(LIMIT_RETAIN_RUNS_DAYS) {
            retention.default_days = Some(days(format!("limits.{LIMIT_RETAIN_RUNS_DAYS}"), value)?);
        }
        for (name, table) in &self.playbooks {
            let invalid = |message: String| ConfigError::Invalid(message);
            let pb = name
                .split_once('/')
                .filter(|(org, pb)| {
                    auto_runtime::service::check_id("an org", org).is_ok()
                        && auto_runtime::service::check_id("a playbook", pb).is_ok()
                })
                .map(|(org, pb)| auto_store::PlaybookRef::new(org, pb))
                .ok_or_else(|| {
                    invalid(format!(
                        "playbooks.{name:?}: name a playbook as \"org/playbook\", such as [playbooks.\"acme/main\"]"
                    ))
                })?;
            let table = table
                .as_table()
                .ok_or_else(|| invalid(format!("playbooks.{name:?}: expected a table")))?;
            for (key, value) in table {
                if key != "retain_runs_days" {
                    return Err(invalid(format!(
                        "playbooks.{name:?}.{key} is not a setting of a playbook; it takes retain_runs_days"
                    )));
                }
                let kept = days(format!("playbooks.{name:?}.retain_runs_days"), value)?;
                retention.playbooks.insert(pb.clone(), kept);
            }
        }
        if let Some(ms) = self.scheduler.retention_ms {
            if ms < RETENTION_SWEEP_MS_MIN {
                return Err(ConfigError::Invalid(format!(
                    "scheduler.retention_ms: expected at least {RETENTION_SWEEP_MS_MIN} milliseconds; got {ms}"
                )));
            }
            retention.sweep_ms = ms;
        }
        Ok(retention)
    }
}

/// The environment variable of the input tokens a reasoning run may use.
pub const ENV_REASONING_MAX_INPUT_TOKENS: &str = "REASONING_MAX_INPUT_TOKENS";

impl Config {
    /// `REASONING_MAX_INPUT_TOKENS` over `[limits] reasoning_max_input_tokens`, 2,000,000
    /// when neither is set; a whole number above 0.
    pub fn max_input_tokens(
        &self,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<u64, ConfigError> {
        let (source, text) = match env(ENV_REASONING_MAX_INPUT_TOKENS) {
            Some(value) => (ENV_REASONING_MAX_INPUT_TOKENS.to_owned(), value),
            None => match self.limits.get("reasoning_max_input_tokens") {
                Some(value) => (
                    "limits.reasoning_max_input_tokens".to_owned(),
                    value.to_string(),
                ),
                None => {
                    return Ok(crate::reasoning_room::REASONING_MAX_INPUT_TOKENS_DEFAULT);
                }
            },
        };
        text.trim()
            .parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "{source}: expected a whole number of tokens above 0; got {text:?}"
                ))
            })
    }
}

/// `[limits]` key that shortens the bound of every model call.
pub const LIMIT_MODEL_CALL_BOUND_MS: &str = "model_call_bound_ms";
/// `[limits]` key that shortens the 70 seconds of a tool interaction (for tests and small
/// deployments; it never lengthens them).
pub const LIMIT_INTERACTION_TOOL_BOUND_MS: &str = "interaction_tool_bound_ms";
/// `[limits]` key that shortens the bound of a whole tool-calling reasoning run (for tests and
/// small deployments; it never lengthens it).
pub const LIMIT_REASONING_RUN_BOUND_MS: &str = "reasoning_run_bound_ms";
/// `[limits]` key of the days ended runs are kept; without it, forever.
pub const LIMIT_RETAIN_RUNS_DAYS: &str = "retain_runs_days";
/// The `[limits]` keys the server reads.
pub const LIMIT_KEYS: &[&str] = &[
    LIMIT_RETAIN_RUNS_DAYS,
    "reasoning_max_input_tokens",
    "workflow_max_duration",
    "workflow_max_open_calls",
    LIMIT_MODEL_CALL_BOUND_MS,
    LIMIT_INTERACTION_TOOL_BOUND_MS,
    LIMIT_REASONING_RUN_BOUND_MS,
];

/// Checks that a server with no keys listens on loopback only: without keys every request is
/// the caller `local`, an admin of every org, which only the machine itself may be.
pub fn check_listen(listen: SocketAddr, keys_configured: bool) -> Result<(), ConfigError> {
    if keys_configured || listen.ip().is_loopback() {
        return Ok(());
    }
    Err(ConfigError::Invalid(format!(
        "refusing to listen on {listen}: no [[keys]] are configured, so every request would act \
         as an admin of every org; listen on a loopback address (such as {DEFAULT_LISTEN}) or \
         configure keys (`auto key new` prints one)"
    )))
}

/// `[http]`: what a client is allowed before the server answers or closes, so that slow or
/// oversized requests cannot hold a public server's connections or memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpLimits {
    /// `header_timeout`: how long a client may take to send a request's line and headers,
    /// counted from its first byte on a new connection (which must come within it of the
    /// connection opening) and from the previous answer on a kept-alive one; so also how long
    /// an idle connection is kept open.
    pub header_timeout: Duration,
    /// `body_timeout`: how long a client may take to send a request's body, counted from its
    /// headers; past it the request is answered 408.
    pub body_timeout: Duration,
    /// `connections_max`: the connections served at once; one more is answered 503 and closed.
    pub connections_max: usize,
    /// `header_bytes_max`: the request line and headers together; more is answered 431.
    pub header_bytes_max: usize,
    /// `uri_bytes_max`: the request's target (path and query); longer is answered 414.
    pub uri_bytes_max: usize,
}

/// 30 seconds to send a request's head, and to keep an idle connection.
pub const HEADER_TIMEOUT_MS_DEFAULT: u64 = 30_000;
/// 60 seconds to send a request's body: 2 MiB at 35 KB/s.
pub const BODY_TIMEOUT_MS_DEFAULT: u64 = 60_000;
/// 512 connections at once, below the usual 1,024 open files of a process with its store's.
pub const CONNECTIONS_MAX_DEFAULT: usize = 512;
/// 64 KiB of request line and headers.
pub const HEADER_BYTES_MAX_DEFAULT: usize = 64 * 1024;
/// 8 KiB of request target, as the common proxies allow.
pub const URI_BYTES_MAX_DEFAULT: usize = 8 * 1024;
/// The least `header_bytes_max` takes: hyper reads a head in a buffer of at least 8 KiB.
pub const HEADER_BYTES_MAX_MIN: usize = 8 * 1024;
/// The `[http]` keys the server reads.
pub const HTTP_KEYS: &[&str] = &[
    "header_timeout",
    "body_timeout",
    "connections_max",
    "header_bytes_max",
    "uri_bytes_max",
];

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_millis(HEADER_TIMEOUT_MS_DEFAULT),
            body_timeout: Duration::from_millis(BODY_TIMEOUT_MS_DEFAULT),
            connections_max: CONNECTIONS_MAX_DEFAULT,
            header_bytes_max: HEADER_BYTES_MAX_DEFAULT,
            uri_bytes_max: URI_BYTES_MAX_DEFAULT,
        }
    }
}

impl Config {
    /// `[http]`, each key checked; the defaults for those left out.
    /// `[telemetry]`: where the server's traces go, when anywhere.
    pub fn trace_export(&self) -> Result<Option<crate::traces::TraceExport>, ConfigError> {
        crate::traces::trace_export(&self.telemetry).map_err(ConfigError::Invalid)
    }

    pub fn http_limits(&self) -> Result<HttpLimits, ConfigError> {
        if let Some(key) = self.http.keys().find(|k| !HTTP_KEYS.contains(&k.as_str())) {
            return Err(ConfigError::Invalid(format!(
                "http.{key} is not a setting this runtime reads; it reads {}",
                HTTP_KEYS.join(", ")
            )));
        }
        let mut limits = HttpLimits::default();
        let duration = |key: &str| -> Result<Option<Duration>, ConfigError> {
            let Some(value) = self.http.get(key) else {
                return Ok(None);
            };
            value
                .as_str()
                .and_then(auto_tools::config::parse_duration)
                .map(Some)
                .ok_or_else(|| {
                    ConfigError::Invalid(format!(
                        "http.{key}: expected a duration above zero such as \"30s\", \"500ms\" or \"2m\"; got {value}"
                    ))
                })
        };
        let count = |key: &str, least: usize| -> Result<Option<usize>, ConfigError> {
            let Some(value) = self.http.get(key) else {
                return Ok(None);
            };
            value
                .as_integer()
                .and_then(|n| usize::try_from(n).ok())
                .filter(|n| *n >= least)
                .map(Some)
                .ok_or_else(|| {
                    ConfigError::Invalid(format!(
                        "http.{key}: expected a whole number of at least {least}; got {value}"
                    ))
                })
        };
        if let Some(timeout) = duration("header_timeout")? {
            limits.header_timeout = timeout;
        }
        if let Some(timeout) = duration("body_timeout")? {
            limits.body_timeout = timeout;
        }
        if let Some(max) = count("connections_max", 1)? {
            limits.connections_max = max;
        }
        if let Some(max) = count("header_bytes_max", HEADER_BYTES_MAX_MIN)? {
            limits.header_bytes_max = max;
        }
        if let Some(max) = count("uri_bytes_max", 1)? {
            limits.uri_bytes_max = max;
        }
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(toml: &str, vars: &[(&str, &str)]) -> Result<RunLimits, String> {
        let config = Config::parse(toml).unwrap();
        config
            .run_limits(|var| {
                vars.iter()
                    .find(|(name, _)| *name == var)
                    .map(|(_, value)| (*value).to_owned())
            })
            .map_err(|e| e.to_string())
    }

    #[test]
    fn run_limits_take_the_file_then_the_environment_within_their_bounds() {
        assert_eq!(limits("", &[]), Ok(RunLimits::default()));
        let hours = |h: u64| h * 3_600_000;
        // At the edges: 2 hours and 365 days, 1 and 9,999 calls.
        let set = limits(
            "[limits]\nworkflow_max_duration = \"PT2H\"\nworkflow_max_open_calls = 1",
            &[],
        )
        .unwrap();
        assert_eq!(set.workflow_max_duration_ms, hours(2));
        assert_eq!(set.workflow_max_open_calls, 1);
        let set = limits(
            "[limits]\nworkflow_max_duration = \"PT2H\"",
            &[
                ("WORKFLOW_MAX_DURATION", "P365D"),
                ("WORKFLOW_MAX_OPEN_CALLS", "9999"),
            ],
        )
        .unwrap();
        assert_eq!(set.workflow_max_duration_ms, hours(24 * 365));
        assert_eq!(set.workflow_max_open_calls, 9_999);
        // One past each edge is refused, naming where the value came from.
        assert_eq!(
            limits("[limits]\nworkflow_max_duration = \"PT1H59M59S\"", &[]).unwrap_err(),
            "limits.workflow_max_duration: expected an ISO 8601 duration from PT2H to P365D, such as P30D; got \"PT1H59M59S\""
        );
        assert_eq!(
            limits("", &[("WORKFLOW_MAX_DURATION", "P365DT1S")]).unwrap_err(),
            "WORKFLOW_MAX_DURATION: expected an ISO 8601 duration from PT2H to P365D, such as P30D; got \"P365DT1S\""
        );
        assert_eq!(
            limits("", &[("WORKFLOW_MAX_OPEN_CALLS", "10000")]).unwrap_err(),
            "WORKFLOW_MAX_OPEN_CALLS: expected a whole number from 1 to 9,999; got \"10000\""
        );
        assert_eq!(
            limits("[limits]\nworkflow_max_open_calls = 0", &[]).unwrap_err(),
            "limits.workflow_max_open_calls: expected a whole number from 1 to 9,999; got \"0\""
        );
    }

    /// The samples of the README and of the configuration guide, each its first `toml` block:
    /// what they show is read, and within its bounds.
    #[test]
    fn the_documented_samples_are_configurations() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for page in ["README.md", "docs/configuration.md"] {
            let text = std::fs::read_to_string(root.join(page)).expect("the page");
            let sample = text
                .split("```toml\n")
                .nth(1)
                .and_then(|rest| rest.split("```").next())
                .expect("a toml block");
            let config = Config::parse(sample).unwrap_or_else(|e| panic!("{page}: {e}"));
            let limits = config.run_limits(|_| None).expect("its limits");
            assert_eq!(limits.work_lease_ms, WORK_LEASE_MS_DEFAULT, "{page}");
            assert_eq!(limits.sweep_ms, SWEEP_MS_DEFAULT, "{page}");
            config.http_limits().expect("its [http]");
            config.retention().expect("its retention");
        }
    }

    /// `[scheduler] sweep_ms` and `lease_ms` at their shortest are taken; one less is refused.
    #[test]
    fn the_schedulers_intervals_are_taken_from_their_shortest() {
        let set = limits(
            &format!("[scheduler]\nsweep_ms = {SWEEP_MS_MIN}\nlease_ms = {WORK_LEASE_MS_MIN}"),
            &[],
        )
        .unwrap();
        assert_eq!((set.sweep_ms, set.work_lease_ms), (10, 1_000));
        assert_eq!(
            limits("", &[]).unwrap().work_lease_ms,
            WORK_LEASE_MS_DEFAULT
        );
        assert_eq!(
            limits("[scheduler]\nsweep_ms = 9", &[]).unwrap_err(),
            "scheduler.sweep_ms: expected at least 10 milliseconds; got 9"
        );
        assert_eq!(
            limits("[scheduler]\nlease_ms = 999", &[]).unwrap_err(),
            "scheduler.lease_ms: expected at least 1000 milliseconds; got 999"
        );
    }

    /// `REASONING_MAX_INPUT_TOKENS`, 2,000,000 by default; the environment over the file; a
    /// whole number above 0 (1 accepted, 0 refused).
    #[test]
    fn the_input_token_budget_takes_the_file_then_the_environment() {
        let config = Config::parse("").unwrap();
        assert_eq!(config.max_input_tokens(|_| None).unwrap(), 2_000_000);
        let config = Config::parse("[limits]\nreasoning_max_input_tokens = 1").unwrap();
        assert_eq!(config.max_input_tokens(|_| None).unwrap(), 1);
        assert_eq!(
            config.max_input_tokens(|_| Some("500000".into())).unwrap(),
            500_000
        );
        let config = Config::parse("[limits]\nreasoning_max_input_tokens = 0").unwrap();
        assert_eq!(
            config.max_input_tokens(|_| None).unwrap_err().to_string(),
            "limits.reasoning_max_input_tokens: expected a whole number of tokens above 0; got \"0\""
        );
    }

    /// `[limits] retain_runs_days` and a playbook's own, each from 1 to 36,500 days, and the
    /// sweep's interval; a key a playbook does not take, or a name that is not "org/pb", is
    /// refused.
    #[test]
    fn retention_takes_a_default_and_playbooks_within_bounds() {
        let retention = |toml: &str| Config::parse(toml).unwrap().retention();
        let none = retention("").unwrap();
        assert_eq!(none, Retention::default());
        let set = retention(
            "[limits]\nretain_runs_days = 36500\n[playbooks.\"acme/main\"]\nretain_runs_days = 1\n[scheduler]\nretention_ms = 10",
        )
        .unwrap();
        assert_eq!(set.default_days, Some(RETAIN_RUNS_DAYS_MAX));
        let main = auto_store::PlaybookRef::new("acme", "main");
        assert_eq!(set.days_for(&main), Some(RETAIN_RUNS_DAYS_MIN));
        assert_eq!(set.sweep_ms, 10);
        assert_eq!(
            retention("[limits]\nretain_runs_days = 0")
                .unwrap_err()
                .to_string(),
            "limits.retain_runs_days: expected a whole number of days from 1 to 36500; got 0 (leave it out to keep ended runs forever)"
        );
        assert!(retention("[limits]\nretain_runs_days = 36501").is_err());
        assert!(retention("[limits]\nretain_runs_days = \"P30D\"").is_err());
        assert!(
            retention("[playbooks.\"acme/main\"]\nretain_runs_days = 0")
                .unwrap_err()
                .to_string()
                .starts_with("playbooks.\"acme/main\".retain_runs_days: expected")
        );
        assert!(
            retention("[playbooks.main]\nretain_runs_days = 3")
                .unwrap_err()
                .to_string()
                .contains("name a playbook as \"org/playbook\"")
        );
        assert!(
            retention("[playbooks.\"acme/main\"]\nkeep = 3")
                .unwrap_err()
                .to_string()
                .contains("is not a setting of a playbook")
        );
        assert!(retention("[scheduler]\nretention_ms = 9").is_err());
    }

    /// `[webhooks]` is read into the models, and `[limits] interaction_tool_bound_ms` shortens
    /// the 70 seconds of a tool interaction without ever lengthening them.
    #[test]
    fn webhooks_and_the_tool_interaction_bound_are_read() {
        let config = Config::parse(
            "[webhooks.ops]\nurl = \"http://127.0.0.1:9/hook\"\n[limits]\ninteraction_tool_bound_ms = 500",
        )
        .unwrap();
        let models = config.models().unwrap();
        assert_eq!(models.webhooks.names(), ["ops"]);
        assert_eq!(
            models.interaction_tool_bound(),
            std::time::Duration::from_millis(500)
        );
        let longer = Config::parse("[limits]\ninteraction_tool_bound_ms = 70001").unwrap();
        assert_eq!(
            longer.models().unwrap().interaction_tool_bound(),
            std::time::Duration::from_secs(70)
        );
        let zero = Config::parse("[limits]\ninteraction_tool_bound_ms = 0").unwrap();
        assert_eq!(
            zero.models().unwrap_err().to_string(),
            "limits.interaction_tool_bound_ms: expected a whole number of milliseconds above 0"
        );
        let bad = Config::parse("[webhooks.ops]\nurl = \"mailto:x\"").unwrap();
        assert_eq!(
            bad.models().unwrap_err().to_string(),
            "webhooks.ops.url: expected an http or https URL, such as https://hooks.example.com/auto"
        );
    }

    #[test]
    fn an_empty_file_is_a_configuration() {
        let config = Config::parse("").unwrap();
        assert!(config.listen.is_none());
        assert!(config.keys.is_empty());
    }

    #[test]
    fn the_supplement_example_parses() {
        let text = r#"
listen = "127.0.0.1:8040"
database = "sqlite://auto.db"

[providers.anthropic]
api_key = { env = "ANTHROPIC_API_KEY" }
base_url = "https://api.anthropic.com"

[gateways.my-gateway]
base_url = "http://127.0.0.1:4000/v1"
api_key = { env = "MY_GATEWAY_KEY" }
allowed_provider_options = ["user"]
cost_header = "x-response-cost"

[models]
allowed = ["anthropic/*", "openai/gpt-5*", "my-gateway/*"]
aliases = { "anthropic/claude-sonnet-4-5" = "bedrock-anthropic/anthropic.claude-sonnet-4-5" }
catalog = "models.toml"

[[tool_servers]]
name = "graph"
url = "http://127.0.0.1:9000/mcp"
orgs = ["acme"]
allowed = ["search", "query"]
record_content = true
request_id = "meta.requestId"
timeout = "30s"
headers = { Authorization = { env = "GRAPH_TOKEN" } }

[[keys]]
caller = "ci-bot"
org = "acme"
role = "runner"
hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"

[limits]
reasoning_max_input_tokens = 2000000
workflow_max_duration = "P30D"
workflow_max_open_calls = 1000
"#;
        let config = Config::parse(text).unwrap();
        assert_eq!(config.keys.len(), 1);
        assert_eq!(config.key_entries().unwrap().len(), 1);
    }

    #[test]
    fn unknown_keys_are_refused() {
        let err = Config::parse("lissten = \"x\"").unwrap_err();
        assert!(err.contains("unknown field `lissten`"), "{err}");
    }

    #[test]
    fn no_keys_means_loopback_only() {
        assert!(check_listen("127.0.0.1:8040".parse().unwrap(), false).is_ok());
        assert!(check_listen("[::1]:8040".parse().unwrap(), false).is_ok());
        assert!(check_listen("0.0.0.0:8040".parse().unwrap(), false).is_err());
        assert!(check_listen("0.0.0.0:8040".parse().unwrap(), true).is_ok());
    }

    #[test]
    fn http_limits_take_durations_and_counts_within_their_bounds() {
        let http = |text: &str| {
            Config::parse(text)
                .unwrap()
                .http_limits()
                .map_err(|e| e.to_string())
        };
        assert_eq!(http(""), Ok(HttpLimits::default()));
        let set = http(
            "[http]\nheader_timeout = \"5s\"\nbody_timeout = \"2m\"\nconnections_max = 1\nheader_bytes_max = 8192\nuri_bytes_max = 1",
        )
        .unwrap();
        assert_eq!(set.header_timeout, Duration::from_secs(5));
        assert_eq!(set.body_timeout, Duration::from_secs(120));
        assert_eq!(
            (set.connections_max, set.header_bytes_max, set.uri_bytes_max),
            (1, 8192, 1)
        );
        assert_eq!(
            http("[http]\nheader_bytes_max = 8191"),
            Err("http.header_bytes_max: expected a whole number of at least 8192; got 8191".into())
        );
        assert_eq!(
            http("[http]\nconnections_max = 0"),
            Err("http.connections_max: expected a whole number of at least 1; got 0".into())
        );
        assert_eq!(
            http("[http]\nbody_timeout = \"0s\""),
            Err("http.body_timeout: expected a duration above zero such as \"30s\", \"500ms\" or \"2m\"; got \"0s\"".into())
        );
        assert_eq!(
            http("[http]\nidle_timeout = \"5s\""),
            Err("http.idle_timeout is not a setting this runtime reads; it reads header_timeout, body_timeout, connections_max, header_bytes_max, uri_bytes_max".into())
        );
    }
}
