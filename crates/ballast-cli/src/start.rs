//! `--start KIND[:key=value,...]` and `--recovery-target` of `ballast simulate`, and the
//! start states of `ballast list`, through the core registry's starts
//! (`ballast_core::registry::STARTS`).

use std::fmt::Write as _;

use ballast_core::registry::{self, ParamValue};
use ballast_core::start::StartSource;
use ballast_core::Start;

use crate::error::BadInput;
use crate::process;

/// A start as given on the command line: the start itself and its parameters as written
/// (for the one-point config, which names a `file` by its path, not its loads).
#[derive(Clone, Debug)]
pub struct ResolvedStart {
    /// The kind name.
    pub kind: &'static str,
    /// The parameters as given.
    pub given: Vec<(&'static str, ParamValue)>,
    /// The start (a `file` read into its loads, relative to the working directory).
    pub start: Start,
}

/// Reads `--start KIND[:key=value,...]` (`uniform:k=5`, `one_bin:balls=100`,
/// `random:balls=1000`, `file:path=loads.txt`).
pub fn parse_start(text: &str) -> Result<ResolvedStart, BadInput> {
    let (kind, params) = text.split_once(':').unwrap_or((text, ""));
    let def =
        registry::find_start(kind.trim()).map_err(|e| BadInput::new(format!("--start: {e}")))?;
    let pairs = params.split(',').filter(|p| !p.trim().is_empty());
    let given = process::parse_pairs(&def.list(), pairs, "")
        .map_err(|e| BadInput::new(format!("--start: {e}")))?;
    let start = match def.build(&given).map_err(|e| BadInput::new(format!("--start: {e}")))? {
        StartSource::Given(s) => s,
        StartSource::File(path) => Start::Loads(
            ballast_runner::read_start_file(std::path::Path::new(&path))
                .map_err(|e| BadInput::new(format!("--start: {e}")))?,
        ),
    };
    Ok(ResolvedStart { kind: def.name, given, start })
}

/// The "Start states" section of `ballast list`.
pub fn render_starts(s: &mut String) {
    let _ = writeln!(
        s,
        "\nStart states (--start KIND[:key=value,...], start = {{ kind = … }} in a series; \
         allocation processes add their m balls on top; round-based models start their \
         rounds from it, see their `start:` line):"
    );
    for d in registry::STARTS {
        let _ = writeln!(s, "  {:<15} {}", d.name, d.doc);
        for p in d.params {
            let _ = writeln!(s, "      {:<15} {} ({})", p.name, p.doc, p.ty.describe());
        }
    }
}

/// The start states for `ballast list --json`.
pub fn structured_starts() -> serde_json::Value {
    use serde_json::json;
    registry::STARTS
        .iter()
        .map(|d| {
            let params: Vec<serde_json::Value> = d
                .params
                .iter()
                .map(|p| {
                    json!({"name": p.name, "doc": p.doc, "type": p.ty.describe(),
                           "default": p.default.describe()})
                })
                .collect();
            json!({"name": d.name, "doc": d.doc, "params": params})
        })
        .collect()
}
