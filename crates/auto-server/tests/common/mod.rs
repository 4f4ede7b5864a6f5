//! Starts a real server on a loopback port with a fresh store, and talks to it over HTTP.

#![allow(
    dead_code,
    reason = "each test file uses a different part of the harness"
)]

pub mod failing_store;

use std::sync::Arc;

use auto_doc::Issue;
use auto_engine::definitions::{Checked, DefinitionChecker, DefinitionType};
use auto_server::auth::{KeyEntry, Keys};
use auto_server::{Handle, Options};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// A checker for the service's own tests, standing in for the type recall (which has no checker
/// of its own yet): accepts any source except lines starting with `bad`, each an issue at its
/// line. The real checkers have their own suites; this one lets
/// the definitions API be tested apart from any document format.
pub struct LineChecker;

impl DefinitionChecker for LineChecker {
    fn check(&self, source: &str) -> Result<Checked, Vec<Issue>> {
        let issues: Vec<Issue> = source
            .lines()
            .enumerate()
            .filter(|(_, line)| line.starts_with("bad"))
            .map(|(i, _)| Issue::at_line(i as u32 + 1, "/line", "This line is bad."))
            .collect();
        if issues.is_empty() {
            let description = source.lines().next().map(String::from);
            Ok(Checked {
                description,
                ..Checked::default()
            })
        } else {
            Err(issues)
        }
    }
}

/// The store the suites run on: an isolated PostgreSQL schema with `AUTO_TEST_STORE=postgres`,
/// else a SQLite file in `dir`.
pub async fn test_store(dir: &std::path::Path) -> Arc<dyn auto_store::Store> {
    match std::env::var("AUTO_TEST_STORE").as_deref() {
        Ok("postgres") => {
            let url = std::env::var("AUTO_TEST_POSTGRES")
                .expect("AUTO_TEST_POSTGRES for the postgres store");
            auto_store::open_postgres_isolated(&url)
                .await
                .expect("an isolated PostgreSQL store")
        }
        _ => {
            let url = format!("sqlite://{}", dir.join("auto.db").display());
            auto_store::open(&url).await.expect("a SQLite store")
        }
    }
}

/// A top-level run of version 1 of `def_type`/`name` started by `local`, as a test records it
/// straight in the store for what another server would have left.
pub fn recorded_run(run_id: &str, def_type: &str, name: &str, input: Value) -> auto_store::NewRun {
    auto_store::NewRun {
        run_id: run_id.into(),
        key: auto_store::DefinitionKey::new(def_type, name),
        definition_version: 1,
        input,
        started_by: "local".into(),
        parent_run_id: None,
        task_reference: None,
        depth: None,
        call_depth: None,
        trigger: None,
        parent_call_id: None,
        ending_work: None,
        root_run_id: None,
        open_calls_max: None,
    }
}

/// JSON text read without serde_json's limit of 128 levels, as a client reads what the server
/// keeps of values up to 512 levels deep.
pub fn deep_json(text: &str) -> serde_json::Result<Value> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = serde::Deserialize::deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

pub struct TestServer {
    pub handle: Option<Handle>,
    pub url: String,
    pub http: reqwest::Client,
    pub key: Option<String>,
    _dir: tempfile::TempDir,
}

