//! The power-iteration spectral gap against closed formulas on small graphs, its
//! upper-bound property, and the exact values reported by `Topology::spectral_gap`.

mod common;

use std::f64::consts::PI;

use approx::assert_abs_diff_eq;
use ballast_core::sim_rng;
use ballast_graph::analysis::spectral_gap;
use ballast_graph::generate::{cycle, hypercube, random_regular, star, torus, RegularParams};
use ballast_graph::{Complete, Csr, GraphKind, PowerIteration, SpectralGap};
use common::{ROUNDING, SPECTRAL_TOL};

fn estimate(g: &Csr) -> f64 {
    let opts = PowerIteration { max_iterations: 20_000, tolerance: 1e-9, seed: 3 };
    spectral_gap(g, &opts).unwrap().gap
}

fn close_from_above(g: &Csr, exact: f64) {
    let est = estimate(g);
    assert!(est >= exact - ROUNDING, "estimate {est} below the exact {exact}");
    assert_abs_diff_eq!(est, exact, epsilon = SPECTRAL_TOL);
}

#[test]
fn power_iteration_matches_closed_forms() {
    close_from_above(&cycle(20).unwrap(), 1.0 - (2.0 * PI / 20.0).cos());
    close_from_above(&cycle(9).unwrap(), 1.0 - (2.0 * PI / 9.0).cos());
    close_from_above(&torus(2, 6).unwrap(), (1.0 - (2.0 * PI / 6.0).cos()) / 2.0);
    close_from_above(&torus(3, 3).unwrap(), (1.0 - (2.0 * PI / 3.0).cos()) / 3.0);
    close_from_above(&hypercube(6).unwrap(), 2.0 / 6.0);
    close_from_above(&Complete::new(10).unwrap().to_csr().unwrap(), 10.0 / 9.0);
    close_from_above(&star(10).unwrap(), 1.0);
    close_from_above(&star(2).unwrap(), 2.0);
    // Petersen graph: adjacency eigenvalues 3, 1, −2, so λ₂ = 1 − 1/3.
    let outer: Vec<(u32, u32)> = (0..5).map(|i| (i, (i + 1) % 5)).collect();
    let spokes: Vec<(u32, u32)> = (0..5).map(|i| (i, i + 5)).collect();
    let inner: Vec<(u32, u32)> = (0..5).map(|i| (5 + i, 5 + (i + 2) % 5)).collect();
    let petersen = Csr::from_edges(10, &[outer, spokes, inner].concat()).unwrap();
    close_from_above(&petersen, 2.0 / 3.0);
}

#[test]
fn disconnected_graphs_have_gap_zero_and_isolated_vertices_are_refused() {
    let two_triangles =
        Csr::from_edges(6, &[(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)]).unwrap();
    assert_abs_diff_eq!(estimate(&two_triangles), 0.0, epsilon = SPECTRAL_TOL);
    let isolated = Csr::from_edges(3, &[(0, 1)]).unwrap();
    let err = spectral_gap(&isolated, &PowerIteration::default()).unwrap_err();
    assert!(err.to_string().contains("vertex 2 has degree 0"), "{err}");
}

#[test]
fn random_cubic_graph_is_an_expander() {
    // Random 3-regular graphs have λ₂ close to 1 − 2√2/3 ≈ 0.057 (Friedman); the estimate is
    // an upper bound within a few per cent at default settings.
    let g = random_regular(&RegularParams::new(2000, 3), &mut sim_rng(41)).unwrap();
    let est = spectral_gap(&g, &PowerIteration::default()).unwrap();
    assert!((0.045..0.075).contains(&est.gap), "{est:?}");
}

#[test]
fn topology_reports_exact_gaps_for_structured_families() {
    let mut rng = sim_rng(1);
    let cases: [(&str, usize, f64); 5] = [
        ("complete", 1_000_000, 1_000_000.0 / 999_999.0),
        ("cycle", 1000, 1.0 - (2.0 * PI / 1000.0).cos()),
        ("torus:2", 4096, (1.0 - (2.0 * PI / 64.0).cos()) / 2.0),
        ("hypercube", 1024, 0.2),
        ("star", 50, 1.0),
    ];
    for (kind, n, want) in cases {
        let t = kind.parse::<GraphKind>().unwrap().build(Some(n), &mut rng).unwrap();
        match t.spectral_gap(&PowerIteration::default()).unwrap() {
            SpectralGap::Exact(v) => assert_abs_diff_eq!(v, want, epsilon = 1e-12),
            other => panic!("{kind}: expected an exact gap, got {other:?}"),
        }
    }
    let t = "regular:3".parse::<GraphKind>().unwrap().build(Some(500), &mut rng).unwrap();
    assert!(matches!(
        t.spectral_gap(&PowerIteration::default()).unwrap(),
        SpectralGap::Estimated(_)
    ));
}
