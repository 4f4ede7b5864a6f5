//! Reasoning runs end to end through HTTP, against provider doubles that speak each provider's
//! wire protocol: the prompt rendered and sent, the answer checked, the run's record and its
//! model-call events, every ending of "How a run ends" the run can meet without tools, and the
//! run id rules.

mod common;

use std::time::Duration;

use auto_testkit::{ProviderDouble, ProviderKind, Reply};
use common::{TestServer, brief_review, wait_for};
use serde_json::{Value, json};

const SCORE: &str = include_str!("data/score-a-text.md");

const INPUT: fn() -> Value =
    || json!({"brief": "Launch the autumn range", "criteria": "Evidence for every claim"});

fn provider_config(kind: ProviderKind, double: &ProviderDouble, extra: &str) -> String {
    let url = double.base_url();
    let secret = |name: &str| {
        let path =
            std::env::temp_dir().join(format!("auto-reasoning-runs-{}-{name}", std::process::id()));
        std::fs::write(&path, format!("test-{name}")).expect("a secret file");
        format!("{{ file = {:?} }}", path.display().to_string())
    };
    let section = match kind {
        ProviderKind::Anthropic => format!("[providers.anthropic]\nbase_url = \"{url}\"\n"),
        ProviderKind::OpenAiChat => format!("[providers.openai]\nbase_url = \"{url}\"\n"),
        ProviderKind::Gemini => format!("[providers.google]\nbase_url = \"{url}\"\n"),
        ProviderKind::Azure => format!(
            "[providers.azure]\nbase_url = \"{url}\"\napi_key = {}\n",
            secret("azure-key")
        ),
        ProviderKind::VertexGemini | ProviderKind::VertexAnthropic => format!(
            "[providers.{}]\nbase_url = \"{url}\"\nproject = \"test-project\"\nlocation = \"us-east5\"\naccess_token = {}\n",
            if kind == ProviderKind::VertexGemini {
                "vertex"
            } else {
                "vertex-anthropic"
            },
            secret("vertex-token")
        ),
        ProviderKind::Bedrock => format!(
            "[providers.bedrock]\nbase_url = \"{url}\"\nregion = \"us-east-1\"\naccess_key_id = {}\nsecret_access_key = {}\n",
            secret("access-key-id"),
            secret("secret-access-key")
        ),
    };
    format!("{section}{extra}")
}

fn model_of(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::Anthropic => "anthropic/claude-sonnet-4-5",
        ProviderKind::OpenAiChat => "openai/gpt-5-mini",
        ProviderKind::Gemini => "google/gemini-2.5-flash",
        ProviderKind::Azure => "azure/gpt-5-mini",
        ProviderKind::VertexGemini => "vertex/gemini-2.5-flash",
        ProviderKind::VertexAnthropic => "vertex-anthropic/claude-sonnet-4-5",
        ProviderKind::Bedrock => "bedrock/anthropic.claude-sonnet-4-5-v1:0",
    }
}

async fn saved(server: &TestServer, name: &str, source: &str) -> String {
    let pb = server.playbook().await;
    server.save_definition(&pb, "reasoning", name, source).await;
    pb
}

fn of_type<'a>(events: &'a [Value], event_type: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == event_type).collect()
}

