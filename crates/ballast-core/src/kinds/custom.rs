//! A process declared outside the catalogue ([`crate::item`]): its item answers every
//! question (checks, rule, whether the level engine may run it), through a trait object.

use crate::crossover::AUTO_SEQUENTIAL_MIN_N;
use crate::error::Error;
use crate::item::CustomSpec;
use crate::kind::{sequential_only, Kind, LevelBatch, LevelSteps};
use crate::process::custom::Bridge;
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::Custom`].
pub(super) struct Item;

/// The item with its parameters.
fn spec_of(p: &ProcessSpec) -> &CustomSpec {
    let ProcessSpec::Custom(c) = p else { unreachable!("listed for Custom") };
    c
}

impl Kind for Item {
    fn unit_weights_only(p: &ProcessSpec) -> bool {
        spec_of(p).unit_weights_only()
    }
    fn multi_ball(p: &ProcessSpec) -> bool {
        spec_of(p).item().multi_ball()
    }

    fn check(p: &ProcessSpec) -> Result<(), Error> {
        let c = spec_of(p);
        c.item().check(c.args()).map_err(Error::Refused)
    }
    fn check_run(spec: &RunSpec) -> Result<(), Error> {
        let c = spec_of(&spec.process);
        c.item().check_run(c.args(), spec.n, spec.m).map_err(Error::Refused)
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(Bridge::new(spec_of(&spec.process).rule()))
    }
    fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error> {
        let item = spec_of(&spec.process).item();
        item.levels().map_err(Error::use_bins)?;
        match item.level_batches() {
            Ok(()) => Ok(()),
            Err(why) => sequential_only(batched, why),
        }
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.run(Bridge::relabelled(spec_of(&spec.process).rule()))
    }
    fn level_batch<V: LevelBatch>(spec: &RunSpec, v: V) -> V::Out {
        v.run(Bridge::new(spec_of(&spec.process).rule()))
    }
    fn auto_levels_min_n(spec: &RunSpec) -> u64 {
        spec_of(&spec.process).item().auto_levels_min_n().unwrap_or(AUTO_SEQUENTIAL_MIN_N)
    }
}
