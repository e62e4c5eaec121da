//! The (point, run) units of an item: where they run and where their outcomes are kept.
//!
//! Every item is a list of points, each simulated `runs` times with a seed derived from
//! (item, point, run), so a unit's outcome does not depend on where or when it runs. This
//! module runs the units on a local thread pool and keeps their outcomes in three places:
//!
//! - **Checkpoints** ([`RunOptions::cache_dir`]): per point, the file `<key>.bin` holds the
//!   runs finished so far, written to an exclusive temporary and renamed ([`crate::files`]).
//!   An interrupted or failed item resumes from them; an item that finished re-renders
//!   without simulating. Every checkpoint written is recorded in
//!   [`RunOptions::fresh_checkpoints`]: under [`RunOptions::refresh_cache`] only those are
//!   read, so the points two items of one invocation share are simulated once.
//! - **Shards** ([`RunOptions::shard`], `--shard i/k`): unit `u` (units numbered point-major,
//!   then run) belongs to shard `u mod k + 1`. A shard runs its units only and writes them to
//!   a shard file ([`ShardFile`]); the aggregation waits for [`merge_shards`](crate::merge_shards).
//! - **Merge** ([`merge_shards`](crate::merge_shards)): the shard files of all `k` shards are read, checked against
//!   the config (same item, config hash, scale, shard count, every shard once) and every unit
//!   is taken from them. The aggregation is the same code as for a local run, so the data
//!   outputs are the same bytes.
//!
//! Beside its runs' outcomes, a checkpoint and a shard file keep the wall time and the CPU
//! time (each run's thread CPU time) spent on them, so an item resumed from checkpoints or
//! merged from shards reports in its metadata the cost of all its runs, not only of the last
//! invocation's. A checkpoint of an earlier invocation counts in the first item of this one
//! that reads it: it joins [`RunOptions::fresh_checkpoints`], so a later item sharing its
//! point counts it as shared and does not add its time again.
//!
//! Outcomes are stored with `postcard` (a compact serde format that keeps every `f64` bit,
//! NaN included, which JSON does not).
//!
//! **Interrupts.** [`request_interrupt`] (the binaries call it on the first Ctrl-C, see
//! [`install_ctrl_c_handler`]) stops the scheduling of new units; the runs in progress finish,
//! their outcomes are checkpointed and the item ends with [`Error::Interrupted`]. Running the
//! same command again resumes and produces the same bytes as an uninterrupted run.

use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::config::{ConfigFile, Scale};
use crate::options::{FreshCheckpoints, RunOptions, Shard};
use crate::Error;

/// Version of the stored unit format (checkpoints and shard files). Format 3: every file is
/// [`UNIT_HEADER`], the format as 4 little-endian bytes, the postcard body and the SHA-256
/// of everything before it ([`seal`]). Format 4: an allocation run's outcome also holds
/// its empty bins and recovery time. Format 5: and its load trajectories, potential
/// trajectories and probe histogram (empty unless a statistic asks for them). Format 6: and
/// its final load histogram (`None` unless a statistic of the final loads asks for it).
/// Format 7: a dynamic run's summary also holds its discrepancy and overload. Format 8: and
/// the rounds at which its discrepancy reached a new low (for `recovery_rounds`). Format 9:
/// an allocation run is stored as the engine's `RunOutcome` whole (no field-by-field copy),
/// beside the runner's own measurements. (Its list of final-load metrics is versioned by the
/// point key, [`crate::finals`], so a new metric needs no new format.) Format 10: a point
/// and a shard file also record the CPU time of their runs, so an item resumed from
/// checkpoints or merged from shards reports the CPU time of all its runs.
pub(crate) const UNIT_FORMAT: u32 = 10;

/// The first bytes of a checkpoint or shard file.
const UNIT_HEADER: &[u8] = b"ballast-units\n";

/// `bytes` with the versioned header before and the SHA-256 digest after.
fn seal(body: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    let mut out = Vec::with_capacity(UNIT_HEADER.len() + 4 + body.len() + 32);
    out.extend_from_slice(UNIT_HEADER);
    out.extend_from_slice(&UNIT_FORMAT.to_le_bytes());
    out.extend_from_slice(body);
    let digest = sha2::Sha256::digest(&out);
    out.extend_from_slice(&digest);
    out
}

/// The body of a [`seal`]ed file, or why it is not one: another format, a wrong header, a
/// digest that does not match (truncated or damaged).
fn unseal(bytes: &[u8]) -> Result<&[u8], String> {
    use sha2::Digest;
    let head = UNIT_HEADER.len() + 4;
    if bytes.len() < head + 32 || !bytes.starts_with(UNIT_HEADER) {
        return Err("no ballast header (not written by this version, or truncated)".into());
    }
    let format = u32::from_le_bytes(bytes[UNIT_HEADER.len()..head].try_into().unwrap_or([0; 4]));
    if format != UNIT_FORMAT {
        return Err(format!("format {format}, but this ballast reads format {UNIT_FORMAT}"));
    }
    let (data, digest) = bytes.split_at(bytes.len() - 32);
    if sha2::Sha256::digest(data).as_slice() != digest {
        return Err("checksum mismatch (the file is damaged or truncated)".into());
    }
    Ok(&data[head..])
}

/// The first bytes of a shard file.
const SHARD_MAGIC: &str = "ballast-shard";

static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// Asks every running item to stop after its runs in progress (see the module docs).
pub fn request_interrupt() {
    INTERRUPT.store(true, Ordering::SeqCst);
}

