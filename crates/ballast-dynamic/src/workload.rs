//! Insert/delete workloads: which step of a deletion model inserts and which deletes.
//!
//! - [`Workload::Random`]: step `t` (counted from 0) inserts with probability `β(t)`, else
//!   deletes (Berenbrink, Friedetzky, Kling, Nagel, arXiv 2510.14798); `β` is a number or a
//!   formula in `t` and `n` ([`Beta`]).
//! - [`Workload::Phases`]: `m` insertions, then for ever `phase` deletions followed by
//!   `phase` insertions (`phase = 1`: fill to `m`, then alternate delete/insert).
//! - [`Workload::Schedule`]: a schedule of `+`/`-` steps read from a text file
//!   ([`parse_schedule`]): played once up to a line `*`, then the part after it repeated for
//!   ever (without `*`, the whole schedule repeats). The text is data: it is parsed, never
//!   run, and an error names its line and column, never its content.

use std::path::Path;
use std::sync::Arc;

use ballast_core::formula::Formula;
use ballast_core::input::{column_of, read_text, token, InputError, TextError, MAX_INPUT_BYTES};

/// The variables of a β formula: the step `t` (from 0) and the number of bins `n`.
pub const BETA_VARS: &[&str] = &["t", "n"];

/// The most steps one schedule may list (runs of a line count with their multiplicity).
pub const MAX_SCHEDULE_STEPS: u64 = 1 << 40;

/// The insertion probability of [`Workload::Random`].
#[derive(Clone, Debug, PartialEq)]
pub enum Beta {
    /// The same probability at every step.
    Const(f64),
    /// A formula in `t` and `n`, clamped to `[0, 1]` at every step.
    Formula(Formula),
}

impl Beta {
    /// A number, or a formula in [`BETA_VARS`].
    pub fn parse(src: &str) -> Result<Self, String> {
        if let Ok(x) = src.trim().parse::<f64>() {
            return Self::constant(x);
        }
        Formula::parse(src, BETA_VARS).map(Self::Formula).map_err(|e| format!("`beta`: {e}"))
    }

    /// A constant probability in `[0, 1]`.
    pub fn constant(x: f64) -> Result<Self, String> {
        if (0.0..=1.0).contains(&x) {
            Ok(Self::Const(x))
        } else {
            Err(format!("`beta` = {x}: expected a probability in [0, 1] or a formula in t, n"))
        }
    }

    /// The probability at step `t` with `n` bins (a formula's value clamped to `[0, 1]`; NaN
    /// counts as 0).
    #[inline]
    pub fn at(&self, t: u64, n: usize, stack: &mut Vec<f64>) -> f64 {
        match self {
            Self::Const(x) => *x,
            Self::Formula(f) => {
                let v = f.eval(&[t as f64, n as f64], stack);
                if v.is_nan() {
                    0.0
                } else {
                    v.clamp(0.0, 1.0)
                }
            }
        }
    }
}

/// One run of equal steps of a schedule: `count` insertions (`insert`) or deletions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Insertions (`true`) or deletions.
    pub insert: bool,
    /// How many steps.
    pub count: u64,
}

/// A parsed schedule: `prefix` played once, then `cycle` repeated for ever.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Played once.
    pub prefix: Vec<Run>,
    /// Repeated after the prefix (non-empty).
    pub cycle: Vec<Run>,
}

/// Which steps insert and which delete.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// Insert with probability β(t), else delete.
    Random(Beta),
    /// `m` insertions, then `phase` deletions and `phase` insertions, repeated.
    Phases {
        /// Balls inserted first.
        m: u64,
        /// Length of each delete and insert phase (`>= 1`).
        phase: u64,
    },
    /// A schedule from a file.
    Schedule(Arc<Schedule>),
}

