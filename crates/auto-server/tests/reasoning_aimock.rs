//! Reasoning runs end to end through HTTP against a third party's emulator of the providers'
//! APIs, npm `@copilotkit/aimock` (`auto_testkit::Aimock`), so that our doubles cannot merely
//! mirror our own mistakes: the server's provider `base_url` points at aimock, a reasoning
//! function is saved and run through `/v1`, and the run's output, record and model-call events
//! are read back.
//!
//! `TARGETS` is the table: one line per endpoint a run can reach (a provider or a gateway), as an
//! operator configures it. Each line becomes a module with every case below as a test
//! (`anthropic_messages::brief_review`, ...). aimock also serves Azure OpenAI, Vertex AI and
//! Bedrock: an adapter for one of them is one more line, with `key_checked: false` where the
//! credential is a signature or a token exchange aimock cannot check.
//!
//! Without `AUTO_AIMOCK` the tests skip with a note; under CI (`CI` set) they fail instead.
//! `.ci/run` sets it; by hand: `AUTO_AIMOCK="$(scripts/aimock)" cargo test -p auto-server --test
//! reasoning_aimock`.

mod common;

use std::time::{Duration, Instant};

use auto_testkit::Aimock;
use common::TestServer;
use serde_json::{Value, json};

/// One endpoint a reasoning run reaches.
struct Target {
    /// The configuration's `[providers.X]` or `[gateways.X]` section. `{aimock}` is replaced by
    /// aimock's URL (no trailing slash), `{key_file}` by the path of a file holding the key.
    config: &'static str,
    /// The model as a definition names it.
    model: &'static str,
    /// Whether aimock checks the key this protocol sends in a header. When false (a signature,
    /// a token exchange), aimock runs without keys and the 401 comes from a fixture.
    key_checked: bool,
    /// aimock's `responseFormat` match that proves it read our output schema as structured
    /// output; `None` where aimock 1.43 reads no structured-output field of the protocol (it
    /// reads only OpenAI's `response_format`), so the JSON answer is checked alone.
    structured_output: Option<&'static str>,
    /// Whether aimock's answers on this protocol carry the response's id and the model that
    /// answered. Its Gemini surface (1.43) sends neither `responseId` nor `modelVersion`, which
    /// the Gemini API does, so the record's `response_id` and `model.answered` are null there.
    response_ids: bool,
}

macro_rules! targets {
    ($($name:ident => $target:expr,)*) => {$(
        mod $name {
            use super::*;

            const TARGET: Target = $target;

            #[tokio::test]
            async fn brief_review() {
                cases::brief_review(&TARGET).await;
            }

            #[tokio::test]
            async fn json_answer() {
                cases::json_answer(&TARGET).await;
            }

            #[tokio::test]
            async fn answer_breaking_the_schema() {
                cases::answer_breaking_the_schema(&TARGET).await;
            }

            #[tokio::test]
            async fn rate_limited_then_answered() {
                cases::rate_limited_then_answered(&TARGET).await;
            }

            #[tokio::test]
            async fn rejected_key() {
                cases::rejected_key(&TARGET).await;
            }
        }
    )*};
}

targets! {
    anthropic_messages => Target {
        config: r#"[providers.anthropic]
base_url = "{aimock}"
api_key = { file = "{key_file}" }"#,
        model: "anthropic/claude-sonnet-4-5",
        key_checked: true,
        structured_output: None,
        response_ids: true,
    },
    openai_chat => Target {
        config: r#"[providers.openai]
base_url = "{aimock}/v1"
api_key = { file = "{key_file}" }"#,
        model: "openai/gpt-5-mini",
        key_checked: true,
        structured_output: Some("json_schema"),
        response_ids: true,
    },
    openai_compatible_gateway => Target {
        config: r#"[gateways.router]
base_url = "{aimock}/api/v1"
api_key = { file = "{key_file}" }"#,
        model: "router/openai/gpt-5",
        key_checked: true,
        structured_output: Some("json_schema"),
        response_ids: true,
    },
    gemini => Target {
        config: r#"[providers.google]
base_url = "{aimock}/v1beta"
api_key = { file = "{key_file}" }"#,
        model: "google/gemini-2.5-flash",
        key_checked: true,
        structured_output: None,
        response_ids: false,
    },
    azure_openai => Target {
        config: r#"[providers.azure]
base_url = "{aimock}"
api_version = "2024-10-21"
api_key = { file = "{key_file}" }"#,
        model: "azure/gpt-5-deployment",
        key_checked: true,
        structured_output: Some("json_schema"),
        response_ids: true,
    },
    vertex_gemini => Target {
        config: r#"[providers.vertex]
base_url = "{aimock}"
project = "test-project"
location = "us-central1"
access_token = { file = "{key_file}" }"#,
        model: "vertex/gemini-2.5-flash",
        key_checked: false,
        structured_output: None,
        response_ids: false,
    },
    bedrock_converse => Target {
        config: r#"[providers.bedrock]
base_url = "{aimock}"
region = "us-east-1"
access_key_id = { file = "{key_file}" }
secret_access_key = { file = "{key_file}" }"#,
        model: "bedrock/amazon.nova-pro-v1:0",
        key_checked: false,
        structured_output: None,
        response_ids: false,
    },
}

