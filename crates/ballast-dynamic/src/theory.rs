//! Closed forms and exact numerics for the checks and the reports: the RBB empty-bin
//! fraction, the single-queue law of leaky bins with One-Choice, and the shapes of the leaky
//! bins bounds. The derivations are in the crate documentation.

use crate::Arrivals;

/// Large-`n` stationary fraction of empty bins of RBB with `m = k·n` balls: `√(k² + 1) − k`.
/// Written as `1/(√(k² + 1) + k)` to avoid cancellation for large `k`.
pub fn rbb_empty_fraction(k: f64) -> f64 {
    1.0 / ((k * k + 1.0).sqrt() + k)
}

/// The law of the number `a` of balls one bin receives in a round of leaky bins with
/// One-Choice, as its first two factorial moments `(E[a], E[a(a − 1)])`.
///
/// - Binomial(n, λ) arrivals: `a ~ Binomial(n, λ/n)`: `(λ, λ²(1 − 1/n))`;
/// - Poisson(λn): `a ~ Poisson(λ)`: `(λ, λ²)`;
/// - fixed `a₀ = ⌊λn⌋`: `a ~ Binomial(a₀, 1/n)`: `(a₀/n, a₀(a₀ − 1)/n²)`.
pub fn per_bin_arrival_moments(arrivals: Arrivals, n: usize, lambda: f64) -> (f64, f64) {
    let nf = n as f64;
    match arrivals {
        Arrivals::Binomial => (lambda, lambda * lambda * (1.0 - 1.0 / nf)),
        Arrivals::Poisson => (lambda, lambda * lambda),
        Arrivals::Fixed => {
            let a0 = (lambda * nf).floor();
            (a0 / nf, a0 * (a0 - 1.0).max(0.0) / (nf * nf))
        }
    }
}

/// Stationary mean load of one bin of leaky bins with One-Choice, observed at the round end
/// (after arrivals and the departure): `E[a(a − 1)] / (2(1 − E[a]))`. For Poisson arrivals
/// this is `λ²/(2(1 − λ))`.
pub fn leaky_one_choice_mean_load(arrivals: Arrivals, n: usize, lambda: f64) -> f64 {
    let (m1, m2) = per_bin_arrival_moments(arrivals, n, lambda);
    m2 / (2.0 * (1.0 - m1))
}

/// The probability mass function of the per-bin arrivals `a` (see
/// [`per_bin_arrival_moments`]), truncated where the remaining mass is below `1e-18`.
pub fn per_bin_arrival_pmf(arrivals: Arrivals, n: usize, lambda: f64) -> Vec<f64> {
    let nf = n as f64;
    // Binomial(trials, q) by the ratio recurrence; Poisson(λ) likewise.
    let binomial = |trials: f64, q: f64| {
        let mut p = vec![(1.0 - q).powf(trials)];
        let mut k = 0.0;
        let mut mass = p[0];
        while k < trials && 1.0 - mass > 1e-18 && p.len() < 10_000 {
            let next = p[p.len() - 1] * (trials - k) / (k + 1.0) * q / (1.0 - q);
            p.push(next);
            mass += next;
            k += 1.0;
        }
        p
    };
    match arrivals {
        Arrivals::Binomial => binomial(nf, lambda / nf),
        Arrivals::Fixed => binomial((lambda * nf).floor(), 1.0 / nf),
        Arrivals::Poisson => {
            let mut p = vec![(-lambda).exp()];
            let mut mass = p[0];
            let mut k = 0.0;
            while 1.0 - mass > 1e-18 && p.len() < 10_000 {
                let next = p[p.len() - 1] * lambda / (k + 1.0);
                p.push(next);
                mass += next;
                k += 1.0;
            }
            p
        }
    }
}

