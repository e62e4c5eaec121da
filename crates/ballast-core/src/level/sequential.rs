//! The sequential d-Choice hot loop of the level engine, for runs without per-ball observers.
//!
//! Per ball: one 64-bit word gives two uniform positions (Lemire's multiply-shift on each
//! 32-bit half; the smaller position is the lightest of the two sampled bins), a bucket table
//! maps the position to its level, and one bin of that level moves up. No division, no
//! search, and no unpredictable branch in the common case.
//!
//! - **Rank → level**: [`RankIndex`] stores the level of the first position of each of at
//!   most 1024 buckets of 2^shift positions; the level of a position is its bucket's entry,
//!   then a short upward scan over the level boundaries inside the bucket (rarely any: a
//!   d-Choice histogram has a handful of levels). A ball moves one level boundary down by
//!   one position, which changes at most one entry.
//! - **Levels** live in a fixed array with spare empty levels on top, so the loop never grows
//!   a vector; the lowest level emptying (about once per n balls) shifts the array.
//! - **Random words** come from a child generator, [`ChildRng`]: a [`crate::SimRng`] seeded
//!   with two words of the run's generator. Owning its state lets the loop generate words in
//!   blocks of [`QUEUE_WORDS`] along four interleaved multiplier chains (jump-ahead by M⁴),
//!   which breaks the 128-bit multiply latency chain of one-word-at-a-time generation; the
//!   words are the child's `next_u64` sequence exactly. A block never holds more words than
//!   the balls left need (each ball takes at least one), and extra words (a rejected Lemire
//!   half, d > 2) are taken from the block first, then from the child: the loop consumes
//!   the same words in the same order as the ball-by-ball loop of
//!   [`super::run_seq_law`] (which draws from the same child), so both give the same
//!   result for the same seed (tested).

use std::hint::select_unpredictable;

use rand::RngCore;

use super::chunked::ChunkLaw;
use super::pair::{self, PairLaw};
use super::thinning::ThinCut;
use crate::histogram::LevelLoads;
use crate::rng::{below_from_word, bernoulli, bernoulli_word};

/// Levels of the fixed array: room for [`FAST_LEVELS`] plus one new level per ball of a
/// block.
const KERNEL_LEVELS: usize = 128;

/// The fixed array is used while the histogram has at most this many levels, checked once
/// per block (a block of [`QUEUE_WORDS`] balls adds at most that many levels); wider
/// histograms go ball by ball on the vector.
const FAST_LEVELS: usize = 48;

const _: () = assert!(FAST_LEVELS + QUEUE_WORDS < KERNEL_LEVELS && KERNEL_LEVELS <= 256);

/// Entries of the bucket table.
const TABLE: usize = 1024;

/// Words per block of random words.
pub(super) const QUEUE_WORDS: usize = 64;

/// The multiplier of PCG-64 MCG (`rand_pcg::Pcg64Mcg`, i.e. [`crate::SimRng`]).
const MCG_MUL: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;

/// PCG's XSL RR output function (as `rand_pcg`).
#[inline(always)]
fn xsl_rr(state: u128) -> u64 {
    let rot = (state >> 122) as u32;
    let xsl = ((state >> 64) as u64) ^ (state as u64);
    xsl.rotate_right(rot)
}

/// The generator of the sequential d-Choice loops: a [`crate::SimRng`] (PCG-64 MCG, same
/// multiplier and output function; `next_u32` is the low half of `next_u64`) whose state
/// the loop owns, seeded from two words of the run's generator.
#[derive(Clone, Debug)]
pub(crate) struct ChildRng {
    state: u128,
    /// Words taken from a block beyond the first of each ball (counted by the slow paths,
    /// so the ball loop needs no ball counter).
    extra: u64,
}

impl ChildRng {
    /// Seeds from the next two words of `rng` (low word first), as
    /// `Pcg64Mcg::new(lo | hi << 64)` would.
    pub(crate) fn from_parent<R: RngCore + ?Sized>(rng: &mut R) -> Self {
        let lo = rng.next_u64();
        let hi = rng.next_u64();
        Self { state: (u128::from(hi) << 64 | u128::from(lo)) | 1, extra: 0 }
    }

    /// Fills `buf` with the next `buf.len()` words; full blocks along four interleaved
    /// chains (the same words as calling `next_u64` in turn).
    #[inline(always)]
    pub(super) fn fill(&mut self, buf: &mut [u64]) {
        if buf.len() == QUEUE_WORDS {
            const M2: u128 = MCG_MUL.wrapping_mul(MCG_MUL);
            const M3: u128 = M2.wrapping_mul(MCG_MUL);
            const M4: u128 = M2.wrapping_mul(M2);
            let s0 = self.state;
            let mut s = [
                s0.wrapping_mul(MCG_MUL),
                s0.wrapping_mul(M2),
                s0.wrapping_mul(M3),
                s0.wrapping_mul(M4),
            ];
            let mut last = s0;
            for quad in buf.chunks_exact_mut(4) {
                for (w, st) in quad.iter_mut().zip(&mut s) {
                    *w = xsl_rr(*st);
                }
                last = s[3];
                for st in &mut s {
                    *st = st.wrapping_mul(M4);
                }
            }
            self.state = last;
        } else {
            for w in buf {
                *w = self.next_u64();
            }
        }
    }
}

impl RngCore for ChildRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_mul(MCG_MUL);
        xsl_rr(self.state)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(8) {
            let w = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
}

/// Bucketed rank → level map: `table[i]` is the level index of position `i·2^shift`.
#[derive(Clone, Debug)]
pub(super) struct RankIndex {
    shift: u32,
    /// Buckets in use: `(n − 1) >> shift` + 1.
    used: usize,
    table: Box<[u8; TABLE]>,
    /// The table does not describe the histogram (after the vector path).
    stale: bool,
}

impl RankIndex {
    /// An index for `n` bins (built on first use).
    pub(super) fn new(n: u64) -> Self {
        let mut shift = 0;
        while (n - 1) >> shift >= TABLE as u64 {
            shift += 1;
        }
        let used = ((n - 1) >> shift) as usize + 1;
        Self { shift, used, table: Box::new([0; TABLE]), stale: true }
    }

    /// Marks the table as not describing the histogram (after another step changed it).
    pub(super) fn invalidate(&mut self) {
        self.stale = true;
    }

    /// Rebuilds the table from `st` (at most [`FAST_LEVELS`] levels).
    fn rebuild(&mut self, st: &LevelLoads) {
        debug_assert!(st.levels() <= FAST_LEVELS);
        for (i, t) in self.table[..self.used].iter_mut().enumerate() {
            *t = st.level_of((i as u64) << self.shift) as u8;
        }
        self.stale = false;
    }

