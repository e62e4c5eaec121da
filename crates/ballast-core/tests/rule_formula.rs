//! The `rule` process: formula equivalents of One-Choice, Two-Choice, (1+β), a threshold
//! rule and g-Bounded have the law of the built-ins, on the bin engine and (sequentially) on
//! the level engine; a deliberately wrong formula is rejected.
//!
//! Statistics. Exact-law tests: n = 3 bins, m = 6 balls from empty bins; the law of the
//! sorted final loads is computed from each built-in's definition (every tuple of samples,
//! each with probability n^-d, and the definition's choice among them), and 20 000 seeded
//! runs of the formula are compared with it by Pearson's χ² at α = 0.001
//! ([`ballast_testkit::ALPHA`]); cells with an expected count below 5 are pooled into one.
//! Power: the wrong formula (Two-Choice choosing the heavier sample) has a noncentrality of
//! thousands (checked below), so it is rejected with probability 1 to many decimals.
//! Two-sample tests at n = 1000: the final gap's distribution over 2 000 runs of the formula
//! against 2 000 of the built-in (`chi2_two_sample`, α = 0.001), m = 10n.

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{find, ParamValue};
use ballast_core::{sim_rng, simulate, Engine, ProcessSpec, RunSpec};
use ballast_testkit::{chi2_critical, chi2_two_sample};

const N: usize = 3;
const M: u64 = 6;
const RUNS: u64 = 20_000;

/// A rule as its definition: the probability of each sample position, given the loads of
/// the d samples.
type Definition = fn(&[u64]) -> Vec<f64>;

fn rule(d: u32, choose: &str) -> ProcessSpec {
    let t = |s: &str| ParamValue::Text(s.to_owned());
    find("rule")
        .expect("rule is a kind")
        .build(&[("d", ParamValue::Num(f64::from(d))), ("choose", t(choose))])
        .unwrap_or_else(|e| panic!("{choose}: {e}"))
}

