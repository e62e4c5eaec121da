//! k-Threshold (`k_threshold`, [`crate::k_threshold`]): two samples seen through the
//! questions "load >= W/n + f_j?"; fewer yes answers wins, a coin between equal counts.

use super::{REPLACEMENT, REPLACEMENT_PAIR};
use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::k_threshold::KThreshold;
use crate::kind::{Kind, LevelSteps};
use crate::params::{ParamDef, ParamDefault, ParamType};
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
    doc: "two samples, each seen through k questions \"load >= W/n + f_j?\"; fewer yes \
          answers wins, a coin between equal counts",
    params: &[
        ParamDef {
            name: "f",
            ty: ParamType::List,
            default: ParamDefault::Required,
            doc: "thresholds above the average load, strictly increasing (1 to 64; in a \
                  config each entry a number or a formula in the point's variables)",
        },
        REPLACEMENT_PAIR,
    ],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| {
        let f = a.list("f").expect("required list").to_vec();
        crate::k_threshold::check_thresholds(&f)
            .map(|()| ProcessSpec::KThreshold { f }.with_replacement(a.flag(REPLACEMENT.name)))
            .map_err(|why| a.refuse("f", format!("`f`: {why}")))
    },
};
