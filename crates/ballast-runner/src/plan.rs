//! The plan of an experiment: the grid expanded into points (series × grid values), each with
//! a validated [`RunSpec`], and the seed of every (point, run) unit.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;

use ballast_core::delay::DelayMode;
use ballast_core::rng::{derive_seed, hash_str};
use ballast_core::{Engine, RunSpec, Setting};
use toml::Spanned;

use crate::config::{
    resolve_process, resolve_stop, resolve_tie_break, resolve_weights, Problems, RawConfig,
    RawPoint, Sampling, Scale, SettingKind, Statistic,
};
use crate::formula::Formula;
use crate::start::{check_recovery, resolve_start};
use crate::stats::Rounding;

/// One point of the plan: a series at one combination of grid values.
#[derive(Clone, Debug)]
pub struct PlanPoint {
    /// Index of the series in the config.
    pub series: usize,
    /// Grid variable values at this point, in grid order (sorted names).
    pub grid: Vec<(String, f64)>,
    /// The x-axis value.
    pub x: f64,
    /// Number of bins.
    pub n: u64,
    /// Batch size (`None` in the sequential setting).
    pub b: Option<u64>,
    /// Number of balls per sample: per run, or per block with `sampling = { blocks }` (the
    /// run then has `blocks · m` balls, see `spec.m`).
    pub m: u64,
    /// The run specification (validated).
    pub spec: RunSpec,
    /// The series' `theory` formula at this point (e.g. ln ln n / ln d), printed beside our
    /// values; `None` without one.
    pub theory: Option<f64>,
    /// The series' `recovery_target` at this point (the gap `recovery_time` waits for);
    /// `None` without one.
    pub recovery_target: Option<f64>,
}

/// A series of the plan.
#[derive(Clone, Debug)]
pub struct PlanSeries {
    /// Display name.
    pub name: String,
    /// The statistic it reports (its figure, verdict and reference comparison).
    pub statistic: Statistic,
    /// Further statistics of the same runs (`also = [...]`): extra rows without a reference.
    pub also: Vec<Statistic>,
    /// The series name to look up in the reference CSVs (`None`: no reference). May contain
    /// `{var}` placeholders for grid variables, `{n}` and `{b}` (see [`PlanSeries::reference_at`]).
    pub reference: Option<String>,
    /// Rounding of each per-run (or per-block) value before it is summarised (`None`: none;
    /// distributions default to rounding up).
    pub round: Option<Rounding>,
}

impl PlanSeries {
    /// The reference series name at a point: `{name}` placeholders replaced by the grid
    /// value, `n` or `b` (integers without a decimal point).
    ///
    /// ```
    /// # use ballast_runner::{PlanSeries, Statistic};
    /// let s = PlanSeries {
    ///     name: "g-Bounded".into(),
    ///     statistic: Statistic::Distribution,
    ///     also: vec![],
    ///     reference: Some("g-Bounded n={n} g={g}".into()),
    ///     round: None,
    /// };
    /// let at = s.reference_at(&[("g".into(), 4.0)], 10_000, None);
    /// assert_eq!(at.as_deref(), Some("g-Bounded n=10000 g=4"));
    /// ```
    pub fn reference_at(&self, grid: &[(String, f64)], n: u64, b: Option<u64>) -> Option<String> {
        let mut r = self.reference.clone()?;
        if !r.contains('{') {
            return Some(r);
        }
        for (k, v) in grid {
            r = r.replace(&format!("{{{k}}}"), &fmt_num(*v));
        }
        r = r.replace("{n}", &n.to_string());
        if let Some(b) = b {
            r = r.replace("{b}", &b.to_string());
        }
        Some(r)
    }
}

