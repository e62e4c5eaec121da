//! Seeded statistical checks of the processes against exact results (see the crate docs for
//! the derivations), conservation, stationarity and value stability.
//!
//! Every comparison of a time average with an exact value uses the batch-means standard error
//! of 20 batches, so the critical value is Student's t with 19 degrees of freedom at two-sided
//! α = 0.001 ([`T19_ALPHA_001`]). Each test also bounds the standard error, so a check cannot
//! pass merely because the run was too noisy to tell.

use ballast_core::sim_rng;
use ballast_dynamic::theory::{
    expected_max_iid, leaky_one_choice_distribution, leaky_one_choice_mean_load,
    per_bin_arrival_pmf, rbb_empty_fraction,
};
use ballast_dynamic::tolerance::{RBB_EMPTY_BIAS_TIMES_N, T19_ALPHA_001};
use ballast_dynamic::{
    simulate, simulate_observed, Arrivals, AzarConfig, DynamicSpec, Horizon, LeakyConfig,
    MetricSummary, RbbConfig, RethrowView, RoundMetrics, RunSummary,
};

fn run(spec: DynamicSpec, horizon: Horizon, seed: u64) -> RunSummary {
    simulate(&spec, &horizon, &mut sim_rng(seed)).unwrap()
}

/// `|mean − want| <= T19·se + bias`, with `se <= max_se` (power).
fn assert_close(what: &str, m: &MetricSummary, want: f64, bias: f64, max_se: f64) {
    eprintln!(
        "{what}: {:.6} ± {:.6} (batch means), exact {want:.6}, z = {:.2}, lag1 = {:.2}",
        m.mean,
        m.stderr,
        (m.mean - want) / m.stderr,
        m.lag1
    );
    assert!(m.stderr <= max_se, "{what}: standard error {} above {max_se}", m.stderr);
    assert!(
        (m.mean - want).abs() <= T19_ALPHA_001 * m.stderr + bias,
        "{what}: {} vs exact {want} (se {}, allowed bias {bias})",
        m.mean,
        m.stderr
    );
}

#[test]
fn rbb_conserves_balls() {
    for (d, view) in [
        (1, RethrowView::AfterReleases),
        (2, RethrowView::AfterReleases),
        (2, RethrowView::RoundStart),
        (3, RethrowView::RoundStart),
    ] {
        let spec = DynamicSpec::Rbb(RbbConfig::d_choice(300, 1234, d, view));
        simulate_observed(&spec, &Horizon::new(0, 2000), &mut sim_rng(d.into()), |t, m| {
            assert_eq!(m.total_load, 1234, "d = {d}, {view:?}, round {t}");
        })
        .unwrap();
    }
}

/// The empty-bin fraction of RBB against √(k² + 1) − k. n = 10⁴ keeps the finite-n bias
/// (about 0.25/n) far below the sampling error; the burn-in of 2000 rounds is 30 times the
/// single-queue relaxation time 1/(1 − f)² (≈ 66 rounds at k = 4).
#[test]
fn rbb_empty_fraction_matches_closed_form() {
    let n = 10_000;
    for (k, seed) in [(1u64, 1), (4, 2)] {
        let spec = DynamicSpec::Rbb(RbbConfig::one_choice(n, k * n as u64));
        let s = run(spec, Horizon::new(2000, 4000), seed);
        let want = rbb_empty_fraction(k as f64);
        let bias = RBB_EMPTY_BIAS_TIMES_N / n as f64;
        assert_close(&format!("RBB empty fraction k = {k}"), &s.empty_fraction(), want, bias, 5e-4);
    }
}

/// Leaky bins with One-Choice: the mean load per bin against `E[a(a − 1)]/(2(1 − E[a]))`,
/// exact for every n and arrival law. Burn-in 20/(1 − λ)² rounds, 400/(1 − λ)² measured
/// (at least 20 000).
#[test]
fn leaky_one_choice_mean_load_matches_single_queue() {
    let n = 1000;
    for (arrivals, lambda, seed) in [
        (Arrivals::Poisson, 0.5, 11),
        (Arrivals::Poisson, 0.9, 12),
        (Arrivals::Binomial, 0.9, 13),
        (Arrivals::Fixed, 0.75, 14),
    ] {
        let tau = 1.0 / (1.0f64 - lambda).powi(2);
        let horizon = Horizon::new((20.0 * tau) as u64, ((400.0 * tau) as u64).max(20_000));
        let spec = DynamicSpec::Leaky(LeakyConfig::new(n, lambda, 1).with_arrivals(arrivals));
        let s = run(spec, horizon, seed);
        let want = leaky_one_choice_mean_load(arrivals, n, lambda);
        let what = format!("leaky d = 1 {arrivals:?} λ = {lambda} load per bin");
        assert_close(&what, &s.load_per_bin(), want, 0.0, 0.02 * want);
    }
}

