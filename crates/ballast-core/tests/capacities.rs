//! Heterogeneous bins (`ballast_core::capacity`, `docs/capacities.md`): the bin engine's
//! processes compare normalised loads `x_i / c_i`, sample uniformly or in proportion to
//! capacity, and the paths that cannot (the level engine, delay, `equalize`, uniform-only
//! processes) refuse.
//!
//! The law tests are seeded, at significance α = `ALPHA` = 0.001 with the chi-square critical
//! value of their degrees of freedom (states of expected count below 5 lumped, `fit_law`),
//! and each comes with a deliberately wrong variant that the same test rejects: Two-Choice
//! comparing raw loads instead of normalised ones (`decide = "raw"`). The non-centrality of that variant is
//! computed from the two exact laws and asserted large (power essentially 1, see below).

mod common;

use std::collections::BTreeMap;

use ballast_core::capacity::{CapacityDecision, CapacityLaw, CapacitySampling};
use ballast_core::loads::LoadState;
use ballast_core::registry::check_run;
use ballast_core::{
    resolve_engine, sim_rng, simulate, simulate_observed, Capacities, Engine, Observer,
    ProcessSpec, RunSpec, Sampling, Setting, Weights,
};
use common::{fit_law, BinTrace};

/// Records the raw load vector `x_i` (rounded: unit balls) at the end of a run; `raw`: the
/// run decides on raw loads (then `normalized` is `x_i − W/n`).
struct RawLoads {
    c: Vec<f64>,
    raw: bool,
    x: Vec<u64>,
}

impl Observer for RawLoads {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        // `normalized` is y_i − W/C (x_i − W/n when deciding on raw loads).
        let avg = s.average();
        let x = |i: usize| {
            let v = s.normalized(i) + avg;
            if self.raw {
                v
            } else {
                v * self.c[i]
            }
        };
        self.x = (0..s.n()).map(|i| x(i).round() as u64).collect();
    }
}

/// Exact law of the (unsorted) load vector after `m` balls of Two-Choice with random ties on
/// bins of capacities `c`, samples drawn i.i.d. with probabilities `p`, comparing
/// `key(x_i, c_i)`: the enumeration of the chain from the definition (two samples a, b; the
/// smaller key wins; equal keys of distinct bins: each with probability 1/2).
fn exact_two_choice(
    c: &[f64],
    p: &[f64],
    m: usize,
    key: fn(u64, f64) -> f64,
) -> BTreeMap<Vec<u64>, f64> {
    let n = c.len();
    let mut law = BTreeMap::from([(vec![0u64; n], 1.0)]);
    for _ in 0..m {
        let mut next = BTreeMap::new();
        for (x, &pr) in &law {
            for a in 0..n {
                for b in 0..n {
                    let (ka, kb) = (key(x[a], c[a]), key(x[b], c[b]));
                    let w = pr * p[a] * p[b];
                    let winners: &[(usize, f64)] = if ka < kb {
                        &[(a, 1.0)]
                    } else if kb < ka {
                        &[(b, 1.0)]
                    } else {
                        &[(a, 0.5), (b, 0.5)]
                    };
                    for &(i, q) in winners {
                        let mut y = x.clone();
                        y[i] += 1;
                        *next.entry(y).or_insert(0.0) += w * q;
                    }
                }
            }
        }
        law = next;
    }
    law
}

fn normalised(x: u64, c: f64) -> f64 {
    x as f64 / c
}

fn raw(x: u64, _c: f64) -> f64 {
    x as f64
}

/// Bins of capacities 2, 1, 1 (`two_class` with fraction 1/3, factor 2).
fn two_class_spec(sampling: CapacitySampling, m: u64) -> RunSpec {
    let law = CapacityLaw::TwoClass { fraction: 1.0 / 3.0, factor: 2.0 };
    RunSpec::new(ProcessSpec::DChoice { d: 2 }, 3, m).capacities(Capacities {
        law,
        sampling,
        decide: CapacityDecision::Normalised,
    })
}

fn final_loads(spec: &RunSpec, c: &[f64], runs: u64, seed0: u64) -> Vec<Vec<u64>> {
    (0..runs)
        .map(|r| {
            let raw = spec.capacities.decide == CapacityDecision::Raw;
            let mut o = RawLoads { c: c.to_vec(), raw, x: Vec::new() };
            simulate_observed(spec, &mut sim_rng(seed0 + r), &mut o).expect("valid");
            o.x
        })
        .collect()
}

/// Pearson non-centrality `runs · Σ (q − p)² / p` of the law `q` tested against `p`.
fn noncentrality(p: &BTreeMap<Vec<u64>, f64>, q: &BTreeMap<Vec<u64>, f64>, runs: u64) -> f64 {
    let d: f64 =
        p.iter().map(|(k, &pk)| (q.get(k).copied().unwrap_or(0.0) - pk).powi(2) / pk).sum();
    runs as f64 * d
}

