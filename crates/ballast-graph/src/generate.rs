//! Graph generators: cycle, d-dimensional torus, hypercube, star, random d-regular
//! (configuration model with rejection) and Erdős–Rényi G(n, p).
//!
//! The complete graph is implicit ([`crate::Complete`]). Random generators take
//! `rng: &mut R` and consume it in the documented order, so a graph is reproducible from its
//! seed; the first edges for fixed seeds are pinned by the value-stability tests.

use ballast_core::rng::below;
use rand::RngCore;

use crate::analysis::components;
use crate::graph::{Csr, Graph};
use crate::lattice::{Hypercube, Torus};
use crate::Error;

fn check_n(n: usize, min: usize) -> Result<(), Error> {
    if n < min || n > u32::MAX as usize {
        return Err(Error::invalid("n", n, format!("an integer in {min}..={}", u32::MAX)));
    }
    Ok(())
}

/// The cycle `C_n` (`n >= 3`): edges `{i, i + 1 mod n}`, materialised from the implicit
/// [`Torus::cycle`]. 2-regular; bipartite iff `n` is even.
pub fn cycle(n: usize) -> Result<Csr, Error> {
    check_n(n, 3)?;
    Csr::from_neighbors(&Torus::cycle(n)?)
}

/// The `dim`-dimensional torus with `side` vertices per axis (`side >= 3`, so no parallel
/// edges), materialised from the implicit [`Torus`]: `n = side^dim` vertices, vertex
/// `v = Σ x_a · side^a` joined to `x_a ± 1 mod side` on every axis. `2·dim`-regular;
/// bipartite iff `side` is even.
pub fn torus(dim: usize, side: usize) -> Result<Csr, Error> {
    Csr::from_neighbors(&Torus::new(dim, side)?)
}

/// The side of a `dim`-dimensional torus with exactly `n` vertices, if `n` is a perfect
/// `dim`-th power.
pub fn torus_side(n: usize, dim: usize) -> Result<usize, Error> {
    if dim == 0 {
        return Err(Error::invalid("dim", dim, "an integer >= 1"));
    }
    let guess = (n as f64).powf(1.0 / dim as f64).round() as usize;
    for side in guess.saturating_sub(1)..=guess + 1 {
        if (side as u128).checked_pow(dim as u32) == Some(n as u128) {
            return Ok(side);
        }
    }
    Err(Error::invalid("n", n, format!("a perfect {dim}-th power for a {dim}-dimensional torus")))
}

/// The hypercube `Q_dim` (`1 <= dim <= 31`), materialised from the implicit
/// [`Hypercube`]: `2^dim` vertices, `u ~ v` iff they differ in one bit. `dim`-regular,
/// bipartite.
pub fn hypercube(dim: usize) -> Result<Csr, Error> {
    Csr::from_neighbors(&Hypercube::new(dim)?)
}

/// The dimension of a hypercube with exactly `n` vertices, if `n` is a power of two `>= 2`.
pub fn hypercube_dim(n: usize) -> Result<usize, Error> {
    if n >= 2 && n.is_power_of_two() {
        Ok(n.trailing_zeros() as usize)
    } else {
        Err(Error::invalid("n", n, "a power of two >= 2 for a hypercube"))
    }
}

/// The star `K_{1, n−1}` (`n >= 2`): vertex 0 joined to every other vertex.
pub fn star(n: usize) -> Result<Csr, Error> {
    check_n(n, 2)?;
    let edges: Vec<(u32, u32)> = (1..n as u32).map(|i| (0, i)).collect();
    Csr::from_edges(n, &edges)
}

/// Parameters of [`random_regular`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegularParams {
    /// Number of vertices.
    pub n: usize,
    /// Degree (`1 <= d < n`, `n·d` even).
    pub d: usize,
    /// Pairings to try before giving up (default 1000). A pairing is simple with probability
    /// about `exp(−(d²−1)/4)`: 0.14 for d = 3, 0.024 for d = 4, 0.0025 for d = 5.
    pub max_attempts: u32,
}

impl RegularParams {
    /// `n` vertices of degree `d`, 1000 attempts.
    pub fn new(n: usize, d: usize) -> Self {
        Self { n, d, max_attempts: 1000 }
    }
}

