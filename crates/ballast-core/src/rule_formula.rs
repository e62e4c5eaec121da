//! The `rule` process (`docs/processes.md#rule`): `d` samples drawn by the run's sampling
//! law, and a decision formula ([`Formula::parse_decision`]) whose value is the 1-based
//! position of the sample that gets the ball.
//!
//! The variables ([`VARS`]): `x1` … `x8`, the loads of the samples in draw order (only
//! `x1` … `xd` may be read); `avg`, the average load W/n the decision sees; `t`, the balls
//! placed before this one (batched: before the batch); `n`; `d`; and `u`, a uniform number
//! in [0, 1), drawn from the run's random numbers (53 bits of one word) after the samples,
//! only when the formula reads it. Two-Choice with random ties is
//! `if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))`.
//!
//! The formula is compiled once, to closures ([`Formula::compiled`]: the values of the
//! interpreter [`Formula::eval`], bit for bit), and evaluated once per ball. A value that is
//! not an integer in 1..=d is refused at validation where a probe of the formula's range finds it
//! ([`check_probes`]); one that only a run finds stops the run with the values that gave it
//! (a panic: the rule cannot place that ball).
//!
//! **The decision cache.** When the formula reads neither `avg` nor `t`, the samples are at
//! most 3 and their loads are integers ([`LoadState::int_load`]: unit balls), the decision
//! is a function of the loads and `u` alone (`n` and `d` are fixed for a run). The rule then
//! keeps a small direct-mapped table from the loads to that function, computed once per load
//! tuple by partial evaluation ([`Formula::residual`], `formula/partial.rs`): a constant
//! position, a step `if(u < c, i, j)` between two positions, or "evaluate the formula" (for
//! anything else, and for values that are not positions, so that those still stop the run
//! with the same message). Why it is exact: the residual's constants are the doubles the
//! interpreter computes (its own operations on the same operands), and a step's two sides
//! are the formula's values on each side of `c` for every `u` (the docs of `partial.rs`);
//! [`Formula::compiled`] gives the interpreter's values bit for bit; `u < c` is decided on
//! the integer `k` behind `u` with a threshold that is exact (`rule_formula/cache.rs`). The
//! random numbers are drawn as before: the samples, then one word for `u` on every ball when
//! the formula reads it, looked up or not. A table that keeps missing (loads spread wider
//! than it holds) is dropped for the rest of the run (`DecisionCache::over_budget`).
//! On plain unit loads with replacement the rule also has a kernel
//! ([`Rule::run_kernel`]: the engine's loop without its per-ball bookkeeping) that makes the
//! same draws and decisions as [`Rule::place`]. `tests/rule_cache.rs` checks the cached
//! decisions against the formula's values on generated formulas, loads and words, that it
//! rejects deliberately wrong caches ([`CacheFlaw`]), and that runs are equal with and
//! without the cache.

mod cache;

use rand::RngCore;

use crate::formula::{Compiled, Formula};
use crate::loads::{LoadState, UnitLoads};
use crate::process::distinct::SparseDraw;
use crate::process::{Ctx, Placement, Ranks, Rule};
#[doc(hidden)]
pub use cache::CacheFlaw;
use cache::DecisionCache;

