//! Output schemas as each provider takes them, end to end through HTTP against provider
//! doubles that refuse what the real APIs refuse: Anthropic models (directly, on Vertex AI and
//! on Bedrock) receive no bounds and `oneOf` as `anyOf` while the runtime checks the schema as
//! written; every output shape runs through OpenAI's and Azure's strict structured outputs
//! and the others, with each rule a shape adds, its nulls read back as absent, and an answer
//! too large to record; and a definition shows the provider warnings its model can reach.

mod common;

use auto_testkit::{ProviderDouble, ProviderKind, Reply};
use common::TestServer;
use serde_json::{Value, json};

fn secret(name: &str) -> String {
    let path = std::env::temp_dir().join(format!(
        "auto-provider-schemas-{}-{name}",
        std::process::id()
    ));
    std::fs::write(&path, format!("test-{name}")).expect("a secret file");
    format!("{{ file = {:?} }}", path.display().to_string())
}

/// The provider's configuration on its double, and the model a definition names.
fn provider(kind: ProviderKind, double: &ProviderDouble) -> (String, &'static str) {
    let url = double.base_url();
    match kind {
        ProviderKind::Anthropic => (
            format!("[providers.anthropic]\nbase_url = \"{url}\"\n"),
            "anthropic/claude-sonnet-4-5",
        ),
        ProviderKind::OpenAiChat => (
            format!("[providers.openai]\nbase_url = \"{url}\"\n"),
            "openai/gpt-5-mini",
        ),
        ProviderKind::Gemini => (
            format!("[providers.google]\nbase_url = \"{url}\"\n"),
            "google/gemini-2.5-flash",
        ),
        ProviderKind::Azure => (
            format!(
                "[providers.azure]\nbase_url = \"{url}\"\napi_key = {}\n",
                secret("azure-key")
            ),
            "azure/gpt-5-mini",
        ),
        ProviderKind::VertexGemini => (
            format!(
                "[providers.vertex]\nbase_url = \"{url}\"\nproject = \"p\"\nlocation = \"us-east5\"\naccess_token = {}\n",
                secret("vertex-token")
            ),
            "vertex/gemini-2.5-flash",
        ),
        ProviderKind::VertexAnthropic => (
            format!(
                "[providers.vertex-anthropic]\nbase_url = \"{url}\"\nproject = \"p\"\nlocation = \"us-east5\"\naccess_token = {}\n",
                secret("vertex-token")
            ),
            "vertex-anthropic/claude-sonnet-4-5",
        ),
        ProviderKind::Bedrock => (
            format!(
                "[providers.bedrock]\nbase_url = \"{url}\"\nregion = \"us-east-1\"\naccess_key_id = {}\nsecret_access_key = {}\n",
                secret("access-key-id"),
                secret("secret-access-key")
            ),
            "bedrock/anthropic.claude-sonnet-4-5-v1:0",
        ),
    }
}

const EVERY_KIND: [ProviderKind; 7] = [
    ProviderKind::Anthropic,
    ProviderKind::OpenAiChat,
    ProviderKind::Gemini,
    ProviderKind::Azure,
    ProviderKind::VertexGemini,
    ProviderKind::VertexAnthropic,
    ProviderKind::Bedrock,
];

/// Saves a reasoning function in the server's playbook; gives the playbook and the definition.
async fn save(server: &TestServer, name: &str, source: &str) -> (String, Value) {
    let pb = playbook(server).await;
    let definition = server.save_definition(&pb, "reasoning", name, source).await;
    (pb, definition)
}

/// The server's one playbook, made on first use.
async fn playbook(server: &TestServer) -> String {
    let listed = server.get("/v1/orgs/acme/playbooks/main").await;
    if listed.status == 200 {
        "/v1/orgs/acme/playbooks/main".to_owned()
    } else {
        server.playbook().await
    }
}

async fn run(server: &TestServer, pb: &str, name: &str) -> common::Reply {
    server
        .start_run(pb, "reasoning", name, json!({"input": {}}))
        .await
}

/// The schema the provider received in the double's last request.
fn sent_schema(kind: ProviderKind, double: &ProviderDouble) -> Value {
    let body = double.requests().last().expect("a request").body.clone();
    match kind {
        ProviderKind::Anthropic | ProviderKind::VertexAnthropic => {
            body["output_config"]["format"]["schema"].clone()
        }
        ProviderKind::OpenAiChat | ProviderKind::Azure => {
            body["response_format"]["json_schema"]["schema"].clone()
        }
        ProviderKind::Gemini | ProviderKind::VertexGemini => {
            body["generationConfig"]["responseJsonSchema"].clone()
        }
        ProviderKind::Bedrock => serde_json::from_str(
            body["outputConfig"]["textFormat"]["structure"]["jsonSchema"]["schema"]
                .as_str()
                .expect("the schema as a JSON string"),
        )
        .expect("JSON"),
    }
}

