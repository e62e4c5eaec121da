//! The aggregated result of one item (rows, comparisons with the references, metadata) and
//! the one comparison rule behind every z-score. Written by [`crate::output`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;

use crate::config::{ConfigFile, Layout, Sampling, Scale};
use crate::options::RunOptions;
use crate::statistic::Statistic;
use crate::stats::{Rounding, Summary};
use crate::units::ShardFile;

/// What the execution of an item gives: its aggregated result, or (with
/// [`RunOptions::shard`]) this machine's share of its units, to be merged later.
pub(crate) enum Outcome {
    Item(Box<ItemResult>),
    Shard(Box<ShardFile>),
}

impl Outcome {
    /// The result of a run without a shard (which always aggregates).
    pub fn into_item(self, path: &Path) -> Result<ItemResult, crate::Error> {
        match self {
            Self::Item(r) => Ok(*r),
            Self::Shard(_) => Err(crate::Error::Shard {
                path: path.to_path_buf(),
                message: "a run without --shard returned shard units".to_string(),
            }),
        }
    }
}

/// The rounding rule of the distributions in the outputs: gaps are rounded **up**.
pub const ROUNDING: Rounding = Rounding::Ceil;

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
    /// The series' `theory` value at this point (`None` without a `theory` formula).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theory: Option<f64>,
    /// `true` for the rows of a series' `also` statistics (no reference, not in the figure).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub also: bool,
    /// The per-run (per-sample) values the summary was taken of, in run order, as the
    /// series' rounding left them; empty where a row is not a mean over runs (distributions,
    /// rows of the other item kinds, rows read back from a CSV). Not written to the outputs
    /// (the JSON keeps its fields); front ends read it from the [`ItemResult`].
    #[serde(skip)]
    pub values: Vec<f64>,
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
    /// `git rev-parse HEAD` when the item started (with `+dirty` for uncommitted changes to
    /// tracked files outside `results/`), or `unknown`.
    pub git_revision: String,
    /// Simulation engine(s) that ran the points (`bins`, `levels`, `bins sorted-weights`, joined
    /// by `+`).
    pub engine: String,
    /// Whether the `[quick]` variant ran.
    pub quick: bool,
    /// The scale that ran: `full`, `quick` or `reduced`.
    pub scale: Scale,
    /// What the `[quick]`/`[reduced]` table changed (empty at full scale).
    pub scale_changes: String,
    /// The sampling protocol (`None`: independent runs).
    pub sampling: Option<Sampling>,
    /// Stopping rule at m balls of each series with multi-ball steps (Twinning, Packing,
    /// Tight-Packing): (series name, `truncate` or `finish`). Absent when no series has them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stopping: Vec<(String, String)>,
    /// Points whose every run came from checkpoints written before this invocation (their
    /// recorded simulation time is included in `wall_time_s`).
    pub cached_points: usize,
    /// Points whose every run came from checkpoints written in this invocation, by an item
    /// run before this one (or by this item itself), or read by an item run before this one
    /// from an earlier invocation ([`crate::RunOptions::fresh_checkpoints`]). Their
    /// simulation time (and CPU time) is counted once, in the item that simulated them or
    /// first read them. Absent when there are none (as in the metadata written before the
    /// field existed).
    #[serde(skip_serializing_if = "is_zero")]
    pub shared_points: usize,
    /// The number of shards merged into this result (absent: one machine).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shards: Option<u32>,
    /// Worker threads used.
    pub threads: usize,
    /// Runs per point.
    pub runs: u64,
    /// Points (series × grid).
    pub points: usize,
    /// Wall time of the simulations and aggregation, seconds: this invocation's time plus
    /// the recorded simulation time of the points taken from the cache (`cached_points`, not
    /// `shared_points`).
    pub wall_time_s: f64,
    /// CPU time (user + system, all threads) of this invocation, plus the recorded CPU time of
    /// the runs read from checkpoints of earlier invocations or from shard files (each run's
    /// thread CPU time), seconds: beside `wall_time_s × threads` it shows how much of the
    /// wall time the machine gave to the run. Absent only where the platform has no CPU
    /// clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_time_s: Option<f64>,
    /// Balls simulated in total.
    pub balls_simulated: u128,
    /// Rounding rule of the distributions.
    pub rounding: Rounding,
    /// Reference files (label, file).
    pub references: Vec<(String, String)>,
    /// The command that produced the outputs.
    pub command: String,
}

