//! # ballast-core
//!
//! Balls-into-bins allocation processes (One-Choice, d-Choice, (1+β), Quantile, thresholds,
//! Mean-Thinning) in the sequential and batched settings, with unit or exponential weights,
//! simulated exactly by the *bin engine* (one load per bin) or, for exchangeable unit-weight
//! processes, the *level engine* ([`level`]: bin counts per load level, O(levels) memory and
//! per-batch cost independent of n). [`RunSpec::engine`] chooses; `auto` (the default) picks
//! the level engine where it is exact and faster ([`resolve_engine`]). Within the bin engine,
//! large weighted batches go a batch at a time ([`weighted`]), with the same law.
//!
//! A run is described by plain data ([`RunSpec`]); [`simulate`] matches on it once and then
//! runs a monomorphised loop. Randomness is always passed in, so a run is reproducible from
//! its seed alone.
//!
//! ```
//! use ballast_core::{simulate, sim_rng, ProcessSpec, RunSpec};
//!
//! // Two-Choice, n = 1000 bins, m = 100 000 balls.
//! let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 1000, 100_000);
//! let out = simulate(&spec, &mut sim_rng(7)).unwrap();
//! assert!(out.final_gap > 0.0 && out.final_gap < 10.0);
//!
//! // (1+β) in batches of b = 10 n, observed at every batch end.
//! let spec = RunSpec::new(ProcessSpec::OnePlusBeta { beta: 0.5 }, 1000, 100_000).batched(10_000);
//! let out = simulate(&spec, &mut sim_rng(7)).unwrap();
//! assert!(out.max_gap >= out.final_gap);
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod binomial;
mod choice;
pub mod czumaj;
pub mod delay;
pub mod engine;
mod error;
pub mod formula;
pub mod formula_threshold;
mod histogram;
pub mod input;
pub mod k_threshold;
pub mod level;
pub mod loads;
mod observe;
mod outcome;
mod params;
pub mod process;
pub mod rank_vector;
pub mod recovery;
pub mod registry;
pub mod rng;
pub mod sampling;
mod spec;
pub mod start;
pub mod weighted;

pub use choice::{resolve_engine, supported_engines};
pub use engine::{simulate, simulate_ball_by_ball, simulate_observed, simulate_seeded};
pub use error::Error;
pub use loads::{gap_unit, LoadState, UnitLoads, WeightSampler, WeightedLoads};
pub use observe::Observer;
pub use outcome::RunOutcome;
pub use process::distinct;
pub use rng::{derive_seed, sim_rng, SimRng};
pub use sampling::{AliasTable, Sampling};
pub use spec::{DelayMode, Engine, ProcessSpec, RunSpec, Setting, Stop, Tau, TieBreak, Weights};
pub use start::Start;
