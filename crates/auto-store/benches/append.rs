//! Appending events, one per commit and a batch per commit: on SQLite (a file, `synchronous`
//! FULL) always, and on PostgreSQL when `AUTO_TEST_POSTGRES` holds a URL (in a schema of its
//! own). Every commit is durable, so these are fsync-bound figures. Concurrent writers show
//! what the per-playbook order costs: appends to one playbook commit one after the other, to
//! several playbooks side by side.

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use auto_store::{NewEvent, PlaybookRef, Store};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Map, json};
use tokio::runtime::Runtime;

/// How many events one batched commit appends.
const BATCH_EVENTS: usize = 100;

/// How many tasks append at once in the concurrent cases.
const WRITERS: u64 = 8;

fn append(criterion: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|error| panic!("a Tokio runtime: {error}"));
    let directory =
        tempfile::tempdir().unwrap_or_else(|error| panic!("a temporary directory: {error}"));
    let url = format!("sqlite://{}", directory.path().join("bench.db").display());
    let sqlite = runtime
        .block_on(auto_store::open(&url))
        .unwrap_or_else(|error| panic!("open {url}: {error}"));
    bench_store(criterion, &runtime, sqlite);
    match std::env::var("AUTO_TEST_POSTGRES") {
        Ok(url) => {
            let postgres = runtime
                .block_on(auto_store::open_postgres_isolated(&url))
                .unwrap_or_else(|error| panic!("open an isolated PostgreSQL store: {error}"));
            bench_store(criterion, &runtime, postgres);
        }
        Err(_) => eprintln!("skipped on PostgreSQL: AUTO_TEST_POSTGRES holds no database URL"),
    }
}

fn bench_store(criterion: &mut Criterion, runtime: &Runtime, store: Arc<dyn Store>) {
    let playbook = PlaybookRef::new("bench", "events");
    runtime
        .block_on(async {
            store.create_org("bench", None).await?;
            for writer in 0..WRITERS {
                store
                    .create_playbook("bench", &format!("events-{writer}"), None)
                    .await?;
            }
            store.create_playbook("bench", "events", None).await
        })
        .unwrap_or_else(|error| panic!("a playbook to append to: {error}"));
    let next_id = Arc::new(AtomicU64::new(0));
    let append = |count: usize| {
        let events = (0..count).map(|_| step_event(next_id.fetch_add(1, Ordering::Relaxed)));
        runtime
            .block_on(store.append_events(&playbook, events.collect()))
            .unwrap_or_else(|error| panic!("append {count} events: {error}"))
    };
    let mut group = criterion.benchmark_group(format!("append/{}", store.kind()));
    group.throughput(Throughput::Elements(1));
    group.bench_function("1 event per commit", |bencher| bencher.iter(|| append(1)));
    group.throughput(Throughput::Elements(BATCH_EVENTS as u64));
    group.bench_function(format!("{BATCH_EVENTS} events per commit"), |bencher| {
        bencher.iter(|| append(BATCH_EVENTS))
    });
    group.throughput(Throughput::Elements(1));
    for (name, one_playbook) in [("one playbook", true), ("a playbook each", false)] {
        group.bench_function(
            format!("{WRITERS} writers, 1 event per commit, {name}"),
            |bencher| {
                bencher.iter_custom(|iterations| {
                    let writers = Writers {
                        store: &store,
                        next_id: &next_id,
                        one_playbook,
                    };
                    runtime.block_on(writers.append(iterations))
                })
            },
        );
    }
    group.finish();
}

/// `WRITERS` tasks appending one event per commit, to one playbook or each to its own.
struct Writers<'a> {
    store: &'a Arc<dyn Store>,
    next_id: &'a Arc<AtomicU64>,
    one_playbook: bool,
}

impl Writers<'_> {
    /// The time the writers take for `iterations` commits between them.
    async fn append(&self, iterations: u64) -> Duration {
        let per_writer = iterations.div_ceil(WRITERS);
        let start = Instant::now();
        let tasks: Vec<_> = (0..WRITERS)
            .map(|writer| {
                let (store, next_id) = (self.store.clone(), self.next_id.clone());
                let name = if self.one_playbook {
                    "events".into()
                } else {
                    format!("events-{writer}")
                };
                let playbook = PlaybookRef::new("bench", name);
                tokio::spawn(async move {
                    for _ in 0..per_writer {
                        let event = step_event(next_id.fetch_add(1, Ordering::Relaxed));
                        store.append_events(&playbook, vec![event]).await?;
                    }
                    Ok::<_, auto_store::StoreError>(())
                })
            })
            .collect();
        for task in tasks {
            let appended = task
                .await
                .unwrap_or_else(|error| panic!("a writer: {error}"));
            appended.unwrap_or_else(|error| panic!("a writer's append: {error}"));
        }
        // The writers made `per_writer * WRITERS` commits, a few more than asked for.
        start
            .elapsed()
            .mul_f64(iterations as f64 / (per_writer * WRITERS) as f64)
    }
}

/// A small event of a run's history, as the engine records them.
fn step_event(n: u64) -> NewEvent {
    let mut extensions = Map::new();
    extensions.insert("caller".into(), json!("local"));
    extensions.insert("depth".into(), json!(0));
    NewEvent {
        subject: Some("workflow/onboard".into()),
        data: Some(json!({"task": "/do/1/check", "attempt": 1, "input": {"customer": n}})),
        extensions,
        run_id: Some(format!("run-{}", n / 1_000)),
        run_seq: Some(i64::try_from(n % 1_000).unwrap_or_default()),
        ..NewEvent::new(format!("event-{n}"), "step_started", "/bench")
    }
}

criterion_group!(benches, append);
criterion_main!(benches);
