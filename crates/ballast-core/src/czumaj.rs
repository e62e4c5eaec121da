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

    #[inline]
    fn at(&self, k: u32, average: f64) -> f64 {
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

/// Runs `equalize{d}` (Czumaj–Stemann reallocation), sequential unit balls only: each step
/// samples `d` bins; the new ball and all balls of the distinct sampled bins are spread over
/// those bins as evenly as possible, the remainder going to uniformly chosen ones.
/// [`RunOutcome::moved`] counts balls that changed bin.
pub fn simulate_equalize<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    if !matches!(spec.setting, Setting::Sequential) {
        return Err(Error::Unsupported(
            "equalize is defined for the sequential setting only".to_string(),
        ));
    }
    let n = spec.n as usize;
    let mut loads = vec![0u64; n];
    // counts[x] = number of bins with load x, for an O(1)-amortised maximum that can fall.
    let mut counts: Vec<u64> = vec![n as u64];
    let mut max = 0usize;
    let mut ctx = Ctx::new(n);
    let mut bins: Vec<usize> = Vec::with_capacity(d as usize);
    let mut moved = 0u64;
    let mut max_gap = f64::NEG_INFINITY;
    let mut trajectory = Vec::new();
    let every = spec.observe_every.unwrap_or(spec.m).max(1);
    let mut observations = 0u64;
    let mut load_trajectories = crate::engine::LoadTrajectories::of(spec);
    let set = |counts: &mut Vec<u64>, max: &mut usize, from: u64, to: u64| {
        counts[from as usize] -= 1;
        if to as usize >= counts.len() {
            counts.resize(to as usize + 1, 0);
        }
        counts[to as usize] += 1;
        if to as usize > *max {
            *max = to as usize;
        }
        while counts[*max] == 0 {
            *max -= 1;
        }
    };
    for t in 1..=spec.m {
        bins.clear();
        for _ in 0..d {
            let i = ctx.sample(rng);
            if !bins.contains(&i) {
                bins.push(i);
            }
        }
        moved += spread(&mut loads, &mut bins, rng, |old, new| {
            set(&mut counts, &mut max, old, new);
        });
        if t % every == 0 || t == spec.m {
            let gap = max as f64 - t as f64 / n as f64;
            max_gap = max_gap.max(gap);
            observations += 1;
            if spec.record_trajectory {
                trajectory.push(gap);
            }
            if let Some(t) = &mut load_trajectories {
                let min = counts.iter().position(|&c| c > 0).unwrap_or(0);
                t.push(max as f64, min as f64);
            }
        }
    }
    assert_eq!(loads.iter().sum::<u64>(), spec.m, "equalize must conserve balls");
    let min = counts.iter().position(|&c| c > 0).unwrap_or(0);
    let final_gap = max as f64 - spec.m as f64 / n as f64;
    let mut out = RunOutcome {
        final_gap,
        max_gap: if observations == 0 { final_gap } else { max_gap },
        trajectory,
        max_load: max as f64,
        min_load: min as f64,
        empty_bins: loads.iter().filter(|&&x| x == 0).count() as u64,
        balls: spec.m,
        samples: ctx.samples,
        observations: observations.max(1),
        moved,
        ..RunOutcome::default()
    };
    crate::engine::LoadTrajectories::fill(load_trajectories, &mut out);
    Ok(out)
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
    equalize_levels(spec, d, rng, None)
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
    equalize_levels(spec, d, rng, Some(flaw))
}

fn equalize_levels<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
    flaw: Option<EqualizeFlaw>,
) -> Result<RunOutcome, Error> {
    if !matches!(spec.setting, Setting::Sequential) {
        return Err(Error::Unsupported(
            "equalize is defined for the sequential setting only".to_string(),
        ));
    }
    let n = spec.n;
    let mut st = LevelLoads::new(n);
    let mut ctx = Ctx::new(n as usize);
    let mut positions: Vec<u64> = Vec::with_capacity(d as usize);
    let mut loads: Vec<u64> = Vec::with_capacity(d as usize);
    let mut slots: Vec<usize> = Vec::with_capacity(d as usize);
    let mut moved = 0u64;
    let mut max_gap = f64::NEG_INFINITY;
    let mut trajectory = Vec::new();
    let every = spec.observe_every.unwrap_or(spec.m).max(1);
    let mut observations = 0u64;
    let mut load_trajectories = crate::engine::LoadTrajectories::of(spec);
    for t in 1..=spec.m {
        positions.clear();
        for _ in 0..d {
            let p = ctx.sample(rng) as u64;
            if !positions.contains(&p) {
                positions.push(p);
            }
        }
        // Every load is read before any bin moves: the positions refer to this histogram.
        loads.clear();
        loads.extend(positions.iter().map(|&p| st.load_at(p)));
        slots.clear();
        slots.extend(0..loads.len());
        let changed = |old, new| st.move_load(old, new);
        moved += match flaw {
            None => spread(&mut loads, &mut slots, rng, changed),
            Some(f) => spread_flawed(&mut loads, f, changed),
        };
        if t % every == 0 || t == spec.m {
            let gap = st.gap_value();
            max_gap = max_gap.max(gap);
            observations += 1;
            if spec.record_trajectory {
                trajectory.push(gap);
            }
            if let Some(l) = load_trajectories.as_mut() {
                l.push(st.max_load() as f64, st.min_load() as f64);
            }
        }
    }
    assert_eq!(st.balls(), spec.m, "equalize must conserve balls");
    let final_gap = st.gap_value();
    let mut out = RunOutcome {
        final_gap,
        max_gap: if observations == 0 { final_gap } else { max_gap },
        trajectory,
        max_load: st.max_load() as f64,
        min_load: st.min_load() as f64,
        empty_bins: st.count_at(0),
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
fn spread_flawed(loads: &mut [u64], flaw: EqualizeFlaw, mut changed: impl FnMut(u64, u64)) -> u64 {
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
            changed(old, new);
            loads[j] = new;
        }
    }
    moved
}

/// One equalize step on the distinct bins `bins`: their balls plus one new ball are spread
/// as evenly as possible, the remainder to a uniformly random subset. Calls `changed(old,
/// new)` for every bin whose load changes; returns the number of balls that left a bin.
fn spread<R: RngCore + ?Sized>(
    loads: &mut [u64],
    bins: &mut [usize],
    rng: &mut R,
    mut changed: impl FnMut(u64, u64),
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
            changed(old, new);
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
            let moved = spread(&mut loads, &mut bins, &mut rng, |_, _| {});
            let after: Vec<u64> = [0usize, 2, 5].iter().map(|&i| loads[i]).collect();
            assert_eq!(after.iter().sum::<u64>(), before + 1);
            let (lo, hi) = (after.iter().min().copied(), after.iter().max().copied());
            assert!(hi.zip(lo).is_some_and(|(h, l)| h - l <= 1), "{after:?}");
            assert_eq!([1usize, 3, 4].iter().map(|&i| loads[i]).collect::<Vec<_>>(), others);
            assert!(moved <= before);
        }
    }
}
