//! `equalize` with `moves = r` (reallocation with at most r moved balls per step,
//! `src/realloc.rs`) against the exact law of its definition, on both engines; r = 0 against
//! Greedy\[d\] with random ties; a large r against equalize's histogram law; two deliberately
//! wrong steps rejected by the same test; the parameter's refusals.
//!
//! Statistics. n = 3 bins from empty, so the sorted loads are (min, m − min − max, max) and
//! the outcome gives the whole state. The exact law of (sorted loads, moved balls) after m
//! steps is enumerated from the definition (every ordered d-tuple of uniform samples, the
//! distinct sampled bins, the new ball to each least loaded one and each move between each
//! most and each least loaded one with equal weight), independently of the library's step.
//! 20 000 runs per case and engine, seeds `derive_seed(4242, [case, engine, r])`, are compared
//! with it by Pearson's χ² at α = 0.001 (`common::fit_law`: states of expected count below 5
//! pooled in state order; an observed state outside the law rejects). Power: each wrong step's
//! exact law has a noncentrality λ = RUNS·Σ(p − q)²/p against the right law over the right
//! law's states, asserted ≥ 200 (printed; at most 30 degrees of freedom after pooling, where
//! the critical value is below 60, while a noncentral χ² with λ = 200 has mean df + 200 and
//! standard deviation √(2(df + 400)) ≤ 30: the power is above 1 − 10⁻⁶; the measured λ are
//! 962 and 10⁶, and moving at spread 1 also gives states outside the law, a certain
//! rejection). The wrong steps: moving while the spread
//! is 1 (the right histogram, too many moved balls) and counting the new ball as one of the r
//! moves (r = 1 becomes Greedy\[d\], a wrong histogram). At n = 1000 the two engines are
//! compared with each other (`engines_agree_at_moderate_n`).

mod common;

use std::collections::BTreeMap;

use ballast_core::realloc::{simulate_equalize_moves_flawed, MovesFlaw};
use ballast_core::registry::{find, ParamValue};
use ballast_core::{derive_seed, sim_rng, simulate, Engine, ProcessSpec, RunOutcome, RunSpec};
use common::fit_law;

const N: usize = 3;
const RUNS: u64 = 20_000;

/// A state: the sorted loads and the balls moved so far.
type State = (Vec<u64>, u64);

/// How the enumerated step moves: the spread at which it still moves, and how many of the
/// `moves` the new ball uses (the right step: 2 and 0).
#[derive(Clone, Copy)]
struct Variant {
    spread: u64,
    new_ball_uses: u32,
}

const RIGHT: Variant = Variant { spread: 2, new_ball_uses: 0 };
const AT_SPREAD_ONE: Variant = Variant { spread: 1, new_ball_uses: 0 };
const NEW_BALL_COUNTS: Variant = Variant { spread: 2, new_ball_uses: 1 };

/// The indices among `bins` whose load in `v` is the largest (`most`) or the smallest.
fn ties(v: &[u64], bins: &[usize], most: bool) -> Vec<usize> {
    let pick = |it: std::slice::Iter<'_, usize>| {
        let loads = it.map(|&i| v[i]);
        if most { loads.max() } else { loads.min() }.expect("a bin")
    };
    let x = pick(bins.iter());
    bins.iter().copied().filter(|&i| v[i] == x).collect()
}

/// Adds to `out` the law of the moves from loads `v` with `budget` moves left.
fn moves_law(
    v: &[u64],
    bins: &[usize],
    budget: u32,
    var: Variant,
    state: (u64, f64),
    out: &mut Vec<(Vec<u64>, u64, f64)>,
) {
    let (moved, w) = state;
    let (hi, lo) = (ties(v, bins, true), ties(v, bins, false));
    if budget == 0 || v[hi[0]] - v[lo[0]] < var.spread {
        out.push((v.to_vec(), moved, w));
        return;
    }
    let share = w / (hi.len() * lo.len()) as f64;
    for &a in &hi {
        for &b in &lo {
            let mut u = v.to_vec();
            u[a] -= 1;
            u[b] += 1;
            moves_law(&u, bins, budget - 1, var, (moved + 1, share), out);
        }
    }
}

