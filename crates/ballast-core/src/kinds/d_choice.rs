//! d-Choice (`d_choice`, `two_choice`, `three_choice`): d uniform samples, the ball goes to
//! a least loaded one (ties by the run's tie rule). `d = 1` is One-Choice, `d = 2` has a
//! rule of its own (Two-Choice's kernels).

use super::{D, REPLACEMENT};
use crate::crossover::{
    AUTO_BATCH_MIN_BALLS, AUTO_BATCH_MIN_BALLS_ONE_CHOICE, AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE,
    AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE,
};
use crate::def::{ProcessDef, ALL_TIES, BATCHED_AND_DELAY};
use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelSteps};
use crate::params::Args;
use crate::process::distinct::Distinct;
use crate::process::{DChoice, OneChoice, TwoChoice};
use crate::spec::{ProcessSpec, RunSpec, TieBreak};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::DChoice`].
pub(super) struct Item;

/// The number of samples.
fn d_of(p: &ProcessSpec) -> u32 {
    let ProcessSpec::DChoice { d } = *p else { unreachable!("listed for DChoice") };
    d
}

impl Kind for Item {
    const LEVEL_CHUNKS: bool = true;
    const TAKES_REPLACEMENT: bool = true;
    fn compares(p: &ProcessSpec) -> bool {
        d_of(p) > 1
    }

    fn check(p: &ProcessSpec) -> Result<(), Error> {
        super::declared(&D_CHOICE, "d", f64::from(d_of(p)))
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        let tie = spec.tie_break;
        match d_of(&spec.process) {
            1 => runner.run(OneChoice),
            2 => runner.run(TwoChoice { tie }),
            d => runner.run(DChoice { d, tie }),
        }
    }
    fn distinct<X: WithRule>(p: &ProcessSpec, tie: TieBreak, runner: X) -> X::Out {
        runner.run(Distinct::new(d_of(p), false, tie))
    }
    fn levels(_spec: &RunSpec, _batched: bool) -> Result<(), Error> {
        Ok(())
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        match d_of(&spec.process) {
            1 => v.one_choice(),
            d => v.d_choice(d),
        }
    }
    fn batch_law(p: &ProcessSpec) -> Option<BatchLaw> {
        Some(match d_of(p) {
            1 => BatchLaw::OneChoice,
            d => BatchLaw::DChoice { d },
        })
    }
    fn auto_levels_min_n(spec: &RunSpec) -> u64 {
        match d_of(&spec.process) {
            1 => super::one_choice::one_choice_min_n(spec),
            2 => AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE,
            _ => AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE,
        }
    }
    fn auto_batch_min_balls(spec: &RunSpec) -> u64 {
        match d_of(&spec.process) {
            1 => AUTO_BATCH_MIN_BALLS_ONE_CHOICE,
            _ => AUTO_BATCH_MIN_BALLS,
        }
    }
}

/// The registry entry of `two_choice` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const TWO_CHOICE: ProcessDef = ProcessDef {
    name: "two_choice",
    doc: "d_choice with d = 2",
    params: &[REPLACEMENT],
    ties: ALL_TIES,
    settings: BATCHED_AND_DELAY,
    unit_weights_only: false,
    example: "",
    build: |a| Ok(d_choice(2, a)),
};

/// The registry entry of `three_choice` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const THREE_CHOICE: ProcessDef = ProcessDef {
    name: "three_choice",
    doc: "d_choice with d = 3",
    params: &[REPLACEMENT],
    ties: ALL_TIES,
    settings: BATCHED_AND_DELAY,
    unit_weights_only: false,
    example: "",
    build: |a| Ok(d_choice(3, a)),
};

/// The registry entry of `d_choice` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const D_CHOICE: ProcessDef = ProcessDef {
    name: "d_choice",
    doc: "d samples; the ball goes to a least loaded one",
    params: &[D, REPLACEMENT],
    ties: ALL_TIES,
    settings: BATCHED_AND_DELAY,
    unit_weights_only: false,
    example: "",
    build: |a| Ok(d_choice(a.int("d"), a)),
};

/// d-Choice with or without replacement (the `replacement` option).
fn d_choice(d: u32, a: &Args) -> ProcessSpec {
    ProcessSpec::DChoice { d }.with_replacement(a.flag(REPLACEMENT.name))
}
