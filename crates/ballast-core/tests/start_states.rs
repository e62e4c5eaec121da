//! Start states ([`Start`]) on both engines, and the recovery time
//! ([`ballast_core::recovery`]).
//!
//! - A start is honoured: after 0 balls the loads are the start's (the bin engine's load
//!   vector, the level engine's sorted view), and `max_load`, `min_load`, `empty_bins` and
//!   the gap (against the total average) follow.
//! - The exact law of Two-Choice (random ties) from the start (2, 0, 0) with m = 3 balls,
//!   enumerated below (each ball: 9 equally likely sample pairs, a tie split 1/2–1/2), is
//!   compared by a chi-square goodness-of-fit test with the sorted final loads of 20 000
//!   seeded runs of each path: the bin engine, the level engine ball by ball, the level
//!   engine in chunks of 2 balls (`Chunking::Fixed`). The batched setting is checked the same
//!   way against the exact one-batch law (`exact_batch_law`): b = m = 3 from (2, 0, 0) on
//!   both engines. α = 0.001 (`ballast_testkit::ALPHA`) per comparison; the seeds are fixed.
//! - Power: the same test rejects two wrong variants, the run started from empty bins with
//!   the same total of 5 balls, and the start honoured but the ball placed by One-Choice.
//!   For each, the test computes the non-centrality λ = N·Σ (q − p)²/p of the wrong law q
//!   against the right law p; the test asserts λ ≥ 4× the critical value, where the power
//!   of a chi-square test with these few degrees of freedom is above 0.99, and that the
//!   seeded statistic of the wrong variant is above the critical value.
//! - Recovery time of Two-Choice from `one_bin { balls = 12 }` at n = 4, target 2, is
//!   compared with the recovery time of an independent straightforward loop written here
//!   (its own load vector and generator use) by a two-sample chi-square test on 4000 runs
//!   each (α = 0.001), for both engines (and the means agree within 1.5 balls, about 4
//!   standard errors). Two wrong variants are rejected: the gap measured against the
//!   process's balls only (m/n instead of W/n, the start left out of the average), which
//!   shifts the law by about 12 balls, and the recovering ball not counted (one ball
//!   early). The recovery times sit on the lattice where W/n crosses a level (multiples of
//!   4 here), so both wrong laws put their mass where the right one has none: statistics
//!   near 8000 against critical values of about 30 (power 1 for all practical purposes).
//! - Batched recovery is looked at at batch ends only (multiples of b), with the same law on
//!   both engines (two-sample χ², 3000 runs each, α = 0.001: 9.6 against 29.6), and a start
//!   4 balls heavier is rejected (3235).
//! - `empty_bins` is the number of bins that received no ball (unit and weighted,
//!   sequential and batched, both engines; a uniform start of 1 leaves none).

use std::collections::BTreeMap;

use ballast_core::level::{simulate_levels_chunked, Chunking};
use ballast_core::recovery::simulate_recovery;
use ballast_core::rng::below;
use ballast_core::{
    derive_seed, sim_rng, simulate, simulate_observed, Engine, LoadState, Observer, ProcessSpec,
    RunSpec, Start, Weights,
};
use ballast_testkit::{chi2_critical, chi2_gof, chi2_two_sample, exact_batch_law, histogram};

/// The loads (sorted) at the last observation point.
#[derive(Default)]
struct Sorted(Vec<u64>);

impl Observer for Sorted {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, s: &S) {
        self.0 = (0..s.n()).map(|i| s.load(i).into() as u64).collect();
        self.0.sort_unstable();
    }
}

/// The loads (unsorted) at the start, through the observer hook.
#[derive(Default)]
struct AtStart(Vec<u64>);

impl Observer for AtStart {
    const PER_BALL: bool = false;
    fn on_start<S: LoadState>(&mut self, s: &S) {
        self.0 = (0..s.n()).map(|i| s.load(i).into() as u64).collect();
    }
}

