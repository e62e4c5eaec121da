//! `ballast slurm`: writes a Slurm script that runs an experiment as a job array of shards
//! and then a dependent merge job.
//!
//! The script is one file with three roles. Run on a login node (`bash run.sh`), it submits
//! itself as a job array (`sbatch --array=1-K`) and a merge job that starts when every shard
//! has succeeded (`--dependency=afterok`). As array task `i` it runs `ballast run CONFIG
//! --shard i/K`; called with the argument `merge` it runs `ballast merge` on the K shard
//! files. Shards checkpoint their finished runs, so a task that was preempted or timed out
//! resumes when it is requeued or resubmitted.
//!
//! Three details come from running the script under a real Slurm (`.ci/slurm-test.sh`):
//! the merge job asks for the shards' time limit, not a fixed one, since a partition whose
//! `MaxTime` is below a fixed limit leaves the merge pending for ever (`PartitionTimeLimit`);
//! it is submitted with `--kill-on-invalid-dep=yes`, so a failed shard cancels it instead of
//! leaving it pending (`DependencyNeverSatisfied`); and its `--wrap` command, which Slurm runs
//! with `sh`, single-quotes the script's path, which may contain spaces.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap::Args;

use crate::error::BadInput;

/// Arguments of `ballast slurm`.
#[derive(Debug, Args)]
pub struct SlurmArgs {
    /// The experiment config.
    pub config: PathBuf,
    /// Number of shards (array tasks).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub shards: u32,
    /// Output directory of the shards and the merged result (on a shared file system).
    #[arg(long, value_name = "DIR", default_value = "results")]
    pub out: PathBuf,
    /// CPUs per shard (`--cpus-per-task`, and the shard's `--threads`).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub cpus: u32,
    /// Time limit per shard and for the merge job (`--time`, Slurm syntax such as `04:00:00`
    /// or `1-00:00:00`).
    #[arg(long, default_value = "04:00:00")]
    pub time: String,
    /// Memory per shard (`--mem`, e.g. `4G`).
    #[arg(long, default_value = "4G")]
    pub mem: String,
    /// Partition (`--partition`); default: the cluster's.
    #[arg(long)]
    pub partition: Option<String>,
    /// Account (`--account`); default: the user's.
    #[arg(long)]
    pub account: Option<String>,
    /// Run the config's `[quick]` scale.
    #[arg(long)]
    pub quick: bool,
    /// Run the config's `[reduced]` scale.
    #[arg(long, conflicts_with = "quick")]
    pub reduced: bool,
    /// The `ballast` binary the jobs run (default: this one; the `BALLAST` environment
    /// variable overrides it when the script runs).
    #[arg(long, value_name = "PATH")]
    pub ballast: Option<PathBuf>,
    /// Write the script here instead of to standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// Single-quotes a string for the shell.
fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Checks a free-text Slurm option for characters that would break the script.
fn plain(name: &str, v: &str) -> anyhow::Result<()> {
    if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || "-_:.,+".contains(c)) {
        return Err(BadInput::new(format!(
            "invalid value `{v}` for --{name}: expected letters, digits and - _ : . , +"
        ))
        .into());
    }
    Ok(())
}

/// Whether `v` is a Slurm time limit: `MINUTES`, `MINUTES:SECONDS`, `HOURS:MINUTES:SECONDS`,
/// `DAYS-HOURS`, `DAYS-HOURS:MINUTES`, `DAYS-HOURS:MINUTES:SECONDS`, `infinite` or
/// `unlimited`.
fn slurm_time_ok(v: &str) -> bool {
    if v.eq_ignore_ascii_case("infinite") || v.eq_ignore_ascii_case("unlimited") {
        return true;
    }
    let digits = |t: &str| !t.is_empty() && t.len() <= 9 && t.chars().all(|c| c.is_ascii_digit());
    let rest = match v.split_once('-') {
        Some((days, rest)) if digits(days) => rest,
        Some(_) => return false,
        None => v,
    };
    let parts: Vec<&str> = rest.split(':').collect();
    parts.len() <= 3 && parts.iter().all(|p| digits(p))
}

/// Whether `v` is a Slurm memory size: digits with an optional unit K, M, G or T.
fn slurm_mem_ok(v: &str) -> bool {
    let num = v.strip_suffix(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't']).unwrap_or(v);
    !num.is_empty() && num.len() <= 12 && num.chars().all(|c| c.is_ascii_digit())
}

