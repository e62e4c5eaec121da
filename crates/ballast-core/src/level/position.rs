//! One batch of d-Choice or (1+β) with the authors' positional ties on the level histogram
//! (`docs/processes.md#position`, `docs/level-engine.md#batched-positional-ties`).
//!
//! **The law.** The authors sort the stale loads heaviest first and send a d-Choice ball to
//! the largest of its sampled positions, without comparing loads. In the level engine's
//! lightest-first order that is the *smallest* of d uniform positions in `0..n`
//! ([`super::sequential::min_position`]), and position `p` holds a bin of the level that
//! contains `p` in the histogram frozen at the batch start. The bin engine's rule (least
//! load, ties to the highest index) is the same thing once bins are ordered by load and,
//! within a load, by decreasing index. (1+β) is a Two-Choice step of this kind with
//! probability β and a single uniform position otherwise.
//!
//! Which bins of a level sit at which of its positions does not change the law of the load
//! histogram: the rule looks only at positions, so the batch sends `c_p` balls to position
//! `p` with the same joint law whatever the arrangement, and the bins of a level are
//! exchangeable for every later batch (the next batch re-sorts). So the histogram after the
//! batch is exactly: for each position `p`, one bin at `level(p) + c_p`. The per-position
//! probabilities are *not* uniform within a level (q_p = ((n−p)^d − (n−p−1)^d)/n^d for
//! d-Choice), so the batch needs the counts per position, not per level: the occupancy
//! shortcut of [`super::batch`] does not apply, and a batch costs Θ(min(n, b)) at least.
//!
//! **Methods** (same law, tested against each other and against exact enumerations below;
//! [`Method::for_batch`] picks one from `b/n` with thresholds measured at n = 10⁴: the
//! `time_methods` timing test here, and the engine table in the module docs of [`super`]):
//!
//! - [`Method::Sparse`] (`b·`[`SPARSE_BELOW`]` < n`): draw the `b` positions, sort them, walk
//!   the runs. O(b log b + levels) time, O(b) scratch (sorting costs about 30 ns per ball,
//!   so it only pays while it saves a pass over n positions).
//! - [`Method::Dense`]: draw the `b` positions into a counter per position, then scan the
//!   positions level by level. O(n + b) time, O(n) scratch (4 bytes per bin): the one place
//!   where the level engine's memory grows with n (the bin engine needs as much for its
//!   loads).
//! - [`Method::Binomial`] (`b >=` [`BINOMIAL_FROM`]`·n` for d >= 3,
//!   [`BINOMIAL_FROM_TWO`]`·n` for Two-Choice, [`BINOMIAL_FROM_ONE_PLUS_BETA`]`·n` for
//!   (1+β)): no per-ball draws. Scanning the positions in order, `c_p ~ Binomial(balls
//!   left, q_p / P(position >= p))`; for the smallest of d positions that conditional
//!   probability is `1 − (1 − 1/(n−p))^d` (computed as a sum of positive terms, no
//!   cancellation), for a single uniform position `1/(n−p)`. O(n) binomial draws (about
//!   100 ns each), O(1) scratch.
//!
//! For (1+β) the number of Two-Choice balls is drawn first, `Binomial(b, β)`, so the
//! sample count (b plus that number) is jointly exact with the loads, as in [`super::batch`].

use rand::RngCore;

use super::occupancy::binomial;
use super::sequential::{min_positions, ChildRng};
use crate::histogram::LevelLoads;
use crate::rng::below;
use crate::Observer;

/// Batches with `b * SPARSE_BELOW < n` sort their positions instead of counting them.
pub(super) const SPARSE_BELOW: u64 = 16;

/// d-Choice batches with `d >= 3` and at least `BINOMIAL_FROM · n` balls draw one binomial
/// per position; Two-Choice from [`BINOMIAL_FROM_TWO`]`·n`, (1+β) from
/// [`BINOMIAL_FROM_ONE_PLUS_BETA`]`·n` (fewer random words per ball, and (1+β) draws two
/// binomials per position). Where the per-ball and per-position costs cross at n = 10⁴.
pub(super) const BINOMIAL_FROM: u64 = 16;

