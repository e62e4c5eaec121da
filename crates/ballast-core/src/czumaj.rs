//! Processes of Czumaj and Stemann, "Randomized allocation processes" (FOCS 1997; Random
//! Structures & Algorithms 2001): adaptive probing, which trades the maximum load against the
//! number of bins probed per ball, and reallocation among the probed bins.
//!
//! The paper's exact threshold constants were not available to us: [`Tau`] keeps the
//! threshold sequence open (an affine function of the probe count and the average load), with
//! named presets for the paper's instances.

use rand::RngCore;

use crate::final_metrics::FinalLoads;
use crate::formula::Compiled;
use crate::histogram::LevelLoads;
use crate::loads::LoadState;
use crate::observe::{Counters, GapTracker, Observed};
use crate::process::{Ctx, Placement, Ranks, Rule};
use crate::rng::below;
pub use crate::spec::Tau;
use crate::{Error, RunOutcome, RunSpec, Setting};

/// Adaptive probing: probe uniform bins one at a time, keep the least loaded seen (ties
/// uniformly at random), stop when its load is below τ_k or after `cap` probes.
#[derive(Clone, Debug)]
pub struct Adaptive {
    /// Threshold sequence.
    pub tau: Tau,
    /// Maximum number of probes per ball (`u32::MAX`: unbounded).
    pub cap: u32,
    /// The run's balls (the variable `m` of a threshold formula).
    pub m: u64,
    /// The threshold formula, compiled ([`crate::formula::Formula::compiled`]: the
    /// interpreter's values, bit for bit).
    formula: Option<Compiled>,
}

impl Adaptive {
    /// The rule of threshold sequence `tau` with probe cap `cap` (`None`: unbounded) in a run
    /// of `m` balls.
    pub fn new(tau: Tau, cap: Option<u32>, m: u64) -> Self {
        let formula = tau.formula.as_ref().map(|f| f.compiled());
        Self { tau, cap: cap.unwrap_or(u32::MAX), m, formula }
    }

    /// The probes of one ball, stopping when the best load is below `tau(k)` for the probe
    /// count `k` (or at the cap). Ties among the least loaded probes are kept uniformly at
    /// random (one draw per tie, as a reservoir).
    #[inline]
    fn probe<S: LoadState, R: RngCore + ?Sized>(
        cap: u32,
        s: &S,
        rng: &mut R,
        ctx: &mut Ctx,
        mut tau: impl FnMut(u32) -> f64,
    ) -> Placement {
        let mut best = ctx.sample(rng);
        let mut best_load: f64 = s.load(best).into();
        let mut ties = 1u64;
        let mut k = 1u32;
        while k < cap && best_load >= tau(k) {
            let j = ctx.sample(rng);
            let lj: f64 = s.load(j).into();
            if lj < best_load {
                (best, best_load, ties) = (j, lj, 1);
            } else if lj == best_load {
                ties += 1;
                if below(rng, ties) == 0 {
                    best = j;
                }
            }
            k += 1;
        }
        Placement::one(best)
    }
}

impl Rule for Adaptive {
    const TRACK_SAMPLES: bool = true;

    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let Some(f) = &self.formula else {
            let average = if self.tau.per_average != 0.0 { s.average() } else { 0.0 };
            let tau = &self.tau;
            return Self::probe(self.cap, s, rng, ctx, |k| tau.at(k, average));
        };
        let n = s.n() as f64;
        let average = s.average();
        let (m, t) = (self.m as f64, ctx.balls as f64);
        Self::probe(self.cap, s, rng, ctx, |k| f.eval(&[f64::from(k), n, m, t, average]))
    }
}

/// Runs `equalize{d}` (Czumaj–Stemann reallocation) on the bin engine, sequential unit
/// balls only: each step samples `d` bins; the new ball and all balls of the distinct
/// sampled bins are spread over those bins as evenly as possible, the remainder going to
/// uniformly chosen ones. [`RunOutcome::moved`] counts balls that changed bin.
///
/// The fast loop: 32-bit loads (while `m < 2³²`) and a step specialised for `d <= 4`. It
/// consumes the random numbers of [`simulate_equalize_reference`] in the same order and
/// returns the same outcome (`tests/equalize_fast.rs`).
pub fn simulate_equalize<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    if spec.m > u64::from(u32::MAX) {
        return simulate_equalize_reference(spec, d, rng);
    }
    run_equalize_bins_fast(spec, d, rng)
}

/// The straightforward loop of [`simulate_equalize`] (a `u64` load per bin, the step for any
/// `d`): the reference the fast loop is tested against, run by
/// [`crate::simulate_ball_by_ball`].
pub fn simulate_equalize_reference<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    run_equalize(spec, d, BinStore::new(spec.n as usize), rng, None)
}

/// `equalize{d}` on the level engine: the same step on the sorted view of a level
/// histogram. A uniform bin sample is a uniform position, distinct positions are distinct
/// bins, and the step reads and sets only the loads of the distinct sampled bins, so moving
/// each of them between levels keeps the law of the histogram and of [`RunOutcome::moved`]
/// (`docs/level-engine.md#reallocation`). The random numbers are consumed as by
/// [`simulate_equalize`] (d samples, then the remainder subset).
///
/// The fast loop: a position's level comes from a table of the loads at every `2^s`-th
/// position, kept exact as the cumulative counts change, and one or two comparisons
/// (`FastLevels`); O(d + moved levels) per ball and O(levels + 4096) memory. It consumes
/// the random numbers of [`simulate_equalize_levels_reference`] in the same order and returns
/// the same outcome (`tests/equalize_fast.rs`).
pub fn simulate_equalize_levels<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    run_equalize_fast(spec, d, FastLevels::new(spec.n), rng)
}

