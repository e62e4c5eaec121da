//! Czumaj–Stemann reallocation (`equalize`, with or without `moves`): it moves old balls
//! between the sampled bins, so it runs on reallocation loops of its own
//! ([`crate::czumaj`], [`crate::realloc`]) on both engines, which the router enters before
//! any rule is asked for. On the level engine the distinct sampled bins are distinct
//! positions of the sorted view, moved between levels.

use crate::error::Error;
use crate::kind::Kind;
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kinds [`ProcessSpec::Equalize`] and [`ProcessSpec::EqualizeMoves`].
pub(super) struct Item;

impl Kind for Item {
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        match *p {
            ProcessSpec::Equalize { d } | ProcessSpec::EqualizeMoves { d, .. } => super::samples(d),
            _ => unreachable!("listed for Equalize and EqualizeMoves"),
        }
    }
    fn bins<X: WithRule>(_spec: &RunSpec, _runner: X) -> X::Out {
        unreachable!("equalize runs in czumaj::simulate_equalize (checked in simulate)")
    }
    fn levels(_spec: &RunSpec, _batched: bool) -> Result<(), Error> {
        Ok(())
    }
}
