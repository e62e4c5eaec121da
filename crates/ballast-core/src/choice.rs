//! The engine choice: which engine can run a spec exactly ([`level_support`],
//! [`supported_engines`]), which one `auto` picks ([`resolve_engine`], from measured
//! crossovers), and the validation of a whole [`RunSpec`], which depends on that choice (the
//! bin engine keeps 32-bit loads). Pure functions of the spec: nothing here runs an engine,
//! so every engine and front end can ask.

use crate::crossover::AUTO_POSITION_MAX_BINS_PER_BALL;
use crate::spec::{distinct_d, is_distinct_pair};
use crate::start::Start;
use crate::{Engine, Error, ProcessSpec, RunSpec, Setting, TieBreak, Weights};

/// The smallest `n` from which `auto` runs a sequential `process` on the level engine (when
/// the level engine can run it exactly): the crossover its kind names (`kinds/`), measured
/// against the bin engine (the `AUTO_SEQUENTIAL_MIN_N*` constants of this module).
pub fn auto_sequential_min_n(spec: &RunSpec) -> u64 {
    crate::kinds::auto_levels_min_n(spec)
}

/// Largest batch size per bin (`b / n`) of the level engine.
pub const LEVEL_MAX_BATCH_PER_BIN: u64 = 1 << 16;

/// Largest `m` of the level engine: loads stay exactly representable as `f64` in the
/// [`crate::LoadState`] view.
pub const LEVEL_MAX_BALLS: u64 = 1 << 53;

/// Whether the level engine can simulate `spec` exactly; the error says why not and names
/// the alternative.
pub fn level_support(spec: &RunSpec) -> Result<(), Error> {
    run_support(spec)?;
    crate::kinds::levels(spec, matches!(spec.setting, Setting::Batched { .. }))
}

/// The checks of [`level_support`] that do not depend on the process: sampling, weights,
/// batch span and tie rule, m, the start state, the delay setting.
fn run_support(spec: &RunSpec) -> Result<(), Error> {
    if spec.record_probes && !spec.process.records_probes() {
        return Err(Error::use_bins(
            "the level engine does not record probes per step (record_probes)".to_string(),
        ));
    }
    if !spec.sampling.is_uniform() {
        return Err(Error::use_bins(format!(
            "the level engine needs uniform bin sampling (got sampling = \"{}\": bins of one \
             level are no longer exchangeable)",
            spec.sampling.name()
        )));
    }
    if !spec.capacities.is_unit() {
        return Err(Error::use_bins(format!(
            "the level engine needs bins of equal capacity (got capacities = \"{}\": bins of \
             one load level are no longer exchangeable)",
            spec.capacities.name()
        )));
    }
    if !matches!(spec.weights, Weights::Unit) {
        return Err(Error::use_bins(format!(
            "the level engine needs unit weights (got weights = \"{}\")",
            spec.weights.name()
        )));
    }
    if let Setting::Batched { b } = spec.setting {
        // The histogram is dense between the smallest and largest load, and a batch can
        // spread loads by about b/n levels (Two-Choice on 2 bins alternates which one gets
        // most of a batch): keep that span bounded.
        if b / spec.n > LEVEL_MAX_BATCH_PER_BIN {
            return Err(Error::use_bins(format!(
                "the level engine keeps one count per load level, and batches of b = {b} on \
                 n = {} bins (more than {LEVEL_MAX_BATCH_PER_BIN} balls per bin) could spread \
                 the loads over as many levels",
                spec.n
            )));
        }
        if spec.process.compares() && spec.tie_break == TieBreak::LowestIndex {
            return Err(Error::UnsupportedUse {
                why: format!(
                    "the level engine cannot break ties by \"{}\" within a batch (the same \
                     bins win every tie, so bins of a level are not exchangeable)",
                    spec.tie_break.name()
                ),
                fix: &[("engine", "bins"), ("tie_break", "random")],
            });
        }
    }
    if spec.m > LEVEL_MAX_BALLS {
        return Err(Error::invalid("m", spec.m, "at most 2^53 for the level engine"));
    }
    if spec.start.levels_bound(spec.n) > crate::start::MAX_START_LEVELS {
        return Err(Error::use_bins(format!(
            "the level engine keeps one count per load level, and start `{}` may span {} \
             levels (at most {} are taken)",
            spec.start.name(),
            spec.start.levels_bound(spec.n),
            crate::start::MAX_START_LEVELS
        )));
    }
    if matches!(spec.setting, Setting::Delay { .. }) {
        return Err(Error::use_bins("the delay setting needs each bin's arrival history"));
    }
    if spec.dispatchers.is_some() {
        return Err(Error::use_bins("the dispatchers' views are per bin"));
    }
    if spec.churn.is_some() && !crate::spec::churn_on_levels(&spec.process) {
        return Err(Error::use_bins(
            "churn on the level engine takes one_choice, d_choice, one_plus_beta, threshold, \
             relative_threshold and mean_thinning",
        ));
    }
    Ok(())
}

