//! Each adapter against a third party's emulator of the providers' APIs: npm
//! `@copilotkit/aimock`, pinned and installed by `scripts/aimock`, found through `AUTO_AIMOCK`.
//! Our doubles (`auto-testkit`) speak the wire protocols as we read them; aimock speaks them as
//! someone else read them, so a mistake we made twice, in an adapter and in its double, shows
//! here. Every test starts its own aimock on a free loopback port with a fixture file it writes,
//! points a `Providers` configuration's `base_url` at it and calls through `Providers::call`.
//!
//! `TARGETS` is the table: one line per endpoint the crate speaks to. Each line becomes a module
//! with every case below as a test (`anthropic_messages::text_answer`, ...). Azure OpenAI is
//! checked on the deployments path (`/openai/deployments/{id}/chat/completions`, which a dated
//! `api_version` selects), since aimock 1.43 does not serve the v1 path the adapter takes by
//! default; Gemini on Vertex AI and Bedrock Converse on their own paths. Claude through Vertex
//! AI's `rawPredict` has no aimock surface, so only its double checks it.
//!
//! Without `AUTO_AIMOCK` the tests skip with a note, so a machine without node still runs the
//! suite; under CI (`CI` set) they fail instead.
//!
//! What aimock 1.43 cannot check, so our doubles stay the only check of it: cache reads and
//! writes and reasoning tokens in usage (it reports them only on its OpenRouter surface, tested
//! by the gateway test at the end), Anthropic's and Gemini's structured-output fields (it reads
//! `response_format` only), the Gemini `parametersJsonSchema` of a tool (it reads `parameters`).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, Once, mpsc};
use std::time::{Duration, Instant};

use auto_models::{
    FailureBecause, FinishReason, Message, ModelAnswer, ModelFailure, ModelRequest, OutputContract,
    Providers, Settings, ToolCall, ToolSpec, WireProtocol,
};
use common::{TEST_KEY, fast, providers};
use serde_json::{Map, Value, json};

/// One endpoint the crate speaks to, as an operator configures it.
struct Target {
    protocol: WireProtocol,
    /// The configuration's `[providers.X]` or `[gateways.X]` section. `{aimock}` is replaced by
    /// aimock's URL (no trailing slash), `{key_file}` by the path of a file holding the key.
    config: &'static str,
    /// The model as a definition names it, `provider/model`.
    model: &'static str,
    /// Whether aimock can check the credential this protocol sends: a key in a header can be
    /// checked, a signature (Bedrock's SigV4) or a token exchange (Vertex's OAuth) cannot. When
    /// false, aimock runs without keys and the 401 comes from a fixture.
    key_checked: bool,
}

macro_rules! targets {
    ($($name:ident => $target:expr,)*) => {$(
        mod $name {
            use super::*;

            const TARGET: Target = $target;

            #[tokio::test]
            async fn text_answer() {
                cases::text_answer(&TARGET).await;
            }

            #[tokio::test]
            async fn json_answer() {
                cases::json_answer(&TARGET).await;
            }

            #[tokio::test]
            async fn tool_call_answer() {
                cases::tool_call_answer(&TARGET).await;
            }

            #[tokio::test]
            async fn tool_results_read_back() {
                cases::tool_results_read_back(&TARGET).await;
            }

            #[tokio::test]
            async fn cut_off_answer() {
                cases::cut_off_answer(&TARGET).await;
            }

            #[tokio::test]
            async fn rate_limited_then_answered() {
                cases::rate_limited_then_answered(&TARGET).await;
            }

            #[tokio::test]
            async fn server_errors_retried_then_unavailable() {
                cases::server_errors_retried_then_unavailable(&TARGET).await;
            }

            #[tokio::test]
            async fn wrong_key_rejected() {
                cases::wrong_key_rejected(&TARGET).await;
            }
        }
    )*};
}

