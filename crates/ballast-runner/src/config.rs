//! Experiment configuration files: the TOML schema (serde, `deny_unknown_fields`) and its
//! validation into an [`Experiment`]. The format is documented in the crate root.

mod bin_sampling;
mod capacities;
mod dynamic_bins;
mod located;
pub(crate) mod schema;
pub use bin_sampling::read_weight_file;
pub(crate) use bin_sampling::{resolve_sampling, RawBinSampling};
pub use capacities::read_capacity_file;
pub(crate) use capacities::{resolve_capacities, RawCapacities};
pub(crate) use dynamic_bins::{resolve_dynamic_bins, RawSettingTable};
pub(crate) use located::Located;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use ballast_core::registry::{self, ParamValue};
use ballast_core::{ProcessSpec, Stop, TieBreak};
use serde::Deserialize;

use crate::formula::Formula;
use crate::problem::Msg;
use crate::statistic::Statistic;
use crate::stats::Rounding;
use crate::ConfigProblem;
use crate::Error;

type SFormula = Located<Formula>;

/// The top level of an experiment file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawConfig {
    /// `kind = "allocation"` (the default; other kinds are parsed by [`crate::kinds`]).
    #[serde(default, rename = "kind")]
    #[allow(dead_code)]
    pub item_kind: Option<String>,
    pub title: String,
    #[serde(default)]
    pub notes: String,
    pub seed: u64,
    /// Derive the unit seeds from this item id instead of the config's own (two items that
    /// report different statistics of the same runs share them, and the point cache).
    #[serde(default)]
    pub seed_item: Option<String>,
    #[serde(default)]
    pub engine: Option<Located<String>>,
    pub runs: Located<u64>,
    pub x: RawAxis,
    #[serde(default)]
    pub y_label: Option<String>,
    /// Logarithmic y axis in the figure (values that are not positive are left out).
    #[serde(default)]
    pub y_log: bool,
    pub grid: BTreeMap<String, Located<toml::Value>>,
    #[serde(default)]
    pub point: RawPoint,
    pub series: Vec<Located<RawSeries>>,
    #[serde(default, rename = "reference")]
    pub references: Vec<RawReference>,
    #[serde(default)]
    pub sampling: Option<RawSampling>,
    #[serde(default)]
    pub quick: Option<RawQuick>,
    #[serde(default)]
    pub reduced: Option<RawQuick>,
    #[serde(default)]
    pub report: RawReport,
}

/// `sampling = { blocks = 100 }`: the authors' protocol of the noise programs. Each run is one
/// long sequential run of `blocks · m` balls observed every `m` balls; the gap at each block
/// end is one sample. Without it every run is independent and gives one sample.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Sampling {
    /// Consecutive blocks per run.
    pub blocks: u64,
}

pub(crate) type RawSampling = Located<Sampling>;

/// `[x]`: which grid variable is the x axis.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAxis {
    pub variable: Located<String>,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub log: bool,
}

/// `[point]` (and per-series overrides): how n, b, batches and m follow from the grid.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPoint {
    pub n: Option<SFormula>,
    pub b: Option<SFormula>,
    pub batches: Option<SFormula>,
    pub m: Option<SFormula>,
    /// The delay window τ (with `setting = "delay"`).
    pub tau: Option<SFormula>,
}

/// The setting of a series, when it overrides `[point]`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SettingKind {
    Sequential,
    Batched,
    /// `delay{tau, mode}`: every sample reports a load of the last τ steps (`tau` in the
    /// series or `[point]`, `delay_mode = "random" | "adversarial"` in the series).
    Delay,
}

/// A process as written in a config: `{ kind = "one_plus_beta", beta = 0.5 }`. The table is
/// kept as written and read through the process registry of `ballast-core`
/// ([`ballast_core::registry`]) by [`resolve_process`]: the kind, the parameter names, types,
/// ranges and defaults, and every message, are the registry's.
#[derive(Clone, Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct RawProcess(pub toml::Table);