    /// Whether the table describes `st` (debug assertions).
    fn matches(&self, st: &LevelLoads) -> bool {
        self.table[..self.used]
            .iter()
            .enumerate()
            .all(|(i, &t)| usize::from(t) == st.level_of((i as u64) << self.shift))
    }
}

/// The words of a block after the first word of the current ball, and how many of them the
/// ball took; further words come from the generator.
struct Extra<'a> {
    rest: &'a [u64],
    used: usize,
    rng: &'a mut ChildRng,
}

impl Extra<'_> {
    #[inline]
    fn next(&mut self) -> u64 {
        match self.rest.get(self.used) {
            Some(&w) => {
                self.used += 1;
                w
            }
            None => self.rng.next_u64(),
        }
    }

    /// A uniform position in `0..n` from `word`, or, if `word` is rejected, Lemire's method
    /// on further words (as [`crate::rng::below`], whose `next_u32` is the low half of the
    /// next word).
    #[inline]
    fn position(&mut self, word: u32, n: u64) -> u64 {
        let mut word = word;
        loop {
            if let Some(p) = below_from_word(word, n as u32) {
                return u64::from(p);
            }
            word = self.next() as u32;
        }
    }
}

/// The smaller of the two positions in `0..n` given by the halves of `w`, and the number of
/// further block words used.
#[inline(always)]
fn two_positions(w: u64, n: u64, rest: &[u64], rng: &mut ChildRng) -> (u64, usize) {
    let (a, b, used) = both_positions(w, n, rest, rng);
    (a.min(b), used)
}

/// The two positions in `0..n` given by the halves of `w` (low half first), and the number
/// of further block words used. The common case needs no division; a half whose low product
/// is below `n` takes the exact rejection test (probability < 2n/2³² per word).
#[inline(always)]
fn both_positions(w: u64, n: u64, rest: &[u64], rng: &mut ChildRng) -> (u64, u64, usize) {
    let a = (w & 0xffff_ffff) * n;
    let b = (w >> 32) * n;
    if (a as u32) < n as u32 || (b as u32) < n as u32 {
        both_positions_slow(w, n, rest, rng)
    } else {
        (a >> 32, b >> 32, 0)
    }
}

/// The position in `0..n` given by the low half of `w` (the high half is the caller's), and
/// the number of further block words used: the low half of [`both_positions`].
#[inline(always)]
pub(super) fn low_position(w: u64, n: u64, rest: &[u64], rng: &mut ChildRng) -> (u64, usize) {
    let a = (w & 0xffff_ffff) * n;
    if (a as u32) < n as u32 {
        low_position_slow(w, n, rest, rng)
    } else {
        (a >> 32, 0)
    }
}

/// [`low_position`] with the rejection test.
#[cold]
#[inline(never)]
fn low_position_slow(w: u64, n: u64, rest: &[u64], rng: &mut ChildRng) -> (u64, usize) {
    let mut x = Extra { rest, used: 0, rng };
    let a = x.position(w as u32, n);
    x.rng.extra += x.used as u64;
    (a, x.used)
}

/// [`both_positions`] with the rejection tests, lower half first.
#[cold]
#[inline(never)]
fn both_positions_slow(w: u64, n: u64, rest: &[u64], rng: &mut ChildRng) -> (u64, u64, usize) {
    let mut x = Extra { rest, used: 0, rng };
    let a = x.position(w as u32, n);
    let b = x.position((w >> 32) as u32, n);
    x.rng.extra += x.used as u64;
    (a, b, x.used)
}

/// The two positions of the word after a ball's coin word: the next block word if there is
/// one (counted in `rng.extra`), else the generator's; and the block words used.
#[inline(always)]
fn positions_after_coin(n: u64, rest: &[u64], rng: &mut ChildRng) -> (u64, u64, usize) {
    match rest.split_first() {
        Some((&w, tail)) => {
            rng.extra += 1;
            let (a, b, used) = both_positions(w, n, tail, rng);
            (a, b, used + 1)
        }
        None => {
            let w = rng.next_u64();
            both_positions(w, n, &[], rng)
        }
    }
}

/// [`d_positions`] for `d = 3` with the common case inline: the halves of `w` and the low
/// half of the next block word, none rejected (otherwise, or at a block end, the general
/// path, which then takes the same words).
#[inline(always)]
fn three_positions(w: u64, n: u64, rest: &[u64], rng: &mut ChildRng) -> (u64, usize) {
    if let Some(&w2) = rest.first() {
        let a = (w & 0xffff_ffff) * n;
        let b = (w >> 32) * n;
        let c = (w2 & 0xffff_ffff) * n;
        if (a as u32) >= n as u32 && (b as u32) >= n as u32 && (c as u32) >= n as u32 {
            return ((a >> 32).min(b >> 32).min(c >> 32), 1);
        }
    }
    d_positions(w, n, 3, rest, rng)
}

/// The smallest of `d >= 3` positions: two per word, then one from a final low half.
#[inline(never)]
fn d_positions(w: u64, n: u64, d: u32, rest: &[u64], rng: &mut ChildRng) -> (u64, usize) {
    let mut x = Extra { rest, used: 0, rng };
    let mut p = x.position(w as u32, n).min(x.position((w >> 32) as u32, n));
    let mut left = d - 2;
    while left >= 2 {
        let w = x.next();
        p = p.min(x.position(w as u32, n)).min(x.position((w >> 32) as u32, n));
        left -= 2;
    }
    if left == 1 {
        let w = x.next() as u32;
        p = p.min(x.position(w, n));
    }
    x.rng.extra += x.used as u64;
    (p, x.used)
}

/// Sequential d-Choice (`d >= 2`) for `balls` balls on `st`, without observers.
pub(super) fn d_choice_balls(
    st: &mut LevelLoads,
    d: u32,
    balls: u64,
    index: &mut RankIndex,
    rng: &mut ChildRng,
) {
    debug_assert!(d >= 2 && st.n <= u64::from(u32::MAX));
    let n = st.n;
    // A local copy keeps the generator's state out of memory in the loop.
    let mut child = rng.clone();
    if d == 2 {
        indexed_balls(st, balls, index, &mut child, |w, rest, rng, lv| {
            let (p, used) = two_positions(w, n, rest, rng);
            (lv.of(p), used)
        });
    } else {
        indexed_balls(st, balls, index, &mut child, |w, rest, rng, lv| {
            let (p, used) = d_positions(w, n, d, rest, rng);
            (lv.of(p), used)
        });
    }
    *rng = child;
}

