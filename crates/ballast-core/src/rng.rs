//! Randomness: the named simulation generator, versioned seed derivation, and exact bounded
//! sampling.
//!
//! Results must be reproducible across machines, thread counts and crate upgrades, so the
//! generator is named ([`SimRng`] = PCG-64 MCG, whose output is fixed by its specification),
//! seeds for each run are derived by a documented mixing function ([`derive_seed`], version
//! [`SEED_DERIVATION_VERSION`]), and bounded integers use Lemire's multiply-shift with
//! rejection ([`below`]), which is exact (no modulo bias) and does not depend on `rand`'s
//! internal algorithms.

use rand::{Rng, RngCore, SeedableRng};

/// The generator behind every result: PCG-64 with a 128-bit multiplicative congruential state
/// (`rand_pcg::Pcg64Mcg`). Fast (one 128-bit multiply per 64 bits) and value-stable.
pub type SimRng = rand_pcg::Pcg64Mcg;

/// Version of [`derive_seed`]. Changing the mixing is a value-breaking change: bump this and
/// record it in the CHANGELOG.
pub const SEED_DERIVATION_VERSION: u32 = 1;

/// The SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
#[inline]
pub fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Derives the seed of one unit of work from a master seed and a path of indices (for example
/// `[item_hash, point, run]`).
///
/// Version 1: `h = splitmix64(master ^ 0x6261_6c6c_6173_7431)`, then for each index
/// `h = splitmix64(h ^ splitmix64(index))`. Depends only on its arguments: never on threads,
/// scheduling or shards.
pub fn derive_seed(master: u64, path: &[u64]) -> u64 {
    let mut h = splitmix64(master ^ 0x6261_6c6c_6173_7431);
    for &i in path {
        h = splitmix64(h ^ splitmix64(i));
    }
    h
}

/// A stable 64-bit hash of a string (FNV-1a), for turning item ids into seed-path elements.
pub fn hash_str(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A [`SimRng`] seeded from a 64-bit seed (expanded with SplitMix64 to the 128-bit state).
pub fn sim_rng(seed: u64) -> SimRng {
    let lo = splitmix64(seed);
    let hi = splitmix64(lo ^ seed.rotate_left(17));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&lo.to_le_bytes());
    bytes[8..].copy_from_slice(&hi.to_le_bytes());
    SimRng::from_seed(bytes)
}

/// A uniform integer in `0..n` (`n >= 1`, `n <= 2^32`) by Lemire's multiply-shift with
/// rejection: exact, one 32-bit draw in the common case.
#[inline]
pub fn below<R: RngCore + ?Sized>(rng: &mut R, n: u64) -> u64 {
    debug_assert!((1..=1 << 32).contains(&n));
    if n == 1 << 32 {
        return u64::from(rng.next_u32());
    }
    let n32 = n as u32;
    let mut m = u64::from(rng.next_u32()) * u64::from(n32);
    let mut low = m as u32;
    if low < n32 {
        let threshold = n32.wrapping_neg() % n32;
        while low < threshold {
            m = u64::from(rng.next_u32()) * u64::from(n32);
            low = m as u32;
        }
    }
    m >> 32
}

/// Lemire's method on a caller-supplied 32-bit word; returns `None` when the word must be
/// rejected (probability below `n / 2^32`), so the caller draws afresh.
#[inline]
pub fn below_from_word(word: u32, n: u32) -> Option<u32> {
    let m = u64::from(word) * u64::from(n);
    let low = m as u32;
    if low < n && low < n.wrapping_neg() % n {
        None
    } else {
        Some((m >> 32) as u32)
    }
}

/// `true` with probability `p` (`p` in `[0, 1]`), using 53 random bits.
#[inline]
pub fn bernoulli<R: Rng + ?Sized>(rng: &mut R, p: f64) -> bool {
    bernoulli_word(rng.next_u64(), p)
}

/// [`bernoulli`] on a word already drawn: a uniform in [0, 1) from its top 53 bits, compared
/// with `p`.
#[inline(always)]
pub(crate) fn bernoulli_word(word: u64, p: f64) -> bool {
    ((word >> 11) as f64 * (1.0 / (1u64 << 53) as f64)) < p
}

/// A buffer of random bits, so that fair coins (tie-breaking) cost 1/64 of a draw.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bits {
    word: u64,
    left: u32,
}

impl Bits {
    /// One fair random bit.
    #[inline]
    pub fn coin<R: RngCore + ?Sized>(&mut self, rng: &mut R) -> bool {
        if self.left == 0 {
            self.word = rng.next_u64();
            self.left = 64;
        }
        let b = self.word & 1 == 1;
        self.word >>= 1;
        self.left -= 1;
        b
    }

    /// A fair bit that is consumed only when `cond` holds (else `false` and nothing is
    /// consumed): the same stream as calling [`Bits::coin`] under `if cond`, without a
    /// data-dependent branch, so tie-breaking does not cost a branch misprediction.
    #[inline(always)]
    pub fn coin_if<R: RngCore + ?Sized>(&mut self, cond: bool, rng: &mut R) -> bool {
        if cond & (self.left == 0) {
            self.word = rng.next_u64();
            self.left = 64;
        }
        let c = u32::from(cond);
        let b = cond & (self.word & 1 == 1);
        self.word >>= c;
        self.left -= c;
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derive_seed_is_pinned() {
        // Value stability of seed derivation version 1.
        assert_eq!(SEED_DERIVATION_VERSION, 1);
        let got = [derive_seed(0, &[]), derive_seed(7, &[1, 2, 3]), derive_seed(7, &[1, 2, 4])];
        assert_eq!(got, PINNED_SEEDS);
        assert_ne!(derive_seed(7, &[1, 2]), derive_seed(7, &[2, 1]));
    }

    const PINNED_SEEDS: [u64; 3] =
        [12919007564854608273, 8085826249011672892, 11155471085767549232];

    #[test]
    fn below_is_in_range_and_covers() {
        let mut rng = sim_rng(1);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let v = below(&mut rng, 7);
            assert!(v < 7);
            seen[v as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(below(&mut rng, 1), 0);
    }
}
