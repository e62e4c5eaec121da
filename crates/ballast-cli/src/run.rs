//! `ballast run`: a thin wrapper over `ballast-runner` (load and validate the config, run it,
//! write `<out>/<paper>/<item>.{csv,json,svg,md}`, print the written paths), and `ballast
//! merge`, which combines the shard files of `ballast run --shard i/k`.
//!
//! Config problems (unreadable file, malformed TOML, unknown fields, out-of-range values,
//! missing reference files) and unusable shard files exit with code 2 before anything is
//! simulated or written. Ctrl-C stops after the runs in progress, keeps the finished runs in
//! the checkpoint directory and exits with code 130; the same command then resumes.

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
    /// Output directory; files go to `<DIR>/<paper>/<item>.*` (never the committed
    /// `results/` unless named: `cargo xtask reproduce` writes there).
    #[arg(long, value_name = "DIR", default_value = "out")]
    pub out: PathBuf,
    /// Directory of the reference CSVs (default: the nearest `reference/` above the config,
    /// else `./reference`).
    #[arg(long, value_name = "DIR")]
    pub reference: Option<PathBuf>,
    /// Worker threads, 1 to 1024 (default: rayon's default, which honours
    /// RAYON_NUM_THREADS).
    #[arg(long, value_parser = crate::whole::threads)]
    pub threads: Option<u64>,
    /// Use the config's `[reduced]` table (a documented smaller run), if it has one.
    #[arg(long, conflicts_with = "quick")]
    pub reduced: bool,
    /// Run only shard I of K (`--shard 2/8`): a deterministic subset of the (point, run)
    /// units, written to `<DIR>/<paper>/<item>.shard-I-of-K.bin` for `ballast merge`.
    #[arg(long, value_name = "I/K")]
    pub shard: Option<ballast_runner::Shard>,
    /// Checkpoint directory: finished runs are saved there, so an interrupted run resumes
    /// (default: `<DIR>/.checkpoint`).
    #[arg(long, value_name = "CKPT", conflicts_with = "no_checkpoint")]
    pub checkpoint: Option<PathBuf>,
    /// Neither read nor write checkpoints.
    #[arg(long)]
    pub no_checkpoint: bool,
    /// Simulate nothing: re-render the outputs from the checkpoints, and fail (writing
    /// nothing) if any run is not stored there.
    #[arg(long, conflicts_with_all = ["no_checkpoint", "shard"])]
    pub cached_only: bool,
}

/// Arguments of `ballast merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The experiment config the shards ran.
    pub config: PathBuf,
    /// The shard files (`<paper>/<item>.shard-I-of-K.bin`), all K of them, in any order.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// The shards ran the `[quick]` scale.
    #[arg(long)]
    pub quick: bool,
    /// The shards ran the `[reduced]` scale.
    #[arg(long, conflicts_with = "quick")]
    pub reduced: bool,
    /// Output directory; files go to `<DIR>/<paper>/<item>.*` (never the committed
    /// `results/` unless named: `cargo xtask reproduce` writes there).
    #[arg(long, value_name = "DIR", default_value = "out")]
    pub out: PathBuf,
    /// Directory of the reference CSVs (default as for `ballast run`).
    #[arg(long, value_name = "DIR")]
    pub reference: Option<PathBuf>,
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
    matches!(
        e,
        ballast_runner::Error::Config { .. }
            | ballast_runner::Error::Reference { .. }
            | ballast_runner::Error::Shard { .. }
            | ballast_runner::Error::Locked { .. }
    )
}

/// A runner error as the CLI reports it: bad input (exit 2), an interrupt (exit 130) or a
/// failure (exit 1) with `what` as context.
fn cli_error(e: ballast_runner::Error, what: String) -> anyhow::Error {
    if is_input_error(&e) {
        BadInput::new(e.to_string()).into()
    } else if matches!(e, ballast_runner::Error::Interrupted { .. }) {
        crate::error::Interrupted(e.to_string()).into()
    } else {
        anyhow::Error::new(e).context(what)
    }
}

