//! `cargo xtask`: project automation for ballast (the only script language of the repository).
//!
//! - `cargo xtask reproduce <selector>... [--quick] [--out DIR] [--threads N]`: run the
//!   experiments of `configs/<paper>/<item>.toml` and write `<out>/<paper>/<item>.{csv,json,svg,md}`.
//!   (`<out>` is the committed `results/` by design, and the run says so; `--quick` defaults
//!   to `target/xtask-quick/`.) A selector is a full id (`batched22/fig8_1`), a bare item name (`fig8_1`: every item of
//!   that name), a paper (`tower23`) or `all`. An unknown selector or an invalid config exits
//!   with code 2 before anything runs or is written.
//!   `--shard i/k` runs one shard of each item's (point, run) units and writes
//!   `<out>/<paper>/<item>.shard-i-of-k.bin` for `ballast merge`. Finished runs are checkpointed
//!   in `target/ballast-cache/` (`--no-cache` recomputes those of earlier invocations; a
//!   point two selected items share is simulated once); Ctrl-C stops after the runs in
//!   progress (exit 130) and the same command resumes.
//! - `cargo xtask reproduce <selector>... --check [--budget SECS]`: writes nothing under
//!   `results/`; re-renders each item (from its checkpoints, by simulating it again when that
//!   costs at most SECS core-seconds, else at quick scale) and fails, naming the files, if a
//!   committed output would change (see the `check` module).
//! - `cargo xtask ci [--skip STEP]...`: format, lints, docs, tests, `reproduce all --check`
//!   and the Python package's tests, each timed; `.ci/run` installs what is missing and calls
//!   it.
//! - `cargo xtask refresh [selector...]`: rewrites the CSV and SVG of every committed result
//!   from its JSON (after a change to how tables or figures are written; nothing simulated).
//! - `cargo xtask formulas [--check]`: writes the reference tables computed from formulas
//!   (the frozen-rank prediction of Unfair d-Choice, the fluid limit of Two-Choice and (1+β));
//!   `--check` fails if a committed one differs (see the `formulas` module).
//! - `cargo xtask deviation [--check]`: the distance of the committed `meanfield/two_choice`
//!   results from the fluid limit against n, as a table and a figure (see the `deviation`
//!   module).
//! - Every command takes `-v`/`-q`, `--log-format json`, and reads `RUST_LOG`.
//! - `cargo xtask bench [selector...]`: wall time of `reproduce --quick` per item, as a table.
//!   `--filling` also runs the criterion group `filling` (ns per ball of each filling and
//!   memory process at n = 10^4; alone, without selectors, only that).
//! - `cargo xtask bench --floor [--big] [--reference] [--reps R] [--only WORD]
//!   [--out FILE.csv]`: the floor table, from one run of `cargo run --release -p
//!   ballast-benches --bin floor`: ns per ball of a floor loop (two bounded indices from
//!   `SimRng` per ball, nothing else) and of the bin and level engines for sequential One-,
//!   Two-, Three-Choice, (1+β) β = 0.5, Quantile δ = 0.5, g-Bounded, g-Myopic,
//!   σ-Noisy-Load and batched Two-Choice (b = n, 10n) at n = 10^3..10^6 (`--big`: also 10^7
//!   and 10^8, minutes and 400 MB), m calibrated so each run takes about 150 ms, the median
//!   of R runs (default 5), and the median ratio to a floor run made just before each of
//!   them at the same n, and beside it the ratio to the case's own floor (the random
//!   numbers its law needs, e.g. three indices for Three-Choice); `--reference` adds the
//!   bin engine without its kernels. Markdown on
//!   stdout, CSV to `--out` (default `target/bench/floor.csv`). Alone, without selectors,
//!   only the table. `--dynamic`: the round-based models instead (RBB, leaky bins, the
//!   infinite Azar process with d = 1 and 2 at n = 10^2..10^5), ns per throw against a floor
//!   of one bounded index per throw (CSV `target/bench/floor_dynamic.csv`).

// The clap `///` comments are `--help` text, read in a terminal: `[r]`, `torus[:DIM]` and
// `<paper>` there are plain text, not rustdoc links or HTML.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

mod check;
mod ci;
mod deviation;
mod formulas;
mod refresh;
mod verdicts;

