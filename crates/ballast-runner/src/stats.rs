//! Aggregation over runs: mean, standard error and the empirical distribution of
//! integer-rounded values.
//!
//! This module is a stable interface shared with the `ballast` command line
//! (`ballast simulate`).

use std::collections::BTreeMap;

use serde::Serialize;

/// How a real value (a gap such as `12.3`) is rounded to an integer for the empirical
/// distribution.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rounding {
    /// Round up (`12.3 → 13`, `12.0 → 12`): the convention of `ballast simulate` and of the
    /// noise22 tables.
    #[default]
    Ceil,
    /// Round down (`12.7 → 12`).
    Floor,
}

impl Rounding {
    /// Rounds one value.
    pub fn apply(self, v: f64) -> i64 {
        match self {
            Self::Ceil => v.ceil() as i64,
            Self::Floor => v.floor() as i64,
        }
    }

    /// `"ceil"` or `"floor"`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ceil => "ceil",
            Self::Floor => "floor",
        }
    }
}

/// Summary of one statistic over independent runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Sample mean.
    pub mean: f64,
    /// Standard error of the mean: sample standard deviation (divisor `runs − 1`) over
    /// `sqrt(runs)`; 0 for a single run.
    pub stderr: f64,
    /// Sample standard deviation (divisor `runs − 1`; 0 for a single run).
    pub sd: f64,
    /// Number of runs.
    pub runs: usize,
    /// The rounding rule used for [`Summary::distribution`].
    pub rounding: Rounding,
    /// Empirical distribution: rounded value → fraction of runs (fractions sum to 1).
    pub distribution: BTreeMap<i64, f64>,
}

/// The two-sided 95 % confidence interval of a mean from its standard error over `runs`
/// independent values: `mean ± t · stderr` with `t` the 0.975 quantile of Student's t with
/// `runs − 1` degrees of freedom (2.064 for 25 runs, 1.984 for 100). `None` for fewer than
/// two runs or a standard error that is not finite (nothing to say). For a distribution's
/// percentages it is the normal-approximation interval of a proportion with the same
/// quantile; for the time averages of the dynamic items, the batch-means standard error's.
///
/// ```
/// let (lo, hi) = ballast_runner::stats::ci95(10.0, 1.0, 25).unwrap();
/// assert!((hi - 10.0 - 2.0639).abs() < 1e-4 && (10.0 - lo - 2.0639).abs() < 1e-4);
/// assert_eq!(ballast_runner::stats::ci95(10.0, 1.0, 1), None);
/// ```
pub fn ci95(mean: f64, stderr: f64, runs: usize) -> Option<(f64, f64)> {
    if runs < 2 || !stderr.is_finite() || !mean.is_finite() {
        return None;
    }
    let t = t975(runs - 1);
    Some((mean - t * stderr, mean + t * stderr))
}

/// The 0.975 quantile of Student's t with `df` degrees of freedom: statrs' inversion up to
/// 200 degrees of freedom; beyond, where that inversion becomes slow (pooled samples reach
/// millions), the Cornish–Fisher expansion in 1/df around the normal quantile, whose error
/// there is below 1e-9.
fn t975(df: usize) -> f64 {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    if df <= 200 {
        return StudentsT::new(0.0, 1.0, df as f64).map_or(f64::NAN, |t| t.inverse_cdf(0.975));
    }
    let z: f64 = 1.959_963_984_540_054;
    let v = df as f64;
    let (z3, z5, z7) = (z.powi(3), z.powi(5), z.powi(7));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v * v * v)
}

/// Summarises the per-run values of one statistic.
///
/// ```
/// use ballast_runner::stats::{summarize, Rounding};
/// let s = summarize(&[2.0, 2.5, 3.0, 3.0], Rounding::Ceil);
/// assert_eq!(s.mean, 2.625);
/// assert_eq!(s.runs, 4);
/// assert_eq!(s.distribution.get(&2), Some(&0.25));
/// assert_eq!(s.distribution.get(&3), Some(&0.75));
/// ```
pub fn summarize(values: &[f64], rounding: Rounding) -> Summary {
    let runs = values.len();
    let mean = if runs == 0 { f64::NAN } else { values.iter().sum::<f64>() / runs as f64 };
    let sd = if runs < 2 {
        0.0
    } else {
        let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
        (ss / (runs - 1) as f64).sqrt()
    };
    let stderr = if runs == 0 { f64::NAN } else { sd / (runs as f64).sqrt() };
    let mut counts: BTreeMap<i64, usize> = BTreeMap::new();
    for &v in values {
        *counts.entry(rounding.apply(v)).or_default() += 1;
    }
    let distribution = counts.into_iter().map(|(k, c)| (k, c as f64 / runs as f64)).collect();
    Summary { mean, stderr, sd, runs, rounding, distribution }
}

#[cfg(test)]
mod tests {
    use super::*;
    use approx::assert_relative_eq;

    /// The expansion used beyond 200 degrees of freedom agrees with the exact inversion where
    /// both are cheap, and tends to the normal quantile.
    #[test]
    fn t_quantile_expansion_matches_the_inversion() {
        use statrs::distribution::{ContinuousCDF, StudentsT};
        for df in [201usize, 400, 1000] {
            let exact = StudentsT::new(0.0, 1.0, df as f64).unwrap().inverse_cdf(0.975);
            assert!((t975(df) - exact).abs() < 1e-8, "df {df}: {} vs {exact}", t975(df));
        }
        assert_relative_eq!(t975(24), 2.063_898_561_628_021, epsilon = 1e-9);
        assert!((t975(10_000_000) - 1.959_963_984_540_054).abs() < 1e-6);
    }

    #[test]
    fn mean_stderr_distribution() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0], Rounding::Floor);
        assert_relative_eq!(s.mean, 2.5);
        assert_relative_eq!(s.sd, (5.0f64 / 3.0).sqrt());
        assert_relative_eq!(s.stderr, (5.0f64 / 3.0).sqrt() / 2.0);
        assert_eq!(s.distribution.len(), 4);
        let one = summarize(&[7.2], Rounding::Ceil);
        assert_eq!((one.stderr, one.distribution.get(&8)), (0.0, Some(&1.0)));
        let f = summarize(&[7.2, 7.9], Rounding::Floor);
        assert_eq!(f.distribution.get(&7), Some(&1.0));
    }
}