fn bounded(model: &str) -> String {
    format!(
        r#"---
model: {model}
output:
  format: json
  schema:
    type: object
    additionalProperties: false
    required: [score, tags, note, pick]
    properties:
      score: {{ type: integer, minimum: 0, maximum: 10, multipleOf: 2 }}
      tags: {{ type: array, minItems: 2, uniqueItems: true, items: {{ type: string, maxLength: 12 }} }}
      note: {{ type: string, minLength: 1 }}
      pick: {{ oneOf: [{{ type: string }}, {{ type: integer }}] }}
---
Score it.
"#
    )
}

/// Issue 20: Anthropic's API answers 400 to `minimum` and the like, so a definition with them
/// ended `conflict`. Now the schema is sent without them, `oneOf` as `anyOf`, and the answer
/// is still checked against the schema as written.
#[tokio::test]
async fn anthropic_models_get_no_bounds_and_the_answer_is_checked_against_them() {
    for kind in [
        ProviderKind::Anthropic,
        ProviderKind::VertexAnthropic,
        ProviderKind::Bedrock,
    ] {
        let double = ProviderDouble::start(kind).await;
        let (config, model) = provider(kind, &double);
        let server = TestServer::start_with_config(&config).await;
        let (pb, definition) = save(&server, "score", &bounded(model)).await;
        let warnings = definition["warnings"].to_string();
        assert!(
            warnings.contains("/output/schema/properties/score/minimum: minimum is not enforced while Anthropic models write the answer"),
            "{warnings}"
        );

        double.script([Reply::Json(
            json!({"score": 4, "tags": ["a", "b"], "note": "n", "pick": 3}),
        )]);
        let reply = run(&server, &pb, "score").await;
        assert_eq!(reply.status, 200, "{kind:?}: {:#}", reply.body);
        assert_eq!(reply.body["output"]["tags"], json!(["a", "b"]));
        assert_eq!(
            sent_schema(kind, &double),
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["score", "tags", "note", "pick"],
                "properties": {
                    "score": {"type": "integer"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "note": {"type": "string"},
                    "pick": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                },
            }),
            "{kind:?}"
        );

        // Outside the bounds the model did not receive: output_invalid, at each field.
        double.script([Reply::Json(
            json!({"score": 11, "tags": ["a", "a"], "note": "", "pick": 3}),
        )]);
        let reply = run(&server, &pb, "score").await;
        let problem = reply.assert_problem(503, "unavailable");
        assert_eq!(problem["because"], "output_invalid", "{kind:?}");
        let fields: Vec<&str> = problem["issues"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|issue| issue["pointer"].as_str())
            .collect();
        for field in ["/output/score", "/output/tags", "/output/note"] {
            assert!(
                fields.iter().any(|f| f.ends_with(field)),
                "{kind:?}: {problem:#}"
            );
        }
    }
}

/// A definition of each shape, with the model named.
fn shaped(model: &str, shape: &str) -> String {
    format!("---\nmodel: {model}\noutput:\n  shape: {shape}\n---\nDraw it.\n")
}

/// Each shape's answer with its optional fields null, and as the run keeps it.
fn shape_answers() -> Vec<(&'static str, Value, Value)> {
    vec![
        (
            "text",
            json!({"title": null, "text": "**Done**"}),
            json!({"text": "**Done**"}),
        ),
        (
            "categories",
            json!({"title": "Sales", "unit": null, "categories": [{"name": "a", "value": 1}, {"name": "b", "value": 2.5}]}),
            json!({"title": "Sales", "categories": [{"name": "a", "value": 1}, {"name": "b", "value": 2.5}]}),
        ),
        (
            "series",
            json!({"title": null, "unit": "EUR", "lines": [
                {"name": "d", "points": [{"x": "2026-01-01", "y": 1}, {"x": "2026-02-01", "y": 2}]},
                {"name": "t", "points": [{"x": "2026-01-01T10:00:00+02:00", "y": 1}, {"x": "2026-01-01T09:00:00Z", "y": 2}]},
                {"name": "n", "points": [{"x": 1, "y": 1}, {"x": 2.5, "y": 2}]}]}),
            json!({"unit": "EUR", "lines": [
                {"name": "d", "points": [{"x": "2026-01-01", "y": 1}, {"x": "2026-02-01", "y": 2}]},
                {"name": "t", "points": [{"x": "2026-01-01T10:00:00+02:00", "y": 1}, {"x": "2026-01-01T09:00:00Z", "y": 2}]},
                {"name": "n", "points": [{"x": 1, "y": 1}, {"x": 2.5, "y": 2}]}]}),
        ),
        (
            "table",
            json!({"title": null, "columns": [{"name": "n", "type": "number"}, {"name": "any", "type": null}, {"name": "d", "type": "date"}],
                   "rows": [[1, "x", "2026-04-01"], [null, true, null]]}),
            json!({"columns": [{"name": "n", "type": "number"}, {"name": "any"}, {"name": "d", "type": "date"}],
                   "rows": [[1, "x", "2026-04-01"], [null, true, null]]}),
        ),
    ]
}

