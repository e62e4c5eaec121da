//! k-Threshold (two samples seen through k questions "load >= W/n + f_j?", fewer "yes"
//! answers wins, a coin between equal counts): the full-state law of both engines against the
//! exact law, enumerated over every ordered sample pair (the coin splitting ties), and
//! deliberately wrong variants that the same test rejects.
//!
//! Seed 7070, significance level `common::ALPHA` = 0.001, Pearson's chi-square goodness of
//! fit over the sorted final load vectors (categories with an expected count below 5 merged),
//! 20 000 runs per case, at n = 3, m = 6 and n = 4, m = 7, thresholds [0] and [-1, 0, 1]
//! (integers, so the enumeration decides `x >= W/n + f` exactly as `n x >= W + n f`). The
//! correct rule passes with probability 1 − ALPHA at any seed (observed statistics 1.7 to
//! 8.7 against critical values 20.5 to 26.1). Power: Two-Choice (full information),
//! One-Choice, and k-Threshold with the thresholds [1] instead of [0] place balls
//! differently whenever both samples sit on the same side of a threshold; against the law of
//! f = [0] at n = 3, m = 6 their statistics are 325, 54 926 and 12 584 against 20.5:
//! rejected with power 1 for practical purposes.

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{self, check_run, ParamValue};
use ballast_core::{derive_seed, sim_rng, simulate_observed, Engine, ProcessSpec, RunSpec};
use common::{lumped_fit, FinalState};

/// Exact law of the sorted load vector after `m` balls of k-Threshold with integer
/// thresholds `f` on `n` bins.
fn exact_law(n: usize, m: usize, f: &[i64]) -> BTreeMap<Vec<u64>, f64> {
    let mut states: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    states.insert(vec![0; n], 1.0);
    for w in 0..m as i64 {
        let mut next: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
        for (loads, &pr) in &states {
            let yes = |i: usize| {
                f.iter().filter(|&&fj| n as i64 * loads[i] as i64 >= w + n as i64 * fj).count()
            };
            let q = pr / (n * n) as f64;
            for a in 0..n {
                for b in 0..n {
                    let (ya, yb) = (yes(a), yes(b));
                    let to: Vec<(usize, f64)> = if ya < yb {
                        vec![(a, q)]
                    } else if yb < ya {
                        vec![(b, q)]
                    } else {
                        vec![(a, q / 2.0), (b, q / 2.0)]
                    };
                    for (bin, p) in to {
                        let mut v = loads.clone();
                        v[bin] += 1;
                        v.sort_unstable();
                        *next.entry(v).or_insert(0.0) += p;
                    }
                }
            }
        }
        states = next;
    }
    states
}

fn k_threshold(f: &[f64]) -> ProcessSpec {
    registry::find("k_threshold").unwrap().build(&[("f", ParamValue::List(f.to_vec()))]).unwrap()
}

/// Chi-square statistic and critical value of `runs` runs of `spec` against `law`; a state
/// outside the law's support makes the statistic infinite.
fn fit(spec: &RunSpec, law: &BTreeMap<Vec<u64>, f64>, runs: u64) -> (f64, f64) {
    let mut counts: BTreeMap<Vec<u64>, u64> = law.keys().map(|k| (k.clone(), 0)).collect();
    let mut outside = 0u64;
    for r in 0..runs {
        let mut obs = FinalState::default();
        simulate_observed(spec, &mut sim_rng(derive_seed(7070, &[r])), &mut obs).unwrap();
        match counts.get_mut(&obs.0) {
            Some(c) => *c += 1,
            None => outside += 1,
        }
    }
    let counts: Vec<u64> = counts.into_values().collect();
    let (stat, crit) = lumped_fit(&counts, law.values().copied(), runs);
    (if outside > 0 { f64::INFINITY } else { stat }, crit)
}

const RUNS: u64 = 20_000;

#[test]
fn both_engines_follow_the_exact_law() {
    for (n, m) in [(3usize, 6usize), (4, 7)] {
        for f in [vec![0i64], vec![-1, 0, 1]] {
            let law = exact_law(n, m, &f);
            assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
            let ff: Vec<f64> = f.iter().map(|&x| x as f64).collect();
            for engine in [Engine::Bins, Engine::Levels] {
                let spec = RunSpec::new(k_threshold(&ff), n as u64, m as u64).engine(engine);
                assert!(check_run(&spec).unwrap().is_empty());
                let (stat, crit) = fit(&spec, &law, RUNS);
                let at = format!("n = {n}, m = {m}, f = {f:?}, {engine:?}");
                eprintln!("{at}: chi2 = {stat:.1} (critical {crit:.1})");
                assert!(stat < crit, "{at}: chi2 = {stat:.1} >= {crit:.1}");
            }
        }
    }
}

#[test]
fn the_test_rejects_wrong_variants() {
    let (n, m) = (3usize, 6usize);
    let law = exact_law(n, m, &[0]);
    for wrong in [ProcessSpec::DChoice { d: 2 }, ProcessSpec::OneChoice, k_threshold(&[1.0])] {
        let spec = RunSpec::new(wrong.clone(), n as u64, m as u64).engine(Engine::Bins);
        let (stat, crit) = fit(&spec, &law, RUNS);
        eprintln!("wrong {wrong:?}: chi2 = {stat:.1} (critical {crit:.1})");
        assert!(stat > crit, "{wrong:?} passed as k_threshold f = [0]: chi2 = {stat:.1}");
    }
}

#[test]
fn thresholds_are_checked() {
    let def = registry::find("k_threshold").unwrap();
    let f = def.param("f").unwrap();
    assert_eq!(def.parse_value(f, "-1,0,2.5").unwrap(), ParamValue::List(vec![-1.0, 0.0, 2.5]));
    for (bad, why) in [(vec![1.0, 1.0], "strictly increasing"), (vec![2.0, 1.0], "increasing")] {
        let e = def.build(&[("f", ParamValue::List(bad.clone()))]).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("f"));
        assert!(e.message.contains(why), "{bad:?}: {e}");
    }
    let e = def.build(&[("f", ParamValue::List(vec![f64::NAN]))]).unwrap_err();
    assert_eq!(e.param.as_deref(), Some("f"));
    // Batched: the bin engine; the level engine has no batch law for it.
    let spec = RunSpec::new(k_threshold(&[0.0, 1.0]), 100, 10_000).batched(100);
    assert!(check_run(&spec).unwrap().is_empty());
    assert!(check_run(&spec.clone().engine(Engine::Levels)).is_err());
    assert!(ballast_core::simulate(&spec, &mut sim_rng(5)).unwrap().final_gap.is_finite());
}
