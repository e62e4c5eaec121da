//! Graph capabilities (small traits) and the two stores: [`Csr`] (compressed sparse rows) and
//! the implicit [`Complete`] graph.
//!
//! Conventions, shared by every store:
//!
//! - vertices are `0..n_vertices()` (at most `u32::MAX` of them);
//! - graphs are undirected; multi-edges count with multiplicity and a loop `{u, u}` counts as
//!   one edge that contributes 2 to `degree(u)` and appears twice in `neighbors(u)` (so the sum
//!   of degrees is `2 · n_edges()`);
//! - [`SampleEdge::sample_edge`] returns every edge with probability `1 / n_edges()`, as an
//!   ordered pair whose orientation is a fair coin (equivalently: a uniform *arc*, each edge
//!   giving the two arcs `u → v` and `v → u`). Hence the first endpoint of a sample is a random
//!   endpoint of a uniform edge, i.e. a vertex drawn proportionally to its degree.
//!
//! Bounded integers are drawn exactly with Lemire's multiply-shift and rejection
//! ([`ballast_core::rng::below_from_word`] on 32-bit halves of one 64-bit draw), never by
//! modulo.

use ballast_core::rng::below_from_word;
use rand::RngCore;

use crate::Error;

/// The size of a graph.
pub trait Graph {
    /// Number of vertices.
    fn n_vertices(&self) -> usize;
    /// Number of undirected edges (multi-edges with multiplicity, a loop counts once).
    fn n_edges(&self) -> u64;
}

/// Adjacency: who is next to whom.
pub trait Neighbors: Graph {
    /// Iterator over the neighbours of one vertex.
    type Iter<'a>: Iterator<Item = usize>
    where
        Self: 'a;
    /// The neighbours of `v` (with multiplicity; a loop lists `v` twice).
    fn neighbors(&self, v: usize) -> Self::Iter<'_>;
    /// The degree of `v` (the length of [`Neighbors::neighbors`]).
    fn degree(&self, v: usize) -> usize;
}

/// Uniform edge sampling: the capability graphical processes need.
pub trait SampleEdge: Graph {
    /// A uniformly random edge as `(u, v)`, orientation uniform (see the module docs).
    ///
    /// # Panics
    /// May panic (or loop) if the graph has no edges; callers check [`Graph::n_edges`].
    fn sample_edge<R: RngCore + ?Sized>(&self, rng: &mut R) -> (usize, usize);
}

/// How a [`Csr`] samples arcs.
#[derive(Clone, Debug)]
enum Sampler {
    /// Every vertex has degree `d`: a uniform vertex and a uniform slot of its list.
    Regular { d: u32 },
    /// General graphs: a uniform arc index into the edge list (`k / 2` = edge, `k % 2` =
    /// orientation).
    Arcs { edges: Vec<[u32; 2]> },
}

/// A graph in compressed sparse row form: `targets[offsets[v]..offsets[v + 1]]` are the
/// neighbours of `v`.
///
/// Memory: 4 bytes per arc plus 4 per vertex, and for graphs that are not regular another
/// 4 bytes per arc for the sampler's edge list. Regular graphs sample an edge with one random
/// word and one memory access (a uniform vertex and a uniform slot of its list).
#[derive(Clone, Debug)]
pub struct Csr {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    n_edges: u64,
    sampler: Sampler,
}

impl Csr {
    /// Builds the graph on `n` vertices with the given undirected edges (loops and parallel
    /// edges allowed, see the module conventions). Neighbour lists keep the order of `edges`.
    ///
    /// Errors if an endpoint is `>= n`, if `n > u32::MAX`, or if there are `2^31` edges or more.
    pub fn from_edges(n: usize, edges: &[(u32, u32)]) -> Result<Self, Error> {
        if n > u32::MAX as usize {
            return Err(Error::TooLarge(format!("{n} vertices (at most {})", u32::MAX)));
        }
        let arcs = 2 * edges.len() as u64;
        if arcs > u64::from(u32::MAX) {
            return Err(Error::TooLarge(format!(
                "{} edges (at most {})",
                edges.len(),
                u32::MAX / 2
            )));
        }
        let mut degree = vec![0u32; n + 1];
        for (k, &(u, v)) in edges.iter().enumerate() {
            for w in [u, v] {
                if w as usize >= n {
                    return Err(Error::invalid(
                        "edge endpoint",
                        format!("{w} (edge #{k}: {{{u}, {v}}})"),
                        format!("a vertex id below n = {n}"),
                    ));
                }
            }
            degree[u as usize] += 1;
            degree[v as usize] += 1;
        }
        let mut offsets = vec![0u32; n + 1];
        for v in 0..n {
            offsets[v + 1] = offsets[v] + degree[v];
        }
        let mut fill: Vec<u32> = offsets[..n].to_vec();
        let mut targets = vec![0u32; arcs as usize];
        for &(u, v) in edges {
            targets[fill[u as usize] as usize] = v;
            fill[u as usize] += 1;
            targets[fill[v as usize] as usize] = u;
            fill[v as usize] += 1;
        }
        let regular = n > 0 && degree[..n].iter().all(|&d| d == degree[0]);
        let sampler = if regular {
            Sampler::Regular { d: degree[0] }
        } else {
            Sampler::Arcs { edges: edges.iter().map(|&(u, v)| [u, v]).collect() }
        };
        Ok(Self { offsets, targets, n_edges: edges.len() as u64, sampler })
    }

