//! Running an experiment: (point, run) units in parallel on a local rayon pool, collected by
//! index, then aggregated sequentially and compared with the references.

use std::path::PathBuf;

use ballast_core::rng::SEED_DERIVATION_VERSION;
use ballast_core::{sim_rng, simulate_seeded};
use serde::Serialize;

use crate::config::Scale;
use crate::experiment::Experiment;
use crate::options::RunOptions;
use crate::plan::{Plan, PlanPoint};
use crate::reference::ReferenceTable;
use crate::result::{
    command_of, mean_z, percent_z, Comparison, Execution, ItemResult, Metadata, Outcome, Row,
    ZeroErrors, ROUNDING,
};
use crate::statistic::Statistic;
use crate::stats::{summarize, Rounding, Summary};
use crate::units::{run_units, Executed, PointUnits, ShardFile, UnitJob};
use crate::Error;

/// One run of an allocation point as stored (checkpoints, shard files) and aggregated: the
/// engine's outcome whole, and what the runner measured beside it.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
struct UnitOut {
    /// What the engine reported.
    out: ballast_core::RunOutcome,
    /// Balls until the gap first reached the point's recovery target (`None`: never, or no
    /// target).
    recovery: Option<u64>,
    /// The point's potentials at the end of the run, in list order.
    potentials: Vec<f64>,
    /// The point's potentials at every observation point, in list order (only when the
    /// series asks for `potential_trajectory`, else empty).
    potential_trajectories: Vec<Vec<f64>>,
    /// The histogram of the final loads (only when the series asks for a statistic of the
    /// final load vector, [`crate::final_loads`], else `None`).
    loads: Option<crate::final_loads::LoadCounts>,
}

impl UnitOut {
    /// The per-run value of a scalar statistic (the gap statistics are in [`samples`]).
    fn value(&self, statistic: Statistic, n: u64) -> f64 {
        let o = &self.out;
        let ratio = |a: u64, b: u64| if b == 0 { f64::NAN } else { a as f64 / b as f64 };
        match statistic {
            Statistic::MaxGap => o.max_gap,
            Statistic::FinalGap
            | Statistic::Distribution
            | Statistic::RunningMaxGap
            | Statistic::GapTrajectory => o.final_gap,
            Statistic::MaxLoad | Statistic::MaxLoadDistribution | Statistic::MaxTrajectory => {
                o.max_load
            }
            Statistic::MinLoad | Statistic::MinTrajectory => o.min_load,
            // W/n − min, with W/n = max − gap.
            Statistic::Underload => o.max_load - o.final_gap - o.min_load,
            // Censored runs (the gap never reached the target) count as their balls.
            Statistic::RecoveryTime => self.recovery.unwrap_or(o.balls) as f64,
            Statistic::GapOverLnN => o.final_gap / (n.max(2) as f64).ln(),
            Statistic::SamplesPerBall => ratio(o.samples, o.balls),
            Statistic::BallsPerSample => ratio(o.balls, o.samples),
            // Steps are counted by the bin engine only; elsewhere one step places one ball.
            Statistic::ProbesMean => ratio(o.samples, if o.steps > 0 { o.steps } else { o.balls }),
            Statistic::ProbesMax => o.max_samples_per_step().map_or(f64::NAN, |p| p as f64),
            Statistic::MovedPerBall => ratio(o.moved, o.balls),
            Statistic::Spread | Statistic::SpreadDistribution => o.max_load - o.min_load,
            // Rows of their own ([`potential_trajectory_rows`], [`probe_rows`]).
            Statistic::PotentialTrajectory
            | Statistic::ProbesDistribution
            | Statistic::LoadDistribution
            | Statistic::SortedLoads
            | Statistic::TopLoads
            | Statistic::BallsAbove => f64::NAN,
            // A final-load metric by its name ([`ballast_core::FinalMetrics`]); the other
            // kinds' statistics are never rows of an allocation run.
            s => ballast_core::FinalMetrics::value_of(&o.finals.values(), s.name())
                .unwrap_or(f64::NAN),
        }
    }
}

/// The engine that runs `spec`, as named in checkpoint keys and in [`Metadata::engine`]:
/// `levels`, `bins`, or `bins sorted-weights` for weighted batches simulated a batch at a
/// time ([`ballast_core::weighted`]; other values than ball by ball, so a key of its own).
/// `tracked`: the run carries an observer of single balls (a series' potentials), which keeps
/// weighted batches ball by ball.
fn engine_label(spec: &ballast_core::RunSpec, tracked: bool) -> &'static str {
    match ballast_core::resolve_engine(spec) {
        Ok(e) if e != ballast_core::Engine::Bins => e.name(),
        _ if !tracked && ballast_core::weighted::prefers_sorted(spec) => "bins sorted-weights",
        _ => "bins",
    }
}

/// The engine's part of a checkpoint key: [`engine_label`], plus the version of the random
/// stream for the engines whose values have changed since checkpoints were introduced
/// (`ballast_core::level::values_version`, `ballast_core::weighted::VALUES_VERSION`, and on
/// bins `ballast_core::process::THINNING_PAIRS_VERSION` for the thinning family, and a
/// process item's own `ProcessItem::values_version` on both), so checkpoints of older values
/// are never reused.
fn engine_key(spec: &ballast_core::RunSpec, tracked: bool) -> String {
    let label = engine_label(spec, tracked);
    let version = match label {
        "levels" => Some(ballast_core::level::values_version(spec)),
        "bins sorted-weights" => Some(ballast_core::weighted::VALUES_VERSION),
        _ => None,
    };
    let mut key = match version {
        Some(v) => format!("{label} values v{v}"),
        None => label.to_string(),
    };
    let pairs = ballast_core::process::thinning_in_pairs(spec);
    if label != "levels" && pairs {
        key.push_str(&format!(" thinning v{}", ballast_core::process::THINNING_PAIRS_VERSION));
    }
    // A process item whose draws changed names its version on every engine (`d_thinning`'s
    // 11 is the thinning version above, so its keys stay as they were).
    if let ballast_core::ProcessSpec::Custom(c) = &spec.process {
        let v = c.item().values_version();
        if v > 0 && !pairs {
            key.push_str(&format!(" item v{v}"));
        }
    }
    key
}

