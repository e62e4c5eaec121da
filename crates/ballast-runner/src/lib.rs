//! # ballast-runner
//!
//! The experiment runner of ballast: a TOML config describing one figure or table of a paper
//! → a validated [`Experiment`] → a [`Plan`] of points × runs → seeded runs in parallel
//! (rayon) → sequential aggregation ([`stats::summarize`]) → comparison with the published
//! numbers → outputs `<out>/<paper>/<item>.{csv,json,svg,md}` ([`ItemResult::write`]).
//!
//! ## Config format (`configs/<paper>/<item>.toml`, item id `<paper>/<item>`)
//!
//! ```toml
//! title = "Gap vs b/n (Figure 8.1)"   # caption of the figure and report
//! seed  = 20220328                     # master seed
//! engine = "auto"                      # auto (default) | bins | levels (ballast-core engines)
//! runs  = 100                          # independent runs per point
//! notes = "free text copied into the report (known disagreements, reconstructed rules)"
//!
//! x    = { variable = "k", label = "b/n" }    # which grid variable is the x axis (log = true:
//!                                             # logarithmic x axis in the figure)
//! grid = { k = { from = 1, to = 50 } }        # cartesian product; lists work too: [1, 2, 5]
//!
//! [point]                     # how a grid point becomes n, b and m (numbers or formulas)
//! n       = 1000              # bins (default: the grid variable `n`)
//! b       = "k * n"           # batch size; omit it for the sequential setting
//! batches = "floor(1000/k)"   # number of batches; or give `m` (balls) instead
//!
//! [[series]]
//! name      = "Three-Choice"                # also the series name looked up in the references
//! process   = { kind = "three_choice" }
//! tie_break = "position"                    # random (default) | first | lowest_index | position
//!
//! [[series]]
//! name    = "(1+beta) beta=0.5"
//! process = { kind = "one_plus_beta", beta = 0.5 }
//!
//! [[series]]
//! name      = "One-Choice with m=b balls"
//! process   = { kind = "one_choice" }
//! batches   = 1                             # per-series override of b / batches / m
//! statistic = "final_gap"                   # max_gap (default) | final_gap | running_max_gap
//!                                           # | distribution
//! round     = "ceil"                        # round each run's value: ceil | floor (default none)
//!
//! [[reference]]                # published numbers, relative to the repository's reference/
//! file  = "batched22_fig8_1_paper.csv"      # the first one decides the verdict
//! label = "published"
//! x_shift = 0                               # reference x + x_shift = our x
//!
//! [quick]                      # the scaled-down variant (`--quick`): seconds, for tests and CI
//! runs = 3
//! grid = { k = [1, 10, 50] }   # replaces the listed grid variables
//! point = { batches = 20 }     # overrides [point] entries
//!
//! [reduced]                    # optional: a documented smaller run (`--reduced`) for items
//! runs = 10                    # whose full scale does not fit a machine; same fields as [quick]
//!
//! [report]
//! layout = "figure"            # or "table": adds one wide table, ours beside the reference
//! mark_minima = false          # mark each curve's minimum (ours and the first reference)
//! ```
//!
//! A top-level `sampling = { blocks = 100 }` (also allowed in `[quick]`/`[reduced]`) switches to
//! the authors' protocol of the noise programs: each run is one long sequential run of
//! `blocks · m` balls observed every `m` balls, and every block end is one sample (statistics
//! `final_gap` or `distribution` only). Without it every run is independent and gives one
//! sample.
//!
//! - **process kinds**: `one_choice`, `two_choice`, `three_choice`, `d_choice {d}`,
//!   `one_plus_beta {beta}`, `quantile {delta}`, `mixed_quantile {delta, eta}`,
//!   `threshold {f}`, `mean_thinning {strict = true}`, `g_bounded {g}`, `g_myopic {g}`,
//!   `sigma_noisy_load {sigma, truncate = false}` (`truncate`: each noisy estimate is
//!   truncated to an integer before comparing, as in the authors' code). Series may also set
//!   `weights = { kind = "exp", mean = 1 }` (default `{ kind = "unit" }`), `setting =
//!   "sequential" | "batched" | "delay"`, and `reference = "other name"` (`""`: no
//!   reference). `setting = "delay"` is the `delay{tau, mode}` setting: `tau` (a number or
//!   formula, in the series or `[point]`) is the window in steps and `delay_mode = "random"`
//!   (default) or `"adversarial"` (Two-Choice only) how a sample's reported load is chosen
//!   from it (see `docs/settings.md`, "Delay").
//! - **formulas**: any number may be a string formula over the grid variables and `n`, `b`,
//!   `batches`, `m` (computed in that order), evaluated by [`evalexpr`] with real arithmetic
//!   (`1/2` is 0.5); functions `ln log2 log10 exp sqrt abs pow min max floor ceil round`,
//!   constants `pi e`, `^` for powers. Example: `beta = "min(1, 0.7*sqrt(n/b*ln(n)))"`.
//! - **statistics**: `max_gap` = per run the largest gap over batch ends, mean over runs (what
//!   the batched papers plot); `final_gap` = gap at the end; `running_max_gap` = the running
//!   maximum after every batch (the prefix maximum of the gap at batch ends; one row per batch,
//!   x = batch index); `distribution` = the percentage of samples per rounded gap value (one row
//!   per value, x = the gap; every value of the published distribution gets a row, 0 % when we
//!   never saw it; z uses the binomial standard error of the pooled proportion). `round` is
//!   applied to each run's (or block's) value before averaging; distributions round up unless
//!   the series says `floor`.
//! - **reference names** may use `{var}` placeholders for grid variables and `{n}`, `{b}`
//!   (`reference = "g-Bounded n={n} g={g}"`); where a published table lists several batch sizes
//!   at one (series, n, x), the row with our b is used.
//! - **checkpoints, shards, interrupts**: with [`RunOptions::cache_dir`] (xtask:
//!   `target/ballast-cache/`, `ballast run`: `<out>/.checkpoint/`) the finished runs of every
//!   point are stored, keyed by its run spec, engine, seeds and the runner version: an
//!   interrupted item ([`request_interrupt`], Ctrl-C in the binaries) resumes, and a rerun
//!   after a change to the outputs only re-renders (the metadata counts the points read back
//!   and adds their recorded time). [`RunOptions::shard`] runs one shard of the units
//!   ([`run_shard`]); [`merge_shards`] combines all shards into the same result as one run.
//!   See [`units`].
//! - **references**: rows are matched by (series name, n, x). Each output row carries the
//!   reference value and z = (ours − ref)/sqrt(se_ours² + se_ref²), se_ref = our sd /
//!   sqrt(reference runs).
//! - **seeds**: run r of point p (points numbered series-major, then the grid in sorted
//!   variable order with x innermost) uses `derive_seed(seed, &[hash_str(id), p, r])`: results
//!   do not depend on the thread count.
//! - **strictness**: unknown fields, unknown process kinds, out-of-range values (β ∉ [0, 1],
//!   n = 0, b = 0, …) are errors naming the file, line and column, the field and the allowed
//!   values. Every point is validated before anything runs.
//! - **limits** (refused at validation, with the numbers and the way out): at most
//!   [`MAX_UNITS`] = 10^7 (point, run) units per item (their outcomes are held until the item
//!   is aggregated); a run whose memory estimate
//!   ([`ballast_core::registry::run_memory_bytes`]: 8 bytes per bin on the bin engine, 24 with
//!   weights, 16 per ball of a batch buffer, 12 per bin and 8 per step of a delay window, 8 per
//!   recorded observation) is above [`ballast_core::registry::MAX_RUN_BYTES`] = 16 GiB (every
//!   worker thread holds one run, so a machine needs about threads × the estimate; the way out
//!   is `engine = "levels"`, whose state does not grow with n, or a smaller n or b);
//!   exponential weights with `mean · m` above 10^150; formulas longer than 4096 bytes or
//!   nested deeper than 64 parentheses; more than 100 000 points per scale. `--threads` is at
//!   most 1024.
//! - **checkpoint and shard files** carry a versioned header and a SHA-256 digest: a damaged
//!   checkpoint (or one holding a run twice) is reported by name and its runs are simulated
//!   again; a damaged shard file is an error naming it. One process at a time runs an item on a
//!   checkpoint directory (an exclusive lock `<dir>/<paper>__<item>.lock`); a second one is
//!   refused. An item's four outputs are written to temporaries, then renamed.
//!
//! ## Other item kinds
//!
//! A top-level `kind = "graph" | "dynamic" | "potential"` (default `"allocation"`: everything
//! above) selects a kind whose runs come from `ballast-graph`, `ballast-dynamic` or
//! `ballast-potential`. They share `title`, `seed`, `runs`, `notes`, `x`, `y_label`, `grid`,
//! `[quick]`, `[reduced]` and `[report]` with allocation configs; `[point]` (and a series'
//! `params`) holds named parameters (numbers or formulas, evaluated in dependency order); a
//! series has `name`, `statistic` and, by kind, `process`, `graph` (topology shorthand with
//! `{param}` placeholders, e.g. `"gnp:{p}:connected"`) or `potential` (`"hyperbolic:alpha={alpha}"`).
//!
//! | kind | statistics | parameters |
//! |---|---|---|
//! | `graph` | `final_gap` (graphical process on `graph`), `offline_optimum`, `greedy_max_load` | `n m b d p c` |
//! | `dynamic` | `avg_max_load`, `avg_fraction_empty_bins`, `avg_load_per_bin`, `avg_system_load`, `max_load_over_shape`, `avg_discrepancy`, `avg_overload` | `n m lambda d burn_in rounds batches skip` |
//! | `potential` | `potential` (x = balls/n), `drift_per_ball` (x = level); a list `potentials = ["hyperbolic:alpha=0.1", "quadratic"]` instead of `potential` tracks several in the same runs, one row group `<series> [<potential>]` each | `n m b alpha beta sample_every bins_per_decade min_samples burn_in` |
//!
//! Dynamic processes: `{ kind = "rbb", d = 1 }`, `{ kind = "leaky_bins", d, arrivals =
//! "binomial" | "poisson" | "fixed" }`, `{ kind = "infinite_azar", d }`, `{ kind =
//! "random_deletions", beta }`, `{ kind = "insert_delete", workload, rule, deletion, reinsert
//! }` (`ballast list` shows every parameter). A `[[reference]]` of
//! these kinds is a file (the runner's format, or another layout named by `columns = { n, x,
//! value }`, with `runs`, `rounds` for time averages, `precision` of the published digits and an
//! `offset`) or a closed form (`theory = "offline_predicted" | "rbb_empty_fraction" |
//! "leaky_mean_load" | "leaky_max_iid"`). Outputs are the same [`ItemResult`] as above, with
//! the statistic column holding a [`Statistic`] name (one enum for every kind; [`Statistic::kinds`]
//! says which kinds' series may name it).
//!
//! ## Example
//!
//! ```
//! use std::path::Path;
//! use ballast_runner::{Experiment, RunOptions, run_experiment};
//!
//! let toml = r#"
//! title = "Two-Choice, batched"
//! seed = 7
//! runs = 4
//! x = { variable = "k", label = "b/n" }
//! grid = { k = [1, 2] }
//! point = { n = 100, b = "k*n", batches = 5 }
//! [[series]]
//! name = "Two-Choice"
//! process = { kind = "two_choice" }
//! "#;
//! let exp = Experiment::parse("demo/two", Path::new("two.toml"), toml)?;
//! let mut opts = RunOptions::new("reference");
//! opts.progress = false;
//! let result = run_experiment(&exp, &opts)?;
//! assert_eq!(result.rows.len(), 2);
//! assert!(result.to_csv().starts_with("series,n,b,m,x,statistic,value,stderr,ci95_low,ci95_high,runs,reference,z\n"));
//!
//! // A bad value is reported with its place, its field and the allowed values.
//! let bad = toml.replace("two_choice\" }", "one_plus_beta\", beta = 1.5 }");
//! let err = Experiment::parse("demo/two", Path::new("two.toml"), &bad).unwrap_err().to_string();
//! assert!(err.contains("two.toml:10:") && err.contains("`beta`") && err.contains("[0, 1]"), "{err}");
//! # Ok::<(), ballast_runner::Error>(())
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod config;
mod error;
mod experiment;
pub mod figure;
pub mod files;
mod final_loads;
mod finals;
pub mod formula;
mod grid;
mod kinds;
pub mod logging;
mod markdown;
mod numbers;
mod options;
mod output;
mod plan;
mod problem;
mod reference;
mod replot;
mod report_check;
mod result;
mod run;
mod start;
mod statistic;
pub mod stats;
mod svg;
pub mod tolerance;
pub mod units;