/// As [`BINOMIAL_FROM`], for Two-Choice.
pub(super) const BINOMIAL_FROM_TWO: u64 = 32;

/// As [`BINOMIAL_FROM`], for (1+β).
pub(super) const BINOMIAL_FROM_ONE_PLUS_BETA: u64 = 64;

/// The positional rule of one process.
#[derive(Clone, Copy, Debug)]
pub(super) enum PositionLaw {
    /// The smallest of `d` uniform positions.
    DChoice { d: u32 },
    /// With probability β the smaller of two uniform positions, else one uniform position.
    OnePlusBeta { beta: f64 },
}

/// How a batch generates its per-position counts (all exact, same law).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Method {
    /// Sort the drawn positions.
    Sparse,
    /// Count the drawn positions in an array of n counters.
    Dense,
    /// One conditional binomial per position.
    Binomial,
}

impl Method {
    /// The method for a batch of `b` balls on `n` bins under `law`.
    pub(super) fn for_batch(law: PositionLaw, n: u64, b: u64) -> Self {
        let binomial_from = match law {
            PositionLaw::DChoice { d: 2 } => BINOMIAL_FROM_TWO,
            PositionLaw::DChoice { .. } => BINOMIAL_FROM,
            PositionLaw::OnePlusBeta { .. } => BINOMIAL_FROM_ONE_PLUS_BETA,
        };
        if b.saturating_mul(SPARSE_BELOW) < n {
            Method::Sparse
        } else if b < binomial_from.saturating_mul(n) && b <= u64::from(u32::MAX) {
            Method::Dense
        } else {
            Method::Binomial
        }
    }
}

/// The histogram after a dense batch: for each position `p` of level `j`, one bin at
/// `j + counts[p]`, written to `out` (level index relative to the old minimum load). Branch
/// free: every position adds one to one of four interleaved partial histograms (so that
/// runs of equal counts do not wait on one memory cell).
fn dense_histogram(cum: &[u64], counts: &[u32], acc: &mut Vec<u64>, out: &mut Vec<u64>) {
    let top = counts.iter().copied().max().unwrap_or(0) as usize;
    let width = cum.len() + top;
    acc.clear();
    acc.resize(4 * width, 0);
    let mut start = 0usize;
    for (j, &end) in cum.iter().enumerate() {
        let cells = &mut acc[4 * j..];
        for (i, &c) in counts[start..end as usize].iter().enumerate() {
            cells[4 * c as usize + (i & 3)] += 1;
        }
        start = end as usize;
    }
    out.clear();
    out.extend(acc.chunks_exact(4).map(|q| q.iter().sum::<u64>()));
}

/// `1 − (1 − t)^d` for `t` in `(0, 1]`, as `t·Σ_{i<d} (1 − t)^i` (positive terms, so no
/// cancellation for small `t`): the probability that the smallest of `d` uniform positions
/// among the last `k` is the first of them, with `t = 1/k`.
#[inline]
fn geometric_tail(t: f64, d: u32) -> f64 {
    let s = 1.0 - t;
    let (mut sum, mut pow) = (0.0, 1.0);
    for _ in 0..d {
        sum += pow;
        pow *= s;
    }
    (t * sum).min(1.0)
}

/// Reusable buffers of the positional batch step.
#[derive(Debug)]
pub(super) struct PositionBatcher {
    law: PositionLaw,
    /// Forces a method (tests); `None` = [`Method::for_batch`].
    pub(super) force: Option<Method>,
    /// Level boundaries frozen at the batch start (`LevelLoads::cumulative`).
    cum: Vec<u64>,
    /// Dense: balls per position.
    counts: Vec<u32>,
    /// Sparse: the drawn positions.
    picks: Vec<u32>,
    /// The new histogram, level index relative to the old minimum load.
    out: Vec<u64>,
    /// Dense: four interleaved partial histograms.
    acc: Vec<u64>,
}

