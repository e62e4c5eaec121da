//! Item `czumaj97/offline`: the off-line optimum max load of m = c·n balls with d uniform
//! choices each (`docs/processes.md#off-line-d-choice-optimum`), exact (max-flow with
//! certificates), against the asymptotic prediction from the ℓ-orientability thresholds
//! c*(d, ℓ), and beside the on-line Greedy[d] max load on the same choices
//! (ln ln n / ln d + O(1)).
//!
//! ```text
//! cargo run --release -p ballast-graph --example offline_optimum [-- --quick] [--runs R]
//!     [--runs-large R] [--max-exp E]
//! ```
//!
//! Seeds: instance `r` of point `p` uses `derive_seed(SEED, [item_hash, p, r])`. Every
//! result is checked with `OfflineOptimum::verify` (assignment and Hall witness).

use std::collections::BTreeMap;
use std::time::Instant;

use ballast_core::rng::hash_str;
use ballast_core::{derive_seed, sim_rng};
use ballast_graph::offline::{
    offline_optimum, orientability_threshold, predicted_optimum, Choices,
};

const ITEM: &str = "czumaj97/offline";
const SEED: u64 = 1997_0607;

fn main() {
    let mut quick = false;
    let (mut runs, mut runs_large, mut max_exp) = (20u64, 5u64, 6u32);
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        let mut val = || it.next().and_then(|v| v.parse::<u64>().ok()).expect("a number");
        match x.as_str() {
            "--quick" => quick = true,
            "--runs" => runs = val(),
            "--runs-large" => runs_large = val(),
            "--max-exp" => max_exp = val() as u32,
            other => panic!("unknown argument {other}"),
        }
    }
    if quick {
        (runs, runs_large, max_exp) = (3, 1, 4);
    }
    let item = hash_str(ITEM);
    println!("Thresholds c*(d, ℓ) (the optimum exceeds ℓ w.h.p. iff m/n > c*):\n");
    println!("| d | ℓ = 1 | ℓ = 2 | ℓ = 3 | ℓ = 4 | ℓ = 5 |");
    println!("|---|---|---|---|---|---|");
    for d in [2, 3] {
        let t: Vec<String> =
            (1..=5).map(|l| format!("{:.4}", orientability_threshold(d, l).unwrap())).collect();
        println!("| {d} | {} |", t.join(" | "));
    }
    println!();
    println!("| n | m/n | d | predicted | optimum (count) | greedy max load (mean) | ln ln n / ln d | lower bound (mean) | runs | s/instance |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let total = Instant::now();
    let mut point = 0u64;
    for e in 3..=max_exp {
        let n = 10usize.pow(e);
        let r = if e >= 6 { runs_large } else { runs };
        for c in [1usize, 2, 4] {
            for d in [2usize, 3] {
                let predicted = predicted_optimum(c as f64, d as u32).unwrap();
                let mut dist: BTreeMap<u32, u64> = BTreeMap::new();
                let (mut greedy, mut lower, mut secs) = (0.0, 0.0, 0.0);
                for run in 0..r {
                    let mut rng = sim_rng(derive_seed(SEED, &[item, point, run]));
                    let choices = Choices::sample(n, c * n, d, &mut rng).unwrap();
                    let t = Instant::now();
                    let opt = offline_optimum(&choices);
                    secs += t.elapsed().as_secs_f64();
                    opt.verify(&choices).expect("certified optimum");
                    *dist.entry(opt.max_load).or_default() += 1;
                    greedy += f64::from(opt.greedy_max_load);
                    lower += f64::from(opt.lower_bound);
                }
                let dist: Vec<String> = dist.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                let lnln = (n as f64).ln().ln() / (d as f64).ln();
                println!(
                    "| {n} | {c} | {d} | {} | {} | {:.2} | {lnln:.2} | {:.2} | {r} | {:.3} |",
                    predicted.map_or("?".into(), |p| p.to_string()),
                    dist.join(", "),
                    greedy / r as f64,
                    lower / r as f64,
                    secs / r as f64,
                );
                point += 1;
            }
        }
    }
    eprintln!("total wall time {:.0} s", total.elapsed().as_secs_f64());
}
