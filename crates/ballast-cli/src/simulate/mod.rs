//! `ballast simulate`: ad-hoc runs of one process with a summary over runs.
//!
//! Runs are independent and parallel (rayon over runs); run `r` uses the seed of run `r` of
//! point 0 of the item [`SIMULATE_ITEM`] (`derive_seed(seed, [hash_str("simulate"), 0, r])`,
//! [`ballast_runner::Plan::unit_seed`]), the seed a one-point config with `seed_item =
//! "simulate"` gives its runs, so the two agree run for run. Results are collected by index,
//! so everything except the timing fields is identical for any thread count.
//!
//! `--potential SPEC` (repeatable) tracks potential functions along every run and reports
//! their final values over runs: the series' `potentials` of the one-point config, through
//! the same pipeline. `--graph TOPOLOGY` runs the graphical version of the process: the
//! one-point `kind = "graph"` config of `kinds`, whose topology is built once
//! from `derive_seed(seed, [hash_str("simulate"), 0, GRAPH_STREAM])`.

mod kinds;
mod loads;
mod per_run;

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::Context as _;
use ballast_core::delay::DelayMode;
use ballast_core::registry::{self, ParamValue};
use ballast_core::{Engine, RunSpec, Setting, Stop, TieBreak, Weights};
use ballast_potential::PotentialSpec;
use ballast_runner::{run_experiment, Experiment, ItemResult, RunOptions, Statistic};
use clap::{Args, ValueEnum};
use serde::Serialize;
use serde_json::Value;

use crate::error::{from_core, BadInput};
use crate::process;
use ballast_runner::stats::Summary;

/// The item id whose unit seeds `ballast simulate` uses (point 0).
pub const SIMULATE_ITEM: &str = "simulate";

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

/// Stopping rules on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StopArg {
    /// Cut the last multi-ball step: exactly m balls (and b per batch).
    Truncate,
    /// Complete the last multi-ball step (and batches end on step boundaries).
    Finish,
}

impl StopArg {
    /// The core's stopping rule.
    fn to_core(self) -> Stop {
        match self {
            Self::Truncate => Stop::Truncate,
            Self::Finish => Stop::Finish,
        }
    }
}

