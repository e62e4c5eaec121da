//! k-Threshold (`k_threshold`, [`crate::k_threshold`]): two samples seen through the
//! questions "load >= W/n + f_j?"; fewer yes answers wins, a coin between equal counts.
//!
//! The thresholds come in one of two forms, both declared by [`K_THRESHOLD`]:
//! - `f`, 1 to 64 fixed offsets above the average: the catalogue variant
//!   [`ProcessSpec::KThreshold`], monomorphised into the engines ([`Item`]);
//! - `threshold`, a formula in `j` (the question, 1..=k), `avg` (W/n as the decision sees
//!   it), `t` (balls placed before this one; batched: before the batch) and `n`, with `k`
//!   questions "load >= threshold?": thresholds that read the run's history (the round `t`
//!   and the load so far), run as the process item [`FORMULA`] (a [`ProcessSpec::Custom`]).
//!   Without deletions a bin's load is the number of balls it has received, so `x` is both.

use super::{REPLACEMENT, REPLACEMENT_PAIR};
use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::formula::{Compiled, Formula};
use crate::item::{CustomRule, CustomSpec, Decision, ProcessItem};
use crate::items::d_thinning::{check_probes, VARS};
use crate::k_threshold::KThreshold;
use crate::kind::{Kind, LevelSteps};
use crate::params::{Args, ParamDef, ParamDefault, ParamType, ParamError};
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
    const TAKES_REPLACEMENT: bool = true;

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

/// The registry entry of `k_threshold` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const K_THRESHOLD: ProcessDef = ProcessDef {
    name: "k_threshold",
    doc: "two samples, each seen through k questions \"load >= W/n + f_j?\" (or \"load >= a \
          threshold formula in j, avg, t, n?\"); fewer yes answers wins, a coin between equal \
          counts",
    params: &[
        ParamDef {
            name: "f",
            ty: ParamType::List,
            default: ParamDefault::Unset,
            doc: "thresholds above the average load, strictly increasing (1 to 64; in a \
                  config each entry a number or a formula in the point's variables)",
        },
        ParamDef {
            name: "threshold",
            ty: ParamType::Decision(VARS),
            default: ParamDefault::Unset,
            doc: "instead of f: question j asks \"load >= the formula?\", a formula in j \
                  (1..k), avg (W/n), t (balls before this one) and n; needs k",
        },
        ParamDef {
            name: "k",
            ty: ParamType::Int { lo: 1, hi: 64 },
            default: ParamDefault::Unset,
            doc: "with threshold: the number of questions",
        },
        REPLACEMENT_PAIR,
    ],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "f=0,1",
    build: |a| {
        if a.given("threshold") {
            return build_formula(a);
        }
        let Some(f) = a.list("f") else {
            return Err(a.refuse(
                "f",
                "give `f`, 1 to 64 thresholds above the average, or `threshold`, a formula in \
                 j, avg, t, n, with `k`",
            ));
        };
        if a.given("k") {
            return Err(a.refuse("k", "`k` goes with `threshold`; with `f` it is f's length"));
        }
        let f = f.to_vec();
        crate::k_threshold::check_thresholds(&f)
            .map(|()| ProcessSpec::KThreshold { f }.with_replacement(a.flag(REPLACEMENT.name)))
            .map_err(|why| a.refuse("f", format!("`f`: {why}")))
    },
};

/// The formula form of [`K_THRESHOLD`]: `threshold` with `k`, not `f`, samples with
/// replacement.
fn build_formula(a: &Args) -> Result<ProcessSpec, ParamError> {
    if a.given("f") {
        return Err(a.refuse("f", "give either `f` (offsets) or `threshold` (a formula), not both"));
    }
    if !a.given("k") {
        return Err(a.refuse("k", "`threshold` needs `k`, the number of questions (1 to 64)"));
    }
    if !a.flag(REPLACEMENT.name) {
        return Err(a.refuse(
            REPLACEMENT.name,
            "replacement = false is available with `f` only, not with `threshold`",
        ));
    }
    FORMULA.check(a).map_err(|why| a.refuse("threshold", why))?;
    Ok(ProcessSpec::Custom(CustomSpec::new(&FORMULA, a.clone())))
}

/// The formula form of `k_threshold`, a process item (its declaration is [`K_THRESHOLD`]).
#[derive(Debug)]
pub(crate) struct KThresholdFormula;

/// The item behind `k_threshold` with `threshold`.
pub(crate) static FORMULA: KThresholdFormula = KThresholdFormula;

/// The checked threshold formula of `args`.
fn formula_of(args: &Args) -> Result<Formula, String> {
    let src = args.formula("threshold").unwrap_or_default();
    Formula::parse_decision(&src, VARS).map_err(|why| format!("`threshold`: {why}"))
}

impl ProcessItem for KThresholdFormula {
    fn name(&self) -> &'static str {
        "k_threshold"
    }
    fn rule(&self, args: &Args) -> Box<dyn CustomRule> {
        let f = formula_of(args).expect("checked by ProcessItem::check");
        Box::new(FormulaRule { k: args.int("k"), f: f.compiled() })
    }
    fn check(&self, args: &Args) -> Result<(), String> {
        formula_of(args).map(|_| ())
    }
    fn check_run(&self, args: &Args, n: u64, m: u64) -> Result<(), String> {
        let meaning = "the load from which question j is answered yes";
        check_probes(&formula_of(args)?, args.int("k"), n, m, meaning)
    }
    fn levels(&self) -> Result<(), String> {
        Ok(()) // loads of two samples, W/n, t and n
    }
}

/// The rule of one run of the formula form.
struct FormulaRule {
    k: u32,
    f: Compiled,
}

impl CustomRule for FormulaRule {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        let (a, b) = (at.sample(), at.sample());
        let (xa, xb) = (at.load(a), at.load(b));
        let avg = at.average();
        let (t, n) = (at.balls() as f64, at.n() as f64);
        let (mut ya, mut yb) = (0u32, 0u32);
        for j in 1..=self.k {
            let threshold = self.f.eval(&[f64::from(j), avg, t, n]);
            ya += u32::from(xa >= threshold);
            yb += u32::from(xb >= threshold);
        }
        match ya.cmp(&yb) {
            std::cmp::Ordering::Less => a,
            std::cmp::Ordering::Greater => b,
            // A fair coin: the top bit of one word.
            std::cmp::Ordering::Equal => {
                if at.rng().next_u64() >> 63 == 1 {
                    b
                } else {
                    a
                }
            }
        }
    }
}
