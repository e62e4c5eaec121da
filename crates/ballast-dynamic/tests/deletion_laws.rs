//! Exact laws of the deletion models at tiny n: the law of the load vector after `T` steps is
//! computed from the definition by enumerating every state (the balls in age order with
//! their choices, and the deleted balls waiting to come back), and the simulation's load
//! vectors are compared with it by Pearson's χ² at α = [`ALPHA`] = 0.001 (cells with an
//! expected count below 5 pooled into one). Each law is also checked against a deliberately
//! wrong variant of itself (a uniform bin including empty ones, proportional instead of
//! uniform, youngest instead of oldest, fresh choices instead of reinsertion): the same test
//! on the same draws must reject it. Power: the test prints the noncentrality
//! `λ = N·Σ (p − q)²/q` of the wrong law `q` against the right one `p`, and every case
//! asserts that the noncentral χ²(df, λ) (mean df + λ, variance 2(df + 2λ), normal
//! approximation) lies above the critical value by at least 2.33 of its standard
//! deviations: power above 0.99, so a rejection is the expected outcome, not luck.
//!
//! Seeds are fixed (one per case, below); N = 40 000 runs per case, each a fresh system.

use std::collections::{BTreeMap, VecDeque};

use ballast_core::sim_rng;
use ballast_dynamic::workload::{Beta, Workload};
use ballast_dynamic::{
    DeletionConfig, DeletionLaw, Deletions, Insertion, LevelDeletions, RoundProcess,
};
use ballast_testkit::{chi2_critical, ALPHA};

/// Runs per case.
const N: u64 = 40_000;

/// Deletion rules of the enumeration: the three laws and two wrong ones.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Rule {
    UniformBin,
    /// Wrong: a uniform bin among all n, nothing happens when it is empty.
    AnyBin,
    UniformBall,
    Oldest,
    /// Wrong: the youngest ball.
    Youngest,
}

/// A full state: the balls in age order (bin, choices) and the deleted balls waiting.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct State {
    balls: Vec<(u8, (u8, u8))>,
    out: VecDeque<(u8, u8)>,
}

impl State {
    fn loads(&self, n: usize) -> Vec<u8> {
        let mut l = vec![0u8; n];
        for &(b, _) in &self.balls {
            l[b as usize] += 1;
        }
        l
    }
}

/// What the enumeration needs of a case.
struct Case {
    n: usize,
    insertion: Insertion,
    rule: Rule,
    reinsert: bool,
    /// Insertion probability at step t (1 or 0 for a deterministic workload).
    beta: fn(u64) -> f64,
    steps: u64,
}

/// The bins a ball with choices `pair` may join, with probabilities: the less loaded of the
/// two, a fair coin on a tie of two different bins.
fn pick(loads: &[u8], (i, j): (u8, u8)) -> Vec<(u8, f64)> {
    let (li, lj) = (loads[i as usize], loads[j as usize]);
    if i == j || li < lj {
        vec![(i, 1.0)]
    } else if lj < li {
        vec![(j, 1.0)]
    } else {
        vec![(i, 0.5), (j, 0.5)]
    }
}

/// The new balls' (choices, bin) with probabilities, from the definition of the rule.
fn fresh(c: &Case, loads: &[u8]) -> Vec<((u8, u8), u8, f64)> {
    let n = c.n as u8;
    let p1 = 1.0 / c.n as f64;
    let mut out = Vec::new();
    let singles = |w: f64, out: &mut Vec<_>| (0..n).for_each(|i| out.push(((i, i), i, w * p1)));
    let pairs = |w: f64, out: &mut Vec<_>| {
        for i in 0..n {
            for j in 0..n {
                for (b, q) in pick(loads, (i, j)) {
                    out.push(((i, j), b, w * p1 * p1 * q));
                }
            }
        }
    };
    match c.insertion {
        Insertion::Greedy(1) => singles(1.0, &mut out),
        Insertion::Greedy(2) => pairs(1.0, &mut out),
        Insertion::Greedy(d) => {
            // d samples (n^d tuples), a least loaded one, ties uniform over the tied samples.
            let tuples = c.n.pow(d);
            for code in 0..tuples {
                let s: Vec<u8> = (0..d).map(|k| ((code / c.n.pow(k)) % c.n) as u8).collect();
                let min = s.iter().map(|&b| loads[b as usize]).min().unwrap();
                let tied: Vec<u8> =
                    s.iter().copied().filter(|&b| loads[b as usize] == min).collect();
                for &b in &tied {
                    out.push(((b, b), b, 1.0 / tuples as f64 / tied.len() as f64));
                }
            }
        }
        Insertion::OnePlusBeta(beta) => {
            pairs(beta, &mut out);
            singles(1.0 - beta, &mut out);
        }
    }
    out
}

