//! `ballast serve`: the lab in a browser, served from one process on loopback.
//!
//! - **Gallery** ([`gallery`]): every item of the results directory (`<paper>/<item>.json`
//!   with its `.csv`, `.svg` and `.md`), its figure, verdict and report; the page draws the
//!   CSV's rows as an interactive plot (hover: series, x, value, standard error, reference,
//!   z) with a filter by paper and verdict.
//! - **Playground** ([`playground`], [`jobs`]): the form of `ballast simulate` built from the
//!   command line's own option list and registry listing; a run goes through the command
//!   line's library ([`Lab`]), so bad input gets exactly its messages, shown next to the field.
//!   Runs are jobs on a bounded worker pool (beyond it: a "busy" answer), polled by the page,
//!   and stoppable (see [`jobs`] for how a stop works with the runner's one global interrupt).
//! - **Animation** ([`animation`]): the sorted normalised load vector and the gap over time,
//!   ball by ball or batch by batch, for n ≤ 10⁴, from the exact bin engine of `ballast-core`.
//!
//! The page (HTML, CSS, one script of its own that also draws the plots) is embedded in the
//! binary ([`assets`]). Nothing is written to disk by the server; files are read only from
//! inside the results directory ([`gallery::Results::resolve`] canonicalises and checks every path).
//!
//! This crate does not depend on the command line: `ballast-cli` implements [`Lab`] (one
//! adapter file, `crates/ballast-cli/src/serve.rs`) and calls [`start`].

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod animation;
pub mod assets;
pub mod gallery;
pub mod jobs;
pub mod playground;
pub mod routes;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

/// The HTTP method type of [`routes::route`].
pub use tiny_http::Method;

/// What kind of failure a [`Lab`] call ended with (the exit codes 2, 130 and 1 of the binary).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabErrorKind {
    /// The user's input was refused (exit code 2): the message says why.
    BadInput,
    /// The run was stopped by the runner's interrupt (exit code 130).
    Interrupted,
    /// Anything else (exit code 1).
    Failure,
}

/// An error of a [`Lab`] call: its kind and the command line's message.
#[derive(Clone, Debug)]
pub struct LabError {
    /// The kind.
    pub kind: LabErrorKind,
    /// The message, as the binary prints it after `error: `.
    pub message: String,
}

/// The command line as the server uses it: argv-like strings in, JSON out.
///
/// `ballast-cli` implements it with its `embed` module; the tests use stand-ins.
pub trait Lab: Send + Sync + 'static {
    /// `ballast simulate ARGV... --json`: the JSON object it prints (a JSON string holding
    /// the config with `--print-config`).
    fn simulate(&self, argv: &[String]) -> Result<Value, LabError>;
    /// The options of `ballast simulate` (id, long, takes, value_name, default, choices,
    /// help), in `--help` order.
    fn simulate_options(&self) -> Value;
    /// `ballast list` as JSON (processes with their parameters, settings, weights, …).
    fn listing(&self) -> Value;
}

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Address to listen on (loopback by default).
    pub addr: SocketAddr,
    /// The results directory the gallery shows (and the only one files are served from).
    pub results: PathBuf,
    /// At most this many playground runs and animations at once.
    pub workers: usize,
    /// Threads answering HTTP requests.
    pub http_threads: usize,
}

/// The default port of `ballast serve`.
pub const DEFAULT_PORT: u16 = 8765;

impl ServeOptions {
    /// Loopback on `port`, the given results directory, 4 workers.
    pub fn new(port: u16, results: impl Into<PathBuf>) -> Self {
        Self {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            results: results.into(),
            workers: 4,
            http_threads: 8,
        }
    }
}

/// Why the server could not start.
#[derive(Debug)]
pub enum StartError {
    /// The results directory is not one (the user's input).
    Results(String),
    /// The address cannot be listened on.
    Listen(String),
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Results(m) | Self::Listen(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for StartError {}

/// A running server: its address, and [`Server::stop`] / [`Server::wait`].
pub struct Server {
    http: Arc<tiny_http::Server>,
    addr: SocketAddr,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Server {
    /// The address it listens on (the port chosen by the system when 0 was asked).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops answering requests and joins the HTTP threads (jobs in progress finish on
    /// their own threads).
    pub fn stop(self) {
        for _ in &self.threads {
            self.http.unblock();
        }
        for t in self.threads {
            let _ = t.join();
        }
    }

    /// Serves until the process ends.
    pub fn wait(self) {
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Starts the server: checks the results directory, binds the address and spawns the HTTP
/// threads. Returns at once; see [`Server::wait`].
pub fn start(opts: ServeOptions, lab: Arc<dyn Lab>) -> Result<Server, StartError> {
    let results = gallery::Results::open(&opts.results).map_err(StartError::Results)?;
    let http = tiny_http::Server::http(opts.addr)
        .map_err(|e| StartError::Listen(format!("cannot listen on {}: {e}", opts.addr)))?;
    let addr = http
        .server_addr()
        .to_ip()
        .ok_or_else(|| StartError::Listen(format!("{} is not an IP address", opts.addr)))?;
    let http = Arc::new(http);
    let state =
        Arc::new(routes::State::new(results, lab, opts.workers.max(1), addr.ip().is_loopback()));
    let threads = (0..opts.http_threads.max(1))
        .map(|_| {
            let (http, state) = (Arc::clone(&http), Arc::clone(&state));
            std::thread::spawn(move || {
                while let Ok(req) = http.recv() {
                    routes::answer(&state, req);
                }
            })
        })
        .collect();
    tracing::debug!("ballast serve: http://{addr}/ (results from {})", opts.results.display());
    if !addr.ip().is_loopback() {
        tracing::warn!(
            "listening on {addr}, not a loopback address: anyone who reaches it can run \
             simulations here (there is no authentication)"
        );
    }
    Ok(Server { http, addr, threads })
}
