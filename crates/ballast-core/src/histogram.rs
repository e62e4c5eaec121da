//! The level engine's state: how many bins sit at each load level, stored as cumulative
//! counts, O(number of levels) memory whatever n.
//!
//! [`LevelLoads`] also implements [`LoadState`] through a **sorted relabelling**: "bin" `i` is
//! the bin at position `i` when bins are ordered lightest first (ties in an arbitrary but
//! fixed order). Every symmetric function of the loads (gap, maximum, minimum, potentials,
//! level counts) is therefore exact, and the rules of [`crate::process`] run unchanged on it,
//! because a uniform bin sample is a uniform position. What the view cannot offer is bin
//! *identity*: after a ball lands, bins are relabelled, so "the load of bin 7 over time" has
//! no meaning here. Observers that follow particular bins need the bin engine.

use rand::RngCore;

use crate::loads::{gap_unit, LoadState};
use crate::start::Start;

/// Level histogram of `n` bins: `cum[j]` = number of bins with load `<= lo + j`.
///
/// Invariants: `cum` is non-decreasing, `cum[0] > 0` (the lowest level is occupied),
/// `*cum.last() == n`, and the top level is occupied (`cum[len − 2] < n` when `len >= 2`).
/// Moving one bin up one level changes a single entry, so the sequential step is O(1) after
/// locating the level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelLoads {
    pub(super) n: u64,
    pub(super) lo: u64,
    pub(super) cum: Vec<u64>,
    pub(super) total: u64,
}

impl LevelLoads {
    /// The start state `start` as a level histogram of `n` bins, for the level engine (a checked start).
    /// Draws from `rng` for [`Start::Random`] only, the same number of draws as
    /// [`Start::unit_loads`].
    pub fn of_start<R: RngCore + ?Sized>(start: &Start, n: u64, rng: &mut R) -> LevelLoads {
        match start {
            Start::Empty => LevelLoads::new(n),
            Start::Uniform { k } => LevelLoads::from_counts(*k, &[n]),
            Start::OneBin { balls: 0 } => LevelLoads::new(n),
            Start::OneBin { balls } => {
                let mut counts = vec![0u64; *balls as usize + 1];
                counts[0] = n - 1;
                counts[*balls as usize] += 1;
                LevelLoads::from_counts(0, &counts)
            }
            Start::Random { balls } => {
                let mut st = LevelLoads::new(n);
                for _ in 0..*balls {
                    let p = crate::rng::below(rng, n);
                    st.bump(st.level_of(p));
                }
                st
            }
            Start::Loads(v) => {
                let min = v.iter().copied().min().unwrap_or(0);
                let max = v.iter().copied().max().unwrap_or(0);
                let mut counts = vec![0u64; (max - min) as usize + 1];
                for &x in v {
                    counts[(x - min) as usize] += 1;
                }
                LevelLoads::from_counts(min, &counts)
            }
        }
    }

    /// `n >= 1` empty bins.
    pub fn new(n: u64) -> Self {
        assert!(n >= 1, "at least one bin");
        Self { n, lo: 0, cum: vec![n], total: 0 }
    }

    /// A state from level counts: `counts[j]` bins with load `lo + j`. Leading and trailing
    /// empty levels are allowed and trimmed. Panics if there are no bins.
    pub fn from_counts(lo: u64, counts: &[u64]) -> Self {
        let first = counts.iter().position(|&c| c > 0).expect("at least one bin");
        let last = counts.iter().rposition(|&c| c > 0).expect("at least one bin");
        let mut cum = Vec::with_capacity(last - first + 1);
        let (mut acc, mut total) = (0u64, 0u64);
        for (j, &c) in counts.iter().enumerate().take(last + 1).skip(first) {
            acc += c;
            total += c * (lo + j as u64);
            cum.push(acc);
        }
        Self { n: acc, lo: lo + first as u64, cum, total }
    }

    /// Number of bins.
    #[inline]
    pub fn bins(&self) -> u64 {
        self.n
    }

    /// Smallest load (the load of level index 0).
    #[inline]
    pub fn min_load(&self) -> u64 {
        self.lo
    }