/// The successors of `s` by one insertion.
fn insert(c: &Case, s: &State) -> Vec<(State, f64)> {
    let loads = s.loads(c.n);
    if c.reinsert && !s.out.is_empty() {
        let mut t = s.clone();
        let pair = t.out.pop_front().unwrap();
        return pick(&loads, pair)
            .into_iter()
            .map(|(b, q)| {
                let mut u = t.clone();
                u.balls.push((b, pair));
                (u, q)
            })
            .collect();
    }
    fresh(c, &loads)
        .into_iter()
        .map(|(pair, b, q)| {
            let mut u = s.clone();
            u.balls.push((b, pair));
            (u, q)
        })
        .collect()
}

/// The successors of `s` by one deletion (the state itself when nothing is deleted).
fn delete(c: &Case, s: &State) -> Vec<(State, f64)> {
    let k = s.balls.len();
    if k == 0 {
        return vec![(s.clone(), 1.0)];
    }
    let loads = s.loads(c.n);
    // Probability of deleting ball number `idx` (age order).
    let weights: Vec<f64> = match c.rule {
        Rule::UniformBall => vec![1.0 / k as f64; k],
        Rule::Oldest => (0..k).map(|i| f64::from(u8::from(i == 0))).collect(),
        Rule::Youngest => (0..k).map(|i| f64::from(u8::from(i == k - 1))).collect(),
        Rule::UniformBin | Rule::AnyBin => {
            let bins = match c.rule {
                Rule::UniformBin => loads.iter().filter(|&&x| x > 0).count(),
                _ => c.n,
            };
            s.balls.iter().map(|&(b, _)| 1.0 / bins as f64 / f64::from(loads[b as usize])).collect()
        }
    };
    let mut next: Vec<(State, f64)> = Vec::new();
    let kept: f64 = 1.0 - weights.iter().sum::<f64>();
    if kept > 1e-12 {
        next.push((s.clone(), kept));
    }
    for (idx, &w) in weights.iter().enumerate().filter(|(_, &w)| w > 0.0) {
        let mut u = s.clone();
        let (_, pair) = u.balls.remove(idx);
        if c.reinsert {
            u.out.push_back(pair);
        }
        next.push((u, w));
    }
    next
}

/// The exact law of the load vector after `c.steps` steps from the empty system.
fn exact(c: &Case) -> BTreeMap<Vec<u8>, f64> {
    exact_as(c, |v| v)
}

/// The exact law of the sorted load vector (what the level engine keeps).
fn exact_sorted(c: &Case) -> BTreeMap<Vec<u8>, f64> {
    exact_as(c, |mut v| {
        v.sort_unstable();
        v
    })
}

/// The exact law of `view(load vector)` after `c.steps` steps from the empty system.
fn exact_as(c: &Case, view: impl Fn(Vec<u8>) -> Vec<u8>) -> BTreeMap<Vec<u8>, f64> {
    let mut law: BTreeMap<State, f64> = BTreeMap::new();
    law.insert(State { balls: Vec::new(), out: VecDeque::new() }, 1.0);
    for t in 0..c.steps {
        let beta = (c.beta)(t);
        let mut next: BTreeMap<State, f64> = BTreeMap::new();
        for (s, p) in &law {
            let moves = [(beta, insert as fn(&Case, &State) -> _), (1.0 - beta, delete)];
            for (w, f) in moves.into_iter().filter(|(w, _)| *w > 0.0) {
                for (u, q) in f(c, s) {
                    *next.entry(u).or_default() += p * w * q;
                }
            }
        }
        law = next;
    }
    let mut loads: BTreeMap<Vec<u8>, f64> = BTreeMap::new();
    for (s, p) in law {
        *loads.entry(view(s.loads(c.n))).or_default() += p;
    }
    loads
}

