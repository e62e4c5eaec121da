//! The level histogram of integer loads: how many bins hold each load. Unit-weight tracking
//! keeps only this (two counter updates per ball) and evaluates every potential from it,
//! exactly, in O(number of levels) when read.

/// `2^52` as `f64`: adding it to a non-negative integer `x < 2^52` (exact in `f64`) puts `x`
/// in the low mantissa bits, so `(x + 2^52).to_bits() = 2^52.to_bits() + x`.
const TWO52: f64 = 4_503_599_627_370_496.0;

/// Counts of bins per integer load level. Loads only grow, so the lowest level only moves
/// up; storage is a sliding window: `counts[k]` is the number of bins with load `base + k`,
/// the entries below `first` are zero. The vector may end with zeros (levels that emptied or
/// spare headroom); it grows, off the hot path, when a bin moves above its last entry.
#[derive(Clone, Debug)]
pub(crate) struct Levels {
    counts: Vec<u64>,
    base: u64,
    /// `TWO52.to_bits() + base + 1`: a bin whose load `x` (as `f64`) rose to `x` left the
    /// entry `(x + 2^52).to_bits() − key_offset` (one subtraction on the hot path).
    key_offset: u64,
    /// Index at or below the lowest non-empty level (advanced when the vector grows).
    first: usize,
}

impl Default for Levels {
    /// An empty histogram: every [`Levels::move_up_f64`] fails.
    fn default() -> Self {
        Self { counts: Vec::new(), base: 0, key_offset: TWO52.to_bits() + 1, first: 0 }
    }
}

impl Levels {
    /// Spare zero entries above the highest level after building or growing (so that a
    /// climbing maximum grows the vector once per this many new levels).
    const HEADROOM: usize = 8;

    /// The histogram of `loads`.
    pub(crate) fn from_loads(loads: impl Iterator<Item = u64> + Clone) -> Self {
        let lo = loads.clone().min().unwrap_or(0);
        let hi = loads.clone().max().unwrap_or(0);
        let mut counts = vec![0u64; (hi - lo + 1) as usize + Self::HEADROOM];
        for x in loads {
            counts[(x - lo) as usize] += 1;
        }
        Self { counts, base: lo, key_offset: TWO52.to_bits() + lo + 1, first: 0 }
    }

    /// Moves one bin from level `level − 1` to `level`. Returns `false` (and changes
    /// nothing) if no bin was at `level − 1`: the caller's loads are not what this
    /// histogram recorded.
    #[cfg(test)]
    pub(crate) fn move_up(&mut self, level: u64) -> bool {
        level < 1 << 52 && self.move_up_f64(level as f64)
    }

    /// [`Levels::move_up`] for a level given as an `f64` (the hot path of unit-mode
    /// tracking: the loads' `Into<f64>` is all the engine's state offers). Anything but an
    /// integer in `[1, 2^52)` that is one above a non-empty level returns `false`.
    #[inline(always)]
    pub(crate) fn move_up_f64(&mut self, level: f64) -> bool {
        // Wraps to a huge index (rejected below) when `level − 1 < base` or when `level` is
        // not a small non-negative integer.
        let k = (level + TWO52).to_bits().wrapping_sub(self.key_offset) as usize;
        // One bounds check for both entries (`k + 2` wraps only for huge `k`, giving an
        // empty, rejected range).
        if let Some([c, d]) = self.counts.get_mut(k..k.wrapping_add(2)) {
            if *c > 0 {
                *c -= 1;
                *d += 1;
                return true;
            }
            return false;
        }
        self.move_up_top(k)
    }

    /// A bin moved from the last entry to a level above the vector: grows it (with
    /// [`Levels::HEADROOM`]), moves `first` to the lowest non-empty level and drops a long
    /// empty prefix. Runs once per `HEADROOM` new maximum levels: amortised O(1).
    #[cold]
    #[inline(never)]
    fn move_up_top(&mut self, k: usize) -> bool {
        // Only a move out of the last entry grows (an empty histogram has none).
        if k.wrapping_add(1) != self.counts.len() || self.counts.get(k).is_none_or(|&c| c == 0) {
            return false;
        }
        self.counts[k] -= 1;
        self.counts.resize(k + 2 + Self::HEADROOM, 0);
        self.counts[k + 1] += 1;
        while self.counts[self.first] == 0 {
            self.first += 1;
        }
        if self.first >= 1024 && 2 * self.first >= self.counts.len() {
            self.counts.drain(..self.first);
            self.base += self.first as u64;
            self.key_offset += self.first as u64;
            self.first = 0;
        }
        true
    }

    /// The lowest non-empty level and the counts from it up to the highest non-empty level.
    pub(crate) fn counts(&self) -> (u64, &[u64]) {
        let c = &self.counts[self.first..];
        // Levels that emptied since the last growth, and the headroom.
        let skip = c.iter().position(|&x| x > 0).unwrap_or(0);
        let end = c.iter().rposition(|&x| x > 0).map_or(skip, |e| e + 1);
        (self.base + (self.first + skip) as u64, &c[skip..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_moves_and_drops_empty_levels() {
        let mut h = Levels::from_loads([2u64, 2, 3].into_iter());
        assert_eq!(h.counts(), (2, &[2u64, 1][..]));
        assert_eq!(*h.counts.last().unwrap(), 0);
        assert!(h.move_up(3));
        assert!(h.move_up(4));
        assert!(!h.move_up(2), "no bin at level 1");
        assert!(!h.move_up(10), "no bin at level 9");
        assert_eq!(h.counts(), (2, &[1u64, 1, 1][..]));
        assert!(h.move_up(3));
        assert_eq!(h.counts(), (3, &[2u64, 1][..]));
        assert_eq!(*h.counts.last().unwrap(), 0);
    }

    #[test]
    fn empty_histogram_rejects_every_move() {
        let mut h = Levels::default();
        for level in [0, 1, 2, u64::MAX >> 12] {
            assert!(!h.move_up(level));
        }
        for x in [-1.0, 0.5, f64::NAN, f64::INFINITY, 1e300] {
            assert!(!h.move_up_f64(x));
        }
        assert_eq!(h.counts(), (0, &[][..]));
    }

    #[test]
    fn moves_out_of_the_last_entry_grow() {
        let mut h = Levels::from_loads([5u64, 5].into_iter());
        let len = h.counts.len();
        for level in 6..=(5 + len as u64) {
            assert!(h.move_up(level), "to {level}");
        }
        assert!(h.counts.len() > len);
        // One bin still at 5, one at 5 + len; nothing in between.
        let mut expected = vec![0u64; len + 1];
        expected[0] = 1;
        expected[len] = 1;
        assert_eq!(h.counts(), (5, &expected[..]));
    }

    #[test]
    fn long_climb_compacts() {
        let mut h = Levels::from_loads([0u64].into_iter());
        for level in 1..=5000 {
            assert!(h.move_up(level));
        }
        assert_eq!(h.counts(), (5000, &[1u64][..]));
        assert!(h.counts.len() < 5000);
    }
}
