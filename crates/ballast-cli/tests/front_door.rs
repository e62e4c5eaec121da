//! One front door: every process of the registry is reachable from `ballast simulate` and
//! from a config, both refuse an unknown parameter with the registry's message and exit 2
//! (a config writing nothing), and `simulate --seed S` gives the runs of the equivalent
//! one-point config.

mod common;

use common::{ok, run_in, scratch};

/// A one-point config of `process` (a TOML inline table) with `extra` series lines.
fn config(process: &str, extra: &str) -> String {
    format!(
        "title = \"t\"\nseed = 7\nseed_item = \"simulate\"\nruns = 4\n\
         x = {{ variable = \"n\" }}\ngrid = {{ n = [50] }}\npoint = {{ m = 500 }}\n\n\
         [[series]]\nname = \"s\"\nprocess = {process}\nstatistic = \"final_gap\"\n{extra}"
    )
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The required parameters of an entry as `key=value` pairs, plus its example ones.
fn example_params(def: &ballast_core::registry::ProcessDef) -> Vec<(String, String)> {
    use ballast_core::registry::{ParamDefault, ParamType};
    let mut v: Vec<(String, String)> = def
        .example
        .split_whitespace()
        .map(|kv| {
            let (k, x) = kv.split_once('=').unwrap();
            (k.to_owned(), x.to_owned())
        })
        .collect();
    for p in def.params {
        if p.default == ParamDefault::Required {
            let x = match p.ty {
                ParamType::Int { lo, .. } => lo.max(2).to_string(),
                ParamType::Bool => "false".to_owned(),
                // One entry per bin of the n = 50 runs below (simulate and config), increasing
                // (thresholds).
                ParamType::List => (1..=50).map(|i| i.to_string()).collect::<Vec<_>>().join(","),
                // A decision formula's value is a position: the first sample.
                ParamType::Decision(_) => "1".to_owned(),
                _ => "0.5".to_owned(),
            };
            v.push((p.name.to_owned(), x));
        }
    }
    v
}

/// The inline TOML table of an entry with `params` (dotted names become nested tables).
fn toml_table(kind: &str, params: &[(String, String)]) -> String {
    let mut parts = vec![format!("kind = \"{kind}\"")];
    for (k, x) in params {
        let x = if x.parse::<f64>().is_ok() || x == "true" || x == "false" {
            x.clone()
        } else if x.contains(',') {
            format!("[{x}]")
        } else {
            format!("\"{x}\"")
        };
        match k.split_once('.') {
            Some((t, f)) => parts.push(format!("{t} = {{ {f} = {x} }}")),
            None => parts.push(format!("{k} = {x}")),
        }
    }
    format!("{{ {} }}", parts.join(", "))
}

#[test]
fn every_entry_runs_from_simulate_and_from_a_config_and_refuses_unknown_params_alike() {
    let dir = scratch("front", "entries");
    for def in ballast_core::registry::PROCESSES {
        let params = example_params(def);
        let mut args: Vec<String> =
            ["simulate", "--process", def.name, "--n", "50", "--m", "200"].map(String::from).into();
        for (k, x) in &params {
            args.push("--param".into());
            args.push(format!("{k}={x}"));
        }
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        ok(&run_in(&dir, &a));
        let path = dir.join(format!("configs/demo/{}.toml", def.name));
        std::fs::write(&path, config(&toml_table(def.name, &params), "")).unwrap();
        let o = run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]);
        ok(&o);

        // An unknown parameter: the same registry message from both front ends.
        let mut bad = params.clone();
        bad.push(("zzz".into(), "1".into()));
        let msg = format!("unknown parameter `zzz` for process `{}`", def.name);
        let mut a = a.clone();
        a.extend(["--param", "zzz=1"]);
        let o = run_in(&dir, &a);
        assert_eq!(o.status.code(), Some(2), "{}: {}", def.name, stderr(&o));
        assert!(stderr(&o).contains(&msg), "{}", stderr(&o));
        std::fs::write(&path, config(&toml_table(def.name, &bad), "")).unwrap();
        let o = run_in(&dir, &["run", path.to_str().unwrap(), "--out", "bad", "--no-checkpoint"]);
        assert_eq!(o.status.code(), Some(2), "{}: {}", def.name, stderr(&o));
        assert!(stderr(&o).contains(&msg), "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("{}.toml:11:", def.name)), "{}", stderr(&o));
    }
    assert!(!dir.join("bad").exists(), "a refused config wrote outputs");
}

