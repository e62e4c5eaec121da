//! The allocation rules (SPEC.md §2), one small type per process.
//!
//! A rule reads a [`LoadState`] (the current loads in the sequential setting, the frozen
//! loads of the batch start in the batched setting) and returns the bin of the next ball. It
//! never owns randomness: the engine passes `rng` and a [`Ctx`] with the bit buffer and the
//! sample counter.

use rand::RngCore;

use crate::loads::LoadState;
use crate::rng::{below, bernoulli, Bits};
use crate::TieBreak;

/// Per-run scratch shared by all rules: cheap random words and counters.
#[derive(Clone, Debug)]
pub struct Ctx {
    n: u32,
    half: u32,
    has_half: bool,
    bits: Bits,
    /// Bin samples drawn so far.
    pub samples: u64,
}

impl Ctx {
    /// Context for `n` bins (`1 <= n <= 2^32 − 1`).
    pub fn new(n: usize) -> Self {
        Self {
            n: n as u32,
            half: 0,
            has_half: false,
            bits: Bits::default(),
            samples: 0,
        }
    }

    /// Number of bins.
    pub fn n(&self) -> usize {
        self.n as usize
    }

    /// One uniform bin. Each 64-bit draw feeds two 32-bit Lemire samples.
    #[inline]
    pub fn sample<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> usize {
        self.samples += 1;
        loop {
            let word = if self.has_half {
                self.has_half = false;
                self.half
            } else {
                let w = rng.next_u64();
                self.half = (w >> 32) as u32;
                self.has_half = true;
                w as u32
            };
            if let Some(i) = crate::rng::below_from_word(word, self.n) {
                return i as usize;
            }
        }
    }

    /// A fair coin from the bit buffer.
    #[inline]
    pub fn coin<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> bool {
        self.bits.coin(rng)
    }
}

/// Frozen or live rank information for Quantile-type rules.
#[derive(Clone, Copy, Debug)]
pub enum Ranks<L> {
    /// The process does not use ranks.
    Unused,
    /// Sequential: ranks of the current loads; a bin in the tie group straddling the cut is
    /// heavy with probability (k − heavier)/ties (same histogram law as any fixed tie order).
    Live {
        /// Number of heavy bins, ⌈δn⌉.
        k: u64,
    },
    /// Batched: ranks frozen at the batch start (heaviest first, ties by index).
    Frozen {
        /// Load of the k-th heaviest bin.
        threshold: L,
        /// Bins with load `threshold` and index `<= cut` are heavy.
        cut: usize,
    },
}

impl<L: Copy + PartialOrd> Ranks<L> {
    /// Whether bin `i` is among the heavy bins.
    #[inline]
    pub fn is_heavy<S, R>(&self, s: &S, i: usize, rng: &mut R) -> bool
    where
        S: LoadState<Load = L>,
        R: RngCore + ?Sized,
    {
        match *self {
            Ranks::Unused => false,
            Ranks::Live { k } => {
                if k == 0 {
                    return false;
                }
                let (heavier, ties) = s.heavier_and_equal(i);
                if heavier >= k {
                    false
                } else if heavier + ties <= k {
                    true
                } else {
                    below(rng, ties) < k - heavier
                }
            }
            Ranks::Frozen { threshold, cut } => {
                let x = s.load(i);
                x > threshold || (x == threshold && i <= cut)
            }
        }
    }
}

/// An allocation rule.
pub trait Rule {
    /// Whether the rule asks [`Ranks`] questions (the engine then maintains them).
    fn uses_ranks(&self) -> bool {
        false
    }
    /// Fraction of bins that count as heavy, when [`Rule::uses_ranks`].
    fn heavy_fraction(&self) -> f64 {
        0.0
    }
    /// The bin of the next ball.
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &self,
        s: &S,
        ranks: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize;
}

