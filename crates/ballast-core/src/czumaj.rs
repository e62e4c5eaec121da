//! Processes of Czumaj and Stemann, "Randomized allocation processes" (FOCS 1997; Random
//! Structures & Algorithms 2001): adaptive probing, which trades the maximum load against the
//! number of bins probed per ball, and reallocation among the probed bins.
//!
//! The paper's exact threshold constants were not available to us: [`Tau`] keeps the
//! threshold sequence open (an affine function of the probe count and the average load), with
//! named presets for the paper's instances.

use rand::RngCore;

use crate::level::LevelLoads;
use crate::loads::LoadState;
use crate::process::{Ctx, Placement, Ranks, Rule};
use crate::rng::below;
use crate::{Error, RunOutcome, RunSpec, Setting};

/// The threshold sequence of an adaptive process: after `k` probes the process stops when the
/// least loaded probed bin has load below `τ_k = base + per_probe·k + per_average·W/n`; for
/// `k >= until` the threshold is −∞ (only the cap stops).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tau {
    /// Constant term (−∞ for Greedy).
    pub base: f64,
    /// Coefficient of the probe count `k`.
    pub per_probe: f64,
    /// Coefficient of the average load `W/n` (for the heavily loaded case).
    pub per_average: f64,
    /// Probe count from which the threshold is −∞ (`None`: never).
    pub until: Option<u32>,
}

impl Tau {
    /// τ = −∞: never stop before the cap (Greedy\[d\] with cap d).
    pub const NEVER: Tau =
        Tau { base: f64::NEG_INFINITY, per_probe: 0.0, per_average: 0.0, until: None };

    /// τ_k = c for k < d (threshold-first: accept the first probe with load below c).
    pub fn constant_until(c: f64, d: u32) -> Tau {
        Tau { base: c, per_probe: 0.0, per_average: 0.0, until: Some(d) }
    }

    /// τ_k = k (probe-count rule: stop as soon as a probed bin has fewer balls than probes).
    pub const PROBE_COUNT: Tau = Tau { base: 0.0, per_probe: 1.0, per_average: 0.0, until: None };

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

/// Adaptive probing: probe uniform bins one at a time, keep the least loaded seen (ties
/// uniformly at random), stop when its load is below τ_k or after `cap` probes.
#[derive(Clone, Copy, Debug)]
pub struct Adaptive {
    /// Threshold sequence.
    pub tau: Tau,
    /// Maximum number of probes per ball (`u32::MAX`: unbounded).
    pub cap: u32,
}

impl Rule for Adaptive {
    const TRACK_SAMPLES: bool = true;

    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let average = if self.tau.per_average != 0.0 { s.total() / s.n() as f64 } else { 0.0 };
        let mut best = ctx.sample(rng);
        let mut best_load: f64 = s.load(best).into();
        let mut ties = 1u64;
        let mut k = 1u32;
        while k < self.cap && best_load >= self.tau.at(k, average) {
            let j = ctx.sample(rng);
            let lj: f64 = s.load(j).into();
            if lj < best_load {
                (best, best_load, ties) = (j, lj, 1);
            } else if lj == best_load {
                ties += 1;
                if below(rng, ties) == 0 {
                    best = j;
                }
            }
            k += 1;
        }
        Placement::one(best)
    }
}

/// Runs `equalize{d}` (Czumaj–Stemann reallocation) on the bin engine, sequential unit
/// balls only: each step samples `d` bins; the new ball and all balls of the distinct
/// sampled bins are spread over those bins as evenly as possible, the remainder going to
/// uniformly chosen ones. [`RunOutcome::moved`] counts balls that changed bin.
pub fn simulate_equalize<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    run_equalize(spec, d, BinStore::new(spec.n as usize), rng, None)
}

/// `equalize{d}` on the level engine: the same step on the sorted view of a [`LevelLoads`]
/// histogram. A uniform bin sample is a uniform position, distinct positions are distinct
/// bins, and the step reads and sets only the loads of the distinct sampled bins, so moving
/// each of them between levels keeps the law of the histogram and of [`RunOutcome::moved`]
/// (`docs/level-engine.md#reallocation`). The random numbers are consumed as by
/// [`simulate_equalize`] (d samples, then the remainder subset); O(d·(levels + log levels))
/// per ball and O(levels) memory, against d random accesses to an n-entry array there.
pub fn simulate_equalize_levels<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    run_equalize(spec, d, LevelLoads::new(spec.n), rng, None)
}

/// Deliberately wrong variants of [`simulate_equalize_levels`], for the power of its tests.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EqualizeFlaw {
    /// The whole remainder goes to one bin (q + r there, q elsewhere): a wrong histogram
    /// once r >= 2, i.e. d >= 3.
    RemainderToOne,
    /// The r bins that get q + 1 are the r lightest sampled ones, not a uniform r-subset:
    /// the right histogram, a wrong number of moved balls.
    RemainderToLightest,
}

