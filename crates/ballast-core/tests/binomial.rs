//! `ballast_core::binomial::binomial` against the binomial probability function.
//!
//! - Goodness of fit: for 17 parameter pairs covering inversion (`np < 10`), BTRS
//!   (`np >= 10`), the boundary between them (np = 9.5, 9.9, 10, 10.2), reflection (p > 1/2)
//!   and huge n (up to 2⁴⁰), 200 000 draws each, Pearson's chi-square against the exact
//!   probabilities (by the ratio recurrence outward from the mode and normalised over ±12
//!   standard deviations, so no log-gamma cancellation at large n), cells merged until each
//!   expects at least 5.
//! - Agreement with `rand_distr::Binomial` (an independent implementation: BTPE and
//!   inversion): two-sample chi-square at 5 pairs.
//! - Power: the same goodness-of-fit test rejects Binomial(1000, 0.0205) draws as
//!   Binomial(1000, 0.02), a 2.5 % shift of the mean (about 1.1 standard deviations of a
//!   draw), and inversion draws with p off by 5 %.
//!
//! Significance: `common::ALPHA` = 0.001 per test, seeds fixed (`SEED` and the case index);
//! with other seeds the chance of a false alarm among these 22 tests would be about 2 %.
//! Power: see `power_check_a_small_shift_is_rejected`, which asserts rejections at 5 and 10
//! times the critical value.

mod common;

use ballast_core::binomial::binomial;
use ballast_core::{derive_seed, sim_rng};
use common::{chi2_critical, chi2_two_sample};
use rand_distr::Distribution;

/// Draws per test.
const DRAWS: u64 = 200_000;
/// Master seed.
const SEED: u64 = 0xB170_2026;

/// Binomial(n, p) probabilities of the values `lo..=hi` (mean ± 12 standard deviations, the
/// rest has mass below 10⁻³⁰): P(k)/P(k − 1) = (n − k + 1)/k · p/q from the mode outward,
/// normalised to sum 1.
fn probabilities(n: u64, p: f64) -> (u64, Vec<f64>) {
    let mean = n as f64 * p;
    let sd = (mean * (1.0 - p)).sqrt().max(1.0);
    let lo = (mean - 12.0 * sd).floor().max(0.0) as u64;
    let hi = ((mean + 12.0 * sd).ceil() as u64).min(n);
    let mode = (((n as f64 + 1.0) * p).floor() as u64).clamp(lo, hi);
    let r = p / (1.0 - p);
    let mut w = vec![0.0; (hi - lo + 1) as usize];
    w[(mode - lo) as usize] = 1.0;
    for k in mode + 1..=hi {
        w[(k - lo) as usize] = w[(k - 1 - lo) as usize] * (n - k + 1) as f64 / k as f64 * r;
    }
    for k in (lo..mode).rev() {
        // P(k) = P(k + 1) · (k + 1)/(n − k) · q/p
        w[(k - lo) as usize] = w[(k + 1 - lo) as usize] * (k + 1) as f64 / (n - k) as f64 / r;
    }
    let total: f64 = w.iter().sum();
    (lo, w.into_iter().map(|x| x / total).collect())
}

/// Pearson's statistic of `draws` against Binomial(n, p), over cells of consecutive values
/// merged until each expects at least 5 (values outside the window of [`probabilities`]
/// fall into the end cells). Returns (statistic, degrees of freedom).
fn gof(draws: &[u64], n: u64, p: f64) -> (f64, usize) {
    let (lo, probs) = probabilities(n, p);
    let total = draws.len() as f64;
    // Cells: (last value, expected count).
    let mut cells: Vec<(u64, f64)> = Vec::new();
    let mut mass = 0.0;
    for (i, &q) in probs.iter().enumerate() {
        mass += q;
        if mass * total >= 5.0 {
            cells.push((lo + i as u64, mass * total));
            mass = 0.0;
        }
    }
    let last = cells.last_mut().expect("at least one cell");
    last.0 = n;
    last.1 += mass * total;
    let mut observed = vec![0u64; cells.len()];
    for &x in draws {
        observed[cells.partition_point(|c| c.0 < x)] += 1;
    }
    let stat = cells.iter().zip(&observed).map(|(c, &o)| (o as f64 - c.1).powi(2) / c.1).sum();
    (stat, cells.len() - 1)
}

