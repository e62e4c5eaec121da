//! Config fixtures shared by the tests of several crates.

/// A dynamic item shaped like rbb23/max_load: RBB's max load at k = m/n = 1, 2, 3 on n = 30
/// bins, seeded by its grid values (`seed_by = "values"`), 3 runs per point.
pub const RBB_SHARED_FIRST: &str = r#"
kind = "dynamic"
title = "RBB max load"
seed = 11
seed_by = "values"
runs = 3
x = { variable = "k" }
grid = { n = [30], k = [1, 2, 3] }
point = { m = "k*n", burn_in = 0, rounds = 300 }

[[series]]
name = "RBB"
process = { kind = "rbb", d = 1 }
statistic = "avg_max_load"
"#;

/// The item that shares runs with [`RBB_SHARED_FIRST`] (its `seed_item`), shaped like
/// rbb23/empty_bins: the fraction of empty bins at k = 4 (its own point), 3 and 2 (shared),
/// listed in another order.
pub const RBB_SHARED_SECOND: &str = r#"
kind = "dynamic"
title = "RBB empty bins"
seed = 11
seed_item = "demo/first"
seed_by = "values"
runs = 3
x = { variable = "k" }
grid = { n = [30], k = [4, 3, 2] }
point = { m = "k*n", burn_in = 0, rounds = 300 }

[[series]]
name = "RBB"
process = { kind = "rbb", d = 1 }
statistic = "avg_fraction_empty_bins"
"#;
