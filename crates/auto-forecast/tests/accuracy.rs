//! Accuracy against statsforecast (Nixtla) on real series: each file in `tests/data` holds a
//! series, its held-out last points and the forecasts of statsforecast's AutoETS, AutoARIMA,
//! AutoTheta and SeasonalNaive fitted without them (`tests/data/make.py` writes them). A
//! build here, on the same points, must come within [`WITHIN`] of statsforecast's best model
//! by MASE on each series, and within [`WITHIN_ON_AVERAGE`] of it on average. The bounds are
//! where the models stand today, a guard against getting worse: one holdout picks a model less
//! surely than statsforecast's information criteria (El Niño and sunspots, where seasonal naive
//! forecast the holdout best and the later points worst, are where it costs).

use auto_forecast::{Options, build};
use serde_json::Value;

/// How much worse than statsforecast's best model a build may be on one series.
const WITHIN: f64 = 2.1;
/// How much worse than statsforecast's best model a build may be, averaged over the series.
const WITHIN_ON_AVERAGE: f64 = 1.36;

fn mase(forecast: &[f64], actual: &[f64], train: &[f64], season: usize) -> f64 {
    let scale = (season..train.len())
        .map(|t| (train[t] - train[t - season]).abs())
        .sum::<f64>()
        / (train.len() - season) as f64;
    forecast
        .iter()
        .zip(actual)
        .map(|(f, a)| (f - a).abs())
        .sum::<f64>()
        / actual.len() as f64
        / scale
}

fn floats(value: &Value) -> Vec<f64> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

#[test]
fn builds_come_close_to_statsforecast_on_real_series() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    names.sort();
    assert!(names.len() >= 5, "the series: {names:?}");
    let mut ratios = Vec::new();
    for path in names {
        let record: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let ys = floats(&record["series"]);
        let horizon = record["horizon"].as_u64().unwrap() as usize;
        let season = record["season"].as_u64().map(|s| s as usize);
        let (train, actual) = ys.split_at(ys.len() - horizon);
        let built = build(train, &Options { horizon, season }).unwrap();
        let ours = built.forecast(horizon).unwrap();
        let m = season.unwrap_or(1);
        let our_mase = mase(&ours.mean, actual, train, m);
        let theirs: Vec<(String, f64)> = record["statsforecast"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(model, f)| (model.clone(), mase(&floats(f), actual, train, m)))
            .collect();
        let best = theirs
            .iter()
            .filter(|(model, _)| model != "SeasonalNaive")
            .map(|(_, v)| *v)
            .fold(f64::INFINITY, f64::min);
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        println!(
            "{name}: ours {our_mase:.3} ({}), statsforecast {}",
            built.pick,
            theirs
                .iter()
                .map(|(model, v)| format!("{model} {v:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        println!(
            "  candidates on the holdout within: {}",
            built
                .candidates
                .iter()
                .map(|c| format!("{} {:.3?}", c.name, c.mase))
                .collect::<Vec<_>>()
                .join(", ")
        );
        ratios.push((name, our_mase / best));
    }
    for (name, ratio) in &ratios {
        assert!(
            *ratio <= WITHIN,
            "{name}: {ratio} times statsforecast's best MASE"
        );
    }
    let ratios: Vec<f64> = ratios.into_iter().map(|(_, r)| r).collect();
    let average = ratios.iter().sum::<f64>() / ratios.len() as f64;
    println!("on average {average:.3} times statsforecast's best");
    assert!(average <= WITHIN_ON_AVERAGE, "{ratios:?}");
}