/// Arguments of `ballast simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// Process kind (see `ballast list`), e.g. two_choice, one_plus_beta, quantile, or a
    /// round-based model (rbb, leaky_bins, infinite_azar, random_deletions, insert_delete).
    #[arg(
        long,
        value_name = "KIND",
        required_unless_present = "offline",
        default_value = "",
        hide_default_value = true
    )]
    pub process: String,
    /// A process parameter, e.g. `--param beta=0.5` (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Number of bins.
    #[arg(long, value_parser = crate::whole::parse)]
    pub n: u64,
    /// Number of balls (allocation processes, and the round-based models that read it).
    #[arg(long, value_parser = crate::whole::parse)]
    pub m: Option<u64>,
    /// Round-based models: arrival rate per bin (leaky_bins).
    #[arg(long, value_name = "LAMBDA")]
    pub lambda: Option<f64>,
    /// Round-based models: measured rounds per run (time averages over them).
    #[arg(long, value_name = "ROUNDS", value_parser = crate::whole::parse)]
    pub rounds: Option<u64>,
    /// Round-based models: rounds run before measuring.
    #[arg(long, value_name = "ROUNDS", default_value_t = 0, value_parser = crate::whole::parse)]
    pub burn_in: u64,
    /// Batch size b: batched setting (decisions see the loads frozen at the batch start).
    /// Without it the setting is sequential.
    #[arg(long, value_name = "B", value_parser = crate::whole::parse)]
    pub batch: Option<u64>,
    /// Number of independent runs, 1 to 10^7 (the outcomes are held in memory until they are
    /// aggregated; the runner's limit on the runs of an item).
    #[arg(long, default_value_t = 1, value_parser = crate::whole::runs)]
    pub runs: u64,
    /// Master seed; run r uses derive_seed(seed, [hash_str("simulate"), 0, r]), as run r of
    /// a one-point config with `seed_item = "simulate"`.
    #[arg(long, default_value_t = 1, value_parser = crate::whole::parse)]
    pub seed: u64,
    /// Ball weights: a weight law and its parameters, `KIND[:key=value,...]` (`exp`,
    /// `exp:mean=2`, `gamma:shape=0.5,scale=2`, `pareto:alpha=1.5`; `ballast list` shows
    /// every law).
    #[arg(long, default_value = "unit", value_name = "LAW")]
    pub weights: String,
    /// Start state: the loads before the process places its m balls, `KIND[:key=value,...]`
    /// (`uniform:k=5`, `one_bin:balls=100`, `random:balls=1000`, `file:path=loads.txt`;
    /// `ballast list` shows every kind). Unit weights, sequential or batched.
    #[arg(long, value_name = "KIND", conflicts_with = "offline")]
    pub start: Option<String>,
    /// Also report `recovery_time`: the balls until the gap first falls to this target
    /// (after every ball; at batch ends when batched). For a round-based model,
    /// `recovery_rounds`: the rounds until max load − average first falls to it.
    #[arg(long, value_name = "GAP", conflicts_with = "offline")]
    pub recovery_target: Option<f64>,
    /// Mean of the exponential weights (with `--weights exp`; the same as `exp:mean=MEAN`).
    #[arg(long, value_name = "MEAN")]
    pub weight_mean: Option<f64>,
    /// Bin sampling law, `KIND[:key=value,...]` (`two_class:fraction=0.5,factor=4`,
    /// `zipf:s=1`, `file:path=weights.txt`; default uniform; bin engine only; `ballast list`
    /// shows every law and which processes support it).
    #[arg(long, value_name = "LAW")]
    pub sampling: Option<String>,
    /// Bin capacities, `KIND[:key=value,...]` (`two_class:factor=4`,
    /// `lognormal:sigma=0.5,sampling=proportional`, `file:path=caps.txt`; default none):
    /// decisions and the gap read x_i/c_i (bin engine; `ballast list` shows every law).
    #[arg(long, value_name = "LAW", conflicts_with = "offline")]
    pub capacities: Option<String>,
    /// Tie-breaking rule among equally loaded samples: random, first, lowest_index, position.
    #[arg(long, default_value = "random", value_name = "RULE")]
    pub tie_break: String,
    /// Sequential setting: also observe the gap every K balls (max_gap is over these points).
    #[arg(long, value_name = "K", value_parser = crate::whole::parse)]
    pub observe_every: Option<u64>,
    /// The authors' protocol of the noise programs: each run is one long sequential run of
    /// BLOCKS · m balls observed every m balls, and the gap at every block end is one sample
    /// (`sampling = { blocks = BLOCKS }` in a config). Reports the gap only.
    #[arg(
        long,
        value_name = "BLOCKS",
        value_parser = crate::whole::parse,
        conflicts_with_all = [
            "batch", "tau", "observe_every", "potentials", "loads", "probes",
            "recovery_target", "graph", "offline", "churn", "dispatchers", "start", "above"
        ]
    )]
    pub blocks: Option<u64>,
    /// Delay setting: every sample reports one of its loads of the last TAU steps.
    #[arg(long, value_name = "TAU", conflicts_with = "batch", value_parser = crate::whole::parse)]
    pub tau: Option<u64>,
    /// Delay setting: how the reported load is chosen from the window (random, adversarial).
    #[arg(long, value_name = "MODE", requires = "tau")]
    pub delay_mode: Option<String>,
    /// Bins joining and leaving during the run: `every=1000,leave=1,join=1,join_at=average,
    /// leaving=random,balls=lost` (`ballast list` shows every key; sequential, unit weights).
    #[arg(long, value_name = "KEY=VALUE,...", conflicts_with_all = ["batch", "tau"])]
    pub churn: Option<String>,
    /// Several dispatchers, each on its own stale view of the loads: `k=8,tau=100,
    /// assign=round_robin,own=true` (`ballast list` shows every key; replaces the setting).
    #[arg(long, value_name = "KEY=VALUE,...", conflicts_with_all = ["batch", "tau", "churn"])]
    pub dispatchers: Option<String>,
    /// The off-line d-choice optimum with D choices per ball instead of an allocation process:
    /// each run draws m balls with D uniform bins each and reports the smallest possible max
    /// load (max-flow, verified) and the on-line Greedy[D] max load on the same choices.
    #[arg(long, value_name = "D", conflicts_with_all = ["batch", "tau", "graph", "churn", "dispatchers"], value_parser = crate::whole::parse)]
    pub offline: Option<u64>,
    /// Print the one-point config that these runs are (the same TOML for `ballast run`) and
    /// exit without simulating.
    #[arg(long)]
    pub print_config: bool,
    /// Simulation engine.
    #[arg(long, value_enum, default_value_t = EngineArg::Auto)]
    pub engine: EngineArg,
    /// Stopping rule for multi-ball steps (twinning, packing, tight_packing) at m balls and
    /// at batch ends: truncate (exactly m balls) or finish (complete the step: m or a few
    /// more). No effect on single-ball processes.
    #[arg(long, value_enum, default_value_t = StopArg::Truncate)]
    pub stop: StopArg,
    /// Graphical allocation on a topology of the registry: complete, cycle, torus[:DIM],
    /// hypercube, star, regular:D, gnp:P[:CONNECTIVITY], file:PATH (an edge list), values
    /// positional or named (`torus:dim=3`, `gnp:p=0.01,connectivity=connected`); see
    /// `ballast list`.
    #[arg(long, value_name = "KIND")]
    pub graph: Option<String>,
    /// Track a potential along every run, e.g. `exponential:alpha=0.1`,
    /// `hyperbolic:alpha=0.05`, `quadratic`, `absolute` (repeatable).
    #[arg(long = "potential", value_name = "SPEC")]
    pub potentials: Vec<String>,
    /// Also report the distribution of probes (bin samples) per step. Adaptive probing
    /// reports it always; for other processes it runs on the bin engine (the level engine
    /// does not count probes per step).
    #[arg(long, conflicts_with_all = ["offline", "graph"])]
    pub probes: bool,
    /// Also report the final load vector: the normalised load distribution (per offset
    /// load − W/n the fraction of bins, mean over runs), the largest loads (`--top-k`) and,
    /// for n <= 100000, the sorted loads (mean over runs). Unit weights only.
    #[arg(long, conflicts_with_all = ["offline", "graph", "recovery_target"])]
    pub loads: bool,
    /// With `--loads`: how many of the largest loads to report (1 to 100000, default 10).
    #[arg(long = "top-k", value_name = "K", requires = "loads")]
    pub top_k: Option<u64>,
    /// Also report `balls_above`: the balls above the capacity C at the end, Σᵢ max(0, xᵢ −
    /// C), mean over runs (unit weights).
    #[arg(long, value_name = "C", conflicts_with_all = ["offline", "graph", "recovery_target"], value_parser = crate::whole::parse)]
    pub above: Option<u64>,
    /// Print one JSON object instead of the human summary.
    #[arg(long)]
    pub json: bool,
    /// Worker threads, 1 to 1024 (default: rayon's default, which honours
    /// RAYON_NUM_THREADS).
    #[arg(long, value_parser = crate::whole::threads)]
    pub threads: Option<u64>,
}

/// What ran: the process, sizes, setting, seed, engine and rules (the first fields of the
/// `--json` output, in this order).
#[derive(Debug, Serialize)]
pub struct RunDescription {
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
    /// Blocks per run with `--blocks` (each block end is one sample); left out otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    /// Delay window, `null` outside the delay setting.
    pub tau: Option<u64>,
    /// Delay mode (`random`, `adversarial`), `null` outside the delay setting.
    pub delay_mode: Option<&'static str>,
    /// Runs.
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
    /// Engine that actually ran (`bins`, `levels` or `bins sorted-weights`; `auto` is
    /// resolved).
    pub engine: String,
    /// Tie-breaking rule.
    pub tie_break: &'static str,
    /// The weight law (`unit`, `exp`, `gamma`, …).
    pub weights: &'static str,
    /// Mean weight of the law, `null` for unit weights.
    pub weight_mean: Option<f64>,
    /// The law's parameters (empty for unit weights).
    pub weight_params: BTreeMap<&'static str, f64>,
    /// Stopping rule for multi-ball steps (`truncate` or `finish`; reported for every
    /// process, it only matters for twinning, packing and tight_packing).
    pub stop: &'static str,
    /// The bin sampling law (`uniform`, `two_class`, `zipf`, `file`).
    pub sampling: &'static str,
    /// The sampling law's parameters (empty for uniform and file weights).
    pub sampling_params: BTreeMap<&'static str, f64>,
    /// The bins' capacities (`two_class:fraction=0.5,factor=4 sampling=uniform`); absent
    /// without capacities.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacities: Option<String>,
    /// The churn schedule as `key=value` words (left out without churn).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub churn: Option<String>,
    /// The dispatchers as `key=value` words (left out without them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dispatchers: Option<String>,
}