/// The straightforward loop of [`simulate_equalize_levels`] on a [`LevelLoads`] (a position's
/// level by a scan or a binary search of the cumulative counts, moves by
/// `LevelLoads::move_load`): the reference the fast loop is tested against, run by
/// [`crate::simulate_ball_by_ball`].
pub fn simulate_equalize_levels_reference<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    run_equalize(spec, d, LevelLoads::new(spec.n), rng, None)
}

/// Deliberately wrong variants of [`simulate_equalize_levels`], for the power of its tests.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EqualizeFlaw {
    /// The whole remainder goes to one bin (q + r there, q elsewhere): a wrong histogram
    /// once r >= 2, i.e. d >= 3.
    RemainderToOne,
    /// The r bins that get q + 1 are the r lightest sampled ones, not a uniform r-subset:
    /// the right histogram, a wrong number of moved balls.
    RemainderToLightest,
}

/// [`simulate_equalize_levels`] with a deliberate flaw (tests only).
#[doc(hidden)]
pub fn simulate_equalize_levels_flawed<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
    flaw: EqualizeFlaw,
) -> Result<RunOutcome, Error> {
    run_equalize(spec, d, LevelLoads::new(spec.n), rng, Some(flaw))
}

/// The loads an equalize step reads and sets: a load per bin ([`BinStore`]) or the level
/// histogram ([`LevelLoads`], where a sample index is a position of the sorted view).
pub(crate) trait EqualizeStore {
    /// Load of the bin at sample index `i`, before any bin of the step has moved.
    fn load(&self, i: usize) -> u64;
    /// The bin at sample index `i` goes from load `old` to `new`.
    fn set(&mut self, i: usize, old: u64, new: u64);
    /// The gap after `t` balls (as each engine has always computed it).
    fn gap(&self, t: u64, n: u64) -> f64;
    fn max_load(&self) -> u64;
    fn min_load(&self) -> u64;
    /// Calls `f(load, bins)` for every load level (the final-load metrics).
    fn levels(&self, f: impl FnMut(f64, u64));
    fn balls(&self) -> u64;
    /// Whether a step could set a load the store cannot hold (the maximum is at the limit of
    /// a narrow load type); checked before every step of the fast loop.
    #[inline(always)]
    fn full(&self) -> bool {
        false
    }
    /// One whole step: the distinct bins `bins[..c]` go from loads `old` to `new` (read
    /// before any of them moved; entries from `c` on hold equal dummy loads). By default a
    /// [`EqualizeStore::set`] per changed bin.
    #[inline(always)]
    fn apply<const D: usize>(
        &mut self,
        bins: &[usize; D],
        c: usize,
        old: &[u64; D],
        new: &[u64; D],
    ) {
        for j in 0..c {
            if new[j] != old[j] {
                self.set(bins[j], old[j], new[j]);
            }
        }
    }
}

/// How many bins hold each load, with the total and an O(1)-amortised maximum that can fall:
/// the part of the bin stores ([`BinStore`], [`FastBins`]) that is not the load array.
struct LoadCounts {
    /// `counts[x]` = number of bins with load x.
    counts: Vec<u64>,
    max: usize,
    total: u64,
}

impl LoadCounts {
    fn new(n: usize) -> Self {
        Self { counts: vec![n as u64], max: 0, total: 0 }
    }
    /// One bin's load goes from `old` to `new`.
    #[inline(always)]
    fn moved(&mut self, old: u64, new: u64) {
        self.total = self.total + new - old;
        self.counts[old as usize] -= 1;
        if new as usize >= self.counts.len() {
            self.counts.resize(new as usize + 1, 0);
        }
        self.counts[new as usize] += 1;
        self.max = self.max.max(new as usize);
        while self.counts[self.max] == 0 {
            self.max -= 1;
        }
    }
    fn gap(&self, t: u64, n: u64) -> f64 {
        self.max as f64 - t as f64 / n as f64
    }
    fn min_load(&self) -> u64 {
        self.counts.iter().position(|&c| c > 0).unwrap_or(0) as u64
    }
    /// Calls `f(load, bins)` for every load held by some bin.
    fn levels(&self, mut f: impl FnMut(f64, u64)) {
        for (x, &c) in self.counts.iter().enumerate() {
            if c > 0 {
                f(x as f64, c);
            }
        }
    }
}

/// The bin engine's store: a load per bin and their [`LoadCounts`].
pub(crate) struct BinStore {
    loads: Vec<u64>,
    hist: LoadCounts,
}

impl BinStore {
    pub(crate) fn new(n: usize) -> Self {
        Self { loads: vec![0; n], hist: LoadCounts::new(n) }
    }
}

impl EqualizeStore for BinStore {
    fn load(&self, i: usize) -> u64 {
        self.loads[i]
    }
    fn set(&mut self, i: usize, old: u64, new: u64) {
        self.loads[i] = new;
        self.hist.moved(old, new);
    }
    fn gap(&self, t: u64, n: u64) -> f64 {
        self.hist.gap(t, n)
    }
    fn max_load(&self) -> u64 {
        self.hist.max as u64
    }
    fn min_load(&self) -> u64 {
        self.hist.min_load()
    }
    fn levels(&self, f: impl FnMut(f64, u64)) {
        self.hist.levels(f);
    }
    fn balls(&self) -> u64 {
        self.hist.total
    }
}