/// Sequential balls of a destination law that reads no loads ((1+β), Quantile, mixed
/// Quantile, d-Choice) for `balls` balls on `st`, without observers: the block loop of
/// [`d_choice_balls`] with the position of [`law_position`], word for word (tested).
/// Returns the bin samples drawn.
///
/// Every ball takes whole words: the coin word of (1+β) and mixed Quantile (none for plain
/// Quantile), then one word whose halves give two uniform positions, the second of which is
/// used only by a two-sample step. So the decision between one sample and two is a select,
/// not a branch on how many random numbers the ball takes.
pub(super) fn law_balls(
    st: &mut LevelLoads,
    law: &ChunkLaw,
    balls: u64,
    index: &mut RankIndex,
    rng: &mut ChildRng,
) -> u64 {
    debug_assert!(st.n <= u64::from(u32::MAX));
    let n = st.n;
    if let ChunkLaw::DChoice { d } = *law {
        d_choice_balls(st, d, balls, index, rng);
        return u64::from(d) * balls;
    }
    // A local copy keeps the generator's state out of memory in the loop.
    let mut child = rng.clone();
    // Balls that took a second sample.
    let mut seconds = 0u64;
    match *law {
        ChunkLaw::DChoice { .. } => unreachable!("returned above"),
        ChunkLaw::OnePlusBeta { beta } => {
            indexed_balls(st, balls, index, &mut child, |w, rest, rng, lv| {
                let two = bernoulli_word(w, beta);
                let (a, b, used) = positions_after_coin(n, rest, rng);
                seconds += u64::from(two);
                (lv.of(select_unpredictable(two, a.min(b), a)), used)
            });
        }
        ChunkLaw::Quantile { heavy, eta } if eta >= 1.0 => {
            let cut = n - heavy;
            indexed_balls(st, balls, index, &mut child, |w, rest, rng, lv| {
                let (a, b, used) = both_positions(w, n, rest, rng);
                let resample = a >= cut;
                seconds += u64::from(resample);
                (lv.of(select_unpredictable(resample, b, a)), used)
            });
        }
        ChunkLaw::Quantile { heavy, eta } => {
            let cut = n - heavy;
            indexed_balls(st, balls, index, &mut child, |w, rest, rng, lv| {
                let quantile = bernoulli_word(w, eta);
                let (a, b, used) = positions_after_coin(n, rest, rng);
                let resample = quantile & (a >= cut);
                seconds += u64::from(resample);
                (lv.of(select_unpredictable(resample, b, a)), used)
            });
        }
    }
    *rng = child;
    balls + seconds
}

/// One ball of `law` on `n` positions, one draw at a time: the ball-by-ball form of
/// [`law_balls`] (the observed loop uses it, and the tests compare the block loop against
/// it word for word). Returns the position and the bin samples of the ball.
#[inline]
pub(super) fn law_position(law: &ChunkLaw, n: u64, rng: &mut ChildRng) -> (u64, u64) {
    let pair = |rng: &mut ChildRng| pair_positions(n, rng);
    match *law {
        ChunkLaw::DChoice { d } => (min_position(d, n, rng), u64::from(d)),
        ChunkLaw::OnePlusBeta { beta } => {
            let two = bernoulli(rng, beta);
            let (a, b) = pair(rng);
            if two {
                (a.min(b), 2)
            } else {
                (a, 1)
            }
        }
        ChunkLaw::Quantile { heavy, eta } => {
            let quantile = eta >= 1.0 || bernoulli(rng, eta);
            let (a, b) = pair(rng);
            if quantile && a >= n - heavy {
                (b, 2)
            } else {
                (a, 1)
            }
        }
    }
}

/// Two uniform positions in `0..n` from the halves of the next word (low half first), one
/// draw at a time: the ball-by-ball form of [`both_positions`].
#[inline]
fn pair_positions(n: u64, rng: &mut ChildRng) -> (u64, u64) {
    let w = rng.next_u64();
    let a = position(w as u32, n, rng);
    (a, position((w >> 32) as u32, n, rng))
}

/// Sequential balls of a load-comparing two-sample rule ([`PairLaw`]: g-Bounded, g-Myopic,
/// σ-Noisy-Load) for `balls` balls on `st`, without observers: the block loop of
/// [`d_choice_balls`] with two level lookups per ball, word for word as [`pair_level`]
/// (tested). A ball takes the coin word of σ-Noisy-Load (none for the others), then one word
/// whose halves are its two positions. While the lowest load is below
/// [`pair::NoiseTable::exact_from`] the noise's decision reads the pair of loads
/// ([`pair::NoiseTable::choose_at`]), from the block's current lowest load.
pub(super) fn pair_balls(
    st: &mut LevelLoads,
    law: &mut PairLaw,
    balls: u64,
    index: &mut RankIndex,
    rng: &mut ChildRng,
) {
    debug_assert!(st.n <= u64::from(u32::MAX));
    let n = st.n;
    // A local copy keeps the generator's state out of memory in the loop.
    let mut child = rng.clone();
    match law {
        PairLaw::GBounded { g } => {
            indexed_balls(st, balls, index, &mut child, |w, rest, rng, lv| {
                let (a, b, used) = both_positions(w, n, rest, rng);
                (pair::g_bounded(lv.of(a), lv.of(b), *g), used)
            });
        }
        PairLaw::GMyopic { g } => {
            indexed_balls(st, balls, index, &mut child, |w, rest, rng, lv| {
                let (a, b, used) = both_positions(w, n, rest, rng);
                (pair::g_myopic(lv.of(a), lv.of(b), *g), used)
            });
        }
        PairLaw::Noisy(table) => {
            indexed_balls(st, balls, index, &mut child, |w, rest, rng, lv| {
                let (a, b, used) = positions_after_coin(n, rest, rng);
                (table.choose_at(lv.lo(), lv.of(a), lv.of(b), w), used)
            });
        }
    }
    *rng = child;
}

/// One ball of `law` on `st`, one draw at a time: the ball-by-ball form of [`pair_balls`].
/// Returns the level that gets the ball.
#[inline]
pub(super) fn pair_level(law: &mut PairLaw, st: &LevelLoads, rng: &mut ChildRng) -> usize {
    let coin = if law.has_coin() { rng.next_u64() } else { 0 };
    let (a, b) = pair_positions(st.n, rng);
    law.choose_at(st.min_load(), st.level_of(a), st.level_of(b), coin)
}

