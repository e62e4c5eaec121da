//! `kind = "potential"`: potential functions of `ballast-potential` tracked along allocation
//! runs of the core bin engine.
//!
//! - a series gives an allocation `process` (as in allocation configs), a `potential` as
//!   spec text with `{param}` placeholders (`"hyperbolic:alpha={alpha}"`, `"quadratic"`, …)
//!   and parameters `n`, `m`, optionally `b` (batch size), `alpha`, `beta`.
//! - instead of `potential`, `potentials = ["hyperbolic:alpha=0.1", "quadratic", …]` tracks
//!   several potentials along the same runs (one tracker, so one simulation per run): each
//!   gives its own row group, named `<series> [<potential>]` (the canonical spec text, e.g.
//!   `Two-Choice [hyperbolic:alpha=0.1]`), in list order.
//! - `burn_in` (balls, default 0, below `m`): samples taken before this many balls are
//!   dropped (the tracker still follows every ball), so `drift_per_ball` can be measured near
//!   stationarity rather than on the climb from empty bins.
//! - `statistic = "potential"`: the potential at every observation point (batch ends when
//!   batched; every `sample_every` balls when sequential, default n), mean over runs; x =
//!   balls / n (the config's `x.variable` is `t`).
//! - `statistic = "drift_per_ball"`: the potential sampled after every ball (sequential) or
//!   at batch ends (batched); the change between consecutive samples binned by the level at
//!   the earlier one (`bins_per_decade` bins per factor 10, default 100), pooled over runs in
//!   run order; value = mean change per sample ± its standard error (x = the level bin's
//!   geometric midpoint; the config's `x.variable` is `level`). Level bins with fewer than
//!   `min_samples` (default 100) changes are left out.
//!
//! Runs use the bin engine (the observers need per-bin loads).

use ballast_core::{sim_rng, simulate_observed, Engine, RunSpec};
use ballast_potential::{Drift, PotentialSpec, Recorder, Sampling};
use rayon::prelude::*;
use serde::Deserialize;

use super::{summary_of, Driver, ItemKind, KPoint, Kind, KindSeries, Problem, RowCtx, Statistic};
use crate::config::{resolve_process, RawProcess};
use crate::stats::summarize;
use crate::{Error, ROUNDING};

/// `kind = "potential"`: potential functions along allocation runs.
pub(super) struct Potential;

impl ItemKind for Potential {
    fn kind(&self) -> Kind {
        Kind::Potential
    }

    fn params(&self) -> &'static [&'static str] {
        &[
            "n",
            "m",
            "b",
            "alpha",
            "beta",
            "sample_every",
            "bins_per_decade",
            "min_samples",
            "burn_in",
        ]
    }

    fn validate(&self, s: &KindSeries, m: Statistic, p: &KPoint) -> Result<(), Problem> {
        validate(s, m, p).map_err(Problem::from)
    }

    fn series_fields(&self) -> &'static [&'static str] {
        &["potential", "potentials"]
    }

    fn run(&self, d: &mut Driver<'_>) -> Result<(), Error> {
        run(d)
    }

    fn checkpointed(&self) -> bool {
        false
    }

    fn time_axis(&self, statistic: Statistic) -> bool {
        matches!(statistic, Statistic::Potential | Statistic::DriftPerBall)
    }
}

/// What one point runs: the allocation, the tracked potentials, when to sample, and the
/// burn-in (balls).
struct Setup {
    spec: RunSpec,
    pots: Vec<PotentialSpec>,
    sampling: Sampling,
    burn_in: u64,
}

/// The potentials' spec texts of series `s` (`potential` or `potentials`, exactly one).
fn potential_texts(s: &KindSeries) -> Result<&[String], String> {
    match (&s.potential, &s.potentials) {
        (Some(one), None) => Ok(std::slice::from_ref(one)),
        (None, Some(list)) if !list.is_empty() => Ok(list),
        (None, Some(_)) => Err("`potentials` is empty: list at least one potential".into()),
        (None, None) => Err("`potential` (or a list `potentials`) is required".into()),
        (Some(_), Some(_)) => Err("give either `potential` or `potentials`, not both".into()),
    }
}