impl RunDescription {
    /// The description of `spec` as resolved from `args`, run by `engine`.
    pub(crate) fn of(
        args: &SimulateArgs,
        spec: &RunSpec,
        proc_: &process::ResolvedProcess,
        engine: String,
    ) -> Self {
        let (tau, delay_mode) = match spec.setting {
            Setting::Delay { tau, mode } => (Some(tau), Some(mode.name())),
            _ => (None, None),
        };
        Self {
            process: proc_.name().to_owned(),
            params: proc_.params.clone(),
            n: spec.n,
            m: spec.m,
            batch: args.batch,
            observe_every: args.observe_every,
            blocks: args.blocks,
            tau,
            delay_mode,
            runs: args.runs,
            seed: args.seed,
            engine,
            tie_break: spec.tie_break.name(),
            weights: spec.weights.name(),
            weight_mean: (spec.weights != Weights::Unit).then(|| spec.weights.mean()),
            weight_params: spec.weights.params().into_iter().collect(),
            stop: spec.stop.name(),
            sampling: spec.sampling.name(),
            sampling_params: spec.sampling.params().into_iter().collect(),
            capacities: (!spec.capacities.is_unit()).then(|| spec.capacities.to_string()),
            churn: spec.churn.map(|c| c.describe()),
            dispatchers: spec.dispatchers.map(|d| d.describe()),
        }
    }
}

/// The `--json` output. Field order is the serialisation order; everything except
/// `ns_per_ball` and `wall_s` depends only on the arguments.
#[derive(Debug, Serialize)]
pub struct SimulateReport {
    /// What ran.
    #[serde(flatten)]
    pub run: RunDescription,
    /// Balls placed per run, averaged over runs: m, or slightly more with `stop = finish`.
    pub balls_per_run: f64,
    /// Final gap over runs (distribution of the gap rounded up).
    pub gap: Summary,
    /// Max gap over observation points, over runs (distribution rounded up); left out with
    /// `--blocks`, whose samples are the gaps at the block ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_gap: Option<Summary>,
    /// Every other statistic the runs collect (`max_load`, `gap_over_ln_n`, probes, moves),
    /// mean and standard error over runs; statistics a process does not define are left out.
    pub statistics: BTreeMap<String, StatSummary>,
    /// The distribution of the final max load over runs (rounded up: exact for unit
    /// balls): value → fraction of runs; empty for graphical runs.
    pub max_load_distribution: BTreeMap<i64, f64>,
    /// The topology of a graphical run (`null` otherwise).
    pub graph: Option<GraphReport>,
    /// Final value of each tracked potential over runs, keyed by its spec text.
    pub potentials: BTreeMap<String, PotentialSummary>,
    /// Each tracked potential at every observation point (`--observe-every` or `--batch`),
    /// mean over runs, keyed by its spec text; empty without observation points (and with
    /// `--graph`).
    pub potential_trajectories: BTreeMap<String, Vec<TrajectoryPoint>>,
    /// With observation points (`--observe-every` or `--batch`): the gap, max load and min
    /// load at every point, and the running maximum of the gap up to it, mean over runs,
    /// keyed `gap`, `max_load`, `min_load`, `running_max_gap`; empty otherwise.
    pub trajectories: BTreeMap<String, Vec<TrajectoryPoint>>,
    /// The distribution of probes per step (`--probes`, and adaptive probing): per probe
    /// count the fraction of steps, mean over runs; empty otherwise.
    pub probes_distribution: Vec<kinds::HistogramBin>,
    /// With `--loads`: the normalised load distribution, per offset load − W/n (`value`)
    /// the fraction of bins, mean over runs; empty otherwise.
    pub load_distribution: Vec<kinds::HistogramBin>,
    /// With `--loads`: the i-th smallest final load, mean over runs, i = 1..n (n <= 100000);
    /// empty otherwise.
    pub sorted_loads: Vec<f64>,
    /// With `--loads`: the k-th largest final load, mean over runs, k = 1..min(K, n) (K of
    /// `--top-k`, default 10);
    /// empty otherwise.
    pub top_loads: Vec<f64>,
    /// Each statistic's value in every run, in run order (the seeds' order): `gap`'s as
    /// `final_gap`, then `max_gap`, `max_load`, … and tracked potentials as
    /// `potential:<spec>`; statistics the process does not define are left out.
    pub per_run: BTreeMap<String, Vec<f64>>,
    /// With observation points: every run at every point (`columns[name][j][r]`, run r at
    /// `balls_per_bin[j]`; columns `gap`, `max_load`, `min_load`, `running_max_gap` and
    /// tracked potentials); empty otherwise.
    pub trajectory: per_run::RunTrajectories,
    /// The statistics with several values per run, per run: `load_distribution` (per offset
    /// load − W/n, each run's fraction of bins; a run's sorted loads follow from it),
    /// `top_loads` (per rank) and `probes_distribution` (per probe count); only those
    /// the flags ask for.
    pub per_run_vectors: BTreeMap<String, per_run::PerRunVector>,
    /// Bin samples per ball over all runs.
    pub samples_per_ball: f64,
    /// Balls per bin sample over all runs (its inverse: above 1 for Packing and Twinning).
    pub balls_per_sample: f64,
    /// Time per ball: the process's CPU time over the runs / the balls (overheads
    /// included; the wall time × the threads where the CPU time cannot be read).
    pub ns_per_ball: f64,
    /// Wall time of all runs, in seconds.
    pub wall_s: f64,
}

/// Mean and standard error of one statistic over runs.
#[derive(Debug, Serialize)]
pub struct StatSummary {
    /// Mean over runs.
    pub mean: f64,
    /// Standard error of the mean.
    pub stderr: f64,
    /// The 95 % confidence interval of the mean (`ballast_runner::stats::ci95`; `null`
    /// below two runs).
    pub ci95: Option<[f64; 2]>,
}

impl StatSummary {
    /// The mean, standard error and interval of a row's summary.
    pub fn of(s: &ballast_runner::stats::Summary) -> Self {
        let ci95 = ballast_runner::stats::ci95(s.mean, s.stderr, s.runs).map(|(l, h)| [l, h]);
        Self { mean: s.mean, stderr: s.stderr, ci95 }
    }
}

/// Final value of one potential over runs.
#[derive(Debug, Serialize)]
pub struct PotentialSummary {
    /// Mean over runs.
    pub mean: f64,
    /// Standard error of the mean.
    pub stderr: f64,
    /// Sample standard deviation over runs.
    pub sd: f64,
}

/// One observation point of a trajectory over runs.
#[derive(Debug, Serialize)]
pub struct TrajectoryPoint {
    /// Balls placed so far / n (the x of the CSV rows).
    pub balls_per_bin: f64,
    /// Mean over runs.
    pub mean: f64,
    /// Standard error of the mean.
    pub stderr: f64,
}

/// At most this many points of a trajectory in the human summary (evenly spaced, the last
/// included; `--json` has them all).
const SHOWN_POINTS: usize = 6;

