//! A rule written as a formula (`rule`, [`crate::rule_formula`]): d samples, the formula's
//! value is the position of the chosen one. It reads loads of uniform samples, W/n, t, n, d
//! and u, so the level engine runs it on the sorted view, and batches decision by decision on
//! the frozen view (`level/frozen.rs`).

use crate::def::{ProcessDef, BATCHED_AND_DELAY, NO_TIES};
use crate::error::Error;
use crate::formula::Formula;
use crate::kind::{Kind, LevelBatch, LevelSteps};
use crate::params::{ParamDef, ParamDefault, ParamType};
use crate::rule_formula::{check_probes, RuleFormula};
use crate::spec::{ProcessSpec, RunSpec};
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
        super::declared(&RULE, "d", f64::from(parts(p).1))
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

/// The registry entry of `rule` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const RULE: ProcessDef = ProcessDef {
    name: "rule",
    doc: "d samples; a decision formula gives the position (1..=d) of the one that gets \
          the ball, e.g. if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))",
    params: &[
        ParamDef {
            name: "d",
            ty: ParamType::Int { lo: 1, hi: crate::rule_formula::MAX_D },
            default: ParamDefault::Num(2.0),
            doc: "number of samples, drawn by the run's sampling law",
        },
        ParamDef {
            name: "choose",
            ty: ParamType::Decision(crate::rule_formula::VARS),
            default: ParamDefault::Required,
            doc: "the position of the chosen sample, in x1..xd (their loads, in draw \
                  order), avg (W/n), t (balls before this one), n, d and u (a uniform in \
                  [0, 1), drawn only when read); with if, comparisons, &&, ||, !",
        },
        ParamDef {
            name: crate::process::distinct::OPTION,
            ty: ParamType::Bool,
            default: ParamDefault::Bool(true),
            doc: "sample with replacement (false: d distinct uniform bins, d <= n)",
        },
    ],
    ties: NO_TIES,
    settings: BATCHED_AND_DELAY,
    unit_weights_only: false,
    example: "",
    build: |a| {
        let d = a.int("d");
        let src = a.formula("choose").expect("required formula");
        crate::rule_formula::parse(&src, d)
            .map(|choose| ProcessSpec::Rule {
                d,
                choose,
                replacement: a.flag(crate::process::distinct::OPTION),
            })
            .map_err(|why| a.refuse("choose", format!("`choose`: {why}")))
    },
};
