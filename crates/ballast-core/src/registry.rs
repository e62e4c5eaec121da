//! The process registry: one [`ProcessDef`] per process kind, the single declaration that
//! every interface reads (the TOML configs of `ballast-runner`, `ballast simulate
//! --process/--param`, `ballast list`, the README's process table and every error message).
//!
//! An entry names the kind, documents it in one line, declares its typed parameters (range,
//! default, meaning), the settings, weights and tie rules it supports, and its constructor.
//! Front ends hand the parameters they read to [`ProcessDef::build`] as [`ParamValue`]s;
//! unknown names, wrong types, values out of range and missing parameters are refused here,
//! with one message for every front end ([`ParamError`]).
//!
//! The built-in kinds are [`PROCESSES`]; a kind declared elsewhere (another crate, a test,
//! a user's program) is one [`crate::item::ProcessItem`] with its [`ProcessDef`], added by
//! [`register`]. Front ends read [`Registry::current`] (through [`find`], [`names`] and
//! [`processes`]), so a registered kind reaches them as a built-in does.
//!
//! ```
//! use ballast_core::registry::{find, ParamValue};
//! use ballast_core::ProcessSpec;
//!
//! let def = find("one_plus_beta").unwrap();
//! let spec = def.build(&[("beta", ParamValue::Num(0.5))]).unwrap();
//! assert_eq!(spec, ProcessSpec::OnePlusBeta { beta: 0.5 });
//!
//! // Unknown parameters are refused, with the allowed ones.
//! let e = find("two_choice").unwrap().build(&[("d", ParamValue::Num(3.0))]).unwrap_err();
//! assert_eq!(e.param.as_deref(), Some("d"));
//! assert!(e.to_string().contains("allowed parameters: replacement (true or false)"));
//! ```

use crate::spec::{ProcessSpec, RunSpec, Setting, TieBreak, Weights};
use crate::Engine;

pub use crate::capacity::{find_capacities, CapacityDef, CAPACITIES};
pub use crate::def::{ProcessDef, Settings};
pub use crate::error::did_you_mean;
pub use crate::params::{
    Args, ParamDef, ParamDefault, ParamError, ParamList, ParamType, ParamValue,
};
pub use crate::sampling::{find_sampling, SamplingDef, SAMPLINGS};

/// Every process kind, in listing order.
pub static PROCESSES: &[ProcessDef] = &[
    crate::kinds::one_choice::ONE_CHOICE,
    crate::kinds::d_choice::TWO_CHOICE,
    crate::kinds::d_choice::THREE_CHOICE,
    crate::kinds::d_choice::D_CHOICE,
    crate::kinds::unfair_d_choice::UNFAIR_D_CHOICE,
    crate::items::kd_choice::DEF,
    crate::kinds::rank_vector::RANK_VECTOR,
    crate::kinds::k_threshold::K_THRESHOLD,
    crate::kinds::one_plus_beta::ONE_PLUS_BETA,
    crate::kinds::quantile::QUANTILE,
    crate::kinds::quantile::MIXED_QUANTILE,
    crate::kinds::thinning::THRESHOLD,
    crate::kinds::thinning::MEAN_THINNING,
    crate::kinds::noisy::G_BOUNDED,
    crate::kinds::noisy::G_MYOPIC,
    crate::kinds::noisy::SIGMA_NOISY_LOAD,
    crate::kinds::thinning::RELATIVE_THRESHOLD,
    crate::kinds::formula_threshold::FORMULA_THRESHOLD,
    crate::items::d_thinning::DEF,
    crate::kinds::rule::RULE,
    crate::items::fill_formula::DEF,
    crate::kinds::filling::TWINNING,
    crate::kinds::filling::PACKING,
    crate::kinds::tight_packing::TIGHT_PACKING,
    crate::kinds::memory::MEMORY,
    crate::kinds::memory::CACHING,
    crate::kinds::always_go_left::ALWAYS_GO_LEFT,
    crate::kinds::adaptive::ADAPTIVE,
    crate::kinds::equalize::EQUALIZE,
];

