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
use common::{lumped_fit, FinalState};

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
    let counts: Vec<u64> = counts.into_values().collect();
    let (stat, crit) = lumped_fit(&counts, law.values().copied(), runs);
    (stat, crit, impossible)
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
                (ProcessSpec::DChoice { d: d32 }.without_replacement(), &fair, TieBreak::Random),
                (ProcessSpec::DChoice { d: d32 }.without_replacement(), &fair, TieBreak::First),
                (
                    ProcessSpec::DChoice { d: d32 }.without_replacement(),
                    &fair,
                    TieBreak::LowestIndex,
                ),
                (
                    ProcessSpec::UnfairDChoice { d: d32 }.without_replacement(),
                    &unfair,
                    TieBreak::First,
                ),
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
            (ProcessSpec::DChoice { d: 3 }.without_replacement(), vec![2, 2, 3]),
            (ProcessSpec::UnfairDChoice { d: 3 }.without_replacement(), vec![0, 0, 7]),
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
        ("two_choice", vec![], ProcessSpec::DChoice { d: 2 }.without_replacement()),
        ("three_choice", vec![], ProcessSpec::DChoice { d: 3 }.without_replacement()),
        (
            "d_choice",
            vec![("d", ParamValue::Num(4.0))],
            ProcessSpec::DChoice { d: 4 }.without_replacement(),
        ),
        (
            "unfair_d_choice",
            vec![("d", ParamValue::Num(2.0))],
            ProcessSpec::UnfairDChoice { d: 2 }.without_replacement(),
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
    let s = RunSpec::new(ProcessSpec::DChoice { d: 4 }.without_replacement(), 3, 10);
    let e = check_run(&s).unwrap_err();
    assert_eq!(e.param.as_deref(), Some("d"));
    assert!(e.message.contains("d <= n"), "{e}");
    assert!(s.validate().is_err());
    // The delay engine draws with replacement.
    let mut s = RunSpec::new(ProcessSpec::DChoice { d: 2 }.without_replacement(), 10, 100);
    s.setting = Setting::Delay { tau: 5, mode: DelayMode::Random };
    assert_eq!(check_run(&s).unwrap_err().param.as_deref(), Some("replacement"));
    // The level engine has no batch law for it; auto falls back to the bin engine.
    let s = RunSpec::new(ProcessSpec::DChoice { d: 2 }.without_replacement(), 10, 1 << 20)
        .batched(1 << 16);
    assert_eq!(ballast_core::resolve_engine(&s).unwrap(), Engine::Bins);
    let e = check_run(&s.clone().engine(Engine::Levels)).unwrap_err();
    assert!(e.message.contains("sequentially only"), "{e}");
    // Batched and weighted runs on the bin engine run.
    let s = RunSpec::new(ProcessSpec::DChoice { d: 2 }.without_replacement(), 50, 5000)
        .batched(100)
        .weights(ballast_core::Weights::Exp { mean: 1.0 });
    assert!(check_run(&s).unwrap().is_empty());
    assert!(ballast_core::simulate(&s, &mut sim_rng(1)).unwrap().final_gap.is_finite());
}

#[test]
fn only_the_kinds_that_take_the_option_run_without_replacement() {
    // The option is one wrapper; a spec made by hand around a kind without it is refused at
    // validation (and so by every engine), as is a doubled wrapper.
    for p in [
        ProcessSpec::OneChoice.without_replacement(),
        ProcessSpec::Twinning.without_replacement(),
        ProcessSpec::DChoice { d: 2 }.without_replacement().without_replacement(),
    ] {
        let s = RunSpec::new(p.clone(), 10, 100);
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains("replacement"), "{p:?}: {e}");
        assert!(ballast_core::simulate(&s, &mut sim_rng(1)).is_err(), "{p:?}");
    }
    // The kind, the comparison and the base parameters are those of the process inside.
    let p = ProcessSpec::OnePlusBeta { beta: 0.5 }.without_replacement();
    assert_eq!(p.kind(), "one_plus_beta");
    assert!(p.compares());
    assert_eq!(p.base(), &ProcessSpec::OnePlusBeta { beta: 0.5 });
    assert_eq!(
        ProcessSpec::GBounded { g: 1.0 }.with_replacement(true),
        ProcessSpec::GBounded { g: 1.0 }
    );
}

// ---------------------------------------------------------------------------------------
// The two-sample processes with `replacement = false`: (1+β), g-Bounded, g-Myopic,
// σ-Noisy-Load and k-Threshold on an ordered pair of distinct bins. Same seed, α, runs and
// chi-square as above (n = 3, m = 5 and n = 4, m = 6; both engines); the exact law sums the
// rule's destination law over the n(n − 1) ordered distinct pairs (a, b). The sorted load
// vector is a Markov chain whatever the tie rule (tied bins have equal loads), so one law
// serves every tie rule. Wrong variants: the same processes with replacement, whose pair
// coincides with probability 1/n (then the ball goes to that bin, whatever the rule).