    /// Largest load.
    #[inline]
    pub fn max_load(&self) -> u64 {
        self.lo + self.cum.len() as u64 - 1
    }

    /// Total number of balls `W`.
    #[inline]
    pub fn balls(&self) -> u64 {
        self.total
    }

    /// Number of occupied-or-between levels, `max − min + 1`.
    #[inline]
    pub fn levels(&self) -> usize {
        self.cum.len()
    }

    /// Cumulative counts: entry `j` = bins with load `<= min_load() + j`.
    #[inline]
    pub fn cumulative(&self) -> &[u64] {
        &self.cum
    }

    /// Number of bins at level index `j` (load `min_load() + j`).
    #[inline]
    pub fn count(&self, j: usize) -> u64 {
        self.cum[j] - if j == 0 { 0 } else { self.cum[j - 1] }
    }

    /// Level counts, lowest level first: entry `j` = bins with load `min_load() + j`.
    pub fn counts(&self) -> Vec<u64> {
        (0..self.cum.len()).map(|j| self.count(j)).collect()
    }

    /// Number of bins with load exactly `x` (0 outside the occupied range).
    pub fn count_at(&self, x: u64) -> u64 {
        if x < self.lo || x > self.max_load() {
            0
        } else {
            self.count((x - self.lo) as usize)
        }
    }

    /// Level index of the bin at position `p` (`0 <= p < n`, lightest first): the smallest
    /// `j` with `cum[j] > p`, i.e. the number of entries `<= p`. Branch-free: positions are
    /// random, so a branching search mispredicts about once per lookup.
    #[inline]
    pub fn level_of(&self, p: u64) -> usize {
        debug_assert!(p < self.n);
        let cum = &self.cum[..];
        if cum.len() <= 16 {
            cum.iter().map(|&c| usize::from(c <= p)).sum()
        } else {
            cum.partition_point(|&c| c <= p)
        }
    }

    /// Moves one bin from level index `j` up one level (one ball lands on it). Returns the
    /// position (lightest first) of that bin afterwards, the first position of its new level.
    #[inline]
    pub fn bump(&mut self, j: usize) -> u64 {
        debug_assert!(self.count(j) > 0);
        self.total += 1;
        self.cum[j] -= 1;
        let pos = self.cum[j];
        if j + 1 == self.cum.len() {
            self.cum.push(self.n);
        }
        if self.cum[0] == 0 {
            // The lowest level emptied: O(levels), at most once per n balls.
            self.cum.remove(0);
            self.lo += 1;
        }
        pos
    }

    /// Moves one bin with load `x` up one level; returns its new position as [`Self::bump`].
    #[inline]
    pub fn bump_load(&mut self, x: u64) -> u64 {
        self.bump((x - self.lo) as usize)
    }

    /// Every non-empty bin loses one ball (a round of releases, as in repeated
    /// balls-into-bins): all levels move down one, and the bins at loads 0 and 1 merge into
    /// load 0. O(1) when no bin is empty, else O(levels). Returns the number of balls
    /// released, `n` minus the empty bins before the call.
    pub fn release_one_per_bin(&mut self) -> u64 {
        if self.lo > 0 {
            self.lo -= 1;
            self.total -= self.n;
            return self.n;
        }
        if self.cum.len() == 1 {
            return 0;
        }
        let released = self.n - self.cum[0];
        self.cum.remove(0);
        self.total -= released;
        released
    }