/// The script for `args` and the validated experiment `id` (`<paper>/<item>`).
pub fn script(args: &SlurmArgs, id: &str) -> anyhow::Result<String> {
    if !slurm_time_ok(&args.time) {
        return Err(BadInput::new(format!(
            "invalid value `{}` for --time: expected a Slurm time limit: MINUTES, \
             MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, \
             DAYS-HOURS:MINUTES:SECONDS (such as 04:00:00 or 1-00:00:00) or infinite",
            args.time
        ))
        .into());
    }
    if !slurm_mem_ok(&args.mem) {
        return Err(BadInput::new(format!(
            "invalid value `{}` for --mem: expected a Slurm memory size, digits with an \
             optional unit K, M, G or T (such as 4G or 500M)",
            args.mem
        ))
        .into());
    }
    plain("time", &args.time)?;
    plain("mem", &args.mem)?;
    if let Some(p) = &args.partition {
        plain("partition", p)?;
    }
    if let Some(a) = &args.account {
        plain("account", a)?;
    }
    let ballast = match &args.ballast {
        Some(b) => absolute(b),
        None => std::env::current_exe().context("locating the ballast binary")?,
    };
    // The jobs run in this directory with the paths as given, so their outputs record the
    // same config path as a run from here.
    let workdir = std::env::current_dir().context("reading the current directory")?;
    let logs = absolute(&args.out).join("slurm-logs");
    // `#SBATCH` lines are not parsed by a shell: these paths must not need quoting.
    for (flag, p) in [("--out", &logs), ("the current directory", &workdir)] {
        let text = p.display().to_string();
        if text.chars().any(|c| c.is_whitespace() || "'\"$`\\%".contains(c)) {
            return Err(BadInput::new(format!(
                "invalid path `{text}` (from {flag}): Slurm scripts need paths without spaces, \
                 quotes, $, ` or %"
            ))
            .into());
        }
    }
    let (paper, item) = id.rsplit_once('/').unwrap_or(("", id));
    let scale = if args.quick {
        " --quick"
    } else if args.reduced {
        " --reduced"
    } else {
        ""
    };
    let k = args.shards;
    let name = format!("ballast-{}", id.replace('/', "-"));
    let mut extra = String::new();
    if let Some(p) = &args.partition {
        extra.push_str(&format!("#SBATCH --partition={p}\n"));
    }
    if let Some(a) = &args.account {
        extra.push_str(&format!("#SBATCH --account={a}\n"));
    }
    let mut merge_opts = String::new();
    if let Some(p) = &args.partition {
        merge_opts.push_str(&format!(" --partition={p}"));
    }
    if let Some(a) = &args.account {
        merge_opts.push_str(&format!(" --account={a}"));
    }
    Ok(format!(
        r#"#!/bin/bash
# Slurm job array for the ballast item {id}: {k} shards, then a merge.
# Written by `ballast slurm`. Submit from a login node with:  bash THIS_SCRIPT
# (do not `sbatch` it directly: that runs the shards but submits no merge job).
#SBATCH --job-name={name}
#SBATCH --array=1-{k}
#SBATCH --cpus-per-task={cpus}
#SBATCH --mem={mem}
#SBATCH --time={time}
#SBATCH --chdir={workdir}
#SBATCH --output={logs}/%x-%A_%a.out
{extra}set -euo pipefail
self="$(readlink -f "$0")"
cd {workdir_q}
BALLAST="${{BALLAST:-}}"
[ -n "$BALLAST" ] || BALLAST={ballast}
CONFIG={config}
OUT={out}
SHARDS={k}

if [ "${{1:-}}" = merge ]; then
    # The merge job: combine the {k} shard files into the item's outputs.
    exec "$BALLAST" merge "$CONFIG"{scale} --out "$OUT" \
        "$OUT"/{paper_q}/{item_q}.shard-*-of-{k}.bin
elif [ -n "${{SLURM_ARRAY_TASK_ID:-}}" ]; then
    # Array task i: shard i of {k}; finished runs are checkpointed, so a rerun resumes.
    exec "$BALLAST" run "$CONFIG"{scale} --out "$OUT" --threads "${{SLURM_CPUS_PER_TASK:-{cpus}}}" \
        --shard "$SLURM_ARRAY_TASK_ID/$SHARDS" --checkpoint "$OUT/.checkpoint"
else
    # On the login node: submit the array, then the merge once every shard succeeded.
    mkdir -p {logs_q}
    array_id="$(sbatch --parsable "$self")"
    array_id="${{array_id%%;*}}"
    # The merge job's command runs under sh: the script's path goes in single-quoted.
    self_q="'${{self//\'/\'\\\'\'}}'"
    merge_id="$(sbatch --parsable --job-name={name}-merge --dependency=afterok:"$array_id" \
        --kill-on-invalid-dep=yes --cpus-per-task=1 --mem={mem} --time={time} \
        --output={logs_q}/%x-%j.out{merge_opts} --wrap="bash $self_q merge")"
    echo "submitted {id}: shards as job array $array_id, merge as job ${{merge_id%%;*}}"
    echo "outputs: $OUT/{paper}/{item}.{{csv,json,svg,md}}"
fi
"#,
        cpus = args.cpus,
        mem = args.mem,
        time = args.time,
        logs = logs.display(),
        logs_q = sh(&logs.display().to_string()),
        workdir = workdir.display(),
        workdir_q = sh(&workdir.display().to_string()),
        ballast = sh(&ballast.display().to_string()),
        paper_q = sh(paper),
        item_q = sh(item),
        config = sh(&args.config.display().to_string()),
        out = sh(&args.out.display().to_string()),
    ))
}

/// Entry point of `ballast slurm`.
pub fn main(args: &SlurmArgs) -> anyhow::Result<()> {
    if !args.config.is_file() {
        return Err(BadInput::new(format!(
            "config file `{}` not found (expected configs/<paper>/<item>.toml)",
            args.config.display()
        ))
        .into());
    }
    let exp = ballast_runner::Experiment::from_path(&args.config)
        .map_err(|e| BadInput::new(e.to_string()))?;
    let text = script(args, exp.id())?;
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
            tracing::info!("wrote {}: submit it with `bash {}`", path.display(), path.display());
        }
        None => print!("{text}"),
    }
    Ok(())
}
