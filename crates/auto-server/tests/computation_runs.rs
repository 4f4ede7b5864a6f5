//! Computation functions end to end: saved with their checks, run with their input checked,
//! their program's value checked, and the run id rules.

mod common;

use common::TestServer;
use serde_json::{Value, json};

const MONTH_WINDOW: &str = include_str!("data/month-window.md");

async fn saved() -> (TestServer, String) {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "computation", "month-window", MONTH_WINDOW)
        .await;
    (
        server,
        format!("{pb}/definitions/computation/month-window/runs"),
    )
}

#[tokio::test]
async fn a_run_gives_the_programs_value() {
    let (server, runs) = saved().await;
    let reply = server
        .post(
            &runs,
            json!({"input": {"month": "2026-02"}, "run_id": "feb"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["status"], "succeeded");
    assert_eq!(
        reply.body["output"],
        json!({"first": "2026-02-01", "last": "2026-02-28"})
    );
    assert_eq!(reply.body["input"], json!({"month": "2026-02"}));
    assert_eq!(reply.body["definition_version"], 1);
    let pb = "/v1/orgs/acme/playbooks/main";
    let got = server.get(&format!("{pb}/runs/feb")).await;
    assert_eq!(got.body["output"]["last"], "2026-02-28");
    let events = server.get(&format!("{pb}/events?run_id=feb")).await;
    let kinds: Vec<&str> = events.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["run_started", "run_succeeded"]);
    let started = &events.body["events"][0];
    assert_eq!(started["source"], "/runs/feb");
    assert_eq!(started["subject"], "computation/month-window");
    assert!(
        started.get("data").is_none(),
        "a run's fact never carries its input"
    );
    let listed = server.get(&format!("{pb}/runs")).await;
    assert_eq!(listed.body["runs"][0]["run_id"], "feb");
    assert!(listed.body["runs"][0].get("input").is_none());
}

#[tokio::test]
async fn the_same_run_id_returns_what_was_recorded() {
    let (server, runs) = saved().await;
    let first = server
        .post(
            &runs,
            json!({"input": {"month": "2026-02"}, "run_id": "r1"}),
        )
        .await;
    let again = server
        .post(
            &runs,
            json!({"input": {"month": "2026-02"}, "run_id": "r1"}),
        )
        .await;
    assert_eq!(first.body, again.body);
    let events = server
        .get("/v1/orgs/acme/playbooks/main/events?run_id=r1")
        .await;
    assert_eq!(
        events.body["events"].as_array().unwrap().len(),
        2,
        "no second attempt"
    );
    let other = server
        .post(
            &runs,
            json!({"input": {"month": "2026-03"}, "run_id": "r1"}),
        )
        .await;
    other.assert_problem(409, "conflict");
}

#[tokio::test]
async fn an_input_that_does_not_match_is_refused_in_the_fields_words() {
    let (server, runs) = saved().await;
    let reply = server
        .post(
            &runs,
            json!({"input": {"month": "2026"}, "run_id": "short"}),
        )
        .await;
    let problem = reply.assert_problem(422, "invalid_input");
    assert_eq!(
        problem["title"],
        "The computation function month-window refused its input"
    );
    assert_eq!(problem["run_id"], "short");
    assert_eq!(problem["issues"][0]["pointer"], "/input/month");
    assert_eq!(
        problem["issues"][0]["message"],
        "month, The month to report on: expected at least 7 characters"
    );
    let run = server.get("/v1/orgs/acme/playbooks/main/runs/short").await;
    assert_eq!(run.body["status"], "rejected");
    assert_eq!(run.body["problem"]["reason"], "invalid_input");
    let missing = server.post(&runs, json!({})).await;
    assert_eq!(
        missing.assert_problem(422, "invalid_input")["issues"][0]["pointer"],
        "/input/month"
    );
    let not_object = server.post(&runs, json!({"input": [1]})).await;
    not_object.assert_problem(422, "invalid_input");
}

#[tokio::test]
async fn a_program_that_throws_or_misses_its_contract_is_unworkable() {
    let (server, runs) = saved().await;
    let thrown = server
        .post(&runs, json!({"input": {"month": "2026-13"}}))
        .await;
    let problem = thrown.assert_problem(409, "conflict");
    assert_eq!(problem["kind"], "unworkable");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.contains("there is no thirteenth month"), "{detail}");
    let wrong = server
        .post(&runs, json!({"input": {"month": "2026-14"}}))
        .await;
    let problem = wrong.assert_problem(409, "conflict");
    let messages: Vec<&str> = problem["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["message"].as_str().unwrap())
        .collect();
    assert!(
        messages.contains(&"/first: Expected a string in the format date, such as 2026-04-01"),
        "{messages:?}"
    );
    // A run that ended as conflict is run again under its id.
    let again = server
        .post(
            &runs,
            json!({"input": {"month": "2026-13"}, "run_id": "again"}),
        )
        .await;
    again.assert_problem(409, "conflict");
    let again = server
        .post(
            &runs,
            json!({"input": {"month": "2026-13"}, "run_id": "again"}),
        )
        .await;
    again.assert_problem(409, "conflict");
    let events = server
        .get("/v1/orgs/acme/playbooks/main/events?run_id=again")
        .await;
    let kinds: Vec<&str> = events.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["run_started", "run_rejected", "run_started", "run_rejected"]
    );
}