#[test]
fn two_choice_with_d_exits_2_and_writes_nothing() {
    let dir = scratch("front", "two_choice_d");
    let path = dir.join("configs/demo/item.toml");
    for (process, needle) in [
        ("{ kind = \"two_choice\", d = 3 }", "unknown parameter `d` for process `two_choice`"),
        ("{ kind = \"one_choice\", d = 2 }", "unknown parameter `d` for process `one_choice`"),
        ("{ kind = \"two_choice\", dd = 3, foo = \"bar\" }", "unknown parameter `dd`"),
    ] {
        std::fs::write(&path, config(process, "")).unwrap();
        let o = run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out"]);
        assert_eq!(o.status.code(), Some(2), "{process}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
        assert!(!dir.join("out").exists(), "{process}: outputs written");
    }
    // A tie rule on a process that takes none, a batch larger than the run, m = 0.
    for (process, extra, needle) in [
        ("{ kind = \"one_choice\" }", "tie_break = \"position\"", "would be ignored"),
        ("{ kind = \"two_choice\" }", "b = 1000", "larger than m"),
        ("{ kind = \"equalize\", d = 2 }", "b = 10", "sequential setting only"),
        ("{ kind = \"two_choice\" }", "m = 0", "m = 0"),
    ] {
        std::fs::write(&path, config(process, extra)).unwrap();
        let o = run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out"]);
        assert_eq!(o.status.code(), Some(2), "{extra}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{}", stderr(&o));
        assert!(!dir.join("out").exists(), "{extra}: outputs written");
    }
    let o = run_in(
        &dir,
        &["simulate", "--process", "one_choice", "--n", "10", "--m", "10", "--tie-break", "first"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("would be ignored"), "{}", stderr(&o));
}

#[test]
fn simulate_gives_the_runs_of_the_equivalent_one_point_config() {
    let dir = scratch("front", "same_runs");
    let path = dir.join("configs/demo/item.toml");
    std::fs::write(&path, config("{ kind = \"one_choice\" }", "")).unwrap();
    ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));
    let csv = std::fs::read_to_string(dir.join("out/demo/item.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    let simulate = |seed: &str| {
        let args = ["--process", "one_choice", "--n", "50", "--m", "500", "--runs", "4"];
        let o = run_in(
            &dir,
            &[&["simulate"], &args[..], &["--seed", seed, "--engine", "bins", "--json"]].concat(),
        );
        ok(&o);
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let v = simulate("7");
    let mean: f64 = col("value").parse().unwrap();
    let se: f64 = col("stderr").parse().unwrap();
    assert!((v["gap"]["mean"].as_f64().unwrap() - mean).abs() < 1e-6, "{csv}\n{v}");
    assert!((v["gap"]["stderr"].as_f64().unwrap() - se).abs() < 1e-6, "{csv}\n{v}");
    // Another seed gives other runs (the comparison above can fail).
    let w = simulate("8");
    assert_ne!(w["gap"], v["gap"]);
}

/// `simulate --print-config` prints the one-point config that the runs are; `ballast run` on
/// it gives the same values as `simulate`, for the settings only `simulate` flags reach.
#[test]
fn the_printed_one_point_config_runs_the_same_as_simulate() {
    let dir = scratch("front", "printed");
    let cases: [&[&str]; 7] = [
        &["--process", "formula_threshold", "--param", "f=max(avg + 1, t/n/10)", "--batch", "50"],
        &["--process", "g_myopic", "--param", "g=1", "--param", "replacement=false"],
        &["--process", "two_choice", "--tau", "300", "--delay-mode", "adversarial"],
        &["--process", "one_plus_beta", "--param", "beta=0.7", "--batch", "50", "--weights", "exp"],
        &["--process", "two_choice", "--observe-every", "100", "--tie-break", "first"],
        &["--process", "two_choice", "--batch", "200", "--weights", "gamma:shape=0.5,scale=2"],
        &["--process", "three_choice", "--weights", "pareto:alpha=2.5"],
    ];
    for (i, case) in cases.iter().enumerate() {
        let common = ["--n", "100", "--m", "2000", "--runs", "5", "--seed", "3"];
        let args: Vec<&str> = [&["simulate"], *case, &common[..]].concat();
        let printed = run_in(&dir, &[&args[..], &["--print-config"]].concat());
        ok(&printed);
        let path = dir.join(format!("configs/demo/printed{i}.toml"));
        std::fs::write(&path, &printed.stdout).unwrap();
        ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));
        let csv = std::fs::read_to_string(dir.join(format!("out/demo/printed{i}.csv"))).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let value = |statistic: &str| -> f64 {
            let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
            let row = csv.lines().map(|l| l.split(',').collect::<Vec<_>>());
            let row = row.into_iter().find(|r| r[at("statistic")] == statistic).unwrap();
            row[at("value")].parse().unwrap()
        };
        let o = run_in(&dir, &[&args[..], &["--json"]].concat());
        ok(&o);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(
            close(v["gap"]["mean"].as_f64().unwrap(), value("final_gap")),
            "{case:?}\n{csv}\n{v}"
        );
        assert!(close(v["max_gap"]["mean"].as_f64().unwrap(), value("max_gap")), "{case:?}");
        let max_load = v["statistics"]["max_load"]["mean"].as_f64().unwrap();
        assert!(close(max_load, value("max_load")), "{case:?}\n{csv}\n{v}");
    }
}

