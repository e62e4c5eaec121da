//! The command line's modules form layers: no module reaches, through `crate::` paths, a
//! module that reaches it back. `simulate` is one directory module (its arguments and
//! outcome in `simulate/mod.rs`, the kinds of run beyond allocation in `simulate/kinds.rs`).
//!
//! Run it with `cargo test -p ballast-cli --test module_layers`.

use std::path::Path;

use ballast_testkit::layers::{assert_layered, module_graph};

#[test]
fn the_cli_modules_import_one_another_without_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = module_graph(&src);
    assert!(graph["simulate"].contains("error"), "{graph:#?}");
    assert_layered(&src, &[]);
}
