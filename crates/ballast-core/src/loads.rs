//! Load state of the bin engine: integer loads for unit balls, shifted `f64` loads for
//! weighted balls.
//!
//! Both states answer the questions processes ask ([`LoadState`]): a bin's load, whether it is
//! below the average, and how many bins are heavier (for ranks). Both keep a running maximum,
//! so the gap `max − W/n` costs O(1) at every observation point.

use std::collections::VecDeque;

use rand::RngCore;

use crate::weights::Sampler;

/// The exact gap `max − W/n` for integer loads, computed as `(n·max − W)/n` in 128-bit
/// integers, so it stays exact however large `W` grows.
pub fn gap_unit(max: u64, total: u64, n: u64) -> f64 {
    let num = i128::from(n) * i128::from(max) - i128::from(total);
    num as f64 / n as f64
}

/// What processes may read from a load state.
pub trait LoadState {
    /// Load type (compared with `<`).
    type Load: Copy + PartialOrd + Into<f64>;
    /// What one ball adds (nothing for unit balls, a weight otherwise).
    type Inc: Copy;
    /// Number of bins.
    fn n(&self) -> usize;
    /// Load of bin `i`.
    fn load(&self, i: usize) -> Self::Load;
    /// Load of bin `i` as an integer when loads are ball counts (`None` for weighted loads):
    /// lets integer comparisons replace float ones in hot rules. After inlining the `Option`
    /// is a constant of the state type.
    #[inline(always)]
    fn int_load(&self, _i: usize) -> Option<i64> {
        None
    }
    /// `x_i < W/n` (`strict`) or `x_i <= W/n`.
    fn below_average(&self, i: usize, strict: bool) -> bool;
    /// `x_i <= f`.
    fn at_most(&self, i: usize, f: f64) -> bool;
    /// Number of bins strictly heavier than bin `i` and number with exactly its load.
    fn heavier_and_equal(&self, i: usize) -> (u64, u64);
    /// Draws the increment of the next ball (its weight).
    fn draw_inc<R: RngCore + ?Sized>(&self, rng: &mut R) -> Self::Inc;
    /// The weight of an increment, as `f64` (1 for unit balls).
    fn weight(inc: Self::Inc) -> f64;
    /// Normalised load `y_i = x_i − W/n`, computed without cancellation against a huge `W`.
    fn normalized(&self, i: usize) -> f64;
    /// Total weight `W`.
    fn total(&self) -> f64;
    /// The average load the rules compare with (`avg` of the formulas, adaptive probing's
    /// thresholds): `W/n`; bins with capacities override it (`W/C`,
    /// [`crate::capacity_loads::CapacityLoads`]).
    #[inline]
    fn average(&self) -> f64 {
        self.total() / self.n() as f64
    }
    /// Adds one ball to bin `i`.
    fn add(&mut self, i: usize, inc: Self::Inc);
    /// Current gap `max − W/n`.
    fn gap(&self) -> f64;
    /// Largest and smallest load (the minimum costs O(n)).
    fn max_min(&self) -> (f64, f64);
    /// Calls `f(load, bins)` for the levels of the loads, for the final-load metrics
    /// ([`crate::final_metrics`]): absolute loads on the scale of the gap (the normalised
    /// loads under capacities), each level once or split into several calls, in any order.
    /// The default calls it once per bin with [`LoadState::load`] (O(n)); the level engine's
    /// state once per level (O(levels)).
    fn for_each_level(&self, mut f: impl FnMut(f64, u64))
    where
        Self: Sized,
    {
        for i in 0..self.n() {
            f(self.load(i).into(), 1);
        }
    }
    /// The first bin whose load is `x`, if any. The default scans the bins (O(n)); the level
    /// engine's sorted view gives the first position of that level (O(1)).
    fn first_with_load(&self, x: f64) -> Option<usize> {
        (0..self.n()).find(|&i| self.load(i).into() == x)
    }
    /// The histogram of the loads when they are ball counts: the smallest load `lo` and
    /// `counts[j]` = bins with load `lo + j` (`None` for weighted loads). The default scans
    /// the bins (O(n)); the level engine's state reads its histogram (O(levels)).
    fn load_counts(&self) -> Option<(u64, Vec<u64>)> {
        let mut loads = Vec::with_capacity(self.n());
        for i in 0..self.n() {
            loads.push(u64::try_from(self.int_load(i)?).ok()?);
        }
        let lo = loads.iter().copied().min()?;
        let hi = loads.iter().copied().max()?;
        let mut counts = vec![0u64; usize::try_from(hi - lo).ok()? + 1];
        for x in loads {
            counts[(x - lo) as usize] += 1;
        }
        Some((lo, counts))
    }
    /// The `k`-th largest load (1-based) and the highest bin index that is still among the
    /// `k` heaviest when ties are ordered by index: the frozen rank cut of a batch. O(n).
    fn rank_cut(&self, k: u64) -> (Self::Load, usize);
    /// The state as plain [`UnitLoads`] (no level histogram, no minimum set), for the
    /// sequential kernels (the private module `kernel`); `None` for every other state.
    /// After inlining this is a constant of the state type (a flag test for `UnitLoads`).
    #[inline(always)]
    fn plain_unit(&mut self) -> Option<&mut UnitLoads> {
        None
    }
    /// The state as [`UnitLoads`] with the minimum set and no level histogram, for the
    /// Tight-Packing kernel; `None` for every other state.
    #[inline(always)]
    fn unit_with_min_set(&mut self) -> Option<&mut UnitLoads> {
        None
    }
    /// A uniformly random least loaded bin. The default scans all bins (O(n)); states that
    /// serve water-filling processes override it with an O(1) structure.
    fn least_loaded<R: RngCore + ?Sized>(&self, rng: &mut R) -> usize {
        let mut best = 0;
        let mut ties = 0u64;
        for i in 0..self.n() {
            if i == 0 || self.load(i) < self.load(best) {
                best = i;
                ties = 1;
            } else if self.load(i) == self.load(best) {
                ties += 1;
                if crate::rng::below(rng, ties) == 0 {
                    best = i;
                }
            }
        }
        best
    }
}

