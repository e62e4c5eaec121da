//! `RunOptions::refresh_cache` over several items run with one options value, as `cargo xtask
//! reproduce <items...> --no-cache` runs them: a checkpoint written in the invocation (by an
//! earlier item) is read, so a point two items share is simulated once, and counted as
//! shared, not cached; a checkpoint from before the invocation is not read. Each item's rows
//! are those of running it alone. Both the dynamic items (the shape of rbb23/max_load and
//! rbb23/empty_bins) and the ball-allocation items are checked.

use std::path::{Path, PathBuf};

use ballast_runner::{run_experiment, Experiment, ItemResult, RunOptions};
use ballast_testkit::fixtures::{
    RBB_SHARED_FIRST as DYNAMIC_FIRST, RBB_SHARED_SECOND as DYNAMIC_SECOND,
};

/// A ball-allocation item: the gap at n = 100 and 200.
const BALLS_FIRST: &str = r#"
title = "gap"
seed = 11
runs = 3
x = { variable = "n", log = true }
grid = { n = [100, 200] }
point = { m = "10 * n" }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
statistic = "final_gap"
reference = ""
"#;

/// The runs of the first item, another statistic: n = 100 (point 0) is shared, n = 300 is
/// its own.
const BALLS_SECOND: &str = r#"
title = "max load"
seed = 11
seed_item = "demo/first"
runs = 3
x = { variable = "n", log = true }
grid = { n = [100, 300] }
point = { m = "10 * n" }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
statistic = "max_load"
reference = ""
"#;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ballast-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Options of one invocation with checkpoints in `cache`, refreshed or not.
fn options(cache: &Path, refresh_cache: bool) -> RunOptions {
    let mut opts = RunOptions::new(root().join("reference"));
    opts.progress = false;
    opts.threads = 2;
    opts.command = Some("test".into());
    opts.cache_dir = Some(cache.to_path_buf());
    opts.refresh_cache = refresh_cache;
    opts
}

fn parse(id: &str, text: &str) -> Experiment {
    Experiment::parse(id, Path::new(&format!("configs/{id}.toml")), text)
        .unwrap_or_else(|e| panic!("{id}: {e}"))
}

fn run(exp: &Experiment, opts: &RunOptions) -> ItemResult {
    run_experiment(exp, opts).unwrap_or_else(|e| panic!("{}: {e}", exp.id()))
}

/// What must not depend on where the runs came from: the CSV, the JSON rows and the report
/// above its `## Run` section.
fn rows(r: &ItemResult) -> (String, String, String) {
    let report = r.to_report();
    let body = report.split("\n## Run").next().unwrap_or_default().to_string();
    (r.to_csv(), serde_json::to_string(&r.rows).unwrap(), body)
}

/// Runs the two items one after the other with one refreshed options value, over an empty
/// checkpoint directory: the first simulates everything; the second reads the `shared`
/// points the first wrote and simulates only its own; each gives the rows it gives alone.
fn shared_once(name: &str, first: &str, second: &str, points: (usize, usize), shared: usize) {
    let dir = temp(name);
    let (first, second) = (parse("demo/first", first), parse("demo/second", second));
    let alone_first = run(&first, &options(&dir.join("alone-first"), true));
    let alone_second = run(&second, &options(&dir.join("alone-second"), true));
    assert_eq!((alone_second.meta.cached_points, alone_second.meta.shared_points), (0, 0));

    let opts = options(&dir.join("together"), true);
    let a = run(&first, &opts);
    let b = run(&second, &opts);
    assert_eq!((a.meta.points, b.meta.points), points, "{name}");
    assert_eq!((a.meta.cached_points, a.meta.shared_points), (0, 0), "{name}: first item");
    assert_eq!((b.meta.cached_points, b.meta.shared_points), (0, shared), "{name}: second item");
    // One checkpoint per distinct point: the shared ones were written once.
    assert_eq!(opts.fresh_checkpoints.len(), points.0 + points.1 - shared, "{name}");
    assert!(rows(&a) == rows(&alone_first), "{name}: the first item's rows changed");
    assert!(rows(&b) == rows(&alone_second), "{name}: the second item's rows changed");
    assert!(
        b.to_report().contains(&format!("{shared} of {} points were read from", points.1)),
        "{name}: the report does not say which points were shared"
    );
    let json = b.to_json().unwrap();
    assert!(json.contains(&format!("\"shared_points\": {shared},")), "{name}: {json}");
    assert!(!a.to_json().unwrap().contains("shared_points"), "{name}: written when zero");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn dynamic_items_simulate_their_shared_points_once_per_invocation() {
    shared_once("fresh-dynamic", DYNAMIC_FIRST, DYNAMIC_SECOND, (3, 3), 2);
}

#[test]
fn ball_items_simulate_their_shared_points_once_per_invocation() {
    shared_once("fresh-balls", BALLS_FIRST, BALLS_SECOND, (2, 2), 1);
}

/// Checkpoints of an earlier invocation: read (as cached) without `refresh_cache`, not read
/// under it, however the invocation goes on.
#[test]
fn checkpoints_from_before_the_invocation_are_not_read_when_refreshed() {
    let dir = temp("fresh-before");
    let cache = dir.join("cache");
    let (first, second) =
        (parse("demo/first", DYNAMIC_FIRST), parse("demo/second", DYNAMIC_SECOND));
    // An earlier invocation writes the first item's checkpoints (k = 1, 2, 3).
    let earlier = run(&first, &options(&cache, false));
    assert_eq!((earlier.meta.cached_points, earlier.meta.shared_points), (0, 0));

    // A refreshed invocation: the second item simulates k = 2 and 3 again.
    let opts = options(&cache, true);
    let b = run(&second, &opts);
    assert_eq!((b.meta.cached_points, b.meta.shared_points), (0, 0));
    assert_eq!(opts.fresh_checkpoints.len(), 3);
    // Then the first item reads the two points the second just rewrote, and simulates k = 1
    // again though its checkpoint is there.
    let a = run(&first, &opts);
    assert_eq!((a.meta.cached_points, a.meta.shared_points), (0, 2));
    assert!(rows(&a) == rows(&earlier), "the first item's rows changed");

    // An invocation that does not refresh reads them all, as cached.
    let again = run(&first, &options(&cache, false));
    assert_eq!((again.meta.cached_points, again.meta.shared_points), (3, 0));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A resumed invocation (not refreshed) of two items over checkpoints of an earlier one: the
/// first item reads the shared points as cached, with their recorded time; the second counts
/// them as shared, so that time is not counted twice.
#[test]
fn checkpoints_of_an_earlier_invocation_are_counted_once_per_invocation() {
    let dir = temp("fresh-resumed");
    let cache = dir.join("cache");
    let (first, second) =
        (parse("demo/first", DYNAMIC_FIRST), parse("demo/second", DYNAMIC_SECOND));
    let earlier = run(&first, &options(&cache, false));
    assert_eq!((earlier.meta.cached_points, earlier.meta.shared_points), (0, 0));

    let opts = options(&cache, false);
    let a = run(&first, &opts);
    let b = run(&second, &opts);
    assert_eq!((a.meta.cached_points, a.meta.shared_points), (3, 0), "first item");
    assert_eq!((b.meta.cached_points, b.meta.shared_points), (0, 2), "second item");
    assert!(rows(&a) == rows(&earlier), "the first item's rows changed");
    let _ = std::fs::remove_dir_all(&dir);
}
