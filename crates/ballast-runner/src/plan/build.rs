//! Building the plan of an allocation config at one scale, one step per function: the scale's
//! table, the grid, the engine, then per series its settings (checked once) and per grid
//! combination its point (formulas evaluated, `RunSpec` validated by the core and the
//! registry). Every problem goes to [`Problems`] with its place in the file; a series with an
//! error in its settings contributes no points, so later checks do not report consequences.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use crate::config::Located;
use ballast_core::delay::DelayMode;
use ballast_core::{Engine, RunSpec, Setting, Stop, TieBreak, Weights};

use super::{Plan, PlanPoint, PlanSeries, MAX_UNITS};
use crate::config::{
    resolve_process, resolve_stop, resolve_tie_break, resolve_weights, Problems, RawConfig,
    RawPoint, RawQuick, RawSampling, RawSeries, Sampling, Scale, SettingKind,
};
use crate::formula::Formula;
use crate::grid::Grid;
use crate::numbers::num;
use crate::problem::Msg;
use crate::statistic::Statistic;

type SFormula = Located<Formula>;

/// Grid variables the plan computes itself (or that name constants of the formulas).
const RESERVED: [&str; 5] = ["b", "batches", "m", "pi", "e"];

/// Builds the plan of `raw` at `scale`, adding every problem found to `problems`.
pub(crate) fn build_plan(raw: &RawConfig, scale: Scale, problems: &mut Problems<'_>) -> Plan {
    let q = scale_table(raw, scale);
    let sampling_sp = q.and_then(|q| q.sampling.as_ref()).or(raw.sampling.as_ref());
    check_sampling(sampling_sp, problems);
    let runs_sp = q.and_then(|q| q.runs.as_ref()).unwrap_or(&raw.runs);
    if *runs_sp.get_ref() == 0 {
        problems.at(runs_sp.span(), "invalid value 0 for `runs`: expected an integer >= 1");
    }
    let mut grid = Grid::read(&raw.grid, q.map(|q| &q.grid), scale.name(), problems);
    check_grid_names(raw, problems);
    // Validation expands every point: refuse grids too large to expand.
    grid.check_size(&raw.grid, raw.series.len(), scale.name(), problems);
    let mut plan = Plan {
        series: Vec::new(),
        points: Vec::new(),
        runs: *runs_sp.get_ref(),
        x_variable: raw.x.variable.get_ref().clone(),
        group_variables: Vec::new(),
        sampling: sampling_sp.map(|s| *s.get_ref()),
        scale,
        warnings: Vec::new(),
    };
    if !grid.ok {
        return plan;
    }
    plan.group_variables = grid.values.keys().filter(|k| **k != plan.x_variable).cloned().collect();
    let combos = grid.combinations(&plan.x_variable);
    let point = scaled_point(raw, q);
    let common = Common { engine: read_engine(raw, problems), sampling: sampling_sp, raw };
    if raw.series.is_empty() {
        // At the `series` key when the file has one (`series = []`), else the file.
        let key = [crate::config::schema::Seg::Key("series".into())];
        problems.at_path(&key, true, "no [[series]]: expected at least one");
    }
    let mut names = HashSet::new();
    for (si, s_sp) in raw.series.iter().enumerate() {
        let s = s_sp.get_ref();
        if !names.insert(s.name.clone()) {
            let ctx = format!("series `{}`", s.name);
            problems.at(s_sp.span(), Msg::in_ctx(&ctx, "duplicate name"));
        }
        plan.series.push(plan_series(s));
        if problems.skips_series(si) {
            continue;
        }
        check_reference(s_sp, &grid, &point, problems);
        let mut sp = SeriesProblems::new(problems, si, s_sp);
        let Some(forms) = SeriesForms::check(s, &point, &common, &mut sp) else { continue };
        for gvals in &combos {
            if let Some(p) = forms.point_at(gvals, &plan.x_variable, &common, &mut sp) {
                for w in p.1 {
                    if !plan.warnings.contains(&w) {
                        plan.warnings.push(w);
                    }
                }
                plan.points.push(p.0);
            }
        }
    }
    warn_log_x(raw, &mut plan);
    check_units(&plan, runs_sp, problems);
    plan
}

/// The `[quick]` or `[reduced]` table of the scale (`None` at full scale).
fn scale_table(raw: &RawConfig, scale: Scale) -> Option<&RawQuick> {
    match scale {
        Scale::Full => None,
        Scale::Quick => raw.quick.as_ref(),
        Scale::Reduced => raw.reduced.as_ref(),
    }
}

fn check_sampling(sampling: Option<&RawSampling>, problems: &mut Problems<'_>) {
    if let Some(s) = sampling {
        if s.get_ref().blocks == 0 {
            problems
                .at(s.span(), "invalid value 0 for `sampling.blocks`: expected an integer >= 1");
        }
    }
}

/// Reserved grid names, and an x variable that is not a grid variable.
fn check_grid_names(raw: &RawConfig, problems: &mut Problems<'_>) {
    for (name, v) in &raw.grid {
        if RESERVED.contains(&name.as_str()) {
            problems.at(
                v.span(),
                format!(
                    "grid variable `{name}`: reserved name (b, batches, m, pi and e are computed)"
                ),
            );
        }
    }
    let x_variable = raw.x.variable.get_ref();
    if !raw.grid.contains_key(x_variable) {
        let known: Vec<&str> = raw.grid.keys().map(String::as_str).collect();
        problems.at(
            raw.x.variable.span(),
            format!(
                "x.variable: `{x_variable}` is not a grid variable, expected one of: {}{}",
                known.join(", "),
                ballast_core::registry::did_you_mean(x_variable, known.iter().copied())
            ),
        );
    }
}

