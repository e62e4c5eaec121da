//! Sampling without replacement (`docs/processes.md#sampling-without-replacement`): the
//! d-sample processes with `replacement = false` draw `d` *distinct* bins, every ordered
//! d-tuple of distinct bins equally likely, and then decide exactly as with replacement
//! (least loaded for d-Choice, most loaded for Unfair d-Choice).
//!
//! The draw is a partial Fisher–Yates shuffle of `0..n` kept sparse: the first `d` slots of a
//! virtual permutation, with the displaced entries in a small list of `(slot, value)` pairs,
//! so a step costs `d` bounded draws and O(d²) look-ups, whatever `n`. The order of the
//! samples is a uniform random order, so "the earliest tied sample" has the law of a uniform
//! choice among the tied ones, as with i.i.d. samples.
//!
//! Both engines run the rule: the bin engine on the bins, the level engine (sequential
//! setting) on its sorted view, where a uniform set of distinct positions is a uniform set of
//! distinct bins. The level engine's batch step has no law for it and refuses it.

use rand::RngCore;

use crate::loads::LoadState;
use crate::process::{Ctx, Placement, Ranks, Rule};
use crate::registry::ParamError;
use crate::rng::below;
use crate::spec::{ProcessSpec, RunSpec, Setting, TieBreak};

/// The name of the option in configs and on the command line.
pub const OPTION: &str = "replacement";

/// `d` distinct uniform bins, least or most loaded wins.
#[derive(Clone, Debug)]
pub struct Distinct {
    /// Number of samples, `1 <= d <= n`.
    pub d: u32,
    /// `true`: the most loaded sample gets the ball (Unfair d-Choice); `false`: the least
    /// loaded (d-Choice).
    pub most: bool,
    /// Tie rule among equally loaded samples.
    pub tie: TieBreak,
    /// Displaced entries of the virtual permutation: `(slot, value)`.
    moved: Vec<(u64, u64)>,
}

impl Distinct {
    /// The rule for `d` distinct samples.
    pub fn new(d: u32, most: bool, tie: TieBreak) -> Self {
        Self { d, most, tie, moved: Vec::with_capacity(2 * d as usize) }
    }

    /// The value now at `slot` of the virtual permutation.
    #[inline]
    fn at(&self, slot: u64) -> u64 {
        self.moved.iter().rev().find(|(s, _)| *s == slot).map_or(slot, |&(_, v)| v)
    }
}

impl Rule for Distinct {
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let n = s.n() as u64;
        self.moved.clear();
        let (mut best, mut best_load, mut ties) = (usize::MAX, None, 0u64);
        for k in 0..u64::from(self.d) {
            // Swap slot k with a uniform slot of k..n: slot k then holds the k-th sample.
            ctx.samples += 1;
            let r = k + below(rng, n - k);
            let (vk, vr) = (self.at(k), self.at(r));
            self.moved.push((r, vk));
            self.moved.push((k, vr));
            let j = vr as usize;
            let lj = s.load(j);
            let Some(bl) = best_load else {
                (best, best_load, ties) = (j, Some(lj), 1);
                continue;
            };
            let better = if self.most { lj > bl } else { lj < bl };
            if better {
                (best, best_load, ties) = (j, Some(lj), 1);
            } else if lj == bl {
                ties += 1;
                match self.tie {
                    TieBreak::Random => {
                        if below(rng, ties) == 0 {
                            best = j;
                        }
                    }
                    TieBreak::First => {}
                    TieBreak::LowestIndex => best = best.min(j),
                    TieBreak::Position => best = best.max(j),
                }
            }
        }
        Placement::one(best)
    }
}

/// Whether `spec` samples without replacement, and its `d`.
pub fn distinct_d(process: &ProcessSpec) -> Option<u32> {
    match *process {
        ProcessSpec::DChoiceDistinct { d } | ProcessSpec::UnfairDChoiceDistinct { d } => Some(d),
        _ => None,
    }
}

/// The front ends' refusals for sampling without replacement (part of
/// [`crate::registry::check_run`]): more samples than bins, and the delay setting (whose
/// engine draws i.i.d. samples of past loads).
pub fn check(spec: &RunSpec) -> Result<(), ParamError> {
    let Some(d) = distinct_d(&spec.process) else {
        return Ok(());
    };
    if u64::from(d) > spec.n {
        return Err(ParamError::at(
            "d",
            format!(
                "process `{}` with {OPTION} = false draws d distinct bins, so d = {d} needs at \
                 least {d} bins; got n = {} (expected d <= n, or {OPTION} = true)",
                spec.process.kind(),
                spec.n
            ),
        ));
    }
    if matches!(spec.setting, Setting::Delay { .. }) {
        return Err(ParamError::at(
            OPTION,
            format!(
                "process `{}` with {OPTION} = false does not run in the delay setting (its \
                 engine draws samples with replacement); remove `{OPTION}` or the delay",
                spec.process.kind()
            ),
        ));
    }
    if !spec.sampling.is_uniform() {
        return Err(ParamError::at(
            OPTION,
            format!(
                "process `{}` with {OPTION} = false draws its distinct bins uniformly; biased \
                 `sampling` is not supported with it (remove `{OPTION}` or the sampling law)",
                spec.process.kind()
            ),
        ));
    }
    Ok(())
}