/// The example against each provider's double: the prompt sent as that provider takes it, the
/// text answer as the output, the record and the two model-call events.
#[tokio::test]
async fn the_brief_review_runs_against_every_provider() {
    for kind in [
        ProviderKind::Anthropic,
        ProviderKind::OpenAiChat,
        ProviderKind::Gemini,
        ProviderKind::Azure,
        ProviderKind::VertexGemini,
        ProviderKind::VertexAnthropic,
        ProviderKind::Bedrock,
    ] {
        let double = ProviderDouble::start(kind).await;
        double.script([Reply::Text(
            "The brief lacks evidence for its claims.".into(),
        )]);
        let server = TestServer::start_with_config(&provider_config(kind, &double, "")).await;
        let pb = saved(&server, "review-brief", &brief_review(model_of(kind))).await;
        let reply = server
            .start_run(
                &pb,
                "reasoning",
                "review-brief",
                json!({"input": INPUT(), "run_id": "r-1"}),
            )
            .await;
        assert_eq!(reply.status, 200, "{kind:?}: {:#}", reply.body);
        let body = &reply.body;
        assert_eq!(body["status"], "succeeded");
        assert_eq!(body["output"], "The brief lacks evidence for its claims.");
        let record = &body["record"];
        assert_eq!(record["model"]["requested"], model_of(kind), "{record:#}");
        assert_eq!(record["model"]["resolved"], model_of(kind));
        assert_eq!(record["settings"], json!({"max_output_tokens": 800}));
        assert_eq!(record["output_format"], "text");
        assert_eq!(record["finish_reason"], "stop");
        assert_eq!(record["usage"]["output_text"], 5, "{record:#}");
        assert_eq!(record["prompt"]["truncated"], false);
        assert_eq!(
            record["prompt"]["instructions"],
            "Review the brief using the supplied criteria. Identify missing evidence. Do not invent facts."
        );
        assert_eq!(
            record["prompt"]["message"],
            "\n\nBrief: Launch the autumn range\nCriteria: Evidence for every claim\n"
        );
        assert!(record.get("cost_usd").is_none());

        // What the provider received: the system block as instructions, one user message.
        let requests = double.requests();
        assert_eq!(requests.len(), 1, "{kind:?}");
        let sent = &requests[0].body;
        let sent_text = sent.to_string();
        assert!(sent_text.contains("Identify missing evidence"), "{sent:#}");
        assert!(
            sent_text.contains("Brief: Launch the autumn range"),
            "{sent:#}"
        );
        match kind {
            ProviderKind::Anthropic => {
                assert_eq!(sent["max_tokens"], 800);
                assert_eq!(sent["model"], "claude-sonnet-4-5");
                assert!(sent["system"].to_string().contains("Review the brief"));
                assert_eq!(sent["messages"][0]["role"], "user");
            }
            ProviderKind::OpenAiChat => {
                assert_eq!(sent["model"], "gpt-5-mini");
                assert_eq!(sent["messages"][0]["role"], "system");
                assert_eq!(sent["messages"][1]["role"], "user");
            }
            ProviderKind::Gemini | ProviderKind::VertexGemini => {
                assert!(
                    requests[0]
                        .path
                        .contains("gemini-2.5-flash:generateContent")
                );
                assert_eq!(sent["generationConfig"]["maxOutputTokens"], 800);
            }
            ProviderKind::Azure => {
                assert_eq!(sent["model"], "gpt-5-mini");
                assert_eq!(requests[0].header("api-key"), Some("test-azure-key"));
            }
            ProviderKind::VertexAnthropic => {
                assert!(requests[0].path.ends_with("claude-sonnet-4-5:rawPredict"));
                assert_eq!(sent["max_tokens"], 800);
                assert_eq!(sent["anthropic_version"], "vertex-2023-10-16");
            }
            ProviderKind::Bedrock => {
                assert!(
                    requests[0].path.ends_with("/converse"),
                    "{}",
                    requests[0].path
                );
                assert_eq!(sent["inferenceConfig"]["maxTokens"], 800);
                let signed = requests[0].header("authorization").unwrap_or_default();
                assert!(
                    signed.starts_with("AWS4-HMAC-SHA256 Credential=test-access-key-id/"),
                    "{signed}"
                );
            }
        }

        // The run's history: started, the call started and answered, succeeded.
        let events = server.all_events(&pb).await;
        let run_events: Vec<&Value> = events.iter().filter(|e| e["run_id"] == "r-1").collect();
        let types: Vec<&str> = run_events
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [
                "run_started",
                "model_call_started",
                "model_call_answered",
                "run_succeeded"
            ]
        );
        let reply = server
            .get(&format!(
                "{pb}/events/{}",
                run_events[1]["id"].as_str().unwrap()
            ))
            .await;
        let started = &reply.body["data"];
        assert_eq!(started["number"], 1);
        assert_eq!(started["model"], model_of(kind));
        assert_eq!(started["tools_offered"], json!([]));
        assert!(started["messages_bytes"].as_u64().unwrap() > 100);
        assert_eq!(started["messages_sha256"].as_str().unwrap().len(), 64);
        let reply = server
            .get(&format!(
                "{pb}/events/{}",
                run_events[2]["id"].as_str().unwrap()
            ))
            .await;
        let answered = &reply.body["data"];
        assert_eq!(answered["number"], 1);
        assert_eq!(answered["finish_reason"], "stop");
        assert_eq!(answered["resolved_model"], model_of(kind));
        assert!(answered["request_bytes"].as_u64().unwrap() > 100);
        assert!(answered["response_bytes"].as_u64().unwrap() > 10);
        assert_eq!(
            answered["response"]["text"],
            "The brief lacks evidence for its claims."
        );
        assert_eq!(answered["response_sha256"].as_str().unwrap().len(), 64);

        // get_run shows the same run.
        let got = server.get(&format!("{pb}/runs/r-1")).await;
        assert_eq!(got.body["output"], body["output"]);
        assert_eq!(got.body["record"], body["record"]);
    }
}

fn anthropic_config(double: &ProviderDouble) -> String {
    provider_config(ProviderKind::Anthropic, double, "")
}

#[tokio::test]
async fn a_json_answer_is_checked_against_the_schema() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let pb = saved(&server, "score", SCORE).await;

    double.script([Reply::Json(json!({"score": 7, "day": "2026-04-01"}))]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "score",
            json!({"input": {"text": "fine"}}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(
        reply.body["output"],
        json!({"score": 7, "day": "2026-04-01"})
    );
    assert_eq!(reply.body["record"]["output_format"], "json");
    // The condition and the default read fields the input does not have.
    let sent = double.requests()[0].body.to_string();
    assert!(sent.contains("Nickname: friend"), "{sent}");
    assert!(!sent.contains("VIP"), "{sent}");
    // The schema reached the provider as structured output.
    assert!(sent.contains("\"format\""), "{sent}");

    // An answer that breaks the schema: unavailable, with the issues, keeping the spending.
    double.script([Reply::Json(json!({"score": 11, "day": "April"}))]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "score",
            json!({"input": {"text": "fine"}, "run_id": "bad-answer"}),
        )
        .await;
    let problem = reply.assert_problem(503, "unavailable");
    assert_eq!(problem["because"], "output_invalid");
    assert_eq!(problem["run_id"], "bad-answer");
    assert!(
        problem["detail"].as_str().unwrap().ends_with(": try again"),
        "{problem:#}"
    );
    let messages = reply.issue_messages();
    assert!(
        messages
            .contains(&"/day: Expected a string in the format date, such as 2026-04-01".to_owned()),
        "{messages:?}"
    );
    // The call is recorded as failed: the answer could not be used.
    let failed = server
        .get(&format!(
            "{pb}/events?run_id=bad-answer&type=model_call_failed"
        ))
        .await;
    let failed = &failed.body["events"][0]["data"];
    assert_eq!(failed["because"], "output_invalid", "{failed:#}");
    assert_eq!(failed["usage"]["output_text"], 5);
    assert!(
        failed["issues"].as_array().is_some_and(|i| !i.is_empty()),
        "{failed:#}"
    );
    let got = server.get(&format!("{pb}/runs/bad-answer")).await;
    assert_eq!(got.body["status"], "rejected");
    let record = &got.body["record"];
    assert_eq!(record["usage"]["output_text"], 5, "{record:#}");
    assert!(record["duration_ms"].is_u64());
    assert!(record.get("prompt").is_none(), "{record:#}");

    // Text that is no JSON at all.
    double.script([Reply::Text("seven".into())]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "score",
            json!({"input": {"text": "fine"}}),
        )
        .await;
    let problem = reply.assert_problem(503, "unavailable");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .starts_with("The answer is not JSON"),
        "{problem:#}"
    );
}

