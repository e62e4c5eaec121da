//! Running an experiment: (point, run) units in parallel on a local rayon pool, collected by
//! index, then aggregated sequentially and compared with the references.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ballast_core::rng::SEED_DERIVATION_VERSION;
use ballast_core::simulate_seeded;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

use crate::config::{Experiment, Layout, Statistic};
use crate::plan::Plan;
use crate::reference::ReferenceTable;
use crate::stats::{summarize, Rounding, Summary};
use crate::Error;

/// The rounding rule of the distributions in the outputs: gaps are rounded **up**.
pub const ROUNDING: Rounding = Rounding::Ceil;

/// How to run an experiment.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Run the `[quick]` variant.
    pub quick: bool,
    /// Worker threads (0: rayon's default, one per core).
    pub threads: usize,
    /// Show a progress bar (only when stderr is a terminal and the run lasts over a second).
    pub progress: bool,
    /// Directory holding the reference CSVs (the repository's `reference/`).
    pub reference_dir: PathBuf,
    /// The command line recorded in the metadata (`None`: this process's arguments).
    pub command: Option<String>,
}

impl RunOptions {
    /// Full scale, all cores, progress on, references in `reference_dir`.
    pub fn new(reference_dir: impl Into<PathBuf>) -> Self {
        Self {
            quick: false,
            threads: 0,
            progress: true,
            reference_dir: reference_dir.into(),
            command: None,
        }
    }
}

/// Our value compared with one reference value.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// The reference value.
    pub value: f64,
    /// Runs behind the reference value.
    pub runs: u64,
    /// Estimated standard error of the reference: our sample sd / sqrt(reference runs).
    pub stderr: f64,
    /// (ours − reference) / sqrt(our stderr² + reference stderr²); `None` when both standard
    /// errors are 0.
    pub z: Option<f64>,
}

/// One output row: a series at one point (and, for `running_max_gap`, one batch).
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Series name.
    pub series: String,
    /// Grid variables other than x (all grid variables for `running_max_gap`).
    pub group: Vec<(String, f64)>,
    /// Number of bins.
    pub n: u64,
    /// Batch size, if batched.
    pub b: Option<u64>,
    /// Number of balls.
    pub m: u64,
    /// The x value (the batch index, from 1, for `running_max_gap`).
    pub x: f64,
    /// The statistic.
    pub statistic: Statistic,
    /// Mean, standard error and distribution over runs.
    pub summary: Summary,
    /// One entry per reference table, in config order.
    pub refs: Vec<Option<Comparison>>,
}

/// Metadata recorded with every output (the JSON file).
#[derive(Clone, Debug, Serialize)]
pub struct Metadata {
    /// Item id.
    pub item: String,
    /// Title from the config.
    pub title: String,
    /// Config path as given.
    pub config_path: String,
    /// SHA-256 of the config bytes.
    pub config_sha256: String,
    /// Master seed.
    pub seed: u64,
    /// Version of `ballast_core::derive_seed`.
    pub seed_derivation_version: u32,
    /// How unit seeds are derived.
    pub seed_scheme: String,
    /// Version of ballast-runner.
    pub crate_version: String,
    /// `git rev-parse HEAD` (with `+dirty` for uncommitted tracked changes), or `unknown`.
    pub git_revision: String,
    /// Simulation engine(s) that ran the points (`bins`, `levels`, or both joined by `+`).
    pub engine: String,
    /// Whether the `[quick]` variant ran.
    pub quick: bool,
    /// Worker threads used.
    pub threads: usize,
    /// Runs per point.
    pub runs: u64,
    /// Points (series × grid).
    pub points: usize,
    /// Wall time of the simulations and aggregation, seconds.
    pub wall_time_s: f64,
    /// Balls simulated in total.
    pub balls_simulated: u128,
    /// Rounding rule of the distributions.
    pub rounding: Rounding,
    /// Reference files (label, file).
    pub references: Vec<(String, String)>,
    /// The command that produced the outputs.
    pub command: String,
}

/// The aggregated result of one item, ready to be written.
#[derive(Clone, Debug)]
pub struct ItemResult {
    /// Metadata (the JSON output).
    pub meta: Metadata,
    /// Rows in plan order.
    pub rows: Vec<Row>,
    /// Series names in config order.
    pub series: Vec<String>,
    /// Reference labels in config order.
    pub ref_labels: Vec<String>,
    /// Free-text notes from the config.
    pub notes: String,
    /// Report layout.
    pub layout: Layout,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
}

struct UnitOut {
    max_gap: f64,
    final_gap: f64,
    trajectory: Vec<f64>,
    balls: u64,
}

fn git_revision(dir: &Path) -> String {
    let run = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match run(&["rev-parse", "HEAD"]) {
        Some(rev) if !rev.is_empty() => {
            let dirty = run(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{rev}+dirty")
            } else {
                rev
            }
        }
        _ => "unknown".to_string(),
    }
}

fn progress_bar(total: u64, wanted: bool) -> (ProgressBar, bool) {
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{elapsed_precise}] {wide_bar} {percent}% eta {eta}")
    {
        pb.set_style(style);
    }
    (pb, wanted && std::io::stderr().is_terminal())
}