/// A process that could not be resolved: the parameter the message is about (for its span;
/// `None`: the process table) and the message.
pub(crate) type ProcessProblem = (Option<String>, Msg);

/// Resolves a process for one point; `vars` holds the grid variables and n, b, batches, m.
/// Numeric parameters may be formulas over them.
pub(crate) fn resolve_process(
    p: &RawProcess,
    vars: &[(&str, f64)],
    ctx: &str,
) -> Result<(&'static registry::ProcessDef, ProcessSpec), ProcessProblem> {
    let kind = match p.0.get("kind") {
        Some(toml::Value::String(k)) => k.as_str(),
        Some(other) => {
            let msg =
                Msg::in_ctx(ctx, format!("`kind` = {other}: expected a process name (a string)"));
            return Err((Some("kind".into()), msg));
        }
        None => {
            let msg = Msg::in_ctx(
                ctx,
                format!("the process table needs `kind`, one of {}", registry::names().join(", ")),
            );
            return Err((None, msg));
        }
    };
    let def =
        registry::find(kind).map_err(|e| (Some("kind".into()), Msg::in_ctx(ctx, e.to_string())))?;
    let given = table_params(&def.list(), &p.0, vars, ctx)?;
    let spec = def.build(&given).map_err(|e| (e.param.clone(), Msg::in_ctx(ctx, e.to_string())))?;
    Ok((def, spec))
}

/// The parameters of a registry entry as written in its table (`kind` aside): a nested table
/// `tau = { base = 1 }` is the parameter `tau.base`, and a string for a numeric parameter is
/// a formula over `vars`. Unknown names and wrong types get the registry's messages.
pub(crate) fn table_params(
    list: &registry::ParamList,
    table: &toml::Table,
    vars: &[(&str, f64)],
    ctx: &str,
) -> Result<Vec<(&'static str, ParamValue)>, ProcessProblem> {
    let mut fields: Vec<(String, &toml::Value)> = Vec::new();
    for (k, v) in table {
        if k == "kind" {
            continue;
        }
        match v {
            // `tau = { base = 1 }` is the parameter `tau.base`.
            toml::Value::Table(t)
                if list.params.iter().any(|d| d.name.starts_with(&format!("{k}."))) =>
            {
                fields.extend(t.iter().map(|(k2, v2)| (format!("{k}.{k2}"), v2)));
            }
            _ => fields.push((k.clone(), v)),
        }
    }
    let mut given: Vec<(&str, ParamValue)> = Vec::new();
    for (name, v) in &fields {
        let pdef =
            list.param(name).map_err(|e| (e.param.clone(), Msg::in_ctx(ctx, e.to_string())))?;
        let value = match v {
            toml::Value::Integer(i) => ParamValue::Num(*i as f64),
            toml::Value::Float(x) => ParamValue::Num(*x),
            toml::Value::Boolean(b) => ParamValue::Bool(*b),
            toml::Value::String(t) if pdef.ty.is_numeric() => {
                let x = Formula::new(t.as_str()).eval(vars).map_err(|e| {
                    (Some(name.clone()), Msg::in_ctx(ctx, format!("`{name}`: {e}")))
                })?;
                ParamValue::Num(x)
            }
            toml::Value::String(t) if pdef.ty == registry::ParamType::List => {
                list_formula(t, vars, ctx, name)?
            }
            toml::Value::String(t) => ParamValue::Text(t.clone()),
            toml::Value::Array(a) if pdef.ty == registry::ParamType::List => {
                list_param(a, vars, ctx, name)?
            }
            other => {
                let msg = Msg::in_ctx(
                    ctx,
                    format!("`{name}` = {other}: expected {}", pdef.ty.describe()),
                );
                return Err((Some(name.clone()), msg));
            }
        };
        given.push((pdef.name, value));
    }
    Ok(given)
}

