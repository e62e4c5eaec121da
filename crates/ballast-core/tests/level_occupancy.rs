//! The occupancy sampler against exact laws (`docs/occupancy.md#tests`): the closed-form law
//! of the level histogram for small (k, c), under several tunings (the law must not depend
//! on them); the dynamic-programming law of the number of empty bins; means and variances at
//! scale (k, c up to 10⁸); a two-sample test against throwing balls one by one; and a power
//! check that the same test rejects a deliberately wrong "ignore collisions of the deficit"
//! variant.
//!
//! Significance: `common::ALPHA` = 0.001 per chi-square test; the moment z-tests use the
//! Bonferroni-corrected two-sided level 0.001 over all statistics of a test. Seeds are fixed.

mod common;

use std::collections::BTreeMap;

use ballast_core::level::occupancy::{OccupancyParams, OccupancySampler};
use ballast_core::rng::below;
use ballast_core::sim_rng;
use common::{chi2_critical, chi2_gof, chi2_two_sample, histogram, ALPHA};
use statrs::distribution::{ContinuousCDF, Normal};

fn ln_fact(x: u64) -> f64 {
    (2..=x).map(|i| (i as f64).ln()).sum()
}

/// Every level histogram of k balls in c bins with its exact probability
/// P(N = x) = c!/Π x_j! · k!/Π (j!)^{x_j} · c^{−k}.
fn exact_law(k: u64, c: u64) -> BTreeMap<Vec<u64>, f64> {
    fn partitions(
        k: u64,
        max_part: u64,
        parts_left: u64,
        cur: &mut Vec<u64>,
        out: &mut Vec<Vec<u64>>,
    ) {
        if k == 0 {
            out.push(cur.clone());
            return;
        }
        if parts_left == 0 {
            return;
        }
        for p in (1..=max_part.min(k)).rev() {
            cur.push(p);
            partitions(k - p, p, parts_left - 1, cur, out);
            cur.pop();
        }
    }
    let mut parts = Vec::new();
    partitions(k, k, c, &mut Vec::new(), &mut parts);
    let mut law = BTreeMap::new();
    for p in parts {
        let mut h = vec![0u64; k as usize + 1];
        h[0] = c - p.len() as u64;
        for &x in &p {
            h[x as usize] += 1;
        }
        let mut lp = ln_fact(c) + ln_fact(k) - k as f64 * (c as f64).ln();
        for (j, &x) in h.iter().enumerate() {
            lp -= ln_fact(x) + x as f64 * ln_fact(j as u64);
        }
        while h.last() == Some(&0) {
            h.pop();
        }
        law.insert(h, lp.exp());
    }
    law
}

/// One-sample chi-square of sampled histograms against an exact law; categories with
/// expected count below 5 are pooled (most likely first, the tail pooled into one).
fn gof_against(law: &BTreeMap<Vec<u64>, f64>, samples: &[Vec<u64>]) -> (f64, usize, f64) {
    let mut cats: Vec<(&Vec<u64>, f64)> = law.iter().map(|(h, &p)| (h, p)).collect();
    cats.sort_by(|a, b| b.1.total_cmp(&a.1));
    let r = samples.len() as f64;
    let keep = cats.iter().take_while(|c| c.1 * r >= 5.0).count();
    let mut counts: BTreeMap<&Vec<u64>, u64> = BTreeMap::new();
    for s in samples {
        *counts.entry(law.get_key_value(s).expect("possible histogram").0).or_insert(0) += 1;
    }
    let mut obs: Vec<u64> =
        cats[..keep].iter().map(|c| counts.get(c.0).copied().unwrap_or(0)).collect();
    let mut probs: Vec<f64> = cats[..keep].iter().map(|c| c.1).collect();
    let rest_p: f64 = cats[keep..].iter().map(|c| c.1).sum();
    let rest_o: u64 = cats[keep..].iter().map(|c| counts.get(c.0).copied().unwrap_or(0)).sum();
    if rest_p * r >= 5.0 {
        obs.push(rest_o);
        probs.push(rest_p);
    } else {
        *obs.last_mut().expect("a category") += rest_o;
        *probs.last_mut().expect("a category") += rest_p;
    }
    let (stat, df) = chi2_gof(&obs, &probs);
    (stat, df, chi2_critical(df))
}

fn tunings() -> Vec<(&'static str, OccupancyParams)> {
    let d = OccupancyParams::default();
    vec![
        ("default", d),
        // Method P all the way down: no naive base case beyond λ < 0.5, no per-bin method.
        ("deep recursion", OccupancyParams { naive_max: 0, direct_max: 1, direct_span: 0.0, ..d }),
        // Many rejections (acceptance ≈ Φ(0.2)) and a tiny window (lower block, upper tail).
        (
            "rejections + narrow window",
            OccupancyParams {
                naive_max: 1,
                direct_max: 1,
                direct_span: 0.0,
                alpha: 0.2,
                window_sd: 1.0,
            },
        ),
        ("per-bin binomials", OccupancyParams { direct_max: 1 << 40, ..d }),
        (
            "naive throws",
            OccupancyParams { naive_max: 1 << 40, direct_max: 1, direct_span: 0.0, ..d },
        ),
    ]
}

