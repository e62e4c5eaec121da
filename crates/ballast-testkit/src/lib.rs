//! # ballast-testkit
//!
//! Helpers of the seeded statistical tests in the ballast crates: chi-square statistics and
//! critical values at one named significance level; the module-layer check of every crate's
//! `tests/module_layers.rs` ([`layers`]); and config fixtures that the tests of several crates
//! share ([`fixtures`]). A dev-dependency only; one copy for every crate's tests.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod fixtures;
pub mod layers;

use statrs::distribution::{ChiSquared, ContinuousCDF};

/// Significance level of every goodness-of-fit test of the ballast crates. With about 20 such tests
/// per `cargo test`, the chance of any false alarm with fixed seeds is zero once they pass
/// (the seeds are fixed), and at most 2 % if the seeds were changed.
pub const ALPHA: f64 = 0.001;

/// Critical value of the chi-square distribution with `df` degrees of freedom at [`ALPHA`].
pub fn chi2_critical(df: usize) -> f64 {
    chi2_critical_at(df, ALPHA)
}

/// Critical value of the chi-square distribution with `df` degrees of freedom at
/// significance `alpha` (the `1 − alpha` quantile), for tests of the tests at other levels.
pub fn chi2_critical_at(df: usize, alpha: f64) -> f64 {
    ChiSquared::new(df as f64).expect("df > 0").inverse_cdf(1.0 - alpha)
}

/// Pearson's goodness-of-fit statistic of observed counts against expected probabilities.
/// Returns (statistic, degrees of freedom).
pub fn chi2_gof(observed: &[u64], probs: &[f64]) -> (f64, usize) {
    let total: u64 = observed.iter().sum();
    let mut stat = 0.0;
    for (&o, &p) in observed.iter().zip(probs) {
        let e = p * total as f64;
        assert!(e >= 5.0, "expected count {e} too small for chi-square");
        stat += (o as f64 - e).powi(2) / e;
    }
    (stat, observed.len() - 1)
}

/// Smallest expected count, in each of the two samples, of a category of
/// [`chi2_two_sample`] that stands on its own: with samples of equal size, a pooled count of
/// at least 20.
pub const MIN_EXPECTED: u64 = 10;

/// Two-sample chi-square homogeneity test on two histograms over the same categories.
/// Returns (statistic, degrees of freedom).
///
/// A category stands on its own when its expected count in each sample is at least
/// [`MIN_EXPECTED`] = 10 (pooled count `c` with `c · min(na, nb) ≥ 10 · (na + nb)`: `c ≥ 20`
/// for samples of equal size). All sparser categories, wherever they are, are lumped into
/// one remainder category, and a remainder that is itself too small is merged into the
/// smallest category that stands alone. The sparse tail then costs one degree of freedom
/// instead of hundreds.
///
/// Why not merge neighbours left to right until a run reaches a pooled count of 10, as this
/// function first did? Two reasons, both measured by the test of the test
/// (`tests/two_sample.rs`). Power: a long sparse tail became hundreds of categories that
/// carry almost no information but each add a degree of freedom, so a difference in the
/// dense body was diluted (a mixture law whose body had success probability 0.04 instead of
/// 0.05, 3000 draws a sample: 75 of 200 comparisons rejected at 0.01 with the old rule, 119
/// with the remainder category). Size: with samples of unequal size a pooled count of 10
/// leaves expected counts far below 5 in the smaller sample, where Pearson's statistic has
/// a heavier tail than its chi-square limit; at sizes 300 and 30 000 the old rule rejected
/// equal laws 46 times in 1000 at significance 0.001. On samples of equal size the old rule
/// kept its nominal size, so a two-sample test far above its critical value (an engine
/// compared with itself once gave χ² = 1325 on 864 degrees of freedom, critical value 998)
/// points to something else as well: observations that are not independent (the loads of
/// all bins of one run in one histogram, say) are not covered by any merging rule. The
/// remainder category compares only the total mass of the tail, not its shape.
pub fn chi2_two_sample(a: &[u64], b: &[u64]) -> (f64, usize) {
    assert_eq!(a.len(), b.len());
    let na: u64 = a.iter().sum();
    let nb: u64 = b.iter().sum();
    let (small, total) = (u128::from(na.min(nb)), u128::from(na + nb));
    let stands_alone =
        |pooled: u64| pooled > 0 && u128::from(pooled) * small >= u128::from(MIN_EXPECTED) * total;
    let mut cats: Vec<(u64, u64)> = Vec::new();
    let mut rest = (0u64, 0u64);
    for (&x, &y) in a.iter().zip(b) {
        if stands_alone(x + y) {
            cats.push((x, y));
        } else {
            rest.0 += x;
            rest.1 += y;
        }
    }
    let rest_pooled = rest.0 + rest.1;
    if stands_alone(rest_pooled) || (cats.is_empty() && rest_pooled > 0) {
        cats.push(rest);
    } else if rest_pooled > 0 {
        // The smallest category that stands alone absorbs the remainder (the first of equal
        // ones).
        let smallest = (0..cats.len()).min_by_key(|&i| cats[i].0 + cats[i].1).expect("non-empty");
        cats[smallest].0 += rest.0;
        cats[smallest].1 += rest.1;
    }
    let total = (na + nb) as f64;
    let mut stat = 0.0;
    for &(x, y) in &cats {
        let pooled = (x + y) as f64;
        let ea = pooled * na as f64 / total;
        let eb = pooled * nb as f64 / total;
        if ea > 0.0 {
            stat += (x as f64 - ea).powi(2) / ea;
        }
        if eb > 0.0 {
            stat += (y as f64 - eb).powi(2) / eb;
        }
    }
    (stat, cats.len().saturating_sub(1).max(1))
}

/// Histogram of integer values (shifted so the smallest possible value is `lo`).
pub fn histogram(values: impl IntoIterator<Item = i64>, lo: i64, len: usize) -> Vec<u64> {
    let mut h = vec![0u64; len];
    for v in values {
        let j = (v - lo).clamp(0, len as i64 - 1) as usize;
        h[j] += 1;
    }
    h
}

/// Exact law of the sorted loads after one batch of `b` balls from `loads`, each ball
/// independently at index `i` with probability `p[i]`: all `n^b` index sequences enumerated
/// (tiny cases only). Returns (sorted loads, probability) pairs in increasing order.
pub fn exact_batch_law(loads: &[u64], p: &[f64], b: u32) -> Vec<(Vec<u64>, f64)> {
    let n = loads.len();
    let mut law: std::collections::BTreeMap<Vec<u64>, f64> = Default::default();
    for t in 0..n.pow(b) {
        let (mut x, mut v, mut pr) = (t, loads.to_vec(), 1.0);
        for _ in 0..b {
            v[x % n] += 1;
            pr *= p[x % n];
            x /= n;
        }
        v.sort_unstable();
        *law.entry(v).or_insert(0.0) += pr;
    }
    law.into_iter().collect()
}