/// The checkpoint key of a point: SHA-256 of the fields of its run spec that the runner sets,
/// the resolved engine, the seeds and the versions. (Listed explicitly, so a new core field
/// that the runner leaves at its default does not invalidate the checkpoints.)
fn point_key(point: &PlanPoint, final_loads: bool, seeds: &[u64]) -> String {
    use sha2::Digest;
    let s = &point.spec;
    let engine = engine_key(s, !point.potentials.is_empty());
    // The stopping rule only where it is not the default and matters (multi-ball steps), so
    // existing checkpoints stay valid.
    let finish = s.stop == ballast_core::Stop::Finish && s.process.multi_ball();
    let mut stop = if finish { " stop finish" } else { "" }.to_string();
    // The start and the recovery target only where they are set, for the same reason.
    if !s.start.is_empty() {
        stop.push_str(&format!(" start {:?}", s.start));
    }
    if let Some(t) = point.recovery_target {
        stop.push_str(&format!(" recovery target {t:?}"));
    }
    // The load and potential trajectories only where they are recorded, for the same reason.
    if s.record_loads {
        stop.push_str(" loads");
    }
    if point.potential_trajectory {
        stop.push_str(" potential trajectories");
    }
    if s.record_probes {
        stop.push_str(" probes");
    }
    if final_loads {
        stop.push_str(" final loads");
    }
    // Churn and dispatchers only where set, for the same reason.
    if let Some(c) = s.churn {
        stop.push_str(&format!(" churn {c:?}"));
    }
    if let Some(d) = s.dispatchers {
        stop.push_str(&format!(" dispatchers {d:?}"));
    }
    // The sampling law only where it is not uniform, so existing checkpoints stay valid.
    let sampling = if s.sampling.is_uniform() {
        String::new()
    } else {
        format!(" sampling {}", s.sampling.fingerprint())
    };
    // The capacities likewise only where there are some.
    let sampling = if s.capacities.is_unit() {
        sampling
    } else {
        format!("{sampling} capacities {}", s.capacities.fingerprint())
    };
    let text = format!(
        "ballast-runner {} units v{} | seeds v{SEED_DERIVATION_VERSION} {seeds:?} | engine \
         {engine} | {:?} n {} m {} {:?} {:?} {:?} observe {:?} trajectory {}{stop}{sampling} | \
         potentials {:?}{}",
        env!("CARGO_PKG_VERSION"),
        crate::units::UNIT_FORMAT,
        s.process,
        s.n,
        s.m,
        s.setting,
        s.tie_break,
        s.weights,
        s.observe_every,
        s.record_trajectory,
        point.potentials.iter().map(ToString::to_string).collect::<Vec<_>>(),
        crate::finals::key_part()
    );
    format!("{:x}", sha2::Sha256::digest(text.as_bytes()))
}

/// The stopping rule of every series whose process places several balls per step, for
/// [`Metadata::stopping`] (a series' points share it).
fn stopping_rules(plan: &Plan) -> Vec<(String, String)> {
    plan.series
        .iter()
        .enumerate()
        .filter_map(|(si, series)| {
            let p = plan.points.iter().find(|p| p.series == si && p.spec.process.multi_ball())?;
            Some((series.name.clone(), p.spec.stop.name().to_string()))
        })
        .collect()
}

/// The per-sample values of one run for a statistic: one value, or one per block with
/// `sampling = { blocks }`, or the running maximum after every batch, or one per rank
/// (`top_k` of them for `top_loads`; the series' `top_k` and `above` are read from `series`).
fn samples(
    o: &UnitOut,
    statistic: Statistic,
    blocks: bool,
    n: u64,
    series: &crate::plan::PlanSeries,
) -> Vec<f64> {
    match statistic {
        Statistic::MaxTrajectory => return o.out.max_trajectory.clone(),
        Statistic::MinTrajectory => return o.out.min_trajectory.clone(),
        Statistic::SortedLoads | Statistic::TopLoads => {
            return crate::final_loads::per_rank(o.loads.as_ref(), statistic, series.top_k)
        }
        Statistic::BallsAbove => {
            let above = o.loads.as_ref().map_or(f64::NAN, |l| l.above(series.above) as f64);
            return vec![above];
        }
        _ => {}
    }
    if blocks {
        return o.out.trajectory.clone();
    }
    match statistic {
        Statistic::MaxGap => vec![o.out.max_gap],
        Statistic::FinalGap | Statistic::Distribution => vec![o.out.final_gap],
        Statistic::RunningMaxGap => running_max(&o.out.trajectory),
        Statistic::GapTrajectory => o.out.trajectory.clone(),
        other => vec![o.value(other, n)],
    }
}

/// Balls placed at observation `j` (from 0) of a run of `spec`: batch ends when batched,
/// every `observe_every` balls when sequential, the last observation at m.
fn observed_balls(spec: &ballast_core::RunSpec, j: usize) -> u64 {
    let every = match spec.setting {
        ballast_core::Setting::Batched { b } => b,
        _ => spec.observe_every.unwrap_or(spec.m),
    };
    every.max(1).saturating_mul(j as u64 + 1).min(spec.m)
}

/// The prefix maximum of a trajectory: entry j is the largest gap among observations 0..=j.
///
/// ```
/// assert_eq!(ballast_runner::running_max(&[3.0, 1.0, 4.0, 2.0]), vec![3.0, 3.0, 4.0, 4.0]);
/// ```
pub fn running_max(trajectory: &[f64]) -> Vec<f64> {
    trajectory
        .iter()
        .scan(f64::NEG_INFINITY, |mx, &g| {
            *mx = mx.max(g);
            Some(*mx)
        })
        .collect()
}

/// One row of a distribution: percent of `samples` rounded to each gap value.
#[derive(Clone, Debug, PartialEq)]
pub struct DistCell {
    /// The (rounded) gap value.
    pub gap: i64,
    /// Samples with that value.
    pub count: usize,
    /// Percent of all samples.
    pub percent: f64,
    /// Standard error of the percentage: 100·sqrt(p(1 − p)/samples).
    pub stderr: f64,
}

