//! `ballast plot`: re-draws the figure of one or several results from the outputs their runs
//! wrote, so two runs can be compared without plotting code.
//!
//! Each input is a result's CSV, JSON or SVG (`results/<paper>/<item>.*`); the figure is read
//! from the JSON beside it (`ballast_runner::read_figure`: exact values, and the frame from
//! the config the JSON names). One input with no option gives the SVG its run wrote, byte for
//! byte. Several inputs are overlaid, each line labelled by its input (`--label`); `--series`
//! keeps some series; `--log-x`, `--linear-x` and `--log-y` choose the scales.
//!
//! The SVG is written atomically (a temporary beside it, then a rename), and never over a
//! file of the results it reads: `-o` naming an input or any of its result's files (its
//! `.csv`, `.json`, `.svg` or `.md`, under any name of the same file) is refused with exit 2
//! before anything is read or written.

use std::path::PathBuf;

use anyhow::Context as _;
use ballast_runner::figure::Figure;
use clap::Args;

use crate::error::BadInput;

/// Arguments of `ballast plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Result files (`<item>.csv`, `.json` or `.svg`; the JSON beside each is read).
    #[arg(required = true, value_name = "RESULT")]
    pub inputs: Vec<PathBuf>,
    /// Where to write the SVG.
    #[arg(long, short = 'o', value_name = "FILE", default_value = "plot.svg")]
    pub out: PathBuf,
    /// Label of each input's lines in an overlay (one per input; default: the input's path
    /// without its extension).
    #[arg(long, value_name = "TEXT")]
    pub label: Vec<String>,
    /// Keep only these series (repeatable; the names of the result's `series` column).
    #[arg(long, value_name = "NAME")]
    pub series: Vec<String>,
    /// Logarithmic x axis (default: as the item's config says).
    #[arg(long, conflicts_with = "linear_x")]
    pub log_x: bool,
    /// Linear x axis.
    #[arg(long)]
    pub linear_x: bool,
    /// Logarithmic y axis (values that are not positive are left out).
    #[arg(long)]
    pub log_y: bool,
    /// Caption above the chart (default: the first input's item and title).
    #[arg(long)]
    pub title: Option<String>,
    /// x-axis label (default: the config's).
    #[arg(long)]
    pub x_label: Option<String>,
    /// y-axis label (default: the config's).
    #[arg(long)]
    pub y_label: Option<String>,
}

/// The figure the arguments ask for.
pub fn figure(args: &PlotArgs) -> anyhow::Result<Figure> {
    if !args.label.is_empty() && args.label.len() != args.inputs.len() {
        return Err(BadInput::new(format!(
            "--label: {} labels for {} inputs; give one per input or none",
            args.label.len(),
            args.inputs.len()
        ))
        .into());
    }
    let mut figures = Vec::new();
    for path in &args.inputs {
        let (mut fig, plain_frame) = ballast_runner::read_figure(path).map_err(|e| match e {
            ballast_runner::Error::Io { .. } | ballast_runner::Error::Output { .. } => {
                anyhow::Error::new(BadInput::new(e.to_string()))
            }
            e => anyhow::Error::new(e),
        })?;
        if let Some(why) = plain_frame {
            tracing::warn!(
                "{}: plain axis labels and a linear x axis, as {why} (--x-label, --y-label and \
                 --log-x set them)",
                path.display()
            );
        }
        fig.keep_series(&args.series)
            .map_err(|e| BadInput::new(format!("--series: {}: {e}", path.display())))?;
        figures.push(fig);
    }
    let labels: Vec<String> = if args.label.is_empty() {
        args.inputs.iter().map(|p| p.with_extension("").display().to_string()).collect()
    } else {
        args.label.clone()
    };
    let mut fig = Figure::overlay(figures, &labels).context("no input")?;
    if args.log_x {
        fig.frame.x_log = true;
    }
    if args.linear_x {
        fig.frame.x_log = false;
    }
    if args.log_y {
        fig.frame.y_log = true;
    }
    if let Some(t) = &args.title {
        fig.caption = t.clone();
    }
    if let Some(l) = &args.x_label {
        fig.frame.x_label = l.clone();
    }
    if let Some(l) = &args.y_label {
        fig.frame.y_label = l.clone();
    }
    Ok(fig)
}

/// Refuses an `-o` that names an input or a file of an input's result.
fn check_out(args: &PlotArgs) -> Result<(), BadInput> {
    let mut inputs: Vec<(String, PathBuf)> = Vec::new();
    for p in &args.inputs {
        inputs.push(("RESULT".into(), p.clone()));
        for ext in ["csv", "json", "svg", "md"] {
            let role = format!("the result of `{}`", p.display());
            inputs.push((role, p.with_extension(ext)));
        }
    }
    let named: Vec<(&str, &std::path::Path)> =
        inputs.iter().map(|(r, p)| (r.as_str(), p.as_path())).collect();
    crate::paths::distinct(&named, &[("-o", &args.out)])
}

/// Entry point of `ballast plot`: writes the SVG and prints its path.
pub fn main(args: &PlotArgs) -> anyhow::Result<()> {
    check_out(args)?;
    let fig = figure(args)?;
    let svg = ballast_runner::render_svg(&fig).map_err(anyhow::Error::msg)?;
    if let Some(dir) = args.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    ballast_runner::files::write_atomically(&args.out, svg.as_bytes())
        .with_context(|| format!("writing {}", args.out.display()))?;
    crate::stdout::println(&args.out.display().to_string())
}
