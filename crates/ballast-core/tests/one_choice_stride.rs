//! Sequential One-Choice on the level engine as one batched step per stretch between
//! observation points (`level::run_seq_one_choice`, `docs/level-engine.md#sequential-one-choice`),
//! and the per-process `auto` crossovers of sequential runs (`level::auto_sequential_min_n`).
//!
//! One-Choice's decisions read no state, so the sorted load vector after a stretch of `k`
//! sequential balls has the law of one batch of `k` balls. Tests (α = `common::ALPHA` = 0.001
//! per comparison, chi-square critical value for the degrees of freedom):
//!
//! - **Full-state law** (`stretches_follow_the_exact_full_state_law`): the sorted loads after
//!   m balls on n = 3 and 4 bins ((3, 6), (4, 8)), for observation strides 1, 2, 3 and none
//!   (one stretch of m balls), against the exact law of the One-Choice chain (all n samples
//!   enumerated): one-sample Pearson goodness of fit, states of expected count below 5 lumped
//!   in state order, 20 000 runs per case, seeds `derive_seed(7170, [case, stride])`.
//!   Statistics at these seeds: 1.1 to 8.7 against 22.5 (n = 3), 11.9 to 16.0 against 34.5
//!   (n = 4).
//! - **Power** (`the_test_rejects_a_stretch_with_the_wrong_law`): the same test applied to the
//!   plausible routing mistake of sending a stretch through another process's batch step (the
//!   Two-Choice batch, whose balls decide on the loads frozen at the stretch's start) rejects
//!   at strides 1 and 2 with 11 525 to 36 381 against 22.5 and 34.5.
//! - **Split stretches** (`a_stretch_beyond_the_batch_limit_is_split_and_keeps_the_law`):
//!   n = 2, m = 2·65 536·2 + 5 balls, so the one stretch exceeds `LEVEL_MAX_BATCH_PER_BIN`
//!   balls per bin and is cut in pieces: every ball is placed, one sample per ball, and the
//!   larger load follows the law of max(X, m − X), X ~ Binomial(m, 1/2), by a goodness-of-fit
//!   test over 2 000 runs (categories of the larger load of expected count >= 5; 353 against
//!   401 on 318 degrees of freedom at seed 7172).
//! - **Routing** (`auto_routes_sequential_runs_per_process`): the crossovers at their
//!   boundaries, one bin (or ball) on each side.

mod common;

use std::collections::BTreeMap;

use ballast_core::level::{
    auto_sequential_min_n, simulate_levels_chunked, Chunking, LevelEngine,
    AUTO_BATCH_MIN_BALLS_ONE_CHOICE, AUTO_SEQUENTIAL_MIN_N, AUTO_SEQUENTIAL_MIN_N_ADAPTIVE,
    AUTO_SEQUENTIAL_MIN_N_FILLING, AUTO_SEQUENTIAL_MIN_N_GREEDY, AUTO_SEQUENTIAL_MIN_N_G_BOUNDED,
    AUTO_SEQUENTIAL_MIN_N_G_MYOPIC, AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE,
    AUTO_SEQUENTIAL_MIN_N_ONE_CHOICE, AUTO_SEQUENTIAL_MIN_N_ONE_PLUS_BETA,
    AUTO_SEQUENTIAL_MIN_N_PACKING, AUTO_SEQUENTIAL_MIN_N_SIGMA_NOISY,
    AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE, LEVEL_MAX_BATCH_PER_BIN,
};
use ballast_core::{derive_seed, resolve_engine, sim_rng, Engine, ProcessSpec, RunSpec, Tau};
use common::{chi2_critical, chi2_gof, exact_sorted_law, fit_law, FinalState};

/// Exact law of the sorted loads after `m` One-Choice balls on `n` bins.
fn exact_law(n: usize, m: usize) -> BTreeMap<Vec<u64>, f64> {
    exact_sorted_law(n, m, 1, |_, s| s[0])
}

/// Final sorted states of `runs` seeded runs of `spec` on the level engine.
fn final_states(spec: &RunSpec, chunking: Chunking, runs: u64, seed: u64) -> Vec<Vec<u64>> {
    (0..runs)
        .map(|r| {
            let mut obs = FinalState::default();
            let rng = &mut sim_rng(derive_seed(seed, &[r]));
            let o = simulate_levels_chunked(spec, rng, &mut obs, chunking).expect("valid spec");
            assert_eq!(
                (o.balls, o.samples),
                (spec.m, spec.m),
                "every ball placed, one sample each"
            );
            obs.0
        })
        .collect()
}

const TINY: [(usize, usize); 2] = [(3, 6), (4, 8)];
const STRIDES: [Option<u64>; 4] = [Some(1), Some(2), Some(3), None];

