//! Exact occupancy counts: how many of `c` bins receive 0, 1, 2, … of `k` balls thrown
//! independently and uniformly, generated without throwing the balls one by one.
//!
//! This follows `docs/occupancy.md#exact-occupancy-counts`: three exact methods and a
//! dispatcher.
//!
//! - **Method N** (naive, `k <= naive_max`): draw the `k` bins, sort, count run lengths.
//!   Θ(k log k), memory Θ(k).
//! - **Method A** (per-bin conditional binomials, small `c`): bin `i` receives
//!   `Binomial(remaining, 1/(c − i))` balls. Θ(c) binomial draws, whatever `k`.
//! - **Method P** (Poissonisation with rejection and a recursive deficit; our exact
//!   reconstruction of the idea of Devroye & Los 2024): draw the level histogram of `c`
//!   i.i.d. Poisson(μ) loads, μ = (k − α√k)/c, by one conditional binomial per level; reject
//!   unless the implied total `N` is in `1..=k` (acceptance depends on `N` only, so the
//!   accepted histogram has the exact occupancy law of `N` balls); then throw the missing
//!   `D = k − N` balls: split them over the levels in proportion to the bins there
//!   (multinomial), and recurse on each level's `D_j` balls into its `X_j` bins. Adding i.i.d.
//!   uniform balls to i.i.d. uniform balls gives `k` i.i.d. uniform balls, hence exactness;
//!   `N >= 1` makes every recursive call smaller, hence termination. Cost: about one binomial
//!   per occupied level per recursion node, independent of `k` and `c` for fixed mean load
//!   (a few dozen binomials at k = c = 10⁸).
//!
//! "Exact" means exact given exact binomial and uniform variates ([`crate::binomial`],
//! Lemire's bounded integers); the only departures are floating-point rounding of the
//! probabilities, the standard of `rand_distr` itself. Poisson cell weights are computed by
//! ratio recurrences from the mode (no `lgamma`, no cancellation); for large μ a window
//! around μ is flanked by a lower block and an upper tail cell whose bins are resolved by
//! exact inversion, so the window only changes the speed, never the law.

use rand::{Rng, RngCore};

use crate::rng::below;

/// `Binomial(r, p)` ([`crate::binomial::binomial`]); `p` is clamped to `[0, 1]`.
#[inline]
pub fn binomial<R: RngCore + ?Sized>(rng: &mut R, r: u64, p: f64) -> u64 {
    crate::binomial::binomial(rng, r, p)
}

/// Splits `r` items over cells with non-negative weights `w` (any scale) by conditional
/// binomials, adding the counts to `out` (same length). Suffix sums of the positive weights
/// are formed from the far end, so no conditional probability suffers cancellation
/// (`docs/occupancy.md#multinomial-by-conditional-binomials`). Stops as soon as nothing remains.
pub fn multinomial_weights<R: RngCore + ?Sized>(
    rng: &mut R,
    r: u64,
    w: &[f64],
    suffix: &mut Vec<f64>,
    out: &mut [u64],
) {
    debug_assert_eq!(w.len(), out.len());
    if r == 0 || w.is_empty() {
        return;
    }
    suffix.clear();
    suffix.resize(w.len() + 1, 0.0);
    for i in (0..w.len()).rev() {
        suffix[i] = suffix[i + 1] + w[i];
    }
    assert!(suffix[0] > 0.0, "a multinomial needs a positive total weight");
    let mut left = r;
    for i in 0..w.len() {
        if left == 0 {
            break;
        }
        // The last positive cell gets p = w / w = 1 exactly.
        let p = if suffix[i] > 0.0 { w[i] / suffix[i] } else { 1.0 };
        let x = binomial(rng, left, p);
        out[i] += x;
        left -= x;
    }
    debug_assert_eq!(left, 0);
}

/// Splits `r` items over cells given directly by their conditional probabilities
/// `cond[i]` = P(cell i | not in cells before i) (the last used cell must have 1).
pub fn multinomial_conditional<R: RngCore + ?Sized>(
    rng: &mut R,
    r: u64,
    cond: &[f64],
    out: &mut [u64],
) {
    let mut left = r;
    for (i, &p) in cond.iter().enumerate() {
        if left == 0 {
            break;
        }
        let x = binomial(rng, left, p);
        out[i] += x;
        left -= x;
    }
    assert_eq!(left, 0, "conditional probabilities must end with 1");
}

/// Adds `v` to `out[i]`, growing `out` with zeros as needed.
#[inline]
fn add_at(out: &mut Vec<u64>, i: usize, v: u64) {
    if i >= out.len() {
        out.resize(i + 1, 0);
    }
    out[i] += v;
}

