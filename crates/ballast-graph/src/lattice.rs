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
    /// Per axis `a >= 1`: the Lemire–Kaser–Kurz constant `⌈2^64 / side^a⌉` for exact division
    /// of 32-bit numbers by a multiplication (0 on axis 0, which divides by 1).
    div: Vec<u64>,
    /// `⌈2^64 / side⌉`, for `q mod side` by multiplications.
    modulo: u64,
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
        let strides: Vec<usize> = (0..dim as u32).map(|a| side.pow(a)).collect();
        let div =
            strides.iter().map(|&s| if s == 1 { 0 } else { u64::MAX / s as u64 + 1 }).collect();
        let modulo = u64::MAX / side as u64 + 1;
        Ok(Self { side, n: n as usize, strides, div, modulo })
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
        // Branch-free: the axis and the direction are random bits, so branches on them would
        // be mispredicted half the time.
        let a = j >> 1;
        let s = self.strides[a];
        // x_a = (u / side^a) mod side by multiplications (exact for 32-bit u: Lemire, Kaser &
        // Kurz 2019); on axis 0 the quotient is u itself (`keep` is all ones there).
        let keep = 0u64.wrapping_sub(u64::from(a == 0));
        let q = ((u128::from(self.div[a]) * u as u128) >> 64) as u64 | (u as u64 & keep);
        let low = self.modulo.wrapping_mul(q);
        let x = ((u128::from(low) * self.side as u128) >> 64) as usize;
        let wrap = self.side * s;
        let down = u.wrapping_sub(s).wrapping_add(usize::from(x == 0) * wrap);
        let up = (u + s).wrapping_sub(usize::from(x == self.side - 1) * wrap);
        let pick_up = 0usize.wrapping_sub(j & 1);
        down ^ ((down ^ up) & pick_up)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The multiplicative coordinates agree with plain division, up to the largest ids.
    #[test]
    fn torus_slots_match_naive_arithmetic_for_large_ids() {
        let mut rng = ballast_core::sim_rng(5);
        for (dim, side) in [(2, 65_535), (3, 1_625), (4, 255), (20, 3), (1, u32::MAX as usize)] {
            let t = Torus::new(dim, side).unwrap();
            for k in 0..20_000u64 {
                let u = if k < 4 {
                    [0, t.n - 1, t.n / 2, side][k as usize]
                } else {
                    ballast_core::rng::below(&mut rng, t.n as u64) as usize
                };
                for j in 0..2 * dim {
                    let s = side.pow((j / 2) as u32);
                    let x = (u / s) % side;
                    let want = if j % 2 == 0 {
                        if x == 0 {
                            u + (side - 1) * s
                        } else {
                            u - s
                        }
                    } else if x == side - 1 {
                        u - (side - 1) * s
                    } else {
                        u + s
                    };
                    assert_eq!(t.slot(u, j), want, "dim {dim} side {side} u {u} j {j}");
                }
            }
        }
    }
}
