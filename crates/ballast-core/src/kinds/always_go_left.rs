//! Always-Go-Left (`always_go_left`): the bins split into d groups by index, one uniform
//! sample per group, the least loaded wins, ties to the leftmost group. Its groups are bins
//! by index, which the level engine's histogram does not know.

use crate::error::Error;
use crate::kind::Kind;
use crate::process::AlwaysGoLeft;
use crate::spec::{ProcessSpec, RunSpec};
use crate::with_rule::WithRule;

/// The kind [`ProcessSpec::AlwaysGoLeft`].
pub(super) struct Item;

/// The number of groups.
fn d_of(p: &ProcessSpec) -> u32 {
    let ProcessSpec::AlwaysGoLeft { d } = *p else { unreachable!("listed for AlwaysGoLeft") };
    d
}

impl Kind for Item {
    fn check(p: &ProcessSpec) -> Result<(), Error> {
        super::samples(d_of(p))
    }
    fn check_run(spec: &RunSpec) -> Result<(), Error> {
        let d = d_of(&spec.process);
        if u64::from(d) > spec.n {
            return Err(Error::invalid(
                "d",
                d,
                "at most n for always_go_left (one group per sample)",
            ));
        }
        Ok(())
    }
    fn bins<X: WithRule>(spec: &RunSpec, runner: X) -> X::Out {
        runner.run(AlwaysGoLeft { d: d_of(&spec.process) })
    }
    fn levels(spec: &RunSpec, _batched: bool) -> Result<(), Error> {
        Err(super::bin_identities(spec))
    }
}
