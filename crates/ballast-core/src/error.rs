//! The error type of `ballast-core`.

use std::borrow::Cow;
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
        allowed: Cow<'static, str>,
    },
    /// The engine cannot simulate this combination exactly.
    #[error("unsupported combination: {0}")]
    Unsupported(String),
    /// The engine cannot simulate this combination exactly, and one of the listed settings
    /// would: each a (key, value) pair of the run's description, shown in the words of the
    /// surface that reads it (here: a config's, `engine = "bins"`; the command line renders
    /// `--engine bins`).
    #[error("unsupported combination: {why}; use {}", config_words(fix))]
    UnsupportedUse {
        /// Why not.
        why: String,
        /// The settings that would work, as alternatives.
        fix: &'static [(&'static str, &'static str)],
    },
    /// A process item's own check ([`crate::item::ProcessItem::check`]) refused its
    /// parameters.
    #[error("{0}")]
    Refused(String),
}

/// `engine = "bins", or tie_break = "random"`: settings as a config writes them.
pub fn config_words(fix: &[(&str, &str)]) -> String {
    let each: Vec<String> = fix.iter().map(|(k, v)| format!("{k} = \"{v}\"")).collect();
    each.join(", or ")
}

impl Error {
    /// Shorthand for [`Error::Invalid`].
    pub fn invalid(
        field: &'static str,
        value: impl Display,
        allowed: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::Invalid { field, value: value.to_string(), allowed: allowed.into() }
    }

    /// Shorthand for [`Error::UnsupportedUse`] suggesting the bin engine.
    pub fn use_bins(why: impl Into<String>) -> Self {
        Self::UnsupportedUse { why: why.into(), fix: &[("engine", "bins")] }
    }
}

/// `"; did you mean `seed`?"` when one of `candidates` is close to `word`, else `""`: the
/// nearest name by edit distance (adjacent transpositions count once), or by Jaro-Winkler
/// similarity for long names.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let w = word.to_lowercase();
    let mut best: Option<(usize, f64, &str)> = None;
    for c in candidates {
        if c == word {
            continue;
        }
        let cl = c.to_lowercase();
        let d = strsim::damerau_levenshtein(&w, &cl);
        let jw = strsim::jaro_winkler(&w, &cl);
        let len = w.chars().count().min(cl.chars().count());
        let close = d <= (len / 3).max(1) || jw >= 0.88;
        if close && best.is_none_or(|(bd, bj, _)| (d, -jw) < (bd, -bj)) {
            best = Some((d, jw, c));
        }
    }
    best.map_or(String::new(), |(_, _, c)| format!("; did you mean `{c}`?"))
}
