//! The bridge from a process item's rule ([`crate::item::CustomRule`], called through a
//! trait object) to the engines' [`Rule`]: one call per ball, with the loads and the random
//! numbers seen through [`Decision`]. On the sequential level engine the bridge says so
//! ([`Decision::relabelled`]): positions are sorted again after every ball.

use rand::RngCore;

use super::{Ctx, Placement, Ranks, Rule};
use crate::item::{CustomRule, Decision};
use crate::loads::LoadState;

/// A custom rule as an engine rule.
pub(crate) struct Bridge {
    rule: Box<dyn CustomRule>,
    /// Whether the state is the sorted view, sorted again after every ball.
    relabelled: bool,
}

impl Bridge {
    /// The bridge of one run's rule (bins keep their identity between balls: the bin
    /// engine, or the frozen view of a batch on the level engine).
    pub(crate) fn new(rule: Box<dyn CustomRule>) -> Self {
        Self { rule, relabelled: false }
    }

    /// The bridge of one run's rule on the sequential level engine.
    pub(crate) fn relabelled(rule: Box<dyn CustomRule>) -> Self {
        Self { rule, relabelled: true }
    }
}

impl Rule for Bridge {
    fn in_round(&self) -> bool {
        self.rule.in_round()
    }
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _ranks: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let n = s.n();
        let mut at = At { s, ctx, rng: Words(rng), relabelled: self.relabelled };
        let bin = self.rule.place(&mut at);
        assert!(bin < n, "a custom rule placed a ball in bin {bin} of {n}");
        let balls = self.rule.balls(bin, &mut at);
        assert!(balls >= 1, "a custom rule placed {balls} balls in a step (at least 1)");
        Placement { bin, balls }
    }
}

/// The random numbers of a run behind `dyn RngCore` (the engines' generator may be unsized).
struct Words<'a, R: RngCore + ?Sized>(&'a mut R);

impl<R: RngCore + ?Sized> RngCore for Words<'_, R> {
    fn next_u32(&mut self) -> u32 {
        self.0.next_u32()
    }
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        self.0.fill_bytes(dest)
    }
}

/// One decision: the state, the sampling context and the random numbers.
struct At<'a, 'c, S, R: RngCore + ?Sized> {
    s: &'a S,
    ctx: &'a mut Ctx<'c>,
    rng: Words<'a, R>,
    relabelled: bool,
}

impl<S: LoadState, R: RngCore + ?Sized> Decision for At<'_, '_, S, R> {
    fn n(&self) -> usize {
        self.s.n()
    }
    fn load(&mut self, bin: usize) -> f64 {
        self.s.load(bin).into()
    }
    fn average(&mut self) -> f64 {
        self.s.average()
    }
    fn balls(&self) -> u64 {
        self.ctx.balls
    }
    fn sample(&mut self) -> usize {
        self.ctx.sample(&mut self.rng)
    }
    fn sample_ahead(&mut self) -> usize {
        let i = self.ctx.sample(&mut self.rng);
        self.ctx.samples -= 1;
        i
    }
    fn count_sample(&mut self) {
        self.ctx.samples += 1;
    }
    fn sample_in(&mut self, lo: usize, hi: usize) -> usize {
        assert!(lo < hi && hi <= self.s.n(), "a custom rule sampled in {lo}..{hi}");
        lo + self.ctx.sample_below(&mut self.rng, (hi - lo) as u64)
    }
    fn rng(&mut self) -> &mut dyn RngCore {
        &mut self.rng
    }
    fn relabelled(&self) -> bool {
        self.relabelled
    }
    fn bin_at_load(&mut self, load: f64) -> Option<usize> {
        self.s.first_with_load(load)
    }
}
