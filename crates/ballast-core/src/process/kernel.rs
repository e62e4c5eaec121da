//! Sequential kernels of the bin engine: specialised loops for the hot processes on unit
//! loads (plain, or with the minimum set for Tight-Packing), used by the engine between observation points when no observer looks at
//! single balls ([`crate::process::Rule::run_kernel`]).
//!
//! **Same choices, same random numbers.** A kernel consumes the generator exactly as the
//! straightforward loop (`Rule::place`, then adding the ball) does: the same 32-bit halves
//! of the same 64-bit words for the bin samples, the same rejections, the same coin words
//! at the same moments, and it leaves the same pending half and coin bits in the [`Ctx`].
//! So a seed gives the same loads, byte for byte, with or without the kernels, and
//! committed results do not change. `tests/kernels.rs` checks this against the
//! straightforward loop ([`crate::simulate_ball_by_ball`]) and compares laws at tiny n.
//!
//! What a kernel saves: the engine loop's per-ball bookkeeping (multi-ball steps,
//! observation checks, the load state's optional level histogram and minimum set), the
//! sample counter (added once per call), Lemire's rejection threshold (a division, needed
//! only when the low product word is below n: [`Ctx::draw_two`] takes both samples of a
//! fresh word with two multiplications and one test; [`Ctx::draw_fast`] likewise for the
//! single third sample of Three-Choice), re-reading the chosen bin's load, and
//! the branches on load comparisons (Three-Choice above all). The context is copied into a
//! local for the loop, so its pending half and coin bits can stay in registers.
//!
//! Multi-ball steps (Packing, Twinning, Tight-Packing) go through
//! [`crate::process::Rule::run_kernel_steps`]: whole steps until the observation point is
//! reached or passed, the last one cut at m as the engine loop cuts it (or, under
//! [`crate::Stop::Finish`], completed, a Tight-Packing round included), returning the balls
//! and steps placed. The averages the filling and thinning rules compare with (`n·x < W`,
//! `⌈W/n⌉`) are kept as quotient and remainder of `W/n`, updated per ball without a
//! division. (1, 1)-Memory keeps the cached bin's load in a register (the cache holds either
//! the bin just raised or the one just read) and selects with masks: a select of several
//! values compiled to a branch and made that kernel slower than the straightforward loop.
//! Tight-Packing updates the minimum set inline instead of through the load state's cold
//! path; its random accesses (the set, the positions, the loads) remain its cost.
//!
//! Not done, after trying: drawing the generator's words ahead in blocks of 64 (and
//! handing them out in order, which keeps the stream) cost Two-Choice 13 more instructions
//! a ball (88 instead of 75, counted with `valgrind --tool=cachegrind` at n = 10⁴) for no
//! measurable gain: the loop is bound by its instruction count, not by the generator's
//! latency. Reading words ahead for (1+β) (at most as many as the balls left will certainly
//! consume, so the stream is kept), so that its coin's choice between one 32-bit half and
//! two becomes a select instead of a branch that β = 1/2 makes unpredictable, gave the same
//! time: 14.57 against 14.72 ns a ball at n = 10⁴ (`floor --n 10000 --only one_plus_beta
//! --engine bins --reps 5`, one interleaved pair). A second attempt (2026-12-04) kept the
//! block position, the pending half and the coin bits in locals of a loop of its own, with
//! `select_unpredictable` for the choices: 0.14 mispredicts a ball instead of 0.74, but
//! 128 instructions instead of 76 (`valgrind --tool=cachegrind --branch-sim=yes`), 12.6
//! against 12.3 ns at n = 10⁴ and slower at 10⁵ in interleaved pairs. The bin engine's
//! (1+β) stays the branching loop; `auto` runs sequential (1+β) on the level engine, whose
//! ball loop takes whole words per ball (`level/sequential.rs`). A loop specialised to
//! stretches without a pending half kept the generator state in registers but let the
//! compiler turn the selects into branches, which made it slower.
//! Adding `1 − t` to one candidate and `t` to the other instead of selecting the receiving
//! bin avoids the select but costs 80 instructions a ball, and was slower in paired runs.
//! A kernel for d-Choice with any d (selects for the lighter sample and the tie count, a
//! coin on each sample) took 380 instead of 328 instructions a ball at d = 5 and was about
//! 10 % slower than the straightforward loop, so d ≥ 4 keeps the straightforward loop.
//! Two-Thinning without its branch (2026-12-06): the test on the first sample's load decides
//! whether a second half is taken, and mispredicts 0.44 times a ball for Mean-Thinning at
//! n = 10⁴ (`valgrind --tool=cachegrind --branch-sim=yes`). A loop that reads the halves
//! from a block of words drawn ahead (only words the balls left certainly take), looks at the
//! next two halves and moves on by one or two, selecting the bin with
//! `select_unpredictable`, kept the stream bit for bit (`tests/kernels.rs` passed, and failed
//! with the rejection path or the pending half removed by hand) and mispredicted 0.06 times a
//! ball, but took 85 instead of 53 instructions and ran 0.89× the branching loop's time at
//! n = 10⁴ and 1.04× at 10⁵ (`farm-bench`, 5 pairs, m = 10⁸): where the next ball's halves
//! are depends on this ball's load, so every load's latency is on the critical path. So
//! since value version 11 a ball draws both samples as one pair (`Ctx::draw_two`; the
//! second is counted only when it gets the ball), which has no such dependency: 70
//! instructions, about 0 mispredicts, 0.64–0.71× the time at n = 10⁴ and 0.66× at 10⁵
//! (paired runs). `formula_threshold` and `d_thinning` draw their pairs the same way, so
//! they stay equal to the threshold family ball for ball.