/// The empirical distribution of `values` rounded by `rounding`, as percentages, with one
/// cell for each value in `extra` too (so a published value we never saw shows as 0 %).
///
/// ```
/// use ballast_runner::{distribution_cells, stats::Rounding};
/// let cells = distribution_cells(&[2.5, 3.0, 3.7, 2.1], Rounding::Floor, &[4]);
/// let got: Vec<(i64, usize)> = cells.iter().map(|c| (c.gap, c.count)).collect();
/// assert_eq!(got, vec![(2, 2), (3, 2), (4, 0)]);
/// assert_eq!(cells[0].percent, 50.0);
/// ```
pub fn distribution_cells(values: &[f64], rounding: Rounding, extra: &[i64]) -> Vec<DistCell> {
    let mut counts: std::collections::BTreeMap<i64, usize> = std::collections::BTreeMap::new();
    for &v in values {
        *counts.entry(rounding.apply(v)).or_default() += 1;
    }
    for &x in extra {
        counts.entry(x).or_default();
    }
    let total = values.len().max(1) as f64;
    counts
        .into_iter()
        .map(|(gap, count)| {
            let p = count as f64 / total;
            DistCell {
                gap,
                count,
                percent: 100.0 * p,
                stderr: 100.0 * (p * (1.0 - p) / total).sqrt(),
            }
        })
        .collect()
}

/// Runs an experiment (full scale or quick) and aggregates its results. Loads the references
/// first, so a missing reference file fails before any simulation.
pub fn run_experiment(exp: &Experiment, opts: &RunOptions) -> Result<ItemResult, Error> {
    if let Some(s) = opts.shard {
        return Err(Error::Shard {
            path: exp.path().to_path_buf(),
            message: format!("shard {s} is set: run it with run_shard, then merge_shards"),
        });
    }
    run_with(exp, opts, None)?.into_item(exp.path())
}

/// The scale that `opts` selects for `exp`.
pub(crate) fn scale_of(exp: &Experiment, opts: &RunOptions) -> Scale {
    if opts.quick {
        Scale::Quick
    } else if opts.reduced && exp.has_reduced() {
        Scale::Reduced
    } else {
        Scale::Full
    }
}

/// Runs one shard of an experiment ([`RunOptions::shard`] must be set): its units only,
/// returned as a [`ShardFile`] to be written and later merged with [`merge_shards`].
pub fn run_shard(exp: &Experiment, opts: &RunOptions) -> Result<ShardFile, Error> {
    if opts.shard.is_none() {
        return Err(Error::Shard {
            path: exp.path().to_path_buf(),
            message: "run_shard needs RunOptions::shard".to_string(),
        });
    }
    match run_with(exp, opts, None)? {
        Outcome::Shard(mut f) => {
            f.item = exp.id().to_string();
            f.config_sha256 = exp.sha256().to_string();
            f.scale = scale_of(exp, opts).name().to_string();
            f.command = command_of(opts);
            Ok(*f)
        }
        Outcome::Item(_) => Err(Error::Shard {
            path: exp.path().to_path_buf(),
            message: "this item kind cannot be sharded".to_string(),
        }),
    }
}

/// Combines the shard files of an experiment (all `k` shards of one `--shard i/k` run, in any
/// order) into its result: the same rows, CSV, figure and report as a run on one machine (the
/// execution fields of the metadata, [`Metadata::EXECUTION_FIELDS`], say how it ran).
pub fn merge_shards(
    exp: &Experiment,
    opts: &RunOptions,
    shard_files: &[PathBuf],
) -> Result<ItemResult, Error> {
    let merged = crate::units::load_shards(&exp.file, scale_of(exp, opts), shard_files)?;
    let mut opts = opts.clone();
    opts.shard = None;
    opts.cache_dir = None;
    run_with(exp, &opts, Some(&merged))?.into_item(exp.path())
}

fn run_with(
    exp: &Experiment,
    opts: &RunOptions,
    merged: Option<&crate::units::Merged>,
) -> Result<Outcome, Error> {
    let mode = match (opts.shard, merged) {
        (_, Some(_)) => "merge".to_string(),
        (Some(s), None) => format!("shard {s}"),
        (None, None) => "run".to_string(),
    };
    let _item = tracing::info_span!("item", id = exp.id(), mode = %mode).entered();
    tracing::debug!(scale = scale_of(exp, opts).name(), threads = opts.threads, "item starts");
    if let Some(k) = &exp.kind {
        return crate::kinds::run(&exp.file, k, opts, merged);
    }
    let scale = scale_of(exp, opts);
    let plan: Plan = exp.plan_at(scale)?;
    for w in &plan.warnings {
        tracing::warn!("{}: {w}", exp.id());
    }
    let refs = load_references(exp, opts)?;
    let shifts: Vec<f64> = exp.raw.references.iter().map(|r| r.x_shift).collect();
    warn_unmatched_references(exp, &plan, &refs);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads)
        .build()
        .map_err(|e| Error::ThreadPool(e.to_string()))?;
    let threads = pool.current_num_threads();
    let start = crate::result::Clock::start(&exp.file);
    let job = UnitJob { opts, pool: &pool, label: exp.id(), runs: plan.runs, merged };
    let done = match execute(&job, &plan, exp.seed(), exp.seed_id())? {
        Executed::Complete(units) => units,
        Executed::Shard(f) => return Ok(Outcome::Shard(f)),
    };
    let outs = done.outs;
    let balls: u128 = outs.iter().flatten().map(|o| u128::from(o.out.balls)).sum();

    // Sequential, deterministic aggregation.
    let rows = aggregate(&plan, &outs, &refs, &shifts);
    let mut warnings = plan.warnings.clone();
    for w in censored_recoveries(&plan, &outs) {
        tracing::warn!("{}: {w}", exp.id());
        warnings.push(w);
    }
    let ran = Ran {
        scale,
        threads,
        shards: merged.map(|m| m.shards),
        cached_points: done.stored_points,
        shared_points: done.shared_points,
        cached_sim_s: done.stored_wall_s,
        cached_cpu_s: done.stored_cpu_s,
        balls,
        clock: &start,
    };
    let meta = item_metadata(exp, opts, &plan, &refs, &ran);
    Ok(Outcome::Item(Box::new(item_result(exp, &plan, meta, rows, &refs, warnings))))
}

