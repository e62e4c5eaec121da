//! The `d_thinning` process (d-thinning as a process item, `src/items/d_thinning.rs`): its exact
//! law at tiny n on both engines, in both threshold forms and as a `rule` formula; a wrong
//! threshold rejected by the same test; Mean-Thinning ball for ball; refusals.
//!
//! Statistics. n = 3 bins, m = 8 balls from empty bins, d = 3 samples with offsets
//! f = [0, 1] (keep the first sample if x < W/n, the second if x < W/n + 1, else the third).
//! The samples are independent and uniform, so drawing all three first and keeping the first
//! accepted one has the process's law: [`common::exact_sorted_law`] enumerates it. 20 000
//! seeded runs (seeds 4000..24000) are compared with it by Pearson's χ² at α = 0.001
//! ([`common::fit_final_law`]; cells with expected count below 5 pooled). Power: the wrong
//! variant keeps a sample at equality (x ≤ W/n + f_j instead of <); its exact law has
//! noncentrality λ = RUNS·Σ(p − q)²/p against the right one, asserted ≥ 200 (it is 762),
//! where the test (5 degrees of freedom after pooling, critical value 20.5) rejects with
//! probability above 1 − 10⁻⁹.

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{find, ParamValue};
use ballast_core::{sim_rng, simulate_observed, simulate_seeded, Engine, ProcessSpec, RunSpec};

const N: usize = 3;
const M: usize = 8;
const RUNS: u64 = 20_000;
const F: [f64; 2] = [0.0, 1.0];

fn d_thinning(params: &[(&str, ParamValue)]) -> Result<ProcessSpec, String> {
    find("d_thinning").expect("a built-in kind").build(params).map_err(|e| e.to_string())
}

fn offsets(f: &[f64]) -> ProcessSpec {
    let d = ParamValue::Num(f.len() as f64 + 1.0);
    d_thinning(&[("d", d), ("f", ParamValue::List(f.to_vec()))]).unwrap()
}

fn formula(d: u32, threshold: &str) -> ProcessSpec {
    let t = ParamValue::Text(threshold.to_owned());
    d_thinning(&[("d", ParamValue::Num(f64::from(d))), ("threshold", t)]).unwrap()
}

/// The exact law of the heaviest-first sorted loads: the first of d = 3 uniform samples
/// with `keep(x·n, W, j)` true, else the third.
fn law(keep: fn(u64, u64, usize) -> bool) -> BTreeMap<Vec<u64>, f64> {
    let pick = |loads: &[u64], s: &[usize]| {
        let w: u64 = loads.iter().sum();
        (0..2).find(|&j| keep(loads[s[j]] * N as u64, w, j)).map_or(s[2], |j| s[j])
    };
    common::exact_sorted_law(N, M, 3, pick)
        .into_iter()
        .map(|(mut k, p)| {
            k.reverse();
            (k, p)
        })
        .collect()
}

/// x < W/n + f_j, in integers (x·n < W + n·f_j).
fn right(xn: u64, w: u64, j: usize) -> bool {
    xn < w + N as u64 * F[j] as u64
}

/// The wrong variant: x ≤ W/n + f_j.
fn wrong(xn: u64, w: u64, j: usize) -> bool {
    xn <= w + N as u64 * F[j] as u64
}

fn chi2(process: &ProcessSpec, engine: Engine, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    let spec = RunSpec::new(process.clone(), N as u64, M as u64).engine(engine);
    common::fit_final_law(&spec, RUNS, 4000, law)
}

