//! Sampled time series of the potentials along a run: [`Recorder`] wraps a [`Potentials`]
//! tracker and records its values every `k` balls or at every observation point (batch ends
//! in the batched setting), into a [`Series`] and/or online [`Drift`] statistics.

use std::fmt::Write as _;

use ballast_core::{LoadState, Observer};

use crate::drift::Drift;
use crate::spec::PotentialSpec;
use crate::track::Potentials;
use crate::Error;

/// When a [`Recorder`] samples the potentials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// After every `k`-th ball (`k >= 1`). In the batched setting the engine applies a batch
    /// ball by ball at its end, so samples inside a batch see the batch partly applied.
    Every(u64),
    /// At every observation point of the engine: batch ends in the batched setting, the
    /// `observe_every` points and the end of the run in the sequential setting.
    Observations,
}

impl Sampling {
    /// Checks `k >= 1`.
    pub fn validate(&self) -> Result<(), Error> {
        match self {
            Self::Every(0) => Err(Error::InvalidSetting {
                field: "sample_every",
                value: "0".into(),
                allowed: "an integer >= 1",
            }),
            _ => Ok(()),
        }
    }
}

/// Recorded samples: the ball index of each sample and the value of every potential.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    specs: Vec<PotentialSpec>,
    balls: Vec<u64>,
    /// Row-major: sample `t` holds `values[t·k .. (t+1)·k]` for `k` potentials.
    values: Vec<f64>,
}

impl Series {
    /// An empty series for `specs`.
    pub fn new(specs: &[PotentialSpec]) -> Self {
        Self { specs: specs.to_vec(), balls: Vec::new(), values: Vec::new() }
    }

    /// The potentials, in column order.
    pub fn specs(&self) -> &[PotentialSpec] {
        &self.specs
    }

    /// Appends a sample (`values` in [`Series::specs`] order).
    ///
    /// # Panics
    /// If `values.len()` differs from the number of potentials.
    pub fn push(&mut self, ball: u64, values: &[f64]) {
        assert_eq!(values.len(), self.specs.len(), "one value per potential");
        self.balls.push(ball);
        self.values.extend_from_slice(values);
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.balls.len()
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.balls.is_empty()
    }

    /// Ball index of every sample (balls allocated so far when it was taken).
    pub fn balls(&self) -> &[u64] {
        &self.balls
    }

    /// Sample `t`: its ball index and the values of all potentials.
    pub fn row(&self, t: usize) -> (u64, &[f64]) {
        let k = self.specs.len();
        (self.balls[t], &self.values[t * k..(t + 1) * k])
    }

    /// The values of potential `p` over time.
    pub fn column(&self, p: usize) -> impl Iterator<Item = f64> + '_ {
        let k = self.specs.len();
        (0..self.balls.len()).map(move |t| self.values[t * k + p])
    }

    /// Tidy CSV: header `ball,potential,value`, one row per sample and potential, the
    /// potential named by its canonical spec text (`hyperbolic:alpha=0.05`, never containing
    /// a comma or quote, so no field needs quoting).
    pub fn to_csv(&self) -> String {
        let mut out = String::from("ball,potential,value\n");
        let names: Vec<String> = self.specs.iter().map(|s| s.to_string()).collect();
        for t in 0..self.len() {
            let (ball, values) = self.row(t);
            for (name, v) in names.iter().zip(values) {
                // Writing into a String cannot fail.
                let _ = writeln!(out, "{ball},{name},{v}");
            }
        }
        out
    }
}

/// An [`Observer`] that tracks potentials and samples them into a [`Series`] and/or
/// [`Drift`] statistics.
///
/// ```
/// use ballast_core::{sim_rng, simulate_observed, ProcessSpec, RunSpec};
/// use ballast_potential::{PotentialSpec, Recorder, Sampling};
///
/// let specs = PotentialSpec::parse_all(["hyperbolic:alpha=0.1", "quadratic"]).unwrap();
/// let mut rec = Recorder::new(&specs, Sampling::Observations).unwrap().with_series();
/// // (1+β) in batches of b = 5n: one sample per batch end.
/// let spec = RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, 100, 10_000).batched(500);
/// simulate_observed(&spec, &mut sim_rng(1), &mut rec).unwrap();
/// let series = rec.series().unwrap();
/// assert_eq!(series.len(), 20);
/// assert_eq!(series.row(19).0, 10_000);
/// assert!(series.to_csv().starts_with("ball,potential,value\n500,hyperbolic:alpha=0.1,"));
/// ```
#[derive(Clone, Debug)]
pub struct Recorder {
    potentials: Potentials,
    sampling: Sampling,
    series: Option<Series>,
    drift: Option<Drift>,
    scratch: Vec<f64>,
    /// Balls seen (the tracker counts them too, but in O(levels)).
    balls: u64,
    /// Samples taken before this many balls are dropped.
    burn_in: u64,
}

