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
//!
//! # What is stable
//!
//! The root of the crate is its API: the specs ([`RunSpec`], [`ProcessSpec`], [`Setting`],
//! [`Weights`], [`Start`], [`Sampling`], …), the runs ([`simulate`] and its variants,
//! [`Observer`], [`RunOutcome`], [`LoadState`]), the engine choice ([`resolve_engine`]),
//! seeds ([`sim_rng`], [`derive_seed`]), and the modules [`registry`] (the declarations every
//! front end reads), [`process`] (the [`process::Rule`] trait, to write a rule of one's own and
//! run it with [`engine::run_rule`]), [`level`] (the level engine's entry points), [`start`],
//! [`sampling`], [`loads`], [`formula`], [`recovery`], [`input`] and [`rng`]. Modules and
//! items hidden from these docs (the rule implementations of the catalogue, the level
//! engine's chunk and occupancy steps, the `AUTO_*` and `CHUNK_*` tuning constants) are public
//! for the workspace's other crates, tests and benches only and change without notice.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[doc(hidden)]
pub mod binomial;
mod choice;
#[doc(hidden)]
pub mod czumaj;
#[doc(hidden)]
pub mod delay;
pub mod engine;
mod error;
pub mod formula;
#[doc(hidden)]
pub mod formula_threshold;
mod histogram;
pub mod input;
pub mod item;
#[doc(hidden)]
pub mod k_threshold;
pub mod level;
pub mod loads;
mod observe;
mod outcome;
mod params;
pub mod process;
#[doc(hidden)]
pub mod rank_vector;
pub mod recovery;
pub mod registry;
pub mod rng;
#[doc(hidden)]
pub mod rule_formula;
pub mod sampling;
mod spec;
pub mod start;
#[doc(hidden)]
pub mod weighted;

pub use choice::{resolve_engine, supported_engines};
pub use engine::{simulate, simulate_ball_by_ball, simulate_observed, simulate_seeded};
pub use error::Error;
pub use loads::{gap_unit, LoadState, UnitLoads, WeightSampler, WeightedLoads};
pub use observe::Observer;
pub use outcome::RunOutcome;
#[doc(hidden)]
pub use process::distinct;
pub use rng::{derive_seed, sim_rng, SimRng};
pub use sampling::{AliasTable, Sampling};
pub use spec::{DelayMode, Engine, ProcessSpec, RunSpec, Setting, Stop, Tau, TieBreak, Weights};
pub use start::Start;
