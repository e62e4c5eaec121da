//! The fast round loops against the straightforward reference loops ([`Rbb::reference`],
//! [`LeakyBins::reference`]: the list of non-empty bins, one `Ctx::sample` per One-Choice
//! ball), over many seeds and parameters. They must draw the same random words in the same
//! order, so: the same metrics after every round, the same loads after every round, the same
//! generator state at the end (the next words agree), and the same run summary (every
//! statistic) from `simulate_process`. The fast loops are the dense load vectors (RBB with
//! `2m >= n` for every d and view, leaky bins with λ >= 1/4) and the bulk draws of
//! One-Choice on the list.
//!
//! Power: deliberately wrong loops built from the same public pieces (a release that also
//! counts empty bins, one re-throw too many, a fresh sampling context each round that drops
//! the pending half word, leaky departures before the arrivals) are rejected by the same
//! comparison on the same seeds.

use ballast_core::process::Ctx;
use ballast_core::sim_rng;
use ballast_dynamic::{
    simulate_process, Arrivals, DenseLoads, Horizon, LeakyBins, LeakyConfig, Rbb, RbbConfig,
    RethrowView, RoundMetrics, RoundProcess,
};
use rand::{Rng, RngCore};

/// Runs both processes `rounds` rounds on generators seeded alike; `Err` at the first
/// difference in metrics, loads or generator state.
fn compare<P: RoundProcess, Q: RoundProcess>(
    fast: &mut P,
    reference: &mut Q,
    rounds: u64,
    seed: u64,
) -> Result<(), String> {
    let (mut a, mut b) = (sim_rng(seed), sim_rng(seed));
    for t in 0..rounds {
        let (x, y) = (fast.round(&mut a), reference.round(&mut b));
        if x != y {
            return Err(format!("round {t}: metrics {x:?}, reference {y:?}"));
        }
        if fast.loads() != reference.loads() {
            return Err(format!("round {t}: the loads differ"));
        }
    }
    for _ in 0..4 {
        if a.next_u64() != b.next_u64() {
            return Err("the generator states differ after the rounds".into());
        }
    }
    fast.check_state()?;
    reference.check_state()
}

/// The run summaries of both (every statistic: time averages, batch means, the max-load
/// distribution, peak, moved, last round) on a horizon with a burn-in.
fn same_summary<P: RoundProcess, Q: RoundProcess>(fast: &mut P, reference: &mut Q, seed: u64) {
    let h = Horizon::new(37, 200).with_batches(10);
    let x = simulate_process(fast, &h, &mut sim_rng(seed)).unwrap();
    let y = simulate_process(reference, &h, &mut sim_rng(seed)).unwrap();
    assert_eq!(x, y, "seed {seed}");
}

fn rbb_configs() -> Vec<RbbConfig> {
    let mut v = Vec::new();
    for n in [1usize, 2, 3, 10, 37, 100, 257] {
        for m in [0u64, 1, n as u64 / 2, n as u64, 2 * n as u64 + 1, 5 * n as u64, 16 * n as u64] {
            v.push(RbbConfig::one_choice(n, m));
            for d in [2, 3] {
                for view in [RethrowView::AfterReleases, RethrowView::RoundStart] {
                    v.push(RbbConfig::d_choice(n, m, d, view));
                }
            }
        }
    }
    v
}

/// 7 sizes × 7 ball counts × 5 (d, view) × 6 seeds × 300 rounds.
#[test]
fn rbb_fast_loops_are_the_reference_loop() {
    let mut dense = 0;
    for cfg in rbb_configs() {
        for seed in 0..6 {
            let mut fast = Rbb::new(&cfg).unwrap();
            dense += usize::from(fast.is_dense());
            let mut reference = Rbb::reference(&cfg).unwrap();
            assert!(!reference.is_dense());
            compare(&mut fast, &mut reference, 300, seed)
                .unwrap_or_else(|e| panic!("{cfg:?}, seed {seed}: {e}"));
        }
        let seed = 1000 + cfg.n as u64 * 31 + cfg.m;
        same_summary(&mut Rbb::new(&cfg).unwrap(), &mut Rbb::reference(&cfg).unwrap(), seed);
    }
    assert!(dense > 0);
}

fn leaky_configs() -> Vec<LeakyConfig> {
    let mut v = Vec::new();
    for n in [1usize, 5, 37, 100, 257] {
        for lambda in [0.0, 0.1, 0.25, 0.5, 0.9, 0.99] {
            for d in [1, 2, 3] {
                for arrivals in [Arrivals::Binomial, Arrivals::Poisson, Arrivals::Fixed] {
                    v.push(LeakyConfig::new(n, lambda, d).with_arrivals(arrivals));
                }
            }
        }
    }
    v
}

/// 5 sizes × 6 rates × 3 d × 3 arrival laws × 4 seeds × 400 rounds.
#[test]
fn leaky_fast_loops_are_the_reference_loop() {
    let mut dense = 0;
    for cfg in leaky_configs() {
        for seed in 0..4 {
            let mut fast = LeakyBins::new(&cfg).unwrap();
            dense += usize::from(fast.is_dense());
            let mut reference = LeakyBins::reference(&cfg).unwrap();
            assert!(!reference.is_dense());
            compare(&mut fast, &mut reference, 400, seed)
                .unwrap_or_else(|e| panic!("{cfg:?}, seed {seed}: {e}"));
        }
        let seed = 2000 + cfg.n as u64 * 7 + u64::from(cfg.d);
        same_summary(
            &mut LeakyBins::new(&cfg).unwrap(),
            &mut LeakyBins::reference(&cfg).unwrap(),
            seed,
        );
    }
    assert!(dense > 0);
}

