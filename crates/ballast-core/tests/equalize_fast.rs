//! The fast `equalize{d}` loops (`czumaj::simulate_equalize` on bins,
//! `czumaj::simulate_equalize_levels` on levels) against their reference loops
//! (`simulate_equalize_reference`, `simulate_equalize_levels_reference`: the generic loop of
//! before, on a `u64` load per bin and on `LevelLoads`), bit for bit: the same outcome (every
//! field, trajectories included: gap, max and min load, empty bins, samples, moved balls) and
//! the same generator state afterwards, so the same random numbers were consumed in the same
//! order. No statistics: equality is exact, so a single differing seed fails.
//!
//! Cases: n = 1, 2, 3, 7, 64, 1000, 4097 and 10 007 (the level store's position table is
//! exact per position up to n = 4096 and per block of 2^s positions above), d = 1, 2, 3, 4
//! (the specialised steps) and 5, 8 (the generic step on the fast stores), m from 0 to 100n,
//! observation strides none, 1, 7 and n, with the gap and load trajectories recorded; 3 seeds
//! each. The bin loop's 8-bit loads widened to 16 and 32 bits (n = 1, 2, 3 with up to
//! 70 000 balls per bin). Then a long run at n = 10⁶ (block size 2⁸, many levels crossing block starts) and
//! `simulate` against `simulate_ball_by_ball`, which runs the reference loops.

use ballast_core::czumaj::{
    simulate_equalize, simulate_equalize_levels, simulate_equalize_levels_reference,
    simulate_equalize_reference,
};
use ballast_core::{
    derive_seed, sim_rng, simulate, simulate_ball_by_ball, Engine, ProcessSpec, RunOutcome,
    RunSpec, SimRng,
};

type Loop = fn(&RunSpec, u32, &mut SimRng) -> Result<RunOutcome, ballast_core::Error>;

fn spec(n: u64, m: u64, d: u32, every: Option<u64>) -> RunSpec {
    let mut s = RunSpec::new(ProcessSpec::Equalize { d }, n, m);
    s.observe_every = every;
    s.record_trajectory = true;
    s.record_loads = true;
    s
}

/// Runs both loops from the same seed; panics with the case on any difference.
fn same(fast: Loop, reference: Loop, s: &RunSpec, d: u32, seed: u64, what: &str) {
    let (mut a, mut b) = (sim_rng(seed), sim_rng(seed));
    let x = fast(s, d, &mut a).expect("runs");
    let y = reference(s, d, &mut b).expect("runs");
    let case = format!(
        "{what}: n = {}, m = {}, d = {d}, every = {:?}, seed = {seed}",
        s.n, s.m, s.observe_every
    );
    assert_eq!(x, y, "{case}");
    assert!(a == b, "{case}: generator states differ");
}

fn both(s: &RunSpec, d: u32, seed: u64) {
    same(simulate_equalize, simulate_equalize_reference, s, d, seed, "bins");
    same(simulate_equalize_levels, simulate_equalize_levels_reference, s, d, seed, "levels");
}

#[test]
fn fast_loops_equal_the_reference_bit_for_bit() {
    let mut cases = 0;
    for n in [1u64, 2, 3, 7, 64, 1000, 4097, 10_007] {
        for d in [1u32, 2, 3, 4, 5, 8] {
            let mut ms = vec![0, 1, n / 2, n, 10 * n];
            if n <= 4097 {
                ms.push(100 * n);
            }
            for m in ms {
                for every in [None, Some(1), Some(7), Some(n)] {
                    if every == Some(1) && m > 100_000 {
                        continue;
                    }
                    for r in 0..3 {
                        let seed = derive_seed(4242, &[n, u64::from(d), m, every.unwrap_or(0), r]);
                        both(&spec(n, m, d, every), d, seed);
                        cases += 1;
                    }
                }
            }
        }
    }
    println!("{cases} cases equal");
}

#[test]
fn narrow_bin_loads_widen_exactly() {
    // The bin loop keeps 8-bit loads until the maximum reaches 255, then 16 bits until
    // 65 535, then 32: n = 1 and 2 reach both limits, n = 3 the first, with observations
    // on both sides of each widening.
    for (n, m) in [(1u64, 70_000u64), (2, 140_000), (3, 2_000)] {
        for d in [1u32, 2, 3, 4, 5] {
            for every in [None, Some(97)] {
                let s = spec(n, m, d, every);
                let seed = derive_seed(4244, &[n, u64::from(d)]);
                same(simulate_equalize, simulate_equalize_reference, &s, d, seed, "bins");
            }
        }
    }
}

#[test]
fn fast_level_loop_equals_the_reference_at_large_n() {
    // n = 10⁶: 4 096 blocks of 2⁸ positions; m = 20n spreads the loads over about ten
    // levels, whose boundaries cross block starts all the time.
    let n = 1_000_000;
    for d in [2u32, 3] {
        let s = spec(n, 20 * n, d, Some(n));
        same(
            simulate_equalize_levels,
            simulate_equalize_levels_reference,
            &s,
            d,
            derive_seed(4243, &[u64::from(d)]),
            "levels",
        );
    }
}

#[test]
fn simulate_takes_the_fast_loops_and_ball_by_ball_the_references() {
    for engine in [Engine::Bins, Engine::Levels] {
        for d in [2u32, 3] {
            let s = spec(500, 5000, d, Some(100)).engine(engine);
            let a = simulate(&s, &mut sim_rng(7)).expect("runs");
            let b = simulate_ball_by_ball(&s, &mut sim_rng(7), &mut ()).expect("runs");
            assert_eq!(a, b, "{engine:?}, d = {d}");
        }
    }
}
