//! One batch of a symmetric process on the level histogram (`docs/occupancy.md#the-batch-step`).
//!
//! In a batch every ball decides from the histogram frozen at the batch start, independently
//! of the other balls. For every supported process (random ties) the probability that a ball
//! lands on a particular bin depends only on the bin's *class*: its level, and for Quantile
//! whether it is among the heavy bins (the level straddling the rank cut is split into a
//! heavy and a light part, which is exact because bins of a level are exchangeable). Hence:
//!
//! 1. the numbers of balls per class are multinomial (conditional binomials);
//! 2. given those, the balls of a class are i.i.d. uniform over its bins, so the bins'
//!    receipts have the occupancy law ([`OccupancySampler`]);
//! 3. the new histogram is the sum of the shifted occupancy histograms.
//!
//! A process whose balls draw a random number of samples (for example (1+β)) is written as a
//! mixture of *parts* (ball types) with a fixed sample count each; the number of balls of
//! each type is multinomial too, which keeps the sample count jointly exact with the loads.
//!
//! Cost per batch: O(levels) for the class probabilities and the multinomial, plus the
//! occupancy draws; nothing grows with b or n for a fixed shape of the histogram. The shape
//! does depend on b: batched Two-Choice spreads the loads over about 2b/n + O(log n) levels
//! (13, 31, 89 levels at b = n, 10n, 50n for n = 10⁴), and a class of c bins receiving μ
//! balls per bin costs about min(c, 16√μ + 16) binomial draws (one per cell of its
//! occupancy histogram), so a batch costs O(levels · min(c, √(b/n))) draws: measured 10⁴
//! binomials (~1 ms) per batch at b = 50n against 120 (~30 µs) at b = n, n = 10⁴. The output
//! (the new histogram) itself has O(b/n) levels, so no exact level method is O(1) in b here.

use rand::RngCore;
use statrs::function::erf::erfc;

use super::occupancy::{multinomial_conditional, multinomial_weights, OccupancySampler};
use crate::histogram::LevelLoads;
use crate::kind::BatchLaw;
use crate::loads::gap_unit;
use crate::Observer;

/// The batch law of one process ([`BatchLaw`], named by its kind), with what it needs
/// computed once per run.
#[derive(Clone, Debug)]
pub(crate) struct Law {
    law: BatchLaw,
    /// The normal intervals of truncated noise (σ-Noisy-Load with `truncate`).
    tails: Option<NormalIntervals>,
}

impl Law {
    /// The law `law`, with the normal intervals of truncated noise computed once.
    pub(crate) fn new(law: BatchLaw) -> Self {
        let tails = match law {
            BatchLaw::SigmaNoisy { sigma, truncate } => {
                (truncate && sigma > 0.0).then(|| NormalIntervals::new(sigma))
            }
            _ => None,
        };
        Self { law, tails }
    }
}

/// Bins that share one per-bin probability in a batch.
#[derive(Clone, Copy, Debug)]
struct Class {
    /// Level index in the frozen histogram.
    level: usize,
    /// Number of bins.
    size: u64,
    /// Among the heavy bins of a Quantile rule.
    heavy: bool,
}

/// How the balls of one type spread over the classes.
#[derive(Clone, Debug)]
enum Spread {
    /// Unnormalised class masses.
    Weights(Vec<f64>),
    /// Conditional probabilities P(class i | not an earlier class), last used entry 1.
    Conditional(Vec<f64>),
}

/// One ball type: its share of the batch, its samples per ball, and its spread.
#[derive(Clone, Debug)]
struct Part {
    share: f64,
    samples: u64,
    spread: Spread,
}

/// Reusable buffers of the batch loop.
#[derive(Debug, Default)]
pub(crate) struct Batcher {
    classes: Vec<Class>,
    parts: Vec<Part>,
    balls: Vec<u64>,
    per_part: Vec<u64>,
    shares: Vec<f64>,
    suffix: Vec<f64>,
    out: Vec<u64>,
    tmp: Vec<u64>,
    counts: Vec<u64>,
    mass: Vec<f64>,
    pub(crate) occ: OccupancySampler,
}

