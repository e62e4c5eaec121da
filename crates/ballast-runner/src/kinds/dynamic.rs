//! `kind = "dynamic"`: round-based processes with departures of `ballast-dynamic`.
//!
//! - processes: the models of [`ballast_dynamic::registry`] (`ballast list` shows them,
//!   with their parameters): `{ kind = "rbb", d = 1 }` (repeated balls-into-bins: parameters `n`, `m`;
//!   uniform start), `{ kind = "leaky_bins", d = 1, arrivals = "binomial" | "poisson" |
//!   "fixed" }` (parameters `n`, `lambda`), `{ kind = "infinite_azar", d = 2 }` (parameters
//!   `n`, `m`), `{ kind = "random_deletions", beta = 0.75 }` (parameter `n`; `beta` a number
//!   or a formula in t, n), `{ kind = "insert_delete", rule = "greedy", deletion = "oldest",
//!   reinsert = true }` (parameters `n`, `m`; `workload = "schedule"` with `schedule` = a file
//!   relative to the config); `d` may be a formula.
//! - start: `start = { kind = … }` as in allocation series (the core registry's starts):
//!   the loads before the first round; rbb and infinite_azar need a start of exactly `m`
//!   balls, leaky bins take any; without it the models start as before (uniform, empty).
//! - horizon: parameters `burn_in` (default 0), `rounds` (measured rounds), `batches` (for
//!   the batch-means standard error, default 20).
//! - statistics (time averages over the measured rounds, mean over runs; the standard error
//!   is the spread of the run means, sd/√runs, from [`BETWEEN_RUNS_FROM`] runs on, and below
//!   that pools the runs' batch-means standard errors, sqrt(Σ se_r²)/runs): `avg_max_load`,
//!   `avg_fraction_empty_bins`, `avg_load_per_bin` (system load / n), `avg_system_load`,
//!   `peak_max_load` (largest max load of a measured round), `max_load_histogram` (one row
//!   per max-load value, x = the value, with the fraction of measured rounds at it),
//!   `max_load_over_shape` (time-averaged max load divided by (1/(1−λ))·ln(n/(1−λ)) for
//!   d = 1 and ln(n/(1−λ)) for d ≥ 2, leaky bins only), `avg_discrepancy` (max load −
//!   current average) and `avg_overload` (max load − highest average so far; at step
//!   resolution for the deletion models, at round ends for the round processes);
//!   `recovery_rounds` with the parameter `recovery_target` (a number or a formula): the
//!   rounds, burn-in included, until the discrepancy first is at most the target at a round
//!   end (a run that never gets there counts its simulated rounds), mean over runs.
//! - closed forms: `rbb_empty_fraction` (√(k²+1) − k, k = m/n), `leaky_mean_load` (d = 1:
//!   the single-queue mean, per bin or for the system), `leaky_max_iid` (d = 1: E[max of n
//!   independent stationary queues]).
//! - a parameter `skip` that evaluates to a non-zero number omits the point (for reduced
//!   scales that drop the costly corner of a grid); point numbering is unchanged.
//!
//! Series that differ only in their statistic share their simulations: the seed of a unit
//! uses the point index of the first series with the same process and parameters.

use std::collections::BTreeMap;

use ballast_core::sim_rng;
use ballast_dynamic::registry;
use ballast_dynamic::theory::{
    leaky_one_choice_max_iid, leaky_one_choice_mean_load, leaky_shape_one_choice,
    leaky_shape_two_choice, rbb_empty_fraction,
};
use ballast_dynamic::{simulate, DynamicSpec, Horizon, MetricSummary, RunSummary};

use super::{summary_of, Driver, ItemKind, KPoint, Kind, KindSeries, Problem, RowCtx, Statistic};
use crate::config::table_params;
use crate::stats::summarize;
use crate::{Error, ROUNDING};

/// `kind = "dynamic"`: round-based processes with departures.
pub(super) struct Dynamic;

impl ItemKind for Dynamic {
    fn kind(&self) -> Kind {
        Kind::Dynamic
    }

    fn params(&self) -> &'static [&'static str] {
        &["n", "m", "lambda", "d", "burn_in", "rounds", "batches", "skip", "recovery_target"]
    }

    fn validate(&self, s: &KindSeries, m: Statistic, p: &KPoint) -> Result<(), Problem> {
        validate(s, m, p).map_err(Problem::from)
    }

    fn run(&self, d: &mut Driver<'_>) -> Result<(), Error> {
        run(d)
    }

    fn shares_runs(&self) -> bool {
        true
    }

    fn takes_start(&self) -> bool {
        true
    }
}

