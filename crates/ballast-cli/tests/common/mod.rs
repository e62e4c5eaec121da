//! Helpers shared by the end-to-end tests of the `ballast` binary.

// Each test file uses its own subset.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
