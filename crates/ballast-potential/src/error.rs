//! The error type of `ballast-potential`: parsing potential specs and checking parameters.

/// Errors from parsing a potential spec or configuring a recorder.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The potential name is not one of the known ones.
    #[error("unknown potential `{name}`: expected one of {valid}")]
    UnknownPotential {
        /// The name as written.
        name: String,
        /// The valid names, comma separated.
        valid: &'static str,
    },
    /// A required parameter is missing.
    #[error("potential `{potential}` needs parameter `{param}` ({allowed}), e.g. `{example}`")]
    MissingParameter {
        /// The potential.
        potential: &'static str,
        /// The missing parameter.
        param: &'static str,
        /// The allowed values.
        allowed: &'static str,
        /// A complete valid spec.
        example: &'static str,
    },
    /// A parameter has a value outside its allowed range (or is not a number).
    #[error(
        "invalid value `{value}` for `{param}` of potential `{potential}`: expected {allowed}"
    )]
    InvalidParameter {
        /// The potential.
        potential: &'static str,
        /// The parameter.
        param: &'static str,
        /// The offending value, as written.
        value: String,
        /// The allowed values.
        allowed: &'static str,
    },
    /// A parameter the potential does not take (or a malformed `key=value` pair).
    #[error("potential `{potential}` does not take parameter `{param}`: {expected}")]
    UnknownParameter {
        /// The potential.
        potential: &'static str,
        /// The parameter (or the malformed text).
        param: String,
        /// What the potential takes.
        expected: &'static str,
    },
    /// A recorder or drift setting is out of range.
    #[error("invalid value {value} for `{field}`: expected {allowed}")]
    InvalidSetting {
        /// The setting.
        field: &'static str,
        /// The offending value, formatted.
        value: String,
        /// What would have been accepted.
        allowed: &'static str,
    },
}
