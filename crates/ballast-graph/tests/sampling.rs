//! Uniform edge sampling: for every store and sampler path, the sampled ordered pairs follow
//! the law "uniform edge (with multiplicity), fair orientation" (seeded chi-square at
//! `common::ALPHA`).

mod common;

use std::collections::BTreeMap;

use ballast_core::sim_rng;
use ballast_graph::generate::{hypercube, random_regular, star, torus, RegularParams};
use ballast_graph::{Complete, Csr, Graph, SampleEdge};
use common::{chi2_critical, chi2_gof};

/// Expected law of `sample_edge` over ordered pairs: each edge `{u, v}` gives `(u, v)` and
/// `(v, u)` probability `1 / (2|E|)` each; a loop `(u, u)` probability `1 / |E|`.
fn expected_law(g: &Csr) -> BTreeMap<(usize, usize), f64> {
    let e = g.n_edges() as f64;
    let mut law = BTreeMap::new();
    for (u, v) in g.edges() {
        let (u, v) = (u as usize, v as usize);
        if u == v {
            *law.entry((u, u)).or_insert(0.0) += 1.0 / e;
        } else {
            *law.entry((u, v)).or_insert(0.0) += 0.5 / e;
            *law.entry((v, u)).or_insert(0.0) += 0.5 / e;
        }
    }
    law
}

fn check<G: SampleEdge>(g: &G, law: &BTreeMap<(usize, usize), f64>, draws: u64, seed: u64) {
    let mut rng = sim_rng(seed);
    let mut counts: BTreeMap<(usize, usize), u64> = law.keys().map(|&k| (k, 0)).collect();
    for _ in 0..draws {
        let pair = g.sample_edge(&mut rng);
        *counts.get_mut(&pair).unwrap_or_else(|| panic!("sampled a non-edge {pair:?}")) += 1;
    }
    let observed: Vec<u64> = counts.values().copied().collect();
    let probs: Vec<f64> = law.values().copied().collect();
    let (stat, df) = chi2_gof(&observed, &probs);
    assert!(stat < chi2_critical(df), "chi2 = {stat:.1}, df = {df}");
}

#[test]
fn irregular_multigraph_with_a_loop() {
    // A star plus a doubled edge {1, 2} and a loop at 3: the general (edge-list) sampler.
    let mut edges: Vec<(u32, u32)> = (1..6).map(|i| (0, i)).collect();
    edges.extend([(1, 2), (2, 1), (3, 3)]);
    let g = Csr::from_edges(6, &edges).unwrap();
    assert!(g.regular_degree().is_none());
    check(&g, &expected_law(&g), 100_000, 31);
}

#[test]
fn star_graph() {
    let g = star(9).unwrap();
    check(&g, &expected_law(&g), 100_000, 32);
}

#[test]
fn regular_graphs() {
    // The regular sampler: a uniform vertex and a uniform slot, from the two halves of one
    // word; n = 25 and d = 4 are not powers of two (Lemire rejection paths), n = 32, d = 4 are.
    let g = torus(2, 5).unwrap();
    check(&g, &expected_law(&g), 100_000, 33);
    let g = hypercube(5).unwrap();
    check(&g, &expected_law(&g), 100_000, 34);
    let g = random_regular(&RegularParams::new(20, 3), &mut sim_rng(35)).unwrap();
    check(&g, &expected_law(&g), 100_000, 36);
}

#[test]
fn implicit_complete_graph() {
    let g = Complete::new(7).unwrap();
    let law = expected_law(&g.to_csr().unwrap());
    assert_eq!(law.len(), 42);
    check(&g, &law, 100_000, 37);
}

/// Implicit lattices sample exactly like their materialised CSR (same neighbour order, same
/// draws), so the chi-square tests of the CSR samplers cover them; neighbour lists agree too.
#[test]
fn implicit_lattices_match_their_csr_draw_for_draw() {
    use ballast_graph::{Hypercube, Neighbors, Torus};
    fn same<G: SampleEdge + Neighbors>(implicit: &G, csr: &Csr) {
        assert_eq!(implicit.n_vertices(), csr.n_vertices());
        assert_eq!(implicit.n_edges(), csr.n_edges());
        for v in 0..csr.n_vertices() {
            assert!(implicit.neighbors(v).eq(csr.neighbors(v)), "vertex {v}");
        }
        let (mut a, mut b) = (sim_rng(38), sim_rng(38));
        for _ in 0..10_000 {
            assert_eq!(implicit.sample_edge(&mut a), csr.sample_edge(&mut b));
        }
    }
    same(&Torus::cycle(11).unwrap(), &ballast_graph::generate::cycle(11).unwrap());
    same(&Torus::new(2, 5).unwrap(), &torus(2, 5).unwrap());
    same(&Torus::new(3, 4).unwrap(), &torus(3, 4).unwrap());
    same(&Hypercube::new(7).unwrap(), &hypercube(7).unwrap());
    // And the CSR built from explicit edges in the same order samples identically as well.
    let t = torus(2, 5).unwrap();
    let rebuilt = Csr::from_edges(25, &t.edges().collect::<Vec<_>>()).unwrap();
    assert_eq!(rebuilt.n_edges(), t.n_edges());
}
