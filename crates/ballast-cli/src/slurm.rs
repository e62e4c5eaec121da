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
//!
//! # What goes into the script, and how
//!
//! The item id (the config's folder and file names), the paths and the options are text the
//! user chose; none of it may run as a command. [`render`] is the one place that writes the
//! script, and every string it interpolates goes through one of two functions, by context:
//!
//! - **Read by bash** (variable assignments, `sbatch` arguments, the comment naming the
//!   item): [`quote`], which writes any string as one bash word that means exactly that
//!   string: single quotes (a `'` inside written `'\''`), or `$'…'` with `\xHH` escapes when
//!   the string holds a control character (a newline, a tab, …), so a quoted word never
//!   spans lines and a comment line stays one comment. The body of the script then uses the
//!   values only as `"$VARIABLE"`, which bash never parses again. Only a NUL cannot be
//!   written (bash strings cannot hold it): refused.
//! - **Read by `sbatch` without a shell** (`#SBATCH` lines): [`directive`] writes the value
//!   as it is or refuses it (exit 2, with the reason): no white space, control characters,
//!   quotes, `$`, `` ` ``, `\` or `%` (`sbatch` expands `%` in file names such as
//!   `--output`). This concerns `--out` and the working directory (the `--chdir` and
//!   `--output` lines); the numbers, `--mem`, `--time`, `--partition` and `--account` are
//!   checked against stricter forms before.
//! - **The job name** (`--job-name`, which `--output`'s `%x` puts into the log file's name)
//!   is sanitised rather than refused, since it is only a label: `ballast-` and the id with
//!   `/` written `-` and every character other than ASCII letters, digits, `.`, `_` and `-`
//!   written `_` ([`job_name`]).
//!
//! The merge job's `--wrap` command is a second level: `sbatch` hands it to `sh`. The script
//! builds it when it runs, from its own path (`readlink -f "$0"`), single-quoted for `sh`
//! with each `'` written `'\''` (the substitution is written outside double quotes, where
//! bash 4.2 and later versions agree on it), and passes it to `sbatch` as one bash word.
//!
//! Paths that are not valid UTF-8 are refused (exit 2): the script is text, and a lossy
//! conversion would name another file.

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
    /// Output directory of the shards and the merged result (on a shared file system; never
    /// the committed `results/` unless named).
    #[arg(long, value_name = "DIR", default_value = "out")]
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

/// Writes `s` as one bash word meaning exactly `s` (see the module docs): `'…'`, with `'`
/// written `'\''`; `$'…'` with `\xHH` escapes when `s` holds a control character, so the word
/// is always on one line. `None` for a string holding a NUL, which bash cannot represent.
#[doc(hidden)]
pub fn quote(s: &str) -> Option<String> {
    if s.contains('\0') {
        return None;
    }
    if !s.chars().any(char::is_control) {
        return Some(format!("'{}'", s.replace('\'', r"'\''")));
    }
    let mut q = String::from("$'");
    for c in s.chars() {
        match c {
            '\\' => q.push_str(r"\\"),
            '\'' => q.push_str(r"\'"),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    q.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => q.push(c),
        }
    }
    q.push('\'');
    Some(q)
}

/// [`quote`] for a value the user gave (`what` names it): a NUL is bad input.
fn word(what: &str, s: &str) -> Result<String, BadInput> {
    quote(s)
        .ok_or_else(|| BadInput::new(format!("{what}: a NUL character cannot go into a script")))
}

/// Characters an `#SBATCH` value may not hold: `sbatch` reads these lines without a shell and
/// splits them at white space, and expands `%` in file names.
fn directive_char_ok(c: char) -> bool {
    !(c.is_whitespace() || c.is_control() || "'\"$`\\%".contains(c))
}

/// Writes `v` as the value of an `#SBATCH` line, or refuses it (`what` names it in the
/// message): see the module docs.
#[doc(hidden)]
pub fn directive(what: &str, v: &str) -> Result<String, BadInput> {
    if v.is_empty() || !v.chars().all(directive_char_ok) {
        return Err(BadInput::new(format!(
            "invalid path `{}` (from {what}): `#SBATCH` lines are read without a shell, so \
             Slurm scripts need paths without white space, control characters, quotes, $, `, \\ \
             or %",
            v.escape_debug()
        )));
    }
    Ok(v.to_string())
}

/// The job name of item `id`: `ballast-` and the id, `/` written `-` and any character other
/// than ASCII letters, digits, `.`, `_` and `-` written `_` (a label, so sanitised rather
/// than refused).
#[doc(hidden)]
pub fn job_name(id: &str) -> String {
    let body: String = id
        .chars()
        .map(|c| match c {
            '/' => '-',
            c if c.is_ascii_alphanumeric() || "._-".contains(c) => c,
            _ => '_',
        })
        .collect();
    format!("ballast-{body}")
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// A path as UTF-8 text, or bad input naming `what`.
fn utf8<'a>(what: &str, p: &'a Path) -> Result<&'a str, BadInput> {
    p.to_str().ok_or_else(|| {
        BadInput::new(format!(
            "{what} `{}` is not valid UTF-8: a Slurm script is text and could not name it",
            p.display()
        ))
    })
}

