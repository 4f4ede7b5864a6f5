//! The exponential smoothing candidate, chosen within its family as R's `ets` and
//! statsforecast's AutoETS choose (Hyndman, Koehler, Snyder & Grose 2002; Hyndman et al.,
//! *Forecasting with Exponential Smoothing*, 2008): each innovations state-space model
//! ETS(error, trend, season) with an additive or multiplicative error, no, additive or damped
//! trend, and no, additive or multiplicative season, is fitted by maximum likelihood, and the
//! one with the lowest AICc is kept.
//!
//! Multiplicative errors and seasons need a positive series; an additive error with a
//! multiplicative season is left out, as `ets` leaves it out (its likelihood is unstable). The
//! smoothing parameters and the initial level and trend are searched with the Nelder-Mead
//! search of [`crate::optimize`], the initial seasonal states starting from a classical
//! decomposition of the first seasons, as `ets` starts them. Then, as `ets` searches every
//! initial state with the parameters, the initial states are searched by least squares of the
//! one-step errors (Gauss-Newton steps, exact in one for the additive models, whose errors are
//! linear in their start) and the parameters searched again from them; the better of the two
//! fits is kept. Seasons longer than 24 points keep their decomposition's states, as `ets`
//! fits no season longer (one state per point of a long season is more than its points tell
//! apart, and more than a build may spend). Without that search the seasonal forms were
//! charged in the AICc for states they never fitted: on CO2 (less its last four years) the
//! AICc of ETS(A,A,A) was 38 above the searched one's and 8 above statsforecast's, and the
//! forecasts of the seasonal series from rolling origins within the builds' training points
//! erred more (mean MASE at the horizon: air passengers 0.784 against 0.775 now, CO2 0.391
//! against 0.382, El Niño 0.752 against 0.654).

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Z95;
use crate::models::{decompose, mean};
use crate::optimize::{Bound, minimise};

/// Points an ETS model is fitted on, at most: the latest. Its states forget old points at the
/// rate of their smoothing, and each of the family's fits reads them all many times.
pub(crate) const ETS_POINTS_MAX: usize = 1_000;
/// Bounds of the smoothing parameters (`alpha`; `beta` and `gamma` as shares of what `alpha`
/// leaves them, so that `beta <= alpha` and `gamma <= 1 - alpha`), as `ets` keeps them.
const SMOOTHING: Bound = Bound {
    lo: 1e-4,
    hi: 0.9999,
};
/// Bounds of a damped trend's damping, as the ETS literature keeps them.
const DAMPING: Bound = Bound { lo: 0.8, hi: 0.98 };
/// Seasons at most whose first seasons are decomposed for the initial states: the first three,
/// or two when the series is shorter.
const INITIAL_SEASONS: usize = 3;
/// Points at least of the seasonally adjusted start the initial level and trend are regressed on.
const INITIAL_POINTS_MIN: usize = 10;
/// How far the search moves the initial level and trend from their regression, in standard
/// deviations of the adjusted start (for the trend, per point).
const INITIAL_SPREAD: f64 = 3.0;

/// How an ETS component enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    None,
    Additive,
    /// A damped additive trend.
    Damped,
    Multiplicative,
}

impl Component {
    fn letter(self) -> &'static str {
        match self {
            Component::None => "N",
            Component::Additive => "A",
            Component::Damped => "Ad",
            Component::Multiplicative => "M",
        }
    }
}

/// A fitted ETS model: its form, parameters and states at the series' end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ets {
    error: Component,
    trend: Component,
    season: Component,
    alpha: f64,
    /// The trend's smoothing, `beta` itself.
    beta: f64,
    gamma: f64,
    phi: f64,
    level: f64,
    slope: f64,
    /// The seasonal states of the next season, in time order (empty without a season).
    seasonals: Vec<f64>,
    /// The one-step errors' standard deviation: absolute with an additive error, relative to
    /// the forecast with a multiplicative one.
    sigma: f64,
    aicc: f64,
}

/// One model of the family to fit.
#[derive(Debug, Clone, Copy)]
struct Form {
    error: Component,
    trend: Component,
    season: Component,
}

