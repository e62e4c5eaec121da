//! Unfair d-Choice (`unfair_d_choice`): d uniform samples, the ball goes to a most loaded
//! one. Exact on the level engine's generic sequential loop; no batch law yet.

use super::{D, REPLACEMENT};
use crate::def::{ProcessDef, BATCHED};
use crate::error::Error;
use crate::kind::{sequential_only, Kind, LevelSteps};
use crate::process::distinct::Distinct;
use crate::process::UnfairDChoice;
use crate::spec::{ProcessSpec, RunSpec, TieBreak};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::UnfairDChoice`].
pub(super) struct Item;

/// The number of samples.
fn d_of(p: &ProcessSpec) -> u32 {
    let ProcessSpec::UnfairDChoice { d } = *p else { unreachable!("listed for UnfairDChoice") };
    d
}

impl Kind for Item {
    const TAKES_REPLACEMENT: bool = true;
    fn compares(p: &ProcessSpec) -> bool {
        d_of(p) > 1
    }

    fn check(p: &ProcessSpec) -> Result<(), Error> {
        super::declared(&UNFAIR_D_CHOICE, "d", f64::from(d_of(p)))
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(UnfairDChoice { d: d_of(&spec.process) })
    }
    fn distinct<X: WithRule>(p: &ProcessSpec, tie: TieBreak, runner: X) -> X::Out {
        runner.run(Distinct::new(d_of(p), true, tie))
    }
    fn levels(_spec: &RunSpec, batched: bool) -> Result<(), Error> {
        sequential_only(
            batched,
            "the level engine simulates unfair_d_choice sequentially only (no batch law yet)"
                .to_string(),
        )
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.run(UnfairDChoice { d: d_of(&spec.process) })
    }
}

/// The registry entry of `unfair_d_choice` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const UNFAIR_D_CHOICE: ProcessDef = ProcessDef {
    name: "unfair_d_choice",
    doc: "d samples; the ball goes to a most loaded one (heavy-tailed load profiles)",
    params: &[D, REPLACEMENT],
    ties: &[TieBreak::First],
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| {
        let d = a.int("d");
        Ok(ProcessSpec::UnfairDChoice { d }.with_replacement(a.flag(REPLACEMENT.name)))
    },
};
