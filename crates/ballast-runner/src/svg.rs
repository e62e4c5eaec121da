//! The SVG figure of an item (plotters, SVG backend only): one line per series (and per value
//! of the other grid variables) with its points, the reference points overlaid as distinct
//! markers, axis labels and a legend. Below it, when the first reference has z values, a
//! panel of those z values per point with the ±3 band, so a disagreement too small to see
//! on the values' scale still shows. An overlay of several inputs ([`Figure::overlay`])
//! draws each input in a dash pattern of its own and each series in one color across the
//! inputs, with a z panel per input. A legend of more than [`LEGEND_INSIDE_MAX`] entries goes
//! to a column right of the charts instead of covering the data; lines 11–20 are dashed,
//! 21–30 dotted and 31–40 long-dashed, so up to 40 lines all look different.

use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

use crate::figure::{Figure, FigureLine as Line, Z_CLAMP};
use crate::numbers::num;
use crate::tolerance::Z_OUTLIER;

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

/// Height of the main chart and of the z panel, in pixels.
const MAIN_HEIGHT: u32 = 640;
const Z_HEIGHT: u32 = 240;
/// Width of the charts, and of the legend column when the legend is outside them.
const CHART_WIDTH: u32 = 960;
const LEGEND_WIDTH: u32 = 340;
/// Legends with more entries than this are drawn right of the charts.
const LEGEND_INSIDE_MAX: usize = 8;

/// Dash patterns (dash, gap in pixels) of the lines after the first ten, ten lines each.
const DASHES: [(u32, u32); 3] = [(6, 4), (2, 3), (14, 4)];

/// How line `i` is drawn: its color, and its dash pattern (`None`: solid; the first ten).
fn line_style(i: usize) -> (RGBColor, Option<(u32, u32)>) {
    let cycle = i / COLORS.len();
    let dash = cycle.checked_sub(1).map(|k| DASHES[k % DASHES.len()]);
    (COLORS[i % COLORS.len()], dash)
}

/// A line's color and dash pattern (`None`: solid).
type Style = (RGBColor, Option<(u32, u32)>);

/// How each line of `r` is drawn: by its index ([`line_style`]) for one input; in an
/// overlay, a color per series (the same in every input) and a dash pattern per input (the
/// first solid, then dashed, dotted, long-dashed).
fn styles(r: &Figure, lines: &[Line]) -> Vec<Style> {
    if r.inputs.is_empty() {
        return (0..lines.len()).map(line_style).collect();
    }
    let mut series: Vec<&str> = Vec::new();
    lines
        .iter()
        .map(|l| {
            let base = r.base_label(l);
            let rank = series.iter().position(|s| *s == base).unwrap_or_else(|| {
                series.push(base);
                series.len() - 1
            });
            let dash = l.input.checked_sub(1).map(|k| DASHES[k % DASHES.len()]);
            (COLORS[rank % COLORS.len()], dash)
        })
        .collect()
}

/// The z panels: one for all lines of a single figure, one per input (with z values) in an
/// overlay (`Some(input)`).
fn z_panels(r: &Figure, lines: &[Line]) -> Vec<Option<usize>> {
    if r.inputs.is_empty() {
        return if lines.iter().any(|l| !l.zs.is_empty()) { vec![None] } else { Vec::new() };
    }
    (0..r.inputs.len())
        .filter(|&k| lines.iter().any(|l| l.input == k && !l.zs.is_empty()))
        .map(Some)
        .collect()
}

/// The sample drawn beside a legend entry.
#[derive(Clone, Copy)]
enum Glyph {
    /// One of our lines (color, dash pattern).
    Line(RGBColor, Option<(u32, u32)>),
    /// The first reference's points.
    Cross,
    /// Further references' points.
    Triangle,
    /// Our minimum.
    Circle,
    /// The first reference's minimum.
    Square,
}