use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use crate::loads::UnitLoads;
use crate::process::{Accept, Ctx, Filling, KernelRun, Noisy, TightCount};
use crate::rng::{below, bernoulli};

/// One-Choice: each ball to one uniform bin, two bins per 64-bit word through
/// [`Ctx::sample_each`] (the samples of `balls` calls of [`Ctx::sample`], pending half
/// included), with no per-ball step of the engine loop.
pub(crate) fn one_choice<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    balls: u64,
    rng: &mut R,
    ctx: &mut Ctx,
) {
    let (loads, max, total) = u.kernel_parts();
    let mut mx = *max;
    debug_assert!(ctx.is_uniform(), "kernels draw uniform bins");
    let mut c = *ctx;
    c.sample_each(rng, balls, |i| {
        let l = loads[i] + 1;
        loads[i] = l;
        mx = mx.max(l);
    });
    *ctx = c;
    *max = mx;
    *total += balls;
}

/// Two-Choice with random ties ([`crate::process::two_random`]): the lighter of two
/// samples, on equal loads the second on heads of a coin from the bit buffer.
///
/// The context is copied into a local for the loop (and back at the end), so that its
/// pending half and coin bits can live in registers.
pub(crate) fn two_choice<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    balls: u64,
    rng: &mut R,
    ctx: &mut Ctx,
) {
    let (loads, max, total) = u.kernel_parts();
    let mut mx = *max;
    debug_assert!(ctx.is_uniform(), "kernels draw uniform bins");
    let mut c = *ctx;
    let mut left = balls;
    while left > 0 {
        let (a, b) = c.draw_two(rng);
        let (la, lb) = (loads[a], loads[b]);
        let take_b = (lb < la) | c.bits.coin_if(lb == la, rng);
        let (i, l) = if take_b { (b, lb) } else { (a, la) };
        loads[i] = l + 1;
        mx = mx.max(l + 1);
        left -= 1;
    }
    c.samples += 2 * balls;
    *ctx = c;
    *max = mx;
    *total += balls;
}