/// Whether [`request_interrupt`] was called (and not cleared since).
pub fn interrupt_requested() -> bool {
    INTERRUPT.load(Ordering::SeqCst)
}

/// Clears an interrupt request, so the next item runs (for long-lived library users).
pub fn clear_interrupt() {
    INTERRUPT.store(false, Ordering::SeqCst);
}

/// Installs the Ctrl-C (SIGINT, and SIGTERM) handler of the command-line tools: the first
/// signal calls [`request_interrupt`] and says so on stderr; a second one exits at once with
/// code 130 (checkpoints already written stay valid; the runs in progress are lost).
pub fn install_ctrl_c_handler() -> Result<(), String> {
    ctrlc::set_handler(|| {
        if INTERRUPT.swap(true, Ordering::SeqCst) {
            tracing::warn!("interrupted again: exiting now");
            std::process::exit(130);
        }
        tracing::warn!(
            "interrupt: finishing the runs in progress and saving them (Ctrl-C again to stop \
             now)"
        );
    })
    .map_err(|e| format!("installing the Ctrl-C handler: {e}"))
}

/// One point's stored runs: `(run, postcard bytes of the outcome)`, in increasing run order.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Stored {
    key: String,
    /// Simulation wall time spent on these runs (each run's share of its chunk).
    wall_s: f64,
    /// CPU time spent on these runs: the sum of each run's thread CPU time.
    cpu_s: f64,
    runs: Vec<(u64, Vec<u8>)>,
}

/// A checkpoint file: a format tag and one point's runs.
#[derive(Serialize, Deserialize)]
struct Checkpoint {
    format: u32,
    point: Stored,
}

/// The outcomes of one shard of an item, as written by `--shard i/k` and read by
/// [`merge_shards`](crate::merge_shards).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ShardFile {
    magic: String,
    format: u32,
    /// The item id.
    pub item: String,
    /// SHA-256 of the config the shard ran.
    pub config_sha256: String,
    /// `full`, `quick` or `reduced`.
    pub scale: String,
    /// Which shard.
    pub shard: Shard,
    /// Version of ballast-runner that wrote it.
    pub runner_version: String,
    /// Units run by this shard, and in the item.
    pub units: u64,
    /// Units of the whole item.
    pub total_units: u64,
    /// Worker threads used.
    pub threads: usize,
    /// Wall time of the shard's simulations, seconds (including checkpointed time).
    pub wall_time_s: f64,
    /// CPU time of the shard's runs, seconds (each run's thread CPU time, including the
    /// checkpointed runs').
    pub cpu_time_s: f64,
    /// The command that ran it.
    pub command: String,
    points: Vec<Stored>,
}

impl ShardFile {
    /// `<out>/<paper>/<item>.shard-<i>-of-<k>.bin`.
    pub fn path_in(&self, out_dir: &Path) -> PathBuf {
        let (paper, item) = self.item.rsplit_once('/').unwrap_or(("", &self.item));
        out_dir
            .join(paper)
            .join(format!("{item}.shard-{}-of-{}.bin", self.shard.index, self.shard.count))
    }

    /// Writes the file (exclusive temporary, then rename) and returns its path.
    pub fn write(&self, out_dir: &Path) -> Result<PathBuf, Error> {
        let path = self.path_in(out_dir);
        let bytes = postcard::to_allocvec(self)
            .map_err(|e| Error::Output { path: path.clone(), message: e.to_string() })?;
        crate::files::write_atomically(&path, &seal(&bytes))?;
        Ok(path)
    }

    /// Reads a shard file, with a clear error for anything else.
    pub fn read(path: &Path) -> Result<Self, Error> {
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let bad = |m: &str| Error::Shard { path: path.to_path_buf(), message: m.to_string() };
        let body = unseal(&bytes).map_err(|e| {
            bad(&format!(
                "not a ballast shard file (written by `ballast run --shard i/k`) or a damaged \
                 one: {e}; rerun this shard"
            ))
        })?;
        let f: Self = postcard::from_bytes(body).map_err(|_| {
            bad("not a ballast shard file (written by `ballast run --shard i/k`), or truncated")
        })?;
        if f.magic != SHARD_MAGIC {
            return Err(bad("not a ballast shard file"));
        }
        if f.format != UNIT_FORMAT {
            return Err(bad(&format!(
                "shard format {} but this ballast reads format {UNIT_FORMAT}: rerun the shard \
                 with this version",
                f.format
            )));
        }
        Ok(f)
    }
}

/// The units of all shards of an item, for [`run_units`] in merge mode.
#[derive(Debug, Default)]
pub(crate) struct Merged {
    points: HashMap<String, Stored>,
    /// Number of shards.
    pub shards: u32,
    /// Sum of the shards' wall times.
    pub wall_s: f64,
}