/// The largest total weight `mean × m` of a weighted run (any law): loads up to it,
/// squared and summed over runs for the standard errors, stay finite doubles.
pub(crate) const MAX_WEIGHT_TOTAL: f64 = 1e150;

/// The memory one run may hold, bytes (16 GiB): [`check_run`] refuses runs whose estimate
/// ([`run_memory_bytes`]) is larger, before anything is allocated. Every worker thread holds
/// one run at a time, so a machine needs about `threads ×` the estimate.
#[doc(hidden)]
pub const MAX_RUN_BYTES: u128 = 16 << 30;

/// An estimate from above of the memory one run holds, bytes: on the bin engine the per-bin
/// state (loads and the structures of the least-loaded queries: 8 bytes per bin with unit
/// weights, 24 with weights), the batch buffer (16 bytes per ball of a batch), the delay
/// window (12 bytes per bin and 8 per step of τ) and the recorded trajectories (8 bytes per
/// observation point for the gap, 16 for the largest and smallest load). The level engine keeps per-level counts only (its state does not grow
/// with n); its batch and trajectory buffers are counted the same way. Churn and
/// dispatchers add their own (`spec::dynamic_bins_bytes`: the views and the log).
#[doc(hidden)]
pub fn run_memory_bytes(spec: &RunSpec) -> u128 {
    let engine = crate::resolve_engine(spec).unwrap_or(Engine::Bins);
    let n = u128::from(spec.n);
    let m = u128::from(spec.m);
    let weighted = !matches!(spec.weights, Weights::Unit);
    let bins = match engine {
        Engine::Levels => 0,
        _ => n * if weighted { 24 } else { 8 },
    };
    let (buffer, observations) = match spec.setting {
        Setting::Batched { b } => {
            let b = u128::from(b).min(m);
            (if engine == Engine::Levels { 0 } else { b * 16 }, m.div_ceil(b.max(1)))
        }
        Setting::Delay { tau, .. } => (n * 12 + u128::from(tau) * 8, 1),
        Setting::Sequential => (0, 1),
    };
    let observations = match spec.observe_every {
        Some(k) => observations.max(m.div_ceil(u128::from(k.max(1)))),
        None => observations,
    };
    let trajectory = if spec.record_trajectory { observations * 8 } else { 0 }
        + if spec.record_loads { observations * 16 } else { 0 };
    bins + buffer
        + trajectory
        + sampling_table_bytes(spec)
        + capacity_bytes(spec)
        + crate::spec::dynamic_bins_bytes(spec)
}

/// Memory of capacities on the bin engine, bytes, from above: the state's weight, capacity
/// and normalised load per bin (24, beyond the 8 or 24 counted for the loads), the capacity
/// vector drawn for the run and, with proportional sampling, its alias table built like a
/// sampling law's (40); 0 without capacities.
fn capacity_bytes(spec: &RunSpec) -> u128 {
    if spec.capacities.is_unit() {
        return 0;
    }
    let proportional = spec.capacities.sampling == crate::capacity::CapacitySampling::Proportional;
    u128::from(spec.n) * if proportional { 72 } else { 32 }
}

/// The most balls one run may place one at a time ([`ball_by_ball_balls`]): 10¹³, about
/// three hours of one core at 1 ns a ball and days at the 10–30 ns a weighted or
/// thinning ball costs. [`check_run`] refuses more; the runner bounds the sum over an
/// item's runs by [`MAX_ITEM_BALL_BY_BALL`].
pub(crate) const MAX_RUN_BALL_BY_BALL: u64 = 10_000_000_000_000;

/// The most balls an item's runs may place one at a time in all (runs × points × balls,
/// [`ball_by_ball_balls`]): 10¹⁵, weeks of one core at 1 ns a ball (shards spread it over
/// a cluster).
#[doc(hidden)]
pub const MAX_ITEM_BALL_BY_BALL: u128 = 1_000_000_000_000_000;

