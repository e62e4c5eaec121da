//! `ballast simulate` for the item kinds beyond allocation, through the runner's pipeline
//! like the allocation processes:
//!
//! - `--process rbb | leaky_bins | infinite_azar | random_deletions | insert_delete`: the
//!   round-based models of `ballast-dynamic`, as a one-point `kind = "dynamic"` config with
//!   one series per statistic (the series share their runs, so every statistic comes from
//!   the same simulations);
//! - `--offline D`: the off-line d-choice optimum, as a one-point `kind = "graph"` config
//!   with the optimum and the on-line Greedy\[D\] max load;
//! - `--graph TOPOLOGY` with an allocation process: the graphical process as a one-point
//!   `kind = "graph"` config with one series (the gap, and `also` the max gap, the max load
//!   and the samples per ball of the same runs; the potentials of `--potential`).
//!
//! `--print-config` prints the config. Run r uses the seed of run r of point 0 of the item
//! `simulate` (`seed_item = "simulate"`; per series for the off-line optimum), and a
//! topology is built from `derive_seed(seed, [hash_str("simulate"), 0, GRAPH_STREAM])`.

use std::fmt::Write as _;

use ballast_dynamic::registry::{self, ModelDef};
use ballast_runner::Statistic;
use serde::Serialize;
use toml::{Table, Value};

use super::{Outcome, SimulateArgs, StatSummary, SIMULATE_ITEM};
use crate::error::BadInput;

/// The statistics of a model, in output order (`recovery`: with `--recovery-target`).
fn measures(def: &ModelDef, recovery: bool) -> Vec<Statistic> {
    let mut m = vec![
        Statistic::AvgMaxLoad,
        Statistic::AvgFractionEmptyBins,
        Statistic::AvgLoadPerBin,
        Statistic::AvgSystemLoad,
        Statistic::PeakMaxLoad,
        Statistic::MaxLoadHistogram,
        Statistic::AvgDiscrepancy,
        Statistic::AvgOverload,
    ];
    if def.name == "leaky_bins" {
        m.push(Statistic::MaxLoadOverShape);
    }
    if recovery {
        m.push(Statistic::RecoveryRounds);
    }
    m
}

/// The `--json` output of a round-based model.
#[derive(Debug, Serialize)]
pub struct DynamicReport {
    /// Model kind.
    pub process: String,
    /// Model parameters as given.
    pub params: Table,
    /// Bins.
    pub n: u64,
    /// Balls (rbb, infinite_azar), `null` otherwise.
    pub m: Option<u64>,
    /// Arrival rate per bin (leaky_bins), `null` otherwise.
    pub lambda: Option<f64>,
    /// Measured rounds per run.
    pub rounds: u64,
    /// Rounds before measuring.
    pub burn_in: u64,
    /// The start state as given (`--start`), `null` for the model's own start.
    pub start: Option<String>,
    /// Runs.
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
    /// Time averages over the measured rounds, mean and standard error over runs.
    pub statistics: std::collections::BTreeMap<String, StatSummary>,
    /// The distribution of the max load over the measured rounds: per max-load value the
    /// fraction of rounds at it, mean over runs (the rows `max_load_histogram`).
    pub max_load_histogram: Vec<HistogramBin>,
    /// Wall time of all runs, in seconds.
    pub wall_s: f64,
}

/// One value of a distribution over rounds.
#[derive(Debug, Serialize)]
pub struct HistogramBin {
    /// The value (a max load).
    pub value: f64,
    /// Fraction of the measured rounds at it, mean over runs.
    pub fraction: f64,
}

/// The model's parameters from `--param key=value`, checked by its registry entry.
fn params(def: &ModelDef, raw: &[String]) -> Result<Table, BadInput> {
    let list = def.list();
    let mut table = Table::new();
    table.insert("kind".into(), Value::String(def.name.to_owned()));
    let given = crate::process::parse_pairs(&list, raw.iter().map(String::as_str), "--param ")?;
    for (name, v) in given {
        let v = match v {
            ballast_core::registry::ParamValue::Num(x) if x.fract() == 0.0 => {
                Value::Integer(x as i64)
            }
            ballast_core::registry::ParamValue::Num(x) => Value::Float(x),
            ballast_core::registry::ParamValue::Bool(b) => Value::Boolean(b),
            ballast_core::registry::ParamValue::Text(t) => Value::String(t),
            ballast_core::registry::ParamValue::List(v) => {
                Value::Array(v.into_iter().map(Value::Float).collect())
            }
        };
        table.insert(name.to_owned(), v);
    }
    Ok(table)
}