/// Sequential two-thinning (Threshold, Mean-Thinning, Relative-Threshold; [`ThinCut`]) for
/// `balls` balls on `st`, without observers: the block loop of [`d_choice_balls`], word for
/// word as [`thin_level`] (tested). A ball takes one word whose halves are its two positions;
/// the first sample's level keeps the ball when its load is below the cut at the ball's
/// total, else the second's gets it (both levels are looked up, and the choice is a
/// select). Returns the bin samples drawn (one per ball, two for the balls the first
/// sample did not keep).
pub(super) fn thin_balls(
    st: &mut LevelLoads,
    cut: &mut ThinCut,
    balls: u64,
    index: &mut RankIndex,
    rng: &mut ChildRng,
) -> u64 {
    debug_assert!(st.n <= u64::from(u32::MAX));
    let n = st.n;
    // A local copy keeps the generator's state out of memory in the loop.
    let mut child = rng.clone();
    // The ball's total: each call of the closure places one ball.
    let mut w = st.total;
    let mut seconds = 0u64;
    indexed_balls(st, balls, index, &mut child, |word, rest, rng, lv| {
        let (a, b, used) = both_positions(word, n, rest, rng);
        let first = lv.of(a);
        let keep = cut.keeps(lv.lo() + first as u64, w);
        w += 1;
        seconds += u64::from(!keep);
        (select_unpredictable(keep, first, lv.of(b)), used)
    });
    *rng = child;
    balls + seconds
}

/// One ball of two-thinning on `st`, one draw at a time: the ball-by-ball form of
/// [`thin_balls`]. Returns the level that gets the ball and the ball's bin samples.
#[inline]
pub(super) fn thin_level(cut: &mut ThinCut, st: &LevelLoads, rng: &mut ChildRng) -> (usize, u64) {
    let (a, b) = pair_positions(st.n, rng);
    let first = st.level_of(a);
    if cut.keeps(st.min_load() + first as u64, st.total) {
        (first, 1)
    } else {
        (st.level_of(b), 2)
    }
}

/// A uniform position in `0..n` from the 32-bit `word`, or, if it is rejected, from
/// [`crate::rng::below`] on the generator: the one-draw-at-a-time form of
/// [`Extra::position`].
#[inline]
pub(super) fn position(word: u32, n: u64, rng: &mut ChildRng) -> u64 {
    match below_from_word(word, n as u32) {
        Some(p) => u64::from(p),
        None => crate::rng::below(rng, n),
    }
}

/// The level of a position during a block loop: the bucket table and the loop's local
/// boundaries on the fast path, the histogram itself on the vector path. The loop builds the
/// variant at the call of the ball's closure, so after inlining the match costs nothing.
pub(super) enum Levels<'a> {
    /// `lo`: the load of level 0 (the histogram's, plus the levels dropped in this block).
    Fast {
        lv: &'a [u64; KERNEL_LEVELS],
        table: &'a [u8; TABLE],
        shift: u32,
        lo: u64,
    },
    Wide(&'a LevelLoads),
}

impl Levels<'_> {
    /// The load of level 0, the lowest load.
    #[inline(always)]
    pub(super) fn lo(&self) -> u64 {
        match *self {
            Levels::Fast { lo, .. } => lo,
            Levels::Wide(st) => st.lo,
        }
    }

    /// Level index of position `p`.
    #[inline(always)]
    pub(super) fn of(&self, p: u64) -> usize {
        match *self {
            // The bucket's level, then the boundaries inside the bucket. The scan stops at
            // the top level (lv = n > p); the masks only spare bounds checks.
            Levels::Fast { lv, table, shift, .. } => {
                let mut j = usize::from(table[(p >> shift) as usize & (TABLE - 1)]);
                while lv[j & (KERNEL_LEVELS - 1)] <= p {
                    j += 1;
                }
                j & (KERNEL_LEVELS - 1)
            }
            Levels::Wide(st) => st.level_of(p),
        }
    }

    /// The number of positions at level `j` or below (`j` a level of the histogram).
    #[inline(always)]
    pub(super) fn end(&self, j: usize) -> u64 {
        match *self {
            Levels::Fast { lv, .. } => lv[j & (KERNEL_LEVELS - 1)],
            Levels::Wide(st) => st.cum[j],
        }
    }
}

/// `balls` balls, each to a bin of level `draw(first word, rest of the block, rng, levels)`,
/// which returns the level and the block words it used after the first (also counted in
/// `rng.extra`).
#[inline(always)]
pub(super) fn indexed_balls<F>(
    st: &mut LevelLoads,
    balls: u64,
    index: &mut RankIndex,
    rng: &mut ChildRng,
    mut draw: F,
) where
    F: FnMut(u64, &[u64], &mut ChildRng, &Levels) -> (usize, usize),
{
    let n = st.n;
    let shift = index.shift;
    let mask = (1u64 << shift) - 1;
    let mut buf = [0u64; QUEUE_WORDS];
    let (mut pos, mut len) = (0usize, 0usize);
    let mut done = 0u64;
    while done < balls {
        if st.cum.len() > FAST_LEVELS {
            // A wide histogram: one ball on the vector (as LevelLoads::bump).
            if pos == len {
                len = refill(&mut buf, balls - done, rng);
                pos = 0;
            }
            let w = buf[pos];
            pos += 1;
            let (j, used) = draw(w, &buf[pos..len], rng, &Levels::Wide(st));
            pos += used;
            st.bump(j);
            index.stale = true;
            done += 1;
            continue;
        }
        if index.stale {
            index.rebuild(st);
        }
        debug_assert!(index.matches(st));
        let levels = st.cum.len();
        let mut lv = [n; KERNEL_LEVELS];
        lv[..levels].copy_from_slice(&st.cum);
        let table = &mut index.table;
        let lo = st.lo;
        let mut k = done;
        let mut dropped = 0u64;
        loop {
            if pos == len {
                // Words never outnumber the balls left, so an empty block with balls left
                // means more balls to go.
                if k == balls {
                    break;
                }
                // The histogram may have grown by one level per ball of the last block.
                if lv[FAST_LEVELS] < n {
                    break;
                }
                len = refill(&mut buf, balls - k, rng);
                pos = 0;
            }
            // Balls of this block: words taken minus the extra words of the slow paths.
            let (start, extra) = (pos, rng.extra);
            while pos < len {
                let w = buf[pos];
                pos += 1;
                let levels = Levels::Fast { lv: &lv, table, shift, lo: lo + dropped };
                let (j, used) = draw(w, &buf[pos..len], rng, &levels);
                pos += used;
                let j = j & (KERNEL_LEVELS - 1);
                // One bin of level j moves up: position lv[j] − 1 now belongs to level j + 1.
                let c = lv[j] - 1;
                lv[j] = c;
                if c & mask == 0 {
                    table[(c >> shift) as usize & (TABLE - 1)] += 1;
                    if c == 0 {
                        // The lowest level emptied (j = 0): drop it. About once per n balls.
                        lv.copy_within(1.., 0);
                        lv[KERNEL_LEVELS - 1] = n;
                        dropped += 1;
                        for t in &mut table[..index.used] {
                            *t -= 1;
                        }
                    }
                }
            }
            k += (pos - start) as u64 - (rng.extra - extra);
        }
        // Write back: the top level is the first with lv = n.
        let top = lv.iter().take_while(|&&c| c < n).count();
        st.cum.clear();
        st.cum.extend_from_slice(&lv[..=top]);
        st.lo += dropped;
        st.total += k - done;
        done = k;
    }
}