/// A list parameter written as a formula: its values at `i = 1..=n` with `x = i/n` (and
/// the point's variables), one entry per bin.
fn list_formula(
    text: &str,
    vars: &[(&str, f64)],
    ctx: &str,
    name: &str,
) -> Result<ParamValue, ProcessProblem> {
    let fail = |msg: String| (Some(name.to_owned()), Msg::in_ctx(ctx, format!("`{name}`: {msg}")));
    let n = vars.iter().find(|(k, _)| *k == "n").map(|(_, v)| *v).ok_or_else(|| {
        fail("a formula list needs the number of bins n; give the entries as an array".into())
    })?;
    if n > ballast_core::rank_vector::MAX_LEN as f64 {
        return Err(fail(format!(
            "a formula list has one entry per bin, and n = {n} is above {}",
            ballast_core::rank_vector::MAX_LEN
        )));
    }
    let f = Formula::new(text);
    let mut at: Vec<(&str, f64)> =
        vars.iter().copied().filter(|(k, _)| *k != "i" && *k != "x").collect();
    at.push(("i", 0.0));
    at.push(("x", 0.0));
    let (ii, xi) = (at.len() - 2, at.len() - 1);
    let mut v = Vec::with_capacity(n as usize);
    for i in 1..=n as u64 {
        at[ii].1 = i as f64;
        at[xi].1 = i as f64 / n;
        v.push(f.eval(&at).map_err(|e| fail(format!("at i = {i}: {e}")))?);
    }
    Ok(ParamValue::List(v))
}

/// A list parameter written as an array: each entry a number, or a formula over the
/// point's variables.
fn list_param(
    a: &[toml::Value],
    vars: &[(&str, f64)],
    ctx: &str,
    name: &str,
) -> Result<ParamValue, ProcessProblem> {
    let mut v = Vec::with_capacity(a.len());
    for (i, item) in a.iter().enumerate() {
        let x = match item {
            toml::Value::Integer(k) => *k as f64,
            toml::Value::Float(x) => *x,
            toml::Value::String(t) => Formula::new(t.as_str()).eval(vars).map_err(|e| {
                (Some(name.to_owned()), Msg::in_ctx(ctx, format!("`{name}` entry {}: {e}", i + 1)))
            })?,
            other => {
                let msg = Msg::in_ctx(
                    ctx,
                    format!("`{name}` entry {} = {other}: expected a number", i + 1),
                );
                return Err((Some(name.to_owned()), msg));
            }
        };
        v.push(x);
    }
    Ok(ParamValue::List(v))
}

/// Ball weights as written in a config: a table `{ kind = "exp", mean = 2 }` whose kind and
/// parameters are the registry's weight laws (`ballast_core::registry::WEIGHTS`).
#[derive(Clone, Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct RawWeights(pub toml::Table);

/// Resolves a series' weights (unit when absent). A problem names the parameter it is about
/// (`weights.mean`) or `weights` for the table.
pub(crate) fn resolve_weights(
    w: Option<&RawWeights>,
    ctx: &str,
) -> Result<ballast_core::Weights, ProcessProblem> {
    let Some(RawWeights(table)) = w else { return Ok(ballast_core::Weights::Unit) };
    let at = |p: Option<String>| Some(p.map_or("weights".to_string(), |p| format!("weights.{p}")));
    let kind = match table.get("kind") {
        Some(toml::Value::String(k)) => k.as_str(),
        Some(other) => {
            let msg = Msg::in_ctx(
                ctx,
                format!("weights `kind` = {other}: expected a weight law (a string)"),
            );
            return Err((at(Some("kind".into())), msg));
        }
        None => {
            let names: Vec<&str> = registry::WEIGHTS.iter().map(|w| w.name).collect();
            let msg = Msg::in_ctx(
                ctx,
                format!("the weights table needs `kind`, one of {}", names.join(", ")),
            );
            return Err((at(None), msg));
        }
    };
    let def = registry::find_weights(kind)
        .map_err(|e| (at(Some("kind".into())), Msg::in_ctx(ctx, e.to_string())))?;
    let given = table_params(&def.list(), table, &[], ctx).map_err(|(p, m)| (at(p), m))?;
    def.build(&given).map_err(|e| (at(e.param.clone()), Msg::in_ctx(ctx, e.to_string())))
}