/// Which settings the level engine supports for `process` (unit weights, random ties), for
/// listings such as `ballast list`. The bin engine supports every process and setting.
/// Other weights or tie rules may narrow it: see [`supported_engines`].
pub fn level_settings(process: &ProcessSpec) -> LevelSettings {
    let seq = RunSpec::new(process.clone(), 1, 0);
    let bat = seq.clone().batched(1);
    match (level_support(&seq).is_ok(), level_support(&bat).is_ok()) {
        (true, true) => LevelSettings::SequentialAndBatched,
        (true, false) => LevelSettings::SequentialOnly,
        _ => LevelSettings::None,
    }
}

/// Answer of [`level_settings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LevelSettings {
    /// Sequential and batched.
    SequentialAndBatched,
    /// Sequential only (multi-ball steps).
    SequentialOnly,
    /// Not at all (bin identity).
    None,
}

impl LevelSettings {
    /// Short text for listings: `"bins, levels"`, `"bins, levels (sequential)"` or `"bins"`.
    pub fn engines_text(self) -> &'static str {
        match self {
            Self::SequentialAndBatched => "bins, levels",
            Self::SequentialOnly => "bins, levels (sequential only)",
            Self::None => "bins",
        }
    }
}

/// The concrete engines ([`Engine::Bins`], [`Engine::Levels`]) that can run `spec` exactly.
pub fn supported_engines(spec: &RunSpec) -> Vec<Engine> {
    let mut v = Vec::with_capacity(2);
    let unit = matches!(spec.weights, Weights::Unit);
    if !(unit && spec.m > u64::from(u32::MAX)) {
        v.push(Engine::Bins);
    }
    if level_support(spec).is_ok() {
        v.push(Engine::Levels);
    }
    v
}

/// The engine that runs `spec`: [`Engine::Bins`] or [`Engine::Levels`]. `auto` picks the
/// level engine when it is exact and either batched with at least [`AUTO_BATCH_MIN_BALLS`](crate::crossover::AUTO_BATCH_MIN_BALLS)
/// balls per batch ([`AUTO_BATCH_MIN_BALLS_ONE_CHOICE`](crate::crossover::AUTO_BATCH_MIN_BALLS_ONE_CHOICE) for One-Choice; with `position`
/// ties also `b >= n /` [`AUTO_POSITION_MAX_BINS_PER_BALL`]), sequential with
/// `n >=` [`auto_sequential_min_n`] (per process, from measurements), or `m` beyond the bin engine's 32-bit loads; an
/// explicit `levels` that cannot be exact is an [`Error::Unsupported`]. Measurements behind
/// the positional rule: the table in the [module docs](crate::level) (at n = 10⁴, Three-Choice with
/// position ties: 16.3 → 8.4 ns/ball at b = n, 16.6 → 2.8 at b = 50n; 12.3 → 16.3 at b = n/10,
/// which stays on the bin engine).
pub fn resolve_engine(spec: &RunSpec) -> Result<Engine, Error> {
    match spec.engine {
        Engine::Bins => Ok(Engine::Bins),
        Engine::Levels => level_support(spec).map(|()| Engine::Levels),
        Engine::Auto => {
            if level_support(spec).is_err() {
                return Ok(Engine::Bins);
            }
            if spec.churn.is_some() {
                // Churn takes the level engine only when asked (its loop is the generic one).
                return Ok(Engine::Bins);
            }
            let big_m = matches!(spec.weights, Weights::Unit) && spec.m > u64::from(u32::MAX);
            let prefer = match spec.setting {
                Setting::Batched { b } => {
                    let positional =
                        spec.process.compares() && spec.tie_break == TieBreak::Position;
                    b >= crate::kinds::auto_batch_min_balls(spec)
                        && (!positional
                            || b.saturating_mul(AUTO_POSITION_MAX_BINS_PER_BALL) >= spec.n)
                }
                Setting::Sequential => spec.n >= auto_sequential_min_n(spec),
                Setting::Delay { .. } => unreachable!("refused by level_support"),
            };
            Ok(if prefer || big_m { Engine::Levels } else { Engine::Bins })
        }
    }
}

