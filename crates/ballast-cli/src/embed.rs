//! The command line for programs that are not a terminal (the Python package): the same
//! clap parsers, pipelines and reports as the binary, with argv-like strings in and
//! structured results out, and nothing printed on stdout.
//!
//! - [`simulate`]: the arguments of `ballast simulate` → the JSON object that `ballast
//!   simulate --json` prints (or the config text with `--print-config`);
//! - [`simulate_options`]: the options of `ballast simulate` as clap knows them (ids, flags,
//!   help), so a caller can map its own keywords to exactly these options;
//! - [`run`]: the arguments of `ballast run` → the item's [`ItemResult`] (written only when
//!   asked);
//! - [`list_text`] and [`list`]: the listing of `ballast list`, as text and as JSON.
//!
//! No Ctrl-C handler is installed: the caller stops a run with
//! [`ballast_runner::request_interrupt`] and clears it afterwards
//! ([`ballast_runner::clear_interrupt`]). Progress and warnings are `tracing` events.

use std::path::PathBuf;

use anyhow::Context as _;
use ballast_runner::ItemResult;
use clap::{ArgAction, CommandFactory as _, Parser as _};
use serde::Serialize;
use serde_json::Value;

use crate::error::{BadInput, Interrupted};
use crate::{Cli, Command};

/// What kind of failure an error is: the exit code the binary would use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The user's input (arguments, parameters, config): exit code 2.
    BadInput,
    /// Stopped by [`ballast_runner::request_interrupt`] (Ctrl-C): exit code 130.
    Interrupted,
    /// Anything else: exit code 1.
    Failure,
}

/// The kind of an error returned by this module (or by [`crate::run_cli`]).
pub fn error_kind(e: &anyhow::Error) -> ErrorKind {
    if e.chain().any(|c| c.is::<BadInput>()) {
        ErrorKind::BadInput
    } else if e.chain().any(|c| c.is::<Interrupted>())
        || e.chain().any(|c| {
            matches!(
                c.downcast_ref::<ballast_runner::Error>(),
                Some(ballast_runner::Error::Interrupted { .. })
            )
        })
    {
        ErrorKind::Interrupted
    } else {
        ErrorKind::Failure
    }
}

/// Parses `ballast SUBCOMMAND ARGS...`; a usage error is a [`BadInput`] with clap's message.
fn parse<S: AsRef<str>>(subcommand: &str, argv: &[S]) -> Result<Command, BadInput> {
    let words = ["ballast", subcommand].into_iter().chain(argv.iter().map(AsRef::as_ref));
    Cli::try_parse_from(words).map(|cli| cli.command).map_err(|e| {
        // clap's message without its `error: ` prefix and its closing `--help` hint.
        let text = e.render().to_string();
        let text = text.split("\n\nFor more information").next().unwrap_or_default();
        BadInput::new(text.trim_start_matches("error: ").trim_end().to_owned())
    })
}

/// Runs `ballast simulate ARGV...` and returns what `--json` prints, as a JSON value (a
/// string holding the TOML config with `--print-config`). `--json` itself changes nothing
/// here.
///
/// An allocation process's object has the per-run values of `--json`: `per_run`, each
/// statistic's value in every run (`{"final_gap": [run 0, run 1, …], "max_gap": […], …}`,
/// potentials as `potential:<spec>`), and `trajectory` with observation points
/// (`--observe-every`, or `--batch`): `{"balls_per_bin": [x…], "columns": {"gap": [[run
/// values at x₀], …], "max_load": …, "min_load": …, "running_max_gap": …}}`.
pub fn simulate<S: AsRef<str>>(argv: &[S]) -> anyhow::Result<Value> {
    let Command::Simulate(args) = parse("simulate", argv)? else {
        unreachable!("the simulate subcommand parses to Command::Simulate")
    };
    crate::simulate::outcome(&args)?.to_json()
}

