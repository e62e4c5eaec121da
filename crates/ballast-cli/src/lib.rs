//! The `ballast` command line as a library: the binary `ballast` (`src/main.rs`) and the
//! Python package (`crates/ballast-py`) run the same parsers, pipelines and reports.
//!
//! - [`Cli`] and [`run_cli`]: the subcommands of the binary (see its `--help`); [`main_with`]:
//!   the binary with processes of one's own registered beside the built-ins;
//! - [`embed`]: argv-like strings in, structured results out (what `ballast simulate
//!   --json` prints, an item's [`ballast_runner::ItemResult`], the listing), for callers that
//!   are not a terminal. Errors keep their kind ([`ErrorKind`]): bad input, interrupt or
//!   failure, as the exit codes 2, 130 and 1 of the binary.
//!
//! Everything the binary prints on standard output goes through one writer (`stdout.rs`):
//! a failed write is an error (exit 1), a pipe whose reader has gone exits quietly with 141
//! ([`StdoutClosed`]). The environment variables that change a run are checked like options
//! before `simulate` and `run` start: `RAYON_NUM_THREADS` (when `--threads` is not given)
//! within the bounds of `--threads`, `BALLAST_PROGRESS_SECS` a whole number of seconds.
//!
//! Nothing here installs a Ctrl-C handler or a log subscriber: the binary does
//! ([`ballast_runner::install_ctrl_c_handler`], [`ballast_runner::install_logging`]),
//! an embedding program decides for itself.

// The clap `///` comments are `--help` text, read in a terminal: `[r]`, `torus[:DIM]` and
// `<paper>` there are plain text, not rustdoc links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod capacities;
mod dynamic_bins;
pub mod embed;
mod error;
mod list;
mod list_sections;
mod paths;
mod plot;
mod process;
mod run;
mod sampling;
pub mod serve;
mod simulate;
mod slurm;
mod start;
mod stdout;
mod whole;

use clap::{Parser, Subcommand};

pub use embed::ErrorKind;
pub use error::{
    exit_code, with_surface, BadInput, Interrupted, StdoutClosed, Surface, EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE, EXIT_FAILURE, EXIT_INTERRUPTED,
};
pub use plot::PlotArgs;
pub use run::{MergeArgs, RunArgs};
pub use simulate::{EngineArg, SimulateArgs, StopArg};
pub use slurm::SlurmArgs;
// The Slurm script as a pure function of its values, for the fuzz target and the tests.
#[doc(hidden)]
pub use slurm::{directive as slurm_directive, job_name as slurm_job_name, quote as shell_quote};
#[doc(hidden)]
pub use slurm::{render as render_slurm_script, ScriptSpec as SlurmScriptSpec};

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
    /// Serve the results gallery, a playground and an animation as a local web page.
    Serve(serve::ServeArgs),
}

/// Runs one subcommand as the binary does (its output on stdout, Ctrl-C handled by the
/// runner's handler where it simulates).
pub fn run_cli(cli: &Cli) -> anyhow::Result<()> {
    match &cli.command {
        Command::Simulate(args) => {
            check_env(args.threads.is_some())?;
            simulate::main(args)
        }
        Command::Run(args) => {
            check_env(args.threads.is_some())?;
            run::main(args)
        }
        Command::Merge(args) => run::merge(args),
        Command::Slurm(args) => slurm::main(args),
        Command::Plot(args) => plot::main(args),
        Command::List => stdout::print(&list::render()),
        Command::Serve(args) => serve::main(args),
    }
}

/// The `ballast` program with `processes` registered beside the built-ins
/// ([`ballast_core::registry::register`]): a crate that declares its own processes gets
/// every subcommand for them (`simulate`, `run` with grids, seeds, checkpoints and shards,
/// `merge`, `slurm`, `plot`, `list`) from a `main` of one line. Parses the command line,
/// installs the log, runs the subcommand and exits with its code (2 for bad input,
/// including a process that cannot be registered).
pub fn main_with(processes: &[&'static ballast_core::registry::ProcessDef]) -> ! {
    let cli = Cli::parse();
    ballast_runner::install_logging(cli.log.options());
    let registered = processes.iter().try_for_each(|def| {
        ballast_core::registry::register(def)
            .map_err(|e| anyhow::Error::new(BadInput::new(e.to_string())))
    });
    if let Err(e) = registered.and_then(|()| run_cli(&cli)) {
        let code = exit_code(&e);
        if code != EXIT_BROKEN_PIPE {
            tracing::error!("{e:#}");
        }
        std::process::exit(code);
    }
    std::process::exit(0)
}

/// The most worker threads `--threads` accepts, and so `RAYON_NUM_THREADS`.
const MAX_THREADS: u64 = 1024;

/// Checks the environment variables that change a run, as options are checked (exit 2):
/// `RAYON_NUM_THREADS` (read by rayon when `--threads` is not given) must be a whole number
/// up to [`MAX_THREADS`] (0: rayon's default, one thread per CPU), and
/// `BALLAST_PROGRESS_SECS` a whole number of seconds. Unset or empty: the defaults.
fn check_env(threads_given: bool) -> Result<(), BadInput> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let (false, Some(v)) = (threads_given, var("RAYON_NUM_THREADS")) {
        let n = v.to_str().and_then(|t| t.trim().parse::<u64>().ok());
        if n.is_none_or(|n| n > MAX_THREADS) {
            return Err(BadInput::new(format!(
                "RAYON_NUM_THREADS={:?}: expected a whole number of worker threads from 1 to \
                 {MAX_THREADS}, as --threads accepts (0 or unset: one per CPU)",
                v
            )));
        }
    }
    if let Some(v) = var("BALLAST_PROGRESS_SECS") {
        if v.to_str().and_then(|t| t.trim().parse::<u64>().ok()).is_none() {
            return Err(BadInput::new(format!(
                "BALLAST_PROGRESS_SECS={:?}: expected a whole number of seconds between the \
                 progress lines written when standard error is not a terminal (0: after every \
                 run; unset: {})",
                v,
                ballast_runner::units::PROGRESS_LOG_SECS
            )));
        }
    }
    Ok(())
}