impl EqualizeStore for LevelLoads {
    fn load(&self, i: usize) -> u64 {
        self.load_at(i as u64)
    }
    fn set(&mut self, _i: usize, old: u64, new: u64) {
        self.move_load(old, new);
    }
    fn gap(&self, _t: u64, _n: u64) -> f64 {
        self.gap_value()
    }
    fn max_load(&self) -> u64 {
        LevelLoads::max_load(self)
    }
    fn min_load(&self) -> u64 {
        LevelLoads::min_load(self)
    }
    fn levels(&self, f: impl FnMut(f64, u64)) {
        LoadState::for_each_level(self, f);
    }
    fn balls(&self) -> u64 {
        LevelLoads::balls(self)
    }
}

/// A load type of [`FastBins`]: 8, 16 or 32 bits.
trait NarrowLoad: Copy + Default + Into<u64> {
    /// The largest load it holds.
    const MAX: u64;
    /// `x <= MAX`.
    fn narrow(x: u64) -> Self;
}

macro_rules! narrow_load {
    ($($t:ty),*) => {$(
        impl NarrowLoad for $t {
            const MAX: u64 = <$t>::MAX as u64;
            #[inline(always)]
            fn narrow(x: u64) -> Self {
                x as $t
            }
        }
    )*};
}
narrow_load!(u8, u16, u32);

/// The fast bin store: [`BinStore`] with loads of 8 bits while they fit, then 16, then 32
/// ([`FastBins::widen`]; the run must have fewer than `2³²` balls): a quarter of the memory
/// the step reads at random places (n = 10⁶ bins in 1 MB, inside the L2 cache, where 32-bit
/// loads missed it).
struct FastBins<L> {
    loads: Vec<L>,
    hist: LoadCounts,
}

impl<L: NarrowLoad> FastBins<L> {
    fn new(n: usize) -> Self {
        Self { loads: vec![L::default(); n], hist: LoadCounts::new(n) }
    }

    /// The same loads in a wider type.
    fn widen<M: NarrowLoad>(self) -> FastBins<M> {
        FastBins {
            loads: self.loads.iter().map(|&x| M::narrow(x.into())).collect(),
            hist: self.hist,
        }
    }
}

impl<L: NarrowLoad> EqualizeStore for FastBins<L> {
    #[inline(always)]
    fn load(&self, i: usize) -> u64 {
        self.loads[i].into()
    }
    #[inline(always)]
    fn set(&mut self, i: usize, old: u64, new: u64) {
        // new <= max(old loads of the step) + 1 <= the current maximum + 1 <= L::MAX
        // (`full` is checked before every step).
        debug_assert!(new <= L::MAX);
        self.loads[i] = L::narrow(new);
        self.hist.moved(old, new);
    }
    #[inline(always)]
    fn full(&self) -> bool {
        self.hist.max as u64 >= L::MAX
    }
    fn gap(&self, t: u64, n: u64) -> f64 {
        self.hist.gap(t, n)
    }
    fn max_load(&self) -> u64 {
        self.hist.max as u64
    }
    fn min_load(&self) -> u64 {
        self.hist.min_load()
    }
    fn levels(&self, f: impl FnMut(f64, u64)) {
        self.hist.levels(f);
    }
    fn balls(&self) -> u64 {
        self.hist.total
    }
}

/// Table size (log₂) of [`FastLevels`]: at most `2^12` entries of 8 bytes, in L1 cache.
const LEVEL_TABLE_BITS: u32 = 12;

/// Width of [`FastLevels`]' branch-free window: a step whose sampled loads span fewer
/// levels updates the `W` cumulative counts from the lowest of them at once.
const LEVEL_WINDOW: usize = 8;

/// The fast level store: the histogram of [`LevelLoads`] as cumulative counts `cum[k]` =
/// bins with load `<= lo + k`, for `lo + k` from the smallest load `lo` to the largest `hi`,
/// then at least [`LEVEL_WINDOW`] entries `n` of padding; and a table of the load at every
/// `2^shift`-th position of the sorted view, `table[b]` = load of position `b << shift`.
///
/// A position's load is the table's load for its block, then one comparison (more only in
/// the few blocks that a level boundary cuts): about one mispredicted branch per
/// `2^12 / levels` lookups, against a scan of every level or a binary search. The table stays
/// exact: changing `cum[k]` from `a` to `b` moves exactly the positions between them across
/// the boundary of load `lo + k`, and only the block starts among them are rewritten.
struct FastLevels {
    n: u64,
    lo: u64,
    hi: u64,
    cum: Vec<u64>,
    total: u64,
    shift: u32,
    mask: u64,
    table: Vec<u64>,
}

impl FastLevels {
    fn new(n: u64) -> Self {
        assert!(n >= 1, "at least one bin");
        // ceil(log2 n) bits of position, of which the top LEVEL_TABLE_BITS index the table.
        let bits = 64 - (n - 1).leading_zeros();
        let shift = bits.saturating_sub(LEVEL_TABLE_BITS);
        let blocks = ((n - 1) >> shift) as usize + 1;
        Self {
            n,
            lo: 0,
            hi: 0,
            cum: vec![n; 1 + LEVEL_WINDOW],
            total: 0,
            shift,
            mask: (1u64 << shift) - 1,
            table: vec![0; blocks],
        }
    }

