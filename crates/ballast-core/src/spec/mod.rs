//! Plain-data descriptions of a run: which process, which setting, which weights.
//!
//! These types are the boundary between configuration (the runner, the CLI) and the
//! engines. They carry no behaviour: each variant of [`ProcessSpec`] has its kind (a file of
//! `kinds/`: checks, rule, level route), which [`crate::simulate`] asks once per run before
//! it enters a monomorphised hot loop.

use crate::Error;

mod adaptive;
mod checks;
mod churn;
mod delay;

pub(crate) use adaptive::greedy_d;
pub use adaptive::{check_tau_probes, Tau, TAU_VARS};
pub use checks::{check_thresholds, distinct_d, is_distinct_pair, MAX_K};
pub use churn::{
    check_dynamic_bins, churn_on_levels, dynamic_bins_bytes, Assign, Churn, Dispatchers, JoinAt,
    Leaving, LeftBalls, CHURN, DISPATCHERS,
};
pub use delay::DelayMode;

/// An allocation process (`docs/processes.md`). Every comparing process also takes a [`TieBreak`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProcessSpec {
    /// One uniform sample; the ball goes there.
    OneChoice,
    /// `d` uniform samples; the ball goes to a least loaded one.
    DChoice {
        /// Number of samples, at least 1.
        d: u32,
    },
    /// Unfair d-Choice: `d` uniform samples; the ball goes to a *most* loaded one.
    UnfairDChoice {
        /// Number of samples, at least 1.
        d: u32,
    },
    /// Allocation vector over ranks ([`crate::rank_vector`]): the ball goes to the bin at a
    /// rank drawn from a probability vector (rank 1 the most loaded, ties in random order).
    RankVector {
        /// Cumulative probabilities of ranks 1..=n (non-decreasing, last entry 1).
        cum: Vec<f64>,
    },
    /// k-Threshold ([`crate::k_threshold`]): two samples seen through the questions
    /// "load >= W/n + f_j?"; fewer "yes" answers wins, a coin between equal counts.
    KThreshold {
        /// Thresholds above the average, strictly increasing, 1 to 64 of them.
        f: Vec<f64>,
    },
    /// Two-Thinning with a threshold formula ([`crate::formula_threshold`]): sample `i1`;
    /// accept it if its load is at most `f(t, n, avg)`, else the ball goes to a fresh sample.
    FormulaThreshold {
        /// The threshold in `t` (balls placed so far), `n` and `avg` (`W/n`).
        f: crate::formula::Formula,
    },
    /// With probability `beta` a Two-Choice step, otherwise a One-Choice step.
    OnePlusBeta {
        /// Probability of taking a second sample, in `[0, 1]`.
        beta: f64,
    },
    /// Sample `i1`; if it is among the `ceil(delta * n)` heaviest bins (by rank), the ball goes
    /// to a fresh sample without comparison, else to `i1`.
    Quantile {
        /// Fraction of bins counted as heavy, in `[0, 1]`.
        delta: f64,
    },
    /// With probability `eta` a Quantile(`delta`) step, else a One-Choice step.
    MixedQuantile {
        /// Quantile fraction, in `[0, 1]`.
        delta: f64,
        /// Probability of a Quantile step, in `[0, 1]`.
        eta: f64,
    },
    /// Sample `i1`; accept it if its load is at most `f`, else the ball goes to a fresh sample.
    Threshold {
        /// Absolute load threshold.
        f: f64,
    },
    /// Sample `i1`; accept it if underloaded (`x < W/n`, or `x <= W/n` when not strict),
    /// else the ball goes to a fresh sample.
    MeanThinning {
        /// `true`: accept only `x < W/n` (the default); `false`: accept `x <= W/n`.
        strict: bool,
    },
    /// Two samples; if their loads differ by more than `g` the lighter gets the ball, otherwise
    /// an adversary gives it to the heavier (exact tie: the second sample).
    GBounded {
        /// Tolerance, `>= 0`.
        g: f64,
    },
    /// Two samples; if their loads differ by at most `g` a fair coin decides, else the lighter.
    GMyopic {
        /// Tolerance, `>= 0`.
        g: f64,
    },
    /// Two samples compared through `x + N(0, σ²)` (fresh noise per sample per step).
    SigmaNoisyLoad {
        /// Noise standard deviation, `>= 0`.
        sigma: f64,
        /// Truncate each estimate to an integer before comparing, as the authors' code does.
        truncate: bool,
    },
    /// Sample `i1`; accept it if `x < W/n + f`, else the ball goes to a fresh sample.
    RelativeThreshold {
        /// Offset from the average.
        f: f64,
    },
    /// One sample; an underloaded bin gets 2 balls, otherwise 1 (unit weights).
    Twinning,
    /// One sample; an underloaded bin is raised to `⌈W/n⌉ + offset`, otherwise 1 ball (unit
    /// weights). A bin exactly at the average counts as overloaded.
    Packing {
        /// Fill level above the rounded-up average (1 in the paper; 0 = fill to the average).
        offset: u32,
    },
    /// Reconstructed Tight-Packing: one sample; overloaded → 1 ball to it; underloaded →
    /// `balls` balls (default: as many as Packing would), each to a currently least loaded bin.
    TightPacking {
        /// Packing offset used by the default ball count.
        offset: u32,
        /// Fixed number of balls per underloaded sample instead of Packing's count.
        balls: Option<u32>,
    },
    /// Mitzenmacher–Prabhakar–Shah (d, k)-memory: `d` fresh samples plus `k` cached bins; the
    /// ball goes to a least loaded one; the cache keeps the `k` least loaded after placing.
    Memory {
        /// Fresh samples per ball, at least 1.
        d: u32,
        /// Cache size, at least 1.
        k: u32,
    },
    /// Caching: `d` fresh samples plus the bin that received the previous ball.
    Caching {
        /// Fresh samples per ball, at least 1.
        d: u32,
    },
    /// Vöcking's Always-Go-Left: `d` contiguous groups, one sample each, ties to the left.
    AlwaysGoLeft {
        /// Number of groups, `1 <= d <= n`.
        d: u32,
    },
    /// Czumaj–Stemann adaptive probing: probe uniform bins one at a time, keep the least
    /// loaded, stop when its load is below `tau` at the current probe count or at `cap` probes.
    Adaptive {
        /// Threshold sequence.
        tau: Tau,
        /// Probe cap (`None`: unbounded; then `tau` must eventually stop the probing).
        cap: Option<u32>,
    },
    /// Czumaj–Stemann reallocation: `d` samples; the new ball and all balls of the distinct
    /// sampled bins are spread over them as evenly as possible (sequential, unit balls).
    Equalize {
        /// Number of samples, at least 1.
        d: u32,
    },
    /// Reallocation with at most `moves` moved balls per step (`kind = "equalize"` with
    /// `moves`, [`crate::realloc`]): `d` samples; the new ball to a least loaded distinct
    /// sampled bin, then up to `moves` times a ball from a most loaded to a least loaded one
    /// while their loads differ by at least 2 (ties uniformly at random; sequential, unit
    /// balls).
    EqualizeMoves {
        /// Number of samples, at least 1.
        d: u32,
        /// Old balls moved per step at most (0: Greedy\[d\] with random ties).
        moves: u32,
    },
    /// A rule written as a formula ([`crate::rule_formula`]): `d` samples; the formula's value
    /// is the 1-based position of the sample that gets the ball.
    Rule {
        /// Number of samples, 1 to 8.
        d: u32,
        /// The decision formula in `x1` … `xd`, `avg`, `t`, `n`, `d`, `u`.
        choose: crate::formula::Formula,
        /// `true`: the samples are drawn by the run's sampling law, independently; `false`:
        /// `d` distinct uniform bins, every ordered d-tuple equally likely
        /// ([`crate::process::distinct`]).
        replacement: bool,
    },
    /// A process declared outside the built-in catalogue ([`crate::item`]): its item and
    /// its checked parameters.
    Custom(crate::item::CustomSpec),
    /// The process inside, with its samples drawn without replacement (`replacement = false`
    /// in configs): distinct bins, every ordered tuple equally likely, decided as with
    /// replacement ([`crate::process::distinct`]). Only for the kinds that
    /// [take the option](ProcessSpec::takes_replacement); made by
    /// [`ProcessSpec::without_replacement`].
    WithoutReplacement(Box<ProcessSpec>),
}