#[tokio::test]
async fn bad_run_requests() {
    let (server, runs) = saved().await;
    server
        .post(&runs, json!({"run_id": ""}))
        .await
        .assert_problem(422, "invalid_input");
    server
        .post(&runs, json!({"run_id": "a".repeat(129)}))
        .await
        .assert_problem(422, "invalid_input");
    server
        .post(&runs, json!({"run_id": "a b"}))
        .await
        .assert_problem(422, "invalid_input");
    let at_edge = server
        .post(
            &runs,
            json!({"input": {"month": "2026-01"}, "run_id": "a".repeat(128)}),
        )
        .await;
    assert_eq!(at_edge.status, 200);
    server
        .post(&runs, json!({"inputs": {}}))
        .await
        .assert_problem(422, "invalid_input");
    let pb = "/v1/orgs/acme/playbooks/main";
    server
        .post(
            &format!("{pb}/definitions/computation/nope/runs"),
            json!({}),
        )
        .await
        .assert_problem(404, "not_found");
    server
        .get(&format!("{pb}/runs/nope"))
        .await
        .assert_problem(404, "not_found");
    server
        .get(&format!("{pb}/runs?status=done"))
        .await
        .assert_problem(422, "invalid_input");
    server
        .delete(&format!("{pb}/definitions/computation/month-window"))
        .await;
    server
        .post(&runs, json!({"input": {"month": "2026-01"}}))
        .await
        .assert_problem(409, "conflict");
    // A run that ended cannot be cancelled.
    let cancel = server
        .post(&format!("{pb}/runs/{}/cancel", "a".repeat(128)), json!({}))
        .await;
    cancel.assert_problem(409, "conflict");
}

#[tokio::test]
async fn a_program_with_problems_is_not_saved() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let source =
        "---\ndescription: x\n---\n```ts\nexport default function (input) { return nope; }\n```\n";
    let reply = server
        .post_definition(&pb, "computation", "x", source)
        .await;
    let problem = reply.assert_problem(422, "invalid_input");
    let message: &Value = &problem["issues"][0]["message"];
    assert_eq!(message, "Line 5, column 42: Cannot find name 'nope'.");
    let no_block = "---\ndescription: x\n---\nNo program here.\n";
    let reply = server
        .post_definition(&pb, "computation", "x", no_block)
        .await;
    reply.assert_problem(422, "invalid_input");
}

