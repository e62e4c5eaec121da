//! The statistics of the final load vector (`sorted_loads`, `top_loads`, `load_distribution`,
//! `spread`, `spread_distribution`): equal, on both engines, to what the final loads of the
//! plan's seeds give by hand; the same for any thread count; refused with weights, with a
//! recovery target and (`sorted_loads`) above 10⁵ bins.
//!
//! Law test: the mean sorted loads of Two-Choice at n = 3, m = 4 against their exact values,
//! computed from the definition by enumerating the chain of sorted load vectors (a ball goes
//! to a bin of load x with probability (1 − F(x⁻))² − (1 − F(x))², F the fraction of bins
//! with load ≤ x). Seed 4242, 20 000 runs, each rank's z = (mean − exact) / stderr; the test
//! asserts |z| < 3.43 for each of the 3 ranks (two-sided, Bonferroni over 3 ranks at overall
//! α = 0.001 ([`ballast_testkit::ALPHA`]): 0.001 / 3 per rank). Power: the wrong variant
//! (the exact values of One-Choice, against the same runs) differs by 0.32 in the smallest
//! load's mean (0.444 against 0.768) and by 0.30 in the largest (2.370 against 2.069), over
//! 100 standard errors (Two-Choice's sd ≤ 0.42, so se ≤ 0.003): rejected with certainty for
//! practical purposes, and the test asserts it.

use std::collections::BTreeMap;
use std::path::Path;

use ballast_core::{sim_rng, simulate_observed, Engine, LoadState, Observer, ProcessSpec, RunSpec};
use ballast_runner::{run_experiment, Experiment, ItemResult, Plan, RunOptions, Statistic};

const ID: &str = "test/final_loads";
const SEED: u64 = 4242;

fn config(engine: &str, runs: u64, n: u64, m: u64, stat: &str, extra: &str) -> String {
    format!(
        "title = \"t\"\nseed = {SEED}\nruns = {runs}\nengine = \"{engine}\"\n\
         x = {{ variable = \"n\" }}\ngrid = {{ n = [{n}] }}\npoint = {{ m = {m} }}\n\n\
         [[series]]\nname = \"s\"\nprocess = {{ kind = \"two_choice\" }}\n\
         statistic = \"{stat}\"\n{extra}"
    )
}

fn run(text: &str, threads: usize) -> ItemResult {
    let mut o = RunOptions::new(".");
    o.progress = false;
    o.threads = threads;
    o.command = Some("test".into());
    let exp = Experiment::parse(ID, Path::new("p.toml"), text).unwrap();
    run_experiment(&exp, &o).unwrap()
}

/// The final loads, sorted increasingly.
#[derive(Default)]
struct Sorted(Vec<u64>);

impl Observer for Sorted {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        let mut v: Vec<u64> = (0..s.n()).map(|i| s.load(i).into() as u64).collect();
        v.sort_unstable();
        self.0 = v;
    }
}

fn means(r: &ItemResult, s: Statistic) -> Vec<(f64, f64)> {
    r.rows.iter().filter(|r| r.statistic == s).map(|r| (r.x, r.summary.mean)).collect()
}

#[test]
fn rows_are_the_final_loads_of_the_plans_seeds_on_both_engines() {
    let (n, m, runs) = (40u64, 300u64, 6u64);
    let also = "also = [\"top_loads\", \"load_distribution\", \"spread\", \"spread_distribution\"]";
    for (name, engine) in [("bins", Engine::Bins), ("levels", Engine::Levels)] {
        let r = run(&config(name, runs, n, m, "sorted_loads", also), 2);
        let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, m).engine(engine);
        let finals: Vec<Vec<u64>> = (0..runs)
            .map(|run| {
                let mut seen = Sorted::default();
                let seed = Plan::unit_seed(SEED, ID, 0, run);
                simulate_observed(&spec, &mut sim_rng(seed), &mut seen).unwrap();
                seen.0
            })
            .collect();
        let mean = |f: &dyn Fn(&Vec<u64>) -> f64| finals.iter().map(f).sum::<f64>() / runs as f64;
        let sorted = means(&r, Statistic::SortedLoads);
        assert_eq!(sorted.len(), n as usize, "{name}");
        for (i, &(x, v)) in sorted.iter().enumerate() {
            assert_eq!(x, (i + 1) as f64);
            assert!((v - mean(&|l| l[i] as f64)).abs() < 1e-12, "{name} rank {x}");
        }
        for (k, &(x, v)) in means(&r, Statistic::TopLoads).iter().enumerate() {
            assert_eq!(x, (k + 1) as f64);
            assert!((v - mean(&|l| l[n as usize - 1 - k] as f64)).abs() < 1e-12, "{name}");
        }
        let avg = (m / n) as f64 + (m % n) as f64 / n as f64;
        let dist = means(&r, Statistic::LoadDistribution);
        let mut by_hand: BTreeMap<i64, f64> = BTreeMap::new();
        for l in &finals {
            for &x in l {
                *by_hand.entry(((x as f64 - avg) * 1e6).round() as i64).or_default() +=
                    1.0 / (n * runs) as f64;
            }
        }
        assert_eq!(dist.len(), by_hand.len(), "{name}");
        for ((x, v), (k, h)) in dist.iter().zip(&by_hand) {
            assert_eq!((x * 1e6).round() as i64, *k);
            assert!((v - h).abs() < 1e-12, "{name} offset {x}");
        }
        let offsets: f64 = dist.iter().map(|(x, v)| x * v).sum();
        assert!(offsets.abs() < 1e-9, "{name}: the offsets average {offsets}");
        let spread = means(&r, Statistic::Spread)[0].1;
        let spread_hand = mean(&|l| (l[n as usize - 1] - l[0]) as f64);
        assert!((spread - spread_hand).abs() < 1e-12, "{name}");
        let percents: f64 = means(&r, Statistic::SpreadDistribution).iter().map(|c| c.1).sum();
        assert!((percents - 100.0).abs() < 1e-9);
        // The same rows on one thread.
        let again = run(&config(name, runs, n, m, "sorted_loads", also), 1);
        let values = |r: &ItemResult| -> Vec<(f64, f64)> {
            r.rows.iter().map(|r| (r.x, r.summary.mean)).collect()
        };
        assert_eq!(values(&r), values(&again), "{name}");
    }
}

