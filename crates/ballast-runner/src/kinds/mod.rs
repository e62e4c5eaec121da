//! Item kinds beyond balls-into-bins allocation: `kind = "graph" | "dynamic" | "potential"`
//! at the top of a config selects one of the modules below; without `kind` (or with
//! `kind = "allocation"`) the config is the allocation experiment of [`crate::config`], whose
//! path is unchanged.
//!
//! Every kind shares one config schema (the common fields of the allocation format plus
//! free named parameters) and produces the same [`ItemResult`] as the allocation path, so the
//! CSV, JSON, SVG and Markdown writers, the verdicts and the results index are reused as they
//! are.
//!
//! ```toml
//! kind  = "dynamic"                 # graph | dynamic | potential
//! title = "…"; seed = 1; runs = 25; notes = "…"
//! x     = { variable = "k", label = "m/n" }
//! grid  = { n = [100, 1000], k = [1, 4, 7] }
//! [point]                            # named parameters: numbers or formulas over the grid
//! m = "k * n"                        # variables and the other parameters (any order)
//! [[series]]
//! name      = "RBB"
//! process   = { kind = "rbb", d = 1 }     # per kind, see the module docs
//! statistic = "avg_max_load"              # per kind
//! params    = { rounds = 1000000 }        # per-series parameters (override [point])
//! [[reference]]                      # a published table …
//! file = "rbb23/avg_max_load.csv"; label = "published"
//! columns = { n = "n", x = "m_over_n", value = "avg_max_load" }   # omit for the runner's format
//! runs = 25; rounds = 1000000; precision = 0.01; offset = 0
//! [[reference]]                      # … or a closed form of the kind
//! theory = "rbb_empty_fraction"; label = "theory"
//! [quick]                            # and [reduced]: runs, grid, point overrides
//! ```
//!
//! Seeds: run `r` of point `p` (points numbered series-major, then the grid in sorted variable
//! order with x innermost, as in the allocation path) uses `derive_seed(seed, [hash_str(id),
//! p, r])`; units run in parallel on a local rayon pool and are collected by index, so outputs
//! are byte-identical for any thread count (apart from timing fields).

pub(crate) mod dynamic;
pub(crate) mod graph;
pub(crate) mod potential;

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::Located;
use ballast_core::rng::SEED_DERIVATION_VERSION;
use serde::Deserialize;

use crate::config::schema::{Input, Seg};
use crate::config::{ConfigFile, Problems, RawAxis, RawConfig, RawReport};
use crate::formula::Formula;
use crate::grid::{self, Grid};
use crate::numbers::num;
use crate::options::RunOptions;
use crate::problem::Msg;
use crate::reference::{ColumnTable, ReferenceTable};
use crate::result::{
    mean_z, Comparison, Execution, ItemResult, Metadata, Outcome, Row, ZeroErrors,
};
use crate::stats::{Rounding, Summary};
use crate::{Error, Kind, Scale, Statistic};

/// What an item kind adds to the shared pipeline (the schema below, the grid, formulas,
/// references, units, z-scores and metadata of [`Driver`]): the statistics and parameters its
/// series take, the check of one point, and how its points run. One implementation per
/// module (`graph::Graph`, `dynamic::Dynamic`, `potential::Potential`), listed in [`KINDS`].
pub(crate) trait ItemKind: Sync {
    /// Which kind it is (the statistics its series may report are those that name it,
    /// [`Statistic::kinds`]).
    fn kind(&self) -> Kind;
    /// The `kind = "…"` of its configs.
    fn name(&self) -> &'static str {
        self.kind().name()
    }
    /// The statistics its series may report, in declaration order.
    fn statistics(&self) -> &'static [Statistic] {
        Statistic::of_kind(self.kind())
    }
    /// The named parameters of `[point]` and of the series' `params`.
    fn params(&self) -> &'static [&'static str];
    /// Checks one point of a series without simulating.
    fn validate(
        &self,
        series: &KindSeries,
        statistic: Statistic,
        point: &KPoint,
    ) -> Result<(), Problem>;
    /// The kind-specific series fields it reads (of `graph`, `potential`, `potentials`,
    /// `also`, `tie_break`, `weights`); the others are refused, never ignored.
    fn series_fields(&self) -> &'static [&'static str] {
        &[]
    }
    /// Added to the checkpoint key of a point of series `s`: the kind-specific fields its
    /// runs depend on and the layout of its stored runs (so that runs stored in an older
    /// layout are not even read). Empty by default, which leaves the key as it was.
    fn key_extra(&self, _s: &KindSeries) -> String {
        String::new()
    }
    /// Runs the plan's points and pushes their rows to the driver.
    fn run(&self, d: &mut Driver<'_>) -> Result<(), Error>;
    /// Whether two items may share runs (`seed_item`, `seed_by = "values"`): only where the
    /// checkpoint key names everything a run depends on.
    fn shares_runs(&self) -> bool {
        false
    }
    /// Whether its configs may name a `seed_item` (with `seed_by = "index"`): only where
    /// every seed of an item derives from it.
    fn takes_seed_item(&self) -> bool {
        self.shares_runs()
    }
    /// Whether its runs go through checkpoints (and so can be sharded, merged and read back
    /// with `--cached-only`).
    fn checkpointed(&self) -> bool {
        true
    }
    /// Whether a statistic puts time, not a grid variable, on the x axis.
    fn time_axis(&self, _statistic: Statistic) -> bool {
        false
    }
    /// Whether its series take a `start` (the loads before the first round).
    fn takes_start(&self) -> bool {
        false
    }
}

/// A point a kind refuses: the message, and the series field it is about (`["graph",
/// "dim"]`; empty: the series as a whole), for its line and column.
#[derive(Debug)]
pub(crate) struct Problem {
    /// The field's path inside the series.
    pub field: Vec<String>,
    /// Whether the place is the field's key (an unknown name) rather than its value.
    pub key: bool,
    /// The message.
    pub message: String,
}