/// A start state as written in a config: a table `{ kind = "uniform", k = 5 }` whose kind and
/// parameters are the registry's starts (`ballast_core::registry::STARTS`), read by
/// `crate::start::resolve_start`.
#[derive(Clone, Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct RawStart(pub toml::Table);

/// One `[[series]]` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSeries {
    pub name: String,
    pub process: Located<RawProcess>,
    #[serde(default)]
    pub tie_break: Option<Located<String>>,
    /// Stopping rule for multi-ball steps: `"truncate"` (default) or `"finish"`.
    #[serde(default)]
    pub stop: Option<Located<String>>,
    #[serde(default)]
    pub weights: Option<RawWeights>,
    /// Bin sampling law (`config/bin_sampling.rs`).
    #[serde(default)]
    pub sampling: Option<RawBinSampling>,
    /// The loads the runs start from (`start = { kind = "uniform", k = 5 }`; default empty).
    #[serde(default)]
    pub start: Option<RawStart>,
    /// The bins' capacities (`config/capacities.rs`; default none).
    #[serde(default)]
    pub capacities: Option<RawCapacities>,
    /// The gap target of `recovery_time` (a number or a formula).
    #[serde(default)]
    pub recovery_target: Option<SFormula>,
    /// How many of the largest loads `top_loads` reports (default [`crate::TOP_K`]).
    #[serde(default)]
    pub top_k: Option<Located<u64>>,
    /// The capacity c of `balls_above`.
    #[serde(default)]
    pub above: Option<Located<u64>>,
    #[serde(default)]
    pub statistic: Statistic,
    #[serde(default)]
    pub also: Vec<Statistic>,
    #[serde(default)]
    pub theory: Option<SFormula>,
    #[serde(default)]
    pub round: Option<Rounding>,
    #[serde(default)]
    pub reference: Option<String>,
    #[serde(default)]
    pub setting: Option<SettingKind>,
    #[serde(default)]
    pub b: Option<SFormula>,
    #[serde(default)]
    pub batches: Option<SFormula>,
    #[serde(default)]
    pub m: Option<SFormula>,
    #[serde(default)]
    pub tau: Option<SFormula>,
    #[serde(default)]
    pub delay_mode: Option<Located<String>>,
    /// Sequential settings: also observe the gap every this many balls (`max_gap` is the
    /// largest gap over these points).
    #[serde(default)]
    pub observe_every: Option<SFormula>,
    /// Potentials tracked along every run (`ballast-potential` spec text such as
    /// `"hyperbolic:alpha=0.1"`, with `{var}` placeholders for the grid variables, `n`, `b`
    /// and `m`): each adds rows `<series> [<spec>]` of its value at the end.
    #[serde(default)]
    pub potentials: Option<Located<Vec<String>>>,
    /// Bins joining and leaving (`config/dynamic_bins.rs`).
    #[serde(default)]
    pub churn: Option<RawSettingTable>,
    /// Several dispatchers on stale views (`config/dynamic_bins.rs`).
    #[serde(default)]
    pub dispatchers: Option<RawSettingTable>,
}

/// One `[[reference]]` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReference {
    pub file: String,
    pub label: String,
    #[serde(default)]
    pub x_shift: f64,
}

/// `[quick]`: the scaled-down variant.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQuick {
    #[serde(default)]
    pub runs: Option<Located<u64>>,
    #[serde(default)]
    pub grid: BTreeMap<String, Located<toml::Value>>,
    #[serde(default)]
    pub point: RawPoint,
    #[serde(default)]
    pub sampling: Option<RawSampling>,
}

/// How the Markdown report lays out the comparison.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// A figure: one section per series.
    #[default]
    Figure,
    /// A table: additionally one wide table, ours beside the reference, one row per grid
    /// point and two columns per series.
    Table,
}