/// n = 3 bins of capacities (2, 1, 1), m = 5 balls of Two-Choice on normalised loads, 20 000
/// runs (seeds 7000…), against the exact law of the load vector, for uniform and for
/// capacity-proportional sampling (probabilities 1/2, 1/4, 1/4). Wrong variant, same test:
/// Two-Choice comparing raw loads (`decide = "raw"`, the same bins and sampling; its own
/// exact law passes the same test below): its law differs from the normalised one by a non-centrality of several
/// thousand at 20 000 runs (asserted ≥ 200, where the power at α = 0.001 and ≤ 40 degrees
/// of freedom exceeds 0.999), and the test must reject it.
#[test]
fn two_choice_on_normalised_loads_has_the_exact_law() {
    let (m, runs) = (5u64, 20_000u64);
    let c = [2.0, 1.0, 1.0];
    for (sampling, p) in [
        (CapacitySampling::Uniform, [1.0 / 3.0; 3]),
        (CapacitySampling::Proportional, [0.5, 0.25, 0.25]),
    ] {
        let spec = two_class_spec(sampling, m);
        let law = exact_two_choice(&c, &p, m as usize, normalised);
        let (stat, crit) = fit_law(&final_loads(&spec, &c, runs, 7000), &law);
        println!("{sampling:?}: chi2 = {stat:.1}, critical {crit:.1}");
        assert!(stat < crit, "{sampling:?}: chi2 = {stat:.1} >= critical {crit:.1}");

        let wrong_law = exact_two_choice(&c, &p, m as usize, raw);
        let lambda = noncentrality(&law, &wrong_law, runs);
        assert!(lambda >= 200.0, "{sampling:?}: non-centrality {lambda:.0} too small");
        // The wrong variant: the same bins and sampling, decisions on the raw loads.
        let wrong = RunSpec {
            capacities: Capacities { decide: CapacityDecision::Raw, ..spec.capacities.clone() },
            ..spec.clone()
        };
        let (stat, crit) = fit_law(&final_loads(&wrong, &c, runs, 9000), &law);
        let (own, own_crit) = fit_law(&final_loads(&wrong, &c, runs, 9000), &wrong_law);
        assert!(own < own_crit, "{sampling:?}: raw decisions against their own law: {own:.1}");
        println!("{sampling:?}: raw comparisons chi2 = {stat:.1}, non-centrality {lambda:.0}");
        assert!(
            stat > crit,
            "{sampling:?}: raw comparisons not rejected: chi2 = {stat:.1} (critical {crit:.1}, \
             non-centrality {lambda:.0})"
        );
    }
}

/// Capacities that are all 1 (`two_class` with factor 1) run through the capacity state and
/// place every ball where the classical run does, with the same gap: the normalised path
/// adds nothing but the division by 1. (Without capacities the run takes the classical
/// path, untouched.)
#[test]
fn unit_capacities_place_every_ball_as_the_classical_run() {
    let one = Capacities {
        law: CapacityLaw::TwoClass { fraction: 0.5, factor: 1.0 },
        ..Capacities::UNIT
    };
    for process in [
        ProcessSpec::OneChoice,
        ProcessSpec::DChoice { d: 2 },
        ProcessSpec::DChoice { d: 3 },
        ProcessSpec::OnePlusBeta { beta: 0.5 },
        ProcessSpec::MeanThinning { strict: false },
    ] {
        for batched in [false, true] {
            let mut plain = RunSpec::new(process.clone(), 50, 2000).engine(Engine::Bins);
            if batched {
                plain = plain.batched(50);
            }
            let with = plain.clone().capacities(one.clone());
            let (mut a, mut b) = (BinTrace::default(), BinTrace::default());
            let ra = simulate_observed(&plain, &mut sim_rng(3), &mut a).expect("valid");
            let rb = simulate_observed(&with, &mut sim_rng(3), &mut b).expect("valid");
            assert_eq!(a.0, b.0, "{process:?} batched {batched}");
            assert_eq!(ra.final_gap, rb.final_gap, "{process:?} batched {batched}");
            assert_eq!(ra.max_load, rb.max_load);
        }
    }
}

/// Weighted balls add w / c_i; the gap is max y − W / C, computed here from the load vector.
#[test]
fn weighted_balls_and_the_gap_on_normalised_loads() {
    let law = CapacityLaw::LogNormal { sigma: 1.0, seed: 5 };
    let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 40, 4000)
        .weights(Weights::Exp { mean: 1.0 })
        .capacities(Capacities {
            law,
            sampling: CapacitySampling::Proportional,
            ..Capacities::UNIT
        });
    let c = spec.capacities.values(40);
    struct Check(Vec<f64>, f64);
    impl Observer for Check {
        const PER_BALL: bool = false;
        fn on_observation<S: LoadState>(&mut self, s: &S) {
            let y: Vec<f64> = (0..s.n()).map(|i| s.load(i).into()).collect();
            let w: f64 = y.iter().zip(&self.0).map(|(y, c)| y * c).sum();
            let cap: f64 = self.0.iter().sum();
            self.1 = y.iter().copied().fold(f64::MIN, f64::max) - w / cap;
        }
    }
    let mut check = Check(c, f64::NAN);
    let r = simulate_observed(&spec, &mut sim_rng(11), &mut check).expect("valid");
    assert!((r.final_gap - check.1).abs() < 1e-9, "{} vs {}", r.final_gap, check.1);
    assert!(r.final_gap > 0.0 && r.final_gap < 50.0, "gap {}", r.final_gap);
}

