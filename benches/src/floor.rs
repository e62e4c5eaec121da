//! The floor table (`cargo xtask bench --floor`, binary `floor`): ns per ball of the bin and
//! level engines beside a *floor*, the cost of the random numbers a two-sample process needs
//! and nothing else, measured in the same run so that the ratio "engine ÷ floor" is
//! comparable across machines and loads.
//!
//! The floor loop ([`floor_loop`]) draws, per ball, two bounded bin indices in `0..n` with
//! [`ballast_core::rng::below`] from a [`ballast_core::SimRng`] (two generator steps: `below`
//! takes one 32-bit draw per index) and adds them to a sum that is passed through
//! [`std::hint::black_box`], so nothing is optimised away; it keeps no load state.
//! [`floor_loop_one_word`] is the same with both indices from one 64-bit word (Lemire's
//! multiply-shift on each 32-bit half, with rejection, as [`ballast_core::process::Ctx`]
//! samples): the cheapest exact way to get two indices from this generator, shown as an
//! extra row.

use std::hint::black_box;

use ballast_core::rng::{below, below_from_word};
use ballast_core::{sim_rng, Engine, ProcessSpec, RunSpec};
use rand::RngCore;

/// The setting of a floor case, relative to `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FloorSetting {
    /// One ball at a time.
    Sequential,
    /// Batches of `k·n` balls.
    BatchedTimesN(u64),
}

/// One engine case of the floor table: a process and a setting, run at every `n`.
#[derive(Clone, Debug)]
pub struct FloorCase {
    /// Row label, e.g. `two_choice` or `two_choice b=10n`.
    pub label: String,
    /// The process.
    pub process: ProcessSpec,
    /// Sequential or batched.
    pub setting: FloorSetting,
}

impl FloorCase {
    /// The run of this case with `n` bins and `m` balls on `engine`.
    pub fn spec(&self, engine: Engine, n: u64, m: u64) -> RunSpec {
        let spec = RunSpec::new(self.process.clone(), n, m).engine(engine);
        match self.setting {
            FloorSetting::Sequential => spec,
            FloorSetting::BatchedTimesN(k) => spec.batched(k * n),
        }
    }

    /// Balls per batch at `n` (1 for sequential cases): `m` is a multiple of it.
    pub fn granule(&self, n: u64) -> u64 {
        match self.setting {
            FloorSetting::Sequential => 1,
            FloorSetting::BatchedTimesN(k) => k * n,
        }
    }
}

/// The engine cases of the floor table, each run on [`Engine::Bins`] and [`Engine::Levels`]:
/// sequential One-Choice, Two-Choice, Three-Choice, (1+β) with β = 0.5, Quantile with
/// δ = 0.5, g-Bounded and g-Myopic with g = 4, σ-Noisy-Load with σ = 4 (truncated, as in
/// `configs/noise22`), and batched Two-Choice with b = n and b = 10n; then the processes of
/// `configs/filling22` and the threshold family, on the bin engine only (the level engine does
/// not run all of them): Threshold with f = 1, strict Mean-Thinning, Relative-Threshold with
/// f = 1, Packing (offset 1), Twinning, Tight-Packing (offset 1) and (1, 1)-Memory. Random
/// ties throughout.
pub fn floor_cases() -> Vec<FloorCase> {
    let seq = |label: &str, process| FloorCase {
        label: label.to_string(),
        process,
        setting: FloorSetting::Sequential,
    };
    vec![
        seq("one_choice", ProcessSpec::OneChoice),
        seq("two_choice", ProcessSpec::DChoice { d: 2 }),
        seq("three_choice", ProcessSpec::DChoice { d: 3 }),
        seq("one_plus_beta 0.5", ProcessSpec::OnePlusBeta { beta: 0.5 }),
        seq("quantile 0.5", ProcessSpec::Quantile { delta: 0.5 }),
        seq("g_bounded 4", ProcessSpec::GBounded { g: 4.0 }),
        seq("g_myopic 4", ProcessSpec::GMyopic { g: 4.0 }),
        seq("sigma_noisy_load 4", ProcessSpec::SigmaNoisyLoad { sigma: 4.0, truncate: true }),
        FloorCase {
            label: "two_choice b=n".to_string(),
            process: ProcessSpec::DChoice { d: 2 },
            setting: FloorSetting::BatchedTimesN(1),
        },
        FloorCase {
            label: "two_choice b=10n".to_string(),
            process: ProcessSpec::DChoice { d: 2 },
            setting: FloorSetting::BatchedTimesN(10),
        },
        seq("threshold 1", ProcessSpec::Threshold { f: 1.0 }),
        seq("mean_thinning strict", ProcessSpec::MeanThinning { strict: true }),
        seq("relative_threshold 1", ProcessSpec::RelativeThreshold { f: 1.0 }),
        seq("packing 1", ProcessSpec::Packing { offset: 1 }),
        seq("twinning", ProcessSpec::Twinning),
        seq("tight_packing 1", ProcessSpec::TightPacking { offset: 1, balls: None }),
        seq("memory 1 1", ProcessSpec::Memory { d: 1, k: 1 }),
    ]
}

