//! Two-Thinning with a threshold formula (`formula_threshold`,
//! [`crate::formula_threshold`]): accept the first sample if its load is at most
//! `f(t, n, avg)`, else a fresh sample. Its rule reads loads, t and W only, so the level
//! engine runs it sequentially; no batch law for a threshold that is not a constant.

use crate::error::Error;
use crate::formula::Formula;
use crate::formula_threshold::{check_probes, FormulaThreshold};
use crate::kind::{Kind, LevelSteps};
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::FormulaThreshold`].
pub(super) struct Item;

/// The threshold formula.
fn f_of(p: &ProcessSpec) -> &Formula {
    let ProcessSpec::FormulaThreshold { f } = p else {
        unreachable!("listed for FormulaThreshold")
    };
    f
}

impl Kind for Item {
    fn check(_p: &ProcessSpec) -> Result<(), Error> {
        Ok(())
    }
    fn check_run(spec: &RunSpec) -> Result<(), Error> {
        check_probes(f_of(&spec.process), spec.n, spec.m, spec.weights.mean())
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(FormulaThreshold::new(f_of(&spec.process)))
    }
    fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error> {
        super::no_batch_law(spec, batched)
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.run(FormulaThreshold::new(f_of(&spec.process)))
    }
}
