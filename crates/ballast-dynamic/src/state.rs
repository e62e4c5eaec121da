//! The two load states: [`DynLoads`] for the round processes (leaky bins, RBB), whose only
//! deletion is "every non-empty bin loses one ball", and [`LevelLoads`] for the infinite Azar
//! process, which deletes from arbitrary bins.
//!
//! Why two: when the only deletion is the round-wide release, the max load is maintained
//! exactly by a running maximum (the release lowers every bin at the max, so the max falls by
//! exactly one; an insertion can only raise it), the number of empty bins is `n` minus the
//! length of the non-empty list, and the list is compacted during the release pass itself,
//! so no positions and no level histogram are needed. Both are branch-free in the hot loops.
//! An arbitrary deletion can lower the max without anything telling us the new one, so the
//! Azar state keeps the level histogram (count of bins per load), which finds the new max in
//! O(1) and gives the empty bins as its level 0.

use ballast_core::process::Ctx;
use rand::RngCore;

/// Loads of `n` bins (unit balls) for processes whose deletions are round-wide releases:
/// O(1) insertion, O(non-empty bins) release of one ball from every non-empty bin, exact max
/// load, total and empty-bin count at all times, and never a scan of all `n` bins.
///
/// Invariants (checked by [`DynLoads::check`] in tests): the first `len` entries of
/// `nonempty` are exactly the bins with positive load, each once; `max` is the largest load;
/// `total` the sum of the loads.
#[derive(Clone, Debug)]
pub struct DynLoads {
    loads: Vec<u32>,
    /// `n + 1` slots: the branch-free push writes one slot past the end when the bin was
    /// already listed.
    nonempty: Vec<u32>,
    len: usize,
    max: u32,
    total: u64,
}

impl DynLoads {
    /// `n` empty bins (`1 <= n <= 2^32 − 1`; callers validate).
    pub fn new(n: usize) -> Self {
        Self::from_loads(vec![0; n])
    }

    /// `n` bins holding `m` balls as evenly as possible: every bin gets `⌊m/n⌋` and the first
    /// `m mod n` bins one more.
    pub fn uniform(n: usize, m: u64) -> Self {
        Self::from_loads(uniform_loads(n, m))
    }

    /// A state with the given loads (O(n)).
    pub fn from_loads(loads: Vec<u32>) -> Self {
        let n = loads.len();
        let mut nonempty = vec![0u32; n + 1];
        let mut len = 0;
        let mut total = 0u64;
        for (i, &x) in loads.iter().enumerate() {
            total += u64::from(x);
            if x > 0 {
                nonempty[len] = i as u32;
                len += 1;
            }
        }
        let max = loads.iter().copied().max().unwrap_or(0);
        Self { loads, nonempty, len, max, total }
    }

    /// Number of bins.
    #[inline]
    pub fn n(&self) -> usize {
        self.loads.len()
    }

    /// All loads.
    #[inline]
    pub fn loads(&self) -> &[u32] {
        &self.loads
    }

    /// Largest load.
    #[inline]
    pub fn max(&self) -> u32 {
        self.max
    }

    /// Total number of balls.
    #[inline]
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Number of empty bins.
    #[inline]
    pub fn empty(&self) -> u64 {
        (self.loads.len() - self.len) as u64
    }

    /// Number of non-empty bins.
    #[inline]
    pub fn nonempty_count(&self) -> usize {
        self.len
    }

    /// The non-empty bins, in no particular order.
    #[inline]
    pub fn nonempty(&self) -> &[u32] {
        &self.nonempty[..self.len]
    }

    /// Adds one ball to bin `i`. O(1), branch-free.
    #[inline]
    pub fn add(&mut self, i: usize) {
        let l = self.loads[i];
        self.loads[i] = l + 1;
        // Append i; the slot only counts if the bin was empty (len < n then, and slot n
        // exists for the other case).
        self.nonempty[self.len] = i as u32;
        self.len += usize::from(l == 0);
        self.max = self.max.max(l + 1);
        self.total += 1;
    }

