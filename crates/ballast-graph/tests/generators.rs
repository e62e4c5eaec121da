//! Structural properties of every generator (vertex and edge counts, degrees, simplicity,
//! connectivity, bipartiteness), uniformity of the random generators (seeded chi-square at
//! `common::ALPHA`), and pinned values for fixed seeds.

mod common;

use std::collections::{BTreeSet, HashMap};

use ballast_core::sim_rng;
use ballast_graph::analysis::{components, degree_stats, is_bipartite, is_connected};
use ballast_graph::generate::{
    cycle, erdos_renyi, gnp, hypercube, random_regular, star, torus, Connectivity, RegularParams,
};
use ballast_graph::{Complete, Csr, Error, Graph, Neighbors};
use common::{chi2_critical, chi2_gof};

/// No loops and no parallel edges.
fn is_simple(g: &Csr) -> bool {
    (0..g.n_vertices()).all(|v| {
        let set: BTreeSet<u32> = g.neighbor_slice(v).iter().copied().collect();
        set.len() == g.degree(v) && !set.contains(&(v as u32))
    })
}

/// Every arc has its reverse (symmetric adjacency).
fn is_symmetric(g: &Csr) -> bool {
    let mut arcs: HashMap<(u32, u32), i64> = HashMap::new();
    for u in 0..g.n_vertices() {
        for &v in g.neighbor_slice(u) {
            *arcs.entry((u as u32, v)).or_default() += 1;
        }
    }
    arcs.iter().all(|(&(u, v), &c)| arcs.get(&(v, u)) == Some(&c))
}

fn regular(g: &Csr, d: usize) {
    let s = degree_stats(g);
    assert_eq!((s.min, s.max), (d, d));
    assert_eq!(g.regular_degree(), Some(d));
    assert_eq!(2 * g.n_edges(), (d * g.n_vertices()) as u64);
}

#[test]
fn cycle_structure() {
    for n in [3, 4, 7, 10] {
        let g = cycle(n).unwrap();
        assert_eq!((g.n_vertices(), g.n_edges()), (n, n as u64));
        regular(&g, 2);
        assert!(is_simple(&g) && is_symmetric(&g) && is_connected(&g));
        assert_eq!(is_bipartite(&g), n % 2 == 0, "n = {n}");
        for v in 0..n {
            let mut nb: Vec<u32> = g.neighbor_slice(v).to_vec();
            nb.sort_unstable();
            let mut want = vec![((v + 1) % n) as u32, ((v + n - 1) % n) as u32];
            want.sort_unstable();
            assert_eq!(nb, want);
        }
    }
    assert!(cycle(2).is_err());
}

#[test]
fn torus_structure() {
    for (dim, side) in [(1, 5), (2, 3), (2, 4), (3, 4), (2, 5), (4, 3)] {
        let g = torus(dim, side).unwrap();
        let n = side.pow(dim as u32);
        assert_eq!(g.n_vertices(), n);
        assert_eq!(g.n_edges(), (dim * n) as u64);
        regular(&g, 2 * dim);
        assert!(is_simple(&g) && is_symmetric(&g) && is_connected(&g), "{dim} {side}");
        assert_eq!(is_bipartite(&g), side % 2 == 0, "dim {dim} side {side}");
        // Neighbours differ in exactly one coordinate, by ±1 mod side.
        for v in 0..n {
            for &w in g.neighbor_slice(v) {
                let (mut a, mut b, mut diffs) = (v, w as usize, 0);
                for _ in 0..dim {
                    let (x, y) = (a % side, b % side);
                    if x != y {
                        diffs += 1;
                        assert!((x + 1) % side == y || (y + 1) % side == x);
                    }
                    a /= side;
                    b /= side;
                }
                assert_eq!(diffs, 1);
            }
        }
    }
    assert!(torus(2, 2).is_err());
    assert!(torus(0, 5).is_err());
}

