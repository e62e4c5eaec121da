//! `ballast simulate --sampling KIND[:key=value,...]`: the bin sampling law through the core
//! registry's declaration (`ballast_core::registry::SAMPLINGS`), with the same key=value
//! reader as `--param` and `--weights`. `file:path=weights.txt` reads the file relative to
//! the working directory; the one-point config names it by its absolute path.

use std::path::PathBuf;

use ballast_core::{registry, RunSpec, Sampling};

use crate::error::BadInput;
use crate::process;

/// The law of `--sampling` (uniform when absent) and, for `file`, the absolute path of the
/// weight file.
pub(crate) fn parse_sampling(text: Option<&str>) -> Result<(Sampling, Option<PathBuf>), BadInput> {
    let Some(text) = text else { return Ok((Sampling::Uniform, None)) };
    let bad = |m: String| BadInput::new(format!("--sampling: {m}"));
    let (kind, params) = text.split_once(':').unwrap_or((text, ""));
    let def = registry::find_sampling(kind.trim()).map_err(|e| bad(e.message))?;
    let mut pairs: Vec<&str> = params.split(',').filter(|p| !p.trim().is_empty()).collect();
    let mut path = None;
    if let Some(key) = def.file {
        let at = pairs.iter().position(|p| p.split_once('=').is_some_and(|(k, _)| k.trim() == key));
        let Some(at) = at else {
            return Err(bad(format!(
                "sampling law `{}` needs `{key}=FILE` (one weight per line, # comments)",
                def.name
            )));
        };
        let raw = pairs.remove(at).split_once('=').map(|(_, v)| v.trim()).unwrap_or_default();
        let abs =
            std::path::absolute(raw).map_err(|e| bad(format!("sampling weights `{raw}`: {e}")))?;
        path = Some(abs);
    }
    let given = process::parse_pairs(&def.list(), pairs, "").map_err(|e| bad(e.to_string()))?;
    let weights = match &path {
        Some(p) => Some(ballast_runner::read_weight_file(p).map_err(bad)?),
        None => None,
    };
    let s = def.build(&given, weights).map_err(|e| bad(e.message))?;
    Ok((s, path))
}

/// The series table `sampling = { … }` of the one-point config (`None` for uniform).
pub(crate) fn config_table(spec: &RunSpec, path: Option<&PathBuf>) -> Option<toml::Table> {
    use toml::Value;
    if spec.sampling.is_uniform() {
        return None;
    }
    let mut t = toml::Table::new();
    t.insert("kind".into(), Value::String(spec.sampling.name().into()));
    for (k, v) in spec.sampling.params() {
        t.insert(k.into(), Value::Float(v));
    }
    if let Some(p) = path {
        t.insert("path".into(), Value::String(p.display().to_string()));
    }
    Some(t)
}

/// The sampling laws a process takes (`ballast list`): every law, or uniform only.
pub(crate) fn laws_of(k: &registry::ProcessDef) -> Vec<&'static str> {
    if k.settings.biased {
        registry::SAMPLINGS.iter().map(|s| s.name).collect()
    } else {
        vec!["uniform"]
    }
}

/// One line of a process's listing: which sampling laws it takes.
pub(crate) fn process_line(k: &registry::ProcessDef) -> &'static str {
    if k.settings.biased {
        "every law (see Sampling laws; bin engine)"
    } else {
        "uniform only"
    }
}

/// The section of `ballast list` that shows the sampling laws.
pub(crate) fn render_laws(s: &mut String) {
    use std::fmt::Write as _;
    let _ = writeln!(
        s,
        "\nSampling laws (--sampling KIND[:key=value,...], sampling = {{ kind = … }} in a \
         series; non-uniform laws run on the bin engine):"
    );
    let laws = registry::SAMPLINGS.iter().map(|d| LawRow::new(d.name, d.doc, d.params, d.file));
    render_law_rows(s, laws, "weight");
}

/// One law of a `ballast list` section of bin laws (sampling laws, capacities).
pub(crate) struct LawRow {
    name: &'static str,
    doc: &'static str,
    params: &'static [ballast_core::registry::ParamDef],
    file: Option<&'static str>,
}

impl LawRow {
    /// A law's name, doc, parameters and file parameter (if it reads a file).
    pub(crate) fn new(
        name: &'static str,
        doc: &'static str,
        params: &'static [ballast_core::registry::ParamDef],
        file: Option<&'static str>,
    ) -> Self {
        Self { name, doc, params, file }
    }
}

/// The lines of `laws` in a `ballast list` section: each law, its parameters, and its file
/// parameter, whose file holds one `entry` (e.g. "weight") per line.
pub(crate) fn render_law_rows(s: &mut String, laws: impl Iterator<Item = LawRow>, entry: &str) {
    use std::fmt::Write as _;
    for d in laws {
        let _ = writeln!(s, "  {:<15} {}", d.name, d.doc);
        for p in d.params {
            let default = p.default.describe();
            let default = if default.is_empty() { default } else { format!(", {default}") };
            let _ = writeln!(s, "      {:<15} {} ({}{default})", p.name, p.doc, p.ty.describe());
        }
        if let Some(f) = d.file {
            let _ = writeln!(
                s,
                "      {f:<15} the {entry} file (one number > 0 per line, # comments; relative \
                 to the config's directory)"
            );
        }
    }
}

/// `laws` as JSON (`ballast list --json`).
pub(crate) fn law_rows_json(laws: impl Iterator<Item = LawRow>) -> serde_json::Value {
    use serde_json::json;
    laws.map(|d| {
        let params: Vec<serde_json::Value> = d
            .params
            .iter()
            .map(|p| {
                json!({"name": p.name, "doc": p.doc, "type": p.ty.describe(),
                       "default": p.default.describe()})
            })
            .collect();
        json!({"name": d.name, "doc": d.doc, "params": params, "file": d.file})
    })
    .collect()
}

/// The sampling laws as JSON (`ballast list --json`).
pub(crate) fn laws_json() -> serde_json::Value {
    law_rows_json(registry::SAMPLINGS.iter().map(|d| LawRow::new(d.name, d.doc, d.params, d.file)))
}
