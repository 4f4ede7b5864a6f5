//! The Theta candidate, chosen within its family as statsforecast's AutoTheta chooses
//! (Fiorucci, Pellegrini, Louzada, Petropoulos & Koehler, *Models for optimising the theta
//! method and their relationship to state space models*, IJF 2016): the standard Theta model
//! (θ = 2), the optimised one (θ searched), and their dynamic forms (the trend line refitted at
//! each point), each with its smoothing and initial level searched by the one-step errors'
//! squares, and the one with the least of them kept. A series whose season is significant (the
//! 90% autocorrelation test the method's authors use) and positive is deseasonalised by a
//! classical multiplicative decomposition first, and its forecast reseasonalised.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Z95;
use crate::models::{decompose, mean, seasonal};
use crate::optimize::{Bound, minimise};

/// Points a Theta model is fitted on, at most: the latest. Its level forgets old points at the
/// rate of its smoothing, a trend line through the latest thousand points says where a long
/// series is heading better than one through all of them, and each of the four searches reads
/// them all many times.
pub(crate) const THETA_POINTS_MAX: usize = 1_000;
/// Bounds of the smoothing parameter, as AutoTheta keeps them.
const ALPHA: Bound = Bound { lo: 0.1, hi: 0.99 };
/// Bounds of the trend line's weight `1 - 1/θ` for the optimised models, searched rather than
/// θ itself: from none (θ = 1, SES alone) to nearly whole (θ = 10,000), where AutoTheta lets θ
/// go as far as it likes.
const WEIGHT: Bound = Bound {
    lo: 0.0,
    hi: 0.9999,
};
/// The shortest season taken out of a series, as AutoTheta tests it.
const DESEASONALISED_SEASON_MIN: usize = 4;
/// The least multiplicative seasonal index: below it the season is taken out additively.
const INDEX_MIN: f64 = 0.01;
/// The first one-step errors the search leaves out, as AutoTheta leaves them: the dynamic
/// models' trend line is still settling there.
const BURN_IN: usize = 3;
/// The standard model's θ.
const THETA_STANDARD: f64 = 2.0;
/// How far the search moves the initial level from the first value, in the series' standard
/// deviations.
const LEVEL_SPREAD: f64 = 3.0;

/// A fitted Theta model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Theta {
    /// Whether the trend line was refitted at each point.
    dynamic: bool,
    theta: f64,
    alpha: f64,
    /// The smoothed level at the series' end.
    level: f64,
    /// The trend line's intercept and slope at the series' end (time 1 is the first point).
    intercept: f64,
    slope: f64,
    points: usize,
    /// The seasonal indices of the next season, in time order (empty without one).
    indices: Vec<f64>,
    /// Whether they add to the forecast rather than multiply it.
    additive: bool,
    sigma: f64,
    mse: f64,
}

/// The straight line through `(1, y_1) .. (t, y_t)` kept up to date point by point.
struct Line {
    count: f64,
    sum_y: f64,
    sum_ty: f64,
}

impl Line {
    fn push(&mut self, y: f64) {
        self.count += 1.0;
        self.sum_y += y;
        self.sum_ty += self.count * y;
    }

    /// Its intercept and slope; a flat line through the only point, before a second.
    fn fit(&self) -> (f64, f64) {
        let n = self.count;
        let y_mean = self.sum_y / n;
        if n < 2.0 {
            return (y_mean, 0.0);
        }
        let slope = 6.0 / (n * n - 1.0) * (2.0 * self.sum_ty / n - (n + 1.0) * y_mean);
        (y_mean - slope * (n + 1.0) / 2.0, slope)
    }
}

