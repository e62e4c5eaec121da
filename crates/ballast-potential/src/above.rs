//! The bins strictly above the average, for the absolute-value potential with real-valued
//! (weighted) loads: `Δ = Σ_i |y_i| = 2 Σ_{y_i > 0} y_i` because `Σ_i y_i = 0`.
//!
//! Every ball moves the average up by `w/n`, so bins just above it drop out of the set. A bin
//! is stored under its *key* `y_i + d`, where `d` is the total shift of the average since the
//! last rebuild; keys only change when the bin receives a ball, and a bin leaves the set when
//! the growing `d` reaches its key. Since `d` only grows, the set is a monotone priority
//! queue, kept as a bucket queue (Dial's algorithm): `B` circular buckets of width `h`
//! (`h` ≈ mean weight / n, so about one bin per bucket near the average) plus an overflow
//! list for keys beyond the window, which is rescanned every `B/2` buckets.
//!
//! Cost per ball: O(1) list operations plus the members of the buckets the average passes
//! through (expected O(1) when the density of normalised loads near the average is bounded,
//! as for continuous weights), plus the amortised overflow rescans (at most `n` visits per
//! `B/2 ≥ n/2` buckets, i.e. about one visit per ball). This is *expected amortised* O(1),
//! not worst-case O(1): many bins with keys in one bucket (e.g. discrete weights) make the
//! current bucket expensive. [`AboveSet::visits`] counts the work so it can be measured.
//! Membership decisions near the average are exact up to the rounding of `y` (bins with
//! `|y_i| ≲ 1e-12` may be misclassified, which changes `Δ` by at most their `|y_i|`).

use crate::sum::Neumaier;

const NONE: u32 = u32::MAX;

/// Bins with `y_i > 0`, their number and the compensated sum of their `y_i`.
#[derive(Clone, Debug)]
pub(crate) struct AboveSet {
    inv_h: f64,
    /// Number of circular buckets (a power of two); `heads[b]` is the overflow list.
    b: i64,
    heads: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    /// The list a bin is in, `NONE` if it is not a member.
    slot: Vec<u32>,
    key: Vec<f64>,
    /// Bucket id of the current shift `d`.
    cur: i64,
    rescan_at: i64,
    count: u64,
    sum: Neumaier,
    visits: u64,
}

impl AboveSet {
    /// An empty set for `n` bins.
    pub(crate) fn new(n: usize) -> Self {
        let b = n.next_power_of_two().max(64);
        Self {
            inv_h: 1.0,
            b: b as i64,
            heads: vec![NONE; b + 1],
            next: vec![NONE; n],
            prev: vec![NONE; n],
            slot: vec![NONE; n],
            key: vec![0.0; n],
            cur: 0,
            rescan_at: (b / 2) as i64,
            count: 0,
            sum: Neumaier::default(),
            visits: 0,
        }
    }

    /// Refills the set from the normalised loads `ys` (the shift `d` restarts at 0) with
    /// bucket width `h`. O(n).
    pub(crate) fn rebuild(&mut self, ys: &[f64], h: f64) {
        self.inv_h = if h > 0.0 && h.is_finite() { 1.0 / h } else { 1.0 };
        self.heads.fill(NONE);
        self.slot.fill(NONE);
        self.cur = 0;
        self.rescan_at = self.b / 2;
        self.count = 0;
        self.sum = Neumaier::default();
        for (i, &y) in ys.iter().enumerate() {
            if y > 0.0 {
                self.insert(i, y);
                self.count += 1;
                self.sum.add(y);
            }
        }
    }

    /// `Σ_{y_i > 0} y_i`.
    #[inline]
    pub(crate) fn positive_sum(&self) -> f64 {
        self.sum.value()
    }

    /// List elements visited by evictions and rescans so far (the non-constant part of the
    /// work).
    pub(crate) fn visits(&self) -> u64 {
        self.visits
    }

    #[inline]
    fn bucket_id(&self, key: f64) -> i64 {
        // `as` truncates (= floor for keys >= 0) and saturates.
        ((key * self.inv_h) as i64).max(self.cur)
    }

    #[inline]
    fn slot_of(&self, id: i64) -> usize {
        if id - self.cur < self.b {
            (id & (self.b - 1)) as usize
        } else {
            self.b as usize
        }
    }

    #[inline]
    fn insert(&mut self, i: usize, key: f64) {
        self.key[i] = key;
        let s = self.slot_of(self.bucket_id(key));
        self.link(i, s);
    }

    #[inline]
    fn link(&mut self, i: usize, s: usize) {
        let h = self.heads[s];
        self.next[i] = h;
        self.prev[i] = NONE;
        if h != NONE {
            self.prev[h as usize] = i as u32;
        }
        self.heads[s] = i as u32;
        self.slot[i] = s as u32;
    }

