//! A Markdown report built from arbitrary config texts, and the check that its structure is
//! the one the same report has with plain texts: for the fuzz target
//! `fuzz/fuzz_targets/markdown_report.rs` and the randomized test of this crate. Not part of
//! the documented API.

use std::collections::BTreeMap;

use crate::config::{Layout, Scale};
use crate::result::{Comparison, ItemResult, Metadata, Row, ROUNDING};
use crate::statistic::Statistic;
use crate::stats::Summary;

/// The config texts a report shows.
#[derive(Clone, Debug, Default)]
pub struct ReportTexts {
    /// The item's name (the config file's stem).
    pub item: String,
    /// `title`.
    pub title: String,
    /// Series names (at least one is used: an empty list gets one).
    pub series: Vec<String>,
    /// Reference labels.
    pub labels: Vec<String>,
    /// The x axis label.
    pub x_label: String,
    /// A grid variable.
    pub group: String,
    /// `notes` (a Markdown block; `n` is put before it so it is never empty).
    pub notes: String,
    /// A warning quoting config text.
    pub warning: String,
    /// The command line.
    pub command: String,
}

impl ReportTexts {
    /// Arbitrary bytes as texts: the fields are separated by byte 0x1F.
    pub fn from_bytes(data: &[u8]) -> Self {
        let text = String::from_utf8_lossy(data);
        let mut f = text.split('\u{1f}').map(str::to_string);
        let mut next = || f.next().unwrap_or_default();
        let (item, title, x_label, group, notes, warning, command) =
            (next(), next(), next(), next(), next(), next(), next());
        let series = next().split('\u{1e}').map(str::to_string).take(8).collect();
        let labels = next().split('\u{1e}').map(str::to_string).take(4).collect();
        Self { item, title, series, labels, x_label, group, notes, warning, command }
    }

    /// The same number of series and labels, every text plain.
    fn plain(&self) -> Self {
        let n = |p: &str, i: usize| format!("{p}{i}");
        Self {
            item: "item".into(),
            title: "title".into(),
            // A repeated name stays repeated (rows of one name are one series).
            series: if self.series.is_empty() {
                vec![n("s", 0)]
            } else {
                let first = |s: &String| self.series.iter().position(|o| o == s).unwrap_or(0);
                self.series.iter().map(|s| n("s", first(s))).collect()
            },
            labels: (0..self.labels.len()).map(|i| n("l", i)).collect(),
            x_label: "x".into(),
            // A grid variable `n` is shown in the `n` column, not one of its own.
            group: if self.group == "n" { "n".into() } else { "g".into() },
            notes: String::new(),
            warning: "w".into(),
            command: "c".into(),
        }
    }
}

/// The report of a small made-up result showing `t` everywhere the report shows config text
/// (wide table, minima, an `also` statistic table, warnings, notes).
pub fn sample_report(t: &ReportTexts) -> String {
    let mut series = t.series.clone();
    if series.is_empty() {
        series.push(String::new());
    }
    let summary = |mean: f64| Summary {
        mean,
        stderr: 0.1,
        sd: 0.3,
        runs: 10,
        rounding: ROUNDING,
        distribution: BTreeMap::new(),
    };
    let mut rows = Vec::new();
    for (k, name) in series.iter().enumerate() {
        for x in [1.0, 2.0] {
            let comparison = Comparison { value: x, runs: 10, stderr: 0.1, z: Some(0.5) };
            let also = k == 0 && x == 2.0;
            rows.push(Row {
                series: name.clone(),
                group: vec![(t.group.clone(), 3.0)],
                n: 10,
                b: None,
                m: 100,
                x,
                statistic: if also { Statistic::FinalGap } else { Statistic::MaxGap },
                summary: summary(x + k as f64),
                refs: t.labels.iter().map(|_| Some(comparison.clone())).collect(),
                theory: None,
                also,
                values: Vec::new(),
            });
        }
    }
    let result = ItemResult {
        meta: metadata(t, series.len()),
        rows,
        series,
        ref_labels: t.labels.clone(),
        notes: format!("n{}", t.notes),
        warnings: vec![t.warning.clone()],
        layout: Layout::Table,
        mark_minima: true,
        x_log: false,
        y_log: false,
        x_label: t.x_label.clone(),
        y_label: "y".to_string(),
        graphs: Vec::new(),
    };
    result.to_report()
}

