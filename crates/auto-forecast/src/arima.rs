//! The ARIMA candidate: a seasonal ARIMA(p,d,q)(P,D,Q)_m chosen as Hyndman & Khandakar's
//! `auto.arima` chooses one (*Automatic Time Series Forecasting*, JSS 2008): the seasonal
//! difference when the season is strong, then plain differences while the KPSS test finds a
//! unit root, then a stepwise search over the orders by AICc, each model fitted by conditional
//! sum of squares with the Nelder-Mead search of [`crate::optimize`]. Models that are not
//! stationary or not invertible are passed over. Below two differences the constant (the mean,
//! or the drift once differenced) is one more choice of the search, as `auto.arima`'s
//! `allowmean` and `allowdrift` make it: each model with it and without, the lower AICc kept.
//!
//! The fitted model is kept in its expanded form, `y_t = c + Σ levels_j y_{t-j} + e_t +
//! Σ ma_k e_{t-k}`, with the last values and errors it forecasts from.

use crate::models::{Fitted, centred_mean, mean};
use crate::optimize::{Bound, minimise};

/// Points an ARIMA is fitted on, at most: the latest. Its orders reach a few seasons back;
/// older points no longer move its coefficients, and each of the search's fits reads them all.
pub(crate) const ARIMA_POINTS_MAX: usize = 1_000;
/// Orders the search reaches, at most: plain AR and MA, seasonal AR and MA.
const P_MAX: usize = 5;
const Q_MAX: usize = 5;
const SEASONAL_P_MAX: usize = 2;
const SEASONAL_Q_MAX: usize = 2;
/// Models the stepwise search fits, at most (`auto.arima`'s default is 94).
const MODELS_MAX: usize = 60;
/// The KPSS statistic past which a series holds a unit root (5%, level stationarity).
const KPSS_CRITICAL: f64 = 0.463;
/// The seasonal strength past which the season is differenced (Wang, Smith & Hyndman).
const SEASONAL_STRENGTH_MIN: f64 = 0.64;
/// Bounds of the coefficients searched: AR wide enough for a cycle (sunspots' AR(2) has a
/// first coefficient near 1.4), MA and seasonal terms within the unit interval.
const AR: Bound = Bound { lo: -2.0, hi: 2.0 };
const MA: Bound = Bound {
    lo: -0.999,
    hi: 0.999,
};

/// An order: (p, q, P, Q).
type Order = (usize, usize, usize, usize);

