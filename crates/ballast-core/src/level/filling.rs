//! Sequential Tight-Packing, (1, 1)-Memory / Caching (d = 1), Packing and Twinning on the
//! level engine, in the block loops of `level/sequential.rs` (a bucket table from position
//! to level; one random word per ball, or per step for Packing and Twinning), for runs
//! without per-ball observers; with per-ball observers ball by ball through the
//! one-draw-at-a-time forms, which take the same words.
//!
//! - **Tight-Packing** (`docs/processes.md#tight_packing`): every ball takes one word, whose
//!   low half is a uniform position. A ball of a round in progress goes to a least loaded
//!   bin, i.e. to level 0 (its position is not used); otherwise the position is the step's
//!   one bin sample, whose load `x` is compared with `⌈W/n⌉`: overloaded, the ball goes to that
//!   level; underloaded, a round of `⌈W/n⌉ + offset − x` balls (or the fixed count) starts
//!   and its first ball goes to level 0. The decisions read loads and `W` only, so the
//!   sorted view is exact (the chosen bin of a round is any least loaded one, all alike).
//! - **(1, 1)-Memory and Caching**: the cached bin is one bin, known here only by its load
//!   `c`. Bins of one level are exchangeable, so, before each ball, the cached bin can be
//!   taken to sit at the last position of its level; the ball's uniform position `p` is
//!   then the cached bin itself exactly when `p` is that position (probability `1/n`), and
//!   otherwise a uniform bin among the other `n − 1`, with the load of its level. The
//!   receiver moves up one level, and the cache keeps the load of the bin it keeps (the
//!   receiver's new load or the other candidate's load), as
//!   [`crate::process::memory_one_step`] decides; its one coin (a tie, or for Memory a
//!   difference of one) is the word's top bit, which the position (low half) does not use.
//! - **Packing and Twinning** (`docs/processes.md#packing`): a step takes one word, whose
//!   low half is a uniform position; its level gives the sample's load `x`, and the step's
//!   balls (`⌈W/n⌉ + offset − x` or 2 when `x < ⌈W/n⌉`, else 1) raise that bin level by
//!   level: each ball moves one bin of the level the step's bin is at, and bins of a level
//!   are exchangeable, so the histogram is exact. A step cut by an observation point or by
//!   m keeps its rest ([`StepLaw`]); as on the bin engine it is placed whole before an
//!   observation, and cut at m under `truncate`.
//!
//! Exactness is tested against the law computed from the definition at tiny `n` (the whole
//! sorted final state and the sample count, χ² at `ballast_testkit::ALPHA`), with a
//! deliberately wrong variant of each that the same test rejects.

use std::hint::select_unpredictable;

use rand::RngCore;

use super::sequential::{self, ChildRng, Levels, RankIndex};
use super::{run_stretches, ChunkRoute, Chunking};
use crate::histogram::LevelLoads;
use crate::observe::GapTracker;
use crate::observe::Schedule;
use crate::outcome::RunOutcome;
use crate::process::{Filling, TightCount};
use crate::{Observer, ProcessSpec, RunSpec, Stop};

/// Whether `spec` (sequential) runs through this file's loops on the level engine, whose
/// values came with [`super::VALUES_VERSION`] 9.
pub(super) fn changed_in_9(spec: &RunSpec) -> bool {
    matches!(
        spec.process,
        ProcessSpec::TightPacking { .. }
            | ProcessSpec::Memory { d: 1, k: 1 }
            | ProcessSpec::Caching { d: 1 }
    )
}

/// Whether `spec` (sequential) runs through this file's step loop on the level engine, whose
/// values came with [`super::VALUES_VERSION`] 10.
pub(super) fn changed_in_10(spec: &RunSpec) -> bool {
    matches!(spec.process, ProcessSpec::Packing { .. } | ProcessSpec::Twinning)
}

/// The cache holds no bin yet (before the first ball).
const EMPTY: u64 = u64::MAX;

/// `⌈W/n⌉` kept up to date ball by ball without a division.
#[derive(Clone, Copy, Debug)]
struct CeilAverage {
    /// `⌈W/n⌉` for the current `W`.
    q: u64,
    /// `q · n`: `W` may grow to this before `q` grows.
    next: u64,
    n: u64,
}

impl CeilAverage {
    fn new(w: u64, n: u64) -> Self {
        let q = w.div_ceil(n);
        Self { q, next: q * n, n }
    }

    /// The total is now `w` (never less than before).
    #[inline(always)]
    fn advance(&mut self, w: u64) {
        while w > self.next {
            self.q += 1;
            self.next += self.n;
        }
    }

    /// One more ball.
    #[inline(always)]
    fn add_one(&mut self, w_after: u64) {
        if w_after > self.next {
            self.q += 1;
            self.next += self.n;
        }
    }
}

/// Tight-Packing's round between balls (and between stretches).
#[derive(Clone, Copy, Debug)]
pub(super) struct TightLaw {
    count: TightCount,
    /// Balls of the current round still to place.
    rem: u32,
    /// Test of the tests: a bin exactly at `⌈W/n⌉` counts as underloaded.
    flaw: bool,
}

impl TightLaw {
    pub(super) fn new(count: TightCount) -> Self {
        Self { count, rem: 0, flaw: false }
    }

    /// One ball at `⌈W/n⌉ = ceil` whose word gives the level `j` with load `x`: the level
    /// that gets the ball and whether it took a bin sample (not in a round, whose balls go
    /// to level 0 and leave `j` unused). Selects, not branches: whether a round goes on and
    /// whether a sample is underloaded are unpredictable.
    #[inline(always)]
    fn ball(&mut self, ceil: u64, j: usize, x: u64) -> (usize, bool) {
        let in_round = self.rem > 0;
        let under = if self.flaw { x <= ceil } else { x < ceil };
        // As the bin engine computes it, including the cast to the round's u32 count.
        let k = match self.count {
            TightCount::AsPacking { offset } => (ceil + u64::from(offset)).wrapping_sub(x) as u32,
            TightCount::Fixed(k) => k.max(1),
        };
        let started = select_unpredictable(under, k.saturating_sub(1), 0);
        self.rem = select_unpredictable(in_round, self.rem.wrapping_sub(1), started);
        (select_unpredictable(in_round | under, 0, j), !in_round)
    }
}

