//! `ballast simulate --capacities KIND[:key=value,...]`: the bins' capacities through the
//! core registry's declaration (`ballast_core::registry::CAPACITIES`), with the same
//! key=value reader as `--sampling`. `file:path=caps.txt` reads the file relative to the
//! working directory; the one-point config names it by its absolute path. Also the section
//! of `ballast list` that shows the capacity laws.

use std::path::PathBuf;

use ballast_core::{registry, Capacities};

use crate::error::BadInput;
use crate::process;
use crate::sampling::{law_rows_json, render_law_rows, LawRow};

/// The capacities of `--capacities` (none when absent) and, for `file`, the absolute path
/// of the capacity file.
pub(crate) fn parse_capacities(
    text: Option<&str>,
) -> Result<(Capacities, Option<PathBuf>), BadInput> {
    let Some(text) = text else { return Ok((Capacities::UNIT, None)) };
    let bad = |m: String| BadInput::new(format!("--capacities: {m}"));
    let (kind, params) = text.split_once(':').unwrap_or((text, ""));
    let def = registry::find_capacities(kind.trim()).map_err(|e| bad(e.message))?;
    let mut pairs: Vec<&str> = params.split(',').filter(|p| !p.trim().is_empty()).collect();
    let mut path = None;
    if let Some(key) = def.file {
        let at = pairs.iter().position(|p| p.split_once('=').is_some_and(|(k, _)| k.trim() == key));
        let Some(at) = at else {
            return Err(bad(format!(
                "capacity law `{}` needs `{key}=FILE` (one capacity per line, # comments)",
                def.name
            )));
        };
        let raw = pairs.remove(at).split_once('=').map(|(_, v)| v.trim()).unwrap_or_default();
        let abs = std::path::absolute(raw).map_err(|e| bad(format!("capacities `{raw}`: {e}")))?;
        path = Some(abs);
    }
    let given = process::parse_pairs(&def.list(), pairs, "").map_err(|e| bad(e.to_string()))?;
    let values = match &path {
        Some(p) => Some(ballast_runner::read_capacity_file(p).map_err(bad)?),
        None => None,
    };
    let c = def.build(&given, values).map_err(|e| bad(e.message))?;
    Ok((c, path))
}

/// The refusals of `--capacities` that the command line adds to the core's: not with
/// `--graph` (its bins are a graph's vertices) or `--potential`.
pub(crate) fn refusals(
    spec: &ballast_core::RunSpec,
    graph: bool,
    potentials: bool,
) -> Result<(), BadInput> {
    if (graph || potentials) && !spec.capacities.is_unit() {
        return Err(BadInput::new(
            "`--capacities` applies to plain allocation runs, not with `--graph` (its bins \
             are a graph's vertices) or `--potential`",
        ));
    }
    Ok(())
}

/// The series table `capacities = { … }` of the one-point config (`None` without
/// capacities).
pub(crate) fn config_table(c: &Capacities, path: Option<&PathBuf>) -> Option<toml::Table> {
    use toml::Value;
    if c.is_unit() {
        return None;
    }
    let mut t = toml::Table::new();
    t.insert("kind".into(), Value::String(c.name().into()));
    for (k, v) in c.params() {
        // The seed is an integer parameter; the others are numbers.
        let v = if k == "seed" { Value::Integer(v as i64) } else { Value::Float(v) };
        t.insert(k.into(), v);
    }
    t.insert("sampling".into(), Value::String(c.sampling.name().into()));
    t.insert("decide".into(), Value::String(c.decide.name().into()));
    if let Some(p) = path {
        t.insert("path".into(), Value::String(p.display().to_string()));
    }
    Some(t)
}

/// The section of `ballast list` that shows the capacity laws.
pub(crate) fn render_laws(s: &mut String) {
    use std::fmt::Write as _;
    let _ = writeln!(
        s,
        "\nCapacities (--capacities KIND[:key=value,...], capacities = {{ kind = … }} in a \
         series; decisions and the gap read x_i/c_i, gap = max x_i/c_i - W/C; bin engine, for \
         the processes that take every sampling law):"
    );
    render_law_rows(s, rows(), "capacity");
}

/// The capacity laws as rows of a list section.
fn rows() -> impl Iterator<Item = LawRow> {
    registry::CAPACITIES.iter().map(|d| LawRow::new(d.name, d.doc, d.params, d.file))
}

/// The capacity laws as JSON (`ballast list --json`).
pub(crate) fn laws_json() -> serde_json::Value {
    law_rows_json(rows())
}
