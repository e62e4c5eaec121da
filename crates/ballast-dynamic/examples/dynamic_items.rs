//! The numbers of the items `rbb23/max_load`, `rbb23/empty_bins` and
//! `selfstab16/max_load_vs_lambda`, as tidy CSV, until the experiment runner has a `dynamic`
//! item kind; plus a quick ns-per-ball-round probe.
//!
//! ```text
//! cargo run --release -p ballast-dynamic --example dynamic_items -- \
//!     rbb23 --out target/rbb23.csv --reference reference/rbb23 --rounds 1000000 --reps 25
//! cargo run --release -p ballast-dynamic --example dynamic_items -- \
//!     selfstab16 --out target/selfstab16.csv --dist-out target/selfstab16_dist.csv
//! cargo run --release -p ballast-dynamic --example dynamic_items -- speed
//! ```
//!
//! Runs are sequential (one core). Seeds: `derive_seed(seed, [hash_str(item), n, x, d,
//! rep])` with `x` the point's parameter as an integer (`m/n`, or `λ·10⁴`), so any subset of
//! the grid reproduces the same numbers.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use ballast_core::rng::{derive_seed, hash_str, sim_rng};
use ballast_dynamic::theory::{
    leaky_one_choice_max_iid, leaky_one_choice_mean_load, leaky_shape_one_choice,
    leaky_shape_two_choice, rbb_empty_fraction,
};
use ballast_dynamic::{
    simulate, Arrivals, DynamicSpec, Horizon, LeakyConfig, RbbConfig, RunSummary,
};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(about = "Numbers of the ballast-dynamic reproduction items")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// RBB from the uniform start (Los & Sauerwald, STACS 2023, Section 6).
    Rbb23 {
        /// Output CSV.
        #[arg(long)]
        out: PathBuf,
        /// Directory with avg_max_load.csv and avg_fraction_empty_bins.csv.
        #[arg(long, default_value = "reference/rbb23")]
        reference: PathBuf,
        /// Numbers of bins.
        #[arg(long, value_delimiter = ',', default_value = "100,1000,10000")]
        ns: Vec<usize>,
        /// m/n values; default: every m/n of the reference CSVs for that n.
        #[arg(long, value_delimiter = ',')]
        ks: Option<Vec<u64>>,
        /// Measured rounds per repetition (published: 10⁶).
        #[arg(long, default_value_t = 1_000_000)]
        rounds: u64,
        /// Rounds per repetition for n = 10⁴ (default: `--rounds`).
        #[arg(long)]
        rounds_large: Option<u64>,
        /// Repetitions (published: 25).
        #[arg(long, default_value_t = 25)]
        reps: u64,
        /// Repetitions for n = 10⁴ (default: `--reps`).
        #[arg(long)]
        reps_large: Option<u64>,
        /// Discarded rounds (published: none).
        #[arg(long, default_value_t = 0)]
        burn_in: u64,
        /// Master seed.
        #[arg(long, default_value_t = 2_203_124_000)]
        seed: u64,
    },
    /// Leaky bins (Berenbrink et al., PODC 2016): max load and system load vs λ.
    Selfstab16 {
        /// Output CSV.
        #[arg(long)]
        out: PathBuf,
        /// Optional CSV of the max-load distributions (long format).
        #[arg(long)]
        dist_out: Option<PathBuf>,
        /// Numbers of bins.
        #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
        ns: Vec<usize>,
        /// Arrival rates.
        #[arg(long, value_delimiter = ',', default_value = "0.5,0.75,0.9,0.95,0.99")]
        lambdas: Vec<f64>,
        /// Greedy[d] choices.
        #[arg(long, value_delimiter = ',', default_value = "1,2")]
        ds: Vec<u32>,
        /// Burn-in = max(burn_min, burn_factor/(1−λ)²) rounds.
        #[arg(long, default_value_t = 10.0)]
        burn_factor: f64,
        /// Minimum burn-in.
        #[arg(long, default_value_t = 1000)]
        burn_min: u64,
        /// Measured rounds = max(rounds_min, rounds_factor/(1−λ)²).
        #[arg(long, default_value_t = 40.0)]
        rounds_factor: f64,
        /// Minimum measured rounds.
        #[arg(long, default_value_t = 20_000)]
        rounds_min: u64,
        /// Repetitions.
        #[arg(long, default_value_t = 1)]
        reps: u64,
        /// Arrival law.
        #[arg(long, default_value = "binomial")]
        arrivals: String,
        /// Master seed.
        #[arg(long, default_value_t = 1_605_000_016)]
        seed: u64,
    },
    /// ns per ball-round of RBB and leaky bins.
    Speed {
        /// Numbers of bins.
        #[arg(long, value_delimiter = ',', default_value = "100,1000,10000,100000")]
        ns: Vec<usize>,
        /// Ball-rounds per measurement (about).
        #[arg(long, default_value_t = 200_000_000)]
        work: u64,
    },
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Rbb23 {
            out,
            reference,
            ns,
            ks,
            rounds,
            rounds_large,
            reps,
            reps_large,
            burn_in,
            seed,
        } => {
            let refs = RbbReference::load(&reference)?;
            let mut csv = String::from(RBB_HEADER);
            let start = Instant::now();
            for &n in &ns {
                let (rounds, reps) = if n >= 10_000 {
                    (rounds_large.unwrap_or(rounds), reps_large.unwrap_or(reps))
                } else {
                    (rounds, reps)
                };
                let grid: Vec<u64> = match &ks {
                    Some(k) => k.clone(),
                    None => refs.ks(n),
                };
                for &k in &grid {
                    let (t0, c0) = (Instant::now(), cpu_seconds());
                    let horizon = Horizon::new(burn_in, rounds);
                    let runs = (0..reps)
                        .map(|rep| {
                            let s = derive_seed(seed, &[hash_str("rbb23"), n as u64, k, 1, rep]);
                            let spec = DynamicSpec::Rbb(RbbConfig::one_choice(n, k * n as u64));
                            simulate(&spec, &horizon, &mut sim_rng(s))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    let (wall, cpu) = elapsed(t0, c0);
                    let p = RbbPoint { n, k, rounds, reps, burn_in, cpu, runs: &runs };
                    p.rows(&refs, &mut csv);
                    eprintln!(
                        "rbb23 n={n} k={k}: {cpu:.1} s CPU, {wall:.1} s wall ({:.2} ns/ball-round CPU)",
                        cpu * 1e9 / runs.iter().map(|r| r.moved).sum::<u64>() as f64
                    );
                }
            }
            write_atomic(&out, &csv)?;
            eprintln!(
                "rbb23: {:.1} s in all, wrote {}",
                start.elapsed().as_secs_f64(),
                out.display()
            );
        }
        Cmd::Selfstab16 {
            out,
            dist_out,
            ns,
            lambdas,
            ds,
            burn_factor,
            burn_min,
            rounds_factor,
            rounds_min,
            reps,
            arrivals,
            seed,
        } => {
            let arrivals = match arrivals.as_str() {
                "binomial" => Arrivals::Binomial,
                "poisson" => Arrivals::Poisson,
                "fixed" => Arrivals::Fixed,
                other => bail!("unknown arrival law `{other}` (binomial, poisson, fixed)"),
            };
            let mut csv = String::from(SELFSTAB_HEADER);
            let mut dist = String::from("n,lambda,d,max_load,fraction_of_rounds\n");
            let start = Instant::now();
            for &n in &ns {
                for &d in &ds {
                    for &lambda in &lambdas {
                        let tau = 1.0 / (1.0 - lambda).powi(2);
                        let burn = burn_min.max((burn_factor * tau).ceil() as u64);
                        let rounds = rounds_min.max((rounds_factor * tau).ceil() as u64);
                        let horizon = Horizon::new(burn, rounds);
                        let (t0, c0) = (Instant::now(), cpu_seconds());
                        let x = (lambda * 1e4).round() as u64;
                        let runs = (0..reps)
                            .map(|rep| {
                                let s = derive_seed(
                                    seed,
                                    &[hash_str("selfstab16"), n as u64, x, u64::from(d), rep],
                                );
                                let cfg = LeakyConfig::new(n, lambda, d).with_arrivals(arrivals);
                                simulate(&DynamicSpec::Leaky(cfg), &horizon, &mut sim_rng(s))
                            })
                            .collect::<Result<Vec<_>, _>>()?;
                        let (wall, cpu) = elapsed(t0, c0);
                        let p = LeakyPoint { n, lambda, d, arrivals, horizon, cpu, runs: &runs };
                        p.rows(&mut csv);
                        p.distribution(&mut dist);
                        eprintln!(
                            "selfstab16 n={n} d={d} λ={lambda}: {cpu:.1} s CPU, {wall:.1} s wall ({:.2} ns/ball-round CPU)",
                            cpu * 1e9 / runs.iter().map(|r| r.moved).sum::<u64>() as f64
                        );
                    }
                }
            }
            write_atomic(&out, &csv)?;
            if let Some(path) = dist_out {
                write_atomic(&path, &dist)?;
            }
            eprintln!(
                "selfstab16: {:.1} s in all, wrote {}",
                start.elapsed().as_secs_f64(),
                out.display()
            );
        }
        Cmd::Speed { ns, work } => speed(&ns, work)?,
    }
    Ok(())
}