impl Glyph {
    /// The sample as an element whose left end is at `(x, y)` (20 pixels wide), for either
    /// legend placement.
    fn element<DB: DrawingBackend>(
        self,
        (x, y): (i32, i32),
    ) -> DynElement<'static, DB, (i32, i32)> {
        let ends = vec![(x, y), (x + 20, y)];
        match self {
            Glyph::Line(color, None) => PathElement::new(ends, color.stroke_width(2)).into_dyn(),
            Glyph::Line(color, Some((dash, gap))) => {
                plotters::element::DashedPathElement::new(ends, dash, gap, color.stroke_width(2))
                    .into_dyn()
            }
            Glyph::Cross => Cross::new((x + 10, y), 5, BLACK.stroke_width(1)).into_dyn(),
            Glyph::Triangle => {
                TriangleMarker::new((x + 10, y), 4, BLACK.stroke_width(1)).into_dyn()
            }
            Glyph::Circle => Circle::new((x + 10, y), 6, BLACK.stroke_width(2)).into_dyn(),
            Glyph::Square => {
                Rectangle::new([(x + 4, y - 6), (x + 16, y + 6)], BLACK.stroke_width(2)).into_dyn()
            }
        }
    }
}

/// The legend: our lines, the references, the minima markers.
fn legend(r: &Figure, lines: &[Line], styles: &[Style]) -> Vec<(String, Glyph)> {
    let mut out: Vec<(String, Glyph)> = lines
        .iter()
        .zip(styles)
        .map(|(l, &(color, dash))| (l.label.clone(), Glyph::Line(color, dash)))
        .collect();
    for (ri, label) in r.ref_labels.iter().enumerate() {
        out.push((label.clone(), if ri == 0 { Glyph::Cross } else { Glyph::Triangle }));
    }
    if r.frame.mark_minima {
        out.push(("minimum (ours)".into(), Glyph::Circle));
        if let Some(l) = r.ref_labels.first() {
            out.push((format!("minimum ({l})"), Glyph::Square));
        }
    }
    out
}

/// Draws the legend as a column of entries on `area` (right of the charts).
fn draw_legend(area: &Area<'_>, entries: &[(String, Glyph)]) -> Result<(), String> {
    let err = |e: DrawingAreaErrorKind<std::io::Error>| e.to_string();
    let font = ("sans-serif", 13).into_font();
    let (x, top, row) = (8, 56, 20);
    for (k, (label, glyph)) in entries.iter().enumerate() {
        let y = top + row * k as i32;
        area.draw(&glyph.element((x, y))).map_err(err)?;
        area.draw(&Text::new(label.as_str(), (x + 30, y - 7), font.clone())).map_err(err)?;
    }
    Ok(())
}

/// The range of a logarithmic x axis.
const LOG_MIN: f64 = 1e-300;
const LOG_MAX: f64 = 1e300;
const LOG_SPAN: f64 = 1e100;

/// The x and y ranges of the main chart for `points` (finite ones; the rest are ignored):
/// the y axis starts at 0 (or below it for negative values) and ends 8% above the largest
/// value; both ranges are finite, non-empty and of finite width whatever the input, so the
/// tick code of plotters always terminates.
fn axes(points: impl Iterator<Item = (f64, f64)>, x_log: bool) -> ((f64, f64), (f64, f64)) {
    let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    let mut y0 = 0.0f64;
    for (x, y) in points {
        if (x_log && x <= 0.0) || !x.is_finite() || !y.is_finite() {
            continue;
        }
        x0 = x0.min(x);
        x1 = x1.max(x);
        y1 = y1.max(y);
        y0 = y0.min(y);
    }
    if !x0.is_finite() {
        (x0, x1) = (1.0, 10.0);
    }
    if x1 <= x0 {
        (x0, x1) = if x_log { (x0 / 2.0, x1 * 2.0) } else { (x0 - 1.0, x1 + 1.0) };
    }
    let y1 = if y1 > 0.0 {
        y1 * 1.08
    } else if y0 < 0.0 {
        0.0
    } else {
        1.0
    };
    let y0 = y0 * 1.08;
    // Values near the largest double: bounds and widths stay finite.
    let fit = |(a, b): (f64, f64)| {
        let (a, b) = (a.clamp(-f64::MAX, f64::MAX), b.clamp(-f64::MAX, f64::MAX));
        if (b - a).is_finite() {
            (a, b)
        } else {
            (a / 4.0, b / 4.0)
        }
    };
    let (x0, x1) = if x_log {
        // Plotters' logarithmic ticks loop for ever when `x1 / x0` overflows: at most
        // LOG_SPAN decades are shown (the largest ones).
        let x1 = x1.clamp(LOG_MIN * 2.0, LOG_MAX);
        (x0.clamp(LOG_MIN, x1 / 2.0).max(x1 / LOG_SPAN), x1)
    } else {
        fit((x0, x1))
    };
    let (x0, x1) = if x1 <= x0 { (x0, x0 * 2.0 + 1.0) } else { (x0, x1) };
    ((x0, x1), fit((y0, y1)))
}

