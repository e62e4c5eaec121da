//! (1+β) (`one_plus_beta`): with probability β a Two-Choice step, else a One-Choice step.

use super::{REPLACEMENT, REPLACEMENT_PAIR};
use crate::crossover::AUTO_SEQUENTIAL_MIN_N_ONE_PLUS_BETA;
use crate::def::{ProcessDef, ALL_TIES, BATCHED};
use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelSteps};
use crate::params::{ParamDef, ParamDefault, ParamType};
use crate::process::distinct::OnePlusBetaDistinct;
use crate::process::OnePlusBeta;
use crate::spec::{ProcessSpec, RunSpec, TieBreak};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::OnePlusBeta`].
pub(super) struct Item;

/// The probability of a second sample.
fn beta_of(p: &ProcessSpec) -> f64 {
    let ProcessSpec::OnePlusBeta { beta } = *p else { unreachable!("listed for OnePlusBeta") };
    beta
}

impl Kind for Item {
    const LEVEL_CHUNKS: bool = true;
    const TAKES_REPLACEMENT: bool = true;
    fn compares(_p: &ProcessSpec) -> bool {
        true
    }

    fn check(p: &ProcessSpec) -> Result<(), Error> {
        super::declared(&ONE_PLUS_BETA, "beta", beta_of(p))
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(OnePlusBeta { beta: beta_of(&spec.process), tie: spec.tie_break })
    }
    fn distinct<X: WithRule>(p: &ProcessSpec, tie: TieBreak, runner: X) -> X::Out {
        runner.run(OnePlusBetaDistinct { beta: beta_of(p), tie })
    }
    fn levels(_spec: &RunSpec, _batched: bool) -> Result<(), Error> {
        Ok(())
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.one_plus_beta(beta_of(&spec.process))
    }
    fn batch_law(p: &ProcessSpec) -> Option<BatchLaw> {
        Some(BatchLaw::OnePlusBeta { beta: beta_of(p) })
    }
    fn auto_levels_min_n(_spec: &RunSpec) -> u64 {
        AUTO_SEQUENTIAL_MIN_N_ONE_PLUS_BETA
    }
}

/// The registry entry of `one_plus_beta` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const ONE_PLUS_BETA: ProcessDef = ProcessDef {
    name: "one_plus_beta",
    doc: "with probability beta a Two-Choice step, else One-Choice",
    params: &[
        ParamDef {
            name: "beta",
            ty: ParamType::Unit,
            default: ParamDefault::Required,
            doc: "probability of a second sample",
        },
        REPLACEMENT_PAIR,
    ],
    ties: ALL_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| {
        let beta = a.num("beta");
        Ok(ProcessSpec::OnePlusBeta { beta }.with_replacement(a.flag(REPLACEMENT.name)))
    },
};
