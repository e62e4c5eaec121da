//! `kind = "graph"`: graphical processes on topologies of `ballast-graph`, and the off-line
//! d-choice optimum.
//!
//! - Graphical series: a topology (`graph`) and a process (`two_choice` on edges,
//!   `one_plus_beta` on edges, `one_choice` on vertices); parameters `n`, `m`, optionally `b`
//!   (batch size) or `observe_every` (sequential observation points). The topology is a
//!   family of the registry `ballast_graph::TOPOLOGIES` with its typed parameters, written as
//!   the shorthand (`graph = "torus:2"`, positional values in declaration order, or
//!   `"torus:dim=2"`; `{param}` placeholders such as `"gnp:{p}:connected"`) or as a table
//!   (`graph = { kind = "torus", dim = 2 }`, numbers may be formulas over the point). Series
//!   options: `tie_break`, `weights` (the core's weight laws), `also` (further statistics of
//!   the same runs) and `potentials` (rows `<series> [<potential>]` of their values at the
//!   end). Statistics: `final_gap`, `max_gap` (largest gap over the observation points),
//!   `max_load`, `samples_per_ball`, each a mean over runs. The graph of point `p` is built
//!   once from `derive_seed(seed, [hash_str(id), p, GRAPH_STREAM])` (`id` the item's, or its
//!   `seed_item`, as for the unit seeds) and shared by its runs;
//!   its spectral gap λ₂ (normalised Laplacian; closed form for the structured families,
//!   power iteration otherwise) is reported in a table of the report.
//! - `statistic = "offline_optimum"` / `"greedy_max_load"`: no graph; parameters `n`, `m`,
//!   `d`. Each run samples `m` balls with `d` uniform choices, computes the exact minimum max
//!   load (max-flow, verified with its certificate) and the on-line Greedy\[d\] max load on
//!   the same choices. Closed form `theory = "offline_predicted"`: the smallest ℓ with
//!   m/n below the ℓ-orientability threshold c*(d, ℓ).

use ballast_core::registry::ParamError;
use ballast_core::rng::hash_str;
use ballast_core::{derive_seed, sim_rng, RunSpec, TieBreak};
use ballast_graph::offline::{offline_optimum, predicted_optimum, Choices};
use ballast_graph::{
    find_topology, parse_topology, GraphKind, GraphOptions, PowerIteration, Topology, GRAPH_STREAM,
};
use ballast_potential::{PotentialSpec, Potentials};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

use super::{Driver, ItemKind, KPoint, Kind, KindSeries, Problem, RowCtx, Statistic};
use crate::config::{resolve_process, resolve_weights, table_params, RawProcess};
use crate::numbers::num;
use crate::stats::summarize;
use crate::{Error, ROUNDING};

/// `kind = "graph"`: graphical balls-into-bins and the off-line optimum.
pub(super) struct Graph;

/// The statistics of a graphical series (the main one and its `also`): the graph kind's
/// without the off-line ones.
fn graphical() -> Vec<Statistic> {
    Statistic::of_kind(Kind::Graph).iter().copied().filter(|&m| !offline(m)).collect()
}

impl ItemKind for Graph {
    fn kind(&self) -> Kind {
        Kind::Graph
    }

    fn params(&self) -> &'static [&'static str] {
        &["n", "m", "b", "observe_every", "d", "p", "c"]
    }

    fn validate(&self, s: &KindSeries, m: Statistic, p: &KPoint) -> Result<(), Problem> {
        validate(s, m, p)
    }

    fn run(&self, d: &mut Driver<'_>) -> Result<(), Error> {
        run(d)
    }

    fn series_fields(&self) -> &'static [&'static str] {
        &["graph", "potentials", "also", "tie_break", "weights"]
    }

    fn takes_seed_item(&self) -> bool {
        // The topologies derive from the seed item too.
        true
    }

    fn key_extra(&self, s: &KindSeries) -> String {
        // Runs store a `Unit`; the series options a graphical run depends on.
        format!(
            " | graph units v2 {:?} {:?} {:?}",
            s.tie_break,
            s.weights.as_ref().map(|w| &w.0),
            s.potentials
        )
    }
}

