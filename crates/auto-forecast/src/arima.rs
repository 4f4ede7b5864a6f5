//! The ARIMA candidate: a seasonal ARIMA(p,d,q)(P,D,Q)_m chosen as Hyndman & Khandakar's
//! `auto.arima` chooses one (*Automatic Time Series Forecasting*, JSS 2008), and as
//! statsforecast's AutoARIMA does by default: the seasonal difference when the season is
//! strong, then plain differences while the KPSS test finds a unit root, then a stepwise
//! search over the orders by AICc, each model fitted by exact maximum likelihood as R's `arima`
//! fits it ("CSS-ML"): the conditional sum of squares gives the starting values, then the
//! exact Gaussian likelihood of the differenced series, by a Kalman filter started from the
//! stationary state, is searched over the partial autocorrelations of each polynomial (so every
//! model tried is stationary and invertible), with the Nelder-Mead search of
//! [`crate::optimize`]. The AICc is the exact likelihood's, as `auto.arima` counts it; models
//! with a root within 1.01 of the unit circle are passed over, as `auto.arima` passes them.
//! For a season longer than 12 points the search fits each model by the conditional sum of
//! squares and the exact likelihood fits the best at the end, as `auto.arima` approximates by
//! default for such seasons: a model's state there is two seasons long, and the exact
//! likelihood of every model in the search would cost a build more than its second.
//! Below two differences the constant (the mean, or the drift once differenced) is one more
//! choice of the search, as `auto.arima`'s `allowmean` and `allowdrift` make it: each model
//! with it and without, the lower AICc kept; it is estimated with the coefficients, by
//! generalised least squares within the likelihood.
//!
//! The conditional likelihood this candidate was fitted by before weighs a model's first points
//! not at all and its last ones by their conditional errors alone: on yearly sunspots it chose
//! a (5,1,2) that forecast the next decade at 1.36 times AutoARIMA's error, where the exact one
//! chooses AutoARIMA's (2,1,3), its AICc the same within the 0.9 that statsforecast's diffuse
//! start of the differences adds.
//!
//! The fitted model is kept in its expanded form, `y_t = c + Σ levels_j y_{t-j} + e_t +
//! Σ ma_k e_{t-k}`, with the last values and innovations it forecasts from.