/// `[point]` with the scale table's overrides (`batches` and `m` are replaced together).
fn scaled_point(raw: &RawConfig, q: Option<&RawQuick>) -> RawPoint {
    let mut point: RawPoint = raw.point.clone();
    if let Some(q) = q {
        let qp = q.point.clone();
        point.n = qp.n.or(point.n);
        point.b = qp.b.or(point.b);
        if qp.batches.is_some() || qp.m.is_some() {
            point.batches = qp.batches;
            point.m = qp.m;
        }
    }
    point
}

/// The config's engine. One default everywhere (configs, `RunSpec`, `ballast simulate`):
/// `auto`. Every committed allocation config names its engine, so the default moves no
/// committed value.
fn read_engine(raw: &RawConfig, problems: &mut Problems<'_>) -> Engine {
    match &raw.engine {
        None => Engine::Auto,
        Some(e) => Engine::from_name(e.get_ref()).unwrap_or_else(|err| {
            let hint = ballast_core::registry::did_you_mean(
                e.get_ref(),
                Engine::ALL.iter().map(|(n, _)| *n),
            );
            problems.at(e.span(), format!("{err}{hint}"));
            Engine::Bins
        }),
    }
}

/// Whether the series' statistic or one of its `also` statistics has `property` (a
/// trajectory asked for in `also` is recorded like the series' own: recording draws nothing).
fn asks(s: &RawSeries, property: fn(Statistic) -> bool) -> bool {
    std::iter::once(&s.statistic).chain(&s.also).any(|&t| property(t))
}

fn plan_series(s: &RawSeries) -> PlanSeries {
    PlanSeries {
        name: s.name.clone(),
        statistic: s.statistic,
        also: s.also.iter().copied().filter(|a| *a != s.statistic).collect(),
        reference: match s.reference.as_deref() {
            Some("") => None,
            Some(r) => Some(r.to_string()),
            None => Some(s.name.clone()),
        },
        round: s.round,
        top_k: s.top_k.as_ref().map_or(crate::TOP_K, |k| *k.get_ref() as usize),
        above: s.above.as_ref().map_or(0, |c| *c.get_ref()),
    }
}

/// Every `{name}` of the series' `reference` must be a grid variable, `n`, or (batched) `b`.
fn check_reference(
    s_sp: &Located<RawSeries>,
    grid: &Grid,
    point: &RawPoint,
    problems: &mut Problems<'_>,
) {
    let s = s_sp.get_ref();
    let Some(r) = s.reference.as_deref() else { return };
    let sctx = format!("series `{}`", s.name);
    let batched_series = s.b.is_some() || point.b.is_some();
    let mut rest = r;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            problems.at(
                s_sp.span(),
                Msg::in_ctx(&sctx, format!("`reference` = \"{r}\": a `{{` without its `}}`")),
            );
            break;
        };
        let name = &after[..close];
        let known =
            grid.values.contains_key(name) || name == "n" || (name == "b" && batched_series);
        if !known {
            let mut names: Vec<&str> = grid.values.keys().map(String::as_str).collect();
            names.push("n");
            if batched_series {
                names.push("b");
            }
            problems.at(
                s_sp.span(),
                Msg::in_ctx(
                    &sctx,
                    format!(
                        "`reference` = \"{r}\": unknown placeholder `{{{name}}}`, expected \
                     one of: {}{}",
                        names.iter().map(|n| format!("{{{n}}}")).collect::<Vec<_>>().join(", "),
                        ballast_core::registry::did_you_mean(name, names.iter().copied())
                    ),
                ),
            );
        }
        rest = &after[close + 1..];
    }
}

/// A formula's span (none for a default made up by the plan, or a config built in memory).
fn span_of(f: Option<&SFormula>) -> Option<Range<usize>> {
    f.and_then(|f| f.span())
}

/// A non-negative integer from a formula value.
fn count(v: f64, field: &str) -> Result<u64, String> {
    crate::formula::exact_integer(v).map_err(|e| format!("the value {e}"))?;
    let r = v.round();
    if v.is_finite() && r >= 0.0 && (v - r).abs() <= 1e-9 * r.max(1.0) && r < 1.8e19 {
        Ok(r as u64)
    } else {
        Err(format!("invalid value {v} for `{field}`: expected a non-negative integer"))
    }
}

/// What every series of the config shares.
struct Common<'r> {
    engine: Engine,
    sampling: Option<&'r RawSampling>,
    raw: &'r RawConfig,
}

impl Common<'_> {
    fn sampling(&self) -> Option<Sampling> {
        self.sampling.map(|s| *s.get_ref())
    }
}

/// The problems of one series: one message per field and place, however many grid points or
/// scales show it.
struct SeriesProblems<'p, 'a> {
    problems: &'p mut Problems<'a>,
    si: usize,
    span: Option<Range<usize>>,
    /// The spans of the process parameters (the process table is buffered by serde, so its
    /// fields carry no spans of their own).
    params: HashMap<String, Range<usize>>,
    process_span: Option<Range<usize>>,
}

