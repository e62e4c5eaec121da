//! The decision cache of the `rule` process (`rule_formula.rs`, `rule_formula/cache.rs`,
//! `formula/partial.rs`): cached decisions equal the formula's, and runs are the same with
//! and without it.
//!
//! - Generated decision formulas over x1..xd, u, n and d (d = 1, 2, 3; comparisons with `u`
//!   of every kind, steps whose point depends on the loads, arithmetic uses of `u` that the
//!   cache must leave to the formula, conditions that are NaN), at load tuples with ties,
//!   small, large and too large for a key, and at words of `u` on both sides of every step
//!   (the integer `k` behind `u` at K − 1, K and K + 1 for the step's `K`): the decision
//!   through the cache (`RuleFormula::decide_loads`, which fills and then hits entries)
//!   equals the formula's interpreter ([`Formula::eval`]) at every point.
//! - The same check rejects deliberately wrong caches ([`CacheFlaw`]): a step stored as the
//!   decision at one `u`, and a threshold rounded down.
//! - Whole runs (bin engine, kernels on) equal the old path (no cache, every ball through
//!   `Rule::place`, `run_rule_straightforward`) on the same seed: Two-Choice with random ties,
//!   a formula without `u`, d = 3, a rule whose loads spread beyond the table (the cache gives
//!   up), weighted balls, sampling without replacement and the batched setting; and a run
//!   that stops on a value that is not a position stops with the same message.

use ballast_core::engine::run_rule_straightforward;
use ballast_core::formula::{Formula, Residual};
use ballast_core::rule_formula::{parse, CacheFlaw, RuleFormula, VARS};
use ballast_core::{sim_rng, simulate, Engine, ProcessSpec, RunOutcome, RunSpec, SimRng, Weights};
use ballast_core::{UnitLoads, WeightedLoads};
use rand::RngCore;
use std::panic::AssertUnwindSafe;

const U: usize = 12;
const N: usize = 1000;

fn pick<'a>(rng: &mut SimRng, xs: &[&'a str]) -> &'a str {
    xs[(rng.next_u64() % xs.len() as u64) as usize]
}

/// A numeric expression over the variables of `d` samples.
fn num(rng: &mut SimRng, d: u32, depth: u32) -> String {
    let x = |rng: &mut SimRng| format!("x{}", 1 + rng.next_u64() % u64::from(d));
    if depth == 0 || rng.next_u64() % 3 == 0 {
        return match rng.next_u64() % 8 {
            0 | 1 => x(rng),
            2 => "u".into(),
            3 => pick(rng, &["n", "d"]).into(),
            _ => pick(rng, &["0.5", "0.3", "0.25", "1/3", "2", "-1", "0", "0.999"]).into(),
        };
    }
    let (a, b) = (num(rng, d, depth - 1), num(rng, d, depth - 1));
    match rng.next_u64() % 7 {
        0 => format!("({a} + {b})"),
        1 => format!("({a} - {b})"),
        2 => format!("({a} * {b})"),
        3 => format!("({a} / {b})"),
        4 => format!("min({a}, {b})"),
        5 => format!("sqrt({a})"),
        _ => format!("if({}, {a}, {b})", cond(rng, d, depth - 1)),
    }
}

/// A condition.
fn cond(rng: &mut SimRng, d: u32, depth: u32) -> String {
    match rng.next_u64() % 6 {
        0 if depth > 0 => {
            let (a, b) = (cond(rng, d, depth - 1), cond(rng, d, depth - 1));
            format!("({a} {} {b})", pick(rng, &["&&", "||"]))
        }
        1 if depth > 0 => format!("!({})", cond(rng, d, depth - 1)),
        2 => {
            // A comparison of u with a value of the loads (a step that moves with them).
            let c = format!("x1 / (x1 + x{} + 1)", d);
            let op = pick(rng, &["<", "<=", ">", ">="]);
            if rng.next_u64() % 2 == 0 {
                format!("u {op} {c}")
            } else {
                format!("{c} {op} u")
            }
        }
        _ => {
            let (a, b) = (num(rng, d, depth.min(1)), num(rng, d, depth.min(1)));
            format!("{a} {} {b}", pick(rng, &["<", "<=", ">", ">=", "==", "!="]))
        }
    }
}

/// A decision: its values are positions in 1..=d.
fn decision(rng: &mut SimRng, d: u32, depth: u32) -> String {
    if depth == 0 || rng.next_u64() % 4 == 0 {
        return (1 + rng.next_u64() % u64::from(d)).to_string();
    }
    let (a, b) = (decision(rng, d, depth - 1), decision(rng, d, depth - 1));
    match rng.next_u64() % 5 {
        0 => format!("max({a}, {b})"),
        1 => format!("if(u {} {}, {a}, {b})", pick(rng, &["<", "<="]), num(rng, d, 0)),
        _ => format!("if({}, {a}, {b})", cond(rng, d, depth.min(2))),
    }
}

