//! A build on a long seasonal series: the cost of fitting every candidate.

use criterion::{Criterion, criterion_group, criterion_main};

fn series(points: usize) -> Vec<f64> {
    let pattern = [
        5.0, 3.0, 8.0, 13.0, 9.0, 4.0, 2.0, 7.0, 11.0, 6.0, 1.0, 10.0,
    ];
    (0..points)
        .map(|t| 100.0 + 0.05 * t as f64 + pattern[t % 12] + ((t * 7919) % 13) as f64 / 4.0)
        .collect()
}

fn builds(c: &mut Criterion) {
    let ys = series(10_000);
    let options = auto_forecast::Options {
        horizon: 12,
        season: Some(12),
        step: None,
    };
    c.bench_function("build 10,000 points, season 12", |b| {
        b.iter(|| auto_forecast::build(&ys, &options).unwrap())
    });
    let found = auto_forecast::Options {
        horizon: 12,
        season: None,
        step: None,
    };
    c.bench_function("build 10,000 points, season found", |b| {
        b.iter(|| auto_forecast::build(&ys, &found).unwrap())
    });
    // What the runtime asks: a season found among those the definition's period gives.
    let monthly = auto_forecast::Options {
        step: Some(auto_forecast::Step::Months(1)),
        ..found
    };
    c.bench_function("build 10,000 points, season found by month", |b| {
        b.iter(|| auto_forecast::build(&ys, &monthly).unwrap())
    });
}

criterion_group!(benches, builds);
criterion_main!(benches);