/// Tuning of [`OccupancySampler`]. The law never depends on these (tests check it); only the
/// speed does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OccupancyParams {
    /// Method N for `k <= naive_max` (the note's T, the paper's K*-like threshold).
    pub naive_max: u64,
    /// Method A for `c <= direct_max` (the note's C_A).
    pub direct_max: u64,
    /// Method A also when `c < direct_span · √(k/c)`: then the c per-bin draws are fewer
    /// than the levels Method P would visit.
    pub direct_span: f64,
    /// Poisson mean offset α: λ = k − α√k, acceptance ≈ Φ(α).
    pub alpha: f64,
    /// Half-width of the Poisson window, in standard deviations, for large means.
    pub window_sd: f64,
}

impl Default for OccupancyParams {
    fn default() -> Self {
        Self { naive_max: 64, direct_max: 32, direct_span: 12.0, alpha: 1.5, window_sd: 8.0 }
    }
}

/// Work counters, for tests and tuning.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OccupancyStats {
    /// Binomial draws with `r >= 2`.
    pub binomials: u64,
    /// Calls of the recursive sampler (including base cases).
    pub calls: u64,
    /// Balls thrown one by one by Method N.
    pub naive_balls: u64,
    /// Rejected Poissonised histograms.
    pub rejections: u64,
}

/// Exact sampler of occupancy counts with reusable scratch space.
#[derive(Clone, Debug, Default)]
pub struct OccupancySampler {
    params: OccupancyParams,
    scratch: Vec<u64>,
    weights: Vec<f64>,
    suffix: Vec<f64>,
    /// Work done so far.
    pub stats: OccupancyStats,
}

/// A level and how many bins sit there (a non-empty cell of a sparse histogram).
type Cell = (u64, u64);

impl OccupancySampler {
    /// A sampler with the given tuning.
    pub fn new(params: OccupancyParams) -> Self {
        assert!(params.alpha >= 0.0 && params.window_sd >= 1.0, "invalid occupancy parameters");
        Self { params, ..Self::default() }
    }

    /// Occupancy counts of `k` balls in `c >= 1` bins: entry `j` = bins with exactly `j` balls
    /// (trailing zeros trimmed). Always `Σ_j out[j] = c` and `Σ_j j·out[j] = k`.
    pub fn sample<R: RngCore + ?Sized>(&mut self, k: u64, c: u64, rng: &mut R) -> Vec<u64> {
        let mut out = Vec::new();
        self.sample_into(k, c, rng, &mut out, 0);
        out
    }

    /// Adds the occupancy counts of `k` balls in `c >= 1` bins to `out`, shifted by `base`:
    /// `out[base + j] += #bins with j balls`. `out` grows as needed.
    pub fn sample_into<R: RngCore + ?Sized>(
        &mut self,
        k: u64,
        c: u64,
        rng: &mut R,
        out: &mut Vec<u64>,
        base: usize,
    ) {
        assert!(c >= 1, "at least one bin");
        self.stats.calls += 1;
        if k == 0 {
            add_at(out, base, c);
            return;
        }
        if c == 1 {
            add_at(out, base + k as usize, 1);
            return;
        }
        let mean = k as f64 / c as f64;
        let alpha = self.params.alpha;
        let lambda = k as f64 - alpha * (k as f64).sqrt();
        if c <= self.params.direct_max || (c as f64) < self.params.direct_span * mean.sqrt() {
            self.direct(k, c, rng, out, base);
        } else if k <= self.params.naive_max || lambda < 0.5 {
            self.naive(k, c, rng, out, base);
        } else {
            self.poissonized(k, c, lambda, rng, out, base);
        }
    }

    #[inline]
    fn binomial<R: RngCore + ?Sized>(&mut self, rng: &mut R, r: u64, p: f64) -> u64 {
        if r >= 2 && p > 0.0 && p < 1.0 {
            self.stats.binomials += 1;
        }
        binomial(rng, r, p)
    }

    /// Method A: per-bin conditional binomials.
    fn direct<R: RngCore + ?Sized>(
        &mut self,
        k: u64,
        c: u64,
        rng: &mut R,
        out: &mut Vec<u64>,
        base: usize,
    ) {
        let mut left = k;
        for i in 0..c - 1 {
            if left == 0 {
                add_at(out, base, c - i);
                return;
            }
            let x = self.binomial(rng, left, 1.0 / (c - i) as f64);
            add_at(out, base + x as usize, 1);
            left -= x;
        }
        add_at(out, base + left as usize, 1);
    }