/// The key aimock accepts.
const KEY: &str = "aimock-test-key-0123456789";
/// A key aimock refuses; it must reach no record, event or problem.
const WRONG_KEY: &str = "sk-wrong-very-secret-9876543210";

fn brief_input() -> Value {
    json!({"brief": "Launch the autumn range", "criteria": "Evidence for every claim"})
}

/// A function whose answer is JSON under an output schema.
fn score(model: &str) -> String {
    format!(
        r#"---
model: {model}
config:
  max_output_tokens: 300
output:
  format: json
  schema:
    type: object
    additionalProperties: false
    required: [score, day]
    properties:
      score: {{ type: integer, minimum: 0, maximum: 10 }}
      day: {{ type: string, format: date }}
---
Score this: {{{{ input.text }}}}
"#
    )
}

/// aimock, and a server whose one provider (or gateway) points at it with `key`.
struct Setup {
    aimock: Aimock,
    server: TestServer,
    pb: String,
}

impl Setup {
    /// `None` when the tests skip.
    async fn start(
        target: &Target,
        fixtures: Value,
        key: &str,
        name: &str,
        source: &str,
    ) -> Option<Setup> {
        let keys: &[&str] = if target.key_checked { &[KEY] } else { &[] };
        let aimock = Aimock::start(fixtures, keys)?;
        let key_file = aimock.dir().join("key");
        std::fs::write(&key_file, format!("{key}\n")).expect("the key file written");
        let config = target
            .config
            .replace("{aimock}", aimock.url())
            .replace("{key_file}", &key_file.display().to_string());
        let server = TestServer::start_with_config(&config).await;
        let pb = server.playbook().await;
        server.save_definition(&pb, "reasoning", name, source).await;
        Some(Setup { aimock, server, pb })
    }

    async fn run(&self, name: &str, body: Value) -> common::Reply {
        self.server
            .start_run(&self.pb, "reasoning", name, body)
            .await
    }

    /// The run's events, in order, each read in full.
    async fn run_events(&self, run_id: &str) -> Vec<Value> {
        let listed = self
            .server
            .get(&format!("{}/events?run_id={run_id}&limit=1000", self.pb))
            .await;
        assert_eq!(listed.status, 200, "{:#}", listed.body);
        let mut events = Vec::new();
        for event in listed.body["events"].as_array().expect("events") {
            let id = event["id"].as_str().expect("an event id");
            let got = self.server.get(&format!("{}/events/{id}", self.pb)).await;
            assert_eq!(got.status, 200, "{:#}", got.body);
            events.push(got.body);
        }
        events
    }

    async fn get_run(&self, run_id: &str) -> Value {
        let got = self.server.get(&format!("{}/runs/{run_id}", self.pb)).await;
        assert_eq!(got.status, 200, "{:#}", got.body);
        got.body
    }

    /// What aimock received and answered, to show beside a failed assertion.
    async fn seen(&self) -> String {
        format!(
            "aimock's journal: {:#}\naimock's errors: {}",
            Value::Array(self.aimock.journal().await),
            self.aimock.errors()
        )
    }
}

fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default())
        .collect()
}

mod cases {
    use super::*;

