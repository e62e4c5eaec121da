//! Tests of `chi2_two_sample` itself: its rejection rate when both samples come from the same
//! law with a long sparse tail, for samples of equal and of unequal size; its power against
//! a law whose dense part differs; and that the calibration check would catch the
//! left-to-right merging the function used before (kept here as `merge_until_10`).
//!
//! Samples come from a self-contained SplitMix64 stream with fixed seeds, so every run sees
//! the same numbers. The law: with probability 0.8 a geometric value with success
//! probability 0.05 (the dense body: mean 19), else one with success probability 0.002 (the
//! tail: mean 499, spread over a few thousand categories with a count or two each). With
//! 3000 + 3000 draws about 55 categories have pooled counts of 20 or more and several hundred
//! are sparser, the shape the merging rule is for.

use ballast_testkit::{chi2_critical_at, chi2_two_sample, histogram, MIN_EXPECTED};

/// SplitMix64 as a stream: the state advances by the golden gamma, the output is mixed.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in (0, 1] with 53 bits.
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// Geometric on {0, 1, …} with success probability `p`, by inversion.
    fn geometric(&mut self, p: f64) -> i64 {
        (self.unit().ln() / (1.0 - p).ln()).floor() as i64
    }

    /// The test law with body success probability `body`.
    fn draw(&mut self, body: f64) -> i64 {
        if self.unit() < 0.8 {
            self.geometric(body)
        } else {
            self.geometric(0.002)
        }
    }
}

/// Body success probability of the null law.
const BODY: f64 = 0.05;
/// Histogram length: values from 4000 on (probability 0.2 · 0.998^4000 ≈ 7e-5 per draw)
/// share the last category, in both samples alike.
const CATEGORIES: usize = 4000;

type TwoSample = fn(&[u64], &[u64]) -> (f64, usize);

/// Rejections at significance `alpha` among `reps` comparisons of `size_a` draws with body
/// `BODY` against `size_b` draws with body `body_b`, from stream `seed`; and the largest
/// number of degrees of freedom seen.
fn rejections(
    test: TwoSample,
    (size_a, size_b): (usize, usize),
    body_b: f64,
    seed: u64,
    reps: usize,
    alpha: f64,
) -> (usize, usize) {
    let mut rng = SplitMix(seed);
    let (mut rejected, mut max_df) = (0, 0);
    for _ in 0..reps {
        let a = histogram((0..size_a).map(|_| rng.draw(BODY)), 0, CATEGORIES);
        let b = histogram((0..size_b).map(|_| rng.draw(body_b)), 0, CATEGORIES);
        let (stat, df) = test(&a, &b);
        max_df = max_df.max(df);
        rejected += usize::from(stat > chi2_critical_at(df, alpha));
    }
    (rejected, max_df)
}

/// The acceptance range of the calibration checks: 1000 comparisons of equal laws at
/// α = 0.01, so the number of rejections is Binomial(1000, 0.01) for a test of the right
/// size (mean 10, sd 3.1). A correct test falls outside 3..=20 with probability about
/// 0.4 % (P(X ≤ 2) ≈ 0.27 %, P(X ≥ 21) ≈ 0.16 %); a test whose real size is 3 % lands
/// inside with probability below 3 %. (At 200 repetitions a size of 3 % would pass one
/// time in four, hence 1000.) Over seeds 100..=107 (8000 comparisons each) the current rule
/// rejected 82 (equal sizes) and 80 (sizes 1000 and 10 000) times: its size is 1.0 %.
const REPS: usize = 1000;
const ALPHA_TEST: f64 = 0.01;
const ACCEPT: std::ops::RangeInclusive<usize> = 3..=20;

/// Same law, 3000 draws each, seed 100: rejections in `ACCEPT` (8 with this seed). Also: the
/// sparse tail went into one category, so the degrees of freedom stay near the ~55 dense
/// categories (left-to-right merging to a pooled 10 gives up to 186 on these samples).
#[test]
fn same_law_is_rejected_at_the_nominal_rate() {
    let (rejected, max_df) = rejections(chi2_two_sample, (3000, 3000), BODY, 100, REPS, ALPHA_TEST);
    assert!(ACCEPT.contains(&rejected), "{rejected} of {REPS} rejected at alpha = 0.01");
    assert!(max_df < 90, "df {max_df}");
}

/// Same law, samples of 1000 and 10 000 draws, seed 100: rejections in `ACCEPT` (12). The
/// threshold scales with the smaller sample (a category needs 10 expected counts in each),
/// so the small sample never has cells with expected counts near 1.
#[test]
fn same_law_with_unequal_sizes_is_rejected_at_the_nominal_rate() {
    let (rejected, _) = rejections(chi2_two_sample, (1000, 10_000), BODY, 100, REPS, ALPHA_TEST);
    assert!(ACCEPT.contains(&rejected), "{rejected} of {REPS} rejected at alpha = 0.01");
}