/// Whether `engine` runs `case` (the engines skip the cases they cannot simulate exactly).
pub fn runs_on(case: &FloorCase, engine: Engine) -> bool {
    ballast_core::supported_engines(&case.spec(engine, 1000, 10_000)).contains(&engine)
}

/// The default sizes of the floor table, n = 10³ … 10⁶.
pub const FLOOR_SIZES: [u64; 4] = [1_000, 10_000, 100_000, 1_000_000];

/// The opt-in large sizes (`--big`), n = 10⁷ and 10⁸: 40 and 400 MB of loads on the bin
/// engine, and per-run O(n) work (allocation, the final minimum) that is no longer small
/// beside the balls.
pub const FLOOR_BIG_SIZES: [u64; 2] = [10_000_000, 100_000_000];

/// The floor: `balls` times two indices in `0..n` by [`below`] (two generator steps),
/// summed through [`black_box`]. Returns the sum (so a caller can black-box it too).
pub fn floor_loop(n: u64, balls: u64, seed: u64) -> u64 {
    let mut rng = sim_rng(seed);
    let mut sum = 0u64;
    for _ in 0..balls {
        let a = below(&mut rng, n);
        let b = below(&mut rng, n);
        sum = black_box(sum.wrapping_add(a).wrapping_add(b));
    }
    sum
}

/// The floor with both indices from one 64-bit word: Lemire's multiply-shift on each 32-bit
/// half (`n <= 2^32 − 1`), a rejected half replaced by a fresh word's same half. Exact, one
/// generator step per ball in the common case.
pub fn floor_loop_one_word(n: u64, balls: u64, seed: u64) -> u64 {
    let n32 = n as u32;
    let mut rng = sim_rng(seed);
    let mut sum = 0u64;
    for _ in 0..balls {
        let w = rng.next_u64();
        let a = loop_half(&mut rng, w as u32, n32, false);
        let b = loop_half(&mut rng, (w >> 32) as u32, n32, true);
        sum = black_box(sum.wrapping_add(u64::from(a)).wrapping_add(u64::from(b)));
    }
    sum
}

/// Lemire on `word`, redrawing the chosen half of fresh words until one is accepted.
#[inline(always)]
fn loop_half(rng: &mut impl RngCore, mut word: u32, n: u32, high: bool) -> u32 {
    loop {
        if let Some(i) = below_from_word(word, n) {
            return i;
        }
        let w = rng.next_u64();
        word = if high { (w >> 32) as u32 } else { w as u32 };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_run_on_both_engines_at_every_size() {
        let cases = floor_cases();
        assert_eq!(cases.len(), 17);
        for (k, c) in cases.iter().enumerate() {
            // The first ten (the table before the filling rows) run on both engines.
            assert!(k >= 10 || runs_on(c, Engine::Levels), "{}", c.label);
            for &n in FLOOR_SIZES.iter().chain(&FLOOR_BIG_SIZES) {
                for engine in [Engine::Bins, Engine::Levels] {
                    if engine == Engine::Levels && !runs_on(c, engine) {
                        continue;
                    }
                    let spec = c.spec(engine, n, 10 * n);
                    spec.validate().unwrap();
                    assert!(
                        ballast_core::supported_engines(&spec).contains(&engine),
                        "{} n={n} {engine:?}",
                        c.label
                    );
                    assert_eq!(spec.m % c.granule(n), 0);
                }
            }
        }
    }

    #[test]
    fn floor_indices_are_in_range_and_cover() {
        // Sum of 2·20000 uniform indices in 0..7: mean 3 each, so the sum is near 120000;
        // a loop that returned 0 or ignored n would be far off (sd of the sum ≈ 400).
        let s = floor_loop(7, 20_000, 1);
        assert!((s as f64 - 120_000.0).abs() < 4_000.0, "{s}");
        let t = floor_loop_one_word(7, 20_000, 1);
        assert!((t as f64 - 120_000.0).abs() < 4_000.0, "{t}");
    }
}
