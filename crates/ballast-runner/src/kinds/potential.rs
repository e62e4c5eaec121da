//! `kind = "potential"`: potential functions of `ballast-potential` tracked along allocation
//! runs of the core bin engine.
//!
//! - a series gives an allocation `process` (as in allocation configs), a `potential` as
//!   spec text with `{param}` placeholders (`"hyperbolic:alpha={alpha}"`, `"quadratic"`, …)
//!   and parameters `n`, `m`, optionally `b` (batch size), `alpha`, `beta`.
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

use super::{summary_of, Driver, KPoint, KindRules, KindSeries, Measure, RowCtx};
use crate::config::{resolve_process, RawProcess};
use crate::stats::summarize;
use crate::{Error, ROUNDING};

pub(super) const RULES: KindRules = KindRules {
    measures: &[Measure::Potential, Measure::DriftPerBall],
    params: &["n", "m", "b", "alpha", "beta", "sample_every", "bins_per_decade", "min_samples"],
};

fn setup(
    s: &KindSeries,
    m: Measure,
    p: &KPoint,
) -> Result<(RunSpec, PotentialSpec, Sampling), String> {
    let v = s.process.clone().ok_or("`process` is required")?;
    let raw = RawProcess::deserialize(v).map_err(|e| format!("`process`: {}", e.message()))?;
    let process = resolve_process(&raw, &p.vars(), "`process`")?;
    let n = p.count("n")?;
    let mut spec = RunSpec::new(process, n, p.count("m")?).engine(Engine::Bins);
    let batched = p.get("b").is_some();
    if batched {
        spec = spec.batched(p.count("b")?);
    }
    spec.validate().map_err(|e| e.to_string())?;
    let text = p.fill(s.potential.as_deref().ok_or("`potential` is required")?);
    let pot = PotentialSpec::parse(&text).map_err(|e| format!("`potential` {text:?}: {e}"))?;
    let sampling = match (m, batched) {
        (_, true) => Sampling::Observations,
        (Measure::DriftPerBall, false) => Sampling::Every(1),
        (_, false) => Sampling::Every(if p.get("sample_every").is_some() {
            p.count("sample_every")?
        } else {
            n
        }),
    };
    sampling.validate().map_err(|e| e.to_string())?;
    Ok((spec, pot, sampling))
}

pub(super) fn validate(s: &KindSeries, m: Measure, p: &KPoint) -> Result<(), String> {
    setup(s, m, p).map(|_| ())
}

/// One run's output: the sampled series (ball, value) or the drift statistics.
enum Out {
    Series(Vec<(u64, f64)>),
    Drift(Box<Drift>),
}

pub(super) fn run(d: &mut Driver<'_>) -> Result<(), Error> {
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
            .map(|(&(pi, run), &seed)| {
                let p = &points[pi];
                let s = k.cfg.series[p.series].get_ref();
                let measure = k.measures[p.series];
                let fail = |e: String| Error::Kind {
                    what: format!("series `{}` point {pi} run {run}", s.name),
                    message: e,
                };
                let (spec, pot, sampling) = setup(s, measure, p).map_err(fail)?;
                let mut rec = Recorder::new(&[pot], sampling).map_err(|e| fail(e.to_string()))?;
                rec = if measure == Measure::DriftPerBall {
                    let bpd = if p.get("bins_per_decade").is_some() {
                        p.count("bins_per_decade").map_err(fail)? as u32
                    } else {
                        100
                    };
                    rec.with_drift(bpd).map_err(|e| fail(e.to_string()))?
                } else {
                    rec.with_series()
                };
                simulate_observed(&spec, &mut sim_rng(seed), &mut rec)
                    .map_err(|e| fail(e.to_string()))?;
                let (_, series, drift) = rec.into_parts();
                Ok(match (series, drift) {
                    (_, Some(dr)) => Out::Drift(Box::new(dr)),
                    (Some(se), None) => {
                        Out::Series((0..se.len()).map(|t| (se.row(t).0, se.row(t).1[0])).collect())
                    }
                    (None, None) => Out::Series(Vec::new()),
                })
            })
            .collect::<Result<Vec<_>, Error>>()
    })?;
    d.engine = "bins (ballast-potential observers)".to_string();
    d.balls = points.iter().map(|p| u128::from(p.count("m").unwrap_or(0)) * u128::from(runs)).sum();
    for (pi, p) in points.iter().enumerate() {
        let s = k.cfg.series[p.series].get_ref();
        let measure = k.measures[p.series];
        let block = &outs[pi * runs as usize..(pi + 1) * runs as usize];
        let n = p.count("n").unwrap_or(1);
        let b = p.get("b").map(|b| b as u64);
        let series_ref = Some(s.name.clone());
        match measure {
            Measure::DriftPerBall => {
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
                for row in all.map(|a| a.rows()).unwrap_or_default() {
                    if row.samples < min || row.level_lo <= 0.0 {
                        continue;
                    }
                    let x = (row.level_lo * row.level_hi).sqrt();
                    let ctx = RowCtx {
                        point: p,
                        measure,
                        series_ref: series_ref.clone(),
                        n,
                        b,
                        rounds: None,
                    };
                    let sum = summary_of(row.mean_change, row.stderr, row.samples as usize);
                    d.push(ctx, x, sum, &|_, _| None);
                }
            }
            _ => {
                let len = block
                    .iter()
                    .map(|o| match o {
                        Out::Series(v) => v.len(),
                        Out::Drift(_) => 0,
                    })
                    .min()
                    .unwrap_or(0);
                for t in 0..len {
                    let mut ball = 0;
                    let values: Vec<f64> = block
                        .iter()
                        .filter_map(|o| match o {
                            Out::Series(v) => {
                                ball = v[t].0;
                                Some(v[t].1)
                            }
                            Out::Drift(_) => None,
                        })
                        .collect();
                    let ctx = RowCtx {
                        point: p,
                        measure,
                        series_ref: series_ref.clone(),
                        n,
                        b,
                        rounds: None,
                    };
                    d.push(ctx, ball as f64 / n as f64, summarize(&values, ROUNDING), &|_, _| None);
                }
            }
        }
    }
    Ok(())
}
