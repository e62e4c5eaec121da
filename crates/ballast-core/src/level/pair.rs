//! The two-sample rules that compare loads (g-Bounded, g-Myopic, σ-Noisy-Load) as decisions
//! on the levels of two uniform positions, for the sequential ball loop of the level engine
//! (`docs/level-engine.md#noisy-comparisons`).
//!
//! On the sorted view a uniform bin is a uniform position, and the ball's destination
//! matters only through its level (bins of a level are exchangeable). So a ball draws two
//! positions, looks up their levels `a` and `b` (loads `lo + a`, `lo + b`), and one of the
//! two levels gets the ball:
//!
//! - **g-Bounded**: levels more than `g` apart, the lower; otherwise the higher (on equal
//!   levels either is the same level).
//! - **g-Myopic**: levels more than `g` apart, the lower; otherwise the **first** sample's
//!   level. The rule's fair coin is not needed: the two samples are i.i.d., so given that
//!   they are within `g` (a condition symmetric in the pair) the first has the law of a
//!   fairly chosen one of the two. Same law, no random number.
//! - **σ-Noisy-Load**: the first sample wins with probability `p(a − b)`, read from a table
//!   by the level difference and drawn with one coin word. Without truncation
//!   `p(δ) = P(δ + σ(Z₁ − Z₂) ≤ 0) = erfc(δ / 2σ) / 2`. With truncation towards zero an
//!   estimate is `x + ⌊σZ⌋` as long as `x + σZ >= 0`, so once the lowest load is past the
//!   noise's reach (`P(|σZ| > reach) < 1e−23`, the support the batched law of
//!   `level/batch.rs` uses too) `p(δ) = P(⌊σZ₂⌋ − ⌊σZ₁⌋ >= δ)`, a function of δ alone;
//!   while the smaller load of a pair is below that ([`NoiseTable::exact_from`]) the
//!   probability is that of the pair of loads, `P(T_a <= T_b)` with `T_x = trunc(x + σZ)`,
//!   computed on first use and kept by (smaller load, difference)
//!   ([`NoiseTable::choose_at`]); the ball loop reads the lowest load with the levels.
//!   Both are exact to double precision, as the bin engine's normal sampler is.

use statrs::function::erf::erfc;

use super::batch::NormalIntervals;
use crate::process::Noisy;
use crate::rng::bernoulli_word;

/// Level differences the table covers directly: every difference of the fast path (fewer
/// than 128 levels); larger ones, possible only on the vector path, are computed.
const TABLE_REACH: i64 = 127;

/// A load-comparing two-sample rule, resolved once per run.
#[derive(Clone, Debug)]
pub(crate) enum PairLaw {
    /// g-Bounded with `g` as a level difference (`|δ| > g` ⇔ `|δ| > ⌊g⌋`).
    GBounded { g: usize },
    /// g-Myopic, likewise.
    GMyopic { g: usize },
    /// σ-Noisy-Load: the first sample's winning probability by level difference.
    Noisy(NoiseTable),
}

impl PairLaw {
    /// The law of `rule`.
    pub(crate) fn new(rule: Noisy) -> Self {
        // Saturating: a g beyond every level difference is "never far".
        let levels = |g: f64| usize::try_from(Noisy::whole_tolerance(g)).unwrap_or(usize::MAX);
        match rule {
            Noisy::GBounded { g } => PairLaw::GBounded { g: levels(g) },
            Noisy::GMyopic { g } => PairLaw::GMyopic { g: levels(g) },
            Noisy::SigmaNoisyLoad { sigma, truncate } => {
                PairLaw::Noisy(NoiseTable::new(sigma, truncate))
            }
        }
    }

    /// Whether a ball takes a coin word before its positions word.
    pub(super) fn has_coin(&self) -> bool {
        matches!(self, PairLaw::Noisy(_))
    }

