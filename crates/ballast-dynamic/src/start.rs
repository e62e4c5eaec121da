//! Start states of the round-based models (`docs/settings.md#start-states`): the core
//! registry's starts (`ballast_core::registry::STARTS`: `empty`, `uniform`, `one_bin`,
//! `random`, `file`) as the loads before the first round.
//!
//! Without a start every model begins as it always did (RBB and the infinite Azar process
//! from the uniform load vector, leaky bins from empty bins), drawing nothing. With one, the
//! loads are [`ballast_core::Start::unit_loads`] of the start, drawn from the run's
//! generator before the first round for a `random` start only. RBB and the infinite Azar
//! process keep their `m` balls for ever, so their start must hold exactly `m` balls; leaky
//! bins take any start.

use ballast_core::Start;
use rand::Rng;

use crate::error::Error;

/// Checks a start for a model with `n` bins that keeps `m` balls (`None`: a model whose
/// number of balls changes, leaky bins): one load per bin for a `file` start, 32-bit loads,
/// and exactly `m` balls where the model keeps them.
pub(crate) fn check_start(start: &Start, n: usize, m: Option<u64>) -> Result<(), Error> {
    if let Start::Loads(v) = start {
        if v.len() != n {
            return Err(Error::invalid(
                "start",
                format!("{} loads for n = {n} bins", v.len()),
                "one load per bin (as many loads as n)",
            ));
        }
    }
    let max = start.max_load_bound();
    if max > u64::from(u32::MAX) {
        return Err(Error::invalid("start", format!("a load of {max}"), "loads <= 2^32 - 1"));
    }
    if let Some(m) = m {
        let balls = start.balls(n as u64);
        if balls != m {
            return Err(Error::invalid(
                "start",
                format!("`{}` holding {balls} balls with m = {m}", start.name()),
                "a start holding exactly m balls (rbb and infinite_azar keep their m balls; \
                 without `start` they begin from the uniform load vector)",
            ));
        }
    }
    Ok(())
}

/// The loads before the first round: `start`'s (drawn from `rng` for `random` only), or
/// `default` without a start (no draws).
pub(crate) fn initial_loads<R: Rng + ?Sized>(
    start: Option<&Start>,
    n: usize,
    rng: &mut R,
    default: impl FnOnce() -> Vec<u32>,
) -> Vec<u32> {
    match start {
        Some(s) => s.unit_loads(n, rng),
        None => default(),
    }
}

/// A generator for the constructors without one: a `random` start asks it for words, and it
/// panics, since `new` of a model documents that it takes no `random` start.
pub(crate) struct NoDraws;

impl rand::RngCore for NoDraws {
    fn next_u32(&mut self) -> u32 {
        panic!("a `random` start draws from the run's generator: use the model's `starting`")
    }
    fn next_u64(&mut self) -> u64 {
        panic!("a `random` start draws from the run's generator: use the model's `starting`")
    }
    fn fill_bytes(&mut self, _dst: &mut [u8]) {
        panic!("a `random` start draws from the run's generator: use the model's `starting`")
    }
}