impl Metadata {
    /// The fields that describe how an item was executed rather than what it computed: they
    /// differ between a run on 1 thread, on 2 threads, a resumed run and a merge of shards,
    /// while every other field, the CSV, the figure and the report above its `## Run` section
    /// are byte-identical.
    pub const EXECUTION_FIELDS: &'static [&'static str] = &[
        "command",
        "threads",
        "wall_time_s",
        "cpu_time_s",
        "cached_points",
        "shared_points",
        "shards",
        "git_revision",
    ];

    /// The metadata of one execution of the item of `file`: what the config and the build
    /// say (id, path, hash, versions, revision, rounding, the command) and what the
    /// execution reports (`run`). Every item kind writes its metadata here.
    pub(crate) fn new(file: &ConfigFile, opts: &RunOptions, run: Execution) -> Self {
        Self {
            item: file.id().to_string(),
            title: run.title,
            config_path: file.path().display().to_string(),
            config_sha256: file.sha256().to_string(),
            seed: run.seed,
            seed_derivation_version: ballast_core::rng::SEED_DERIVATION_VERSION,
            seed_scheme: run.seed_scheme,
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            git_revision: run.git_revision,
            engine: run.engine,
            quick: opts.quick,
            scale: run.scale,
            scale_changes: run.scale_changes,
            sampling: run.sampling,
            stopping: run.stopping,
            cached_points: if run.shards.is_some() { 0 } else { run.cached_points },
            shared_points: if run.shards.is_some() { 0 } else { run.shared_points },
            shards: run.shards,
            threads: run.threads,
            runs: run.runs,
            points: run.points,
            wall_time_s: (run.wall_time_s * 1000.0).round() / 1000.0,
            cpu_time_s: run.cpu_time_s.map(|c| (c * 1000.0).round() / 1000.0),
            balls_simulated: run.balls_simulated,
            rounding: ROUNDING,
            references: run.references,
            command: command_of(opts),
        }
    }
}

/// For `skip_serializing_if`: a count of zero is left out.
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What one execution of an item reports for its [`Metadata`] (see the fields there).
pub(crate) struct Execution {
    pub title: String,
    pub seed: u64,
    pub seed_scheme: String,
    pub engine: String,
    pub scale: Scale,
    pub scale_changes: String,
    pub sampling: Option<Sampling>,
    pub stopping: Vec<(String, String)>,
    /// Points read whole from checkpoints written before this invocation (recorded as 0 for
    /// a merge of shards).
    pub cached_points: usize,
    /// Points read whole from checkpoints written in this invocation (0 for a merge).
    pub shared_points: usize,
    pub shards: Option<u32>,
    pub threads: usize,
    pub runs: u64,
    pub points: usize,
    /// This invocation's time plus the recorded time of the cached points, seconds.
    pub wall_time_s: f64,
    /// This invocation's CPU time plus that recorded for the stored runs, seconds (see
    /// [`Metadata::cpu_time_s`]).
    pub cpu_time_s: Option<f64>,
    /// The revision when the item started ([`Clock::git_revision`]).
    pub git_revision: String,
    pub balls_simulated: u128,
    pub references: Vec<(String, String)>,
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
    /// Legal but degenerate combinations of the config (from validation), listed in the
    /// report.
    pub warnings: Vec<String>,
    /// Report layout.
    pub layout: Layout,
    /// Mark each line's minimum in the figure and list the minima in the report.
    pub mark_minima: bool,
    /// Logarithmic x axis.
    pub x_log: bool,
    /// Logarithmic y axis.
    pub y_log: bool,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// The topologies a graph item built, one per graphical point in plan order (empty for
    /// the other kinds; not written: the report's table shows them).
    pub graphs: Vec<ballast_graph::GraphInfo>,
}

/// z of our percentage against a published one, with the pooled proportion's binomial
/// standard error for both (`None` when the pooled proportion is 0 or 1).
///
/// ```
/// let z = ballast_runner::percent_z(60.0, 100, 40.0, 100).unwrap();
/// assert!((z - 2.8284).abs() < 1e-3);
/// assert_eq!(ballast_runner::percent_z(0.0, 100, 0.0, 100), None);
/// ```
pub fn percent_z(ours: f64, runs: usize, reference: f64, ref_runs: u64) -> Option<f64> {
    let (r, rr) = (runs.max(1) as f64, ref_runs.max(1) as f64);
    let pooled = (ours / 100.0 * r + reference / 100.0 * rr) / (r + rr);
    let se = 100.0 * (pooled * (1.0 - pooled) * (1.0 / r + 1.0 / rr)).sqrt();
    (se > 0.0).then(|| (ours - reference) / se)
}

