//! The plan of an experiment: the grid expanded into points (series × grid values), each with
//! a validated [`RunSpec`], and the seed of every (point, run) unit.

mod build;

use ballast_core::rng::{derive_seed, hash_str};
use ballast_core::RunSpec;

pub(crate) use self::build::build_plan;
use crate::config::{RawConfig, Sampling, Scale};
use crate::numbers::num;
use crate::statistic::Statistic;
use crate::stats::Rounding;

/// One point of the plan: a series at one combination of grid values.
#[derive(Clone, Debug)]
pub struct PlanPoint {
    /// Index of the series in the config.
    pub series: usize,
    /// Grid variable values at this point, in grid order (sorted names).
    pub grid: Vec<(String, f64)>,
    /// The x-axis value.
    pub x: f64,
    /// Number of bins.
    pub n: u64,
    /// Batch size (`None` in the sequential setting).
    pub b: Option<u64>,
    /// Number of balls per sample: per run, or per block with `sampling = { blocks }` (the
    /// run then has `blocks · m` balls, see `spec.m`).
    pub m: u64,
    /// The run specification (validated).
    pub spec: RunSpec,
    /// The series' `theory` formula at this point (e.g. ln ln n / ln d), printed beside our
    /// values; `None` without one.
    pub theory: Option<f64>,
    /// The potentials tracked along each run (the series' `potentials`, placeholders
    /// filled), in list order.
    pub potentials: Vec<ballast_potential::PotentialSpec>,
    /// Whether the runs keep the potentials at every observation point (the series asks for
    /// `potential_trajectory`).
    pub potential_trajectory: bool,
    /// The series' `recovery_target` at this point (the gap `recovery_time` waits for);
    /// `None` without one.
    pub recovery_target: Option<f64>,
}

/// A series of the plan.
#[derive(Clone, Debug)]
pub struct PlanSeries {
    /// Display name.
    pub name: String,
    /// The statistic it reports (its figure, verdict and reference comparison).
    pub statistic: Statistic,
    /// Further statistics of the same runs (`also = [...]`): extra rows without a reference.
    pub also: Vec<Statistic>,
    /// The series name to look up in the reference CSVs (`None`: no reference). May contain
    /// `{var}` placeholders for grid variables, `{n}` and `{b}` (see [`PlanSeries::reference_at`]).
    pub reference: Option<String>,
    /// Rounding of each per-run (or per-block) value before it is summarised (`None`: none;
    /// distributions default to rounding up).
    pub round: Option<Rounding>,
    /// The loads `top_loads` reports: the series' `top_k` (default [`crate::TOP_K`]).
    pub top_k: usize,
    /// The capacity c of `balls_above` (the series' `above`; 0 where it is not asked for).
    pub above: u64,
}

impl PlanSeries {
    /// The reference series name at a point: `{name}` placeholders replaced by the grid
    /// value, `n` or `b` (integers without a decimal point).
    ///
    /// ```
    /// # use ballast_runner::{PlanSeries, Statistic};
    /// let s = PlanSeries {
    ///     name: "g-Bounded".into(),
    ///     statistic: Statistic::Distribution,
    ///     also: vec![],
    ///     reference: Some("g-Bounded n={n} g={g}".into()),
    ///     round: None,
    ///     top_k: ballast_runner::TOP_K,
    ///     above: 0,
    /// };
    /// let at = s.reference_at(&[("g".into(), 4.0)], 10_000, None);
    /// assert_eq!(at.as_deref(), Some("g-Bounded n=10000 g=4"));
    /// ```
    pub fn reference_at(&self, grid: &[(String, f64)], n: u64, b: Option<u64>) -> Option<String> {
        let mut r = self.reference.clone()?;
        if !r.contains('{') {
            return Some(r);
        }
        for (k, v) in grid {
            r = r.replace(&format!("{{{k}}}"), &num(*v));
        }
        r = r.replace("{n}", &n.to_string());
        if let Some(b) = b {
            r = r.replace("{b}", &b.to_string());
        }
        Some(r)
    }
}