/// The balls a run of `spec` places one at a time, each with work of its own: `m` on the
/// bin engine (every ball drawn and placed, weighted batches sorted ball by ball) and in the
/// level engine's sequential rules without a chunk step; `0` for the level engine's batches
/// (one step per batch) and the kinds with chunked sequential laws (`Kind::LEVEL_CHUNKS`:
/// One-Choice, d-Choice, (1+β), Quantile, two-thinning, the noisy pairs, adaptive probing).
#[doc(hidden)]
pub fn ball_by_ball_balls(spec: &RunSpec) -> u64 {
    let levels = crate::resolve_engine(spec).is_ok_and(|e| e == Engine::Levels);
    let whole_steps = crate::kinds::level_chunks(&spec.process)
        || matches!(spec.setting, Setting::Batched { .. });
    if levels && whole_steps {
        0
    } else {
        spec.m
    }
}

/// Why a run of `spec` places its balls one at a time ([`ball_by_ball_balls`]), for messages.
fn ball_by_ball_reason(spec: &RunSpec) -> String {
    if crate::resolve_engine(spec).is_ok_and(|e| e == Engine::Levels) {
        return format!("the level engine has no chunk step for `{}`", def_of(&spec.process).name);
    }
    let levels = RunSpec { engine: Engine::Levels, ..spec.clone() };
    match (&spec.weights, crate::level::level_support(&levels)) {
        (Weights::Unit, Ok(())) => "the bin engine places every ball".to_owned(),
        (Weights::Unit, Err(_)) => {
            "the bin engine places every ball, and this run cannot use the level engine".to_owned()
        }
        (w, _) => {
            format!("weights \"{}\" run on the bin engine only, which places every ball", w.name())
        }
    }
}

/// `3.2 hours`, `5845 years`: a duration of `secs` seconds in its largest unit.
#[doc(hidden)]
pub fn duration_words(secs: f64) -> String {
    let units =
        [(365.25 * 86400.0, "years"), (86400.0, "days"), (3600.0, "hours"), (60.0, "minutes")];
    for (size, name) in units {
        if secs >= size {
            return format!("{:.1} {name}", secs / size);
        }
    }
    format!("{secs:.1} seconds")
}

/// `12.3 GiB` (or MiB below one GiB).
fn gib(bytes: u128) -> String {
    let b = bytes as f64;
    if b >= (1u64 << 30) as f64 {
        format!("{:.1} GiB", b / (1u64 << 30) as f64)
    } else {
        format!("{:.1} MiB", b / (1u64 << 20) as f64)
    }
}

/// Which parameter makes a run too large for `MAX_RUN_BYTES`, why, and the way out.
fn memory_driver(spec: &RunSpec, engine: Engine) -> (&'static str, String, String) {
    let weighted = !matches!(spec.weights, Weights::Unit);
    let per_bin = if weighted { 24 } else { 8 };
    let bins = if engine == Engine::Levels { 0 } else { u128::from(spec.n) * per_bin };
    let buffer = match spec.setting {
        Setting::Batched { b } if engine != Engine::Levels => u128::from(b.min(spec.m)) * 16,
        _ => 0,
    };
    if bins >= buffer && bins > 0 {
        let levels =
            if crate::level::level_support(&RunSpec { engine: Engine::Levels, ..spec.clone() })
                .is_ok()
            {
                "use engine = \"levels\" (its memory does not grow with n), or fewer bins"
            } else {
                "use fewer bins (this run cannot use the level engine)"
            };
        (
            "n",
            format!("n = {} bins × {per_bin} bytes on the bin engine", spec.n),
            levels.to_string(),
        )
    } else if buffer > 0 {
        (
            "b",
            format!("a batch buffer of b = {} balls × 16 bytes", buffer / 16),
            "use a smaller batch size b".to_string(),
        )
    } else {
        (
            "m",
            format!("{} observation points recorded × 8 bytes", run_memory_bytes(spec) / 8),
            "observe less often (larger b or observe_every) or place fewer balls".to_string(),
        )
    }
}

