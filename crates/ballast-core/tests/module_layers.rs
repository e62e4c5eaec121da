//! The layers of `ballast-core` (ARCHITECTURE.md, "Layers of ballast-core"): every module
//! imports only modules of its own layer or of the layers below, and no two modules import
//! each other (`ballast_testkit::layers` reads the sources and builds the graph of
//! top-level modules from their `crate::` paths).
//!
//! Run it with `cargo test -p ballast-core --test module_layers`; on failure it prints the
//! cycle or the edges that point up.

use std::path::Path;

use ballast_testkit::layers::{assert_layered, module_graph};

/// Bottom first. A new module goes into the lowest layer whose modules it needs.
const LAYERS: &[&[&str]] = &[
    // 0. Randomness, errors, outcomes and their final-load metrics, the bounded reader of
    //    user-named input files, the measured engine crossovers.
    &["rng", "error", "outcome", "final_metrics", "binomial", "input", "crossover"],
    // 1. Plain data: parameters, formulas, specs, weight laws, sampling laws, start
    //    states; the bins' load store (it draws weights of the spec's law).
    &[
        "params", "item", "def", "formula", "spec", "weights", "sampling", "start", "loads",
        "capacity",
    ],
    // 2. Rules (the bin-engine decisions, shared by the level engine's generic loop), what a
    //    process kind supplies (`kind`), the level histogram (built from a start state), and
    //    observation.
    &[
        "process",
        "k_threshold",
        "formula_threshold",
        "rule_formula",
        "items",
        "rank_vector",
        "histogram",
        "kind",
        "observe",
        "capacity_loads",
        "with_rule",
    ],
    // 3. Engines: reallocation and adaptive probing, delay, levels, weighted batches.
    //    The process kinds (each names its rule, its level route, its checks) and the engine
    //    choice, which asks them.
    &["czumaj", "realloc", "delay", "level", "weighted", "churn", "dispatchers", "kinds", "choice"],
    // 4. The bin engine and router, the registry (tables of declarations), recovery time.
    &["engine", "registry", "recovery"],
];

#[test]
fn ballast_core_modules_point_down_their_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    // The graph is not trivially empty: the main edges are seen.
    assert!(graph["engine"].contains("level"), "{graph:#?}");
    assert!(graph["level"].contains("observe"), "{graph:#?}");
    assert_layered(&src, LAYERS);
}