fn offline(m: Statistic) -> bool {
    matches!(m, Statistic::OfflineOptimum | Statistic::GreedyMaxLoad)
}

/// A problem about the series field `field` (its value).
fn at(field: &[&str], key: bool, message: impl std::fmt::Display) -> Problem {
    let message = message.to_string();
    Problem { field: field.iter().map(|f| (*f).to_owned()).collect(), key, message }
}

fn process(s: &KindSeries, p: &KPoint) -> Result<ballast_core::ProcessSpec, Problem> {
    let v = s.process.clone().ok_or("`process` is required for graphical series")?;
    let raw = RawProcess::deserialize(v)
        .map_err(|e| at(&["process"], false, format!("`process`: {}", e.message())))?;
    resolve_process(&raw, &p.vars(), "`process`").map(|(_, spec)| spec).map_err(|(param, msg)| {
        match param {
            Some(param) => at(&["process", &param], true, msg),
            None => at(&["process"], false, msg),
        }
    })
}

/// The series' tie rule.
fn tie_break(s: &KindSeries) -> Result<TieBreak, Problem> {
    let Some(t) = &s.tie_break else { return Ok(TieBreak::Random) };
    TieBreak::from_name(t).map_err(|e| {
        let hint = ballast_core::registry::did_you_mean(t, TieBreak::ALL.iter().map(|(n, _)| *n));
        at(&["tie_break"], false, format!("`tie_break`: {e}{hint}"))
    })
}

fn spec(s: &KindSeries, p: &KPoint, n: u64) -> Result<RunSpec, Problem> {
    let mut spec = RunSpec::new(process(s, p)?, n, p.count("m")?);
    if p.get("b").is_some() {
        spec = spec.batched(p.count("b")?);
    }
    if p.get("observe_every").is_some() {
        spec.observe_every = Some(p.count("observe_every")?);
    }
    spec.tie_break = tie_break(s)?;
    spec.weights = resolve_weights(s.weights.as_ref(), "`weights`").map_err(|(param, msg)| {
        let param = param.unwrap_or_else(|| "weights".into());
        let field: Vec<&str> = param.split('.').collect();
        at(&field, field.len() > 1, msg)
    })?;
    spec.validate().map_err(|e| e.to_string())?;
    ballast_core::registry::check_run(&spec).map_err(|e| e.message)?;
    Ok(spec)
}

/// A topology refused by the registry, at the `graph` field (the parameter's key in a table).
fn topology_problem(e: ParamError, table: bool) -> Problem {
    let msg = format!("`graph`: {e}");
    match (table, e.param) {
        (true, Some(param)) => at(&["graph", &param], true, msg),
        _ => at(&["graph"], false, msg),
    }
}

/// The series' topology at point `p`: a shorthand (placeholders filled) or a table, through
/// the topology registry.
fn topology(s: &KindSeries, p: &KPoint) -> Result<GraphKind, Problem> {
    match &s.graph {
        None => Err("`graph` is required for graphical series".into()),
        Some(toml::Value::String(text)) => {
            let (def, given) =
                parse_topology(&p.fill(text)).map_err(|e| topology_problem(e, false))?;
            def.build(&given).map_err(|e| topology_problem(e, false))
        }
        Some(toml::Value::Table(table)) => {
            let kind = match table.get("kind") {
                Some(toml::Value::String(k)) => k.as_str(),
                _ => {
                    let names: Vec<&str> =
                        ballast_graph::TOPOLOGIES.iter().map(|t| t.name).collect();
                    let msg = format!(
                        "`graph`: the topology table needs `kind` (a string), one of {}",
                        names.join(", ")
                    );
                    return Err(at(&["graph"], false, msg));
                }
            };
            let def = find_topology(kind)
                .map_err(|e| at(&["graph", "kind"], false, format!("`graph`: {e}")))?;
            let given = table_params(&def.list(), table, &p.vars(), "`graph`").map_err(
                |(param, msg)| match param {
                    Some(param) => at(&["graph", &param], true, msg),
                    None => at(&["graph"], false, msg),
                },
            )?;
            def.build(&given).map_err(|e| topology_problem(e, true))
        }
        Some(other) => Err(at(
            &["graph"],
            false,
            format!(
                "`graph` = {other}: expected a topology, a shorthand such as \"torus:2\" or a \
                 table such as {{ kind = \"torus\", dim = 2 }}"
            ),
        )),
    }
}