/// The front ends' strictness rule for a whole run, on top of [`RunSpec::validate`]: what
/// the user wrote must change the run. Refused (the message of every front end): a tie rule
/// the process does not take, a setting or weights it cannot run, an explicit `levels`
/// engine that cannot run it exactly, `m = 0`, a batch larger than the run (`b > m`: the
/// "batched" run would be one partial batch), a total weight beyond `MAX_WEIGHT_TOTAL` (1e150), and
/// a run too large (`MAX_RUN_BYTES` of memory, `MAX_RUN_BALL_BY_BALL` balls placed one
/// at a time). Returns
/// the warnings of legal but degenerate combinations (batched Memory, Caching or
/// Tight-Packing send a whole batch to the bin that was least loaded at its start).
pub fn check_run(spec: &RunSpec) -> Result<Vec<String>, ParamError> {
    let def = def_of(&spec.process);
    let refuse = |param: &str, message: String| Err(ParamError::at(param, message));
    if !def.accepts_tie(spec.tie_break) {
        return refuse("tie_break", def.tie_error(spec.tie_break));
    }
    if def.unit_weights_only && !matches!(spec.weights, Weights::Unit) {
        return refuse(
            "weights",
            format!(
                "process `{}` is defined for unit weights only (it places whole balls to fill \
                 bins or keeps bins by load); got weights \"{}\"",
                def.name,
                spec.weights.name()
            ),
        );
    }
    match spec.setting {
        Setting::Batched { .. } if !def.settings.batched => {
            return refuse(
                "b",
                format!("process `{}` is defined for the sequential setting only", def.name),
            )
        }
        Setting::Delay { .. } if !def.settings.delay => {
            return refuse(
                "delay",
                format!("process `{}` does not run in the delay setting", def.name),
            )
        }
        _ => {}
    }
    if spec.m == 0 {
        return refuse("m", "m = 0 balls: the run would place nothing; expected m >= 1".into());
    }
    let sampling_warnings = check_run_sampling(spec)?;
    check_capacities_process(spec)?;
    crate::process::distinct::check(spec)?;
    crate::rank_vector::check(spec)?;
    if let Setting::Batched { b } = spec.setting {
        if b > spec.m {
            return refuse(
                "b",
                format!(
                    "batch size b = {b} is larger than m = {} balls: the run would be one \
                     partial batch; expected b <= m",
                    spec.m
                ),
            );
        }
    }
    if let Err(e) = crate::resolve_engine(spec) {
        // An explicit `levels` for a run the level engine cannot make exact.
        return refuse("engine", e.to_string());
    }
    check_weight_total(spec)?;
    check_run_size(spec)?;
    let mut warnings = sampling_warnings;
    if spec.process.same_bin_in_batches() && matches!(spec.setting, Setting::Batched { b } if b > 1)
    {
        warnings.push(format!(
            "batched {}: its least-loaded choices read the loads frozen at the batch start, so \
             they send a whole batch to the same bin (legal, but degenerate)",
            def.name
        ));
    }
    if spec.tie_break != TieBreak::Random && !spec.process.compares() {
        warnings.push(format!(
            "tie_break = \"{}\" has no effect on {} with these parameters (it never compares \
             two samples)",
            spec.tie_break.name(),
            def.name
        ));
    }
    Ok(warnings)
}

