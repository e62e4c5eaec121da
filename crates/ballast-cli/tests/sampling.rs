//! Biased bin sampling through the front ends: a series' `sampling = { kind = … }` in a
//! config (with a weight file relative to the config), `ballast simulate --sampling`, and
//! `ballast list`. Bad laws and parameters exit with code 2, name the place (file:line:column
//! in a config, file and line in a weight file) and write nothing.

mod common;
use common::{ok, run_in, scratch};

const CONFIG: &str = r#"title = "Biased sampling (test)"
seed = 3
runs = 4
x = { variable = "k", label = "m/n", log = true }
grid = { k = [10, 100] }
point = { n = 40, m = "k*n" }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
sampling = { kind = "two_class", fraction = 0.5, factor = 4 }
theory = "k*((0.8^2)/0.5 - 1)"

[[series]]
name = "Memory"
process = { kind = "memory", d = 1, k = 1 }
sampling = { kind = "file", path = "w.txt" }

[[series]]
name = "uniform"
process = { kind = "two_choice" }
"#;

/// 40 weights: bins 1–20 weigh 4, the others 1 (the two-class law of the first series).
fn weight_file() -> String {
    let mut s = String::from("# two classes\n");
    for i in 0..40 {
        s.push_str(if i < 20 { "4\n" } else { "1 # light\n" });
    }
    s
}