/// The frame of a one-point config of kind `kind`: title, seed, `seed_item = "simulate"`,
/// runs and the grid `n = [N]`.
fn frame(args: &SimulateArgs, kind: &str, title: String, seed_item: bool) -> Table {
    let int = |v: u64| Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
    let mut config = Table::new();
    config.insert("kind".into(), Value::String(kind.into()));
    config.insert("title".into(), Value::String(title));
    config.insert("seed".into(), int(args.seed));
    if seed_item {
        config.insert("seed_item".into(), Value::String(SIMULATE_ITEM.into()));
    }
    config.insert("runs".into(), int(args.runs));
    let mut x = Table::new();
    x.insert("variable".into(), Value::String("n".into()));
    config.insert("x".into(), Value::Table(x));
    let mut grid = Table::new();
    grid.insert("n".into(), Value::Array(vec![int(args.n)]));
    config.insert("grid".into(), Value::Table(grid));
    config
}

/// The one-point config of these arguments.
pub fn one_point_config(args: &SimulateArgs, def: &ModelDef) -> Result<Table, BadInput> {
    let int = |v: u64| Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
    let rounds = args.rounds.ok_or_else(|| {
        BadInput::new(format!(
            "`--rounds` (measured rounds per run) is required for `{}`",
            def.name
        ))
    })?;
    let process = params(def, &args.params)?;
    let mut point = Table::new();
    for (name, _) in def.point {
        match *name {
            "n" => {}
            // Whether the model needs `m` is its own business (insert_delete reads it for
            // its `phases` workload only): without `--m` its build says so.
            "m" => {
                if let Some(m) = args.m {
                    point.insert("m".into(), int(m));
                }
            }
            "lambda" => {
                let l = args.lambda.ok_or_else(|| {
                    BadInput::new(format!(
                        "`--lambda` (arrival rate) is required for `{}`",
                        def.name
                    ))
                })?;
                point.insert("lambda".into(), Value::Float(l));
            }
            other => unreachable!("model point parameter {other}"),
        }
    }
    let unused = [("--m", args.m.is_some()), ("--lambda", args.lambda.is_some())];
    for (flag, given) in unused {
        if given && !def.point.iter().any(|(n, _)| *n == &flag[2..]) {
            return Err(BadInput::new(format!("`{flag}` is not used by model `{}`", def.name)));
        }
    }
    point.insert("rounds".into(), int(rounds));
    point.insert("burn_in".into(), int(args.burn_in));
    // `--start`: the series' `start` table, as written (a `file` by its path).
    let start = match args.start.as_deref() {
        Some(text) => {
            let r = crate::start::parse_start(text)?;
            let mut t = Table::new();
            t.insert("kind".into(), Value::String(r.kind.into()));
            for (k, v) in &r.given {
                t.insert((*k).to_owned(), super::toml_value(v));
            }
            Some(t)
        }
        None => None,
    };
    let series: Vec<Value> = measures(def, args.recovery_target.is_some())
        .into_iter()
        .map(|m| {
            let mut s = Table::new();
            s.insert("name".into(), Value::String(m.name().to_owned()));
            s.insert("process".into(), Value::Table(process.clone()));
            s.insert("statistic".into(), Value::String(m.name().to_owned()));
            if let Some(t) = args.recovery_target.filter(|_| m == Statistic::RecoveryRounds) {
                let mut params = Table::new();
                params.insert("recovery_target".into(), Value::Float(t));
                s.insert("params".into(), Value::Table(params));
            }
            if let Some(t) = &start {
                s.insert("start".into(), Value::Table(t.clone()));
            }
            Value::Table(s)
        })
        .collect();
    let title = format!("ballast simulate --process {}", def.name);
    let mut config = frame(args, "dynamic", title, true);
    config.insert("point".into(), Value::Table(point));
    config.insert("series".into(), Value::Array(series));
    Ok(config)
}

/// Runs the one-point config and collects its statistics.
fn report(args: &SimulateArgs, def: &ModelDef) -> anyhow::Result<DynamicReport> {
    let config = one_point_config(args, def)?;
    let (statistics, hist, wall_s) = run_config(args, &config)?;
    Ok(DynamicReport {
        process: def.name.to_owned(),
        params: params(def, &args.params)?.into_iter().filter(|(k, _)| k != "kind").collect(),
        n: args.n,
        m: args.m,
        lambda: args.lambda,
        rounds: args.rounds.unwrap_or_default(),
        burn_in: args.burn_in,
        start: args.start.clone(),
        runs: args.runs,
        seed: args.seed,
        statistics,
        max_load_histogram: hist
            .into_iter()
            .map(|(value, fraction)| HistogramBin { value, fraction })
            .collect(),
        wall_s,
    })
}

