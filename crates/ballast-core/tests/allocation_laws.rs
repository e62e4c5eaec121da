//! Seeded statistical tests of allocation probabilities on hand-built load vectors, and of
//! equalities in distribution between engines and settings.
//!
//! Every test uses a fixed seed, the significance level `common::ALPHA` = 0.001 and the
//! chi-square critical value for its degrees of freedom; sizes keep each test under a second
//! or two in release and a few seconds in debug on 2 cores.

mod common;

use ballast_core::loads::{LoadState, UnitLoads};
use ballast_core::process::{Ctx, DChoice, MixedQuantile, OnePlusBeta, Ranks, Rule, TwoChoice};
use ballast_core::{
    derive_seed, sim_rng, simulate_seeded, ProcessSpec, RunSpec, TieBreak, Weights,
};
use common::{chi2_critical, chi2_gof, chi2_two_sample, histogram};

/// Loads `[n-1, n-2, ..., 0]`: bin i has rank i+1 (rank 1 = heaviest), all loads distinct.
fn descending(n: usize) -> UnitLoads {
    let mut s = UnitLoads::new(n, true);
    for i in 0..n {
        for _ in 0..(n - 1 - i) {
            s.add(i, ());
        }
    }
    s
}

fn choice_counts<P: Rule + Clone>(s: &UnitLoads, rule: &P, draws: usize, seed: u64) -> Vec<u64> {
    let mut rng = sim_rng(seed);
    let mut ctx = Ctx::new(s.n());
    let ranks = if rule.uses_ranks() {
        Ranks::Live { k: (rule.heavy_fraction() * s.n() as f64).ceil() as u64 }
    } else {
        Ranks::Unused
    };
    let mut rule = rule.clone();
    let mut counts = vec![0u64; s.n()];
    for _ in 0..draws {
        counts[rule.place(s, &ranks, &mut rng, &mut ctx).bin] += 1;
    }
    counts
}

#[test]
fn two_choice_sends_rank_i_with_probability_2i_minus_1_over_n_squared() {
    let n = 10;
    let s = descending(n);
    let counts = choice_counts(&s, &TwoChoice { tie: TieBreak::Random }, 200_000, 11);
    let probs: Vec<f64> = (1..=n).map(|i| (2 * i - 1) as f64 / (n * n) as f64).collect();
    let (stat, df) = chi2_gof(&counts, &probs);
    assert!(stat < chi2_critical(df), "chi2 = {stat:.1}, df = {df}");
}

#[test]
fn d_choice_rank_law_for_d_3() {
    // Lightest of 3 uniform ranks is rank i with probability (i^3 - (i-1)^3) / n^3.
    let n = 8;
    let s = descending(n);
    let counts = choice_counts(&s, &DChoice { d: 3, tie: TieBreak::Random }, 200_000, 12);
    let probs: Vec<f64> = (1..=n)
        .map(|i| ((i * i * i) - (i - 1) * (i - 1) * (i - 1)) as f64 / (n * n * n) as f64)
        .collect();
    let (stat, df) = chi2_gof(&counts, &probs);
    assert!(stat < chi2_critical(df), "chi2 = {stat:.1}, df = {df}");
}

#[test]
fn random_ties_are_uniform_and_position_ties_favour_late_positions() {
    let n = 10;
    let s = UnitLoads::new(n, false); // all loads 0: every comparison ties
    let uniform = vec![1.0 / n as f64; n];
    let counts = choice_counts(&s, &TwoChoice { tie: TieBreak::Random }, 100_000, 13);
    let (stat, df) = chi2_gof(&counts, &uniform);
    assert!(stat < chi2_critical(df), "random ties: chi2 = {stat:.1}");
    // docs/processes.md#position: in the first batch the position rule sends a ball to
    // position i (0-based) with probability (2i+1)/n^2.
    let counts = choice_counts(&s, &TwoChoice { tie: TieBreak::Position }, 100_000, 14);
    let probs: Vec<f64> = (0..n).map(|i| (2 * i + 1) as f64 / (n * n) as f64).collect();
    let (stat, df) = chi2_gof(&counts, &probs);
    assert!(stat < chi2_critical(df), "position ties: chi2 = {stat:.1}");
    // lowest_index is the mirror image.
    let counts = choice_counts(&s, &TwoChoice { tie: TieBreak::LowestIndex }, 100_000, 15);
    let mirrored: Vec<f64> = probs.iter().rev().copied().collect();
    let (stat, df) = chi2_gof(&counts, &mirrored);
    assert!(stat < chi2_critical(df), "lowest_index ties: chi2 = {stat:.1}");
}