#[tokio::test]
async fn a_json_answer_cut_at_max_output_tokens_is_unworkable() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let pb = saved(&server, "score", SCORE).await;
    double.script([Reply::body(json!({
        "id": "msg_cut", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "{\"score\": 7, \"da"}],
        "stop_reason": "max_tokens", "stop_sequence": null,
        "usage": {"input_tokens": 20, "output_tokens": 300}
    }))]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "score",
            json!({"input": {"text": "x"}, "run_id": "cut"}),
        )
        .await;
    let problem = reply.assert_problem(409, "conflict");
    assert_eq!(problem["kind"], "unworkable");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .ends_with("raise config.max_output_tokens"),
        "{problem:#}"
    );
    let got = server.get(&format!("{pb}/runs/cut")).await;
    assert_eq!(
        got.body["record"]["usage"]["output_text"], 300,
        "{:#}",
        got.body
    );
    let events = server.all_events(&pb).await;
    let failed = of_type(&events, "model_call_failed");
    assert_eq!(failed.len(), 1);

    // A text answer cut off succeeds, with finish_reason length.
    let pb_text = "/v1/orgs/acme/playbooks/main";
    let source = brief_review("anthropic/claude-sonnet-4-5");
    server
        .save_definition(pb_text, "reasoning", "review", &source)
        .await;
    double.script([Reply::body(json!({
        "id": "msg_cut2", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "The brief lacks"}],
        "stop_reason": "max_tokens", "stop_sequence": null,
        "usage": {"input_tokens": 20, "output_tokens": 800}
    }))]);
    let reply = server
        .start_run(pb_text, "reasoning", "review", json!({"input": INPUT()}))
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["record"]["finish_reason"], "length");
    assert_eq!(reply.body["record"]["raw_finish_reason"], "max_tokens");
}

#[tokio::test]
async fn rate_limits_and_outages_are_retried_within_the_bound() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;

    // 429 with Retry-After, then 529 overloaded, then an answer: one call, three requests.
    double.script([
        Reply::error(429, "rate_limit_error", "slow down").with_header("retry-after", "1"),
        Reply::error(529, "overloaded_error", "Overloaded"),
        Reply::Text("Fine.".into()),
    ]);
    let started = std::time::Instant::now();
    let reply = server
        .start_run(&pb, "reasoning", "review", json!({"input": INPUT()}))
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After honoured"
    );
    assert_eq!(double.requests().len(), 3);
    let events = server.all_events(&pb).await;
    assert_eq!(of_type(&events, "model_call_started").len(), 1);

    // Three 429s: the run ends unavailable with the seconds to wait.
    double.script([
        Reply::error(429, "rate_limit_error", "slow down").with_header("retry-after", "0"),
        Reply::error(429, "rate_limit_error", "slow down").with_header("retry-after", "0"),
        Reply::error(429, "rate_limit_error", "slow down").with_header("retry-after", "30"),
    ]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "review",
            json!({"input": INPUT(), "run_id": "limited"}),
        )
        .await;
    let problem = reply.assert_problem(503, "unavailable");
    assert_eq!(problem["because"], "rate_limited");
    assert_eq!(problem["retry_after_seconds"], 30, "{problem:#}");
    assert!(
        problem["detail"].as_str().unwrap().contains("anthropic"),
        "{problem:#}"
    );
    let got = server
        .get(&format!(
            "{pb}/events?run_id=limited&type=model_call_failed"
        ))
        .await;
    let failed = &got.body["events"][0]["data"];
    assert_eq!(failed["because"], "rate_limited", "{:#}", got.body);
    assert_eq!(failed["retry_after_ms"], 30_000);
}

#[tokio::test]
async fn a_call_past_its_bound_times_out() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let config = provider_config(
        ProviderKind::Anthropic,
        &double,
        "[limits]\nmodel_call_bound_ms = 400\n",
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;
    double.script([Reply::Hang]);
    let reply = server
        .start_run(&pb, "reasoning", "review", json!({"input": INPUT()}))
        .await;
    let problem = reply.assert_problem(503, "unavailable");
    assert_eq!(problem["because"], "timed_out");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .ends_with("try again later"),
        "{problem:#}"
    );
}

#[tokio::test]
async fn rejected_credentials_are_named_without_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("key");
    std::fs::write(&key_file, "sk-ant-very-secret-key\n").unwrap();
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let config = format!(
        "[providers.anthropic]\nbase_url = \"{}\"\napi_key = {{ file = \"{}\" }}\n",
        double.base_url(),
        key_file.display()
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;
    double.script([Reply::error(
        401,
        "authentication_error",
        "invalid x-api-key sk-ant-very-secret-key",
    )]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "review",
            json!({"input": INPUT(), "run_id": "creds"}),
        )
        .await;
    let problem = reply.assert_problem(503, "unavailable");
    assert_eq!(problem["because"], "credentials_rejected");
    assert!(
        problem["detail"].as_str().unwrap().contains("401"),
        "{problem:#}"
    );
    assert_eq!(
        double.requests()[0].header("x-api-key"),
        Some("sk-ant-very-secret-key")
    );
    // The key reaches no record, event or problem.
    let events = server.all_events(&pb).await;
    let run_record = server.get(&format!("{pb}/runs/creds")).await;
    for text in [
        reply.body.to_string(),
        serde_json::to_string(&events).unwrap(),
        run_record.body.to_string(),
    ] {
        assert!(!text.contains("very-secret"), "{text}");
    }
}