/// The most samples a `rule` draws ([`ProcessSpec::Rule`]).
pub const RULE_MAX_D: u32 = 8;

impl ProcessSpec {
    /// The snake_case kind name used in configs and on the command line.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::OneChoice => "one_choice",
            Self::DChoice { .. } => "d_choice",
            Self::UnfairDChoice { .. } => "unfair_d_choice",
            Self::RankVector { .. } => "rank_vector",
            Self::KThreshold { .. } => "k_threshold",
            Self::FormulaThreshold { .. } => "formula_threshold",
            Self::OnePlusBeta { .. } => "one_plus_beta",
            Self::Quantile { .. } => "quantile",
            Self::MixedQuantile { .. } => "mixed_quantile",
            Self::Threshold { .. } => "threshold",
            Self::MeanThinning { .. } => "mean_thinning",
            Self::GBounded { .. } => "g_bounded",
            Self::GMyopic { .. } => "g_myopic",
            Self::SigmaNoisyLoad { .. } => "sigma_noisy_load",
            Self::RelativeThreshold { .. } => "relative_threshold",
            Self::Twinning => "twinning",
            Self::Packing { .. } => "packing",
            Self::TightPacking { .. } => "tight_packing",
            Self::Memory { .. } => "memory",
            Self::Caching { .. } => "caching",
            Self::AlwaysGoLeft { .. } => "always_go_left",
            Self::Adaptive { .. } => "adaptive",
            Self::Equalize { .. } | Self::EqualizeMoves { .. } => "equalize",
            Self::Rule { .. } => "rule",
            Self::Custom(c) => c.item().name(),
            Self::WithoutReplacement(p) => p.kind(),
        }
    }

    /// The process drawing its samples without replacement: `self` wrapped in
    /// [`ProcessSpec::WithoutReplacement`] (checked at validation: only kinds that
    /// [take the option](ProcessSpec::takes_replacement)).
    pub fn without_replacement(self) -> Self {
        Self::WithoutReplacement(Box::new(self))
    }

    /// The process with the option `replacement` as given: `self` when true, else
    /// [`ProcessSpec::without_replacement`].
    pub fn with_replacement(self, replacement: bool) -> Self {
        if replacement {
            self
        } else {
            self.without_replacement()
        }
    }

    /// The kind and parameters without the sampling option: the inner process of
    /// [`ProcessSpec::WithoutReplacement`], else `self`.
    pub fn base(&self) -> &Self {
        match self {
            Self::WithoutReplacement(p) => p,
            _ => self,
        }
    }
}

