//! Interaction functions that ask a person, end to end through HTTP: the workflow page's
//! review-and-approve example approved, revised and unanswered (with a reasoning function
//! answered by a provider double), a run on its own with its inbox request, answers refused and
//! taken, expiry that outlasts a restart, cancels, roles, and the `expires` limit at its edge.
//! Webhooks and tools have their own suite, `interaction_webhooks_and_tools.rs`.

mod common;

use std::time::Duration;

use auto_server::auth::{KeyEntry, Role, new_key};
use auto_testkit::{ProviderDouble, ProviderKind, Reply};
use common::{TestServer, wait_for};
use serde_json::{Value, json};

const REVIEW: &str = include_str!("data/review-campaign-brief.md");

const APPROVE: &str = include_str!("data/approve-campaign-brief.md");

const REVIEW_AND_APPROVE: &str = include_str!("data/review-and-approve.yaml");

const ASK_UNCAUGHT: &str = include_str!("data/ask-for-approval-uncaught.yaml");

const REVIEW_TEXT: &str = "Ready: all four criteria are met.";

fn approve_expiring(expires: &str) -> String {
    APPROVE.replace("expires: P2D", &format!("expires: {expires}"))
}

/// A server whose Anthropic provider is a double answering the review, and the page's three
/// definitions saved in its playbook; the interaction expires after `expires`.
async fn tutorial(expires: &str) -> (TestServer, ProviderDouble, String) {
    let double = ProviderDouble::start(ProviderKind::Anthropic).await;
    let config = format!(
        "[providers.anthropic]\nbase_url = \"{}\"\n",
        double.base_url()
    );
    let server = TestServer::start_with_config(&config).await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "reasoning", "review-campaign-brief", REVIEW)
        .await;
    server
        .save_definition(
            &pb,
            "interaction",
            "approve-campaign-brief",
            &approve_expiring(expires),
        )
        .await;
    server
        .save_definition(&pb, "workflow", "review-and-approve", REVIEW_AND_APPROVE)
        .await;
    (server, double, pb)
}

/// Reads the inbox until it holds an open request, within `within`.
async fn open_request(server: &TestServer, pb: &str, within: Duration) -> Value {
    wait_for(within, "a request left in the inbox", || async {
        let reply = server.get(&format!("{pb}/requests?status=open")).await;
        assert_eq!(reply.status, 200, "{:#}", reply.body);
        reply.body["requests"]
            .as_array()
            .and_then(|r| r.first())
            .cloned()
    })
    .await
}

