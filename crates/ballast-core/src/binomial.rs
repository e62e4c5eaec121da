//! Binomial variates for the level engine, with a cheap setup per call.
//!
//! The level engine draws millions of binomials per run, nearly every one with new
//! parameters (conditional binomials of a multinomial, occupancy cells), so the cost of
//! preparing a draw matters as much as the draw. Two exact methods, after reflecting
//! `p > 1/2` to `n − Binomial(n, 1 − p)`:
//!
//! - **Inversion** for `np < 10`: walk the probability function up from 0, starting from
//!   `P(0) = exp(n·ln(1 − p))` and multiplying by `(n − x + 1)/x · p/q` (about `np + 1`
//!   steps). The walk restarts with a fresh uniform if it passes 110, where the remaining
//!   mass is below 10⁻⁶⁰ for `np < 10`; that only guards against rounding.
//! - **BTRS** for `np >= 10`: Hörmann's transformed rejection with squeeze ("The generation
//!   of binomial random variates", J. Statist. Comput. Simul. 46, 1993). A point
//!   `k = ⌊(2a/u_s + b)·u + c⌋` from two uniforms is accepted outright in the squeeze region
//!   (about 86 % of proposals), else by comparing `ln v` with the log ratio of the
//!   probability function at `k` and at the mode, written as logarithms of ratios plus
//!   Stirling remainders so that nothing cancels for large n.
//!
//! Both are exact up to floating-point rounding, the standard of `rand_distr`, whose BTPE
//! setup and `powf` this replaces because they cost more than the draw (the level engine
//! runs about 1.6× faster with this module). The Stirling remainders are accurate to 10⁻¹³;
//! the log ratio carries terms of size up to the mode m times a logarithm near 0, so its
//! rounding error is about m·10⁻¹⁶ (10⁻⁸ at m = 10⁸), as for any test of this form.
//! `tests/binomial.rs` checks the probability function by chi-square in both regimes, at the
//! boundary between them and up to n = 2⁴⁰, and against `rand_distr::Binomial`.

use rand::RngCore;

/// `np` from which [`binomial`] uses BTRS (the method needs `np >= 10`).
pub const BTRS_FROM: f64 = 10.0;

/// The inversion walk restarts beyond this value (its tail mass is below 10⁻⁶⁰).
const INVERSION_MAX: u64 = 110;

/// A uniform in (0, 1) with 53 random bits (never 0 or 1).
#[inline]
fn open01<R: RngCore + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
}

/// An exact `Binomial(n, p)` variate; `p` is clamped to [0, 1]. `n = 1` is one
/// [`crate::rng::bernoulli`] draw.
///
/// # Panics
///
/// If `p` is NaN (a bug in the caller's probabilities; the rejection loop would not end).
#[inline]
pub fn binomial<R: RngCore + ?Sized>(rng: &mut R, n: u64, p: f64) -> u64 {
    assert!(!p.is_nan(), "a binomial probability is NaN");
    if n == 0 || p <= 0.0 {
        return 0;
    }
    if p >= 1.0 {
        return n;
    }
    if n == 1 {
        return u64::from(crate::rng::bernoulli(rng, p));
    }
    if p > 0.5 {
        return n - binomial(rng, n, 1.0 - p);
    }
    if n as f64 * p < BTRS_FROM {
        inversion(rng, n, p)
    } else {
        btrs(rng, n, p)
    }
}

/// Inversion from 0 (`np < 10`, `p <= 1/2`).
fn inversion<R: RngCore + ?Sized>(rng: &mut R, n: u64, p: f64) -> u64 {
    let q = 1.0 - p;
    let s = p / q;
    let a = (n as f64 + 1.0) * s;
    let p0 = (n as f64 * (-p).ln_1p()).exp();
    'draw: loop {
        let mut u = open01(rng);
        let mut f = p0;
        let mut x = 0u64;
        while u > f {
            u -= f;
            x += 1;
            if x > INVERSION_MAX || x > n {
                continue 'draw;
            }
            // P(x)/P(x − 1) = (n − x + 1)/x · p/q = (n + 1)s/x − s.
            f *= a / x as f64 - s;
        }
        return x;
    }
}