/// "Retrying under a run id", the same for every type: an id is taken by the run started under
/// it, and a request with another input, or for another definition, is refused in one wording.
#[tokio::test]
async fn a_run_id_is_taken_for_another_input_or_definition_of_every_type() {
    let (server, runs) = saved().await;
    let pb = "/v1/orgs/acme/playbooks/main";
    let ask = "---\ndescription: Asks for a yes\nto: ana@example.com\nexpires: P1D\ninput:\n  schema:\n    type: object\n    properties:\n      n: { type: integer }\n---\nSay yes.\n";
    let flow = "document:\n  dsl: 1.0.3\n  namespace: tests\n  name: flow\n  version: 1.0.0\ndo:\n  - keep:\n      set:\n        n: ${ $data.n }\n";
    for (def_type, name, source) in [("interaction", "ask", ask), ("workflow", "keep", flow)] {
        server.save_definition(pb, def_type, name, source).await;
    }
    let taken = |run_id: &str, def_type: &str, name: &str| {
        format!(
            "The run {run_id} was started for {def_type}/{name} with another input; use a new run id."
        )
    };
    let cases = [
        (
            runs.clone(),
            json!({"month": "2026-02"}),
            json!({"month": "2026-03"}),
            "c-1",
            "computation",
            "month-window",
        ),
        (
            format!("{pb}/definitions/interaction/ask/runs"),
            json!({"n": 1}),
            json!({"n": 2}),
            "i-1",
            "interaction",
            "ask",
        ),
        (
            format!("{pb}/definitions/workflow/keep/runs"),
            json!({"n": 1}),
            json!({"n": 2}),
            "w-1",
            "workflow",
            "keep",
        ),
    ];
    for (path, input, other, run_id, def_type, name) in &cases {
        let first = server
            .post(path, json!({"input": input, "run_id": run_id}))
            .await;
        assert!(first.status.is_success(), "{:#}", first.body);
        let refused = server
            .post(path, json!({"input": other, "run_id": run_id}))
            .await;
        let problem = refused.assert_problem(409, "conflict");
        assert_eq!(problem["title"], "The run id is taken");
        assert_eq!(problem["detail"], taken(run_id, def_type, name));
    }
    // The id of a computation's run, asked of the workflow with the same input.
    let refused = server
        .post(
            &format!("{pb}/definitions/workflow/keep/runs"),
            json!({"input": {"month": "2026-02"}, "run_id": "c-1"}),
        )
        .await;
    refused.assert_problem(409, "conflict");
    assert_eq!(
        refused.body["detail"],
        taken("c-1", "computation", "month-window")
    );
}

/// A run asked of what is not there names what is missing: the org, the playbook, or the
/// definition, in that order, whatever else is wrong with the request.
#[tokio::test]
async fn a_run_of_what_is_missing_names_what_is_missing() {
    let (server, _) = saved().await;
    let cases = [
        (
            "/v1/orgs/nobody/playbooks/main/definitions/computation/month-window/runs",
            json!({"input": {}}),
            "There is no org nobody.",
        ),
        (
            "/v1/orgs/acme/playbooks/nope/definitions/computation/month-window/runs",
            json!({"input": {}}),
            "The org acme has no playbook nope.",
        ),
        (
            "/v1/orgs/acme/playbooks/nope/definitions/nonsense/month-window/runs",
            json!({"input": {}}),
            "The org acme has no playbook nope.",
        ),
        (
            "/v1/orgs/acme/playbooks/nope/definitions/computation/month-window/runs",
            json!({"input": {}, "run_id": "not an id"}),
            "The org acme has no playbook nope.",
        ),
        (
            "/v1/orgs/acme/playbooks/main/definitions/computation/year-window/runs",
            json!({"input": {}}),
            "The playbook main has no computation definition year-window.",
        ),
        (
            "/v1/orgs/acme/playbooks/main/definitions/nonsense/month-window/runs",
            json!({"input": {}}),
            "The playbook main has no nonsense definition month-window.",
        ),
    ];
    for (url, body, detail) in cases {
        let reply = server.post(url, body).await;
        assert_eq!(reply.status, 404, "{url}: {:#}", reply.body);
        assert_eq!(reply.body["detail"], detail, "{url}: {:#}", reply.body);
    }
}