async fn start_workflow(server: &TestServer, pb: &str, run_id: &str) {
    let reply = server
        .post(
            &format!("{pb}/definitions/workflow/review-and-approve/runs"),
            json!({"run_id": run_id, "input": {"brief": "Launch the autumn range", "owner": "ana@example.com"}}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
}

async fn answer(server: &TestServer, pb: &str, request_id: &str, answer: Value) -> common::Reply {
    server
        .post(
            &format!("{pb}/requests/{request_id}/answer"),
            json!({ "answer": answer }),
        )
        .await
}

#[tokio::test]
async fn the_page_example_approved() {
    let (server, double, pb) = tutorial("P2D").await;
    double.script([Reply::Text(REVIEW_TEXT.into())]);
    start_workflow(&server, &pb, "brief-1").await;
    let request = open_request(&server, &pb, Duration::from_secs(20)).await;
    assert_eq!(request["to"], "ana@example.com");
    assert_eq!(
        request["definition"],
        json!({"type": "interaction", "name": "approve-campaign-brief", "version": 1})
    );
    assert_eq!(
        request["message"],
        format!(
            "The review of your campaign brief is ready:\n\n{REVIEW_TEXT}\n\nApprove the brief as it stands, or ask for a revision.\n"
        )
    );
    assert_eq!(
        request["input"],
        json!({"owner": "ana@example.com", "review": REVIEW_TEXT})
    );
    assert_eq!(
        request["output_schema"]["properties"]["verdict"]["enum"],
        json!(["approve", "revise"])
    );
    assert_eq!(request["status"], "open");
    assert!(request.get("answer").is_none());
    let created = request["created_at"].as_str().unwrap();
    let expires = request["expires_at"].as_str().unwrap();
    let span = expires.parse::<chrono::DateTime<chrono::Utc>>().unwrap()
        - created.parse::<chrono::DateTime<chrono::Utc>>().unwrap();
    assert!(
        (span - chrono::Duration::days(2)).num_seconds().abs() <= 2,
        "{span}"
    );
    let interaction_run = request["run_id"].as_str().unwrap().to_owned();
    let child = server.get(&format!("{pb}/runs/{interaction_run}")).await;
    assert_eq!(child.body["status"], "started");
    assert_eq!(child.body["type"], "interaction");

    let reply = answer(
        &server,
        &pb,
        request["request_id"].as_str().unwrap(),
        json!({"verdict": "approve"}),
    )
    .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["status"], "answered");
    assert_eq!(reply.body["answered_by"], "local");
    assert_eq!(reply.body["answer"], json!({"verdict": "approve"}));

    let run = server.ended(&pb, "brief-1", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(
        run["output"],
        json!({"review": REVIEW_TEXT, "approval": {"verdict": "approve"}})
    );
    let child = server.get(&format!("{pb}/runs/{interaction_run}")).await;
    assert_eq!(child.body["status"], "succeeded");
    assert_eq!(child.body["output"], json!({"verdict": "approve"}));
    let types = server.event_types(&pb, &interaction_run).await;
    assert_eq!(
        types,
        [
            "run_started",
            "request_opened",
            "request_answered",
            "run_succeeded"
        ]
    );
}

#[tokio::test]
async fn the_page_example_revised() {
    let (server, double, pb) = tutorial("P2D").await;
    double.script([Reply::Text(REVIEW_TEXT.into())]);
    start_workflow(&server, &pb, "brief-2").await;
    let request = open_request(&server, &pb, Duration::from_secs(20)).await;
    let verdict = json!({"verdict": "revise", "note": "Name the success measure's target."});
    let reply = answer(
        &server,
        &pb,
        request["request_id"].as_str().unwrap(),
        verdict.clone(),
    )
    .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    let run = server.ended(&pb, "brief-2", Duration::from_secs(20)).await;
    assert_eq!(
        run["output"],
        json!({"review": REVIEW_TEXT, "approval": verdict})
    );
}

#[tokio::test]
async fn the_page_example_unanswered_ends_with_revise() {
    let (server, double, pb) = tutorial("PT1S").await;
    double.script([Reply::Text(REVIEW_TEXT.into())]);
    start_workflow(&server, &pb, "brief-3").await;
    let run = server.ended(&pb, "brief-3", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(
        run["output"],
        json!({"review": REVIEW_TEXT, "approval": {"verdict": "revise", "note": "No answer within two days"}})
    );
    let inbox = server.get(&format!("{pb}/requests")).await;
    let request = &inbox.body["requests"][0];
    assert_eq!(request["status"], "expired");
    let child = server
        .get(&format!(
            "{pb}/runs/{}",
            request["run_id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(child.body["status"], "rejected");
    let problem = &child.body["problem"];
    assert_eq!(problem["reason"], "unanswered");
    assert_eq!(problem["kind"], "expired");
    assert_eq!(problem["status"], 410);
    assert_eq!(problem["type"], "https://on.auto/problems/expired");
    assert_eq!(
        problem["title"],
        "The interaction function approve-campaign-brief was not answered"
    );
    // The request took no answer once it expired.
    let late = answer(
        &server,
        &pb,
        request["request_id"].as_str().unwrap(),
        json!({"verdict": "approve"}),
    )
    .await;
    let body = late.assert_problem(409, "conflict");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("expired unanswered at"),
        "{body:#}"
    );
}

#[tokio::test]
async fn the_page_example_gives_up_after_the_review_and_its_three_retries_fail() {
    let (server, double, pb) = tutorial("P2D").await;
    double.answer_always(Reply::error(503, "api_error", "The model is down"));
    start_workflow(&server, &pb, "brief-503").await;
    // The review, then its three retries ("patient": `limit.attempt.count` is "the most
    // retries after the first attempt"), 5, 10 and 20 s apart, each a reasoning run that ends
    // unavailable 503 after its own retries.
    let run = server
        .ended(&pb, "brief-503", Duration::from_secs(120))
        .await;
    assert_eq!(run["status"], "rejected", "{run:#}");
    let problem = &run["problem"];
    // An uncaught error of status 503 rejects the workflow unavailable, its title and step
    // in the detail ("How a run ends").
    assert_eq!(problem["status"], 503, "{problem:#}");
    assert_eq!(problem["reason"], "unavailable");
    assert_eq!(problem["type"], "https://on.auto/problems/unavailable");
    assert_eq!(
        problem["detail"],
        "The review could not be run, at the step give-up."
    );
    let reviews = server
        .get(&format!(
            "{pb}/runs?type=reasoning&name=review-campaign-brief"
        ))
        .await;
    let reviews = reviews.body["runs"].as_array().expect("runs").clone();
    assert_eq!(reviews.len(), 4, "{reviews:#?}");
    assert!(reviews.iter().all(|r| r["status"] == "rejected"));
    // Nobody was asked.
    let inbox = server.get(&format!("{pb}/requests")).await;
    assert_eq!(inbox.body["requests"], json!([]));
}

#[tokio::test]
async fn a_call_past_its_timeout_cancels_the_interaction_with_kind_deadline() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "interaction", "approve-campaign-brief", APPROVE)
        .await;
    let impatient = r#"document:
  dsl: '1.0.3'
  namespace: tests
  name: impatient
  version: '1.0.0'
do:
  - ask:
      call: run_definition
      with:
        type: interaction
        name: approve-campaign-brief
        input: { owner: ana@example.com, review: Fine. }
      timeout:
        after: PT1S
"#;
    server
        .save_definition(&pb, "workflow", "impatient", impatient)
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/workflow/impatient/runs"),
            json!({"run_id": "impatient-1", "input": {}}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let run = server
        .ended(&pb, "impatient-1", Duration::from_secs(20))
        .await;
    assert_eq!(run["status"], "rejected", "{run:#}");
    // An uncaught timeout (408) rejects the workflow unavailable ("How a run ends").
    assert_eq!(run["problem"]["reason"], "unavailable", "{run:#}");
    // The request it waited for is withdrawn, its run cancelled by the deadline. The cancel
    // is work the parent's last step left, so it may land just after the parent ended.
    let inbox = server.get(&format!("{pb}/requests")).await;
    let child_run_id = inbox.body["requests"][0]["run_id"]
        .as_str()
        .expect("the child's run id")
        .to_owned();
    let child = server
        .ended(&pb, &child_run_id, Duration::from_secs(10))
        .await;
    assert_eq!(child["problem"]["reason"], "cancelled", "{child:#}");
    assert_eq!(child["problem"]["kind"], "deadline", "{child:#}");
    let inbox = server.get(&format!("{pb}/requests")).await;
    let request = &inbox.body["requests"][0];
    assert_eq!(request["status"], "cancelled", "{request:#}");
}

#[tokio::test]
async fn an_uncaught_unanswered_request_rejects_the_workflow_unanswered() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(
            &pb,
            "interaction",
            "approve-campaign-brief",
            &approve_expiring("PT1S"),
        )
        .await;
    server
        .save_definition(&pb, "workflow", "ask-only", ASK_UNCAUGHT)
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/workflow/ask-only/runs"),
            json!({"run_id": "ask-1", "input": {"owner": "o@example.com", "review": "R"}}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let run = server.ended(&pb, "ask-1", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "rejected", "{run:#}");
    assert_eq!(run["problem"]["reason"], "unanswered");
    assert_eq!(run["problem"]["kind"], "expired");
    assert_eq!(run["problem"]["status"], 410);
    let detail = run["problem"]["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(
            "The interaction function approve-campaign-brief was not answered, at the step ask: The request "
        ),
        "{detail}"
    );
}

#[tokio::test]
async fn a_run_leaves_a_request_that_an_answer_ends() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "interaction", "approve-campaign-brief", APPROVE)
        .await;
    let runs = format!("{pb}/definitions/interaction/approve-campaign-brief/runs");
    let input = json!({"owner": "ana@example.com", "review": "Ready"});
    let reply = server
        .post(&runs, json!({"run_id": "ask-1", "input": input}))
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    assert_eq!(reply.body["status"], "started");
    // The same id and input: the same run, asked once.
    let again = server
        .post(&runs, json!({"run_id": "ask-1", "input": input}))
        .await;
    assert_eq!(again.status, 202, "{:#}", again.body);
    let inbox = server.get(&format!("{pb}/requests")).await;
    assert_eq!(inbox.body["requests"].as_array().unwrap().len(), 1);
    assert_eq!(inbox.body["next"], Value::Null);
    // Another input under the id is refused.
    server
        .post(
            &runs,
            json!({"run_id": "ask-1", "input": {"owner": "x", "review": "y"}}),
        )
        .await
        .assert_problem(409, "conflict");

    let request = &inbox.body["requests"][0];
    let request_id = request["request_id"].as_str().unwrap();
    assert_eq!(request["run_id"], "ask-1");

    // A wrong answer is refused with the schema's issues, and the request stays open.
    let wrong = answer(&server, &pb, request_id, json!({"verdict": "maybe"})).await;
    let body = wrong.assert_problem(422, "invalid_input");
    assert_eq!(
        body["title"],
        "The answer does not match what the request asks for"
    );
    assert_eq!(body["issues"][0]["pointer"], "/answer/verdict");
    assert_eq!(
        wrong.issue_messages(),
        [r#"verdict: expected one of "approve" or "revise""#]
    );
    let missing = answer(&server, &pb, request_id, json!({"note": "hm"})).await;
    missing.assert_problem(422, "invalid_input");
    assert_eq!(missing.body["issues"][0]["pointer"], "/answer/verdict");
    assert_eq!(missing.issue_messages(), ["verdict: is required"]);
    let open = server.get(&format!("{pb}/requests?status=open")).await;
    assert_eq!(open.body["requests"][0]["request_id"], request_id);
    assert_eq!(
        server.get(&format!("{pb}/runs/ask-1")).await.body["status"],
        "started"
    );

    let right = answer(
        &server,
        &pb,
        request_id,
        json!({"verdict": "approve", "note": "Good"}),
    )
    .await;
    assert_eq!(right.status, 200, "{:#}", right.body);
    let run = server.get(&format!("{pb}/runs/ask-1")).await;
    assert_eq!(run.body["status"], "succeeded");
    assert_eq!(
        run.body["output"],
        json!({"verdict": "approve", "note": "Good"})
    );
    // The id now returns the run that ended, with the answer.
    let again = server
        .post(&runs, json!({"run_id": "ask-1", "input": input}))
        .await;
    assert_eq!(again.status, 200, "{:#}", again.body);
    assert_eq!(again.body["output"]["verdict"], "approve");

    let twice = answer(&server, &pb, request_id, json!({"verdict": "revise"})).await;
    let body = twice.assert_problem(409, "conflict");
    assert_eq!(body["title"], "The request is not open");
    assert_eq!(
        body["detail"],
        format!(
            "The request {request_id} was already answered by local; a request takes one answer."
        )
    );
    let unknown = answer(
        &server,
        &pb,
        "no-such-request",
        json!({"verdict": "approve"}),
    )
    .await;
    let body = unknown.assert_problem(404, "not_found");
    assert_eq!(
        body["detail"],
        "The playbook main has no request no-such-request."
    );
    let answered = server.get(&format!("{pb}/requests?status=answered")).await;
    assert_eq!(answered.body["requests"].as_array().unwrap().len(), 1);
    assert!(
        server.get(&format!("{pb}/requests?status=open")).await.body["requests"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let bad = server.get(&format!("{pb}/requests?status=waiting")).await;
    bad.assert_problem(422, "invalid_input");
    assert_eq!(
        bad.issue_messages(),
        [r#"status "waiting" is not one of open, answered, expired, undelivered or cancelled."#]
    );
}

#[tokio::test]
async fn input_is_checked_before_anyone_is_asked() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "interaction", "approve-campaign-brief", APPROVE)
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/interaction/approve-campaign-brief/runs"),
            json!({"run_id": "bad-1", "input": {"owner": "ana@example.com"}}),
        )
        .await;
    let body = reply.assert_problem(422, "invalid_input");
    assert_eq!(
        body["title"],
        "The interaction function approve-campaign-brief refused its input"
    );
    assert_eq!(body["run_id"], "bad-1");
    let inbox = server.get(&format!("{pb}/requests")).await;
    assert!(inbox.body["requests"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn a_template_that_reads_a_missing_field_names_its_line() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let source =
        "---\nto: '{{ input.owner }}'\nexpires: PT1H\n---\nPlease look at {{ input.thing }}.\n";
    server
        .save_definition(&pb, "interaction", "look", source)
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/interaction/look/runs"),
            json!({"input": {"owner": "o"}}),
        )
        .await;
    let body = reply.assert_problem(422, "invalid_input");
    assert_eq!(
        body["title"],
        "The interaction function look cannot render its request"
    );
    assert_eq!(body["issues"][0]["pointer"], "/input/thing");
    assert_eq!(body["issues"][0]["line"], 5);
}

/// A tool interaction whose server is not configured saves, and its run is refused before
/// anything is called, as a reasoning function's tools are checked before the model is called.
#[tokio::test]
async fn a_tool_interaction_without_its_server_is_not_offered() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let source = "---\ntool: crm/find-owner\narguments: '{\"account\": {{ input.account | json }}}'\n---\nFinds the owner.\n";
    server
        .save_definition(&pb, "interaction", "find-owner", source)
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/interaction/find-owner/runs"),
            json!({"input": {"account": "a-1"}}),
        )
        .await;
    let body = reply.assert_problem(503, "unavailable");
    assert_eq!(body["kind"], "tool_not_offered");
    assert_eq!(body["because"], "tool_server_not_configured");
    assert_eq!(
        body["detail"],
        "The tool server crm is not configured for this playbook, so the tool crm/find-owner was not called; ask the operator to configure it under tool_servers."
    );
}

#[tokio::test]
async fn cancel_ends_the_run_and_its_request() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "interaction", "approve-campaign-brief", APPROVE)
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/interaction/approve-campaign-brief/runs"),
            json!({"run_id": "c-1", "input": {"owner": "o", "review": "r"}}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let cancelled = server
        .post(
            &format!("{pb}/runs/c-1/cancel"),
            json!({"detail": "The campaign was dropped."}),
        )
        .await;
    assert_eq!(cancelled.status, 200, "{:#}", cancelled.body);
    assert_eq!(cancelled.body["status"], "rejected");
    let problem = &cancelled.body["problem"];
    assert_eq!(problem["reason"], "cancelled");
    assert_eq!(problem["kind"], "requested");
    assert_eq!(problem["detail"], "The campaign was dropped.");
    assert_eq!(
        problem["title"],
        "The interaction function approve-campaign-brief was cancelled"
    );
    let inbox = server.get(&format!("{pb}/requests")).await;
    let request = &inbox.body["requests"][0];
    assert_eq!(request["status"], "cancelled");
    let late = answer(
        &server,
        &pb,
        request["request_id"].as_str().unwrap(),
        json!({"verdict": "approve"}),
    )
    .await;
    let body = late.assert_problem(409, "conflict");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .ends_with("was cancelled with its run; it takes no answer now."),
        "{body:#}"
    );
    server
        .post(&format!("{pb}/runs/c-1/cancel"), json!({}))
        .await
        .assert_problem(409, "conflict");
}

