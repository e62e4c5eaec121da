//! A series' bin sampling law (`sampling = { kind = "two_class", fraction = 0.5, factor = 4
//! }`, `docs/sampling.md`), read through the core registry's declaration
//! (`ballast_core::registry::SAMPLINGS`) the way `weights = { … }` is. The law `file` names a
//! file of weights (`path`, relative to the config's directory), which is read here: the
//! core gets the numbers.

use std::path::Path;

use ballast_core::input::{read_text, InputError, MAX_INPUT_BYTES};
use ballast_core::registry;
use ballast_core::Sampling;
use serde::Deserialize;

use super::{table_params, ProcessProblem};
use crate::problem::Msg;

/// The series key `sampling` as written: a table whose `kind` and parameters are the
/// registry's sampling laws. (The top-level `sampling = { blocks = … }` is the sampling
/// protocol of the runs, [`super::Sampling`], a different key.)
#[derive(Clone, Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct RawBinSampling(pub toml::Table);

/// Resolves a series' sampling law (uniform when absent). `dir` is the config's directory,
/// against which a relative `path` is read. A problem names the parameter it is about
/// (`sampling.fraction`) or `sampling` for the table.
pub(crate) fn resolve_sampling(
    raw: Option<&RawBinSampling>,
    dir: &Path,
    ctx: &str,
) -> Result<Sampling, ProcessProblem> {
    let Some(RawBinSampling(table)) = raw else { return Ok(Sampling::Uniform) };
    let at =
        |p: Option<String>| Some(p.map_or("sampling".to_string(), |p| format!("sampling.{p}")));
    let kind = match table.get("kind") {
        Some(toml::Value::String(k)) => k.as_str(),
        Some(other) => {
            let msg = Msg::in_ctx(
                ctx,
                format!("sampling `kind` = {other}: expected a sampling law (a string)"),
            );
            return Err((at(Some("kind".into())), msg));
        }
        None => {
            let names: Vec<&str> = registry::SAMPLINGS.iter().map(|s| s.name).collect();
            let msg = Msg::in_ctx(
                ctx,
                format!("the sampling table needs `kind`, one of {}", names.join(", ")),
            );
            return Err((at(None), msg));
        }
    };
    let def = registry::find_sampling(kind)
        .map_err(|e| (at(Some("kind".into())), Msg::in_ctx(ctx, e.to_string())))?;
    let mut params = table.clone();
    let weights = match def.file {
        None => None,
        Some(key) => {
            let path = match params.remove(key) {
                Some(toml::Value::String(p)) => p,
                Some(other) => {
                    let msg = Msg::in_ctx(
                        ctx,
                        format!(
                            "sampling `{key}` = {other}: expected the path of a weight file \
                         (a string)"
                        ),
                    );
                    return Err((at(Some(key.into())), msg));
                }
                None => {
                    let msg = Msg::in_ctx(
                        ctx,
                        format!(
                            "sampling law `{}` needs `{key}`, the path of a file of weights \
                         (one number per line, relative to the config's directory)",
                            def.name
                        ),
                    );
                    return Err((at(None), msg));
                }
            };
            let file = dir.join(&path);
            Some(
                read_weight_file(&file)
                    .map_err(|m| (at(Some(key.into())), Msg::in_ctx(ctx, m.to_string())))?,
            )
        }
    };
    let given = table_params(&def.list(), &params, &[], ctx).map_err(|(p, m)| (at(p), m))?;
    def.build(&given, weights).map_err(|e| (at(e.param.clone()), Msg::in_ctx(ctx, e.to_string())))
}

/// Reads a weight file: one number per line, `#` comments, through [`read_text`] (a regular
/// file of at most [`MAX_INPUT_BYTES`]). Errors name the file and, for a bad line, its line
/// and column and what was expected, never the file's text.
pub fn read_weight_file(file: &Path) -> Result<Vec<f64>, String> {
    const WHAT: &str = "sampling weight file";
    let text = read_text(file, WHAT, MAX_INPUT_BYTES).map_err(|e| e.to_string())?;
    ballast_core::sampling::parse_weights(&text)
        .map_err(|e| InputError::content(WHAT, file, e).to_string())
}