impl<'p, 'a> SeriesProblems<'p, 'a> {
    fn new(problems: &'p mut Problems<'a>, si: usize, s_sp: &Located<RawSeries>) -> Self {
        let params = problems.param_spans(si);
        let process_span = s_sp.get_ref().process.span();
        Self { problems, si, span: s_sp.span(), params, process_span }
    }

    /// Reports `msg` about `key` at `span` (default: the series). A formula outside the
    /// series (in `[point]`) fails the same way for every series that uses it: one message.
    fn fail(&mut self, key: &str, span: Option<Range<usize>>, msg: impl Into<Msg>) {
        let span = span.or(self.span.clone());
        let inside = span
            .as_ref()
            .zip(self.span.as_ref())
            .is_some_and(|(sp, series)| series.contains(&sp.start));
        let owner = if inside { self.si } else { usize::MAX };
        if self.problems.first_report(owner, key, &span) {
            self.problems.at(span, msg);
        }
    }

    /// Where a process parameter was written (else the process table).
    fn param_span(&self, field: &str) -> Option<Range<usize>> {
        self.params.get(field).cloned().or(self.process_span.clone())
    }

    /// A formula's value as a count, or its problem reported.
    fn count(&mut self, ctx: &str, f: &SFormula, field: &str, vars: &[(&str, f64)]) -> Option<u64> {
        match f.get_ref().eval(vars).and_then(|v| count(v, field)) {
            Ok(v) => Some(v),
            Err(e) => {
                self.fail(field, span_of(Some(f)), Msg::in_ctx(ctx, format!("`{field}`: {e}")));
                None
            }
        }
    }
}

/// A series' settings and formulas, checked once before its points are evaluated.
struct SeriesForms<'r> {
    s: &'r RawSeries,
    sctx: String,
    n: SFormula,
    b: Option<&'r SFormula>,
    batches: Option<&'r SFormula>,
    m: Option<&'r SFormula>,
    tau: Option<&'r SFormula>,
    batched: bool,
    delayed: bool,
    delay_mode: DelayMode,
    tie_break: TieBreak,
    stop: Stop,
    weights: Weights,
    /// The law the bins are sampled by (the series' `sampling`).
    bin_sampling: ballast_core::Sampling,
    /// The loads the runs start from (the series' `start`).
    start: ballast_core::Start,
    /// Warnings about the series as a whole.
    warnings: Vec<String>,
}

/// The counts of one point: `n`, `b` (batched series), `m`, `observe_every` and `tau`
/// (delayed series).
#[derive(Clone, Copy)]
struct Counts {
    n: u64,
    b: Option<u64>,
    m: u64,
    observe_every: Option<u64>,
    tau: Option<u64>,
}

