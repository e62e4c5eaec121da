//! Batched d-Choice, (1+β) and One-Choice with exponential weights, a batch at a time.
//!
//! The bin engine places a weighted batch ball by ball: sample, compare the frozen loads,
//! draw an Exp weight, buffer, add (11–25 ns per ball at n = 10³, depending on the process;
//! criterion group `weighted_batches`). When batches are large this module produces the same
//! law from per-bin totals instead.
//!
//! **The law.** In a batch every ball decides on the loads frozen at the batch start, and its
//! weight is drawn independently of its bin. Sort the bins lightest first. A d-Choice ball
//! goes to the group of equally loaded bins that contains the smallest of its `d` uniform
//! positions, and within that group:
//!
//! - `position` ties (the authors' code; least load, ties to the highest index): to the bin
//!   at that position when equal loads are ordered by *decreasing* index;
//! - `lowest_index`: likewise with equal loads ordered by increasing index;
//! - `random` and `first`: to a uniform bin of the group. The chosen sample is uniform among
//!   the samples that fell in the group (random) or is the first of them (first); either
//!   way it is a uniform bin of the group, independently of the other samples.
//!
//! (1+β) is a Two-Choice ball with probability β and one uniform position otherwise; the
//! number of Two-Choice balls is drawn first, `Binomial(b, β)`, so the sample count is
//! jointly exact with the loads. One-Choice is one uniform position. Given the number `c` of
//! balls a bin receives in the batch, its added weight is the sum of `c` independent
//! Exp(mean) weights, i.e. `mean · Gamma(c, 1)`: drawn as a sum of `c` Exp(1) variates for
//! `c <` [`GAMMA_FROM`] and as one Gamma variate (Marsaglia–Tsang, `rand_distr`) above.
//! Both are exact, so the loads after the batch have exactly the ball-by-ball law; they are
//! not the same draws, and a run's values differ from the ball-by-ball engine's.
//!
//! **Cost per batch:** one radix sort of the n loads (O(n), by the bytes of the load that
//! differ), about 3 ns per ball for the positions (the blocked generator of
//! [`crate::level`]), and one weight draw per receiving bin instead of one per ball. It pays from about [`SORTED_FROM`]`·n` balls per batch,
//! where `auto` and `bins` use it; below that the sort costs more than it saves.
//! `tests/weighted_batch.rs` compares the two methods in distribution.

use rand::RngCore;
use rand_distr::{Distribution, Exp1, Gamma};

use crate::binomial::binomial;
use crate::level::sequential::{min_positions, ChildRng};
use crate::loads::{LoadState, WeightedLoads};
use crate::observe::{Counters, GapTracker, Observer};
use crate::outcome::RunOutcome;
use crate::rng::below;
use crate::{Error, ProcessSpec, RunSpec, Setting, TieBreak, Weights};

/// Version of this method's values for a given seed: bumped by every value-breaking change
/// (recorded in CHANGELOG.md) and part of the runner's checkpoint keys. 2: the number of
/// Two-Choice balls of (1+β) from [`crate::binomial`].
pub const VALUES_VERSION: u32 = 2;

/// Weighted batches of at least `SORTED_FROM · n` balls use [`simulate_sorted`] in the bin
/// engine (measured at n = 10³: the two methods cost the same somewhere between b = 2n and
/// b = 5n, depending on the process).
pub const SORTED_FROM: u64 = 4;

/// A bin receiving at least this many balls in a batch gets its weight as one Gamma variate
/// rather than a sum of Exp variates. (One Gamma variate costs about as much as 3–4 Exp
/// variates, 16 against 5 ns; a lower threshold would be a little faster but changes the
/// values of a seed.)
pub const GAMMA_FROM: u32 = 8;

/// Whether [`simulate_sorted`] can run `spec`; the error says why not.
pub fn sorted_support(spec: &RunSpec) -> Result<(), Error> {
    let unsupported =
        |why: &str| Err(Error::Unsupported(format!("sorted weighted batches: {why}")));
    let Setting::Batched { b } = spec.setting else {
        return unsupported("the setting must be batched");
    };
    if !spec.sampling.is_uniform() {
        return unsupported("bins must be sampled uniformly (the batch law is per position)");
    }
    if spec.record_probes {
        return unsupported("probes per step are recorded ball by ball");
    }
    if b > u64::from(u32::MAX) {
        // Balls per position are counted in 32 bits.
        return unsupported("batches must have fewer than 2^32 balls");
    }
    let Weights::Exp { .. } = spec.weights else {
        return unsupported("the weights must be exponential");
    };
    match spec.process {
        ProcessSpec::OneChoice | ProcessSpec::DChoice { .. } | ProcessSpec::OnePlusBeta { .. } => {}
        _ => return unsupported("the process must be one_choice, d_choice or one_plus_beta"),
    }
    if spec.n > u64::from(u32::MAX) {
        return unsupported("n must be below 2^32");
    }
    Ok(())
}