/// The expanded experiment: points × runs.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Series, in config order.
    pub series: Vec<PlanSeries>,
    /// Points, series-major; within a series the grid in lexicographic order of the
    /// variable names with the x variable innermost.
    pub points: Vec<PlanPoint>,
    /// Independent runs per point.
    pub runs: u64,
    /// The x-axis grid variable.
    pub x_variable: String,
    /// The grid variables other than x (they split a series into several lines).
    pub group_variables: Vec<String>,
    /// The sampling protocol (`None`: independent runs, one sample each).
    pub sampling: Option<Sampling>,
    /// The scale this plan was built for.
    pub scale: Scale,
    /// Legal but degenerate combinations found while planning (one line each, naming the
    /// series), for the command line and the report.
    pub warnings: Vec<String>,
}

impl Plan {
    /// The figure frame of an allocation item: the config's axis labels, or the x variable and
    /// the first series' statistic.
    pub(crate) fn frame(&self, raw: &RawConfig) -> crate::figure::FigureFrame {
        let statistic = self.series.first().map(|s| s.statistic).unwrap_or_default();
        crate::figure::FigureFrame {
            x_label: raw.x.label.clone().unwrap_or_else(|| match statistic {
                s if s.at_observations() => "balls / n".to_string(),
                Statistic::ProbesDistribution => "probes per step".to_string(),
                _ => self.x_variable.clone(),
            }),
            y_label: raw.y_label.clone().unwrap_or_else(|| statistic.describe().to_string()),
            x_log: raw.x.log,
            y_log: raw.y_log,
            mark_minima: raw.report.mark_minima,
        }
    }

    /// The seed of run `run` of point `point` of item `item_id`:
    /// `derive_seed(master, &[hash_str(item_id), point, run])`. It depends on nothing else
    /// (not on threads, scheduling, or the other points).
    pub fn unit_seed(master: u64, item_id: &str, point: usize, run: u64) -> u64 {
        derive_seed(master, &[hash_str(item_id), point as u64, run])
    }

    /// Total number of balls over all units.
    pub fn total_balls(&self) -> u128 {
        self.points.iter().map(|p| u128::from(p.spec.m) * u128::from(self.runs)).sum()
    }
}

/// The most (point, run) units an item may have: every outcome is held in memory until the
/// item is aggregated (and the scheduler lists the units to run), so `points × runs` is
/// bounded at validation.
pub const MAX_UNITS: u128 = 10_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_seeds_depend_on_point_and_run_only() {
        let a = Plan::unit_seed(7, "batched22/fig8_1", 3, 4);
        assert_eq!(a, Plan::unit_seed(7, "batched22/fig8_1", 3, 4));
        assert_ne!(a, Plan::unit_seed(7, "batched22/fig8_1", 4, 3));
        assert_ne!(a, Plan::unit_seed(7, "tower23/table6_5", 3, 4));
    }

    /// Validation looks up the spans of every series' parameters; each lookup used to parse
    /// the whole config, which made validation quadratic in the number of series (1000
    /// one-point series: 12 s). The config is now parsed once per set of problems, whatever
    /// the number of series.
    #[test]
    fn validation_parses_the_config_a_bounded_number_of_times() {
        use crate::config::schema::SPAN_PARSES;
        let mut src = String::from(
            "title = \"t\"\nseed = 1\nruns = 1\nx = { variable = \"k\" }\n\
             grid = { k = [1] }\npoint = { n = 20, m = 200 }\n\n[quick]\nruns = 1\n",
        );
        for i in 0..2000 {
            src.push_str(&format!(
                "\n[[series]]\nname = \"s{i}\"\nprocess = {{ kind = \"two_choice\" }}\n"
            ));
        }
        let before = SPAN_PARSES.with(std::cell::Cell::get);
        let exp =
            crate::Experiment::parse("t/many", std::path::Path::new("many.toml"), &src).unwrap();
        let plan = exp.plan(false).unwrap();
        assert_eq!(plan.points.len(), 2000);
        let parses = SPAN_PARSES.with(std::cell::Cell::get) - before;
        assert!(parses <= 4, "{parses} parses of the config for 2000 series");
    }

    #[test]
    fn grid_ranges() {
        let v = toml::from_str::<toml::Table>("a = { from = 1, to = 50 }\nb = [1, 2.5]").unwrap();
        let g = |k: &str| crate::grid::values_of(&v[k]);
        assert_eq!(g("a").unwrap().len(), 50);
        assert_eq!(g("b").unwrap(), vec![1.0, 2.5]);
    }
}