/// Fits the ARIMA candidate on `ys`.
pub(crate) fn arima(ys: &[f64], season: Option<usize>) -> Result<Fitted, String> {
    if ys.len() < 8 {
        return Err("it needs at least 8 points".into());
    }
    let ys = &ys[ys.len().saturating_sub(ARIMA_POINTS_MAX)..];
    let m = season.filter(|m| ys.len() >= 3 * m).unwrap_or(0);
    let mut w = ys.to_vec();
    let mut seasonal_d = 0;
    if m > 0 && seasonal_strength(ys, m) > SEASONAL_STRENGTH_MIN {
        w = seasonal_difference(&w, m);
        seasonal_d = 1;
    }
    let mut d = 0;
    while d + seasonal_d < 2 && w.len() > 8 && kpss(&w) > KPSS_CRITICAL {
        w = difference(&w);
        d += 1;
    }
    let constant_allowed = constant_allowed(d + seasonal_d);
    let (centred, mean) = centre(&w, constant_allowed);
    let seasonal = m > 0;
    // The orders reach no further than a third of the points, and within a season no further
    // than the season's length less one, as `auto.arima` bounds them.
    let third = ys.len() / 3;
    let within = |max: usize| if seasonal { max.min(m - 1) } else { max };
    let (p_max, q_max) = (within(P_MAX).min(third), within(Q_MAX).min(third));
    let seasonal_p_max = SEASONAL_P_MAX.min(third / m.max(1));
    let seasonal_q_max = SEASONAL_Q_MAX.min(third / m.max(1));
    let fits = |order: Order, constant: bool| -> Option<Model> {
        let (p, q, sp, sq) = order;
        let needed = p + sp * m + q + sq * m + 4;
        if centred.len() <= needed {
            return None;
        }
        fit(if constant { &centred } else { &w }, order, m, constant)
    };
    let start: Vec<Order> = vec![
        (
            2.min(p_max),
            2.min(q_max),
            1.min(seasonal_p_max),
            1.min(seasonal_q_max),
        ),
        (0, 0, 0, 0),
        (1.min(p_max), 0, 1.min(seasonal_p_max), 0),
        (0, 1.min(q_max), 0, 1.min(seasonal_q_max)),
    ];
    let mut tried = std::collections::BTreeSet::new();
    let mut best: Option<Model> = None;
    let mut consider = |order: Order, constant: bool, best: &mut Option<Model>| -> bool {
        if !tried.insert((order, constant)) || tried.len() > MODELS_MAX {
            return false;
        }
        match fits(order, constant) {
            Some(model) if best.as_ref().is_none_or(|b| model.aicc < b.aicc - 1e-9) => {
                *best = Some(model);
                true
            }
            _ => false,
        }
    };
    for order in start {
        consider(order, constant_allowed, &mut best);
    }
    // Stepwise: from the best so far, each neighbour; again from any that is better.
    while let Some((current, constant)) = best.as_ref().map(|b| (b.order, b.constant)) {
        let (p, q, sp, sq) = current;
        // The neighbours in `auto.arima`'s order: the seasonal orders first, one or both by
        // one, then the plain ones; the first better one is taken.
        let step = |v: usize, delta: isize, max: usize| -> Option<usize> {
            let next = v.checked_add_signed(delta)?;
            (next <= max).then_some(next)
        };
        let moves = [
            (-1, 0),
            (0, -1),
            (1, 0),
            (0, 1),
            (-1, -1),
            (-1, 1),
            (1, -1),
            (1, 1),
        ];
        let mut neighbours = Vec::new();
        if seasonal {
            for (dp, dq) in moves {
                if let (Some(sp), Some(sq)) =
                    (step(sp, dp, seasonal_p_max), step(sq, dq, seasonal_q_max))
                {
                    neighbours.push((p, q, sp, sq));
                }
            }
        }
        for (dp, dq) in moves {
            if let (Some(p), Some(q)) = (step(p, dp, p_max), step(q, dq, q_max)) {
                neighbours.push((p, q, sp, sq));
            }
        }
        let mut moved = false;
        for order in neighbours {
            if consider(order, constant, &mut best) {
                moved = true;
                break;
            }
        }
        // Last, the same orders with the constant or without it.
        if !moved && constant_allowed {
            moved = consider(current, !constant, &mut best);
        }
        if !moved {
            break;
        }
    }
    let Some(model) = best else {
        return Err("no order could be fitted to it".into());
    };
    let constant = if model.constant { mean } else { 0.0 };
    Ok(expand(ys, &model, d, seasonal_d, m, constant))
}

/// Fits `same`'s orders and differences again on `ys` (its latest [`ARIMA_POINTS_MAX`]), its
/// coefficients searched anew: the refit of a model a holdout picked. Orders that no longer fit
/// (too few points, or coefficients neither stationary nor invertible) are chosen again.
pub(crate) fn refit(ys: &[f64], same: &Fitted, season: Option<usize>) -> Result<Fitted, String> {
    let Fitted::Arima {
        p,
        d,
        seasonal_d,
        season: m,
        q,
        seasonal_p,
        seasonal_q,
        intercept: same_intercept,
        ..
    } = *same
    else {
        return arima(ys, season);
    };
    let tail = &ys[ys.len().saturating_sub(ARIMA_POINTS_MAX)..];
    let mut w = tail.to_vec();
    if seasonal_d > 0 && m > 0 && w.len() > m {
        w = seasonal_difference(&w, m);
    }
    for _ in 0..d {
        w = difference(&w);
    }
    // A model kept with a constant has an intercept (its AR part is stationary, so the
    // intercept is the constant times a factor that is not zero).
    let constant = same_intercept != 0.0 && constant_allowed(d + seasonal_d);
    let (series, centre) = centre(&w, constant);
    let order = (p, q, seasonal_p, seasonal_q);
    let needed = p + seasonal_p * m + q + seasonal_q * m + 4;
    match (series.len() > needed)
        .then(|| fit(&series, order, m, constant))
        .flatten()
    {
        Some(model) => Ok(expand(tail, &model, d, seasonal_d, m, centre)),
        None => arima(ys, season),
    }
}

fn difference(w: &[f64]) -> Vec<f64> {
    w.windows(2).map(|x| x[1] - x[0]).collect()
}

