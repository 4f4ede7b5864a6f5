//! The candidate models: how each is fitted, what it keeps, and how it forecasts.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::Forecast;
use crate::optimize::{Bound, minimise};

/// The normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;
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
    Combination,
}

impl Kind {
    /// The members of a combination: the smoothing model the season calls for, Theta and the
    /// ARIMA. Each errs its own way, and their mean errs less than most of them (the M4
    /// competition's finding).
    pub(crate) fn members(season: Option<usize>) -> [Kind; 3] {
        let smoothing = if season.is_some() {
            Kind::HoltWinters
        } else {
            Kind::HoltDamped
        };
        [smoothing, Kind::Theta, Kind::Arima]
    }

    pub(crate) const ALL: [Kind; 8] = [
        Kind::Naive,
        Kind::Drift,
        Kind::Ses,
        Kind::HoltDamped,
        Kind::HoltWinters,
        Kind::Theta,
        Kind::Arima,
        Kind::Combination,
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
            Kind::Combination => "combination",
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
    /// The mean of its members' forecasts and of their intervals' bounds.
    Combination {
        members: Vec<Fitted>,
    },
    /// ARIMA(p,d,q)(P,D,Q)_m: `y_t = intercept + Σ levels_j y_{t-j} + e_t + Σ ma_k e_{t-k}`
    /// once expanded. (A build kept before the MA terms has none: its fields default empty.)
    Arima {
        p: usize,
        d: usize,
        seasonal_d: usize,
        season: usize,
        /// φ_1..φ_p, then the seasonal Φ_1..Φ_P.
        ar: Vec<f64>,
        intercept: f64,
        levels: Vec<f64>,
        /// The last `levels.len()` values, in time order.
        tail: Vec<f64>,
        sigma: f64,
        #[serde(default)]
        q: usize,
        #[serde(default)]
        seasonal_p: usize,
        #[serde(default)]
        seasonal_q: usize,
        /// The MA polynomial expanded, `1 + Σ ma_k B^k` after its 1.
        #[serde(default)]
        ma: Vec<f64>,
        /// The last `ma.len()` errors, in time order.
        #[serde(default)]
        errors: Vec<f64>,
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
        Kind::Arima => crate::arima::arima(ys, season),
        Kind::Combination => {
            let members = Kind::members(season)
                .iter()
                .map(|kind| fit(*kind, ys, season))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Fitted::Combination { members })
        }
    }
}

impl Fitted {
    /// Its parameters, for a build's report.
    pub fn parameters(&self) -> Value {
        match self {
            Fitted::SeasonalNaive { season, .. } => json!({ "season": season }),
            Fitted::Drift { slope, .. } => json!({ "slope": slope }),
            Fitted::Ses(s) => json!({ "alpha": s.alpha }),
            Fitted::Combination { members } => json!({
                "members": members.iter().map(Fitted::parameters).collect::<Vec<_>>(),
            }),
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
                q,
                seasonal_p,
                seasonal_q,
                ma,
                ..
            } => {
                let seasonal = seasonal_d + seasonal_p + seasonal_q > 0;
                json!({
                    "order": [p, d, q],
                    "seasonal_order": [seasonal_p, seasonal_d, seasonal_q, if seasonal { *season } else { 0 }],
                    "ar": ar,
                    "ma": ma,
                    "intercept": intercept,
                })
            }
        }
    }

    /// The `periods` after the series it was fitted on.
    pub fn forecast(&self, periods: usize) -> Forecast {
        if let Fitted::Combination { members } = self {
            let forecasts: Vec<Forecast> = members.iter().map(|m| m.forecast(periods)).collect();
            let count = forecasts.len().max(1) as f64;
            let average = |pick: &dyn Fn(&Forecast) -> Option<&Vec<f64>>| -> Option<Vec<f64>> {
                let mut sum = vec![0.0; periods];
                for forecast in &forecasts {
                    for (s, v) in sum.iter_mut().zip(pick(forecast)?) {
                        *s += v / count;
                    }
                }
                Some(sum)
            };
            return Forecast {
                mean: average(&|f| Some(&f.mean)).unwrap_or_default(),
                lower: average(&|f| f.lower.as_ref()),
                upper: average(&|f| f.upper.as_ref()),
            };
        }
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
            Fitted::Combination { .. } => unreachable!("a combination is averaged above"),
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
                ma,
                errors,
                ..
            } => {
                let mut history = tail.clone();
                // The errors to come are expected to be none.
                let mut shocks = errors.clone();
                let mut mean = Vec::with_capacity(periods);
                for _ in 0..periods {
                    let at = history.len();
                    let from_values: f64 = levels
                        .iter()
                        .enumerate()
                        .map(|(j, a)| a * history[at - 1 - j])
                        .sum();
                    let seen = shocks.len();
                    let from_errors: f64 = ma
                        .iter()
                        .enumerate()
                        .take(seen)
                        .map(|(k, b)| b * shocks[seen - 1 - k])
                        .sum();
                    let next = intercept + from_values + from_errors;
                    history.push(next);
                    shocks.push(0.0);
                    mean.push(next);
                }
                let mut psi = vec![1.0];
                for j in 1..periods {
                    let from_ma = ma.get(j - 1).copied().unwrap_or(0.0);
                    let v = from_ma
                        + (1..=j.min(levels.len()))
                            .map(|i| levels[i - 1] * psi[j - i])
                            .sum::<f64>();
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

/// The centred moving average of one season around `t` (a 2×m average for an even season), the
/// trend of a classical decomposition; `t` is at least half a season from either end.
pub(crate) fn centred_mean(ys: &[f64], t: usize, m: usize) -> f64 {
    let half = m / 2;
    if m.is_multiple_of(2) {
        (ys[t - half] / 2.0 + ys[t + half] / 2.0 + ys[t - half + 1..t + half].iter().sum::<f64>())
            / m as f64
    } else {
        ys[t - half..=t + half].iter().sum::<f64>() / m as f64
    }
}

/// Classical multiplicative decomposition's seasonal indices, by position in the season,
/// averaging to 1.
fn decompose(ys: &[f64], m: usize) -> Vec<f64> {
    let n = ys.len();
    let half = m / 2;
    let mut sums = vec![0.0; m];
    let mut counts = vec![0usize; m];
    for t in half..n - half {
        sums[t % m] += ys[t] / centred_mean(ys, t, m);
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

pub(crate) fn mean(ys: &[f64]) -> f64 {
    ys.iter().sum::<f64>() / ys.len() as f64
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
        let Fitted::Arima { d, intercept, .. } = crate::arima::arima(&ys, None).unwrap() else {
            panic!("an ARIMA");
        };
        assert_eq!(d, 1);
        assert!((intercept - 2.0).abs() < 1e-9, "{intercept}");
        let forecast = crate::arima::arima(&ys, None).unwrap().forecast(3);
        for (h, f) in forecast.mean.iter().enumerate() {
            assert!((f - (110.0 + 2.0 * h as f64)).abs() < 1e-6, "{forecast:?}");
        }
    }

    #[test]
    fn multiplying_polynomials_expands_differences() {
        assert_eq!(
            crate::arima::multiply(&[1.0, -1.0], &[1.0, -1.0]),
            vec![1.0, -2.0, 1.0]
        );
    }
}