/// The topology as the report's table shows it: the shorthand as written (placeholders
/// filled), or the family's shorthand for a table.
fn topology_label(s: &KindSeries, p: &KPoint, kind: &GraphKind) -> String {
    match &s.graph {
        Some(toml::Value::String(text)) => p.fill(text),
        _ => kind.to_string(),
    }
}

/// The series' further statistics.
fn also(s: &KindSeries, m: Statistic) -> Result<Vec<Statistic>, Problem> {
    let mut out: Vec<Statistic> = Vec::new();
    for name in s.also.iter().flatten() {
        let a = Statistic::from_name_in(name, &graphical())
            .map_err(|e| at(&["also"], false, format!("`also`: {e}")))?;
        if a == m || out.contains(&a) {
            let msg = format!("`also` lists `{name}` twice (the series' statistic counts)");
            return Err(at(&["also"], false, msg));
        }
        out.push(a);
    }
    Ok(out)
}

/// The series' potentials at point `p` (placeholders filled).
fn potentials(s: &KindSeries, p: &KPoint) -> Result<Vec<PotentialSpec>, Problem> {
    let Some(list) = &s.potentials else { return Ok(Vec::new()) };
    if list.is_empty() {
        let msg = "`potentials` is empty: name at least one or leave it out".to_owned();
        return Err(at(&["potentials"], false, msg));
    }
    let mut out: Vec<PotentialSpec> = Vec::new();
    for text in list {
        let filled = p.fill(text);
        let spec = PotentialSpec::parse(&filled)
            .map_err(|e| at(&["potentials"], false, format!("`potentials`: \"{filled}\": {e}")))?;
        if out.contains(&spec) {
            return Err(at(&["potentials"], false, format!("`potentials` lists {spec} twice")));
        }
        out.push(spec);
    }
    Ok(out)
}

/// Checks one point without simulating (graphs are not built here).
fn validate(s: &KindSeries, m: Statistic, p: &KPoint) -> Result<(), Problem> {
    let n = p.count("n")?;
    if offline(m) {
        let given = [
            ("graph", s.graph.is_some()),
            ("process", s.process.is_some()),
            ("also", s.also.is_some()),
            ("potentials", s.potentials.is_some()),
            ("tie_break", s.tie_break.is_some()),
            ("weights", s.weights.is_some()),
        ];
        if let Some((field, _)) = given.iter().find(|(_, g)| *g) {
            let msg = format!(
                "`{field}` applies to graphical series; `{}` draws d uniform choices per ball",
                m.name()
            );
            return Err(at(&[field], true, msg));
        }
        let (mm, d) = (p.count("m")?, p.count("d")?);
        if n == 0 || d < 2 || mm == 0 {
            return Err(format!(
                "off-line optimum needs n >= 1, m >= 1, d >= 2 (n {n}, m {mm}, d {d})"
            )
            .into());
        }
        return Ok(());
    }
    also(s, m)?;
    let n_vertices = usize::try_from(n).map_err(|_| format!("n = {n}: too large for a graph"))?;
    let kind = topology(s, p)?;
    kind.check(Some(n_vertices)).map_err(|e| at(&["graph"], false, format!("`graph`: {e}")))?;
    if let GraphKind::File { path, options } = &kind {
        check_graph_file(s, path, options, n_vertices)?;
    }
    ballast_graph::check_graph_spec(&spec(s, p, n)?).map_err(|e| e.to_string())?;
    potentials(s, p)?;
    Ok(())
}

