//! Load test of event triggers: events published per second through HTTP with no workflow's
//! filters installed and with 100 (each matching a hundredth of the events with a `$data`
//! expression), and the delay from an event's commit to the start of the run it triggered.
//!
//! ```sh
//! cargo run --release -p auto-server --example trigger_load -- 2000
//! cargo run --release -p auto-server --example trigger_load -- 2000 postgres
//! ```
//!
//! The optional second argument picks the store (`sqlite`, the default, or `postgres`, at
//! `AUTO_TEST_POSTGRES` or the local test database). The server sweeps every 1 s, as by
//! default, and soon after each event it records.

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;
use std::time::{Duration, Instant};

use auto_server::Options;
use auto_server::auth::Keys;
use chrono::DateTime;
use serde_json::{Value, json};

const WORKFLOWS: usize = 100;
const CONCURRENCY: usize = 16;

async fn post(http: &reqwest::Client, url: String, body: Value) -> Value {
    let reply = http.post(&url).json(&body).send().await.expect("a reply");
    assert!(reply.status().is_success(), "{url}: {}", reply.status());
    reply.json().await.expect("JSON")
}

async fn publish_all(http: &reqwest::Client, pb: &str, events: usize, tag: &str) -> Duration {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for lane in 0..CONCURRENCY {
        let (http, pb, tag) = (http.clone(), pb.to_owned(), tag.to_owned());
        tasks.push(tokio::spawn(async move {
            for n in (lane..events).step_by(CONCURRENCY) {
                post(
                    &http,
                    format!("{pb}/events"),
                    json!({"type": "com.example.load", "id": format!("{tag}-{n}"), "data": {"n": n}}),
                )
                .await;
            }
        }));
    }
    for task in tasks {
        task.await.expect("a lane");
    }
    started.elapsed()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let index = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let events: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(2_000);
    let store_kind = args.next().unwrap_or_else(|| "sqlite".into());
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store = match store_kind.as_str() {
        "postgres" => {
            let url = std::env::var("AUTO_TEST_POSTGRES")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
            auto_store::open_postgres_isolated(&url)
                .await
                .expect("PostgreSQL")
        }
        _ => auto_store::open(&format!(
            "sqlite://{}",
            dir.path().join("auto.db").display()
        ))
        .await
        .expect("a SQLite store"),
    };
    let handle = auto_server::start(Options {
        listen: "127.0.0.1:0".parse().expect("an address"),
        store: Arc::clone(&store),
        keys: Keys::default(),
        checkers: auto_server::server_checkers(),
        models: auto_server::reasoning_runs::Models::none(),
        limits: Default::default(),
        http: Default::default(),
        retention: Default::default(),
    })
    .await
    .expect("the server starts");
    let base = handle.url();
    let http = reqwest::Client::new();
    post(&http, format!("{base}/v1/orgs"), json!({"id": "load"})).await;
    post(
        &http,
        format!("{base}/v1/orgs/load/playbooks"),
        json!({"id": "main"}),
    )
    .await;
    let pb = format!("{base}/v1/orgs/load/playbooks/main");
    println!("trigger load: {events} events through HTTP, {CONCURRENCY} at once, on {store_kind}");
    let bare = publish_all(&http, &pb, events, "bare").await;
    println!(
        "  no filters installed:        {:>7.0} events/s",
        events as f64 / bare.as_secs_f64()
    );
    for i in 0..WORKFLOWS {
        let source = format!(
            "document:\n  dsl: 1.0.3\n  namespace: load\n  name: w{i}\n  version: 1.0.0\nschedule:\n  on:\n    one:\n      with: {{ type: com.example.load, data: '${{ $data.n % {WORKFLOWS} === {i} }}' }}\ndo:\n  - a:\n      set: {{ n: '${{ $data[0].data.n }}' }}\n"
        );
        post(
            &http,
            format!("{pb}/definitions"),
            json!({"type": "workflow", "name": format!("w{i}"), "source": source, "diagram": "none"}),
        )
        .await;
    }
    let with = publish_all(&http, &pb, events, "with").await;
    println!(
        "  {WORKFLOWS} workflows' filters:       {:>7.0} events/s ({:.2}x the time without)",
        events as f64 / with.as_secs_f64(),
        with.as_secs_f64() / bare.as_secs_f64()
    );
    // Each event starts one run; wait for them all.
    let deadline = Instant::now() + Duration::from_secs(600);
    let runs = loop {
        let listed: Value = http
            .get(format!("{pb}/runs?type=workflow&limit=1000"))
            .send()
            .await
            .expect("a reply")
            .json()
            .await
            .expect("JSON");
        let mut runs = listed["runs"].as_array().cloned().unwrap_or_default();
        let mut after = runs.last().map(|r| r["run_id"].clone());
        while let Some(Value::String(cursor)) = after.take() {
            let page: Value = http
                .get(format!("{pb}/runs?type=workflow&limit=1000&after={cursor}"))
                .send()
                .await
                .expect("a reply")
                .json()
                .await
                .expect("JSON");
            let more = page["runs"].as_array().cloned().unwrap_or_default();
            after = more.last().map(|r| r["run_id"].clone());
            runs.extend(more);
        }
        if runs.len() >= events || Instant::now() > deadline {
            break runs;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let mut delays = Vec::new();
    for listed in &runs {
        let run: Value = http
            .get(format!(
                "{pb}/runs/{}",
                listed["run_id"].as_str().unwrap_or_default()
            ))
            .send()
            .await
            .expect("a reply")
            .json()
            .await
            .expect("JSON");
        let (Some(time), Some(started)) =
            (run["input"][0]["time"].as_str(), run["started_at"].as_str())
        else {
            continue;
        };
        let (Ok(time), Ok(started)) = (
            DateTime::parse_from_rfc3339(time),
            DateTime::parse_from_rfc3339(started),
        ) else {
            continue;
        };
        delays.push((started - time).num_microseconds().unwrap_or(0) as f64 / 1000.0);
    }
    delays.sort_by(f64::total_cmp);
    println!(
        "  runs started: {} of {events}; delay from the event's commit to its run's start: median {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        runs.len(),
        percentile(&delays, 50.0),
        percentile(&delays, 99.0),
        delays.last().copied().unwrap_or(0.0),
    );
    handle.stop().await.expect("the server stops");
}
