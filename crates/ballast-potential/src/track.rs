//! [`Potentials`]: the four potentials of SPEC.md §6, updated in O(1) per ball as an
//! [`Observer`] of the bin engine (or of the level engine, whose view has integer loads too).
//!
//! With `y_i = x_i − W/n`, a ball of weight `w` on bin `j` lowers every `y_i` by `w/n` and
//! raises `y_j` by `w`. The tracker runs in one of two modes, chosen automatically: *unit
//! mode* while every ball has weight exactly 1 and the loads are integers, *weighted mode*
//! otherwise (it switches once, with an exact O(n) recomputation, at the first ball of
//! another weight).
//!
//! # Unit mode: exact integer bookkeeping
//!
//! Per ball, O(1) and branch-free apart from rare events: the level histogram (number of
//! bins per load) moves one bin up a level; `W = qn + r` advances; `Σ_i x_i²` grows by
//! `2x_j − 1` in 128-bit integers, so `nΥ = nΣx_i² − W²` is exact (no cancellation in
//! floating point); the number `A` and load sum `Σ_{x_i > W/n} x_i` of the bins above the
//! average are updated, so `nΔ/2 = n·Σ_{x_i > W/n} x_i − A·W` is exact (`Δ = 2Σ_{y_i>0} y_i`
//! because `Σ_i y_i = 0`). When `r` wraps to 0 the average passes level `q`, and the bins at
//! that level, read from the histogram, leave the set: the crossing is handled level by
//! level, never bin by bin.
//!
//! The exponential sums cost nothing per ball: they are evaluated when read, from the exact
//! histogram, as `Σ_ℓ c_ℓ·e^{a(ℓ − q)}·e^{−a r/n}` (`a = α` for `Φ_α`, `a = ±α` for `Γ_α`)
//! with a table of `e^{a k}`: O(number of levels) per read and no accumulated rounding at
//! all. When the largest exponent passes 400 the sum is taken relative to `e^{L}`, so nothing
//! overflows (values beyond `f64` remain available as logarithms, [`Potentials::ln_value`]).
//!
//! # Weighted mode
//!
//! Let `d` be the rise of the average since the last exact recomputation and call `y_i + d`
//! the *key* of bin `i`: keys change only when a bin receives a ball.
//!
//! * **Exponential sums** are kept as `S = Σ_i e^{a·key_i − L}` with a log-scale `L`, so that
//!   `Σ_i e^{a y_i} = e^{L − a d}·S`. A ball adds `e^{a·key_j − L}(1 − e^{−a w})` to `S`
//!   (two transcendental calls); the factor `e^{−a w/n}` of every other term lives in `d` and
//!   is never multiplied into `S`. `L` moves whenever the largest term would leave
//!   `[e^{100}, e^{400}]`. For `a < 0` the sum shrinks like `e^{a d}` while its rounding
//!   errors do not, so the sums are recomputed while `|a|·d <= 2` (see [`crate::tolerance`]).
//! * **Quadratic**: a ball changes `Υ` by exactly `2w·y_j' − w²(1 − 1/n)` (`y_j'` after the
//!   ball, read from [`LoadState::normalized`]; the cross terms vanish because
//!   `Σ_i y_i = 0`), accumulated with a compensated sum: never `Σ x_i² − W²/n`.
//! * **Absolute**: the bins above the average in a bucket queue over keys (expected
//!   amortised O(1) per ball, not worst-case O(1): the bins the average passes are visited;
//!   the work is counted in [`TrackingStats::queue_visits`]).
//!
//! Everything is recomputed from the loads (O(n)) whenever `d` exceeds `min(16, 2/max α)`,
//! i.e. every `≈ min(16, 2/α)·n/w̄` balls for mean weight `w̄`: amortised O(1).

use ballast_core::{LoadState, Observer};

use crate::above::AboveSet;
use crate::levels::Levels;
use crate::spec::PotentialSpec;
use crate::sum::Neumaier;
use crate::Error;

