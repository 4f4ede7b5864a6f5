//! The HTTP side of the end-to-end tests, the same whether the server runs in the test's process
//! or as the `auto` binary: a [`Client`] against a server's base URL that creates the
//! playbook, saves definitions, starts runs, waits for their ending and reads events, and the
//! one [`wait_for`] every test waits with instead of sleeping ([`wait_for_blocking`] in a test
//! that drives blocking clients and has no runtime).

use std::future::Future;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// How long [`wait_for`] sleeps between two looks at its condition.
pub const POLL_INTERVAL_MS: u64 = 50;

/// The playbook [`Client::playbook`] creates, as the CLI's tests name it with AUTO_ORG and
/// AUTO_PLAYBOOK.
pub const PLAYBOOK_PATH: &str = "/v1/orgs/acme/playbooks/main";

/// Calls `condition` until it gives a value, every [`POLL_INTERVAL_MS`], and returns that value;
/// panics naming `what` when `within` has passed without one. A condition may assert on what it
/// reads, to fail at once on an answer that can never turn into the one awaited.
pub async fn wait_for<T, F, Fut>(within: Duration, what: &str, mut condition: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = condition().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "waited {within:?} for {what}, in vain"
        );
        tokio::time::sleep(Duration::from_millis(POLL_INTERVAL_MS)).await;
    }
}

/// [`wait_for`] for a test without an async runtime: the same deadline, interval and failure.
pub fn wait_for_blocking<T>(
    within: Duration,
    what: &str,
    mut condition: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + within;
    loop {
        if let Some(value) = condition() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "waited {within:?} for {what}, in vain"
        );
        std::thread::sleep(Duration::from_millis(POLL_INTERVAL_MS));
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

/// A server's answer: its status, its content type and its body, JSON when it parses as JSON and
/// else the text as a JSON string.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub content_type: String,
    pub body: Value,
}

/// A client of one server, with or without a key.
#[derive(Clone, Debug)]
pub struct Client {
    /// The server's base URL, `http://127.0.0.1:PORT`.
    pub url: String,
    pub http: reqwest::Client,
    /// The bearer key sent with every request, if any.
    pub key: Option<String>,
}

impl Client {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            http: reqwest::Client::new(),
            key: None,
        }
    }

    /// The same server, called with this key.
    pub fn with_key(&self, key: &str) -> Self {
        Self {
            key: Some(key.into()),
            ..self.clone()
        }
    }

    /// A request with these bytes as its body; `path` is below the base URL.
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

    /// Creates the org `acme` and its playbook `main`; returns the playbook's path,
    /// [`PLAYBOOK_PATH`].
    pub async fn playbook(&self) -> String {
        let org = self.post("/v1/orgs", json!({"id": "acme"})).await;
        assert_eq!(org.status, 201, "{:?}", org.body);
        let reply = self
            .post(
                "/v1/orgs/acme/playbooks",
                json!({"id": "main", "title": "Main"}),
            )
            .await;
        assert_eq!(reply.status, 201, "{:?}", reply.body);
        PLAYBOOK_PATH.into()
    }

    /// Asks to save version 1 of `def_type`/`name` in the playbook `pb` with this source and no
    /// diagram, and returns the server's answer as it is: for a test of what is refused.
    pub async fn post_definition(
        &self,
        pb: &str,
        def_type: &str,
        name: &str,
        source: &str,
    ) -> Reply {
        self.post(
            &format!("{pb}/definitions"),
            json!({"type": def_type, "name": name, "source": source, "diagram": "none"}),
        )
        .await
    }

    /// [`Self::post_definition`] that asserts the definition was created; returns it.
    pub async fn save_definition(
        &self,
        pb: &str,
        def_type: &str,
        name: &str,
        source: &str,
    ) -> Value {
        let reply = self.post_definition(pb, def_type, name, source).await;
        assert_eq!(reply.status, 201, "{def_type}/{name}: {:#}", reply.body);
        reply.body
    }

    /// Asks to save the next version of `def_type`/`name` with this source and no diagram, and
    /// returns the server's answer as it is.
    pub async fn update_definition(
        &self,
        pb: &str,
        def_type: &str,
        name: &str,
        source: &str,
    ) -> Reply {
        self.put(
            &format!("{pb}/definitions/{def_type}/{name}"),
            json!({"source": source, "diagram": "none"}),
        )
        .await
    }

    /// Starts a run of `def_type`/`name` with this request body (`input`, `run_id`, `wait`...)
    /// and returns the server's answer as it is.
    pub async fn start_run(&self, pb: &str, def_type: &str, name: &str, body: Value) -> Reply {
        self.post(&format!("{pb}/definitions/{def_type}/{name}/runs"), body)
            .await
    }

    /// Reads the run until it has ended, within `within`; a read that fails (a store fault a
    /// test makes) is read again until then.
    pub async fn ended(&self, pb: &str, run_id: &str, within: Duration) -> Value {
        let path = format!("{pb}/runs/{run_id}");
        wait_for(within, &format!("the end of the run {run_id}"), || async {
            let reply = self.get(&path).await;
            (reply.status == 200 && reply.body["status"] != "started").then_some(reply.body)
        })
        .await
    }

    /// The events of the playbook that this query (`run_id=...&type=...`, or empty) selects,
    /// up to 1,000, in order.
    pub async fn events(&self, pb: &str, query: &str) -> Vec<Value> {
        let separator = if query.is_empty() { "" } else { "&" };
        let reply = self
            .get(&format!("{pb}/events?limit=1000{separator}{query}"))
            .await;
        assert_eq!(reply.status, 200, "{:?}", reply.body);
        reply.body["events"].as_array().expect("events").clone()
    }

    /// The types of a run's events, in order.
    pub async fn event_types(&self, pb: &str, run_id: &str) -> Vec<String> {
        self.events(pb, &format!("run_id={run_id}"))
            .await
            .iter()
            .map(|e| e["type"].as_str().expect("a type").to_owned())
            .collect()
    }

    /// Every event of the playbook, in order.
    pub async fn all_events(&self, pb: &str) -> Vec<Value> {
        self.events(pb, "").await
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
