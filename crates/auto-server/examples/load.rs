//! Load test of whole runs: the runtime's own cost per run (everything but the model) at a given
//! concurrency, against a provider double that answers at once.
//!
//! ```sh
//! cargo run --release -p auto-server --example load -- --concurrency 200 --runs 2000
//! cargo run --release -p auto-server --example load -- --store postgres --type computation
//! ```
//!
//! It starts a server in this process on a fresh store (a SQLite file in a temporary folder, or
//! a schema of its own on PostgreSQL), a provider double that answers every request with the
//! same short text, saves the reasoning page's brief-review example (or, with `--type
//! computation`, the README's month-window program), fires `--runs` runs through HTTP with at
//! most `--concurrency` at once after `--warmup` runs that are not counted, and prints the
//! median, p90, p99 and max latency of a run request and the runs per second. Every run must
//! succeed.
//!
//! Beside the figures it prints where the time went: each store operation's count per run and
//! its mean time (waiting for a connection or the writer included), the model call's own time as
//! the runs recorded it, and what re-checking the saved document costs, which every run does.
//!
//! With `--url` it runs against a server that is already up instead (its provider configured
//! by its operator, `--model` naming the model); then only the client's figures are printed.
//!
//! With `--type workflow` each run is a workflow of ten `set` tasks, which ends within its
//! request; with `--type calls` each run is the durable-step workload of
//! `docs/performance.md`, a workflow of three sequential calls of a computation function
//! `{x} -> {x: x + 1}` started with `{x: 0}` (a run answered 202 is followed until it ends, and
//! every run must end with `{x: 3}`); with `--type waiting` each run waits a day on a timer (its request answers 202),
//! and the process's resident memory before and after the runs shows what a waiting run holds.
//!
//! Options: `--type reasoning|computation|workflow|calls|waiting` (reasoning), `--store sqlite|postgres` (sqlite;
//! postgres from `--database`, else `AUTO_TEST_POSTGRES`, else
//! `postgres://postgres@127.0.0.1:5432/test`; sqlite in a temporary folder, or where
//! `--database sqlite://path` says), `--concurrency N` (1), `--runs N` (1000),
//! `--warmup N` (50), `--playbooks N` (1: every run in one playbook; more spreads the runs over
//! that many), `--url URL`, `--model provider/model`, `--pages N` (after the figures, N runs
//! one at a time on the checkpointed SQLite file, and the pages of its log they wrote, by
//! B-tree).

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use auto_server::Options;
use auto_server::auth::Keys;
use auto_store::{
    DefinitionKey, DefinitionVersion, Event, EventFilter, NewDefinitionVersion, NewEvent, NewRun,
    Org, Playbook, PlaybookRef, RecallView, Run, RunEnding, RunFilter, Store, ViewHead,
    WorkBacklog,
};
use auto_testkit::{ProviderDouble, ProviderKind, Reply};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};

const DEFAULT_MODEL: &str = "anthropic/claude-sonnet-4-5";

/// The reasoning page's example.
fn brief_review(model: &str) -> String {
    format!(
        r#"---
description: Reviews a campaign brief against the team's criteria
model: {model}
config:
  max_output_tokens: 800
input:
  schema:
    type: object
    properties:
      brief: {{ type: string }}
      criteria: {{ type: string }}
    required: [brief, criteria]
---

{{% system %}}Review the brief using the supplied criteria. Identify missing evidence. Do not invent facts.{{% endsystem %}}
Brief: {{{{ input.brief }}}}
Criteria: {{{{ input.criteria }}}}
"#
    )
}

/// The README's computation function.
const MONTH_WINDOW: &str = r#"---
description: The last day of a month
input:
  schema:
    type: object
    required: [month]
    properties:
      month:
        type: string
        description: The month, such as 2026-02
---
```ts
export default function (input: { month: string }) {
  const [year, month] = input.month.split("-").map(Number);
  return { last: new Date(Date.UTC(year, month, 0)).getUTCDate() };
}
```
"#;

#[derive(Debug, Clone, Copy, PartialEq)]
enum RunType {
    Reasoning,
    Computation,
    /// Ten `set` tasks, each with an expression: a run ends within its request.
    Workflow,
    /// Three sequential calls of a computation function: the durable-step workload.
    Calls,
    /// A run that waits a day on a timer: its request answers 202 and the run stays.
    Waiting,
}

/// The computation the `calls` workflow calls three times.
const ADD_ONE: &str = "---\ndescription: Adds one to x\n---\n```ts\nexport default function (input: { x: number }) {\n  return { x: input.x + 1 };\n}\n```\n";

