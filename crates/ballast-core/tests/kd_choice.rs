//! The `kd_choice` process (Park's (k, d)-choice as a process item, `src/items/kd_choice.rs`): its
//! exact law at tiny n with and without replacement on both engines, wrong variants (one of
//! the bin rule, one of the level engine's) rejected by the same test, k = 1 against
//! d-Choice, the stop rule on its rounds on both engines, refusals.
//!
//! Statistics. m = 8 balls (4 rounds of k = 2) from empty bins, d = 3 samples: n = 3 with
//! replacement (27 ordered draws) and n = 4 distinct (24 ordered draws). The law of the
//! sorted final loads is enumerated from the definition: per round every ordered draw is
//! equally likely, the draws are ordered by load, the k least loaded get one ball each, and a
//! tie at the cut is broken by a uniform subset of the tied draws. 20 000 seeded runs
//! (seeds 6000..26000) are compared with it by Pearson's χ² at α = 0.001
//! ([`common::fit_final_law`]; cells with expected count below 5 pooled). Power: the wrong
//! variant decides the round's balls one at a time on the changing loads (n = 3, with
//! replacement); its law, enumerated the same way, has the same 10 states and noncentrality
//! λ = RUNS·Σ(p − q)²/p = 4500 against the right one (asserted ≥ 200), where the test (about
//! 6 degrees of freedom, critical value 26) rejects with probability above 1 − 10⁻⁹; it is
//! run as a test-local item and rejected. (A different tie rule cannot be seen in the sorted
//! loads: the draws are exchangeable, so ties to the earliest draw have the same law.)
//!
//! Level engine (sequential): the same law, the same seeds and the same test. Two wrong
//! level variants, their laws enumerated the same way (the round's draws ordered as the
//! rule orders them, then the variant's placement on the sorted loads):
//! [`kd_choice::KEEP_POSITIONS`] keeps the positions of the round's draws in the sorted
//! view instead of their loads, so a later ball misses its bin when the view has moved it
//! (n = 4, distinct: 5.8 % of its mass on states the right law cannot reach, about 1 160
//! of 20 000 runs, and λ = 4 600 on the others); [`kd_choice::SAME_LEVEL`] gives a bin
//! chosen twice its second ball at its start load, into another bin of that load if one
//! is left (n = 3, with replacement: λ = 6 240). Both are rejected with probability above
//! 1 − 10⁻⁹ (λ asserted ≥ 200). Keeping positions with replacement has, by symmetry, the
//! right law (a ball that misses its bin lands in a bin of its load drawn as often);
//! the test asserts that too. The stop rule: m = 7
//! balls cut the fourth round after its first ball (`truncate`, the round's least loaded
//! draw gets it) or complete it (`finish`, the law of m = 8); both laws enumerated, both
//! engines fitted.

mod common;

use std::collections::BTreeMap;

use ballast_core::item::{CustomRule, CustomSpec, Decision, ProcessItem};
use ballast_core::items::kd_choice;
use ballast_core::registry::{find, Args, ParamValue};
use ballast_core::{sim_rng, simulate, Engine, ProcessSpec, RunSpec, Stop};

const M: u64 = 8;
const RUNS: u64 = 20_000;

fn kd(k: u32, d: u32, replacement: bool) -> Result<ProcessSpec, String> {
    find("kd_choice")
        .expect("a built-in kind")
        .build(&[
            ("k", ParamValue::Num(f64::from(k))),
            ("d", ParamValue::Num(f64::from(d))),
            ("replacement", ParamValue::Bool(replacement)),
        ])
        .map_err(|e| e.to_string())
}

/// The sorted loads (ascending) after one round on `loads` with the draws `pos`: the k least
/// loaded draws get a ball; each way to fill the cut from tied draws with its probability.
fn round(loads: &[u64], pos: &[usize], k: usize) -> Vec<(Vec<u64>, f64)> {
    let mut draws: Vec<usize> = pos.to_vec();
    draws.sort_by_key(|&p| loads[p]);
    let cut = loads[draws[k - 1]];
    let below: Vec<usize> = draws.iter().copied().filter(|&p| loads[p] < cut).collect();
    let tied: Vec<usize> = draws.iter().copied().filter(|&p| loads[p] == cut).collect();
    let need = k - below.len();
    let subsets: Vec<u32> =
        (0u32..1 << tied.len()).filter(|s| s.count_ones() as usize == need).collect();
    let share = 1.0 / subsets.len() as f64;
    subsets
        .into_iter()
        .map(|s| {
            let mut v = loads.to_vec();
            for &p in &below {
                v[p] += 1;
            }
            for (b, &p) in tied.iter().enumerate() {
                if s & (1 << b) != 0 {
                    v[p] += 1;
                }
            }
            v.sort_unstable();
            (v, share)
        })
        .collect()
}

