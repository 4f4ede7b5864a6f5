//! Orgs and playbooks over HTTP, with their bad inputs.

mod common;

use common::TestServer;
use reqwest::Method;
use serde_json::json;

#[tokio::test]
async fn orgs_are_created_listed_and_read() {
    let server = TestServer::start().await;
    let reply = server
        .post("/v1/orgs", json!({"id": "acme", "title": "Acme"}))
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    assert_eq!(reply.body["id"], "acme");
    assert_eq!(reply.body["title"], "Acme");
    assert!(reply.body["created_at"].is_string());
    let reply = server.get("/v1/orgs").await;
    assert_eq!(reply.body["orgs"].as_array().unwrap().len(), 1);
    assert_eq!(server.get("/v1/orgs/acme").await.body["id"], "acme");
    server
        .get("/v1/orgs/nope")
        .await
        .assert_problem(404, "not_found");
}

#[tokio::test]
async fn a_duplicate_org_is_a_conflict() {
    let server = TestServer::start().await;
    assert_eq!(
        server.post("/v1/orgs", json!({"id": "acme"})).await.status,
        201
    );
    server
        .post("/v1/orgs", json!({"id": "acme"}))
        .await
        .assert_problem(409, "conflict");
}

#[tokio::test]
async fn bad_org_bodies_are_refused_at_their_fields() {
    let server = TestServer::start().await;
    let cases = [
        (json!({"id": "Acme"}), "/id"),
        (json!({"id": "-acme"}), "/id"),
        (json!({"id": "a".repeat(64)}), "/id"),
        (json!({"id": 7}), "/id"),
        (json!({}), ""),
        (json!({"id": "acme", "owner": "x"}), "/owner"),
        (json!({"id": "acme", "title": ""}), "/title"),
        (json!({"id": "acme", "title": "t".repeat(201)}), "/title"),
        (json!([1, 2]), ""),
        (json!("acme"), ""),
    ];
    for (body, pointer) in cases {
        let reply = server.post("/v1/orgs", body.clone()).await;
        let problem = reply.assert_problem(422, "invalid_input");
        assert_eq!(
            problem["issues"][0]["pointer"],
            json!(pointer),
            "{body}: {problem:#}"
        );
    }
    // The edges that are accepted.
    assert_eq!(
        server
            .post("/v1/orgs", json!({"id": "a".repeat(63)}))
            .await
            .status,
        201
    );
    assert_eq!(
        server
            .post("/v1/orgs", json!({"id": "0", "title": "t".repeat(200)}))
            .await
            .status,
        201
    );
    // Nothing else was stored.
    assert_eq!(
        server.get("/v1/orgs").await.body["orgs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn the_problem_messages_name_the_field() {
    let server = TestServer::start().await;
    let reply = server.post("/v1/orgs", json!({})).await;
    assert_eq!(reply.issue_messages(), vec!["The field id is required."]);
    let reply = server
        .post("/v1/orgs", json!({"id": "acme", "owner": "x"}))
        .await;
    assert_eq!(
        reply.issue_messages(),
        vec!["The field owner is not known (expected `id` or `title`)."]
    );
    let reply = server.post("/v1/orgs", json!({"id": "Acme"})).await;
    assert_eq!(
        reply.issue_messages(),
        vec![
            "\"Acme\" is not an org id: a lowercase letter or digit, then up to 62 lowercase letters, digits and hyphens."
        ]
    );
}

#[tokio::test]
async fn malformed_bodies_get_problem_documents() {
    let server = TestServer::start().await;
    let reply = server
        .raw(
            Method::POST,
            "/v1/orgs",
            Some("application/json"),
            b"{\"id\": ".to_vec(),
        )
        .await;
    assert_eq!(
        reply.assert_problem(422, "invalid_input")["kind"],
        "malformed_json"
    );
    let reply = server
        .raw(
            Method::POST,
            "/v1/orgs",
            Some("text/plain"),
            b"{\"id\": \"a\"}".to_vec(),
        )
        .await;
    assert_eq!(
        reply.assert_problem(422, "invalid_input")["kind"],
        "unsupported_media_type"
    );
    let reply = server
        .raw(Method::POST, "/v1/orgs", None, b"{\"id\": \"a\"}".to_vec())
        .await;
    assert_eq!(
        reply.assert_problem(422, "invalid_input")["kind"],
        "unsupported_media_type"
    );
    let huge = format!(
        "{{\"id\": \"a\", \"title\": \"{}\"}}",
        "x".repeat(auto_server::http::BODY_BYTES_MAX)
    );
    let reply = server
        .raw(
            Method::POST,
            "/v1/orgs",
            Some("application/json"),
            huge.into_bytes(),
        )
        .await;
    assert_eq!(
        reply.assert_problem(422, "invalid_input")["kind"],
        "too_large"
    );
    let reply = server
        .raw(
            Method::POST,
            "/v1/orgs",
            Some("application/json; charset=utf-8"),
            b"{\"id\": \"a\"}".to_vec(),
        )
        .await;
    assert_eq!(reply.status, 201);
}

#[tokio::test]
async fn playbooks_live_in_orgs() {
    let server = TestServer::start().await;
    server
        .post("/v1/orgs/acme/playbooks", json!({"id": "main"}))
        .await
        .assert_problem(404, "not_found");
    let pb = server.playbook().await;
    assert_eq!(server.get(&pb).await.body["id"], "main");
    let list = server.get("/v1/orgs/acme/playbooks").await;
    assert_eq!(list.body["playbooks"][0]["id"], "main");
    assert_eq!(list.body["playbooks"][0]["org"], "acme");
    server
        .post("/v1/orgs/acme/playbooks", json!({"id": "main"}))
        .await
        .assert_problem(409, "conflict");
    server
        .post("/v1/orgs/acme/playbooks", json!({"id": "Main"}))
        .await
        .assert_problem(422, "invalid_input");
    server
        .get("/v1/orgs/acme/playbooks/nope")
        .await
        .assert_problem(404, "not_found");
    server
        .get("/v1/orgs/nope/playbooks")
        .await
        .assert_problem(404, "not_found");
}

#[tokio::test]
async fn unknown_routes_and_methods_are_problems() {
    let server = TestServer::start().await;
    let reply = server.get("/nowhere").await;
    reply.assert_problem(404, "not_found");
    // A known route with a method it does not take: 405, naming its methods.
    let reply = server.send(Method::PATCH, "/v1/orgs", None).await;
    let problem = reply.assert_problem(405, "invalid_input");
    assert_eq!(problem["kind"], "method_not_allowed");
    let reply = server
        .get("/v1/orgs/acme/playbooks/main/definitions/workflow")
        .await;
    reply.assert_problem(404, "not_found");
}

#[tokio::test]
async fn health_metrics_and_openapi() {
    let server = TestServer::start().await;
    let health = server.get("/healthz").await;
    assert_eq!(health.status, 200);
    assert_eq!(health.body["status"], "ok");
    let openapi = server.get("/v1/openapi.json").await;
    assert_eq!(openapi.body["openapi"], "3.1.0");
    assert!(openapi.body["paths"]["/v1/orgs/{org}/playbooks/{pb}/definitions"]["post"].is_object());
    let metrics = server.get("/metrics").await;
    let text = metrics.body.as_str().unwrap();
    assert!(text.contains("auto_http_requests_total{"), "{text}");
    assert!(text.contains("route=\"/v1/openapi.json\""), "{text}");
}
