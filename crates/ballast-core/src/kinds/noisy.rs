//! The noisy comparisons of two samples (`g_bounded`, `g_myopic`, `sigma_noisy_load`): one
//! rule ([`Noisy`]) with the noise as data; on the level engine a decision on two levels
//! (`level/pair.rs`), and a batch law.

use crate::crossover::{
    AUTO_SEQUENTIAL_MIN_N_G_BOUNDED, AUTO_SEQUENTIAL_MIN_N_G_MYOPIC,
    AUTO_SEQUENTIAL_MIN_N_SIGMA_NOISY,
};
use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelSteps};
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
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match rule_of(p) {
            Noisy::GBounded { g } | Noisy::GMyopic { g } => super::non_negative("g", g),
            Noisy::SigmaNoisyLoad { sigma, .. } => super::non_negative("sigma", sigma),
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