/// `[report]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReport {
    #[serde(default)]
    pub layout: Layout,
    #[serde(default)]
    pub mark_minima: bool,
}

/// Which size of an experiment runs: the config's full scale, its `[quick]` table (seconds,
/// for tests and CI) or its `[reduced]` table (a documented smaller run for when the full scale
/// does not fit the machine; without a `[reduced]` table it is the full scale).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// The parameters of the paper.
    #[default]
    Full,
    /// `[quick]`.
    Quick,
    /// `[reduced]`.
    Reduced,
}

impl Scale {
    /// `full`, `quick` or `reduced`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Quick => "quick",
            Self::Reduced => "reduced",
        }
    }
}

/// A config file as read: its item id, where it came from, its text and the SHA-256 of its
/// bytes (recorded in the metadata, the shard files and the checkpoint keys).
#[derive(Clone, Debug)]
pub(crate) struct ConfigFile {
    pub id: String,
    pub path: PathBuf,
    /// The config's text: the file read, or (built in memory) the table written as TOML, which
    /// is what its hash and `--print-config` show.
    pub source: String,
    pub sha256: String,
    /// Whether the values were read from `source`, so their spans are places in it (false
    /// for a config built in memory: its values have no places).
    pub read_from_text: bool,
}

impl ConfigFile {
    pub fn new(id: &str, path: &Path, source: &str) -> Self {
        use sha2::Digest;
        Self {
            id: id.to_string(),
            path: path.to_path_buf(),
            source: source.to_string(),
            sha256: format!("{:x}", sha2::Sha256::digest(source.as_bytes())),
            read_from_text: true,
        }
    }

    /// The text the values' spans point into: the source read, or nothing for a config built
    /// in memory (its problems then have no place).
    pub fn located_text(&self) -> &str {
        if self.read_from_text {
            &self.source
        } else {
            ""
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn sha256(&self) -> &str {
        &self.sha256
    }
}

/// Converts a byte offset into 1-based (line, column).
pub(crate) fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(src.len());
    while !src.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// Collects located messages for one configuration file.
pub(crate) struct Problems<'a> {
    path: &'a Path,
    src: &'a str,
    pub(crate) list: Vec<ConfigProblem>,
    /// Set when the spans given to [`Problems::at`] are those of a repaired copy of `src`.
    remap: Option<&'a schema::Remap>,
    /// Series whose entry had schema errors: their value checks are skipped.
    skip: BTreeSet<usize>,
    /// (series, field, span start) already reported, across scales.
    reported: HashSet<(usize, String, usize)>,
    /// `src` parsed once for the span lookups.
    spans: schema::SpanCache,
}

impl<'a> Problems<'a> {
    pub(crate) fn new(path: &'a Path, src: &'a str) -> Self {
        Self {
            path,
            src,
            list: Vec::new(),
            remap: None,
            skip: BTreeSet::new(),
            reported: HashSet::new(),
            spans: schema::SpanCache::default(),
        }
    }

    /// Problems of `src` with the schema errors found (their spans already original); later
    /// spans are mapped from the repaired copy the value came from.
    pub(crate) fn with_schema(path: &'a Path, src: &'a str, schema: &'a schema::Schema) -> Self {
        let mut p = Self::new(path, src);
        for (span, msg) in &schema.errors {
            p.push(span.clone(), msg.into());
        }
        p.remap = schema.remap.as_ref();
        p.skip = schema.taint.series.clone();
        p
    }

    /// The directory of the config file (relative paths in it, `start` and `sampling`
    /// files, are read from there).
    pub(crate) fn config_dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }

    /// Whether the value checks of series `si` are skipped (its entry had schema errors).
    pub(crate) fn skips_series(&self, si: usize) -> bool {
        self.skip.contains(&si)
    }

