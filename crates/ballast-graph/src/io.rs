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
//! Every problem is reported as `file:line: what is wrong` ([`crate::Error::Parse`]).

use std::collections::HashMap;
use std::path::Path;

use crate::graph::Csr;
use crate::Error;

/// What to do with a loop `u u`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Loops {
    /// A loop is an error (the default).
    #[default]
    Reject,
    /// Keep loops (a sampled loop sends the ball to its vertex).
    Keep,
}

/// What to do with an edge listed more than once (in either orientation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeListOptions {
    /// Loop policy.
    pub loops: Loops,
    /// Repeated-edge policy.
    pub duplicates: Duplicates,
}

/// Reads an edge-list file (see the module docs).
pub fn read_edge_list(path: &Path, opts: &EdgeListOptions) -> Result<Csr, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| Error::Io { path: path.to_owned(), source })?;
    parse_edge_list(&text, &path.display().to_string(), opts)
}

/// Parses edge-list text; `origin` names it in errors (a file name, `<stdin>`, …).
pub fn parse_edge_list(text: &str, origin: &str, opts: &EdgeListOptions) -> Result<Csr, Error> {
    let mut edges: Vec<(u32, u32)> = Vec::new();
    let mut seen: HashMap<(u32, u32), usize> = HashMap::new();
    let mut max_id: Option<u32> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("");
        let fields: Vec<&str> = content.split_whitespace().collect();
        match fields.len() {
            0 => continue,
            2 => {}
            k => {
                return Err(Error::parse(
                    origin,
                    line,
                    format!(
                        "expected two vertex ids separated by whitespace, found {k} field{}: `{}`",
                        if k == 1 { "" } else { "s" },
                        content.trim()
                    ),
                ))
            }
        }
        let mut ids = [0u32; 2];
        for (slot, f) in ids.iter_mut().zip(&fields) {
            *slot = parse_id(f).map_err(|problem| Error::parse(origin, line, problem))?;
        }
        let [u, v] = ids;
        if u == v && opts.loops == Loops::Reject {
            return Err(Error::parse(
                origin,
                line,
                format!("loop `{u} {v}` (loops are rejected; allow them with loops = keep)"),
            ));
        }
        let key = (u.min(v), u.max(v));
        match (opts.duplicates, seen.get(&key)) {
            (Duplicates::Reject, Some(&first)) => {
                return Err(Error::parse(
                    origin,
                    line,
                    format!(
                        "edge {{{u}, {v}}} repeats line {first} (use duplicates = merge to \
                         ignore repeats, or keep for parallel edges)"
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
        return Err(Error::parse(
            origin,
            0,
            "no edges (an edge list needs at least one `u v` line)",
        ));
    };
    let n = max_id as usize + 1;
    let mut touched = vec![false; n];
    for &(u, v) in &edges {
        touched[u as usize] = true;
        touched[v as usize] = true;
    }
    if let Some(v) = touched.iter().position(|&t| !t) {
        let hint = if v == 0 { " (are the ids 1-based? number vertices from 0)" } else { "" };
        return Err(Error::parse(
            origin,
            0,
            format!(
                "vertex {v} occurs in no edge, but ids must cover 0..{max_id} without gaps \
                 (n = largest id + 1 = {n}){hint}"
            ),
        ));
    }
    Csr::from_edges(n, &edges)
}

fn parse_id(field: &str) -> Result<u32, String> {
    match field.parse::<u64>() {
        Ok(v) if v < u64::from(u32::MAX) => Ok(v as u32),
        Ok(v) => Err(format!("vertex id {v} is too large (at most {})", u32::MAX - 1)),
        Err(_) => Err(format!("`{field}` is not a vertex id (a non-negative integer)")),
    }
}
