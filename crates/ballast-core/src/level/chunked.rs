//! Exact chunked sequential simulation on the level histogram (`docs/chunked.md`): d-Choice,
//! (1+β), Quantile and mixed Quantile, and two-thinning (`Chunker::run_thin`).
//!
//! A chunk of `s` sequential balls is simulated from the cumulative counts at its start, with
//! a cost of a few binomials per occupied level plus a little work per *ambiguous* ball,
//! instead of one step per ball. The idea, in position space (bins sorted lightest first):
//!
//! - the destination of a d-Choice ball is the smallest of `d` uniform positions, an i.i.d.
//!   position `P` with `P(P >= p) = ((n − p)/n)^d` that does not read the state ((1+β) and
//!   the Quantile rules: a fixed mixture of such laws, see [`ChunkLaw`]);
//! - the state enters only through the boundaries `c_j` (`cum[j]`): the ball lands on level
//!   `#{j : c_j <= P}`, and then `c_j` of that level drops by one; boundaries only go down.
//!
//! So a position far enough below the boundary above it keeps its level during the whole
//! chunk. The step:
//!
//! 1. **Cells**: `M_j`, the number of the chunk's positions in each level's interval
//!    `[c_{j−1}, c_j)` (a multinomial, by conditional binomials bottom up, per ball type).
//! 2. **Windows**, bottom up: at most `w_j = min(s, M_j + A_{<j})` balls can land on level
//!    `j` (its own cell's balls, plus the ambiguous balls of lower cells, `A_{<j}`), so
//!    `c_j` stays above `c_j − w_j` and positions in `[c_{j−1}, c_j − w_j)` are surely on
//!    level `j`. The ambiguous balls of cell `j` are those in the window
//!    `[c_j − w_j, c_j)`: a binomial split of `M_j` (per ball type).
//! 3. **Ambiguous positions** are drawn exactly from the law restricted to their window
//!    (rejection on exact integer weights). A level is *relevant* when it still has sure balls
//!    and an ambiguous position lies in its window: only the relative times of the ambiguous
//!    balls and of the sure balls of relevant levels matter. The ambiguous balls take a
//!    uniform random order and a uniform random set of ranks among those items; the sure
//!    items between two consecutive ambiguous balls are split over the relevant levels by
//!    chained hypergeometric draws.
//! 4. **Resolution** in time order: each ambiguous ball lands on `#{k : c_k − Λ_k <= p}`
//!    with `Λ_k` the landings on level `k` so far (levels above the top, boundary `n`,
//!    included), and that `Λ` grows by one.
//! 5. **Commit**: the new boundaries are `c_k − Λ_k` (sure balls included).
//!
//! Exactness (for every `s >= 1`): every draw samples the conditional law of the chunk's
//! i.i.d. positions and of their (uniform) time order given what earlier draws revealed, and
//! the bound `Λ_j <= w_j` holds surely, so sure balls need no time;
//! `docs/chunked.md#why-it-is-exact`. Masses are exact integers `(hi − a)^d` in `u128`, so
//! the only rounding is that of the binomial probabilities (their ratios as `f64`) and of
//! large hypergeometric draws, the standard of [`crate::binomial`] and of the batch step.
//! Tested against exact Markov-chain laws at tiny `n` and against the ball-by-ball loops at
//! moderate and large `n` (`tests/chunked.rs`).

use rand::RngCore;

use super::pair::PairLaw;
use super::thinning::ThinCut;
use crate::binomial::binomial;
use crate::histogram::LevelLoads;

/// Sequential Two-Choice on the level engine uses chunks from this many bins on; below, the
/// ball-by-ball loop of `level/sequential.rs` is as fast or faster. From the
/// `level_chunked_threshold` bench (m = 100n, loaded 2-core machine): 5.3 vs 5.5 ns per ball
/// (ball by ball vs chunks) at n = 2¹⁶, 6.2 vs 4.0 at 2¹⁷, 5.2 vs 3.1 at 2¹⁸
/// (`docs/chunked.md#measurements`).
pub const CHUNK_MIN_N: u64 = 1 << 17;

/// As [`CHUNK_MIN_N`] for `d >= 3`, whose ball-by-ball loop costs more per ball (17.5 vs 17.4
/// ns per ball at n = 2¹¹, 14.4 vs 9.4 at 2¹³, Three-Choice).
pub const CHUNK_MIN_N_MANY: u64 = 1 << 13;

/// As [`CHUNK_MIN_N`] for (1+β). From the `level_chunked_mixture` bench (β = 0.5, m = 100n,
/// 2026-12-04), ball loop against chunks in Melem/s: 130 vs 72 at n = 2¹⁶, 108 vs 140 at
/// 2¹⁷, 119 vs 185 at 2¹⁸, 108 vs 376 at 2²⁰. (Until value version 5 the ball loop was the
/// generic rule at 23–38 ns per ball, and chunks started at 2¹⁵.)
pub const CHUNK_MIN_N_ONE_PLUS_BETA: u64 = 1 << 17;

/// As [`CHUNK_MIN_N`] for Quantile and mixed Quantile, whose ball loop takes one word per
/// ball: the same bench (δ = 0.5) gives 237 vs 144 Melem/s at n = 2¹⁷, 200 vs 203 at 2¹⁸,
/// 181 vs 342 at 2¹⁹, 233 vs 550 at 2²⁰.
pub const CHUNK_MIN_N_QUANTILE: u64 = 1 << 18;

/// As [`CHUNK_MIN_N`] for two-thinning (Threshold, Mean-Thinning, Relative-Threshold,
/// `Chunker::run_thin`). Measured (m = 1000n, `floor --only mean_thinning,relative
/// --engine levels --reps 3 --m-per-n 1000` with the threshold at 2¹⁴ and at 2¹⁷,
/// 2026-12-04), ball loop / chunks in ns per ball, Mean-Thinning and Relative-Threshold
/// (f = 1): 7.9 / 7.5 and 9.3 / 9.5 at 2¹⁶, 9.7 / 6.4–7.3 and 8.3 / 6.8–8.3 at 2¹⁷, and
/// chunks at 4.1 and 5.0 at 2¹⁸, 2.5 and 2.8 at 2²⁰.
pub const CHUNK_MIN_N_THIN: u64 = 1 << 17;

/// As [`CHUNK_MIN_N`] for σ-Noisy-Load (`Chunker::run_pair`, every window at its widest),
/// whose ball loop is the slowest of the pair rules (a coin word and a table lookup per
/// ball). Measured (`floor --only sigma --engine levels --reps 1`, σ = 4 truncated,
/// 2026-12-04), ball loop / chunks in ns per ball: 10.5 / 9.3 at n = 2¹⁸ (m = 100n),
/// 14.2 / 6.3 at 2¹⁹, 13.7 / 4.5 at 2²⁰, 10.8 / 4.3 at 2²¹ (m = 1000n).
pub const CHUNK_MIN_N_SIGMA_NOISY: u64 = 1 << 19;

/// As [`CHUNK_MIN_N_SIGMA_NOISY`] for g-Myopic (g = 4): 6.8 / 6.2 at 2¹⁹, 4.5 / 4.5 at 2²⁰
/// (m = 1000n), 4.6 / 3.6–4.4 at 2²¹ and 4.5 / 1.9–2.1 at 2²³ (m = 300n).
pub const CHUNK_MIN_N_G_MYOPIC: u64 = 1 << 21;

/// As [`CHUNK_MIN_N_SIGMA_NOISY`] for g-Bounded (g = 4), whose histogram is the widest of
/// the three (more levels: more windows): 6.6 / 6.8 at 2²⁰ (m = 1000n), 5.5 / 5.0–5.2 at
/// 2²¹ and 5.3 / 2.4–3.0 at 2²³ (m = 300n).
pub const CHUNK_MIN_N_G_BOUNDED: u64 = 1 << 22;