/// What a stepwise simulation needs to run exactly as run 0 of `ballast simulate ARGV...`:
/// the run spec of the one-point config's point (the runner's own, so every field the
/// pipeline sets is set alike) and the seed of run 0, `derive_seed(seed, [hash_str
/// ("simulate"), 0, 0])`. The spec's `m` is the one given (the caller replaces it). Only a
/// sequential or batched allocation process with unit weights qualifies: `--offline`,
/// round-based models, `--graph`, `--potential` and `--recovery-target` are refused.
pub fn simulate_spec<S: AsRef<str>>(argv: &[S]) -> anyhow::Result<(ballast_core::RunSpec, u64)> {
    let Command::Simulate(args) = parse("simulate", argv)? else {
        unreachable!("the simulate subcommand parses to Command::Simulate")
    };
    let unsupported = if args.offline.is_some() {
        Some("offline")
    } else if ballast_dynamic::registry::find(&args.process).is_ok() {
        Some("a round-based model")
    } else if args.graph.is_some() {
        Some("graph")
    } else if !args.potentials.is_empty() {
        Some("potentials")
    } else if args.recovery_target.is_some() {
        Some("recovery_target")
    } else {
        None
    };
    if let Some(what) = unsupported {
        return Err(BadInput::new(format!(
            "a Simulation runs an allocation process step by step; {what} is for simulate()"
        ))
        .into());
    }
    let (spec, proc_) = crate::simulate::build_spec(&args)?;
    if spec.weights != ballast_core::Weights::Unit {
        return Err(
            BadInput::new("a Simulation takes unit weights (its loads are ball counts)").into()
        );
    }
    let config = crate::simulate::one_point_config(&args, &spec, &proc_);
    let exp = ballast_runner::Experiment::from_table(
        crate::simulate::SIMULATE_ITEM,
        std::path::Path::new("<Simulation>"),
        &config,
    )
    .map_err(|e| BadInput::new(e.to_string()))?;
    let plan =
        exp.plan_at(ballast_runner::Scale::Full).map_err(|e| BadInput::new(e.to_string()))?;
    let point = plan.points.into_iter().next().context("the one-point config has a point")?;
    let seed = ballast_runner::Plan::unit_seed(args.seed, crate::simulate::SIMULATE_ITEM, 0, 0);
    Ok((point.spec, seed))
}

/// One option of `ballast simulate`, as clap defines it.
#[derive(Clone, Debug, Serialize)]
pub struct OptionSpec {
    /// The clap id (the field of [`crate::SimulateArgs`]), e.g. `tie_break`, `potentials`.
    pub id: String,
    /// The long flag without dashes, e.g. `tie-break`, `potential`.
    pub long: String,
    /// `flag` (a switch), `value` (one value) or `list` (repeatable).
    pub takes: &'static str,
    /// The value's name in `--help` (`KIND`, `B`), if any.
    pub value_name: Option<String>,
    /// Default values as text (empty: no default).
    pub default: Vec<String>,
    /// Allowed values where clap knows them (value enums), else empty.
    pub choices: Vec<String>,
    /// The `--help` line.
    pub help: String,
}

/// The options of `ballast simulate`, in `--help` order.
pub fn simulate_options() -> Vec<OptionSpec> {
    let cli = Cli::command();
    let sub = cli.find_subcommand("simulate").expect("ballast has a simulate subcommand");
    sub.get_arguments()
        .filter_map(|a| {
            let long = a.get_long()?;
            if matches!(a.get_action(), ArgAction::Help | ArgAction::Version) {
                return None;
            }
            let takes = match a.get_action() {
                ArgAction::SetTrue | ArgAction::SetFalse => "flag",
                ArgAction::Append => "list",
                _ => "value",
            };
            Some(OptionSpec {
                id: a.get_id().to_string(),
                long: long.to_owned(),
                takes,
                value_name: a.get_value_names().and_then(|v| v.first()).map(|v| v.to_string()),
                default: a
                    .get_default_values()
                    .iter()
                    .map(|v| v.to_string_lossy().into_owned())
                    .collect(),
                choices: a.get_possible_values().iter().map(|p| p.get_name().to_owned()).collect(),
                help: a.get_help().map(|h| h.to_string()).unwrap_or_default(),
            })
        })
        .collect()
}

