//! k-Threshold (`k_threshold`, [`crate::k_threshold`]): two samples seen through the
//! questions "load >= W/n + f_j?"; fewer yes answers wins, a coin between equal counts.

use crate::error::Error;
use crate::k_threshold::KThreshold;
use crate::kind::{Kind, LevelSteps};
use crate::process::distinct::DistinctPair;
use crate::spec::{check_thresholds, ProcessSpec, RunSpec, TieBreak};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::KThreshold`].
pub(super) struct Item;

/// The thresholds.
fn f_of(p: &ProcessSpec) -> &[f64] {
    let ProcessSpec::KThreshold { f } = p else { unreachable!("listed for KThreshold") };
    f
}

impl Kind for Item {
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        check_thresholds(f_of(p))
            .map_err(|_| Error::invalid("f", "…", "1 to 64 finite increasing thresholds"))
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(KThreshold { f: f_of(&spec.process) })
    }
    fn distinct<X: WithRule>(p: &ProcessSpec, _tie: TieBreak, runner: X) -> X::Out {
        runner.run(DistinctPair(KThreshold { f: f_of(p) }))
    }
    fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error> {
        super::no_batch_law(spec, batched)
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.run(KThreshold { f: f_of(&spec.process) })
    }
}
