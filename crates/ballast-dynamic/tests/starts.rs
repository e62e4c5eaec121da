//! Start states of the round-based models: the loads before the first round come from the
//! core registry's starts; without one the models begin as before (no value changes); RBB
//! and the infinite Azar process take only starts of exactly m balls.
//!
//! The law test: RBB from `one_bin` (n = 4 bins, m = 6 balls, all in bin 0) releases one
//! ball in its first round, so the first-round state is bin 0 with 5 balls plus the
//! re-thrown ball in bin j: with One-Choice j is uniform (1/4 each); with Greedy[2] (random
//! ties) the ball returns to bin 0 only when both samples are bin 0 (1/16), else it goes to
//! one of the three empty bins (5/16 each). 20 000 runs each (seeds 0..20 000), Pearson's
//! chi-square with 3 degrees of freedom at α = 0.001 (critical 16.27, `ballast_testkit`);
//! each law's test also rejects the other law (the wrong variant).

use ballast_core::{sim_rng, Start};
use ballast_dynamic::{
    simulate, simulate_observed, uniform_loads, AzarConfig, DynamicSpec, Horizon, LeakyBins,
    LeakyConfig, Rbb, RbbConfig, RethrowView, RoundProcess,
};
use ballast_testkit::{chi2_critical, chi2_gof};

const RUNS: u64 = 20_000;

/// Counts of the bin that holds the re-thrown ball after the first round from `one_bin`.
fn first_round_counts(d: u32) -> Vec<u64> {
    let cfg = RbbConfig::d_choice(4, 6, d, RethrowView::AfterReleases)
        .with_start(Some(Start::OneBin { balls: 6 }));
    let mut counts = vec![0u64; 4];
    for seed in 0..RUNS {
        let mut rng = sim_rng(seed);
        let mut rbb = Rbb::starting(&cfg, &mut rng).unwrap();
        assert_eq!(rbb.loads(), &[6, 0, 0, 0], "the start is the state before round 1");
        let m = rbb.round(&mut rng);
        assert_eq!((m.moved, m.total_load), (1, 6));
        let loads = rbb.loads();
        let j = if loads[0] == 6 { 0 } else { loads.iter().position(|&x| x == 1).unwrap() };
        assert_eq!(loads.iter().map(|&x| u64::from(x)).sum::<u64>(), 6);
        assert_eq!(m.max_load, if j == 0 { 6 } else { 5 });
        assert_eq!(m.empty_bins, if j == 0 { 3 } else { 2 });
        counts[j] += 1;
    }
    counts
}

#[test]
fn rbb_from_one_bin_has_the_exact_first_round_law() {
    let one = [0.25; 4];
    let two = [1.0 / 16.0, 5.0 / 16.0, 5.0 / 16.0, 5.0 / 16.0];
    let crit = chi2_critical(3);
    for (d, right, wrong) in [(1, one, two), (2, two, one)] {
        let counts = first_round_counts(d);
        let (stat, df) = chi2_gof(&counts, &right);
        assert_eq!(df, 3);
        assert!(stat < crit, "d = {d}: {counts:?}: chi2 {stat} >= {crit}");
        let (bad, _) = chi2_gof(&counts, &wrong);
        assert!(bad > crit, "d = {d}: the wrong law is not rejected: {bad}");
        println!("d = {d}: {counts:?}, chi2 {stat:.2}, wrong law {bad:.0}, critical {crit:.2}");
    }
}

#[test]
fn without_a_start_the_models_begin_as_before() {
    // The uniform start given explicitly (a `file` of the same loads) draws nothing and
    // gives the same runs as no start; leaky bins likewise from explicit empty bins.
    let h = Horizon::new(20, 200);
    let rbb = |d| DynamicSpec::Rbb(RbbConfig::d_choice(50, 130, d, RethrowView::AfterReleases));
    let azar = DynamicSpec::Azar(AzarConfig::new(50, 130, 2));
    let loads: Vec<u64> = uniform_loads(50, 130).into_iter().map(u64::from).collect();
    for spec in [rbb(1), rbb(2), azar] {
        let given = spec.clone().with_start(Some(Start::Loads(loads.clone())));
        let a = simulate(&spec, &h, &mut sim_rng(4)).unwrap();
        let b = simulate(&given, &h, &mut sim_rng(4)).unwrap();
        assert_eq!(a, b, "{spec:?}");
    }
    let leaky = DynamicSpec::Leaky(LeakyConfig::new(50, 0.7, 2));
    let empty = leaky.clone().with_start(Some(Start::Empty));
    let a = simulate(&leaky, &h, &mut sim_rng(4)).unwrap();
    assert_eq!(a, simulate(&empty, &h, &mut sim_rng(4)).unwrap());
}