impl From<String> for Problem {
    fn from(message: String) -> Self {
        Self { field: Vec::new(), key: false, message }
    }
}

impl From<&str> for Problem {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

/// The kind-specific series fields, for the check that a kind reads every one given.
const SERIES_FIELDS: [&str; 6] =
    ["graph", "potential", "potentials", "also", "tie_break", "weights"];

impl std::fmt::Debug for dyn ItemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The item kinds besides allocation, by the `kind` their configs name.
pub(crate) const KINDS: [&dyn ItemKind; 3] =
    [&graph::Graph, &dynamic::Dynamic, &potential::Potential];

/// The kinds a config's top-level `kind` may name, in words.
fn kind_names() -> String {
    let names: Vec<&str> = KINDS.iter().map(|k| k.name()).collect();
    format!("allocation (default), {}", names.join(", "))
}

/// The top-level `kind` of a config, if it names a non-allocation kind (`Ok(None)`: the
/// allocation path). A source that is not TOML is left to the allocation parser's messages.
pub(crate) fn detect(input: Input<'_>) -> Result<Option<&'static dyn ItemKind>, String> {
    let parsed;
    let table = match input {
        Input::Table(t) => t,
        Input::Text(source) => {
            let Ok(t) = source.parse::<toml::Table>() else { return Ok(None) };
            parsed = t;
            &parsed
        }
    };
    match table.get("kind") {
        None => Ok(None),
        Some(toml::Value::String(s)) if s == "allocation" => Ok(None),
        Some(toml::Value::String(s)) => {
            KINDS.iter().find(|k| k.name() == s).map(|k| Some(*k)).ok_or_else(|| {
                let all = std::iter::once("allocation").chain(KINDS.iter().map(|k| k.name()));
                format!(
                    "unknown item kind `{s}`: expected one of {}{}",
                    kind_names(),
                    ballast_core::registry::did_you_mean(s, all)
                )
            })
        }
        Some(v) => Err(format!("`kind` = {v}: expected a string, one of {}", kind_names())),
    }
}

/// The config of a non-allocation item.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KindConfig {
    #[allow(dead_code)]
    pub kind: String,
    pub title: String,
    #[serde(default)]
    pub notes: String,
    pub seed: u64,
    /// Derive the unit seeds and checkpoint keys from this item id instead of the config's
    /// own. With `seed_by = "values"` two items that report different statistics of the
    /// same runs share every point they both have (see [`SeedBy`]).
    #[serde(default)]
    pub seed_item: Option<String>,
    /// How a point enters its unit seeds.
    #[serde(default)]
    pub seed_by: SeedBy,
    pub runs: Located<u64>,
    pub x: RawAxis,
    #[serde(default)]
    pub y_label: Option<String>,
    /// Logarithmic y axis in the figure (values that are not positive are left out).
    #[serde(default)]
    pub y_log: bool,
    pub grid: BTreeMap<String, Located<toml::Value>>,
    #[serde(default)]
    pub point: BTreeMap<String, Located<Formula>>,
    pub series: Vec<Located<KindSeries>>,
    #[serde(default, rename = "reference")]
    pub references: Vec<Located<KindReference>>,
    #[serde(default)]
    pub quick: Option<KindScale>,
    #[serde(default)]
    pub reduced: Option<KindScale>,
    #[serde(default)]
    pub report: RawReport,
}

/// How a point of a non-allocation item enters its unit seeds (`seed_by` in the config).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SeedBy {
    /// Its position in the plan (the default): `derive_seed(seed, [item, point, run])`.
    #[default]
    Index,
    /// Its series name and grid values: `derive_seed(seed, [item, hash("name|k=4,n=100"),
    /// run])`. Two items with the same `seed`, the same seed item and `seed_by = "values"`
    /// give a point with the same series name, grid values, parameters and process the same
    /// runs, whatever else their grids hold; the checkpoint key then names the point the same
    /// way and leaves out the reported statistic (the runs record every metric), so the
    /// second item reads the first item's runs. Dynamic items only: a graph item also draws
    /// its topology from its own id, and a potential item's runs depend on its statistic.
    Values,
}

impl SeedBy {
    /// The seed scheme, as the metadata records it.
    pub fn scheme(self) -> &'static str {
        match self {
            Self::Index => "derive_seed(seed, [hash_str(item), point, run])",
            Self::Values => {
                "derive_seed(seed, [hash_str(item), hash_str(\"series|grid values\"), run])"
            }
        }
    }
}

/// `[quick]` / `[reduced]` of a non-allocation item.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KindScale {
    #[serde(default)]
    pub runs: Option<u64>,
    #[serde(default)]
    pub grid: BTreeMap<String, Located<toml::Value>>,
    #[serde(default)]
    pub point: BTreeMap<String, Located<Formula>>,
}

/// One `[[series]]` of a non-allocation item.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KindSeries {
    pub name: String,
    /// The process (`{ kind = … }`), interpreted by the item kind.
    #[serde(default)]
    pub process: Option<toml::Value>,
    /// Graph kinds: the topology, a `ballast-graph` shorthand with `{param}` placeholders
    /// (`"torus:2"`, `"gnp:{p}:connected"`) or a table through the topology registry
    /// (`{ kind = "torus", dim = 2 }`, numbers may be formulas).
    #[serde(default)]
    pub graph: Option<toml::Value>,
    /// Potential kinds: the potential as `ballast-potential` spec text, with placeholders.
    #[serde(default)]
    pub potential: Option<String>,
    /// Potential kinds: several potentials tracked in the same runs (one row group each).
    #[serde(default)]
    pub potentials: Option<Vec<String>>,
    pub statistic: String,
    /// Graph kinds: further statistics of the same runs (rows marked `also`).
    #[serde(default)]
    pub also: Option<Vec<String>>,
    /// Graph kinds: the tie rule between the two endpoints (`random`, `first`, …).
    #[serde(default)]
    pub tie_break: Option<String>,
    /// Graph kinds: ball weights (`{ kind = "exp", mean = 1 }`, the core's weight laws).
    #[serde(default)]
    pub weights: Option<crate::config::RawWeights>,
    #[serde(default)]
    pub params: BTreeMap<String, Formula>,
    /// Series name in the reference files (`{var}` placeholders; `""`: none).
    #[serde(default)]
    pub reference: Option<String>,
    /// Dynamic items: the loads before the first round, `start = { kind = … }` as in
    /// allocation series (the core registry's starts).
    #[serde(default)]
    pub start: Option<crate::config::RawStart>,
    /// The start of [`KindSeries::start`], resolved at parsing (a `file` read relative to
    /// the config's directory).
    #[serde(skip)]
    pub start_state: Option<ballast_core::Start>,
    /// Graph kinds: the edge-list files of `graph` checked at validation, by path and
    /// options (their vertex count or the message), so that a file shared by many points is
    /// read once.
    #[serde(skip)]
    pub graph_files: GraphFiles,
}

