//! What an item's figure shows, apart from how it is drawn: the lines (our means, the
//! reference points, the z values against the first reference) and the frame (caption, axis
//! labels, scales, minima marks).
//!
//! A run builds its figure from its [`ItemResult`] ([`Figure::of`]); `ballast plot` builds the
//! same figure from the outputs a run wrote ([`read_figure`](crate::read_figure): the JSON's
//! rows keep every `f64` exactly, and the frame comes from the config the JSON names), so
//! re-drawing a committed result gives the committed SVG byte for byte
//! ([`render_svg`](crate::render_svg) draws both). Figures of several results can be overlaid
//! ([`Figure::overlay`]) and restricted to some series ([`Figure::keep_series`]).

use crate::numbers::num;
use crate::result::ItemResult;

/// The frame of a figure that comes from the config: axis labels, scales, minima marks.
#[derive(Clone, Debug, PartialEq)]
pub struct FigureFrame {
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// Logarithmic x axis.
    pub x_log: bool,
    /// Logarithmic y axis.
    pub y_log: bool,
    /// Mark each line's minimum (and the first reference's).
    pub mark_minima: bool,
}

/// One line of the figure: a series (at one value of the other grid variables).
#[derive(Clone, Debug, PartialEq)]
pub struct FigureLine {
    /// Legend label.
    pub label: String,
    /// Series name (without the grid values of the label).
    pub series: String,
    /// Our means, per x.
    pub ours: Vec<(f64, f64)>,
    /// Each reference's values, per x.
    pub refs: Vec<Vec<(f64, f64)>>,
    /// z against the first reference, per x.
    pub zs: Vec<(f64, f64)>,
    /// The input this line comes from in an overlay ([`Figure::overlay`]; 0 otherwise).
    pub input: usize,
}

/// A figure: caption, frame, reference labels and lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The caption above the chart (`<item>: <title>`).
    pub caption: String,
    /// Axis labels, x scale, minima marks.
    pub frame: FigureFrame,
    /// Reference labels, in config order.
    pub ref_labels: Vec<String>,
    /// The lines, in the order of the rows.
    pub lines: Vec<FigureLine>,
    /// The labels of the overlaid inputs ([`Figure::overlay`] of several figures; empty for
    /// one figure). With them, every input is drawn in a dash pattern of its own, a series
    /// in the same color in every input, and each input has a z panel of its own.
    pub inputs: Vec<String>,
}

/// The z panel's y axis: z values beyond are drawn at the edge.
pub(crate) const Z_CLAMP: f64 = 10.0;

/// The legend label of a series at the grid values `group` (integers without a fraction).
fn line_label(series: &str, group: &[(String, f64)]) -> String {
    let extra: Vec<String> = group.iter().map(|(k, v)| format!("{k}={}", num(*v))).collect();
    if extra.is_empty() {
        series.to_string()
    } else {
        format!("{series}, {}", extra.join(", "))
    }
}

/// Groups rows `(series, group, x, mean, refs)` into lines, in order of first appearance.
pub(crate) fn lines<'a>(
    rows: impl Iterator<
        Item = (&'a str, &'a [(String, f64)], f64, f64, Vec<Option<(f64, Option<f64>)>>),
    >,
    n_refs: usize,
) -> Vec<FigureLine> {
    let mut out: Vec<(&[(String, f64)], FigureLine)> = Vec::new();
    for (series, group, x, mean, refs) in rows {
        let idx = match out.iter().position(|(g, l)| l.series == series && *g == group) {
            Some(i) => i,
            None => {
                out.push((
                    group,
                    FigureLine {
                        label: line_label(series, group),
                        series: series.to_string(),
                        ours: Vec::new(),
                        refs: vec![Vec::new(); n_refs],
                        zs: Vec::new(),
                        input: 0,
                    },
                ));
                out.len() - 1
            }
        };
        let line = &mut out[idx].1;
        line.ours.push((x, mean));
        for (i, c) in refs.into_iter().enumerate() {
            if let Some((value, z)) = c {
                if let Some(pts) = line.refs.get_mut(i) {
                    pts.push((x, value));
                }
                if let (0, Some(z)) = (i, z) {
                    line.zs.push((x, z.clamp(-Z_CLAMP, Z_CLAMP)));
                }
            }
        }
    }
    out.into_iter().map(|(_, l)| l).collect()
}

impl Figure {
    /// The figure of a run's result.
    pub fn of(r: &ItemResult) -> Self {
        let rows = r.rows.iter().filter(|row| !row.also).map(|row| {
            let refs = row.refs.iter().map(|c| c.as_ref().map(|c| (c.value, c.z))).collect();
            (row.series.as_str(), row.group.as_slice(), row.x, row.summary.mean, refs)
        });
        Figure {
            caption: format!("{}: {}", r.meta.item, r.meta.title),
            frame: FigureFrame {
                x_label: r.x_label.clone(),
                y_label: r.y_label.clone(),
                x_log: r.x_log,
                y_log: r.y_log,
                mark_minima: r.mark_minima,
            },
            ref_labels: r.ref_labels.clone(),
            lines: lines(rows, r.ref_labels.len()),
            inputs: Vec::new(),
        }
    }

