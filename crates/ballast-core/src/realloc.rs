//! Reallocation with at most `r` moved balls per step: `equalize` with `moves = r`
//! (Czumaj–Stemann's reallocation processes, §3, with a budget of moves), on the bin and the
//! level engine.
//!
//! Each step samples `d` bins uniformly (with replacement); among the distinct sampled bins
//! the new ball goes to a least loaded one, then, up to `r` times, while the largest and the
//! smallest of their loads differ by at least 2, one ball moves from a most loaded to a least
//! loaded one (every tie uniformly at random). `r = 0` is Greedy\[d\] with random ties; once
//! `r` covers every move a step can need, the loads of the sampled bins end as even as
//! equalize leaves them, so the histogram has equalize's law (which bin keeps the remainder,
//! and so the number of moved balls, differs). [`RunOutcome::moved`] counts balls that changed
//! bin: the moves (no ball moves twice in a step, as a bin that received a ball never becomes
//! a most loaded one with a spread of 2 or more).
//!
//! The step reads and sets only the loads of the distinct sampled bins, through the store of
//! equalize's loop (`czumaj::run_reallocation`): a load per bin, or the level
//! histogram whose uniform positions are uniform bins (`docs/level-engine.md#reallocation`).

use rand::RngCore;

use crate::czumaj::{run_reallocation, BinStore};
use crate::histogram::LevelLoads;
use crate::kind::Reallocation;
use crate::rng::below;
use crate::{Error, RunOutcome, RunSpec};

/// The reallocation loops ([`Reallocation`]) on the engine the run resolved to; `fast`
/// false asks for the straightforward loops the fast ones are tested against.
pub(crate) struct Loops<'a, R: ?Sized> {
    pub spec: &'a RunSpec,
    pub rng: &'a mut R,
    /// The level engine's store (else a load per bin).
    pub levels: bool,
    pub fast: bool,
}

impl<R: RngCore + ?Sized> Reallocation for Loops<'_, R> {
    type Out = Result<RunOutcome, Error>;
    fn equalize(self, d: u32) -> Self::Out {
        use crate::czumaj::{
            simulate_equalize, simulate_equalize_levels, simulate_equalize_levels_reference,
            simulate_equalize_reference,
        };
        let Self { spec, rng, levels, fast } = self;
        match (levels, fast) {
            (true, true) => simulate_equalize_levels(spec, d, rng),
            (true, false) => simulate_equalize_levels_reference(spec, d, rng),
            (false, true) => simulate_equalize(spec, d, rng),
            (false, false) => simulate_equalize_reference(spec, d, rng),
        }
    }
    fn equalize_moves(self, d: u32, moves: u32) -> Self::Out {
        let Self { spec, rng, levels, .. } = self;
        if levels {
            simulate_equalize_moves_levels(spec, d, moves, rng)
        } else {
            simulate_equalize_moves(spec, d, moves, rng)
        }
    }
}

/// Runs `equalize` with `moves` (at most `moves` old balls moved per step) on the bin engine:
/// a `u64` load per bin.
pub fn simulate_equalize_moves<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    moves: u32,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    let st = BinStore::new(spec.n as usize);
    run_reallocation(spec, d, st, rng, |old, new, rng| step(old, new, moves, None, rng))
}

/// [`simulate_equalize_moves`] on the level engine: the same step on the sorted view of a
/// level histogram ([`LevelLoads`]), the same random numbers.
pub fn simulate_equalize_moves_levels<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    moves: u32,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    let st = LevelLoads::new(spec.n);
    run_reallocation(spec, d, st, rng, |old, new, rng| step(old, new, moves, None, rng))
}

/// Deliberately wrong variants of the step, for the power of its tests.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MovesFlaw {
    /// Moves while the spread is at least 1 (not 2): a ball goes back and forth between
    /// loads q + 1 and q; the right histogram, too many moved balls.
    MovesAtSpreadOne,
    /// The new ball counts as one of the `moves`: at most `moves − 1` old balls move.
    NewBallCounts,
}