/// BTRS (`np >= 10`, `p <= 1/2`).
fn btrs<R: RngCore + ?Sized>(rng: &mut R, n: u64, p: f64) -> u64 {
    let nf = n as f64;
    let q = 1.0 - p;
    let spq = (nf * p * q).sqrt();
    let b = 1.15 + 2.53 * spq;
    let a = -0.0873 + 0.0248 * b + 0.01 * p;
    let c = nf * p + 0.5;
    let v_r = 0.92 - 4.2 / b;
    // Only the slow acceptance test needs these: α, r = p/q, the mode m and the terms of the
    // log ratio below that depend on m alone.
    let mut slow: Option<(f64, f64, f64, f64)> = None;
    loop {
        let u = open01(rng) - 0.5;
        let v = open01(rng);
        let us = 0.5 - u.abs();
        // us > 0, so y is finite; floor(y) by truncation once y >= 0 (no libm `floor` call
        // on baseline x86-64).
        let y = (2.0 * a / us + b) * u + c;
        if y < 0.0 {
            continue;
        }
        let k = y as u64;
        if k > n {
            continue;
        }
        if us >= 0.07 && v <= v_r {
            return k;
        }
        let (alpha, r, m, mode_terms) = *slow.get_or_insert_with(|| {
            let r = p / q;
            let m = ((nf + 1.0) * p) as u64 as f64;
            let mode_terms = (m + 0.5) * ((m + 1.0) / (r * (nf - m + 1.0))).ln()
                + stirling_tail(m)
                + stirling_tail(nf - m);
            ((2.83 + 5.1 / b) * spq, r, m, mode_terms)
        });
        let kf = k as f64;
        let lhs = (v * alpha / (a / (us * us) + b)).ln();
        // ln(P(k)/P(m)) with P the binomial probability function and m the mode, as
        // logarithms of ratios plus Stirling remainders (module docs).
        let rhs = mode_terms
            + (nf + 1.0) * ((nf - m + 1.0) / (nf - kf + 1.0)).ln()
            + (kf + 0.5) * (r * (nf - kf + 1.0) / (kf + 1.0)).ln()
            - stirling_tail(kf)
            - stirling_tail(nf - kf);
        if lhs <= rhs {
            return k;
        }
    }
}

/// `ln k! − (ln √(2π) + (k + ½)·ln(k + 1) − (k + 1))` for an integer `k >= 0`: a table
/// below 10, the Stirling series (to the (k + 1)⁻⁷ term, error below 3·10⁻¹³) from 10 on.
#[inline]
pub(crate) fn stirling_tail(k: f64) -> f64 {
    if k < 10.0 {
        SMALL_TAILS[k as usize]
    } else {
        let x = k + 1.0;
        let x2 = x * x;
        (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - 1.0 / (1680.0 * x2)) / x2) / x2) / x
    }
}

/// `ln k!` for an integer `k >= 0`, from [`stirling_tail`] (absolute error about 10⁻¹³ plus
/// the rounding of `(k + ½)·ln(k + 1)`, i.e. relative 10⁻¹⁶).
#[inline]
pub(crate) fn ln_factorial(k: f64) -> f64 {
    const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;
    stirling_tail(k) + LN_SQRT_2PI + (k + 0.5) * (k + 1.0).ln() - (k + 1.0)
}

/// [`stirling_tail`] for k = 0..=9, evaluated in 40-digit arithmetic (mpmath) and rounded to
/// `f64`; the unit test `small_tails_match_their_definition` recomputes them.
const SMALL_TAILS: [f64; 10] = [
    0.081_061_466_795_327_26,
    0.041_340_695_955_409_3,
    0.027_677_925_684_998_34,
    0.020_790_672_103_765_093,
    0.016_644_691_189_821_193,
    0.013_876_128_823_070_748,
    0.011_896_709_945_891_77,
    0.010_411_265_261_972_096,
    0.009_255_462_182_712_733,
    0.008_330_563_433_362_87,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition of the remainder, from a sum of logarithms.
    fn tail_by_definition(k: u64) -> f64 {
        let ln_fact: f64 = (2..=k).map(|i| (i as f64).ln()).sum();
        let x = k as f64 + 1.0;
        ln_fact - (0.5 * (2.0 * std::f64::consts::PI).ln() + (x - 0.5) * x.ln() - x)
    }

    #[test]
    fn small_tails_match_their_definition() {
        for k in 0..10 {
            let want = tail_by_definition(k);
            assert!((SMALL_TAILS[k as usize] - want).abs() < 1e-14, "{k}: {want}");
        }
    }

    #[test]
    fn ln_factorial_matches_sums_of_logarithms() {
        for k in [0u64, 1, 2, 5, 9, 10, 17, 100, 1000] {
            let want: f64 = (2..=k).map(|i| (i as f64).ln()).sum();
            assert!((ln_factorial(k as f64) - want).abs() < 1e-12 * want.max(1.0), "{k}");
        }
    }

    #[test]
    fn the_series_matches_the_definition_from_ten_on() {
        // Sums of logarithms lose about 1e-16 per term relative to ln k! (~ k ln k), so
        // compare where that rounding stays below 1e-12.
        for k in [10u64, 11, 15, 20, 50, 100] {
            let want = tail_by_definition(k);
            assert!((stirling_tail(k as f64) - want).abs() < 1e-12, "{k}");
        }
    }
}