targets! {
    anthropic_messages => Target {
        protocol: WireProtocol::AnthropicMessages,
        config: r#"[providers.anthropic]
base_url = "{aimock}"
api_key = { file = "{key_file}" }"#,
        model: "anthropic/claude-sonnet-4-5",
        key_checked: true,
    },
    openai_chat => Target {
        protocol: WireProtocol::OpenAiChat,
        config: r#"[providers.openai]
base_url = "{aimock}/v1"
api_key = { file = "{key_file}" }"#,
        model: "openai/gpt-5",
        key_checked: true,
    },
    openai_compatible_gateway => Target {
        protocol: WireProtocol::OpenAiChat,
        config: r#"[gateways.router]
base_url = "{aimock}/api/v1"
api_key = { file = "{key_file}" }"#,
        model: "router/openai/gpt-5",
        key_checked: true,
    },
    gemini => Target {
        protocol: WireProtocol::GeminiGenerateContent,
        config: r#"[providers.google]
base_url = "{aimock}/v1beta"
api_key = { file = "{key_file}" }"#,
        model: "google/gemini-2.5-flash",
        key_checked: true,
    },
    // aimock 1.43 serves Azure's deployments path, which a dated api_version selects.
    azure_openai => Target {
        protocol: WireProtocol::AzureOpenAiChat,
        config: r#"[providers.azure]
base_url = "{aimock}"
api_version = "2024-10-21"
api_key = { file = "{key_file}" }"#,
        model: "azure/gpt-5-deployment",
        key_checked: true,
    },
    vertex_gemini => Target {
        protocol: WireProtocol::VertexGenerateContent,
        config: r#"[providers.vertex]
base_url = "{aimock}"
project = "test-project"
location = "us-central1"
access_token = { file = "{key_file}" }"#,
        model: "vertex/gemini-2.5-flash",
        key_checked: false,
    },
    bedrock_converse => Target {
        protocol: WireProtocol::BedrockConverse,
        config: r#"[providers.bedrock]
base_url = "{aimock}"
region = "us-east-1"
access_key_id = { file = "{key_file}" }
secret_access_key = { file = "{key_file}" }"#,
        model: "bedrock/amazon.nova-pro-v1:0",
        key_checked: false,
    },
}

/// Where aimock answers other than the provider's documentation, the fixture fields that make it
/// answer as documented for a tool call. Exhaustive on purpose: a new protocol decides here.
fn tool_call_as_documented(protocol: WireProtocol) -> Value {
    match protocol {
        // aimock 1.43 ends a Gemini tool call with finishReason "FUNCTION_CALL", which the
        // Gemini API's FinishReason does not have: a function call ends with STOP.
        WireProtocol::GeminiGenerateContent | WireProtocol::VertexGenerateContent => {
            json!({ "finishReason": "STOP" })
        }
        WireProtocol::AnthropicMessages
        | WireProtocol::OpenAiChat
        | WireProtocol::AzureOpenAiChat
        | WireProtocol::VertexAnthropic
        | WireProtocol::BedrockConverse => json!({}),
    }
}

/// The match fields that prove aimock read our structured-output request as one. aimock 1.43
/// reads only OpenAI's `response_format`; for the others the JSON answer is checked alone.
fn json_request_match(protocol: WireProtocol) -> Value {
    match protocol {
        WireProtocol::OpenAiChat | WireProtocol::AzureOpenAiChat => {
            json!({ "responseFormat": "json_schema" })
        }
        WireProtocol::AnthropicMessages
        | WireProtocol::GeminiGenerateContent
        | WireProtocol::VertexGenerateContent
        | WireProtocol::VertexAnthropic
        | WireProtocol::BedrockConverse => json!({}),
    }
}

mod cases {
    use super::*;