/// [`simulate_equalize_levels`] with a deliberate flaw (tests only).
#[doc(hidden)]
pub fn simulate_equalize_levels_flawed<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
    flaw: EqualizeFlaw,
) -> Result<RunOutcome, Error> {
    run_equalize(spec, d, LevelLoads::new(spec.n), rng, Some(flaw))
}

/// The loads an equalize step reads and sets: a load per bin ([`BinStore`]) or the level
/// histogram ([`LevelLoads`], where a sample index is a position of the sorted view).
trait EqualizeStore {
    /// Load of the bin at sample index `i`, before any bin of the step has moved.
    fn load(&self, i: usize) -> u64;
    /// The bin at sample index `i` goes from load `old` to `new`.
    fn set(&mut self, i: usize, old: u64, new: u64);
    /// The gap after `t` balls (as each engine has always computed it).
    fn gap(&self, t: u64, n: u64) -> f64;
    fn max_load(&self) -> u64;
    fn min_load(&self) -> u64;
    fn empty_bins(&self) -> u64;
    fn balls(&self) -> u64;
}

/// The bin engine's store: a load per bin, and how many bins hold each load, for an
/// O(1)-amortised maximum that can fall.
struct BinStore {
    loads: Vec<u64>,
    /// `counts[x]` = number of bins with load x.
    counts: Vec<u64>,
    max: usize,
    total: u64,
}

impl BinStore {
    fn new(n: usize) -> Self {
        Self { loads: vec![0; n], counts: vec![n as u64], max: 0, total: 0 }
    }
}

impl EqualizeStore for BinStore {
    fn load(&self, i: usize) -> u64 {
        self.loads[i]
    }
    fn set(&mut self, i: usize, old: u64, new: u64) {
        self.loads[i] = new;
        self.total = self.total + new - old;
        self.counts[old as usize] -= 1;
        if new as usize >= self.counts.len() {
            self.counts.resize(new as usize + 1, 0);
        }
        self.counts[new as usize] += 1;
        self.max = self.max.max(new as usize);
        while self.counts[self.max] == 0 {
            self.max -= 1;
        }
    }
    fn gap(&self, t: u64, n: u64) -> f64 {
        self.max as f64 - t as f64 / n as f64
    }
    fn max_load(&self) -> u64 {
        self.max as u64
    }
    fn min_load(&self) -> u64 {
        self.counts.iter().position(|&c| c > 0).unwrap_or(0) as u64
    }
    fn empty_bins(&self) -> u64 {
        self.counts[0]
    }
    fn balls(&self) -> u64 {
        self.total
    }
}

impl EqualizeStore for LevelLoads {
    fn load(&self, i: usize) -> u64 {
        self.load_at(i as u64)
    }
    fn set(&mut self, _i: usize, old: u64, new: u64) {
        self.move_load(old, new);
    }
    fn gap(&self, _t: u64, _n: u64) -> f64 {
        self.gap_value()
    }
    fn max_load(&self) -> u64 {
        LevelLoads::max_load(self)
    }
    fn min_load(&self) -> u64 {
        LevelLoads::min_load(self)
    }
    fn empty_bins(&self) -> u64 {
        self.count_at(0)
    }
    fn balls(&self) -> u64 {
        LevelLoads::balls(self)
    }
}

