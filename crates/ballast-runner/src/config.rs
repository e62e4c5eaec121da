//! Experiment configuration files: the TOML schema (serde, `deny_unknown_fields`) and its
//! validation into an [`Experiment`]. The format is documented in the crate root.

pub(crate) mod schema;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::Range;
use std::path::{Path, PathBuf};

use ballast_core::{ProcessSpec, Stop, Tau, TieBreak};
use serde::Deserialize;
use toml::Spanned;

use crate::formula::Formula;
use crate::plan::{build_plan, Plan};
use crate::stats::Rounding;
use crate::Error;

type SFormula = Spanned<Formula>;

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
    pub engine: Option<Spanned<String>>,
    pub runs: Spanned<u64>,
    pub x: RawAxis,
    #[serde(default)]
    pub y_label: Option<String>,
    pub grid: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    pub point: RawPoint,
    pub series: Vec<Spanned<RawSeries>>,
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

pub(crate) type RawSampling = Spanned<Sampling>;

/// `[x]`: which grid variable is the x axis.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAxis {
    pub variable: Spanned<String>,
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
}

/// The setting of a series, when it overrides `[point]`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum SettingKind {
    Sequential,
    Batched,
}

/// Which per-run statistic a series reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// Per run the largest gap over the observation points (batch ends), averaged over runs.
    #[default]
    MaxGap,
    /// Gap at the end of the run, averaged over runs.
    FinalGap,
    /// After every batch, the running maximum of the gap, averaged over runs (one row per
    /// batch; the x axis becomes the batch index).
    RunningMaxGap,
    /// The empirical distribution of the gap at the end (or at each block end), rounded by the
    /// series' `round` (default up): one row per gap value, value = percent of samples (the x
    /// axis becomes the gap value).
    Distribution,
    /// The largest load at the end, averaged over runs.
    MaxLoad,
    /// The empirical distribution of the largest load at the end: one row per value, value =
    /// percent of runs (the x axis becomes the max load).
    MaxLoadDistribution,
    /// The gap at the end divided by ln n, averaged over runs.
    GapOverLnN,
    /// Bin samples per ball, averaged over runs.
    SamplesPerBall,
    /// Balls per bin sample (above 1 for Packing and Twinning), averaged over runs.
    BallsPerSample,
    /// Mean number of probes (bin samples) per step, averaged over runs.
    ProbesMean,
    /// Largest number of probes in one step of a run, averaged over runs.
    ProbesMax,
    /// Balls moved per ball allocated (reallocation processes), averaged over runs.
    MovedPerBall,
    /// A statistic of a graph, dynamic or potential item (`kind = …`, see the crate docs);
    /// not accepted in allocation series.
    #[serde(untagged, skip_deserializing)]
    Measure(crate::kinds::Measure),
}

impl Statistic {
    /// Every statistic, for messages.
    pub const NAMES: &'static str = "max_gap, final_gap, running_max_gap, distribution, \
        max_load, max_load_distribution, gap_over_ln_n, samples_per_ball, balls_per_sample, \
        probes_mean, probes_max, moved_per_ball";

    /// The statistics an allocation series may name.
    const ALLOCATION: [Statistic; 12] = [
        Self::MaxGap,
        Self::FinalGap,
        Self::RunningMaxGap,
        Self::Distribution,
        Self::MaxLoad,
        Self::MaxLoadDistribution,
        Self::GapOverLnN,
        Self::SamplesPerBall,
        Self::BallsPerSample,
        Self::ProbesMean,
        Self::ProbesMax,
        Self::MovedPerBall,
    ];

    /// Whether rows of this statistic are a distribution (one row per value, in percent).
    pub fn is_distribution(self) -> bool {
        matches!(self, Self::Distribution | Self::MaxLoadDistribution)
    }

