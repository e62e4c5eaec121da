//! The `filling_rule` process (a Filling rule as a formula, built as a process item): formula
//! equivalents of Twinning and Packing have the law of the built-ins on both engines, a wrong
//! formula is rejected, bad formulas are refused at validation, and the stop rule applies.
//!
//! Statistics. n = 3 bins, m = 9 balls from empty bins (at m = 6 truncation makes Twinning's
//! and Packing's laws equal; at 9 they differ, which the first test asserts), truncation at m; the law of the
//! sorted final loads is computed from each built-in's definition (a uniform sample; an
//! underloaded bin, x·n < W, gets the definition's balls, else one; a step that would pass m
//! places only the balls left). 20 000 seeded runs (seeds 7000..27000) are compared with it by
//! Pearson's χ² at α = 0.001 ([`ballast_testkit::chi2_critical`]); cells with an expected count
//! below 5 are pooled into one. Power: the wrong formula (Twinning with `<=` for `<`, which
//! differs exactly when a sampled load equals the average) has a noncentrality
//! λ = RUNS·Σ(p − q)²/p computed from the two exact laws and asserted to be at least 200,
//! where the test rejects with probability above 1 − 10⁻¹⁰ on under 30 degrees of freedom.

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{find, ParamValue};
use ballast_core::{sim_rng, simulate, Engine, ProcessSpec, RunSpec, Stop};

const N: usize = 3;
const M: u64 = 9;
const RUNS: u64 = 20_000;

/// The balls a definition places in a sampled bin of load `x` when the total is `w`.
type Definition = fn(x: u64, w: u64) -> u64;

fn twinning(x: u64, w: u64) -> u64 {
    if x * (N as u64) < w {
        2
    } else {
        1
    }
}

/// The wrong variant: `<=` for `<`.
fn twinning_wrong(x: u64, w: u64) -> u64 {
    if x * (N as u64) <= w {
        2
    } else {
        1
    }
}

/// Packing, offset 1: an underloaded bin is raised to ⌈W/n⌉ + 1.
fn packing(x: u64, w: u64) -> u64 {
    if x * (N as u64) < w {
        w.div_ceil(N as u64) + 1 - x
    } else {
        1
    }
}

fn filling_rule(balls: &str) -> Result<ProcessSpec, String> {
    find("filling_rule")
        .expect("filling_rule is a built-in kind")
        .build(&[("balls", ParamValue::Text(balls.to_owned()))])
        .map_err(|e| e.to_string())
}

/// The exact law of the sorted loads once M balls are placed (truncation), from `def`.
fn exact_law(def: Definition) -> BTreeMap<Vec<u64>, f64> {
    // States by (balls placed, sorted loads), processed in order of balls placed.
    let mut open: BTreeMap<(u64, Vec<u64>), f64> = BTreeMap::from([((0, vec![0; N]), 1.0)]);
    let mut law = BTreeMap::new();
    while let Some(((w, loads), q)) = open.pop_first() {
        if w == M {
            *law.entry(loads).or_insert(0.0) += q;
            continue;
        }
        for bin in 0..N {
            let k = def(loads[bin], w).min(M - w);
            let mut after = loads.clone();
            after[bin] += k;
            after.sort_unstable_by(|a, b| b.cmp(a));
            *open.entry((w + k, after)).or_insert(0.0) += q / N as f64;
        }
    }
    law
}

/// χ² and its critical value of RUNS runs of `process` on `engine` against `law`.
fn chi2(process: &ProcessSpec, engine: Engine, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    let spec = RunSpec::new(process.clone(), N as u64, M).engine(engine);
    common::fit_final_law(&spec, RUNS, 7000, law)
}

#[test]
fn formula_equivalents_of_twinning_and_packing_have_the_exact_law_on_both_engines() {
    let cases: [(&str, &str, Definition, ProcessSpec); 2] = [
        ("twinning", "if(x < avg, 2, 1)", twinning, ProcessSpec::Twinning),
        (
            "packing",
            "if(x < avg, ceil(avg) + 1 - x, 1)",
            packing,
            ProcessSpec::Packing { offset: 1 },
        ),
    ];
    // The two cases test different laws.
    let (tw, pa) = (exact_law(twinning), exact_law(packing));
    let apart: f64 = tw.iter().map(|(k, &p)| (p - pa.get(k).copied().unwrap_or(0.0)).abs()).sum();
    assert!(apart > 0.1, "Twinning's and Packing's laws differ by {apart} only");
    for (name, formula, def, builtin) in cases {
        let law = exact_law(def);
        assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
        let spec = filling_rule(formula).unwrap();
        for engine in [Engine::Bins, Engine::Levels] {
            let (stat, crit) = chi2(&spec, engine, &law);
            println!("{name} as a formula on {engine:?}: χ² = {stat:.2} (critical {crit:.2})");
            assert!(stat < crit, "{name} on {engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
        }
        // The definition is the built-in's: the built-in passes the same test.
        let (stat, crit) = chi2(&builtin, Engine::Bins, &law);
        assert!(stat < crit, "built-in {name}: χ² = {stat:.1} ≥ {crit:.1}");
    }
}

#[test]
fn a_wrong_filling_formula_is_rejected() {
    let (law, wrong) = (exact_law(twinning), exact_law(twinning_wrong));
    let lambda: f64 = law
        .iter()
        .map(|(k, &p)| RUNS as f64 * (p - wrong.get(k).copied().unwrap_or(0.0)).powi(2) / p)
        .sum();
    assert!(lambda >= 200.0, "the test's power: noncentrality {lambda:.1}");
    let spec = filling_rule("if(x <= avg, 2, 1)").unwrap();
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, crit) = chi2(&spec, engine, &law);
        println!(
            "wrong formula on {engine:?}: χ² = {stat:.1} (critical {crit:.2}, λ = {lambda:.0})"
        );
        assert!(stat > crit, "{engine:?}: the wrong formula passed, χ² = {stat:.1}");
    }
}

#[test]
fn bad_filling_formulas_are_refused_with_the_reason() {
    let e = filling_rule("x + q").unwrap_err();
    assert!(e.contains("unknown variable `q`"), "{e}");
    // 0 balls at a probe: refused at validation, naming the probe.
    let zero = filling_rule("if(x < avg, 2, 0)").unwrap();
    let e = RunSpec::new(zero, 10, 100).validate().unwrap_err().to_string();
    assert!(e.contains("gives 0 at x = 0, avg = 0"), "{e}");
    let half = filling_rule("1.5").unwrap();
    let e = RunSpec::new(half, 10, 100).validate().unwrap_err().to_string();
    assert!(e.contains("expected an integer in 1..=1000000"), "{e}");
    // Unit balls only (a step's balls are counted, not weighed).
    let spec = RunSpec::new(filling_rule("2").unwrap(), 10, 100)
        .weights(ballast_core::Weights::Exp { mean: 1.0 });
    assert!(spec.validate().is_err() || ballast_core::registry::check_run(&spec).is_err());
}

#[test]
fn the_stop_rule_applies_to_its_steps() {
    let spec = |stop| RunSpec::new(filling_rule("3").unwrap(), 10, 100).stop(stop);
    for seed in 0..10 {
        let cut = simulate(&spec(Stop::Truncate), &mut sim_rng(seed)).unwrap();
        assert_eq!(cut.balls, 100);
        let full = simulate(&spec(Stop::Finish), &mut sim_rng(seed)).unwrap();
        assert_eq!(full.balls, 102, "34 steps of 3 balls");
    }
}
