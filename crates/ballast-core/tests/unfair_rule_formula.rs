//! Unfair Two-Choice (Redlich's Unfair d-Choice with d = 2: the heavier of two uniform
//! samples, ties at random) written as a rule formula, tested against the built-in
//! `unfair_d_choice` (ties to the earliest sample) and against the exact law of the sorted
//! loads computed from the definition: the built-in's tie rule and a uniformly random tie
//! are the same process in law.
//!
//! Seed 4343, Pearson's χ² over the sorted final load vectors at n = 3, m = 5, 20 000 runs
//! per case, categories with an expected count below 5 merged (`common::lumped_fit`), at
//! α = 0.001 ([`common::ALPHA`]). The formula with random ties and the built-in pass on both
//! engines with probability 1 − α each at any seed. Power: the deliberately wrong formula (the
//! lighter sample, `x1 < x2` in place of `x1 > x2`) is Two-Choice, whose exact law puts
//! 0.774 on the sorted state (1, 2, 2) against Unfair Two-Choice's 0.077, and 0.0002 on
//! (0, 0, 5) against 0.095: its statistic is in the thousands against the critical value of
//! at most four degrees of freedom (18.5), and the test asserts it is rejected.

mod common;

use std::collections::BTreeMap;

use ballast_core::{derive_seed, sim_rng, simulate_observed, Engine, ProcessSpec, RunSpec};
use common::{exact_sorted_law, lumped_fit, FinalState};

const N: usize = 3;
const M: usize = 5;
const RUNS: u64 = 20_000;

/// The exact law from the definition: the heavier of the two samples, the first on a tie
/// (the same law as a uniform tie for i.i.d. samples, which is what the test checks).
fn exact_law() -> BTreeMap<Vec<u64>, f64> {
    exact_sorted_law(N, M, 2, |loads, s| if loads[s[1]] > loads[s[0]] { s[1] } else { s[0] })
}

/// A `rule` process with decision formula `choose` over two samples.
fn rule(choose: &str) -> ProcessSpec {
    let f = ballast_core::rule_formula::parse(choose, 2).expect("a decision formula");
    ProcessSpec::Rule { d: 2, choose: f, replacement: true }
}

/// χ² statistic and critical value of `RUNS` runs of `process` on `engine` against the law.
fn fit(process: ProcessSpec, engine: Engine, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    let spec = RunSpec::new(process, N as u64, M as u64).engine(engine);
    let mut counts: BTreeMap<Vec<u64>, u64> = law.keys().map(|k| (k.clone(), 0)).collect();
    for r in 0..RUNS {
        let mut seen = FinalState::default();
        simulate_observed(&spec, &mut sim_rng(derive_seed(4343, &[r])), &mut seen).unwrap();
        *counts.get_mut(&seen.0).unwrap_or_else(|| panic!("impossible state {:?}", seen.0)) += 1;
    }
    let counts: Vec<u64> = counts.into_values().collect();
    lumped_fit(&counts, law.values().copied(), RUNS)
}

const RANDOM_TIES: &str = "if(x1 > x2, 1, if(x2 > x1, 2, if(u < 0.5, 1, 2)))";
const LIGHTER: &str = "if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))";

#[test]
fn the_formula_with_random_ties_and_the_builtin_follow_the_exact_law() {
    let law = exact_law();
    assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
    for engine in [Engine::Bins, Engine::Levels] {
        for (name, process) in
            [("formula", rule(RANDOM_TIES)), ("built-in", ProcessSpec::UnfairDChoice { d: 2 })]
        {
            let (stat, crit) = fit(process, engine, &law);
            assert!(stat < crit, "{name}, {engine:?}: chi2 = {stat:.1} >= {crit:.1}");
        }
    }
}

#[test]
fn the_same_test_rejects_the_lighter_sample() {
    let law = exact_law();
    let (stat, crit) = fit(rule(LIGHTER), Engine::Bins, &law);
    assert!(stat > crit, "the lighter sample passed as unfair: chi2 = {stat:.1} < {crit:.1}");
}
