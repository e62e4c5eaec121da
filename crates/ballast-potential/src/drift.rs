//! Drift statistics: the mean change of each potential between consecutive samples,
//! conditional on its level at the earlier sample.
//!
//! The proofs bound `E[Φ^{t+1} − Φ^t | Φ^t]` (per ball, or per batch in the batched
//! setting): typically `≤ −c·Φ^t + C·n` once `Φ^t` is large. [`Drift`] measures it: for each
//! pair of consecutive samples `(t, V_t)`, `(t', V_{t'})` it bins the change `V_{t'} − V_t` by
//! the level `V_t` (bins of `log10`, `bins_per_decade` per factor 10) and keeps count, mean
//! and standard error (Welford), the mean relative change `(V_{t'} − V_t)/V_t`, the change per
//! ball `Σ ΔV / Σ (t' − t)`, and the fractions of increases and decreases. Sampling every
//! ball gives the per-step drift; sampling at batch ends the per-batch drift.
//!
//! Statistics from several runs are combined with [`Drift::merge`] (Chan et al.'s parallel
//! update of mean and variance); merge in run order for bit-reproducible output.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::spec::PotentialSpec;
use crate::Error;

/// Level-bin key of a zero level (the quadratic and absolute potentials start at 0).
const ZERO_BIN: i64 = i64::MIN;

/// Running moments of the changes in one level bin.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Acc {
    count: u64,
    balls: u64,
    mean: f64,
    /// Sum of squared deviations from the mean (Welford's M2).
    m2: f64,
    sum: f64,
    sum_rel: f64,
    up: u64,
    down: u64,
}

impl Acc {
    fn push(&mut self, change: f64, rel: f64, balls: u64) {
        self.count += 1;
        self.balls += balls;
        let delta = change - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (change - self.mean);
        self.sum += change;
        self.sum_rel += rel;
        self.up += u64::from(change > 0.0);
        self.down += u64::from(change < 0.0);
    }

    fn merge(&mut self, o: &Acc) {
        if o.count == 0 {
            return;
        }
        let n = self.count + o.count;
        let delta = o.mean - self.mean;
        self.m2 += o.m2 + delta * delta * (self.count as f64 * o.count as f64 / n as f64);
        self.mean += delta * (o.count as f64 / n as f64);
        self.count = n;
        self.balls += o.balls;
        self.sum += o.sum;
        self.sum_rel += o.sum_rel;
        self.up += o.up;
        self.down += o.down;
    }
}

/// One row of drift statistics: a potential and a level bin.
#[derive(Clone, Debug, PartialEq)]
pub struct DriftRow {
    /// The potential.
    pub potential: PotentialSpec,
    /// Lower end of the level bin (`0` for the zero-level bin).
    pub level_lo: f64,
    /// Upper end of the level bin (`0` for the zero-level bin).
    pub level_hi: f64,
    /// Number of changes (pairs of consecutive samples) starting in this bin.
    pub samples: u64,
    /// Balls spanned by these changes.
    pub balls: u64,
    /// Mean change between consecutive samples.
    pub mean_change: f64,
    /// Standard error of `mean_change` (sample standard deviation / √samples; `NaN` for one
    /// sample).
    pub stderr: f64,
    /// Total change divided by the balls spanned: the drift per ball.
    pub change_per_ball: f64,
    /// Mean of `(V_{t'} − V_t) / V_t` (`NaN` in the zero-level bin).
    pub mean_relative_change: f64,
    /// Fraction of changes that were increases.
    pub frac_up: f64,
    /// Fraction of changes that were decreases.
    pub frac_down: f64,
    /// `+1` or `−1` when the mean change is more than 2 standard errors away from 0 (in
    /// that direction), else `0`.
    pub sign: i8,
}

/// The level bins of one potential.
#[derive(Clone, Debug, Default, PartialEq)]
struct Bins {
    /// Bin key → index into `accs`.
    index: BTreeMap<i64, usize>,
    accs: Vec<Acc>,
    /// The last positive bin used: `(lo, hi, index)`, so that slowly moving levels skip the
    /// logarithm and the map lookup.
    last: Option<(f64, f64, usize)>,
}

impl Bins {
    fn slot(&mut self, key: i64) -> usize {
        let next = self.accs.len();
        let i = *self.index.entry(key).or_insert(next);
        if i == next {
            self.accs.push(Acc::default());
        }
        i
    }

    /// The accumulator of level `v > 0` (bins `[10^{k/b}, 10^{(k+1)/b})`, the bounds being
    /// the definition, so cached and fresh lookups agree).
    fn positive(&mut self, v: f64, b: f64) -> &mut Acc {
        if let Some((lo, hi, i)) = self.last {
            if lo <= v && v < hi {
                return &mut self.accs[i];
            }
        }
        let mut k = (v.log10() * b).floor() as i64;
        if v < bound(k, b) {
            k -= 1;
        } else if v >= bound(k + 1, b) {
            k += 1;
        }
        let i = self.slot(k);
        self.last = Some((bound(k, b), bound(k + 1, b), i));
        &mut self.accs[i]
    }
}

