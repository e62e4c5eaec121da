//! The error type of `ballast-runner`.

use std::path::PathBuf;

use crate::ConfigProblem;

/// One line per problem.
fn lines(problems: &[ConfigProblem]) -> String {
    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

/// Errors from loading, validating, running or writing an experiment.
///
/// Configuration problems are collected, so one [`Error::Config`] lists every problem found in
/// a file (each message names the file, the line and column where known, the field, and the
/// allowed values).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying I/O error.
        source: std::io::Error,
    },
    /// The experiment configuration is malformed or invalid.
    #[error("invalid experiment config {}:\n{}", .path.display(), lines(.errors))]
    Config {
        /// The configuration file.
        path: PathBuf,
        /// One problem each, in the order of their places in the file; each displays as its
        /// line, `file:line:column: context: message`.
        errors: Vec<ConfigProblem>,
    },
    /// Another process runs the same item on the same checkpoint directory.
    #[error(
        "{item}: another ballast process is running this item with the checkpoint directory \
         {} (lock {}); wait for it to finish, or give this run another --checkpoint directory",
        .dir.display(),
        .lock.display()
    )]
    Locked {
        /// The item id.
        item: String,
        /// The checkpoint directory.
        dir: PathBuf,
        /// The lock file.
        lock: PathBuf,
    },
    /// A reference CSV is missing or malformed.
    #[error("reference {}: {message}", .path.display())]
    Reference {
        /// The reference file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The simulation engine refused or failed a run.
    #[error("simulation of {what}: {source}")]
    Simulation {
        /// Which series and point.
        what: String,
        /// The engine's error.
        source: ballast_core::Error,
    },
    /// An output could not be produced (figure rendering, serialisation).
    #[error("output {}: {message}", .path.display())]
    Output {
        /// The output file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A graph, dynamic or potential run failed.
    #[error("{what}: {message}")]
    Kind {
        /// Which series, point and run.
        what: String,
        /// What went wrong.
        message: String,
    },
    /// The thread pool could not be built.
    #[error("thread pool: {0}")]
    ThreadPool(String),
    /// The run was interrupted ([`crate::request_interrupt`], Ctrl-C); the finished runs are
    /// checkpointed when a checkpoint directory is set.
    #[error(
        "{item}: interrupted; {saved_runs} finished runs ({complete_points} of {points} points \
         complete) {}",
        match checkpoint {
            Some(d) => format!("are saved in {}: run the same command again to resume", d.display()),
            None => "are lost (no checkpoint directory)".to_string(),
        }
    )]
    Interrupted {
        /// The item id.
        item: String,
        /// Runs whose outcomes are stored.
        saved_runs: usize,
        /// Points with every run stored.
        complete_points: usize,
        /// Points of the item.
        points: usize,
        /// Where the checkpoints are.
        checkpoint: Option<std::path::PathBuf>,
    },
    /// [`crate::RunOptions::cached_only`] was set and some runs are not in the checkpoints.
    #[error(
        "{item}: {missing_runs} runs ({missing_points} of {points} points) are not in the \
         checkpoints{}; nothing was simulated or written (run without `--cached-only` to \
         simulate them)",
        match checkpoint {
            Some(d) => format!(" in {}", d.display()),
            None => " (no checkpoint directory)".to_string(),
        }
    )]
    NotCached {
        /// The item id.
        item: String,
        /// Runs without a stored outcome.
        missing_runs: usize,
        /// Points with at least one missing run.
        missing_points: usize,
        /// Points of the item.
        points: usize,
        /// Where the checkpoints were looked for.
        checkpoint: Option<std::path::PathBuf>,
    },
    /// A shard file is unreadable or does not belong to the merge.
    #[error("shard {}: {message}", .path.display())]
    Shard {
        /// The shard file (or the item, when no file is to blame).
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }
}
