//! Item `graphs/gap_vs_topology`: the gap of Two-Choice on edges after m = 1000 n balls, for
//! each topology and n, with the spectral gap λ₂ of the normalised Laplacian.
//!
//! ```text
//! cargo run --release -p ballast-graph --example gap_vs_topology [-- --quick] [--threads T]
//!     [--runs R] [--min-exp E] [--max-exp E]
//! ```
//!
//! Until the runner has a `graph` field this example computes the item's table (Markdown on
//! stdout). Seeds follow the runner's convention: the graph of point `p` is built from
//! `derive_seed(SEED, [item_hash, p, GRAPH_STREAM])` and run `r` uses
//! `derive_seed(SEED, [item_hash, p, r])`, so all runs of a point share one graph.
//! n = 2^10, 2^12, …: powers of two that are perfect squares, so the hypercube and the
//! 2-dimensional torus have exactly n vertices.

use std::time::Instant;

use ballast_core::rng::hash_str;
use ballast_core::{derive_seed, sim_rng, ProcessSpec, RunSpec};
use ballast_graph::{GraphKind, PowerIteration, GRAPH_STREAM};

const ITEM: &str = "graphs/gap_vs_topology";
const SEED: u64 = 2024_0607;

struct Args {
    quick: bool,
    threads: usize,
    runs: Option<u64>,
    min_exp: u32,
    max_exp: u32,
}

fn args() -> Args {
    let mut a = Args { quick: false, threads: 1, runs: None, min_exp: 10, max_exp: 16 };
    let mut it = std::env::args().skip(1);
    while let Some(x) = it.next() {
        let mut val = || it.next().and_then(|v| v.parse::<u64>().ok()).expect("a number");
        match x.as_str() {
            "--quick" => a.quick = true,
            "--threads" => a.threads = val() as usize,
            "--runs" => a.runs = Some(val()),
            "--min-exp" => a.min_exp = val() as u32,
            "--max-exp" => a.max_exp = val() as u32,
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

fn main() {
    let args = args();
    let exps: Vec<u32> =
        if args.quick { vec![10] } else { (args.min_exp..=args.max_exp).step_by(2).collect() };
    assert!(exps.iter().all(|e| e % 2 == 0 && *e >= 10), "exponents: even, at least 10");
    let runs = args.runs.unwrap_or(if args.quick { 3 } else { 20 });
    let kinds = ["complete", "hypercube", "regular:3", "gnp", "torus:2", "cycle", "star"];
    let item = hash_str(ITEM);
    println!(
        "| topology | n | edges | mean degree | λ₂ | λ₂ method | gap (mean ± se) | runs | s/run |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let total = Instant::now();
    for &e in &exps {
        let n = 1usize << e;
        for (k, kind) in kinds.into_iter().enumerate() {
            // Point index from (exponent, topology), stable under --min-exp/--max-exp.
            let point = u64::from((e - 10) / 2) * kinds.len() as u64 + k as u64;
            let kind: GraphKind = if kind == "gnp" {
                // Connected G(n, p) well above the connectivity threshold ln n / n.
                format!("gnp:{}:connected", 2.0 * (n as f64).ln() / n as f64).parse().unwrap()
            } else {
                kind.parse().unwrap()
            };
            let graph = kind
                .build(Some(n), &mut sim_rng(derive_seed(SEED, &[item, point, GRAPH_STREAM])))
                .expect("graph");
            let info = graph.info(&PowerIteration::default()).expect("info");
            let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n as u64, 1000 * n as u64);
            let started = Instant::now();
            let gaps = run_all(runs, args.threads, |r| {
                let mut rng = sim_rng(derive_seed(SEED, &[item, point, r]));
                graph.simulate(&spec, &mut rng).expect("run").final_gap
            });
            let secs = started.elapsed().as_secs_f64() / runs as f64;
            let mean = gaps.iter().sum::<f64>() / runs as f64;
            let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (runs as f64 - 1.0);
            let se = (var / runs as f64).sqrt();
            let method =
                if info.spectral_method.starts_with("exact") { "exact" } else { "power it." };
            println!(
                "| {} | {n} | {} | {:.2} | {} | {method} | {mean:.2} ± {se:.2} | {runs} | {secs:.2} |",
                kind_label(&kind),
                info.n_edges,
                info.degree.mean,
                sig(info.spectral_gap),
            );
        }
    }
    eprintln!("total wall time {:.0} s", total.elapsed().as_secs_f64());
}

/// Four significant digits.
fn sig(x: f64) -> String {
    if x != 0.0 && x.abs() < 0.01 {
        format!("{x:.3e}")
    } else {
        format!("{x:.4}")
    }
}

fn kind_label(k: &GraphKind) -> String {
    match k {
        GraphKind::ErdosRenyi { .. } => "gnp p = 2 ln n / n (connected)".into(),
        GraphKind::RandomRegular { d, .. } => format!("random {d}-regular"),
        GraphKind::Torus { dim } => format!("torus {dim}-dim"),
        other => other.name().into(),
    }
}

/// Runs `f(0..runs)` on `threads` threads; results in run order.
fn run_all(runs: u64, threads: usize, f: impl Fn(u64) -> f64 + Sync) -> Vec<f64> {
    let mut out = vec![0.0; runs as usize];
    let threads = threads.max(1);
    std::thread::scope(|s| {
        for (t, chunk) in out.chunks_mut(runs.div_ceil(threads as u64) as usize).enumerate() {
            let f = &f;
            let start = t * runs.div_ceil(threads as u64) as usize;
            s.spawn(move || {
                for (i, slot) in chunk.iter_mut().enumerate() {
                    *slot = f((start + i) as u64);
                }
            });
        }
    });
    out
}