    /// The level that gets the ball, given the levels `a` (first sample) and `b` above the
    /// lowest load `lo` and the ball's coin word (unused without one): [`Self::choose`], and
    /// for σ-Noisy-Load [`NoiseTable::choose_at`], which reads the pair of loads near load 0.
    #[inline(always)]
    pub(super) fn choose_at(&mut self, lo: u64, a: usize, b: usize, coin: u64) -> usize {
        match self {
            PairLaw::Noisy(t) => t.choose_at(lo, a, b, coin),
            _ => self.choose(a, b, coin),
        }
    }

    /// The probability that the first sample's level `a` gets the ball against the level `b`
    /// (levels above the lowest load `lo`): 0 or 1 for the g rules (1 on equal levels).
    pub(super) fn first_wins(&mut self, lo: u64, a: usize, b: usize) -> f64 {
        match self {
            PairLaw::Noisy(t) => t.first_wins(lo, a, b),
            _ => f64::from(u8::from(self.choose(a, b, 0) == a)),
        }
    }

    /// Whether, with the lowest load at `lo` or above, the first sample's winning
    /// probability depends on the level difference only ([`Self::first_wins_by`]): always
    /// for the g rules, from `exact_from` on for σ-Noisy-Load.
    pub(super) fn reads_difference_only(&self, lo: u64) -> bool {
        match self {
            PairLaw::Noisy(t) => lo >= t.exact_from,
            _ => true,
        }
    }

    /// [`Self::first_wins`] by the level difference `delta = a − b`, where
    /// [`Self::reads_difference_only`].
    pub(super) fn first_wins_by(&self, delta: i64) -> f64 {
        match self {
            PairLaw::Noisy(t) => t.by_difference(delta),
            _ => {
                let (a, b) = (delta.max(0) as usize, (-delta).max(0) as usize);
                f64::from(u8::from(self.choose(a, b, 0) == a))
            }
        }
    }

    /// The level that gets the ball, given the levels `a` (first sample) and `b` and the
    /// ball's coin word (unused without one).
    #[inline(always)]
    pub(super) fn choose(&self, a: usize, b: usize, coin: u64) -> usize {
        match self {
            PairLaw::GBounded { g } => g_bounded(a, b, *g),
            PairLaw::GMyopic { g } => g_myopic(a, b, *g),
            PairLaw::Noisy(t) => t.choose(a, b, coin),
        }
    }
}

/// g-Bounded on levels: more than `g` apart the lower, else the higher.
#[inline(always)]
pub(super) fn g_bounded(a: usize, b: usize, g: usize) -> usize {
    let far = a.abs_diff(b) > g;
    std::hint::select_unpredictable(far, a.min(b), a.max(b))
}

/// g-Myopic on levels: more than `g` apart the lower, else the first sample's.
#[inline(always)]
pub(super) fn g_myopic(a: usize, b: usize, g: usize) -> usize {
    let far = a.abs_diff(b) > g;
    std::hint::select_unpredictable(far, a.min(b), a)
}

/// σ-Noisy-Load's winning probabilities of the first sample, by level difference.
#[derive(Clone)]
pub(crate) struct NoiseTable {
    /// `p[δ + TABLE_REACH]` for `|δ| <= TABLE_REACH`.
    p: Vec<f64>,
    /// Below `exact_from`: P(first wins) by (smaller load, δ + TABLE_REACH), filled on
    /// first use (NaN: not yet computed); rows are added as the smaller load reaches them,
    /// so a large σ costs memory only for the loads a run visits.
    near: Vec<f64>,
    /// Below `exact_from + TABLE_REACH`: the law of `T_x` by load `x`, kept once computed
    /// (empty: not yet) when the noise's reach is at most [`KEPT_REACH`].
    laws: Vec<TruncLaw>,
    sigma: f64,
    /// Truncation: the noise's interval law.
    tails: Option<NormalIntervals>,
    /// The lowest load from which the table by level difference describes the rule: a pair
    /// whose smaller load is below it uses the probability of its two loads
    /// ([`Self::choose_at`]; 0 without truncation, where the table holds at every load).
    exact_from: u64,
}