/// The row-group names of series `s`: its name for a single `potential`; one
/// `<name> [<potential>]` per entry of `potentials` (placeholders filled at point `p`).
fn group_names(s: &KindSeries, p: &KPoint) -> Vec<String> {
    match (&s.potentials, potential_texts(s)) {
        (Some(_), Ok(texts)) => texts
            .iter()
            .map(|t| {
                let t = p.fill(t);
                let canon = PotentialSpec::parse(&t).map_or(t, |spec| spec.to_string());
                format!("{} [{canon}]", s.name)
            })
            .collect(),
        _ => vec![s.name.clone()],
    }
}

fn setup(s: &KindSeries, m: Statistic, p: &KPoint) -> Result<Setup, String> {
    let v = s.process.clone().ok_or("`process` is required")?;
    let raw = RawProcess::deserialize(v).map_err(|e| format!("`process`: {}", e.message()))?;
    let (_, process) =
        resolve_process(&raw, &p.vars(), "`process`").map_err(|(_, msg)| msg.to_string())?;
    let n = p.count("n")?;
    let mut spec = RunSpec::new(process, n, p.count("m")?).engine(Engine::Bins);
    let batched = p.get("b").is_some();
    if batched {
        spec = spec.batched(p.count("b")?);
    }
    spec.validate().map_err(|e| e.to_string())?;
    ballast_core::registry::check_run(&spec).map_err(|e| e.message)?;
    let field = if s.potentials.is_some() { "potentials" } else { "potential" };
    let mut pots = Vec::new();
    for text in potential_texts(s)? {
        let text = p.fill(text);
        let pot = PotentialSpec::parse(&text).map_err(|e| format!("`{field}` {text:?}: {e}"))?;
        if pots.contains(&pot) {
            return Err(format!("`potentials` lists {pot} twice"));
        }
        pots.push(pot);
    }
    let burn_in = if p.get("burn_in").is_some() { p.count("burn_in")? } else { 0 };
    if burn_in >= spec.m {
        return Err(format!(
            "`burn_in` = {burn_in} leaves no samples: it must be below m = {}",
            spec.m
        ));
    }
    let sampling = match (m, batched) {
        (_, true) => Sampling::Observations,
        (Statistic::DriftPerBall, false) => Sampling::Every(1),
        (_, false) => Sampling::Every(if p.get("sample_every").is_some() {
            p.count("sample_every")?
        } else {
            n
        }),
    };
    sampling.validate().map_err(|e| e.to_string())?;
    Ok(Setup { spec, pots, sampling, burn_in })
}

fn validate(s: &KindSeries, m: Statistic, p: &KPoint) -> Result<(), String> {
    setup(s, m, p).map(|_| ())
}

/// One run's output: the sampled series (ball, one value per potential) or the drift
/// statistics.
enum Out {
    Series(Vec<(u64, Vec<f64>)>),
    Drift(Box<Drift>),
}

fn run(d: &mut Driver<'_>) -> Result<(), Error> {
    let k = d.kexp;
    let runs = d.plan.runs;
    let points = d.plan.points.clone();
    let units: Vec<(usize, u64)> =
        (0..points.len()).flat_map(|pi| (0..runs).map(move |r| (pi, r))).collect();
    let seeds: Vec<u64> = units.iter().map(|&(pi, r)| d.seed(pi, r)).collect();
    let outs: Vec<Out> = d.pool.install(|| {
        units
            .par_iter()
            .zip(&seeds)
            .map(|(&(pi, run), &seed)| simulate_unit(k, &points[pi], pi, run, seed))
            .collect::<Result<Vec<_>, Error>>()
    })?;
    d.engine = "bins (ballast-potential observers)".to_string();
    d.balls = points.iter().map(|p| u128::from(p.count("m").unwrap_or(0)) * u128::from(runs)).sum();
    // Row groups: a series with `potentials = [...]` becomes one group per potential.
    let mut names: Vec<Vec<String>> = vec![Vec::new(); k.cfg.series.len()];
    for p in &points {
        if names[p.series].is_empty() {
            names[p.series] = group_names(k.cfg.series[p.series].get_ref(), p);
        }
    }
    d.series_names = k
        .cfg
        .series
        .iter()
        .zip(&names)
        .flat_map(|(s, g)| if g.is_empty() { vec![s.get_ref().name.clone()] } else { g.clone() })
        .collect();
    for (pi, p) in points.iter().enumerate() {
        let s = k.cfg.series[p.series].get_ref();
        let rows = PointRows {
            point: p,
            series: s,
            statistic: k.statistics[p.series],
            n: p.count("n").unwrap_or(1),
            b: p.get("b").map(|b| b as u64),
            groups: &names[p.series],
        };
        let block = &outs[pi * runs as usize..(pi + 1) * runs as usize];
        match rows.statistic {
            Statistic::DriftPerBall => rows.drift(d, block),
            _ => rows.series(d, block),
        }
    }
    Ok(())
}