#[tokio::test]
async fn expiry_outlasts_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::test_store(dir.path()).await;
    let first = TestServer::start_on(
        store.clone(),
        Vec::new(),
        auto_server::reasoning_runs::Models::none(),
        tempfile::tempdir().unwrap(),
    )
    .await;
    let pb = first.playbook().await;
    first
        .save_definition(
            &pb,
            "interaction",
            "approve-campaign-brief",
            &approve_expiring("PT2S"),
        )
        .await;
    let reply = first
        .post(
            &format!("{pb}/definitions/interaction/approve-campaign-brief/runs"),
            json!({"run_id": "r-1", "input": {"owner": "o", "review": "r"}}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    first.handle.unwrap().stop().await.unwrap();
    let second = TestServer::start_on(
        store,
        Vec::new(),
        auto_server::reasoning_runs::Models::none(),
        dir,
    )
    .await;
    let run = second.ended(&pb, "r-1", Duration::from_secs(20)).await;
    assert_eq!(run["status"], "rejected", "{run:#}");
    assert_eq!(run["problem"]["kind"], "expired");
    let inbox = second.get(&format!("{pb}/requests?status=expired")).await;
    assert_eq!(inbox.body["requests"][0]["run_id"], "r-1");
}

#[tokio::test]
async fn answering_needs_a_runner_and_listing_is_a_read() {
    let (admin_key, admin_hash) = new_key();
    let (viewer_key, viewer_hash) = new_key();
    let (runner_key, runner_hash) = new_key();
    let server = TestServer::start_with_keys(vec![
        KeyEntry::new("boss", "acme", Role::Admin, &admin_hash).unwrap(),
        KeyEntry::new("reader", "acme", Role::Viewer, &viewer_hash).unwrap(),
        KeyEntry::new("bot", "acme", Role::Runner, &runner_hash).unwrap(),
    ])
    .await;
    let admin = server.with_key(&admin_key);
    let pb = admin.playbook().await;
    admin
        .save_definition(&pb, "interaction", "approve-campaign-brief", APPROVE)
        .await;
    let reply = admin
        .post(
            &format!("{pb}/definitions/interaction/approve-campaign-brief/runs"),
            json!({"input": {"owner": "o", "review": "r"}}),
        )
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let viewer = server.with_key(&viewer_key);
    let inbox = viewer.get(&format!("{pb}/requests")).await;
    assert_eq!(inbox.status, 200, "{:#}", inbox.body);
    let request_id = inbox.body["requests"][0]["request_id"]
        .as_str()
        .unwrap()
        .to_owned();
    answer(&viewer, &pb, &request_id, json!({"verdict": "approve"}))
        .await
        .assert_problem(403, "forbidden");
    let runner = server.with_key(&runner_key);
    let reply = answer(&runner, &pb, &request_id, json!({"verdict": "approve"})).await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["answered_by"], "bot");
}

