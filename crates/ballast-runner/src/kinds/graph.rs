//! `kind = "graph"`: graphical processes on topologies of `ballast-graph`, and the off-line
//! d-choice optimum.
//!
//! - `statistic = "final_gap"`: a series names a topology (`graph = "torus:2"`, the
//!   `ballast-graph` shorthand: `complete`, `cycle`, `torus[:DIM]`, `hypercube`, `star`,
//!   `regular:D`, `gnp:P[:connected]`, `file:PATH`, with `{param}` placeholders such as
//!   `"gnp:{p}:connected"`) and a process (`two_choice` on edges, `one_plus_beta` on edges,
//!   `one_choice` on vertices); parameters `n`, `m` and optionally `b` (batch size). The graph
//!   of point `p` is built once from `derive_seed(seed, [hash_str(id), p, GRAPH_STREAM])`
//!   and shared by its runs; its spectral gap λ₂ (normalised Laplacian; closed form for the
//!   structured families, power iteration otherwise) is reported in a table of the report.
//! - `statistic = "offline_optimum"` / `"greedy_max_load"`: no graph; parameters `n`, `m`,
//!   `d`. Each run samples `m` balls with `d` uniform choices, computes the exact minimum max
//!   load (max-flow, verified with its certificate) and the on-line Greedy\[d\] max load on
//!   the same choices. Closed form `theory = "offline_predicted"`: the smallest ℓ with
//!   m/n below the ℓ-orientability threshold c*(d, ℓ).

use ballast_core::rng::hash_str;
use ballast_core::{derive_seed, sim_rng, RunSpec};
use ballast_graph::offline::{offline_optimum, predicted_optimum, Choices};
use ballast_graph::{GraphKind, PowerIteration, Topology, GRAPH_STREAM};
use rayon::prelude::*;
use serde::Deserialize;
use std::fmt::Write as _;

use super::{Driver, ItemKind, KPoint, KindSeries, Measure, RowCtx};
use crate::config::{resolve_process, RawProcess};
use crate::numbers::num;
use crate::stats::summarize;
use crate::{Error, ROUNDING};

/// `kind = "graph"`: graphical balls-into-bins and the off-line optimum.
pub(super) struct Graph;

impl ItemKind for Graph {
    fn name(&self) -> &'static str {
        "graph"
    }

    fn measures(&self) -> &'static [Measure] {
        &[Measure::FinalGap, Measure::OfflineOptimum, Measure::GreedyMaxLoad]
    }

    fn params(&self) -> &'static [&'static str] {
        &["n", "m", "b", "d", "p", "c"]
    }

    fn validate(&self, s: &KindSeries, m: Measure, p: &KPoint) -> Result<(), String> {
        validate(s, m, p)
    }

    fn run(&self, d: &mut Driver<'_>) -> Result<(), Error> {
        run(d)
    }
}

fn offline(m: Measure) -> bool {
    matches!(m, Measure::OfflineOptimum | Measure::GreedyMaxLoad)
}

fn process(s: &KindSeries, p: &KPoint) -> Result<ballast_core::ProcessSpec, String> {
    let v = s.process.clone().ok_or("`process` is required for graphical series")?;
    let raw = RawProcess::deserialize(v).map_err(|e| format!("`process`: {}", e.message()))?;
    resolve_process(&raw, &p.vars(), "`process`").map(|(_, spec)| spec).map_err(|(_, msg)| msg)
}

fn spec(s: &KindSeries, p: &KPoint, n: u64) -> Result<RunSpec, String> {
    let mut spec = RunSpec::new(process(s, p)?, n, p.count("m")?);
    if p.get("b").is_some() {
        spec = spec.batched(p.count("b")?);
    }
    spec.validate().map_err(|e| e.to_string())?;
    ballast_core::registry::check_run(&spec).map_err(|e| e.message)?;
    Ok(spec)
}

fn topology(s: &KindSeries, p: &KPoint) -> Result<GraphKind, String> {
    let g = s.graph.as_deref().ok_or("`graph` is required for graphical series")?;
    p.fill(g).parse::<GraphKind>().map_err(|e| format!("`graph`: {e}"))
}

/// Checks one point without simulating (graphs are not built here).
fn validate(s: &KindSeries, m: Measure, p: &KPoint) -> Result<(), String> {
    let n = p.count("n")?;
    if offline(m) {
        let (mm, d) = (p.count("m")?, p.count("d")?);
        if n == 0 || d < 2 || mm == 0 {
            return Err(format!(
                "off-line optimum needs n >= 1, m >= 1, d >= 2 (n {n}, m {mm}, d {d})"
            ));
        }
        return Ok(());
    }
    let n_vertices = usize::try_from(n).map_err(|_| format!("n = {n}: too large for a graph"))?;
    topology(s, p)?.check(Some(n_vertices)).map_err(|e| format!("`graph`: {e}"))?;
    ballast_graph::check_graph_spec(&spec(s, p, n)?).map_err(|e| e.to_string())
}

