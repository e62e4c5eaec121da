//! The threshold sequence of adaptive probing ([`crate::czumaj::Adaptive`]): plain data,
//! declared beside the other specs so that a spec needs no engine module.

use crate::formula::Formula;
use crate::Error;

/// The variables of a threshold formula (`tau.formula`), in evaluation order: the probe
/// count `k` (1 after the first probe), the number of bins `n`, the run's balls `m`, the
/// balls placed before this one `t`, and the average load `avg` (`W/n` of the loads the
/// decision sees).
pub const TAU_VARS: &[&str] = &["k", "n", "m", "t", "avg"];

/// The threshold sequence of an adaptive process: after `k` probes the process stops when the
/// least loaded probed bin has load below `τ_k = base + per_probe·k + per_average·W/n`; for
/// `k >= until` the threshold is −∞ (only the cap stops). With a [`Tau::formula`] the
/// threshold is that formula of `k`, `n`, `m`, `t` and `avg` (`TAU_VARS`) instead, and the
/// affine terms are unused.
#[derive(Clone, Debug, PartialEq)]
pub struct Tau {
    /// Constant term (−∞ for Greedy).
    pub base: f64,
    /// Coefficient of the probe count `k`.
    pub per_probe: f64,
    /// Coefficient of the average load `W/n` (for the heavily loaded case).
    pub per_average: f64,
    /// Probe count from which the threshold is −∞ (`None`: never).
    pub until: Option<u32>,
    /// τ as a formula in `k`, `n`, `m`, `t` and `avg` (Czumaj–Stemann's general τ(k, n, m, t)); `None`: the
    /// affine form above.
    pub formula: Option<Formula>,
}

impl Tau {
    /// τ = −∞: never stop before the cap (Greedy\[d\] with cap d).
    pub const NEVER: Tau = Tau {
        base: f64::NEG_INFINITY,
        per_probe: 0.0,
        per_average: 0.0,
        until: None,
        formula: None,
    };

    /// τ_k = c for k < d (threshold-first: accept the first probe with load below c).
    pub fn constant_until(c: f64, d: u32) -> Tau {
        Tau { base: c, per_probe: 0.0, per_average: 0.0, until: Some(d), formula: None }
    }

    /// τ_k = `f(k, n, m, t, avg)` for a formula in those variables (`TAU_VARS`).
    pub fn formula(f: Formula) -> Tau {
        Tau { formula: Some(f), ..Tau::NEVER }
    }

    /// τ_k = k (probe-count rule: stop as soon as a probed bin has fewer balls than probes).
    pub const PROBE_COUNT: Tau =
        Tau { base: 0.0, per_probe: 1.0, per_average: 0.0, until: None, formula: None };

    /// τ_k for the average load `average` (unused unless `per_average != 0`).
    #[inline]
    pub(crate) fn at(&self, k: u32, average: f64) -> f64 {
        match self.until {
            Some(u) if k >= u => f64::NEG_INFINITY,
            _ => {
                let mut t = self.base + self.per_probe * f64::from(k);
                if self.per_average != 0.0 {
                    t += self.per_average * average;
                }
                t
            }
        }
    }

    /// Checks that the sequence is usable (finite coefficients; base may be −∞).
    pub fn validate(&self) -> Result<(), Error> {
        if self.base.is_nan() || self.base == f64::INFINITY {
            return Err(Error::invalid("tau.base", self.base, "a finite number or -inf"));
        }
        if !self.per_probe.is_finite() {
            return Err(Error::invalid("tau.per_probe", self.per_probe, "a finite number"));
        }
        if !self.per_average.is_finite() {
            return Err(Error::invalid("tau.per_average", self.per_average, "a finite number"));
        }
        Ok(())
    }
}

/// Refuses a threshold formula whose value is NaN at a probe of its domain, for a run of `m`
/// balls into `n` bins of mean weight `mean` and a probe cap `cap`: `k` = 1, 2 and `cap`;
/// `t` = 0, 1, ⌊(m − 1)/2⌋, m − 1, each with `avg` = 0 and with `t·mean/n`. (±∞ are
/// meaningful: −∞ stops at once, +∞ probes up to the cap.) The values are the rule's own
/// ([`Formula::eval`]); the error names the value and the probe.
pub fn check_tau_probes(f: &Formula, n: u64, m: u64, mean: f64, cap: u32) -> Result<(), Error> {
    let last = m.saturating_sub(1);
    let mut ts = vec![0, 1.min(last), last / 2, last];
    ts.dedup();
    let mut ks = vec![1, 2.min(cap), cap];
    ks.dedup();
    let (nf, mf) = (n as f64, m as f64);
    let mut stack = Vec::new();
    for &k in &ks {
        for &t in &ts {
            let tf = t as f64;
            for avg in [0.0, tf * mean / nf] {
                let v = f.eval(&[f64::from(k), nf, mf, tf, avg], &mut stack);
                if v.is_nan() {
                    return Err(Error::invalid(
                        "tau.formula",
                        format!(
                            "\"{}\" (NaN at k = {k}, t = {t}, n = {n}, avg = {avg})",
                            f.source()
                        ),
                        "a formula with a number as its value at every probe (checked at k = 1, \
                         2 and cap; t = 0, 1, (m - 1)/2 and m - 1; avg = 0 and t·mean/n)",
                    ));
                }
            }
        }
    }
    Ok(())
}

/// The largest cap that Greedy\[d\] takes to the d-Choice loop (d-Choice's own range).
const GREEDY_MAX_D: u32 = 1024;

/// `Some(d)` when `(tau, cap)` always probes exactly `d` bins, `2 <= d <` [`GREEDY_MAX_D`]:
/// τ_k = −∞ for every k >= 1 (the stop test `load >= τ_k` never fails; [`Tau::at`] is −∞
/// when `base` is −∞, whatever the finite coefficients, and from `until` on) and a finite
/// cap `d`.
pub(crate) fn greedy_d(tau: &Tau, cap: Option<u32>) -> Option<u32> {
    if tau.formula.is_some() {
        return None;
    }
    let never = tau.base == f64::NEG_INFINITY || tau.until.is_some_and(|u| u <= 1);
    cap.filter(|&d| never && (2..=GREEDY_MAX_D).contains(&d))
}