/// The `calls` workflow.
fn add_three_times() -> String {
    let mut text = String::from(WORKFLOW_HEADER);
    text.push_str("do:\n");
    for step in ["first", "second", "third"] {
        text.push_str(&format!(
            "  - {step}:\n      call: run_definition\n      with: {{ type: computation, name: add-one, input: {{ x: '${{ $data.x }}' }} }}\n"
        ));
    }
    text
}

#[derive(Debug)]
struct Args {
    run_type: RunType,
    store: String,
    database: String,
    concurrency: usize,
    runs: usize,
    warmup: usize,
    playbooks: usize,
    url: Option<String>,
    model: String,
    /// After the figures, this many more runs one at a time on a checkpointed SQLite file,
    /// and the log's pages they wrote, by B-tree.
    pages: usize,
}

fn usage(error: &str) -> ! {
    eprintln!(
        "load: {error}\nusage: load [--type reasoning|computation|workflow|calls|waiting] [--store sqlite|postgres] [--database URL] [--concurrency N] [--runs N] [--warmup N] [--playbooks N] [--url URL] [--model provider/model] [--pages N]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut args = Args {
        run_type: RunType::Reasoning,
        store: "sqlite".into(),
        database: std::env::var("AUTO_TEST_POSTGRES")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into()),
        concurrency: 1,
        runs: 1000,
        warmup: 50,
        playbooks: 1,
        url: None,
        model: DEFAULT_MODEL.into(),
        pages: 0,
    };
    let mut words = std::env::args().skip(1);
    while let Some(flag) = words.next() {
        let mut value = || {
            words
                .next()
                .unwrap_or_else(|| usage(&format!("{flag} needs a value")))
        };
        let number = |text: String| -> usize {
            text.parse().ok().filter(|n| *n > 0).unwrap_or_else(|| {
                usage(&format!("{flag}: {text:?} is not a whole number above 0"))
            })
        };
        match flag.as_str() {
            "--type" => {
                args.run_type = match value().as_str() {
                    "reasoning" => RunType::Reasoning,
                    "computation" => RunType::Computation,
                    "workflow" => RunType::Workflow,
                    "calls" => RunType::Calls,
                    "waiting" => RunType::Waiting,
                    other => usage(&format!(
                        "--type {other:?}: reasoning, computation, workflow, calls or waiting"
                    )),
                }
            }
            "--store" => {
                args.store = value();
                if !matches!(args.store.as_str(), "sqlite" | "postgres") {
                    usage(&format!("--store {:?}: sqlite or postgres", args.store));
                }
            }
            "--database" => args.database = value(),
            "--concurrency" => args.concurrency = number(value()),
            "--runs" => args.runs = number(value()),
            "--warmup" => args.warmup = value().parse().unwrap_or_else(|_| usage("--warmup N")),
            "--playbooks" => args.playbooks = number(value()),
            "--url" => args.url = Some(value().trim_end_matches('/').to_owned()),
            "--model" => args.model = value(),
            "--pages" => args.pages = number(value()),
            "-h" | "--help" => usage("the options"),
            other => usage(&format!("{other:?} is not an option")),
        }
    }
    args
}

/// Time spent in one store operation, summed over its calls.
#[derive(Default, Clone, Copy)]
struct Spent {
    calls: u64,
    total: Duration,
    max: Duration,
}

/// A store that times every operation of the store it wraps.
struct TimedStore {
    inner: Arc<dyn Store>,
    spent: Mutex<BTreeMap<&'static str, Spent>>,
}

impl TimedStore {
    async fn time<T>(&self, name: &'static str, operation: impl Future<Output = T>) -> T {
        let started = Instant::now();
        let result = operation.await;
        let took = started.elapsed();
        let mut spent = self.spent.lock().unwrap_or_else(|p| p.into_inner());
        let entry = spent.entry(name).or_default();
        entry.calls += 1;
        entry.total += took;
        entry.max = entry.max.max(took);
        result
    }

