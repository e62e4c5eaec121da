//! `cargo xtask deviation [--check]`: how fast finite n approaches the fluid limit, from the
//! committed results of `meanfield/two_choice` (nothing is simulated). Per series, k = m/n
//! and n it computes, from `results/meanfield/two_choice.csv` and the fluid-limit table
//! `reference/meanfield_two_choice.csv`:
//!
//! - `tv`: the total variation distance ½·Σ_x |simulated − fluid| over the union of both
//!   supports (a fraction the runs never saw counts as 0);
//! - `tv_noise`: ½·Σ_x se(x)·√(2/π), what `tv` would be on average if the simulated
//!   fractions were unbiased with their standard errors se(x) (so a `tv` near it says the
//!   runs cannot tell n from the limit);
//! - `max_diff`, `max_z`: the largest |simulated − fluid| over the offsets seen, and the
//!   largest |z| of a row.
//!
//! `cargo xtask reproduce meanfield/two_choice` runs it after writing the item (into the same
//! output directory). It writes `results/meanfield/deviation/two_choice.{csv,md,svg}` (figure: tv against n on
//! log axes, one line per series and k, the noise level as the reference line). `--check`
//! writes nothing and fails if a committed file differs (a test does the same).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

/// The item whose results are read.
pub(crate) const ITEM: &str = "meanfield/two_choice";
/// Its fluid-limit table under `reference/`.
const FLUID: &str = "meanfield_two_choice.csv";

/// One (series, k, n) of the table.
#[derive(Debug, Default)]
struct Line {
    tv: f64,
    tv_noise: f64,
    max_diff: f64,
    max_z: f64,
}

/// Writes (or, with `check`, compares) the deviation table, report and figure of the
/// repository at `root`.
pub(crate) fn run(root: &Path, check: bool) -> Result<()> {
    write(&root.join("results"), &root.join("reference"), check)
}

/// [`run`] for the results under `results` (also called by `reproduce` after it wrote
/// [`ITEM`] there) and the reference tables under `reference`.
pub(crate) fn write(results: &Path, reference: &Path, check: bool) -> Result<()> {
    let files = outputs(results, reference)?;
    let dir = results.join("meanfield/deviation");
    let mut stale = Vec::new();
    for (name, text) in &files {
        let path = dir.join(name);
        if check {
            if std::fs::read_to_string(&path).unwrap_or_default() != *text {
                stale.push(path.display().to_string());
            }
        } else {
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            println!("{}", path.display());
        }
    }
    anyhow::ensure!(
        stale.is_empty(),
        "deviation outputs differ from the committed results (run `cargo xtask deviation`): {}",
        stale.join(", ")
    );
    Ok(())
}

/// The three files: (name, text).
fn outputs(results: &Path, reference: &Path) -> Result<Vec<(&'static str, String)>> {
    let results = read_table(&results.join(format!("{ITEM}.csv")))?;
    let fluid = read_table(&reference.join(FLUID))?;
    let lines = deviations(&results, &fluid)?;
    Ok(vec![
        ("two_choice.csv", csv(&lines)),
        ("two_choice.md", markdown(&lines)),
        ("two_choice.svg", figure(&lines)?),
    ])
}

/// A CSV without quoted fields, as a list of maps from the header's names.
fn read_table(path: &Path) -> Result<Vec<BTreeMap<String, String>>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().context("an empty table")?.split(',').collect();
    let mut out = Vec::new();
    for (i, line) in lines.enumerate() {
        if line.contains('"') {
            bail!("{}: line {}: quoted fields are not read here", path.display(), i + 2);
        }
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != header.len() {
            bail!(
                "{}: line {}: {} fields, expected {}",
                path.display(),
                i + 2,
                fields.len(),
                header.len()
            );
        }
        out.push(header.iter().zip(fields).map(|(h, f)| (h.to_string(), f.to_string())).collect());
    }
    Ok(out)
}

/// The key of a line: (series, k, n).
type Key = (String, u64, u64);

