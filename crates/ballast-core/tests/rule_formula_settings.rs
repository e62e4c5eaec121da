//! The `rule` process (a decision formula) without replacement and in the delay setting: both
//! have the exact law of the process they define, and a deliberately wrong variant is
//! rejected by the same test.
//!
//! Statistics. n = 3 bins from empty bins; the law of the sorted final loads is computed from
//! the definition by enumeration (every ordered pair of samples, every reported step of the
//! window, a fair coin between equal reports). 20 000 seeded runs per case (seeds 9100.. and
//! 9300..) are compared with it by Pearson's χ² at α = 0.001 (`common::fit_law`; cells
//! of expected count below 5 are pooled). A correct engine passes each case with probability
//! 1 − α at any seed. Power: the wrong variant's noncentrality λ = RUNS·Σ(p − q)²/p is computed
//! from the two exact laws and asserted to be at least 100; with at most 10 degrees of freedom
//! the test then rejects with probability above 1 − 10⁻⁶.
//!
//! - `replacement = false` (m = 6): the formula for Two-Choice with random ties on two distinct
//!   bins, on the bin engine and on the level engine (sequential, and batched with b = 2,
//!   whose law the enumeration computes with the loads frozen at each batch start); the wrong
//!   variant is the same formula with replacement (the two samples may be one bin).
//! - delay (m = 6, τ = 4, random mode): the same formula and the built-in `two_choice` in
//!   the delay setting; the wrong variant is the formula on current loads (τ = 1).

mod common;

use std::collections::BTreeMap;

use ballast_core::{sim_rng, simulate, DelayMode, Engine, ProcessSpec, RunSpec, Setting};

const N: usize = 3;
const RUNS: u64 = 20_000;
const TWO_CHOICE: &str = "if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))";

fn rule(replacement: bool) -> ProcessSpec {
    let choose = ballast_core::rule_formula::parse(TWO_CHOICE, 2).expect("a decision formula");
    ProcessSpec::Rule { d: 2, choose, replacement }
}

/// The ordered pairs of samples of a step: distinct bins or any two.
fn pairs(distinct: bool) -> Vec<(usize, usize)> {
    (0..N).flat_map(|a| (0..N).map(move |b| (a, b))).filter(|(a, b)| !distinct || a != b).collect()
}

/// Sorted loads, heaviest first.
fn key(loads: &[u64]) -> Vec<u64> {
    let mut v = loads.to_vec();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v
}

/// Adds `q` times the law of the lighter of `xa` and `xb` (reported loads of bins `a`, `b`),
/// a fair coin between equal reports, to `into` as the next load vectors after `loads`.
fn step(
    loads: &[u64],
    (a, b): (usize, usize),
    (xa, xb): (u64, u64),
    q: f64,
) -> Vec<(Vec<u64>, f64)> {
    let to = |bin: usize, p: f64| {
        let mut v = loads.to_vec();
        v[bin] += 1;
        (v, p)
    };
    match xa.cmp(&xb) {
        std::cmp::Ordering::Less => vec![to(a, q)],
        std::cmp::Ordering::Greater => vec![to(b, q)],
        std::cmp::Ordering::Equal => vec![to(a, q / 2.0), to(b, q / 2.0)],
    }
}

/// Exact law of the sorted loads after `m` balls when each ball compares the loads frozen at
/// the start of its batch of `b` (b = 1: sequential) of a uniform pair of `pairs`.
fn batched_law(m: u64, b: u64, distinct: bool) -> BTreeMap<Vec<u64>, f64> {
    let ps = pairs(distinct);
    // States: (frozen loads, current loads) with their probabilities.
    let mut states: BTreeMap<(Vec<u64>, Vec<u64>), f64> =
        BTreeMap::from([((vec![0; N], vec![0; N]), 1.0)]);
    for t in 0..m {
        let mut next = BTreeMap::new();
        for ((frozen, loads), q) in states {
            let frozen = if t % b == 0 { loads.clone() } else { frozen };
            for &(a, c) in &ps {
                let q = q / ps.len() as f64;
                for (after, p) in step(&loads, (a, c), (frozen[a], frozen[c]), q) {
                    *next.entry((frozen.clone(), after)).or_insert(0.0) += p;
                }
            }
        }
        states = next;
    }
    let mut law = BTreeMap::new();
    for ((_, loads), q) in states {
        *law.entry(key(&loads)).or_insert(0.0) += q;
    }
    law
}

