//! The delay setting: τ = 1 is the sequential setting, and stale information costs gap.
//!
//! Statistical tests use fixed seeds and `common::ALPHA` = 0.001.

mod common;

use ballast_core::{derive_seed, simulate_seeded, DelayMode, ProcessSpec, RunSpec, Setting};
use common::{chi2_critical, chi2_two_sample, histogram};

fn delayed(tau: u64, mode: DelayMode, n: u64, m: u64) -> RunSpec {
    let mut s = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, m);
    s.setting = Setting::Delay { tau, mode };
    s
}

fn max_hist(spec: &RunSpec, runs: u64, seed: u64) -> Vec<u64> {
    histogram(
        (0..runs).map(|r| {
            simulate_seeded(spec, derive_seed(seed, &[r])).expect("valid").max_load as i64
        }),
        0,
        40,
    )
}

#[test]
fn window_of_one_step_is_the_sequential_setting() {
    let seq = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 20, 200);
    for mode in [DelayMode::Random, DelayMode::Adversarial] {
        let (stat, df) = chi2_two_sample(
            &max_hist(&seq, 3000, 1),
            &max_hist(&delayed(1, mode, 20, 200), 3000, 2),
        );
        assert!(stat < chi2_critical(df), "{mode:?}: chi2 = {stat:.1}, df = {df}");
    }
}

#[test]
fn stale_loads_raise_the_gap_and_the_adversary_raises_it_more() {
    // n = 1000, m = 100 n: Two-Choice's gap is about 2-3; a window of 10 n steps raises it,
    // and an adversary choosing within the same window raises it further. Means over 10 runs
    // each; the differences are several gap units, far beyond run-to-run noise (sd < 1).
    let (n, m) = (1000, 100_000);
    let mean = |spec: &RunSpec, seed| {
        (0..10u64)
            .map(|r| simulate_seeded(spec, derive_seed(seed, &[r])).expect("valid").final_gap)
            .sum::<f64>()
            / 10.0
    };
    let fresh = mean(&RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, m), 3);
    let random = mean(&delayed(10 * n, DelayMode::Random, n, m), 4);
    let adversarial = mean(&delayed(10 * n, DelayMode::Adversarial, n, m), 5);
    assert!(fresh < 4.0, "{fresh}");
    assert!(random > fresh + 1.0, "random window {random} vs fresh {fresh}");
    assert!(adversarial > random + 1.0, "adversarial {adversarial} vs random {random}");
}

#[test]
fn delay_refuses_what_it_cannot_do() {
    let mut s = RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, 10, 10);
    s.setting = Setting::Delay { tau: 3, mode: DelayMode::Random };
    assert!(simulate_seeded(&s, 1).is_err());
    let s = delayed(0, DelayMode::Random, 10, 10);
    let msg = simulate_seeded(&s, 1).expect_err("tau = 0").to_string();
    assert!(msg.contains("tau"), "{msg}");
}
