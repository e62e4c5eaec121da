//! What a process kind of the catalogue supplies ([`Kind`]), and the two hand-offs through
//! which it reaches the level engine ([`LevelSteps`], [`LevelBatch`]). Each kind is one file
//! of `kinds/` implementing [`Kind`]; the list in `kinds/mod.rs` generates the one `match`
//! over [`ProcessSpec`] that every engine and check goes through.
//!
//! A kind never calls an engine: it hands its rule to a loop ([`WithRule`]) or names its
//! level route on a visitor that the level engine implements, so the engines stay above the
//! kinds and nothing loops back.

use crate::error::Error;
use crate::process::{Accept, Filling, Noisy, TightCount};
use crate::spec::{ProcessSpec, RunSpec, Tau, TieBreak};
use crate::with_rule::WithRule;

/// The level engine's sequential routes: the generic loop over the sorted view
/// ([`WithRule::run`]) and the shortcuts a kind may name instead (each exact, each with its
/// law tests in `level/`).
pub(crate) trait LevelSteps: WithRule + Sized {
    /// One-Choice: one batched step per stretch between observation points.
    fn one_choice(self) -> Self::Out;
    /// d-Choice (`d >= 2`): the least of d uniform positions, in chunks at large n.
    fn d_choice(self, d: u32) -> Self::Out;
    /// (1+β): a mixture of One- and Two-Choice steps, in chunks at large n.
    fn one_plus_beta(self, beta: f64) -> Self::Out;
    /// Mixed Quantile (`eta = 1`: Quantile): a cut at rank ⌈δn⌉, in chunks at large n.
    fn quantile(self, delta: f64, eta: f64) -> Self::Out;
    /// Two-thinning: a cut on the first sample's load.
    fn thinning(self, accept: Accept) -> Self::Out;
    /// A decision on two levels (g-Bounded, g-Myopic, σ-Noisy-Load).
    fn pair(self, rule: Noisy) -> Self::Out;
    /// Packing or Twinning, step by step.
    fn filling(self, rule: Filling) -> Self::Out;
    /// Tight-Packing in blocks.
    fn tight(self, count: TightCount) -> Self::Out;
    /// A one-bin cache tracked beside the histogram (`LEAST`: (1, 1)-Memory, else Caching).
    fn memory_one<const LEAST: bool>(self) -> Self::Out;
    /// Adaptive probing with the bin engine's probe histogram.
    fn adaptive(self, tau: Tau, cap: Option<u32>) -> Self::Out;
}

/// The reallocation loops of the kinds that move old balls ([`Kind::REALLOCATES`]), which
/// the engine layer implements on the engine the run resolves to.
pub(crate) trait Reallocation {
    type Out;
    /// Czumaj–Stemann: the new ball and the balls of the `d` sampled bins spread evenly.
    fn equalize(self, d: u32) -> Self::Out;
    /// The new ball to a least loaded of `d` samples, then at most `moves` single moves.
    fn equalize_moves(self, d: u32, moves: u32) -> Self::Out;
}

/// The batch law of one process on the level histogram (`level/batch.rs`): the class
/// probabilities of a ball deciding on the frozen view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum BatchLaw {
    OneChoice,
    DChoice { d: u32 },
    OnePlusBeta { beta: f64 },
    MixedQuantile { delta: f64, eta: f64 },
    Threshold { f: f64 },
    MeanThinning { strict: bool },
    RelativeThreshold { f: f64 },
    GBounded { g: f64 },
    GMyopic { g: f64 },
    SigmaNoisy { sigma: f64, truncate: bool },
}

/// The level engine's batched routes: a batch law, or every decision on the frozen sorted
/// view ([`WithRule::run`], `level/frozen.rs`).
pub(crate) trait LevelBatch: WithRule + Sized {
    /// One step per batch by the law.
    fn law(self, law: BatchLaw) -> Self::Out;
}