    /// Whether the statistic is a gap or a distribution of gaps (an allocation series'; the
    /// other kinds' measures are not).
    pub fn is_gap(self) -> bool {
        matches!(
            self,
            Self::MaxGap
                | Self::FinalGap
                | Self::RunningMaxGap
                | Self::Distribution
                | Self::GapOverLnN
        )
    }

    /// The snake_case name used in CSV files.
    pub fn name(self) -> &'static str {
        match self {
            Self::MaxGap => "max_gap",
            Self::FinalGap => "final_gap",
            Self::RunningMaxGap => "running_max_gap",
            Self::Distribution => "distribution",
            Self::MaxLoad => "max_load",
            Self::MaxLoadDistribution => "max_load_distribution",
            Self::GapOverLnN => "gap_over_ln_n",
            Self::SamplesPerBall => "samples_per_ball",
            Self::BallsPerSample => "balls_per_sample",
            Self::ProbesMean => "probes_mean",
            Self::ProbesMax => "probes_max",
            Self::MovedPerBall => "moved_per_ball",
            Self::Measure(m) => m.name(),
        }
    }

    /// A human description for axis labels and reports.
    pub fn describe(self) -> &'static str {
        match self {
            Self::MaxGap => "max gap over batch ends (mean over runs)",
            Self::FinalGap => "gap at the end (mean over runs)",
            Self::RunningMaxGap => "running max gap (mean over runs)",
            Self::Distribution => "percent of samples",
            Self::MaxLoad => "max load at the end (mean over runs)",
            Self::MaxLoadDistribution => "percent of runs with this max load",
            Self::GapOverLnN => "gap at the end / ln n (mean over runs)",
            Self::SamplesPerBall => "bin samples per ball (mean over runs)",
            Self::BallsPerSample => "balls per bin sample (mean over runs)",
            Self::ProbesMean => "probes per step (mean over runs)",
            Self::ProbesMax => "largest probes in one step (mean over runs)",
            Self::MovedPerBall => "balls moved per ball (mean over runs)",
            Self::Measure(m) => m.describe(),
        }
    }
}

/// By name; an unknown name is serde's "unknown variant" error listing the allowed names
/// (the derive would say "data did not match any variant" because of [`Statistic::Measure`]).
impl<'de> Deserialize<'de> for Statistic {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        const NAMES: [&str; 12] = [
            "max_gap",
            "final_gap",
            "running_max_gap",
            "distribution",
            "max_load",
            "max_load_distribution",
            "gap_over_ln_n",
            "samples_per_ball",
            "balls_per_sample",
            "probes_mean",
            "probes_max",
            "moved_per_ball",
        ];
        let s = String::deserialize(d)?;
        Self::ALLOCATION
            .iter()
            .copied()
            .find(|v| v.name() == s)
            .ok_or_else(|| serde::de::Error::unknown_variant(&s, &NAMES))
    }
}

/// A process as written in a config: `{ kind = "one_plus_beta", beta = 0.5 }`. (Fields are
/// not `Spanned`: serde buffers internally tagged enums, which loses spans; errors point at
/// the process table instead.)
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum RawProcess {
    OneChoice,
    TwoChoice,
    ThreeChoice,
    DChoice {
        d: Formula,
    },
    OnePlusBeta {
        beta: Formula,
    },
    Quantile {
        delta: Formula,
    },
    MixedQuantile {
        delta: Formula,
        eta: Formula,
    },
    Threshold {
        f: Formula,
    },
    MeanThinning {
        #[serde(default = "yes")]
        strict: bool,
    },
    GBounded {
        g: Formula,
    },
    GMyopic {
        g: Formula,
    },
    SigmaNoisyLoad {
        sigma: Formula,
        #[serde(default)]
        truncate: bool,
    },
    RelativeThreshold {
        f: Formula,
    },
    Twinning {},
    Packing {
        #[serde(default = "one_f")]
        offset: Formula,
    },
    TightPacking {
        #[serde(default = "one_f")]
        offset: Formula,
        #[serde(default)]
        balls: Option<Formula>,
    },
    Memory {
        #[serde(default = "one_f")]
        d: Formula,
        #[serde(default = "one_f")]
        k: Formula,
    },
    Caching {
        #[serde(default = "one_f")]
        d: Formula,
    },
    AlwaysGoLeft {
        d: Formula,
    },
    Adaptive(RawAdaptive),
    Equalize {
        d: Formula,
    },
}