/// Tight-Packing for `balls` balls on `st` in the block loop; returns the bin samples.
pub(super) fn tight_balls(
    st: &mut LevelLoads,
    law: &mut TightLaw,
    balls: u64,
    index: &mut RankIndex,
    rng: &mut ChildRng,
) -> u64 {
    let n = st.n;
    // Local copies keep the generator's state and the round out of memory in the loop.
    let mut child = rng.clone();
    let mut local = *law;
    let mut w = st.total;
    let mut avg = CeilAverage::new(w, n);
    let mut samples = 0u64;
    sequential::indexed_balls(
        st,
        balls,
        index,
        &mut child,
        #[inline(always)]
        |word, rest, rng, lv| {
            let (p, used) = sequential::low_position(word, n, rest, rng);
            let j = lv.of(p);
            let (j, sampled) = local.ball(avg.q, j, lv.lo() + j as u64);
            samples += u64::from(sampled);
            w += 1;
            avg.add_one(w);
            (j, used)
        },
    );
    *rng = child;
    *law = local;
    samples
}

/// One ball of Tight-Packing on `st`, one draw at a time: the ball-by-ball form of
/// [`tight_balls`]. Returns the level that gets the ball and its bin samples.
pub(super) fn tight_level(law: &mut TightLaw, st: &LevelLoads, rng: &mut ChildRng) -> (usize, u64) {
    let word = rng.next_u64();
    let ceil = st.total.div_ceil(st.n);
    let j = st.level_of(sequential::position(word as u32, st.n, rng));
    let (j, sampled) = law.ball(ceil, j, st.min_load() + j as u64);
    (j, u64::from(sampled))
}

/// The cache of (1, 1)-Memory (`LEAST = true`) or Caching with d = 1 (`LEAST = false`): the
/// load of the cached bin.
#[derive(Clone, Copy, Debug)]
pub(super) struct MemoryLaw<const LEAST: bool> {
    /// The cached bin's load, [`EMPTY`] before the first ball.
    cache: u64,
    /// Test of the tests: the sample never hits the cached bin (a hit is moved to the next
    /// position), as if the sample were drawn from the other bins only.
    flaw: bool,
}

impl<const LEAST: bool> MemoryLaw<LEAST> {
    pub(super) fn new() -> Self {
        Self { cache: EMPTY, flaw: false }
    }

    /// One ball whose word is `word` and whose uniform position is `p` in `0..n`, on the
    /// levels `of` (position → level), `end` (level → positions at it or below) above the
    /// lowest load `lo`. Returns the level that gets the ball.
    #[inline(always)]
    fn ball(
        &mut self,
        word: u64,
        p: u64,
        n: u64,
        lo: u64,
        of: impl Fn(u64) -> usize,
        end: impl Fn(usize) -> u64,
    ) -> usize {
        if self.cache == EMPTY {
            // The first ball sees its fresh sample only, and caches it.
            let j = of(p);
            self.cache = lo + j as u64 + 1;
            return j;
        }
        let c = self.cache;
        // The cached bin sits at the last position of its level. A branch, not a select:
        // it is rarely taken (probability 1/n), and predicted it keeps the lookup of the
        // cache's level off the chain from one ball's cache to the next.
        let mut p = p;
        if p == end((c - lo) as usize) - 1 {
            if !self.flaw {
                // The sample is the cached bin: it gets the ball and stays cached.
                self.cache = c + 1;
                return (c - lo) as usize;
            }
            p = (p + 1) % n;
        }
        // A bin other than the cached one.
        let x = lo + of(p) as u64;
        let d = x as i64 - c as i64;
        let coin = word >> 63 != 0;
        let tie = d == 0;
        let near = d.abs() == 1;
        // The cached bin receives the ball when strictly lighter, or on a tie with heads.
        let to_cache = (d > 0) | (tie & coin);
        // Selects, not branches: the comparisons of two nearly equal random loads are
        // unpredictable.
        let got = select_unpredictable(to_cache, c, x);
        let other = select_unpredictable(to_cache, x, c);
        // After placing, the receiver (one ball heavier) stays the lighter when the loads
        // differed by 2 or more, ties the other when they differed by 1 (the coin decides),
        // and becomes the heavier when they were equal.
        let keep_receiver = !LEAST || (d.abs() >= 2) | (near & coin);
        self.cache = select_unpredictable(keep_receiver, got + 1, other);
        (got - lo) as usize
    }
}

/// (1, 1)-Memory or Caching (d = 1) for `balls` balls on `st` in the block loop; returns
/// the bin samples (one per ball).
pub(super) fn memory_balls<const LEAST: bool>(
    st: &mut LevelLoads,
    law: &mut MemoryLaw<LEAST>,
    balls: u64,
    index: &mut RankIndex,
    rng: &mut ChildRng,
) -> u64 {
    let n = st.n;
    // Local copies keep the generator's state and the cache out of memory in the loop.
    let mut child = rng.clone();
    let mut local = *law;
    sequential::indexed_balls(
        st,
        balls,
        index,
        &mut child,
        #[inline(always)]
        |word, rest, rng, lv: &Levels| {
            let (p, used) = sequential::low_position(word, n, rest, rng);
            (local.ball(word, p, n, lv.lo(), |p| lv.of(p), |j| lv.end(j)), used)
        },
    );
    *rng = child;
    *law = local;
    balls
}