/// The exact mean of the i-th smallest load after `m` balls on `n` bins, ball to a bin of
/// load x with probability `to(F(x⁻), F(x))`.
fn exact_means(n: usize, m: usize, to: fn(f64, f64) -> f64) -> Vec<f64> {
    let mut law: BTreeMap<Vec<u64>, f64> = BTreeMap::from([(vec![0; n], 1.0)]);
    for _ in 0..m {
        let mut next = BTreeMap::new();
        for (loads, q) in &law {
            let levels: std::collections::BTreeSet<u64> = loads.iter().copied().collect();
            for x in levels {
                let f = |y: i64| loads.iter().filter(|&&l| l as i64 <= y).count() as f64 / n as f64;
                let p = to(f(x as i64 - 1), f(x as i64));
                let mut after = loads.clone();
                let i = after.iter().position(|&l| l == x).unwrap();
                after[i] += 1;
                after.sort_unstable();
                *next.entry(after).or_insert(0.0) += q * p;
            }
        }
        law = next;
    }
    (0..n).map(|i| law.iter().map(|(l, q)| l[i] as f64 * q).sum()).collect()
}

#[test]
fn mean_sorted_loads_follow_the_exact_law_and_a_wrong_law_is_rejected() {
    let two_choice: fn(f64, f64) -> f64 = |below, at| (1.0 - below).powi(2) - (1.0 - at).powi(2);
    let one_choice: fn(f64, f64) -> f64 = |below, at| at - below;
    let exact = exact_means(3, 4, two_choice);
    let wrong = exact_means(3, 4, one_choice);
    let critical = 3.43; // two-sided normal quantile at 0.001 / 3
    for engine in ["bins", "levels"] {
        let r = run(&config(engine, 20_000, 3, 4, "sorted_loads", ""), 2);
        let rows: Vec<&ballast_runner::Row> =
            r.rows.iter().filter(|r| r.statistic == Statistic::SortedLoads).collect();
        assert_eq!(rows.len(), 3);
        let z = |row: &ballast_runner::Row, v: f64| (row.summary.mean - v) / row.summary.stderr;
        for (row, &e) in rows.iter().zip(&exact) {
            assert!(z(row, e).abs() < critical, "{engine} rank {}: z = {}", row.x, z(row, e));
        }
        let worst = rows.iter().zip(&wrong).map(|(row, &w)| z(row, w).abs()).fold(0.0, f64::max);
        assert!(worst > critical, "{engine}: One-Choice's law passed (max |z| {worst})");
    }
}

#[test]
fn final_load_statistics_are_refused_where_they_cannot_be_read() {
    let parse = |text: &str| Experiment::parse(ID, Path::new("p.toml"), text).unwrap_err();
    let weighted = config("auto", 2, 10, 100, "load_distribution", "weights = { kind = \"exp\" }");
    let e = parse(&weighted).to_string();
    assert!(e.contains("p.toml:") && e.contains("unit weights only"), "{e}");
    let big = config("auto", 2, 200_000, 200_000, "final_gap", "also = [\"sorted_loads\"]");
    let e = parse(&big).to_string();
    assert!(e.contains("at most 100000 bins"), "{e}");
    let recovery =
        config("auto", 2, 10, 100, "recovery_time", "recovery_target = 2\nalso = [\"top_loads\"]");
    let e = parse(&recovery).to_string();
    assert!(e.contains("cannot be combined with `recovery_target`"), "{e}");
}
