//! The built-in processes declared as process items ([`crate::item`]): one file per process
//! holds its declaration (`DEF`, a [`crate::registry::ProcessDef`], where the kind has an
//! entry of its own), its item (`ITEM`) and its rule; its tests are
//! `crates/ballast-core/tests/<file>.rs`. Adding one is a file here, its `mod` line below
//! and its `DEF` in the registry's listing ([`crate::registry::PROCESSES`]).
//!
//! `agl_random` and `tight_distinct` are what an option of a catalogue kind builds
//! (`always_go_left` with `ties = "random"`, `tight_packing` with `distinct = true`), so
//! their declaration is that kind's.

pub mod agl_random;
pub mod d_thinning;
pub mod fill_formula;
pub mod kd_choice;
pub mod tight_distinct;