impl Batcher {
    /// Allocates one batch of `b` balls on `st` (frozen at entry), calling `observer.on_ball`
    /// per ball when it asks for it. Returns the number of bin samples the balls drew.
    pub(crate) fn step<R, O>(
        &mut self,
        law: &Law,
        st: &mut LevelLoads,
        b: u64,
        rng: &mut R,
        observer: &mut O,
    ) -> u64
    where
        R: RngCore + ?Sized,
        O: Observer,
    {
        self.build(law, st);
        // Balls per part (ball type), then per class.
        let k = self.classes.len();
        self.balls.clear();
        self.balls.resize(k, 0);
        self.shares.clear();
        self.shares.extend(self.parts.iter().map(|p| p.share));
        self.per_part.clear();
        self.per_part.resize(self.parts.len(), 0);
        multinomial_weights(rng, b, &self.shares, &mut self.suffix, &mut self.per_part);
        let mut samples = 0u64;
        for (part, &cnt) in self.parts.iter().zip(&self.per_part) {
            if cnt == 0 {
                continue;
            }
            samples += cnt * part.samples;
            match &part.spread {
                Spread::Weights(w) => {
                    multinomial_weights(rng, cnt, w, &mut self.suffix, &mut self.balls)
                }
                Spread::Conditional(c) => multinomial_conditional(rng, cnt, c, &mut self.balls),
            }
        }
        let lo = st.min_load();
        if O::PER_BALL {
            // Apply ball by ball (grouped by bin), so the observer sees every intermediate
            // state. O(b) per batch, as in the bin engine.
            for (class, &balls) in self.classes.iter().zip(&self.balls) {
                if balls == 0 {
                    continue;
                }
                self.tmp.clear();
                self.occ.sample_into(balls, class.size, rng, &mut self.tmp, 0);
                let x = lo + class.level as u64;
                for (got, &bins) in self.tmp.iter().enumerate().skip(1) {
                    for _ in 0..bins {
                        for r in 0..got as u64 {
                            let pos = st.bump_load(x + r);
                            observer.on_ball(st, pos as usize, 1.0);
                        }
                    }
                }
            }
        } else {
            self.out.clear();
            self.out.resize(st.levels(), 0);
            for (class, &balls) in self.classes.iter().zip(&self.balls) {
                if balls == 0 {
                    self.out[class.level] += class.size;
                } else {
                    self.occ.sample_into(balls, class.size, rng, &mut self.out, class.level);
                }
            }
            let total = st.balls() + b;
            st.set_counts(lo, &self.out, total);
        }
        samples
    }

    /// Classes and parts of `law` on the frozen histogram `st`: the level counts, then the
    /// law's classes and ball types, then the types no ball can have are dropped.
    fn build(&mut self, law: &Law, st: &LevelLoads) {
        self.counts.clear();
        self.counts.extend((0..st.levels()).map(|j| st.count(j)));
        self.classes.clear();
        self.parts.clear();
        match law.law {
            BatchLaw::OneChoice => {
                self.classes_per_level();
                let w = uniform_weights(&self.classes);
                self.parts.push(Part { share: 1.0, samples: 1, spread: Spread::Weights(w) });
            }
            BatchLaw::DChoice { d } => {
                self.classes_per_level();
                let c = d_choice_conditional(st, d);
                self.parts.push(Part {
                    share: 1.0,
                    samples: u64::from(d),
                    spread: Spread::Conditional(c),
                });
            }
            BatchLaw::OnePlusBeta { beta } => {
                self.classes_per_level();
                let w = uniform_weights(&self.classes);
                self.parts.push(Part { share: 1.0 - beta, samples: 1, spread: Spread::Weights(w) });
                let c = d_choice_conditional(st, 2);
                self.parts.push(Part { share: beta, samples: 2, spread: Spread::Conditional(c) });
            }
            BatchLaw::MixedQuantile { delta, eta } => self.build_mixed_quantile(st, delta, eta),
            BatchLaw::Threshold { .. }
            | BatchLaw::MeanThinning { .. }
            | BatchLaw::RelativeThreshold { .. } => {
                self.build_thinning(law, st);
            }
            BatchLaw::GBounded { g } | BatchLaw::GMyopic { g } => {
                self.classes_per_level();
                let bounded = matches!(law.law, BatchLaw::GBounded { .. });
                let w = g_comparison_weights(bounded, g, st, &self.counts);
                self.parts.push(Part { share: 1.0, samples: 2, spread: Spread::Weights(w) });
            }
            BatchLaw::SigmaNoisy { sigma, .. } => {
                self.classes_per_level();
                let w = match &law.tails {
                    Some(t) => t.truncated_weights(st.min_load(), &self.counts, &mut self.mass),
                    None => noisy_weights(sigma, &self.counts),
                };
                self.parts.push(Part { share: 1.0, samples: 2, spread: Spread::Weights(w) });
            }
        }
        // Parts with no share or no reachable class are dropped (their balls are impossible).
        self.parts.retain(|p| {
            p.share > 0.0
                && match &p.spread {
                    Spread::Weights(w) => w.iter().any(|&x| x > 0.0),
                    Spread::Conditional(_) => true,
                }
        });
    }