    pub async fn text_answer(target: &Target) {
        let Some(aimock) = Aimock::start(
            target,
            json!([{
                // The system block must reach aimock as the system message.
                "match": { "userMessage": "Say hello.", "systemMessage": "Be brief." },
                "response": {
                    "content": "Hello.",
                    "usage": { "prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14 },
                },
            }]),
        ) else {
            return;
        };
        let answer = aimock.call(&request(target, "Say hello.")).await;
        assert_eq!(answer.text, "Hello.");
        assert!(answer.tool_calls.is_empty());
        assert_eq!(answer.finish_reason, FinishReason::Stop, "{answer:?}");
        assert!(answer.raw_finish_reason.is_some(), "{answer:?}");
        assert_eq!(answer.usage.input_uncached, Some(11), "{answer:?}");
        assert_eq!(answer.usage.output_text, Some(3), "{answer:?}");
        assert_eq!(answer.usage.total, Some(14), "{answer:?}");
        assert_eq!(answer.resolved_model, target.model);
        assert_eq!(aimock.journal().await.len(), 1);
    }

    pub async fn json_answer(target: &Target) {
        let mut matching = json!({ "userMessage": "Is it ok?" });
        merge(&mut matching, json_request_match(target.protocol));
        let Some(aimock) = Aimock::start(
            target,
            json!([{ "match": matching, "response": { "content": { "ok": true } } }]),
        ) else {
            return;
        };
        let mut request = request(target, "Is it ok?");
        request.output = OutputContract::Json {
            schema: json!({
                "type": "object",
                "properties": { "ok": { "type": "boolean" } },
                "required": ["ok"],
                "additionalProperties": false,
            }),
        };
        let answer = aimock.call(&request).await;
        let value: Value = serde_json::from_str(&answer.text).expect("the answer is JSON");
        assert_eq!(value, json!({ "ok": true }));
        assert_eq!(answer.finish_reason, FinishReason::Stop, "{answer:?}");
    }

    pub async fn tool_call_answer(target: &Target) {
        let mut response = json!({
            "toolCalls": [{ "id": "call_7", "name": "graph__search", "arguments": { "q": "x" } }],
        });
        merge(&mut response, tool_call_as_documented(target.protocol));
        let Some(aimock) = Aimock::start(
            target,
            // toolName matches only when aimock found our tool among the request's tools.
            json!([{
                "match": { "userMessage": "Search.", "toolName": "graph__search" },
                "response": response,
            }]),
        ) else {
            return;
        };
        let mut request = request(target, "Search.");
        request.tools = vec![tool()];
        let answer = aimock.call(&request).await;
        assert_eq!(
            answer.tool_calls,
            vec![ToolCall {
                call_id: "call_7".to_owned(),
                name: "graph__search".to_owned(),
                arguments: json!({ "q": "x" }),
            }]
        );
        assert_eq!(answer.finish_reason, FinishReason::ToolCalls, "{answer:?}");
    }

    pub async fn tool_results_read_back(target: &Target) {
        let Some(aimock) = Aimock::start(
            target,
            // toolCallId and toolResultContains match only when aimock read our tool result as
            // the answer to our earlier call.
            json!([{
                "match": { "toolCallId": "call_7", "toolResultContains": "three nodes" },
                "response": { "content": "Found three." },
            }]),
        ) else {
            return;
        };
        let mut request = request(target, "Search.");
        request.tools = vec![tool()];
        request.messages.push(Message::AssistantToolCalls {
            text: String::new(),
            calls: vec![ToolCall {
                call_id: "call_7".to_owned(),
                name: "graph__search".to_owned(),
                arguments: json!({ "q": "x" }),
            }],
        });
        request.messages.push(Message::ToolResult {
            call_id: "call_7".to_owned(),
            name: "graph__search".to_owned(),
            content: "three nodes".to_owned(),
            is_error: false,
        });
        let answer = aimock.call(&request).await;
        assert_eq!(answer.text, "Found three.");
        assert_eq!(answer.finish_reason, FinishReason::Stop, "{answer:?}");
    }

    pub async fn cut_off_answer(target: &Target) {
        let Some(aimock) = Aimock::start(
            target,
            json!([
                { "match": { "userMessage": "Go on." }, "response": { "content": "And then", "finishReason": "length" } },
                { "match": { "userMessage": "As JSON." }, "response": { "content": "{\"ok\":", "finishReason": "length" } },
            ]),
        ) else {
            return;
        };
        let answer = aimock.call(&request(target, "Go on.")).await;
        assert_eq!(answer.text, "And then");
        assert_eq!(answer.finish_reason, FinishReason::Length, "{answer:?}");
        let mut request = request(target, "As JSON.");
        request.output = OutputContract::Json {
            schema: json!({ "type": "object" }),
        };
        let failure = aimock.fail(&request).await;
        assert_eq!(failure.because, FailureBecause::OutputInvalid, "{failure}");
        assert_eq!(failure.finish_reason, Some(FinishReason::Length));
    }

    pub async fn rate_limited_then_answered(target: &Target) {
        let Some(aimock) = Aimock::start(
            target,
            json!([
                {
                    "match": { "userMessage": "Again.", "sequenceIndex": 0 },
                    "response": {
                        "error": { "message": "Rate limited", "type": "rate_limit_error" },
                        "status": 429,
                        "retryAfter": 1,
                    },
                },
                {
                    "match": { "userMessage": "Again.", "sequenceIndex": 1 },
                    "response": { "content": "After the wait." },
                },
            ]),
        ) else {
            return;
        };
        let started = Instant::now();
        let answer = aimock.call(&request(target, "Again.")).await;
        assert_eq!(answer.text, "After the wait.");
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "the retry waited the Retry-After of 1 s: {:?}",
            started.elapsed()
        );
        let statuses: Vec<u64> = aimock
            .journal()
            .await
            .iter()
            .filter_map(|entry| entry["response"]["status"].as_u64())
            .collect();
        assert_eq!(statuses, [429, 200]);
    }