const RBB_HEADER: &str = "item,series,n,x,statistic,value,stderr,stderr_reps,runs,rounds,\
burn_in,reference,z_reference,theory,z_theory,drift_z,lag1,cpu_s\n";

const SELFSTAB_HEADER: &str = "item,series,n,x,d,arrivals,statistic,value,stderr,stderr_reps,\
runs,burn_in,rounds,theory,z_theory,shape,ratio_to_shape,drift_z,lag1,cpu_s\n";

/// The published rbb23 numbers by (n, m/n).
struct RbbReference {
    max_load: BTreeMap<(usize, u64), f64>,
    empty: BTreeMap<(usize, u64), f64>,
}

impl RbbReference {
    fn load(dir: &Path) -> Result<Self> {
        let read = |file: &str| -> Result<BTreeMap<(usize, u64), f64>> {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let mut map = BTreeMap::new();
            for (i, line) in text.lines().enumerate().skip(1) {
                let f: Vec<&str> = line.split(',').map(str::trim).collect();
                if f.len() != 3 {
                    bail!("{}:{}: expected 3 fields", path.display(), i + 1);
                }
                map.insert((f[0].parse()?, f[1].parse()?), f[2].parse()?);
            }
            Ok(map)
        };
        Ok(Self {
            max_load: read("avg_max_load.csv")?,
            empty: read("avg_fraction_empty_bins.csv")?,
        })
    }

