//! The candidate models: how each is fitted, what it keeps, and how it forecasts.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Forecast;
use crate::optimize::{Bound, minimise};

/// The normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;
/// AR orders the ARIMA candidate tries, at most.
const AR_ORDER_MAX: usize = 8;
/// Bounds of the smoothing parameters: never quite 0 or 1, so every state keeps moving.
const SMOOTHING: Bound = Bound {
    lo: 1e-4,
    hi: 0.9999,
};
/// Bounds of a damped trend's damping, as the ETS literature keeps them.
const DAMPING: Bound = Bound { lo: 0.8, hi: 0.98 };
/// Bounds of Holt-Winters' damping: up to an undamped trend, which a seasonal series with a
/// steady trend (CO2 at Mauna Loa) needs.
const SEASONAL_DAMPING: Bound = Bound { lo: 0.8, hi: 1.0 };

/// The candidates, in the order a build tries and reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Naive,
    Drift,
    Ses,
    HoltDamped,
    HoltWinters,
    Theta,
    Arima,
}

impl Kind {
    pub(crate) const ALL: [Kind; 7] = [
        Kind::Naive,
        Kind::Drift,
        Kind::Ses,
        Kind::HoltDamped,
        Kind::HoltWinters,
        Kind::Theta,
        Kind::Arima,
    ];

    pub(crate) fn name(self, season: Option<usize>) -> &'static str {
        match self {
            Kind::Naive if season.is_some() => "seasonal_naive",
            Kind::Naive => "naive",
            Kind::Drift => "drift",
            Kind::Ses => "ses",
            Kind::HoltDamped => "holt_damped",
            Kind::HoltWinters => "holt_winters",
            Kind::Theta => "theta",
            Kind::Arima => "arima",
        }
    }
}

/// An exponential smoothing model's parameters and its states at the series' end (the
/// additive error state-space form, ETS(A,N,N), ETS(A,Ad,N) or ETS(A,Ad,A)).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Smoothing {
    alpha: f64,
    /// The trend's smoothing relative to `alpha` (the trend moves by `alpha * beta` of an error).
    beta: f64,
    gamma: f64,
    phi: f64,
    level: f64,
    trend: f64,
    /// The seasonal states of the next season, in time order.
    seasonals: Vec<f64>,
    sigma: f64,
}

/// A fitted model: everything its forecast needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case")]
pub enum Fitted {
    /// The value one season (one point without a season) before.
    SeasonalNaive {
        season: usize,
        last: Vec<f64>,
        sigma: f64,
    },
    /// The last value and the average change.
    Drift {
        last: f64,
        slope: f64,
        points: usize,
        sigma: f64,
    },
    Ses(Smoothing),
    HoltDamped(Smoothing),
    HoltWinters(Smoothing),
    /// The Theta method: SES with half the linear trend's slope as drift, reseasonalised.
    Theta {
        alpha: f64,
        level: f64,
        slope: f64,
        points: usize,
        /// The seasonal indices of the next season, in time order (empty without one).
        indices: Vec<f64>,
        sigma: f64,
    },
    /// ARIMA(p,d,0)(0,D,0): `y_t = intercept + Σ levels_j y_{t-j} + e_t` once expanded.
    Arima {
        p: usize,
        d: usize,
        seasonal_d: usize,
        season: usize,
        ar: Vec<f64>,
        intercept: f64,
        levels: Vec<f64>,
        /// The last `levels.len()` values, in time order.
        tail: Vec<f64>,
        sigma: f64,
    },
}

/// Fits `kind` on `ys`; why it cannot be fitted otherwise.
pub(crate) fn fit(kind: Kind, ys: &[f64], season: Option<usize>) -> Result<Fitted, String> {
    match kind {
        Kind::Naive => seasonal_naive(ys, season.unwrap_or(1)),
        Kind::Drift => drift(ys),
        Kind::Ses => Ok(Fitted::Ses(smoothing(ys, false, None)?)),
        Kind::HoltDamped => Ok(Fitted::HoltDamped(smoothing(ys, true, None)?)),
        Kind::HoltWinters => match season {
            Some(m) => Ok(Fitted::HoltWinters(smoothing(ys, true, Some(m))?)),
            None => Err("it needs a season, and the series shows none".into()),
        },
        Kind::Theta => theta(ys, season),
        Kind::Arima => arima(ys, season),
    }
}