#[tokio::test]
async fn a_model_outside_the_allowed_list_is_never_called() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let config = provider_config(
        ProviderKind::Anthropic,
        &double,
        "[models]\nallowed = [\"anthropic/claude-haiku-*\", \"openai/*\"]\n",
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "review",
            json!({"input": INPUT(), "run_id": "m"}),
        )
        .await;
    let problem = reply.assert_problem(503, "unavailable");
    assert_eq!(problem["kind"], "model_not_offered");
    assert_eq!(problem["because"], "model_not_allowed");
    assert!(double.requests().is_empty());
    let got = server.get(&format!("{pb}/runs/m")).await;
    assert!(got.body["record"].is_null(), "no spending: {:#}", got.body);

    // A provider nobody configured names the configured ones.
    let other = saved_again(&server, &pb, "other", &brief_review("openai/gpt-5")).await;
    let reply = server
        .start_run(&pb, "reasoning", &other, json!({"input": INPUT()}))
        .await;
    let problem = reply.assert_problem(503, "unavailable");
    assert_eq!(problem["because"], "provider_not_configured");
    assert_eq!(problem["kind"], "model_not_offered");
    let detail = problem["detail"].as_str().unwrap();
    assert!(
        detail.contains("openai") && detail.contains("anthropic"),
        "{detail}"
    );
    assert!(!detail.contains("providers."), "names no setting: {detail}");
}

async fn saved_again(server: &TestServer, pb: &str, name: &str, source: &str) -> String {
    server.save_definition(pb, "reasoning", name, source).await;
    name.to_owned()
}

#[tokio::test]
async fn input_and_template_refusals_name_the_field_and_line() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;
    let reply = server
        .start_run(&pb, "reasoning", "review", json!({"input": {"brief": "x"}}))
        .await;
    reply.assert_problem(422, "invalid_input");
    assert_eq!(
        reply.body["issues"][0]["pointer"], "/input/criteria",
        "{:#}",
        reply.body
    );
    assert_eq!(reply.body["issues"][0]["message"], "criteria: is required");

    let source = "---\nmodel: anthropic/claude-sonnet-4-5\n---\nHello {{ input.name }}\nDear {{ input.title }}\n";
    let name = saved_again(&server, &pb, "hello", source).await;
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            &name,
            json!({"input": {"name": "Ann"}, "run_id": "missing"}),
        )
        .await;
    reply.assert_problem(422, "invalid_input");
    let issue = &reply.body["issues"][0];
    assert_eq!(issue["pointer"], "/input/title", "{:#}", reply.body);
    assert_eq!(issue["line"], 5);
    assert!(
        issue["message"].as_str().unwrap().starts_with("Line 5: "),
        "{issue:#}"
    );
    // The same id and input return the recorded invalid_input without a call.
    let again = server
        .start_run(
            &pb,
            "reasoning",
            &name,
            json!({"input": {"name": "Ann"}, "run_id": "missing"}),
        )
        .await;
    assert_eq!(again.body, reply.body);
    assert!(double.requests().is_empty());
}

#[tokio::test]
async fn a_run_id_returns_its_recorded_run_without_a_second_call() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;
    double.script([Reply::Delayed(
        Duration::from_millis(300),
        Box::new(Reply::Text("Once.".into())),
    )]);
    let body = json!({"input": INPUT(), "run_id": "once"});
    // Two requests at once in one server make one attempt.
    let (a, b) = tokio::join!(
        server.start_run(&pb, "reasoning", "review", body.clone()),
        server.start_run(&pb, "reasoning", "review", body.clone())
    );
    assert_eq!((a.status.as_u16(), b.status.as_u16()), (200, 200));
    assert_eq!(a.body, b.body);
    let c = server
        .start_run(&pb, "reasoning", "review", body.clone())
        .await;
    assert_eq!(c.body["output"], "Once.");
    assert_eq!(double.requests().len(), 1);

    // Another input under the same id is a conflict.
    let other = server
        .start_run(
            &pb,
            "reasoning",
            "review",
            json!({"input": {"brief": "b", "criteria": "c"}, "run_id": "once"}),
        )
        .await;
    other.assert_problem(409, "conflict");

    // After unavailable, the same id runs the definition again.
    double.script([
        Reply::error(401, "authentication_error", "no"),
        Reply::Text("Second time.".into()),
    ]);
    let body = json!({"input": INPUT(), "run_id": "again"});
    server
        .start_run(&pb, "reasoning", "review", body.clone())
        .await
        .assert_problem(503, "unavailable");
    let reply = server.start_run(&pb, "reasoning", "review", body).await;
    assert_eq!(reply.body["output"], "Second time.", "{:#}", reply.body);
    let types = server.event_types(&pb, "again").await;
    assert_eq!(
        types,
        [
            "run_started",
            "model_call_started",
            "model_call_failed",
            "run_rejected",
            "run_started",
            "model_call_started",
            "model_call_answered",
            "run_succeeded"
        ]
    );
}

#[tokio::test]
async fn cancel_ends_a_call_in_flight() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;
    double.script([Reply::Hang]);
    let running = {
        let (url, pb) = (server.url.clone(), pb.clone());
        tokio::spawn(async move {
            reqwest::Client::new()
                .post(format!("{url}{pb}/definitions/reasoning/review/runs"))
                .json(&json!({"input": INPUT(), "run_id": "long"}))
                .send()
                .await
                .unwrap()
                .status()
        })
    };
    double.wait_for_requests(1, Duration::from_secs(10)).await;
    let cancelled = server
        .post(
            &format!("{pb}/runs/long/cancel"),
            json!({"detail": "Not needed any more."}),
        )
        .await;
    assert_eq!(cancelled.status, 200, "{:#}", cancelled.body);
    assert_eq!(cancelled.body["status"], "rejected");
    assert_eq!(cancelled.body["problem"]["reason"], "cancelled");
    assert_eq!(cancelled.body["problem"]["detail"], "Not needed any more.");
    assert_eq!(cancelled.body["problem"]["kind"], "requested");
    assert!(
        cancelled.body["record"]["duration_ms"].is_u64(),
        "{:#}",
        cancelled.body
    );
    assert_eq!(running.await.unwrap().as_u16(), 409);
    let again = server
        .post(&format!("{pb}/runs/long/cancel"), json!({}))
        .await;
    again.assert_problem(409, "conflict");
}