/// The reference tables of an item, loaded from the reference directory (an error names the
/// config key that asked for the table).
fn load_references(exp: &Experiment, opts: &RunOptions) -> Result<Vec<ReferenceTable>, Error> {
    exp.raw
        .references
        .iter()
        .enumerate()
        .map(|(i, r)| {
            ReferenceTable::load(&opts.reference_dir, &r.file, &r.label)
                .map_err(|e| crate::reference::at_config_key(&exp.file, i, e))
        })
        .collect()
}

/// Warns, once per name, about a `reference = "…"` written in a series that names no series
/// of any reference table: it would give no comparison in silence.
fn warn_unmatched_references(exp: &Experiment, plan: &Plan, refs: &[ReferenceTable]) {
    if refs.is_empty() {
        return;
    }
    let mut told = std::collections::BTreeSet::new();
    for p in &plan.points {
        let written = exp.raw.series[p.series].get_ref().reference.as_deref();
        let Some(name) = plan.series[p.series].reference_at(&p.grid, p.n, p.b) else {
            continue;
        };
        if written.is_some_and(|w| !w.is_empty())
            && !refs.iter().any(|t| t.has_series(&name))
            && told.insert(name.clone())
        {
            tracing::warn!(
                "{}: series `{}`: `reference` names `{name}`, which no reference table ({}) \
                 has: no comparison for it",
                exp.id(),
                plan.series[p.series].name,
                refs.iter().map(|t| t.file.as_str()).collect::<Vec<_>>().join(", ")
            );
        }
    }
}

/// How an allocation item ran, for its metadata.
struct Ran<'a> {
    scale: Scale,
    threads: usize,
    /// Shards merged (`None`: one machine).
    shards: Option<u32>,
    /// Points, and their recorded simulation time, taken from checkpoints written before
    /// this invocation or from shard files.
    cached_points: usize,
    /// Points taken from checkpoints written in this invocation.
    shared_points: usize,
    cached_sim_s: f64,
    /// The recorded CPU time of the same points.
    cached_cpu_s: f64,
    balls: u128,
    clock: &'a crate::result::Clock,
}

/// The metadata of an allocation item: what it ran and how.
fn item_metadata(
    exp: &Experiment,
    opts: &RunOptions,
    plan: &Plan,
    refs: &[ReferenceTable],
    ran: &Ran<'_>,
) -> Metadata {
    let wall = ran.clock.wall_s();
    let id = exp.seed_id();
    let seed_scheme = if id == exp.id() {
        "derive_seed(seed, [hash_str(item), point, run])".to_string()
    } else {
        format!("derive_seed(seed, [hash_str(\"{id}\"), point, run]) (seed_item: the runs of {id})")
    };
    let mut engines: Vec<&str> =
        plan.points.iter().map(|p| engine_label(&p.spec, !p.potentials.is_empty())).collect();
    engines.sort_unstable();
    engines.dedup();
    Metadata::new(
        &exp.file,
        opts,
        Execution {
            title: exp.title().to_string(),
            seed: exp.seed(),
            seed_scheme,
            engine: engines.join("+"),
            scale: ran.scale,
            scale_changes: exp.scale_changes(ran.scale),
            sampling: plan.sampling,
            stopping: stopping_rules(plan),
            cached_points: ran.cached_points,
            shared_points: ran.shared_points,
            shards: ran.shards,
            threads: ran.threads,
            runs: plan.runs,
            points: plan.points.len(),
            wall_time_s: wall + ran.cached_sim_s,
            cpu_time_s: ran.clock.cpu_s().map(|c| c + ran.cached_cpu_s),
            git_revision: ran.clock.git_revision(),
            balls_simulated: ran.balls,
            references: refs.iter().map(|r| (r.label.clone(), r.file.clone())).collect(),
        },
    )
}

/// The result of an allocation item from its metadata, rows and warnings.
fn item_result(
    exp: &Experiment,
    plan: &Plan,
    meta: Metadata,
    rows: Vec<Row>,
    refs: &[ReferenceTable],
    warnings: Vec<String>,
) -> ItemResult {
    let frame = plan.frame(&exp.raw);
    ItemResult {
        meta,
        rows,
        series: plan.series.iter().map(|s| s.name.clone()).collect(),
        ref_labels: refs.iter().map(|r| r.label.clone()).collect(),
        notes: exp.raw.notes.clone(),
        warnings,
        layout: exp.raw.report.layout,
        mark_minima: frame.mark_minima,
        x_log: frame.x_log,
        y_log: frame.y_log,
        x_label: frame.x_label,
        y_label: frame.y_label,
        graphs: Vec::new(),
    }
}

/// One warning per point with a recovery target at which some runs never reached it
/// (censored: their `recovery_time` is their balls, so the mean is a lower bound).
fn censored_recoveries(plan: &Plan, outs: &[Vec<UnitOut>]) -> Vec<String> {
    let mut out = Vec::new();
    for (point, block) in plan.points.iter().zip(outs) {
        let Some(target) = point.recovery_target else { continue };
        let censored = block.iter().filter(|o| o.recovery.is_none()).count();
        if censored > 0 {
            let at: Vec<String> = point
                .grid
                .iter()
                .map(|(k, v)| format!("{k} = {}", crate::numbers::num(*v)))
                .collect();
            out.push(format!(
                "series `{}`{}: {censored} of {} runs never brought the gap to the recovery \
                 target {} within m = {} balls; their recovery_time counts as m, so the mean \
                 is a lower bound",
                plan.series[point.series].name,
                if at.is_empty() { String::new() } else { format!(" at {}", at.join(", ")) },
                block.len(),
                crate::numbers::num(target),
                point.spec.m
            ));
        }
    }
    out
}

/// Runs (or reads from checkpoints or shard files) the units of an allocation plan: run
/// `run` of point `pi` is `simulate_seeded` with the seed of (`seed`, `id`, `pi`, `run`).
fn execute(
    job: &UnitJob<'_>,
    plan: &Plan,
    seed: u64,
    id: &str,
) -> Result<Executed<UnitOut>, Error> {
    let runs = plan.runs;
    let points: Vec<PointUnits> = plan
        .points
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let seeds: Vec<u64> = (0..runs).map(|r| Plan::unit_seed(seed, id, pi, r)).collect();
            let loads = final_loads_of(plan, p);
            PointUnits { point: pi, key: point_key(p, loads, &seeds), balls: p.spec.m }
        })
        .collect();
    run_units(job, &points, |pi, run| {
        let point = &plan.points[pi];
        let loads = final_loads_of(plan, point);
        let PointRun { out, potentials, recovery, potential_trajectories, final_loads } =
            simulate_point(point, loads, Plan::unit_seed(seed, id, pi, run)).map_err(|source| {
                Error::Simulation {
                    what: format!(
                        "series `{}` point {pi} run {run}",
                        plan.series[point.series].name
                    ),
                    source,
                }
            })?;
        Ok(UnitOut { out, recovery, potentials, potential_trajectories, loads: final_loads })
    })
}