/// How a comparing process chooses among sampled bins of equal (least) load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TieBreak {
    /// Uniformly at random among the tied samples (counted with multiplicity).
    #[default]
    Random,
    /// The earliest tied sample. For i.i.d. samples this has the same law as `Random`.
    First,
    /// The tied bin with the lowest index.
    LowestIndex,
    /// The authors' batched code: loads sorted heaviest first, ties in index order, and the
    /// largest sampled *position* wins. Equivalently: the tied bin with the highest index.
    Position,
}

impl TieBreak {
    /// All rules with their names, for listings and error messages.
    pub const ALL: [(&'static str, TieBreak); 4] = [
        ("random", TieBreak::Random),
        ("first", TieBreak::First),
        ("lowest_index", TieBreak::LowestIndex),
        ("position", TieBreak::Position),
    ];

    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Random => "random",
            Self::First => "first",
            Self::LowestIndex => "lowest_index",
            Self::Position => "position",
        }
    }

    /// Parses a snake_case name.
    pub fn from_name(s: &str) -> Result<Self, Error> {
        Self::ALL.iter().find(|(n, _)| *n == s).map(|(_, t)| *t).ok_or_else(|| {
            Error::invalid("tie_break", s, "one of random, first, lowest_index, position")
        })
    }
}

/// When decisions see the loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// Every decision sees the current loads.
    Sequential,
    /// Balls arrive in batches of `b`; decisions use the loads (and ranks) frozen at the start
    /// of the batch; the gap is observed at every batch end.
    Batched {
        /// Balls per batch, at least 1.
        b: u64,
    },
    /// Each sampled bin reports its load from one of the last `tau` steps
    /// ([`crate::delay`]); observations as in the sequential setting.
    Delay {
        /// Window length in steps, at least 1 (1 = current loads).
        tau: u64,
        /// How the step is chosen.
        mode: DelayMode,
    },
}