/// Three-Choice with random ties, as [`crate::process::least_of_branching`] with d = 3
/// decides, without its branches on loads: the second sample replaces the first when
/// lighter or on a tie with heads; the third replaces the best so far when lighter, on a tie
/// with one earlier sample with heads, and on a three-way tie with probability 1/3 (a
/// uniform draw in 0..3 from the generator, as the straightforward loop takes it). The coin
/// of the second sample is taken before the third sample is drawn, as there.
pub(crate) fn three_choice<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    balls: u64,
    rng: &mut R,
    ctx: &mut Ctx,
) {
    let (loads, max, total) = u.kernel_parts();
    let mut mx = *max;
    debug_assert!(ctx.is_uniform(), "kernels draw uniform bins");
    let mut c = *ctx;
    let mut left = balls;
    while left > 0 {
        let (a, b) = c.draw_two(rng);
        let (la, lb) = (loads[a], loads[b]);
        let eq1 = lb == la;
        let first = (lb < la) | c.bits.coin_if(eq1, rng);
        let (best, best_load) = if first { (b, lb) } else { (a, la) };
        let k = c.draw_fast(rng);
        let lk = loads[k];
        let eq2 = lk == best_load;
        let coin = c.bits.coin_if(eq2 & !eq1, rng);
        // Three equal loads: rare enough for a branch.
        let third = eq2 & eq1 && below(rng, 3) == 0;
        let take_k = (lk < best_load) | coin | third;
        let (i, l) = if take_k { (k, lk) } else { (best, best_load) };
        loads[i] = l + 1;
        mx = mx.max(l + 1);
        left -= 1;
    }
    c.samples += 3 * balls;
    *ctx = c;
    *max = mx;
    *total += balls;
}

/// (1+β) with random ties: a 53-bit Bernoulli(β) draw, then one sample, or two and the
/// Two-Choice decision (a branch on the Bernoulli draw: the two cases consume different
/// numbers of samples).
pub(crate) fn one_plus_beta<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    beta: f64,
    balls: u64,
    rng: &mut R,
    ctx: &mut Ctx,
) {
    let (loads, max, total) = u.kernel_parts();
    let mut mx = *max;
    debug_assert!(ctx.is_uniform(), "kernels draw uniform bins");
    let mut c = *ctx;

    let mut twos = 0u64;
    let mut left = balls;
    while left > 0 {
        let (i, l) = if bernoulli(rng, beta) {
            twos += 1;
            let (a, b) = c.draw_two(rng);
            let (la, lb) = (loads[a], loads[b]);
            let take_b = (lb < la) | c.bits.coin_if(lb == la, rng);
            if take_b {
                (b, lb)
            } else {
                (a, la)
            }
        } else {
            let a = c.draw(rng);
            (a, loads[a])
        };
        loads[i] = l + 1;
        mx = mx.max(l + 1);
        left -= 1;
    }
    c.samples += balls + twos;
    *ctx = c;
    *max = mx;
    *total += balls;
}

/// The noisy comparisons ([`Noisy`]) on integer loads: the same decisions as
/// `Noisy::place` (whose `f64` loads are these integers exactly). g-Bounded and g-Myopic
/// compare the integer difference `k = |x1 − x2|` with `⌊g⌋` ([`Noisy::whole_tolerance`]): no
/// conversion to `f64` per ball.
pub(crate) fn noisy<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    rule: Noisy,
    balls: u64,
    rng: &mut R,
    ctx: &mut Ctx,
) {
    match rule {
        Noisy::GBounded { g } => {
            let g = tolerance(g);
            two_sample_loop(u, balls, rng, ctx, |x1, x2, _, _| {
                let far = x1.abs_diff(x2) > g;
                (far & (x1 < x2)) | (!far & (x1 > x2))
            })
        }
        Noisy::GMyopic { g } => {
            let g = tolerance(g);
            two_sample_loop(u, balls, rng, ctx, |x1, x2, src, bits| {
                let near = x1.abs_diff(x2) <= g;
                let coin = bits.coin_if(near, src);
                (near & coin) | (!near & (x1 < x2))
            })
        }
        Noisy::SigmaNoisyLoad { sigma, truncate } => {
            two_sample_loop(u, balls, rng, ctx, |x1, x2, src, _| {
                let z1: f64 = StandardNormal.sample(src);
                let z2: f64 = StandardNormal.sample(src);
                let (mut e1, mut e2) = (f64::from(x1) + sigma * z1, f64::from(x2) + sigma * z2);
                if truncate {
                    e1 = crate::process::trunc(e1);
                    e2 = crate::process::trunc(e2);
                }
                e1 <= e2
            })
        }
    }
}

/// [`Noisy::whole_tolerance`] for `u32` loads (saturated at `u32::MAX`).
#[inline]
fn tolerance(g: f64) -> u32 {
    u32::try_from(Noisy::whole_tolerance(g)).unwrap_or(u32::MAX)
}