/// Simulated load vectors after `steps` steps, `N` runs from `seed`.
fn simulate(cfg: &DeletionConfig, steps: u64, seed: u64) -> BTreeMap<Vec<u8>, u64> {
    let mut rng = sim_rng(seed);
    let mut counts = BTreeMap::new();
    for _ in 0..N {
        let mut p = Deletions::new(cfg).unwrap();
        for _ in 0..steps {
            p.step(&mut rng);
        }
        p.check_state().unwrap();
        *counts.entry(p.loads().iter().map(|&x| x as u8).collect()).or_insert(0) += 1;
    }
    counts
}

/// Pearson's χ² of `counts` against `law` with cells of expected count below 5 pooled (and
/// the pool merged into the smallest cell if it is itself below 5); (statistic, df).
fn chi2(counts: &BTreeMap<Vec<u8>, u64>, law: &BTreeMap<Vec<u8>, f64>) -> (f64, usize) {
    let total = N as f64;
    let unknown: Vec<_> = counts.keys().filter(|k| !law.contains_key(*k)).collect();
    assert!(unknown.is_empty(), "states the law gives probability 0: {unknown:?}");
    let (mut cells, mut pool) = (Vec::new(), (0.0, 0.0));
    for (k, &p) in law {
        let o = counts.get(k).copied().unwrap_or(0) as f64;
        if p * total >= 5.0 {
            cells.push((o, p * total));
        } else {
            pool = (pool.0 + o, pool.1 + p * total);
        }
    }
    if pool.1 >= 5.0 {
        cells.push(pool);
    } else if pool.1 > 0.0 {
        let i = (0..cells.len()).min_by(|&a, &b| cells[a].1.total_cmp(&cells[b].1)).unwrap();
        cells[i] = (cells[i].0 + pool.0, cells[i].1 + pool.1);
    }
    let stat = cells.iter().map(|(o, e)| (o - e).powi(2) / e).sum();
    (stat, cells.len() - 1)
}

/// `N·Σ (p − q)²/q` over the states of the right law `p` and the wrong law `q` (where q > 0).
fn noncentrality(right: &BTreeMap<Vec<u8>, f64>, wrong: &BTreeMap<Vec<u8>, f64>) -> f64 {
    let mut keys: Vec<&Vec<u8>> = right.keys().chain(wrong.keys()).collect();
    keys.sort();
    keys.dedup();
    let get = |m: &BTreeMap<Vec<u8>, f64>, k: &Vec<u8>| m.get(k).copied().unwrap_or(0.0);
    keys.iter()
        .filter(|k| get(wrong, k) > 0.0)
        .map(|k| (get(right, k) - get(wrong, k)).powi(2) / get(wrong, k))
        .sum::<f64>()
        * N as f64
}

/// Simulated sorted load vectors of the level engine after `steps` steps, `N` runs.
fn simulate_levels(cfg: &DeletionConfig, steps: u64, seed: u64) -> BTreeMap<Vec<u8>, u64> {
    let mut rng = sim_rng(seed);
    let mut counts = BTreeMap::new();
    for _ in 0..N {
        let mut p = LevelDeletions::starting(cfg, &mut rng).unwrap();
        for _ in 0..steps {
            p.step(&mut rng);
        }
        p.check_state().unwrap();
        *counts.entry(p.sorted_loads().iter().map(|&x| x as u8).collect()).or_insert(0) += 1;
    }
    counts
}

/// The right law passes, the wrong one is rejected, on the same simulated draws (bin engine).
fn check(what: &str, cfg: DeletionConfig, right: Case, wrong: Case, seed: u64) {
    let counts = simulate(&cfg, right.steps, seed);
    check_counts(what, &counts, &exact(&right), &exact(&wrong));
}

/// As [`check`] on the level engine, with the laws of the sorted load vector.
fn check_levels(what: &str, mut cfg: DeletionConfig, right: Case, wrong: Case, seed: u64) {
    cfg.levels = true;
    let counts = simulate_levels(&cfg, right.steps, seed);
    check_counts(what, &counts, &exact_sorted(&right), &exact_sorted(&wrong));
}

