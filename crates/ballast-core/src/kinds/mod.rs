//! The process kinds of the catalogue, one file each: every file holds its kind's registry
//! entry (a [`ProcessDef`] const, listed in `registry::PROCESSES`) and implements
//! [`crate::kind::Kind`] for its variant of [`ProcessSpec`] (its checks, its bin-engine rule,
//! its level route or the reason it has none, its `auto` crossover, the engines' questions).
//! The list at the end of this file declares the modules and generates the one `match` over
//! the variants behind every engine and check; no other module matches over all processes.
//!
//! Adding a catalogue kind: its variant of [`ProcessSpec`] (and its name in
//! [`ProcessSpec::kind`]), a file here, its line `file: Variant;` in the list, and its line
//! in `registry::PROCESSES`. (A kind declared outside the catalogue is one
//! [`crate::item::ProcessItem`] instead, reached through [`ProcessSpec::Custom`].)

use crate::def::ProcessDef;
use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelBatch, LevelSteps, Reallocation};
use crate::params::{ParamDef, ParamDefault, ParamType, ParamValue};
use crate::spec::{ProcessSpec, RunSpec, TieBreak};
use crate::with_rule::WithRule;

// The parameters that several kinds declare.

/// `d` of the d-sample kinds.
const D: ParamDef = ParamDef {
    name: "d",
    ty: ParamType::Int { lo: 1, hi: 1024 },
    default: ParamDefault::Required,
    doc: "number of samples",
};
/// `replacement` of the d-sample kinds.
const REPLACEMENT: ParamDef = ParamDef {
    name: crate::process::distinct::OPTION,
    ty: ParamType::Bool,
    default: ParamDefault::Bool(true),
    doc: "sample with replacement (false: d distinct bins, d <= n)",
};
/// `replacement` of the two-sample processes (one_plus_beta, g_bounded, g_myopic,
/// sigma_noisy_load, k_threshold).
const REPLACEMENT_PAIR: ParamDef = ParamDef {
    name: crate::process::distinct::OPTION,
    ty: ParamType::Bool,
    default: ParamDefault::Bool(true),
    doc: "sample with replacement (false: the two samples are distinct bins, n >= 2)",
};
/// `d` of Memory and Caching: fresh samples per ball.
const FRESH_D: ParamDef = ParamDef {
    name: "d",
    ty: ParamType::Int { lo: 1, hi: 1024 },
    default: ParamDefault::Num(1.0),
    doc: "fresh samples per ball",
};
/// `delta` of the Quantile kinds.
const DELTA: ParamDef = ParamDef {
    name: "delta",
    ty: ParamType::Unit,
    default: ParamDefault::Required,
    doc: "fraction of bins (by rank, heaviest first) counted as heavy",
};
/// `g` of g-Bounded and g-Myopic.
const G: ParamDef = ParamDef {
    name: "g",
    ty: ParamType::NonNeg,
    default: ParamDefault::Required,
    doc: "load difference up to which the comparison is unreliable",
};
/// `offset` of Packing and Tight-Packing.
const OFFSET: ParamDef = ParamDef {
    name: "offset",
    ty: ParamType::Int { lo: 0, hi: 1_000_000 },
    default: ParamDefault::Num(1.0),
    doc: "fill level above the rounded-up average (0 = fill to the average)",
};

