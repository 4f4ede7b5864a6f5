//! The definitions API: versions, the overview and diagram, retiring, the events each change
//! records, and the bad inputs of each route. The documents' own checkers have their suites;
//! here a line-based checker stands in for them (see `common::LineChecker`).

mod common;

use common::TestServer;
use serde_json::{Value, json};

fn create_body(name: &str, source: &str) -> Value {
    json!({"type": "prediction", "name": name, "source": source, "overview": "Adds things up.", "diagram": "flowchart TD\n  a --> b"})
}

#[tokio::test]
async fn a_definition_is_created_read_and_listed() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let reply = server
        .post(
            &format!("{pb}/definitions"),
            create_body("sum", "Sums lines\nbody"),
        )
        .await;
    assert_eq!(reply.status, 201, "{:#}", reply.body);
    let def = &reply.body;
    assert_eq!(def["type"], "prediction");
    assert_eq!(def["name"], "sum");
    assert_eq!(def["version"], 1);
    assert_eq!(def["status"], "active");
    assert_eq!(def["description"], "Sums lines");
    assert_eq!(def["overview"], "Adds things up.");
    assert_eq!(def["diagram"], "flowchart TD\n  a --> b");
    for field in ["warnings", "triggers", "used_by"] {
        assert!(def[field].is_array(), "{field}");
    }
    let got = server
        .get(&format!("{pb}/definitions/prediction/sum"))
        .await;
    assert_eq!(got.status, 200);
    assert_eq!(got.body["overview"], "Adds things up.");
    let list = server.get(&format!("{pb}/definitions")).await;
    let listed = &list.body["definitions"][0];
    assert_eq!(listed["name"], "sum");
    assert!(
        listed.get("overview").is_none(),
        "a listing leaves the overview out"
    );
    let filtered = server.get(&format!("{pb}/definitions?type=workflow")).await;
    assert_eq!(filtered.body["definitions"], json!([]));
    let bad = server.get(&format!("{pb}/definitions?type=nope")).await;
    bad.assert_problem(422, "invalid_input");
}

#[tokio::test]
async fn each_change_is_a_version_and_an_event() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .post(&format!("{pb}/definitions"), create_body("sum", "v1"))
        .await;
    let path = format!("{pb}/definitions/prediction/sum");

    // An update that changes nothing makes no version.
    let same = server
        .put(
            &path,
            json!({"source": "v1", "diagram": "flowchart TD\n  a --> b"}),
        )
        .await;
    assert_eq!(same.status, 200, "{:#}", same.body);
    assert_eq!(same.body["version"], 1);

    // A change is version 2 and keeps the overview when the update leaves it out.
    let two = server
        .put(&path, json!({"source": "v2", "diagram": "none"}))
        .await;
    assert_eq!(two.body["version"], 2);
    assert_eq!(two.body["overview"], "Adds things up.");
    assert_eq!(two.body["diagram"], "none");
    let three = server
        .put(
            &path,
            json!({"source": "v2", "diagram": "none", "overview": "New words."}),
        )
        .await;
    assert_eq!(three.body["version"], 3);
    assert_eq!(three.body["overview"], "New words.");

    let retired = server.delete(&path).await;
    assert_eq!(retired.status, 200);
    assert_eq!(retired.body["status"], "retired");
    assert_eq!(retired.body["version"], 3);

    let events = server.all_events(&pb).await;
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "definition_created",
            "definition_updated",
            "definition_updated",
            "definition_retired"
        ]
    );
    for (event, version) in events.iter().zip([1, 2, 3, 3]) {
        assert_eq!(event["source"], "/definitions/prediction/sum");
        assert_eq!(event["subject"], "prediction/sum");
        assert_eq!(event["caller"], "local");
        assert_eq!(event["definitionversion"], version);
    }
    let seqs: Vec<i64> = events.iter().map(|e| e["seq"].as_i64().unwrap()).collect();
    assert_eq!(seqs, [1, 2, 3, 4]);
}

