//! The bin engine: one load per bin, sequential or batched, unit or weighted balls.
//!
//! [`simulate`] validates the spec, matches once on the weights and the process, and runs a
//! monomorphised loop ([`run_rule`]). The batched setting never copies the loads: decisions
//! read the loads as they were at the batch start because the batch's allocations are
//! buffered and applied together at its end, so a batch costs O(b) (plus O(n) for processes
//! that need frozen ranks).

use rand::RngCore;

use crate::loads::{LoadState, UnitLoads, WeightedLoads};
use crate::outcome::RunOutcome;
use crate::process::{
    Accept, Ctx, DChoice, MixedQuantile, Noisy, OneChoice, OnePlusBeta, Ranks, Rule, Thinning,
    TwoChoice,
};
use crate::rng::sim_rng;
use crate::{Error, ProcessSpec, RunSpec, Setting, Weights};

/// Runs `spec` with randomness from `rng`.
///
/// Errors only when the spec is invalid ([`RunSpec::validate`]).
pub fn simulate<R: RngCore + ?Sized>(spec: &RunSpec, rng: &mut R) -> Result<RunOutcome, Error> {
    spec.validate()?;
    let n = spec.n as usize;
    let uses_ranks =
        matches!(spec.process, ProcessSpec::Quantile { .. } | ProcessSpec::MixedQuantile { .. });
    let sequential = matches!(spec.setting, Setting::Sequential);
    match spec.weights {
        Weights::Unit => {
            let state = UnitLoads::new(n, uses_ranks && sequential);
            Ok(dispatch(spec, state, rng))
        }
        Weights::Exp { mean } => Ok(dispatch(spec, WeightedLoads::new(n, mean), rng)),
    }
}

/// Runs `spec` with a [`crate::SimRng`] seeded from `seed` (see [`crate::sim_rng`]).
pub fn simulate_seeded(spec: &RunSpec, seed: u64) -> Result<RunOutcome, Error> {
    simulate(spec, &mut sim_rng(seed))
}

fn dispatch<S: LoadState, R: RngCore + ?Sized>(
    spec: &RunSpec,
    state: S,
    rng: &mut R,
) -> RunOutcome {
    let tie = spec.tie_break;
    match spec.process {
        ProcessSpec::OneChoice => run_rule(spec, state, OneChoice, rng),
        ProcessSpec::DChoice { d: 1 } => run_rule(spec, state, OneChoice, rng),
        ProcessSpec::DChoice { d: 2 } => run_rule(spec, state, TwoChoice { tie }, rng),
        ProcessSpec::DChoice { d } => run_rule(spec, state, DChoice { d, tie }, rng),
        ProcessSpec::OnePlusBeta { beta } => run_rule(spec, state, OnePlusBeta { beta, tie }, rng),
        ProcessSpec::Quantile { delta } => {
            run_rule(spec, state, MixedQuantile { delta, eta: 1.0 }, rng)
        }
        ProcessSpec::MixedQuantile { delta, eta } => {
            run_rule(spec, state, MixedQuantile { delta, eta }, rng)
        }
        ProcessSpec::Threshold { f } => {
            run_rule(spec, state, Thinning { accept: Accept::AtMost(f) }, rng)
        }
        ProcessSpec::GBounded { g } => run_rule(spec, state, Noisy::GBounded { g }, rng),
        ProcessSpec::GMyopic { g } => run_rule(spec, state, Noisy::GMyopic { g }, rng),
        ProcessSpec::SigmaNoisyLoad { sigma, truncate } => {
            run_rule(spec, state, Noisy::SigmaNoisyLoad { sigma, truncate }, rng)
        }
        ProcessSpec::MeanThinning { strict } => {
            run_rule(spec, state, Thinning { accept: Accept::BelowAverage { strict } }, rng)
        }
    }
}

/// Gap bookkeeping at observation points.
struct Observer {
    record: bool,
    max_gap: f64,
    trajectory: Vec<f64>,
    count: u64,
}

impl Observer {
    fn observe(&mut self, gap: f64) {
        if self.count == 0 || gap > self.max_gap {
            self.max_gap = gap;
        }
        self.count += 1;
        if self.record {
            self.trajectory.push(gap);
        }
    }
}

/// The generic hot loop for one rule and one load state.
pub fn run_rule<S, P, R>(spec: &RunSpec, mut state: S, mut rule: P, rng: &mut R) -> RunOutcome
where
    S: LoadState,
    P: Rule,
    R: RngCore + ?Sized,
{
    let n = state.n();
    let mut ctx = Ctx::new(n);
    let mut obs =
        Observer { record: spec.record_trajectory, max_gap: 0.0, trajectory: Vec::new(), count: 0 };
    let k_heavy_value = (rule.heavy_fraction() * n as f64).ceil() as u64;
    let k_heavy = || k_heavy_value;
    match spec.setting {
        Setting::Sequential => {
            let ranks =
                if rule.uses_ranks() { Ranks::Live { k: k_heavy() } } else { Ranks::Unused };
            let every = spec.observe_every.unwrap_or(spec.m).max(1);
            let mut done = 0u64;
            while done < spec.m {
                let chunk = every.min(spec.m - done);
                let mut placed = 0u64;
                while placed < chunk {
                    let p = rule.place(&state, &ranks, rng, &mut ctx);
                    // Multi-ball steps are truncated at the end of the run (m is exact).
                    let k = u64::from(p.balls).min(spec.m - done - placed);
                    for _ in 0..k {
                        let inc = state.draw_inc(rng);
                        state.add(p.bin, inc);
                    }
                    placed += k;
                }
                done += chunk;
                obs.observe(state.gap());
            }
        }
        Setting::Batched { b } => {
            let mut pending: Vec<(u32, S::Inc)> = Vec::with_capacity(b.min(spec.m) as usize);
            let mut done = 0u64;
            while done < spec.m {
                let size = b.min(spec.m - done);
                let ranks = if rule.uses_ranks() {
                    let k = k_heavy();
                    if k == 0 {
                        Ranks::Unused
                    } else {
                        let (threshold, cut) = state.rank_cut(k);
                        Ranks::Frozen { threshold, cut }
                    }
                } else {
                    Ranks::Unused
                };
                pending.clear();
                while (pending.len() as u64) < size {
                    let p = rule.place(&state, &ranks, rng, &mut ctx);
                    let k = u64::from(p.balls).min(size - pending.len() as u64);
                    for _ in 0..k {
                        let inc = state.draw_inc(rng);
                        pending.push((p.bin as u32, inc));
                    }
                }
                for &(i, inc) in &pending {
                    state.add(i as usize, inc);
                }
                done += size;
                obs.observe(state.gap());
            }
        }
    }
    if spec.m == 0 {
        obs.observe(state.gap());
    }
    let (max_load, min_load) = state.max_min();
    RunOutcome {
        final_gap: state.gap(),
        max_gap: obs.max_gap,
        trajectory: obs.trajectory,
        max_load,
        min_load,
        balls: spec.m,
        samples: ctx.samples,
        observations: obs.count,
    }
}