/// `Ok` when `value` lies in the range that the kind's declaration `def` gives its parameter
/// `name`, else the error naming the parameter and that range: a range is declared once, in
/// the kind's registry entry, and checked from there for specs built by hand too.
fn declared(def: &ProcessDef, name: &str, value: f64) -> Result<(), Error> {
    let p = def.params.iter().find(|p| p.name == name).expect("a declared parameter");
    match def.list().check(p, &ParamValue::Num(value)) {
        Ok(()) => Ok(()),
        Err(_) => Err(Error::invalid(p.name, value, p.ty.describe())),
    }
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
    ($( $m:ident: $($variant:ident),+; )*) => {
        $( pub(crate) mod $m; )*

        /// [`Kind::check`] of the process's kind.
        pub(crate) fn check(p: &ProcessSpec) -> Result<(), Error> {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::check(p), )* }
        }

        /// [`Kind::check_run`] of the run's kind.
        pub(crate) fn check_run(spec: &RunSpec) -> Result<(), Error> {
            match spec.process {
                $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::check_run(spec), )*
            }
        }

        /// Hands the bin engine's rule of `spec` to `runner` ([`Kind::bins`]).
        pub(crate) fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
            match spec.process {
                $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::bins(spec, runner), )*
            }
        }

        /// Hands the rule of `p` drawing distinct bins to `runner` ([`Kind::distinct`]).
        pub(crate) fn distinct<X: WithRule>(p: &ProcessSpec, tie: TieBreak, runner: X) -> X::Out {
            match p {
                $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::distinct(p, tie, runner), )*
            }
        }

        /// [`Kind::levels`] of the run's kind.
        pub(crate) fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error> {
            match spec.process {
                $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::levels(spec, batched), )*
            }
        }

        /// The sequential level route of the run's kind ([`Kind::level_steps`]).
        pub(crate) fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
            match spec.process {
                $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::level_steps(spec, v), )*
            }
        }

        /// The batch law of `p` on the level engine, if it has one ([`Kind::batch_law`]).
        pub(crate) fn batch_law(p: &ProcessSpec) -> Option<BatchLaw> {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::batch_law(p), )* }
        }

        /// The batched level route of the run's kind ([`Kind::level_batch`]).
        pub(crate) fn level_batch<V: LevelBatch>(spec: &RunSpec, v: V) -> V::Out {
            match spec.process {
                $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::level_batch(spec, v), )*
            }
        }

        /// [`Kind::unit_weights_only`] of the process's kind.
        fn unit_weights_only(p: &ProcessSpec) -> bool {
            match p {
                $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::unit_weights_only(p), )*
            }
        }

        /// [`Kind::multi_ball`] of the process's kind.
        fn multi_ball(p: &ProcessSpec) -> bool {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::multi_ball(p), )* }
        }

        /// [`Kind::compares`] of the process's kind.
        fn compares(p: &ProcessSpec) -> bool {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::compares(p), )* }
        }

        /// [`Kind::TAKES_REPLACEMENT`] of the process's kind.
        fn takes_replacement(p: &ProcessSpec) -> bool {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::TAKES_REPLACEMENT, )* }
        }

        /// [`Kind::REALLOCATES`] of the process's kind.
        fn reallocates(p: &ProcessSpec) -> bool {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::REALLOCATES, )* }
        }

        /// [`Kind::LEVEL_CHUNKS`] of the process's kind.
        pub(crate) fn level_chunks(p: &ProcessSpec) -> bool {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::LEVEL_CHUNKS, )* }
        }

        /// [`Kind::RECORDS_PROBES`] of the process's kind.
        fn records_probes(p: &ProcessSpec) -> bool {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::RECORDS_PROBES, )* }
        }

        /// [`Kind::SAME_BIN_IN_BATCHES`] of the process's kind.
        fn same_bin_in_batches(p: &ProcessSpec) -> bool {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::SAME_BIN_IN_BATCHES, )* }
        }

        /// [`Kind::auto_levels_min_n`] of the run's kind.
        pub(crate) fn auto_levels_min_n(spec: &RunSpec) -> u64 {
            match spec.process {
                $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::auto_levels_min_n(spec), )*
            }
        }

        /// [`Kind::auto_batch_min_balls`] of the run's kind.
        pub(crate) fn auto_batch_min_balls(spec: &RunSpec) -> u64 {
            match spec.process {
                $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::auto_batch_min_balls(spec), )*
            }
        }

        /// [`Kind::USES_RANKS`] of the process's kind.
        pub(crate) fn uses_ranks(p: &ProcessSpec) -> bool {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::USES_RANKS, )* }
        }

        /// [`Kind::KEEPS_MIN_SET`] of the process's kind.
        pub(crate) fn keeps_min_set(p: &ProcessSpec) -> bool {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::KEEPS_MIN_SET, )* }
        }

        /// [`Kind::fills_to_average`] of the process's kind.
        pub(crate) fn fills_to_average(p: &ProcessSpec) -> bool {
            match p { $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::fills_to_average(p), )* }
        }

        /// The reallocation loop of the run's kind ([`Kind::reallocation`]).
        pub(crate) fn reallocation<V: Reallocation>(spec: &RunSpec, v: V) -> V::Out {
            match spec.process {
                $( $( ProcessSpec::$variant { .. } )|+ => <$m::Item as Kind>::reallocation(spec, v), )*
            }
        }
    };
}