/// The human-readable summary.
pub fn render_human(r: &DynamicReport) -> String {
    let mut s = String::new();
    let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let size = match (r.m, r.lambda) {
        (Some(m), _) => format!("m={m}"),
        (None, Some(l)) => format!("lambda={l}"),
        (None, None) => String::new(),
    };
    let _ = writeln!(
        s,
        "{} ({})  n={} {size}  rounds={} burn_in={}  runs={} seed={}{}",
        r.process,
        params.join(", "),
        r.n,
        r.rounds,
        r.burn_in,
        r.runs,
        r.seed,
        r.start.as_deref().map(|t| format!("  start={t}")).unwrap_or_default()
    );
    for (name, v) in &r.statistics {
        let _ = writeln!(s, "{name:<26}{:.6} ± {:.6}", v.mean, v.stderr);
    }
    if !r.max_load_histogram.is_empty() {
        let bins: Vec<String> = r
            .max_load_histogram
            .iter()
            .map(|b| format!("{}: {:.3}", b.value, b.fraction))
            .collect();
        let _ = writeln!(s, "{:<26}{}", "max_load_histogram", bins.join(", "));
    }
    let _ = writeln!(s, "{:<26}{:.3} s", "wall", r.wall_s);
    s
}

/// The one-point config of `--offline D`.
fn offline_config(args: &SimulateArgs, d: u64) -> Result<Table, BadInput> {
    let int = |v: u64| Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
    if args.sampling.is_some() || args.capacities.is_some() {
        return Err(BadInput::new(
            "`--sampling` and `--capacities` apply to allocation processes; the off-line \
             optimum takes uniform choices on bins of equal capacity",
        ));
    }
    if d < 2 || !args.params.is_empty() || !args.process.is_empty() {
        return Err(BadInput::new(
            "`--offline D` takes D >= 2 choices per ball and no --process or --param",
        ));
    }
    let m = args.m.ok_or_else(|| BadInput::new("`--m` (balls) is required with --offline"))?;
    let series: Vec<Value> = [Statistic::OfflineOptimum, Statistic::GreedyMaxLoad]
        .into_iter()
        .map(|measure| {
            let mut s = Table::new();
            s.insert("name".into(), Value::String(measure.name().to_owned()));
            s.insert("statistic".into(), Value::String(measure.name().to_owned()));
            let mut params = Table::new();
            params.insert("d".into(), int(d));
            s.insert("params".into(), Value::Table(params));
            Value::Table(s)
        })
        .collect();
    let mut config = frame(args, "graph", format!("ballast simulate --offline {d}"), true);
    let mut point = Table::new();
    point.insert("m".into(), int(m));
    config.insert("point".into(), Value::Table(point));
    config.insert("series".into(), Value::Array(series));
    Ok(config)
}

/// The statistics of a one-point config by name, its histogram rows (value, mean
/// fraction) and the wall time.
type ConfigRun = (std::collections::BTreeMap<String, StatSummary>, Vec<(f64, f64)>, f64);

/// Runs a one-point config of another item kind and returns its rows' statistics.
fn run_config(args: &SimulateArgs, config: &Table) -> anyhow::Result<ConfigRun> {
    let result = super::run_one_point(args, config)?;
    let statistics = result
        .rows
        .iter()
        .filter_map(|r| match r.statistic {
            Statistic::MaxLoadHistogram => None,
            m => Some((m.name().to_owned(), StatSummary::of(&r.summary))),
        })
        .collect();
    let hist = result
        .rows
        .iter()
        .filter(|r| r.statistic == Statistic::MaxLoadHistogram)
        .map(|r| (r.x, r.summary.mean))
        .collect();
    Ok((statistics, hist, result.meta.wall_time_s))
}

/// The result of `--offline D`.
#[derive(Debug)]
pub struct OfflineReport {
    /// Choices per ball.
    pub d: u64,
    /// Bins.
    pub n: u64,
    /// Balls.
    pub m: Option<u64>,
    /// Runs.
    pub runs: u64,
    /// Master seed.
    pub seed: u64,
    /// The optimum and Greedy\[D\] max load, mean and standard error over runs.
    pub statistics: std::collections::BTreeMap<String, StatSummary>,
    /// Wall time of all runs, in seconds.
    pub wall_s: f64,
}

