//! The edge-list file format for users' own topologies, and its loader.
//!
//! Format: one edge per line as two vertex ids separated by whitespace; `#` starts a comment
//! (whole line or after an edge); blank lines are ignored. Vertex ids are integers
//! `0..n−1` and `n` is the largest id plus one; every id in that range must occur (a gap is
//! almost always a 1-based or sparse numbering, which would silently add isolated bins).
//!
//! ```text
//! # a 4-cycle
//! 0 1
//! 1 2
//! 2 3   # trailing comments are fine
//! 3 0
//! ```
//!
//! Every problem is reported as the file, the line and column, and what was expected there
//! ([`crate::Error::Input`] for files, [`crate::Error::Parse`] for text), never the text
//! itself: a config may name any readable file. Files are read through
//! [`ballast_core::input::read_text`]: regular files of at most [`MAX_GRAPH_BYTES`].

use std::collections::HashMap;
use std::path::Path;

pub use ballast_core::input::MAX_GRAPH_BYTES;
use ballast_core::input::{column_of, read_text, token, InputError, TextError};

use crate::graph::Csr;
use crate::Error;

/// What to do with a loop `u u`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Loops {
    /// A loop is an error (the default).
    #[default]
    Reject,
    /// Keep loops (a sampled loop sends the ball to its vertex).
    Keep,
}

/// What to do with an edge listed more than once (in either orientation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Duplicates {
    /// A repeated edge is an error naming both lines (the default).
    #[default]
    Reject,
    /// Keep the first occurrence only (for files listing both orientations).
    Merge,
    /// Keep every copy: parallel edges, sampled with multiplicity.
    Keep,
}

/// Options of [`read_edge_list`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EdgeListOptions {
    /// Loop policy.
    pub loops: Loops,
    /// Repeated-edge policy.
    pub duplicates: Duplicates,
}

/// Reads an edge-list file (see the module docs) through [`ballast_core::input::read_text`]:
/// a regular file of at most [`MAX_GRAPH_BYTES`]; every problem is an [`Error::Input`] naming
/// the file, the line and column, and what was expected, never the file's text.
pub fn read_edge_list(path: &Path, opts: &EdgeListOptions) -> Result<Csr, Error> {
    let text = read_text(path, WHAT, MAX_GRAPH_BYTES)?;
    let (n, edges) = edges(&text, opts).map_err(|e| InputError::content(WHAT, path, e))?;
    Csr::from_edges(n, &edges)
}

/// What an edge-list file is called in messages.
const WHAT: &str = "graph file";

/// Checks the edge-list file `path` without building the graph: its vertex count, or the
/// problem (for the validation of configs, which reads every input file before anything
/// runs).
pub fn check_edge_list(path: &Path, opts: &EdgeListOptions) -> Result<usize, InputError> {
    let text = read_text(path, WHAT, MAX_GRAPH_BYTES)?;
    edges(&text, opts).map(|(n, _)| n).map_err(|e| InputError::content(WHAT, path, e))
}

/// Parses edge-list text; `origin` names it in errors (a file name, `<stdin>`, …), which
/// give the line and column of the problem ([`Error::Parse`]) but never the text.
pub fn parse_edge_list(text: &str, origin: &str, opts: &EdgeListOptions) -> Result<Csr, Error> {
    let (n, edges) = edges(text, opts).map_err(|e| Error::Parse {
        origin: origin.to_owned(),
        line: e.line,
        column: e.column,
        problem: e.message,
    })?;
    Csr::from_edges(n, &edges)
}

/// The vertex count and the edges of edge-list text, or the first problem.
fn edges(text: &str, opts: &EdgeListOptions) -> Result<(usize, Vec<(u32, u32)>), TextError> {
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut seen: HashMap<(u32, u32), usize> = HashMap::new();
    let mut max_id: Option<u32> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("");
        let fields: Vec<&str> = content.split_whitespace().collect();
        let at = |f: &str, m: String| TextError::at(line, column_of(raw, f), m);
        match fields.len() {
            0 => continue,
            2 => {}
            k => {
                return Err(at(
                    fields[0],
                    format!(
                        "expected two vertex ids separated by whitespace, found {k} field{}",
                        if k == 1 { "" } else { "s" },
                    ),
                ))
            }
        }
        let mut ids = [0u32; 2];
        for (slot, f) in ids.iter_mut().zip(&fields) {
            *slot = parse_id(f).map_err(|problem| at(f, problem))?;
        }
        let [u, v] = ids;
        if u == v && opts.loops == Loops::Reject {
            let msg = "a loop (both ids equal; loops are rejected, allow them with loops = keep)";
            return Err(at(fields[0], msg.to_string()));
        }
        let key = (u.min(v), u.max(v));
        match (opts.duplicates, seen.get(&key)) {
            (Duplicates::Reject, Some(&first)) => {
                return Err(at(
                    fields[0],
                    format!(
                        "the edge of line {first} again (use duplicates = merge to ignore \
                         repeats, or keep for parallel edges)"
                    ),
                ))
            }
            (Duplicates::Merge, Some(_)) => continue,
            (Duplicates::Keep, _) => {}
            (_, None) => {
                seen.insert(key, line);
            }
        }
        max_id = Some(max_id.map_or(u.max(v), |m| m.max(u).max(v)));
        edges.push((u, v));
    }
    let Some(max_id) = max_id else {
        return Err(TextError::whole("no edges (an edge list needs at least one `u v` line)"));
    };
    let n = max_id as usize + 1;
    let mut touched = vec![false; n];
    for &(u, v) in &edges {
        touched[u as usize] = true;
        touched[v as usize] = true;
    }
    if let Some(v) = touched.iter().position(|&t| !t) {
        let hint = if v == 0 { " (are the ids 1-based? number vertices from 0)" } else { "" };
        return Err(TextError::whole(format!(
            "vertex {v} occurs in no edge, but ids must cover 0..{max_id} without gaps \
             (n = largest id + 1 = {n}){hint}"
        )));
    }
    Ok((n, edges))
}

fn parse_id(field: &str) -> Result<u32, String> {
    match field.parse::<u64>() {
        Ok(v) if v < u64::from(u32::MAX) => Ok(v as u32),
        Ok(_) => Err(format!("a vertex id above {} (the largest allowed)", u32::MAX - 1)),
        Err(_) => Err(format!("{} that is not a vertex id (a non-negative integer)", token(field))),
    }
}
