//! The error type of `ballast-core`.

use std::fmt::Display;

/// Errors from validating a [`crate::RunSpec`] or running it.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
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
        allowed: &'static str,
    },
    /// The engine cannot simulate this combination exactly.
    #[error("unsupported combination: {0}")]
    Unsupported(String),
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(field: &'static str, value: impl Display, allowed: &'static str) -> Self {
        Self::Invalid { field, value: value.to_string(), allowed }
    }
}
