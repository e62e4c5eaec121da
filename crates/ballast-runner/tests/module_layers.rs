//! The runner's modules form layers: no module reaches, through `crate::` paths, a module
//! that reaches it back (`ballast_testkit::layers` reads the sources and builds the graph).
//!
//! Run it with `cargo test -p ballast-runner --test module_layers`; on failure it prints the
//! cycle, e.g. `config -> plan -> config`.

use std::path::Path;

use ballast_testkit::layers::{assert_layered, module_graph};

#[test]
fn the_runner_modules_import_one_another_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    // The graph is not trivially empty: the pipeline's main edges are seen.
    assert!(graph["run"].contains("units"), "{graph:#?}");
    assert!(graph["plan"].contains("config"), "{graph:#?}");
    assert_layered(&src, &[]);
}