fn seasonal_difference(w: &[f64], m: usize) -> Vec<f64> {
    (m..w.len()).map(|t| w[t] - w[t - m]).collect()
}

/// Whether a model of the series differenced `differences` times may have a constant (a mean,
/// or a drift once differenced): below two, as `auto.arima` allows one.
fn constant_allowed(differences: usize) -> bool {
    differences < 2
}

/// The differenced series a model is fitted on, and its constant: less its mean with a
/// `constant`, as it is without one.
fn centre(w: &[f64], constant: bool) -> (Vec<f64>, f64) {
    let centre = if constant { mean(w) } else { 0.0 };
    (w.iter().map(|v| v - centre).collect(), centre)
}

/// One fitted order: its coefficients, its errors and its AICc.
struct Model {
    order: Order,
    /// Whether it has a constant: the series it was fitted on is less its mean.
    constant: bool,
    /// φ_1..φ_p, then Φ_1..Φ_P, then θ_1..θ_q, then Θ_1..Θ_Q.
    coefficients: Vec<f64>,
    errors: Vec<f64>,
    sse: f64,
    count: usize,
    aicc: f64,
}

/// The AR and MA polynomials' coefficients after the leading 1, expanded: `a` as in
/// `1 - Σ a_k B^k`, `b` as in `1 + Σ b_k B^k`.
fn polynomials(coefficients: &[f64], order: Order, m: usize) -> (Vec<f64>, Vec<f64>) {
    let (p, q, sp, sq) = order;
    let (ar, rest) = coefficients.split_at(p);
    let (seasonal_ar, rest) = rest.split_at(sp);
    let (ma, seasonal_ma) = rest.split_at(q);
    let mut a_plain = vec![1.0];
    a_plain.extend(ar.iter().map(|c| -c));
    let mut a_season = vec![0.0; sp * m + 1];
    a_season[0] = 1.0;
    for (i, c) in seasonal_ar.iter().enumerate() {
        a_season[(i + 1) * m] = -c;
    }
    let a = multiply(&a_plain, &a_season);
    let mut b_plain = vec![1.0];
    b_plain.extend_from_slice(ma);
    let mut b_season = vec![0.0; sq * m + 1];
    b_season[0] = 1.0;
    for (i, c) in seasonal_ma.iter().enumerate() {
        b_season[(i + 1) * m] = *c;
    }
    let b = multiply(&b_plain, &b_season);
    (a[1..].iter().map(|c| -c).collect(), b[1..].to_vec())
}

/// The conditional errors of `w` under the expanded polynomials, from the first point every
/// AR term can see; the sum of their squares and their count.
fn errors_of(w: &[f64], a: &[f64], b: &[f64]) -> (Vec<f64>, f64, usize) {
    let start = a.len();
    let mut errors = vec![0.0; w.len()];
    let mut sse = 0.0;
    // A seasonal polynomial is mostly zeros: only its other terms are read, in the same order.
    let terms = |c: &[f64]| -> Vec<(usize, f64)> {
        c.iter()
            .enumerate()
            .filter(|(_, c)| **c != 0.0)
            .map(|(k, c)| (k + 1, *c))
            .collect()
    };
    let (a, b) = (terms(a), terms(b));
    for t in start..w.len() {
        let mut e = w[t];
        for (lag, c) in &a {
            e -= c * w[t - lag];
        }
        for (lag, c) in &b {
            if t >= *lag {
                e -= c * errors[t - lag];
            }
        }
        errors[t] = e;
        sse += e * e;
    }
    (errors, sse, w.len() - start)
}