/// The equalize loop on either store: samples, the spread (or a flawed one), observation
/// points, the outcome.
fn run_equalize<S: EqualizeStore, R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    mut st: S,
    rng: &mut R,
    flaw: Option<EqualizeFlaw>,
) -> Result<RunOutcome, Error> {
    if !matches!(spec.setting, Setting::Sequential) {
        return Err(Error::Unsupported(
            "equalize is defined for the sequential setting only".to_string(),
        ));
    }
    let n = spec.n;
    let mut ctx = Ctx::new(n as usize);
    let mut samples: Vec<usize> = Vec::with_capacity(d as usize);
    let mut loads: Vec<u64> = Vec::with_capacity(d as usize);
    let mut slots: Vec<usize> = Vec::with_capacity(d as usize);
    let mut moved = 0u64;
    let mut max_gap = f64::NEG_INFINITY;
    let mut trajectory = Vec::new();
    let every = spec.observe_every.unwrap_or(spec.m).max(1);
    let mut observations = 0u64;
    let mut load_trajectories = crate::engine::LoadTrajectories::of(spec);
    for t in 1..=spec.m {
        samples.clear();
        for _ in 0..d {
            let i = ctx.sample(rng);
            if !samples.contains(&i) {
                samples.push(i);
            }
        }
        // Every load is read before any bin moves (the level store's indices are positions
        // of this histogram).
        loads.clear();
        loads.extend(samples.iter().map(|&i| st.load(i)));
        slots.clear();
        slots.extend(0..loads.len());
        let changed = |j: usize, old, new| st.set(samples[j], old, new);
        moved += match flaw {
            None => spread(&mut loads, &mut slots, rng, changed),
            Some(f) => spread_flawed(&mut loads, f, changed),
        };
        if t % every == 0 || t == spec.m {
            let g = st.gap(t, n);
            max_gap = max_gap.max(g);
            observations += 1;
            if spec.record_trajectory {
                trajectory.push(g);
            }
            if let Some(l) = load_trajectories.as_mut() {
                l.push(st.max_load() as f64, st.min_load() as f64);
            }
        }
    }
    assert_eq!(st.balls(), spec.m, "equalize must conserve balls");
    let final_gap = st.gap(spec.m, n);
    let mut out = RunOutcome {
        final_gap,
        max_gap: if observations == 0 { final_gap } else { max_gap },
        trajectory,
        max_load: st.max_load() as f64,
        min_load: st.min_load() as f64,
        empty_bins: st.empty_bins(),
        balls: spec.m,
        samples: ctx.samples,
        observations: observations.max(1),
        moved,
        ..RunOutcome::default()
    };
    crate::engine::LoadTrajectories::fill(load_trajectories, &mut out);
    Ok(out)
}

/// [`spread`] with a [`EqualizeFlaw`] (no random numbers).
fn spread_flawed(
    loads: &mut [u64],
    flaw: EqualizeFlaw,
    mut changed: impl FnMut(usize, u64, u64),
) -> u64 {
    let c = loads.len() as u64;
    let total: u64 = loads.iter().sum::<u64>() + 1;
    let (q, r) = (total / c, total % c);
    let mut order: Vec<usize> = (0..loads.len()).collect();
    order.sort_by_key(|&j| loads[j]);
    let mut moved = 0;
    for (rank, &j) in order.iter().enumerate() {
        let new = match flaw {
            EqualizeFlaw::RemainderToOne => q + if rank == 0 { r } else { 0 },
            EqualizeFlaw::RemainderToLightest => q + u64::from((rank as u64) < r),
        };
        let old = loads[j];
        moved += old.saturating_sub(new);
        if new != old {
            changed(j, old, new);
            loads[j] = new;
        }
    }
    moved
}

/// One equalize step on the distinct bins `bins`: their balls plus one new ball are spread
/// as evenly as possible, the remainder to a uniformly random subset. Calls `changed(i, old,
/// new)` for every bin `i` whose load changes; returns the number of balls that left a bin.
fn spread<R: RngCore + ?Sized>(
    loads: &mut [u64],
    bins: &mut [usize],
    rng: &mut R,
    mut changed: impl FnMut(usize, u64, u64),
) -> u64 {
    let c = bins.len() as u64;
    let total: u64 = bins.iter().map(|&i| loads[i]).sum::<u64>() + 1;
    let (q, r) = (total / c, total % c);
    // The r bins that get q + 1: a uniformly random r-subset (partial Fisher–Yates).
    for j in 0..r as usize {
        let pick = j + below(rng, c - j as u64) as usize;
        bins.swap(j, pick);
    }
    let mut moved = 0;
    for (j, &i) in bins.iter().enumerate() {
        let new = q + u64::from((j as u64) < r);
        let old = loads[i];
        moved += old.saturating_sub(new);
        if new != old {
            changed(i, old, new);
            loads[i] = new;
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_conserves_and_levels() {
        let mut rng = crate::rng::sim_rng(3);
        for _ in 0..200 {
            let mut loads: Vec<u64> = (0..6).map(|_| below(&mut rng, 9)).collect();
            let mut bins = vec![0usize, 2, 5];
            let before: u64 = bins.iter().map(|&i| loads[i]).sum();
            let others: Vec<u64> = [1usize, 3, 4].iter().map(|&i| loads[i]).collect();
            let moved = spread(&mut loads, &mut bins, &mut rng, |_, _, _| {});
            let after: Vec<u64> = [0usize, 2, 5].iter().map(|&i| loads[i]).collect();
            assert_eq!(after.iter().sum::<u64>(), before + 1);
            let (lo, hi) = (after.iter().min().copied(), after.iter().max().copied());
            assert!(hi.zip(lo).is_some_and(|(h, l)| h - l <= 1), "{after:?}");
            assert_eq!([1usize, 3, 4].iter().map(|&i| loads[i]).collect::<Vec<_>>(), others);
            assert!(moved <= before);
        }
    }
}
