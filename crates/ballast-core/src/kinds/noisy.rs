//! The noisy comparisons of two samples (`g_bounded`, `g_myopic`, `sigma_noisy_load`): one
//! rule ([`Noisy`]) with the noise as data; on the level engine a decision on two levels
//! (`level/pair.rs`), and a batch law.

use super::{G, REPLACEMENT, REPLACEMENT_PAIR};
use crate::crossover::{
    AUTO_SEQUENTIAL_MIN_N_G_BOUNDED, AUTO_SEQUENTIAL_MIN_N_G_MYOPIC,
    AUTO_SEQUENTIAL_MIN_N_SIGMA_NOISY,
};
use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelSteps};
use crate::params::{ParamDef, ParamDefault, ParamType};
use crate::process::distinct::DistinctPair;
use crate::process::Noisy;
use crate::spec::{ProcessSpec, RunSpec, TieBreak};
use crate::with_rule::WithRule;

/// The kinds [`ProcessSpec::GBounded`], [`ProcessSpec::GMyopic`] and
/// [`ProcessSpec::SigmaNoisyLoad`].
pub(super) struct Item;

/// The rule.
fn rule_of(p: &ProcessSpec) -> Noisy {
    match *p {
        ProcessSpec::GBounded { g } => Noisy::GBounded { g },
        ProcessSpec::GMyopic { g } => Noisy::GMyopic { g },
        ProcessSpec::SigmaNoisyLoad { sigma, truncate } => {
            Noisy::SigmaNoisyLoad { sigma, truncate }
        }
        _ => unreachable!("listed for the noisy kinds"),
    }
}

impl Kind for Item {
    const LEVEL_CHUNKS: bool = true;
    const TAKES_REPLACEMENT: bool = true;

    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match rule_of(p) {
            Noisy::GBounded { g } => super::declared(&G_BOUNDED, "g", g),
            Noisy::GMyopic { g } => super::declared(&G_MYOPIC, "g", g),
            Noisy::SigmaNoisyLoad { sigma, .. } => {
                super::declared(&SIGMA_NOISY_LOAD, "sigma", sigma)
            }
        }
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(rule_of(&spec.process))
    }
    fn distinct<X: WithRule>(p: &ProcessSpec, _tie: TieBreak, runner: X) -> X::Out {
        runner.run(DistinctPair(rule_of(p)))
    }
    fn levels(_spec: &RunSpec, _batched: bool) -> Result<(), Error> {
        Ok(())
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.pair(rule_of(&spec.process))
    }
    fn batch_law(p: &ProcessSpec) -> Option<BatchLaw> {
        Some(match rule_of(p) {
            Noisy::GBounded { g } => BatchLaw::GBounded { g },
            Noisy::GMyopic { g } => BatchLaw::GMyopic { g },
            Noisy::SigmaNoisyLoad { sigma, truncate } => BatchLaw::SigmaNoisy { sigma, truncate },
        })
    }
    fn auto_levels_min_n(spec: &RunSpec) -> u64 {
        match rule_of(&spec.process) {
            Noisy::GBounded { .. } => AUTO_SEQUENTIAL_MIN_N_G_BOUNDED,
            Noisy::GMyopic { .. } => AUTO_SEQUENTIAL_MIN_N_G_MYOPIC,
            Noisy::SigmaNoisyLoad { .. } => AUTO_SEQUENTIAL_MIN_N_SIGMA_NOISY,
        }
    }
}

/// The registry entry of `g_bounded` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const G_BOUNDED: ProcessDef = ProcessDef {
    name: "g_bounded",
    doc: "two samples; loads differing by more than g: the lighter, else an adversary \
          picks the heavier",
    params: &[G, REPLACEMENT_PAIR],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| {
        let g = a.num("g");
        Ok(ProcessSpec::GBounded { g }.with_replacement(a.flag(REPLACEMENT.name)))
    },
};

/// The registry entry of `g_myopic` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const G_MYOPIC: ProcessDef = ProcessDef {
    name: "g_myopic",
    doc: "two samples; loads differing by at most g: a fair coin, else the lighter",
    params: &[G, REPLACEMENT_PAIR],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| {
        let g = a.num("g");
        Ok(ProcessSpec::GMyopic { g }.with_replacement(a.flag(REPLACEMENT.name)))
    },
};

/// The registry entry of `sigma_noisy_load` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const SIGMA_NOISY_LOAD: ProcessDef = ProcessDef {
    name: "sigma_noisy_load",
    doc: "two samples compared through x + N(0, sigma^2); the lighter estimate wins",
    params: &[
        ParamDef {
            name: "sigma",
            ty: ParamType::NonNeg,
            default: ParamDefault::Required,
            doc: "standard deviation of the Gaussian noise on each load",
        },
        ParamDef {
            name: "truncate",
            ty: ParamType::Bool,
            default: ParamDefault::Bool(false),
            doc: "truncate each noisy estimate to an integer (the authors' code)",
        },
        REPLACEMENT_PAIR,
    ],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| {
        let (sigma, truncate) = (a.num("sigma"), a.flag("truncate"));
        let spec = ProcessSpec::SigmaNoisyLoad { sigma, truncate };
        Ok(spec.with_replacement(a.flag(REPLACEMENT.name)))
    },
};
