//! Shared helpers of this crate's tests: the chi-square helpers of `ballast-testkit`
//! (significance level `ALPHA`), re-exported under the name the tests use, and observers
//! used by several test files.

#![allow(unused_imports, dead_code)]

pub use ballast_testkit::*;

use ballast_core::engine::run_rule_observed;
use ballast_core::loads::{LoadState, UnitLoads, WeightedLoads};
use ballast_core::process::Rule;
use ballast_core::{sim_rng, simulate_observed, Observer, RunOutcome, RunSpec, Weights};

/// Records the bin of every ball, in order.
#[derive(Default)]
pub struct BinTrace(pub Vec<usize>);

impl Observer for BinTrace {
    fn on_ball<S: LoadState>(&mut self, _state: &S, bin: usize, _weight: f64) {
        self.0.push(bin);
    }
}

/// The bins of one seeded run of `spec` through the engine, and through `rule` driven by
/// `run_rule_observed` on the load state of the spec's weights. Equal traces: the same bin
/// for every ball (the engine's rule makes the same choices as `rule`).
pub fn engine_and_rule_traces<P: Rule>(
    spec: &RunSpec,
    rule: P,
    seed: u64,
) -> (Vec<usize>, Vec<usize>) {
    let mut engine = BinTrace::default();
    simulate_observed(spec, &mut sim_rng(seed), &mut engine).expect("valid");
    let mut reference = BinTrace::default();
    let n = spec.n as usize;
    let rng = &mut sim_rng(seed);
    match spec.weights {
        Weights::Unit => {
            run_rule_observed(spec, UnitLoads::new(n, false), rule, rng, &mut reference);
        }
        w => {
            let state = WeightedLoads::of_law(n, w).expect("a valid law");
            run_rule_observed(spec, state, rule, rng, &mut reference);
        }
    }
    (engine.0, reference.0)
}

/// The quadratic potential Υ = Σ y_i², updated in O(1) per ball
/// (`docs/metrics.md#potentials`): when a ball lands on j, Υ' = Υ + 2·y_j' − 1 + 1/n with
/// y_j' the new normalised load. `max_err` is the largest difference from a full
/// recomputation at an observation point: small only if `on_ball` names the bin that
/// received the ball and the view is consistent.
#[derive(Default)]
pub struct Quadratic {
    /// Balls seen by `on_ball`.
    pub balls: u64,
    /// Υ kept up to date ball by ball.
    pub upsilon: f64,
    /// Largest |Υ − recomputed Υ| at an observation point.
    pub max_err: f64,
}

impl Observer for Quadratic {
    fn on_ball<S: LoadState>(&mut self, s: &S, bin: usize, _w: f64) {
        self.balls += 1;
        self.upsilon += 2.0 * s.normalized(bin) - 1.0 + 1.0 / s.n() as f64;
    }
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        let full: f64 = (0..s.n()).map(|i| s.normalized(i).powi(2)).sum();
        self.max_err = self.max_err.max((full - self.upsilon).abs());
    }
}

/// Records the sorted load vector at the last observation (the end of the run).
#[derive(Default)]
pub struct FinalState(pub Vec<u64>);

impl Observer for FinalState {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, state: &S) {
        let mean = state.total() / state.n() as f64;
        let mut v: Vec<u64> =
            (0..state.n()).map(|i| (state.normalized(i) + mean).round() as u64).collect();
        v.sort_unstable();
        self.0 = v;
    }
}

/// Exact law of the sorted load vector after `m` balls on `n` bins of a process that samples
/// `d` bins uniformly (each of the `n^d` ordered tuples equally likely) and sends the ball to
/// `pick(loads, samples)`; the enumeration of the Markov chain on sorted vectors.
pub fn exact_sorted_law(
    n: usize,
    m: usize,
    d: u32,
    pick: impl Fn(&[u64], &[usize]) -> usize,
) -> std::collections::BTreeMap<Vec<u64>, f64> {
    use std::collections::BTreeMap;
    let mut states: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    states.insert(vec![0; n], 1.0);
    let tuples = n.pow(d);
    let mut samples = vec![0; d as usize];
    for _ in 0..m {
        let mut next: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
        for (loads, &pr) in &states {
            for t in 0..tuples {
                let mut x = t;
                for s in samples.iter_mut() {
                    *s = x % n;
                    x /= n;
                }
                let mut v = loads.clone();
                v[pick(loads, &samples)] += 1;
                v.sort_unstable();
                *next.entry(v).or_insert(0.0) += pr / tuples as f64;
            }
        }
        states = next;
    }
    states
}

