//! The allocation-vector process `rank_vector` (rank 1 = most loaded, ties in random order).
//!
//! Two-Choice's vector: the lighter of two uniform samples has rank i with probability
//! `(i² − (i − 1)²)/n² = (2i − 1)/n²`, so `rank_vector` with that vector must have
//! Two-Choice's law. Tested at n = 3, m = 5 and n = 4, m = 6 on both engines: Pearson's
//! goodness of fit of the sorted final load vector against the exact law of Two-Choice
//! (enumerated over all n² sample pairs), and a two-sample chi-square against `d_choice{d=2}`
//! simulated on the bin engine with other seeds. The reversed vector must have the law of
//! Unfair Two-Choice (the heavier of two samples).
//!
//! Seed 6060 (the rank vector) and 6061 (the d_choice sample), 20 000 runs per case,
//! significance level `common::ALPHA` = 0.001; categories with an expected count below 5
//! (goodness of fit) or a pooled count below 20 (two samples) merged. The correct vector
//! passes with probability 1 − ALPHA at any seed (observed statistics 0.4 to 7.1 against
//! critical values 16.3 to 26.1). Power: the uniform vector (One-Choice) and the reversed
//! vector (the heavier sample) put far more mass on unbalanced states; at n = 3 their
//! statistics are 49 461 and 468 851 (goodness of fit) and 7 336 and 22 864 (two samples)
//! against 16.3 and 18.5: rejected with power 1 for practical purposes.

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{self, check_run, ParamValue};
use ballast_core::{derive_seed, sim_rng, simulate_observed, Engine, ProcessSpec, RunSpec};
use common::{chi2_critical, chi2_gof, chi2_two_sample, exact_sorted_law, FinalState};

fn vector(kind: &str, n: usize) -> Vec<f64> {
    let nn = (n * n) as f64;
    (1..=n)
        .map(|i| match kind {
            "two_choice" => (2 * i - 1) as f64 / nn,
            "reversed" => (2 * (n - i) + 1) as f64 / nn,
            _ => 1.0,
        })
        .collect()
}

fn rank_vector(p: &[f64]) -> ProcessSpec {
    registry::find("rank_vector").unwrap().build(&[("p", ParamValue::List(p.to_vec()))]).unwrap()
}

/// Final sorted states of `runs` runs of `spec`, seeded from `seed`.
fn sample(spec: &RunSpec, runs: u64, seed: u64) -> BTreeMap<Vec<u64>, u64> {
    let mut counts = BTreeMap::new();
    for r in 0..runs {
        let mut obs = FinalState::default();
        simulate_observed(spec, &mut sim_rng(derive_seed(seed, &[r])), &mut obs).unwrap();
        *counts.entry(obs.0).or_insert(0) += 1;
    }
    counts
}