impl std::fmt::Debug for NoiseTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NoiseTable")
            .field("sigma", &self.sigma)
            .field("truncate", &self.tails.is_some())
            .field("exact_from", &self.exact_from)
            .finish()
    }
}

impl NoiseTable {
    fn new(sigma: f64, truncate: bool) -> Self {
        let tails = (truncate && sigma > 0.0).then(|| NormalIntervals::new(sigma));
        let exact_from = tails.as_ref().map_or(0, |t| t.reach() as u64 + 1);
        let mut table =
            Self { p: Vec::new(), near: Vec::new(), laws: Vec::new(), sigma, tails, exact_from };
        table.p = (-TABLE_REACH..=TABLE_REACH).map(|d| table.compute(d)).collect();
        table
    }

    /// [`Self::choose`] for the loads `x_a = lo + a`, `x_b = lo + b` at any load, `lo` the
    /// lowest load: from `exact_from` on the table by difference, before it
    /// [`Self::choose_near`].
    #[inline(always)]
    pub(super) fn choose_at(&mut self, lo: u64, a: usize, b: usize, coin: u64) -> usize {
        if lo >= self.exact_from {
            return self.choose(a, b, coin);
        }
        self.choose_near(lo, a, b, coin)
    }

    /// [`Self::choose_at`] while the lowest load is below `exact_from`: when the smaller of
    /// the pair's loads is too, the exact winning probability of the pair of loads. Out of
    /// the ball loop's line: only the first ~10σ·n balls of a run come here.
    #[inline(never)]
    fn choose_near(&mut self, lo: u64, a: usize, b: usize, coin: u64) -> usize {
        let p = self.first_wins(lo, a, b);
        std::hint::select_unpredictable(bernoulli_word(coin, p), a, b)
    }

    /// P(the first sample wins) for the levels `a`, `b` above the lowest load `lo` (loads
    /// `lo + a`, `lo + b`): by their difference once the smaller load is at `exact_from` or
    /// above, else the probability of the pair of loads, kept once computed.
    pub(super) fn first_wins(&mut self, lo: u64, a: usize, b: usize) -> f64 {
        let (xa, xb) = (lo + a as u64, lo + b as u64);
        let low = xa.min(xb);
        let delta = a as i64 - b as i64;
        if low >= self.exact_from {
            return self.by_difference(delta);
        }
        if delta.abs() > TABLE_REACH {
            return self.pair_probability(xa, xb);
        }
        let width = 2 * TABLE_REACH as usize + 1;
        let cell = low as usize * width + (delta + TABLE_REACH) as usize;
        if cell >= self.near.len() {
            self.near.resize((low as usize + 1) * width, f64::NAN);
        }
        if self.near[cell].is_nan() {
            self.near[cell] = self.pair_probability(xa, xb);
        }
        self.near[cell]
    }

    /// P(T_a <= T_b), T_x = trunc(x + σZ) towards zero, on the noise's support: the first
    /// sample wins ties. Out of line: once per pair of loads, from the laws of `T_a` and
    /// `T_b`, which are kept by load unless the reach is large.
    #[cold]
    #[inline(never)]
    fn pair_probability(&mut self, xa: u64, xb: u64) -> f64 {
        let t = self.tails.as_ref().expect("only truncated noise has an early phase");
        if t.reach() > KEPT_REACH {
            return TruncLaw::new(t, xa).first_wins(&TruncLaw::new(t, xb), xa, xb);
        }
        let top = xa.max(xb) as usize;
        if self.laws.len() <= top {
            self.laws.resize_with(top + 1, TruncLaw::default);
        }
        for x in [xa, xb] {
            if self.laws[x as usize].pmf.is_empty() {
                self.laws[x as usize] = TruncLaw::new(t, x);
            }
        }
        self.laws[xa as usize].first_wins(&self.laws[xb as usize], xa, xb)
    }