#[test]
fn hypercube_structure() {
    for dim in 1..=8 {
        let g = hypercube(dim).unwrap();
        let n = 1usize << dim;
        assert_eq!((g.n_vertices(), g.n_edges()), (n, (dim * n / 2) as u64));
        regular(&g, dim);
        assert!(is_simple(&g) && is_symmetric(&g) && is_connected(&g) && is_bipartite(&g));
        for v in 0..n {
            for &w in g.neighbor_slice(v) {
                assert_eq!((v ^ w as usize).count_ones(), 1);
            }
        }
    }
}

#[test]
fn star_structure() {
    let g = star(10).unwrap();
    assert_eq!((g.n_vertices(), g.n_edges()), (10, 9));
    assert_eq!(g.degree(0), 9);
    assert!((1..10).all(|v| g.degree(v) == 1 && g.neighbor_slice(v) == [0]));
    assert!(is_simple(&g) && is_connected(&g) && is_bipartite(&g));
    assert!(g.regular_degree().is_none());
    assert!(star(1).is_err());
}

#[test]
fn complete_structure() {
    let g = Complete::new(6).unwrap();
    assert_eq!((g.n_vertices(), g.n_edges()), (6, 15));
    let c = g.to_csr().unwrap();
    assert_eq!(c.n_edges(), 15);
    regular(&c, 5);
    assert!(is_simple(&c) && is_connected(&c) && !is_bipartite(&c));
    assert!(is_bipartite(&Complete::new(2).unwrap().to_csr().unwrap()));
    for v in 0..6 {
        assert_eq!(g.neighbors(v).count(), 5);
        assert!(g.neighbors(v).all(|w| w != v));
    }
}

#[test]
fn random_regular_structure() {
    let mut rng = sim_rng(21);
    for (n, d) in [(1000, 3), (200, 4), (11, 4), (8, 3), (2, 1)] {
        let g = random_regular(&RegularParams::new(n, d), &mut rng).unwrap();
        assert_eq!((g.n_vertices(), g.n_edges()), (n, (n * d / 2) as u64));
        regular(&g, d);
        assert!(is_simple(&g) && is_symmetric(&g), "n {n} d {d}");
    }
    // Random 3-regular graphs are connected with high probability; this seed's is.
    let g = random_regular(&RegularParams::new(10_000, 3), &mut sim_rng(5)).unwrap();
    assert!(is_connected(&g));
}

#[test]
fn random_regular_errors_are_clear() {
    let mut rng = sim_rng(1);
    let odd = random_regular(&RegularParams::new(5, 3), &mut rng).unwrap_err();
    assert!(odd.to_string().contains("n·d even"), "{odd}");
    assert!(random_regular(&RegularParams::new(5, 5), &mut rng).is_err());
    // d = 12 on 40 vertices: a pairing is simple with probability about e^{-35.75}.
    let p = RegularParams { n: 40, d: 12, max_attempts: 20 };
    let err = random_regular(&p, &mut rng).unwrap_err();
    assert!(matches!(err, Error::RegularRejected { attempts: 20, .. }));
    let msg = err.to_string();
    assert!(msg.contains("all 20 attempts") && msg.contains("smaller d"), "{msg}");
}

/// The 70 labelled 2-regular graphs on 6 vertices (60 hexagons, 10 pairs of triangles) are
/// equally likely.
#[test]
fn random_regular_is_uniform_on_small_instances() {
    let mut rng = sim_rng(22);
    let mut counts: HashMap<Vec<(u32, u32)>, u64> = HashMap::new();
    let samples = 35_000;
    for _ in 0..samples {
        let g = random_regular(&RegularParams::new(6, 2), &mut rng).unwrap();
        let mut e: Vec<(u32, u32)> = g.edges().collect();
        e.sort_unstable();
        *counts.entry(e).or_default() += 1;
    }
    assert_eq!(counts.len(), 70);
    let observed: Vec<u64> = counts.values().copied().collect();
    let (stat, df) = chi2_gof(&observed, &[1.0 / 70.0; 70]);
    assert!(stat < chi2_critical(df), "chi2 = {stat:.1}, df = {df}");
}