/// Pearson statistic and critical value (at `ALPHA`) of observed states `keys` against the
/// exact law `law`: states of expected count below 5 lumped with their successors in state
/// order (the last group into the one before); a state outside the law gives an infinite
/// statistic (and critical value 0), a certain rejection.
pub fn fit_law<K: Ord>(keys: &[K], law: &std::collections::BTreeMap<K, f64>) -> (f64, f64) {
    use std::collections::BTreeMap;
    let mut counts: BTreeMap<&K, u64> = law.keys().map(|k| (k, 0)).collect();
    for k in keys {
        match counts.get_mut(k) {
            Some(c) => *c += 1,
            None => return (f64::INFINITY, 0.0),
        }
    }
    let counts: Vec<u64> = counts.into_values().collect();
    lumped_fit(&counts, law.values().copied(), keys.len() as u64)
}

/// Pearson statistic and critical value (at `ALPHA`) of `counts[i]` observations of the
/// state of probability `probs[i]` (states in the law's order) in `runs` runs: states of
/// expected count below 5 are lumped with their successors, the last group into the one
/// before. [`fit_law`] for tests that keep their own counts.
pub fn lumped_fit(counts: &[u64], probs: impl IntoIterator<Item = f64>, runs: u64) -> (f64, f64) {
    let (mut o_cat, mut p_cat, mut o_acc, mut p_acc) = (Vec::new(), Vec::new(), 0u64, 0.0);
    for (&c, p) in counts.iter().zip(probs) {
        o_acc += c;
        p_acc += p;
        if p_acc * runs as f64 >= 5.0 {
            o_cat.push(o_acc);
            p_cat.push(p_acc);
            (o_acc, p_acc) = (0, 0.0);
        }
    }
    *o_cat.last_mut().expect("a category") += o_acc;
    *p_cat.last_mut().expect("a category") += p_acc;
    let (stat, df) = chi2_gof(&o_cat, &p_cat);
    (stat, chi2_critical(df))
}

/// [`fit_law`] of the sorted final loads, heaviest first, of `runs` runs of `spec` with the
/// seeds `seed0`, `seed0 + 1`, … against the exact `law` of that vector.
pub fn fit_final_law(
    spec: &RunSpec,
    runs: u64,
    seed0: u64,
    law: &std::collections::BTreeMap<Vec<u64>, f64>,
) -> (f64, f64) {
    let keys: Vec<Vec<u64>> = (0..runs)
        .map(|r| {
            let mut seen = FinalState::default();
            simulate_observed(spec, &mut sim_rng(seed0 + r), &mut seen).expect("runs");
            seen.0.reverse();
            seen.0
        })
        .collect();
    fit_law(&keys, law)
}

/// Two samples of runs (one per engine) agree on the final max load and on the final min load:
/// a two-sample χ² test of each at level [`ALPHA`] (`label` names the case in the messages).
pub fn assert_extremes_agree(a: &[RunOutcome], b: &[RunOutcome], label: &str) {
    for (name, f) in [
        ("max load", (|o: &RunOutcome| o.max_load as i64) as fn(&RunOutcome) -> i64),
        ("min load", |o| o.min_load as i64),
    ] {
        let lo = a.iter().chain(b).map(f).min().unwrap();
        let len = (a.iter().chain(b).map(f).max().unwrap() - lo + 1) as usize;
        let (stat, df) = chi2_two_sample(
            &histogram(a.iter().map(f), lo, len),
            &histogram(b.iter().map(f), lo, len),
        );
        println!("{label}, {name}: χ² = {stat:.1} (critical {:.1})", chi2_critical(df));
        assert!(stat < chi2_critical(df), "{label}, {name}: {stat:.1} on {df} df");
    }
}