/// A uniformly random simple `d`-regular graph by the configuration model with rejection.
///
/// Each attempt builds a uniform perfect matching of the `n·d` half-edges ("stubs"; vertex
/// `v` owns stubs `v·d..(v+1)·d`) incrementally: the first unmatched stub is paired with a
/// uniformly random unmatched stub (`below` on the number left). The attempt is abandoned at
/// the first loop or repeated edge, and a new one starts with fresh randomness. Conditioned on
/// simplicity the matching is uniform, and every simple graph arises from the same number
/// `(d!)^n` of matchings, so the result is uniform over simple `d`-regular graphs.
/// Expected attempts: about `exp((d²−1)/4)`; cost per attempt O(n·d²) at most.
pub fn random_regular<R: RngCore + ?Sized>(p: &RegularParams, rng: &mut R) -> Result<Csr, Error> {
    let RegularParams { n, d, max_attempts } = *p;
    check_n(n, 2)?;
    if d == 0 || d >= n {
        return Err(Error::invalid("d", d, format!("an integer in 1..{n} (n = {n})")));
    }
    if (n * d) % 2 == 1 {
        return Err(Error::invalid("d", d, format!("a degree with n·d even (n = {n})")));
    }
    if n as u64 * d as u64 > u64::from(u32::MAX) {
        return Err(Error::TooLarge(format!("{n}·{d} stubs")));
    }
    if max_attempts == 0 {
        return Err(Error::invalid("max_attempts", 0, "an integer >= 1"));
    }
    let len = n * d;
    let mut stubs: Vec<u32> = Vec::with_capacity(len);
    let mut adjacency = vec![0u32; len];
    let mut filled = vec![0u32; n];
    'attempt: for _ in 0..max_attempts {
        stubs.clear();
        stubs.extend((0..n as u32).flat_map(|v| std::iter::repeat_n(v, d)));
        filled.fill(0);
        let mut i = 0;
        while i < len {
            let j = i + 1 + below(rng, (len - i - 1) as u64) as usize;
            stubs.swap(i + 1, j);
            let (a, b) = (stubs[i] as usize, stubs[i + 1] as usize);
            if a == b || adjacency[a * d..a * d + filled[a] as usize].contains(&(b as u32)) {
                continue 'attempt;
            }
            adjacency[a * d + filled[a] as usize] = b as u32;
            filled[a] += 1;
            adjacency[b * d + filled[b] as usize] = a as u32;
            filled[b] += 1;
            i += 2;
        }
        return Ok(Csr::from_regular_lists(n, d, adjacency));
    }
    Err(Error::RegularRejected {
        n,
        d,
        attempts: max_attempts,
        p_simple: (-((d * d) as f64 - 1.0) / 4.0).exp(),
    })
}

/// What to do when a G(n, p) sample is disconnected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connectivity {
    /// Keep the largest component (ties: the one with the smallest vertex), relabelled
    /// `0..k` in increasing order of the original ids. The graph then has `k <= n` vertices.
    GiantComponent,
    /// Draw afresh until the sample is connected, at most `max_attempts` times (1 = reject a
    /// disconnected sample with an error). The result is G(n, p) conditioned on connectivity.
    Resample {
        /// Samples to draw before giving up.
        max_attempts: u32,
    },
}

/// Erdős–Rényi G(n, p): every pair joined independently with probability `p`, generated in
/// O(n + edges) by geometric skipping (Batagelj & Brandes 2005), then made connected as
/// `connectivity` says.
///
/// Pairs `(v, w)`, `w < v`, are visited in the order `(1,0), (2,0), (2,1), (3,0), …`; the gap
/// to the next edge is `⌊ln U / ln(1 − p)⌋` with `U` uniform in `(0, 1]` from 53 random bits.
/// (Values rely on `f64::ln`, which is correctly rounded on all mainstream platforms in
/// practice but not guaranteed by IEEE 754.)
pub fn erdos_renyi<R: RngCore + ?Sized>(
    n: usize,
    p: f64,
    connectivity: Connectivity,
    rng: &mut R,
) -> Result<Csr, Error> {
    check_n(n, 1)?;
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::invalid("p", p, "a probability in [0, 1]"));
    }
    match connectivity {
        Connectivity::GiantComponent => Ok(giant_component(&gnp(n, p, rng)?)),
        Connectivity::Resample { max_attempts } => {
            if max_attempts == 0 {
                return Err(Error::invalid("max_attempts", 0, "an integer >= 1"));
            }
            let mut last = 0;
            for _ in 0..max_attempts {
                let g = gnp(n, p, rng)?;
                let c = components(&g);
                if c.count == 1 {
                    return Ok(g);
                }
                last = c.count;
            }
            Err(Error::Disconnected {
                n,
                p,
                attempts: max_attempts,
                components: last,
                threshold: (n as f64).ln() / n as f64,
            })
        }
    }
}