/// Loads and validates a config (exit 2 when it is missing or invalid).
fn load(config: &Path) -> anyhow::Result<Experiment> {
    if config.is_dir() {
        return Err(BadInput::new(format!(
            "config `{}` is a directory (expected a file configs/<paper>/<item>.toml)",
            config.display()
        ))
        .into());
    }
    if !config.exists() {
        return Err(BadInput::new(format!(
            "config file `{}` not found (expected configs/<paper>/<item>.toml; `ballast list` shows the items)",
            config.display()
        ))
        .into());
    }
    Experiment::from_path(config).map_err(|e| match e {
        // Unreadable (permissions, a special file): the user's to fix, like a bad config.
        ballast_runner::Error::Io { .. } => BadInput::new(e.to_string()).into(),
        e => cli_error(e, format!("loading {}", config.display())),
    })
}

/// Refuses an output (or checkpoint) directory that exists as something else than a
/// directory, before anything is simulated.
fn out_dir_ok(dir: &Path, flag: &str) -> anyhow::Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(BadInput::new(format!(
            "{flag} {}: exists and is not a directory; give a directory (it is created if \
             missing)",
            dir.display()
        ))
        .into());
    }
    Ok(())
}

/// The run options of `ballast run` (scale, references, threads, shard, checkpoints).
fn options(args: &RunArgs) -> RunOptions {
    let mut opts =
        RunOptions::new(args.reference.clone().unwrap_or_else(|| find_reference_dir(&args.config)));
    opts.quick = args.quick;
    opts.reduced = args.reduced;
    opts.threads = args.threads.map_or(0, |t| usize::try_from(t).unwrap_or(usize::MAX));
    opts.shard = args.shard;
    opts.cached_only = args.cached_only;
    opts.cache_dir = if args.no_checkpoint {
        None
    } else {
        Some(args.checkpoint.clone().unwrap_or_else(|| args.out.join(".checkpoint")))
    };
    opts
}

/// Loads the config and runs the whole item (no shard) as `ballast run` does, without
/// writing its outputs and without installing a Ctrl-C handler.
pub fn item(args: &RunArgs) -> anyhow::Result<(Experiment, ballast_runner::ItemResult)> {
    if args.shard.is_some() {
        return Err(BadInput::new(
            "`--shard` writes a shard file for `ballast merge`: run it with the command line",
        )
        .into());
    }
    let exp = load(&args.config)?;
    let result = run_loaded(&exp, args)?;
    Ok((exp, result))
}

/// Runs a config given as text (TOML) as `ballast run` runs a file, under the item id `id`
/// (its seeds derive from it, as from a file's `<paper>/<item>`); `name` stands for the file
/// in messages. `args.config` only serves to find the reference directory (the nearest
/// `reference/` above it, unless `--reference`).
pub fn item_from_text(
    args: &RunArgs,
    id: &str,
    name: &str,
    text: &str,
) -> anyhow::Result<(Experiment, ballast_runner::ItemResult)> {
    if args.shard.is_some() {
        return Err(BadInput::new("`--shard` is for the command line").into());
    }
    let exp = Experiment::parse(id, Path::new(name), text)
        .map_err(|e| cli_error(e, format!("loading {name}")))?;
    let result = run_loaded(&exp, args)?;
    Ok((exp, result))
}

/// Runs a loaded item (no shard).
fn run_loaded(exp: &Experiment, args: &RunArgs) -> anyhow::Result<ballast_runner::ItemResult> {
    let opts = options(args);
    run_experiment(exp, &opts).map_err(|e| {
        let hint = reference_hint(&e, &opts.reference_dir, args);
        let e = cli_error(e, format!("running {}", exp.id()));
        match hint {
            Some(h) => BadInput::new(format!("{e:#}\n{h}")).into(),
            None => e,
        }
    })
}