kinds! {
    one_choice: OneChoice;
    d_choice: DChoice;
    unfair_d_choice: UnfairDChoice;
    rank_vector: RankVector;
    k_threshold: KThreshold;
    formula_threshold: FormulaThreshold;
    one_plus_beta: OnePlusBeta;
    quantile: Quantile, MixedQuantile;
    thinning: Threshold, MeanThinning, RelativeThreshold;
    noisy: GBounded, GMyopic, SigmaNoisyLoad;
    filling: Twinning, Packing;
    tight_packing: TightPacking;
    memory: Memory, Caching;
    always_go_left: AlwaysGoLeft;
    adaptive: Adaptive;
    equalize: Equalize, EqualizeMoves;
    rule: Rule;
    custom: Custom;
    without_replacement: WithoutReplacement;
}

// The questions every engine asks of a process, answered by its kind.
impl ProcessSpec {
    /// Checks parameter ranges (and the checks across parameters) of the process's kind.
    pub fn validate(&self) -> Result<(), Error> {
        check(self)
    }

    /// Whether the process is defined for unit balls only (it counts balls to fill a bin, or
    /// its cache rule needs the receiver's load after placing).
    pub fn unit_weights_only(&self) -> bool {
        unit_weights_only(self)
    }

    /// Whether the process moves old balls between bins (`equalize`, with or without
    /// `moves`): it runs on a reallocation loop of its own ([`crate::czumaj`],
    /// [`crate::realloc`]), which takes no observer of single balls, no start state and no
    /// capacities.
    pub fn reallocates(&self) -> bool {
        reallocates(self)
    }

    /// Whether the process's probe count per step varies by design (adaptive probing), so
    /// that every run records its histogram ([`crate::RunOutcome::samples_per_step`]), on
    /// either engine.
    pub fn records_probes(&self) -> bool {
        records_probes(self)
    }

    /// Whether the process sends every ball of a batch to the same bin (Memory, Caching,
    /// Tight-Packing: their least-loaded choices read the loads frozen at the batch start).
    pub(crate) fn same_bin_in_batches(&self) -> bool {
        same_bin_in_batches(self)
    }

    /// Whether a step of the process can place more than one ball (Twinning, Packing,
    /// Tight-Packing, a multi-ball process item): the processes for which the
    /// [`crate::Stop`] rule matters.
    pub fn multi_ball(&self) -> bool {
        multi_ball(self)
    }

    /// Whether the process compares loads of several samples, so that a [`TieBreak`] applies.
    pub fn compares(&self) -> bool {
        compares(self)
    }

    /// Whether the kind takes the option `replacement = false`
    /// ([`ProcessSpec::WithoutReplacement`]): the d-sample processes and the two-sample ones
    /// (`d_choice`, `unfair_d_choice`, `k_threshold`, `one_plus_beta`, `g_bounded`,
    /// `g_myopic`, `sigma_noisy_load`).
    pub fn takes_replacement(&self) -> bool {
        takes_replacement(self)
    }
}

#[cfg(test)]
mod tests {
    use crate::{Error, ProcessSpec, Tau};