/// `adaptive`: a named preset (`preset` with `d`, `c`) or the open form (`tau`, `cap`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawAdaptive {
    #[serde(default)]
    pub preset: Option<String>,
    #[serde(default)]
    pub d: Option<Formula>,
    #[serde(default)]
    pub c: Option<Formula>,
    #[serde(default)]
    pub tau: Option<RawTau>,
    #[serde(default)]
    pub cap: Option<Formula>,
    /// Presets: measure the thresholds from the average load (τ_k + W/n), for the heavily
    /// loaded case.
    #[serde(default)]
    pub relative: bool,
}

/// The open threshold sequence τ_k = base + per_probe·k + per_average·W/n (−∞ from `until`).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTau {
    #[serde(default)]
    pub base: f64,
    #[serde(default)]
    pub per_probe: f64,
    #[serde(default)]
    pub per_average: f64,
    #[serde(default)]
    pub until: Option<u32>,
}

/// The `adaptive` presets, for messages.
pub(crate) const ADAPTIVE_PRESETS: &str =
    "\"greedy\" (needs `d`), \"threshold_first\" (needs `d` and `c`), \"probe_count\"";

fn one_f() -> Formula {
    Formula::new("1")
}

fn yes() -> bool {
    true
}

/// Ball weights as written in a config.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum RawWeights {
    Unit,
    Exp {
        #[serde(default = "one")]
        mean: f64,
    },
}

fn one() -> f64 {
    1.0
}

/// One `[[series]]` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSeries {
    pub name: String,
    pub process: Spanned<RawProcess>,
    #[serde(default)]
    pub tie_break: Option<Spanned<String>>,
    /// Stopping rule for multi-ball steps: `"truncate"` (default) or `"finish"`.
    #[serde(default)]
    pub stop: Option<Spanned<String>>,
    #[serde(default)]
    pub weights: Option<RawWeights>,
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
    pub runs: Option<Spanned<u64>>,
    #[serde(default)]
    pub grid: BTreeMap<String, Spanned<toml::Value>>,
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

/// A validated experiment: one figure or table of a paper.
#[derive(Debug)]
pub struct Experiment {
    pub(crate) id: String,
    pub(crate) path: PathBuf,
    pub(crate) source: String,
    pub(crate) sha256: String,
    pub(crate) raw: RawConfig,
    /// A graph, dynamic or potential item (`kind = …`); `None`: the allocation path.
    pub(crate) kind: Option<Box<crate::kinds::KindExperiment>>,
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
    pub(crate) list: Vec<String>,
    /// (line, column) of each message, for sorting (`None`: no place, listed last).
    places: Vec<Option<(usize, usize)>>,
    /// Set when the spans given to [`Problems::at`] are those of a repaired copy of `src`.
    remap: Option<&'a schema::Remap>,
    /// Series whose entry had schema errors: their value checks are skipped.
    skip: BTreeSet<usize>,
    /// (series, field, span start) already reported, across scales.
    reported: HashSet<(usize, String, usize)>,
}

impl<'a> Problems<'a> {
    pub(crate) fn new(path: &'a Path, src: &'a str) -> Self {
        Self {
            path,
            src,
            list: Vec::new(),
            places: Vec::new(),
            remap: None,
            skip: BTreeSet::new(),
            reported: HashSet::new(),
        }
    }

    /// Problems of `src` with the schema errors found (their spans already original); later
    /// spans are mapped from the repaired copy the value came from.
    pub(crate) fn with_schema(path: &'a Path, src: &'a str, schema: &'a schema::Schema) -> Self {
        let mut p = Self::new(path, src);
        for (span, msg) in &schema.errors {
            p.push(span.clone(), msg);
        }
        p.remap = schema.remap.as_ref();
        p.skip = schema.taint.series.clone();
        p
    }

