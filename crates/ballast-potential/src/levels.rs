//! The level histogram of integer loads: how many bins hold each load. Unit-weight tracking
//! uses it to handle the crossing of the average level by level (absolute potential) and to
//! resynchronise the exponential sums in O(number of levels) instead of O(n).

/// Counts of bins per integer load level. Loads only grow, so the lowest level only moves
/// up; storage is a sliding window over `[base + first, base + counts.len())`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Levels {
    /// `counts[k]` = number of bins with load `base + k`.
    counts: Vec<u64>,
    base: u64,
    /// Index of the lowest non-empty level.
    first: usize,
}

impl Levels {
    /// The histogram of `loads`.
    pub(crate) fn from_loads(loads: impl Iterator<Item = u64> + Clone) -> Self {
        let lo = loads.clone().min().unwrap_or(0);
        let hi = loads.clone().max().unwrap_or(0);
        let mut counts = vec![0u64; (hi - lo + 1) as usize];
        for x in loads {
            counts[(x - lo) as usize] += 1;
        }
        Self { counts, base: lo, first: 0 }
    }

    /// Moves one bin from level `level − 1` to `level`. Returns `false` (and changes
    /// nothing) if no bin was at `level − 1`: the caller's loads are not what this
    /// histogram recorded.
    #[inline]
    pub(crate) fn move_up(&mut self, level: u64) -> bool {
        // Wraps to a huge index (rejected by `get_mut`) when `level − 1 < base`.
        let k = level.wrapping_sub(self.base + 1) as usize;
        let Some(c) = self.counts.get_mut(k) else { return false };
        if *c == 0 {
            return false;
        }
        *c -= 1;
        let emptied = *c == 0;
        match self.counts.get_mut(k + 1) {
            Some(up) => *up += 1,
            None => self.counts.push(1),
        }
        if emptied && k == self.first {
            self.advance_first();
        }
        true
    }

    #[cold]
    fn advance_first(&mut self) {
        while self.counts[self.first] == 0 {
            self.first += 1;
        }
        // Drop the empty prefix now and then (amortised O(1)).
        if self.first >= 1024 && 2 * self.first >= self.counts.len() {
            self.counts.drain(..self.first);
            self.base += self.first as u64;
            self.first = 0;
        }
    }

    /// Number of bins with load `level`.
    #[inline]
    pub(crate) fn count(&self, level: u64) -> u64 {
        match level.checked_sub(self.base) {
            Some(k) => self.counts.get(k as usize).copied().unwrap_or(0),
            None => 0,
        }
    }

    /// The lowest level and the counts of the levels from it upwards (the last may be 0).
    #[inline]
    pub(crate) fn counts(&self) -> (u64, &[u64]) {
        (self.base + self.first as u64, &self.counts[self.first..])
    }

    /// The non-empty levels with their counts, lowest first.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let base = self.base + self.first as u64;
        self.counts[self.first..]
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(move |(k, &c)| (base + k as u64, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_moves_and_drops_empty_levels() {
        let mut h = Levels::from_loads([2u64, 2, 3].into_iter());
        assert_eq!(h.counts(), (2, &[2u64, 1][..]));
        assert!(h.move_up(3));
        assert!(h.move_up(4));
        assert!(!h.move_up(2), "no bin at level 1");
        assert!(!h.move_up(10), "no bin at level 9");
        assert_eq!(h.iter().collect::<Vec<_>>(), vec![(2, 1), (3, 1), (4, 1)]);
        assert!(h.move_up(3));
        assert_eq!(h.iter().collect::<Vec<_>>(), vec![(3, 2), (4, 1)]);
        assert_eq!(h.counts().0, 3);
        assert_eq!((h.count(2), h.count(3), h.count(4), h.count(5)), (0, 2, 1, 0));
    }

    #[test]
    fn long_climb_compacts() {
        let mut h = Levels::from_loads([0u64].into_iter());
        for level in 1..=5000 {
            assert!(h.move_up(level));
        }
        assert_eq!(h.iter().collect::<Vec<_>>(), vec![(5000, 1)]);
        assert!(h.counts.len() < 5000);
    }
}
