//! Reading the files a user names as inputs (start loads, sampling weights, graph edge
//! lists, reference tables, configs): one function, [`read_text`], for all of them
//! (`docs/settings.md#input-files`).
//!
//! Whatever a file holds, an error names the file, the place in it (line and column, counted
//! from 1 in characters) and what was expected there, and never the file's contents: a config
//! may name any readable file (`/proc/self/environ`), and a message that quoted the text it
//! refused would print it. A token that does not parse is described by its place and length
//! only ([`token`]).
//!
//! Reads are bounded: a file must be a regular file (a directory, FIFO, socket or device is
//! refused before it is opened, so `/dev/zero` or a pipe cannot make a read go on for ever),
//! and at most `limit` bytes are read ([`MAX_INPUT_BYTES`], [`MAX_GRAPH_BYTES`]); one byte
//! more is an error naming the limit.
//!
//! The parsers of the formats ([`crate::start::parse_loads`],
//! [`crate::sampling::parse_weights`], the graph crate's edge lists) take the text and report
//! a [`TextError`]; [`InputError::content`] names the file around it.

use std::fmt;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The most bytes read from an input file of the small kinds: start loads, sampling weights,
/// reference tables and configs (64 MiB: about eight million loads or weights).
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The most bytes read from a graph edge list (256 MiB: some twenty million edges).
pub const MAX_GRAPH_BYTES: u64 = 256 << 20;

/// A problem at a place of a text: a 1-based line and column (line 0: the text as a whole)
/// and what was expected there. The message never holds text of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextError {
    /// 1-based line; 0 when the problem concerns the whole text.
    pub line: usize,
    /// 1-based column in characters; 0 when no column applies.
    pub column: usize,
    /// What is wrong and what was expected (no text of the file).
    pub message: String,
}

impl TextError {
    /// A problem at `line`, `column`.
    pub fn at(line: usize, column: usize, message: impl Into<String>) -> Self {
        Self { line, column, message: message.into() }
    }

    /// A problem of the whole text.
    pub fn whole(message: impl Into<String>) -> Self {
        Self { line: 0, column: 0, message: message.into() }
    }
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (0, _) => f.write_str(&self.message),
            (l, 0) => write!(f, "line {l}: {}", self.message),
            (l, c) => write!(f, "line {l}, column {c}: {}", self.message),
        }
    }
}

/// The 1-based column (in characters) where `part`, a slice of `line`, starts.
pub fn column_of(line: &str, part: &str) -> usize {
    let offset = (part.as_ptr() as usize).saturating_sub(line.as_ptr() as usize).min(line.len());
    line.get(..offset).map_or(offset, |s| s.chars().count()) + 1
}

/// One finite number > 0 per line (`#` comments, blank lines skipped), at least one: the
/// files of bin weights and of capacities. `noun` and `nouns` name an entry in the errors
/// ("weight", "weights").
pub fn parse_positive_numbers(text: &str, noun: &str, nouns: &str) -> Result<Vec<f64>, TextError> {
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let at = |m: String| TextError::at(i + 1, column_of(line, body), m);
        let x: f64 = body.parse().map_err(|_| {
            at(format!("{} that is not a number: expected one {noun} per line", token(body)))
        })?;
        if !(x.is_finite() && x > 0.0) {
            return Err(at(format!("a {noun} that is not a finite number > 0")));
        }
        v.push(x);
    }
    if v.is_empty() {
        return Err(TextError::whole(format!("no {nouns} (one number per line is expected)")));
    }
    Ok(v)
}

/// A token that did not parse, in words that do not repeat it: "a field of 7 characters".
pub fn token(t: &str) -> String {
    let n = t.chars().count();
    format!("a field of {n} character{}", if n == 1 { "" } else { "s" })
}

/// Why an input file could not be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputProblem {
    /// The path holds a NUL byte (no file can have that name).
    NulInPath,
    /// No file at the path.
    Missing,
    /// The path is a directory.
    Directory,
    /// The path is a FIFO, socket or device, not a regular file.
    NotRegular,
    /// The file could not be opened or read (the system's reason).
    Unreadable(String),
    /// The file is larger than the limit of its kind.
    TooLarge {
        /// The limit in bytes.
        limit: u64,
    },
    /// The file is not UTF-8 text: the place of the first bad byte.
    NotUtf8 {
        /// 1-based line.
        line: usize,
        /// 1-based column in characters.
        column: usize,
    },
    /// The text does not have the expected form.
    Content(TextError),
}

impl fmt::Display for InputProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NulInPath => f.write_str("the path contains a NUL byte"),
            Self::Missing => f.write_str("no such file"),
            Self::Directory => f.write_str("is a directory, expected a regular file"),
            Self::NotRegular => f.write_str(
                "is not a regular file (a FIFO, socket or device; input files must be regular \
                 files)",
            ),
            Self::Unreadable(why) => write!(f, "cannot be read: {why}"),
            Self::TooLarge { limit } => {
                write!(f, "is larger than {} MiB, the limit for this kind of file", limit >> 20)
            }
            Self::NotUtf8 { line, column } => {
                write!(f, "line {line}, column {column}: not UTF-8 text (expected a text file)")
            }
            Self::Content(e) => e.fmt(f),
        }
    }
}

