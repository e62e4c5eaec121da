//! Potentials as statistics of ordinary allocation series (`potentials = [...]` on a
//! series): the rows they add, that tracking them leaves the runs as they were, that their
//! values are those of the tracker run by hand on the same seeds, and that bad specs are
//! refused at validation with their place in the file.

use std::path::Path;

use ballast_core::{sim_rng, simulate_observed, ProcessSpec, RunSpec};
use ballast_potential::{PotentialSpec, Potentials};
use ballast_runner::{run_experiment, Experiment, Plan, RunOptions, Statistic};

const ID: &str = "test/series_potentials";
const SEED: u64 = 77;
const RUNS: u64 = 5;

fn config(potentials: &str, batched: bool) -> String {
    let point = if batched { "n = 200, b = \"k * n\", batches = 3" } else { "m = \"k * n\"" };
    format!(
        r#"
title = "potentials on allocation series"
seed = {SEED}
runs = {RUNS}
engine = "bins"
x = {{ variable = "k" }}
grid = {{ n = [200], k = [2, 4] }}
point = {{ {point} }}

[[series]]
name = "Two-Choice"
process = {{ kind = "two_choice" }}
statistic = "final_gap"
also = ["max_load"]
{potentials}
"#
    )
}

fn opts() -> RunOptions {
    let mut o = RunOptions::new(".");
    o.progress = false;
    o.threads = 2;
    o.command = Some("test".into());
    o
}

fn run(text: &str) -> ballast_runner::ItemResult {
    let exp = Experiment::parse(ID, Path::new("p.toml"), text).unwrap();
    run_experiment(&exp, &opts()).unwrap()
}

