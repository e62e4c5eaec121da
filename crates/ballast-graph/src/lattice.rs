//! Implicit lattices: the `dim`-dimensional torus (the cycle is `dim = 1`) and the
//! hypercube. Neighbours are computed arithmetically, so memory is O(dim) and an edge sample
//! touches no adjacency array: at n = 10⁶ a Two-Choice step costs what core Two-Choice costs
//! (the two load reads), against two dependent cache misses for a [`crate::Csr`].
//!
//! Neighbour slot `j` of `u` is fixed: torus axis `j / 2`, down (`j` even) or up (`j` odd);
//! hypercube bit `j`. Edge sampling draws `u` and `j` exactly as a regular [`crate::Csr`]
//! does (two 32-bit halves of one word), and the generators materialise these lists in the
//! same order, so an implicit lattice and its CSR give the same samples draw for draw.

use ballast_core::rng::below_from_word;
use rand::RngCore;

use crate::graph::{Graph, Neighbors, SampleEdge};
use crate::Error;

/// Graphs whose neighbour lists are computed slot by slot.
trait Slotted {
    /// The `j`-th neighbour of `u`.
    fn slot(&self, u: usize, j: usize) -> usize;
    /// Number of slots (the degree).
    fn slots(&self) -> usize;
}

/// Iterator over the neighbour slots of one vertex.
#[derive(Clone, Debug)]
pub struct Slots<'a, T> {
    graph: &'a T,
    u: usize,
    j: usize,
    d: usize,
    slot: fn(&T, usize, usize) -> usize,
}

impl<T> Iterator for Slots<'_, T> {
    type Item = usize;

    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.j < self.d {
            self.j += 1;
            Some((self.slot)(self.graph, self.u, self.j - 1))
        } else {
            None
        }
    }
}

/// Draws a uniform vertex below `n` and a uniform slot below `d` from the two halves of one
/// word (the regular-CSR scheme).
#[inline]
fn vertex_and_slot<R: RngCore + ?Sized>(rng: &mut R, n: u32, d: u32) -> (usize, usize) {
    loop {
        let w = rng.next_u64();
        if let (Some(u), Some(j)) =
            (below_from_word(w as u32, n), below_from_word((w >> 32) as u32, d))
        {
            return (u as usize, j as usize);
        }
    }
}

/// The `dim`-dimensional torus with `side >= 3` vertices per axis (`dim = 1`: the cycle).
/// Vertex `v = Σ x_a · side^a` is joined to `x_a ± 1 mod side` on every axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Torus {
    side: usize,
    n: usize,
    strides: Vec<usize>,
}

impl Torus {
    /// The torus `side^dim` (`dim >= 1`, `side >= 3`, at most `u32::MAX` vertices).
    pub fn new(dim: usize, side: usize) -> Result<Self, Error> {
        if dim == 0 || dim > 32 {
            return Err(Error::invalid("dim", dim, "an integer in 1..=32"));
        }
        if side < 3 {
            return Err(Error::invalid(
                "side",
                side,
                "an integer >= 3 (smaller sides repeat edges)",
            ));
        }
        let n = (side as u128).checked_pow(dim as u32).filter(|&n| n <= u128::from(u32::MAX));
        let Some(n) = n else {
            return Err(Error::TooLarge(format!("{side}^{dim} vertices (at most {})", u32::MAX)));
        };
        let strides = (0..dim as u32).map(|a| side.pow(a)).collect();
        Ok(Self { side, n: n as usize, strides })
    }

    /// The cycle `C_n` (`n >= 3`) as the one-dimensional torus.
    pub fn cycle(n: usize) -> Result<Self, Error> {
        if n < 3 {
            return Err(Error::invalid("n", n, format!("an integer in 3..={}", u32::MAX)));
        }
        Self::new(1, n)
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.strides.len()
    }

    /// Vertices per axis.
    pub fn side(&self) -> usize {
        self.side
    }
}

impl Slotted for Torus {
    #[inline]
    fn slot(&self, u: usize, j: usize) -> usize {
        let s = self.strides[j >> 1];
        let x = if self.strides.len() == 1 { u } else { (u / s) % self.side };
        if j & 1 == 0 {
            if x == 0 {
                u + (self.side - 1) * s
            } else {
                u - s
            }
        } else if x == self.side - 1 {
            u - (self.side - 1) * s
        } else {
            u + s
        }
    }
    #[inline]
    fn slots(&self) -> usize {
        2 * self.strides.len()
    }
}

/// The hypercube `Q_dim` (`1 <= dim <= 31`): `u ~ v` iff they differ in one bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hypercube {
    dim: usize,
}

impl Hypercube {
    /// `Q_dim`.
    pub fn new(dim: usize) -> Result<Self, Error> {
        if !(1..=31).contains(&dim) {
            return Err(Error::invalid("dim", dim, "an integer in 1..=31"));
        }
        Ok(Self { dim })
    }

    /// Number of dimensions.
    pub fn dim(&self) -> usize {
        self.dim
    }
}

impl Slotted for Hypercube {
    #[inline]
    fn slot(&self, u: usize, j: usize) -> usize {
        u ^ (1 << j)
    }
    #[inline]
    fn slots(&self) -> usize {
        self.dim
    }
}

macro_rules! implicit_regular {
    ($t:ty, $n:expr) => {
        impl Graph for $t {
            #[inline]
            fn n_vertices(&self) -> usize {
                $n(self)
            }
            #[inline]
            fn n_edges(&self) -> u64 {
                (self.n_vertices() * self.slots() / 2) as u64
            }
        }

        impl Neighbors for $t {
            type Iter<'a> = Slots<'a, $t>;

            #[inline]
            fn neighbors(&self, v: usize) -> Slots<'_, $t> {
                Slots { graph: self, u: v, j: 0, d: self.slots(), slot: <$t as Slotted>::slot }
            }
            #[inline]
            fn degree(&self, _v: usize) -> usize {
                self.slots()
            }
        }

        impl SampleEdge for $t {
            #[inline]
            fn sample_edge<R: RngCore + ?Sized>(&self, rng: &mut R) -> (usize, usize) {
                let (u, j) = vertex_and_slot(rng, self.n_vertices() as u32, self.slots() as u32);
                (u, self.slot(u, j))
            }
        }
    };
}

implicit_regular!(Torus, |t: &Torus| t.n);
implicit_regular!(Hypercube, |h: &Hypercube| 1usize << h.dim);