/// The bins at the minimum load, with O(1) removal (swap-remove with a position index) and an
/// O(n) rebuild when the minimum rises: O(1) amortised per ball, since the minimum rises at
/// most m/n times.
#[derive(Clone, Debug)]
pub(crate) struct MinSet {
    level: u32,
    pub(crate) bins: Vec<u32>,
    pos: Vec<u32>,
}

impl MinSet {
    const ABSENT: u32 = u32::MAX;

    fn new(n: usize) -> Self {
        Self { level: 0, bins: (0..n as u32).collect(), pos: (0..n as u32).collect() }
    }

    /// Bin `i` went from load `old` to `old + 1` (`loads` includes the ball).
    #[inline(always)]
    pub(crate) fn raised(&mut self, i: usize, old: u32, loads: &[u32]) {
        if old != self.level {
            return;
        }
        let p = self.pos[i] as usize;
        let last = self.bins.len() - 1;
        self.bins.swap(p, last);
        self.pos[self.bins[p] as usize] = p as u32;
        self.bins.pop();
        self.pos[i] = Self::ABSENT;
        if self.bins.is_empty() {
            self.level += 1;
            self.rebuild(loads);
        }
    }

    /// The bins at `self.level`, in index order, without a branch per bin (whether a bin is
    /// at the level is a coin flip to the branch predictor): every bin is written at the end
    /// of the set and its position recorded, and the set grows past it only for a bin at the
    /// level. Positions of bins outside the set are never read (a bin enters the set only
    /// here), so they may keep these values.
    fn rebuild(&mut self, loads: &[u32]) {
        let level = self.level;
        self.bins.resize(loads.len(), 0);
        let mut len = 0usize;
        for ((j, &x), p) in loads.iter().enumerate().zip(self.pos.iter_mut()) {
            self.bins[len] = j as u32;
            *p = len as u32;
            len += usize::from(x == level);
        }
        self.bins.truncate(len);
    }
}