/// The expanded experiment: points × runs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Series, in config order.
    pub series: Vec<PlanSeries>,
    /// Points, series-major; within a series the grid in lexicographic order of the
    /// variable names with the x variable innermost.
    pub points: Vec<PlanPoint>,
    /// Independent runs per point.
    pub runs: u64,
    /// The x-axis grid variable.
    pub x_variable: String,
    /// The grid variables other than x (they split a series into several lines).
    pub group_variables: Vec<String>,
    /// The sampling protocol (`None`: independent runs, one sample each).
    pub sampling: Option<Sampling>,
    /// The scale this plan was built for.
    pub scale: Scale,
    /// Legal but degenerate combinations found while planning (one line each, naming the
    /// series), for the command line and the report.
    pub warnings: Vec<String>,
}

impl Plan {
    /// The figure frame of an allocation item: the config's axis labels, or the x variable and
    /// the first series' statistic.
    pub(crate) fn frame(&self, raw: &RawConfig) -> crate::figure::FigureFrame {
        let statistic = self.series.first().map(|s| s.statistic).unwrap_or_default();
        crate::figure::FigureFrame {
            x_label: raw.x.label.clone().unwrap_or_else(|| self.x_variable.clone()),
            y_label: raw.y_label.clone().unwrap_or_else(|| statistic.describe().to_string()),
            x_log: raw.x.log,
            y_log: raw.y_log,
            mark_minima: raw.report.mark_minima,
        }
    }

    /// The seed of run `run` of point `point` of item `item_id`:
    /// `derive_seed(master, &[hash_str(item_id), point, run])`. It depends on nothing else
    /// (not on threads, scheduling, or the other points).
    pub fn unit_seed(master: u64, item_id: &str, point: usize, run: u64) -> u64 {
        derive_seed(master, &[hash_str(item_id), point as u64, run])
    }

    /// Total number of balls over all units.
    pub fn total_balls(&self) -> u128 {
        self.points.iter().map(|p| u128::from(p.spec.m) * u128::from(self.runs)).sum()
    }
}

/// At most this many points (series × grid values) per scale: validation expands them all.
pub(crate) const MAX_POINTS: usize = 100_000;

/// The most (point, run) units an item may have: every outcome is held in memory until the
/// item is aggregated (and the scheduler lists the units to run), so `points × runs` is
/// bounded at validation.
pub const MAX_UNITS: u128 = 10_000_000;

const GRID_HELP: &str =
    "expected a non-empty list of numbers such as [1, 2, 5] or a range { from = 1, to = 50, step = 1 }";

fn grid_values(v: &Spanned<toml::Value>) -> Result<Vec<f64>, String> {
    grid_values_of(v.get_ref())
}

/// The values of one grid variable: a non-empty list of numbers, or a range
/// `{ from, to, step }` (shared by every item kind).
pub(crate) fn grid_values_of(v: &toml::Value) -> Result<Vec<f64>, String> {
    let num = |x: &toml::Value| match x {
        toml::Value::Integer(i) => Some(*i as f64),
        toml::Value::Float(f) => Some(*f),
        _ => None,
    };
    match v {
        toml::Value::Array(a) if !a.is_empty() => a
            .iter()
            .map(|x| match num(x) {
                Some(v) if v.is_finite() => Ok(v),
                Some(v) => Err(format!("invalid value {v}: grid values must be finite numbers")),
                None => Err(GRID_HELP.to_string()),
            })
            .collect(),
        toml::Value::Table(t) => {
            if let Some(k) = t.keys().find(|k| !["from", "to", "step"].contains(&k.as_str())) {
                return Err(format!(
                    "unknown field `{k}`, expected `from`, `to` or `step`{}",
                    ballast_core::registry::did_you_mean(k, ["from", "to", "step"])
                ));
            }
            let get = |k: &str| t.get(k).and_then(num);
            let (Some(from), Some(to)) = (get("from"), get("to")) else {
                return Err(GRID_HELP.to_string());
            };
            let step = get("step").unwrap_or(1.0);
            let finite = from.is_finite() && to.is_finite() && step.is_finite();
            if !finite || step <= 0.0 || to < from || (to - from) / step > 1e6 {
                return Err(format!(
                    "invalid range from {from} to {to} step {step}: expected finite numbers, \
                     from <= to, step > 0 and at most 1000001 values"
                ));
            }
            let count = ((to - from) / step + 1e-9).floor() as usize + 1;
            Ok((0..count).map(|i| from + step * i as f64).collect())
        }
        _ => Err(GRID_HELP.to_string()),
    }
}

