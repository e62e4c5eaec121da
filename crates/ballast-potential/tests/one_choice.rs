//! Statistical checks of the tracked potentials against exact expectations for One-Choice,
//! where every bin is equally likely, so `E[y_j | loads] = 0` for the chosen bin `j`:
//!
//! * unit balls: `E[Υ after m balls] = m(1 − 1/n)`, and the expected change of `Υ` per ball
//!   is `1 − 1/n` at every level of `Υ`;
//! * Exp(1) weights: `E[Υ after m balls] = 2m(1 − 1/n)` (`E w² = 2`).
//!
//! Seeded; each mean is compared with its expectation in units of its estimated standard
//! error, at the critical value [`Z_CRITICAL`].

use ballast_core::{sim_rng, simulate_observed, Engine, ProcessSpec, RunSpec, Weights};
use ballast_potential::tolerance::Z_CRITICAL;
use ballast_potential::{PotentialSpec, Potentials, Recorder, Sampling};

/// Mean and standard error of the final quadratic potential over `runs` runs.
fn mean_final_quadratic(n: u64, m: u64, weights: Weights, runs: u64, seed: u64) -> (f64, f64) {
    let spec = RunSpec::new(ProcessSpec::OneChoice, n, m).weights(weights);
    let mut values = Vec::with_capacity(runs as usize);
    for r in 0..runs {
        let mut pot = Potentials::new(&[PotentialSpec::Quadratic]).unwrap();
        let seed = ballast_core::derive_seed(seed, &[r]);
        simulate_observed(&spec, &mut sim_rng(seed), &mut pot).unwrap();
        values.push(pot.value(0));
    }
    let k = values.len() as f64;
    let mean = values.iter().sum::<f64>() / k;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (k - 1.0);
    (mean, (var / k).sqrt())
}

#[test]
fn one_choice_quadratic_mean_is_m_times_one_minus_inv_n() {
    // Υ has standard deviation ≈ (m/n)·√(2n) ≈ 1400 here; 2000 runs give a standard error
    // of ≈ 31 against a mean of 9900, so the test resolves a 1.3% bias.
    let (n, m) = (100u64, 10_000u64);
    let (mean, se) = mean_final_quadratic(n, m, Weights::Unit, 2000, 11);
    let want = m as f64 * (1.0 - 1.0 / n as f64);
    let z = (mean - want) / se;
    eprintln!("unit: mean {mean:.1} ± {se:.1}, expected {want}, z = {z:.2}");
    assert!(z.abs() < Z_CRITICAL, "z = {z}");
}

#[test]
fn one_choice_quadratic_mean_with_exp_weights() {
    let (n, m) = (100u64, 10_000u64);
    let (mean, se) = mean_final_quadratic(n, m, Weights::Exp { mean: 1.0 }, 1000, 12);
    let want = 2.0 * m as f64 * (1.0 - 1.0 / n as f64);
    let z = (mean - want) / se;
    eprintln!("exp(1): mean {mean:.1} ± {se:.1}, expected {want}, z = {z:.2}");
    assert!(z.abs() < Z_CRITICAL, "z = {z}");
}

#[test]
fn one_choice_quadratic_drift_is_one_minus_inv_n_at_every_level() {
    // Per ball, ΔΥ = 2·y_j + (1 − 1/n) with y_j the chosen bin's load before the ball
    // (uniform j, so E[y_j | loads] = 0) at every level of Υ. Both engines: the recorder reads
    // loads only, so the level engine's sorted view gives the same law.
    for engine in [Engine::Bins, Engine::Levels] {
        let z = pooled_drift_z(ProcessSpec::OneChoice, engine, 5);
        assert!(z.abs() < Z_CRITICAL, "{engine:?}: pooled drift z = {z}");
    }
    // The test's power: Two-Choice, whose chosen bin is lighter than average, has a negative
    // drift of Υ, rejected on either engine.
    for engine in [Engine::Bins, Engine::Levels] {
        let z = pooled_drift_z(ProcessSpec::DChoice { d: 2 }, engine, 5);
        assert!(z < -Z_CRITICAL, "{engine:?}: Two-Choice's pooled drift not rejected: z = {z}");
    }
}

/// Runs `process` at n = 50 with a per-ball drift recorder and checks every well-sampled
/// level of One-Choice's drift (One-Choice only); returns the z-score of the pooled drift
/// against One-Choice's `1 − 1/n`.
fn pooled_drift_z(process: ProcessSpec, engine: Engine, seed: u64) -> f64 {
    let one_choice = process == ProcessSpec::OneChoice;
    let n = 50u64;
    let mut rec = Recorder::new(&[PotentialSpec::Quadratic], Sampling::Every(1))
        .unwrap()
        .with_drift(4)
        .unwrap();
    let spec = RunSpec::new(process.clone(), n, 200_000).engine(engine);
    simulate_observed(&spec, &mut sim_rng(seed), &mut rec).unwrap();
    let want = 1.0 - 1.0 / n as f64;
    let rows = rec.drift().unwrap().rows();
    let mut checked = 0;
    for r in rows.iter().filter(|r| one_choice && r.samples >= 1000) {
        let z = (r.mean_change - want) / r.stderr;
        assert!(
            z.abs() < Z_CRITICAL,
            "{engine:?}: level [{}, {}): z = {z}",
            r.level_lo,
            r.level_hi
        );
        assert_eq!(r.balls, r.samples);
        checked += 1;
    }
    assert!(!one_choice || checked >= 5, "{engine:?}: {checked} level bins with enough samples");
    // Pooled over all levels. The centred changes ΔΥ − (1 − 1/n) are martingale differences
    // (uncorrelated), so the pooled mean's variance is the sum of the rows' sample variances
    // (stderr² · samples²) over balls². Its standard error here is ≈ 0.2, as large as the
    // spread of the pooled mean over seeds (0.85–1.05 on either engine for seeds 5, 6, 7):
    // a fixed tolerance such as ±0.05 would pass or fail by the seed.
    let (sum, balls) = rows
        .iter()
        .fold((0.0, 0), |(s, b), r| (s + r.change_per_ball * r.balls as f64, b + r.balls));
    assert_eq!(balls, 200_000 - 1);
    let var: f64 =
        rows.iter().filter(|r| r.samples > 1).map(|r| (r.stderr * r.samples as f64).powi(2)).sum();
    let (mean, se) = (sum / balls as f64, var.sqrt() / balls as f64);
    let z = (mean - want) / se;
    eprintln!(
        "{process:?} {engine:?}: pooled drift {mean:.3} ± {se:.3}, One-Choice's {want}, z = {z:.2}"
    );
    z
}