/// A trajectory in a line: `x: value` at up to [`SHOWN_POINTS`] points.
fn format_trajectory(points: &[TrajectoryPoint]) -> String {
    let len = points.len();
    let shown: Vec<usize> = if len <= SHOWN_POINTS {
        (0..len).collect()
    } else {
        let mut v: Vec<usize> =
            (1..=SHOWN_POINTS).map(|i| (i * len).div_ceil(SHOWN_POINTS) - 1).collect();
        v.dedup();
        v
    };
    let text: Vec<String> = shown
        .iter()
        .map(|&i| format!("{}: {:.4e}", points[i].balls_per_bin, points[i].mean))
        .collect();
    let more =
        if shown.len() < len { format!(" ({len} points, --json has all)") } else { String::new() };
    format!("{}{more}", text.join(", "))
}

/// The topology of a graphical run, as reported.
#[derive(Debug, Serialize)]
pub struct GraphReport {
    /// The shorthand it was built from.
    pub kind: String,
    /// Vertices (= bins).
    pub vertices: usize,
    /// Edges.
    pub edges: u64,
}

/// `--weights KIND[:key=value,...]` (and `--weight-mean`, the mean of `exp`) through the
/// registry's weight laws.
fn parse_weights(text: &str, weight_mean: Option<f64>) -> Result<Weights, BadInput> {
    let (kind, params) = text.split_once(':').unwrap_or((text, ""));
    let def = registry::find_weights(kind.trim())
        .map_err(|e| BadInput::new(format!("--weights: {e}")))?;
    let list = def.list();
    let pairs = params.split(',').filter(|p| !p.trim().is_empty());
    let mut given = process::parse_pairs(&list, pairs, "")
        .map_err(|e| BadInput::new(format!("--weights: {e}")))?;
    if let Some(mean) = weight_mean {
        if def.name != "exp" {
            return Err(BadInput::new(format!(
                "`--weight-mean` applies to `--weights exp`; the law `{}` takes {}",
                def.name,
                list.allowed_params()
            )));
        }
        if given.iter().any(|(k, _)| *k == "mean") {
            return Err(BadInput::new("the mean is given twice: `--weight-mean` and `exp:mean=`"));
        }
        given.push(("mean", ParamValue::Num(mean)));
    }
    def.build(&given).map_err(|e| BadInput::new(e.to_string()))
}

/// Builds the run spec from the arguments; every error is a [`BadInput`].
/// The setting of `--batch`, `--tau` and `--delay-mode`.
fn setting_of(args: &SimulateArgs) -> Result<Setting, BadInput> {
    Ok(match (args.batch, args.tau) {
        (Some(b), _) => Setting::Batched { b },
        (None, Some(tau)) => {
            let mode = args.delay_mode.as_deref().unwrap_or("random");
            let mode = DelayMode::from_name(mode).map_err(|_| {
                BadInput::new(format!(
                    "unknown delay mode `{mode}` (set by --delay-mode): expected one of random, \
                     adversarial{}",
                    ballast_core::registry::did_you_mean(mode, ["random", "adversarial"])
                ))
            })?;
            Setting::Delay { tau, mode }
        }
        (None, None) => Setting::Sequential,
    })
}

pub(crate) fn build_spec(
    args: &SimulateArgs,
) -> Result<(RunSpec, process::ResolvedProcess), BadInput> {
    let proc_ = process::resolve(&args.process, &args.params)?;
    let tie_break = TieBreak::from_name(&args.tie_break).map_err(from_core)?;
    let def = ballast_core::registry::def_of(&proc_.spec);
    if !def.accepts_tie(tie_break) {
        return Err(BadInput::new(def.tie_error_in(tie_break, crate::error::setting_words)));
    }
    let setting = setting_of(args)?;
    if args.batch.is_some() && args.observe_every.is_some() {
        return Err(BadInput::new(
            "`--observe-every` applies to the sequential setting only; the batched setting \
             observes at every batch end (drop --observe-every or --batch)",
        ));
    }
    let weights = parse_weights(&args.weights, args.weight_mean)?;
    let m = args.m.ok_or_else(|| BadInput::new("`--m` (the number of balls) is required"))?;
    for (flag, given) in [("--lambda", args.lambda.is_some()), ("--rounds", args.rounds.is_some())]
    {
        if given {
            return Err(BadInput::new(format!(
                "`{flag}` applies to the round-based models only ({}); `{}` is an allocation \
                 process",
                ballast_dynamic::registry::names().join(", "),
                proc_.name()
            )));
        }
    }
    let spec = RunSpec {
        n: args.n,
        m,
        process: proc_.spec.clone(),
        tie_break,
        setting,
        weights,
        observe_every: args.observe_every,
        record_trajectory: false,
        record_loads: false,
        // The runs of the one-point config (`probes_distribution`) set it; here it only
        // says which engine `auto` resolves to.
        record_probes: args.probes,
        engine: args.engine.to_core(),
        stop: args.stop.to_core(),
        sampling: crate::sampling::parse_sampling(args.sampling.as_deref())?.0,
        start: match &args.start {
            Some(text) => crate::start::parse_start(text)?.start,
            None => ballast_core::Start::Empty,
        },
        capacities: crate::capacities::parse_capacities(args.capacities.as_deref())?.0,
        churn: crate::dynamic_bins::parse_churn(args.churn.as_deref())?,
        dispatchers: crate::dynamic_bins::parse_dispatchers(args.dispatchers.as_deref())?,
    };
    crate::capacities::refusals(&spec, args.graph.is_some(), !args.potentials.is_empty())?;
    crate::dynamic_bins::refusals(&spec, args.graph.is_some(), !args.potentials.is_empty())?;
    if args.graph.is_some() && !spec.sampling.is_uniform() {
        return Err(BadInput::new(
            "`--sampling` applies to the bin engine's processes; a graphical run (--graph) \
             samples edges or vertices of its graph uniformly",
        ));
    }
    if args.graph.is_some() && (!spec.start.is_empty() || args.recovery_target.is_some()) {
        return Err(BadInput::new(
            "`--start` and `--recovery-target` apply to allocation runs, not with `--graph`",
        ));
    }
    if !args.potentials.is_empty() && args.recovery_target.is_some() {
        return Err(BadInput::new(
            "`--potential` and `--recovery-target` each need their own observer of the runs; \
             give one of them",
        ));
    }
    if let Some(t) = args.recovery_target {
        if !t.is_finite() {
            return Err(BadInput::new(format!(
                "`--recovery-target` = {t}: expected a finite number (the gap to reach)"
            )));
        }
        if matches!(spec.setting, Setting::Delay { .. }) || spec.process.reallocates() {
            return Err(BadInput::new(
                "`--recovery-target` needs the sequential or batched setting and a process \
                 other than equalize",
            ));
        }
    }
    spec.validate().map_err(from_core)?;
    // An explicit engine that cannot run it: the advice in the command line's words.
    ballast_core::resolve_engine(&spec).map_err(from_core)?;
    // Refusals here; the warnings are logged by the pipeline (or by `report_observed`).
    ballast_core::registry::check_run(&spec).map_err(|e| BadInput::new(e.message))?;
    Ok((spec, proc_))
}