fn draws(n: u64, p: f64, case: u64) -> Vec<u64> {
    let mut rng = sim_rng(derive_seed(SEED, &[case]));
    (0..DRAWS).map(|_| binomial(&mut rng, n, p)).collect()
}

#[test]
fn draws_follow_the_binomial_law() {
    let cases: [(u64, f64); 17] = [
        (5, 0.3),
        (40, 0.01),
        (19, 0.5),
        (30, 0.33),
        (20, 0.5),
        (31, 0.33),
        (100, 0.1),
        (1000, 0.02),
        (1000, 0.5),
        (50, 0.9),
        (12, 0.999),
        (10_000_000, 5e-7),
        (1_000_000, 1e-4),
        (1_000_000_000, 0.3),
        (1 << 40, 0.5),
        (1 << 40, 1e-11),
        (200, 0.97),
    ];
    let mut failures = Vec::new();
    for (case, &(n, p)) in cases.iter().enumerate() {
        let d = draws(n, p, case as u64);
        assert!(d.iter().all(|&x| x <= n));
        let (stat, df) = gof(&d, n, p);
        let crit = chi2_critical(df.max(1));
        eprintln!("Binomial({n}, {p}): chi2 {stat:.1} (df {df}, critical {crit:.1})");
        if stat > crit {
            failures.push(format!("Binomial({n}, {p}): {stat:.1} > {crit:.1}"));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn draws_agree_with_rand_distr() {
    for (case, &(n, p)) in
        [(8u64, 0.4), (100, 0.15), (5000, 0.01), (3000, 0.6), (1 << 30, 0.25)].iter().enumerate()
    {
        let ours = draws(n, p, 100 + case as u64);
        let mut rng = sim_rng(derive_seed(SEED, &[200 + case as u64]));
        let other = rand_distr::Binomial::new(n, p).expect("valid");
        let theirs: Vec<u64> = (0..DRAWS).map(|_| other.sample(&mut rng)).collect();
        let lo = *ours.iter().chain(&theirs).min().expect("draws");
        let hi = *ours.iter().chain(&theirs).max().expect("draws");
        let hist = |v: &[u64]| {
            let mut h = vec![0u64; (hi - lo + 1) as usize];
            for &x in v {
                h[(x - lo) as usize] += 1;
            }
            h
        };
        let (stat, df) = chi2_two_sample(&hist(&ours), &hist(&theirs));
        assert!(stat <= chi2_critical(df), "Binomial({n}, {p}): chi2 {stat:.1} (df {df})");
    }
}

#[test]
fn power_check_a_small_shift_is_rejected() {
    // BTRS: draws of Binomial(1000, 0.0205) tested as Binomial(1000, 0.02).
    let d = draws(1000, 0.0205, 300);
    let (stat, df) = gof(&d, 1000, 0.02);
    assert!(stat > 10.0 * chi2_critical(df), "chi2 {stat:.1} (df {df})");
    // Inversion: Binomial(40, 0.105) tested as Binomial(40, 0.1).
    let d = draws(40, 0.105, 301);
    let (stat, df) = gof(&d, 40, 0.1);
    assert!(stat > 5.0 * chi2_critical(df), "chi2 {stat:.1} (df {df})");
}

#[test]
fn degenerate_parameters() {
    let mut rng = sim_rng(1);
    assert_eq!(binomial(&mut rng, 0, 0.5), 0);
    assert_eq!(binomial(&mut rng, 10, 0.0), 0);
    assert_eq!(binomial(&mut rng, 10, 1.0), 10);
    assert_eq!(binomial(&mut rng, u64::MAX, 1.0), u64::MAX);
    for _ in 0..1000 {
        assert!(binomial(&mut rng, 1, 0.5) <= 1);
        assert!(binomial(&mut rng, 3, 1e-300) == 0);
    }
    assert_eq!(binomial(&mut rng, 10, -0.5), 0);
    assert_eq!(binomial(&mut rng, 10, 1.5), 10);
    let nan = std::panic::catch_unwind(|| binomial(&mut sim_rng(2), 10, f64::NAN));
    assert!(nan.is_err(), "NaN must panic, not loop");
}
