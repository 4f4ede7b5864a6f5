//! Finding a series' season when the definition gives none: the autocorrelation of its first
//! differences (a trend would otherwise hide the season) at each lag up to half the series,
//! and the lag of the highest local peak, when that peak stands clear of noise. Where the
//! calendar gives the seasons a series may have (its step's, see `calendar_seasons`), only
//! those lags are looked at.

/// Lags searched, at most: the definition's own season limit.
pub const SEASON_SEARCH_MAX: usize = 1000;
/// The autocorrelation a season's peak must reach, at least, besides standing out of noise
/// (two standard errors, `2/√n`).
const PEAK_MIN: f64 = 0.3;

/// The season of `ys`, if it shows one: one of `allowed` where that is given.
pub(crate) fn find(ys: &[f64], allowed: Option<&[usize]>) -> Option<usize> {
    if allowed.is_some_and(<[usize]>::is_empty) {
        return None;
    }
    if ys.len() < 2 * crate::SEASON_MIN + 1 {
        return None;
    }
    let diffs: Vec<f64> = ys.windows(2).map(|w| w[1] - w[0]).collect();
    let n = diffs.len();
    let mean = diffs.iter().sum::<f64>() / n as f64;
    let centred: Vec<f64> = diffs.iter().map(|d| d - mean).collect();
    let variance: f64 = centred.iter().map(|d| d * d).sum();
    if variance <= f64::EPSILON {
        return None;
    }
    let max_lag = (ys.len() / 2).min(SEASON_SEARCH_MAX).min(n - 1);
    let acf = |lag: usize| -> f64 {
        centred[lag..]
            .iter()
            .zip(&centred[..n - lag])
            .map(|(a, b)| a * b)
            .sum::<f64>()
            / variance
    };
    let values: Vec<f64> = (0..=max_lag + 1)
        .map(|lag| if lag < n { acf(lag) } else { 0.0 })
        .collect();
    let threshold = PEAK_MIN.max(2.0 / (n as f64).sqrt());
    let mut best: Option<(usize, f64)> = None;
    for lag in crate::SEASON_MIN..=max_lag {
        if allowed.is_some_and(|allowed| !allowed.contains(&lag)) {
            continue;
        }
        let v = values[lag];
        let peak = v > values[lag - 1] && v >= values[lag + 1];
        if peak && v > threshold && best.is_none_or(|(_, b)| v > b + 1e-9) {
            best = Some((lag, v));
        }
    }
    best.map(|(lag, _)| lag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_pattern_on_a_trend_shows_its_season() {
        let pattern = [3.0, 7.0, 1.0, 9.0, 4.0, 6.0, 2.0];
        let ys: Vec<f64> = (0..140).map(|t| pattern[t % 7] + 0.5 * t as f64).collect();
        assert_eq!(find(&ys, None), Some(7));
    }

    #[test]
    fn a_straight_line_and_a_constant_show_none() {
        let line: Vec<f64> = (0..100).map(|t| 2.0 * t as f64).collect();
        assert_eq!(find(&line, None), None);
        assert_eq!(find(&[4.0; 50], None), None);
    }
}