/// The smallest `n` from which sequential runs of the pair rule `rule` use chunks under
/// `simulate`.
pub fn chunk_min_n_pair(rule: &crate::process::Noisy) -> u64 {
    use crate::process::Noisy;
    match rule {
        Noisy::GBounded { .. } => CHUNK_MIN_N_G_BOUNDED,
        Noisy::GMyopic { .. } => CHUNK_MIN_N_G_MYOPIC,
        Noisy::SigmaNoisyLoad { .. } => CHUNK_MIN_N_SIGMA_NOISY,
    }
}

/// Chunk size of the pair rules, `⌈CHUNK_KAPPA_PAIR · √n⌉`: their windows are `s` wide at
/// every level, so about `2·L·s²/n` balls of a chunk are ambiguous (`L` the levels wider
/// than `s`), several times as many as for d-Choice at the same `s`. The cost is flat in κ
/// between 0.35 and 0.7 (g-Bounded, g-Myopic at n = 2²¹ and 2²³, m = 300n: within 10 %
/// except g-Bounded at 2²³, 2.5 / 3.0 / 2.4 ns per ball for κ = 0.35 / 0.5 / 0.7); at
/// n = 10⁷ g-Myopic runs 2.0 / 1.5 / 1.6 / 2.1 ns for κ = 0.25 / 0.5 / 0.75 / 1.
pub const CHUNK_KAPPA_PAIR: f64 = 0.5;

/// The automatic chunk size of the pair rules for `n` bins.
pub fn chunk_size_pair(n: u64) -> u64 {
    ((CHUNK_KAPPA_PAIR * (n as f64).sqrt()).ceil() as u64).max(CHUNK_MIN_SIZE)
}

/// The smallest `n` from which sequential runs of `law` use chunks under `simulate`.
pub fn chunk_min_n_law(law: &ChunkLaw) -> u64 {
    match *law {
        ChunkLaw::DChoice { d } => chunk_min_n(d),
        ChunkLaw::OnePlusBeta { .. } => CHUNK_MIN_N_ONE_PLUS_BETA,
        ChunkLaw::Quantile { .. } => CHUNK_MIN_N_QUANTILE,
    }
}

/// The smallest `n` from which sequential `d`-Choice uses chunks under `simulate`.
pub fn chunk_min_n(d: u32) -> u64 {
    if d <= 2 {
        CHUNK_MIN_N
    } else {
        CHUNK_MIN_N_MANY
    }
}

/// Chunk size `s ≈ CHUNK_KAPPA · √n`. The cost per ball, about `C_fix/s + a·C_amb·s/n`, is
/// flat near its optimum: the `level_chunked_kappa` bench (Two-Choice) gives the best
/// values between κ = 1 and 2 at n = 10⁵ … 10⁷ (e.g. 0.45, 0.48, 0.97 ns per ball for
/// κ = 1, 2, 4 at n = 10⁷; 1.8, 1.4, 2.4 at 10⁶).
pub const CHUNK_KAPPA: f64 = 1.5;

/// Smallest automatic chunk.
const CHUNK_MIN_SIZE: u64 = 16;

/// The automatic chunk size for `n` bins (before splitting a stretch evenly).
pub fn chunk_size(n: u64) -> u64 {
    ((CHUNK_KAPPA * (n as f64).sqrt()).ceil() as u64).max(CHUNK_MIN_SIZE)
}

/// Whether chunks can simulate `d`-Choice on `n` bins: `d >= 2` and the masses `n^d` fit in
/// 128 bits.
pub fn chunks_supported(n: u64, d: u32) -> bool {
    d >= 2 && n >= 1 && u128::from(n).checked_pow(d).is_some()
}

/// Deliberately wrong variants of the chunk step, for the power of the exactness tests only.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChunkFlaw {
    /// Every position keeps the level it has at the chunk start (no windows): the batch law.
    AllSure,
    /// Windows of width `min(s, M_j)`: ignores that ambiguous balls of lower cells can land
    /// on level `j`.
    OwnCellWindows,
    /// A pair rule's windows half as wide as the chunk: they miss the positions that more
    /// than half of the chunk's balls landing on one level would move.
    HalfWindows,
    /// Ambiguous balls take the levels of their positions at the chunk start: the chunk-start
    /// histogram decides, as if no ball of the chunk came before them.
    StartLevels,
    /// Two-thinning with the acceptance boundary of the chunk start: every first sample
    /// among the light bins keeps its ball, though the light bins the chunk fills move
    /// their bins past the cut ([`Chunker::run_thin`]).
    ThinFixedCut,
}

/// Work counters of the chunk step, for tuning and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkStats {
    /// Chunks simulated.
    pub chunks: u64,
    /// Balls simulated in chunks.
    pub balls: u64,
    /// Ambiguous balls (resolved in time order).
    pub ambiguous: u64,
    /// Chunks with at least one ambiguous ball.
    pub chunks_with_ambiguous: u64,
    /// Splits of placed sure balls between two groups of relevant levels (`SureTimes`).
    pub multi_level_splits: u64,
    /// Ambiguous balls that landed above the chunk's top level.
    pub above_top: u64,
    /// Ambiguous balls that landed above the level of their cell.
    pub pushed_up: u64,
}

/// A destination law of the chunk step: the smallest of `d` uniform positions of `0..hi`
/// (`d = 1`: a uniform position of `0..hi`), with tail weights `G(a) = (hi − a)^d`
/// (0 from `hi` on), proportional to `P(P >= a)`, exact in `u128`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PosLaw {
    hi: u64,
    d: u32,
}

impl PosLaw {
    /// `(hi − a)^d` for `a < hi`, else 0.
    #[inline]
    fn tail(&self, a: u64) -> u128 {
        u128::from(self.hi.saturating_sub(a)).pow(self.d)
    }

    /// `P(P in [a, b)) / P(P in [c, e))` for `c <= a <= b <= e`, `c < e`.
    #[inline]
    fn ratio(&self, a: u64, b: u64, c: u64, e: u64) -> f64 {
        let num = self.tail(a) - self.tail(b);
        let den = self.tail(c) - self.tail(e);
        debug_assert!(den > 0 && num <= den);
        if num == den {
            1.0
        } else {
            num as f64 / den as f64
        }
    }

    /// A position of `[a, b)` (of positive mass) drawn from the law restricted to it: a
    /// uniform proposal in `[a, min(b, hi))` accepted with probability `f(p)/f(a)`,
    /// `f(p) = G(p) − G(p + 1)` non-increasing, in exact integers (acceptance at least about
    /// `1/d`).
    fn sample_in<R: RngCore + ?Sized>(&self, a: u64, b: u64, rng: &mut R) -> u64 {
        let b = b.min(self.hi);
        debug_assert!(a < b);
        if b - a == 1 {
            return a;
        }
        let fa = self.tail(a) - self.tail(a + 1);
        loop {
            let p = a + below_u64(rng, b - a);
            let fp = self.tail(p) - self.tail(p + 1);
            if fp == fa || below_u128(rng, fa) < fp {
                return p;
            }
        }
    }
}

/// The processes the chunk step simulates: each ball's destination position is drawn from a
/// law that does not read the state, possibly a mixture of ball types with their own law
/// and number of samples (split per chunk by binomials, so that the sample count stays
/// exact jointly with the loads).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChunkLaw {
    /// d-Choice: the smallest of `d >= 2` uniform positions (`d` samples).
    DChoice {
        /// Samples per ball.
        d: u32,
    },
    /// (1+β): with probability β the smaller of two uniform positions (2 samples), else one
    /// uniform position (1 sample).
    OnePlusBeta {
        /// Probability of the two-sample step.
        beta: f64,
    },
    /// Mixed Quantile: with probability `1 − eta` one uniform position (1 sample); else a
    /// uniform first position, kept if it is among the `n − heavy` lightest (1 sample) and
    /// otherwise replaced by a fresh uniform position (2 samples). `eta = 1` is Quantile.
    Quantile {
        /// Number of heavy positions, ⌈δn⌉.
        heavy: u64,
        /// Probability of the Quantile step.
        eta: f64,
    },
}