/// Reads and checks the shard files of `exp` at `scale`: same item, config hash, scale and
/// shard count, every shard exactly once.
pub(crate) fn load_shards(
    exp: &ConfigFile,
    scale: Scale,
    paths: &[PathBuf],
) -> Result<Merged, Error> {
    let Some(first) = paths.first() else {
        return Err(Error::Shard {
            path: exp.path().to_path_buf(),
            message: "no shard files given".to_string(),
        });
    };
    let mut seen: BTreeMap<u32, PathBuf> = BTreeMap::new();
    let mut merged = Merged::default();
    let mut count = None;
    for path in paths {
        let f = ShardFile::read(path)?;
        let bad = |m: String| Error::Shard { path: path.clone(), message: m };
        if f.item != exp.id() {
            return Err(bad(format!("shard of item `{}`, not `{}`", f.item, exp.id())));
        }
        if f.config_sha256 != exp.sha256() {
            return Err(bad(format!(
                "shard ran a different version of {} (config sha256 {} vs {}): rerun it",
                exp.path().display(),
                short(&f.config_sha256),
                short(exp.sha256())
            )));
        }
        if f.scale != scale.name() {
            return Err(bad(format!(
                "shard ran the {} scale, the merge asks for {}",
                f.scale,
                scale.name()
            )));
        }
        if *count.get_or_insert(f.shard.count) != f.shard.count {
            return Err(bad(format!(
                "shard {} but {} is one of {} shards",
                f.shard,
                first.display(),
                count.unwrap_or(0)
            )));
        }
        if let Some(other) = seen.insert(f.shard.index, path.clone()) {
            return Err(bad(format!("shard {} given twice (also {})", f.shard, other.display())));
        }
        merged.wall_s += f.wall_time_s;
        for p in f.points {
            let e = merged
                .points
                .entry(p.key.clone())
                .or_insert_with(|| Stored { key: p.key.clone(), ..Stored::default() });
            e.wall_s += p.wall_s;
            e.cpu_s += p.cpu_s;
            e.runs.extend(p.runs);
        }
    }
    let count = count.unwrap_or(0);
    let missing: Vec<String> =
        (1..=count).filter(|i| !seen.contains_key(i)).map(|i| format!("{i}/{count}")).collect();
    if !missing.is_empty() {
        return Err(Error::Shard {
            path: first.clone(),
            message: format!("missing shard files for shard(s) {}", missing.join(", ")),
        });
    }
    for p in merged.points.values_mut() {
        p.runs.sort_by_key(|(r, _)| *r);
    }
    merged.shards = count;
    Ok(merged)
}

fn short(h: &str) -> &str {
    &h[..h.len().min(12)]
}

/// One point of an item as the unit runner sees it.
pub(crate) struct PointUnits {
    /// The caller's point index (passed to the unit function).
    pub point: usize,
    /// The checkpoint key: a hash of everything the point's outcomes depend on.
    pub key: String,
    /// Balls (or ball-rounds) per run, for the progress bar.
    pub balls: u64,
}

/// Where and how to run the units of one item.
pub(crate) struct UnitJob<'a> {
    pub opts: &'a RunOptions,
    pub pool: &'a rayon::ThreadPool,
    /// The item id, for the progress bar and messages.
    pub label: &'a str,
    pub runs: u64,
    /// The units of all shards (merge mode).
    pub merged: Option<&'a Merged>,
}

/// What running the units of an item gave: all of them, or this machine's shard of them.
pub(crate) enum Executed<T> {
    Complete(Units<T>),
    Shard(Box<ShardFile>),
}

/// The outcomes of an item's units.
pub(crate) struct Units<T> {
    /// Per point (in the order given), the outcomes of runs `0..runs`.
    pub outs: Vec<Vec<T>>,
    /// Points whose every run came from checkpoints written before this invocation or from
    /// shard files.
    pub stored_points: usize,
    /// Points whose every run came from checkpoints written in this invocation (by an
    /// earlier item, or earlier in this one): see [`RunOptions::fresh_checkpoints`].
    pub shared_points: usize,
    /// Recorded simulation time of the runs stored before this invocation (the time of the
    /// runs of fresh checkpoints is already in this invocation's wall time).
    pub stored_wall_s: f64,
    /// Recorded CPU time of the same runs (that of fresh checkpoints is already in this
    /// process's CPU time).
    pub stored_cpu_s: f64,
}

/// Decodes one stored outcome, requiring every byte to be used.
fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    match postcard::take_from_bytes::<T>(bytes) {
        Ok((t, [])) => Ok(t),
        Ok((_, rest)) => Err(format!("{} bytes left over", rest.len())),
        Err(e) => Err(e.to_string()),
    }
}

fn file_name_text(name: &std::ffi::OsStr) -> String {
    name.to_string_lossy().into_owned()
}

fn checkpoint_path(dir: &Path, key: &str, shard: Option<Shard>) -> PathBuf {
    match shard {
        None => dir.join(format!("{key}.bin")),
        Some(s) => dir.join(format!("{key}.shard-{}-of-{}.bin", s.index, s.count)),
    }
}

/// The stored runs of one point, or `None` (nothing stored, or a damaged checkpoint: it is
/// reported by name and its runs are simulated again, never used).
fn load_checkpoint(dir: &Path, key: &str, shard: Option<Shard>) -> Option<Stored> {
    let path = checkpoint_path(dir, key, shard);
    let bytes = std::fs::read(&path).ok()?;
    let damaged = |why: String| {
        tracing::warn!(
            "checkpoint {} is not usable ({why}): its runs are simulated again",
            path.display()
        );
    };
    let body = match unseal(&bytes) {
        Ok(b) => b,
        Err(e) => {
            damaged(e);
            return None;
        }
    };
    let c: Checkpoint = match postcard::from_bytes(body) {
        Ok(c) => c,
        Err(e) => {
            damaged(format!("does not decode: {e}"));
            return None;
        }
    };
    if c.format != UNIT_FORMAT || c.point.key != key {
        damaged(format!("format {} of point {}", c.format, short(&c.point.key)));
        return None;
    }
    if c.point.runs.windows(2).any(|w| w[0].0 >= w[1].0) {
        damaged("run indices repeated or out of order".into());
        return None;
    }
    tracing::debug!(path = %path.display(), runs = c.point.runs.len(), "checkpoint read");
    Some(c.point)
}