/// The exact law of (sorted loads, moved) after `m` steps of the step `var` with `moves`.
fn exact_law(m: usize, d: u32, moves: u32, var: Variant) -> BTreeMap<State, f64> {
    let mut states: BTreeMap<State, f64> = BTreeMap::new();
    states.insert((vec![0; N], 0), 1.0);
    let tuples = N.pow(d);
    for _ in 0..m {
        let mut next = BTreeMap::new();
        for ((loads, moved), &pr) in &states {
            for t in 0..tuples {
                let (mut x, mut bins) = (t, Vec::new());
                for _ in 0..d {
                    if !bins.contains(&(x % N)) {
                        bins.push(x % N);
                    }
                    x /= N;
                }
                let lightest = ties(loads, &bins, false);
                let mut out = Vec::new();
                for &b in &lightest {
                    let mut v = loads.clone();
                    v[b] += 1;
                    let w = pr / tuples as f64 / lightest.len() as f64;
                    let budget = moves.saturating_sub(var.new_ball_uses);
                    moves_law(&v, &bins, budget, var, (*moved, w), &mut out);
                }
                for (mut v, mv, w) in out {
                    v.sort_unstable();
                    *next.entry((v, mv)).or_insert(0.0) += w;
                }
            }
        }
        states = next;
    }
    assert!((states.values().sum::<f64>() - 1.0).abs() < 1e-12);
    states
}

/// The exact law of the sorted loads of equalize (the even spread): the marginal the large-r
/// process must share.
fn equalize_histogram_law(m: usize, d: u32) -> BTreeMap<Vec<u64>, f64> {
    let mut states: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    states.insert(vec![0; N], 1.0);
    let tuples = N.pow(d);
    for _ in 0..m {
        let mut next = BTreeMap::new();
        for (loads, &pr) in &states {
            for t in 0..tuples {
                let (mut x, mut bins) = (t, Vec::new());
                for _ in 0..d {
                    if !bins.contains(&(x % N)) {
                        bins.push(x % N);
                    }
                    x /= N;
                }
                let total: u64 = bins.iter().map(|&i| loads[i]).sum::<u64>() + 1;
                let c = bins.len() as u64;
                let mut v = loads.clone();
                for (j, &i) in bins.iter().enumerate() {
                    v[i] = total / c + u64::from((j as u64) < total % c);
                }
                v.sort_unstable();
                *next.entry(v).or_insert(0.0) += pr / tuples as f64;
            }
        }
        states = next;
    }
    states
}

fn spec(m: u64, d: u32, moves: u32, engine: Engine) -> RunSpec {
    RunSpec::new(ProcessSpec::EqualizeMoves { d, moves }, N as u64, m).engine(engine)
}

/// The state of one outcome (sorted loads on 3 bins, moved).
fn key(o: &RunOutcome, m: u64) -> State {
    let (min, max) = (o.min_load as u64, o.max_load as u64);
    (vec![min, m - min - max, max], o.moved)
}

/// The states of `RUNS` seeded runs of `spec` (by `run`, the library's loop by default).
fn states(spec: &RunSpec, seed: u64, run: impl Fn(&RunSpec, u64) -> RunOutcome) -> Vec<State> {
    (0..RUNS).map(|r| key(&run(spec, derive_seed(seed, &[r])), spec.m)).collect()
}

fn library(spec: &RunSpec, seed: u64) -> RunOutcome {
    simulate(spec, &mut sim_rng(seed)).expect("runs")
}

/// λ = RUNS·Σ(p − q)²/p over the states of `right`.
fn noncentrality<K: Ord>(right: &BTreeMap<K, f64>, wrong: &BTreeMap<K, f64>) -> f64 {
    right
        .iter()
        .map(|(k, &p)| RUNS as f64 * (p - wrong.get(k).copied().unwrap_or(0.0)).powi(2) / p)
        .sum()
}

const ENGINES: [Engine; 2] = [Engine::Bins, Engine::Levels];

