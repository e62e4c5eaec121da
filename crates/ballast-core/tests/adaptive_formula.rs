//! Adaptive probing with a threshold formula (`tau.formula`, Czumaj–Stemann's τ(k, n, m, t)):
//! the exact law of the formula's definition on both engines, a wrong threshold rejected, the
//! affine form's draws reproduced exactly, and bad formulas refused at validation.
//!
//! Statistics. n = 3 bins, m = 6 balls from empty bins, probe cap 3; the law of the sorted
//! final loads is computed from the definition (every tuple of 3 uniform probes, each with
//! probability 3⁻³; the probes stop at the first k with (least probed load) < τ(k) or at the
//! cap; the ball goes to one of the least loaded probes, each equally likely, which is what
//! the rule's reservoir draw gives). 20 000 seeded runs (seeds 5000..25000) are compared with
//! it by Pearson's χ² at α = 0.001 ([`ballast_testkit::chi2_critical`]); cells with an
//! expected count below 5 are pooled into one. Power: the wrong variant (the threshold
//! raised by one) has a noncentrality λ = RUNS·Σ(p − q)²/p computed from the two exact laws
//! and asserted to be at least 200, where a χ² test at α = 0.001 on under 30 degrees of
//! freedom rejects with probability above 1 − 10⁻¹⁰.

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{find, ParamValue};
use ballast_core::{sim_rng, simulate_observed, Engine, ProcessSpec, RunSpec, Tau};

const N: usize = 3;
const M: u64 = 6;
const CAP: u32 = 3;
const RUNS: u64 = 20_000;

/// The threshold under test: it reads every variable (for n = 3 the last term is 0).
const TAU: &str = "if(t < m/2, k, avg + 1) + (n - 3)/2";
/// The same threshold raised by one: the wrong variant.
const WRONG: &str = "if(t < m/2, k, avg + 1) + (n - 3)/2 + 1";

/// TAU's definition, for n = 3 and m = 6 balls, unit weights from empty bins (avg = t/n).
fn tau(k: u32, t: u64, shift: f64) -> f64 {
    let avg = t as f64 / N as f64;
    let base = if (t as f64) < M as f64 / 2.0 { f64::from(k) } else { avg + 1.0 };
    base + shift
}

fn adaptive(formula: &str) -> ProcessSpec {
    find("adaptive")
        .expect("adaptive is a kind")
        .build(&[
            ("tau.formula", ParamValue::Text(formula.to_owned())),
            ("cap", ParamValue::Num(f64::from(CAP))),
        ])
        .unwrap_or_else(|e| panic!("{formula}: {e}"))
}

/// The exact law of the sorted loads after M balls, for the threshold `tau(k, t, shift)`.
fn exact_law(shift: f64) -> BTreeMap<Vec<u64>, f64> {
    let mut law = BTreeMap::from([(vec![0u64; N], 1.0)]);
    let tuples = (N as u64).pow(CAP);
    for t in 0..M {
        let mut next = BTreeMap::new();
        for (loads, q) in &law {
            for code in 0..tuples {
                let probes: Vec<usize> =
                    (0..CAP).map(|i| (code / (N as u64).pow(i) % N as u64) as usize).collect();
                // Probes until the least load seen is below τ(k), or the cap.
                let mut k = 1u32;
                let mut best = loads[probes[0]];
                while k < CAP && best as f64 >= tau(k, t, shift) {
                    best = best.min(loads[probes[k as usize]]);
                    k += 1;
                }
                let tied: Vec<usize> =
                    probes[..k as usize].iter().copied().filter(|&b| loads[b] == best).collect();
                for &bin in &tied {
                    let mut after = loads.clone();
                    after[bin] += 1;
                    after.sort_unstable_by(|a, b| b.cmp(a));
                    *next.entry(after).or_insert(0.0) += q / (tuples as f64 * tied.len() as f64);
                }
            }
        }
        law = next;
    }
    law
}

/// χ² and its critical value of RUNS runs of `process` on `engine` against `law`.
fn chi2(process: &ProcessSpec, engine: Engine, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    let spec = RunSpec::new(process.clone(), N as u64, M).engine(engine);
    common::fit_final_law(&spec, RUNS, 5000, law)
}

