//! The per-run values of `ballast simulate`: every statistic's value in every run
//! (`per_run`), every run at every observation point (`trajectory`, with the running maximum
//! of the gap), and the per-run vectors of the final loads and probes (`per_run_vectors`).
//! They come from the pipeline's rows ([`ballast_runner::Row::values`]), so `--json`, the
//! Python module and the browser read the same numbers.

use std::collections::BTreeMap;

use ballast_runner::{Row, Statistic};
use serde::Serialize;

use super::TrajectoryPoint;

/// Every run at every observation point: `columns[name][j][r]` is run r's value at
/// `balls_per_bin[j]`.
#[derive(Debug, Default, Serialize)]
pub struct RunTrajectories {
    /// The observation points, balls placed / n.
    pub balls_per_bin: Vec<f64>,
    /// Per column (`gap`, `max_load`, `min_load`, `running_max_gap`, tracked potentials as
    /// `potential:<spec>`), per point, the runs' values.
    pub columns: BTreeMap<String, Vec<Vec<f64>>>,
}

/// A statistic with several values per run (one per load offset, rank or probe count):
/// `values[j][r]` is run r's value at `x[j]`.
#[derive(Debug, Default, Serialize)]
pub struct PerRunVector {
    /// The offsets (`load_distribution`: load − W/n), ranks (`top_loads`: 1 = largest) or
    /// probe counts (`probes_distribution`).
    pub x: Vec<f64>,
    /// Per x, the runs' values.
    pub values: Vec<Vec<f64>>,
}

/// The per-run values of one report.
#[derive(Debug, Default)]
pub struct PerRun {
    /// Each scalar statistic's value in every run, in run order.
    pub scalars: BTreeMap<String, Vec<f64>>,
    /// Every run at every observation point.
    pub trajectory: RunTrajectories,
    /// The vector statistics per run.
    pub vectors: BTreeMap<String, PerRunVector>,
}

/// Where a row of `series` (the process) goes.
enum Column {
    /// A value per run (a scalar statistic, a potential's final value).
    Scalar(String),
    /// A value per run at an observation point.
    Trajectory(String),
    /// A value per run at one x of a vector statistic.
    Vector(&'static str),
}

/// The column of a row, by the statistic's name (the trajectories by the statistic they
/// follow, a potential as `potential:<spec>`); `None` for rows without per-run values and
/// for `sorted_loads` (its per-run vectors are the per-run `load_distribution` sorted).
fn column_of(row: &Row, series: &str) -> Option<Column> {
    if row.values.is_empty() {
        return None;
    }
    if row.series != series {
        let spec = row.series.strip_prefix(series)?.strip_prefix(" [")?.strip_suffix(']')?;
        let name = format!("potential:{spec}");
        return Some(if row.statistic.at_observations() {
            Column::Trajectory(name)
        } else {
            Column::Scalar(name)
        });
    }
    Some(match row.statistic {
        Statistic::GapTrajectory => Column::Trajectory("gap".to_owned()),
        Statistic::MaxTrajectory => Column::Trajectory("max_load".to_owned()),
        Statistic::MinTrajectory => Column::Trajectory("min_load".to_owned()),
        Statistic::SortedLoads => return None,
        s @ (Statistic::ProbesDistribution | Statistic::LoadDistribution | Statistic::TopLoads) => {
            Column::Vector(s.name())
        }
        s => Column::Scalar(s.name().to_owned()),
    })
}

/// The per-run values in `rows` of the series `series`. A scalar statistic the process does
/// not define (NaN in every run) is left out; with a gap trajectory, its running maximum is
/// added as the column `running_max_gap`.
pub fn collect(rows: &[Row], series: &str) -> PerRun {
    let mut out = PerRun::default();
    for row in rows {
        match column_of(row, series) {
            None => {}
            Some(Column::Scalar(name)) if row.values.iter().any(|v| v.is_finite()) => {
                out.scalars.insert(name, row.values.clone());
            }
            Some(Column::Scalar(_)) => {}
            Some(Column::Trajectory(name)) => {
                let t = &mut out.trajectory;
                if !t.balls_per_bin.contains(&row.x) {
                    t.balls_per_bin.push(row.x);
                }
                t.columns.entry(name).or_default().push(row.values.clone());
            }
            Some(Column::Vector(name)) => {
                let v = out.vectors.entry(name.to_owned()).or_default();
                v.x.push(row.x);
                v.values.push(row.values.clone());
            }
        }
    }
    if let Some(gap) = out.trajectory.columns.get("gap") {
        let running = running_max_columns(gap);
        out.trajectory.columns.insert("running_max_gap".to_owned(), running);
    }
    out
}

/// Per point, the runs' running maximum of `gap` (per point, the runs' values).
fn running_max_columns(gap: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let runs = gap.first().map_or(0, Vec::len);
    let per_run: Vec<Vec<f64>> = (0..runs)
        .map(|r| ballast_runner::running_max(&gap.iter().map(|p| p[r]).collect::<Vec<f64>>()))
        .collect();
    (0..gap.len()).map(|j| per_run.iter().map(|v| v[j]).collect()).collect()
}

/// The mean curve of a trajectory column: per point, mean and standard error over runs.
pub fn mean_curve(xs: &[f64], column: &[Vec<f64>]) -> Vec<TrajectoryPoint> {
    xs.iter()
        .zip(column)
        .map(|(&x, values)| {
            let s = ballast_runner::stats::summarize(values, ballast_runner::stats::Rounding::Ceil);
            TrajectoryPoint { balls_per_bin: x, mean: s.mean, stderr: s.stderr }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The running maximum is taken along each run, not across runs.
    #[test]
    fn running_max_follows_each_run() {
        // Points × runs: run 0 goes 3, 1, 4; run 1 goes 0, 5, 2.
        let gap = vec![vec![3.0, 0.0], vec![1.0, 5.0], vec![4.0, 2.0]];
        let got = running_max_columns(&gap);
        assert_eq!(got, vec![vec![3.0, 0.0], vec![3.0, 5.0], vec![4.0, 5.0]]);
    }
}