/// Integer loads (unit balls), with an optional histogram of load levels for rank queries.
#[derive(Clone, Debug)]
pub struct UnitLoads {
    loads: Vec<u32>,
    total: u64,
    max: u32,
    /// `levels[j]` = number of bins with load `lo + j`; maintained only when ranks are needed.
    levels: Option<(u32, VecDeque<u64>)>,
    /// Bins at the minimum load; maintained only for water-filling processes.
    min_set: Option<MinSet>,
}

impl UnitLoads {
    /// `n` empty bins; `with_levels` keeps the level histogram for sequential rank queries.
    pub fn new(n: usize, with_levels: bool) -> Self {
        let levels = with_levels.then(|| (0, VecDeque::from(vec![n as u64])));
        Self { loads: vec![0; n], total: 0, max: 0, levels, min_set: None }
    }

    /// Bins with the given loads (a start state, [`crate::Start`]); `with_levels` as in
    /// [`UnitLoads::new`]. Panics on an empty vector.
    pub fn from_loads(loads: Vec<u32>, with_levels: bool) -> Self {
        assert!(!loads.is_empty(), "at least one bin");
        let max = loads.iter().copied().max().unwrap_or(0);
        let min = loads.iter().copied().min().unwrap_or(0);
        let total = loads.iter().map(|&x| u64::from(x)).sum();
        let levels = with_levels.then(|| {
            let mut counts = VecDeque::from(vec![0u64; (max - min) as usize + 1]);
            for &x in &loads {
                counts[(x - min) as usize] += 1;
            }
            (min, counts)
        });
        Self { loads, total, max, levels, min_set: None }
    }

    /// Also maintain the set of least loaded bins, so [`LoadState::least_loaded`] is O(1).
    pub fn with_min_set(mut self) -> Self {
        let mut set = MinSet::new(0);
        let min = self.loads.iter().copied().min().unwrap_or(0);
        set.level = min;
        set.pos = vec![MinSet::ABSENT; self.loads.len()];
        for (j, &x) in self.loads.iter().enumerate() {
            if x == min {
                set.pos[j] = set.bins.len() as u32;
                set.bins.push(j as u32);
            }
        }
        self.min_set = Some(set);
        self
    }

    /// Level histogram and minimum set after bin `i` rose to `v` (off the hot path).
    #[cold]
    #[inline(never)]
    fn add_extras(&mut self, i: usize, v: u32) {
        if let Some((lo, counts)) = &mut self.levels {
            let j = (v - 1 - *lo) as usize;
            counts[j] -= 1;
            if j + 1 == counts.len() {
                counts.push_back(0);
            }
            counts[j + 1] += 1;
            while counts.front() == Some(&0) {
                counts.pop_front();
                *lo += 1;
            }
        }
        if let Some(set) = &mut self.min_set {
            set.raised(i, v - 1, &self.loads);
        }
    }

    /// The loads.
    pub fn loads(&self) -> &[u32] {
        &self.loads
    }

    /// What a kernel updates: the loads, the running maximum and the total.
    #[inline(always)]
    pub(crate) fn kernel_parts(&mut self) -> (&mut [u32], &mut u32, &mut u64) {
        (&mut self.loads, &mut self.max, &mut self.total)
    }

    /// [`UnitLoads::kernel_parts`] and the minimum set (for the Tight-Packing kernel).
    #[inline(always)]
    pub(crate) fn kernel_parts_min_set(
        &mut self,
    ) -> Option<(&mut [u32], &mut u32, &mut u64, &mut MinSet)> {
        let set = self.min_set.as_mut()?;
        Some((&mut self.loads, &mut self.max, &mut self.total, set))
    }
}

impl LoadState for UnitLoads {
    type Load = u32;
    type Inc = ();

    #[inline(always)]
    fn plain_unit(&mut self) -> Option<&mut UnitLoads> {
        (self.levels.is_none() && self.min_set.is_none()).then_some(self)
    }
    #[inline(always)]
    fn unit_with_min_set(&mut self) -> Option<&mut UnitLoads> {
        (self.levels.is_none() && self.min_set.is_some()).then_some(self)
    }