    /// One class per level of the histogram (`counts`), none of them heavy.
    fn classes_per_level(&mut self) {
        let Self { classes, counts, .. } = self;
        classes.extend(counts.iter().enumerate().map(|(level, &size)| Class {
            level,
            size,
            heavy: false,
        }));
    }

    /// Mixed-Quantile(δ, η) (η = 1: Quantile(δ)): classes per level with the ⌈δn⌉ heaviest
    /// bins marked heavy, and three ball types: a One-Choice step; a Quantile step whose
    /// first sample is light (kept); a Quantile step whose first sample is heavy (a second,
    /// uniform sample, no comparison).
    fn build_mixed_quantile(&mut self, st: &LevelLoads, delta: f64, eta: f64) {
        let n = st.bins();
        let nf = n as f64;
        // Same heavy count as the bin engine: ⌈δn⌉ in floating point.
        let heavy = ((delta * nf).ceil() as u64).min(n);
        if heavy == 0 {
            self.classes_per_level();
        } else {
            self.classes_with_heavy(st, heavy);
        }
        let w = uniform_weights(&self.classes);
        let light: Vec<f64> =
            self.classes.iter().map(|c| if c.heavy { 0.0 } else { c.size as f64 }).collect();
        self.parts.push(Part {
            share: (1.0 - eta) * nf,
            samples: 1,
            spread: Spread::Weights(w.clone()),
        });
        self.parts.push(Part {
            share: eta * (n - heavy) as f64,
            samples: 1,
            spread: Spread::Weights(light),
        });
        self.parts.push(Part { share: eta * heavy as f64, samples: 2, spread: Spread::Weights(w) });
    }

    /// Classes per level, the `heavy >= 1` heaviest bins marked heavy: the levels above the
    /// rank cut are heavy, those below light, and the level at the cut is split into a light
    /// class (if any of its bins are light) and a heavy one.
    fn classes_with_heavy(&mut self, st: &LevelLoads, heavy: u64) {
        let n = st.bins();
        let cut = st.level_of(n - heavy);
        let cum = st.cumulative();
        let heavy_in_cut = heavy - (n - cum[cut]);
        let Self { classes, counts, .. } = self;
        for (level, &size) in counts.iter().enumerate() {
            if level < cut {
                classes.push(Class { level, size, heavy: false });
            } else if level > cut {
                classes.push(Class { level, size, heavy: true });
            } else {
                if size > heavy_in_cut {
                    classes.push(Class { level, size: size - heavy_in_cut, heavy: false });
                }
                classes.push(Class { level, size: heavy_in_cut, heavy: true });
            }
        }
    }

