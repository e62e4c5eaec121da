//! The `delay{tau, mode}` setting (`docs/settings.md#delay`): every sampled bin reports one
//! of its loads from the last τ steps instead of its current load.
//!
//! - `random`: the reported load is the bin's load at a uniformly random step of the window
//!   (`x_i(t − s)`, `s` uniform in `0..τ`, drawn afresh for every sample);
//! - `adversarial` (Two-Choice only): an adversary picks, within each sample's window, the
//!   reported loads that reverse Two-Choice's decision where possible: the currently lighter
//!   sample reports its current (largest) load, the heavier one its oldest (smallest) load of
//!   the window, and the ball goes to the one reporting less (ties uniformly at random).
//!
//! The `random` mode runs d-Choice and the `rule` process (a decision formula): the formula's
//! `x1` … `xd` are the reported loads; `avg` (t/n), `t` and `u` are current.
//!
//! Loads in the past are reconstructed exactly from the arrival history: every bin links its
//! arrivals within the window (most recent first), so `x_i(t − s)` costs O(1 + arrivals of
//! bin i in the last s steps), O(1 + τ/n) on average. Unit weights, bin engine only. An
//! [`Observer`] (potentials, the final loads) sees every ball and observation point.

use rand::RngCore;

use crate::loads::{LoadState, UnitLoads};
use crate::observe::{Counters, GapTracker};
use crate::process::Ctx;
use crate::rng::below;
use crate::rule_formula::RuleFormula;
pub use crate::spec::DelayMode;
use crate::spec::RULE_MAX_D;
use crate::{Error, Observer, ProcessSpec, RunOutcome, RunSpec};

const NONE: u64 = u64::MAX;

/// Loads plus the arrival history of the last τ steps.
struct History {
    state: UnitLoads,
    /// Step of the most recent arrival at each bin (`NONE` if never).
    last: Vec<u64>,
    /// `prev[t mod τ]`: the step of the previous arrival at the bin that received ball `t`.
    prev: Vec<u64>,
    tau: u64,
}

impl History {
    /// Load of bin `i` before step `t − s` (that is, after `t − s` balls), `s < τ`, at step `t`.
    #[inline]
    fn load_ago(&self, i: usize, t: u64, s: u64) -> u32 {
        let mut x = self.state.loads()[i];
        let mut a = self.last[i];
        // Undo the arrivals at steps >= t − s.
        while a != NONE && a + s >= t {
            x -= 1;
            let p = self.prev[(a % self.tau) as usize];
            a = if p != NONE && a - p < self.tau { p } else { NONE };
        }
        x
    }

    #[inline]
    fn add(&mut self, i: usize, t: u64) {
        self.state.add(i, ());
        self.prev[(t % self.tau) as usize] = self.last[i];
        self.last[i] = t;
    }
}

/// How a step decides among its samples' reported loads.
enum Decider<'a> {
    /// d-Choice: a least loaded report, ties uniformly at random.
    Least,
    /// A rule formula ([`crate::rule_formula`]) on the reported loads.
    Rule(RuleFormula<'a>),
}