/// One ball of (1, 1)-Memory or Caching on `st`, one draw at a time: the ball-by-ball form
/// of [`memory_balls`].
pub(super) fn memory_level<const LEAST: bool>(
    law: &mut MemoryLaw<LEAST>,
    st: &LevelLoads,
    rng: &mut ChildRng,
) -> (usize, u64) {
    let word = rng.next_u64();
    let p = sequential::position(word as u32, st.n, rng);
    let cum = st.cumulative();
    (law.ball(word, p, st.n, st.min_load(), |p| st.level_of(p), |j| cum[j]), 1)
}

/// Whether the ball loops take the balls between observation points in stretches.
fn in_blocks<O: Observer>(spec: &RunSpec, chunking: Chunking, n: u64) -> bool {
    ChunkRoute::new::<O>(spec, chunking, n, u64::MAX, 1).blocks
}

/// Sequential Tight-Packing: the block loop [`tight_balls`] between observation points, or
/// ball by ball, with the observation points and stopping rules of the generic loop
/// (`run_seq`): with `truncate` exactly m balls (a round may be cut at m); with `finish`
/// an observation point inside a round waits for its end (its balls are ordinary balls of
/// the loop, so both rules make the same decisions up to m), and the run ends with it.
pub(super) fn run_seq_tight<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    mut st: LevelLoads,
    count: TightCount,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> RunOutcome {
    let blocks = in_blocks::<O>(spec, chunking, st.bins());
    let finish = spec.stop == Stop::Finish;
    let (mut law, rng) = (TightLaw::new(count), &mut ChildRng::from_parent(rng));
    let mut index = RankIndex::new(st.bins());
    let mut gaps = GapTracker::new(spec);
    let mut points = Schedule::new(spec);
    let (m, mut done, mut samples) = (spec.m, 0u64, 0u64);
    while done < m {
        if blocks {
            let stretch = points.next() - done;
            samples += tight_balls(&mut st, &mut law, stretch, &mut index, rng);
            done += stretch;
        } else {
            samples += tight_one(&mut st, &mut law, &mut index, rng, observer);
            done += 1;
        }
        if done >= points.next() {
            while finish && law.rem > 0 {
                samples += tight_one(&mut st, &mut law, &mut index, rng, observer);
                done += 1;
            }
            gaps.observe(&st, observer);
            points.advance(done);
        }
    }
    if m == 0 {
        gaps.observe(&st, observer);
    }
    gaps.outcome(&st, done, samples)
}

/// One ball of Tight-Packing ([`tight_level`]) applied to `st` and shown to the observer;
/// returns its bin samples.
fn tight_one<O: Observer>(
    st: &mut LevelLoads,
    law: &mut TightLaw,
    index: &mut RankIndex,
    rng: &mut ChildRng,
    observer: &mut O,
) -> u64 {
    let (j, k) = tight_level(law, st, rng);
    let pos = st.bump(j);
    observer.on_ball(st, pos as usize, 1.0);
    index.invalidate();
    k
}

/// Sequential (1, 1)-Memory (`LEAST = true`) or Caching with d = 1: the block loop
/// [`memory_balls`] between observation points, or ball by ball.
pub(super) fn run_seq_memory<const LEAST: bool, R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    st: LevelLoads,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> RunOutcome {
    let blocks = in_blocks::<O>(spec, chunking, st.bins());
    run_stretches(
        spec,
        st,
        &mut MemoryLaw::<LEAST>::new(),
        blocks,
        &mut ChildRng::from_parent(rng),
        observer,
        |law, st, balls, index, rng| memory_balls(st, law, balls, index, rng),
        memory_level,
    )
}

/// Packing's and Twinning's step between balls (and between stretches): the balls of the
/// current step still to place, and the load of the bin that receives them.
#[derive(Clone, Copy, Debug)]
pub(super) struct StepLaw {
    rule: Filling,
    /// Balls of the current step still to place (0: the next ball samples).
    rem: u64,
    /// The load of the step's bin: its next ball goes to a bin of this load (bins of one
    /// level are exchangeable, so any bin of it).
    climb: u64,
    /// Test of the tests: an underloaded sample gets one ball more than the rule says.
    flaw: bool,
}

impl StepLaw {
    pub(super) fn new(rule: Filling) -> Self {
        Self { rule, rem: 0, climb: 0, flaw: false }
    }

    /// The most levels a step adds above the top level: Twinning's underloaded bin ends at
    /// most at `⌈W/n⌉ + 1`, Packing's at `⌈W/n⌉ + offset`, and `⌈W/n⌉` is at most the top.
    fn grow(&self) -> u64 {
        let most = match self.rule {
            Filling::Twinning => 1,
            Filling::Packing { offset } => u64::from(offset).max(1),
        };
        most + u64::from(self.flaw)
    }

    /// The balls a step whose sample has load `x` places at `⌈W/n⌉ = ceil`, as the bin
    /// engine's kernel computes them (including the cast to the step's `u32` count).
    #[inline(always)]
    fn want(&self, x: u64, ceil: u64) -> u64 {
        if x >= ceil {
            return 1;
        }
        let balls = match self.rule {
            Filling::Twinning => 2,
            Filling::Packing { offset } => {
                u64::from((ceil + u64::from(offset)).wrapping_sub(x) as u32)
            }
        };
        balls + u64::from(self.flaw)
    }
}

/// Packing or Twinning for `balls` balls on `st`, step by step: the balls left of a step in
/// progress first, then [`sequential::indexed_steps`] (per step one word, a uniform position
/// in its low half, the level of that position, and the step's balls raising that bin level
/// by level), the last step cut at `balls` (its rest stays in `law`). Returns the bin
/// samples (one per step started).
pub(super) fn step_balls(
    st: &mut LevelLoads,
    law: &mut StepLaw,
    balls: u64,
    index: &mut RankIndex,
    rng: &mut ChildRng,
) -> u64 {
    let k = law.rem.min(balls);
    for _ in 0..k {
        st.bump_load(law.climb);
        law.climb += 1;
    }
    law.rem -= k;
    index.invalidate();
    if k == balls {
        return 0;
    }
    // Local copies keep the generator's state and the average out of memory in the loop.
    let mut child = rng.clone();
    let local = *law;
    let mut avg = CeilAverage::new(st.total, st.n);
    let (samples, rem, climb) =
        sequential::indexed_steps(st, balls - k, local.grow(), index, &mut child, |x, w| {
            avg.advance(w);
            local.want(x, avg.q)
        });
    *rng = child;
    (law.rem, law.climb) = (rem, climb);
    samples
}