    /// Threshold, Mean-Thinning and Relative-Threshold: classes per level and two ball
    /// types: an accepted first sample (one sample, uniform over the accepted bins) and a
    /// rejected one (a second, uniform sample).
    fn build_thinning(&mut self, law: &Law, st: &LevelLoads) {
        self.classes_per_level();
        let lo = st.min_load();
        let acc: Vec<f64> =
            self.classes
                .iter()
                .map(|c| {
                    if thinning_accepts(law, st, lo + c.level as u64) {
                        c.size as f64
                    } else {
                        0.0
                    }
                })
                .collect();
        let accepted: f64 = acc.iter().sum();
        self.parts.push(Part { share: accepted, samples: 1, spread: Spread::Weights(acc) });
        let w = uniform_weights(&self.classes);
        self.parts.push(Part {
            share: st.bins() as f64 - accepted,
            samples: 2,
            spread: Spread::Weights(w),
        });
    }
}

/// Unnormalised masses of uniform sampling: each class's size.
fn uniform_weights(classes: &[Class]) -> Vec<f64> {
    classes.iter().map(|c| c.size as f64).collect()
}

/// Whether the thinning `law` keeps a first sample of load `x` on the frozen `st` (the bin
/// engine's tests).
fn thinning_accepts(law: &Law, st: &LevelLoads, x: u64) -> bool {
    match law.law {
        BatchLaw::Threshold { f } => x as f64 <= f,
        BatchLaw::MeanThinning { strict } => {
            let lhs = u128::from(st.bins()) * u128::from(x);
            let w = u128::from(st.balls());
            if strict {
                lhs < w
            } else {
                lhs <= w
            }
        }
        // The bin engine's test: normalised load below f.
        BatchLaw::RelativeThreshold { f } => gap_unit(x, st.balls(), st.bins()) < f,
        _ => unreachable!("thinning laws only"),
    }
}

/// Per-level masses of g-Bounded (`bounded`) or g-Myopic: the bins of level a times the
/// chance-weighted bins of the levels whose comparison with a sends the ball to a.
fn g_comparison_weights(bounded: bool, g: f64, st: &LevelLoads, counts: &[u64]) -> Vec<f64> {
    let levels = counts.len();
    // Loads are integers: |a − b| > g  ⇔  |a − b| >= ⌊g⌋ + 1.
    let gi = if g >= levels as f64 { levels } else { g.floor() as usize };
    let cum = st.cumulative();
    // Bins with level index in lo..=hi (clamped).
    let between = |lo: isize, hi: isize| -> f64 {
        let hi = hi.min(levels as isize - 1);
        let lo = lo.max(0);
        if hi < lo {
            return 0.0;
        }
        let below = if lo == 0 { 0 } else { cum[lo as usize - 1] };
        (cum[hi as usize] - below) as f64
    };
    let top = levels as isize;
    let gi = gi as isize;
    (0..levels)
        .map(|a| {
            let h = counts[a] as f64;
            let ai = a as isize;
            let much_heavier = between(ai + gi + 1, top);
            let per_bin = if bounded {
                // Lighter wins beyond g; within g the heavier wins, exact tie: the second
                // sample (a fair share).
                h + 2.0 * much_heavier + 2.0 * between(ai - gi, ai - 1)
            } else {
                // Within g a coin decides; beyond g the lighter wins.
                between(ai - gi, ai + gi) + 2.0 * much_heavier
            };
            h * per_bin
        })
        .collect()
}

/// d-Choice, lightest level first: P(level j | level >= j) = 1 − (S_{j+1}/S_j)^d with
/// S_j = bins at level >= j, computed as −expm1(d·ln(1 − h_j/S_j)) without cancellation.
fn d_choice_conditional(st: &LevelLoads, d: u32) -> Vec<f64> {
    let n = st.bins();
    let cum = st.cumulative();
    let mut below = 0u64;
    cum.iter()
        .map(|&c| {
            let s = n - below;
            let h = c - below;
            below = c;
            if h == s {
                1.0
            } else {
                -(f64::from(d) * (-(h as f64) / s as f64).ln_1p()).exp_m1()
            }
        })
        .collect()
}