/// A weighted run's total weight `mean × m` stays below [`MAX_WEIGHT_TOTAL`] ([`check_run`]).
fn check_weight_total(spec: &RunSpec) -> Result<(), ParamError> {
    if spec.weights != Weights::Unit {
        let mean = spec.weights.mean();
        let total = mean * spec.m as f64;
        if total.is_nan() || total > MAX_WEIGHT_TOTAL {
            let field = if matches!(spec.weights, Weights::Exp { .. }) {
                "weights.mean"
            } else {
                "weights"
            };
            return Err(ParamError::at(
                field,
                format!(
                    "weights mean {mean:e} × m = {} balls is a total weight of {total:e}: above \
                     {MAX_WEIGHT_TOTAL:e}, the statistics of the loads (their squares, over \
                     runs) overflow a double; use a mean of at most {:e} (gaps scale with the \
                     mean, so mean = 1 loses nothing)",
                    spec.m,
                    MAX_WEIGHT_TOTAL / spec.m as f64
                ),
            ));
        }
    }
    Ok(())
}

/// The bounds of one run's size ([`check_run`]): its memory (`MAX_RUN_BYTES`) and the
/// balls it places one at a time (`MAX_RUN_BALL_BY_BALL`), with the numbers and the way
/// out.
fn check_run_size(spec: &RunSpec) -> Result<(), ParamError> {
    let refuse = |param: &str, message: String| Err(ParamError::at(param, message));
    let need = run_memory_bytes(spec);
    if need > MAX_RUN_BYTES {
        let engine = crate::resolve_engine(spec).unwrap_or(Engine::Bins);
        let (param, why, way_out) = memory_driver(spec, engine);
        return refuse(
            param,
            format!(
                "this run would hold about {} in memory ({why}), above the limit of {} per run \
                 (every worker thread holds one run at a time); {way_out}",
                gib(need),
                gib(MAX_RUN_BYTES)
            ),
        );
    }
    let balls = ball_by_ball_balls(spec);
    if balls > MAX_RUN_BALL_BY_BALL {
        let why = ball_by_ball_reason(spec);
        return refuse(
            "m",
            format!(
                "this run would place m = {balls} balls one at a time ({why}): at 1 ns a ball \
                 that is {} of one core; at most {MAX_RUN_BALL_BY_BALL} balls are allowed per \
                 run: place fewer balls (m <= {MAX_RUN_BALL_BY_BALL})",
                duration_words(balls as f64 * 1e-9)
            ),
        );
    }
    Ok(())
}

/// The process-wide registry's extensions ([`register`], [`register_unlisted`]), after the
/// built-ins, each with whether listings show it.
static REGISTERED: std::sync::RwLock<Vec<(&'static ProcessDef, bool)>> =
    std::sync::RwLock::new(Vec::new());

/// A set of process kinds: the built-ins ([`Registry::builtin`], the entries of
/// [`PROCESSES`]) and any registered beside them. Every front end reads
/// [`Registry::current`], the built-ins plus what [`register`] added in this process.
#[derive(Clone, Debug)]
pub struct Registry {
    processes: Vec<&'static ProcessDef>,
    /// Kinds found by name but left out of listings ([`register_unlisted`]).
    unlisted: Vec<&'static ProcessDef>,
}

impl Registry {
    /// The built-in kinds only.
    pub fn builtin() -> Self {
        Self { processes: PROCESSES.iter().collect(), unlisted: Vec::new() }
    }

    /// The built-ins and every kind [`register`]ed so far in this process.
    pub fn current() -> Self {
        let mut r = Self::builtin();
        for &(def, listed) in REGISTERED.read().unwrap_or_else(|e| e.into_inner()).iter() {
            if listed {
                r.processes.push(def)
            } else {
                r.unlisted.push(def)
            }
        }
        r
    }

    /// This registry with `def` added, or the refusal of a name already taken or not
    /// `snake_case`, or of an entry whose example does not build.
    pub fn with(mut self, def: &'static ProcessDef) -> Result<Self, ParamError> {
        let refuse = |message: String| ParamError { param: None, message };
        if self.processes.iter().chain(&self.unlisted).any(|p| p.name == def.name) {
            return Err(refuse(format!("process `{}` is already registered", def.name)));
        }
        let snake = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_';
        if def.name.is_empty() || !def.name.chars().all(snake) {
            return Err(refuse(format!(
                "process name `{}` is not snake_case (a-z, 0-9 and _)",
                def.name
            )));
        }
        let spec = def.try_example().map_err(|e| {
            refuse(format!("process `{}`: its example does not build: {e}", def.name))
        })?;
        if spec.kind() != def.name {
            return Err(refuse(format!(
                "process `{}` builds a spec of kind `{}`: its build must return \
                 ProcessSpec::Custom of its own item",
                def.name,
                spec.kind()
            )));
        }
        self.processes.push(def);
        Ok(self)
    }

    /// Every kind, built-ins first, in listing order.
    pub fn processes(&self) -> &[&'static ProcessDef] {
        &self.processes
    }

    /// The entry of kind `name`, or the "unknown process" message (with the nearest valid
    /// name and the list).
    pub fn find(&self, name: &str) -> Result<&'static ProcessDef, ParamError> {
        let all = self.processes.iter().chain(&self.unlisted).copied();
        all.clone().find(|p| p.name == name).ok_or_else(|| ParamError {
            param: None,
            message: format!(
                "unknown process `{name}`{}; valid kinds: {}",
                did_you_mean(name, self.processes.iter().map(|p| p.name)),
                self.names().join(", ")
            ),
        })
    }

    /// Every kind name, in listing order.
    pub fn names(&self) -> Vec<&'static str> {
        self.processes.iter().map(|p| p.name).collect()
    }
}

