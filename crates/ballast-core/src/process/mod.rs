//! The allocation rules (`docs/processes.md`), one small type per process.
//!
//! A rule reads a [`LoadState`] (the current loads in the sequential setting, the frozen
//! loads of the batch start in the batched setting) and returns the bin of the next ball. It
//! never owns randomness: the engine passes `rng` and a [`Ctx`] with the bit buffer and the
//! sample counter.

pub(crate) mod custom;
#[doc(hidden)]
pub mod distinct;
pub(crate) mod kernel;

use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use crate::loads::LoadState;
use crate::rng::{below, bernoulli, Bits};
use crate::sampling::AliasTable;
use crate::TieBreak;

/// Per-run scratch shared by all rules: cheap random words and counters, and the alias
/// table of a non-uniform sampling law ([`crate::sampling`]), borrowed for the run.
#[derive(Clone, Copy, Debug)]
pub struct Ctx<'a> {
    pub(crate) n: u32,
    pub(crate) half: u32,
    pub(crate) has_half: bool,
    pub(crate) bits: Bits,
    /// Bin samples drawn so far.
    pub samples: u64,
    /// Balls the process placed before this step, set by the engines before every call of
    /// [`Rule::place`] (and by the bin engine before a kernel's, [`Rule::run_kernel_steps`]):
    /// in the batched setting the balls before the batch (the decisions
    /// of a batch see the state of its start). Balls of a start state are not counted.
    pub balls: u64,
    /// `None`: uniform samples (the draws of every process before biased sampling).
    pub(crate) alias: Option<&'a AliasTable>,
}

impl<'a> Ctx<'a> {
    /// Context for `n` bins (`1 <= n <= 2^32 − 1`), uniform samples.
    pub fn new(n: usize) -> Self {
        Self {
            n: n as u32,
            half: 0,
            has_half: false,
            bits: Bits::default(),
            samples: 0,
            balls: 0,
            alias: None,
        }
    }

    /// The same context drawing [`Ctx::sample`] from `table` (one per bin), or uniform for
    /// `None`. A biased sample is the uniform sample of [`Ctx::sample`] resolved by the
    /// table ([`AliasTable::resolve`]: one more 64-bit word).
    pub fn with_alias(mut self, table: Option<&'a AliasTable>) -> Self {
        debug_assert!(table.is_none_or(|t| t.len() == self.n as usize));
        self.alias = table;
        self
    }

    /// Whether samples are uniform (no alias table): the kernels' precondition.
    #[inline(always)]
    pub fn is_uniform(&self) -> bool {
        self.alias.is_none()
    }

    /// Number of bins.
    pub fn n(&self) -> usize {
        self.n as usize
    }

    /// One uniform bin. Each 64-bit draw feeds two 32-bit Lemire samples.
    #[inline(always)]
    pub fn sample<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> usize {
        self.samples += 1;
        let i = self.draw(rng);
        match self.alias {
            None => i,
            Some(t) => t.resolve(i, rng),
        }
    }

