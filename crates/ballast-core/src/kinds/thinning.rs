//! Two-thinning with a fixed cut (`threshold`, `mean_thinning`, `relative_threshold`):
//! accept the first sample if its load passes the cut, else the ball goes to a fresh sample.
//! One rule ([`Thinning`]) with the cut as data; on the level engine a cut on the first
//! sample's load, and a batch law.

use crate::crossover::{AUTO_SEQUENTIAL_MIN_N_THINNING, AUTO_SEQUENTIAL_MIN_N_THRESHOLD};
use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelSteps};
use crate::params::{ParamDef, ParamDefault, ParamType};
use crate::process::{Accept, Thinning};
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kinds [`ProcessSpec::Threshold`], [`ProcessSpec::MeanThinning`] and
/// [`ProcessSpec::RelativeThreshold`].
pub(super) struct Item;

/// The cut.
fn accept_of(p: &ProcessSpec) -> Accept {
    match *p {
        ProcessSpec::Threshold { f } => Accept::AtMost(f),
        ProcessSpec::MeanThinning { strict } => Accept::BelowAverage { strict },
        ProcessSpec::RelativeThreshold { f } => Accept::BelowAveragePlus(f),
        _ => unreachable!("listed for the thinning kinds"),
    }
}

impl Kind for Item {
    const LEVEL_CHUNKS: bool = true;
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match *p {
            ProcessSpec::Threshold { f } => super::declared(&THRESHOLD, "f", f),
            ProcessSpec::RelativeThreshold { f } => super::declared(&RELATIVE_THRESHOLD, "f", f),
            _ => Ok(()),
        }
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(Thinning { accept: accept_of(&spec.process) })
    }
    fn levels(_spec: &RunSpec, _batched: bool) -> Result<(), Error> {
        Ok(())
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.thinning(accept_of(&spec.process))
    }
    fn batch_law(p: &ProcessSpec) -> Option<BatchLaw> {
        Some(match *p {
            ProcessSpec::Threshold { f } => BatchLaw::Threshold { f },
            ProcessSpec::MeanThinning { strict } => BatchLaw::MeanThinning { strict },
            ProcessSpec::RelativeThreshold { f } => BatchLaw::RelativeThreshold { f },
            _ => unreachable!("listed for the thinning kinds"),
        })
    }
    fn auto_levels_min_n(spec: &RunSpec) -> u64 {
        match spec.process {
            ProcessSpec::Threshold { .. } => AUTO_SEQUENTIAL_MIN_N_THRESHOLD,
            _ => AUTO_SEQUENTIAL_MIN_N_THINNING,
        }
    }
}

/// The registry entry of `threshold` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const THRESHOLD: ProcessDef = ProcessDef {
    name: "threshold",
    doc: "sample i1; accept it if its load <= f, else the ball goes to a fresh sample",
    params: &[ParamDef {
        name: "f",
        ty: ParamType::Real,
        default: ParamDefault::Required,
        doc: "absolute load threshold",
    }],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| Ok(ProcessSpec::Threshold { f: a.num("f") }),
};

/// The registry entry of `mean_thinning` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const MEAN_THINNING: ProcessDef = ProcessDef {
    name: "mean_thinning",
    doc: "sample i1; accept it if underloaded (x < W/n), else the ball goes to a fresh sample",
    params: &[ParamDef {
        name: "strict",
        ty: ParamType::Bool,
        default: ParamDefault::Bool(true),
        doc: "accept only x < W/n (false: x <= W/n)",
    }],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| Ok(ProcessSpec::MeanThinning { strict: a.flag("strict") }),
};

/// The registry entry of `relative_threshold` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const RELATIVE_THRESHOLD: ProcessDef = ProcessDef {
    name: "relative_threshold",
    doc: "sample i1; accept it if x < W/n + f, else the ball goes to a fresh sample",
    params: &[ParamDef {
        name: "f",
        ty: ParamType::Real,
        default: ParamDefault::Required,
        doc: "offset from the average load W/n",
    }],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| Ok(ProcessSpec::RelativeThreshold { f: a.num("f") }),
};