/// The edge-list file of a series' `graph`, read and parsed at validation (once per path
/// and options: the series' [`super::GraphFiles`] keeps the outcome) so that a missing,
/// special, oversized or malformed file, or one whose vertex count is not the point's `n`,
/// is a config error at the key naming the file, before anything runs.
fn check_graph_file(
    s: &KindSeries,
    path: &std::path::Path,
    options: &ballast_graph::io::EdgeListOptions,
    n: usize,
) -> Result<(), Problem> {
    let checked = {
        let mut seen = s.graph_files.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        seen.entry((path.to_owned(), *options))
            .or_insert_with(|| {
                ballast_graph::io::check_edge_list(path, options).map_err(|e| e.to_string())
            })
            .clone()
    };
    let field: &[&str] = if matches!(s.graph, Some(toml::Value::Table(_))) {
        &["graph", "path"]
    } else {
        &["graph"]
    };
    match checked {
        Err(e) => Err(at(field, false, format!("`graph`: {e}"))),
        Ok(v) if v != n => Err(at(
            field,
            false,
            format!(
                "`graph`: n = {n} but graph file `{}` has {v} vertices (n of a file graph is \
                 its largest vertex id + 1)",
                ballast_core::input::shown(path)
            ),
        )),
        Ok(_) => Ok(()),
    }
}

/// What one run records (the checkpoints' layout, `graph units v2`): the off-line value or
/// the graphical statistics, the balls placed and the final potentials.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Unit {
    /// The off-line optimum or Greedy's max load; the final gap of a graphical run.
    value: f64,
    max_gap: f64,
    max_load: f64,
    samples: u64,
    balls: u64,
    potentials: Vec<f64>,
}

impl Unit {
    /// The value of statistic `m` of this run.
    fn get(&self, m: Statistic) -> f64 {
        match m {
            Statistic::MaxGap => self.max_gap,
            Statistic::MaxLoad => self.max_load,
            Statistic::SamplesPerBall if self.balls == 0 => f64::NAN,
            Statistic::SamplesPerBall => self.samples as f64 / self.balls as f64,
            _ => self.value,
        }
    }
}

/// A graphical point's topology and the graph built from it (`None` for an off-line point).
type Built = Option<(GraphKind, Topology)>;

fn run(d: &mut Driver<'_>) -> Result<(), Error> {
    let k = d.kexp;
    let runs = d.plan.runs;
    // The seed item (the item's own id unless `seed_item` names another).
    let item = hash_str(d.seed_item());
    let seed = d.kexp.cfg.seed;
    let points = d.plan.points.clone();
    // Graphs first: one per graphical point, shared by its runs.
    let graphs = build_graphs(d, &points, item, seed)?;
    let infos = graph_infos(d, &graphs)?;
    let pots = point_potentials(k, &points)?;
    let pis: Vec<usize> = (0..points.len()).collect();
    let balls = |pi: usize| points[pi].count("m").unwrap_or(0);
    let seeds: Vec<Vec<u64>> =
        pis.iter().map(|&pi| (0..runs).map(|r| d.seed(pi, r)).collect()).collect();
    let per_point: Option<Vec<Vec<Unit>>> = d.units(&pis, &balls, |pi, run| {
        let p = &points[pi];
        let s = k.cfg.series[p.series].get_ref();
        let statistic = k.statistics[p.series];
        let mut rng = sim_rng(seeds[pi][run as usize]);
        let fail = |e: String| sim_err(s, pi, run, e);
        if offline(statistic) {
            offline_unit(p, statistic, &mut rng, &fail)
        } else {
            graphical_unit(s, p, graphs[pi].as_ref(), &pots[pi], &mut rng, &fail)
        }
    })?;
    let Some(per_point) = per_point else { return Ok(()) }; // a shard: nothing to aggregate
    let outs: Vec<Unit> = per_point.into_iter().flatten().collect();
    d.balls = outs.iter().map(|o| u128::from(o.balls)).sum();
    let any_graph = graphs.iter().any(Option::is_some);
    let any_offline = k.statistics.iter().any(|m| offline(*m));
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
        let block = &outs[pi * runs as usize..(pi + 1) * runs as usize];
        let n = match &graphs[pi] {
            Some((_, g)) => g.n_vertices() as u64,
            None => p.count("n").unwrap_or(0),
        };
        if let (Some(info), Some((kind, _))) = (&infos[pi], &graphs[pi]) {
            let s = k.cfg.series[p.series].get_ref();
            topology_row(&mut table, s, p, kind, info, n, block);
        }
        point_rows(d, pi, p, block, n, &pots[pi])?;
    }
    d.extra_notes = table;
    d.graphs = infos.into_iter().flatten().collect();
    Ok(())
}