    /// Load of the bin at position `p` (lightest first): the smallest `lo + k` with
    /// `cum[k] > p`, searched upwards from the load at the start of `p`'s block.
    #[inline(always)]
    fn load_at(&self, p: u64) -> u64 {
        debug_assert!(p < self.n);
        let start = self.table[(p >> self.shift) as usize];
        let mut k = (start - self.lo) as usize;
        while self.cum[k] <= p {
            k += 1;
        }
        self.lo + k as u64
    }

    /// The load of position `p` searched from `guess` in both directions (the table's entry
    /// for a block start whose load has changed).
    fn search(&self, p: u64, guess: u64) -> u64 {
        let mut k = (guess.clamp(self.lo, self.hi) - self.lo) as usize;
        while k > 0 && self.cum[k - 1] > p {
            k -= 1;
        }
        while self.cum[k] <= p {
            k += 1;
        }
        self.lo + k as u64
    }

    /// After `cum[k]` changed between `a` and `b`: rewrites the table entries of the block
    /// starts among positions `min(a, b) .. max(a, b)`.
    fn fix_blocks(&mut self, a: u64, b: u64) {
        let (l, h) = (a.min(b), a.max(b));
        let mut pos = (l + self.mask) & !self.mask;
        while pos < h {
            let block = (pos >> self.shift) as usize;
            self.table[block] = self.search(pos, self.table[block]);
            pos += self.mask + 1;
        }
    }

    /// Moves one bin from load `from` to load `to`, keeping the table exact; the caller
    /// trims. (`to` lies below `lo` only when a step of bins moved one at a time has lifted
    /// the last bin of the lowest level before lowering another to it.)
    fn move_load(&mut self, from: u64, to: u64) {
        debug_assert!(from >= self.lo && from != to);
        if to < self.lo {
            let k = (self.lo - to) as usize;
            self.cum.splice(0..0, std::iter::repeat_n(0, k));
            self.lo = to;
        }
        let lo = self.lo;
        if to > from {
            let need = (to - lo) as usize + 1 + LEVEL_WINDOW;
            if self.cum.len() < need {
                self.cum.resize(need, self.n);
            }
            for x in from..to {
                let k = (x - lo) as usize;
                self.cum[k] -= 1;
            }
            self.hi = self.hi.max(to);
            for x in from..to {
                let c = self.cum[(x - lo) as usize];
                self.fix_blocks(c, c + 1);
            }
            self.total += to - from;
        } else {
            for x in to..from {
                let k = (x - lo) as usize;
                self.cum[k] += 1;
            }
            for x in to..from {
                let c = self.cum[(x - lo) as usize];
                self.fix_blocks(c - 1, c);
            }
            self.total -= from - to;
        }
    }

    /// One bin from load `a` to `a + 1`: `cum` loses one at `a`, and position `cum[a]` (after)
    /// goes up.
    #[inline(always)]
    fn up_one(&mut self, a: u64) {
        let k = (a - self.lo) as usize;
        let c = self.cum[k] - 1;
        self.cum[k] = c;
        self.total += 1;
        if c & self.mask == 0 {
            self.table[(c >> self.shift) as usize] = self.search(c, a + 1);
        }
        if a == self.hi {
            self.hi += 1;
            let need = (self.hi - self.lo) as usize + 1 + LEVEL_WINDOW;
            if self.cum.len() < need {
                self.cum.resize(need, self.n);
            }
        }
        if self.cum[0] == 0 {
            self.trim();
        }
    }

    /// One bin from load `a` to `a + 1` and one from `a + 2` to `a + 1` (both loads occupied).
    fn two_to_middle(&mut self, a: u64) {
        let k = (a - self.lo) as usize;
        self.cum[k] -= 1;
        let up = self.cum[k];
        let down = self.cum[k + 1];
        self.cum[k + 1] += 1;
        for p in [up, down] {
            if p & self.mask == 0 {
                let block = (p >> self.shift) as usize;
                self.table[block] = self.search(p, self.table[block]);
            }
        }
        self.trim();
    }

    /// Restores the invariants after a step: the lowest and highest levels occupied, the
    /// padding in place.
    #[inline(always)]
    fn trim(&mut self) {
        while self.hi > self.lo && self.cum[(self.hi - 1 - self.lo) as usize] == self.n {
            self.hi -= 1;
        }
        if self.cum[0] == 0 {
            // The lowest level emptied: O(levels), about once per n balls.
            let empty = self.cum.iter().take_while(|&&c| c == 0).count();
            self.cum.drain(..empty);
            self.lo += empty as u64;
        }
        let need = (self.hi - self.lo) as usize + 1 + LEVEL_WINDOW;
        if self.cum.len() < need {
            self.cum.resize(need, self.n);
        }
    }
}

