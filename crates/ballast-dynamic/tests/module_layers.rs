//! The crate's modules import one another without a cycle (`ballast_testkit::layers` reads the
//! sources and builds the graph of top-level modules from their `crate::` paths): the level
//! engine of the deletion models uses the bin-engine module's configuration, never the other way
//! round.
//!
//! Run it with `cargo test -p ballast-dynamic --test module_layers`.

use std::path::Path;

use ballast_testkit::layers::{assert_layered, module_graph};

#[test]
fn the_modules_import_one_another_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    assert!(graph["deletion_levels"].contains("deletions"), "{graph:#?}");
    assert!(!graph["deletions"].contains("deletion_levels"), "{graph:#?}");
    assert_layered(&src, &[]);
}
