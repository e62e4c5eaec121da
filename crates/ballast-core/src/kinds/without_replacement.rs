//! A kind with its samples drawn without replacement (`replacement = false`,
//! [`crate::process::distinct`]): the inner kind supplies its rule on distinct bins
//! ([`crate::kind::Kind::distinct`]). The level engine runs it on the generic sequential
//! loop (distinct positions of the sorted view are distinct bins); no batch law for
//! distinct samples.

use crate::error::Error;
use crate::kind::{sequential_only, Kind, LevelSteps};
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::WithoutReplacement`].
pub(super) struct Item;

/// The inner process.
fn inner(p: &ProcessSpec) -> &ProcessSpec {
    let ProcessSpec::WithoutReplacement(p) = p else {
        unreachable!("listed for WithoutReplacement")
    };
    p
}

impl Kind for Item {
    fn compares(p: &ProcessSpec) -> bool {
        super::compares(inner(p))
    }

    fn check(p: &ProcessSpec) -> Result<(), Error> {
        let p = inner(p);
        if p.takes_replacement() {
            return super::check(p);
        }
        Err(Error::invalid(
            "replacement",
            false,
            "true for this kind (replacement = false is an option of d_choice, \
             unfair_d_choice, k_threshold, one_plus_beta, g_bounded, g_myopic and \
             sigma_noisy_load)",
        ))
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        super::distinct(inner(&spec.process), spec.tie_break, runner)
    }
    fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error> {
        sequential_only(
            batched,
            format!(
                "the level engine simulates {} with replacement = false sequentially only (no \
                 batch law for distinct samples)",
                spec.process.kind()
            ),
        )
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        super::distinct(inner(&spec.process), spec.tie_break, v)
    }
}