    /// Moves one bin with load `from` to load `to` (any direction; `to` may lie outside the
    /// occupied range) and adds `to − from` to the total: O(|to − from| + trimmed levels).
    /// A reallocation step ([`crate::czumaj`]'s equalize) is a few such moves.
    pub(crate) fn move_load(&mut self, from: u64, to: u64) {
        debug_assert!(self.count_at(from) > 0, "no bin at load {from}");
        if from == to {
            return;
        }
        if to < self.lo {
            let k = (self.lo - to) as usize;
            self.cum.splice(0..0, std::iter::repeat_n(0, k));
            self.lo = to;
        }
        let top = self.max_load();
        if to > top {
            self.cum.extend(std::iter::repeat_n(self.n, (to - top) as usize));
        }
        let (a, b) = ((from - self.lo) as usize, (to - self.lo) as usize);
        if to > from {
            // The bins with load <= lo + j for from <= lo + j < to lose this one.
            self.cum[a..b].iter_mut().for_each(|c| *c -= 1);
            self.total += to - from;
        } else {
            self.cum[b..a].iter_mut().for_each(|c| *c += 1);
            self.total -= from - to;
        }
        let empty_low = self.cum.iter().take_while(|&&c| c == 0).count();
        if empty_low > 0 {
            self.cum.drain(..empty_low);
            self.lo += empty_low as u64;
        }
        while self.cum.len() >= 2 && self.cum[self.cum.len() - 2] == self.n {
            self.cum.pop();
        }
    }

    /// Replaces the histogram by `counts` (entry `j` = bins with load `lo + j`) and sets the
    /// total to `total`. The bin count must not change.
    pub(crate) fn set_counts(&mut self, lo: u64, counts: &[u64], total: u64) {
        let first = counts.iter().position(|&c| c > 0).expect("at least one bin");
        let last = counts.iter().rposition(|&c| c > 0).expect("at least one bin");
        self.cum.clear();
        let mut acc = 0u64;
        for &c in &counts[first..=last] {
            acc += c;
            self.cum.push(acc);
        }
        debug_assert_eq!(acc, self.n, "a batch must not create or lose bins");
        self.lo = lo + first as u64;
        self.total = total;
    }

    /// Load of the bin at position `p` (lightest first).
    #[inline]
    pub fn load_at(&self, p: u64) -> u64 {
        self.lo + self.level_of(p) as u64
    }

    /// Gap `max − W/n`, exact.
    #[inline]
    pub fn gap_value(&self) -> f64 {
        gap_unit(self.max_load(), self.total, self.n)
    }
}

impl LoadState for LevelLoads {
    type Load = f64;
    type Inc = ();

    fn load_counts(&self) -> Option<(u64, Vec<u64>)> {
        Some((self.lo, self.counts()))
    }

