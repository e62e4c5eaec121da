//! Incremental values equal the exact O(n) recomputation, for every potential, unit and
//! Exp(1) weights, sequential and batched, Two-Choice and One-Choice (whose potentials grow
//! without bound, exercising the log-scale and overflow paths), on the bin engine and (unit
//! weights) the level engine. Tolerances: [`ballast_potential::tolerance`].
//!
//! The 10⁵-ball variants always run; the 10⁷-ball variants take a few seconds in release
//! mode and are ignored by default: `cargo test -p ballast-potential --release -- --ignored`.

use ballast_core::{
    sim_rng, simulate_observed, Engine, LoadState, Observer, ProcessSpec, RunSpec, Weights,
};
use ballast_potential::tolerance::{REAL_EXP_LN, REAL_REL, UNIT_EXACT_REL, UNIT_EXP_LN};
use ballast_potential::{recompute, recompute_ln, PotentialSpec, Potentials};

/// Wraps a tracker and compares it with the exact recomputation at every observation point.
struct Check {
    pot: Potentials,
    /// Largest deviation seen per potential (log difference or relative difference).
    worst: Vec<f64>,
    checks: u64,
    unit_mode_seen: Option<bool>,
}

impl Check {
    fn new(specs: &[PotentialSpec]) -> Self {
        Self {
            pot: Potentials::new(specs).unwrap(),
            worst: vec![0.0; specs.len()],
            checks: 0,
            unit_mode_seen: None,
        }
    }
}

impl Observer for Check {
    fn on_ball<S: LoadState>(&mut self, state: &S, bin: usize, weight: f64) {
        self.pot.on_ball(state, bin, weight);
    }

    fn on_observation<S: LoadState>(&mut self, state: &S) {
        self.pot.on_observation(state);
        let specs = self.pot.specs().to_vec();
        let exact = recompute(&specs, state);
        let exact_ln = recompute_ln(&specs, state);
        for (k, spec) in specs.iter().enumerate() {
            let dev = if spec.alpha().is_some() {
                (self.pot.ln_value(k) - exact_ln[k]).abs()
            } else {
                (self.pot.value(k) - exact[k]).abs() / exact[k].abs().max(1.0)
            };
            assert!(dev.is_finite(), "{spec}: deviation {dev}");
            self.worst[k] = self.worst[k].max(dev);
        }
        self.checks += 1;
        self.unit_mode_seen = Some(self.pot.is_unit_mode());
    }
}

fn specs() -> Vec<PotentialSpec> {
    PotentialSpec::parse_all([
        "exponential:alpha=0.1",
        "hyperbolic:alpha=0.5",
        "exponential:alpha=4",
        "quadratic",
        "absolute",
    ])
    .unwrap()
}

/// Runs every combination with `m` balls on `n` bins and checks the worst deviations.
fn check_all(n: u64, m: u64, checks_per_run: u64) {
    let specs = specs();
    let mut seed = 0;
    for process in [ProcessSpec::DChoice { d: 2 }, ProcessSpec::OneChoice] {
        let runs = [
            (Weights::Unit, Engine::Bins),
            (Weights::Unit, Engine::Levels),
            (Weights::Exp { mean: 1.0 }, Engine::Bins),
        ];
        for (weights, engine) in runs {
            for batched in [false, true] {
                seed += 1;
                let mut spec = RunSpec::new(process.clone(), n, m).weights(weights).engine(engine);
                spec = if batched {
                    spec.batched(m / checks_per_run)
                } else {
                    RunSpec { observe_every: Some(m / checks_per_run), ..spec }
                };
                let mut check = Check::new(&specs);
                simulate_observed(&spec, &mut sim_rng(seed), &mut check).unwrap();
                let unit = weights == Weights::Unit;
                let what = format!("{process:?} {weights:?} {engine:?} batched={batched}");
                assert_eq!(check.checks, checks_per_run, "{what}");
                assert_eq!(check.unit_mode_seen, Some(unit), "{what}: tracker mode");
                assert_eq!(check.pot.balls(), m);
                for (k, spec) in specs.iter().enumerate() {
                    let tol = match (unit, spec.alpha().is_some()) {
                        (true, true) => UNIT_EXP_LN,
                        (true, false) => UNIT_EXACT_REL,
                        (false, true) => REAL_EXP_LN,
                        (false, false) => REAL_REL,
                    };
                    let worst = check.worst[k];
                    eprintln!("{what} {spec}: worst deviation {worst:.3e} (tolerance {tol:.0e})");
                    assert!(worst <= tol, "{what} {spec}: {worst:e} > {tol:e}");
                }
            }
        }
    }
}

#[test]
fn incremental_equals_recomputed_1e5_balls() {
    check_all(50, 100_000, 50);
}

/// The bar: 10⁷ balls. About 12 s in release (the test command of the README and CI);
/// slow in a debug build.
#[test]
fn incremental_equals_recomputed_1e7_balls() {
    check_all(100, 10_000_000, 200);
}
