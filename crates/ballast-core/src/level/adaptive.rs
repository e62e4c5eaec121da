//! Czumaj–Stemann adaptive probing ([`crate::czumaj::Adaptive`]) on the level engine,
//! sequential (`docs/level-engine.md#adaptive-probing`).
//!
//! A ball probes uniform bins one at a time, keeps the least loaded one seen (ties uniformly
//! at random) and stops when its load is below `τ_k` (k = probes so far; τ may read the
//! average load `W/n`) or at the cap. Its decisions read the loads of uniform bins and `W`
//! only, so on the sorted view of [`LevelLoads`] a probe is a uniform *position* and its load
//! the level of that position: the law of the histogram and of the probe count per ball is
//! the bin engine's. The random tie among probed bins of the least load is not drawn here:
//! those bins sit on the same level, and moving any one of them up gives the same histogram.
//!
//! Three paths, all recording the probe histogram ([`RunOutcome::samples_per_step`],
//! [`RunOutcome::steps`], [`RunOutcome::samples`]) exactly as the bin engine's loop does:
//!
//! - **Greedy\[d\]** (a threshold that is −∞ at every probe count `k >= 1`: `tau.base = −∞`,
//!   or `tau.until <= 1`; cap `2 <= d <= 1024`) probes exactly `d` bins per ball and takes
//!   the least loaded, ties at random: that is d-Choice with random ties, step for step, so
//!   it runs as sequential d-Choice on levels (`run_seq_law`: the block loop, or exact
//!   chunks for large n). Its probe histogram is `d` probes for each of the `m` balls.
//! - **Other thresholds** without per-ball observers: [`adaptive_balls`], a tight loop per
//!   stretch between observation points: one 64-bit word from a child generator per probe,
//!   Lemire's exact bounded draw to a position, the position's level from the cumulative
//!   counts (a branch-free count over at most 16 levels, else a binary search), the stop
//!   test `load >= τ_k` with [`Tau::at`] exactly as [`crate::czumaj::Adaptive`] computes it,
//!   and one bin of the lowest probed level moves up.
//! - With a per-ball observer, or `Chunking::Off` ([`crate::simulate_ball_by_ball`]): the
//!   generic loop `run_seq` with the rule [`crate::czumaj::Adaptive`] itself on the sorted
//!   view (it draws the tie coins; same law), which records the probes as the bin engine's
//!   loop does: the reference.

use rand::RngCore;

use super::sequential::{ChildRng, QUEUE_WORDS};
use super::{chunked::ChunkLaw, run_seq, run_seq_law, Chunking};
use crate::czumaj::{Adaptive, Tau};
use crate::histogram::LevelLoads;
use crate::observe::record_samples;
use crate::observe::GapTracker;
use crate::spec::greedy_d;
use crate::{Error, Observer, ProcessSpec, RunOutcome, RunSpec};

/// Sequential adaptive probing on the level engine (see the module docs for the paths).
pub(super) fn run_seq_adaptive<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    st: LevelLoads,
    tau: Tau,
    cap: Option<u32>,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> RunOutcome {
    let greedy = greedy_d(&tau, cap);
    let rule = Adaptive::new(tau, cap, spec.m);
    // A threshold formula: the rule itself on the sorted view (it reads loads, W/n, k, t).
    if chunking == Chunking::Off || rule.tau.formula.is_some() {
        return run_seq(spec, st, rule, rng, observer);
    }
    if let Some(d) = greedy {
        let mut out = run_seq_law(spec, st, ChunkLaw::DChoice { d }, rng, observer, chunking);
        (out.steps, out.samples_per_step) = (spec.m, greedy_probes(d, spec.m));
        return out;
    }
    if O::PER_BALL {
        return run_seq(spec, st, rule, rng, observer);
    }
    // `Chunking::Fixed` (tests): the bucket table for every stretch, however short.
    let indexed = matches!(chunking, Chunking::Fixed { .. });
    run_kernel::<NO_FLAW, _, _>(spec, st, &rule, rng, observer, indexed)
}

/// Deliberately wrong variants of the level engine's adaptive loop, for the power of its
/// tests.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdaptiveFlaw {
    /// Stops when the least loaded probe has load `<= τ_k` instead of `< τ_k`.
    StopAtThreshold,
    /// Measures τ from the average after the ball, `(W + 1)/n`, instead of `W/n`.
    AverageWithBall,
}