    #[inline]
    fn unlink(&mut self, i: usize) {
        let (p, nx, s) = (self.prev[i], self.next[i], self.slot[i]);
        if p == NONE {
            self.heads[s as usize] = nx;
        } else {
            self.next[p as usize] = nx;
        }
        if nx != NONE {
            self.prev[nx as usize] = p;
        }
        self.slot[i] = NONE;
    }

    /// One ball on bin `j`: every `y_i` fell by `shift` (= w/n), the total shift is now `d`,
    /// and bin `j`'s normalised load is now `y_new`.
    #[inline]
    pub(crate) fn on_ball(&mut self, j: usize, y_new: f64, d: f64, shift: f64) {
        if self.count > 0 {
            self.sum.add(-(self.count as f64) * shift);
        }
        if self.slot[j] != NONE {
            self.sum.add(d - self.key[j]);
            self.count -= 1;
            self.unlink(j);
        }
        self.evict(d);
        if y_new > 0.0 {
            self.insert(j, y_new + d);
            self.count += 1;
            self.sum.add(y_new);
        }
    }

    /// Removes the members with key `<= d` (normalised load `<= 0`).
    #[inline]
    fn evict(&mut self, d: f64) {
        let new_cur = ((d * self.inv_h) as i64).max(self.cur);
        if new_cur - self.cur >= self.b / 2 {
            self.rebucket(d, new_cur);
            return;
        }
        let mask = self.b - 1;
        for id in self.cur..=new_cur {
            let mut i = self.heads[(id & mask) as usize];
            while i != NONE {
                let iu = i as usize;
                let nx = self.next[iu];
                self.visits += 1;
                let k = self.key[iu];
                if k <= d {
                    self.sum.add(d - k);
                    self.count -= 1;
                    self.unlink(iu);
                } else if id < new_cur {
                    // Rounding put it one bucket low: move it to the current bucket.
                    self.unlink(iu);
                    self.link(iu, (new_cur & mask) as usize);
                }
                i = nx;
            }
        }
        self.cur = new_cur;
        if self.cur >= self.rescan_at {
            self.rescan();
        }
    }

    /// Moves overflow members whose bucket entered the window.
    #[cold]
    fn rescan(&mut self) {
        let of = self.b as usize;
        let mut i = self.heads[of];
        while i != NONE {
            let iu = i as usize;
            let nx = self.next[iu];
            self.visits += 1;
            let s = self.slot_of(self.bucket_id(self.key[iu]));
            if s != of {
                self.unlink(iu);
                self.link(iu, s);
            }
            i = nx;
        }
        self.rescan_at = self.cur + self.b / 2;
    }

    /// The average jumped by half the window or more (a huge ball): re-sort every member.
    #[cold]
    fn rebucket(&mut self, d: f64, new_cur: i64) {
        let members: Vec<usize> = (0..self.slot.len()).filter(|&i| self.slot[i] != NONE).collect();
        self.visits += members.len() as u64;
        self.heads.fill(NONE);
        self.cur = new_cur;
        self.rescan_at = new_cur + self.b / 2;
        for i in members {
            self.slot[i] = NONE;
            let k = self.key[i];
            if k <= d {
                self.sum.add(d - k);
                self.count -= 1;
            } else {
                self.insert(i, k);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force: members and sum from explicit normalised loads.
    fn positive_sum(ys: &[f64]) -> f64 {
        ys.iter().filter(|&&y| y > 0.0).sum()
    }

    #[test]
    fn matches_brute_force_under_random_weights() {
        // A tiny deterministic generator is enough here (no statistics involved).
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state = ballast_core::rng::splitmix64(state);
            state
        };
        for &n in &[1usize, 2, 7, 100] {
            let mut ys = vec![0.0f64; n];
            let mut set = AboveSet::new(n);
            set.rebuild(&ys, 1.0 / n as f64);
            let mut d = 0.0;
            for step in 0..20_000 {
                let j = (next() % n as u64) as usize;
                // Mostly Exp(1)-like weights, sometimes a huge one (rebucket path).
                let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
                let w = if step % 5000 == 4999 { 1000.0 } else { -(1.0 - u).ln() };
                let shift = w / n as f64;
                for y in &mut ys {
                    *y -= shift;
                }
                ys[j] += w;
                d += shift;
                set.on_ball(j, ys[j], d, shift);
                let want = positive_sum(&ys);
                assert!(
                    (set.positive_sum() - want).abs() <= 1e-9 * (1.0 + want),
                    "n={n} step={step}: {} vs {want}",
                    set.positive_sum()
                );
            }
        }
    }
}