    /// [`Ctx::sample`] without counting the sample (the kernels count theirs at the end).
    #[inline(always)]
    pub(crate) fn draw<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> usize {
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

    /// [`Ctx::draw`] with the common case first: a pending half, or the low half of a fresh
    /// word, whose Lemire product has a low word of at least `n` is accepted without the
    /// rejection threshold (a division); anything else goes on through [`Ctx::draw`] from
    /// the same state, so the bins and the stream are those of `draw`.
    #[inline(always)]
    pub(crate) fn draw_fast<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> usize {
        let n = u64::from(self.n);
        if self.has_half {
            let m = u64::from(self.half) * n;
            if (m as u32) >= self.n {
                self.has_half = false;
                return (m >> 32) as usize;
            }
        } else {
            let w = rng.next_u64();
            let m = (w & 0xFFFF_FFFF) * n;
            self.half = (w >> 32) as u32;
            self.has_half = true;
            if (m as u32) >= self.n {
                return (m >> 32) as usize;
            }
            if let Some(i) = crate::rng::below_from_word(w as u32, self.n) {
                return i as usize;
            }
        }
        self.draw(rng)
    }

    /// Two uniform bins, uncounted: exactly the bins of two calls of [`Ctx::sample`] (the same
    /// halves, rejections and pending half afterwards). When no half is pending, both come
    /// from one fresh 64-bit word, and a Lemire product whose low word is at least `n` is
    /// accepted without computing the rejection threshold (which needs a division): the
    /// common case costs one draw, two multiplications and no data-dependent branch.
    #[inline(always)]
    pub(crate) fn draw_two<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> (usize, usize) {
        if !self.has_half {
            let w = rng.next_u64();
            let n = u64::from(self.n);
            let lo = (w & 0xFFFF_FFFF) * n;
            let hi = (w >> 32) * n;
            if (lo as u32).min(hi as u32) >= self.n {
                return ((lo >> 32) as usize, (hi >> 32) as usize);
            }
            // Possibly a rejection: replay what `sample` does with this word.
            self.half = (w >> 32) as u32;
            self.has_half = true;
            let a = match crate::rng::below_from_word(w as u32, self.n) {
                Some(i) => i as usize,
                None => self.draw(rng),
            };
            return (a, self.draw(rng));
        }
        let a = self.draw_fast(rng);
        (a, self.draw_fast(rng))
    }

    /// Two bins, counted: exactly the bins of two calls of [`Ctx::sample`] (the same halves,
    /// rejections and pending half afterwards). Uniform samples take the common case of
    /// `draw_two` (both from one fresh word, no rejection threshold, no data-dependent
    /// branch); a biased law draws them one by one.
    #[inline(always)]
    pub fn sample_two<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> (usize, usize) {
        if self.alias.is_some() {
            let a = self.sample(rng);
            return (a, self.sample(rng));
        }
        self.samples += 2;
        self.draw_two(rng)
    }

    /// `count` uniform bins, passed to `f` in order: exactly the bins of `count` calls of
    /// [`Ctx::sample`] (the same 32-bit halves, the same rejections, and the same pending
    /// half afterwards), without the per-sample bookkeeping: two samples per 64-bit word in
    /// the common case where neither half is rejected. For loops that throw many balls
    /// without looking at loads (One-Choice re-throws).
    #[inline(always)]
    pub fn sample_each<R: RngCore + ?Sized>(
        &mut self,
        rng: &mut R,
        count: u64,
        mut f: impl FnMut(usize),
    ) {
        if self.alias.is_some() {
            // Biased samples: one at a time through the table.
            for _ in 0..count {
                let i = self.sample(rng);
                f(i);
            }
            return;
        }
        let n = self.n;
        let mut left = count;
        self.samples += count;
        if left == 0 {
            return;
        }
        if self.has_half {
            self.has_half = false;
            if let Some(i) = crate::rng::below_from_word(self.half, n) {
                f(i as usize);
                left -= 1;
            }
        }
        while left >= 2 {
            let w = rng.next_u64();
            let lo = crate::rng::below_from_word(w as u32, n);
            let hi = crate::rng::below_from_word((w >> 32) as u32, n);
            if let (Some(a), Some(b)) = (lo, hi) {
                f(a as usize);
                f(b as usize);
                left -= 2;
            } else {
                // A rejected half is skipped; at least one more sample is wanted after a
                // low half, so the high half is never left pending here.
                for i in [lo, hi].into_iter().flatten() {
                    f(i as usize);
                    left -= 1;
                }
            }
        }
        while left > 0 {
            let w = rng.next_u64();
            if let Some(a) = crate::rng::below_from_word(w as u32, n) {
                f(a as usize);
                self.half = (w >> 32) as u32;
                self.has_half = true;
                left -= 1;
            } else if let Some(b) = crate::rng::below_from_word((w >> 32) as u32, n) {
                f(b as usize);
                left -= 1;
            }
        }
    }

    /// One uniform integer in `0..size` (`1 <= size <= 2^32`), counted as a bin sample (for
    /// processes that sample within a group of bins). Always uniform: the processes that
    /// use it support uniform sampling only.
    #[inline]
    pub fn sample_below<R: RngCore + ?Sized>(&mut self, rng: &mut R, size: u64) -> usize {
        self.samples += 1;
        below(rng, size) as usize
    }

    /// A fair coin consumed only when `cond` holds (see [`Bits::coin_if`]).
    #[inline(always)]
    pub fn coin_if<R: RngCore + ?Sized>(&mut self, cond: bool, rng: &mut R) -> bool {
        self.bits.coin_if(cond, rng)
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

/// Where the balls of one step go: `balls` balls into `bin`. Single-ball processes always
/// return `balls = 1`; multi-ball processes (Twinning, Packing) return more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Receiving bin.
    pub bin: usize,
    /// Number of balls placed there in this step.
    pub balls: u32,
}

impl Placement {
    /// One ball into `bin`.
    #[inline]
    pub fn one(bin: usize) -> Self {
        Self { bin, balls: 1 }
    }
}

/// An allocation rule. Rules may keep state between steps (a cache, for Memory), hence
/// `&mut self`; everything random comes from `rng` and `ctx`.
pub trait Rule {
    /// Whether the engine should record the histogram of samples per step
    /// ([`crate::RunOutcome::samples_per_step`]); a compile-time switch, free when off.
    const TRACK_SAMPLES: bool = false;
    /// Whether the rule asks [`Ranks`] questions (the engine then maintains them).
    fn uses_ranks(&self) -> bool {
        false
    }
    /// Fraction of bins that count as heavy, when [`Rule::uses_ranks`].
    fn heavy_fraction(&self) -> f64 {
        0.0
    }
    /// Whether a multi-ball round that places its balls one call at a time (Tight-Packing)
    /// is unfinished: the next call continues it without a new sample. The engines use it
    /// for [`crate::Stop::Finish`] and to count rounds ([`crate::RunOutcome::steps`]).
    #[inline(always)]
    fn in_round(&self) -> bool {
        false
    }
    /// The bin (and number of balls) of the next step.
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        ranks: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement;
    /// Places `balls` sequential unit balls with a specialised loop (the private module
    /// `kernel`) and returns `true`, or does nothing and returns `false` when the rule has no kernel for
    /// its parameters or the state is not plain unit loads. A kernel makes exactly the
    /// choices of `balls` calls of [`Rule::place`] (each followed by adding the ball) and
    /// consumes the same random numbers; the engine calls it only without a per-ball
    /// observer and between observation points.
    #[inline(always)]
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        _s: &mut S,
        _balls: u64,
        _rng: &mut R,
        _ctx: &mut Ctx,
    ) -> bool {
        false
    }
    /// The kernel entry of the engine, for multi-ball steps too: places whole steps until at
    /// least `balls` balls were placed, each step's balls cut so that no more than `cap`
    /// balls are placed in all (the engine passes the balls left to m, or `u64::MAX` when
    /// [`crate::Stop::Finish`] completes the last step), and returns the balls placed and
    /// the steps taken, or `None` when there is no kernel (nothing placed). Exactly the
    /// steps of [`Rule::place`] in the engine loop, with the same random numbers. The default
    /// runs [`Rule::run_kernel`] (one ball per step).
    #[inline(always)]
    fn run_kernel_steps<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        _cap: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Option<KernelRun> {
        self.run_kernel(s, balls, rng, ctx).then_some(KernelRun { balls, steps: balls })
    }
}

/// What a kernel call placed ([`Rule::run_kernel_steps`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelRun {
    /// Balls placed.
    pub balls: u64,
    /// Steps taken (calls of [`Rule::place`] they stand for).
    pub steps: u64,
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
    match tie {
        TieBreak::Random => least_of_branching(s, d, tie, rng, ctx),
        TieBreak::First => least_of_select(s, d, rng, ctx, |_, _| false),
        TieBreak::LowestIndex => least_of_select(s, d, rng, ctx, |j, best| j < best),
        TieBreak::Position => least_of_select(s, d, rng, ctx, |j, best| j > best),
    }
}