/// Goodness of fit of `counts` against `law` (statistic, critical value); a state outside
/// the law's support makes the statistic infinite.
fn gof(counts: &BTreeMap<Vec<u64>, u64>, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    if counts.keys().any(|k| !law.contains_key(k)) {
        return (f64::INFINITY, 0.0);
    }
    let runs: u64 = counts.values().sum();
    let (mut o_cat, mut p_cat) = (Vec::new(), Vec::new());
    let (mut o_acc, mut p_acc) = (0u64, 0.0f64);
    for (k, p) in law {
        o_acc += counts.get(k).copied().unwrap_or(0);
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

/// Two-sample chi-square of two state histograms (statistic, critical value).
fn two_sample(a: &BTreeMap<Vec<u64>, u64>, b: &BTreeMap<Vec<u64>, u64>) -> (f64, f64) {
    let keys: std::collections::BTreeSet<&Vec<u64>> = a.keys().chain(b.keys()).collect();
    let ha: Vec<u64> = keys.iter().map(|k| a.get(*k).copied().unwrap_or(0)).collect();
    let hb: Vec<u64> = keys.iter().map(|k| b.get(*k).copied().unwrap_or(0)).collect();
    let (stat, df) = chi2_two_sample(&ha, &hb);
    (stat, chi2_critical(df))
}

const RUNS: u64 = 20_000;

fn least(loads: &[u64], s: &[usize]) -> usize {
    *s.iter().min_by_key(|&&j| loads[j]).unwrap()
}

fn most(loads: &[u64], s: &[usize]) -> usize {
    *s.iter().max_by_key(|&&j| loads[j]).unwrap()
}

#[test]
fn two_choice_vector_has_two_choice_law_on_both_engines() {
    for (n, m) in [(3usize, 5usize), (4, 6)] {
        let two = exact_sorted_law(n, m, 2, least);
        let unfair = exact_sorted_law(n, m, 2, most);
        let d_choice =
            RunSpec::new(ProcessSpec::DChoice { d: 2 }, n as u64, m as u64).engine(Engine::Bins);
        let reference = sample(&d_choice, RUNS, 6061);
        for engine in [Engine::Levels, Engine::Bins] {
            for (kind, law) in [("two_choice", &two), ("reversed", &unfair)] {
                let spec =
                    RunSpec::new(rank_vector(&vector(kind, n)), n as u64, m as u64).engine(engine);
                assert!(check_run(&spec).unwrap().is_empty());
                let counts = sample(&spec, RUNS, 6060);
                let (stat, crit) = gof(&counts, law);
                eprintln!("n = {n}, {kind}, {engine:?}: chi2 = {stat:.1} (critical {crit:.1})");
                assert!(stat < crit, "n = {n}, {kind}, {engine:?}: {stat:.1} >= {crit:.1}");
                if kind == "two_choice" {
                    let (stat, crit) = two_sample(&counts, &reference);
                    eprintln!("  against d_choice: chi2 = {stat:.1} (critical {crit:.1})");
                    assert!(stat < crit, "n = {n}, {engine:?} vs d_choice: {stat:.1}");
                }
            }
        }
    }
}

#[test]
fn the_test_rejects_wrong_vectors() {
    let (n, m) = (3usize, 5usize);
    let two = exact_sorted_law(n, m, 2, least);
    let d_choice =
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, n as u64, m as u64).engine(Engine::Bins);
    let reference = sample(&d_choice, RUNS, 6061);
    for wrong in ["uniform", "reversed"] {
        let spec = RunSpec::new(rank_vector(&vector(wrong, n)), n as u64, m as u64);
        let counts = sample(&spec, RUNS, 6060);
        let (stat, crit) = gof(&counts, &two);
        let (stat2, crit2) = two_sample(&counts, &reference);
        eprintln!(
            "wrong {wrong}: chi2 = {stat:.1} ({crit:.1}), two-sample {stat2:.1} ({crit2:.1})"
        );
        assert!(stat > crit && stat2 > crit2, "the {wrong} vector passed as Two-Choice");
    }
}

#[test]
fn vectors_are_checked_and_normalised() {
    let def = registry::find("rank_vector").unwrap();
    let list = |v: &[f64]| [("p", ParamValue::List(v.to_vec()))];
    // Given up to a factor: [1, 3] is [0.25, 0.75].
    assert_eq!(
        def.build(&list(&[1.0, 3.0])).unwrap(),
        ProcessSpec::RankVector { cum: vec![0.25, 1.0] }
    );
    // The command line's form.
    let p = def.param("p").unwrap();
    assert_eq!(def.parse_value(p, "1, 3").unwrap(), ParamValue::List(vec![1.0, 3.0]));
    for (bad, why) in [
        (vec![1.0, -1.0], "expected a finite number >= 0"),
        (vec![0.0, 0.0], "positive finite sum"),
        (vec![], "expected a non-empty list"),
        (vec![1.0, f64::INFINITY], "expected a non-empty list"),
    ] {
        let e = def.build(&list(&bad)).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("p"));
        assert!(e.message.contains(why), "{bad:?}: {e}");
    }
    let e = def.parse_value(p, "1,x").unwrap_err().to_string();
    assert!(e.contains("list"), "{e}");
    // One entry per bin.
    let spec = RunSpec::new(def.build(&list(&[1.0, 1.0])).unwrap(), 3, 10);
    let e = check_run(&spec).unwrap_err();
    assert_eq!(e.param.as_deref(), Some("p"));
    assert!(e.message.contains("2 entries") && e.message.contains("n = 3"), "{e}");
    assert!(spec.validate().is_err());
    // auto: the level engine sequentially, the bin engine in batches; no batch law on levels.
    let spec = RunSpec::new(def.build(&list(&[1.0; 10])).unwrap(), 10, 100);
    assert_eq!(ballast_core::resolve_engine(&spec).unwrap(), Engine::Levels);
    let batched = spec.clone().batched(10);
    assert_eq!(ballast_core::resolve_engine(&batched).unwrap(), Engine::Bins);
    assert!(check_run(&batched.clone().engine(Engine::Levels)).is_err());
    let out = ballast_core::simulate(&batched, &mut sim_rng(3)).unwrap();
    assert!(out.final_gap.is_finite());
    // Weighted balls on the bin engine.
    let w = spec.weights(ballast_core::Weights::Exp { mean: 1.0 });
    assert!(check_run(&w).unwrap().is_empty());
    assert!(ballast_core::simulate(&w, &mut sim_rng(4)).unwrap().final_gap.is_finite());
}
