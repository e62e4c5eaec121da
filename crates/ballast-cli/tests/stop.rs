//! `ballast simulate --stop truncate|finish`: the stopping rule for multi-ball steps, reported
//! in the JSON output with the balls actually placed.

use std::process::{Command, Output};

use serde_json::Value;

fn ballast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ballast")).args(args).output().expect("spawning ballast")
}

fn json(args: &[&str]) -> Value {
    let mut all = vec!["simulate", "--json"];
    all.extend_from_slice(args);
    let o = ballast(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("valid JSON")
}

#[test]
fn stop_is_reported_and_finish_places_at_least_m_balls() {
    let base = ["--process", "packing", "--n", "100", "--m", "10000", "--runs", "20"];
    let t = json(&base);
    assert_eq!(t["stop"], "truncate");
    assert_eq!(t["balls_per_run"], 10000.0);
    let mut args = base.to_vec();
    args.extend(["--stop", "finish"]);
    let f = json(&args);
    assert_eq!(f["stop"], "finish");
    let balls = f["balls_per_run"].as_f64().unwrap();
    // At most ⌈m/n⌉ + offset − 1 = 100 balls more per run.
    assert!((10000.0..10100.0).contains(&balls), "{balls}");
    let mut args = base.to_vec();
    args.extend(["--stop", "finish", "--batch", "300"]);
    let b = json(&args);
    assert!(b["balls_per_run"].as_f64().unwrap() >= 10000.0);
    // No effect on a single-ball process.
    let two = ["--process", "two_choice", "--n", "100", "--m", "10000", "--runs", "3"];
    let mut args = two.to_vec();
    args.extend(["--stop", "finish"]);
    let (a, b) = (json(&two), json(&args));
    assert_eq!(a["gap"], b["gap"]);
    assert_eq!(b["balls_per_run"], 10000.0);
}

#[test]
fn unknown_stop_rule_is_bad_input() {
    let o = ballast(&["simulate", "--process", "packing", "--n", "10", "--m", "10", "--stop", "x"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--stop") && err.contains("finish"), "{err}");
}