/// Parses `--potential` flags; errors name the flag and the valid forms.
pub(crate) fn parse_potentials(texts: &[String]) -> Result<Vec<PotentialSpec>, BadInput> {
    PotentialSpec::parse_all(texts.iter().map(String::as_str))
        .map_err(|e| BadInput::new(format!("{e} (set by --potential)")))
}

/// The statistics `simulate` reports besides the gap (its primary statistic) and max gap:
/// these, then every other final-load metric of the core ([`also`]).
const ALSO: [Statistic; 11] = [
    Statistic::MaxLoad,
    Statistic::MinLoad,
    Statistic::Underload,
    Statistic::EmptyBins,
    Statistic::GapOverLnN,
    Statistic::SamplesPerBall,
    Statistic::BallsPerSample,
    Statistic::ProbesMean,
    Statistic::ProbesMax,
    Statistic::MovedPerBall,
    Statistic::Spread,
];

/// [`ALSO`], then every statistic that reads a final-load metric of the core
/// (`ballast_core::FinalMetrics::NAMES`) and is not in it.
fn also() -> impl Iterator<Item = Statistic> {
    let finals = Statistic::ALL
        .iter()
        .copied()
        .filter(|s| ballast_core::FinalMetrics::NAMES.contains(&s.name()) && !ALSO.contains(s));
    ALSO.into_iter().chain(finals)
}

/// Whether the runs report the potentials' trajectories: `--potential` with observation
/// points (`--observe-every` or `--batch`).
fn potential_trajectory(args: &SimulateArgs) -> bool {
    !args.potentials.is_empty() && (args.observe_every.is_some() || args.batch.is_some())
}

/// Whether the runs report the distribution of probes per step: `--probes`, or adaptive
/// probing (whose probe count varies by design and is counted anyway, on either engine).
fn reports_probes(args: &SimulateArgs, spec: &RunSpec) -> bool {
    args.probes || spec.process.records_probes()
}

/// A registry parameter value as TOML.
pub(crate) fn toml_value(v: &ParamValue) -> toml::Value {
    match v {
        ParamValue::Num(x) if x.fract() == 0.0 && x.abs() < 2f64.powi(53) => {
            toml::Value::Integer(*x as i64)
        }
        ParamValue::Num(x) => toml::Value::Float(*x),
        ParamValue::Bool(b) => toml::Value::Boolean(*b),
        ParamValue::Text(t) => toml::Value::String(t.clone()),
        ParamValue::List(v) => {
            toml::Value::Array(v.iter().map(|x| toml::Value::Float(*x)).collect())
        }
    }
}

/// The `also` statistics of the one-point config: the gap's maximum, [`ALSO`], and what the
/// flags ask for (recovery time, potential trajectories, probes, the final loads, and with
/// observation points the gap and the extreme loads at each, per run for embedders).
fn also_statistics(args: &SimulateArgs, spec: &RunSpec) -> Vec<Statistic> {
    let recovery = args.recovery_target.map(|_| Statistic::RecoveryTime);
    let above = args.above.map(|_| Statistic::BallsAbove);
    let trajectory = potential_trajectory(args).then_some(Statistic::PotentialTrajectory);
    let probes = reports_probes(args, spec).then_some(Statistic::ProbesDistribution);
    let observed = spec.observe_every.is_some() || matches!(spec.setting, Setting::Batched { .. });
    let over_time = [Statistic::GapTrajectory, Statistic::MaxTrajectory, Statistic::MinTrajectory];
    std::iter::once(Statistic::MaxGap)
        .chain(also())
        .chain(recovery)
        .chain(above)
        .chain(trajectory)
        .chain(probes)
        .chain(loads::statistics(args.loads, spec.n))
        .chain(over_time.into_iter().filter(|_| observed))
        .collect()
}

/// The series tables of the flags that describe the bins: `sampling`, `capacities` (a file
/// by its path), `churn` and `dispatchers` (their parameters as given).
fn series_tables(args: &SimulateArgs, spec: &RunSpec, series: &mut toml::Table) {
    use toml::Value;
    let file = crate::sampling::parse_sampling(args.sampling.as_deref()).ok().and_then(|s| s.1);
    if let Some(t) = crate::sampling::config_table(spec, file.as_ref()) {
        series.insert("sampling".into(), Value::Table(t));
    }
    let caps = args.capacities.as_deref();
    let file = crate::capacities::parse_capacities(caps).ok().and_then(|c| c.1);
    if let Some(t) = crate::capacities::config_table(&spec.capacities, file.as_ref()) {
        series.insert("capacities".into(), Value::Table(t));
    }
    let tables =
        crate::dynamic_bins::config_tables(args.churn.as_deref(), args.dispatchers.as_deref());
    for (key, given) in tables {
        let t = given.iter().map(|(k, v)| ((*k).to_owned(), toml_value(v))).collect();
        series.insert(key.into(), Value::Table(t));
    }
}