    /// Every non-empty bin loses one ball; returns how many balls left. O(non-empty bins),
    /// branch-free: bins that become empty are dropped from the list in the same pass.
    pub fn release_all(&mut self) -> u64 {
        let released = self.len;
        let mut w = 0;
        for k in 0..released {
            let i = self.nonempty[k];
            let l = self.loads[i as usize] - 1;
            self.loads[i as usize] = l;
            self.nonempty[w] = i;
            w += usize::from(l != 0);
        }
        self.len = w;
        // Every bin at the max was non-empty and lost a ball; nothing else rose.
        self.max = self.max.saturating_sub(1);
        self.total -= released as u64;
        released as u64
    }

    /// Verifies every invariant by recomputing from the loads (O(n)): for tests.
    pub fn check(&self) -> Result<(), String> {
        check_common(&self.loads, self.max, self.total)?;
        let mut listed = vec![false; self.n()];
        for &i in self.nonempty() {
            let i = i as usize;
            if i >= self.n() || listed[i] {
                return Err(format!("bin {i} listed twice or out of range"));
            }
            listed[i] = true;
            if self.loads[i] == 0 {
                return Err(format!("empty bin {i} is listed"));
            }
        }
        let count = self.loads.iter().filter(|&&x| x > 0).count();
        if count != self.len {
            return Err(format!("{} listed, {count} non-empty", self.len));
        }
        Ok(())
    }
}

/// Loads of `n` bins for One-Choice RBB with `m >= n/2` balls: a plain load vector, no list
/// of non-empty bins. The release is one pass over all `n` loads (a saturating decrement
/// that also counts the non-empty bins; the compiler vectorises it), an insertion is one
/// increment, and the max load and empty-bin count are read off the loads by one more pass,
/// [`DenseLoads::recount`], once per round. RBB with `m = k·n` has a fraction
/// `1 − (sqrt(k² + 1) − k)` of non-empty bins in stationarity (over 0.58 for `k >= 1`), so
/// these passes cost about as much as walking the list would, and the insertions no longer
/// keep a list or a running max. The loads, max, total and empty count equal those of
/// [`DynLoads`] after the same operations (tested).
///
/// Invariants (checked by [`DenseLoads::check`]): `total` is the sum of the loads; `max` and
/// `empty` describe the loads as of the last [`DenseLoads::recount`].
#[derive(Clone, Debug)]
pub struct DenseLoads {
    loads: Vec<u32>,
    total: u64,
    max: u32,
    empty: u64,
}

impl DenseLoads {
    /// `n` bins holding `m` balls as evenly as possible (as [`DynLoads::uniform`]).
    pub fn uniform(n: usize, m: u64) -> Self {
        Self::from_loads(uniform_loads(n, m))
    }

    /// `n` empty bins.
    pub fn new(n: usize) -> Self {
        Self::from_loads(vec![0; n])
    }

    /// A state with the given loads (O(n)).
    pub fn from_loads(loads: Vec<u32>) -> Self {
        let total = loads.iter().map(|&x| u64::from(x)).sum();
        let mut s = Self { loads, total, max: 0, empty: 0 };
        s.recount();
        s
    }

    /// Number of bins.
    #[inline]
    pub fn n(&self) -> usize {
        self.loads.len()
    }

    /// All loads.
    #[inline]
    pub fn loads(&self) -> &[u32] {
        &self.loads
    }

    /// Largest load as of the last [`DenseLoads::recount`].
    #[inline]
    pub fn max(&self) -> u32 {
        self.max
    }

    /// Total number of balls.
    #[inline]
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Number of empty bins as of the last [`DenseLoads::recount`].
    #[inline]
    pub fn empty(&self) -> u64 {
        self.empty
    }

    /// Adds one ball to bin `i`. O(1).
    #[inline]
    pub fn add(&mut self, i: usize) {
        self.loads[i] += 1;
        self.total += 1;
    }

