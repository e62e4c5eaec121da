//! Per-round metrics and their time statistics: [`RoundProcess`] (a process, one round at a
//! time), [`RoundMetrics`] (what one round reports),
//! [`Tracker`] (burn-in, time averages, batch means, the max-load distribution) and the
//! resulting [`RunSummary`].
//!
//! **Batch means.** The `R` measured rounds (after the burn-in) are split into `B` consecutive
//! batches, batch `j` holding rounds `⌊jR/B⌋ .. ⌊(j+1)R/B⌋` (sizes differ by at most one). If
//! the batches are much longer than the autocorrelation time, their means are nearly
//! independent, and `sd(batch means)/√B` estimates the standard error of the time average.
//! Two diagnostics say whether that premise holds: the lag-1 autocorrelation of the batch
//! means (near 0 when batches are long enough; clearly positive when the run is too short
//! to mix) and the drift between the first and the second half of the run, in standard
//! errors (`(mean₂ − mean₁) / (2·sd(batch means)/√B)`: a stationary run gives roughly a
//! standard normal).

use rand::Rng;

use crate::Error;

/// What one round reports, observed at the end of the round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RoundMetrics {
    /// Largest load.
    pub max_load: u32,
    /// Total number of balls in the system.
    pub total_load: u64,
    /// Number of empty bins.
    pub empty_bins: u64,
    /// Balls moved in the round: arrivals (leaky bins), re-thrown balls (RBB) or insertions
    /// (infinite Azar), steps (the deletion models). The unit of "ns per ball-round".
    pub moved: u64,
    /// The highest total load at any moment of the run so far, for the overload
    /// (`max load − peak_total/n`). 0 when the model does not track it within a round (the
    /// round processes, whose totals are only read at round ends): [`Tracker`] then takes the
    /// highest round-end total.
    pub peak_total: u64,
}

/// The simulated horizon: `burn_in` rounds that are simulated but not measured, then
/// `rounds` measured rounds split into `batches` batches for the batch-means statistics.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Horizon {
    /// Rounds discarded at the start.
    pub burn_in: u64,
    /// Measured rounds.
    pub rounds: u64,
    /// Number of batches (even, at least 2, at most `rounds`). Default 20.
    pub batches: u32,
}

impl Horizon {
    /// `burn_in` discarded rounds, then `rounds` measured rounds in 20 batches.
    pub fn new(burn_in: u64, rounds: u64) -> Self {
        Self { burn_in, rounds, batches: 20 }
    }

    /// The same horizon with `batches` batches.
    pub fn with_batches(mut self, batches: u32) -> Self {
        self.batches = batches;
        self
    }

    /// Checks that `batches` is even, at least 2 and at most `rounds`.
    pub fn validate(&self) -> Result<(), Error> {
        if self.batches < 2 || self.batches % 2 != 0 {
            return Err(Error::invalid("batches", self.batches, "an even number >= 2"));
        }
        if self.rounds < u64::from(self.batches) {
            return Err(Error::invalid(
                "rounds",
                format!("{} with batches = {}", self.rounds, self.batches),
                "at least `batches` (20 unless set): the measured rounds are cut into that many \
                 batches for the batch-means standard error",
            ));
        }
        Ok(())
    }

    /// Total rounds simulated.
    pub fn total_rounds(&self) -> u64 {
        self.burn_in + self.rounds
    }
}

/// Time statistics of one metric over the measured rounds.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MetricSummary {
    /// Time average over all measured rounds.
    pub mean: f64,
    /// Batch-means standard error of [`MetricSummary::mean`].
    pub stderr: f64,
    /// Mean of each batch, in time order.
    pub batch_means: Vec<f64>,
    /// Time average over the first half of the batches.
    pub first_half: f64,
    /// Time average over the second half of the batches.
    pub second_half: f64,
    /// `(second_half − first_half)` in standard errors of the difference (0 when the batch
    /// means do not vary).
    pub drift_z: f64,
    /// Lag-1 autocorrelation of the batch means (0 when they do not vary).
    pub lag1: f64,
}