/// An input file that could not be used: which kind of file, its path and the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The kind of file in words (`start file`, `graph file`).
    pub what: &'static str,
    /// The path as given (resolved against the config's directory where relative).
    pub path: PathBuf,
    /// What is wrong.
    pub problem: InputProblem,
}

impl InputError {
    /// A content problem of the file `path` of kind `what`.
    pub fn content(what: &'static str, path: &Path, e: TextError) -> Self {
        Self { what, path: path.to_owned(), problem: InputProblem::Content(e) }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} `{}`: {}", self.what, shown(&self.path), self.problem)
    }
}

/// A path as messages show it: as it is, or with control characters (a NUL byte, a newline)
/// escaped, so that a message stays one line and shows what was written.
pub fn shown(path: &Path) -> String {
    let text = path.display().to_string();
    if text.chars().any(char::is_control) {
        text.escape_debug().to_string()
    } else {
        text
    }
}

impl std::error::Error for InputError {}

/// Reads the input file `path` (of kind `what`, for messages) as UTF-8 text of at most
/// `limit` bytes. Refuses a path with a NUL byte, a missing file, a directory and anything
/// that is not a regular file before opening it, and reads through `take(limit + 1)` so that
/// even a file whose size the system does not report is read no further than one byte past
/// the limit.
pub fn read_text(path: &Path, what: &'static str, limit: u64) -> Result<String, InputError> {
    let fail = |problem| InputError { what, path: path.to_owned(), problem };
    if path.as_os_str().as_encoded_bytes().contains(&0) {
        return Err(fail(InputProblem::NulInPath));
    }
    let kind = |m: &std::fs::Metadata| {
        if m.is_dir() {
            Err(InputProblem::Directory)
        } else if !m.is_file() {
            Err(InputProblem::NotRegular)
        } else if m.len() > limit {
            Err(InputProblem::TooLarge { limit })
        } else {
            Ok(())
        }
    };
    let io = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::NotFound => InputProblem::Missing,
        _ => InputProblem::Unreadable(e.to_string()),
    };
    kind(&std::fs::metadata(path).map_err(|e| fail(io(e)))?).map_err(fail)?;
    let file = std::fs::File::open(path).map_err(|e| fail(io(e)))?;
    // The file itself, now open: the path may have been replaced since.
    kind(&file.metadata().map_err(|e| fail(io(e)))?).map_err(fail)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| fail(io(e)))?;
    if bytes.len() as u64 > limit {
        return Err(fail(InputProblem::TooLarge { limit }));
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = e.utf8_error().valid_up_to();
        let prefix = std::str::from_utf8(&e.as_bytes()[..good]).unwrap_or_default();
        let line = prefix.matches('\n').count() + 1;
        let column = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        fail(InputProblem::NotUtf8 { line, column })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ballast-input-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn files_are_read_within_their_limit_and_refused_beyond_it() {
        let d = scratch("limit");
        let f = d.join("a.txt");
        std::fs::write(&f, "12345678").unwrap();
        assert_eq!(read_text(&f, "start file", 8).unwrap(), "12345678");
        let e = read_text(&f, "start file", 7).unwrap_err();
        assert_eq!(e.problem, InputProblem::TooLarge { limit: 7 });
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn special_files_missing_files_and_bad_paths_are_refused_by_name() {
        let d = scratch("special");
        let p = |path: &Path| read_text(path, "graph file", 1 << 20).unwrap_err().problem;
        assert_eq!(p(&d), InputProblem::Directory);
        assert_eq!(p(&d.join("nope")), InputProblem::Missing);
        assert_eq!(p(Path::new("a\0b")), InputProblem::NulInPath);
        let e = read_text(Path::new("a\0b"), "graph file", 1).unwrap_err().to_string();
        assert_eq!(e, "graph file `a\\0b`: the path contains a NUL byte");
        if Path::new("/dev/zero").exists() {
            assert_eq!(p(Path::new("/dev/zero")), InputProblem::NotRegular);
        }
        let e = read_text(&d.join("nope"), "graph file", 1).unwrap_err().to_string();
        assert!(e.starts_with("graph file `") && e.ends_with("nope`: no such file"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn bad_utf8_is_placed_without_its_bytes() {
        let d = scratch("utf8");
        let f = d.join("a.txt");
        std::fs::write(&f, b"1\n2\n\xc3\xa9x\xff\n").unwrap();
        let e = read_text(&f, "start file", 100).unwrap_err();
        assert_eq!(e.problem, InputProblem::NotUtf8 { line: 3, column: 3 });
        assert!(!e.to_string().contains("ff"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn columns_and_tokens_are_described_without_the_text() {
        let line = "  ab cd";
        assert_eq!(column_of(line, &line[5..]), 6);
        assert_eq!(token("secret"), "a field of 6 characters");
        assert_eq!(TextError::at(3, 2, "x").to_string(), "line 3, column 2: x");
        assert_eq!(TextError::at(3, 0, "x").to_string(), "line 3: x");
        assert_eq!(TextError::whole("x").to_string(), "x");
    }
}