/// Two samples per ball; `first(x1, x2, rng, coins)` says whether the first gets the ball.
#[inline(always)]
fn two_sample_loop<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    balls: u64,
    rng: &mut R,
    ctx: &mut Ctx,
    mut first: impl FnMut(u32, u32, &mut R, &mut crate::rng::Bits) -> bool,
) {
    let (loads, max, total) = u.kernel_parts();
    let mut mx = *max;
    debug_assert!(ctx.is_uniform(), "kernels draw uniform bins");
    let mut c = *ctx;

    let mut left = balls;
    while left > 0 {
        let (a, b) = c.draw_two(rng);
        let (la, lb) = (loads[a], loads[b]);
        let f = first(la, lb, rng, &mut c.bits);
        let (i, l) = if f { (a, la) } else { (b, lb) };
        loads[i] = l + 1;
        mx = mx.max(l + 1);
        left -= 1;
    }
    c.samples += 2 * balls;
    *ctx = c;
    *max = mx;
    *total += balls;
}

/// The average `W/n` of unit loads as quotient and remainder, kept up to date ball by ball
/// without a division (one only when a multi-ball step passes a multiple of n).
#[derive(Clone, Copy, Debug)]
struct Average {
    q: u64,
    r: u64,
    n: u64,
}

impl Average {
    #[inline(always)]
    fn new(total: u64, n: u64) -> Self {
        Self { q: total / n, r: total % n, n }
    }
    /// `⌈W/n⌉`: a load `x` is below the average (`n·x < W`) iff `x < ⌈W/n⌉`.
    #[inline(always)]
    fn ceil(&self) -> u64 {
        self.q + u64::from(self.r != 0)
    }
    /// `⌊W/n⌋`: `n·x <= W` iff `x <= ⌊W/n⌋`.
    #[inline(always)]
    fn floor(&self) -> u64 {
        self.q
    }
    #[inline(always)]
    fn add_one(&mut self) {
        let r = self.r + 1;
        let wrap = r == self.n;
        self.r = if wrap { 0 } else { r };
        self.q += u64::from(wrap);
    }
    #[inline(always)]
    fn add(&mut self, k: u64) {
        self.r += k;
        if self.r >= self.n {
            self.q += self.r / self.n;
            self.r %= self.n;
        }
    }
}

/// The largest integer load `t` with `f64::from(x) <= f` exactly for `x <= t` (−1: none).
fn at_most_limit(f: f64) -> i64 {
    if f.is_nan() || f < 0.0 {
        -1
    } else if f >= f64::from(u32::MAX) {
        i64::MAX
    } else {
        f.floor() as i64
    }
}

/// The bound on `|n·x − W|` under which Relative-Threshold's kernel tests it as an integer.
const DIFF_BOUND: i64 = 1 << 62;