/// Exact law of the sorted load vector after `m` balls on `n` empty bins when a ball goes
/// to bin j with probability `dest(loads)[j]`.
fn exact_step_law(
    n: usize,
    m: usize,
    dest: &dyn Fn(&[u64]) -> Vec<f64>,
) -> BTreeMap<Vec<u64>, f64> {
    let mut states: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    states.insert(vec![0; n], 1.0);
    for _ in 0..m {
        let mut next: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
        for (loads, &pr) in &states {
            for (j, q) in dest(loads).into_iter().enumerate() {
                if q > 0.0 {
                    let mut v = loads.clone();
                    v[j] += 1;
                    v.sort_unstable();
                    *next.entry(v).or_insert(0.0) += pr * q;
                }
            }
        }
        states = next;
    }
    states
}

/// The destination law of a pair rule over the distinct ordered pairs: `choose(loads, a, b)`
/// is the probability that the ball goes to `a` (else to `b`).
fn over_distinct_pairs(loads: &[u64], choose: &dyn Fn(&[u64], usize, usize) -> f64) -> Vec<f64> {
    let n = loads.len();
    let q = 1.0 / (n * (n - 1)) as f64;
    let mut d = vec![0.0; n];
    for a in 0..n {
        for b in (0..n).filter(|&b| b != a) {
            let pa = choose(loads, a, b);
            d[a] += q * pa;
            d[b] += q * (1.0 - pa);
        }
    }
    d
}

/// The lighter of the pair, a fair coin on equal loads.
fn lighter(l: &[u64], a: usize, b: usize) -> f64 {
    match l[a].cmp(&l[b]) {
        std::cmp::Ordering::Less => 1.0,
        std::cmp::Ordering::Greater => 0.0,
        std::cmp::Ordering::Equal => 0.5,
    }
}

/// The pair processes of the test: the spec without replacement, the same process with
/// replacement (the wrong variant) and the destination law.
#[allow(clippy::type_complexity)]
fn pair_cases() -> Vec<(ProcessSpec, ProcessSpec, Box<dyn Fn(&[u64]) -> Vec<f64>>)> {
    let build = |kind: &str, mut given: Vec<(&'static str, ParamValue)>, distinct: bool| {
        given.push(("replacement", ParamValue::Bool(!distinct)));
        registry::find(kind).unwrap().build(&given).unwrap()
    };
    let both = |kind: &str, given: Vec<(&'static str, ParamValue)>| {
        (build(kind, given.clone(), true), build(kind, given, false))
    };
    let num = ParamValue::Num;
    let sigma = 1.0f64;
    let mut out: Vec<(ProcessSpec, ProcessSpec, Box<dyn Fn(&[u64]) -> Vec<f64>>)> = Vec::new();
    let (a, b) = both("one_plus_beta", vec![("beta", num(0.5))]);
    out.push((
        a,
        b,
        Box::new(|l: &[u64]| {
            let n = l.len() as f64;
            let two = over_distinct_pairs(l, &lighter);
            two.into_iter().map(|p| 0.5 * p + 0.5 / n).collect()
        }),
    ));
    let (a, b) = both("g_bounded", vec![("g", num(1.0))]);
    out.push((
        a,
        b,
        Box::new(|l: &[u64]| {
            over_distinct_pairs(l, &|l, a, b| {
                let (x1, x2) = (l[a] as f64, l[b] as f64);
                // Far apart: the lighter; within g: the heavier (exact tie: the second).
                let first = if (x1 - x2).abs() > 1.0 { x1 < x2 } else { x1 > x2 };
                f64::from(u8::from(first))
            })
        }),
    ));
    let (a, b) = both("g_myopic", vec![("g", num(1.0))]);
    out.push((
        a,
        b,
        Box::new(|l: &[u64]| {
            over_distinct_pairs(l, &|l, a, b| {
                let (x1, x2) = (l[a] as f64, l[b] as f64);
                if (x1 - x2).abs() <= 1.0 {
                    0.5
                } else {
                    f64::from(u8::from(x1 < x2))
                }
            })
        }),
    ));
    let (a, b) = both("sigma_noisy_load", vec![("sigma", num(sigma))]);
    out.push((
        a,
        b,
        Box::new(move |l: &[u64]| {
            over_distinct_pairs(l, &|l, a, b| {
                // P(x1 + σZ1 <= x2 + σZ2) = Φ((x2 − x1)/(σ√2)) = erfc(−(x2 − x1)/(2σ))/2.
                let z = (l[b] as f64 - l[a] as f64) / (2.0 * sigma);
                0.5 * statrs::function::erf::erfc(-z)
            })
        }),
    ));
    let (a, b) = both("k_threshold", vec![("f", ParamValue::List(vec![0.0]))]);
    out.push((
        a,
        b,
        Box::new(|l: &[u64]| {
            let n = l.len() as u64;
            let w: u64 = l.iter().sum();
            // "yes" when x >= W/n, i.e. n x >= W; fewer yes answers wins, a coin on a tie.
            let yes = |i: usize| u8::from(n * l[i] >= w);
            over_distinct_pairs(l, &|_, a, b| match yes(a).cmp(&yes(b)) {
                std::cmp::Ordering::Less => 1.0,
                std::cmp::Ordering::Greater => 0.0,
                std::cmp::Ordering::Equal => 0.5,
            })
        }),
    ));
    out
}