/// Whether the runs of `point` record their final load histogram (its series asks for a
/// statistic of the final load vector).
fn final_loads_of(plan: &Plan, point: &PlanPoint) -> bool {
    let s = &plan.series[point.series];
    crate::final_loads::wanted(s.statistic, &s.also)
}

/// What one run of a point gives besides its outcome.
struct PointRun {
    out: ballast_core::RunOutcome,
    /// The point's potentials at the end of the run.
    potentials: Vec<f64>,
    /// With a recovery target, the balls until the gap reached it.
    recovery: Option<u64>,
    /// With `potential_trajectory`, each potential at every observation point.
    potential_trajectories: Vec<Vec<f64>>,
    /// With a statistic of the final loads, their histogram.
    final_loads: Option<crate::final_loads::LoadCounts>,
}

/// One run of a point from its seed: its outcome, the final values of the point's
/// potentials (tracked along the run; the same generator and engine as without them: the
/// tracker only observes), their values at the observation points when the series asks for
/// `potential_trajectory` (a [`ballast_potential::Recorder`] around the same tracker), with
/// `loads` the histogram of the final loads (one more observer beside them) and, with a
/// recovery target, the balls until the gap reached it. Validation refuses potentials, or
/// the final loads, and a recovery target together (each is its own observer).
fn simulate_point(
    point: &PlanPoint,
    loads: bool,
    seed: u64,
) -> Result<PointRun, ballast_core::Error> {
    use crate::final_loads::{Both, FinalLoads};
    let plain = |out| PointRun {
        out,
        potentials: Vec::new(),
        recovery: None,
        potential_trajectories: Vec::new(),
        final_loads: None,
    };
    if let Some(target) = point.recovery_target {
        let (out, recovery) =
            ballast_core::recovery::simulate_recovery(&point.spec, &mut sim_rng(seed), target)?;
        return Ok(PointRun { recovery, ..plain(out) });
    }
    let mut finals = FinalLoads::new(point.spec.m, loads);
    if point.potentials.is_empty() {
        if !loads {
            return Ok(plain(simulate_seeded(&point.spec, seed)?));
        }
        let out = ballast_core::simulate_observed(&point.spec, &mut sim_rng(seed), &mut finals)?;
        return Ok(PointRun { final_loads: finals.counts, ..plain(out) });
    }
    let invalid = |e: ballast_potential::Error| {
        ballast_core::Error::invalid("potentials", e, "potentials that validate")
    };
    if point.potential_trajectory {
        let sampling = ballast_potential::Sampling::Observations;
        let mut rec = ballast_potential::Recorder::new(&point.potentials, sampling)
            .map_err(invalid)?
            .with_series();
        let out = ballast_core::simulate_observed(
            &point.spec,
            &mut sim_rng(seed),
            &mut Both(&mut rec, &mut finals),
        )?;
        let potentials = rec.potentials().values();
        let potential_trajectories = match rec.series() {
            Some(s) => (0..potentials.len()).map(|k| s.column(k).collect()).collect(),
            None => Vec::new(),
        };
        return Ok(PointRun {
            potentials,
            potential_trajectories,
            final_loads: finals.counts,
            ..plain(out)
        });
    }
    let mut tracker = ballast_potential::Potentials::new(&point.potentials).map_err(invalid)?;
    let out = ballast_core::simulate_observed(
        &point.spec,
        &mut sim_rng(seed),
        &mut Both(&mut tracker, &mut finals),
    )?;
    Ok(PointRun { potentials: tracker.values(), final_loads: finals.counts, ..plain(out) })
}

/// The rows of an item from its units' outcomes, sequentially and deterministically: per
/// point the series' statistic (compared with the references) and its `also` statistics.
fn aggregate(
    plan: &Plan,
    outs: &[Vec<UnitOut>],
    refs: &[ReferenceTable],
    shifts: &[f64],
) -> Vec<Row> {
    let blocks = plan.sampling.is_some();
    let mut rows = Vec::new();
    for (pi, point) in plan.points.iter().enumerate() {
        let ps = &plan.series[point.series];
        let block = &outs[pi];
        let refname = ps.reference_at(&point.grid, point.n, point.b);
        let group: Vec<(String, f64)> =
            point.grid.iter().filter(|(k, _)| *k != plan.x_variable).cloned().collect();
        // The series' own statistic first (compared with the references), then its `also`
        // statistics of the same runs (no reference).
        let stats =
            std::iter::once((ps.statistic, true)).chain(ps.also.iter().map(|&a| (a, false)));
        for (statistic, with_refs) in stats {
            if statistic == Statistic::PotentialTrajectory {
                rows.extend(potential_trajectory_rows(point, &ps.name, block, !with_refs));
                continue;
            }
            if statistic == Statistic::ProbesDistribution {
                rows.extend(probe_rows(point, &ps.name, block, !with_refs));
                continue;
            }
            let stat = StatRows {
                point,
                series: ps,
                refs,
                shifts,
                statistic,
                refname: if with_refs { refname.clone() } else { None },
                rounding: ps.round.unwrap_or(ROUNDING),
                also: !with_refs,
            };
            if statistic == Statistic::LoadDistribution {
                rows.extend(stat.load_distribution_rows(block));
                continue;
            }
            rows.extend(stat.rows(stat.per_run(block, blocks), &group));
        }
        rows.extend(potential_rows(point, &ps.name, block, &group, refs.len()));
    }
    rows
}

/// The entry of reference table `t` for series `name` at `point` and `x` (none without a
/// name).
fn ref_point<'t>(
    t: &'t ReferenceTable,
    name: Option<&str>,
    point: &PlanPoint,
    x: f64,
) -> Option<&'t crate::RefPoint> {
    t.get_at(name?, point.n, point.b, x)
}

