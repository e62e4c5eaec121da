//! The `ballast` command line as a library: the binary `ballast` (`src/main.rs`) and the
//! Python package (`crates/ballast-py`) run the same parsers, pipelines and reports.
//!
//! - [`Cli`] and [`run_cli`]: the subcommands of the binary (see its `--help`);
//! - [`embed`]: argv-like strings in, structured results out (what `ballast simulate
//!   --json` prints, an item's [`ballast_runner::ItemResult`], the listing), for callers that
//!   are not a terminal. Errors keep their kind ([`ErrorKind`]): bad input, interrupt or
//!   failure, as the exit codes 2, 130 and 1 of the binary.
//!
//! Nothing here installs a Ctrl-C handler or a log subscriber: the binary does
//! ([`ballast_runner::install_ctrl_c_handler`], [`ballast_runner::install_logging`]),
//! an embedding program decides for itself.

// The clap `///` comments are `--help` text, read in a terminal: `[r]`, `torus[:DIM]` and
// `<paper>` there are plain text, not rustdoc links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod embed;
mod error;
mod list;
mod plot;
mod process;
mod run;
mod sampling;
mod simulate;
mod slurm;
mod start;

use clap::{Parser, Subcommand};

pub use embed::ErrorKind;
pub use error::{exit_code, BadInput, Interrupted, EXIT_BAD_INPUT, EXIT_FAILURE, EXIT_INTERRUPTED};
pub use plot::PlotArgs;
pub use run::{MergeArgs, RunArgs};
pub use simulate::{EngineArg, SimulateArgs, StopArg};
pub use slurm::SlurmArgs;

/// Balls-into-bins laboratory: simulate allocation processes and reproduce published results.
#[derive(Debug, Parser)]
#[command(name = "ballast", version, about)]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
    /// `-v`/`-q`/`--log-format` (read by the binary when it installs its log).
    #[command(flatten)]
    pub log: ballast_runner::logging::LogArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
// Parsed once per invocation: the size of `simulate`'s many options costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Simulate one process: gap mean ± stderr, distribution, samples and ns per ball.
    Simulate(simulate::SimulateArgs),
    /// Run one experiment config (TOML) and write its outputs (or one shard of it).
    Run(run::RunArgs),
    /// Merge the shard files of `ballast run --shard I/K` into the experiment's outputs.
    Merge(run::MergeArgs),
    /// Write a Slurm script running an experiment as a job array of shards plus a merge.
    Slurm(slurm::SlurmArgs),
    /// Re-draw the figure of one or several results (overlay runs, choose series, log axes).
    Plot(plot::PlotArgs),
    /// List processes with their parameters, tie-breaking rules, settings, weights and items.
    List,
}

/// Runs one subcommand as the binary does (its output on stdout, Ctrl-C handled by the
/// runner's handler where it simulates).
pub fn run_cli(cli: &Cli) -> anyhow::Result<()> {
    match &cli.command {
        Command::Simulate(args) => simulate::main(args),
        Command::Run(args) => run::main(args),
        Command::Merge(args) => run::merge(args),
        Command::Slurm(args) => slurm::main(args),
        Command::Plot(args) => plot::main(args),
        Command::List => {
            print!("{}", list::render());
            Ok(())
        }
    }
}