/// `simulate --potential` is the series' `potentials` of its printed config: `ballast run`
/// on it gives the same final potentials (and the same gap) as `simulate --json`.
#[test]
fn simulate_potentials_are_the_printed_configs_potential_rows() {
    let dir = scratch("front", "potentials");
    let args = [
        "simulate",
        "--process",
        "two_choice",
        "--n",
        "100",
        "--m",
        "2000",
        "--runs",
        "5",
        "--seed",
        "3",
        "--potential",
        "quadratic",
        "--potential",
        "hyperbolic:alpha=0.5",
    ];
    let printed = run_in(&dir, &[&args[..], &["--print-config"]].concat());
    ok(&printed);
    let path = dir.join("configs/demo/potentials.toml");
    std::fs::write(&path, &printed.stdout).unwrap();
    ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));
    let csv = std::fs::read_to_string(dir.join("out/demo/potentials.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let value = |series: &str| -> f64 {
        let rows = csv.lines().map(|l| l.split(',').collect::<Vec<_>>()).collect::<Vec<_>>();
        let row =
            rows.iter().find(|r| r[at("series")] == series).unwrap_or_else(|| panic!("{csv}"));
        row[at("value")].parse().unwrap()
    };
    let o = run_in(&dir, &[&args[..], &["--json"]].concat());
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
    for spec in ["quadratic", "hyperbolic:alpha=0.5"] {
        let ours = v["potentials"][spec]["mean"].as_f64().unwrap();
        assert!(close(ours, value(&format!("two_choice [{spec}]"))), "{spec}\n{csv}\n{v}");
    }
    assert!(close(v["gap"]["mean"].as_f64().unwrap(), value("two_choice")), "{csv}");
}

