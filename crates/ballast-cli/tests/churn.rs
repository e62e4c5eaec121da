//! `ballast simulate --churn` and `--dispatchers`, their series tables in configs and their
//! section of `ballast list`: the values through the runner's pipeline equal those of the
//! printed one-point config run by `ballast run`; bad input exits 2 with the declaration's
//! message (a config's with file, line and column) and prints nothing.

mod common;

use common::{assert_bad_input, ballast, simulate_json};
use serde_json::Value;

const BASE: [&str; 8] = ["--process", "two_choice", "--n", "200", "--m", "20000", "--runs", "4"];

#[test]
fn churn_and_dispatchers_reach_the_runs_and_their_description() {
    let plain = simulate_json(&BASE);
    let mut args = BASE.to_vec();
    args.extend(["--churn", "every=100,join_at=empty,leaving=heaviest"]);
    let churn = simulate_json(&args);
    assert_eq!(
        churn["churn"].as_str(),
        Some("every=100,leave=1,join=1,join_at=empty,leaving=heaviest,balls=lost")
    );
    assert!(plain.get("churn").is_none(), "no churn key without churn: {plain}");
    // The heaviest bin leaves every 100 balls and an empty one joins: the maximum stays
    // lower than without churn, and empty bins are present.
    let stat = |v: &Value, k: &str| {
        let s = if k == "gap" { &v[k] } else { &v["statistics"][k] };
        s["mean"].as_f64().unwrap()
    };
    assert!(stat(&churn, "max_load") < stat(&plain, "max_load"), "{churn}");
    let mut args = BASE.to_vec();
    args.extend(["--dispatchers", "k=16,tau=50"]);
    let herd = simulate_json(&args);
    assert_eq!(herd["dispatchers"].as_str(), Some("k=16,tau=50,assign=round_robin,own=true"));
    assert!(stat(&herd, "gap") > stat(&plain, "gap") + 1.0, "{herd} vs {plain}");
}

#[test]
fn the_printed_config_runs_to_the_same_values() {
    let dir = std::env::temp_dir().join(format!("ballast-churn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [["--churn", "every=300,join=2,join_at=average"], ["--dispatchers", "k=4,tau=20"]];
    for extra in cases {
        let mut args = vec!["simulate"];
        args.extend(BASE);
        args.extend(extra);
        let mut printed = args.clone();
        printed.push("--print-config");
        let o = ballast(&printed);
        assert!(o.status.success());
        let config = dir.join("churn").join("one.toml");
        std::fs::create_dir_all(config.parent().unwrap()).unwrap();
        std::fs::write(&config, &o.stdout).unwrap();
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(text.contains(&format!("[series.{}]", &extra[0][2..])), "{text}");
        // The same config path and output directory for both: the second run must not take
        // the first one's checkpoints (the checkpoint key holds churn and dispatchers).
        let out = dir.join("out");
        let r = ballast(&["run", config.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let csv = std::fs::read_to_string(out.join("churn").join("one.csv")).unwrap();
        let v = simulate_json(&args[1..]);
        let gap = v["gap"]["mean"].as_f64().unwrap();
        // The `value` column (the 7th) of the final gap's row.
        let row = csv.lines().find(|l| l.contains(",final_gap,")).expect("a final_gap row");
        let value: f64 =
            row.rsplit(",final_gap,").next().unwrap().split(',').next().unwrap().parse().unwrap();
        // The CSV keeps 9 significant digits.
        assert!((value - gap).abs() < 1e-7 * gap.abs().max(1.0), "{row} vs {gap}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn bad_churn_and_dispatchers_exit_2() {
    let with = |extra: &[&'static str]| {
        let mut a = vec!["simulate"];
        a.extend(BASE);
        a.extend(extra);
        a
    };
    assert_bad_input(&with(&["--churn", "every=10,jion=1"]), &["unknown parameter `jion`", "join"]);
    assert_bad_input(&with(&["--churn", "leave=1"]), &["needs parameter `every`"]);
    assert_bad_input(&with(&["--dispatchers", "k=2,assign=nearest"]), &["round_robin, random"]);
    assert_bad_input(&with(&["--dispatchers", "k=2", "--churn", "every=5"]), &["cannot be used"]);
    assert_bad_input(&with(&["--churn", "every=5", "--weights", "exp"]), &["unit weights only"]);
    assert_bad_input(
        &[
            "simulate",
            "--process",
            "quantile",
            "--param",
            "delta=0.5",
            "--n",
            "10",
            "--m",
            "10",
            "--churn",
            "every=5",
        ],
        &["reads ranks"],
    );
}

#[test]
fn a_config_with_an_unknown_churn_key_names_its_line_and_column() {
    let dir = std::env::temp_dir().join(format!("ballast-churn-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("bad.toml");
    let text =
        "title = \"t\"\nseed = 1\nruns = 2\nx = { variable = \"n\" }\ngrid = { n = [100] }\n\n\
                [point]\nn = \"n\"\nm = 1000\n\n[[series]]\nname = \"a\"\n\
                process = { kind = \"two_choice\" }\nchurn = { every = 10, jion = 1 }\n";
    std::fs::write(&config, text).unwrap();
    let out = dir.join("out");
    let args = ["run", config.to_str().unwrap(), "--out", out.to_str().unwrap()];
    assert_bad_input(&args, &["bad.toml:14:30", "unknown parameter `jion` for setting `churn`"]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_list_shows_both_declarations() {
    let o = ballast(&["list"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Churn and dispatchers"), "{text}");
    // The JSON of `ballast list` (Python's `ballast.list()`).
    let v = ballast_cli::embed::list();
    let names: Vec<&str> = v["churn_and_dispatchers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["churn", "dispatchers"]);
    let params = |i: usize| v["churn_and_dispatchers"][i]["params"].as_array().unwrap().len();
    assert_eq!(
        (params(0), params(1)),
        (ballast_core::CHURN.params.len(), ballast_core::DISPATCHERS.params.len())
    );
}