/// Adds `def` to the process-wide registry, so that configs, `ballast simulate`, `ballast
/// list`, the runner and Python find it as they find a built-in. Its `build` returns
/// [`ProcessSpec::Custom`] of its item ([`crate::item`]). Refused as [`Registry::with`]
/// refuses.
pub fn register(def: &'static ProcessDef) -> Result<(), ParamError> {
    register_as(def, true)
}

/// [`register`], but listings (`ballast list`, [`processes`], [`names`]) leave the kind out:
/// for kinds made at run time that belong to one caller, such as a Python function given
/// as a rule. Found by name as any other kind.
pub fn register_unlisted(def: &'static ProcessDef) -> Result<(), ParamError> {
    register_as(def, false)
}

fn register_as(def: &'static ProcessDef, listed: bool) -> Result<(), ParamError> {
    let mut registered = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    let mut current = Registry::builtin();
    for &(d, shown) in registered.iter() {
        if shown {
            current.processes.push(d)
        } else {
            current.unlisted.push(d)
        }
    }
    current.with(def)?;
    registered.push((def, listed));
    Ok(())
}

/// Every kind of [`Registry::current`], built-ins first.
pub fn processes() -> Vec<&'static ProcessDef> {
    Registry::current().processes
}

/// The entry of kind `name` in [`Registry::current`], or the registry's "unknown process"
/// message (with the nearest valid name and the list).
pub fn find(name: &str) -> Result<&'static ProcessDef, ParamError> {
    Registry::current().find(name)
}

/// Every kind name of [`Registry::current`], in listing order.
pub fn names() -> Vec<&'static str> {
    Registry::current().names()
}

pub use crate::weights::{find_weights, WeightDef, WEIGHTS};

pub use crate::start::{find_start, StartDef, StartSource, STARTS};

/// The entry of a built spec (the first kind whose example builds this variant; `d_choice`
/// for every d).
pub fn def_of(spec: &ProcessSpec) -> &'static ProcessDef {
    let kind = spec.kind();
    if let Some(p) = PROCESSES.iter().find(|p| p.name == kind) {
        return p;
    }
    find(kind).expect("every ProcessSpec kind has an entry")
}