/// `simulate --potential --observe-every K` (or `--batch B`) also reports each potential at
/// every observation point: the rows `potential_trajectory` of its printed config under
/// `ballast run`, point for point, ending at the final value.
#[test]
fn simulate_potential_trajectories_are_the_printed_configs_rows() {
    let dir = scratch("front", "potential_trajectories");
    for (i, setting) in [["--observe-every", "300"], ["--batch", "250"]].iter().enumerate() {
        let args: Vec<&str> = [
            &["simulate", "--process", "one_plus_beta", "--param", "beta=0.5", "--n", "100"][..],
            &["--m", "2000", "--runs", "4", "--seed", "5", "--potential", "quadratic"],
            &["--potential", "exponential:alpha=0.2"],
            &setting[..],
        ]
        .concat();
        let printed = run_in(&dir, &[&args[..], &["--print-config"]].concat());
        ok(&printed);
        assert!(String::from_utf8_lossy(&printed.stdout).contains("\"potential_trajectory\""));
        let path = dir.join(format!("configs/demo/traj{i}.toml"));
        std::fs::write(&path, &printed.stdout).unwrap();
        ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));
        let csv = std::fs::read_to_string(dir.join(format!("out/demo/traj{i}.csv"))).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let o = run_in(&dir, &[&args[..], &["--json"]].concat());
        ok(&o);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for spec in ["quadratic", "exponential:alpha=0.2"] {
            let series = format!("one_plus_beta [{spec}]");
            let rows: Vec<(f64, f64)> = csv
                .lines()
                .map(|l| l.split(',').collect::<Vec<_>>())
                .filter(|r| {
                    r[at("series")] == series && r[at("statistic")] == "potential_trajectory"
                })
                .map(|r| (r[at("x")].parse().unwrap(), r[at("value")].parse().unwrap()))
                .collect();
            let ours: Vec<(f64, f64)> = v["potential_trajectories"][spec]
                .as_array()
                .unwrap_or_else(|| panic!("{v}"))
                .iter()
                .map(|p| (p["balls_per_bin"].as_f64().unwrap(), p["mean"].as_f64().unwrap()))
                .collect();
            let expected_len = if i == 0 { 7 } else { 8 };
            assert_eq!(rows.len(), expected_len, "{spec}\n{csv}");
            assert_eq!(ours.len(), rows.len(), "{spec}\n{v}");
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
            for (a, b) in ours.iter().zip(&rows) {
                assert!(a.0 == b.0 && close(a.1, b.1), "{spec}: {a:?} vs {b:?}");
            }
            // The last observation is the end of the runs: the final value.
            let last = ours.last().unwrap().1;
            assert!(close(last, v["potentials"][spec]["mean"].as_f64().unwrap()), "{spec}\n{v}");
            assert_eq!(ours.last().unwrap().0, 20.0);
        }
        let human = run_in(&dir, &args);
        ok(&human);
        assert!(String::from_utf8_lossy(&human.stdout).contains("trajectory  balls/n"));
    }
    // Without observation points there is no trajectory (and the config asks for none).
    let plain = run_in(
        &dir,
        &[
            "simulate",
            "--process",
            "two_choice",
            "--n",
            "50",
            "--m",
            "500",
            "--potential",
            "quadratic",
            "--json",
        ],
    );
    ok(&plain);
    let v: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert_eq!(v["potential_trajectories"], serde_json::json!({}));
}

