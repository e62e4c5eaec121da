//! Start states and recovery targets of allocation series (`docs/settings.md#start-states`,
//! `docs/metrics.md#recovery-time`): `start = { kind = …, … }` read through the core
//! registry's starts (`ballast_core::registry::STARTS`), the file of a `file` start read
//! here (the core gets the loads), and the checks of `recovery_target` against the series'
//! statistics.

use std::path::Path;

use ballast_core::input::{read_text, InputError, MAX_INPUT_BYTES};
use ballast_core::registry;
use ballast_core::start::{parse_loads, StartSource};
use ballast_core::Start;

use crate::config::{table_params, ProcessProblem, RawStart};
use crate::problem::Msg;
use crate::statistic::Statistic;

/// Resolves a series' start (empty when absent). A relative `file` path is read from
/// `dir`, the config's directory. A problem names the parameter it is about (`start.k`,
/// `start.path`) or `start` for the table; file errors name the file and the line.
pub(crate) fn resolve_start(
    s: Option<&RawStart>,
    dir: &Path,
    ctx: &str,
) -> Result<Start, ProcessProblem> {
    let Some(RawStart(table)) = s else { return Ok(Start::Empty) };
    let at = |p: Option<String>| Some(p.map_or("start".to_string(), |p| format!("start.{p}")));
    let kind = match table.get("kind") {
        Some(toml::Value::String(k)) => k.as_str(),
        Some(other) => {
            let msg = Msg::in_ctx(
                ctx,
                format!("start `kind` = {other}: expected a start kind (a string)"),
            );
            return Err((at(Some("kind".into())), msg));
        }
        None => {
            let names: Vec<&str> = registry::STARTS.iter().map(|s| s.name).collect();
            let msg = Msg::in_ctx(
                ctx,
                format!("the start table needs `kind`, one of {}", names.join(", ")),
            );
            return Err((at(None), msg));
        }
    };
    let def = registry::find_start(kind)
        .map_err(|e| (at(Some("kind".into())), Msg::in_ctx(ctx, e.to_string())))?;
    let given = table_params(&def.list(), table, &[], ctx).map_err(|(p, m)| (at(p), m))?;
    match def.build(&given).map_err(|e| (at(e.param.clone()), Msg::in_ctx(ctx, e.to_string())))? {
        StartSource::Given(start) => Ok(start),
        StartSource::File(path) => {
            let file = dir.join(&path);
            read_start_file(&file)
                .map(Start::Loads)
                .map_err(|m| (at(Some("path".into())), Msg::in_ctx(ctx, m.to_string())))
        }
    }
}

/// The loads of a `file` start: one load per line ([`parse_loads`]), read through
/// [`read_text`] (a regular file of at most [`MAX_INPUT_BYTES`]); errors name the file and,
/// for a bad line, its line and column and what was expected, never the file's text.
pub fn read_start_file(file: &Path) -> Result<Vec<u64>, String> {
    const WHAT: &str = "start file";
    let text = read_text(file, WHAT, MAX_INPUT_BYTES).map_err(|e| e.to_string())?;
    parse_loads(&text).map_err(|e| InputError::content(WHAT, file, e).to_string())
}

/// Checks the pair `recovery_target` / `recovery_time` of a series: each needs the other
/// (a target without the statistic would be ignored), and the recovery time needs the
/// sequential or batched setting and a process that takes an observer. `Err` is the message.
pub(crate) fn check_recovery(
    statistic: Statistic,
    also: &[Statistic],
    has_target: bool,
    delayed: bool,
    equalize: bool,
    ctx: &str,
) -> Result<(), Msg> {
    let wants = statistic == Statistic::RecoveryTime || also.contains(&Statistic::RecoveryTime);
    match (wants, has_target) {
        (true, false) => Err(Msg::in_ctx(
            ctx,
            "statistic \"recovery_time\" needs `recovery_target` (the gap to reach: a \
             number or a formula, e.g. 2 or \"ln(n)\")",
        )),
        (false, true) => Err(Msg::in_ctx(
            ctx,
            "`recovery_target` applies to the statistic \"recovery_time\" only (as \
             `statistic` or in `also`)",
        )),
        (true, true) if delayed || equalize => Err(Msg::in_ctx(
            ctx,
            "\"recovery_time\" needs the sequential or batched setting and a process \
             other than equalize (the delay and equalize loops do not report the gap per ball)",
        )),
        _ => Ok(()),
    }
}
