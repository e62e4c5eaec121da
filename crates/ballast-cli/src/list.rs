//! `ballast list`: processes with their parameters, tie-breaking rules, settings, weights, and
//! the configured reproduction items (`configs/<paper>/<item>.toml`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ballast_core::{Engine, TieBreak};

use crate::process::KINDS;

/// One-line meaning of a tie-breaking rule.
fn tie_break_doc(t: TieBreak) -> &'static str {
    match t {
        TieBreak::Random => "uniform among the tied samples (default)",
        TieBreak::First => "the earliest tied sample (same law as random for i.i.d. samples)",
        TieBreak::LowestIndex => "the tied bin with the lowest index",
        TieBreak::Position => {
            "the authors' batched code: the tied bin sorted last (highest index) wins"
        }
    }
}

/// The `configs` directory: `./configs`, else the nearest ancestor's `configs`, else the
/// workspace this binary was built from.
pub fn find_configs_dir() -> Option<PathBuf> {
    if let Ok(cwd) = std::env::current_dir() {
        for dir in cwd.ancestors() {
            let c = dir.join("configs");
            if c.is_dir() {
                return Some(c);
            }
        }
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    built.is_dir().then_some(built)
}

/// The full listing as text.
pub fn render() -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Processes (--process KIND [--param key=value]...):");
    for k in KINDS {
        let _ = writeln!(s, "  {:<15} {}", k.name, k.doc);
        for p in k.params {
            let default = match (p.default, p.optional) {
                (Some(d), _) => format!(", default {d}"),
                (None, true) => ", optional".to_owned(),
                (None, false) => String::new(),
            };
            let _ = writeln!(s, "      {:<8} {} ({}{default})", p.name, p.doc, p.ty.describe());
        }
    }
    let _ = writeln!(s, "\nTie-breaking rules (--tie-break RULE):");
    for (name, t) in TieBreak::ALL {
        let _ = writeln!(s, "  {:<15} {}", name, tie_break_doc(t));
    }
    let _ = writeln!(s, "\nSettings:");
    let _ = writeln!(s, "  {:<15} every decision sees the current loads (default)", "sequential");
    let _ = writeln!(
        s,
        "  {:<15} batches of b balls decide on the loads frozen at the batch start (--batch B, B >= 1)",
        "batched{b}"
    );
    let _ = writeln!(s, "\nWeights (--weights):");
    let _ = writeln!(s, "  {:<15} every ball weighs 1 (default)", "unit");
    let _ = writeln!(
        s,
        "  {:<15} i.i.d. exponential weights (--weight-mean MEAN > 0, default 1)",
        "exp{mean}"
    );
    let _ = writeln!(s, "\nEngines (--engine):");
    for (name, e) in Engine::ALL {
        let doc = match e {
            Engine::Auto => "the level engine where it is exact (and faster), else bins (default)",
            Engine::Bins => "one load per bin: every process, setting and weight",
            Engine::Levels => "bin counts per load level: unit weights, exchangeable processes",
        };
        let _ = writeln!(s, "  {name:<15} {doc}");
    }
    match find_configs_dir() {
        Some(dir) => {
            let ids: Vec<String> = match ballast_runner::discover(&dir) {
                Ok(items) => items.into_iter().map(|(id, _)| id).collect(),
                Err(e) => {
                    let _ = writeln!(s, "\nItems: cannot read {}: {e}", dir.display());
                    return s;
                }
            };
            let _ = writeln!(
                s,
                "\nItems ({}, run with `ballast run` or `cargo xtask reproduce`):",
                dir.display()
            );
            if ids.is_empty() {
                let _ = writeln!(s, "  (none)");
            }
            for id in ids {
                let _ = writeln!(s, "  {id}");
            }
        }
        None => {
            let _ = writeln!(s, "\nItems: no configs/ directory found here or above");
        }
    }
    s
}
