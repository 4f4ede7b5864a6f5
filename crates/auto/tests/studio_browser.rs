//! The Studio in a real browser: `auto serve` on a playbook seeded with the guides' examples,
//! and each of its pages opened in Debian's Chromium (driven by npm playwright-core, from
//! `scripts/studio-browser`), which must load without a script error or a refusal of its own
//! Content-Security-Policy, show what the page is about, load within a second and have no
//! serious or critical accessibility violation (axe-core). `tests/studio/browser.mjs` drives the
//! browser; its screenshots are kept in `target/studio-shots/`.
//!
//! Without `AUTO_STUDIO_BROWSER` the test skips with a note; under CI (`CI` set) it fails.

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::serve;
use serde_json::json;

const MONTH_WINDOW: &str = include_str!("../../../docs/examples/month-window.computation.md");
const APPROVE: &str = include_str!("../../../docs/examples/approve-expense.interaction.md");

/// A computation whose output is a `series`, drawn as a line chart.
const SERIES: &str = r#"---
description: Three months of sign-ups
output:
  shape: series
---
Sign-ups by month.

```ts
export default function () {
  return {
    title: "Sign-ups",
    lines: [{ name: "sign-ups", points: [
      { x: "2026-01-01", y: 12 }, { x: "2026-02-01", y: 19 }, { x: "2026-03-01", y: 31 },
    ] }],
  };
}
```
"#;

fn browser_tools() -> Option<PathBuf> {
    match std::env::var_os("AUTO_STUDIO_BROWSER") {
        Some(dir) => Some(PathBuf::from(dir)),
        None if std::env::var_os("CI").is_some() => {
            panic!("AUTO_STUDIO_BROWSER is not set: run scripts/studio-browser (CI runs it)")
        }
        None => {
            eprintln!(
                "skipped: set AUTO_STUDIO_BROWSER=\"$(scripts/studio-browser)\" to open the Studio in Chromium"
            );
            None
        }
    }
}

#[test]
fn every_page_of_the_studio_opens_in_a_browser() {
    let Some(tools) = browser_tools() else {
        return;
    };
    let server = serve();
    let client = server.client();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let run_id = runtime.block_on(async {
        let pb = client.playbook().await;
        for (def_type, name, source) in [
            ("computation", "month-window", MONTH_WINDOW),
            ("computation", "sign-ups", SERIES),
            ("interaction", "approve-expense", APPROVE),
        ] {
            let saved = client
                .post(
                    &format!("{pb}/definitions"),
                    json!({"type": def_type, "name": name, "source": source,
                           "overview": format!("The **{name}** function."), "diagram": "flowchart TD\n  a[Asked] --> b[Answered]"}),
                )
                .await;
            assert_eq!(saved.status, 201, "{name}: {:#}", saved.body);
        }
        let ran = client
            .post(
                &format!("{pb}/definitions/computation/month-window/runs"),
                json!({"input": {"month": "2024-02"}, "run_id": "february"}),
            )
            .await;
        assert_eq!(ran.status, 200, "{:#}", ran.body);
        let charted = client
            .post(
                &format!("{pb}/definitions/computation/sign-ups/runs"),
                json!({"run_id": "sign-ups-1"}),
            )
            .await;
        assert_eq!(charted.status, 200, "{:#}", charted.body);
        let asked = client
            .post(
                &format!("{pb}/definitions/interaction/approve-expense/runs"),
                json!({"input": {"manager": "dana@example.com", "amount": 120, "reason": "A team lunch"}}),
            )
            .await;
        assert_eq!(asked.status, 202, "{:#}", asked.body);
        let requests = client.get(&format!("{pb}/requests?status=open")).await;
        assert_eq!(
            requests.body["requests"][0]["status"], "open",
            "{:#}",
            requests.body
        );
        "february".to_owned()
    });
    let base = format!("{}/studio/#/o/acme/p/main", server.url);
    let pages = [
        ("definitions", format!("{base}/definitions"), "month-window"),
        (
            "definition",
            format!("{base}/definitions/computation/month-window"),
            "first and last day",
        ),
        (
            "start",
            format!("{base}/definitions/computation/month-window/run"),
            "month",
        ),
        ("runs", format!("{base}/runs"), run_id.as_str()),
        ("run", format!("{base}/runs/{run_id}"), "2024-02-29"),
        ("chart", format!("{base}/runs/sign-ups-1"), "Sign-ups"),
        ("inbox", format!("{base}/inbox"), "A team lunch"),
        ("events", format!("{base}/events"), "run_succeeded"),
    ];
    let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/studio-shots");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/studio/browser.mjs");
    let mut command = Command::new("node");
    command
        .arg(&script)
        .arg("--tools")
        .arg(&tools)
        .arg("--shots")
        .arg(&shots);
    for (name, url, text) in &pages {
        command.arg("--page").arg(format!("{name}|{url}|{text}"));
    }
    let output = command.output().expect("node runs");
    let printed = String::from_utf8_lossy(&output.stdout);
    let complaints = String::from_utf8_lossy(&output.stderr);
    println!("{printed}");
    assert!(
        output.status.success(),
        "the Studio failed in the browser:\n{complaints}\n{printed}\nserver log:\n{}",
        server.log_lines().join("\n")
    );
    assert_eq!(printed.lines().count(), pages.len(), "{printed}");
}
