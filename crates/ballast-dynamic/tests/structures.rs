//! The O(1)-per-event structures against naive O(n) recomputation on random operation
//! sequences: the round-process state (running max, compacted non-empty list), the level
//! histogram state, the ball vector of the infinite Azar process, and the batch-means
//! tracker.

use ballast_core::rng::below;
use ballast_core::sim_rng;
use ballast_dynamic::{
    AzarConfig, DenseLoads, DynLoads, Horizon, InfiniteAzar, LeakyBins, LeakyConfig, LevelLoads,
    Rbb, RbbConfig, RethrowView, RoundMetrics, RoundProcess, Tracker,
};

/// Naive reference: a plain load vector.
fn naive_metrics(loads: &[u32]) -> (u32, u64, u64) {
    let max = loads.iter().copied().max().unwrap_or(0);
    let total = loads.iter().map(|&x| u64::from(x)).sum();
    let empty = loads.iter().filter(|&&x| x == 0).count() as u64;
    (max, total, empty)
}

/// The two round-process states, driven by the same test.
trait RoundLoads: Sized {
    fn uniform(n: usize, m: u64) -> Self;
    fn release_all(&mut self) -> u64;
    fn add(&mut self, i: usize);
    /// Brings lazily kept metrics up to date (the dense empty count).
    fn settle(&mut self) {}
    fn loads(&self) -> &[u32];
    fn metrics(&self) -> (u32, u64, u64);
    fn check(&self) -> Result<(), String>;
}

impl RoundLoads for DynLoads {
    fn uniform(n: usize, m: u64) -> Self {
        DynLoads::uniform(n, m)
    }
    fn release_all(&mut self) -> u64 {
        DynLoads::release_all(self)
    }
    fn add(&mut self, i: usize) {
        DynLoads::add(self, i)
    }
    fn loads(&self) -> &[u32] {
        DynLoads::loads(self)
    }
    fn metrics(&self) -> (u32, u64, u64) {
        (self.max(), self.total(), self.empty())
    }
    fn check(&self) -> Result<(), String> {
        DynLoads::check(self)
    }
}

impl RoundLoads for DenseLoads {
    fn uniform(n: usize, m: u64) -> Self {
        DenseLoads::uniform(n, m)
    }
    fn release_all(&mut self) -> u64 {
        DenseLoads::release_all(self)
    }
    fn add(&mut self, i: usize) {
        DenseLoads::add(self, i)
    }
    fn settle(&mut self) {
        self.recount()
    }
    fn loads(&self) -> &[u32] {
        DenseLoads::loads(self)
    }
    fn metrics(&self) -> (u32, u64, u64) {
        (self.max(), self.total(), self.empty())
    }
    fn check(&self) -> Result<(), String> {
        DenseLoads::check(self)
    }
}

/// Random sequences of releases and insertions against a plain vector.
fn matches_naive_on_random_sequences<S: RoundLoads>(first_seed: u64) {
    for seed in first_seed..first_seed + 20 {
        let mut rng = sim_rng(seed);
        let n = 1 + below(&mut rng, 40) as usize;
        let mut s = S::uniform(n, below(&mut rng, 3 * n as u64));
        let mut naive = s.loads().to_vec();
        for _ in 0..3000 {
            if below(&mut rng, 4) == 0 {
                let want = naive.iter().filter(|&&x| x > 0).count() as u64;
                assert_eq!(s.release_all(), want);
                for x in &mut naive {
                    *x = x.saturating_sub(1);
                }
            } else {
                let i = below(&mut rng, n as u64) as usize;
                s.add(i);
                naive[i] += 1;
            }
            s.settle();
            assert_eq!(s.loads(), &naive[..]);
            assert_eq!(s.metrics(), naive_metrics(&naive));
            s.check().unwrap();
        }
    }
}

#[test]
fn dynloads_matches_naive_on_random_sequences() {
    matches_naive_on_random_sequences::<DynLoads>(0);
}

#[test]
fn dense_loads_match_naive_on_random_sequences() {
    matches_naive_on_random_sequences::<DenseLoads>(200);
}

