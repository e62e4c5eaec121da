//! Input errors and exit codes.
//!
//! Anything the user can fix by changing the command line or a config is a [`BadInput`] and
//! ends the program with exit code 2 (clap's own usage errors use 2 as well); any other
//! failure exits with 1. Standard output closed by its reader (a broken pipe) ends the
//! program quietly with 141, as a shell reports a program killed by SIGPIPE.

use std::fmt;

/// Exit code for bad input (usage, parameters, configs).
pub const EXIT_BAD_INPUT: i32 = 2;
/// Exit code for any other failure.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code after an interrupt (Ctrl-C), as shells report SIGINT.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Exit code when standard output is a pipe whose reader has gone (128 + SIGPIPE, as a
/// shell reports a program killed by that signal).
pub const EXIT_BROKEN_PIPE: i32 = 141;

/// Standard output is a pipe whose reader has gone: the output cannot be delivered, and
/// there is no one to tell; the binary exits with [`EXIT_BROKEN_PIPE`] without a message.
#[derive(Debug)]
pub struct StdoutClosed;

impl fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("standard output was closed by its reader (broken pipe)")
    }
}

impl std::error::Error for StdoutClosed {}

/// The run stopped on Ctrl-C; its message says where the finished runs are.
#[derive(Debug)]
pub struct Interrupted(pub String);

impl fmt::Display for Interrupted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Interrupted {}

/// An error caused by the user's input; its message names the field and the allowed values.
#[derive(Debug)]
pub struct BadInput(String);

impl BadInput {
    /// A bad-input error with the given message.
    pub fn new(msg: impl Into<String>) -> Self {
        Self(msg.into())
    }
}

impl fmt::Display for BadInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// The command-line flag that sets a core field, for error messages.
fn flag_of(field: &str) -> Option<&'static str> {
    Some(match field {
        "n" => "--n",
        "m" => "--m",
        "b" => "--batch",
        "tie_break" => "--tie-break",
        "engine" => "--engine",
        "weights.mean" => "--weight-mean",
        "d" => "--param d=VALUE",
        "beta" => "--param beta=VALUE",
        "delta" => "--param delta=VALUE",
        "eta" => "--param eta=VALUE",
        "f" => "--param f=VALUE",
        "g" => "--param g=VALUE",
        "sigma" => "--param sigma=VALUE",
        "k" => "--param k=VALUE",
        "offset" => "--param offset=VALUE",
        "balls" => "--param balls=VALUE",
        "weights" => "--weights",
        _ => return None,
    })
}

/// Which surface the user typed: error messages name settings in its words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Surface {
    /// The command line: `--engine bins`.
    CommandLine,
    /// Python's keywords: `engine="bins"`.
    Python,
}

thread_local! {
    static SURFACE: std::cell::Cell<Surface> = const { std::cell::Cell::new(Surface::CommandLine) };
}

/// Runs `work` with error messages in the words of `surface` (on this thread; the Python
/// package calls the command line's code through [`crate::embed`] in its words).
pub fn with_surface<T>(surface: Surface, work: impl FnOnce() -> T) -> T {
    let before = SURFACE.with(|s| s.replace(surface));
    let out = work();
    SURFACE.with(|s| s.set(before));
    out
}

/// The setting `key = value` of a run's description in the words of the current surface.
pub(crate) fn setting_words(key: &str, value: &str) -> String {
    match SURFACE.with(std::cell::Cell::get) {
        Surface::Python => format!("{key}=\"{value}\""),
        Surface::CommandLine => match flag_of(key) {
            Some(flag) => format!("{flag} {value}"),
            None => format!("{key} = \"{value}\""),
        },
    }
}

/// Turns a validation error of `ballast-core` into a [`BadInput`] that also names the flag,
/// and names the settings it suggests in the words of the surface ([`with_surface`]).
pub fn from_core(e: ballast_core::Error) -> BadInput {
    match &e {
        ballast_core::Error::UnsupportedUse { why, fix } => {
            let each: Vec<String> = fix.iter().map(|(k, v)| setting_words(k, v)).collect();
            BadInput::new(format!("unsupported combination: {why}; use {}", each.join(", or ")))
        }
        ballast_core::Error::Invalid { field, .. } => match flag_of(field) {
            Some(flag) => BadInput::new(format!("{e} (set by {flag})")),
            None => BadInput::new(e.to_string()),
        },
        _ => BadInput::new(e.to_string()),
    }
}

/// The exit code for an error: 2 when it is (or wraps) bad input, 130 after an interrupt,
/// 141 when standard output was closed by its reader, else 1.
pub fn exit_code(e: &anyhow::Error) -> i32 {
    if e.chain().any(|c| c.is::<BadInput>()) {
        EXIT_BAD_INPUT
    } else if e.chain().any(|c| c.is::<StdoutClosed>()) {
        EXIT_BROKEN_PIPE
    } else if e.chain().any(|c| c.is::<Interrupted>()) {
        EXIT_INTERRUPTED
    } else {
        EXIT_FAILURE
    }
}
