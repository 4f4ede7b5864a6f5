//! A server killed with SIGKILL while it builds a recall view: after a restart, the view goes
//! on from the last batch the first server kept, not from the first event, and ends with every
//! event folded once.

mod common;

use std::time::Duration;

use common::{serve_in, wait_for};
use serde_json::json;

const EVENTS: usize = 5_000;

/// Counts orders, slowly: each fold does some work, so that the build takes seconds.
const SLOW_COUNT: &str = r#"---
description: Orders counted, slowly.
events: [order.placed]
---
Every order placed, counted once.

```ts
type View = { count: number; sum: number };
export const initial: View = { count: 0, sum: 0 };
export function fold(view: View, event: any): View {
  let spin = 0;
  for (let i = 0; i < 4000; i++) spin = (spin + i) % 7;
  return { count: view.count + 1, sum: view.sum + event.data.id + spin * 0 };
}
export function answer(view: View, input: any) {
  return view;
}
```
"#;

/// The follower's kept batches in a server's log: (from, to, built).
fn kept_batches(lines: &[String]) -> Vec<(i64, i64, bool)> {
    let field = |line: &str, name: &str| -> Option<String> {
        let at = line.find(&format!(" {name}="))? + name.len() + 2;
        Some(line[at..].split_whitespace().next()?.to_owned())
    };
    lines
        .iter()
        .filter(|line| line.contains("a recall view's batch kept"))
        .filter_map(|line| {
            Some((
                field(line, "from")?.parse().ok()?,
                field(line, "to")?.parse().ok()?,
                field(line, "built")? == "true",
            ))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_view_built_when_the_server_was_killed_goes_on_from_its_last_kept_batch() {
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join("auto.toml"),
        "database = \"sqlite://auto.db\"\n",
    )
    .expect("the configuration");
    let debug = [("RUST_LOG", "info,auto_runtime::recall_runs=debug")];

    let mut first = serve_in(dir.path(), &debug);
    let api = first.client();
    let pb = api.playbook().await;
    let events = format!("{pb}/events");
    for chunk in (0..EVENTS).collect::<Vec<_>>().chunks(25) {
        let mut posts = tokio::task::JoinSet::new();
        for &i in chunk {
            let (api, events) = (api.clone(), events.clone());
            posts.spawn(async move {
                let order = json!({"type": "order.placed", "source": "/shop", "data": {"id": i}});
                api.post(&events, order).await
            });
        }
        for reply in posts.join_all().await {
            assert_eq!(reply.status, 201, "{:#}", reply.body);
        }
    }
    api.save_definition(&pb, "recall", "orders", SLOW_COUNT)
        .await;
    // The first batch kept, and the build not over: the server is killed.
    let kept = wait_for(Duration::from_secs(60), "a first batch kept", || {
        let batches = kept_batches(&first.log_lines());
        async move { (!batches.is_empty()).then_some(batches) }
    })
    .await;
    first.kill();
    let kept = kept_batches(&first.log_lines())
        .into_iter()
        .max()
        .unwrap_or(kept[0]);
    let (_, kept_to, built) = kept;
    assert!(
        !built && kept_to > 0,
        "the build ended before the kill, which proves nothing: {kept:?}"
    );

    let second = serve_in(dir.path(), &debug);
    let api = second.client();
    let batches = wait_for(Duration::from_secs(120), "the view built", || {
        let batches = kept_batches(&second.log_lines());
        async move { batches.iter().any(|b| b.2).then_some(batches) }
    })
    .await;
    // No batch begins before what the first server kept: nothing is folded twice.
    let first_from = batches.iter().map(|b| b.0).min().unwrap_or(0);
    assert!(
        first_from >= kept_to,
        "the second server began at {first_from}, before {kept_to}: {batches:?}"
    );
    let run = api
        .start_run(&pb, "recall", "orders", json!({"input": {}}))
        .await;
    assert_eq!(run.status, 200, "{:#}", run.body);
    assert_eq!(
        run.body["output"],
        json!({"count": EVENTS, "sum": EVENTS * (EVENTS - 1) / 2})
    );
}