    /// The first sample's level if the coin word says it wins, else the second's.
    #[inline(always)]
    pub(super) fn choose(&self, a: usize, b: usize, coin: u64) -> usize {
        let p = self.by_difference(a as i64 - b as i64);
        std::hint::select_unpredictable(bernoulli_word(coin, p), a, b)
    }

    /// P(the first sample wins) by the level difference `delta` alone (from `exact_from`
    /// on): the table, or computed beyond its reach.
    #[inline(always)]
    fn by_difference(&self, delta: i64) -> f64 {
        match self.p.get((delta + TABLE_REACH) as usize) {
            Some(&p) => p,
            None => self.compute(delta),
        }
    }

    /// P(the first sample wins) when its load exceeds the second's by `delta`; ties after
    /// truncation go to the first sample.
    fn compute(&self, delta: i64) -> f64 {
        if self.sigma == 0.0 {
            return if delta <= 0 { 1.0 } else { 0.0 };
        }
        // The difference D of the two noises is symmetric, so P(D >= δ) for δ <= 0 is
        // 1 − P(D >= 1 − δ) (truncated, D integer) or 1 − P(D > −δ) (continuous): the small
        // tail is summed, the large one taken as its complement.
        match &self.tails {
            None => 0.5 * erfc(delta as f64 / (2.0 * self.sigma)),
            Some(t) if delta >= 1 => upper_tail(t, delta),
            Some(t) => 1.0 - upper_tail(t, 1 - delta),
        }
    }
}

/// The largest noise reach whose laws of `T_x` are kept by load (σ up to about 100: at most
/// `2·(exact_from + TABLE_REACH)·(2·reach + 3)` doubles, 38 MB); beyond it each pair of loads
/// computes them again.
const KEPT_REACH: i64 = 1024;

/// The law of `T_x = trunc(x + σZ)` for one load `x`, on the values
/// `x − reach − 1 ..= x + reach + 1` ([`NormalIntervals::pmf`]).
#[derive(Clone, Default)]
struct TruncLaw {
    /// P(T_x = x − reach − 1 + i).
    pmf: Vec<f64>,
    /// P(T_x >= x − reach − 1 + i): suffix sums of `pmf`.
    at_least: Vec<f64>,
}

impl TruncLaw {
    fn new(t: &NormalIntervals, x: u64) -> Self {
        let mut pmf = Vec::new();
        t.pmf(x as i64, &mut pmf);
        let mut at_least = pmf.clone();
        for i in (0..at_least.len().saturating_sub(1)).rev() {
            at_least[i] += at_least[i + 1];
        }
        Self { pmf, at_least }
    }

    /// P(T_a <= T_b) = Σ_u P(T_a = u)·P(T_b >= u) for `self` the law at load `xa` and `b`
    /// the one at `xb` (same support width, offset by `xa − xb`).
    fn first_wins(&self, b: &TruncLaw, xa: u64, xb: u64) -> f64 {
        let offset = xa as i64 - xb as i64;
        let survival = |i: usize| -> f64 {
            // The value of T_a's entry i is b's entry i + offset.
            let k = i as i64 + offset;
            if k < 0 {
                1.0
            } else {
                b.at_least.get(k as usize).copied().unwrap_or(0.0)
            }
        };
        self.pmf.iter().enumerate().map(|(i, &p)| p * survival(i)).sum()
    }
}