/// With Poisson arrivals and One-Choice the bins are independent queues, so the time-averaged
/// max load is `E[max of n i.i.d. stationary queues]`, computed exactly from the queue law.
#[test]
fn leaky_one_choice_max_load_matches_independent_queues() {
    let (n, lambda) = (100, 0.9);
    let spec = DynamicSpec::Leaky(LeakyConfig::new(n, lambda, 1).with_arrivals(Arrivals::Poisson));
    let s = run(spec, Horizon::new(5000, 1_000_000), 21);
    let q =
        leaky_one_choice_distribution(&per_bin_arrival_pmf(Arrivals::Poisson, n, lambda), 100_000);
    let want = expected_max_iid(&q, n);
    assert_close("leaky d = 1 Poisson λ = 0.9 max load", &s.max_load, want, 0.0, 0.02 * want);
}

/// Greedy[2] keeps leaky bins far lower than One-Choice (the exponential gap of the paper's
/// bounds): at λ = 0.95 the time-averaged max load drops by more than a factor of 4.
#[test]
fn leaky_two_choice_is_far_below_one_choice() {
    let (n, lambda) = (1000, 0.95);
    let h = Horizon::new(8000, 40_000);
    let one = run(DynamicSpec::Leaky(LeakyConfig::new(n, lambda, 1)), h.clone(), 31);
    let two = run(DynamicSpec::Leaky(LeakyConfig::new(n, lambda, 2)), h, 32);
    eprintln!("λ = 0.95: max load d = 1 {:.2}, d = 2 {:.2}", one.max_load.mean, two.max_load.mean);
    assert!(two.max_load.mean * 4.0 < one.max_load.mean);
    assert!(two.total_load.mean < one.total_load.mean);
}

/// Stationarity: after the burn-in the time averages of the two halves agree, in standard
/// errors of their difference (t with 19 degrees of freedom, α = 0.001).
#[test]
fn time_averages_do_not_drift() {
    let cases = [
        (
            "leaky d = 2 λ = 0.9",
            DynamicSpec::Leaky(LeakyConfig::new(1000, 0.9, 2)),
            Horizon::new(2000, 40_000),
        ),
        (
            "rbb k = 4",
            DynamicSpec::Rbb(RbbConfig::one_choice(1000, 4000)),
            Horizon::new(5000, 40_000),
        ),
        ("azar d = 2", DynamicSpec::Azar(AzarConfig::new(1000, 1000, 2)), Horizon::new(50, 4000)),
    ];
    for (i, (what, spec, horizon)) in cases.into_iter().enumerate() {
        let s = run(spec, horizon, 40 + i as u64);
        for (metric, m) in
            [("max", &s.max_load), ("total", &s.total_load), ("empty", &s.empty_bins)]
        {
            if m.stderr == 0.0 {
                continue; // constant (the total of a conserving process)
            }
            eprintln!(
                "{what} {metric}: halves {:.4} / {:.4}, drift z = {:.2}",
                m.first_half, m.second_half, m.drift_z
            );
            assert!(m.drift_z.abs() <= T19_ALPHA_001, "{what} {metric}: drift z = {}", m.drift_z);
        }
    }
}

#[test]
fn azar_conserves_balls() {
    for d in [1, 2, 3] {
        let spec = DynamicSpec::Azar(AzarConfig::new(200, 777, d));
        simulate_observed(&spec, &Horizon::new(0, 200), &mut sim_rng(d.into()), |_, m| {
            assert_eq!(m.total_load, 777);
        })
        .unwrap();
    }
}

