//! Sequential kernels of the bin engine: specialised loops for the hot processes on plain
//! unit loads, used by the engine between observation points when no observer looks at
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
//! Not done, after trying: drawing the generator's words ahead in blocks of 64 (and
//! handing them out in order, which keeps the stream) cost Two-Choice 13 more instructions
//! a ball (88 instead of 75, counted with `valgrind --tool=cachegrind` at n = 10⁴) for no
//! measurable gain: the loop is bound by its instruction count, not by the generator's
//! latency. A loop specialised to stretches without a pending half kept the generator state
//! in registers but let the compiler turn the selects into branches, which made it slower.
//! Adding `1 − t` to one candidate and `t` to the other instead of selecting the receiving
//! bin avoids the select but costs 80 instructions a ball, and was slower in paired runs.
//! A kernel for d-Choice with any d (selects for the lighter sample and the tie count, a
//! coin on each sample) took 380 instead of 328 instructions a ball at d = 5 and was about
//! 10 % slower than the straightforward loop, so d ≥ 4 keeps the straightforward loop.

use rand::RngCore;
use rand_distr::{Distribution, StandardNormal};

use crate::loads::UnitLoads;
use crate::process::{Ctx, Noisy};
use crate::rng::{below, bernoulli};

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
/// `Noisy::place` (whose `f64` loads are these integers exactly).
pub(crate) fn noisy<R: RngCore + ?Sized>(
    u: &mut UnitLoads,
    rule: Noisy,
    balls: u64,
    rng: &mut R,
    ctx: &mut Ctx,
) {
    match rule {
        Noisy::GBounded { g } => two_sample_loop(u, balls, rng, ctx, |x1, x2, _, _| {
            let far = f64::from(x1.abs_diff(x2)) > g;
            (far & (x1 < x2)) | (!far & (x1 > x2))
        }),
        Noisy::GMyopic { g } => two_sample_loop(u, balls, rng, ctx, |x1, x2, src, bits| {
            let near = f64::from(x1.abs_diff(x2)) <= g;
            let coin = bits.coin_if(near, src);
            (near & coin) | (!near & (x1 < x2))
        }),
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
