//! Two-Thinning with a threshold formula (`formula_threshold`,
//! [`crate::formula_threshold`]): accept the first sample if its load is at most
//! `f(t, n, avg)`, else a fresh sample. Its rule reads loads, t and W only, so the level
//! engine runs it sequentially; no batch law for a threshold that is not a constant.

use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::formula::Formula;
use crate::formula_threshold::{check_probes, FormulaThreshold};
use crate::kind::{Kind, LevelSteps};
use crate::params::{ParamDef, ParamDefault, ParamType};
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

/// The registry entry of `formula_threshold` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const FORMULA_THRESHOLD: ProcessDef = ProcessDef {
    name: "formula_threshold",
    doc: "sample i1; accept it if its load <= f(t, n, avg), else the ball goes to a fresh \
          sample (t = balls so far, avg = W/n)",
    params: &[ParamDef {
        name: "f",
        ty: ParamType::Formula(crate::formula_threshold::VARS),
        default: ParamDefault::Required,
        doc: "threshold formula in t (balls placed before this one; batched: before the \
              batch), n and avg (W/n of the loads the decision sees)",
    }],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| {
        let src = a.formula("f").expect("required formula");
        crate::formula_threshold::parse(&src)
            .map(|f| ProcessSpec::FormulaThreshold { f })
            .map_err(|why| a.refuse("f", format!("`f`: {why}")))
    },
};
