//! Potential values on hand-built load sequences, against closed forms, and the tracker's
//! behaviour at the edges (one bin, attaching mid-run, switching from unit to weighted balls,
//! loads that stop being what the tracker recorded).

use approx::assert_relative_eq;
use ballast_core::{LoadState, Observer, UnitLoads, WeightedLoads};
use ballast_potential::tolerance::{REAL_EXP_LN, REAL_REL, UNIT_EXACT_REL, UNIT_EXP_LN};
use ballast_potential::{recompute, recompute_ln, PotentialSpec, Potentials};

fn specs(alpha: f64) -> Vec<PotentialSpec> {
    vec![
        PotentialSpec::Exponential { alpha },
        PotentialSpec::Hyperbolic { alpha },
        PotentialSpec::Quadratic,
        PotentialSpec::Absolute,
    ]
}

/// The four potentials of explicit loads, straight from the definitions.
fn closed_form(alpha: f64, loads: &[f64]) -> [f64; 4] {
    let avg = loads.iter().sum::<f64>() / loads.len() as f64;
    let ys: Vec<f64> = loads.iter().map(|x| x - avg).collect();
    [
        ys.iter().map(|y| (alpha * y).exp()).sum(),
        ys.iter().map(|y| (alpha * y).exp() + (-alpha * y).exp()).sum(),
        ys.iter().map(|y| y * y).sum(),
        ys.iter().map(|y| y.abs()).sum(),
    ]
}

#[test]
fn unit_sequence_matches_closed_forms_after_every_ball() {
    let alpha = 0.7;
    let mut state = UnitLoads::new(4, false);
    let mut pot = Potentials::new(&specs(alpha)).unwrap();
    let mut loads = [0.0f64; 4];
    for (t, &bin) in [0usize, 0, 1, 2, 0, 3, 3, 3, 3, 1, 0, 2].iter().enumerate() {
        state.add(bin, ());
        loads[bin] += 1.0;
        pot.on_ball(&state, bin, 1.0);
        let want = closed_form(alpha, &loads);
        for (k, w) in want.iter().enumerate() {
            assert_relative_eq!(pot.value(k), *w, max_relative = 1e-13, epsilon = 1e-13);
        }
        if t == 4 {
            // loads [3, 1, 1, 0]: y = [1.75, −0.25, −0.25, −1.25]
            assert_eq!(pot.value(2), 4.75);
            assert_eq!(pot.value(3), 3.5);
        }
    }
    assert!(pot.is_unit_mode());
    assert_eq!(pot.balls(), 12);
}

#[test]
fn weighted_sequence_matches_closed_forms_after_every_ball() {
    let alpha = 0.3;
    let mut state = WeightedLoads::new(3, 1.0);
    let mut pot = Potentials::new(&specs(alpha)).unwrap();
    let mut loads = [0.0f64; 3];
    let balls = [(0, 0.5), (1, 2.0), (0, 0.25), (2, 3.5), (1, 0.125), (2, 0.0625), (0, 7.0)];
    for (t, &(bin, w)) in balls.iter().enumerate() {
        state.add(bin, w);
        loads[bin] += w;
        pot.on_ball(&state, bin, w);
        let want = closed_form(alpha, &loads);
        for (k, w) in want.iter().enumerate() {
            assert_relative_eq!(pot.value(k), *w, max_relative = 1e-13, epsilon = 1e-13);
        }
        if t == 2 {
            // loads [0.75, 2, 0], W/n = 11/12: y = [−1/6, 13/12, −11/12]
            assert_relative_eq!(pot.value(2), 294.0 / 144.0, max_relative = 1e-14);
            assert_relative_eq!(pot.value(3), 26.0 / 12.0, max_relative = 1e-14);
        }
    }
    assert!(!pot.is_unit_mode());
}

#[test]
fn one_bin_has_zero_spread() {
    let mut state = UnitLoads::new(1, false);
    let mut pot = Potentials::new(&specs(2.0)).unwrap();
    for _ in 0..1000 {
        state.add(0, ());
        pot.on_ball(&state, 0, 1.0);
    }
    assert_eq!(pot.values(), vec![1.0, 2.0, 0.0, 0.0]);
    let mut state = WeightedLoads::new(1, 1.0);
    let mut pot = Potentials::new(&specs(2.0)).unwrap();
    for k in 0..1000 {
        let w = 0.5 + (k % 7) as f64;
        state.add(0, w);
        pot.on_ball(&state, 0, w);
    }
    let v = pot.values();
    assert_relative_eq!(v[0], 1.0, max_relative = 1e-12);
    assert_relative_eq!(v[1], 2.0, max_relative = 1e-12);
    assert!(v[2].abs() < 1e-12 && v[3].abs() < 1e-12);
}

