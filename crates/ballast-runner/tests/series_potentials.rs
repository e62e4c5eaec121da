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
        assert!(tracked.rows.iter().filter(|r| r.series.contains('[')).all(
            |r| r.also && r.statistic == Statistic::Measure(ballast_runner::Measure::Potential)
        ));
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
