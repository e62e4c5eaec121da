//! Tight-Packing with distinct bins (`tight_packing` with `distinct = true`, the item in
//! `src/items/tight_distinct.rs`): its exact law at tiny n on both engines, the built-in's
//! water-filling and a wrong level variant rejected by the same test, the stop rule on its
//! rounds, and the default unchanged.
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
//!
//! Level engine (sequential): the same law, seeds and test; also the law with the last
//! round completed (`finish`, enumerated the same way without the cut; about a third of
//! the runs pass m) and with fixed rounds of 4 balls on 3 bins (every round cycles), on
//! both engines. Its wrong variant ([`tight_distinct::KEEP_POSITIONS`]) sends ball b of a
//! round to position b mod n of the sorted view as it is when the ball lands instead of to
//! the load the round's b-th bin then has; its law, enumerated (a ball moves the last bin
//! of its level up), puts 0.42 of its mass on states the right law cannot reach and has
//! λ = 15 800 on the shared ones: rejected with certainty in practice.

mod common;

use std::collections::BTreeMap;

use ballast_core::item::CustomSpec;
use ballast_core::items::tight_distinct;
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

/// How a round's balls are placed.
#[derive(Clone, Copy, PartialEq)]
enum Round {
    /// One into each of the c least loaded bins at the round's start (the definition).
    Distinct,
    /// Each to a bin least loaded when it is placed (the built-in).
    WaterFilling,
    /// The wrong level variant: ball b to position b mod n of the sorted view as it is when
    /// the ball lands (a ball moves the last bin of its level up).
    Positions,
}

/// The sorted loads (ascending) after `c` balls of a round from `v` (ascending).
fn round(v: &[u64], c: u64, how: Round) -> Vec<u64> {
    let mut v = v.to_vec();
    for b in 0..c as usize {
        match how {
            // The round's order is the start's (v stays in it until the end).
            Round::Distinct => v[b % N] += 1,
            // A least loaded bin now, the first of the re-sorted loads.
            Round::WaterFilling => {
                v[0] += 1;
                v.sort_unstable();
            }
            Round::Positions => {
                let last = v.partition_point(|&y| y <= v[b % N]) - 1;
                v[last] += 1;
            }
        }
    }
    v.sort_unstable();
    v
}

/// The exact law of the heaviest-first sorted loads after M balls (truncate).
fn law(distinct: bool) -> BTreeMap<Vec<u64>, f64> {
    law_of(if distinct { Round::Distinct } else { Round::WaterFilling }, Stop::Truncate, None)
}

/// The exact law of the heaviest-first sorted loads after M balls, the last round cut at M
/// (`truncate`) or completed (`finish`); rounds of Packing's count, or of `fixed` balls.
fn law_of(how: Round, stop: Stop, fixed: Option<u64>) -> BTreeMap<Vec<u64>, f64> {
    let mut open: BTreeMap<(u64, Vec<u64>), f64> = BTreeMap::from([((0, vec![0; N]), 1.0)]);
    let mut law = BTreeMap::new();
    while let Some(((w, loads), q)) = open.pop_first() {
        if w >= M {
            *law.entry(loads.iter().rev().copied().collect::<Vec<u64>>()).or_insert(0.0) += q;
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
                let c = fixed.unwrap_or(w.div_ceil(N as u64) + 1 - x);
                let c = if stop == Stop::Finish { c } else { c.min(M - w) };
                (c, round(&loads, c, how))
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
    let fit = |p: &ProcessSpec| fit_on(p, Engine::Bins, Stop::Truncate, &right);
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, crit) = fit_on(&tight(true, None), engine, Stop::Truncate, &right);
        println!("distinct {engine:?}: χ² = {stat:.2} (critical {crit:.2})");
        assert!(stat < crit, "{engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
    }
    let (stat, crit) = fit(&tight(false, None));
    println!("water-filling against it: χ² = {stat:.1} (critical {crit:.2}, λ = {lambda:.0})");
    assert!(stat > crit, "water-filling passed, χ² = {stat:.1}");
}

#[test]
fn rounds_longer_than_n_cycle_on_both_engines() {
    // Rounds of 4 balls on 3 bins: every bin one ball, the least loaded a second.
    let right = law_of(Round::Distinct, Stop::Truncate, Some(4));
    let filling = law_of(Round::WaterFilling, Stop::Truncate, Some(4));
    assert!((right.values().sum::<f64>() - 1.0).abs() < 1e-12);
    assert_ne!(right, filling, "the cycle is seen in the law");
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, crit) = fit_on(&tight(true, Some(4)), engine, Stop::Truncate, &right);
        println!("distinct, rounds of 4 {engine:?}: χ² = {stat:.2} (critical {crit:.2})");
        assert!(stat < crit, "{engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
    }
}