/// Sequential adaptive probing on the level engine through [`adaptive_balls`] with a
/// deliberate flaw (tests only): `spec` must be a valid sequential `adaptive` run.
#[doc(hidden)]
pub fn simulate_adaptive_levels_flawed<R: RngCore + ?Sized>(
    spec: &RunSpec,
    rng: &mut R,
    flaw: AdaptiveFlaw,
) -> Result<RunOutcome, Error> {
    spec.validate()?;
    super::level_support(spec)?;
    let ProcessSpec::Adaptive { ref tau, cap } = spec.process else {
        return Err(Error::Unsupported("an adaptive process only".to_string()));
    };
    let rule = Adaptive::new(tau.clone(), cap, spec.m);
    let st = LevelLoads::of_start(&spec.start, spec.n, rng);
    Ok(match flaw {
        AdaptiveFlaw::StopAtThreshold => {
            run_kernel::<1, _, _>(spec, st, &rule, rng, &mut (), false)
        }
        AdaptiveFlaw::AverageWithBall => {
            run_kernel::<2, _, _>(spec, st, &rule, rng, &mut (), false)
        }
    })
}

/// The observation loop around [`adaptive_balls`] (no per-ball observer): the stretches
/// between observation points, one child generator for the whole run (so the balls do not
/// depend on where the observation points are). `indexed`: the bucket table even for short
/// stretches.
fn run_kernel<const FLAW: u8, R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    mut st: LevelLoads,
    rule: &Adaptive,
    rng: &mut R,
    observer: &mut O,
    indexed: bool,
) -> RunOutcome {
    let m = spec.m;
    let mut gaps = GapTracker::new(spec);
    let mut points = crate::observe::Schedule::new(spec);
    let (mut done, mut samples) = (0u64, 0u64);
    let mut per_step = Vec::new();
    let words = &mut Words::new(ChildRng::from_parent(rng));
    while done < m {
        let stretch = points.next() - done;
        samples += adaptive_balls::<FLAW>(&mut st, rule, stretch, words, &mut per_step, indexed);
        done = points.next();
        gaps.observe(&st, observer);
        points.advance(done);
    }
    if m == 0 {
        gaps.observe(&st, observer);
    }
    let mut out = gaps.outcome(&st, m, samples);
    (out.steps, out.samples_per_step) = (m, per_step);
    out
}

/// The probe histogram of `m` balls of Greedy\[d\]: all `m` steps drew `d` probes (empty
/// when `m = 0`, as the bin engine's).
pub(crate) fn greedy_probes(d: u32, m: u64) -> Vec<u64> {
    let mut hist = Vec::new();
    if m > 0 {
        hist.resize(d as usize + 1, 0);
        hist[d as usize] = m;
    }
    hist
}

/// The `FLAW` parameter of the kernel's simulations.
const NO_FLAW: u8 = 0;

/// The words of a child generator in blocks of [`QUEUE_WORDS`] (four interleaved chains,
/// `ChildRng::fill`), handed out one at a time in the generator's order. One per run, so
/// the words a ball takes do not depend on where the observation points cut the run.
struct Words {
    buf: [u64; QUEUE_WORDS],
    pos: usize,
    rng: ChildRng,
}

impl Words {
    fn new(rng: ChildRng) -> Self {
        Self { buf: [0; QUEUE_WORDS], pos: QUEUE_WORDS, rng }
    }

    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        if self.pos == QUEUE_WORDS {
            self.refill();
        }
        let w = self.buf[self.pos];
        self.pos += 1;
        w
    }

    /// The next [`QUEUE_WORDS`] words, once per that many: out of line, so that a probe,
    /// which draws through [`Words::next_u64`], stays small enough to be inlined.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) {
        self.rng.fill(&mut self.buf);
        self.pos = 0;
    }
}

/// A uniform position in `0..n` from 64-bit words: Lemire's multiply-shift, exact (a word
/// whose low product falls in the biased range, probability below `n/2⁶⁴`, is redrawn).
#[inline(always)]
fn position(rng: &mut Words, n: u64) -> u64 {
    let mut m = u128::from(rng.next_u64()) * u128::from(n);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = u128::from(rng.next_u64()) * u128::from(n);
        }
    }
    (m >> 64) as u64
}

/// One ball's probes: `level()` draws a probe and returns its level index; the ball stops
/// after the first probe when its level is below `first` (τ_1 as a level bound), after
/// probe k >= 2 when `stop(least level, k)`, or at `cap`. Returns the least level probed
/// and the number of probes.
#[inline(always)]
fn probe(
    mut level: impl FnMut() -> usize,
    cap: u32,
    first: i64,
    stop: impl Fn(usize, u32) -> bool,
) -> (usize, u32) {
    let mut best = level();
    let mut probes = 1u32;
    if cap > 1 && best as i64 >= first {
        loop {
            best = best.min(level());
            probes += 1;
            if probes >= cap || stop(best, probes) {
                break;
            }
        }
    }
    (best, probes)
}