/// The χ² test of `counts` against the right law `law` passes and against `bad` rejects.
fn check_counts(
    what: &str,
    counts: &BTreeMap<Vec<u8>, u64>,
    law: &BTreeMap<Vec<u8>, f64>,
    bad: &BTreeMap<Vec<u8>, f64>,
) {
    let (counts, law, bad) = (counts.clone(), law.clone(), bad.clone());
    let total: f64 = law.values().sum();
    assert!((total - 1.0).abs() < 1e-9, "{what}: the law sums to {total}");
    let (stat, df) = chi2(&counts, &law);
    let crit = chi2_critical(df);
    let lambda = noncentrality(&law, &bad);
    eprintln!("{what}: χ² = {stat:.1} on {df} df (critical {crit:.1} at α = {ALPHA}); wrong law: noncentrality {lambda:.0}");
    assert!(stat < crit, "{what}: χ² = {stat} ≥ {crit} on {df} df");
    let df_f = df as f64;
    let low = df_f + lambda - 2.33 * (2.0 * (df_f + 2.0 * lambda)).sqrt();
    assert!(low > crit, "{what}: the wrong variant is too close to test (λ = {lambda})");
    // The wrong law may give probability 0 to simulated states: then it is refuted outright.
    if counts.keys().any(|k| !bad.contains_key(k)) {
        eprintln!("{what}: wrong law refuted by a state it deems impossible");
        return;
    }
    let (wstat, wdf) = chi2(&counts, &bad);
    assert!(wstat > chi2_critical(wdf), "{what}: wrong variant not rejected: {wstat} on {wdf} df");
}

fn cfg(
    n: usize,
    workload: Workload,
    insertion: Insertion,
    law: DeletionLaw,
    re: bool,
) -> DeletionConfig {
    let mut c = DeletionConfig::new(n, workload);
    c.insertion = insertion;
    c.deletion = law;
    c.reinsert = re;
    c
}

fn beta_06(_: u64) -> f64 {
    0.6
}

#[test]
fn random_deletions_from_a_uniform_non_empty_bin() {
    let w = Workload::Random(Beta::Const(0.6));
    let c = cfg(3, w, Insertion::Greedy(2), DeletionLaw::UniformBin, false);
    let case = |rule| Case {
        n: 3,
        insertion: Insertion::Greedy(2),
        rule,
        reinsert: false,
        beta: beta_06,
        steps: 6,
    };
    check("uniform bin vs any bin", c.clone(), case(Rule::UniformBin), case(Rule::AnyBin), 11);
    check("uniform bin vs uniform ball", c, case(Rule::UniformBin), case(Rule::UniformBall), 11);
}

#[test]
fn random_deletions_of_a_uniform_ball_with_a_formula_beta() {
    // β(t) = 0.9 − 0.1·t (0.9, 0.8, …, 0.3 over the 7 steps): the formula path.
    fn beta(t: u64) -> f64 {
        0.9 - 0.1 * t as f64
    }
    let w = Workload::Random(Beta::parse("0.9 - 0.1 * t").unwrap());
    let c = cfg(3, w, Insertion::Greedy(3), DeletionLaw::UniformBall, false);
    let case = |rule| Case {
        n: 3,
        insertion: Insertion::Greedy(3),
        rule,
        reinsert: false,
        beta,
        steps: 7,
    };
    check("uniform ball vs uniform bin", c, case(Rule::UniformBall), case(Rule::UniformBin), 12);
}

fn phases(t: u64) -> f64 {
    // Workload phases with m = 4, phase = 2: 4 insertions, then 2 deletions, 2 insertions, …
    f64::from(u8::from(t < 4 || ((t - 4) / 2) % 2 == 1))
}

#[test]
fn oldest_first_deletions() {
    let w = Workload::Phases { m: 4, phase: 2 };
    let c = cfg(3, w, Insertion::Greedy(2), DeletionLaw::Oldest, false);
    let case = |rule| Case {
        n: 3,
        insertion: Insertion::Greedy(2),
        rule,
        reinsert: false,
        beta: phases,
        steps: 10,
    };
    check("oldest vs youngest", c, case(Rule::Oldest), case(Rule::Youngest), 13);
}