/// The largest term may exceed the scale by at most `e^{RESCALE_ABOVE}` before `L` moves.
const RESCALE_ABOVE: f64 = 400.0;
/// After `L` moves, the largest term is `e^{RESCALE_TO}` relative to the scale.
const RESCALE_TO: f64 = 200.0;
/// `L` moves back down when the largest term falls below `e^{RESCALE_BELOW}` (with `L > 0`).
const RESCALE_BELOW: f64 = 100.0;
/// Unit-mode table: keys `k` with `|a k| <= TABLE_EXP_MAX` and `|k| <= TABLE_HALF_MAX`.
const TABLE_EXP_MAX: f64 = 300.0;
const TABLE_HALF_MAX: i64 = 256;
/// Weighted mode: recompute when `max |a| · d` exceeds this (amplification of the rounding
/// errors of decaying sums is at most `e^{REAL_SYNC_EXP}`).
const REAL_SYNC_EXP: f64 = 2.0;
/// Weighted mode: recompute when `d` exceeds this many units of load (keys stay close to the
/// normalised loads, so they keep their precision).
const REAL_SYNC_SHIFT: f64 = 16.0;

/// One exponential sum `Σ_i e^{a y_i}` (see the module docs).
#[derive(Clone, Debug)]
struct ExpSum {
    a: f64,
    /// Weighted mode: `S`, with `Σ_i e^{a y_i} = e^{L − a d}·S`.
    s: Neumaier,
    /// Weighted mode: `L`.
    log_scale: f64,
    /// Unit mode: `table[k + half] = e^{a k}`.
    table: Vec<f64>,
    half: i64,
}

impl ExpSum {
    fn new(a: f64) -> Self {
        let half = ((TABLE_EXP_MAX / a.abs()).floor() as i64).clamp(1, TABLE_HALF_MAX);
        let table = (-half..=half).map(|k| (a * k as f64).exp()).collect();
        Self { a, s: Neumaier::default(), log_scale: 0.0, table, half }
    }

    /// `e^{a k}` for an integer key.
    #[inline]
    fn unit_term(&self, k: i64) -> f64 {
        let idx = k + self.half;
        if (idx as u64) < self.table.len() as u64 {
            self.table[idx as usize]
        } else {
            (self.a * k as f64).exp()
        }
    }

    /// Unit mode: `(S, L)` with `Σ_i e^{a (x_i − q)} = e^{L}·S`, from the histogram.
    fn unit_sum(&self, u: &Unit) -> (f64, f64) {
        let (lo, counts) = u.levels.counts();
        let q = u.q as i64;
        let k_lo = lo as i64 - q;
        let k_hi = k_lo + counts.len() as i64 - 1;
        let m = self.a * (if self.a > 0.0 { k_hi } else { k_lo }) as f64;
        if m > RESCALE_ABOVE {
            // Far beyond f64: relative to e^{L} (rare; one exp per level).
            let l = m - RESCALE_TO;
            let s = counts
                .iter()
                .zip(k_lo..)
                .map(|(&c, k)| c as f64 * (self.a * k as f64 - l).exp())
                .sum();
            return (s, l);
        }
        // All terms are positive and there are few of them: a plain sum is accurate to
        // (number of levels)·ε.
        let (t_lo, t_hi) = (k_lo + self.half, k_hi + self.half);
        let s = if t_lo >= 0 && (t_hi as usize) < self.table.len() {
            let table = &self.table[t_lo as usize..=t_hi as usize];
            counts.iter().zip(table).map(|(&c, &t)| c as f64 * t).sum()
        } else {
            counts.iter().zip(k_lo..).map(|(&c, k)| c as f64 * self.unit_term(k)).sum()
        };
        (s, 0.0)
    }

    /// Unit mode: `ln Σ_i e^{a y_i}`.
    fn unit_ln_value(&self, u: &Unit) -> f64 {
        let (s, l) = self.unit_sum(u);
        l + s.ln() - self.a * u.frac()
    }

    /// Unit mode: `Σ_i e^{a y_i}` (`+∞` beyond `f64`).
    fn unit_value(&self, u: &Unit) -> f64 {
        let (s, l) = self.unit_sum(u);
        if l == 0.0 {
            s * (-self.a * u.frac()).exp()
        } else {
            (l + s.ln() - self.a * u.frac()).exp()
        }
    }

    /// Weighted mode: picks `L` for a largest exponent `m` before a recomputation.
    fn choose_scale(&mut self, m: f64) {
        let excess = m - self.log_scale;
        if excess > RESCALE_ABOVE || (self.log_scale > 0.0 && excess < RESCALE_BELOW) {
            self.log_scale = (m - RESCALE_TO).max(0.0);
        }
    }