/// τ_1's load bound as a function of the balls so far: `f(W)` is computed by correctly
/// rounded operations on `W` (a division, a product and sums, then a rounding to an integer),
/// each monotone in its argument, so `f` is a monotone step function and the set of `W` with
/// one value is an interval. The bound is recomputed only when `W` leaves the interval it
/// was found in (about once per `n/|per_average|` balls), whose end an exponential and a
/// binary search find: O(log n) evaluations per change instead of a division per ball.
struct FirstBound {
    value: i64,
    /// The first total from which the value may differ.
    until: u64,
}

impl FirstBound {
    fn new(total: u64, f: &impl Fn(u64) -> i64) -> Self {
        let mut b = Self { value: 0, until: 0 };
        b.find(total, f);
        b
    }

    /// The bound at `total` (which only grows).
    #[inline(always)]
    fn at(&mut self, total: u64, f: &impl Fn(u64) -> i64) -> i64 {
        if total >= self.until {
            self.find(total, f);
        }
        debug_assert_eq!(self.value, f(total));
        self.value
    }

    #[cold]
    fn find(&mut self, total: u64, f: &impl Fn(u64) -> i64) {
        let v = f(total);
        // The largest W >= total with f(W) = v lies in [lo, hi).
        let (mut lo, mut step) = (total, 1u64);
        let hi = loop {
            match total.checked_add(step) {
                Some(w) if w < crate::level::LEVEL_MAX_BALLS * 2 => {
                    if f(w) != v {
                        break w;
                    }
                    lo = w;
                    step *= 2;
                }
                _ => {
                    // Constant up to any total the engine reaches.
                    (self.value, self.until) = (v, u64::MAX);
                    return;
                }
            }
        };
        let mut hi = hi;
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if f(mid) == v {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (self.value, self.until) = (v, hi);
    }
}

/// Entries of the bucket table of [`adaptive_balls`].
const TABLE: usize = 1024;

/// Stretches shorter than this go through [`LevelLoads::level_of`] (building the bucket
/// table costs about [`TABLE`] lookups).
const INDEXED_MIN_BALLS: u64 = 4 * TABLE as u64;

/// The bucket table holds level indices as bytes: histograms with more levels than this go
/// through [`LevelLoads::level_of`].
const INDEXED_MAX_LEVELS: usize = 250;

/// `balls` balls of adaptive probing on `st`, without observers; adds each ball's probe count
/// to `per_step` and returns the probes drawn. `indexed`: the bucket table however short the
/// stretch. `FLAW`: [`NO_FLAW`], or 1 + the index of an
/// [`AdaptiveFlaw`] (tests).
///
/// The level of a probe's position `p`: `table[p >> shift]`, the level of the first position
/// of its bucket of `2^shift` positions, then an upward scan over the level boundaries inside
/// the bucket (`cum[j] <= p`; few: most levels are wide). A ball moves the boundary of its
/// level down one position, which changes the table only when that position starts a bucket.
#[inline(never)]
fn adaptive_balls<const FLAW: u8>(
    st: &mut LevelLoads,
    rule: &Adaptive,
    balls: u64,
    child: &mut Words,
    per_step: &mut Vec<u64>,
    indexed: bool,
) -> u64 {
    let n = st.bins();
    let (tau, cap) = (&rule.tau, rule.cap);
    let relative = tau.per_average != 0.0 || FLAW == 2;
    let mut samples = 0u64;
    let mut shift = 0;
    while (n - 1) >> shift >= TABLE as u64 {
        shift += 1;
    }
    let used = ((n - 1) >> shift) as usize + 1;
    let mut table = [0u8; TABLE];
    let mut stale = true;
    // W as the rule sees it (the flaw: W + 1).
    let seen = |total: u64| if FLAW == 2 { total + 1 } else { total };
    // W/n as the rule computes it (`s.total() / s.n() as f64`).
    let average = |w: u64| if relative { w as f64 / n as f64 } else { 0.0 };
    // The first stop test as a load bound: an integer x is `< τ_1` iff x < ⌈τ_1⌉ (`<= τ_1`
    // iff x < ⌊τ_1⌋ + 1); −∞ saturates to i64::MIN (never stops). Truncation and a
    // correction, not `f64::ceil` (a library call on baseline x86-64).
    let load_bound = |total: u64| {
        let t1 = tau.at(1, average(seen(total)));
        let trunc = t1 as i64;
        if FLAW == 1 {
            trunc - i64::from((trunc as f64) > t1) + 1
        } else {
            trunc + i64::from((trunc as f64) < t1)
        }
    };
    let mut bound = FirstBound::new(st.total, &load_bound);
    let short = balls < INDEXED_MIN_BALLS && !indexed;
    // Probe counts below LOCAL_COUNTS tallied here and added to `per_step` at the end (the
    // same histogram as recording each ball, without a length check per ball).
    let mut counts = [0u64; LOCAL_COUNTS];
    for _ in 0..balls {
        let w = seen(st.total);
        let lo = st.lo;
        let stop = |best: usize, k: u32| {
            let (load, t) = ((lo + best as u64) as f64, tau.at(k, average(w)));
            if FLAW == 1 {
                load <= t
            } else {
                load < t
            }
        };
        let first = bound.at(st.total, &load_bound).saturating_sub(lo as i64);
        let k;
        if short || st.cum.len() > INDEXED_MAX_LEVELS {
            // Short stretches and wide histograms: the state's own lookup and step.
            let (best, probes) = probe(|| st.level_of(position(child, n)), cap, first, stop);
            st.bump(best);
            stale = true;
            k = probes;
        } else {
            if stale {
                for (i, t) in table[..used].iter_mut().enumerate() {
                    *t = st.level_of((i as u64) << shift) as u8;
                }
                stale = false;
            }
            let cum = &st.cum;
            let level = |p: u64| {
                let mut j = usize::from(table[(p >> shift) as usize & (TABLE - 1)]);
                while cum[j] <= p {
                    j += 1;
                }
                j
            };
            let (best, probes) = probe(|| level(position(child, n)), cap, first, stop);
            k = probes;
            bump_indexed(st, &mut table[..used], best, shift);
            debug_assert!(
                (0..used).all(|i| usize::from(table[i]) == st.level_of((i as u64) << shift))
            );
        }
        samples += u64::from(k);
        match counts.get_mut(k as usize) {
            Some(c) => *c += 1,
            None => record_samples(per_step, u64::from(k)),
        }
    }
    add_counts(per_step, &counts);
    samples
}

/// One bin of level `best` moves up (position `cum[best] − 1` joins level `best + 1`), and
/// `table`, the level of every bucket's first position, follows.
#[inline(always)]
fn bump_indexed(st: &mut LevelLoads, table: &mut [u8], best: usize, shift: u32) {
    st.total += 1;
    let c = st.cum[best] - 1;
    st.cum[best] = c;
    if best + 1 == st.cum.len() {
        st.cum.push(st.bins());
    }
    if c & ((1u64 << shift) - 1) == 0 {
        table[(c >> shift) as usize] += 1;
        if c == 0 {
            // The lowest level emptied: about once per n balls.
            st.cum.remove(0);
            st.lo += 1;
            table.iter_mut().for_each(|t| *t -= 1);
        }
    }
}

/// Probe counts tallied in a local array by [`adaptive_balls`].
const LOCAL_COUNTS: usize = 16;

/// Adds the tallies `counts[k]` to the probe histogram, lengthening it as
/// [`record_samples`] would have for each ball.
fn add_counts(per_step: &mut Vec<u64>, counts: &[u64; LOCAL_COUNTS]) {
    for (k, &c) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
        if k >= per_step.len() {
            per_step.resize(k + 1, 0);
        }
        per_step[k] += c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_is_recognised_only_when_no_threshold_can_stop() {
        assert_eq!(greedy_d(&Tau::NEVER, Some(3)), Some(3));
        assert_eq!(greedy_d(&Tau::NEVER, Some(1)), None);
        assert_eq!(greedy_d(&Tau::NEVER, None), None);
        assert_eq!(greedy_d(&Tau::constant_until(2.0, 2), Some(2)), None);
        assert_eq!(greedy_d(&Tau::constant_until(2.0, 1), Some(2)), Some(2));
        assert_eq!(greedy_d(&Tau::PROBE_COUNT, Some(4)), None);
        let open = Tau {
            base: f64::NEG_INFINITY,
            per_probe: 3.0,
            per_average: 1.0,
            until: None,
            formula: None,
        };
        assert_eq!(greedy_d(&open, Some(5)), Some(5));
        assert_eq!(open.at(1, 1e9), f64::NEG_INFINITY);
        assert_eq!(greedy_probes(3, 0), Vec::<u64>::new());
        assert_eq!(greedy_probes(3, 7), vec![0, 0, 0, 7]);
    }

    #[test]
    fn positions_are_exact_lemire_draws() {
        // n = 1: always 0; n = 2^63 + 1: the rejection range is almost half the words.
        let mut rng = Words::new(ChildRng::from_parent(&mut crate::sim_rng(1)));
        for _ in 0..100 {
            assert_eq!(position(&mut rng, 1), 0);
            assert!(position(&mut rng, (1 << 63) + 1) <= 1 << 63);
        }
    }
}