    /// A spec built by hand outside a declared range is refused with the range its
    /// registry entry declares, for every kind whose checks read the declaration; the same
    /// specs one step inside the range pass.
    #[test]
    fn hand_built_specs_are_checked_against_the_declared_ranges() {
        let refused = [
            (ProcessSpec::DChoice { d: 0 }, "d", "an integer in 1..=1024"),
            (ProcessSpec::UnfairDChoice { d: 1025 }, "d", "an integer in 1..=1024"),
            (ProcessSpec::AlwaysGoLeft { d: 0 }, "d", "an integer in 1..=1024"),
            (ProcessSpec::OnePlusBeta { beta: 1.5 }, "beta", "a number in [0, 1]"),
            (ProcessSpec::Quantile { delta: -0.1 }, "delta", "a number in [0, 1]"),
            (ProcessSpec::MixedQuantile { delta: 0.5, eta: 2.0 }, "eta", "a number in [0, 1]"),
            (ProcessSpec::Threshold { f: f64::INFINITY }, "f", "a finite number"),
            (ProcessSpec::RelativeThreshold { f: f64::NAN }, "f", "a finite number"),
            (ProcessSpec::GBounded { g: -1.0 }, "g", "a finite number >= 0"),
            (ProcessSpec::GMyopic { g: f64::NAN }, "g", "a finite number >= 0"),
            (
                ProcessSpec::SigmaNoisyLoad { sigma: -0.5, truncate: false },
                "sigma",
                "a finite number >= 0",
            ),
            (ProcessSpec::Packing { offset: 1_000_001 }, "offset", "an integer in 0..=1000000"),
            (
                ProcessSpec::TightPacking { offset: 1, balls: Some(0) },
                "balls",
                "an integer in 1..=1000000",
            ),
            (ProcessSpec::Memory { d: 1, k: 1025 }, "k", "an integer in 1..=1024"),
            (ProcessSpec::Caching { d: 0 }, "d", "an integer in 1..=1024"),
            (ProcessSpec::Equalize { d: 2000 }, "d", "an integer in 1..=1024"),
            (ProcessSpec::EqualizeMoves { d: 0, moves: 1 }, "d", "an integer in 1..=1024"),
            (
                ProcessSpec::Adaptive { tau: Tau::NEVER, cap: Some(0) },
                "cap",
                "an integer in 1..=1000000",
            ),
        ];
        for (spec, field, allowed) in refused {
            match spec.validate() {
                Err(Error::Invalid { field: f, allowed: a, .. }) => {
                    assert_eq!((f, a.as_ref()), (field, allowed), "{spec:?}");
                }
                other => panic!("{spec:?}: {other:?}"),
            }
        }
        let accepted = [
            ProcessSpec::DChoice { d: 1024 },
            ProcessSpec::OnePlusBeta { beta: 1.0 },
            ProcessSpec::MixedQuantile { delta: 0.0, eta: 1.0 },
            ProcessSpec::GBounded { g: 0.0 },
            ProcessSpec::Packing { offset: 0 },
            ProcessSpec::TightPacking { offset: 1_000_000, balls: Some(1_000_000) },
            ProcessSpec::Memory { d: 1024, k: 1 },
            ProcessSpec::Adaptive { tau: Tau::NEVER, cap: Some(1_000_000) },
        ];
        for spec in accepted {
            assert_eq!(spec.validate(), Ok(()), "{spec:?}");
        }
    }

    /// The engine-layer questions that were `matches!` lists outside the kinds: which kinds
    /// keep ranks (Quantile), the least-loaded set (Tight-Packing), fill to the average
    /// (Packing, Tight-Packing, not Twinning), and One-Choice's batch crossover (also d = 1).
    #[test]
    fn kinds_answer_the_engine_layers_questions() {
        use crate::crossover::{AUTO_BATCH_MIN_BALLS, AUTO_BATCH_MIN_BALLS_ONE_CHOICE};
        let all = [
            ProcessSpec::OneChoice,
            ProcessSpec::DChoice { d: 1 },
            ProcessSpec::DChoice { d: 2 },
            ProcessSpec::Quantile { delta: 0.5 },
            ProcessSpec::MixedQuantile { delta: 0.5, eta: 0.5 },
            ProcessSpec::Packing { offset: 1 },
            ProcessSpec::Twinning,
            ProcessSpec::TightPacking { offset: 1, balls: None },
            ProcessSpec::MeanThinning { strict: true },
            ProcessSpec::Equalize { d: 2 },
        ];
        let names = |f: fn(&ProcessSpec) -> bool| -> Vec<String> {
            all.iter().filter(|p| f(p)).map(|p| format!("{p:?}")).collect()
        };
        assert_eq!(
            names(super::uses_ranks),
            ["Quantile { delta: 0.5 }", "MixedQuantile { delta: 0.5, eta: 0.5 }"]
        );
        assert_eq!(names(super::keeps_min_set), ["TightPacking { offset: 1, balls: None }"]);
        assert_eq!(
            names(super::fills_to_average),
            ["Packing { offset: 1 }", "TightPacking { offset: 1, balls: None }"]
        );
        for p in all {
            let spec = crate::RunSpec::new(p.clone(), 100, 1000);
            let one = matches!(p, ProcessSpec::OneChoice | ProcessSpec::DChoice { d: 1 });
            let want = if one { AUTO_BATCH_MIN_BALLS_ONE_CHOICE } else { AUTO_BATCH_MIN_BALLS };
            assert_eq!(super::auto_batch_min_balls(&spec), want, "{p:?}");
        }
    }
}
