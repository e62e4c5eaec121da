//! Recovery time: the number of balls a run places until its gap first falls to a target
//! (`docs/metrics.md#recovery-time`). From a bad start ([`crate::Start`]) it measures
//! self-stabilisation directly.
//!
//! The gap is looked at after every ball in the sequential setting (resolution one ball;
//! `observe_every` does not change it) and at every batch end in the batched setting
//! (resolution one batch: a batch's balls become visible together), and once at the start:
//! a start whose gap is already at most the target recovers at 0 balls. A run whose gap
//! never falls to the target within its balls is *censored*: [`simulate_recovery`] returns
//! `None` for it and the caller decides how to report it.
//!
//! Watching every ball costs the level engine its chunked and tight sequential loops (the
//! observer sees single balls, so the engines take their ball-by-ball paths): the law is the
//! same, the values of a seed differ from an unobserved run on the level engine (on the bin
//! engine they are the same, since the kernels consume the generator like the ball loop).

use rand::RngCore;

use crate::loads::LoadState;
use crate::observe::Observer;
use crate::{Error, RunOutcome, RunSpec, Setting};

/// The observer behind [`simulate_recovery`]: `PER_BALL` true for sequential runs (the gap
/// after every ball), false for batched runs (the gap at batch ends).
#[derive(Clone, Debug)]
pub struct Recovery<const PER_BALL: bool> {
    target: f64,
    /// Balls per batch (batched runs) and the run's `m`.
    batch: u64,
    m: u64,
    unit: bool,
    start_total: f64,
    balls: u64,
    batches: u64,
    at: Option<u64>,
}

impl<const PER_BALL: bool> Recovery<PER_BALL> {
    /// Watches for the first time the gap of a run of `spec` is at most `target`.
    pub fn new(spec: &RunSpec, target: f64) -> Self {
        let batch = match spec.setting {
            Setting::Batched { b } => b,
            _ => 1,
        };
        Self {
            target,
            batch,
            m: spec.m,
            unit: matches!(spec.weights, crate::Weights::Unit),
            start_total: 0.0,
            balls: 0,
            batches: 0,
            at: None,
        }
    }

    /// Balls placed until the gap was first at most the target (`None`: not yet).
    pub fn recovered_at(&self) -> Option<u64> {
        self.at
    }

    #[inline]
    fn check<S: LoadState>(&mut self, state: &S, balls: u64) {
        if self.at.is_none() && state.gap() <= self.target {
            self.at = Some(balls);
        }
    }
}

impl<const PER_BALL: bool> Observer for Recovery<PER_BALL> {
    const PER_BALL: bool = PER_BALL;

    #[inline]
    fn on_ball<S: LoadState>(&mut self, state: &S, _bin: usize, _weight: f64) {
        if PER_BALL {
            self.balls += 1;
            self.check(state, self.balls);
        }
    }

    fn on_observation<S: LoadState>(&mut self, state: &S) {
        if !PER_BALL {
            self.batches += 1;
            // Unit balls: the balls added so far, exactly (a batch with the `finish` stop
            // rule may hold more than b); weighted runs place exactly b per batch.
            let balls = if self.unit {
                (state.total() - self.start_total) as u64
            } else {
                self.batches.saturating_mul(self.batch).min(self.m)
            };
            self.check(state, balls);
        }
    }

    fn on_start<S: LoadState>(&mut self, state: &S) {
        self.start_total = state.total();
        self.check(state, 0);
    }
}

/// Runs `spec` (any engine, the sequential or batched setting) and returns its outcome with
/// its recovery time for `target`: the balls placed until the gap was first at most
/// `target`, or `None` when it never was (censored at the run's balls).
///
/// Errors when the spec is invalid, in the delay setting (its runs start from empty bins only,
/// so there is nothing to recover from) or for `equalize` (its loops take no observer).
pub fn simulate_recovery<R: RngCore + ?Sized>(
    spec: &RunSpec,
    rng: &mut R,
    target: f64,
) -> Result<(RunOutcome, Option<u64>), Error> {
    if matches!(spec.setting, Setting::Delay { .. }) || spec.process.reallocates() {
        return Err(Error::Unsupported(
            "recovery time: not in the delay setting (its runs start from empty bins only) or \
             for equalize (its loops take no observer)"
                .into(),
        ));
    }
    if !target.is_finite() {
        return Err(Error::invalid("recovery_target", target, "a finite number"));
    }
    if matches!(spec.setting, Setting::Batched { .. }) {
        let mut obs = Recovery::<false>::new(spec, target);
        let out = crate::simulate_observed(spec, rng, &mut obs)?;
        Ok((out, obs.recovered_at()))
    } else {
        let mut obs = Recovery::<true>::new(spec, target);
        let out = crate::simulate_observed(spec, rng, &mut obs)?;
        Ok((out, obs.recovered_at()))
    }
}