impl ChunkLaw {
    /// Whether the masses of the law fit in 128 bits for `n` bins.
    pub fn supported(&self, n: u64) -> bool {
        match *self {
            ChunkLaw::DChoice { d } => chunks_supported(n, d),
            ChunkLaw::OnePlusBeta { .. } | ChunkLaw::Quantile { .. } => n >= 1,
        }
    }

    /// Splits the `t` balls of a chunk into ball types with their position law; returns the
    /// number of bin samples they draw.
    fn split<R: RngCore + ?Sized>(
        &self,
        n: u64,
        t: u64,
        rng: &mut R,
        parts: &mut Vec<(PosLaw, u64)>,
    ) -> u64 {
        parts.clear();
        let uniform = PosLaw { hi: n, d: 1 };
        match *self {
            ChunkLaw::DChoice { d } => {
                parts.push((PosLaw { hi: n, d }, t));
                t * u64::from(d)
            }
            ChunkLaw::OnePlusBeta { beta } => {
                let two = binomial(rng, t, beta);
                parts.push((PosLaw { hi: n, d: 2 }, two));
                parts.push((uniform, t - two));
                t + two
            }
            ChunkLaw::Quantile { heavy, eta } => {
                // One-sample steps (1 − η), then among the Quantile steps those whose first
                // position is heavy (a fresh uniform position) or light (kept: uniform on
                // the light positions).
                let one = if eta < 1.0 { t - binomial(rng, t, eta) } else { 0 };
                let heavy_first = binomial(rng, t - one, heavy as f64 / n as f64);
                let light = t - one - heavy_first;
                parts.push((uniform, one + heavy_first));
                if light > 0 {
                    parts.push((PosLaw { hi: n - heavy, d: 1 }, light));
                }
                t + heavy_first
            }
        }
    }
}

/// The sizes of the chunks of a stretch of `balls` balls in chunks of at most `s`:
/// `⌈balls/s⌉` chunks of nearly equal size.
fn even_chunks(balls: u64, s: u64) -> impl Iterator<Item = u64> {
    let chunks = balls.div_ceil(s.max(1));
    let mut left = balls;
    (0..chunks).map(move |i| {
        let t = left.div_ceil(chunks - i);
        left -= t;
        t
    })
}

/// A uniform integer in `0..bound` (`bound >= 1`), Lemire's method on 64-bit words.
#[inline]
fn below_u64<R: RngCore + ?Sized>(rng: &mut R, bound: u64) -> u64 {
    debug_assert!(bound >= 1);
    let mut m = u128::from(rng.next_u64()) * u128::from(bound);
    if (m as u64) < bound {
        let threshold = bound.wrapping_neg() % bound;
        while (m as u64) < threshold {
            m = u128::from(rng.next_u64()) * u128::from(bound);
        }
    }
    (m >> 64) as u64
}

/// A uniform integer in `0..bound` (`bound >= 1`): [`below_u64`] when it fits, else masked
/// rejection on two words (acceptance above 1/2).
fn below_u128<R: RngCore + ?Sized>(rng: &mut R, bound: u128) -> u128 {
    if let Ok(b) = u64::try_from(bound) {
        return u128::from(below_u64(rng, b));
    }
    let mask = u128::MAX >> (bound - 1).leading_zeros();
    loop {
        let x = (u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())) & mask;
        if x < bound {
            return x;
        }
    }
}

/// Below this many items of the smaller role, [`hypergeometric`] places them one by one.
const HYPER_SEQUENTIAL_MAX: u64 = 24;

/// A `Hypergeometric(population, successes, draws)` variate (successes among `draws` items
/// taken without replacement). With `k` the smaller class and `g` the smaller side of the
/// split: if `min(k, g) <= HYPER_SEQUENTIAL_MAX`, sequential placement in exact integers
/// (O(min(k, g)) uniform integers); else inversion by a search outward from the mode
/// (O(standard deviation) steps), with the probability at the mode from log-factorials and
/// the others by the exact ratio recurrence, so only floating-point rounding remains (as in
/// [`crate::binomial`]).
fn hypergeometric<R: RngCore + ?Sized>(
    rng: &mut R,
    population: u64,
    successes: u64,
    draws: u64,
) -> u64 {
    debug_assert!(successes <= population && draws <= population);
    if draws == 0 || successes == 0 {
        return 0;
    }
    if successes == population {
        return draws;
    }
    if draws == population {
        return successes;
    }
    // Minority class (k items) and smaller side of the split (g slots).
    let flip_k = successes > population - successes;
    let k = if flip_k { population - successes } else { successes };
    let flip_g = draws > population - draws;
    let g = if flip_g { population - draws } else { draws };
    let x = if k.min(g) <= HYPER_SEQUENTIAL_MAX {
        hyper_sequential(rng, population, k, g)
    } else {
        hyper_mode_search(rng, population, k, g)
    };
    // x = minority items among the g slots.
    let in_draws = if flip_g { k - x } else { x };
    if flip_k {
        draws - in_draws
    } else {
        in_draws
    }
}

/// Minority items (`k` of `pop`) among `g` slots, by placing the smaller of the two one by
/// one in exact integers.
fn hyper_sequential<R: RngCore + ?Sized>(rng: &mut R, pop: u64, k: u64, g: u64) -> u64 {
    let mut x = 0u64;
    if k <= g {
        // Put the k items into uniform free slots; count those among the g first.
        for i in 0..k {
            if below_u64(rng, pop - i) < g - x {
                x += 1;
            }
        }
    } else {
        // Take g items one by one; count the minority ones.
        for i in 0..g {
            if below_u64(rng, pop - i) < k - x {
                x += 1;
            }
        }
    }
    x
}

/// Arguments below this have their `ln k!` kept in a table ([`ln_factorial_kept`]).
const LN_FACTORIAL_KEPT: usize = 1 << 13;

/// [`crate::binomial::ln_factorial`], read from a table of its own values below
/// [`LN_FACTORIAL_KEPT`] (the chunks' hypergeometric draws mostly have populations of a
/// few thousand): the same numbers, without a logarithm each.
#[inline]
fn ln_factorial_kept(k: f64) -> f64 {
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        (0..LN_FACTORIAL_KEPT).map(|i| crate::binomial::ln_factorial(i as f64)).collect()
    });
    match table.get(k as usize) {
        Some(&v) => v,
        None => crate::binomial::ln_factorial(k),
    }
}

/// Minority items (`k <= pop/2` of `pop`) among `g <= pop/2` slots by inversion: a uniform
/// is consumed by the probabilities of the mode, then alternately of the values below and
/// above it (a fresh uniform if rounding leaves some mass after the whole support).
fn hyper_mode_search<R: RngCore + ?Sized>(rng: &mut R, pop: u64, k: u64, g: u64) -> u64 {
    let (nf, kf, gf) = (pop as f64, k as f64, g as f64);
    // Support 0..=min(k, g) (k + g <= pop); mode ⌊(g + 1)(k + 1)/(pop + 2)⌋.
    let hi = k.min(g);
    let mode = (((g + 1) as f64 * (k + 1) as f64) / (nf + 2.0)) as u64;
    let mode = mode.min(hi);
    let mf = mode as f64;
    let lf = ln_factorial_kept;
    let ln_p = lf(kf) - lf(mf) - lf(kf - mf) + lf(nf - kf)
        - lf(gf - mf)
        - lf(nf - kf - gf + mf)
        - (lf(nf) - lf(gf) - lf(nf - gf));
    let p_mode = ln_p.exp();
    // P(x + 1)/P(x) = (k − x)(g − x) / ((x + 1)(pop − k − g + x + 1)).
    let up = |x: f64| (kf - x) * (gf - x) / ((x + 1.0) * (nf - kf - gf + x + 1.0));
    loop {
        let mut u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        if u < p_mode {
            return mode;
        }
        u -= p_mode;
        let (mut lo_x, mut lo_p) = (mode, p_mode);
        let (mut hi_x, mut hi_p) = (mode, p_mode);
        loop {
            let can_down = lo_x > 0;
            let can_up = hi_x < hi;
            if !can_down && !can_up {
                break;
            }
            if can_down {
                lo_p /= up((lo_x - 1) as f64);
                lo_x -= 1;
                if u < lo_p {
                    return lo_x;
                }
                u -= lo_p;
            }
            if can_up {
                hi_p *= up(hi_x as f64);
                hi_x += 1;
                if u < hi_p {
                    return hi_x;
                }
                u -= hi_p;
            }
        }
    }
}