    pub async fn server_errors_retried_then_unavailable(target: &Target) {
        let Some(aimock) = Aimock::start(
            target,
            json!([{
                "match": { "userMessage": "Fail." },
                "response": { "error": { "message": "Internal error", "type": "server_error" }, "status": 500 },
            }]),
        ) else {
            return;
        };
        let failure = aimock.fail(&request(target, "Fail.")).await;
        assert_eq!(
            failure.because,
            FailureBecause::ProviderUnavailable,
            "{failure}"
        );
        assert_eq!(failure.status, Some(500));
        assert_eq!(aimock.journal().await.len(), 3, "one call and two retries");
    }

    pub async fn wrong_key_rejected(target: &Target) {
        let fixtures = if target.key_checked {
            json!([{ "match": {}, "response": { "content": "Never." } }])
        } else {
            json!([{
                "match": {},
                "response": { "error": { "message": "Invalid key", "type": "authentication_error" }, "status": 401 },
            }])
        };
        let Some(aimock) = Aimock::start(target, fixtures) else {
            return;
        };
        let wrong = aimock.providers_with_key("wrong-key-9876543210");
        let failure = wrong
            .call(&request(target, "Hello?"), &fast())
            .await
            .expect_err("a wrong key fails");
        assert_eq!(
            failure.because,
            FailureBecause::CredentialsRejected,
            "{failure}"
        );
        assert_eq!(failure.status, Some(401));
        assert!(!failure.detail.contains("wrong-key"), "{failure}");
        if !target.key_checked {
            assert_eq!(aimock.journal().await.len(), 1, "a 401 is not retried");
        }
    }
}

/// An OpenAI-compatible gateway's usage with cached and reasoning tokens, which aimock reports
/// only on its OpenRouter surface (`/api/v1`): the counts must come out each standing alone.
#[tokio::test]
async fn gateway_usage_splits_cached_and_reasoning_tokens() {
    const TARGET: Target = Target {
        protocol: WireProtocol::OpenAiChat,
        config: r#"[gateways.router]
base_url = "{aimock}/api/v1"
api_key = { file = "{key_file}" }"#,
        model: "router/openai/gpt-5",
        key_checked: true,
    };
    let Some(aimock) = Aimock::start(
        &TARGET,
        json!([{
            "match": { "userMessage": "Count." },
            "response": {
                "content": "Counted.",
                "usage": {
                    "prompt_tokens": 11,
                    "completion_tokens": 5,
                    "total_tokens": 16,
                    "prompt_tokens_details": { "cached_tokens": 4 },
                    "completion_tokens_details": { "reasoning_tokens": 2 },
                },
            },
        }]),
    ) else {
        return;
    };
    let answer = aimock.call(&request(&TARGET, "Count.")).await;
    let usage = answer.usage;
    assert_eq!(
        (
            usage.input_uncached,
            usage.cache_read,
            usage.output_text,
            usage.output_reasoning,
            usage.total
        ),
        (Some(7), Some(4), Some(3), Some(2), Some(16)),
        "{usage:?}"
    );
}

fn request(target: &Target, user: &str) -> ModelRequest {
    ModelRequest {
        model: target.model.parse().expect("a model reference"),
        system: Some("Be brief.".to_owned()),
        messages: vec![Message::User(user.to_owned())],
        settings: Settings::default(),
        output: OutputContract::Text,
        tools: Vec::new(),
        provider_options: Map::new(),
    }
}

fn tool() -> ToolSpec {
    ToolSpec {
        name: "graph__search".to_owned(),
        description: "Searches the graph".to_owned(),
        input_schema: json!({ "type": "object", "properties": { "q": { "type": "string" } } }),
    }
}

/// Adds `extra`'s fields to the object `base`.
fn merge(base: &mut Value, extra: Value) {
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), extra) {
        base.extend(extra);
    }
}