/// Steps of a multi-ball rule (Packing, Twinning) until `balls` balls are placed, without
/// observers: per step one word from `rng` (a uniform position in its low half, as
/// [`position`]), the level of that position through the bucket table as in
/// [`indexed_balls`], and `want(x, W)` balls (`x` the sample's load, `W` the total before
/// the step) raising that bin level by level (a bin of each level it passes, all alike);
/// the last step is cut at `balls`. `grow` bounds the levels a step adds above the top
/// (a block of steps must fit the fixed level array; above the array's room the steps go
/// on the vector). Returns the samples (one per step), and the balls the last step did not
/// place with the load its bin reached.
#[inline(always)]
pub(super) fn indexed_steps<F: FnMut(u64, u64) -> u64>(
    st: &mut LevelLoads,
    balls: u64,
    grow: u64,
    index: &mut RankIndex,
    rng: &mut ChildRng,
    mut want: F,
) -> (u64, u64, u64) {
    let n = st.n;
    let (shift, mask) = (index.shift, (1u64 << index.shift) - 1);
    // Steps per block: the top grows by at most `grow` levels a step.
    let room = (KERNEL_LEVELS - FAST_LEVELS - 1) as u64;
    let block = if grow > room { 0 } else { room / grow.max(1) };
    let (mut left, mut samples, mut rest, mut climb) = (balls, 0u64, 0u64, 0u64);
    while left > 0 {
        if st.cum.len() > FAST_LEVELS || block == 0 {
            // A wide histogram: one step on the vector.
            let word = rng.next_u64();
            let x = st.lo + st.level_of(position(word as u32, n, rng)) as u64;
            let w = want(x, st.total);
            let k = w.min(left);
            (0..k).for_each(|r| {
                st.bump_load(x + r);
            });
            index.stale = true;
            (left, samples, rest, climb) = (left - k, samples + 1, w - k, x + k);
            continue;
        }
        if index.stale {
            index.rebuild(st);
        }
        debug_assert!(index.matches(st));
        let mut lv = [n; KERNEL_LEVELS];
        lv[..st.cum.len()].copy_from_slice(&st.cum);
        let table = &mut index.table;
        let (mut lo, mut total, mut steps) = (st.lo, st.total, 0u64);
        while left > 0 && steps < block {
            let word = rng.next_u64();
            let p = position(word as u32, n, rng);
            let x = lo + Levels::Fast { lv: &lv, table, shift, lo }.of(p) as u64;
            let w = want(x, total);
            let k = w.min(left);
            for load in x..x + k {
                // One bin of the load's level moves up (the step's bin, level by level).
                let j = (load - lo) as usize & (KERNEL_LEVELS - 1);
                let c = lv[j] - 1;
                lv[j] = c;
                if c & mask == 0 {
                    table[(c >> shift) as usize & (TABLE - 1)] += 1;
                    if c == 0 {
                        // The lowest level emptied: drop it.
                        lv.copy_within(1.., 0);
                        lv[KERNEL_LEVELS - 1] = n;
                        lo += 1;
                        for t in &mut table[..index.used] {
                            *t -= 1;
                        }
                    }
                }
            }
            total += k;
            (left, samples, rest, climb) = (left - k, samples + 1, w - k, x + k);
            steps += 1;
        }
        let top = lv.iter().take_while(|&&c| c < n).count();
        st.cum.clear();
        st.cum.extend_from_slice(&lv[..=top]);
        (st.lo, st.total) = (lo, total);
    }
    (samples, rest, climb)
}

/// Fills the block with `min(QUEUE_WORDS, balls)` words; returns their number.
#[inline(always)]
fn refill(buf: &mut [u64; QUEUE_WORDS], balls: u64, rng: &mut ChildRng) -> usize {
    let k = balls.min(QUEUE_WORDS as u64) as usize;
    rng.fill(&mut buf[..k]);
    k
}

/// `balls` draws of the smallest of `d >= 2` uniform positions in `0..n`, handed to `sink`
/// in order: the words come in blocks as in [`d_choice_balls`], and the positions are those
/// of calling [`min_position`] `balls` times on the same generator (tested). The batched
/// positional rule ([`super::position`]) throws its balls with it.
#[inline(always)]
pub(crate) fn min_positions<F: FnMut(u64)>(
    d: u32,
    n: u64,
    balls: u64,
    rng: &mut ChildRng,
    mut sink: F,
) {
    debug_assert!(d >= 2 && n <= u64::from(u32::MAX));
    let mut child = rng.clone();
    let mut buf = [0u64; QUEUE_WORDS];
    let mut left = balls;
    while left > 0 {
        // Every ball takes at least one word, so a block never outlasts the balls.
        let len = refill(&mut buf, left, &mut child);
        let mut pos = 0;
        while pos < len {
            let w = buf[pos];
            pos += 1;
            let (p, used) = if d == 2 {
                two_positions(w, n, &buf[pos..len], &mut child)
            } else if d == 3 {
                three_positions(w, n, &buf[pos..len], &mut child)
            } else {
                d_positions(w, n, d, &buf[pos..len], &mut child)
            };
            pos += used;
            sink(p);
            left -= 1;
        }
    }
    *rng = child;
}

