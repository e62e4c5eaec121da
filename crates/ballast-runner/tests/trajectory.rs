//! `statistic = "gap_trajectory"`: the gap at every observation point as tidy rows (x =
//! balls / n), equal to the core's recorded trajectories on the plan's seeds, ending at the
//! final gap of the same runs; refused without observation points or in `also`. The same for
//! `max_trajectory` and `min_trajectory` (the largest and smallest load at every observation
//! point) on both engines and in every setting.

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
fn trajectories_need_observation_points_and_running_max_is_no_also() {
    for (statistic, point, extra, needle) in [
        ("gap_trajectory", "m = 1000", "", "needs observation points"),
        ("final_gap", "m = 1000", "also = [\"gap_trajectory\"]", "needs observation points"),
        (
            "final_gap",
            "m = 1000, b = 100",
            "also = [\"running_max_gap\"]",
            "cannot hold \"running_max_gap\"",
        ),
    ] {
        let text = config(statistic, point, extra);
        let err = Experiment::parse(ID, Path::new("t.toml"), &text).unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
        assert!(err.contains("t.toml:"), "{err}");
    }
}

/// The mean over runs of the core's recorded load trajectories (max, min).
fn loads_by_hand(spec: &RunSpec) -> (Vec<f64>, Vec<f64>) {
    let spec = RunSpec { record_loads: true, ..spec.clone() };
    let runs: Vec<_> = (0..RUNS)
        .map(|r| simulate_seeded(&spec, Plan::unit_seed(SEED, ID, 0, r)).unwrap())
        .collect();
    let mean = |f: &dyn Fn(&ballast_core::RunOutcome) -> &Vec<f64>| -> Vec<f64> {
        (0..f(&runs[0]).len())
            .map(|j| runs.iter().map(|o| f(o)[j]).sum::<f64>() / RUNS as f64)
            .collect()
    };
    (mean(&|o| &o.max_trajectory), mean(&|o| &o.min_trajectory))
}

#[test]
fn load_trajectories_are_the_cores_on_both_engines_and_every_setting() {
    use ballast_core::{DelayMode, Engine, Setting, Weights};
    let two = |e: Engine| RunSpec::new(ProcessSpec::DChoice { d: 2 }, 100, 1000).engine(e);
    let seq = |e: Engine| RunSpec { observe_every: Some(300), ..two(e) };
    let cases: Vec<(&str, &str, &str, RunSpec)> = vec![
        ("bins", "m = 1000", "observe_every = 300", seq(Engine::Bins)),
        ("levels", "m = 1000", "observe_every = 300", seq(Engine::Levels)),
        ("bins", "b = 100, m = 1000", "", two(Engine::Bins).batched(100)),
        ("levels", "b = 100, m = 1000", "", two(Engine::Levels).batched(100)),
        (
            "bins",
            "b = 100, m = 1000",
            "weights = { kind = \"exp\", mean = 1 }",
            two(Engine::Bins).batched(100).weights(Weights::Exp { mean: 1.0 }),
        ),
        (
            "bins",
            "m = 1000, tau = 10",
            "setting = \"delay\"\ndelay_mode = \"random\"\nobserve_every = 250",
            RunSpec {
                setting: Setting::Delay { tau: 10, mode: DelayMode::Random },
                observe_every: Some(250),
                ..two(Engine::Bins)
            },
        ),
    ];
    for (engine, point, extra, spec) in cases {
        let text = |stat: &str| {
            config(stat, point, extra)
                .replace("engine = \"bins\"", &format!("engine = \"{engine}\""))
        };
        let (max, min) = loads_by_hand(&RunSpec { record_trajectory: true, ..spec.clone() });
        assert!(max.len() >= 4, "{point} {extra}");
        for (stat, statistic, expected, last) in [
            ("max_trajectory", Statistic::MaxTrajectory, &max, "max_load"),
            ("min_trajectory", Statistic::MinTrajectory, &min, "min_load"),
        ] {
            let r = run(&text(stat));
            let rows: Vec<&ballast_runner::Row> =
                r.rows.iter().filter(|r| r.statistic == statistic).collect();
            let got: Vec<f64> = rows.iter().map(|r| r.summary.mean).collect();
            assert_eq!(&got, expected, "{engine} {point} {extra} {stat}");
            // x = balls / n at each observation point, as for the gap trajectory.
            let gaps = run(&text("gap_trajectory"));
            let xs: Vec<f64> = gaps.rows.iter().map(|r| r.x).collect();
            assert_eq!(rows.iter().map(|r| r.x).collect::<Vec<_>>(), xs, "{engine} {point}");
            // The last observation is the end: the final max (min) load of the same runs.
            let fin = run(&text(last));
            assert_eq!(
                got.last().copied(),
                Some(fin.rows[0].summary.mean),
                "{engine} {point} {stat}"
            );
        }
    }
}

#[test]
fn load_trajectories_need_observation_points() {
    for (statistic, extra, needle) in [
        ("max_trajectory", "", "statistic = \"max_trajectory\" needs observation points"),
        ("min_trajectory", "", "statistic = \"min_trajectory\" needs observation points"),
        ("final_gap", "also = [\"min_trajectory\"]", "needs observation points"),
    ] {
        let text = config(statistic, "m = 1000", extra);
        let err = Experiment::parse(ID, Path::new("t.toml"), &text).unwrap_err().to_string();
        assert!(err.contains(needle), "{err}");
        assert!(!err.contains("expected any of: max_gap, final_gap, running_max_gap"), "{err}");
    }
}

/// A trajectory in `also` gives the rows (and per-run values) of the same statistic as the
/// series' own, from the same runs, beside the series' final gap.
#[test]
fn trajectories_in_also_are_those_of_the_same_runs() {
    let extra = "observe_every = 250";
    let own = run(&config("gap_trajectory", "m = 1000", extra));
    let also = run(&config(
        "final_gap",
        "m = 1000",
        &format!("{extra}\nalso = [\"gap_trajectory\", \"max_trajectory\"]"),
    ));
    let pick = |r: &ItemResult, s: Statistic| -> Vec<(f64, f64, Vec<f64>)> {
        r.rows
            .iter()
            .filter(|row| row.statistic == s)
            .map(|row| (row.x, row.summary.mean, row.values.clone()))
            .collect()
    };
    let a = pick(&also, Statistic::GapTrajectory);
    assert_eq!(a.len(), 4);
    assert_eq!(a, pick(&own, Statistic::GapTrajectory));
    assert!(also.rows.iter().filter(|r| r.statistic != Statistic::FinalGap).all(|r| r.also));
    let fin = also.rows.iter().find(|r| r.statistic == Statistic::FinalGap).unwrap();
    // The last observation is the end of the run: run for run the final gap.
    assert_eq!(a[3].2, fin.values);
    assert_eq!(fin.values.len(), RUNS as usize);
    assert_eq!(pick(&also, Statistic::MaxTrajectory).len(), 4);
}