/// The exact law of the sorted loads after M balls into N bins, from a definition over d
/// uniform samples.
fn exact_law(d: u32, def: Definition) -> BTreeMap<Vec<u64>, f64> {
    let mut law = BTreeMap::from([(vec![0u64; N], 1.0)]);
    let tuples = (N as u64).pow(d);
    for _ in 0..M {
        let mut next = BTreeMap::new();
        for (loads, q) in &law {
            for code in 0..tuples {
                let bins: Vec<usize> =
                    (0..d).map(|i| (code / (N as u64).pow(i) % N as u64) as usize).collect();
                let xs: Vec<u64> = bins.iter().map(|&b| loads[b]).collect();
                for (pos, p) in def(&xs).into_iter().enumerate().filter(|(_, p)| *p > 0.0) {
                    let mut after = loads.clone();
                    after[bins[pos]] += 1;
                    after.sort_unstable_by(|a, b| b.cmp(a));
                    *next.entry(after).or_insert(0.0) += q * p / tuples as f64;
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
    common::fit_final_law(&spec, RUNS, 1000, law)
}

fn one(xs: &[u64]) -> Vec<f64> {
    vec![1.0; xs.len().min(1)]
}

fn two_choice(xs: &[u64]) -> Vec<f64> {
    match xs[0].cmp(&xs[1]) {
        std::cmp::Ordering::Less => vec![1.0, 0.0],
        std::cmp::Ordering::Greater => vec![0.0, 1.0],
        std::cmp::Ordering::Equal => vec![0.5, 0.5],
    }
}

/// (1+β) at β = 0.5: a Two-Choice step with probability β, else the first sample.
fn one_plus_beta(xs: &[u64]) -> Vec<f64> {
    let tc = two_choice(xs);
    vec![0.5 * tc[0] + 0.5, 0.5 * tc[1]]
}

/// Threshold f = 1: the first sample if its load is at most 1, else the second.
fn threshold(xs: &[u64]) -> Vec<f64> {
    if xs[0] <= 1 {
        vec![1.0, 0.0]
    } else {
        vec![0.0, 1.0]
    }
}

/// g-Bounded, g = 1: the lighter if the loads differ by more than g, else the heavier
/// (exact tie: the second).
fn g_bounded(xs: &[u64]) -> Vec<f64> {
    let (a, b) = (xs[0], xs[1]);
    let first = if a.abs_diff(b) > 1 { a < b } else { a > b };
    if first {
        vec![1.0, 0.0]
    } else {
        vec![0.0, 1.0]
    }
}

struct Case {
    name: &'static str,
    d: u32,
    formula: &'static str,
    def: Definition,
    builtin: ProcessSpec,
}

fn cases() -> Vec<Case> {
    vec![
        Case { name: "one_choice", d: 1, formula: "1", def: one, builtin: ProcessSpec::OneChoice },
        Case {
            name: "two_choice",
            d: 2,
            formula: "if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))",
            def: two_choice,
            builtin: ProcessSpec::DChoice { d: 2 },
        },
        Case {
            name: "one_plus_beta",
            d: 2,
            formula: "if(u < 0.5, if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.25, 1, 2))), 1)",
            def: one_plus_beta,
            builtin: ProcessSpec::OnePlusBeta { beta: 0.5 },
        },
        Case {
            name: "threshold",
            d: 2,
            formula: "if(x1 <= 1, 1, 2)",
            def: threshold,
            builtin: ProcessSpec::Threshold { f: 1.0 },
        },
        Case {
            name: "g_bounded",
            d: 2,
            formula: "if(abs(x1 - x2) > 1, if(x1 < x2, 1, 2), if(x1 > x2, 1, 2))",
            def: g_bounded,
            builtin: ProcessSpec::GBounded { g: 1.0 },
        },
    ]
}

#[test]
fn formula_equivalents_have_the_exact_law_on_both_engines() {
    for c in cases() {
        let law = exact_law(c.d, c.def);
        let spec = rule(c.d, c.formula);
        for engine in [Engine::Bins, Engine::Levels] {
            let (stat, crit) = chi2(&spec, engine, &law);
            println!("{} on {engine:?}: χ² = {stat:.2} (critical {crit:.2})", c.name);
            assert!(stat < crit, "{} on {engine:?}: χ² = {stat:.1} ≥ {crit:.1}", c.name);
        }
        // The definition is the built-in's: the built-in passes the same test.
        let (stat, crit) = chi2(&c.builtin, Engine::Bins, &law);
        assert!(stat < crit, "built-in {}: χ² = {stat:.1} ≥ {crit:.1}", c.name);
    }
}

#[test]
fn a_wrong_formula_is_rejected() {
    let law = exact_law(2, two_choice);
    let wrong = rule(2, "if(x1 < x2, 2, 1)"); // the heavier sample: a flipped comparison
    let heavier = exact_law(2, |xs| {
        let tc = two_choice(xs);
        if xs[0] == xs[1] {
            vec![0.0, 1.0]
        } else {
            vec![tc[1], tc[0]]
        }
    });
    let lambda: f64 = law
        .iter()
        .map(|(k, &p)| RUNS as f64 * (heavier.get(k).copied().unwrap_or(0.0) - p).powi(2) / p)
        .sum();
    assert!(lambda > 1000.0, "noncentrality {lambda:.0}");
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, crit) = chi2(&wrong, engine, &law);
        println!("wrong formula on {engine:?}: χ² = {stat:.0} (λ = {lambda:.0})");
        assert!(stat > crit, "{engine:?}: the wrong formula passed with χ² = {stat:.1}");
    }
}

/// The final gap's distribution (rounded up) over `runs` runs.
fn gaps(spec: &RunSpec, seed: u64, runs: u64) -> Vec<u64> {
    let mut h = vec![0u64; 64];
    for r in 0..runs {
        let out = simulate(spec, &mut sim_rng(seed + r)).expect("runs");
        h[(out.final_gap.ceil() as usize).min(63)] += 1;
    }
    h
}

#[test]
fn formula_equivalents_match_the_built_ins_at_n_1000() {
    let (n, runs) = (1000u64, 2000u64);
    for c in cases().into_iter().filter(|c| c.name != "one_choice") {
        for engine in [Engine::Bins, Engine::Levels] {
            let a = gaps(&RunSpec::new(rule(c.d, c.formula), n, 10 * n).engine(engine), 1, runs);
            let b = gaps(&RunSpec::new(c.builtin.clone(), n, 10 * n), 900_000, runs);
            let (stat, df) = chi2_two_sample(&a, &b);
            println!("{} on {engine:?} vs built-in: χ² = {stat:.2} on {df}", c.name);
            assert!(stat < chi2_critical(df), "{}: χ² = {stat:.1} on {df}", c.name);
        }
    }
}

#[test]
fn bad_formulas_are_refused_with_the_reason() {
    let t = |s: &str| ParamValue::Text(s.to_owned());
    let build = |d: f64, f: &str| {
        find("rule").unwrap().build(&[("d", ParamValue::Num(d)), ("choose", t(f))]).unwrap_err()
    };
    assert!(build(2.0, "x3").to_string().contains("reads x3, but d = 2"));
    assert!(build(2.0, "y1").to_string().contains("unknown variable `y1`"));
    assert!(build(9.0, "1").to_string().contains("1..=8"));
    // A value outside 1..=d at a probe of the formula's range is refused before a run.
    for (f, probe) in
        [("x1 + 1", "x1 = 2"), ("1.5", "1.5"), ("0/0", "NaN"), ("if(u < 0.5, 1, 3)", "3")]
    {
        let e = RunSpec::new(rule(2, f), 10, 10).validate().unwrap_err().to_string();
        assert!(e.contains("expected an integer in 1..=2") && e.contains(probe), "{f}: {e}");
    }
}
