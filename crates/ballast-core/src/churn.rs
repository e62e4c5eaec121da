//! Bins that join and leave during a run (`docs/churn.md#churn`): the loop of a
//! sequential run with a [`Churn`] schedule, on the bin engine with unit balls.
//!
//! The present bins are kept in one load vector. At an event (between two steps, once the
//! process has placed the event's number of balls), `leave` bins leave one after the other
//! (chosen as the schedule says; the last bin takes a leaving bin's index, so bin numbers
//! are positions among the present bins, not identities), then `join` bins join at load 0
//! or at `⌈W/n⌉` of the bins present after the leaves, then, if the schedule says so, the
//! leaving bins' balls are placed again one at a time by the process (they are not counted
//! in `m`). Decisions sample uniformly among the bins present, and the gap, the loads and
//! every statistic are over the bins present: `max − W/n` with `W` and `n` of that moment.
//! An event costs O(n) (the state is rebuilt), which is why events are periodic, not per
//! ball.

use rand::RngCore;

use crate::loads::{LoadState, UnitLoads};
use crate::observe::{GapTracker, Observer, Schedule};
use crate::process::{Ctx, Ranks, Rule};
use crate::rng::below;
use crate::spec::{Churn, JoinAt, Leaving, LeftBalls};
use crate::with_rule::WithRule;
use crate::{Error, RunOutcome, RunSpec};

/// The churn loop of one run, handed its rule by the router.
pub(crate) struct ChurnLoop<'a, R: ?Sized, O> {
    spec: &'a RunSpec,
    churn: Churn,
    rng: &'a mut R,
    observer: &'a mut O,
}

impl<'a, R: RngCore + ?Sized, O: Observer> ChurnLoop<'a, R, O> {
    /// The loop of `spec` (whose `churn` is `Some`, checked by `RunSpec::validate`).
    pub(crate) fn new(spec: &'a RunSpec, rng: &'a mut R, observer: &'a mut O) -> Self {
        let churn = spec.churn.expect("a churn schedule");
        Self { spec, churn, rng, observer }
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

impl<R: RngCore + ?Sized, O: Observer> WithRule for ChurnLoop<'_, R, O> {
    type Out = Result<RunOutcome, Error>;

    fn run<P: Rule>(self, mut rule: P) -> Self::Out {
        check_rule(&rule, "churn")?;
        let Self { spec, churn, rng, observer } = self;
        let m = spec.m;
        let mut state = start_loads(spec, rng);
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
        Ok(gaps.into_outcome(&state, done, ctx.samples, steps, Vec::new()))
    }
}

/// One event after `done` balls: the leaves, the joins, then the rethrown balls.
fn apply_event<P: Rule, R: RngCore + ?Sized, O: Observer>(
    state: UnitLoads,
    rule: &mut P,
    churn: &Churn,
    rng: &mut R,
    ctx: &mut Ctx,
    done: u64,
    observer: &mut O,
) -> UnitLoads {
    let mut loads = state.loads().to_vec();
    drop(state);
    let mut removed = 0u64;
    for _ in 0..churn.leave {
        let i = leaving_bin(&loads, churn.leaving, rng);
        removed += u64::from(loads.swap_remove(i));
    }
    let join_load = match churn.join_at {
        JoinAt::Empty => 0,
        JoinAt::Average => {
            let total: u64 = loads.iter().map(|&x| u64::from(x)).sum();
            total.div_ceil(loads.len() as u64) as u32
        }
    };
    loads.resize(loads.len() + churn.join as usize, join_load);
    ctx.n = loads.len() as u32;
    let mut state = UnitLoads::from_loads(loads, false);
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