pub use crate::weights::Weights;

/// What happens at m balls (and, in the batched setting, at a batch end) when a multi-ball
/// step (Twinning, Packing, Tight-Packing: [`ProcessSpec::multi_ball`]) would place more
/// balls than are left. Single-ball processes place exactly m balls either way: for them the
/// rule has no effect.
///
/// - [`Stop::Truncate`] (the default): the step is cut, so a run places exactly m balls and
///   a batch exactly b (the last batch `m mod b` when b does not divide m). For Twinning and
///   Packing the cut balls of a step crossing a batch end are dropped (the next batch starts
///   with a fresh step); a Tight-Packing round, which places its balls one decision at a
///   time, continues in the next batch and is cut only at m.
/// - [`Stop::Finish`]: the step (round) that reaches m is completed, so a run places
///   between m and m + s − 1 balls, s the size of its last step; the outcome's
///   [`crate::RunOutcome::balls`] says how many. In the batched setting every batch ends on
///   a step boundary: a batch takes whole steps, all decided on the loads frozen at its start,
///   until it holds at least b balls (at least the balls still missing to m, for the last
///   batch), so a batch holds b to b + s − 1 balls and "the round is finished" within the
///   batch that started it. Gaps are observed at these batch ends; sequential observation
///   points (`observe_every`, the end) fall at the first round end at or after each point
///   (with `Truncate` a Tight-Packing round may be observed midway).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Stop {
    /// Cut the step at m balls (and at batch ends): exactly m balls.
    #[default]
    Truncate,
    /// Complete the step that reaches m (or a batch end): m or slightly more balls.
    Finish,
}

impl Stop {
    /// All rules with their names.
    pub const ALL: [(&'static str, Stop); 2] =
        [("truncate", Stop::Truncate), ("finish", Stop::Finish)];

    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Truncate => "truncate",
            Self::Finish => "finish",
        }
    }

    /// Parses a name (`truncate`, `finish`).
    pub fn from_name(s: &str) -> Result<Self, Error> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, t)| *t)
            .ok_or_else(|| Error::invalid("stop", s, "one of truncate, finish"))
    }
}

/// Everything that defines one simulated run, except the random seed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSpec {
    /// Number of bins, at least 1.
    pub n: u64,
    /// Number of balls.
    pub m: u64,
    /// The allocation rule.
    pub process: ProcessSpec,
    /// Tie-breaking rule for comparing processes.
    pub tie_break: TieBreak,
    /// Sequential or batched.
    pub setting: Setting,
    /// Ball weights.
    pub weights: Weights,
    /// Sequential setting only: also observe the gap every this many balls (the end of the
    /// run is always an observation point). `None` observes only at the end.
    pub observe_every: Option<u64>,
    /// Keep the gap at every observation point in [`crate::RunOutcome::trajectory`].
    pub record_trajectory: bool,
    /// Keep the largest and the smallest load at every observation point in
    /// [`crate::RunOutcome::max_trajectory`] and [`crate::RunOutcome::min_trajectory`]
    /// (the bin engine pays O(n) per observation for the minimum). Only observes: the run
    /// draws the same random numbers with or without it.
    pub record_loads: bool,
    /// Keep the histogram of bin samples (probes) per step in
    /// [`crate::RunOutcome::samples_per_step`] for every process, not only those whose
    /// probe count varies by design (adaptive probing records it always). Recorded by the
    /// bin engine's loop, and for adaptive probing by the level engine too; otherwise the
    /// level engine, the sorted weighted batches and the sequential kernels step aside (same
    /// law; `auto` resolves to the bin engine), and the delay setting and `equalize` (loops
    /// of their own) record none.
    pub record_probes: bool,
    /// Simulation engine (default [`Engine::Auto`]).
    pub engine: Engine,
    /// Stopping rule for multi-ball steps at m balls and at batch ends (default
    /// [`Stop::Truncate`]; no effect on single-ball processes).
    pub stop: Stop,
    /// The law of each bin sample (default uniform; `docs/sampling.md`).
    pub sampling: crate::Sampling,
    /// The loads the run starts from (default [`crate::Start::Empty`]); `m` counts the
    /// balls the process adds on top ([`crate::start`]).
    pub start: crate::Start,
    /// The bins' capacities (default none: every capacity 1, the classical run;
    /// `docs/capacities.md`).
    pub capacities: crate::Capacities,
    /// Bins joining and leaving during the run (`crate::churn`; default none).
    pub churn: Option<Churn>,
    /// Several dispatchers on stale views (`crate::dispatchers`; default one, sequential).
    pub dispatchers: Option<Dispatchers>,
}

