//! A problem of a config file as a structure: the file, the line and column where known, the
//! series (and grid point) it is about, and the message. Its `Display` is the one line the
//! runner has always printed, `file:line:column: series `s` at n = 10: message`; a front end
//! that names the place its own way (`ballast simulate`) reads the parts. A leaf.

use std::fmt;
use std::path::PathBuf;

/// One problem of a configuration file ([`crate::Error::Config`] lists them in file order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigProblem {
    /// The configuration file (as given).
    pub path: PathBuf,
    /// 1-based line and column of the place, where known.
    pub place: Option<(usize, usize)>,
    /// What the problem is about, as the line names it: `series `s``, or `series `s` at
    /// n = 10, k = 2` for one grid point; `None` for the file, its grid or its `[point]`.
    pub context: Option<String>,
    /// The problem itself, without place or context.
    pub message: String,
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some((line, column)) = self.place {
            write!(f, ":{line}:{column}")?;
        }
        write!(f, ": {}", Msg { context: self.context.clone(), text: self.message.clone() })
    }
}

/// A message before its place is known: the context it is about (if any) and the text.
/// Displays as `context: text`, the form every message had when it was a string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Msg {
    /// The series (and point) the message is about.
    pub context: Option<String>,
    /// The message proper.
    pub text: String,
}

impl Msg {
    /// A message about `context` (`series `s``, `series `s` at n = 10`).
    pub(crate) fn in_ctx(context: &str, text: impl Into<String>) -> Self {
        Self { context: Some(context.to_owned()), text: text.into() }
    }
}

impl fmt::Display for Msg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.context {
            Some(c) => write!(f, "{c}: {}", self.text),
            None => f.write_str(&self.text),
        }
    }
}

impl From<String> for Msg {
    fn from(text: String) -> Self {
        Self { context: None, text }
    }
}

impl From<&str> for Msg {
    fn from(text: &str) -> Self {
        text.to_owned().into()
    }
}

impl From<&String> for Msg {
    fn from(text: &String) -> Self {
        text.clone().into()
    }
}

#[cfg(test)]
mod tests {
    use super::{ConfigProblem, Msg};

    #[test]
    fn display_is_the_one_line_of_old() {
        let p = ConfigProblem {
            path: "a/item.toml".into(),
            place: Some((15, 1)),
            context: Some("series `s` at n = 10".into()),
            message: "`m` = -1: expected a non-negative integer".into(),
        };
        assert_eq!(
            p.to_string(),
            "a/item.toml:15:1: series `s` at n = 10: `m` = -1: expected a non-negative integer"
        );
        let bare = ConfigProblem { place: None, context: None, ..p };
        assert_eq!(bare.to_string(), "a/item.toml: `m` = -1: expected a non-negative integer");
        assert_eq!(Msg::in_ctx("series `s`", "bad").to_string(), "series `s`: bad");
        assert_eq!(Msg::from("bad").to_string(), "bad");
    }
}