/// σ-Noisy-Load without truncation: a level-a bin gets the ball with probability
/// ∝ Σ_b h_b·erfc((a − b)/(2σ)) (the pair (x, y) sends the ball to x with probability
/// 2Φ((y − x)/(σ√2)) summed over both orders); σ = 0 is Two-Choice.
fn noisy_weights(sigma: f64, counts: &[u64]) -> Vec<f64> {
    let levels = counts.len();
    let kernel: Vec<f64> = (0..2 * levels - 1)
        .map(|i| {
            let delta = i as f64 - (levels as f64 - 1.0); // a − b
            if sigma == 0.0 {
                // Ties go to the first sample: one of the two orders.
                if delta < 0.0 {
                    2.0
                } else if delta == 0.0 {
                    1.0
                } else {
                    0.0
                }
            } else {
                erfc(delta / (2.0 * sigma))
            }
        })
        .collect();
    (0..levels)
        .map(|a| {
            let s: f64 = (0..levels).map(|b| counts[b] as f64 * kernel[a + levels - 1 - b]).sum();
            counts[a] as f64 * s
        })
        .collect()
}

/// Interval probabilities of σZ between integers, for σ-Noisy-Load with truncation.
#[derive(Clone, Debug)]
pub(crate) struct NormalIntervals {
    /// `q[i]` = P(σZ >= i) for i = 0..=reach + 1.
    q: Vec<f64>,
    /// Half-width of the support used: P(|σZ| > reach) < 1e−23.
    reach: i64,
}

impl NormalIntervals {
    pub(super) fn new(sigma: f64) -> Self {
        let reach = (10.0 * sigma).ceil() as i64 + 2;
        let q = (0..=reach + 1)
            .map(|i| 0.5 * erfc(i as f64 / (sigma * std::f64::consts::SQRT_2)))
            .collect();
        Self { q, reach }
    }

    /// Half-width of the support used.
    pub(super) fn reach(&self) -> i64 {
        self.reach
    }

    /// P(σZ >= i) for `i >= 0`; beyond the table, 0.
    fn upper(&self, i: i64) -> f64 {
        self.q.get(i as usize).copied().unwrap_or(0.0)
    }

    /// P(σZ >= a) for an integer `a` (0 beyond the support).
    pub(super) fn at_least(&self, a: i64) -> f64 {
        if a >= 0 {
            self.upper(a)
        } else {
            1.0 - self.upper(-a)
        }
    }

    /// P(a <= σZ < b) for integers a < b, from upper-tail values (no cancellation in the
    /// tails).
    pub(super) fn interval(&self, a: i64, b: i64) -> f64 {
        let q = |i: i64| self.upper(i);
        if a >= 0 {
            q(a) - q(b)
        } else if b <= 0 {
            q(-b) - q(-a)
        } else {
            1.0 - q(b) - q(-a)
        }
    }

    /// Law of T = trunc(x + σZ) (towards zero): (first value, probabilities).
    pub(super) fn pmf(&self, x: i64, out: &mut Vec<f64>) -> i64 {
        let first = x - self.reach - 1;
        let last = x + self.reach + 1;
        out.clear();
        for t in first..=last {
            // The event {T = t} as an interval of x + σZ.
            let p = if t >= 1 {
                self.interval(t - x, t + 1 - x)
            } else if t == 0 {
                self.interval(-1 - x, 1 - x)
            } else {
                self.interval(t - 1 - x, t - x)
            };
            out.push(p.max(0.0));
        }
        first
    }