    fn take(&self) -> BTreeMap<&'static str, Spent> {
        std::mem::take(&mut *self.spent.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

type StoreResult<T> = auto_store::Result<T>;

#[async_trait]
impl Store for TimedStore {
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    async fn now(&self) -> StoreResult<DateTime<Utc>> {
        self.time("now", self.inner.now()).await
    }
    async fn check_writable(&self) -> StoreResult<()> {
        self.time("check_writable", self.inner.check_writable())
            .await
    }
    async fn close(&self) {
        self.inner.close().await;
    }
    async fn create_org(&self, id: &str, title: Option<&str>) -> StoreResult<Org> {
        self.time("create_org", self.inner.create_org(id, title))
            .await
    }
    async fn get_org(&self, id: &str) -> StoreResult<Option<Org>> {
        self.time("get_org", self.inner.get_org(id)).await
    }
    async fn list_orgs(&self) -> StoreResult<Vec<Org>> {
        self.time("list_orgs", self.inner.list_orgs()).await
    }
    async fn create_playbook(
        &self,
        org: &str,
        id: &str,
        title: Option<&str>,
    ) -> StoreResult<Playbook> {
        self.time(
            "create_playbook",
            self.inner.create_playbook(org, id, title),
        )
        .await
    }
    async fn get_playbook(&self, playbook: &PlaybookRef) -> StoreResult<Option<Playbook>> {
        self.time("get_playbook", self.inner.get_playbook(playbook))
            .await
    }
    async fn log_end(&self, playbook: &PlaybookRef) -> StoreResult<i64> {
        self.time("log_end", self.inner.log_end(playbook)).await
    }
    async fn get_view(
        &self,
        playbook: &PlaybookRef,
        name: &str,
    ) -> StoreResult<Option<RecallView>> {
        self.time("get_view", self.inner.get_view(playbook, name))
            .await
    }
    async fn put_view(
        &self,
        playbook: &PlaybookRef,
        view: &RecallView,
        expected_revision: Option<i64>,
    ) -> StoreResult<Option<RecallView>> {
        self.time(
            "put_view",
            self.inner.put_view(playbook, view, expected_revision),
        )
        .await
    }
    async fn list_views(&self, playbook: Option<&PlaybookRef>) -> StoreResult<Vec<ViewHead>> {
        self.time("list_views", self.inner.list_views(playbook))
            .await
    }
    async fn hold_view(
        &self,
        playbook: &PlaybookRef,
        name: &str,
        holder: &str,
        lease: Duration,
    ) -> StoreResult<bool> {
        self.time(
            "hold_view",
            self.inner.hold_view(playbook, name, holder, lease),
        )
        .await
    }
    async fn list_playbooks(&self, org: &str) -> StoreResult<Vec<Playbook>> {
        self.time("list_playbooks", self.inner.list_playbooks(org))
            .await
    }
    async fn create_definition(
        &self,
        playbook: &PlaybookRef,
        new: NewDefinitionVersion,
        event: NewEvent,
    ) -> StoreResult<(DefinitionVersion, Event)> {
        self.time(
            "create_definition",
            self.inner.create_definition(playbook, new, event),
        )
        .await
    }
    async fn update_definition(
        &self,
        playbook: &PlaybookRef,
        expected_version: i64,
        new: NewDefinitionVersion,
        event: NewEvent,
    ) -> StoreResult<(DefinitionVersion, Event)> {
        self.time(
            "update_definition",
            self.inner
                .update_definition(playbook, expected_version, new, event),
        )
        .await
    }
    async fn retire_definition(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        event: NewEvent,
    ) -> StoreResult<(DefinitionVersion, Event)> {
        self.time(
            "retire_definition",
            self.inner.retire_definition(playbook, key, event),
        )
        .await
    }
    async fn get_definition(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
    ) -> StoreResult<Option<DefinitionVersion>> {
        self.time("get_definition", self.inner.get_definition(playbook, key))
            .await
    }
    async fn get_definition_version(
        &self,
        playbook: &PlaybookRef,
        key: &DefinitionKey,
        version: i64,
    ) -> StoreResult<Option<DefinitionVersion>> {
        self.time(
            "get_definition_version",
            self.inner.get_definition_version(playbook, key, version),
        )
        .await
    }
    async fn list_definitions(
        &self,
        playbook: &PlaybookRef,
        def_type: Option<&str>,
    ) -> StoreResult<Vec<DefinitionVersion>> {
        self.time(
            "list_definitions",
            self.inner.list_definitions(playbook, def_type),
        )
        .await
    }
    async fn append_events(
        &self,
        playbook: &PlaybookRef,
        events: Vec<NewEvent>,
    ) -> StoreResult<Vec<Event>> {
        self.time("append_events", self.inner.append_events(playbook, events))
            .await
    }
    async fn list_events(
        &self,
        playbook: &PlaybookRef,
        filter: &EventFilter,
    ) -> StoreResult<Vec<Event>> {
        self.time("list_events", self.inner.list_events(playbook, filter))
            .await
    }
    async fn get_event(&self, playbook: &PlaybookRef, id: &str) -> StoreResult<Option<Event>> {
        self.time("get_event", self.inner.get_event(playbook, id))
            .await
    }
    async fn start_run(
        &self,
        playbook: &PlaybookRef,
        new: NewRun,
        events: Vec<NewEvent>,
    ) -> StoreResult<(Run, Vec<Event>)> {
        self.time("start_run", self.inner.start_run(playbook, new, events))
            .await
    }
    async fn restart_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        expected_attempt: i64,
        definition_version: i64,
        events: Vec<NewEvent>,
    ) -> StoreResult<(Run, Vec<Event>)> {
        self.time(
            "restart_run",
            self.inner.restart_run(
                playbook,
                run_id,
                expected_attempt,
                definition_version,
                events,
            ),
        )
        .await
    }
    async fn record_run_events(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        events: Vec<NewEvent>,
    ) -> StoreResult<Vec<Event>> {
        self.time(
            "record_run_events",
            self.inner.record_run_events(playbook, run_id, events),
        )
        .await
    }
    async fn end_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        ending: RunEnding,
        events: Vec<NewEvent>,
    ) -> StoreResult<(Run, Vec<Event>)> {
        self.time(
            "end_run",
            self.inner.end_run(playbook, run_id, ending, events),
        )
        .await
    }
    async fn get_run(&self, playbook: &PlaybookRef, run_id: &str) -> StoreResult<Option<Run>> {
        self.time("get_run", self.inner.get_run(playbook, run_id))
            .await
    }
    async fn list_runs(&self, playbook: &PlaybookRef, filter: &RunFilter) -> StoreResult<Vec<Run>> {
        self.time("list_runs", self.inner.list_runs(playbook, filter))
            .await
    }
    async fn commit_workflow_step(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        step: std::sync::Arc<auto_store::WorkflowStep>,
    ) -> StoreResult<auto_store::StepCommitted> {
        self.time(
            "commit_workflow_step",
            self.inner.commit_workflow_step(playbook, run_id, step),
        )
        .await
    }
    async fn get_workflow_state(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> StoreResult<Option<(i64, serde_json::Value)>> {
        self.time(
            "get_workflow_state",
            self.inner.get_workflow_state(playbook, run_id),
        )
        .await
    }
    async fn add_work(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        work: Vec<auto_store::NewWork>,
    ) -> StoreResult<()> {
        self.time("add_work", self.inner.add_work(playbook, run_id, work))
            .await
    }
    async fn claim_work(
        &self,
        claimer: &str,
        lease: Duration,
        limit: u32,
    ) -> StoreResult<Vec<auto_store::Work>> {
        self.time("claim_work", self.inner.claim_work(claimer, lease, limit))
            .await
    }
    async fn finish_work(&self, id: i64) -> StoreResult<()> {
        self.time("finish_work", self.inner.finish_work(id)).await
    }
    async fn next_work_due(&self) -> StoreResult<Option<DateTime<Utc>>> {
        self.time("next_work_due", self.inner.next_work_due()).await
    }
    async fn work_backlog(&self) -> StoreResult<WorkBacklog> {
        self.inner.work_backlog().await
    }
    async fn next_input_due(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        except: Option<i64>,
    ) -> StoreResult<Option<DateTime<Utc>>> {
        self.time(
            "next_input_due",
            self.inner.next_input_due(playbook, run_id, except),
        )
        .await
    }
    async fn receive_run_event(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        event_id: &str,
        event: serde_json::Value,
        work: auto_store::NewWork,
    ) -> StoreResult<Option<auto_store::RunInboxEvent>> {
        self.time(
            "receive_run_event",
            self.inner
                .receive_run_event(playbook, run_id, event_id, event, work),
        )
        .await
    }
    async fn list_run_inbox(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> StoreResult<Vec<auto_store::RunInboxEvent>> {
        self.time(
            "list_run_inbox",
            self.inner.list_run_inbox(playbook, run_id),
        )
        .await
    }

    async fn count_open_calls(&self, playbook: &PlaybookRef, root: &str) -> StoreResult<i64> {
        self.time(
            "count_open_calls",
            self.inner.count_open_calls(playbook, root),
        )
        .await
    }
    async fn start_interaction(
        &self,
        playbook: &PlaybookRef,
        new: NewRun,
        events: Vec<NewEvent>,
        request: auto_store::NewRequest,
        work: Vec<auto_store::NewWork>,
    ) -> StoreResult<(Run, auto_store::Request)> {
        self.time(
            "start_interaction",
            self.inner
                .start_interaction(playbook, new, events, request, work),
        )
        .await
    }
    async fn close_request(
        &self,
        playbook: &PlaybookRef,
        request_id: &str,
        close: auto_store::RequestClose,
        ending: RunEnding,
        events: Vec<NewEvent>,
        done_work: Vec<String>,
    ) -> StoreResult<(auto_store::Request, Run)> {
        self.time(
            "close_request",
            self.inner
                .close_request(playbook, request_id, close, ending, events, done_work),
        )
        .await
    }
    async fn get_request(
        &self,
        playbook: &PlaybookRef,
        request_id: &str,
    ) -> StoreResult<Option<auto_store::Request>> {
        self.time("get_request", self.inner.get_request(playbook, request_id))
            .await
    }
    async fn get_request_of_run(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
    ) -> StoreResult<Option<auto_store::Request>> {
        self.time(
            "get_request_of_run",
            self.inner.get_request_of_run(playbook, run_id),
        )
        .await
    }
    async fn list_requests(
        &self,
        playbook: &PlaybookRef,
        filter: &auto_store::RequestFilter,
    ) -> StoreResult<Vec<auto_store::Request>> {
        self.time("list_requests", self.inner.list_requests(playbook, filter))
            .await
    }
    async fn list_triggers(&self) -> StoreResult<Vec<auto_store::Trigger>> {
        self.time("list_triggers", self.inner.list_triggers()).await
    }
    async fn queue_trigger_starts(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        since_seq: i64,
        cursor_seq: i64,
        starts: Vec<auto_store::TriggerStart>,
        waiting_max: i64,
    ) -> StoreResult<auto_store::Queued> {
        self.time(
            "queue_trigger_starts",
            self.inner.queue_trigger_starts(
                playbook,
                workflow,
                since_seq,
                cursor_seq,
                starts,
                waiting_max,
            ),
        )
        .await
    }
    async fn take_trigger_starts(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        per_minute: i64,
    ) -> StoreResult<Vec<auto_store::TriggerStart>> {
        self.time(
            "take_trigger_starts",
            self.inner
                .take_trigger_starts(playbook, workflow, per_minute),
        )
        .await
    }
    async fn settle_trigger_start(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        outcome: auto_store::StartOutcome,
    ) -> StoreResult<()> {
        self.time(
            "settle_trigger_start",
            self.inner.settle_trigger_start(playbook, run_id, outcome),
        )
        .await
    }
    async fn move_schedule(
        &self,
        playbook: &PlaybookRef,
        workflow: &str,
        kind: &str,
        since_seq: i64,
        expected_due_at: Option<DateTime<Utc>>,
        due_at: DateTime<Utc>,
        running_run_id: Option<&str>,
    ) -> StoreResult<bool> {
        self.time(
            "move_schedule",
            self.inner.move_schedule(
                playbook,
                workflow,
                kind,
                since_seq,
                expected_due_at,
                due_at,
                running_run_id,
            ),
        )
        .await
    }
    async fn list_listeners(&self) -> StoreResult<Vec<auto_store::Listener>> {
        self.time("list_listeners", self.inner.list_listeners())
            .await
    }
    async fn advance_listener(
        &self,
        playbook: &PlaybookRef,
        run_id: &str,
        reference: &str,
        cursor_seq: i64,
    ) -> StoreResult<()> {
        self.time(
            "advance_listener",
            self.inner
                .advance_listener(playbook, run_id, reference, cursor_seq),
        )
        .await
    }

    async fn purge_runs(
        &self,
        playbook: &PlaybookRef,
        ended_before: chrono::DateTime<chrono::Utc>,
        batch: u32,
    ) -> StoreResult<auto_store::Purged> {
        self.time(
            "purge_runs",
            self.inner.purge_runs(playbook, ended_before, batch),
        )
        .await
    }

    async fn delete_playbook(
        &self,
        playbook: &PlaybookRef,
        force: bool,
    ) -> StoreResult<auto_store::Deleted> {
        self.time(
            "delete_playbook",
            self.inner.delete_playbook(playbook, force),
        )
        .await
    }

    async fn delete_org(&self, org: &str, force: bool) -> StoreResult<auto_store::Deleted> {
        self.time("delete_org", self.inner.delete_org(org, force))
            .await
    }
}

/// Ten `set` tasks, each adding one to `n` and keeping the rest of the input.
fn ten_sets() -> String {
    let mut text = String::from(WORKFLOW_HEADER);
    text.push_str("do:\n");
    for i in 0..10 {
        text.push_str(&format!(
            "  - step{i}:\n      set: '${{ ({{ ...$data, n: $data.n + 1 }}) }}'\n"
        ));
    }
    text
}

const WORKFLOW_HEADER: &str =
    "document:\n  dsl: 1.0.3\n  namespace: load\n  name: load\n  version: 1.0.0\n";

/// A workflow whose run waits a day on a timer, then ends.
const WAITS: &str = "document:\n  dsl: 1.0.3\n  namespace: load\n  name: waits\n  version: 1.0.0\ndo:\n  - nap:\n      wait: P1D\n  - up:\n      set: { woke: true }\n";

/// This process's resident memory in KiB, where the system tells it (`/proc`).
fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
}

/// What one run request took, and the model call's time the run recorded.
struct Sample {
    latency: Duration,
    model_ms: Option<u64>,
}

/// Fires `count` runs at most `concurrency` at once; panics on the first run that does not
/// succeed.
async fn fire(
    http: &reqwest::Client,
    urls: &[String],
    input: &Value,
    count: usize,
    concurrency: usize,
    expect: &Expect,
) -> (Vec<Sample>, Duration) {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..concurrency.min(count) {
        let (http, urls, input, next, expect) = (
            http.clone(),
            urls.to_vec(),
            input.clone(),
            Arc::clone(&next),
            expect.clone(),
        );
        workers.push(tokio::spawn(async move {
            let mut samples = Vec::new();
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= count {
                    return samples;
                }
                let url = &urls[index % urls.len()];
                let sent = Instant::now();
                let response = http
                    .post(url)
                    .json(&json!({ "input": input }))
                    .send()
                    .await
                    .unwrap_or_else(|error| panic!("the run request failed: {error}"));
                let status = response.status();
                let mut body: Value = response.json().await.unwrap_or(Value::Null);
                if let Expect::Ends(_) = expect
                    && status == 202
                {
                    body = followed(&http, url, &body).await;
                }
                let latency = sent.elapsed();
                let expected = match &expect {
                    Expect::Waits => status == 202 && body["status"] == "started",
                    Expect::Succeeds => status == 200 && body["status"] == "succeeded",
                    Expect::Ends(output) => {
                        body["status"] == "succeeded" && &body["output"] == output
                    }
                };
                assert!(
                    expected,
                    "a run did not do as expected ({status}): {body:#}"
                );
                samples.push(Sample {
                    latency,
                    model_ms: body["record"]["model"]
                        .is_object()
                        .then(|| body["record"]["duration_ms"].as_u64())
                        .flatten(),
                });
            }
        }));
    }
    let mut samples = Vec::with_capacity(count);
    for worker in workers {
        samples.extend(worker.await.expect("a worker"));
    }
    (samples, started.elapsed())
}

