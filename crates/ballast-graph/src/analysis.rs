//! Structural analysis for tests and metadata: connected components, bipartiteness, degree
//! statistics, and the spectral gap of the normalised Laplacian by power iteration.

use ballast_core::sim_rng;
use rand::RngCore;

use crate::graph::Neighbors;
use crate::Error;

/// Connected components.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Components {
    /// Number of components.
    pub count: usize,
    /// Component of each vertex; components are numbered in order of their smallest vertex.
    pub label: Vec<u32>,
}

impl Components {
    /// Size of the largest component (0 for the empty graph).
    pub fn largest(&self) -> usize {
        let mut sizes = vec![0usize; self.count];
        for &l in &self.label {
            sizes[l as usize] += 1;
        }
        sizes.into_iter().max().unwrap_or(0)
    }
}

/// Connected components by breadth-first search, O(n + edges).
pub fn components<G: Neighbors + ?Sized>(g: &G) -> Components {
    let n = g.n_vertices();
    let mut label = vec![u32::MAX; n];
    let mut queue = Vec::new();
    let mut count = 0u32;
    for s in 0..n {
        if label[s] != u32::MAX {
            continue;
        }
        label[s] = count;
        queue.clear();
        queue.push(s);
        let mut head = 0;
        while head < queue.len() {
            let u = queue[head];
            head += 1;
            for v in g.neighbors(u) {
                if label[v] == u32::MAX {
                    label[v] = count;
                    queue.push(v);
                }
            }
        }
        count += 1;
    }
    Components { count: count as usize, label }
}

/// Whether the graph is connected (the graph with one vertex is; the empty graph is not).
pub fn is_connected<G: Neighbors + ?Sized>(g: &G) -> bool {
    components(g).count == 1
}

/// Whether the graph is bipartite (2-colourable), by breadth-first 2-colouring. A loop makes
/// a graph non-bipartite.
pub fn is_bipartite<G: Neighbors + ?Sized>(g: &G) -> bool {
    let n = g.n_vertices();
    let mut colour = vec![u8::MAX; n];
    let mut queue = Vec::new();
    for s in 0..n {
        if colour[s] != u8::MAX {
            continue;
        }
        colour[s] = 0;
        queue.clear();
        queue.push(s);
        let mut head = 0;
        while head < queue.len() {
            let u = queue[head];
            head += 1;
            for v in g.neighbors(u) {
                if colour[v] == u8::MAX {
                    colour[v] = 1 - colour[u];
                    queue.push(v);
                } else if colour[v] == colour[u] {
                    return false;
                }
            }
        }
    }
    true
}

/// Smallest, largest and mean degree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DegreeStats {
    /// Smallest degree.
    pub min: usize,
    /// Largest degree.
    pub max: usize,
    /// Mean degree `2·edges / n`.
    pub mean: f64,
}

/// Degree statistics, O(n).
pub fn degree_stats<G: Neighbors + ?Sized>(g: &G) -> DegreeStats {
    let n = g.n_vertices();
    let (mut min, mut max) = (usize::MAX, 0);
    for v in 0..n {
        let d = g.degree(v);
        min = min.min(d);
        max = max.max(d);
    }
    if n == 0 {
        min = 0;
    }
    DegreeStats { min, max, mean: if n == 0 { 0.0 } else { 2.0 * g.n_edges() as f64 / n as f64 } }
}

/// Settings of [`spectral_gap`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PowerIteration {
    /// Iteration cap (default 5000). One iteration costs one pass over the arcs.
    pub max_iterations: u32,
    /// Stop when the estimate changed by less than this fraction over the last 100 iterations
    /// (default 1e-4).
    pub tolerance: f64,
    /// Seed of the random start vector (default 1).
    pub seed: u64,
}

impl Default for PowerIteration {
    fn default() -> Self {
        Self { max_iterations: 5000, tolerance: 1e-4, seed: 1 }
    }
}

/// Result of [`spectral_gap`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpectralEstimate {
    /// Estimate of `λ₂`, the second smallest eigenvalue of the normalised Laplacian
    /// `L = I − D^{−1/2} A D^{−1/2}`. Always an upper bound on the true `λ₂` (up to rounding).
    pub gap: f64,
    /// Iterations performed.
    pub iterations: u32,
    /// `‖Mx − νx‖` for the final unit vector `x` and Rayleigh quotient `ν` (see
    /// [`spectral_gap`]): some eigenvalue of the deflated lazy walk lies within this distance
    /// of `ν`.
    pub residual: f64,
    /// Whether the relative-change criterion was met before the iteration cap.
    pub converged: bool,
}

