//! `Ctx::sample_each` (two Lemire samples per 64-bit word, no per-sample bookkeeping) must
//! give exactly the bins of the same number of `Ctx::sample` calls, leave the same pending
//! half behind (checked by the samples drawn after it), and count the same samples. Bin
//! counts with frequent rejections are included: for n = 2³¹ + 1 almost half of all 32-bit
//! halves are rejected, so every branch of the slow path runs.

use ballast_core::process::Ctx;
use ballast_core::rng::below;
use ballast_core::sim_rng;

#[test]
fn sample_each_is_repeated_sample() {
    let mut script = sim_rng(11);
    for n in [1usize, 2, 3, 10, 1000, 65_537, (1 << 31) + 1, u32::MAX as usize] {
        for case in 0..200u64 {
            let (mut fast_rng, mut slow_rng) = (sim_rng(case), sim_rng(case));
            let (mut fast, mut slow) = (Ctx::new(n), Ctx::new(n));
            // A few rounds of bulk draws separated by single draws, so both pending-half
            // states meet `sample_each` at its start and at its end.
            for _ in 0..4 {
                let count = below(&mut script, 9);
                let mut got = Vec::new();
                fast.sample_each(&mut fast_rng, count, |i| got.push(i));
                let want: Vec<usize> = (0..count).map(|_| slow.sample(&mut slow_rng)).collect();
                assert_eq!(got, want, "n = {n}, case {case}, count {count}");
                let singles = below(&mut script, 3);
                for _ in 0..singles {
                    assert_eq!(fast.sample(&mut fast_rng), slow.sample(&mut slow_rng));
                }
            }
            assert_eq!(fast.samples, slow.samples);
            assert!(got_all_in_range(&mut fast, &mut fast_rng, n));
        }
    }
}

/// `Ctx::sample_two` is two calls of `Ctx::sample`, from either pending-half state, with
/// frequent rejections included (the same bin counts as above).
#[test]
fn sample_two_is_two_samples() {
    let mut script = sim_rng(12);
    for n in [1usize, 2, 3, 10, 1000, 65_537, (1 << 31) + 1, u32::MAX as usize] {
        for case in 0..200u64 {
            let (mut fast_rng, mut slow_rng) = (sim_rng(case), sim_rng(case));
            let (mut fast, mut slow) = (Ctx::new(n), Ctx::new(n));
            for _ in 0..6 {
                let want = (slow.sample(&mut slow_rng), slow.sample(&mut slow_rng));
                assert_eq!(fast.sample_two(&mut fast_rng), want, "n = {n}, case {case}");
                for _ in 0..below(&mut script, 2) {
                    assert_eq!(fast.sample(&mut fast_rng), slow.sample(&mut slow_rng));
                }
            }
            assert_eq!(fast.samples, slow.samples);
        }
    }
}

/// Every bin drawn in bulk is below n.
fn got_all_in_range(ctx: &mut Ctx, rng: &mut ballast_core::SimRng, n: usize) -> bool {
    let mut ok = true;
    ctx.sample_each(rng, 1000, |i| ok &= i < n);
    ok
}