/// What a run of the recursion gives: the likelihood's part that is searched, the sum of the
/// errors' squares (relative ones for a multiplicative error) and the states at the end.
struct Run {
    objective: f64,
    squares: f64,
    level: f64,
    slope: f64,
    seasonals: Vec<f64>,
}

/// The parameters of one run.
#[derive(Debug, Clone, Copy)]
struct Parameters {
    alpha: f64,
    beta: f64,
    gamma: f64,
    phi: f64,
    level: f64,
    slope: f64,
}

fn run(ys: &[f64], form: Form, p: Parameters, initial: &[f64]) -> Option<Run> {
    run_keeping(ys, form, p, initial, None)
}

/// As [`run`], keeping the one-step errors in `errors` (relative ones for a multiplicative
/// error): the residuals whose squares the likelihood sums.
fn run_keeping(
    ys: &[f64],
    form: Form,
    p: Parameters,
    initial: &[f64],
    mut errors: Option<&mut Vec<f64>>,
) -> Option<Run> {
    let mut seasonals = initial.to_vec();
    let m = seasonals.len();
    let (mut level, mut slope) = (p.level, p.slope);
    let multiplicative_error = form.error == Component::Multiplicative;
    let (mut squares, mut logs) = (0.0, 0.0);
    for (t, y) in ys.iter().enumerate() {
        let carried = match form.trend {
            Component::None => level,
            _ => level + p.phi * slope,
        };
        let fitted = match form.season {
            Component::Additive => carried + seasonals[t % m],
            Component::Multiplicative => carried * seasonals[t % m],
            _ => carried,
        };
        let error = y - fitted;
        if multiplicative_error {
            if fitted <= 0.0 {
                return None;
            }
            squares += (error / fitted).powi(2);
            logs += fitted.ln();
            if let Some(errors) = errors.as_deref_mut() {
                errors.push(error / fitted);
            }
        } else {
            squares += error * error;
            if let Some(errors) = errors.as_deref_mut() {
                errors.push(error);
            }
        }
        match form.season {
            Component::Multiplicative => {
                let s = seasonals[t % m];
                if s <= 0.0 || carried <= 0.0 {
                    return None;
                }
                level = carried + p.alpha * error / s;
                slope = p.phi * slope + p.beta * error / s;
                seasonals[t % m] = s + p.gamma * error / carried;
            }
            Component::Additive => {
                level = carried + p.alpha * error;
                slope = p.phi * slope + p.beta * error;
                seasonals[t % m] += p.gamma * error;
            }
            _ => {
                level = carried + p.alpha * error;
                slope = p.phi * slope + p.beta * error;
            }
        }
    }
    let n = ys.len() as f64;
    let objective = n * (squares / n).max(f64::MIN_POSITIVE).ln() + 2.0 * logs;
    if !objective.is_finite() {
        return None;
    }
    let n = ys.len();
    let next = (0..m).map(|k| seasonals[(n + k) % m]).collect();
    Some(Run {
        objective,
        squares,
        level,
        slope,
        seasonals: next,
    })
}

/// The initial seasonal states by position in the season: a classical decomposition of the
/// first seasons, as `ets` starts them.
fn initial_seasonals(ys: &[f64], m: usize, season: Component) -> Vec<f64> {
    let points = ys.len().min(INITIAL_SEASONS * m);
    decompose(&ys[..points], m, season == Component::Multiplicative)
}