/// The one-point config that `ballast simulate` runs: the TOML a user would write for the
/// same runs (`--print-config` prints it; `ballast run` on it gives the same rows).
pub fn one_point_config(
    args: &SimulateArgs,
    spec: &RunSpec,
    proc_: &process::ResolvedProcess,
) -> toml::Table {
    use toml::{Table, Value};
    let int = |v: u64| Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
    let mut process = Table::new();
    process.insert("kind".into(), Value::String(proc_.name().to_owned()));
    for (k, v) in &proc_.given {
        process.insert((*k).to_owned(), toml_value(v));
    }
    let mut series = Table::new();
    series.insert("name".into(), Value::String(proc_.name().to_owned()));
    series.insert("process".into(), Value::Table(process));
    series.insert("statistic".into(), Value::String("final_gap".into()));
    // The blocks protocol samples the gap only.
    let also = also_statistics(args, spec).into_iter().filter(|_| args.blocks.is_none());
    series.insert(
        "also".into(),
        Value::Array(also.map(|s| Value::String(s.name().to_owned())).collect()),
    );
    if spec.tie_break != TieBreak::Random {
        series.insert("tie_break".into(), Value::String(spec.tie_break.name().to_owned()));
    }
    if spec.weights != Weights::Unit {
        let mut w = Table::new();
        w.insert("kind".into(), Value::String(spec.weights.name().into()));
        for (k, v) in spec.weights.params() {
            w.insert(k.into(), Value::Float(v));
        }
        series.insert("weights".into(), Value::Table(w));
    }
    if spec.stop != Stop::Truncate {
        series.insert("stop".into(), Value::String(spec.stop.name().to_owned()));
    }
    series_tables(args, spec, &mut series);
    if let Setting::Delay { tau, mode } = spec.setting {
        series.insert("setting".into(), Value::String("delay".into()));
        series.insert("tau".into(), int(tau));
        series.insert("delay_mode".into(), Value::String(mode.name().to_owned()));
    }
    if let Some(k) = spec.observe_every {
        series.insert("observe_every".into(), int(k));
    }
    if let Some(k) = args.top_k {
        series.insert("top_k".into(), int(k));
    }
    if let Some(c) = args.above {
        series.insert("above".into(), int(c));
    }
    if !args.potentials.is_empty() {
        let list = args.potentials.iter().map(|p| Value::String(p.clone())).collect();
        series.insert("potentials".into(), Value::Array(list));
    }
    if let Some(text) = args.start.as_deref().filter(|_| !spec.start.is_empty()) {
        if let Ok(r) = crate::start::parse_start(text) {
            let mut t = Table::new();
            t.insert("kind".into(), Value::String(r.kind.into()));
            for (k, v) in &r.given {
                t.insert((*k).to_owned(), toml_value(v));
            }
            series.insert("start".into(), Value::Table(t));
        }
    }
    if let Some(t) = args.recovery_target {
        series.insert("recovery_target".into(), Value::Float(t));
    }
    let mut point = Table::new();
    point.insert("m".into(), int(spec.m));
    if let Setting::Batched { b } = spec.setting {
        point.insert("b".into(), int(b));
    }
    let mut x = Table::new();
    x.insert("variable".into(), Value::String("n".into()));
    let mut grid = Table::new();
    grid.insert("n".into(), Value::Array(vec![int(spec.n)]));
    let mut config = Table::new();
    config.insert(
        "title".into(),
        Value::String(format!("ballast simulate --process {}", proc_.name())),
    );
    config.insert("seed".into(), int(args.seed));
    config.insert("seed_item".into(), Value::String(SIMULATE_ITEM.into()));
    config.insert("runs".into(), int(args.runs));
    if let Some(blocks) = args.blocks {
        let mut t = Table::new();
        t.insert("blocks".into(), int(blocks));
        config.insert("sampling".into(), Value::Table(t));
    }
    config.insert("engine".into(), Value::String(spec.engine.name().to_owned()));
    config.insert("x".into(), Value::Table(x));
    config.insert("grid".into(), Value::Table(grid));
    config.insert("point".into(), Value::Table(point));
    config.insert("series".into(), Value::Array(vec![Value::Table(series)]));
    config
}

/// A one-point config as the TOML text `--print-config` prints (the same table the runs
/// are validated from).
pub(crate) fn config_text(config: &toml::Table) -> String {
    toml::to_string(config).expect("a table of plain values serialises")
}

/// The runs of an allocation process: the one-point config through the runner's pipeline
/// (validation, seeds, parallel units, progress, Ctrl-C, aggregation).
fn run_pipeline(
    args: &SimulateArgs,
    spec: &RunSpec,
    proc_: &process::ResolvedProcess,
) -> anyhow::Result<ItemResult> {
    run_one_point(args, &one_point_config(args, spec, proc_))
}

/// The path that names the one-point config in the runner's messages.
const ONE_POINT_PATH: &str = "<ballast simulate>";

/// Validates and runs the one-point config of a `ballast simulate` command through the
/// runner's pipeline (every item kind comes here).
pub(crate) fn run_one_point(
    args: &SimulateArgs,
    config: &toml::Table,
) -> anyhow::Result<ItemResult> {
    let exp = Experiment::from_table(SIMULATE_ITEM, std::path::Path::new(ONE_POINT_PATH), config)
        .map_err(one_point_error)?;
    let mut opts = RunOptions::new(".");
    opts.threads = args.threads.map_or(0, |t| usize::try_from(t).unwrap_or(usize::MAX));
    opts.command = Some(std::env::args().collect::<Vec<_>>().join(" "));
    Ok(run_experiment(&exp, &opts)?)
}

/// A validation error of the one-point config in the terms of the command line: each problem
/// once, its message without the generated config's place and series context (its series
/// are the statistics of the one point, so a problem of the point would repeat in every one
/// of them).
fn one_point_error(e: ballast_runner::Error) -> BadInput {
    let ballast_runner::Error::Config { errors, .. } = &e else {
        return BadInput::new(e.to_string());
    };
    let mut problems: Vec<&str> = Vec::new();
    for p in errors {
        if !problems.contains(&p.message.as_str()) {
            problems.push(&p.message);
        }
    }
    BadInput::new(format!(
        "{}\n(checked as the one-point config of these arguments; --print-config shows it)",
        problems.join("\n")
    ))
}

/// Runs the simulations and builds the report.
pub fn report(args: &SimulateArgs) -> anyhow::Result<SimulateReport> {
    let (spec, proc_) = build_spec(args)?;
    // Checked here too, so that a bad spec names the flag.
    let potentials = parse_potentials(&args.potentials)?;
    let result = run_pipeline(args, &spec, &proc_)?;
    let row = |stat: Statistic| result.rows.iter().find(|r| r.statistic == stat);
    let summary = |stat: Statistic| row(stat).map(|r| r.summary.clone()).context("missing row");
    // samples and balls per sample are fields of their own; moves only where there are any.
    let listed = |r: &&ballast_runner::Row| {
        let s = &r.summary;
        let moves = r.statistic == Statistic::MovedPerBall;
        s.mean.is_finite()
            && !matches!(r.statistic, Statistic::SamplesPerBall | Statistic::BallsPerSample)
            && !(moves && s.mean == 0.0)
    };
    let recovery = args.recovery_target.map(|_| Statistic::RecoveryTime);
    let above = args.above.map(|_| Statistic::BallsAbove);
    let statistics = also()
        .chain(recovery)
        .chain(above)
        .filter_map(row)
        .filter(listed)
        .map(|r| {
            let s = StatSummary::of(&r.summary);
            (r.statistic.name().to_owned(), s)
        })
        .collect();
    let stat_mean = |stat: Statistic| row(stat).map_or(f64::NAN, |r| r.summary.mean);
    let balls = result.meta.balls_simulated as f64;
    let runs = per_run::collect(&result.rows, proc_.name());
    Ok(SimulateReport {
        run: RunDescription::of(args, &spec, &proc_, result.meta.engine.clone()),
        balls_per_run: balls / args.runs as f64,
        gap: summary(Statistic::FinalGap)?,
        max_gap: row(Statistic::MaxGap).map(|r| r.summary.clone()),
        statistics,
        max_load_distribution: row(Statistic::MaxLoad)
            .map(|r| r.summary.distribution.clone())
            .unwrap_or_default(),
        graph: None,
        potentials: potential_summaries(&result, proc_.name(), &potentials),
        potential_trajectories: potential_trajectories(&result, proc_.name(), &potentials),
        trajectories: trajectories(&result, &runs.trajectory),
        probes_distribution: result
            .rows
            .iter()
            .filter(|r| r.statistic == Statistic::ProbesDistribution)
            .map(|r| kinds::HistogramBin { value: r.x, fraction: r.summary.mean })
            .collect(),
        load_distribution: result
            .rows
            .iter()
            .filter(|r| r.statistic == Statistic::LoadDistribution)
            .map(|r| kinds::HistogramBin { value: r.x, fraction: r.summary.mean })
            .collect(),
        sorted_loads: means_of(&result, Statistic::SortedLoads),
        top_loads: means_of(&result, Statistic::TopLoads),
        per_run: runs.scalars,
        trajectory: runs.trajectory,
        per_run_vectors: runs.vectors,
        // Pooled over runs (every run places m balls, or a step more with `stop = finish`):
        // the mean of the per-run ratios, and its inverse.
        samples_per_ball: stat_mean(Statistic::SamplesPerBall),
        balls_per_sample: 1.0 / stat_mean(Statistic::SamplesPerBall),
        ns_per_ball: ns_per_ball(&result.meta),
        wall_s: result.meta.wall_time_s,
    })
}

