//! The allocation-vector process (`docs/processes.md#rank_vector`): a probability vector
//! `p_1 … p_n` over ranks, rank 1 the most loaded bin and rank n the least loaded, ties in
//! load in a uniformly random order; each ball goes to the bin at a rank drawn from `p`.
//! This is the form in which the batched papers define a process once for every setting
//! (Two-Choice is `p_i = (2i − 1)/n²`).
//!
//! The vector is given up to a positive factor (each entry finite and `>= 0`, the sum
//! positive) and divided by its sum when the spec is built; the spec keeps the cumulative
//! sums, and a ball costs one uniform double and a binary search for its rank.
//!
//! Engines: on the level engine's sorted view (lightest first) rank `r` is position `n − r`,
//! so a ball costs O(log n) (the default under `auto` for sequential unit-weight runs). The
//! bin engine keeps no ranks: it finds the `r`-th largest load by selection and a uniform bin
//! of that load by a scan, O(n) per ball, exact for every weight law and in batches (ranks
//! of the loads frozen at the batch start). The level engine's batch step has no law for it.

use rand::RngCore;

use crate::loads::LoadState;
use crate::params::ParamError;
use crate::process::{Ctx, Placement, Ranks, Rule};
use crate::rng::below;
use crate::spec::{ProcessSpec, RunSpec};

/// Largest number of entries of a rank vector (one per bin): the cumulative sums take 8
/// bytes each.
pub const MAX_LEN: usize = 1 << 24;

/// The cumulative sums of `p` divided by its sum (last entry exactly 1), or why `p` is not a
/// probability vector up to a factor.
pub fn normalise(p: &[f64]) -> Result<Vec<f64>, String> {
    if p.is_empty() {
        return Err("an empty vector (it needs one entry per bin)".into());
    }
    if p.len() > MAX_LEN {
        return Err(format!("{} entries, more than {MAX_LEN}", p.len()));
    }
    if let Some((i, x)) = p.iter().enumerate().find(|(_, x)| !(x.is_finite() && **x >= 0.0)) {
        return Err(format!("entry {} (rank {}) is {x}; expected a finite number >= 0", i, i + 1));
    }
    let total: f64 = p.iter().sum();
    if !(total.is_finite() && total > 0.0) {
        return Err(format!("the entries sum to {total}; expected a positive finite sum"));
    }
    let mut acc = 0.0;
    let mut cum: Vec<f64> = p
        .iter()
        .map(|x| {
            acc += x / total;
            acc
        })
        .collect();
    if (acc - 1.0).abs() > 1e-9 {
        return Err(format!("after division by their sum the entries sum to {acc}, not 1"));
    }
    *cum.last_mut().expect("non-empty") = 1.0;
    Ok(cum)
}

/// The rank (1-based) of the next ball: the first `r` with `cum[r−1] > u`, `u` uniform in
/// `[0, 1)` from 53 random bits.
#[inline]
fn draw_rank<R: RngCore + ?Sized>(cum: &[f64], rng: &mut R) -> u64 {
    let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
    let r = cum.partition_point(|&c| c <= u);
    r.min(cum.len() - 1) as u64 + 1
}

/// The rule on the level engine's sorted view: rank `r` is position `n − r`.
#[derive(Clone, Debug)]
pub struct SortedRankVector<'a> {
    /// Cumulative probabilities, rank 1 first.
    pub cum: &'a [f64],
}

impl Rule for SortedRankVector<'_> {
    #[inline]
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        ctx.samples += 1;
        let r = draw_rank(self.cum, rng);
        Placement::one(s.n() - r as usize)
    }
}

/// The rule on the bin engine: the `r`-th largest load by selection, then a uniform bin of
/// that load (random order of ties), O(n) per ball.
#[derive(Clone, Debug)]
pub struct BinRankVector<'a> {
    /// Cumulative probabilities, rank 1 first.
    pub cum: &'a [f64],
}

impl Rule for BinRankVector<'_> {
    fn place<S: LoadState, R: RngCore + ?Sized>(
        &mut self,
        s: &S,
        _r: &Ranks<S::Load>,
        rng: &mut R,
        ctx: &mut Ctx,
    ) -> Placement {
        ctx.samples += 1;
        let r = draw_rank(self.cum, rng);
        let (x, _) = s.rank_cut(r);
        let ties = (0..s.n()).filter(|&i| s.load(i) == x).count() as u64;
        let k = below(rng, ties) as usize;
        let bin = (0..s.n()).filter(|&i| s.load(i) == x).nth(k).expect("k < ties");
        Placement::one(bin)
    }
}

/// The front ends' check of a rank vector against the run (part of
/// [`crate::registry::check_run`]): one entry per bin.
pub fn check(spec: &RunSpec) -> Result<(), ParamError> {
    if let ProcessSpec::RankVector { cum } = &spec.process {
        if cum.len() as u64 != spec.n {
            return Err(ParamError::at(
                "p",
                format!(
                    "process `rank_vector`: p has {} entries but the run has n = {} bins; \
                     expected one probability per rank 1..=n",
                    cum.len(),
                    spec.n
                ),
            ));
        }
    }
    Ok(())
}
