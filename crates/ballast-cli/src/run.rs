//! `ballast run`: a thin wrapper over `ballast-runner` (load, validate, run, write outputs).

use std::path::PathBuf;

use clap::Args;

/// Arguments of `ballast run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The experiment config (TOML).
    pub config: PathBuf,
    /// Use the config's `[quick]` scale-down.
    #[arg(long)]
    pub quick: bool,
    /// Output directory (default: the runner's default, `results/`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Worker threads (default: rayon's default, which honours RAYON_NUM_THREADS).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
}

/// Entry point of `ballast run`.
pub fn main(args: &RunArgs) -> anyhow::Result<()> {
    anyhow::bail!("`ballast run` is not wired yet ({})", args.config.display())
}