/// Whether the bin engine runs `spec` with [`simulate_sorted`]: supported, and batches of
/// at least [`SORTED_FROM`]` · n` balls.
pub fn prefers_sorted(spec: &RunSpec) -> bool {
    match spec.setting {
        Setting::Batched { b } => {
            b >= SORTED_FROM.saturating_mul(spec.n) && sorted_support(spec).is_ok()
        }
        _ => false,
    }
}

/// Runs a weighted batched `spec` a batch at a time (module docs). Observers see every batch
/// end ([`Observer::on_observation`]); an observer that wants every ball
/// ([`Observer::PER_BALL`]) needs the ball-by-ball engine and is refused here.
pub fn simulate_sorted<R: RngCore + ?Sized, O: Observer>(
    spec: &RunSpec,
    rng: &mut R,
    observer: &mut O,
) -> Result<RunOutcome, Error> {
    spec.validate()?;
    sorted_support(spec)?;
    if O::PER_BALL {
        return Err(Error::Unsupported(
            "sorted weighted batches: the observer wants every ball; use the ball-by-ball engine"
                .into(),
        ));
    }
    let (Setting::Batched { b }, Weights::Exp { mean }) = (spec.setting, spec.weights) else {
        unreachable!("checked by sorted_support")
    };
    // (d, probability of d samples): One-Choice is d = 1.
    let (d, beta) = match spec.process {
        ProcessSpec::OneChoice => (1, 0.0),
        ProcessSpec::DChoice { d } => (d, 1.0),
        ProcessSpec::OnePlusBeta { beta } => (2, beta),
        _ => unreachable!("checked by sorted_support"),
    };
    let n = spec.n as usize;
    let mut state = WeightedLoads::new(n, mean);
    let mut batch = Batch::new(n, spec.tie_break, mean);
    let mut child = ChildRng::from_parent(rng);
    let mut gaps = GapTracker::new(spec);
    observer.on_start(&state);
    let (mut done, mut samples) = (0u64, 0u64);
    while done < spec.m {
        let size = b.min(spec.m - done);
        let multi = if d == 1 {
            0
        } else if beta >= 1.0 {
            size
        } else {
            binomial(&mut child, size, beta)
        };
        samples += multi * u64::from(d) + (size - multi);
        batch.run(&mut state, d, multi, size - multi, &mut child);
        done += size;
        gaps.observe(&state, observer);
    }
    if spec.m == 0 {
        gaps.observe(&state, observer);
    }
    let counters = Counters { balls: done, samples, steps: done, ..Counters::default() };
    Ok(gaps.into_outcome(&state, counters))
}

/// Scratch space of one run.
struct Batch {
    tie: TieBreak,
    /// Mean weight.
    mean: f64,
    /// Sort keys, then bins in position order (lightest first).
    order: Vec<u128>,
    /// Balls per position.
    counts: Vec<u32>,
}

impl Batch {
    fn new(n: usize, tie: TieBreak, mean: f64) -> Self {
        Self { tie, mean, order: Vec::with_capacity(n), counts: vec![0; n] }
    }

    /// One batch: `multi` balls take the smallest of `d` positions, `single` balls one
    /// uniform position.
    fn run(
        &mut self,
        state: &mut WeightedLoads,
        d: u32,
        multi: u64,
        single: u64,
        rng: &mut ChildRng,
    ) {
        let n = state.n();
        let Self { tie, mean, order, counts } = self;
        fill_order(order, state, *tie);
        counts.fill(0);
        if multi > 0 {
            min_positions(d, n as u64, multi, rng, |p| counts[p as usize] += 1);
        }
        for _ in 0..single {
            counts[below(rng, n as u64) as usize] += 1;
        }
        if matches!(tie, TieBreak::Random | TieBreak::First) && multi > 0 {
            spread_over_ties(order, counts, rng);
        }
        for (&key, &c) in order.iter().zip(counts.iter()) {
            if c == 0 {
                continue;
            }
            let low = key as u32;
            let bin = match tie {
                TieBreak::Position => u32::MAX - low,
                _ => low,
            } as usize;
            let w = if c < GAMMA_FROM {
                (0..c).map(|_| -> f64 { Exp1.sample(rng) }).sum::<f64>()
            } else {
                Gamma::new(f64::from(c), 1.0).expect("shape >= 1").sample(rng)
            };
            state.add(bin, *mean * w);
        }
    }
}

/// Puts the bins in position order, lightest first, into `order` as sort keys: the load,
/// order-preserving as an integer, in the high bits, then the tie order within a load
/// (index order; `position` ties: reversed). Every key is distinct, so the order is the
/// one total order of the keys, whatever the sort: a stable radix sort by the load alone
/// (`radsort`, LSB, only the bytes that differ), fed in tie order, gives it in O(n).
fn fill_order(order: &mut Vec<u128>, state: &WeightedLoads, tie: TieBreak) {
    let n = state.n();
    let key = |i: usize| {
        let within = match tie {
            TieBreak::Position => u32::MAX - i as u32,
            _ => i as u32,
        };
        u128::from(load_key(state.load(i))) << 32 | u128::from(within)
    };
    order.clear();
    match tie {
        TieBreak::Position => order.extend((0..n).rev().map(key)),
        _ => order.extend((0..n).map(key)),
    }
    radsort::sort_by_key(order, |&k| (k >> 32) as u64);
}

