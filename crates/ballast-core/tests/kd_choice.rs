//! The `kd_choice` process (Park's (k, d)-choice as a process item, `src/kd_choice.rs`): its
//! exact law at tiny n with and without replacement, a wrong variant rejected by the same
//! test, k = 1 against d-Choice, the stop rule on its rounds, refusals.
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

mod common;

use std::collections::BTreeMap;

use ballast_core::item::{CustomRule, CustomSpec, Decision, ProcessItem};
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

/// The exact law of the heaviest-first sorted loads after M balls (M / k rounds).
fn law(n: usize, k: usize, d: u32, replacement: bool) -> BTreeMap<Vec<u64>, f64> {
    let tuples: Vec<Vec<usize>> = (0..n.pow(d))
        .map(|t| (0..d).map(|j| t / n.pow(j) % n).collect::<Vec<usize>>())
        .filter(|s| replacement || (0..s.len()).all(|a| !s[a + 1..].contains(&s[a])))
        .collect();
    let mut states = BTreeMap::from([(vec![0u64; n], 1.0)]);
    for _ in 0..M as usize / k {
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

fn chi2(process: &ProcessSpec, n: u64, law: &BTreeMap<Vec<u64>, f64>) -> (f64, f64) {
    common::fit_final_law(&RunSpec::new(process.clone(), n, M), RUNS, 6000, law)
}

#[test]
fn kd_choice_has_the_exact_law_with_and_without_replacement() {
    for (n, replacement) in [(3usize, true), (4, false)] {
        let law = law(n, 2, 3, replacement);
        assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
        let (stat, crit) = chi2(&kd(2, 3, replacement).unwrap(), n as u64, &law);
        println!("kd_choice k=2 d=3 n={n} replacement={replacement}: χ² = {stat:.2} (critical {crit:.2})");
        assert!(stat < crit, "n = {n}: χ² = {stat:.1} ≥ {crit:.1}");
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
    let lambda: f64 = law
        .iter()
        .map(|(s, &p)| RUNS as f64 * (p - wrong.get(s).copied().unwrap_or(0.0)).powi(2) / p)
        .sum();
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
    let spec = |stop| RunSpec::new(kd(3, 5, false).unwrap(), 10, 100).stop(stop);
    for seed in 0..10 {
        let cut = simulate(&spec(Stop::Truncate), &mut sim_rng(seed)).unwrap();
        assert_eq!((cut.balls, cut.steps), (100, 34), "33 rounds and one cut");
        let full = simulate(&spec(Stop::Finish), &mut sim_rng(seed)).unwrap();
        assert_eq!((full.balls, full.steps), (102, 34), "34 rounds of 3 balls");
        assert!(cut.samples >= 34 * 5, "d = 5 samples per round at least");
    }
}

#[test]
fn bad_parameters_and_the_level_engine_are_refused() {
    let e = kd(3, 2, false).unwrap_err();
    assert!(e.contains("k = 3 balls need k <= d samples (d = 2)"), "{e}");
    let e = RunSpec::new(kd(2, 5, false).unwrap(), 4, 10).validate().unwrap_err().to_string();
    assert!(e.contains("d = 5 distinct samples need d <= n = 4 bins"), "{e}");
    assert!(RunSpec::new(kd(2, 5, true).unwrap(), 4, 10).validate().is_ok());
    let levels = RunSpec::new(kd(2, 3, false).unwrap(), 10, 10).engine(Engine::Levels);
    let e = simulate(&levels, &mut sim_rng(1)).unwrap_err().to_string();
    assert!(e.contains("keeps the k bins of a step between its balls"), "{e}");
}