/// Load tuples: all of {0, 1, 2, 3}^d, ties and neighbours at large loads, loads too large
/// for a key, and random ones.
fn load_tuples(rng: &mut SimRng, d: u32) -> Vec<Vec<u64>> {
    let mut out: Vec<Vec<u64>> =
        (0..4u64.pow(d)).map(|c| (0..d).map(|i| c / 4u64.pow(i) % 4).collect()).collect();
    for big in [(1u64 << 20) - 1, 1 << 20, (1 << 31) - 1, 1 << 31, u64::from(u32::MAX), 1 << 40] {
        out.push(vec![big; d as usize]);
        out.push((0..d).map(|i| big - u64::from(i % 2)).collect());
    }
    for _ in 0..30 {
        out.push((0..d).map(|_| rng.next_u64() % 40).collect());
    }
    out
}

/// Words of `u`: random ones, the ends of its range, and for every step the formula has at
/// these loads the integers `k` around its threshold.
fn words(f: &Formula, values: &[f64], rng: &mut SimRng) -> Vec<u64> {
    let mut ks: Vec<u64> = vec![0, 1, (1 << 52) - 1, 1 << 52, (1 << 53) - 1];
    ks.extend((0..6).map(|_| rng.next_u64() >> 11));
    if let Residual::Step { c, .. } = f.residual(values, U) {
        let s = c * (1u64 << 53) as f64;
        if s > 1.0 && s < (1u64 << 53) as f64 {
            let k = s.ceil() as u64;
            ks.extend([k - 2, k - 1, k, k + 1]);
        }
    }
    // Each twice, in both orders, so that entries are hit after they are filled.
    let mut out: Vec<u64> = ks.iter().map(|k| k << 11 | (rng.next_u64() & 0x7FF)).collect();
    out.extend(ks.iter().rev().map(|k| k << 11));
    out
}

