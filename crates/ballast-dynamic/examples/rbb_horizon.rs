//! How the published RBB statistic (the max load averaged over the first T rounds from the
//! uniform start, no burn-in) depends on the horizon T: one RBB run per repetition, with the
//! running average reported at several horizons, as tidy CSV on standard output.
//!
//! ```text
//! cargo run --release -p ballast-dynamic --example rbb_horizon -- \
//!     --n 10000 --ks 19,31,46 --reps 4 --horizons 10000,100000,1000000
//! ```
//!
//! Columns: `n, k, rep, horizon, avg_max_load, max_load_at_horizon, avg_fraction_empty_bins`
//! (the last averaged like the first). The runs use the seeds
//! `derive_seed(seed, [hash_str("rbb_horizon"), n, k, rep])`, so any subset of the grid
//! reproduces the same numbers; with `--common-seed`, k is 0 there, so every m/n uses the
//! same stream (common random numbers). Used by the notes of `rbb23/max_load` to test whether the
//! published n = 10⁴ curve fits a shorter horizon than the stated 10⁶ rounds.

use anyhow::{bail, Result};
use ballast_core::rng::{derive_seed, hash_str, sim_rng};
use ballast_dynamic::{simulate_observed, DynamicSpec, Horizon, RbbConfig};
use clap::Parser;

#[derive(Parser)]
#[command(about = "RBB: the no-burn-in average max load as a function of the horizon")]
struct Cli {
    /// Number of bins.
    #[arg(long, default_value_t = 10_000)]
    n: usize,
    /// Values of m/n.
    #[arg(long, value_delimiter = ',', default_value = "19,31,46")]
    ks: Vec<u64>,
    /// Repetitions per m/n.
    #[arg(long, default_value_t = 4)]
    reps: u64,
    /// Horizons (rounds) at which to report the running average; the run lasts the largest.
    #[arg(long, value_delimiter = ',', default_value = "10000,30000,100000,300000,1000000")]
    horizons: Vec<u64>,
    /// Master seed.
    #[arg(long, default_value_t = 2_203_124_000)]
    seed: u64,
    /// Use the same random stream for every m/n (leave m/n out of the seed), as the
    /// authors' program does by default-constructing its generator for every point.
    #[arg(long)]
    common_seed: bool,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let mut horizons = cli.horizons.clone();
    horizons.sort_unstable();
    horizons.dedup();
    let Some(&last) = horizons.last() else {
        bail!("--horizons: give at least one horizon");
    };
    if horizons[0] == 0 {
        bail!("--horizons: horizons must be at least 1 round");
    }
    println!("n,k,rep,horizon,avg_max_load,max_load_at_horizon,avg_fraction_empty_bins");
    for &k in &cli.ks {
        for rep in 0..cli.reps {
            let kk = if cli.common_seed { 0 } else { k };
            let s = derive_seed(cli.seed, &[hash_str("rbb_horizon"), cli.n as u64, kk, rep]);
            let spec = DynamicSpec::Rbb(RbbConfig::one_choice(cli.n, k * cli.n as u64));
            let mut sum = 0u64;
            let mut empty = 0u64;
            let mut next = 0usize;
            let mut rows = Vec::new();
            simulate_observed(&spec, &Horizon::new(0, last), &mut sim_rng(s), |t, m| {
                sum += u64::from(m.max_load);
                empty += m.empty_bins;
                if next < horizons.len() && t + 1 == horizons[next] {
                    let h = horizons[next];
                    rows.push(format!(
                        "{},{k},{rep},{h},{:.4},{},{:.8}",
                        cli.n,
                        sum as f64 / h as f64,
                        m.max_load,
                        empty as f64 / (h as f64 * cli.n as f64)
                    ));
                    next += 1;
                }
            })?;
            for r in rows {
                println!("{r}");
            }
        }
    }
    Ok(())
}
