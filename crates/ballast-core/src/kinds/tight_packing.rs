//! Tight-Packing (`tight_packing`, reconstructed): one sample; overloaded: 1 ball to it;
//! underloaded: `balls` balls (default as many as Packing would), each to a currently least
//! loaded bin. On the level engine in blocks (`level/filling.rs`), sequentially only.

use crate::crossover::AUTO_SEQUENTIAL_MIN_N_FILLING;
use crate::error::Error;
use crate::kind::{Kind, LevelSteps};
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
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match count_of(p) {
            TightCount::AsPacking { offset } => super::packing_offset(offset),
            TightCount::Fixed(b) => {
                super::int_in("balls", b, 1, 1_000_000, "an integer in 1..=1000000")
            }
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