    #[inline]
    fn n(&self) -> usize {
        self.n as usize
    }
    #[inline]
    fn load(&self, i: usize) -> f64 {
        self.load_at(i as u64) as f64
    }
    #[inline]
    fn below_average(&self, i: usize, strict: bool) -> bool {
        let lhs = u128::from(self.n) * u128::from(self.load_at(i as u64));
        let w = u128::from(self.total);
        if strict {
            lhs < w
        } else {
            lhs <= w
        }
    }
    #[inline]
    fn at_most(&self, i: usize, f: f64) -> bool {
        self.load_at(i as u64) as f64 <= f
    }
    fn heavier_and_equal(&self, i: usize) -> (u64, u64) {
        let j = self.level_of(i as u64);
        (self.n - self.cum[j], self.count(j))
    }
    #[inline]
    fn draw_inc<R: RngCore + ?Sized>(&self, _rng: &mut R) {}
    #[inline]
    fn weight(_inc: ()) -> f64 {
        1.0
    }
    #[inline]
    fn normalized(&self, i: usize) -> f64 {
        gap_unit(self.load_at(i as u64), self.total, self.n)
    }
    fn total(&self) -> f64 {
        self.total as f64
    }
    /// Adds a ball to the bin at position `i`; positions are then relabelled (the bin moves to
    /// the first position of its new level).
    #[inline]
    fn add(&mut self, i: usize, _inc: ()) {
        let j = self.level_of(i as u64);
        self.bump(j);
    }
    #[inline]
    fn gap(&self) -> f64 {
        self.gap_value()
    }
    fn max_min(&self) -> (f64, f64) {
        (self.max_load() as f64, self.lo as f64)
    }
    /// One call per level (O(levels)).
    fn for_each_level(&self, mut f: impl FnMut(f64, u64)) {
        for j in 0..self.cum.len() {
            let bins = self.count(j);
            if bins > 0 {
                f((self.lo + j as u64) as f64, bins);
            }
        }
    }
    /// The first position of the level at load `x`.
    fn first_with_load(&self, x: f64) -> Option<usize> {
        let j = x - self.lo as f64;
        if !(0.0..self.cum.len() as f64).contains(&j) || j.fract() != 0.0 {
            return None;
        }
        let j = j as usize;
        let first = if j == 0 { 0 } else { self.cum[j - 1] };
        (self.cum[j] > first).then_some(first as usize)
    }
    /// The `k`-th largest load and the highest position among the `k` heaviest when ties are
    /// ordered by position: O(log levels).
    fn rank_cut(&self, k: u64) -> (f64, usize) {
        let k = k.clamp(1, self.n);
        let j = self.level_of(self.n - k);
        let heavier = self.n - self.cum[j];
        let first = if j == 0 { 0 } else { self.cum[j - 1] };
        let need = k - heavier;
        ((self.lo + j as u64) as f64, (first + need - 1) as usize)
    }
    /// A uniform position of the lowest level: O(1).
    fn least_loaded<R: RngCore + ?Sized>(&self, rng: &mut R) -> usize {
        crate::rng::below(rng, self.cum[0]) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_one_per_bin_moves_every_non_empty_bin_down_one() {
        // Loads 0, 1, 1, 3: releases 3 balls, leaving 0, 0, 0, 2.
        let mut s = LevelLoads::from_counts(0, &[1, 2, 0, 1]);
        assert_eq!(s.release_one_per_bin(), 3);
        assert_eq!(s, LevelLoads::from_counts(0, &[3, 0, 1]));
        assert_eq!(s.balls(), 2);
        // No empty bin: every bin releases (loads 2, 2, 5 become 1, 1, 4).
        let mut t = LevelLoads::from_counts(2, &[2, 0, 0, 1]);
        assert_eq!(t.release_one_per_bin(), 3);
        assert_eq!(t, LevelLoads::from_counts(1, &[2, 0, 0, 1]));
        // All empty: nothing moves.
        let mut e = LevelLoads::new(4);
        assert_eq!(e.release_one_per_bin(), 0);
        assert_eq!(e, LevelLoads::new(4));
    }

    #[test]
    fn bump_keeps_the_invariants() {
        let mut s = LevelLoads::new(3);
        assert_eq!(s.bump(0), 2); // loads 0,0,1
        assert_eq!(s.counts(), vec![2, 1]);
        assert_eq!(s.bump(0), 1); // 0,1,1
        assert_eq!(s.bump(0), 0); // 1,1,1: level 0 emptied
        assert_eq!((s.min_load(), s.max_load(), s.counts()), (1, 1, vec![3]));
        assert_eq!(s.balls(), 3);
        assert_eq!(s.gap_value(), 0.0);
        let one = {
            let mut t = LevelLoads::new(1);
            t.bump(0);
            t.bump(0);
            t
        };
        assert_eq!((one.min_load(), one.max_load(), one.balls()), (2, 2, 2));
    }

    #[test]
    fn positions_map_to_levels_and_rank_cut_matches_sorted_vector() {
        let s = LevelLoads::from_counts(3, &[0, 2, 0, 3, 1, 0]);
        // Sorted loads (lightest first): 4, 4, 6, 6, 6, 7.
        let loads: Vec<u64> = (0..6).map(|p| s.load_at(p)).collect();
        assert_eq!(loads, vec![4, 4, 6, 6, 6, 7]);
        assert_eq!(s.balls(), 4 + 4 + 6 * 3 + 7);
        assert_eq!(s.heavier_and_equal(2), (1, 3));
        // k = 3: heaviest 7, then two of the three 6s (positions 2, 3 by position order).
        assert_eq!(s.rank_cut(3), (6.0, 3));
        assert_eq!(s.rank_cut(1), (7.0, 5));
        let many = LevelLoads::from_counts(0, &[1; 40]);
        for p in 0..40 {
            assert_eq!(many.level_of(p), p as usize);
        }
    }
}
