//! Bins that join and leave during a run (`docs/churn.md#churn`): the loop of a
//! sequential run with a [`Churn`] schedule, with unit balls, on the bin engine's loads or on
//! the level engine's histogram ([`ChurnState`]).
//!
//! The present bins are kept in one load vector. At an event (between two steps, once the
//! process has placed the event's number of balls), `leave` bins leave one after the other
//! (chosen as the schedule says; the last bin takes a leaving bin's index, so bin numbers
//! are positions among the present bins, not identities), then `join` bins join at load 0
//! or at `⌈W/n⌉` of the bins present after the leaves, then, if the schedule says so, the
//! leaving bins' balls are placed again one at a time by the process (they are not counted
//! in `m`). Decisions sample uniformly among the bins present, and the gap, the loads and
//! every statistic are over the bins present: `max − W/n` with `W` and `n` of that moment.
//! On the bin engine an event costs O(n) (the state is rebuilt), which is why events are
//! periodic, not per ball; on the level histogram it costs O(levels).

use rand::RngCore;

use std::marker::PhantomData;

use crate::histogram::LevelLoads;
use crate::loads::{LoadState, UnitLoads};
use crate::observe::{Counters, GapTracker, Observer, Schedule};
use crate::process::{Ctx, Ranks, Rule};
use crate::rng::below;
use crate::spec::{Churn, JoinAt, Leaving, LeftBalls};
use crate::with_rule::WithRule;
use crate::{Error, RunOutcome, RunSpec};

/// The churn loop of one run on the state `S` (the bin engine's [`UnitLoads`] or the level
/// engine's [`LevelLoads`]), handed its rule by the router.
pub(crate) struct ChurnLoop<'a, R: ?Sized, O, S> {
    spec: &'a RunSpec,
    churn: Churn,
    rng: &'a mut R,
    observer: &'a mut O,
    state: PhantomData<S>,
}

impl<'a, R: RngCore + ?Sized, O: Observer, S: ChurnState> ChurnLoop<'a, R, O, S> {
    /// The loop of `spec` (whose `churn` is `Some`, checked by `RunSpec::validate`).
    pub(crate) fn new(spec: &'a RunSpec, rng: &'a mut R, observer: &'a mut O) -> Self {
        let churn = spec.churn.expect("a churn schedule");
        Self { spec, churn, rng, observer, state: PhantomData }
    }
}

/// A load state that churn events change: the loads of the bins present.
pub(crate) trait ChurnState: LoadState<Inc = ()> + Sized {
    /// The state a run starts from (the same random numbers as its engine draws).
    fn start<R: RngCore + ?Sized>(spec: &RunSpec, rng: &mut R) -> Self;
    /// The leaves and joins of one event; the state after them and the balls the leaving
    /// bins held.
    fn leave_and_join<R: RngCore + ?Sized>(self, churn: &Churn, rng: &mut R) -> (Self, u64);
}

impl ChurnState for UnitLoads {
    fn start<R: RngCore + ?Sized>(spec: &RunSpec, rng: &mut R) -> Self {
        start_loads(spec, rng)
    }

    fn leave_and_join<R: RngCore + ?Sized>(self, churn: &Churn, rng: &mut R) -> (Self, u64) {
        let mut loads = self.loads().to_vec();
        drop(self);
        let mut removed = 0u64;
        for _ in 0..churn.leave {
            let i = leaving_bin(&loads, churn.leaving, rng);
            removed += u64::from(loads.swap_remove(i));
        }
        let total: u64 = loads.iter().map(|&x| u64::from(x)).sum();
        let join = join_load(churn.join_at, total, loads.len() as u64) as u32;
        loads.resize(loads.len() + churn.join as usize, join);
        (UnitLoads::from_loads(loads, false), removed)
    }
}

/// The exact counterpart on the level histogram: a uniformly random bin is one at a
/// uniformly random position of the sorted view, a heaviest (lightest) one is one of the top
/// (bottom) level; an event costs O(levels), not O(n).
impl ChurnState for LevelLoads {
    fn start<R: RngCore + ?Sized>(spec: &RunSpec, rng: &mut R) -> Self {
        LevelLoads::of_start(&spec.start, spec.n, rng)
    }

    fn leave_and_join<R: RngCore + ?Sized>(self, churn: &Churn, rng: &mut R) -> (Self, u64) {
        let lo = self.min_load();
        let mut counts = self.counts();
        let (mut n, mut total) = (self.bins(), self.balls());
        let mut removed = 0u64;
        for _ in 0..churn.leave {
            let j = match churn.leaving {
                Leaving::Random => {
                    let mut p = below(rng, n);
                    let mut j = 0;
                    while p >= counts[j] {
                        p -= counts[j];
                        j += 1;
                    }
                    j
                }
                Leaving::Heaviest => counts.iter().rposition(|&c| c > 0).expect("a bin"),
                Leaving::Lightest => counts.iter().position(|&c| c > 0).expect("a bin"),
            };
            counts[j] -= 1;
            removed += lo + j as u64;
            (n, total) = (n - 1, total - (lo + j as u64));
        }
        let join = join_load(churn.join_at, total, n);
        // Level counts from min(lo, join) up, with the joining bins added.
        let base = lo.min(join);
        let shift = (lo - base) as usize;
        let top = (lo + counts.len() as u64 - 1).max(join);
        let mut all = vec![0u64; (top - base) as usize + 1];
        all[shift..shift + counts.len()].copy_from_slice(&counts);
        all[(join - base) as usize] += u64::from(churn.join);
        (LevelLoads::from_counts(base, &all), removed)
    }
}

