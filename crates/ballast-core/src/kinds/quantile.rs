//! Quantile (`quantile`) and mixed Quantile (`mixed_quantile`): sample a bin; if it is among
//! the ⌈δn⌉ heaviest, the ball goes to a fresh sample, else to it (mixed: a Quantile step
//! with probability η, else a One-Choice step). `auto` always takes the level engine: the
//! bin engine keeps live ranks (29–40 ns per ball at n = 2¹⁰ … 2¹⁷ against 6.5–21 on levels).

use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelSteps};
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
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        super::unit_interval("delta", delta_eta(p).0)?;
        match p {
            ProcessSpec::MixedQuantile { eta, .. } => super::unit_interval("eta", *eta),
            _ => Ok(()),
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