impl EqualizeStore for FastLevels {
    #[inline(always)]
    fn load(&self, i: usize) -> u64 {
        self.load_at(i as u64)
    }
    fn set(&mut self, _i: usize, old: u64, new: u64) {
        self.move_load(old, new);
        self.trim();
    }
    /// The multiset of loads changes from `old` to `new`, an equalize spread of `old` (the
    /// closed forms below rely on it). `d = 3` with three distinct bins whose loads span at
    /// most two levels: one bin up one level, and for loads (a, a, a + 2) one more from a
    /// and one from a + 2 to a + 1 ([`FastLevels::two_to_middle`]). Otherwise pair the loads in sorted order
    /// (`old` sorted against `new` sorted): when every pair moves by at most one level, the
    /// change of `cum` is one add of −1, 0 or +1 per pair at the lower load of the pair,
    /// without branches; otherwise each bin is moved on its own. `d = 1` and `d = 2` with
    /// loads at most two apart are one bin up one level ([`FastLevels::up_one`]).
    #[inline(always)]
    fn apply<const D: usize>(
        &mut self,
        _bins: &[usize; D],
        c: usize,
        old: &[u64; D],
        new: &[u64; D],
    ) {
        if D == 1 || (D == 2 && old[0].abs_diff(old[1]) < 3) {
            // d = 1: the bin goes up one level. d = 2, loads a <= b <= a + 2 (or one bin,
            // a = b, if both samples are the same): the new loads are {a, a + 1},
            // {a + 1, a + 1} or {a + 1, a + 2}, so the multiset changes by one bin from a
            // to a + 1.
            self.up_one(old[0].min(old[D - 1]));
            return;
        }
        if D == 3 && c == 3 {
            let a = old[0].min(old[1]).min(old[2]);
            let e = old[0].max(old[1]).max(old[2]);
            if e - a <= 2 {
                // Three bins with loads a <= b <= e <= a + 2: the new loads are those with
                // one bin from a to a + 1, except for (a, a, a + 2), which becomes
                // (a + 1, a + 1, a + 1): one more bin from a to a + 1 and one from a + 2 down.
                let b = old[0] + old[1] + old[2] - a - e;
                self.up_one(a);
                if b == a && e == a + 2 {
                    self.two_to_middle(a);
                }
                return;
            }
        }
        let (mut o, mut w) = (*old, *new);
        sort_small(&mut o);
        sort_small(&mut w);
        let mut unit = true;
        for i in 0..D {
            unit &= o[i].abs_diff(w[i]) <= 1;
        }
        if !unit {
            for j in 0..c {
                if new[j] != old[j] {
                    self.move_load(old[j], new[j]);
                }
            }
            self.trim();
            return;
        }
        let mut crossed = [0u64; D];
        let mut dirty = false;
        for i in 0..D {
            let k = (o[i].min(w[i]) - self.lo) as usize;
            let before = self.cum[k];
            let after =
                before.wrapping_add(u64::from(w[i] < o[i])).wrapping_sub(u64::from(w[i] > o[i]));
            self.cum[k] = after;
            // The position that crossed the boundary of load lo + k.
            crossed[i] = before.min(after);
            dirty |= (before != after) & (crossed[i] & self.mask == 0);
        }
        self.total += 1;
        if w[D - 1] > self.hi {
            self.hi = w[D - 1];
            let need = (self.hi - self.lo) as usize + 1 + LEVEL_WINDOW;
            if self.cum.len() < need {
                self.cum.resize(need, self.n);
            }
        }
        if dirty {
            for i in 0..D {
                if o[i] != w[i] && crossed[i] & self.mask == 0 {
                    let block = (crossed[i] >> self.shift) as usize;
                    self.table[block] = self.search(crossed[i], self.table[block]);
                }
            }
        }
        self.trim();
    }
    fn gap(&self, _t: u64, _n: u64) -> f64 {
        crate::loads::gap_unit(self.hi, self.total, self.n)
    }
    fn max_load(&self) -> u64 {
        self.hi
    }
    fn min_load(&self) -> u64 {
        self.lo
    }
    fn levels(&self, mut f: impl FnMut(f64, u64)) {
        let mut below = 0;
        for (k, &c) in self.cum[..=(self.hi - self.lo) as usize].iter().enumerate() {
            if c > below {
                f((self.lo + k as u64) as f64, c - below);
            }
            below = c;
        }
    }
    fn balls(&self) -> u64 {
        self.total
    }
}

/// Sorts a few loads in place with a compare-exchange network (no branches).
#[inline(always)]
fn sort_small<const D: usize>(v: &mut [u64; D]) {
    for round in 0..D {
        for j in 0..D - 1 - round.min(D - 1) {
            let (x, y) = (v[j].min(v[j + 1]), v[j].max(v[j + 1]));
            v[j] = x;
            v[j + 1] = y;
        }
    }
}

/// Refuses every setting but the sequential one.
fn check_sequential(spec: &RunSpec) -> Result<(), Error> {
    if matches!(spec.setting, Setting::Sequential) {
        Ok(())
    } else {
        Err(Error::Unsupported("equalize is defined for the sequential setting only".to_string()))
    }
}

/// What the loops observe: the observation layer's [`GapTracker`] on the store.
struct EqualizeRecord(GapTracker);

/// An equalize store as the observation layer reads it ([`Observed`]): its gap against the
/// balls it holds (which are the balls placed so far), its extremes and its levels.
struct Observing<'a, S> {
    st: &'a S,
    n: u64,
}

impl<S: EqualizeStore> Observed for Observing<'_, S> {
    fn current_gap(&self) -> f64 {
        self.st.gap(self.st.balls(), self.n)
    }
    fn extremes(&self) -> (f64, f64) {
        (self.st.max_load() as f64, self.st.min_load() as f64)
    }
}

impl<S: EqualizeStore> FinalLoads for Observing<'_, S> {
    fn for_each_level(&self, f: impl FnMut(f64, u64)) {
        self.st.levels(f);
    }
}

impl EqualizeRecord {
    fn new(spec: &RunSpec) -> Self {
        Self(GapTracker::new(spec))
    }

    fn observe<S: EqualizeStore>(&mut self, spec: &RunSpec, st: &S) {
        self.0.record(&Observing { st, n: spec.n });
    }