impl Fitted {
    /// Its parameters, for a build's report.
    pub fn parameters(&self) -> Value {
        match self {
            Fitted::SeasonalNaive { season, .. } => json!({ "season": season }),
            Fitted::Drift { slope, .. } => json!({ "slope": slope }),
            Fitted::Ses(s) => json!({ "alpha": s.alpha }),
            Fitted::HoltDamped(s) => {
                json!({ "alpha": s.alpha, "beta": s.alpha * s.beta, "phi": s.phi })
            }
            Fitted::HoltWinters(s) => json!({
                "alpha": s.alpha, "beta": s.alpha * s.beta, "gamma": s.gamma, "phi": s.phi,
                "season": s.seasonals.len(),
            }),
            Fitted::Theta {
                alpha,
                slope,
                indices,
                ..
            } => json!({
                "alpha": alpha, "drift": slope / 2.0, "deseasonalised": !indices.is_empty(),
            }),
            Fitted::Arima {
                p,
                d,
                seasonal_d,
                season,
                ar,
                intercept,
                ..
            } => json!({
                "order": [p, d, 0],
                "seasonal_order": [0, seasonal_d, 0, if *seasonal_d > 0 { *season } else { 0 }],
                "ar": ar,
                "intercept": intercept,
            }),
        }
    }

    /// The `periods` after the series it was fitted on.
    pub fn forecast(&self, periods: usize) -> Forecast {
        let (mean, variance): (Vec<f64>, Vec<f64>) = match self {
            Fitted::SeasonalNaive {
                season,
                last,
                sigma,
            } => (1..=periods)
                .map(|h| {
                    let seasons = ((h - 1) / season) as f64;
                    (last[(h - 1) % season], sigma * sigma * (seasons + 1.0))
                })
                .unzip(),
            Fitted::Drift {
                last,
                slope,
                points,
                sigma,
            } => (1..=periods)
                .map(|h| {
                    let h = h as f64;
                    (
                        last + h * slope,
                        sigma * sigma * h * (1.0 + h / (*points as f64 - 1.0).max(1.0)),
                    )
                })
                .unzip(),
            Fitted::Ses(s) | Fitted::HoltDamped(s) | Fitted::HoltWinters(s) => s.forecast(periods),
            Fitted::Theta {
                alpha,
                level,
                slope,
                points,
                indices,
                sigma,
            } => {
                let decay = (1.0 - alpha).powi(*points as i32) / alpha;
                (1..=periods)
                    .map(|h| {
                        let index = if indices.is_empty() {
                            1.0
                        } else {
                            indices[(h - 1) % indices.len()]
                        };
                        let drift = slope / 2.0 * ((h - 1) as f64 + 1.0 / alpha - decay);
                        let variance =
                            sigma * sigma * (1.0 + alpha * alpha * (h - 1) as f64) * index * index;
                        ((level + drift) * index, variance)
                    })
                    .unzip()
            }
            Fitted::Arima {
                intercept,
                levels,
                tail,
                sigma,
                ..
            } => {
                let mut history = tail.clone();
                let mut mean = Vec::with_capacity(periods);
                for _ in 0..periods {
                    let at = history.len();
                    let next = intercept
                        + levels
                            .iter()
                            .enumerate()
                            .map(|(j, a)| a * history[at - 1 - j])
                            .sum::<f64>();
                    history.push(next);
                    mean.push(next);
                }
                let mut psi = vec![1.0];
                for j in 1..periods {
                    let v = (1..=j.min(levels.len()))
                        .map(|i| levels[i - 1] * psi[j - i])
                        .sum();
                    psi.push(v);
                }
                let mut sum = 0.0;
                let variance = psi
                    .iter()
                    .map(|w| {
                        sum += w * w;
                        sigma * sigma * sum
                    })
                    .collect();
                (mean, variance)
            }
        };
        let spread: Vec<f64> = variance.iter().map(|v| Z95 * v.max(0.0).sqrt()).collect();
        Forecast {
            lower: Some(mean.iter().zip(&spread).map(|(m, s)| m - s).collect()),
            upper: Some(mean.iter().zip(&spread).map(|(m, s)| m + s).collect()),
            mean,
        }
    }
}

