//! A result's figure and table re-derived from the outputs of its run (`ballast plot`,
//! `cargo xtask refresh`): the JSON's rows keep every `f64` exactly (NaN as `null`) and the
//! frame comes from the config the JSON names, so the SVG and the CSV are the ones the run
//! wrote, byte for byte.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::Scale;
use crate::figure::{lines, Figure, FigureFrame};
use crate::output::{csv_text, CsvRow};
use crate::{Error, Experiment};

/// A number of the JSON, where serde writes NaN as `null`.
fn number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Option::<f64>::deserialize(d).map(|v| v.unwrap_or(f64::NAN))
}

/// The view of one output row (the fields of a JSON row the figure and the CSV read).
#[derive(Deserialize)]
struct RowView {
    series: String,
    group: Vec<(String, f64)>,
    n: u64,
    b: Option<u64>,
    m: u64,
    #[serde(deserialize_with = "number")]
    x: f64,
    statistic: String,
    summary: SummaryView,
    refs: Vec<Option<RefView>>,
    #[serde(default)]
    theory: Option<f64>,
    #[serde(default)]
    also: bool,
}

#[derive(Deserialize)]
struct SummaryView {
    #[serde(deserialize_with = "number")]
    mean: f64,
    #[serde(deserialize_with = "number")]
    stderr: f64,
    runs: usize,
}

#[derive(Deserialize)]
struct RefView {
    #[serde(deserialize_with = "number")]
    value: f64,
    z: Option<f64>,
}

/// The result JSON beside `path` (its CSV, JSON or SVG), parsed.
fn read_output(path: &Path) -> Result<(PathBuf, OutputView), Error> {
    let json = path.with_extension("json");
    let text = std::fs::read_to_string(&json).map_err(|e| Error::io(&json, e))?;
    let v = serde_json::from_str(&text)
        .map_err(|e| plot_error(&json, format!("not the JSON output of a ballast run: {e}")))?;
    Ok((json, v))
}

/// The tidy CSV of a result, re-derived from its JSON: the same text as its run's
/// `ItemResult::to_csv` (the same writer, on the same exact values).
pub fn read_csv(path: &Path) -> Result<String, Error> {
    let (_, v) = read_output(path)?;
    let rows: Vec<CsvRow<'_>> = v
        .rows
        .iter()
        .map(|r| CsvRow {
            series: &r.series,
            group: &r.group,
            n: r.n,
            b: r.b,
            m: r.m,
            x: r.x,
            statistic: &r.statistic,
            mean: r.summary.mean,
            stderr: r.summary.stderr,
            runs: r.summary.runs,
            refs: r.refs.iter().map(|c| c.as_ref().map(|c| (c.value, c.z))).collect(),
            theory: r.theory,
        })
        .collect();
    let labels: Vec<String> = v.metadata.references.iter().map(|(l, _)| l.clone()).collect();
    Ok(csv_text(&rows, &labels))
}

/// The figure's view of a result JSON.
#[derive(Deserialize)]
struct OutputView {
    metadata: MetaView,
    rows: Vec<RowView>,
}

#[derive(Deserialize)]
struct MetaView {
    item: String,
    title: String,
    config_path: String,
    config_sha256: String,
    scale: String,
    references: Vec<(String, String)>,
}

fn plot_error(path: &Path, message: impl Into<String>) -> Error {
    Error::Output { path: path.to_path_buf(), message: message.into() }
}

/// The config a result JSON names: its path as recorded, relative to the working directory
/// or to a directory above the JSON (the repository root for `results/<paper>/<item>.json`).
fn find_config(json: &Path, recorded: &str) -> Option<PathBuf> {
    let rec = Path::new(recorded);
    if rec.is_file() {
        return Some(rec.to_path_buf());
    }
    let abs = std::path::absolute(json).ok()?;
    abs.ancestors().skip(1).map(|d| d.join(rec)).find(|p| p.is_file())
}

/// The figure of the outputs a run wrote, from its JSON (`<item>.json`; given the CSV or
/// SVG of the same result, its sibling JSON is read). The frame comes from the config the
/// JSON names; when that config is gone or has changed since (its SHA-256 differs), the
/// frame is a plain one (x, the statistic) and the second value says why.
pub fn read_figure(path: &Path) -> Result<(Figure, Option<String>), Error> {
    let (json, v) = read_output(path)?;
    let m = &v.metadata;
    let ref_labels: Vec<String> = m.references.iter().map(|(l, _)| l.clone()).collect();
    let rows = v.rows.iter().filter(|r| !r.also).map(|r| {
        let refs = r.refs.iter().map(|c| c.as_ref().map(|c| (c.value, c.z))).collect();
        (r.series.as_str(), r.group.as_slice(), r.x, r.summary.mean, refs)
    });
    let lines = lines(rows, ref_labels.len());
    let (frame, why) = match frame_from_config(&json, m) {
        Ok(f) => (f, None),
        Err(why) => {
            let frame = FigureFrame {
                x_label: "x".into(),
                y_label: "value".into(),
                x_log: false,
                y_log: false,
                mark_minima: false,
            };
            (frame, Some(why))
        }
    };
    let caption = format!("{}: {}", m.item, m.title);
    Ok((Figure { caption, frame, ref_labels, lines, inputs: Vec::new() }, why))
}

fn frame_from_config(json: &Path, m: &MetaView) -> Result<FigureFrame, String> {
    let config = find_config(json, &m.config_path)
        .ok_or_else(|| format!("its config {} was not found", m.config_path))?;
    let exp = Experiment::from_path(&config).map_err(|e| e.to_string())?;
    if exp.sha256() != m.config_sha256 {
        return Err(format!("{} changed since this result was written", config.display()));
    }
    let scale = match m.scale.as_str() {
        "quick" => Scale::Quick,
        "reduced" => Scale::Reduced,
        _ => Scale::Full,
    };
    exp.frame(scale).map_err(|e| e.to_string())
}
