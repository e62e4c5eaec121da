//! [`CapacityLoads`]: the bin engine's load state under capacities
//! ([`crate::capacity`], `docs/capacities.md`), whose loads are the normalised loads
//! `y_i = x_i / c_i`, so that every rule compares them unchanged.

use rand::RngCore;

use crate::loads::{LoadState, WeightSampler};

/// Loads of bins with capacities: the weight `x_i` of each bin, its capacity `c_i` and its
/// normalised load `y_i = x_i / c_i` (recomputed from `x_i` at every ball, so it never
/// drifts), with the running maximum of `y`, the total weight `W` (Neumaier-compensated)
/// and the total capacity `C`. [`LoadState::load`] is `y_i`; [`LoadState::average`] is
/// `W / C` and [`LoadState::normalized`] is `y_i − W / C`.
#[derive(Clone, Debug)]
pub struct CapacityLoads {
    x: Vec<f64>,
    c: Vec<f64>,
    y: Vec<f64>,
    total: f64,
    comp: f64,
    cap_total: f64,
    max_y: f64,
    /// The weight law of the balls, `None` for unit balls (no random number drawn).
    law: Option<WeightSampler>,
    /// Decisions read the raw loads `x_i` ([`crate::capacity::CapacityDecision::Raw`]).
    raw: bool,
}

impl CapacityLoads {
    /// Bins with capacities `c` holding the weights `x` (a start state; all 0 for an empty
    /// start), for balls of the weight law `law` (`None`: unit balls). Panics if the
    /// lengths differ or there are no bins.
    pub fn new(c: Vec<f64>, x: Vec<f64>, law: Option<WeightSampler>) -> Self {
        assert!(!c.is_empty() && c.len() == x.len(), "one capacity and one load per bin");
        let y: Vec<f64> = x.iter().zip(&c).map(|(x, c)| x / c).collect();
        let max_y = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let cap_total = c.iter().sum();
        let total = x.iter().sum();
        Self { x, c, y, total, comp: 0.0, cap_total, max_y, law, raw: false }
    }

    /// The same bins with decisions on the raw loads `x_i` ([`LoadState::load`],
    /// `below_average`, `average` (`W / n`), `normalized` (`x_i − W / n`), `at_most`, ranks);
    /// the gap and the extremes stay normalised.
    pub fn deciding_on_raw_loads(mut self) -> Self {
        self.raw = true;
        self
    }

    /// What decisions read of bin `i`.
    #[inline(always)]
    fn key(&self, i: usize) -> f64 {
        if self.raw {
            self.x[i]
        } else {
            self.y[i]
        }
    }

    /// The weight of each bin (not normalised).
    pub fn weights(&self) -> &[f64] {
        &self.x
    }

    /// The capacities.
    pub fn capacities(&self) -> &[f64] {
        &self.c
    }

    /// The average normalised load `W / C`.
    #[inline]
    pub fn normalised_average(&self) -> f64 {
        (self.total + self.comp) / self.cap_total
    }
}

impl LoadState for CapacityLoads {
    type Load = f64;
    type Inc = f64;

    #[inline]
    fn n(&self) -> usize {
        self.y.len()
    }
    #[inline]
    fn load(&self, i: usize) -> f64 {
        self.key(i)
    }
    #[inline]
    fn below_average(&self, i: usize, strict: bool) -> bool {
        let avg = self.average();
        if strict {
            self.key(i) < avg
        } else {
            self.key(i) <= avg
        }
    }
    #[inline]
    fn at_most(&self, i: usize, f: f64) -> bool {
        self.key(i) <= f
    }
    fn heavier_and_equal(&self, i: usize) -> (u64, u64) {
        let v = self.key(i);
        let (mut a, mut e) = (0, 0);
        for j in 0..self.n() {
            a += u64::from(self.key(j) > v);
            e += u64::from(self.key(j) == v);
        }
        (a, e)
    }
    #[inline]
    fn draw_inc<R: RngCore + ?Sized>(&self, rng: &mut R) -> f64 {
        self.law.as_ref().map_or(1.0, |l| l.draw(rng))
    }
    #[inline]
    fn weight(inc: f64) -> f64 {
        inc
    }
    #[inline]
    fn normalized(&self, i: usize) -> f64 {
        self.key(i) - self.average()
    }
    #[inline]
    fn average(&self) -> f64 {
        if self.raw {
            self.total() / self.n() as f64
        } else {
            self.normalised_average()
        }
    }
    fn total(&self) -> f64 {
        self.total + self.comp
    }
    #[inline]
    fn add(&mut self, i: usize, w: f64) {
        let x = self.x[i] + w;
        self.x[i] = x;
        let y = x / self.c[i];
        self.y[i] = y;
        if y > self.max_y {
            self.max_y = y;
        }
        // Neumaier compensated summation of the total weight.
        let t = self.total + w;
        if self.total.abs() >= w.abs() {
            self.comp += (self.total - t) + w;
        } else {
            self.comp += (w - t) + self.total;
        }
        self.total = t;
    }
    #[inline]
    fn gap(&self) -> f64 {
        self.max_y - self.normalised_average()
    }
    fn max_min(&self) -> (f64, f64) {
        let min = self.y.iter().copied().fold(f64::INFINITY, f64::min);
        (self.max_y, min)
    }
    /// One call per bin with its normalised load `y_i` (also when decisions read the raw
    /// loads: the gap and the extremes are normalised).
    fn for_each_level(&self, mut f: impl FnMut(f64, u64)) {
        for &y in &self.y {
            f(y, 1);
        }
    }
    fn rank_cut(&self, k: u64) -> (f64, usize) {
        let n = self.y.len();
        let k = k.clamp(1, n as u64) as usize;
        let mut order: Vec<usize> = (0..n).collect();
        // Heaviest first, ties by index (the order of the other states' rank cut).
        order.sort_by(|&a, &b| self.key(b).total_cmp(&self.key(a)).then(a.cmp(&b)));
        let i = order[k - 1];
        (self.key(i), i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_loads_gap_and_average() {
        let mut s = CapacityLoads::new(vec![1.0, 2.0, 1.0], vec![0.0; 3], None);
        for i in [1, 1, 1, 0] {
            let w = s.draw_inc(&mut crate::rng::sim_rng(0));
            s.add(i, w);
        }
        // x = [1, 3, 0], y = [1, 1.5, 0], W / C = 4 / 4 = 1.
        assert_eq!(s.load(1), 1.5);
        assert_eq!(s.gap(), 0.5);
        assert_eq!(s.max_min(), (1.5, 0.0));
        assert_eq!(crate::FinalMetrics::of(&s, 1.0).empty_bins, 1);
        assert!(s.below_average(0, false) && !s.below_average(0, true));
        assert_eq!(s.normalized(2), -1.0);
        assert_eq!(s.heavier_and_equal(0), (1, 1));
        assert_eq!(s.rank_cut(2), (1.0, 0));
    }
}