/// Runs `spec` in the delay setting with window `tau` (sequential steps, unit weights);
/// `observer` sees the empty start, every ball and every observation point.
pub fn simulate_delay<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    tau: u64,
    mode: DelayMode,
    rng: &mut R,
    observer: &mut O,
) -> Result<RunOutcome, Error> {
    let (d, mut decider) = match (&spec.process, mode) {
        (&ProcessSpec::DChoice { d }, DelayMode::Random) => (d, Decider::Least),
        (&ProcessSpec::DChoice { d: 2 }, DelayMode::Adversarial) => (2, Decider::Least),
        (ProcessSpec::Rule { d, choose, replacement: true }, DelayMode::Random) => {
            (*d, Decider::Rule(RuleFormula::new(choose, *d, true)))
        }
        (p, m) => {
            return Err(Error::Unsupported(format!(
                "delay (mode {}) is implemented for {}; got {}",
                m.name(),
                if m == DelayMode::Random { "d_choice and rule" } else { "two_choice" },
                p.kind()
            )))
        }
    };
    let n = spec.n as usize;
    let state = UnitLoads::new(n, false);
    let mut h = History { state, last: vec![NONE; n], prev: vec![NONE; tau as usize], tau };
    observer.on_start(&h.state);
    let table = spec.sampling.table(n);
    let mut ctx = Ctx::new(n).with_alias(table.as_ref());
    let every = spec.observe_every.unwrap_or(spec.m).max(1);
    let mut gaps = GapTracker::new(spec);
    for t in 0..spec.m {
        // Steps available in the window: the first balls see a shorter past.
        let window = tau.min(t + 1);
        let bin = match mode {
            DelayMode::Random => random_report(&mut decider, d, &h, t, window, &mut ctx, rng),
            DelayMode::Adversarial => adversarial_report(&h, t, window, &mut ctx, rng),
        };
        h.add(bin, t);
        if O::PER_BALL {
            observer.on_ball(&h.state, bin, 1.0);
        }
        let done = t + 1;
        if done % every == 0 || done == spec.m {
            gaps.observe(&h.state, observer);
        }
    }
    let counters =
        Counters { balls: spec.m, samples: ctx.samples, steps: spec.m, ..Counters::default() };
    Ok(gaps.into_outcome(&h.state, counters))
}

/// The bin of step `t` in the `random` mode: `d` samples, each reporting its load at a
/// uniform step of the last `window` (drawn right after the sample), decided by `decider`.
fn random_report<R: RngCore + ?Sized>(
    decider: &mut Decider<'_>,
    d: u32,
    h: &History,
    t: u64,
    window: u64,
    ctx: &mut Ctx,
    rng: &mut R,
) -> usize {
    if let Decider::Rule(rule) = decider {
        let (mut bins, mut xs) = ([0usize; RULE_MAX_D as usize], [0.0; RULE_MAX_D as usize]);
        for (bin, x) in bins.iter_mut().zip(xs.iter_mut()).take(d as usize) {
            *bin = ctx.sample(rng);
            *x = f64::from(h.load_ago(*bin, t, below(rng, window)));
        }
        // Unit balls: the average after t balls is t/n.
        let n = h.state.loads().len() as f64;
        return bins[rule.choose_among(&xs[..d as usize], t as f64 / n, n, t, rng)];
    }
    let mut best = 0usize;
    let mut best_load = u32::MAX;
    let mut ties = 0u64;
    for _ in 0..d {
        let i = ctx.sample(rng);
        let x = h.load_ago(i, t, below(rng, window));
        if x < best_load {
            (best, best_load, ties) = (i, x, 1);
        } else if x == best_load {
            ties += 1;
            if below(rng, ties) == 0 {
                best = i;
            }
        }
    }
    best
}

/// The bin of step `t` in the `adversarial` mode (Two-Choice): the currently lighter sample
/// reports its current load, the heavier one its oldest load of the window.
fn adversarial_report<R: RngCore + ?Sized>(
    h: &History,
    t: u64,
    window: u64,
    ctx: &mut Ctx,
    rng: &mut R,
) -> usize {
    let (a, b) = (ctx.sample(rng), ctx.sample(rng));
    let (xa, xb) = (h.state.loads()[a], h.state.loads()[b]);
    let oldest = window - 1;
    let (ra, rb) =
        if xa <= xb { (xa, h.load_ago(b, t, oldest)) } else { (h.load_ago(a, t, oldest), xb) };
    if ra < rb || (ra == rb && ctx.coin(rng)) {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_ago_reconstructs_past_loads() {
        let tau = 5;
        let state = UnitLoads::new(3, false);
        let mut h = History { state, last: vec![NONE; 3], prev: vec![NONE; 5], tau };
        let seq = [0usize, 1, 0, 0, 2, 0, 1, 0];
        let mut snapshots: Vec<Vec<u32>> = vec![h.state.loads().to_vec()];
        for (t, &i) in seq.iter().enumerate() {
            h.add(i, t as u64);
            snapshots.push(h.state.loads().to_vec());
        }
        let t = seq.len() as u64; // the next step
        for s in 0..tau {
            for (i, &expected) in snapshots[(t - s) as usize].iter().enumerate() {
                assert_eq!(h.load_ago(i, t, s), expected, "bin {i}, s {s}");
            }
        }
    }
}