#[tokio::test]
async fn expires_is_bounded_by_the_longest_a_run_may_last() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "interaction", "at-the-edge", &approve_expiring("P30D"))
        .await;
    let reply = server
        .post_definition(
            &pb,
            "interaction",
            "past-the-edge",
            &approve_expiring("P30DT1S"),
        )
        .await;
    reply.assert_problem(422, "invalid_input");
    assert_eq!(
        reply.issue_messages(),
        ["Line 4, /expires: The duration is longer than a run may last: at most 30 days."]
    );
}

#[tokio::test]
async fn the_inbox_pages_newest_first() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "interaction", "approve-campaign-brief", APPROVE)
        .await;
    for n in 0..3 {
        let reply = server
            .post(
                &format!("{pb}/definitions/interaction/approve-campaign-brief/runs"),
                json!({"run_id": format!("p-{n}"), "input": {"owner": "o", "review": format!("r{n}")}}),
            )
            .await;
        assert_eq!(reply.status, 202, "{:#}", reply.body);
    }
    let first = server.get(&format!("{pb}/requests?limit=2")).await;
    let runs: Vec<&str> = first.body["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_id"].as_str().unwrap())
        .collect();
    assert_eq!(runs, ["p-2", "p-1"]);
    let next = first.body["next"].as_str().unwrap();
    let second = server
        .get(&format!("{pb}/requests?limit=2&after={next}"))
        .await;
    assert_eq!(second.body["requests"][0]["run_id"], "p-0");
    assert_eq!(second.body["requests"].as_array().unwrap().len(), 1);
}