/// The registry's refusal of a non-uniform law for a process that does not support one, and
/// the checks of the law against the run (for [`crate::registry::check_run`]).
fn check_run_sampling(spec: &RunSpec) -> Result<Vec<String>, ParamError> {
    if spec.sampling.is_uniform() {
        return Ok(Vec::new());
    }
    let def = def_of(&spec.process);
    if !def.settings.biased {
        return Err(ParamError::at(
            "sampling",
            crate::sampling::unsupported_message(def.name, &spec.sampling),
        ));
    }
    if let Err(e) = spec.sampling.validate(spec.n) {
        let field = match &e {
            crate::Error::Invalid { field, .. } => field.to_string(),
            _ => "sampling".into(),
        };
        return Err(ParamError::at(&field, e.to_string()));
    }
    Ok(spec.sampling.warnings(spec.n))
}

/// The registry's refusal of capacities (`docs/capacities.md`) for a process whose rule
/// does not read its loads through the bin engine's load state and draw its bins from the
/// sampling law: the same processes as biased sampling.
pub(crate) fn check_capacities_process(spec: &RunSpec) -> Result<(), ParamError> {
    if spec.capacities.is_unit() {
        return Ok(());
    }
    let def = def_of(&spec.process);
    if def.settings.biased {
        return Ok(());
    }
    Err(ParamError::at(
        "capacities",
        format!(
            "process `{}` does not take capacities (its rule does not read normalised loads \
             on the bin engine); got capacities \"{}\". `ballast list` marks the processes \
             that do",
            def.name,
            spec.capacities.name()
        ),
    ))
}

