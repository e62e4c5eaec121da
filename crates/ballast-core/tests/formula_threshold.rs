//! `formula_threshold` (Two-Thinning whose threshold is a formula in `t`, `n` and `avg`):
//!
//! 1. The full-state law of both engines against the exact law, enumerated over the first
//!    sample and the fresh one, ball by ball with the threshold of that ball (sequential) or
//!    of the batch start (batched), and a deliberately wrong variant (the threshold read at
//!    `t + 1`) rejected by the same test. Seed 4242, significance level `common::ALPHA` =
//!    0.001, Pearson's chi-square over the sorted final load vectors (categories with an
//!    expected count below 5 merged), 20 000 runs per case, n = 3 and 4, m = 8 and 7. The
//!    formulas `t/2 - 1` and `avg + t/4 - 1` are evaluated in the enumeration by the same
//!    double operations in the same order, so both sides decide each comparison alike. The
//!    correct rule passes with probability 1 − ALPHA at any seed; the statistics are in
//!    CHANGELOG.md.
//! 2. Same draws, same loads: a constant formula `c` is `threshold {f = c}`, `avg` is
//!    `mean_thinning {strict = false}`, and `avg + 1/2` at odd n is `relative_threshold {f
//!    = 0.5}` (there `W/n + 1/2` is never a load, so `x < W/n + 1/2` and `x <= W/n + 1/2`
//!    agree), seed for seed, on both engines, sequential and batched, unit and weighted
//!    where the definitions coincide.
//! 3. The compiled formula against `evalexpr` itself: the same double, bit for bit.

mod common;

use std::collections::BTreeMap;

use ballast_core::formula::Formula;
use ballast_core::registry::{self, check_run, ParamValue};
use ballast_core::{
    derive_seed, sim_rng, simulate, simulate_observed, Engine, ProcessSpec, RunSpec, Weights,
};
use common::{fit_law, FinalState};

/// Exact law of the sorted load vector after `m` balls on `n` bins starting with `k` balls
/// each, batches of `b` balls (`b = 1`: sequential), when a ball whose decision sees loads
/// `x`, `t` balls placed before it (frozen at the batch start; the start's balls not
/// counted) and `W = sum x` goes to the first sample `i1` if `x[i1] <= f(t, W)`, else to a
/// fresh uniform sample.
fn exact_law(
    (n, k): (usize, u64),
    m: usize,
    b: usize,
    f: impl Fn(u64, u64) -> f64,
) -> BTreeMap<Vec<u64>, f64> {
    let mut states: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    states.insert(vec![k; n], 1.0);
    let mut t = 0usize;
    while t < m {
        let size = b.min(m - t);
        let mut next: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
        for (loads, &pr) in &states {
            let w: u64 = loads.iter().sum();
            let th = f(t as u64, w);
            // One ball's destination law on the frozen loads.
            let mut dest = vec![0.0; n];
            for i1 in 0..n {
                if loads[i1] as f64 <= th {
                    dest[i1] += 1.0 / n as f64;
                } else {
                    for d in dest.iter_mut() {
                        *d += 1.0 / (n * n) as f64;
                    }
                }
            }
            // The batch's balls, independent given the frozen loads.
            let mut batch: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
            batch.insert(loads.clone(), pr);
            for _ in 0..size {
                let mut nb: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
                for (v, &p) in &batch {
                    for (j, &q) in dest.iter().enumerate() {
                        let mut u = v.clone();
                        u[j] += 1;
                        *nb.entry(u).or_insert(0.0) += p * q;
                    }
                }
                batch = nb;
            }
            for (mut v, p) in batch {
                v.sort_unstable();
                *next.entry(v).or_insert(0.0) += p;
            }
        }
        states = next;
        t += size;
    }
    states
}

/// Chi-square statistic and critical value of `runs` runs of `spec` (seeds
/// `derive_seed(4242, [r])`) against `law` (`common::fit_law`: a state outside the law's
/// support makes the statistic infinite).
fn fit(spec: &RunSpec, law: &BTreeMap<Vec<u64>, f64>, runs: u64) -> (f64, f64) {
    let states: Vec<Vec<u64>> = (0..runs)
        .map(|r| {
            let mut obs = FinalState::default();
            simulate_observed(spec, &mut sim_rng(derive_seed(4242, &[r])), &mut obs).unwrap();
            obs.0
        })
        .collect();
    fit_law(&states, law)
}

