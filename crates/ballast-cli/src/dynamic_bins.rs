//! `--churn key=value,...` and `--dispatchers key=value,...` of `ballast simulate`, their
//! series tables in the one-point config, and their section of `ballast list`, all read
//! from the core's declarations (`ballast_core::CHURN`, `ballast_core::DISPATCHERS`).

use std::fmt::Write as _;

use ballast_core::registry::{ParamList, ParamValue};
use ballast_core::{Churn, Dispatchers, RunSpec};

use crate::error::BadInput;
use crate::process;

/// The two declarations, in listing order, with their one-line meaning.
const SETTINGS: [(&ParamList, &str); 2] = [
    (
        &ballast_core::CHURN,
        "bins leave and join during a run, every `every` balls (decisions and the gap over \
         the bins present; sequential, unit weights; the level engine when asked)",
    ),
    (
        &ballast_core::DISPATCHERS,
        "k dispatchers, each deciding with the process on its own view of the loads, \
         refreshed after every tau of its own balls (sequential, unit weights, bin engine)",
    ),
];

/// The `key=value` pairs of a flag's text, checked against `list`.
fn pairs(
    list: &ParamList,
    text: &str,
    flag: &str,
) -> Result<Vec<(&'static str, ParamValue)>, BadInput> {
    let words = text.split(',').filter(|p| !p.trim().is_empty());
    process::parse_pairs(list, words, &format!("{flag} "))
        .map_err(|e| BadInput::new(format!("{flag}: {e}")))
}

/// Reads `--churn` (`every=1000,leave=1,join=1,join_at=average`).
pub fn parse_churn(text: Option<&str>) -> Result<Option<Churn>, BadInput> {
    let Some(text) = text else { return Ok(None) };
    let given = pairs(&ballast_core::CHURN, text, "--churn")?;
    Churn::build(&given).map(Some).map_err(|e| BadInput::new(format!("--churn: {e}")))
}

/// Reads `--dispatchers` (`k=8,tau=100,assign=random,own=false`).
pub fn parse_dispatchers(text: Option<&str>) -> Result<Option<Dispatchers>, BadInput> {
    let Some(text) = text else { return Ok(None) };
    let given = pairs(&ballast_core::DISPATCHERS, text, "--dispatchers")?;
    Dispatchers::build(&given).map(Some).map_err(|e| BadInput::new(format!("--dispatchers: {e}")))
}

/// What `ballast simulate` refuses beside the core's checks: churn or dispatchers with
/// `--graph`, churn with `--potential`.
pub fn refusals(spec: &RunSpec, graph: bool, potentials: bool) -> Result<(), BadInput> {
    if graph && (spec.churn.is_some() || spec.dispatchers.is_some()) {
        return Err(BadInput::new(
            "`--churn` and `--dispatchers` apply to the bin engine's allocation processes, not \
             to a graphical run (--graph)",
        ));
    }
    if spec.churn.is_some() && potentials {
        return Err(BadInput::new(
            "`--potential` is defined for a fixed set of bins; with `--churn` bins join and \
             leave (drop one of the two)",
        ));
    }
    Ok(())
}

/// The series tables `churn = { … }` and `dispatchers = { … }` of the one-point config: the
/// parameters as given on the command line (the defaults stay implicit).
pub fn config_tables(
    churn: Option<&str>,
    dispatchers: Option<&str>,
) -> Vec<(&'static str, Vec<(&'static str, ParamValue)>)> {
    let mut out = Vec::new();
    for (key, list, text) in [
        ("churn", &ballast_core::CHURN, churn),
        ("dispatchers", &ballast_core::DISPATCHERS, dispatchers),
    ] {
        if let Some(given) = text.and_then(|t| pairs(list, t, key).ok()) {
            out.push((key, given));
        }
    }
    out
}

/// The "Churn and dispatchers" section of `ballast list`.
pub fn render(s: &mut String) {
    let _ = writeln!(
        s,
        "\nChurn and dispatchers (--churn key=value,..., --dispatchers key=value,...; \
         churn = {{ … }}, dispatchers = {{ … }} in a series):"
    );
    for (list, doc) in SETTINGS {
        let _ = writeln!(s, "  {:<15} {doc}", list.name);
        for p in list.params {
            let default = p.default.describe();
            let default = if default.is_empty() { default } else { format!(", {default}") };
            let _ = writeln!(s, "      {:<15} {} ({}{default})", p.name, p.doc, p.ty.describe());
        }
    }
}

/// The same section for `ballast list --json`.
pub fn structured() -> serde_json::Value {
    use serde_json::json;
    SETTINGS
        .iter()
        .map(|(list, doc)| {
            let params: Vec<serde_json::Value> = list
                .params
                .iter()
                .map(|p| {
                    json!({"name": p.name, "doc": p.doc, "type": p.ty.describe(),
                           "default": p.default.describe()})
                })
                .collect();
            json!({"name": list.name, "doc": doc, "params": params})
        })
        .collect()
}
