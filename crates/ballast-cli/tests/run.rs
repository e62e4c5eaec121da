//! End-to-end tests of `ballast run`: a tiny config writes its four outputs; bad configs exit
//! with code 2, name the field, and write nothing.

use std::process::Command;

mod common;
use common::{run_in, scratch};

const CONFIG: &str = r#"
title = "Two-Choice, batched (test)"
seed = 7
runs = 3
x = { variable = "k", label = "b/n" }
grid = { k = [1, 2] }
point = { n = 50, b = "k*n", batches = 4 }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }

[quick]
runs = 2
"#;

#[test]
fn run_writes_the_four_outputs() {
    let dir = scratch("cli", "ok");
    std::fs::write(dir.join("configs/demo/tiny.toml"), CONFIG).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/tiny.toml", "--quick", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "ballast run failed: {err}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    for ext in ["csv", "json", "svg", "md"] {
        let p = dir.join(format!("out/demo/tiny.{ext}"));
        assert!(p.is_file(), "missing {}", p.display());
        assert!(stdout.contains(&format!("tiny.{ext}")), "path not printed: {stdout}");
    }
    // `ballast list` run from this directory lists the item.
    let o = run_in(&dir, &["list"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("demo/tiny"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Under `nohup` or a batch scheduler stderr is a file, so there is no bar: plain progress
/// lines instead, every `BALLAST_PROGRESS_SECS` seconds (0 here: after every run), and none
/// when the interval is long.
#[test]
fn progress_lines_when_stderr_is_not_a_terminal() {
    let dir = scratch("cli", "progress");
    std::fs::write(dir.join("configs/demo/tiny.toml"), CONFIG).unwrap();
    let run = |secs: &str| {
        Command::new(env!("CARGO_BIN_EXE_ballast"))
            // One thread: with more, two finishing runs may print in either order.
            .args(["run", "configs/demo/tiny.toml", "--no-checkpoint", "--threads", "1"])
            .args(["--out", "out"])
            .env("BALLAST_PROGRESS_SECS", secs)
            .current_dir(&dir)
            .output()
            .expect("spawning ballast")
    };
    let o = run("0");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> =
        err.lines().filter(|l| l.starts_with("demo/tiny: ") && l.contains("% of ")).collect();
    // 2 points × 3 runs: at most one line per finished run, at least one.
    assert!((1..=6).contains(&lines.len()), "{err}");
    assert!(lines.iter().all(|l| l.contains(" elapsed, eta ")), "{err}");
    assert!(lines.last().unwrap().contains("100.0% of 1.80e3 balls"), "{err}");
    let o = run("3600");
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("% of "));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Asserts exit code 2, every needle in stderr, and no output directory.
fn assert_config_error(name: &str, config: &str, needles: &[&str]) {
    let dir = scratch("cli", name);
    std::fs::write(dir.join("configs/demo/bad.toml"), config).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/bad.toml", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{name}: stderr {err}");
    for n in needles {
        assert!(err.contains(n), "{name}: `{n}` not in stderr: {err}");
    }
    assert!(!dir.join("out").exists(), "{name}: outputs written despite the error");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_configs_exit_2_and_write_nothing() {
    assert_config_error("toml", "title = \"x\n", &["bad.toml"]);
    assert_config_error(
        "field",
        &CONFIG.replace("seed = 7", "seed = 7\ncolour = \"red\""),
        &["colour"],
    );
    assert_config_error(
        "beta",
        &CONFIG.replace("kind = \"two_choice\" }", "kind = \"one_plus_beta\", beta = 1.5 }"),
        &["beta", "[0, 1]"],
    );
    assert_config_error("n", &CONFIG.replace("n = 50", "n = 0"), &["`n`"]);
}

#[test]
fn missing_config_file_exits_2() {
    let dir = scratch("cli", "missing");
    let o = run_in(&dir, &["run", "configs/demo/nope.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nope.toml"));
    std::fs::remove_dir_all(&dir).unwrap();
}