#[test]
fn one_move_follows_the_exact_law_on_both_engines() {
    for (case, (m, d)) in [(6u64, 2u32), (6, 3)].into_iter().enumerate() {
        let law = exact_law(m as usize, d, 1, RIGHT);
        for (e, engine) in ENGINES.into_iter().enumerate() {
            let seed = derive_seed(4242, &[case as u64, e as u64, 1]);
            let (stat, crit) = fit_law(&states(&spec(m, d, 1, engine), seed, library), &law);
            println!("r = 1, m = {m}, d = {d}, {engine:?}: χ² = {stat:.1} (critical {crit:.1})");
            assert!(stat < crit, "r = 1, m = {m}, d = {d}, {engine:?}: {stat:.1} >= {crit:.1}");
        }
    }
}

#[test]
fn no_moves_is_greedy_with_random_ties() {
    for (case, (m, d)) in [(7u64, 2u32), (6, 3)].into_iter().enumerate() {
        // Greedy[d]'s law from the shared enumerator (the first least loaded sample: ties
        // among equal loads do not change the sorted loads).
        let greedy: BTreeMap<State, f64> =
            common::exact_sorted_law(N, m as usize, d, |loads, s| {
                *s.iter().min_by_key(|&&i| loads[i]).expect("a sample")
            })
            .into_iter()
            .map(|(k, p)| ((k, 0), p))
            .collect();
        let own = exact_law(m as usize, d, 0, RIGHT);
        assert_eq!(own.len(), greedy.len());
        for (k, p) in &own {
            assert!((p - greedy[k]).abs() < 1e-12, "{k:?}: {p} vs {}", greedy[k]);
        }
        for (e, engine) in ENGINES.into_iter().enumerate() {
            let seed = derive_seed(4242, &[10 + case as u64, e as u64, 0]);
            let (stat, crit) = fit_law(&states(&spec(m, d, 0, engine), seed, library), &greedy);
            println!("r = 0, m = {m}, d = {d}, {engine:?}: χ² = {stat:.1} (critical {crit:.1})");
            assert!(stat < crit, "r = 0, m = {m}, d = {d}, {engine:?}: {stat:.1} >= {crit:.1}");
        }
    }
}

#[test]
fn unlimited_moves_have_the_histogram_law_of_equalize() {
    for (case, (m, d)) in [(6u64, 2u32), (7, 3)].into_iter().enumerate() {
        let even = equalize_histogram_law(m as usize, d);
        // The definition's law at r = ∞ has the same marginal: enumerated, then sampled.
        let mut own: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
        for ((v, _), p) in exact_law(m as usize, d, u32::MAX, RIGHT) {
            *own.entry(v).or_insert(0.0) += p;
        }
        assert_eq!(own.len(), even.len());
        for (k, p) in &own {
            assert!((p - even[k]).abs() < 1e-12, "{k:?}: {p} vs {}", even[k]);
        }
        for (e, engine) in ENGINES.into_iter().enumerate() {
            let seed = derive_seed(4242, &[20 + case as u64, e as u64, u64::from(u32::MAX)]);
            let s = spec(m, d, u32::MAX, engine);
            let loads: Vec<Vec<u64>> =
                states(&s, seed, library).into_iter().map(|(v, _)| v).collect();
            let (stat, crit) = fit_law(&loads, &even);
            println!("r = ∞, m = {m}, d = {d}, {engine:?}: χ² = {stat:.1} (critical {crit:.1})");
            assert!(stat < crit, "r = ∞, m = {m}, d = {d}, {engine:?}: {stat:.1} >= {crit:.1}");
        }
    }
}

#[test]
fn the_test_rejects_wrong_steps() {
    let (m, d) = (6u64, 2u32);
    let law = exact_law(m as usize, d, 1, RIGHT);
    for (flaw, var) in
        [(MovesFlaw::MovesAtSpreadOne, AT_SPREAD_ONE), (MovesFlaw::NewBallCounts, NEW_BALL_COUNTS)]
    {
        let lambda = noncentrality(&law, &exact_law(m as usize, d, 1, var));
        assert!(lambda >= 200.0, "{flaw:?}: the test's power, noncentrality {lambda:.1}");
        for (e, levels) in [false, true].into_iter().enumerate() {
            let wrong = |s: &RunSpec, seed: u64| {
                simulate_equalize_moves_flawed(s, d, 1, levels, &mut sim_rng(seed), flaw)
                    .expect("runs")
            };
            let seed = derive_seed(4243, &[flaw as u64, e as u64]);
            let (stat, crit) = fit_law(&states(&spec(m, d, 1, Engine::Bins), seed, wrong), &law);
            println!(
                "{flaw:?}, levels = {levels}: χ² = {stat:.1} (critical {crit:.1}, λ = {lambda:.0})"
            );
            assert!(stat > crit, "{flaw:?}, levels = {levels}: passed with χ² = {stat:.1}");
        }
    }
}

