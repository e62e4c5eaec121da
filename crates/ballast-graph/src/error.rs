//! The error type of `ballast-graph`.

use std::fmt::Display;

/// Errors from building graphs, reading edge lists, and running graphical processes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A parameter is outside its allowed range.
    #[error("invalid value {value} for `{field}`: expected {allowed}")]
    Invalid {
        /// Parameter name, as in configs.
        field: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What would have been accepted.
        allowed: String,
    },
    /// The graph is larger than the store supports (vertex ids and arc indices are 32-bit).
    #[error("graph too large: {0}")]
    TooLarge(String),
    /// The configuration model kept producing loops or multi-edges.
    #[error(
        "random {d}-regular graph on {n} vertices: all {attempts} attempts of the configuration \
         model had a loop or a multi-edge (a pairing is simple with probability about \
         exp(-(d^2-1)/4) = {p_simple:.2e}); use a smaller d or allow more attempts"
    )]
    RegularRejected {
        /// Number of vertices.
        n: usize,
        /// Degree.
        d: usize,
        /// Attempts made.
        attempts: u32,
        /// The asymptotic probability that one pairing is simple.
        p_simple: f64,
    },
    /// A G(n, p) sample was disconnected in every attempt.
    #[error(
        "G(n = {n}, p = {p}) was disconnected in all {attempts} attempts (last sample: \
         {components} components; connectivity needs p above about ln(n)/n = {threshold:.3e}); \
         raise p, allow more attempts, or restrict to the giant component"
    )]
    Disconnected {
        /// Number of vertices.
        n: usize,
        /// Edge probability.
        p: f64,
        /// Attempts made.
        attempts: u32,
        /// Components of the last sample.
        components: usize,
        /// ln(n)/n, the sharp connectivity threshold.
        threshold: f64,
    },
    /// An edge-list file could not be used: missing, not a regular file, too large, not
    /// UTF-8, or malformed (the line and column; never the file's text).
    #[error(transparent)]
    Input(#[from] ballast_core::input::InputError),
    /// Edge-list text is malformed. `line` and `column` are 1-based; line 0 means the problem
    /// concerns the whole text. The problem never quotes the text.
    #[error("{}{}: {problem}", origin, match (*line, *column) {
        (0, _) => String::new(),
        (l, 0) => format!(":{l}"),
        (l, c) => format!(":{l}:{c}"),
    })]
    Parse {
        /// A name for the text (a file name, `<stdin>`).
        origin: String,
        /// 1-based line number, 0 for the whole text.
        line: usize,
        /// 1-based column in characters, 0 when none applies.
        column: usize,
        /// What is wrong.
        problem: String,
    },
    /// The run's parameters do not fit the graph.
    #[error("graph mismatch: {0}")]
    Mismatch(String),
    /// The process has no graphical version.
    #[error("unsupported on graphs: {0}")]
    Unsupported(String),
    /// The run spec itself is invalid.
    #[error(transparent)]
    Core(#[from] ballast_core::Error),
    /// A topology written with an unknown family or parameter, or a value of the wrong type
    /// (the topology registry's message, [`crate::TOPOLOGIES`]).
    #[error(transparent)]
    Param(#[from] ballast_core::registry::ParamError),
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(field: &'static str, value: impl Display, allowed: impl Into<String>) -> Self {
        Self::Invalid { field, value: value.to_string(), allowed: allowed.into() }
    }
}