/// Stationary law of one bin's end-of-round load `Q` in leaky bins with One-Choice, given the
/// per-bin arrival pmf `p` (with `E[a] < 1`), truncated where the tail falls below
/// `1e-300` or at `max_len` levels.
///
/// Method: `R = Q + a` (load before the departure) is skip-free downwards, so the cut
/// between levels `j` and `j + 1` balances `π_{j+1}·p₀` (down-crossings: a bin at `j + 1`
/// receives nothing) against `π₀·P(a > j) + Σ_{1 ≤ i ≤ j} π_i·P(a > j − i + 1)`
/// (up-crossings), starting from `π₀ = 1 − E[a]`. Every term is positive, so the recursion
/// is numerically stable. Then `P(Q = 0) = π₀ + π₁` and `P(Q = j) = π_{j+1}`.
pub fn leaky_one_choice_distribution(p: &[f64], max_len: usize) -> Vec<f64> {
    let mean: f64 = p.iter().enumerate().map(|(k, &q)| k as f64 * q).sum();
    assert!(mean < 1.0 && p[0] > 0.0, "needs E[a] < 1 and P(a = 0) > 0");
    // tail[k] = P(a > k), summed from the top (no cancellation).
    let mut tail = vec![0.0; p.len()];
    for k in (0..p.len().saturating_sub(1)).rev() {
        tail[k] = tail[k + 1] + p[k + 1];
    }
    let tail_at = |k: usize| tail.get(k).copied().unwrap_or(0.0);
    let mut pi = vec![1.0 - mean];
    for j in 0..max_len {
        let mut up = pi[0] * tail_at(j);
        // Only i with j − i + 1 < p.len() contribute.
        let lo = (j + 2).saturating_sub(p.len()).max(1);
        for (i, &pi_i) in pi.iter().enumerate().take(j + 1).skip(lo) {
            up += pi_i * tail_at(j - i + 1);
        }
        let next = up / p[0];
        pi.push(next);
        if next < 1e-300 && j > p.len() {
            break;
        }
    }
    let mut q = Vec::with_capacity(pi.len());
    q.push(pi[0] + pi.get(1).copied().unwrap_or(0.0));
    q.extend(pi.iter().skip(2));
    q
}

/// `E[max_i Q_i]` for `n` independent bins with law `q` (a pmf over loads 0, 1, …):
/// `Σ_x (1 − (1 − P(Q > x))ⁿ)`, with the tails summed from the top.
pub fn expected_max_iid(q: &[f64], n: usize) -> f64 {
    let mut tail = 0.0f64;
    let mut e = 0.0;
    for x in (0..q.len()).rev() {
        // Here tail = P(Q > x).
        e += -f64::exp_m1(n as f64 * f64::ln_1p(-tail.min(1.0)));
        tail += q[x];
    }
    e
}

/// Stationary time-averaged max load of leaky bins with One-Choice if the bins were
/// independent (exact for Poisson arrivals, where the per-bin arrival streams are
/// independent; for Binomial and fixed arrivals the bins are slightly negatively correlated).
pub fn leaky_one_choice_max_iid(arrivals: Arrivals, n: usize, lambda: f64) -> f64 {
    let p = per_bin_arrival_pmf(arrivals, n, lambda);
    let q = leaky_one_choice_distribution(&p, 1_000_000);
    expected_max_iid(&q, n)
}

/// Shape of the d = 1 leaky-bins bound: `(1/(1 − λ))·ln(n/(1 − λ))`.
pub fn leaky_shape_one_choice(n: usize, lambda: f64) -> f64 {
    (n as f64 / (1.0 - lambda)).ln() / (1.0 - lambda)
}

/// Shape of the d = 2 leaky-bins bound: `ln(n/(1 − λ))`.
pub fn leaky_shape_two_choice(n: usize, lambda: f64) -> f64 {
    (n as f64 / (1.0 - lambda)).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_fraction_values() {
        assert!((rbb_empty_fraction(1.0) - (2f64.sqrt() - 1.0)).abs() < 1e-15);
        assert!((rbb_empty_fraction(4.0) - (17f64.sqrt() - 4.0)).abs() < 1e-15);
        assert!((rbb_empty_fraction(0.0) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn queue_law_matches_mean_formula() {
        for &(arr, lambda) in &[
            (Arrivals::Poisson, 0.5),
            (Arrivals::Poisson, 0.95),
            (Arrivals::Binomial, 0.9),
            (Arrivals::Fixed, 0.75),
        ] {
            let p = per_bin_arrival_pmf(arr, 100, lambda);
            let q = leaky_one_choice_distribution(&p, 1_000_000);
            let mass: f64 = q.iter().sum();
            let mean: f64 = q.iter().enumerate().map(|(x, &w)| x as f64 * w).sum();
            let want = leaky_one_choice_mean_load(arr, 100, lambda);
            assert!((mass - 1.0).abs() < 1e-12, "{arr:?} {lambda}: mass {mass}");
            assert!(
                (mean - want).abs() < 1e-9 * want.max(1.0),
                "{arr:?} {lambda}: {mean} vs {want}"
            );
        }
    }

    #[test]
    fn expected_max_of_one_bin_is_the_mean() {
        let q = [0.5, 0.25, 0.25];
        assert!((expected_max_iid(&q, 1) - 0.75).abs() < 1e-15);
        // Two bins: P(max > 0) = 1 − 0.25, P(max > 1) = 1 − 0.75².
        assert!((expected_max_iid(&q, 2) - (0.75 + 0.4375)).abs() < 1e-15);
    }
}