/// A non-negative integer from a formula value.
fn count(v: f64, field: &str) -> Result<u64, String> {
    let r = v.round();
    if v.is_finite() && r >= 0.0 && (v - r).abs() <= 1e-9 * r.max(1.0) && r < 1.8e19 {
        Ok(r as u64)
    } else {
        Err(format!("invalid value {v} for `{field}`: expected a non-negative integer"))
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

pub(crate) fn build_plan(raw: &RawConfig, scale: Scale, problems: &mut Problems<'_>) -> Plan {
    let empty = Default::default();
    let q = match scale {
        Scale::Full => None,
        Scale::Quick => raw.quick.as_ref(),
        Scale::Reduced => raw.reduced.as_ref(),
    };
    let sampling_sp = q.and_then(|q| q.sampling.as_ref()).or(raw.sampling.as_ref());
    let sampling = sampling_sp.map(|s| *s.get_ref());
    if let Some(s) = sampling_sp {
        if s.get_ref().blocks == 0 {
            problems.at(
                Some(s.span()),
                "invalid value 0 for `sampling.blocks`: expected an integer >= 1",
            );
        }
    }
    let mut warnings: Vec<String> = Vec::new();
    let runs_sp = q.and_then(|q| q.runs.as_ref()).unwrap_or(&raw.runs);
    let runs = *runs_sp.get_ref();
    if runs == 0 {
        problems.at(Some(runs_sp.span()), "invalid value 0 for `runs`: expected an integer >= 1");
    }
    // Grid, with quick overrides.
    let mut grid: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    // Without every grid variable the points cannot be checked (they would only report
    // consequences of the grid error).
    let mut grid_ok = true;
    for (name, v) in &raw.grid {
        match grid_values(v) {
            Ok(vals) => {
                grid.insert(name.clone(), vals);
            }
            Err(e) => {
                grid_ok = false;
                problems.at(Some(v.span()), format!("grid variable `{name}`: {e}"));
            }
        }
    }
    let table = scale.name();
    for (name, v) in q.map_or(&empty, |q| &q.grid) {
        if !raw.grid.contains_key(name) {
            let known: Vec<&str> = raw.grid.keys().map(String::as_str).collect();
            problems.at(
                Some(v.span()),
                format!(
                    "{table}.grid: unknown grid variable `{name}`, expected one of: {}{}",
                    known.join(", "),
                    ballast_core::registry::did_you_mean(name, known.iter().copied())
                ),
            );
            continue;
        }
        match grid_values(v) {
            Ok(vals) => {
                grid.insert(name.clone(), vals);
            }
            Err(e) => {
                grid_ok = false;
                problems.at(Some(v.span()), format!("{table}.grid variable `{name}`: {e}"));
            }
        }
    }
    for (name, v) in &raw.grid {
        if ["b", "batches", "m", "pi", "e"].contains(&name.as_str()) {
            problems.at(
                Some(v.span()),
                format!(
                    "grid variable `{name}`: reserved name (b, batches, m, pi and e are computed)"
                ),
            );
        }
    }
    let x_variable = raw.x.variable.get_ref().clone();
    if !raw.grid.contains_key(&x_variable) {
        let known: Vec<&str> = raw.grid.keys().map(String::as_str).collect();
        problems.at(
            Some(raw.x.variable.span()),
            format!(
                "x.variable: `{x_variable}` is not a grid variable, expected one of: {}{}",
                known.join(", "),
                ballast_core::registry::did_you_mean(&x_variable, known.iter().copied())
            ),
        );
    }
    // Validation expands every point: refuse grids too large to expand.
    let combos_len = grid.values().fold(1usize, |acc, v| acc.saturating_mul(v.len()));
    let total = combos_len.saturating_mul(raw.series.len().max(1));
    if total > MAX_POINTS {
        let span = raw.grid.values().max_by_key(|v| grid_values(v).map_or(0, |g| g.len()));
        problems.at(
            span.map(|v| v.span()),
            format!(
                "{table} grid: {total} points (series × grid values); at most {MAX_POINTS} are \
                 allowed"
            ),
        );
        grid_ok = false;
    }
    if !grid_ok {
        return Plan {
            series: Vec::new(),
            points: Vec::new(),
            runs,
            x_variable,
            group_variables: Vec::new(),
            sampling,
            scale,
            warnings,
        };
    }
    let group_variables: Vec<String> = grid.keys().filter(|k| **k != x_variable).cloned().collect();
    // Combinations: group variables outer (sorted), x innermost.
    let mut order: Vec<&String> = group_variables.iter().collect();
    if grid.contains_key(&x_variable) {
        order.push(&x_variable);
    }
    let mut combos: Vec<Vec<f64>> = vec![Vec::new()];
    for name in &order {
        let vals = &grid[*name];
        combos = combos
            .into_iter()
            .flat_map(|c| {
                vals.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push(*v);
                    c
                })
            })
            .collect();
    }
    // `[point]` with quick overrides.
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

    // One default everywhere (configs, `RunSpec`, `ballast simulate`): `auto`. Every committed
    // allocation config names its engine, so the default moves no committed value.
    let engine = match &raw.engine {
        None => Engine::Auto,
        Some(e) => Engine::from_name(e.get_ref()).unwrap_or_else(|err| {
            let hint = ballast_core::registry::did_you_mean(
                e.get_ref(),
                Engine::ALL.iter().map(|(n, _)| *n),
            );
            problems.at(Some(e.span()), format!("{err}{hint}"));
            Engine::Bins
        }),
    };
    let mut names = HashSet::new();
    let mut series = Vec::new();
    let mut points = Vec::new();
    if raw.series.is_empty() {
        problems.at(None, "no [[series]]: expected at least one");
    }
    for (si, s_sp) in raw.series.iter().enumerate() {
        let s = s_sp.get_ref();
        if !names.insert(s.name.clone()) {
            problems.at(Some(s_sp.span()), format!("series `{}`: duplicate name", s.name));
        }
        series.push(PlanSeries {
            name: s.name.clone(),
            statistic: s.statistic,
            also: s.also.iter().copied().filter(|a| *a != s.statistic).collect(),
            reference: match s.reference.as_deref() {
                Some("") => None,
                Some(r) => Some(r.to_string()),
                None => Some(s.name.clone()),
            },
            round: s.round,
        });
        if problems.skips_series(si) {
            continue;
        }
        let sctx = format!("series `{}`", s.name);
        if let Some(r) = s.reference.as_deref() {
            let batched_series = s.b.is_some() || point.b.is_some();
            let mut rest = r;
            while let Some(open) = rest.find('{') {
                let after = &rest[open + 1..];
                let Some(close) = after.find('}') else {
                    problems.at(
                        Some(s_sp.span()),
                        format!("{sctx}: `reference` = \"{r}\": a `{{` without its `}}`"),
                    );
                    break;
                };
                let name = &after[..close];
                let known =
                    grid.contains_key(name) || name == "n" || (name == "b" && batched_series);
                if !known {
                    let mut names: Vec<&str> = grid.keys().map(String::as_str).collect();
                    names.push("n");
                    if batched_series {
                        names.push("b");
                    }
                    problems.at(
                        Some(s_sp.span()),
                        format!(
                            "{sctx}: `reference` = \"{r}\": unknown placeholder `{{{name}}}`, \
                             expected one of: {}{}",
                            names.iter().map(|n| format!("{{{n}}}")).collect::<Vec<_>>().join(", "),
                            ballast_core::registry::did_you_mean(name, names.iter().copied())
                        ),
                    );
                }
                rest = &after[close + 1..];
            }
        }
        let tie_break = resolve_tie_break(&s.tie_break, problems, &sctx);
        let stop = resolve_stop(&s.stop, problems, &sctx);
        let weights = match resolve_weights(s.weights.as_ref(), &sctx) {
            Ok(w) => w,
            Err((field, msg)) => {
                let spans = problems.param_spans(si);
                let field = field.unwrap_or_else(|| "weights".into());
                let span = spans.get(&field).or_else(|| spans.get("weights")).cloned();
                problems.at(span, msg);
                problems.skip_series(si);
                continue;
            }
        };
        let start = match resolve_start(s.start.as_ref(), problems.config_dir(), &sctx) {
            Ok(st) => st,
            Err((field, msg)) => {
                let spans = problems.param_spans(si);
                let field = field.unwrap_or_else(|| "start".into());
                let span = spans.get(&field).or_else(|| spans.get("start")).cloned();
                problems.at(span, msg);
                problems.skip_series(si);
                continue;
            }
        };
        if sampling_sp.is_some() && !start.is_empty() {
            // Legal, but only the first block starts from the start state.
            warnings.push(format!(
                "{sctx}: with `sampling = {{ blocks }}` only the first block starts from `start`; \
                 each later block continues from the loads the one before left"
            ));
        }
        let equalize = matches!(s.process.get_ref().0.get("kind"), Some(toml::Value::String(k)) if k == "equalize");
        let delayed_series = s.setting == Some(SettingKind::Delay);
        if let Err(msg) = check_recovery(
            s.statistic,
            &s.also,
            s.recovery_target.is_some(),
            delayed_series,
            equalize,
            &sctx,
        ) {
            let span = s.recovery_target.as_ref().map(|f| f.span()).unwrap_or(s_sp.span());
            problems.at(Some(span), msg);
            problems.skip_series(si);
            continue;
        }
        let default_n = Spanned::new(0..0, Formula::new("n"));
        let n_f = point.n.as_ref().unwrap_or(&default_n);
        let b_f = s.b.as_ref().or(point.b.as_ref());
        let (batches_f, m_f) = if s.batches.is_some() || s.m.is_some() {
            (s.batches.as_ref(), s.m.as_ref())
        } else {
            (point.batches.as_ref(), point.m.as_ref())
        };
        let batched = match s.setting {
            Some(SettingKind::Sequential | SettingKind::Delay) => false,
            Some(SettingKind::Batched) => true,
            None => b_f.is_some(),
        };
        let delayed = s.setting == Some(SettingKind::Delay);
        let tau_f = s.tau.as_ref().or(point.tau.as_ref());
        let span_of = |f: Option<&Spanned<Formula>>| f.map(|f| f.span()).filter(|r| *r != (0..0));
        let s_span = s_sp.span();
        // Errors about a process parameter point at it (the process table is buffered by
        // serde, so its fields carry no spans of their own).
        let params = problems.param_spans(si);
        let process_span = s.process.span();
        let param_span = |field: &str| params.get(field).cloned().or(Some(process_span.clone()));
        let mut fail = |key: &str, span: Option<Range<usize>>, msg: String| {
            let span = span.or(Some(s_span.clone()));
            // A formula outside the series (in [point]) fails the same way for every series
            // that uses it: one message.
            let inside = span.as_ref().is_some_and(|sp| s_span.contains(&sp.start));
            if problems.first_report(if inside { si } else { usize::MAX }, key, &span) {
                problems.at(span, msg);
            }
        };
        if let Some(sp) = sampling_sp {
            let bad_stat = !matches!(s.statistic, Statistic::FinalGap | Statistic::Distribution);
            if batched || bad_stat || !s.also.is_empty() {
                fail(
                    "sampling",
                    Some(sp.span()),
                    format!(
                        "{sctx}: `sampling = {{ blocks }}` needs the sequential setting and \
                         statistic = \"final_gap\" or \"distribution\" (and no `also`)"
                    ),
                );
                continue;
            }
        }
        if !delayed && (tau_f.is_some() || s.delay_mode.is_some()) {
            let span = span_of(tau_f).or_else(|| s.delay_mode.as_ref().map(|m| m.span()));
            fail("tau", span, format!("{sctx}: `tau` and `delay_mode` need setting = \"delay\""));
            continue;
        }
        if delayed && tau_f.is_none() {
            fail(
                "tau",
                None,
                format!("{sctx}: setting = \"delay\" needs `tau` (in [point] or the series)"),
            );
            continue;
        }
        let delay_mode = match &s.delay_mode {
            None => DelayMode::Random,
            Some(m) => match DelayMode::from_name(m.get_ref()) {
                Ok(mode) => mode,
                Err(_) => {
                    let modes = ["random", "adversarial"];
                    let hint = ballast_core::registry::did_you_mean(m.get_ref(), modes);
                    let msg = format!(
                        "{sctx}: unknown `delay_mode` `{}`: expected one of random, \
                         adversarial{hint}",
                        m.get_ref()
                    );
                    fail("delay_mode", Some(m.span()), msg);
                    continue;
                }
            },
        };
        if let Some(f) = &s.observe_every {
            if batched || sampling_sp.is_some() {
                let msg = format!(
                    "{sctx}: `observe_every` applies to the sequential and delay settings \
                     without `sampling` (batched runs observe at every batch end)"
                );
                fail("observe_every", span_of(Some(f)), msg);
                continue;
            }
        }
        if batched && b_f.is_none() {
            fail(
                "b",
                None,
                format!("{sctx}: setting = \"batched\" needs `b` (in [point] or the series)"),
            );
            continue;
        }
        match (batches_f, m_f) {
            (Some(_), Some(_)) => {
                fail("m", span_of(m_f), format!("{sctx}: set either `batches` or `m`, not both"));
                continue;
            }
            (None, None) => {
                fail("m", None, format!("{sctx}: the number of balls is not set: give `m` or `batches` in [point] or the series"));
                continue;
            }
            (Some(_), None) if !batched => {
                fail(
                    "m",
                    span_of(batches_f),
                    format!("{sctx}: `batches` needs the batched setting; give `m` instead"),
                );
                continue;
            }
            _ => {}
        }
        for combo in &combos {
            let gvals: Vec<(String, f64)> =
                order.iter().map(|s| (*s).clone()).zip(combo.iter().copied()).collect();
            let x = gvals.iter().find(|(k, _)| *k == x_variable).map_or(f64::NAN, |(_, v)| *v);
            let at = gvals
                .iter()
                .map(|(k, v)| format!("{k} = {}", fmt_num(*v)))
                .collect::<Vec<_>>()
                .join(", ");
            let ctx = if at.is_empty() { sctx.clone() } else { format!("{sctx} at {at}") };
            let mut vars: Vec<(&str, f64)> = gvals.iter().map(|(k, v)| (k.as_str(), *v)).collect();
            let mut eval_count =
                |f: &Spanned<Formula>, field: &str, vars: &[(&str, f64)]| -> Option<u64> {
                    match f.get_ref().eval(vars).and_then(|v| count(v, field)) {
                        Ok(v) => Some(v),
                        Err(e) => {
                            fail(field, span_of(Some(f)), format!("{ctx}: `{field}`: {e}"));
                            None
                        }
                    }
                };
            let Some(n) = eval_count(n_f, "n", &vars) else { continue };
            vars.retain(|(k, _)| *k != "n");
            vars.push(("n", n as f64));
            let b = match (batched, b_f) {
                (true, Some(f)) => match eval_count(f, "b", &vars) {
                    Some(b) => Some(b),
                    None => continue,
                },
                _ => None,
            };
            if let Some(b) = b {
                vars.push(("b", b as f64));
            }
            let (batches, m) = if let Some(f) = batches_f {
                let Some(k) = eval_count(f, "batches", &vars) else { continue };
                let Some(m) = k.checked_mul(b.unwrap_or(1)) else {
                    fail(
                        "m",
                        span_of(Some(f)),
                        format!(
                            "{ctx}: `batches` = {k} batches of `b` = {} balls: more balls than \
                             fit in 64 bits",
                            b.unwrap_or(1)
                        ),
                    );
                    continue;
                };
                (k, m)
            } else if let Some(f) = m_f {
                let Some(m) = eval_count(f, "m", &vars) else { continue };
                (b.map_or(1, |b| if b == 0 { 0 } else { m.div_ceil(b) }), m)
            } else {
                continue;
            };
            vars.push(("batches", batches as f64));
            vars.push(("m", m as f64));
            let observe_every = match &s.observe_every {
                Some(f) => match eval_count(f, "observe_every", &vars) {
                    Some(k) => Some(k),
                    None => continue,
                },
                None => None,
            };
            let tau = match tau_f {
                Some(f) if delayed => match eval_count(f, "tau", &vars) {
                    Some(t) => Some(t),
                    None => continue,
                },
                _ => None,
            };
            let process = match resolve_process(s.process.get_ref(), &vars, &ctx) {
                Ok((_, p)) => p,
                Err((field, msg)) => {
                    let span = match &field {
                        Some(f) => param_span(f),
                        None => Some(process_span.clone()),
                    };
                    fail(field.as_deref().unwrap_or("process"), span, msg);
                    continue;
                }
            };
            let blocks = sampling.map_or(1, |s| s.blocks.max(1));
            if m.checked_mul(blocks).is_none() {
                fail(
                    "m",
                    sampling_sp.map(|s| s.span()),
                    format!(
                        "{ctx}: `sampling.blocks` = {blocks} blocks of `m` = {m} balls: more \
                         balls than fit in 64 bits"
                    ),
                );
                continue;
            }
            let spec = RunSpec {
                tie_break,
                setting: match (b, tau) {
                    (Some(b), _) => Setting::Batched { b },
                    (None, Some(tau)) => Setting::Delay { tau, mode: delay_mode },
                    (None, None) => Setting::Sequential,
                },
                weights,
                observe_every: sampling.map(|_| m.max(1)).or(observe_every),
                record_trajectory: s.statistic == Statistic::RunningMaxGap || sampling.is_some(),
                engine,
                stop,
                start: start.clone(),
                ..RunSpec::new(process, n, m.saturating_mul(blocks))
            };
            if let Err(e) = spec.validate() {
                let (key, span) = match &e {
                    ballast_core::Error::Invalid { field, .. } => {
                        let span = match *field {
                            "n" => span_of(Some(n_f)),
                            "b" => span_of(b_f),
                            "m" => span_of(batches_f.or(m_f)),
                            "tau" => span_of(tau_f),
                            "observe_every" => span_of(s.observe_every.as_ref()),
                            other => param_span(other),
                        };
                        (field.to_string(), span)
                    }
                    _ => ("other".to_string(), None),
                };
                fail(&key, span, format!("{ctx}: {e}"));
                continue;
            }
            match ballast_core::registry::check_run(&spec) {
                Ok(w) => {
                    for w in w {
                        let w = format!("{sctx}: {w}");
                        if !warnings.contains(&w) {
                            warnings.push(w);
                        }
                    }
                }
                Err(e) => {
                    let key = e.param.clone().unwrap_or_else(|| "run".into());
                    let span = match key.as_str() {
                        "tie_break" => s.tie_break.as_ref().map(|t| t.span()),
                        "engine" => raw.engine.as_ref().map(|e| e.span()),
                        "n" => span_of(Some(n_f)),
                        "b" => span_of(b_f),
                        "m" => span_of(batches_f.or(m_f)),
                        "tau" => span_of(tau_f),
                        other => param_span(other),
                    };
                    fail(&key, span, format!("{ctx}: {e}"));
                    continue;
                }
            }
            let theory = match &s.theory {
                Some(f) => match f.get_ref().eval(&vars) {
                    Ok(v) if v.is_finite() => Some(v),
                    Ok(v) => {
                        fail(
                            "theory",
                            span_of(Some(f)),
                            format!("{ctx}: `theory` = {v}: expected a finite number"),
                        );
                        continue;
                    }
                    Err(e) => {
                        fail("theory", span_of(Some(f)), format!("{ctx}: `theory`: {e}"));
                        continue;
                    }
                },
                None => None,
            };
            let recovery_target = match &s.recovery_target {
                Some(f) => match f.get_ref().eval(&vars) {
                    Ok(v) if v.is_finite() => Some(v),
                    Ok(v) => {
                        let msg =
                            format!("{ctx}: `recovery_target` = {v}: expected a finite number");
                        fail("recovery_target", span_of(Some(f)), msg);
                        continue;
                    }
                    Err(e) => {
                        let msg = format!("{ctx}: `recovery_target`: {e}");
                        fail("recovery_target", span_of(Some(f)), msg);
                        continue;
                    }
                },
                None => None,
            };
            if s.also.contains(&Statistic::RunningMaxGap) {
                fail(
                    "also",
                    Some(s_sp.span()),
                    format!(
                        "{sctx}: `also` cannot hold \"running_max_gap\"; expected any of: {}",
                        Statistic::NAMES.replace("running_max_gap, ", "")
                    ),
                );
                continue;
            }
            if s.statistic == Statistic::RunningMaxGap && b.is_none() {
                fail(
                    "statistic",
                    None,
                    format!("{sctx}: statistic = \"running_max_gap\" needs the batched setting"),
                );
                continue;
            }
            points.push(PlanPoint {
                series: si,
                grid: gvals,
                x,
                n,
                b,
                m,
                spec,
                theory,
                recovery_target,
            });
        }
    }
    if raw.x.log {
        let mut bad: Vec<f64> = points.iter().map(|p| p.x).filter(|x| *x <= 0.0).collect();
        bad.sort_by(f64::total_cmp);
        bad.dedup();
        if !bad.is_empty() {
            let list: Vec<String> = bad.iter().map(|x| fmt_num(*x)).collect();
            warnings.push(format!(
                "x.log = true but {x_variable} = {} is not positive: those points are simulated \
                 and in the CSV, but left out of the logarithmic figure",
                list.join(", ")
            ));
        }
    }
    let units = (points.len() as u128) * u128::from(runs);
    if units > MAX_UNITS {
        problems.at(
            Some(runs_sp.span()),
            format!(
                "`runs` = {runs} at {} points is {units} runs in all; at most {MAX_UNITS} runs of \
                 an item are allowed (their outcomes are held in memory until the item is \
                 aggregated): use fewer runs, or split the grid into several items",
                points.len()
            ),
        );
    }
    Plan { series, points, runs, x_variable, group_variables, sampling, scale, warnings }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_seeds_depend_on_point_and_run_only() {
        let a = Plan::unit_seed(7, "batched22/fig8_1", 3, 4);
        assert_eq!(a, Plan::unit_seed(7, "batched22/fig8_1", 3, 4));
        assert_ne!(a, Plan::unit_seed(7, "batched22/fig8_1", 4, 3));
        assert_ne!(a, Plan::unit_seed(7, "tower23/table6_5", 3, 4));
    }

    #[test]
    fn grid_ranges() {
        let v = toml::from_str::<toml::Table>("a = { from = 1, to = 50 }\nb = [1, 2.5]").unwrap();
        let g = |k: &str| grid_values(&Spanned::new(0..0, v[k].clone()));
        assert_eq!(g("a").unwrap().len(), 50);
        assert_eq!(g("b").unwrap(), vec![1.0, 2.5]);
    }
}