/// Lower end of level bin `k`.
fn bound(k: i64, b: f64) -> f64 {
    10f64.powf(k as f64 / b)
}

/// Drift statistics of several potentials; feed consecutive samples with [`Drift::push`].
#[derive(Clone, Debug, PartialEq)]
pub struct Drift {
    specs: Vec<PotentialSpec>,
    bins_per_decade: u32,
    bins: Vec<Bins>,
    prev: Option<(u64, Vec<f64>)>,
    skipped: u64,
}

impl Drift {
    /// Empty statistics for `specs`, with `bins_per_decade` (1..=1000) level bins per factor
    /// 10: bin `k` holds levels in `[10^{k/b}, 10^{(k+1)/b})`.
    pub fn new(specs: &[PotentialSpec], bins_per_decade: u32) -> Result<Self, Error> {
        if !(1..=1000).contains(&bins_per_decade) {
            return Err(Error::InvalidSetting {
                field: "bins_per_decade",
                value: bins_per_decade.to_string(),
                allowed: "an integer in 1..=1000",
            });
        }
        Ok(Self {
            specs: specs.to_vec(),
            bins_per_decade,
            bins: vec![Bins::default(); specs.len()],
            prev: None,
            skipped: 0,
        })
    }

    /// The potentials.
    pub fn specs(&self) -> &[PotentialSpec] {
        &self.specs
    }

    /// Changes skipped because a level or a change was not finite (an exponential potential
    /// beyond `f64`).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Feeds the sample taken after `ball` balls (values in [`Drift::specs`] order); the
    /// change from the previous sample is recorded under the previous sample's level.
    /// Call [`Drift::end_run`] between runs.
    pub fn push(&mut self, ball: u64, values: &[f64]) {
        assert_eq!(values.len(), self.specs.len(), "one value per potential");
        if let Some((prev_ball, prev)) = &mut self.prev {
            let balls = ball.saturating_sub(*prev_ball);
            let b = f64::from(self.bins_per_decade);
            for ((bins, &v0), &v1) in self.bins.iter_mut().zip(prev.iter()).zip(values) {
                let change = v1 - v0;
                if !(v0.is_finite() && change.is_finite()) || v0 < 0.0 {
                    self.skipped += 1;
                } else if v0 == 0.0 {
                    let i = bins.slot(ZERO_BIN);
                    bins.accs[i].push(change, f64::NAN, balls);
                } else {
                    bins.positive(v0, b).push(change, change / v0, balls);
                }
            }
            *prev_ball = ball;
            prev.clear();
            prev.extend_from_slice(values);
        } else {
            self.prev = Some((ball, values.to_vec()));
        }
    }

    /// Forgets the last sample, so the next [`Drift::push`] starts a new run.
    pub fn end_run(&mut self) {
        self.prev = None;
    }

    /// Adds the statistics of `other` (same potentials and binning).
    ///
    /// # Panics
    /// If the potentials or `bins_per_decade` differ.
    pub fn merge(&mut self, other: &Drift) {
        assert_eq!(self.specs, other.specs, "same potentials");
        assert_eq!(self.bins_per_decade, other.bins_per_decade, "same binning");
        for (mine, theirs) in self.bins.iter_mut().zip(&other.bins) {
            for (&k, &j) in &theirs.index {
                let i = mine.slot(k);
                mine.accs[i].merge(&theirs.accs[j]);
            }
        }
        self.skipped += other.skipped;
    }

    /// One row per potential and non-empty level bin, potentials in order, levels ascending.
    pub fn rows(&self) -> Vec<DriftRow> {
        let b = f64::from(self.bins_per_decade);
        let mut rows = Vec::new();
        for (spec, bins) in self.specs.iter().zip(&self.bins) {
            for (&k, &i) in &bins.index {
                let acc = &bins.accs[i];
                let (lo, hi) =
                    if k == ZERO_BIN { (0.0, 0.0) } else { (bound(k, b), bound(k + 1, b)) };
                let c = acc.count as f64;
                let stderr = if acc.count > 1 { (acc.m2 / (c - 1.0) / c).sqrt() } else { f64::NAN };
                let sign = if acc.count > 1 && acc.mean.abs() > 2.0 * stderr {
                    if acc.mean > 0.0 {
                        1
                    } else {
                        -1
                    }
                } else {
                    0
                };
                rows.push(DriftRow {
                    potential: *spec,
                    level_lo: lo,
                    level_hi: hi,
                    samples: acc.count,
                    balls: acc.balls,
                    mean_change: acc.mean,
                    stderr,
                    change_per_ball: if acc.balls > 0 {
                        acc.sum / acc.balls as f64
                    } else {
                        f64::NAN
                    },
                    mean_relative_change: if k == ZERO_BIN { f64::NAN } else { acc.sum_rel / c },
                    frac_up: acc.up as f64 / c,
                    frac_down: acc.down as f64 / c,
                    sign,
                });
            }
        }
        rows
    }