fn formula(src: &str) -> ProcessSpec {
    registry::find("formula_threshold")
        .unwrap()
        .build(&[("f", ParamValue::Text(src.to_owned()))])
        .unwrap()
}

const RUNS: u64 = 20_000;

/// The formulas of the law test: the formula, its value at `(t, W)` as the enumeration
/// computes it on `n` bins, the balls per bin of the start state, and the wrong variant (the
/// threshold read at `t + 1`). The second starts from one ball per bin, so that `avg`
/// (`1 + t/n`) is not a function of `t/n` alone.
#[allow(clippy::type_complexity)]
fn cases(n: usize) -> Vec<(&'static str, Box<dyn Fn(u64, u64) -> f64>, u64, &'static str)> {
    vec![
        ("t/2 - 1", Box::new(|t: u64, _w: u64| t as f64 / 2.0 - 1.0), 0, "(t+1)/2 - 1"),
        (
            "avg + t/4 - 3/2",
            Box::new(move |t: u64, w: u64| w as f64 / n as f64 + t as f64 / 4.0 - 1.5),
            1,
            "avg + (t+1)/4 - 3/2",
        ),
    ]
}

fn spec_of(src: &str, n: usize, m: usize, k: u64) -> RunSpec {
    let s = RunSpec::new(formula(src), n as u64, m as u64);
    if k == 0 {
        s
    } else {
        s.start(ballast_core::Start::Uniform { k })
    }
}

#[test]
fn both_engines_follow_the_exact_law() {
    for (n, m) in [(3usize, 8usize), (4, 7)] {
        for (src, f, k, _) in cases(n) {
            let law = exact_law((n, k), m, 1, &f);
            assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
            for engine in [Engine::Bins, Engine::Levels] {
                let spec = spec_of(src, n, m, k).engine(engine);
                assert!(check_run(&spec).unwrap().is_empty());
                let (stat, crit) = fit(&spec, &law, RUNS);
                let at = format!("n = {n}, m = {m}, f = {src}, {engine:?}");
                eprintln!("{at}: chi2 = {stat:.1} (critical {crit:.1})");
                assert!(stat < crit, "{at}: chi2 = {stat:.1} >= {crit:.1}");
            }
        }
    }
}

#[test]
fn batches_freeze_t_and_avg_at_the_batch_start() {
    let (n, m, b) = (3usize, 8usize, 2usize);
    for (src, f, k, _) in cases(n) {
        let law = exact_law((n, k), m, b, &f);
        let spec = spec_of(src, n, m, k).batched(b as u64);
        assert!(check_run(&spec).unwrap().is_empty());
        let (stat, crit) = fit(&spec, &law, RUNS);
        eprintln!("batched b = {b}, f = {src}: chi2 = {stat:.1} (critical {crit:.1})");
        assert!(stat < crit, "batched f = {src}: chi2 = {stat:.1} >= {crit:.1}");
        // Wrong: the same batches with the law of live t and W (no freezing) and, the
        // other way round, the simulation against the sequential law.
        let live = exact_law((n, k), m, 1, &f);
        let (stat, crit) = fit(&spec, &live, RUNS);
        eprintln!("batched f = {src} against the sequential law: chi2 = {stat:.1} ({crit:.1})");
        assert!(stat > crit, "batched f = {src} passed as sequential: chi2 = {stat:.1}");
    }
}

#[test]
fn the_test_rejects_a_threshold_read_at_t_plus_one() {
    let (n, m) = (3usize, 8usize);
    for (src, f, k, wrong) in cases(n) {
        let law = exact_law((n, k), m, 1, &f);
        let spec = spec_of(wrong, n, m, k).engine(Engine::Bins);
        let (stat, crit) = fit(&spec, &law, RUNS);
        eprintln!("wrong {wrong} as {src}: chi2 = {stat:.1} (critical {crit:.1})");
        assert!(stat > crit, "{wrong} passed as {src}: chi2 = {stat:.1}");
    }
}