/// An ambiguous ball: its position and the level index of its cell, and for the rules with
/// a second position (`alt` in level `alt_cell` at the chunk start) what decides between
/// the two.
#[derive(Clone, Copy, Debug)]
struct Ambiguous {
    pos: u64,
    cell: usize,
    alt: u64,
    alt_cell: usize,
    then: Then,
}

/// How an ambiguous ball chooses its destination at its time.
#[derive(Clone, Copy, Debug)]
enum Then {
    /// Its one position.
    Land,
    /// Two-thinning: the second position when the first one's level has reached `cut`.
    Thin { cut: u64 },
    /// A load-comparing pair rule ([`PairLaw`]) on the levels of both positions, with the
    /// ball's coin word.
    Pair { coin: u64 },
}

impl Ambiguous {
    /// A ball with one possible destination.
    fn plain(pos: u64, cell: usize) -> Self {
        Self { pos, cell, alt: 0, alt_cell: 0, then: Then::Land }
    }

    /// Its positions with their cells.
    fn positions(&self) -> impl Iterator<Item = (u64, usize)> {
        let alt = (!matches!(self.then, Then::Land)).then_some((self.alt, self.alt_cell));
        std::iter::once((self.pos, self.cell)).chain(alt)
    }
}

/// [`Chunker::leaf_of`] of a level that is not relevant.
const NOT_RELEVANT: usize = usize::MAX;

/// The sure balls of the relevant levels in time order, told apart by level through a
/// binary tree whose leaves are the relevant levels: `place` puts the next sure items in
/// time at the root without saying whose they are, and `attribute` pushes the items waiting
/// on the path from the root down to one leaf, by a hypergeometric split at each node. The
/// split is exact because the items waiting at a node are a uniform sample of its subtree's
/// items not yet given to a child: everything revealed so far is a count of some subtree's
/// items among placed items, and the subtrees nest.
///
/// Two uses ([`Shape`]): the chunks of the destination laws and of two-thinning attribute
/// every leaf of a chain after every gap (one level split off the rest at a time, the order
/// their committed values were drawn in); the pair rules' chunks, whose ambiguous balls
/// touch many levels, use a balanced tree and attribute a leaf only when a ball's level
/// depends on it (`Chunker::level_now`): `log2` of the relevant levels splits at most per
/// read, instead of a split per relevant level at every gap.
#[derive(Clone, Debug, Default)]
struct SureTimes {
    /// Children of each internal node ([`NO_NODE`] at the leaves, nodes `0..leaves`).
    children: Vec<[usize; 2]>,
    /// Parent of each node ([`NO_NODE`] at the root).
    parent: Vec<usize>,
    /// Items of a node's subtree not yet given to that node.
    free: Vec<u64>,
    /// Placed items given to a node but not yet to one of its children (at a leaf: placed
    /// items of its level not yet reported by `attribute`).
    waiting: Vec<u64>,
    root: usize,
    leaves: usize,
    /// The path being pushed (reused buffer).
    path: Vec<usize>,
}

/// A missing child or parent in [`SureTimes`].
const NO_NODE: usize = usize::MAX;

/// The form of a [`SureTimes`] tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// Leaf `i` split off the leaves after it, in order: attributed eagerly, it draws what a
    /// chain of hypergeometric splits over the levels draws.
    Chain,
    /// Leaves paired level by level.
    Balanced,
}

impl SureTimes {
    /// A tree over levels with `counts` sure items each, nothing placed.
    fn reset(&mut self, counts: impl ExactSizeIterator<Item = u64>, shape: Shape) {
        self.leaves = counts.len();
        self.children.clear();
        self.parent.clear();
        self.free.clear();
        for c in counts {
            self.add_node([NO_NODE; 2], c);
        }
        if self.leaves == 0 {
            self.add_node([NO_NODE; 2], 0);
        }
        self.root = match shape {
            Shape::Chain => {
                let mut top = self.free.len() - 1;
                for i in (0..self.leaves.saturating_sub(1)).rev() {
                    top = self.join(i, top);
                }
                top
            }
            Shape::Balanced => {
                let mut layer: Vec<usize> = (0..self.free.len()).collect();
                while layer.len() > 1 {
                    layer = layer
                        .chunks(2)
                        .map(|p| if p.len() == 2 { self.join(p[0], p[1]) } else { p[0] })
                        .collect();
                }
                layer[0]
            }
        };
        self.waiting.clear();
        self.waiting.resize(self.free.len(), 0);
    }

    fn add_node(&mut self, children: [usize; 2], free: u64) -> usize {
        self.children.push(children);
        self.parent.push(NO_NODE);
        self.free.push(free);
        self.free.len() - 1
    }

    /// A new internal node over `a` and `b`.
    fn join(&mut self, a: usize, b: usize) -> usize {
        let v = self.add_node([a, b], self.free[a] + self.free[b]);
        self.parent[a] = v;
        self.parent[b] = v;
        v
    }

    /// The next `items` sure items in time.
    fn place(&mut self, items: u64) {
        self.waiting[self.root] += items;
        self.free[self.root] -= items;
    }

    /// The placed items that may belong to leaf `i` without being reported yet: those
    /// waiting on its path, the leaf included.
    fn waiting_above(&self, i: usize) -> u64 {
        let (mut v, mut w) = (i, 0);
        while v != NO_NODE {
            w += self.waiting[v];
            v = self.parent[v];
        }
        w
    }

    /// Pushes the items waiting on the path from the root down to leaf `i`; returns the
    /// placed items of that leaf's level not reported before.
    fn attribute<R: RngCore + ?Sized>(
        &mut self,
        i: usize,
        rng: &mut R,
        stats: &mut ChunkStats,
    ) -> u64 {
        self.path.clear();
        let mut v = self.parent[i];
        while v != NO_NODE {
            self.path.push(v);
            v = self.parent[v];
        }
        while let Some(v) = self.path.pop() {
            let w = self.waiting[v];
            if w == 0 {
                continue;
            }
            let [l, r] = self.children[v];
            let x = hypergeometric(rng, self.free[l] + self.free[r], self.free[l], w);
            if self.free[l] > 0 && self.free[r] > 0 {
                stats.multi_level_splits += 1;
            }
            self.free[l] -= x;
            self.waiting[l] += x;
            self.free[r] -= w - x;
            self.waiting[r] += w - x;
            self.waiting[v] = 0;
        }
        std::mem::take(&mut self.waiting[i])
    }
}

/// The chunk step with its reusable buffers.
#[derive(Clone, Debug, Default)]
pub(crate) struct Chunker {
    /// Balls per cell `M_j` (all ball types).
    cells: Vec<u64>,
    /// Ball types of the current chunk: law and number of balls.
    parts: Vec<(PosLaw, u64)>,
    /// Balls per type and cell, type after type.
    part_cells: Vec<u64>,
    /// Lower edge of each level's window, `c_j − w_j` (saturating).
    window_lo: Vec<u64>,
    /// Sure balls of each level not yet placed in time.
    sure: Vec<u64>,
    /// Landings per level so far (real levels, then levels above the top).
    landed: Vec<u64>,
    /// Relevant levels (whose sure balls' times matter), and each level's leaf in `times`.
    relevant: Vec<usize>,
    leaf_of: Vec<usize>,
    times: SureTimes,
    /// A pair rule's landing weights of its sure balls per level, and its winning
    /// probabilities by level difference (`sure_landings`).
    weights: Vec<f64>,
    kernel: Vec<f64>,
    amb: Vec<Ambiguous>,
    ranks: Vec<u64>,
    /// Two-thinning balls of the current chunk that took their second sample.
    seconds: u64,
    pub(crate) stats: ChunkStats,
    flaw: Option<ChunkFlaw>,
}