/// A workflow's call past its timeout cancels the reasoning run it waited for with the kind
/// `deadline`, while the model call is still in flight.
#[tokio::test]
async fn a_call_past_its_timeout_cancels_the_reasoning_run_with_kind_deadline() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;
    let input = serde_json::to_string(&INPUT()).unwrap();
    let impatient = format!(
        "document:\n  dsl: '1.0.3'\n  namespace: tests\n  name: impatient\n  version: '1.0.0'\ndo:\n  - ask:\n      call: run_definition\n      with:\n        type: reasoning\n        name: review\n        input: {input}\n      timeout:\n        after: PT1S\n"
    );
    server
        .save_definition(&pb, "workflow", "impatient", &impatient)
        .await;
    double.script([Reply::Hang]);
    let reply = server
        .post(
            &format!("{pb}/definitions/workflow/impatient/runs"),
            json!({"run_id": "impatient-1", "input": {}}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    double.wait_for_requests(1, Duration::from_secs(10)).await;
    let child = wait_for(Duration::from_secs(20), "the child's ending", || async {
        let runs = server.get(&format!("{pb}/runs?name=review")).await;
        runs.body["runs"]
            .as_array()
            .and_then(|r| r.first())
            .filter(|c| c["status"] != "started")
            .cloned()
    })
    .await;
    let child_id = child["run_id"].as_str().unwrap();
    let child = server.get(&format!("{pb}/runs/{child_id}")).await.body;
    assert_eq!(child["problem"]["reason"], "cancelled", "{child:#}");
    assert_eq!(child["problem"]["kind"], "deadline", "{child:#}");
    let parent = server.get(&format!("{pb}/runs/impatient-1")).await.body;
    assert_eq!(parent["status"], "rejected", "{parent:#}");
    assert_eq!(parent["problem"]["reason"], "unavailable", "{parent:#}");
}

#[tokio::test]
async fn list_models_offers_the_allowed_models_of_configured_providers() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let config = provider_config(
        ProviderKind::Anthropic,
        &double,
        "[models]\nallowed = [\"anthropic/claude-sonnet-*\", \"team/fast\"]\naliases = { \"team/fast\" = \"anthropic/claude-haiku-4-5\" }\n",
    );
    let server = TestServer::start_with_config(&config).await;
    server.playbook().await;
    let reply = server.get("/v1/orgs/acme/models").await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(
        reply.body,
        json!({
            "models": [
                {"id": "anthropic/claude-sonnet-4-5", "provider": "anthropic", "context_window": 200000, "max_output_tokens": 64000},
                {"id": "team/fast", "provider": "anthropic", "context_window": 200000, "max_output_tokens": 64000, "alias_of": "anthropic/claude-haiku-4-5"}
            ],
            "allowed": ["anthropic/claude-sonnet-*", "team/fast"],
            "providers": ["anthropic"]
        })
    );
    server
        .get("/v1/orgs/nobody/models")
        .await
        .assert_problem(404, "not_found");
}

#[test]
fn a_limit_the_server_does_not_read_is_refused() {
    let config = auto_server::config::Config::parse("[limits]\nmodel_call_bound = 5\n").unwrap();
    let error = config.models().unwrap_err().to_string();
    assert!(
        error.starts_with("limits.model_call_bound is not a limit this runtime reads"),
        "{error}"
    );
    let config = auto_server::config::Config::parse("[limits]\nmodel_call_bound_ms = 0\n").unwrap();
    let error = config.models().unwrap_err().to_string();
    assert_eq!(
        error,
        "limits.model_call_bound_ms: expected a whole number of milliseconds above 0"
    );
}

#[tokio::test]
async fn a_refusal_and_a_request_too_long_end_as_the_page_says() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;
    // The model refuses the content under its policy: invalid_input.
    double.script([Reply::body(json!({
        "id": "msg_refused", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": "refusal", "stop_sequence": null,
        "usage": {"input_tokens": 12, "output_tokens": 0}
    }))]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "review",
            json!({"input": INPUT(), "run_id": "refused"}),
        )
        .await;
    let problem = reply.assert_problem(422, "invalid_input");
    assert_eq!(problem["because"], "content_refused");
    let got = server.get(&format!("{pb}/runs/refused")).await;
    assert_eq!(
        got.body["record"]["usage"]["output_text"], 0,
        "{:#}",
        got.body
    );
    // A refused run is not recorded as invalid_input for the retry rule's sake alone: the same
    // id and input answer what was recorded.
    let again = server
        .start_run(
            &pb,
            "reasoning",
            "review",
            json!({"input": INPUT(), "run_id": "refused"}),
        )
        .await;
    assert_eq!(again.body, reply.body);
    assert_eq!(double.requests().len(), 1);

    // The provider signals the request is too long: conflict, unworkable, not retried.
    double.script([Reply::error(
        413,
        "request_too_large",
        "Request exceeds the maximum size",
    )]);
    let reply = server
        .start_run(&pb, "reasoning", "review", json!({"input": INPUT()}))
        .await;
    let problem = reply.assert_problem(409, "conflict");
    assert_eq!(problem["kind"], "unworkable");
    assert_eq!(problem["because"], "request_too_long");
    assert_eq!(double.requests().len(), 2);
}