/// Memory of a non-uniform law on the bin engine, bytes, from above: while the alias table is
/// built, the weights, their scaled copy, the table (12 bytes per bin) and the work lists
/// (4), plus 8 per bin of explicit weights held by the spec; 0 for uniform sampling.
fn sampling_table_bytes(spec: &RunSpec) -> u128 {
    if spec.sampling.is_uniform() {
        0
    } else {
        u128::from(spec.n) * 40
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tau;

    #[test]
    fn chunked_level_kinds_place_no_ball_one_at_a_time() {
        let (n, m) = (1 << 20, 1 << 24);
        let levels = |p: ProcessSpec| RunSpec::new(p, n, m).engine(Engine::Levels);
        let adaptive = ProcessSpec::Adaptive { tau: Tau::PROBE_COUNT, cap: None };
        for p in [
            ProcessSpec::OneChoice,
            ProcessSpec::DChoice { d: 2 },
            ProcessSpec::OnePlusBeta { beta: 0.5 },
            ProcessSpec::Quantile { delta: 0.5 },
            ProcessSpec::MixedQuantile { delta: 0.5, eta: 0.5 },
            ProcessSpec::Threshold { f: 1.0 },
            ProcessSpec::MeanThinning { strict: true },
            ProcessSpec::RelativeThreshold { f: 1.0 },
            ProcessSpec::GBounded { g: 2.0 },
            ProcessSpec::GMyopic { g: 2.0 },
            ProcessSpec::SigmaNoisyLoad { sigma: 1.0, truncate: true },
            adaptive,
        ] {
            assert_eq!(ball_by_ball_balls(&levels(p.clone())), 0, "{p:?} on levels");
            assert_eq!(ball_by_ball_balls(&levels(p.clone()).engine(Engine::Bins)), m, "{p:?}");
        }
        // Kinds whose level loop steps ball by ball.
        for p in [ProcessSpec::Packing { offset: 1 }, ProcessSpec::Memory { d: 1, k: 1 }] {
            assert_eq!(ball_by_ball_balls(&levels(p.clone())), m, "{p:?} on levels");
        }
    }

    #[test]
    fn batches_that_go_to_one_bin_are_warned_about_and_others_are_not() {
        let warned = |p: ProcessSpec, b: Option<u64>| {
            let spec = RunSpec::new(p, 100, 1000);
            let spec = if let Some(b) = b { spec.batched(b) } else { spec };
            check_run(&spec).expect("legal").iter().any(|w| w.contains("degenerate"))
        };
        for p in [
            ProcessSpec::Memory { d: 1, k: 1 },
            ProcessSpec::Caching { d: 2 },
            ProcessSpec::TightPacking { offset: 1, balls: None },
        ] {
            assert!(warned(p.clone(), Some(100)), "{p:?} in batches of 100");
            assert!(!warned(p.clone(), Some(1)), "{p:?} in batches of 1");
            assert!(!warned(p.clone(), None), "{p:?} sequentially");
        }
        for p in [ProcessSpec::DChoice { d: 2 }, ProcessSpec::Packing { offset: 1 }] {
            assert!(!warned(p.clone(), Some(100)), "{p:?} in batches of 100");
        }
    }

    #[test]
    fn every_entry_builds_its_example_and_names_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for p in PROCESSES {
            assert!(seen.insert(p.name), "duplicate kind {}", p.name);
            let spec = p.example();
            assert!(
                def_of(&spec).name == p.name || spec.kind() == "d_choice",
                "{} builds a {} spec",
                p.name,
                spec.kind()
            );
            assert_eq!(spec.unit_weights_only(), p.unit_weights_only, "{}", p.name);
        }
    }

    #[test]
    fn unknown_names_and_values_are_refused_with_the_allowed_ones() {
        let e = find("two_chioce").unwrap_err().to_string();
        assert!(e.contains("did you mean `two_choice`"), "{e}");
        let tc = find("two_choice").unwrap();
        let e = tc.build(&[("d", ParamValue::Num(3.0))]).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("d"));
        assert!(e.message.contains("allowed parameters: replacement"), "{e}");
        let dc = find("d_choice").unwrap();
        let e = dc.build(&[("dd", ParamValue::Num(3.0))]).unwrap_err().to_string();
        assert!(e.contains("did you mean `d`"), "{e}");
        let e = dc.build(&[("d", ParamValue::Num(2.5))]).unwrap_err().to_string();
        assert!(e.contains("an integer in 1..=1024"), "{e}");
        let e = dc.build(&[]).unwrap_err().to_string();
        assert!(e.contains("needs parameter `d`"), "{e}");
        let e = dc
            .build(&[("d", ParamValue::Num(2.0)), ("d", ParamValue::Num(3.0))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("given twice"), "{e}");
        let e = find("mean_thinning")
            .unwrap()
            .build(&[("strict", ParamValue::Num(1.0))])
            .unwrap_err()
            .to_string();
        assert!(e.contains("true or false"), "{e}");
    }

    #[test]
    fn adaptive_presets_and_open_form() {
        let a = find("adaptive").unwrap();
        let t = |s: &str| ParamValue::Text(s.to_owned());
        assert_eq!(
            a.build(&[("preset", t("greedy")), ("d", ParamValue::Num(2.0))]).unwrap(),
            ProcessSpec::Adaptive { tau: Tau::NEVER, cap: Some(2) }
        );
        let e = a.build(&[("preset", t("greedy"))]).unwrap_err().to_string();
        assert!(e.contains("needs `d`"), "{e}");
        let e = a.build(&[("preset", t("greddy"))]).unwrap_err().to_string();
        assert!(e.contains("did you mean `greedy`"), "{e}");
        let open = a
            .build(&[("tau.per_probe", ParamValue::Num(1.0)), ("cap", ParamValue::Num(9.0))])
            .unwrap();
        assert!(matches!(open, ProcessSpec::Adaptive { cap: Some(9), .. }));
        let e =
            a.build(&[("preset", t("probe_count")), ("cap", ParamValue::Num(3.0))]).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("cap"));
        assert!(a.build(&[]).is_err());
    }

    #[test]
    fn tie_rules_follow_the_entry() {
        let oc = find("one_choice").unwrap();
        assert!(oc.accepts_tie(TieBreak::Random));
        assert!(!oc.accepts_tie(TieBreak::Position));
        assert!(oc.tie_error(TieBreak::Position).contains("would be ignored"));
        assert!(find("two_choice").unwrap().accepts_tie(TieBreak::LowestIndex));
    }
}
