//! The verdict classes of the results index (`results/README.md`): every compared series of
//! an item is read back from its report's "Verdict" section and put in one class.
//!
//! - **agrees** with the first reference (the published numbers);
//! - **differs from the published figure, agrees with the authors' program**: found when a
//!   reference labelled `raw.out` (the authors' raw output) agrees, or recorded with its
//!   evidence in `reference/disagreements.toml`;
//! - **borderline (k of N beyond 3σ)**: no point beyond |z| = [`BORDERLINE_MAX_Z`], only more
//!   points beyond 3σ than the verdict allows;
//! - **differs from a heuristic prediction (expected)**: the reference is a heuristic, not
//!   a published measurement or an exact law, and `reference/disagreements.toml` says where
//!   and why it fails (class `heuristic`);
//! - **unexplained**: anything else; `reference/disagreements.toml` then gives what is known
//!   of the cause (a series without an entry there says so, and `cargo xtask index` warns).
//!
//! Every disagreement is listed below the index with its class and its cause.

use std::path::Path;

use anyhow::{Context, Result};

/// Beyond this |z| a disagreement is not borderline.
pub const BORDERLINE_MAX_Z: f64 = 5.0;

/// The label of the authors' raw output among an item's references.
const AUTHORS_OUTPUT: &str = "raw.out";

/// One comparison line of a report: `vs `label`: **verdict**: N points, k with |z| > 3
/// (allowed a), max |z| M, …`.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub label: String,
    pub agrees: bool,
    pub points: u64,
    pub beyond: u64,
    pub max_z: f64,
}

/// A compared series of a report and its comparisons, first reference first.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesVerdict {
    pub series: String,
    pub comparisons: Vec<Comparison>,
}

/// The class of a series.
#[derive(Clone, Debug, PartialEq)]
pub enum Class {
    Agrees,
    /// With the evidence.
    AuthorsProgram(String),
    /// k of N beyond 3σ, max |z|.
    Borderline(u64, u64, f64),
    /// With what is known of the cause (`None`: nothing recorded).
    Unexplained(Option<String>),
    /// The reference is a heuristic; with where and why it fails.
    Heuristic(String),
}

/// The number after `prefix` in `text` (up to the next space or comma).
fn number_after(text: &str, prefix: &str) -> Option<f64> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    rest.split([' ', ',', ')']).next()?.parse().ok()
}

/// Parses one comparison line (without its leading `  - `).
fn comparison(line: &str) -> Option<Comparison> {
    let rest = line.strip_prefix("vs `")?;
    let (label, rest) = rest.split_once("`: **")?;
    let (verdict, rest) = rest.split_once("**")?;
    Some(Comparison {
        label: label.to_owned(),
        agrees: verdict.starts_with("agrees"),
        points: rest.trim_start_matches(": ").split(' ').next()?.parse().ok()?,
        beyond: number_after(rest, "points, ")? as u64,
        max_z: number_after(rest, "max |z| ")?,
    })
}

/// The compared series of a report's "Verdict" section.
pub fn parse(report: &str) -> Vec<SeriesVerdict> {
    let mut out: Vec<SeriesVerdict> = Vec::new();
    let section = report.split("## Verdict").nth(1).unwrap_or("");
    for line in section.lines().take_while(|l| !l.starts_with("## ") && !l.starts_with("z = ")) {
        if let Some(name) = line.strip_prefix("- ").and_then(|l| l.strip_suffix(':')) {
            out.push(SeriesVerdict { series: name.to_owned(), comparisons: Vec::new() });
        } else if let (Some(c), Some(s)) =
            (line.strip_prefix("  - ").and_then(comparison), out.last_mut())
        {
            s.comparisons.push(c);
        }
    }
    out.retain(|s| !s.comparisons.is_empty());
    out
}

/// What `reference/disagreements.toml` records for one series: its class (`authors_program`,
/// `heuristic` or `unexplained`) and the cause or evidence.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    entries: Vec<(String, String, String, String)>,
}

impl Recorded {
    /// Reads `path` (`[[series]]` tables with `item`, `series`, `class`, `cause`); a missing
    /// file records nothing.
    pub fn read(path: &Path) -> Result<Self> {
        if !path.exists() {
            return Ok(Self::default());
        }
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let doc: toml::Table =
            text.parse().with_context(|| format!("parsing {}", path.display()))?;
        let mut entries = Vec::new();
        for (i, t) in doc.get("series").and_then(|v| v.as_array()).into_iter().flatten().enumerate()
        {
            let field = |k: &str| {
                t.get(k).and_then(|v| v.as_str()).map(str::to_owned).with_context(|| {
                    format!("{}: series {}: missing text field `{k}`", path.display(), i + 1)
                })
            };
            let class = field("class")?;
            anyhow::ensure!(
                ["authors_program", "heuristic", "unexplained"].contains(&class.as_str()),
                "{}: series {}: class `{class}`: expected authors_program, heuristic or \
                 unexplained",
                path.display(),
                i + 1
            );
            entries.push((field("item")?, field("series")?, class, field("cause")?));
        }
        Ok(Self { entries })
    }

