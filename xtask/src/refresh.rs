//! `cargo xtask refresh`: rewrites the CSV and SVG of every committed result from its JSON,
//! after a change to how tables or figures are written.
//!
//! Both are functions of the JSON's rows (exact values) and of the config the JSON names:
//! `ballast_runner::read_csv` and `read_figure` give the bytes the run would write
//! (`crates/ballast-runner/tests/replot.rs`), so nothing is simulated and no value can move.
//! A result whose config changed since it was written is left alone and named: it must be
//! run again. `reproduce --check` then confirms the bytes for the items it can re-simulate.

use std::path::Path;

use anyhow::{Context, Result};

/// Rewrites `results/<paper>/<item>.{csv,svg}` of every item in `ids` that has a committed
/// JSON; returns how many files changed.
pub fn refresh(results: &Path, ids: &[String]) -> Result<usize> {
    let mut changed = 0;
    let mut stale = Vec::new();
    for id in ids {
        let json = results.join(format!("{id}.json"));
        if !json.is_file() {
            continue;
        }
        let (fig, why) = ballast_runner::read_figure(&json)
            .with_context(|| format!("reading {}", json.display()))?;
        if let Some(why) = why {
            stale.push(format!("{id}: {why}"));
            continue;
        }
        let svg = ballast_runner::render_svg(&fig).map_err(anyhow::Error::msg)?;
        let csv = ballast_runner::read_csv(&json)?;
        for (ext, text) in [("csv", csv), ("svg", svg)] {
            let path = results.join(format!("{id}.{ext}"));
            if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                ballast_runner::files::write_atomically(&path, text.as_bytes())
                    .with_context(|| format!("writing {}", path.display()))?;
                tracing::info!("{} rewritten", path.display());
                changed += 1;
            }
        }
    }
    if !stale.is_empty() {
        anyhow::bail!(
            "left alone, their configs changed since they ran (run them again):\n{}",
            stale.join("\n")
        );
    }
    Ok(changed)
}