/// The edge-list files a graph series' validation has read: (path, options) → vertex count
/// or the message.
pub(crate) type GraphFiles = std::sync::Arc<
    std::sync::Mutex<
        std::collections::HashMap<
            (std::path::PathBuf, ballast_graph::io::EdgeListOptions),
            Result<usize, String>,
        >,
    >,
>;

/// Column names of a reference CSV in another layout than the runner's.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Columns {
    pub n: String,
    pub x: String,
    pub value: String,
}

/// One `[[reference]]` of a non-allocation item: a file or a closed form.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct KindReference {
    pub label: String,
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub theory: Option<String>,
    #[serde(default)]
    pub columns: Option<Columns>,
    /// Runs behind each published value (default: the file's `runs` column, or 1).
    #[serde(default)]
    pub runs: Option<u64>,
    /// Rounds behind each published time average (round-based items): the reference's
    /// standard error is ours scaled by sqrt(our runs·rounds / (its runs·rounds)).
    #[serde(default)]
    pub rounds: Option<u64>,
    /// Added to every published value.
    #[serde(default)]
    pub offset: f64,
    /// Rounding unit of the published values (adds precision²/12 to its variance).
    #[serde(default)]
    pub precision: f64,
}

/// A validated non-allocation item.
#[derive(Debug)]
pub(crate) struct KindExperiment {
    pub kind: &'static dyn ItemKind,
    pub cfg: KindConfig,
    /// Resolved statistic per series.
    pub statistics: Vec<Statistic>,
}

/// One point of a non-allocation plan.
#[derive(Clone, Debug)]
pub(crate) struct KPoint {
    pub series: usize,
    pub grid: Vec<(String, f64)>,
    pub x: f64,
    /// Grid variables and every evaluated parameter.
    pub params: BTreeMap<String, f64>,
}

impl KPoint {
    pub fn get(&self, k: &str) -> Option<f64> {
        self.params.get(k).copied()
    }

    /// A non-negative integer parameter.
    pub fn count(&self, k: &str) -> Result<u64, String> {
        let v = self.get(k).ok_or_else(|| format!("parameter `{k}` is required"))?;
        crate::formula::exact_integer(v).map_err(|e| format!("`{k}` = {e}"))?;
        if !(v.is_finite() && v >= 0.0) || (v - v.round()).abs() > 1e-6 {
            return Err(format!("`{k}` = {v}: expected a non-negative integer"));
        }
        Ok(v.round() as u64)
    }

    fn vars(&self) -> Vec<(&str, f64)> {
        self.params.iter().map(|(k, v)| (k.as_str(), *v)).collect()
    }

    /// Replaces `{name}` placeholders by parameter values.
    pub fn fill(&self, template: &str) -> String {
        let mut s = template.to_string();
        for (k, v) in &self.params {
            s = s.replace(&format!("{{{k}}}"), &num(*v));
        }
        s
    }
}

/// The plan of a non-allocation item at one scale.
#[derive(Debug)]
pub(crate) struct KPlan {
    pub points: Vec<KPoint>,
    pub runs: u64,
    pub scale: Scale,
}

/// The series' start states of a non-allocation config, resolved once (a `file` relative to
/// the config's directory) and refused for the kinds that take none.
fn resolve_starts(
    kind: &'static dyn ItemKind,
    cfg: &mut KindConfig,
    path: &Path,
    problems: &mut Problems<'_>,
) {
    // Start states: resolved once (a `file` relative to the config's directory); only
    // for the kinds that take them.
    let dir = path.parent().unwrap_or(Path::new("."));
    for (si, s) in cfg.series.iter_mut().enumerate() {
        let span = s.span();
        let series = s.get_mut();
        // A deletion model's schedule file: relative to the config's directory.
        if let Some(toml::Value::String(p)) = series
            .process
            .as_mut()
            .filter(|_| kind.name() == "dynamic")
            .and_then(|v| v.get_mut("schedule"))
        {
            *p = dir.join(p.as_str()).to_string_lossy().into_owned();
        }
        let Some(raw) = &series.start else { continue };
        let ctx = format!("series `{}`", series.name);
        if !kind.takes_start() {
            problems.at(
                span,
                Msg::in_ctx(
                    &ctx,
                    format!(
                        "`start` applies to allocation series and dynamic items (rbb, \
                     leaky_bins, infinite_azar, random_deletions, insert_delete), not to {} \
                     items",
                        kind.name()
                    ),
                ),
            );
            problems.skip_series(si);
            continue;
        }
        match crate::start::resolve_start(Some(raw), dir, &ctx) {
            Ok(start) => series.start_state = Some(start),
            Err((field, msg)) => {
                // At the key the problem is about (`start.path` for a file).
                let mut at = vec![Seg::Key("series".into()), Seg::Index(si)];
                at.extend(field.iter().flat_map(|f| f.split('.')).map(|f| Seg::Key(f.into())));
                problems.at_path(&at, false, msg);
                problems.skip_series(si);
            }
        }
    }
}