impl Chunker {
    /// A chunk step with a deliberate flaw (tests of power only).
    pub(crate) fn with_flaw(flaw: Option<ChunkFlaw>) -> Self {
        Self { flaw, ..Self::default() }
    }

    /// `balls` sequential balls of `law` on `st`, in chunks of at most `s` (the stretch is
    /// split into chunks of nearly equal size). Returns the bin samples the balls drew.
    pub(crate) fn run<R: RngCore + ?Sized>(
        &mut self,
        st: &mut LevelLoads,
        law: &ChunkLaw,
        balls: u64,
        s: u64,
        rng: &mut R,
    ) -> u64 {
        debug_assert!(law.supported(st.n) && s >= 1);
        let mut samples = 0u64;
        let mut parts = std::mem::take(&mut self.parts);
        for t in even_chunks(balls, s) {
            samples += law.split(st.n, t, rng, &mut parts);
            self.amb.clear();
            self.chunk(st, &parts, t, rng);
        }
        self.parts = parts;
        samples
    }

    /// `balls` sequential two-thinning balls on `st` (Threshold, Mean-Thinning,
    /// Relative-Threshold, through their cut), in chunks of at most `s`; a chunk never
    /// spans a change of the cut (the total at which the cut may change is known in
    /// advance, since each ball adds one to it). Returns the bin samples the balls drew.
    pub(crate) fn run_thin<R: RngCore + ?Sized>(
        &mut self,
        st: &mut LevelLoads,
        cut: &mut ThinCut,
        balls: u64,
        s: u64,
        rng: &mut R,
    ) -> u64 {
        debug_assert!(s >= 1);
        let (mut left, mut samples) = (balls, 0u64);
        let mut parts = std::mem::take(&mut self.parts);
        while left > 0 {
            let (keep_below, w_next) = cut.at(st.total);
            let span = left.min(w_next - st.total);
            for t in even_chunks(span, s) {
                samples += self.thin_chunk(st, keep_below, t, &mut parts, rng);
            }
            left -= span;
        }
        self.parts = parts;
        samples
    }

    /// One chunk of `t` two-thinning balls whose first sample keeps the ball when its load
    /// is below `keep_below`. Returns the bin samples.
    ///
    /// With `light` the bins below the cut at the chunk start (positions `0..light`), a
    /// first sample at or above `light` never keeps its ball (levels only rise), and one
    /// below `light − t` always does (the cut's boundary drops by at most one per ball). So
    /// the balls split by binomials into: first sample heavy (a uniform second position, 2
    /// samples), first sample surely kept (uniform on `0..light − reach`, 1 sample), and the
    /// balls whose first sample lies in `light − reach..light` (`reach = min(t, light)`):
    /// both their positions are drawn, and they are resolved in time order as ambiguous
    /// balls, the second position taken when the first one's level has reached the cut.
    /// Each of them lands once, so counting them all as ambiguous balls from below in every
    /// level's window bound keeps the bounds sure.
    fn thin_chunk<R: RngCore + ?Sized>(
        &mut self,
        st: &mut LevelLoads,
        keep_below: u64,
        t: u64,
        parts: &mut Vec<(PosLaw, u64)>,
        rng: &mut R,
    ) -> u64 {
        let n = st.n;
        let levels = st.cum.len() as u64;
        // The cut as a level index, and the bins below it.
        let cut = keep_below.saturating_sub(st.lo);
        let light = if cut == 0 { 0 } else { st.cum[(cut.min(levels) - 1) as usize] };
        let heavy_first = if light == n {
            0
        } else if light == 0 {
            t
        } else {
            binomial(rng, t, (n - light) as f64 / n as f64)
        };
        let kept = t - heavy_first;
        let reach = if self.flaw == Some(ChunkFlaw::ThinFixedCut) { 0 } else { t.min(light) };
        let crossing = match reach {
            0 => 0,
            r if r == light => kept,
            r => binomial(rng, kept, r as f64 / light as f64),
        };
        parts.clear();
        parts.push((PosLaw { hi: n, d: 1 }, heavy_first));
        if kept > crossing {
            parts.push((PosLaw { hi: light - reach, d: 1 }, kept - crossing));
        }
        self.amb.clear();
        for _ in 0..crossing {
            let pos = light - reach + below_u64(rng, reach);
            let alt = below_u64(rng, n);
            let (cell, alt_cell) = (st.level_of(pos), st.level_of(alt));
            self.amb.push(Ambiguous { pos, cell, alt, alt_cell, then: Then::Thin { cut } });
        }
        self.seconds = 0;
        self.chunk(st, parts, t, rng);
        t + heavy_first + self.seconds
    }

    /// `balls` sequential balls of a load-comparing pair rule (g-Bounded, g-Myopic,
    /// σ-Noisy-Load) on `st`, in chunks of at most `s` (split evenly). Returns the bin
    /// samples (two per ball).
    pub(crate) fn run_pair<R: RngCore + ?Sized>(
        &mut self,
        st: &mut LevelLoads,
        law: &mut PairLaw,
        balls: u64,
        s: u64,
        rng: &mut R,
    ) -> u64 {
        for t in even_chunks(balls, s) {
            self.pair_chunk(st, law, t, rng);
        }
        2 * balls
    }

    /// One chunk of `t` balls of a pair rule, with every window at its widest.
    ///
    /// At most `t` balls land on a level, so whatever the chunk does, boundary `c_j` stays
    /// above `c_j − t`: the positions `[c_{j−1}, c_j − t)` of a level with more than `t` bins
    /// keep their level (**sure**), the others (the top `t` positions of each level, all of a
    /// level of at most `t` bins) may not. The sure part is fixed before anything is drawn,
    /// so each ball is, independently, *sure* (both positions sure: probability `(U/n)²`,
    /// `U` the sure positions) or not. A sure ball's destination is the rule on the levels of
    /// its two cells: the sure balls' landings are one multinomial over the levels, with
    /// `q_j ∝ Σ_{a,b} u_a·u_b·P(rule(a, b) = j)`. The other balls draw both positions from
    /// their conditional law (first in a window, second anywhere: probability `n/(n + U)`;
    /// else first sure, second in a window) and are resolved in time order among the sure
    /// balls of the levels their windows touch, the rule applied to both levels at their time
    /// (`docs/chunked.md#the-noisy-comparisons`).
    fn pair_chunk<R: RngCore + ?Sized>(
        &mut self,
        st: &mut LevelLoads,
        law: &mut PairLaw,
        t: u64,
        rng: &mut R,
    ) {
        let (n, levels) = (st.n, st.cum.len());
        self.stats.chunks += 1;
        self.stats.balls += t;
        let width = match self.flaw {
            Some(ChunkFlaw::AllSure) => 0,
            Some(ChunkFlaw::HalfWindows) => t.div_ceil(2),
            _ => t,
        };
        // Sure positions per level (`cells`), and the windows' lower edges.
        self.cells.clear();
        self.window_lo.clear();
        let mut below = 0u64;
        for &c in &st.cum {
            self.cells.push((c - below).saturating_sub(width));
            self.window_lo.push(c.saturating_sub(width));
            below = c;
        }
        let sure_positions: u64 = self.cells.iter().sum();
        let sure_balls = if sure_positions == n {
            t
        } else {
            let r = sure_positions as f64 / n as f64;
            binomial(rng, t, r * r)
        };
        self.sure_landings(st, law, sure_balls, rng);
        // The other balls, in the order of the chunk's draws; `resolve` orders them in time.
        self.amb.clear();
        let window_positions = n - sure_positions;
        for _ in sure_balls..t {
            let coin = if law.has_coin() { rng.next_u64() } else { 0 };
            let x = below_u64(rng, n + sure_positions);
            let ((pos, cell), (alt, alt_cell)) = if x < n {
                let first = self.window_position(st, below_u64(rng, window_positions));
                let p = below_u64(rng, n);
                (first, (p, st.level_of(p)))
            } else {
                let first = self.sure_position(st, x - n);
                (first, self.window_position(st, below_u64(rng, window_positions)))
            };
            self.amb.push(Ambiguous { pos, cell, alt, alt_cell, then: Then::Pair { coin } });
        }
        self.landed.clear();
        self.landed.resize(levels + self.amb.len() + 1, 0);
        if !self.amb.is_empty() {
            self.resolve(st, t, Some(law), rng);
        }
        for (l, &x) in self.landed.iter_mut().zip(&self.sure) {
            *l += x;
        }
        self.commit(st, t);
    }