/// Every round-based model of the model registry runs from `simulate`, whose printed config
/// gives the same values under `ballast run`; their parameters are checked by the registry.
#[test]
fn round_based_models_run_from_simulate_as_their_one_point_config() {
    let dir = scratch("front", "dynamic");
    for (i, def) in ballast_dynamic::registry::MODELS.iter().enumerate() {
        let size: &[&str] = if def.point.iter().any(|(p, _)| *p == "lambda") {
            &["--lambda", "0.7"]
        } else if def.point.iter().any(|(p, _)| *p == "m") {
            &["--m", "150"]
        } else {
            &[]
        };
        let common =
            ["--n", "50", "--rounds", "300", "--burn-in", "50", "--runs", "3", "--param", "d=2"];
        // Other required parameters (random_deletions' `beta`): a probability.
        let required: Vec<String> = def
            .params
            .iter()
            .filter(|p| {
                p.name != "d" && p.default == ballast_core::registry::ParamDefault::Required
            })
            .map(|p| format!("{}=0.6", p.name))
            .collect();
        let extra: Vec<&str> = required.iter().flat_map(|r| ["--param", r.as_str()]).collect();
        let args: Vec<&str> =
            [&["simulate", "--process", def.name], size, &common[..], &extra[..]].concat();
        let printed = run_in(&dir, &[&args[..], &["--print-config"]].concat());
        ok(&printed);
        let path = dir.join(format!("configs/demo/model{i}.toml"));
        std::fs::write(&path, &printed.stdout).unwrap();
        ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));
        let csv = std::fs::read_to_string(dir.join(format!("out/demo/model{i}.csv"))).unwrap();
        let o = run_in(&dir, &[&args[..], &["--json"]].concat());
        ok(&o);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let mut seen = 0;
        for line in csv.lines().skip(1) {
            let row: Vec<&str> = line.split(',').collect();
            let ours: f64 = row[at("value")].parse().unwrap();
            let theirs = if row[at("statistic")] == "max_load_histogram" {
                // One row per max-load value: the JSON's bin of that value.
                let x: f64 = row[at("x")].parse().unwrap();
                let bins = v["max_load_histogram"].as_array().unwrap();
                let bin = bins.iter().find(|b| b["value"].as_f64() == Some(x)).unwrap();
                bin["fraction"].as_f64().unwrap()
            } else {
                v["statistics"][row[at("statistic")]]["mean"].as_f64().unwrap()
            };
            assert!((ours - theirs).abs() < 1e-6 * ours.abs().max(1.0), "{}: {csv}\n{v}", def.name);
            seen += 1;
        }
        assert!(seen >= 4, "{}: {csv}", def.name);
        let bad = run_in(&dir, &[&args[..], &["--param", "dd=1"]].concat());
        assert_eq!(bad.status.code(), Some(2), "{}", def.name);
        assert!(stderr(&bad).contains("did you mean `d`"), "{}", stderr(&bad));
    }
}

/// `simulate --offline D` is the one-point off-line optimum config: the same values under
/// `ballast run`, and the optimum never exceeds Greedy[D] on the same choices.
#[test]
fn the_offline_optimum_runs_from_simulate_as_its_one_point_config() {
    let dir = scratch("front", "offline");
    let args =
        ["simulate", "--offline", "2", "--n", "200", "--m", "400", "--runs", "4", "--seed", "5"];
    let printed = run_in(&dir, &[&args[..], &["--print-config"]].concat());
    ok(&printed);
    let path = dir.join("configs/demo/offline.toml");
    std::fs::write(&path, &printed.stdout).unwrap();
    ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));
    let csv = std::fs::read_to_string(dir.join("out/demo/offline.csv")).unwrap();
    let o = run_in(&dir, &[&args[..], &["--json"]].concat());
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for line in csv.lines().skip(1) {
        let row: Vec<&str> = line.split(',').collect();
        let ours: f64 = row[at("value")].parse().unwrap();
        let theirs = v["statistics"][row[at("statistic")]]["mean"].as_f64().unwrap();
        assert!((ours - theirs).abs() < 1e-9, "{csv}\n{v}");
    }
    let opt = v["statistics"]["offline_optimum"]["mean"].as_f64().unwrap();
    let greedy = v["statistics"]["greedy_max_load"]["mean"].as_f64().unwrap();
    assert!(opt <= greedy && opt >= 2.0, "{v}");
}

/// The CSV's rows as (series, statistic) → value.
fn csv_values(csv: &str) -> std::collections::BTreeMap<(String, String), f64> {
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    csv.lines()
        .skip(1)
        .map(|l| {
            let r: Vec<&str> = l.split(',').collect();
            (
                (r[at("series")].to_owned(), r[at("statistic")].to_owned()),
                r[at("value")].parse().unwrap(),
            )
        })
        .collect()
}