/// The round's draws as the rule orders its balls (ascending sorted positions `pos` of
/// ascending `loads`): stably by load, then every ordered choice of the tied draws at the
/// cut (the rule's partial Fisher–Yates), each with its probability.
fn ordered_rounds(loads: &[u64], pos: &[usize], k: usize) -> Vec<(Vec<usize>, f64)> {
    let mut draws: Vec<usize> = pos.to_vec();
    draws.sort_by_key(|&p| loads[p]);
    let cut = loads[draws[k - 1]];
    let lo = draws.iter().filter(|&&p| loads[p] < cut).count();
    let hi = draws.iter().filter(|&&p| loads[p] <= cut).count();
    // Injective sequences of k − lo indices in lo..hi.
    let mut seqs: Vec<Vec<usize>> = vec![Vec::new()];
    for _ in lo..k {
        seqs = seqs
            .iter()
            .flat_map(|s| (lo..hi).filter(|i| !s.contains(i)).map(|i| [&s[..], &[i]].concat()))
            .collect();
    }
    let share = 1.0 / seqs.len() as f64;
    seqs.into_iter()
        .map(|s| (draws[..lo].iter().copied().chain(s.iter().map(|&i| draws[i])).collect(), share))
        .collect()
}

/// The wrong level variant's round: each ball to the bin at its draw's position of the
/// sorted view as it is when the ball lands (a ball moves the last bin of its level up).
fn positional_round(loads: &[u64], pos: &[usize], k: usize) -> Vec<(Vec<u64>, f64)> {
    ordered_rounds(loads, pos, k)
        .into_iter()
        .map(|(order, q)| {
            let mut v = loads.to_vec();
            for p in order {
                let last = v.partition_point(|&y| y <= v[p]) - 1;
                v[last] += 1;
            }
            (v, q)
        })
        .collect()
}

/// The second wrong level variant's round: a bin chosen twice gets its second ball at its
/// load at the round's start, in another bin of that load if one is left (the last bin of
/// the level), else in itself.
fn same_level_round(loads: &[u64], pos: &[usize], k: usize) -> Vec<(Vec<u64>, f64)> {
    ordered_rounds(loads, pos, k)
        .into_iter()
        .map(|(order, q)| {
            let mut v = loads.to_vec();
            for x in order.iter().map(|&p| loads[p]) {
                let at = if v.contains(&x) { x } else { x + 1 };
                let last = v.partition_point(|&y| y <= at) - 1;
                v[last] += 1;
            }
            (v, q)
        })
        .collect()
}

/// A round cut after its first ball: the least loaded draw gets it.
fn first_ball(loads: &[u64], pos: &[usize], _k: usize) -> Vec<(Vec<u64>, f64)> {
    let mut v = loads.to_vec();
    let p = *pos.iter().min_by_key(|&&p| loads[p]).unwrap();
    v[p] += 1;
    v.sort_unstable();
    vec![(v, 1.0)]
}

type Round = fn(&[u64], &[usize], usize) -> Vec<(Vec<u64>, f64)>;