/// Run `run` of point `p` (index `pi`) from its seed: the sampled potentials or, for
/// `drift_per_ball`, the drift statistics.
fn simulate_unit(
    k: &super::KindExperiment,
    p: &KPoint,
    pi: usize,
    run: u64,
    seed: u64,
) -> Result<Out, Error> {
    let s = k.cfg.series[p.series].get_ref();
    let statistic = k.statistics[p.series];
    let fail = |e: String| Error::Kind {
        what: format!("series `{}` point {pi} run {run}", s.name),
        message: e,
    };
    let Setup { spec, pots, sampling, burn_in } = setup(s, statistic, p).map_err(fail)?;
    let mut rec =
        Recorder::new(&pots, sampling).map_err(|e| fail(e.to_string()))?.with_burn_in(burn_in);
    rec = if statistic == Statistic::DriftPerBall {
        let bpd = if p.get("bins_per_decade").is_some() {
            p.count("bins_per_decade").map_err(fail)? as u32
        } else {
            100
        };
        rec.with_drift(bpd).map_err(|e| fail(e.to_string()))?
    } else {
        rec.with_series()
    };
    simulate_observed(&spec, &mut sim_rng(seed), &mut rec).map_err(|e| fail(e.to_string()))?;
    let (_, series, drift) = rec.into_parts();
    Ok(match (series, drift) {
        (_, Some(dr)) => Out::Drift(Box::new(dr)),
        (Some(se), None) => {
            Out::Series((0..se.len()).map(|t| (se.row(t).0, se.row(t).1.to_vec())).collect())
        }
        (None, None) => Out::Series(Vec::new()),
    })
}

/// One point whose rows are being pushed.
struct PointRows<'a> {
    point: &'a KPoint,
    series: &'a KindSeries,
    statistic: Statistic,
    n: u64,
    b: Option<u64>,
    /// The row groups of the point's series (one per potential; empty: the series' name).
    groups: &'a [String],
}