/// Writes the checkpoint of `point` and, once it is written, records it in `fresh`.
fn store_checkpoint(dir: &Path, shard: Option<Shard>, point: &Stored, fresh: &FreshCheckpoints) {
    // Checkpoints are an optimisation: a failure to write one is reported, not fatal.
    let c = Checkpoint { format: UNIT_FORMAT, point: point.clone() };
    let path = checkpoint_path(dir, &point.key, shard);
    let written = postcard::to_allocvec(&c)
        .map_err(|e| e.to_string())
        .and_then(|b| crate::files::write_atomically(&path, &seal(&b)).map_err(|e| e.to_string()));
    match written {
        Ok(()) => {
            fresh.insert(&path);
            tracing::debug!(key = short(&point.key), runs = point.runs.len(), "checkpoint written")
        }
        Err(e) => tracing::warn!("checkpoint not written: {e}"),
    }
}

/// Takes the exclusive lock of item `label` (and shard) in the checkpoint directory `dir`,
/// held as long as the returned file is open: a second process on the same item and
/// directory is refused ([`Error::Locked`]) instead of both writing the same checkpoints. On a
/// file system without locks the run goes on with a warning.
fn lock_item(
    dir: &Path,
    label: &str,
    shard: Option<Shard>,
) -> Result<Option<std::fs::File>, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let name = label.replace(['/', '\\'], "__");
    let name = match shard {
        None => format!("{name}.lock"),
        Some(s) => format!("{name}.shard-{}-of-{}.lock", s.index, s.count),
    };
    let path = dir.join(name);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => {
            Err(Error::Locked { item: label.to_string(), dir: dir.to_path_buf(), lock: path })
        }
        Err(std::fs::TryLockError::Error(e)) => {
            tracing::warn!("{}: cannot lock {} ({e}): running unlocked", label, path.display());
            Ok(None)
        }
    }
}

/// Seconds between plain progress lines when stderr is not a terminal (a log file under
/// `nohup` or a batch scheduler), unless `BALLAST_PROGRESS_SECS` says otherwise.
pub const PROGRESS_LOG_SECS: u64 = 300;

/// How a run shows its progress: a bar on a terminal, else a plain line every so often.
struct Progress {
    bar: ProgressBar,
    /// Draw the bar (stderr is a terminal).
    may_show: bool,
    /// Print a line at most this often (stderr is not a terminal).
    log_every: Option<Duration>,
    /// Elapsed milliseconds and balls done at the last line.
    last_log: std::sync::Mutex<(u64, u64)>,
}

impl Progress {
    fn new(total: u64, label: &str, wanted: bool) -> Self {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{elapsed_precise}] {wide_bar} {percent}% eta {eta}",
        ) {
            bar.set_style(style);
        }
        bar.set_message(label.to_string());
        let terminal = std::io::stderr().is_terminal();
        let log_every = (wanted && !terminal).then(|| {
            let secs = std::env::var("BALLAST_PROGRESS_SECS")
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(PROGRESS_LOG_SECS);
            Duration::from_secs(secs)
        });
        Self { bar, may_show: wanted && terminal, log_every, last_log: Default::default() }
    }

    /// After a finished unit: one line to stderr if the interval has passed since the last
    /// and more balls are done. A worker that finds another one printing skips, so no
    /// worker waits, and the lines only move forward.
    fn log(&self, label: &str, elapsed: Duration) {
        let Some(every) = self.log_every else { return };
        let Ok(mut last) = self.last_log.try_lock() else { return };
        let now = elapsed.as_millis() as u64;
        let done = self.bar.position();
        if now.saturating_sub(last.0) < every.as_millis() as u64 || done <= last.1 {
            return;
        }
        *last = (now, done);
        tracing::info!("{}", progress_line(label, done, self.bar.length(), elapsed));
    }
}

/// `label: 37.5% of 1.20e12 balls, 1:02:03 elapsed, eta 1:43:10` (the eta extrapolates the
/// rate so far).
fn progress_line(label: &str, done: u64, total: Option<u64>, elapsed: Duration) -> String {
    let hms = |s: f64| {
        let s = s.round() as u64;
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    };
    let total = total.unwrap_or(0).max(1);
    let frac = done as f64 / total as f64;
    let spent = elapsed.as_secs_f64();
    let eta = if done > 0 { hms(spent * (1.0 - frac) / frac) } else { "?".to_string() };
    format!(
        "{label}: {:.1}% of {:.2e} balls, {} elapsed, eta {eta}",
        100.0 * frac,
        total as f64,
        hms(spent)
    )
}

/// Whether unit (point position `i`, run `r`) belongs to `shard`; without a shard every
/// unit does. Units are numbered point-major, then run, with `runs` runs per point.
fn owned(shard: Option<Shard>, runs: u64, i: usize, r: u64) -> bool {
    shard.is_none_or(|s| s.owns(i as u64 * runs + r))
}

/// How many of the `runs` runs of the point at position `i` belong to `shard`.
fn owned_runs(shard: Option<Shard>, runs: u64, i: usize) -> u64 {
    (0..runs).filter(|&r| owned(shard, runs, i, r)).count() as u64
}

