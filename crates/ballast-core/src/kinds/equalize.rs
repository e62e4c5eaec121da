//! Czumaj–Stemann reallocation (`equalize`, with or without `moves`): it moves old balls
//! between the sampled bins, so it runs on reallocation loops of its own
//! ([`crate::czumaj`], [`crate::realloc`]) on both engines, which the router enters before
//! any rule is asked for. On the level engine the distinct sampled bins are distinct
//! positions of the sorted view, moved between levels.

use super::D;
use crate::def::{ProcessDef, NO_TIES, SEQUENTIAL_ONLY};
use crate::error::Error;
use crate::kind::{Kind, Reallocation};
use crate::params::{ParamDef, ParamDefault, ParamType};
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kinds [`ProcessSpec::Equalize`] and [`ProcessSpec::EqualizeMoves`].
pub(super) struct Item;

impl Kind for Item {
    const REALLOCATES: bool = true;
    fn unit_weights_only(_p: &ProcessSpec) -> bool {
        EQUALIZE.unit_weights_only
    }

    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match *p {
            ProcessSpec::Equalize { d } | ProcessSpec::EqualizeMoves { d, .. } => {
                super::declared(&EQUALIZE, "d", f64::from(d))
            }
            _ => unreachable!("listed for Equalize and EqualizeMoves"),
        }
    }
    fn bins<X: WithRule>(_spec: &RunSpec, _runner: X) -> X::Out {
        unreachable!("equalize runs on its reallocation loop (checked in simulate)")
    }
    fn reallocation<V: Reallocation>(spec: &RunSpec, v: V) -> V::Out {
        match spec.process {
            ProcessSpec::Equalize { d } => v.equalize(d),
            ProcessSpec::EqualizeMoves { d, moves } => v.equalize_moves(d, moves),
            _ => unreachable!("listed for Equalize and EqualizeMoves"),
        }
    }
    fn levels(_spec: &RunSpec, _batched: bool) -> Result<(), Error> {
        Ok(())
    }
}

/// The registry entry of `equalize` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const EQUALIZE: ProcessDef = ProcessDef {
    name: "equalize",
    doc: "Czumaj-Stemann reallocation: d samples; the new ball and the balls of the \
          sampled bins are spread over them evenly (with moves = r: the new ball to a \
          least loaded sampled bin, then at most r balls from a most to a least loaded one \
          while their loads differ by 2 or more)",
    params: &[D, MOVES],
    ties: NO_TIES,
    settings: SEQUENTIAL_ONLY,
    unit_weights_only: true,
    example: "",
    build: |a| {
        Ok(match a.opt_int("moves") {
            None => ProcessSpec::Equalize { d: a.int("d") },
            Some(moves) => ProcessSpec::EqualizeMoves { d: a.int("d"), moves },
        })
    },
};

/// `moves` of `equalize`.
const MOVES: ParamDef = ParamDef {
    name: "moves",
    ty: ParamType::Int { lo: 0, hi: u32::MAX },
    default: ParamDefault::Unset,
    doc: "old balls moved per step at most (0: Greedy[d] with random ties; unset: no limit, \
          the even spread)",
};