fn run(d: &mut Driver<'_>) -> Result<(), Error> {
    let k = d.kexp;
    let runs = d.plan.runs;
    let item = hash_str(d.exp.id());
    let seed = d.kexp.cfg.seed;
    let points = d.plan.points.clone();
    // Graphs first: one per graphical point, shared by its runs.
    let graphs: Vec<Option<Topology>> = d.pool.install(|| {
        points
            .par_iter()
            .enumerate()
            .map(|(pi, p)| {
                let s = k.cfg.series[p.series].get_ref();
                if offline(k.measures[p.series]) {
                    return Ok(None);
                }
                let kind = topology(s, p).map_err(|e| sim_err(s, pi, 0, e))?;
                let n = p.count("n").map_err(|e| sim_err(s, pi, 0, e))? as usize;
                let mut rng = sim_rng(derive_seed(seed, &[item, pi as u64, GRAPH_STREAM]));
                kind.build(Some(n), &mut rng)
                    .map(Some)
                    .map_err(|e| sim_err(s, pi, 0, e.to_string()))
            })
            .collect::<Result<Vec<_>, Error>>()
    })?;
    let infos: Vec<Option<ballast_graph::GraphInfo>> = d
        .pool
        .install(|| {
            graphs
                .par_iter()
                .map(|g| {
                    g.as_ref()
                        .map(|g| g.info(&PowerIteration::default()).map_err(|e| e.to_string()))
                        .transpose()
                })
                .collect::<Result<Vec<_>, String>>()
        })
        .map_err(|e| Error::Output {
            path: d.exp.path().to_path_buf(),
            message: format!("graph info: {e}"),
        })?;
    let pis: Vec<usize> = (0..points.len()).collect();
    let balls = |pi: usize| points[pi].count("m").unwrap_or(0);
    let seeds: Vec<Vec<u64>> =
        pis.iter().map(|&pi| (0..runs).map(|r| d.seed(pi, r)).collect()).collect();
    let per_point: Option<Vec<Vec<(f64, u64)>>> = d.units(&pis, &balls, |pi, run| {
        let unit_seed = seeds[pi][run as usize];
        let p = &points[pi];
        let s = k.cfg.series[p.series].get_ref();
        let measure = k.measures[p.series];
        let mut rng = sim_rng(unit_seed);
        let fail = |e: String| sim_err(s, pi, run, e);
        if offline(measure) {
            let (n, m, dd) = (
                p.count("n").map_err(fail)? as usize,
                p.count("m").map_err(fail)? as usize,
                p.count("d").map_err(fail)? as usize,
            );
            let choices = Choices::sample(n, m, dd, &mut rng).map_err(|e| fail(e.to_string()))?;
            let opt = offline_optimum(&choices);
            opt.verify(&choices).map_err(|e| fail(format!("certificate: {e}")))?;
            let v = match measure {
                Measure::GreedyMaxLoad => opt.greedy_max_load,
                _ => opt.max_load,
            };
            Ok((f64::from(v), m as u64))
        } else {
            let g = graphs[pi].as_ref().ok_or_else(|| fail("no graph".into()))?;
            let spec = spec(s, p, g.n_vertices() as u64).map_err(fail)?;
            let out = g.simulate(&spec, &mut rng).map_err(|e| fail(e.to_string()))?;
            Ok((out.final_gap, out.balls))
        }
    })?;
    let Some(per_point) = per_point else { return Ok(()) }; // a shard: nothing to aggregate
    let outs: Vec<(f64, u64)> = per_point.into_iter().flatten().collect();
    d.balls = outs.iter().map(|o| u128::from(o.1)).sum();
    let any_graph = graphs.iter().any(Option::is_some);
    let any_offline = k.measures.iter().any(|m| offline(*m));
    d.engine = match (any_graph, any_offline) {
        (true, true) => "graph bins + offline max-flow",
        (true, false) => "graph bins (ballast-graph)",
        _ => "offline max-flow (ballast-graph)",
    }
    .to_string();
    let mut table = String::new();
    if any_graph {
        let _ = writeln!(
            table,
            "### Topologies: spectral gap λ₂ of the normalised Laplacian\n\n| series | topology | n | edges | mean degree | λ₂ | λ₂ method | gap (mean ± se) |\n|---|---|---|---|---|---|---|---|"
        );
    }
    for (pi, p) in points.iter().enumerate() {
        let s = k.cfg.series[p.series].get_ref();
        let measure = k.measures[p.series];
        let values: Vec<f64> =
            outs[pi * runs as usize..(pi + 1) * runs as usize].iter().map(|o| o.0).collect();
        let summary = summarize(&values, ROUNDING);
        let n = match &graphs[pi] {
            Some(g) => g.n_vertices() as u64,
            None => p.count("n").unwrap_or(0),
        };
        if let Some(info) = &infos[pi] {
            let _ = writeln!(
                table,
                "| {} | {} | {n} | {} | {:.2} | {} | {} | {:.2} ± {:.2} |",
                s.name,
                p.fill(s.graph.as_deref().unwrap_or("")),
                info.n_edges,
                info.degree.mean,
                sig(info.spectral_gap),
                info.spectral_method,
                summary.mean,
                summary.stderr
            );
        }
        let b = p.get("b").map(|b| b as u64);
        let series_ref = match &s.reference {
            Some(r) if r.is_empty() => None,
            Some(r) => Some(p.fill(r)),
            None => Some(s.name.clone()),
        };
        let ctx = RowCtx { point: p, measure, series_ref, n, b, rounds: None };
        let x = p.x;
        d.push(ctx, x, summary, &theory);
    }
    d.extra_notes = table;
    Ok(())
}

/// The graph kind's closed forms.
fn theory(name: &str, ctx: &RowCtx<'_>) -> Option<f64> {
    match (name, ctx.measure) {
        ("offline_predicted", Measure::OfflineOptimum) => {
            let p = ctx.point;
            let c = p.get("m")? / p.get("n")?;
            predicted_optimum(c, p.count("d").ok()? as u32).ok().flatten().map(f64::from)
        }
        _ => None,
    }
}

fn sim_err(s: &KindSeries, pi: usize, run: u64, e: String) -> Error {
    Error::Kind { what: format!("series `{}` point {pi} run {run}", s.name), message: e }
}

/// Four significant digits.
fn sig(x: f64) -> String {
    if x != 0.0 && x.abs() < 0.01 {
        format!("{x:.3e}")
    } else {
        num((x * 1e4).round() / 1e4)
    }
}