fn num(row: &BTreeMap<String, String>, col: &str) -> Result<f64> {
    let f = row.get(col).with_context(|| format!("missing column `{col}`"))?;
    f.parse().with_context(|| format!("column `{col}`: `{f}` is not a number"))
}

/// Offsets in millionths, as the runner keys them.
fn x_key(x: f64) -> i64 {
    (x * 1e6).round() as i64
}

/// The deviations of every (series, k, n) of the results from the fluid limit.
fn deviations(
    results: &[BTreeMap<String, String>],
    fluid: &[BTreeMap<String, String>],
) -> Result<BTreeMap<Key, Line>> {
    // (series, k, n) → offset → (simulated, se), and the fluid values per (series, k, n).
    let mut sim: BTreeMap<Key, BTreeMap<i64, (f64, f64)>> = BTreeMap::new();
    for r in results.iter().filter(|r| r["statistic"] == "load_distribution") {
        let key = (r["series"].clone(), num(r, "k")? as u64, num(r, "n")? as u64);
        let cell = (num(r, "value")?, num(r, "stderr")?);
        sim.entry(key).or_default().insert(x_key(num(r, "x")?), cell);
    }
    let mut limit: BTreeMap<Key, BTreeMap<i64, f64>> = BTreeMap::new();
    for r in fluid {
        let (series, k) = r["series"].rsplit_once(" k=").context("a series `<name> k=<k>`")?;
        let key = (series.to_string(), k.parse()?, num(r, "n")? as u64);
        limit.entry(key).or_default().insert(x_key(num(r, "x")?), num(r, "value")?);
    }
    let mut out = BTreeMap::new();
    for (key, cells) in sim {
        let Some(f) = limit.get(&key) else { bail!("no fluid limit for {key:?}") };
        let mut line = Line::default();
        let xs: std::collections::BTreeSet<i64> = cells.keys().chain(f.keys()).copied().collect();
        for x in xs {
            let (ours, se) = cells.get(&x).copied().unwrap_or((0.0, 0.0));
            let diff = (ours - f.get(&x).copied().unwrap_or(0.0)).abs();
            line.tv += diff / 2.0;
            line.tv_noise += se * (2.0 / std::f64::consts::PI).sqrt() / 2.0;
            if cells.contains_key(&x) {
                line.max_diff = line.max_diff.max(diff);
                if se > 0.0 {
                    line.max_z = line.max_z.max(diff / se);
                }
            }
        }
        out.insert(key, line);
    }
    Ok(out)
}

fn csv(lines: &BTreeMap<Key, Line>) -> String {
    let mut s = String::from("series,k,n,tv,tv_noise,max_diff,max_z\n");
    for ((series, k, n), l) in lines {
        s.push_str(&format!(
            "{series},{k},{n},{:.6e},{:.6e},{:.6e},{:.2}\n",
            l.tv, l.tv_noise, l.max_diff, l.max_z
        ));
    }
    s
}