/// [`least_of`] for the deterministic tie rules, branch-free in the loads: each sample
/// replaces the best when it is lighter, or equally light and `wins_tie(sample, best)`. The
/// comparisons of random loads (weighted balls above all) are coin flips to a branch
/// predictor; selects avoid a misprediction per sample. Same samples, same choice.
#[inline(always)]
fn least_of_select<S: LoadState, R: RngCore + ?Sized>(
    s: &S,
    d: u32,
    rng: &mut R,
    ctx: &mut Ctx,
    wins_tie: impl Fn(usize, usize) -> bool,
) -> usize {
    let mut best = ctx.sample(rng);
    let mut best_load = s.load(best);
    for _ in 1..d {
        let j = ctx.sample(rng);
        let lj = s.load(j);
        let take = (lj < best_load) | ((lj == best_load) & wins_tie(j, best));
        best = if take { j } else { best };
        // Re-read rather than select the load: a select of two f64 compiles to a branch.
        best_load = s.load(best);
    }
    best
}

/// The straightforward [`least_of`]: one branch per comparison. Random ties use it (a tie
/// consumes a coin, or a uniform draw among the tied, only when it happens); the tests
/// compare the branch-free form against it for the other rules.
#[doc(hidden)]
#[inline]
pub fn least_of_branching<S: LoadState, R: RngCore + ?Sized>(
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
                    let replace = if ties == 2 { ctx.coin(rng) } else { below(rng, ties) == 0 };
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
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        _s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        Placement::one(ctx.sample(rng))
    }
    #[inline(always)]
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        match s.plain_unit() {
            Some(u) => {
                crate::process::kernel::one_choice(u, balls, rng, ctx);
                true
            }
            None => false,
        }
    }
}

/// d-Choice (Greedy\[d\]): least loaded of `d` samples.
#[derive(Clone, Copy, Debug)]
pub struct DChoice {
    /// Number of samples.
    pub d: u32,
    /// Tie rule among equally loaded samples.
    pub tie: TieBreak,
}

impl Rule for DChoice {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        Placement::one(least_of(s, self.d, self.tie, rng, ctx))
    }
    #[inline(always)]
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        match s.plain_unit() {
            Some(u) if self.d == 3 && self.tie == TieBreak::Random => {
                crate::process::kernel::three_choice(u, balls, rng, ctx);
                true
            }
            _ => false,
        }
    }
}

