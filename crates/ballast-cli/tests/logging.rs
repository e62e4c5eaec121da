//! The log of the `ballast` binary: `-q`, `-v`, `RUST_LOG` and `--log-format json` choose what
//! reaches stderr, and stdout (the paths of the outputs) is the same whatever the log.

use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{ok, scratch};

/// Two series of a small batched item, so the run logs a summary line and writes checkpoints.
const CONFIG: &str = r#"
title = "Logging test"
seed = 3
runs = 2
x = { variable = "k" }
grid = { k = [1, 2] }
point = { n = 30, b = "k*n", batches = 4 }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
"#;

/// Runs `ballast <flags> run configs/demo/log.toml` in `dir` with `RUST_LOG` set or removed.
fn run(dir: &Path, flags: &[&str], rust_log: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ballast"));
    cmd.args(flags).args(["run", "configs/demo/log.toml", "--out", "out"]).current_dir(dir);
    match rust_log {
        Some(v) => cmd.env("RUST_LOG", v),
        None => cmd.env_remove("RUST_LOG"),
    };
    // Every run starts from nothing, so each one simulates and writes checkpoints.
    let _ = std::fs::remove_dir_all(dir.join("out"));
    cmd.output().expect("spawning ballast")
}

fn setup(name: &str) -> std::path::PathBuf {
    let dir = scratch("logging", name);
    std::fs::write(dir.join("configs/demo/log.toml"), CONFIG).unwrap();
    dir
}

#[test]
fn default_log_is_one_plain_summary_line() {
    let dir = setup("plain");
    let o = run(&dir, &[], None);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "stderr: {err}");
    assert!(lines[0].starts_with("demo/log: 2 rows"), "stderr: {err}");
}

#[test]
fn quiet_hides_info_and_keeps_stdout() {
    let dir = setup("quiet");
    let loud = run(&dir, &[], None);
    let quiet = run(&dir, &["-q"], None);
    ok(&quiet);
    assert!(quiet.stderr.is_empty(), "stderr: {}", String::from_utf8_lossy(&quiet.stderr));
    assert_eq!(quiet.stdout, loud.stdout);
}

#[test]
fn rust_log_debug_shows_item_span_and_checkpoints() {
    let dir = setup("debug");
    let o = run(&dir, &[], Some("debug"));
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("item{id=\"demo/log\" mode=run}"), "stderr: {err}");
    assert!(err.contains("checkpoint written"), "stderr: {err}");
    assert!(err.contains("DEBUG"), "stderr: {err}");
    // `-v` asks for the same level.
    let v = run(&dir, &["-v"], None);
    assert!(String::from_utf8_lossy(&v.stderr).contains("checkpoint written"));
}

#[test]
fn json_format_gives_one_object_per_line() {
    let dir = setup("json");
    let o = run(&dir, &["--log-format", "json", "-v"], None);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    let mut levels = Vec::new();
    for line in err.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line}"));
        levels.push(v["level"].as_str().unwrap_or("?").to_string());
        assert!(v["fields"]["message"].is_string(), "no message: {line}");
    }
    assert!(levels.iter().any(|l| l == "DEBUG") && levels.iter().any(|l| l == "INFO"));
}

#[test]
fn bad_rust_log_is_a_warning_not_silence() {
    let dir = setup("badenv");
    let o = run(&dir, &[], Some("[[["));
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("warning: RUST_LOG is not a valid filter"), "stderr: {err}");
}

#[test]
fn errors_are_logged_with_their_prefix_and_exit_code() {
    let dir = setup("error");
    let o = Command::new(env!("CARGO_BIN_EXE_ballast"))
        .args(["--log-format", "json", "run", "configs/demo/missing.toml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let v: serde_json::Value = serde_json::from_str(err.trim()).expect("one JSON line");
    assert_eq!(v["level"], "ERROR");
    let plain = Command::new(env!("CARGO_BIN_EXE_ballast"))
        .args(["run", "configs/demo/missing.toml"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&plain.stderr).starts_with("error: config file"));
}