#[test]
fn a_start_is_what_the_run_begins_with_on_both_engines() {
    let cases = [
        (Start::Uniform { k: 5 }, 6u64),
        (Start::OneBin { balls: 9 }, 4),
        (Start::Loads(vec![3, 0, 7, 0, 1]), 5),
        (Start::Random { balls: 40 }, 8),
    ];
    for (start, n) in cases {
        for engine in [Engine::Bins, Engine::Levels] {
            let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, 0)
                .start(start.clone())
                .engine(engine);
            let mut at = AtStart::default();
            let out = simulate_observed(&spec, &mut sim_rng(5), &mut at).unwrap();
            let mut expect: Vec<u64> = match &start {
                Start::Random { .. } if engine == Engine::Levels => {
                    // The same draws, as positions of the sorted view (a different
                    // multiset than the bin engine's, the same law).
                    let lv = ballast_core::level::LevelLoads::of_start(&start, n, &mut sim_rng(5));
                    (0..n).map(|p| lv.load_at(p)).collect()
                }
                Start::Random { .. } => {
                    // The same draws as the engines: `below(rng, n)` per ball.
                    let mut rng = sim_rng(5);
                    let mut v = vec![0u64; n as usize];
                    for _ in 0..start.balls(n) {
                        v[below(&mut rng, n) as usize] += 1;
                    }
                    v
                }
                s => s.unit_loads(n as usize, &mut sim_rng(0)).iter().map(|&x| x.into()).collect(),
            };
            let mut got = at.0.clone();
            if engine == Engine::Levels {
                // The sorted view: compare the multisets.
                expect.sort_unstable();
                got.sort_unstable();
            }
            assert_eq!(got, expect, "{start:?} on {engine:?}");
            let w: u64 = expect.iter().sum();
            let max = *expect.iter().max().unwrap();
            assert_eq!(out.max_load, max as f64, "{start:?} {engine:?}");
            assert_eq!(out.min_load, *expect.iter().min().unwrap() as f64);
            assert_eq!(out.finals.empty_bins, expect.iter().filter(|&&x| x == 0).count() as u64);
            let gap = max as f64 - w as f64 / n as f64;
            assert!((out.final_gap - gap).abs() < 1e-12, "{start:?}: {} vs {gap}", out.final_gap);
        }
    }
    // The process's m balls come on top of the start: W = m0 + m.
    let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 10, 1000).start(Start::Uniform { k: 7 });
    let out = simulate(&spec, &mut sim_rng(1)).unwrap();
    assert_eq!(out.balls, 1000);
    assert!(out.min_load >= 7.0 && out.max_load - out.final_gap == 107.0, "{out:?}");
}

#[test]
fn the_empty_start_changes_nothing() {
    for engine in [Engine::Bins, Engine::Levels] {
        for spec in [
            RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 5000),
            RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, 100, 5000).batched(300),
        ] {
            let spec = spec.engine(engine);
            let a = simulate(&spec, &mut sim_rng(9)).unwrap();
            let b = simulate(&spec.clone().start(Start::Empty), &mut sim_rng(9)).unwrap();
            let c = simulate(&spec.start(Start::Uniform { k: 0 }), &mut sim_rng(9)).unwrap();
            assert_eq!(a, b);
            // A start of zeros draws nothing either: the same values.
            assert_eq!(a, c);
        }
    }
}

/// The exact law of the sorted loads after sequential `d`-sample balls (d = 1 or 2, random
/// ties) from `start`, by enumeration of every sample tuple.
fn exact_sequential_law(start: &[u64], balls: u32, d: u32) -> BTreeMap<Vec<u64>, f64> {
    let n = start.len();
    let mut law: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    law.insert(start.to_vec(), 1.0);
    for _ in 0..balls {
        let mut next: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
        for (loads, p) in &law {
            let mut put = |bin: usize, q: f64| {
                let mut v = loads.clone();
                v[bin] += 1;
                *next.entry(v).or_insert(0.0) += p * q;
            };
            if d == 1 {
                for i in 0..n {
                    put(i, 1.0 / n as f64);
                }
                continue;
            }
            let pair = 1.0 / (n * n) as f64;
            for i in 0..n {
                for j in 0..n {
                    match loads[i].cmp(&loads[j]) {
                        std::cmp::Ordering::Less => put(i, pair),
                        std::cmp::Ordering::Greater => put(j, pair),
                        std::cmp::Ordering::Equal => {
                            put(i, pair / 2.0);
                            put(j, pair / 2.0);
                        }
                    }
                }
            }
        }
        law = next;
    }
    // Sorted load vectors: the histogram law both engines must produce.
    let mut sorted: BTreeMap<Vec<u64>, f64> = BTreeMap::new();
    for (mut v, p) in law {
        v.sort_unstable();
        *sorted.entry(v).or_insert(0.0) += p;
    }
    sorted
}