/// One ball of Packing or Twinning on `st`, one draw at a time: the ball-by-ball form of
/// [`step_balls`]. Returns the level that gets the ball and its bin samples (a step of no
/// balls, Packing's count wrapped to 0 by its `u32` cast, samples again).
pub(super) fn step_level(law: &mut StepLaw, st: &LevelLoads, rng: &mut ChildRng) -> (usize, u64) {
    let mut samples = 0;
    while law.rem == 0 {
        let word = rng.next_u64();
        let j = st.level_of(sequential::position(word as u32, st.n, rng));
        let x = st.min_load() + j as u64;
        (law.rem, law.climb) = (law.want(x, st.total.div_ceil(st.n)), x);
        samples += 1;
    }
    law.rem -= 1;
    law.climb += 1;
    ((law.climb - 1 - st.min_load()) as usize, samples)
}

/// Sequential Packing or Twinning: [`step_balls`] between observation points, or ball by
/// ball ([`step_level`]), with the observation points and stopping rules of the generic
/// loop (`run_seq`), where a step is placed whole before an observation: with `truncate`
/// exactly m balls (the last step cut at m), with `finish` the last step whole.
pub(super) fn run_seq_steps<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    mut st: LevelLoads,
    rule: Filling,
    rng: &mut R,
    observer: &mut O,
    chunking: Chunking,
) -> RunOutcome {
    let blocks = in_blocks::<O>(spec, chunking, st.bins());
    let finish = spec.stop == Stop::Finish;
    let (mut law, rng) = (StepLaw::new(rule), &mut ChildRng::from_parent(rng));
    let mut index = RankIndex::new(st.bins());
    let mut gaps = GapTracker::new(spec);
    let mut points = Schedule::new(spec);
    let (m, mut done, mut samples) = (spec.m, 0u64, 0u64);
    while done < m {
        let stretch = if blocks { points.next() - done } else { 1 };
        samples += place_steps(&mut st, &mut law, stretch, blocks, &mut index, rng, observer);
        done += stretch;
        if done >= points.next() {
            // The step in progress is placed whole (cut at m under `truncate`).
            let rest = if finish { law.rem } else { law.rem.min(m - done) };
            samples += place_steps(&mut st, &mut law, rest, blocks, &mut index, rng, observer);
            done += rest;
            gaps.observe(&st, observer);
            points.advance(done);
        }
    }
    if m == 0 {
        gaps.observe(&st, observer);
    }
    gaps.outcome(&st, done, samples)
}

/// `balls` balls of Packing or Twinning: [`step_balls`] (`blocks`), or ball by ball through
/// [`step_one`]; returns their bin samples.
fn place_steps<O: Observer>(
    st: &mut LevelLoads,
    law: &mut StepLaw,
    balls: u64,
    blocks: bool,
    index: &mut RankIndex,
    rng: &mut ChildRng,
    observer: &mut O,
) -> u64 {
    if blocks {
        step_balls(st, law, balls, index, rng)
    } else {
        (0..balls).map(|_| step_one(st, law, rng, observer)).sum()
    }
}