/// Least loaded of `d` samples, ties by `tie`.
#[inline]
pub fn least_of<S: LoadState, R: RngCore + ?Sized>(
    s: &S,
    d: u32,
    tie: TieBreak,
    rng: &mut R,
    ctx: &mut Ctx,
) -> usize {
    let mut best = ctx.sample(rng);
    let mut best_load = s.load(best);
    let mut ties = 1u64;
    for _ in 1..d {
        let j = ctx.sample(rng);
        let lj = s.load(j);
        if lj < best_load {
            best = j;
            best_load = lj;
            ties = 1;
        } else if lj == best_load {
            match tie {
                TieBreak::Random => {
                    ties += 1;
                    let replace = if ties == 2 {
                        ctx.coin(rng)
                    } else {
                        below(rng, ties) == 0
                    };
                    if replace {
                        best = j;
                    }
                }
                TieBreak::First => {}
                TieBreak::LowestIndex => best = best.min(j),
                TieBreak::Position => best = best.max(j),
            }
        }
    }
    best
}

/// One-Choice: one uniform sample.
#[derive(Clone, Copy, Debug)]
pub struct OneChoice;

impl Rule for OneChoice {
    #[inline]
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &self,
        _s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize {
        ctx.sample(rng)
    }
}

/// d-Choice (Greedy[d]): least loaded of `d` samples.
#[derive(Clone, Copy, Debug)]
pub struct DChoice {
    /// Number of samples.
    pub d: u32,
    /// Tie rule among equally loaded samples.
    pub tie: TieBreak,
}

impl Rule for DChoice {
    #[inline]
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize {
        least_of(s, self.d, self.tie, rng, ctx)
    }
}

/// Two-Choice specialised (d = 2): the hot path of the papers.
#[derive(Clone, Copy, Debug)]
pub struct TwoChoice {
    /// Tie rule.
    pub tie: TieBreak,
}

impl Rule for TwoChoice {
    #[inline]
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize {
        least_of(s, 2, self.tie, rng, ctx)
    }
}

/// (1+β): with probability β a Two-Choice step, else One-Choice.
#[derive(Clone, Copy, Debug)]
pub struct OnePlusBeta {
    /// Probability of a second sample.
    pub beta: f64,
    /// Tie rule for the Two-Choice steps.
    pub tie: TieBreak,
}

impl Rule for OnePlusBeta {
    #[inline]
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize {
        if bernoulli(rng, self.beta) {
            least_of(s, 2, self.tie, rng, ctx)
        } else {
            ctx.sample(rng)
        }
    }
}

/// Quantile(δ) mixed with One-Choice: with probability η, sample `i1` and, if it is among the
/// ⌈δn⌉ heaviest, place the ball at a fresh sample; otherwise (or with probability 1 − η) the
/// ball goes to `i1`. Plain Quantile is η = 1.
#[derive(Clone, Copy, Debug)]
pub struct MixedQuantile {
    /// Heavy fraction.
    pub delta: f64,
    /// Probability of a Quantile step.
    pub eta: f64,
}

impl Rule for MixedQuantile {
    fn uses_ranks(&self) -> bool {
        true
    }
    fn heavy_fraction(&self) -> f64 {
        self.delta
    }
    #[inline]
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &self,
        s: &S,
        ranks: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize {
        if self.eta < 1.0 && !bernoulli(rng, self.eta) {
            return ctx.sample(rng);
        }
        let i1 = ctx.sample(rng);
        if ranks.is_heavy(s, i1, rng) {
            ctx.sample(rng)
        } else {
            i1
        }
    }
}

/// Which test a thinning rule applies to its first sample.
#[derive(Clone, Copy, Debug)]
pub enum Accept {
    /// `x <= f` (absolute threshold).
    AtMost(f64),
    /// `x < W/n` (strict) or `x <= W/n`.
    BelowAverage {
        /// Strict comparison.
        strict: bool,
    },
}

/// Two-thinning: sample `i1`, keep it if accepted, else place the ball at a fresh sample.
#[derive(Clone, Copy, Debug)]
pub struct Thinning {
    /// Acceptance test for the first sample.
    pub accept: Accept,
}

impl Rule for Thinning {
    #[inline]
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize {
        let i1 = ctx.sample(rng);
        let ok = match self.accept {
            Accept::AtMost(f) => s.at_most(i1, f),
            Accept::BelowAverage { strict } => s.below_average(i1, strict),
        };
        if ok {
            i1
        } else {
            ctx.sample(rng)
        }
    }
}