/// Counts of the sorted final loads of `runs` runs in the categories of `law` (outcomes
/// outside the law's support go to an extra category, which must stay empty).
fn observed(
    law: &BTreeMap<Vec<u64>, f64>,
    runs: u64,
    seed: u64,
    mut run: impl FnMut(&mut ballast_core::SimRng) -> Vec<u64>,
) -> Vec<u64> {
    let keys: Vec<&Vec<u64>> = law.keys().collect();
    let mut counts = vec![0u64; keys.len() + 1];
    for r in 0..runs {
        let v = run(&mut sim_rng(derive_seed(seed, &[r])));
        let j = keys.iter().position(|k| **k == v).unwrap_or(keys.len());
        counts[j] += 1;
    }
    counts
}

/// (statistic, critical) of `counts` against `law`; categories with expected count below 5
/// merged into one (none are here: the smallest probability is above 0.002).
fn fit(law: &BTreeMap<Vec<u64>, f64>, counts: &[u64]) -> (f64, f64) {
    assert_eq!(*counts.last().unwrap(), 0, "an outcome outside the exact law's support");
    let probs: Vec<f64> = law.values().copied().collect();
    let (stat, df) = chi2_gof(&counts[..probs.len()], &probs);
    (stat, chi2_critical(df))
}

/// λ = N·Σ (q − p)²/p: the non-centrality of the chi-square statistic when the data follow
/// `wrong` but are tested against `right` (over `right`'s categories; mass of `wrong`
/// outside them counts as its own category against a tiny p, so λ is then huge).
fn noncentrality(right: &BTreeMap<Vec<u64>, f64>, wrong: &BTreeMap<Vec<u64>, f64>, n: f64) -> f64 {
    let mut l = 0.0;
    for (k, &p) in right {
        let q = wrong.get(k).copied().unwrap_or(0.0);
        l += (q - p).powi(2) / p;
    }
    let outside: f64 = wrong.iter().filter(|(k, _)| !right.contains_key(*k)).map(|(_, q)| q).sum();
    n * (l + if outside > 0.0 { 1e6 * outside } else { 0.0 })
}

const RUNS: u64 = 20_000;

/// One seeded run, its sorted final loads.
type SortedRun<'a> = dyn Fn(&mut ballast_core::SimRng) -> Vec<u64> + 'a;

#[test]
fn two_choice_from_a_start_follows_its_exact_law_on_every_path() {
    let start = [2u64, 0, 0];
    let law = exact_sequential_law(&start, 3, 2);
    assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
    let spec =
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, 3, 3).start(Start::Loads(start.to_vec()));
    let sorted_of = |spec: &RunSpec, rng: &mut ballast_core::SimRng| {
        let mut obs = Sorted::default();
        simulate_observed(spec, rng, &mut obs).unwrap();
        obs.0
    };
    let bins = spec.clone().engine(Engine::Bins);
    let levels = spec.clone().engine(Engine::Levels);
    let paths: [(&str, Box<SortedRun<'_>>); 3] = [
        ("bin engine", Box::new(|rng| sorted_of(&bins, rng))),
        ("level engine", Box::new(|rng| sorted_of(&levels, rng))),
        (
            "level engine in chunks of 2",
            Box::new(|rng| {
                let mut obs = Sorted::default();
                let chunks = Chunking::Fixed { s: 2, flaw: None };
                simulate_levels_chunked(&levels, rng, &mut obs, chunks).unwrap();
                obs.0
            }),
        ),
    ];
    for (i, (name, run)) in paths.iter().enumerate() {
        let counts = observed(&law, RUNS, derive_seed(4001, &[i as u64]), run);
        let (stat, crit) = fit(&law, &counts);
        println!("{name}: chi2 = {stat:.2}, critical {crit:.2}");
        assert!(stat <= crit, "{name}: chi2 = {stat:.1} > {crit:.1}; {counts:?} vs {law:?}");
    }

    // Power: two wrong variants, their non-centrality and their seeded rejection.
    let empty_law = exact_sequential_law(&[0, 0, 0], 5, 2);
    let one_choice_law = exact_sequential_law(&start, 3, 1);
    let empty = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 3, 5).engine(Engine::Bins);
    let one_choice = RunSpec::new(ProcessSpec::OneChoice, 3, 3).start(Start::Loads(start.to_vec()));
    let crit = chi2_critical(law.len() - 1);
    for (name, wrong_law, wrong) in
        [("started empty", &empty_law, empty), ("One-Choice balls", &one_choice_law, one_choice)]
    {
        let lambda = noncentrality(&law, wrong_law, RUNS as f64);
        assert!(lambda >= 4.0 * crit, "{name}: λ = {lambda:.1} < 4 × {crit:.1}");
        let counts = observed(&law, RUNS, 4101, |rng| sorted_of(&wrong, rng));
        let outside = *counts.last().unwrap();
        let probs: Vec<f64> = law.values().copied().collect();
        let (stat, _) = chi2_gof(&counts[..probs.len()], &probs);
        println!("{name}: lambda = {lambda:.0}, chi2 = {stat:.1}, outside {outside}");
        assert!(outside > 0 || stat > crit, "{name}: chi2 = {stat:.1} <= {crit:.1}");
    }
}

