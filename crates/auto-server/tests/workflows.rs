//! Workflow documents saved through the API: the page's example with its generated overview,
//! and a refusal in the workflow page's form.

mod common;

use common::TestServer;
use serde_json::json;

const PAGE_EXAMPLE: &str = include_str!("../../auto-engine/tests/workflow/000-page-example.yaml");
const IF_INPUT: &str = include_str!("../../auto-engine/tests/workflow/014-if-input.yaml");

#[tokio::test]
async fn the_page_example_is_saved_with_its_overview() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let saved = server
        .save_definition(&pb, "workflow", "review-and-approve", PAGE_EXAMPLE)
        .await;
    assert_eq!(
        saved["description"],
        "Reviews a campaign brief, then asks its owner to approve the review."
    );
    let overview = saved["overview"].as_str().unwrap();
    assert!(overview.contains("review-campaign-brief"), "{overview}");
    assert!(overview.contains("flowchart"), "{overview}");
    assert_eq!(saved["triggers"], json!([]));
    assert_eq!(saved["triggers_since"], json!(null));
}

#[tokio::test]
async fn a_refusal_reads_as_the_workflow_page_shows_it() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let reply = server
        .post_definition(&pb, "workflow", "case", IF_INPUT)
        .await;
    let problem = reply.assert_problem(422, "invalid_input");
    assert_eq!(
        problem["issues"][0],
        json!({"pointer": "/source", "line": 8, "column": 11, "path": "/do/0/check/if", "message": "Line 8, column 11: at /do/0/check/if: Cannot find name '$input'."})
    );
}
