//! A series' bin capacities (`capacities = { kind = "two_class", factor = 4, sampling =
//! "proportional" }`, `docs/capacities.md`), read through the core registry's declaration
//! (`ballast_core::registry::CAPACITIES`) the way `sampling = { … }` is. The law `file`
//! names a file of capacities (`path`, relative to the config's directory), which is read
//! here: the core gets the numbers.

use std::path::Path;

use ballast_core::capacity::parse_capacities;
use ballast_core::input::{read_text, InputError, MAX_INPUT_BYTES};
use ballast_core::registry;
use ballast_core::Capacities;
use serde::Deserialize;

use super::{table_params, ProcessProblem};
use crate::problem::Msg;

/// The series key `capacities` as written: a table whose `kind` and parameters are the
/// registry's capacity laws.
#[derive(Clone, Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct RawCapacities(pub toml::Table);

/// Resolves a series' capacities at a point with variables `vars` (numbers may be formulas
/// of them; none when absent: the classical run). `dir` is the config's directory, against
/// which a relative `path` is read. A problem names the
/// parameter it is about (`capacities.factor`) or `capacities` for the table.
pub(crate) fn resolve_capacities(
    raw: Option<&RawCapacities>,
    dir: &Path,
    vars: &[(&str, f64)],
    ctx: &str,
) -> Result<Capacities, ProcessProblem> {
    let Some(RawCapacities(table)) = raw else { return Ok(Capacities::UNIT) };
    let at =
        |p: Option<&str>| Some(p.map_or("capacities".to_string(), |p| format!("capacities.{p}")));
    let names = || registry::CAPACITIES.iter().map(|s| s.name).collect::<Vec<_>>().join(", ");
    let kind = match table.get("kind") {
        Some(toml::Value::String(k)) => k.as_str(),
        Some(other) => {
            let msg = Msg::in_ctx(
                ctx,
                format!("capacities `kind` = {other}: expected one of {}", names()),
            );
            return Err((at(Some("kind")), msg));
        }
        None => {
            let msg =
                Msg::in_ctx(ctx, format!("the capacities table needs `kind`, one of {}", names()));
            return Err((at(None), msg));
        }
    };
    let def = registry::find_capacities(kind)
        .map_err(|e| (at(Some("kind")), Msg::in_ctx(ctx, e.to_string())))?;
    let mut params = table.clone();
    let values = match def.file {
        None => None,
        Some(key) => {
            let path = match params.remove(key) {
                Some(toml::Value::String(p)) => p,
                Some(other) => {
                    let msg = Msg::in_ctx(
                        ctx,
                        format!(
                            "capacities `{key}` = {other}: expected the path of a file of \
                         capacities (a string)"
                        ),
                    );
                    return Err((at(Some(key)), msg));
                }
                None => {
                    let msg = Msg::in_ctx(
                        ctx,
                        format!(
                            "capacity law `file` needs `{key}`, the path of a file of \
                         capacities (one number per line, relative to the config's directory)"
                        ),
                    );
                    return Err((at(None), msg));
                }
            };
            let file = dir.join(&path);
            let c = read_capacity_file(&file)
                .map_err(|m| (at(Some(key)), Msg::in_ctx(ctx, m.to_string())))?;
            Some(c)
        }
    };
    let given =
        table_params(&def.list(), &params, vars, ctx).map_err(|(p, m)| (at(p.as_deref()), m))?;
    def.build(&given, values).map_err(|e| (at(e.param.as_deref()), Msg::in_ctx(ctx, e.to_string())))
}

/// Reads a capacity file: one number > 0 per line, `#` comments, through [`read_text`] (a
/// regular file of at most [`MAX_INPUT_BYTES`]). Errors name the file and, for a bad line,
/// its line and column and what was expected, never the file's text.
pub fn read_capacity_file(file: &Path) -> Result<Vec<f64>, String> {
    const WHAT: &str = "capacity file";
    let text = read_text(file, WHAT, MAX_INPUT_BYTES).map_err(|e| e.to_string())?;
    parse_capacities(&text).map_err(|e| InputError::content(WHAT, file, e).to_string())
}