#[test]
fn a_batch_from_a_start_follows_the_exact_one_batch_law() {
    // b = m = 3 from (2, 0, 0): each ball independently to bin 0 with probability 1/9 (both
    // samples there), else to bin 1 or 2 (4/9 each), on the frozen loads.
    let start = [2u64, 0, 0];
    let p = [1.0 / 9.0, 4.0 / 9.0, 4.0 / 9.0];
    let law: BTreeMap<Vec<u64>, f64> = exact_batch_law(&start, &p, 3).into_iter().collect();
    let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 3, 3)
        .batched(3)
        .start(Start::Loads(start.to_vec()));
    for (i, engine) in [Engine::Bins, Engine::Levels].into_iter().enumerate() {
        let spec = spec.clone().engine(engine);
        let counts = observed(&law, RUNS, derive_seed(4201, &[i as u64]), |rng| {
            let mut obs = Sorted::default();
            simulate_observed(&spec, rng, &mut obs).unwrap();
            obs.0
        });
        // Categories below 5 expected (e.g. three balls to bin 0: 1/729) are merged.
        let probs: Vec<f64> = law.values().copied().collect();
        let (mut obs_m, mut pr_m) = (Vec::new(), Vec::new());
        let (mut rest_o, mut rest_p) = (0u64, 0.0);
        for (&c, &q) in counts.iter().zip(&probs) {
            if q * RUNS as f64 >= 5.0 {
                obs_m.push(c);
                pr_m.push(q);
            } else {
                rest_o += c;
                rest_p += q;
            }
        }
        assert_eq!(counts[probs.len()], 0, "{engine:?}: an outcome outside the exact law");
        if rest_p > 0.0 {
            obs_m.push(rest_o);
            pr_m.push(rest_p);
        }
        let (stat, df) = chi2_gof(&obs_m, &pr_m);
        println!(
            "batch {engine:?}: chi2 = {stat:.2} on {df} df, critical {:.2}",
            chi2_critical(df)
        );
        assert!(stat <= chi2_critical(df), "{engine:?}: chi2 = {stat:.1}, df {df}");
    }
}

/// Recovery time of Two-Choice (random ties) from the loads `start` by a straightforward
/// loop: one ball at a time, the gap `max − W/n` (or, `wrong`, `max − placed/n`) after every
/// ball; `m` when it never reaches `target`.
fn recovery_by_loop(start: &[u64], m: u64, target: f64, wrong: bool, seed: u64) -> u64 {
    let n = start.len() as u64;
    let mut rng = sim_rng(seed);
    let mut loads = start.to_vec();
    let w0: u64 = start.iter().sum();
    let gap = |loads: &[u64], placed: u64| {
        let max = *loads.iter().max().unwrap() as f64;
        let w = if wrong { placed } else { w0 + placed };
        max - w as f64 / n as f64
    };
    if gap(&loads, 0) <= target {
        return 0;
    }
    for t in 1..=m {
        let (i, j) = (below(&mut rng, n) as usize, below(&mut rng, n) as usize);
        let bin = match loads[i].cmp(&loads[j]) {
            std::cmp::Ordering::Less => i,
            std::cmp::Ordering::Greater => j,
            std::cmp::Ordering::Equal => {
                if below(&mut rng, 2) == 0 {
                    i
                } else {
                    j
                }
            }
        };
        loads[bin] += 1;
        if gap(&loads, t) <= target {
            return t;
        }
    }
    m
}

