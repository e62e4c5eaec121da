//! The off-line d-choice optimum: equal to brute force on small instances, certified
//! (assignment + Hall witness, checked independently) on large ones, and the known
//! thresholds.

use ballast_core::{derive_seed, sim_rng};
use ballast_graph::offline::{
    balls_confined, offline_optimum, orientability_threshold, predicted_optimum, Choices,
};

/// Minimum max load over all d^m assignments.
fn brute_force(c: &Choices) -> u32 {
    let (n, m, d) = (c.n(), c.m(), c.d());
    let mut best = u32::MAX;
    let mut digits = vec![0usize; m];
    let mut load = vec![0u32; n];
    loop {
        load.fill(0);
        for (i, &k) in digits.iter().enumerate() {
            load[c.ball(i)[k] as usize] += 1;
        }
        best = best.min(load.iter().copied().max().unwrap_or(0));
        // Next assignment (odometer).
        let mut i = 0;
        loop {
            if i == m {
                return if m == 0 { 0 } else { best };
            }
            digits[i] += 1;
            if digits[i] < d {
                break;
            }
            digits[i] = 0;
            i += 1;
        }
    }
}

#[test]
fn equals_brute_force_on_small_instances() {
    let mut checked = 0;
    for case in 0..600u64 {
        let mut rng = sim_rng(derive_seed(71, &[case]));
        let n = 1 + (case % 5) as usize;
        let d = 1 + (case / 5 % 3) as usize;
        let m = (case / 15 % 9) as usize;
        if (d as f64).powi(m as i32) > 20_000.0 {
            continue;
        }
        let c = Choices::sample(n, m, d, &mut rng).unwrap();
        let opt = offline_optimum(&c);
        assert_eq!(opt.max_load, brute_force(&c), "n {n} m {m} d {d}: {c:?}");
        opt.verify(&c).unwrap();
        assert!(opt.lower_bound <= opt.max_load && opt.max_load <= opt.greedy_max_load);
        checked += 1;
    }
    assert!(checked > 500, "{checked}");
}

#[test]
fn hand_made_instances() {
    // Five balls that all choose bins 0 and 1: 3.
    let c = Choices::new(4, 2, [0, 1].repeat(5)).unwrap();
    let opt = offline_optimum(&c);
    assert_eq!((opt.max_load, opt.witness.as_slice()), (3, &[0, 1][..]));
    // A 4-cycle of choices plus a pendant ball: 5 balls on 5 bins, one each.
    let c = Choices::new(5, 2, vec![0, 1, 1, 2, 2, 3, 3, 0, 3, 4]).unwrap();
    let opt = offline_optimum(&c);
    assert_eq!(opt.max_load, 1);
    opt.verify(&c).unwrap();
    // Repeated choices count once: (2, 2) can only go to 2.
    let c = Choices::new(3, 2, vec![2, 2, 2, 2, 0, 2]).unwrap();
    assert_eq!(offline_optimum(&c).max_load, 2);
    // No balls.
    let c = Choices::new(3, 2, vec![]).unwrap();
    assert_eq!(offline_optimum(&c).max_load, 0);
    // Invalid input.
    assert!(Choices::new(3, 2, vec![0, 3]).is_err());
    assert!(Choices::new(3, 2, vec![0]).is_err());
}

/// A chain that greedy gets wrong: the repair needs a long augmenting path.
#[test]
fn repairs_long_augmenting_paths() {
    // Balls i = 0..k choose (i, i + 1) in order; then ball k chooses (0, 0). Greedy puts ball
    // i in bin i (ties to the first), so bin 0 ends with 2; the optimum shifts the whole chain.
    let k = 1000u32;
    let mut flat: Vec<u32> = (0..k).flat_map(|i| [i, i + 1]).collect();
    flat.extend([0, 0]);
    let c = Choices::new(k as usize + 1, 2, flat).unwrap();
    let opt = offline_optimum(&c);
    assert_eq!((opt.greedy_max_load, opt.max_load), (2, 1));
    opt.verify(&c).unwrap();
    assert_eq!(opt.assignment[k as usize], 0);
}

#[test]
fn large_random_instances_are_certified() {
    for (n, m, d, want) in
        [(100_000, 100_000, 2, 2), (100_000, 100_000, 3, 2), (50_000, 100_000, 2, 3)]
    {
        let c = Choices::sample(n, m, d, &mut sim_rng(72)).unwrap();
        let opt = offline_optimum(&c);
        assert_eq!(opt.max_load, want, "n {n} m {m} d {d}");
        opt.verify(&c).unwrap();
        assert!(balls_confined(&c, &opt.witness) > u64::from(want - 1) * opt.witness.len() as u64);
    }
}

#[test]
fn verify_rejects_wrong_claims() {
    let c = Choices::sample(50, 100, 2, &mut sim_rng(73)).unwrap();
    let opt = offline_optimum(&c);
    let mut lower = opt.clone();
    lower.max_load -= 1;
    assert!(lower.verify(&c).is_err());
    let mut bad = opt.clone();
    bad.assignment[0] = (0..50).find(|b| !c.ball(0).contains(b)).unwrap();
    assert!(bad.verify(&c).is_err());
    let mut weak = opt;
    weak.witness = vec![0];
    assert!(weak.verify(&c).is_err());
}

#[test]
fn orientability_thresholds_match_the_literature() {
    // Cuckoo hashing thresholds (d-ary, one slot per bin) and the graph case.
    let cases =
        [(2, 1, 0.5), (3, 1, 0.917_935), (4, 1, 0.976_770), (5, 1, 0.992_438), (2, 2, 1.794_02)];
    for (d, l, want) in cases {
        let got = orientability_threshold(d, l).unwrap();
        assert!((got - want).abs() < 2e-5, "c*({d}, {l}) = {got}, want {want}");
    }
    assert_eq!(predicted_optimum(1.0, 2).unwrap(), Some(2));
    assert_eq!(predicted_optimum(1.0, 3).unwrap(), Some(2));
    assert_eq!(predicted_optimum(0.4, 2).unwrap(), Some(1));
    assert_eq!(predicted_optimum(2.0, 2).unwrap(), Some(3));
    assert!(orientability_threshold(1, 1).is_err());
}