fn fit_on(
    p: &ProcessSpec,
    engine: Engine,
    stop: Stop,
    law: &BTreeMap<Vec<u64>, f64>,
) -> (f64, f64) {
    let spec = RunSpec::new(p.clone(), N as u64, M).engine(engine).stop(stop);
    common::fit_final_law(&spec, RUNS, 5000, law)
}

#[test]
fn finished_rounds_have_their_law_on_both_engines() {
    let (right, cut) = (law_of(Round::Distinct, Stop::Finish, None), law(true));
    assert!((right.values().sum::<f64>() - 1.0).abs() < 1e-12);
    // Not vacuous: completed rounds pass m = 12 with positive probability.
    let past: f64 = right.iter().filter(|e| e.0.iter().sum::<u64>() > M).map(|e| e.1).sum();
    assert!(past > 0.01 && !cut.keys().any(|k| k.iter().sum::<u64>() > M), "{past}");
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, crit) = fit_on(&tight(true, None), engine, Stop::Finish, &right);
        println!(
            "distinct, finish {engine:?}: χ² = {stat:.2} (critical {crit:.2}, P(> m) = {past:.3})"
        );
        assert!(stat < crit, "{engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
    }
}

#[test]
fn keeping_positions_on_the_level_engine_is_rejected() {
    let (right, wrong) = (law(true), law_of(Round::Positions, Stop::Truncate, None));
    assert!((wrong.values().sum::<f64>() - 1.0).abs() < 1e-12);
    let lambda: f64 = right
        .iter()
        .map(|(k, &p)| RUNS as f64 * (p - wrong.get(k).copied().unwrap_or(0.0)).powi(2) / p)
        .sum();
    let outside = wrong.iter().filter(|e| !right.contains_key(e.0)).fold(0.0, |a, e| a + e.1);
    assert!(lambda >= 200.0, "the test's power: noncentrality {lambda:.1}");
    let args = find("tight_packing").unwrap().list().args(&[("distinct", ParamValue::Bool(true))]);
    let spec = ProcessSpec::Custom(CustomSpec::new(&tight_distinct::KEEP_POSITIONS, args.unwrap()));
    // On bins the variant is the right rule.
    let (stat, crit) = fit_on(&spec, Engine::Bins, Stop::Truncate, &right);
    assert!(stat < crit, "bins: χ² = {stat:.1} ≥ {crit:.1}");
    let (stat, crit) = fit_on(&spec, Engine::Levels, Stop::Truncate, &right);
    println!(
        "positions kept on levels: χ² = {stat:.1} (critical {crit:.2}, λ = {lambda:.0}, mass \
         outside the law {outside:.3})"
    );
    assert!(stat > crit, "the positional variant passed on levels, χ² = {stat:.1}");
}

#[test]
fn rounds_follow_the_stop_rule_and_the_default_is_the_built_in() {
    assert_eq!(tight(false, None), ProcessSpec::TightPacking { offset: 1, balls: None });
    for engine in [Engine::Bins, Engine::Levels] {
        let spec = |stop| RunSpec::new(tight(true, Some(4)), 10, 1000).stop(stop).engine(engine);
        for seed in 0..5 {
            let cut = simulate(&spec(Stop::Truncate), &mut sim_rng(seed)).unwrap();
            let full = simulate(&spec(Stop::Finish), &mut sim_rng(seed)).unwrap();
            assert_eq!(cut.balls, 1000);
            assert!((1000..1004).contains(&full.balls), "{}", full.balls);
            // One sample per step (a round is one step); the level engine counts no steps.
            if engine == Engine::Bins {
                assert_eq!(cut.samples, cut.steps);
            }
        }
    }
    // A round of 25 balls on 10 bins: 2 passes and the 5 least loaded once more; the gap
    // stays small (every round lifts the lightest bins).
    let big = RunSpec::new(tight(true, Some(25)), 10, 10_000);
    for engine in [Engine::Bins, Engine::Levels] {
        let out = simulate(&big.clone().engine(engine), &mut sim_rng(3)).unwrap();
        assert!(out.final_gap <= 3.0, "{engine:?}: gap {}", out.final_gap);
    }
    // `auto`: the level engine from 10 bins, sequential only.
    let auto = |n, p: ProcessSpec| ballast_core::resolve_engine(&RunSpec::new(p, n, 100)).unwrap();
    assert_eq!(auto(10, tight(true, None)), Engine::Levels);
    assert_eq!(auto(9, tight(true, None)), Engine::Bins);
    let batched = RunSpec::new(tight(true, None), 1000, 100).batched(5000);
    assert_eq!(ballast_core::resolve_engine(&batched).unwrap(), Engine::Bins);
    let levels = RunSpec::new(tight(true, None), 10, 100).engine(Engine::Levels);
    let e = simulate(&levels.batched(5), &mut sim_rng(1)).unwrap_err().to_string();
    assert!(e.contains("tight_packing with distinct = true sequentially only"), "{e}");
}
