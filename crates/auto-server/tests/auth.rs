//! Bearer keys and roles: a request without a known key is 401, a key reaches its own org
//! only (403 for another), and its role bounds what it does (403 beyond it).

mod common;

use auto_server::auth::{KeyEntry, Role, new_key};
use common::TestServer;
use serde_json::json;

#[tokio::test]
async fn keys_roles_and_orgs() {
    let (admin_key, admin_hash) = new_key();
    let (viewer_key, viewer_hash) = new_key();
    let (runner_key, runner_hash) = new_key();
    let (other_key, other_hash) = new_key();
    let server = TestServer::start_with_keys(vec![
        KeyEntry::new("boss", "acme", Role::Admin, &admin_hash).unwrap(),
        KeyEntry::new("reader", "acme", Role::Viewer, &viewer_hash).unwrap(),
        KeyEntry::new("bot", "acme", Role::Runner, &runner_hash).unwrap(),
        KeyEntry::new("stranger", "globex", Role::Admin, &other_hash).unwrap(),
    ])
    .await;

    // No key, or a wrong one: 401, asking for a bearer key.
    for key in [None, Some("auto_wrong")] {
        let refused = match key {
            Some(key) => server.with_key(key).get("/v1/orgs").await,
            None => server.get("/v1/orgs").await,
        };
        let problem = refused.assert_problem(401, "forbidden");
        assert_eq!(problem["kind"], "unauthenticated", "{problem:#}");
        let mut request = reqwest::Client::new().get(format!("{}/v1/orgs", server.url));
        if let Some(key) = key {
            request = request.bearer_auth(key);
        }
        let answer = request.send().await.unwrap();
        assert_eq!(answer.status(), 401);
        assert_eq!(answer.headers()["www-authenticate"], "Bearer", "{key:?}");
    }
    // A refusal that is not about the key asks for none.
    let answer = reqwest::Client::new()
        .post(format!("{}/v1/orgs", server.url))
        .bearer_auth(&viewer_key)
        .json(&json!({"id": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 403);
    assert!(answer.headers().get("www-authenticate").is_none());

    let admin = server.with_key(&admin_key);
    assert_eq!(
        admin.post("/v1/orgs", json!({"id": "acme"})).await.status,
        201
    );
    admin
        .post("/v1/orgs", json!({"id": "globex"}))
        .await
        .assert_problem(403, "forbidden");
    assert_eq!(
        admin
            .post("/v1/orgs/acme/playbooks", json!({"id": "main"}))
            .await
            .status,
        201
    );

    let stranger = server.with_key(&other_key);
    assert_eq!(
        stranger
            .post("/v1/orgs", json!({"id": "globex"}))
            .await
            .status,
        201
    );
    stranger
        .get("/v1/orgs/acme/playbooks")
        .await
        .assert_problem(403, "forbidden");
    stranger
        .get("/v1/orgs/acme/playbooks/main/events")
        .await
        .assert_problem(403, "forbidden");
    let orgs = stranger.get("/v1/orgs").await;
    assert_eq!(
        orgs.body["orgs"].as_array().unwrap().len(),
        1,
        "a key sees its own org only"
    );

    let pb = "/v1/orgs/acme/playbooks/main";
    let viewer = server.with_key(&viewer_key);
    assert_eq!(viewer.get(&format!("{pb}/events")).await.status, 200);
    viewer
        .post(&format!("{pb}/events"), json!({"type": "a"}))
        .await
        .assert_problem(403, "forbidden");
    viewer
        .post("/v1/orgs/acme/playbooks", json!({"id": "x"}))
        .await
        .assert_problem(403, "forbidden");

    let runner = server.with_key(&runner_key);
    let published = runner
        .post(&format!("{pb}/events"), json!({"type": "a"}))
        .await;
    assert_eq!(published.status, 201);
    assert_eq!(published.body["caller"], "bot");
    runner
        .post_definition(pb, "prediction", "x", "x")
        .await
        .assert_problem(403, "forbidden");
    admin.save_definition(pb, "prediction", "x", "x").await;
}
