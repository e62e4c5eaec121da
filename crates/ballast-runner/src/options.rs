//! How an experiment runs: scale, checkpoints, shards, threads, progress, where the
//! references are. Read by every stage; depends on nothing else of the runner.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

/// How to run an experiment.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Run the `[quick]` variant.
    pub quick: bool,
    /// Run the `[reduced]` variant (ignored when `quick` is set; the full scale when the
    /// config has no `[reduced]` table).
    pub reduced: bool,
    /// Directory of the checkpoints (`None`: none). The finished runs of every point are
    /// stored under a key of (run spec, engine, seeds, ballast version), so an interrupted
    /// item resumes where it stopped and a rerun after a change to the outputs only
    /// re-renders. See [`crate::units`].
    pub cache_dir: Option<PathBuf>,
    /// Ignore the checkpoints written before this invocation, that is those not in
    /// [`RunOptions::fresh_checkpoints`]: their runs are simulated again and replace them. A
    /// checkpoint written with these options or a clone of them, by an earlier item or
    /// earlier in the same item, is read, so a point two items share is simulated once.
    pub refresh_cache: bool,
    /// The checkpoints written with these options and their clones, and those of earlier
    /// invocations an item read with them (one set, shared by the clones). They are read even
    /// under [`RunOptions::refresh_cache`], and a point read whole from one is counted as
    /// shared ([`crate::Metadata::shared_points`]), not as cached: its time is in the item
    /// that simulated it or first read it. An invocation running several items uses one
    /// options value (or clones of it) for all of them.
    pub fresh_checkpoints: FreshCheckpoints,
    /// Simulate nothing: every run must already be in the checkpoints (or the merged shards),
    /// else the item fails with [`crate::Error::NotCached`] before anything is written. For
    /// re-rendering reports and figures after a change to the outputs without risking hours
    /// of simulation.
    pub cached_only: bool,
    /// Run only this shard's units and return them ([`crate::run_shard`]).
    pub shard: Option<Shard>,
    /// Worker threads (0: rayon's default, one per core).
    pub threads: usize,
    /// Show progress: a bar when stderr is a terminal (after the first second), else a plain
    /// line every [`crate::units::PROGRESS_LOG_SECS`] seconds (`BALLAST_PROGRESS_SECS`
    /// overrides), for logs under `nohup` or a batch scheduler.
    pub progress: bool,
    /// Directory holding the reference CSVs (the repository's `reference/`).
    pub reference_dir: PathBuf,
    /// The command line recorded in the metadata (`None`: this process's arguments).
    pub command: Option<String>,
}

impl RunOptions {
    /// Full scale, all cores, progress on, references in `reference_dir`.
    pub fn new(reference_dir: impl Into<PathBuf>) -> Self {
        Self {
            quick: false,
            reduced: false,
            cache_dir: None,
            refresh_cache: false,
            fresh_checkpoints: FreshCheckpoints::default(),
            cached_only: false,
            shard: None,
            threads: 0,
            progress: true,
            reference_dir: reference_dir.into(),
            command: None,
        }
    }
}

/// The checkpoint files written in this invocation: a handle on one set, shared by its
/// clones (so by every clone of a [`RunOptions`]).
///
/// A checkpoint is recorded by its path (checkpoint directory, point key and, for a shard's
/// checkpoint, the shard), once it is written whole; a checkpoint whose write failed is not
/// recorded, so an older file of the same name is never taken for a fresh one.
#[derive(Clone, Debug, Default)]
pub struct FreshCheckpoints(Arc<Mutex<HashSet<PathBuf>>>);

impl FreshCheckpoints {
    /// Records that the checkpoint at `path` was written.
    pub fn insert(&self, path: &Path) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).insert(path.to_path_buf());
    }

    /// Whether the checkpoint at `path` was recorded.
    pub fn contains(&self, path: &Path) -> bool {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).contains(path)
    }

    /// How many checkpoints were written.
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether none was written.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Shard `index` of `count` (1-based): the units `u` with `u mod count = index − 1`.
///
/// ```
/// let s: ballast_runner::Shard = "2/3".parse().unwrap();
/// assert_eq!((s.index, s.count), (2, 3));
/// assert!("0/3".parse::<ballast_runner::Shard>().is_err());
/// assert!("4/3".parse::<ballast_runner::Shard>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// Which shard, `1..=count`.
    pub index: u32,
    /// How many shards.
    pub count: u32,
}

impl Shard {
    /// Whether unit `unit` (point-major, then run) belongs to this shard.
    pub fn owns(self, unit: u64) -> bool {
        unit % u64::from(self.count) == u64::from(self.index - 1)
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("invalid shard `{s}`: expected `i/k` with integers 1 <= i <= k");
        let (i, k) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) =
            (i.trim().parse().map_err(|_| bad())?, k.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Self { index, count })
    }
}
