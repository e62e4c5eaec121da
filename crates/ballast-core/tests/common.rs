//! Shared helpers of this crate's statistical tests: the chi-square helpers of
//! `ballast-testkit` (significance level `ALPHA`), re-exported under the name the tests use.

#![allow(unused_imports)]

pub use ballast_testkit::*;
