//! Starts a real server in this process on a loopback port with a fresh store, on SQLite or on
//! PostgreSQL (`AUTO_TEST_STORE`); the test talks to it through the shared
//! [`auto_testkit::harness`].

#![allow(
    dead_code,
    unused_imports,
    reason = "each test file uses a different part of the harness"
)]

pub mod failing_store;

use std::sync::Arc;

use auto_doc::Issue;
use auto_engine::definitions::{Checked, DefinitionChecker, DefinitionType};
use auto_server::auth::{KeyEntry, Keys};
use auto_server::{Handle, Options};
pub use auto_testkit::harness::{Client, Reply, deep_json, wait_for};
use serde_json::Value;

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

/// The document header of the suites' workflows, before a body a test builds.
pub const WORKFLOW_HEADER: &str =
    "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: flow\n  version: 1.0.0\n";

/// A workflow with this body (`do:` and what follows) under [`WORKFLOW_HEADER`].
pub fn workflow(body: &str) -> String {
    format!("{WORKFLOW_HEADER}{body}")
}

/// The reasoning page's example ("A function document").
pub const BRIEF_REVIEW: &str = include_str!("../data/review-brief-page-example.md");

/// [`BRIEF_REVIEW`] with this model.
pub fn brief_review(model: &str) -> String {
    BRIEF_REVIEW.replace(
        "model: anthropic/claude-sonnet-4-5",
        &format!("model: {model}"),
    )
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
    auto_store::NewRun::new(
        run_id,
        auto_store::DefinitionKey::new(def_type, name),
        1,
        input,
        "local",
    )
}

/// A server in this process and a [`Client`] of it, which the server derefs to.
pub struct TestServer {
    pub handle: Option<Handle>,
    pub client: Client,
    _dir: tempfile::TempDir,
}

impl std::ops::Deref for TestServer {
    type Target = Client;

    fn deref(&self) -> &Client {
        &self.client
    }
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
        let retention = config.retention().expect("the configuration's retention");
        let checkers = auto_server::server_checkers_with(limits.workflow_max_duration_ms)
            .with(DefinitionType::Prediction, Arc::new(LineChecker));
        Self::start_checked(
            store,
            Vec::new(),
            models,
            (limits, retention),
            http,
            dir,
            checkers,
        )
        .await
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
            .with(DefinitionType::Prediction, Arc::new(LineChecker));
        Self::start_checked(
            store,
            keys,
            models,
            (limits, Default::default()),
            http,
            dir,
            checkers,
        )
        .await
    }

    /// A server with `auto serve`'s own checkers, without [`LineChecker`].
    pub async fn start_standard() -> Self {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = test_store(dir.path()).await;
        let checkers = auto_server::server_checkers_with(
            auto_server::config::RunLimits::default().workflow_max_duration_ms,
        );
        Self::start_checked(
            store,
            Vec::new(),
            auto_server::reasoning_runs::Models::none(),
            Default::default(),
            Default::default(),
            dir,
            checkers,
        )
        .await
    }

    async fn start_checked(
        store: Arc<dyn auto_store::Store>,
        keys: Vec<KeyEntry>,
        models: auto_server::reasoning_runs::Models,
        (limits, retention): (
            auto_server::config::RunLimits,
            auto_server::config::Retention,
        ),
        http: auto_server::config::HttpLimits,
        dir: tempfile::TempDir,
        checkers: auto_engine::definitions::Checkers,
    ) -> Self {
        let handle = auto_server::start(Options {
            listen: "127.0.0.1:0".parse().expect("an address"),
            store,
            keys: Keys::new(keys),
            checkers,
            models,
            limits,
            http,
            retention,
        })
        .await
        .expect("the server starts");
        let client = Client::new(handle.url());
        Self {
            handle: Some(handle),
            client,
            _dir: dir,
        }
    }

    pub fn with_key(&self, key: &str) -> Self {
        // Shares the running server; only the key differs.
        Self {
            handle: None,
            client: self.client.with_key(key),
            _dir: tempfile::tempdir().expect("a temporary directory"),
        }
    }
}