/// P(⌊σZ₂⌋ − ⌊σZ₁⌋ >= k) for `k >= 1` over the noise's support: Σᵢ P(⌊σZ₁⌋ = i)·P(σZ₂ >= i + k).
fn upper_tail(t: &NormalIntervals, k: i64) -> f64 {
    let reach = t.reach();
    (-reach - 1..=reach).map(|i| t.interval(i, i + 1) * t.at_least(i + k)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table against a direct Monte-Carlo-free check: for truncation, P(D >= δ) summed
    /// over the full pmf of D (both noises on their support), without the symmetry trick.
    #[test]
    fn noise_table_matches_the_convolution() {
        for sigma in [0.3, 1.0, 2.5, 7.0] {
            let table = NoiseTable::new(sigma, true);
            let t = table.tails.as_ref().expect("truncation");
            let reach = t.reach();
            let f: Vec<f64> = (-reach - 1..=reach).map(|i| t.interval(i, i + 1)).collect();
            for delta in -12i64..=12 {
                let mut direct = 0.0;
                for (x, &fx) in f.iter().enumerate() {
                    for (y, &fy) in f.iter().enumerate() {
                        // D = second − first noise.
                        if y as i64 - x as i64 >= delta {
                            direct += fx * fy;
                        }
                    }
                }
                let got = table.compute(delta);
                assert!(
                    (got - direct).abs() < 1e-12,
                    "σ = {sigma}, δ = {delta}: {got} vs {direct}"
                );
            }
            // Equal loads: the first sample wins the ties, so more than half the time.
            assert!(table.compute(0) > 0.5);
            // Continuous noise: symmetric around δ = 0.
            let plain = NoiseTable::new(sigma, false);
            assert!((plain.compute(0) - 0.5).abs() < 1e-15);
            assert!((plain.compute(3) + plain.compute(-3) - 1.0).abs() < 1e-15);
        }
        let exact = NoiseTable::new(0.0, true);
        assert_eq!((exact.compute(0), exact.compute(1), exact.compute(-1)), (1.0, 0.0, 1.0));
    }

    /// Seeded two-sample chi-square (α = `ballast_testkit::ALPHA` = 0.001 per comparison,
    /// 20 000 runs a side, seeds 7200 + case for the level loop and 7300 + case for the bin
    /// engine): the whole state after 10 balls on 4 bins (sorted loads and samples) from the
    /// block loop ([`super::super::sequential::pair_balls`]) against the bin engine, whose
    /// rule draws the g-Myopic coin and the normals of σ-Noisy-Load itself. Truncated
    /// σ-Noisy-Load starts at load 12, past its `exact_from` (7 for σ = 0.4). Then the
    /// engine's route from load 0, where truncated σ-Noisy-Load uses the pairs'
    /// probabilities until the lowest load reaches `exact_from` (4 for σ = 0.1) and the
    /// differences after, within 30 balls on 3 bins, and one ball of the block loop from
    /// loads {0, 1} at σ = 0.5 (seeds 7260 / 7360), where the pair of loads decides.
    /// Measured: χ² = 13.6, 10.1, 10.4, 19.0, 8.2, 2.2 and 4.8 against critical values
    /// 10.8–36.1. Power: the bugs one would make (g one too small,
    /// the noise difference's variance taken as σ² instead of 2σ², the truncation ignored,
    /// the table by difference used near load 0) give χ² = 12 306, 4 543, 2 905, 281, 205
    /// and 156, and the test asserts that each is rejected. (The last bug is weak on whole
    /// runs: 3 balls from {0, 1} give 13.2 against 13.8, since only the first decisions
    /// near load 0 differ.)
    #[test]
    fn pair_loop_has_the_law_of_the_bin_engine() {
        use super::super::law_test::{chi2, on_bins, on_levels, runs_of};
        use super::super::sequential::pair_balls;
        use crate::histogram::LevelLoads;
        use crate::{Engine, ProcessSpec, RunSpec};
        const M: u64 = 10;
        const RUNS: u64 = 20_000;
        let empty = LevelLoads::new(4);
        let high = LevelLoads::from_counts(12, &[4]);
        let noisy = |sigma, truncate| PairLaw::Noisy(NoiseTable::new(sigma, truncate));
        let cases = [
            (ProcessSpec::GBounded { g: 1.0 }, &empty, PairLaw::GBounded { g: 0 }),
            (ProcessSpec::GMyopic { g: 1.0 }, &empty, PairLaw::GMyopic { g: 0 }),
            (ProcessSpec::GMyopic { g: 2.5 }, &empty, PairLaw::GMyopic { g: 1 }),
            (
                ProcessSpec::SigmaNoisyLoad { sigma: 1.0, truncate: false },
                &empty,
                noisy(1.0 / std::f64::consts::SQRT_2, false),
            ),
            (ProcessSpec::SigmaNoisyLoad { sigma: 0.4, truncate: true }, &high, noisy(0.4, false)),
        ];
        for (case, (process, start, wrong)) in cases.into_iter().enumerate() {
            let rule = match process {
                ProcessSpec::GBounded { g } => Noisy::GBounded { g },
                ProcessSpec::GMyopic { g } => Noisy::GMyopic { g },
                ProcessSpec::SigmaNoisyLoad { sigma, truncate } => {
                    Noisy::SigmaNoisyLoad { sigma, truncate }
                }
                _ => unreachable!("pair rules only"),
            };
            let law = PairLaw::new(rule);
            if let PairLaw::Noisy(table) = &law {
                assert!(start.min_load() >= table.exact_from);
            }
            let seed = 7200 + case as u64;
            let levels = |law: &PairLaw| {
                on_levels(start, RUNS, seed, |st, index, rng| {
                    pair_balls(st, &mut law.clone(), M, index, rng);
                    2 * M
                })
            };
            let reference = on_bins(&process, start, M, RUNS, seed + 100);
            let (stat, crit) = chi2(&levels(&law), &reference);
            assert!(stat < crit, "{process:?}: chi2 = {stat:.1}, critical {crit:.1}");
            let (stat, crit) = chi2(&levels(&wrong), &reference);
            assert!(
                stat > crit,
                "{process:?}, wrong {wrong:?}: chi2 = {stat:.1}, critical {crit:.1}"
            );
        }
        // Near load 0 the truncated noise's decision depends on the loads, not only on
        // their difference: one ball of the block loop from loads {0, 1} against the bin
        // engine, and the table by difference used there instead (the bug) rejected.
        let process = ProcessSpec::SigmaNoisyLoad { sigma: 0.5, truncate: true };
        let near = LevelLoads::from_counts(0, &[1, 1]);
        const EARLY_BALLS: u64 = 1;
        let early = |law: &PairLaw| {
            on_levels(&near, RUNS, 7260, |st, index, rng| {
                pair_balls(st, &mut law.clone(), EARLY_BALLS, index, rng);
                2 * EARLY_BALLS
            })
        };
        let right = PairLaw::new(Noisy::SigmaNoisyLoad { sigma: 0.5, truncate: true });
        let reference = on_bins(&process, &near, EARLY_BALLS, RUNS, 7360);
        let (stat, crit) = chi2(&early(&right), &reference);
        assert!(stat < crit, "early phase: chi2 = {stat:.1}, critical {crit:.1}");
        let PairLaw::Noisy(mut table) = right else { unreachable!("noise") };
        table.exact_from = 0;
        let (stat, crit) = chi2(&early(&PairLaw::Noisy(table)), &reference);
        assert!(stat > crit, "early phase by difference: chi2 = {stat:.1}, critical {crit:.1}");
        let spec = RunSpec::new(ProcessSpec::SigmaNoisyLoad { sigma: 0.1, truncate: true }, 3, 30);
        assert_eq!(NoiseTable::new(0.1, true).exact_from, 4);
        let (stat, crit) = chi2(
            &runs_of(&spec.clone().engine(Engine::Levels), RUNS, 7250),
            &runs_of(&spec.engine(Engine::Bins), RUNS, 7350),
        );
        assert!(stat < crit, "engine route: chi2 = {stat:.1}, critical {crit:.1}");
    }
}