impl<'r> SeriesForms<'r> {
    /// The series' settings against `[point]`; `None` (with the problem reported) when the
    /// series cannot have points.
    fn check(
        s: &'r RawSeries,
        point: &'r RawPoint,
        common: &Common<'_>,
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<Self> {
        let sctx = format!("series `{}`", s.name);
        let tie_break = resolve_tie_break(&s.tie_break, sp.problems, &sctx);
        let stop = resolve_stop(&s.stop, sp.problems, &sctx);
        let weights = match resolve_weights(s.weights.as_ref(), &sctx) {
            Ok(w) => w,
            Err((field, msg)) => {
                let field = field.unwrap_or_else(|| "weights".into());
                let span = sp.params.get(&field).or_else(|| sp.params.get("weights")).cloned();
                sp.problems.at(span, msg);
                sp.problems.skip_series(sp.si);
                return None;
            }
        };
        let dir = sp.problems.config_dir().to_path_buf();
        let bin_sampling = match crate::config::resolve_sampling(s.sampling.as_ref(), &dir, &sctx) {
            Ok(x) => x,
            Err((field, msg)) => {
                let field = field.unwrap_or_else(|| "sampling".into());
                let span = sp.params.get(&field).or_else(|| sp.params.get("sampling")).cloned();
                sp.problems.at(span, msg);
                sp.problems.skip_series(sp.si);
                return None;
            }
        };
        let start = match crate::start::resolve_start(s.start.as_ref(), &dir, &sctx) {
            Ok(st) => st,
            Err((field, msg)) => {
                let field = field.unwrap_or_else(|| "start".into());
                let span = sp.params.get(&field).or_else(|| sp.params.get("start")).cloned();
                sp.problems.at(span, msg);
                sp.problems.skip_series(sp.si);
                return None;
            }
        };
        let mut warnings = Vec::new();
        if common.sampling.is_some() && !start.is_empty() {
            // Legal, but only the first block starts from the start state.
            warnings.push(format!(
                "{sctx}: with `sampling = {{ blocks }}` only the first block starts from \
                 `start`; each later block continues from the loads the one before left"
            ));
        }
        check_recovery_and_potentials(s, &sctx, sp)?;
        let n = point.n.clone().unwrap_or_else(|| Located::unplaced(Formula::new("n")));
        let b = s.b.as_ref().or(point.b.as_ref());
        let (batches, m) = if s.batches.is_some() || s.m.is_some() {
            (s.batches.as_ref(), s.m.as_ref())
        } else {
            (point.batches.as_ref(), point.m.as_ref())
        };
        let batched = match s.setting {
            Some(SettingKind::Sequential | SettingKind::Delay) => false,
            Some(SettingKind::Batched) => true,
            None => b.is_some(),
        };
        let delayed = s.setting == Some(SettingKind::Delay);
        let tau = s.tau.as_ref().or(point.tau.as_ref());
        let forms = Self {
            s,
            sctx,
            n,
            b,
            batches,
            m,
            tau,
            batched,
            delayed,
            delay_mode: DelayMode::Random,
            tie_break,
            stop,
            weights,
            bin_sampling,
            start,
            warnings,
        };
        forms.check_settings(common, sp)?;
        let delay_mode = forms.delay_mode(sp)?;
        forms.check_observation(common, sp)?;
        forms.check_balls(sp)?;
        Some(Self { delay_mode, ..forms })
    }

    /// `sampling`, `tau` and `delay_mode` against the setting.
    fn check_settings(&self, common: &Common<'_>, sp: &mut SeriesProblems<'_, '_>) -> Option<()> {
        let (s, sctx) = (self.s, &self.sctx);
        if let Some(smp) = common.sampling {
            let bad_stat = !matches!(s.statistic, Statistic::FinalGap | Statistic::Distribution);
            if self.batched || bad_stat || !s.also.is_empty() {
                sp.fail(
                    "sampling",
                    smp.span(),
                    Msg::in_ctx(
                        sctx,
                        "`sampling = { blocks }` needs the sequential setting and \
                         statistic = \"final_gap\" or \"distribution\" (and no `also`)",
                    ),
                );
                return None;
            }
        }
        if !self.delayed && (self.tau.is_some() || s.delay_mode.is_some()) {
            let span = span_of(self.tau).or_else(|| s.delay_mode.as_ref().and_then(|m| m.span()));
            sp.fail(
                "tau",
                span,
                Msg::in_ctx(sctx, "`tau` and `delay_mode` need setting = \"delay\""),
            );
            return None;
        }
        if self.delayed && self.tau.is_none() {
            sp.fail(
                "tau",
                None,
                Msg::in_ctx(sctx, "setting = \"delay\" needs `tau` (in [point] or the series)"),
            );
            return None;
        }
        Some(())
    }

    fn delay_mode(&self, sp: &mut SeriesProblems<'_, '_>) -> Option<DelayMode> {
        let Some(m) = &self.s.delay_mode else { return Some(DelayMode::Random) };
        match DelayMode::from_name(m.get_ref()) {
            Ok(mode) => Some(mode),
            Err(_) => {
                let modes = ["random", "adversarial"];
                let hint = ballast_core::registry::did_you_mean(m.get_ref(), modes);
                let msg = Msg::in_ctx(
                    &self.sctx,
                    format!(
                        "unknown `delay_mode` `{}`: expected one of random, adversarial{hint}",
                        m.get_ref()
                    ),
                );
                sp.fail("delay_mode", m.span(), msg);
                None
            }
        }
    }

    /// `observe_every` needs a sequential or delayed series without `sampling`.
    fn check_observation(
        &self,
        common: &Common<'_>,
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<()> {
        if let Some(f) = &self.s.observe_every {
            if self.batched || common.sampling.is_some() {
                let msg = Msg::in_ctx(
                    &self.sctx,
                    "`observe_every` applies to the sequential and delay settings without \
                     `sampling` (batched runs observe at every batch end)",
                );
                sp.fail("observe_every", span_of(Some(f)), msg);
                return None;
            }
        }
        Some(())
    }

    /// `b` for batched series, and exactly one of `batches` and `m`.
    fn check_balls(&self, sp: &mut SeriesProblems<'_, '_>) -> Option<()> {
        let sctx = &self.sctx;
        if self.batched && self.b.is_none() {
            sp.fail(
                "b",
                None,
                Msg::in_ctx(sctx, "setting = \"batched\" needs `b` (in [point] or the series)"),
            );
            return None;
        }
        let problem = match (self.batches, self.m) {
            (Some(_), Some(_)) => {
                Some((span_of(self.m), Msg::in_ctx(sctx, "set either `batches` or `m`, not both")))
            }
            (None, None) => Some((
                None,
                Msg::in_ctx(
                    sctx,
                    "the number of balls is not set: give `m` or `batches` in [point] \
                     or the series",
                ),
            )),
            (Some(_), None) if !self.batched => Some((
                span_of(self.batches),
                Msg::in_ctx(sctx, "`batches` needs the batched setting; give `m` instead"),
            )),
            _ => None,
        };
        match problem {
            Some((span, msg)) => {
                sp.fail("m", span, msg);
                None
            }
            None => Some(()),
        }
    }

    /// The point of this series at grid values `gvals` and the registry's warnings about it,
    /// or `None` with its problem reported.
    fn point_at(
        &self,
        gvals: &[(String, f64)],
        x_variable: &str,
        common: &Common<'_>,
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<(PlanPoint, Vec<String>)> {
        let (s, sctx) = (self.s, &self.sctx);
        let x = gvals.iter().find(|(k, _)| k == x_variable).map_or(f64::NAN, |(_, v)| *v);
        let ctx = if gvals.is_empty() {
            sctx.clone()
        } else {
            format!("{sctx} at {}", crate::grid::describe(gvals))
        };
        let (counts, vars) = self.counts_at(&ctx, gvals, sp)?;
        let process = match resolve_process(s.process.get_ref(), &vars, &ctx) {
            Ok((_, p)) => p,
            Err((field, msg)) => {
                let span = match &field {
                    Some(f) => sp.param_span(f),
                    None => sp.process_span.clone(),
                };
                sp.fail(field.as_deref().unwrap_or("process"), span, msg);
                return None;
            }
        };
        let mut spec = self.spec_at(&ctx, &counts, process, common, sp)?;
        spec.capacities = self.capacities_at(&ctx, &vars, sp)?;
        let tables = (s.churn.as_ref(), s.dispatchers.as_ref());
        let potentials = s.potentials.is_some();
        match crate::config::resolve_dynamic_bins(tables.0, tables.1, potentials, &vars, &ctx) {
            Ok((churn, dispatchers)) => (spec.churn, spec.dispatchers) = (churn, dispatchers),
            Err((field, msg)) => {
                let field = field.unwrap_or_else(|| "churn".into());
                let span = sp.params.get(&field).cloned();
                sp.fail(&field, span, msg);
                return None;
            }
        }
        let Counts { n, b, m, .. } = counts;
        let mut warnings = self.check_spec(&spec, &ctx, common, sp)?;
        warnings.extend(self.warnings.iter().cloned());
        let theory = self.theory(&ctx, &vars, sp)?;
        let recovery_target = self.recovery_target(&ctx, &vars, sp)?;
        self.check_statistic(b, sp)?;
        let histogram = crate::final_loads::refusal(
            s.statistic,
            &s.also,
            &spec,
            recovery_target.is_some(),
            &ctx,
        );
        if let Some((key, msg)) = histogram {
            sp.fail(key, None, msg);
            return None;
        }
        let potentials = self.potentials(&ctx, &vars, sp)?;
        let grid = gvals.to_vec();
        let point = PlanPoint {
            series: sp.si,
            grid,
            x,
            n,
            b,
            m,
            spec,
            theory,
            potentials,
            potential_trajectory: s.statistic == Statistic::PotentialTrajectory
                || s.also.contains(&Statistic::PotentialTrajectory),
            recovery_target,
        };
        Some((point, warnings))
    }

    /// The counts of this series at grid values `gvals`, each evaluated with the grid and the
    /// counts before it, and the variables the later formulas see (the grid, `n`, `b`,
    /// `batches`, `m`); `None` with the problem reported.
    fn counts_at<'g>(
        &self,
        ctx: &str,
        gvals: &'g [(String, f64)],
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<(Counts, Vec<(&'g str, f64)>)> {
        let mut vars: Vec<(&str, f64)> = gvals.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let n = sp.count(ctx, &self.n, "n", &vars)?;
        vars.retain(|(k, _)| *k != "n");
        vars.push(("n", n as f64));
        let b = match (self.batched, self.b) {
            (true, Some(f)) => Some(sp.count(ctx, f, "b", &vars)?),
            _ => None,
        };
        if let Some(b) = b {
            vars.push(("b", b as f64));
        }
        let (batches, m) = self.balls(ctx, b, &vars, sp)?;
        vars.push(("batches", batches as f64));
        vars.push(("m", m as f64));
        let observe_every = match &self.s.observe_every {
            Some(f) => Some(sp.count(ctx, f, "observe_every", &vars)?),
            None => None,
        };
        let tau = match self.tau {
            Some(f) if self.delayed => Some(sp.count(ctx, f, "tau", &vars)?),
            _ => None,
        };
        Some((Counts { n, b, m, observe_every, tau }, vars))
    }

    /// The run specification of a point with `counts` and `process` (`m` balls per
    /// sampling block), or `None` when the blocks hold more balls than fit in 64 bits.
    fn spec_at(
        &self,
        ctx: &str,
        counts: &Counts,
        process: ballast_core::ProcessSpec,
        common: &Common<'_>,
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<RunSpec> {
        let s = self.s;
        let Counts { n, b, m, observe_every, tau } = *counts;
        let sampling = common.sampling();
        let blocks = sampling.map_or(1, |s| s.blocks.max(1));
        if m.checked_mul(blocks).is_none() {
            sp.fail(
                "m",
                common.sampling.and_then(|s| s.span()),
                Msg::in_ctx(
                    ctx,
                    format!(
                        "`sampling.blocks` = {blocks} blocks of `m` = {m} balls: more balls \
                     than fit in 64 bits"
                    ),
                ),
            );
            return None;
        }
        Some(RunSpec {
            tie_break: self.tie_break,
            setting: match (b, tau) {
                (Some(b), _) => Setting::Batched { b },
                (None, Some(tau)) => Setting::Delay { tau, mode: self.delay_mode },
                (None, None) => Setting::Sequential,
            },
            weights: self.weights,
            observe_every: sampling.map(|_| m.max(1)).or(observe_every),
            record_trajectory: asks(s, Statistic::is_trajectory) || sampling.is_some(),
            record_loads: asks(s, Statistic::records_loads),
            record_probes: s.statistic == Statistic::ProbesDistribution
                || s.also.contains(&Statistic::ProbesDistribution),
            engine: common.engine,
            stop: self.stop,
            sampling: self.bin_sampling.clone(),
            start: self.start.clone(),
            ..RunSpec::new(process, n, m.saturating_mul(blocks))
        })
    }

    /// The series' capacities at the point (parameters may be formulas of the point's
    /// variables; none without `capacities`).
    fn capacities_at(
        &self,
        ctx: &str,
        vars: &[(&str, f64)],
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<ballast_core::Capacities> {
        let dir = sp.problems.config_dir().to_path_buf();
        match crate::config::resolve_capacities(self.s.capacities.as_ref(), &dir, vars, ctx) {
            Ok(c) => Some(c),
            Err((field, msg)) => {
                let field = field.unwrap_or_else(|| "capacities".into());
                let span = sp.params.get(&field).or_else(|| sp.params.get("capacities")).cloned();
                sp.fail(&field, span, msg);
                None
            }
        }
    }

    /// `(batches, m)` from whichever of the two the series gives.
    fn balls(
        &self,
        ctx: &str,
        b: Option<u64>,
        vars: &[(&str, f64)],
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<(u64, u64)> {
        if let Some(f) = self.batches {
            let k = sp.count(ctx, f, "batches", vars)?;
            let Some(m) = k.checked_mul(b.unwrap_or(1)) else {
                sp.fail(
                    "m",
                    span_of(Some(f)),
                    Msg::in_ctx(
                        ctx,
                        format!(
                            "`batches` = {k} batches of `b` = {} balls: more balls than fit \
                         in 64 bits",
                            b.unwrap_or(1)
                        ),
                    ),
                );
                return None;
            };
            Some((k, m))
        } else {
            let m = sp.count(ctx, self.m?, "m", vars)?;
            Some((b.map_or(1, |b| if b == 0 { 0 } else { m.div_ceil(b) }), m))
        }
    }

    /// The core's validation and the registry's strictness rules; their warnings.
    fn check_spec(
        &self,
        spec: &RunSpec,
        ctx: &str,
        common: &Common<'_>,
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<Vec<String>> {
        let s = self.s;
        if let Err(e) = spec.validate() {
            let (key, span) = match &e {
                ballast_core::Error::Invalid { field, .. } => {
                    let span = match *field {
                        "n" => span_of(Some(&self.n)),
                        "b" => span_of(self.b),
                        "m" => span_of(self.batches.or(self.m)),
                        "tau" => span_of(self.tau),
                        "observe_every" => span_of(s.observe_every.as_ref()),
                        other => sp.param_span(other),
                    };
                    (field.to_string(), span)
                }
                _ => ("other".to_string(), None),
            };
            sp.fail(&key, span, Msg::in_ctx(ctx, e.to_string()));
            return None;
        }
        match ballast_core::registry::check_run(spec) {
            Ok(w) => Some(w.into_iter().map(|w| format!("{}: {w}", self.sctx)).collect()),
            Err(e) => {
                let key = e.param.clone().unwrap_or_else(|| "run".into());
                let span = match key.as_str() {
                    "tie_break" => s.tie_break.as_ref().and_then(|t| t.span()),
                    "engine" => common.raw.engine.as_ref().and_then(|e| e.span()),
                    "n" => span_of(Some(&self.n)),
                    "b" => span_of(self.b),
                    "m" => span_of(self.batches.or(self.m)),
                    "tau" => span_of(self.tau),
                    other => sp.param_span(other),
                };
                sp.fail(&key, span, Msg::in_ctx(ctx, e.to_string()));
                None
            }
        }
    }

    /// The series' `theory` formula at the point (`Some(None)` without one).
    fn theory(
        &self,
        ctx: &str,
        vars: &[(&str, f64)],
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<Option<f64>> {
        let Some(f) = &self.s.theory else { return Some(None) };
        match f.get_ref().eval(vars) {
            Ok(v) if v.is_finite() => Some(Some(v)),
            Ok(v) => {
                let msg = Msg::in_ctx(ctx, format!("`theory` = {v}: expected a finite number"));
                sp.fail("theory", span_of(Some(f)), msg);
                None
            }
            Err(e) => {
                sp.fail("theory", span_of(Some(f)), Msg::in_ctx(ctx, format!("`theory`: {e}")));
                None
            }
        }
    }

    /// The series' `recovery_target` at the point (`Some(None)` without one).
    fn recovery_target(
        &self,
        ctx: &str,
        vars: &[(&str, f64)],
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<Option<f64>> {
        let Some(f) = &self.s.recovery_target else { return Some(None) };
        match f.get_ref().eval(vars) {
            Ok(v) if v.is_finite() => Some(Some(v)),
            Ok(v) => {
                let msg =
                    Msg::in_ctx(ctx, format!("`recovery_target` = {v}: expected a finite number"));
                sp.fail("recovery_target", span_of(Some(f)), msg);
                None
            }
            Err(e) => {
                sp.fail(
                    "recovery_target",
                    span_of(Some(f)),
                    Msg::in_ctx(ctx, format!("`recovery_target`: {e}")),
                );
                None
            }
        }
    }

    /// The series' potentials at the point: placeholders filled from `vars`, each parsed.
    fn potentials(
        &self,
        ctx: &str,
        vars: &[(&str, f64)],
        sp: &mut SeriesProblems<'_, '_>,
    ) -> Option<Vec<ballast_potential::PotentialSpec>> {
        let Some(list) = &self.s.potentials else { return Some(Vec::new()) };
        let mut out = Vec::new();
        for text in list.get_ref() {
            let mut filled = text.clone();
            for (k, v) in vars {
                filled = filled.replace(&format!("{{{k}}}"), &num(*v));
            }
            let parsed = filled.parse::<ballast_potential::PotentialSpec>();
            match parsed.and_then(|p| p.validate().map(|()| p)) {
                Ok(p) => out.push(p),
                Err(e) => {
                    let msg = Msg::in_ctx(ctx, format!("`potentials`: \"{filled}\": {e}"));
                    sp.fail("potentials", list.span(), msg);
                    return None;
                }
            }
        }
        if out.is_empty() {
            sp.fail(
                "potentials",
                list.span(),
                Msg::in_ctx(ctx, "`potentials` is empty: name at least one or leave it out"),
            );
            return None;
        }
        Some(out)
    }

    /// `running_max_gap` needs batches, `gap_trajectory`, `max_trajectory` and
    /// `min_trajectory` observation points (batches or `observe_every`). The last three may
    /// be an `also` (rows at the observation points, x = balls / n, left out of the figure);
    /// `running_max_gap` may not (its x is the batch index).
    fn check_statistic(&self, b: Option<u64>, sp: &mut SeriesProblems<'_, '_>) -> Option<()> {
        let (s, sctx) = (self.s, &self.sctx);
        let not_also = |t: &Statistic| t.is_trajectory() && !t.at_observations();
        if let Some(t) = s.also.iter().find(|a| not_also(a)) {
            let names = Statistic::names();
            let others: Vec<&str> = names
                .split(", ")
                .filter(|n| Statistic::from_name(n).is_some_and(|s| !not_also(&s)))
                .collect();
            sp.fail(
                "also",
                sp.span.clone(),
                Msg::in_ctx(
                    sctx,
                    format!(
                        "`also` cannot hold \"{}\"; expected any of: {}",
                        t.name(),
                        others.join(", ")
                    ),
                ),
            );
            return None;
        }
        check_top_k(s, sctx, sp)?;
        check_above(s, sctx, sp)?;
        let observed = b.is_some() || s.observe_every.is_some();
        if let Some(t) =
            std::iter::once(&s.statistic).chain(&s.also).find(|t| t.at_observations() && !observed)
        {
            let key = if *t == s.statistic { "statistic" } else { "also" };
            sp.fail(
                key,
                None,
                Msg::in_ctx(
                    sctx,
                    format!(
                        "statistic = \"{}\" needs observation points: the batched setting \
                     or `observe_every`",
                        t.name()
                    ),
                ),
            );
            return None;
        }
        let probes = s.statistic == Statistic::ProbesDistribution
            || s.also.contains(&Statistic::ProbesDistribution);
        let equalize = matches!(
            s.process.get_ref().0.get("kind"),
            Some(toml::Value::String(k)) if k == "equalize"
        );
        if probes && (s.setting == Some(SettingKind::Delay) || equalize) {
            let key =
                if s.statistic == Statistic::ProbesDistribution { "statistic" } else { "also" };
            sp.fail(
                key,
                None,
                Msg::in_ctx(
                    sctx,
                    "statistic = \"probes_distribution\" is recorded by the bin engine's \
                     loop: not in the delay setting or for equalize (loops of their own, d \
                     probes per ball)",
                ),
            );
            return None;
        }
        let potential_trajectory = s.statistic == Statistic::PotentialTrajectory
            || s.also.contains(&Statistic::PotentialTrajectory);
        if potential_trajectory && s.potentials.is_none() {
            let key =
                if s.statistic == Statistic::PotentialTrajectory { "statistic" } else { "also" };
            sp.fail(
                key,
                None,
                Msg::in_ctx(
                    sctx,
                    "statistic = \"potential_trajectory\" needs `potentials` (e.g. \
                     potentials = [\"quadratic\"])",
                ),
            );
            return None;
        }
        if s.statistic == Statistic::RunningMaxGap && b.is_none() {
            sp.fail(
                "statistic",
                None,
                Msg::in_ctx(sctx, "statistic = \"running_max_gap\" needs the batched setting"),
            );
            return None;
        }
        Some(())
    }
}

/// `top_k` belongs to `top_loads` (as the statistic or in `also`) and is 1 to
/// [`crate::MAX_SORTED_BINS`].
fn check_top_k(s: &RawSeries, sctx: &str, sp: &mut SeriesProblems<'_, '_>) -> Option<()> {
    let Some(k) = &s.top_k else { return Some(()) };
    let asked = s.statistic == Statistic::TopLoads || s.also.contains(&Statistic::TopLoads);
    let v = *k.get_ref();
    let msg = if !asked {
        Msg::in_ctx(
            sctx,
            "`top_k` applies to the statistic \"top_loads\" only (as the statistic or in `also`)",
        )
    } else if v == 0 || v > crate::MAX_SORTED_BINS {
        Msg::in_ctx(
            sctx,
            format!("`top_k` = {v}: expected an integer in 1..={}", crate::MAX_SORTED_BINS),
        )
    } else {
        return Some(());
    };
    sp.fail("top_k", k.span(), msg);
    None
}

/// `above` and `balls_above` go together (as the statistic or in `also`).
fn check_above(s: &RawSeries, sctx: &str, sp: &mut SeriesProblems<'_, '_>) -> Option<()> {
    let asked = s.statistic == Statistic::BallsAbove || s.also.contains(&Statistic::BallsAbove);
    let (key, span, msg) = match &s.above {
        Some(c) if !asked => (
            "above",
            c.span(),
            Msg::in_ctx(
                sctx,
                "`above` applies to the statistic \"balls_above\" only (as the \
                 statistic or in `also`)",
            ),
        ),
        None if asked => (
            "also",
            sp.span.clone(),
            Msg::in_ctx(
                sctx,
                "statistic \"balls_above\" needs `above = C` in the series (the \
                 capacity c: a non-negative integer)",
            ),
        ),
        _ => return Some(()),
    };
    sp.fail(key, span, msg);
    None
}

/// `recovery_time` and `recovery_target` go together (and not in the delay setting or with
/// `equalize`); potentials are tracked by their own observer (from the start state, at the
/// first ball), so they take no recovery target, and not `equalize` (it moves old balls).
fn check_recovery_and_potentials(
    s: &RawSeries,
    sctx: &str,
    sp: &mut SeriesProblems<'_, '_>,
) -> Option<()> {
    let equalize = matches!(
        s.process.get_ref().0.get("kind"),
        Some(toml::Value::String(k)) if k == "equalize"
    );
    let delayed = s.setting == Some(SettingKind::Delay);
    let has_target = s.recovery_target.is_some();
    let checked =
        crate::start::check_recovery(s.statistic, &s.also, has_target, delayed, equalize, sctx);
    let problem = match (checked, &s.potentials) {
        (Err(msg), _) => Some((s.recovery_target.as_ref().and_then(|f| f.span()), msg)),
        (Ok(()), Some(p)) if has_target => Some((
            p.span(),
            Msg::in_ctx(
                sctx,
                "`potentials` and `recovery_target` each need their own observer of \
                 the runs; expected one of them in a series",
            ),
        )),
        (Ok(()), Some(p)) if equalize => Some((
            p.span(),
            Msg::in_ctx(
                sctx,
                "`potentials` follow every ball, and `equalize` moves balls between \
                 bins besides the new one, which the potential trackers do not follow; remove \
                 `potentials` or use another process",
            ),
        )),
        (Ok(()), Some(p)) if s.capacities.is_some() => Some((
            p.span(),
            Msg::in_ctx(
                sctx,
                "`potentials` are tracked on bins of equal capacity and cannot be \
                 combined with `capacities`; expected one of them in a series",
            ),
        )),
        _ => None,
    };
    let Some((span, msg)) = problem else { return Some(()) };
    sp.problems.at(span.or_else(|| sp.span.clone()), msg);
    sp.problems.skip_series(sp.si);
    None
}

/// Points left out of a logarithmic figure are simulated anyway: say so.
fn warn_log_x(raw: &RawConfig, plan: &mut Plan) {
    if !raw.x.log {
        return;
    }
    let mut bad: Vec<f64> = plan.points.iter().map(|p| p.x).filter(|x| *x <= 0.0).collect();
    bad.sort_by(f64::total_cmp);
    bad.dedup();
    if !bad.is_empty() {
        let list: Vec<String> = bad.iter().map(|x| num(*x)).collect();
        plan.warnings.push(format!(
            "x.log = true but {} = {} is not positive: those points are simulated and in the \
             CSV, but left out of the logarithmic figure",
            plan.x_variable,
            list.join(", ")
        ));
    }
}

/// At most [`MAX_UNITS`] (point, run) units, and at most
/// [`ballast_core::registry::MAX_ITEM_BALL_BY_BALL`] balls placed one at a time in all.
fn check_units(plan: &Plan, runs_sp: &Located<u64>, problems: &mut Problems<'_>) {
    let runs = plan.runs;
    let units = (plan.points.len() as u128) * u128::from(runs);
    if units > MAX_UNITS {
        problems.at(
            runs_sp.span(),
            format!(
                "`runs` = {runs} at {} points is {units} runs in all; at most {MAX_UNITS} runs of \
                 an item are allowed (their outcomes are held in memory until the item is \
                 aggregated): use fewer runs, or split the grid into several items",
                plan.points.len()
            ),
        );
        return;
    }
    // Balls placed one at a time in all (the per-run bound is `check_run`'s).
    let balls: u128 = plan
        .points
        .iter()
        .map(|p| u128::from(ballast_core::registry::ball_by_ball_balls(&p.spec)))
        .sum::<u128>()
        * u128::from(runs);
    let most = ballast_core::registry::MAX_ITEM_BALL_BY_BALL;
    if balls > most {
        problems.at(
            runs_sp.span(),
            format!(
                "`runs` = {runs} at {} points place {balls} balls one at a time in all (runs × \
                 points × balls, on the bin engine or the level engine's rules without chunks): \
                 at 1 ns a ball that is {} of one core; at most {most} are allowed per item: use \
                 fewer runs or balls, or split the grid into several items",
                plan.points.len(),
                ballast_core::registry::duration_words(balls as f64 * 1e-9)
            ),
        );
    }
}
