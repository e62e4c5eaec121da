//! Bin capacities through the front ends: a series' `capacities = { kind = … }` in a config
//! (parameters as formulas of the grid, a capacity file relative to the config), `ballast
//! simulate --capacities`, `ballast list` and the embed entry point of the Python package.
//! Bad laws, parameters and files exit with code 2, name the place (file:line:column in a
//! config, file and line in a capacity file) and write nothing.

mod common;
use common::{ok, run_in, scratch};

const CONFIG: &str = r#"title = "Capacities (test)"
seed = 5
runs = 4
x = { variable = "f", label = "capacity factor" }
grid = { f = [1, 8] }
point = { n = 40, m = 4000 }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
capacities = { kind = "two_class", fraction = 0.5, factor = "f" }

[[series]]
name = "proportional"
process = { kind = "two_choice" }
capacities = { kind = "file", path = "c.txt", sampling = "proportional" }
"#;

/// 40 capacities: bins 1–20 have capacity 8, the others 1.
fn capacity_file() -> String {
    let mut s = String::from("# two classes\n");
    for i in 0..40 {
        s.push_str(if i < 20 { "8\n" } else { "1 # small\n" });
    }
    s
}

fn rejected(name: &str, config: &str, caps: &str, needles: &[&str]) {
    let dir = scratch("cli-capacities", name);
    std::fs::write(dir.join("configs/demo/bad.toml"), config).unwrap();
    std::fs::write(dir.join("configs/demo/c.txt"), caps).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/bad.toml", "--out", "out"]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{name}: stderr {err}");
    for n in needles {
        assert!(err.contains(n), "{name}: `{n}` not in stderr:\n{err}");
    }
    assert!(!err.contains("# small"), "{name}: the file's text leaked:\n{err}");
    assert!(!dir.join("out").exists(), "{name}: outputs written despite the error");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn value(csv: &str, series: &str, x: &str) -> f64 {
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "value").unwrap();
    let line = csv
        .lines()
        .find(|l| l.starts_with(&format!("{series},")) && l.contains(&format!(",{x},max_gap,")))
        .unwrap_or_else(|| panic!("no row {series} {x} in\n{csv}"));
    line.split(',').nth(at).unwrap().parse().unwrap()
}