/// Fits one form: none when the series cannot carry it or the search finds no finite fit.
fn fit_form(ys: &[f64], form: Form, m: usize) -> Option<Ets> {
    let seasonal = form.season != Component::None;
    let initial = if seasonal {
        initial_seasonals(ys, m, form.season)
    } else {
        Vec::new()
    };
    // The initial level and trend: a regression on the seasonally adjusted start.
    let start = ys.len().min(INITIAL_POINTS_MIN.max(2 * m));
    let adjusted: Vec<f64> = (0..start)
        .map(|t| match form.season {
            Component::Additive => ys[t] - initial[t % m],
            Component::Multiplicative => ys[t] / initial[t % m],
            _ => ys[t],
        })
        .collect();
    let (level, slope) = if form.trend == Component::None {
        (mean(&adjusted), 0.0)
    } else {
        let x_mean = (start as f64 + 1.0) / 2.0;
        let y_mean = mean(&adjusted);
        let (mut cross, mut square) = (0.0, 0.0);
        for (t, y) in adjusted.iter().enumerate() {
            cross += (t as f64 + 1.0 - x_mean) * (y - y_mean);
            square += (t as f64 + 1.0 - x_mean).powi(2);
        }
        let slope = cross / square;
        (y_mean - slope * x_mean, slope)
    };
    let spread = {
        let variance = adjusted
            .iter()
            .map(|y| (y - mean(&adjusted)).powi(2))
            .sum::<f64>()
            / adjusted.len() as f64;
        INITIAL_SPREAD * variance.sqrt() + f64::EPSILON * (1.0 + level.abs())
    };
    let level_bound = Bound {
        lo: level - spread,
        hi: level + spread,
    };
    let slope_spread = spread / start as f64;
    let slope_bound = Bound {
        lo: slope - slope_spread,
        hi: slope + slope_spread,
    };
    let trended = form.trend != Component::None;
    let damped = form.trend == Component::Damped;
    let mut bounds = vec![SMOOTHING, level_bound];
    let mut starts = vec![0.3, level];
    if trended {
        bounds.extend([SMOOTHING, slope_bound]);
        starts.extend([0.1, slope]);
    }
    if seasonal {
        bounds.push(SMOOTHING);
        starts.push(0.1);
    }
    if damped {
        bounds.push(DAMPING);
        starts.push(0.95);
    }
    let unpack = |x: &[f64]| -> Parameters {
        let alpha = x[0];
        let mut at = 2;
        let (mut beta, mut slope, mut gamma, mut phi) = (0.0, 0.0, 0.0, 1.0);
        if trended {
            beta = alpha * x[at];
            slope = x[at + 1];
            at += 2;
        }
        if seasonal {
            gamma = (1.0 - alpha) * x[at];
            at += 1;
        }
        if damped {
            phi = x[at];
        }
        Parameters {
            alpha,
            beta,
            gamma,
            phi,
            level: x[1],
            slope,
        }
    };
    let search = |initial: &[f64], starts: &[f64]| -> (Vec<f64>, f64) {
        let objective =
            |x: &[f64]| run(ys, form, unpack(x), initial).map_or(f64::INFINITY, |r| r.objective);
        let found = minimise(&bounds, starts, objective);
        let value = objective(&found);
        (found, value)
    };
    let (mut found, value) = search(&initial, &starts);
    let mut initial = initial;
    // The initial states searched too, as `ets` searches them: by least squares from the
    // parameters found, then the parameters again from the states found.
    if seasonal && m <= SEASON_STATES_MAX && value.is_finite() {
        let p = unpack(&found);
        if let Some((level, slope, seasonals)) = initial_states(ys, form, p, &initial) {
            let mut starts = found.clone();
            starts[1] = level.clamp(level_bound.lo, level_bound.hi);
            if trended {
                starts[3] = slope.clamp(slope_bound.lo, slope_bound.hi);
            }
            let (again, better) = search(&seasonals, &starts);
            if better < value {
                found = again;
                initial = seasonals;
            }
        }
    }
    let parameters = unpack(&found);
    let fitted = run(ys, form, parameters, &initial)?;
    // Parameters: the smoothing, the initial states and the variance, as `ets` counts them.
    let count = bounds.len() + if seasonal { m - 1 } else { 0 } + 1;
    let n = ys.len() as f64;
    let k = count as f64;
    let aicc = fitted.objective + 2.0 * k + 2.0 * k * (k + 1.0) / (n - k - 1.0).max(1.0);
    let freedom = ys.len().saturating_sub(count).max(1);
    Some(Ets {
        error: form.error,
        trend: form.trend,
        season: form.season,
        alpha: parameters.alpha,
        beta: parameters.beta,
        gamma: parameters.gamma,
        phi: parameters.phi,
        level: fitted.level,
        slope: fitted.slope,
        seasonals: fitted.seasonals,
        sigma: (fitted.squares / freedom as f64).sqrt(),
        aicc,
    })
}