    /// Every m/n with a reference value for `n` (either file).
    fn ks(&self, n: usize) -> Vec<u64> {
        let mut ks: Vec<u64> = self
            .max_load
            .keys()
            .chain(self.empty.keys())
            .filter(|(nn, _)| *nn == n)
            .map(|&(_, k)| k)
            .collect();
        ks.sort_unstable();
        ks.dedup();
        ks
    }
}

/// Mean over runs of a per-run value, the pooled batch-means standard error
/// (`√(Σ se_r²)/R`) and the across-run standard error (`sd/√R`, `NaN` for one run).
fn combine(values: &[f64], batch_se: &[f64]) -> (f64, f64, f64) {
    let r = values.len() as f64;
    let mean = values.iter().sum::<f64>() / r;
    let pooled = batch_se.iter().map(|s| s * s).sum::<f64>().sqrt() / r;
    let across = if values.len() > 1 {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (r - 1.0)).sqrt() / r.sqrt()
    } else {
        f64::NAN
    };
    (mean, pooled, across)
}

fn mean_of(v: impl Iterator<Item = f64>) -> f64 {
    let (s, k) = v.fold((0.0, 0usize), |(s, k), x| (s + x, k + 1));
    s / k as f64
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, |x| format!("{x}"))
}

struct RbbPoint<'a> {
    n: usize,
    k: u64,
    rounds: u64,
    reps: u64,
    burn_in: u64,
    cpu: f64,
    runs: &'a [RunSummary],
}

