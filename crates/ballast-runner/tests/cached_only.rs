//! `RunOptions::cached_only`: an item whose runs are all in the checkpoints re-renders to the
//! same outputs without simulating; an item with a missing run fails with `NotCached`, naming
//! what is missing, before anything could be written. Both the ball-allocation runner and the
//! other item kinds (here a dynamic item) go through the same check.

use std::path::{Path, PathBuf};

use ballast_runner::{run_experiment, Error, Experiment, RunOptions};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const STATIC: &str = r#"
title = "test"
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

fn options(cache: &Path, cached_only: bool) -> RunOptions {
    let mut opts = RunOptions::new(root().join("reference"));
    opts.progress = false;
    opts.threads = 2;
    opts.quick = true;
    opts.command = Some("test".into());
    opts.cache_dir = Some(cache.to_path_buf());
    opts.cached_only = cached_only;
    opts
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ballast-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Runs `exp` with an empty checkpoint directory under `cached_only` (must fail), then
/// normally (fills the checkpoints), then under `cached_only` again (must give the same CSV,
/// every point cached).
fn check(exp: &Experiment, name: &str) {
    let dir = temp(name);
    match run_experiment(exp, &options(&dir, true)) {
        Err(Error::NotCached { item, missing_runs, missing_points, points, checkpoint }) => {
            assert_eq!(item, exp.id());
            assert!(missing_runs >= missing_points && missing_points > 0);
            assert_eq!(missing_points, points, "{name}: nothing is stored yet");
            assert_eq!(checkpoint.as_deref(), Some(dir.as_path()));
        }
        other => panic!("{name}: expected NotCached, got {:?}", other.map(|r| r.meta.points)),
    }
    let first = run_experiment(exp, &options(&dir, false)).unwrap();
    assert_eq!(first.meta.cached_points, 0);
    let again = run_experiment(exp, &options(&dir, true)).unwrap();
    assert_eq!(again.meta.cached_points, again.meta.points, "{name}");
    assert_eq!(first.to_csv(), again.to_csv(), "{name}: the re-render differs");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ball_items_re_render_from_checkpoints_or_fail() {
    let exp = Experiment::parse("t/cached", Path::new("configs/t/cached.toml"), STATIC).unwrap();
    check(&exp, "cached-static");
}

#[test]
fn dynamic_items_re_render_from_checkpoints_or_fail() {
    let exp = Experiment::from_path(&root().join("configs/rbb23/max_load.toml")).unwrap();
    check(&exp, "cached-dynamic");
}

#[test]
fn the_error_says_how_much_is_missing_and_what_to_do() {
    let e = Error::NotCached {
        item: "rbb23/max_load".into(),
        missing_runs: 7,
        missing_points: 2,
        points: 54,
        checkpoint: Some(PathBuf::from("target/ballast-cache")),
    };
    let text = e.to_string();
    for part in
        ["rbb23/max_load", "7 runs", "2 of 54 points", "target/ballast-cache", "--cached-only"]
    {
        assert!(text.contains(part), "{text}");
    }
}

/// Potential items keep no checkpoints: `cached_only` must refuse them rather than simulate
/// (before, it ran the whole item in silence).
#[test]
fn potential_items_have_no_checkpoints_and_are_refused() {
    let exp = Experiment::from_path(&root().join("configs/potentials/batched_gamma.toml")).unwrap();
    let dir = temp("cached-potential");
    match run_experiment(&exp, &options(&dir, true)) {
        Err(Error::NotCached { missing_points, points, checkpoint, .. }) => {
            assert!(points > 0 && missing_points == points);
            assert_eq!(checkpoint, None);
        }
        other => panic!("expected NotCached, got {:?}", other.map(|r| r.meta.points)),
    }
    assert!(!dir.exists(), "nothing may be written");
}
