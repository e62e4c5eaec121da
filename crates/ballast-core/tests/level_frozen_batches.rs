//! Batches of rules without a batch law on the level engine (`level/frozen.rs`): a rule
//! formula (Two-Choice) and a process item with multi-ball steps (`filling_rule`) in the
//! batched setting, decision by decision on the frozen sorted view.
//!
//! Statistics. Exact law: n = 3 bins, m = 6 balls in batches of b = 3 from empty bins; within
//! a batch every ball independently lands on bin i with the probability p_i that Two-Choice
//! (random ties) gives on the batch's frozen loads, so each batch's law is enumerated with
//! `exact_batch_law` and chained. 20 000 seeded runs (seeds 9000..29000) on each engine are
//! compared with it by Pearson's χ² at α = 0.001; cells with an expected count below 5 are
//! pooled. Power: the sequential Two-Choice law (the state updated after every ball, which a
//! wrong batch step would give) has noncentrality λ = RUNS·Σ(p − q)²/p ≥ 200 against the
//! batched law (asserted), and the sequential runs are rejected by the same test. The
//! multi-ball item has no closed law here; its levels runs are compared with its bins runs by a
//! two-sample χ² of the final gap (2 000 runs each, n = 40, m = 2 000, b = 80, α = 0.001).

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{find, ParamValue};
use ballast_core::{sim_rng, simulate, Engine, ProcessSpec, RunSpec};
use ballast_testkit::{chi2_critical, chi2_two_sample, exact_batch_law};

const N: usize = 3;
const M: u64 = 6;
const B: u64 = 3;
const RUNS: u64 = 20_000;
const TWO_CHOICE: &str = "if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))";

fn rule(choose: &str) -> ProcessSpec {
    let t = |s: &str| ParamValue::Text(s.to_owned());
    find("rule").unwrap().build(&[("d", ParamValue::Num(2.0)), ("choose", t(choose))]).unwrap()
}

/// Two-Choice's landing probability of each bin on frozen `loads` (every ordered pair of
/// samples with probability 1/n², the lighter, a fair coin on a tie).
fn two_choice_p(loads: &[u64]) -> Vec<f64> {
    let mut p = vec![0.0; N];
    for a in 0..N {
        for b in 0..N {
            let w = 1.0 / (N * N) as f64;
            match loads[a].cmp(&loads[b]) {
                std::cmp::Ordering::Less => p[a] += w,
                std::cmp::Ordering::Greater => p[b] += w,
                std::cmp::Ordering::Equal => {
                    p[a] += w / 2.0;
                    p[b] += w / 2.0;
                }
            }
        }
    }
    p
}

/// The law of the sorted loads after M balls in batches of `b` (b = 1: sequential).
fn exact_law(b: u64) -> BTreeMap<Vec<u64>, f64> {
    let mut law = BTreeMap::from([(vec![0u64; N], 1.0)]);
    for _ in 0..M / b {
        let mut next = BTreeMap::new();
        for (loads, q) in &law {
            for (after, r) in exact_batch_law(loads, &two_choice_p(loads), b as u32) {
                let mut after = after;
                after.sort_unstable_by(|x, y| y.cmp(x));
                *next.entry(after).or_insert(0.0) += q * r;
            }
        }
        law = next;
    }
    law
}

fn chi2(spec: &RunSpec, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    common::fit_final_law(spec, RUNS, 9000, law)
}

#[test]
fn a_rule_formula_in_batches_has_the_exact_batched_law_on_both_engines() {
    let law = exact_law(B);
    assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
    for engine in [Engine::Bins, Engine::Levels] {
        let spec = RunSpec::new(rule(TWO_CHOICE), N as u64, M).batched(B).engine(engine);
        let (stat, crit) = chi2(&spec, &law);
        println!("batched rule on {engine:?}: χ² = {stat:.2} (critical {crit:.2})");
        assert!(stat < crit, "{engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
    }
}

#[test]
fn sequential_decisions_are_rejected_as_a_batch_law() {
    let (law, live) = (exact_law(B), exact_law(1));
    let lambda: f64 = law
        .iter()
        .map(|(k, &p)| RUNS as f64 * (p - live.get(k).copied().unwrap_or(0.0)).powi(2) / p)
        .sum();
    assert!(lambda >= 200.0, "the test's power: noncentrality {lambda:.1}");
    let spec = RunSpec::new(rule(TWO_CHOICE), N as u64, M).engine(Engine::Levels);
    let (stat, crit) = chi2(&spec, &law);
    println!("sequential runs against the batched law: χ² = {stat:.1} (critical {crit:.2})");
    assert!(stat > crit, "sequential decisions passed as batched, χ² = {stat:.1}");
}

#[test]
fn a_multi_ball_item_in_batches_agrees_between_engines() {
    let twinning = find("filling_rule")
        .unwrap()
        .build(&[("balls", ParamValue::Text("if(x < avg, 2, 1)".into()))])
        .unwrap();
    let gaps = |engine: Engine, seed0: u64| -> Vec<i64> {
        let spec = RunSpec::new(twinning.clone(), 40, 2_000).batched(80).engine(engine);
        (0..2_000)
            .map(|r| simulate(&spec, &mut sim_rng(seed0 + r)).unwrap().final_gap.ceil() as i64)
            .collect()
    };
    let hist = |v: &[i64]| ballast_testkit::histogram(v.iter().copied(), 0, 40);
    let (bins, levels) = (gaps(Engine::Bins, 1), gaps(Engine::Levels, 100_000));
    let (stat, df) = chi2_two_sample(&hist(&bins), &hist(&levels));
    let crit = chi2_critical(df);
    println!(
        "filling_rule batched, bins vs levels: χ² = {stat:.2} on {df} df (critical {crit:.2})"
    );
    assert!(stat < crit, "χ² = {stat:.1} ≥ {crit:.1}");
}