impl Recorder {
    /// A recorder of `specs` sampling as `sampling` says; add outputs with
    /// [`Recorder::with_series`] and [`Recorder::with_drift`].
    pub fn new(specs: &[PotentialSpec], sampling: Sampling) -> Result<Self, Error> {
        sampling.validate()?;
        Ok(Self {
            potentials: Potentials::new(specs)?,
            sampling,
            series: None,
            drift: None,
            scratch: Vec::with_capacity(specs.len()),
            balls: 0,
            burn_in: 0,
        })
    }

    /// Also keep every sample in a [`Series`].
    pub fn with_series(mut self) -> Self {
        self.series = Some(Series::new(self.potentials.specs()));
        self
    }

    /// Also accumulate [`Drift`] statistics between consecutive samples, with
    /// `bins_per_decade` level bins per factor 10 (see [`Drift::new`]).
    pub fn with_drift(mut self, bins_per_decade: u32) -> Result<Self, Error> {
        self.drift = Some(Drift::new(self.potentials.specs(), bins_per_decade)?);
        Ok(self)
    }

    /// Drops the samples taken before `balls` balls (for drift statistics of the stationary
    /// regime: the first samples start from empty bins). The tracker still follows every
    /// ball.
    pub fn with_burn_in(mut self, balls: u64) -> Self {
        self.burn_in = balls;
        self
    }

    /// The tracker (current values, work counters).
    pub fn potentials(&self) -> &Potentials {
        &self.potentials
    }

    /// The recorded series, if enabled.
    pub fn series(&self) -> Option<&Series> {
        self.series.as_ref()
    }

    /// The drift statistics, if enabled.
    pub fn drift(&self) -> Option<&Drift> {
        self.drift.as_ref()
    }

    /// The tracker, series and drift statistics.
    pub fn into_parts(self) -> (Potentials, Option<Series>, Option<Drift>) {
        (self.potentials, self.series, self.drift)
    }

    fn sample(&mut self) {
        if self.balls < self.burn_in {
            return;
        }
        self.potentials.values_into(&mut self.scratch);
        let ball = self.balls;
        if let Some(s) = &mut self.series {
            s.push(ball, &self.scratch);
        }
        if let Some(d) = &mut self.drift {
            d.push(ball, &self.scratch);
        }
    }
}

impl Observer for Recorder {
    #[inline]
    fn on_ball<S: LoadState>(&mut self, state: &S, bin: usize, weight: f64) {
        self.potentials.on_ball(state, bin, weight);
        self.balls += 1;
        if let Sampling::Every(k) = self.sampling {
            if self.balls % k == 0 {
                self.sample();
            }
        }
    }

    fn on_observation<S: LoadState>(&mut self, state: &S) {
        self.potentials.on_observation(state);
        if self.sampling == Sampling::Observations {
            self.sample();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_core::{sim_rng, simulate_observed, ProcessSpec, RunSpec};

    #[test]
    fn samples_every_k_balls_after_the_burn_in() {
        let specs = [PotentialSpec::Quadratic, PotentialSpec::Absolute];
        let mut rec = Recorder::new(&specs, Sampling::Every(100))
            .unwrap()
            .with_series()
            .with_burn_in(250)
            .with_drift(10)
            .unwrap();
        let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 10, 1000);
        simulate_observed(&spec, &mut sim_rng(1), &mut rec).unwrap();
        let s = rec.series().unwrap();
        assert_eq!(s.balls(), &[300, 400, 500, 600, 700, 800, 900, 1000]);
        assert_eq!(s.column(1).count(), 8);
        let changes: u64 = rec.drift().unwrap().rows().iter().map(|r| r.samples).sum();
        assert_eq!(changes, 2 * 7, "7 changes per potential");
        let csv = s.to_csv();
        assert_eq!(csv.lines().count(), 1 + 16);
        assert!(csv.lines().nth(2).unwrap().starts_with("300,absolute,"));
        assert!(Recorder::new(&specs, Sampling::Every(0)).is_err());
    }
}