    /// Adds `count` balls to uniform bins drawn by [`Ctx::sample_each`] (the bins of `count`
    /// calls of [`Ctx::sample`], in order): one increment per ball.
    #[inline]
    pub fn throw<R: RngCore + ?Sized>(&mut self, ctx: &mut Ctx, rng: &mut R, count: u64) {
        // A slice, not the Vec: its pointer and length stay in registers across the stores.
        let loads = &mut self.loads[..];
        ctx.sample_each(rng, count, |i| loads[i] += 1);
        self.total += count;
    }

    /// Every non-empty bin loses one ball; returns how many balls left. O(n), vectorised.
    pub fn release_all(&mut self) -> u64 {
        // A u32 count (n < 2^32) keeps the loop in 32-bit lanes.
        let mut released = 0u32;
        for x in &mut self.loads {
            // `x − (x ≠ 0)`: a compare, a subtraction and the count (no saturating
            // subtraction, which baseline x86-64 has no instruction for on 32-bit lanes).
            let nonempty = u32::from(*x != 0);
            released += nonempty;
            *x -= nonempty;
        }
        self.total -= u64::from(released);
        u64::from(released)
    }

    /// [`DenseLoads::release_all`] and [`DenseLoads::recount`] in one pass: every non-empty
    /// bin loses one ball, and the max load and empty count are those of the loads after
    /// the release (leaky bins report the state after the departures). O(n), vectorised.
    pub fn release_and_recount(&mut self) -> u64 {
        let (mut released, mut empty) = (0u32, 0u32);
        let max = if self.total < 1 << 31 {
            // Every load fits an i32: signed lanes (see `max_and_zeros`).
            let mut max = 0i32;
            for x in &mut self.loads {
                let nonempty = u32::from(*x != 0);
                released += nonempty;
                let y = *x - nonempty;
                *x = y;
                max = max.max(y as i32);
                empty += u32::from(y == 0);
            }
            max as u32
        } else {
            let mut max = 0u32;
            for x in &mut self.loads {
                let nonempty = u32::from(*x != 0);
                released += nonempty;
                let y = *x - nonempty;
                *x = y;
                max = max.max(y);
                empty += u32::from(y == 0);
            }
            max
        };
        self.total -= u64::from(released);
        (self.max, self.empty) = (max, u64::from(empty));
        u64::from(released)
    }

    /// Reads the max load and the number of empty bins off the loads. O(n), vectorised.
    pub fn recount(&mut self) {
        let (max, empty) = max_and_zeros(&self.loads, self.total);
        (self.max, self.empty) = (max, u64::from(empty));
    }

    /// Verifies every invariant by recomputing from the loads (O(n)): for tests.
    pub fn check(&self) -> Result<(), String> {
        check_common(&self.loads, self.max, self.total)?;
        let zeros = self.loads.iter().filter(|&&x| x == 0).count() as u64;
        if zeros != self.empty {
            return Err(format!("{} empty recorded, {zeros} zero loads", self.empty));
        }
        Ok(())
    }
}

/// Loads of `n` bins with arbitrary insertions and deletions, O(1) each: the level histogram
/// (`levels[l]` = number of bins with load `l`) keeps the max load and the number of empty
/// bins. Used by the infinite Azar process.
///
/// Invariants (checked by [`LevelLoads::check`]): `levels[l]` counts the bins of load `l` for
/// every `l` (0 above the max, and `levels.len() > max`); `max` and `total` as for
/// [`DynLoads`].
#[derive(Clone, Debug)]
pub struct LevelLoads {
    loads: Vec<u32>,
    levels: Vec<u64>,
    max: u32,
    total: u64,
}

impl LevelLoads {
    /// `n` bins holding `m` balls as evenly as possible (as [`DynLoads::uniform`]).
    pub fn uniform(n: usize, m: u64) -> Self {
        Self::from_loads(uniform_loads(n, m))
    }

    /// A state with the given loads (O(n + max load)).
    pub fn from_loads(loads: Vec<u32>) -> Self {
        let max = loads.iter().copied().max().unwrap_or(0);
        let mut levels = vec![0u64; max as usize + 2];
        let mut total = 0u64;
        for &x in &loads {
            levels[x as usize] += 1;
            total += u64::from(x);
        }
        Self { loads, levels, max, total }
    }

