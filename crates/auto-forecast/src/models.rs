//! The candidate models: how each is fitted, what it keeps, and how it forecasts.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::{Forecast, Z95};

/// The candidates, in the order a build tries and reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Naive,
    Drift,
    Ets,
    Theta,
    Arima,
    Combination,
}

impl Kind {
    /// The members of a combination: the three models that choose themselves within their
    /// family. Each errs its own way, and their mean errs less than most of them (the M4
    /// competition's finding; statsforecast's and Hyndman's benchmarks combine the same three).
    pub(crate) const MEMBERS: [Kind; 3] = [Kind::Ets, Kind::Theta, Kind::Arima];

    pub(crate) const ALL: [Kind; 6] = [
        Kind::Naive,
        Kind::Drift,
        Kind::Ets,
        Kind::Theta,
        Kind::Arima,
        Kind::Combination,
    ];

    pub(crate) fn name(self, season: Option<usize>) -> &'static str {
        match self {
            Kind::Naive if season.is_some() => "seasonal_naive",
            Kind::Naive => "naive",
            Kind::Drift => "drift",
            Kind::Ets => "ets",
            Kind::Theta => "theta",
            Kind::Arima => "arima",
            Kind::Combination => "combination",
        }
    }
}

/// An exponential smoothing model's parameters and its states at the series' end (the
/// additive error state-space form, ETS(A,N,N), ETS(A,Ad,N) or ETS(A,Ad,A)), as builds before
/// [`Fitted::Ets`] kept them: they still forecast.
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
    /// Simple exponential smoothing, Holt's damped trend and additive Holt-Winters, as builds
    /// before [`Fitted::Ets`] kept them (no build makes them now; they still forecast).
    Ses(Smoothing),
    HoltDamped(Smoothing),
    HoltWinters(Smoothing),
    /// The Theta method: SES with half the linear trend's slope as drift, reseasonalised, as
    /// builds before [`Fitted::AutoTheta`] kept it (no build makes it now; it still forecasts).
    Theta {
        alpha: f64,
        level: f64,
        slope: f64,
        points: usize,
        /// The seasonal indices of the next season, in time order (empty without one).
        indices: Vec<f64>,
        sigma: f64,
    },
    /// An ETS model chosen within its family by AICc ([`crate::ets`]).
    Ets(crate::ets::Ets),
    /// A Theta model chosen within its family by its one-step errors ([`crate::theta`]).
    AutoTheta(crate::theta::Theta),
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
        Kind::Ets => Ok(Fitted::Ets(crate::ets::ets(ys, season)?)),
        Kind::Theta => Ok(Fitted::AutoTheta(crate::theta::theta(ys, season)?)),
        Kind::Arima => crate::arima::arima(ys, season),
        Kind::Combination => {
            let members = Kind::MEMBERS
                .iter()
                .map(|kind| fit(*kind, ys, season))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Fitted::Combination { members })
        }
    }
}

/// Fits `kind` on `ys` again, as `picked` (its fit without the held-out points) was chosen:
/// the models that choose themselves within their family keep the form, orders or model they
/// chose, their parameters searched anew; a combination refits each member so.
pub(crate) fn refit(
    kind: Kind,
    picked: &Fitted,
    ys: &[f64],
    season: Option<usize>,
) -> Result<Fitted, String> {
    match picked {
        Fitted::Ets(same) => Ok(Fitted::Ets(crate::ets::refit(ys, same, season)?)),
        Fitted::AutoTheta(same) => Ok(Fitted::AutoTheta(crate::theta::refit(ys, same, season)?)),
        Fitted::Arima { .. } => crate::arima::refit(ys, picked, season),
        Fitted::Combination { members } if members.len() == Kind::MEMBERS.len() => {
            let members = Kind::MEMBERS
                .iter()
                .zip(members)
                .map(|(kind, member)| refit(*kind, member, ys, season))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Fitted::Combination { members })
        }
        _ => fit(kind, ys, season),
    }
}

impl Fitted {
    /// Its parameters, for a build's report.
    pub fn parameters(&self) -> Value {
        match self {
            Fitted::SeasonalNaive { season, .. } => json!({ "season": season }),
            Fitted::Drift { slope, .. } => json!({ "slope": slope }),
            Fitted::Ses(s) => json!({ "alpha": s.alpha }),
            Fitted::Ets(e) => e.parameters(),
            Fitted::AutoTheta(t) => t.parameters(),
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
        match self {
            Fitted::Combination { members } => return combined(members, periods),
            Fitted::Ets(e) => return e.forecast(periods),
            Fitted::AutoTheta(t) => return t.forecast(periods),
            _ => {}
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
            Fitted::Combination { .. } | Fitted::Ets(_) | Fitted::AutoTheta(_) => {
                unreachable!("forecast above")
            }
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
        Forecast::around(mean, &spread)
    }
}

/// The mean of the members' forecasts and of their intervals' bounds.
fn combined(members: &[Fitted], periods: usize) -> Forecast {
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
    Forecast {
        mean: average(&|f| Some(&f.mean)).unwrap_or_default(),
        lower: average(&|f| f.lower.as_ref()),
        upper: average(&|f| f.upper.as_ref()),
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

/// Whether `ys`'s autocorrelation at lag `m` stands out at 90%.
pub(crate) fn seasonal(ys: &[f64], m: usize) -> bool {
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

/// A classical decomposition's seasonal indices, by position in the season: multiplicative
/// ones averaging to 1, or additive ones summing to 0.
pub(crate) fn decompose(ys: &[f64], m: usize, multiplicative: bool) -> Vec<f64> {
    let n = ys.len();
    let half = m / 2;
    let mut sums = vec![0.0; m];
    let mut counts = vec![0usize; m];
    for t in half..n - half {
        let trend = centred_mean(ys, t, m);
        sums[t % m] += if multiplicative {
            ys[t] / trend
        } else {
            ys[t] - trend
        };
        counts[t % m] += 1;
    }
    let neutral = if multiplicative { 1.0 } else { 0.0 };
    let raw: Vec<f64> = sums
        .iter()
        .zip(&counts)
        .map(|(s, c)| if *c > 0 { s / *c as f64 } else { neutral })
        .collect();
    let average = mean(&raw);
    if multiplicative {
        raw.iter().map(|r| r / average).collect()
    } else {
        raw.iter().map(|r| r - average).collect()
    }
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