/// Takes the item's lock in the checkpoint directory (one process per item and directory;
/// merges and `cached_only` runs only read) and, once it is held, removes the stale
/// temporaries of the item's checkpoints. The lock lasts as long as the returned file.
fn lock_checkpoints(
    job: &UnitJob<'_>,
    points: &[PointUnits],
) -> Result<Option<std::fs::File>, Error> {
    let opts = job.opts;
    let shard = opts.shard;
    let lock = match (&opts.cache_dir, job.merged) {
        (Some(d), None) if !opts.cached_only => lock_item(d, job.label, shard)?,
        _ => None,
    };
    if let (Some(d), Some(_)) = (&opts.cache_dir, &lock) {
        let names: Vec<String> = points
            .iter()
            .filter_map(|p| checkpoint_path(d, &p.key, shard).file_name().map(file_name_text))
            .collect();
        crate::files::remove_stale_temporaries(d, &names);
    }
    Ok(lock)
}

/// What is stored already, per point: from the shard files in merge mode, else from the
/// checkpoints; an empty [`Stored`] where there is none. Beside each, whether it comes from
/// a checkpoint written in this invocation ([`RunOptions::fresh_checkpoints`]). Under
/// [`RunOptions::refresh_cache`] only those are read. A checkpoint of an earlier invocation
/// read here joins that set: its recorded time is counted in this item, so a later item of
/// the same invocation that shares its point counts it as shared, not again.
fn load_stored(job: &UnitJob<'_>, points: &[PointUnits]) -> Vec<(Stored, bool)> {
    let opts = job.opts;
    points
        .iter()
        .map(|p| {
            let (stored, fresh) = match (job.merged, opts.cache_dir.as_deref()) {
                (Some(m), _) => (m.points.get(&p.key).cloned(), false),
                (None, Some(d)) => {
                    let path = checkpoint_path(d, &p.key, opts.shard);
                    let fresh = opts.fresh_checkpoints.contains(&path);
                    let read = fresh || !opts.refresh_cache;
                    let stored = read.then(|| load_checkpoint(d, &p.key, opts.shard)).flatten();
                    if stored.is_some() && !fresh {
                        opts.fresh_checkpoints.insert(&path);
                    }
                    (stored, fresh)
                }
                (None, None) => (None, false),
            };
            match stored {
                Some(s) => (s, fresh),
                None => (Stored { key: p.key.clone(), ..Stored::default() }, false),
            }
        })
        .collect()
}

/// Keeps in `have` only the stored runs this item and shard use, and returns per point the
/// runs still to simulate.
fn plan_todo<T: DeserializeOwned>(
    have: &mut [Stored],
    runs: u64,
    shard: Option<Shard>,
) -> Vec<Vec<u64>> {
    let mut todo: Vec<Vec<u64>> = Vec::with_capacity(have.len());
    for (i, h) in have.iter_mut().enumerate() {
        // A stored run that does not decode exactly as `T` (a checkpoint of an older
        // outcome type) is dropped and simulated again; in merge mode it is an error later.
        h.runs.retain(|(r, bytes)| {
            *r < runs && owned(shard, runs, i, *r) && decode::<T>(bytes).is_ok()
        });
        let present: Vec<u64> = h.runs.iter().map(|(r, _)| *r).collect();
        todo.push(
            (0..runs)
                .filter(|&r| owned(shard, runs, i, r) && present.binary_search(&r).is_err())
                .collect(),
        );
    }
    todo
}

/// In merge mode every unit must come from the shard files: the first missing one is an
/// error.
fn check_merge_complete(
    job: &UnitJob<'_>,
    points: &[PointUnits],
    todo: &[Vec<u64>],
) -> Result<(), Error> {
    if job.merged.is_some() {
        if let Some((i, r)) = todo.iter().enumerate().find_map(|(i, t)| t.first().map(|&r| (i, r)))
        {
            return Err(Error::Shard {
                path: PathBuf::from(job.label),
                message: format!(
                    "the shard files hold no outcome for run {r} of point {} (key {}): they were \
                     written by a different version or are incomplete",
                    points[i].point,
                    short(&points[i].key)
                ),
            });
        }
    }
    Ok(())
}

/// With [`RunOptions::cached_only`], every point must be stored completely.
fn check_cached_only(
    job: &UnitJob<'_>,
    points: &[PointUnits],
    todo: &[Vec<u64>],
    stored_points: usize,
) -> Result<(), Error> {
    let opts = job.opts;
    if opts.cached_only && stored_points < points.len() {
        return Err(Error::NotCached {
            item: job.label.to_string(),
            missing_runs: todo.iter().map(Vec::len).sum(),
            missing_points: points.len() - stored_points,
            points: points.len(),
            checkpoint: opts.cache_dir.clone(),
        });
    }
    Ok(())
}

/// Balls (or ball-rounds) of the units still to simulate, for the progress bar.
fn pending_balls(points: &[PointUnits], todo: &[Vec<u64>]) -> u64 {
    points
        .iter()
        .zip(todo)
        .map(|(p, t)| p.balls.saturating_mul(t.len() as u64))
        .fold(0, u64::saturating_add)
}

/// Says, with progress on and outside a merge, that the item resumes from checkpoints.
fn log_resume(
    job: &UnitJob<'_>,
    points: &[PointUnits],
    have: &[Stored],
    stored_points: usize,
    total: u64,
) {
    let opts = job.opts;
    let stored_runs: usize = have.iter().map(|h| h.runs.len()).sum();
    if opts.progress && job.merged.is_none() && stored_runs > 0 && total > 0 {
        let owned_runs: u64 = (0..points.len()).map(|i| owned_runs(opts.shard, job.runs, i)).sum();
        tracing::info!(
            "{}: resuming from checkpoints: {stored_runs} of {owned_runs} runs stored, {} of {} \
             points complete",
            job.label,
            stored_points,
            points.len()
        );
    }
}

