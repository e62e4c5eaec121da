//! A rule written as a formula (`rule`, [`crate::rule_formula`]): d samples, the formula's
//! value is the position of the chosen one. It reads loads of uniform samples, W/n, t, n, d
//! and u, so the level engine runs it on the sorted view, and batches decision by decision on
//! the frozen view (`level/frozen.rs`).

use crate::error::Error;
use crate::formula::Formula;
use crate::kind::{Kind, LevelBatch, LevelSteps};
use crate::rule_formula::{check_probes, RuleFormula};
use crate::spec::{ProcessSpec, RunSpec, RULE_MAX_D};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::Rule`].
pub(super) struct Item;

/// The rule of a run.
fn rule_of(p: &ProcessSpec) -> RuleFormula<'_> {
    let (choose, d, replacement) = parts(p);
    RuleFormula::new(choose, d, replacement)
}

/// The formula, the number of samples and the sampling option.
fn parts(p: &ProcessSpec) -> (&Formula, u32, bool) {
    let ProcessSpec::Rule { d, choose, replacement } = p else { unreachable!("listed for Rule") };
    (choose, *d, *replacement)
}

impl Kind for Item {
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        super::int_in("d", parts(p).1, 1, RULE_MAX_D, "an integer in 1..=8")
    }
    fn check_run(spec: &RunSpec) -> Result<(), Error> {
        let (choose, d, _) = parts(&spec.process);
        check_probes(choose, d, spec.n, spec.m)
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(rule_of(&spec.process))
    }
    fn levels(_spec: &RunSpec, _batched: bool) -> Result<(), Error> {
        Ok(())
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.run(rule_of(&spec.process))
    }
    fn level_batch<V: LevelBatch>(spec: &RunSpec, v: V) -> V::Out {
        v.run(rule_of(&spec.process))
    }
}
