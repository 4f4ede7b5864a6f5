//! A recall function's hot path: an event folded into its view. Orders by month, the guide's
//! example, folds events into a view of twelve months; each fold runs the document's `fold` in
//! the sandbox with its budgets and checks the view's size. Figures: events folded a second,
//! one at a time, over a view of 12 months and over one of 1,000 keys (a fold's cost grows
//! with the view it is given).
//!
//! Run with `cargo bench -p auto-engine --bench recall`.

/// The `auto` binary's allocator, so these figures are what the binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;

use auto_engine::recall::{check_recall, fold, initial_view};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

const ORDERS_BY_MONTH: &str = r#"---
description: Orders by month.
events: [order.placed]
---
```ts
type View = Record<string, { count: number; total: number }>;
export const initial: View = {};
export function fold(view: View, event: any): View {
  const month = event.data.month;
  const seen = view[month] ?? { count: 0, total: 0 };
  view[month] = { count: seen.count + 1, total: seen.total + event.data.amount };
  return view;
}
export function answer(view: View, input: { month: string }) {
  return view[input.month] ?? { count: 0, total: 0 };
}
```
"#;

fn event(i: usize, month: String) -> Value {
    json!({
        "specversion": "1.0", "id": format!("order-{i}"), "type": "order.placed",
        "source": "/shop", "seq": i + 1, "time": "2026-03-01T09:30:00Z",
        "data": {"id": i, "month": month, "amount": 12.5}
    })
}

fn bench(c: &mut Criterion) {
    let document = check_recall(ORDERS_BY_MONTH).expect("the bench document checks");
    let mut group = c.benchmark_group("recall");
    group.throughput(Throughput::Elements(1));
    for (name, keys) in [("fold_12_months", 12), ("fold_1000_keys", 1_000)] {
        let mut view = initial_view(&document).expect("initial");
        for i in 0..keys {
            view = fold(&document, &view, &event(i, format!("m{i}")), 0).expect("folded");
        }
        let events: Vec<Value> = (0..64)
            .map(|i| event(i, format!("m{}", i % keys)))
            .collect();
        let mut i = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                i = (i + 1) % events.len();
                view = fold(&document, black_box(&view), &events[i], 0).expect("folded");
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
