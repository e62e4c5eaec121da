//! `cargo xtask formulas [--check]`: the reference tables that are computed, not published,
//! written in the runner's reference format (`series, n, x, value, runs, source,
//! statistic`) so that items compare with them point by point:
//!
//! - `reference/redlich26_unfair_d_choice.csv`: the frozen-rank prediction of the mean sorted
//!   loads of Unfair d-Choice, m·((i/n)^d − ((i−1)/n)^d) for the i-th lightest bin, n = 100,
//!   m = 10⁶, d = 2, 3, 4 (series `d=<d>`, x = i).
//! - `reference/meanfield_two_choice.csv`: the fluid (mean-field) limit of the normalised
//!   load distribution of Two-Choice and (1+β), β = 0.5, from empty bins after m = k·n
//!   balls (series `<process> k=<k>`, x = load − k, value = the fraction of bins at that
//!   load), the same values repeated at every n of the item (the reference format is keyed
//!   by n).
//!
//! The fluid limit: s_i(t) = fraction of bins with load ≥ i at t = balls / n, s_0 = 1,
//! s_i(0) = 0 for i ≥ 1, and ds_i/dt = P(a ball lands on a bin of load i − 1):
//! s_{i−1}² − s_i² for Two-Choice, β(s_{i−1}² − s_i²) + (1 − β)(s_{i−1} − s_i) for (1+β).
//! Solved by the classical Runge–Kutta method (RK4) with step 2^−j, halving until two
//! successive solutions agree to [`TOLERANCE`] in every s_i, on levels 1..L with s_{L+1} = 0
//! and L doubled until s_L(t) < [`TAIL`] (the truncation then changes nothing at that
//! precision). Rows are written while the fraction is at least [`TAIL`].
//!
//! `--check` writes nothing and fails if a committed table differs from what the code
//! computes (a test does the same).

use std::path::Path;

use anyhow::{Context, Result};

/// Agreement of two successive step sizes, in every s_i.
pub(crate) const TOLERANCE: f64 = 1e-12;
/// Levels are added until the last one holds less than this fraction of bins.
pub(crate) const TAIL: f64 = 1e-30;
/// Runs written for a computed value: a formula has no sampling error, so its standard
/// error (the item's standard deviation over √runs) is negligible beside the item's own.
const EXACT_RUNS: u64 = 1_000_000_000_000;

/// The tables: (file under `reference/`, its text).
pub(crate) fn tables() -> Vec<(&'static str, String)> {
    vec![("redlich26_unfair_d_choice.csv", redlich()), ("meanfield_two_choice.csv", meanfield())]
}

/// Writes the tables under `root/reference/` or, with `check`, fails naming those that
/// differ from the committed files.
pub(crate) fn run(root: &Path, check: bool) -> Result<()> {
    let mut stale = Vec::new();
    for (file, text) in tables() {
        let path = root.join("reference").join(file);
        if check {
            let committed = std::fs::read_to_string(&path).unwrap_or_default();
            if committed != text {
                stale.push(file);
            }
        } else {
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            println!("{}", path.display());
        }
    }
    anyhow::ensure!(
        stale.is_empty(),
        "reference tables differ from their formulas (run `cargo xtask formulas`): {}",
        stale.join(", ")
    );
    Ok(())
}

const HEADER: &str = "series,n,x,value,runs,source,statistic\n";

/// The frozen-rank prediction for Unfair d-Choice at n = 100, m = 10⁶.
fn redlich() -> String {
    let (n, m) = (100u64, 1_000_000f64);
    let mut out = String::from(HEADER);
    for d in [2i32, 3, 4] {
        for i in 1..=n {
            let f = |k: u64| (k as f64 / n as f64).powi(d);
            let value = m * (f(i) - f(i - 1));
            out.push_str(&format!(
                "d={d},{n},{i},{value},{EXACT_RUNS},formula,frozen_rank_mean_sorted_load\n"
            ));
        }
    }
    out
}

/// The processes of the mean-field table: (series prefix, β of the (1+β) law; 1 is
/// Two-Choice).
const MEANFIELD: [(&str, f64); 2] = [("Two-Choice", 1.0), ("(1+beta) beta=0.5", 0.5)];
/// The items' n.
const MEANFIELD_N: [u64; 5] = [1_000, 10_000, 100_000, 1_000_000, 10_000_000];
/// Balls per bin, k = m/n.
const MEANFIELD_K: [u64; 2] = [1, 4];