/// One statistic of one point whose rows are being built: the series' own statistic
/// (compared with the references) or one of its `also` statistics (no reference).
struct StatRows<'a> {
    point: &'a PlanPoint,
    series: &'a crate::plan::PlanSeries,
    refs: &'a [ReferenceTable],
    /// Per reference table, its `x_shift`.
    shifts: &'a [f64],
    statistic: Statistic,
    /// The reference series to compare with (`None`: no comparison).
    refname: Option<String>,
    /// How the values are summarised.
    rounding: Rounding,
    /// Whether it is an `also` statistic.
    also: bool,
}

impl StatRows<'_> {
    /// Per run, the statistic's values; gap statistics are rounded as the series says, the
    /// other statistics are kept as they are (max loads are integers already).
    fn per_run(&self, block: &[UnitOut], blocks: bool) -> Vec<Vec<f64>> {
        let round = |v: f64| match self.series.round {
            Some(r) => r.apply(v) as f64,
            None => v,
        };
        let gap_stat = matches!(
            self.statistic,
            Statistic::MaxGap
                | Statistic::FinalGap
                | Statistic::RunningMaxGap
                | Statistic::GapTrajectory
                | Statistic::Distribution
        );
        block
            .iter()
            .map(|o| {
                let v = samples(o, self.statistic, blocks, self.point.n, self.series);
                if gap_stat {
                    v.into_iter().map(round).collect()
                } else {
                    v
                }
            })
            .collect()
    }

    /// The statistic's rows from its per-run values: one per observation point, per running
    /// maximum, per distribution cell, or a single row at the point's x.
    fn rows(&self, per_run: Vec<Vec<f64>>, group: &[(String, f64)]) -> Vec<Row> {
        let point = self.point;
        let column = |j: usize| per_run.iter().map(|r| r[j]).collect::<Vec<f64>>();
        let len = per_run.iter().map(Vec::len).min().unwrap_or(0);
        match self.statistic {
            s if s.at_observations() => (0..len)
                .map(|j| {
                    let x = observed_balls(&point.spec, j) as f64 / point.n as f64;
                    self.row(x, point.grid.clone(), column(j))
                })
                .collect(),
            Statistic::RunningMaxGap | Statistic::SortedLoads | Statistic::TopLoads => {
                (0..len).map(|j| self.row((j + 1) as f64, point.grid.clone(), column(j))).collect()
            }
            Statistic::Distribution
            | Statistic::MaxLoadDistribution
            | Statistic::SpreadDistribution => self.distribution_rows(per_run.concat()),
            _ => vec![self.row(point.x, group.to_vec(), per_run.concat())],
        }
    }

    /// Rows of `load_distribution`: per offset x = load − W/n seen in some run, the
    /// fraction of each run's bins at it (compared with the references at x).
    fn load_distribution_rows(&self, block: &[UnitOut]) -> Vec<Row> {
        let runs: Vec<&crate::final_loads::LoadCounts> =
            block.iter().filter_map(|o| o.loads.as_ref()).collect();
        crate::final_loads::distribution(&runs)
            .into_iter()
            .map(|(x, values)| self.row(x, self.point.grid.clone(), values))
            .collect()
    }

    /// The row of `values` at `x`, compared with every reference table.
    fn row(&self, x: f64, group: Vec<(String, f64)>, values: Vec<f64>) -> Row {
        let summary = summarize(&values, self.rounding);
        let cmp = self
            .refs
            .iter()
            .enumerate()
            .map(|(ri, t)| {
                let r = ref_point(t, self.refname.as_deref(), self.point, x - self.shifts[ri])?;
                let se_ref = summary.sd / (r.runs.max(1) as f64).sqrt();
                let z = mean_z(&summary, r.value, se_ref, ZeroErrors::Undefined);
                Some(Comparison { value: r.value, runs: r.runs, stderr: se_ref, z })
            })
            .collect();
        Row {
            series: self.series.name.clone(),
            group,
            n: self.point.n,
            b: self.point.b,
            m: self.point.m,
            x,
            statistic: self.statistic,
            summary,
            refs: cmp,
            theory: self.point.theory,
            also: self.also,
            values,
        }
    }

    /// One row per cell of the distribution of `values` (the pooled values of all runs),
    /// over the cells seen and the support of the reference distributions.
    fn distribution_rows(&self, values: Vec<f64>) -> Vec<Row> {
        let mut extra: Vec<i64> = Vec::new();
        for (ri, t) in self.refs.iter().enumerate() {
            if let Some(name) = self.refname.as_deref() {
                extra.extend(
                    t.xs(name, self.point.n, self.point.b)
                        .iter()
                        .map(|x| (x + self.shifts[ri]).round() as i64),
                );
            }
        }
        let summary_all = summarize(&values, self.rounding);
        distribution_cells(&values, self.rounding, &extra)
            .into_iter()
            .map(|cell| self.cell_row(&cell, values.len(), &summary_all))
            .collect()
    }

    /// The row of one distribution cell, of `samples` pooled values.
    fn cell_row(&self, cell: &DistCell, samples: usize, summary_all: &Summary) -> Row {
        let point = self.point;
        let x = cell.gap as f64;
        let cmp = self
            .refs
            .iter()
            .enumerate()
            .map(|(ri, t)| self.cell_comparison(t, x - self.shifts[ri], cell, samples))
            .collect();
        Row {
            series: self.series.name.clone(),
            group: point.grid.clone(),
            n: point.n,
            b: point.b,
            m: point.m,
            x,
            statistic: self.statistic,
            summary: Summary {
                mean: cell.percent,
                stderr: cell.stderr,
                sd: 100.0 * (cell.percent / 100.0 * (1.0 - cell.percent / 100.0)).sqrt(),
                runs: samples,
                rounding: self.rounding,
                distribution: summary_all.distribution.clone(),
            },
            refs: cmp,
            theory: point.theory,
            also: self.also,
            values: Vec::new(),
        }
    }

    /// A distribution cell compared with reference table `t` at its (shifted) `x`.
    fn cell_comparison(
        &self,
        t: &ReferenceTable,
        x: f64,
        cell: &DistCell,
        samples: usize,
    ) -> Option<Comparison> {
        let (point, refname) = (self.point, &self.refname);
        let r = ref_point(t, refname.as_deref(), point, x);
        // A published distribution lists its support only: elsewhere 0 %.
        let (value, runs) = match (r, refname) {
            (Some(r), _) => (r.value, r.runs),
            (None, Some(name)) if !t.xs(name, point.n, point.b).is_empty() => {
                (0.0, ref_runs(t, name, point.n, point.b))
            }
            _ => return None,
        };
        let p = value / 100.0;
        Some(Comparison {
            value,
            runs,
            stderr: 100.0 * (p * (1.0 - p) / runs.max(1) as f64).sqrt(),
            z: percent_z(cell.percent, samples, value, runs),
        })
    }
}