use crate::models::{Fitted, centred_mean, mean};
use crate::optimize::{Bound, minimise, minimise_within};

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
    let seasonal = m > 0;
    // A season longer than `auto.arima`'s approximation allows is searched by the conditional
    // likelihood, the best models then fitted by the exact one.
    let method = if m > EXACT_SEASON_MAX {
        Method::Conditional
    } else {
        Method::Exact
    };
    // The orders reach no further than a third of the points, and within a season no further
    // than the season's length less one, as `auto.arima` bounds them.
    let third = ys.len() / 3;
    let within = |max: usize| if seasonal { max.min(m - 1) } else { max };
    let (p_max, q_max) = (within(P_MAX).min(third), within(Q_MAX).min(third));
    // Without a season there are no seasonal orders.
    let seasons = if seasonal { third / m } else { 0 };
    let seasonal_p_max = SEASONAL_P_MAX.min(seasons);
    let seasonal_q_max = SEASONAL_Q_MAX.min(seasons);
    let fits = |order: Order, constant: bool| -> Option<Model> {
        let (p, q, sp, sq) = order;
        let needed = p + sp * m + q + sq * m + 4;
        if w.len() <= needed {
            return None;
        }
        fit(&w, order, m, constant, method)
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
    // And the differences alone without the constant, as `auto.arima` starts.
    if constant_allowed {
        consider((0, 0, 0, 0), false, &mut best);
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
    if method == Method::Conditional {
        // The best by the conditional likelihood refitted by the exact one, as `auto.arima`
        // refits its approximated search's best; kept as it is where the exact likelihood
        // takes it to the edge of invertibility (as it takes many a long season's MA).
        best = best
            .map(|model| fit(&w, model.order, m, model.constant, Method::Exact).unwrap_or(model));
    }
    let Some(model) = best else {
        return Err("no order could be fitted to it".into());
    };
    Ok(expand(ys, &model, d, seasonal_d, m))
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
    let order = (p, q, seasonal_p, seasonal_q);
    let needed = p + seasonal_p * m + q + seasonal_q * m + 4;
    // The exact likelihood's fit, or for a long season the conditional one where the exact one
    // goes to the edge of invertibility, as the search keeps them.
    let fitted = || {
        fit(&w, order, m, constant, Method::Exact).or_else(|| {
            (m > EXACT_SEASON_MAX)
                .then(|| fit(&w, order, m, constant, Method::Conditional))
                .flatten()
        })
    };
    match (w.len() > needed).then(fitted).flatten() {
        Some(model) => Ok(expand(tail, &model, d, seasonal_d, m)),
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

/// One fitted order: its coefficients, its errors and its AICc.
struct Model {
    order: Order,
    /// Whether it has a constant, the mean of the differenced series.
    constant: bool,
    /// φ_1..φ_p, then Φ_1..Φ_P, then θ_1..θ_q, then Θ_1..Θ_Q.
    coefficients: Vec<f64>,
    /// The differenced series' mean: none without a constant.
    mean: f64,
    /// The innovations, the one-step errors of the filter.
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

/// The lags and coefficients of a polynomial's terms that are not zero, in order: a seasonal
/// polynomial is mostly zeros, and only its other terms need reading.
fn terms(c: &[f64]) -> Vec<(usize, f64)> {
    c.iter()
        .enumerate()
        .filter(|(_, c)| **c != 0.0)
        .map(|(k, c)| (k + 1, *c))
        .collect()
}

/// The conditional errors of `w` under the expanded polynomials, from the first point every
/// AR term can see; the sum of their squares and their count.
fn errors_of(w: &[f64], a: &[f64], b: &[f64]) -> (Vec<f64>, f64, usize) {
    let start = a.len();
    let mut errors = vec![0.0; w.len()];
    let mut sse = 0.0;
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

/// Fits one order by exact maximum likelihood, as R's `arima` does by default ("CSS-ML"): the
/// conditional sum of squares first, for starting values, then the exact Gaussian likelihood
/// of the ARMA on `w` ([`exact`]), its mean (with a `constant`) estimated with it by
/// generalised least squares. The likelihood's search runs over the partial autocorrelations
/// of each AR and MA polynomial, as R's `arima` runs its AR ones, so that every model it tries
/// is stationary and invertible. None when the search leaves no finite likelihood, or a model
/// whose roots lie on the unit circle.
fn fit(w: &[f64], order: Order, m: usize, constant: bool, method: Method) -> Option<Model> {
    let (p, q, sp, sq) = order;
    let k = p + q + sp + sq;
    let n = w.len();
    let centre = if constant { mean(w) } else { 0.0 };
    let centred: Vec<f64> = w.iter().map(|v| v - centre).collect();
    let css = if k == 0 {
        Vec::new()
    } else {
        let mut bounds = vec![AR; p];
        bounds.extend(vec![MA; sp + q + sq]);
        minimise(&bounds, &vec![0.0; k], |c| {
            let (a, b) = polynomials(c, order, m);
            errors_of(&centred, &a, &b).1
        })
    };
    if method == Method::Conditional {
        return conditional(&centred, order, m, constant, css, centre);
    }
    let start = to_partials(&css, order);
    let objective = |x: &[f64]| {
        let (a, b) = polynomials(&from_partials(x, order), order, m);
        exact(w, &a, &b, constant, false).map_or(f64::INFINITY, |l| l.deviance(n))
    };
    let found = if k == 0 {
        Vec::new()
    } else {
        minimise_within(&vec![PARTIAL; k], &start, LIKELIHOOD_TOLERANCE, objective)
    };
    let coefficients = from_partials(&found, order);
    let (a, b) = polynomials(&coefficients, order, m);
    if !roots_outside(&a, ROOT_MIN) || !roots_outside(&negated(&b), ROOT_MIN) {
        return None;
    }
    let likelihood = exact(w, &a, &b, constant, true)?;
    let deviance = likelihood.deviance(n);
    if !deviance.is_finite() || n <= k + 2 {
        return None;
    }
    // -2 log-likelihood, and the parameters as `auto.arima` counts them: the coefficients, the
    // constant and the variance; the AICc over the points of the differenced series.
    let n = n as f64;
    let parameters = (k + 1 + usize::from(constant)) as f64;
    let aicc =
        deviance + n * (1.0 + (2.0 * std::f64::consts::PI).ln()) + aicc_penalty(parameters, n);
    Some(Model {
        order,
        constant,
        coefficients,
        mean: likelihood.mean,
        errors: likelihood.innovations,
        sse: likelihood.squares,
        count: w.len(),
        aicc,
    })
}

/// What the AICc adds to -2 log-likelihood for `parameters` fitted on `n` points.
fn aicc_penalty(parameters: f64, n: f64) -> f64 {
    2.0 * parameters + 2.0 * parameters * (parameters + 1.0) / (n - parameters - 1.0).max(1.0)
}

/// The innovations' standard deviation a fitted model keeps: 0 where the exact likelihood left
/// no finite sum of squares (a series the model fits exactly), since a build is kept as JSON,
/// which has no NaN, and must read back whole.
fn kept_sigma(sse: f64, freedom: usize) -> f64 {
    let sigma = (sse / freedom as f64).sqrt();
    if sigma.is_finite() { sigma } else { 0.0 }
}

/// The likelihood's search stops when its simplex's -2 log-likelihoods differ by less than
/// this, relatively: R's `optim` default (the square root of the machine's epsilon), which its
/// `arima` searches to. Finer differences move no AICc comparison of the stepwise search.
const LIKELIHOOD_TOLERANCE: f64 = 1.5e-8;
/// How a model is fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    /// By the exact likelihood, from the conditional fit.
    Exact,
    /// By the conditional sum of squares alone.
    Conditional,
}

/// The longest season whose search fits each model by the exact likelihood: past it the
/// search fits them by the conditional sum of squares and the exact likelihood fits the best
/// at the end, as `auto.arima` approximates by default for seasons longer than 12 points (the
/// state of a model of a longer season is longer than its points make it worth, and a build of
/// 52-point seasons fitted exactly throughout took a second).
const EXACT_SEASON_MAX: usize = 12;

/// The model of `order` fitted by conditional sum of squares (its `coefficients`), on the
/// series less its mean with a `constant`: its AICc over the points of the differenced series
/// by its conditional errors' variance, as `auto.arima` scores its approximated search.
fn conditional(
    centred: &[f64],
    order: Order,
    m: usize,
    constant: bool,
    coefficients: Vec<f64>,
    centre: f64,
) -> Option<Model> {
    let (p, q, sp, sq) = order;
    let k = p + q + sp + sq;
    let (a, b) = polynomials(&coefficients, order, m);
    if !roots_outside(&a, ROOT_MIN) || !roots_outside(&negated(&b), ROOT_MIN) {
        return None;
    }
    let (errors, sse, count) = errors_of(centred, &a, &b);
    if !sse.is_finite() || count <= k + 2 {
        return None;
    }
    let n = centred.len() as f64;
    let parameters = (k + 1 + usize::from(constant)) as f64;
    let aicc = n * (sse.max(1e-300) / count as f64).ln() + aicc_penalty(parameters, n);
    Some(Model {
        order,
        constant,
        coefficients,
        mean: centre,
        errors,
        sse,
        count,
        aicc,
    })
}

/// Bounds of the partial autocorrelations the likelihood's search runs over.
const PARTIAL: Bound = Bound { lo: -1.0, hi: 1.0 };
/// A starting partial autocorrelation is kept this far inside the unit interval, where the
/// search can still move it.
const PARTIAL_START_MAX: f64 = 0.98;

/// The coefficients `φ, Φ, θ, Θ` of the partial autocorrelations of each polynomial (Durbin
/// and Levinson's recursion; an MA polynomial `1 + Σ θ_k B^k` as the AR one `1 - Σ -θ_k B^k`).
fn from_partials(x: &[f64], order: Order) -> Vec<f64> {
    let (p, q, sp, sq) = order;
    let mut coefficients = Vec::with_capacity(x.len());
    let mut at = 0;
    for (size, sign) in [(p, 1.0), (sp, 1.0), (q, -1.0), (sq, -1.0)] {
        let ar = ar_of_partials(&x[at..at + size]);
        coefficients.extend(ar.iter().map(|c| sign * c));
        at += size;
    }
    coefficients
}

/// The partial autocorrelations of the coefficients `φ, Φ, θ, Θ`, the inverse of
/// [`from_partials`]; a polynomial that is not stationary (not invertible) starts from none.
fn to_partials(coefficients: &[f64], order: Order) -> Vec<f64> {
    let (p, q, sp, sq) = order;
    let mut x = Vec::with_capacity(coefficients.len());
    let mut at = 0;
    for (size, sign) in [(p, 1.0), (sp, 1.0), (q, -1.0), (sq, -1.0)] {
        let ar: Vec<f64> = coefficients[at..at + size]
            .iter()
            .map(|c| sign * c)
            .collect();
        match partials_of_ar(&ar) {
            Some(partials) => x.extend(
                partials
                    .iter()
                    .map(|k| k.clamp(-PARTIAL_START_MAX, PARTIAL_START_MAX)),
            ),
            None => x.extend(std::iter::repeat_n(0.0, size)),
        }
        at += size;
    }
    x
}

/// The AR coefficients `a` (as in `1 - Σ a_k B^k`) of partial autocorrelations.
fn ar_of_partials(partials: &[f64]) -> Vec<f64> {
    let mut a: Vec<f64> = Vec::with_capacity(partials.len());
    for (k, kappa) in partials.iter().enumerate() {
        let previous = a.clone();
        for j in 0..k {
            a[j] = previous[j] - kappa * previous[k - 1 - j];
        }
        a.push(*kappa);
    }
    a
}

/// The partial autocorrelations of the AR coefficients `a`, by the recursion run backwards;
/// none when one is not within the unit interval (the polynomial is not stationary).
fn partials_of_ar(a: &[f64]) -> Option<Vec<f64>> {
    let mut partials = vec![0.0; a.len()];
    let mut current = a.to_vec();
    for k in (1..=a.len()).rev() {
        let kappa = current[k - 1];
        if kappa.is_nan() || kappa.abs() >= 1.0 {
            return None;
        }
        partials[k - 1] = kappa;
        let scale = 1.0 - kappa * kappa;
        current = (0..k - 1)
            .map(|j| (current[j] + kappa * current[k - 2 - j]) / scale)
            .collect();
    }
    Some(partials)
}

/// The autocovariances at lags `0..=lags` of the AR process `x_t = Σ a_k x_{t-k} + e_t` with
/// errors of unit variance: its partial autocorrelations give the variance and the first `p`
/// lags (Durbin and Levinson's recursion), the AR recursion the others. None when it is not
/// stationary.
fn ar_autocovariances(a: &[f64], lags: usize) -> Option<Vec<f64>> {
    let p = a.len();
    let mut gamma = vec![0.0; lags.max(p) + 1];
    let partials = partials_of_ar(a)?;
    let mut variance = 1.0 / partials.iter().map(|k| 1.0 - k * k).product::<f64>();
    if !variance.is_finite() {
        return None;
    }
    gamma[0] = variance;
    let mut coefficients: Vec<f64> = Vec::with_capacity(p);
    for (k, kappa) in partials.iter().enumerate() {
        let lag = k + 1;
        gamma[lag] = kappa * variance
            + (1..lag)
                .map(|j| coefficients[j - 1] * gamma[lag - j])
                .sum::<f64>();
        let previous = coefficients.clone();
        for j in 0..k {
            coefficients[j] = previous[j] - kappa * previous[k - 1 - j];
        }
        coefficients.push(*kappa);
        variance *= 1.0 - kappa * kappa;
    }
    for lag in p + 1..gamma.len() {
        gamma[lag] = (1..=p).map(|j| a[j - 1] * gamma[lag - j]).sum();
    }
    gamma.truncate(lags + 1);
    Some(gamma)
}

/// What the exact likelihood of an ARMA gives, in units of its errors' variance: the sum of
/// the squared innovations over their variances, the sum of the variances' logarithms, the
/// mean, and the innovations when asked for.
struct Likelihood {
    squares: f64,
    logs: f64,
    mean: f64,
    innovations: Vec<f64>,
}

impl Likelihood {
    /// -2 log-likelihood, the variance concentrated out, less `n (1 + ln 2π)`.
    fn deviance(&self, n: usize) -> f64 {
        let n = n as f64;
        n * (self.squares.max(1e-300) / n).ln() + self.logs
    }
}

/// How small the change of the filter's covariance may grow before the filter is taken as
/// settled, its gain fixed from then on.
const SETTLED: f64 = 1e-13;
/// Points between two looks at whether the filter has settled.
const SETTLED_EVERY: usize = 8;

/// The exact Gaussian likelihood of `w` under the ARMA whose expanded polynomials are `a` (as
/// in `1 - Σ a_k B^k`) and `b` (as in `1 + Σ b_k B^k`): a Kalman filter on Harvey's state
/// space form, started from the stationary state (its covariance's first column from the
/// autocovariances, as Gardner, Harvey & Phillips start R's `arima`), its covariance carried
/// by the Chandrasekhar recursions (Morf, Sidhu & Kailath 1974): a time-invariant filter
/// started from its stationary covariance changes it by a matrix of rank one at each point,
/// so that a point costs a few passes over the state rather than a product of its covariance
/// matrices. Once the covariance has settled (the state is known from the points before), the
/// innovations are the model's own errors, and the recursion over its polynomials' terms that
/// are not zero gives them for a few of the state's elements each (a seasonal model's state is
/// a season or two long). With a `constant`, the mean is the generalised least squares one, the
/// filter run on a column of ones beside the series. None when the AR part is not stationary.
fn exact(w: &[f64], a: &[f64], b: &[f64], constant: bool, keep: bool) -> Option<Likelihood> {
    let (p, q) = (a.len(), b.len());
    let r = p.max(q + 1);
    let phi = |i: usize| if i < p { a[i] } else { 0.0 };
    let theta = |k: usize| match k {
        0 => 1.0,
        k if k <= q => b[k - 1],
        _ => 0.0,
    };
    // The autocovariances of the ARMA at lags 0..=r: those of its AR part filtered by its MA.
    let ar = ar_autocovariances(a, r + q)?;
    let ma: Vec<(usize, f64)> = (0..=q)
        .map(|k| (k, theta(k)))
        .filter(|(_, c)| *c != 0.0)
        .collect();
    let gamma: Vec<f64> = (0..=r)
        .map(|lag| {
            let mut sum = 0.0;
            for (i, ci) in &ma {
                for (j, cj) in &ma {
                    sum += ci * cj * ar[(lag + j).abs_diff(*i)];
                }
            }
            sum
        })
        .collect();
    // The MA(∞) weights, the covariances of the series with its past errors.
    let mut psi = vec![0.0; r];
    psi[0] = 1.0;
    for s in 1..r {
        psi[s] = theta(s) + (1..=s.min(p)).map(|i| a[i - 1] * psi[s - i]).sum::<f64>();
    }
    // The stationary state's covariance with its first element: the state's j-th element is
    // Σ_{k>j} φ_k w_{t+j-k} + Σ_{k>=j} θ_k e_{t+j-k} (from 0).
    let column: Vec<f64> = (0..r)
        .map(|j| {
            (j + 1..=r).map(|k| phi(k - 1) * gamma[k - j]).sum::<f64>()
                + (j..r).map(|k| theta(k) * psi[k - j]).sum::<f64>()
        })
        .collect();
    let phi: Vec<f64> = (0..r).map(phi).collect();
    let mut variance = column[0];
    // The vectors carry one zero past the state, what the last element moves up from.
    let mut gain: Vec<f64> = (0..=r)
        .map(|i| match i {
            i if i < r => phi[i] * column[0] + column.get(i + 1).copied().unwrap_or(0.0),
            _ => 0.0,
        })
        .collect();
    let mut change = gain.clone();
    let mut scale = -1.0 / variance;
    // The point from which the filter's covariance no longer changes, once it has settled.
    let mut settled: Option<usize> = None;
    let mut state = vec![0.0; r + 1];
    let mut ones = vec![0.0; r + 1];
    let (mut squares, mut cross, mut units, mut logs) = (0.0, 0.0, 0.0, 0.0);
    let n = w.len();
    let mut innovations = Vec::with_capacity(n);
    let mut unit_innovations = Vec::with_capacity(if constant { n } else { 0 });
    // The filter, until its covariance has settled and the errors of a whole state since: at
    // each point the state and the column of ones' state carried on (`T x + g v / F`), and
    // the gain and the covariance's change carried on by the Chandrasekhar recursions, in one
    // pass over the state.
    let mut t = 0;
    while t < n && settled.is_none_or(|at| t < at + r) {
        if variance.is_nan() || variance <= 0.0 || !variance.is_finite() {
            return None;
        }
        let v = w[t] - state[0];
        let v1 = 1.0 - ones[0];
        squares += v * v / variance;
        logs += variance.ln();
        innovations.push(v);
        if constant {
            cross += v * v1 / variance;
            units += v1 * v1 / variance;
            unit_innovations.push(v1);
        }
        let (k, k1) = (v / variance, v1 / variance);
        let (x0, o0) = (state[0], ones[0]);
        // Slices of known lengths, that their indexing needs no checks.
        let (state, ones, phi) = (&mut state[..=r], &mut ones[..=r], &phi[..r]);
        let (gain, change) = (&mut gain[..=r], &mut change[..=r]);
        if settled.is_none() {
            let u = change[0];
            let next = variance + scale * u * u;
            let (moved, kept) = (scale * u, u / next);
            for i in 0..r {
                let l = gain[i];
                state[i] = state[i + 1] + phi[i] * x0 + l * k;
                ones[i] = ones[i + 1] + phi[i] * o0 + l * k1;
                let g = change[i + 1] + phi[i] * u;
                let l = l + g * moved;
                gain[i] = l;
                change[i] = g - l * kept;
            }
            scale *= next / variance;
            variance = next;
            // Whether the covariance has settled, looked at every few points.
            if t % SETTLED_EVERY == 0
                && change.iter().map(|c| c * c).sum::<f64>() * scale.abs() < SETTLED * variance
            {
                settled = Some(t + 1);
            }
        } else {
            for i in 0..r {
                let l = gain[i];
                state[i] = state[i + 1] + phi[i] * x0 + l * k;
                ones[i] = ones[i + 1] + phi[i] * o0 + l * k1;
            }
        }
        t += 1;
    }
    // Then its innovations are the model's errors, `e_t = w_t - Σ a_k w_{t-k} - Σ b_k e_{t-k}`,
    // the recursion over the polynomials' terms that are not zero.
    if t < n {
        let (ar, ma) = (terms(a), terms(b));
        let log = variance.ln();
        for t in t..n {
            let mut v = w[t];
            for (lag, c) in &ar {
                v -= c * w[t - lag];
            }
            for (lag, c) in &ma {
                v -= c * innovations[t - lag];
            }
            squares += v * v / variance;
            logs += log;
            innovations.push(v);
            if constant {
                let mut v1 = 1.0;
                for (_, c) in &ar {
                    v1 -= c;
                }
                for (lag, c) in &ma {
                    v1 -= c * unit_innovations[t - lag];
                }
                cross += v * v1 / variance;
                units += v1 * v1 / variance;
                unit_innovations.push(v1);
            }
        }
    }
    let mean = if constant && units > 0.0 {
        cross / units
    } else {
        0.0
    };
    if constant {
        squares -= mean * cross;
    }
    if keep && constant {
        for (v, v1) in innovations.iter_mut().zip(&unit_innovations) {
            *v -= mean * v1;
        }
    }
    if !keep {
        innovations = Vec::new();
    }
    Some(Likelihood {
        squares,
        logs,
        mean,
        innovations,
    })
}

/// How far outside the unit circle the roots of a model's AR and MA polynomials must lie, at
/// least, as `auto.arima` requires: a root nearer is a model at the edge of stationarity or
/// invertibility, a difference or a season that its AR or MA part undoes.
const ROOT_MIN: f64 = 1.01;

/// Whether every root of `1 - Σ a_k B^k` lies farther than `radius` from zero: the polynomial
/// in `radius · B`, whose roots are those divided by `radius`, is stationary.
fn roots_outside(a: &[f64], radius: f64) -> bool {
    let mut power = 1.0;
    let scaled: Vec<f64> = a
        .iter()
        .map(|c| {
            power *= radius;
            c * power
        })
        .collect();
    partials_of_ar(&scaled).is_some()
}

/// `1 + Σ b_k B^k` as `1 - Σ a_k B^k`.
fn negated(b: &[f64]) -> Vec<f64> {
    b.iter().map(|c| -c).collect()
}

/// The fitted model in its expanded form over `ys`: the differences and the AR polynomial
/// multiplied out, the constant carried through them.
fn expand(ys: &[f64], model: &Model, d: usize, seasonal_d: usize, m: usize) -> Fitted {
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
    let intercept = model.mean * (1.0 - a.iter().sum::<f64>());
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
        sigma: kept_sigma(model.sse, freedom),
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

    /// -2 log-likelihood less its constant, from the series' covariance matrix itself: its
    /// autocovariances from long MA(∞) weights, a Cholesky factor, the mean by GLS.
    fn deviance_by_matrix(w: &[f64], a: &[f64], b: &[f64], constant: bool) -> (f64, f64) {
        let n = w.len();
        let mut psi = vec![1.0];
        for s in 1..20_000 {
            let ma = b.get(s - 1).copied().unwrap_or(0.0);
            let ar: f64 = (1..=s.min(a.len())).map(|i| a[i - 1] * psi[s - i]).sum();
            psi.push(ma + ar);
        }
        let gamma: Vec<f64> = (0..n)
            .map(|k| (0..psi.len() - k).map(|j| psi[j] * psi[j + k]).sum())
            .collect();
        let mut l = vec![vec![0.0; n]; n];
        for i in 0..n {
            for j in 0..=i {
                let s: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
                let g = gamma[i.abs_diff(j)];
                l[i][j] = if i == j {
                    (g - s).sqrt()
                } else {
                    (g - s) / l[j][j]
                };
            }
        }
        let solve = |x: &[f64]| -> Vec<f64> {
            let mut z = vec![0.0; n];
            for i in 0..n {
                z[i] = (x[i] - (0..i).map(|k| l[i][k] * z[k]).sum::<f64>()) / l[i][i];
            }
            z
        };
        let zw = solve(w);
        let z1 = solve(&vec![1.0; n]);
        let dot = |x: &[f64], y: &[f64]| x.iter().zip(y).map(|(a, b)| a * b).sum::<f64>();
        let mean = if constant {
            dot(&z1, &zw) / dot(&z1, &z1)
        } else {
            0.0
        };
        let z: Vec<f64> = zw.iter().zip(&z1).map(|(w, o)| w - mean * o).collect();
        let logdet: f64 = (0..n).map(|i| 2.0 * l[i][i].ln()).sum();
        (n as f64 * (dot(&z, &z) / n as f64).ln() + logdet, mean)
    }

    #[test]
    fn the_filter_gives_the_exact_likelihood() {
        let mut noise = noise_from(3);
        let w: Vec<f64> = (0..60)
            .map(|t| 2.0 + noise() + 0.3 * (t as f64 / 5.0).sin())
            .collect();
        let m = 4;
        for (order, coefficients) in [
            ((0, 0, 0, 0), vec![]),
            ((1, 0, 0, 0), vec![0.6]),
            ((0, 1, 0, 0), vec![-0.5]),
            ((2, 1, 0, 0), vec![1.2, -0.5, 0.4]),
            ((1, 2, 1, 1), vec![0.5, 0.3, -0.4, 0.2, -0.6]),
            ((0, 1, 0, 1), vec![-0.4, -0.8]),
        ] {
            let (a, b) = polynomials(&coefficients, order, m);
            for constant in [false, true] {
                let filtered = exact(&w, &a, &b, constant, false).unwrap();
                let (deviance, mean) = deviance_by_matrix(&w, &a, &b, constant);
                assert!(
                    (filtered.deviance(w.len()) - deviance).abs() < 1e-6,
                    "{order:?} {constant}: {} against {deviance}",
                    filtered.deviance(w.len())
                );
                assert!((filtered.mean - mean).abs() < 1e-9, "{order:?}");
            }
        }
    }

    #[test]
    fn partial_autocorrelations_give_stationary_coefficients_and_back() {
        let partials = [0.5, -0.7, 0.3];
        let a = ar_of_partials(&partials);
        let back = partials_of_ar(&a).unwrap();
        for (x, y) in partials.iter().zip(&back) {
            assert!((x - y).abs() < 1e-12, "{back:?}");
        }
        assert!(partials_of_ar(&[1.2, 0.3]).is_none());
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
    /// An AR(2) cycle is found undifferenced, and forecast as the cycle itself would be. (The
    /// model chosen is statsforecast's AutoARIMA's for the same points, an ARMA(3,1) whose
    /// likelihood is higher than the AR(2)'s, with the same AICc to the fourth decimal.)
    fn an_ar2_cycle_is_found_and_forecast_as_the_cycle() {
        let mut noise = noise_from(11);
        let mut ys = vec![0.0, 0.0];
        for t in 2..600 {
            let next = 1.3 * ys[t - 1] - 0.6 * ys[t - 2] + noise();
            ys.push(next);
        }
        let fitted = arima(&ys, None).unwrap();
        let Fitted::Arima { d, p, q, .. } = fitted else {
            panic!("an ARIMA");
        };
        assert_eq!((d, p, q), (0, 3, 1));
        let mut cycle = ys[ys.len() - 2..].to_vec();
        for (h, f) in fitted.forecast(6).mean.iter().enumerate() {
            let next = 1.3 * cycle[h + 1] - 0.6 * cycle[h];
            cycle.push(next);
            // Within a fifth of the noise's standard deviation (0.29).
            assert!((f - next).abs() < 0.06, "{h}: {f} against {next}");
        }
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