    /// The landings of `balls` sure balls of a pair rule per level, into `self.sure`: a
    /// multinomial by conditional binomials over the levels, with the probability that the
    /// rule sends a ball whose sure positions lie in levels `a` and `b` to each of them,
    /// weighted by `u_a·u_b` (`self.cells`: the sure positions per level).
    fn sure_landings<R: RngCore + ?Sized>(
        &mut self,
        st: &LevelLoads,
        law: &mut PairLaw,
        balls: u64,
        rng: &mut R,
    ) {
        let levels = st.cum.len();
        self.sure.clear();
        self.sure.resize(levels, 0);
        if balls == 0 {
            return;
        }
        // q_j = u_j · Σ_b u_b · (P(j wins as first) + P(j wins as second)), over ordered
        // pairs; a function of j − b alone wherever the rule reads only the difference.
        self.weights.clear();
        self.weights.resize(levels, 0.0);
        let span = levels as i64 - 1;
        let by_difference = law.reads_difference_only(st.lo);
        if by_difference {
            self.kernel.clear();
            self.kernel
                .extend((-span..=span).map(|d| law.first_wins_by(d) + 1.0 - law.first_wins_by(-d)));
        }
        for (j, &uj) in self.cells.iter().enumerate().filter(|(_, &u)| u > 0) {
            let mut sum = 0.0;
            for (b, &ub) in self.cells.iter().enumerate().filter(|(_, &u)| u > 0) {
                let f = if by_difference {
                    self.kernel[(j as i64 - b as i64 + span) as usize]
                } else {
                    law.first_wins(st.lo, j, b) + 1.0 - law.first_wins(st.lo, b, j)
                };
                sum += ub as f64 * f;
            }
            self.weights[j] = uj as f64 * sum;
        }
        let last = self.weights.iter().rposition(|&w| w > 0.0).expect("sure positions");
        let mut rest: f64 = self.weights.iter().sum();
        let mut left = balls;
        for j in 0..=last {
            let w = self.weights[j];
            if left == 0 {
                break;
            }
            if w <= 0.0 {
                continue;
            }
            let x = if j == last { left } else { binomial(rng, left, (w / rest).min(1.0)) };
            self.sure[j] = x;
            left -= x;
            rest -= w;
        }
    }

    /// The `i`-th window position (the top `min(h_j, t)` positions of each level, levels
    /// bottom up) with its level; `self.cells` holds the sure positions per level.
    fn window_position(&self, st: &LevelLoads, mut i: u64) -> (u64, usize) {
        let mut below = 0u64;
        for (j, (&c, &u)) in st.cum.iter().zip(&self.cells).enumerate() {
            let width = c - below - u;
            if i < width {
                return (c - width + i, j);
            }
            i -= width;
            below = c;
        }
        unreachable!("a window position beyond the windows")
    }

    /// The `i`-th sure position (the bottom `u_j` positions of each level) with its level.
    fn sure_position(&self, st: &LevelLoads, mut i: u64) -> (u64, usize) {
        let mut below = 0u64;
        for (j, (&c, &u)) in st.cum.iter().zip(&self.cells).enumerate() {
            if i < u {
                return (below + i, j);
            }
            i -= u;
            below = c;
        }
        unreachable!("a sure position beyond the sure parts")
    }

    /// One chunk of `s >= 1` balls: the ball types `parts`, and the two-thinning balls
    /// already in `self.amb` (resolved in time order whatever their windows).
    fn chunk<R: RngCore + ?Sized>(
        &mut self,
        st: &mut LevelLoads,
        parts: &[(PosLaw, u64)],
        s: u64,
        rng: &mut R,
    ) {
        let levels = st.cum.len();
        self.stats.chunks += 1;
        self.stats.balls += s;
        self.cells.clear();
        self.cells.resize(levels, 0);
        self.part_cells.clear();
        self.part_cells.resize(levels * parts.len(), 0);
        // 1. Cells per ball type, bottom up: Binomial(left, P(cell j | position >= c_{j−1})).
        for (i, &(law, count)) in parts.iter().enumerate() {
            let cells = &mut self.part_cells[i * levels..(i + 1) * levels];
            let mut left = count;
            let mut below = 0u64;
            for ((cell, total), &c) in cells.iter_mut().zip(&mut self.cells).zip(&st.cum) {
                if left == 0 {
                    break;
                }
                if c > below {
                    let x = if law.tail(c) == 0 {
                        left
                    } else {
                        binomial(rng, left, law.ratio(below, c, below, st.n))
                    };
                    *cell = x;
                    *total += x;
                    left -= x;
                }
                below = c;
            }
            debug_assert_eq!(left, 0);
        }
        if self.flaw == Some(ChunkFlaw::AllSure) {
            self.landed.clear();
            self.landed.extend_from_slice(&self.cells);
            // Two-thinning balls that may cross the cut: kept at their first sample.
            for a in &self.amb {
                self.landed[a.cell] += 1;
            }
            self.commit(st, s);
            return;
        }
        // 2. Windows and ambiguous balls, bottom up (after the two-thinning balls, which
        // count as ambiguous balls from below for every level).
        self.window_lo.clear();
        self.sure.clear();
        let mut below = 0u64;
        for j in 0..levels {
            let c = st.cum[j];
            let mj = self.cells[j];
            let from_below = if self.flaw == Some(ChunkFlaw::OwnCellWindows) {
                0
            } else {
                self.amb.len() as u64
            };
            let w = s.min(mj + from_below);
            let lo = c.saturating_sub(w);
            self.window_lo.push(lo);
            let mut a = 0;
            if mj > 0 {
                let win = lo.max(below);
                for (i, &(law, _)) in parts.iter().enumerate() {
                    let m = self.part_cells[i * levels + j];
                    if m == 0 {
                        continue;
                    }
                    let x = if win == below {
                        m
                    } else {
                        binomial(rng, m, law.ratio(win, c, below, c))
                    };
                    for _ in 0..x {
                        let pos = law.sample_in(win, c, rng);
                        self.amb.push(Ambiguous::plain(pos, j));
                    }
                    a += x;
                }
            }
            self.sure.push(mj - a);
            below = c;
        }
        self.landed.clear();
        self.landed.resize(levels + self.amb.len() + 1, 0);
        if !self.amb.is_empty() {
            self.resolve(st, s, None, rng);
        }
        for (l, &x) in self.landed.iter_mut().zip(&self.sure) {
            *l += x;
        }
        self.commit(st, s);
    }