/// Every pair of G(10, 0.3) is an edge independently with probability 0.3: the per-pair
/// counts over T samples give sum (c − Tp)² / (Tp(1−p)) ~ chi-square(45).
#[test]
fn gnp_pairs_are_independent_with_probability_p() {
    let (n, p, t) = (10usize, 0.3, 20_000u64);
    let mut rng = sim_rng(23);
    let mut counts = vec![0u64; n * n];
    let mut total_edges = 0u64;
    for _ in 0..t {
        let g = gnp(n, p, &mut rng).unwrap();
        total_edges += g.n_edges();
        for (u, v) in g.edges() {
            assert!(u < v);
            counts[u as usize * n + v as usize] += 1;
        }
    }
    let e = t as f64 * p;
    let mut stat = 0.0;
    for u in 0..n {
        for v in u + 1..n {
            stat += (counts[u * n + v] as f64 - e).powi(2) / (e * (1.0 - p));
        }
    }
    assert!(stat < chi2_critical(45), "chi2 = {stat:.1}");
    let mean = total_edges as f64 / t as f64;
    assert!((mean - 13.5).abs() < 0.1, "mean edges {mean}");
}

#[test]
fn gnp_large_has_the_right_edge_count() {
    // n = 10^5, p = 5/n: edges ~ Binomial(N, p), mean ≈ 249 997.5, sd ≈ 500.
    let n = 100_000usize;
    let p = 5.0 / n as f64;
    let g = gnp(n, p, &mut sim_rng(24)).unwrap();
    let mean = p * (n * (n - 1) / 2) as f64;
    assert!((g.n_edges() as f64 - mean).abs() < 5.0 * mean.sqrt(), "{}", g.n_edges());
}

#[test]
fn erdos_renyi_connectivity_options() {
    let mut rng = sim_rng(25);
    // c = 2: giant component of about 80 % of the vertices, connected by construction.
    let g = erdos_renyi(20_000, 2.0 / 20_000.0, Connectivity::GiantComponent, &mut rng).unwrap();
    assert!(is_connected(&g));
    let frac = g.n_vertices() as f64 / 20_000.0;
    assert!((0.75..0.85).contains(&frac), "giant fraction {frac}");
    assert!(is_symmetric(&g));
    // Well above ln n / n: connected after a few attempts.
    let p = 2.0 * (2000f64).ln() / 2000.0;
    let g = erdos_renyi(2000, p, Connectivity::Resample { max_attempts: 10 }, &mut rng).unwrap();
    assert_eq!((g.n_vertices(), components(&g).count), (2000, 1));
    // Far below: rejected with a clear error.
    let err = erdos_renyi(2000, 0.0005, Connectivity::Resample { max_attempts: 3 }, &mut rng)
        .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("disconnected in all 3 attempts") && msg.contains("ln(n)/n"), "{msg}");
}

/// Value stability: the first edges of the random generators for fixed seeds. Changing
/// them is a value-breaking change (CHANGELOG).
#[test]
fn random_generators_are_pinned() {
    let g = random_regular(&RegularParams::new(10, 3), &mut sim_rng(7)).unwrap();
    let first: Vec<(u32, u32)> = g.edges().take(6).collect();
    assert_eq!(first, PINNED_REGULAR);
    let g = gnp(50, 0.1, &mut sim_rng(7)).unwrap();
    let first: Vec<(u32, u32)> = g.edges().take(6).collect();
    assert_eq!((g.n_edges(), first.as_slice()), (PINNED_GNP.0, &PINNED_GNP.1[..]));
}

const PINNED_REGULAR: [(u32, u32); 6] = [(0, 2), (0, 9), (0, 3), (1, 7), (1, 5), (1, 9)];
const PINNED_GNP: (u64, [(u32, u32); 6]) =
    (131, [(0, 8), (0, 15), (0, 16), (0, 19), (0, 23), (0, 27)]);