    /// The page's example: the system block and the message reach aimock as the provider takes
    /// them (the fixture matches on both), the text answer is the output, and the record and
    /// the two model-call events say what happened.
    pub async fn brief_review(target: &Target) {
        let Some(setup) = Setup::start(
            target,
            json!([{
                "match": {
                    "userMessage": "Brief: Launch the autumn range\nCriteria: Evidence for every claim",
                    "systemMessage": "Review the brief using the supplied criteria. Identify missing evidence.",
                },
                "response": {
                    "content": "The brief lacks evidence for its claims.",
                    "usage": { "prompt_tokens": 41, "completion_tokens": 8, "total_tokens": 49 },
                },
            }]),
            KEY,
            "review-brief",
            &crate::common::brief_review(target.model),
        )
        .await
        else {
            return;
        };
        let reply = setup
            .run(
                "review-brief",
                json!({"input": brief_input(), "run_id": "r-1"}),
            )
            .await;
        assert_eq!(
            reply.status,
            200,
            "{:#}\n{}",
            reply.body,
            setup.seen().await
        );
        let body = &reply.body;
        assert_eq!(body["status"], "succeeded");
        assert_eq!(body["output"], "The brief lacks evidence for its claims.");
        let record = &body["record"];
        assert_eq!(record["model"]["requested"], target.model, "{record:#}");
        assert_eq!(record["model"]["resolved"], target.model, "{record:#}");
        assert_eq!(record["settings"], json!({"max_output_tokens": 800}));
        assert_eq!(record["output_format"], "text");
        assert_eq!(record["finish_reason"], "stop", "{record:#}");
        assert!(record["raw_finish_reason"].is_string(), "{record:#}");
        assert_eq!(record["usage"]["input_uncached"], 41, "{record:#}");
        assert_eq!(record["usage"]["output_text"], 8, "{record:#}");
        assert_eq!(record["usage"]["total"], 49, "{record:#}");
        assert_eq!(
            record["response_id"].is_string(),
            target.response_ids,
            "{record:#}"
        );
        assert_eq!(
            record["model"]["answered"].is_string(),
            target.response_ids,
            "{record:#}"
        );
        assert!(record["duration_ms"].is_u64(), "{record:#}");
        assert!(record.get("cost_usd").is_none(), "{record:#}");
        assert_eq!(
            record["prompt"],
            json!({
                "instructions": "Review the brief using the supplied criteria. Identify missing evidence. Do not invent facts.",
                "message": "\n\nBrief: Launch the autumn range\nCriteria: Evidence for every claim\n",
                "truncated": false,
            })
        );

        let journal = setup.aimock.journal().await;
        assert_eq!(journal.len(), 1, "{}", setup.seen().await);
        assert_eq!(journal[0]["response"]["status"], 200);

        let events = setup.run_events("r-1").await;
        assert_eq!(
            types(&events),
            [
                "run_started",
                "model_call_started",
                "model_call_answered",
                "run_succeeded"
            ]
        );
        let started = &events[1]["data"];
        assert_eq!(started["number"], 1);
        assert_eq!(started["model"], target.model);
        assert_eq!(started["tools_offered"], json!([]));
        let messages = serde_json::to_vec(&started["messages"]).unwrap();
        assert_eq!(started["messages_bytes"], messages.len(), "{started:#}");
        assert_eq!(started["messages_sha256"].as_str().unwrap().len(), 64);
        assert_eq!(
            started["messages"],
            json!([
                {"role": "system", "content": "Review the brief using the supplied criteria. Identify missing evidence. Do not invent facts."},
                {"role": "user", "content": "\n\nBrief: Launch the autumn range\nCriteria: Evidence for every claim\n"},
            ])
        );
        let answered = &events[2]["data"];
        assert_eq!(answered["number"], 1);
        assert_eq!(answered["finish_reason"], "stop");
        assert_eq!(answered["raw_finish_reason"], record["raw_finish_reason"]);
        assert_eq!(answered["usage"], record["usage"], "{answered:#}");
        assert_eq!(answered["response_id"], record["response_id"]);
        assert_eq!(answered["resolved_model"], target.model);
        assert_eq!(answered["answered_model"], record["model"]["answered"]);
        assert!(
            answered["request_bytes"].as_u64().unwrap() > 100,
            "{answered:#}"
        );
        assert!(
            answered["response_bytes"].as_u64().unwrap() > 10,
            "{answered:#}"
        );
        assert_eq!(answered["tool_calls"], json!([]));
        assert_eq!(
            answered["response"]["text"],
            "The brief lacks evidence for its claims."
        );
        assert_eq!(answered["response_sha256"].as_str().unwrap().len(), 64);
        assert_eq!(
            events[3]["data"],
            "The brief lacks evidence for its claims."
        );

        // get_run shows the same run, and the same id and input return it without a call.
        let got = setup.get_run("r-1").await;
        assert_eq!(got["output"], body["output"]);
        assert_eq!(got["record"], body["record"]);
        let again = setup
            .run(
                "review-brief",
                json!({"input": brief_input(), "run_id": "r-1"}),
            )
            .await;
        assert_eq!(again.body["record"], body["record"]);
        assert_eq!(setup.aimock.journal().await.len(), 1);
    }

