//! Allocation vectors over ranks (`rank_vector`, [`crate::rank_vector`]): the ball goes to
//! the bin at a rank drawn from a probability vector. The bin engine keeps live ranks; the
//! level engine reads ranks as positions of the sorted view (sequential only).

use crate::def::{ProcessDef, BATCHED_UNIFORM_ONLY, NO_TIES};
use crate::error::Error;
use crate::kind::{Kind, LevelSteps};
use crate::params::{ParamDef, ParamDefault, ParamType};
use crate::rank_vector::{BinRankVector, SortedRankVector};
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::RankVector`].
pub(super) struct Item;

/// The cumulative rank probabilities.
fn cum_of(p: &ProcessSpec) -> &[f64] {
    let ProcessSpec::RankVector { cum } = p else { unreachable!("listed for RankVector") };
    cum
}

impl Kind for Item {
    /// Cumulative rank probabilities: non-decreasing, from at least 0, ending at exactly 1.
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        let cum = cum_of(p);
        let ok = cum.last() == Some(&1.0)
            && cum.windows(2).all(|w| w[0] <= w[1])
            && cum.first().is_some_and(|&c| c >= 0.0);
        if ok {
            Ok(())
        } else {
            Err(Error::invalid("p", "…", "cumulative rank probabilities ending at 1"))
        }
    }
    fn check_run(spec: &RunSpec) -> Result<(), Error> {
        let cum = cum_of(&spec.process);
        if cum.len() as u64 != spec.n {
            return Err(Error::invalid(
                "p",
                format!("of {} entries for n = {} bins", cum.len(), spec.n),
                "one entry per bin (a list of length n)",
            ));
        }
        Ok(())
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(BinRankVector { cum: cum_of(&spec.process) })
    }
    fn levels(spec: &RunSpec, batched: bool) -> Result<(), Error> {
        super::no_batch_law(spec, batched)
    }
    fn level_steps<V: LevelSteps>(spec: &RunSpec, v: V) -> V::Out {
        v.run(SortedRankVector { cum: cum_of(&spec.process) })
    }
    /// Always the level engine under `auto`: the bin engine pays O(n) per ball for a rank.
    fn auto_levels_min_n(_spec: &RunSpec) -> u64 {
        0
    }
}

/// The registry entry of `rank_vector` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const RANK_VECTOR: ProcessDef = ProcessDef {
    name: "rank_vector",
    doc: "the ball goes to the bin at a rank drawn from p (rank 1 = most loaded, ties in \
          random order)",
    params: &[ParamDef {
        name: "p",
        ty: ParamType::List,
        default: ParamDefault::Required,
        doc: "weights >= 0 of ranks 1..=n, one per bin, divided by their sum (in a config \
              also one formula in x = i/n, i and n)",
    }],
    ties: NO_TIES,
    settings: BATCHED_UNIFORM_ONLY,
    unit_weights_only: false,
    example: "",
    build: |a| {
        let p = a.list("p").expect("required list");
        crate::rank_vector::normalise(p)
            .map(|cum| ProcessSpec::RankVector { cum })
            .map_err(|why| a.refuse("p", format!("`p`: {why}")))
    },
};