/// The point of `pts` with the smallest y (the first of equal ones).
fn argmin(pts: &[(f64, f64)]) -> Option<(f64, f64)> {
    pts.iter().copied().fold(None, |m, p| match m {
        Some(q) if q.1 <= p.1 => Some(q),
        _ => Some(p),
    })
}

/// The digits of `k` as superscripts (`-3` → `⁻³`).
fn superscript(k: i32) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut out = String::new();
    if k < 0 {
        out.push('⁻');
    }
    for c in k.unsigned_abs().to_string().bytes() {
        out.push(DIGITS[usize::from(c - b'0')]);
    }
    out
}

/// A tick label. On a log axis a power of ten reads `10³` and an integer multiple of one
/// `2·10³`; elsewhere it is written as in the tables ([`num`]: `50`, not `50.0`; at most 9
/// decimals).
pub(crate) fn tick_label(v: f64, log: bool) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if log && v > 0.0 {
        let k = v.log10().floor();
        let mantissa = v / 10f64.powf(k);
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        // The mantissa may land just below the next integer (9.999999999 for 10^k).
        let (m, k) = if near(mantissa, 10.0) { (1.0, k + 1.0) } else { (mantissa, k) };
        if near(m, m.round()) && (k.abs() >= 3.0 || m.round() == 1.0) {
            let p = superscript(k as i32);
            return if m.round() == 1.0 {
                format!("10{p}")
            } else {
                format!("{}·10{p}", m.round())
            };
        }
    }
    num(v)
}

/// The range of the finite values of `pts` that a log axis can show (x > 0 when `log`).
fn finite<'a>(
    pts: impl Iterator<Item = &'a (f64, f64)>,
    x_log: bool,
    y_log: bool,
) -> impl Iterator<Item = (f64, f64)> {
    pts.copied().filter(move |&(x, y)| {
        x.is_finite() && y.is_finite() && (!x_log || x > 0.0) && (!y_log || y > 0.0)
    })
}

/// The finite points of `pts` a logarithmic axis cannot show: how many, how many of them
/// have x <= 0 on a log x axis, how many y <= 0 on a log y axis.
fn not_positive<'a>(
    pts: impl Iterator<Item = &'a (f64, f64)>,
    x_log: bool,
    y_log: bool,
) -> [usize; 3] {
    let finite = pts.filter(|(x, y)| x.is_finite() && y.is_finite());
    finite.fold([0; 3], |[all, bx, by], &(x, y)| {
        let (ox, oy) = (x_log && x <= 0.0, y_log && y <= 0.0);
        [all + usize::from(ox || oy), bx + usize::from(ox), by + usize::from(oy)]
    })
}

/// Warns, per line, of the points a logarithmic axis leaves out of the figure (`ballast plot
/// --log-x`/`--log-y`, `x.log`, `y_log`): how many, with x <= 0 and with y <= 0.
fn warn_log_dropped(r: &Figure) {
    let (x_log, y_log) = (r.frame.x_log, r.frame.y_log);
    if !x_log && !y_log {
        return;
    }
    for l in &r.lines {
        let [all, bx, by] =
            not_positive(l.ours.iter().chain(l.refs.iter().flatten()), x_log, y_log);
        let [z, _, _] = not_positive(l.zs.iter(), x_log, false);
        let mut parts = Vec::new();
        if bx > 0 {
            parts.push(format!("{bx} with x <= 0 on the logarithmic x axis"));
        }
        if by > 0 {
            parts.push(format!("{by} with y <= 0 on the logarithmic y axis"));
        }
        if z > 0 {
            parts.push(format!("{z} z value(s) with x <= 0"));
        }
        if !parts.is_empty() {
            tracing::warn!(
                "{}: figure: {} point(s) of `{}` left out ({})",
                r.caption.split(':').next().unwrap_or_default(),
                all + z,
                l.label,
                parts.join(", ")
            );
        }
    }
}

