//! Helpers shared by the end-to-end tests of the `ballast` binary.

// Each test file uses its own subset.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// A fresh scratch directory `<tmp>/ballast-<suite>-<name>-<pid>` with empty `configs/demo`
/// and `reference` folders, as a project directory for `ballast run`.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ballast-{suite}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("configs/demo")).unwrap();
    std::fs::create_dir_all(dir.join("reference")).unwrap();
    dir
}

/// Runs `ballast args...` in `dir` and waits for it.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ballast"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("spawning ballast")
}

/// Asserts a zero exit status, showing stderr otherwise.
pub fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "ballast failed ({:?}): {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Runs `ballast args...` in the current directory and waits for it.
pub fn ballast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ballast")).args(args).output().expect("spawning ballast")
}

/// `ballast simulate --json args...`, which must succeed, as JSON.
pub fn simulate_json(args: &[&str]) -> Value {
    let mut all = vec!["simulate", "--json"];
    all.extend_from_slice(args);
    let o = ballast(&all);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "ballast {all:?} failed: {err}");
    serde_json::from_slice(&o.stdout).expect("valid JSON")
}

/// `ballast args...` exits 2 (bad input), prints nothing on stdout and names every needle on
/// stderr.
pub fn assert_bad_input(args: &[&str], needles: &[&str]) {
    let o = ballast(args);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "ballast {args:?}: stderr {err}");
    assert!(o.stdout.is_empty(), "ballast {args:?} printed to stdout");
    for n in needles {
        assert!(err.contains(n), "ballast {args:?}: `{n}` not in stderr: {err}");
    }
}
