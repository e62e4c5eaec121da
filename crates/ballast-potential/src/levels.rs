//! The level histogram of integer loads: how many bins hold each load. Unit-weight tracking
//! keeps only this (two counter updates per ball) and evaluates every potential from it,
//! exactly, in O(number of levels) when read.

/// Counts of bins per integer load level. Loads only grow, so the lowest level only moves
/// up; storage is a sliding window: `counts[k]` is the number of bins with load `base + k`,
/// the entries below `first` are zero, and the last entry is always a zero (headroom, so
/// that a move up never needs to grow the vector on the hot path).
#[derive(Clone, Debug, Default)]
pub(crate) struct Levels {
    counts: Vec<u64>,
    base: u64,
    /// Index at or below the lowest non-empty level (advanced when a new maximum appears).
    first: usize,
}

impl Levels {
    /// The histogram of `loads`.
    pub(crate) fn from_loads(loads: impl Iterator<Item = u64> + Clone) -> Self {
        let lo = loads.clone().min().unwrap_or(0);
        let hi = loads.clone().max().unwrap_or(0);
        let mut counts = vec![0u64; (hi - lo + 2) as usize];
        for x in loads {
            counts[(x - lo) as usize] += 1;
        }
        Self { counts, base: lo, first: 0 }
    }

    /// Moves one bin from level `level − 1` to `level`. Returns `false` (and changes
    /// nothing) if no bin was at `level − 1`: the caller's loads are not what this
    /// histogram recorded.
    #[inline(always)]
    pub(crate) fn move_up(&mut self, level: u64) -> bool {
        // Wraps to a huge index (rejected by `get_mut`) when `level − 1 < base`.
        let k = level.wrapping_sub(self.base + 1) as usize;
        match self.counts.get_mut(k) {
            Some(c) if *c > 0 => *c -= 1,
            _ => return false,
        }
        // `counts[k] > 0` was not the zero headroom, so `k + 1` is in range.
        self.counts[k + 1] += 1;
        if k + 2 == self.counts.len() {
            self.grow();
        }
        true
    }

    /// A new highest level: restores the zero headroom, moves `first` to the lowest
    /// non-empty level and drops a long empty prefix. Runs once per new maximum load, so the
    /// prefix `counts()` skips stays short and the work is amortised O(1).
    #[cold]
    fn grow(&mut self) {
        self.counts.push(0);
        while self.counts[self.first] == 0 {
            self.first += 1;
        }
        if self.first >= 1024 && 2 * self.first >= self.counts.len() {
            self.counts.drain(..self.first);
            self.base += self.first as u64;
            self.first = 0;
        }
    }

    /// The lowest non-empty level and the counts from it up to the highest non-empty level.
    pub(crate) fn counts(&self) -> (u64, &[u64]) {
        let c = &self.counts[self.first..self.counts.len() - 1];
        // Levels that emptied since the last new maximum.
        let skip = c.iter().position(|&x| x > 0).unwrap_or(0);
        (self.base + (self.first + skip) as u64, &c[skip..])
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
    fn long_climb_compacts() {
        let mut h = Levels::from_loads([0u64].into_iter());
        for level in 1..=5000 {
            assert!(h.move_up(level));
        }
        assert_eq!(h.counts(), (5000, &[1u64][..]));
        assert!(h.counts.len() < 5000);
    }
}