#[test]
fn stretches_follow_the_exact_full_state_law() {
    for (i, &(n, m)) in TINY.iter().enumerate() {
        let law = exact_law(n, m);
        assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
        for (j, every) in STRIDES.into_iter().enumerate() {
            let mut spec =
                RunSpec::new(ProcessSpec::OneChoice, n as u64, m as u64).engine(Engine::Levels);
            spec.observe_every = every;
            let seed = derive_seed(7170, &[i as u64, j as u64]);
            // `Auto` is what `simulate` does: the stretches go as batches.
            let (stat, crit) = fit_law(&final_states(&spec, Chunking::Auto, 20_000, seed), &law);
            println!("n = {n}, m = {m}, every = {every:?}: chi2 = {stat:.1} vs {crit:.1}");
            assert!(
                stat < crit,
                "n = {n}, m = {m}, every = {every:?}: chi2 = {stat:.1} >= {crit:.1}"
            );
        }
    }
}

/// The wrong variant: each stretch through the Two-Choice batch step (the step of another
/// process, as a routing slip would do).
fn wrong_states(n: usize, m: usize, every: u64, runs: u64, seed: u64) -> Vec<Vec<u64>> {
    let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n as u64, m as u64).batched(1);
    (0..runs)
        .map(|r| {
            let rng = &mut sim_rng(derive_seed(seed, &[r]));
            let start = ballast_core::level::LevelLoads::from_counts(0, &[n as u64]);
            let mut e = LevelEngine::with_state(&spec, start).expect("supported");
            let mut done = 0;
            while done < m as u64 {
                let k = every.min(m as u64 - done);
                e.batch(k, rng);
                done += k;
            }
            let st = e.state();
            let mut v: Vec<u64> = (0..n as u64).map(|p| st.load_at(p)).collect();
            v.sort_unstable();
            v
        })
        .collect()
}

#[test]
fn the_test_rejects_a_stretch_with_the_wrong_law() {
    // Strides 1 (Two-Choice itself) and 2. A single stretch of m balls from empty bins would
    // not do: every frozen load is 0, so that batch is One-Choice.
    for (i, &(n, m)) in TINY.iter().enumerate() {
        let law = exact_law(n, m);
        for every in [1, 2] {
            let states = wrong_states(n, m, every, 20_000, derive_seed(7171, &[i as u64, every]));
            let (stat, crit) = fit_law(&states, &law);
            println!("wrong variant n = {n}, every = {every}: chi2 = {stat:.1} vs {crit:.1}");
            assert!(stat > 10.0 * crit, "n = {n}, every = {every}: chi2 = {stat:.1} vs {crit:.1}");
        }
    }
}

#[test]
fn a_stretch_beyond_the_batch_limit_is_split_and_keeps_the_law() {
    let n = 2u64;
    let m = 2 * n * LEVEL_MAX_BATCH_PER_BIN + 5;
    let spec = RunSpec::new(ProcessSpec::OneChoice, n, m).engine(Engine::Levels);
    let runs = 2_000u64;
    let states = final_states(&spec, Chunking::Auto, runs, 7172);
    // |X − m/2| for X ~ Binomial(m, 1/2): the larger load is m/2 + that (m odd: + 1/2).
    let half = m as f64 / 2.0;
    let ln_pmf = |k: u64| -> f64 {
        let lg = |x: f64| ln_gamma(x + 1.0);
        lg(m as f64) - lg(k as f64) - lg((m - k) as f64) - m as f64 * std::f64::consts::LN_2
    };
    // Categories of the larger load: ceil(m/2) + j for j = 0, 1, …, lumped at expected < 5.
    let lo = m.div_ceil(2);
    let mut probs = Vec::new();
    let mut bounds = Vec::new();
    let (mut acc, mut k) = (0.0, lo);
    loop {
        // P(max = k) = P(X = k) + P(X = m − k) (one term when k = m − k).
        let p = if 2 * k == m { ln_pmf(k).exp() } else { 2.0 * ln_pmf(k).exp() };
        acc += p;
        if acc * runs as f64 >= 5.0 {
            probs.push(acc);
            bounds.push(k);
            acc = 0.0;
        }
        k += 1;
        if (k as f64 - half) > 8.0 * (m as f64).sqrt() {
            break;
        }
    }
    // The last category takes the tail beyond the loop (mass below 1e-13).
    let rest: f64 = probs[..probs.len() - 1].iter().sum();
    *probs.last_mut().expect("a category") = 1.0 - rest;
    let mut observed = vec![0u64; probs.len()];
    for s in &states {
        let max = s[1];
        let c = bounds.iter().position(|&b| max <= b).unwrap_or(bounds.len() - 1);
        observed[c] += 1;
    }
    let (stat, df) = chi2_gof(&observed, &probs);
    println!("split stretch: chi2 = {stat:.1} vs {:.1} ({df} df)", chi2_critical(df));
    assert!(stat < chi2_critical(df), "chi2 = {stat:.1} >= {:.1}", chi2_critical(df));
}

/// ln Γ(x) by Stirling's series with a shift (x >= 1; accurate to about 1e-13 here).
fn ln_gamma(x: f64) -> f64 {
    let mut x = x;
    let mut shift = 0.0;
    while x < 10.0 {
        shift -= x.ln();
        x += 1.0;
    }
    let inv = 1.0 / x;
    let inv2 = inv * inv;
    shift + (x - 0.5) * x.ln() - x
        + 0.5 * (2.0 * std::f64::consts::PI).ln()
        + inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 * (1.0 / 1260.0 - inv2 / 1680.0)))
}