/// Unfair d-Choice: the ball joins a *most* loaded of `d` uniform samples (the earliest of
/// the tied ones, which for i.i.d. samples has the law of a uniform choice among them). A
/// process of the catalogue whose load profile has a heavy upper tail.
#[derive(Clone, Copy, Debug)]
pub struct UnfairDChoice {
    /// Number of samples.
    pub d: u32,
}

impl Rule for UnfairDChoice {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let mut best = ctx.sample(rng);
        let mut best_load = s.load(best);
        for _ in 1..self.d {
            let j = ctx.sample(rng);
            let lj = s.load(j);
            if lj > best_load {
                best = j;
                best_load = lj;
            }
        }
        Placement::one(best)
    }
}

/// Two-Choice specialised (d = 2): the hot path of the papers.
#[derive(Clone, Copy, Debug)]
pub struct TwoChoice {
    /// Tie rule.
    pub tie: TieBreak,
}

impl Rule for TwoChoice {
    #[inline(always)]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        Placement::one(if self.tie == TieBreak::Random {
            two_random(s, rng, ctx)
        } else {
            least_of(s, 2, self.tie, rng, ctx)
        })
    }
    #[inline(always)]
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        match s.plain_unit() {
            Some(u) if self.tie == TieBreak::Random => {
                crate::process::kernel::two_choice(u, balls, rng, ctx);
                true
            }
            _ => false,
        }
    }
}

/// Two-Choice with random ties, branch-free: the same random stream and the same choices as
/// [`least_of`] with `d = 2` (a tie consumes one coin, the second sample wins on heads).
#[inline(always)]
pub fn two_random<S: LoadState, R: RngCore + ?Sized>(s: &S, rng: &mut R, ctx: &mut Ctx) -> usize {
    let a = ctx.sample(rng);
    let b = ctx.sample(rng);
    let (la, lb) = (s.load(a), s.load(b));
    let eq = lb == la;
    let take_b = (lb < la) | ctx.coin_if(eq, rng);
    if take_b {
        b
    } else {
        a
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
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        Placement::one(if !bernoulli(rng, self.beta) {
            ctx.sample(rng)
        } else if self.tie == TieBreak::Random {
            two_random(s, rng, ctx)
        } else {
            least_of(s, 2, self.tie, rng, ctx)
        })
    }
    #[inline(always)]
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        match s.plain_unit() {
            Some(u) if self.tie == TieBreak::Random => {
                crate::process::kernel::one_plus_beta(u, self.beta, balls, rng, ctx);
                true
            }
            _ => false,
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
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        ranks: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        if self.eta < 1.0 && !bernoulli(rng, self.eta) {
            return Placement::one(ctx.sample(rng));
        }
        let i1 = ctx.sample(rng);
        Placement::one(if ranks.is_heavy(s, i1, rng) { ctx.sample(rng) } else { i1 })
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
    /// `x < W/n + f` (relative threshold).
    BelowAveragePlus(f64),
}

/// Value version 11: two-thinning draws its two samples together ([`Ctx::sample_two`], one
/// random word when no half is pending) and counts the second only when it gets the ball,
/// so that the bin kernel decides without a branch.
pub const THINNING_PAIRS_VERSION: u32 = 11;

/// Whether `spec`'s values changed in value version 11 ([`THINNING_PAIRS_VERSION`]): the
/// two-thinning family (Threshold, Mean-Thinning, Relative-Threshold, `formula_threshold`)
/// and `d_thinning`, which draws its samples in pairs. Checkpoint keys name the version for
/// these runs only, so that other checkpoints stay valid.
pub fn thinning_in_pairs(spec: &crate::RunSpec) -> bool {
    use crate::ProcessSpec as P;
    match &spec.process {
        P::Threshold { .. }
        | P::MeanThinning { .. }
        | P::RelativeThreshold { .. }
        | P::FormulaThreshold { .. } => true,
        P::Custom(c) => c.item().values_version() == THINNING_PAIRS_VERSION,
        _ => false,
    }
}

/// Two-thinning: sample `i1`, keep it if accepted, else place the ball at the second sample
/// `i2` (both drawn together, the second counted only when used: [`THINNING_PAIRS_VERSION`]).
#[derive(Clone, Copy, Debug)]
pub struct Thinning {
    /// Acceptance test for the first sample.
    pub accept: Accept,
}

impl Rule for Thinning {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        // Both samples are drawn (one 64-bit word when no half is pending); the second is
        // counted only when it receives the ball.
        let (i1, i2) = ctx.sample_two(rng);
        let ok = match self.accept {
            Accept::AtMost(f) => s.at_most(i1, f),
            Accept::BelowAverage { strict } => s.below_average(i1, strict),
            Accept::BelowAveragePlus(f) => s.normalized(i1) < f,
        };
        ctx.samples -= u64::from(ok);
        Placement::one(if ok { i1 } else { i2 })
    }
    #[inline(always)]
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        match s.plain_unit() {
            Some(u) => {
                crate::process::kernel::thinning(u, self.accept, balls, rng, ctx);
                true
            }
            None => false,
        }
    }
}