#[test]
fn two_sample_processes_follow_the_exact_law_without_replacement() {
    for (n, m) in [(N, M), (4, 6)] {
        for (p, _, dest) in pair_cases() {
            let law = exact_step_law(n, m, &*dest);
            assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12, "{p:?}");
            let ties: &[TieBreak] = if matches!(p.base(), ProcessSpec::OnePlusBeta { .. }) {
                &[TieBreak::Random, TieBreak::First, TieBreak::LowestIndex]
            } else {
                &[TieBreak::Random]
            };
            for engine in [Engine::Bins, Engine::Levels] {
                for &tie in ties {
                    let s =
                        RunSpec::new(p.clone(), n as u64, m as u64).engine(engine).tie_break(tie);
                    assert!(check_run(&s).is_ok(), "{p:?} {tie:?} {engine:?}");
                    let (stat, crit, impossible) = fit(&s, &law, RUNS);
                    let at = format!("n = {n}, m = {m}, {p:?}, {tie:?}, {engine:?}");
                    eprintln!("{at}: chi2 = {stat:.1} (critical {crit:.1})");
                    assert_eq!(impossible, 0, "{at}: a state of probability 0");
                    assert!(stat < crit, "{at}: chi2 = {stat:.1} >= {crit:.1}");
                }
            }
        }
    }
}

#[test]
fn the_test_rejects_two_samples_with_replacement() {
    for (p, wrong, dest) in pair_cases() {
        let law = exact_step_law(N, M, &*dest);
        let (stat, crit, impossible) = fit(&spec(wrong.clone(), Engine::Bins), &law, RUNS);
        eprintln!("wrong {wrong:?} as {p:?}: chi2 = {stat:.1} ({crit:.1}), {impossible} runs");
        assert!(stat > crit || impossible > 0, "{wrong:?} passed as {p:?}: chi2 = {stat:.1}");
    }
}

#[test]
fn the_pair_option_keeps_the_default_and_is_checked() {
    // Default: the specs (and so the values) of before the option existed.
    let b = |kind: &str, given: &[(&str, ParamValue)]| {
        registry::find(kind).unwrap().build(given).unwrap()
    };
    let num = ParamValue::Num;
    assert_eq!(b("one_plus_beta", &[("beta", num(0.3))]), ProcessSpec::OnePlusBeta { beta: 0.3 });
    assert_eq!(b("g_bounded", &[("g", num(2.0))]), ProcessSpec::GBounded { g: 2.0 });
    assert_eq!(b("g_myopic", &[("g", num(2.0))]), ProcessSpec::GMyopic { g: 2.0 });
    assert_eq!(
        b("sigma_noisy_load", &[("sigma", num(1.0))]),
        ProcessSpec::SigmaNoisyLoad { sigma: 1.0, truncate: false }
    );
    assert_eq!(
        b("k_threshold", &[("f", ParamValue::List(vec![0.0]))]),
        ProcessSpec::KThreshold { f: vec![0.0] }
    );
    for (p, _, _) in pair_cases() {
        // One bin: no two distinct bins.
        let one = RunSpec::new(p.clone(), 1, 10);
        let e = check_run(&one).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("replacement"), "{p:?}");
        assert!(e.message.contains("n >= 2"), "{e}");
        assert!(one.validate().is_err() && ballast_core::simulate(&one, &mut sim_rng(1)).is_err());
        // Biased sampling is refused (the distinct pair is drawn uniformly).
        let mut s = RunSpec::new(p.clone(), 10, 100);
        s.sampling = ballast_core::Sampling::Zipf { s: 1.0 };
        assert_eq!(check_run(&s).unwrap_err().param.as_deref(), Some("replacement"));
        // Batched on the bin engine (also weighted); the level engine refuses batches.
        let s = RunSpec::new(p.clone(), 50, 5000).batched(100);
        assert_eq!(ballast_core::resolve_engine(&s).unwrap(), Engine::Bins);
        assert!(check_run(&s.clone().engine(Engine::Levels)).is_err());
        let w = s.weights(ballast_core::Weights::Exp { mean: 1.0 });
        assert!(check_run(&w).unwrap().is_empty(), "{p:?}");
        assert!(ballast_core::simulate(&w, &mut sim_rng(1)).unwrap().final_gap.is_finite());
    }
}