/// The model of a series at a point, through the model registry of `ballast-dynamic`:
/// its table's parameters (numbers or formulas over the point) and the point's `n`, `m`,
/// `lambda`.
fn model(s: &KindSeries, p: &KPoint) -> Result<DynamicSpec, String> {
    let v = s.process.as_ref().ok_or("`process` is required")?;
    let table = v.as_table().ok_or("`process`: expected a table such as { kind = \"rbb\" }")?;
    let kind = match table.get("kind") {
        Some(toml::Value::String(k)) => k.as_str(),
        _ => {
            let names = registry::names().join(", ");
            return Err(format!("`process` needs `kind` (a string), one of {names}"));
        }
    };
    let def = registry::find(kind).map_err(|e| format!("`process`: {e}"))?;
    let vars = p.vars();
    let given =
        table_params(&def.list(), table, &vars, "`process`").map_err(|(_, m)| m.to_string())?;
    let start = s.start_state.clone();
    let given_start = start.is_some();
    def.build_from(&given, &|name: &str| p.get(name), start).map_err(|e| {
        if given_start && e.to_string().contains("`start`") {
            format!("`start`: {e}")
        } else {
            format!("`process`: {e}")
        }
    })
}

fn spec(s: &KindSeries, p: &KPoint) -> Result<(DynamicSpec, Horizon), String> {
    let spec = model(s, p)?;
    let batches = if p.get("batches").is_some() { p.count("batches")? } else { 20 };
    let h = Horizon::new(
        if p.get("burn_in").is_some() { p.count("burn_in")? } else { 0 },
        p.count("rounds")?,
    )
    .with_batches(batches as u32);
    h.validate().map_err(|e| e.to_string())?;
    Ok((spec, h))
}

fn validate(s: &KindSeries, m: Statistic, p: &KPoint) -> Result<(), String> {
    let (spec, _) = spec(s, p)?;
    if m == Statistic::MaxLoadOverShape && !matches!(spec, DynamicSpec::Leaky(_)) {
        return Err("`max_load_over_shape` is defined for leaky bins only".into());
    }
    match (m == Statistic::RecoveryRounds, p.get("recovery_target")) {
        (true, None) => Err("statistic `recovery_rounds` needs `recovery_target` (the \
                             discrepancy max load − average to reach: a number or a formula)"
            .into()),
        (false, Some(_)) => {
            Err("`recovery_target` applies to the statistic `recovery_rounds` only".into())
        }
        (true, Some(t)) if !t.is_finite() => {
            Err(format!("`recovery_target` = {t}: expected a finite number"))
        }
        _ => Ok(()),
    }
}

fn skipped(p: &KPoint) -> bool {
    p.get("skip").is_some_and(|v| v != 0.0)
}