#[test]
fn small_cases_follow_the_exact_occupancy_law_under_every_tuning() {
    let reps = 20_000;
    for (i, &(k, c)) in [(10u64, 4u64), (7, 6), (20, 5), (12, 12), (30, 3), (1, 9), (0, 3), (5, 1)]
        .iter()
        .enumerate()
    {
        let law = exact_law(k, c);
        assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-9, "({k}, {c})");
        for (t, (name, params)) in tunings().into_iter().enumerate() {
            let mut occ = OccupancySampler::new(params);
            let mut rng = sim_rng(100 * i as u64 + t as u64);
            let samples: Vec<Vec<u64>> = (0..reps).map(|_| occ.sample(k, c, &mut rng)).collect();
            if law.len() == 1 {
                assert!(samples.iter().all(|s| law.contains_key(s)), "({k}, {c}) {name}");
                continue;
            }
            let (stat, df, crit) = gof_against(&law, &samples);
            assert!(
                stat < crit,
                "({k}, {c}) {name}: chi2 = {stat:.1}, df = {df}, crit = {crit:.1}"
            );
        }
    }
}

/// Exact law of the number of empty bins after k balls in c bins: the number of occupied
/// bins is a Markov chain (o → o + 1 with probability (c − o)/c).
fn empty_bins_law(k: u64, c: u64) -> Vec<f64> {
    let mut p = vec![0.0; c as usize + 1];
    p[0] = 1.0;
    for _ in 0..k {
        let mut q = vec![0.0; c as usize + 1];
        for o in 0..=c as usize {
            if p[o] == 0.0 {
                continue;
            }
            let up = (c as f64 - o as f64) / c as f64;
            q[o] += p[o] * (1.0 - up);
            if o < c as usize {
                q[o + 1] += p[o] * up;
            }
        }
        p = q;
    }
    // Index by empty bins = c − occupied.
    p.reverse();
    p
}

#[test]
fn empty_bins_follow_the_dynamic_programming_law() {
    for (i, &(k, c)) in [(1000u64, 1000u64), (5000, 1000), (200, 50)].iter().enumerate() {
        let law = empty_bins_law(k, c);
        let mut occ = OccupancySampler::new(OccupancyParams::default());
        let mut rng = sim_rng(500 + i as u64);
        let reps = 20_000;
        let mut obs = vec![0u64; c as usize + 1];
        for _ in 0..reps {
            obs[occ.sample(k, c, &mut rng)[0] as usize] += 1;
        }
        let (mut o, mut p) = (Vec::new(), Vec::new());
        let (mut oa, mut pa) = (0u64, 0.0);
        for (x, q) in obs.iter().zip(&law) {
            oa += x;
            pa += q;
            if pa * reps as f64 >= 5.0 {
                o.push(oa);
                p.push(pa);
                oa = 0;
                pa = 0.0;
            }
        }
        *o.last_mut().expect("categories") += oa;
        *p.last_mut().expect("categories") += pa;
        let (stat, df) = chi2_gof(&o, &p);
        assert!(stat < chi2_critical(df), "({k}, {c}): chi2 = {stat:.1}, df = {df}");
    }
}

/// E[N_j], E[N_j(N_j − 1)] from the closed forms (`docs/occupancy.md#exact-law-and-moments`),
/// in logarithms.
fn moments(k: u64, c: u64, j: u64) -> (f64, f64) {
    let (kf, cf) = (k as f64, c as f64);
    let falling = |r: u64| -> f64 { (0..r).map(|i| (kf - i as f64).ln()).sum() };
    let mean = (cf.ln() + falling(j) - ln_fact(j) - j as f64 * cf.ln()
        + (kf - j as f64) * (-1.0 / cf).ln_1p())
    .exp();
    let second = if 2 * j > k {
        0.0
    } else {
        (cf.ln() + (cf - 1.0).ln() + falling(2 * j) - 2.0 * ln_fact(j) - 2.0 * j as f64 * cf.ln()
            + (kf - 2.0 * j as f64) * (-2.0 / cf).ln_1p())
        .exp()
    };
    (mean, second + mean - mean * mean)
}