    fn outcome<S: EqualizeStore>(
        self,
        spec: &RunSpec,
        st: &S,
        samples: u64,
        moved: u64,
    ) -> RunOutcome {
        assert_eq!(st.balls(), spec.m, "equalize must conserve balls");
        let counters = Counters { balls: spec.m, samples, moved, ..Counters::default() };
        self.0.into_outcome(&Observing { st, n: spec.n }, counters)
    }
}

/// The fast equalize loop: the step of [`run_equalize`] with `d` fixed at compile time for
/// `d <= 4` (arrays, no allocation, a division by a constant), the observation points by a
/// countdown instead of a division per ball; larger `d` run [`run_equalize`] on the same
/// store. The random numbers are those of [`run_equalize`], in the same order.
fn run_equalize_fast<S: EqualizeStore, R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    st: S,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    check_sequential(spec)?;
    let mut st = st;
    let mut p = Progress::new(spec);
    let done = match d {
        1 => equalize_steps::<S, R, 1>(spec, &mut st, rng, &mut p),
        2 => equalize_steps::<S, R, 2>(spec, &mut st, rng, &mut p),
        3 => equalize_steps::<S, R, 3>(spec, &mut st, rng, &mut p),
        4 => equalize_steps::<S, R, 4>(spec, &mut st, rng, &mut p),
        _ => return run_equalize(spec, d, st, rng, None),
    };
    debug_assert!(done, "only narrow bin loads fill up");
    Ok(p.finish(spec, &st))
}

/// [`run_equalize_fast`] on bins: 8-bit loads, widened to 16 and then 32 bits when the
/// maximum reaches the type's limit (at most twice per run; `m < 2³²`).
fn run_equalize_bins_fast<R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    rng: &mut R,
) -> Result<RunOutcome, Error> {
    fn run<R: RngCore + ?Sized, const D: usize>(spec: &RunSpec, rng: &mut R) -> RunOutcome {
        let mut p = Progress::new(spec);
        let mut s8 = FastBins::<u8>::new(spec.n as usize);
        if equalize_steps::<_, R, D>(spec, &mut s8, rng, &mut p) {
            return p.finish(spec, &s8);
        }
        let mut s16: FastBins<u16> = s8.widen();
        if equalize_steps::<_, R, D>(spec, &mut s16, rng, &mut p) {
            return p.finish(spec, &s16);
        }
        let mut s32: FastBins<u32> = s16.widen();
        let done = equalize_steps::<_, R, D>(spec, &mut s32, rng, &mut p);
        assert!(done, "32-bit loads hold fewer than 2^32 balls");
        p.finish(spec, &s32)
    }
    check_sequential(spec)?;
    Ok(match d {
        1 => run::<R, 1>(spec, rng),
        2 => run::<R, 2>(spec, rng),
        3 => run::<R, 3>(spec, rng),
        4 => run::<R, 4>(spec, rng),
        _ => return run_equalize(spec, d, FastBins::<u32>::new(spec.n as usize), rng, None),
    })
}

/// Where the fast loop stands: the next step, the sampler, the observations, the moves.
struct Progress {
    t: u64,
    ctx: Ctx<'static>,
    record: EqualizeRecord,
    every: u64,
    next_observation: u64,
    moved: u64,
}

impl Progress {
    fn new(spec: &RunSpec) -> Self {
        let every = spec.observe_every.unwrap_or(spec.m).max(1);
        Self {
            t: 1,
            ctx: Ctx::new(spec.n as usize),
            record: EqualizeRecord::new(spec),
            every,
            next_observation: every,
            moved: 0,
        }
    }

    fn finish<S: EqualizeStore>(self, spec: &RunSpec, st: &S) -> RunOutcome {
        self.record.outcome(spec, st, self.ctx.samples, self.moved)
    }
}

/// The new loads of a step with `c` distinct bins: `q` each, and `q + 1` for the `r` bins of
/// a uniformly random r-subset, drawn by the partial Fisher–Yates shuffle of `spread` (the
/// same random numbers). One branch on `r` (it is random, so mispredicted often); `d = 2`
/// has one draw at most.
#[inline(always)]
fn remainder<R: RngCore + ?Sized, const D: usize>(
    rng: &mut R,
    c: usize,
    q: u64,
    r: usize,
) -> [u64; D] {
    let mut new = [q; D];
    if r > 0 {
        if D == 2 {
            // c = 2, r = 1: the bin in the first slot after one swap (no indexed store, so
            // the array stays in registers).
            let pick = below(rng, 2);
            new[0] += 1 - pick;
            new[1] += pick;
        } else if D == 3 && c == 3 {
            // The same swaps with the slots in registers: r = 1 gives bin p0 one more; r = 2
            // gives every bin one more but the one left in the last slot.
            let p0 = below(rng, 3);
            if r == 1 {
                for (i, x) in new.iter_mut().enumerate() {
                    *x += u64::from(i as u64 == p0);
                }
            } else {
                let p1 = 1 + below(rng, 2);
                let (s1, s2) = (u64::from(p0 != 1), if p0 == 2 { 0 } else { 2 });
                let last = if p1 == 2 { s1 } else { s2 };
                for (i, x) in new.iter_mut().enumerate() {
                    *x += 1 - u64::from(i as u64 == last);
                }
            }
        } else {
            let mut slots: [usize; D] = std::array::from_fn(|j| j);
            for j in 0..r {
                let pick = j + below(rng, (c - j) as u64) as usize;
                slots.swap(j, pick);
            }
            for &b in &slots[..r] {
                new[b] += 1;
            }
        }
    }
    new
}