/// Re-throws the balls of every group of equal loads uniformly over the group (random and
/// first ties: the chosen bin of a group is uniform).
fn spread_over_ties(order: &[u128], counts: &mut [u32], rng: &mut ChildRng) {
    let n = order.len();
    let mut s = 0;
    while s < n {
        let key = order[s] >> 32;
        let mut e = s + 1;
        while e < n && order[e] >> 32 == key {
            e += 1;
        }
        if e - s > 1 {
            let group = &mut counts[s..e];
            let total: u64 = group.iter().map(|&c| u64::from(c)).sum();
            group.fill(0);
            for _ in 0..total {
                group[below(rng, (e - s) as u64) as usize] += 1;
            }
        }
        s = e;
    }
}

/// An integer with the order of the (finite) load `x`; equal loads, including 0 and −0,
/// get equal keys.
#[inline]
fn load_key(x: f64) -> u64 {
    let bits = (x + 0.0).to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn load_keys_keep_the_order_of_loads() {
        let xs = [-3.5, -1.0, -0.0, 0.0, 1e-300, 0.5, 1.0, 7.25, 1e300];
        for w in xs.windows(2) {
            assert!(load_key(w[0]) <= load_key(w[1]), "{} {}", w[0], w[1]);
            assert_eq!(load_key(w[0]) == load_key(w[1]), w[0] == w[1], "{} {}", w[0], w[1]);
        }
    }

    #[test]
    fn ties_are_spread_within_their_group_only() {
        // Loads 0, 0, 0, 1, 2, 2 (keys in position order); every ball stays in its group.
        let order: Vec<u128> = [0.0, 0.0, 0.0, 1.0, 2.0, 2.0]
            .iter()
            .enumerate()
            .map(|(i, &x)| u128::from(load_key(x)) << 32 | i as u128)
            .collect();
        let mut rng = ChildRng::from_parent(&mut crate::sim_rng(3));
        let mut seen = [0u64; 6];
        for _ in 0..2000 {
            let mut counts = vec![5, 0, 1, 4, 0, 3];
            spread_over_ties(&order, &mut counts, &mut rng);
            assert_eq!(counts[..3].iter().sum::<u32>(), 6);
            assert_eq!(counts[3], 4);
            assert_eq!(counts[4] + counts[5], 3);
            for (s, &c) in seen.iter_mut().zip(&counts) {
                *s += u64::from(c);
            }
        }
        // Each bin of the first group gets Binomial(6, 1/3) balls per trial: mean 2,
        // variance 4/3, so 4000 ± 52 (one sd) over 2000 trials. ±300 is 5.8 sd: with any
        // seed a false alarm would have probability about 1e-8 per bin (the seed is fixed).
        for &s in &seen[..3] {
            assert!((3700..=4300).contains(&s), "{seen:?}");
        }
    }

    /// The order by radix sort is the order of the straightforward sort of the keys, for
    /// every tie rule, on loads with many ties (integers 0..8 and a few exact repeats of
    /// fractions) and on all-equal loads; fed in index order for `position` ties (a
    /// deliberately wrong variant) the tie order differs and the test sees it.
    #[test]
    fn the_radix_order_is_the_order_of_the_keys() {
        use rand::Rng;
        let mut rng = crate::sim_rng(5);
        let straightforward = |state: &WeightedLoads, tie: TieBreak| {
            let mut keys: Vec<u128> = (0..state.n())
                .map(|i| {
                    let within = match tie {
                        TieBreak::Position => u32::MAX - i as u32,
                        _ => i as u32,
                    };
                    u128::from(load_key(state.load(i))) << 32 | u128::from(within)
                })
                .collect();
            keys.sort_unstable();
            keys
        };
        for trial in 0..40 {
            let n = 1 + trial * 37;
            let mut state = WeightedLoads::new(n, 1.0);
            for i in 0..n {
                let x = match trial % 3 {
                    0 => f64::from(rng.random_range(0..8u32)),
                    1 => [0.25, 1.5, 1e-3][rng.random_range(0..3)],
                    _ => 0.0,
                };
                state.add(i, x);
            }
            for tie in
                [TieBreak::Random, TieBreak::First, TieBreak::LowestIndex, TieBreak::Position]
            {
                let mut order = Vec::new();
                fill_order(&mut order, &state, tie);
                assert_eq!(order, straightforward(&state, tie), "n = {n}, {tie:?}");
            }
            if n > 1 && trial % 3 != 1 {
                // The wrong variant: position ties fed in index order.
                let mut wrong: Vec<u128> = (0..n)
                    .map(|i| {
                        u128::from(load_key(state.load(i))) << 32 | u128::from(u32::MAX - i as u32)
                    })
                    .collect();
                radsort::sort_by_key(&mut wrong, |&k| (k >> 32) as u64);
                assert_ne!(wrong, straightforward(&state, TieBreak::Position), "n = {n}");
            }
        }
    }
}