#[test]
fn recovery_time_matches_a_straightforward_loop_and_rejects_a_wrong_average() {
    let (n, k, m, target, runs) = (4u64, 12u64, 400u64, 2.0, 4000u64);
    let mut start = vec![0u64; n as usize];
    start[0] = k;
    let len = (m + 1) as usize;
    let by_loop = |wrong: bool, seed: u64| {
        histogram(
            (0..runs).map(|r| {
                recovery_by_loop(&start, m, target, wrong, derive_seed(seed, &[r])) as i64
            }),
            0,
            len,
        )
    };
    let reference = by_loop(false, 7001);
    for (i, engine) in [Engine::Bins, Engine::Levels].into_iter().enumerate() {
        let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, m)
            .start(Start::OneBin { balls: k })
            .engine(engine);
        let mut censored = 0;
        let times = histogram(
            (0..runs).map(|r| {
                let rng = &mut sim_rng(derive_seed(7100 + i as u64, &[r]));
                let (_, t) = simulate_recovery(&spec, rng, target).unwrap();
                censored += u64::from(t.is_none());
                t.unwrap_or(m) as i64
            }),
            0,
            len,
        );
        assert_eq!(censored, 0, "{engine:?}: censored runs");
        let (stat, df) = chi2_two_sample(&times, &reference);
        println!(
            "recovery {engine:?}: chi2 = {stat:.1} on {df} df, critical {:.1}",
            chi2_critical(df)
        );
        assert!(stat <= chi2_critical(df), "{engine:?}: chi2 = {stat:.1} on {df} df");
        // The means agree too (a rough check: within 4 standard errors).
        let mean = |h: &[u64]| {
            h.iter().enumerate().map(|(t, &c)| t as f64 * c as f64).sum::<f64>() / runs as f64
        };
        let (a, b) = (mean(&times), mean(&reference));
        println!("recovery {engine:?}: mean {a:.2} vs loop {b:.2}");
        assert!((a - b).abs() < 1.5, "{engine:?}: mean {a:.2} vs {b:.2}");
        // Power: the wrong average (start left out of W) is rejected.
        let wrong = by_loop(true, 7201 + i as u64);
        let (stat, df) = chi2_two_sample(&times, &wrong);
        println!("recovery {engine:?}, wrong average: chi2 = {stat:.1} on {df} df");
        assert!(stat > chi2_critical(df), "{engine:?}: wrong variant chi2 = {stat:.1} on {df} df");
        // A subtler one: the recovering ball not counted (one ball early), from a fresh
        // sample of the loop.
        let mut early = by_loop(false, 7301 + i as u64);
        early.remove(0);
        early.push(0);
        let (stat, df) = chi2_two_sample(&times, &early);
        println!("recovery {engine:?}, one ball early: chi2 = {stat:.1} on {df} df");
        assert!(
            stat > chi2_critical(df),
            "{engine:?}: one ball early: chi2 = {stat:.1} on {df} df"
        );
    }
}

#[test]
fn starts_are_refused_where_they_cannot_be_honoured() {
    let base = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 4, 100);
    let bad = [
        base.clone().start(Start::Loads(vec![1, 2, 3])),
        base.clone().start(Start::Uniform { k: 3 }).weights(Weights::Exp { mean: 1.0 }),
        RunSpec {
            setting: ballast_core::Setting::Delay { tau: 4, mode: ballast_core::DelayMode::Random },
            ..base.clone().start(Start::OneBin { balls: 3 })
        },
        RunSpec::new(ProcessSpec::Equalize { d: 2 }, 4, 100).start(Start::OneBin { balls: 3 }),
        base.clone().start(Start::OneBin { balls: u64::from(u32::MAX) }).engine(Engine::Bins),
    ];
    for spec in bad {
        let e = simulate(&spec, &mut sim_rng(1)).unwrap_err().to_string();
        assert!(e.contains("start"), "{e}");
    }
    // A start spanning more levels than the level engine keeps: `auto` takes the bin engine,
    // an explicit `levels` is refused.
    let wide = base.start(Start::OneBin { balls: 1 << 21 });
    assert_eq!(ballast_core::resolve_engine(&wide).unwrap(), Engine::Bins);
    assert!(ballast_core::resolve_engine(&wide.engine(Engine::Levels)).is_err());
}

