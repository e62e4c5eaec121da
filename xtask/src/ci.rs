//! `cargo xtask ci`: every check of the repository, in the order a failure is cheapest to
//! find, each step timed. `.ci/run` installs what a fresh machine lacks and calls this.
//!
//! Steps: `format` (rustfmt check), `lints` (clippy, warnings are errors), `docs` (rustdoc,
//! warnings are errors), `tests` (the README's test command), `reproduce` (`reproduce all
//! --check`: committed outputs would not change, every other item runs at quick scale),
//! `python` (`.ci/python.sh`: one abi3 wheel built by maturin, installed into a fresh virtual
//! environment without cargo or rustc on PATH, its pytest suite and the notebooks run
//! there), `own-process` (`.ci/own-process.sh`: the example crate of a process of one's
//! own, `examples/own-process`, built and run on a small sweep). `--skip STEP` leaves a step
//! out (repeatable).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

/// The steps, by name, in the order they run.
pub const STEPS: [&str; 7] =
    ["format", "lints", "docs", "tests", "reproduce", "python", "own-process"];

/// The command of an external step (`reproduce` runs in this process).
fn command(step: &str) -> Option<Command> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut c = Command::new(&cargo);
    match step {
        "format" => c.args(["fmt", "--all", "--", "--check"]),
        "lints" => {
            c.args(["clippy", "--workspace", "--all-targets", "--locked", "--", "-D", "warnings"])
        }
        "docs" => {
            c.env("RUSTDOCFLAGS", "-D warnings");
            c.args(["doc", "--workspace", "--no-deps", "--locked"])
        }
        "tests" => c.args(["test", "--workspace", "--release", "--locked"]),
        "python" | "own-process" => {
            let mut b = Command::new("bash");
            b.arg(format!(".ci/{step}.sh"));
            return Some(b);
        }
        _ => return None,
    };
    Some(c)
}

/// Runs every step not in `skip` from the repository root `root`; fails at the first step
/// that fails, naming it.
pub fn ci(root: &Path, skip: &[String]) -> Result<()> {
    if let Some(bad) = skip.iter().find(|s| !STEPS.contains(&s.as_str())) {
        return Err(crate::UsageError(format!(
            "unknown step `{bad}` for --skip; steps: {}",
            STEPS.join(", ")
        ))
        .into());
    }
    std::env::set_current_dir(root).with_context(|| format!("cd {}", root.display()))?;
    let mut times = Vec::new();
    for step in STEPS.iter().filter(|s| !skip.iter().any(|k| k == *s)) {
        tracing::info!("== {step}");
        let t = Instant::now();
        match command(step) {
            Some(mut c) => {
                let status = c.status().with_context(|| format!("starting step {step}"))?;
                anyhow::ensure!(status.success(), "step `{step}` failed ({status})");
            }
            None => crate::check_items(
                &["all".to_string()],
                &crate::check::CheckArgs { threads: 0, budget_s: 30.0 },
            )
            .context("step `reproduce` failed")?,
        }
        times.push((*step, t.elapsed().as_secs_f64()));
    }
    let summary: Vec<String> = times.iter().map(|(s, t)| format!("{s} {t:.0} s")).collect();
    println!("ci passed: {}", summary.join(", "));
    Ok(())
}