/// Renders the figure to an SVG string. Points that cannot be drawn (non-finite, or not
/// positive on a log axis) are left out.
pub fn render_svg(r: &Figure) -> Result<String, String> {
    let (x_log, y_log) = (r.frame.x_log, r.frame.y_log);
    for l in &r.lines {
        let pts = l.ours.iter().chain(l.refs.iter().flatten());
        let bad = pts.filter(|(x, y)| !x.is_finite() || !y.is_finite()).count();
        if bad > 0 {
            tracing::warn!(
                "{}: figure: {bad} value(s) of `{}` are not finite: left out of the figure",
                r.caption.split(':').next().unwrap_or_default(),
                l.label
            );
        }
    }
    warn_log_dropped(r);
    let lines: Vec<Line> = r
        .lines
        .iter()
        .map(|l| Line {
            ours: finite(l.ours.iter(), x_log, y_log).collect(),
            refs: l.refs.iter().map(|p| finite(p.iter(), x_log, y_log).collect()).collect(),
            zs: finite(l.zs.iter(), x_log, false).collect(),
            ..l.clone()
        })
        .collect();
    let all = lines.iter().flat_map(|l| l.ours.iter().chain(l.refs.iter().flatten()));
    // The y axis starts at 0, or below it when a value is negative (drifts, differences); on a
    // log axis at the smallest value. Both ranges are finite whatever the values (`axes`).
    let all: Vec<(f64, f64)> = all.copied().collect();
    let ((x0, x1), (y0, y1)) = axes(all.iter().copied(), x_log);
    let ys = if y_log {
        let y_min = all.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        let lo = if y_min.is_finite() { y_min.max(LOG_MIN) } else { 1.0 };
        let hi = if y1 > lo { y1.min(LOG_MAX) } else { lo * 10.0 };
        let lo = lo.max(hi / LOG_SPAN);
        let f = (hi / lo).powf(0.03).max(1.05);
        YAxis::Log(lo / f..hi * f)
    } else {
        YAxis::Linear(y0..y1)
    };
    let panels = z_panels(r, &lines);
    let height = MAIN_HEIGHT + Z_HEIGHT * panels.len() as u32;
    let styles = styles(r, &lines);
    let entries = legend(r, &lines, &styles);
    let inside = (entries.len() <= LEGEND_INSIDE_MAX).then_some(entries.as_slice());
    let width = CHART_WIDTH + if inside.is_some() { 0 } else { LEGEND_WIDTH };
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        let (charts, side) = root.split_horizontally(CHART_WIDTH);
        let (main, lower) = charts.split_vertically(MAIN_HEIGHT);
        let chart = Chart { fig: r, lines: &lines, styles: &styles, inside };
        let lower =
            if panels.is_empty() { Vec::new() } else { lower.split_evenly((panels.len(), 1)) };
        if x_log {
            let f = (x1 / x0).powf(0.03);
            let f = if f.is_finite() && (x1 * f).is_finite() && x0 / f > 0.0 { f } else { 1.0 };
            let xr = || ((x0 / f)..(x1 * f)).log_scale();
            match ys {
                YAxis::Linear(ys) => chart.draw(&main, xr(), ys)?,
                YAxis::Log(ys) => chart.draw(&main, xr(), ys.log_scale())?,
            }
            for (area, &only) in lower.iter().zip(&panels) {
                chart.draw_z(area, xr(), only)?;
            }
        } else {
            let pad = (x1 - x0) * 0.03;
            let pad = if (x1 + pad).is_finite() && (x0 - pad).is_finite() { pad } else { 0.0 };
            let xr = || (x0 - pad)..(x1 + pad);
            match ys {
                YAxis::Linear(ys) => chart.draw(&main, xr(), ys)?,
                YAxis::Log(ys) => chart.draw(&main, xr(), ys.log_scale())?,
            }
            for (area, &only) in lower.iter().zip(&panels) {
                chart.draw_z(area, xr(), only)?;
            }
        }
        if inside.is_none() {
            draw_legend(&side, &entries)?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(buf)
}

/// The y range of the main chart.
enum YAxis {
    Linear(std::ops::Range<f64>),
    Log(std::ops::Range<f64>),
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// What the panels draw: the figure, its drawable lines and their styles, the legend inside
/// the chart.
struct Chart<'a> {
    fig: &'a Figure,
    lines: &'a [Line],
    styles: &'a [Style],
    inside: Option<&'a [(String, Glyph)]>,
}

impl Chart<'_> {
    /// A z panel: z against the first reference per point and line (of input `only`, or
    /// all lines), clamped to ±[`Z_CLAMP`], with the ±[`Z_OUTLIER`] band of the verdict.
    fn draw_z<XR>(&self, area: &Area<'_>, xr: XR, only: Option<usize>) -> Result<(), String>
    where
        XR: AsRangedCoord<Value = f64>,
        XR::CoordDescType: ValueFormatter<f64>,
    {
        let err = |e: DrawingAreaErrorKind<std::io::Error>| e.to_string();
        let reference = self.fig.ref_labels.first().map_or("reference", String::as_str);
        let label = match only.and_then(|k| self.fig.inputs.get(k)) {
            Some(input) => format!("{input}: {reference}"),
            None => reference.to_owned(),
        };
        let shown = |l: &&Line| only.is_none_or(|k| l.input == k);
        let x_log = self.fig.frame.x_log;
        let mut chart = ChartBuilder::on(area)
            .margin(16)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(xr, -Z_CLAMP - 0.5..Z_CLAMP + 0.5)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .y_desc(format!("z vs {label} (clamped to ±{Z_CLAMP})"))
            .y_labels(5)
            .x_label_formatter(&|v| tick_label(*v, x_log))
            .y_label_formatter(&|v| tick_label(*v, false))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(err)?;
        let (xa, xb) = {
            let mut pts = self.lines.iter().filter(shown).flat_map(|l| l.zs.iter().map(|p| p.0));
            let first = pts.next().unwrap_or(0.0);
            pts.fold((first, first), |(a, b), x| (a.min(x), b.max(x)))
        };
        let band = RED.mix(0.6).stroke_width(1);
        for (y, style) in [(0.0, BLACK.stroke_width(1)), (Z_OUTLIER, band), (-Z_OUTLIER, band)] {
            chart.draw_series(LineSeries::new([(xa, y), (xb, y)], style)).map_err(err)?;
        }
        for (line, &(color, dash)) in self.lines.iter().zip(self.styles) {
            if !shown(&line) {
                continue;
            }
            let style = color.mix(0.5).stroke_width(1);
            let pts = line.zs.iter().copied();
            match dash {
                Some((d, g)) => chart.draw_series(DashedLineSeries::new(pts, d, g, style)),
                None => chart.draw_series(LineSeries::new(pts, style)),
            }
            .map_err(err)?;
            chart
                .draw_series(line.zs.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(err)?;
        }
        Ok(())
    }

    /// Draws the main chart on `root` with the coordinates `xr` and `yr` (linear or
    /// logarithmic), with the legend `inside` (if any) in its upper left corner.
    fn draw<XR, YR>(&self, root: &Area<'_>, xr: XR, yr: YR) -> Result<(), String>
    where
        XR: AsRangedCoord<Value = f64>,
        XR::CoordDescType: ValueFormatter<f64>,
        YR: AsRangedCoord<Value = f64>,
        YR::CoordDescType: ValueFormatter<f64>,
    {
        let r = self.fig;
        let mut chart = ChartBuilder::on(root)
            .caption(r.caption.as_str(), ("sans-serif", 18))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(64)
            .build_cartesian_2d(xr, yr)
            .map_err(|e| e.to_string())?;
        chart
            .configure_mesh()
            .x_desc(r.frame.x_label.as_str())
            .y_desc(r.frame.y_label.as_str())
            .x_label_formatter(&|v| tick_label(*v, r.frame.x_log))
            .y_label_formatter(&|v| tick_label(*v, r.frame.y_log))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|e| e.to_string())?;
        let err = |e: DrawingAreaErrorKind<std::io::Error>| e.to_string();
        for (line, &(color, dash)) in self.lines.iter().zip(self.styles) {
            let pts = line.ours.iter().copied();
            match dash {
                Some((d, g)) => {
                    chart.draw_series(DashedLineSeries::new(pts, d, g, color.stroke_width(2)))
                }
                None => chart.draw_series(LineSeries::new(pts, color.stroke_width(2))),
            }
            .map_err(err)?;
            chart
                .draw_series(line.ours.iter().map(|&p| Circle::new(p, 3, color.filled())))
                .map_err(err)?;
            for (ri, pts) in line.refs.iter().enumerate() {
                if ri == 0 {
                    chart
                        .draw_series(pts.iter().map(|&p| Cross::new(p, 5, BLACK.stroke_width(1))))
                        .map_err(err)?;
                } else {
                    chart
                        .draw_series(
                            pts.iter().map(|&p| {
                                TriangleMarker::new(p, 4, color.mix(0.6).stroke_width(1))
                            }),
                        )
                        .map_err(err)?;
                }
            }
            if r.frame.mark_minima {
                if let Some(p) = argmin(&line.ours) {
                    chart
                        .draw_series(std::iter::once(Circle::new(p, 9, color.stroke_width(2))))
                        .map_err(err)?;
                }
                if let Some(p) = line.refs.first().and_then(|pts| argmin(pts)) {
                    let sq = EmptyElement::at(p)
                        + Rectangle::new([(-8, -8), (8, 8)], color.mix(0.8).stroke_width(2));
                    chart.draw_series(std::iter::once(sq)).map_err(err)?;
                }
            }
        }
        let Some(entries) = self.inside else {
            return Ok(());
        };
        // Plotters lists the labels of series in the order they were drawn: empty series
        // carry the entries, so the box shows exactly the legend of the outside column.
        for (label, glyph) in entries {
            let glyph = *glyph;
            chart
                .draw_series(std::iter::empty::<Circle<(f64, f64), i32>>())
                .map_err(err)?
                .label(label.as_str())
                .legend(move |p| glyph.element(p));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_are_finite_for_any_input() {
        let inputs: Vec<Vec<(f64, f64)>> = vec![
            vec![(1.0, f64::INFINITY), (2.0, 3.0)],
            vec![(1.0, f64::NEG_INFINITY), (f64::NAN, 1.0)],
            vec![(1.0, f64::MAX), (2.0, -f64::MAX)],
            vec![(-f64::MAX, 1.0), (f64::MAX, 2.0)],
            vec![(1e-320, 1.0), (1e308, 2.0)],
            vec![(0.0, 1e307), (1.0, 1.6e308)],
            vec![],
        ];
        for pts in inputs {
            for x_log in [false, true] {
                let ((x0, x1), (y0, y1)) = axes(pts.iter().copied(), x_log);
                for v in [x0, x1, y0, y1, x1 - x0, y1 - y0] {
                    assert!(v.is_finite(), "{pts:?} log {x_log}: {x0} {x1} {y0} {y1}");
                }
                assert!(x1 > x0 && y1 > y0, "{pts:?}: {x0} {x1} {y0} {y1}");
                // Plotters draws the mesh of these ranges (it looped on infinite ones).
                let mut buf = String::new();
                let root = SVGBackend::with_string(&mut buf, (200, 100)).into_drawing_area();
                if x_log {
                    let mut c = ChartBuilder::on(&root)
                        .x_label_area_size(20)
                        .y_label_area_size(20)
                        .build_cartesian_2d((x0..x1).log_scale(), y0..y1)
                        .unwrap();
                    c.configure_mesh().draw().unwrap();
                } else {
                    let mut c = ChartBuilder::on(&root)
                        .x_label_area_size(20)
                        .y_label_area_size(20)
                        .build_cartesian_2d(x0..x1, y0..y1)
                        .unwrap();
                    c.configure_mesh().draw().unwrap();
                }
            }
        }
    }

    #[test]
    fn forty_lines_have_forty_different_styles() {
        let styles: Vec<_> = (0..40).map(line_style).collect();
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[i + 1..] {
                assert!(a != b, "line {i} has the style of a later line");
            }
        }
        assert_eq!(line_style(0), (COLORS[0], None));
        assert_eq!(line_style(10), (COLORS[0], Some(DASHES[0])));
    }

    #[test]
    fn ticks_read_as_powers_on_log_axes_and_integers_without_fraction() {
        assert_eq!(tick_label(1000.0, true), "10³");
        assert_eq!(tick_label(1e8, true), "10⁸");
        assert_eq!(tick_label(1.0, true), "10⁰");
        assert_eq!(tick_label(0.001, true), "10⁻³");
        assert_eq!(tick_label(2e4, true), "2·10⁴");
        assert_eq!(tick_label(20.0, true), "20");
        assert_eq!(tick_label(0.5, true), "0.5");
        assert_eq!(tick_label(50.0, false), "50");
        assert_eq!(tick_label(-10.0, false), "-10");
        assert_eq!(tick_label(0.0, false), "0");
        assert_eq!(tick_label(2.5, false), "2.5");
        assert_eq!(tick_label(0.1 + 0.2, false), "0.3");
        assert_eq!(tick_label(f64::INFINITY, false), "");
    }

    #[test]
    fn non_finite_points_are_left_out_and_rendering_ends() {
        use crate::figure::{FigureFrame, FigureLine};
        let frame = FigureFrame {
            x_label: "x".into(),
            y_label: "y".into(),
            x_log: true,
            y_log: false,
            mark_minima: true,
        };
        let line = FigureLine {
            label: "A".into(),
            series: "A".into(),
            ours: vec![(0.0, 1.0), (10.0, f64::INFINITY), (100.0, f64::NAN), (1000.0, 2.0)],
            refs: vec![vec![(10.0, f64::NEG_INFINITY)]],
            zs: vec![(10.0, f64::NAN)],
            input: 0,
        };
        for y_log in [false, true] {
            let fig = Figure {
                caption: "c".into(),
                frame: FigureFrame { y_log, ..frame.clone() },
                ref_labels: vec!["published".into()],
                lines: vec![line.clone()],
                inputs: Vec::new(),
            };
            let svg = render_svg(&fig).unwrap();
            assert!(svg.contains("10³") && !svg.contains("NaN") && !svg.contains("inf"));
        }
    }

    #[test]
    fn an_overlay_styles_each_input_and_draws_a_z_panel_per_input() {
        use crate::figure::{FigureFrame, FigureLine};
        let line = |series: &str, z: f64| FigureLine {
            label: series.into(),
            series: series.into(),
            ours: vec![(1.0, 1.0), (2.0, 2.0)],
            refs: vec![vec![(1.0, 1.1)]],
            zs: vec![(1.0, z)],
            input: 0,
        };
        let fig = |z: f64| Figure {
            caption: "c".into(),
            frame: FigureFrame {
                x_label: "x".into(),
                y_label: "y".into(),
                x_log: false,
                y_log: false,
                mark_minima: false,
            },
            ref_labels: vec!["published".into()],
            lines: vec![line("A", z), line("B", z)],
            inputs: Vec::new(),
        };
        let o = Figure::overlay(vec![fig(1.0), fig(-2.0)], &["old".into(), "new".into()]).unwrap();
        let lines = o.lines.clone();
        let st = styles(&o, &lines);
        // The same series in one color, each input in its own dash pattern.
        assert_eq!((st[0].0, st[2].0), (st[0].0, st[0].0));
        assert_ne!(st[0].0, st[1].0);
        assert_eq!((st[0].1, st[2].1), (None, Some(DASHES[0])));
        assert_eq!(z_panels(&o, &lines), vec![Some(0), Some(1)]);
        let svg = render_svg(&o).unwrap();
        assert!(svg.contains(&format!("height=\"{}\"", MAIN_HEIGHT + 2 * Z_HEIGHT)), "height");
        assert!(svg.contains("z vs old: published") && svg.contains("z vs new: published"));
        // One figure alone: one panel, styles by index, as before.
        let one = fig(1.0);
        assert_eq!(z_panels(&one, &one.lines), vec![None]);
        assert_eq!(styles(&one, &one.lines), vec![line_style(0), line_style(1)]);
    }
}