/// The bins that received at least one ball, from the engine's per-ball hook.
#[derive(Default)]
struct Touched(std::collections::BTreeSet<usize>);

impl Observer for Touched {
    fn on_ball<S: LoadState>(&mut self, _s: &S, bin: usize, _w: f64) {
        self.0.insert(bin);
    }
}

#[test]
fn empty_bins_are_the_bins_that_received_no_ball() {
    let n = 500u64;
    for (weights, batch) in [
        (Weights::Unit, None),
        (Weights::Unit, Some(50)),
        (Weights::Exp { mean: 1.0 }, None),
        (Weights::Gamma { shape: 0.5, scale: 2.0 }, Some(50)),
    ] {
        let mut spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, 300).weights(weights);
        if let Some(b) = batch {
            spec = spec.batched(b);
        }
        let spec = spec.engine(Engine::Bins);
        let mut seen = Touched::default();
        let out = simulate_observed(&spec, &mut sim_rng(11), &mut seen).unwrap();
        assert_eq!(out.finals.empty_bins, n - seen.0.len() as u64, "{weights:?} {batch:?}");
    }
    // The level engine counts its level 0, and a start's loads count too.
    let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, 300).engine(Engine::Levels);
    let mut sorted = Sorted::default();
    let out = simulate_observed(&spec, &mut sim_rng(11), &mut sorted).unwrap();
    assert_eq!(out.finals.empty_bins, sorted.0.iter().filter(|&&x| x == 0).count() as u64);
    assert!(out.finals.empty_bins >= n - 300, "{out:?}");
    for engine in [Engine::Bins, Engine::Levels] {
        let spec = spec.clone().start(Start::Uniform { k: 1 }).engine(engine);
        assert_eq!(simulate(&spec, &mut sim_rng(11)).unwrap().finals.empty_bins, 0, "{engine:?}");
    }
}

/// Batched runs are looked at at batch ends: recovery times are multiples of b, and the two
/// engines agree in law (two-sample χ², 3000 runs each, α = 0.001); a run from a start with
/// 4 more balls in bin 0 (one more batch to wait, on average) is rejected.
#[test]
fn batched_recovery_is_seen_at_batch_ends_on_both_engines() {
    let (n, b, m, target, runs) = (4u64, 4u64, 400u64, 2.0, 3000u64);
    let times = |balls: u64, engine: Engine, seed: u64| {
        let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, m)
            .batched(b)
            .start(Start::OneBin { balls })
            .engine(engine);
        histogram(
            (0..runs).map(|r| {
                let rng = &mut sim_rng(derive_seed(seed, &[r]));
                let t = simulate_recovery(&spec, rng, target).unwrap().1.expect("recovers");
                assert_eq!(t % b, 0, "{t} is not a batch end");
                (t / b) as i64
            }),
            0,
            (m / b + 1) as usize,
        )
    };
    let bins = times(12, Engine::Bins, 8001);
    let levels = times(12, Engine::Levels, 8002);
    let (stat, df) = chi2_two_sample(&bins, &levels);
    println!("batched recovery: chi2 = {stat:.1} on {df} df, critical {:.1}", chi2_critical(df));
    assert!(stat <= chi2_critical(df), "chi2 = {stat:.1} on {df} df");
    let wrong = times(16, Engine::Levels, 8003);
    let (stat, df) = chi2_two_sample(&bins, &wrong);
    println!("batched recovery, 4 balls more: chi2 = {stat:.1} on {df} df");
    assert!(stat > chi2_critical(df), "wrong start: chi2 = {stat:.1} on {df} df");
}
