//! Named tolerances of the statistical checks (tests and reports), with their reasons. Every
//! check is seeded, so a test either always passes or always fails; the levels say how
//! surprising a failure would be for a correct implementation.

/// Critical value of Student's t with 19 degrees of freedom at two-sided α = 0.001
/// (`t_{0.9995, 19}` = 3.883): a time average compared with an exact value, using the
/// batch-means standard error from 20 batches (the standard error is itself estimated from 20
/// batch means, hence t with 19 degrees of freedom rather than the normal 3.29).
pub const T19_ALPHA_001: f64 = 3.883;

/// Two-sided α = 0.001 normal critical value, for differences whose standard error is known
/// or estimated from many degrees of freedom (for example, the verdicts of the item reports).
pub const Z_ALPHA_001: f64 = 3.2905;

/// Allowance for the finite-`n` bias of the RBB empty-bin fraction against its large-`n`
/// limit `√(k² + 1) − k`, as a multiple of `1/n`. The published means sit about `0.25/n`
/// below the limit (0.4117 vs 0.41421 at n = 100, 0.4140 at n = 1000, k = 1); we allow twice
/// that, `0.5/n`, on top of the sampling error.
pub const RBB_EMPTY_BIAS_TIMES_N: f64 = 0.5;

/// Relative tolerance of the numerics in [`crate::theory`] (sums of positive terms in `f64`).
pub const NUMERIC_REL: f64 = 1e-9;
