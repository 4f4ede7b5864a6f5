//! Publishing, listing and reading the playbook's events.

mod common;

use common::TestServer;
use serde_json::json;

#[tokio::test]
async fn published_events_are_listed_in_order_and_paged() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    for i in 0..5 {
        let reply = server
            .post(
                &format!("{pb}/events"),
                json!({"type": "com.example.tick", "data": {"i": i}, "region": "eu"}),
            )
            .await;
        assert_eq!(reply.status, 201, "{:#}", reply.body);
        assert_eq!(reply.body["seq"], i + 1);
        assert_eq!(reply.body["source"], "/callers/local");
        assert_eq!(reply.body["caller"], "local");
        assert_eq!(reply.body["depth"], 1);
        assert_eq!(reply.body["region"], "eu");
        assert_eq!(reply.body["specversion"], "1.0");
    }
    let page = server.get(&format!("{pb}/events?limit=2")).await;
    assert_eq!(page.body["events"].as_array().unwrap().len(), 2);
    assert_eq!(page.body["next"], "2");
    let page = server.get(&format!("{pb}/events?limit=2&after=4")).await;
    assert_eq!(page.body["events"][0]["seq"], 5);
    assert_eq!(page.body["next"], json!(null));
    let typed = server
        .get(&format!("{pb}/events?type=com.example.other"))
        .await;
    assert_eq!(typed.body["events"], json!([]));
}

#[tokio::test]
async fn large_data_is_shown_by_size_in_a_listing_and_in_full_alone() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let small = "x".repeat(2_046); // 2,048 bytes as a JSON string.
    let large = "x".repeat(2_047);
    server
        .post(
            &format!("{pb}/events"),
            json!({"type": "a", "id": "small", "data": small}),
        )
        .await;
    server
        .post(
            &format!("{pb}/events"),
            json!({"type": "a", "id": "large", "data": large}),
        )
        .await;
    let events = server.all_events(&pb).await;
    assert_eq!(events[0]["data"], json!(small));
    assert!(events[1].get("data").is_none());
    assert_eq!(events[1]["data_bytes"], 2_049);
    let full = server.get(&format!("{pb}/events/large")).await;
    assert_eq!(full.body["data"], json!(large));
    server
        .get(&format!("{pb}/events/nope"))
        .await
        .assert_problem(404, "not_found");
}

#[tokio::test]
async fn bad_events_are_refused_and_nothing_is_recorded() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let events = format!("{pb}/events");
    let cases = [
        (json!({}), "/type"),
        (json!({"type": ""}), "/type"),
        (json!({"type": 5}), "/type"),
        (json!({"type": "definition_created"}), "/type"),
        (json!({"type": "a", "source": "/runs/r1"}), "/source"),
        (json!({"type": "a", "time": "yesterday"}), "/time"),
        (json!({"type": "a", "specversion": "0.3"}), "/specversion"),
        (json!({"type": "a", "seq": 3}), "/seq"),
        (json!({"type": "a", "caller": "me"}), "/caller"),
        (json!({"type": "a", "Bad_Name": 1}), "/Bad_Name"),
        (json!({"type": "a", "id": "i".repeat(257)}), "/id"),
    ];
    for (body, pointer) in cases {
        let reply = server.post(&events, body.clone()).await;
        let problem = reply.assert_problem(422, "invalid_input");
        assert_eq!(
            problem["issues"][0]["pointer"],
            json!(pointer),
            "{body}: {problem:#}"
        );
    }
    assert!(server.all_events(&pb).await.is_empty());
    // A duplicate id is a conflict.
    assert_eq!(
        server
            .post(&events, json!({"type": "a", "id": "e1"}))
            .await
            .status,
        201
    );
    server
        .post(&events, json!({"type": "a", "id": "e1"}))
        .await
        .assert_problem(409, "conflict");
    assert_eq!(server.all_events(&pb).await.len(), 1);
}

#[tokio::test]
async fn bad_queries_are_refused() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    for query in ["limit=0", "limit=1001", "limit=x", "after=-1", "after=x"] {
        server
            .get(&format!("{pb}/events?{query}"))
            .await
            .assert_problem(422, "invalid_input");
    }
    assert_eq!(
        server.get(&format!("{pb}/events?limit=1000")).await.status,
        200
    );
}

#[tokio::test]
async fn deep_data_is_taken_to_the_body_limit() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let nested = |levels: usize| format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
    let limit = auto_server::http::BODY_DEPTH_MAX;
    // The body's own object is one level.
    let body = format!("{{\"type\": \"a\", \"data\": {}}}", nested(limit - 1));
    let reply = server
        .raw(
            reqwest::Method::POST,
            &format!("{pb}/events"),
            Some("application/json"),
            body.into_bytes(),
        )
        .await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    let body = format!("{{\"type\": \"a\", \"data\": {}}}", nested(limit));
    let reply = server
        .raw(
            reqwest::Method::POST,
            &format!("{pb}/events"),
            Some("application/json"),
            body.into_bytes(),
        )
        .await;
    reply.assert_problem(422, "invalid_input");
    let body = format!("{{\"type\": \"a\", \"data\": {}}}", nested(100_000));
    let reply = server
        .raw(
            reqwest::Method::POST,
            &format!("{pb}/events"),
            Some("application/json"),
            body.into_bytes(),
        )
        .await;
    reply.assert_problem(422, "invalid_input");
}
