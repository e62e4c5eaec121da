//! Named tolerances: the accuracy the incremental tracker promises against the exact O(n)
//! recomputation ([`crate::recompute`]), and the statistical thresholds of the tests. Each
//! constant says why it has its value.
//!
//! Exponential potentials are compared through their logarithms (an absolute difference of
//! logarithms is a relative difference of values, and stays meaningful beyond `f64`);
//! quadratic and absolute potentials through `|a − b| <= tol · max(|b|, 1)` (loads are
//! O(1) units, so 1 is the natural floor when the potential itself is near 0).

/// Unit balls, quadratic and absolute potentials: the tracker computes `nΥ` and `nΔ` as
/// exact integers from the level histogram and rounds once; the recomputation sums `n`
/// rounded squares (or absolute values) with compensation. Both are within a few ulps of the
/// truth (measured: identical after 10⁷ balls); `1e-12` leaves three orders of magnitude.
pub const UNIT_EXACT_REL: f64 = 1e-12;

/// Unit balls, exponential potentials (difference of natural logarithms). The tracker
/// evaluates `Σ_ℓ c_ℓ e^{a(ℓ − q)}·e^{−a r/n}` from the exact level histogram at read time
/// (table entries within 1 ulp, compensated sum): nothing accumulates over the run. Both
/// sides round the exponent `a·y_i`, an absolute error of about `ε·|a y_i|` in the
/// logarithm, so the bound holds while `|α·y_i| <= 10⁵` (One-Choice with α = 4 after 10⁷
/// balls on 100 bins reaches ≈ 4000 and shows `5e-13`).
pub const UNIT_EXP_LN: f64 = 1e-10;

/// Weighted balls, quadratic and absolute potentials. Each ball reads `y_j` from the state,
/// whose own error is about `ε·1024` (loads are stored relative to a base that is moved
/// every 1024 units of average load); the tracker adds `2w·y_j` (quadratic) or keys
/// `y_j + d` (absolute) with compensated sums, and recomputes everything every
/// `≈ min(16, 2/α)·n` balls. Accumulated over such a window the error stays below
/// `1e-11` relative for the sizes tested; `1e-9` is the stated bound.
pub const REAL_REL: f64 = 1e-9;

/// Weighted balls, exponential potentials (difference of natural logarithms). Terms are
/// `e^{a·key − L}·(1 − e^{−a w})`, each with a relative error of a few `ε·|a·key|`, summed
/// with compensation; for `a < 0` the sum shrinks by at most `e^{2}` between
/// recomputations, so relative errors grow by at most that factor. Measured: `≤ 1e-12`
/// after 10⁷ balls; `1e-9` is the stated bound.
pub const REAL_EXP_LN: f64 = 1e-9;

/// Critical value of the two-sided z-tests in the statistical tests: `|z| > 4` has
/// probability `6.3e-5` under the null hypothesis, so a seeded test fails by chance with
/// at most that probability per checked quantity.
pub const Z_CRITICAL: f64 = 4.0;