/// The aimock executable from `AUTO_AIMOCK`; `None` (after a note) when it is unset outside CI.
fn aimock_executable() -> Option<PathBuf> {
    static NOTE: Once = Once::new();
    match std::env::var_os("AUTO_AIMOCK").filter(|path| !path.is_empty()) {
        Some(path) => Some(PathBuf::from(path)),
        None if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) => panic!(
            "AUTO_AIMOCK is not set: under CI the adapters must run against aimock; .ci/run sets it from scripts/aimock"
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

/// One aimock process on a free loopback port, serving the fixtures a test gave it, with the
/// `Providers` of one target pointed at it. Killed when dropped.
struct Aimock {
    child: Child,
    url: String,
    providers: Providers,
    config: &'static str,
    key_checked: bool,
    stderr: Arc<Mutex<String>>,
    dir: tempfile::TempDir,
}

/// How long aimock may take to say where it listens.
const START_WAIT: Duration = Duration::from_secs(20);

impl Aimock {
    /// Starts aimock with `fixtures` (a list of aimock fixtures); `None` when the tests skip.
    fn start(target: &Target, fixtures: Value) -> Option<Aimock> {
        let executable = aimock_executable()?;
        let dir = tempfile::tempdir().expect("a temporary folder");
        let fixture_file = dir.path().join("fixtures.json");
        std::fs::write(
            &fixture_file,
            serde_json::to_vec_pretty(&json!({ "fixtures": fixtures })).unwrap(),
        )
        .expect("the fixture file written");
        let mut config = json!({ "llm": { "fixtures": fixture_file, "logLevel": "warn" } });
        if target.key_checked {
            config["auth"] = json!({ "apiKeys": [TEST_KEY] });
        }
        let config_file = dir.path().join("aimock.json");
        std::fs::write(&config_file, serde_json::to_vec_pretty(&config).unwrap())
            .expect("the aimock configuration written");
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
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut child_stderr = child.stderr.take().unwrap();
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = child_stderr.read_to_string(&mut text);
            sink.lock().unwrap().push_str(&text);
        });
        // aimock prints "aimock server listening on http://127.0.0.1:PORT" once it listens;
        // the rest of its output is drained so it never blocks on a full pipe.
        let (sender, receiver) = mpsc::channel();
        let stdout = child.stdout.take().unwrap();
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
                    stderr.lock().unwrap()
                );
            }
        };
        let key_file = dir.path().join("key");
        std::fs::write(&key_file, format!("{TEST_KEY}\n")).expect("the key file written");
        let providers = providers(&configuration(target.config, &url, &key_file));
        Some(Aimock {
            child,
            url,
            providers,
            config: target.config,
            key_checked: target.key_checked,
            stderr,
            dir,
        })
    }

    /// The same target configured with another key.
    fn providers_with_key(&self, key: &str) -> Providers {
        let key_file = self.dir.path().join("other-key");
        std::fs::write(&key_file, format!("{key}\n")).expect("the key file written");
        providers(&configuration(self.config, &self.url, &key_file))
    }

    async fn call(&self, request: &ModelRequest) -> ModelAnswer {
        match self.providers.call(request, &fast()).await {
            Ok(answer) => answer,
            Err(failure) => panic!(
                "{failure}\naimock's journal: {:#}\naimock's errors: {}",
                Value::Array(self.journal().await),
                self.stderr.lock().unwrap()
            ),
        }
    }

    async fn fail(&self, request: &ModelRequest) -> ModelFailure {
        match self.providers.call(request, &fast()).await {
            Ok(answer) => panic!("expected a failure, got {answer:?}"),
            Err(failure) => failure,
        }
    }

    /// The requests aimock received and how it answered them, oldest first.
    async fn journal(&self) -> Vec<Value> {
        let mut request = reqwest::Client::new().get(format!("{}/__aimock/journal", self.url));
        if self.key_checked {
            request = request.header("x-api-key", TEST_KEY);
        }
        let journal: Value = request
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .expect("aimock's journal")
            .json()
            .await
            .expect("aimock's journal is JSON");
        journal.as_array().cloned().unwrap_or_default()
    }
}

impl Drop for Aimock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn configuration(section: &str, url: &str, key_file: &std::path::Path) -> String {
    section
        .replace("{aimock}", url)
        .replace("{key_file}", &key_file.display().to_string())
}