#[tokio::test]
async fn a_gateway_passes_allowed_options_and_answers_the_cost() {
    let double = ProviderDouble::start(ProviderKind::OpenAiChat).await;
    let config = format!(
        "[gateways.my-gateway]\nbase_url = \"{}\"\nallowed_provider_options = [\"user\"]\ncost_header = \"x-response-cost\"\n",
        double.base_url()
    );
    let server = TestServer::start_with_config(&config).await;
    let allowed = "---\nmodel: my-gateway/fast-model\nprovider_options:\n  my-gateway:\n    user: team-7\n---\nSay hello to {{ input.name }}.\n";
    let pb = saved(&server, "hello", allowed).await;
    double.script([Reply::body(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "fast-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello Ann."}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}
    }))
    .with_header("x-response-cost", "0.0042")]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "hello",
            json!({"input": {"name": "Ann"}, "run_id": "g"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["record"]["cost_usd"], 0.0042);
    assert_eq!(double.requests()[0].body["user"], "team-7");
    let answered = server
        .get(&format!("{pb}/events?run_id=g&type=model_call_answered"))
        .await;
    assert_eq!(
        answered.body["events"][0]["data"]["cost_usd"], 0.0042,
        "{:#}",
        answered.body
    );

    // A field the gateway does not allow: conflict, unworkable, and nothing is sent.
    let refused = "---\nmodel: my-gateway/fast-model\nprovider_options:\n  my-gateway:\n    route: fallback\n---\nSay hello.\n";
    saved_again(&server, &pb, "routed", refused).await;
    let reply = server
        .start_run(&pb, "reasoning", "routed", json!({"run_id": "r"}))
        .await;
    let problem = reply.assert_problem(409, "conflict");
    assert_eq!(problem["kind"], "unworkable");
    assert!(
        problem["detail"].as_str().unwrap().contains("route"),
        "{problem:#}"
    );
    assert_eq!(double.requests().len(), 1);
    let got = server.get(&format!("{pb}/runs/r")).await;
    assert!(
        got.body["record"].is_null(),
        "nothing spent: {:#}",
        got.body
    );
}

#[tokio::test]
async fn an_answer_past_the_record_is_unworkable_and_a_long_prompt_is_cut() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let source = "---\nmodel: anthropic/claude-sonnet-4-5\n---\n{% system %}{{ input.rules }}{% endsystem %}{{ input.text }}\n";
    let pb = saved(&server, "echo", source).await;

    // An answer over 1,048,574 bytes as JSON cannot be recorded.
    double.script([Reply::Text("x".repeat(1_100_000))]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "echo",
            json!({"input": {"rules": "r", "text": "t"}}),
        )
        .await;
    let problem = reply.assert_problem(409, "conflict");
    assert_eq!(problem["kind"], "unworkable");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .ends_with("lower config.max_output_tokens."),
        "{problem:#}"
    );

    // An answer that fits only without the whole prompt: the record keeps the prompt's start.
    let rules = "R".repeat(120_000);
    let text = "T".repeat(120_000);
    double.script([Reply::Text("a".repeat(950_000))]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "echo",
            json!({"input": {"rules": rules, "text": text}, "run_id": "cut"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body["detail"]);
    let prompt = &reply.body["record"]["prompt"];
    assert_eq!(prompt["truncated"], true);
    let kept = prompt["instructions"].as_str().unwrap();
    assert!(!kept.is_empty() && kept.len() < 120_000 && rules.starts_with(kept));
    let whole = serde_json::to_vec(&reply.body["output"]).unwrap().len()
        + serde_json::to_vec(&reply.body["record"]).unwrap().len();
    assert!(whole <= 1_048_576, "{whole}");
}

#[tokio::test]
async fn a_client_that_goes_away_does_not_stop_the_run() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;
    double.script([Reply::Delayed(
        Duration::from_millis(700),
        Box::new(Reply::Text("Done anyway.".into())),
    )]);
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let gone = impatient
        .post(format!(
            "{}{pb}/definitions/reasoning/review/runs",
            server.url
        ))
        .json(&json!({"input": INPUT(), "run_id": "gone"}))
        .send()
        .await;
    assert!(gone.is_err(), "the client gave up first");
    let started = server.get(&format!("{pb}/runs/gone")).await;
    assert_eq!(started.body["status"], "started");
    // A request with its run id waits for the run and is given what it recorded.
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "review",
            json!({"input": INPUT(), "run_id": "gone"}),
        )
        .await;
    assert_eq!(reply.body["output"], "Done anyway.", "{:#}", reply.body);
    assert_eq!(double.requests().len(), 1);
}

#[tokio::test]
async fn a_function_whose_tool_server_is_not_configured_is_never_called() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let source = "---\nmodel: anthropic/claude-sonnet-4-5\ntools: [graph/search]\n---\nFind {{ input.q }}.\n";
    let pb = saved(&server, "finder", source).await;
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "finder",
            json!({"input": {"q": "x"}, "run_id": "t"}),
        )
        .await;
    let problem = reply.assert_problem(503, "unavailable");
    assert_eq!(problem["kind"], "tool_not_offered");
    assert_eq!(problem["because"], "tool_server_not_configured");
    assert!(
        problem["detail"].as_str().unwrap().contains("graph"),
        "{problem:#}"
    );
    assert!(double.requests().is_empty());
    let events = server.all_events(&pb).await;
    assert!(of_type(&events, "model_call_started").is_empty());
}