/// The number of (formula, loads, word) points where the cache (with `flaw`) decides
/// otherwise than the formula, over `formulas` generated formulas of `d` samples.
fn mismatches(d: u32, formulas: usize, flaw: Option<CacheFlaw>, seed: u64) -> usize {
    let rng = &mut sim_rng(seed);
    let (mut bad, mut steps) = (0, 0);
    let mut stack = Vec::new();
    for _ in 0..formulas {
        let src = decision(rng, d, 3);
        let f = parse(&src, d).unwrap_or_else(|e| panic!("{src}: {e}"));
        let mut cached = RuleFormula::with_cache(&f, d, true, true, flaw);
        for xs in load_tuples(rng, d) {
            let mut values = [0.0; VARS.len()];
            for (v, &x) in values.iter_mut().zip(&xs) {
                *v = x as f64;
            }
            (values[10], values[11]) = (N as f64, f64::from(d));
            steps += usize::from(matches!(f.residual(&values, U), Residual::Step { .. }));
            for w in words(&f, &values, rng) {
                values[U] = (w >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
                let want = f.eval(&values, &mut stack);
                let got = cached.decide_loads(&xs, N, 7, w);
                if got as f64 + 1.0 != want {
                    bad += 1;
                }
            }
        }
    }
    // d = 1 has one position: every decision is constant.
    assert!(d == 1 || steps > formulas, "the generated formulas have steps in u ({steps})");
    println!("d = {d}, {flaw:?}: {steps} load tuples with a step in u, {bad} mismatches");
    bad
}

#[test]
fn cached_decisions_equal_the_formula() {
    for d in 1..=3 {
        assert_eq!(mismatches(d, 300, None, u64::from(d)), 0, "d = {d}");
    }
}

#[test]
fn wrong_caches_are_rejected() {
    for flaw in [CacheFlaw::StepAsConstant, CacheFlaw::FloorThreshold] {
        let bad = mismatches(2, 300, Some(flaw), 2);
        assert!(bad > 0, "{flaw:?} is not detected");
    }
}

#[test]
fn residuals_of_two_choice() {
    let f = parse("if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))", 2).unwrap();
    let at = |x1: f64, x2: f64| {
        let mut v = [0.0; VARS.len()];
        (v[0], v[1]) = (x1, x2);
        f.residual(&v, U)
    };
    assert_eq!(at(3.0, 4.0), Residual::Const(1.0));
    assert_eq!(at(4.0, 3.0), Residual::Const(2.0));
    assert_eq!(at(4.0, 4.0), Residual::Step { c: 0.5, lo: 1.0, hi: 2.0 });
    let g = parse("if(u * 2 < 1, 1, 2)", 2).unwrap();
    assert_eq!(g.residual(&[0.0; VARS.len()], U), Residual::Unknown);
}

#[test]
fn a_cache_that_keeps_missing_is_dropped_and_decisions_stay_exact() {
    let f = parse(TWO_CHOICE, 2).unwrap();
    let mut cached = RuleFormula::new(&f, 2, true);
    assert!(cached.caches());
    let rng = &mut sim_rng(9);
    let mut stack = Vec::new();
    for t in 0..20_000u64 {
        // Loads spread over 0..1000: nearly every decision misses the table.
        let xs = [rng.next_u64() % 1000, rng.next_u64() % 1000];
        let w = rng.next_u64();
        let mut values = [0.0; VARS.len()];
        (values[0], values[1], values[10], values[11]) = (xs[0] as f64, xs[1] as f64, 1e3, 2.0);
        values[U] = (w >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        let want = f.eval(&values, &mut stack);
        assert_eq!(cached.decide_loads(&xs, N, t, w) as f64 + 1.0, want, "ball {t}");
    }
    assert!(!cached.caches(), "the cache is dropped");
}

fn rule(d: u32, choose: &str) -> ProcessSpec {
    use ballast_core::registry::{find, ParamValue};
    let params =
        [("d", ParamValue::Num(f64::from(d))), ("choose", ParamValue::Text(choose.into()))];
    find("rule").expect("rule").build(&params).unwrap_or_else(|e| panic!("{choose}: {e}"))
}

/// A run of `spec` the old way: no cache, every ball through `Rule::place`.
fn old_path(spec: &RunSpec, seed: u64) -> RunOutcome {
    let ProcessSpec::Rule { d, choose, replacement } = &spec.process else { panic!("a rule") };
    let rule = RuleFormula::with_cache(choose, *d, *replacement, false, None);
    let rng = &mut sim_rng(seed);
    let n = spec.n as usize;
    match spec.weights {
        Weights::Unit => {
            run_rule_straightforward(spec, UnitLoads::new(n, false), rule, rng, &mut ())
        }
        w => {
            let state = WeightedLoads::of_law(n, w).expect("a law");
            run_rule_straightforward(spec, state, rule, rng, &mut ())
        }
    }
}

const TWO_CHOICE: &str = "if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))";

#[test]
fn runs_equal_the_old_path() {
    let base = |d: u32, f: &str| RunSpec::new(rule(d, f), 1000, 50_000).engine(Engine::Bins);
    let observed = |d: u32, f: &str| {
        let mut s = base(d, f);
        (s.observe_every, s.record_trajectory) = (Some(777), true);
        s
    };
    let without_replacement = match rule(3, "if(x1 <= min(x2, x3), 1, if(x2 <= x3, 2, 3))") {
        ProcessSpec::Rule { d, choose, .. } => ProcessSpec::Rule { d, choose, replacement: false },
        _ => unreachable!(),
    };
    let specs = [
        base(2, TWO_CHOICE),
        base(2, "if(x2 + 2 <= x1, 2, 1)"),
        base(3, "if(x1 < min(x2, x3), 1, if(x2 < x3, 2, if(u < 1/3, 1, if(u < 0.7, 2, 3))))"),
        base(2, "if(u < 0.5, 1, 2)"),
        base(2, "if(u * 2 < 1, 1, if(x1 < x2, 1, 2))"),
        base(2, TWO_CHOICE).weights(Weights::Exp { mean: 1.0 }),
        RunSpec::new(without_replacement, 1000, 50_000).engine(Engine::Bins),
        base(2, TWO_CHOICE).batched(500),
        observed(2, TWO_CHOICE),
        observed(3, "if(x1 < min(x2, x3), 1, if(x2 < x3, 2, if(u < 0.5, 1, 3)))"),
        {
            let mut s = observed(2, TWO_CHOICE);
            s.record_loads = true;
            s
        },
    ];
    for (i, spec) in specs.iter().enumerate() {
        for seed in [5, 6] {
            let new = simulate(spec, &mut sim_rng(seed)).expect("runs");
            assert_eq!(new, old_path(spec, seed), "spec {i}, seed {seed}");
        }
    }
}

#[test]
fn a_value_that_is_not_a_position_stops_the_run_the_same_way() {
    let f = "if(x1 > 12, 0.5, if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2))))";
    let spec = RunSpec::new(rule(2, f), 100, 10_000).engine(Engine::Bins);
    let message = |r: std::thread::Result<RunOutcome>| {
        let e = r.expect_err("the run stops");
        e.downcast_ref::<String>().cloned().expect("a message")
    };
    let run = AssertUnwindSafe(|| simulate(&spec, &mut sim_rng(3)).unwrap());
    let new = message(std::panic::catch_unwind(run));
    let old = message(std::panic::catch_unwind(AssertUnwindSafe(|| old_path(&spec, 3))));
    assert_eq!(new, old);
    assert!(new.contains("gives 0.5 at x1 = 13"), "{new}");
}
