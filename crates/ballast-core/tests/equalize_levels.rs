//! `equalize{d}` (Czumaj–Stemann reallocation) on the level engine
//! (`czumaj::simulate_equalize_levels`) against the exact law of the chain and against the
//! bin engine's loop (`czumaj::simulate_equalize`), with two deliberately wrong variants that
//! the same tests reject. α = `common::ALPHA` = 0.001 per comparison.
//!
//! - **Exact joint law** (`both_engines_follow_the_exact_law_of_loads_and_moves`): on n = 3
//!   bins the sorted loads are (min, m − min − max, max), so the outcome gives the full state;
//!   with the number of moved balls it is compared with the exact law of the chain
//!   (every ordered d-tuple of samples, the distinct sampled bins, every remainder subset
//!   equally likely; enumerated in exact arithmetic on f64 weights) for (m, d) = (5, 2),
//!   (6, 3) and (7, 4): one-sample Pearson goodness of fit, states of expected count below 5
//!   lumped in state order, 20 000 runs per engine and case, seeds
//!   `derive_seed(8080, [case, engine])`. Statistics at these seeds: quoted in the test.
//! - **Power** (`the_test_rejects_wrong_steps`): the same test rejects a step that gives the
//!   whole remainder to one bin (a wrong histogram when d >= 3) and one that gives it to the
//!   lightest sampled bins (the right histogram, the wrong number of moved balls).
//! - **Moderate n** (`engines_agree_at_moderate_n`): n = 1000, m = 10n, d = 2 and 3, 2 000
//!   runs per engine: max load and min load by two-sample chi-square, moved balls per run by a
//!   two-sample z-test of the means (|z| < 3.29, the two-sided 0.001 quantile).

mod common;

use std::collections::BTreeMap;

use ballast_core::czumaj::{simulate_equalize_levels_flawed, EqualizeFlaw};
use ballast_core::{derive_seed, resolve_engine, sim_rng, simulate, Engine, ProcessSpec, RunSpec};
use common::fit_law;

/// Exact law of (sorted loads, moved balls) after `m` steps of equalize{d} on `n` bins.
fn exact_law(n: usize, m: usize, d: u32) -> BTreeMap<(Vec<u64>, u64), f64> {
    let mut states: BTreeMap<(Vec<u64>, u64), f64> = BTreeMap::new();
    states.insert((vec![0; n], 0), 1.0);
    let tuples = n.pow(d);
    for _ in 0..m {
        let mut next = BTreeMap::new();
        for ((loads, moved), &pr) in &states {
            for t in 0..tuples {
                let (mut x, mut bins) = (t, Vec::new());
                for _ in 0..d {
                    let i = x % n;
                    x /= n;
                    if !bins.contains(&i) {
                        bins.push(i);
                    }
                }
                let c = bins.len();
                let total: u64 = bins.iter().map(|&i| loads[i]).sum::<u64>() + 1;
                let (q, r) = (total / c as u64, (total % c as u64) as usize);
                let subsets: Vec<Vec<usize>> = (0..1usize << c)
                    .filter(|s| s.count_ones() as usize == r)
                    .map(|s| (0..c).filter(|j| s >> j & 1 == 1).collect())
                    .collect();
                for s in &subsets {
                    let mut v = loads.clone();
                    let mut mv = *moved;
                    for (j, &i) in bins.iter().enumerate() {
                        let new = q + u64::from(s.contains(&j));
                        mv += v[i].saturating_sub(new);
                        v[i] = new;
                    }
                    v.sort_unstable();
                    let w = pr / tuples as f64 / subsets.len() as f64;
                    *next.entry((v, mv)).or_insert(0.0) += w;
                }
            }
        }
        states = next;
    }
    states
}

/// The state (sorted loads on 3 bins, moved) of one outcome.
fn key(o: &ballast_core::RunOutcome, m: u64) -> (Vec<u64>, u64) {
    let (min, max) = (o.min_load as u64, o.max_load as u64);
    (vec![min, m - min - max, max], o.moved)
}

const TINY: [(u64, u32); 3] = [(5, 2), (6, 3), (7, 4)];
const RUNS: u64 = 20_000;

fn spec(n: u64, m: u64, d: u32, engine: Engine) -> RunSpec {
    RunSpec::new(ProcessSpec::Equalize { d }, n, m).engine(engine)
}

#[test]
fn both_engines_follow_the_exact_law_of_loads_and_moves() {
    for (i, &(m, d)) in TINY.iter().enumerate() {
        let law = exact_law(3, m as usize, d);
        assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
        for (e, engine) in [Engine::Bins, Engine::Levels].into_iter().enumerate() {
            let s = spec(3, m, d, engine);
            let seed = derive_seed(8080, &[i as u64, e as u64]);
            let keys: Vec<_> = (0..RUNS)
                .map(|r| {
                    let o = simulate(&s, &mut sim_rng(derive_seed(seed, &[r]))).expect("runs");
                    key(&o, m)
                })
                .collect();
            let (stat, crit) = fit_law(&keys, &law);
            println!("m = {m}, d = {d}, {engine:?}: chi2 = {stat:.1} vs {crit:.1}");
            assert!(stat < crit, "m = {m}, d = {d}, {engine:?}: chi2 = {stat:.1} >= {crit:.1}");
        }
    }
}

#[test]
fn the_test_rejects_wrong_steps() {
    for flaw in [EqualizeFlaw::RemainderToOne, EqualizeFlaw::RemainderToLightest] {
        for (i, &(m, d)) in TINY.iter().enumerate().skip(1) {
            let law = exact_law(3, m as usize, d);
            let s = spec(3, m, d, Engine::Levels);
            let keys: Vec<_> = (0..RUNS)
                .map(|r| {
                    let rng = &mut sim_rng(derive_seed(8081, &[i as u64, r]));
                    key(&simulate_equalize_levels_flawed(&s, d, rng, flaw).expect("runs"), m)
                })
                .collect();
            let (stat, crit) = fit_law(&keys, &law);
            println!("{flaw:?}, m = {m}, d = {d}: chi2 = {stat:.1} vs {crit:.1}");
            assert!(stat > 10.0 * crit, "{flaw:?}, m = {m}, d = {d}: {stat:.1} vs {crit:.1}");
        }
    }
}

#[test]
fn engines_agree_at_moderate_n() {
    let (n, runs) = (1000u64, 2_000u64);
    for d in [2, 3] {
        let mut per_engine = Vec::new();
        for (e, engine) in [Engine::Bins, Engine::Levels].into_iter().enumerate() {
            let s = spec(n, 10 * n, d, engine);
            let seed = derive_seed(8082, &[u64::from(d), e as u64]);
            let outcomes: Vec<_> = (0..runs)
                .map(|r| simulate(&s, &mut sim_rng(derive_seed(seed, &[r]))).expect("runs"))
                .collect();
            per_engine.push(outcomes);
        }
        let (a, b) = (&per_engine[0], &per_engine[1]);
        common::assert_extremes_agree(a, b, &format!("d = {d}"));
        let moments = |v: &[ballast_core::RunOutcome]| {
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

#[test]
fn auto_runs_large_equalize_on_levels() {
    let at = |n: u64| resolve_engine(&spec(n, 10, 2, Engine::Auto)).expect("resolves");
    assert_eq!(at(ballast_core::level::AUTO_SEQUENTIAL_MIN_N), Engine::Levels);
    assert_eq!(at(ballast_core::level::AUTO_SEQUENTIAL_MIN_N - 1), Engine::Bins);
}