/// Relative-Threshold's test in integers: the `limit` with `gap_unit(x, W, n) < f` exactly
/// when `n·x − W < limit`, for every `d = n·x − W` in `[−2^62, 2^62]` (the result lies in
/// `[−2^62, 2^62 + 1]`). The straightforward test rounds `d` to `f64` and divides by `n`;
/// both roundings never decrease, so the `d` that pass are those below the first that fails.
/// That one is within one step of `⌈f·n⌉` while `|f·n| < 2^52` (the quotient's rounding
/// error times n is at most ½ there); elsewhere it is found by bisection.
pub(crate) fn below_limit(f: f64, n: u64) -> i64 {
    let nf = n as f64;
    // The straightforward test of `loads::gap_unit`, for a difference that fits in i64.
    let passes = |d: i64| (d as f64) / nf < f;
    let fails = |d: i64| d > DIFF_BOUND || !passes(d);
    let guess = (f * nf).ceil();
    if guess.abs() < (1u64 << 52) as f64 {
        let start = guess as i64 - 2;
        if !fails(start) {
            if let Some(d) = (start + 1..=start + 4).find(|&d| fails(d)) {
                return d;
            }
        }
    }
    // The first failing d in [−2^62, 2^62 + 1]: `fails` is false below it, true from it on.
    if fails(-DIFF_BOUND) {
        return -DIFF_BOUND;
    }
    // The range is 2^63 + 1 wide: its ends and middles in i128.
    let (mut lo, mut hi) = (-i128::from(DIFF_BOUND), i128::from(DIFF_BOUND) + 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fails(mid as i64) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi as i64
}

/// Two-Thinning ([`crate::process::Thinning`]): the first sample keeps the ball when its load
/// passes the test, otherwise the second sample of its pair gets it (the two are drawn
/// together since value version 11). The tests in integers where the straightforward rule
/// compares `f64`s or 128-bit products: `x <= f` as `x <= ⌊f⌋`, `n·x < W` as `x < ⌈W/n⌉`,
/// `n·x <= W` as `x <= ⌊W/n⌋`, with the average kept as quotient and remainder;
/// Relative-Threshold's `(n·x − W)/n < f`, which [`crate::loads::gap_unit`] computes in
/// `f64`, as `n·x − W < limit` with the limit from [`below_limit`], while the products fit.
pub(crate) fn thinning<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    accept: Accept,
    balls: u64,
    rng: &mut R,
    ctx: &mut Ctx,
) {
    match accept {
        Accept::AtMost(f) => {
            let t = at_most_limit(f);
            thinning_loop(u, balls, rng, ctx, |x, _, _| i64::from(x) <= t);
        }
        Accept::BelowAverage { strict: true } => {
            thinning_loop(u, balls, rng, ctx, |x, avg, _| u64::from(x) < avg.ceil());
        }
        Accept::BelowAverage { strict: false } => {
            thinning_loop(u, balls, rng, ctx, |x, avg, _| u64::from(x) <= avg.floor());
        }
        Accept::BelowAveragePlus(f) => {
            let n = u.loads().len() as u64;
            let (_, max, total) = u.kernel_parts();
            let top = u128::from(*max) + u128::from(balls);
            let small = u128::from(n) * top <= DIFF_BOUND as u128
                && u128::from(*total) + u128::from(balls) <= DIFF_BOUND as u128;
            if small {
                // n·x − W lies in [−2^62, 2^62] here, where the rule's test is `d < limit`.
                let limit = below_limit(f, n);
                thinning_loop(u, balls, rng, ctx, |x, _, w| {
                    ((n * u64::from(x)) as i64 - w as i64) < limit
                });
            } else {
                thinning_loop(u, balls, rng, ctx, |x, _, w| {
                    crate::loads::gap_unit(u64::from(x), w, n) < f
                });
            }
        }
    }
}

/// Two samples per ball, drawn together; `keep(x, average, W)` says whether the first (with
/// load `x`) keeps the ball, else the second gets it (counted as a sample only then).
#[inline(always)]
fn thinning_loop<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    balls: u64,
    rng: &mut R,
    ctx: &mut Ctx,
    keep: impl Fn(u32, &Average, u64) -> bool,
) {
    let (loads, max, total) = u.kernel_parts();
    let n = loads.len() as u64;
    let mut mx = *max;
    debug_assert!(ctx.is_uniform(), "kernels draw uniform bins");
    let mut c = *ctx;
    let mut w = *total;
    let mut avg = Average::new(w, n);
    let mut seconds = 0u64;
    let mut left = balls;
    while left > 0 {
        let (a, b) = c.draw_two(rng);
        let (la, lb) = (loads[a], loads[b]);
        let kept = keep(la, &avg, w);
        seconds += u64::from(!kept);
        let i = std::hint::select_unpredictable(kept, a, b);
        let l = std::hint::select_unpredictable(kept, la, lb);
        loads[i] = l + 1;
        mx = mx.max(l + 1);
        w += 1;
        avg.add_one();
        left -= 1;
    }
    c.samples += balls + seconds;
    *ctx = c;
    *max = mx;
    *total = w;
}

/// Packing and Twinning ([`Filling`]): one sample per step; a bin below the average
/// (`x < ⌈W/n⌉`) receives `⌈W/n⌉ + offset − x` balls (Packing) or 2 (Twinning), any other
/// one ball. Whole steps until at least `balls` balls were placed, each cut so that at most `cap`
/// are placed in all, as the engine loop cuts them at m.
pub(crate) fn filling<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    rule: Filling,
    balls: u64,
    cap: u64,
    rng: &mut R,
    ctx: &mut Ctx,
) -> KernelRun {
    match rule {
        Filling::Twinning => filling_loop(u, balls, cap, rng, ctx, |_, _| 2),
        Filling::Packing { offset } => {
            // As `Filling::place` computes it, including the cast to the step's u32 count.
            let offset = u64::from(offset);
            filling_loop(u, balls, cap, rng, ctx, move |x, ceil| {
                u64::from((ceil + offset).wrapping_sub(u64::from(x)) as u32)
            })
        }
    }
}

