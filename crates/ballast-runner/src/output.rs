//! Writing an [`ItemResult`]: tidy CSV, JSON metadata, SVG figure and Markdown report, each
//! rendered in memory first, then written to a temporary file and renamed into place.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::markdown::{code, text};
use crate::numbers::{csv_number, num};
use crate::result::{ItemResult, Row};
use crate::tolerance::{allowed_outliers, Z_MEAN_OFFSET, Z_OUTLIER};
use crate::{config::Layout, Error, Scale, Statistic};

/// A statistic for the summary tables: 4 significant digits, so 1.0007 samples per ball and
/// 1.2e-5 moved per ball both stay readable.
fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    format!("{v:.digits$}")
}

/// Decimals for a mean and its standard error in the values tables: 2, or more when the
/// standard error is below 0.01, so that it shows two significant digits (up to 12
/// decimals). "0.0702 ± 0.0012" instead of "0.07 ± 0.00".
fn decimals(stderr: f64) -> usize {
    if stderr.is_finite() && stderr > 0.0 && stderr < 0.01 {
        (1 - stderr.log10().floor() as i32).clamp(2, 12) as usize
    } else {
        2
    }
}

fn label_key(label: &str) -> String {
    label
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .collect()
}

/// The fields of one CSV row: from a run's [`Row`](crate::Row), or read back from a
/// result's JSON (`read_csv`), so both give the same text.
pub(crate) struct CsvRow<'a> {
    pub series: &'a str,
    pub group: &'a [(String, f64)],
    pub n: u64,
    pub b: Option<u64>,
    pub m: u64,
    pub x: f64,
    pub statistic: &'a str,
    pub mean: f64,
    pub stderr: f64,
    pub runs: usize,
    /// Per reference: its value and z.
    pub refs: Vec<Option<(f64, Option<f64>)>>,
    pub theory: Option<f64>,
}