/// For a reference table that could not be read: where it was looked for and how to name
/// another directory (`None` for other errors).
fn reference_hint(e: &ballast_runner::Error, dir: &Path, args: &RunArgs) -> Option<String> {
    let text = e.to_string().to_lowercase();
    let missing = text.contains("reference") && text.contains("no such file");
    if !missing {
        return None;
    }
    let shown = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    Some(match (&args.reference, dir.is_dir()) {
        (Some(_), _) if shown == dir => format!("(relative to --reference {})", dir.display()),
        (Some(_), _) => {
            format!("(relative to --reference {}, i.e. {})", dir.display(), shown.display())
        }
        (None, true) => format!(
            "(relative to the reference directory {}, the nearest `reference/` above the \
             config; `--reference DIR` names another)",
            shown.display()
        ),
        (None, false) => {
            let config = std::path::absolute(&args.config).unwrap_or_else(|_| args.config.clone());
            let above = config.parent().map_or_else(String::new, |d| d.display().to_string());
            format!(
                "(no reference directory: no `reference/` in {above} or any directory above it, \
                 nor in the working directory ({}); give `--reference DIR`, e.g. the \
                 repository's reference/)",
                shown.parent().map_or_else(String::new, |d| d.display().to_string())
            )
        }
    })
}

/// Entry point of `ballast run`.
pub fn main(args: &RunArgs) -> anyhow::Result<()> {
    let exp = load(&args.config)?;
    out_dir_ok(&args.out, "--out")?;
    crate::paths::item_outputs(&exp, &args.out, &[("the config", &args.config)])?;
    if let Some(c) = &args.checkpoint {
        out_dir_ok(c, "--checkpoint")?;
    }
    if args.shard.is_none() {
        ballast_runner::install_ctrl_c_handler().map_err(anyhow::Error::msg)?;
        let result = run_loaded(&exp, args)?;
        return finish(&exp, &result, &args.out, args.quick);
    }
    let opts = options(args);
    ballast_runner::install_ctrl_c_handler().map_err(anyhow::Error::msg)?;
    let shard = ballast_runner::run_shard(&exp, &opts)
        .map_err(|e| cli_error(e, format!("running {}", exp.id())))?;
    let path = shard
        .write(&args.out)
        .with_context(|| format!("writing the shard file of {}", exp.id()))?;
    tracing::info!(
        "{} shard {}: {} of {} units in {:.3} s",
        exp.id(),
        shard.shard,
        shard.units,
        shard.total_units,
        shard.wall_time_s
    );
    crate::stdout::println(&path.display().to_string())
}

/// Writes the outputs and prints their paths.
fn finish(
    exp: &Experiment,
    result: &ballast_runner::ItemResult,
    out: &Path,
    quick: bool,
) -> anyhow::Result<()> {
    let written =
        result.write(out).with_context(|| format!("writing the outputs of {}", exp.id()))?;
    tracing::info!(
        "{}{}: {} rows, {} balls in {:.3} s",
        exp.id(),
        if quick { " (quick)" } else { "" },
        result.rows.len(),
        result.meta.balls_simulated,
        result.meta.wall_time_s
    );
    let listing: String = written.iter().map(|p| format!("{}\n", p.display())).collect();
    crate::stdout::print(&listing)
}

/// Entry point of `ballast merge`.
pub fn merge(args: &MergeArgs) -> anyhow::Result<()> {
    let exp = load(&args.config)?;
    out_dir_ok(&args.out, "--out")?;
    let mut inputs = vec![("the config", args.config.as_path())];
    inputs.extend(args.shards.iter().map(|p| ("a shard file", p.as_path())));
    crate::paths::item_outputs(&exp, &args.out, &inputs)?;
    let mut opts =
        RunOptions::new(args.reference.clone().unwrap_or_else(|| find_reference_dir(&args.config)));
    opts.quick = args.quick;
    opts.reduced = args.reduced;
    let result = ballast_runner::merge_shards(&exp, &opts, &args.shards)
        .map_err(|e| cli_error(e, format!("merging {}", exp.id())))?;
    finish(&exp, &result, &args.out, args.quick)
}
