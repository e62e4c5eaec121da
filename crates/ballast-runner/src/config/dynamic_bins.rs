//! A series' churn schedule (`churn = { every = 1000, leave = 1, join = 1, join_at =
//! "average" }`) and dispatchers (`dispatchers = { k = 8, tau = 100 }`), read through the
//! core's declarations (`ballast_core::CHURN`, `ballast_core::DISPATCHERS`) like the
//! process table: unknown keys and wrong values get the registry's messages, and a string
//! for a numeric parameter is a formula over the point's variables (`tau = "tau"` with a
//! grid variable `tau`).

use ballast_core::{Churn, Dispatchers};
use serde::Deserialize;

use super::{table_params, ProcessProblem};
use crate::problem::Msg;

/// The series keys `churn` and `dispatchers` as written: tables checked against the core's
/// declarations at every point.
#[derive(Clone, Debug, Deserialize)]
#[serde(transparent)]
pub(crate) struct RawSettingTable(pub toml::Table);

/// The churn schedule and the dispatchers of one point (`None` when the series has none).
/// A problem names the key it is about (`churn.every`), or the table. Churn refuses
/// `potentials` (they are defined for a fixed set of bins).
pub(crate) fn resolve_dynamic_bins(
    churn: Option<&RawSettingTable>,
    dispatchers: Option<&RawSettingTable>,
    potentials: bool,
    vars: &[(&str, f64)],
    ctx: &str,
) -> Result<(Option<Churn>, Option<Dispatchers>), ProcessProblem> {
    let at =
        |key: &str, p: Option<String>| Some(p.map_or(key.to_owned(), |p| format!("{key}.{p}")));
    let churn = match churn {
        None => None,
        Some(RawSettingTable(t)) => {
            let given = table_params(&ballast_core::CHURN, t, vars, ctx)
                .map_err(|(p, m)| (at("churn", p), m))?;
            let c = Churn::build(&given)
                .map_err(|e| (at("churn", e.param.clone()), Msg::in_ctx(ctx, e.to_string())))?;
            if potentials {
                let msg = Msg::in_ctx(
                    ctx,
                    "`potentials` are defined for a fixed set of bins; with `churn` bins \
                     join and leave (drop one of the two)",
                );
                return Err((Some("churn".into()), msg));
            }
            Some(c)
        }
    };
    let dispatchers = match dispatchers {
        None => None,
        Some(RawSettingTable(t)) => {
            let given = table_params(&ballast_core::DISPATCHERS, t, vars, ctx)
                .map_err(|(p, m)| (at("dispatchers", p), m))?;
            let d = Dispatchers::build(&given).map_err(|e| {
                (at("dispatchers", e.param.clone()), Msg::in_ctx(ctx, e.to_string()))
            })?;
            Some(d)
        }
    };
    Ok((churn, dispatchers))
}