/// `simulate --graph` is the one-point `kind = "graph"` config it prints: `ballast run` on
/// it gives the same gap, max gap, max load, samples per ball and potentials as `simulate
/// --json`, for a random topology (so the topology's seed path is the config's too), a
/// batched run with weights and a tie rule, and a topology written with named values.
#[test]
fn simulate_graph_gives_the_values_of_its_printed_config() {
    let dir = scratch("front", "graph");
    let cases: [&[&str]; 3] = [
        &[
            "--process",
            "two_choice",
            "--graph",
            "regular:3",
            "--observe-every",
            "300",
            "--potential",
            "quadratic",
        ],
        &[
            "--process",
            "one_plus_beta",
            "--param",
            "beta=0.5",
            "--graph",
            "gnp:0.05:connected",
            "--batch",
            "40",
            "--weights",
            "exp",
            "--tie-break",
            "first",
            "--potential",
            "quadratic",
        ],
        &["--process", "two_choice", "--graph", "torus:dim=2", "--potential", "quadratic"],
    ];
    for (i, case) in cases.iter().enumerate() {
        let common = ["--n", "196", "--m", "3000", "--runs", "4", "--seed", "11"];
        let args: Vec<&str> = [&["simulate"], *case, &common[..]].concat();
        let printed = run_in(&dir, &[&args[..], &["--print-config"]].concat());
        ok(&printed);
        let text = String::from_utf8_lossy(&printed.stdout).into_owned();
        assert!(text.contains("kind = \"graph\"") && text.contains("seed_item = \"simulate\""));
        let path = dir.join(format!("configs/demo/graph{i}.toml"));
        std::fs::write(&path, &printed.stdout).unwrap();
        ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));
        let csv = std::fs::read_to_string(dir.join(format!("out/demo/graph{i}.csv"))).unwrap();
        let rows = csv_values(&csv);
        let o = run_in(&dir, &[&args[..], &["--json"]].concat());
        ok(&o);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let series = case[1];
        let value = |stat: &str| rows[&(series.to_owned(), stat.to_owned())];
        // The CSV writes 9 significant digits.
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-8 * b.abs().max(1.0);
        let json = |p: &str| v.pointer(p).and_then(serde_json::Value::as_f64).unwrap();
        assert!(close(json("/gap/mean"), value("final_gap")), "{case:?}\n{csv}\n{v}");
        assert!(close(json("/max_gap/mean"), value("max_gap")), "{case:?}\n{csv}\n{v}");
        assert!(close(json("/statistics/max_load/mean"), value("max_load")), "{csv}\n{v}");
        assert!(close(json("/samples_per_ball"), value("samples_per_ball")), "{csv}\n{v}");
        assert_eq!(v["graph"]["vertices"], 196, "{v}");
        let ours = json("/potentials/quadratic/mean");
        assert!(close(ours, rows[&(format!("{series} [quadratic]"), "potential".into())]));
        // Another seed gives other runs (the comparisons above can fail).
        let other: Vec<&str> = args.iter().map(|a| if *a == "11" { "12" } else { a }).collect();
        let w = run_in(&dir, &[&other[..], &["--json"]].concat());
        ok(&w);
        let w: serde_json::Value = serde_json::from_slice(&w.stdout).unwrap();
        assert_ne!(w["potentials"], v["potentials"], "{case:?}");
    }
}