fn metadata(t: &ReportTexts, series: usize) -> Metadata {
    Metadata {
        item: format!("p/{}", t.item),
        title: t.title.clone(),
        config_path: format!("configs/p/{}.toml", t.item),
        config_sha256: "0".repeat(64),
        seed: 1,
        seed_derivation_version: 1,
        seed_scheme: "s".to_string(),
        crate_version: "0".to_string(),
        git_revision: "r".to_string(),
        engine: "bins".to_string(),
        quick: false,
        scale: Scale::Full,
        scale_changes: String::new(),
        sampling: None,
        stopping: Vec::new(),
        cached_points: 0,
        shared_points: 0,
        shards: None,
        threads: 1,
        runs: 10,
        points: 2 * series,
        wall_time_s: 1.0,
        cpu_time_s: None,
        balls_simulated: 1000,
        rounding: ROUNDING,
        references: Vec::new(),
        command: t.command.clone(),
    }
}

/// What a line is, for the comparison of structures: heading level, table row with its cell
/// separators, list item and its depth, blank, or paragraph text.
fn kind(line: &str) -> String {
    let hashes = line.len() - line.trim_start_matches('#').len();
    if hashes > 0 && line[hashes..].starts_with(' ') {
        return format!("h{hashes}");
    }
    if line.starts_with('|') {
        return format!("t{}", outside_code(line).iter().filter(|&&c| c == Some('|')).count());
    }
    if line.trim().is_empty() {
        return "blank".to_string();
    }
    let indent = line.len() - line.trim_start_matches(' ').len();
    if line[indent..].starts_with("- ") {
        return format!("li{indent}");
    }
    "p".to_string()
}

/// The characters of `line` outside code spans that are not backslash-escaped, `None` where
/// something was left out.
fn outside_code(line: &str) -> Vec<Option<char>> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' {
            out.push(None);
            i += 2;
            continue;
        }
        if c == '`' {
            let run = chars[i..].iter().take_while(|&&b| b == '`').count();
            // The closing run of exactly the same length, if any.
            let mut j = i + run;
            let mut close = None;
            while j < chars.len() {
                let r = chars[j..].iter().take_while(|&&b| b == '`').count();
                if r == run {
                    close = Some(j + r);
                    break;
                }
                j += r.max(1);
            }
            i = close.unwrap_or(i + run);
            out.push(None);
            continue;
        }
        out.push(Some(c));
        i += 1;
    }
    out
}

/// Whether `line` has, outside code spans, a `<` that is not escaped and could open an HTML
/// tag or comment.
fn opens_html(line: &str) -> bool {
    outside_code(line).windows(2).any(|w| {
        w[0] == Some('<')
            && w[1].is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?'))
    })
}