impl RbbPoint<'_> {
    fn rows(&self, refs: &RbbReference, csv: &mut String) {
        let n = self.n;
        // The published standard error: ours scaled to 10⁶ rounds × 25 repetitions.
        let ref_se_factor = ((self.rounds * self.reps) as f64 / 25e6).sqrt();
        let stats = [
            (
                "max_load",
                "avg_max_load",
                self.runs.iter().map(|r| r.max_load.clone()).collect::<Vec<_>>(),
                refs.max_load.get(&(n, self.k)).copied(),
                None,
            ),
            (
                "empty_bins",
                "avg_fraction_empty_bins",
                self.runs.iter().map(|r| r.empty_fraction()).collect(),
                refs.empty.get(&(n, self.k)).copied(),
                Some(rbb_empty_fraction(self.k as f64)),
            ),
        ];
        for (item, statistic, ms, reference, theory) in stats {
            let values: Vec<f64> = ms.iter().map(|m| m.mean).collect();
            let ses: Vec<f64> = ms.iter().map(|m| m.stderr).collect();
            let (value, se, se_reps) = combine(&values, &ses);
            let z_ref =
                reference.map(|r| (value - r) / (se * (1.0 + ref_se_factor.powi(2)).sqrt()));
            let z_th = theory.map(|t| (value - t) / se);
            let drift = mean_of(ms.iter().map(|m| m.drift_z));
            let lag1 = mean_of(ms.iter().map(|m| m.lag1));
            let _ = writeln!(
                csv,
                "rbb23/{item},rbb one_choice,{n},{},{statistic},{value},{se},{se_reps},{},{},{},{},{},{},{},{drift},{lag1},{:.3}",
                self.k,
                self.reps,
                self.rounds,
                self.burn_in,
                opt(reference),
                opt(z_ref),
                opt(theory),
                opt(z_th),
                self.cpu
            );
        }
    }
}

struct LeakyPoint<'a> {
    n: usize,
    lambda: f64,
    d: u32,
    arrivals: Arrivals,
    horizon: Horizon,
    cpu: f64,
    runs: &'a [RunSummary],
}

impl LeakyPoint<'_> {
    fn rows(&self, csv: &mut String) {
        let (n, lambda, d) = (self.n, self.lambda, self.d);
        let shape = if d == 1 {
            leaky_shape_one_choice(n, lambda)
        } else {
            leaky_shape_two_choice(n, lambda)
        };
        let per_bin = 1.0 / n as f64;
        let series = format!("leaky_bins d={d}");
        let reps = self.runs.len();
        let mut row = |statistic: &str,
                       ms: Vec<ballast_dynamic::MetricSummary>,
                       theory: Option<f64>,
                       shape: Option<f64>| {
            let values: Vec<f64> = ms.iter().map(|m| m.mean).collect();
            let ses: Vec<f64> = ms.iter().map(|m| m.stderr).collect();
            let (value, se, se_reps) = combine(&values, &ses);
            let z = theory.map(|t| (value - t) / se);
            let ratio = shape.map(|s| value / s);
            let drift = mean_of(ms.iter().map(|m| m.drift_z));
            let lag1 = mean_of(ms.iter().map(|m| m.lag1));
            let _ = writeln!(
                csv,
                "selfstab16/max_load_vs_lambda,{series},{n},{lambda},{d},{},{statistic},{value},{se},{se_reps},{reps},{},{},{},{},{},{},{drift},{lag1},{:.3}",
                self.arrivals.name(),
                self.horizon.burn_in,
                self.horizon.rounds,
                opt(theory),
                opt(z),
                opt(shape),
                opt(ratio),
                self.cpu
            );
        };
        let max_theory = (d == 1).then(|| leaky_one_choice_max_iid(self.arrivals, n, lambda));
        row(
            "avg_max_load",
            self.runs.iter().map(|r| r.max_load.clone()).collect(),
            max_theory,
            Some(shape),
        );
        let load_theory = (d == 1).then(|| leaky_one_choice_mean_load(self.arrivals, n, lambda));
        row(
            "avg_load_per_bin",
            self.runs.iter().map(|r| r.load_per_bin()).collect(),
            load_theory,
            None,
        );
        row(
            "avg_system_load",
            self.runs.iter().map(|r| r.total_load.clone()).collect(),
            load_theory.map(|t| t / per_bin),
            None,
        );
        // Distribution summaries of the per-round max load (pooled over runs).
        let dist = self.pooled_distribution();
        let total: u64 = dist.values().sum();
        let quantile = |q: f64| {
            let mut acc = 0u64;
            for (&l, &c) in &dist {
                acc += c;
                if acc as f64 >= q * total as f64 {
                    return f64::from(l);
                }
            }
            f64::NAN
        };
        let peak = dist.keys().next_back().map_or(f64::NAN, |&l| f64::from(l));
        for (statistic, v) in [
            ("median_max_load", quantile(0.5)),
            ("p99_max_load", quantile(0.99)),
            ("peak_max_load", peak),
        ] {
            let _ = writeln!(
                csv,
                "selfstab16/max_load_vs_lambda,{series},{n},{lambda},{d},{},{statistic},{v},,,{reps},{},{},,,{shape},{},,,{:.3}",
                self.arrivals.name(),
                self.horizon.burn_in,
                self.horizon.rounds,
                v / shape,
                self.cpu
            );
        }
    }

    fn pooled_distribution(&self) -> BTreeMap<u32, u64> {
        let mut dist = BTreeMap::new();
        for r in self.runs {
            for &(l, c) in &r.max_load_distribution {
                *dist.entry(l).or_insert(0) += c;
            }
        }
        dist
    }

    fn distribution(&self, out: &mut String) {
        let dist = self.pooled_distribution();
        let total: u64 = dist.values().sum();
        for (l, c) in dist {
            let _ = writeln!(
                out,
                "{},{},{},{l},{}",
                self.n,
                self.lambda,
                self.d,
                c as f64 / total as f64
            );
        }
    }
}