/// The output of `git <args>` run in `dir` (a fixed program with fixed arguments: nothing from
/// a config runs), `None` when git is missing or fails.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The revision of each repository this process has run an item from, read at the first
/// such item ([`revision_once`]).
static REVISIONS: Mutex<BTreeMap<PathBuf, String>> = Mutex::new(BTreeMap::new());

/// [`git_revision`] of the repository holding `dir`, read once per process and repository.
/// The code of a process does not change while it runs, so neither does the revision it
/// records: a commit made while a long invocation (`cargo xtask reproduce …`) is running
/// describes none of its later items. Outside a repository: `unknown`, as `git_revision`.
pub(crate) fn revision_once(dir: &Path) -> String {
    let Some(top) = git(dir, &["rev-parse", "--show-toplevel"]) else {
        return "unknown".to_string();
    };
    let mut seen = REVISIONS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let top = PathBuf::from(top);
    seen.entry(top.clone()).or_insert_with(|| git_revision(&top)).clone()
}

/// `git rev-parse HEAD` of the repository holding `dir`, with `+dirty` when a tracked file
/// outside `results/` differs from it; `unknown` outside a repository.
pub(crate) fn git_revision(dir: &Path) -> String {
    let run = |args: &[&str]| git(dir, args);
    match run(&["rev-parse", "HEAD"]) {
        Some(rev) if !rev.is_empty() => {
            // Committed outputs under `results/` do not change what produced a run, and
            // regenerating several items in a row rewrites them: not counted.
            let dirty = run(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ":(top)",
                ":(top,exclude)results",
            ])
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

pub(crate) fn command_of(opts: &RunOptions) -> String {
    opts.command.clone().unwrap_or_else(|| std::env::args().collect::<Vec<_>>().join(" "))
}

/// What a z-score is when both standard errors are 0 (every run gave the same value and the
/// reference carries no error of its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ZeroErrors {
    /// No z-score (the allocation items: a constant statistic there is a degenerate point,
    /// reported as such).
    Undefined,
    /// 0 when the values agree, else the difference against the rule-of-three bound
    /// sqrt(3)/runs (the exact closed forms of graph, dynamic and potential items, where a
    /// constant outcome over every instance is the normal case).
    RuleOfThree,
}

/// The one z-score of the runner: (our mean − reference) / sqrt(our stderr² + `se_ref`²),
/// with [`ZeroErrors`] deciding the case where both errors are 0. Each item kind supplies
/// `se_ref` from its model of the published numbers' uncertainty.
///
/// ```text
/// ours 10.0 ± 0.1, reference 9.8 ± 0.0  →  z = 2.0
/// ```
pub(crate) fn mean_z(ours: &Summary, reference: f64, se_ref: f64, zero: ZeroErrors) -> Option<f64> {
    let comb = (ours.stderr.powi(2) + se_ref.powi(2)).sqrt();
    let diff = ours.mean - reference;
    let z = if comb > 0.0 {
        Some(diff / comb)
    } else {
        match zero {
            ZeroErrors::Undefined => None,
            ZeroErrors::RuleOfThree if diff.abs() < 1e-12 => Some(0.0),
            ZeroErrors::RuleOfThree => Some(diff * ours.runs.max(1) as f64 / 3f64.sqrt()),
        }
    };
    z.filter(|z| z.is_finite())
}

/// When an item started: wall-clock and process CPU time, and the source revision.
pub(crate) struct Clock {
    wall: std::time::Instant,
    cpu: Option<cpu_time::ProcessTime>,
    revision: String,
}

impl Clock {
    /// Starts both clocks (the CPU clock is absent where the platform has none) and takes the
    /// revision of the repository that holds `file` as this process first read it
    /// ([`revision_once`]), not when the outputs are written: commits made while a long
    /// invocation runs do not describe what ran.
    pub(crate) fn start(file: &ConfigFile) -> Self {
        let dir =
            file.path().parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        Self {
            wall: std::time::Instant::now(),
            cpu: cpu_time::ProcessTime::try_now().ok(),
            revision: revision_once(dir),
        }
    }

    /// Seconds of wall time since [`Clock::start`].
    pub(crate) fn wall_s(&self) -> f64 {
        self.wall.elapsed().as_secs_f64()
    }

    /// Seconds of CPU time of the whole process (all threads) since [`Clock::start`].
    pub(crate) fn cpu_s(&self) -> Option<f64> {
        let start = self.cpu?;
        let now = cpu_time::ProcessTime::try_now().ok()?;
        Some(now.duration_since(start).as_secs_f64())
    }

    /// The revision the item ran at (with `+dirty`; see [`revision_once`]).
    pub(crate) fn git_revision(&self) -> String {
        self.revision.clone()
    }
}
