//! Always-Go-Left with random tie-breaking (`always_go_left` with `ties = "random"`, the item
//! in `src/items/agl_random.rs`): its exact law at tiny n, Vöcking's left ties (the built-in)
//! rejected by the same test, and the settings it shares with the built-in.
//!
//! Statistics. n = 4 bins in d = 2 groups ({0, 1} and {2, 3}), m = 6 balls from empty bins.
//! The rule reads bin identities, so the law is that of the unsorted load vector: per ball
//! each of the 4 sample pairs has probability 1/4, the lighter sample gets the ball, a tie
//! goes to either with probability 1/2 (Vöcking: to the left one). 20 000 seeded runs (seeds
//! 3000..23000) are compared with the enumerated law by Pearson's χ² at α = 0.001
//! ([`common::fit_law`]; cells with expected count below 5 pooled). Power: the left-ties law
//! has the same states and noncentrality λ = RUNS·Σ(p − q)²/p against it, asserted ≥ 200,
//! where the test rejects with probability above 1 − 10⁻⁹; the built-in is run and rejected.

mod common;

use std::collections::BTreeMap;

use ballast_core::loads::LoadState;
use ballast_core::registry::{find, ParamValue};
use ballast_core::{sim_rng, simulate, simulate_observed, Engine, Observer, ProcessSpec, RunSpec};

const N: usize = 4;
const M: usize = 6;
const RUNS: u64 = 20_000;

fn agl(ties: &str) -> ProcessSpec {
    find("always_go_left")
        .unwrap()
        .build(&[("d", ParamValue::Num(2.0)), ("ties", ParamValue::Text(ties.into()))])
        .unwrap()
}

/// The exact law of the load vector (bin order kept) after M balls.
fn law(random_ties: bool) -> BTreeMap<Vec<u64>, f64> {
    let mut states = BTreeMap::from([(vec![0u64; N], 1.0)]);
    for _ in 0..M {
        let mut next = BTreeMap::new();
        for (v, &p) in &states {
            for (a, b) in [(0, 2), (0, 3), (1, 2), (1, 3)] {
                let mut add = |bin: usize, q: f64| {
                    let mut w = v.clone();
                    w[bin] += 1;
                    *next.entry(w).or_insert(0.0) += p * q / 4.0;
                };
                match v[a].cmp(&v[b]) {
                    std::cmp::Ordering::Less => add(a, 1.0),
                    std::cmp::Ordering::Greater => add(b, 1.0),
                    std::cmp::Ordering::Equal if random_ties => {
                        add(a, 0.5);
                        add(b, 0.5);
                    }
                    std::cmp::Ordering::Equal => add(a, 1.0),
                }
            }
        }
        states = next;
    }
    states
}

/// The final load vector in bin order.
#[derive(Default)]
struct Loads(Vec<u64>);

impl Observer for Loads {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        self.0 = (0..s.n()).map(|i| s.load(i).into().round() as u64).collect();
    }
}

fn chi2(process: &ProcessSpec, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    let spec = RunSpec::new(process.clone(), N as u64, M as u64);
    let keys: Vec<Vec<u64>> = (0..RUNS)
        .map(|r| {
            let mut seen = Loads::default();
            simulate_observed(&spec, &mut sim_rng(3000 + r), &mut seen).unwrap();
            seen.0
        })
        .collect();
    common::fit_law(&keys, law)
}

#[test]
fn random_ties_have_the_exact_law_and_left_ties_are_rejected() {
    let (right, left) = (law(true), law(false));
    assert!((right.values().sum::<f64>() - 1.0).abs() < 1e-12);
    assert!(left.keys().all(|k| right.contains_key(k)), "the same states");
    let lambda: f64 = right
        .iter()
        .map(|(k, &p)| RUNS as f64 * (p - left.get(k).copied().unwrap_or(0.0)).powi(2) / p)
        .sum();
    assert!(lambda >= 200.0, "the test's power: noncentrality {lambda:.1}");
    let (stat, crit) = chi2(&agl("random"), &right);
    println!("ties = random: χ² = {stat:.2} (critical {crit:.2})");
    assert!(stat < crit, "χ² = {stat:.1} ≥ {crit:.1}");
    let (stat, crit) = chi2(&agl("left"), &right);
    println!("ties = left against it: χ² = {stat:.1} (critical {crit:.2}, λ = {lambda:.0})");
    assert!(stat > crit, "left ties passed, χ² = {stat:.1}");
    // And the built-in passes its own law (the enumeration is the definition).
    let (stat, crit) = chi2(&agl("left"), &left);
    assert!(stat < crit, "left ties against their law: χ² = {stat:.1} ≥ {crit:.1}");
}

#[test]
fn left_is_the_default_and_the_settings_are_the_built_ins() {
    let default = find("always_go_left").unwrap().build(&[("d", ParamValue::Num(2.0))]).unwrap();
    assert_eq!(default, ProcessSpec::AlwaysGoLeft { d: 2 });
    let random = agl("random");
    assert_eq!(random.kind(), "always_go_left");
    let e = RunSpec::new(random.clone(), 10, 100).engine(Engine::Levels);
    let e = simulate(&e, &mut sim_rng(1)).unwrap_err().to_string();
    assert!(e.contains("samples in groups of bin indices"), "{e}");
    let e = RunSpec::new(random.clone(), 1, 10).validate().unwrap_err().to_string();
    assert!(e.contains("d = 2 groups need d <= n = 1 bins"), "{e}");
    let e = find("always_go_left")
        .unwrap()
        .build(&[("d", ParamValue::Num(2.0)), ("ties", ParamValue::Text("right".into()))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("one of left, random"), "{e}");
    // One sample per group per ball.
    let out = simulate(&RunSpec::new(random, 1000, 10_000), &mut sim_rng(2)).unwrap();
    assert_eq!(out.samples, 20_000);
}
