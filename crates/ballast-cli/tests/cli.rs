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

/// Runs `simulate --json` and returns its single line of output.
fn simulate_text(args: &[&str], envs: &[(&str, &str)]) -> String {
    let mut all = vec!["simulate", "--json"];
    all.extend_from_slice(args);
    let o = ballast(&all, envs);
    assert!(o.status.success(), "ballast {all:?} failed: {}", stderr(&o));
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 1, "expected one JSON line, got {text}");
    text
}

/// Runs `simulate --json` and parses its single JSON object.
fn simulate_json(args: &[&str], envs: &[(&str, &str)]) -> Value {
    serde_json::from_str(&simulate_text(args, envs)).expect("valid JSON")
}

/// The raw JSON text without the timing fields, which come last.
fn without_timing(text: &str) -> &str {
    let cut = text.find(",\"ns_per_ball\":").expect("ns_per_ball present");
    let rest = &text[cut..];
    assert!(rest.contains(",\"wall_s\":"), "timing fields not last: {rest}");
    assert_eq!(rest.matches(':').count(), 2, "fields after the timing fields: {rest}");
    &text[..cut]
}

/// The keys of every `"distribution":{...}` object, in output order.
fn distribution_keys(text: &str) -> Vec<Vec<i64>> {
    text.split("\"distribution\":{")
        .skip(1)
        .map(|part| {
            let body = &part[..part.find('}').unwrap()];
            body.split(',')
                .map(|kv| kv.split(':').next().unwrap().trim_matches('"').parse().unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn json_is_deterministic_across_repeats_and_threads() {
    for engine in ["bins", "auto"] {
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
            "--engine",
            engine,
        ];
        let a = simulate_text(&args, &[]);
        let b = simulate_text(&args, &[]);
        let c = simulate_text(&args, &[("RAYON_NUM_THREADS", "1")]);
        let d = simulate_text(&[&args[..], &["--threads", "3"]].concat(), &[]);
        assert_eq!(without_timing(&a), without_timing(&b), "{engine}");
        assert_eq!(without_timing(&a), without_timing(&c), "{engine}");
        assert_eq!(without_timing(&a), without_timing(&d), "{engine}");
    }
}

#[test]
fn engine_is_recorded_as_resolved() {
    let base = ["--process", "two_choice", "--n", "1000", "--m", "20000", "--batch", "1000"];
    let bins = simulate_json(&[&base[..], &["--engine", "bins"]].concat(), &[]);
    assert_eq!(bins["engine"], "bins");
    let levels = simulate_json(&[&base[..], &["--engine", "levels"]].concat(), &[]);
    assert_eq!(levels["engine"], "levels");
    let auto = simulate_json(&base, &[]);
    assert!(auto["engine"] == "bins" || auto["engine"] == "levels");
    // The level engine needs unit weights: asking for it with Exp weights is bad input.
    assert_bad_input(
        &sim(&["--process", "two_choice", "--engine", "levels", "--weights", "exp"]),
        &["level"],
    );
    assert_bad_input(&sim(&["--process", "two_choice", "--engine", "fast"]), &["--engine", "bins"]);
}

#[test]
fn distribution_keys_are_in_numeric_order() {
    // One-Choice with an average load of 30 on 100 bins: gaps around 10-20, so the keys
    // mix one- and two-digit numbers and a string sort would misorder them.
    let text = simulate_text(
        &["--process", "one_choice", "--n", "100", "--m", "3000", "--runs", "40"],
        &[],
    );
    let keys = distribution_keys(&text);
    assert_eq!(keys.len(), 2);
    for k in keys {
        assert!(k.windows(2).all(|w| w[0] < w[1]), "keys not in numeric order: {k:?}");
    }
}

#[test]
fn json_has_the_documented_fields() {
    let v = simulate_json(
        &["--process", "two_choice", "--n", "100", "--m", "1000", "--runs", "3"],
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
    assert!(v["engine"] == "bins" || v["engine"] == "levels", "{}", v["engine"]);
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
    assert!((1.5..=4.0).contains(&mean), "two_choice gap mean {mean} outside [1.5, 4]");
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
        &["simulate", "--process", "one_choice", "--n", "100", "--m", "10000", "--runs", "4"],
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
        "g_bounded",
        "g_myopic",
        "sigma_noisy_load",
        "relative_threshold",
        "twinning",
        "packing",
        "tight_packing",
        "memory",
        "caching",
        "always_go_left",
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
    assert!(!err.contains("panicked"), "ballast {args:?} panicked: {err}");
    for n in needles {
        assert!(err.contains(n), "ballast {args:?}: `{n}` not in stderr: {err}");
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
        &["`d`", "replacement (true or false)"],
    );
    assert_bad_input(&sim(&["--process", "d_choice", "--param", "d=zero"]), &["`d`", "integer"]);
    assert_bad_input(&sim(&["--process", "quantile", "--param", "delta"]), &["key=value", "delta"]);
}

#[test]
fn formula_thresholds_and_distinct_pairs_are_checked() {
    assert_bad_input(
        &sim(&["--process", "formula_threshold", "--param", "f=avg + W"]),
        &["`f`", "unknown variable `W`", "t, n, avg"],
    );
    assert_bad_input(
        &sim(&["--process", "formula_threshold", "--param", "f=avg >= 1"]),
        &["`f`", "not accepted"],
    );
    assert_bad_input(
        &sim(&["--process", "formula_threshold", "--param", "f=1", "--tau", "3"]),
        &["formula_threshold", "delay"],
    );
    assert_bad_input(
        &["simulate", "--process", "g_bounded", "--param", "g=1", "--param", "replacement=false"]
            .into_iter()
            .chain(["--n", "1", "--m", "10"])
            .collect::<Vec<_>>(),
        &["replacement = false", "at least 2"],
    );
    assert_bad_input(
        &sim(&["--process", "quantile", "--param", "delta=0.5", "--param", "replacement=false"]),
        &["unknown parameter `replacement`"],
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
        &sim(&["--process", "mixed_quantile", "--param", "delta=0.5", "--param", "eta=2"]),
        &["eta", "[0, 1]"],
    );
}

#[test]
fn zero_bins_and_zero_batch() {
    assert_bad_input(
        &["simulate", "--process", "one_choice", "--n", "0", "--m", "10"],
        &["`n`", "--n", "1..="],
    );
    assert_bad_input(&sim(&["--process", "one_choice", "--batch", "0"]), &["--batch", ">= 1"]);
}

#[test]
fn bad_tie_break_and_other_flags() {
    assert_bad_input(
        &sim(&["--process", "two_choice", "--tie-break", "leftmost"]),
        &["tie_break", "leftmost", "random", "position"],
    );
    assert_bad_input(
        &sim(&["--process", "one_choice", "--weights", "gama"]),
        &["--weights", "did you mean `gamma`", "unit", "exp", "pareto"],
    );
    assert_bad_input(
        &sim(&["--process", "one_choice", "--weights", "gamma:shap=2"]),
        &["--weights", "shap", "shape"],
    );
    assert_bad_input(
        &sim(&["--process", "one_choice", "--weights", "uniform:low=3,high=1"]),
        &["weights.high", "`low`"],
    );
    assert_bad_input(
        &sim(&["--process", "one_choice", "--weights", "constant:w=1e300"]),
        &["total weight", "1e150"],
    );
    assert_bad_input(
        &sim(&["--process", "one_choice", "--weights", "exp", "--weight-mean", "0"]),
        &["`mean` of weight law `exp`", "> 0"],
    );
    assert_bad_input(
        &sim(&["--process", "one_choice", "--weight-mean", "2"]),
        &["--weight-mean", "--weights exp"],
    );
    assert_bad_input(&sim(&["--process", "one_choice", "--runs", "0"]), &["--runs"]);
    assert_bad_input(&["simulate", "--process", "one_choice", "--n", "10"], &["--m"]);
}

#[test]
fn noisy_comparison_processes_run_and_validate() {
    for (kind, param) in
        [("g_bounded", "g=2"), ("g_myopic", "g=1.5"), ("sigma_noisy_load", "sigma=2")]
    {
        let v = simulate_json(
            &["--process", kind, "--param", param, "--n", "100", "--m", "5000", "--runs", "2"],
            &[],
        );
        assert_eq!(v["samples_per_ball"], 2.0, "{kind}");
    }
    assert_bad_input(&sim(&["--process", "g_bounded", "--param", "g=-1"]), &["`g`", ">= 0"]);
    assert_bad_input(
        &sim(&["--process", "sigma_noisy_load", "--param", "sigma=1", "--param", "truncate=yes"]),
        &["truncate", "true or false"],
    );
}

#[test]
fn filling_and_memory_processes_run_and_validate() {
    for (kind, params) in [
        ("relative_threshold", vec!["f=1"]),
        ("twinning", vec![]),
        ("packing", vec![]),
        ("tight_packing", vec!["balls=2"]),
        ("memory", vec!["d=1", "k=1"]),
        ("caching", vec![]),
        ("always_go_left", vec!["d=2"]),
    ] {
        let mut args = vec!["--process", kind, "--n", "100", "--m", "5000", "--runs", "2"];
        for p in &params {
            args.extend_from_slice(&["--param", p]);
        }
        let v = simulate_json(&args, &[]);
        assert_eq!(v["process"], kind);
        assert_eq!(v["m"], 5000);
        // Balls per sample: above 1 exactly for the processes that place several balls per
        // sample; the inverse of samples per ball.
        let bps = v["balls_per_sample"].as_f64().unwrap();
        let spb = v["samples_per_ball"].as_f64().unwrap();
        assert!((bps * spb - 1.0).abs() < 1e-9, "{kind}: {bps} · {spb}");
        assert_eq!(bps > 1.0, matches!(kind, "twinning" | "packing" | "tight_packing"), "{kind}");
    }
    assert_bad_input(&sim(&["--process", "packing", "--weights", "exp"]), &["weights", "unit"]);
    assert_bad_input(&sim(&["--process", "always_go_left", "--param", "d=11"]), &["`d`"]);
}

#[test]
fn graphs_and_potentials_are_reported_and_deterministic() {
    let args = [
        "--process",
        "two_choice",
        "--graph",
        "regular:3",
        "--n",
        "1000",
        "--m",
        "20000",
        "--runs",
        "4",
        "--seed",
        "3",
        "--potential",
        "quadratic",
        "--potential",
        "hyperbolic:alpha=0.5",
    ];
    let a = simulate_text(&args, &[]);
    let b = simulate_text(&args, &[("RAYON_NUM_THREADS", "1")]);
    assert_eq!(without_timing(&a), without_timing(&b));
    let v: Value = serde_json::from_str(&a).expect("valid JSON");
    assert_eq!(v["graph"]["vertices"], 1000);
    assert_eq!(v["graph"]["edges"], 1500);
    assert_eq!(v["engine"], "bins");
    // Υ = Σ y_i² is at least the squared gap and finite; Γ ≥ 2n.
    assert!(v["potentials"]["quadratic"]["mean"].as_f64().expect("number") > 0.0);
    assert!(v["potentials"]["hyperbolic:alpha=0.5"]["mean"].as_f64().expect("number") >= 2000.0);
    // A random 3-regular graph has a larger gap than the complete graph (ballast-graph's
    // topology table: about 4 vs 2 at n = 1000); the graph really is used.
    let complete = simulate_json(
        &[
            "--process",
            "two_choice",
            "--graph",
            "complete",
            "--n",
            "1000",
            "--m",
            "20000",
            "--runs",
            "4",
        ],
        &[],
    );
    assert!(v["gap"]["mean"].as_f64() > complete["gap"]["mean"].as_f64(), "{v} vs {complete}");
}

#[test]
fn bad_graphs_and_potentials_are_bad_input() {
    let two = ["--process", "two_choice"];
    let with = |extra: [&'static str; 2]| sim(&[two[0], two[1], extra[0], extra[1]]);
    assert_bad_input(&with(["--potential", "exponential"]), &["alpha", "--potential"]);
    assert_bad_input(&with(["--potential", "nope"]), &["exponential", "quadratic", "--potential"]);
    assert_bad_input(&with(["--graph", "moebius"]), &["--graph", "cycle"]);
}

/// `min_load` and `underload` (W/n − min) are statistics of every allocation run, on both
/// engines: with unit weights the mean underload is m/n minus the mean min load, exactly,
/// and one bin holds every ball (min = max = m, underload 0).
#[test]
fn min_load_and_underload_are_reported_on_both_engines() {
    for engine in ["bins", "levels"] {
        let v = simulate_json(
            &[
                "--process",
                "two_choice",
                "--n",
                "50",
                "--m",
                "5000",
                "--runs",
                "6",
                "--engine",
                engine,
            ],
            &[],
        );
        let stat = |k: &str| v["statistics"][k]["mean"].as_f64().unwrap();
        let (min, under) = (stat("min_load"), stat("underload"));
        assert!((under - (100.0 - min)).abs() < 1e-9, "{engine}: {min} {under}");
        assert!(min > 90.0 && min <= 100.0, "{engine}: min load {min}");
    }
    let one = simulate_json(&["--process", "one_choice", "--n", "1", "--m", "77"], &[]);
    assert_eq!(one["statistics"]["min_load"]["mean"], 77.0);
    assert_eq!(one["statistics"]["underload"]["mean"], 0.0);
}

#[test]
fn the_max_load_distribution_is_the_runs_max_loads() {
    let v = simulate_json(
        &["--process", "two_choice", "--n", "100", "--m", "1000", "--runs", "40", "--seed", "5"],
        &[],
    );
    let d = v["max_load_distribution"].as_object().expect("an object of value → fraction");
    let total: f64 = d.values().map(|f| f.as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-12, "fractions sum to {total}");
    // Unit balls: the max loads are integers, so the distribution's mean is the mean max load.
    let mean: f64 = d.iter().map(|(k, f)| k.parse::<f64>().unwrap() * f.as_f64().unwrap()).sum();
    let reported = v["statistics"]["max_load"]["mean"].as_f64().unwrap();
    assert!((mean - reported).abs() < 1e-9, "{mean} against {reported}");
    assert!(d.len() >= 2, "40 runs of Two-Choice at n = 100 see more than one max load: {d:?}");
}

#[test]
fn observation_points_give_the_trajectories() {
    let v = simulate_json(
        &["--process", "two_choice", "--n", "100", "--m", "1000", "--runs", "4", "--batch", "100"],
        &[],
    );
    let t = v["trajectories"].as_object().expect("trajectories");
    for key in ["gap", "max_load", "min_load"] {
        let points = t[key].as_array().unwrap_or_else(|| panic!("no {key} trajectory"));
        assert_eq!(points.len(), 10, "{key}: one point per batch");
        let last = points.last().unwrap();
        assert_eq!(last["balls_per_bin"].as_f64(), Some(10.0));
    }
    // The last point of the gap trajectory is the final gap.
    let last_gap = t["gap"].as_array().unwrap().last().unwrap()["mean"].as_f64().unwrap();
    assert!((last_gap - v["gap"]["mean"].as_f64().unwrap()).abs() < 1e-12);
    let none = simulate_json(&["--process", "two_choice", "--n", "100", "--m", "1000"], &[]);
    assert!(none["trajectories"].as_object().unwrap().is_empty());
}