/// One row per tracked potential of a point: its value at the end of the runs, named
/// `<series> [<potential>]` (no reference: an `also` row).
fn potential_rows(
    point: &PlanPoint,
    series: &str,
    block: &[UnitOut],
    group: &[(String, f64)],
    references: usize,
) -> Vec<Row> {
    point
        .potentials
        .iter()
        .enumerate()
        .map(|(k, spec)| {
            let values: Vec<f64> = block.iter().map(|o| o.potentials[k]).collect();
            Row {
                series: format!("{series} [{spec}]"),
                group: group.to_vec(),
                n: point.n,
                b: point.b,
                m: point.m,
                x: point.x,
                statistic: Statistic::Potential,
                summary: summarize(&values, ROUNDING),
                refs: (0..references).map(|_| None).collect(),
                theory: None,
                also: true,
                values,
            }
        })
        .collect()
}

/// Rows of `potential_trajectory`: each potential of a point at every observation point,
/// mean over runs, series `<series> [<potential>]`, x = balls / n (no reference).
fn potential_trajectory_rows(
    point: &PlanPoint,
    series: &str,
    block: &[UnitOut],
    also: bool,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for (k, spec) in point.potentials.iter().enumerate() {
        let len = block.iter().map(|o| o.potential_trajectories[k].len()).min().unwrap_or(0);
        for j in 0..len {
            let values: Vec<f64> = block.iter().map(|o| o.potential_trajectories[k][j]).collect();
            rows.push(Row {
                series: format!("{series} [{spec}]"),
                group: point.grid.clone(),
                n: point.n,
                b: point.b,
                m: point.m,
                x: observed_balls(&point.spec, j) as f64 / point.n as f64,
                statistic: Statistic::PotentialTrajectory,
                summary: summarize(&values, ROUNDING),
                refs: Vec::new(),
                theory: None,
                also,
                values,
            });
        }
    }
    rows
}

/// Rows of `probes_distribution`: per probe count seen in some run (x), the fraction of
/// each run's steps that drew that many probes, mean over runs (no reference).
fn probe_rows(point: &PlanPoint, series: &str, block: &[UnitOut], also: bool) -> Vec<Row> {
    let len = block.iter().map(|o| o.out.samples_per_step.len()).max().unwrap_or(0);
    (0..len)
        .filter(|&k| block.iter().any(|o| o.out.samples_per_step.get(k).is_some_and(|&c| c > 0)))
        .map(|k| {
            let values: Vec<f64> = block
                .iter()
                .map(|o| {
                    let steps: u64 = o.out.samples_per_step.iter().sum();
                    o.out.samples_per_step.get(k).map_or(0.0, |&c| c as f64 / steps.max(1) as f64)
                })
                .collect();
            Row {
                series: series.to_string(),
                group: point.grid.clone(),
                n: point.n,
                b: point.b,
                m: point.m,
                x: k as f64,
                statistic: Statistic::ProbesDistribution,
                summary: summarize(&values, ROUNDING),
                refs: Vec::new(),
                theory: None,
                also,
                values,
            }
        })
        .collect()
}

/// Runs behind a published distribution at (series, n, b): the `runs` of any of its rows.
fn ref_runs(t: &ReferenceTable, name: &str, n: u64, b: Option<u64>) -> u64 {
    t.xs(name, n, b).first().and_then(|&x| t.get_at(name, n, b, x)).map_or(1, |r| r.runs)
}

#[cfg(test)]
mod tests {
    use super::{engine_key, engine_label};
    use crate::result::{git_revision, revision_once};

