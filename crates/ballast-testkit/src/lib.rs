//! # ballast-testkit
//!
//! Helpers of the seeded statistical tests in the ballast crates: chi-square statistics and
//! critical values at one named significance level. A dev-dependency only; one copy for
//! every crate's tests.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

use statrs::distribution::{ChiSquared, ContinuousCDF};

/// Significance level of every goodness-of-fit test of the ballast crates. With about 20 such tests
/// per `cargo test`, the chance of any false alarm with fixed seeds is zero once they pass
/// (the seeds are fixed), and at most 2 % if the seeds were changed.
pub const ALPHA: f64 = 0.001;

/// Critical value of the chi-square distribution with `df` degrees of freedom at [`ALPHA`].
pub fn chi2_critical(df: usize) -> f64 {
    ChiSquared::new(df as f64).expect("df > 0").inverse_cdf(1.0 - ALPHA)
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

/// Two-sample chi-square homogeneity test on two histograms over the same categories.
/// Categories whose pooled count is below 10 are merged into their neighbour so every
/// expected count is at least 5. Returns (statistic, degrees of freedom).
pub fn chi2_two_sample(a: &[u64], b: &[u64]) -> (f64, usize) {
    assert_eq!(a.len(), b.len());
    // Merge sparse categories left to right.
    let mut cats: Vec<(u64, u64)> = Vec::new();
    let mut acc = (0u64, 0u64);
    for (&x, &y) in a.iter().zip(b) {
        acc.0 += x;
        acc.1 += y;
        if acc.0 + acc.1 >= 10 {
            cats.push(acc);
            acc = (0, 0);
        }
    }
    if acc.0 + acc.1 > 0 {
        if let Some(last) = cats.last_mut() {
            last.0 += acc.0;
            last.1 += acc.1;
        } else {
            cats.push(acc);
        }
    }
    let na: u64 = cats.iter().map(|c| c.0).sum();
    let nb: u64 = cats.iter().map(|c| c.1).sum();
    let total = (na + nb) as f64;
    let mut stat = 0.0;
    for &(x, y) in &cats {
        let pooled = (x + y) as f64;
        let ea = pooled * na as f64 / total;
        let eb = pooled * nb as f64 / total;
        stat += (x as f64 - ea).powi(2) / ea + (y as f64 - eb).powi(2) / eb;
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