/// Reads a schedule: one step group per line, `+` or `-` optionally followed by a count
/// (`+1000`: a thousand insertions, `-`: one deletion); blank lines and lines starting with
/// `#` are skipped; a line `*` ends the part played once (at most one such line). At least
/// one step after the `*` (or in the whole text without one), at most
/// [`MAX_SCHEDULE_STEPS`] steps in all.
pub fn parse_schedule(text: &str) -> Result<Schedule, TextError> {
    let (mut prefix, mut cycle, mut star): (Vec<Run>, Vec<Run>, _) = (Vec::new(), Vec::new(), None);
    let mut steps = 0u64;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let at = |m: String| TextError::at(i + 1, column_of(line, t), m);
        if t == "*" {
            if star.is_some() {
                return Err(at("a second `*` line (only one may end the part played once)".into()));
            }
            star = Some(i + 1);
            continue;
        }
        let insert = match t.as_bytes()[0] {
            b'+' => true,
            b'-' => false,
            _ => {
                return Err(at(format!(
                    "{} that is not a step: expected `+`, `-`, `+COUNT`, `-COUNT` or `*`",
                    token(t)
                )))
            }
        };
        let rest = t[1..].trim();
        let count = if rest.is_empty() {
            1
        } else {
            match rest.parse::<u64>() {
                Ok(c) if c >= 1 => c,
                _ => {
                    return Err(at(format!(
                        "a count {} that is not a positive integer",
                        token(rest)
                    )))
                }
            }
        };
        steps = steps.saturating_add(count);
        if steps > MAX_SCHEDULE_STEPS {
            return Err(at(format!("more than {MAX_SCHEDULE_STEPS} steps in all")));
        }
        let runs = if star.is_some() { &mut cycle } else { &mut prefix };
        match runs.last_mut() {
            Some(r) if r.insert == insert => r.count += count,
            _ => runs.push(Run { insert, count }),
        }
    }
    if star.is_none() {
        std::mem::swap(&mut prefix, &mut cycle);
    }
    if cycle.is_empty() {
        let msg = match star {
            Some(_) => "no step after the `*` line (the part repeated for ever)",
            None => "no steps (expected lines such as `+`, `-`, `+1000`)",
        };
        return Err(TextError::whole(msg));
    }
    Ok(Schedule { prefix, cycle })
}

/// Reads the schedule file `path` ([`parse_schedule`]) through [`read_text`]: a regular file
/// of at most [`MAX_INPUT_BYTES`]; an error names the file and the line and column, never the
/// file's text.
pub fn read_schedule(path: &Path) -> Result<Schedule, String> {
    const WHAT: &str = "schedule file";
    let text = read_text(path, WHAT, MAX_INPUT_BYTES).map_err(|e| e.to_string())?;
    parse_schedule(&text).map_err(|e| InputError::content(WHAT, path, e).to_string())
}

/// Where a run is in its workload: the next step's kind, O(1) per step.
#[derive(Clone, Debug)]
pub(crate) struct Cursor {
    /// In the schedule: in the cycle (`true`) or the prefix; the run index; steps left in it.
    cycling: bool,
    run: usize,
    left: u64,
}

impl Cursor {
    pub(crate) fn new(w: &Workload) -> Self {
        let mut c = Self { cycling: false, run: 0, left: 0 };
        if let Workload::Schedule(s) = w {
            c.cycling = s.prefix.is_empty();
            c.left = if c.cycling { s.cycle[0].count } else { s.prefix[0].count };
        }
        c
    }

    /// Whether step `t` inserts (`u01` is a uniform draw in `[0, 1)`, read by
    /// [`Workload::Random`] only).
    #[inline]
    pub(crate) fn inserts(
        &mut self,
        w: &Workload,
        t: u64,
        n: usize,
        u01: impl FnOnce() -> f64,
        stack: &mut Vec<f64>,
    ) -> bool {
        match w {
            Workload::Random(beta) => u01() < beta.at(t, n, stack),
            Workload::Phases { m, phase } => t < *m || ((t - m) / phase) % 2 == 1,
            Workload::Schedule(s) => {
                let runs = if self.cycling { &s.cycle } else { &s.prefix };
                let insert = runs[self.run].insert;
                self.left -= 1;
                if self.left == 0 {
                    self.run += 1;
                    if self.run == runs.len() {
                        self.cycling = true;
                        self.run = 0;
                    }
                    let next = if self.cycling { &s.cycle } else { &s.prefix };
                    self.left = next[self.run].count;
                }
                insert
            }
        }
    }
}