#[test]
fn auto_routes_sequential_runs_per_process() {
    let engine =
        |p: ProcessSpec, n: u64, m: u64| resolve_engine(&RunSpec::new(p, n, m)).expect("resolves");
    let big = 1 << 25;
    // One-Choice: by the stretch between observation points, from 2¹⁷ bins (where the level
    // engine is faster for every admitted stretch, `AUTO_SEQUENTIAL_MIN_N_ONE_CHOICE`).
    let (oc, min) = (AUTO_BATCH_MIN_BALLS_ONE_CHOICE, AUTO_SEQUENTIAL_MIN_N_ONE_CHOICE);
    assert_eq!(engine(ProcessSpec::OneChoice, 1 << 17, big), Engine::Levels);
    assert_eq!(engine(ProcessSpec::DChoice { d: 1 }, 1 << 17, big), Engine::Levels);
    assert_eq!(engine(ProcessSpec::OneChoice, (1 << 17) - 1, big), Engine::Bins);
    assert_eq!(engine(ProcessSpec::OneChoice, min, oc), Engine::Levels);
    assert_eq!(engine(ProcessSpec::OneChoice, min - 1, big), Engine::Bins);
    assert_eq!(engine(ProcessSpec::OneChoice, min, oc - 1), Engine::Bins);
    let mut spec = RunSpec::new(ProcessSpec::OneChoice, min, big);
    spec.observe_every = Some(oc - 1);
    assert_eq!(resolve_engine(&spec).unwrap(), Engine::Bins);
    assert_eq!(auto_sequential_min_n(&RunSpec::new(ProcessSpec::OneChoice, 1, big)), min);
    // d-Choice: by n.
    for (p, min) in [
        (ProcessSpec::DChoice { d: 2 }, AUTO_SEQUENTIAL_MIN_N_TWO_CHOICE),
        (ProcessSpec::DChoice { d: 3 }, AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE),
        (ProcessSpec::DChoice { d: 5 }, AUTO_SEQUENTIAL_MIN_N_MANY_CHOICE),
        (ProcessSpec::GBounded { g: 4.0 }, AUTO_SEQUENTIAL_MIN_N_G_BOUNDED),
        (ProcessSpec::GMyopic { g: 4.0 }, AUTO_SEQUENTIAL_MIN_N_G_MYOPIC),
        (
            ProcessSpec::SigmaNoisyLoad { sigma: 4.0, truncate: true },
            AUTO_SEQUENTIAL_MIN_N_SIGMA_NOISY,
        ),
        (ProcessSpec::Threshold { f: 1.0 }, AUTO_SEQUENTIAL_MIN_N),
        (ProcessSpec::TightPacking { offset: 1, balls: None }, AUTO_SEQUENTIAL_MIN_N_FILLING),
        (ProcessSpec::Memory { d: 1, k: 1 }, AUTO_SEQUENTIAL_MIN_N_FILLING),
        (ProcessSpec::Caching { d: 1 }, AUTO_SEQUENTIAL_MIN_N_FILLING),
        (ProcessSpec::Packing { offset: 1 }, AUTO_SEQUENTIAL_MIN_N_PACKING),
        (ProcessSpec::Twinning, AUTO_SEQUENTIAL_MIN_N_PACKING),
    ] {
        assert_eq!(engine(p.clone(), min, big), Engine::Levels, "{p:?} at {min}");
        assert_eq!(engine(p.clone(), min - 1, big), Engine::Bins, "{p:?} at {}", min - 1);
    }
    // Adaptive probing: Greedy[d] always (the bin engine runs it through the probe loop, not
    // the d-Choice kernels), the other thresholds by n.
    assert_eq!(AUTO_SEQUENTIAL_MIN_N_GREEDY, 0);
    for d in [2, 3, 5] {
        let greedy = ProcessSpec::Adaptive { tau: Tau::NEVER, cap: Some(d) };
        assert_eq!(engine(greedy, 2, big), Engine::Levels, "Greedy[{d}] at n = 2");
    }
    let probe_count = ProcessSpec::Adaptive { tau: Tau::PROBE_COUNT, cap: None };
    let min = AUTO_SEQUENTIAL_MIN_N_ADAPTIVE;
    assert_eq!(engine(probe_count.clone(), min, big), Engine::Levels);
    assert_eq!(engine(probe_count, min - 1, big), Engine::Bins);
    // (1+β) and Quantile: always.
    assert_eq!(AUTO_SEQUENTIAL_MIN_N_ONE_PLUS_BETA, 0);
    assert_eq!(engine(ProcessSpec::OnePlusBeta { beta: 0.5 }, 2, big), Engine::Levels);
    assert_eq!(engine(ProcessSpec::Quantile { delta: 0.5 }, 2, big), Engine::Levels);
    assert_eq!(engine(ProcessSpec::MixedQuantile { delta: 0.5, eta: 0.5 }, 2, big), Engine::Levels);
    // Processes the level engine cannot run stay on bins whatever n.
    assert_eq!(engine(ProcessSpec::Memory { d: 1, k: 2 }, 1 << 22, big), Engine::Bins);
}