fn speed(ns: &[usize], work: u64) -> Result<()> {
    println!("process,n,param,ns_per_ball_round_cpu,ns_per_ball_round_wall,ball_rounds,cpu_s");
    for &n in ns {
        let rounds = (work / n as u64).max(40);
        let cases: Vec<(String, DynamicSpec)> = vec![
            ("rbb k=1".into(), DynamicSpec::Rbb(RbbConfig::one_choice(n, n as u64))),
            ("rbb k=25".into(), DynamicSpec::Rbb(RbbConfig::one_choice(n, 25 * n as u64))),
            ("leaky d=1 lambda=0.9".into(), DynamicSpec::Leaky(LeakyConfig::new(n, 0.9, 1))),
            ("leaky d=2 lambda=0.9".into(), DynamicSpec::Leaky(LeakyConfig::new(n, 0.9, 2))),
        ];
        for (name, spec) in cases {
            let (t0, c0) = (Instant::now(), cpu_seconds());
            let s = simulate(&spec, &Horizon::new(rounds / 4, rounds), &mut sim_rng(1))?;
            let (wall, cpu) = elapsed(t0, c0);
            let (proc_name, param) = name.split_once(' ').unwrap_or((&name, ""));
            let per = |t: f64| t * 1e9 / s.moved as f64;
            println!(
                "{proc_name},{n},{param},{:.2},{:.2},{},{cpu:.2}",
                per(cpu),
                per(wall),
                s.moved
            );
        }
    }
    Ok(())
}

/// CPU time of this thread in seconds (Linux `/proc/thread-self/schedstat`), so timings do
/// not count the time other processes hold the core; falls back to `None` elsewhere.
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns * 1e-9)
}

/// Wall and CPU seconds since `(wall0, cpu0)`.
fn elapsed(wall0: Instant, cpu0: Option<f64>) -> (f64, f64) {
    let wall = wall0.elapsed().as_secs_f64();
    let cpu = match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) => b - a,
        _ => wall,
    };
    (wall, cpu)
}

/// Writes `text` to `path` through a temporary beside it and a rename. The temporary has a
/// random name and is created with `create_new`, so a file or symbolic link planted at a
/// guessed name is never written through (the runner's `ballast_runner::files` does the same
/// for the `ballast` outputs; this example does not depend on the runner).
fn write_atomic(path: &Path, text: &str) -> Result<()> {
    use std::io::Write as _;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    for _ in 0..32 {
        let nonce = getrandom::u64().map_err(|e| anyhow::anyhow!("no random name: {e}"))?;
        let tmp = dir.join(format!(".{name}.ballast-tmp-{}-{nonce:016x}.tmp", std::process::id()));
        let mut file = match std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {}", tmp.display())),
        };
        let written = file
            .write_all(text.as_bytes())
            .map_err(anyhow::Error::from)
            .and_then(|()| std::fs::rename(&tmp, path).map_err(anyhow::Error::from));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        return written.with_context(|| format!("writing {}", path.display()));
    }
    anyhow::bail!("no free temporary name beside {}", path.display())
}