impl PositionBatcher {
    pub(super) fn new(law: PositionLaw) -> Self {
        Self {
            law,
            force: None,
            cum: Vec::new(),
            counts: Vec::new(),
            picks: Vec::new(),
            out: Vec::new(),
            acc: Vec::new(),
        }
    }

    /// Allocates one batch of `b` balls on `st` (frozen at entry), calling `observer.on_ball`
    /// per ball when it asks for it (ball by ball grouped by bin, at the batch end). Returns
    /// the number of bin samples the balls drew.
    ///
    /// The method ([`Method`]) reports every position that receives `c >= 1` balls as a
    /// *hit* on its level; a hit either adds the `c` balls one by one (for the observer) or
    /// moves one bin of the new histogram from its level `j` to `j + c`.
    pub(super) fn step<R, O>(
        &mut self,
        st: &mut LevelLoads,
        b: u64,
        rng: &mut R,
        observer: &mut O,
    ) -> u64
    where
        R: RngCore + ?Sized,
        O: Observer,
    {
        let n = st.bins();
        let lo = st.min_load();
        let total = st.balls() + b;
        let draws = Draws::of_batch(self.law, n, b, rng);
        let method = self.force.unwrap_or_else(|| Method::for_batch(self.law, n, b));
        let Self { cum, counts, picks, out, acc, .. } = self;
        cum.clear();
        cum.extend_from_slice(st.cumulative());
        // Histogram mode starts from the frozen level counts.
        out.clear();
        if !O::PER_BALL {
            out.extend((0..cum.len()).map(|j| st.count(j)));
        }
        let mut hit = |j: usize, c: u64, st: &mut LevelLoads| {
            if O::PER_BALL {
                let x = lo + j as u64;
                for r in 0..c {
                    let pos = st.bump_load(x + r);
                    observer.on_ball(st, pos as usize, 1.0);
                }
            } else {
                out[j] -= 1;
                let k = j + c as usize;
                if k >= out.len() {
                    out.resize(k + 1, 0);
                }
                out[k] += 1;
            }
        };
        let mut child = ChildRng::from_parent(rng);
        match method {
            Method::Sparse => sparse_hits(draws, cum, picks, &mut child, st, &mut hit),
            Method::Dense => {
                count_positions(draws, counts, &mut child);
                if O::PER_BALL {
                    dense_hits(cum, counts, st, &mut hit);
                } else {
                    dense_histogram(cum, counts, acc, out);
                }
            }
            Method::Binomial => binomial_hits(draws, cum, &mut child, st, &mut hit),
        }
        if !O::PER_BALL {
            st.set_counts(lo, out, total);
        }
        debug_assert_eq!(st.balls(), total);
        draws.samples()
    }
}

/// The balls of one batch on `n` bins: `multi` of them take the smallest of `d` uniform
/// positions, `single` of them one uniform position.
#[derive(Clone, Copy, Debug)]
struct Draws {
    n: u64,
    d: u32,
    multi: u64,
    single: u64,
}

impl Draws {
    /// The balls of a batch of `b` under `law`; for (1+β) the number of Two-Choice balls is
    /// drawn from `rng`, `Binomial(b, β)`.
    #[inline]
    fn of_batch<R: RngCore + ?Sized>(law: PositionLaw, n: u64, b: u64, rng: &mut R) -> Self {
        let (d, multi, single) = match law {
            PositionLaw::DChoice { d } => (d, b, 0),
            PositionLaw::OnePlusBeta { beta } => {
                let two = binomial(rng, b, beta);
                (2, two, b - two)
            }
        };
        Self { n, d, multi, single }
    }

    /// The bin samples the balls draw.
    #[inline]
    fn samples(self) -> u64 {
        self.multi * u64::from(self.d) + self.single
    }
}

