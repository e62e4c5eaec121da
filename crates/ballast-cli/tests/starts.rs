//! `ballast simulate --start` and `--recovery-target`, the `empty_bins` statistic and the
//! start states of `ballast list`: values through the runner's pipeline, bad input exits 2
//! with the registry's message and prints nothing.

mod common;

use common::{assert_bad_input, ballast, simulate_json};

#[test]
fn a_start_and_its_recovery_time_on_both_engines() {
    for engine in ["bins", "levels"] {
        let v = simulate_json(&[
            "--process",
            "two_choice",
            "--n",
            "10",
            "--m",
            "1000",
            "--runs",
            "5",
            "--start",
            "uniform:k=3",
            "--recovery-target",
            "100",
            "--engine",
            engine,
        ]);
        let stat = |k: &str| v["statistics"][k]["mean"].as_f64().unwrap();
        // A uniform start has gap 0: recovered at 0 balls; W/n = 3 + 100.
        assert_eq!(stat("recovery_time"), 0.0, "{engine}");
        assert!(stat("min_load") >= 3.0 && stat("underload") > 0.0, "{engine}: {v}");
        assert_eq!(stat("empty_bins"), 0.0, "{engine}");
    }
    // From one heavy bin the recovery takes balls; the other bins empty at first.
    let v = simulate_json(&[
        "--process",
        "two_choice",
        "--n",
        "20",
        "--m",
        "30",
        "--runs",
        "4",
        "--start",
        "one_bin:balls=100",
        "--recovery-target",
        "2",
    ]);
    let stat = |k: &str| v["statistics"][k]["mean"].as_f64().unwrap();
    assert_eq!(stat("recovery_time"), 30.0, "censored at m: {v}");
    assert!(stat("empty_bins") > 0.0, "{v}");
}

#[test]
fn file_starts_and_the_one_point_config() {
    let dir = std::env::temp_dir().join(format!("ballast-cli-starts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("loads.txt");
    std::fs::write(&file, "4\n0\n0\n").unwrap();
    let start = format!("file:path={}", file.display());
    let v = simulate_json(&["--process", "two_choice", "--n", "3", "--m", "2", "--start", &start]);
    // W = 6 on 3 bins: the max stays 4, so the gap is 4 - 2.
    assert_eq!(v["gap"]["mean"].as_f64(), Some(2.0), "{v}");
    let o = ballast(&[
        "simulate",
        "--process",
        "two_choice",
        "--n",
        "3",
        "--m",
        "2",
        "--start",
        &start,
        "--print-config",
    ]);
    let config = String::from_utf8_lossy(&o.stdout);
    assert!(config.contains("kind = \"file\"") && config.contains("loads.txt"), "{config}");
    std::fs::write(&file, "4\nx\n0\n").unwrap();
    assert_bad_input(
        &["simulate", "--process", "two_choice", "--n", "3", "--m", "2", "--start", &start],
        &["loads.txt`: line 2, column 1", "that is not a load"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_starts_are_bad_input() {
    let sim = |extra: &[&'static str]| {
        let mut v = vec!["simulate", "--process", "two_choice", "--n", "10", "--m", "100"];
        v.extend_from_slice(extra);
        v
    };
    assert_bad_input(&sim(&["--start", "unifrom:k=2"]), &["did you mean `uniform`", "one_bin"]);
    assert_bad_input(&sim(&["--start", "uniform:kk=2"]), &["did you mean `k`"]);
    assert_bad_input(&sim(&["--start", "uniform"]), &["needs parameter `k`"]);
    assert_bad_input(&sim(&["--start", "uniform:k=2", "--weights", "exp"]), &["start", "weighted"]);
    assert_bad_input(&sim(&["--start", "uniform:k=2", "--tau", "4"]), &["start", "delay"]);
    assert_bad_input(&sim(&["--recovery-target", "nan"]), &["finite"]);
    // Potentials start from the start state; with a recovery target they are refused (each
    // needs its own observer of the runs).
    assert_bad_input(
        &sim(&["--recovery-target", "3", "--potential", "quadratic"]),
        &["--potential", "--recovery-target"],
    );
    // Round-based models take starts (their own rule: RBB keeps its m balls).
    assert_bad_input(
        &[
            "simulate",
            "--process",
            "rbb",
            "--n",
            "10",
            "--m",
            "100",
            "--rounds",
            "10",
            "--start",
            "uniform:k=1",
        ],
        &["start", "exactly m balls"],
    );
}

#[test]
fn list_shows_the_start_states() {
    let o = ballast(&["list"]);
    let text = String::from_utf8_lossy(&o.stdout);
    for kind in ["uniform", "one_bin", "random", "file"] {
        assert!(text.contains(&format!("  {kind}")), "{kind} not listed: {text}");
    }
    assert!(text.contains("Start states"), "{text}");
    let v = ballast_cli::embed::list();
    assert_eq!(v["starts"].as_array().map(Vec::len), Some(5), "{v}");
}

#[test]
fn leaky_bins_recover_from_a_start() {
    // 400 balls in one bin drain at one ball per round, so the discrepancy cannot be down to 5
    // before round 390 or so; the arrivals (λ = 0.8, Two-Choice) keep the others near 4.
    let v = simulate_json(&[
        "--process",
        "leaky_bins",
        "--n",
        "100",
        "--lambda",
        "0.8",
        "--param",
        "d=2",
        "--rounds",
        "2000",
        "--runs",
        "4",
        "--start",
        "one_bin:balls=400",
        "--recovery-target",
        "5",
    ]);
    let r = v["statistics"]["recovery_rounds"]["mean"].as_f64().expect("recovery_rounds");
    assert!((380.0..2000.0).contains(&r), "recovery after {r} rounds");
}
