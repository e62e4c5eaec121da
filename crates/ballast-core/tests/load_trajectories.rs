//! `RunSpec::record_loads`: the largest and smallest load at every observation point, on both
//! engines and in every setting. Each entry equals the state an observer sees at that point
//! (or, for the loops without observers, the final loads and the gap relation), and the
//! recording only observes: everything else of the outcome is unchanged, draw for draw.

use ballast_core::delay::DelayMode;
use ballast_core::{
    sim_rng, simulate_observed, simulate_seeded, Engine, LoadState, Observer, ProcessSpec, RunSpec,
    Setting, Start, Weights,
};

/// The largest and smallest load the engine shows at each observation point.
#[derive(Default)]
struct Seen(Vec<(f64, f64)>);

impl Observer for Seen {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        self.0.push(s.max_min());
    }
}

fn with_loads(spec: &RunSpec) -> RunSpec {
    RunSpec { record_loads: true, record_trajectory: true, ..spec.clone() }
}

/// Every engine and setting that runs through an observer.
fn observed_cases() -> Vec<RunSpec> {
    let two = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 2000);
    let seq = RunSpec { observe_every: Some(300), ..two.clone() };
    vec![
        seq.clone().engine(Engine::Bins),
        seq.clone().engine(Engine::Levels),
        two.clone().batched(150).engine(Engine::Bins),
        two.clone().batched(150).engine(Engine::Levels),
        // Weighted, batched (ball by ball) and sequential.
        two.clone().batched(150).weights(Weights::Exp { mean: 1.0 }).engine(Engine::Bins),
        RunSpec { weights: Weights::Exp { mean: 2.0 }, ..seq.clone() },
        // A start state, a thinning process, the kernels (sequential Two-Choice above) and
        // adaptive probing.
        RunSpec { start: Start::OneBin { balls: 50 }, ..seq.clone().engine(Engine::Bins) },
        RunSpec { start: Start::OneBin { balls: 50 }, ..seq.clone().engine(Engine::Levels) },
        RunSpec {
            observe_every: Some(250),
            ..RunSpec::new(ProcessSpec::Threshold { f: 1.0 }, 100, 2000)
        },
        RunSpec {
            observe_every: Some(400),
            ..RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, 100, 2000).engine(Engine::Levels)
        },
    ]
}

#[test]
fn load_trajectories_are_the_observed_max_and_min_loads() {
    for (k, spec) in observed_cases().into_iter().enumerate() {
        let rec = with_loads(&spec);
        let mut seen = Seen::default();
        let out = simulate_observed(&rec, &mut sim_rng(40 + k as u64), &mut seen).unwrap();
        let (max, min): (Vec<f64>, Vec<f64>) = seen.0.iter().copied().unzip();
        assert_eq!(out.max_trajectory, max, "case {k}: {spec:?}");
        assert_eq!(out.min_trajectory, min, "case {k}");
        assert_eq!(out.max_trajectory.len() as u64, out.observations, "case {k}");
        assert_eq!(out.max_trajectory.last(), Some(&out.max_load), "case {k}");
        assert_eq!(out.min_trajectory.last(), Some(&out.min_load), "case {k}");
        assert!(out.max_trajectory.windows(2).all(|w| w[0] <= w[1]), "case {k}: max never falls");
        // Only observes: the same outcome without the recording.
        let mut plain = out.clone();
        (plain.max_trajectory, plain.min_trajectory) = (Vec::new(), Vec::new());
        let mut seen_again = Seen::default();
        let base = RunSpec { record_trajectory: true, ..spec.clone() };
        let without =
            simulate_observed(&base, &mut sim_rng(40 + k as u64), &mut seen_again).unwrap();
        assert_eq!(plain, without, "case {k}");
        assert!(without.max_trajectory.is_empty() && without.min_trajectory.is_empty());
    }
}

#[test]
fn load_trajectories_of_the_loops_without_observers() {
    // The delay setting and equalize keep their own loops: the last entry is the final load,
    // the max follows the gap (unit balls: max = gap + balls/n at each point, balls a
    // multiple of `observe_every`), and the min never exceeds the mean.
    let delay = RunSpec {
        setting: Setting::Delay { tau: 20, mode: DelayMode::Random },
        observe_every: Some(250),
        ..RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 2000)
    };
    let equalize = RunSpec {
        observe_every: Some(250),
        ..RunSpec::new(ProcessSpec::Equalize { d: 2 }, 100, 2000)
    };
    for spec in [delay, equalize] {
        let rec = with_loads(&spec);
        let out = simulate_seeded(&rec, 8).unwrap();
        assert_eq!(out.max_trajectory.len(), 8, "{spec:?}");
        assert_eq!(out.min_trajectory.len(), 8);
        assert_eq!(out.max_trajectory.last(), Some(&out.max_load));
        assert_eq!(out.min_trajectory.last(), Some(&out.min_load));
        for (j, ((&mx, &mn), &gap)) in
            out.max_trajectory.iter().zip(&out.min_trajectory).zip(&out.trajectory).enumerate()
        {
            let mean = 250.0 * (j + 1) as f64 / 100.0;
            assert!((mx - mean - gap).abs() < 1e-9, "{j}: {mx} {gap}");
            assert!(mn <= mean && mn >= 0.0, "{j}: {mn}");
        }
        let mut plain = out.clone();
        (plain.max_trajectory, plain.min_trajectory) = (Vec::new(), Vec::new());
        let base = RunSpec { record_trajectory: true, ..spec.clone() };
        assert_eq!(plain, simulate_seeded(&base, 8).unwrap(), "only observes");
    }
}

#[test]
fn a_wrong_recording_is_caught() {
    // The power of the first test's comparison: the gap trajectory (max − W/n) in place of
    // the max differs from what the observer saw.
    let spec = with_loads(&observed_cases()[0]);
    let mut seen = Seen::default();
    let out = simulate_observed(&spec, &mut sim_rng(40), &mut seen).unwrap();
    let max: Vec<f64> = seen.0.iter().map(|p| p.0).collect();
    assert_ne!(out.trajectory, max);
    assert_eq!(out.max_trajectory, max);
}