    /// Whether the value checks of series `si` are skipped (its entry had schema errors).
    pub(crate) fn skips_series(&self, si: usize) -> bool {
        self.skip.contains(&si)
    }

    /// The spans of series `si`'s process parameters and weights, by name (`beta`,
    /// `tau.base`, `weights.mean`), in the coordinates [`Problems::at`] expects.
    pub(crate) fn param_spans(&self, si: usize) -> std::collections::HashMap<String, Range<usize>> {
        schema::param_spans(self.remap, self.src, si)
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

    pub(crate) fn at(&mut self, span: Option<Range<usize>>, msg: impl AsRef<str>) {
        let span = match (self.remap, span) {
            (Some(r), Some(s)) => r.map(s),
            (_, s) => s,
        };
        self.push(span, msg.as_ref());
    }

    /// A message at the value (or, `key = true`, the key) at `path` of the original text.
    pub(crate) fn at_path(&mut self, path: &[schema::Seg], key: bool, msg: impl AsRef<str>) {
        let span = match self.remap {
            Some(r) => r.original_span(path, key),
            None => schema::span_in(self.src, path, key),
        };
        self.push(span, msg.as_ref());
    }

    fn push(&mut self, span: Option<Range<usize>>, msg: &str) {
        let (loc, place) = match span {
            Some(s) => {
                let (l, c) = line_col(self.src, s.start);
                (format!("{}:{l}:{c}", self.path.display()), Some((l, c)))
            }
            None => (self.path.display().to_string(), None),
        };
        let m = format!("{loc}: {msg}");
        if !self.list.contains(&m) {
            self.list.push(m);
            self.places.push(place);
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
        let mut all: Vec<(Option<(usize, usize)>, String)> =
            self.places.into_iter().zip(self.list).collect();
        all.sort_by_key(|(p, _)| p.unwrap_or((usize::MAX, 0)));
        let mut errors: Vec<String> = all.into_iter().map(|(_, m)| m).collect();
        if errors.is_empty() {
            errors.push(format!("{}: invalid config", self.path.display()));
        }
        Error::Config { path: self.path.to_path_buf(), errors }
    }
}

/// The item id `<paper>/<item>` of `configs/<paper>/<item>.toml`.
pub(crate) fn id_from_path(path: &Path) -> String {
    let item = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    match path.parent().and_then(|p| p.file_name()) {
        Some(paper) => format!("{}/{item}", paper.to_string_lossy()),
        None => item,
    }
}

impl Experiment {
    /// Reads and validates `configs/<paper>/<item>.toml`; the id is `<paper>/<item>`.
    ///
    /// Validation evaluates every formula and checks every point of both the full and the
    /// quick plan with `RunSpec::validate`, so a returned experiment can be run.
    ///
    /// A missing file is an [`Error::Io`]; a file that exists but cannot be read as text (a
    /// directory, no permission, not UTF-8) is an [`Error::Config`] naming the reason (and,
    /// for bad UTF-8, the line and column of the first bad byte).
    pub fn from_path(path: &Path) -> Result<Self, Error> {
        let config_err = |msg: String| Error::Config {
            path: path.to_path_buf(),
            errors: vec![format!("{}: {msg}", path.display())],
        };
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Error::io(path, e)),
            Err(e) if path.is_dir() => {
                return Err(config_err(format!(
                    "cannot read the config: it is a directory ({e}); expected a TOML file such \
                     as configs/<paper>/<item>.toml"
                )))
            }
            Err(e) => return Err(config_err(format!("cannot read the config: {e}"))),
        };
        let source = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => {
                let good = e.utf8_error().valid_up_to();
                let bytes = e.as_bytes();
                let prefix = std::str::from_utf8(&bytes[..good]).unwrap_or_default();
                let (l, c) = line_col(prefix, good);
                return Err(Error::Config {
                    path: path.to_path_buf(),
                    errors: vec![format!(
                        "{}:{l}:{c}: invalid UTF-8 (byte 0x{:02x}): a config must be UTF-8 text",
                        path.display(),
                        bytes[good]
                    )],
                });
            }
        };
        Self::parse(&id_from_path(path), path, &source)
    }

    /// Parses and validates a config from text; `path` is only used in messages and metadata.
    ///
    /// ```
    /// # use std::path::Path;
    /// let toml = r#"
    /// title = "Two-Choice vs One-Choice, batched"
    /// seed = 1
    /// runs = 10
    /// x = { variable = "k", label = "b/n" }
    /// grid = { k = [1, 2, 4] }
    /// point = { n = 100, b = "k*n", batches = 10 }
    ///
    /// [[series]]
    /// name = "Two-Choice"
    /// process = { kind = "two_choice" }
    ///
    /// [[series]]
    /// name = "(1+beta)"
    /// process = { kind = "one_plus_beta", beta = "min(1, sqrt(n/b*ln(n)))" }
    /// "#;
    /// let exp = ballast_runner::Experiment::parse("demo/fig1", Path::new("fig1.toml"), toml).unwrap();
    /// assert_eq!(exp.id(), "demo/fig1");
    /// assert_eq!(exp.plan(false).unwrap().points.len(), 6);
    /// ```
    pub fn parse(id: &str, path: &Path, source: &str) -> Result<Self, Error> {
        use sha2::Digest;
        if let Some(kind) = crate::kinds::detect(source).map_err(|e| {
            let mut p = Problems::new(path, source);
            p.at_path(&[schema::Seg::Key("kind".into())], false, e);
            Error::Config { path: path.to_path_buf(), errors: p.list }
        })? {
            let k = crate::kinds::KindExperiment::parse(kind, path, source)?;
            return Ok(Self {
                id: id.to_string(),
                path: path.to_path_buf(),
                source: source.to_string(),
                sha256: format!("{:x}", sha2::Sha256::digest(source.as_bytes())),
                raw: k.stub_raw(),
                kind: Some(Box::new(k)),
            });
        }
        let parsed = schema::deserialize::<RawConfig>(source).map_err(|errors| {
            let mut p = Problems::new(path, source);
            for (span, msg) in errors {
                p.at(span, msg);
            }
            p.into_error()
        })?;
        // Every problem of every scale, each once; value checks skip what the schema errors
        // touched (they would only report consequences of them).
        let (raw, schema) = parsed.split();
        let mut problems = Problems::with_schema(path, source, &schema);
        if !schema.taint.global {
            validate_raw(&raw, &mut problems);
            for scale in [Scale::Full, Scale::Quick, Scale::Reduced] {
                let present = match scale {
                    Scale::Full => true,
                    Scale::Quick => raw.quick.is_some(),
                    Scale::Reduced => raw.reduced.is_some(),
                };
                if present {
                    build_plan(&raw, scale, &mut problems);
                }
            }
        }
        problems.into_result()?;
        let sha256 = format!("{:x}", sha2::Sha256::digest(source.as_bytes()));
        Ok(Self {
            id: id.to_string(),
            path: path.to_path_buf(),
            source: source.to_string(),
            sha256,
            raw,
            kind: None,
        })
    }

    /// The item id, `<paper>/<item>`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The paper part of the id.
    pub fn paper(&self) -> &str {
        self.id.split_once('/').map_or("", |(p, _)| p)
    }

    /// The item part of the id.
    pub fn item(&self) -> &str {
        self.id.rsplit_once('/').map_or(self.id.as_str(), |(_, i)| i)
    }

    /// The title line of the config.
    pub fn title(&self) -> &str {
        &self.raw.title
    }

    /// The config file path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// SHA-256 of the config file's bytes, hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The master seed.
    pub fn seed(&self) -> u64 {
        self.raw.seed
    }

    /// The item id the unit seeds derive from: `seed_item` when set, else [`Experiment::id`].
    pub fn seed_id(&self) -> &str {
        self.raw.seed_item.as_deref().unwrap_or(&self.id)
    }

    /// Expands the grid into the plan (full scale, or the `[quick]` variant), validating every
    /// point.
    pub fn plan(&self, quick: bool) -> Result<Plan, Error> {
        self.plan_at(if quick { Scale::Quick } else { Scale::Full })
    }

    /// Expands the grid at the given scale, validating every point.
    pub fn plan_at(&self, scale: Scale) -> Result<Plan, Error> {
        let mut problems = Problems::new(&self.path, &self.source);
        let plan = build_plan(&self.raw, scale, &mut problems);
        problems.into_result()?;
        Ok(plan)
    }

    /// Whether the config has a `[reduced]` table.
    pub fn has_reduced(&self) -> bool {
        self.raw.reduced.is_some()
    }

    /// What the `[reduced]` (or `[quick]`) table changes, in words, for reports: e.g.
    /// `runs 20 (full: 100); grid n = [10000] (full: [10000, 50000, 100000])`. Empty at
    /// full scale or without the table.
    pub fn scale_changes(&self, scale: Scale) -> String {
        let q = match scale {
            Scale::Full => return String::new(),
            Scale::Quick => self.raw.quick.as_ref(),
            Scale::Reduced => self.raw.reduced.as_ref(),
        };
        let Some(q) = q else { return String::new() };
        let show = |v: &toml::Value| v.to_string();
        let mut parts = Vec::new();
        if let Some(r) = &q.runs {
            parts.push(format!("runs {} (full: {})", r.get_ref(), self.raw.runs.get_ref()));
        }
        for (k, v) in &q.grid {
            let full = self.raw.grid.get(k).map(|f| show(f.get_ref())).unwrap_or_default();
            parts.push(format!("grid {k} = {} (full: {full})", show(v.get_ref())));
        }
        let p = &q.point;
        for (name, f) in [("n", &p.n), ("b", &p.b), ("batches", &p.batches), ("m", &p.m)] {
            if let Some(f) = f {
                parts.push(format!("{name} = {}", f.get_ref().source()));
            }
        }
        if let Some(s) = &q.sampling {
            parts.push(format!("sampling = {{ blocks = {} }}", s.get_ref().blocks));
        }
        parts.join("; ")
    }
}