/// The level engine, delay, `equalize`, uniform-only processes and bad capacities refuse,
/// each with its reason; `auto` picks the bin engine.
#[test]
fn refusals_and_validation() {
    let two = Capacities {
        law: CapacityLaw::TwoClass { fraction: 0.5, factor: 4.0 },
        ..Capacities::UNIT
    };
    let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 1000, 100_000).capacities(two.clone());
    assert_eq!(resolve_engine(&spec).expect("auto"), Engine::Bins);
    let levels = spec.clone().engine(Engine::Levels);
    let e = simulate(&levels, &mut sim_rng(1)).expect_err("levels refused").to_string();
    assert!(e.contains("equal capacity") && e.contains("exchangeable"), "{e}");
    let delay = RunSpec {
        setting: Setting::Delay { tau: 10, mode: ballast_core::DelayMode::Random },
        ..spec.clone()
    };
    assert!(simulate(&delay, &mut sim_rng(1)).expect_err("delay").to_string().contains("delay"));
    // The dispatchers' (and churn's) loops keep unit loads: refused, not run without them.
    let k = ballast_core::Dispatchers {
        k: 2,
        tau: 10,
        assign: ballast_core::Assign::RoundRobin,
        own: true,
    };
    let stale = RunSpec { dispatchers: Some(k), ..spec.clone() };
    let e = simulate(&stale, &mut sim_rng(1)).expect_err("dispatchers").to_string();
    assert!(e.contains("churn") && e.contains("dispatchers"), "{e}");
    let eq = RunSpec::new(ProcessSpec::Equalize { d: 2 }, 10, 100).capacities(two.clone());
    assert!(simulate(&eq, &mut sim_rng(1)).expect_err("equalize").to_string().contains("equalize"));
    let agl = RunSpec::new(ProcessSpec::AlwaysGoLeft { d: 2 }, 10, 100).capacities(two.clone());
    let e = check_run(&agl).expect_err("uniform-only process");
    assert_eq!(e.param.as_deref(), Some("capacities"), "{}", e.message);
    assert!(simulate(&agl, &mut sim_rng(1)).is_err());
    let both = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 10, 100)
        .sampling(Sampling::Zipf { s: 1.0 })
        .capacities(Capacities { sampling: CapacitySampling::Proportional, ..two.clone() });
    assert!(simulate(&both, &mut sim_rng(1))
        .expect_err("two laws")
        .to_string()
        .contains("proportional"));
    let file = |c: Vec<f64>| {
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, 3, 10)
            .capacities(Capacities { law: CapacityLaw::Explicit(c.into()), ..Capacities::UNIT })
    };
    let e = simulate(&file(vec![1.0, 2.0]), &mut sim_rng(1)).expect_err("2 for 3").to_string();
    assert!(e.contains("one capacity per bin"), "{e}");
    let e = simulate(&file(vec![1.0, 0.0, 2.0]), &mut sim_rng(1)).expect_err("zero").to_string();
    assert!(e.contains("bin 2") && e.contains("> 0"), "{e}");
    assert!(simulate(&file(vec![1.0, 3.0, 2.0]), &mut sim_rng(1)).is_ok());
}

/// The average a rule reads is W/C under capacities: a threshold formula `avg` makes the
/// same decisions, ball for ball, as Mean-Thinning (accept y ≤ W/C), and a `rule` formula
/// reads the same `avg`; `packing` (fills whole balls to ⌈W/n⌉) refuses capacities.
#[test]
fn formulas_read_the_normalised_average() {
    use ballast_core::registry::{self, ParamValue};
    let caps = Capacities {
        law: CapacityLaw::LogNormal { sigma: 1.0, seed: 3 },
        sampling: CapacitySampling::Proportional,
        ..Capacities::UNIT
    };
    let formula = registry::find("formula_threshold")
        .unwrap()
        .build(&[("f", ParamValue::Text("avg".into()))])
        .unwrap();
    let run = |p: ProcessSpec| {
        let spec = RunSpec::new(p, 30, 3000).capacities(caps.clone());
        let mut t = BinTrace::default();
        simulate_observed(&spec, &mut sim_rng(21), &mut t).expect("valid");
        t.0
    };
    assert_eq!(run(formula), run(ProcessSpec::MeanThinning { strict: false }));
    let packing = RunSpec::new(ProcessSpec::Packing { offset: 1 }, 30, 300).capacities(caps);
    let e = simulate(&packing, &mut sim_rng(1)).expect_err("packing").to_string();
    assert!(e.contains("packing"), "{e}");
}