#[inline(always)]
fn filling_loop<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    balls: u64,
    cap: u64,
    rng: &mut R,
    ctx: &mut Ctx,
    under_balls: impl Fn(u32, u64) -> u64,
) -> KernelRun {
    let (loads, max, total) = u.kernel_parts();
    let n = loads.len() as u64;
    let mut mx = *max;
    debug_assert!(ctx.is_uniform(), "kernels draw uniform bins");
    let mut c = *ctx;
    let mut avg = Average::new(*total, n);
    let (mut placed, mut steps) = (0u64, 0u64);
    while placed < balls && placed < cap {
        let i = c.draw_fast(rng);
        let x = loads[i];
        let ceil = avg.ceil();
        let want = if u64::from(x) < ceil { under_balls(x, ceil) } else { 1 };
        let k = want.min(cap - placed);
        let v = x + k as u32;
        loads[i] = v;
        mx = mx.max(v);
        avg.add(k);
        placed += k;
        steps += 1;
    }
    c.samples += steps;
    *ctx = c;
    *max = mx;
    *total += placed;
    KernelRun { balls: placed, steps }
}

/// (1, 1)-Memory (`LEAST = true`) and Caching with d = 1 (`LEAST = false`): the decisions
/// of [`crate::process::memory_one_step`] on integer loads, with the cached bin in a
/// register. `cache` is the rule's cached bin (`usize::MAX`: empty, only before the first
/// ball).
pub(crate) fn memory_one<const LEAST: bool, R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    cache: &mut usize,
    balls: u64,
    rng: &mut R,
    ctx: &mut Ctx,
) {
    let (loads, max, total) = u.kernel_parts();
    let mut mx = *max;
    debug_assert!(ctx.is_uniform(), "kernels draw uniform bins");
    let mut c = *ctx;
    let mut left = balls;
    let mut cached = *cache;
    if cached == usize::MAX && left > 0 {
        // The first ball sees its fresh sample only, and caches it.
        let j = c.draw_fast(rng);
        loads[j] += 1;
        mx = mx.max(loads[j]);
        cached = j;
        left -= 1;
    }
    // The cached bin's load, kept in a register: after a step the cache holds the receiver
    // (its load just raised) or the other candidate (its load just read), so the loop never
    // waits for a load it stored one step earlier.
    let mut lc = if cached == usize::MAX { 0 } else { loads[cached] };
    while left > 0 {
        let j = c.draw_fast(rng);
        let lj = loads[j];
        let distinct = cached != j;
        let d = i64::from(lj) - i64::from(lc);
        let tie = distinct & (d == 0);
        let near = distinct & (d.abs() == 1);
        let coin = c.bits.coin_if(if LEAST { tie | near } else { tie }, rng);
        let to_cache = distinct & ((d > 0) | (tie & coin));
        // Selects by masks: the compiler turns a select of several values into a branch,
        // which the random comparisons mispredict.
        let m = 0usize.wrapping_sub(usize::from(to_cache));
        let m32 = 0u32.wrapping_sub(u32::from(to_cache));
        let (bin, other) = (j ^ ((j ^ cached) & m), cached ^ ((j ^ cached) & m));
        let (l, lo) = (lj ^ ((lj ^ lc) & m32), lc ^ ((lj ^ lc) & m32));
        loads[bin] = l + 1;
        mx = mx.max(l + 1);
        let keep_bin = !LEAST || !distinct | (d.abs() >= 2) | (near & coin);
        let k = 0usize.wrapping_sub(usize::from(keep_bin));
        let k32 = 0u32.wrapping_sub(u32::from(keep_bin));
        cached = other ^ ((other ^ bin) & k);
        lc = lo ^ ((lo ^ (l + 1)) & k32);
        left -= 1;
    }
    c.samples += balls;
    *cache = cached;
    *ctx = c;
    *max = mx;
    *total += balls;
}

