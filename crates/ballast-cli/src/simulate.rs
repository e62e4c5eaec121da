//! `ballast simulate`: ad-hoc runs of one process with a summary over runs.
//!
//! Runs are independent and parallel (rayon over runs); run `r` uses the seed
//! `derive_seed(seed, &[r])` and results are collected by index, so everything except the
//! timing fields is identical for any thread count.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use ballast_core::{
    derive_seed, resolve_engine, simulate_seeded, Engine, RunOutcome, RunSpec, Setting, TieBreak,
    Weights,
};
use clap::{Args, ValueEnum};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;

use crate::error::{from_core, BadInput};
use crate::process;
use ballast_runner::stats::{summarize, Rounding, Summary};

/// Ball weight distributions on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum WeightsArg {
    /// Every ball weighs 1.
    Unit,
    /// Exponential weights with mean `--weight-mean` (default 1).
    Exp,
}

/// Simulation engines on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// The level engine where it is exact (and expected faster), else the bin engine.
    Auto,
    /// The bin engine: one load per bin; every process, setting and weight.
    Bins,
    /// The level engine: bin counts per load level; unit weights, exchangeable processes.
    Levels,
}

impl EngineArg {
    /// The core's engine selector.
    fn to_core(self) -> Engine {
        match self {
            Self::Auto => Engine::Auto,
            Self::Bins => Engine::Bins,
            Self::Levels => Engine::Levels,
        }
    }
}

/// Arguments of `ballast simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Process kind (see `ballast list`), e.g. two_choice, one_plus_beta, quantile.
    #[arg(long, value_name = "KIND")]
    pub process: String,
    /// A process parameter, e.g. `--param beta=0.5` (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Number of bins.
    #[arg(long)]
    pub n: u64,
    /// Number of balls.
    #[arg(long)]
    pub m: u64,
    /// Batch size b: batched setting (decisions see the loads frozen at the batch start).
    /// Without it the setting is sequential.
    #[arg(long, value_name = "B")]
    pub batch: Option<u64>,
    /// Number of independent runs.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub runs: u64,
    /// Master seed; run r uses derive_seed(seed, [r]).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Ball weights.
    #[arg(long, value_enum, default_value_t = WeightsArg::Unit)]
    pub weights: WeightsArg,
    /// Mean of the exponential weights (with `--weights exp`).
    #[arg(long, default_value_t = 1.0, value_name = "MEAN")]
    pub weight_mean: f64,
    /// Tie-breaking rule among equally loaded samples: random, first, lowest_index, position.
    #[arg(long, default_value = "random", value_name = "RULE")]
    pub tie_break: String,
    /// Sequential setting: also observe the gap every K balls (max_gap is over these points).
    #[arg(long, value_name = "K")]
    pub observe_every: Option<u64>,
    /// Simulation engine.
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// Worker threads (default: rayon's default, which honours RAYON_NUM_THREADS).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
}

/// The `--json` output. Field order is the serialisation order; everything except
/// `ns_per_ball` and `wall_s` depends only on the arguments.
#[derive(Debug, Serialize)]
pub struct SimulateReport {
    /// Process kind as given.
    pub process: String,
    /// Resolved process parameters (defaults and implied ones included).
    pub params: BTreeMap<String, Value>,
    /// Bins.
    pub n: u64,
    /// Balls per run.
    pub m: u64,
    /// Batch size, `null` when sequential.
    pub batch: Option<u64>,
    /// Sequential observation interval, `null` when not set.
    pub observe_every: Option<u64>,
    /// Runs.
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
    /// Engine that actually ran (`bins` or `levels`; `auto` is resolved).
    pub engine: &'static str,
    /// Tie-breaking rule.
    pub tie_break: &'static str,
    /// `unit` or `exp`.
    pub weights: &'static str,
    /// Mean weight for `exp`, `null` for unit weights.
    pub weight_mean: Option<f64>,
    /// Final gap over runs (distribution of the gap rounded up).
    pub gap: Summary,
    /// Max gap over observation points, over runs (distribution rounded up).
    pub max_gap: Summary,
    /// Bin samples per ball over all runs.
    pub samples_per_ball: f64,
    /// Simulation time per ball, summed over runs (per core, not wall time).
    pub ns_per_ball: f64,
    /// Wall time of all runs, in seconds.
    pub wall_s: f64,
}

/// Builds the run spec from the arguments; every error is a [`BadInput`].
fn build_spec(args: &SimulateArgs) -> Result<(RunSpec, process::ResolvedProcess), BadInput> {
    let proc_ = process::resolve(&args.process, &args.params)?;
    let tie_break = TieBreak::from_name(&args.tie_break).map_err(from_core)?;
    let setting = match args.batch {
        Some(b) => Setting::Batched { b },
        None => Setting::Sequential,
    };
    if args.batch.is_some() && args.observe_every.is_some() {
        return Err(BadInput::new(
            "`--observe-every` applies to the sequential setting only; the batched setting \
             observes at every batch end (drop --observe-every or --batch)",
        ));
    }
    let weights = match args.weights {
        WeightsArg::Unit => Weights::Unit,
        WeightsArg::Exp => Weights::Exp { mean: args.weight_mean },
    };
    let spec = RunSpec {
        n: args.n,
        m: args.m,
        process: proc_.spec.clone(),
        tie_break,
        setting,
        weights,
        observe_every: args.observe_every,
        record_trajectory: false,
        engine: args.engine.to_core(),
    };
    spec.validate().map_err(from_core)?;
    Ok((spec, proc_))
}