/// `list_runs` by the problem's reason and by the time runs started, through HTTP; bad values
/// are refused at their parameter with the wording the reference gives.
#[tokio::test]
async fn runs_are_listed_by_reason_and_by_time() {
    let (server, runs) = saved().await;
    let pb = "/v1/orgs/acme/playbooks/main";
    let ok = server
        .post(
            &runs,
            json!({"input": {"month": "2026-02"}, "run_id": "ok"}),
        )
        .await;
    assert_eq!(ok.status, 200, "{:#}", ok.body);
    let bad = server
        .post(
            &runs,
            json!({"input": {"month": "2026-13"}, "run_id": "bad"}),
        )
        .await;
    bad.assert_problem(409, "conflict");
    let ids = |body: &Value| -> Vec<String> {
        body["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["run_id"].as_str().unwrap().to_string())
            .collect()
    };
    let listed = server.get(&format!("{pb}/runs?reason=conflict")).await;
    assert_eq!(listed.status, 200, "{:#}", listed.body);
    assert_eq!(ids(&listed.body), ["bad"]);
    let listed = server
        .get(&format!("{pb}/runs?reason=conflict&status=succeeded"))
        .await;
    assert_eq!(ids(&listed.body), Vec::<String>::new());
    let all = server.get(&format!("{pb}/runs")).await;
    let started_ok = all.body["runs"][1]["started_at"]
        .as_str()
        .unwrap()
        .to_string();
    let started_bad = all.body["runs"][0]["started_at"]
        .as_str()
        .unwrap()
        .to_string();
    let encode = |t: &str| t.replace('+', "%2B");
    let since = server
        .get(&format!("{pb}/runs?since={}", encode(&started_ok)))
        .await;
    assert_eq!(ids(&since.body), ["bad", "ok"]);
    let until = server
        .get(&format!("{pb}/runs?until={}", encode(&started_ok)))
        .await;
    assert_eq!(ids(&until.body), Vec::<String>::new());
    if started_ok != started_bad {
        let only_ok = server
            .get(&format!(
                "{pb}/runs?since={}&until={}",
                encode(&started_ok),
                encode(&started_bad)
            ))
            .await;
        assert_eq!(ids(&only_ok.body), ["ok"]);
    }
    let cases = [
        (
            "reason=refused",
            "/query/reason",
            "reason \"refused\" is not one of invalid_input, forbidden, not_found, conflict, unavailable, cancelled, unanswered or failed.",
        ),
        (
            "since=yesterday",
            "/query/since",
            "since \"yesterday\" is not a time in RFC 3339 form, such as 2026-12-01T09:30:00Z.",
        ),
        (
            "until=2026-12-01",
            "/query/until",
            "until \"2026-12-01\" is not a time in RFC 3339 form, such as 2026-12-01T09:30:00Z.",
        ),
        (
            "since=2026-12-01T10:00:00Z&until=2026-12-01T10:00:00Z",
            "/query/until",
            "until must be later than since.",
        ),
    ];
    for (query, pointer, message) in cases {
        let reply = server.get(&format!("{pb}/runs?{query}")).await;
        let problem = reply.assert_problem(422, "invalid_input");
        assert_eq!(problem["issues"][0]["pointer"], pointer, "{query}");
        assert_eq!(problem["issues"][0]["message"], message, "{query}");
    }
}

/// A program that works longer than the brief budget it first runs within is run again where
/// blocking is fine, and its run gives its value as any other.
#[tokio::test]
async fn a_program_that_works_long_gives_its_value() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let steps = (auto_script::BRIEF_PROGRAM_CHECKPOINTS_MAX + 10) * auto_script::CHECKPOINT_STEPS;
    let source = format!(
        "---\ndescription: Counts\ninput:\n  schema: {{ type: object }}\noutput:\n  schema: {{ type: integer }}\n---\nCounts to {steps}.\n\n```ts\nexport default () => {{\n  let n = 0;\n  for (let i = 0; i < {steps}; i++) {{ n += 1; }}\n  return n;\n}};\n```\n"
    );
    server
        .save_definition(&pb, "computation", "count", &source)
        .await;
    let reply = server
        .post(
            &format!("{pb}/definitions/computation/count/runs"),
            json!({"input": {}}),
        )
        .await;
    assert_eq!(reply.status, 200, "{:#}", reply.body);
    assert_eq!(reply.body["output"], json!(steps));
}