/// Checks of the allocation config that do not depend on a scale (the plan checks the rest).
fn validate_raw(raw: &RawConfig, problems: &mut Problems<'_>) {
    use schema::Seg;
    for (i, r) in raw.references.iter().enumerate() {
        if !r.x_shift.is_finite() {
            problems.at_path(
                &[Seg::Key("reference".into()), Seg::Index(i), Seg::Key("x_shift".into())],
                false,
                format!(
                    "reference `{}`: invalid value {} for `x_shift`: expected a finite number",
                    r.label, r.x_shift
                ),
            );
        }
    }
}

/// Resolves a process for one point; `vars` holds the grid variables and n, b, batches, m.
pub(crate) fn resolve_process(
    p: &RawProcess,
    vars: &[(&str, f64)],
    ctx: &str,
) -> Result<ProcessSpec, String> {
    let ev = |f: &Formula, field: &str| -> Result<f64, String> {
        f.eval(vars).map_err(|e| format!("{ctx}: `{field}`: {e}"))
    };
    Ok(match p {
        RawProcess::OneChoice => ProcessSpec::OneChoice,
        RawProcess::TwoChoice => ProcessSpec::DChoice { d: 2 },
        RawProcess::ThreeChoice => ProcessSpec::DChoice { d: 3 },
        RawProcess::DChoice { d } => {
            let v = ev(d, "d")?;
            if v.fract() != 0.0 || !(1.0..=1024.0).contains(&v) {
                return Err(format!(
                    "{ctx}: invalid value {v} for `d`: expected an integer in 1..=1024"
                ));
            }
            ProcessSpec::DChoice { d: v as u32 }
        }
        RawProcess::OnePlusBeta { beta } => ProcessSpec::OnePlusBeta { beta: ev(beta, "beta")? },
        RawProcess::Quantile { delta } => ProcessSpec::Quantile { delta: ev(delta, "delta")? },
        RawProcess::MixedQuantile { delta, eta } => {
            ProcessSpec::MixedQuantile { delta: ev(delta, "delta")?, eta: ev(eta, "eta")? }
        }
        RawProcess::Threshold { f } => ProcessSpec::Threshold { f: ev(f, "f")? },
        RawProcess::MeanThinning { strict } => ProcessSpec::MeanThinning { strict: *strict },
        RawProcess::GBounded { g } => ProcessSpec::GBounded { g: ev(g, "g")? },
        RawProcess::GMyopic { g } => ProcessSpec::GMyopic { g: ev(g, "g")? },
        RawProcess::SigmaNoisyLoad { sigma, truncate } => {
            ProcessSpec::SigmaNoisyLoad { sigma: ev(sigma, "sigma")?, truncate: *truncate }
        }
        RawProcess::RelativeThreshold { f } => ProcessSpec::RelativeThreshold { f: ev(f, "f")? },
        RawProcess::Twinning {} => ProcessSpec::Twinning,
        RawProcess::Packing { offset } => ProcessSpec::Packing {
            offset: int(ev(offset, "offset")?, "offset", 0, 1_000_000, ctx)?,
        },
        RawProcess::TightPacking { offset, balls } => ProcessSpec::TightPacking {
            offset: int(ev(offset, "offset")?, "offset", 0, 1_000_000, ctx)?,
            balls: match balls {
                Some(b) => Some(int(ev(b, "balls")?, "balls", 1, 1_000_000, ctx)?),
                None => None,
            },
        },
        RawProcess::Memory { d, k } => ProcessSpec::Memory {
            d: int(ev(d, "d")?, "d", 1, 1024, ctx)?,
            k: int(ev(k, "k")?, "k", 1, 1024, ctx)?,
        },
        RawProcess::Caching { d } => {
            ProcessSpec::Caching { d: int(ev(d, "d")?, "d", 1, 1024, ctx)? }
        }
        RawProcess::AlwaysGoLeft { d } => {
            ProcessSpec::AlwaysGoLeft { d: int(ev(d, "d")?, "d", 1, 1024, ctx)? }
        }
        RawProcess::Equalize { d } => {
            ProcessSpec::Equalize { d: int(ev(d, "d")?, "d", 1, 1024, ctx)? }
        }
        RawProcess::Adaptive(a) => resolve_adaptive(a, &ev, ctx)?,
    })
}

