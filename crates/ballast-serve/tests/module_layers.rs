//! The server's modules import one another without a cycle (`ballast_testkit::layers` reads
//! the sources and builds the graph of top-level modules from their `crate::` paths):
//! `playground` uses `jobs`, never the other way round.
//!
//! Run it with `cargo test -p ballast-serve --test module_layers`.

use std::path::Path;

use ballast_testkit::layers::{assert_layered, module_graph};

#[test]
fn the_server_modules_import_one_another_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    assert!(graph["playground"].contains("jobs"), "{graph:#?}");
    assert_layered(&src, &[]);
}