/// Estimates the spectral gap `λ₂` of the normalised Laplacian by power iteration.
///
/// Method. Power iteration runs on the lazy operator `M = (I + D^{−1/2} A D^{−1/2}) / 2`,
/// whose eigenvalues `ν = 1 − λ/2` lie in `[0, 1]` (the shift keeps bipartite graphs, whose
/// `λ_n = 2`, from dominating). The trivial eigenvector `φ ∝ D^{1/2}·1` (`ν₁ = 1`) is projected
/// out of the start vector and again after every multiplication. The estimate after `k`
/// iterations is `2(1 − ν_k)` with `ν_k` the Rayleigh quotient of the iterate.
///
/// Accuracy. `M` is positive semi-definite, so the Rayleigh quotients of power iterates never
/// decrease and never exceed `ν₂`: the estimate is an upper bound on `λ₂` that decreases
/// towards it. With a separated second eigenvalue the error falls like `(ν₃/ν₂)^{2k}`; when
/// eigenvalues accumulate at `ν₂` (cycles, tori: `λ₂ ~ 1/n^{2/dim}`, and random regular graphs,
/// whose top eigenvalues differ by about `n^{−2/3}`), the excess falls only like `1/k` times
/// the width of the accumulating band, so expect a few per cent on random regular graphs after
/// a few thousand iterations and useless values for long cycles (use the exact formulas of
/// [`crate::Topology::spectral_gap`] for the structured graphs). Cost: O(arcs) per iteration.
///
/// Measured on a random 3-regular graph with n = 2¹⁶ (λ₂ ≈ 0.0571): 250 iterations give
/// 0.0627, 1000 give 0.0586 (+2.5 %), 2000 give 0.0577 (+0.9 %), 5000 give 0.0572 (+0.1 %,
/// 2.8 s); at n = 10⁶ the default settings stop after about 4800 iterations (0.0575), about
/// 56 ms per iteration (the gathers miss the cache), so lower `max_iterations` there if a
/// per-cent-level estimate suffices.
///
/// Errors if a vertex has degree 0 (the normalised Laplacian is undefined) or the graph has
/// fewer than 2 vertices.
pub fn spectral_gap<G: Neighbors + ?Sized>(
    g: &G,
    opts: &PowerIteration,
) -> Result<SpectralEstimate, Error> {
    let n = g.n_vertices();
    if n < 2 {
        return Err(Error::invalid("n", n, "at least 2 vertices for a spectral gap"));
    }
    let mut inv_sqrt = vec![0.0f64; n];
    let mut phi = vec![0.0f64; n];
    let mut volume = 0.0;
    for v in 0..n {
        let d = g.degree(v);
        if d == 0 {
            return Err(Error::invalid(
                "graph",
                format!("vertex {v} has degree 0"),
                "no isolated vertices (the normalised Laplacian needs positive degrees)",
            ));
        }
        inv_sqrt[v] = 1.0 / (d as f64).sqrt();
        phi[v] = (d as f64).sqrt();
        volume += d as f64;
    }
    let norm = volume.sqrt();
    phi.iter_mut().for_each(|p| *p /= norm);

    let deflate = |x: &mut [f64]| {
        let c: f64 = x.iter().zip(&phi).map(|(a, b)| a * b).sum();
        x.iter_mut().zip(&phi).for_each(|(a, b)| *a -= c * b);
    };
    let normalise = |x: &mut [f64]| -> f64 {
        let s = x.iter().map(|a| a * a).sum::<f64>().sqrt();
        if s > 0.0 {
            x.iter_mut().for_each(|a| *a /= s);
        }
        s
    };

    let mut rng = sim_rng(opts.seed);
    let mut x: Vec<f64> =
        (0..n).map(|_| (rng.next_u64() >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0).collect();
    deflate(&mut x);
    normalise(&mut x);
    let mut z = vec![0.0f64; n];
    let mut y = vec![0.0f64; n];
    let mut history: Vec<f64> = Vec::new();
    let (mut nu, mut residual) = (0.0, f64::INFINITY);
    let mut converged = false;
    let mut iterations = 0;
    while iterations < opts.max_iterations {
        iterations += 1;
        for v in 0..n {
            z[v] = inv_sqrt[v] * x[v];
        }
        for u in 0..n {
            let s: f64 = g.neighbors(u).map(|v| z[v]).sum();
            y[u] = 0.5 * (x[u] + inv_sqrt[u] * s);
        }
        deflate(&mut y);
        nu = x.iter().zip(&y).map(|(a, b)| a * b).sum::<f64>();
        residual = x.iter().zip(&y).map(|(a, b)| (b - nu * a).powi(2)).sum::<f64>().sqrt();
        std::mem::swap(&mut x, &mut y);
        if normalise(&mut x) == 0.0 {
            // Mx = 0: ν₂ = 0 in the direction of x (e.g. K_2); the estimate is exact.
            converged = true;
            break;
        }
        let est = 2.0 * (1.0 - nu);
        history.push(est);
        if history.len() > 100 {
            let old = history[history.len() - 101];
            if (old - est).abs() <= opts.tolerance * est.abs().max(f64::MIN_POSITIVE) {
                converged = true;
                break;
            }
        }
    }
    Ok(SpectralEstimate { gap: (2.0 * (1.0 - nu)).max(0.0), iterations, residual, converged })
}