/// Every ball's bin and the outcome of one seeded run.
fn trace(spec: &RunSpec, seed: u64) -> (Vec<usize>, ballast_core::RunOutcome) {
    let mut t = common::BinTrace::default();
    let out = simulate_observed(spec, &mut sim_rng(seed), &mut t).unwrap();
    (t.0, out)
}

#[test]
fn coinciding_definitions_draw_the_same_loads() {
    let thr = |f: f64| ProcessSpec::Threshold { f };
    let pairs = [
        (formula("3"), thr(3.0), 101u64),
        (formula("2.5"), thr(2.5), 100),
        (formula("-1"), thr(-1.0), 7),
        (formula("avg"), ProcessSpec::MeanThinning { strict: false }, 100),
        (formula("avg"), ProcessSpec::MeanThinning { strict: false }, 101),
        (formula("avg + 1/2"), ProcessSpec::RelativeThreshold { f: 0.5 }, 101),
        (formula("avg + 1/2"), ProcessSpec::RelativeThreshold { f: 0.5 }, 3),
    ];
    for (a, b, n) in pairs {
        for seed in 0..5u64 {
            let m = 20 * n + seed;
            // Not sequential on the level engine: there Threshold, Mean-Thinning and
            // Relative-Threshold run their own loop (a cut on the first sample, one word of
            // two positions per ball; value version 7), which takes other words than the
            // generic rule a formula runs through. Same law, not the same draws
            // (`tests/level_engine.rs` compares both with the bin engine).
            let mut specs = vec![
                RunSpec::new(a.clone(), n, m).engine(Engine::Bins),
                RunSpec::new(a.clone(), n, m).batched(n / 2 + 1).engine(Engine::Bins),
            ];
            if matches!(b, ProcessSpec::Threshold { .. }) {
                // The same acceptance test on weighted loads.
                let exp = Weights::Exp { mean: 1.0 };
                specs.push(RunSpec::new(a.clone(), n, m).weights(exp).engine(Engine::Bins));
                specs.push(
                    RunSpec::new(a.clone(), n, m).batched(n).weights(exp).engine(Engine::Bins),
                );
            }
            for mut s in specs {
                s.record_trajectory = true;
                let mut other = s.clone();
                other.process = b.clone();
                assert_eq!(trace(&s, seed), trace(&other, seed), "{a:?} vs {b:?}, {s:?}");
            }
        }
    }
}