/// Two servers on one database: a run going on in one is `taken` for the other, a cancel
/// asked of the other is recorded for the run, and the call already sent still ends the run
/// with its answer.
#[tokio::test]
async fn two_servers_share_a_run_without_a_second_attempt() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let config = auto_server::config::Config::parse(&anthropic_config(&double)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = common::test_store(dir.path()).await;
    let a = TestServer::start_on(store.clone(), Vec::new(), config.models().unwrap(), dir).await;
    let b = TestServer::start_on(
        store,
        Vec::new(),
        config.models().unwrap(),
        tempfile::tempdir().unwrap(),
    )
    .await;
    let pb = saved(&a, "review", &brief_review("anthropic/claude-sonnet-4-5")).await;
    double.script([Reply::Delayed(
        Duration::from_millis(1_500),
        Box::new(Reply::Text("From the first server.".into())),
    )]);
    let body = json!({"input": INPUT(), "run_id": "shared"});
    let first = {
        let (url, pb, body) = (a.url.clone(), pb.clone(), body.clone());
        tokio::spawn(async move {
            let reply = reqwest::Client::new()
                .post(format!("{url}{pb}/definitions/reasoning/review/runs"))
                .json(&body)
                .send()
                .await
                .unwrap();
            reply.json::<Value>().await.unwrap()
        })
    };
    double.wait_for_requests(1, Duration::from_secs(10)).await;
    let taken = b.start_run(&pb, "reasoning", "review", body.clone()).await;
    assert_eq!(taken.assert_problem(409, "conflict")["kind"], "taken");
    let cancel = b.post(&format!("{pb}/runs/shared/cancel"), json!({})).await;
    assert_eq!(cancel.status, 200, "{:#}", cancel.body);
    assert_eq!(cancel.body["status"], "started");
    let ended = first.await.unwrap();
    assert_eq!(ended["output"], "From the first server.", "{ended:#}");
    let got = b.get(&format!("{pb}/runs/shared")).await;
    assert_eq!(got.body["status"], "succeeded");
    assert_eq!(double.requests().len(), 1);
    let types = b.event_types(&pb, "shared").await;
    assert_eq!(
        types,
        [
            "run_started",
            "model_call_started",
            "run_cancel_requested",
            "model_call_answered",
            "run_succeeded"
        ]
    );
}

#[tokio::test]
async fn an_alias_resolves_to_the_model_the_provider_is_asked_for() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let config = provider_config(
        ProviderKind::Anthropic,
        &double,
        "[models]\naliases = { \"team/fast\" = \"anthropic/claude-haiku-4-5\" }\n",
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = saved(&server, "review", &brief_review("team/fast")).await;
    double.script([Reply::Text("Quick.".into())]);
    let reply = server
        .start_run(&pb, "reasoning", "review", json!({"input": INPUT()}))
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    let model = &reply.body["record"]["model"];
    assert_eq!(model["requested"], "team/fast");
    assert_eq!(model["resolved"], "anthropic/claude-haiku-4-5");
    assert_eq!(model["answered"], "claude-haiku-4-5");
    assert_eq!(double.requests()[0].body["model"], "claude-haiku-4-5");
}

/// "After unavailable, conflict or a failure, they run the definition again": the same run id
/// runs the definition's latest version, a fixed document included, with the today and now of
/// its new start.
#[tokio::test]
async fn a_run_id_after_unavailable_or_conflict_runs_the_latest_version_from_a_new_start() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let stamped = |word: &str| {
        format!(
            "---\nmodel: anthropic/claude-sonnet-4-5\n---\n{word} {{{{ input.q }}}} at {{{{ now }}}} on {{{{ today }}}}.\n"
        )
    };
    let pb = saved(&server, "stamp", &stamped("First")).await;
    let started_at = |run: &Value| {
        chrono::DateTime::parse_from_rfc3339(run["started_at"].as_str().unwrap())
            .unwrap()
            .with_timezone(&chrono::Utc)
    };
    let sent = |n: usize| double.requests()[n].body.to_string();
    let body = json!({"input": {"q": "rust"}, "run_id": "stamp-1"});

    // The provider rejects a setting: conflict, unworkable. A fixed document runs under the id.
    double.script([
        Reply::error(400, "invalid_request_error", "max_tokens: too large"),
        Reply::error(401, "authentication_error", "invalid x-api-key"),
        Reply::Text("Stamped.".into()),
    ]);
    let reply = server
        .start_run(&pb, "reasoning", "stamp", body.clone())
        .await;
    assert_eq!(reply.assert_problem(409, "conflict")["kind"], "unworkable");
    let first = server.get(&format!("{pb}/runs/stamp-1")).await.body;
    assert_eq!(first["definition_version"], 1);
    assert!(sent(0).contains("First rust at "), "{}", sent(0));

    let updated = server
        .update_definition(&pb, "reasoning", "stamp", &stamped("Second"))
        .await;
    assert_eq!(updated.body["version"], 2, "{:#}", updated.body);
    server
        .start_run(&pb, "reasoning", "stamp", body.clone())
        .await
        .assert_problem(503, "unavailable");
    let second = server.get(&format!("{pb}/runs/stamp-1")).await.body;
    assert_eq!(second["definition_version"], 2, "{second:#}");
    assert!(started_at(&second) > started_at(&first), "{second:#}");
    assert!(sent(1).contains("Second rust at "), "{}", sent(1));

    // After unavailable, it runs again, with the time of its new start.
    let reply = server.start_run(&pb, "reasoning", "stamp", body).await;
    assert_eq!(reply.body["output"], "Stamped.", "{:#}", reply.body);
    let third = server.get(&format!("{pb}/runs/stamp-1")).await.body;
    assert_eq!(third["definition_version"], 2);
    let start = started_at(&third);
    assert!(start > started_at(&second), "{third:#}");
    let now = start.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let today = start.format("%Y-%m-%d").to_string();
    let last = sent(double.requests().len() - 1);
    assert!(
        last.contains(&format!("Second rust at {now} on {today}.")),
        "{last}"
    );
    let message = third["record"]["prompt"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("Second rust at {now} on {today}.")),
        "{message}"
    );
}