/// Fits one order by conditional sum of squares, on `w` less its mean when it has a
/// `constant`; none when it is not stationary or not invertible, or the search leaves no
/// finite error.
fn fit(w: &[f64], order: Order, m: usize, constant: bool) -> Option<Model> {
    let (p, q, sp, sq) = order;
    let k = p + q + sp + sq;
    let mut bounds = vec![AR; p];
    bounds.extend(vec![MA; sp + q + sq]);
    let objective = |c: &[f64]| {
        let (a, b) = polynomials(c, order, m);
        let (_, sse, _) = errors_of(w, &a, &b);
        sse
    };
    let coefficients = if k == 0 {
        Vec::new()
    } else {
        minimise(&bounds, &vec![0.0; k], objective)
    };
    let (a, b) = polynomials(&coefficients, order, m);
    if !settles(&a) || !invertible(&b) {
        return None;
    }
    let (errors, sse, count) = errors_of(w, &a, &b);
    if !sse.is_finite() || count <= k + 2 {
        return None;
    }
    // The variance is that of the conditional errors, and the likelihood counts every point
    // of the differenced series, as R's `arima` counts them by conditional sum of squares:
    // models that condition on more points are then compared on the same points.
    let n = w.len() as f64;
    // A constant counts as a parameter besides the variance, as `auto.arima` counts them.
    let parameters = (k + 1 + usize::from(constant)) as f64;
    let aicc = n * (sse.max(1e-300) / count as f64).ln()
        + 2.0 * parameters
        + 2.0 * parameters * (parameters + 1.0) / (n - parameters - 1.0).max(1.0);
    Some(Model {
        order,
        constant,
        coefficients,
        errors,
        sse,
        count,
        aicc,
    })
}

/// Whether the impulse response of `1 / (1 - Σ a_k B^k)` dies away: the AR part is stationary.
fn settles(a: &[f64]) -> bool {
    if a.is_empty() {
        return true;
    }
    let steps = 20 * a.len() + 200;
    let mut psi = vec![1.0];
    for j in 1..steps {
        let v: f64 = (1..=j.min(a.len())).map(|i| a[i - 1] * psi[j - i]).sum();
        if !v.is_finite() || v.abs() > 1e6 {
            return false;
        }
        psi.push(v);
    }
    psi[steps - a.len().max(1)..].iter().all(|v| v.abs() < 1e-2)
}

/// Whether `1 + Σ b_k B^k` is invertible: the impulse response of its inverse dies away.
fn invertible(b: &[f64]) -> bool {
    let negated: Vec<f64> = b.iter().map(|c| -c).collect();
    settles(&negated)
}

/// The fitted model in its expanded form over `ys`: the differences and the AR polynomial
/// multiplied out, the constant carried through them.
fn expand(ys: &[f64], model: &Model, d: usize, seasonal_d: usize, m: usize, centre: f64) -> Fitted {
    let (p, q, sp, sq) = model.order;
    let (a, b) = polynomials(&model.coefficients, model.order, m);
    // (1 - Σ a_k B^k)(1 - B)^d (1 - B^m)^D, as 1 - Σ levels_j B^j.
    let mut polynomial = vec![1.0];
    polynomial.extend(a.iter().map(|c| -c));
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
    let intercept = centre * (1.0 - a.iter().sum::<f64>());
    let freedom = model.count.saturating_sub(p + q + sp + sq + 1).max(1);
    let errors = model.errors[model.errors.len() - b.len()..].to_vec();
    Fitted::Arima {
        p,
        d,
        seasonal_d,
        season: m,
        ar: model.coefficients[..p + sp].to_vec(),
        intercept,
        tail: ys[ys.len() - levels.len()..].to_vec(),
        levels,
        sigma: (model.sse / freedom as f64).sqrt(),
        q,
        seasonal_p: sp,
        seasonal_q: sq,
        ma: b,
        errors,
    }
}

/// The KPSS statistic of level stationarity, with the lag truncation `auto.arima`'s `ndiffs`
/// gives it, `3√n / 13`.
fn kpss(ys: &[f64]) -> f64 {
    let n = ys.len();
    let average = mean(ys);
    let e: Vec<f64> = ys.iter().map(|y| y - average).collect();
    let mut sum = 0.0;
    let eta = e
        .iter()
        .map(|v| {
            sum += v;
            sum * sum
        })
        .sum::<f64>()
        / (n * n) as f64;
    let lags = (3.0 * (n as f64).sqrt() / 13.0) as usize;
    let mut variance = e.iter().map(|v| v * v).sum::<f64>() / n as f64;
    for l in 1..=lags.min(n - 1) {
        let weight = 1.0 - l as f64 / (lags as f64 + 1.0);
        let cross: f64 = (l..n).map(|t| e[t] * e[t - l]).sum();
        variance += 2.0 * weight * cross / n as f64;
    }
    if variance <= 0.0 {
        return 0.0;
    }
    eta / variance
}

