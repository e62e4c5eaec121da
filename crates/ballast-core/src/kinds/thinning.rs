//! Two-thinning with a fixed cut (`threshold`, `mean_thinning`, `relative_threshold`):
//! accept the first sample if its load passes the cut, else the ball goes to a fresh sample.
//! One rule ([`Thinning`]) with the cut as data; on the level engine a cut on the first
//! sample's load, and a batch law.

use crate::crossover::{AUTO_SEQUENTIAL_MIN_N_THINNING, AUTO_SEQUENTIAL_MIN_N_THRESHOLD};
use crate::error::Error;
use crate::kind::{BatchLaw, Kind, LevelSteps};
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
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match *p {
            ProcessSpec::Threshold { f } | ProcessSpec::RelativeThreshold { f }
                if !f.is_finite() =>
            {
                Err(Error::invalid("f", f, "a finite number"))
            }
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