/// Each series' statistic (the first of the kind where the name is refused) and the checks of
/// its kind-specific fields and parameters.
fn check_series(
    kind: &'static dyn ItemKind,
    cfg: &KindConfig,
    problems: &mut Problems<'_>,
) -> Vec<Statistic> {
    let params = kind.params();
    let hint = |k: &str| ballast_core::registry::did_you_mean(k, params.iter().copied());
    let mut statistics = Vec::new();
    for (si, s) in cfg.series.iter().enumerate() {
        let skipped = problems.skips_series(si);
        match Statistic::from_name_in(&s.get_ref().statistic, kind.statistics()) {
            Ok(m) => statistics.push(m),
            Err(e) => {
                if !skipped {
                    let ctx = format!("series `{}`", s.get_ref().name);
                    problems.at(s.span(), Msg::in_ctx(&ctx, e));
                    problems.skip_series(si);
                }
                statistics.push(kind.statistics()[0]);
            }
        }
        let given = {
            let v = s.get_ref();
            [
                v.graph.is_some(),
                v.potential.is_some(),
                v.potentials.is_some(),
                v.also.is_some(),
                v.tie_break.is_some(),
                v.weights.is_some(),
            ]
        };
        for (field, _) in SERIES_FIELDS.iter().zip(given).filter(|(_, g)| *g) {
            if !kind.series_fields().contains(field) && !skipped {
                let takes = kind.series_fields();
                let takes = if takes.is_empty() { "none".into() } else { takes.join(", ") };
                problems.at_path(
                    &[Seg::Key("series".into()), Seg::Index(si), Seg::Key((*field).into())],
                    true,
                    Msg::in_ctx(
                        &format!("series `{}`", s.get_ref().name),
                        format!(
                            "`{field}` is not read by {} items (of the kind-specific series \
                             fields they take: {takes})",
                            kind.name()
                        ),
                    ),
                );
                problems.skip_series(si);
            }
        }
        for k in s.get_ref().params.keys() {
            if !params.contains(&k.as_str()) && !skipped {
                problems.at(
                    s.span(),
                    Msg::in_ctx(
                        &format!("series `{}`", s.get_ref().name),
                        format!(
                            "unknown parameter `{k}`: {} items take {}{}",
                            kind.name(),
                            params.join(", "),
                            hint(k)
                        ),
                    ),
                );
                problems.skip_series(si);
            }
        }
    }
    statistics
}

impl KindExperiment {
    /// Parses and validates (every point of every scale) a non-allocation config.
    pub(crate) fn parse(
        kind: &'static dyn ItemKind,
        path: &Path,
        input: Input<'_>,
    ) -> Result<Self, Error> {
        // Every problem at once (see `Experiment::parse`): schema errors, then the value
        // checks of every scale, skipping what the schema errors touched.
        let source = input.located_text();
        let (cfg, schema) = input
            .deserialize::<KindConfig>()
            .map_err(|errors| {
                let mut p = Problems::new(path, source);
                for (span, msg) in errors {
                    p.at(span, msg);
                }
                p.into_error()
            })?
            .split();
        let mut cfg = cfg;
        let mut problems = Problems::with_schema(path, source, &schema);
        if schema.taint.global {
            return Err(problems.into_error());
        }
        resolve_starts(kind, &mut cfg, path, &mut problems);
        let statistics = check_series(kind, &cfg, &mut problems);
        let params = kind.params();
        let hint = |k: &str| ballast_core::registry::did_you_mean(k, params.iter().copied());
        let point_maps = std::iter::once(&cfg.point)
            .chain(cfg.quick.iter().map(|q| &q.point))
            .chain(cfg.reduced.iter().map(|q| &q.point));
        for map in point_maps {
            for (k, f) in map {
                if !params.contains(&k.as_str()) {
                    problems.at(
                        f.span(),
                        format!(
                            "unknown parameter `{k}`: {} items take {}{}",
                            kind.name(),
                            params.join(", "),
                            hint(k)
                        ),
                    );
                }
            }
        }
        for rf in &cfg.references {
            let v = rf.get_ref();
            if v.file.is_some() == v.theory.is_some() {
                problems.at(rf.span(), "a reference needs exactly one of `file` or `theory`");
            }
        }
        // Shared seeds only where the checkpoint key names everything a run depends on: a
        // graph item also draws its topology from the item id, a potential item's runs
        // depend on its statistic.
        if !kind.shares_runs() && cfg.seed_by != SeedBy::Index {
            problems.at(
                None,
                format!(
                    "`seed_by` is supported by dynamic items only, not by {} items",
                    kind.name()
                ),
            );
        } else if !kind.takes_seed_item() && cfg.seed_item.is_some() {
            problems.at(
                None,
                format!(
                    "`seed_item` is supported by dynamic and graph items only, not by {} items",
                    kind.name()
                ),
            );
        }
        // By values, a point is named by its series name: two series of one name would run
        // on the same seeds.
        if cfg.seed_by == SeedBy::Values {
            let mut seen = std::collections::BTreeSet::new();
            for s in &cfg.series {
                if !seen.insert(s.get_ref().name.as_str()) {
                    problems.at(
                        s.span(),
                        Msg::in_ctx(
                            &format!("series `{}`", s.get_ref().name),
                            "with `seed_by = \"values\"` series names must be unique",
                        ),
                    );
                }
            }
        }
        let exp = Self { kind, cfg, statistics };
        for scale in [Scale::Full, Scale::Quick, Scale::Reduced] {
            if scale == Scale::Full || exp.scale_table(scale).is_some() {
                exp.plan_into(scale, &mut problems);
            }
        }
        problems.into_result()?;
        Ok(exp)
    }

