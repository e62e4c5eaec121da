//! The engine's bookkeeping contract: observation points, trajectories, observer hooks,
//! partial last batches, and validation errors.

use ballast_core::{
    sim_rng, simulate_observed, simulate_seeded, Error, LoadState, Observer, ProcessSpec, RunSpec,
    Weights,
};

#[derive(Default)]
struct Count {
    balls: u64,
    weight: f64,
    observations: u64,
    sum_normalized_at_end: f64,
}

impl Observer for Count {
    fn on_ball<S: LoadState>(&mut self, _s: &S, _bin: usize, w: f64) {
        self.balls += 1;
        self.weight += w;
    }
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        self.observations += 1;
        self.sum_normalized_at_end = (0..s.n()).map(|i| s.normalized(i)).sum();
    }
}

#[test]
fn sequential_observation_points_and_trajectory() {
    let mut spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 50, 1000);
    spec.observe_every = Some(300);
    spec.record_trajectory = true;
    let mut count = Count::default();
    let out = simulate_observed(&spec, &mut sim_rng(1), &mut count).expect("valid");
    // Observations at 300, 600, 900 and the end (1000).
    assert_eq!(out.observations, 4);
    assert_eq!(out.trajectory.len(), 4);
    assert_eq!(*out.trajectory.last().expect("non-empty"), out.final_gap);
    assert_eq!(out.max_gap, out.trajectory.iter().copied().fold(f64::MIN, f64::max));
    assert_eq!((count.balls, count.observations), (1000, 4));
    assert_eq!(count.weight, 1000.0);
    assert!(count.sum_normalized_at_end.abs() < 1e-9);
}

#[test]
fn batched_partial_last_batch_is_observed() {
    let mut spec = RunSpec::new(ProcessSpec::OneChoice, 10, 95).batched(20);
    spec.record_trajectory = true;
    let out = simulate_seeded(&spec, 3).expect("valid");
    assert_eq!(out.observations, 5); // 20, 40, 60, 80, 95
    assert_eq!(out.balls, 95);
    assert_eq!(out.samples, 95);
}

#[test]
fn weighted_observer_sees_weights() {
    let spec = RunSpec::new(ProcessSpec::OneChoice, 10, 10_000)
        .batched(100)
        .weights(Weights::Exp { mean: 2.0 });
    let mut count = Count::default();
    simulate_observed(&spec, &mut sim_rng(5), &mut count).expect("valid");
    // Mean weight 2: total weight of 10 000 balls is 20 000 ± 4·200 (sd = 2·sqrt(10 000)).
    assert!((count.weight - 20_000.0).abs() < 800.0, "{}", count.weight);
    assert!(count.sum_normalized_at_end.abs() < 1e-6);
}

#[test]
fn invalid_specs_name_the_field_and_allowed_values() {
    let cases = [
        (RunSpec::new(ProcessSpec::OnePlusBeta { beta: 1.5 }, 10, 10), "beta", "[0, 1]"),
        (RunSpec::new(ProcessSpec::OneChoice, 0, 10), "n", "1..="),
        (RunSpec::new(ProcessSpec::OneChoice, 10, 10).batched(0), "b", ">= 1"),
        (RunSpec::new(ProcessSpec::DChoice { d: 0 }, 10, 10), "d", "1..=1024"),
        (RunSpec::new(ProcessSpec::GMyopic { g: -1.0 }, 10, 10), "g", ">= 0"),
        (
            RunSpec::new(ProcessSpec::OneChoice, 10, 10).weights(Weights::Exp { mean: 0.0 }),
            "weights.mean",
            "positive",
        ),
    ];
    for (spec, field, allowed) in cases {
        let err = simulate_seeded(&spec, 1).expect_err("must be rejected");
        let msg = err.to_string();
        assert!(matches!(err, Error::Invalid { .. }));
        assert!(msg.contains(field) && msg.contains(allowed), "{msg}");
    }
}