/// The sum of the one-step errors' squares and the states at the end.
fn run(ys: &[f64], dynamic: bool, theta: f64, alpha: f64, level0: f64) -> (f64, f64, f64, f64) {
    let mut whole = Line {
        count: 0.0,
        sum_y: 0.0,
        sum_ty: 0.0,
    };
    if !dynamic {
        for y in ys {
            whole.push(*y);
        }
    }
    let (fixed_a, fixed_b) = if dynamic { (0.0, 0.0) } else { whole.fit() };
    let mut line = Line {
        count: 0.0,
        sum_y: 0.0,
        sum_ty: 0.0,
    };
    let mut level = level0;
    // The dynamic line is unknown before the first point: the first forecast is the level.
    let (mut a, mut b) = if dynamic {
        (0.0, 0.0)
    } else {
        (fixed_a, fixed_b)
    };
    let mut squares = 0.0;
    // The one-step forecast from the level after t points is `level + weight * (decay * a +
    // (1 - decay * (1 - alpha)) / alpha * b)`, `decay` being `(1 - alpha)^t`.
    let weight = 1.0 - 1.0 / theta;
    let (keep, inverse) = (1.0 - alpha, 1.0 / alpha);
    let mut decay = 1.0;
    for (t, y) in ys.iter().enumerate() {
        let forecast = level + weight * (decay * a + (1.0 - decay * keep) * inverse * b);
        let error = y - forecast;
        if t >= BURN_IN {
            squares += error * error;
        }
        decay *= keep;
        level = alpha * y + (1.0 - alpha) * level;
        if dynamic {
            line.push(*y);
            (a, b) = line.fit();
        }
    }
    (squares, level, a, b)
}

/// Fits the four models on `ys` and keeps the one with the least squared one-step errors.
pub(crate) fn theta(ys: &[f64], season: Option<usize>) -> Result<Theta, String> {
    fit(ys, season, None)
}

/// Fits `same`'s model (standard or optimised, static or dynamic) again on `ys`, its smoothing,
/// initial level and θ searched anew: the refit of a model a holdout picked.
pub(crate) fn refit(ys: &[f64], same: &Theta, season: Option<usize>) -> Result<Theta, String> {
    let optimised = same.theta != THETA_STANDARD;
    fit(ys, season, Some((same.dynamic, optimised)))
}

/// Fits the four models, or only the one `only` names (dynamic, optimised).
fn fit(ys: &[f64], season: Option<usize>, only: Option<(bool, bool)>) -> Result<Theta, String> {
    let ys = &ys[ys.len().saturating_sub(THETA_POINTS_MAX)..];
    if ys.len() <= BURN_IN + 1 {
        return Err(format!("it needs at least {} points", BURN_IN + 2));
    }
    // A significant season is taken out multiplicatively, or additively where the series is
    // not positive or a multiplicative index comes near nothing, as AutoTheta takes it out.
    let (indices, additive) = match season {
        Some(m) if m >= DESEASONALISED_SEASON_MIN && ys.len() >= 2 * m && seasonal(ys, m) => {
            let positive = ys.iter().all(|y| *y > 0.0);
            let multiplicative = positive.then(|| decompose(ys, m, true));
            match multiplicative {
                Some(indices) if indices.iter().all(|i| *i >= INDEX_MIN) => (indices, false),
                _ => (decompose(ys, m, false), true),
            }
        }
        _ => (Vec::new(), false),
    };
    let m = indices.len();
    let adjusted: Vec<f64> = ys
        .iter()
        .enumerate()
        .map(|(t, y)| match (m, additive) {
            (0, _) => *y,
            (_, true) => y - indices[t % m],
            (_, false) => y / indices[t % m],
        })
        .collect();
    let first = adjusted[0];
    let average = mean(&adjusted);
    let deviation = (adjusted.iter().map(|y| (y - average).powi(2)).sum::<f64>()
        / adjusted.len() as f64)
        .sqrt();
    let spread = LEVEL_SPREAD * deviation + f64::EPSILON * (1.0 + first.abs());
    let level = Bound {
        lo: first - spread,
        hi: first + spread,
    };
    let mut best: Option<(f64, bool, f64, f64, f64)> = None;
    for dynamic in [false, true] {
        for optimised in [false, true] {
            if only.is_some_and(|only| only != (dynamic, optimised)) {
                continue;
            }
            let (theta, alpha, level0) = if optimised {
                let theta_of = |weight: f64| 1.0 / (1.0 - weight);
                let standard = 1.0 - 1.0 / THETA_STANDARD;
                let found = minimise(&[ALPHA, level, WEIGHT], &[0.5, first, standard], |x| {
                    run(&adjusted, dynamic, theta_of(x[2]), x[0], x[1]).0
                });
                (theta_of(found[2]), found[0], found[1])
            } else {
                let found = minimise(&[ALPHA, level], &[0.5, first], |x| {
                    run(&adjusted, dynamic, THETA_STANDARD, x[0], x[1]).0
                });
                (THETA_STANDARD, found[0], found[1])
            };
            let squares = run(&adjusted, dynamic, theta, alpha, level0).0;
            if squares.is_finite() && best.is_none_or(|(b, ..)| squares < b) {
                best = Some((squares, dynamic, theta, alpha, level0));
            }
        }
    }
    let Some((squares, dynamic, theta, alpha, level0)) = best else {
        return Err("no model of it could be fitted".into());
    };
    let (_, level, intercept, slope) = run(&adjusted, dynamic, theta, alpha, level0);
    let n = ys.len();
    let errors = n - BURN_IN;
    let freedom = errors
        .saturating_sub(if theta == THETA_STANDARD { 2 } else { 3 })
        .max(1);
    Ok(Theta {
        dynamic,
        theta,
        alpha,
        level,
        intercept,
        slope,
        points: n,
        indices: (0..m).map(|k| indices[(n + k) % m]).collect(),
        additive,
        sigma: (squares / freedom as f64).sqrt(),
        mse: squares / errors as f64,
    })
}