#[test]
fn potentials_add_rows_and_leave_the_runs_as_they_were() {
    for batched in [false, true] {
        let plain = run(&config("", batched));
        let tracked =
            run(&config(r#"potentials = ["quadratic", "hyperbolic:alpha=0.1"]"#, batched));
        // The gap and max-load rows are byte for byte those of the runs without trackers.
        let own = |r: &ballast_runner::ItemResult| -> Vec<String> {
            r.rows
                .iter()
                .filter(|row| !row.series.contains('['))
                .map(|row| {
                    format!("{} {} {:?} {:?}", row.series, row.x, row.statistic, row.summary)
                })
                .collect()
        };
        assert_eq!(own(&plain), own(&tracked), "batched = {batched}");
        let names: Vec<&str> = tracked
            .rows
            .iter()
            .filter(|r| r.series.contains('['))
            .map(|r| r.series.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "Two-Choice [quadratic]",
                "Two-Choice [hyperbolic:alpha=0.1]",
                "Two-Choice [quadratic]",
                "Two-Choice [hyperbolic:alpha=0.1]"
            ]
        );
        assert!(tracked
            .rows
            .iter()
            .filter(|r| r.series.contains('['))
            .all(|r| r.also && r.statistic == Statistic::Potential));
        // Not in the figure: the potential rows are `also` rows.
        assert!(tracked.to_csv().contains("Two-Choice [quadratic]"));
    }
}

/// The values are the mean over runs of the tracker run by hand on the plan's seeds; a
/// variant on the seeds of another point (a wrong wiring) differs.
#[test]
fn potential_values_are_the_trackers_on_the_plans_seeds() {
    let text = config(r#"potentials = ["quadratic"]"#, false);
    let r = run(&text);
    let by_hand = |point: usize, n: u64, m: u64| -> f64 {
        let spec =
            RunSpec::new(ProcessSpec::DChoice { d: 2 }, n, m).engine(ballast_core::Engine::Bins);
        let specs = [PotentialSpec::Quadratic];
        let mut sum = 0.0;
        for run in 0..RUNS {
            let mut tracker = Potentials::new(&specs).unwrap();
            let mut rng = sim_rng(Plan::unit_seed(SEED, ID, point, run));
            simulate_observed(&spec, &mut rng, &mut tracker).unwrap();
            sum += tracker.values()[0];
        }
        sum / RUNS as f64
    };
    let rows: Vec<&ballast_runner::Row> =
        r.rows.iter().filter(|r| r.series == "Two-Choice [quadratic]").collect();
    assert_eq!(rows.len(), 2);
    for (point, row) in rows.iter().enumerate() {
        let expected = by_hand(point, 200, row.m);
        assert!((row.summary.mean - expected).abs() <= 1e-9 * expected.abs(), "{row:?}");
        let wrong = by_hand(1 - point, 200, row.m);
        assert!((row.summary.mean - wrong).abs() > 1e-6 * expected.abs(), "the test cannot tell");
    }
}

#[test]
fn bad_potentials_are_refused_at_validation() {
    for (line, needle) in [
        (r#"potentials = ["cubic"]"#, "cubic"),
        (r#"potentials = ["hyperbolic:alpha=-1"]"#, "alpha"),
        (r#"potentials = []"#, "empty"),
        (r#"potentials = ["quadratic:alpha={q}"]"#, "quadratic"),
    ] {
        let text = config(line, false);
        let err = Experiment::parse(ID, Path::new("p.toml"), &text).unwrap_err().to_string();
        assert!(err.contains("p.toml:15:"), "{line}: {err}");
        assert!(err.contains(needle), "{line}: {err}");
    }
}

/// `potential_trajectory` (as the statistic or in `also`): each potential at every
/// observation point, equal to a `Recorder` sampling the same tracker at the observation
/// points of the plan's runs; the last point is the final `potential` row; the runs are
/// those without it. Refused without `potentials` or without observation points.
#[test]
fn potential_trajectories_are_the_recorders_on_the_plans_seeds() {
    use ballast_potential::{Recorder, Sampling};
    let specs = PotentialSpec::parse_all(["quadratic", "hyperbolic:alpha=0.1"]).unwrap();
    let pots = r#"potentials = ["quadratic", "hyperbolic:alpha=0.1"]"#;
    for batched in [false, true] {
        let (extra, statistic) = if batched {
            (format!("{pots}\nalso = [\"max_load\", \"potential_trajectory\"]"), "final_gap")
        } else {
            (format!("{pots}\nobserve_every = 150"), "potential_trajectory")
        };
        let text = config(&extra, batched).replace(
            "statistic = \"final_gap\"\nalso = [\"max_load\"]\n",
            &format!("statistic = \"{statistic}\"\n"),
        );
        let exp = Experiment::parse(ID, Path::new("p.toml"), &text).unwrap();
        let plan = exp.plan(false).unwrap();
        let r = run_experiment(&exp, &opts()).unwrap();
        for (pi, point) in plan.points.iter().enumerate() {
            // By hand: the mean over the plan's runs of the recorded series.
            let mut by_hand: Vec<Vec<f64>> = Vec::new();
            for run in 0..RUNS {
                let mut rec = Recorder::new(&specs, Sampling::Observations).unwrap().with_series();
                let seed = Plan::unit_seed(SEED, ID, pi, run);
                simulate_observed(&point.spec, &mut sim_rng(seed), &mut rec).unwrap();
                let s = rec.series().unwrap();
                for k in 0..specs.len() {
                    let col: Vec<f64> = s.column(k).collect();
                    if run == 0 {
                        by_hand.push(col);
                    } else {
                        by_hand[k].iter_mut().zip(col).for_each(|(a, b)| *a += b);
                    }
                }
            }
            for (k, spec) in specs.iter().enumerate() {
                let name = format!("Two-Choice [{spec}]");
                let rows: Vec<&ballast_runner::Row> = r
                    .rows
                    .iter()
                    .filter(|row| {
                        row.series == name
                            && row.statistic == Statistic::PotentialTrajectory
                            && row.group == point.grid
                    })
                    .collect();
                let expected: Vec<f64> = by_hand[k].iter().map(|v| v / RUNS as f64).collect();
                let got: Vec<f64> = rows.iter().map(|row| row.summary.mean).collect();
                assert_eq!(got.len(), expected.len(), "{name} point {pi}");
                for (a, b) in got.iter().zip(&expected) {
                    assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{name} {pi}: {a} vs {b}");
                }
                assert_eq!(rows.iter().all(|row| row.also), batched, "{name}");
                let xs: Vec<f64> = rows.iter().map(|row| row.x).collect();
                let every = if batched { point.spec.m as f64 / 3.0 } else { 150.0 };
                let want: Vec<f64> = (1..=xs.len())
                    .map(|j| (every * j as f64).min(point.spec.m as f64) / point.n as f64)
                    .collect();
                assert_eq!(xs, want, "{name} {pi}");
                // The last observation is the end: the final value row of the same runs.
                let fin = r
                    .rows
                    .iter()
                    .find(|row| {
                        row.series == name
                            && row.statistic != Statistic::PotentialTrajectory
                            && row.x == point.x
                    })
                    .unwrap();
                assert_eq!(got.last().copied(), Some(fin.summary.mean), "{name} {pi}");
            }
        }
    }
    for (extra, needle) in [
        ("also = [\"potential_trajectory\"]\nobserve_every = 100", "needs `potentials`"),
        (
            "potentials = [\"quadratic\"]\nalso = [\"potential_trajectory\"]",
            "\"potential_trajectory\" needs observation points",
        ),
    ] {
        let text = config(extra, false).replace("also = [\"max_load\"]\n", "");
        let err = Experiment::parse(ID, Path::new("p.toml"), &text).unwrap_err().to_string();
        assert!(err.contains(needle) && err.contains("p.toml:"), "{err}");
    }
}
