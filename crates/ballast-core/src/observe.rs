//! Observation, shared by every engine: the [`Observer`] hooks, the observation points of a
//! sequential run ([`Schedule`]), the one tracker of the gap, maximum and minimum at each
//! point over any load store ([`GapTracker`], [`LoadTrajectories`], reading [`Observed`]) and
//! the one place that builds a [`RunOutcome`] ([`GapTracker::into_outcome`]), where the
//! final-load metrics ([`crate::final_metrics`]) are computed.

use crate::final_metrics::{FinalLoads, FinalMetrics};
use crate::loads::LoadState;
use crate::outcome::RunOutcome;
use crate::RunSpec;

/// What the observation layer reads from a load store of any engine: the bin engine's and the
/// level engine's states ([`LoadState`], through the blanket implementation) and the
/// reallocation stores of [`crate::czumaj`].
/// Its levels ([`FinalLoads`]) are those of the final-load metrics.
pub(crate) trait Observed: FinalLoads {
    /// The gap `max − W/n` now, as the store computes it.
    fn current_gap(&self) -> f64;
    /// The largest and the smallest load now.
    fn extremes(&self) -> (f64, f64);
}

impl<S: LoadState> Observed for S {
    #[inline]
    fn current_gap(&self) -> f64 {
        self.gap()
    }
    #[inline]
    fn extremes(&self) -> (f64, f64) {
        self.max_min()
    }
}

impl<S: LoadState> FinalLoads for S {
    fn for_each_level(&self, f: impl FnMut(f64, u64)) {
        LoadState::for_each_level(self, f);
    }
}

/// An engine's counters, handed to [`GapTracker::into_outcome`] with its final store.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Balls allocated.
    pub(crate) balls: u64,
    /// Bin samples drawn.
    pub(crate) samples: u64,
    /// Allocation steps (0 where an engine does not count them).
    pub(crate) steps: u64,
    /// Steps by number of samples (empty unless recorded).
    pub(crate) samples_per_step: Vec<u64>,
    /// Balls that changed bin.
    pub(crate) moved: u64,
}

impl Counters {
    /// Balls and samples only.
    pub(crate) fn of(balls: u64, samples: u64) -> Self {
        Self { balls, samples, ..Self::default() }
    }
}

/// Hooks called by the engines, for instrumentation such as potential functions.
///
/// All methods default to doing nothing; the engine is generic over the observer, so the
/// unit observer `()` costs nothing in the hot loop. Methods are generic over the load state,
/// so one observer works with unit and weighted balls.
pub trait Observer {
    /// Whether [`Observer::on_ball`] does anything. The level engine applies a batch ball by
    /// ball (O(b)) only for observers that set this; otherwise a batch costs O(levels).
    const PER_BALL: bool = true;
    /// After one ball of weight `weight` was added to `bin` (its load in `state` includes the
    /// ball). In the batched setting this is called while the batch is applied at its end.
    #[inline]
    fn on_ball<S: LoadState>(&mut self, _state: &S, _bin: usize, _weight: f64) {}
    /// At every observation point (batch ends; `observe_every` points and the end of a
    /// sequential run), after the gap was recorded.
    #[inline]
    fn on_observation<S: LoadState>(&mut self, _state: &S) {}
    /// Once, before the first ball, with the state the run starts from (its start state,
    /// [`crate::Start`]; empty bins by default).
    #[inline]
    fn on_start<S: LoadState>(&mut self, _state: &S) {}
}

impl Observer for () {
    const PER_BALL: bool = false;
}

/// The observation points of a sequential run of `m` balls: every `observe_every` balls
/// (default `m`), and at `m`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Schedule {
    every: u64,
    next: u64,
    m: u64,
}

impl Schedule {
    /// The points of `spec`.
    pub(crate) fn new(spec: &RunSpec) -> Self {
        let m = spec.m;
        let every = spec.observe_every.unwrap_or(m).max(1);
        Self { every, next: every.min(m), m }
    }

    /// Balls between two points.
    pub(crate) fn every(&self) -> u64 {
        self.every
    }

    /// The next point.
    pub(crate) fn next(&self) -> u64 {
        self.next
    }

    /// After an observation at `done` balls: the next point is the first one past `done`
    /// (or `m`).
    pub(crate) fn advance(&mut self, done: u64) {
        while self.next <= done && self.next < self.m {
            self.next = (self.next + self.every).min(self.m);
        }
    }