/// Issue 20: the shapes' schemas had optional properties, which OpenAI's and Azure's strict
/// structured outputs refuse. Every shape runs through every provider's double, each refusing
/// what its API refuses, and a null optional field reads back as absent.
#[tokio::test]
async fn every_shape_runs_through_every_provider() {
    for kind in EVERY_KIND {
        let double = ProviderDouble::start(kind).await;
        let (config, model) = provider(kind, &double);
        let server = TestServer::start_with_config(&config).await;
        for (shape, answer, kept) in shape_answers() {
            let (pb, definition) = save(&server, shape, &shaped(model, shape)).await;
            assert_eq!(definition["warnings"], json!([]), "{kind:?} {shape}");
            double.script([Reply::Json(answer)]);
            let reply = run(&server, &pb, shape).await;
            assert_eq!(reply.status, 200, "{kind:?} {shape}: {:#}", reply.body);
            assert_eq!(reply.body["output"], kept, "{kind:?} {shape}");
            assert_eq!(
                sent_schema(kind, &double),
                definition["output_schema"],
                "{kind:?} {shape}"
            );
        }
    }
}

/// The rules each shape adds beyond its schema, as a run meets them: output_invalid with the
/// rule's words at the field; and an answer that leaves an optional field out.
#[tokio::test]
async fn every_rule_of_every_shape_fails_a_run_as_output_invalid() {
    let double = ProviderDouble::start(ProviderKind::OpenAiChat).await;
    let (config, model) = provider(ProviderKind::OpenAiChat, &double);
    let server = TestServer::start_with_config(&config).await;
    let cases = [
        ("text", json!({"text": "no title at all"}), None),
        (
            "text",
            json!({"title": null}),
            Some("/text: Missing: the schema requires it"),
        ),
        (
            "categories",
            json!({"title": null, "unit": null, "categories": [{"name": "a", "value": 1}, {"name": "a", "value": 2}]}),
            Some(
                "/categories/1/name: Repeats the category name \"a\", already at /categories/0/name; category names must be unique",
            ),
        ),
        (
            "series",
            json!({"lines": [{"name": "l", "points": [{"x": "2026-01-02", "y": 1}, {"x": "2026-01-01", "y": 2}]}]}),
            Some(
                "/lines/0/points/1/x: Expected an x after \"2026-01-02\", the point before; a line's x values must increase strictly",
            ),
        ),
        (
            "series",
            json!({"lines": [{"name": "l", "points": [{"x": 1, "y": 1}, {"x": "2026-01-01", "y": 2}]}]}),
            Some(
                "/lines/0/points/1/x: Expected a number like the line's first x; a line's x values must be of one kind",
            ),
        ),
        (
            "table",
            json!({"columns": [{"name": "a"}, {"name": "b"}], "rows": [["x"]]}),
            Some("/rows/0: Expected 2 cells, one for each column; found 1"),
        ),
        (
            "table",
            json!({"columns": [{"name": "n", "type": "number"}], "rows": [["7"]]}),
            Some(
                "/rows/0/0: Expected a number or null, as the column \"n\" holds number values; found a string",
            ),
        ),
        (
            "table",
            json!({"columns": [{"name": "d", "type": "date"}], "rows": [["April"]]}),
            Some(
                "/rows/0/0: Expected a date such as 2026-04-01 or null, as the column \"d\" holds date values; found a string",
            ),
        ),
    ];
    for (i, (shape, answer, words)) in cases.into_iter().enumerate() {
        let name = format!("{shape}-{i}");
        let (pb, _) = save(&server, &name, &shaped(model, shape)).await;
        double.script([Reply::Json(answer.clone())]);
        let reply = run(&server, &pb, &name).await;
        match words {
            None => {
                assert_eq!(reply.status, 200, "{name}: {:#}", reply.body);
                assert_eq!(reply.body["output"], answer);
            }
            Some(words) => {
                let problem = reply.assert_problem(503, "unavailable");
                assert_eq!(problem["because"], "output_invalid", "{name}");
                assert!(
                    reply.issue_messages().contains(&words.to_owned()),
                    "{name}: {:?}",
                    reply.issue_messages()
                );
            }
        }
    }
}

