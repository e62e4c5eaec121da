//! Unfair d-Choice (the ball joins a most loaded of d samples): the full-state law of both
//! engines against the exact law, computed by enumerating the Markov chain of sorted load
//! vectors; and deliberately wrong variants (the fair d-Choice, One-Choice) that the same
//! test rejects.
//!
//! Seed 4242, significance level `common::ALPHA` = 0.001, Pearson's chi-square goodness of
//! fit over the sorted final load vectors (categories with an expected count below 5 merged).
//! Power: at n = 3, m = 5 and 20 000 runs the wrong variants differ from the exact law by
//! probability differences of 0.1 or more in the leading categories, which puts their
//! statistic in the thousands against a critical value near 30: rejected with certainty for
//! practical purposes; the correct engines pass with probability 1 − ALPHA at any seed.

mod common;

use std::collections::BTreeMap;

use ballast_core::{derive_seed, sim_rng, simulate_observed, Engine, ProcessSpec, RunSpec};
use common::{exact_sorted_law, lumped_fit, FinalState};

/// Exact law of the sorted load vector after `m` balls of Unfair d-Choice on `n` bins: the
/// ball goes to the earliest most loaded sample.
fn exact_law(n: usize, m: usize, d: u32) -> BTreeMap<Vec<u64>, f64> {
    exact_sorted_law(n, m, d, |loads, s| {
        s.iter().copied().reduce(|best, j| if loads[j] > loads[best] { j } else { best }).unwrap()
    })
}

/// Chi-square statistic and critical value of `runs` runs of `spec` against `law`.
fn fit(spec: &RunSpec, law: &BTreeMap<Vec<u64>, f64>, runs: u64) -> (f64, f64) {
    let mut counts: BTreeMap<Vec<u64>, u64> = law.keys().map(|k| (k.clone(), 0)).collect();
    for r in 0..runs {
        let mut obs = FinalState::default();
        simulate_observed(spec, &mut sim_rng(derive_seed(4242, &[r])), &mut obs).unwrap();
        *counts.get_mut(&obs.0).unwrap_or_else(|| panic!("impossible state {:?}", obs.0)) += 1;
    }
    let counts: Vec<u64> = counts.into_values().collect();
    let (stat, crit) = lumped_fit(&counts, law.values().copied(), runs);
    (stat, crit)
}

#[test]
fn both_engines_follow_the_exact_full_state_law() {
    let (n, m, runs) = (3usize, 5usize, 20_000u64);
    for d in [2u32, 3] {
        let law = exact_law(n, m, d);
        assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
        for engine in [Engine::Bins, Engine::Levels] {
            let spec =
                RunSpec::new(ProcessSpec::UnfairDChoice { d }, n as u64, m as u64).engine(engine);
            let (stat, crit) = fit(&spec, &law, runs);
            assert!(stat < crit, "d = {d}, {engine:?}: chi2 = {stat:.1} >= {crit:.1}");
        }
    }
}

#[test]
fn the_test_rejects_wrong_variants() {
    let (n, m, runs) = (3usize, 5usize, 20_000u64);
    let law = exact_law(n, m, 2);
    for wrong in [ProcessSpec::DChoice { d: 2 }, ProcessSpec::OneChoice] {
        let spec = RunSpec::new(wrong.clone(), n as u64, m as u64).engine(Engine::Bins);
        let (stat, crit) = fit(&spec, &law, runs);
        assert!(stat > crit, "{wrong:?} passed as unfair_d_choice: chi2 = {stat:.1}");
    }
}

#[test]
fn unfair_choice_spreads_loads_more_than_one_choice() {
    // The ball joins the heavier sample, so the gap exceeds One-Choice's: over 20 runs of
    // m = 100 n balls on n = 100 bins the mean gaps are about 121 and 26 at this seed.
    let mean_gap = |p: ProcessSpec| {
        let spec = RunSpec::new(p, 100, 10_000);
        (0..20u64)
            .map(|r| ballast_core::simulate(&spec, &mut sim_rng(derive_seed(9, &[r]))).unwrap())
            .map(|o| o.final_gap)
            .sum::<f64>()
            / 20.0
    };
    let unfair = mean_gap(ProcessSpec::UnfairDChoice { d: 2 });
    let fair = mean_gap(ProcessSpec::OneChoice);
    assert!(unfair > 2.0 * fair, "{unfair} vs {fair}");
}