fn markdown(lines: &BTreeMap<Key, Line>) -> String {
    let mut s = format!(
        "# {ITEM}: deviation from the fluid limit against n\n\nFrom \
         [../two_choice.csv](../two_choice.csv) and `reference/{FLUID}` by `cargo xtask \
         deviation` (nothing simulated). tv = ½·Σ|simulated − fluid| over the offsets; \
         tv_noise = ½·Σ se·√(2/π), its expected value if the simulated fractions were \
         unbiased; max |z| over the offsets seen. Figure: [two_choice.svg](two_choice.svg).\n\n\
         | series | k = m/n | n | tv | tv_noise | max abs diff | max abs z |\n\
         |---|---|---|---|---|---|---|\n"
    );
    for ((series, k, n), l) in lines {
        s.push_str(&format!(
            "| {series} | {k} | {n} | {:.3e} | {:.3e} | {:.3e} | {:.1} |\n",
            l.tv, l.tv_noise, l.max_diff, l.max_z
        ));
    }
    s.push_str(
        "\nLeast-squares slopes of log tv and log tv_noise against log n (−1/2: the \
         runs' noise at a fixed number of runs; −1: a bias of order 1/n):\n\n\
         | series | k = m/n | slope of tv | slope of tv_noise |\n|---|---|---|---|\n",
    );
    // Per (series, k): ln n, ln tv and ln tv_noise, in the order of n.
    type Logs = (Vec<f64>, Vec<f64>, Vec<f64>);
    let mut by: BTreeMap<(&str, u64), Logs> = BTreeMap::new();
    for ((series, k, n), l) in lines {
        let e = by.entry((series, *k)).or_default();
        e.0.push((*n as f64).ln());
        e.1.push(l.tv.ln());
        e.2.push(l.tv_noise.ln());
    }
    for ((series, k), (xs, tv, noise)) in by {
        s.push_str(&format!(
            "| {series} | {k} | {:.2} | {:.2} |\n",
            slope(&xs, &tv),
            slope(&xs, &noise)
        ));
    }
    s
}

/// The least-squares slope of `ys` against `xs`.
fn slope(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

fn figure(lines: &BTreeMap<Key, Line>) -> Result<String> {
    use ballast_runner::figure::{Figure, FigureFrame, FigureLine};
    let mut by: BTreeMap<(String, u64), FigureLine> = BTreeMap::new();
    for ((series, k, n), l) in lines {
        let line = by.entry((series.clone(), *k)).or_insert_with(|| FigureLine {
            label: format!("{series} k={k}"),
            series: series.clone(),
            ours: Vec::new(),
            refs: vec![Vec::new()],
            zs: Vec::new(),
            input: 0,
        });
        line.ours.push((*n as f64, l.tv));
        line.refs[0].push((*n as f64, l.tv_noise));
    }
    let fig = Figure {
        caption: format!("{ITEM}: total variation distance to the fluid limit vs n"),
        frame: FigureFrame {
            x_label: "n (bins)".into(),
            y_label: "½ Σ |simulated − fluid| fraction".into(),
            x_log: true,
            y_log: true,
            mark_minima: false,
        },
        ref_labels: vec!["noise level (unbiased runs)".into()],
        lines: by.into_values().collect(),
        inputs: Vec::new(),
    };
    ballast_runner::render_svg(&fig).map_err(anyhow::Error::msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed deviation outputs are what the code computes from the committed
    /// results (skipped while the item has no committed results).
    #[test]
    fn the_committed_deviation_is_current() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repository root");
        if !root.join("results").join(format!("{ITEM}.csv")).exists() {
            return;
        }
        run(root, true).expect("current");
    }

    #[test]
    fn total_variation_counts_unseen_mass() {
        let row = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
        };
        let results = vec![row(&[
            ("series", "A"),
            ("k", "1"),
            ("n", "10"),
            ("x", "0"),
            ("statistic", "load_distribution"),
            ("value", "1"),
            ("stderr", "0"),
        ])];
        let fluid = vec![
            row(&[("series", "A k=1"), ("n", "10"), ("x", "0"), ("value", "0.75")]),
            row(&[("series", "A k=1"), ("n", "10"), ("x", "1"), ("value", "0.25")]),
        ];
        let d = deviations(&results, &fluid).expect("computes");
        let l = &d[&("A".to_string(), 1, 10)];
        assert!((l.tv - 0.25).abs() < 1e-15, "{}", l.tv);
        assert!((l.max_diff - 0.25).abs() < 1e-15);
    }

    #[test]
    fn slope_of_a_power_law() {
        let xs: Vec<f64> = [1e3f64, 1e4, 1e5].iter().map(|x| x.ln()).collect();
        let ys: Vec<f64> = [1e3f64, 1e4, 1e5].iter().map(|x| x.powf(-0.5).ln()).collect();
        assert!((slope(&xs, &ys) + 0.5).abs() < 1e-12);
    }
}