/// How much of the detrended series' variance the season holds: `1 - Var(R) / Var(S + R)`
/// by a classical additive decomposition.
fn seasonal_strength(ys: &[f64], m: usize) -> f64 {
    let n = ys.len();
    let half = m / 2;
    if n < 2 * m + 1 {
        return 0.0;
    }
    let mut detrended = Vec::with_capacity(n - 2 * half);
    for t in half..n - half {
        detrended.push((t, ys[t] - centred_mean(ys, t, m)));
    }
    let mut sums = vec![0.0; m];
    let mut counts = vec![0usize; m];
    for (t, v) in &detrended {
        sums[t % m] += v;
        counts[t % m] += 1;
    }
    let indices: Vec<f64> = sums
        .iter()
        .zip(&counts)
        .map(|(s, c)| if *c > 0 { s / *c as f64 } else { 0.0 })
        .collect();
    let level = mean(&indices);
    let both: Vec<f64> = detrended.iter().map(|(_, v)| *v).collect();
    let remainder: Vec<f64> = detrended
        .iter()
        .map(|(t, v)| v - (indices[t % m] - level))
        .collect();
    let variance = |xs: &[f64]| {
        let mu = mean(xs);
        xs.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / xs.len() as f64
    };
    let total = variance(&both);
    if total <= 0.0 {
        return 0.0;
    }
    (1.0 - variance(&remainder) / total).max(0.0)
}

pub(crate) fn multiply(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; a.len() + b.len() - 1];
    for (i, x) in a.iter().enumerate() {
        for (j, y) in b.iter().enumerate() {
            out[i + j] += x * y;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform noise in [-0.5, 0.5), the same from the same seed.
    fn noise_from(seed: u64) -> impl FnMut() -> f64 {
        crate::test_noise(seed, 1.0)
    }

    #[test]
    fn a_walk_is_differenced_and_a_noise_is_not() {
        let mut noise = noise_from(7);
        let white: Vec<f64> = (0..300).map(|_| noise()).collect();
        assert!(kpss(&white) < KPSS_CRITICAL, "{}", kpss(&white));
        let mut level = 0.0;
        let walk: Vec<f64> = white
            .iter()
            .map(|e| {
                level += e;
                level
            })
            .collect();
        assert!(kpss(&walk) > KPSS_CRITICAL, "{}", kpss(&walk));
    }

    #[test]
    fn an_ar2_cycle_is_found_and_its_coefficients_recovered() {
        let mut noise = noise_from(11);
        let mut ys = vec![0.0, 0.0];
        for t in 2..600 {
            let next = 1.3 * ys[t - 1] - 0.6 * ys[t - 2] + noise();
            ys.push(next);
        }
        let Fitted::Arima { d, ar, p, .. } = arima(&ys, None).unwrap() else {
            panic!("an ARIMA");
        };
        assert_eq!(d, 0);
        assert!(p >= 2, "{p}");
        assert!((ar[0] - 1.3).abs() < 0.2, "{ar:?}");
    }

    /// Once differenced, a walk that drifts keeps its drift as the constant, and one that does
    /// not is fitted without one; a refit keeps the choice.
    #[test]
    fn the_constant_is_kept_only_where_it_earns_its_place() {
        for (drift, kept) in [(0.0, false), (0.3, true)] {
            let mut noise = noise_from(5);
            let mut level = 100.0;
            let walk: Vec<f64> = (0..400)
                .map(|_| {
                    level += drift + noise();
                    level
                })
                .collect();
            let fitted = arima(&walk, None).unwrap();
            let Fitted::Arima { d, intercept, .. } = fitted else {
                panic!("an ARIMA");
            };
            assert_eq!(d, 1);
            assert_eq!(
                intercept != 0.0,
                kept,
                "drift {drift}: intercept {intercept}"
            );
            let Fitted::Arima { intercept, .. } = refit(&walk, &fitted, None).unwrap() else {
                panic!("an ARIMA");
            };
            assert_eq!(intercept != 0.0, kept, "refit, drift {drift}: {intercept}");
        }
    }

    #[test]
    fn a_strong_season_is_differenced() {
        let pattern = [3.0, 7.0, 1.0, 9.0, 4.0, 6.0];
        let ys: Vec<f64> = (0..120).map(|t| pattern[t % 6] + 0.01 * t as f64).collect();
        assert!(seasonal_strength(&ys, 6) > SEASONAL_STRENGTH_MIN);
        let line: Vec<f64> = (0..120).map(|t| t as f64).collect();
        assert!(seasonal_strength(&line, 6) < SEASONAL_STRENGTH_MIN);
    }
}