impl OfflineReport {
    /// The `--json` object.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "offline": self.d, "n": self.n, "m": self.m, "runs": self.runs, "seed": self.seed,
            "statistics": self.statistics, "wall_s": self.wall_s,
        })
    }

    /// The human-readable summary.
    pub fn render_human(&self) -> String {
        let mut s = String::new();
        let m = self.m.unwrap_or_default();
        let _ = writeln!(
            s,
            "off-line d-choice optimum, d={}  n={} m={m}  runs={} seed={}",
            self.d, self.n, self.runs, self.seed
        );
        for (name, v) in &self.statistics {
            let _ = writeln!(s, "{name:<26}{:.4} ± {:.4}", v.mean, v.stderr);
        }
        let _ = writeln!(s, "{:<26}{:.3} s", "wall", self.wall_s);
        s
    }
}

/// `--offline D`: the off-line optimum and Greedy[D] over runs (or the config).
fn offline_outcome(args: &SimulateArgs, d: u64) -> anyhow::Result<Outcome> {
    let config = offline_config(args, d)?;
    if args.print_config {
        return Ok(Outcome::Config(super::config_text(&config)));
    }
    let (statistics, _, wall_s) = run_config(args, &config)?;
    Ok(Outcome::Offline(OfflineReport {
        d,
        n: args.n,
        m: args.m,
        runs: args.runs,
        seed: args.seed,
        statistics,
        wall_s,
    }))
}

/// A round-based model or `--offline`, computed (the caller prints).
pub fn outcome(args: &SimulateArgs) -> anyhow::Result<Outcome> {
    if let Some(d) = args.offline {
        return offline_outcome(args, d);
    }
    let def = registry::find(&args.process).map_err(|e| BadInput::new(e.message))?;
    let allocation_only = [
        ("--batch", args.batch.is_some()),
        ("--tau", args.tau.is_some()),
        ("--graph", args.graph.is_some()),
        ("--potential", !args.potentials.is_empty()),
        ("--observe-every", args.observe_every.is_some()),
        ("--sampling", args.sampling.is_some()),
        ("--capacities", args.capacities.is_some()),
        ("--probes", args.probes),
        ("--churn", args.churn.is_some()),
        ("--dispatchers", args.dispatchers.is_some()),
    ];
    if let Some((flag, _)) = allocation_only.iter().find(|(_, given)| *given) {
        anyhow::bail!(BadInput::new(format!(
            "`{flag}` applies to allocation processes; `{}` is a round-based model",
            def.name
        )));
    }
    if args.print_config {
        return Ok(Outcome::Config(super::config_text(&one_point_config(args, def)?)));
    }
    Ok(Outcome::Dynamic(report(args, def)?))
}

/// The statistics `simulate --graph` reports besides the gap: the series' `also`.
const GRAPH_ALSO: [Statistic; 3] =
    [Statistic::MaxGap, Statistic::MaxLoad, Statistic::SamplesPerBall];

/// The one-point `kind = "graph"` config of `--graph TOPOLOGY` with an allocation process:
/// the topology as written, the process table, the setting, tie rule, weights and
/// potentials; run r uses the seed of run r of point 0 of the item `simulate`, and the
/// topology `derive_seed(seed, [hash_str("simulate"), 0, GRAPH_STREAM])`.
pub fn graph_config(
    args: &SimulateArgs,
    spec: &ballast_core::RunSpec,
    proc_: &crate::process::ResolvedProcess,
) -> Result<Table, BadInput> {
    use ballast_core::{Setting, Stop, TieBreak, Weights};
    let int = |v: u64| Value::Integer(i64::try_from(v).unwrap_or(i64::MAX));
    let text = args.graph.as_deref().unwrap_or_default();
    // The registry's message for a bad topology, naming the flag.
    ballast_graph::parse_topology(text)
        .map_err(|e| BadInput::new(format!("{e} (set by --graph)")))?;
    let mut check = spec.clone();
    if check.engine == ballast_core::Engine::Auto {
        check.engine = ballast_core::Engine::Bins;
    }
    ballast_graph::check_graph_spec(&check).map_err(|e| {
        let flag = if check.engine == ballast_core::Engine::Levels {
            " (--engine with --graph)"
        } else {
            ""
        };
        BadInput::new(format!("{e}{flag}"))
    })?;
    if spec.stop != Stop::Truncate {
        return Err(BadInput::new(
            "`--stop` applies to processes that place several balls per step; graphical \
             processes place one (drop --stop with --graph)",
        ));
    }
    let mut process = Table::new();
    process.insert("kind".into(), Value::String(proc_.name().to_owned()));
    for (k, v) in &proc_.given {
        process.insert((*k).to_owned(), super::toml_value(v));
    }
    let mut series = Table::new();
    series.insert("name".into(), Value::String(proc_.name().to_owned()));
    series.insert("graph".into(), Value::String(text.to_owned()));
    series.insert("process".into(), Value::Table(process));
    series.insert("statistic".into(), Value::String(Statistic::FinalGap.name().to_owned()));
    let also = GRAPH_ALSO.iter().map(|m| Value::String(m.name().to_owned())).collect();
    series.insert("also".into(), Value::Array(also));
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
    if !args.potentials.is_empty() {
        let list = args.potentials.iter().map(|p| Value::String(p.clone())).collect();
        series.insert("potentials".into(), Value::Array(list));
    }
    let mut point = Table::new();
    point.insert("m".into(), int(spec.m));
    if let Setting::Batched { b } = spec.setting {
        point.insert("b".into(), int(b));
    }
    if let Some(k) = spec.observe_every {
        point.insert("observe_every".into(), int(k));
    }
    let title = format!("ballast simulate --process {} --graph {text}", proc_.name());
    let mut config = frame(args, "graph", title, true);
    config.insert("point".into(), Value::Table(point));
    config.insert("series".into(), Value::Array(vec![Value::Table(series)]));
    Ok(config)
}

