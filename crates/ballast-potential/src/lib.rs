//! # ballast-potential
//!
//! The potential functions of the balanced-allocation analyses
//! (`docs/metrics.md#potentials`) over the normalised loads `y_i = x_i − W/n`:
//!
//! | potential | formula | spec text |
//! |---|---|---|
//! | exponential | `Φ_α = Σ_i e^{α y_i}` | `exponential:alpha=0.1` |
//! | hyperbolic cosine | `Γ_α = Σ_i (e^{α y_i} + e^{−α y_i})` | `hyperbolic:alpha=0.05` |
//! | quadratic | `Υ = Σ_i y_i²` | `quadratic` |
//! | absolute value | `Δ = Σ_i \|y_i\|` | `absolute` |
//!
//! [`Potentials`] tracks any set of them along a run of the bin engine as an
//! [`Observer`](ballast_core::Observer), sequential or batched, unit or weighted balls, in
//! O(1) per ball (amortised; the module [`track`] says exactly what is stored and why it stays
//! accurate over 10⁹ balls). [`recompute`] evaluates them exactly in O(n). [`Recorder`]
//! samples them every `k` balls or at every observation point into a [`Series`] and/or
//! [`Drift`] statistics (mean change conditional on the level), both printable as CSV.
//!
//! ```
//! use ballast_core::{sim_rng, simulate_observed, ProcessSpec, RunSpec};
//! use ballast_potential::{recompute, PotentialSpec, Potentials};
//!
//! let specs = PotentialSpec::parse_all(["hyperbolic:alpha=0.1", "quadratic", "absolute"])?;
//! let mut pot = Potentials::new(&specs)?;
//! // Two-Choice, n = 1000, 10⁵ balls in batches of b = n.
//! let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 1000, 100_000).batched(1000);
//! simulate_observed(&spec, &mut sim_rng(7), &mut pot)?;
//! let gamma = pot.value(0);
//! assert!(gamma > 2000.0 && gamma < 3000.0); // Γ ≥ 2n, and O(n) for Two-Choice
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod above;
pub mod drift;
mod error;
mod exact;
mod levels;
pub mod series;
mod spec;
mod sum;
pub mod tolerance;
pub mod track;

pub use drift::{Drift, DriftRow};
pub use error::Error;
pub use exact::{normalized_loads, recompute, recompute_ln, Exact};
pub use series::{Recorder, Sampling, Series};
pub use spec::{
    PotentialKind, PotentialSpec, ALPHA_ALLOWED, ALPHA_MAX, POTENTIALS, POTENTIAL_NAMES,
};
pub use track::{Potentials, TrackingStats};