    /// Weighted mode: a ball of weight `w` took a bin to key `key`.
    #[inline]
    fn add_real(&mut self, key: f64, w: f64) {
        let x = self.a * key;
        if x - self.log_scale > RESCALE_ABOVE {
            self.rescale(x - RESCALE_TO);
        }
        let c = -(-self.a * w).exp_m1();
        self.s.add(c * (x - self.log_scale).exp());
    }

    #[cold]
    fn rescale(&mut self, l: f64) {
        self.s.scale((self.log_scale - l).exp());
        self.log_scale = l;
    }

    /// Weighted mode: `ln Σ_i e^{a y_i}` at shift `d`.
    fn ln_value(&self, d: f64) -> f64 {
        let s = self.s.value();
        if s > 0.0 {
            self.log_scale + s.ln() - self.a * d
        } else {
            f64::NEG_INFINITY
        }
    }

    /// Weighted mode: `Σ_i e^{a y_i}` at shift `d` (`+∞` beyond `f64`).
    fn value(&self, d: f64) -> f64 {
        if self.log_scale == 0.0 {
            self.s.value() * (-self.a * d).exp()
        } else {
            self.ln_value(d).exp()
        }
    }
}

/// How a requested potential is read from the internal sums.
#[derive(Clone, Copy, Debug)]
enum Read {
    Exp(usize),
    Cosh(usize, usize),
    Quadratic,
    Absolute,
}

/// Unit-mode bookkeeping (exact integers).
#[derive(Clone, Debug)]
struct Unit {
    n: u64,
    /// `W = q·n + r`, `0 <= r < n`.
    w: u64,
    q: u64,
    r: u64,
    levels: Levels,
    sum_sq: u128,
    /// Number of bins with `x_i > W/n` and the sum of their loads.
    above: u64,
    above_sum: u64,
}

impl Unit {
    /// Unit-mode bookkeeping for `state`, if its loads are non-negative integers that
    /// [`LoadState::load`] reports absolutely (as [`ballast_core::UnitLoads`] does).
    fn from_state<S: LoadState>(state: &S) -> Option<Self> {
        let n = state.n();
        let total = state.total();
        if !(total >= 0.0 && total.fract() == 0.0 && total < 2f64.powi(53)) {
            return None;
        }
        let w = total as u64;
        let mut sum = 0u64;
        let mut sum_sq = 0u128;
        for i in 0..n {
            let x: f64 = state.load(i).into();
            if !(x >= 0.0 && x.fract() == 0.0 && x <= f64::from(u32::MAX)) {
                return None;
            }
            let y = x - total / n as f64;
            if (state.normalized(i) - y).abs() > 1e-9 * (1.0 + x) {
                return None;
            }
            sum += x as u64;
            sum_sq += u128::from(x as u64).pow(2);
        }
        if sum != w {
            return None;
        }
        let levels = Levels::from_loads((0..n).map(|i| {
            let x: f64 = state.load(i).into();
            x as u64
        }));
        let nn = n as u64;
        let (q, r) = (w / nn, w % nn);
        let (mut above, mut above_sum) = (0, 0);
        for (level, count) in levels.iter() {
            if level > q {
                above += count;
                above_sum += level * count;
            }
        }
        Some(Self { n: nn, w, q, r, levels, sum_sq, above, above_sum })
    }

    /// One unit ball, after the histogram moved its bin up to `level`.
    #[inline(always)]
    fn ball(&mut self, level: u64, quadratic: bool) {
        if quadratic {
            self.sum_sq += u128::from(2 * level - 1);
        }
        // Branch-free: a bin already above the average adds 1 to the load sum; a bin
        // reaching level q + 1 joins the set.
        let q1 = self.q + 1;
        let joins = u64::from(level == q1);
        self.above += joins;
        self.above_sum += u64::from(level > q1) + joins * level;
        self.w += 1;
        self.r += 1;
        if self.r == self.n {
            self.r = 0;
            self.q += 1;
            // The average reached level q: those bins are no longer above it.
            let c = self.levels.count(self.q);
            self.above -= c;
            self.above_sum -= self.q * c;
        }
    }

    /// `r/n = W/n − q`.
    #[inline]
    fn frac(&self) -> f64 {
        self.r as f64 / self.n as f64
    }