/// [`simulate_equalize_moves_levels`] (or on bins, `levels = false`) with a deliberate flaw
/// (tests only).
#[doc(hidden)]
pub fn simulate_equalize_moves_flawed<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    moves: u32,
    levels: bool,
    rng: &mut R,
    flaw: MovesFlaw,
) -> Result<RunOutcome, Error> {
    let f = |old: &[u64], new: &mut [u64], rng: &mut R| step(old, new, moves, Some(flaw), rng);
    if levels {
        run_reallocation(spec, d, LevelLoads::new(spec.n), rng, f)
    } else {
        run_reallocation(spec, d, BinStore::new(spec.n as usize), rng, f)
    }
}

/// One step on the loads `old` of the distinct sampled bins: writes their loads after the
/// step into `new` and returns the number of moved balls.
fn step<R: RngCore + ?Sized>(
    old: &[u64],
    new: &mut [u64],
    moves: u32,
    flaw: Option<MovesFlaw>,
    rng: &mut R,
) -> u64 {
    new.copy_from_slice(old);
    let lightest = extreme(new, false, rng);
    new[lightest] += 1;
    let (budget, spread) = match flaw {
        None => (moves, 2),
        Some(MovesFlaw::MovesAtSpreadOne) => (moves, 1),
        Some(MovesFlaw::NewBallCounts) => (moves.saturating_sub(1), 2),
    };
    let mut moved = 0u64;
    for _ in 0..budget {
        let (lo, hi) = bounds(new);
        if hi - lo < spread {
            break;
        }
        let from = extreme(new, true, rng);
        let to = extreme(new, false, rng);
        new[from] -= 1;
        new[to] += 1;
        moved += 1;
    }
    moved
}

/// The smallest and largest of `loads` (not empty).
fn bounds(loads: &[u64]) -> (u64, u64) {
    loads.iter().fold((u64::MAX, 0), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// The index of a most (`most`) or least loaded entry of `loads`, uniformly at random among
/// the tied ones: one draw per tie after the first, as a reservoir.
fn extreme<R: RngCore + ?Sized>(loads: &[u64], most: bool, rng: &mut R) -> usize {
    let (mut best, mut ties) = (0, 1u64);
    for (j, &x) in loads.iter().enumerate().skip(1) {
        let y = loads[best];
        if (most && x > y) || (!most && x < y) {
            (best, ties) = (j, 1);
        } else if x == y {
            ties += 1;
            if below(rng, ties) == 0 {
                best = j;
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The step on fixed loads: the new ball to the lightest, then moves until the spread is
    /// at most 1 or the budget is spent; conservation; ties drawn uniformly.
    #[test]
    fn step_moves_within_the_budget() {
        let mut rng = crate::rng::sim_rng(5);
        let mut new = [0u64; 3];
        // (old, moves) -> (sorted new, moved)
        let cases: [([u64; 3], u32, [u64; 3], u64); 6] = [
            ([5, 0, 1], 0, [1, 1, 5], 0),
            ([5, 0, 1], 1, [1, 2, 4], 1),
            ([5, 0, 1], 2, [2, 2, 3], 2),
            ([5, 0, 1], 9, [2, 2, 3], 2),
            ([2, 2, 2], 9, [2, 2, 3], 0),
            ([3, 2, 2], 9, [3, 3, 2], 0),
        ];
        for (old, moves, want, want_moved) in cases {
            let moved = step(&old, &mut new, moves, None, &mut rng);
            let (mut got, mut want) = (new, want);
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!((got, moved), (want, want_moved), "{old:?}, moves = {moves}");
        }
        // Ties: the new ball goes to each of two empty bins about half the time.
        let hits = (0..4000)
            .filter(|_| {
                step(&[0, 0, 7], &mut new, 0, None, &mut rng);
                new[0] == 1
            })
            .count();
        assert!((1800..2200).contains(&hits), "{hits} of 4000");
    }

    #[test]
    fn flaws_change_the_step() {
        let mut rng = crate::rng::sim_rng(6);
        let mut new = [0u64; 2];
        // Spread 1 after the new ball: the flaw moves a ball anyway.
        assert_eq!(step(&[1, 1], &mut new, 1, Some(MovesFlaw::MovesAtSpreadOne), &mut rng), 1);
        assert_eq!(step(&[1, 1], &mut new, 1, None, &mut rng), 0);
        // The new ball uses the only move.
        assert_eq!(step(&[4, 0], &mut new, 1, Some(MovesFlaw::NewBallCounts), &mut rng), 0);
        assert_eq!(step(&[4, 0], &mut new, 1, None, &mut rng), 1);
    }
}