    /// A JSON answer under an output schema: sent as structured output where aimock can tell,
    /// parsed and checked, and recorded as the output.
    pub async fn json_answer(target: &Target) {
        let mut matching = json!({ "userMessage": "Score this: fine" });
        if let Some(format) = target.structured_output {
            matching["responseFormat"] = json!(format);
        }
        let Some(setup) = Setup::start(
            target,
            json!([{ "match": matching, "response": { "content": { "score": 7, "day": "2026-04-01" } } }]),
            KEY,
            "score",
            &score(target.model),
        )
        .await
        else {
            return;
        };
        let reply = setup
            .run("score", json!({"input": {"text": "fine"}, "run_id": "j"}))
            .await;
        assert_eq!(
            reply.status,
            200,
            "{:#}\n{}",
            reply.body,
            setup.seen().await
        );
        assert_eq!(
            reply.body["output"],
            json!({"score": 7, "day": "2026-04-01"})
        );
        let record = &reply.body["record"];
        assert_eq!(record["output_format"], "json");
        assert_eq!(record["finish_reason"], "stop", "{record:#}");
        assert_eq!(record["settings"], json!({"max_output_tokens": 300}));
        let events = setup.run_events("j").await;
        assert_eq!(events[3]["type"], "run_succeeded");
        assert_eq!(events[3]["data"], json!({"score": 7, "day": "2026-04-01"}));
    }