    /// The allocation config that stands in for a non-allocation item (no series: its plan
    /// is empty), with the shared fields filled in.
    pub(crate) fn stub_raw(&self) -> RawConfig {
        const STUB: &str = "title = \"\"\nseed = 0\nruns = 1\nx = { variable = \"x\" }\n\
                            grid = { x = [0] }\nseries = []\n";
        let mut raw: RawConfig = toml::from_str(STUB).expect("the stub config parses");
        raw.title = self.cfg.title.clone();
        raw.notes = self.cfg.notes.clone();
        raw.seed = self.cfg.seed;
        raw
    }

    fn scale_table(&self, scale: Scale) -> Option<&KindScale> {
        match scale {
            Scale::Full => None,
            Scale::Quick => self.cfg.quick.as_ref(),
            Scale::Reduced => self.cfg.reduced.as_ref(),
        }
    }

    /// Expands the grid and evaluates the parameters of every point, validating each with
    /// its kind.
    pub(crate) fn plan(&self, path: &Path, source: &str, scale: Scale) -> Result<KPlan, Error> {
        let mut problems = Problems::new(path, source);
        let plan = self.plan_into(scale, &mut problems);
        problems.into_result()?;
        Ok(plan)
    }

    /// [`KindExperiment::plan`], adding its problems to `problems`.
    fn plan_into(&self, scale: Scale, problems: &mut Problems<'_>) -> KPlan {
        let over = self.scale_table(scale);
        let runs = over.and_then(|q| q.runs).unwrap_or(*self.cfg.runs.get_ref());
        if runs == 0 {
            problems.at(self.cfg.runs.span(), "`runs` must be at least 1");
        }
        let mut grid = Grid::read(&self.cfg.grid, over.map(|q| &q.grid), scale.name(), problems);
        let known: Vec<&str> = self.cfg.grid.keys().map(String::as_str).collect();
        let hint = |k: &str| ballast_core::registry::did_you_mean(k, known.iter().copied());
        let xvar = self.cfg.x.variable.get_ref().clone();
        let time_x = self.statistics.first().is_some_and(|m| self.kind.time_axis(*m));
        if !time_x && !self.cfg.grid.contains_key(&xvar) {
            problems.at(
                self.cfg.x.variable.span(),
                format!(
                    "x variable `{xvar}` is not a grid variable, expected one of: {}{}",
                    known.join(", "),
                    hint(&xvar)
                ),
            );
        }
        // Validation expands every point: refuse grids too large to expand.
        grid.check_size(&self.cfg.grid, self.cfg.series.len(), scale.name(), problems);
        if !grid.ok {
            return KPlan { points: Vec::new(), runs, scale };
        }
        let combos = grid.combinations(&xvar);
        let mut points = Vec::new();
        for (si, s) in self.cfg.series.iter().enumerate() {
            let series = s.get_ref();
            if problems.skips_series(si) {
                continue;
            }
            for combo in &combos {
                let mut formulas: BTreeMap<&str, &Formula> =
                    self.cfg.point.iter().map(|(k, f)| (k.as_str(), f.get_ref())).collect();
                if let Some(q) = over {
                    formulas.extend(q.point.iter().map(|(k, f)| (k.as_str(), f.get_ref())));
                }
                formulas.extend(series.params.iter().map(|(k, f)| (k.as_str(), f)));
                let mut params: BTreeMap<String, f64> = combo.iter().cloned().collect();
                let ctx = format!("series `{}` at {}", series.name, grid::describe(combo));
                match crate::formula::eval_named(&formulas, &mut params) {
                    Ok(()) => {}
                    Err(e) => {
                        if problems.first_report(si, "params", &s.span()) {
                            problems.at(s.span(), Msg::in_ctx(&ctx, e.to_string()));
                        }
                        continue;
                    }
                }
                let x = combo.iter().find(|(k, _)| *k == xvar).map_or(0.0, |(_, v)| *v);
                let p = KPoint { series: si, grid: combo.clone(), x, params };
                if let Err(e) = self.kind.validate(series, self.statistics[si], &p) {
                    let msg = Msg::in_ctx(&ctx, e.message.to_string());
                    if e.field.is_empty() {
                        if problems.first_report(si, "check", &s.span()) {
                            problems.at(s.span(), msg);
                        }
                    } else if problems.first_report(si, &e.field.join("."), &None) {
                        let mut path = vec![Seg::Key("series".into()), Seg::Index(si)];
                        path.extend(e.field.iter().map(|f| Seg::Key(f.clone())));
                        problems.at_path(&path, e.key, msg);
                    }
                }
                points.push(p);
            }
        }
        let units = (points.len() as u128) * u128::from(runs);
        if units > crate::MAX_UNITS {
            problems.at(
                self.cfg.runs.span(),
                format!(
                    "`runs` = {runs} at {} points is {units} runs in all; at most {} runs of an \
                     item are allowed (their outcomes are held in memory until the item is \
                     aggregated): use fewer runs, or split the grid into several items",
                    points.len(),
                    crate::MAX_UNITS
                ),
            );
        }
        KPlan { points, runs, scale }
    }

    /// What `[quick]`/`[reduced]` changes, in words.
    pub(crate) fn scale_changes(&self, scale: Scale) -> String {
        let Some(q) = self.scale_table(scale) else { return String::new() };
        let mut parts = Vec::new();
        if let Some(r) = q.runs {
            parts.push(format!("runs {r} (full: {})", self.cfg.runs.get_ref()));
        }
        for (k, v) in &q.grid {
            let full = self.cfg.grid.get(k).map(|f| f.get_ref().to_string()).unwrap_or_default();
            parts.push(format!("grid {k} = {} (full: {full})", v.get_ref()));
        }
        for (k, f) in &q.point {
            let full = self.cfg.point.get(k).map_or("–".to_string(), |f| f.get_ref().to_string());
            parts.push(format!("{k} = {} (full: {full})", f.get_ref()));
        }
        parts.join("; ")
    }
}

/// A loaded reference: a published table (the runner's format or other columns), or a
/// closed form of the kind.
pub(crate) enum LoadedRef {
    /// The runner's reference format.
    Table(ReferenceTable),
    /// Another layout: values by (n, x).
    Columns(ColumnTable),
    /// A closed form of the kind, by name.
    Theory(String),
}