impl Smoothing {
    fn forecast(&self, periods: usize) -> (Vec<f64>, Vec<f64>) {
        let m = self.seasonals.len();
        let (mut damped, mut power) = (0.0, 1.0);
        let mut mean = Vec::with_capacity(periods);
        // c_j: how much an error j periods back moves the forecast.
        let mut moves = Vec::with_capacity(periods);
        for h in 1..=periods {
            power *= self.phi;
            damped += power;
            let seasonal = if m > 0 {
                self.seasonals[(h - 1) % m]
            } else {
                0.0
            };
            mean.push(self.level + damped * self.trend + seasonal);
            let seasonal_move = if m > 0 && h % m == 0 { self.gamma } else { 0.0 };
            moves.push(self.alpha + self.alpha * self.beta * damped + seasonal_move);
        }
        let mut sum = 1.0;
        let mut variance = Vec::with_capacity(periods);
        for h in 1..=periods {
            variance.push(self.sigma * self.sigma * sum);
            sum += moves[h - 1] * moves[h - 1];
        }
        (mean, variance)
    }
}

fn seasonal_naive(ys: &[f64], season: usize) -> Result<Fitted, String> {
    if ys.len() <= season {
        return Err(format!("it needs more than {season} points"));
    }
    let residuals: Vec<f64> = (season..ys.len()).map(|t| ys[t] - ys[t - season]).collect();
    Ok(Fitted::SeasonalNaive {
        season,
        last: ys[ys.len() - season..].to_vec(),
        sigma: rms(&residuals, 0),
    })
}

fn drift(ys: &[f64]) -> Result<Fitted, String> {
    let n = ys.len();
    if n < 3 {
        return Err("it needs at least 3 points".into());
    }
    let slope = (ys[n - 1] - ys[0]) / (n - 1) as f64;
    let residuals: Vec<f64> = ys.windows(2).map(|w| w[1] - w[0] - slope).collect();
    Ok(Fitted::Drift {
        last: ys[n - 1],
        slope,
        points: n,
        sigma: rms(&residuals, 1),
    })
}

/// Runs the smoothing recursion over `ys`: the sum of squared one-step errors, the error
/// count and the final states.
fn smooth(
    ys: &[f64],
    alpha: f64,
    beta: f64,
    gamma: f64,
    phi: f64,
    season: Option<usize>,
) -> (f64, usize, Smoothing) {
    let (mut level, mut trend, mut seasonals, start) = match season {
        Some(m) => {
            let first = mean(&ys[..m]);
            let slope = (mean(&ys[m..2 * m]) - first) / m as f64;
            let centre = (m as f64 - 1.0) / 2.0;
            let seasonals: Vec<f64> = (0..m)
                .map(|i| ys[i] - (first + slope * (i as f64 - centre)))
                .collect();
            (first + slope * centre, slope, seasonals, m)
        }
        None if phi > 0.0 => (ys[0], ys[1] - ys[0], Vec::new(), 1),
        None => (ys[0], 0.0, Vec::new(), 1),
    };
    let m = seasonals.len();
    let mut sse = 0.0;
    for (t, y) in ys.iter().enumerate().skip(start) {
        let seasonal = if m > 0 { seasonals[t % m] } else { 0.0 };
        let error = y - (level + phi * trend + seasonal);
        sse += error * error;
        level += phi * trend + alpha * error;
        trend = phi * trend + alpha * beta * error;
        if m > 0 {
            seasonals[t % m] += gamma * error;
        }
    }
    let n = ys.len();
    let next = (0..m).map(|k| seasonals[(n + k) % m]).collect();
    let smoothing = Smoothing {
        alpha,
        beta,
        gamma,
        phi,
        level,
        trend,
        seasonals: next,
        sigma: 0.0,
    };
    (sse, n - start, smoothing)
}