/// The points with units to run, in chunks of about 4 units per thread, so finished points
/// reach the checkpoints while a long item runs.
fn chunk_points(todo: &[Vec<u64>], threads: usize) -> Vec<Vec<usize>> {
    let pending: Vec<usize> = (0..todo.len()).filter(|&i| !todo[i].is_empty()).collect();
    let mut chunk: Vec<usize> = Vec::new();
    let mut chunks: Vec<Vec<usize>> = Vec::new();
    let mut size = 0;
    for i in pending {
        chunk.push(i);
        size += todo[i].len();
        if size >= 4 * threads {
            chunks.push(std::mem::take(&mut chunk));
            size = 0;
        }
    }
    if !chunk.is_empty() {
        chunks.push(chunk);
    }
    chunks
}

/// The progress shown while the units run: the bar (or log lines), whether it is drawn
/// yet, and when the item started.
struct Showing<'a> {
    progress: &'a Progress,
    shown: AtomicBool,
    start: Instant,
}

impl Showing<'_> {
    /// After a unit of `balls` balls: advances the bar, logs a line if it is time, and
    /// draws the bar once the item has run for a second.
    fn advance(&self, label: &str, balls: u64) {
        let pb = &self.progress.bar;
        pb.inc(balls);
        self.progress.log(label, self.start.elapsed());
        if self.progress.may_show
            && self.start.elapsed() > Duration::from_secs(1)
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            crate::logging::show_bar(pb);
        }
    }
}

/// One simulated unit: its encoded outcome and the CPU time of the thread that ran it
/// (0 where the platform has no thread clock), its error, or `None` when an interrupt
/// stopped it before it started.
type Done = Option<Result<(Vec<u8>, f64), Error>>;

/// Seconds of CPU time the calling thread spends in `work`.
fn thread_cpu<R>(work: impl FnOnce() -> R) -> (R, f64) {
    let start = cpu_time::ThreadTime::try_now().ok();
    let r = work();
    let spent = start.and_then(|s| s.try_elapsed().ok()).map_or(0.0, |d| d.as_secs_f64());
    (r, spent)
}

/// Simulates `units` on the pool (see [`Done`]).
fn simulate_chunk<T, F>(
    job: &UnitJob<'_>,
    points: &[PointUnits],
    units: &[(usize, u64)],
    f: &F,
    showing: &Showing<'_>,
) -> Vec<Done>
where
    T: Serialize + Send,
    F: Fn(usize, u64) -> Result<T, Error> + Sync,
{
    job.pool.install(|| {
        units
            .par_iter()
            .map(|&(i, r)| {
                if interrupt_requested() {
                    return None;
                }
                let (out, cpu) = thread_cpu(|| f(points[i].point, r));
                let out = out.and_then(|t| {
                    postcard::to_allocvec(&t).map_err(|e| Error::Output {
                        path: PathBuf::from(job.label),
                        message: format!("encoding a run's outcome: {e}"),
                    })
                });
                showing.advance(job.label, points[i].balls);
                Some(out.map(|bytes| (bytes, cpu)))
            })
            .collect()
    })
}

/// Adds a chunk's finished runs to `have` (each with `share` seconds of wall time and its
/// own CPU time), checkpoints the points they belong to, and returns the first error among
/// them.
fn record_chunk(
    opts: &RunOptions,
    have: &mut [Stored],
    units: &[(usize, u64)],
    done: Vec<Done>,
    share: f64,
) -> Option<Error> {
    let mut first_err = None;
    let mut touched: Vec<usize> = Vec::new();
    for (&(i, r), d) in units.iter().zip(done) {
        match d {
            Some(Ok((bytes, cpu))) => {
                have[i].runs.push((r, bytes));
                have[i].wall_s += share;
                have[i].cpu_s += cpu;
                if touched.last() != Some(&i) {
                    touched.push(i);
                }
            }
            Some(Err(e)) => {
                first_err.get_or_insert(e);
            }
            None => {}
        }
    }
    for &i in &touched {
        have[i].runs.sort_by_key(|(r, _)| *r);
        if let Some(d) = &opts.cache_dir {
            store_checkpoint(d, opts.shard, &have[i], &opts.fresh_checkpoints);
        }
    }
    first_err
}

/// Runs the units of `todo` chunk by chunk, adding them to `have` and checkpointing after
/// each chunk; stops scheduling chunks on an interrupt, and at the first failed unit.
fn simulate_pending<T, F>(
    job: &UnitJob<'_>,
    points: &[PointUnits],
    todo: &[Vec<u64>],
    have: &mut [Stored],
    f: &F,
    showing: &Showing<'_>,
) -> Result<(), Error>
where
    T: Serialize + Send,
    F: Fn(usize, u64) -> Result<T, Error> + Sync,
{
    let threads = job.pool.current_num_threads().max(1);
    for chunk in chunk_points(todo, threads) {
        if interrupt_requested() {
            break;
        }
        let chunk_start = Instant::now();
        let units: Vec<(usize, u64)> =
            chunk.iter().flat_map(|&i| todo[i].iter().map(move |&r| (i, r))).collect();
        let done = simulate_chunk(job, points, &units, f, showing);
        let finished = done.iter().filter(|d| matches!(d, Some(Ok(_)))).count().max(1);
        let share = chunk_start.elapsed().as_secs_f64() / finished as f64;
        if let Some(e) = record_chunk(job.opts, have, &units, done, share) {
            showing.progress.bar.finish_and_clear();
            return Err(e);
        }
    }
    Ok(())
}

