//! The error type of `ballast-dynamic`: parameter validation of the process configurations and
//! of the simulation horizon.

use std::fmt::Display;

/// Errors from validating a [`crate::DynamicSpec`] or a [`crate::Horizon`].
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
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(field: &'static str, value: impl Display, allowed: &'static str) -> Self {
        Self::Invalid { field, value: value.to_string(), allowed }
    }
}

/// Checks `1 <= n <= 2^32 − 1` (bins are indexed by `u32`).
pub(crate) fn check_n(n: usize) -> Result<(), Error> {
    if n == 0 || n as u64 > u64::from(u32::MAX) {
        return Err(Error::invalid("n", n, "1 <= n <= 2^32 - 1"));
    }
    Ok(())
}

/// Checks `1 <= d <= 64`.
pub(crate) fn check_d(d: u32) -> Result<(), Error> {
    if !(1..=64).contains(&d) {
        return Err(Error::invalid("d", d, "1 <= d <= 64"));
    }
    Ok(())
}
