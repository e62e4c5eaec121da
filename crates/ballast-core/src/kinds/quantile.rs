//! Quantile (`quantile`) and mixed Quantile (`mixed_quantile`): sample a bin; if it is among
//! the ⌈δn⌉ heaviest, the ball goes to a fresh sample, else to it (mixed: a Quantile step
//! with probability η, else a One-Choice step). `auto` always takes the level engine: the
//! bin engine keeps live ranks (29–40 ns per ball at n = 2¹⁰ … 2¹⁷ against 6.5–21 on levels).

use super::DELTA;
use crate::def::{ProcessDef, BATCHED, NO_TIES};
use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelSteps};
use crate::params::{ParamDef, ParamDefault, ParamType};
use crate::process::MixedQuantile;
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kinds [`ProcessSpec::Quantile`] and [`ProcessSpec::MixedQuantile`].
pub(super) struct Item;

/// `(delta, eta)`, Quantile being mixed Quantile with `eta = 1`.
fn delta_eta(p: &ProcessSpec) -> (f64, f64) {
    match *p {
        ProcessSpec::Quantile { delta } => (delta, 1.0),
        ProcessSpec::MixedQuantile { delta, eta } => (delta, eta),
        _ => unreachable!("listed for Quantile and MixedQuantile"),
    }
}

impl Kind for Item {
    const LEVEL_CHUNKS: bool = true;
    const USES_RANKS: bool = true;
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match *p {
            ProcessSpec::Quantile { delta } => super::declared(&QUANTILE, "delta", delta),
            ProcessSpec::MixedQuantile { delta, eta } => {
                super::declared(&MIXED_QUANTILE, "delta", delta)?;
                super::declared(&MIXED_QUANTILE, "eta", eta)
            }
            _ => unreachable!("listed for Quantile and MixedQuantile"),
        }
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        let (delta, eta) = delta_eta(&spec.process);
        runner.run(MixedQuantile { delta, eta })
    }
    fn levels(_spec: &RunSpec, _batched: bool) -> Result<(), Error> {
        Ok(())
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        let (delta, eta) = delta_eta(&spec.process);
        v.quantile(delta, eta)
    }
    fn batch_law(p: &ProcessSpec) -> Option<BatchLaw> {
        let (delta, eta) = delta_eta(p);
        Some(BatchLaw::MixedQuantile { delta, eta })
    }
    fn auto_levels_min_n(_spec: &RunSpec) -> u64 {
        0
    }
}

/// The registry entry of `quantile` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const QUANTILE: ProcessDef = ProcessDef {
    name: "quantile",
    doc: "sample i1; if among the ceil(delta n) heaviest, the ball goes to a fresh sample, \
          else to i1",
    params: &[DELTA],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| Ok(ProcessSpec::Quantile { delta: a.num("delta") }),
};

/// The registry entry of `mixed_quantile` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const MIXED_QUANTILE: ProcessDef = ProcessDef {
    name: "mixed_quantile",
    doc: "with probability eta a Quantile(delta) step, else One-Choice",
    params: &[
        DELTA,
        ParamDef {
            name: "eta",
            ty: ParamType::Unit,
            default: ParamDefault::Required,
            doc: "probability of a Quantile step (else One-Choice)",
        },
    ],
    ties: NO_TIES,
    settings: BATCHED,
    unit_weights_only: false,
    example: "",
    build: |a| Ok(ProcessSpec::MixedQuantile { delta: a.num("delta"), eta: a.num("eta") }),
};