    fn quadratic(&self) -> f64 {
        let num = i128::from(self.n as i64) * self.sum_sq as i128 - i128::from(self.w).pow(2);
        i128_to_f64(num) / self.n as f64
    }

    fn absolute(&self) -> f64 {
        let num = i128::from(self.n) * i128::from(self.above_sum)
            - i128::from(self.above) * i128::from(self.w);
        2.0 * i128_to_f64(num) / self.n as f64
    }
}

/// Weighted-mode bookkeeping.
#[derive(Clone, Debug)]
struct Real {
    nf: f64,
    /// `1 − 1/n`.
    one_minus_inv_n: f64,
    d: Neumaier,
    d_limit: f64,
    quad: Neumaier,
    above: Option<AboveSet>,
    /// Normalised loads at the last recomputation.
    scratch: Vec<f64>,
}

#[derive(Clone, Debug)]
enum Mode {
    Detached,
    Unit(Unit),
    Real(Real),
}

/// Work counters of a [`Potentials`] tracker, to check that the per-ball cost is what the
/// docs claim.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TrackingStats {
    /// Balls observed.
    pub balls: u64,
    /// Exact O(n) recomputations (attaching, switching modes, weighted-mode resyncs).
    pub resyncs: u64,
    /// Bins visited by those recomputations.
    pub resync_work: u64,
    /// Elements visited by the absolute potential's bucket queue (weighted mode).
    pub queue_visits: u64,
}

/// The requested potentials, tracked incrementally along a run: an [`Observer`] for
/// [`ballast_core::simulate_observed`].
///
/// The tracker attaches itself to the run's loads at the first ball (an exact O(n)
/// computation, which includes that ball) or at the first observation point, whichever
/// comes first. Before that, values are `NaN`.
///
/// Cost: O(1) per ball (amortised and expected for the absolute potential with weighted
/// balls); reading a value is O(1), except exponential potentials in unit mode, which are
/// evaluated from the level histogram in O(number of distinct loads).
#[derive(Clone, Debug)]
pub struct Potentials {
    specs: Vec<PotentialSpec>,
    reads: Vec<Read>,
    exps: Vec<ExpSum>,
    want_quadratic: bool,
    want_absolute: bool,
    mode: Mode,
    /// Balls handled by the slow path (weighted mode, attaching) and their total weight.
    slow_balls: u64,
    slow_weight_sum: f64,
    stats: TrackingStats,
}

impl Potentials {
    /// A tracker for `specs` (each checked with [`PotentialSpec::validate`]).
    pub fn new(specs: &[PotentialSpec]) -> Result<Self, Error> {
        let mut exps: Vec<ExpSum> = Vec::new();
        let mut sum_for = |a: f64| match exps.iter().position(|e| e.a == a) {
            Some(k) => k,
            None => {
                exps.push(ExpSum::new(a));
                exps.len() - 1
            }
        };
        let mut reads = Vec::with_capacity(specs.len());
        for spec in specs {
            spec.validate()?;
            reads.push(match *spec {
                PotentialSpec::Exponential { alpha } => Read::Exp(sum_for(alpha)),
                PotentialSpec::Hyperbolic { alpha } => Read::Cosh(sum_for(alpha), sum_for(-alpha)),
                PotentialSpec::Quadratic => Read::Quadratic,
                PotentialSpec::Absolute => Read::Absolute,
            });
        }
        Ok(Self {
            specs: specs.to_vec(),
            want_quadratic: reads.iter().any(|r| matches!(r, Read::Quadratic)),
            want_absolute: reads.iter().any(|r| matches!(r, Read::Absolute)),
            reads,
            exps,
            mode: Mode::Detached,
            slow_balls: 0,
            slow_weight_sum: 0.0,
            stats: TrackingStats::default(),
        })
    }

    /// The tracked potentials, in the order given to [`Potentials::new`].
    pub fn specs(&self) -> &[PotentialSpec] {
        &self.specs
    }

    /// Number of tracked potentials.
    pub fn len(&self) -> usize {
        self.specs.len()
    }

    /// Whether no potential is tracked.
    pub fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// Balls observed so far (the index of the last ball, counting from 1).
    pub fn balls(&self) -> u64 {
        self.stats.balls
    }