    fn get(&self, item: &str, series: &str) -> Option<(&str, &str)> {
        self.entries
            .iter()
            .find(|(i, s, _, _)| i == item && s == series)
            .map(|(_, _, c, t)| (c.as_str(), t.as_str()))
    }
}

/// The class of a series of `item`.
pub fn classify(item: &str, s: &SeriesVerdict, recorded: &Recorded) -> Class {
    let Some(first) = s.comparisons.first() else { return Class::Agrees };
    if first.agrees {
        return Class::Agrees;
    }
    if let Some(raw) = s.comparisons.iter().skip(1).find(|c| c.label == AUTHORS_OUTPUT && c.agrees)
    {
        return Class::AuthorsProgram(format!(
            "against `{}` (the authors' raw output) it agrees: {} of {} points beyond 3σ, max |z| \
             {:.1}",
            raw.label, raw.beyond, raw.points, raw.max_z
        ));
    }
    match recorded.get(item, &s.series) {
        Some(("authors_program", why)) => Class::AuthorsProgram(why.to_owned()),
        Some(("heuristic", why)) => Class::Heuristic(why.to_owned()),
        _ if first.max_z <= BORDERLINE_MAX_Z => {
            Class::Borderline(first.beyond, first.points, first.max_z)
        }
        Some((_, why)) => Class::Unexplained(Some(why.to_owned())),
        None => Class::Unexplained(None),
    }
}

/// The short text of a class in the index's verdict column.
pub fn short(c: &Class) -> String {
    match c {
        Class::Agrees => "agrees".to_owned(),
        Class::AuthorsProgram(_) => {
            "**differs from the published figure, agrees with the authors' program**".to_owned()
        }
        Class::Borderline(k, n, _) => format!("**borderline** ({k} of {n} points beyond 3σ)"),
        Class::Unexplained(_) => "**unexplained**".to_owned(),
        Class::Heuristic(_) => "**differs from a heuristic prediction (expected)**".to_owned(),
    }
}

/// The cause of a disagreement, as the list below the index gives it.
pub fn cause(c: &Class) -> String {
    match c {
        Class::Agrees => String::new(),
        Class::AuthorsProgram(why) => format!("evidence: {why}"),
        Class::Borderline(k, n, z) => format!(
            "every point within |z| ≤ {BORDERLINE_MAX_Z} (max {z:.1}); {k} of {n} beyond 3σ \
             where the verdict allows max(1, ⌈1 % of N⌉): chance fluctuation at this \
             replication's level, not a different curve"
        ),
        Class::Unexplained(Some(why)) => format!("what is known: {why}"),
        Class::Unexplained(None) => {
            "no cause recorded (reference/disagreements.toml has no entry)".to_owned()
        }
        Class::Heuristic(why) => format!("where and why: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "# x\n\n## Verdict\n\nOverall: **disagrees** with `published` in 2 of 3 \
        compared series.\n\n- A:\n  - vs `published`: **agrees**: 50 points, 1 with |z| > 3 \
        (allowed 1), max |z| 4.0, mean z -0.34\n- B:\n  - vs `published`: **disagrees**: 50 \
        points, 2 with |z| > 3 (allowed 1), max |z| 3.3, mean z -0.08\n  - vs `raw.out`: \
        **agrees**: 50 points, 0 with |z| > 3 (allowed 1), max |z| 2.4, mean z -0.30\n- C:\n  \
        - vs `published`: **disagrees**: 45 points, 44 with |z| > 3 (allowed 1), max |z| \
        285.9, mean z +8.26\n\nz = (ours − reference)\n";

    #[test]
    fn reads_the_verdict_section_and_classifies_each_series() {
        let v = parse(REPORT);
        assert_eq!(v.len(), 3);
        assert_eq!(v[1].comparisons[0].beyond, 2);
        assert_eq!(v[2].comparisons[0].max_z, 285.9);
        let none = Recorded::default();
        assert_eq!(classify("p/i", &v[0], &none), Class::Agrees);
        assert!(
            matches!(classify("p/i", &v[1], &none), Class::AuthorsProgram(e) if e.contains("0 of 50"))
        );
        assert_eq!(classify("p/i", &v[2], &none), Class::Unexplained(None));
        let recorded = Recorded {
            entries: vec![("p/i".into(), "C".into(), "unexplained".into(), "why".into())],
        };
        assert_eq!(classify("p/i", &v[2], &recorded), Class::Unexplained(Some("why".into())));
        let heuristic = Recorded {
            entries: vec![("p/i".into(), "C".into(), "heuristic".into(), "where".into())],
        };
        assert_eq!(classify("p/i", &v[2], &heuristic), Class::Heuristic("where".into()));
        assert!(short(&Class::Heuristic(String::new())).contains("heuristic"));
        // Without the authors' output, a few points at |z| ≈ 3.3 are borderline.
        let mut b = v[1].clone();
        b.comparisons.truncate(1);
        assert_eq!(classify("p/i", &b, &none), Class::Borderline(2, 50, 3.3));
    }
}
