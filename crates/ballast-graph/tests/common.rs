//! Shared helpers of this crate's statistical tests: the chi-square helpers of
//! `ballast-testkit` (significance level `ALPHA`), and the graph-specific tolerances.

#![allow(dead_code, unused_imports)]

pub use ballast_testkit::*;

/// Absolute tolerance of power-iteration spectral gaps against closed formulas on small
/// graphs (the estimate is an upper bound; it must also come this close from above).
pub const SPECTRAL_TOL: f64 = 1e-3;

/// Slack for the "estimate is an upper bound" check (floating-point rounding only).
pub const ROUNDING: f64 = 1e-9;
