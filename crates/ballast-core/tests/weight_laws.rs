//! The weight laws of `Weights` (and the registry's `WEIGHTS`): each sampler draws its law,
//! the weighted engine with constant weights 1 is the unit-weight engine, and the weighted
//! gap is exact at totals of 10^15.
//!
//! **Sampler laws.** For each continuous law, 40 000 draws (seed 7100 + law index) are
//! binned into 20 cells of equal probability under the law's CDF (statrs quantiles) and
//! compared with Pearson's chi-square at `ALPHA` = 0.001 (19 degrees of freedom, critical
//! value 43.8). 40 000 draws make the expected count 2 000 per cell, so a law whose quantiles
//! are off by a few percent is found: the test of the test draws from deliberately wrong
//! variants (Gamma with its scale read as a rate, Pareto with its two parameters swapped,
//! log-normal with σ² for σ, uniform on the wrong interval) and must reject each; its
//! statistics there are 73 (Exp with its mean 5 % off) to 3·10⁵. The discrete laws are checked exactly
//! (constant) and by a z-test of the frequency of `high` (two-point, |z| < 4).

use ballast_core::registry::{find_weights, ParamValue, WEIGHTS};
use ballast_core::{
    sim_rng, simulate_seeded, ProcessSpec, RunSpec, Setting, WeightSampler, Weights,
};
use ballast_testkit::{chi2_critical, chi2_gof};
use statrs::distribution::{ContinuousCDF, Gamma, LogNormal, Pareto, Uniform};

const DRAWS: usize = 40_000;
const CELLS: usize = 20;

/// The chi-square statistic of `DRAWS` draws of `sampled` against the law with quantile
/// function `quantile`, in `CELLS` equiprobable cells.
fn chi2_against(sampled: Weights, quantile: &dyn Fn(f64) -> f64, seed: u64) -> f64 {
    let cuts: Vec<f64> = (1..CELLS).map(|k| quantile(k as f64 / CELLS as f64)).collect();
    let sampler = WeightSampler::new(sampled).expect("a valid law");
    let mut rng = sim_rng(seed);
    let mut counts = vec![0u64; CELLS];
    for _ in 0..DRAWS {
        let w = sampler.draw(&mut rng);
        counts[cuts.partition_point(|&c| c <= w)] += 1;
    }
    chi2_gof(&counts, &[1.0 / CELLS as f64; CELLS]).0
}

/// A quantile function.
type Quantile = Box<dyn Fn(f64) -> f64>;

/// (law, its quantile function, a wrong variant drawn instead).
fn cases() -> Vec<(Weights, Quantile, Weights)> {
    let gamma = Gamma::new(2.0, 1.0 / 0.5).unwrap(); // statrs: shape, rate
    let lognormal = LogNormal::new(-0.5, 1.0).unwrap();
    let pareto = Pareto::new(1.0 / 3.0, 1.5).unwrap(); // statrs: scale, shape
    let uniform = Uniform::new(0.5, 1.5).unwrap();
    let exp = Gamma::new(1.0, 1.0 / 2.0).unwrap();
    vec![
        (
            Weights::Gamma { shape: 2.0, scale: 0.5 },
            Box::new(move |p| gamma.inverse_cdf(p)),
            Weights::Gamma { shape: 2.0, scale: 2.0 },
        ),
        (
            Weights::LogNormal { mu: -0.5, sigma: 1.0 },
            Box::new(move |p| lognormal.inverse_cdf(p)),
            Weights::LogNormal { mu: -0.5, sigma: 1.0 * 1.15 },
        ),
        (
            Weights::Pareto { alpha: 1.5, scale: 1.0 / 3.0 },
            Box::new(move |p| pareto.inverse_cdf(p)),
            Weights::Pareto { alpha: 1.0 / 3.0 + 1.0, scale: 1.5 },
        ),
        (
            Weights::Uniform { low: 0.5, high: 1.5 },
            Box::new(move |p| uniform.inverse_cdf(p)),
            Weights::Uniform { low: 0.45, high: 1.5 },
        ),
        (
            Weights::Exp { mean: 2.0 },
            Box::new(move |p| exp.inverse_cdf(p)),
            Weights::Exp { mean: 2.1 },
        ),
    ]
}

#[test]
fn continuous_laws_draw_their_distribution() {
    let crit = chi2_critical(CELLS - 1);
    for (i, (law, quantile, _)) in cases().into_iter().enumerate() {
        let chi2 = chi2_against(law, &*quantile, 7100 + i as u64);
        assert!(chi2 < crit, "{law:?}: chi2 = {chi2:.1} >= {crit:.1}");
    }
}

#[test]
fn the_law_test_rejects_wrong_variants() {
    let crit = chi2_critical(CELLS - 1);
    for (i, (law, quantile, wrong)) in cases().into_iter().enumerate() {
        let chi2 = chi2_against(wrong, &*quantile, 7100 + i as u64);
        println!("{wrong:?} against {law:?}: chi2 = {chi2:.1}");
        assert!(chi2 > crit, "{wrong:?} passed as {law:?}: chi2 = {chi2:.1} < {crit:.1}");
    }
}