/// Power: body success probability 0.035 (mean 27.6) against 0.05 (mean 19), 3000 draws
/// each, seed 3, α = 0.01, 200 repetitions. At least 190 must reject (observed: 199); a test
/// with power 0.9 would reach 190 with probability about 4 %.
#[test]
fn a_law_with_a_different_body_is_rejected() {
    let (rejected, _) = rejections(chi2_two_sample, (3000, 3000), 0.035, 3, 200, ALPHA_TEST);
    assert!(rejected >= 190, "only {rejected} of 200 rejected a different body");
}

/// The previous rule: merge neighbours left to right until the pooled count reaches 10,
/// the remainder into the last category.
fn merge_until_10(a: &[u64], b: &[u64]) -> (f64, usize) {
    let mut cats: Vec<(u64, u64)> = Vec::new();
    let mut acc = (0u64, 0u64);
    for (&x, &y) in a.iter().zip(b) {
        acc = (acc.0 + x, acc.1 + y);
        if acc.0 + acc.1 >= 10 {
            cats.push(acc);
            acc = (0, 0);
        }
    }
    if let Some(last) = cats.last_mut() {
        last.0 += acc.0;
        last.1 += acc.1;
    }
    let na: u64 = cats.iter().map(|c| c.0).sum();
    let nb: u64 = cats.iter().map(|c| c.1).sum();
    let total = (na + nb) as f64;
    let stat = cats
        .iter()
        .map(|&(x, y)| {
            let pooled = (x + y) as f64;
            let (ea, eb) = (pooled * na as f64 / total, pooled * nb as f64 / total);
            (x as f64 - ea).powi(2) / ea + (y as f64 - eb).powi(2) / eb
        })
        .sum();
    (stat, cats.len() - 1)
}

/// The calibration check has teeth: with samples of 300 and 30 000 draws, seed 5, the old
/// rule (expected counts near 0.1 in the small sample) rejects equal laws about 10 % of the
/// time at α = 0.01 (99 of 1000 with this seed), far outside `ACCEPT`; the current rule
/// stays inside it on the same samples (12).
#[test]
fn the_calibration_check_rejects_left_to_right_merging() {
    let sizes = (300, 30_000);
    let (old, _) = rejections(merge_until_10, sizes, BODY, 5, REPS, ALPHA_TEST);
    assert!(!ACCEPT.contains(&old), "old rule: {old} of {REPS}");
    let (new, _) = rejections(chi2_two_sample, sizes, BODY, 5, REPS, ALPHA_TEST);
    assert!(ACCEPT.contains(&new), "current rule: {new} of {REPS}");
}

/// The merging rule on small hand-made histograms.
#[test]
fn sparse_categories_are_lumped_into_one() {
    assert_eq!(MIN_EXPECTED, 10);
    // Equal sizes (48 and 47 → threshold: pooled c with 47c ≥ 950, c ≥ 21): categories 0
    // and 3 (pooled 40 and 30) stand alone; 1, 2, 4, 5 (pooled 8 + 9 + 2 + 6 = 25) form
    // the remainder, which stands alone too: 3 categories, df 2.
    let a = [20, 4, 5, 15, 1, 3];
    let b = [20, 4, 4, 15, 1, 3];
    let (stat, df) = chi2_two_sample(&a, &b);
    assert_eq!(df, 2);
    let cats = [(20.0, 20.0), (15.0, 15.0), (13.0, 12.0)];
    let (na, nb) = (48.0, 47.0);
    let want: f64 = cats
        .iter()
        .map(|&(x, y): &(f64, f64)| {
            let ea = (x + y) * na / (na + nb);
            let eb = (x + y) * nb / (na + nb);
            (x - ea).powi(2) / ea + (y - eb).powi(2) / eb
        })
        .sum();
    assert!((stat - want).abs() < 1e-12, "{stat} vs {want}");
    // A remainder too small to stand alone (pooled 5) joins the smallest category that
    // does (index 2, pooled 22): categories (30, 30) and (13, 14), df 1.
    let (_, df) = chi2_two_sample(&[30, 2, 11, 0], &[30, 3, 11, 0]);
    assert_eq!(df, 1);
    // Unequal sizes, 10 and 100 draws: a category needs 10 expected counts in the smaller
    // sample, pooled c with 10c ≥ 1100, c ≥ 110. Neither category (pooled 99 and 11)
    // stands alone, so everything is one category (statistic 0, df 1).
    let (stat, df) = chi2_two_sample(&[9, 1], &[90, 10]);
    assert_eq!((stat, df), (0.0, 1));
}