/// Noisy two-sample comparisons (Los & Sauerwald, PODC 2022): two samples, and a rule that
/// sometimes gets the comparison wrong.
#[derive(Clone, Copy, Debug)]
pub enum Noisy {
    /// g-Bounded: if the loads differ by more than `g` the lighter bin gets the ball;
    /// otherwise an adversary gives it to the heavier (exact tie: the second sample).
    GBounded {
        /// Tolerance.
        g: f64,
    },
    /// g-Myopic: if the loads differ by at most `g` a fair coin decides, else the lighter.
    GMyopic {
        /// Tolerance.
        g: f64,
    },
    /// σ-Noisy-Load: compare `x + N(0, σ²)` with fresh noise per sample; the lighter
    /// estimate wins, ties (possible after truncation) to the first sample.
    SigmaNoisyLoad {
        /// Noise standard deviation.
        sigma: f64,
        /// Truncate each estimate towards zero to an integer before comparing (the
        /// authors' program does this).
        truncate: bool,
    },
}

impl Noisy {
    /// A tolerance `g >= 0` (validated) as the largest whole load difference within it:
    /// `⌊g⌋`, saturated. Loads of unit balls are integers, so a difference `k` is within `g`
    /// (`k <= g`) exactly when `k <= ⌊g⌋`: the bin engine's kernels and the level engine's
    /// pair laws decide on it without converting loads to `f64`.
    pub(crate) fn whole_tolerance(g: f64) -> u64 {
        debug_assert!(g >= 0.0, "g is validated >= 0");
        g.floor() as u64
    }
}

impl Rule for Noisy {
    // Inlined into the engine loop, and the decisions are selects rather than branches: the
    // comparisons of two nearly equal random loads are unpredictable. Same random draws in
    // the same order as the straightforward branching form (the g-Myopic coin is drawn only
    // when the loads are within g).
    #[inline(always)]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let i1 = ctx.sample(rng);
        let i2 = ctx.sample(rng);
        Placement::one(crate::process::distinct::PairChoice::choose(self, s, i1, i2, rng, ctx))
    }
    #[inline(always)]
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        match s.plain_unit() {
            Some(u) => {
                crate::process::kernel::noisy(u, *self, balls, rng, ctx);
                true
            }
            None => false,
        }
    }
}

impl crate::process::distinct::PairChoice for Noisy {
    #[inline(always)]
    fn choose<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        i1: usize,
        i2: usize,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize {
        let (x1, x2): (f64, f64) = (s.load(i1).into(), s.load(i2).into());
        let (lt, gt) = (x1 < x2, x1 > x2);
        let first = match *self {
            // Loads more than g apart: the lighter gets the ball; within g the adversary gives
            // it to the heavier (on an exact tie: the second sample).
            Noisy::GBounded { g } => {
                let far = (x1 - x2).abs() > g;
                (far & lt) | (!far & gt)
            }
            // Within g a fair coin decides, else the lighter.
            Noisy::GMyopic { g } => {
                let near = (x1 - x2).abs() <= g;
                let coin = ctx.coin_if(near, rng);
                (near & coin) | (!near & lt)
            }
            Noisy::SigmaNoisyLoad { sigma, truncate } => {
                let z1: f64 = StandardNormal.sample(rng);
                let z2: f64 = StandardNormal.sample(rng);
                let (mut e1, mut e2) = (x1 + sigma * z1, x2 + sigma * z2);
                if truncate {
                    e1 = trunc(e1);
                    e2 = trunc(e2);
                }
                e1 <= e2
            }
        };
        if first {
            i1
        } else {
            i2
        }
    }
}

/// `x.trunc()` for finite `x` up to the sign of zero (which no comparison sees), without the
/// libm call `f64::trunc` compiles to on baseline x86-64 (no SSE4.1 `roundsd`): below 2^52
/// in magnitude the round trip through `i64` truncates exactly, and from 2^52 on every `f64`
/// is an integer already.
#[inline(always)]
pub(crate) fn trunc(x: f64) -> f64 {
    if x.abs() < 4_503_599_627_370_496.0 {
        (x as i64) as f64
    } else {
        x
    }
}

/// `⌈W/n⌉` for unit loads (`W < 2^53`, so the `f64` total is exact).
#[inline]
fn ceil_average<S: LoadState>(s: &S) -> u64 {
    let w = s.total() as u64;
    let n = s.n() as u64;
    w.div_ceil(n)
}

