//! `statistic = "gap_trajectory"`: the gap at every observation point as tidy rows (x =
//! balls / n), equal to the core's recorded trajectories on the plan's seeds, ending at the
//! final gap of the same runs; refused without observation points or in `also`.

use std::path::Path;

use ballast_core::{simulate_seeded, ProcessSpec, RunSpec};
use ballast_runner::{run_experiment, Experiment, ItemResult, Plan, RunOptions, Statistic};

const ID: &str = "test/trajectory";
const SEED: u64 = 91;
const RUNS: u64 = 6;

fn config(statistic: &str, point: &str, extra: &str) -> String {
    format!(
        "title = \"t\"\nseed = {SEED}\nruns = {RUNS}\nengine = \"bins\"\n\
         x = {{ variable = \"n\" }}\ngrid = {{ n = [100] }}\npoint = {{ {point} }}\n\n\
         [[series]]\nname = \"Two-Choice\"\nprocess = {{ kind = \"two_choice\" }}\n\
         statistic = \"{statistic}\"\n{extra}"
    )
}

fn run(text: &str) -> ItemResult {
    let mut o = RunOptions::new(".");
    o.progress = false;
    o.threads = 2;
    o.command = Some("test".into());
    let exp = Experiment::parse(ID, Path::new("t.toml"), text).unwrap();
    run_experiment(&exp, &o).unwrap()
}

/// The mean over runs of the core's trajectory, observation by observation.
fn by_hand(spec: &RunSpec) -> Vec<f64> {
    let runs: Vec<Vec<f64>> = (0..RUNS)
        .map(|r| simulate_seeded(spec, Plan::unit_seed(SEED, ID, 0, r)).unwrap().trajectory)
        .collect();
    (0..runs[0].len()).map(|j| runs.iter().map(|t| t[j]).sum::<f64>() / RUNS as f64).collect()
}

#[test]
fn sequential_and_batched_trajectories_are_the_cores() {
    let two =
        RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 1000).engine(ballast_core::Engine::Bins);
    let cases = [
        (
            "m = 1000",
            "observe_every = 300",
            RunSpec { observe_every: Some(300), record_trajectory: true, ..two.clone() },
            vec![3.0, 6.0, 9.0, 10.0],
        ),
        (
            "b = 100, m = 1000",
            "",
            RunSpec { record_trajectory: true, ..two.clone().batched(100) },
            (1..=10).map(f64::from).collect(),
        ),
    ];
    for (point, extra, spec, xs) in cases {
        let r = run(&config("gap_trajectory", point, extra));
        let rows: Vec<&ballast_runner::Row> =
            r.rows.iter().filter(|r| r.statistic == Statistic::GapTrajectory).collect();
        let got_x: Vec<f64> = rows.iter().map(|r| r.x).collect();
        assert_eq!(got_x, xs, "{point}");
        let expected = by_hand(&spec);
        let got: Vec<f64> = rows.iter().map(|r| r.summary.mean).collect();
        assert_eq!(got, expected, "{point}");
        // The last observation is the end of the run: the final gap of the same runs.
        let fin = run(&config("final_gap", point, extra));
        assert_eq!(got.last().copied(), Some(fin.rows[0].summary.mean), "{point}");
    }
}

#[test]
fn trajectories_need_observation_points_and_are_no_also() {
    for (statistic, point, extra, needle) in [
        ("gap_trajectory", "m = 1000", "", "needs observation points"),
        (
            "final_gap",
            "m = 1000",
            "observe_every = 100\nalso = [\"gap_trajectory\"]",
            "cannot hold \"gap_trajectory\"",
        ),
    ] {
        let text = config(statistic, point, extra);
        let err = Experiment::parse(ID, Path::new("t.toml"), &text).unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
        assert!(err.contains("t.toml:"), "{err}");
    }
}