impl Theta {
    pub(crate) fn parameters(&self) -> Value {
        let model = match (self.dynamic, self.theta == THETA_STANDARD) {
            (false, true) => "standard",
            (false, false) => "optimised",
            (true, true) => "dynamic_standard",
            (true, false) => "dynamic_optimised",
        };
        json!({
            "model": model,
            "theta": self.theta,
            "alpha": self.alpha,
            "deseasonalised": match (self.indices.is_empty(), self.additive) {
                (true, _) => "no",
                (false, true) => "additively",
                (false, false) => "multiplicatively",
            },
        })
    }

    pub(crate) fn forecast(&self, periods: usize) -> crate::Forecast {
        let decay = (1.0 - self.alpha).powi(self.points as i32);
        let weight = 1.0 - 1.0 / self.theta;
        let (mut mean, mut spreads) = (Vec::new(), Vec::new());
        for h in 1..=periods {
            let index = self.indices.get((h - 1) % self.indices.len().max(1));
            let steps = (h - 1) as f64 + (1.0 - decay * (1.0 - self.alpha)) / self.alpha;
            let deseasonalised =
                self.level + weight * (decay * self.intercept + steps * self.slope);
            let spread = Z95 * self.sigma * (1.0 + self.alpha * self.alpha * (h - 1) as f64).sqrt();
            let (value, spread) = match index {
                None => (deseasonalised, spread),
                Some(index) if self.additive => (deseasonalised + index, spread),
                Some(index) => (deseasonalised * index, spread * index.abs()),
            };
            mean.push(value);
            spreads.push(spread);
        }
        crate::Forecast::around(mean, &spreads)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_season_below_zero_is_taken_out_additively() {
        let pattern = [3.0, -2.0, 5.0, 0.0];
        let ys: Vec<f64> = (0..72)
            .map(|t| -100.0 + pattern[t % 4] + 0.1 * t as f64)
            .collect();
        let fitted = theta(&ys, Some(4)).unwrap();
        assert!(fitted.additive && !fitted.indices.is_empty(), "{fitted:?}");
        for (h, f) in fitted.forecast(4).mean.iter().enumerate() {
            let truth = -100.0 + pattern[(72 + h) % 4] + 0.1 * (72 + h) as f64;
            assert!((f - truth).abs() < 0.05, "{h}: {f} against {truth}");
        }
    }

    #[test]
    fn a_straight_line_is_continued_by_the_optimised_model() {
        let ys: Vec<f64> = (0..60).map(|t| 5.0 + 2.0 * t as f64).collect();
        let forecast = theta(&ys, None).unwrap().forecast(3);
        for (h, f) in forecast.mean.iter().enumerate() {
            let truth = 5.0 + 2.0 * (60 + h) as f64;
            assert!((f - truth).abs() / truth < 0.01, "{h}: {f} against {truth}");
        }
    }
}