/// The exact law of the heaviest-first sorted loads after `m` balls: `m / k` rounds of
/// `each`, then (when `m mod k = 1`) a round cut after its first ball.
fn law_of(n: usize, k: usize, d: u32, replacement: bool, m: usize, each: Round) -> Law {
    let tuples: Vec<Vec<usize>> = (0..n.pow(d))
        .map(|t| (0..d).map(|j| t / n.pow(j) % n).collect::<Vec<usize>>())
        .filter(|s| replacement || (0..s.len()).all(|a| !s[a + 1..].contains(&s[a])))
        .collect();
    assert!(m % k <= 1, "a cut round of one ball at most");
    let rounds = (0..m / k).map(|_| each).chain((m % k == 1).then_some(first_ball as Round));
    let mut states = BTreeMap::from([(vec![0u64; n], 1.0)]);
    for round in rounds {
        let mut next = BTreeMap::new();
        for (loads, &p) in &states {
            for s in &tuples {
                for (v, q) in round(loads, s, k) {
                    *next.entry(v).or_insert(0.0) += p * q / tuples.len() as f64;
                }
            }
        }
        states = next;
    }
    states.into_iter().map(|(mut v, p)| (v.drain(..).rev().collect(), p)).collect()
}

type Law = BTreeMap<Vec<u64>, f64>;

/// The exact law of the heaviest-first sorted loads after M balls (M / k rounds).
fn law(n: usize, k: usize, d: u32, replacement: bool) -> Law {
    law_of(n, k, d, replacement, M as usize, round)
}

/// Noncentrality of the χ² test against `right` when the runs follow `wrong`.
fn noncentrality(right: &Law, wrong: &Law) -> f64 {
    right
        .iter()
        .map(|(s, &p)| RUNS as f64 * (p - wrong.get(s).copied().unwrap_or(0.0)).powi(2) / p)
        .sum()
}

fn chi2(process: &ProcessSpec, n: u64, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    chi2_on(process, n, M, Stop::Truncate, Engine::Bins, law)
}

fn chi2_on(p: &ProcessSpec, n: u64, m: u64, stop: Stop, engine: Engine, law: &Law) -> (f64, f64) {
    let spec = RunSpec::new(p.clone(), n, m).stop(stop).engine(engine);
    common::fit_final_law(&spec, RUNS, 6000, law)
}