/// One process kind of the catalogue: its checks, its bin-engine rule, its level route or
/// the reason it has none. Methods take the spec (or its process), which the list in
/// `kinds/mod.rs` has matched to the kind's variant.
pub(crate) trait Kind {
    /// The parameters' ranges and the checks across parameters.
    fn check(p: &ProcessSpec) -> Result<(), Error>;
    /// Checks against the run (its `n`, `m`, weights), called after [`Kind::check`] passed;
    /// none by default.
    fn check_run(_spec: &RunSpec) -> Result<(), Error> {
        Ok(())
    }
    /// Hands the bin engine's rule for `spec` to `runner`.
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out;
    /// The rule drawing distinct bins (`replacement = false`), for the kinds that take the
    /// option.
    fn distinct<X: WithRule>(p: &ProcessSpec, _tie: TieBreak, _runner: X) -> X::Out {
        unreachable!("validated: `{}` takes no replacement option", p.kind())
    }
    /// `Ok` if the level engine runs `spec` exactly (`batched`: in the batched setting),
    /// else why not.
    fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error>;
    /// The sequential level route (called only when [`Kind::levels`] is `Ok`).
    fn level_steps<V: LevelSteps>(spec: &RunSpec, _v: V) -> V::Out {
        unreachable!("`{}`: refused by level_support", spec.process.kind())
    }
    /// The batch law on the level engine, if the kind has one.
    fn batch_law(_p: &ProcessSpec) -> Option<BatchLaw> {
        None
    }
    /// The batched level route (called only when [`Kind::levels`] is `Ok` for batches): by
    /// default the kind's [`Kind::batch_law`].
    fn level_batch<V: LevelBatch>(spec: &RunSpec, v: V) -> V::Out {
        match Self::batch_law(&spec.process) {
            Some(law) => v.law(law),
            None => unreachable!("`{}`: refused by level_support", spec.process.kind()),
        }
    }
    /// Whether the kind places unit balls only (it counts balls to fill a bin, or its cache
    /// rule needs the receiver's load after placing): its registry entry's
    /// `unit_weights_only`.
    fn unit_weights_only(_p: &ProcessSpec) -> bool {
        false
    }
    /// Whether a step can place several balls (the run's stop rule then applies).
    fn multi_ball(_p: &ProcessSpec) -> bool {
        false
    }
    /// Whether the kind compares loads of several samples, so that a tie rule applies.
    fn compares(_p: &ProcessSpec) -> bool {
        false
    }
    /// Whether the kind takes the option `replacement = false` ([`Kind::distinct`]).
    const TAKES_REPLACEMENT: bool = false;
    /// Whether the kind moves old balls between bins, on a reallocation loop of its own.
    const REALLOCATES: bool = false;
    /// Whether the kind's choices go to a bin it keeps as the least loaded (a remembered or
    /// a currently lightest bin), so that in batches, where the loads are frozen at the batch
    /// start, every ball of a batch goes to the same bin: legal, but degenerate (a warning).
    const SAME_BIN_IN_BATCHES: bool = false;
    /// Whether the kind's number of probes per step varies by design, so that every run
    /// records its histogram (adaptive probing), on either engine.
    const RECORDS_PROBES: bool = false;
    /// Whether the level engine runs the kind's sequential setting without work per ball
    /// at scale (a chunk step, or a law over whole stretches), so that the limit on balls
    /// placed one at a time (`registry::MAX_RUN_BALL_BY_BALL`) does not apply there.
    const LEVEL_CHUNKS: bool = false;
    /// The smallest `n` from which `auto` runs the sequential setting on the level engine
    /// (measured crossovers, `choice.rs`); by default the generic loop's.
    fn auto_levels_min_n(_spec: &RunSpec) -> u64 {
        crate::crossover::AUTO_SEQUENTIAL_MIN_N
    }
    /// The fewest balls per batch from which `auto` runs the batched setting on the level
    /// engine (measured crossovers, `choice.rs`); by default the generic one.
    fn auto_batch_min_balls(_spec: &RunSpec) -> u64 {
        crate::crossover::AUTO_BATCH_MIN_BALLS
    }
    /// Whether the bin engine keeps every bin's rank in load order (the Quantile rules
    /// decide on ranks; sequentially the ranks are kept up to date ball by ball).
    const USES_RANKS: bool = false;
    /// Whether the bin engine keeps the set of least loaded bins (Tight-Packing sends its
    /// balls there).
    const KEEPS_MIN_SET: bool = false;
    /// Whether the kind fills a bin with whole balls up to the rounded-up average, a count
    /// of balls, which has no meaning for loads normalised by capacities.
    fn fills_to_average(_p: &ProcessSpec) -> bool {
        false
    }
    /// The run of a kind that moves old balls, on its reallocation loop ([`Reallocation`]).
    fn reallocation<V: Reallocation>(spec: &RunSpec, _v: V) -> V::Out {
        unreachable!("`{}` moves no old balls (checked by REALLOCATES)", spec.process.kind())
    }
}

/// The refusal of kinds that the level engine runs sequentially only: `Ok` sequentially,
/// `why` in batches.
pub(crate) fn sequential_only(batched: bool, why: String) -> Result<(), Error> {
    if batched {
        Err(Error::use_bins(why))
    } else {
        Ok(())
    }
}