pub struct Reply {
    pub status: StatusCode,
    pub content_type: String,
    pub body: Value,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with_keys(Vec::new()).await
    }

    pub async fn start_with_keys(keys: Vec<KeyEntry>) -> Self {
        Self::start_full(keys, auto_server::reasoning_runs::Models::none()).await
    }

    /// A server whose `auto.toml` is this text: its providers, gateways, models and limits.
    pub async fn start_with_config(config: &str) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = test_store(dir.path()).await;
        Self::start_with_config_on(store, config, dir).await
    }

    /// [`Self::start_with_config`] on a store the test also reads or writes, as another
    /// server on the same database would.
    pub async fn start_with_config_on(
        store: Arc<dyn auto_store::Store>,
        config: &str,
        dir: tempfile::TempDir,
    ) -> Self {
        let config = auto_server::config::Config::parse(config).expect("a configuration");
        let models = config.models().expect("the configuration's models");
        let limits = config
            .run_limits(|_| None)
            .expect("the configuration's limits");
        let http = config.http_limits().expect("the configuration's [http]");
        Self::start_configured(store, Vec::new(), models, limits, http, dir).await
    }

    pub async fn start_full(
        keys: Vec<KeyEntry>,
        models: auto_server::reasoning_runs::Models,
    ) -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = test_store(dir.path()).await;
        Self::start_on(store, keys, models, dir).await
    }

    /// A server on a store another server may share, as two servers share one database.
    pub async fn start_on(
        store: Arc<dyn auto_store::Store>,
        keys: Vec<KeyEntry>,
        models: auto_server::reasoning_runs::Models,
        dir: tempfile::TempDir,
    ) -> Self {
        Self::start_limited(store, keys, models, Default::default(), dir).await
    }

    /// [`Self::start_on`] with the deployment's limits on workflow runs.
    pub async fn start_limited(
        store: Arc<dyn auto_store::Store>,
        keys: Vec<KeyEntry>,
        models: auto_server::reasoning_runs::Models,
        limits: auto_server::config::RunLimits,
        dir: tempfile::TempDir,
    ) -> Self {
        Self::start_configured(store, keys, models, limits, Default::default(), dir).await
    }

    /// [`Self::start_limited`] with the `[http]` limits on connections and requests.
    pub async fn start_configured(
        store: Arc<dyn auto_store::Store>,
        keys: Vec<KeyEntry>,
        models: auto_server::reasoning_runs::Models,
        limits: auto_server::config::RunLimits,
        http: auto_server::config::HttpLimits,
        dir: tempfile::TempDir,
    ) -> Self {
        // Saved under the same longest run as the runs are, as `auto serve` does.
        let checkers = auto_server::server_checkers_with(limits.workflow_max_duration_ms)
            .with(DefinitionType::Recall, Arc::new(LineChecker));
        let handle = auto_server::start(Options {
            listen: "127.0.0.1:0".parse().expect("an address"),
            store,
            keys: Keys::new(keys),
            checkers,
            models,
            limits,
            http,
        })
        .await
        .expect("the server starts");
        let url = handle.url();
        Self {
            handle: Some(handle),
            url,
            http: reqwest::Client::new(),
            key: None,
            _dir: dir,
        }
    }

    pub fn with_key(&self, key: &str) -> Self {
        // Shares the running server; only the key differs.
        Self {
            handle: None,
            url: self.url.clone(),
            http: self.http.clone(),
            key: Some(key.into()),
            _dir: tempfile::tempdir().expect("a temporary directory"),
        }
    }

    pub async fn raw(
        &self,
        method: Method,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> Reply {
        let mut request = self
            .http
            .request(method, format!("{}{path}", self.url))
            .body(body);
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.expect("the server answers");
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned();
        let text = response.text().await.expect("a body");
        let body = deep_json(&text).unwrap_or(Value::String(text));
        Reply {
            status,
            content_type,
            body,
        }
    }

    pub async fn send(&self, method: Method, path: &str, body: Option<Value>) -> Reply {
        match body {
            Some(body) => {
                let bytes = serde_json::to_vec(&body).expect("JSON");
                self.raw(method, path, Some("application/json"), bytes)
                    .await
            }
            None => self.raw(method, path, None, Vec::new()).await,
        }
    }

    pub async fn get(&self, path: &str) -> Reply {
        self.send(Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send(Method::POST, path, Some(body)).await
    }

    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.send(Method::PUT, path, Some(body)).await
    }

    pub async fn delete(&self, path: &str) -> Reply {
        self.send(Method::DELETE, path, None).await
    }

    /// Creates the org `acme` and its playbook `main`; returns the playbook's path.
    pub async fn playbook(&self) -> String {
        assert_eq!(
            self.post("/v1/orgs", json!({"id": "acme"})).await.status,
            201
        );
        let reply = self
            .post(
                "/v1/orgs/acme/playbooks",
                json!({"id": "main", "title": "Main"}),
            )
            .await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        "/v1/orgs/acme/playbooks/main".into()
    }

    /// Reads the run until it has ended, within `within`; a read that fails (a store fault a
    /// test makes) is read again until then.
    pub async fn ended(&self, pb: &str, run_id: &str, within: std::time::Duration) -> Value {
        let deadline = std::time::Instant::now() + within;
        loop {
            let reply = self.get(&format!("{pb}/runs/{run_id}")).await;
            if reply.status == 200 && reply.body["status"] != "started" {
                return reply.body;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the run {run_id} did not end: {} {:#}",
                reply.status,
                reply.body
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Every event of the playbook, in order.
    pub async fn all_events(&self, pb: &str) -> Vec<Value> {
        let reply = self.get(&format!("{pb}/events?limit=1000")).await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
        reply.body["events"].as_array().expect("events").clone()
    }
}

impl Reply {
    /// Asserts a problem document with this status and reason.
    pub fn assert_problem(&self, status: u16, reason: &str) -> &Value {
        assert_eq!(self.status.as_u16(), status, "{:#}", self.body);
        assert_eq!(
            self.content_type, "application/problem+json",
            "{:#}",
            self.body
        );
        assert_eq!(self.body["status"], json!(status), "{:#}", self.body);
        assert_eq!(self.body["reason"], json!(reason), "{:#}", self.body);
        assert!(self.body["title"].as_str().is_some_and(|t| !t.is_empty()));
        assert!(
            self.body["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("https://on.auto/problems/"))
        );
        &self.body
    }

    /// The messages of a problem's issues.
    pub fn issue_messages(&self) -> Vec<String> {
        self.body["issues"]
            .as_array()
            .map(|issues| {
                issues
                    .iter()
                    .map(|i| i["message"].as_str().unwrap_or("").to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}