    /// Whether `done` balls reach the next point; if so, moves it past `done`.
    pub(crate) fn reached(&mut self, done: u64) -> bool {
        let reached = done >= self.next;
        if reached {
            self.advance(done);
        }
        reached
    }
}

/// Gap bookkeeping at observation points.
pub(crate) struct GapTracker {
    record: bool,
    max_gap: f64,
    trajectory: Vec<f64>,
    count: u64,
    loads: Option<LoadTrajectories>,
}

/// The largest and the smallest load at every observation point
/// ([`RunSpec::record_loads`]).
#[derive(Default)]
pub(crate) struct LoadTrajectories {
    pub(crate) max: Vec<f64>,
    pub(crate) min: Vec<f64>,
}

impl LoadTrajectories {
    /// Empty trajectories when `spec` asks for them, else `None`.
    pub(crate) fn of(spec: &RunSpec) -> Option<Self> {
        spec.record_loads.then(Self::default)
    }

    /// Records one observation.
    #[inline]
    pub(crate) fn push(&mut self, max: f64, min: f64) {
        self.max.push(max);
        self.min.push(min);
    }

    /// Moves the trajectories into `out` (nothing when not recorded).
    pub(crate) fn fill(this: Option<Self>, out: &mut RunOutcome) {
        if let Some(t) = this {
            out.max_trajectory = t.max;
            out.min_trajectory = t.min;
        }
    }
}

impl GapTracker {
    /// No observation yet; the spec's `record_trajectory` keeps the gap of every
    /// observation, its `record_loads` the largest and smallest load.
    pub(crate) fn new(spec: &RunSpec) -> Self {
        Self {
            record: spec.record_trajectory,
            max_gap: 0.0,
            trajectory: Vec::new(),
            count: 0,
            loads: LoadTrajectories::of(spec),
        }
    }

    /// The run's outcome, built here for every engine: the observations, the final store's
    /// gap and extreme loads, the final-load metrics (once, from the store's levels) and the
    /// engine's counters. A run that was never observed (only the reallocation and delay
    /// loops at `m = 0`) reports its end as its one observation, without a trajectory point.
    pub(crate) fn into_outcome<S: Observed + ?Sized>(self, st: &S, c: Counters) -> RunOutcome {
        let (max_load, min_load) = st.extremes();
        let final_gap = st.current_gap();
        let mut out = RunOutcome {
            final_gap,
            max_gap: if self.count == 0 { final_gap } else { self.max_gap },
            trajectory: self.trajectory,
            max_load,
            min_load,
            finals: FinalMetrics::of(st, max_load - final_gap),
            balls: c.balls,
            samples: c.samples,
            observations: self.count.max(1),
            steps: c.steps,
            samples_per_step: c.samples_per_step,
            moved: c.moved,
            ..RunOutcome::default()
        };
        LoadTrajectories::fill(self.loads, &mut out);
        out
    }

    /// [`GapTracker::into_outcome`] with the counters of the engines that count balls and
    /// samples only.
    pub(crate) fn outcome<S: Observed + ?Sized>(
        self,
        st: &S,
        balls: u64,
        samples: u64,
    ) -> RunOutcome {
        self.into_outcome(st, Counters::of(balls, samples))
    }

    /// Records one observation of `st`: its gap, and its extreme loads when asked for.
    pub(crate) fn record<S: Observed + ?Sized>(&mut self, st: &S) {
        let gap = st.current_gap();
        if self.count == 0 || gap > self.max_gap {
            self.max_gap = gap;
        }
        self.count += 1;
        if self.record {
            self.trajectory.push(gap);
        }
        if let Some(t) = &mut self.loads {
            let (max, min) = st.extremes();
            t.push(max, min);
        }
    }

    /// Records one observation and tells the observer.
    pub(crate) fn observe<S: LoadState, O: Observer>(&mut self, state: &S, observer: &mut O) {
        self.record(state);
        observer.on_observation(state);
    }
}

/// Adds one step with `k` samples to the histogram.
#[inline]
pub(crate) fn record_samples(hist: &mut Vec<u64>, k: u64) {
    let k = k as usize;
    if k >= hist.len() {
        hist.resize(k + 1, 0);
    }
    hist[k] += 1;
}