    /// Work counters.
    pub fn stats(&self) -> TrackingStats {
        let mut s = self.stats;
        if let Mode::Real(Real { above: Some(a), .. }) = &self.mode {
            s.queue_visits = a.visits();
        }
        s
    }

    /// Whether the tracker has attached to a run's loads.
    pub fn is_attached(&self) -> bool {
        !matches!(self.mode, Mode::Detached)
    }

    /// Whether the tracker runs on exact integer bookkeeping (unit balls so far).
    pub fn is_unit_mode(&self) -> bool {
        matches!(self.mode, Mode::Unit(_))
    }

    /// Forgets the attached run (the next ball or observation attaches afresh); keeps the
    /// ball counter and the work counters.
    pub fn detach(&mut self) {
        self.mode = Mode::Detached;
    }

    /// (Re)computes every potential exactly from `state`, in O(n), and continues
    /// incrementally from there. Called automatically at the first ball.
    pub fn attach<S: LoadState>(&mut self, state: &S) {
        self.attach_with(state, true);
    }

    fn attach_with<S: LoadState>(&mut self, state: &S, unit_ok: bool) {
        let n = state.n();
        self.stats.resyncs += 1;
        self.stats.resync_work += n as u64;
        if let Some(u) = unit_ok.then(|| Unit::from_state(state)).flatten() {
            self.mode = Mode::Unit(u);
            return;
        }
        let amax = self.exps.iter().map(|e| e.a.abs()).fold(0.0, f64::max);
        let d_limit =
            if amax > 0.0 { (REAL_SYNC_EXP / amax).min(REAL_SYNC_SHIFT) } else { REAL_SYNC_SHIFT };
        let mut r = Real {
            nf: n as f64,
            one_minus_inv_n: 1.0 - 1.0 / n as f64,
            d: Neumaier::default(),
            d_limit,
            quad: Neumaier::default(),
            above: self.want_absolute.then(|| AboveSet::new(n)),
            scratch: vec![0.0; n],
        };
        self.sync_real(&mut r, state);
        self.mode = Mode::Real(r);
    }

    /// Exact recomputation in weighted mode: O(n).
    fn sync_real<S: LoadState>(&mut self, r: &mut Real, state: &S) {
        for (i, y) in r.scratch.iter_mut().enumerate() {
            *y = state.normalized(i);
        }
        r.d = Neumaier::default();
        let ys = &r.scratch;
        if self.want_quadratic {
            let mut q = Neumaier::default();
            for &y in ys {
                q.add(y * y);
            }
            r.quad = q;
        }
        for e in &mut self.exps {
            let m = ys.iter().map(|&y| e.a * y).fold(f64::NEG_INFINITY, f64::max);
            e.choose_scale(m);
            let mut s = Neumaier::default();
            for &y in ys {
                s.add((e.a * y - e.log_scale).exp());
            }
            e.s = s;
        }
        if let Some(above) = &mut r.above {
            above.rebuild(ys, self.mean_weight() / ys.len() as f64);
        }
    }

    /// The value of potential `k` (in [`Potentials::specs`] order). Exponential potentials
    /// beyond the `f64` range are `+∞` (use [`Potentials::ln_value`]). `NaN` before the
    /// tracker attached.
    pub fn value(&self, k: usize) -> f64 {
        let e = &self.exps;
        match (&self.mode, self.reads[k]) {
            (Mode::Detached, _) => f64::NAN,
            (Mode::Unit(u), Read::Exp(i)) => e[i].unit_value(u),
            (Mode::Unit(u), Read::Cosh(p, m)) => e[p].unit_value(u) + e[m].unit_value(u),
            (Mode::Unit(u), Read::Quadratic) => u.quadratic(),
            (Mode::Unit(u), Read::Absolute) => u.absolute(),
            (Mode::Real(r), Read::Exp(i)) => e[i].value(r.d.value()),
            (Mode::Real(r), Read::Cosh(p, m)) => {
                let d = r.d.value();
                e[p].value(d) + e[m].value(d)
            }
            (Mode::Real(r), Read::Quadratic) => r.quad.value().max(0.0),
            (Mode::Real(r), Read::Absolute) => match &r.above {
                Some(a) => (2.0 * a.positive_sum()).max(0.0),
                None => f64::NAN,
            },
        }
    }

