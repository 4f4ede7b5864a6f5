//! Expressions per second: a cached expression in this thread's reused, frozen sandbox (with its
//! inputs kept from one evaluation to the next, and with a new input each time), the same in a
//! sandbox built for each evaluation, and the save-time check of one expression.

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;

use auto_script::{InputBudget, Place, Sandbox, check_expression, evaluate};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

const NOW_MS: i64 = 1_790_000_000_000;
const SPREAD: &str = "({ ...$input, n: $data.n + 1 })";
const FILTER: &str = "$data.items.filter((item: { price: number }) => item.price > 50)";

fn inputs() -> (Value, Value, Value) {
    let input = json!({ "id": "brief-1", "owner": "ada@example.com", "n": 0 });
    let data = json!({ "n": 41 });
    let items: Vec<Value> = (0..100)
        .map(|i| json!({ "id": i, "name": format!("item {i}"), "price": i }))
        .collect();
    (input, data, json!({ "items": items }))
}

fn reused(c: &mut Criterion) {
    let (input, data, list) = inputs();
    let mut group = c.benchmark_group("reused sandbox");
    group.throughput(Throughput::Elements(1));
    group.bench_function("spread", |b| {
        b.iter(|| {
            let vars = [("$input", &input), ("$data", &data)];
            black_box(evaluate(SPREAD, &vars, NOW_MS, &mut InputBudget::new()).unwrap())
        });
    });
    group.bench_function("filter 100 items", |b| {
        b.iter(|| {
            let vars = [("$data", &list)];
            black_box(evaluate(FILTER, &vars, NOW_MS, &mut InputBudget::new()).unwrap())
        });
    });
    // Kept inputs do not help here: the list differs from the last one at every evaluation,
    // so each builds and keeps a new frozen tree.
    let mut other = list.clone();
    other["items"][99]["price"] = json!(100);
    let lists = [&list, &other];
    group.bench_function("filter 100 items, a new list each time", |b| {
        let mut turn = 0;
        b.iter(|| {
            turn += 1;
            let vars = [("$data", lists[turn % 2])];
            black_box(evaluate(FILTER, &vars, NOW_MS, &mut InputBudget::new()).unwrap())
        });
    });
    group.bench_function("100 items in, a number out", |b| {
        b.iter(|| {
            let vars = [("$data", &list)];
            black_box(
                evaluate("$data.items.length", &vars, NOW_MS, &mut InputBudget::new()).unwrap(),
            )
        });
    });
    group.bench_function("a number in, 100 items out", |b| {
        let items = serde_json::to_string(&list["items"]).unwrap();
        let expression = format!("{items}.map(x => x)");
        b.iter(|| {
            let vars = [("$data", &data)];
            black_box(evaluate(&expression, &vars, NOW_MS, &mut InputBudget::new()).unwrap())
        });
    });
    group.finish();
}

fn fresh(c: &mut Criterion) {
    let (input, data, list) = inputs();
    let mut group = c.benchmark_group("fresh sandbox");
    group.throughput(Throughput::Elements(1));
    group.sample_size(20);
    group.bench_function("spread", |b| {
        b.iter(|| {
            let mut sandbox = Sandbox::new().unwrap();
            let vars = [("$input", &input), ("$data", &data)];
            black_box(
                sandbox
                    .evaluate(SPREAD, &vars, NOW_MS, &mut InputBudget::new())
                    .unwrap(),
            )
        });
    });
    group.bench_function("filter 100 items", |b| {
        b.iter(|| {
            let mut sandbox = Sandbox::new().unwrap();
            let vars = [("$data", &list)];
            black_box(
                sandbox
                    .evaluate(FILTER, &vars, NOW_MS, &mut InputBudget::new())
                    .unwrap(),
            )
        });
    });
    group.finish();
}

fn check(c: &mut Criterion) {
    let mut group = c.benchmark_group("check");
    group.throughput(Throughput::Elements(1));
    let place = Place::offering(&["$input", "$data"]);
    group.bench_function("spread", |b| {
        b.iter(|| black_box(check_expression(SPREAD, &place)))
    });
    group.bench_function("filter", |b| {
        b.iter(|| black_box(check_expression(FILTER, &place)))
    });
    group.finish();
}

criterion_group!(benches, reused, fresh, check);
criterion_main!(benches);
