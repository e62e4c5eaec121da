//! The SVG figure of an item (plotters, SVG backend only): one line per series (and per value
//! of the other grid variables) with its points, the reference points overlaid as distinct
//! markers, axis labels and a legend.

use plotters::prelude::*;

use crate::run::ItemResult;

const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Grid values other than x.
type Group = Vec<(String, f64)>;

struct Line {
    label: String,
    ours: Vec<(f64, f64)>,
    refs: Vec<Vec<(f64, f64)>>,
}

fn lines(r: &ItemResult) -> Vec<Line> {
    let mut out: Vec<(String, Group, Line)> = Vec::new();
    for row in &r.rows {
        let idx = match out.iter().position(|(s, g, _)| *s == row.series && *g == row.group) {
            Some(i) => i,
            None => {
                let extra: Vec<String> = row
                    .group
                    .iter()
                    .map(|(k, v)| {
                        if v.fract() == 0.0 {
                            format!("{k}={}", *v as i64)
                        } else {
                            format!("{k}={v}")
                        }
                    })
                    .collect();
                let label = if extra.is_empty() {
                    row.series.clone()
                } else {
                    format!("{}, {}", row.series, extra.join(", "))
                };
                out.push((
                    row.series.clone(),
                    row.group.clone(),
                    Line { label, ours: Vec::new(), refs: vec![Vec::new(); r.ref_labels.len()] },
                ));
                out.len() - 1
            }
        };
        let line = &mut out[idx].2;
        line.ours.push((row.x, row.summary.mean));
        for (i, c) in row.refs.iter().enumerate() {
            if let Some(c) = c {
                line.refs[i].push((row.x, c.value));
            }
        }
    }
    out.into_iter().map(|(_, _, l)| l).collect()
}

/// Renders the figure to an SVG string.
pub(crate) fn render(r: &ItemResult) -> Result<String, String> {
    let lines = lines(r);
    let all = lines.iter().flat_map(|l| l.ours.iter().chain(l.refs.iter().flatten()));
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    if !x0.is_finite() {
        (x0, x1) = (0.0, 1.0);
    }
    if x1 <= x0 {
        (x0, x1) = (x0 - 1.0, x1 + 1.0);
    }
    let pad = (x1 - x0) * 0.03;
    let y1 = if y1 > 0.0 { y1 * 1.08 } else { 1.0 };
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (960, 640)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let caption = format!("{}: {}", r.meta.item, r.meta.title);
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, ("sans-serif", 20))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d((x0 - pad)..(x1 + pad), 0.0..y1)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(r.x_label.as_str())
            .y_desc(r.y_label.as_str())
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, line) in lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            chart
                .draw_series(LineSeries::new(line.ours.iter().copied(), color.stroke_width(2)))
                .map_err(|e| e.to_string())?
                .label(line.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(line.ours.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(|e| e.to_string())?;
            for (ri, pts) in line.refs.iter().enumerate() {
                if ri == 0 {
                    chart
                        .draw_series(pts.iter().map(|&p| Cross::new(p, 5, BLACK.stroke_width(1))))
                        .map_err(|e| e.to_string())?;
                } else {
                    chart
                        .draw_series(
                            pts.iter().map(|&p| {
                                TriangleMarker::new(p, 4, color.mix(0.6).stroke_width(1))
                            }),
                        )
                        .map_err(|e| e.to_string())?;
                }
            }
        }
        for (ri, label) in r.ref_labels.iter().enumerate() {
            let s = chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(|e| e.to_string())?
                .label(label.as_str());
            if ri == 0 {
                s.legend(|(x, y)| Cross::new((x + 10, y), 5, BLACK.stroke_width(1)));
            } else {
                s.legend(|(x, y)| TriangleMarker::new((x + 10, y), 4, BLACK.stroke_width(1)));
            }
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(buf)
}