    /// Method N: throw the balls, sort, count multiplicities.
    fn naive<R: RngCore + ?Sized>(
        &mut self,
        k: u64,
        c: u64,
        rng: &mut R,
        out: &mut Vec<u64>,
        base: usize,
    ) {
        self.stats.naive_balls += k;
        let bins = &mut self.scratch;
        bins.clear();
        if c <= 1 << 32 {
            bins.extend((0..k).map(|_| below(rng, c)));
        } else {
            bins.extend((0..k).map(|_| rng.random_range(0..c)));
        }
        bins.sort_unstable();
        let mut distinct = 0u64;
        let mut run = 1usize;
        for i in 1..=bins.len() {
            if i < bins.len() && bins[i] == bins[i - 1] {
                run += 1;
            } else {
                distinct += 1;
                add_at(out, base + run, 1);
                run = 1;
            }
        }
        add_at(out, base, c - distinct);
    }

    /// Method P: Poissonise, reject an excess, add the deficit recursively.
    fn poissonized<R: RngCore + ?Sized>(
        &mut self,
        k: u64,
        c: u64,
        lambda: f64,
        rng: &mut R,
        out: &mut Vec<u64>,
        base: usize,
    ) {
        let mu = lambda / c as f64;
        let mut cells: Vec<Cell> = Vec::new();
        let total = loop {
            cells.clear();
            self.poisson_histogram(c, mu, rng, &mut cells);
            let total: u128 = cells.iter().map(|&(j, x)| u128::from(j) * u128::from(x)).sum();
            if (1..=u128::from(k)).contains(&total) {
                break total as u64;
            }
            self.stats.rejections += 1;
        };
        let mut deficit = k - total;
        // Split the deficit over the cells, bins as weights (exact integer ratios).
        let mut bins_left = c;
        for &(j, x) in &cells {
            let d = if deficit == 0 {
                0
            } else if x == bins_left {
                deficit
            } else {
                self.binomial(rng, deficit, x as f64 / bins_left as f64)
            };
            bins_left -= x;
            deficit -= d;
            if d == 0 {
                add_at(out, base + j as usize, x);
            } else {
                self.sample_into(d, x, rng, out, base + j as usize);
            }
        }
        debug_assert_eq!(deficit, 0);
    }

    /// The level histogram of `c` i.i.d. Poisson(`mu`) loads, as non-empty cells in
    /// increasing level order.
    fn poisson_histogram<R: RngCore + ?Sized>(
        &mut self,
        c: u64,
        mu: f64,
        rng: &mut R,
        cells: &mut Vec<Cell>,
    ) {
        // Window [j_lo, j_hi] around the mode m; weights relative to w_m = 1.
        let m = mu.floor() as u64;
        let half = self.params.window_sd * mu.sqrt() + self.params.window_sd;
        let j_lo = (mu - half).floor().max(0.0) as u64;
        let j_hi = (mu + half).ceil() as u64;
        let width = (j_hi - j_lo + 1) as usize;
        let w = &mut self.weights;
        w.clear();
        w.resize(width, 0.0);
        w[(m - j_lo) as usize] = 1.0;
        for j in m + 1..=j_hi {
            w[(j - j_lo) as usize] = w[(j - 1 - j_lo) as usize] * mu / j as f64;
        }
        for j in (j_lo..m).rev() {
            w[(j - j_lo) as usize] = w[(j + 1 - j_lo) as usize] * (j + 1) as f64 / mu;
        }
        let low_block = if j_lo > 0 { lower_tail_weight(w[0], j_lo, mu) } else { 0.0 };
        let upper_tail = upper_tail_weight(w[width - 1], j_hi, mu);
        // Cells in order: lower block, window ascending, upper tail. Suffix sums backwards.
        let s = &mut self.suffix;
        s.clear();
        s.resize(width + 1, 0.0);
        s[width] = upper_tail;
        for i in (0..width).rev() {
            s[i] = s[i + 1] + w[i];
        }
        let mut left = c;
        if low_block > 0.0 {
            let p = low_block / (low_block + s[0]);
            let x = binomial(rng, left, p);
            if x > 0 {
                self.stats.binomials += 1;
                let mut low: Vec<u64> = (0..x).map(|_| lower_inversion(rng, j_lo, mu)).collect();
                low.sort_unstable();
                push_sorted_levels(cells, &low);
            }
            left -= x;
        }
        for i in 0..width {
            if left == 0 {
                return;
            }
            let p = self.weights[i] / self.suffix[i];
            let x = self.binomial(rng, left, p);
            if x > 0 {
                cells.push((j_lo + i as u64, x));
            }
            left -= x;
        }
        if left > 0 {
            let mut high: Vec<u64> = (0..left).map(|_| upper_inversion(rng, j_hi, mu)).collect();
            high.sort_unstable();
            push_sorted_levels(cells, &high);
        }
    }
}

