//! Several dispatchers on stale views: the two identities (one dispatcher refreshed before
//! every ball is the sequential process; one dispatcher refreshed every b balls that does
//! not count its own balls is the batched setting with batches of b), both value for value
//! with the same seed; and the exact law for k = 2 dispatchers at n = 3 against the law
//! computed from the definition by enumeration, with a wrong variant the same test rejects.
//!
//! Statistical tests use fixed seeds and `common::ALPHA` = 0.001 (`fit_law`). Power: the
//! test computes the noncentrality λ = runs · Σ (p_wrong − p)² / p of the wrong variant and
//! asserts λ ≥ 100 (rejection with probability essentially 1 at a few degrees of freedom).

mod common;

use std::collections::BTreeMap;

use ballast_core::loads::LoadState;
use ballast_core::Engine::Bins;
use ballast_core::{
    derive_seed, sim_rng, simulate_observed, Assign, Dispatchers, Observer, ProcessSpec, RunSpec,
    Start,
};
use common::{fit_law, FinalState};

/// The loads in bin order at the end of the run.
#[derive(Default)]
struct Loads(Vec<f64>);

impl Observer for Loads {
    const PER_BALL: bool = false;
    fn on_observation<S: LoadState>(&mut self, state: &S) {
        self.0 = (0..state.n()).map(|i| state.load(i).into()).collect();
    }
}

fn run(spec: &RunSpec, seed: u64) -> (ballast_core::RunOutcome, Vec<f64>) {
    let mut loads = Loads::default();
    let out = simulate_observed(spec, &mut sim_rng(seed), &mut loads).expect("valid");
    (out, loads.0)
}

fn processes() -> Vec<ProcessSpec> {
    vec![
        ProcessSpec::OneChoice,
        ProcessSpec::DChoice { d: 2 },
        ProcessSpec::DChoice { d: 3 },
        ProcessSpec::OnePlusBeta { beta: 0.5 },
        ProcessSpec::Threshold { f: 1.0 },
        ProcessSpec::MeanThinning { strict: false },
        ProcessSpec::GBounded { g: 2.0 },
        ProcessSpec::Packing { offset: 0 },
    ]
}

#[test]
fn one_dispatcher_refreshed_before_every_ball_is_the_sequential_process() {
    for process in processes() {
        for own in [true, false] {
            for start in [Start::Empty, Start::Random { balls: 500 }] {
                let seq = RunSpec {
                    observe_every: Some(97),
                    record_trajectory: true,
                    // The bin engine: `auto` may pick the level engine (same law, other draws).
                    ..RunSpec::new(process.clone(), 50, 3000).start(start.clone()).engine(Bins)
                };
                let one = RunSpec {
                    dispatchers: Some(Dispatchers { k: 1, tau: 1, assign: Assign::Random, own }),
                    ..seq.clone()
                };
                for seed in 0..3 {
                    let (a, la) = run(&seq, seed);
                    let (b, lb) = run(&one, seed);
                    assert_eq!(la, lb, "{process:?}, own {own}, seed {seed}: loads");
                    assert_eq!(a, b, "{process:?}, own {own}, seed {seed}: outcome");
                }
            }
        }
    }
}

#[test]
fn one_dispatcher_without_its_own_balls_refreshed_every_b_balls_is_the_batched_setting() {
    // Single-ball processes (a multi-ball step is cut at a batch end, not at a refresh).
    for process in processes().into_iter().filter(|p| !matches!(p, ProcessSpec::Packing { .. })) {
        for b in [1, 7, 50, 400] {
            let batched = RunSpec::new(process.clone(), 50, 3000).batched(b).engine(Bins);
            let one = RunSpec {
                dispatchers: Some(Dispatchers {
                    k: 1,
                    tau: b,
                    assign: Assign::RoundRobin,
                    own: false,
                }),
                observe_every: Some(b),
                ..RunSpec::new(process.clone(), 50, 3000)
            };
            for seed in 0..3 {
                let (a, la) = run(&batched, seed);
                let (c, lc) = run(&one, seed);
                assert_eq!(la, lc, "{process:?}, b {b}, seed {seed}: loads");
                assert_eq!(
                    (a.final_gap, a.max_gap, a.samples, a.observations),
                    (c.final_gap, c.max_gap, c.samples, c.observations),
                    "{process:?}, b {b}, seed {seed}"
                );
            }
        }
    }
}

type Law = BTreeMap<Vec<u64>, f64>;
/// (true loads, one view per dispatcher) → probability.
type Chain = BTreeMap<(Vec<u64>, Vec<Vec<u64>>), f64>;