/// One-Choice RBB with `2m >= n` keeps a plain load vector; it must be the list-based
/// process exactly: the same draws in the same order, so the same loads after every round.
#[test]
fn dense_rbb_is_the_list_rbb_round_by_round() {
    for (n, m) in [(2usize, 1u64), (1, 5), (10, 5), (10, 7), (37, 100), (200, 200), (64, 3000)] {
        let cfg = RbbConfig::one_choice(n, m);
        let mut dense = Rbb::new(&cfg).unwrap();
        assert!(dense.is_dense(), "n = {n}, m = {m}");
        let mut list = Rbb::from_state(DynLoads::uniform(n, m), 1, RethrowView::AfterReleases);
        assert!(!list.is_dense());
        let (mut a, mut b) = (sim_rng(n as u64 ^ m), sim_rng(n as u64 ^ m));
        for round in 0..2000 {
            let (x, y) = (dense.round(&mut a), list.round(&mut b));
            assert_eq!(x, y, "n = {n}, m = {m}, round {round}");
            assert_eq!(dense.loads(), list.loads(), "n = {n}, m = {m}, round {round}");
        }
        dense.check_state().unwrap();
        list.check_state().unwrap();
    }
    // Few balls: the list is kept (a round then costs O(m), not O(n)); Greedy[d] with
    // `2m >= n` is dense too (tests/round_loops.rs checks it against the reference loop).
    assert!(!Rbb::new(&RbbConfig::one_choice(100, 49)).unwrap().is_dense());
    assert!(Rbb::new(&RbbConfig::d_choice(100, 500, 2, RethrowView::AfterReleases))
        .unwrap()
        .is_dense());
}

#[test]
fn level_loads_match_naive_on_random_sequences() {
    for seed in 0..20u64 {
        let mut rng = sim_rng(100 + seed);
        let n = 1 + below(&mut rng, 40) as usize;
        let mut s = LevelLoads::uniform(n, below(&mut rng, 3 * n as u64));
        let mut naive = s.loads().to_vec();
        for _ in 0..3000 {
            let i = below(&mut rng, n as u64) as usize;
            if below(&mut rng, 2) == 0 {
                s.add(i);
                naive[i] += 1;
            } else if naive[i] > 0 {
                s.remove(i);
                naive[i] -= 1;
            }
            assert_eq!(s.loads(), &naive[..]);
            assert_eq!((s.max(), s.total(), s.empty()), naive_metrics(&naive));
            s.check().unwrap();
        }
    }
}

#[test]
fn uniform_start_is_as_even_as_possible() {
    let s = DynLoads::uniform(7, 23);
    assert_eq!(s.loads(), &[4, 4, 3, 3, 3, 3, 3]);
    s.check().unwrap();
    let s = DynLoads::uniform(5, 0);
    assert_eq!((s.max(), s.total(), s.empty(), s.nonempty_count()), (0, 0, 5, 0));
    s.check().unwrap();
    let s = LevelLoads::uniform(7, 23);
    assert_eq!((s.loads(), s.max(), s.empty()), (&[4, 4, 3, 3, 3, 3, 3][..], 4, 0));
    s.check().unwrap();
}

/// Every process keeps its state consistent round after round, and its reported metrics
/// equal the naive recomputation.
#[test]
fn processes_report_naive_metrics() {
    let mut rng = sim_rng(3);
    let leaky = |d| LeakyBins::new(&LeakyConfig::new(50, 0.9, d)).unwrap();
    let rbb = |d, view| Rbb::new(&RbbConfig::d_choice(50, 170, d, view)).unwrap();
    fn check<P: RoundProcess>(mut p: P, rng: &mut ballast_core::SimRng, conserved: Option<u64>) {
        for _ in 0..500 {
            let m = p.round(rng);
            let (max, total, empty) = naive_metrics(p.loads());
            assert_eq!((m.max_load, m.total_load, m.empty_bins), (max, total, empty));
            if let Some(c) = conserved {
                assert_eq!(total, c);
            }
            p.check_state().unwrap();
        }
    }
    check(leaky(1), &mut rng, None);
    check(leaky(2), &mut rng, None);
    check(rbb(1, RethrowView::AfterReleases), &mut rng, Some(170));
    check(Rbb::new(&RbbConfig::one_choice(50, 20)).unwrap(), &mut rng, Some(20));
    check(rbb(2, RethrowView::AfterReleases), &mut rng, Some(170));
    check(rbb(3, RethrowView::RoundStart), &mut rng, Some(170));
    let azar = InfiniteAzar::new(&AzarConfig::new(50, 170, 2)).unwrap();
    check(azar, &mut rng, Some(170));
}