    #[inline]
    fn n(&self) -> usize {
        self.loads.len()
    }
    #[inline]
    fn load(&self, i: usize) -> u32 {
        self.loads[i]
    }
    #[inline(always)]
    fn int_load(&self, i: usize) -> Option<i64> {
        Some(i64::from(self.loads[i]))
    }
    #[inline]
    fn below_average(&self, i: usize, strict: bool) -> bool {
        let lhs = self.loads.len() as u128 * u128::from(self.loads[i]);
        let w = u128::from(self.total);
        if strict {
            lhs < w
        } else {
            lhs <= w
        }
    }
    #[inline]
    fn at_most(&self, i: usize, f: f64) -> bool {
        f64::from(self.loads[i]) <= f
    }
    fn heavier_and_equal(&self, i: usize) -> (u64, u64) {
        let x = self.loads[i];
        match &self.levels {
            Some((lo, counts)) => {
                let j = (x - lo) as usize;
                (counts.iter().skip(j + 1).sum(), counts[j])
            }
            None => {
                let (mut a, mut c) = (0, 0);
                for &y in &self.loads {
                    a += u64::from(y > x);
                    c += u64::from(y == x);
                }
                (a, c)
            }
        }
    }
    #[inline]
    fn draw_inc<R: RngCore + ?Sized>(&self, _rng: &mut R) {}
    #[inline]
    fn weight(_inc: ()) -> f64 {
        1.0
    }
    #[inline]
    fn normalized(&self, i: usize) -> f64 {
        gap_unit(u64::from(self.loads[i]), self.total, self.loads.len() as u64)
    }
    fn total(&self) -> f64 {
        self.total as f64
    }
    #[inline(always)]
    fn add(&mut self, i: usize, _inc: ()) {
        let v = self.loads[i] + 1;
        self.loads[i] = v;
        self.total += 1;
        self.max = self.max.max(v);
        if self.levels.is_some() | self.min_set.is_some() {
            self.add_extras(i, v);
        }
    }
    #[inline]
    fn gap(&self) -> f64 {
        gap_unit(u64::from(self.max), self.total, self.loads.len() as u64)
    }
    fn max_min(&self) -> (f64, f64) {
        let min = self.loads.iter().copied().min().unwrap_or(0);
        (f64::from(self.max), f64::from(min))
    }
    fn rank_cut(&self, k: u64) -> (u32, usize) {
        rank_cut_by(&self.loads, k)
    }
    fn least_loaded<R: RngCore + ?Sized>(&self, rng: &mut R) -> usize {
        match &self.min_set {
            Some(set) => set.bins[crate::rng::below(rng, set.bins.len() as u64) as usize] as usize,
            None => {
                let min = self.loads.iter().copied().min().unwrap_or(0);
                let count = self.loads.iter().filter(|&&x| x == min).count() as u64;
                let target = crate::rng::below(rng, count);
                self.loads
                    .iter()
                    .enumerate()
                    .filter(|(_, &x)| x == min)
                    .nth(target as usize)
                    .map_or(0, |(i, _)| i)
            }
        }
    }
}

/// Shared rank-cut computation: the `k`-th largest value and the index cut among its ties.
fn rank_cut_by<T: Copy + PartialOrd>(loads: &[T], k: u64) -> (T, usize) {
    let n = loads.len();
    let k = (k.clamp(1, n as u64)) as usize;
    let mut copy: Vec<T> = loads.to_vec();
    // Descending order: the k-th largest sits at position k − 1.
    let (_, kth, _) = copy.select_nth_unstable_by(k - 1, |a, b| {
        b.partial_cmp(a).unwrap_or(std::cmp::Ordering::Equal)
    });
    let thr = *kth;
    let above = loads.iter().filter(|&&y| y > thr).count();
    let mut need = k - above; // how many tied bins (lowest indices first) are heavy
    let mut cut = 0;
    for (i, &y) in loads.iter().enumerate() {
        if y == thr {
            need -= 1;
            if need == 0 {
                cut = i;
                break;
            }
        }
    }
    (thr, cut)
}