#[test]
fn d_thinning_has_the_exact_law_in_both_forms_on_both_engines() {
    let law = law(right);
    assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
    let cases =
        [("f = [0, 1]", offsets(&F)), ("threshold formula", formula(3, "avg + if(j == 1, 0, 1)"))];
    for (name, spec) in &cases {
        for engine in [Engine::Bins, Engine::Levels] {
            let (stat, crit) = chi2(spec, engine, &law);
            println!("d_thinning {name} on {engine:?}: χ² = {stat:.2} (critical {crit:.2})");
            assert!(stat < crit, "{name} on {engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
        }
    }
    // The same process as a `rule` formula (all three samples drawn first) has the same law.
    let rule = find("rule")
        .unwrap()
        .build(&[
            ("d", ParamValue::Num(3.0)),
            ("choose", ParamValue::Text("if(x1 < avg, 1, if(x2 < avg + 1, 2, 3))".into())),
        ])
        .unwrap();
    let (stat, crit) = chi2(&rule, Engine::Bins, &law);
    println!("the rule formula: χ² = {stat:.2} (critical {crit:.2})");
    assert!(stat < crit, "rule formula: χ² = {stat:.1} ≥ {crit:.1}");
}

#[test]
fn a_wrong_threshold_is_rejected() {
    let (law, bad) = (law(right), law(wrong));
    let lambda: f64 = law
        .iter()
        .map(|(k, &p)| RUNS as f64 * (p - bad.get(k).copied().unwrap_or(0.0)).powi(2) / p)
        .sum();
    assert!(lambda >= 200.0, "the test's power: noncentrality {lambda:.1}");
    // x ≤ W/n + f_j: loads are integers and W/n a multiple of 1/3, so + 0.001 turns < into ≤.
    let spec = formula(3, "avg + if(j == 1, 0, 1) + 0.001");
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, crit) = chi2(&spec, engine, &law);
        println!(
            "wrong threshold on {engine:?}: χ² = {stat:.1} (critical {crit:.2}, λ = {lambda:.0})"
        );
        assert!(stat > crit, "{engine:?}: the wrong threshold passed, χ² = {stat:.1}");
    }
}

/// The bin of every ball of one seeded run on the bin engine.
fn trace(process: &ProcessSpec, n: u64, m: u64, seed: u64) -> Vec<usize> {
    let spec = RunSpec::new(process.clone(), n, m).engine(Engine::Bins);
    let mut seen = common::BinTrace::default();
    simulate_observed(&spec, &mut sim_rng(seed), &mut seen).unwrap();
    seen.0
}

#[test]
fn two_thinning_at_the_average_is_mean_thinning_ball_for_ball() {
    let mean = ProcessSpec::MeanThinning { strict: true };
    let relative = ProcessSpec::RelativeThreshold { f: 1.5 };
    for (n, m) in [(3, 50), (1000, 20_000)] {
        for seed in 0..5 {
            let got = trace(&offsets(&[0.0]), n, m, seed);
            assert_eq!(got.len(), m as usize);
            assert_eq!(got, trace(&mean, n, m, seed), "n = {n}, seed {seed}");
            // The formula form draws the same numbers as the list form.
            assert_eq!(got, trace(&formula(2, "avg"), n, m, seed), "n = {n}, seed {seed}");
            let r = trace(&offsets(&[1.5]), n, m, seed);
            assert_eq!(r, trace(&relative, n, m, seed), "relative, n = {n}, seed {seed}");
        }
    }
    // Not vacuous: a different threshold places differently.
    assert_ne!(trace(&offsets(&[1.0]), 1000, 20_000, 0), trace(&mean, 1000, 20_000, 0));
    // Both count a pair's second sample only when it gets the ball.
    let samples = |p: &ProcessSpec| {
        let spec = RunSpec::new(p.clone(), 1000, 20_000).engine(Engine::Bins);
        simulate_seeded(&spec, 3).unwrap().samples
    };
    let got = samples(&offsets(&[0.0]));
    assert!(got > 20_000 && got < 40_000, "{got}");
    assert_eq!(got, samples(&mean));
}

#[test]
fn bad_thresholds_are_refused_with_the_reason() {
    let list = |v: &[f64]| ParamValue::List(v.to_vec());
    let e = d_thinning(&[("d", ParamValue::Num(3.0)), ("f", list(&[0.0]))]).unwrap_err();
    assert!(e.contains("`f` has 1 entries; d = 3 samples need d - 1 = 2"), "{e}");
    let e = d_thinning(&[]).unwrap_err();
    assert!(e.contains("give `f`, 1 offset(s) above the average"), "{e}");
    let both = [("f", list(&[0.0])), ("threshold", ParamValue::Text("avg".into()))];
    let e = d_thinning(&both).unwrap_err();
    assert!(e.contains("not both"), "{e}");
    let e = d_thinning(&[("threshold", ParamValue::Text("avg + q".into()))]).unwrap_err();
    assert!(e.contains("unknown variable `q`"), "{e}");
    let e = d_thinning(&[("x", ParamValue::Num(1.0))]).unwrap_err();
    assert!(e.contains("allowed parameters"), "{e}");
    // NaN at a probe: refused at validation, naming it.
    let nan = formula(2, "avg / (t - t)");
    let e = RunSpec::new(nan, 10, 100).validate().unwrap_err().to_string();
    assert!(e.contains("is NaN at j = 1, avg = 0, t = 0, n = 10"), "{e}");
}