/// Checks a free-text Slurm option for characters that would break the script.
fn plain(name: &str, v: &str) -> Result<(), BadInput> {
    if v.is_empty() || !v.chars().all(|c| c.is_ascii_alphanumeric() || "-_:.,+".contains(c)) {
        return Err(BadInput::new(format!(
            "invalid value `{}` for --{name}: expected letters, digits and - _ : . , +",
            v.escape_debug()
        )));
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

/// Every value the script is made of, as text: what [`render`] writes. [`main`] fills it
/// from the command line, the config's id, the current directory and the binary's path.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct ScriptSpec {
    /// The item id `<paper>/<item>`.
    pub id: String,
    /// The config path, as given (the jobs run in `workdir`).
    pub config: String,
    /// The output directory, as given.
    pub out: String,
    /// The absolute directory of the job logs (`OUT/slurm-logs`).
    pub logs: String,
    /// The absolute directory the jobs run in.
    pub workdir: String,
    /// The absolute path of the `ballast` binary the jobs run.
    pub ballast: String,
    /// Number of shards.
    pub shards: u32,
    /// CPUs per shard.
    pub cpus: u32,
    /// Memory per shard (Slurm syntax).
    pub mem: String,
    /// Time limit (Slurm syntax).
    pub time: String,
    /// Partition, if any.
    pub partition: Option<String>,
    /// Account, if any.
    pub account: Option<String>,
    /// `Some("--quick")` or `Some("--reduced")`: the scale flag of the jobs.
    pub scale: Option<&'static str>,
}

/// Checks the options with a fixed syntax (`--time`, `--mem`, `--partition`, `--account`).
fn check_options(spec: &ScriptSpec) -> Result<(), BadInput> {
    if !slurm_time_ok(&spec.time) {
        return Err(BadInput::new(format!(
            "invalid value `{}` for --time: expected a Slurm time limit: MINUTES, \
             MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES, \
             DAYS-HOURS:MINUTES:SECONDS (such as 04:00:00 or 1-00:00:00) or infinite",
            spec.time.escape_debug()
        )));
    }
    if !slurm_mem_ok(&spec.mem) {
        return Err(BadInput::new(format!(
            "invalid value `{}` for --mem: expected a Slurm memory size, digits with an \
             optional unit K, M, G or T (such as 4G or 500M)",
            spec.mem.escape_debug()
        )));
    }
    plain("time", &spec.time)?;
    plain("mem", &spec.mem)?;
    if let Some(p) = &spec.partition {
        plain("partition", p)?;
    }
    if let Some(a) = &spec.account {
        plain("account", a)?;
    }
    Ok(())
}

/// The `#SBATCH` lines of `--partition` and `--account`, and the same options as quoted
/// arguments of the merge's `sbatch`.
fn optional_lines(spec: &ScriptSpec) -> Result<(String, String), BadInput> {
    let mut lines = String::new();
    let mut merge = String::new();
    for (flag, v) in [("partition", &spec.partition), ("account", &spec.account)] {
        if let Some(v) = v {
            let what = format!("--{flag}");
            lines.push_str(&format!("#SBATCH --{flag}={}\n", directive(&what, v)?));
            merge.push_str(&format!(" --{flag}={}", word(&what, v)?));
        }
    }
    Ok((lines, merge))
}

/// The script for `spec` (a pure function of it): see the module docs for how each value is
/// written. Bad input (an option of the wrong form, a path `#SBATCH` cannot hold, a NUL) is
/// an error naming the value.
#[doc(hidden)]
pub fn render(spec: &ScriptSpec) -> Result<String, BadInput> {
    check_options(spec)?;
    let (paper, item) = spec.id.rsplit_once('/').unwrap_or(("", &spec.id));
    let name = job_name(&spec.id);
    let (extra, merge_opts) = optional_lines(spec)?;
    let (k, cpus) = (spec.shards, spec.cpus);
    let scale = spec.scale.map(|s| format!(" {s}")).unwrap_or_default();
    Ok(format!(
        r#"#!/bin/bash
# Slurm job array for the ballast item {id_q}: {k} shards, then a merge.
# Written by `ballast slurm`. Submit from a login node with:  bash THIS_SCRIPT
# (do not `sbatch` it directly: that runs the shards but submits no merge job).
#SBATCH --job-name={name_d}
#SBATCH --array=1-{k}
#SBATCH --cpus-per-task={cpus}
#SBATCH --mem={mem_d}
#SBATCH --time={time_d}
#SBATCH --chdir={workdir_d}
#SBATCH --output={logs_d}/%x-%A_%a.out
{extra}set -euo pipefail
self="$(readlink -f "$0")"
# The values, each one quoted word; below they are only used as "$NAME".
ITEM_ID={id_q}
PAPER={paper_q}
ITEM={item_q}
JOB_NAME={name_q}
CONFIG={config_q}
OUT={out_q}
LOGS={logs_q}
SHARDS={k}
cd {workdir_q}
BALLAST="${{BALLAST:-}}"
[ -n "$BALLAST" ] || BALLAST={ballast_q}

if [ "${{1:-}}" = merge ]; then
    # The merge job: combine the {k} shard files into the item's outputs.
    exec "$BALLAST" merge "$CONFIG"{scale} --out "$OUT" \
        "$OUT/$PAPER/$ITEM".shard-*-of-{k}.bin
elif [ -n "${{SLURM_ARRAY_TASK_ID:-}}" ]; then
    # Array task i: shard i of {k}; finished runs are checkpointed, so a rerun resumes.
    exec "$BALLAST" run "$CONFIG"{scale} --out "$OUT" --threads "${{SLURM_CPUS_PER_TASK:-{cpus}}}" \
        --shard "$SLURM_ARRAY_TASK_ID/$SHARDS" --checkpoint "$OUT/.checkpoint"
else
    # On the login node: submit the array, then the merge once every shard succeeded.
    mkdir -p "$LOGS"
    array_id="$(sbatch --parsable "$self")"
    array_id="${{array_id%%;*}}"
    # The merge job's command runs under sh: the script's path goes in single-quoted, each
    # ' written '\'' (outside double quotes, where every bash since 4.2 agrees on it).
    q=\'
    self_q=${{self//$q/$q\\$q$q}}
    merge_id="$(sbatch --parsable --job-name="$JOB_NAME-merge" --dependency=afterok:"$array_id" \
        --kill-on-invalid-dep=yes --cpus-per-task=1 --mem={mem_q} --time={time_q} \
        --output="$LOGS/%x-%j.out"{merge_opts} --wrap="bash '$self_q' merge")"
    printf 'submitted %s: shards as job array %s, merge as job %s\n' \
        "$ITEM_ID" "$array_id" "${{merge_id%%;*}}"
    printf 'outputs: %s/%s/%s.{{csv,json,svg,md}}\n' "$OUT" "$PAPER" "$ITEM"
fi
"#,
        id_q = word("the item id", &spec.id)?,
        paper_q = word("the item id", paper)?,
        item_q = word("the item id", item)?,
        name_d = directive("the job name", &name)?,
        name_q = word("the job name", &name)?,
        mem_d = directive("--mem", &spec.mem)?,
        mem_q = word("--mem", &spec.mem)?,
        time_d = directive("--time", &spec.time)?,
        time_q = word("--time", &spec.time)?,
        workdir_d = directive("the current directory", &spec.workdir)?,
        workdir_q = word("the current directory", &spec.workdir)?,
        logs_d = directive("--out", &spec.logs)?,
        logs_q = word("--out", &spec.logs)?,
        config_q = word("the config path", &spec.config)?,
        out_q = word("--out", &spec.out)?,
        ballast_q = word("--ballast", &spec.ballast)?,
    ))
}

/// The spec of the script for `args` and the validated experiment `id` (`<paper>/<item>`).
fn spec(args: &SlurmArgs, id: &str) -> anyhow::Result<ScriptSpec> {
    let ballast = match &args.ballast {
        Some(b) => absolute(b),
        None => std::env::current_exe().context("locating the ballast binary")?,
    };
    // The jobs run in this directory with the paths as given, so their outputs record the
    // same config path as a run from here.
    let workdir = std::env::current_dir().context("reading the current directory")?;
    let logs = absolute(&args.out).join("slurm-logs");
    let scale = if args.quick {
        Some("--quick")
    } else if args.reduced {
        Some("--reduced")
    } else {
        None
    };
    Ok(ScriptSpec {
        id: id.to_string(),
        config: utf8("the config path", &args.config)?.to_string(),
        out: utf8("--out", &args.out)?.to_string(),
        logs: utf8("--out", &logs)?.to_string(),
        workdir: utf8("the current directory", &workdir)?.to_string(),
        ballast: utf8("--ballast", &ballast)?.to_string(),
        shards: args.shards,
        cpus: args.cpus,
        mem: args.mem.clone(),
        time: args.time.clone(),
        partition: args.partition.clone(),
        account: args.account.clone(),
        scale,
    })
}

/// The script for `args` and the validated experiment `id` (`<paper>/<item>`), and the
/// binary it runs.
pub fn script(args: &SlurmArgs, id: &str) -> anyhow::Result<(String, PathBuf)> {
    let spec = spec(args, id)?;
    let text = render(&spec)?;
    Ok((text, PathBuf::from(spec.ballast)))
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
    let (text, ballast) = script(args, exp.id())?;
    match &args.output {
        Some(path) => {
            crate::paths::distinct(
                &[("the config", &args.config), ("the ballast binary (--ballast)", &ballast)],
                &[("-o", path)],
            )?;
            ballast_runner::files::write_atomically(path, text.as_bytes())
                .with_context(|| format!("writing {}", path.display()))?;
            tracing::info!("wrote {}: submit it with `bash {}`", path.display(), path.display());
        }
        None => crate::stdout::print(&text)?,
    }
    Ok(())
}
