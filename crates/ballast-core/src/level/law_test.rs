//! Helpers of the level engine's law tests: the whole final state of many seeded runs on
//! a few bins, from the bin engine or from a level loop, and the two-sample chi-square
//! between the two sets of states.

use std::collections::HashMap;

use ballast_testkit::{chi2_critical, chi2_two_sample};

use super::sequential::{ChildRng, RankIndex};
use crate::histogram::LevelLoads;
use crate::{derive_seed, simulate_observed, Engine, LoadState, Observer, ProcessSpec, RunSpec};

/// Sorted final loads.
#[derive(Default)]
struct Sorted(Vec<i64>);

impl Observer for Sorted {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        self.0 = (0..s.n()).map(|i| s.load(i).into() as i64).collect();
        self.0.sort_unstable();
    }
}

/// The key of a final state: its sorted loads and the sample count.
fn key(st: &LevelLoads, samples: u64) -> Vec<i64> {
    let mut key: Vec<i64> = (0..st.bins()).map(|p| st.load_at(p) as i64).collect();
    key.push(samples as i64);
    key
}

/// `runs` runs of `spec` (seeds derived from `seed`), each keyed by its final state.
pub(super) fn runs_of(spec: &RunSpec, runs: u64, seed: u64) -> Vec<Vec<i64>> {
    (0..runs)
        .map(|r| {
            let mut obs = Sorted::default();
            let rng = &mut crate::sim_rng(derive_seed(seed, &[r]));
            let out = simulate_observed(spec, rng, &mut obs).expect("valid");
            obs.0.push(out.samples as i64);
            obs.0
        })
        .collect()
}

/// [`runs_of`] on the bin engine, from `start`.
pub(super) fn on_bins(
    process: &ProcessSpec,
    start: &LevelLoads,
    m: u64,
    runs: u64,
    seed: u64,
) -> Vec<Vec<i64>> {
    let loads = (0..start.bins()).map(|p| start.load_at(p)).collect();
    let spec = RunSpec::new(process.clone(), start.bins(), m)
        .engine(Engine::Bins)
        .start(crate::Start::Loads(loads));
    runs_of(&spec, runs, seed)
}

/// `runs` runs of a level loop `run(state, rng) -> samples` from `start`, with a child
/// generator seeded as the engine seeds it.
pub(super) fn on_levels(
    start: &LevelLoads,
    runs: u64,
    seed: u64,
    run: impl Fn(&mut LevelLoads, &mut RankIndex, &mut ChildRng) -> u64,
) -> Vec<Vec<i64>> {
    (0..runs)
        .map(|r| {
            let mut st = start.clone();
            let parent = &mut crate::sim_rng(derive_seed(seed, &[r]));
            let mut rng = ChildRng::from_parent(parent);
            let mut index = RankIndex::new(st.bins());
            let samples = run(&mut st, &mut index, &mut rng);
            key(&st, samples)
        })
        .collect()
}

/// Two-sample chi-square of two sets of keyed states: (statistic, critical value at
/// `ballast_testkit::ALPHA`).
pub(super) fn chi2(a: &[Vec<i64>], b: &[Vec<i64>]) -> (f64, f64) {
    let mut ids: HashMap<&[i64], usize> = HashMap::new();
    for k in a.iter().chain(b) {
        let len = ids.len();
        ids.entry(k).or_insert(len);
    }
    let (mut ha, mut hb) = (vec![0u64; ids.len()], vec![0u64; ids.len()]);
    a.iter().for_each(|k| ha[ids[k.as_slice()]] += 1);
    b.iter().for_each(|k| hb[ids[k.as_slice()]] += 1);
    let (stat, df) = chi2_two_sample(&ha, &hb);
    (stat, chi2_critical(df))
}