/// Filling processes of Los, Sauerwald and Sylvester ("The Power of Filling in Balanced
/// Allocations"): one sample; an underloaded bin (`x < W/n`; a bin exactly at the average
/// counts as overloaded) receives several balls at once.
#[derive(Clone, Copy, Debug)]
pub enum Filling {
    /// Underloaded: 2 balls, else 1.
    Twinning,
    /// Underloaded: raise the bin to `⌈W/n⌉ + offset` (with offset 1 at least 2 balls), else
    /// 1 ball.
    Packing {
        /// How far above the rounded-up average the bin is filled.
        offset: u32,
    },
}

impl Rule for Filling {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let i = ctx.sample(rng);
        if !s.below_average(i, true) {
            return Placement::one(i);
        }
        let balls = match *self {
            Filling::Twinning => 2,
            Filling::Packing { offset } => {
                let x: f64 = s.load(i).into();
                (ceil_average(s) + u64::from(offset) - x as u64) as u32
            }
        };
        Placement { bin: i, balls }
    }
    #[inline(always)]
    fn run_kernel_steps<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        cap: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Option<KernelRun> {
        let u = s.plain_unit()?;
        Some(crate::process::kernel::filling(u, *self, balls, cap, rng, ctx))
    }
}

/// How many balls Tight-Packing allocates after an underloaded sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TightCount {
    /// As many as Packing would put into the sampled bin: `⌈W/n⌉ + offset − x`.
    AsPacking {
        /// Packing's offset.
        offset: u32,
    },
    /// A fixed number.
    Fixed(u32),
}

/// Tight-Packing (reconstructed, `docs/processes.md#tight_packing`): one sample; overloaded → 1 ball to it;
/// underloaded → a number of balls ([`TightCount`]), each to a currently least loaded bin
/// (water-filling; ties uniformly at random). Only the first ball of a round costs a sample.
#[derive(Clone, Copy, Debug)]
pub struct TightPacking {
    /// Ball-count rule.
    pub count: TightCount,
    /// Balls of the current round still to place.
    remaining: u32,
}

impl TightPacking {
    /// A Tight-Packing rule with the given ball-count rule.
    pub fn new(count: TightCount) -> Self {
        Self { count, remaining: 0 }
    }
}

impl Rule for TightPacking {
    #[inline(always)]
    fn in_round(&self) -> bool {
        self.remaining > 0
    }
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        if self.remaining > 0 {
            self.remaining -= 1;
            return Placement::one(s.least_loaded(rng));
        }
        let i = ctx.sample(rng);
        if !s.below_average(i, true) {
            return Placement::one(i);
        }
        let balls = match self.count {
            TightCount::AsPacking { offset } => {
                let x: f64 = s.load(i).into();
                (ceil_average(s) + u64::from(offset) - x as u64) as u32
            }
            TightCount::Fixed(k) => k.max(1),
        };
        self.remaining = balls - 1;
        Placement::one(s.least_loaded(rng))
    }
    #[inline(always)]
    fn run_kernel_steps<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        cap: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Option<KernelRun> {
        let u = s.unit_with_min_set()?;
        crate::process::kernel::tight_packing(
            u,
            self.count,
            &mut self.remaining,
            balls,
            cap,
            rng,
            ctx,
        )
    }
}

/// What a memory-type rule keeps between balls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CachePolicy {
    /// Mitzenmacher–Prabhakar–Shah (d, k)-memory: the `k` least loaded candidates after
    /// placing (ties uniformly at random).
    LeastLoaded {
        /// Cache size.
        k: u32,
    },
    /// Caching: the bin that just received the ball.
    LastReceiver,
}

/// Memory processes: `d` fresh samples plus the cached bins are the candidates; the ball goes
/// to a least loaded candidate (ties uniformly at random); then the cache is updated.
#[derive(Clone, Debug)]
pub struct Memory {
    /// Fresh samples per ball.
    pub d: u32,
    /// Cache policy.
    pub policy: CachePolicy,
    cache: Vec<usize>,
    candidates: Vec<(usize, f64)>,
}

impl Memory {
    /// A memory rule with an empty cache (the first ball sees only fresh samples).
    pub fn new(d: u32, policy: CachePolicy) -> Self {
        Self { d, policy, cache: Vec::new(), candidates: Vec::new() }
    }
}

impl Memory {
    /// The common case d = 1 with one cached bin ((1, 1)-Memory and Caching) without the
    /// general candidate list: the same law (ties uniformly at random, both when placing and
    /// when choosing what to cache). See [`memory_one_step`].
    #[inline]
    fn place_one_and_one<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> usize {
        let cached = self.cache.first().copied().unwrap_or(usize::MAX);
        let (bin, keep) = if matches!(self.policy, CachePolicy::LastReceiver) {
            memory_one_step::<false, S, R>(cached, s, rng, ctx)
        } else {
            memory_one_step::<true, S, R>(cached, s, rng, ctx)
        };
        self.cache.clear();
        self.cache.push(keep);
        bin
    }
}

