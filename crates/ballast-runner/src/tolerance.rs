//! Named tolerances of the reference comparison (one place, so the verdict rule is explicit).

/// A point whose |z| exceeds this is an outlier (two-sided p ≈ 0.0027 under agreement).
pub const Z_OUTLIER: f64 = 3.0;

/// Outliers a series may have and still agree: `max(1, ceil(OUTLIER_FRACTION · points))`.
pub const OUTLIER_FRACTION: f64 = 0.01;

/// A series has a systematic offset when |mean z| · sqrt(points) exceeds this (the mean of k
/// independent standard normals has sd 1/sqrt(k)).
pub const Z_MEAN_OFFSET: f64 = 3.0;

/// Outliers allowed among `points` compared points.
pub fn allowed_outliers(points: usize) -> usize {
    ((OUTLIER_FRACTION * points as f64).ceil() as usize).max(1)
}
