//! What the Studio reads beside the definitions and runs API, each an operation any client can
//! use: who the key is (`get_caller`), a check that saves nothing (`check_definition`), every
//! version of a definition, the playbook's log as server-sent events, and the Studio's pages
//! themselves, served from the binary.

mod common;

use std::time::Duration;

use auto_server::auth::{KeyEntry, Role, new_key};
use common::TestServer;
use serde_json::{Value, json};

const MONTH_WINDOW: &str = include_str!("../../../docs/examples/month-window.computation.md");

#[tokio::test]
async fn the_caller_is_told_its_role_and_org() {
    let server = TestServer::start().await;
    let me = server.get("/v1/me").await;
    assert_eq!(me.status, 200);
    assert_eq!(
        me.body,
        json!({"caller": "local", "role": "admin", "org": null})
    );

    let (viewer_key, viewer_hash) = new_key();
    let keyed = TestServer::start_with_keys(vec![
        KeyEntry::new("reader", "acme", Role::Viewer, &viewer_hash).unwrap(),
    ])
    .await;
    let me = keyed.with_key(&viewer_key).get("/v1/me").await;
    assert_eq!(
        me.body,
        json!({"caller": "reader", "role": "viewer", "org": "acme"})
    );
    // No key at all: 401, the problem's reason still `forbidden` (kind `unauthenticated`).
    keyed.get("/v1/me").await.assert_problem(401, "forbidden");
}

#[tokio::test]
async fn a_check_says_what_a_save_would_and_saves_nothing() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    let body = |source: &str| json!({"type": "computation", "name": "month-window", "source": source, "diagram": "none"});
    let good = server
        .post(&format!("{pb}/definitions/check"), body(MONTH_WINDOW))
        .await;
    assert_eq!(good.status, 200, "{:#}", good.body);
    assert_eq!(good.body["valid"], true);
    assert_eq!(good.body["issues"], json!([]));
    assert_eq!(good.body["input_schema"]["required"], json!(["month"]));
    assert_eq!(
        good.body["output_schema"]["required"],
        json!(["first", "last", "days"])
    );

    // The document broken at line 3: the issue carries its line, as the save's would.
    let broken = MONTH_WINDOW.replacen("input:\n", "inptu:\n", 1);
    let checked = server
        .post(&format!("{pb}/definitions/check"), body(&broken))
        .await;
    assert_eq!(checked.status, 200);
    assert_eq!(checked.body["valid"], false);
    let saved = server
        .post(&format!("{pb}/definitions"), body(&broken))
        .await;
    saved.assert_problem(422, "invalid_input");
    assert_eq!(checked.body["issues"], saved.body["issues"]);
    assert_eq!(checked.body["issues"][0]["line"], 3, "{:#}", checked.body);

    // Fields are checked beside the document, each at its pointer.
    let fields = server
        .post(
            &format!("{pb}/definitions/check"),
            json!({"type": "computation", "name": "Bad Name", "source": MONTH_WINDOW, "diagram": "pie"}),
        )
        .await;
    let pointers: Vec<&str> = fields.body["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["pointer"].as_str().unwrap())
        .collect();
    assert_eq!(pointers, ["/name", "/diagram"], "{:#}", fields.body);
    let unknown = server
        .post(
            &format!("{pb}/definitions/check"),
            json!({"type": "spreadsheet", "name": "a", "source": "x", "diagram": "none"}),
        )
        .await;
    assert_eq!(unknown.body["issues"][0]["pointer"], "/type");

    // Nothing was saved, and nothing recorded.
    let listed = server.get(&format!("{pb}/definitions")).await;
    assert_eq!(listed.body["definitions"], json!([]));
    let events = server.get(&format!("{pb}/events")).await;
    assert_eq!(events.body["events"], json!([]));

    // A body that is not a definition's is refused as create_definition refuses it.
    server
        .post(&format!("{pb}/definitions/check"), json!({"source": 1}))
        .await
        .assert_problem(422, "invalid_input");
    server
        .post(
            "/v1/orgs/acme/playbooks/nope/definitions/check",
            body(MONTH_WINDOW),
        )
        .await
        .assert_problem(404, "not_found");
}