/// Appends sorted levels as (level, multiplicity) cells.
fn push_sorted_levels(cells: &mut Vec<Cell>, levels: &[u64]) {
    for &j in levels {
        match cells.last_mut() {
            Some((l, x)) if *l == j => *x += 1,
            _ => cells.push((j, 1)),
        }
    }
}

/// Σ_{j < j_lo} w_j, given w_{j_lo} (downward recurrence w_{j−1} = w_j·j/μ).
fn lower_tail_weight(w_lo: f64, j_lo: u64, mu: f64) -> f64 {
    let mut t = w_lo;
    let mut sum = 0.0;
    for j in (0..j_lo).rev() {
        t *= (j + 1) as f64 / mu;
        sum += t;
        if t <= sum * 1e-18 {
            break;
        }
    }
    sum
}

/// Σ_{j > j_hi} w_j, given w_{j_hi} (upward recurrence w_{j+1} = w_j·μ/(j+1)).
fn upper_tail_weight(w_hi: f64, j_hi: u64, mu: f64) -> f64 {
    let mut t = w_hi;
    let mut sum = 0.0;
    let mut j = j_hi;
    loop {
        j += 1;
        t *= mu / j as f64;
        sum += t;
        if t <= sum * 1e-18 || t == 0.0 {
            return sum;
        }
    }
}

/// A Poisson(μ) value conditioned on being below `j_lo`, by inversion (restarting in the
/// rare case rounding runs the walk off the end).
fn lower_inversion<R: RngCore + ?Sized>(rng: &mut R, j_lo: u64, mu: f64) -> u64 {
    // Weights relative to the value at j_lo − 1 (any scale works for inversion).
    loop {
        let mut total = 0.0;
        let mut t = 1.0;
        for j in (0..j_lo).rev() {
            total += t;
            t *= j as f64 / mu;
            if t <= total * 1e-18 {
                break;
            }
        }
        let mut u: f64 = rng.random::<f64>() * total;
        let mut t = 1.0;
        for j in (0..j_lo).rev() {
            if u < t {
                return j;
            }
            u -= t;
            t *= j as f64 / mu;
            if t == 0.0 {
                break;
            }
        }
    }
}

/// A Poisson(μ) value conditioned on exceeding `j_hi`, by inversion.
fn upper_inversion<R: RngCore + ?Sized>(rng: &mut R, j_hi: u64, mu: f64) -> u64 {
    loop {
        let total = {
            let (mut sum, mut t, mut j) = (0.0, 1.0, j_hi + 1);
            loop {
                sum += t;
                j += 1;
                t *= mu / j as f64;
                if t <= sum * 1e-18 || t == 0.0 {
                    break sum;
                }
            }
        };
        let mut u: f64 = rng.random::<f64>() * total;
        let (mut t, mut j) = (1.0, j_hi + 1);
        loop {
            if u < t {
                return j;
            }
            u -= t;
            j += 1;
            t *= mu / j as f64;
            if t == 0.0 {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::sim_rng;

    fn check(h: &[u64], k: u64, c: u64) {
        assert_eq!(h.iter().sum::<u64>(), c);
        assert_eq!(h.iter().enumerate().map(|(j, &x)| j as u64 * x).sum::<u64>(), k);
    }

    #[test]
    fn every_method_conserves_bins_and_balls() {
        let mut rng = sim_rng(1);
        let mut occ = OccupancySampler::new(OccupancyParams::default());
        for &(k, c) in &[
            (0, 5),
            (7, 1),
            (10, 4),
            (50, 1000),
            (3000, 1000),
            (100_000, 1000),
            (1_000_000, 100),
            (10, 1_000_000_000),
            (1_000_000, 1_000_000),
        ] {
            let h = occ.sample(k, c, &mut rng);
            check(&h, k, c);
        }
    }

    #[test]
    fn tails_and_blocks_are_exercised() {
        // A narrow window forces bins into the lower block and the upper tail.
        let params = OccupancyParams {
            window_sd: 1.0,
            direct_max: 2,
            direct_span: 0.0,
            ..Default::default()
        };
        let mut occ = OccupancySampler::new(params);
        let mut rng = sim_rng(2);
        for _ in 0..20 {
            let h = occ.sample(400_000, 1000, &mut rng);
            check(&h, 400_000, 1000);
        }
    }
}
