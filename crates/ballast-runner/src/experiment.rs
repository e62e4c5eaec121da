//! The validated experiment: a config file read, parsed and checked once (every formula,
//! every point of every scale), ready to be planned and run.

use std::path::Path;

use ballast_core::input::{read_text, InputProblem, MAX_INPUT_BYTES};

use crate::config::schema::{self, Input};
use crate::config::{ConfigFile, Problems, RawConfig, Scale};
use crate::kinds::{self, KindExperiment};
use crate::plan::{build_plan, Plan};
use crate::Error;

/// A validated experiment: one figure or table of a paper.
#[derive(Debug)]
pub struct Experiment {
    pub(crate) file: ConfigFile,
    pub(crate) raw: RawConfig,
    /// A graph, dynamic or potential item (`kind = …`); `None`: the allocation path.
    pub(crate) kind: Option<Box<KindExperiment>>,
    /// The validated plans of an allocation config, built once at parse time: full, quick
    /// and reduced scale (`None` for a scale the config lacks, and for the other item kinds).
    plans: [Option<Plan>; 3],
}

/// The item id `<paper>/<item>` of `configs/<paper>/<item>.toml`.
/// The slot of `scale` in [`Experiment`]'s plans.
fn scale_index(scale: Scale) -> usize {
    match scale {
        Scale::Full => 0,
        Scale::Quick => 1,
        Scale::Reduced => 2,
    }
}

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
    /// directory, a FIFO or device, no permission, over [`MAX_INPUT_BYTES`], not UTF-8) is an
    /// [`Error::Config`] naming the reason (and, for bad UTF-8, the line and column of the
    /// first bad byte). The config is read like every input file
    /// ([`ballast_core::input::read_text`]).
    pub fn from_path(path: &Path) -> Result<Self, Error> {
        let source = match read_text(path, "config", MAX_INPUT_BYTES) {
            Ok(s) => s,
            Err(e) => {
                let place = match e.problem {
                    InputProblem::Missing => {
                        let e = std::io::Error::from(std::io::ErrorKind::NotFound);
                        return Err(Error::io(path, e));
                    }
                    InputProblem::NotUtf8 { line, column } => Some((line, column)),
                    _ => None,
                };
                let why = match e.problem {
                    InputProblem::Directory => "it is a directory; expected a TOML file such as \
                                                configs/<paper>/<item>.toml"
                        .to_string(),
                    InputProblem::NotUtf8 { .. } => {
                        "invalid UTF-8: a config must be UTF-8 text".to_string()
                    }
                    p => p.to_string(),
                };
                let problem = crate::ConfigProblem {
                    path: path.to_path_buf(),
                    place,
                    context: None,
                    message: format!("cannot read the config: {why}"),
                };
                return Err(Error::Config { path: path.to_path_buf(), errors: vec![problem] });
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
        Self::read(ConfigFile::new(id, path, source), Input::Text(source))
    }

    /// Validates a config built in memory as a table (what `ballast simulate` makes of its
    /// arguments), exactly as [`Experiment::parse`] validates text, without writing it out
    /// and reading it back. Its values have no places, so its problems name `path` without a
    /// line. The table written as TOML is its record: the hash in the metadata, and the text
    /// `--print-config` shows.
    pub fn from_table(id: &str, path: &Path, table: &toml::Table) -> Result<Self, Error> {
        let text = toml::to_string(table).map_err(|e| Error::Config {
            path: path.to_path_buf(),
            errors: vec![crate::ConfigProblem {
                path: path.to_path_buf(),
                place: None,
                context: None,
                message: format!("the config cannot be written as TOML: {e}"),
            }],
        })?;
        let mut file = ConfigFile::new(id, path, &text);
        file.read_from_text = false;
        Self::read(file, Input::Table(table))
    }

    /// Validates the config `input` of `file`: every problem of every scale at once.
    fn read(file: ConfigFile, input: Input<'_>) -> Result<Self, Error> {
        let path = file.path.clone();
        let source = input.located_text();
        if let Some(kind) = kinds::detect(input).map_err(|e| {
            let mut p = Problems::new(&path, source);
            p.at_path(&[schema::Seg::Key("kind".into())], false, e);
            Error::Config { path: path.clone(), errors: p.list }
        })? {
            let k = KindExperiment::parse(kind, &path, input)?;
            return Ok(Self {
                file,
                raw: k.stub_raw(),
                kind: Some(Box::new(k)),
                plans: [None, None, None],
            });
        }
        let parsed = input.deserialize::<RawConfig>().map_err(|errors| {
            let mut p = Problems::new(&path, source);
            for (span, msg) in errors {
                p.at(span, msg);
            }
            p.into_error()
        })?;
        // Every problem of every scale, each once; value checks skip what the schema errors
        // touched (they would only report consequences of them).
        let (raw, schema) = parsed.split();
        let mut problems = Problems::with_schema(&path, source, &schema);
        let mut plans: [Option<Plan>; 3] = [None, None, None];
        if !schema.taint.global {
            validate_raw(&raw, &path, &mut problems);
            for scale in [Scale::Full, Scale::Quick, Scale::Reduced] {
                let present = match scale {
                    Scale::Full => true,
                    Scale::Quick => raw.quick.is_some(),
                    Scale::Reduced => raw.reduced.is_some(),
                };
                if present {
                    plans[scale_index(scale)] = Some(build_plan(&raw, scale, &mut problems));
                }
            }
        }
        problems.into_result()?;
        Ok(Self { file, raw, kind: None, plans })
    }

    /// The item id, `<paper>/<item>`.
    pub fn id(&self) -> &str {
        &self.file.id
    }

    /// The paper part of the id.
    pub fn paper(&self) -> &str {
        self.file.id.split_once('/').map_or("", |(p, _)| p)
    }

    /// The item part of the id.
    pub fn item(&self) -> &str {
        self.file.id.rsplit_once('/').map_or(self.file.id.as_str(), |(_, i)| i)
    }

    /// The title line of the config.
    pub fn title(&self) -> &str {
        &self.raw.title
    }

    /// The config file path.
    pub fn path(&self) -> &Path {
        &self.file.path
    }

    /// SHA-256 of the config file's bytes, hex.
    pub fn sha256(&self) -> &str {
        &self.file.sha256
    }

    /// The master seed.
    pub fn seed(&self) -> u64 {
        self.raw.seed
    }

    /// The item id the unit seeds derive from: `seed_item` when set, else [`Experiment::id`].
    pub fn seed_id(&self) -> &str {
        self.raw.seed_item.as_deref().unwrap_or(&self.file.id)
    }

    /// Expands the grid into the plan (full scale, or the `[quick]` variant), validating every
    /// point.
    pub fn plan(&self, quick: bool) -> Result<Plan, Error> {
        self.plan_at(if quick { Scale::Quick } else { Scale::Full })
    }

    /// The plan at the given scale: the one built and validated when the config was parsed
    /// (a scale the config lacks falls back to the full table, as `build_plan` does).
    pub fn plan_at(&self, scale: Scale) -> Result<Plan, Error> {
        if let Some(plan) = &self.plans[scale_index(scale)] {
            return Ok(plan.clone());
        }
        let mut problems = Problems::new(&self.file.path, self.file.located_text());
        let plan = build_plan(&self.raw, scale, &mut problems);
        problems.into_result()?;
        Ok(plan)
    }

    /// How the item's figure is framed at `scale`: axis labels, x scale, minima marks.
    pub fn frame(&self, scale: Scale) -> Result<crate::figure::FigureFrame, Error> {
        match &self.kind {
            Some(k) => Ok(kinds::frame(k)),
            None => Ok(self.plan_at(scale)?.frame(&self.raw)),
        }
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
fn validate_raw(raw: &RawConfig, path: &Path, problems: &mut Problems<'_>) {
    use schema::Seg;
    // A `seed_item` of the form `<paper>/<item>` names an item: `configs/<paper>/<item>.toml`
    // beside this one (checked for configs read from a file in such a tree only; ids without
    // a `/`, such as `ballast simulate`'s "simulate", name no config).
    if let (Some(seed), Some(root)) = (&raw.seed_item, path.parent().and_then(Path::parent)) {
        if seed.contains('/') && path.is_file() && !root.join(format!("{seed}.toml")).is_file() {
            problems.at_path(
                &[Seg::Key("seed_item".into())],
                false,
                format!(
                    "`seed_item` = \"{seed}\" names no item: {} does not exist (expected \
                     `<paper>/<item>` of a config under {})",
                    root.join(format!("{seed}.toml")).display(),
                    root.display()
                ),
            );
        }
    }
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