// Validation is a method of the data, but it lives here: two of its checks (32-bit loads of
// the bin engine, for `m` and for a start state) depend on the engine `auto` picks.
impl RunSpec {
    /// Checks every parameter; the engines assume a validated spec.
    pub fn validate(&self) -> Result<(), Error> {
        crate::spec::check_dynamic_bins(self)?;
        if self.n == 0 || self.n > u64::from(u32::MAX) {
            return Err(Error::invalid("n", self.n, "an integer in 1..=4294967295"));
        }
        if matches!(self.weights, Weights::Unit)
            && self.m > u64::from(u32::MAX)
            && resolve_engine(self)? != Engine::Levels
        {
            return Err(Error::invalid(
                "m",
                self.m,
                "at most 4294967295 for unit weights on the bin engine (loads are 32-bit; the \
                 level engine allows up to 2^53)",
            ));
        }
        if let Setting::Batched { b } = self.setting {
            if b == 0 {
                return Err(Error::invalid("b", b, "an integer >= 1"));
            }
        }
        if let Setting::Delay { tau, .. } = self.setting {
            if !(1..=1 << 32).contains(&tau) {
                return Err(Error::invalid("tau", tau, "an integer in 1..=4294967296"));
            }
            if !matches!(self.weights, Weights::Unit) {
                return Err(Error::invalid(
                    "weights",
                    self.weights.name(),
                    "unit in the delay setting",
                ));
            }
        }
        self.weights.validate()?;
        if self.process.unit_weights_only() && !matches!(self.weights, Weights::Unit) {
            return Err(Error::invalid(
                "weights",
                self.weights.name(),
                "unit for this process (it places whole balls to fill bins or caches by load)",
            ));
        }
        if let Some(d) = distinct_d(&self.process) {
            if u64::from(d) > self.n {
                return Err(Error::invalid(
                    "d",
                    d,
                    "at most n when sampling without replacement (d distinct bins)",
                ));
            }
        }
        if is_distinct_pair(&self.process) && self.n < 2 {
            return Err(Error::invalid(
                "n",
                self.n,
                "at least 2 when two samples are distinct bins (replacement = false)",
            ));
        }
        if self.observe_every == Some(0) {
            return Err(Error::invalid("observe_every", 0, "an integer >= 1"));
        }
        self.sampling.validate(self.n)?;
        check_capacities(self)?;
        let on_levels = resolve_engine(self).is_ok_and(|e| e == Engine::Levels);
        check_start(&self.start, self, on_levels)?;
        // The kind's parameters, then its checks against the run (formulas probed over its
        // values, a list of one entry per bin, …), which may assume valid parameters.
        self.process.validate()?;
        crate::kinds::check_run(self)?;
        Ok(())
    }
}

/// Checks the start state `start` against the rest of a run: the loads of a `file` start must be one
/// per bin; every load must fit 32 bits, and on the bin engine also plus the `m` balls
/// of the process; the weights must be unit, and the run must not be a delay run or
/// `equalize`.
/// `on_levels`: whether the run goes to the level engine (whose loads are not 32-bit).
fn check_start(start: &Start, spec: &RunSpec, on_levels: bool) -> Result<(), Error> {
    if start.is_empty() {
        return Ok(());
    }
    if let Start::Loads(v) = start {
        if v.len() as u64 != spec.n {
            return Err(Error::invalid(
                "start",
                format!("{} loads", v.len()),
                "one load per bin (as many loads as n)",
            ));
        }
    }
    let max = start.max_load_bound();
    if max > crate::start::MAX_START_LOAD
        || (!on_levels && max.saturating_add(spec.m) > crate::start::MAX_START_LOAD)
    {
        return Err(Error::invalid(
            "start",
            format!("a largest start load of {max} plus m = {} balls", spec.m),
            "a largest start load plus m of at most 4294967295 on the bin engine (32-bit \
             loads)",
        ));
    }
    if !matches!(spec.weights, Weights::Unit) {
        return Err(Error::invalid(
            "start",
            start.name(),
            "the empty start with weighted balls (a start holds whole unit balls)",
        ));
    }
    if matches!(spec.setting, Setting::Delay { .. }) {
        return Err(Error::invalid(
            "start",
            start.name(),
            "the empty start in the delay setting (its loop keeps no start state)",
        ));
    }
    if spec.process.reallocates() {
        return Err(Error::invalid(
            "start",
            start.name(),
            "the empty start for equalize (its loop keeps no start state)",
        ));
    }
    Ok(())
}

/// The checks of a run's capacities (`docs/capacities.md`) that do not depend on the
/// process's declaration: the law against n, and the settings that have no normalised form
/// (the delay setting and `equalize` run loops of their own on integer loads; proportional
/// sampling is itself a sampling law, so it does not combine with another).
fn check_capacities(spec: &RunSpec) -> Result<(), Error> {
    let c = &spec.capacities;
    if c.is_unit() {
        return Ok(());
    }
    c.validate(spec.n)?;
    let refuse =
        |why: &str| Err(Error::Unsupported(format!("capacities = \"{}\" {why}", c.name())));
    if matches!(spec.setting, Setting::Delay { .. }) {
        return refuse("do not run in the delay setting (its loop keeps integer past loads)");
    }
    if spec.process.reallocates() {
        return refuse("do not apply to `equalize` (its reallocation loop moves whole balls)");
    }
    if spec.churn.is_some() || spec.dispatchers.is_some() {
        return refuse(
            "do not combine with `churn` or `dispatchers` (their loops keep unit loads); drop \
             one of them",
        );
    }
    if crate::kinds::fills_to_average(&spec.process) {
        return refuse(
            "do not apply to `packing` and `tight_packing` (they fill a bin with whole balls up \
             to the rounded-up average, a count of balls)",
        );
    }
    if c.sampling == crate::capacity::CapacitySampling::Proportional && !spec.sampling.is_uniform()
    {
        return refuse(
            "with sampling = \"proportional\" already set the law of the bin samples; drop \
             the series' `sampling` or use the capacities' uniform sampling",
        );
    }
    Ok(())
}