    /// Steps 3 and 4: the ambiguous balls in time order, with the sure balls of the relevant
    /// levels that come before each (`pair`: the rule of [`Then::Pair`] balls).
    fn resolve<R: RngCore + ?Sized>(
        &mut self,
        st: &LevelLoads,
        s: u64,
        mut pair: Option<&mut PairLaw>,
        rng: &mut R,
    ) {
        let levels = st.cum.len();
        let amb = self.amb.len();
        self.stats.ambiguous += amb as u64;
        self.stats.chunks_with_ambiguous += 1;
        // Relevant levels: an ambiguous position in the window, and sure balls left. Windows
        // are at most s wide, so the scan up from a cell stops once c_k − p > s.
        self.relevant.clear();
        for a in &self.amb {
            for (pos, cell) in a.positions() {
                for k in cell..levels {
                    let c = st.cum[k];
                    if c - pos > s {
                        break;
                    }
                    if self.window_lo[k] <= pos && self.sure[k] > 0 && !self.relevant.contains(&k) {
                        self.relevant.push(k);
                    }
                }
            }
        }
        let items: u64 = amb as u64 + self.relevant.iter().map(|&k| self.sure[k]).sum::<u64>();
        self.leaf_of.clear();
        self.leaf_of.resize(levels, NOT_RELEVANT);
        for (i, &k) in self.relevant.iter().enumerate() {
            self.leaf_of[k] = i;
        }
        let shape = if pair.is_some() { Shape::Balanced } else { Shape::Chain };
        self.times.reset(self.relevant.iter().map(|&k| self.sure[k]), shape);
        // A uniform order of the ambiguous balls (Fisher–Yates) ...
        for i in (1..amb).rev() {
            let j = below_u64(rng, i as u64 + 1) as usize;
            self.amb.swap(i, j);
        }
        // ... and a uniform set of their ranks among the items (Floyd), increasing.
        self.ranks.clear();
        for top in items - amb as u64..items {
            let t = below_u64(rng, top + 1);
            let r = if self.ranks.contains(&t) { top } else { t };
            self.ranks.push(r);
        }
        self.ranks.sort_unstable();
        let mut prev = 0u64; // items before the current ambiguous ball's rank not yet placed
        for i in 0..amb {
            // Sure items between the previous ambiguous ball and this one: placed in time,
            // and told apart by level at once (a chain) or where a ball reads a level
            // (`level_now`).
            self.times.place(self.ranks[i] - prev);
            prev = self.ranks[i] + 1;
            if shape == Shape::Chain {
                for leaf in 0..self.relevant.len() {
                    let k = self.relevant[leaf];
                    let x = self.times.attribute(leaf, rng, &mut self.stats);
                    self.sure[k] -= x;
                    self.landed[k] += x;
                }
            }
            // The ball's level with the boundaries as they stand now (a two-thinning ball
            // whose first sample has reached the cut: its second sample's; a pair rule's:
            // the rule on both).
            let a = self.amb[i];
            let first = self.level_now(st, a.pos, a.cell, rng);
            let (k, cell) = match a.then {
                Then::Land => (first, a.cell),
                Then::Thin { cut } if first as u64 >= cut => {
                    self.seconds += 1;
                    (self.level_now(st, a.alt, a.alt_cell, rng), a.alt_cell)
                }
                Then::Thin { .. } => (first, a.cell),
                Then::Pair { coin } => {
                    let second = self.level_now(st, a.alt, a.alt_cell, rng);
                    let law = pair.as_deref_mut().expect("a pair rule's chunk");
                    let k = law.choose_at(st.lo, first, second, coin);
                    (k, if k == first { a.cell } else { a.alt_cell })
                }
            };
            self.landed[k] += 1;
            if k > cell {
                self.stats.pushed_up += 1;
            }
            if k >= levels {
                self.stats.above_top += 1;
            }
        }
    }

    /// The level of position `pos` (in level `cell` at the chunk start) with the boundaries
    /// as they stand now: walking up from its cell, the sure balls placed so far on each
    /// relevant level it reads are told apart first ([`SureTimes::attribute`]).
    #[inline]
    fn level_now<R: RngCore + ?Sized>(
        &mut self,
        st: &LevelLoads,
        pos: u64,
        cell: usize,
        rng: &mut R,
    ) -> usize {
        if self.flaw == Some(ChunkFlaw::StartLevels) {
            return cell;
        }
        let levels = st.cum.len();
        let mut k = cell;
        loop {
            let c = if k < levels { st.cum[k] } else { st.n };
            // A relevant level's sure balls placed so far are told apart only when their
            // number can decide (at most the items waiting on the leaf's path are its own).
            if k < levels && self.leaf_of[k] != NOT_RELEVANT {
                let leaf = self.leaf_of[k];
                if self.landed[k] + self.times.waiting_above(leaf) >= c - pos {
                    let x = self.times.attribute(leaf, rng, &mut self.stats);
                    self.sure[k] -= x;
                    self.landed[k] += x;
                }
            }
            if c - self.landed[k] > pos {
                return k;
            }
            k += 1;
        }
    }

    /// Step 5: boundaries `c_k − Λ_k`, new levels above the top, emptied levels below.
    fn commit(&mut self, st: &mut LevelLoads, s: u64) {
        let n = st.n;
        let levels = st.cum.len();
        if self.flaw.is_some() {
            self.clamp_landings(st);
        }
        for (c, &l) in st.cum.iter_mut().zip(&self.landed) {
            debug_assert!(*c >= l);
            *c -= l;
        }
        let top = self.landed.iter().rposition(|&l| l > 0).unwrap_or(0);
        for &l in self.landed.get(levels..=top).unwrap_or(&[]) {
            st.cum.push(n - l);
        }
        if *st.cum.last().expect("levels") < n {
            st.cum.push(n);
        }
        let empty = st.cum.iter().take_while(|&&c| c == 0).count();
        if empty > 0 {
            st.cum.drain(..empty);
            st.lo += empty as u64;
        }
        st.total += s;
        debug_assert!(st.cum.windows(2).all(|w| w[0] <= w[1]) && st.cum[0] > 0);
        debug_assert!(st.cum.len() < 2 || st.cum[st.cum.len() - 2] < n);
        debug_assert_eq!(
            st.total,
            st.counts().iter().enumerate().map(|(j, &h)| h * (st.lo + j as u64)).sum::<u64>()
        );
    }
}

impl Chunker {
    /// For the flawed variants only, whose landings need not be feasible: bottom up, a level
    /// moves up at most the bins it has (its own plus those just arrived from below), and the
    /// excess goes on to the next level, so the state stays a histogram of `n` bins with the
    /// right number of balls (the exact step never needs this; `commit` checks it in debug
    /// builds).
    fn clamp_landings(&mut self, st: &LevelLoads) {
        let levels = st.cum.len();
        let (mut carry, mut arrived) = (0u64, 0u64);
        let mut k = 0;
        while k < self.landed.len() || carry > 0 {
            if k == self.landed.len() {
                self.landed.push(0);
            }
            let own = if k < levels { st.count(k) } else { 0 };
            let want = self.landed[k] + carry;
            let moves = want.min(own + arrived);
            carry = want - moves;
            self.landed[k] = moves;
            arrived = moves;
            k += 1;
        }
    }
}

/// Sequential balls of a [`ChunkLaw`] on a level histogram in chunks, as a stand-alone
/// object: for tests (forced chunk sizes, flawed variants) and benches. [`crate::simulate`]
/// uses the same step (`level::run_seq_law`).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct Chunked {
    chunker: Chunker,
    state: LevelLoads,
    law: ChunkLaw,
    samples: u64,
}

impl Chunked {
    /// d-Choice from the histogram `state`; `None` unless [`chunks_supported`].
    pub fn d_choice(d: u32, state: LevelLoads, flaw: Option<ChunkFlaw>) -> Option<Self> {
        Self::new(ChunkLaw::DChoice { d }, state, flaw)
    }

    /// `law` from the histogram `state`; `None` unless [`ChunkLaw::supported`].
    pub fn new(law: ChunkLaw, state: LevelLoads, flaw: Option<ChunkFlaw>) -> Option<Self> {
        law.supported(state.n).then(|| Self {
            chunker: Chunker::with_flaw(flaw),
            state,
            law,
            samples: 0,
        })
    }

    /// `balls` sequential balls in chunks of at most `s`.
    pub fn advance<R: RngCore + ?Sized>(&mut self, balls: u64, s: u64, rng: &mut R) {
        self.samples += self.chunker.run(&mut self.state, &self.law, balls, s.max(1), rng);
    }

    /// Bin samples drawn so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The current histogram.
    pub fn state(&self) -> &LevelLoads {
        &self.state
    }