/// The variables of a rule formula, in evaluation order.
pub const VARS: &[&str] =
    &["x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "avg", "t", "n", "d", "u"];

/// The most samples a rule draws.
pub const MAX_D: u32 = crate::spec::RULE_MAX_D;

const AVG: usize = 8;
const T: usize = 9;
const N: usize = 10;
const D: usize = 11;
const U: usize = 12;

/// Reads a rule formula for `d` samples: the decision grammar in [`VARS`], and no `xk`
/// with `k > d`.
pub fn parse(src: &str, d: u32) -> Result<Formula, String> {
    let f = Formula::parse_decision(src, VARS)?;
    if let Some(k) = (d + 1..=MAX_D).find(|k| f.uses(VARS[*k as usize - 1])) {
        return Err(format!("formula \"{src}\" reads x{k}, but d = {d} samples are drawn"));
    }
    Ok(f)
}

/// Refuses a formula whose value is not an integer in 1..=d at a probe of its range: every
/// combination of sample loads in {0, 1, 2, 3} (in {0, 1} from d = 5), with `avg` 0 and the
/// loads' mean, `t` at the first and last ball of a run of `m`, and `u` in {0, 0.25, 0.5,
/// 0.75, 0.999}. The error names the probe.
pub fn check_probes(f: &Formula, d: u32, n: u64, m: u64) -> Result<(), crate::Error> {
    let levels: u64 = if d <= 4 { 4 } else { 2 };
    let mut values = [0.0; VARS.len()];
    values[N] = n as f64;
    values[D] = f64::from(d);
    let mut stack = Vec::new();
    for code in 0..levels.pow(d) {
        let mut c = code;
        for x in values.iter_mut().take(d as usize) {
            *x = (c % levels) as f64;
            c /= levels;
        }
        let mean = values[..d as usize].iter().sum::<f64>() / f64::from(d);
        for (avg, t, u) in probes(mean, m) {
            (values[AVG], values[T], values[U]) = (avg, t, u);
            let v = f.eval(&values, &mut stack);
            if position(v, d).is_none() {
                return Err(crate::Error::Refused(format!(
                    "rule formula \"{}\" gives {v} at {}: expected an integer in 1..={d} (the \
                     position of the chosen sample)",
                    f.source(),
                    describe(&values, d)
                )));
            }
        }
    }
    Ok(())
}

fn probes(mean: f64, m: u64) -> impl Iterator<Item = (f64, f64, f64)> {
    let ts = [0.0, m.saturating_sub(1) as f64];
    [0.0, mean].into_iter().flat_map(move |avg| {
        ts.into_iter()
            .flat_map(move |t| [0.0, 0.25, 0.5, 0.75, 0.999].into_iter().map(move |u| (avg, t, u)))
    })
}

fn describe(values: &[f64], d: u32) -> String {
    let xs: Vec<String> = (0..d as usize).map(|i| format!("{} = {}", VARS[i], values[i])).collect();
    format!("{}, avg = {}, t = {}, u = {}", xs.join(", "), values[AVG], values[T], values[U])
}

/// The 0-based sample index of a formula value, if it is an integer in 1..=d.
#[inline(always)]
fn position(v: f64, d: u32) -> Option<usize> {
    // `v as i64` truncates; it equals v exactly when v is an integer (no call to `trunc`,
    // which generic x86-64 has no instruction for; signed conversions are one instruction
    // each way). NaN fails `v >= 1.0`.
    let i = v as i64;
    (v >= 1.0 && v <= f64::from(d) && i as f64 == v).then(|| i as usize - 1)
}

/// The 53-bit integer behind `u`: `u = k·2⁻⁵³` ([`unit`]).
#[inline(always)]
fn unit_bits(word: u64) -> u64 {
    word >> 11
}

/// `u` from one random word: 53 bits, exactly `k·2⁻⁵³`.
#[inline(always)]
fn unit(word: u64) -> f64 {
    unit_bits(word) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// The rule of one run.
pub struct RuleFormula<'a> {
    f: &'a Formula,
    /// `f` compiled (the same values, faster).
    compiled: Compiled,
    d: u32,
    reads_avg: bool,
    reads_u: bool,
    values: [f64; VARS.len()],
    /// `Some` without replacement: the draw of `d` distinct uniform bins.
    distinct: Option<SparseDraw>,
    /// Whether the decision depends on the loads and `u` only, for `d <= 3` (the cache and
    /// the kernel apply).
    local: bool,
    /// The decision cache (module docs), while it pays.
    cache: Option<Box<DecisionCache>>,
}

impl<'a> RuleFormula<'a> {
    /// The rule of `f` over `d` samples, drawn with or without `replacement`.
    pub fn new(f: &'a Formula, d: u32, replacement: bool) -> Self {
        Self::with_cache(f, d, replacement, true, None)
    }

    /// [`RuleFormula::new`] with the decision cache on or off, or deliberately wrong (tests
    /// only).
    #[doc(hidden)]
    pub fn with_cache(
        f: &'a Formula,
        d: u32,
        replacement: bool,
        cached: bool,
        flaw: Option<CacheFlaw>,
    ) -> Self {
        let mut values = [0.0; VARS.len()];
        values[D] = f64::from(d);
        let (reads_avg, reads_u) = (f.uses("avg"), f.uses("u"));
        let distinct = (!replacement).then(|| SparseDraw::new(d));
        let compiled = f.compiled();
        let local = !reads_avg && !f.uses("t") && d <= 3;
        let cache = (cached && local).then(|| Box::new(DecisionCache::new(flaw)));
        Self { f, compiled, d, reads_avg, reads_u, values, distinct, local, cache }
    }

    /// The 0-based position of the chosen sample when the samples' loads are in `x1` … `xd`
    /// of the values: sets `avg` (if read), `t`, `n`, and draws `u` (if read).
    #[inline(always)]
    fn decide<R: RngCore + ?Sized>(&mut self, avg: f64, n: f64, t: u64, rng: &mut R) -> usize {
        if self.reads_avg {
            self.values[AVG] = avg;
        }
        // Balls are below 2⁶³: the signed conversion (one instruction) gives the same value.
        self.values[T] = t as i64 as f64;
        self.values[N] = n;
        if self.reads_u {
            self.values[U] = unit(rng.next_u64());
        }
        self.evaluate()
    }

    /// The position the formula gives at the values, or the stop of the run.
    #[inline(always)]
    fn evaluate(&self) -> usize {
        let v = self.compiled.eval(&self.values);
        match position(v, self.d) {
            Some(i) => i,
            None => panic!(
                "rule formula \"{}\" gives {v} at {}: expected an integer in 1..={}",
                self.f.source(),
                describe(&self.values, self.d),
                self.d
            ),
        }
    }

    /// The 0-based position chosen among samples that report the loads `xs` (the delay
    /// setting: loads of the past), with the current average load `avg` on `n` bins after `t`
    /// balls; draws `u` from `rng` if the formula reads it.
    pub fn choose_among<R: RngCore + ?Sized>(
        &mut self,
        xs: &[f64],
        avg: f64,
        n: f64,
        t: u64,
        rng: &mut R,
    ) -> usize {
        self.values[..xs.len()].copy_from_slice(xs);
        self.decide(avg, n, t, rng)
    }

    /// Whether the decision cache is on (tests).
    #[doc(hidden)]
    pub fn caches(&self) -> bool {
        self.cache.is_some()
    }

    /// The 0-based position for the integer loads `xs` (one per sample) on `n` bins at ball
    /// `t`, with `word` as the random word of `u` (read only if the formula reads `u`):
    /// through the cache when it is on. For tests of the cache against the formula.
    #[doc(hidden)]
    pub fn decide_loads(&mut self, xs: &[u64], n: usize, t: u64, word: u64) -> usize {
        assert!(self.local && xs.len() == self.d as usize, "a cached rule's loads");
        let w = if self.reads_u { word } else { 0 };
        let mut cache = self.cache.take();
        let i = match *xs {
            [a] => self.decide_ints(&mut cache, [a], w, n, t),
            [a, b] => self.decide_ints(&mut cache, [a, b], w, n, t),
            [a, b, c] => self.decide_ints(&mut cache, [a, b, c], w, n, t),
            _ => unreachable!("d <= 3"),
        };
        self.cache = self.cache.take().or(cache);
        i
    }

    /// The decision for integer loads: a hit of `cache` (taken out of the rule, which keeps
    /// it in registers), or [`RuleFormula::decide_miss`]. `w` is the word of `u` (0 if the
    /// formula does not read it).
    #[inline(always)]
    fn decide_ints<const DD: usize>(
        &mut self,
        cache: &mut Option<Box<DecisionCache>>,
        xs: [u64; DD],
        w: u64,
        n: usize,
        t: u64,
    ) -> usize {
        let slot = DecisionCache::slot(&xs);
        if let (Some(c), Some((key, idx))) = (cache.as_deref(), slot) {
            if c.n == n {
                if let Some(i) = c.hit(key, idx, cache::probe(w)) {
                    return i;
                }
            }
        }
        self.decide_miss(cache, &xs, slot, w, n, t)
    }

    /// The decision that the cache does not hold: fills the entry at `slot` (the key and the
    /// index) if it is not there, or evaluates the formula.
    #[cold]
    #[inline(never)]
    fn decide_miss(
        &mut self,
        cache: &mut Option<Box<DecisionCache>>,
        xs: &[u64],
        slot: Option<(u64, usize)>,
        w: u64,
        n: usize,
        t: u64,
    ) -> usize {
        for (v, &x) in self.values.iter_mut().zip(xs) {
            *v = x as f64;
        }
        self.values[T] = t as i64 as f64;
        self.values[N] = n as f64;
        if self.reads_u {
            self.values[U] = unit(w);
        }
        if let (Some(c), Some((key, idx))) = (cache.as_deref_mut(), slot) {
            if c.n != n {
                c.reset(n);
            }
            if !c.is_plain(key, idx) {
                if c.over_budget(t) {
                    *cache = None;
                    return self.evaluate();
                }
                let r = self.f.residual(&self.values, U);
                if let Some(word) = c.fill(key, idx, r, self.d, cache::probe(w)) {
                    return cache::pick(word, cache::probe(w));
                }
            }
        }
        self.evaluate()
    }

    /// [`Rule::place`] through the cache, for `DD` samples at `bins` whose loads are integers
    /// of the state (`None`, with nothing drawn, where they are not).
    #[inline(always)]
    fn place_cached<const DD: usize, S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        bins: &[usize],
        rng: &mut R,
        t: u64,
    ) -> Option<usize> {
        let mut xs = [0u64; DD];
        for (x, &bin) in xs.iter_mut().zip(bins) {
            *x = u64::try_from(s.int_load(bin)?).ok()?;
        }
        let w = if self.reads_u { rng.next_u64() } else { 0 };
        let mut cache = self.cache.take();
        let i = self.decide_ints(&mut cache, xs, w, s.n(), t);
        self.cache = cache;
        Some(i)
    }

    /// The kernel of `DD` samples with replacement on plain unit loads, for a formula that
    /// reads `u` or not (`RU`): per ball the draws of [`Rule::place`] (the samples, then
    /// `u`'s word if read) and its decision, then the ball added as the engine adds it.
    fn kernel<const DD: usize, const RU: bool, R: RngCore + ?Sized>(
        &mut self,
        u: &mut UnitLoads,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) {
        let n = u.n();
        let (loads, max, total) = u.kernel_parts();
        let mut mx = *max;
        let mut c = *ctx;
        let mut cache = self.cache.take();
        for j in 0..balls {
            let mut bins = [0usize; DD];
            if DD == 2 {
                (bins[0], bins[1]) = c.draw_two(rng);
            } else {
                for bin in &mut bins {
                    *bin = c.draw(rng);
                }
            }
            let xs = bins.map(|b| u64::from(loads[b]));
            let w = if RU { rng.next_u64() } else { 0 };
            let i = self.decide_ints(&mut cache, xs, w, n, c.balls + j);
            // A select, not an index into the array (which would go through memory).
            let bin =
                bins.iter().enumerate().fold(bins[0], |a, (k, &b)| if k == i { b } else { a });
            let l = loads[bin] + 1;
            loads[bin] = l;
            mx = mx.max(l);
        }
        self.cache = cache;
        c.samples += DD as u64 * balls;
        *ctx = c;
        *max = mx;
        *total += balls;
    }
}

