//! k-Threshold (`docs/processes.md#k_threshold`): two uniform samples, each seen only
//! through `k` binary questions "is its load at least `W/n + f_j`?" for thresholds
//! `f_1 < … < f_k` measured from the average load; the ball goes to the sample with fewer
//! "yes" answers, a fair coin between equal counts.
//!
//! A question is answered as relative_threshold's acceptance is, on the normalised load:
//! "yes" when `x − W/n >= f_j` (`LoadState::normalized`, computed without cancellation).
//! Decisions depend on the loads only, so the level engine runs the rule on its sorted view
//! (sequential setting); its batch step has no law for it. With `replacement = false` the two
//! samples are distinct bins ([`crate::process::distinct::DistinctPair`]).

use rand::RngCore;

use crate::loads::LoadState;
use crate::process::distinct::PairChoice;
use crate::process::{Ctx, Placement, Ranks, Rule};
pub use crate::spec::{check_thresholds, MAX_K};

/// The rule: two samples, fewer "yes" answers wins, a coin between equal counts.
#[derive(Clone, Debug)]
pub struct KThreshold<'a> {
    /// Thresholds above the average load, increasing.
    pub f: &'a [f64],
}

impl KThreshold<'_> {
    /// The number of thresholds at or below the normalised load `y`.
    #[inline]
    fn yes(&self, y: f64) -> usize {
        self.f.partition_point(|&f| f <= y)
    }
}

impl Rule for KThreshold<'_> {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let a = ctx.sample(rng);
        let b = ctx.sample(rng);
        Placement::one(PairChoice::choose(self, s, a, b, rng, ctx))
    }
}

impl PairChoice for KThreshold<'_> {
    #[inline]
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        a: usize,
        b: usize,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize {
        let (ya, yb) = (self.yes(s.normalized(a)), self.yes(s.normalized(b)));
        match ya.cmp(&yb) {
            std::cmp::Ordering::Less => a,
            std::cmp::Ordering::Greater => b,
            std::cmp::Ordering::Equal => {
                if ctx.coin(rng) {
                    b
                } else {
                    a
                }
            }
        }
    }
}
