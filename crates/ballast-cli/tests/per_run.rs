//! `ballast simulate --json`'s per-run values (`per_run`, `trajectory`, `per_run_vectors`),
//! the running maximum of the gap, and the blocks protocol (`--blocks`): each checked against
//! a second way to the same numbers.

mod common;

use common::{ballast, simulate_json};
use serde_json::Value;

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().expect("an array").iter().map(|x| x.as_f64().expect("a number")).collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Every scalar statistic's per-run values average to the reported mean, one value per run;
/// the per-run load distribution sums to 1 in each run and averages to the pooled one.
#[test]
fn per_run_values_agree_with_the_summaries() {
    let v = simulate_json(&[
        "--process",
        "two_choice",
        "--n",
        "97",
        "--m",
        "2000",
        "--runs",
        "7",
        "--loads",
    ]);
    let per_run = &v["per_run"];
    assert_eq!(floats(&per_run["final_gap"]).len(), 7);
    let gap = floats(&per_run["final_gap"]);
    assert!((mean(&gap) - v["gap"]["mean"].as_f64().unwrap()).abs() < 1e-12);
    for (name, s) in v["statistics"].as_object().unwrap() {
        let runs = floats(&per_run[name]);
        assert_eq!(runs.len(), 7, "{name}");
        assert!((mean(&runs) - s["mean"].as_f64().unwrap()).abs() < 1e-9, "{name}");
    }
    let dist = &v["per_run_vectors"]["load_distribution"];
    let per_x: Vec<Vec<f64>> = dist["values"].as_array().unwrap().iter().map(floats).collect();
    for r in 0..7 {
        let total: f64 = per_x.iter().map(|p| p[r]).sum();
        assert!((total - 1.0).abs() < 1e-12, "run {r}: fractions sum to {total}");
    }
    let pooled = v["load_distribution"].as_array().unwrap();
    assert_eq!(pooled.len(), per_x.len());
    for (p, runs) in pooled.iter().zip(&per_x) {
        assert!((p["fraction"].as_f64().unwrap() - mean(runs)).abs() < 1e-12);
    }
}

/// The running maximum of the gap never falls along a run, starts at the first observed gap
/// and ends at the run's max gap (the max over the same observation points).
#[test]
fn the_running_max_gap_ends_at_each_runs_max_gap() {
    let v = simulate_json(&[
        "--process",
        "one_plus_beta",
        "--param",
        "beta=0.5",
        "--n",
        "50",
        "--m",
        "3000",
        "--batch",
        "50",
        "--runs",
        "5",
    ]);
    let cols = &v["trajectory"]["columns"];
    let gap: Vec<Vec<f64>> = cols["gap"].as_array().unwrap().iter().map(floats).collect();
    let run_max: Vec<Vec<f64>> =
        cols["running_max_gap"].as_array().unwrap().iter().map(floats).collect();
    let max_gap = floats(&v["per_run"]["max_gap"]);
    assert_eq!(gap.len(), 60);
    for r in 0..5 {
        assert_eq!(run_max[0][r], gap[0][r]);
        for j in 1..gap.len() {
            assert!(run_max[j][r] >= run_max[j - 1][r]);
            assert_eq!(run_max[j][r], run_max[j - 1][r].max(gap[j][r]));
        }
        assert_eq!(run_max[gap.len() - 1][r], max_gap[r], "run {r}");
    }
    let curve = v["trajectories"]["running_max_gap"].as_array().unwrap();
    let last = curve.last().unwrap()["mean"].as_f64().unwrap();
    assert!((last - v["max_gap"]["mean"].as_f64().unwrap()).abs() < 1e-12);
}

/// `--blocks B` samples the gap at every block end of one long run per seed: the same
/// numbers as a run of B·m balls observed every m balls (run-major), and nothing else.
#[test]
fn blocks_are_one_long_run_observed_every_m_balls() {
    let base = ["--process", "two_choice", "--n", "97", "--runs", "3"];
    let blocks = simulate_json(&[&base[..], &["--m", "500", "--blocks", "4"]].concat());
    let long = simulate_json(&[&base[..], &["--m", "2000", "--observe-every", "500"]].concat());
    let per_block = floats(&blocks["per_run"]["final_gap"]);
    let points: Vec<Vec<f64>> =
        long["trajectory"]["columns"]["gap"].as_array().unwrap().iter().map(floats).collect();
    let run_major: Vec<f64> = (0..3).flat_map(|r| points.iter().map(move |p| p[r])).collect();
    assert_eq!(per_block, run_major);
    assert_eq!(blocks["blocks"], 4);
    assert_eq!(blocks["gap"]["runs"], 12);
    assert!(blocks.get("max_gap").is_none(), "the blocks protocol samples the gap only");
    let o = ballast(&[
        "simulate",
        "--process",
        "two_choice",
        "--n",
        "9",
        "--m",
        "9",
        "--blocks",
        "2",
        "--batch",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}

/// `--above C`: each run's balls above C equal Σ over its bins of max(0, load − C) as read
/// from the same run's load distribution (fraction of bins at each load − W/n), for a C
/// below, at and above the typical loads.
#[test]
fn balls_above_agrees_with_each_runs_loads() {
    let (n, m) = (40.0, 400.0);
    for c in ["0", "11", "13", "100"] {
        let v = simulate_json(&[
            "--process",
            "one_choice",
            "--n",
            "40",
            "--m",
            "400",
            "--runs",
            "6",
            "--loads",
            "--above",
            c,
        ]);
        let c: f64 = c.parse().unwrap();
        let above = floats(&v["per_run"]["balls_above"]);
        let dist = &v["per_run_vectors"]["load_distribution"];
        let xs = floats(&dist["x"]);
        let per_x: Vec<Vec<f64>> = dist["values"].as_array().unwrap().iter().map(floats).collect();
        for (r, got) in above.iter().enumerate() {
            let want: f64 = xs
                .iter()
                .zip(&per_x)
                .map(|(x, f)| (f[r] * n).round() * (m / n + x - c).max(0.0))
                .sum();
            assert!((got - want).abs() < 1e-9, "C = {c}, run {r}: {got} vs {want}");
        }
        if c == 0.0 {
            assert!(above.iter().all(|&a| a == m), "every ball is above 0");
        }
    }
}

/// `above` without `balls_above` (and the reverse) is a validation error at its line and
/// column, exit 2, nothing written.
#[test]
fn above_and_balls_above_go_together() {
    let dir = std::env::temp_dir().join(format!("ballast-above-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = "title = \"t\"\nseed = 1\nruns = 2\nx = { variable = \"n\" }\n\
                  grid = { n = [10] }\npoint = { m = 20 }\n\n[[series]]\nname = \"s\"\n\
                  process = { kind = \"two_choice\" }\nstatistic = \"final_gap\"\nabove = 3\n";
    let path = dir.join("c.toml");
    std::fs::write(&path, config).unwrap();
    let out = dir.join("out");
    let o = ballast(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("c.toml:12:9"), "{err}");
    assert!(err.contains("`above` applies to the statistic \"balls_above\""), "{err}");
    assert!(!out.exists(), "nothing written");
    std::fs::write(&path, config.replace("above = 3\n", "also = [\"balls_above\"]\n")).unwrap();
    let o = ballast(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("needs `above = C`"), "{err}");
    assert!(!out.exists(), "nothing written");
    std::fs::remove_dir_all(&dir).unwrap();
}