/// What every run of a load must come to.
#[derive(Clone, Debug)]
enum Expect {
    /// Answered 202, started.
    Waits,
    /// Answered 200, succeeded.
    Succeeds,
    /// Succeeded with this output, within its request or followed after a 202.
    Ends(Value),
}

/// The run a 202 answered, followed until it ends.
async fn followed(http: &reqwest::Client, runs_url: &str, started: &Value) -> Value {
    let run_id = started["run_id"].as_str().expect("a run id");
    let (playbook, _) = runs_url
        .split_once("/definitions/")
        .expect("a definition's runs URL");
    let url = format!("{playbook}/runs/{run_id}");
    loop {
        let body: Value = http
            .get(&url)
            .send()
            .await
            .unwrap_or_else(|error| panic!("the run's request failed: {error}"))
            .json()
            .await
            .unwrap_or(Value::Null);
        if body["status"] != "started" {
            return body;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// What the in-process server is made of, to take apart afterwards.
struct Local {
    handle: auto_server::Handle,
    store: Arc<TimedStore>,
    _double: Option<ProviderDouble>,
    /// The SQLite file, when the store is one.
    file: Option<std::path::PathBuf>,
    _dir: tempfile::TempDir,
}

async fn start_local(args: &Args) -> Local {
    let dir = tempfile::tempdir().expect("a temporary folder");
    // A `--database sqlite://path` keeps the file where it says, to be read after the runs.
    let file = (args.store == "sqlite").then(|| match args.database.strip_prefix("sqlite://") {
        Some(path) => std::path::PathBuf::from(path),
        None => dir.path().join("auto.db"),
    });
    let inner = match args.store.as_str() {
        "postgres" => auto_store::open_postgres_isolated(&args.database)
            .await
            .unwrap_or_else(|error| panic!("PostgreSQL at {}: {error}", args.database)),
        _ => {
            let path = file.as_ref().expect("a SQLite file");
            let url = format!("sqlite://{}", path.display());
            auto_store::open(&url).await.expect("a SQLite store")
        }
    };
    let store = Arc::new(TimedStore {
        inner,
        spent: Mutex::new(BTreeMap::new()),
    });
    let (models, double) = match args.run_type {
        RunType::Reasoning => {
            let double = ProviderDouble::start(ProviderKind::Anthropic).await;
            double.answer_always(Reply::Text(
                "The brief lacks evidence for its claims.".into(),
            ));
            let config = auto_server::config::Config::parse(&format!(
                "[providers.anthropic]\nbase_url = \"{}\"\n",
                double.base_url()
            ))
            .expect("a configuration");
            (config.models().expect("the models"), Some(double))
        }
        _ => (auto_server::reasoning_runs::Models::none(), None),
    };
    let handle = auto_server::start(Options {
        listen: "127.0.0.1:0".parse().expect("an address"),
        store: store.clone(),
        keys: Keys::default(),
        checkers: auto_server::server_checkers(),
        models,
        limits: Default::default(),
        http: Default::default(),
        retention: Default::default(),
    })
    .await
    .expect("the server starts");
    Local {
        handle,
        store,
        _double: double,
        file,
        _dir: dir,
    }
}

/// Creates the org, the playbooks and the definition in each; returns each playbook's run URL.
async fn prepare(http: &reqwest::Client, base: &str, args: &Args) -> Vec<String> {
    let post = |path: String, body: Value| {
        let http = http.clone();
        let url = format!("{base}{path}");
        async move {
            let response = http.post(&url).json(&body).send().await;
            let response = response.unwrap_or_else(|e| panic!("{url}: {e}"));
            let status = response.status();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            // A server that is already up may have them from an earlier load run.
            assert!(
                status.is_success() || status == 409,
                "{url}: {status} {body:#}"
            );
        }
    };
    post("/v1/orgs".into(), json!({"id": "load"})).await;
    let (type_text, name, source) = match args.run_type {
        RunType::Reasoning => ("reasoning", "review-brief", brief_review(&args.model)),
        RunType::Computation => ("computation", "month-window", MONTH_WINDOW.to_owned()),
        RunType::Workflow => ("workflow", "ten-sets", ten_sets()),
        RunType::Calls => ("workflow", "add-three-times", add_three_times()),
        RunType::Waiting => ("workflow", "waits", WAITS.to_owned()),
    };
    // What the run's definition calls, saved before it.
    let called: &[(&str, &str, &str)] = match args.run_type {
        RunType::Calls => &[("computation", "add-one", ADD_ONE)],
        _ => &[],
    };
    let mut urls = Vec::new();
    for index in 0..args.playbooks {
        let playbook = format!("p{index}");
        post(
            "/v1/orgs/load/playbooks".into(),
            json!({"id": playbook, "title": "Load"}),
        )
        .await;
        let pb = format!("/v1/orgs/load/playbooks/{playbook}");
        for (called_type, called_name, called_source) in called {
            post(
                format!("{pb}/definitions"),
                json!({"type": called_type, "name": called_name, "source": called_source, "diagram": "none"}),
            )
            .await;
        }
        post(
            format!("{pb}/definitions"),
            json!({"type": type_text, "name": name, "source": source, "diagram": "none"}),
        )
        .await;
        urls.push(format!("{base}{pb}/definitions/{type_text}/{name}/runs"));
    }
    urls
}

/// Mean time of re-checking the saved document, as every run does before it goes on.
fn recheck_cost(run_type: RunType, model: &str) -> Duration {
    const ROUNDS: u32 = 200;
    let source = match run_type {
        RunType::Reasoning => brief_review(model),
        RunType::Computation => MONTH_WINDOW.to_owned(),
        RunType::Workflow => ten_sets(),
        RunType::Calls => add_three_times(),
        RunType::Waiting => WAITS.to_owned(),
    };
    let started = Instant::now();
    for _ in 0..ROUNDS {
        let ok = match run_type {
            RunType::Reasoning => auto_engine::reasoning::check_reasoning(&source).is_ok(),
            RunType::Computation => auto_engine::computation::check_computation(&source).is_ok(),
            RunType::Workflow | RunType::Calls | RunType::Waiting => {
                auto_engine::workflow::engine::Workflow::from_source(&source).is_ok()
            }
        };
        assert!(ok, "the document checks");
    }
    started.elapsed() / ROUNDS
}

fn main() {
    let args = parse_args();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(load(args));
}

async fn load(args: Args) {
    let local = match &args.url {
        Some(_) => None,
        None => Some(start_local(&args).await),
    };
    let base = match (&args.url, &local) {
        (Some(url), _) => url.clone(),
        (None, Some(local)) => local.handle.url(),
        (None, None) => unreachable!("a server either way"),
    };
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(args.concurrency)
        .build()
        .expect("an HTTP client");
    let urls = prepare(&http, &base, &args).await;
    let input = match args.run_type {
        RunType::Reasoning => {
            json!({"brief": "Launch the autumn range", "criteria": "Evidence for every claim"})
        }
        RunType::Computation => json!({"month": "2026-02"}),
        RunType::Workflow | RunType::Waiting => json!({"n": 0, "note": "load"}),
        RunType::Calls => json!({"x": 0}),
    };
    let type_text = match args.run_type {
        RunType::Reasoning => "reasoning",
        RunType::Computation => "computation",
        RunType::Workflow => "workflow (10 set tasks)",
        RunType::Calls => "workflow (3 sequential computation calls)",
        RunType::Waiting => "workflow (waiting a day on a timer)",
    };
    let waits = match args.run_type {
        RunType::Waiting => Expect::Waits,
        RunType::Calls => Expect::Ends(json!({"x": 3})),
        _ => Expect::Succeeds,
    };
    let rss_before = resident_kib();
    let store_text = if args.url.is_some() {
        "the server at --url"
    } else {
        args.store.as_str()
    };
    println!(
        "load: {} {type_text} runs on {store_text}, {} at once, over {} playbook(s), after {} warm-up runs",
        args.runs, args.concurrency, args.playbooks, args.warmup
    );
    if args.warmup > 0 {
        fire(&http, &urls, &input, args.warmup, args.concurrency, &waits).await;
    }
    if let Some(local) = &local {
        local.store.take();
    }
    let (samples, elapsed) = fire(&http, &urls, &input, args.runs, args.concurrency, &waits).await;
    let mut latencies: Vec<Duration> = samples.iter().map(|s| s.latency).collect();
    latencies.sort();
    println!(
        "  runs/s {:.1}   latency ms: median {:.2}  p90 {:.2}  p99 {:.2}  max {:.2}",
        args.runs as f64 / elapsed.as_secs_f64(),
        ms(percentile(&latencies, 50.0)),
        ms(percentile(&latencies, 90.0)),
        ms(percentile(&latencies, 99.0)),
        ms(*latencies.last().expect("a run")),
    );
    if let (Some(before), Some(after)) = (rss_before, resident_kib()) {
        println!(
            "  resident memory of this process (server and client): {:.1} MiB before the runs, {:.1} MiB after ({:+.1} KiB a run)",
            before as f64 / 1024.0,
            after as f64 / 1024.0,
            (after as f64 - before as f64) / args.runs as f64
        );
    }
    let model_ms: Vec<u64> = samples.iter().filter_map(|s| s.model_ms).collect();
    if !model_ms.is_empty() {
        println!(
            "  model call as recorded (the double answering, through the adapter): mean {:.2} ms",
            model_ms.iter().sum::<u64>() as f64 / model_ms.len() as f64
        );
    }
    let Some(local) = local else {
        return;
    };
    println!(
        "  re-checking the saved document, which each run does: {:.3} ms",
        ms(recheck_cost(args.run_type, &args.model))
    );
    println!("  store operations per run, and their mean and max time (waits included):");
    let runs = args.runs as f64;
    let mut store_total = Duration::ZERO;
    for (name, spent) in local.store.take() {
        store_total += spent.total;
        println!(
            "    {name:<24} {:>5.2}/run  mean {:>8.3} ms  max {:>8.2} ms",
            spent.calls as f64 / runs,
            ms(spent.total) / spent.calls as f64,
            ms(spent.max),
        );
    }
    println!(
        "    in all {:.2} ms of store time per run",
        ms(store_total) / runs
    );
    if let (Some(file), true) = (&local.file, args.pages > 0) {
        wal_pages(file, args.pages, || async {
            fire(&http, &urls, &input, args.pages, 1, &waits).await;
        })
        .await;
    }
    local.handle.stop().await.expect("the server stops");
}

/// What a run writes to SQLite's log: the file is checkpointed (the log emptied), `runs` runs
/// are made one at a time, and every frame of the log is counted by the B-tree its page
/// belongs to, read from the `dbstat` table. Each frame is a page written and synced at commit.
async fn wal_pages<F: Future<Output = ()>>(
    file: &std::path::Path,
    runs: usize,
    make_runs: impl FnOnce() -> F,
) {
    let connection = rusqlite::Connection::open(file).expect("the store's file");
    connection
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .expect("a checkpoint");
    make_runs().await;
    let wal = std::fs::read(file.with_extension("db-wal")).expect("the log");
    let page_size = u32::from_be_bytes(wal[8..12].try_into().expect("4 bytes")) as usize;
    let mut pages: Vec<u32> = Vec::new();
    let mut offset = 32;
    while offset + 24 + page_size <= wal.len() {
        pages.push(u32::from_be_bytes(
            wal[offset..offset + 4].try_into().expect("4 bytes"),
        ));
        offset += 24 + page_size;
    }
    let mut statement = connection
        .prepare("SELECT name, pageno FROM dbstat")
        .expect("dbstat");
    let owners: BTreeMap<u32, String> = statement
        .query_map([], |row| {
            Ok((row.get::<_, u32>(1)?, row.get::<_, String>(0)?))
        })
        .expect("the pages")
        .collect::<Result<_, _>>()
        .expect("the pages");
    let mut by_tree: BTreeMap<&str, usize> = BTreeMap::new();
    for page in &pages {
        let owner = owners.get(page).map_or("(free or header)", String::as_str);
        *by_tree.entry(owner).or_default() += 1;
    }
    let mut by_tree: Vec<_> = by_tree.into_iter().collect();
    by_tree.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    println!(
        "  the log's pages ({page_size} bytes), {runs} run(s) one at a time after a checkpoint: {:.1} frames a run",
        pages.len() as f64 / runs as f64
    );
    for (tree, frames) in by_tree {
        println!("    {tree:<28} {:>6.1}", frames as f64 / runs as f64);
    }
}
