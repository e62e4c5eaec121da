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

use super::state::LevelLoads;
use super::thinning::ThinCut;
use crate::binomial::binomial;

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
    /// Gaps between ambiguous balls split over two or more relevant levels.
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
    use crate::binomial::ln_factorial as lf;
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

/// An ambiguous ball: its position and the level index of its cell. A two-thinning ball
/// whose first sample may cross the cut within the chunk also carries its second sample
/// (`alt`, [`NO_ALT`] for the other balls), taken when the first sample's level at the
/// ball's time is `cut` or above.
#[derive(Clone, Copy, Debug)]
struct Ambiguous {
    pos: u64,
    cell: usize,
    alt: u64,
    alt_cell: usize,
    cut: u64,
}

/// [`Ambiguous::alt`] of a ball with one destination.
const NO_ALT: u64 = u64::MAX;

impl Ambiguous {
    /// A ball with one possible destination.
    fn plain(pos: u64, cell: usize) -> Self {
        Self { pos, cell, alt: NO_ALT, alt_cell: 0, cut: u64::MAX }
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
    /// Relevant levels (whose sure balls' times matter).
    relevant: Vec<usize>,
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
        let chunks = balls.div_ceil(s.max(1));
        let (mut left, mut samples) = (balls, 0u64);
        let mut parts = std::mem::take(&mut self.parts);
        for i in 0..chunks {
            let t = left.div_ceil(chunks - i);
            samples += law.split(st.n, t, rng, &mut parts);
            self.amb.clear();
            self.chunk(st, &parts, t, rng);
            left -= t;
        }
        self.parts = parts;
        debug_assert_eq!(left, 0);
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
            let chunks = span.div_ceil(s.max(1));
            let mut rest = span;
            for i in 0..chunks {
                let t = rest.div_ceil(chunks - i);
                samples += self.thin_chunk(st, keep_below, t, &mut parts, rng);
                rest -= t;
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
            self.amb.push(Ambiguous { pos, cell, alt, alt_cell, cut });
        }
        self.seconds = 0;
        self.chunk(st, parts, t, rng);
        t + heavy_first + self.seconds
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
            self.resolve(st, s, rng);
        }
        for (l, &x) in self.landed.iter_mut().zip(&self.sure) {
            *l += x;
        }
        self.commit(st, s);
    }

    /// Steps 3 and 4: the ambiguous balls in time order, with the sure balls of the relevant
    /// levels that come before each.
    fn resolve<R: RngCore + ?Sized>(&mut self, st: &LevelLoads, s: u64, rng: &mut R) {
        let levels = st.cum.len();
        let amb = self.amb.len();
        self.stats.ambiguous += amb as u64;
        self.stats.chunks_with_ambiguous += 1;
        // Relevant levels: an ambiguous position in the window, and sure balls left. Windows
        // are at most s wide, so the scan up from a cell stops once c_k − p > s.
        self.relevant.clear();
        for a in &self.amb {
            let alt = (a.alt != NO_ALT).then_some((a.alt, a.alt_cell));
            for (pos, cell) in std::iter::once((a.pos, a.cell)).chain(alt) {
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
        let mut pool: u64 = items - amb as u64; // sure relevant items not yet placed
        for i in 0..amb {
            // Sure items between the previous ambiguous ball and this one.
            let gap = self.ranks[i] - prev;
            prev = self.ranks[i] + 1;
            self.place_sure(gap, &mut pool, rng);
            // The ball's level with the boundaries as they stand now (a two-thinning ball
            // whose first sample has reached the cut: its second sample's).
            let a = self.amb[i];
            let mut cell = a.cell;
            let mut k = self.level_now(st, a.pos, cell);
            if a.alt != NO_ALT && k as u64 >= a.cut {
                self.seconds += 1;
                cell = a.alt_cell;
                k = self.level_now(st, a.alt, cell);
            }
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
    /// as they stand now.
    #[inline]
    fn level_now(&self, st: &LevelLoads, pos: u64, cell: usize) -> usize {
        let levels = st.cum.len();
        let mut k = cell;
        loop {
            let c = if k < levels { st.cum[k] } else { st.n };
            if c - self.landed[k] > pos {
                return k;
            }
            k += 1;
        }
    }

    /// `gap` sure items of the relevant levels, the next ones in time: split over the
    /// levels by chained hypergeometric draws on the counts not yet placed.
    fn place_sure<R: RngCore + ?Sized>(&mut self, gap: u64, pool: &mut u64, rng: &mut R) {
        if gap == 0 {
            return;
        }
        let mut g = gap;
        let mut rest = *pool;
        let last = self.relevant.len() - 1;
        if last > 0 {
            self.stats.multi_level_splits += 1;
        }
        for (i, &k) in self.relevant.iter().enumerate() {
            if g == 0 {
                break;
            }
            let x = if i == last { g } else { hypergeometric(rng, rest, self.sure[k], g) };
            rest -= self.sure[k];
            self.sure[k] -= x;
            self.landed[k] += x;
            g -= x;
        }
        debug_assert_eq!(g, 0);
        *pool -= gap;
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
    fn empty_bins_and_single_bin() {
        let mut rng = crate::sim_rng(1);
        let mut one = Chunked::d_choice(2, LevelLoads::new(1), None).unwrap();
        one.advance(17, 5, &mut rng);
        assert_eq!((one.state().min_load(), one.state().max_load()), (17, 17));
        assert!(Chunked::d_choice(5, LevelLoads::new(1 << 30), None).is_none());
        assert!(chunks_supported(u64::from(u32::MAX), 3));
    }
}
