//! `ballast run`: a thin wrapper over `ballast-runner` (load and validate the config, run it,
//! write `<out>/<paper>/<item>.{csv,json,svg,md}`, print the written paths).
//!
//! Config problems (unreadable file, malformed TOML, unknown fields, out-of-range values,
//! missing reference files) exit with code 2 before anything is simulated or written.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use ballast_runner::{run_experiment, Experiment, RunOptions};
use clap::Args;

use crate::error::BadInput;

/// Arguments of `ballast run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The experiment config, `configs/<paper>/<item>.toml` (the id is `<paper>/<item>`).
    pub config: PathBuf,
    /// Use the config's `[quick]` scale-down (seconds; for tests and CI).
    #[arg(long)]
    pub quick: bool,
    /// Output directory; files go to `<DIR>/<paper>/<item>.*`.
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// Directory of the reference CSVs (default: the nearest `reference/` above the config,
    /// else `./reference`).
    #[arg(long, value_name = "DIR")]
    pub reference: Option<PathBuf>,
    /// Worker threads (default: rayon's default, which honours RAYON_NUM_THREADS).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub threads: Option<u64>,
}

/// The nearest `reference/` directory above the config file, else `./reference`.
fn find_reference_dir(config: &Path) -> PathBuf {
    let abs = std::path::absolute(config).unwrap_or_else(|_| config.to_path_buf());
    abs.ancestors()
        .skip(1)
        .map(|d| d.join("reference"))
        .find(|d| d.is_dir())
        .unwrap_or_else(|| PathBuf::from("reference"))
}

/// Whether a runner error is the user's to fix (exit 2).
fn is_input_error(e: &ballast_runner::Error) -> bool {
    matches!(e, ballast_runner::Error::Config { .. } | ballast_runner::Error::Reference { .. })
}

/// Entry point of `ballast run`.
pub fn main(args: &RunArgs) -> anyhow::Result<()> {
    if !args.config.is_file() {
        return Err(BadInput::new(format!(
            "config file `{}` not found (expected configs/<paper>/<item>.toml; `ballast list` shows the items)",
            args.config.display()
        ))
        .into());
    }
    let exp = Experiment::from_path(&args.config).map_err(|e| -> anyhow::Error {
        if is_input_error(&e) {
            BadInput::new(e.to_string()).into()
        } else {
            anyhow::Error::new(e).context(format!("loading {}", args.config.display()))
        }
    })?;
    let mut opts =
        RunOptions::new(args.reference.clone().unwrap_or_else(|| find_reference_dir(&args.config)));
    opts.quick = args.quick;
    opts.threads = args.threads.map_or(0, |t| usize::try_from(t).unwrap_or(usize::MAX));
    let result = run_experiment(&exp, &opts).map_err(|e| -> anyhow::Error {
        if is_input_error(&e) {
            BadInput::new(e.to_string()).into()
        } else {
            anyhow::Error::new(e).context(format!("running {}", exp.id()))
        }
    })?;
    let written =
        result.write(&args.out).with_context(|| format!("writing the outputs of {}", exp.id()))?;
    eprintln!(
        "{}{}: {} rows, {} balls in {:.3} s",
        exp.id(),
        if args.quick { " (quick)" } else { "" },
        result.rows.len(),
        result.meta.balls_simulated,
        result.meta.wall_time_s
    );
    for p in written {
        println!("{}", p.display());
    }
    Ok(())
}