/// Exact law of the sorted loads after `m` balls in the delay setting (random mode, window
/// `tau`): each of two i.i.d. uniform samples reports its load after `t − s` balls, `s`
/// uniform in `0..min(tau, t + 1)`, drawn for each sample.
fn delay_law(m: u64, tau: u64) -> BTreeMap<Vec<u64>, f64> {
    // States: the sequence of receiving bins so far.
    let mut states: Vec<(Vec<usize>, f64)> = vec![(Vec::new(), 1.0)];
    for t in 0..m {
        let window = tau.min(t + 1);
        let ps = pairs(false);
        let mut next: BTreeMap<Vec<usize>, f64> = BTreeMap::new();
        for (seq, q) in states {
            let loads: Vec<u64> =
                (0..N).map(|i| seq.iter().filter(|&&j| j == i).count() as u64).collect();
            let ago = |bin: usize, s: u64| {
                seq[..(t - s) as usize].iter().filter(|&&j| j == bin).count() as u64
            };
            let q = q / (ps.len() as u64 * window * window) as f64;
            for &(a, b) in &ps {
                for (sa, sb) in (0..window).flat_map(|x| (0..window).map(move |y| (x, y))) {
                    for (after, p) in step(&loads, (a, b), (ago(a, sa), ago(b, sb)), q) {
                        let bin = (0..N).find(|&i| after[i] != loads[i]).expect("one ball added");
                        let mut s = seq.clone();
                        s.push(bin);
                        *next.entry(s).or_insert(0.0) += p;
                    }
                }
            }
        }
        states = next.into_iter().collect();
    }
    let mut law = BTreeMap::new();
    for (seq, q) in states {
        let loads: Vec<u64> =
            (0..N).map(|i| seq.iter().filter(|&&j| j == i).count() as u64).collect();
        *law.entry(key(&loads)).or_insert(0.0) += q;
    }
    law
}

/// The noncentrality of `wrong` against `law` at RUNS runs.
fn lambda(law: &BTreeMap<Vec<u64>, f64>, wrong: &BTreeMap<Vec<u64>, f64>) -> f64 {
    law.iter()
        .map(|(k, &p)| RUNS as f64 * (p - wrong.get(k).copied().unwrap_or(0.0)).powi(2) / p)
        .sum()
}

/// χ² and its critical value of RUNS runs of `spec` against `law`. The sorted loads of three
/// bins are (max, m − max − min, min), read from each run's outcome (the delay setting's loop
/// has no observers).
fn fit(spec: &RunSpec, seed0: u64, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    let keys: Vec<Vec<u64>> = (0..RUNS)
        .map(|r| {
            let out = simulate(spec, &mut sim_rng(seed0 + r)).expect("runs");
            let (max, min) = (out.max_load as u64, out.min_load as u64);
            vec![max, spec.m - max - min, min]
        })
        .collect();
    common::fit_law(&keys, law)
}

fn assert_fits(what: &str, spec: &RunSpec, seed0: u64, law: &BTreeMap<Vec<u64>, f64>) {
    assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
    let (stat, crit) = fit(spec, seed0, law);
    println!("{what}: χ² = {stat:.2} (critical {crit:.2})");
    assert!(stat < crit, "{what}: χ² = {stat:.1} ≥ {crit:.1}");
}