#[test]
fn means_and_variances_at_scale() {
    // (k, c, replicates, levels tested). In the sparse case the variance of N_0 is far below
    // the rounding error of the closed form, so only N_1 and N_2 are tested there.
    let cases: [(u64, u64, u64, [u64; 3]); 4] = [
        (1_000_000, 1_000_000, 300, [0, 1, 2]),
        (100_000_000, 100_000_000, 60, [0, 1, 2]),
        (50_000_000, 1_000_000, 200, [49, 50, 51]),
        (100_000, 100_000_000, 400, [1, 2, 1]),
    ];
    let stats_per_case = 3 * 2;
    let z = Normal::new(0.0, 1.0)
        .expect("standard normal")
        .inverse_cdf(1.0 - ALPHA / (2.0 * (stats_per_case * cases.len()) as f64));
    for (i, &(k, c, reps, levels)) in cases.iter().enumerate() {
        let mut occ = OccupancySampler::new(OccupancyParams::default());
        let mut rng = sim_rng(900 + i as u64);
        let mut samples = vec![Vec::new(); levels.len()];
        for _ in 0..reps {
            let h = occ.sample(k, c, &mut rng);
            assert_eq!(h.iter().sum::<u64>(), c);
            assert_eq!(h.iter().enumerate().map(|(j, &x)| j as u64 * x).sum::<u64>(), k);
            for (s, &j) in samples.iter_mut().zip(&levels) {
                s.push(h.get(j as usize).copied().unwrap_or(0) as f64);
            }
        }
        for (s, &j) in samples.iter().zip(&levels) {
            let (mean, var) = moments(k, c, j);
            let r = reps as f64;
            let m = s.iter().sum::<f64>() / r;
            let v = s.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (r - 1.0);
            let zm = (m - mean) / (var / r).sqrt();
            assert!(zm.abs() < z, "({k}, {c}) N_{j}: mean {m} vs {mean} (z = {zm:.2})");
            // Sample variance: (r − 1)s²/σ² is about χ²(r − 1), i.e. normal with sd √(2/r).
            let zv = (v / var - 1.0) / (2.0 / r).sqrt();
            assert!(zv.abs() < z, "({k}, {c}) N_{j}: var {v} vs {var} (z = {zv:.2})");
        }
        let per_call = occ.stats.binomials as f64 / reps as f64;
        assert!(per_call < 2000.0, "({k}, {c}): {per_call} binomials per call");
    }
}

/// Ball-by-ball reference: throw k balls into c bins.
fn throw(k: u64, c: u64, rng: &mut ballast_core::SimRng) -> Vec<u64> {
    let mut loads = vec![0u64; c as usize];
    for _ in 0..k {
        loads[below(rng, c) as usize] += 1;
    }
    let max = *loads.iter().max().expect("c > 0") as usize;
    let mut h = vec![0u64; max + 1];
    for x in loads {
        h[x as usize] += 1;
    }
    h
}

/// A deliberately wrong sampler: the right law for k − D balls, then D more balls added to D
/// *distinct* bins (ignoring that deficit balls can collide with each other), D = ⌈k/10⌉.
fn wrong_sampler(
    k: u64,
    c: u64,
    occ: &mut OccupancySampler,
    rng: &mut ballast_core::SimRng,
) -> Vec<u64> {
    let d = k.div_ceil(10);
    let mut h = occ.sample(k - d, c, rng);
    // Bins not yet given a deficit ball, per level: each deficit ball picks one of them.
    let mut fresh = h.clone();
    for t in 0..d {
        let mut p = below(rng, c - t);
        let mut j = 0;
        while p >= fresh[j] {
            p -= fresh[j];
            j += 1;
        }
        fresh[j] -= 1;
        h[j] -= 1;
        if j + 1 == h.len() {
            h.push(0);
        }
        h[j + 1] += 1;
    }
    h
}

fn stat_hist(hs: &[Vec<u64>], f: impl Fn(&Vec<u64>) -> i64, lo: i64, len: usize) -> Vec<u64> {
    histogram(hs.iter().map(f), lo, len)
}

#[test]
fn sampler_matches_ball_by_ball_throws_and_rejects_a_wrong_variant() {
    let (k, c, reps) = (3000u64, 1000u64, 10_000);
    let mut rng = sim_rng(42);
    let mut occ = OccupancySampler::new(OccupancyParams::default());
    let fast: Vec<Vec<u64>> = (0..reps).map(|_| occ.sample(k, c, &mut rng)).collect();
    let slow: Vec<Vec<u64>> = (0..reps).map(|_| throw(k, c, &mut rng)).collect();
    let wrong: Vec<Vec<u64>> = (0..reps).map(|_| wrong_sampler(k, c, &mut occ, &mut rng)).collect();
    let empty = |h: &Vec<u64>| h[0] as i64;
    let max = |h: &Vec<u64>| h.len() as i64 - 1;
    for (name, f, lo, len) in
        [("empty bins", &empty as &dyn Fn(&Vec<u64>) -> i64, 0, 200), ("max load", &max, 0, 20)]
    {
        let (stat, df) =
            chi2_two_sample(&stat_hist(&fast, f, lo, len), &stat_hist(&slow, f, lo, len));
        assert!(stat < chi2_critical(df), "{name}: chi2 = {stat:.1}, df = {df}");
    }
    // Power: the wrong variant is rejected on the number of empty bins.
    let (stat, df) =
        chi2_two_sample(&stat_hist(&wrong, empty, 0, 200), &stat_hist(&slow, empty, 0, 200));
    assert!(stat > chi2_critical(df), "no power: chi2 = {stat:.1}, df = {df}");
}