/// Every topology of `ballast_graph::TOPOLOGIES` runs from `simulate --graph` (named values)
/// and from a config (a table), and both refuse an unknown parameter with the registry's
/// message, exit 2, the config at the parameter's line and writing nothing.
#[test]
fn every_topology_runs_from_simulate_and_from_a_config_and_refuses_unknown_params_alike() {
    let dir = scratch("front", "topologies");
    // An edge list on 64 vertices (a cycle) for `file`.
    let edges: String = (0..64).map(|i| format!("{i} {}\n", (i + 1) % 64)).collect();
    std::fs::write(dir.join("edges.txt"), edges).unwrap();
    let graph_config = |graph: &str| {
        format!(
            "kind = \"graph\"\ntitle = \"t\"\nseed = 7\nruns = 2\nx = {{ variable = \"n\" }}\n\
             grid = {{ n = [64] }}\npoint = {{ m = 640 }}\n\n[[series]]\nname = \"s\"\n\
             graph = {graph}\nprocess = {{ kind = \"two_choice\" }}\nstatistic = \"final_gap\"\n"
        )
    };
    for t in ballast_graph::TOPOLOGIES {
        let (_, given) = ballast_graph::parse_topology(t.example).unwrap();
        let value = |v: &ballast_core::registry::ParamValue| match v {
            ballast_core::registry::ParamValue::Text(x) => x.clone(),
            other => other.to_string(),
        };
        let named: Vec<String> = given.iter().map(|(k, v)| format!("{k}={}", value(v))).collect();
        let shorthand = if named.is_empty() {
            t.name.to_owned()
        } else {
            format!("{}:{}", t.name, named.join(","))
        };
        let sim = |graph: &str| {
            run_in(
                &dir,
                &[
                    "simulate",
                    "--process",
                    "two_choice",
                    "--n",
                    "64",
                    "--m",
                    "640",
                    "--graph",
                    graph,
                ],
            )
        };
        ok(&sim(&shorthand));
        let mut table = vec![format!("kind = \"{}\"", t.name)];
        for (k, v) in &given {
            table.push(match v {
                ballast_core::registry::ParamValue::Text(x) => format!("{k} = \"{x}\""),
                other => format!("{k} = {other}"),
            });
        }
        let path = dir.join(format!("configs/demo/{}.toml", t.name));
        std::fs::write(&path, graph_config(&format!("{{ {} }}", table.join(", ")))).unwrap();
        ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));

        // An unknown parameter: the same registry message from both front ends.
        let msg = format!("unknown parameter `zzz` for topology `{}`", t.name);
        let o = sim(&format!("{}:zzz=1", t.name));
        assert_eq!(o.status.code(), Some(2), "{}: {}", t.name, stderr(&o));
        assert!(stderr(&o).contains(&msg), "{}", stderr(&o));
        let cli_line = stderr(&o).lines().find(|l| l.contains(&msg)).unwrap().to_owned();
        let cli_msg = &cli_line[cli_line.find(&msg).unwrap()..cli_line.find(" (set by").unwrap()];
        table.push("zzz = 1".into());
        for graph in [format!("{{ {} }}", table.join(", ")), format!("\"{}:zzz=1\"", t.name)] {
            std::fs::write(&path, graph_config(&graph)).unwrap();
            let o =
                run_in(&dir, &["run", path.to_str().unwrap(), "--out", "bad", "--no-checkpoint"]);
            assert_eq!(o.status.code(), Some(2), "{}: {}", t.name, stderr(&o));
            assert!(stderr(&o).contains(cli_msg), "{cli_msg}\n{}", stderr(&o));
            assert!(stderr(&o).contains(&format!("{}.toml:11:", t.name)), "{}", stderr(&o));
        }
    }
    assert!(!dir.join("bad").exists(), "a refused config wrote outputs");
}

