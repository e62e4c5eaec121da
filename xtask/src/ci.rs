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
//! out (repeatable). The `docs` step also keeps `ballast-core`'s API boundary: at most
//! [`CORE_API_BUDGET`] documented items (ARCHITECTURE.md, "API boundaries").

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
                if *step == "docs" {
                    clear_core_docs()?;
                }
                let status = c.status().with_context(|| format!("starting step {step}"))?;
                anyhow::ensure!(status.success(), "step `{step}` failed ({status})");
                if *step == "docs" {
                    check_core_api()?;
                }
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

/// The most documented items `ballast-core` may show (its stable surface: the root, `registry`,
/// `item`, `capacity`); everything else is `#[doc(hidden)]` or private.
pub const CORE_API_BUDGET: usize = 80;

/// `ballast-core`'s rustdoc pages, in the target directory cargo uses.
fn core_docs_dir() -> std::path::PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "target".into());
    Path::new(&target).join("doc").join("ballast_core")
}

/// Removes `ballast-core`'s old rustdoc pages, so the count sees only this build's.
fn clear_core_docs() -> Result<()> {
    let dir = core_docs_dir();
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    Ok(())
}

/// The documented items of `ballast-core`: rustdoc's item pages (struct, enum, fn, trait,
/// constant, type, static, macro), redirects left out, as paths under its doc directory.
pub fn core_api_items(dir: &Path) -> Result<Vec<String>> {
    const KINDS: [&str; 8] =
        ["struct.", "enum.", "fn.", "trait.", "constant.", "type.", "static.", "macro."];
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if path.is_dir() {
                todo.push(path.clone());
            } else if name.ends_with(".html") && KINDS.iter().any(|k| name.starts_with(k)) {
                let page = std::fs::read_to_string(&path)
                    .with_context(|| format!("reading {}", path.display()))?;
                if !page.contains("Redirecting to") {
                    let rel = path.strip_prefix(dir).unwrap_or(&path);
                    found.push(rel.display().to_string());
                }
            }
        }
    }
    found.sort();
    Ok(found)
}

/// Fails when `ballast-core` documents more than [`CORE_API_BUDGET`] items.
fn check_core_api() -> Result<()> {
    let items = core_api_items(&core_docs_dir())?;
    tracing::info!("ballast-core documents {} items (budget {CORE_API_BUDGET})", items.len());
    anyhow::ensure!(
        items.len() <= CORE_API_BUDGET,
        "ballast-core documents {} items, over its budget of {CORE_API_BUDGET}: hide engine \
         internals and tuning constants (#[doc(hidden)] or pub(crate)), or move the budget with \
         a reason in ARCHITECTURE.md (\"API boundaries\")",
        items.len()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn core_api_items_count_item_pages_but_not_redirects() {
        let dir = std::env::temp_dir().join(format!("ballast-api-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("registry")).unwrap();
        std::fs::write(dir.join("struct.RunSpec.html"), "<html>RunSpec</html>").unwrap();
        std::fs::write(dir.join("registry/fn.find.html"), "<html>find</html>").unwrap();
        std::fs::write(dir.join("fn.gone.html"), "<p>Redirecting to <a href=x>x</a></p>").unwrap();
        std::fs::write(dir.join("index.html"), "<html>crate</html>").unwrap();
        let items = super::core_api_items(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(items, ["registry/fn.find.html", "struct.RunSpec.html"]);
    }
}