/// The lightest of `d` uniform positions in `0..n`, one draw at a time: two positions per
/// 64-bit word (Lemire on each half; a rejected half is replaced by a fresh bounded draw).
/// The ball-by-ball form of what [`d_choice_balls`] does in blocks: the observed loop uses it,
/// and the tests compare the block loop against it word for word.
#[inline]
pub(super) fn min_position(d: u32, n: u64, rng: &mut ChildRng) -> u64 {
    let position = |word: u32, rng: &mut ChildRng| position(word, n, rng);
    let mut p = u64::MAX;
    let mut left = d;
    while left >= 2 {
        let w = rng.next_u64();
        p = p.min(position(w as u32, rng)).min(position((w >> 32) as u32, rng));
        left -= 2;
    }
    if left == 1 {
        p = p.min(position(rng.next_u32(), rng));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Accept;

    #[test]
    fn child_words_are_sim_rng_words_in_blocks_and_one_by_one() {
        let mut parent = crate::sim_rng(5);
        let child = ChildRng::from_parent(&mut parent);
        let mut pcg = rand_pcg::Pcg64Mcg::new(child.state);
        let mut a = child.clone();
        let mut buf = [0u64; QUEUE_WORDS];
        let mut words = Vec::new();
        for k in [QUEUE_WORDS, 3, QUEUE_WORDS, 1, QUEUE_WORDS] {
            a.fill(&mut buf[..k]);
            words.extend_from_slice(&buf[..k]);
        }
        words.push(a.next_u64());
        words.push(u64::from(a.next_u32()));
        let mut expect: Vec<u64> = (0..words.len() - 1).map(|_| pcg.next_u64()).collect();
        expect.push(u64::from(pcg.next_u32()));
        assert_eq!(words, expect);
        // Seeding: two parent words, low first, as Pcg64Mcg::new does (state | 1).
        let mut p2 = crate::sim_rng(5);
        let (lo, hi) = (p2.next_u64(), p2.next_u64());
        let mut from_seed = rand_pcg::Pcg64Mcg::new(u128::from(hi) << 64 | u128::from(lo));
        let mut b = ChildRng::from_parent(&mut crate::sim_rng(5));
        assert_eq!(b.next_u64(), from_seed.next_u64());
    }

    /// The laws of the sorted-view rules, and their processes.
    fn laws() -> Vec<(crate::ProcessSpec, ChunkLaw)> {
        use crate::ProcessSpec;
        vec![
            (ProcessSpec::OnePlusBeta { beta: 0.3 }, ChunkLaw::OnePlusBeta { beta: 0.3 }),
            (ProcessSpec::OnePlusBeta { beta: 0.0 }, ChunkLaw::OnePlusBeta { beta: 0.0 }),
            (ProcessSpec::OnePlusBeta { beta: 1.0 }, ChunkLaw::OnePlusBeta { beta: 1.0 }),
            (ProcessSpec::Quantile { delta: 0.5 }, ChunkLaw::Quantile { heavy: 2, eta: 1.0 }),
            (
                ProcessSpec::MixedQuantile { delta: 0.3, eta: 0.6 },
                ChunkLaw::Quantile { heavy: 2, eta: 0.6 },
            ),
        ]
    }

    /// The block loops (`law_balls`, and through it `d_choice_balls`) against the
    /// ball-by-ball draws (`law_position`, and through it `min_position`) word for word: the
    /// same histogram, sample count and generator state after every stretch.
    #[test]
    fn block_loops_match_ball_by_ball_reference_word_for_word() {
        // Small and odd n; n = 2³² − 1 sends nearly every word to the slow path (a low
        // product below n), and n = 3·2³⁰ rejects one half in four, so the slow paths and
        // the rejections run, at block ends too; wide starting histograms take the vector
        // path and come back.
        let starts: Vec<LevelLoads> = vec![
            LevelLoads::new(1),
            LevelLoads::new(2),
            LevelLoads::new(4),
            LevelLoads::new(24),
            LevelLoads::new(5000),
            LevelLoads::new(3 << 30),
            LevelLoads::new(u64::from(u32::MAX)),
            LevelLoads::from_counts(3, &(0..60).map(|j| 1 + j % 3).collect::<Vec<u64>>()),
            LevelLoads::from_counts(0, &[1000, 0, 0, 7, 0, 3]),
            // 48 levels, the top one heavy: the top grows past the fixed array's range
            // within a block, so the loop leaves for the vector path.
            LevelLoads::from_counts(0, &[[1u64; 47].as_slice(), &[1000]].concat()),
        ];
        let d_choice = [2u32, 3, 4].map(|d| ChunkLaw::DChoice { d });
        let all: Vec<ChunkLaw> =
            d_choice.into_iter().chain(laws().into_iter().map(|l| l.1)).collect();
        for (i, start) in starts.into_iter().enumerate() {
            let n = start.bins();
            for (j, &law) in all.iter().enumerate() {
                // A third of the bins heavy, whatever n.
                let law = match law {
                    ChunkLaw::Quantile { eta, .. } => ChunkLaw::Quantile { heavy: n / 3, eta },
                    other => other,
                };
                let seed = 100 * i as u64 + j as u64;
                let (mut a, mut b) = (start.clone(), start.clone());
                let mut ra = ChildRng::from_parent(&mut crate::sim_rng(seed));
                let mut rb = ra.clone();
                let mut index = RankIndex::new(n);
                for chunk in [1u64, 63, 64, 65, 1000, 5000, 7] {
                    let fast = law_balls(&mut a, &law, chunk, &mut index, &mut ra);
                    let mut slow = 0;
                    for _ in 0..chunk {
                        let (p, k) = law_position(&law, n, &mut rb);
                        b.bump(b.level_of(p));
                        slow += k;
                    }
                    assert_eq!(a, b, "start {i}, {law:?}, after a chunk of {chunk}");
                    assert_eq!(fast, slow, "start {i}, {law:?}: samples");
                    assert_eq!(ra.state, rb.state, "start {i}, {law:?}: words consumed");
                }
            }
        }
    }

    /// The block loop of the load-comparing rules (`pair_balls`) against their
    /// ball-by-ball form (`pair_level`) word for word, on the starts of the test above
    /// shifted up past the truncated noise's `exact_from` (15 at σ = 1.2), and from load 0,
    /// below it: there the truncated noise reads the pair of loads, and at n = 1 and 4 the
    /// lowest load crosses `exact_from` inside a block.
    #[test]
    fn pair_loop_matches_ball_by_ball_reference_word_for_word() {
        use crate::process::Noisy;
        let starts: Vec<LevelLoads> = vec![
            LevelLoads::new(1),
            LevelLoads::new(4),
            LevelLoads::new(5000),
            LevelLoads::from_counts(0, &[1000, 0, 0, 7, 0, 3]),
            LevelLoads::from_counts(10, &[[1u64; 47].as_slice(), &[1000]].concat()),
            LevelLoads::from_counts(20, &[1]),
            LevelLoads::from_counts(20, &[4]),
            LevelLoads::from_counts(20, &[5000]),
            LevelLoads::from_counts(20, &[3 << 30]),
            LevelLoads::from_counts(20, &[u64::from(u32::MAX)]),
            LevelLoads::from_counts(23, &(0..60).map(|j| 1 + j % 3).collect::<Vec<u64>>()),
            LevelLoads::from_counts(20, &[1000, 0, 0, 7, 0, 3]),
            LevelLoads::from_counts(20, &[[1u64; 47].as_slice(), &[1000]].concat()),
        ];
        let rules = [
            Noisy::GBounded { g: 0.0 },
            Noisy::GBounded { g: 2.0 },
            Noisy::GMyopic { g: 1.5 },
            Noisy::SigmaNoisyLoad { sigma: 3.0, truncate: false },
            Noisy::SigmaNoisyLoad { sigma: 1.2, truncate: true },
        ];
        for (i, start) in starts.into_iter().enumerate() {
            for (j, &rule) in rules.iter().enumerate() {
                let (mut law, mut reference) = (PairLaw::new(rule), PairLaw::new(rule));
                let (mut a, mut b) = (start.clone(), start.clone());
                let mut ra = ChildRng::from_parent(&mut crate::sim_rng(100 * i as u64 + j as u64));
                let mut rb = ra.clone();
                let mut index = RankIndex::new(start.bins());
                for chunk in [1u64, 63, 64, 65, 1000, 5000, 7] {
                    pair_balls(&mut a, &mut law, chunk, &mut index, &mut ra);
                    for _ in 0..chunk {
                        let j = pair_level(&mut reference, &b, &mut rb);
                        b.bump(j);
                    }
                    assert_eq!(a, b, "start {i}, {rule:?}, after a chunk of {chunk}");
                    assert_eq!(ra.state, rb.state, "start {i}, {rule:?}: words consumed");
                }
            }
        }
    }

    /// The thinning rules, with their wrong variant (the cut one load too low or too high:
    /// `<` for `<=` and back, and a relative threshold off by one).
    fn thinning_cases() -> Vec<(crate::ProcessSpec, Accept, Accept)> {
        use crate::ProcessSpec;
        vec![
            (ProcessSpec::Threshold { f: 1.0 }, Accept::AtMost(1.0), Accept::AtMost(0.0)),
            (
                ProcessSpec::MeanThinning { strict: true },
                Accept::BelowAverage { strict: true },
                Accept::BelowAverage { strict: false },
            ),
            (
                ProcessSpec::MeanThinning { strict: false },
                Accept::BelowAverage { strict: false },
                Accept::BelowAverage { strict: true },
            ),
            (
                ProcessSpec::RelativeThreshold { f: 0.5 },
                Accept::BelowAveragePlus(0.5),
                Accept::BelowAveragePlus(1.5),
            ),
        ]
    }

    /// The block loop of two-thinning (`thin_balls`) against its ball-by-ball form
    /// (`thin_level`) word for word, on the starts of the d-Choice test (small and odd n,
    /// rejection-heavy n, wide histograms) and on starts far from load 0: the same
    /// histogram, sample count and generator state after every stretch. The ball-by-ball
    /// form reads the total from the histogram, so a block loop that does not advance its
    /// total with each ball fails here.
    #[test]
    fn thin_loop_matches_ball_by_ball_reference_word_for_word() {
        let starts: Vec<LevelLoads> = vec![
            LevelLoads::new(1),
            LevelLoads::new(2),
            LevelLoads::new(4),
            LevelLoads::new(5000),
            LevelLoads::new(3 << 30),
            LevelLoads::new(u64::from(u32::MAX)),
            LevelLoads::from_counts(3, &(0..60).map(|j| 1 + j % 3).collect::<Vec<u64>>()),
            LevelLoads::from_counts(0, &[1000, 0, 0, 7, 0, 3]),
            LevelLoads::from_counts(0, &[[1u64; 47].as_slice(), &[1000]].concat()),
            LevelLoads::from_counts(1 << 40, &[3, 5, 2]),
        ];
        let accepts = thinning_cases()
            .into_iter()
            .map(|c| c.1)
            .chain([Accept::AtMost(4.0), Accept::BelowAveragePlus(-1.25)]);
        for (i, start) in starts.into_iter().enumerate() {
            let n = start.bins();
            for (j, accept) in accepts.clone().enumerate() {
                let (mut a, mut b) = (start.clone(), start.clone());
                let (mut ca, mut cb) =
                    (ThinCut::new(accept, n, a.total), ThinCut::new(accept, n, b.total));
                let mut ra = ChildRng::from_parent(&mut crate::sim_rng(100 * i as u64 + j as u64));
                let mut rb = ra.clone();
                let mut index = RankIndex::new(n);
                for chunk in [1u64, 63, 64, 65, 1000, 5000, 7] {
                    let fast = thin_balls(&mut a, &mut ca, chunk, &mut index, &mut ra);
                    let mut slow = 0;
                    for _ in 0..chunk {
                        let (level, k) = thin_level(&mut cb, &b, &mut rb);
                        b.bump(level);
                        slow += k;
                    }
                    assert_eq!(a, b, "start {i}, {accept:?}, after a chunk of {chunk}");
                    assert_eq!(fast, slow, "start {i}, {accept:?}: samples");
                    assert_eq!(ra.state, rb.state, "start {i}, {accept:?}: words consumed");
                }
            }
        }
    }

    /// Seeded two-sample chi-square (α = `ballast_testkit::ALPHA` = 0.001 per comparison,
    /// 20 000 runs a side, seeds 7400 + case for the block loop, 7500 + case for the bin
    /// engine): the whole state after 10 balls on n = 4 bins (sorted loads and the sample
    /// count) from [`thin_balls`] against the bin engine's thinning kernel, which draws one
    /// 32-bit half per sample and tests the loads of bins. Measured: χ² = 24.1 / 51.2 /
    /// 72.0 / 55.1 for Threshold (f = 1), Mean-Thinning strict / not strict and
    /// Relative-Threshold (f = 0.5), against critical values 76.1 / 88.0 / 90.6 / 93.2.
    /// Power: each rule's off-by-one variant ([`thinning_cases`]) gives χ² = 37 023 /
    /// 17 346 / 17 380 / 28 870 and must be rejected; a loop that does not advance its
    /// total gives 39 801 on Mean-Thinning (checked by hand, and caught word for word by
    /// the test above).
    #[test]
    fn thin_loop_has_the_law_of_the_bin_engine() {
        use super::super::law_test::{chi2, on_bins, on_levels};
        const N: u64 = 4;
        const M: u64 = 10;
        const RUNS: u64 = 20_000;
        let empty = LevelLoads::new(N);
        let on_levels = |accept: Accept, seed: u64| {
            on_levels(&empty, RUNS, seed, |st, index, rng| {
                let mut cut = ThinCut::new(accept, N, st.total);
                thin_balls(st, &mut cut, M, index, rng)
            })
        };
        for (case, (process, accept, wrong)) in thinning_cases().into_iter().enumerate() {
            let reference = on_bins(&process, &empty, M, RUNS, 7500 + case as u64);
            let (stat, crit) = chi2(&on_levels(accept, 7400 + case as u64), &reference);
            assert!(stat < crit, "{process:?}: chi2 = {stat:.1}, critical {crit:.1}");
            let (stat, crit) = chi2(&on_levels(wrong, 7400 + case as u64), &reference);
            assert!(
                stat > crit,
                "{process:?}, wrong {wrong:?}: chi2 = {stat:.1}, critical {crit:.1}"
            );
        }
    }

    /// Seeded two-sample chi-square (α = `ballast_testkit::ALPHA` = 0.001 per comparison,
    /// 20 000 runs a side, seeds 7000 + case for the block loop, 7100 + case for the bin
    /// engine): the whole state after 10 balls on n = 4 bins (sorted loads and the sample
    /// count) from [`law_balls`] against the bin engine, whose rules (live ranks, one
    /// 32-bit half per sample) share no code with it. Measured: χ² = 85 / 26 / 13 (critical
    /// 145 / 45 / 30) for (1+β) with β = 0.3 / 0, 1; 65 (106) for Quantile; 83 (134) for
    /// mixed Quantile. Power: the same loop with the bugs one would make, the heavy cut one
    /// position too high (`a > cut`) and the coin of (1+β) inverted, gives χ² = 11 146 to
    /// 39 961, and the test asserts each is rejected.
    #[test]
    fn law_loop_has_the_law_of_the_bin_engine() {
        use super::super::law_test::{chi2, on_bins, on_levels};
        const N: u64 = 4;
        const M: u64 = 10;
        const RUNS: u64 = 20_000;
        let empty = LevelLoads::new(N);
        let on_levels = |law: &ChunkLaw, seed: u64| {
            on_levels(&empty, RUNS, seed, |st, index, rng| law_balls(st, law, M, index, rng))
        };
        let on_bins = |p: &crate::ProcessSpec, seed: u64| on_bins(p, &empty, M, RUNS, seed);
        for (case, (process, law)) in laws().into_iter().enumerate() {
            let reference = on_bins(&process, 7100 + case as u64);
            let (stat, crit) = chi2(&on_levels(&law, 7000 + case as u64), &reference);
            assert!(stat < crit, "{process:?}: chi2 = {stat:.1}, critical {crit:.1}");
            let wrong = match law {
                ChunkLaw::Quantile { heavy, eta } => ChunkLaw::Quantile { heavy: heavy - 1, eta },
                ChunkLaw::OnePlusBeta { beta } if beta != 0.5 => {
                    ChunkLaw::OnePlusBeta { beta: 1.0 - beta }
                }
                _ => continue,
            };
            let (stat, crit) = chi2(&on_levels(&wrong, 7000 + case as u64), &reference);
            assert!(
                stat > crit,
                "{process:?}, wrong {wrong:?}: chi2 = {stat:.1}, critical {crit:.1}"
            );
        }
    }

    #[test]
    fn observed_and_unobserved_loops_give_the_same_runs() {
        use crate::{simulate_observed, Observer, ProcessSpec, RunSpec};
        #[derive(Default)]
        struct Count(u64);
        impl Observer for Count {
            fn on_ball<S: crate::LoadState>(&mut self, _s: &S, _bin: usize, _w: f64) {
                self.0 += 1;
            }
        }
        for (n, m, every, d) in [
            (24u64, 240u64, None, 2u32),
            (1000, 20_000, Some(777), 2),
            (1 << 20, 3 << 20, Some(1 << 20), 2),
            (333, 10_000, Some(1), 3),
        ] {
            let mut spec =
                RunSpec::new(ProcessSpec::DChoice { d }, n, m).engine(crate::Engine::Levels);
            spec.record_trajectory = true;
            spec.observe_every = every;
            for seed in 0..3 {
                let mut count = Count::default();
                let observed =
                    simulate_observed(&spec, &mut crate::sim_rng(seed), &mut count).expect("valid");
                // Ball by ball: without it, n >= CHUNK_MIN_N would take the chunk step,
                // which consumes other draws.
                let fast = crate::simulate_ball_by_ball(&spec, &mut crate::sim_rng(seed), &mut ())
                    .expect("valid");
                assert_eq!(count.0, m);
                assert_eq!(observed, fast, "n = {n}, m = {m}, d = {d}, seed {seed}");
            }
        }
    }

    /// Seeded two-sample chi-square (α = `ballast_testkit::ALPHA` = 0.001 per statistic,
    /// 1500 runs per engine, seeds 9001/9002 and 9101/9102): the loop's law (child generator,
    /// bucket table) against the bin engine at sizes where the table has wide buckets
    /// (n = 5000: 8 positions per bucket) and a few levels. Statistics: max load, min load,
    /// bins at ⌊W/n⌋.
    #[test]
    fn chi_square_against_the_bin_engine_at_larger_n() {
        use crate::{derive_seed, simulate_observed, Engine, LoadState, Observer, ProcessSpec};
        use ballast_testkit::{chi2_critical, chi2_two_sample, histogram};
        #[derive(Default)]
        struct AtFloor(i64);
        impl Observer for AtFloor {
            const PER_BALL: bool = false;
            fn on_observation<S: LoadState>(&mut self, s: &S) {
                let floor = (s.total() / s.n() as f64).floor();
                self.0 = (0..s.n()).filter(|&i| s.load(i).into() == floor).count() as i64;
            }
        }
        let stats = |spec: &crate::RunSpec, seed: u64| -> Vec<[i64; 3]> {
            (0..1500)
                .map(|r| {
                    let mut obs = AtFloor::default();
                    let rng = &mut crate::sim_rng(derive_seed(seed, &[r]));
                    let o = simulate_observed(spec, rng, &mut obs).expect("valid");
                    [o.max_load as i64, o.min_load as i64, obs.0]
                })
                .collect()
        };
        for (d, n, m, seed) in [(2u32, 5000u64, 20_000u64, 9001u64), (3, 3000, 9000, 9101)] {
            let spec = crate::RunSpec::new(ProcessSpec::DChoice { d }, n, m);
            let a = stats(&spec.clone().engine(Engine::Bins), seed);
            let b = stats(&spec.clone().engine(Engine::Levels), seed + 1);
            for k in 0..3 {
                let lo = a.iter().chain(&b).map(|s| s[k]).min().expect("runs");
                let hi = a.iter().chain(&b).map(|s| s[k]).max().expect("runs");
                let len = (hi - lo + 1) as usize;
                let (stat, df) = chi2_two_sample(
                    &histogram(a.iter().map(|s| s[k]), lo, len),
                    &histogram(b.iter().map(|s| s[k]), lo, len),
                );
                assert!(
                    stat < chi2_critical(df),
                    "d = {d}, n = {n}, statistic {k}: chi2 = {stat:.1}, df = {df}"
                );
            }
        }
    }
}