#[test]
fn kd_choice_has_the_exact_law_with_and_without_replacement() {
    for (n, replacement) in [(3usize, true), (4, false)] {
        let law = law(n, 2, 3, replacement);
        assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
        for engine in [Engine::Bins, Engine::Levels] {
            let p = kd(2, 3, replacement).unwrap();
            let (stat, crit) = chi2_on(&p, n as u64, M, Stop::Truncate, engine, &law);
            println!(
                "kd_choice k=2 d=3 n={n} replacement={replacement} {engine:?}: χ² = {stat:.2} \
                 (critical {crit:.2})"
            );
            assert!(stat < crit, "n = {n}, {engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
        }
    }
}

#[test]
fn wrong_level_variants_are_rejected() {
    // Keeping positions is exact in law with replacement (a ball that misses its bin hits
    // a bin of the same load drawn just as often); a second ball at the same level is
    // wrong only with replacement. Each is tested where it is wrong.
    let cases: [(usize, bool, &'static kd_choice::KdChoice, Round); 2] = [
        (4, false, &kd_choice::KEEP_POSITIONS, positional_round),
        (3, true, &kd_choice::SAME_LEVEL, same_level_round),
    ];
    for (n, replacement, item, wrong_round) in cases {
        let right = law(n, 2, 3, replacement);
        let wrong = law_of(n, 2, 3, replacement, M as usize, wrong_round);
        assert!((wrong.values().sum::<f64>() - 1.0).abs() < 1e-12);
        let lambda = noncentrality(&right, &wrong);
        let outside = wrong.iter().filter(|e| !right.contains_key(e.0)).fold(0.0, |a, e| a + e.1);
        let given = [
            ("k", ParamValue::Num(2.0)),
            ("d", ParamValue::Num(3.0)),
            ("replacement", ParamValue::Bool(replacement)),
        ];
        let args = find("kd_choice").unwrap().list().args(&given).unwrap();
        let spec = ProcessSpec::Custom(CustomSpec::new(item, args));
        // On bins the variant is the right rule (positions are bins there).
        let (stat, crit) = chi2_on(&spec, n as u64, M, Stop::Truncate, Engine::Bins, &right);
        assert!(stat < crit, "{item:?}, bins: χ² = {stat:.1} ≥ {crit:.1}");
        let (stat, crit) = chi2_on(&spec, n as u64, M, Stop::Truncate, Engine::Levels, &right);
        println!(
            "{item:?} on levels, n={n} replacement={replacement}: χ² = {stat:.1} (critical \
             {crit:.2}, λ = {lambda:.0}, mass outside the law {outside:.3})"
        );
        assert!(lambda >= 200.0, "{item:?}: the test's power, noncentrality {lambda:.1}");
        assert!(stat > crit, "{item:?} passed on levels, χ² = {stat:.1}");
    }
    // The first variant with replacement: the same law, enumerated.
    let same = law_of(3, 2, 3, true, M as usize, positional_round);
    assert!(noncentrality(&law(3, 2, 3, true), &same) < 1e-9);
}

#[test]
fn a_cut_or_finished_last_round_has_its_law_on_both_engines() {
    for (n, replacement) in [(3usize, true), (4, false)] {
        let cut = law_of(n, 2, 3, replacement, 7, round);
        let finished = law(n, 2, 3, replacement);
        // Not vacuous: a cut round has another law than the first 7 balls of a finished one.
        assert!(cut.keys().all(|k| k.iter().sum::<u64>() == 7));
        for engine in [Engine::Bins, Engine::Levels] {
            let p = kd(2, 3, replacement).unwrap();
            let (stat, crit) = chi2_on(&p, n as u64, 7, Stop::Truncate, engine, &cut);
            println!("truncate m=7 n={n} {engine:?}: χ² = {stat:.2} (critical {crit:.2})");
            assert!(stat < crit, "truncate, n = {n}, {engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
            let (stat, crit) = chi2_on(&p, n as u64, 7, Stop::Finish, engine, &finished);
            println!("finish m=7 n={n} {engine:?}: χ² = {stat:.2} (critical {crit:.2})");
            assert!(stat < crit, "finish, n = {n}, {engine:?}: χ² = {stat:.1} ≥ {crit:.1}");
        }
    }
}

/// The wrong variant: the round's balls decided one at a time on the loads as they change
/// (each ball to a least loaded draw after the previous balls of the round), instead of all
/// on the loads at the round's start. A bin drawn once then gets both balls of a round when
/// it is two below the other draws.
#[derive(Debug)]
struct Greedy;

struct GreedyRule {
    draws: Vec<usize>,
    left: u32,
}

impl CustomRule for GreedyRule {
    fn place(&mut self, at: &mut dyn Decision) -> usize {
        if self.left == 0 {
            self.draws = (0..3).map(|_| at.sample()).collect();
            self.left = 2;
        }
        self.left -= 1;
        let loads: Vec<f64> = self.draws.iter().map(|&b| at.load(b)).collect();
        let best = (0..3).min_by(|&a, &b| loads[a].total_cmp(&loads[b])).unwrap();
        self.draws[best]
    }
    fn in_round(&self) -> bool {
        self.left > 0
    }
}

impl ProcessItem for Greedy {
    fn name(&self) -> &'static str {
        "kd_choice"
    }
    fn rule(&self, _args: &Args) -> Box<dyn CustomRule> {
        Box::new(GreedyRule { draws: Vec::new(), left: 0 })
    }
}

/// The law of the wrong variant, enumerated like the right one.
fn greedy_law() -> BTreeMap<Vec<u64>, f64> {
    let mut states = BTreeMap::from([(vec![0u64; 3], 1.0)]);
    for _ in 0..M / 2 {
        let mut next = BTreeMap::new();
        for (loads, &p) in &states {
            for t in 0..27 {
                let draws = [t % 3, t / 3 % 3, t / 9];
                let mut v = loads.clone();
                for _ in 0..2 {
                    let best = *draws.iter().min_by_key(|&&b| v[b]).unwrap();
                    v[best] += 1;
                }
                v.sort_unstable();
                *next.entry(v).or_insert(0.0) += p / 27.0;
            }
        }
        states = next;
    }
    states.into_iter().map(|(mut v, p)| (v.drain(..).rev().collect(), p)).collect()
}

static GREEDY: Greedy = Greedy;

#[test]
fn deciding_ball_by_ball_is_rejected() {
    let (law, wrong) = (law(3, 2, 3, true), greedy_law());
    // The same states are possible under both: the test must see the probabilities.
    assert!(wrong.keys().all(|k| law.contains_key(k)), "{wrong:?}");
    let lambda = noncentrality(&law, &wrong);
    assert!(lambda >= 200.0, "the test's power: noncentrality {lambda:.1}");
    let args = find("kd_choice").unwrap().list().args(&[]).err();
    assert!(args.is_some(), "k and d are required");
    let given = [("k", ParamValue::Num(2.0)), ("d", ParamValue::Num(3.0))];
    let args = find("kd_choice").unwrap().list().args(&given).unwrap();
    let spec = ProcessSpec::Custom(CustomSpec::new(&GREEDY, args));
    let (stat, crit) = chi2(&spec, 3, &law);
    println!("ball by ball: χ² = {stat:.1} (critical {crit:.2}, λ = {lambda:.0})");
    assert!(stat > crit, "the ball-by-ball variant passed, χ² = {stat:.1}");
}

#[test]
fn one_ball_per_step_is_d_choice() {
    // Two-Choice's exact law at n = 3, m = 8 (ties do not change the sorted loads).
    let pick = |loads: &[u64], s: &[usize]| if loads[s[1]] < loads[s[0]] { s[1] } else { s[0] };
    let law: BTreeMap<Vec<u64>, f64> = common::exact_sorted_law(3, M as usize, 2, pick)
        .into_iter()
        .map(|(mut v, p)| (v.drain(..).rev().collect(), p))
        .collect();
    let (stat, crit) = chi2(&kd(1, 2, true).unwrap(), 3, &law);
    println!("kd_choice k=1 d=2: χ² = {stat:.2} (critical {crit:.2})");
    assert!(stat < crit, "kd_choice k = 1: χ² = {stat:.1} ≥ {crit:.1}");
    let (stat, crit) = chi2(&ProcessSpec::DChoice { d: 2 }, 3, &law);
    assert!(stat < crit, "d_choice: χ² = {stat:.1} ≥ {crit:.1}");
    // Not vacuous: two balls per step have another law.
    let (stat, crit) = chi2(&kd(2, 2, true).unwrap(), 3, &law);
    assert!(stat > crit, "kd_choice k = 2 passed as Two-Choice, χ² = {stat:.1}");
}

#[test]
fn the_stop_rule_applies_to_its_rounds() {
    for engine in [Engine::Bins, Engine::Levels] {
        let spec = |stop| RunSpec::new(kd(3, 5, false).unwrap(), 10, 100).stop(stop).engine(engine);
        for seed in 0..10 {
            // The level engine counts no steps (`RunOutcome::steps` is 0 there).
            let steps = if engine == Engine::Bins { 34 } else { 0 };
            let cut = simulate(&spec(Stop::Truncate), &mut sim_rng(seed)).unwrap();
            assert_eq!((cut.balls, cut.steps), (100, steps), "33 rounds and one cut");
            let full = simulate(&spec(Stop::Finish), &mut sim_rng(seed)).unwrap();
            assert_eq!((full.balls, full.steps), (102, steps), "34 rounds of 3 balls");
            assert!(cut.samples >= 34 * 5, "d = 5 samples per round at least");
        }
    }
}

#[test]
fn bad_parameters_and_level_batches_are_refused() {
    let e = kd(3, 2, false).unwrap_err();
    assert!(e.contains("k = 3 balls need k <= d samples (d = 2)"), "{e}");
    let e = RunSpec::new(kd(2, 5, false).unwrap(), 4, 10).validate().unwrap_err().to_string();
    assert!(e.contains("d = 5 distinct samples need d <= n = 4 bins"), "{e}");
    assert!(RunSpec::new(kd(2, 5, true).unwrap(), 4, 10).validate().is_ok());
    let levels = RunSpec::new(kd(2, 3, false).unwrap(), 10, 10).engine(Engine::Levels);
    assert!(simulate(&levels, &mut sim_rng(1)).is_ok());
    // `auto` keeps bins (the level engine is slower for it).
    let big = RunSpec::new(kd(2, 3, false).unwrap(), 1 << 22, 10);
    assert_eq!(ballast_core::resolve_engine(&big).unwrap(), Engine::Bins);
    let e = simulate(&levels.batched(4), &mut sim_rng(1)).unwrap_err().to_string();
    assert!(e.contains("simulates kd_choice sequentially only"), "{e}");
}