/// The Azar ball vector is exactly the multiset of the loads.
#[test]
fn azar_ball_vector_matches_loads() {
    let mut rng = sim_rng(11);
    let mut p = InfiniteAzar::new(&AzarConfig::new(30, 95, 2)).unwrap();
    for _ in 0..2000 {
        p.step(&mut rng);
        let mut counts = [0u32; 30];
        for &b in p.balls() {
            counts[b as usize] += 1;
        }
        assert_eq!(&counts[..], p.loads());
        p.check_state().unwrap();
    }
}

/// Tracker statistics against a direct computation from the stored per-round values.
#[test]
fn tracker_matches_direct_batch_means() {
    let mut rng = sim_rng(5);
    let horizon = Horizon::new(7, 103).with_batches(10);
    let mut t = Tracker::new(10, &horizon).unwrap();
    let mut values = Vec::new();
    for r in 0..horizon.total_rounds() {
        let m = RoundMetrics {
            max_load: below(&mut rng, 9) as u32,
            total_load: below(&mut rng, 1000),
            empty_bins: below(&mut rng, 10),
            moved: 1,
            peak_total: 0,
        };
        if r >= 7 {
            values.push(m);
        }
        t.observe(&m);
    }
    let s = t.finish();
    assert_eq!(s.moved, 110);
    let x: Vec<f64> = values.iter().map(|m| f64::from(m.max_load)).collect();
    let mean = x.iter().sum::<f64>() / 103.0;
    assert!((s.max_load.mean - mean).abs() < 1e-12);
    // Batch j holds rounds floor(103 j / 10) .. floor(103 (j + 1) / 10).
    let bounds: Vec<usize> = (0..=10).map(|j| 103 * j / 10).collect();
    let bm: Vec<f64> = bounds
        .windows(2)
        .map(|w| x[w[0]..w[1]].iter().sum::<f64>() / (w[1] - w[0]) as f64)
        .collect();
    for (a, b) in s.max_load.batch_means.iter().zip(&bm) {
        assert!((a - b).abs() < 1e-12);
    }
    let avg = bm.iter().sum::<f64>() / 10.0;
    let sd = (bm.iter().map(|v| (v - avg).powi(2)).sum::<f64>() / 9.0).sqrt();
    assert!((s.max_load.stderr - sd / 10f64.sqrt()).abs() < 1e-12);
    let h1 = x[..bounds[5]].iter().sum::<f64>() / bounds[5] as f64;
    let h2 = x[bounds[5]..].iter().sum::<f64>() / (103 - bounds[5]) as f64;
    assert!((s.max_load.first_half - h1).abs() < 1e-12);
    assert!((s.max_load.second_half - h2).abs() < 1e-12);
    assert!((s.max_load.drift_z - (h2 - h1) / (2.0 * sd / 10f64.sqrt())).abs() < 1e-9);
    let total: u64 = s.max_load_distribution.iter().map(|&(_, c)| c).sum();
    assert_eq!(total, 103);
    for &(l, c) in &s.max_load_distribution {
        assert_eq!(c, values.iter().filter(|m| m.max_load == l).count() as u64);
    }
}

#[test]
fn invalid_parameters_are_rejected() {
    assert!(LeakyBins::new(&LeakyConfig::new(10, 1.0, 1)).is_err());
    assert!(LeakyBins::new(&LeakyConfig::new(0, 0.5, 1)).is_err());
    assert!(LeakyBins::new(&LeakyConfig::new(10, 0.5, 0)).is_err());
    assert!(InfiniteAzar::new(&AzarConfig::new(10, 0, 2)).is_err());
    assert!(Horizon::new(0, 10).with_batches(3).validate().is_err());
    assert!(Horizon::new(0, 10).with_batches(20).validate().is_err());
    assert!(Horizon::new(0, 20).validate().is_ok());
}