/// A shaped answer too large to record ends the run as the page says of any output past the
/// record: conflict, unworkable.
#[tokio::test]
async fn a_shaped_answer_too_large_to_record_is_unworkable() {
    let double = ProviderDouble::start(ProviderKind::OpenAiChat).await;
    let (config, model) = provider(ProviderKind::OpenAiChat, &double);
    let server = TestServer::start_with_config(&config).await;
    let (pb, _) = save(&server, "big", &shaped(model, "text")).await;
    double.script([Reply::Json(
        json!({"title": null, "text": "x".repeat(1_100_000)}),
    )]);
    let reply = run(&server, &pb, "big").await;
    let problem = reply.assert_problem(409, "conflict");
    assert_eq!(problem["kind"], "unworkable");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .ends_with("lower config.max_output_tokens."),
        "{problem:#}"
    );
}

const LOOSE_SCHEMA: &str = r#"
    type: object
    required: [total]
    properties:
      total: { type: number, minimum: 0 }
      note: { type: string }"#;

async fn warnings_of(server: &TestServer, kind: &str, source: &str) -> Vec<String> {
    let pb = playbook(server).await;
    static SAVED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let name = format!(
        "w{}",
        SAVED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let saved = server.save_definition(&pb, kind, &name, source).await;
    serde_json::from_value(saved["warnings"].clone()).expect("warnings")
}

/// Issue 20: OpenAI's strict-mode warnings were shown for an Anthropic model, and for
/// functions that send no schema to any model. A definition shows the warnings of the
/// providers its model can reach: its provider's family, all of them for a gateway; none for a
/// computation or an interaction.
#[tokio::test]
async fn a_definition_shows_the_warnings_of_the_providers_its_model_reaches() {
    let server = TestServer::start().await;
    let reasoning = |model: &str| {
        format!(
            "---\nmodel: {model}\noutput:\n  format: json\n  schema:{LOOSE_SCHEMA}\n---\nSum it.\n"
        )
    };
    let anthropic_min = "Line 9, /output/schema/properties/total/minimum: minimum is not enforced while Anthropic models write the answer; an answer outside it fails as output_invalid (anthropic, bedrock, bedrock-anthropic, vertex-anthropic)";
    let openai = "OpenAI and Azure strict structured outputs";
    let google = "(google, vertex)";
    let has = |warnings: &[String], words: &str| warnings.iter().any(|w| w.contains(words));

    for model in [
        "anthropic/claude-sonnet-4-5",
        "bedrock-anthropic/anthropic.claude-sonnet-4-5",
        "vertex-anthropic/claude-sonnet-4-5",
    ] {
        let warnings = warnings_of(&server, "reasoning", &reasoning(model)).await;
        assert!(
            warnings.contains(&anthropic_min.to_owned()),
            "{model}: {warnings:?}"
        );
        assert!(!has(&warnings, openai), "{model}: {warnings:?}");
        assert!(!has(&warnings, google), "{model}: {warnings:?}");
    }
    for model in ["openai/gpt-5-mini", "azure/gpt-5-mini"] {
        let warnings = warnings_of(&server, "reasoning", &reasoning(model)).await;
        assert!(
            has(
                &warnings,
                "an object without \"additionalProperties\": false is rejected by OpenAI and Azure strict structured outputs"
            ),
            "{model}: {warnings:?}"
        );
        assert!(
            has(
                &warnings,
                "note is not in required, and OpenAI and Azure strict structured outputs reject an optional property"
            ),
            "{model}: {warnings:?}"
        );
        assert!(!has(&warnings, "Anthropic"), "{model}: {warnings:?}");
    }
    let warnings = warnings_of(&server, "reasoning", &reasoning("google/gemini-2.5-flash")).await;
    assert!(
        !has(&warnings, openai) && !has(&warnings, "Anthropic"),
        "{warnings:?}"
    );
    // A gateway may front any model: every provider's warnings.
    let warnings = warnings_of(
        &server,
        "reasoning",
        &reasoning("router/anthropic/claude-sonnet-4-5"),
    )
    .await;
    assert!(warnings.contains(&anthropic_min.to_owned()), "{warnings:?}");
    assert!(has(&warnings, openai), "{warnings:?}");

    // No model writes a computation's or an interaction's output.
    let computation = format!(
        "---\noutput:\n  schema:{LOOSE_SCHEMA}\n---\nSums.\n\n```ts\nexport default function () {{ return {{ total: 1 }}; }}\n```\n"
    );
    assert_eq!(
        warnings_of(&server, "computation", &computation).await,
        Vec::<String>::new()
    );
    let interaction = format!(
        "---\nto: owner@example.com\nexpires: P1D\noutput:\n  schema:{LOOSE_SCHEMA}\n---\nWhat is the total?\n"
    );
    assert_eq!(
        warnings_of(&server, "interaction", &interaction).await,
        Vec::<String>::new()
    );
}