impl MetricSummary {
    fn from_batches(total: f64, rounds: u64, batch_sums: &[f64], sizes: &[u64]) -> Self {
        let b = batch_sums.len();
        let batch_means: Vec<f64> =
            batch_sums.iter().zip(sizes).map(|(s, &k)| s / k as f64).collect();
        let mean = total / rounds as f64;
        let bm = batch_means.iter().sum::<f64>() / b as f64;
        let var = batch_means.iter().map(|x| (x - bm).powi(2)).sum::<f64>() / (b - 1) as f64;
        let sd = var.sqrt();
        let stderr = sd / (b as f64).sqrt();
        let half = |r: std::ops::Range<usize>| {
            let s: f64 = batch_sums[r.clone()].iter().sum();
            let k: u64 = sizes[r].iter().sum();
            s / k as f64
        };
        let first_half = half(0..b / 2);
        let second_half = half(b / 2..b);
        let drift_z = if sd > 0.0 {
            (second_half - first_half) / (2.0 * sd / (b as f64).sqrt())
        } else {
            0.0
        };
        let c0: f64 = batch_means.iter().map(|x| (x - bm).powi(2)).sum();
        let c1: f64 = batch_means.windows(2).map(|w| (w[0] - bm) * (w[1] - bm)).sum();
        let lag1 = if c0 > 0.0 { c1 / c0 } else { 0.0 };
        Self { mean, stderr, batch_means, first_half, second_half, drift_z, lag1 }
    }

    /// The same statistics with every value multiplied by `c` (for example `1/n` for
    /// fractions of bins or loads per bin).
    pub fn scaled(&self, c: f64) -> Self {
        Self {
            mean: self.mean * c,
            stderr: self.stderr * c.abs(),
            batch_means: self.batch_means.iter().map(|x| x * c).collect(),
            first_half: self.first_half * c,
            second_half: self.second_half * c,
            drift_z: if c < 0.0 { -self.drift_z } else { self.drift_z },
            lag1: self.lag1,
        }
    }
}

/// The result of one run.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RunSummary {
    /// Number of bins.
    pub n: usize,
    /// The horizon that produced it.
    pub horizon: Horizon,
    /// Max load over the measured rounds.
    pub max_load: MetricSummary,
    /// Total ("system") load over the measured rounds.
    pub total_load: MetricSummary,
    /// Number of empty bins over the measured rounds.
    pub empty_bins: MetricSummary,
    /// Distribution of the max load over the measured rounds: `(load, rounds)` pairs in
    /// increasing load, zero counts omitted.
    pub max_load_distribution: Vec<(u32, u64)>,
    /// Largest max load seen in a measured round.
    pub peak_max_load: u32,
    /// Balls moved over all simulated rounds, burn-in included (see [`RoundMetrics::moved`]).
    pub moved: u64,
    /// The metrics of the last round.
    pub last: RoundMetrics,
    /// Discrepancy `max load − total/n` (max relative to the current average) over the
    /// measured rounds.
    pub discrepancy: MetricSummary,
    /// Overload `max load − peak total/n` (max relative to the highest average so far,
    /// [`RoundMetrics::peak_total`]) over the measured rounds.
    pub overload: MetricSummary,
    /// The rounds (1-based, burn-in included) at whose end the discrepancy reached a new
    /// low, with `n · discrepancy = n · max load − total` then (decreasing): what
    /// [`RunSummary::recovery_round`] reads.
    pub discrepancy_lows: Vec<(u64, i128)>,
}

impl RunSummary {
    /// Fraction of empty bins (the empty-bin statistics divided by `n`).
    pub fn empty_fraction(&self) -> MetricSummary {
        self.empty_bins.scaled(1.0 / self.n as f64)
    }

    /// System load per bin (the total-load statistics divided by `n`).
    pub fn load_per_bin(&self) -> MetricSummary {
        self.total_load.scaled(1.0 / self.n as f64)
    }

    /// The recovery time for `target`: the first round (1-based, burn-in included) at whose
    /// end the discrepancy `max load − total/n` is at most `target`; `None` if no simulated
    /// round reached it.
    pub fn recovery_round(&self, target: f64) -> Option<u64> {
        let n = self.n as f64;
        self.discrepancy_lows.iter().find(|&&(_, e)| e as f64 / n <= target).map(|&(r, _)| r)
    }
}

/// Accumulates [`RoundMetrics`] over a [`Horizon`]: skips the burn-in, sums exactly (integer
/// sums) per batch, and counts the max-load values.
#[derive(Clone, Debug)]
pub struct Tracker {
    n: usize,
    horizon: Horizon,
    seen: u64,
    batch: usize,
    next_boundary: u64,
    /// Per batch: sums of max load, total load, empty bins.
    sums: Vec<[u64; 3]>,
    /// Per batch: sums of `n·max − total` and `n·max − peak` (exact integers; divided by
    /// `n` at the end).
    excess: Vec<[i128; 2]>,
    /// Highest total so far (see [`RoundMetrics::peak_total`]).
    peak: u64,
    sizes: Vec<u64>,
    max_hist: Vec<u64>,
    moved: u64,
    last: RoundMetrics,
    /// See [`RunSummary::discrepancy_lows`].
    lows: Vec<(u64, i128)>,
}

