//! A Nelder-Mead search over bounded parameters: each parameter is searched on the real line
//! and mapped into its bounds by a logistic, so the simplex never leaves them. Deterministic:
//! the same start and objective give the same point.

/// Objective evaluations a search makes, at most.
const EVALUATIONS_MAX: usize = 600;
/// The search stops when the simplex's values differ by less than this, relatively.
const TOLERANCE: f64 = 1e-10;

/// Bounds of one parameter.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bound {
    pub lo: f64,
    pub hi: f64,
}

impl Bound {
    fn to_bounded(self, x: f64) -> f64 {
        self.lo + (self.hi - self.lo) / (1.0 + (-x).exp())
    }

    fn to_free(self, p: f64) -> f64 {
        let u = ((p - self.lo) / (self.hi - self.lo)).clamp(1e-6, 1.0 - 1e-6);
        (u / (1.0 - u)).ln()
    }
}

/// The parameters within `bounds`, starting from `start`, that minimise `objective`.
pub(crate) fn minimise(
    bounds: &[Bound],
    start: &[f64],
    objective: impl Fn(&[f64]) -> f64,
) -> Vec<f64> {
    minimise_within(bounds, start, TOLERANCE, objective)
}

/// As [`minimise`], stopping when the simplex's values differ by less than `tolerance`,
/// relatively.
pub(crate) fn minimise_within(
    bounds: &[Bound],
    start: &[f64],
    tolerance: f64,
    objective: impl Fn(&[f64]) -> f64,
) -> Vec<f64> {
    let n = bounds.len();
    let to_params = |x: &[f64]| -> Vec<f64> {
        x.iter()
            .zip(bounds)
            .map(|(x, b)| b.to_bounded(*x))
            .collect()
    };
    let value = |x: &[f64]| {
        let v = objective(&to_params(x));
        if v.is_finite() { v } else { f64::MAX }
    };
    let origin: Vec<f64> = start
        .iter()
        .zip(bounds)
        .map(|(p, b)| b.to_free(*p))
        .collect();
    let mut simplex: Vec<(Vec<f64>, f64)> = Vec::with_capacity(n + 1);
    simplex.push((origin.clone(), value(&origin)));
    for i in 0..n {
        let mut x = origin.clone();
        x[i] += 1.0;
        let v = value(&x);
        simplex.push((x, v));
    }
    let mut evaluations = n + 1;
    while evaluations < EVALUATIONS_MAX {
        simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
        let (best, worst) = (simplex[0].1, simplex[n].1);
        if (worst - best).abs() <= tolerance * (best.abs() + tolerance) {
            break;
        }
        let centroid: Vec<f64> = (0..n)
            .map(|j| simplex[..n].iter().map(|(x, _)| x[j]).sum::<f64>() / n as f64)
            .collect();
        let towards = |t: f64| -> Vec<f64> {
            centroid
                .iter()
                .zip(&simplex[n].0)
                .map(|(c, w)| c + t * (w - c))
                .collect()
        };
        let reflected = towards(-1.0);
        let r = value(&reflected);
        evaluations += 1;
        if r < simplex[0].1 {
            let expanded = towards(-2.0);
            let e = value(&expanded);
            evaluations += 1;
            simplex[n] = if e < r { (expanded, e) } else { (reflected, r) };
        } else if r < simplex[n - 1].1 {
            simplex[n] = (reflected, r);
        } else {
            let contracted = if r < simplex[n].1 {
                towards(-0.5)
            } else {
                towards(0.5)
            };
            let c = value(&contracted);
            evaluations += 1;
            if c < simplex[n].1.min(r) {
                simplex[n] = (contracted, c);
            } else {
                let best = simplex[0].0.clone();
                for vertex in simplex.iter_mut().skip(1) {
                    let x: Vec<f64> = best
                        .iter()
                        .zip(&vertex.0)
                        .map(|(b, x)| b + 0.5 * (x - b))
                        .collect();
                    let v = value(&x);
                    *vertex = (x, v);
                }
                evaluations += n;
            }
        }
    }
    simplex.sort_by(|a, b| a.1.total_cmp(&b.1));
    to_params(&simplex[0].0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_quadratic_is_minimised_within_its_bounds() {
        let bounds = [Bound { lo: 0.0, hi: 1.0 }, Bound { lo: -5.0, hi: 5.0 }];
        let found = minimise(&bounds, &[0.5, 0.0], |p| {
            (p[0] - 0.3).powi(2) + (p[1] - 2.0).powi(2)
        });
        assert!((found[0] - 0.3).abs() < 1e-3, "{found:?}");
        assert!((found[1] - 2.0).abs() < 1e-3, "{found:?}");
        // A minimum outside the bounds is met at the bound.
        let found = minimise(&bounds[..1], &[0.5], |p| (p[0] - 3.0).powi(2));
        assert!(found[0] > 0.99 && found[0] <= 1.0, "{found:?}");
    }
}
