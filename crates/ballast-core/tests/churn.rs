//! Churn (bins joining and leaving): the exact law of the final loads at tiny n against the
//! law computed from the definition by enumeration, a wrong variant of the definition that
//! the same test rejects, and the refusals.
//!
//! Statistical tests use fixed seeds and `common::ALPHA` = 0.001 (`fit_law`: Pearson's
//! statistic, states of expected count below 5 lumped). Power: each test also computes the
//! noncentrality λ = runs · Σ (p_wrong − p)² / p of the wrong variant against the true law
//! and asserts it is large enough that the wrong variant is rejected with probability
//! essentially 1 (λ ≥ 100 with a handful of degrees of freedom).

mod common;

use std::collections::BTreeMap;

use ballast_core::{
    derive_seed, sim_rng, simulate_observed, Churn, Engine, JoinAt, Leaving, LeftBalls,
    ProcessSpec, RunSpec,
};
use common::{fit_law, FinalState};

type Law = BTreeMap<Vec<u64>, f64>;

/// One ball of d-Choice (d uniform samples with replacement, a least loaded one; which of
/// two tied bins gets it does not change the sorted vector).
fn ball(law: &Law, d: u32) -> Law {
    let mut next = Law::new();
    for (loads, &p) in law {
        let n = loads.len();
        let tuples = n.pow(d);
        for t in 0..tuples {
            let (mut x, mut best) = (t, usize::MAX);
            for _ in 0..d {
                let i = x % n;
                x /= n;
                if best == usize::MAX || loads[i] < loads[best] {
                    best = i;
                }
            }
            let mut v = loads.clone();
            v[best] += 1;
            v.sort_unstable();
            *next.entry(v).or_insert(0.0) += p / tuples as f64;
        }
    }
    next
}

/// One churn event of `c` (one leave, one join) on the law of sorted vectors, with `d`-Choice
/// for rethrown balls: the definition of `docs/churn.md#churn`.
fn event(law: &Law, c: &Churn, d: u32) -> Law {
    assert_eq!((c.leave, c.join), (1, 1), "the enumeration covers one leave and one join");
    let mut out = Law::new();
    for (loads, &p) in law {
        let n = loads.len();
        // (removed index, probability)
        let leaving: Vec<(usize, f64)> = match c.leaving {
            Leaving::Random => (0..n).map(|i| (i, 1.0 / n as f64)).collect(),
            Leaving::Heaviest => vec![(n - 1, 1.0)],
            Leaving::Lightest => vec![(0, 1.0)],
        };
        for (i, q) in leaving {
            let mut v = loads.clone();
            let removed = v.remove(i);
            let total: u64 = v.iter().sum();
            let join = match c.join_at {
                JoinAt::Empty => 0,
                JoinAt::Average => total.div_ceil(v.len() as u64),
            };
            v.push(join);
            v.sort_unstable();
            let mut after = Law::from([(v, 1.0)]);
            if c.balls == LeftBalls::Rethrown {
                for _ in 0..removed {
                    after = ball(&after, d);
                }
            }
            for (w, r) in after {
                *out.entry(w).or_insert(0.0) += p * q * r;
            }
        }
    }
    out
}

/// The law of the sorted final loads: `n` empty bins, `before` balls, one event, `after` balls.
fn exact(n: usize, d: u32, before: u64, after: u64, c: &Churn) -> Law {
    let mut law = Law::from([(vec![0; n], 1.0)]);
    for _ in 0..before {
        law = ball(&law, d);
    }
    law = event(&law, c, d);
    for _ in 0..after {
        law = ball(&law, d);
    }
    law
}

fn churn(join_at: JoinAt, leaving: Leaving, balls: LeftBalls, at: u64) -> Churn {
    Churn { every: at, first: at, events: Some(1), leave: 1, join: 1, join_at, leaving, balls }
}

/// The sorted final loads of `runs` seeded runs.
fn finals(spec: &RunSpec, runs: u64, seed: u64) -> Vec<Vec<u64>> {
    (0..runs)
        .map(|r| {
            let mut fin = FinalState::default();
            simulate_observed(spec, &mut sim_rng(derive_seed(seed, &[r])), &mut fin)
                .expect("valid");
            fin.0
        })
        .collect()
}

/// Noncentrality of `wrong` against `law` with `runs` runs (states of `law` only).
fn noncentrality(law: &Law, wrong: &Law, runs: u64) -> f64 {
    law.iter().map(|(k, &p)| (wrong.get(k).copied().unwrap_or(0.0) - p).powi(2) / p).sum::<f64>()
        * runs as f64
}

/// n = 3, 3 balls, one event, 3 more balls, on the bin and on the level engine; the
/// statistic of the simulated sorted final loads against the exact law of `c`, and against
/// the wrong variant `w`.
fn law_case(d: u32, c: Churn, w: Churn, seed: u64) {
    let (n, before, after, runs) = (3usize, 3u64, 3u64, 20_000u64);
    let law = exact(n, d, before, after, &c);
    let total: f64 = law.values().sum();
    assert!((total - 1.0).abs() < 1e-12, "{total}");
    let wrong = exact(n, d, before, after, &w);
    let lambda = noncentrality(&law, &wrong, runs);
    assert!(lambda > 100.0, "the wrong variant is too close to test: lambda = {lambda:.1}");
    for (i, engine) in [Engine::Bins, Engine::Levels].into_iter().enumerate() {
        let process = if d == 1 { ProcessSpec::OneChoice } else { ProcessSpec::DChoice { d } };
        let mut spec = RunSpec::new(process, n as u64, before + after).engine(engine);
        spec.churn = Some(c);
        let data = finals(&spec, runs, seed + 100 * i as u64);
        let (stat, crit) = fit_law(&data, &law);
        assert!(stat < crit, "{engine:?}, {c:?}: chi2 = {stat:.1} >= {crit:.1}");
        let (stat, crit) = fit_law(&data, &wrong);
        assert!(stat >= crit, "{engine:?}: wrong {w:?} not rejected: chi2 = {stat:.1} < {crit:.1}");
    }
}