    /// Work counters so far.
    pub fn stats(&self) -> ChunkStats {
        self.chunker.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hypergeometric_has_the_exact_law_in_every_role() {
        // Exact pmf against 40 000 draws per case, every symmetric role (k <= g, k > g,
        // flipped successes, flipped draws) and both methods. Seeded chi-square,
        // α = ballast_testkit::ALPHA.
        use ballast_testkit::{chi2_critical, chi2_gof};
        let mut rng = crate::sim_rng(77);
        for (pop, succ, draws) in [
            (20u64, 3u64, 7u64),
            (20, 7, 3),
            (20, 17, 5),
            (20, 5, 17),
            (30, 12, 15),
            // The mode search (both roles above HYPER_SEQUENTIAL_MAX), plain and flipped.
            (200, 60, 90),
            (200, 140, 110),
            (5000, 1000, 30),
            (100_000, 40_000, 25_000),
        ] {
            let lo = draws.saturating_sub(pop - succ);
            let hi = succ.min(draws);
            // The pmf by the ratio recurrence from x = lo in logarithms, normalised.
            let mut logs = vec![0.0f64];
            for x in lo..hi {
                let r = (succ - x) as f64 * (draws - x) as f64
                    / ((x + 1) as f64 * (pop + x + 1 - succ - draws) as f64);
                logs.push(logs.last().unwrap() + r.ln());
            }
            let top = logs.iter().copied().fold(f64::MIN, f64::max);
            let mut probs: Vec<f64> = logs.iter().map(|l| (l - top).exp()).collect();
            let total: f64 = probs.iter().sum();
            probs.iter_mut().for_each(|p| *p /= total);
            let mut counts = vec![0u64; probs.len()];
            let runs = 40_000;
            for _ in 0..runs {
                let x = hypergeometric(&mut rng, pop, succ, draws);
                assert!((lo..=hi).contains(&x));
                counts[(x - lo) as usize] += 1;
            }
            // Lump categories with expected count below 5 into their neighbour.
            let (mut o, mut p) = (Vec::new(), Vec::new());
            let (mut oa, mut pa) = (0u64, 0.0);
            for (&c, &q) in counts.iter().zip(&probs) {
                oa += c;
                pa += q;
                if pa * runs as f64 >= 5.0 {
                    o.push(oa);
                    p.push(pa);
                    (oa, pa) = (0, 0.0);
                }
            }
            *o.last_mut().unwrap() += oa;
            *p.last_mut().unwrap() += pa;
            let (stat, df) = chi2_gof(&o, &p);
            assert!(stat < chi2_critical(df), "({pop}, {succ}, {draws}): chi2 {stat:.1}, df {df}");
        }
    }

    #[test]
    fn sample_in_follows_the_restricted_law() {
        // d = 3, n = 12, window [5, 11): weights f(p) = (12 − p)³ − (11 − p)³.
        use ballast_testkit::{chi2_critical, chi2_gof};
        let law = PosLaw { hi: 12, d: 3 };
        let w: Vec<f64> = (5..11).map(|p| (law.tail(p) - law.tail(p + 1)) as f64).collect();
        let total: f64 = w.iter().sum();
        let probs: Vec<f64> = w.iter().map(|x| x / total).collect();
        let mut rng = crate::sim_rng(78);
        let mut counts = vec![0u64; 6];
        for _ in 0..60_000 {
            counts[(law.sample_in(5, 11, &mut rng) - 5) as usize] += 1;
        }
        let (stat, df) = chi2_gof(&counts, &probs);
        assert!(stat < chi2_critical(df), "chi2 {stat:.1}, df {df}");
    }

    #[test]
    fn below_u128_is_in_range_and_covers_a_wide_bound() {
        let mut rng = crate::sim_rng(79);
        let bound = (1u128 << 70) + 12_345;
        let mut high = false;
        for _ in 0..1000 {
            let x = below_u128(&mut rng, bound);
            assert!(x < bound);
            high |= x >= 1u128 << 69;
        }
        assert!(high, "the upper half of the range is never drawn");
    }

    #[test]
    fn tiny_cases_take_every_path_and_conserve_balls() {
        // Chunks as large as n make many positions ambiguous: balls pushed up, landing above
        // the top level, and (from histograms with several wide levels, where ambiguous balls
        // of two cells with sure balls of their own need a joint order) gaps split over
        // several relevant levels. Conservation is checked by `commit` in debug builds.
        let mut stats = ChunkStats::default();
        for seed in 0..200 {
            for (start, d) in [
                (LevelLoads::new(3), 2u32),
                (LevelLoads::new(5), 3),
                (LevelLoads::from_counts(0, &[4, 4, 4]), 2),
                (LevelLoads::from_counts(2, &[10, 0, 6, 10, 1]), 3),
                (LevelLoads::from_counts(0, &[20, 20, 20]), 2),
            ] {
                let (n, w) = (start.bins(), start.balls());
                let mut e = Chunked::d_choice(d, start, None).unwrap();
                let mut rng = crate::sim_rng(seed);
                e.advance(n, n, &mut rng);
                e.advance(10, 3, &mut rng);
                e.advance(60, 6, &mut rng);
                assert_eq!(e.state().balls(), w + n + 70);
                assert_eq!(e.state().bins(), n);
                let s = e.stats();
                assert_eq!(s.balls, n + 70);
                stats.ambiguous += s.ambiguous;
                stats.pushed_up += s.pushed_up;
                stats.above_top += s.above_top;
                stats.multi_level_splits += s.multi_level_splits;
            }
        }
        assert!(
            stats.pushed_up > 0 && stats.above_top > 0 && stats.multi_level_splits > 0,
            "{stats:?}"
        );
    }

    #[test]
    fn pair_chunks_take_every_path_and_conserve_balls() {
        // The pair rules' chunks from tiny and wide histograms, with chunks from 1 to larger
        // than n: balls pushed up and above the top, sure balls (levels wider than the
        // chunk), lazy splits of the balanced tree; σ-Noisy-Load truncated near load 0 (the
        // pair of loads decides, not the difference). Conservation of bins and balls, and
        // every path taken at least once.
        use crate::process::Noisy;
        let rules = [
            Noisy::GBounded { g: 1.0 },
            Noisy::GMyopic { g: 0.0 },
            Noisy::SigmaNoisyLoad { sigma: 0.7, truncate: true },
        ];
        let mut stats = ChunkStats::default();
        for seed in 0..100 {
            for rule in rules {
                for start in [
                    LevelLoads::new(3),
                    LevelLoads::from_counts(0, &[4, 4, 4]),
                    LevelLoads::from_counts(2, &[10, 0, 6, 10, 1]),
                    LevelLoads::from_counts(0, &[40, 60, 50, 30, 20, 10, 5, 1]),
                ] {
                    let (n, w) = (start.bins(), start.balls());
                    let mut st = start;
                    let mut law = PairLaw::new(rule);
                    let mut c = Chunker::default();
                    let mut rng = crate::sim_rng(seed);
                    let mut balls = 0;
                    for (count, s) in [(n, n), (10, 3), (60, 6), (200, 40)] {
                        assert_eq!(c.run_pair(&mut st, &mut law, count, s, &mut rng), 2 * count);
                        balls += count;
                    }
                    assert_eq!(st.balls(), w + balls);
                    assert_eq!(st.bins(), n);
                    stats.ambiguous += c.stats.ambiguous;
                    stats.pushed_up += c.stats.pushed_up;
                    stats.above_top += c.stats.above_top;
                    stats.multi_level_splits += c.stats.multi_level_splits;
                }
            }
        }
        assert!(
            stats.pushed_up > 0 && stats.above_top > 0 && stats.multi_level_splits > 0,
            "{stats:?}"
        );
    }

    #[test]
    fn empty_bins_and_single_bin() {
        let mut rng = crate::sim_rng(1);
        let mut one = Chunked::d_choice(2, LevelLoads::new(1), None).unwrap();
        one.advance(17, 5, &mut rng);
        assert_eq!((one.state().min_load(), one.state().max_load()), (17, 17));
        assert!(Chunked::d_choice(5, LevelLoads::new(1 << 30), None).is_none());
        assert!(chunks_supported(u64::from(u32::MAX), 3));
    }
}