/// [`run_equalize`]'s loop with `D` samples per step (see [`run_equalize_fast`]), from step
/// `p.t` on. Returns `false` when it stops before a step because the store is
/// [`EqualizeStore::full`] (the caller widens it and calls again), `true` after step `m`.
fn equalize_steps<S: EqualizeStore, R: RngCore + ?Sized, const D: usize>(
    spec: &RunSpec,
    st: &mut S,
    rng: &mut R,
    p: &mut Progress,
) -> bool {
    let (mut ctx, mut moved, mut next_observation) = (p.ctx, p.moved, p.next_observation);
    let every = p.every;
    let mut t = p.t;
    let done = loop {
        if t > spec.m {
            break true;
        }
        if st.full() {
            break false;
        }
        // The distinct samples, in the order first drawn.
        let mut bins = [0usize; D];
        let mut c = 0usize;
        for _ in 0..D {
            let i = ctx.sample(rng);
            if !bins[..c].contains(&i) {
                bins[c] = i;
                c += 1;
            }
        }
        // Every load is read before any bin moves.
        let mut old = [0u64; D];
        let mut total = 1u64;
        for j in 0..c {
            old[j] = st.load(bins[j]);
            total += old[j];
        }
        let (q, r) = if c == D {
            (total / D as u64, (total % D as u64) as usize)
        } else {
            (total / c as u64, (total % c as u64) as usize)
        };
        let mut new = remainder::<R, D>(rng, c, q, r);
        for j in 0..c {
            moved += old[j].saturating_sub(new[j]);
        }
        // Equal dummies for the repeated samples, which `apply` ignores or cancels.
        for j in c..D {
            (old[j], new[j]) = (old[0], old[0]);
        }
        st.apply(&bins, c, &old, &new);
        if t == next_observation || t == spec.m {
            if t == next_observation {
                next_observation = next_observation.saturating_add(every);
            }
            p.record.observe(spec, st);
        }
        t += 1;
    };
    (p.ctx, p.moved, p.next_observation, p.t) = (ctx, moved, next_observation, t);
    done
}

/// The equalize loop on either store: [`run_reallocation`] with the even spread (or a flawed
/// one) as its step.
fn run_equalize<S: EqualizeStore, R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    st: S,
    rng: &mut R,
    flaw: Option<EqualizeFlaw>,
) -> Result<RunOutcome, Error> {
    let mut slots: Vec<usize> = Vec::with_capacity(d as usize);
    run_reallocation(spec, d, st, rng, |old, new, rng| {
        new.copy_from_slice(old);
        slots.clear();
        slots.extend(0..old.len());
        match flaw {
            None => spread(new, &mut slots, rng, |_, _, _| {}),
            Some(f) => spread_flawed(new, f, |_, _, _| {}),
        }
    })
}

/// The loop of a reallocation process on either store: each step samples `d` bins, reads the
/// loads `old` of the distinct ones (in the order first drawn) before any of them moves, and
/// lets `step(old, new, rng)` write their loads after the step into `new` (one ball more in
/// all) and return the balls that changed bin; then the changed bins are set, and the gap is
/// observed at the observation points.
pub(crate) fn run_reallocation<S: EqualizeStore, R: RngCore + ?Sized>(
    spec: &RunSpec,
    d: u32,
    mut st: S,
    rng: &mut R,
    mut step: impl FnMut(&[u64], &mut [u64], &mut R) -> u64,
) -> Result<RunOutcome, Error> {
    check_sequential(spec)?;
    let mut ctx = Ctx::new(spec.n as usize);
    let mut samples: Vec<usize> = Vec::with_capacity(d as usize);
    let (mut old, mut new) = (Vec::with_capacity(d as usize), Vec::with_capacity(d as usize));
    let mut moved = 0u64;
    let mut record = EqualizeRecord::new(spec);
    let every = spec.observe_every.unwrap_or(spec.m).max(1);
    for t in 1..=spec.m {
        samples.clear();
        for _ in 0..d {
            let i = ctx.sample(rng);
            if !samples.contains(&i) {
                samples.push(i);
            }
        }
        // Every load is read before any bin moves (the level store's indices are positions
        // of this histogram).
        old.clear();
        old.extend(samples.iter().map(|&i| st.load(i)));
        new.clear();
        new.resize(old.len(), 0);
        moved += step(&old, &mut new, rng);
        debug_assert_eq!(new.iter().sum::<u64>(), old.iter().sum::<u64>() + 1);
        for (j, &i) in samples.iter().enumerate() {
            if new[j] != old[j] {
                st.set(i, old[j], new[j]);
            }
        }
        if t % every == 0 || t == spec.m {
            record.observe(spec, &st);
        }
    }
    Ok(record.outcome(spec, &st, ctx.samples, moved))
}

/// [`spread`] with a [`EqualizeFlaw`] (no random numbers).
fn spread_flawed(
    loads: &mut [u64],
    flaw: EqualizeFlaw,
    mut changed: impl FnMut(usize, u64, u64),
) -> u64 {
    let c = loads.len() as u64;
    let total: u64 = loads.iter().sum::<u64>() + 1;
    let (q, r) = (total / c, total % c);
    let mut order: Vec<usize> = (0..loads.len()).collect();
    order.sort_by_key(|&j| loads[j]);
    let mut moved = 0;
    for (rank, &j) in order.iter().enumerate() {
        let new = match flaw {
            EqualizeFlaw::RemainderToOne => q + if rank == 0 { r } else { 0 },
            EqualizeFlaw::RemainderToLightest => q + u64::from((rank as u64) < r),
        };
        let old = loads[j];
        moved += old.saturating_sub(new);
        if new != old {
            changed(j, old, new);
            loads[j] = new;
        }
    }
    moved
}

