//! The process kinds of the catalogue, one file each: every file implements
//! [`crate::kind::Kind`] for its variant of [`ProcessSpec`] (its checks, its bin-engine rule,
//! its level route or the reason it has none, its `auto` crossover). The list at the end of
//! this file generates the one `match` over the variants behind every engine and check; no
//! other module matches over all processes.
//!
//! Adding a catalogue kind: its variant of [`ProcessSpec`], a file here, its `mod` line and
//! its line in the list, and its registry entry. (A kind declared outside the catalogue is
//! one [`crate::item::ProcessItem`] instead, reached through [`ProcessSpec::Custom`].)

use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelBatch, LevelSteps};
use crate::spec::{ProcessSpec, RunSpec, TieBreak};
use crate::with_rule::WithRule;

mod adaptive;
mod always_go_left;
mod custom;
mod d_choice;
mod equalize;
mod filling;
mod formula_threshold;
mod k_threshold;
mod memory;
mod noisy;
mod one_choice;
mod one_plus_beta;
mod quantile;
mod rank_vector;
mod rule;
mod thinning;
mod tight_packing;
mod unfair_d_choice;
mod without_replacement;

/// `Ok` when `v` lies in [0, 1], else an error naming parameter `name`.
fn unit_interval(name: &'static str, v: f64) -> Result<(), Error> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(Error::invalid(name, v, "a number in [0, 1]"))
    }
}

/// `Ok` when `v` is finite and at least 0, else an error naming parameter `name`.
fn non_negative(name: &'static str, v: f64) -> Result<(), Error> {
    if v.is_finite() && v >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(name, v, "a finite number >= 0"))
    }
}

/// `Ok` when `value` lies in `lo..=hi`, else an error naming parameter `name` with the range
/// `allowed`.
fn int_in(
    name: &'static str,
    value: u32,
    lo: u32,
    hi: u32,
    allowed: &'static str,
) -> Result<(), Error> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(Error::invalid(name, value, allowed))
    }
}

/// The number of samples of the d-sample kinds: 1..=1024.
fn samples(d: u32) -> Result<(), Error> {
    int_in("d", d, 1, 1024, "an integer in 1..=1024")
}

/// The fill offset of Packing and Tight-Packing: 0..=1000000.
fn packing_offset(offset: u32) -> Result<(), Error> {
    int_in("offset", offset, 0, 1_000_000, "an integer in 0..=1000000")
}

/// The level engine's refusal of multi-ball steps in batches: exact sequentially; inside a
/// batch the number of steps is random (a step may be cut at the batch end), which the
/// batch step does not model.
fn multi_ball_steps(spec: &RunSpec, batched: bool) -> Result<(), Error> {
    crate::kind::sequential_only(
        batched,
        format!(
            "the level engine simulates {} sequentially only (multi-ball steps inside a batch \
             are not modelled)",
            spec.process.kind()
        ),
    )
}

/// The level engine's refusal of kinds that read bin identities (a cache of bins, groups of
/// bins by index).
fn bin_identities(spec: &RunSpec) -> Error {
    Error::use_bins(format!(
        "{} remembers or groups particular bins, which the level engine's histogram does not \
         know",
        spec.process.kind()
    ))
}

/// The refusal of the kinds whose rule the level engine runs sequentially only (no batch law).
fn no_batch_law(spec: &RunSpec, batched: bool) -> Result<(), Error> {
    crate::kind::sequential_only(
        batched,
        format!(
            "the level engine simulates {} sequentially only (no batch law for it yet)",
            spec.process.kind()
        ),
    )
}

macro_rules! kinds {
    ($( $variant:ident => $m:ident, )*) => {
        /// [`Kind::check`] of the process's kind.
        pub(crate) fn check(p: &ProcessSpec) -> Result<(), Error> {
            match p { $( ProcessSpec::$variant { .. } => <$m::Item as Kind>::check(p), )* }
        }

        /// [`Kind::check_run`] of the run's kind.
        pub(crate) fn check_run(spec: &RunSpec) -> Result<(), Error> {
            match spec.process {
                $( ProcessSpec::$variant { .. } => <$m::Item as Kind>::check_run(spec), )*
            }
        }

        /// Hands the bin engine's rule of `spec` to `runner` ([`Kind::bins`]).
        pub(crate) fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
            match spec.process {
                $( ProcessSpec::$variant { .. } => <$m::Item as Kind>::bins(spec, runner), )*
            }
        }

        /// Hands the rule of `p` drawing distinct bins to `runner` ([`Kind::distinct`]).
        pub(crate) fn distinct<X: WithRule>(p: &ProcessSpec, tie: TieBreak, runner: X) -> X::Out {
            match p {
                $( ProcessSpec::$variant { .. } => <$m::Item as Kind>::distinct(p, tie, runner), )*
            }
        }

        /// [`Kind::levels`] of the run's kind.
        pub(crate) fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error> {
            match spec.process {
                $( ProcessSpec::$variant { .. } => <$m::Item as Kind>::levels(spec, batched), )*
            }
        }

        /// The sequential level route of the run's kind ([`Kind::level_steps`]).
        pub(crate) fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
            match spec.process {
                $( ProcessSpec::$variant { .. } => <$m::Item as Kind>::level_steps(spec, v), )*
            }
        }

        /// The batch law of `p` on the level engine, if it has one ([`Kind::batch_law`]).
        pub(crate) fn batch_law(p: &ProcessSpec) -> Option<BatchLaw> {
            match p { $( ProcessSpec::$variant { .. } => <$m::Item as Kind>::batch_law(p), )* }
        }

        /// The batched level route of the run's kind ([`Kind::level_batch`]).
        pub(crate) fn level_batch<V: LevelBatch>(spec: &RunSpec, v: V) -> V::Out {
            match spec.process {
                $( ProcessSpec::$variant { .. } => <$m::Item as Kind>::level_batch(spec, v), )*
            }
        }

        /// [`Kind::auto_levels_min_n`] of the run's kind.
        pub(crate) fn auto_levels_min_n(spec: &RunSpec) -> u64 {
            match spec.process {
                $( ProcessSpec::$variant { .. } => <$m::Item as Kind>::auto_levels_min_n(spec), )*
            }
        }
    };
}

kinds! {
    OneChoice => one_choice,
    DChoice => d_choice,
    UnfairDChoice => unfair_d_choice,
    RankVector => rank_vector,
    KThreshold => k_threshold,
    FormulaThreshold => formula_threshold,
    OnePlusBeta => one_plus_beta,
    Quantile => quantile,
    MixedQuantile => quantile,
    Threshold => thinning,
    MeanThinning => thinning,
    RelativeThreshold => thinning,
    GBounded => noisy,
    GMyopic => noisy,
    SigmaNoisyLoad => noisy,
    Twinning => filling,
    Packing => filling,
    TightPacking => tight_packing,
    Memory => memory,
    Caching => memory,
    AlwaysGoLeft => always_go_left,
    Adaptive => adaptive,
    Equalize => equalize,
    EqualizeMoves => equalize,
    Rule => rule,
    Custom => custom,
    WithoutReplacement => without_replacement,
}

impl ProcessSpec {
    /// Checks parameter ranges (and the checks across parameters) of the process's kind.
    pub fn validate(&self) -> Result<(), Error> {
        check(self)
    }
}