/// An integer parameter in `lo..=hi`, with the allowed range in the error.
fn int(v: f64, field: &str, lo: u32, hi: u32, ctx: &str) -> Result<u32, String> {
    if v.fract() == 0.0 && (f64::from(lo)..=f64::from(hi)).contains(&v) {
        Ok(v as u32)
    } else {
        Err(format!("{ctx}: invalid value {v} for `{field}`: expected an integer in {lo}..={hi}"))
    }
}

/// `adaptive`: a preset or the open form `tau = { base, per_probe, per_average, until }`,
/// `cap` (either, not both).
fn resolve_adaptive(
    a: &RawAdaptive,
    ev: &dyn Fn(&Formula, &str) -> Result<f64, String>,
    ctx: &str,
) -> Result<ProcessSpec, String> {
    let need = |f: &Option<Formula>, field: &str, preset: &str| -> Result<f64, String> {
        match f {
            Some(f) => ev(f, field),
            None => Err(format!("{ctx}: adaptive preset \"{preset}\" needs `{field}`")),
        }
    };
    let refuse = |f: bool, field: &str, preset: &str| -> Result<(), String> {
        if f {
            Err(format!("{ctx}: adaptive preset \"{preset}\" does not take `{field}`"))
        } else {
            Ok(())
        }
    };
    let Some(preset) = a.preset.as_deref() else {
        let Some(t) = a.tau else {
            return Err(format!(
                "{ctx}: adaptive needs `preset` (one of {ADAPTIVE_PRESETS}) or `tau = {{ base, \
                 per_probe, per_average, until }}` with `cap`"
            ));
        };
        refuse(a.d.is_some(), "d", "(open form)")?;
        refuse(a.relative, "relative", "(open form; use tau.per_average)")?;
        refuse(a.c.is_some(), "c", "(open form)")?;
        let cap = match &a.cap {
            Some(c) => Some(int(ev(c, "cap")?, "cap", 1, 1_000_000, ctx)?),
            None => None,
        };
        let tau = Tau {
            base: t.base,
            per_probe: t.per_probe,
            per_average: t.per_average,
            until: t.until,
        };
        return Ok(ProcessSpec::Adaptive { tau, cap });
    };
    if a.tau.is_some() || a.cap.is_some() {
        return Err(format!(
            "{ctx}: adaptive: give either `preset` or the open form (`tau`, `cap`), not both"
        ));
    }
    let rel = |mut t: Tau| {
        if a.relative {
            t.per_average = 1.0;
        }
        t
    };
    match preset {
        "greedy" => {
            refuse(a.c.is_some(), "c", preset)?;
            let d = int(need(&a.d, "d", preset)?, "d", 1, 1024, ctx)?;
            Ok(ProcessSpec::Adaptive { tau: Tau::NEVER, cap: Some(d) })
        }
        "threshold_first" => {
            let d = int(need(&a.d, "d", preset)?, "d", 1, 1024, ctx)?;
            let c = need(&a.c, "c", preset)?;
            if !c.is_finite() {
                return Err(format!("{ctx}: invalid value {c} for `c`: expected a finite number"));
            }
            Ok(ProcessSpec::Adaptive { tau: rel(Tau::constant_until(c, d)), cap: Some(d) })
        }
        "probe_count" => {
            refuse(a.d.is_some(), "d", preset)?;
            refuse(a.c.is_some(), "c", preset)?;
            Ok(ProcessSpec::Adaptive { tau: rel(Tau::PROBE_COUNT), cap: None })
        }
        other => Err(format!(
            "{ctx}: unknown adaptive preset \"{other}\" for `preset`: expected one of \
             {ADAPTIVE_PRESETS}{}",
            schema::did_you_mean(other, ["greedy", "threshold_first", "probe_count"])
        )),
    }
}

