//! [`Potentials`]: the four potentials of `docs/metrics.md#potentials`, tracked in O(1) per
//! ball as an [`Observer`] of the bin engine (or of the level engine, whose view has
//! integer loads too).
//!
//! With `y_i = x_i − W/n`, a ball of weight `w` on bin `j` lowers every `y_i` by `w/n` and
//! raises `y_j` by `w`. The tracker runs in one of two modes, chosen automatically: *unit
//! mode* while every ball has weight exactly 1 and the loads are integers, *weighted mode*
//! otherwise (it switches once, with an exact O(n) recomputation, at the first ball of
//! another weight).
//!
//! # Unit mode: the exact level histogram
//!
//! Per ball the tracker does one thing: the bin's new load `ℓ` (read back from the state)
//! moves one bin from level `ℓ − 1` to level `ℓ` in the histogram `c_ℓ` (number of bins
//! per load). Two counter updates, no arithmetic on potentials at all; a bin that is not
//! where the histogram expects it (a state that relabels its loads) makes the tracker
//! recompute in weighted mode. The hot path is about twenty instructions: no mode check
//! (outside unit mode the histogram is empty, so every move fails into the slow path), one
//! subtraction from the load's `f64` bits to the histogram index, one bounds check for both
//! entries, and growth of the histogram only in a cold path when a bin climbs above its last
//! entry (measured overhead: `cargo bench -p ballast-benches --bench potentials` prints the
//! ratio). Every potential is then *read* from the histogram, exactly,
//! in O(number of distinct loads), with `W = Σ_ℓ c_ℓ ℓ = qn + r` and `k = ℓ − q`:
//!
//! * quadratic: `nΥ = n Σ_ℓ c_ℓ k² − r²` (because `Σ_ℓ c_ℓ k = r`), in integers, so there is
//!   no `Σ x_i² − W²/n` cancellation however large `W` grows;
//! * absolute: `nΔ = Σ_ℓ c_ℓ |nk − r|`, in integers: the crossing of the average is handled
//!   level by level (the sign of `nk − r`), never bin by bin;
//! * exponential sums: `Σ_i e^{a y_i} = e^{−a r/n} Σ_ℓ c_ℓ e^{a k}` (`a = α` for `Φ_α`,
//!   `a = ±α` for `Γ_α`), a dot product with a table of `e^{a k}`; nothing accumulates over
//!   the run. When the largest exponent passes 400 the sum is taken relative to `e^{L}`, so
//!   nothing overflows (values beyond `f64` remain available as logarithms,
//!   [`Potentials::ln_value`]).
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
    fn unit_sum(&self, levels: &Levels, t: Total) -> (f64, f64) {
        let (lo, counts) = levels.counts();
        let q = t.q as i64;
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
    fn unit_ln_value(&self, levels: &Levels, t: Total) -> f64 {
        let (s, l) = self.unit_sum(levels, t);
        l + s.ln() - self.a * (t.r as f64 / t.n as f64)
    }

    /// Unit mode: `Σ_i e^{a y_i}` (`+∞` beyond `f64`).
    fn unit_value(&self, levels: &Levels, t: Total) -> f64 {
        let (s, l) = self.unit_sum(levels, t);
        let frac = t.r as f64 / t.n as f64;
        if l == 0.0 {
            s * (-self.a * frac).exp()
        } else {
            (l + s.ln() - self.a * frac).exp()
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

/// Unit-mode bookkeeping besides the level histogram ([`Potentials`] keeps that outside the
/// mode, so the per-ball path needs no mode check). Every potential is read from the
/// histogram exactly (integer arithmetic for the quadratic and absolute potentials).
#[derive(Clone, Debug)]
struct Unit {
    n: u64,
    /// `W` when the tracker attached (to count balls).
    w_attach: u64,
}

/// `W = q·n + r` (`0 <= r < n`), read from the histogram.
#[derive(Clone, Copy, Debug)]
struct Total {
    n: u64,
    w: u64,
    q: u64,
    r: u64,
}

impl Unit {
    /// Unit-mode bookkeeping for `state`, if its loads are non-negative integers that
    /// [`LoadState::load`] reports absolutely (as [`ballast_core::UnitLoads`] and
    /// [`ballast_core::level::LevelLoads`] do).
    fn from_state<S: LoadState>(state: &S) -> Option<(Self, Levels)> {
        let n = state.n();
        let total = state.total();
        if !(total >= 0.0 && total.fract() == 0.0 && total < 2f64.powi(53)) {
            return None;
        }
        let mut sum = 0u64;
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
        }
        if sum != total as u64 {
            return None;
        }
        let levels = Levels::from_loads((0..n).map(|i| {
            let x: f64 = state.load(i).into();
            x as u64
        }));
        Some((Self { n: n as u64, w_attach: sum }, levels))
    }

    /// `W`, `q`, `r`: O(levels).
    fn total(&self, levels: &Levels) -> Total {
        let (lo, counts) = levels.counts();
        let w: u128 = counts.iter().zip(lo..).map(|(&c, l)| u128::from(c) * u128::from(l)).sum();
        let w = w as u64;
        Total { n: self.n, w, q: w / self.n, r: w % self.n }
    }

    /// `Υ = Σ_ℓ c_ℓ (ℓ − W/n)²`, exactly: with `k = ℓ − q`, `Σ c_ℓ k = r`, so
    /// `nΥ = n Σ c_ℓ k² − r²`, all in small integers.
    fn quadratic(levels: &Levels, t: Total) -> f64 {
        let (lo, counts) = levels.counts();
        let k0 = lo as i128 - t.q as i128;
        let s2: i128 = counts.iter().zip(k0..).map(|(&c, k)| c as i128 * k * k).sum();
        let num = t.n as i128 * s2 - (t.r as i128) * (t.r as i128);
        i128_to_f64(num) / t.n as f64
    }

    /// `Δ = Σ_ℓ c_ℓ |ℓ − W/n| = (1/n) Σ_ℓ c_ℓ |n(ℓ − q) − r|`, exactly.
    fn absolute(levels: &Levels, t: Total) -> f64 {
        let (lo, counts) = levels.counts();
        let (n, r) = (t.n as i128, t.r as i128);
        let k0 = lo as i128 - t.q as i128;
        let s: i128 = counts.iter().zip(k0..).map(|(&c, k)| c as i128 * (n * k - r).abs()).sum();
        i128_to_f64(s) / t.n as f64
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
    /// Boxed: large, and off the unit-mode hot path.
    Real(Box<Real>),
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
/// Cost per ball: O(1) (amortised; expected amortised for the absolute potential with
/// weighted balls). Cost per read: O(number of distinct loads) in unit mode, O(1) in
/// weighted mode.
#[derive(Clone, Debug)]
pub struct Potentials {
    /// Unit mode: the level histogram (the only thing a unit ball touches). Empty in the
    /// other modes, where every [`Levels::move_up_f64`] fails and sends the ball to the slow
    /// path: the hot path needs no mode check.
    levels: Levels,
    specs: Vec<PotentialSpec>,
    reads: Vec<Read>,
    exps: Vec<ExpSum>,
    want_quadratic: bool,
    want_absolute: bool,
    mode: Mode,
    /// Balls handled by the slow path (weighted mode, attaching) and their total weight.
    slow_balls: u64,
    slow_weight_sum: f64,
    /// Balls handled by unit mode before it was left (counted when leaving it).
    fast_balls: u64,
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
            levels: Levels::default(),
            specs: specs.to_vec(),
            want_quadratic: reads.iter().any(|r| matches!(r, Read::Quadratic)),
            want_absolute: reads.iter().any(|r| matches!(r, Read::Absolute)),
            reads,
            exps,
            mode: Mode::Detached,
            slow_balls: 0,
            slow_weight_sum: 0.0,
            fast_balls: 0,
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

    /// Balls observed so far (the index of the last ball, counting from 1). O(levels) in
    /// unit mode, where the balls are counted by the histogram.
    pub fn balls(&self) -> u64 {
        let fast = self.fast_balls + self.slow_balls;
        match &self.mode {
            Mode::Unit(u) => fast + (u.total(&self.levels).w - u.w_attach),
            _ => fast,
        }
    }

    /// Work counters.
    pub fn stats(&self) -> TrackingStats {
        let mut s = self.stats;
        s.balls = self.balls();
        if let Mode::Real(r) = &self.mode {
            s.queue_visits = r.above.as_ref().map_or(0, AboveSet::visits);
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
        if let Mode::Unit(u) = &self.mode {
            self.fast_balls += u.total(&self.levels).w - u.w_attach;
        }
        self.levels = Levels::default();
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
        if let Mode::Unit(u) = &self.mode {
            self.fast_balls += u.total(&self.levels).w - u.w_attach;
        }
        self.levels = Levels::default();
        if let Some((u, levels)) = unit_ok.then(|| Unit::from_state(state)).flatten() {
            self.mode = Mode::Unit(u);
            self.levels = levels;
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
        self.mode = Mode::Real(Box::new(r));
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
        match &self.mode {
            Mode::Unit(u) => self.unit_value(k, u.total(&self.levels)),
            _ => self.value_in(k),
        }
    }

    /// Potential `k` in unit mode with the totals `t` computed once.
    fn unit_value(&self, k: usize, t: Total) -> f64 {
        let (e, l) = (&self.exps, &self.levels);
        match self.reads[k] {
            Read::Exp(i) => e[i].unit_value(l, t),
            Read::Cosh(p, m) => e[p].unit_value(l, t) + e[m].unit_value(l, t),
            Read::Quadratic => Unit::quadratic(l, t),
            Read::Absolute => Unit::absolute(l, t),
        }
    }

    /// Potential `k` when not in unit mode.
    fn value_in(&self, k: usize) -> f64 {
        let e = &self.exps;
        let Mode::Real(r) = &self.mode else { return f64::NAN };
        let d = r.d.value();
        match self.reads[k] {
            Read::Exp(i) => e[i].value(d),
            Read::Cosh(p, m) => e[p].value(d) + e[m].value(d),
            Read::Quadratic => r.quad.value().max(0.0),
            Read::Absolute => match &r.above {
                Some(a) => (2.0 * a.positive_sum()).max(0.0),
                None => f64::NAN,
            },
        }
    }

    /// The natural logarithm of potential `k`: finite even when the value overflows `f64`
    /// (`−∞` for a zero quadratic or absolute potential).
    pub fn ln_value(&self, k: usize) -> f64 {
        let (e, l) = (&self.exps, &self.levels);
        match (&self.mode, self.reads[k]) {
            (Mode::Detached, _) => f64::NAN,
            (Mode::Unit(u), Read::Exp(i)) => e[i].unit_ln_value(l, u.total(l)),
            (Mode::Unit(u), Read::Cosh(p, m)) => {
                let t = u.total(l);
                ln_add(e[p].unit_ln_value(l, t), e[m].unit_ln_value(l, t))
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
        match &self.mode {
            Mode::Unit(u) => {
                let t = u.total(&self.levels);
                out.extend((0..self.specs.len()).map(|k| self.unit_value(k, t)));
            }
            _ => out.extend((0..self.specs.len()).map(|k| self.value_in(k))),
        }
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
        // Balls handled on the unit-mode fast path all had weight 1.
        let (fast, slow) = (self.fast_balls, self.slow_balls);
        if fast + slow == 0 {
            1.0
        } else {
            (fast as f64 + self.slow_weight_sum) / (fast + slow) as f64
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
    #[inline(always)]
    fn on_ball<S: LoadState>(&mut self, state: &S, bin: usize, weight: f64) {
        // Unit mode: loads are integers (checked when attaching) and the histogram is
        // non-empty. A load that is not where the histogram expects it, and every ball in the
        // other modes (empty histogram), goes to the slow path.
        if !(weight == 1.0 && self.levels.move_up_f64(state.load(bin).into())) {
            self.on_ball_slow(state, bin, weight);
        }
    }

    fn on_observation<S: LoadState>(&mut self, state: &S) {
        if !self.is_attached() {
            self.attach(state);
        }
    }
}