/// One raw G(n, p) sample (possibly disconnected, isolated vertices kept), generated as
/// [`erdos_renyi`] describes.
pub fn gnp<R: RngCore + ?Sized>(n: usize, p: f64, rng: &mut R) -> Result<Csr, Error> {
    check_n(n, 1)?;
    if !(0.0..=1.0).contains(&p) {
        return Err(Error::invalid("p", p, "a probability in [0, 1]"));
    }
    Csr::from_edges(n, &gnp_edges(n, p, rng)?)
}

/// The edges of one G(n, p) sample, by geometric skipping.
fn gnp_edges<R: RngCore + ?Sized>(n: usize, p: f64, rng: &mut R) -> Result<Vec<(u32, u32)>, Error> {
    let pairs = n as u64 * (n as u64 - 1) / 2;
    let expected = p * pairs as f64;
    if expected > f64::from(u32::MAX / 2) {
        return Err(Error::TooLarge(format!("G({n}, {p}) has about {expected:.3e} edges")));
    }
    let mut edges = Vec::with_capacity((expected * 1.01 + 16.0) as usize);
    if p == 0.0 || n < 2 {
        return Ok(edges);
    }
    if p == 1.0 {
        for v in 1..n as u32 {
            for w in 0..v {
                edges.push((v, w));
            }
        }
        return Ok(edges);
    }
    let log_q = (-p).ln_1p();
    let (mut v, mut w) = (1u64, 0u64);
    let mut index = 0u64; // linear index of pair (v, w)
    let mut first = true;
    loop {
        let u = ((rng.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64);
        let skip = (u.ln() / log_q).floor();
        let step = if first { skip } else { skip + 1.0 };
        first = false;
        if step >= (pairs - index) as f64 {
            break;
        }
        let step = step as u64;
        index += step;
        if index >= pairs {
            break;
        }
        w += step;
        while w >= v {
            w -= v;
            v += 1;
        }
        edges.push((v as u32, w as u32));
    }
    Ok(edges)
}

/// The largest connected component of `g` (ties: the one containing the smallest vertex),
/// relabelled `0..k` in increasing order of the original ids.
pub fn giant_component(g: &Csr) -> Csr {
    let c = components(g);
    if c.count <= 1 {
        return g.clone();
    }
    let mut sizes = vec![0usize; c.count];
    for &l in &c.label {
        sizes[l as usize] += 1;
    }
    // Labels are numbered in order of their smallest vertex: the first maximum wins ties.
    let mut best = 0;
    for (l, &s) in sizes.iter().enumerate() {
        if s > sizes[best] {
            best = l;
        }
    }
    let mut new_id = vec![u32::MAX; g.n_vertices()];
    let mut k = 0u32;
    for (v, &l) in c.label.iter().enumerate() {
        if l as usize == best {
            new_id[v] = k;
            k += 1;
        }
    }
    let edges: Vec<(u32, u32)> = g
        .edges()
        .filter(|&(u, _)| new_id[u as usize] != u32::MAX)
        .map(|(u, v)| (new_id[u as usize], new_id[v as usize]))
        .collect();
    Csr::from_edges(k as usize, &edges).expect("a subgraph of a valid graph is valid")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torus_side_and_hypercube_dim_invert_the_sizes() {
        assert_eq!(torus_side(1 << 16, 2).unwrap(), 256);
        assert_eq!(torus_side(4096, 3).unwrap(), 16);
        assert!(torus_side(1000, 2).is_err());
        assert_eq!(hypercube_dim(1 << 20).unwrap(), 20);
        assert!(hypercube_dim(1000).is_err());
    }

    #[test]
    fn gnp_with_p_one_is_complete_and_p_zero_empty() {
        let mut rng = ballast_core::sim_rng(3);
        assert_eq!(gnp_edges(6, 1.0, &mut rng).unwrap().len(), 15);
        assert!(gnp_edges(6, 0.0, &mut rng).unwrap().is_empty());
    }
}