    /// Class masses for levels `lo + a` with `counts[a]` bins: h_a·Σ_t P(T_a = t)·M(t),
    /// M(t) = Σ_b h_b·(2·P(T_b > t) + P(T_b = t)) (ties after truncation: first sample).
    fn truncated_weights(&self, lo: u64, counts: &[u64], pmf: &mut Vec<f64>) -> Vec<f64> {
        let levels = counts.len() as i64;
        let lo = lo as i64;
        let t0 = lo - self.reach - 1;
        let span = (levels + 2 * self.reach + 2) as usize;
        let mut m = vec![0.0; span];
        // Below the support of T_b, P(T_b > t) = 1: those 2·h_b are added by a suffix sum.
        let mut starts = vec![0.0; span];
        for (b, &h) in counts.iter().enumerate() {
            if h == 0 {
                continue;
            }
            let first = self.pmf(lo + b as i64, pmf);
            let mut above = 0.0; // P(T_b > t), accumulated from the top
            for (i, &p) in pmf.iter().enumerate().rev() {
                let t = first + i as i64;
                m[(t - t0) as usize] += h as f64 * (2.0 * above + p);
                above += p;
            }
            starts[(first - t0) as usize] += 2.0 * h as f64;
        }
        let mut running = 0.0;
        for (mt, &st) in m.iter_mut().zip(&starts).rev() {
            *mt += running;
            running += st;
        }
        counts
            .iter()
            .enumerate()
            .map(|(a, &h)| {
                if h == 0 {
                    return 0.0;
                }
                let first = self.pmf(lo + a as i64, pmf);
                let s: f64 = pmf
                    .iter()
                    .enumerate()
                    .map(|(i, &p)| p * m[(first + i as i64 - t0) as usize])
                    .sum();
                h as f64 * s
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn d_choice_conditionals_match_rank_intervals() {
        // Levels with 3, 2, 5 bins (n = 10), Two-Choice: P(level 0) = 1 − (7/10)², then
        // P(level 1 | >= 1) = 1 − (5/7)², then 1.
        let st = LevelLoads::from_counts(4, &[3, 2, 5]);
        let c = d_choice_conditional(&st, 2);
        assert!((c[0] - (1.0 - 0.49)).abs() < 1e-15);
        assert!((c[1] - (1.0 - 25.0 / 49.0)).abs() < 1e-15);
        assert_eq!(c[2], 1.0);
    }

    #[test]
    fn noise_free_kernels_are_two_choice_and_truncation_is_not() {
        let counts = [3u64, 2, 5];
        let w = noisy_weights(0.0, &counts);
        // Two-Choice per-bin mass (h_a + 2·heavier)·h_a.
        assert_eq!(w, vec![3.0 * (3.0 + 14.0), 2.0 * (2.0 + 10.0), 5.0 * 5.0]);
        // With a tiny σ, truncation sends load x to x − 1 or x with probability 1/2 each, so
        // for loads 4, 5, 6: c(4,5) = 2·3/4 + 1/4 = 1.75, c(5,4) = 0.25, c(4,6) = 2.
        let t = NormalIntervals::new(1e-9);
        let wt = t.truncated_weights(4, &counts, &mut Vec::new());
        let expect = [3.0 * (3.0 + 2.0 * 1.75 + 5.0 * 2.0), 2.0 * (0.75 + 2.0 + 5.0 * 1.75), 27.5];
        for (a, b) in expect.iter().zip(&wt) {
            assert!((a - b).abs() < 1e-9, "{expect:?} vs {wt:?}");
        }
        assert!((wt.iter().sum::<f64>() - 100.0).abs() < 1e-9);
        let total: f64 = (0..7).map(|i| t.interval(i - 3, i - 2)).sum();
        assert!((total - 1.0).abs() < 1e-12);
    }

    #[test]
    fn noisy_masses_sum_to_n_squared_on_wide_histograms() {
        // Levels far apart relative to σ (regression: the mass of heavier bins outside a
        // level's noise support was lost). Σ_a h_a Σ_b h_b c(a, b) = n² since c(a,b) + c(b,a) = 2.
        let counts: Vec<u64> = (0..60).map(|j| 1 + (j * 7 % 5) as u64).collect();
        let n: u64 = counts.iter().sum();
        let t = NormalIntervals::new(1.5);
        let wt = t.truncated_weights(30, &counts, &mut Vec::new());
        let w = noisy_weights(1.5, &counts);
        let n2 = (n * n) as f64;
        assert!((wt.iter().sum::<f64>() / n2 - 1.0).abs() < 1e-9);
        assert!((w.iter().sum::<f64>() / n2 - 1.0).abs() < 1e-9);
    }
}