/// The result of [`run`].
#[derive(Debug)]
pub struct RunOutput {
    /// The item id, `<paper>/<item>`.
    pub id: String,
    /// The aggregated result (rows, metadata, notes).
    pub result: ItemResult,
    /// The files written (`<out>/<paper>/<item>.{csv,json,svg,md}`), empty unless asked.
    pub written: Vec<PathBuf>,
}

/// Runs `ballast run ARGV...` (no `--shard`): loads and validates the config and runs the
/// item through the runner, with the binary's defaults for references and checkpoints
/// (`<out>/.checkpoint` unless `--no-checkpoint` or `--checkpoint DIR`). The outputs are
/// written to `--out` only when `write` is set.
pub fn run<S: AsRef<str>>(argv: &[S], write: bool) -> anyhow::Result<RunOutput> {
    let Command::Run(args) = parse("run", argv)? else {
        unreachable!("the run subcommand parses to Command::Run")
    };
    let (exp, result) = crate::run::item(&args)?;
    let written = if write {
        result.write(&args.out).with_context(|| format!("writing the outputs of {}", exp.id()))?
    } else {
        Vec::new()
    };
    Ok(RunOutput { id: exp.id().to_owned(), result, written })
}

/// A config given as text, for [`run_text`].
#[derive(Clone, Copy, Debug)]
pub enum ConfigText<'a> {
    /// TOML, as in a config file.
    Toml(&'a str),
    /// JSON of the same tables (what a Python dict serialises to); converted to TOML.
    Json(&'a str),
}

/// Runs a config given as text as [`run`] runs a file: `argv` holds the options of `ballast
/// run` after a stand-in config path (its directory is where the reference directory is
/// looked for, as for a file there); `id` is the item id (`<paper>/<item>`: the seeds derive
/// from it). Writes to `--out` only when `write`.
pub fn run_text<S: AsRef<str>>(
    config: ConfigText<'_>,
    id: &str,
    argv: &[S],
    write: bool,
) -> anyhow::Result<RunOutput> {
    let Command::Run(args) = parse("run", argv)? else {
        unreachable!("the run subcommand parses to Command::Run")
    };
    if !id.split_once('/').is_some_and(|(p, i)| !p.is_empty() && !i.is_empty() && !i.contains('/'))
    {
        return Err(BadInput::new(format!("item id `{id}`: expected <paper>/<item>")).into());
    }
    let (name, text) = match config {
        ConfigText::Toml(t) => ("<TOML text>", t.to_owned()),
        ConfigText::Json(j) => {
            let value: toml::Value =
                serde_json::from_str(j).map_err(|e| BadInput::new(format!("config dict: {e}")))?;
            let text = toml::to_string(&value)
                .map_err(|e| BadInput::new(format!("config dict: not a TOML table: {e}")))?;
            ("<config dict>", text)
        }
    };
    let (exp, result) = crate::run::item_from_text(&args, id, name, &text)?;
    let written = if write {
        result.write(&args.out).with_context(|| format!("writing the outputs of {}", exp.id()))?
    } else {
        Vec::new()
    };
    Ok(RunOutput { id: exp.id().to_owned(), result, written })
}

/// The text of `ballast list`.
pub fn list_text() -> String {
    crate::list::render()
}

/// The content of `ballast list` as JSON: `processes`, `models`, `topologies`,
/// `tie_breaks`, `settings`, `weights`, `starts`, `engines`, `configs_dir` and `items`, one object
/// per registry entry (the same entries and texts as [`list_text`]).
pub fn list() -> Value {
    crate::list::structured()
}
