//! The workflow engine's hot path: a step. A 10-task workflow of `set` tasks, each with an
//! expression, run from its start to its end by the pure core (no store): what one server's
//! engine gives before the store's commit is counted. Figures: a whole run, and a task
//! transition (the run's time over its ten tasks); and a timer's input applied to a waiting
//! run, which is what each wait costs when it ends.
//!
//! Run with `cargo bench -p auto-engine --bench workflow`.

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;

use auto_engine::workflow::engine::{self, Input, RunInfo, Workflow};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;

const HEADER: &str = "document:\n  dsl: 1.0.3\n  namespace: bench\n  name: ten\n  version: 1.0.0\n";

/// Ten `set` tasks, each adding one to `n` and keeping the rest of the input.
fn ten_sets() -> String {
    let mut text = format!("{HEADER}do:\n");
    for i in 0..10 {
        text.push_str(&format!(
            "  - step{i}:\n      set: '${{ ({{ ...$data, n: $data.n + 1 }}) }}'\n"
        ));
    }
    text
}

fn bench(c: &mut Criterion) {
    let wf = Workflow::from_source(&ten_sets()).expect("the bench workflow parses");
    let info = RunInfo::new("bench-run", json!({"type": "workflow", "name": "ten"}), 0);
    let input = json!({"n": 0, "name": "bench", "tags": ["a", "b", "c"]});
    let ended = engine::start(&wf, &info, input.clone(), 0);
    assert!(ended.ending.is_some(), "the bench run ends in one step");

    let mut group = c.benchmark_group("workflow");
    group.throughput(Throughput::Elements(10));
    group.bench_function("ten_set_tasks_run", |b| {
        b.iter(|| black_box(engine::start(&wf, &info, black_box(input.clone()), 0)))
    });
    group.finish();

    let waits = Workflow::from_source(&format!(
        "{HEADER}do:\n  - nap:\n      wait: PT1H\n  - up:\n      set: '${{ ({{ ...$data, woke: true }}) }}'\n"
    ))
    .expect("the wait workflow parses");
    let waiting = engine::start(&waits, &info, input.clone(), 0);
    let timer_id = waiting
        .commands
        .iter()
        .find_map(|command| match command {
            engine::Command::SetTimer { timer_id, .. } if timer_id.starts_with("wait") => {
                Some(timer_id.clone())
            }
            _ => None,
        })
        .expect("the wait sets its timer");
    let state = waiting.state;
    let mut group = c.benchmark_group("workflow");
    group.throughput(Throughput::Elements(1));
    group.bench_function("timer_fired_and_run_ended", |b| {
        b.iter(|| {
            black_box(engine::apply(
                &waits,
                &info,
                state.clone(),
                Input::TimerFired {
                    timer_id: timer_id.clone(),
                },
                3_600_000,
            ))
        })
    });
    group.bench_function("snapshot_round_trip", |b| {
        b.iter(|| {
            let text = serde_json::to_value(&state).expect("a snapshot");
            black_box(serde_json::from_value::<engine::RunState>(text).expect("read back"))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