/// Seasons at most whose initial states are searched, as R's `ets` fits seasons of at most 24
/// points: past that the states outnumber what a season's points can tell apart, and their
/// least squares would cost more than a build may take.
const SEASON_STATES_MAX: usize = 24;
/// Gauss-Newton steps the initial states' search takes, at most (one is exact for the models
/// whose states are linear in their start: an additive error, trend and season).
const STATE_STEPS: usize = 4;

/// The initial level, trend and seasonal states that make `p`'s one-step errors (relative ones
/// for a multiplicative error) least, by Gauss-Newton steps from `p`'s and `initial`, the last
/// seasonal state keeping the season's sum (0, or `m` for a multiplicative season) as `ets`
/// keeps it; none when no step lowers the likelihood's objective.
fn initial_states(
    ys: &[f64],
    form: Form,
    p: Parameters,
    initial: &[f64],
) -> Option<(f64, f64, Vec<f64>)> {
    let m = initial.len();
    let trended = form.trend != Component::None;
    let multiplicative = form.season == Component::Multiplicative;
    let at = if trended { 2 } else { 1 };
    let unpack = |x: &[f64]| -> (Parameters, Vec<f64>) {
        let mut q = p;
        q.level = x[0];
        if trended {
            q.slope = x[1];
        }
        let mut seasonals = x[at..].to_vec();
        let total: f64 = seasonals.iter().sum();
        seasonals.push(if multiplicative {
            m as f64 - total
        } else {
            -total
        });
        (q, seasonals)
    };
    let residuals = |x: &[f64]| -> Option<(Vec<f64>, f64)> {
        let (q, seasonals) = unpack(x);
        let mut errors = Vec::with_capacity(ys.len());
        let fitted = run_keeping(ys, form, q, &seasonals, Some(&mut errors))?;
        fitted
            .objective
            .is_finite()
            .then_some((errors, fitted.objective))
    };
    let mut x = vec![p.level];
    if trended {
        x.push(p.slope);
    }
    x.extend_from_slice(&initial[..m - 1]);
    let (mut errors, start) = residuals(&x)?;
    let mut objective = start;
    let k = x.len();
    for _ in 0..STATE_STEPS {
        // The errors' derivatives by forward differences, and the normal equations.
        let mut columns = Vec::with_capacity(k);
        for j in 0..k {
            let h = 1e-6 * (1.0 + x[j].abs());
            let mut moved = x.clone();
            moved[j] += h;
            let (errors_moved, _) = residuals(&moved)?;
            columns.push(
                errors_moved
                    .iter()
                    .zip(&errors)
                    .map(|(a, b)| (a - b) / h)
                    .collect::<Vec<f64>>(),
            );
        }
        let mut normal = vec![vec![0.0; k + 1]; k];
        for i in 0..k {
            for j in 0..=i {
                let v: f64 = columns[i].iter().zip(&columns[j]).map(|(a, b)| a * b).sum();
                normal[i][j] = v;
                normal[j][i] = v;
            }
            normal[i][k] = -columns[i]
                .iter()
                .zip(&errors)
                .map(|(a, b)| a * b)
                .sum::<f64>();
        }
        let Some(step) = solve(normal) else { break };
        let next: Vec<f64> = x.iter().zip(&step).map(|(a, b)| a + b).collect();
        match residuals(&next) {
            Some((e, value)) if value < objective - 1e-9 * objective.abs().max(1.0) => {
                x = next;
                errors = e;
                objective = value;
            }
            _ => break,
        }
    }
    if objective >= start {
        return None;
    }
    let (q, seasonals) = unpack(&x);
    Some((q.level, q.slope, seasonals))
}