use std::path::{Path, PathBuf};

pub use config::read_capacity_file;
pub use config::read_weight_file;
pub use config::{Layout, Sampling, Scale};
pub use error::Error;
pub use experiment::Experiment;
pub use final_loads::{MAX_SORTED_BINS, TOP_K};
pub use logging::{install_logging, install_stderr_logging, LogFormat, LogOptions};
pub use options::{FreshCheckpoints, RunOptions, Shard};
pub use output::Verdict;
pub use plan::{Plan, PlanPoint, PlanSeries, MAX_UNITS};
pub use problem::ConfigProblem;
pub use reference::{RefPoint, ReferenceTable};
pub use replot::{read_csv, read_figure};
#[doc(hidden)]
pub use report_check::{check_report, sample_report, ReportTexts};
pub use result::{percent_z, Comparison, ItemResult, Metadata, Row, ROUNDING};
pub use run::{distribution_cells, merge_shards, run_experiment, run_shard, running_max, DistCell};
pub use start::read_start_file;
pub use statistic::{Kind, Statistic};
pub use svg::render_svg;
pub use units::{
    clear_interrupt, install_ctrl_c_handler, interrupt_requested, request_interrupt, ShardFile,
};

/// Lists the experiments under `configs_dir` as (`<paper>/<item>`, path), sorted by id, from
/// the files `configs_dir/<paper>/<item>.toml`.
pub fn discover(configs_dir: &Path) -> Result<Vec<(String, PathBuf)>, Error> {
    let read = |d: &Path| std::fs::read_dir(d).map_err(|e| Error::io(d, e));
    let mut out = Vec::new();
    for paper in read(configs_dir)? {
        let paper = paper.map_err(|e| Error::io(configs_dir, e))?.path();
        if !paper.is_dir() {
            continue;
        }
        for item in read(&paper)? {
            let item = item.map_err(|e| Error::io(&paper, e))?.path();
            if item.extension().is_some_and(|e| e == "toml") {
                out.push((experiment::id_from_path(&item), item));
            }
        }
    }
    out.sort();
    Ok(out)
}