/// The tidy CSV of `rows`: `series`, the grid variables other than x and n, `n, b, m, x,
/// statistic, value, stderr, ci95_low, ci95_high, runs` (the interval of
/// [`crate::stats::ci95`], empty below two runs), then value and z per reference (`reference`, `z` for the
/// first, `reference_<label>`, `z_<label>` for the others) and `theory` when a row has one.
/// Values and standard errors keep 9 significant digits ([`csv_number`]).
pub(crate) fn csv_text(rows: &[CsvRow<'_>], ref_labels: &[String]) -> String {
    let mut groups: Vec<String> = Vec::new();
    for r in rows {
        for (k, _) in r.group {
            if k != "n" && !groups.contains(k) {
                groups.push(k.clone());
            }
        }
    }
    let mut head: Vec<String> = vec!["series".into()];
    head.extend(groups.iter().cloned());
    head.extend(
        [
            "n",
            "b",
            "m",
            "x",
            "statistic",
            "value",
            "stderr",
            "ci95_low",
            "ci95_high",
            "runs",
            "reference",
            "z",
        ]
        .map(String::from),
    );
    for l in ref_labels.iter().skip(1) {
        head.push(format!("reference_{}", label_key(l)));
        head.push(format!("z_{}", label_key(l)));
    }
    let theory = rows.iter().any(|r| r.theory.is_some());
    if theory {
        head.push("theory".into());
    }
    let mut w =
        csv::WriterBuilder::new().terminator(csv::Terminator::Any(b'\n')).from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = w.write_record(&head);
    for r in rows {
        let mut rec: Vec<String> = vec![r.series.to_string()];
        for g in &groups {
            rec.push(
                r.group.iter().find(|(k, _)| k == g).map(|(_, v)| num(*v)).unwrap_or_default(),
            );
        }
        rec.push(r.n.to_string());
        rec.push(r.b.map(|b| b.to_string()).unwrap_or_default());
        rec.push(r.m.to_string());
        rec.push(num(r.x));
        rec.push(r.statistic.to_string());
        rec.push(csv_number(r.mean));
        rec.push(csv_number(r.stderr));
        match crate::stats::ci95(r.mean, r.stderr, r.runs) {
            Some((lo, hi)) => rec.extend([csv_number(lo), csv_number(hi)]),
            None => rec.extend([String::new(), String::new()]),
        }
        rec.push(r.runs.to_string());
        for c in &r.refs {
            match c {
                Some((value, z)) => {
                    rec.push(num(*value));
                    rec.push(z.map(|z| format!("{z:.3}")).unwrap_or_default());
                }
                None => {
                    rec.push(String::new());
                    rec.push(String::new());
                }
            }
        }
        if r.refs.is_empty() {
            rec.push(String::new());
            rec.push(String::new());
        }
        if theory {
            rec.push(r.theory.map(csv_number).unwrap_or_default());
        }
        let _ = w.write_record(&rec);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// The agreement of one series with one reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Points with a reference value (and a defined z).
    pub points: usize,
    /// Points with |z| > [`Z_OUTLIER`].
    pub outliers: usize,
    /// Largest |z|.
    pub max_abs_z: f64,
    /// Mean z (sign: ours above the reference when positive).
    pub mean_z: f64,
}

impl Verdict {
    /// Computes the verdict of `series` against reference number `r`.
    pub fn of(rows: &[Row], series: &str, r: usize) -> Self {
        let zs: Vec<f64> = rows
            .iter()
            .filter(|row| row.series == series)
            .filter_map(|row| row.refs.get(r).cloned().flatten().and_then(|c| c.z))
            .collect();
        let points = zs.len();
        Self {
            points,
            outliers: zs.iter().filter(|z| z.abs() > Z_OUTLIER).count(),
            max_abs_z: zs.iter().fold(0.0, |m, z| m.max(z.abs())),
            mean_z: if points == 0 { 0.0 } else { zs.iter().sum::<f64>() / points as f64 },
        }
    }

    /// `true` when the outliers are within [`allowed_outliers`].
    pub fn agrees(&self) -> bool {
        self.outliers <= allowed_outliers(self.points)
    }

    /// Whether the mean z shows a systematic offset ([`Z_MEAN_OFFSET`]).
    pub fn offset(&self) -> bool {
        self.mean_z.abs() * (self.points as f64).sqrt() > Z_MEAN_OFFSET
    }

    /// One word: `agrees`, `agrees (offset)`, `disagrees`, or `no reference`.
    pub fn word(&self) -> &'static str {
        match (self.points, self.agrees(), self.offset()) {
            (0, _, _) => "no reference",
            (_, true, false) => "agrees",
            (_, true, true) => "agrees (offset)",
            (_, false, _) => "disagrees",
        }
    }

    /// A one-line summary.
    pub fn line(&self) -> String {
        if self.points == 0 {
            return "no reference points".to_string();
        }
        format!(
            "**{}**: {} points, {} with |z| > {Z_OUTLIER} (allowed {}), max |z| {:.1}, mean z {:+.2}",
            self.word(),
            self.points,
            self.outliers,
            allowed_outliers(self.points),
            self.max_abs_z,
            self.mean_z
        )
    }
}

/// A row of the wide table: (grid values other than x, as bits), n, x in millionths.
type CellKey = (Vec<(String, u64)>, u64, i64);

impl ItemResult {
    /// The paper and item parts of the id.
    fn parts(&self) -> (&str, &str) {
        self.meta.item.split_once('/').unwrap_or(("", self.meta.item.as_str()))
    }

    /// The grid variables other than x and n, in order of first appearance.
    fn group_columns(&self) -> Vec<String> {
        let mut cols: Vec<String> = Vec::new();
        for r in &self.rows {
            for (k, _) in &r.group {
                if k != "n" && !cols.contains(k) {
                    cols.push(k.clone());
                }
            }
        }
        cols
    }

    /// The tidy CSV: one row per series and point (values with 9 significant digits).
    pub fn to_csv(&self) -> String {
        let rows: Vec<CsvRow<'_>> = self
            .rows
            .iter()
            .map(|r| CsvRow {
                series: &r.series,
                group: &r.group,
                n: r.n,
                b: r.b,
                m: r.m,
                x: r.x,
                statistic: r.statistic.name(),
                mean: r.summary.mean,
                stderr: r.summary.stderr,
                runs: r.summary.runs,
                refs: r.refs.iter().map(|c| c.as_ref().map(|c| (c.value, c.z))).collect(),
                theory: r.theory,
            })
            .collect();
        csv_text(&rows, &self.ref_labels)
    }

    /// The JSON document: `{ "metadata": …, "rows": … }` (rows carry the distributions).
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        let doc = serde_json::json!({ "metadata": self.meta, "rows": self.rows });
        serde_json::to_string_pretty(&doc).map(|s| s + "\n")
    }

    /// The Markdown report.
    pub fn to_report(&self) -> String {
        let (_, item) = self.parts();
        let (name, link) = (crate::markdown::link_text(item), crate::markdown::link(item));
        let m = &self.meta;
        let mut s = String::new();
        let _ = writeln!(s, "# {}: {}\n", text(&m.item), text(&m.title));
        let scale = match m.scale {
            Scale::Full => String::new(),
            Scale::Quick => {
                " (**quick** variant: scaled down, not comparable with the paper)".to_string()
            }
            Scale::Reduced => format!(
                " (**reduced scale**, not the paper's: {}; {} without `--reduced` runs the full \
                 scale)",
                text(&m.scale_changes),
                code(&format!("cargo xtask reproduce {}", m.item))
            ),
        };
        let _ = writeln!(
            s,
            "Config {} (sha256 `{}`), seed {}, {} runs per point, {} points, {} balls{}. \
             Figure: [{name}.svg]({link}.svg), data: [{name}.csv]({link}.csv), metadata: \
             [{name}.json]({link}.json); how it ran: [below](#run).\n",
            code(&m.config_path),
            &m.config_sha256[..m.config_sha256.len().min(12)],
            m.seed,
            m.runs,
            m.points,
            m.balls_simulated,
            scale,
        );
        if let Some(sm) = m.sampling {
            let _ = writeln!(
                s,
                "Sampling: the authors' protocol, each run is one long run of {} consecutive blocks \
                 of m balls and every block end gives one sample ({} samples per point); standard \
                 errors treat the blocks as independent.\n",
                sm.blocks,
                m.runs * sm.blocks
            );
        }
        self.verdict_section(&mut s);
        if !self.warnings.is_empty() {
            let _ = writeln!(s, "## Warnings\n");
            for w in &self.warnings {
                let _ = writeln!(s, "- {}", crate::markdown::line(w));
            }
            let _ = writeln!(s);
        }
        if !self.notes.trim().is_empty() {
            let _ = writeln!(s, "## Notes\n\n{}\n", crate::markdown::notes(self.notes.trim()));
        }
        if self.layout == Layout::Table {
            self.wide_table(&mut s);
        }
        if self.rows.iter().any(|r| r.also) {
            self.statistic_tables(&mut s);
        }
        if self.rows.iter().any(|r| r.statistic.is_distribution()) {
            self.distribution_tables(&mut s);
        }
        if self.mark_minima {
            self.minima(&mut s);
        }
        self.values_section(&mut s);
        self.run_section(&mut s);
        s
    }

    /// The "## Verdict" section: the overall verdict against the first reference, each
    /// series against each reference, and how z is computed.
    fn verdict_section(&self, s: &mut String) {
        let _ = writeln!(s, "## Verdict\n");
        if self.ref_labels.is_empty() {
            let _ = writeln!(s, "No reference values configured.\n");
        } else {
            let verdicts: Vec<Verdict> =
                self.series.iter().map(|n| Verdict::of(&self.rows, n, 0)).collect();
            let compared: Vec<&Verdict> = verdicts.iter().filter(|v| v.points > 0).collect();
            let bad = compared.iter().filter(|v| !v.agrees()).count();
            let overall = if compared.is_empty() {
                "no reference points matched (the quick variant usually has none)".to_string()
            } else if bad == 0 {
                format!(
                    "**agrees** with {} in all {} compared series",
                    code(&self.ref_labels[0]),
                    compared.len()
                )
            } else {
                format!(
                    "**disagrees** with {} in {bad} of {} compared series",
                    code(&self.ref_labels[0]),
                    compared.len()
                )
            };
            let _ = writeln!(s, "Overall: {overall}.\n");
            for name in &self.series {
                let _ = writeln!(s, "- {}:", text(name));
                for (ri, l) in self.ref_labels.iter().enumerate() {
                    let verdict = Verdict::of(&self.rows, name, ri).line();
                    let _ = writeln!(s, "  - vs {}: {verdict}", code(l));
                }
            }
            // The caveat on two runs of the same experiment concerns the batched and noisy
            // papers' gap figures (reference/README.md); other statistics have no such pair.
            let gaps = self.rows.iter().any(|r| r.statistic.is_gap());
            let caveat = if gaps {
                " (The reference README notes that the authors' raw output and the published \
                 figure, two runs of the same experiment, differ by up to about 2 gap units.)"
            } else {
                ""
            };
            let _ = writeln!(
                s,
                "\nz = (ours − reference) / sqrt(se_ours² + se_ref²). The papers publish no standard \
                 errors, so se_ref is estimated from our own runs: se_ref = sd_ours / sqrt(reference \
                 runs).{caveat} A series \
                 agrees when at most max(1, ⌈1% of its points⌉) have |z| > {Z_OUTLIER}; \"offset\" flags \
                 |mean z|·sqrt(points) > {Z_MEAN_OFFSET}. Distributions in the JSON round gaps as \
                 the series says (default up). For distribution rows the value is a percentage and z \
                 uses the binomial standard error of the pooled proportion.\n"
            );
        }
    }

    /// The "## Values" section: per series and statistic, a table of every point with its
    /// theory, reference values and z.
    fn values_section(&self, s: &mut String) {
        let _ = writeln!(s, "## Values\n");
        for (name, statistic) in self.series_statistics() {
            let rows: Vec<&Row> =
                self.rows.iter().filter(|r| r.series == name && r.statistic == statistic).collect();
            let Some(first) = rows.first() else { continue };
            let title = if first.also {
                format!("{}: {}", text(&name), statistic.name())
            } else {
                text(&name)
            };
            let _ = writeln!(s, "### {title}\n\nstatistic: `{}`\n", statistic.name());
            let theory = rows.iter().any(|r| r.theory.is_some()) && !statistic.is_distribution();
            let mut head = String::from("| n | b | batches | ");
            let _ = write!(head, "{} | ours ± se |", text(&self.x_label));
            if theory {
                let _ = write!(head, " theory |");
            }
            for l in &self.ref_labels {
                let _ = write!(head, " {} | z |", text(l));
            }
            let _ = writeln!(s, "{head}");
            let _ = writeln!(
                s,
                "|{}",
                "---|".repeat(5 + usize::from(theory) + 2 * self.ref_labels.len())
            );
            for r in rows {
                let batches =
                    r.b.map(|b| r.m.div_ceil(b.max(1)).to_string()).unwrap_or_else(|| "–".into());
                let d = decimals(r.summary.stderr);
                let _ = write!(
                    s,
                    "| {} | {} | {batches} | {} | {:.d$} ± {:.d$} |",
                    r.n,
                    r.b.map(|b| b.to_string()).unwrap_or_else(|| "–".into()),
                    num(r.x),
                    r.summary.mean,
                    r.summary.stderr
                );
                if theory {
                    let t = r.theory.map_or_else(|| "–".to_string(), |t| format!("{t:.d$}"));
                    let _ = write!(s, " {t} |");
                }
                for c in &r.refs {
                    match c {
                        Some(c) => {
                            let z = c.z.map(|z| format!("{z:+.1}")).unwrap_or_else(|| "–".into());
                            let flag = if c.z.is_some_and(|z| z.abs() > Z_OUTLIER) {
                                " **!**"
                            } else {
                                ""
                            };
                            let _ = write!(s, " {} | {z}{flag} |", num(c.value));
                        }
                        None => {
                            let _ = write!(s, " – | – |");
                        }
                    }
                }
                let _ = writeln!(s);
            }
            let _ = writeln!(s);
        }
    }

    /// The last section of the report: how this result was executed (the only part that differs
    /// between thread counts, resumed runs and merged shards; see
    /// [`crate::Metadata::EXECUTION_FIELDS`]).
    fn run_section(&self, s: &mut String) {
        let m = &self.meta;
        let cpu = m.cpu_time_s.map(|c| format!(" ({c:.1} s of CPU time)")).unwrap_or_default();
        let _ = writeln!(
            s,
            "## Run\n\nProduced by {} in {:.1} s on {} thread{}{cpu}, git {}.",
            code(&m.command),
            m.wall_time_s,
            m.threads,
            if m.threads == 1 { "" } else { "s" },
            code(&m.git_revision)
        );
        if let Some(k) = m.shards {
            let _ = writeln!(
                s,
                "Merged from {k} shards (`--shard i/{k}`); the wall time is the sum of the shards' \
                 simulation times and the merge, the CPU time that of their runs and the merge."
            );
        }
        if m.cached_points > 0 {
            let _ = writeln!(
                s,
                "{} of {} points were read from the checkpoints; the wall time includes their \
                 recorded simulation time, and the CPU time their runs' recorded CPU time.",
                m.cached_points, m.points
            );
        }
        if m.shared_points > 0 {
            let _ = writeln!(
                s,
                "{} of {} points were read from checkpoints written earlier in the same \
                 invocation (points shared with an item run before this one): simulated once, \
                 their time is in the wall time of the item that simulated them.",
                m.shared_points, m.points
            );
        }
    }

    /// (series, statistic) pairs in row order: each series' own statistic, then its `also`.
    fn series_statistics(&self) -> Vec<(String, Statistic)> {
        let mut out: Vec<(String, Statistic)> = Vec::new();
        for name in &self.series {
            for r in self.rows.iter().filter(|r| &r.series == name) {
                if !out.iter().any(|(n, st)| n == name && *st == r.statistic) {
                    out.push((name.clone(), r.statistic));
                }
            }
        }
        out
    }

    /// One table per scalar statistic (the series' own and their `also` statistics): a row
    /// per grid point, a column per series (mean ± se over runs).
    fn statistic_tables(&self, s: &mut String) {
        let mut stats: Vec<Statistic> = Vec::new();
        for r in &self.rows {
            if !stats.contains(&r.statistic)
                && !r.statistic.is_distribution()
                && !r.statistic.is_trajectory()
                && !r.statistic.at_observations()
                && r.statistic != Statistic::ProbesDistribution
            {
                stats.push(r.statistic);
            }
        }
        let groups = self.group_columns();
        // When x is n itself, one column says it.
        let x_is_n = self.rows.iter().all(|r| r.x == r.n as f64);
        for st in stats {
            let series: Vec<&String> = self
                .series
                .iter()
                .filter(|n| self.rows.iter().any(|r| &r.series == *n && r.statistic == st))
                .collect();
            let mut keys: Vec<(Vec<String>, u64, String)> = Vec::new();
            for r in self.rows.iter().filter(|r| r.statistic == st) {
                let g = groups
                    .iter()
                    .map(|k| {
                        r.group
                            .iter()
                            .find(|(a, _)| a == k)
                            .map(|(_, v)| num(*v))
                            .unwrap_or_default()
                    })
                    .collect();
                let key = (g, r.n, num(r.x));
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            let _ = writeln!(s, "## Table: {} ({})\n", st.name(), st.describe());
            let mut head = String::from("|");
            for g in &groups {
                let _ = write!(head, " {} |", text(g));
            }
            let _ = write!(head, " n |");
            if !x_is_n {
                let _ = write!(head, " {} |", text(&self.x_label));
            }
            for name in &series {
                let _ = write!(head, " {} |", text(name));
            }
            let cols = groups.len() + 2 - usize::from(x_is_n) + series.len();
            let _ = writeln!(s, "{head}\n|{}", "---|".repeat(cols));
            for (g, n, x) in &keys {
                let mut line = String::from("|");
                for v in g {
                    let _ = write!(line, " {v} |");
                }
                let _ = write!(line, " {n} |");
                if !x_is_n {
                    let _ = write!(line, " {x} |");
                }
                for name in &series {
                    let cell = self.rows.iter().find(|r| {
                        &r.series == *name
                            && r.statistic == st
                            && r.n == *n
                            && num(r.x) == *x
                            && groups.iter().zip(g).all(|(k, v)| {
                                r.group
                                    .iter()
                                    .find(|(a, _)| a == k)
                                    .map(|(_, w)| num(*w))
                                    .unwrap_or_default()
                                    == *v
                            })
                    });
                    match cell {
                        Some(r) if r.summary.mean.is_finite() => {
                            let _ = write!(
                                line,
                                " {} ± {} |",
                                sig(r.summary.mean),
                                sig(r.summary.stderr)
                            );
                        }
                        _ => {
                            let _ = write!(line, " – |");
                        }
                    }
                }
                let _ = writeln!(s, "{line}");
            }
            let _ = writeln!(s);
        }
    }

    /// One table per distribution series: a row per parameter combination, a column per gap
    /// value, each cell "ours (reference)" in percent; the last columns give the means the two
    /// distributions imply.
    fn distribution_tables(&self, s: &mut String) {
        let refl = text(self.ref_labels.first().map_or("reference", String::as_str));
        for (name, statistic) in self.series_statistics() {
            if !statistic.is_distribution() {
                continue;
            }
            let shown = text(&name);
            let rows: Vec<&Row> =
                self.rows.iter().filter(|r| r.series == name && r.statistic == statistic).collect();
            let Some(first) = rows.first() else { continue };
            let mut groups: Vec<&[(String, f64)]> = Vec::new();
            for r in &rows {
                if !groups.contains(&r.group.as_slice()) {
                    groups.push(&r.group);
                }
            }
            let mut gaps: Vec<i64> = rows.iter().map(|r| r.x as i64).collect();
            gaps.sort_unstable();
            gaps.dedup();
            let rounding = first.summary.rounding.name();
            if statistic == Statistic::MaxLoadDistribution {
                let _ = writeln!(
                    s,
                    "## Max-load distribution: {shown}\n\nPercent of runs whose largest load at \
                     the end = column (an integer: no rounding). \"mean\" is the mean max load \
                     the distribution implies.\n"
                );
            } else {
                let _ = writeln!(
                    s,
                    "## Distribution: {shown}\n\nPercent of samples with gap (rounded {}) = \
                     column: ours ({refl}); **!** marks |z| > {Z_OUTLIER} (binomial, pooled). \
                     \"mean\" is the mean of the rounded gap each distribution implies.\n",
                    if rounding == "floor" { "down" } else { "up" }
                );
            }
            let gcols: Vec<&str> = groups
                .first()
                .map(|g| g.iter().map(|(k, _)| k.as_str()).collect())
                .unwrap_or_default();
            let mut head = String::from("|");
            for k in &gcols {
                let _ = write!(head, " {} |", text(k));
            }
            let _ = write!(head, " samples |");
            for g in &gaps {
                let _ = write!(head, " {g} |");
            }
            let _ = writeln!(s, "{head} mean: ours | mean: {refl} |");
            let _ = writeln!(s, "|{}", "---|".repeat(gcols.len() + gaps.len() + 3));
            for g in &groups {
                let cells: Vec<&&Row> = rows.iter().filter(|r| r.group.as_slice() == *g).collect();
                let mut line = String::from("|");
                for (_, v) in g.iter() {
                    let _ = write!(line, " {} |", num(*v));
                }
                let samples = cells.first().map_or(0, |r| r.summary.runs);
                let _ = write!(line, " {samples} |");
                let (mut ours_mean, mut ref_mean, mut ref_mass) = (0.0, 0.0, 0.0);
                for gap in &gaps {
                    match cells.iter().find(|r| r.x as i64 == *gap) {
                        Some(r) => {
                            ours_mean += *gap as f64 * r.summary.mean / 100.0;
                            let c = r.refs.first().cloned().flatten();
                            if let Some(c) = &c {
                                ref_mean += *gap as f64 * c.value / 100.0;
                                ref_mass += c.value;
                            }
                            let flag = c
                                .as_ref()
                                .and_then(|c| c.z)
                                .filter(|z| z.abs() > Z_OUTLIER)
                                .map_or("", |_| " **!**");
                            let refv = c.map_or_else(|| "–".to_string(), |c| num(c.value));
                            let _ = write!(line, " {:.0} ({refv}){flag} |", r.summary.mean);
                        }
                        None => {
                            let _ = write!(line, " |");
                        }
                    }
                }
                let refm = if ref_mass > 0.0 {
                    format!("{:.2}", ref_mean * 100.0 / ref_mass)
                } else {
                    "–".to_string()
                };
                let _ = writeln!(line, " {ours_mean:.2} | {refm} |");
                s.push_str(&line);
            }
            let _ = writeln!(s);
        }
    }

    /// For each line (series and grid values other than x): where our curve and the first
    /// reference reach their minimum.
    fn minima(&self, s: &mut String) {
        let refl = text(self.ref_labels.first().map_or("reference", String::as_str));
        let _ = writeln!(
            s,
            "## Minima\n\nThe x of each curve's smallest value (ours: mean ± se there; a flat \
             bottom makes the argmin noisy, so the last column lists the x values whose mean is \
             within 2 se of our minimum).\n"
        );
        let _ = writeln!(
            s,
            "| series | {x} at our min | ours | {x} at {refl} min | {refl} | {x} within 2 se |\n|---|---|---|---|---|---|",
            x = text(&self.x_label)
        );
        let mut keys: Vec<(String, Vec<(String, u64)>)> = Vec::new();
        for r in self.rows.iter().filter(|r| !r.also) {
            let k =
                (r.series.clone(), r.group.iter().map(|(a, v)| (a.clone(), v.to_bits())).collect());
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
        for (series, g) in keys {
            let rows: Vec<&Row> = self
                .rows
                .iter()
                .filter(|r| {
                    r.series == series
                        && !r.also
                        && r.group.iter().map(|(a, v)| (a.clone(), v.to_bits())).collect::<Vec<_>>()
                            == g
                })
                .collect();
            let Some(best) = rows.iter().min_by(|a, b| a.summary.mean.total_cmp(&b.summary.mean))
            else {
                continue;
            };
            let rbest = rows
                .iter()
                .filter_map(|r| r.refs.first().cloned().flatten().map(|c| (r.x, c.value)))
                .min_by(|a, b| a.1.total_cmp(&b.1));
            let near: Vec<String> = rows
                .iter()
                .filter(|r| {
                    r.summary.mean - best.summary.mean
                        <= 2.0 * (r.summary.stderr.powi(2) + best.summary.stderr.powi(2)).sqrt()
                })
                .map(|r| num(r.x))
                .collect();
            let label = if best.group.is_empty() {
                text(&series)
            } else {
                let gs: Vec<String> =
                    best.group.iter().map(|(k, v)| format!("{}={}", text(k), num(*v))).collect();
                format!("{}, {}", text(&series), gs.join(", "))
            };
            let _ = writeln!(
                s,
                "| {label} | {} | {:.2} ± {:.2} | {} | {} | {} |",
                num(best.x),
                best.summary.mean,
                best.summary.stderr,
                rbest.map_or("–".to_string(), |(x, _)| num(x)),
                rbest.map_or("–".to_string(), |(_, v)| num(v)),
                near.join(", ")
            );
        }
        let _ = writeln!(s);
    }

    /// Rows = (group, x), two columns per series: ours and the first reference.
    fn wide_table(&self, s: &mut String) {
        let refl = self.ref_labels.first().map_or("reference", String::as_str);
        let _ = writeln!(s, "## Table: ours (mean ± se) beside {}\n", code(refl));
        let refl = text(refl);
        let mut keys: Vec<CellKey> = Vec::new();
        let mut cells: BTreeMap<(usize, String), &Row> = BTreeMap::new();
        for r in self.rows.iter().filter(|r| !r.also) {
            let g: Vec<(String, u64)> =
                r.group.iter().map(|(k, v)| (k.clone(), v.to_bits())).collect();
            let key = (g, r.n, (r.x * 1e6).round() as i64);
            let idx = match keys.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    keys.push(key);
                    keys.len() - 1
                }
            };
            cells.insert((idx, r.series.clone()), r);
        }
        let mut head = format!("| n | {} |", text(&self.x_label));
        for name in &self.series {
            let _ = write!(head, " {}: ours | {refl} |", text(name));
        }
        let _ = writeln!(s, "{head}");
        let _ = writeln!(s, "|{}", "---|".repeat(2 + 2 * self.series.len()));
        for (i, (_, n, x)) in keys.iter().enumerate() {
            let _ = write!(s, "| {n} | {} |", num(*x as f64 / 1e6));
            for name in &self.series {
                match cells.get(&(i, name.clone())) {
                    Some(r) => {
                        let rv = r.refs.first().cloned().flatten();
                        let reference =
                            rv.as_ref().map(|c| num(c.value)).unwrap_or_else(|| "–".into());
                        let flag = rv
                            .and_then(|c| c.z)
                            .filter(|z| z.abs() > Z_OUTLIER)
                            .map_or("", |_| " **!**");
                        let _ = write!(
                            s,
                            " {:.2} ± {:.2}{flag} | {reference} |",
                            r.summary.mean, r.summary.stderr
                        );
                    }
                    None => {
                        let _ = write!(s, " – | – |");
                    }
                }
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s, "\n**!** marks |z| > {Z_OUTLIER}.\n");
    }

    /// Writes `<out_dir>/<paper>/<item>.{csv,json,svg,md}` and returns the paths. Everything
    /// is rendered before the first file is written, and the four are committed as one set
    /// ([`crate::files::commit_set`]): each name must be a regular file or absent, the new
    /// files go to exclusive temporaries and are renamed in turn, and a failed rename puts
    /// back the files renamed before it. Temporaries of these four names left by a crashed
    /// run are removed first ([`crate::files::remove_stale_temporaries`]).
    pub fn write(&self, out_dir: &Path) -> Result<Vec<PathBuf>, Error> {
        let (paper, item) = self.parts();
        let dir = out_dir.join(paper);
        let json = self.to_json().map_err(|e| Error::Output {
            path: dir.join(format!("{item}.json")),
            message: e.to_string(),
        })?;
        let svg = crate::svg::render_svg(&crate::figure::Figure::of(self))
            .map_err(|message| Error::Output { path: dir.join(format!("{item}.svg")), message })?;
        let files =
            [("csv", self.to_csv()), ("json", json), ("svg", svg), ("md", self.to_report())];
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let names: Vec<String> = files.iter().map(|(ext, _)| format!("{item}.{ext}")).collect();
        crate::files::remove_stale_temporaries(&dir, &names);
        let set: Vec<(PathBuf, &[u8])> =
            names.iter().zip(&files).map(|(n, (_, text))| (dir.join(n), text.as_bytes())).collect();
        crate::files::commit_set(&set)
    }
}

#[cfg(test)]
mod tests {
    use super::decimals;

    #[test]
    fn values_tables_show_two_significant_digits_of_small_standard_errors() {
        assert_eq!(decimals(0.5), 2);
        assert_eq!(decimals(0.01), 2);
        assert_eq!(decimals(0.0099), 4);
        assert_eq!(decimals(0.0012), 4);
        assert_eq!(decimals(2.4e-5), 6);
        assert_eq!(decimals(1e-20), 12);
        assert_eq!(decimals(0.0), 2);
        assert_eq!(decimals(f64::NAN), 2);
        let d = decimals(0.0012);
        assert_eq!(format!("{:.d$} ± {:.d$}", 0.070_213, 0.0012), "0.0702 ± 0.0012");
    }
}
