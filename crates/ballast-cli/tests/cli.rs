//! End-to-end tests of the `ballast` binary: JSON determinism across repeats and thread
//! counts, a known gap value, `ballast list`, and exit code 2 with a field-naming message for
//! each class of bad input.

use std::process::{Command, Output};

use serde_json::Value;

fn ballast(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ballast"));
    cmd.args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("spawning ballast")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `simulate --json` and parses its single JSON object.
fn simulate_json(args: &[&str], envs: &[(&str, &str)]) -> Value {
    let mut all = vec!["simulate", "--json"];
    all.extend_from_slice(args);
    let o = ballast(&all, envs);
    assert!(o.status.success(), "ballast {all:?} failed: {}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(
        text.lines().count(),
        1,
        "expected one JSON line, got {text}"
    );
    serde_json::from_str(&text).expect("valid JSON")
}

/// The JSON output with the timing fields removed, serialised again (key order preserved by
/// the parse-print round trip of the same bytes).
fn without_timing(mut v: Value) -> Value {
    let obj = v.as_object_mut().expect("object");
    assert!(obj.remove("ns_per_ball").is_some());
    assert!(obj.remove("wall_s").is_some());
    v
}

#[test]
fn json_is_deterministic_across_repeats_and_threads() {
    let args = [
        "--process",
        "one_plus_beta",
        "--param",
        "beta=0.5",
        "--n",
        "500",
        "--m",
        "50000",
        "--batch",
        "1000",
        "--runs",
        "8",
        "--seed",
        "11",
    ];
    let a = without_timing(simulate_json(&args, &[]));
    let b = without_timing(simulate_json(&args, &[]));
    let c = without_timing(simulate_json(&args, &[("RAYON_NUM_THREADS", "1")]));
    let d = without_timing(simulate_json(
        &[&args[..], &["--threads", "3"]].concat(),
        &[],
    ));
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(a, d);
    // Compare the bytes too, not only the parsed values.
    let s = serde_json::to_string(&a).unwrap();
    assert_eq!(s, serde_json::to_string(&c).unwrap());
}

#[test]
fn json_has_the_documented_fields() {
    let v = simulate_json(
        &[
            "--process",
            "two_choice",
            "--n",
            "100",
            "--m",
            "1000",
            "--runs",
            "3",
        ],
        &[],
    );
    for key in [
        "process",
        "params",
        "n",
        "m",
        "batch",
        "runs",
        "seed",
        "engine",
        "tie_break",
        "weights",
        "gap",
        "max_gap",
        "samples_per_ball",
        "ns_per_ball",
        "wall_s",
    ] {
        assert!(v.get(key).is_some(), "missing `{key}` in {v}");
    }
    assert_eq!(v["process"], "two_choice");
    assert_eq!(v["params"]["d"], 2);
    assert_eq!(v["batch"], Value::Null);
    assert_eq!(v["seed"], 1);
    assert_eq!(v["engine"], "bins");
    assert_eq!(v["tie_break"], "random");
    assert_eq!(v["weights"], "unit");
    assert_eq!(v["samples_per_ball"], 2.0);
    for stat in ["gap", "max_gap"] {
        let s = &v[stat];
        assert!(s["mean"].is_f64() && s["stderr"].is_f64());
        let dist = s["distribution"].as_object().unwrap();
        let total: f64 = dist.values().map(|x| x.as_f64().unwrap()).sum();
        assert!((total - 1.0).abs() < 1e-12);
        for k in dist.keys() {
            k.parse::<i64>().expect("integer keys");
        }
    }
}

#[test]
fn two_choice_gap_matches_the_known_value() {
    // Two-Choice's gap is ln ln n / ln 2 + O(1) w.h.p. (Berenbrink, Czumaj, Steger, Vöcking
    // 2006), independent of m; for n = 1000 it is about 2-3 in simulations.
    let v = simulate_json(
        &[
            "--process",
            "two_choice",
            "--n",
            "1000",
            "--m",
            "1000000",
            "--runs",
            "20",
            "--seed",
            "7",
        ],
        &[],
    );
    let mean = v["gap"]["mean"].as_f64().unwrap();
    assert!(
        (1.5..=4.0).contains(&mean),
        "two_choice gap mean {mean} outside [1.5, 4]"
    );
    assert_eq!(v["runs"], 20);
    assert_eq!(v["seed"], 7);
}

#[test]
fn batched_and_weighted_runs_work() {
    let v = simulate_json(
        &[
            "--process",
            "three_choice",
            "--tie-break",
            "position",
            "--n",
            "200",
            "--m",
            "20000",
            "--batch",
            "400",
            "--runs",
            "2",
            "--weights",
            "exp",
        ],
        &[],
    );
    assert_eq!(v["batch"], 400);
    assert_eq!(v["tie_break"], "position");
    assert_eq!(v["weights"], "exp");
    assert_eq!(v["weight_mean"], 1.0);
    assert!(v["max_gap"]["mean"].as_f64().unwrap() >= v["gap"]["mean"].as_f64().unwrap());
}

#[test]
fn human_output_has_the_summary() {
    let o = ballast(
        &[
            "simulate",
            "--process",
            "one_choice",
            "--n",
            "100",
            "--m",
            "10000",
            "--runs",
            "4",
        ],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    for needle in ["gap", "±", "ceil(gap)", "samples/ball", "ns/ball", "wall"] {
        assert!(s.contains(needle), "missing {needle} in\n{s}");
    }
}

#[test]
fn list_names_processes_params_and_rules() {
    let o = ballast(&["list"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    for needle in [
        "one_choice",
        "two_choice",
        "three_choice",
        "d_choice",
        "one_plus_beta",
        "quantile",
        "mixed_quantile",
        "threshold",
        "mean_thinning",
        "beta",
        "delta",
        "eta",
        "strict",
        "[0, 1]",
        "position",
        "lowest_index",
        "batched",
        "exp",
        "Items",
    ] {
        assert!(s.contains(needle), "missing {needle} in\n{s}");
    }
}

/// Asserts exit code 2, no stdout, and a message on stderr containing every needle.
fn assert_bad_input(args: &[&str], needles: &[&str]) {
    let o = ballast(args, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "ballast {args:?}: stderr {err}");
    assert!(o.stdout.is_empty(), "ballast {args:?} printed to stdout");
    assert!(
        !err.contains("panicked"),
        "ballast {args:?} panicked: {err}"
    );
    for n in needles {
        assert!(
            err.contains(n),
            "ballast {args:?}: `{n}` not in stderr: {err}"
        );
    }
}

const SMALL: [&str; 4] = ["--n", "10", "--m", "100"];

fn sim<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["simulate"];
    v.extend_from_slice(extra);
    v.extend_from_slice(&SMALL);
    v
}

#[test]
fn unknown_process_lists_valid_kinds() {
    assert_bad_input(
        &sim(&["--process", "four_choice"]),
        &["--process", "four_choice", "two_choice", "mean_thinning"],
    );
}

#[test]
fn unknown_and_missing_params_list_allowed_ones() {
    assert_bad_input(&sim(&["--process", "one_plus_beta"]), &["beta", "[0, 1]"]);
    assert_bad_input(
        &sim(&["--process", "one_plus_beta", "--param", "gamma=1"]),
        &["gamma", "allowed parameters", "beta"],
    );
    assert_bad_input(
        &sim(&["--process", "two_choice", "--param", "d=3"]),
        &["`d`", "none"],
    );
    assert_bad_input(
        &sim(&["--process", "d_choice", "--param", "d=zero"]),
        &["`d`", "integer"],
    );
    assert_bad_input(
        &sim(&["--process", "quantile", "--param", "delta"]),
        &["key=value", "delta"],
    );
}

#[test]
fn beta_outside_unit_interval() {
    assert_bad_input(
        &sim(&["--process", "one_plus_beta", "--param", "beta=1.5"]),
        &["beta", "[0, 1]"],
    );
    assert_bad_input(
        &sim(&["--process", "one_plus_beta", "--param", "beta=-0.1"]),
        &["beta", "[0, 1]"],
    );
    assert_bad_input(
        &sim(&[
            "--process",
            "mixed_quantile",
            "--param",
            "delta=0.5",
            "--param",
            "eta=2",
        ]),
        &["eta", "[0, 1]"],
    );
}

#[test]
fn zero_bins_and_zero_batch() {
    assert_bad_input(
        &[
            "simulate",
            "--process",
            "one_choice",
            "--n",
            "0",
            "--m",
            "10",
        ],
        &["`n`", "--n", "1..="],
    );
    assert_bad_input(
        &sim(&["--process", "one_choice", "--batch", "0"]),
        &["--batch", ">= 1"],
    );
}

#[test]
fn bad_tie_break_and_other_flags() {
    assert_bad_input(
        &sim(&["--process", "two_choice", "--tie-break", "leftmost"]),
        &["tie_break", "leftmost", "random", "position"],
    );
    assert_bad_input(
        &sim(&["--process", "one_choice", "--weights", "gamma"]),
        &["--weights", "unit", "exp"],
    );
    assert_bad_input(
        &sim(&[
            "--process",
            "one_choice",
            "--weights",
            "exp",
            "--weight-mean",
            "0",
        ]),
        &["weights.mean", "positive"],
    );
    assert_bad_input(
        &sim(&["--process", "one_choice", "--runs", "0"]),
        &["--runs"],
    );
    assert_bad_input(
        &["simulate", "--process", "one_choice", "--n", "10"],
        &["--m"],
    );
}
