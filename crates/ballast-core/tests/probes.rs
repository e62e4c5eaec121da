//! `RunSpec::record_probes`: the histogram of bin samples (probes) per step for every
//! process of the bin engine. It only observes: the outcome is the same as without it but
//! for the histogram (the kernels, which step aside, draw the same numbers). The histogram
//! counts every step and every sample.
//!
//! The law test: (1+β) with β = 0.3 draws two samples with probability β, independently
//! per ball, so over m = 20 000 balls the two-sample steps are Binomial(m, β). Pearson's
//! chi-square over the two cells (1 degree of freedom) at α = 0.001 (critical 10.83,
//! `ballast_testkit`); the same counts against β = 0.32 (the wrong variant) are rejected.

use ballast_core::{simulate_seeded, Engine, ProcessSpec, RunSpec, Setting, Tau};
use ballast_testkit::{chi2_critical, chi2_gof};

fn probed(spec: &RunSpec) -> RunSpec {
    RunSpec { record_probes: true, ..spec.clone() }
}

#[test]
fn probe_histograms_count_every_step_and_only_observe() {
    let cases = [
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 5000).engine(Engine::Bins),
        RunSpec::new(ProcessSpec::DChoice { d: 3 }, 100, 5000).batched(200),
        RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.4 }, 100, 5000),
        RunSpec::new(ProcessSpec::Threshold { f: 1.0 }, 100, 5000),
        RunSpec::new(ProcessSpec::Twinning, 100, 5000),
        RunSpec::new(ProcessSpec::Adaptive { tau: Tau::PROBE_COUNT, cap: None }, 100, 5000),
    ];
    for (k, spec) in cases.iter().enumerate() {
        let with = simulate_seeded(&probed(spec), 30 + k as u64).unwrap();
        let h = &with.samples_per_step;
        assert!(!h.is_empty(), "case {k}");
        assert_eq!(h.iter().sum::<u64>(), with.steps, "case {k}: every step");
        let samples: u64 = h.iter().enumerate().map(|(j, &c)| j as u64 * c).sum();
        assert_eq!(samples, with.samples, "case {k}: every sample");
        // The same run without the recording (on the bin engine: `auto` resolves to it
        // with probes, so compare with the bin engine).
        let without = simulate_seeded(&spec.clone().engine(Engine::Bins), 30 + k as u64).unwrap();
        let mut plain = with.clone();
        if !matches!(spec.process, ProcessSpec::Adaptive { .. }) {
            plain.samples_per_step = Vec::new();
        }
        assert_eq!(plain, without, "case {k}");
    }
    // d-Choice draws d samples every step.
    let two = simulate_seeded(&probed(&cases[0]), 1).unwrap();
    assert_eq!(two.samples_per_step, vec![0, 0, 5000]);
}

#[test]
fn one_plus_beta_draws_two_samples_with_probability_beta() {
    let spec = probed(&RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.3 }, 1000, 20_000));
    let out = simulate_seeded(&spec, 7).unwrap();
    let h = &out.samples_per_step;
    assert_eq!(h.len(), 3);
    let counts = [h[1], h[2]];
    let crit = chi2_critical(1);
    let (stat, df) = chi2_gof(&counts, &[0.7, 0.3]);
    assert_eq!(df, 1);
    assert!(stat < crit, "{counts:?}: chi2 {stat} >= {crit}");
    let (bad, _) = chi2_gof(&counts, &[0.68, 0.32]);
    assert!(bad > crit, "the wrong β is not rejected: {bad}");
    println!("(1+β): {counts:?}, chi2 {stat:.2}, wrong β {bad:.1}, critical {crit:.2}");
}

#[test]
fn engines_without_a_probe_loop_step_aside_or_refuse() {
    let spec = probed(&RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100_000, 100_000));
    assert_eq!(ballast_core::resolve_engine(&spec).unwrap(), Engine::Bins);
    let e = ballast_core::resolve_engine(&spec.clone().engine(Engine::Levels)).unwrap_err();
    assert!(e.to_string().contains("probes"), "{e}");
    let batched = RunSpec { setting: Setting::Batched { b: 1_000_000 }, ..spec.clone() }
        .weights(ballast_core::Weights::Exp { mean: 1.0 });
    assert!(!ballast_core::weighted::prefers_sorted(&batched));
}