fn run(d: &mut Driver<'_>) -> Result<(), Error> {
    let k = d.kexp;
    let runs = d.plan.runs;
    let points = d.plan.points.clone();
    // Simulation key → the first point with it.
    let mut first: BTreeMap<String, usize> = BTreeMap::new();
    let mut sim_of: Vec<Option<usize>> = Vec::new();
    let mut specs: Vec<Option<(DynamicSpec, Horizon)>> = Vec::new();
    for (pi, p) in points.iter().enumerate() {
        let s = k.cfg.series[p.series].get_ref();
        let sp = spec(s, p).map_err(|e| err(s, pi, 0, e))?;
        let key = format!("{:?} {:?} {:?}", sp.0, sp.1, p.grid);
        specs.push(Some(sp));
        if skipped(p) {
            sim_of.push(None);
            continue;
        }
        let f = *first.entry(key).or_insert(pi);
        sim_of.push(Some(f));
    }
    let sims: Vec<usize> =
        first.values().copied().collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let seeds: BTreeMap<usize, Vec<u64>> =
        sims.iter().map(|&pi| (pi, (0..runs).map(|r| d.seed(pi, r)).collect())).collect();
    // Progress in ball-rounds: rounds × n per run (the work scales with both).
    let work = |pi: usize| {
        specs[pi].as_ref().map_or(0, |(sp, h)| (h.burn_in + h.rounds).saturating_mul(sp.n() as u64))
    };
    let per_sim: Option<Vec<Vec<RunSummary>>> = d.units(&sims, &work, |pi, run| {
        let s = k.cfg.series[points[pi].series].get_ref();
        let (spec, h) = specs[pi].as_ref().ok_or_else(|| err(s, pi, run, "no spec".into()))?;
        simulate(spec, h, &mut sim_rng(seeds[&pi][run as usize]))
            .map_err(|e| err(s, pi, run, e.to_string()))
    })?;
    let Some(per_sim) = per_sim else { return Ok(()) }; // a shard: nothing to aggregate
    let outs: Vec<RunSummary> = per_sim.into_iter().flatten().collect();
    let index: BTreeMap<usize, usize> = sims.iter().enumerate().map(|(i, &pi)| (pi, i)).collect();
    d.balls = outs.iter().map(|o| u128::from(o.moved)).sum();
    let mut kinds: Vec<&str> = specs.iter().flatten().map(|(s, _)| s.kind()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    d.engine = format!("ballast-dynamic ({})", kinds.join(", "));
    for (pi, p) in points.iter().enumerate() {
        let Some(sim) = sim_of[pi] else { continue };
        let s = k.cfg.series[p.series].get_ref();
        let statistic = k.statistics[p.series];
        let i = index[&sim];
        let block = &outs[i * runs as usize..(i + 1) * runs as usize];
        let (spec, h) = specs[pi].as_ref().ok_or_else(|| err(s, pi, 0, "no spec".into()))?;
        let n = spec.n();
        let shape = shape_of(spec);
        let metric = |r: &RunSummary| match statistic {
            Statistic::AvgFractionEmptyBins => r.empty_fraction(),
            Statistic::AvgLoadPerBin => r.load_per_bin(),
            Statistic::AvgSystemLoad => r.total_load.clone(),
            Statistic::MaxLoadOverShape => r.max_load.scaled(1.0 / shape),
            Statistic::AvgDiscrepancy => r.discrepancy.clone(),
            Statistic::AvgOverload => r.overload.clone(),
            _ => r.max_load.clone(),
        };
        let ctx = RowCtx {
            point: p,
            statistic,
            series_ref: series_ref(s, p),
            n: n as u64,
            b: None,
            rounds: Some(h.rounds),
        };
        let spec2 = spec.clone();
        let closed_form = move |name: &str, ctx: &RowCtx<'_>| theory(name, ctx, &spec2);
        if statistic == Statistic::MaxLoadHistogram {
            // One row per max-load value seen in some run: the fraction of each run's
            // measured rounds at it (0 where a run never had it), mean over runs.
            for (load, fractions) in max_load_histogram(block) {
                let ctx = RowCtx { series_ref: None, ..ctx.clone() };
                d.push(ctx, f64::from(load), summarize(&fractions, ROUNDING), &closed_form);
            }
            continue;
        }
        if let Some(values) = per_run_values(statistic, block, p, h) {
            // One value per run (no time average): the plain mean and standard error.
            d.push(ctx, p.x, summarize(&values, ROUNDING), &closed_form);
            continue;
        }
        let ms: Vec<_> = block.iter().map(metric).collect();
        let r = ms.len() as f64;
        let (mean, se) = mean_and_stderr(&ms);
        let drift = ms.iter().map(|m| m.drift_z).sum::<f64>() / r;
        let lag1 = ms.iter().map(|m| m.lag1).sum::<f64>() / r;
        d.diagnostics.push((s.name.clone(), p.grid.clone(), drift, lag1));
        d.push(ctx, p.x, summary_of(mean, se, block.len()), &closed_form);
    }
    Ok(())
}

/// The theorem's shape of the time-averaged max load of a leaky process
/// (`max_load_over_shape`), NaN for the other processes.
fn shape_of(spec: &DynamicSpec) -> f64 {
    match spec {
        DynamicSpec::Leaky(c) if c.d == 1 => leaky_shape_one_choice(spec.n(), c.lambda),
        DynamicSpec::Leaky(c) => leaky_shape_two_choice(spec.n(), c.lambda),
        _ => f64::NAN,
    }
}

/// The reference series a point's rows compare with: the series' `reference` filled in at
/// the point (`""`: none), else the series' own name.
fn series_ref(s: &KindSeries, p: &KPoint) -> Option<String> {
    match &s.reference {
        Some(r) if r.is_empty() => None,
        Some(r) => Some(p.fill(r)),
        None => Some(s.name.clone()),
    }
}

/// The value of each run for the statistics that have one per run: the peak max load, and the
/// recovery rounds (a run that never recovers counts its simulated rounds); `None` for the
/// time averages.
fn per_run_values(
    statistic: Statistic,
    block: &[RunSummary],
    p: &KPoint,
    h: &Horizon,
) -> Option<Vec<f64>> {
    match statistic {
        Statistic::PeakMaxLoad => Some(block.iter().map(|r| f64::from(r.peak_max_load)).collect()),
        Statistic::RecoveryRounds => {
            let target = p.get("recovery_target").unwrap_or(f64::NAN);
            let rounds = |r: &RunSummary| r.recovery_round(target).unwrap_or(h.burn_in + h.rounds);
            Some(block.iter().map(|r| rounds(r) as f64).collect())
        }
        _ => None,
    }
}

/// Per max-load value seen in some run of `block`, the fraction of each run's measured
/// rounds with that max load, in increasing load.
fn max_load_histogram(block: &[RunSummary]) -> Vec<(u32, Vec<f64>)> {
    let mut loads: Vec<u32> =
        block.iter().flat_map(|r| r.max_load_distribution.iter().map(|&(l, _)| l)).collect();
    loads.sort_unstable();
    loads.dedup();
    loads
        .into_iter()
        .map(|load| {
            let fractions = block
                .iter()
                .map(|r| {
                    let rounds: u64 = r.max_load_distribution.iter().map(|&(_, c)| c).sum();
                    let at = r.max_load_distribution.iter().find(|&&(l, _)| l == load);
                    at.map_or(0.0, |&(_, c)| c as f64 / rounds.max(1) as f64)
                })
                .collect();
            (load, fractions)
        })
        .collect()
}

/// From this many runs on, a point's standard error is the spread of its run means
/// (independent replications: unbiased whatever the autocorrelation within a run). With fewer
/// runs that spread is itself too noisy, so the runs' batch-means standard errors are pooled
/// instead; those assume batches longer than the autocorrelation time, which the mixing
/// diagnostics check. (On rbb23's 25-run points the two estimates agree within about ±30 %,
/// point by point, with no systematic direction.)
pub(crate) const BETWEEN_RUNS_FROM: usize = 10;

/// The mean over runs of their time averages, and its standard error: the spread of the run
/// means from [`BETWEEN_RUNS_FROM`] runs on, else the pooled batch-means standard errors.
fn mean_and_stderr(ms: &[MetricSummary]) -> (f64, f64) {
    let r = ms.len() as f64;
    let mean = ms.iter().map(|m| m.mean).sum::<f64>() / r;
    let se = if ms.len() >= BETWEEN_RUNS_FROM {
        let var = ms.iter().map(|m| (m.mean - mean).powi(2)).sum::<f64>() / (r - 1.0);
        (var / r).sqrt()
    } else {
        ms.iter().map(|m| m.stderr * m.stderr).sum::<f64>().sqrt() / r
    };
    (mean, se)
}

/// The dynamic kind's closed forms.
fn theory(name: &str, ctx: &RowCtx<'_>, spec: &DynamicSpec) -> Option<f64> {
    match (name, ctx.statistic, spec) {
        ("rbb_empty_fraction", Statistic::AvgFractionEmptyBins, DynamicSpec::Rbb(c)) => {
            Some(rbb_empty_fraction(c.m as f64 / c.n as f64))
        }
        ("leaky_mean_load", Statistic::AvgLoadPerBin, DynamicSpec::Leaky(c)) if c.d == 1 => {
            Some(leaky_one_choice_mean_load(c.arrivals, c.n, c.lambda))
        }
        ("leaky_mean_load", Statistic::AvgSystemLoad, DynamicSpec::Leaky(c)) if c.d == 1 => {
            Some(c.n as f64 * leaky_one_choice_mean_load(c.arrivals, c.n, c.lambda))
        }
        ("leaky_max_iid", Statistic::AvgMaxLoad, DynamicSpec::Leaky(c)) if c.d == 1 => {
            Some(leaky_one_choice_max_iid(c.arrivals, c.n, c.lambda))
        }
        _ => None,
    }
}

fn err(s: &KindSeries, pi: usize, run: u64, e: String) -> Error {
    Error::Kind { what: format!("series `{}` point {pi} run {run}", s.name), message: e }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mean: f64, stderr: f64) -> MetricSummary {
        MetricSummary {
            mean,
            stderr,
            batch_means: vec![mean; 2],
            first_half: mean,
            second_half: mean,
            drift_z: 0.0,
            lag1: 0.0,
        }
    }

    #[test]
    fn few_runs_pool_the_batch_means_standard_errors() {
        // 3 runs: sqrt(0.3² + 0.4² + 1.2²) / 3 = 1.3 / 3.
        let ms = [run(1.0, 0.3), run(2.0, 0.4), run(6.0, 1.2)];
        let (mean, se) = mean_and_stderr(&ms);
        assert_eq!(mean, 3.0);
        assert!((se - 1.3 / 3.0).abs() < 1e-12, "{se}");
    }

    #[test]
    fn many_runs_use_the_spread_of_the_run_means() {
        // Means 0, 1, …, 9 with tiny batch-means errors: the sample variance of 0..=9 is
        // 82.5 / 9, so the standard error is sqrt(82.5 / 9 / 10), whatever the batches say.
        let ms: Vec<_> = (0..BETWEEN_RUNS_FROM).map(|i| run(i as f64, 1e-6)).collect();
        let (mean, se) = mean_and_stderr(&ms);
        assert_eq!(mean, 4.5);
        assert!((se - (82.5f64 / 9.0 / 10.0).sqrt()).abs() < 1e-12, "{se}");
    }
}