/// One ball of Packing or Twinning ([`step_level`]) applied to `st` and shown to the
/// observer; returns its bin samples.
fn step_one<O: Observer>(
    st: &mut LevelLoads,
    law: &mut StepLaw,
    rng: &mut ChildRng,
    observer: &mut O,
) -> u64 {
    let (j, k) = step_level(law, st, rng);
    let pos = st.bump(j);
    observer.on_ball(st, pos as usize, 1.0);
    k
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use ballast_testkit::{chi2_critical, chi2_gof};

    use super::super::law_test::{on_levels, runs_of};
    use super::*;
    use crate::Engine;

    /// A law of final states (sorted loads, then the sample count) with probabilities.
    type Law = HashMap<Vec<i64>, f64>;

    /// Adds `p` to the state `key` of `law`.
    fn add<K: std::hash::Hash + Eq>(law: &mut HashMap<K, f64>, key: K, p: f64) {
        *law.entry(key).or_insert(0.0) += p;
    }

    /// The bins of `loads` at load `x`, but `skip`.
    fn bins_at(loads: &[i64], x: i64, skip: usize) -> Vec<usize> {
        (0..loads.len()).filter(|&i| loads[i] == x && i != skip).collect()
    }

    /// The exact law of the final state of Tight-Packing (`truncate`, offset `offset`) from
    /// `start` after `m` balls, from the definition on bins: one uniform sample per step;
    /// `x < ⌈W/n⌉` (`x <= ⌈W/n⌉` for the wrong variant) starts a round of `⌈W/n⌉ +
    /// offset − x` balls, each to a uniform least loaded bin, else one ball to the sample.
    fn tight_exact(start: &[i64], m: u64, offset: i64, wrong: bool) -> Law {
        let n = start.len();
        // (loads, balls of the round left, samples) → probability.
        let mut states: HashMap<(Vec<i64>, i64, i64), f64> = HashMap::new();
        states.insert((start.to_vec(), 0, 0), 1.0);
        for _ in 0..m {
            let mut next = HashMap::new();
            for ((loads, rem, samples), p) in states {
                let w: i64 = loads.iter().sum();
                let to_min = |next: &mut HashMap<_, f64>, rem: i64, samples: i64, p: f64| {
                    let low = *loads.iter().min().expect("bins");
                    let set = bins_at(&loads, low, usize::MAX);
                    for &i in &set {
                        let mut l = loads.clone();
                        l[i] += 1;
                        add(next, (l, rem, samples), p / set.len() as f64);
                    }
                };
                if rem > 0 {
                    to_min(&mut next, rem - 1, samples, p);
                    continue;
                }
                for j in 0..n {
                    let q = p / n as f64;
                    let (x, ceil) = (loads[j], (w as u64).div_ceil(n as u64) as i64);
                    if x < ceil || (wrong && x == ceil) {
                        to_min(&mut next, (ceil + offset - x).max(1) - 1, samples + 1, q);
                    } else {
                        let mut l = loads.clone();
                        l[j] += 1;
                        add(&mut next, (l, 0, samples + 1), q);
                    }
                }
            }
            states = next;
        }
        let mut law = Law::new();
        for ((mut loads, _, samples), p) in states {
            loads.sort_unstable();
            loads.push(samples);
            add(&mut law, loads, p);
        }
        law
    }

    /// The exact law of the final sorted loads (and the sample count, one per ball) of
    /// (1, 1)-Memory (`least`) or Caching with d = 1 from `start` after `m` balls, from the
    /// definition on bins: a uniform sample `j` and the cached bin are the candidates (one
    /// candidate when `j` is the cached bin); the ball goes to the lighter, a tie by a fair
    /// coin; Memory then caches the lighter of the two (a tie by a fair coin), Caching the
    /// receiver. The wrong variant: a sample that hits the cached bin is replaced by a
    /// uniform bin of the next higher load (of the lowest load if none is higher), not the
    /// cached bin, as the deliberate flaw of [`MemoryLaw`] does.
    fn memory_exact(start: &[i64], m: u64, least: bool, wrong: bool) -> Law {
        let n = start.len();
        let mut states: HashMap<(Vec<i64>, usize), f64> = HashMap::new();
        states.insert((start.to_vec(), usize::MAX), 1.0);
        for _ in 0..m {
            let mut next = HashMap::new();
            for ((loads, c), p) in states {
                for j in 0..n {
                    for (j, q) in sample_of(&loads, c, j, wrong) {
                        step_memory(&mut next, &loads, c, j, p * q / n as f64, least);
                    }
                }
            }
            states = next;
        }
        let mut law = Law::new();
        for ((mut loads, _), p) in states {
            loads.sort_unstable();
            loads.push(m as i64);
            add(&mut law, loads, p);
        }
        law
    }

    /// The bin(s) a draw of bin `j` samples, with probabilities: `j` itself, or in the
    /// wrong variant, when `j` is the cached bin `c`, a uniform bin of the next load.
    fn sample_of(loads: &[i64], c: usize, j: usize, wrong: bool) -> Vec<(usize, f64)> {
        if !(wrong && j == c) {
            return vec![(j, 1.0)];
        }
        let higher = loads.iter().copied().filter(|&x| x > loads[c]).min();
        let low = *loads.iter().min().expect("bins");
        let set = bins_at(loads, higher.unwrap_or(low), c);
        set.iter().map(|&i| (i, 1.0 / set.len() as f64)).collect()
    }

    /// One ball of Memory / Caching with sample `j` and cache `c` (`usize::MAX`: empty).
    fn step_memory(
        next: &mut HashMap<(Vec<i64>, usize), f64>,
        loads: &[i64],
        c: usize,
        j: usize,
        p: f64,
        least: bool,
    ) {
        if c == usize::MAX || c == j {
            let mut l = loads.to_vec();
            l[j] += 1;
            add(next, (l, j), p);
            return;
        }
        // (receiver, other, probability).
        let receivers = match loads[j].cmp(&loads[c]) {
            std::cmp::Ordering::Less => vec![(j, c, 1.0)],
            std::cmp::Ordering::Greater => vec![(c, j, 1.0)],
            std::cmp::Ordering::Equal => vec![(j, c, 0.5), (c, j, 0.5)],
        };
        for (r, o, q) in receivers {
            let mut l = loads.to_vec();
            l[r] += 1;
            let keep: Vec<(usize, f64)> = if !least {
                vec![(r, 1.0)]
            } else {
                match l[r].cmp(&l[o]) {
                    std::cmp::Ordering::Less => vec![(r, 1.0)],
                    std::cmp::Ordering::Greater => vec![(o, 1.0)],
                    std::cmp::Ordering::Equal => vec![(r, 0.5), (o, 0.5)],
                }
            };
            for (k, s) in keep {
                add(next, (l.clone(), k), p * q * s);
            }
        }
    }

    /// Pearson's χ² of `observed` final states against the exact `law`: the states of
    /// expected count at least 10 on their own, the rest in one category (merged into the
    /// smallest one if it expects fewer than 5). Returns (statistic, critical value at
    /// `ballast_testkit::ALPHA`).
    fn chi2_exact(observed: &[Vec<i64>], law: &Law) -> (f64, f64) {
        let runs = observed.len() as f64;
        let mut counts: HashMap<&[i64], u64> = HashMap::new();
        for k in observed {
            assert!(law.contains_key(k), "a state the law does not allow: {k:?}");
            *counts.entry(k.as_slice()).or_insert(0) += 1;
        }
        let mut keys: Vec<&Vec<i64>> = law.keys().collect();
        keys.sort_by(|a, b| law[*b].total_cmp(&law[*a]).then(a.cmp(b)));
        let (mut obs, mut probs) = (Vec::new(), Vec::new());
        let (mut rest_o, mut rest_p) = (0u64, 0.0);
        for k in keys {
            let (o, p) = (counts.get(k.as_slice()).copied().unwrap_or(0), law[k]);
            if p * runs >= 10.0 {
                obs.push(o);
                probs.push(p);
            } else {
                rest_o += o;
                rest_p += p;
            }
        }
        if rest_p * runs >= 5.0 {
            obs.push(rest_o);
            probs.push(rest_p);
        } else if let (Some(o), Some(p)) = (obs.last_mut(), probs.last_mut()) {
            *o += rest_o;
            *p += rest_p;
        }
        let (stat, df) = chi2_gof(&obs, &probs);
        (stat, chi2_critical(df))
    }

    /// The start of the law tests: n = 3 bins with loads 0, 0, 2 (so `⌈W/n⌉` starts at 1
    /// and the first balls see underloaded and average bins), as a level histogram.
    fn start() -> (Vec<i64>, LevelLoads) {
        (vec![0, 0, 2], LevelLoads::from_counts(0, &[2, 0, 1]))
    }

    /// Runs of `process` on the level engine through [`crate::simulate_observed`] (the
    /// block loops: the law tests' observer looks only at the end), from [`start`].
    fn engine_runs(process: ProcessSpec, m: u64, runs: u64, seed: u64) -> Vec<Vec<i64>> {
        let spec = RunSpec::new(process, 3, m)
            .engine(Engine::Levels)
            .start(crate::Start::Loads(vec![0, 0, 2]));
        runs_of(&spec, runs, seed)
    }

    /// Exact law, Tight-Packing (offset 1 and 0): n = 3 from loads (0, 0, 2), m = 7 balls,
    /// 20 000 runs, seed 9100 + case; Pearson's χ² of the whole final state (sorted loads
    /// and sample count) against the law enumerated from the definition on bins
    /// ([`tight_exact`]), at α = `ballast_testkit::ALPHA` = 0.001. The wrong variant (a bin exactly at
    /// `⌈W/n⌉` counted as underloaded) runs the same block loop on the same seeds and must
    /// be rejected; its power is computed, not hoped for: the noncentrality
    /// `λ = runs · Σ (q − p)² / p` between the two exact laws over all states is asserted
    /// to be above 200, where a χ² test at α = 0.001 with fewer than 60 degrees of freedom
    /// has power above 0.999 (its critical value is below 100). Measured: χ² = 3.8
    /// (critical 26.1, λ = 5 025) for offset 1 and 12.6 (46.8, λ = 166 102) for offset 0;
    /// the wrong variant ends in states the law does not allow at offset 1 (an infinite
    /// χ²) and gives χ² = 164 826 at offset 0.
    #[test]
    fn tight_packing_has_its_exact_law() {
        const M: u64 = 7;
        const RUNS: u64 = 20_000;
        let (loads, levels) = start();
        for (case, offset) in [1u32, 0].into_iter().enumerate() {
            let seed = 9100 + case as u64;
            let law = tight_exact(&loads, M, i64::from(offset), false);
            let wrong_law = tight_exact(&loads, M, i64::from(offset), true);
            let lambda: f64 = law
                .iter()
                .map(|(k, &p)| (wrong_law.get(k).copied().unwrap_or(0.0) - p).powi(2) / p)
                .sum::<f64>()
                * RUNS as f64;
            assert!(lambda > 200.0, "offset {offset}: noncentrality {lambda:.0}");
            let process = ProcessSpec::TightPacking { offset, balls: None };
            let (stat, crit) = chi2_exact(&engine_runs(process, M, RUNS, seed), &law);
            assert!(stat < crit, "offset {offset}: chi2 = {stat:.1}, critical {crit:.1}");
            let count = TightCount::AsPacking { offset };
            let flawed = on_levels(&levels, RUNS, seed, |st, index, rng| {
                let mut law = TightLaw { flaw: true, ..TightLaw::new(count) };
                tight_balls(st, &mut law, M, index, rng)
            });
            let (stat, crit) = chi2_exact_lenient(&flawed, &law);
            assert!(stat > crit, "offset {offset}, wrong: chi2 = {stat:.1}, critical {crit:.1}");
        }
    }

    /// [`chi2_exact`] for a sample that may hold states the law does not allow (a wrong
    /// variant): such a state is an infinite χ².
    fn chi2_exact_lenient(observed: &[Vec<i64>], law: &Law) -> (f64, f64) {
        if observed.iter().any(|k| !law.contains_key(k)) {
            return (f64::INFINITY, 0.0);
        }
        chi2_exact(observed, law)
    }

    /// Exact law, (1, 1)-Memory and Caching (d = 1): n = 3 from loads (0, 0, 2), m = 6
    /// balls, 20 000 runs, seed 9200 + case; Pearson's χ² of the sorted final loads against
    /// the law enumerated from the definition on bins ([`memory_exact`]: the sample is the
    /// cached bin with probability exactly 1/n), at α = `ballast_testkit::ALPHA` = 0.001. The wrong
    /// variant (a sample never hits the cached bin: a hit is moved to the next position)
    /// runs the same block loop on the same seeds and must be rejected; the noncentrality
    /// between the two exact laws is asserted above 200 (power above 0.999, as for
    /// Tight-Packing). Measured: χ² = 7.8 / 10.7 for Memory / Caching (critical 27.9,
    /// λ = 8 590 / 15 453); the wrong variant gives χ² = 8 480 / 15 333.
    #[test]
    fn memory_and_caching_have_their_exact_law() {
        const M: u64 = 6;
        const RUNS: u64 = 20_000;
        let (loads, levels) = start();
        for (case, least) in [true, false].into_iter().enumerate() {
            let seed = 9200 + case as u64;
            let law = memory_exact(&loads, M, least, false);
            let wrong_law = memory_exact(&loads, M, least, true);
            let lambda: f64 = law
                .iter()
                .map(|(k, &p)| (wrong_law.get(k).copied().unwrap_or(0.0) - p).powi(2) / p)
                .sum::<f64>()
                * RUNS as f64;
            assert!(lambda > 200.0, "least {least}: noncentrality {lambda:.0}");
            let process = if least {
                ProcessSpec::Memory { d: 1, k: 1 }
            } else {
                ProcessSpec::Caching { d: 1 }
            };
            let (stat, crit) = chi2_exact(&engine_runs(process, M, RUNS, seed), &law);
            assert!(stat < crit, "least {least}: chi2 = {stat:.1}, critical {crit:.1}");
            let flawed = on_levels(&levels, RUNS, seed, |st, index, rng| {
                if least {
                    let mut law = MemoryLaw::<true> { flaw: true, ..MemoryLaw::new() };
                    memory_balls(st, &mut law, M, index, rng)
                } else {
                    let mut law = MemoryLaw::<false> { flaw: true, ..MemoryLaw::new() };
                    memory_balls(st, &mut law, M, index, rng)
                }
            });
            let (stat, crit) = chi2_exact_lenient(&flawed, &law);
            assert!(stat > crit, "least {least}, wrong: chi2 = {stat:.1}, critical {crit:.1}");
        }
    }

    /// The exact law of the final state (sorted loads, then the sample count) of Packing
    /// (`rule`) or Twinning from `start` after `m` balls (`truncate`), from the definition on
    /// bins: one uniform sample per step; `x < ⌈W/n⌉` puts `⌈W/n⌉ + offset − x` balls
    /// (Packing) or 2 (Twinning) into the sample (one more for the wrong variant), else one,
    /// the last step cut at `m`.
    fn steps_exact(start: &[i64], m: u64, rule: Filling, wrong: bool) -> Law {
        let n = start.len() as i64;
        let end = start.iter().sum::<i64>() + m as i64;
        // (loads, samples) → probability; the states still below `end` balls.
        let mut open: HashMap<(Vec<i64>, i64), f64> = HashMap::new();
        open.insert((start.to_vec(), 0), 1.0);
        let mut law = Law::new();
        while !open.is_empty() {
            let mut next = HashMap::new();
            for ((loads, samples), p) in open {
                let w: i64 = loads.iter().sum();
                let ceil = (w + n - 1) / n;
                for j in 0..loads.len() {
                    let x = loads[j];
                    let want = match rule {
                        _ if x >= ceil => 1,
                        Filling::Twinning => 2 + i64::from(wrong),
                        Filling::Packing { offset } => {
                            ceil + i64::from(offset) - x + i64::from(wrong)
                        }
                    };
                    let mut l = loads.clone();
                    l[j] += want.min(end - w);
                    let q = p / n as f64;
                    if w + want >= end {
                        l.sort_unstable();
                        l.push(samples + 1);
                        add(&mut law, l, q);
                    } else {
                        add(&mut next, (l, samples + 1), q);
                    }
                }
            }
            open = next;
        }
        law
    }

    /// Exact law, Packing (offset 1 and 0) and Twinning: n = 3 from loads (0, 0, 2), m = 7
    /// balls, 20 000 runs, seed 9400 + case; Pearson's χ² of the whole final state (sorted
    /// loads and sample count) against the law enumerated from the definition on bins
    /// ([`steps_exact`]), at α = `ballast_testkit::ALPHA` = 0.001. The engine's runs are
    /// short (m = 7), so they go ball by ball ([`step_level`]); the wrong variant (an
    /// underloaded sample gets one ball more) runs the block loop [`step_balls`] on the
    /// same seeds and must be rejected, and the two forms are the same word for word
    /// (`block_loops_match_ball_by_ball_word_for_word`). Power as for Tight-Packing: the
    /// noncentrality `λ = runs · Σ (q − p)² / p` between the two exact laws is asserted
    /// above 200 (power above 0.999 at fewer than 60 degrees of freedom). Measured: χ² =
    /// 28.2 / 26.0 / 12.8 (critical 40.8 / 49.7 / 32.9, λ = 16 869 / 21 365 / 21 056) for
    /// Packing with offset 1, offset 0 and Twinning; the wrong variant ends in states the
    /// law does not allow (an infinite χ²) in all three.
    #[test]
    fn packing_and_twinning_have_their_exact_law() {
        const M: u64 = 7;
        const RUNS: u64 = 20_000;
        let (loads, levels) = start();
        let rules =
            [Filling::Packing { offset: 1 }, Filling::Packing { offset: 0 }, Filling::Twinning];
        for (case, rule) in rules.into_iter().enumerate() {
            let seed = 9400 + case as u64;
            let law = steps_exact(&loads, M, rule, false);
            let wrong_law = steps_exact(&loads, M, rule, true);
            let total: f64 = law.values().sum();
            assert!((total - 1.0).abs() < 1e-12, "{rule:?}: the law sums to {total}");
            let lambda: f64 = law
                .iter()
                .map(|(k, &p)| (wrong_law.get(k).copied().unwrap_or(0.0) - p).powi(2) / p)
                .sum::<f64>()
                * RUNS as f64;
            assert!(lambda > 200.0, "{rule:?}: noncentrality {lambda:.0}");
            let process = match rule {
                Filling::Twinning => ProcessSpec::Twinning,
                Filling::Packing { offset } => ProcessSpec::Packing { offset },
            };
            let (stat, crit) = chi2_exact(&engine_runs(process, M, RUNS, seed), &law);
            assert!(stat < crit, "{rule:?}: chi2 = {stat:.1}, critical {crit:.1}");
            let flawed = on_levels(&levels, RUNS, seed, |st, index, rng| {
                let mut law = StepLaw { flaw: true, ..StepLaw::new(rule) };
                step_balls(st, &mut law, M, index, rng)
            });
            let (stat, crit) = chi2_exact_lenient(&flawed, &law);
            assert!(stat > crit, "{rule:?}, wrong: chi2 = {stat:.1}, critical {crit:.1}");
        }
    }

    /// The step loop against its ball-by-ball form word for word (same histogram, sample
    /// count, step in progress and generator state after every stretch, stretches ending
    /// inside steps), on the starts of the test above.
    #[test]
    fn step_loop_matches_ball_by_ball_word_for_word() {
        let starts = [
            LevelLoads::new(1),
            LevelLoads::new(3),
            LevelLoads::from_counts(0, &[2, 0, 1]),
            LevelLoads::new(5000),
            LevelLoads::new(3 << 30),
            LevelLoads::from_counts(0, &[[1u64; 47].as_slice(), &[1000]].concat()),
        ];
        let rules =
            [Filling::Packing { offset: 1 }, Filling::Packing { offset: 3 }, Filling::Twinning];
        for (i, start) in starts.into_iter().enumerate() {
            for (r, rule) in rules.into_iter().enumerate() {
                let seed = 9500 + 10 * i as u64 + r as u64;
                let (mut fast, mut slow) = (start.clone(), start.clone());
                let (mut fast_law, mut slow_law) = (StepLaw::new(rule), StepLaw::new(rule));
                let mut fast_rng = ChildRng::from_parent(&mut crate::sim_rng(seed));
                let mut slow_rng = fast_rng.clone();
                let mut index = RankIndex::new(start.bins());
                for chunk in [1u64, 2, 63, 64, 65, 1000, 7] {
                    let a = step_balls(&mut fast, &mut fast_law, chunk, &mut index, &mut fast_rng);
                    let mut b = 0;
                    for _ in 0..chunk {
                        let (j, k) = step_level(&mut slow_law, &slow, &mut slow_rng);
                        slow.bump(j);
                        b += k;
                    }
                    let at = format!("start {i}, {rule:?}, after a chunk of {chunk}");
                    assert_eq!(fast, slow, "{at}");
                    assert_eq!(a, b, "{at}: samples");
                    assert_eq!((fast_law.rem, fast_law.climb), (slow_law.rem, slow_law.climb));
                    let (mut x, mut y) = (fast_rng.clone(), slow_rng.clone());
                    assert_eq!(x.next_u64(), y.next_u64(), "{at}: words consumed");
                }
            }
        }
    }

    /// The engine's step runs: in blocks (`Chunking::Auto`) and ball by ball
    /// (`Chunking::Off`) the same outcome, for both stopping rules and with observation
    /// points inside steps (a step is placed whole before an observation, cut at m under
    /// `truncate`: exactly m balls; under `finish` at least m).
    #[test]
    fn step_runs_are_the_same_in_blocks_and_ball_by_ball() {
        use crate::level::{simulate_levels_chunked, Chunking};
        for process in [ProcessSpec::Packing { offset: 1 }, ProcessSpec::Twinning] {
            for stop in [Stop::Truncate, Stop::Finish] {
                for every in [None, Some(300), Some(1001)] {
                    let mut spec =
                        RunSpec::new(process.clone(), 10, 5003).engine(Engine::Levels).stop(stop);
                    (spec.observe_every, spec.record_trajectory) = (every, every.is_some());
                    let run = |chunking| {
                        let rng = &mut crate::sim_rng(77);
                        simulate_levels_chunked(&spec, rng, &mut (), chunking).expect("valid")
                    };
                    let (a, b) = (run(Chunking::Auto), run(Chunking::Off));
                    assert_eq!(a, b, "{process:?}, {stop:?}, every {every:?}");
                    match stop {
                        Stop::Truncate => assert_eq!(a.balls, 5003),
                        Stop::Finish => assert!(a.balls >= 5003),
                    }
                }
            }
        }
    }

    /// The block loops against their ball-by-ball forms word for word (same histogram,
    /// sample count and generator state after every stretch), on starts that take the
    /// bucket table's fast path, the wide histogram's vector path, and the rejection of
    /// a position (n = 3·2³⁰).
    #[test]
    fn block_loops_match_ball_by_ball_word_for_word() {
        let starts = [
            LevelLoads::new(1),
            LevelLoads::new(3),
            LevelLoads::from_counts(0, &[2, 0, 1]),
            LevelLoads::new(5000),
            LevelLoads::new(3 << 30),
            LevelLoads::from_counts(0, &[[1u64; 47].as_slice(), &[1000]].concat()),
        ];
        for (i, start) in starts.into_iter().enumerate() {
            let seed = 9300 + i as u64;
            let mut tight = [TightLaw::new(TightCount::AsPacking { offset: 1 }); 2];
            let mut memory = [MemoryLaw::<true>::new(); 2];
            let mut caching = [MemoryLaw::<false>::new(); 2];
            let mut states = [start.clone(), start.clone(), start.clone()];
            let mut slow_states = states.clone();
            let rng = ChildRng::from_parent(&mut crate::sim_rng(seed));
            let mut fast_rng = [rng.clone(), rng.clone(), rng.clone()];
            let mut slow_rng = fast_rng.clone();
            let mut index = [RankIndex::new(start.bins()), RankIndex::new(start.bins())];
            let mut index3 = RankIndex::new(start.bins());
            for chunk in [1u64, 63, 64, 65, 1000, 7] {
                let [t0, t1] = &mut tight;
                let fast = tight_balls(&mut states[0], t0, chunk, &mut index[0], &mut fast_rng[0]);
                let [m0, m1] = &mut memory;
                memory_balls(&mut states[1], m0, chunk, &mut index[1], &mut fast_rng[1]);
                let [c0, c1] = &mut caching;
                memory_balls(&mut states[2], c0, chunk, &mut index3, &mut fast_rng[2]);
                let mut slow = 0;
                for _ in 0..chunk {
                    let (j, k) = tight_level(t1, &slow_states[0], &mut slow_rng[0]);
                    slow_states[0].bump(j);
                    slow += k;
                    let (j, _) = memory_level(m1, &slow_states[1], &mut slow_rng[1]);
                    slow_states[1].bump(j);
                    let (j, _) = memory_level(c1, &slow_states[2], &mut slow_rng[2]);
                    slow_states[2].bump(j);
                }
                assert_eq!(states, slow_states, "start {i}, after a chunk of {chunk}");
                assert_eq!(fast, slow, "start {i}: samples");
                assert_eq!((t0.rem, m0.cache, c0.cache), (t1.rem, m1.cache, c1.cache));
                for (a, b) in fast_rng.iter().zip(&slow_rng) {
                    let (mut a, mut b) = (a.clone(), b.clone());
                    assert_eq!(a.next_u64(), b.next_u64(), "start {i}: words consumed");
                }
            }
        }
    }
}