/// Checks that the report of `t` has the structure of the report of plain texts: the same
/// lines before and after the notes (headings, table rows with the same number of cells,
/// list items, blank lines), no `<` outside code spans that is not escaped there, and notes
/// that close every code fence and open no HTML block. `Err` says what differs.
pub fn check_report(t: &ReportTexts) -> Result<(), String> {
    let report = sample_report(t);
    let plain = sample_report(&t.plain());
    let lines: Vec<&str> = report.split('\n').collect();
    let base: Vec<&str> = plain.split('\n').collect();
    let notes_at = |v: &[&str]| v.iter().position(|l| *l == "## Notes");
    let (Some(a), Some(b)) = (notes_at(&lines), notes_at(&base)) else {
        return Err("no notes section".to_string());
    };
    // Plain notes are one line: "## Notes", blank, "n", then the rest.
    let (head, tail) = (&base[..b + 2], &base[b + 3..]);
    if a != b {
        return Err(format!("{a} lines before the notes, {b} expected"));
    }
    if lines.len() < head.len() + tail.len() + 1 {
        return Err(format!("{} lines, at least {} expected", lines.len(), base.len()));
    }
    let middle = &lines[b + 2..lines.len() - tail.len()];
    let pairs =
        head.iter().zip(&lines[..b + 2]).chain(tail.iter().zip(&lines[lines.len() - tail.len()..]));
    for (want, got) in pairs {
        if kind(want) != kind(got) {
            return Err(format!(
                "line {got:?} is {}, expected {} like {want:?}",
                kind(got),
                kind(want)
            ));
        }
        if opens_html(got) {
            return Err(format!("unescaped < opening HTML in {got:?}"));
        }
    }
    let mut fence: Option<(char, usize)> = None;
    for l in middle {
        let indent = l.len() - l.trim_start_matches(' ').len();
        let opens = indent <= 3 && {
            let rest = &l[indent..];
            let mut cs = rest.chars();
            cs.next() == Some('<')
                && cs
                    .next()
                    .is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?'))
        };
        let f = crate::markdown::fence_of(l);
        match (fence, f) {
            (Some((c, n)), Some((c2, n2)))
                if c == c2 && n2 >= n && l.trim().chars().all(|x| x == c) =>
            {
                fence = None
            }
            (Some(_), _) => {}
            (None, Some(f)) => fence = Some(f),
            (None, None) if opens => return Err(format!("notes line {l:?} opens an HTML block")),
            (None, None) => {}
        }
    }
    if fence.is_some() {
        return Err("the notes leave a code fence open".to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces that mean something in Markdown, and some that do not.
    const PIECES: &[&str] = &[
        "<!--",
        "-->",
        "\n",
        "\r",
        "\r\n",
        "|",
        "`",
        "``",
        "```",
        "~~~",
        "*",
        "**",
        "_",
        "[",
        "]",
        "(",
        ")",
        "](x)",
        "[^1]",
        "#",
        "# ",
        "## ",
        "<div>",
        "</b>",
        "<?",
        "&lt;",
        "&",
        "\\",
        "$",
        "~",
        "a",
        "β",
        " ",
        "   ",
        "\t",
        "> ",
        "- ",
        "1. ",
        "    ",
        "---",
        "===",
        "\u{0}",
        "\u{85}",
        "\u{2028}",
        "\u{a0}",
        "!",
        "<",
        ">",
        ":",
        "x",
        "Greedy[2]",
        "Γ_α",
        "β*",
    ];

    fn random_text(state: &mut u64) -> String {
        let mut next = || {
            // xorshift64*
            *state ^= *state >> 12;
            *state ^= *state << 25;
            *state ^= *state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        let len = next() % 9;
        (0..len).map(|_| PIECES[(next() % PIECES.len() as u64) as usize]).collect()
    }

    #[test]
    fn reports_of_hostile_texts_keep_their_structure() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for round in 0..3000 {
            let mut r = || random_text(&mut state);
            let t = ReportTexts {
                item: r(),
                title: r(),
                series: (0..1 + round % 3).map(|_| r()).collect(),
                labels: (0..round % 3).map(|_| r()).collect(),
                x_label: r(),
                group: r(),
                notes: r() + &r() + &r(),
                warning: r(),
                command: r(),
            };
            if let Err(e) = check_report(&t) {
                panic!("round {round}: {e}\n{t:?}\n{}", sample_report(&t));
            }
        }
    }

    #[test]
    fn the_check_sees_a_broken_structure() {
        // Raw text breaks the structure: the check must notice (this is what the escaping
        // prevents).
        let t = ReportTexts { series: vec!["a\n# b".into()], ..ReportTexts::default() };
        assert_eq!(check_report(&t), Ok(()));
        // Found by the fuzz target: a grid variable named `n` has no column of its own.
        let n =
            ReportTexts { group: "n".into(), series: vec!["a".into()], ..ReportTexts::default() };
        assert_eq!(check_report(&n), Ok(()));
        let report = sample_report(&t.plain());
        let broken = report.replacen("| x |", "| x | y |", 1);
        assert_ne!(report, broken);
        let lines = |s: &str| s.split('\n').map(kind).collect::<Vec<_>>();
        assert_ne!(lines(&report), lines(&broken));
        assert!(!opens_html("a `<b>` c") && !opens_html("a \\<b> c") && !opens_html("a < b"));
        assert!(opens_html("a <b> c") && opens_html("x <!--"));
    }
}