/// Simple exponential smoothing (`trend` false), Holt's damped trend, or additive
/// Holt-Winters with a damped trend (`season` given).
fn smoothing(ys: &[f64], trend: bool, season: Option<usize>) -> Result<Smoothing, String> {
    let needed = match season {
        Some(m) => 2 * m + 1,
        None if trend => 4,
        None => 3,
    };
    if ys.len() < needed {
        return Err(match season {
            Some(m) => format!(
                "it needs at least 2 seasons of history ({} points)",
                2 * m + 1
            ),
            None => format!("it needs at least {needed} points"),
        });
    }
    let (parameters, count) = match (trend, season) {
        (false, _) => (1, 1),
        (true, None) => (3, 2),
        (true, Some(m)) => (4, 2 + m),
    };
    let unpack = |p: &[f64]| -> (f64, f64, f64, f64) {
        match parameters {
            1 => (p[0], 0.0, 0.0, 0.0),
            3 => (p[0], p[1], 0.0, p[2]),
            _ => (p[0], p[1], p[2] * (1.0 - p[0]), p[3]),
        }
    };
    let bounds = [SMOOTHING, SMOOTHING, SMOOTHING, SEASONAL_DAMPING];
    let (bounds, start): (Vec<Bound>, Vec<f64>) = match parameters {
        1 => (vec![SMOOTHING], vec![0.5]),
        3 => (vec![bounds[0], bounds[1], DAMPING], vec![0.5, 0.1, 0.95]),
        _ => (bounds.to_vec(), vec![0.3, 0.1, 0.1, 0.95]),
    };
    let found = minimise(&bounds, &start, |p| {
        let (alpha, beta, gamma, phi) = unpack(p);
        smooth(ys, alpha, beta, gamma, phi, season).0
    });
    let (alpha, beta, gamma, phi) = unpack(&found);
    let (sse, errors, mut fitted) = smooth(ys, alpha, beta, gamma, phi, season);
    let freedom = errors.saturating_sub(parameters + count).max(1);
    fitted.sigma = (sse / freedom as f64).sqrt();
    Ok(fitted)
}

/// The Theta method (Hyndman & Billah 2003): SES on the series, plus half the slope of its
/// linear trend as drift; on a multiplicatively deseasonalised series when its season is
/// significant (the 90% autocorrelation test the method's authors use) and it is positive.
fn theta(ys: &[f64], season: Option<usize>) -> Result<Fitted, String> {
    if ys.len() < 4 {
        return Err("it needs at least 4 points".into());
    }
    let indices = match season {
        Some(m) if ys.len() > 2 * m && ys.iter().all(|y| *y > 0.0) && seasonal(ys, m) => {
            decompose(ys, m)
        }
        _ => Vec::new(),
    };
    let m = indices.len();
    let adjusted: Vec<f64> = if m > 0 {
        ys.iter()
            .enumerate()
            .map(|(t, y)| y / indices[t % m])
            .collect()
    } else {
        ys.to_vec()
    };
    let ses = smoothing(&adjusted, false, None)?;
    let n = ys.len();
    let t_mean = (n as f64 - 1.0) / 2.0;
    let y_mean = mean(&adjusted);
    let (mut cross, mut square) = (0.0, 0.0);
    for (t, y) in adjusted.iter().enumerate() {
        cross += (t as f64 - t_mean) * (y - y_mean);
        square += (t as f64 - t_mean).powi(2);
    }
    let slope = cross / square;
    let next = (0..m).map(|k| indices[(n + k) % m]).collect();
    Ok(Fitted::Theta {
        alpha: ses.alpha,
        level: ses.level,
        slope,
        points: n,
        indices: next,
        sigma: ses.sigma,
    })
}

/// Whether `ys`'s autocorrelation at lag `m` stands out at 90%.
fn seasonal(ys: &[f64], m: usize) -> bool {
    let n = ys.len();
    let average = mean(ys);
    let variance: f64 = ys.iter().map(|y| (y - average).powi(2)).sum();
    if variance <= 0.0 {
        return false;
    }
    let acf = |lag: usize| -> f64 {
        (lag..n)
            .map(|t| (ys[t] - average) * (ys[t - lag] - average))
            .sum::<f64>()
            / variance
    };
    let spread: f64 = (1..m).map(|k| acf(k).powi(2)).sum();
    acf(m).abs() > 1.645 * ((1.0 + 2.0 * spread) / n as f64).sqrt()
}