#[test]
fn one_plus_beta_mixes_one_and_two_choice() {
    let n = 10;
    let beta = 0.3;
    let s = descending(n);
    let counts = choice_counts(&s, &OnePlusBeta { beta, tie: TieBreak::Random }, 200_000, 16);
    let probs: Vec<f64> = (1..=n)
        .map(|i| (1.0 - beta) / n as f64 + beta * (2 * i - 1) as f64 / (n * n) as f64)
        .collect();
    let (stat, df) = chi2_gof(&counts, &probs);
    assert!(stat < chi2_critical(df), "chi2 = {stat:.1}, df = {df}");
}

#[test]
fn quantile_reallocates_from_heavy_bins_with_random_rank_ties() {
    // Loads [3, 2, 2, 2, 1, 0]: delta = 1/2 makes k = 3 heavy bins: bin 0 and two of the
    // three bins at load 2 (each heavy with probability 2/3 per sequential step).
    let mut s = UnitLoads::new(6, true);
    for (i, &x) in [3u32, 2, 2, 2, 1, 0].iter().enumerate() {
        for _ in 0..x {
            s.add(i, ());
        }
    }
    let rule = MixedQuantile { delta: 0.5, eta: 1.0 };
    let counts = choice_counts(&s, &rule, 300_000, 17);
    // P(ball -> j) = P(i1 = j, j light) + P(i1 heavy) / n. Expected heavy mass = 3/6.
    let p_light = [0.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0, 1.0, 1.0];
    let probs: Vec<f64> = p_light.iter().map(|&pl| pl / 6.0 + 0.5 / 6.0).collect();
    let (stat, df) = chi2_gof(&counts, &probs);
    assert!(stat < chi2_critical(df), "chi2 = {stat:.1}, df = {df}");
}

/// Final load histograms (loads sorted, so only the multiset counts) of `runs` runs.
fn gap_hist(spec: &RunSpec, runs: u64, seed: u64, lo: i64, len: usize) -> Vec<u64> {
    histogram(
        (0..runs).map(|r| {
            let out = simulate_seeded(spec, derive_seed(seed, &[r])).expect("valid spec");
            // max load is an integer for unit balls; use it as the integer statistic.
            out.max_load as i64
        }),
        lo,
        len,
    )
}

fn assert_same_law(a: &RunSpec, b: &RunSpec, what: &str) {
    let runs = 3000;
    let ha = gap_hist(a, runs, 101, 0, 40);
    let hb = gap_hist(b, runs, 202, 0, 40);
    let (stat, df) = chi2_two_sample(&ha, &hb);
    assert!(stat < chi2_critical(df), "{what}: chi2 = {stat:.1}, df = {df}\n{ha:?}\n{hb:?}");
}

#[test]
fn batched_with_b_1_equals_sequential() {
    for process in [
        ProcessSpec::DChoice { d: 2 },
        ProcessSpec::OnePlusBeta { beta: 0.5 },
        ProcessSpec::MixedQuantile { delta: 0.5, eta: 0.7 },
        ProcessSpec::MeanThinning { strict: true },
    ] {
        let seq = RunSpec::new(process.clone(), 20, 200);
        let bat = seq.clone().batched(1);
        assert_same_law(&seq, &bat, process.kind());
    }
}

#[test]
fn one_plus_beta_with_beta_1_equals_two_choice() {
    let two = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 20, 200).batched(20);
    let opb = RunSpec::new(ProcessSpec::OnePlusBeta { beta: 1.0 }, 20, 200).batched(20);
    assert_same_law(&two, &opb, "beta = 1");
}

#[test]
fn sequential_tie_rules_share_one_histogram_law() {
    // docs/level-engine.md#sequential-step: sequentially, every rule that picks among the
    // lightest samples gives the same law of the sorted load vector (here: of the max
    // load).
    let base = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 20, 200);
    let pos = base.clone().tie_break(TieBreak::Position);
    assert_same_law(&base, &pos, "random vs position, sequential");
}