#[test]
fn a_threshold_formula_has_the_exact_law_on_both_engines() {
    let law = exact_law(0.0);
    assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, crit) = chi2(&adaptive(TAU), engine, &law);
        println!("tau formula on {engine:?}: χ² = {stat:.2} (critical {crit:.2})");
        assert!(stat < crit, "{engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
    }
}

#[test]
fn a_wrong_threshold_is_rejected() {
    let (law, wrong) = (exact_law(0.0), exact_law(1.0));
    let lambda: f64 = law
        .iter()
        .map(|(k, &p)| {
            let q = wrong.get(k).copied().unwrap_or(0.0);
            RUNS as f64 * (p - q).powi(2) / p
        })
        .sum();
    assert!(lambda >= 200.0, "the test's power: noncentrality {lambda:.1}");
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, crit) = chi2(&adaptive(WRONG), engine, &law);
        println!("wrong tau on {engine:?}: χ² = {stat:.1} (critical {crit:.2}, λ = {lambda:.0})");
        assert!(stat > crit, "{engine:?}: the wrong threshold passed, χ² = {stat:.1}");
    }
}

/// `tau.formula = "k"` is the affine τ_k = k: on the bin engine the same draws, so the same
/// loads, run by run.
#[test]
fn the_formula_k_draws_what_the_affine_probe_count_draws() {
    let affine = ProcessSpec::Adaptive { tau: Tau::PROBE_COUNT, cap: Some(8) };
    let formula = find("adaptive")
        .unwrap()
        .build(&[("tau.formula", ParamValue::Text("k".into())), ("cap", ParamValue::Num(8.0))])
        .unwrap();
    for (n, m) in [(10u64, 100u64), (1000, 20_000)] {
        for seed in 0..20 {
            let run = |p: &ProcessSpec| {
                let spec = RunSpec::new(p.clone(), n, m).engine(Engine::Bins);
                let mut seen = common::FinalState::default();
                let out = simulate_observed(&spec, &mut sim_rng(seed), &mut seen).unwrap();
                (seen.0, out.samples, out.samples_per_step, out.max_gap)
            };
            assert_eq!(run(&affine), run(&formula), "n = {n}, seed {seed}");
        }
    }
}

#[test]
fn bad_threshold_formulas_are_refused_with_the_reason() {
    let build = |pairs: &[(&str, ParamValue)]| find("adaptive").unwrap().build(pairs);
    let text = |s: &str| ParamValue::Text(s.to_owned());
    let e = build(&[("tau.formula", text("k + q")), ("cap", ParamValue::Num(4.0))]).unwrap_err();
    assert!(e.to_string().contains("unknown variable `q`"), "{e}");
    let e = build(&[("tau.formula", text("k")), ("tau.base", ParamValue::Num(1.0))]).unwrap_err();
    assert!(e.to_string().contains("tau.formula replaces it"), "{e}");
    // No cap: a formula need not grow with k.
    let e = build(&[("tau.formula", text("k"))]).unwrap_err().to_string();
    assert!(e.contains("required with tau.formula"), "{e}");
    // NaN at a probe (t = 0, avg = 0): refused, naming the probe.
    let nan = build(&[("tau.formula", text("k + avg/t")), ("cap", ParamValue::Num(4.0))]);
    let e = RunSpec::new(nan.unwrap(), 10, 100).validate().unwrap_err().to_string();
    assert!(e.contains("NaN at k = 1, t = 0"), "{e}");
}

/// The affine form with `until` and no cap would probe without end from `until` on (τ = −∞
/// there): refused at validation, not run.
#[test]
fn an_affine_threshold_with_until_needs_a_cap() {
    let open = |cap: Option<u32>| ProcessSpec::Adaptive {
        tau: Tau { base: 1.5, per_probe: 0.5, per_average: 1.0, until: Some(4), formula: None },
        cap,
    };
    let e = RunSpec::new(open(None), 10, 100).validate().unwrap_err().to_string();
    assert!(e.contains("has no `until`"), "{e}");
    assert!(RunSpec::new(open(Some(6)), 10, 100).validate().is_ok());
}