impl PointRows<'_> {
    fn ctx(&self) -> RowCtx<'_> {
        RowCtx {
            point: self.point,
            statistic: self.statistic,
            series_ref: Some(self.series.name.clone()),
            n: self.n,
            b: self.b,
            rounds: None,
        }
    }

    /// Renames the rows pushed since `from` to potential `j`'s group (several potentials).
    fn rename(&self, d: &mut Driver<'_>, from: usize, j: usize) {
        if self.series.potentials.is_some() {
            for row in &mut d.rows[from..] {
                row.series.clone_from(&self.groups[j]);
            }
        }
    }

    /// `drift_per_ball`: the drift statistics of all runs merged, one row per level bin with
    /// enough samples (`min_samples`, default 100) for each potential.
    fn drift(&self, d: &mut Driver<'_>, block: &[Out]) {
        let p = self.point;
        let mut all: Option<Drift> = None;
        for o in block {
            if let Out::Drift(dr) = o {
                match &mut all {
                    Some(a) => a.merge(dr),
                    None => all = Some((**dr).clone()),
                }
            }
        }
        let min = if p.get("min_samples").is_some() {
            p.count("min_samples").unwrap_or(100)
        } else {
            100
        };
        let Some(all) = all else { return };
        let rows = all.rows();
        for (j, spec) in all.specs().iter().enumerate() {
            let from = d.rows.len();
            for row in rows.iter().filter(|r| r.potential == *spec) {
                if row.samples < min || row.level_lo <= 0.0 {
                    continue;
                }
                let x = (row.level_lo * row.level_hi).sqrt();
                let sum = summary_of(row.mean_change, row.stderr, row.samples as usize);
                d.push(self.ctx(), x, sum, &|_, _| None);
            }
            self.rename(d, from, j);
        }
    }

    /// The sampled series: for each potential, one row per sampling point (mean over runs),
    /// at x = balls / n.
    fn series(&self, d: &mut Driver<'_>, block: &[Out]) {
        let series: Vec<&Vec<(u64, Vec<f64>)>> = block
            .iter()
            .filter_map(|o| match o {
                Out::Series(v) => Some(v),
                Out::Drift(_) => None,
            })
            .collect();
        let len = series.iter().map(|v| v.len()).min().unwrap_or(0);
        let pots = series.iter().flat_map(|v| v.first()).map(|r| r.1.len()).max();
        for j in 0..pots.unwrap_or(0) {
            let from = d.rows.len();
            for t in 0..len {
                let ball = series[0][t].0;
                let values: Vec<f64> = series.iter().map(|v| v[t].1[j]).collect();
                let x = ball as f64 / self.n as f64;
                d.push(self.ctx(), x, summarize(&values, ROUNDING), &|_, _| None);
            }
            self.rename(d, from, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::{run_experiment, Experiment, ItemResult, RunOptions};

    const BASE: &str = r#"
kind = "potential"
title = "t"
seed = 5
runs = 3
x = { variable = "t" }
grid = { n = [50] }
[point]
m = "40 * n"
sample_every = "5 * n"
"#;

    fn run(series: &str) -> Result<ItemResult, String> {
        let src = format!("{BASE}{series}");
        let exp = Experiment::parse("t/x", Path::new("x.toml"), &src).map_err(|e| e.to_string())?;
        let mut opts = RunOptions::new(Path::new("reference"));
        opts.progress = false;
        opts.threads = 1;
        run_experiment(&exp, &opts).map_err(|e| e.to_string())
    }

    fn series(name: &str, potential: &str, extra: &str) -> String {
        format!(
            "[[series]]\nname = \"{name}\"\nprocess = {{ kind = \"two_choice\" }}\n{potential}\n\
             statistic = \"potential\"\n{extra}\n"
        )
    }

    #[test]
    fn a_list_of_potentials_gives_one_row_group_each_from_the_same_runs() {
        let list = r#"potentials = ["hyperbolic:alpha={alpha}", "quadratic"]"#;
        let r = run(&series("S", list, "params = { alpha = 0.1 }")).unwrap();
        assert_eq!(r.series, ["S [hyperbolic:alpha=0.1]", "S [quadratic]"]);
        // The same seeds as single-potential series: identical values.
        for (group, single) in
            [("S [hyperbolic:alpha=0.1]", "hyperbolic:alpha=0.1"), ("S [quadratic]", "quadratic")]
        {
            let one = run(&series("S", &format!("potential = \"{single}\""), "")).unwrap();
            assert_eq!(one.series, ["S"]);
            let mine: Vec<_> = r.rows.iter().filter(|row| row.series == group).collect();
            assert_eq!(mine.len(), 8, "{group}: one row per sample");
            assert_eq!(mine.len(), one.rows.len());
            for (a, b) in mine.iter().zip(&one.rows) {
                assert_eq!((a.x, a.summary.mean), (b.x, b.summary.mean), "{group}");
            }
        }
    }

    #[test]
    fn burn_in_drops_the_early_samples() {
        let r =
            run(&series("S", "potential = \"quadratic\"", "params = { burn_in = 1000 }")).unwrap();
        let xs: Vec<f64> = r.rows.iter().map(|row| row.x).collect();
        assert_eq!(xs, [20.0, 25.0, 30.0, 35.0, 40.0]);
        let drift = "[[series]]\nname = \"D\"\nprocess = { kind = \"two_choice\" }\n\
                     potentials = [\"quadratic\", \"absolute\"]\nstatistic = \"drift_per_ball\"\n\
                     params = { burn_in = 1000, min_samples = 1 }\n";
        let r = run(drift).unwrap();
        assert_eq!(r.series, ["D [quadratic]", "D [absolute]"]);
        assert!(r.rows.iter().any(|row| row.series == "D [absolute]"));
    }

    #[test]
    fn bad_potential_lists_are_reported() {
        let cases = [
            ("potential = \"quadratic\"\npotentials = [\"absolute\"]", "", "not both"),
            ("potentials = []", "", "is empty"),
            ("", "", "is required"),
            ("potentials = [\"quadratic\", \"quadratic\"]", "", "twice"),
            ("potentials = [\"quadratic\", \"cubic\"]", "", "`potentials` \"cubic\""),
            ("potential = \"quadratic\"", "params = { burn_in = 2000 }", "below m = 2000"),
        ];
        for (pot, extra, want) in cases {
            let e = run(&series("S", pot, extra)).unwrap_err();
            assert!(e.contains(want), "{pot} {extra}: {e}");
        }
    }
}