#[tokio::test]
async fn every_version_of_a_definition_is_listed_and_read() {
    let server = TestServer::start().await;
    let pb = server.playbook().await;
    server
        .save_definition(&pb, "computation", "month-window", MONTH_WINDOW)
        .await;
    let path = format!("{pb}/definitions/computation/month-window");
    for n in 2..=3 {
        let source = MONTH_WINDOW.replacen(
            "computed in UTC.",
            &format!("computed in UTC (version {n})."),
            1,
        );
        let updated = server
            .put(&path, json!({"source": source, "diagram": "none"}))
            .await;
        assert_eq!(updated.status, 200, "{:#}", updated.body);
    }
    let versions = server.get(&format!("{path}/versions")).await;
    assert_eq!(versions.status, 200, "{:#}", versions.body);
    let listed = versions.body["versions"].as_array().unwrap();
    let numbers: Vec<i64> = listed
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, [1, 2, 3]);
    assert_eq!(listed[0]["source"], MONTH_WINDOW);
    assert!(
        listed[2]["source"]
            .as_str()
            .unwrap()
            .contains("(version 3)")
    );

    let second = server.get(&format!("{path}?version=2")).await;
    assert_eq!(second.status, 200);
    assert_eq!(second.body["version"], 2);
    assert!(
        second.body["source"]
            .as_str()
            .unwrap()
            .contains("(version 2)")
    );
    let latest = server.get(&format!("{path}?version=")).await;
    assert_eq!(latest.body["version"], 3);

    let missing = server.get(&format!("{path}?version=4")).await;
    missing.assert_problem(404, "not_found");
    assert_eq!(
        missing.body["detail"],
        "The computation function month-window has no version 4: its versions are 1 to 3."
    );
    for bad in ["0", "two", "-1"] {
        let refused = server.get(&format!("{path}?version={bad}")).await;
        refused.assert_problem(422, "invalid_input");
        assert_eq!(refused.body["issues"][0]["pointer"], "/query/version");
    }
    server
        .get(&format!("{pb}/definitions/computation/nope/versions"))
        .await
        .assert_problem(404, "not_found");
}

/// A server-sent events reader for the tests: the messages of a stream as `(id, event, data)`.
struct Stream {
    response: reqwest::Response,
    buffer: String,
}

impl Stream {
    async fn open(server: &TestServer, path: &str, last_id: Option<&str>) -> reqwest::Response {
        let mut request = server.http.get(format!("{}{path}", server.url));
        if let Some(id) = last_id {
            request = request.header("last-event-id", id);
        }
        request.send().await.expect("the server answers")
    }

    fn new(response: reqwest::Response) -> Self {
        assert_eq!(response.status(), 200);
        assert_eq!(
            response.headers()["content-type"].to_str().unwrap(),
            "text/event-stream"
        );
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next message, or `None` when the stream ends; fails after five seconds.
    async fn next(&mut self) -> Option<(String, String, Value)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut id = String::new();
                let mut event = String::new();
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id: ") {
                        id = v.into();
                    } else if let Some(v) = line.strip_prefix("event: ") {
                        event = v.into();
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        data.push_str(v);
                    }
                }
                if data.is_empty() {
                    continue;
                }
                return Some((id, event, serde_json::from_str(&data).expect("JSON data")));
            }
            let chunk = tokio::time::timeout(Duration::from_secs(5), self.response.chunk())
                .await
                .expect("a message within five seconds")
                .expect("the stream reads");
            match chunk {
                Some(bytes) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                None => return None,
            }
        }
    }
}