use anyhow::{Context, Result};
use ballast_runner::{discover, run_experiment, Experiment, RunOptions, Verdict};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "cargo xtask", about = "ballast project automation")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    log: ballast_runner::logging::LogArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Reproduce figures and tables of the papers (configs/<paper>/<item>.toml).
    Reproduce {
        /// Item ids (`batched22/fig8_1`), bare item names (`fig8_1`), papers (`tower23`) or `all`.
        #[arg(required = true)]
        selectors: Vec<String>,
        /// Run the scaled-down `[quick]` variant (seconds per item).
        #[arg(long)]
        quick: bool,
        /// Output directory (default: `results/`; with `--quick`: `target/xtask-quick/`, so a
        /// quick run never overwrites the committed full-scale results).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads (default: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Run the config's `[reduced]` scale (a documented smaller run, for items whose full
        /// scale does not fit the machine); items without one run at full scale.
        #[arg(long, conflicts_with = "quick")]
        reduced: bool,
        /// Ignore the checkpoints in `target/ballast-cache/` from earlier invocations and
        /// simulate everything again (the new outcomes replace them). A checkpoint written by
        /// this invocation is read: a point two selected items share is simulated once.
        #[arg(long)]
        no_cache: bool,
        /// Simulate nothing: re-render the outputs from the checkpoints, and fail (writing
        /// nothing) if any run of an item is not stored there.
        #[arg(long, conflicts_with_all = ["no_cache", "shard"])]
        cached_only: bool,
        /// Run only shard I of K of each item (`--shard 2/8`), writing
        /// `<out>/<paper>/<item>.shard-I-of-K.bin`; combine them with `ballast merge`.
        #[arg(long, value_name = "I/K")]
        shard: Option<ballast_runner::Shard>,
        /// Write nothing under results/: re-render each item (from its checkpoints, by
        /// simulating it again when that costs at most --budget core-seconds, else at quick
        /// scale) and fail, naming the files, if a committed output would change.
        #[arg(long, conflicts_with_all = ["quick", "reduced", "out", "no_cache", "cached_only", "shard"])]
        check: bool,
        /// With --check: core-seconds of simulation allowed per item without checkpoints.
        #[arg(long, default_value_t = 30.0, requires = "check", value_name = "SECS")]
        budget: f64,
    },
    /// Every check of the repository, as CI runs it: format, lints, docs, tests,
    /// `reproduce all --check`, the Python package's tests.
    Ci {
        /// Leave out a step (repeatable): format, lints, docs, tests, reproduce, python.
        #[arg(long, value_name = "STEP")]
        skip: Vec<String>,
    },
    /// Rewrite the CSV and SVG of every committed result from its JSON (after a change to
    /// how tables or figures are written; nothing is simulated).
    Refresh {
        /// Selectors as for `reproduce` (default `all`).
        selectors: Vec<String>,
    },
    /// Write the computed reference tables (`reference/redlich26_unfair_d_choice.csv`,
    /// `reference/meanfield_two_choice.csv`) from their formulas.
    Formulas {
        /// Write nothing; fail if a committed table differs from its formula.
        #[arg(long)]
        check: bool,
    },
    /// Write `results/meanfield/deviation/two_choice.{csv,md,svg}`: the distance of the
    /// committed `meanfield/two_choice` results from the fluid limit against n.
    Deviation {
        /// Write nothing; fail if a committed file differs from what the results give.
        #[arg(long)]
        check: bool,
    },
    /// Rewrite `<out>/README.md`, the index of the results (also done by `reproduce`).
    Index {
        /// Results directory (default: `results/` in the repository).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Time whole items: wall time of `reproduce --quick` per item (default: all items).
    Bench {
        /// Selectors as for `reproduce` (default `all`; with `--filling` alone, none).
        selectors: Vec<String>,
        /// Worker threads (default: one per core).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Also run the criterion group `filling` (`cargo bench -p ballast-benches --bench
        /// filling`): ns per ball of every filling and memory process at n = 10^4 beside
        /// Two-Choice's.
        #[arg(long)]
        filling: bool,
        /// Also print the floor table (`cargo run --release -p ballast-benches --bin floor`):
        /// ns per ball of the engines beside a floor loop (two bounded indices from SimRng
        /// per ball) and their ratio, n = 10^3..10^6; alone, without selectors, only that.
        #[arg(long)]
        floor: bool,
        /// With --floor: also n = 10^7 and 10^8 (minutes; 400 MB of loads).
        #[arg(long, requires = "floor", conflicts_with = "dynamic")]
        big: bool,
        /// With --floor: the round-based models instead of the engines (RBB, leaky bins,
        /// the infinite Azar process, d = 1 and 2, at n = 10^2..10^5): ns per throw beside a
        /// floor of one bounded index per throw; `--reference` adds their reference loops.
        #[arg(long, requires = "floor")]
        dynamic: bool,
        /// With --floor: timed runs per row, the median is reported (default 5).
        #[arg(long, requires = "floor")]
        reps: Option<usize>,
        /// With --floor: only the cases whose label contains WORD (or any of WORD,WORD..; floor
        /// rows always run).
        #[arg(long, requires = "floor", value_name = "WORD")]
        only: Option<String>,
        /// With --floor: also rows `bins-ref`, the bin engine without its sequential kernels
        /// (the straightforward loop they are tested against), in the same run.
        #[arg(long, requires = "floor")]
        reference: bool,
        /// With --floor: where to write the CSV (default target/bench/floor.csv).
        #[arg(long, requires = "floor", value_name = "FILE")]
        out: Option<PathBuf>,
    },
}

