//! What every weight law shares (`Weights`, the registry's `WEIGHTS`): each law builds from
//! its defaults with mean 1 and lists the registry's parameters, bad parameters are refused
//! by name, the weighted engine with constant weights 1 is the unit-weight engine, and the
//! weighted gap is exact at totals of 10^15. Each law's own sampler test (a chi-square
//! against its quantile function, or an exact check for the discrete laws, each with a
//! deliberately wrong variant the test must reject) is in its file,
//! `crates/ballast-core/src/weights/<law>.rs`.

use ballast_core::registry::{find_weights, ParamValue, WEIGHTS};
use ballast_core::{simulate_seeded, ProcessSpec, RunSpec, Setting, Weights};

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