    /// Keeps the lines whose series is one of `names` (all lines when `names` is empty);
    /// an unknown name is an error listing the series there are.
    pub fn keep_series(&mut self, names: &[String]) -> Result<(), String> {
        if names.is_empty() {
            return Ok(());
        }
        if let Some(bad) = names.iter().find(|n| !self.lines.iter().any(|l| &l.series == *n)) {
            let mut have: Vec<&str> = self.lines.iter().map(|l| l.series.as_str()).collect();
            have.dedup();
            return Err(format!("no series `{bad}`; the series are: {}", have.join(", ")));
        }
        self.lines.retain(|l| names.contains(&l.series));
        Ok(())
    }

    /// One figure of several: every line of figure `i` is labelled `labels[i]: …` and
    /// remembers its input; the frame and caption are the first figure's. The reference
    /// points of the first figure are kept (those of the others belong to the same published
    /// data and are dropped), and every line keeps its z values against its own input's
    /// first reference (one z panel per input).
    pub fn overlay(figures: Vec<Figure>, labels: &[String]) -> Option<Figure> {
        let many = figures.len() > 1;
        let mut it = figures.into_iter().zip(labels).enumerate();
        let (_, (mut first, label)) = it.next()?;
        if !many {
            return Some(first);
        }
        for l in &mut first.lines {
            l.label = format!("{label}: {}", l.label);
        }
        first.inputs.push(label.clone());
        for (k, (fig, label)) in it {
            for mut l in fig.lines {
                l.label = format!("{label}: {}", l.label);
                l.refs.iter_mut().for_each(Vec::clear);
                l.refs.resize(first.ref_labels.len(), Vec::new());
                l.input = k;
                first.lines.push(l);
            }
            first.inputs.push(label.clone());
        }
        Some(first)
    }

    /// The legend label of a line without its input's prefix (the same text for the same
    /// series in every input of an overlay).
    pub(crate) fn base_label<'a>(&self, line: &'a FigureLine) -> &'a str {
        self.inputs
            .get(line.input)
            .and_then(|i| line.label.strip_prefix(i.as_str()))
            .and_then(|rest| rest.strip_prefix(": "))
            .unwrap_or(&line.label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(series: &[&str]) -> Figure {
        Figure {
            caption: "c".into(),
            frame: FigureFrame {
                x_label: "x".into(),
                y_label: "y".into(),
                x_log: false,
                y_log: false,
                mark_minima: false,
            },
            ref_labels: vec!["published".into()],
            lines: series
                .iter()
                .map(|s| FigureLine {
                    label: s.to_string(),
                    series: s.to_string(),
                    ours: vec![(1.0, 2.0)],
                    refs: vec![vec![(1.0, 2.5)]],
                    zs: vec![(1.0, 0.5)],
                    input: 0,
                })
                .collect(),
            inputs: Vec::new(),
        }
    }

    #[test]
    fn labels_show_integer_grid_values_without_fraction() {
        assert_eq!(line_label("A", &[]), "A");
        assert_eq!(
            line_label("A", &[("n".into(), 1000.0), ("c".into(), 0.25)]),
            "A, n=1000, c=0.25"
        );
    }

    #[test]
    fn keep_series_filters_and_names_unknown_ones() {
        let mut f = fig(&["A", "B"]);
        f.keep_series(&["B".to_string()]).unwrap();
        assert_eq!(f.lines.len(), 1);
        let e = fig(&["A"]).keep_series(&["C".to_string()]).unwrap_err();
        assert!(e.contains("no series `C`") && e.contains("A"), "{e}");
    }

    #[test]
    fn overlay_prefixes_labels_and_keeps_the_first_references() {
        let o =
            Figure::overlay(vec![fig(&["A"]), fig(&["A"])], &["old".into(), "new".into()]).unwrap();
        let labels: Vec<&str> = o.lines.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(labels, ["old: A", "new: A"]);
        assert_eq!(o.lines[0].refs[0].len(), 1);
        // The second input's reference points are dropped, its z values kept.
        assert!(o.lines[1].refs[0].is_empty() && o.lines[1].zs.len() == 1);
        assert_eq!((o.lines[0].input, o.lines[1].input), (0, 1));
        assert_eq!(o.inputs, ["old", "new"]);
        assert_eq!((o.base_label(&o.lines[0]), o.base_label(&o.lines[1])), ("A", "A"));
        // One figure alone is unchanged.
        assert_eq!(Figure::overlay(vec![fig(&["A"])], &["x".into()]).unwrap(), fig(&["A"]));
    }
}
