//! The observation layer's final-load metrics ([`ballast_core::FinalMetrics`]), built in one
//! place for every engine.
//!
//! - Every path that builds an outcome (the bin engine with unit, weighted and capacity
//!   loads, sequential, batched and delayed; the level engine sequential and batched; the
//!   reallocation loops on bins and levels) reports as `finals` the metrics of the loads it
//!   ends with: the loads are read through the observer at the last observation point (the
//!   end), or, for the reallocation loops (no observer), fixed by the run (one ball: one
//!   non-empty bin). Deterministic (fixed seeds); each comparison is exact.
//! - The levels every load state answers cover each bin once with its load on the gap's
//!   scale: the counts sum to n and the loads to W (normalised loads under capacities).
//! - A deliberately wrong reading (`finals` taken from the state before the last ball) is
//!   told apart by the same comparison (test the test).

use ballast_core::capacity_loads::CapacityLoads;
use ballast_core::{
    sim_rng, simulate, simulate_observed, Capacities, DelayMode, Engine, FinalMetrics, LoadState,
    Observer, ProcessSpec, RunSpec, Setting, UnitLoads, WeightedLoads, Weights,
};

/// The loads at the last observation point, as `f64`, and the empty bins among them.
#[derive(Default)]
struct Last(Vec<f64>);

impl Observer for Last {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        let mut levels = Vec::new();
        s.for_each_level(|x, c| levels.extend(std::iter::repeat_n(x, c as usize)));
        self.0 = levels;
    }
}

impl Last {
    fn empty_bins(&self) -> u64 {
        self.0.iter().filter(|&&x| x == 0.0).count() as u64
    }
}

fn specs() -> Vec<RunSpec> {
    let two = || RunSpec::new(ProcessSpec::DChoice { d: 2 }, 64, 48);
    vec![
        two(),
        two().engine(Engine::Levels),
        two().batched(8),
        two().batched(8).engine(Engine::Levels),
        RunSpec::new(ProcessSpec::OneChoice, 64, 40).engine(Engine::Levels),
        two().weights(Weights::Exp { mean: 1.0 }),
        two().capacities(Capacities {
            law: ballast_core::capacity::CapacityLaw::Explicit(
                (0..64).map(|i| 1.0 + f64::from(i % 3)).collect::<Vec<_>>().into(),
            ),
            ..Capacities::UNIT
        }),
        RunSpec { setting: Setting::Delay { tau: 4, mode: DelayMode::Random }, ..two() },
    ]
}

#[test]
fn every_engine_reports_the_metrics_of_its_final_loads() {
    for spec in specs() {
        let mut last = Last::default();
        let out = simulate_observed(&spec, &mut sim_rng(5), &mut last).expect("runs");
        assert_eq!(last.0.len(), 64, "{spec:?}");
        assert!(last.empty_bins() > 0 && last.empty_bins() < 64, "a telling case: {spec:?}");
        assert_eq!(out.finals.empty_bins, last.empty_bins(), "{spec:?}");
    }
}

#[test]
fn the_reallocation_loops_report_their_final_loads() {
    // One ball: exactly one bin is not empty, on every store (fast d <= 4, generic d = 5,
    // bins and levels, with and without a move budget).
    for process in [
        ProcessSpec::Equalize { d: 2 },
        ProcessSpec::Equalize { d: 5 },
        ProcessSpec::EqualizeMoves { d: 2, moves: 1 },
    ] {
        for engine in [Engine::Bins, Engine::Levels] {
            let spec = RunSpec::new(process.clone(), 10, 1).engine(engine);
            let out = simulate(&spec, &mut sim_rng(3)).expect("runs");
            assert_eq!(out.finals.empty_bins, 9, "{spec:?}");
            assert_eq!((out.observations, out.max_load, out.min_load), (1, 1.0, 0.0));
        }
    }
}

#[test]
fn a_reading_before_the_last_ball_is_told_apart() {
    // The flawed reading: the state after m − 1 balls (the same seed, one ball fewer). With
    // One-Choice on 64 bins, the last ball lands in an empty bin with probability about
    // 0.5, so some seed of the first ten tells the two apart; the comparison of the test
    // above then fails for the flawed reading.
    let told = (0..10).any(|seed| {
        let full = RunSpec::new(ProcessSpec::OneChoice, 64, 40);
        let short = RunSpec::new(ProcessSpec::OneChoice, 64, 39);
        let mut last = Last::default();
        simulate_observed(&full, &mut sim_rng(seed), &mut last).expect("runs");
        let flawed = simulate(&short, &mut sim_rng(seed)).expect("runs").finals.empty_bins;
        flawed != last.empty_bins()
    });
    assert!(told);
}

#[test]
fn levels_cover_every_bin_once_on_the_gaps_scale() {
    let mut unit = UnitLoads::new(5, false);
    let mut weighted = WeightedLoads::new(5, 1.0);
    let mut cap = CapacityLoads::new(vec![1.0, 2.0, 4.0, 1.0, 1.0], vec![0.0; 5], None);
    let mut rng = sim_rng(9);
    for i in [0, 0, 3, 2, 2, 2] {
        unit.add(i, ());
        let w = weighted.draw_inc(&mut rng);
        weighted.add(i, w);
        cap.add(i, 1.0);
    }
    assert_eq!(sums(&unit), (5, 6.0));
    let (bins, w) = sums(&weighted);
    assert_eq!(bins, 5);
    assert!((w - weighted.total()).abs() < 1e-9, "{w} {}", weighted.total());
    // Normalised loads: 2/1 + 3/4 + 1/1.
    assert_eq!(sums(&cap), (5, 3.75));
}

/// The bins and the total load over the levels of `s`.
fn sums<S: LoadState>(s: &S) -> (u64, f64) {
    let (mut bins, mut load) = (0u64, 0.0f64);
    s.for_each_level(|x, c| {
        bins += c;
        load += x * c as f64;
    });
    (bins, load)
}

#[test]
fn names_and_values_agree() {
    // The update stays when metrics are added, so this test needs no edit then.
    #[allow(clippy::needless_update)]
    let f = FinalMetrics { empty_bins: 7, ..FinalMetrics::default() };
    assert_eq!(FinalMetrics::NAMES.len(), f.values().len());
    for (i, name) in FinalMetrics::NAMES.iter().enumerate() {
        assert_eq!(FinalMetrics::value_of(&f.values(), name), Some(f.values()[i]));
    }
    assert_eq!(FinalMetrics::value_of(&f.values(), "empty_bins"), Some(7.0));
    assert_eq!(FinalMetrics::value_of(&f.values(), "max_gap"), None);
    assert_eq!(FinalMetrics::value_of(&[], "empty_bins"), None);
}