/// Classical multiplicative decomposition's seasonal indices, by position in the season,
/// averaging to 1.
fn decompose(ys: &[f64], m: usize) -> Vec<f64> {
    let n = ys.len();
    let half = m / 2;
    let mut sums = vec![0.0; m];
    let mut counts = vec![0usize; m];
    for t in half..n - half {
        let centred = if m.is_multiple_of(2) {
            (ys[t - half] / 2.0
                + ys[t + half] / 2.0
                + ys[t - half + 1..t + half].iter().sum::<f64>())
                / m as f64
        } else {
            ys[t - half..=t + half].iter().sum::<f64>() / m as f64
        };
        sums[t % m] += ys[t] / centred;
        counts[t % m] += 1;
    }
    let raw: Vec<f64> = sums
        .iter()
        .zip(&counts)
        .map(|(s, c)| if *c > 0 { s / *c as f64 } else { 1.0 })
        .collect();
    let average = mean(&raw);
    raw.iter().map(|r| r / average).collect()
}

/// ARIMA(p,d,0)(0,D,0)_m: seasonal then plain differences while each lowers the series'
/// spread (at most two in all), then the AR order up to [`AR_ORDER_MAX`] with the lowest
/// AIC, fitted by conditional least squares, with an intercept below two differences.
fn arima(ys: &[f64], season: Option<usize>) -> Result<Fitted, String> {
    if ys.len() < 8 {
        return Err("it needs at least 8 points".into());
    }
    let mut w = ys.to_vec();
    let mut seasonal_d = 0;
    let m = season.unwrap_or(0);
    if m > 0 && ys.len() >= 3 * m {
        let diffed: Vec<f64> = (m..w.len()).map(|t| w[t] - w[t - m]).collect();
        if spread(&diffed) < spread(&w) {
            w = diffed;
            seasonal_d = 1;
        }
    }
    let mut d = 0;
    while d + seasonal_d < 2 && w.len() > 8 {
        let diffed: Vec<f64> = w.windows(2).map(|x| x[1] - x[0]).collect();
        if spread(&diffed) < spread(&w) {
            w = diffed;
            d += 1;
        } else {
            break;
        }
    }
    let with_intercept = d + seasonal_d < 2;
    let top = AR_ORDER_MAX.min((w.len().saturating_sub(2)) / 3);
    let rows = w.len() - top;
    let mut best: Option<(f64, usize, Vec<f64>, f64)> = None;
    for p in 0..=top {
        let Some((coefficients, sse)) = least_squares(&w, p, top, with_intercept) else {
            continue;
        };
        let k = p + usize::from(with_intercept);
        let aic = rows as f64 * (sse / rows as f64).max(1e-300).ln() + 2.0 * k as f64;
        if best.as_ref().is_none_or(|(b, ..)| aic < *b - 1e-9) {
            best = Some((aic, p, coefficients, sse));
        }
    }
    let Some((_, p, coefficients, sse)) = best else {
        return Err("its least squares have no solution".into());
    };
    let (intercept, ar) = if with_intercept {
        (coefficients[0], coefficients[1..].to_vec())
    } else {
        (0.0, coefficients)
    };
    // (1 - Σ ar_i B^i)(1 - B)^d (1 - B^m)^D, as 1 - Σ levels_j B^j.
    let mut polynomial = vec![1.0];
    polynomial.extend(ar.iter().map(|a| -a));
    for _ in 0..d {
        polynomial = multiply(&polynomial, &[1.0, -1.0]);
    }
    if seasonal_d > 0 {
        let mut factor = vec![0.0; m + 1];
        factor[0] = 1.0;
        factor[m] = -1.0;
        polynomial = multiply(&polynomial, &factor);
    }
    let levels: Vec<f64> = polynomial[1..].iter().map(|c| -c).collect();
    let freedom = rows.saturating_sub(p + usize::from(with_intercept)).max(1);
    Ok(Fitted::Arima {
        p,
        d,
        seasonal_d,
        season: m,
        ar,
        intercept,
        tail: ys[ys.len() - levels.len()..].to_vec(),
        levels,
        sigma: (sse / freedom as f64).sqrt(),
    })
}

