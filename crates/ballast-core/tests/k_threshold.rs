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
//!
//! The formula form (`threshold` with `k`, a process item) is tested the same way, with the
//! same seed, α and runs: a formula equal to fixed offsets, and one that reads the round `t`
//! (the exact law then changes its offsets with the balls placed), on both engines; two
//! wrong formulas (the round misread by one ball, every threshold one higher) are rejected,
//! their noncentralities asserted >= 200 first.

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{self, check_run, ParamValue};
use ballast_core::{derive_seed, sim_rng, simulate_observed, Engine, ProcessSpec, RunSpec};
use common::{lumped_fit, FinalState};

/// Exact law of the sorted load vector after `m` balls of k-Threshold with integer
/// thresholds `f` on `n` bins.
fn exact_law(n: usize, m: usize, f: &[i64]) -> BTreeMap<Vec<u64>, f64> {
    exact_law_in_time(n, m, |_| f.to_vec())
}

/// [`exact_law`] with thresholds that change with the balls placed so far: `f_at(w)` are the
/// integer offsets above the average seen by ball `w + 1` (the `t` of a threshold formula).
fn exact_law_in_time(
    n: usize,
    m: usize,
    f_at: impl Fn(i64) -> Vec<i64>,
) -> BTreeMap<Vec<u64>, f64> {
    let mut states: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    states.insert(vec![0; n], 1.0);
    for w in 0..m as i64 {
        let f = f_at(w);
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

/// `k_threshold` in its formula form: `k` questions "load >= threshold?".
fn k_threshold_formula(k: u32, threshold: &str) -> ProcessSpec {
    let given =
        [("k", ParamValue::Num(f64::from(k))), ("threshold", ParamValue::Text(threshold.into()))];
    registry::find("k_threshold").unwrap().build(&given).unwrap()
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

/// The formula form (`threshold`, `k`): a formula equal to fixed offsets, and one that reads
/// the round `t` (offsets [-1, 0] for the first three balls, [1, 2] after), against the exact
/// law on both engines; same seed, α and runs as above. Observed statistics are printed.
#[test]
fn the_threshold_formula_follows_the_exact_law_on_both_engines() {
    let in_time = |w: i64| if w < 3 { vec![-1, 0] } else { vec![1, 2] };
    for (n, m) in [(3usize, 6usize), (4, 7)] {
        let cases = [
            (
                "avg + j - 2, k = 3",
                k_threshold_formula(3, "avg + j - 2"),
                exact_law(n, m, &[-1, 0, 1]),
            ),
            (
                "avg + if(t < 3, j - 2, j), k = 2",
                k_threshold_formula(2, "avg + if(t < 3, j - 2, j)"),
                exact_law_in_time(n, m, in_time),
            ),
        ];
        for (name, process, law) in &cases {
            assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
            for engine in [Engine::Bins, Engine::Levels] {
                let spec = RunSpec::new(process.clone(), n as u64, m as u64).engine(engine);
                assert!(check_run(&spec).unwrap().is_empty());
                let (stat, crit) = fit(&spec, law, RUNS);
                let at = format!("{name}, n = {n}, m = {m}, {engine:?}");
                eprintln!("{at}: chi2 = {stat:.1} (critical {crit:.1})");
                assert!(stat < crit, "{at}: chi2 = {stat:.1} >= {crit:.1}");
            }
        }
    }
}

/// Power of the formula test: the round misread (the switch at t < 2, one ball early) and every
/// threshold one higher are rejected. Each wrong law's noncentrality against the right one,
/// λ = RUNS·Σ(q − p)²/p, is asserted >= 200 first (the test then rejects with power above
/// 0.9999 at α = 0.001).
#[test]
fn the_threshold_formula_test_rejects_wrong_formulas() {
    let (n, m) = (3usize, 6usize);
    let right = exact_law_in_time(n, m, |w| if w < 3 { vec![-1, 0] } else { vec![1, 2] });
    let wrongs = [
        (
            "avg + if(t < 2, j - 2, j)",
            exact_law_in_time(n, m, |w| if w < 2 { vec![-1, 0] } else { vec![1, 2] }),
        ),
        (
            "avg + if(t < 3, j - 1, j + 1)",
            exact_law_in_time(n, m, |w| if w < 3 { vec![0, 1] } else { vec![2, 3] }),
        ),
    ];
    for (wrong, wrong_law) in &wrongs {
        let lambda: f64 = right
            .iter()
            .map(|(k, &p)| RUNS as f64 * (wrong_law.get(k).copied().unwrap_or(0.0) - p).powi(2) / p)
            .sum();
        assert!(lambda >= 200.0, "{wrong}: noncentrality {lambda:.0} < 200");
        for engine in [Engine::Bins, Engine::Levels] {
            let spec =
                RunSpec::new(k_threshold_formula(2, wrong), n as u64, m as u64).engine(engine);
            let (stat, crit) = fit(&spec, &right, RUNS);
            eprintln!("wrong {wrong} on {engine:?}: chi2 = {stat:.1} (critical {crit:.1}, λ = {lambda:.0})");
            assert!(stat > crit, "{wrong} on {engine:?} passed: chi2 = {stat:.1}");
        }
    }
}

/// The two forms exclude each other, the formula form needs `k` and samples with
/// replacement, a formula that is NaN at a probe of the run is refused at validation, and
/// the formula form runs batched on both engines.
#[test]
fn the_formula_form_is_checked() {
    let def = registry::find("k_threshold").unwrap();
    let text = |s: &str| ParamValue::Text(s.to_owned());
    let refused = [
        (vec![("threshold", text("avg")), ("f", ParamValue::List(vec![0.0]))], "f", "not both"),
        (vec![("threshold", text("avg"))], "k", "needs `k`"),
        (
            vec![("f", ParamValue::List(vec![0.0])), ("k", ParamValue::Num(1.0))],
            "k",
            "with `threshold`",
        ),
        (vec![], "f", "give `f`"),
        (
            vec![
                ("threshold", text("avg")),
                ("k", ParamValue::Num(1.0)),
                ("replacement", ParamValue::Bool(false)),
            ],
            "replacement",
            "with `f` only",
        ),
        (vec![("threshold", text("avg + x")), ("k", ParamValue::Num(1.0))], "threshold", "x"),
    ];
    for (given, param, why) in refused {
        let e = def.build(&given).map(|s| format!("{s:?}")).expect_err(&format!("{given:?}"));
        assert_eq!(e.param.as_deref(), Some(param), "{given:?}: {e}");
        assert!(e.message.contains(why), "{given:?}: {e}");
    }
    let nan = RunSpec::new(k_threshold_formula(2, "avg + sqrt(j - 2)"), 10, 100);
    let e = nan.validate().unwrap_err().to_string();
    assert!(e.contains("is NaN at j = 1, avg = 0, t = 0, n = 10"), "{e}");
    for engine in [Engine::Bins, Engine::Levels] {
        let spec = RunSpec::new(k_threshold_formula(2, "avg + j"), 100, 10_000)
            .batched(100)
            .engine(engine);
        assert!(check_run(&spec).unwrap().is_empty(), "{engine:?}");
        assert!(ballast_core::simulate(&spec, &mut sim_rng(5)).unwrap().final_gap.is_finite());
    }
}