/// Infinite Azar with d = 1 re-throws a uniformly random ball uniformly, so its stationary law
/// is m independent uniform balls: the empty fraction is exactly (1 − 1/n)^m. Mixing takes
/// about m·ln m steps (every ball re-thrown once), i.e. 7 rounds of n steps at m = n = 1000;
/// the burn-in is 50 rounds.
#[test]
fn azar_one_choice_empty_fraction_is_multinomial() {
    let (n, m) = (1000usize, 1000u64);
    let s = run(DynamicSpec::Azar(AzarConfig::new(n, m, 1)), Horizon::new(50, 4000), 51);
    let want = (1.0 - 1.0 / n as f64).powi(m as i32);
    assert_close("azar d = 1 empty fraction", &s.empty_fraction(), want, 0.0, 1e-3);
}

/// Infinite Azar with d = 2 and m = n: max load ln ln n / ln 2 + O(1) (about 3) against
/// One-Choice's ≈ ln n / ln ln n.
#[test]
fn azar_two_choice_keeps_the_max_small() {
    let h = Horizon::new(50, 2000);
    let two = run(DynamicSpec::Azar(AzarConfig::new(1000, 1000, 2)), h.clone(), 61);
    let one = run(DynamicSpec::Azar(AzarConfig::new(1000, 1000, 1)), h, 62);
    eprintln!("azar max load: d = 1 {:.3}, d = 2 {:.3}", one.max_load.mean, two.max_load.mean);
    assert!(two.max_load.mean < 4.0 && two.peak_max_load <= 5);
    assert!(one.max_load.mean > two.max_load.mean + 1.0);
}

/// Greedy[d] re-throws lower the RBB max load for both views.
#[test]
fn rbb_d_choice_lowers_the_max() {
    let h = Horizon::new(2000, 4000);
    let one = run(DynamicSpec::Rbb(RbbConfig::one_choice(1000, 4000)), h.clone(), 71);
    for view in [RethrowView::AfterReleases, RethrowView::RoundStart] {
        let two = run(DynamicSpec::Rbb(RbbConfig::d_choice(1000, 4000, 2, view)), h.clone(), 72);
        eprintln!(
            "rbb k = 4 max: d = 1 {:.2}, d = 2 {view:?} {:.2}",
            one.max_load.mean, two.max_load.mean
        );
        assert!(two.max_load.mean * 2.0 < one.max_load.mean);
    }
}

#[test]
fn runs_are_deterministic() {
    let spec = DynamicSpec::Leaky(LeakyConfig::new(500, 0.75, 2));
    let h = Horizon::new(100, 1000);
    assert_eq!(run(spec.clone(), h.clone(), 9), run(spec, h, 9));
}

fn first_rounds(spec: DynamicSpec, seed: u64) -> Vec<(u32, u64, u64, u64)> {
    let mut v = Vec::new();
    simulate_observed(
        &spec,
        &Horizon::new(0, 6).with_batches(2),
        &mut sim_rng(seed),
        |_, m: &RoundMetrics| {
            v.push((m.max_load, m.total_load, m.empty_bins, m.moved));
        },
    )
    .unwrap();
    v
}

/// Value stability: the first rounds for fixed seeds, as (max, total, empty, moved). Changing
/// these is a value-breaking change (record it in the CHANGELOG).
#[test]
fn value_stability() {
    let got = [
        first_rounds(DynamicSpec::Rbb(RbbConfig::one_choice(20, 60)), 42),
        first_rounds(DynamicSpec::Leaky(LeakyConfig::new(20, 0.9, 2)), 42),
        first_rounds(DynamicSpec::Azar(AzarConfig::new(20, 60, 2)), 42),
    ];
    assert_eq!(got[0], PINNED_RBB);
    assert_eq!(got[1], PINNED_LEAKY);
    assert_eq!(got[2], PINNED_AZAR);
}

const PINNED_RBB: [(u32, u64, u64, u64); 6] = [
    (5, 60, 0, 20),
    (7, 60, 0, 20),
    (7, 60, 2, 20),
    (6, 60, 3, 18),
    (6, 60, 2, 17),
    (7, 60, 1, 18),
];
const PINNED_LEAKY: [(u32, u64, u64, u64); 6] = [
    (3, 5, 17, 16),
    (3, 8, 16, 17),
    (2, 11, 12, 18),
    (2, 13, 10, 19),
    (2, 12, 10, 17),
    (4, 15, 9, 19),
];
const PINNED_AZAR: [(u32, u64, u64, u64); 6] = [
    (5, 60, 1, 20),
    (5, 60, 1, 20),
    (4, 60, 0, 20),
    (5, 60, 0, 20),
    (5, 60, 0, 20),
    (5, 60, 0, 20),
];