/// After an interrupt that left units unrun: [`Error::Interrupted`], with what was saved.
fn check_interrupted(
    job: &UnitJob<'_>,
    points: &[PointUnits],
    have: &[Stored],
) -> Result<(), Error> {
    let (shard, runs) = (job.opts.shard, job.runs);
    let unfinished =
        have.iter().enumerate().any(|(i, h)| (h.runs.len() as u64) < owned_runs(shard, runs, i));
    if unfinished && interrupt_requested() {
        let complete = have
            .iter()
            .enumerate()
            .filter(|(i, h)| h.runs.len() as u64 == owned_runs(shard, runs, *i))
            .count();
        let saved: usize = have.iter().map(|h| h.runs.len()).sum();
        return Err(Error::Interrupted {
            item: job.label.to_string(),
            saved_runs: saved,
            complete_points: complete,
            points: points.len(),
            checkpoint: job.opts.cache_dir.clone(),
        });
    }
    Ok(())
}

/// The shard file of shard `s` holding the runs in `have` (the caller fills in the item,
/// config, scale and command).
fn shard_file(s: Shard, job: &UnitJob<'_>, points: &[PointUnits], have: Vec<Stored>) -> ShardFile {
    let units: u64 = have.iter().map(|h| h.runs.len() as u64).sum();
    let wall_time_s = have.iter().map(|h| h.wall_s).sum::<f64>();
    let cpu_time_s = have.iter().map(|h| h.cpu_s).sum::<f64>();
    ShardFile {
        magic: SHARD_MAGIC.to_string(),
        format: UNIT_FORMAT,
        item: String::new(),
        config_sha256: String::new(),
        scale: String::new(),
        shard: s,
        runner_version: env!("CARGO_PKG_VERSION").to_string(),
        units,
        total_units: points.len() as u64 * job.runs,
        threads: job.pool.current_num_threads().max(1),
        wall_time_s: (wall_time_s * 1000.0).round() / 1000.0,
        cpu_time_s: (cpu_time_s * 1000.0).round() / 1000.0,
        command: String::new(),
        points: have.into_iter().filter(|h| !h.runs.is_empty()).collect(),
    }
}

/// Per point, the decoded outcomes of runs `0..runs`; a run that does not decode or a point
/// without all its runs is an error.
fn decode_outcomes<T: DeserializeOwned>(
    job: &UnitJob<'_>,
    points: &[PointUnits],
    have: Vec<Stored>,
) -> Result<Vec<Vec<T>>, Error> {
    let runs = job.runs;
    let mut outs = Vec::with_capacity(points.len());
    for (p, h) in points.iter().zip(have) {
        let mut v = Vec::with_capacity(runs as usize);
        for (r, bytes) in h.runs {
            v.push(decode::<T>(&bytes).map_err(|e| Error::Shard {
                path: PathBuf::from(job.label),
                message: format!(
                    "stored outcome of run {r} of point {} does not decode: {e}",
                    p.point
                ),
            })?);
        }
        if v.len() as u64 != runs {
            return Err(Error::Shard {
                path: PathBuf::from(job.label),
                message: format!("point {} has {} of {runs} runs", p.point, v.len()),
            });
        }
        outs.push(v);
    }
    Ok(outs)
}