    /// CSV of [`Drift::rows`], header
    /// `potential,level_lo,level_hi,samples,balls,mean_change,stderr,change_per_ball,mean_relative_change,frac_up,frac_down,sign`
    /// (no field needs quoting).
    pub fn to_csv(&self) -> String {
        let mut out = String::from(
            "potential,level_lo,level_hi,samples,balls,mean_change,stderr,change_per_ball,\
             mean_relative_change,frac_up,frac_down,sign\n",
        );
        for r in self.rows() {
            // Writing into a String cannot fail.
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                r.potential,
                r.level_lo,
                r.level_hi,
                r.samples,
                r.balls,
                r.mean_change,
                r.stderr,
                r.change_per_ball,
                r.mean_relative_change,
                r.frac_up,
                r.frac_down,
                r.sign
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_changes_by_previous_level() {
        let specs = [PotentialSpec::Quadratic];
        let mut d = Drift::new(&specs, 1).unwrap();
        // Levels 0 → 5 → 50 → 20 → 30: changes +5 (zero bin), +45 (bin [1,10)),
        // −30 (bin [10,100)), +10 (bin [10,100)).
        for (t, v) in [(0, 0.0), (1, 5.0), (2, 50.0), (4, 20.0), (5, 30.0)] {
            d.push(t, &[v]);
        }
        let rows = d.rows();
        assert_eq!(rows.len(), 3);
        assert_eq!((rows[0].level_lo, rows[0].samples, rows[0].mean_change), (0.0, 1, 5.0));
        assert_eq!((rows[1].level_lo, rows[1].level_hi), (1.0, 10.0));
        assert_eq!(rows[1].mean_relative_change, 9.0);
        let r = &rows[2];
        assert_eq!((r.level_lo, r.level_hi, r.samples, r.balls), (10.0, 100.0, 2, 3));
        assert_eq!(r.mean_change, -10.0);
        assert_eq!(r.change_per_ball, -20.0 / 3.0);
        assert!((r.stderr - 20.0).abs() < 1e-12); // sd of {−30, 10} = 28.28…, / √2 = 20
        assert_eq!((r.frac_up, r.frac_down, r.sign), (0.5, 0.5, 0));
        assert!(d.to_csv().lines().nth(3).unwrap().starts_with("quadratic,10,100,2,3,-10,"));
    }

    #[test]
    fn cached_bins_agree_with_fresh_lookups() {
        let b = 10u32;
        let values = [1.0, 1.2, 1.25, 1.3, 100.0, 1.26, 10.0, 9.99, 10.0, 10.0, 0.5, 0.501];
        let mut d = Drift::new(&[PotentialSpec::Quadratic], b).unwrap();
        for (t, &v) in values.iter().enumerate() {
            d.push(t as u64, &[v]);
        }
        // Brute force: the bin of each change's starting level, from the bounds.
        let mut want: BTreeMap<i64, (u64, f64)> = BTreeMap::new();
        for w in values.windows(2) {
            let k = (-100..100).find(|&k| bound(k, 10.0) <= w[0] && w[0] < bound(k + 1, 10.0));
            let e = want.entry(k.unwrap()).or_default();
            e.0 += 1;
            e.1 += w[1] - w[0];
        }
        let rows = d.rows();
        assert_eq!(rows.len(), want.len());
        for (r, (k, (count, sum))) in rows.iter().zip(want) {
            assert_eq!((r.level_lo, r.samples), (bound(k, 10.0), count));
            assert!((r.mean_change * r.samples as f64 - sum).abs() < 1e-9);
        }
    }

    #[test]
    fn merge_equals_one_pass() {
        let specs = [PotentialSpec::Absolute];
        let values = [3.0, 7.0, 2.0, 9.0, 4.0, 4.5, 8.0, 1.5];
        let mut whole = Drift::new(&specs, 4).unwrap();
        let (mut a, mut b) = (whole.clone(), whole.clone());
        for (t, &v) in values.iter().enumerate() {
            whole.push(t as u64, &[v]);
            if t < 4 {
                a.push(t as u64, &[v]);
            }
            if t >= 3 {
                b.push(t as u64, &[v]);
            }
        }
        a.merge(&b);
        for (x, y) in a.rows().iter().zip(whole.rows()) {
            assert_eq!((x.samples, x.balls), (y.samples, y.balls));
            assert!((x.mean_change - y.mean_change).abs() < 1e-12);
            assert!(
                (x.stderr - y.stderr).abs() < 1e-12 || (x.stderr.is_nan() && y.stderr.is_nan())
            );
        }
        assert!(Drift::new(&specs, 0).is_err());
    }
}
