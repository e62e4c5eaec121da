//! The native half of the Python package `ballast` (`ballast._native`): thin PyO3 glue over
//! [`ballast_cli::embed`], so Python runs the same parsers, pipelines and reports as the
//! `ballast` binary. The Python half (`python/ballast/__init__.py`) maps keyword arguments
//! to command-line options and builds numpy arrays and pandas DataFrames.
//!
//! Every call takes argv-like strings and returns JSON text (or text). Long calls run in a
//! worker thread with the GIL released; the calling thread polls Python's signal handlers,
//! and on KeyboardInterrupt it asks the runner to stop
//! ([`ballast_runner::request_interrupt`]), waits for the runs in progress, clears the
//! request and raises KeyboardInterrupt. Bad input raises ValueError with the registry's
//! message, other failures RuntimeError. `Simulation` (`simulation.rs`) runs one process step by
//! step from a load vector, on the core directly.

mod simulation;

mod rule;

use std::sync::mpsc;
use std::time::Duration;

use ballast_cli::embed::{self, ErrorKind};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

/// How often the waiting thread looks for a signal.
const POLL: Duration = Duration::from_millis(50);

/// A Rust error as the Python exception of its kind.
fn to_py(e: &anyhow::Error) -> PyErr {
    let msg = format!("{e:#}");
    match embed::error_kind(e) {
        ErrorKind::BadInput => PyValueError::new_err(msg),
        ErrorKind::Interrupted => PyKeyboardInterrupt::new_err(msg),
        ErrorKind::Failure => PyRuntimeError::new_err(msg),
    }
}

/// Runs `work` in a worker thread without the GIL, polling for signals meanwhile; a
/// KeyboardInterrupt (or any exception a signal handler raises) stops the runner and is
/// raised once the worker has returned.
fn interruptible<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> anyhow::Result<T> + Send + 'static,
{
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .name("ballast-worker".into())
        .spawn(move || {
            // The receiver may be gone only if the waiting thread panicked.
            let _ = tx.send(work());
        })
        .map_err(|e| PyRuntimeError::new_err(format!("starting the worker thread: {e}")))?;
    let mut signal: Option<PyErr> = None;
    let mut rx = rx;
    let outcome = loop {
        // The receiver is moved in and out: it is Send, not Sync.
        let (got, back) = py.allow_threads(move || (rx.recv_timeout(POLL), rx));
        rx = back;
        match got {
            Ok(r) => break r,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if signal.is_none() {
                    if let Err(e) = py.check_signals() {
                        ballast_runner::request_interrupt();
                        signal = Some(e);
                    }
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break Err(anyhow::anyhow!("the worker thread ended without a result"))
            }
        }
    };
    let _ = py.allow_threads(|| worker.join());
    if let Some(e) = signal {
        ballast_runner::clear_interrupt();
        return Err(e);
    }
    outcome.map_err(|e| to_py(&e))
}

/// Runs `ballast simulate ARGV...`; returns the `--json` object as JSON text (a JSON
/// string holding the config with `--print-config`).
#[pyfunction]
fn simulate(py: Python<'_>, argv: Vec<String>) -> PyResult<String> {
    interruptible(py, move || {
        // Messages name settings as Python keywords (`engine="bins"`).
        ballast_cli::with_surface(ballast_cli::Surface::Python, || {
            Ok(embed::simulate(&argv)?.to_string())
        })
    })
}

/// The options of `ballast simulate` as JSON text: a list of objects with `id`, `long`,
/// `takes` (flag, value, list), `value_name`, `default`, `choices` and `help`.
#[pyfunction]
fn simulate_options() -> PyResult<String> {
    serde_json::to_string(&embed::simulate_options())
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// (item id, tidy CSV text, metadata JSON, extras JSON) of a run, extras holding the notes,
/// warnings, series, reference labels, axis labels, the written paths and `per_run`: for
/// every CSV row, in order, the per-run values its mean was taken of (empty where a row is
/// not a mean over runs).
type RunTuple = (String, String, String, String);

/// The tuple [`run`] and [`run_text`] return.
fn run_tuple(out: embed::RunOutput) -> anyhow::Result<RunTuple> {
    let r = &out.result;
    let meta = serde_json::to_string(&r.meta)?;
    let written: Vec<String> = out.written.iter().map(|p| p.display().to_string()).collect();
    let extras = serde_json::json!({
        "notes": r.notes,
        "warnings": r.warnings,
        "series": r.series,
        "reference_labels": r.ref_labels,
        "x_label": r.x_label,
        "y_label": r.y_label,
        "x_log": r.x_log,
        "written": written,
        "per_run": r.rows.iter().map(|row| &row.values).collect::<Vec<_>>(),
    });
    Ok((out.id, r.to_csv(), meta, extras.to_string()))
}

/// Runs `ballast run ARGV...` without `--shard`; writes the outputs to `--out` only if
/// `write`. Returns (item id, tidy CSV text, metadata JSON, extras JSON) where extras holds
/// the notes, warnings, series, reference labels, axis labels and the written paths.
#[pyfunction]
fn run(py: Python<'_>, argv: Vec<String>, write: bool) -> PyResult<RunTuple> {
    interruptible(py, move || run_tuple(embed::run(&argv, write)?))
}

/// Runs a config given as text (`kind`: `toml` or `json`) under the item id `id`; `argv`
/// are the options of `ballast run` after a stand-in config path. Returns what [`run`]
/// returns.
#[pyfunction]
fn run_text(
    py: Python<'_>,
    kind: String,
    text: String,
    id: String,
    argv: Vec<String>,
    write: bool,
) -> PyResult<RunTuple> {
    interruptible(py, move || {
        let config = match kind.as_str() {
            "toml" => embed::ConfigText::Toml(&text),
            "json" => embed::ConfigText::Json(&text),
            other => anyhow::bail!("config kind `{other}`: expected toml or json"),
        };
        run_tuple(embed::run_text(config, &id, &argv, write)?)
    })
}

/// The text of `ballast list`.
#[pyfunction]
fn list_text() -> String {
    embed::list_text()
}

/// The content of `ballast list` as JSON text.
#[pyfunction]
fn list_json() -> String {
    embed::list().to_string()
}

/// Asks running simulations to stop after their runs in progress (as the first Ctrl-C).
#[pyfunction]
fn request_interrupt() {
    ballast_runner::request_interrupt();
}

/// Clears an interrupt request.
#[pyfunction]
fn clear_interrupt() {
    ballast_runner::clear_interrupt();
}

/// The version of the Rust crates behind the module.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The native module `ballast._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Progress lines and warnings of the runner go to stderr, as in the binary.
    ballast_runner::install_stderr_logging();
    m.add("__version__", VERSION)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_options, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_text, m)?)?;
    m.add_function(wrap_pyfunction!(list_text, m)?)?;
    m.add_function(wrap_pyfunction!(list_json, m)?)?;
    m.add_function(wrap_pyfunction!(request_interrupt, m)?)?;
    m.add_function(wrap_pyfunction!(clear_interrupt, m)?)?;
    m.add_function(wrap_pyfunction!(rule::register_rule, m)?)?;
    m.add_function(wrap_pyfunction!(rule::take_rule_error, m)?)?;
    m.add_class::<simulation::Simulation>()?;
    Ok(())
}