/// The solution of the linear equations whose augmented rows are `rows`, by elimination with
/// partial pivoting; none when they are singular.
fn solve(mut rows: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let k = rows.len();
    let largest = rows
        .iter()
        .enumerate()
        .map(|(i, r)| r[i].abs())
        .fold(0.0, f64::max);
    for col in 0..k {
        let pivot = (col..k).max_by(|a, b| rows[*a][col].abs().total_cmp(&rows[*b][col].abs()))?;
        if rows[pivot][col].abs() <= 1e-12 * largest {
            return None;
        }
        rows.swap(col, pivot);
        let (above, below) = rows.split_at_mut(col + 1);
        let pivot = &above[col];
        for row in below {
            let factor = row[col] / pivot[col];
            for (x, p) in row[col..].iter_mut().zip(&pivot[col..]) {
                *x -= factor * p;
            }
        }
    }
    let mut x = vec![0.0; k];
    for i in (0..k).rev() {
        x[i] = (rows[i][k] - (i + 1..k).map(|j| rows[i][j] * x[j]).sum::<f64>()) / rows[i][i];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Fits every form the series can carry and keeps the one with the lowest AICc (the first in a
/// fixed order on a tie).
pub(crate) fn ets(ys: &[f64], season: Option<usize>) -> Result<Ets, String> {
    let ys = &ys[ys.len().saturating_sub(ETS_POINTS_MAX)..];
    if ys.len() < 4 {
        return Err("it needs at least 4 points".into());
    }
    let positive = ys.iter().all(|y| *y > 0.0);
    let m = season.filter(|m| ys.len() > 2 * m).unwrap_or(0);
    let errors: &[Component] = if positive {
        &[Component::Additive, Component::Multiplicative]
    } else {
        &[Component::Additive]
    };
    let mut seasons = vec![Component::None];
    if m > 0 {
        seasons.push(Component::Additive);
        if positive {
            seasons.push(Component::Multiplicative);
        }
    }
    let mut best: Option<Ets> = None;
    for &error in errors {
        for &trend in &[Component::None, Component::Additive, Component::Damped] {
            for &season in &seasons {
                if error == Component::Additive && season == Component::Multiplicative {
                    continue;
                }
                // A trend needs points besides its states to be told from noise.
                let states = 2 + if season == Component::None { 0 } else { m };
                if trend != Component::None && ys.len() <= states + 4 {
                    continue;
                }
                let form = Form {
                    error,
                    trend,
                    season,
                };
                if let Some(model) = fit_form(ys, form, m.max(1))
                    && best.as_ref().is_none_or(|b| model.aicc < b.aicc)
                {
                    best = Some(model);
                }
            }
        }
    }
    best.ok_or_else(|| "no form of it could be fitted".into())
}

/// Fits `same`'s form again on `ys`, its parameters and states searched anew: the refit of a
/// model a holdout picked. A form the series can no longer carry is chosen again.
pub(crate) fn refit(ys: &[f64], same: &Ets, season: Option<usize>) -> Result<Ets, String> {
    let tail = &ys[ys.len().saturating_sub(ETS_POINTS_MAX)..];
    let m = same.seasonals.len();
    let fits = tail.len() >= 4 && (m == 0 || tail.len() > 2 * m);
    let form = Form {
        error: same.error,
        trend: same.trend,
        season: same.season,
    };
    fits.then(|| fit_form(tail, form, m.max(1)))
        .flatten()
        .map_or_else(|| ets(ys, season), Ok)
}

impl Ets {
    /// Its form, as `ETS(M,Ad,M)`.
    pub(crate) fn form(&self) -> String {
        format!(
            "ETS({},{},{})",
            self.error.letter(),
            self.trend.letter(),
            self.season.letter()
        )
    }

    pub(crate) fn parameters(&self) -> Value {
        json!({
            "form": self.form(),
            "alpha": self.alpha,
            "beta": self.beta,
            "gamma": self.gamma,
            "phi": self.phi,
            "season": self.seasonals.len(),
            "aicc": self.aicc,
        })
    }

    /// The mean and the 95% interval's bounds. The variance is the additive models' exact one
    /// (Hyndman et al. 2008, class 1); with a multiplicative error or season it is that of the
    /// same model's linear form, scaled by the forecast, an approximation.
    pub(crate) fn forecast(&self, periods: usize) -> crate::Forecast {
        let m = self.seasonals.len();
        let mut carried = 0.0;
        let mut power = 1.0;
        let mut mean = Vec::with_capacity(periods);
        let mut moves = Vec::with_capacity(periods);
        for h in 1..=periods {
            match self.trend {
                Component::None => {}
                Component::Damped => {
                    power *= self.phi;
                    carried += power;
                }
                _ => carried += 1.0,
            }
            let base = self.level + carried * self.slope;
            let value = match self.season {
                Component::Additive => base + self.seasonals[(h - 1) % m],
                Component::Multiplicative => base * self.seasonals[(h - 1) % m],
                _ => base,
            };
            mean.push(value);
            let seasonal_move = if m > 0 && h % m == 0 { self.gamma } else { 0.0 };
            moves.push(self.alpha + self.beta * carried + seasonal_move);
        }
        let relative = self.error == Component::Multiplicative;
        let mut sum: f64 = 1.0;
        let mut spread = Vec::with_capacity(periods);
        for h in 0..periods {
            let scale = if relative { mean[h].abs() } else { 1.0 };
            spread.push(Z95 * self.sigma * scale * sum.sqrt());
            sum += moves[h] * moves[h];
        }
        crate::Forecast::around(mean, &spread)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_growing_multiplicative_season_is_told_from_an_additive_one() {
        let pattern = [0.8, 1.1, 1.3, 0.9, 1.0, 0.9];
        let ys: Vec<f64> = (0..120)
            .map(|t| {
                (100.0 + 3.0 * t as f64) * pattern[t % 6] * (1.0 + ((t * 7919) % 13) as f64 / 600.0)
            })
            .collect();
        let fitted = ets(&ys, Some(6)).unwrap();
        assert_eq!(
            fitted.season,
            Component::Multiplicative,
            "{}",
            fitted.form()
        );
        let forecast = fitted.forecast(6);
        for (h, f) in forecast.mean.iter().enumerate() {
            let truth = (100.0 + 3.0 * (120 + h) as f64) * pattern[(120 + h) % 6];
            assert!((f - truth).abs() / truth < 0.03, "{h}: {f} against {truth}");
        }
    }

    /// The least squares of the initial states find a season the decomposition's start misses:
    /// a repeated pattern, from a start that is off by a point each way.
    #[test]
    fn the_initial_states_are_found_by_least_squares() {
        let pattern = [3.0, -1.0, 2.0, -4.0];
        let ys: Vec<f64> = (0..40)
            .map(|t| 50.0 + 0.5 * t as f64 + pattern[t % 4])
            .collect();
        let form = Form {
            error: Component::Additive,
            trend: Component::Additive,
            season: Component::Additive,
        };
        let p = Parameters {
            alpha: 0.2,
            beta: 0.01,
            gamma: 0.05,
            phi: 1.0,
            level: 48.0,
            slope: 0.3,
        };
        let start = [4.0, -2.0, 3.0, -5.0];
        let (level, slope, seasonals) = initial_states(&ys, form, p, &start).unwrap();
        // The states before the first point: a level and trend that step onto the line.
        assert!((level - 49.5).abs() < 1e-4, "{level}");
        assert!((slope - 0.5).abs() < 1e-4, "{slope}");
        for (s, truth) in seasonals.iter().zip(pattern) {
            assert!((s - truth).abs() < 1e-4, "{seasonals:?}");
        }
        let fitted = run(&ys, form, Parameters { level, slope, ..p }, &seasonals).unwrap();
        assert!(fitted.squares < 1e-8, "{}", fitted.squares);
    }

    #[test]
    fn a_series_with_negative_values_keeps_to_additive_forms() {
        let ys: Vec<f64> = (0..60)
            .map(|t| (t as f64 / 3.0).sin() * 5.0 - 1.0)
            .collect();
        let fitted = ets(&ys, Some(12)).unwrap();
        assert_eq!(fitted.error, Component::Additive);
        assert_ne!(fitted.season, Component::Multiplicative);
    }
}