/// Runs all runs in parallel, collected by index, with each run's simulation time.
fn run_all(spec: &RunSpec, seed: u64, runs: u64) -> anyhow::Result<Vec<(RunOutcome, Duration)>> {
    (0..runs)
        .into_par_iter()
        .map(|r| {
            let t = Instant::now();
            let out = simulate_seeded(spec, derive_seed(seed, &[r]))
                .with_context(|| format!("run {r} failed"))?;
            Ok((out, t.elapsed()))
        })
        .collect()
}

/// Runs the simulations and builds the report.
pub fn report(args: &SimulateArgs) -> anyhow::Result<SimulateReport> {
    let (spec, proc_) = build_spec(args)?;
    let engine = resolve_engine(&spec).map_err(from_core)?;
    let start = Instant::now();
    let results = match args.threads {
        Some(t) => rayon::ThreadPoolBuilder::new()
            .num_threads(usize::try_from(t).unwrap_or(usize::MAX))
            .build()
            .context("building the thread pool")?
            .install(|| run_all(&spec, args.seed, args.runs))?,
        None => run_all(&spec, args.seed, args.runs)?,
    };
    let wall = start.elapsed();

    let gaps: Vec<f64> = results.iter().map(|(o, _)| o.final_gap).collect();
    let max_gaps: Vec<f64> = results.iter().map(|(o, _)| o.max_gap).collect();
    let balls: u64 = results.iter().map(|(o, _)| o.balls).sum();
    let samples: u64 = results.iter().map(|(o, _)| o.samples).sum();
    let busy: Duration = results.iter().map(|(_, d)| *d).sum();
    let per_ball = |x: f64| if balls == 0 { 0.0 } else { x / balls as f64 };

    Ok(SimulateReport {
        process: proc_.name.to_owned(),
        params: proc_.params,
        n: spec.n,
        m: spec.m,
        batch: args.batch,
        observe_every: args.observe_every,
        runs: args.runs,
        seed: args.seed,
        engine: engine.name(),
        tie_break: spec.tie_break.name(),
        weights: spec.weights.name(),
        weight_mean: match spec.weights {
            Weights::Exp { mean } => Some(mean),
            _ => None,
        },
        gap: summarize(&gaps, Rounding::Ceil),
        max_gap: summarize(&max_gaps, Rounding::Ceil),
        samples_per_ball: per_ball(samples as f64),
        ns_per_ball: per_ball(busy.as_nanos() as f64),
        wall_s: wall.as_secs_f64(),
    })
}

/// Formats a distribution as `value: fraction` pairs.
fn format_distribution(d: &BTreeMap<i64, f64>) -> String {
    d.iter().map(|(k, v)| format!("{k}: {v:.3}")).collect::<Vec<_>>().join(", ")
}

/// The human-readable summary.
pub fn render_human(r: &SimulateReport) -> String {
    let mut s = String::new();
    let params = if r.params.is_empty() {
        String::new()
    } else {
        let p: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!(" ({})", p.join(", "))
    };
    let setting = match r.batch {
        Some(b) => format!("batched b={b}"),
        None => "sequential".to_owned(),
    };
    let weights = match r.weight_mean {
        Some(mean) => format!("{}(mean {mean})", r.weights),
        None => r.weights.to_owned(),
    };
    let _ = writeln!(
        s,
        "{}{params}  n={} m={}  {setting}  runs={} seed={}  engine={} ties={} weights={weights}",
        r.process, r.n, r.m, r.runs, r.seed, r.engine, r.tie_break
    );
    let _ = writeln!(s, "{:<14}{:.4} ± {:.4}", "gap", r.gap.mean, r.gap.stderr);
    let _ = writeln!(s, "{:<14}{:.4} ± {:.4}", "max_gap", r.max_gap.mean, r.max_gap.stderr);
    let _ = writeln!(s, "{:<14}{}", "ceil(gap)", format_distribution(&r.gap.distribution));
    let _ = writeln!(s, "{:<14}{}", "ceil(max_gap)", format_distribution(&r.max_gap.distribution));
    let _ = writeln!(s, "{:<14}{:.4}", "samples/ball", r.samples_per_ball);
    let _ =
        writeln!(s, "{:<14}{:.2}  (simulation time summed over runs)", "ns/ball", r.ns_per_ball);
    let _ = writeln!(s, "{:<14}{:.3} s", "wall", r.wall_s);
    s
}

/// Entry point of `ballast simulate`.
pub fn main(args: &SimulateArgs) -> anyhow::Result<()> {
    let r = report(args)?;
    if args.json {
        println!("{}", serde_json::to_string(&r).context("serialising the report")?);
    } else {
        print!("{}", render_human(&r));
    }
    Ok(())
}
