//! Twinning with general weights (the Mean-Biased processes of arXiv 2308.05087: an
//! underloaded sample gets `a` balls, an overloaded one `b`) is the `filling_rule` formula
//! `if(x < avg, a, b)`; no built-in is added. This checks the formula against the law of that
//! definition for a = 3, b = 2 on both engines and rejects `<=` for `<`.
//!
//! Statistics. n = 3 bins, m = 10 balls from empty bins, truncation at m; the law of the
//! sorted final loads is enumerated from the definition (a uniform sample; x·n < W: a balls,
//! else b; a step that would pass m places the balls left). 20 000 seeded runs (seeds
//! 8000..28000) are compared with it by Pearson's χ² at α = 0.001 ([`common::fit_final_law`];
//! cells with expected count below 5 pooled). Power: the wrong formula (`<=`) gives 3 balls
//! at the first step (x = avg = 0), so its runs reach states the right law cannot, a certain
//! rejection (χ² infinite); on the shared states its law still has noncentrality
//! λ = RUNS·Σ(p − q)²/p = 15 901 (asserted ≥ 200).

mod common;

use std::collections::BTreeMap;

use ballast_core::registry::{find, ParamValue};
use ballast_core::{Engine, RunSpec};

const N: u64 = 3;
const M: u64 = 10;
const RUNS: u64 = 20_000;

/// The law of the heaviest-first sorted loads: `a` balls if `under(x·n, W)`, else `b`.
fn law(a: u64, b: u64, under: fn(u64, u64) -> bool) -> BTreeMap<Vec<u64>, f64> {
    let mut open: BTreeMap<(u64, Vec<u64>), f64> = BTreeMap::from([((0, vec![0; 3]), 1.0)]);
    let mut law = BTreeMap::new();
    while let Some(((w, loads), q)) = open.pop_first() {
        if w == M {
            *law.entry(loads).or_insert(0.0) += q;
            continue;
        }
        for bin in 0..3 {
            let k = if under(loads[bin] * N, w) { a } else { b }.min(M - w);
            let mut after = loads.clone();
            after[bin] += k;
            after.sort_unstable_by(|x, y| y.cmp(x));
            *open.entry((w + k, after)).or_insert(0.0) += q / 3.0;
        }
    }
    law
}

fn chi2(formula: &str, engine: Engine, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    let process = find("filling_rule")
        .unwrap()
        .build(&[("balls", ParamValue::Text(formula.to_owned()))])
        .unwrap();
    common::fit_final_law(&RunSpec::new(process, N, M).engine(engine), RUNS, 8000, law)
}

#[test]
fn mean_biased_weights_as_a_formula_have_the_law_of_the_definition() {
    let right = law(3, 2, |xn, w| xn < w);
    let wrong = law(3, 2, |xn, w| xn <= w);
    assert!((right.values().sum::<f64>() - 1.0).abs() < 1e-12);
    let lambda: f64 = right
        .iter()
        .map(|(k, &p)| RUNS as f64 * (p - wrong.get(k).copied().unwrap_or(0.0)).powi(2) / p)
        .sum();
    assert!(lambda >= 200.0, "the test's power: noncentrality {lambda:.1}");
    for engine in [Engine::Bins, Engine::Levels] {
        let (stat, crit) = chi2("if(x < avg, 3, 2)", engine, &right);
        println!("a = 3, b = 2 on {engine:?}: χ² = {stat:.2} (critical {crit:.2})");
        assert!(stat < crit, "{engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
        let (stat, crit) = chi2("if(x <= avg, 3, 2)", engine, &right);
        println!("<= on {engine:?}: χ² = {stat:.1} (critical {crit:.2}, λ = {lambda:.0})");
        assert!(stat > crit, "{engine:?}: the wrong formula passed, χ² = {stat:.1}");
    }
}
