//! Twinning (`twinning`) and Packing (`packing`): one sample; an underloaded bin gets 2
//! balls (Twinning) or is raised to ⌈W/n⌉ + offset (Packing), otherwise 1 ball. One rule
//! ([`Filling`]); on the level engine step by step (`level/filling.rs`), sequentially only:
//! inside a batch the number of steps is random, which the batch step does not model.

use super::OFFSET;
use crate::crossover::AUTO_SEQUENTIAL_MIN_N_PACKING;
use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::kind::{Kind, LevelSteps};
use crate::process::Filling;
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kinds [`ProcessSpec::Twinning`] and [`ProcessSpec::Packing`].
pub(super) struct Item;

/// The rule.
fn rule_of(p: &ProcessSpec) -> Filling {
    match *p {
        ProcessSpec::Twinning => Filling::Twinning,
        ProcessSpec::Packing { offset } => Filling::Packing { offset },
        _ => unreachable!("listed for Twinning and Packing"),
    }
}

impl Kind for Item {
    fn fills_to_average(p: &ProcessSpec) -> bool {
        matches!(rule_of(p), Filling::Packing { .. })
    }
    fn unit_weights_only(p: &ProcessSpec) -> bool {
        match rule_of(p) {
            Filling::Twinning => TWINNING.unit_weights_only,
            Filling::Packing { .. } => PACKING.unit_weights_only,
        }
    }
    fn multi_ball(_p: &ProcessSpec) -> bool {
        true
    }

    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match rule_of(p) {
            Filling::Packing { offset } => super::declared(&PACKING, "offset", f64::from(offset)),
            Filling::Twinning => Ok(()),
        }
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(rule_of(&spec.process))
    }
    fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error> {
        super::multi_ball_steps(spec, batched)
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.filling(rule_of(&spec.process))
    }
    fn auto_levels_min_n(_spec: &RunSpec) -> u64 {
        AUTO_SEQUENTIAL_MIN_N_PACKING
    }
}

/// The registry entry of `twinning` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const TWINNING: ProcessDef = ProcessDef {
    name: "twinning",
    doc: "one sample; underloaded: 2 balls there, else 1",
    params: &[],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: true,
    example: "",
    build: |_| Ok(ProcessSpec::Twinning),
};

/// The registry entry of `packing` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const PACKING: ProcessDef = ProcessDef {
    name: "packing",
    doc: "one sample; underloaded: raise it to ceil(W/n) + offset, else 1 ball",
    params: &[OFFSET],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: true,
    example: "",
    build: |a| Ok(ProcessSpec::Packing { offset: a.int("offset") }),
};