/// One equalize step on the distinct bins `bins`: their balls plus one new ball are spread
/// as evenly as possible, the remainder to a uniformly random subset. Calls `changed(i, old,
/// new)` for every bin `i` whose load changes; returns the number of balls that left a bin.
fn spread<R: RngCore + ?Sized>(
    loads: &mut [u64],
    bins: &mut [usize],
    rng: &mut R,
    mut changed: impl FnMut(usize, u64, u64),
) -> u64 {
    let c = bins.len() as u64;
    let total: u64 = bins.iter().map(|&i| loads[i]).sum::<u64>() + 1;
    let (q, r) = (total / c, total % c);
    // The r bins that get q + 1: a uniformly random r-subset (partial Fisher–Yates).
    for j in 0..r as usize {
        let pick = j + below(rng, c - j as u64) as usize;
        bins.swap(j, pick);
    }
    let mut moved = 0;
    for (j, &i) in bins.iter().enumerate() {
        let new = q + u64::from((j as u64) < r);
        let old = loads[i];
        moved += old.saturating_sub(new);
        if new != old {
            changed(i, old, new);
            loads[i] = new;
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast level store against [`LevelLoads`] under random equalize steps of three bins
    /// and wide moves that spread the loads (so that steps beyond the closed forms and the
    /// unit pairing occur): the same histogram, and the table gives every position's load,
    /// at block sizes 1, 2 and 8.
    #[test]
    fn fast_levels_track_level_loads_exactly() {
        let mut rng = crate::rng::sim_rng(11);
        for n in [5u64, 6000, 20_000] {
            let mut fast = FastLevels::new(n);
            let mut slow = LevelLoads::new(n);
            for step in 0..4000 {
                // Three distinct positions; loads read before any move.
                let mut pos = [0usize; 3];
                let mut c = 0;
                while c < 3 {
                    let p = below(&mut rng, n) as usize;
                    if !pos[..c].contains(&p) {
                        pos[c] = p;
                        c += 1;
                    }
                }
                let old: [u64; 3] = pos.map(|p| slow.load_at(p as u64));
                assert_eq!(old, pos.map(|p| fast.load_at(p as u64)), "n = {n}, step {step}");
                // Every fifth step a wide spread, never below the lowest load read: all
                // balls above the minimum to one bin, moved bin by bin (`apply`'s closed
                // forms assume an equalize step); the others equalize steps through `apply`.
                let total: u64 = old.iter().sum::<u64>() + 1;
                let min = old.iter().copied().min().unwrap_or(0);
                let wide = step % 5 == 0;
                let new = if wide {
                    [total - 2 * min, min, min]
                } else {
                    let (q, r) = (total / 3, total % 3);
                    [q + u64::from(r > 0), q + u64::from(r > 1), q]
                };
                for j in 0..3 {
                    if new[j] != old[j] {
                        slow.move_load(old[j], new[j]);
                    }
                }
                if wide {
                    for j in 0..3 {
                        if new[j] != old[j] {
                            fast.move_load(old[j], new[j]);
                        }
                    }
                    fast.trim();
                } else {
                    fast.apply(&pos, 3, &old, &new);
                }
                assert_eq!(fast.lo, slow.min_load(), "n = {n}, step {step}");
                assert_eq!(fast.hi, slow.max_load(), "n = {n}, step {step}");
                assert_eq!(fast.total, slow.balls());
                let levels = (fast.hi - fast.lo + 1) as usize;
                assert_eq!(&fast.cum[..levels], slow.cumulative(), "n = {n}, step {step}");
                assert!(fast.cum[levels..].iter().all(|&c| c == n));
                assert!(fast.cum.len() >= levels + LEVEL_WINDOW);
                if step % 97 == 0 || n < 10 {
                    for p in 0..n {
                        assert_eq!(fast.load_at(p), slow.load_at(p), "n = {n}, p = {p}");
                    }
                }
                for (b, &x) in fast.table.iter().enumerate() {
                    assert_eq!(x, slow.load_at((b as u64) << fast.shift), "n = {n}, block {b}");
                }
            }
        }
    }

    #[test]
    fn spread_conserves_and_levels() {
        let mut rng = crate::rng::sim_rng(3);
        for _ in 0..200 {
            let mut loads: Vec<u64> = (0..6).map(|_| below(&mut rng, 9)).collect();
            let mut bins = vec![0usize, 2, 5];
            let before: u64 = bins.iter().map(|&i| loads[i]).sum();
            let others: Vec<u64> = [1usize, 3, 4].iter().map(|&i| loads[i]).collect();
            let moved = spread(&mut loads, &mut bins, &mut rng, |_, _, _| {});
            let after: Vec<u64> = [0usize, 2, 5].iter().map(|&i| loads[i]).collect();
            assert_eq!(after.iter().sum::<u64>(), before + 1);
            let (lo, hi) = (after.iter().min().copied(), after.iter().max().copied());
            assert!(hi.zip(lo).is_some_and(|(h, l)| h - l <= 1), "{after:?}");
            assert_eq!([1usize, 3, 4].iter().map(|&i| loads[i]).collect::<Vec<_>>(), others);
            assert!(moved <= before);
        }
    }
}