/// What a kind knows about one output row, for the references.
#[derive(Clone)]
pub(crate) struct RowCtx<'a> {
    pub point: &'a KPoint,
    pub statistic: Statistic,
    pub series_ref: Option<String>,
    pub n: u64,
    pub b: Option<u64>,
    /// Rounds behind our value (round-based items), for scaling the reference's error.
    pub rounds: Option<u64>,
}

/// Mixing diagnostics of one row: (series, grid, mean drift z, mean lag-1 autocorrelation).
pub(crate) type Diagnostic = (String, Vec<(String, f64)>, f64, f64);

/// The common driver of the kinds: loads the references, builds rows and the metadata.
pub(crate) struct Driver<'a> {
    pub exp: &'a ConfigFile,
    pub kexp: &'a KindExperiment,
    pub plan: KPlan,
    pub refs: Vec<(KindReference, LoadedRef)>,
    pub pool: rayon::ThreadPool,
    pub start: crate::result::Clock,
    pub rows: Vec<Row>,
    pub engine: String,
    pub balls: u128,
    pub extra_notes: String,
    /// The topologies built (graph items).
    pub graphs: Vec<ballast_graph::GraphInfo>,
    /// Row-group names in legend order (default: the config's series names; a kind may split
    /// a series into several groups).
    pub series_names: Vec<String>,
    /// Mixing diagnostics of time averages: (series, grid, mean drift z, mean lag-1).
    pub diagnostics: Vec<Diagnostic>,
    pub opts: RunOptions,
    /// The units of all shards (merge mode).
    pub merged: Option<&'a crate::units::Merged>,
    /// Points whose every run came from checkpoints written before this invocation (or
    /// shard files), and their recorded time.
    pub stored_points: usize,
    /// Points whose every run came from checkpoints written in this invocation.
    pub shared_points: usize,
    pub stored_wall_s: f64,
    /// The recorded CPU time of the same points.
    pub stored_cpu_s: f64,
    /// This machine's units, when it runs a shard.
    pub shard: Option<Box<crate::units::ShardFile>>,
}