/// Builds the graph of every graphical point on the pool, each from its own seed
/// (`derive_seed(seed, [item, point, GRAPH_STREAM])`).
fn build_graphs(
    d: &Driver<'_>,
    points: &[KPoint],
    item: u64,
    seed: u64,
) -> Result<Vec<Built>, Error> {
    let k = d.kexp;
    d.pool.install(|| {
        points
            .par_iter()
            .enumerate()
            .map(|(pi, p)| {
                let s = k.cfg.series[p.series].get_ref();
                if offline(k.statistics[p.series]) {
                    return Ok(None);
                }
                let kind = topology(s, p).map_err(|e| sim_err(s, pi, 0, e.message))?;
                let n = p.count("n").map_err(|e| sim_err(s, pi, 0, e))? as usize;
                let mut rng = sim_rng(derive_seed(seed, &[item, pi as u64, GRAPH_STREAM]));
                let g =
                    kind.build(Some(n), &mut rng).map_err(|e| sim_err(s, pi, 0, e.to_string()))?;
                Ok(Some((kind, g)))
            })
            .collect::<Result<Vec<_>, Error>>()
    })
}

/// The description of every graph built (edges, degrees, spectral gap), on the pool.
fn graph_infos(
    d: &Driver<'_>,
    graphs: &[Built],
) -> Result<Vec<Option<ballast_graph::GraphInfo>>, Error> {
    d.pool
        .install(|| {
            graphs
                .par_iter()
                .map(|g| {
                    g.as_ref()
                        .map(|(_, g)| g.info(&PowerIteration::default()).map_err(|e| e.to_string()))
                        .transpose()
                })
                .collect::<Result<Vec<_>, String>>()
        })
        .map_err(|e| Error::Output {
            path: d.exp.path().to_path_buf(),
            message: format!("graph info: {e}"),
        })
}

/// The potentials each point tracks.
fn point_potentials(
    k: &super::KindExperiment,
    points: &[KPoint],
) -> Result<Vec<Vec<PotentialSpec>>, Error> {
    points
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let s = k.cfg.series[p.series].get_ref();
            potentials(s, p).map_err(|e| sim_err(s, pi, 0, e.message))
        })
        .collect()
}

/// One run of an off-line point: `m` balls with `d` choices, the exact optimum (its
/// certificate verified) or Greedy's max load on the same choices.
fn offline_unit(
    p: &KPoint,
    statistic: Statistic,
    rng: &mut ballast_core::SimRng,
    fail: &dyn Fn(String) -> Error,
) -> Result<Unit, Error> {
    let (n, m, dd) = (
        p.count("n").map_err(fail)? as usize,
        p.count("m").map_err(fail)? as usize,
        p.count("d").map_err(fail)? as usize,
    );
    let choices = Choices::sample(n, m, dd, rng).map_err(|e| fail(e.to_string()))?;
    let opt = offline_optimum(&choices);
    opt.verify(&choices).map_err(|e| fail(format!("certificate: {e}")))?;
    let v = match statistic {
        Statistic::GreedyMaxLoad => opt.greedy_max_load,
        _ => opt.max_load,
    };
    Ok(Unit {
        value: f64::from(v),
        max_gap: f64::NAN,
        max_load: f64::NAN,
        samples: 0,
        balls: m as u64,
        potentials: Vec::new(),
    })
}