/// The means of the rows of `statistic`, in row order (one per rank).
fn means_of(result: &ItemResult, statistic: Statistic) -> Vec<f64> {
    result.rows.iter().filter(|r| r.statistic == statistic).map(|r| r.summary.mean).collect()
}

/// Nanoseconds per ball of a run's metadata: its CPU time (the process's, all threads, as
/// the runner measures it: `Metadata::cpu_time_s`) per
/// ball simulated, or the wall time × the threads where the CPU time is unknown; 0 without
/// balls.
pub(crate) fn ns_per_ball(meta: &ballast_runner::Metadata) -> f64 {
    let balls = meta.balls_simulated as f64;
    let busy_s = meta.cpu_time_s.unwrap_or(meta.wall_time_s * meta.threads as f64);
    if balls > 0.0 {
        busy_s * 1e9 / balls
    } else {
        0.0
    }
}

/// The final value of each potential over runs, from the rows `<series> [<potential>]` the
/// pipeline writes for a series' `potentials`.
pub(crate) fn potential_summaries(
    result: &ItemResult,
    series: &str,
    potentials: &[PotentialSpec],
) -> BTreeMap<String, PotentialSummary> {
    potentials
        .iter()
        .filter_map(|p| {
            let name = format!("{series} [{p}]");
            let row = result
                .rows
                .iter()
                .find(|r| r.series == name && r.statistic != Statistic::PotentialTrajectory)?;
            let s = &row.summary;
            Some((p.to_string(), PotentialSummary { mean: s.mean, stderr: s.stderr, sd: s.sd }))
        })
        .collect()
}

/// Each potential at every observation point over runs, from the rows
/// `potential_trajectory` the pipeline writes for the series' potentials (empty without
/// observation points).
fn potential_trajectories(
    result: &ItemResult,
    series: &str,
    potentials: &[PotentialSpec],
) -> BTreeMap<String, Vec<TrajectoryPoint>> {
    potentials
        .iter()
        .map(|p| {
            let name = format!("{series} [{p}]");
            let points = result
                .rows
                .iter()
                .filter(|r| r.series == name && r.statistic == Statistic::PotentialTrajectory)
                .map(|r| TrajectoryPoint {
                    balls_per_bin: r.x,
                    mean: r.summary.mean,
                    stderr: r.summary.stderr,
                })
                .collect();
            (p.to_string(), points)
        })
        .filter(|(_, v): &(String, Vec<TrajectoryPoint>)| !v.is_empty())
        .collect()
}

/// The trajectories of the gap and the extreme loads, by the names of
/// [`SimulateReport::trajectories`], and the running maximum of the gap (from every run's
/// trajectory `runs`).
fn trajectories(
    result: &ItemResult,
    runs: &per_run::RunTrajectories,
) -> BTreeMap<String, Vec<TrajectoryPoint>> {
    let running = runs
        .columns
        .get("running_max_gap")
        .map(|c| ("running_max_gap".to_owned(), per_run::mean_curve(&runs.balls_per_bin, c)));
    OVER_TIME
        .iter()
        .map(|&(key, statistic)| {
            let points: Vec<TrajectoryPoint> = result
                .rows
                .iter()
                .filter(|r| r.statistic == statistic)
                .map(|r| TrajectoryPoint {
                    balls_per_bin: r.x,
                    mean: r.summary.mean,
                    stderr: r.summary.stderr,
                })
                .collect();
            (key.to_owned(), points)
        })
        .filter(|(_, v)| !v.is_empty())
        .chain(running)
        .collect()
}

/// The statistics over time of a run with observation points, by their report key.
const OVER_TIME: [(&str, Statistic); 3] = [
    ("gap", Statistic::GapTrajectory),
    ("max_load", Statistic::MaxTrajectory),
    ("min_load", Statistic::MinTrajectory),
];

/// Formats a distribution as `value: fraction` pairs.
fn format_distribution(d: &BTreeMap<i64, f64>) -> String {
    d.iter().map(|(k, v)| format!("{k}: {v:.3}")).collect::<Vec<_>>().join(", ")
}

/// The first line of the human summary: the process, sizes, setting, seed and rules.
fn header_line(r: &SimulateReport) -> String {
    let params = if r.run.params.is_empty() {
        String::new()
    } else {
        let p: Vec<String> = r.run.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!(" ({})", p.join(", "))
    };
    let setting = match (r.run.batch, r.run.tau) {
        (Some(b), _) => format!("batched b={b}"),
        (None, Some(tau)) => format!("delay tau={tau} {}", r.run.delay_mode.unwrap_or("random")),
        (None, None) => "sequential".to_owned(),
    };
    let setting = match (&r.run.churn, &r.run.dispatchers) {
        (Some(c), _) => format!("{setting}, churn {c}"),
        (None, Some(d)) => format!("dispatchers {d}"),
        (None, None) => setting,
    };
    let weights = if r.run.weight_params.is_empty() {
        r.run.weights.to_owned()
    } else {
        let p: Vec<String> = r.run.weight_params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{}({})", r.run.weights, p.join(", "))
    };
    // The sampling law only where it is not uniform (the line stays as it was otherwise).
    let weights = match r.run.sampling {
        "uniform" => weights,
        law => {
            let p: Vec<String> =
                r.run.sampling_params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{weights} sampling={law}({})", p.join(", "))
        }
    };
    let weights = match &r.run.capacities {
        Some(c) => format!("{weights} capacities={c}"),
        None => weights,
    };
    format!(
        "{}{params}  n={} m={}  {setting}  runs={} seed={}  engine={} ties={} weights={weights}",
        r.run.process, r.run.n, r.run.m, r.run.runs, r.run.seed, r.run.engine, r.run.tie_break
    )
}