fn rejected(name: &str, config: &str, weights: &str, needles: &[&str]) {
    let dir = scratch("cli-sampling", name);
    std::fs::write(dir.join("configs/demo/bad.toml"), config).unwrap();
    std::fs::write(dir.join("configs/demo/w.txt"), weights).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/bad.toml", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{name}: stderr {err}");
    for n in needles {
        assert!(err.contains(n), "{name}: `{n}` not in stderr:\n{err}");
    }
    assert!(!dir.join("out").exists(), "{name}: outputs written despite the error");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_config_with_sampling_runs_and_the_law_shows() {
    let dir = scratch("cli-sampling", "good");
    std::fs::write(dir.join("configs/demo/good.toml"), CONFIG).unwrap();
    std::fs::write(dir.join("configs/demo/w.txt"), weight_file()).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/good.toml", "--out", "out"]);
    ok(&o);
    let csv = std::fs::read_to_string(dir.join("out/demo/good.csv")).unwrap();
    let gap = |series: &str, k: &str| -> f64 {
        let line = csv
            .lines()
            .find(|l| l.starts_with(&format!("{series},")) && l.contains(&format!(",{k},max_gap,")))
            .unwrap_or_else(|| panic!("no row {series} {k} in\n{csv}"));
        let cols: Vec<&str> = line.split(',').collect();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let at = header.iter().position(|h| *h == "value").unwrap();
        cols[at].parse().unwrap()
    };
    // The bias grows Two-Choice's gap about linearly (theory 28 at m/n = 100), not Memory's,
    // nor uniform Two-Choice's.
    assert!(gap("Two-Choice", "100") > 15.0, "{csv}");
    assert!(gap("Memory", "100") < 8.0, "{csv}");
    assert!(gap("uniform", "100") < 5.0, "{csv}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_laws_and_parameters_exit_2_at_their_place() {
    let w = weight_file();
    rejected(
        "kind",
        &CONFIG.replace("kind = \"two_class\"", "kind = \"two_klass\""),
        &w,
        &[
            "configs/demo/bad.toml:11:",
            "unknown sampling law `two_klass`",
            "did you mean `two_class`",
        ],
    );
    rejected(
        "param",
        &CONFIG.replace("fraction = 0.5", "fractoin = 0.5"),
        &w,
        &["configs/demo/bad.toml:11:", "unknown parameter `fractoin`", "did you mean `fraction`"],
    );
    rejected(
        "range",
        &CONFIG.replace("factor = 4", "factor = 0"),
        &w,
        &["configs/demo/bad.toml:11:", "sampling.factor", "> 0"],
    );
    rejected(
        "no_kind",
        &CONFIG.replace("kind = \"two_class\", ", ""),
        &w,
        &["configs/demo/bad.toml:11:", "needs `kind`", "two_class, zipf, file"],
    );
    rejected(
        "process",
        &CONFIG.replace("kind = \"memory\", d = 1, k = 1", "kind = \"always_go_left\", d = 2"),
        &w,
        &["configs/demo/bad.toml:", "always_go_left", "supports uniform sampling only"],
    );
    rejected(
        "levels",
        &CONFIG.replace("runs = 4", "runs = 4\nengine = \"levels\""),
        &w,
        &["configs/demo/bad.toml:", "the level engine needs uniform bin sampling"],
    );
    rejected(
        "file_line",
        CONFIG,
        &w.replacen("1 # light", "one", 1),
        &["configs/demo/bad.toml:17:", "w.txt`: line 22, column 1", "that is not a number"],
    );
    rejected("file_length", CONFIG, "1\n2\n", &["2 weights for n = 40 bins", "one weight per bin"]);
    rejected(
        "file_missing",
        &CONFIG.replace("w.txt", "nowhere.txt"),
        &w,
        &["configs/demo/bad.toml:17:", "nowhere.txt"],
    );
    rejected(
        "path_missing",
        &CONFIG.replace(", path = \"w.txt\"", ""),
        &w,
        &["configs/demo/bad.toml:17:", "needs `path`"],
    );
}

#[test]
fn simulate_takes_sampling_and_names_it() {
    let dir = scratch("cli-sampling", "simulate");
    std::fs::write(dir.join("w.txt"), weight_file()).unwrap();
    let base = ["simulate", "--process", "two_choice", "--n", "40", "--m", "4000", "--runs", "3"];
    let json = |extra: &[&str]| -> serde_json::Value {
        let o = run_in(&dir, &[&base[..], &["--json"], extra].concat());
        ok(&o);
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let v = json(&["--sampling", "two_class:fraction=0.5,factor=4"]);
    assert_eq!(v["sampling"], "two_class");
    assert_eq!(v["sampling_params"]["factor"], 4.0);
    assert_eq!(v["engine"], "bins");
    let biased = v["gap"]["mean"].as_f64().unwrap();
    // The file of the same law gives the same runs (the same probabilities, the same table).
    let f = json(&["--sampling", "file:path=w.txt"]);
    assert_eq!(f["sampling"], "file");
    assert_eq!(f["gap"], v["gap"]);
    let u = json(&[]);
    assert_eq!(u["sampling"], "uniform");
    assert!(biased > u["gap"]["mean"].as_f64().unwrap() + 5.0, "{biased} vs {u}");
    // --print-config writes the law into the series, the file by its absolute path.
    let o =
        run_in(&dir, &[&base[..], &["--print-config", "--sampling", "file:path=w.txt"]].concat());
    ok(&o);
    let cfg = String::from_utf8_lossy(&o.stdout);
    assert!(cfg.contains("kind = \"file\"") && cfg.contains("w.txt"), "{cfg}");
    for (arg, needle) in [
        ("zipf:t=1", "unknown parameter `t` for sampling law `zipf`"),
        ("zipff", "did you mean `zipf`"),
        ("file", "needs `path=FILE`"),
        ("file:path=none.txt", "none.txt"),
        ("two_class:fraction=0.5", "needs parameter `factor`"),
    ] {
        let o = run_in(&dir, &[&base[..], &["--sampling", arg]].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(needle), "{arg}: `{needle}` not in {err}");
    }
    let o = run_in(&dir, &[&base[..], &["--sampling", "zipf", "--engine", "levels"]].concat());
    assert_eq!(o.status.code(), Some(2));
    let o = run_in(&dir, &[&base[..], &["--sampling", "zipf", "--graph", "cycle"]].concat());
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn list_shows_the_laws_and_which_processes_take_them() {
    let dir = scratch("cli-sampling", "list");
    let o = run_in(&dir, &["list"]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("Sampling laws (--sampling"), "{text}");
    for law in ["two_class", "zipf", "file"] {
        assert!(text.contains(&format!("  {law}")), "{law}");
    }
    let agl = text.split("  always_go_left").nth(1).unwrap();
    assert!(agl.lines().any(|l| l.contains("sampling:") && l.contains("uniform only")), "{agl}");
    // The structured listing (what Python's `ballast.list()` returns).
    let v = ballast_cli::embed::list();
    assert_eq!(v["sampling"].as_array().unwrap().len(), 4);
    let two =
        v["processes"].as_array().unwrap().iter().find(|p| p["name"] == "two_choice").unwrap();
    assert_eq!(two["sampling"].as_array().unwrap().len(), 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Python package maps keywords onto the options clap declares: `sampling` is one, and
/// the embed entry point runs it.
#[test]
fn the_embed_entry_point_takes_sampling() {
    let opts = ballast_cli::embed::simulate_options();
    assert!(opts.iter().any(|o| o.id == "sampling" && o.long == "sampling"));
    let v = ballast_cli::embed::simulate(&[
        "--process",
        "two_choice",
        "--n",
        "40",
        "--m",
        "400",
        "--runs",
        "2",
        "--sampling",
        "zipf:s=1",
    ])
    .unwrap();
    assert_eq!(v["sampling"], "zipf");
}