    /// Materialises any graph given by neighbour lists (for example an implicit lattice),
    /// keeping each vertex's neighbour order. The lists must be symmetric, as the
    /// [`Neighbors`] contract says.
    pub fn from_neighbors<G: Neighbors + ?Sized>(g: &G) -> Result<Self, Error> {
        let n = g.n_vertices();
        if n > u32::MAX as usize {
            return Err(Error::TooLarge(format!("{n} vertices (at most {})", u32::MAX)));
        }
        let arcs: u64 = (0..n).map(|v| g.degree(v) as u64).sum();
        if arcs > u64::from(u32::MAX) {
            return Err(Error::TooLarge(format!("{arcs} arcs (at most {})", u32::MAX)));
        }
        let mut offsets = Vec::with_capacity(n + 1);
        let mut targets = Vec::with_capacity(arcs as usize);
        offsets.push(0u32);
        for v in 0..n {
            targets.extend(g.neighbors(v).map(|w| w as u32));
            offsets.push(targets.len() as u32);
        }
        let d0 = offsets.get(1).copied().unwrap_or(0);
        let regular = n > 0 && (0..n).all(|v| offsets[v + 1] - offsets[v] == d0);
        let mut csr =
            Self { offsets, targets, n_edges: arcs / 2, sampler: Sampler::Regular { d: d0 } };
        if !regular {
            let edges = csr.edges().map(|(u, v)| [u, v]).collect();
            csr.sampler = Sampler::Arcs { edges };
        }
        Ok(csr)
    }

    /// Builds a `d`-regular graph from its neighbour lists: `adjacency[v * d..(v + 1) * d]`
    /// lists the neighbours of `v`. The caller guarantees symmetry (used by generators).
    pub(crate) fn from_regular_lists(n: usize, d: usize, adjacency: Vec<u32>) -> Self {
        debug_assert_eq!(adjacency.len(), n * d);
        let offsets = (0..=n).map(|v| (v * d) as u32).collect();
        Self {
            offsets,
            targets: adjacency,
            n_edges: (n * d / 2) as u64,
            sampler: Sampler::Regular { d: d as u32 },
        }
    }

    /// The neighbours of `v` as a slice of vertex ids.
    #[inline]
    pub fn neighbor_slice(&self, v: usize) -> &[u32] {
        &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// The common degree if every vertex has the same degree.
    pub fn regular_degree(&self) -> Option<usize> {
        match self.sampler {
            Sampler::Regular { d } => Some(d as usize),
            Sampler::Arcs { .. } => None,
        }
    }

    /// Every undirected edge once, as `(u, v)` with `u <= v` (parallel edges repeated).
    pub fn edges(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.n_vertices()).flat_map(move |u| {
            let mut loops = 0u32;
            self.neighbor_slice(u).iter().filter_map(move |&v| {
                let u32_u = u as u32;
                if u32_u < v {
                    Some((u32_u, v))
                } else if u32_u == v {
                    // A loop is listed twice: report every second occurrence.
                    loops += 1;
                    (loops % 2 == 0).then_some((u32_u, v))
                } else {
                    None
                }
            })
        })
    }
}

impl Graph for Csr {
    #[inline]
    fn n_vertices(&self) -> usize {
        self.offsets.len() - 1
    }
    #[inline]
    fn n_edges(&self) -> u64 {
        self.n_edges
    }
}

/// Iterator over the neighbours of one vertex of a [`Csr`].
#[derive(Clone, Debug)]
pub struct CsrNeighbors<'a>(std::slice::Iter<'a, u32>);

impl Iterator for CsrNeighbors<'_> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        self.0.next().map(|&w| w as usize)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for CsrNeighbors<'_> {}

impl Neighbors for Csr {
    type Iter<'a> = CsrNeighbors<'a>;

    #[inline]
    fn neighbors(&self, v: usize) -> CsrNeighbors<'_> {
        CsrNeighbors(self.neighbor_slice(v).iter())
    }
    #[inline]
    fn degree(&self, v: usize) -> usize {
        (self.offsets[v + 1] - self.offsets[v]) as usize
    }
}