impl<'a> Driver<'a> {
    fn new(
        exp: &'a ConfigFile,
        kexp: &'a KindExperiment,
        opts: &RunOptions,
        merged: Option<&'a crate::units::Merged>,
    ) -> Result<Self, Error> {
        let scale = if opts.quick {
            Scale::Quick
        } else if opts.reduced && kexp.cfg.reduced.is_some() {
            Scale::Reduced
        } else {
            Scale::Full
        };
        let plan = kexp.plan(&exp.path, exp.located_text(), scale)?;
        let mut refs = Vec::new();
        for (i, r) in kexp.cfg.references.iter().enumerate() {
            let r = r.get_ref().clone();
            let dir = &opts.reference_dir;
            let located = |e| crate::reference::at_config_key(exp, i, e);
            let loaded = match (&r.file, &r.theory, &r.columns) {
                (Some(f), _, Some(c)) => LoadedRef::Columns(
                    ColumnTable::load(dir, f, &c.n, &c.x, &c.value).map_err(located)?,
                ),
                (Some(f), _, None) => {
                    LoadedRef::Table(ReferenceTable::load(dir, f, &r.label).map_err(located)?)
                }
                (None, Some(t), _) => LoadedRef::Theory(t.clone()),
                (None, None, _) => unreachable!("validated: file or theory"),
            };
            refs.push((r, loaded));
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(opts.threads)
            .build()
            .map_err(|e| Error::ThreadPool(e.to_string()))?;
        Ok(Self {
            exp,
            kexp,
            plan,
            refs,
            pool,
            start: crate::result::Clock::start(exp),
            rows: Vec::new(),
            engine: String::new(),
            balls: 0,
            extra_notes: String::new(),
            graphs: Vec::new(),
            series_names: kexp.cfg.series.iter().map(|s| s.get_ref().name.clone()).collect(),
            diagnostics: Vec::new(),
            opts: opts.clone(),
            merged,
            stored_points: 0,
            shared_points: 0,
            stored_wall_s: 0.0,
            stored_cpu_s: 0.0,
            shard: None,
        })
    }

    /// The item id the unit seeds (and a graph item's topologies) derive from (`seed_item`,
    /// else the item's own id).
    pub(crate) fn seed_item(&self) -> &str {
        self.kexp.cfg.seed_item.as_deref().unwrap_or(self.exp.id())
    }

    /// `name|k=4,n=100`: the series name and grid values of point `pi` (for `seed_by =
    /// "values"`).
    fn point_label(&self, pi: usize) -> String {
        let p = &self.plan.points[pi];
        let name = &self.kexp.cfg.series[p.series].get_ref().name;
        let grid: Vec<String> = p.grid.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("{name}|{}", grid.join(","))
    }

    /// The checkpoint key of point `pi`: everything its runs depend on.
    pub fn point_key(&self, pi: usize) -> String {
        use sha2::Digest;
        let p = &self.plan.points[pi];
        let s = self.kexp.cfg.series[p.series].get_ref();
        // How the point is named: by its position (and, with it, the statistic), or by
        // value (dynamic items only, checked at load: their runs record every metric, so the
        // statistic is left out and items reporting different ones share runs).
        let (point, statistic) = match self.kexp.cfg.seed_by {
            SeedBy::Index => (format!("point {pi}"), format!("{:?} ", s.statistic)),
            SeedBy::Values => (format!("by value {:?}", self.point_label(pi)), String::new()),
        };
        let text = format!(
            "ballast-runner {} units v{} | kind {} | seeds v{SEED_DERIVATION_VERSION} {} {} \
             {point} runs {} | {:?} {:?} {:?} {statistic}{:?} | {:?}{}",
            env!("CARGO_PKG_VERSION"),
            crate::units::UNIT_FORMAT,
            self.kexp.kind.name(),
            self.kexp.cfg.seed,
            self.seed_item(),
            self.plan.runs,
            s.process,
            s.graph,
            s.potential,
            s.params,
            p.params,
            self.kexp.kind.key_extra(s)
        );
        // The start only where it is set, so existing checkpoints stay valid.
        let text = match &s.start_state {
            Some(start) => format!("{text} | start {start:?}"),
            None => text,
        };
        format!("{:x}", sha2::Sha256::digest(text.as_bytes()))
    }

    /// Runs (or reads from checkpoints or shard files) the units of the points `pis`: per
    /// point, the outcomes of runs `0..runs` of `f(point, run)`. `balls` is the per-run work
    /// shown by the progress bar. `None` when this machine runs a shard: its units are in
    /// [`Driver::shard`] and the kind has nothing to aggregate.
    pub fn units<T, F>(
        &mut self,
        pis: &[usize],
        balls: &dyn Fn(usize) -> u64,
        f: F,
    ) -> Result<Option<Vec<Vec<T>>>, Error>
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Send,
        F: Fn(usize, u64) -> Result<T, Error> + Sync,
    {
        let points: Vec<crate::units::PointUnits> = pis
            .iter()
            .map(|&pi| crate::units::PointUnits {
                point: pi,
                key: self.point_key(pi),
                balls: balls(pi),
            })
            .collect();
        let job = crate::units::UnitJob {
            opts: &self.opts,
            pool: &self.pool,
            label: self.exp.id(),
            runs: self.plan.runs,
            merged: self.merged,
        };
        match crate::units::run_units(&job, &points, f)? {
            crate::units::Executed::Complete(done) => {
                self.stored_points += done.stored_points;
                self.shared_points += done.shared_points;
                self.stored_wall_s += done.stored_wall_s;
                self.stored_cpu_s += done.stored_cpu_s;
                Ok(Some(done.outs))
            }
            crate::units::Executed::Shard(f) => {
                self.shard = Some(f);
                Ok(None)
            }
        }
    }

    /// The seed of run `run` of point `point` (see [`SeedBy`]).
    pub fn seed(&self, point: usize, run: u64) -> u64 {
        match self.kexp.cfg.seed_by {
            SeedBy::Index => {
                crate::Plan::unit_seed(self.kexp.cfg.seed, self.seed_item(), point, run)
            }
            SeedBy::Values => ballast_core::rng::derive_seed(
                self.kexp.cfg.seed,
                &[
                    ballast_core::rng::hash_str(self.seed_item()),
                    ballast_core::rng::hash_str(&self.point_label(point)),
                    run,
                ],
            ),
        }
    }

    /// Pushes one row: `summary` compared with every reference; `theory` evaluates the
    /// kind's closed forms.
    pub fn push(
        &mut self,
        ctx: RowCtx<'_>,
        x: f64,
        summary: Summary,
        theory: &dyn Fn(&str, &RowCtx<'_>) -> Option<f64>,
    ) {
        let p = ctx.point;
        let mut cmp = Vec::new();
        for (r, loaded) in &self.refs {
            let value = match loaded {
                LoadedRef::Table(t) => ctx
                    .series_ref
                    .as_deref()
                    .and_then(|s| t.get_at(s, ctx.n, ctx.b, x))
                    .map(|rp| (rp.value, rp.runs)),
                LoadedRef::Columns(m) => ctx
                    .series_ref
                    .as_ref()
                    .and_then(|_| m.get(ctx.n, x))
                    .map(|v| (v, r.runs.unwrap_or(1))),
                LoadedRef::Theory(name) => theory(name, &ctx).map(|v| (v, 0)),
            };
            cmp.push(value.map(|(v, runs)| compare(&summary, v + r.offset, runs, r, ctx.rounds)));
        }
        // Rows whose x is a value of the statistic (a histogram) keep the whole grid.
        let group = p
            .grid
            .iter()
            .filter(|(k, _)| {
                ctx.statistic == Statistic::MaxLoadHistogram
                    || k != self.kexp.cfg.x.variable.get_ref()
            })
            .cloned()
            .collect();
        self.rows.push(Row {
            series: self.kexp.cfg.series[p.series].get_ref().name.clone(),
            group,
            n: ctx.n,
            b: ctx.b,
            m: p.get("m").map_or(0, |m| m.max(0.0) as u64),
            x,
            statistic: ctx.statistic,
            summary,
            refs: cmp,
            theory: None,
            also: false,
            values: Vec::new(),
        });
    }

    /// Gives the row pushed last the per-run values its summary was taken of
    /// ([`Row::values`]).
    pub fn last_values(&mut self, values: Vec<f64>) {
        if let Some(row) = self.rows.last_mut() {
            row.values = values;
        }
    }

    /// Pushes a row of a further statistic of the same runs (`also`, potentials) under
    /// `series`: no references, left out of the figure.
    pub fn push_also(&mut self, ctx: RowCtx<'_>, x: f64, summary: Summary, series: String) {
        let p = ctx.point;
        let group = p
            .grid
            .iter()
            .filter(|(k, _)| k != self.kexp.cfg.x.variable.get_ref())
            .cloned()
            .collect();
        self.rows.push(Row {
            series,
            group,
            n: ctx.n,
            b: ctx.b,
            m: p.get("m").map_or(0, |m| m.max(0.0) as u64),
            x,
            statistic: ctx.statistic,
            summary,
            refs: self.refs.iter().map(|_| None).collect(),
            theory: None,
            also: true,
            values: Vec::new(),
        });
    }

    fn finish(self, opts: &RunOptions) -> ItemResult {
        let exp = self.exp;
        let k = self.kexp;
        let wall = self.start.wall_s();
        let scale = self.plan.scale;
        let references = self
            .refs
            .iter()
            .map(|(r, _)| {
                let source =
                    r.file.clone().or_else(|| r.theory.clone().map(|t| format!("theory:{t}")));
                (r.label.clone(), source.unwrap_or_default())
            })
            .collect();
        let meta = Metadata::new(
            exp,
            opts,
            Execution {
                title: k.cfg.title.clone(),
                seed: k.cfg.seed,
                seed_scheme: self.kexp.cfg.seed_by.scheme().to_string(),
                engine: self.engine,
                scale,
                scale_changes: k.scale_changes(scale),
                sampling: None,
                stopping: Vec::new(),
                cached_points: self.stored_points,
                shared_points: self.shared_points,
                shards: self.merged.map(|m| m.shards),
                threads: self.pool.current_num_threads(),
                runs: self.plan.runs,
                points: self.plan.points.len(),
                wall_time_s: wall + self.stored_wall_s,
                cpu_time_s: self.start.cpu_s().map(|c| c + self.stored_cpu_s),
                git_revision: self.start.git_revision(),
                balls_simulated: self.balls,
                references,
            },
        );
        let mut notes = k.cfg.notes.trim().to_string();
        if !self.diagnostics.is_empty() {
            use std::fmt::Write as _;
            let mut t = String::from(
                "### Mixing diagnostics\n\nPer series and point, averaged over runs: the drift \
                 between the two halves of the measured rounds in standard errors (roughly \
                 N(0, 1) when stationary) and the lag-1 autocorrelation of the batch means (near \
                 0 when the batches are long enough for the batch-means standard error).\n\n\
                 | series | point | drift z | lag-1 |\n|---|---|---|---|\n",
            );
            for (s, g, dz, l1) in &self.diagnostics {
                let (s, g) = (crate::markdown::text(s), crate::markdown::text(&grid::describe(g)));
                let _ = writeln!(t, "| {s} | {g} | {dz:+.2} | {l1:+.2} |");
            }
            notes = format!("{notes}\n\n{t}");
        }
        if !self.extra_notes.is_empty() {
            notes = format!("{notes}\n\n{}", self.extra_notes.trim());
        }
        let frame = frame(k);
        ItemResult {
            meta,
            rows: self.rows,
            series: self.series_names,
            ref_labels: self.refs.iter().map(|(r, _)| r.label.clone()).collect(),
            notes,
            warnings: Vec::new(),
            layout: k.cfg.report.layout,
            mark_minima: frame.mark_minima,
            x_log: frame.x_log,
            y_log: frame.y_log,
            x_label: frame.x_label,
            y_label: frame.y_label,
            graphs: self.graphs,
        }
    }
}

/// Our value against one reference value. Published values: se_ref = sd_ours/sqrt(runs)
/// (independent runs) or, for time averages, se_ours·sqrt(our runs·rounds / (its
/// runs·rounds)), plus the rounding variance precision²/12. Closed forms: se_ref = 0; when
/// our standard error is 0 too (every run gave the same integer), a difference is measured
/// against the rule-of-three bound sqrt(3)/runs.
fn compare(
    s: &Summary,
    value: f64,
    runs: u64,
    r: &KindReference,
    rounds: Option<u64>,
) -> Comparison {
    let runs = r.runs.unwrap_or(runs);
    let se_ref = if r.theory.is_some() {
        0.0
    } else {
        let base = match (r.rounds, rounds) {
            (Some(theirs), Some(ours)) => {
                s.stderr
                    * ((s.runs as f64 * ours as f64) / (runs.max(1) as f64 * theirs as f64)).sqrt()
            }
            _ => s.sd / (runs.max(1) as f64).sqrt(),
        };
        (base * base + r.precision * r.precision / 12.0).sqrt()
    };
    Comparison { value, runs, stderr: se_ref, z: mean_z(s, value, se_ref, ZeroErrors::RuleOfThree) }
}

/// A summary from a mean and a standard error (time averages: the kind's standard error of
/// the mean over runs; `sd` is then stderr·sqrt(runs)).
pub(crate) fn summary_of(mean: f64, stderr: f64, runs: usize) -> Summary {
    Summary {
        mean,
        stderr,
        sd: stderr * (runs as f64).sqrt(),
        runs,
        rounding: Rounding::Ceil,
        distribution: BTreeMap::new(),
    }
}

/// The figure frame of a non-allocation item: the config's axis labels, or the x variable
/// and the first series' statistic.
pub(crate) fn frame(k: &KindExperiment) -> crate::figure::FigureFrame {
    let statistic = k.statistics.first().copied().unwrap_or(Statistic::FinalGap);
    crate::figure::FigureFrame {
        x_label: k.cfg.x.label.clone().unwrap_or_else(|| k.cfg.x.variable.get_ref().clone()),
        y_label: k.cfg.y_label.clone().unwrap_or_else(|| statistic.describe().to_string()),
        x_log: k.cfg.x.log,
        y_log: k.cfg.y_log,
        mark_minima: k.cfg.report.mark_minima,
    }
}

/// Runs a non-allocation experiment.
pub(crate) fn run(
    exp: &ConfigFile,
    kexp: &KindExperiment,
    opts: &RunOptions,
    merged: Option<&crate::units::Merged>,
) -> Result<Outcome, Error> {
    if !kexp.kind.checkpointed() && (opts.shard.is_some() || merged.is_some()) {
        return Err(Error::Shard {
            path: exp.path().to_path_buf(),
            message: format!(
                "{} items cannot be sharded yet (they keep no checkpoints and run in minutes \
                 on one machine): run them without --shard",
                kexp.kind.name()
            ),
        });
    }
    let mut d = Driver::new(exp, kexp, opts, merged)?;
    if !kexp.kind.checkpointed() && opts.cached_only {
        // Potential items keep no checkpoints, so none of their runs is ever stored.
        let points = d.plan.points.len();
        return Err(Error::NotCached {
            item: exp.id().to_string(),
            missing_runs: points * d.plan.runs as usize,
            missing_points: points,
            points,
            checkpoint: None,
        });
    }
    kexp.kind.run(&mut d)?;
    if let Some(f) = d.shard.take() {
        return Ok(Outcome::Shard(f));
    }
    Ok(Outcome::Item(Box::new(d.finish(opts))))
}
