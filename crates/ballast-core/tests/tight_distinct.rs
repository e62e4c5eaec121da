//! Tight-Packing with distinct bins (`tight_packing` with `distinct = true`, the item in
//! `src/tight_distinct.rs`): its exact law at tiny n, the built-in's water-filling rejected
//! by the same test, the stop rule on its rounds, and the default unchanged.
//!
//! Statistics. n = 3 bins, m = 12 balls from empty bins, offset 1 (Packing's count) and
//! truncation at m. The law of the sorted final loads is enumerated from the definition: a
//! uniform sample; `x·n ≥ W`: one ball there; else a round of c = ⌈W/n⌉ + 1 − x balls, one
//! into each of the c least loaded bins at the round's start (cycling when c > n), cut at m
//! (the least loaded first). Ties among equally loaded bins do not change sorted loads.
//! 20 000 seeded runs (seeds 5000..25000) are compared with it by Pearson's χ² at α = 0.001
//! ([`common::fit_final_law`]; cells with expected count below 5 pooled). Power: the
//! water-filling law (each ball of a round to a bin least loaded when it is placed, the
//! built-in) reaches 2 states the distinct law cannot (a certain rejection once seen) and
//! on the 9 shared states has noncentrality λ = RUNS·Σ(p − q)²/p = 494 (asserted ≥ 200),
//! where the test rejects with probability above 1 − 10⁻⁹; the built-in is run and
//! rejected. (At m = 9 λ is only 132: the rounds rarely differ that early.)

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{find, ParamValue};
use ballast_core::{sim_rng, simulate, Engine, ProcessSpec, RunSpec, Stop};

const N: usize = 3;
const M: u64 = 12;
const RUNS: u64 = 20_000;

fn tight(distinct: bool, balls: Option<u32>) -> ProcessSpec {
    let mut given = vec![("distinct", ParamValue::Bool(distinct))];
    if let Some(b) = balls {
        given.push(("balls", ParamValue::Num(f64::from(b))));
    }
    find("tight_packing").unwrap().build(&given).unwrap()
}

/// The sorted loads (ascending) after `c` balls of a round from `v` (ascending).
fn round(v: &[u64], c: u64, distinct: bool) -> Vec<u64> {
    let mut v = v.to_vec();
    for b in 0..c as usize {
        // Distinct: the round's order is the start's (v stays in it until the end);
        // water-filling: a least loaded bin now, the first of the re-sorted loads.
        v[if distinct { b % N } else { 0 }] += 1;
        if !distinct {
            v.sort_unstable();
        }
    }
    v.sort_unstable();
    v
}

/// The exact law of the heaviest-first sorted loads after M balls.
fn law(distinct: bool) -> BTreeMap<Vec<u64>, f64> {
    let mut open: BTreeMap<(u64, Vec<u64>), f64> = BTreeMap::from([((0, vec![0; N]), 1.0)]);
    let mut law = BTreeMap::new();
    while let Some(((w, loads), q)) = open.pop_first() {
        if w == M {
            law.insert(loads.iter().rev().copied().collect::<Vec<u64>>(), q);
            continue;
        }
        for bin in 0..N {
            let x = loads[bin];
            let (k, after) = if x * N as u64 >= w {
                let mut v = loads.clone();
                v[bin] += 1;
                v.sort_unstable();
                (1, v)
            } else {
                let c = (w.div_ceil(N as u64) + 1 - x).min(M - w);
                (c, round(&loads, c, distinct))
            };
            *open.entry((w + k, after)).or_insert(0.0) += q / N as f64;
        }
    }
    law
}

#[test]
fn distinct_rounds_have_the_exact_law_and_water_filling_is_rejected() {
    let (right, filling) = (law(true), law(false));
    assert!((right.values().sum::<f64>() - 1.0).abs() < 1e-12);
    let lambda: f64 = right
        .iter()
        .map(|(k, &p)| RUNS as f64 * (p - filling.get(k).copied().unwrap_or(0.0)).powi(2) / p)
        .sum();
    let shared = filling.keys().filter(|k| right.contains_key(*k)).count();
    println!("states: {} distinct, {} water-filling, {shared} shared", right.len(), filling.len());
    assert!(lambda >= 200.0, "the test's power: noncentrality {lambda:.1}");
    let fit = |p: &ProcessSpec| {
        let spec = RunSpec::new(p.clone(), N as u64, M).engine(Engine::Bins);
        common::fit_final_law(&spec, RUNS, 5000, &right)
    };
    let (stat, crit) = fit(&tight(true, None));
    println!("distinct: χ² = {stat:.2} (critical {crit:.2})");
    assert!(stat < crit, "χ² = {stat:.1} ≥ {crit:.1}");
    let (stat, crit) = fit(&tight(false, None));
    println!("water-filling against it: χ² = {stat:.1} (critical {crit:.2}, λ = {lambda:.0})");
    assert!(stat > crit, "water-filling passed, χ² = {stat:.1}");
}

#[test]
fn rounds_follow_the_stop_rule_and_the_default_is_the_built_in() {
    assert_eq!(tight(false, None), ProcessSpec::TightPacking { offset: 1, balls: None });
    let spec = |stop| RunSpec::new(tight(true, Some(4)), 10, 1000).stop(stop);
    for seed in 0..5 {
        let cut = simulate(&spec(Stop::Truncate), &mut sim_rng(seed)).unwrap();
        let full = simulate(&spec(Stop::Finish), &mut sim_rng(seed)).unwrap();
        assert_eq!(cut.balls, 1000);
        assert!((1000..1004).contains(&full.balls), "{}", full.balls);
        // One sample per step (a round is one step).
        assert_eq!(cut.samples, cut.steps);
    }
    // A round of 25 balls on 10 bins: 2 passes and the 5 least loaded once more; the gap
    // stays small (every round lifts the lightest bins).
    let big = RunSpec::new(tight(true, Some(25)), 10, 10_000);
    let out = simulate(&big, &mut sim_rng(3)).unwrap();
    assert!(out.final_gap <= 3.0, "gap {}", out.final_gap);
    let levels = RunSpec::new(tight(true, None), 10, 100).engine(Engine::Levels);
    let e = simulate(&levels, &mut sim_rng(1)).unwrap_err().to_string();
    assert!(e.contains("keeps the bins of a round"), "{e}");
}