/// "After unavailable, conflict or a failure, they run the definition again": a run that a
/// server's fault ended `failed` (written here as that server left it) runs again under its
/// id, as a new attempt that calls the model.
#[tokio::test]
async fn a_run_id_after_a_failure_runs_again() {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = common::test_store(dir.path()).await;
    let server =
        TestServer::start_with_config_on(store.clone(), &anthropic_config(&double), dir).await;
    let source = "---\nmodel: anthropic/claude-sonnet-4-5\n---\nSay {{ input.q }}.\n";
    let pb = saved(&server, "say", source).await;
    let playbook = auto_store::PlaybookRef::new("acme", "main");
    let event = |seq: i64, event_type: &str| {
        let mut event =
            auto_store::NewEvent::new(format!("f-1-{seq}"), event_type, "/runs/f-1".to_owned());
        event.subject = Some("reasoning/say".into());
        event.run_id = Some("f-1".into());
        event.run_seq = Some(seq);
        event
    };
    let new = common::recorded_run("f-1", "reasoning", "say", json!({"q": "rust"}));
    store
        .start_run(&playbook, new, vec![event(1, "run_started")])
        .await
        .unwrap();
    let failed = auto_store::RunEnding {
        status: auto_store::RunStatus::Failed,
        output: None,
        record: None,
        problem: Some(json!({"reason": "failed", "status": 500,
            "title": "The server could not complete the request"})),
    };
    store
        .end_run(&playbook, "f-1", failed, vec![event(2, "run_failed")])
        .await
        .unwrap();
    assert_eq!(
        server.get(&format!("{pb}/runs/f-1")).await.body["status"],
        "failed"
    );

    double.script([Reply::Text("Again.".into())]);
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "say",
            json!({"input": {"q": "rust"}, "run_id": "f-1"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["output"], "Again.");
    let again = server.get(&format!("{pb}/runs/f-1")).await.body;
    assert_eq!(again["status"], "succeeded", "{again:#}");
    assert_eq!(double.requests().len(), 1);
}

/// "A rejection for an untrusted certificate says that the operator must act. Neither names a
/// setting": a provider whose certificate no trusted authority signs is not retried as an
/// outage, and the run ends unavailable without "try again later".
#[tokio::test]
async fn an_untrusted_provider_certificate_says_the_operator_must_act() {
    let double = ProviderDouble::start_tls(ProviderKind::Anthropic).await;
    assert!(double.base_url().starts_with("https://"));
    let server = TestServer::start_with_config(&anthropic_config(&double)).await;
    let pb = saved(
        &server,
        "review",
        &brief_review("anthropic/claude-sonnet-4-5"),
    )
    .await;
    let reply = server
        .start_run(
            &pb,
            "reasoning",
            "review",
            json!({"input": INPUT(), "run_id": "untrusted"}),
        )
        .await;
    let problem = reply.assert_problem(503, "unavailable");
    assert!(problem["kind"].is_null(), "{problem:#}");
    assert_eq!(problem["because"], "provider_unavailable");
    let detail = problem["detail"].as_str().unwrap_or_default();
    assert!(
        detail.starts_with("anthropic cannot be used: its TLS certificate is not trusted ("),
        "{detail}"
    );
    assert!(
        detail.ends_with("the operator must act before the model can be called"),
        "{detail}"
    );
    assert!(!detail.contains("try again"), "{detail}");
    assert!(
        !detail.contains("base_url") && !detail.contains("providers."),
        "names no setting: {detail}"
    );
    // One attempt: no retry mends a certificate.
    assert_eq!(double.handshakes(), 1);
    assert!(double.requests().is_empty());
    let got = server.get(&format!("{pb}/runs/untrusted")).await.body;
    assert!(
        got["record"].is_null(),
        "nothing was sent, nothing spent: {got:#}"
    );
}

/// A schema of `n` string fields f01, f02, ..., and an input giving each a number: `n`
/// distinct issues, one per field.
fn many_fields(n: usize) -> (String, Value) {
    let fields: Vec<String> = (1..=n).map(|i| format!("f{i:02}")).collect();
    let properties: String = fields
        .iter()
        .map(|f| format!("      {f}: {{ type: string }}\n"))
        .collect();
    let source = format!(
        "---\nmodel: anthropic/claude-sonnet-4-5\ninput:\n  schema:\n    type: object\n    properties:\n{properties}---\nHello.\n"
    );
    let input: serde_json::Map<String, Value> =
        fields.iter().map(|f| (f.clone(), json!(1))).collect();
    (source, Value::Object(input))
}

/// "When an input ... does not match, the rejection reports each distinct issue once. It lists
/// at most 20, then one line that counts the rest": 20 issues are listed whole, 21 as 20 and a
/// count line under /input, never under the pointer of the issue it counts.
#[tokio::test]
async fn an_input_refusal_lists_at_most_20_issues_then_a_count_line() {
    let server = TestServer::start().await;
    let (twenty, twenty_input) = many_fields(auto_schema::VALIDATION_ISSUES_SHOWN_MAX);
    let pb = saved(&server, "twenty", &twenty).await;
    let reply = server
        .start_run(&pb, "reasoning", "twenty", json!({"input": twenty_input}))
        .await;
    let problem = reply.assert_problem(422, "invalid_input");
    let issues = problem["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 20, "{problem:#}");
    assert_eq!(issues[19]["pointer"], "/input/f20");
    assert_eq!(
        issues[19]["message"],
        "f20: expected a string, found a number"
    );

    let (many, many_input) = many_fields(auto_schema::VALIDATION_ISSUES_SHOWN_MAX + 5);
    saved_again(&server, &pb, "many", &many).await;
    let reply = server
        .start_run(&pb, "reasoning", "many", json!({"input": many_input}))
        .await;
    let problem = reply.assert_problem(422, "invalid_input");
    let issues = problem["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 21, "{problem:#}");
    assert_eq!(issues[19]["pointer"], "/input/f20");
    assert_eq!(
        issues[20],
        json!({"pointer": "/input", "message": "5 more issues are not shown."})
    );
}
