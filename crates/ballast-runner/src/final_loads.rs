//! The statistics of the final load vector: the normalised load distribution
//! (`load_distribution`), the mean sorted load vector (`sorted_loads`), the largest loads
//! (`top_loads`) and the per-run spread max − min (`spread`, `spread_distribution`).
//!
//! A run that needs them records the histogram of its final loads ([`LoadCounts`]) through
//! an observer ([`FinalLoads`]): on the level engine the histogram is the engine's own state
//! (O(levels)); on the bin engine the loads are counted once at the end (O(n)). Loads must be
//! ball counts (unit weights): the checks of [`refusal`] refuse weights.

use ballast_core::{LoadState, Observer};
use serde::{Deserialize, Serialize};

use crate::problem::Msg;
use crate::statistic::Statistic;

/// The histogram of one run's final loads: `counts[j]` bins with load `lo + j`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct LoadCounts {
    /// The smallest load.
    pub lo: u64,
    /// Bins per load, from `lo` up.
    pub counts: Vec<u64>,
}

impl LoadCounts {
    /// Number of bins.
    pub(crate) fn bins(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The average load `W/n`.
    pub(crate) fn average(&self) -> f64 {
        let w: u128 = self
            .counts
            .iter()
            .enumerate()
            .map(|(j, &c)| u128::from(c) * u128::from(self.lo + j as u64))
            .sum();
        w as f64 / self.bins().max(1) as f64
    }

    /// The loads in increasing order (the i-th lightest bin's load at index i − 1).
    pub(crate) fn sorted(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.bins() as usize);
        for (j, &c) in self.counts.iter().enumerate() {
            out.extend(std::iter::repeat_n((self.lo + j as u64) as f64, c as usize));
        }
        out
    }

    /// The balls above `c`: Σ over the bins of max(0, load − c).
    pub(crate) fn above(&self, c: u64) -> u64 {
        let at = |j: usize| self.lo + j as u64;
        self.counts.iter().enumerate().map(|(j, &k)| k * at(j).saturating_sub(c)).sum()
    }

    /// The `k` largest loads, largest first (fewer when there are fewer bins).
    pub(crate) fn top(&self, k: usize) -> Vec<f64> {
        let mut out = Vec::with_capacity(k);
        for (j, &c) in self.counts.iter().enumerate().rev() {
            let take = (c as usize).min(k - out.len());
            out.extend(std::iter::repeat_n((self.lo + j as u64) as f64, take));
            if out.len() == k {
                break;
            }
        }
        out
    }
}

/// Records the histogram of the final loads: at the observation where the total reaches
/// the start's total plus `m` (unit balls), or, if the engine never reported its start, at
/// the last observation.
pub(crate) struct FinalLoads {
    /// Whether it records anything (off: an observer that does nothing).
    on: bool,
    m: u64,
    target: Option<f64>,
    /// The histogram, once seen.
    pub counts: Option<LoadCounts>,
}

impl FinalLoads {
    /// An observer for a run of `m` balls (`on = false`: one that records nothing).
    pub(crate) fn new(m: u64, on: bool) -> Self {
        Self { on, m, target: None, counts: None }
    }
}

impl Observer for FinalLoads {
    const PER_BALL: bool = false;
    fn on_start<S: LoadState>(&mut self, state: &S) {
        self.target = Some(state.total() + self.m as f64);
    }
    fn on_observation<S: LoadState>(&mut self, state: &S) {
        if self.on && self.target.is_none_or(|t| state.total() >= t - 0.5) {
            self.counts = state.load_counts().map(|(lo, counts)| LoadCounts { lo, counts });
        }
    }
}

/// Two observers of one run, each called in turn.
pub(crate) struct Both<'a, A, B>(pub &'a mut A, pub &'a mut B);

impl<A: Observer, B: Observer> Observer for Both<'_, A, B> {
    const PER_BALL: bool = A::PER_BALL || B::PER_BALL;
    fn on_ball<S: LoadState>(&mut self, state: &S, bin: usize, weight: f64) {
        if A::PER_BALL {
            self.0.on_ball(state, bin, weight);
        }
        if B::PER_BALL {
            self.1.on_ball(state, bin, weight);
        }
    }
    fn on_observation<S: LoadState>(&mut self, state: &S) {
        self.0.on_observation(state);
        self.1.on_observation(state);
    }
    fn on_start<S: LoadState>(&mut self, state: &S) {
        self.0.on_start(state);
        self.1.on_start(state);
    }
}

/// The largest loads reported by `top_loads` unless the series sets `top_k`: the 10 heaviest
/// bins (all of them below 10).
pub const TOP_K: usize = 10;

/// At most this many bins for `sorted_loads` (one row per bin).
pub const MAX_SORTED_BINS: u64 = 100_000;

/// Whether the statistic reads the final load histogram.
pub(crate) fn reads_histogram(s: Statistic) -> bool {
    matches!(
        s,
        Statistic::LoadDistribution
            | Statistic::SortedLoads
            | Statistic::TopLoads
            | Statistic::BallsAbove
    )
}

/// Whether a series with `statistic` and `also` records the final load histogram.
pub(crate) fn wanted(statistic: Statistic, also: &[Statistic]) -> bool {
    std::iter::once(&statistic).chain(also).any(|&s| reads_histogram(s))
}

