//! Summaries over runs: mean, standard error, and the empirical distribution of a statistic
//! rounded up to an integer.
//!
//! Private to the CLI; computed sequentially in run order so the result does not depend on
//! how runs were scheduled.

use std::collections::BTreeMap;

use serde::Serialize;

/// Mean, standard error and distribution of one per-run statistic.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Sample mean.
    pub mean: f64,
    /// Standard error of the mean (sample standard deviation / sqrt(runs)); 0 for one run.
    pub stderr: f64,
    /// Fraction of runs at each value rounded **up** (`ceil`), keyed by that integer.
    /// Serialised with string keys in increasing numeric order.
    pub distribution: BTreeMap<i64, f64>,
}

/// Summarises `values` (one per run, in run order). Panics on an empty slice.
pub fn summarize(values: &[f64]) -> Summary {
    assert!(!values.is_empty(), "summarize needs at least one value");
    let k = values.len() as f64;
    let mean = values.iter().sum::<f64>() / k;
    let stderr = if values.len() > 1 {
        let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
        (ss / (k - 1.0)).sqrt() / k.sqrt()
    } else {
        0.0
    };
    let mut counts: BTreeMap<i64, u64> = BTreeMap::new();
    for v in values {
        *counts.entry(v.ceil() as i64).or_default() += 1;
    }
    let distribution = counts.into_iter().map(|(g, c)| (g, c as f64 / k)).collect();
    Summary {
        mean,
        stderr,
        distribution,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_small_sample() {
        let s = summarize(&[1.0, 2.5, 3.0, 2.0]);
        assert_eq!(s.mean, 2.125);
        // sample sd = sqrt(((1.125)^2 + 0.375^2 + 0.875^2 + 0.125^2) / 3)
        let sd = ((1.125f64.powi(2) + 0.375f64.powi(2) + 0.875f64.powi(2) + 0.125f64.powi(2))
            / 3.0)
            .sqrt();
        assert!((s.stderr - sd / 2.0).abs() < 1e-12);
        let d: Vec<(i64, f64)> = s.distribution.into_iter().collect();
        assert_eq!(d, vec![(1, 0.25), (2, 0.25), (3, 0.5)]);
        assert_eq!(summarize(&[4.0]).stderr, 0.0);
    }

    #[test]
    fn distribution_keys_sort_numerically_in_json() {
        let s = summarize(&[2.0, 10.0]);
        let j = serde_json::to_string(&s.distribution).unwrap();
        assert_eq!(j, r#"{"2":0.5,"10":0.5}"#);
    }
}