/// `--graph TOPOLOGY`: the one-point graph config through the runner's pipeline (or the
/// config, with `--print-config`).
pub fn graph_outcome(args: &SimulateArgs) -> anyhow::Result<Outcome> {
    use super::{GraphReport, RunDescription, SimulateReport};
    use ballast_runner::Row;
    let (mut spec, proc_) = super::build_spec(args)?;
    let config = graph_config(args, &spec, &proc_)?;
    if args.print_config {
        return Ok(Outcome::Config(super::config_text(&config)));
    }
    // Checked here too, so that a bad spec names the flag.
    let potentials = super::parse_potentials(&args.potentials)?;
    let result = super::run_one_point(args, &config)?;
    let main = |r: &&Row| !r.also && r.series == proc_.name();
    let row =
        |m: Statistic| result.rows.iter().find(|r| r.series == proc_.name() && r.statistic == m);
    let summary = |m: Statistic| {
        row(m).map(|r| r.summary.clone()).ok_or_else(|| anyhow::anyhow!("missing row {}", m.name()))
    };
    let gap = result.rows.iter().find(main).map(|r| r.summary.clone());
    let gap = gap.ok_or_else(|| anyhow::anyhow!("missing row final_gap"))?;
    let info = result.graphs.first().ok_or_else(|| anyhow::anyhow!("no topology built"))?;
    // A giant component can be smaller than n: the bins are its vertices.
    spec.n = info.n_vertices as u64;
    let statistics = row(Statistic::MaxLoad)
        .map(|r| (Statistic::MaxLoad.name().to_owned(), StatSummary::of(&r.summary)))
        .into_iter()
        .collect();
    let samples_per_ball = row(Statistic::SamplesPerBall).map_or(f64::NAN, |r| r.summary.mean);
    let balls = result.meta.balls_simulated as f64;
    let engine = ballast_core::Engine::Bins.name().to_owned();
    let runs = super::per_run::collect(&result.rows, proc_.name());
    Ok(Outcome::Allocation(Box::new(SimulateReport {
        run: RunDescription::of(args, &spec, &proc_, engine),
        balls_per_run: balls / args.runs as f64,
        gap,
        max_gap: Some(summary(Statistic::MaxGap)?),
        statistics,
        max_load_distribution: std::collections::BTreeMap::new(),
        graph: Some(GraphReport {
            kind: args.graph.clone().unwrap_or_default(),
            vertices: info.n_vertices,
            edges: info.n_edges,
        }),
        potentials: super::potential_summaries(&result, proc_.name(), &potentials),
        // Graph items record no trajectories or probe counts.
        potential_trajectories: std::collections::BTreeMap::new(),
        trajectories: std::collections::BTreeMap::new(),
        probes_distribution: Vec::new(),
        load_distribution: Vec::new(),
        sorted_loads: Vec::new(),
        top_loads: Vec::new(),
        per_run: runs.scalars,
        trajectory: runs.trajectory,
        per_run_vectors: runs.vectors,
        samples_per_ball,
        balls_per_sample: 1.0 / samples_per_ball,
        ns_per_ball: super::ns_per_ball(&result.meta),
        wall_s: result.meta.wall_time_s,
    })))
}
