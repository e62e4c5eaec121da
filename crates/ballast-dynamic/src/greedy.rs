//! Greedy\[d\] on a load slice: `d` uniform samples (with replacement), the ball goes to a least
//! loaded one, ties uniformly at random among the tied samples (counted with multiplicity):
//! the law of `ballast_core::process::least_of` with `TieBreak::Random`. `d = 2` has a
//! branch-free path that always draws the tie coin (same law, different random stream).

use ballast_core::process::Ctx;
use ballast_core::rng::below;
use rand::RngCore;

/// The bin chosen by Greedy\[d\] with random ties on `loads` (`d >= 1`). Samples come from
/// `ctx` (two 32-bit Lemire samples per 64-bit draw) and tie coins from its bit buffer, so
/// the random stream matches the core engines' conventions.
#[inline]
pub fn greedy<R: RngCore + ?Sized>(loads: &[u32], d: u32, rng: &mut R, ctx: &mut Ctx) -> usize {
    if d == 2 {
        return two_choice(loads, rng, ctx);
    }
    let mut best = ctx.sample(rng);
    let mut best_load = loads[best];
    let mut ties = 1u64;
    for _ in 1..d {
        let j = ctx.sample(rng);
        let lj = loads[j];
        if lj < best_load {
            best = j;
            best_load = lj;
            ties = 1;
        } else if lj == best_load {
            ties += 1;
            let replace = if ties == 2 { ctx.coin(rng) } else { below(rng, ties) == 0 };
            if replace {
                best = j;
            }
        }
    }
    best
}

/// [`greedy`] as first written: `d = 2` draws its two samples by two calls of
/// [`Ctx::sample`]. The same bins and stream as [`greedy`] (which takes both from
/// [`Ctx::sample_two`]); the reference loops of the models use it, so that
/// `tests/round_loops.rs` checks the fast path against it.
#[inline]
pub fn greedy_reference<R: RngCore + ?Sized>(
    loads: &[u32],
    d: u32,
    rng: &mut R,
    ctx: &mut Ctx,
) -> usize {
    if d == 2 {
        let i = ctx.sample(rng);
        let j = ctx.sample(rng);
        return pick_second(loads, i, j, rng, ctx);
    }
    greedy(loads, d, rng, ctx)
}

/// [`greedy_reference`] for the reference loops (`straightforward`), else [`greedy`].
#[inline(always)]
pub(crate) fn greedy_for<R: RngCore + ?Sized>(
    straightforward: bool,
    loads: &[u32],
    d: u32,
    rng: &mut R,
    ctx: &mut Ctx,
) -> usize {
    if straightforward {
        greedy_reference(loads, d, rng, ctx)
    } else {
        greedy(loads, d, rng, ctx)
    }
}

/// Greedy\[2\] without data-dependent branches: the second sample wins when it is lighter, or
/// equally loaded and the (always drawn) fair coin says so.
#[inline]
fn two_choice<R: RngCore + ?Sized>(loads: &[u32], rng: &mut R, ctx: &mut Ctx) -> usize {
    let (i, j) = ctx.sample_two(rng);
    pick_second(loads, i, j, rng, ctx)
}

#[inline(always)]
fn pick_second<R: RngCore + ?Sized>(
    loads: &[u32],
    i: usize,
    j: usize,
    rng: &mut R,
    ctx: &mut Ctx,
) -> usize {
    let (li, lj) = (loads[i], loads[j]);
    let coin = ctx.coin(rng);
    let second = (lj < li) | ((lj == li) & coin);
    if second {
        j
    } else {
        i
    }
}
