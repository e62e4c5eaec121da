//! The decision cache of a rule formula (see the module docs of [`crate::rule_formula`]): a
//! direct-mapped table from the samples' integer loads to the decision as a function of the
//! 53-bit integer `k` behind `u` (`u = k·2⁻⁵³`).
//!
//! An entry holds the key (the `D` loads, packed) and one word: `K · 2⁸` plus the position
//! where `k < K` in bits 0..4 and the one elsewhere in bits 4..8 (equal for a constant
//! decision). With `kk = k · 2⁸ + 255`, `k < K` ⇔ `kk < word` (below `K` the left side is at
//! most `K · 2⁸ − 1`; from `K` on it is at least `K · 2⁸ + 255`, the word's largest value).
//! An entry whose decision is the formula's evaluation (its value depends on `u` in some
//! other way, or is not a position) has bit 63 set in its key, which no key of loads has,
//! so a look-up never takes it for a decision.
//!
//! `u < c` ⇔ `k < K` with `K = ⌈c·2⁵³⌉` clamped to 0..=2⁵³ (0 for a NaN `c`): `k` is
//! below 2⁵³, so `u = k·2⁻⁵³` is exact, and so is `c·2⁵³` (a scaling by a power of two; an
//! overflow to +∞ clamps to 2⁵³, where every `k` is below); an integer `k` is below the real
//! `c·2⁵³` exactly when it is below its ceiling.

use crate::formula::Residual;

/// Deliberately wrong caches, for the power of the tests (`tests/rule_cache.rs`).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheFlaw {
    /// A decision that depends on `u` is stored as the decision at the `u` of the ball that
    /// filled the entry, as if it were constant.
    StepAsConstant,
    /// `K = ⌊c·2⁵³⌋` instead of the ceiling: wrong at the `k` just below a `c·2⁵³` that is
    /// not an integer.
    FloorThreshold,
}

/// The key of an empty entry (a plain entry of no load tuple: keys have at most 62 bits).
const EMPTY: u64 = u64::MAX;
/// The key bit of a plain entry.
const PLAIN: u64 = 1 << 63;
/// Entries of a table (the index has at most 10 bits).
const SIZE: usize = 1024;

#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u64,
    word: u64,
}

/// The layout for `d` samples (1..=3): the bits of one load in a key (loads of that many
/// bits or more are not cached) and in the table index (of [`SIZE`] entries of 16 bytes).
const fn layout(d: usize) -> (u32, u32) {
    match d {
        1 => (32, 10),
        2 => (31, 5),
        _ => (20, 3),
    }
}

/// The cache of one rule (`d <= 3` samples).
pub(super) struct DecisionCache {
    entries: Box<[Entry; SIZE]>,
    /// The number of bins the entries were computed for.
    pub(super) n: usize,
    /// Entries filled since the last reset.
    fills: u64,
    flaw: Option<CacheFlaw>,
}

impl DecisionCache {
    /// A cache for `d` samples (1..=3), empty.
    pub(super) fn new(flaw: Option<CacheFlaw>) -> Self {
        let entries = vec![Entry { key: EMPTY, word: 0 }; SIZE].into_boxed_slice();
        let entries = entries.try_into().expect("SIZE entries");
        Self { entries, n: 0, fills: 0, flaw }
    }

    /// Empties the cache for a run on `n` bins (nothing to clear if nothing was filled).
    pub(super) fn reset(&mut self, n: usize) {
        if self.fills > 0 {
            self.entries.fill(Entry { key: EMPTY, word: 0 });
        }
        (self.n, self.fills) = (n, 0);
    }

    /// The key and the table index of the loads `xs`, if they fit in a key.
    #[inline(always)]
    pub(super) fn slot<const D: usize>(xs: &[u64; D]) -> Option<(u64, usize)> {
        let (width, bits) = layout(D);
        let (mut key, mut idx) = (0u64, 0usize);
        let mask = (1usize << bits) - 1;
        for (j, &x) in xs.iter().enumerate() {
            if x >> width != 0 {
                return None;
            }
            key |= x << (width as usize * j);
            idx |= (x as usize & mask) << (bits as usize * j);
        }
        Some((key, idx))
    }

    /// The cached position for `key` at `kk` ([`probe`]), if the entry holds a decision for
    /// it.
    #[inline(always)]
    pub(super) fn hit(&self, key: u64, idx: usize, kk: u64) -> Option<usize> {
        let e = self.entries[idx % SIZE];
        (e.key == key).then(|| pick(e.word, kk))
    }

    /// Whether the entry at `idx` was filled for `key` and says: evaluate the formula.
    pub(super) fn is_plain(&self, key: u64, idx: usize) -> bool {
        self.entries[idx % SIZE].key == key | PLAIN
    }

    /// Whether the fills so far exceed the budget at ball `t`: about one ball in 16 plus
    /// a start (the loads spread too widely for the table; the formula is then evaluated).
    pub(super) fn over_budget(&self, t: u64) -> bool {
        self.fills > 1024 + t / 16
    }

    /// Stores the decision of `residual` (positions out of 1..=d are plain) for `key` and
    /// returns its word (`None`: plain); `kk` is the current ball's (for the flaw that needs
    /// it).
    pub(super) fn fill(
        &mut self,
        key: u64,
        idx: usize,
        r: Residual,
        d: u32,
        kk: u64,
    ) -> Option<u64> {
        self.fills += 1;
        let word = match r {
            Residual::Const(v) => position(v, d).map(|i| i * 0x11),
            Residual::Step { c, lo, hi } => match (position(lo, d), position(hi, d)) {
                (Some(a), Some(b)) => {
                    let big = threshold(c, self.flaw == Some(CacheFlaw::FloorThreshold));
                    let w = big << 8 | a | b << 4;
                    if self.flaw == Some(CacheFlaw::StepAsConstant) {
                        Some(pick(w, kk) as u64 * 0x11)
                    } else {
                        Some(w)
                    }
                }
                _ => None,
            },
            Residual::Unknown => None,
        };
        self.entries[idx % SIZE] = match word {
            Some(word) => Entry { key, word },
            None => Entry { key: key | PLAIN, word: 0 },
        };
        word
    }
}

/// `kk = k · 2⁸ + 255` for the word of `u` (`k` = its top 53 bits), compared with entry words.
#[inline(always)]
pub(super) fn probe(w: u64) -> u64 {
    (w >> 3) | 0xFF
}

/// The position a word gives at `kk` ([`probe`]).
#[inline(always)]
pub(super) fn pick(word: u64, kk: u64) -> usize {
    let shift = if kk < word { 0 } else { 4 };
    ((word >> shift) & 15) as usize
}

/// `K` with `u < c` ⇔ `k < K` (the module docs); `floor`: the flawed variant.
fn threshold(c: f64, floor: bool) -> u64 {
    let top = (1u64 << 53) as f64;
    let s = c * top;
    if c.is_nan() || s <= 0.0 {
        0
    } else if s >= top {
        1 << 53
    } else if floor {
        s.floor() as u64
    } else {
        s.ceil() as u64
    }
}

/// The 0-based position of a value, as [`super::position`], as a word field.
fn position(v: f64, d: u32) -> Option<u64> {
    super::position(v, d).map(|i| i as u64)
}