/// The fluid limit of Two-Choice and (1+β) at every n and k of the item.
fn meanfield() -> String {
    let mut out = String::from(HEADER);
    for (name, beta) in MEANFIELD {
        for k in MEANFIELD_K {
            let s = fluid_limit(beta, k as f64);
            for n in MEANFIELD_N {
                for i in 0..s.len() {
                    let at = s[i] - s.get(i + 1).copied().unwrap_or(0.0);
                    if at < TAIL {
                        continue;
                    }
                    let x = i as i64 - k as i64;
                    out.push_str(&format!(
                        "{name} k={k},{n},{x},{at},{EXACT_RUNS},ode_rk4,fluid_limit_fraction_of_bins\n"
                    ));
                }
            }
        }
    }
    out
}

/// s_0..s_L at time `t` of the (1+β) fluid limit (β = 1: Two-Choice), to [`TOLERANCE`],
/// with L large enough that s_L < [`TAIL`].
pub(crate) fn fluid_limit(beta: f64, t: f64) -> Vec<f64> {
    let mut levels = 16;
    loop {
        let s = converged(beta, t, levels);
        if s[levels] < TAIL {
            return s;
        }
        levels *= 2;
    }
}

/// The solution on `levels` levels, halving the step until two agree to [`TOLERANCE`].
fn converged(beta: f64, t: f64, levels: usize) -> Vec<f64> {
    let mut steps = 16u64;
    let mut last = integrate(beta, t, levels, steps);
    loop {
        steps *= 2;
        let next = integrate(beta, t, levels, steps);
        let diff = last.iter().zip(&next).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        if diff < TOLERANCE {
            return next;
        }
        assert!(steps < 1 << 24, "the RK4 steps do not converge");
        last = next;
    }
}

/// RK4 with `steps` equal steps from 0 to `t`.
fn integrate(beta: f64, t: f64, levels: usize, steps: u64) -> Vec<f64> {
    let h = t / steps as f64;
    let mut s = vec![0.0; levels + 1];
    s[0] = 1.0;
    let add = |s: &[f64], k: &[f64], c: f64| -> Vec<f64> {
        s.iter().zip(k).map(|(a, b)| a + c * b).collect()
    };
    for _ in 0..steps {
        let k1 = derivative(beta, &s);
        let k2 = derivative(beta, &add(&s, &k1, h / 2.0));
        let k3 = derivative(beta, &add(&s, &k2, h / 2.0));
        let k4 = derivative(beta, &add(&s, &k3, h));
        for i in 1..=levels {
            s[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
        }
    }
    s
}

/// ds_i/dt for i = 1..L (entry 0 is 0: s_0 = 1), with s_{L+1} = 0.
fn derivative(beta: f64, s: &[f64]) -> Vec<f64> {
    let mut d = vec![0.0; s.len()];
    for i in 1..s.len() {
        let (above, here) = (s[i - 1], s.get(i).copied().unwrap_or(0.0));
        d[i] = beta * (above * above - here * here) + (1.0 - beta) * (above - here);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Closed forms: One-Choice (β = 0) has Poisson(t) loads, s_1 = 1 − e^{−t}; Two-Choice
    /// has s_1 = tanh t; and the mass is conserved: Σ_{i≥1} s_i = t (the mean load).
    #[test]
    fn the_solver_matches_closed_forms() {
        let s = fluid_limit(0.0, 1.0);
        assert!((s[1] - (1.0 - (-1.0f64).exp())).abs() < 1e-11, "{}", s[1]);
        let p2 = (-1.0f64).exp() / 2.0;
        assert!(((s[2] - s[3]) - p2).abs() < 1e-11);
        for beta in [1.0, 0.5] {
            for t in [1.0, 4.0] {
                let mean: f64 = fluid_limit(beta, t)[1..].iter().sum();
                assert!((mean - t).abs() < 1e-10, "beta {beta} t {t}: {mean}");
            }
        }
        // Two-Choice: ds_1/dt = 1 − s_1², so s_1(t) = tanh t.
        for t in [1.0, 4.0] {
            let s1 = fluid_limit(1.0, t)[1];
            assert!((s1 - f64::tanh(t)).abs() < 1e-11, "t {t}: {s1}");
        }
    }

    #[test]
    fn the_committed_tables_are_the_formulas() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repository root");
        for (file, text) in tables() {
            let committed = std::fs::read_to_string(root.join("reference").join(file))
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert!(committed == text, "{file} differs from its formula: run cargo xtask formulas");
        }
    }

    #[test]
    fn the_frozen_rank_prediction_sums_to_m() {
        for d in ["d=2", "d=3", "d=4"] {
            let total: f64 = redlich()
                .lines()
                .filter(|l| l.starts_with(&format!("{d},")))
                .map(|l| l.split(',').nth(3).unwrap().parse::<f64>().unwrap())
                .sum();
            assert!((total - 1e6).abs() < 1e-3, "{d}: {total}");
        }
    }
}