/// Runs an experiment (full scale or quick) and aggregates its results. Loads the references
/// first, so a missing reference file fails before any simulation.
pub fn run_experiment(exp: &Experiment, opts: &RunOptions) -> Result<ItemResult, Error> {
    let plan: Plan = exp.plan(opts.quick)?;
    let refs = exp
        .raw
        .references
        .iter()
        .map(|r| ReferenceTable::load(&opts.reference_dir, &r.file, &r.label))
        .collect::<Result<Vec<_>, _>>()?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| Error::ThreadPool(e.to_string()))?;
    let threads = pool.current_num_threads();
    let start = Instant::now();
    let runs = plan.runs;
    let units = plan.points.len() as u64 * runs;
    let (pb, may_show) =
        progress_bar(plan.total_balls().min(u128::from(u64::MAX)) as u64, opts.progress);
    pb.set_message(exp.id().to_string());
    let shown = AtomicBool::new(false);
    let id = exp.id();
    let seed = exp.seed();
    let outs: Vec<Result<UnitOut, Error>> = pool.install(|| {
        (0..units)
            .into_par_iter()
            .map(|u| {
                let (pi, run) = ((u / runs) as usize, u % runs);
                let point = &plan.points[pi];
                let out = simulate_seeded(&point.spec, Plan::unit_seed(seed, id, pi, run))
                    .map_err(|source| Error::Simulation {
                        what: format!(
                            "series `{}` point {pi} run {run}",
                            plan.series[point.series].name
                        ),
                        source,
                    })?;
                pb.inc(point.m);
                if may_show
                    && start.elapsed() > Duration::from_secs(1)
                    && !shown.swap(true, Ordering::Relaxed)
                {
                    pb.set_draw_target(ProgressDrawTarget::stderr());
                }
                Ok(UnitOut {
                    max_gap: out.max_gap,
                    final_gap: out.final_gap,
                    trajectory: out.trajectory,
                    balls: out.balls,
                })
            })
            .collect()
    });
    pb.finish_and_clear();
    let outs = outs.into_iter().collect::<Result<Vec<_>, _>>()?;
    let balls: u128 = outs.iter().map(|o| u128::from(o.balls)).sum();

    // Sequential, deterministic aggregation.
    let mut rows = Vec::new();
    for (pi, point) in plan.points.iter().enumerate() {
        let ps = &plan.series[point.series];
        let block = &outs[pi * runs as usize..(pi + 1) * runs as usize];
        let mut emit = |x: f64, group: Vec<(String, f64)>, values: Vec<f64>| {
            let summary = summarize(&values, ROUNDING);
            let cmp = refs
                .iter()
                .map(|t| {
                    let r = t.get(ps.reference.as_deref()?, point.n, x)?;
                    let se_ref = summary.sd / (r.runs.max(1) as f64).sqrt();
                    let comb = (summary.stderr.powi(2) + se_ref.powi(2)).sqrt();
                    let z = (comb > 0.0).then(|| (summary.mean - r.value) / comb);
                    Some(Comparison { value: r.value, runs: r.runs, stderr: se_ref, z })
                })
                .collect();
            rows.push(Row {
                series: ps.name.clone(),
                group,
                n: point.n,
                b: point.b,
                m: point.m,
                x,
                statistic: ps.statistic,
                summary,
                refs: cmp,
            });
        };
        let group: Vec<(String, f64)> =
            point.grid.iter().filter(|(k, _)| *k != plan.x_variable).cloned().collect();
        match ps.statistic {
            Statistic::MaxGap => emit(point.x, group, block.iter().map(|o| o.max_gap).collect()),
            Statistic::FinalGap => {
                emit(point.x, group, block.iter().map(|o| o.final_gap).collect())
            }
            Statistic::RunningMaxGap => {
                let len = block.iter().map(|o| o.trajectory.len()).min().unwrap_or(0);
                let running: Vec<Vec<f64>> = block
                    .iter()
                    .map(|o| {
                        o.trajectory[..len]
                            .iter()
                            .scan(f64::NEG_INFINITY, |mx, &g| {
                                *mx = mx.max(g);
                                Some(*mx)
                            })
                            .collect()
                    })
                    .collect();
                for j in 0..len {
                    emit(
                        (j + 1) as f64,
                        point.grid.clone(),
                        running.iter().map(|r| r[j]).collect(),
                    );
                }
            }
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let config_dir =
        exp.path().parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let statistic = plan.series.first().map(|s| s.statistic).unwrap_or_default();
    let meta = Metadata {
        item: exp.id().to_string(),
        title: exp.title().to_string(),
        config_path: exp.path().display().to_string(),
        config_sha256: exp.sha256().to_string(),
        seed,
        seed_derivation_version: SEED_DERIVATION_VERSION,
        seed_scheme: "derive_seed(seed, [hash_str(item), point, run])".to_string(),
        crate_version: env!("CARGO_PKG_VERSION").to_string(),
        git_revision: git_revision(config_dir),
        engine: {
            let mut names: Vec<&str> = plan
                .points
                .iter()
                .map(|p| ballast_core::resolve_engine(&p.spec).map_or("bins", |e| e.name()))
                .collect();
            names.sort_unstable();
            names.dedup();
            names.join("+")
        },
        quick: opts.quick,
        threads,
        runs,
        points: plan.points.len(),
        wall_time_s: (wall * 1000.0).round() / 1000.0,
        balls_simulated: balls,
        rounding: ROUNDING,
        references: refs.iter().map(|r| (r.label.clone(), r.file.clone())).collect(),
        command: opts
            .command
            .clone()
            .unwrap_or_else(|| std::env::args().collect::<Vec<_>>().join(" ")),
    };
    Ok(ItemResult {
        meta,
        rows,
        series: plan.series.iter().map(|s| s.name.clone()).collect(),
        ref_labels: refs.iter().map(|r| r.label.clone()).collect(),
        notes: exp.raw.notes.clone(),
        layout: exp.raw.report.layout,
        x_label: exp.raw.x.label.clone().unwrap_or_else(|| plan.x_variable.clone()),
        y_label: exp.raw.y_label.clone().unwrap_or_else(|| statistic.describe().to_string()),
    })
}