impl Rule for RuleFormula<'_> {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _ranks: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        let d = self.d as usize;
        let mut bins = [0usize; MAX_D as usize];
        if let Some(draw) = &mut self.distinct {
            draw.start();
            for bin in bins.iter_mut().take(d) {
                *bin = draw.next(s.n() as u64, rng, ctx);
            }
        } else if d == 2 {
            // The bins of two calls of `Ctx::sample`, from one word where it can.
            (bins[0], bins[1]) = ctx.sample_two(rng);
        } else {
            for bin in bins.iter_mut().take(d) {
                *bin = ctx.sample(rng);
            }
        }
        if self.cache.is_some() {
            let cached = match d {
                1 => self.place_cached::<1, _, _>(s, &bins, rng, ctx.balls),
                2 => self.place_cached::<2, _, _>(s, &bins, rng, ctx.balls),
                _ => self.place_cached::<3, _, _>(s, &bins, rng, ctx.balls),
            };
            if let Some(i) = cached {
                return Placement::one(bins[i]);
            }
        }
        for (x, &bin) in self.values.iter_mut().zip(&bins).take(d) {
            *x = s.load(bin).into();
        }
        let avg = if self.reads_avg { s.average() } else { 0.0 };
        let i = self.decide(avg, s.n() as f64, ctx.balls, rng);
        Placement::one(bins[i])
    }

    /// Formulas of the loads and `u` only, with replacement, on plain unit loads and
    /// uniform samples: [`RuleFormula::kernel`]. The engine sets [`Ctx::balls`] before the
    /// call (the `t` of a run that stops on a value that is not a position).
    #[inline(always)]
    fn run_kernel<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &mut S,
        balls: u64,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> bool {
        if !self.local || self.distinct.is_some() || !ctx.is_uniform() {
            return false;
        }
        let Some(u) = s.plain_unit() else { return false };
        match (self.d, self.reads_u) {
            (1, false) => self.kernel::<1, false, R>(u, balls, rng, ctx),
            (1, true) => self.kernel::<1, true, R>(u, balls, rng, ctx),
            (2, false) => self.kernel::<2, false, R>(u, balls, rng, ctx),
            (2, true) => self.kernel::<2, true, R>(u, balls, rng, ctx),
            (_, false) => self.kernel::<3, false, R>(u, balls, rng, ctx),
            (_, true) => self.kernel::<3, true, R>(u, balls, rng, ctx),
        }
        true
    }
}