    /// An answer that breaks the schema: 503 unavailable because output_invalid, with the
    /// issues, the call's spending kept in the record and no prompt.
    pub async fn answer_breaking_the_schema(target: &Target) {
        let Some(setup) = Setup::start(
            target,
            json!([{
                "match": { "userMessage": "Score this: fine" },
                "response": {
                    "content": { "score": 11, "day": "April" },
                    "usage": { "prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29 },
                },
            }]),
            KEY,
            "score",
            &score(target.model),
        )
        .await
        else {
            return;
        };
        let reply = setup
            .run("score", json!({"input": {"text": "fine"}, "run_id": "bad"}))
            .await;
        let problem = reply.assert_problem(503, "unavailable");
        assert_eq!(problem["because"], "output_invalid", "{problem:#}");
        assert_eq!(problem["run_id"], "bad");
        assert!(
            problem["detail"].as_str().unwrap().ends_with(": try again"),
            "{problem:#}"
        );
        let messages = reply.issue_messages();
        for expected in [
            "/score: Expected a number of at most 10",
            "/day: Expected a string in the format date, such as 2026-04-01",
        ] {
            assert!(
                messages.iter().any(|m| m.starts_with(expected)),
                "{expected:?} in {messages:?}"
            );
        }
        let got = setup.get_run("bad").await;
        assert_eq!(got["status"], "rejected");
        assert_eq!(got["problem"]["because"], "output_invalid");
        let record = &got["record"];
        assert_eq!(record["usage"]["output_text"], 9, "{record:#}");
        assert_eq!(record["usage"]["input_uncached"], 20, "{record:#}");
        assert!(record["duration_ms"].is_u64(), "{record:#}");
        assert!(record.get("prompt").is_none(), "{record:#}");
        let events = setup.run_events("bad").await;
        assert_eq!(events.last().unwrap()["type"], "run_rejected");
        assert_eq!(
            events.last().unwrap()["data"],
            json!({"reason": "unavailable", "kind": null})
        );
        assert_eq!(setup.aimock.journal().await.len(), 1, "not retried");
    }

    /// A 429 with Retry-After, then an answer: one model call of two requests, the wait
    /// honoured.
    pub async fn rate_limited_then_answered(target: &Target) {
        let Some(setup) = Setup::start(
            target,
            json!([
                {
                    "match": { "userMessage": "Brief: Launch the autumn range", "sequenceIndex": 0 },
                    "response": {
                        "error": { "message": "Rate limited", "type": "rate_limit_error" },
                        "status": 429,
                        "retryAfter": 1,
                    },
                },
                {
                    "match": { "userMessage": "Brief: Launch the autumn range", "sequenceIndex": 1 },
                    "response": { "content": "After the wait." },
                },
            ]),
            KEY,
            "review",
            &crate::common::brief_review(target.model),
        )
        .await
        else {
            return;
        };
        let started = Instant::now();
        let reply = setup
            .run(
                "review",
                json!({"input": brief_input(), "run_id": "limited"}),
            )
            .await;
        assert_eq!(
            reply.status,
            200,
            "{:#}\n{}",
            reply.body,
            setup.seen().await
        );
        assert_eq!(reply.body["output"], "After the wait.");
        assert!(
            started.elapsed() >= Duration::from_secs(1),
            "the retry waited the Retry-After of 1 s: {:?}",
            started.elapsed()
        );
        let statuses: Vec<u64> = setup
            .aimock
            .journal()
            .await
            .iter()
            .filter_map(|entry| entry["response"]["status"].as_u64())
            .collect();
        assert_eq!(statuses, [429, 200]);
        let events = setup.run_events("limited").await;
        assert_eq!(
            types(&events),
            [
                "run_started",
                "model_call_started",
                "model_call_answered",
                "run_succeeded"
            ]
        );
        assert!(
            events[2]["data"]["duration_ms"].as_u64().unwrap() >= 1_000,
            "the call's time includes its retry: {:#}",
            events[2]["data"]
        );
    }

    /// A key the provider rejects: 503 unavailable because credentials_rejected, naming the
    /// status, and the key in no problem, record or event.
    pub async fn rejected_key(target: &Target) {
        let fixtures = if target.key_checked {
            json!([{ "match": {}, "response": { "content": "Never." } }])
        } else {
            json!([{
                "match": {},
                "response": {
                    "error": { "message": format!("Invalid key {WRONG_KEY}"), "type": "authentication_error" },
                    "status": 401,
                },
            }])
        };
        let Some(setup) = Setup::start(
            target,
            fixtures,
            WRONG_KEY,
            "review",
            &crate::common::brief_review(target.model),
        )
        .await
        else {
            return;
        };
        let reply = setup
            .run("review", json!({"input": brief_input(), "run_id": "creds"}))
            .await;
        let problem = reply.assert_problem(503, "unavailable");
        assert_eq!(problem["because"], "credentials_rejected", "{problem:#}");
        assert!(
            problem["detail"].as_str().unwrap().contains("401"),
            "{problem:#}"
        );
        // aimock refuses a wrong key before it journals the request; a 401 of a fixture is
        // journaled, and not retried.
        let journal = setup.aimock.journal().await;
        assert_eq!(
            journal.len(),
            usize::from(!target.key_checked),
            "{}",
            setup.seen().await
        );
        let events = setup.run_events("creds").await;
        assert_eq!(
            types(&events),
            [
                "run_started",
                "model_call_started",
                "model_call_failed",
                "run_rejected"
            ]
        );
        let failed = &events[2]["data"];
        assert_eq!(failed["because"], "credentials_rejected", "{failed:#}");
        assert_eq!(failed["status"], 401, "{failed:#}");
        let got = setup.get_run("creds").await;
        assert_eq!(got["status"], "rejected");
        for text in [
            reply.body.to_string(),
            serde_json::to_string(&events).unwrap(),
            got.to_string(),
        ] {
            assert!(!text.contains("very-secret"), "the key leaked: {text}");
        }
    }
}