/// Runs the units of `points` that are not stored yet (and, with a shard, belong to it),
/// checkpointing finished points, and returns every point's outcomes in run order.
///
/// With a shard the result is [`Executed::Shard`], the shard's units; in merge mode every
/// unit must come from the shard files.
pub(crate) fn run_units<T, F>(
    job: &UnitJob<'_>,
    points: &[PointUnits],
    f: F,
) -> Result<Executed<T>, Error>
where
    T: Serialize + DeserializeOwned + Send,
    F: Fn(usize, u64) -> Result<T, Error> + Sync,
{
    let start = Instant::now();
    let _lock = lock_checkpoints(job, points)?;
    let (mut have, fresh): (Vec<Stored>, Vec<bool>) = load_stored(job, points).into_iter().unzip();
    let todo = plan_todo::<T>(&mut have, job.runs, job.opts.shard);
    check_merge_complete(job, points, &todo)?;
    let complete = |shared: bool| {
        todo.iter().zip(&fresh).filter(|(t, &f)| t.is_empty() && f == shared).count()
    };
    let (stored_points, shared_points) = (complete(false), complete(true));
    check_cached_only(job, points, &todo, stored_points + shared_points)?;
    let earlier = || have.iter().zip(&fresh).filter(|(_, &f)| !f).map(|(h, _)| h);
    let stored_wall_s: f64 = earlier().map(|h| h.wall_s).sum();
    let stored_cpu_s: f64 = earlier().map(|h| h.cpu_s).sum();
    let total = pending_balls(points, &todo);
    let progress = Progress::new(total, job.label, job.opts.progress);
    log_resume(job, points, &have, stored_points + shared_points, total);
    let showing = Showing { progress: &progress, shown: AtomicBool::new(false), start };
    simulate_pending(job, points, &todo, &mut have, &f, &showing)?;
    progress.bar.finish_and_clear();
    check_interrupted(job, points, &have)?;
    if let Some(s) = job.opts.shard {
        return Ok(Executed::Shard(Box::new(shard_file(s, job, points, have))));
    }
    let outs = decode_outcomes(job, points, have)?;
    Ok(Executed::Complete(Units {
        outs,
        stored_points,
        shared_points,
        stored_wall_s,
        stored_cpu_s,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_belongs_to_exactly_one_shard() {
        for count in 1..=7u32 {
            for unit in 0..100u64 {
                let owners = (1..=count).filter(|&index| Shard { index, count }.owns(unit)).count();
                assert_eq!(owners, 1, "unit {unit} of {count} shards");
            }
        }
    }

    #[test]
    fn sealed_files_refuse_damage_and_repeated_runs() {
        let body = b"some postcard bytes".to_vec();
        let sealed = seal(&body);
        assert_eq!(unseal(&sealed).unwrap(), body.as_slice());
        for i in [0, UNIT_HEADER.len() + 1, sealed.len() / 2, sealed.len() - 1] {
            let mut bad = sealed.clone();
            bad[i] ^= 0x10;
            assert!(unseal(&bad).is_err(), "byte {i} flipped");
        }
        assert!(unseal(&sealed[..sealed.len() - 1]).is_err(), "truncated");
        // A checkpoint holding run 0 twice is damaged: not used.
        let dir = std::env::temp_dir().join(format!("ballast-units-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let point = Stored {
            key: "k1".into(),
            wall_s: 0.0,
            cpu_s: 0.0,
            runs: vec![(0, vec![1]), (0, vec![1]), (1, vec![2])],
        };
        store_checkpoint(&dir, None, &point, &FreshCheckpoints::default());
        assert!(load_checkpoint(&dir, "k1", None).is_none());
        let point = Stored {
            key: "k2".into(),
            wall_s: 0.0,
            cpu_s: 1.5,
            runs: vec![(0, vec![1]), (1, vec![2])],
        };
        store_checkpoint(&dir, None, &point, &FreshCheckpoints::default());
        let read = load_checkpoint(&dir, "k2", None).unwrap();
        assert_eq!((read.runs.len(), read.cpu_s), (2, 1.5), "runs and CPU time read back");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn decoding_needs_the_exact_type() {
        let bytes = postcard::to_allocvec(&(1.5f64, 7u64, vec![f64::NAN, -0.0])).unwrap();
        let (a, b, c): (f64, u64, Vec<f64>) = decode(&bytes).unwrap();
        assert_eq!((a, b), (1.5, 7));
        assert!(c[0].is_nan() && c[1].to_bits() == (-0.0f64).to_bits(), "bits kept");
        // Fewer fields than stored: bytes left over, refused.
        assert!(decode::<(f64, u64)>(&bytes).is_err());
        // More fields than stored: refused.
        assert!(decode::<(f64, u64, Vec<f64>, u64)>(&bytes).is_err());
    }

    /// Busy work until this thread has spent `s` seconds of CPU time.
    fn burn(s: f64) -> u64 {
        let start = cpu_time::ThreadTime::now();
        let mut x = 1u64;
        while start.elapsed().as_secs_f64() < s {
            for _ in 0..1000 {
                x = std::hint::black_box(x).rotate_left(7) ^ 0x9e37_79b9;
            }
        }
        x
    }

    /// Every unit burns 10 ms of its thread's CPU time, so the recorded CPU of `units` units
    /// is at least `units` × 10 ms; a runner that records none (the format before 10) gives 0.
    #[test]
    fn checkpoints_and_shard_files_carry_the_cpu_time_of_their_runs() {
        let dir = std::env::temp_dir().join(format!("ballast-units-cpu-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut opts = RunOptions::new("reference");
        opts.progress = false;
        opts.cache_dir = Some(dir.clone());
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let points: Vec<PointUnits> =
            (0..2).map(|i| PointUnits { point: i, key: format!("cpu-{i}"), balls: 1 }).collect();
        let f = |p: usize, r: u64| Ok::<u64, Error>(burn(0.01) ^ (10 * p as u64 + r));
        let complete = |o: &RunOptions| {
            let job = UnitJob { opts: o, pool: &pool, label: "t/cpu", runs: 3, merged: None };
            match run_units(&job, &points, f).unwrap() {
                Executed::Complete(u) => u,
                Executed::Shard(_) => panic!("no shard was asked for"),
            }
        };
        let first = complete(&opts);
        assert_eq!((first.stored_points, first.stored_cpu_s), (0, 0.0), "nothing stored before");
        // The same invocation (its own fresh checkpoints): shared, not counted again.
        let shared = complete(&opts);
        assert_eq!((shared.shared_points, shared.stored_cpu_s), (2, 0.0));
        // A later invocation reads the checkpoints with the CPU time of their 6 runs.
        let later = RunOptions { fresh_checkpoints: FreshCheckpoints::default(), ..opts.clone() };
        let again = complete(&later);
        assert_eq!(again.stored_points, 2);
        assert!((0.06..3.0).contains(&again.stored_cpu_s), "recorded {}", again.stored_cpu_s);
        assert_eq!(again.outs, first.outs);
        // A shard file records the CPU time of its own runs (units 0, 2, 4 of shard 1/2).
        let mut sharded = RunOptions::new("reference");
        sharded.progress = false;
        sharded.shard = Some(Shard { index: 1, count: 2 });
        let job = UnitJob { opts: &sharded, pool: &pool, label: "t/cpu", runs: 3, merged: None };
        let Executed::Shard(file) = run_units(&job, &points, f).unwrap() else {
            panic!("a shard was asked for")
        };
        assert_eq!(file.units, 3);
        assert!((0.03..1.5).contains(&file.cpu_time_s), "recorded {}", file.cpu_time_s);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