#[test]
fn batched_position_ties_differ_from_random_ties() {
    // Power check for the two-sample test: with b = 5n the position rule piles balls onto the
    // last bins of each tie group, so the max load law must differ detectably.
    let random = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 20, 200).batched(100);
    let pos = random.clone().tie_break(TieBreak::Position);
    let ha = gap_hist(&random, 3000, 5, 0, 40);
    let hb = gap_hist(&pos, 3000, 6, 0, 40);
    let (stat, df) = chi2_two_sample(&ha, &hb);
    assert!(stat > chi2_critical(df), "test has no power here: chi2 = {stat:.1}");
}

#[test]
fn weighted_batched_with_b_1_equals_sequential() {
    let w = Weights::Exp { mean: 1.0 };
    let seq = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 20, 200).weights(w);
    let bat = seq.clone().batched(1);
    let runs = 3000;
    let gaps = |spec: &RunSpec, seed| {
        histogram(
            (0..runs).map(|r| {
                simulate_seeded(spec, derive_seed(seed, &[r])).expect("valid").final_gap.ceil()
                    as i64
            }),
            0,
            20,
        )
    };
    let (stat, df) = chi2_two_sample(&gaps(&seq, 1), &gaps(&bat, 2));
    assert!(stat < chi2_critical(df), "chi2 = {stat:.1}, df = {df}");
}

/// Exact law of the max load after `m` balls for a d-choice-type process with random ties,
/// by dynamic programming over sorted load vectors. `beta` is the probability of taking the
/// `d` samples (otherwise one sample): beta = 1 is d-Choice, d = 2 with beta < 1 is (1+β).
fn exact_max_load_law(n: usize, m: usize, d: u32, beta: f64) -> Vec<f64> {
    use std::collections::BTreeMap;
    let mut states: BTreeMap<Vec<u32>, f64> = BTreeMap::new();
    states.insert(vec![0; n], 1.0);
    // Probability that the ball goes to each position of a load vector: d samples with random
    // ties, split evenly among the tied samples (with multiplicity).
    let step_law = |loads: &[u32], d: u32| -> Vec<f64> {
        let mut p = vec![0.0; n];
        let tuples = n.pow(d);
        for t in 0..tuples {
            let mut idx = Vec::with_capacity(d as usize);
            let mut x = t;
            for _ in 0..d {
                idx.push(x % n);
                x /= n;
            }
            let min = idx.iter().map(|&i| loads[i]).min().expect("d >= 1");
            let tied: Vec<usize> = idx.iter().copied().filter(|&i| loads[i] == min).collect();
            for &i in &tied {
                p[i] += 1.0 / (tuples as f64 * tied.len() as f64);
            }
        }
        p
    };
    for _ in 0..m {
        let mut next: BTreeMap<Vec<u32>, f64> = BTreeMap::new();
        for (loads, &pr) in &states {
            let pd = step_law(loads, d);
            let p1 = step_law(loads, 1);
            for i in 0..n {
                let q = beta * pd[i] + (1.0 - beta) * p1[i];
                if q == 0.0 {
                    continue;
                }
                let mut v = loads.clone();
                v[i] += 1;
                v.sort_unstable();
                *next.entry(v).or_insert(0.0) += pr * q;
            }
        }
        states = next;
    }
    let mut law = vec![0.0; m + 1];
    for (loads, pr) in states {
        law[*loads.iter().max().expect("n >= 1") as usize] += pr;
    }
    law
}