#[test]
fn compiled_formulas_equal_evalexpr_bit_for_bit() {
    use evalexpr::{
        ContextWithMutableFunctions, ContextWithMutableVariables, DefaultNumericTypes, Function,
        HashMapContext, Node, Operator, Value,
    };
    // The runner's evaluation (`ballast_runner::formula::eval`): integers made floats, the
    // same functions.
    fn floatify(node: &mut Node<DefaultNumericTypes>) {
        if let Operator::Const { value } = node.operator_mut() {
            if let Value::Int(i) = *value {
                *value = Value::Float(i as f64);
            }
        }
        for c in node.children_mut() {
            floatify(c);
        }
    }
    fn reference(src: &str, t: f64, n: f64, avg: f64) -> f64 {
        let mut tree = evalexpr::build_operator_tree::<DefaultNumericTypes>(src).unwrap();
        floatify(&mut tree);
        let mut ctx = HashMapContext::<DefaultNumericTypes>::new();
        let f1 = |f: fn(f64) -> f64| {
            Function::new(move |a: &Value<DefaultNumericTypes>| Ok(Value::Float(f(a.as_number()?))))
        };
        for (name, f) in [
            ("ln", f64::ln as fn(f64) -> f64),
            ("log2", f64::log2),
            ("log10", f64::log10),
            ("exp", f64::exp),
            ("sqrt", f64::sqrt),
            ("abs", f64::abs),
        ] {
            ctx.set_function(name.into(), f1(f)).unwrap();
        }
        ctx.set_function(
            "pow".into(),
            Function::new(|a: &Value<DefaultNumericTypes>| {
                let v = a.as_fixed_len_tuple(2)?;
                Ok(Value::Float(v[0].as_number()?.powf(v[1].as_number()?)))
            }),
        )
        .unwrap();
        ctx.set_value("pi".into(), Value::Float(std::f64::consts::PI)).unwrap();
        ctx.set_value("e".into(), Value::Float(std::f64::consts::E)).unwrap();
        for (k, v) in [("t", t), ("n", n), ("avg", avg)] {
            ctx.set_value(k.into(), Value::Float(v)).unwrap();
        }
        tree.eval_number_with_context(&ctx).unwrap()
    }
    let sources = [
        "avg + sqrt(ln(n))",
        "1 + t/n - 2*avg^2 % 3",
        "max(avg, t/n, 1/3) - min(2, ln(t + 1), sqrt(avg))",
        "-avg^0.5 + pow(n, 1/3) * exp(-t/1000)",
        "floor(avg) + ceil(t/7) - round(n/3) + abs(-avg) + log2(n) + log10(t+1)",
        "pi * e / (t - avg)",
        "(((avg + 1) * (t - 2)) / ((n)))",
        "avg - 1 + t/4",
    ];
    let mut rng = sim_rng(99);
    let mut stack = Vec::new();
    for src in sources {
        let f = Formula::parse(src, ballast_core::formula_threshold::VARS).unwrap();
        for k in 0..2000u64 {
            let u = |r: &mut ballast_core::SimRng| {
                (rand::RngCore::next_u64(r) >> 11) as f64 / (1u64 << 53) as f64
            };
            let t = (u(&mut rng) * 1e6).floor();
            let n = 1.0 + (u(&mut rng) * 1e4).floor();
            let avg = if k % 3 == 0 { t / n } else { u(&mut rng) * 100.0 };
            let (got, want) = (f.eval(&[t, n, avg], &mut stack), reference(src, t, n, avg));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{src} at t={t}, n={n}, avg={avg}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn the_process_is_declared_once_and_checked() {
    let def = registry::find("formula_threshold").unwrap();
    let p = def.param("f").unwrap();
    // Text on the command line, a number or a formula in a config.
    assert_eq!(def.parse_value(p, "t/n + 1").unwrap(), ParamValue::Text("t/n + 1".into()));
    assert_eq!(def.build(&[("f", ParamValue::Num(2.0))]).unwrap(), formula("2.0"));
    for (bad, why) in [
        ("avg + c", "unknown variable `c`"),
        ("avg >= 1", "not accepted"),
        ("sqr(t)", "unknown function `sqr`"),
        ("min(t)", "two or more"),
        ("min(1,", "cannot parse"),
        ("1 +", "without its operands"),
    ] {
        let e = def.parse_value(p, bad).unwrap_err();
        assert_eq!(e.param.as_deref(), Some("f"), "{bad}");
        assert!(e.message.contains(why), "{bad}: {e}");
        assert!(def.build(&[("f", ParamValue::Text(bad.into()))]).is_err());
    }
    // Batched on the bin engine; the level engine runs it sequentially only, and `auto`
    // picks the bin engine for batches.
    let s = RunSpec::new(formula("avg + 1"), 100, 10_000).batched(100);
    assert!(check_run(&s).unwrap().is_empty());
    assert_eq!(ballast_core::resolve_engine(&s).unwrap(), Engine::Bins);
    let e = check_run(&s.clone().engine(Engine::Levels)).unwrap_err();
    assert!(e.message.contains("sequentially only"), "{e}");
    // The delay setting is refused by the registry's settings.
    let mut d = RunSpec::new(formula("avg + 1"), 100, 1000);
    d.setting = ballast_core::Setting::Delay { tau: 3, mode: ballast_core::DelayMode::Random };
    assert!(check_run(&d).is_err());
    // A time-dependent threshold changes the run: a rising threshold loosens the process.
    let tight = simulate(&RunSpec::new(formula("avg"), 1000, 100_000), &mut sim_rng(3)).unwrap();
    let loose =
        simulate(&RunSpec::new(formula("avg + t/1000"), 1000, 100_000), &mut sim_rng(3)).unwrap();
    assert!(loose.final_gap > tight.final_gap, "{} vs {}", loose.final_gap, tight.final_gap);
}