    /// Number of bins.
    #[inline]
    pub fn n(&self) -> usize {
        self.loads.len()
    }

    /// All loads.
    #[inline]
    pub fn loads(&self) -> &[u32] {
        &self.loads
    }

    /// Largest load.
    #[inline]
    pub fn max(&self) -> u32 {
        self.max
    }

    /// Total number of balls.
    #[inline]
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Number of empty bins.
    #[inline]
    pub fn empty(&self) -> u64 {
        self.levels[0]
    }

    /// Number of bins with load exactly `l`.
    #[inline]
    pub fn level_count(&self, l: u32) -> u64 {
        self.levels.get(l as usize).copied().unwrap_or(0)
    }

    /// Adds one ball to bin `i`. O(1) amortised.
    #[inline]
    pub fn add(&mut self, i: usize) {
        let l = self.loads[i] as usize;
        self.loads[i] = l as u32 + 1;
        self.levels[l] -= 1;
        if l + 1 == self.levels.len() {
            self.levels.push(0);
        }
        self.levels[l + 1] += 1;
        self.max = self.max.max(l as u32 + 1);
        self.total += 1;
    }

    /// Removes one ball from bin `i`, which must be non-empty. O(1).
    #[inline]
    pub fn remove(&mut self, i: usize) {
        let l = self.loads[i];
        debug_assert!(l > 0, "remove from an empty bin");
        self.loads[i] = l - 1;
        let lu = l as usize;
        self.levels[lu] -= 1;
        self.levels[lu - 1] += 1;
        // The max falls by one exactly when its level empties (bin i now sits at max − 1).
        self.max -= u32::from(l == self.max && self.levels[lu] == 0);
        self.total -= 1;
    }

    /// Verifies every invariant by recomputing from the loads (O(n)): for tests.
    pub fn check(&self) -> Result<(), String> {
        check_common(&self.loads, self.max, self.total)?;
        let mut hist = vec![0u64; self.levels.len().max(self.max as usize + 1)];
        for &x in &self.loads {
            hist[x as usize] += 1;
        }
        for (l, &c) in hist.iter().enumerate() {
            if self.level_count(l as u32) != c {
                return Err(format!("level {l}: {} but loads say {c}", self.level_count(l as u32)));
            }
        }
        Ok(())
    }
}

/// The largest load and the number of zero loads, in one vectorised pass. `total` is the sum
/// of the loads: below 2^31 every load fits an `i32`, and the maximum is taken on signed
/// lanes (a compare and a select; baseline x86-64 has no unsigned 32-bit compare).
#[inline]
fn max_and_zeros(loads: &[u32], total: u64) -> (u32, u32) {
    let mut empty = 0u32;
    if total < 1 << 31 {
        let mut max = 0i32;
        for &x in loads {
            max = max.max(x as i32);
            empty += u32::from(x == 0);
        }
        (max as u32, empty)
    } else {
        let mut max = 0u32;
        for &x in loads {
            max = max.max(x);
            empty += u32::from(x == 0);
        }
        (max, empty)
    }
}

/// `m` balls in `n` bins as evenly as possible: every bin gets `⌊m/n⌋` and the first
/// `m mod n` bins one more (the start of RBB and of the infinite Azar process).
pub fn uniform_loads(n: usize, m: u64) -> Vec<u32> {
    let base = m / n as u64;
    let extra = (m % n as u64) as usize;
    (0..n).map(|i| (base + u64::from(i < extra)) as u32).collect()
}

fn check_common(loads: &[u32], max: u32, total: u64) -> Result<(), String> {
    let naive_max = loads.iter().copied().max().unwrap_or(0);
    if naive_max != max {
        return Err(format!("max {max} but loads say {naive_max}"));
    }
    let naive_total: u64 = loads.iter().map(|&x| u64::from(x)).sum();
    if naive_total != total {
        return Err(format!("total {total} but loads say {naive_total}"));
    }
    Ok(())
}