fn assert_rejected(
    what: &str,
    spec: &RunSpec,
    seed0: u64,
    law: &BTreeMap<Vec<u64>, f64>,
    lambda: f64,
) {
    assert!(lambda >= 100.0, "{what}: the test's power, noncentrality {lambda:.1}");
    let (stat, crit) = fit(spec, seed0, law);
    println!("{what}: χ² = {stat:.1} (critical {crit:.2}, λ = {lambda:.0})");
    assert!(stat > crit, "{what}: the wrong variant passed, χ² = {stat:.1}");
}

#[test]
fn without_replacement_the_formula_has_the_law_of_distinct_pairs() {
    let m = 6;
    let (law, law_b2) = (batched_law(m, 1, true), batched_law(m, 2, true));
    let spec = |engine| RunSpec::new(rule(false), N as u64, m).engine(engine);
    assert_fits("distinct pairs, bins", &spec(Engine::Bins), 9100, &law);
    assert_fits("distinct pairs, levels", &spec(Engine::Levels), 9100, &law);
    for engine in [Engine::Bins, Engine::Levels] {
        assert_fits(
            &format!("distinct pairs, b = 2, {engine:?}"),
            &spec(engine).batched(2),
            9100,
            &law_b2,
        );
    }
    // The built-in d-Choice without replacement passes the same test.
    let builtin = ballast_core::registry::find("two_choice")
        .unwrap()
        .build(&[("replacement", ballast_core::registry::ParamValue::Bool(false))])
        .unwrap();
    assert_fits(
        "built-in two_choice, replacement = false",
        &RunSpec::new(builtin, N as u64, m),
        9100,
        &law,
    );
}

#[test]
fn the_formula_with_replacement_is_rejected_against_the_distinct_law() {
    let m = 6;
    let (law, wrong) = (batched_law(m, 1, true), batched_law(m, 1, false));
    let spec = RunSpec::new(rule(true), N as u64, m);
    assert_rejected("i.i.d. pairs against distinct pairs", &spec, 9100, &law, lambda(&law, &wrong));
}

fn delayed(process: ProcessSpec, m: u64, tau: u64) -> RunSpec {
    let mut spec = RunSpec::new(process, N as u64, m);
    spec.setting = Setting::Delay { tau, mode: DelayMode::Random };
    spec
}

#[test]
fn in_the_delay_setting_the_formula_has_the_law_of_delayed_reports() {
    let (m, tau) = (6, 4);
    let law = delay_law(m, tau);
    assert_fits("formula, delay τ = 4", &delayed(rule(true), m, tau), 9300, &law);
    let builtin = ProcessSpec::DChoice { d: 2 };
    assert_fits("built-in two_choice, delay τ = 4", &delayed(builtin, m, tau), 9300, &law);
    // τ = 1 is the sequential process: the enumeration agrees with the sequential law.
    let (one, seq) = (delay_law(m, 1), batched_law(m, 1, false));
    for (k, p) in &seq {
        assert!((one[k] - p).abs() < 1e-12, "τ = 1 differs from sequential at {k:?}");
    }
}

#[test]
fn the_formula_on_current_loads_is_rejected_against_the_delayed_law() {
    let (m, tau) = (6, 4);
    let (law, wrong) = (delay_law(m, tau), delay_law(m, 1));
    let spec = delayed(rule(true), m, 1);
    assert_rejected(
        "current loads against delayed reports",
        &spec,
        9300,
        &law,
        lambda(&law, &wrong),
    );
}

#[test]
fn the_settings_that_do_not_apply_are_refused() {
    // Without replacement: no delay, d <= n.
    let e = ballast_core::registry::check_run(&delayed(rule(false), 6, 4)).unwrap_err().to_string();
    assert!(e.contains("does not run in the delay setting"), "{e}");
    let e = RunSpec::new(rule(false), 1, 6).validate().unwrap_err().to_string();
    assert!(e.contains("at most n"), "{e}");
}