/// Which engine simulates a run (`ARCHITECTURE.md`, "Two engines, one meaning"; `docs/level-engine.md`). Both are exact;
/// they agree in distribution, not draw for draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// The level engine where it is exact and expected to be faster, else the bin engine:
    /// see [`crate::level::resolve_engine`] for the rule.
    #[default]
    Auto,
    /// One load per bin: every process, setting and weight.
    Bins,
    /// Bin counts per load level: unit weights and exchangeable processes
    /// ([`crate::level::level_support`]); memory O(levels), not O(n).
    Levels,
}

impl Engine {
    /// All engines with their names.
    pub const ALL: [(&'static str, Engine); 3] =
        [("auto", Engine::Auto), ("bins", Engine::Bins), ("levels", Engine::Levels)];

    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Bins => "bins",
            Self::Levels => "levels",
        }
    }

    /// Parses a name (`auto`, `bins`, `levels`).
    pub fn from_name(s: &str) -> Result<Self, Error> {
        Self::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, e)| *e)
            .ok_or_else(|| Error::invalid("engine", s, "one of auto, bins, levels"))
    }
}

impl RunSpec {
    /// A sequential, unit-weight run with random ties.
    pub fn new(process: ProcessSpec, n: u64, m: u64) -> Self {
        Self {
            n,
            m,
            process,
            tie_break: TieBreak::Random,
            setting: Setting::Sequential,
            weights: Weights::Unit,
            observe_every: None,
            record_trajectory: false,
            record_loads: false,
            record_probes: false,
            engine: Engine::Auto,
            stop: Stop::Truncate,
            sampling: crate::Sampling::Uniform,
            start: crate::Start::Empty,
            capacities: crate::Capacities::UNIT,
            churn: None,
            dispatchers: None,
        }
    }

    /// Builder: the bins' capacities.
    pub fn capacities(mut self, c: crate::Capacities) -> Self {
        self.capacities = c;
        self
    }

    /// Builder: start state.
    pub fn start(mut self, start: crate::Start) -> Self {
        self.start = start;
        self
    }

    /// Builder: stopping rule for multi-ball steps.
    pub fn stop(mut self, stop: Stop) -> Self {
        self.stop = stop;
        self
    }

    /// Builder: simulation engine.
    pub fn engine(mut self, e: Engine) -> Self {
        self.engine = e;
        self
    }

    /// Builder: batched setting with batch size `b`.
    pub fn batched(mut self, b: u64) -> Self {
        self.setting = Setting::Batched { b };
        self
    }

    /// Builder: tie-breaking rule.
    pub fn tie_break(mut self, t: TieBreak) -> Self {
        self.tie_break = t;
        self
    }

    /// Builder: the law of the bin samples.
    pub fn sampling(mut self, s: crate::Sampling) -> Self {
        self.sampling = s;
        self
    }

    /// Builder: weights.
    pub fn weights(mut self, w: Weights) -> Self {
        self.weights = w;
        self
    }
}