#[test]
fn simulated_max_load_matches_exact_law_on_small_systems() {
    // n = 4 bins, m = 8 balls: the exact law of the max load by enumeration, against 40 000
    // simulated runs (chi-square goodness of fit, categories with expected count < 5 merged).
    let (n, m, runs) = (4usize, 8usize, 40_000u64);
    for (process, d, beta) in [
        (ProcessSpec::OneChoice, 1, 1.0),
        (ProcessSpec::DChoice { d: 2 }, 2, 1.0),
        (ProcessSpec::DChoice { d: 3 }, 3, 1.0),
        (ProcessSpec::OnePlusBeta { beta: 0.4 }, 2, 0.4),
    ] {
        let law = exact_max_load_law(n, m, d, beta);
        assert!((law.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let spec = RunSpec::new(process.clone(), n as u64, m as u64);
        let obs = gap_hist(&spec, runs, 77, 0, m + 1);
        // Merge categories with expected count below 5 into their neighbours.
        let (mut o_cat, mut p_cat) = (Vec::new(), Vec::new());
        let (mut o_acc, mut p_acc) = (0u64, 0.0f64);
        for (o, p) in obs.iter().zip(&law) {
            o_acc += o;
            p_acc += p;
            if p_acc * runs as f64 >= 5.0 {
                o_cat.push(o_acc);
                p_cat.push(p_acc);
                o_acc = 0;
                p_acc = 0.0;
            }
        }
        *o_cat.last_mut().expect("some category") += o_acc;
        *p_cat.last_mut().expect("some category") += p_acc;
        let (stat, df) = chi2_gof(&o_cat, &p_cat);
        assert!(stat < chi2_critical(df), "{}: chi2 = {stat:.1}, df = {df}", process.kind());
    }
}

/// Law of the bin chosen by a two-sample rule on `loads`, by enumerating the n² ordered sample
/// pairs; `decide(x1, x2)` is the probability that the first sample gets the ball.
fn two_sample_law(loads: &[u32], decide: impl Fn(f64, f64) -> f64) -> Vec<f64> {
    let n = loads.len();
    let mut p = vec![0.0; n];
    for i1 in 0..n {
        for i2 in 0..n {
            let q = decide(f64::from(loads[i1]), f64::from(loads[i2]));
            p[i1] += q / (n * n) as f64;
            p[i2] += (1.0 - q) / (n * n) as f64;
        }
    }
    p
}

fn unit_state(loads: &[u32]) -> UnitLoads {
    let mut s = UnitLoads::new(loads.len(), false);
    for (i, &x) in loads.iter().enumerate() {
        for _ in 0..x {
            s.add(i, ());
        }
    }
    s
}

#[test]
fn noisy_comparisons_follow_their_rules() {
    use ballast_core::process::Noisy;
    use statrs::distribution::{ContinuousCDF, Normal};
    let loads = [0u32, 1, 2, 4, 7, 7];
    let s = unit_state(&loads);
    let g = 2.0;
    type Decide = Box<dyn Fn(f64, f64) -> f64>;
    let cases: Vec<(&str, Noisy, Decide)> = vec![
        (
            "g_bounded",
            Noisy::GBounded { g },
            // Lighter wins beyond g; within g the heavier wins; exact tie: second sample.
            Box::new(move |x1, x2| {
                if (x1 - x2).abs() > g {
                    f64::from(u8::from(x1 < x2))
                } else {
                    f64::from(u8::from(x1 > x2))
                }
            }),
        ),
        (
            "g_myopic",
            Noisy::GMyopic { g },
            Box::new(
                move |x1, x2| {
                    if (x1 - x2).abs() <= g {
                        0.5
                    } else {
                        f64::from(u8::from(x1 < x2))
                    }
                },
            ),
        ),
        (
            "sigma_noisy_load",
            Noisy::SigmaNoisyLoad { sigma: 1.5, truncate: false },
            // P(x1 + σZ1 <= x2 + σZ2) = Φ((x2 − x1) / (σ√2)).
            Box::new(|x1, x2| Normal::new(0.0, 1.5 * 2f64.sqrt()).expect("sd > 0").cdf(x2 - x1)),
        ),
    ];
    for (seed, (name, rule, decide)) in cases.into_iter().enumerate() {
        let counts = choice_counts(&s, &rule, 200_000, 300 + seed as u64);
        let probs = two_sample_law(&loads, decide);
        let (stat, df) = chi2_gof(&counts, &probs);
        assert!(stat < chi2_critical(df), "{name}: chi2 = {stat:.1}, df = {df}");
    }
}

#[test]
fn noise_free_limits_equal_two_choice() {
    // g = 0 Myopic and σ = 0 noisy comparisons are Two-Choice (ties: coin / first sample,
    // both uniform among i.i.d. samples); checked on the max-load law of whole runs.
    let two = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 20, 200);
    let myopic = RunSpec::new(ProcessSpec::GMyopic { g: 0.0 }, 20, 200);
    let sigma = RunSpec::new(ProcessSpec::SigmaNoisyLoad { sigma: 0.0, truncate: true }, 20, 200);
    assert_same_law(&two, &myopic, "g_myopic g = 0");
    assert_same_law(&two, &sigma, "sigma_noisy_load sigma = 0");
}