impl SampleEdge for Csr {
    #[inline]
    fn sample_edge<R: RngCore + ?Sized>(&self, rng: &mut R) -> (usize, usize) {
        match &self.sampler {
            Sampler::Regular { d } => {
                let n = (self.offsets.len() - 1) as u32;
                loop {
                    // Two independent 32-bit halves: a uniform vertex and a uniform slot.
                    let w = rng.next_u64();
                    if let (Some(u), Some(j)) =
                        (below_from_word(w as u32, n), below_from_word((w >> 32) as u32, *d))
                    {
                        // Regular: the list of u starts at u·d (no dependent offsets load).
                        let v = self.targets[(u as usize) * (*d as usize) + j as usize];
                        return (u as usize, v as usize);
                    }
                }
            }
            Sampler::Arcs { edges } => {
                let arcs = (2 * edges.len()) as u32;
                loop {
                    if let Some(k) = below_from_word(rng.next_u32(), arcs) {
                        let [u, v] = edges[(k >> 1) as usize];
                        return if k & 1 == 0 {
                            (u as usize, v as usize)
                        } else {
                            (v as usize, u as usize)
                        };
                    }
                }
            }
        }
    }
}

/// The complete graph `K_n` (no loops), stored implicitly: O(1) memory for any `n`.
/// An edge sample is a uniform ordered pair of distinct vertices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Complete {
    n: usize,
}

impl Complete {
    /// `K_n` for `2 <= n <= u32::MAX`.
    pub fn new(n: usize) -> Result<Self, Error> {
        if !(2..=u32::MAX as usize).contains(&n) {
            return Err(Error::invalid("n", n, format!("an integer in 2..={}", u32::MAX)));
        }
        Ok(Self { n })
    }

    /// Materialises `K_n` as a [`Csr`] (n(n−1)/2 edges: for small `n` only).
    pub fn to_csr(&self) -> Result<Csr, Error> {
        let n = self.n as u64;
        if n * (n - 1) / 2 > u64::from(u32::MAX / 2) {
            return Err(Error::TooLarge(format!("K_{n} has {} edges", n * (n - 1) / 2)));
        }
        let mut edges = Vec::with_capacity((n * (n - 1) / 2) as usize);
        for u in 0..self.n as u32 {
            for v in u + 1..self.n as u32 {
                edges.push((u, v));
            }
        }
        Csr::from_edges(self.n, &edges)
    }
}

impl Graph for Complete {
    #[inline]
    fn n_vertices(&self) -> usize {
        self.n
    }
    #[inline]
    fn n_edges(&self) -> u64 {
        let n = self.n as u64;
        n * (n - 1) / 2
    }
}

impl Neighbors for Complete {
    type Iter<'a> = std::iter::Chain<std::ops::Range<usize>, std::ops::Range<usize>>;

    fn neighbors(&self, v: usize) -> Self::Iter<'_> {
        (0..v).chain(v + 1..self.n)
    }
    fn degree(&self, _v: usize) -> usize {
        self.n - 1
    }
}

impl SampleEdge for Complete {
    #[inline]
    fn sample_edge<R: RngCore + ?Sized>(&self, rng: &mut R) -> (usize, usize) {
        // u uniform over n and v uniform over the n − 1 others, from the two 32-bit halves of
        // one word (both accepted, or a fresh word).
        let n = self.n as u32;
        loop {
            let w = rng.next_u64();
            if let (Some(u), Some(v)) =
                (below_from_word(w as u32, n), below_from_word((w >> 32) as u32, n - 1))
            {
                return (u as usize, if v >= u { v as usize + 1 } else { v as usize });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csr_lists_loops_twice_and_reports_edges_once() {
        let g = Csr::from_edges(3, &[(0, 1), (1, 1), (1, 2), (0, 1)]).unwrap();
        assert_eq!(g.n_edges(), 4);
        assert_eq!(g.degree(1), 5);
        assert_eq!(g.neighbor_slice(1), &[0, 1, 1, 2, 0]);
        let mut e: Vec<_> = g.edges().collect();
        e.sort_unstable();
        assert_eq!(e, vec![(0, 1), (0, 1), (1, 1), (1, 2)]);
        assert!(g.regular_degree().is_none());
    }

    #[test]
    fn csr_rejects_out_of_range_endpoints() {
        let err = Csr::from_edges(2, &[(0, 2)]).unwrap_err();
        assert!(err.to_string().contains("below n = 2"), "{err}");
    }

    #[test]
    fn complete_samples_distinct_endpoints() {
        let g = Complete::new(3).unwrap();
        let mut rng = ballast_core::sim_rng(1);
        for _ in 0..1000 {
            let (u, v) = g.sample_edge(&mut rng);
            assert!(u != v && u < 3 && v < 3);
        }
        assert_eq!(g.n_edges(), 3);
        assert_eq!(g.neighbors(1).collect::<Vec<_>>(), vec![0, 2]);
    }
}