/// The refusal of a final-load statistic at a point (the key it is about, `statistic` or
/// `also`, and the message): weighted balls (loads are not ball counts), a recovery target
/// (its runs have their own observer), more than [`MAX_SORTED_BINS`] bins for
/// `sorted_loads`.
pub(crate) fn refusal(
    statistic: Statistic,
    also: &[Statistic],
    spec: &ballast_core::RunSpec,
    recovery: bool,
    ctx: &str,
) -> Option<(&'static str, Msg)> {
    let t = std::iter::once(&statistic).chain(also).copied().find(|&s| reads_histogram(s))?;
    let key = if t == statistic { "statistic" } else { "also" };
    let name = t.name();
    if !matches!(spec.weights, ballast_core::Weights::Unit) {
        return Some((
            key,
            Msg::in_ctx(
                ctx,
                format!(
                    "statistic = \"{name}\" reads the final loads as ball counts: unit \
                 weights only (remove `weights`)"
                ),
            ),
        ));
    }
    if spec.process.reallocates() {
        return Some((
            key,
            Msg::in_ctx(
                ctx,
                format!(
                    "statistic = \"{name}\" reads the final loads, which the `equalize` \
                 loop does not report (it keeps its own load store); use max_load, min_load, \
                 final_gap or empty_bins"
                ),
            ),
        ));
    }
    if !spec.capacities.is_unit() {
        return Some((
            key,
            Msg::in_ctx(
                ctx,
                format!(
                    "statistic = \"{name}\" reads the final loads as ball counts; with \
                 `capacities` they are normalised loads x_i/c_i (remove `capacities`)"
                ),
            ),
        ));
    }
    if recovery {
        return Some((
            key,
            Msg::in_ctx(
                ctx,
                format!(
                    "statistic = \"{name}\" cannot be combined with `recovery_target`; \
                 expected one of them in a series"
                ),
            ),
        ));
    }
    if t == Statistic::SortedLoads && spec.n > MAX_SORTED_BINS {
        return Some((
            key,
            Msg::in_ctx(
                ctx,
                format!(
                    "statistic = \"sorted_loads\" gives one row per bin: at most \
                 {MAX_SORTED_BINS} bins (n = {}); use `load_distribution` or `top_loads`",
                    spec.n
                ),
            ),
        ));
    }
    None
}

/// Per run, the values of a final-load statistic that has one value per rank: the sorted
/// loads (lightest first) or the `top_k` largest (largest first); empty for a run without
/// a histogram.
pub(crate) fn per_rank(loads: Option<&LoadCounts>, statistic: Statistic, top_k: usize) -> Vec<f64> {
    match (loads, statistic) {
        (Some(l), Statistic::SortedLoads) => l.sorted(),
        (Some(l), Statistic::TopLoads) => l.top(top_k),
        _ => Vec::new(),
    }
}

/// The normalised load distribution of the runs: per offset x = load − W/n seen in some
/// run (ascending), the fraction of each run's bins at it (0 where a run has none).
pub(crate) fn distribution(runs: &[&LoadCounts]) -> Vec<(f64, Vec<f64>)> {
    use std::collections::BTreeMap;
    // Keyed by the offset in millionths (the averages of the runs agree; a start state or a
    // truncated step could make them differ, and then offsets stay apart).
    let mut cells: BTreeMap<i64, (f64, Vec<f64>)> = BTreeMap::new();
    for (r, l) in runs.iter().enumerate() {
        let (avg, bins) = (l.average(), l.bins().max(1) as f64);
        for (j, &c) in l.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            let x = (l.lo + j as u64) as f64 - avg;
            let cell =
                cells.entry((x * 1e6).round() as i64).or_insert_with(|| (x, vec![0.0; runs.len()]));
            cell.1[r] = c as f64 / bins;
        }
    }
    cells.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(lo: u64, counts: &[u64]) -> LoadCounts {
        LoadCounts { lo, counts: counts.to_vec() }
    }

    #[test]
    fn sorted_top_and_average_of_a_histogram() {
        let l = counts(2, &[1, 0, 3]);
        assert_eq!(l.sorted(), vec![2.0, 4.0, 4.0, 4.0]);
        assert_eq!(l.top(2), vec![4.0, 4.0]);
        assert_eq!(l.top(10), vec![4.0, 4.0, 4.0, 2.0]);
        assert_eq!(l.average(), 3.5);
        assert_eq!(l.bins(), 4);
    }

    #[test]
    fn distribution_pools_the_offsets_of_every_run() {
        let (a, b) = (counts(1, &[1, 1]), counts(0, &[1, 0, 1]));
        let d = distribution(&[&a, &b]);
        let xs: Vec<f64> = d.iter().map(|c| c.0).collect();
        // Loads 1, 2 (average 1.5) and 0, 2 (average 1): offsets ±0.5 and ±1.
        assert_eq!(xs, vec![-1.0, -0.5, 0.5, 1.0]);
        assert_eq!(d[0].1, vec![0.0, 0.5]);
        assert_eq!(d[1].1, vec![0.5, 0.0]);
        assert_eq!(d[2].1, vec![0.5, 0.0]);
        assert_eq!(d[3].1, vec![0.0, 0.5]);
    }

    #[test]
    fn the_observer_keeps_the_final_histogram_of_both_engines() {
        use ballast_core::{sim_rng, simulate_observed, Engine, ProcessSpec, RunSpec};
        for engine in [Engine::Bins, Engine::Levels] {
            let mut spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 50, 500).engine(engine);
            spec.observe_every = Some(100);
            let mut seen = FinalLoads::new(spec.m, true);
            let out = simulate_observed(&spec, &mut sim_rng(7), &mut seen).expect("runs");
            let l = seen.counts.expect("a histogram");
            assert_eq!(l.bins(), 50);
            assert_eq!(l.average(), 10.0);
            assert_eq!(l.lo as f64, out.min_load);
            assert_eq!((l.lo + l.counts.len() as u64 - 1) as f64, out.max_load);
        }
    }
}
