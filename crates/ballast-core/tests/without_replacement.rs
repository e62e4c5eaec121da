//! Sampling without replacement (`replacement = false` of d-Choice and Unfair d-Choice): the
//! full-state law of both engines against the exact law, computed by enumerating the Markov
//! chain of sorted load vectors over every ordered tuple of *distinct* bins; and the
//! with-replacement processes, deliberately wrong here, rejected by the same test.
//!
//! Seed 5150, significance level `common::ALPHA` = 0.001, Pearson's chi-square goodness of
//! fit over the sorted final load vectors (categories with an expected count below 5
//! merged), 20 000 runs per case: n = 3, m = 5 (d = 2) and n = 4, m = 6 (d = 2, 3), the tie
//! rules random, first and lowest_index, both engines; critical values 10.8 to 22.5. The
//! correct rule passes with probability 1 − ALPHA at any seed (observed statistics 0.0 to
//! 5.6). Power: with replacement the two samples coincide with probability 1/n, and then the
//! ball goes to a uniform bin whatever the loads, so at n = 3 the sampled-with-replacement
//! processes reach states the distinct law gives probability 0 (2 609 and 3 999 of the
//! 20 000 runs), and on the shared states their frequencies are off by 0.1 or more (the
//! balanced state [1, 2, 2] has probability 26/27 without replacement): statistics 2 531
//! (d-Choice) and 822 (Unfair d-Choice) against 10.8 and 13.8, rejected with power 1 for
//! practical purposes.

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{self, check_run, ParamValue};
use ballast_core::{
    derive_seed, sim_rng, simulate_observed, DelayMode, Engine, ProcessSpec, RunSpec, Setting,
    TieBreak,
};
use common::{chi2_critical, chi2_gof, FinalState};

/// Exact law of the sorted load vector after `m` balls on `n` bins when the `d` samples are
/// distinct (each ordered tuple of distinct bins equally likely) and the ball goes to
/// `pick(loads, samples)`.
fn exact_distinct_law(
    n: usize,
    m: usize,
    d: usize,
    pick: impl Fn(&[u64], &[usize]) -> usize,
) -> BTreeMap<Vec<u64>, f64> {
    let tuples: Vec<Vec<usize>> = (0..n.pow(d as u32))
        .map(|t| (0..d).map(|k| t / n.pow(k as u32) % n).collect::<Vec<_>>())
        .filter(|s| (0..d).all(|a| (a + 1..d).all(|b| s[a] != s[b])))
        .collect();
    let mut states: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    states.insert(vec![0; n], 1.0);
    for _ in 0..m {
        let mut next: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
        for (loads, &pr) in &states {
            for s in &tuples {
                let mut v = loads.clone();
                v[pick(loads, s)] += 1;
                v.sort_unstable();
                *next.entry(v).or_insert(0.0) += pr / tuples.len() as f64;
            }
        }
        states = next;
    }
    states
}

fn least(loads: &[u64], s: &[usize]) -> usize {
    *s.iter().min_by_key(|&&j| loads[j]).unwrap()
}

fn most(loads: &[u64], s: &[usize]) -> usize {
    *s.iter().max_by_key(|&&j| loads[j]).unwrap()
}

