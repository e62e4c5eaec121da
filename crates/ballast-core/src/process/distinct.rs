//! Sampling without replacement (`docs/processes.md#sampling-without-replacement`): the
//! d-sample processes with `replacement = false` draw `d` *distinct* bins, every ordered
//! d-tuple of distinct bins equally likely, and then decide exactly as with replacement
//! (least loaded for d-Choice, most loaded for Unfair d-Choice). The two-sample processes
//! (the Two-Choice steps of (1+β), g-Bounded, g-Myopic, σ-Noisy-Load, k-Threshold) take the
//! same option: their pair of samples is an ordered pair of distinct bins
//! ([`distinct_pair`], [`DistinctPair`]), decided by the rule's own comparison
//! ([`PairChoice`]).
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
use crate::params::ParamError;
use crate::process::{Ctx, Placement, Ranks, Rule};
use crate::rng::{below, bernoulli};
pub use crate::spec::{distinct_d, is_distinct_pair};
use crate::spec::{RunSpec, Setting, TieBreak};

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
    draw: SparseDraw,
}

impl Distinct {
    /// The rule for `d` distinct samples.
    pub fn new(d: u32, most: bool, tie: TieBreak) -> Self {
        Self { d, most, tie, draw: SparseDraw::new(d) }
    }
}

/// Distinct uniform bins, one at a time: the first slots of a virtual uniform permutation of
/// `0..n` (a partial Fisher–Yates shuffle kept sparse). [`SparseDraw::start`] begins a step;
/// the k-th [`SparseDraw::next`] of the step is its k-th sample.
#[derive(Clone, Debug)]
pub struct SparseDraw {
    /// Displaced entries of the virtual permutation: `(slot, value)`.
    moved: Vec<(u64, u64)>,
    /// Samples drawn in this step.
    k: u64,
}

impl SparseDraw {
    /// A draw of up to `d` samples per step.
    pub fn new(d: u32) -> Self {
        Self { moved: Vec::with_capacity(2 * d as usize), k: 0 }
    }

    /// Begins a step: every bin may be drawn again.
    #[inline]
    pub fn start(&mut self) {
        self.moved.clear();
        self.k = 0;
    }

    /// The next distinct bin of this step (at most `n` per step), counted as one sample:
    /// slot k is swapped with a uniform slot of `k..n` and then holds the k-th sample.
    #[inline]
    pub fn next<R: RngCore + ?Sized>(&mut self, n: u64, rng: &mut R, ctx: &mut Ctx) -> usize {
        let k = self.k;
        ctx.samples += 1;
        let r = k + below(rng, n - k);
        let (vk, vr) = (self.at(k), self.at(r));
        self.moved.push((r, vk));
        self.moved.push((k, vr));
        self.k += 1;
        vr as usize
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
        self.draw.start();
        let (mut best, mut best_load, mut ties) = (usize::MAX, None, 0u64);
        for _ in 0..self.d {
            let j = self.draw.next(n, rng, ctx);
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

/// Two distinct uniform bins, every ordered pair equally likely, counted as two samples:
/// the first uniform on `0..n`, the second uniform on the other `n − 1` bins (`n >= 2`).
#[inline]
pub fn distinct_pair<R: RngCore + ?Sized>(n: usize, rng: &mut R, ctx: &mut Ctx) -> (usize, usize) {
    let a = ctx.sample_below(rng, n as u64);
    let b = ctx.sample_below(rng, n as u64 - 1);
    (a, if b >= a { b + 1 } else { b })
}

/// A two-sample rule's decision given its two samples `a` (first) and `b` (second): the
/// part of the rule after the sampling, shared by the i.i.d. and the distinct pairs.
pub trait PairChoice {
    /// The receiving bin, `a` or `b`; may draw coins or noise from `rng` and `ctx`.
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        a: usize,
        b: usize,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize;
}

/// A two-sample rule on a pair of distinct bins ([`distinct_pair`]).
#[derive(Clone, Debug)]
pub struct DistinctPair<P>(pub P);

impl<P: PairChoice> Rule for DistinctPair<P> {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let (a, b) = distinct_pair(s.n(), rng, ctx);
        Placement::one(self.0.choose(s, a, b, rng, ctx))
    }
}

/// Two-Choice's decision on a pair: the lighter; equal loads by the tie rule (random: a
/// fair coin; first: `a`; lowest_index / position: the lower / higher index), as
/// [`crate::process::least_of`] decides two samples.
#[derive(Clone, Copy, Debug)]
pub struct LeastOfPair {
    /// Tie rule.
    pub tie: TieBreak,
}

impl PairChoice for LeastOfPair {
    #[inline]
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        a: usize,
        b: usize,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize {
        let (la, lb) = (s.load(a), s.load(b));
        let take_b = if lb < la {
            true
        } else if lb == la {
            match self.tie {
                TieBreak::Random => ctx.coin(rng),
                TieBreak::First => false,
                TieBreak::LowestIndex => b < a,
                TieBreak::Position => b > a,
            }
        } else {
            false
        };
        if take_b {
            b
        } else {
            a
        }
    }
}

/// (1+β) whose Two-Choice steps sample two distinct bins: with probability β the lighter of
/// a distinct pair ([`LeastOfPair`]), else one uniform sample.
#[derive(Clone, Copy, Debug)]
pub struct OnePlusBetaDistinct {
    /// Probability of a Two-Choice step.
    pub beta: f64,
    /// Tie rule of the Two-Choice steps.
    pub tie: TieBreak,
}

impl Rule for OnePlusBetaDistinct {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        Placement::one(if !bernoulli(rng, self.beta) {
            ctx.sample(rng)
        } else {
            let (a, b) = distinct_pair(s.n(), rng, ctx);
            LeastOfPair { tie: self.tie }.choose(s, a, b, rng, ctx)
        })
    }
}

/// The front ends' refusals for sampling without replacement (part of
/// [`crate::registry::check_run`]): more samples than bins, and the delay setting (whose
/// engine draws i.i.d. samples of past loads).
pub fn check(spec: &RunSpec) -> Result<(), ParamError> {
    let pair = is_distinct_pair(&spec.process);
    let Some(d) = distinct_d(&spec.process).or(pair.then_some(2)) else {
        return Ok(());
    };
    if pair && spec.n < 2 {
        return Err(ParamError::at(
            OPTION,
            format!(
                "process `{}` with {OPTION} = false draws two distinct bins, so it needs at                  least 2 bins; got n = {} (expected n >= 2, or {OPTION} = true)",
                spec.process.kind(),
                spec.n
            ),
        ));
    }
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
