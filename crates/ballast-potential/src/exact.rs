//! Exact O(n) evaluation of the potentials from the loads, for checking the incremental
//! tracker and for one-off measurements.
//!
//! The normalised loads come from [`LoadState::normalized`] (no cancellation against a huge
//! `W`); sums are compensated (Neumaier) and exponential sums use the log-sum-exp shift, so
//! the results are accurate to a few units in the last place of the sum of the terms.

use ballast_core::LoadState;

use crate::spec::PotentialSpec;
use crate::sum::Neumaier;
use crate::track::ln_add;

/// The normalised loads `y_i = x_i − W/n` of `state`.
pub fn normalized_loads<S: LoadState>(state: &S) -> Vec<f64> {
    (0..state.n()).map(|i| state.normalized(i)).collect()
}

/// Every potential of `specs`, computed exactly from `state` in O(n) each.
pub fn recompute<S: LoadState>(specs: &[PotentialSpec], state: &S) -> Vec<f64> {
    let ys = normalized_loads(state);
    specs.iter().map(|s| Exact::of(s, &ys).value).collect()
}

/// The natural logarithms of [`recompute`]'s values (finite where the values overflow).
pub fn recompute_ln<S: LoadState>(specs: &[PotentialSpec], state: &S) -> Vec<f64> {
    let ys = normalized_loads(state);
    specs.iter().map(|s| Exact::of(s, &ys).ln).collect()
}

/// A potential's value and its natural logarithm, computed from explicit normalised loads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exact {
    /// The value (`+∞` if it exceeds `f64`).
    pub value: f64,
    /// Its natural logarithm (`−∞` for zero).
    pub ln: f64,
}

impl Exact {
    /// Evaluates `spec` on the normalised loads `ys` (which should sum to zero).
    pub fn of(spec: &PotentialSpec, ys: &[f64]) -> Self {
        match *spec {
            PotentialSpec::Exponential { alpha } => exp_sum(alpha, ys),
            PotentialSpec::Hyperbolic { alpha } => {
                let (p, m) = (exp_sum(alpha, ys), exp_sum(-alpha, ys));
                Self { value: p.value + m.value, ln: ln_add(p.ln, m.ln) }
            }
            PotentialSpec::Quadratic => {
                let mut s = Neumaier::default();
                for &y in ys {
                    s.add(y * y);
                }
                Self::plain(s.value())
            }
            PotentialSpec::Absolute => {
                let mut s = Neumaier::default();
                for &y in ys {
                    s.add(y.abs());
                }
                Self::plain(s.value())
            }
        }
    }

    fn plain(value: f64) -> Self {
        Self { value, ln: value.ln() }
    }
}

/// `Σ e^{a y_i}` by log-sum-exp.
fn exp_sum(a: f64, ys: &[f64]) -> Exact {
    let m = ys.iter().map(|&y| a * y).fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY {
        return Exact { value: 0.0, ln: m };
    }
    let mut s = Neumaier::default();
    for &y in ys {
        s.add((a * y - m).exp());
    }
    let s = s.value();
    let value = if m < 700.0 { m.exp() * s } else { (m + s.ln()).exp() };
    Exact { value, ln: m + s.ln() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_values() {
        // loads [3, 1, 1, 0]: W = 5, y = [1.75, −0.25, −0.25, −1.25]
        let ys = [1.75, -0.25, -0.25, -1.25];
        let q = Exact::of(&PotentialSpec::Quadratic, &ys);
        assert_eq!(q.value, 4.75);
        assert_eq!(Exact::of(&PotentialSpec::Absolute, &ys).value, 3.5);
        let a = 0.5f64;
        let phi: f64 = ys.iter().map(|y| (a * y).exp()).sum();
        let gamma: f64 = ys.iter().map(|y| (a * y).exp() + (-a * y).exp()).sum();
        let e = Exact::of(&PotentialSpec::Exponential { alpha: a }, &ys);
        let h = Exact::of(&PotentialSpec::Hyperbolic { alpha: a }, &ys);
        assert!((e.value - phi).abs() < 1e-14 * phi);
        assert!((h.value - gamma).abs() < 1e-14 * gamma);
        assert!((h.ln - gamma.ln()).abs() < 1e-14);
    }

    #[test]
    fn logarithms_survive_overflow() {
        let ys = [5000.0, -5000.0];
        let e = Exact::of(&PotentialSpec::Exponential { alpha: 1.0 }, &ys);
        assert_eq!(e.value, f64::INFINITY);
        assert!((e.ln - 5000.0).abs() < 1e-12);
        let h = Exact::of(&PotentialSpec::Hyperbolic { alpha: 1.0 }, &ys);
        assert!((h.ln - (5000.0 + 2f64.ln())).abs() < 1e-12);
    }
}
