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
pub fn simulate<S: AsRef<str>>(argv: &[S]) -> anyhow::Result<Value> {
    let Command::Simulate(args) = parse("simulate", argv)? else {
        unreachable!("the simulate subcommand parses to Command::Simulate")
    };
    crate::simulate::outcome(&args)?.to_json()
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
