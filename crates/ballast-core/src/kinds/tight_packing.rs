//! Tight-Packing (`tight_packing`, reconstructed): one sample; overloaded: 1 ball to it;
//! underloaded: `balls` balls (default as many as Packing would), each to a currently least
//! loaded bin. On the level engine in blocks (`level/filling.rs`), sequentially only.

use super::OFFSET;
use crate::crossover::AUTO_SEQUENTIAL_MIN_N_FILLING;
use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::item::CustomSpec;
use crate::kind::{Kind, LevelSteps};
use crate::params::{ParamDef, ParamDefault, ParamType};
use crate::process::{TightCount, TightPacking};
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::TightPacking`].
pub(super) struct Item;

/// The number of balls of an underloaded step.
fn count_of(p: &ProcessSpec) -> TightCount {
    let ProcessSpec::TightPacking { offset, balls } = *p else {
        unreachable!("listed for TightPacking")
    };
    balls.map_or(TightCount::AsPacking { offset }, TightCount::Fixed)
}

impl Kind for Item {
    // Each ball goes to a least loaded bin of the frozen loads: the same bin for a batch.
    const SAME_BIN_IN_BATCHES: bool = true;
    const KEEPS_MIN_SET: bool = true;
    fn fills_to_average(_p: &ProcessSpec) -> bool {
        true
    }
    fn unit_weights_only(_p: &ProcessSpec) -> bool {
        TIGHT_PACKING.unit_weights_only
    }
    fn multi_ball(_p: &ProcessSpec) -> bool {
        true
    }

    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match count_of(p) {
            TightCount::AsPacking { offset } => {
                super::declared(&TIGHT_PACKING, "offset", f64::from(offset))
            }
            TightCount::Fixed(b) => super::declared(&TIGHT_PACKING, "balls", f64::from(b)),
        }
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(TightPacking::new(count_of(&spec.process)))
    }
    fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error> {
        super::multi_ball_steps(spec, batched)
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.tight(count_of(&spec.process))
    }
    fn auto_levels_min_n(_spec: &RunSpec) -> u64 {
        AUTO_SEQUENTIAL_MIN_N_FILLING
    }
}

/// The registry entry of `tight_packing` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const TIGHT_PACKING: ProcessDef = ProcessDef {
    name: "tight_packing",
    doc: "reconstructed: one sample; underloaded: Packing's ball count, each to a least \
          loaded bin",
    params: &[
        OFFSET,
        ParamDef {
            name: "balls",
            ty: ParamType::Int { lo: 1, hi: 1_000_000 },
            default: ParamDefault::Unset,
            doc: "fixed balls per underloaded sample (default: as many as Packing would)",
        },
        ParamDef {
            name: "distinct",
            ty: ParamType::Bool,
            default: ParamDefault::Bool(false),
            doc: "one ball into each of the round's c least loaded bins at its start \
                  (false: each ball to a bin least loaded when it is placed)",
        },
    ],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: true,
    example: "",
    build: |a| {
        if a.flag("distinct") {
            let item = &crate::items::tight_distinct::ITEM;
            return Ok(ProcessSpec::Custom(CustomSpec::new(item, a.clone())));
        }
        Ok(ProcessSpec::TightPacking { offset: a.int("offset"), balls: a.opt_int("balls") })
    },
};
