//! Reasoning functions saved over HTTP with the real checker: the page's example is created
//! with its description, a schema's provider warnings are shown by every read, and a broken
//! document is refused with each issue under `/source` by line, path and message.

mod common;

use common::{BRIEF_REVIEW, TestServer};
use serde_json::json;

/// An output schema whose `minimum` (line 8) Anthropic models do not receive.
const WITH_WARNING: &str = include_str!("data/add-up-with-a-warning.md");

/// The page's warning, word for word.
const PAGE_WARNING: &str = "Line 8, /output/schema/properties/total/minimum: minimum is not enforced while Anthropic models write the answer; an answer outside it fails as output_invalid (anthropic, bedrock, bedrock-anthropic, vertex-anthropic)";

#[tokio::test]
async fn the_page_example_is_saved_with_its_description() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let reply = server
        .post_definition(&pb, "reasoning", "review-brief", BRIEF_REVIEW)
        .await;
    assert_eq!(reply.status, 201, "{:#}", reply.body);
    assert_eq!(reply.body["type"], "reasoning");
    assert_eq!(reply.body["version"], 1);
    assert_eq!(
        reply.body["description"],
        "Reviews a campaign brief against the team's criteria"
    );
    assert_eq!(reply.body["warnings"], json!([]));
    assert_eq!(reply.body["source"], BRIEF_REVIEW);
    assert_eq!(
        reply.body["input_schema"]["required"],
        json!(["brief", "criteria"])
    );

    let got = server
        .get(&format!("{pb}/definitions/reasoning/review-brief"))
        .await;
    assert_eq!(got.status, 200, "{:#}", got.body);
    assert_eq!(got.body["description"], reply.body["description"]);
}

#[tokio::test]
async fn provider_warnings_are_saved_and_shown_by_every_read() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let created = server
        .post_definition(&pb, "reasoning", "add-up", WITH_WARNING)
        .await;
    assert_eq!(created.status, 201, "{:#}", created.body);
    assert_eq!(created.body["warnings"], json!([PAGE_WARNING]));
    assert_eq!(created.body["output_schema"]["required"], json!(["total"]));

    let got = server
        .get(&format!("{pb}/definitions/reasoning/add-up"))
        .await;
    assert_eq!(got.body["warnings"], json!([PAGE_WARNING]));
    let listed = server
        .get(&format!("{pb}/definitions?type=reasoning"))
        .await;
    assert_eq!(
        listed.body["definitions"][0]["warnings"],
        json!([PAGE_WARNING])
    );

    // An update keeps showing the warnings of the version it makes.
    let updated = server
        .put(
            &format!("{pb}/definitions/reasoning/add-up"),
            json!({"source": WITH_WARNING.replace("Add up", "Sum"), "diagram": "none"}),
        )
        .await;
    assert_eq!(updated.status, 200, "{:#}", updated.body);
    assert_eq!(updated.body["version"], 2);
    assert_eq!(updated.body["warnings"], json!([PAGE_WARNING]));
}

#[tokio::test]
async fn a_broken_document_is_refused_with_every_issue_under_source() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let source = "---
model: anthropic/claude-sonnet-4-5
config:
  temperature: warm
provider_options:
  anthropic:
    effort: high
---
Hello {{ user }}
";
    let reply = server
        .post_definition(&pb, "reasoning", "broken", source)
        .await;
    let problem = reply.assert_problem(422, "invalid_input");
    assert_eq!(
        problem["issues"],
        json!([
            {
                "pointer": "/source",
                "line": 4,
                "path": "/config/temperature",
                "message": "Line 4, /config/temperature: Expected number.",
            },
            {
                "pointer": "/source",
                "line": 7,
                "path": "/provider_options/anthropic/effort",
                "message": "Line 7, /provider_options/anthropic/effort: effort is not offered: the front matter sets it.",
            },
            {
                "pointer": "/source",
                "line": 9,
                "message": "Line 9: Unknown variable user: a template reads only input, today, now and the names it creates.",
            },
        ]),
        "{problem:#}"
    );

    // Nothing was saved.
    let got = server
        .get(&format!("{pb}/definitions/reasoning/broken"))
        .await;
    got.assert_problem(404, "not_found");
}

#[tokio::test]
async fn a_rejection_shows_twenty_issues_then_counts_the_rest() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let keys: String = (0..25).map(|i| format!("extra{i:02}: 1\n")).collect();
    let source = format!("---\nmodel: openai/gpt-5\n{keys}---\nHi\n");
    let reply = server
        .post_definition(&pb, "reasoning", "many", &source)
        .await;
    let problem = reply.assert_problem(422, "invalid_input");
    let issues = problem["issues"].as_array().expect("issues");
    assert_eq!(issues.len(), 21, "{problem:#}");
    assert_eq!(issues[0]["line"], 3);
    assert_eq!(issues[0]["path"], "/extra00");
    assert_eq!(
        issues[20],
        json!({
            "pointer": "/source",
            "line": 23,
            "message": "Line 23: 5 more issues are not shown.",
        })
    );
}