impl Tracker {
    /// A tracker for `n` bins over `horizon` (validated).
    pub fn new(n: usize, horizon: &Horizon) -> Result<Self, Error> {
        horizon.validate()?;
        let b = horizon.batches as usize;
        let mut t = Self {
            n,
            horizon: horizon.clone(),
            seen: 0,
            batch: 0,
            next_boundary: 0,
            sums: vec![[0; 3]; b],
            excess: vec![[0; 2]; b],
            peak: 0,
            sizes: vec![0; b],
            max_hist: Vec::new(),
            moved: 0,
            last: RoundMetrics::default(),
            lows: Vec::new(),
        };
        t.next_boundary = t.boundary(1);
        Ok(t)
    }

    fn boundary(&self, j: usize) -> u64 {
        (u128::from(self.horizon.rounds) * j as u128 / u128::from(self.horizon.batches)) as u64
    }

    /// Records one round.
    #[inline]
    pub fn observe(&mut self, m: &RoundMetrics) {
        self.moved += m.moved;
        self.last = *m;
        self.peak = self.peak.max(m.peak_total).max(m.total_load);
        let t = self.seen;
        self.seen += 1;
        let excess = self.n as i128 * i128::from(m.max_load) - i128::from(m.total_load);
        if self.lows.last().is_none_or(|&(_, low)| excess < low) {
            self.lows.push((self.seen, excess));
        }
        if t < self.horizon.burn_in {
            return;
        }
        let t = t - self.horizon.burn_in;
        debug_assert!(t < self.horizon.rounds, "more rounds than the horizon");
        while t >= self.next_boundary {
            self.batch += 1;
            self.next_boundary = self.boundary(self.batch + 1);
        }
        let s = &mut self.sums[self.batch];
        s[0] += u64::from(m.max_load);
        s[1] += m.total_load;
        s[2] += m.empty_bins;
        let top = self.n as i128 * i128::from(m.max_load);
        let e = &mut self.excess[self.batch];
        e[0] += top - i128::from(m.total_load);
        e[1] += top - i128::from(self.peak);
        self.sizes[self.batch] += 1;
        let l = m.max_load as usize;
        if l >= self.max_hist.len() {
            self.max_hist.resize(l + 1, 0);
        }
        self.max_hist[l] += 1;
    }

    /// Rounds to simulate (burn-in included).
    pub fn total_rounds(&self) -> u64 {
        self.horizon.total_rounds()
    }

    /// Rounds observed so far (burn-in included).
    pub fn seen(&self) -> u64 {
        self.seen
    }

    /// The summary of the measured rounds (`rounds` of them must have been observed).
    pub fn finish(self) -> RunSummary {
        let rounds = self.horizon.rounds;
        let metric = |k: usize| {
            let sums: Vec<f64> = self.sums.iter().map(|s| s[k] as f64).collect();
            let total: u128 = self.sums.iter().map(|s| u128::from(s[k])).sum();
            MetricSummary::from_batches(total as f64, rounds, &sums, &self.sizes)
        };
        let excess = |k: usize| {
            let sums: Vec<f64> = self.excess.iter().map(|s| s[k] as f64).collect();
            let total: i128 = self.excess.iter().map(|s| s[k]).sum();
            MetricSummary::from_batches(total as f64, rounds, &sums, &self.sizes)
                .scaled(1.0 / self.n as f64)
        };
        let max_load_distribution: Vec<(u32, u64)> = self
            .max_hist
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(l, &c)| (l as u32, c))
            .collect();
        let peak_max_load = max_load_distribution.last().map_or(0, |&(l, _)| l);
        RunSummary {
            n: self.n,
            horizon: self.horizon.clone(),
            max_load: metric(0),
            total_load: metric(1),
            empty_bins: metric(2),
            max_load_distribution,
            peak_max_load,
            moved: self.moved,
            last: self.last,
            discrepancy: excess(0),
            overload: excess(1),
            discrepancy_lows: self.lows,
        }
    }
}

/// A round-based process: its state, and one round at a time.
pub trait RoundProcess {
    /// The current loads.
    fn loads(&self) -> &[u32];
    /// Verifies the state's invariants by an O(n) recomputation (for tests).
    fn check_state(&self) -> Result<(), String>;
    /// Simulates one round and reports its end-of-round metrics.
    fn round<R: Rng + ?Sized>(&mut self, rng: &mut R) -> RoundMetrics;
}