    /// The natural logarithm of potential `k`: finite even when the value overflows `f64`
    /// (`−∞` for a zero quadratic or absolute potential).
    pub fn ln_value(&self, k: usize) -> f64 {
        let e = &self.exps;
        match (&self.mode, self.reads[k]) {
            (Mode::Detached, _) => f64::NAN,
            (Mode::Unit(u), Read::Exp(i)) => e[i].unit_ln_value(u),
            (Mode::Unit(u), Read::Cosh(p, m)) => {
                ln_add(e[p].unit_ln_value(u), e[m].unit_ln_value(u))
            }
            (Mode::Real(r), Read::Exp(i)) => e[i].ln_value(r.d.value()),
            (Mode::Real(r), Read::Cosh(p, m)) => {
                let d = r.d.value();
                ln_add(e[p].ln_value(d), e[m].ln_value(d))
            }
            (_, Read::Quadratic | Read::Absolute) => self.value(k).ln(),
        }
    }

    /// All values, in [`Potentials::specs`] order, written into `out` (cleared first).
    pub fn values_into(&self, out: &mut Vec<f64>) {
        out.clear();
        out.extend((0..self.specs.len()).map(|k| self.value(k)));
    }

    /// All values, in [`Potentials::specs`] order.
    pub fn values(&self) -> Vec<f64> {
        let mut v = Vec::new();
        self.values_into(&mut v);
        v
    }

    /// Weighted mode, attaching, and switching modes.
    #[inline(never)]
    fn on_ball_slow<S: LoadState>(&mut self, state: &S, bin: usize, weight: f64) {
        self.slow_balls += 1;
        self.slow_weight_sum += weight;
        let Mode::Real(r) = &mut self.mode else {
            // Not attached yet, the first non-unit ball in unit mode, or loads that are not
            // the ones recorded: recompute (unit mode only if this ball has weight 1).
            return self.attach_with(state, weight == 1.0 && !self.is_unit_mode());
        };
        let y = state.normalized(bin);
        let shift = weight / r.nf;
        r.d.add(shift);
        let d = r.d.value();
        if self.want_quadratic {
            r.quad.add(weight * (2.0 * y - weight * r.one_minus_inv_n));
        }
        let key = y + d;
        for e in &mut self.exps {
            e.add_real(key, weight);
        }
        if let Some(above) = &mut r.above {
            above.on_ball(bin, y, d, shift);
        }
        if d > r.d_limit {
            let mut mode = std::mem::replace(&mut self.mode, Mode::Detached);
            if let Mode::Real(real) = &mut mode {
                self.stats.resyncs += 1;
                self.stats.resync_work += real.scratch.len() as u64;
                self.sync_real(real, state);
            }
            self.mode = mode;
        }
    }

    /// Mean weight of the balls seen so far (1 before any ball).
    fn mean_weight(&self) -> f64 {
        let balls = self.stats.balls;
        if balls == 0 {
            1.0
        } else {
            // Balls handled on the fast path all had weight 1.
            ((balls - self.slow_balls) as f64 + self.slow_weight_sum) / balls as f64
        }
    }
}

/// `x as f64`, avoiding the slow 128-bit conversion when `x` fits 64 bits.
#[inline]
fn i128_to_f64(x: i128) -> f64 {
    match i64::try_from(x) {
        Ok(v) => v as f64,
        Err(_) => x as f64,
    }
}

/// `ln(e^a + e^b)` without overflow.
pub(crate) fn ln_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        hi
    } else {
        hi + (lo - hi).exp().ln_1p()
    }
}

impl Observer for Potentials {
    #[inline]
    fn on_ball<S: LoadState>(&mut self, state: &S, bin: usize, weight: f64) {
        self.stats.balls += 1;
        if let Mode::Unit(u) = &mut self.mode {
            if weight == 1.0 {
                // Loads are integers in unit mode (checked when attaching); a load that is
                // not where the histogram expects it sends us to the slow path.
                let x: f64 = state.load(bin).into();
                let level = x as i64 as u64;
                if u.levels.move_up(level) {
                    u.ball(level, self.want_quadratic);
                    return;
                }
            }
        }
        self.on_ball_slow(state, bin, weight);
    }

    fn on_observation<S: LoadState>(&mut self, state: &S) {
        if !self.is_attached() {
            self.attach(state);
        }
    }
}
