//! `RunSummary::recovery_round`: from a bad start (all balls in one bin), the first round at
//! whose end the discrepancy max load − total/n is at most a target equals what a round-by-
//! round watch of the same run (same seed, `simulate_observed`) finds; smaller targets take
//! longer; a target never reached gives `None`. Deterministic (seeds 31..34), no statistics.

use ballast_core::{sim_rng, Start};
use ballast_dynamic::{
    simulate, simulate_observed, DynamicSpec, Horizon, LeakyConfig, RbbConfig, RethrowView,
};

/// The first round (1-based) whose end has n·max − total <= target·n, watched round by round.
fn watched(spec: &DynamicSpec, h: &Horizon, seed: u64, target: f64) -> Option<u64> {
    let n = spec.n() as f64;
    let mut first = None;
    simulate_observed(spec, h, &mut sim_rng(seed), |t, m| {
        let discrepancy = f64::from(m.max_load) - m.total_load as f64 / n;
        if first.is_none() && discrepancy <= target {
            first = Some(t + 1);
        }
    })
    .unwrap();
    first
}

#[test]
fn recovery_rounds_are_the_first_round_the_target_is_met() {
    let start = Some(Start::OneBin { balls: 400 });
    let specs = [
        DynamicSpec::Leaky(LeakyConfig::new(100, 0.8, 2).with_start(start.clone())),
        DynamicSpec::Rbb(
            RbbConfig::d_choice(100, 400, 2, RethrowView::default()).with_start(start),
        ),
    ];
    let h = Horizon::new(100, 1900);
    for spec in &specs {
        for seed in 31..34 {
            let summary = simulate(spec, &h, &mut sim_rng(seed)).unwrap();
            let mut last = 0;
            for target in [300.0, 100.0, 30.0, 10.0, 5.0] {
                let got = summary.recovery_round(target);
                assert_eq!(
                    got,
                    watched(spec, &h, seed, target),
                    "{} seed {seed} target {target}",
                    spec.kind()
                );
                let r = got.unwrap_or_else(|| panic!("{}: target {target} never met", spec.kind()));
                assert!(r >= last, "smaller targets take at least as long");
                last = r;
            }
            // The discrepancy is at least 0 (max >= average): a negative target is never met.
            assert_eq!(summary.recovery_round(-0.5), None);
        }
    }
}
