//! The crate's modules import one another without a cycle (`ballast_testkit::layers` reads the
//! sources and builds the graph of top-level modules from their `crate::` paths).
//!
//! Run it with `cargo test -p ballast-potential --test module_layers`.

use std::path::Path;

use ballast_testkit::layers::assert_layered;

#[test]
fn the_modules_import_one_another_without_a_cycle() {
    assert_layered(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &[]);
}