/// Real-valued loads (weighted balls), stored relative to a base so that the gap stays
/// accurate when the total weight `W` is huge.
///
/// Loads are `base + rel[i]`; `rel_total = W − n·base` is kept with Neumaier's compensated
/// summation. Whenever the average exceeds the base by 1024, the integer part of the excess
/// is moved into `base` (O(n), once per 1024·n weight).
#[derive(Clone, Debug)]
pub struct WeightedLoads {
    rel: Vec<f64>,
    base: f64,
    rel_total: f64,
    comp: f64,
    max_rel: f64,
    law: Sampler,
}

/// A weight law ready to draw from (the distributions of `rand_distr` built once): what the
/// weighted engines draw each ball's weight with.
#[derive(Clone, Debug)]
pub struct WeightSampler(Sampler);

impl WeightSampler {
    /// The sampler of `w`; `None` for unit weights or parameters that
    /// [`crate::Weights::validate`] refuses.
    pub fn new(w: crate::Weights) -> Option<Self> {
        Sampler::of(w).map(Self)
    }

    /// One weight.
    #[inline]
    pub fn draw<R: RngCore + ?Sized>(&self, rng: &mut R) -> f64 {
        self.0.draw(rng)
    }
}

impl WeightedLoads {
    /// `n` empty bins; balls have i.i.d. Exp weights with mean `mean_weight`.
    pub fn new(n: usize, mean_weight: f64) -> Self {
        Self::with_law(n, Sampler::Exp(mean_weight))
    }

    /// `n` empty bins; balls have i.i.d. weights of the law `weights`, or `None` for unit
    /// weights or parameters [`crate::Weights::validate`] refuses.
    pub fn of_law(n: usize, weights: crate::Weights) -> Option<Self> {
        Sampler::of(weights).map(|law| Self::with_law(n, law))
    }

    fn with_law(n: usize, law: Sampler) -> Self {
        Self { rel: vec![0.0; n], base: 0.0, rel_total: 0.0, comp: 0.0, max_rel: 0.0, law }
    }

    #[inline]
    fn avg_rel(&self) -> f64 {
        (self.rel_total + self.comp) / self.rel.len() as f64
    }

    fn rebase(&mut self) {
        let shift = self.avg_rel().floor();
        if shift <= 0.0 {
            return;
        }
        for x in &mut self.rel {
            *x -= shift;
        }
        self.max_rel -= shift;
        self.base += shift;
        self.rel_total -= shift * self.rel.len() as f64;
    }
}

impl LoadState for WeightedLoads {
    type Load = f64;
    type Inc = f64;

