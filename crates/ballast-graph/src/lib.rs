//! # ballast-graph
//!
//! Graph topologies for graphical balls-into-bins (bins are the vertices of a graph and a
//! ball samples an edge), and the off-line d-choice optimum.
//!
//! - Capabilities as small traits ([`Graph`], [`Neighbors`], [`SampleEdge`]) over a CSR
//!   store ([`Csr`]) and implicit graphs that compute their neighbours: the complete graph
//!   ([`Complete`]), tori and cycles ([`Torus`]) and hypercubes ([`Hypercube`]).
//! - Generators ([`generate`]): cycle, d-dimensional torus, hypercube, star, random
//!   d-regular (configuration model with rejection), Erdős–Rényi G(n, p) (giant component or
//!   resampled until connected); an edge-list loader for users' own topologies ([`io`]).
//! - Analysis ([`analysis`]): components, bipartiteness, degrees, and the spectral gap of the
//!   normalised Laplacian by power iteration (closed forms for the structured families in
//!   [`Topology::spectral_gap`]).
//! - Graphical processes ([`process`]): Two-Choice on edges, (1+β) on edges, One-Choice on
//!   vertices, as core [`ballast_core::process::Rule`]s run by the core bin engine, so the
//!   sequential and batched settings, weights and observers work unchanged.
//! - The off-line d-choice optimum ([`offline`], `docs/processes.md#off-line-d-choice-optimum`),
//!   exact, with certificates.
//!
//! ```
//! use ballast_core::{sim_rng, ProcessSpec, RunSpec};
//! use ballast_graph::{GraphKind, PowerIteration};
//!
//! // Two-Choice on the edges of a 2-dimensional 32 × 32 torus, m = 100 n.
//! let torus: GraphKind = "torus:2".parse().unwrap();
//! let graph = torus.build(Some(1024), &mut sim_rng(1)).unwrap();
//! let spec = RunSpec::new(ProcessSpec::DChoice { d: 2 }, 1024, 102_400);
//! let out = graph.simulate(&spec, &mut sim_rng(7)).unwrap();
//! assert!(out.final_gap > 0.0);
//! let info = graph.info(&PowerIteration::default()).unwrap();
//! assert_eq!((info.degree.min, info.degree.max, info.bipartite), (4, 4, true));
//!
//! // Off-line optimum of n balls with 2 choices each: 2 with high probability.
//! use ballast_graph::offline::{offline_optimum, Choices};
//! let choices = Choices::sample(10_000, 10_000, 2, &mut sim_rng(3)).unwrap();
//! let opt = offline_optimum(&choices);
//! assert_eq!(opt.max_load, 2);
//! opt.verify(&choices).unwrap();
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod analysis;
mod error;
pub mod generate;
mod graph;
pub mod io;
mod lattice;
pub mod offline;
pub mod process;
mod topology;

pub use analysis::{PowerIteration, SpectralEstimate};
pub use error::Error;
pub use graph::{Complete, Csr, CsrNeighbors, Graph, Neighbors, SampleEdge};
pub use lattice::{Hypercube, Slots, Torus};
pub use process::{
    check_graph_spec, simulate_graph, simulate_graph_observed, GraphOptions, OneStep,
};
pub use topology::{
    find_topology, parse_topology, GraphInfo, GraphKind, SpectralGap, Store, Topology, TopologyDef,
    TopologyParams, CONNECTED_ATTEMPTS, REGULAR_ATTEMPTS, TOPOLOGIES,
};

/// A stable seed-path element for building a point's graph, distinct from run indices: the
/// runner derives the graph seed as `derive_seed(master, &[item_hash, point, GRAPH_STREAM])`
/// so that all runs of a point share one graph.
pub const GRAPH_STREAM: u64 = 0x6772_6170_685f_7631; // "graph_v1"