/// An error that ends the program with exit code 2 (bad input: selector or config).
#[derive(Debug)]
struct UsageError(String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn repo_root() -> PathBuf {
    // xtask/ lives directly under the repository root.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// Resolves selectors to (id, path), in the order of the discovered ids, without duplicates.
fn select(all: &[(String, PathBuf)], selectors: &[String]) -> Result<Vec<(String, PathBuf)>> {
    let mut chosen: Vec<bool> = vec![false; all.len()];
    let mut unknown = Vec::new();
    for sel in selectors {
        let sel = sel.trim_end_matches(".toml");
        let hits: Vec<usize> = all
            .iter()
            .enumerate()
            .filter(|(_, (id, _))| {
                let (paper, item) = id.split_once('/').unwrap_or(("", id.as_str()));
                sel == "all" || id == sel || item == sel || paper == sel
            })
            .map(|(i, _)| i)
            .collect();
        if hits.is_empty() {
            unknown.push(sel.to_string());
        }
        if !sel.contains('/') && sel != "all" && hits.len() > 1 {
            let ids: Vec<&str> = hits.iter().map(|&i| all[i].0.as_str()).collect();
            tracing::info!("`{sel}` selects {}", ids.join(", "));
        }
        for i in hits {
            chosen[i] = true;
        }
    }
    if !unknown.is_empty() {
        let valid: Vec<&str> = all.iter().map(|(id, _)| id.as_str()).collect();
        let mut papers: Vec<&str> =
            valid.iter().filter_map(|id| id.split_once('/').map(|(p, _)| p)).collect();
        papers.dedup();
        return Err(UsageError(format!(
            "unknown selector{} {}\nvalid: all, papers ({}), items ({})",
            if unknown.len() > 1 { "s" } else { "" },
            unknown.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "),
            papers.join(", "),
            valid.join(", ")
        ))
        .into());
    }
    Ok(all.iter().zip(chosen).filter(|(_, c)| *c).map(|(e, _)| e.clone()).collect())
}

/// Loads (and so validates, every point of the full and quick plans) all selected configs.
fn load(items: &[(String, PathBuf)], root: &Path) -> Result<Vec<Experiment>> {
    let mut exps = Vec::new();
    let mut errors = Vec::new();
    for (_, path) in items {
        let rel = path.strip_prefix(root).unwrap_or(path);
        match Experiment::from_path(rel) {
            Ok(e) => exps.push(e),
            Err(e) => errors.push(e.to_string()),
        }
    }
    if errors.is_empty() {
        Ok(exps)
    } else {
        Err(UsageError(errors.join("\n")).into())
    }
}

fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("cargo xtask {}", args.join(" "))
}

/// `refresh`: see [`refresh`].
fn refresh_items(selectors: &[String]) -> Result<()> {
    let root = repo_root();
    std::env::set_current_dir(&root).with_context(|| format!("cd {}", root.display()))?;
    let all = discover(Path::new("configs"))?;
    let sel = if selectors.is_empty() { vec!["all".to_string()] } else { selectors.to_vec() };
    let ids: Vec<String> = select(&all, &sel)?.into_iter().map(|(id, _)| id).collect();
    let changed = refresh::refresh(Path::new("results"), &ids)?;
    println!("{changed} file(s) rewritten");
    Ok(())
}

/// `reproduce --check`: see [`check`].
fn check_items(selectors: &[String], args: &check::CheckArgs) -> Result<()> {
    let root = repo_root();
    std::env::set_current_dir(&root).with_context(|| format!("cd {}", root.display()))?;
    let all = discover(Path::new("configs"))?;
    let exps = load(&select(&all, selectors)?, &root)?;
    ballast_runner::install_ctrl_c_handler().map_err(anyhow::Error::msg)?;
    check::check(&exps, args)
}

/// What `reproduce` runs and where it writes.
struct ReproduceArgs {
    quick: bool,
    reduced: bool,
    out: Option<PathBuf>,
    threads: usize,
    refresh: bool,
    cached_only: bool,
    shard: Option<ballast_runner::Shard>,
}

fn reproduce(selectors: &[String], args: ReproduceArgs) -> Result<()> {
    let ReproduceArgs { quick, reduced, out, threads, refresh, cached_only, shard } = args;
    let root = repo_root();
    // Relative config paths in the metadata: run from the repository root.
    std::env::set_current_dir(&root).with_context(|| format!("cd {}", root.display()))?;
    let all = discover(Path::new("configs"))?;
    let items = select(&all, selectors)?;
    let exps = load(&items, &root)?;
    let out =
        out.unwrap_or_else(|| PathBuf::from(if quick { "target/xtask-quick" } else { "results" }));
    if out == Path::new("results") {
        tracing::info!(
            "writing into the committed results/ (by design: reproduce regenerates them; \
             --out DIR writes elsewhere, and `ballast run` writes to out/)"
        );
    }
    let mut opts = RunOptions::new("reference");
    opts.quick = quick;
    opts.reduced = reduced;
    opts.threads = threads;
    opts.command = Some(command_line());
    opts.cache_dir = Some(PathBuf::from("target/ballast-cache"));
    opts.refresh_cache = refresh;
    opts.cached_only = cached_only;
    opts.shard = shard;
    ballast_runner::install_ctrl_c_handler().map_err(anyhow::Error::msg)?;
    if shard.is_some() {
        for exp in &exps {
            let f = ballast_runner::run_shard(exp, &opts)
                .with_context(|| format!("running {}", exp.id()))?;
            let path = f.write(&out).with_context(|| format!("writing {}", exp.id()))?;
            tracing::info!(
                "{} shard {}: {} units in {:.1} s",
                exp.id(),
                f.shard,
                f.units,
                f.wall_time_s
            );
            println!("{}", path.display());
        }
        return Ok(());
    }
    for exp in &exps {
        tracing::info!("{}{} …", exp.id(), if quick { " (quick)" } else { "" });
        let t = Instant::now();
        let result = run_experiment(exp, &opts).with_context(|| format!("running {}", exp.id()))?;
        let files = result.write(&out).with_context(|| format!("writing {}", exp.id()))?;
        let verdicts: Vec<String> = result
            .series
            .iter()
            .map(|s| format!("{s}: {}", Verdict::of(&result.rows, s, 0).word()))
            .collect();
        tracing::info!("  {:.1} s; {}", t.elapsed().as_secs_f64(), verdicts.join("; "));
        for f in files {
            println!("{}", f.display());
        }
        if exp.id() == deviation::ITEM {
            deviation::write(&out, &repo_root().join("reference"), false)?;
        }
    }
    let index = write_index(&out)?;
    println!("{}", index.display());
    Ok(())
}

/// One entry of the results index, read back from an item's report.
struct IndexEntry {
    id: String,
    title: String,
    overall: String,
    /// Every compared series and its class.
    series: Vec<(String, verdicts::Class)>,
    quick: bool,
    reduced: bool,
    cost: Cost,
}

/// What producing an item cost, from its JSON metadata.
struct Cost {
    scale: String,
    balls: f64,
    wall_s: f64,
    threads: f64,
    cpu_s: Option<f64>,
    /// Points read from checkpoints of earlier invocations.
    cached_points: u64,
    /// Points read from checkpoints another item of the same invocation wrote.
    shared_points: u64,
}

fn read_cost(json: &Path) -> Result<Cost> {
    let text =
        std::fs::read_to_string(json).with_context(|| format!("reading {}", json.display()))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", json.display()))?;
    let m = &v["metadata"];
    Ok(Cost {
        scale: m["scale"].as_str().unwrap_or("?").to_string(),
        balls: m["balls_simulated"].as_f64().unwrap_or(f64::NAN),
        wall_s: m["wall_time_s"].as_f64().unwrap_or(f64::NAN),
        threads: m["threads"].as_f64().unwrap_or(f64::NAN),
        cpu_s: m["cpu_time_s"].as_f64(),
        cached_points: m["cached_points"].as_u64().unwrap_or(0),
        shared_points: m["shared_points"].as_u64().unwrap_or(0),
    })
}

fn read_entry(md: &Path, id: String, recorded: &verdicts::Recorded) -> Result<IndexEntry> {
    let text = std::fs::read_to_string(md).with_context(|| format!("reading {}", md.display()))?;
    let title = text
        .lines()
        .next()
        .and_then(|l| l.split_once(": "))
        .map(|(_, t)| t.trim().to_string())
        .unwrap_or_default();
    let overall = text
        .lines()
        .find_map(|l| l.strip_prefix("Overall: "))
        .unwrap_or("no reference")
        .trim_end_matches('.')
        .to_string();
    let quick = text.contains("(**quick** variant");
    let reduced = text.contains("(**reduced scale**");
    let cost = read_cost(&md.with_extension("json"))?;
    let series = verdicts::parse(&text)
        .into_iter()
        .map(|s| {
            let class = verdicts::classify(&id, &s, recorded);
            (s.series, class)
        })
        .collect();
    Ok(IndexEntry { id, title, overall, series, quick, reduced, cost })
}

/// Writes `<out>/README.md`: one line per item report found under `<out>/<paper>/` (a report
/// with its metadata `<item>.json` beside it; other Markdown files, such as the benchmark
/// tables of `results/bench/`, are not items).
fn write_index(out: &Path) -> Result<PathBuf> {
    let recorded = verdicts::Recorded::read(&repo_root().join("reference/disagreements.toml"))?;
    let mut entries = Vec::new();
    for paper in std::fs::read_dir(out).with_context(|| format!("reading {}", out.display()))? {
        let paper = paper?.path();
        if !paper.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&paper)? {
            let f = f?.path();
            if f.extension().is_some_and(|e| e == "md") && f.with_extension("json").is_file() {
                let p =
                    paper.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let i = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                entries.push(read_entry(&f, format!("{p}/{i}"), &recorded)?);
            }
        }
    }
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    let mut s = String::from(
        "# Results\n\nCommitted outputs of `cargo xtask reproduce <id>`, which writes here by design \
         (regenerate with that command; `cargo xtask index` rewrites this file; `ballast run` \
         writes to `out/` unless told otherwise). Each item has a tidy CSV, JSON metadata \
         (command, config hash, seed, git revision), an SVG figure and a Markdown report \
         comparing every value with the published one. The speed of the engines, process by \
         process, is measured in the benchmark tables of `bench/` \
         ([bench/README.md](bench/README.md)).\n\nVerdicts, per compared series against \
         the first reference (the published numbers): **agrees**; **differs from the published \
         figure, agrees with the authors' program** (with the evidence below); **borderline** (k \
         of N points beyond 3σ, none beyond |z| = 5); **unexplained** (what is known is below). \
         Every series that does not agree is listed under \"Disagreements and their causes\" \
         (classes from the reports and `reference/disagreements.toml`).\n\n\
         | item | what | figure | report | verdict |\n|---|---|---|---|---|\n",
    );
    for e in &entries {
        s.push_str(&format!(
            "| `{}` | {} | [svg]({}.svg) | [report]({}.md) | {}{}{} |\n",
            e.id,
            e.title.replace('|', "\\|"),
            e.id,
            e.id,
            verdict_cell(e).replace('|', "\\|"),
            if e.quick { " (quick run)" } else { "" },
            if e.reduced { " (reduced scale: see the report)" } else { "" }
        ));
    }
    s.push_str(&causes(&entries));
    s.push_str(&cost_table(&entries));
    let path = out.join("README.md");
    ballast_runner::files::write_atomically(&path, s.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(path)
}

/// An item's verdict in the index: the report's overall line when every compared series
/// agrees (or there is no reference), else how many agree and the class of each other one.
fn verdict_cell(e: &IndexEntry) -> String {
    use verdicts::Class;
    let others: Vec<String> = e
        .series
        .iter()
        .filter(|(_, c)| *c != Class::Agrees)
        .map(|(name, c)| format!("`{name}`: {}", verdicts::short(c)))
        .collect();
    if others.is_empty() {
        return e.overall.clone();
    }
    let agree = e.series.len() - others.len();
    format!("{agree} of {} series agree; {}", e.series.len(), others.join("; "))
}

/// The list of every series that does not agree, with its class and cause.
fn causes(entries: &[IndexEntry]) -> String {
    use verdicts::Class;
    let mut s = String::from("\n## Disagreements and their causes\n\n");
    for e in entries {
        for (name, c) in e.series.iter().filter(|(_, c)| *c != Class::Agrees) {
            if matches!(c, Class::Unexplained(None)) {
                tracing::warn!(
                    "{}: series `{name}`: no cause in reference/disagreements.toml",
                    e.id
                );
            }
            s.push_str(&format!(
                "- `{}`, {name}: {} ([report]({}.md)): {}.\n",
                e.id,
                verdicts::short(c),
                e.id,
                verdicts::cause(c).trim_end_matches('.')
            ));
        }
    }
    s
}

/// The index's second table: what each committed result cost to produce, and the sums.
fn cost_table(entries: &[IndexEntry]) -> String {
    let mut s = String::from(
        "\n## What each result cost\n\nFrom each item's JSON metadata: the wall time of the \
         invocation that produced it (with the recorded time of the points read from \
         checkpoints of earlier invocations), its threads, and its CPU time where recorded \
         (with the recorded CPU time of the runs read from checkpoints or shard files; \
         results produced before the metadata had it show –). CPU time near wall time × \
         threads means the cores were the run's own; well below it, the machine was shared and \
         the wall time overstates the cost. \"Fresh\" means no point came from a checkpoint of \
         an earlier invocation; \"shared\" points were read from the checkpoints an item run \
         before it in the same invocation had just written or read (their time is in that \
         item's row only). This table is the one source of costs (the repository README quotes \
         only what its first two commands cost); where the CPU time is missing, rerun the item \
         with `--no-cache` for a fresh measurement.\n\n\
         | item | scale | balls | wall (s) | threads | CPU (s) | fresh |\n|---|---|---|---|---|---|---|\n",
    );
    let (mut wall, mut core, mut cpu, mut fresh) = (0.0, 0.0, 0.0, 0usize);
    for e in entries {
        let c = &e.cost;
        wall += c.wall_s;
        core += c.wall_s * c.threads;
        cpu += c.cpu_s.unwrap_or(0.0);
        fresh += usize::from(c.cached_points == 0);
        s.push_str(&format!(
            "| `{}` | {} | {:.2e} | {:.1} | {} | {} | {} |\n",
            e.id,
            c.scale,
            c.balls,
            c.wall_s,
            c.threads,
            c.cpu_s.map_or_else(|| "–".to_string(), |t| format!("{t:.1}")),
            if c.cached_points == 0 && c.shared_points > 0 {
                format!("yes ({} points shared)", c.shared_points)
            } else if c.cached_points == 0 {
                "yes".to_string()
            } else {
                format!("no ({} points from checkpoints)", c.cached_points)
            }
        ));
    }
    s.push_str(&format!(
        "\nSum over {} items: {:.0} s of wall time ({:.2} h), {:.0} core-seconds (wall × \
         threads), {:.0} s of recorded CPU time; {fresh} of them fresh.\n",
        entries.len(),
        wall,
        wall / 3600.0,
        core,
        cpu
    ));
    s
}

fn bench(selectors: &[String], threads: usize) -> Result<()> {
    let root = repo_root();
    std::env::set_current_dir(&root).with_context(|| format!("cd {}", root.display()))?;
    let all = discover(Path::new("configs"))?;
    let sel = if selectors.is_empty() { vec!["all".to_string()] } else { selectors.to_vec() };
    let exps = load(&select(&all, &sel)?, &root)?;
    let mut opts = RunOptions::new("reference");
    opts.quick = true;
    opts.threads = threads;
    opts.progress = false;
    opts.command = Some(command_line());
    println!("| item | points | runs | balls | wall s | ns/ball (wall × threads) |");
    println!("|---|---|---|---|---|---|");
    let mut total = 0.0;
    for exp in &exps {
        let t = Instant::now();
        let r = run_experiment(exp, &opts).with_context(|| format!("running {}", exp.id()))?;
        let wall = t.elapsed().as_secs_f64();
        total += wall;
        let ns = wall * 1e9 * r.meta.threads as f64 / (r.meta.balls_simulated.max(1) as f64);
        println!(
            "| {} | {} | {} | {} | {wall:.2} | {ns:.1} |",
            exp.id(),
            r.meta.points,
            r.meta.runs,
            r.meta.balls_simulated
        );
    }
    println!("\ntotal {total:.2} s (quick variants, outputs not written)");
    Ok(())
}

/// Runs the criterion group `filling` (output inherited: criterion's `thrpt` is in balls,
/// so ns/ball = 1000 / (Melem/s)).
fn bench_filling() -> Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .current_dir(repo_root())
        .args(["bench", "-p", "ballast-benches", "--bench", "filling"])
        .status()
        .context("running cargo bench")?;
    anyhow::ensure!(status.success(), "cargo bench --bench filling failed: {status}");
    Ok(())
}