/// Chi-square statistic and critical value of `runs` runs of `spec` against `law`, over the
/// runs that end in a state of positive probability, and the number of the others.
fn fit(spec: &RunSpec, law: &BTreeMap<Vec<u64>, f64>, runs: u64) -> (f64, f64, u64) {
    let mut counts: BTreeMap<Vec<u64>, u64> = law.keys().map(|k| (k.clone(), 0)).collect();
    let mut impossible = 0u64;
    for r in 0..runs {
        let mut obs = FinalState::default();
        simulate_observed(spec, &mut sim_rng(derive_seed(5150, &[r])), &mut obs).unwrap();
        match counts.get_mut(&obs.0) {
            Some(c) => *c += 1,
            None => impossible += 1,
        }
    }
    let (mut o_cat, mut p_cat) = (Vec::new(), Vec::new());
    let (mut o_acc, mut p_acc) = (0u64, 0.0f64);
    for (k, p) in law {
        o_acc += counts[k];
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
    (stat, chi2_critical(df), impossible)
}

const N: usize = 3;
const M: usize = 5;
const RUNS: u64 = 20_000;

fn spec(p: ProcessSpec, engine: Engine) -> RunSpec {
    RunSpec::new(p, N as u64, M as u64).engine(engine)
}

#[test]
fn both_engines_follow_the_exact_law_without_replacement() {
    // The figure quoted in the module docs.
    let fair = exact_distinct_law(N, M, 2, least);
    assert!((fair[&vec![1, 2, 2]] - 26.0 / 27.0).abs() < 1e-12, "{}", fair[&vec![1, 2, 2]]);
    // n = 3, m = 5 as in the docs; n = 4, m = 6 with d = 2 and 3 for more categories.
    for (n, m, d) in [(N, M, 2usize), (4, 6, 2), (4, 6, 3)] {
        let fair = exact_distinct_law(n, m, d, least);
        let unfair = exact_distinct_law(n, m, d, most);
        for law in [&fair, &unfair] {
            assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        let d32 = d as u32;
        for engine in [Engine::Bins, Engine::Levels] {
            for (p, law, tie) in [
                (ProcessSpec::DChoiceDistinct { d: d32 }, &fair, TieBreak::Random),
                (ProcessSpec::DChoiceDistinct { d: d32 }, &fair, TieBreak::First),
                (ProcessSpec::DChoiceDistinct { d: d32 }, &fair, TieBreak::LowestIndex),
                (ProcessSpec::UnfairDChoiceDistinct { d: d32 }, &unfair, TieBreak::First),
            ] {
                let s = RunSpec::new(p.clone(), n as u64, m as u64).engine(engine).tie_break(tie);
                let (stat, crit, impossible) = fit(&s, law, RUNS);
                let at = format!("n = {n}, m = {m}, {p:?}, {tie:?}, {engine:?}");
                eprintln!("{at}: chi2 = {stat:.1} (critical {crit:.1})");
                assert_eq!(impossible, 0, "{at}: a state of probability 0");
                assert!(stat < crit, "{at}: chi2 = {stat:.1} >= {crit:.1}");
            }
        }
    }
}

#[test]
fn the_test_rejects_sampling_with_replacement() {
    let fair = exact_distinct_law(N, M, 2, least);
    let unfair = exact_distinct_law(N, M, 2, most);
    for (wrong, law) in
        [(ProcessSpec::DChoice { d: 2 }, &fair), (ProcessSpec::UnfairDChoice { d: 2 }, &unfair)]
    {
        let (stat, crit, impossible) = fit(&spec(wrong.clone(), Engine::Bins), law, RUNS);
        eprintln!("wrong {wrong:?}: chi2 = {stat:.1} (critical {crit:.1}), {impossible} runs");
        // Rejected twice over: it reaches states of probability 0, and on the states it
        // shares with the law its frequencies are off too.
        assert!(impossible > 0, "{wrong:?}: no run outside the support");
        assert!(stat > crit, "{wrong:?} passed as its distinct variant: chi2 = {stat:.1}");
    }
}

#[test]
fn all_n_distinct_samples_see_every_bin() {
    // d = n: every bin is sampled, so d-Choice fills the least loaded bin and Unfair
    // d-Choice the most loaded one, on both engines and in every run.
    for engine in [Engine::Bins, Engine::Levels] {
        for (p, end) in [
            (ProcessSpec::DChoiceDistinct { d: 3 }, vec![2, 2, 3]),
            (ProcessSpec::UnfairDChoiceDistinct { d: 3 }, vec![0, 0, 7]),
        ] {
            let s = RunSpec::new(p.clone(), 3, 7).engine(engine);
            for r in 0..200 {
                let mut obs = FinalState::default();
                simulate_observed(&s, &mut sim_rng(derive_seed(77, &[r])), &mut obs).unwrap();
                assert_eq!(obs.0, end, "{p:?} on {engine:?}");
            }
        }
    }
}

#[test]
fn the_option_is_declared_once_and_checked() {
    let f = ParamValue::Bool(false);
    // Default: with replacement, the same spec (and values) as before the option existed.
    assert_eq!(
        registry::find("two_choice").unwrap().build(&[]).unwrap(),
        ProcessSpec::DChoice { d: 2 }
    );
    for (kind, given, want) in [
        ("two_choice", vec![], ProcessSpec::DChoiceDistinct { d: 2 }),
        ("three_choice", vec![], ProcessSpec::DChoiceDistinct { d: 3 }),
        ("d_choice", vec![("d", ParamValue::Num(4.0))], ProcessSpec::DChoiceDistinct { d: 4 }),
        (
            "unfair_d_choice",
            vec![("d", ParamValue::Num(2.0))],
            ProcessSpec::UnfairDChoiceDistinct { d: 2 },
        ),
    ] {
        let mut given = given;
        given.push(("replacement", f.clone()));
        let built = registry::find(kind).unwrap().build(&given).unwrap();
        assert_eq!(built, want, "{kind}");
        assert_eq!(
            registry::def_of(&built).name,
            if kind == "unfair_d_choice" { kind } else { "d_choice" }
        );
    }
    // d > n: refused by the front ends' check and by the spec's validation.
    let s = RunSpec::new(ProcessSpec::DChoiceDistinct { d: 4 }, 3, 10);
    let e = check_run(&s).unwrap_err();
    assert_eq!(e.param.as_deref(), Some("d"));
    assert!(e.message.contains("d <= n"), "{e}");
    assert!(s.validate().is_err());
    // The delay engine draws with replacement.
    let mut s = RunSpec::new(ProcessSpec::DChoiceDistinct { d: 2 }, 10, 100);
    s.setting = Setting::Delay { tau: 5, mode: DelayMode::Random };
    assert_eq!(check_run(&s).unwrap_err().param.as_deref(), Some("replacement"));
    // The level engine has no batch law for it; auto falls back to the bin engine.
    let s = RunSpec::new(ProcessSpec::DChoiceDistinct { d: 2 }, 10, 1 << 20).batched(1 << 16);
    assert_eq!(ballast_core::resolve_engine(&s).unwrap(), Engine::Bins);
    let e = check_run(&s.clone().engine(Engine::Levels)).unwrap_err();
    assert!(e.message.contains("sequentially only"), "{e}");
    // Batched and weighted runs on the bin engine run.
    let s = RunSpec::new(ProcessSpec::DChoiceDistinct { d: 2 }, 50, 5000)
        .batched(100)
        .weights(ballast_core::Weights::Exp { mean: 1.0 });
    assert!(check_run(&s).unwrap().is_empty());
    assert!(ballast_core::simulate(&s, &mut sim_rng(1)).unwrap().final_gap.is_finite());
}
