//! `ballast`: the command line of the ballast balls-into-bins laboratory.
//!
//! - `ballast simulate --process KIND [--param k=v]... --n N --m M [--batch B] [--runs R] ...`:
//!   ad-hoc runs with a summary (or one JSON object with `--json`);
//! - `ballast run CONFIG.toml [--quick] [--out DIR] [--threads N]`: one experiment config
//!   through `ballast-runner`;
//! - `ballast run CONFIG.toml --shard I/K`: one shard of it (a deterministic subset of the
//!   (point, run) units), and `ballast merge CONFIG.toml SHARD...`: the shards combined into
//!   the same outputs as one run;
//! - `ballast slurm CONFIG.toml --shards K`: a Slurm script that runs the shards as a job
//!   array and merges them;
//! - `ballast plot RESULT... [-o FILE.svg] [--series S] [--log-x] [--log-y]`: the figure of
//!   one or several results re-drawn from their outputs (overlaid, some series, log axes);
//! - `ballast list`: processes, parameters, tie-breaking rules, settings, weights, items.
//!
//! Bad input exits with code 2 and a message naming the field and the allowed values; an
//! interrupted run (Ctrl-C) exits with code 130 after saving its finished runs.

// The clap `///` comments are `--help` text, read in a terminal: `[r]`, `torus[:DIM]` and
// `<paper>` there are plain text, not rustdoc links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod error;
mod list;
mod plot;
mod process;
mod run;
mod simulate;
mod simulate_kinds;
mod slurm;

use clap::{Parser, Subcommand};

/// Balls-into-bins laboratory: simulate allocation processes and reproduce published results.
#[derive(Debug, Parser)]
#[command(name = "ballast", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    log: ballast_runner::logging::LogArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
enum Command {
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

fn main() {
    let cli = Cli::parse();
    ballast_runner::install_logging(cli.log.options());
    let result = match &cli.command {
        Command::Simulate(args) => simulate::main(args),
        Command::Run(args) => run::main(args),
        Command::Merge(args) => run::merge(args),
        Command::Slurm(args) => slurm::main(args),
        Command::Plot(args) => plot::main(args),
        Command::List => {
            print!("{}", list::render());
            Ok(())
        }
    };
    if let Err(e) = result {
        tracing::error!("{e:#}");
        std::process::exit(error::exit_code(&e));
    }
}