#[test]
fn values_are_nan_until_attached_and_attach_mid_run_is_exact() {
    let spec = specs(0.1);
    let mut pot = Potentials::new(&spec).unwrap();
    assert!(pot.value(0).is_nan() && !pot.is_attached());
    let mut state = UnitLoads::new(5, false);
    for i in [0, 1, 1, 4, 4, 4] {
        state.add(i, ());
    }
    pot.attach(&state);
    assert_eq!(pot.values(), recompute(&spec, &state));
    // Empty run: the observation point attaches.
    let mut pot = Potentials::new(&spec).unwrap();
    pot.on_observation(&UnitLoads::new(3, false));
    assert_eq!(pot.values(), vec![3.0, 6.0, 0.0, 0.0]);
}

/// Compares a tracker with the exact recomputation using the stated tolerances.
fn assert_close<S: LoadState>(pot: &Potentials, state: &S, unit: bool) {
    let specs = pot.specs().to_vec();
    let (v, l) = (recompute(&specs, state), recompute_ln(&specs, state));
    for (k, s) in specs.iter().enumerate() {
        if s.alpha().is_some() {
            let tol = if unit { UNIT_EXP_LN } else { REAL_EXP_LN };
            assert!((pot.ln_value(k) - l[k]).abs() <= tol, "{s}");
        } else {
            let tol = if unit { UNIT_EXACT_REL } else { REAL_REL };
            assert!((pot.value(k) - v[k]).abs() <= tol * v[k].abs().max(1.0), "{s}");
        }
    }
}

#[test]
fn switches_from_unit_to_weighted_and_survives_rebasing() {
    // WeightedLoads with weight-1 balls looks like unit loads until it rebases its loads
    // (every 1024 units of average load), after which `load(i)` is relative: the tracker
    // notices the histogram mismatch and falls back to weighted mode, exactly.
    let n = 4;
    let mut state = WeightedLoads::new(n, 1.0);
    let mut pot = Potentials::new(&specs(0.2)).unwrap();
    let mut x = 1u64;
    for t in 0..10_000 {
        x = ballast_core::rng::splitmix64(x);
        let i = (x % n as u64) as usize;
        state.add(i, 1.0);
        pot.on_ball(&state, i, 1.0);
        if t == 100 {
            assert!(pot.is_unit_mode());
            assert_close(&pot, &state, true);
        }
    }
    assert!(!pot.is_unit_mode(), "rebasing was detected");
    assert_close(&pot, &state, false);
    state.add(2, 0.5);
    pot.on_ball(&state, 2, 0.5);
    assert_close(&pot, &state, false);

    // A unit-mode tracker that sees its first non-unit weight switches to weighted mode.
    let mut state = WeightedLoads::new(n, 1.0);
    let mut pot = Potentials::new(&specs(0.2)).unwrap();
    for i in [0, 1, 2, 2] {
        state.add(i, 1.0);
        pot.on_ball(&state, i, 1.0);
    }
    assert!(pot.is_unit_mode());
    state.add(3, 0.25);
    pot.on_ball(&state, 3, 0.25);
    assert!(!pot.is_unit_mode());
    assert_close(&pot, &state, false);
}

#[test]
fn huge_alpha_stays_finite_in_logs() {
    let spec = [PotentialSpec::Hyperbolic { alpha: 100.0 }];
    let mut state = UnitLoads::new(3, false);
    let mut pot = Potentials::new(&spec).unwrap();
    for _ in 0..50 {
        state.add(0, ());
        pot.on_ball(&state, 0, 1.0);
    }
    // y_0 = 50·(2/3): Γ ≈ e^{100·33.3} is far beyond f64.
    assert_eq!(pot.value(0), f64::INFINITY);
    let want = recompute_ln(&spec, &state)[0];
    // Both sides round α·y ≈ 3333 (absolute error ~ε·3333), so compare relatively here.
    assert!((pot.ln_value(0) - want).abs() <= UNIT_EXP_LN * want.abs(), "{}", pot.ln_value(0));
}