/// One step of (1, 1)-Memory (`LEAST = true`: the cache keeps the less loaded of the two
/// candidates after placing, a tie by a fair coin) or of Caching with d = 1 (`LEAST =
/// false`: the cache keeps the receiver). `cached` is the cached bin, `usize::MAX` when the
/// cache is empty. Returns the receiving bin and the bin to cache.
///
/// Branch-free in the loads: the comparisons of two nearly equal random loads are
/// unpredictable, so a branchy version spends most of its time on mispredictions. The random
/// stream is that of the straightforward rule: sample `j`; if the cache holds a bin `c != j`,
/// a coin when `x_c == x_j` (who receives the ball) and, for `LEAST`, a coin when
/// `|x_c − x_j| == 1` (what is cached after placing: the receiver, one ball heavier, then
/// ties the other); the two cases exclude each other, so a step draws at most one coin.
#[inline(always)]
pub fn memory_one_step<const LEAST: bool, S: LoadState, R: RngCore + ?Sized>(
    cached: usize,
    s: &S,
    rng: &mut R,
    ctx: &mut Ctx,
) -> (usize, usize) {
    let j = ctx.sample(rng);
    if cached == usize::MAX {
        return (j, j);
    }
    let c = cached;
    let distinct = c != j;
    // (diff = 0, |diff| = 1, diff > 0, |diff| >= 2) of diff = load(j) − load(c): in integers
    // for unit loads (no conversions on the chain from one ball's cache to the next).
    let (zero, one, positive, two_or_more) = match (s.int_load(j), s.int_load(c)) {
        (Some(a), Some(b)) => {
            let d = a - b;
            (d == 0, d.abs() == 1, d > 0, d.abs() >= 2)
        }
        _ => {
            let (lj, lc): (f64, f64) = (s.load(j).into(), s.load(c).into());
            let d = lj - lc;
            (d == 0.0, d.abs() == 1.0, d > 0.0, d.abs() >= 2.0)
        }
    };
    let tie = distinct & zero;
    let near = distinct & one;
    let coin = ctx.coin_if(if LEAST { tie | near } else { tie }, rng);
    // The cached bin receives the ball when strictly lighter or on a tie with heads.
    let to_cache = distinct & (positive | (tie & coin));
    let (bin, other) = if to_cache { (c, j) } else { (j, c) };
    if !LEAST {
        return (bin, bin);
    }
    // After placing, the receiver (the lighter, or either on a tie) is one ball heavier: it
    // stays the lighter when the loads differed by 2 or more, ties the other when they
    // differed by 1 (coin), and becomes the heavier when they were equal.
    let keep_bin = !distinct | two_or_more | (near & coin);
    (bin, if keep_bin { bin } else { other })
}

/// (1, 1)-Memory (`LEAST = true`) and Caching with d = 1 (`LEAST = false`) as a rule of
/// their own, with the cache in a register-sized field: the engine's choice for these two
/// common cases. Same law and same random stream as [`Memory`] with `d = 1` and one cached
/// bin.
#[derive(Clone, Copy, Debug)]
pub struct MemoryOne<const LEAST: bool> {
    cache: usize,
}

impl<const LEAST: bool> MemoryOne<LEAST> {
    /// An empty cache (the first ball sees only its fresh sample).
    pub fn new() -> Self {
        Self { cache: usize::MAX }
    }
}

impl<const LEAST: bool> Default for MemoryOne<LEAST> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const LEAST: bool> Rule for MemoryOne<LEAST> {
    #[inline(always)]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let (bin, keep) = memory_one_step::<LEAST, S, R>(self.cache, s, rng, ctx);
        self.cache = keep;
        Placement::one(bin)
    }
    #[inline(always)]
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        match s.plain_unit() {
            Some(u) => {
                crate::process::kernel::memory_one::<LEAST, R>(u, &mut self.cache, balls, rng, ctx);
                true
            }
            None => false,
        }
    }
}

