//! Finding a series' season when the definition gives none: the autocorrelation of its first
//! differences (a trend would otherwise hide the season) at each lag up to half the series,
//! and the lag of the highest local peak, when that peak stands clear of noise. Where the
//! calendar gives the seasons a series may have (its step's, see `calendar_seasons`), only
//! those lags are looked at, and the shortest the series shows is taken.

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
    let noise = 2.0 / (n as f64).sqrt();
    let threshold = PEAK_MIN.max(noise);
    match allowed {
        Some(allowed) => calendar_peak(&values, allowed, max_lag, threshold, noise),
        None => highest_peak(&values, max_lag, threshold),
    }
}

/// Of every lag, the one whose autocorrelation is the highest local peak above `threshold`.
fn highest_peak(values: &[f64], max_lag: usize, threshold: f64) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for lag in crate::SEASON_MIN..=max_lag {
        let v = values[lag];
        let peak = v > values[lag - 1] && v >= values[lag + 1];
        if peak && v > threshold && best.is_none_or(|(_, b)| v > b + 1e-9) {
            best = Some((lag, v));
        }
    }
    best.map(|(lag, _)| lag)
}

/// Of the calendar's seasons, the shortest the series shows, or a longer one whose
/// autocorrelation stands `noise` above it: a series that repeats every day repeats every week
/// as well, and a week of hours (168) fitted where a day (24) does is a model with seven times
/// the seasonal states to learn from a seventh of the cycles.
///
/// A season the calendar names is shown where its autocorrelation passes `threshold`, is no
/// lower than its neighbours' by more than `noise` (a smooth daily cycle of hours is as
/// correlated 23 and 25 hours apart as 24, and noise alone would otherwise decide), and stands
/// `noise` above the autocorrelation half a season apart, the trough of a cycle of that length:
/// a series that is merely persistent, its autocorrelation falling with the lag, shows none.
fn calendar_peak(
    values: &[f64],
    allowed: &[usize],
    max_lag: usize,
    threshold: f64,
    noise: f64,
) -> Option<usize> {
    let mut lags: Vec<usize> = allowed
        .iter()
        .copied()
        .filter(|lag| (crate::SEASON_MIN..=max_lag).contains(lag))
        .collect();
    lags.sort_unstable();
    let mut best: Option<(usize, f64)> = None;
    for lag in lags {
        let v = values[lag];
        let shown = v > threshold
            && v + noise >= values[lag - 1].max(values[lag + 1])
            && v > values[lag / 2] + noise;
        if shown && best.is_none_or(|(_, b)| v > b + noise) {
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

    /// Noise of about unit variance (uniform, 3.5 wide), the same from the same seed.
    fn noise_from(seed: u64) -> impl FnMut() -> f64 {
        crate::test_noise(seed, 3.5)
    }

    /// Sixty days of hours: a daily cycle, its amplitude on each day of the week, and noise.
    fn hours(seed: u64, amplitude_of_day: impl Fn(usize) -> f64) -> Vec<f64> {
        let mut noise = noise_from(seed);
        (0..24 * 60)
            .map(|t| {
                let cycle = (2.0 * std::f64::consts::PI * t as f64 / 24.0).sin();
                100.0 + amplitude_of_day(t / 24 % 7) * cycle + noise()
            })
            .collect()
    }

    const HOURLY: [usize; 2] = [24, 168];

    #[test]
    fn a_smooth_daily_cycle_of_hours_is_a_day_not_a_week() {
        // Its autocorrelation is as high 23 and 25 hours apart as 24, and a week apart as a day.
        for seed in 0..20 {
            assert_eq!(
                find(&hours(seed, |_| 10.0), Some(&HOURLY)),
                Some(24),
                "{seed}"
            );
        }
    }

    #[test]
    fn a_week_whose_weekend_differs_is_a_week() {
        let weekend_reversed = |day: usize| if day >= 5 { -10.0 } else { 10.0 };
        for seed in 0..20 {
            assert_eq!(
                find(&hours(seed, weekend_reversed), Some(&HOURLY)),
                Some(168)
            );
        }
    }

    #[test]
    fn a_persistent_series_shows_no_season_of_the_calendar() {
        // Daily changes that carry on from one day to the next: their autocorrelation is high a
        // week apart, and higher half a week apart.
        for seed in 0..20 {
            let mut noise = noise_from(seed);
            let (mut change, mut level) = (0.0, 100.0);
            let ys: Vec<f64> = (0..1000)
                .map(|_| {
                    change = 0.9 * change + noise();
                    level += change;
                    level
                })
                .collect();
            assert_eq!(find(&ys, Some(&[7, 365])), None, "{seed}");
        }
    }

    #[test]
    fn a_calendar_without_seasons_shows_none_and_one_with_its_season_shows_it() {
        let pattern = [3.0, 7.0, 1.0, 9.0, 4.0, 6.0, 2.0];
        let ys: Vec<f64> = (0..140).map(|t| pattern[t % 7] + 0.5 * t as f64).collect();
        assert_eq!(find(&ys, Some(&[])), None);
        assert_eq!(find(&ys, Some(&[7, 365])), Some(7));
    }

    #[test]
    fn a_straight_line_and_a_constant_show_none() {
        let line: Vec<f64> = (0..100).map(|t| 2.0 * t as f64).collect();
        assert_eq!(find(&line, None), None);
        assert_eq!(find(&[4.0; 50], None), None);
    }
}