#[test]
fn two_choice_with_a_bin_joining_empty_follows_the_exact_law() {
    // Wrong variant: the joining bin starts at the average instead of empty.
    let c = churn(JoinAt::Empty, Leaving::Random, LeftBalls::Lost, 3);
    let w = churn(JoinAt::Average, Leaving::Random, LeftBalls::Lost, 3);
    law_case(2, c, w, 11);
}

#[test]
fn two_choice_with_a_bin_joining_at_the_average_follows_the_exact_law() {
    // Wrong variant: joining empty.
    let c = churn(JoinAt::Average, Leaving::Random, LeftBalls::Lost, 3);
    let w = churn(JoinAt::Empty, Leaving::Random, LeftBalls::Lost, 3);
    law_case(2, c, w, 12);
}

#[test]
fn one_choice_with_the_heaviest_leaving_and_its_balls_rethrown_follows_the_exact_law() {
    // Wrong variant: the balls are lost instead of rethrown.
    let c = churn(JoinAt::Empty, Leaving::Heaviest, LeftBalls::Rethrown, 3);
    let w = churn(JoinAt::Empty, Leaving::Heaviest, LeftBalls::Lost, 3);
    law_case(1, c, w, 13);
}

#[test]
fn the_gap_is_over_the_bins_present() {
    // 4 bins, 8 balls of One-Choice, then the lightest bin leaves and two empty bins join,
    // then one more ball: 5 bins at the end, at least one of them empty.
    let mut spec = RunSpec::new(ProcessSpec::OneChoice, 4, 9);
    spec.churn = Some(Churn {
        every: 8,
        first: 8,
        events: Some(1),
        leave: 1,
        join: 2,
        join_at: JoinAt::Empty,
        leaving: Leaving::Lightest,
        balls: LeftBalls::Lost,
    });
    for r in 0..50 {
        let mut fin = FinalState::default();
        let out = simulate_observed(&spec, &mut sim_rng(r), &mut fin).expect("valid");
        assert_eq!(fin.0.len(), 5, "4 − 1 + 2 bins present at the end");
        let total: u64 = fin.0.iter().sum();
        let max = *fin.0.iter().max().unwrap();
        assert!((out.final_gap - (max as f64 - total as f64 / 5.0)).abs() < 1e-12);
        assert_eq!(out.finals.empty_bins, fin.0.iter().filter(|&&x| x == 0).count() as u64);
        assert!(fin.0.iter().filter(|&&x| x == 0).count() >= 1, "{:?}", fin.0);
    }
}

#[test]
fn both_engines_agree_on_a_larger_run() {
    // n = 200, m = 40 n, Two-Choice, every 50 balls the heaviest bin leaves and two bins join
    // at the average, the heaviest's balls rethrown: the histogram of the final maximum load
    // over 2000 runs on each engine, two-sample chi-square at ALPHA.
    let c = Churn {
        every: 50,
        first: 50,
        events: None,
        leave: 1,
        join: 2,
        join_at: JoinAt::Average,
        leaving: Leaving::Heaviest,
        balls: LeftBalls::Rethrown,
    };
    let hist = |engine: Engine, seed: u64| {
        let mut spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 200, 8000).engine(engine);
        spec.churn = Some(c);
        common::histogram(
            (0..2000u64).map(|r| {
                let out = ballast_core::simulate_seeded(&spec, derive_seed(seed, &[r])).unwrap();
                out.max_load as i64
            }),
            0,
            100,
        )
    };
    let (stat, df) = common::chi2_two_sample(&hist(Engine::Bins, 31), &hist(Engine::Levels, 32));
    assert!(stat < common::chi2_critical(df), "chi2 = {stat:.1}, df = {df}");
}

#[test]
fn churn_refuses_what_it_cannot_run() {
    let c = churn(JoinAt::Empty, Leaving::Random, LeftBalls::Lost, 2);
    let mut spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 10, 10).batched(2);
    spec.churn = Some(c);
    let e = ballast_core::simulate_seeded(&spec, 1).unwrap_err().to_string();
    assert!(e.contains("sequential setting"), "{e}");
    let mut spec = RunSpec::new(ProcessSpec::Memory { d: 2, k: 1 }, 10, 10);
    spec.churn = Some(c);
    let e = ballast_core::simulate_seeded(&spec, 1).unwrap_err().to_string();
    assert!(e.contains("cache"), "{e}");
    let mut spec = RunSpec::new(ProcessSpec::GBounded { g: 1.0 }, 10, 10).engine(Engine::Levels);
    spec.churn = Some(c);
    let e = ballast_core::simulate_seeded(&spec, 1).unwrap_err().to_string();
    assert!(e.contains("churn on the level engine takes"), "{e}");
    // `auto` keeps the bin engine for churn.
    spec.engine = Engine::Auto;
    spec.n = 10_000_000;
    assert_eq!(ballast_core::resolve_engine(&spec).unwrap(), Engine::Bins);
    // Every event removes two bins and adds none: 3 bins cannot take two events.
    let mut spec = RunSpec::new(ProcessSpec::OneChoice, 3, 10);
    spec.churn = Some(Churn { leave: 2, join: 0, events: None, ..c });
    let e = ballast_core::simulate_seeded(&spec, 1).unwrap_err().to_string();
    assert!(e.contains("no bin present"), "{e}");
}
