//! # ballast-dynamic
//!
//! Round-based balls-into-bins processes with departures
//! (`docs/processes.md#processes-with-departures`):
//!
//! - **leaky bins** ([`LeakyBins`]; Berenbrink, Friedetzky, Kling, Mallmann-Trenn, Nagel,
//!   Wastell, "Self-stabilizing balls & bins in batches", PODC 2016; Algorithmica 2018 as
//!   "The power of leaky bins"): each round `A` balls arrive (`A ~ Binomial(n, λ)` by default,
//!   `Poisson(λn)` or the fixed `⌊λn⌋` as options); each chooses a bin by Greedy\[d\] (d
//!   uniform samples, a least loaded one, random ties) **on the loads at the start of the
//!   round** (a batch: all decisions read the frozen loads, the allocations land together at
//!   the round end); then every non-empty bin deletes one ball. The system starts empty.
//! - **repeated balls-into-bins** ([`Rbb`]; Becchetti, Clementi, Natale, Pasquale, Posta
//!   2015; Los & Sauerwald, "Tight Bounds for Repeated Balls-into-Bins", STACS 2023, arXiv
//!   2203.12400): `m` balls, uniform start (`m mod n` bins get one extra ball); each round
//!   every non-empty bin releases one ball and each released ball is re-thrown uniformly
//!   (One-Choice) or, as an option, by Greedy\[d\] ([`RethrowView`] says which loads the
//!   re-throws see).
//! - **infinite Azar process** ([`InfiniteAzar`]): each step deletes a ball chosen uniformly
//!   among the *balls* (so a bin is hit with probability proportional to its load), then
//!   inserts one ball by Greedy\[d\] on the current loads.
//! - **deletions** ([`Deletions`]): one step at a time, a [`Workload`] says insert or delete;
//!   random deletions (Berenbrink, Friedetzky, Kling, Nagel, arXiv 2510.14798: insert by
//!   Greedy\[2\] with probability β(t), else delete from a uniform non-empty bin) and
//!   insert/delete workloads (a pattern or a schedule file; Greedy\[d\], (1+β) or One-Choice;
//!   uniform-ball, uniform-bin or oldest-first deletions; optional reinsertion of deleted
//!   balls with their own choices, after Bansal & Kuszmaul, FOCS'22, arXiv 2205.06558).
//!
//! All of them report per round ([`RoundMetrics`]) the max load, the total load and the number
//! of empty bins, observed **at the end of the round** (after allocations and deletions), and
//! from these the discrepancy (max − current average) and the overload (max − highest average
//! so far).
//! [`Tracker`] turns these into time averages after a burn-in, the distribution of the max
//! load over rounds, and batch-means standard errors with two mixing diagnostics (the drift
//! between the two halves of the run and the lag-1 autocorrelation of the batch means).
//!
//! ```
//! use ballast_core::sim_rng;
//! use ballast_dynamic::{simulate, DynamicSpec, Horizon, RbbConfig};
//!
//! // RBB with n = 1000 bins and m = 1000 balls: about √2 − 1 ≈ 41 % of the bins are empty.
//! let spec = DynamicSpec::Rbb(RbbConfig::one_choice(1000, 1000));
//! let s = simulate(&spec, &Horizon::new(200, 2000), &mut sim_rng(1)).unwrap();
//! assert!((s.empty_fraction().mean - 0.4142).abs() < 0.01);
//! ```
//!
//! ## Cost per round
//!
//! Leaky bins and RBB keep their loads in a [`DynLoads`]: the list of non-empty bins,
//! compacted during the release pass (bins that become empty drop out in the same sweep), so
//! departures touch only the non-empty bins; the max load as a running maximum, which is
//! exact because a round-wide release lowers the max by exactly one and insertions only raise
//! it; and the number of empty bins as `n` minus the list length. A round costs
//! `O(arrivals·d + non-empty bins)`, never a scan of all `n` bins, with branch-free inner
//! loops. The exception is One-Choice RBB with `m >= n/2`, where at least 38 % of the bins
//! are non-empty in stationarity (`1 − (sqrt(k² + 1) − k)` at `k = m/n`): there a
//! [`DenseLoads`] (a plain vector, vectorised passes over `n`) is faster and follows the same
//! draws to the same loads. The infinite Azar process and the deletion models delete from arbitrary bins, so their
//! [`LevelLoads`] keeps a level
//! histogram (bins per load): the max falls by one exactly when its level empties, and the
//! empty bins are level 0. It keeps one entry per ball (the ball's bin) in a vector, so
//! deleting a uniformly random ball is one uniform index plus a swap-remove: O(d) per step.
//!
//! ## The RBB empty-bin fraction: √(k² + 1) − k
//!
//! Los & Sauerwald (STACS 2023, arXiv 2203.12400, Section 6) observe that the stationary
//! fraction of empty bins of RBB with `m = k·n` balls is close to `√(k² + 1) − k`. A
//! single-bin queue argument gives this as the large-`n` limit:
//!
//! 1. Let `f` be the stationary fraction of non-empty bins (observed at round ends). Each
//!    round `f·n` balls are released and re-thrown uniformly, so a fixed bin receives
//!    `Binomial(f·n, 1/n)` balls, which for large `n` is `Poisson(f)`, and (mean-field)
//!    independent of its own load.
//! 2. One bin's load then follows `Q' = Q − 1{Q > 0} + A` with `A ~ Poisson(f)`: the release
//!    comes first, the re-thrown balls arrive after it, and `Q` is observed after arrivals.
//! 3. Stationarity of `E[Q]` gives `P(Q > 0) = E[A] = f` (consistent). Stationarity of
//!    `E[Q²]`: with `(Q − 1{Q>0})² = Q² − 2Q + 1{Q>0}` and `A` independent of `Q`,
//!    `0 = −2E[Q] + f + 2f(E[Q] − f) + E[A²]`, so `2(1 − f)E[Q] = f − 2f² + E[A²]`. For
//!    Poisson arrivals `E[A²] = f + f²`, hence `E[Q] = f(2 − f) / (2(1 − f))`.
//! 4. Conservation fixes `E[Q] = m/n = k`: `2k(1 − f) = 2f − f²`, i.e.
//!    `f² − 2(1 + k)f + 2k = 0`, whose root in `[0, 1]` is `f = 1 + k − √(k² + 1)`. The
//!    empty fraction is `1 − f = √(k² + 1) − k` ([`theory::rbb_empty_fraction`]).
//!
//! At finite `n` the published values sit below the limit by about `0.25/n` (0.4117 at
//! `n = 100`, `k = 1`, against 0.41421); the tests allow for this with a stated bias bound.
//!
//! ## Leaky bins with d = 1: the single-queue mean
//!
//! With One-Choice the bins do not interact: a fixed bin receives `a` balls per round, with
//! `a ~ Binomial(n, λ/n)` for Binomial(n, λ) arrivals (each of the `n` potential balls
//! arrives with probability `λ` and picks the bin with probability `1/n`), exactly
//! `Poisson(λ)` for Poisson(λn) arrivals, and `Binomial(⌊λn⌋, 1/n)` for fixed arrivals;
//! rounds are independent. Our order is *arrivals, then one departure*, observed at the round
//! end, so one bin follows the Lindley recursion `Q' = max(Q + a − 1, 0)` (a discrete-time
//! M/D/1-type queue). Write `R = Q + a` (the load after arrivals, before the departure); then
//! `R' = R − 1{R > 0} + a'` is the recursion of step 2 above with `E[a] = λ`, so
//! `P(R > 0) = λ` and `2(1 − λ)E[R] = λ − 2λ² + E[a²]`. Since `Q = R − 1{R > 0}`,
//!
//! ```text
//! E[Q] = E[R] − λ = E[a(a − 1)] / (2(1 − λ)),
//! ```
//!
//! which is `λ² / (2(1 − λ))` for Poisson(λ) per-bin arrivals, `λ²(1 − 1/n) / (2(1 − λ))`
//! for Binomial(n, λ) total arrivals, and `a₀(a₀ − 1) / (2n²(1 − a₀/n))` for fixed
//! `a₀ = ⌊λn⌋` ([`theory::leaky_one_choice_mean_load`]). (Observed after arrivals and before
//! the departure the mean would be `E[R] = E[Q] + λ`, i.e. `λ + λ²/(2(1 − λ))` for Poisson:
//! the two conventions differ by exactly λ.) Each bin's marginal is exactly this chain, so
//! the stationary mean system load is `n·E[Q]` without any large-`n` approximation.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod azar;
mod deletion_levels;
mod deletions;
mod error;
mod greedy;
mod leaky;
mod metrics;
mod rbb;
pub mod registry;
mod run;
mod start;
mod state;
pub mod theory;
pub mod tolerance;
pub mod workload;

pub use azar::{AzarConfig, InfiniteAzar};
pub use deletion_levels::LevelDeletions;
pub use deletions::{level_refusal, DeletionConfig, DeletionLaw, Deletions, Insertion};
pub use error::Error;
pub use greedy::{greedy, greedy_reference};
pub use leaky::{Arrivals, LeakyBins, LeakyConfig, DENSE_LAMBDA};
pub use metrics::{Horizon, MetricSummary, RoundMetrics, RoundProcess, RunSummary, Tracker};
pub use rbb::{Rbb, RbbConfig, RethrowView};
pub use run::{simulate, simulate_observed, simulate_process, DynamicSpec};
pub use state::{uniform_loads, DenseLoads, DynLoads, LevelLoads};
pub use workload::{Beta, Workload};