/// Tight-Packing ([`crate::process::TightPacking`]): a step samples one bin; an overloaded
/// one (`x >= ⌈W/n⌉`) gets a ball, an underloaded one starts a round of `count` balls, each
/// to a uniformly random bin of the minimum set (`below(len)`, as
/// [`crate::loads::LoadState::least_loaded`] draws it), the first at once. `remaining` is the
/// rule's count of balls of the round still to place (a round may span calls). Places balls
/// until at least `balls` were placed, never more than `cap`; with `cap = u64::MAX` (the
/// engine's [`crate::Stop::Finish`]) also until the round in progress is complete, as the
/// engine loop observes only between rounds then. Returns `None` (nothing placed) when the
/// state has no minimum set.
pub(crate) fn tight_packing<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    count: TightCount,
    remaining: &mut u32,
    balls: u64,
    cap: u64,
    rng: &mut R,
    ctx: &mut Ctx,
) -> Option<KernelRun> {
    let finish = cap == u64::MAX;
    let (loads, max, total, set) = u.kernel_parts_min_set()?;
    let n = loads.len() as u64;
    let mut mx = *max;
    debug_assert!(ctx.is_uniform(), "kernels draw uniform bins");
    let mut c = *ctx;
    let mut avg = Average::new(*total, n);
    let mut rem = *remaining;
    let (mut placed, mut steps) = (0u64, 0u64);
    while placed < cap && (placed < balls || (finish && rem > 0)) {
        let bin = if rem > 0 {
            rem -= 1;
            set.bins[below(rng, set.bins.len() as u64) as usize] as usize
        } else {
            steps += 1;
            let i = c.draw_fast(rng);
            let x = loads[i];
            let ceil = avg.ceil();
            if u64::from(x) < ceil {
                let round = match count {
                    TightCount::AsPacking { offset } => {
                        (ceil + u64::from(offset)).wrapping_sub(u64::from(x)) as u32
                    }
                    TightCount::Fixed(k) => k.max(1),
                };
                rem = round - 1;
                set.bins[below(rng, set.bins.len() as u64) as usize] as usize
            } else {
                i
            }
        };
        let old = loads[bin];
        loads[bin] = old + 1;
        mx = mx.max(old + 1);
        set.raised(bin, old, loads);
        avg.add_one();
        placed += 1;
    }
    c.samples += steps;
    *ctx = c;
    *max = mx;
    *total += placed;
    *remaining = rem;
    Some(KernelRun { balls: placed, steps })
}

#[cfg(test)]
mod tests {
    use super::{below_limit, DIFF_BOUND};
    use crate::loads::gap_unit;

    /// `gap_unit`'s test (Relative-Threshold's `place`) for loads with `n·x − W = d`.
    fn straightforward(d: i64, n: u64, f: f64) -> bool {
        let (x, total) = if d <= 0 {
            (0, d.unsigned_abs())
        } else {
            let x = (d as u64).div_ceil(n);
            (x, x * n - d as u64)
        };
        gap_unit(x, total, n) < f
    }

    /// Every `d` around the limit, and far from it, passes exactly when it is below the
    /// limit: the thresholds where `f·n` is an integer (`f = 0.5`, n even: the boundary is
    /// hit), is not (`1/3`), is tiny, huge (the bisection path) or NaN. With the limit one
    /// higher or lower, the two `d` beside it would disagree.
    #[test]
    fn the_integer_limit_is_the_straightforward_test() {
        let fs = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            1.0 / 3.0,
            -2.0 / 3.0,
            1.5,
            1e-300,
            -1e-300,
            1e-17,
            4503599627370495.5,
            1e15,
            -1e15,
            1e30,
            -1e30,
            f64::MAX,
            f64::MIN,
            f64::NAN,
        ];
        for n in [1u64, 2, 3, 7, 10, 1000, 4096, 99_991, 10_000_000, 1 << 40] {
            for f in fs {
                let limit = below_limit(f, n);
                assert!((-DIFF_BOUND..=DIFF_BOUND + 1).contains(&limit), "{f} {n}");
                let near = (limit.saturating_sub(3)..=limit.saturating_add(3))
                    .filter(|d| (-DIFF_BOUND..=DIFF_BOUND).contains(d));
                let far = [-DIFF_BOUND, -(1 << 53) - 1, -1, 0, 1, 1 << 53, DIFF_BOUND];
                for d in near.chain(far) {
                    assert_eq!(d < limit, straightforward(d, n, f), "f {f}, n {n}, d {d}");
                }
            }
        }
    }
}