#[test]
fn reinsertion_with_the_balls_own_choices() {
    for (law, rule, seed) in [
        (DeletionLaw::UniformBall, Rule::UniformBall, 14),
        (DeletionLaw::UniformBin, Rule::UniformBin, 15),
        (DeletionLaw::Oldest, Rule::Oldest, 16),
    ] {
        let w = Workload::Phases { m: 4, phase: 2 };
        let ins = Insertion::OnePlusBeta(0.7);
        let c = cfg(3, w, ins, law, true);
        let case = |re| Case { n: 3, insertion: ins, rule, reinsert: re, beta: phases, steps: 12 };
        check(&format!("{} reinsert vs fresh", law.name()), c, case(true), case(false), seed);
    }
}

#[test]
fn schedules_parse_and_refuse_with_places() {
    use ballast_dynamic::workload::parse_schedule;
    let s = parse_schedule("# fill\n+3\n*\n-\n+\n").unwrap();
    assert_eq!(s.prefix.len(), 1);
    assert_eq!(s.cycle.len(), 2);
    let e = parse_schedule("+2\n  x5\n").unwrap_err();
    assert_eq!((e.line, e.column), (2, 3), "{e:?}");
    assert!(!e.message.contains("x5"), "the message quotes the file: {}", e.message);
    let e = parse_schedule("+2\n-0\n").unwrap_err();
    assert_eq!(e.line, 2);
    assert!(parse_schedule("+1\n*\n").is_err());
    assert!(parse_schedule("*\n+\n*\n").is_err());
    assert!(parse_schedule("# nothing\n").is_err());
}

#[test]
fn a_schedule_runs_as_its_steps_say() {
    // 5 insertions once, then one deletion and two insertions for ever: after 5 + 3k steps
    // the system holds 5 + k balls.
    let s = ballast_dynamic::workload::parse_schedule("+5\n*\n-\n+2\n").unwrap();
    let w = Workload::Schedule(std::sync::Arc::new(s));
    let c = cfg(4, w, Insertion::Greedy(2), DeletionLaw::Oldest, true);
    let mut p = Deletions::new(&c).unwrap();
    let mut rng = sim_rng(3);
    for k in 0..50u64 {
        let steps = if k == 0 { 5 } else { 3 };
        for _ in 0..steps {
            p.step(&mut rng);
        }
        assert_eq!(p.state().total(), 5 + k, "after cycle {k}");
        p.check_state().unwrap();
    }
}

#[test]
fn the_level_engine_follows_the_laws_that_read_only_loads() {
    let w = Workload::Random(Beta::Const(0.6));
    let c = cfg(3, w, Insertion::Greedy(2), DeletionLaw::UniformBin, false);
    let case = |rule| Case {
        n: 3,
        insertion: Insertion::Greedy(2),
        rule,
        reinsert: false,
        beta: beta_06,
        steps: 6,
    };
    check_levels(
        "levels: uniform bin vs any bin",
        c,
        case(Rule::UniformBin),
        case(Rule::AnyBin),
        21,
    );
    let w = Workload::Phases { m: 4, phase: 2 };
    let ins = Insertion::OnePlusBeta(0.7);
    let c = cfg(3, w, ins, DeletionLaw::UniformBall, false);
    let case = |rule| Case { n: 3, insertion: ins, rule, reinsert: false, beta: phases, steps: 12 };
    check_levels(
        "levels: uniform ball vs uniform bin",
        c,
        case(Rule::UniformBall),
        case(Rule::UniformBin),
        22,
    );
}

#[test]
fn the_level_engine_refuses_identities_with_the_reason() {
    for (law, re, word) in [
        (DeletionLaw::Oldest, false, "oldest-first"),
        (DeletionLaw::UniformBall, true, "reinsertion"),
    ] {
        let mut c = cfg(5, Workload::Phases { m: 3, phase: 1 }, Insertion::Greedy(2), law, re);
        c.levels = true;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains(word) && e.contains("engine = \"bins\""), "{e}");
    }
}
