//! Always-Go-Left (`always_go_left`): the bins split into d groups by index, one uniform
//! sample per group, the least loaded wins, ties to the leftmost group. Its groups are bins
//! by index, which the level engine's histogram does not know.

use super::D;
use crate::def::{ProcessDef, BATCHED_UNIFORM_ONLY, NO_TIES};
use crate::error::Error;
use crate::item::CustomSpec;
use crate::kind::Kind;
use crate::params::{ParamDef, ParamDefault, ParamType};
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
        super::declared(&ALWAYS_GO_LEFT, "d", f64::from(d_of(p)))
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

/// The registry entry of `always_go_left` (listed in [`crate::registry::PROCESSES`]).
pub(crate) const ALWAYS_GO_LEFT: ProcessDef = ProcessDef {
    name: "always_go_left",
    doc: "Voecking: d contiguous groups, one sample each, least loaded, ties to the left \
          (or at random)",
    params: &[
        D,
        ParamDef {
            name: "ties",
            ty: ParamType::Choice(&["left", "random"]),
            default: ParamDefault::Text("left"),
            doc: "equally loaded samples: the leftmost group's (Voecking) or a uniform one \
                  (the ablation of the asymmetry)",
        },
    ],
    ties: NO_TIES,
    settings: BATCHED_UNIFORM_ONLY,
    unit_weights_only: false,
    example: "",
    build: |a| {
        Ok(if a.text("ties") == Some("random") {
            ProcessSpec::Custom(CustomSpec::new(&crate::items::agl_random::ITEM, a.clone()))
        } else {
            ProcessSpec::AlwaysGoLeft { d: a.int("d") }
        })
    },
};
