//! The library API of the command line (`ballast_cli::embed`, used by the Python package)
//! against the binary: same numbers for the same arguments, same error kinds, same listing.

mod common;

use ballast_cli::embed::{self, ErrorKind};
use serde_json::Value;

/// The report without the fields that measure time.
fn untimed(mut v: Value) -> Value {
    let obj = v.as_object_mut().expect("a JSON object");
    obj.remove("ns_per_ball");
    obj.remove("wall_s");
    v
}

/// `ballast simulate --json ARGS` from the binary.
fn binary(args: &[&str]) -> Value {
    let dir = std::env::temp_dir();
    let all = [&["simulate", "--json"][..], args].concat();
    let o = common::run_in(&dir, &all);
    common::ok(&o);
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

#[test]
fn simulate_gives_the_binary_report() {
    for args in [
        &[
            "--process",
            "d_choice",
            "--param",
            "d=3",
            "--n",
            "200",
            "--m",
            "2000",
            "--runs",
            "5",
            "--seed",
            "9",
        ][..],
        &[
            "--process",
            "one_plus_beta",
            "--param",
            "beta=0.5",
            "--n",
            "64",
            "--m",
            "640",
            "--batch",
            "32",
            "--runs",
            "3",
        ],
        &[
            "--process",
            "two_choice",
            "--n",
            "50",
            "--m",
            "500",
            "--graph",
            "cycle",
            "--potential",
            "quadratic",
            "--runs",
            "2",
        ],
        &["--process", "rbb", "--n", "20", "--m", "40", "--rounds", "50", "--runs", "2"],
        &["--offline", "2", "--n", "30", "--m", "60", "--runs", "2"],
    ] {
        let lib = embed::simulate(args).unwrap_or_else(|e| panic!("{args:?}: {e:#}"));
        // Both through the same text parser (serde_json rounds some digits when parsing).
        let lib: Value = serde_json::from_str(&lib.to_string()).unwrap();
        // Every run's values and the runs over time, in both (an allocation process's).
        let obj = lib.as_object().unwrap();
        let allocation = obj.contains_key("gap");
        let per_run = obj.get("per_run").cloned();
        let trajectory = obj.get("trajectory");
        assert_eq!(per_run.is_some() && trajectory.is_some(), allocation, "{args:?}");
        if let Some(Value::Object(p)) = per_run {
            let runs = obj["runs"].as_u64().unwrap() as usize;
            assert!(p.values().all(|v| v.as_array().is_some_and(|a| a.len() == runs)));
            let gaps: Vec<f64> =
                p["final_gap"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            let mean = gaps.iter().sum::<f64>() / runs as f64;
            assert!((mean - obj["gap"]["mean"].as_f64().unwrap()).abs() < 1e-12, "{args:?}");
        }
        assert_eq!(untimed(lib), untimed(binary(args)), "{args:?}");
    }
}

/// With observation points the trajectory has every run at every point, and its last point
/// is each run's final gap.
#[test]
fn simulate_gives_each_run_over_time() {
    let args = ["--process", "two_choice", "--n", "100", "--m", "1000", "--observe-every", "250"];
    let args = [&args[..], &["--runs", "3"]].concat();
    let v = embed::simulate(&args).unwrap();
    let t = &v["trajectory"];
    assert_eq!(t["balls_per_bin"], serde_json::json!([2.5, 5.0, 7.5, 10.0]));
    let gap = t["columns"]["gap"].as_array().unwrap();
    assert_eq!(gap.len(), 4);
    assert_eq!(gap[3], v["per_run"]["final_gap"]);
    assert!(t["columns"]["max_load"].as_array().is_some_and(|a| a.len() == 4));
}

#[test]
fn print_config_is_the_config_text() {
    let v =
        embed::simulate(&["--process", "two_choice", "--n", "10", "--m", "20", "--print-config"])
            .unwrap();
    let text = v.as_str().expect("a string");
    assert!(text.contains("seed_item = \"simulate\"") && text.contains("n = [10]"), "{text}");
}

#[test]
fn errors_keep_their_kind_and_message() {
    let e = embed::simulate(&["--process", "two_choise", "--n", "10", "--m", "20"]).unwrap_err();
    assert_eq!(embed::error_kind(&e), ErrorKind::BadInput);
    assert!(e.to_string().contains("did you mean `two_choice`"), "{e}");
    let e = embed::simulate(&["--process", "two_choice", "--n", "10", "--runs", "0"]).unwrap_err();
    assert_eq!(embed::error_kind(&e), ErrorKind::BadInput);
    assert!(!e.to_string().starts_with("error:") && !e.to_string().contains("--help"), "{e}");
    let e = embed::run(&["/nonexistent/x.toml"], false).unwrap_err();
    assert_eq!(embed::error_kind(&e), ErrorKind::BadInput);
    assert!(e.to_string().contains("not found"), "{e}");
}

#[test]
fn options_are_the_clap_arguments() {
    let opts = embed::simulate_options();
    let find = |id: &str| opts.iter().find(|o| o.id == id).unwrap_or_else(|| panic!("{id}"));
    assert_eq!(find("potentials").long, "potential");
    assert_eq!(find("potentials").takes, "list");
    assert_eq!(find("params").long, "param");
    assert_eq!(find("print_config").takes, "flag");
    assert_eq!(find("runs").default, ["1"]);
    assert_eq!(find("engine").choices, ["auto", "bins", "levels"]);
    assert!(opts.iter().all(|o| o.id != "help"));
}

#[test]
fn run_returns_the_item_without_writing() {
    let dir = common::scratch("embed", "run");
    let config = dir.join("configs/demo/one.toml");
    std::fs::write(
        &config,
        "title = \"demo\"\nseed = 3\nruns = 2\nx = { variable = \"n\" }\ngrid = { n = [10, 20] }\n\
         point = { m = 50 }\n[[series]]\nname = \"Two\"\nprocess = { kind = \"two_choice\" }\n",
    )
    .unwrap();
    let out = dir.join("out");
    let argv = [config.to_str().unwrap(), "--no-checkpoint", "--out", out.to_str().unwrap()];
    let r = embed::run(&argv, false).unwrap();
    assert_eq!(r.id, "demo/one");
    assert_eq!(r.result.rows.len(), 2);
    assert!(r.written.is_empty() && !out.exists());
    let r = embed::run(&argv, true).unwrap();
    assert!(r.written.iter().any(|p| p.ends_with("demo/one.csv")), "{:?}", r.written);
    let csv = std::fs::read_to_string(out.join("demo/one.csv")).unwrap();
    assert_eq!(csv, r.result.to_csv());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn list_has_every_registry_entry() {
    let v = embed::list();
    let names = |key: &str| -> Vec<String> {
        v[key].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_owned()).collect()
    };
    let kinds: Vec<&str> = ballast_core::registry::PROCESSES.iter().map(|p| p.name).collect();
    assert_eq!(names("processes"), kinds);
    let models: Vec<&str> = ballast_dynamic::registry::MODELS.iter().map(|m| m.name).collect();
    assert_eq!(names("models"), models);
    assert_eq!(names("engines"), ["auto", "bins", "levels"]);
    let text = embed::list_text();
    for p in v["processes"].as_array().unwrap() {
        for param in p["params"].as_array().unwrap() {
            assert!(text.contains(param["doc"].as_str().unwrap()), "{param}");
        }
    }
    let stats: Vec<&str> =
        ballast_runner::Statistic::allocation().iter().map(|s| s.name()).collect();
    assert_eq!(names("statistics"), stats);
    let measures: Vec<&str> = ballast_runner::Statistic::ALL
        .iter()
        .filter(|m| m.kinds() != [ballast_runner::Kind::Allocation])
        .map(|m| m.name())
        .collect();
    assert_eq!(names("measures"), measures);
    let potentials: Vec<&str> = ballast_potential::POTENTIALS.iter().map(|k| k.name).collect();
    assert_eq!(names("potentials"), potentials);
    let stops: Vec<&str> = ballast_core::Stop::ALL.iter().map(|(n, _)| *n).collect();
    assert_eq!(names("stops"), stops);
    use ballast_core::delay::DelayMode;
    let modes = names("delay_modes");
    assert_eq!(modes, [DelayMode::Random.name(), DelayMode::Adversarial.name()]);
    assert!(modes.iter().all(|m| DelayMode::from_name(m).is_ok()));
    assert_eq!(names("settings"), ["sequential", "batched", "delay"]);
    // Each entry's name and meaning is a line of the text, so the two cannot drift apart.
    for key in ["settings", "delay_modes", "stops", "statistics", "measures", "potentials"] {
        for e in v[key].as_array().unwrap() {
            let line =
                format!("{:<23} {}", e["name"].as_str().unwrap(), e["doc"].as_str().unwrap());
            assert!(text.contains(&line), "{key}: {line}");
        }
    }
    assert!(text.contains(v["offline"]["doc"].as_str().unwrap()));
    assert!(v["offline"]["form"].as_str().unwrap().contains("--offline D"));
}