    #[test]
    fn git_revision_ignores_outputs_under_results_and_is_read_once_per_repository() {
        let dir = std::env::temp_dir().join(format!("ballast-git-rev-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("results")).expect("temp dir");
        std::fs::create_dir_all(dir.join("configs")).expect("temp dir");
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"])
                .args(args)
                .current_dir(&dir)
                .output()
                .is_ok_and(|o| o.status.success());
            assert!(ok, "git {args:?}");
        };
        std::fs::write(dir.join("results/a.csv"), "1\n").expect("write");
        std::fs::write(dir.join("configs/a.toml"), "x = 1\n").expect("write");
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "c"]);
        let configs = dir.join("configs");
        let clean = git_revision(&configs);
        assert_eq!(clean.len(), 40, "{clean}");
        std::fs::write(dir.join("results/a.csv"), "2\n").expect("write");
        assert_eq!(git_revision(&configs), clean);
        // The first read of this repository in this process: clean.
        assert_eq!(revision_once(&configs), clean);
        std::fs::write(dir.join("configs/a.toml"), "x = 2\n").expect("write");
        assert_eq!(git_revision(&configs), format!("{clean}+dirty"));
        git(&["commit", "-q", "-a", "-m", "d"]);
        let later = git_revision(&configs);
        assert!(later.len() == 40 && later != clean, "{later}");
        // A commit made since does not change what this process records, from any directory
        // of the repository; outside a repository the revision is unknown.
        assert_eq!(revision_once(&configs), clean);
        assert_eq!(revision_once(&dir.join("results")), clean);
        let outside = std::env::temp_dir().join(format!("ballast-no-git-{}", std::process::id()));
        std::fs::create_dir_all(&outside).expect("temp dir");
        if git_revision(&outside) == "unknown" {
            assert_eq!(revision_once(&outside), "unknown");
        }
        let _ = std::fs::remove_dir_all(&outside);
        let _ = std::fs::remove_dir_all(&dir);
    }
    use ballast_core::{ProcessSpec, RunSpec, TieBreak, Weights};

    #[test]
    fn weighted_batches_run_a_batch_at_a_time_get_their_own_engine_label() {
        let two = |b: u64| {
            RunSpec::new(ProcessSpec::DChoice { d: 2 }, 1000, 100_000)
                .batched(b)
                .tie_break(TieBreak::Random)
        };
        let exp = Weights::Exp { mean: 1.0 };
        let from = ballast_core::weighted::SORTED_FROM * 1000;
        assert_eq!(engine_label(&two(from).weights(exp), false), "bins sorted-weights");
        // Potentials observe single balls: the weighted batches go ball by ball.
        assert_eq!(engine_label(&two(from).weights(exp), true), "bins");
        assert_eq!(engine_label(&two(from - 1).weights(exp), false), "bins");
        assert_eq!(engine_label(&two(from), false), "levels");
        assert_eq!(engine_label(&two(100), false), "bins");
        // Processes the batch-at-a-time method does not cover stay ball by ball.
        let q = RunSpec::new(ProcessSpec::Quantile { delta: 0.5 }, 1000, 100_000)
            .batched(from)
            .weights(exp);
        assert_eq!(engine_label(&q, false), "bins");
        // Keys: the bin engine's ball-by-ball values never changed, so its key has no version.
        assert_eq!(engine_key(&two(100), false), "bins");
        assert_eq!(engine_key(&two(from), false), "levels values v4");
        // Version 5 changed the sequential (1+β) and Quantile runs only.
        let beta = |s: ballast_core::Setting| {
            let mut spec = RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, 1000, 10_000)
                .engine(ballast_core::Engine::Levels);
            spec.setting = s;
            spec
        };
        assert_eq!(engine_key(&beta(ballast_core::Setting::Sequential), false), "levels values v5");
        let batched = beta(ballast_core::Setting::Batched { b: 1000 });
        assert_eq!(engine_key(&batched, false), "levels values v4");
        // Version 6 changed the sequential g-Bounded, g-Myopic and σ-Noisy-Load runs only.
        let mut noisy = RunSpec::new(ProcessSpec::GMyopic { g: 2.0 }, 1000, 10_000)
            .engine(ballast_core::Engine::Levels);
        assert_eq!(engine_key(&noisy, false), "levels values v6");
        noisy.setting = ballast_core::Setting::Batched { b: 1000 };
        assert_eq!(engine_key(&noisy, false), "levels values v4");
        // Version 8 changed them from their chunk threshold on.
        noisy.setting = ballast_core::Setting::Sequential;
        noisy.n = ballast_core::level::chunked::CHUNK_MIN_N_G_MYOPIC;
        assert_eq!(engine_key(&noisy, false), "levels values v8");
        noisy.n -= 1;
        assert_eq!(engine_key(&noisy, false), "levels values v6");
        // Version 7 changed the sequential thinning runs only.
        let mut thin = RunSpec::new(ProcessSpec::MeanThinning { strict: true }, 1000, 10_000)
            .engine(ballast_core::Engine::Levels);
        assert_eq!(engine_key(&thin, false), "levels values v7");
        thin.setting = ballast_core::Setting::Batched { b: 1000 };
        assert_eq!(engine_key(&thin, false), "levels values v4");
        assert_eq!(engine_key(&two(from).weights(exp), false), "bins sorted-weights values v2");
        // Version 11 changed the thinning family on bins, and formula_threshold and
        // d_thinning on levels, where they run through the generic rule.
        thin.engine = ballast_core::Engine::Bins;
        assert_eq!(engine_key(&thin, false), "bins thinning v11");
        thin.setting = ballast_core::Setting::Sequential;
        assert_eq!(engine_key(&thin, false), "bins thinning v11");
        let f = ballast_core::registry::find("formula_threshold")
            .unwrap()
            .build(&[("f", ballast_core::registry::ParamValue::Text("avg".into()))])
            .unwrap();
        let formula = RunSpec::new(f, 1000, 10_000).engine(ballast_core::Engine::Levels);
        assert_eq!(engine_key(&formula, false), "levels values v11");
        // d_thinning's keys did not change with the rule for items below.
        let d = ballast_core::registry::find("d_thinning")
            .unwrap()
            .build(&[("threshold", ballast_core::registry::ParamValue::Text("avg".into()))])
            .unwrap();
        let mut dt = RunSpec::new(d, 1000, 10_000).engine(ballast_core::Engine::Bins);
        assert_eq!(engine_key(&dt, false), "bins thinning v11");
        dt.engine = ballast_core::Engine::Levels;
        assert_eq!(engine_key(&dt, false), "levels values v11");
    }

    /// A process item whose draws changed (its `values_version` above 0) names the version in
    /// its keys on both engines, so that checkpoints of its older draws are not reused.
    #[test]
    fn an_item_with_a_values_version_names_it_in_its_keys() {
        use ballast_core::item::{CustomRule, CustomSpec, Decision, ProcessItem};
        use ballast_core::registry::{find, Args};
        #[derive(Debug)]
        struct Redrawn(u32);
        struct First;
        impl CustomRule for First {
            fn place(&mut self, at: &mut dyn Decision) -> usize {
                at.sample()
            }
        }
        impl ProcessItem for Redrawn {
            fn name(&self) -> &'static str {
                "redrawn"
            }
            fn rule(&self, _args: &Args) -> Box<dyn CustomRule> {
                Box::new(First)
            }
            fn levels(&self) -> Result<(), String> {
                Ok(())
            }
            fn values_version(&self) -> u32 {
                self.0
            }
        }
        static V0: Redrawn = Redrawn(0);
        static V12: Redrawn = Redrawn(12);
        let spec = |item: &'static Redrawn, engine| {
            // Any item's checked (empty) parameters will do: the key reads the item.
            let args = find("one_choice").unwrap().list().args(&[]).unwrap();
            let p = ProcessSpec::Custom(CustomSpec::new(item, args));
            RunSpec::new(p, 1000, 10_000).engine(engine)
        };
        let (bins, levels) = (ballast_core::Engine::Bins, ballast_core::Engine::Levels);
        assert_eq!(engine_key(&spec(&V0, bins), false), "bins");
        assert_eq!(engine_key(&spec(&V12, bins), false), "bins item v12");
        assert_eq!(engine_key(&spec(&V0, levels), false), "levels values v4");
        assert_eq!(engine_key(&spec(&V12, levels), false), "levels values v4 item v12");
    }
}