/// The AR(`p`) coefficients of `w` (the intercept first, when asked) from the rows `top..`,
/// and their sum of squared errors; none when the equations are singular.
fn least_squares(w: &[f64], p: usize, top: usize, intercept: bool) -> Option<(Vec<f64>, f64)> {
    let k = p + usize::from(intercept);
    let regressors = |t: usize| -> Vec<f64> {
        let mut x = Vec::with_capacity(k);
        if intercept {
            x.push(1.0);
        }
        x.extend((1..=p).map(|i| w[t - i]));
        x
    };
    let coefficients = if k == 0 {
        Vec::new()
    } else {
        let mut normal = vec![vec![0.0; k + 1]; k];
        for (t, target) in w.iter().enumerate().skip(top) {
            let x = regressors(t);
            for (row, xi) in normal.iter_mut().zip(&x) {
                for (cell, xj) in row.iter_mut().zip(&x) {
                    *cell += xi * xj;
                }
                row[k] += xi * target;
            }
        }
        solve(normal)?
    };
    let sse = (top..w.len())
        .map(|t| {
            let fit: f64 = regressors(t)
                .iter()
                .zip(&coefficients)
                .map(|(x, c)| x * c)
                .sum();
            (w[t] - fit).powi(2)
        })
        .sum();
    Some((coefficients, sse))
}

/// Gaussian elimination with partial pivoting on an augmented matrix.
fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let k = a.len();
    for col in 0..k {
        let pivot = (col..k).max_by(|x, y| a[*x][col].abs().total_cmp(&a[*y][col].abs()))?;
        let scale = a.iter().map(|r| r[col].abs()).fold(0.0, f64::max);
        if a[pivot][col].abs() <= 1e-12 * scale.max(1e-300) {
            return None;
        }
        a.swap(col, pivot);
        let (above, below) = a.split_at_mut(col + 1);
        let pivot_row = &above[col];
        for row in below.iter_mut() {
            let factor = row[col] / pivot_row[col];
            for (cell, p) in row.iter_mut().zip(pivot_row).skip(col) {
                *cell -= factor * p;
            }
        }
    }
    let mut x = vec![0.0; k];
    for row in (0..k).rev() {
        let known: f64 = (row + 1..k).map(|j| a[row][j] * x[j]).sum();
        x[row] = (a[row][k] - known) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

fn multiply(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.len() + b.len() - 1];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    out
}

fn mean(ys: &[f64]) -> f64 {
    ys.iter().sum::<f64>() / ys.len() as f64
}

fn spread(ys: &[f64]) -> f64 {
    let average = mean(ys);
    (ys.iter().map(|y| (y - average).powi(2)).sum::<f64>() / ys.len() as f64).sqrt()
}

/// The root mean square of `residuals`, less `fitted` degrees of freedom.
fn rms(residuals: &[f64], fitted: usize) -> f64 {
    let freedom = residuals.len().saturating_sub(fitted).max(1);
    (residuals.iter().map(|r| r * r).sum::<f64>() / freedom as f64).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arima_differences_a_random_walk_and_integrates_back() {
        // A walk with a steady step: one difference leaves a constant, the intercept.
        let ys: Vec<f64> = (0..50).map(|t| 10.0 + 2.0 * t as f64).collect();
        let Fitted::Arima { d, intercept, .. } = arima(&ys, None).unwrap() else {
            panic!("an ARIMA");
        };
        assert_eq!(d, 1);
        assert!((intercept - 2.0).abs() < 1e-9, "{intercept}");
        let forecast = arima(&ys, None).unwrap().forecast(3);
        for (h, f) in forecast.mean.iter().enumerate() {
            assert!((f - (110.0 + 2.0 * h as f64)).abs() < 1e-6, "{forecast:?}");
        }
    }

    #[test]
    fn multiplying_polynomials_expands_differences() {
        assert_eq!(multiply(&[1.0, -1.0], &[1.0, -1.0]), vec![1.0, -2.0, 1.0]);
    }
}