/// The exact law of the sorted true loads: `n` bins, `m` balls of Two-Choice (random ties
/// between the two samples) dispatched round robin by `k` dispatchers, each view refreshed
/// before its dispatcher's ball once it placed `tau` own balls since the last refresh, and
/// counting its own balls at once when `own`: the definition of
/// `docs/churn.md#dispatchers`, state by state.
fn exact(n: usize, m: u64, k: usize, tau: u64, own: bool) -> Law {
    let mut chain = Chain::from([((vec![0; n], vec![vec![0; n]; k]), 1.0)]);
    let mut own_balls = vec![0u64; k];
    let mut next_refresh = vec![tau; k];
    for t in 0..m {
        let j = (t % k as u64) as usize;
        let refresh = own_balls[j] >= next_refresh[j];
        if refresh {
            next_refresh[j] += tau;
        }
        let mut next = Chain::new();
        for ((loads, views), &p) in &chain {
            let mut views = views.clone();
            if refresh {
                // The true loads, less this dispatcher's balls when its view holds them
                // already: with `own`, a view is true loads at the refresh plus own balls
                // since, which at a refresh equals the true loads.
                views[j] = loads.clone();
            }
            let v = &views[j];
            for a in 0..n {
                for b in 0..n {
                    let picks: Vec<(usize, f64)> = if v[a] < v[b] {
                        vec![(a, 1.0)]
                    } else if v[b] < v[a] {
                        vec![(b, 1.0)]
                    } else {
                        vec![(a, 0.5), (b, 0.5)]
                    };
                    for (bin, q) in picks {
                        let mut l = loads.clone();
                        l[bin] += 1;
                        let mut vs = views.clone();
                        if own {
                            vs[j][bin] += 1;
                        }
                        *next.entry((l, vs)).or_insert(0.0) += p * q / (n * n) as f64;
                    }
                }
            }
        }
        own_balls[j] += 1;
        chain = next;
    }
    let mut law = Law::new();
    for ((mut loads, _), p) in chain {
        loads.sort_unstable();
        *law.entry(loads).or_insert(0.0) += p;
    }
    law
}

#[test]
fn two_dispatchers_follow_the_exact_law() {
    // n = 3, m = 6, k = 2 round robin, tau = 2: each dispatcher refreshes once, before its
    // third ball, so decisions see views up to three balls old.
    let (n, m, runs) = (3usize, 6u64, 20_000u64);
    let check = |own: bool, wrong_own: bool, wrong_k: usize, seed: u64| {
        let d = Dispatchers { k: 2, tau: 2, assign: Assign::RoundRobin, own };
        let spec =
            RunSpec { dispatchers: Some(d), ..RunSpec::new(ProcessSpec::DChoice { d: 2 }, 3, m) };
        let data: Vec<Vec<u64>> = (0..runs)
            .map(|r| {
                let mut fin = FinalState::default();
                simulate_observed(&spec, &mut sim_rng(derive_seed(seed, &[r])), &mut fin)
                    .expect("valid");
                fin.0
            })
            .collect();
        let law = exact(n, m, 2, 2, own);
        assert!((law.values().sum::<f64>() - 1.0).abs() < 1e-12);
        let (stat, crit) = fit_law(&data, &law);
        assert!(stat < crit, "own {own}: chi2 = {stat:.1} >= {crit:.1}");
        let wrong = exact(n, m, wrong_k, 2, wrong_own);
        let lambda: f64 = law
            .iter()
            .map(|(s, &p)| (wrong.get(s).copied().unwrap_or(0.0) - p).powi(2) / p)
            .sum::<f64>()
            * runs as f64;
        assert!(lambda > 100.0, "wrong variant too close to test: lambda = {lambda:.1}");
        let (stat, crit) = fit_law(&data, &wrong);
        assert!(stat >= crit, "wrong variant not rejected: chi2 = {stat:.1} < {crit:.1}");
    };
    // Views that do not count their own balls, tested against views that do.
    check(false, true, 2, 21);
    // Views that count their own balls, tested against a single dispatcher (k = 1, tau = 2).
    check(true, true, 1, 22);
}

#[test]
fn many_stale_dispatchers_herd() {
    // n = 1000, m = 20 n, Two-Choice: 32 dispatchers on views refreshed every 100 own balls
    // (3200 balls old at most) send whole bursts to the same light bins, and the gap is far
    // above the sequential gap (about 2); means over 5 runs (run-to-run sd well below 1).
    let base = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 1000, 20_000);
    let mean =
        |spec: &RunSpec| (0..5u64).map(|r| run(spec, 100 + r).0.final_gap).sum::<f64>() / 5.0;
    let seq = mean(&base);
    let d = Dispatchers { k: 32, tau: 100, assign: Assign::RoundRobin, own: true };
    let herd = mean(&RunSpec { dispatchers: Some(d), ..base.clone() });
    assert!(seq < 3.5, "{seq}");
    assert!(herd > seq + 2.0, "32 stale dispatchers {herd} vs sequential {seq}");
}
