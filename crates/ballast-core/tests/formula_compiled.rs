//! `Formula::compiled` (closures) against `Formula::eval` (the postfix interpreter): the same
//! value, bit for bit, on generated decision formulas and values; and a deliberately wrong
//! compilation (`if` testing `c > 0` instead of `c != 0`) disagrees somewhere on the same
//! corpus, so the corpus can see that kind of mistake.
//!
//! Deterministic: formulas and values come from a fixed seed. Not statistical: any
//! disagreement fails.

use ballast_core::formula::{CompileFlaw, Formula};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

const VARS: &[&str] = &["x1", "x2", "x3", "avg", "t", "u"];

/// A random decision formula of at most `depth` levels.
fn formula(rng: &mut Pcg64, depth: u32) -> String {
    let leaf = |rng: &mut Pcg64| -> String {
        const CONSTS: [&str; 7] = ["0", "1", "2", "0.5", "3", "1e308", "0.1"];
        if rng.random_bool(0.6) {
            VARS[rng.random_range(0..VARS.len())].to_owned()
        } else {
            CONSTS[rng.random_range(0..CONSTS.len())].to_owned()
        }
    };
    if depth == 0 || rng.random_bool(0.2) {
        return leaf(rng);
    }
    let sub = |rng: &mut Pcg64| formula(rng, depth - 1);
    match rng.random_range(0..8) {
        0 | 1 => {
            let (a, c, b) = (sub(rng), sub(rng), sub(rng));
            format!("if({c}, {a}, {b})")
        }
        2 => {
            const OPS: [&str; 6] = ["<", "<=", ">", ">=", "==", "!="];
            let (a, b) = (sub(rng), sub(rng));
            format!("({a} {} {b})", OPS[rng.random_range(0..OPS.len())])
        }
        3 => {
            const OPS: [&str; 2] = ["&&", "||"];
            let (a, b) = (sub(rng), sub(rng));
            format!("({a} {} {b})", OPS[rng.random_range(0..OPS.len())])
        }
        4 => {
            const OPS: [&str; 6] = ["+", "-", "*", "/", "%", "^"];
            let (a, b) = (sub(rng), sub(rng));
            format!("({a} {} {b})", OPS[rng.random_range(0..OPS.len())])
        }
        5 => {
            const FNS: [&str; 7] = ["ln", "sqrt", "abs", "floor", "ceil", "round", "exp"];
            format!("{}({})", FNS[rng.random_range(0..FNS.len())], sub(rng))
        }
        6 => {
            let k = rng.random_range(2..=3);
            let args: Vec<String> = (0..k).map(|_| sub(rng)).collect();
            let f = if rng.random_bool(0.5) { "min" } else { "max" };
            format!("{f}({})", args.join(", "))
        }
        _ => {
            let a = sub(rng);
            if rng.random_bool(0.5) {
                format!("-({a})")
            } else {
                format!("!({a})")
            }
        }
    }
}

/// Values of the variables: small loads and averages, negative and fractional ones, NaN
/// and infinities now and then.
fn values(rng: &mut Pcg64) -> Vec<f64> {
    (0..VARS.len())
        .map(|_| match rng.random_range(0..10) {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => -rng.random_range(0.0..3.0),
            3 => 0.0,
            4..=6 => f64::from(rng.random_range(0u32..6)),
            _ => rng.random_range(0.0..5.0),
        })
        .collect()
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn compiled_formulas_give_the_interpreters_values_and_a_wrong_compilation_is_caught() {
    let mut rng = Pcg64::seed_from_u64(20261205);
    let (mut parsed, mut checked, mut flaw_seen) = (0, 0u64, 0u64);
    let mut stack = Vec::new();
    for _ in 0..3000 {
        let src = formula(&mut rng, 4);
        let Ok(f) = Formula::parse_decision(&src, VARS) else { continue };
        parsed += 1;
        let (good, bad) = (f.compiled(), f.compiled_flawed(CompileFlaw::IfPositive));
        for _ in 0..40 {
            let v = values(&mut rng);
            let want = f.eval(&v, &mut stack);
            let got = good.eval(&v);
            assert!(same(want, got), "{src} at {v:?}: interpreter {want}, compiled {got}");
            checked += 1;
            flaw_seen += u64::from(!same(want, bad.eval(&v)));
        }
    }
    // The generator must mostly produce accepted formulas, or the test checks little.
    assert!(parsed >= 2500, "only {parsed} of 3000 generated formulas parse");
    // The wrong compilation differs on a good share of the corpus (negative and NaN
    // conditions are common by construction).
    assert!(flaw_seen * 50 >= checked, "the flaw shows in only {flaw_seen} of {checked} values");
    println!("{parsed} formulas, {checked} values; the flawed compilation differs at {flaw_seen}");
}

/// The rule formula of the README compiles to the same decisions as the interpreter at every
/// load pair and coin, including ties.
#[test]
fn two_choice_with_random_ties_is_unchanged() {
    let src = "if(x1 < x2, 1, if(x2 < x1, 2, if(u < 0.5, 1, 2)))";
    let f = Formula::parse_decision(src, VARS).unwrap();
    let c = f.compiled();
    let mut stack = Vec::new();
    for x1 in 0..5 {
        for x2 in 0..5 {
            for u in [0.0, 0.25, 0.5, 0.75] {
                let v = [f64::from(x1), f64::from(x2), 0.0, 0.0, 0.0, u];
                assert_eq!(f.eval(&v, &mut stack).to_bits(), c.eval(&v).to_bits());
            }
        }
    }
}
