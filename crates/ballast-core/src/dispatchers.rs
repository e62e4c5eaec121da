//! Several dispatchers on stale views of the loads (`docs/churn.md#dispatchers`): the
//! loop of a run with [`Dispatchers`], on the bin engine with unit balls.
//!
//! Each of the `k` dispatchers keeps its own copy of the loads (its view). Step `t` (a ball,
//! or a multi-ball step) goes to dispatcher `t mod k` (round robin) or to a uniformly random
//! one; the dispatcher decides
//! with the run's process on its own view, and the ball lands in the true loads. Its view
//! counts the ball at once when `own` is set (it knows what it sent), and every view is
//! refreshed to the true loads before its dispatcher's first ball after every `tau` of its
//! own balls. The gap and every statistic are of the true loads.
//!
//! A refresh replays the balls placed since the view's last refresh from a log of
//! placements (bin, dispatcher), so it costs O(balls since then), O(kτ) amortised per
//! refresh, not O(n); the log keeps the balls since the stalest view's refresh.
//!
//! `k = 1, tau = 1` is the sequential process (the same decisions and random numbers), and
//! `k = 1, own = false` with `tau = b` is the batched setting with batches of `b`
//! (`tests/dispatchers.rs` checks both).

use rand::RngCore;

use crate::churn::{check_rule, start_loads};
use crate::loads::{LoadState, UnitLoads};
use crate::observe::{Counters, GapTracker, Observer, Schedule};
use crate::process::{Ctx, Ranks, Rule};
use crate::rng::below;
use crate::spec::{Assign, Dispatchers};
use crate::with_rule::WithRule;
use crate::{Error, RunOutcome, RunSpec};

/// The dispatcher loop of one run, handed its rule by the router.
pub(crate) struct DispatchLoop<'a, R: ?Sized, O> {
    spec: &'a RunSpec,
    dispatchers: Dispatchers,
    rng: &'a mut R,
    observer: &'a mut O,
}

impl<'a, R: RngCore + ?Sized, O: Observer> DispatchLoop<'a, R, O> {
    /// The loop of `spec` (whose `dispatchers` is `Some`, checked by `RunSpec::validate`).
    pub(crate) fn new(spec: &'a RunSpec, rng: &'a mut R, observer: &'a mut O) -> Self {
        let dispatchers = spec.dispatchers.expect("dispatchers");
        Self { spec, dispatchers, rng, observer }
    }
}

/// The views and the log of placements they are refreshed from.
struct Views {
    views: Vec<UnitLoads>,
    /// Balls of the run each view holds (what its decisions see as `balls`).
    balls: Vec<u64>,
    /// Own balls each dispatcher placed, and the count at which it refreshes next.
    own: Vec<u64>,
    next_refresh: Vec<u64>,
    /// Log position (counted from the run's first ball) up to which each view is refreshed.
    seen: Vec<u64>,
    /// Placements (bin, dispatcher) from ball `base` on.
    log: Vec<(u32, u32)>,
    base: u64,
    tau: u64,
    count_own: bool,
}

impl Views {
    fn new(start: &UnitLoads, d: &Dispatchers) -> Self {
        let k = d.k as usize;
        Self {
            views: (0..k).map(|_| UnitLoads::from_loads(start.loads().to_vec(), false)).collect(),
            balls: vec![0; k],
            own: vec![0; k],
            next_refresh: vec![d.tau; k],
            seen: vec![0; k],
            log: Vec::new(),
            base: 0,
            tau: d.tau,
            count_own: d.own,
        }
    }

    /// Refreshes view `j` if its dispatcher placed `tau` balls since the last refresh.
    fn refresh_if_due(&mut self, j: usize) {
        if self.own[j] < self.next_refresh[j] {
            return;
        }
        while self.next_refresh[j] <= self.own[j] {
            self.next_refresh[j] += self.tau;
        }
        let from = (self.seen[j] - self.base) as usize;
        for &(bin, who) in &self.log[from..] {
            if !(self.count_own && who as usize == j) {
                self.views[j].add(bin as usize, ());
                self.balls[j] += 1;
            }
        }
        self.seen[j] = self.base + self.log.len() as u64;
        self.trim();
    }

    /// Records a ball of dispatcher `j` in bin `bin`.
    fn placed(&mut self, j: usize, bin: usize) {
        self.log.push((bin as u32, j as u32));
        self.own[j] += 1;
        if self.count_own {
            self.views[j].add(bin, ());
            self.balls[j] += 1;
        }
    }

    /// Drops the log entries every view has seen, once they are many.
    fn trim(&mut self) {
        if self.log.len() < 1 << 16 {
            return;
        }
        let low = self.seen.iter().copied().min().unwrap_or(self.base);
        let cut = (low - self.base) as usize;
        if cut * 2 >= self.log.len() {
            self.log.drain(..cut);
            self.base = low;
        }
    }
}

impl<R: RngCore + ?Sized, O: Observer> WithRule for DispatchLoop<'_, R, O> {
    type Out = Result<RunOutcome, Error>;

    fn run<P: Rule>(self, mut rule: P) -> Self::Out {
        check_rule(&rule, "dispatchers")?;
        let Self { spec, dispatchers: d, rng, observer } = self;
        let m = spec.m;
        let mut state = start_loads(spec, rng);
        let mut views = Views::new(&state, &d);
        let mut ctx = Ctx::new(state.n());
        let mut gaps = GapTracker::new(spec);
        let mut points = Schedule::new(spec);
        let k = u64::from(d.k);
        let (mut done, mut steps) = (0u64, 0u64);
        observer.on_start(&state);
        while done < m {
            let j = match d.assign {
                Assign::RoundRobin => (steps % k) as usize,
                Assign::Random if k == 1 => 0,
                Assign::Random => below(rng, k) as usize,
            };
            views.refresh_if_due(j);
            ctx.balls = views.balls[j];
            let p = rule.place(&views.views[j], &Ranks::Unused, rng, &mut ctx);
            steps += 1;
            let balls = u64::from(p.balls).min(m - done);
            for _ in 0..balls {
                state.add(p.bin, ());
                views.placed(j, p.bin);
                observer.on_ball(&state, p.bin, 1.0);
            }
            done += balls;
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