    /// The spans of series `si`'s process parameters and weights, by name (`beta`,
    /// `tau.base`, `weights.mean`), in the coordinates [`Problems::at`] expects.
    pub(crate) fn param_spans(&self, si: usize) -> std::collections::HashMap<String, Range<usize>> {
        self.spans.param_spans(self.remap, self.src, si)
    }

    /// Skips the value checks of series `si` from now on (its entry has an error that would
    /// make them report consequences).
    pub(crate) fn skip_series(&mut self, si: usize) {
        self.skip.insert(si);
    }

    /// Whether a problem of series `si`, field `key` at `span` is new (one message per series
    /// and field and place, even when several scales or grid points show it).
    pub(crate) fn first_report(
        &mut self,
        si: usize,
        key: &str,
        span: &Option<Range<usize>>,
    ) -> bool {
        self.reported.insert((si, key.to_string(), span.as_ref().map_or(usize::MAX, |s| s.start)))
    }

    pub(crate) fn at(&mut self, span: Option<Range<usize>>, msg: impl Into<Msg>) {
        let span = match (self.remap, span) {
            (Some(r), Some(s)) => r.map(s),
            (_, s) => s,
        };
        self.push(span, msg.into());
    }

    /// A message at the value (or, `key = true`, the key) at `path` of the original text.
    pub(crate) fn at_path(&mut self, path: &[schema::Seg], key: bool, msg: impl Into<Msg>) {
        let span = match self.remap {
            Some(r) => r.original_span(path, key),
            None => self.spans.span_in(self.src, path, key),
        };
        self.push(span, msg.into());
    }

    fn push(&mut self, span: Option<Range<usize>>, msg: Msg) {
        let problem = ConfigProblem {
            path: self.path.to_path_buf(),
            place: span.map(|s| line_col(self.src, s.start)),
            context: msg.context,
            message: msg.text,
        };
        if !self.list.contains(&problem) {
            self.list.push(problem);
        }
    }

    /// `Err` with every message, in the order of their places in the file.
    pub(crate) fn into_result(self) -> Result<(), Error> {
        if self.list.is_empty() {
            Ok(())
        } else {
            Err(self.into_error())
        }
    }

    /// [`Error::Config`] with every message, in the order of their places in the file.
    pub(crate) fn into_error(self) -> Error {
        let mut errors = self.list;
        errors.sort_by_key(|p| p.place.unwrap_or((usize::MAX, 0)));
        if errors.is_empty() {
            errors.push(ConfigProblem {
                path: self.path.to_path_buf(),
                place: None,
                context: None,
                message: "invalid config".into(),
            });
        }
        Error::Config { path: self.path.to_path_buf(), errors }
    }
}

/// Parses a series' stopping rule (`stop = "truncate" | "finish"`), reporting the allowed
/// names on error.
pub(crate) fn resolve_stop(
    t: &Option<Located<String>>,
    problems: &mut Problems<'_>,
    ctx: &str,
) -> Stop {
    match t {
        None => Stop::Truncate,
        Some(s) => Stop::from_name(s.get_ref()).unwrap_or_else(|e| {
            let hint = ballast_core::registry::did_you_mean(
                s.get_ref(),
                Stop::ALL.iter().map(|(n, _)| *n),
            );
            problems.at(s.span(), Msg::in_ctx(ctx, format!("{e}{hint}")));
            Stop::Truncate
        }),
    }
}

/// Parses a tie-breaking rule name, reporting the allowed names on error.
pub(crate) fn resolve_tie_break(
    t: &Option<Located<String>>,
    problems: &mut Problems<'_>,
    ctx: &str,
) -> TieBreak {
    match t {
        None => TieBreak::Random,
        Some(s) => match TieBreak::from_name(s.get_ref()) {
            Ok(t) => t,
            Err(e) => {
                let hint = ballast_core::registry::did_you_mean(
                    s.get_ref(),
                    TieBreak::ALL.iter().map(|(n, _)| *n),
                );
                problems.at(s.span(), Msg::in_ctx(ctx, format!("{e}{hint}")));
                TieBreak::Random
            }
        },
    }
}