#[test]
fn a_config_with_capacities_runs() {
    let dir = scratch("cli-capacities", "good");
    std::fs::write(dir.join("configs/demo/good.toml"), CONFIG).unwrap();
    std::fs::write(dir.join("configs/demo/c.txt"), capacity_file()).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/good.toml", "--out", "out"]);
    ok(&o);
    let csv = std::fs::read_to_string(dir.join("out/demo/good.csv")).unwrap();
    // Uniform sampling, factor 8: the large half can take at most 3/4 of the balls but needs
    // 8/9, so the small bins end near m/(2n) = 50 against an average 2m/(9n) ≈ 22 (gap ≈ 28);
    // factor 1 is classical Two-Choice (gap about 2). Proportional sampling stays balanced.
    assert!(value(&csv, "Two-Choice", "8") > 20.0, "{csv}");
    assert!(value(&csv, "Two-Choice", "1") < 5.0, "{csv}");
    assert!(value(&csv, "proportional", "8") < 5.0, "{csv}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_capacities_exit_2_at_their_place() {
    let c = capacity_file();
    rejected(
        "kind",
        &CONFIG.replace("kind = \"two_class\"", "kind = \"two_klass\""),
        &c,
        &["configs/demo/bad.toml:11:", "unknown capacity law `two_klass`", "did you mean"],
    );
    rejected(
        "param",
        &CONFIG.replace("fraction = 0.5", "fractoin = 0.5"),
        &c,
        &["configs/demo/bad.toml:11:", "unknown parameter `fractoin`", "did you mean `fraction`"],
    );
    rejected(
        "range",
        &CONFIG.replace("factor = \"f\"", "factor = \"f - 1\""),
        &c,
        &["configs/demo/bad.toml:11:", "factor", "> 0"],
    );
    rejected(
        "choice",
        &CONFIG.replace("\"proportional\"", "\"weighted\""),
        &c,
        &["configs/demo/bad.toml:16:", "uniform, proportional"],
    );
    rejected(
        "process",
        &CONFIG.replace(
            "kind = \"two_choice\" }\ncapacities = { kind = \"two_class\"",
            "kind = \"always_go_left\", d = 2 }\ncapacities = { kind = \"two_class\"",
        ),
        &c,
        &["configs/demo/bad.toml:", "always_go_left", "does not take capacities"],
    );
    rejected(
        "levels",
        &CONFIG.replace("runs = 4", "runs = 4\nengine = \"levels\""),
        &c,
        &["configs/demo/bad.toml:", "the level engine needs bins of equal capacity"],
    );
    rejected(
        "file_line",
        CONFIG,
        &c.replacen("1 # small", "one", 1),
        &["configs/demo/bad.toml:16:", "c.txt`: line 22, column 1", "that is not a number"],
    );
    rejected(
        "file_zero",
        CONFIG,
        &c.replacen("1 # small", "0", 1),
        &["configs/demo/bad.toml:16:", "line 22", "finite number > 0"],
    );
    rejected(
        "file_length",
        CONFIG,
        "1\n2\n",
        &["2 capacities for n = 40 bins", "one capacity per bin"],
    );
    rejected(
        "path_missing",
        &CONFIG.replace("path = \"c.txt\", ", ""),
        &c,
        &["configs/demo/bad.toml:16:", "needs `path`"],
    );
    rejected(
        "loads_statistic",
        &CONFIG.replace("factor = \"f\" }", "factor = \"f\" }\nstatistic = \"load_distribution\""),
        &c,
        &["configs/demo/bad.toml:", "normalised loads"],
    );
}

#[test]
fn simulate_takes_capacities_and_names_them() {
    let dir = scratch("cli-capacities", "simulate");
    std::fs::write(dir.join("c.txt"), capacity_file()).unwrap();
    let base = ["simulate", "--process", "two_choice", "--n", "40", "--m", "4000", "--runs", "3"];
    let json = |extra: &[&str]| -> serde_json::Value {
        let o = run_in(&dir, &[&base[..], &["--json"], extra].concat());
        ok(&o);
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let v = json(&["--capacities", "two_class:factor=8,sampling=proportional"]);
    assert_eq!(v["engine"], "bins");
    assert!(v["capacities"].as_str().unwrap().contains("two_class"), "{v}");
    // The file of the same capacities gives the same runs.
    let f = json(&["--capacities", "file:path=c.txt,sampling=proportional"]);
    assert_eq!(f["gap"], v["gap"]);
    // Without capacities the report has no `capacities` key (the output is as before), and
    // capacities all 1 place the balls of the classical bin-engine run.
    let plain = json(&["--engine", "bins"]);
    assert!(plain.get("capacities").is_none(), "{plain}");
    let ones = json(&["--capacities", "two_class:factor=1"]);
    assert_eq!(ones["gap"], plain["gap"]);
    let o =
        run_in(&dir, &[&base[..], &["--print-config", "--capacities", "file:path=c.txt"]].concat());
    ok(&o);
    let cfg = String::from_utf8_lossy(&o.stdout);
    assert!(cfg.contains("[series.capacities]") || cfg.contains("capacities"), "{cfg}");
    assert!(cfg.contains("c.txt"), "{cfg}");
    for (arg, needle) in [
        ("lognormal:mu=1", "unknown parameter `mu` for capacity law `lognormal`"),
        ("lognormale", "did you mean `lognormal`"),
        ("file", "needs `path=FILE`"),
        ("file:path=none.txt", "none.txt"),
        ("two_class", "needs parameter `factor`"),
        ("uniform:low=2,high=1", "capacities.high"),
    ] {
        let o = run_in(&dir, &[&base[..], &["--capacities", arg]].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains(needle), "{arg}: `{needle}` not in {err}");
    }
    for extra in [
        &["--engine", "levels"][..],
        &["--graph", "cycle"][..],
        &["--tau", "5"][..],
        &["--process", "equalize"][..],
    ] {
        let o = run_in(&dir, &[&base[..], &["--capacities", "two_class:factor=2"], extra].concat());
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn list_shows_the_capacity_laws() {
    let dir = scratch("cli-capacities", "list");
    let o = run_in(&dir, &["list"]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    let section = text.split("Capacities (--capacities").nth(1).expect("a Capacities section");
    for law in ["two_class", "uniform", "lognormal", "file"] {
        assert!(section.contains(&format!("  {law}")), "{law}");
    }
    assert!(section.contains("decide") && section.contains("proportional"), "{section}");
    let v = ballast_cli::embed::list();
    assert_eq!(v["capacities"].as_array().unwrap().len(), ballast_core::registry::CAPACITIES.len());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The Python package maps keywords onto the options clap declares: `capacities` is one,
/// and the embed entry point runs it.
#[test]
fn the_embed_entry_point_takes_capacities() {
    let opts = ballast_cli::embed::simulate_options();
    assert!(opts.iter().any(|o| o.id == "capacities" && o.long == "capacities"));
    let v = ballast_cli::embed::simulate(&[
        "--process",
        "one_plus_beta",
        "--param",
        "beta=0.5",
        "--n",
        "40",
        "--m",
        "400",
        "--runs",
        "2",
        "--capacities",
        "lognormal:sigma=0.5",
    ])
    .unwrap();
    assert!(v["capacities"].as_str().unwrap().starts_with("lognormal"), "{v}");
}