fn build(params: &[(&str, ParamValue)]) -> Result<ProcessSpec, String> {
    find("equalize").expect("a built-in kind").build(params).map_err(|e| e.to_string())
}

#[test]
fn moves_is_an_optional_parameter_of_equalize() {
    let d = ("d", ParamValue::Num(2.0));
    assert_eq!(build(std::slice::from_ref(&d)), Ok(ProcessSpec::Equalize { d: 2 }));
    assert_eq!(
        build(&[d.clone(), ("moves", ParamValue::Num(3.0))]),
        Ok(ProcessSpec::EqualizeMoves { d: 2, moves: 3 })
    );
    for bad in [-1.0, 1.5, 5e9] {
        let e = build(&[d.clone(), ("moves", ParamValue::Num(bad))]).unwrap_err();
        assert!(e.contains("`moves`") && e.contains("an integer in 0..=4294967295"), "{e}");
    }
    let e = build(&[d.clone(), ("moves", ParamValue::Text("one".into()))]).unwrap_err();
    assert!(e.contains("`moves`"), "{e}");
    let e = find("two_choice").unwrap().build(&[("moves", ParamValue::Num(1.0))]).unwrap_err();
    assert!(e.to_string().contains("unknown parameter `moves`"), "{e}");
}

#[test]
fn the_kind_is_equalize_and_its_refusals_hold() {
    let s = spec(10, 2, 1, Engine::Auto);
    assert_eq!(s.process.kind(), "equalize");
    assert!(s.process.reallocates());
    let batched = RunSpec { setting: ballast_core::Setting::Batched { b: 2 }, ..s.clone() };
    assert!(simulate(&batched, &mut sim_rng(1)).is_err());
    let started = s.clone().start(ballast_core::Start::OneBin { balls: 3 });
    assert!(simulate(&started, &mut sim_rng(1)).is_err());
}

/// n = 1000, m = 10n, d = 2 and 3, r = 1, 1 000 runs per engine (seeds
/// `derive_seed(4244, [d, engine, run])`): the engines agree on the max and min load (two-sample
/// χ² at α = 0.001) and on the mean moved balls per run (|z| < 3.29, the two-sided 0.001
/// quantile): the level engine's positions stand for bins beyond tiny n too.
#[test]
fn engines_agree_at_moderate_n() {
    let (n, runs) = (1000u64, 1_000u64);
    for d in [2u32, 3] {
        let per_engine: Vec<Vec<RunOutcome>> = ENGINES
            .into_iter()
            .enumerate()
            .map(|(e, engine)| {
                let s = RunSpec::new(ProcessSpec::EqualizeMoves { d, moves: 1 }, n, 10 * n)
                    .engine(engine);
                let seed = derive_seed(4244, &[u64::from(d), e as u64]);
                (0..runs).map(|r| library(&s, derive_seed(seed, &[r]))).collect()
            })
            .collect();
        let (a, b) = (&per_engine[0], &per_engine[1]);
        common::assert_extremes_agree(a, b, &format!("d = {d}"));
        let moments = |v: &[RunOutcome]| {
            let x: Vec<f64> = v.iter().map(|o| o.moved as f64).collect();
            let mean = x.iter().sum::<f64>() / x.len() as f64;
            let var = x.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (x.len() - 1) as f64;
            (mean, var / x.len() as f64)
        };
        let ((ma, va), (mb, vb)) = (moments(a), moments(b));
        let z = (ma - mb) / (va + vb).sqrt();
        println!("d = {d}, moved: {ma:.1} vs {mb:.1}, z = {z:.2}");
        assert!(z.abs() < 3.29, "d = {d}, moved: {ma:.1} vs {mb:.1}, z = {z:.2}");
    }
}
