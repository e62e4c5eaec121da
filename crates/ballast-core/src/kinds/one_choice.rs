//! One-Choice (`one_choice`): one uniform sample, the ball goes there. On the level engine
//! sequential stretches are one batched step each.

use crate::crossover::{AUTO_BATCH_MIN_BALLS_ONE_CHOICE, AUTO_SEQUENTIAL_MIN_N_ONE_CHOICE};
use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelSteps};
use crate::process::OneChoice;
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::OneChoice`] (and d-Choice with `d = 1`, which runs as it).
pub(super) struct Item;

impl Kind for Item {
    const LEVEL_CHUNKS: bool = true;
    fn check(_p: &ProcessSpec) -> Result<(), Error> {
        Ok(())
    }
    fn bins<X: WithRule>(_spec: &RunSpec, runner: X) -> X::Out {
        runner.run(OneChoice)
    }
    fn levels(_spec: &RunSpec, _batched: bool) -> Result<(), Error> {
        Ok(())
    }
    fn level_steps<V: LevelSteps>(_spec: &RunSpec, v: V) -> V::Out {
        v.one_choice()
    }
    fn batch_law(_p: &ProcessSpec) -> Option<BatchLaw> {
        Some(BatchLaw::OneChoice)
    }
    fn auto_levels_min_n(spec: &RunSpec) -> u64 {
        one_choice_min_n(spec)
    }
    fn auto_batch_min_balls(_spec: &RunSpec) -> u64 {
        AUTO_BATCH_MIN_BALLS_ONE_CHOICE
    }
}

/// One-Choice's crossover: from [`AUTO_SEQUENTIAL_MIN_N_ONE_CHOICE`] bins when the
/// stretches between observation points hold at least [`AUTO_BATCH_MIN_BALLS_ONE_CHOICE`]
/// balls (each is one batched step on levels), else never.
pub(super) fn one_choice_min_n(spec: &RunSpec) -> u64 {
    let stretch = spec.observe_every.unwrap_or(spec.m);
    if stretch >= AUTO_BATCH_MIN_BALLS_ONE_CHOICE {
        AUTO_SEQUENTIAL_MIN_N_ONE_CHOICE
    } else {
        u64::MAX
    }
}

/// The registry entry of `one_choice` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const ONE_CHOICE: ProcessDef = ProcessDef {
    name: "one_choice",
    doc: "one sample; the ball goes there",
    params: &[],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |_| Ok(ProcessSpec::OneChoice),
};