#[tokio::test]
async fn the_log_streams_in_order_and_resumes_after_the_last_id() {
    let mut server = TestServer::start().await;
    let pb = server.playbook().await;
    let publish = |n: u32| {
        let server = &server;
        let pb = pb.clone();
        async move {
            let reply = server
                .post(
                    &format!("{pb}/events"),
                    json!({"type": if n.is_multiple_of(2) { "com.example.even" } else { "com.example.odd" }, "data": {"n": n}}),
                )
                .await;
            assert_eq!(reply.status, 201, "{:#}", reply.body);
        }
    };
    publish(1).await;
    let mut stream = Stream::new(Stream::open(&server, &format!("{pb}/events/stream"), None).await);
    let (id, event, data) = stream.next().await.unwrap();
    assert_eq!((id.as_str(), event.as_str()), ("1", "com.example.odd"));
    assert_eq!(data["data"]["n"], 1);
    assert_eq!(data["seq"], 1);
    // Published while the stream is open: it arrives without asking.
    publish(2).await;
    publish(3).await;
    let (id, event, _) = stream.next().await.unwrap();
    assert_eq!((id.as_str(), event.as_str()), ("2", "com.example.even"));
    assert_eq!(stream.next().await.unwrap().0, "3");
    drop(stream);

    // Resumed after the last id read; Last-Event-ID wins over `after`.
    publish(4).await;
    let mut resumed =
        Stream::new(Stream::open(&server, &format!("{pb}/events/stream?after=0"), Some("3")).await);
    assert_eq!(resumed.next().await.unwrap().0, "4");

    // Filtered by type, from a cursor.
    let mut evens = Stream::new(
        Stream::open(
            &server,
            &format!("{pb}/events/stream?type=com.example.even&after=1"),
            None,
        )
        .await,
    );
    assert_eq!(evens.next().await.unwrap().0, "2");
    assert_eq!(evens.next().await.unwrap().0, "4");

    // From the end: only what is recorded after the stream opens.
    let mut from_now =
        Stream::new(Stream::open(&server, &format!("{pb}/events/stream?after=end"), None).await);
    publish(5).await;
    assert_eq!(from_now.next().await.unwrap().0, "5");
    assert_eq!(resumed.next().await.unwrap().0, "5");
    drop(from_now);

    // Bad cursors are refused before the stream opens.
    let refused = Stream::open(&server, &format!("{pb}/events/stream"), Some("x")).await;
    assert_eq!(refused.status(), 422);
    let problem: Value = refused.json().await.unwrap();
    assert_eq!(problem["issues"][0]["pointer"], "/headers/last-event-id");
    for bad in ["-2", "ends", "END"] {
        let refused = Stream::open(&server, &format!("{pb}/events/stream?after={bad}"), None).await;
        assert_eq!(refused.status(), 422, "{bad}");
    }
    let missing = Stream::open(&server, "/v1/orgs/acme/playbooks/nope/events/stream", None).await;
    assert_eq!(missing.status(), 404);

    // The server stops: the streams under way end, and do not hold it.
    let handle = server.handle.take().unwrap();
    tokio::time::timeout(Duration::from_secs(5), handle.stop())
        .await
        .expect("the server stops with streams open")
        .unwrap();
    assert!(resumed.next().await.is_none());
    assert!(evens.next().await.is_none());
}

#[tokio::test]
async fn a_stream_shows_only_what_the_key_may_read() {
    let (viewer_key, viewer_hash) = new_key();
    let (other_key, other_hash) = new_key();
    let (admin_key, admin_hash) = new_key();
    let server = TestServer::start_with_keys(vec![
        KeyEntry::new("reader", "acme", Role::Viewer, &viewer_hash).unwrap(),
        KeyEntry::new("boss", "acme", Role::Admin, &admin_hash).unwrap(),
        KeyEntry::new("stranger", "globex", Role::Admin, &other_hash).unwrap(),
    ])
    .await;
    server.with_key(&admin_key).playbook().await;
    let path = "/v1/orgs/acme/playbooks/main/events/stream";
    let viewer = server.with_key(&viewer_key);
    let mut response = viewer
        .http
        .get(format!("{}{path}", viewer.url))
        .bearer_auth(&viewer_key);
    response = response.header("accept", "text/event-stream");
    assert_eq!(response.send().await.unwrap().status(), 200);
    let stranger = server
        .http
        .get(format!("{}{path}", server.url))
        .bearer_auth(&other_key)
        .send()
        .await
        .unwrap();
    assert_eq!(stranger.status(), 403);
    let nobody = server
        .http
        .get(format!("{}{path}", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(nobody.status(), 401);
}

#[tokio::test]
async fn the_studio_is_served_from_the_binary() {
    let server = TestServer::start().await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let root = http.get(format!("{}/", server.url)).send().await.unwrap();
    assert_eq!(root.status(), 303);
    assert_eq!(root.headers()["location"], "/studio/");

    let page = http
        .get(format!("{}/studio/", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    assert!(
        page.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .starts_with("default-src 'self'")
    );
    let html = page.text().await.unwrap();
    assert!(html.contains("<title>"), "{html}");
    // Every script and style the page names is served from the binary, and none elsewhere.
    let assets: Vec<&str> = html
        .split(['"', '\''])
        .filter(|part| part.starts_with("/studio/assets/"))
        .collect();
    assert!(!assets.is_empty(), "{html}");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "{html}"
    );
    for asset in assets {
        let served = http
            .get(format!("{}{asset}", server.url))
            .send()
            .await
            .unwrap();
        assert_eq!(served.status(), 200, "{asset}");
        assert_eq!(
            served.headers()["cache-control"],
            "public, max-age=31536000, immutable"
        );
    }
    let missing = http
        .get(format!("{}/studio/no-such-page.js", server.url))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    assert_eq!(
        missing.headers()["content-type"],
        "application/problem+json"
    );
}
