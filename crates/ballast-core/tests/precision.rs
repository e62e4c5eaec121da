//! Precision of weighted loads at a total weight of 10¹⁵ and overflow checks of unit loads.
//!
//! After 10¹⁵ balls of mean weight 1 every load is near W/n, far from 0; an f64 holding the
//! loads themselves has a resolution of about W/n · 2⁻⁵² there, and the gap (a difference of
//! two such numbers) loses those digits. `WeightedLoads` keeps loads relative to a base that
//! follows the average, so the gap keeps full precision. The test builds that state directly
//! (every bin gets W/n, then 10⁵ small balls), with weights that are multiples of 2⁻¹⁰, so the
//! exact gap can be computed in integers.

use ballast_core::{LoadState, WeightedLoads};
use rand::{Rng, SeedableRng};

#[test]
fn weighted_gap_is_exact_to_1e_9_at_total_weight_1e15() {
    let n = 1000usize;
    let base_per_bin = 1e12; // W = n · 1e12 = 1e15 before the small balls.
    let mut loads = WeightedLoads::new(n, 1.0);
    // Exact loads in units of 2^-10.
    let scale = 1024i128;
    let mut exact: Vec<i128> = vec![0; n];
    // The naive representation (absolute f64 loads), to show the tolerance has power.
    let mut naive: Vec<f64> = vec![0.0; n];
    // The base arrives in 1000 steps per bin, as a long run would bring it.
    for _ in 0..1000 {
        for (i, e) in exact.iter_mut().enumerate() {
            let w = base_per_bin / 1000.0;
            loads.add(i, w);
            naive[i] += w;
            *e += (w as i128) * scale;
        }
    }
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(20261129);
    let (mut worst, mut naive_worst): (f64, f64) = (0.0, 0.0);
    for step in 0..100_000u32 {
        let i = rng.random_range(0..n);
        let k: i128 = rng.random_range(0..4096);
        loads.add(i, k as f64 / 1024.0);
        naive[i] += k as f64 / 1024.0;
        exact[i] += k;
        if step % 1000 == 999 {
            let total: i128 = exact.iter().sum();
            let max = *exact.iter().max().unwrap();
            // gap = max − total/n, exactly, in units of 2^-10 / n.
            let num = max * n as i128 - total;
            let want = num as f64 / (scale as f64 * n as f64);
            let got = loads.gap();
            worst = worst.max((got - want).abs());
            let naive_max = naive.iter().copied().fold(f64::MIN, f64::max);
            let naive_gap = naive_max - naive.iter().sum::<f64>() / n as f64;
            naive_worst = naive_worst.max((naive_gap - want).abs());
        }
    }
    assert!(worst < 1e-9, "largest gap error {worst:e} at W = 1e15");
    assert!(naive_worst > 1e-6, "absolute f64 loads were accurate too ({naive_worst:e})");
    let w = loads.total();
    assert!((w - 1e15).abs() / 1e15 < 1e-9, "total {w}");
}

#[test]
fn unit_loads_beyond_32_bits_are_refused_on_the_bin_engine() {
    // m > 2^32 − 1 could overflow a 32-bit bin load: the bin engine refuses it with a message
    // naming the field and the limit, instead of wrapping silently.
    let spec = ballast_core::RunSpec::new(
        ballast_core::ProcessSpec::OneChoice,
        10,
        u64::from(u32::MAX) + 1,
    )
    .engine(ballast_core::Engine::Bins);
    let err = spec.validate().unwrap_err().to_string();
    assert!(err.contains("`m`") && err.contains("4294967295"), "{err}");
}