/// An answer that misses its schema in more than 20 places is refused with 20 issues, then
/// one line that counts the rest under /answer, never under the pointer of an issue it
/// counts; 20 issues are listed whole.
#[tokio::test]
async fn an_answer_refusal_lists_at_most_20_issues_then_a_count_line() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let fields: Vec<String> = (1..=21).map(|i| format!("f{i:02}")).collect();
    let properties: String = fields
        .iter()
        .map(|f| format!("      {f}: {{ type: string }}\n"))
        .collect();
    let source = format!(
        "---\nto: ana@example.com\nexpires: P2D\noutput:\n  schema:\n    type: object\n    properties:\n{properties}---\nFill in the form.\n"
    );
    server
        .save_definition(&pb, "interaction", "form", &source)
        .await;
    let runs = format!("{pb}/definitions/interaction/form/runs");
    let reply = server
        .post(&runs, json!({"run_id": "form-1", "input": {}}))
        .await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let request = open_request(&server, &pb, Duration::from_secs(10)).await;
    let request_id = request["request_id"].as_str().unwrap();
    let numbers = |n: usize| -> Value {
        Value::Object(
            fields
                .iter()
                .take(n)
                .map(|f| (f.clone(), json!(1)))
                .collect(),
        )
    };
    let twenty = answer(&server, &pb, request_id, numbers(20)).await;
    let body = twenty.assert_problem(422, "invalid_input");
    let issues = body["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 20, "{body:#}");
    assert_eq!(issues[19]["pointer"], "/answer/f20");
    let all = answer(&server, &pb, request_id, numbers(21)).await;
    let body = all.assert_problem(422, "invalid_input");
    let issues = body["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 21, "{body:#}");
    assert_eq!(issues[19]["pointer"], "/answer/f20");
    assert_eq!(
        issues[20],
        json!({"pointer": "/answer", "message": "1 more issue is not shown."})
    );
}

/// The supplement's output shapes for an answer a person gives: `title` and a column's `type`
/// may be left out or given as null, and a null one reads back as absent in the run's output,
/// as every run's output does; the request keeps the answer as it was written.
#[tokio::test]
async fn a_shaped_answer_reads_its_null_optional_fields_back_as_absent() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let source = "---\ndescription: Asks for this week's figures\nto: ana@example.com\n\
                  expires: P1D\noutput:\n  shape: table\n---\nThe week's figures, please.\n";
    server
        .save_definition(&pb, "interaction", "figures", source)
        .await;
    let runs = format!("{pb}/definitions/interaction/figures/runs");
    for (run_id, written, output) in [
        (
            "nulls",
            json!({"title": null, "columns": [{"name": "day", "type": null}], "rows": [["mon"]]}),
            json!({"columns": [{"name": "day"}], "rows": [["mon"]]}),
        ),
        (
            "left-out",
            json!({"columns": [{"name": "n", "type": "number"}], "rows": [[1], [null]]}),
            json!({"columns": [{"name": "n", "type": "number"}], "rows": [[1], [null]]}),
        ),
    ] {
        let reply = server.post(&runs, json!({"run_id": run_id})).await;
        assert_eq!(reply.status, 202, "{:#}", reply.body);
        let request = open_request(&server, &pb, Duration::from_secs(10)).await;
        let request_id = request["request_id"].as_str().unwrap();
        assert_eq!(request["run_id"], run_id);
        let reply = answer(&server, &pb, request_id, written.clone()).await;
        assert_eq!(reply.status, 200, "{:#}", reply.body);
        assert_eq!(
            reply.body["answer"], written,
            "the request keeps what was written"
        );
        let run = server.ended(&pb, run_id, Duration::from_secs(10)).await;
        assert_eq!(run["status"], "succeeded", "{run:#}");
        assert_eq!(run["output"], output);
    }
    // A row shorter than the columns is still refused by the shape's rules.
    let reply = server.post(&runs, json!({"run_id": "short"})).await;
    assert_eq!(reply.status, 202, "{:#}", reply.body);
    let request = open_request(&server, &pb, Duration::from_secs(10)).await;
    let request_id = request["request_id"].as_str().unwrap();
    let wrong = json!({"title": null, "columns": [{"name": "a"}, {"name": "b"}], "rows": [["x"]]});
    answer(&server, &pb, request_id, wrong)
        .await
        .assert_problem(422, "invalid_input");
}
