//! A result's figure re-drawn from the outputs of its run (`ballast plot`): the JSON's rows
//! keep every `f64` exactly and the frame comes from the config the JSON names, so the SVG is
//! the one the run wrote, byte for byte.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::Scale;
use crate::figure::{lines, Figure, FigureFrame};
use crate::{Error, Experiment};

/// The figure's view of one output row (the fields of a JSON row it reads).
#[derive(Deserialize)]
struct RowView {
    series: String,
    group: Vec<(String, f64)>,
    x: f64,
    summary: SummaryView,
    refs: Vec<Option<RefView>>,
    #[serde(default)]
    also: bool,
}

#[derive(Deserialize)]
struct SummaryView {
    mean: f64,
}

#[derive(Deserialize)]
struct RefView {
    value: f64,
    z: Option<f64>,
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
    let json = path.with_extension("json");
    let text = std::fs::read_to_string(&json).map_err(|e| Error::io(&json, e))?;
    let v: OutputView = serde_json::from_str(&text)
        .map_err(|e| plot_error(&json, format!("not the JSON output of a ballast run: {e}")))?;
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
    Ok((Figure { caption, frame, ref_labels, lines }, why))
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