#[test]
fn a_random_start_draws_from_the_runs_generator_first() {
    let cfg = RbbConfig::one_choice(30, 90).with_start(Some(Start::Random { balls: 90 }));
    let h = Horizon::new(0, 50);
    let mut seen = Vec::new();
    simulate_observed(&DynamicSpec::Rbb(cfg.clone()), &h, &mut sim_rng(9), |_, m| seen.push(*m))
        .unwrap();
    // By hand: the One-Choice start from the same generator, then the rounds.
    let mut rng = sim_rng(9);
    let loads: Vec<u64> =
        Start::Random { balls: 90 }.unit_loads(30, &mut rng).into_iter().map(u64::from).collect();
    let fixed = cfg.clone().with_start(Some(Start::Loads(loads)));
    let mut rbb = Rbb::new(&fixed).unwrap();
    let by_hand: Vec<_> = (0..50).map(|_| rbb.round(&mut rng)).collect();
    assert_eq!(seen, by_hand);
}

#[test]
fn leaky_bins_and_azar_start_where_told_and_rbb_recovers_from_one_bin() {
    // Leaky bins without arrivals from `uniform:k=3`: every bin loses one ball a round.
    let leaky = LeakyConfig::new(10, 0.0, 1).with_start(Some(Start::Uniform { k: 3 }));
    let mut p = LeakyBins::starting(&leaky, &mut sim_rng(1)).unwrap();
    assert_eq!(p.loads(), &[3; 10]);
    let maxes: Vec<u32> = (0..4).map(|_| p.round(&mut sim_rng(2)).max_load).collect();
    assert_eq!(maxes, [2, 1, 0, 0]);
    // The infinite Azar process from one bin keeps its m balls.
    let azar = AzarConfig::new(8, 20, 2).with_start(Some(Start::OneBin { balls: 20 }));
    let spec = DynamicSpec::Azar(azar);
    let mut first = None;
    simulate_observed(&spec, &Horizon::new(0, 30), &mut sim_rng(3), |t, m| {
        assert_eq!(m.total_load, 20);
        if t == 0 {
            first = Some(m.max_load);
        }
    })
    .unwrap();
    // One round is n = 8 delete-insert steps: bin 0 loses at most 8 balls.
    assert!(first.unwrap() >= 12, "{first:?}");
    // RBB from one bin: bin 0 loses at most one ball a round, so the max load of round t
    // is at least m − 1 − t; after 4m rounds it is back near its stationary level (a few
    // balls for m = n = 100: at most 12 in the last 100 rounds of every run here).
    let cfg = RbbConfig::one_choice(100, 100).with_start(Some(Start::OneBin { balls: 100 }));
    for seed in 0..5 {
        let mut maxes = Vec::new();
        simulate_observed(
            &DynamicSpec::Rbb(cfg.clone()),
            &Horizon::new(0, 400),
            &mut sim_rng(seed),
            |t, m| {
                assert!(u64::from(m.max_load) + 1 + t >= 100, "round {t}: {}", m.max_load);
                maxes.push(m.max_load);
            },
        )
        .unwrap();
        assert!(maxes[300..].iter().all(|&x| x <= 12), "seed {seed}: {:?}", &maxes[300..]);
    }
}

#[test]
fn starts_the_models_cannot_take_are_refused_with_the_reason() {
    let rbb = RbbConfig::one_choice(10, 50);
    for (start, needle) in [
        (Start::OneBin { balls: 40 }, "exactly m balls"),
        (Start::Uniform { k: 4 }, "holding 40 balls with m = 50"),
        (Start::Loads(vec![5; 9]), "one load per bin"),
        (Start::Empty, "exactly m balls"),
    ] {
        let e = rbb.clone().with_start(Some(start)).validate().unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
    assert!(rbb.clone().with_start(Some(Start::Uniform { k: 5 })).validate().is_ok());
    let e = AzarConfig::new(10, 50, 2).with_start(Some(Start::Random { balls: 49 })).validate();
    assert!(e.unwrap_err().to_string().contains("exactly m balls"));
    let leaky = LeakyConfig::new(10, 0.5, 1).with_start(Some(Start::Random { balls: 7 }));
    assert!(leaky.validate().is_ok());
    // The registry builds a model from a start, or says why not.
    let def = ballast_dynamic::registry::find("rbb").unwrap();
    let point = |k: &str| match k {
        "n" => Some(10.0),
        "m" => Some(50.0),
        _ => None,
    };
    assert!(def.build_from(&[], &point, Some(Start::OneBin { balls: 50 })).is_ok());
    let e = def.build_from(&[], &point, Some(Start::OneBin { balls: 5 })).unwrap_err();
    assert!(e.to_string().contains("exactly m balls"), "{e}");
}
