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
//! [`Observer`], [`RunOutcome`], [`LoadState`]), the engine choice ([`resolve_engine`],
//! [`supported_engines`]), seeds ([`sim_rng`], [`derive_seed`], [`SimRng`]), errors
//! ([`Error`]), and two modules: [`registry`] (the declarations every front end reads, and
//! [`registry::register`] to add a kind) and [`item`] (a process of one's own: its rule, its
//! checks, its level-engine support). Everything hidden from these docs (the engines and
//! their routes, the catalogue's rules, load stores, formulas, start states, sampling laws,
//! the level engine's chunk and occupancy steps, the `AUTO_*` and `CHUNK_*` tuning
//! constants) is public for the workspace's other crates, tests and benches only and changes
//! without notice.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

#[doc(hidden)]
pub mod binomial;
pub mod capacity;
#[doc(hidden)]
pub mod capacity_loads;
mod choice;
mod churn;
mod crossover;
#[doc(hidden)]
pub mod czumaj;
mod def;
#[doc(hidden)]
pub mod delay;
mod dispatchers;
#[doc(hidden)]
pub mod engine;
mod error;
pub mod final_metrics;
#[doc(hidden)]
pub mod formula;
#[doc(hidden)]
pub mod formula_threshold;
mod histogram;
#[doc(hidden)]
pub mod input;
pub mod item;
#[doc(hidden)]
pub mod items;
#[doc(hidden)]
pub mod k_threshold;
mod kind;
mod kinds;
#[doc(hidden)]
pub mod level;
#[doc(hidden)]
pub mod loads;
mod observe;
mod outcome;
mod params;
#[doc(hidden)]
pub mod process;
#[doc(hidden)]
pub mod rank_vector;
#[doc(hidden)]
pub mod realloc;
#[doc(hidden)]
pub mod recovery;
pub mod registry;
#[doc(hidden)]
pub mod rng;
#[doc(hidden)]
pub mod rule_formula;
#[doc(hidden)]
pub mod sampling;
mod spec;
#[doc(hidden)]
pub mod start;
#[doc(hidden)]
pub mod weighted;
mod weights;
mod with_rule;

pub use capacity::Capacities;
pub use choice::{resolve_engine, supported_engines};
pub use engine::{simulate, simulate_ball_by_ball, simulate_observed, simulate_seeded};
pub use error::Error;
pub use final_metrics::FinalMetrics;
pub use loads::LoadState;
#[doc(hidden)]
pub use loads::{gap_unit, UnitLoads, WeightSampler, WeightedLoads};
pub use observe::Observer;
pub use outcome::RunOutcome;
#[doc(hidden)]
pub use process::distinct;
pub use rng::{derive_seed, sim_rng, SimRng};
#[doc(hidden)]
pub use sampling::AliasTable;
pub use sampling::Sampling;
pub use spec::{Assign, Churn, Dispatchers, JoinAt, Leaving, LeftBalls, CHURN, DISPATCHERS};
pub use spec::{DelayMode, Engine, ProcessSpec, RunSpec, Setting, Stop, Tau, TieBreak, Weights};
pub use start::Start;