/// `simulate --process rbb --start KIND` starts the model from the core registry's start
/// and gives the rows of its printed config (a series `start` table); a start of the wrong
/// number of balls exits 2.
#[test]
fn round_based_models_take_the_start_registry_from_simulate() {
    let dir = scratch("front", "dynamic_start");
    let args = [
        "simulate",
        "--process",
        "rbb",
        "--n",
        "40",
        "--m",
        "80",
        "--rounds",
        "200",
        "--runs",
        "3",
        "--start",
        "one_bin:balls=80",
    ];
    let printed = run_in(&dir, &[&args[..], &["--print-config"]].concat());
    ok(&printed);
    let text = String::from_utf8_lossy(&printed.stdout).into_owned();
    assert!(text.contains("[series.start]") && text.contains("kind = \"one_bin\""), "{text}");
    let path = dir.join("configs/demo/rbb_start.toml");
    std::fs::write(&path, &printed.stdout).unwrap();
    ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));
    let csv = std::fs::read_to_string(dir.join("out/demo/rbb_start.csv")).unwrap();
    let o = run_in(&dir, &[&args[..], &["--json"]].concat());
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["start"], "one_bin:balls=80");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for line in csv.lines().skip(1) {
        let row: Vec<&str> = line.split(',').collect();
        if row[at("statistic")] == "max_load_histogram" {
            continue;
        }
        let ours: f64 = row[at("value")].parse().unwrap();
        let theirs = v["statistics"][row[at("statistic")]]["mean"].as_f64().unwrap();
        assert!((ours - theirs).abs() < 1e-6 * ours.abs().max(1.0), "{csv}\n{v}");
    }
    // The first measured round holds 79 or 80 balls in bin 0.
    assert!(v["statistics"]["peak_max_load"]["mean"].as_f64().unwrap() >= 79.0, "{v}");
    let bad = run_in(&dir, &[&args[..11], &["--start", "one_bin:balls=10"]].concat());
    assert_eq!(bad.status.code(), Some(2), "{}", stderr(&bad));
    // Said once, in the command line's terms: not once per statistic of the one-point
    // config, nor at a line of a config the user did not write.
    let err = stderr(&bad);
    assert_eq!(err.matches("exactly m balls").count(), 1, "{err}");
    assert!(!err.contains("<ballast simulate>:") && !err.contains("series `"), "{err}");
}

/// `simulate --probes` (and adaptive probing by itself) reports the distribution of probes
/// per step: the rows `probes_distribution` of its printed config.
#[test]
fn simulate_probes_are_the_printed_configs_rows() {
    let dir = scratch("front", "probes");
    for (i, extra) in [
        &["--process", "threshold", "--param", "f=1", "--probes"][..],
        &["--process", "adaptive", "--param", "preset=probe_count"][..],
    ]
    .iter()
    .enumerate()
    {
        let args: Vec<&str> =
            [&["simulate", "--n", "200", "--m", "3000", "--runs", "3"][..], extra].concat();
        let printed = run_in(&dir, &[&args[..], &["--print-config"]].concat());
        ok(&printed);
        let path = dir.join(format!("configs/demo/probes{i}.toml"));
        std::fs::write(&path, &printed.stdout).unwrap();
        ok(&run_in(&dir, &["run", path.to_str().unwrap(), "--out", "out", "--no-checkpoint"]));
        let csv = std::fs::read_to_string(dir.join(format!("out/demo/probes{i}.csv"))).unwrap();
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
        let rows: Vec<(f64, f64)> = csv
            .lines()
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|r| r[at("statistic")] == "probes_distribution")
            .map(|r| (r[at("x")].parse().unwrap(), r[at("value")].parse().unwrap()))
            .collect();
        let o = run_in(&dir, &[&args[..], &["--json"]].concat());
        ok(&o);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let ours: Vec<(f64, f64)> = v["probes_distribution"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| (b["value"].as_f64().unwrap(), b["fraction"].as_f64().unwrap()))
            .collect();
        assert!(rows.len() >= 2, "{csv}");
        assert_eq!(rows.len(), ours.len(), "{csv}\n{v}");
        for (a, b) in rows.iter().zip(&ours) {
            assert!(a.0 == b.0 && (a.1 - b.1).abs() < 1e-6, "{a:?} vs {b:?}");
        }
        let human = run_in(&dir, &args);
        assert!(String::from_utf8_lossy(&human.stdout).contains("probes per step"));
    }
}