/// Parses a series' stopping rule (`stop = "truncate" | "finish"`), reporting the allowed
/// names on error.
pub(crate) fn resolve_stop(
    t: &Option<Spanned<String>>,
    problems: &mut Problems<'_>,
    ctx: &str,
) -> Stop {
    match t {
        None => Stop::Truncate,
        Some(s) => Stop::from_name(s.get_ref()).unwrap_or_else(|e| {
            let hint = schema::did_you_mean(s.get_ref(), Stop::ALL.iter().map(|(n, _)| *n));
            problems.at(Some(s.span()), format!("{ctx}: {e}{hint}"));
            Stop::Truncate
        }),
    }
}

/// Parses a tie-breaking rule name, reporting the allowed names on error.
pub(crate) fn resolve_tie_break(
    t: &Option<Spanned<String>>,
    problems: &mut Problems<'_>,
    ctx: &str,
) -> TieBreak {
    match t {
        None => TieBreak::Random,
        Some(s) => match TieBreak::from_name(s.get_ref()) {
            Ok(t) => t,
            Err(e) => {
                let hint = schema::did_you_mean(s.get_ref(), TieBreak::ALL.iter().map(|(n, _)| *n));
                problems.at(Some(s.span()), format!("{ctx}: {e}{hint}"));
                TieBreak::Random
            }
        },
    }
}