#[test]
fn discrete_laws_are_exact() {
    let mut rng = sim_rng(7200);
    let c = WeightSampler::new(Weights::Constant { w: 2.5 }).unwrap();
    assert!((0..1000).all(|_| c.draw(&mut rng) == 2.5));
    let (low, high, p) = (0.25, 3.0, 0.3);
    let t = WeightSampler::new(Weights::TwoPoint { low, high, p }).unwrap();
    let mut highs = 0u64;
    for _ in 0..DRAWS {
        let w = t.draw(&mut rng);
        assert!(w == low || w == high, "{w}");
        highs += u64::from(w == high);
    }
    let n = DRAWS as f64;
    let z = (highs as f64 - n * p) / (n * p * (1.0 - p)).sqrt();
    assert!(z.abs() < 4.0, "two_point: z = {z:.2}");
}

#[test]
fn every_registry_law_builds_a_valid_law_with_mean_one_by_default() {
    for def in WEIGHTS {
        let w = def.build(&[]).unwrap_or_else(|e| panic!("{}: {e}", def.name));
        assert_eq!(w.name(), def.name);
        assert!((w.mean() - 1.0).abs() < 1e-12, "{}: default mean {}", def.name, w.mean());
        let names: Vec<&str> = w.params().iter().map(|(k, _)| *k).collect();
        let declared: Vec<&str> = def.params.iter().map(|p| p.name).collect();
        assert_eq!(names, declared, "{}: params() and the registry disagree", def.name);
    }
}

#[test]
fn bad_parameters_are_refused_by_name() {
    type Case<'a> = (&'a str, &'a [(&'a str, f64)], &'a str);
    let bad: [Case; 5] = [
        ("uniform", &[("low", 2.0), ("high", 1.0)], "high"),
        ("gamma", &[("shape", 0.0)], "shape"),
        ("pareto", &[("alpha", 1.0)], "alpha"),
        ("constant", &[("w", 0.0)], "w"),
        ("two_point", &[("low", 0.0), ("p", 0.0)], "weights"),
    ];
    for (kind, params, field) in bad {
        let given: Vec<(&str, ParamValue)> =
            params.iter().map(|(k, v)| (*k, ParamValue::Num(*v))).collect();
        let e = find_weights(kind).unwrap().build(&given).unwrap_err();
        assert!(e.message.contains(kind) && e.message.contains(field), "{kind}: {e}");
    }
    let e = find_weights("gamma").unwrap().build(&[("shap", ParamValue::Num(1.0))]).unwrap_err();
    assert!(e.message.contains("shape"), "{e}");
    assert!(find_weights("gama").unwrap_err().message.contains("did you mean `gamma`"));
}

fn spec(process: ProcessSpec, setting: Setting, weights: Weights, n: u64, m: u64) -> RunSpec {
    let mut s = RunSpec::new(process, n, m).weights(weights);
    s.setting = setting;
    s
}

/// Constant weights draw no random number, so a run with weight 1 makes the same choices as
/// the unit-weight run of the same seed: the same gaps, exactly.
#[test]
fn constant_weight_one_is_the_unit_weight_run() {
    let processes = [
        ProcessSpec::OneChoice,
        ProcessSpec::DChoice { d: 2 },
        ProcessSpec::DChoice { d: 3 },
        ProcessSpec::OnePlusBeta { beta: 0.5 },
    ];
    for (i, p) in processes.into_iter().enumerate() {
        for setting in [Setting::Sequential, Setting::Batched { b: 50 }] {
            let unit = spec(p.clone(), setting, Weights::Unit, 100, 5_000);
            let one = spec(p.clone(), setting, Weights::Constant { w: 1.0 }, 100, 5_000);
            let seed = 7300 + i as u64;
            let (a, b) =
                (simulate_seeded(&unit, seed).unwrap(), simulate_seeded(&one, seed).unwrap());
            assert_eq!(a.final_gap, b.final_gap, "{p:?} {setting:?}");
            assert_eq!(a.max_gap, b.max_gap, "{p:?} {setting:?}");
        }
    }
}

/// Weight 10^9 per ball, 10^6 balls: the total is 10^15, and the gap is 10^9 times the unit
/// gap, exactly (every load and partial total is an integer below 2^53).
#[test]
fn weighted_gap_is_exact_at_totals_of_ten_to_the_fifteen() {
    let p = ProcessSpec::DChoice { d: 2 };
    let unit = spec(p.clone(), Setting::Sequential, Weights::Unit, 1000, 1_000_000);
    let heavy = spec(p, Setting::Sequential, Weights::Constant { w: 1e9 }, 1000, 1_000_000);
    let (a, b) = (simulate_seeded(&unit, 7400).unwrap(), simulate_seeded(&heavy, 7400).unwrap());
    assert_eq!(b.final_gap, a.final_gap * 1e9, "unit gap {}", a.final_gap);
    assert_eq!(b.max_load, a.max_load * 1e9);
}