/// [`Method::Sparse`]: draws the batch's positions (the `multi` minima first, then the
/// `single` ones), sorts them, and reports each run of equal positions as one hit on the
/// level that contains it (`cum`: the level boundaries).
#[inline]
fn sparse_hits<H>(
    draws: Draws,
    cum: &[u64],
    picks: &mut Vec<u32>,
    child: &mut ChildRng,
    st: &mut LevelLoads,
    hit: &mut H,
) where
    H: FnMut(usize, u64, &mut LevelLoads),
{
    let Draws { n, d, multi, single } = draws;
    picks.clear();
    min_positions(d, n, multi, child, |p| picks.push(p as u32));
    for _ in 0..single {
        picks.push(below(child, n) as u32);
    }
    picks.sort_unstable();
    let mut j = 0usize;
    let mut i = 0usize;
    while i < picks.len() {
        let p = picks[i];
        let mut e = i + 1;
        while e < picks.len() && picks[e] == p {
            e += 1;
        }
        while cum[j] <= u64::from(p) {
            j += 1;
        }
        hit(j, (e - i) as u64, st);
        i = e;
    }
}

/// [`Method::Dense`]: draws the batch's positions (the `multi` minima first, then the
/// `single` ones) into one counter per position.
#[inline]
fn count_positions(draws: Draws, counts: &mut Vec<u32>, child: &mut ChildRng) {
    let Draws { n, d, multi, single } = draws;
    counts.clear();
    counts.resize(n as usize, 0);
    min_positions(d, n, multi, child, |p| counts[p as usize] += 1);
    for _ in 0..single {
        counts[below(child, n) as usize] += 1;
    }
}

/// [`Method::Dense`] ball by ball: every position with balls as one hit, level by level.
#[inline]
fn dense_hits<H>(cum: &[u64], counts: &[u32], st: &mut LevelLoads, hit: &mut H)
where
    H: FnMut(usize, u64, &mut LevelLoads),
{
    let mut start = 0usize;
    for (j, &end) in cum.iter().enumerate() {
        for &c in &counts[start..end as usize] {
            if c != 0 {
                hit(j, u64::from(c), st);
            }
        }
        start = end as usize;
    }
}