/// The load of a joining bin: 0, or `⌈total/n⌉` of the `n` bins present after the leaves.
fn join_load(at: JoinAt, total: u64, n: u64) -> u64 {
    match at {
        JoinAt::Empty => 0,
        JoinAt::Average => total.div_ceil(n),
    }
}

/// The loads a run starts from, as the bin engine builds them (the same random numbers).
pub(crate) fn start_loads<R: RngCore + ?Sized>(spec: &RunSpec, rng: &mut R) -> UnitLoads {
    let n = spec.n as usize;
    if spec.start.is_empty() {
        UnitLoads::new(n, false)
    } else {
        UnitLoads::from_loads(spec.start.unit_loads(n, rng), false)
    }
}

/// Refuses the rules these loops cannot run (ranks, multi-call rounds), beside the
/// declaration-level checks of `spec::check_dynamic_bins`.
pub(crate) fn check_rule<P: Rule>(rule: &P, what: &str) -> Result<(), Error> {
    if rule.uses_ranks() {
        return Err(Error::Unsupported(format!("{what}: the process reads ranks")));
    }
    Ok(())
}

/// The event times still to come.
struct Events {
    next: u64,
    left: u64,
    every: u64,
}

impl Events {
    fn due(&self, done: u64) -> bool {
        self.left > 0 && done >= self.next
    }

    fn advance(&mut self) {
        self.left -= 1;
        self.next = self.next.saturating_add(self.every);
    }
}

impl<R: RngCore + ?Sized, O: Observer, S: ChurnState> WithRule for ChurnLoop<'_, R, O, S> {
    type Out = Result<RunOutcome, Error>;

    fn run<P: Rule>(self, mut rule: P) -> Self::Out {
        check_rule(&rule, "churn")?;
        let Self { spec, churn, rng, observer, .. } = self;
        let m = spec.m;
        let mut state = S::start(spec, rng);
        let mut ctx = Ctx::new(state.n());
        let mut gaps = GapTracker::new(spec);
        let mut points = Schedule::new(spec);
        let mut events =
            Events { next: churn.first, left: churn.events_before(m), every: churn.every };
        let (mut done, mut steps) = (0u64, 0u64);
        observer.on_start(&state);
        while done < m {
            while events.due(done) {
                state = apply_event(state, &mut rule, &churn, rng, &mut ctx, done, observer);
                events.advance();
            }
            ctx.balls = done;
            let p = rule.place(&state, &Ranks::Unused, rng, &mut ctx);
            steps += 1;
            let k = u64::from(p.balls).min(m - done);
            for _ in 0..k {
                state.add(p.bin, ());
                observer.on_ball(&state, p.bin, 1.0);
            }
            done += k;
            if done >= points.next() {
                gaps.observe(&state, observer);
                points.advance(done);
            }
        }
        if m == 0 {
            gaps.observe(&state, observer);
        }
        let counters = Counters { balls: done, samples: ctx.samples, steps, ..Counters::default() };
        Ok(gaps.into_outcome(&state, counters))
    }
}

/// One event after `done` balls: the leaves, the joins, then the rethrown balls.
fn apply_event<S: ChurnState, P: Rule, R: RngCore + ?Sized, O: Observer>(
    state: S,
    rule: &mut P,
    churn: &Churn,
    rng: &mut R,
    ctx: &mut Ctx,
    done: u64,
    observer: &mut O,
) -> S {
    let (mut state, removed) = state.leave_and_join(churn, rng);
    ctx.n = state.n() as u32;
    if churn.balls == LeftBalls::Rethrown {
        let mut left = removed;
        while left > 0 {
            ctx.balls = done;
            let p = rule.place(&state, &Ranks::Unused, rng, ctx);
            let k = u64::from(p.balls).min(left);
            for _ in 0..k {
                state.add(p.bin, ());
                observer.on_ball(&state, p.bin, 1.0);
            }
            left -= k;
        }
    }
    state
}

/// The index of the bin that leaves: uniform, or a heaviest or lightest one with ties
/// broken uniformly at random (reservoir sampling over the tied bins).
fn leaving_bin<R: RngCore + ?Sized>(loads: &[u32], how: Leaving, rng: &mut R) -> usize {
    let n = loads.len() as u64;
    let better = |x: u32, best: u32| match how {
        Leaving::Heaviest => x > best,
        _ => x < best,
    };
    match how {
        Leaving::Random => below(rng, n) as usize,
        Leaving::Heaviest | Leaving::Lightest => {
            let (mut best, mut ties) = (0usize, 1u64);
            for (i, &x) in loads.iter().enumerate().skip(1) {
                if better(x, loads[best]) {
                    (best, ties) = (i, 1);
                } else if x == loads[best] {
                    ties += 1;
                    if below(rng, ties) == 0 {
                        best = i;
                    }
                }
            }
            best
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::sim_rng;

    #[test]
    fn leaving_bin_takes_an_extreme_uniformly_among_ties() {
        let loads = [3, 1, 3, 0, 3, 0];
        let mut rng = sim_rng(1);
        let mut heavy = [0u32; 6];
        let mut light = [0u32; 6];
        for _ in 0..3000 {
            heavy[leaving_bin(&loads, Leaving::Heaviest, &mut rng)] += 1;
            light[leaving_bin(&loads, Leaving::Lightest, &mut rng)] += 1;
        }
        assert_eq!(heavy[1] + heavy[3] + heavy[5], 0, "{heavy:?}");
        assert_eq!(light[0] + light[1] + light[2] + light[4], 0, "{light:?}");
        // Each of three tied bins about 1000 times (sd ≈ 26): 850..1150 fails with
        // probability below 1e-8.
        for i in [0, 2, 4] {
            assert!((850..1150).contains(&heavy[i]), "{heavy:?}");
        }
        assert!((1350..1650).contains(&light[3]), "{light:?}");
    }
}