/// Options of the floor table, passed through to the `floor` binary.
struct FloorArgs {
    big: bool,
    dynamic: bool,
    reference: bool,
    reps: Option<usize>,
    only: Option<String>,
    out: Option<PathBuf>,
}

/// Runs the `floor` binary of `ballast-benches` (release build; output inherited).
fn bench_floor(args: &FloorArgs) -> Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.current_dir(repo_root()).args([
        "run",
        "--release",
        "-p",
        "ballast-benches",
        "--bin",
        "floor",
        "--",
    ]);
    if args.big {
        cmd.arg("--big");
    }
    if args.dynamic {
        cmd.arg("--dynamic");
    }
    if args.reference {
        cmd.arg("--reference");
    }
    if let Some(r) = args.reps {
        cmd.arg("--reps").arg(r.to_string());
    }
    if let Some(w) = &args.only {
        cmd.arg("--only").arg(w);
    }
    if let Some(o) = &args.out {
        cmd.arg("--out").arg(o);
    }
    let status = cmd.status().context("running the floor benchmark")?;
    anyhow::ensure!(status.success(), "the floor benchmark failed: {status}");
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    ballast_runner::install_logging(cli.log.options());
    let res = match cli.command {
        Command::Reproduce { selectors, threads, check: true, budget, .. } => {
            check_items(&selectors, &check::CheckArgs { threads, budget_s: budget })
        }
        Command::Reproduce {
            selectors,
            quick,
            out,
            threads,
            reduced,
            no_cache,
            cached_only,
            shard,
            ..
        } => reproduce(
            &selectors,
            ReproduceArgs { quick, reduced, out, threads, refresh: no_cache, cached_only, shard },
        ),
        Command::Bench {
            selectors,
            threads,
            filling,
            floor,
            big,
            dynamic,
            reps,
            only,
            reference,
            out,
        } => {
            // A relative --out is relative to where xtask was started (`bench` changes the
            // working directory to the repository root).
            let out = out.map(|o| std::path::absolute(&o).unwrap_or(o));
            let alone = (filling || floor) && selectors.is_empty();
            let items = if alone { Ok(()) } else { bench(&selectors, threads) };
            items.and_then(|()| if filling { bench_filling() } else { Ok(()) }).and_then(|()| {
                if floor {
                    bench_floor(&FloorArgs { big, dynamic, reference, reps, only, out })
                } else {
                    Ok(())
                }
            })
        }
        Command::Ci { skip } => ci::ci(&repo_root(), &skip),
        Command::Refresh { selectors } => refresh_items(&selectors),
        Command::Formulas { check } => formulas::run(&repo_root(), check),
        Command::Deviation { check } => deviation::run(&repo_root(), check),
        Command::Index { out } => {
            let root = repo_root();
            write_index(&out.unwrap_or_else(|| root.join("results")))
                .map(|p| println!("{}", p.display()))
        }
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            let runner = e.chain().find_map(|c| c.downcast_ref::<ballast_runner::Error>());
            if matches!(runner, Some(ballast_runner::Error::Interrupted { .. })) {
                return ExitCode::from(130);
            }
            let usage = e.downcast_ref::<UsageError>().is_some()
                || matches!(
                    runner,
                    Some(
                        ballast_runner::Error::Config { .. } | ballast_runner::Error::Shard { .. }
                    )
                );
            ExitCode::from(if usage { 2 } else { 1 })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> Vec<(String, PathBuf)> {
        ["batched22/fig8_1", "filling22/fig8_1", "tower23/table6_5"]
            .iter()
            .map(|s| (s.to_string(), PathBuf::from(format!("configs/{s}.toml"))))
            .collect()
    }

    #[test]
    fn selectors() {
        let names = |sel: &[&str]| -> Vec<String> {
            let sel: Vec<String> = sel.iter().map(|s| s.to_string()).collect();
            select(&ids(), &sel).unwrap().into_iter().map(|(id, _)| id).collect()
        };
        assert_eq!(names(&["fig8_1"]), ["batched22/fig8_1", "filling22/fig8_1"]);
        assert_eq!(names(&["tower23"]), ["tower23/table6_5"]);
        assert_eq!(names(&["batched22/fig8_1", "fig8_1"]).len(), 2);
        assert_eq!(names(&["all"]).len(), 3);
        let e = select(&ids(), &["fig9".to_string()]).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some());
        assert!(e.to_string().contains("tower23/table6_5"), "{e}");
    }

    /// An item whose points all came from this invocation (some shared with an earlier item)
    /// is fresh; one with a point from an earlier invocation is not.
    #[test]
    fn shared_points_keep_an_item_fresh() {
        let entry = |id: &str, cached_points, shared_points| IndexEntry {
            id: id.to_string(),
            title: String::new(),
            overall: String::new(),
            series: Vec::new(),
            quick: false,
            reduced: false,
            cost: Cost {
                scale: "full".to_string(),
                balls: 1e6,
                wall_s: 1.0,
                threads: 2.0,
                cpu_s: Some(2.0),
                cached_points,
                shared_points,
            },
        };
        let table = cost_table(&[entry("p/a", 0, 0), entry("p/b", 0, 54), entry("p/c", 3, 54)]);
        assert!(table.contains("| `p/a` | full | 1.00e6 | 1.0 | 2 | 2.0 | yes |"), "{table}");
        assert!(table.contains("| 2.0 | yes (54 points shared) |"), "{table}");
        assert!(table.contains("| 2.0 | no (3 points from checkpoints) |"), "{table}");
        assert!(table.contains("2 of them fresh"), "{table}");
    }

    /// A committed result names the commit that produced it: `git_revision` is a full commit
    /// hash, not `+dirty` (uncommitted code outside `results/`) or `unknown`.
    #[test]
    fn every_committed_result_names_a_clean_revision() {
        let mut seen = 0;
        for paper in std::fs::read_dir(repo_root().join("results")).unwrap() {
            let paper = paper.unwrap().path();
            if !paper.is_dir() {
                continue;
            }
            for f in std::fs::read_dir(&paper).unwrap() {
                let f = f.unwrap().path();
                if f.extension().is_none_or(|e| e != "json") {
                    continue;
                }
                let v: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
                let rev = v["metadata"]["git_revision"].as_str().unwrap_or("");
                let hex = rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit());
                assert!(hex, "{}: git_revision {rev:?}", f.display());
                seen += 1;
            }
        }
        assert!(seen >= 38, "{seen} committed results");
    }
}