/// [`Method::Binomial`]: scans the positions in order and draws the balls of each as
/// conditional binomials of the balls left (`multi` and `single` ones apart), until none
/// are left; every position with balls is one hit.
#[inline]
fn binomial_hits<H>(
    draws: Draws,
    cum: &[u64],
    child: &mut ChildRng,
    st: &mut LevelLoads,
    hit: &mut H,
) where
    H: FnMut(usize, u64, &mut LevelLoads),
{
    let Draws { n, d, multi, single } = draws;
    let (mut left_multi, mut left_single) = (multi, single);
    let mut start = 0u64;
    'levels: for (j, &end) in cum.iter().enumerate() {
        for p in start..end {
            if left_multi == 0 && left_single == 0 {
                break 'levels;
            }
            // Positions p..n remain: k of them.
            let k = (n - p) as f64;
            let mut c = 0;
            if left_multi > 0 {
                let q = geometric_tail(1.0 / k, d);
                let x = binomial(child, left_multi, q);
                left_multi -= x;
                c += x;
            }
            if left_single > 0 {
                let x = binomial(child, left_single, 1.0 / k);
                left_single -= x;
                c += x;
            }
            if c != 0 {
                hit(j, c, st);
            }
        }
        start = end;
    }
    debug_assert_eq!(left_multi + left_single, 0);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::level::sequential::min_position;
    use crate::LoadState;
    use ballast_testkit::{chi2_critical, chi2_gof, exact_batch_law};

    #[test]
    fn block_positions_are_the_ball_by_ball_positions() {
        // n close to 2^32 makes rejected halves frequent; block ends are crossed.
        for (n, d) in [(7u64, 2u32), (1000, 3), (u64::from(u32::MAX), 3), (u64::from(u32::MAX), 2)]
        {
            for d in [d, 4, 5] {
                let mut a = ChildRng::from_parent(&mut crate::sim_rng(n ^ u64::from(d)));
                let mut b = a.clone();
                let mut got = Vec::new();
                for chunk in [1u64, 63, 64, 65, 300] {
                    min_positions(d, n, chunk, &mut a, |p| got.push(p));
                }
                let want: Vec<u64> = (0..got.len()).map(|_| min_position(d, n, &mut b)).collect();
                assert_eq!(got, want, "n = {n}, d = {d}");
                assert_eq!(a.next_u64(), b.next_u64());
            }
        }
    }

    #[test]
    fn geometric_tail_is_one_minus_a_power() {
        for d in 1..6u32 {
            for k in [1.0f64, 2.0, 3.0, 10.0, 1e3] {
                let t = 1.0 / k;
                let want = 1.0 - (1.0 - t).powi(d as i32);
                assert!((geometric_tail(t, d) - want).abs() < 1e-14, "d = {d}, k = {k}");
            }
        }
        // No cancellation: for k = 1e12, 1 − (1 − 1/k)^3 ≈ 3/k to full precision.
        let q = geometric_tail(1e-12, 3);
        assert!((q / 3e-12 - 1.0).abs() < 1e-11, "{q}");
    }

    /// Per-position probability of a ball, lightest first.
    fn position_law(law: PositionLaw, n: u64) -> Vec<f64> {
        let nf = n as f64;
        let min_of = |d: u32, p: u64| {
            let (a, b) = ((n - p) as f64, (n - p - 1) as f64);
            (a.powi(d as i32) - b.powi(d as i32)) / nf.powi(d as i32)
        };
        (0..n)
            .map(|p| match law {
                PositionLaw::DChoice { d } => min_of(d, p),
                PositionLaw::OnePlusBeta { beta } => (1.0 - beta) / nf + beta * min_of(2, p),
            })
            .collect()
    }

    /// Counts balls, so that the batch is applied ball by ball.
    #[derive(Default)]
    struct PerBall(u64);

    impl Observer for PerBall {
        fn on_ball<S: LoadState>(&mut self, _s: &S, _bin: usize, _w: f64) {
            self.0 += 1;
        }
    }

    #[test]
    fn every_method_has_the_enumerated_one_batch_law() {
        // (law, sorted start loads, b); ties inside levels, and a single level.
        let cases = [
            (PositionLaw::DChoice { d: 3 }, vec![0u64, 0, 1, 1, 1], 3u32),
            (PositionLaw::DChoice { d: 2 }, vec![0, 0, 0, 0], 4),
            (PositionLaw::OnePlusBeta { beta: 0.5 }, vec![0, 1, 1, 1, 3], 3),
        ];
        let reps = 20_000u64;
        for (case, (law, loads, b)) in cases.into_iter().enumerate() {
            let n = loads.len() as u64;
            let q = position_law(law, n);
            assert!((q.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            let exact = exact_batch_law(&loads, &q, b);
            let lo = loads[0];
            let mut counts = vec![0u64; (loads[loads.len() - 1] - lo + 1) as usize];
            for &x in &loads {
                counts[(x - lo) as usize] += 1;
            }
            let start = LevelLoads::from_counts(lo, &counts);
            for method in [Method::Sparse, Method::Dense, Method::Binomial] {
                for per_ball in [false, true] {
                    let mut pb = PositionBatcher::new(law);
                    pb.force = Some(method);
                    let seed = 100 * case as u64 + 10 * method as u64 + u64::from(per_ball);
                    let mut rng = crate::sim_rng(seed);
                    let mut observed = vec![0u64; exact.len()];
                    for _ in 0..reps {
                        let mut st = start.clone();
                        if per_ball {
                            let mut obs = PerBall::default();
                            pb.step(&mut st, u64::from(b), &mut rng, &mut obs);
                            assert_eq!(obs.0, u64::from(b));
                        } else {
                            pb.step(&mut st, u64::from(b), &mut rng, &mut ());
                        }
                        assert_eq!(st.balls(), start.balls() + u64::from(b));
                        let v: Vec<u64> = (0..n).map(|p| st.load_at(p)).collect();
                        let k = exact.iter().position(|(w, _)| *w == v).expect("reachable");
                        observed[k] += 1;
                    }
                    // Merge outcomes with expected count below 5 into the next.
                    let (mut o, mut pr) = (Vec::new(), Vec::new());
                    let (mut oa, mut pa) = (0u64, 0.0);
                    for (k, (_, p)) in exact.iter().enumerate() {
                        oa += observed[k];
                        pa += p;
                        if pa * reps as f64 >= 5.0 {
                            o.push(oa);
                            pr.push(pa);
                            (oa, pa) = (0, 0.0);
                        }
                    }
                    *o.last_mut().expect("categories") += oa;
                    *pr.last_mut().expect("categories") += pa;
                    let (stat, df) = chi2_gof(&o, &pr);
                    assert!(
                        stat < chi2_critical(df),
                        "{law:?} from {loads:?}, b = {b}, {method:?}, per ball {per_ball}: \
                         chi2 = {stat:.1}, df = {df}"
                    );
                }
            }
        }
    }

    #[test]
    fn first_ball_from_zero_loads_takes_position_p_with_the_min_of_d_law() {
        // From all-zero loads, one ball: P(position p) = ((n−p)^d − (n−p−1)^d)/n^d. The
        // position is read from the dense counters (the histogram cannot show it: the bins
        // of a level are exchangeable).
        let n = 12u64;
        for d in [2u32, 3] {
            let q = position_law(PositionLaw::DChoice { d }, n);
            let mut pb = PositionBatcher::new(PositionLaw::DChoice { d });
            pb.force = Some(Method::Dense);
            let mut rng = crate::sim_rng(40 + u64::from(d));
            let reps = 40_000u64;
            let mut observed = vec![0u64; n as usize];
            for _ in 0..reps {
                let mut st = LevelLoads::new(n);
                pb.step(&mut st, 1, &mut rng, &mut ());
                let p = pb.counts.iter().position(|&c| c == 1).expect("one ball");
                observed[p] += 1;
            }
            // Expected counts: at least 40000·(1/12)^3·… ≥ 23 for the last position (d = 3).
            let (stat, df) = chi2_gof(&observed, &q);
            assert!(stat < chi2_critical(df), "d = {d}: chi2 = {stat:.1}, df = {df}");
        }
    }

    /// Times the three methods (release, `--ignored --nocapture`): µs per batch at n = 10⁴
    /// from a three-level histogram, for b/n from 1/64 to 64.
    #[test]
    #[ignore = "timing, run by hand"]
    fn time_methods() {
        let laws = [
            PositionLaw::DChoice { d: 2 },
            PositionLaw::DChoice { d: 3 },
            PositionLaw::OnePlusBeta { beta: 0.5 },
        ];
        for law in laws {
            println!("{law:?}");
            for b in [156u64, 625, 2_500, 10_000, 50_000, 100_000, 200_000, 400_000, 640_000] {
                let mut line = format!("b = {b:>7}:");
                for m in [Method::Sparse, Method::Dense, Method::Binomial] {
                    if m == Method::Sparse && b > 10_000 {
                        continue;
                    }
                    let mut pb = PositionBatcher::new(law);
                    pb.force = Some(m);
                    let st = LevelLoads::from_counts(100, &[2000, 5000, 3000]);
                    let mut rng = crate::sim_rng(1);
                    let reps = (10_000_000 / b).clamp(20, 10_000);
                    let t = std::time::Instant::now();
                    for _ in 0..reps {
                        // Keep the histogram's shape: restart from the same state.
                        let mut s = st.clone();
                        pb.step(&mut s, b, &mut rng, &mut ());
                        std::hint::black_box(s.max_load());
                    }
                    let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
                    line += &format!("  {m:?} {us:8.1} µs ({:5.2} ns/ball)", us * 1e3 / b as f64);
                }
                println!("{line}");
            }
        }
    }
}