#[tokio::test]
async fn a_retired_definition_takes_no_updates() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .post(&format!("{pb}/definitions"), create_body("sum", "v1"))
        .await;
    let path = format!("{pb}/definitions/prediction/sum");
    server.delete(&path).await;
    server
        .put(&path, json!({"source": "v2", "diagram": "none"}))
        .await
        .assert_problem(409, "conflict");
    server.delete(&path).await.assert_problem(409, "conflict");
    server
        .post(&format!("{pb}/definitions"), create_body("sum", "v1"))
        .await
        .assert_problem(409, "conflict");
    assert_eq!(server.get(&path).await.body["status"], "retired");
    assert_eq!(server.all_events(&pb).await.len(), 2);
}

#[tokio::test]
async fn documents_with_problems_are_refused_with_their_issues() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let source = (1..=25)
        .map(|i| {
            if i == 1 {
                "ok".to_owned()
            } else {
                format!("bad {i}")
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let reply = server
        .post(&format!("{pb}/definitions"), create_body("sum", &source))
        .await;
    let problem = reply.assert_problem(422, "invalid_input");
    assert_eq!(
        problem["title"],
        "The prediction function sum was not saved: its document has problems"
    );
    let issues = problem["issues"].as_array().unwrap();
    assert_eq!(issues.len(), 21);
    assert_eq!(
        issues[0],
        json!({"pointer": "/source", "line": 2, "path": "/line", "message": "Line 2, /line: This line is bad."})
    );
    assert_eq!(
        issues[20]["message"],
        "Line 22: 4 more issues are not shown."
    );
    // Nothing was stored.
    assert!(server.all_events(&pb).await.is_empty());
    server
        .get(&format!("{pb}/definitions/prediction/sum"))
        .await
        .assert_problem(404, "not_found");
}

#[tokio::test]
async fn bad_definition_bodies_are_refused() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let defs = format!("{pb}/definitions");
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"type": "prediction", "name": "sum", "source": "x"}),
            "",
        ),
        (
            json!({"type": "nope", "name": "sum", "source": "x", "diagram": "none"}),
            "/type",
        ),
        (
            json!({"type": "prediction", "name": "Sum", "source": "x", "diagram": "none"}),
            "/name",
        ),
        (
            json!({"type": "prediction", "name": format!("s{}", "u".repeat(64)), "source": "x", "diagram": "none"}),
            "/name",
        ),
        (
            json!({"type": "prediction", "name": "sum", "source": 3, "diagram": "none"}),
            "/source",
        ),
        (
            json!({"type": "prediction", "name": "sum", "source": "x", "diagram": "pie\n a"}),
            "/diagram",
        ),
        (
            json!({"type": "prediction", "name": "sum", "source": "x", "diagram": format!("graph TD\n{}", "x".repeat(8192))}),
            "/diagram",
        ),
        (
            json!({"type": "prediction", "name": "sum", "source": "x", "diagram": "none", "overview": ""}),
            "/overview",
        ),
        (
            json!({"type": "prediction", "name": "sum", "source": "x", "diagram": "none", "overview": "o".repeat(16_385)}),
            "/overview",
        ),
        (
            json!({"type": "prediction", "name": "sum", "source": "x", "diagram": "none", "extra": 1}),
            "/extra",
        ),
    ];
    for (body, pointer) in cases {
        let reply = server.post(&defs, body.clone()).await;
        let problem = reply.assert_problem(422, "invalid_input");
        assert_eq!(
            problem["issues"][0]["pointer"],
            json!(pointer),
            "{problem:#}"
        );
    }
    let at_edge = json!({"type": "prediction", "name": format!("s{}", "u".repeat(63)), "source": "x", "diagram": "none", "overview": "o".repeat(16_384)});
    assert_eq!(server.post(&defs, at_edge).await.status, 201);
    assert_eq!(server.all_events(&pb).await.len(), 1);
}

#[tokio::test]
async fn missing_definitions_and_playbooks_are_not_found() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    for path in [
        format!("{pb}/definitions/prediction/none"),
        format!("{pb}/definitions/nonsense/none"),
        "/v1/orgs/acme/playbooks/other/definitions/prediction/none".to_owned(),
        "/v1/orgs/other/playbooks/main/definitions".to_owned(),
    ] {
        server.get(&path).await.assert_problem(404, "not_found");
    }
    server
        .put(
            &format!("{pb}/definitions/prediction/none"),
            json!({"source": "x", "diagram": "none"}),
        )
        .await
        .assert_problem(404, "not_found");
    server
        .delete(&format!("{pb}/definitions/prediction/none"))
        .await
        .assert_problem(404, "not_found");
}