/// The human-readable summary.
pub fn render_human(r: &SimulateReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}", header_line(r));
    let _ = writeln!(s, "{:<14}{:.4} ± {:.4}", "gap", r.gap.mean, r.gap.stderr);
    if let Some(mg) = &r.max_gap {
        let _ = writeln!(s, "{:<14}{:.4} ± {:.4}", "max_gap", mg.mean, mg.stderr);
    }
    let _ = writeln!(s, "{:<14}{}", "ceil(gap)", format_distribution(&r.gap.distribution));
    if let Some(mg) = &r.max_gap {
        let _ = writeln!(s, "{:<14}{}", "ceil(max_gap)", format_distribution(&mg.distribution));
    }
    if let Some(b) = r.run.blocks {
        let _ = writeln!(
            s,
            "{:<14}{} runs × {b} blocks of m = {} balls; each block end is one sample",
            "blocks", r.run.runs, r.run.m
        );
    }
    if !r.max_load_distribution.is_empty() {
        let d = format_distribution(&r.max_load_distribution);
        let _ = writeln!(s, "{:<14}{d}  (fraction of runs)", "ceil(max_load)");
    }
    for (name, v) in &r.statistics {
        let _ = writeln!(s, "{name:<14}{:.4} ± {:.4}", v.mean, v.stderr);
    }
    if !r.probes_distribution.is_empty() {
        let bins: Vec<String> = r
            .probes_distribution
            .iter()
            .map(|b| format!("{}: {:.4}", b.value, b.fraction))
            .collect();
        let _ = writeln!(
            s,
            "{:<14}{}  (probes per step: fraction of steps)",
            "probes",
            bins.join(", ")
        );
    }

    for (name, t) in &r.trajectories {
        let label = format!("{name}(t)");
        let _ = writeln!(s, "{label:<13} balls/n: mean  {}", format_trajectory(t));
    }
    loads::print_loads(&mut s, r);
    if let Some(g) = &r.graph {
        let _ =
            writeln!(s, "{:<14}{} ({} vertices, {} edges)", "graph", g.kind, g.vertices, g.edges);
    }
    for (name, v) in &r.potentials {
        let _ = writeln!(
            s,
            "{:<14}{name}: {:.6e} ± {:.2e} (final value)",
            "potential", v.mean, v.stderr
        );
        if let Some(t) = r.potential_trajectories.get(name) {
            let _ = writeln!(s, "{:<14}balls/n: value  {}", "  trajectory", format_trajectory(t));
        }
    }
    if r.run.stop != Stop::Truncate.name() || r.balls_per_run != r.run.m as f64 {
        let _ = writeln!(s, "{:<14}{:.2}  (stop = {})", "balls/run", r.balls_per_run, r.run.stop);
    }
    if !r.samples_per_ball.is_nan() {
        let _ = writeln!(
            s,
            "{:<14}{:.4}  ({:.4} balls per sample)",
            "samples/ball", r.samples_per_ball, r.balls_per_sample
        );
    }
    let _ = writeln!(s, "{:<14}{:.2}  (CPU time / balls)", "ns/ball", r.ns_per_ball);
    let _ = writeln!(s, "{:<14}{:.3} s", "wall", r.wall_s);
    s
}

/// What `ballast simulate` computes, before it is printed.
#[derive(Debug)]
pub enum Outcome {
    /// `--print-config`: the one-point config of the arguments.
    Config(String),
    /// An allocation process (graphical and with potentials included).
    Allocation(Box<SimulateReport>),
    /// A round-based model (`ballast_dynamic`'s registry).
    Dynamic(kinds::DynamicReport),
    /// `--offline D`: the off-line d-choice optimum and Greedy\[D\].
    Offline(kinds::OfflineReport),
}

impl Outcome {
    /// The `--json` text (one line, no newline); the config text for `--print-config`.
    pub fn json_text(&self) -> anyhow::Result<String> {
        Ok(match self {
            Self::Config(c) => c.clone(),
            Self::Allocation(r) => serde_json::to_string(r).context("serialising the report")?,
            Self::Dynamic(r) => serde_json::to_string(r).context("serialising the report")?,
            Self::Offline(r) => r.to_json().to_string(),
        })
    }

    /// The report as a JSON value (the object `--json` prints; a string for
    /// `--print-config`).
    pub fn to_json(&self) -> anyhow::Result<Value> {
        Ok(match self {
            Self::Config(c) => Value::String(c.clone()),
            Self::Allocation(r) => serde_json::to_value(r).context("serialising the report")?,
            Self::Dynamic(r) => serde_json::to_value(r).context("serialising the report")?,
            Self::Offline(r) => r.to_json(),
        })
    }

    /// The human-readable summary (the config text for `--print-config`).
    pub fn render_human(&self) -> String {
        match self {
            Self::Config(c) => c.clone(),
            Self::Allocation(r) => render_human(r),
            Self::Dynamic(r) => kinds::render_human(r),
            Self::Offline(r) => r.render_human(),
        }
    }
}

/// Runs `ballast simulate` without printing and without installing a Ctrl-C handler (the
/// caller decides; [`ballast_runner::request_interrupt`] stops the runs).
pub fn outcome(args: &SimulateArgs) -> anyhow::Result<Outcome> {
    if args.offline.is_some() || ballast_dynamic::registry::find(&args.process).is_ok() {
        return kinds::outcome(args);
    }
    if args.graph.is_some() {
        return kinds::graph_outcome(args);
    }
    if args.print_config {
        let (spec, proc_) = build_spec(args)?;
        return Ok(Outcome::Config(config_text(&one_point_config(args, &spec, &proc_))));
    }
    Ok(Outcome::Allocation(Box::new(report(args)?)))
}

/// Entry point of `ballast simulate`.
pub fn main(args: &SimulateArgs) -> anyhow::Result<()> {
    if !args.print_config {
        ballast_runner::install_ctrl_c_handler().map_err(anyhow::Error::msg)?;
    }
    let out = outcome(args)?;
    match &out {
        Outcome::Config(c) => crate::stdout::print(c),
        _ if args.json => crate::stdout::println(&out.json_text()?),
        _ => crate::stdout::print(&out.render_human()),
    }
}