    #[inline]
    fn n(&self) -> usize {
        self.rel.len()
    }
    #[inline]
    fn load(&self, i: usize) -> f64 {
        self.rel[i]
    }
    #[inline]
    fn below_average(&self, i: usize, strict: bool) -> bool {
        let avg = self.avg_rel();
        if strict {
            self.rel[i] < avg
        } else {
            self.rel[i] <= avg
        }
    }
    #[inline]
    fn at_most(&self, i: usize, f: f64) -> bool {
        self.rel[i] <= f - self.base
    }
    fn heavier_and_equal(&self, i: usize) -> (u64, u64) {
        let x = self.rel[i];
        let (mut a, mut c) = (0, 0);
        for &y in &self.rel {
            a += u64::from(y > x);
            c += u64::from(y == x);
        }
        (a, c)
    }
    #[inline]
    fn weight(inc: f64) -> f64 {
        inc
    }
    #[inline]
    fn normalized(&self, i: usize) -> f64 {
        self.rel[i] - self.avg_rel()
    }
    fn total(&self) -> f64 {
        self.rel.len() as f64 * self.base + self.rel_total + self.comp
    }
    #[inline]
    fn draw_inc<R: RngCore + ?Sized>(&self, rng: &mut R) -> f64 {
        self.law.draw(rng)
    }
    #[inline]
    fn add(&mut self, i: usize, w: f64) {
        let v = self.rel[i] + w;
        self.rel[i] = v;
        if v > self.max_rel {
            self.max_rel = v;
        }
        // Neumaier compensated summation of the total.
        let t = self.rel_total + w;
        if self.rel_total.abs() >= w.abs() {
            self.comp += (self.rel_total - t) + w;
        } else {
            self.comp += (w - t) + self.rel_total;
        }
        self.rel_total = t;
        if self.rel_total > 1024.0 * self.rel.len() as f64 {
            self.rebase();
        }
    }
    #[inline]
    fn gap(&self) -> f64 {
        self.max_rel - self.avg_rel()
    }
    fn max_min(&self) -> (f64, f64) {
        let min = self.rel.iter().copied().fold(f64::INFINITY, f64::min);
        (self.base + self.max_rel, self.base + min)
    }
    /// One call per bin with its load `base + rel[i]` (a bin that received no ball has load
    /// exactly 0: `rel[i]` is then `−base`, exactly, since the base moves by whole numbers).
    fn for_each_level(&self, mut f: impl FnMut(f64, u64)) {
        for &x in &self.rel {
            f(self.base + x, 1);
        }
    }
    fn rank_cut(&self, k: u64) -> (f64, usize) {
        rank_cut_by(&self.rel, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_gap_is_exact_for_huge_totals() {
        let n = 3u64;
        let total = 3 * (1u64 << 60) + 1;
        // max = avg + 2/3 exactly
        assert_eq!(gap_unit((1 << 60) + 1, total, n), 2.0 / 3.0);
    }

    #[test]
    fn levels_track_heavier_and_equal() {
        let mut s = UnitLoads::new(4, true);
        for &i in &[0, 0, 1, 2, 0] {
            s.add(i, ());
        }
        // loads = [3, 1, 1, 0]
        assert_eq!(s.heavier_and_equal(0), (0, 1));
        assert_eq!(s.heavier_and_equal(1), (1, 2));
        assert_eq!(s.heavier_and_equal(3), (3, 1));
        let plain = {
            let mut p = UnitLoads::new(4, false);
            for &i in &[0, 0, 1, 2, 0] {
                p.add(i, ());
            }
            p
        };
        for i in 0..4 {
            assert_eq!(plain.heavier_and_equal(i), s.heavier_and_equal(i));
        }
        assert_eq!(s.gap(), 3.0 - 5.0 / 4.0);
    }

    #[test]
    fn min_set_tracks_the_least_loaded_bins() {
        let mut s = UnitLoads::new(5, false).with_min_set();
        let mut rng = crate::rng::sim_rng(1);
        for step in 0..40 {
            let i = s.least_loaded(&mut rng);
            let min = *s.loads().iter().min().expect("n > 0");
            assert_eq!(s.loads()[i], min, "step {step}");
            // add to the least loaded bin, and sometimes to bin 0 as well
            s.add(i, ());
            if step % 3 == 0 {
                s.add(0, ());
            }
            let set = s.min_set.as_ref().expect("enabled");
            let mut expect: Vec<u32> =
                (0..5u32).filter(|&j| s.loads()[j as usize] == set.level).collect();
            let mut got = set.bins.clone();
            got.sort_unstable();
            expect.sort_unstable();
            assert_eq!(got, expect);
            assert_eq!(set.level, *s.loads().iter().min().expect("n > 0"));
        }
    }

    #[test]
    fn rank_cut_orders_ties_by_index() {
        let loads = [2u32, 5, 2, 2, 7];
        // heaviest first: 7 (4), 5 (1), then ties at 2 in index order 0, 2, 3
        assert_eq!(rank_cut_by(&loads, 1), (7, 4));
        assert_eq!(rank_cut_by(&loads, 3), (2, 0));
        assert_eq!(rank_cut_by(&loads, 4), (2, 2));
        assert_eq!(rank_cut_by(&loads, 5), (2, 3));
    }

    #[test]
    fn weighted_gap_survives_rebasing() {
        let mut s = WeightedLoads::new(2, 1.0);
        for _ in 0..5000 {
            s.add(0, 1.0);
            s.add(1, 1.0);
        }
        s.add(0, 0.5);
        assert!((s.gap() - 0.25).abs() < 1e-9);
        assert!((s.total() - 10000.5).abs() < 1e-9);
    }
}