/// The dense state with a total of 2^31 or more takes the unsigned path of its passes.
#[test]
fn dense_passes_with_loads_beyond_i32() {
    let loads = vec![3_000_000_000u32, 0, 5, 1, 2_999_999_999];
    let mut s = DenseLoads::from_loads(loads.clone());
    assert_eq!((s.max(), s.empty(), s.total()), (3_000_000_000, 1, 6_000_000_005));
    let released = s.release_and_recount();
    assert_eq!(released, 4);
    assert_eq!(s.loads(), &[2_999_999_999, 0, 4, 0, 2_999_999_998]);
    assert_eq!((s.max(), s.empty(), s.total()), (2_999_999_999, 2, 6_000_000_001));
    s.check().unwrap();
    let mut t = DenseLoads::from_loads(loads);
    assert_eq!(t.release_all(), 4);
    t.recount();
    assert_eq!((t.loads(), t.max(), t.empty()), (s.loads(), s.max(), s.empty()));
}

/// Deliberately wrong loops, from the same public pieces as the fast ones (and the right
/// ones, to show that the harness accepts them).
#[derive(Clone, Copy, Debug)]
enum Bug {
    /// RBB, right.
    None,
    /// Leaky bins with Fixed arrivals, right.
    LeakyNone,
    /// RBB: every bin "releases", the empty ones too (n balls re-thrown per round).
    ReleaseFromEmpty,
    /// RBB: one re-throw more than the released balls.
    OneMoreThrow,
    /// RBB: a fresh sampling context every round (the pending half word is dropped).
    FreshContext,
    /// Leaky bins: the departures before the arrivals.
    DeparturesFirst,
}

/// One-Choice RBB (or leaky bins with Fixed arrivals for `DeparturesFirst`) with a bug.
struct Wrong {
    s: DenseLoads,
    ctx: Ctx<'static>,
    bug: Bug,
    arrivals: u64,
}

impl RoundProcess for Wrong {
    fn loads(&self) -> &[u32] {
        self.s.loads()
    }
    fn check_state(&self) -> Result<(), String> {
        self.s.check()
    }
    fn round<R: Rng + ?Sized>(&mut self, rng: &mut R) -> RoundMetrics {
        let s = &mut self.s;
        let moved = match self.bug {
            Bug::LeakyNone => {
                s.throw(&mut self.ctx, rng, self.arrivals);
                s.release_and_recount();
                self.arrivals
            }
            Bug::DeparturesFirst => {
                s.release_and_recount();
                s.throw(&mut self.ctx, rng, self.arrivals);
                s.recount();
                self.arrivals
            }
            _ => {
                let r = s.release_all();
                let throws = match self.bug {
                    Bug::ReleaseFromEmpty => s.n() as u64,
                    Bug::OneMoreThrow => r + 1,
                    _ => r,
                };
                if let Bug::FreshContext = self.bug {
                    self.ctx = Ctx::new(s.n());
                }
                s.throw(&mut self.ctx, rng, throws);
                s.recount();
                r
            }
        };
        RoundMetrics {
            max_load: s.max(),
            total_load: s.total(),
            empty_bins: s.empty(),
            moved,
            peak_total: 0,
        }
    }
}

#[test]
fn wrong_loops_are_rejected() {
    let rbb =
        |bug, n, m| Wrong { s: DenseLoads::uniform(n, m), ctx: Ctx::new(n), bug, arrivals: 0 };
    for bug in [Bug::None, Bug::ReleaseFromEmpty, Bug::OneMoreThrow, Bug::FreshContext] {
        for (n, m) in [(10usize, 10u64), (37, 100), (100, 1600)] {
            let cfg = RbbConfig::one_choice(n, m);
            let mut rejected = 0;
            for seed in 0..6 {
                let mut reference = Rbb::reference(&cfg).unwrap();
                let r = compare(&mut rbb(bug, n, m), &mut reference, 300, seed);
                rejected += usize::from(r.is_err());
            }
            let expected = if let Bug::None = bug { 0 } else { 6 };
            assert_eq!(rejected, expected, "{bug:?} n = {n}, m = {m}");
        }
    }
    for bug in [Bug::LeakyNone, Bug::DeparturesFirst] {
        for (n, lambda) in [(10usize, 0.5), (100, 0.9)] {
            let cfg = LeakyConfig::new(n, lambda, 1).with_arrivals(Arrivals::Fixed);
            let arrivals = (lambda * n as f64).floor() as u64;
            for seed in 0..6 {
                let mut wrong = Wrong { s: DenseLoads::new(n), ctx: Ctx::new(n), bug, arrivals };
                let mut reference = LeakyBins::reference(&cfg).unwrap();
                let r = compare(&mut wrong, &mut reference, 300, seed);
                assert_eq!(r.is_err(), matches!(bug, Bug::DeparturesFirst), "{bug:?} n = {n}");
            }
        }
    }
}