impl Rule for Memory {
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        if self.d == 1
            && matches!(self.policy, CachePolicy::LeastLoaded { k: 1 } | CachePolicy::LastReceiver)
        {
            return Placement::one(self.place_one_and_one(s, rng, ctx));
        }
        self.candidates.clear();
        let push = |c: &mut Vec<(usize, f64)>, i: usize| {
            if !c.iter().any(|&(j, _)| j == i) {
                c.push((i, s.load(i).into()));
            }
        };
        for _ in 0..self.d {
            let i = ctx.sample(rng);
            push(&mut self.candidates, i);
        }
        for &i in &self.cache {
            push(&mut self.candidates, i);
        }
        // Shuffle, then a stable sort by load: ties end up in uniformly random order.
        for j in (1..self.candidates.len()).rev() {
            let r = below(rng, j as u64 + 1) as usize;
            self.candidates.swap(j, r);
        }
        self.candidates.sort_by(|a, b| a.1.total_cmp(&b.1));
        let bin = self.candidates[0].0;
        match self.policy {
            CachePolicy::LastReceiver => {
                self.cache.clear();
                self.cache.push(bin);
            }
            CachePolicy::LeastLoaded { k } => {
                // Loads after placing: the receiver gained one ball. Shuffle again before the
                // stable sort, so ties after placing are broken uniformly at random too (the
                // first order put the receiver ahead of everything it tied with).
                self.candidates[0].1 += 1.0;
                for j in (1..self.candidates.len()).rev() {
                    let r = below(rng, j as u64 + 1) as usize;
                    self.candidates.swap(j, r);
                }
                self.candidates.sort_by(|a, b| a.1.total_cmp(&b.1));
                self.cache.clear();
                self.cache.extend(self.candidates.iter().take(k as usize).map(|&(i, _)| i));
            }
        }
        Placement::one(bin)
    }
}

/// Vöcking's Always-Go-Left: the bins are split into `d` contiguous groups of sizes
/// differing by at most one; one sample per group; the ball goes to a least loaded sample,
/// ties to the leftmost group.
#[derive(Clone, Copy, Debug)]
pub struct AlwaysGoLeft {
    /// Number of groups (and samples).
    pub d: u32,
}

impl Rule for AlwaysGoLeft {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let n = s.n() as u64;
        let d = u64::from(self.d);
        let mut best = 0;
        for g in 0..d {
            let lo = g * n / d;
            let hi = (g + 1) * n / d;
            let i = lo as usize + ctx.sample_below(rng, hi - lo);
            if g == 0 || s.load(i) < s.load(best) {
                best = i;
            }
        }
        Placement::one(best)
    }
}

#[cfg(test)]
mod tests {
    use super::{trunc, Ctx};

    /// `Ctx::draw_two` (and `Ctx::draw_fast`) against calls of `Ctx::sample` where Lemire's method rejects
    /// often: n = 3·2^30 rejects a 32-bit word with probability 1/4 (threshold 2^32 mod n =
    /// 2^30) and n = 2^31 + 1 with probability about 1/2. Pairs, the pending half and the
    /// generator must agree after every call; a copy of the fast path that skipped the
    /// rejection step would differ within a few calls.
    #[test]
    fn draw_two_is_two_samples_also_when_words_are_rejected() {
        for n in [3usize << 30, (1usize << 31) + 1, 1000, 1] {
            let (mut a, mut b) = (Ctx::new(n), Ctx::new(n));
            let (mut ra, mut rb) = (crate::sim_rng(5), crate::sim_rng(5));
            let mut rejected = 0;
            for step in 0..20_000 {
                // An odd single sample now and then leaves a half pending (`draw_fast` from
                // either state: after a pair, a half is pending only after a rejection).
                if step % 7 == 3 || step % 11 == 5 {
                    assert_eq!(a.draw_fast(&mut ra), b.sample(&mut rb), "n={n} step {step}");
                }
                let aligned = !a.has_half;
                let pair = a.draw_two(&mut ra);
                let want = (b.sample(&mut rb), b.sample(&mut rb));
                assert_eq!(pair, want, "n={n} step {step}");
                assert!(pair.0 < n && pair.1 < n);
                // The pending half (its value matters only while it is pending).
                assert_eq!(a.has_half, b.has_half);
                assert!(!a.has_half || a.half == b.half);
                // Only an odd number of rejected halves leaves a half pending after a pair
                // that started without one.
                rejected += usize::from(aligned && a.has_half);
            }
            assert_eq!(rand::RngCore::next_u64(&mut ra), rand::RngCore::next_u64(&mut rb));
            // The rejection path was taken where rejection is likely.
            if n > 1000 {
                assert!(rejected > 1000, "n={n}: {rejected}");
            }
        }
    }

    #[test]
    fn trunc_equals_f64_trunc() {
        let big = 4_503_599_627_370_496.0f64; // 2^52
        let mut xs = vec![0.0, -0.0, 0.3, -0.3, 0.999_999, -1.0, 2.5, -2.5, 1e15 + 0.5];
        xs.extend([big - 0.5, big, big + 1.0, -big + 0.5, -big, 2.0 * big, 1e300, -1e300]);
        let mut rng = crate::sim_rng(9);
        for _ in 0..100_000 {
            let u = (rand::RngCore::next_u64(&mut rng) >> 11) as f64 / (1u64 << 53) as f64;
            xs.push((u - 0.5) * 1e6);
        }
        for x in xs {
            // Equal as numbers (−0 == 0): the comparisons of σ-Noisy-Load see only that.
            assert_eq!(trunc(x), x.trunc(), "{x}");
        }
    }
}
