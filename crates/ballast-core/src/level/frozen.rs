//! Batches of a rule without a batch law: every decision of the batch on the frozen sorted
//! view, the balls applied at the batch end (`docs/level-engine.md#batches-ball-by-ball`).
//!
//! The batched setting freezes the loads for all decisions of a batch. A rule that reads only
//! loads of uniform samples (and W/n, t, n) decides the same way on the sorted view as on the
//! bins, and a uniform position is a uniform bin; so drawing every decision of the batch on
//! the frozen histogram, then moving each chosen position's bin up by the balls it received,
//! has the law of the bin engine's batch. Two decisions that draw the same position hit the
//! same bin, as two decisions that draw the same bin do. Cost: the rule's per-ball work plus
//! O(distinct positions) per batch, with the level engine's O(levels) memory.

use rand::RngCore;

use crate::histogram::LevelLoads;
use crate::loads::LoadState;
use crate::observe::GapTracker;
use crate::process::{Ctx, Ranks, Rule};
use crate::{Observer, RunOutcome, RunSpec, Stop};

/// Runs batches of `b` balls of `rule` on `st` (the rule reads loads, W/n and `t` only).
pub(super) fn batched<P: Rule, R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    b: u64,
    mut st: LevelLoads,
    mut rule: P,
    rng: &mut R,
    observer: &mut O,
) -> RunOutcome {
    let mut ctx = Ctx::new(st.n());
    let mut gaps = GapTracker::new(spec);
    let finish = spec.stop == Stop::Finish;
    let (m, mut done) = (spec.m, 0u64);
    // (position in the frozen sorted view, balls) of this batch's steps.
    let mut pending: Vec<(u64, u64)> = Vec::new();
    while done < m {
        let size = b.min(m - done);
        pending.clear();
        let mut placed = 0u64;
        while placed < size || (finish && rule.in_round()) {
            ctx.balls = done;
            let p = rule.place(&st, &Ranks::Unused, rng, &mut ctx);
            // A multi-ball step is cut at the batch end unless the stop rule finishes it,
            // as on the bin engine.
            let k = if finish { u64::from(p.balls) } else { u64::from(p.balls).min(size - placed) };
            pending.push((p.bin as u64, k));
            placed += k;
        }
        apply(&mut st, &mut pending, observer);
        done += placed;
        gaps.observe(&st, observer);
    }
    if m == 0 {
        gaps.observe(&st, observer);
    }
    gaps.outcome(&st, done, ctx.samples)
}

/// Moves each chosen bin from its frozen load up by the balls it received: positions read on
/// the frozen view first, then one bump per ball (each finds a bin at its level: the
/// distinct positions of a level are distinct bins of it, and a bin's own bumps pass through
/// levels it has just entered).
fn apply<O: Observer>(st: &mut LevelLoads, pending: &mut [(u64, u64)], observer: &mut O) {
    pending.sort_unstable_by_key(|&(pos, _)| pos);
    let mut moves: Vec<(u64, u64)> = Vec::with_capacity(pending.len());
    for &(pos, k) in pending.iter() {
        match moves.last_mut() {
            Some((last, total)) if *last == pos => *total += k,
            _ => moves.push((pos, k)),
        }
    }
    for (pos, _) in &mut moves {
        *pos = st.load_at(*pos);
    }
    for (x, k) in moves {
        for r in 0..k {
            let at = st.bump_load(x + r);
            observer.on_ball(st, at as usize, 1.0);
        }
    }
}