/// One run of a graphical point on its graph, tracking the point's potentials if any.
fn graphical_unit(
    s: &KindSeries,
    p: &KPoint,
    graph: Option<&(GraphKind, Topology)>,
    pots: &[PotentialSpec],
    rng: &mut ballast_core::SimRng,
    fail: &dyn Fn(String) -> Error,
) -> Result<Unit, Error> {
    let (_, g) = graph.ok_or_else(|| fail("no graph".into()))?;
    let spec = spec(s, p, g.n_vertices() as u64).map_err(|e| fail(e.message))?;
    let (out, potentials) = if pots.is_empty() {
        (g.simulate(&spec, rng).map_err(|e| fail(e.to_string()))?, Vec::new())
    } else {
        let mut tracker = Potentials::new(pots).map_err(|e| fail(e.to_string()))?;
        let out = g
            .simulate_observed(&spec, &GraphOptions::default(), rng, &mut tracker)
            .map_err(|e| fail(e.to_string()))?;
        (out, tracker.values())
    };
    Ok(Unit {
        value: out.final_gap,
        max_gap: out.max_gap,
        max_load: out.max_load,
        samples: out.samples,
        balls: out.balls,
        potentials,
    })
}

/// The line of a graphical point in the topology table of the report.
fn topology_row(
    table: &mut String,
    s: &KindSeries,
    p: &KPoint,
    kind: &GraphKind,
    info: &ballast_graph::GraphInfo,
    n: u64,
    block: &[Unit],
) {
    let finals: Vec<f64> = block.iter().map(|o| o.get(Statistic::FinalGap)).collect();
    let gap = summarize(&finals, ROUNDING);
    let _ = writeln!(
        table,
        "| {} | {} | {n} | {} | {:.2} | {} | {} | {:.2} ± {:.2} |",
        crate::markdown::text(&s.name),
        crate::markdown::text(&topology_label(s, p, kind)),
        info.n_edges,
        info.degree.mean,
        sig(info.spectral_gap),
        info.spectral_method,
        gap.mean,
        gap.stderr
    );
}

/// The rows of point `pi` (with `n` vertices) from its runs: its statistic, compared with
/// the references, then (for a graphical point) its `also` statistics and its potentials.
fn point_rows(
    d: &mut Driver<'_>,
    pi: usize,
    p: &KPoint,
    block: &[Unit],
    n: u64,
    pots: &[PotentialSpec],
) -> Result<(), Error> {
    let k = d.kexp;
    let s = k.cfg.series[p.series].get_ref();
    let statistic = k.statistics[p.series];
    let of = |m: Statistic| -> Vec<f64> { block.iter().map(|o| o.get(m)).collect() };
    let summary = summarize(&of(statistic), ROUNDING);
    let b = p.get("b").map(|b| b as u64);
    let series_ref = match &s.reference {
        Some(r) if r.is_empty() => None,
        Some(r) => Some(p.fill(r)),
        None => Some(s.name.clone()),
    };
    let ctx = RowCtx { point: p, statistic, series_ref, n, b, rounds: None };
    let x = p.x;
    d.push(ctx, x, summary, &theory);
    d.last_values(of(statistic));
    if offline(statistic) {
        return Ok(());
    }
    for a in also(s, statistic).map_err(|e| sim_err(s, pi, 0, e.message))? {
        let ctx = RowCtx { point: p, statistic: a, series_ref: None, n, b, rounds: None };
        d.push_also(ctx, x, summarize(&of(a), ROUNDING), s.name.clone());
        d.last_values(of(a));
    }
    for (j, spec) in pots.iter().enumerate() {
        let values: Vec<f64> = block.iter().map(|o| o.potentials[j]).collect();
        let ctx = RowCtx {
            point: p,
            statistic: Statistic::Potential,
            series_ref: None,
            n,
            b,
            rounds: None,
        };
        d.push_also(ctx, x, summarize(&values, ROUNDING), format!("{} [{spec}]", s.name));
        d.last_values(values);
    }
    Ok(())
}

/// The graph kind's closed forms.
fn theory(name: &str, ctx: &RowCtx<'_>) -> Option<f64> {
    match (name, ctx.statistic) {
        ("offline_predicted", Statistic::OfflineOptimum) => {
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
