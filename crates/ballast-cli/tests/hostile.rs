//! Hostile inputs and faults: one test per class of the hostile-input battery. Inputs that
//! would need absurd memory, recursion or time are refused at validation (exit 2, the place,
//! the numbers and the way out) and write nothing; the classes that held before (bad config
//! values, interrupted and resumed runs, thread counts) are kept here too.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::{ok, run_in, scratch};

const BASE: &str = r#"title = "hostile (test)"
seed = 7
runs = 3
x = { variable = "k", label = "b/n" }
grid = { k = [1, 2] }
point = { n = 50, b = "k*n", batches = 4 }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
"#;

/// Every file below `dir`, relative, sorted (the whole output tree, hidden files included).
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(dir).unwrap().to_path_buf());
        }
    }
    out.sort();
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `ballast run` of `config` (written to configs/demo/bad.toml) must exit 2 with every
/// needle in stderr and leave no output directory, no checkpoint directory, nothing at all
/// besides the project files.
fn refused_config(name: &str, config: &str, needles: &[&str]) {
    let dir = scratch("hostile", name);
    std::fs::write(dir.join("configs/demo/bad.toml"), config).unwrap();
    let before = tree(&dir);
    let o = run_in(&dir, &["run", "configs/demo/bad.toml", "--out", "out"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    for n in needles {
        assert!(err.contains(n), "{name}: `{n}` not in stderr:\n{err}");
    }
    assert_eq!(tree(&dir), before, "{name}: files written despite the error");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `ballast args…` in a scratch directory must exit 2 with every needle and write nothing.
fn refused_command(name: &str, args: &[&str], needles: &[&str]) {
    let dir = scratch("hostile", name);
    let before = tree(&dir);
    let o = run_in(&dir, args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    for n in needles {
        assert!(err.contains(n), "{name}: `{n}` not in stderr:\n{err}");
    }
    assert_eq!(tree(&dir), before, "{name}: files written despite the error");
    std::fs::remove_dir_all(&dir).unwrap();
}

// A. Limits at validation, from what a run would need.

#[test]
fn a_runs_beyond_the_item_limit_are_refused() {
    refused_config(
        "runs",
        &BASE.replace("runs = 3", "runs = 1000000000000"),
        &["configs/demo/bad.toml:3:8:", "2000000000000 runs in all", "at most 10000000"],
    );
    refused_command(
        "simulate-runs2",
        &[
            "simulate",
            "--process",
            "two_choice",
            "--n",
            "10",
            "--m",
            "10",
            "--runs",
            "1000000000000",
        ],
        &["1..=10000000"],
    );
}

#[test]
fn a_memory_of_one_run_is_bounded() {
    let sim = ["simulate", "--process", "two_choice", "--weights", "exp"];
    let huge = u64::MAX.to_string();
    let args: Vec<&str> =
        sim.iter().copied().chain(["--n", "100", "--m", &huge, "--batch", &huge]).collect();
    refused_command("batch-max", &args, &["batch buffer", "limit of 16.0 GiB", "smaller batch"]);
    let args: Vec<&str> = sim
        .iter()
        .copied()
        .chain(["--n", "100", "--m", "10000000000000", "--batch", "1000000000000"])
        .collect();
    refused_command("batch-1e12", &args, &["14901.2 GiB", "smaller batch"]);
    refused_command(
        "bins-2^32",
        &[
            "simulate",
            "--process",
            "two_choice",
            "--n",
            "4294967295",
            "--m",
            "10",
            "--engine",
            "bins",
        ],
        &["n = 4294967295 bins", "32.0 GiB", "engine = \"levels\""],
    );
    refused_config(
        "bins-config",
        &BASE
            .replace("grid = { k = [1, 2] }", "engine = \"bins\"\ngrid = { k = [1] }")
            .replace("n = 50, b = \"k*n\", batches = 4", "n = 4294967295, m = 10"),
        &["configs/demo/bad.toml:7:", "32.0 GiB", "engine = \"levels\""],
    );
}

// B. Expressions.

#[test]
fn b_huge_and_deep_formulas_are_refused() {
    let sum = vec!["k"; 40_000].join("+");
    refused_config(
        "formula-long",
        &BASE.replace("b = \"k*n\"", &format!("b = \"{sum}\"")),
        &["configs/demo/bad.toml:6:", "bytes long; at most 4096"],
    );
    let deep = format!("{}k{}", "(".repeat(35_000), ")".repeat(35_000));
    refused_config(
        "formula-deep",
        &BASE.replace("b = \"k*n\"", &format!("b = \"{deep}\"")),
        &["configs/demo/bad.toml:6:", "at most 4096"],
    );
    let nested = format!("{}k{}*n", "(".repeat(65), ")".repeat(65));
    refused_config(
        "formula-nested",
        &BASE.replace("b = \"k*n\"", &format!("b = \"{nested}\"")),
        &["configs/demo/bad.toml:6:", "nests 65 parentheses deep; at most 64"],
    );
}

// C. Run-time errors that are validation errors.

#[test]
fn c_bad_graphs_are_validation_errors() {
    let graph = |g: &str| {
        format!(
            "kind = \"graph\"\ntitle = \"t\"\nseed = 1\nruns = 2\nx = {{ variable = \"n\" }}\n\
             grid = {{ n = [16] }}\n\n[point]\nm = \"10 * n\"\n\n[[series]]\nname = \"s\"\n\
             graph = \"{g}\"\nstatistic = \"final_gap\"\nprocess = {{ kind = \"two_choice\" }}\n"
        )
    };
    refused_config(
        "gnp2",
        &graph("gnp:2"),
        &["bad.toml:13:9:", "parameter `p` of topology `gnp`: expected a number in [0, 1]"],
    );
    refused_config(
        "torus0",
        &graph("torus:0"),
        &["bad.toml:13:9:", "parameter `dim` of topology `torus`: expected an integer in 1..=32"],
    );
    refused_command(
        "levels-graph",
        &["simulate", "--process", "two_choice", "--n", "16", "--m", "100", "--engine", "levels"]
            .into_iter()
            .chain(["--graph", "cycle"])
            .collect::<Vec<_>>(),
        &["engine `levels`", "--engine with --graph"],
    );
}

// D. Non-finite values.

#[test]
fn d_non_finite_and_repeated_reference_values_are_refused() {
    for (name, rows, needle) in [
        ("ref-inf", "Two-Choice,50,1,inf,10\n", "field 4 (`value`): not a finite number"),
        ("ref-nan", "Two-Choice,50,1,NaN,10\n", "field 4 (`value`): not a finite number"),
        ("ref-dup", "Two-Choice,50,1,3,10\nTwo-Choice,50,1,4,10\n", "line 3: a second row"),
    ] {
        let dir = scratch("hostile", name);
        let config = BASE.replace(
            "[[series]]",
            "[[reference]]\nfile = \"r.csv\"\nlabel = \"published\"\n\n[[series]]",
        );
        std::fs::write(dir.join("configs/demo/bad.toml"), config).unwrap();
        std::fs::write(dir.join("reference/r.csv"), format!("series,n,x,value,runs\n{rows}"))
            .unwrap();
        let before = tree(&dir);
        let o = run_in(&dir, &["run", "configs/demo/bad.toml", "--out", "out"]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{name}: {}", stderr(&o));
        assert_eq!(tree(&dir), before, "{name}: files written");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

// E. Checkpoint and shard files.

#[test]
fn e_damaged_checkpoints_are_named_and_simulated_again() {
    let dir = scratch("hostile", "damaged-ckpt");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    let args = ["run", "configs/demo/ok.toml", "--out", "out", "--threads", "2"];
    ok(&run_in(&dir, &args));
    let clean = csv_of(&dir);
    let ckpt = dir.join("out/.checkpoint");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&ckpt)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    files.sort();
    let victim = files.first().expect("a checkpoint").clone();
    let mut bytes = std::fs::read(&victim).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&victim, &bytes).unwrap();
    let o = run_in(&dir, &args);
    ok(&o);
    let name = victim.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        stderr(&o).contains(&name) && stderr(&o).contains("checksum mismatch"),
        "{}",
        stderr(&o)
    );
    assert_eq!(csv_of(&dir), clean, "damaged checkpoint changed the outputs");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn e_damaged_shard_files_are_a_clear_error_naming_the_file() {
    let dir = scratch("hostile", "damaged-shard");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    let mut shards = Vec::new();
    for i in 1..=2 {
        let s = format!("{i}/2");
        let o = run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "sh", "--shard", &s]);
        ok(&o);
        shards.push(String::from_utf8_lossy(&o.stdout).trim().to_string());
    }
    let mut bytes = std::fs::read(dir.join(&shards[1])).unwrap();
    let last = bytes.len() - 40;
    bytes[last] ^= 0x01;
    std::fs::write(dir.join(&shards[1]), &bytes).unwrap();
    let o =
        run_in(&dir, &["merge", "configs/demo/ok.toml", &shards[0], &shards[1], "--out", "out"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&shards[1]) && stderr(&o).contains("checksum mismatch"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.join("out").exists(), "merge wrote outputs");
    std::fs::remove_dir_all(&dir).unwrap();
}

// G. One process per item and checkpoint directory.

#[test]
fn g_a_second_run_on_the_same_checkpoints_is_refused() {
    let dir = scratch("hostile", "lock");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    let ckpt = dir.join("out/.checkpoint");
    std::fs::create_dir_all(&ckpt).unwrap();
    // This test holds the item's lock, as a running `ballast run` would.
    let lock = std::fs::File::create(ckpt.join("demo__ok.lock")).unwrap();
    lock.try_lock().unwrap();
    let o = run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("another ballast process is running this item"), "{}", stderr(&o));
    assert!(!dir.join("out/demo").exists(), "outputs written while locked");
    drop(lock);
    ok(&run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out"]));
    std::fs::remove_dir_all(&dir).unwrap();
}

// F. Outputs.

#[test]
fn f_out_pointing_at_a_file_is_refused_before_simulating() {
    let dir = scratch("hostile", "out-file");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    std::fs::write(dir.join("out"), "not a directory").unwrap();
    let o = run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--out out: exists and is not a directory"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(dir.join("out")).unwrap(), "not a directory");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn f_stale_temporaries_of_a_crashed_run_are_removed() {
    let dir = scratch("hostile", "stale-tmp");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    std::fs::create_dir_all(dir.join("out/demo")).unwrap();
    std::fs::create_dir_all(dir.join("out/.checkpoint")).unwrap();
    let stale = dir.join("out/demo/.ok.csv.ballast-tmp-4000000000-00000000000000aa.tmp");
    std::fs::write(&stale, "half").unwrap();
    let other = dir.join("out/demo/.other.csv.ballast-tmp-4000000000-00000000000000aa.tmp");
    std::fs::write(&other, "another item's").unwrap();
    ok(&run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out"]));
    assert!(!stale.exists(), "stale temporary kept");
    assert!(other.exists(), "another item's temporary removed");
    let names: Vec<String> = std::fs::read_dir(dir.join("out/demo"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for ext in ["csv", "json", "svg", "md"] {
        assert!(names.contains(&format!("ok.{ext}")), "{names:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// H. Silently accepted inputs.

#[test]
fn h_threads_and_weight_scales_are_bounded() {
    refused_command(
        "threads",
        &["simulate", "--process", "two_choice", "--n", "10", "--m", "10", "--threads", "100000"],
        &["1..=1024"],
    );
    refused_command(
        "weight-1e300",
        &["simulate", "--process", "two_choice", "--n", "10", "--m", "100", "--weights", "exp"]
            .into_iter()
            .chain(["--weight-mean", "1e300"])
            .collect::<Vec<_>>(),
        &["total weight of 1e302", "above 1e150"],
    );
    refused_config(
        "weight-config",
        &BASE.replace(
            "process = { kind = \"two_choice\" }",
            "process = { kind = \"two_choice\" }\nweights = { kind = \"exp\", mean = 1.7e308 }",
        ),
        &["configs/demo/bad.toml:", "above 1e150"],
    );
}

#[test]
fn h_seed_items_placeholders_and_slurm_times_are_checked() {
    refused_config(
        "seed-item",
        &BASE.replace("seed = 7", "seed = 7\nseed_item = \"demo/nope\""),
        &["configs/demo/bad.toml:3:13:", "`seed_item` = \"demo/nope\" names no item"],
    );
    refused_config(
        "placeholder",
        &BASE.replace("name = \"Two-Choice\"", "name = \"Two-Choice\"\nreference = \"b={q}n\""),
        &["configs/demo/bad.toml:8:", "unknown placeholder `{q}`", "{k}, {n}, {b}"],
    );
    let dir = scratch("hostile", "slurm");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    let before = tree(&dir);
    for (flag, v) in [("--time", "banana"), ("--time", "1:2:3:4"), ("--mem", "lots")] {
        let o = run_in(&dir, &["slurm", "configs/demo/ok.toml", "--shards", "2", flag, v]);
        assert_eq!(o.status.code(), Some(2), "{flag} {v}: {}", stderr(&o));
        assert!(stderr(&o).contains(&format!("invalid value `{v}` for {flag}")), "{}", stderr(&o));
    }
    assert_eq!(tree(&dir), before, "slurm wrote files despite the error");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn h_degenerate_references_and_log_axes_are_warned_about() {
    let dir = scratch("hostile", "warn");
    let config = BASE
        .replace("label = \"b/n\"", "label = \"b/n\", log = true")
        .replace("grid = { k = [1, 2] }", "grid = { k = [0, 1] }")
        .replace("n = 50, b = \"k*n\", batches = 4", "n = 50, m = 100")
        .replace("name = \"Two-Choice\"", "name = \"Two-Choice\"\nreference = \"Nobody\"")
        .replace(
            "[[series]]",
            "[[reference]]\nfile = \"r.csv\"\nlabel = \"published\"\n\n[[series]]",
        );
    std::fs::write(dir.join("configs/demo/ok.toml"), config).unwrap();
    std::fs::write(dir.join("reference/r.csv"), "series,n,x,value,runs\nTwo-Choice,50,1,3,10\n")
        .unwrap();
    let o = run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out"]);
    ok(&o);
    let err = stderr(&o);
    assert!(err.contains("k = 0 is not positive") && err.contains("logarithmic"), "{err}");
    assert!(err.contains("`reference` names `Nobody`, which no reference table"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

// Classes that held before the battery: kept.

#[test]
fn held_bad_config_values_exit_2_with_the_place_and_write_nothing() {
    refused_config(
        "beta",
        &BASE.replace("kind = \"two_choice\"", "kind = \"one_plus_beta\", beta = 1.5"),
        &["configs/demo/bad.toml:10:", "beta"],
    );
    refused_config("runs0", &BASE.replace("runs = 3", "runs = 0"), &["bad.toml:3:8:", ">= 1"]);
}

/// The data outputs of a finished run: CSV and JSON without the timing fields are compared
/// through the CSV, which holds every simulated value.
fn csv_of(dir: &Path) -> Vec<u8> {
    std::fs::read(dir.join("out/demo/ok.csv")).unwrap()
}

#[test]
fn held_threads_and_resumed_runs_are_byte_identical() {
    let dir = scratch("hostile", "identical");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "configs/demo/ok.toml", "--out", "out"];
        args.extend_from_slice(extra);
        let o = run_in(&dir, &args);
        ok(&o);
        csv_of(&dir)
    };
    let one = run(&["--threads", "1", "--no-checkpoint"]);
    let two = run(&["--threads", "2", "--no-checkpoint"]);
    assert_eq!(one, two, "threads 1 and 2 differ");
    // A run that stopped after some points: drop half of the checkpoints and resume.
    let _ = run(&["--threads", "2"]);
    let ckpt = dir.join("out/.checkpoint");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&ckpt)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "bin"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no checkpoints written");
    for f in files.iter().step_by(2) {
        std::fs::remove_file(f).unwrap();
    }
    let resumed = run(&["--threads", "2"]);
    assert_eq!(one, resumed, "resumed run differs");
    std::fs::remove_dir_all(&dir).unwrap();
}

// Classes 9 and 12 of the third battery: meaningless input accepted, and messages.

#[test]
fn i_formula_thresholds_nan_or_infinite_at_a_probe_are_refused() {
    for (f, needle) in [("0/0", "NaN at t = 0, n = 50, avg = 0"), ("1/0", "inf at t = 0")] {
        refused_config(
            "ft-nan",
            &BASE.replace(
                "kind = \"two_choice\"",
                &format!("kind = \"formula_threshold\", f = \"{f}\""),
            ),
            &["configs/demo/bad.toml:10:45:", needle, "a finite value at every ball"],
        );
    }
    // Finite at t = 0 but not at the last ball of m = 100.
    refused_command(
        "ft-late",
        &["simulate", "--process", "formula_threshold", "--param", "f=1/(t - 99)"]
            .into_iter()
            .chain(["--n", "10", "--m", "100"])
            .collect::<Vec<_>>(),
        &["inf at t = 99, n = 10"],
    );
}

#[test]
fn i_formulas_outside_the_documented_language_are_refused() {
    for (b, needle) in [
        ("k; 100", "operator `;` is not accepted"),
        ("k += 1", "operator `+=` is not accepted"),
        ("(k, n)", "operator `,` is not accepted"),
        ("k > 1", "operator `>` is not accepted"),
        ("\\\"k\\\"", "is not a number"),
        ("if(true, k, n)", "unknown function `if`"),
        ("math::sin(k)", "unknown function `math::sin`"),
    ] {
        refused_config(
            "formula-grammar",
            &BASE.replace("b = \"k*n\"", &format!("b = \"{b}\"")),
            &["configs/demo/bad.toml:6:23:", needle],
        );
    }
}

#[test]
fn i_repeated_grid_values_are_refused_at_the_repeat() {
    refused_config(
        "grid-repeat",
        &BASE.replace("k = [1, 2]", "k = [1, 2, 1]"),
        &["configs/demo/bad.toml:5:21:", "entry 3 (1) repeats entry 1 (1)"],
    );
    refused_config(
        "grid-zero",
        &BASE.replace("k = [1, 2]", "k = [0.0, -0.0]").replace("b = \"k*n\"", "b = \"(k+1)*n\""),
        &["configs/demo/bad.toml:5:20:", "entry 2 (-0) repeats entry 1 (0)"],
    );
}

#[test]
fn i_ball_by_ball_work_is_bounded() {
    let huge = u64::MAX.to_string();
    refused_command(
        "exp-2^64",
        &["simulate", "--process", "two_choice", "--weights", "exp", "--n", "100", "--m", &huge],
        &["m = 18446744073709551615 balls one at a time", "584.5 years", "m <= 10000000000000"],
    );
    // Each run within the bound, the item beyond it: runs × points × balls.
    refused_config(
        "work-item",
        &BASE
            .replace("runs = 3", "runs = 3000")
            .replace("n = 50, b = \"k*n\", batches = 4", "n = 50, m = \"k*10^12\"")
            .replace(
                "process = { kind = \"two_choice\" }",
                "process = { kind = \"two_choice\" }\nweights = { kind = \"exp\" }",
            ),
        &["configs/demo/bad.toml:3:8:", "9000000000000000 balls one at a time", "at most 1000"],
    );
}

#[test]
fn l_an_empty_series_list_has_a_place() {
    let config = BASE.split("[[series]]").next().unwrap().to_string() + "series = []\n";
    refused_config("series-empty", &config, &["configs/demo/bad.toml:8:1: no [[series]]"]);
}

#[test]
fn l_integer_formulas_from_2_53_on_are_refused() {
    refused_config(
        "int-2^60",
        &BASE.replace("b = \"k*n\", batches = 4", "m = \"2^60 + 1\""),
        &["configs/demo/bad.toml:6:", "1152921504606846976 is not below 2^53"],
    );
}

#[test]
fn l_log_axes_warn_of_the_points_they_leave_out() {
    let dir = scratch("hostile", "log-drop");
    let config = BASE
        .replace("grid = { k = [1, 2] }", "grid = { k = [0, 1, 2] }")
        .replace("n = 50, b = \"k*n\", batches = 4", "n = 50, m = \"k*n + 10\"");
    std::fs::write(dir.join("configs/demo/ok.toml"), config).unwrap();
    ok(&run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out"]));
    let o = run_in(&dir, &["plot", "out/demo/ok.csv", "--log-x", "-o", "x.svg"]);
    ok(&o);
    let needle = "1 point(s) of `Two-Choice` left out (1 with x <= 0 on the logarithmic x axis)";
    assert!(stderr(&o).contains(needle), "{}", stderr(&o));
    // The smallest load is 0 at the first observation points of One-Choice.
    let config = BASE
        .replace("x = { variable = \"k\", label = \"b/n\" }", "x = { variable = \"n\" }")
        .replace("grid = { k = [1, 2] }", "grid = { n = [50] }")
        .replace("point = { n = 50, b = \"k*n\", batches = 4 }", "point = { m = 100 }")
        .replace("process = { kind = \"two_choice\" }", "statistic = \"min_trajectory\"\nobserve_every = 10\nprocess = { kind = \"one_choice\" }");
    std::fs::write(dir.join("configs/demo/min.toml"), config).unwrap();
    ok(&run_in(&dir, &["run", "configs/demo/min.toml", "--out", "out"]));
    let csv = std::fs::read_to_string(dir.join("out/demo/min.csv")).unwrap();
    let zeros = csv.lines().skip(1).filter(|l| l.split(',').nth(6) == Some("0")).count();
    assert!(zeros > 0, "{csv}");
    let o = run_in(&dir, &["plot", "out/demo/min.csv", "--log-y", "-o", "y.svg"]);
    ok(&o);
    let needle = format!("{zeros} point(s) of `Two-Choice, n=50` left out ({zeros} with y <= 0");
    assert!(stderr(&o).contains(&needle), "{needle}\n{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

// Classes 1, 4 and 11 of the third battery: names that would run as commands in the Slurm
// script, outputs over inputs, standard output and environment variables.

#[path = "../../../fuzz/common/slurm_words.rs"]
mod slurm_words;

/// A stand-in for `sbatch` and `ballast` that runs nothing: each call writes its arguments,
/// each followed by a NUL, to a new file `$FAKE_DIR/<name>-<n>`; `sbatch` prints a job id.
const FAKE_RECORDER: &str = r#"#!/bin/sh
name="$(basename "$0")"
n="$(ls "$FAKE_DIR" | wc -l)"
for a in "$@"; do printf '%s\0' "$a"; done > "$FAKE_DIR/$name-$n"
[ "$name" = sbatch ] && echo 4242
exit 0
"#;

/// The calls the fake commands recorded, in order: (name, arguments).
fn recorded_calls(dir: &Path) -> Vec<(String, Vec<String>)> {
    let mut files: Vec<(usize, String, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let f = e.file_name().into_string().unwrap();
            let (name, n) = f.rsplit_once('-').unwrap();
            (n.parse().unwrap(), name.to_string(), e.path())
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|(_, name, p)| {
            let text = String::from_utf8(std::fs::read(p).unwrap()).unwrap();
            let args = text.split_terminator('\0').map(str::to_string).collect();
            (name, args)
        })
        .collect()
}

/// `bash script args…` in `dir` with the fake commands first on PATH, HOME in `dir/home`,
/// no BALLAST in the environment, and `extra` variables.
fn run_script(dir: &Path, script: &Path, args: &[&str], extra: &[(&str, &str)]) -> Output {
    let path = format!("{}:{}", dir.join("bin").display(), std::env::var("PATH").unwrap());
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(script).args(args).current_dir(dir).env("PATH", path).env_remove("BALLAST");
    cmd.env("HOME", dir.join("home")).env("FAKE_DIR", dir.join("calls"));
    cmd.env_remove("SLURM_ARRAY_TASK_ID").env_remove("SLURM_CPUS_PER_TASK");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The words `sh` makes of `command` (what Slurm does with a `--wrap` command), found by
/// `eval` in `dir`: quoting that fails here runs the injected command, which the caller sees.
fn sh_words(dir: &Path, command: &str) -> Vec<String> {
    let o = std::process::Command::new("sh")
        .args(["-c", r#"eval "set -- $1"; for a in "$@"; do printf '%s\0' "$a"; done"#, "sh"])
        .arg(command)
        .current_dir(dir)
        .output()
        .unwrap();
    ok(&o);
    String::from_utf8(o.stdout).unwrap().split_terminator('\0').map(str::to_string).collect()
}

/// The hostile parts of names: commands in every form a shell would run, quotes, `%` (which
/// `sbatch` expands in file names), a variable, white space and a newline.
const HOSTILE_NAMES: [&str; 13] = [
    "$(touch PWNED1)",
    "`touch PWNED2`",
    ";touch PWNED3;",
    "&touch PWNED4&",
    ">PWNED5",
    "\"$(touch PWNED6)\"",
    "'$(touch PWNED7)'",
    "%x%j%A%%",
    "$HOME",
    " a  b ",
    "\ntouch PWNED8\n",
    "\t\\n\\",
    "'\"; touch PWNED9 #",
];

/// One hostile name `h` in the config's folder, file and the script's folder: the script
/// must submit, run the shard and merge with exactly those paths, and run nothing else.
fn slurm_script_runs_only_sbatch(i: usize, h: &str) {
    let dir = scratch("hostile", &format!("slurm-quote-{i}"));
    let (paper, item) = (format!("p{h}q"), format!("i{h}j"));
    let config = format!("configs/{paper}/{item}.toml");
    std::fs::create_dir_all(dir.join("configs").join(&paper)).unwrap();
    std::fs::write(dir.join(&config), BASE).unwrap();
    for d in ["bin", "home", "calls"] {
        std::fs::create_dir_all(dir.join(d)).unwrap();
    }
    for name in ["sbatch", "ballast"] {
        std::fs::write(dir.join("bin").join(name), FAKE_RECORDER).unwrap();
        let chmod = std::process::Command::new("chmod")
            .arg("+x")
            .arg(dir.join("bin").join(name))
            .status()
            .unwrap();
        assert!(chmod.success());
    }
    let script = format!("s{h}t/run.sh");
    std::fs::create_dir_all(dir.join(format!("s{h}t"))).unwrap();
    let o = run_in(
        &dir,
        &[
            "slurm",
            &config,
            "--shards",
            "2",
            "--out",
            "out",
            "--cpus",
            "3",
            "--ballast",
            "bin/ballast",
            "-o",
            &script,
        ],
    );
    ok(&o);
    let script_abs = dir.join(&script);
    // Login node: the array, then the merge.
    let o = run_script(&dir, &script_abs, &[], &[]);
    ok(&o);
    let id = format!("{paper}/{item}");
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains(&format!("submitted {id}: shards as job array 4242, merge as job 4242")));
    assert!(out.contains(&format!("outputs: out/{id}.{{csv,json,svg,md}}")), "{out}");
    let calls = recorded_calls(&dir.join("calls"));
    assert_eq!(calls.len(), 2, "{h:?}: {calls:?}");
    assert_eq!(calls[0], ("sbatch".into(), vec!["--parsable".into(), path_text(&script_abs)]));
    let merge = &calls[1].1;
    let logs = dir.join("out/slurm-logs");
    assert!(merge.contains(&format!("--output={}/%x-%j.out", logs.display())), "{merge:?}");
    let name = merge.iter().find_map(|a| a.strip_prefix("--job-name=")).unwrap();
    assert!(name.starts_with("ballast-p") && name.ends_with("-merge"), "{name:?}");
    assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)), "{name:?}");
    let wrap = merge.iter().find_map(|a| a.strip_prefix("--wrap=")).unwrap();
    assert_eq!(sh_words(&dir, wrap), ["bash", &path_text(&script_abs), "merge"], "{h:?}");
    // An array task, then the merge job with its two shard files there.
    ok(&run_script(&dir, &script_abs, &[], &[("SLURM_ARRAY_TASK_ID", "2")]));
    std::fs::create_dir_all(dir.join("out").join(&paper)).unwrap();
    for s in 1..=2 {
        std::fs::write(dir.join(format!("out/{id}.shard-{s}-of-2.bin")), "").unwrap();
    }
    ok(&run_script(&dir, &script_abs, &["merge"], &[]));
    let calls = recorded_calls(&dir.join("calls"));
    let ballast: Vec<&Vec<String>> =
        calls.iter().filter(|(n, _)| n == "ballast").map(|(_, a)| a).collect();
    let run: Vec<String> = ["run", &config, "--out", "out", "--threads", "3", "--shard", "2/2"]
        .iter()
        .chain(&["--checkpoint", "out/.checkpoint"])
        .map(|s| s.to_string())
        .collect();
    assert_eq!(ballast[0], &run, "{h:?}");
    let shard = |s: u32| format!("out/{id}.shard-{s}-of-2.bin");
    let merge =
        vec!["merge".into(), config.clone(), "--out".into(), "out".into(), shard(1), shard(2)];
    assert_eq!(ballast[1], &merge, "{h:?}");
    assert_eq!(calls.len(), 4, "{h:?}: {calls:?}");
    let ran: Vec<PathBuf> = tree(&dir)
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("PWNED")))
        .collect();
    assert!(ran.is_empty(), "{h:?}: the script ran a command: {ran:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

fn path_text(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

#[test]
fn c1_hostile_names_in_the_slurm_script_run_nothing_but_sbatch() {
    for (i, h) in HOSTILE_NAMES.iter().enumerate() {
        slurm_script_runs_only_sbatch(i, h);
    }
}

#[test]
fn c1_slurm_paths_that_sbatch_lines_cannot_hold_are_refused() {
    let dir = scratch("hostile", "slurm-refused");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    let before = tree(&dir);
    for out in ["o ut", "o%ut", "o$ut", "o\"ut", "o\nut"] {
        let o = run_in(&dir, &["slurm", "configs/demo/ok.toml", "--shards", "2", "--out", out]);
        assert_eq!(o.status.code(), Some(2), "{out:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("(from --out)"), "{out:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("o\nut"), "a raw newline in the message");
    }
    assert_eq!(tree(&dir), before, "slurm wrote files despite the error");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A small fixed-seed generator (splitmix64) for the random names below.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A name of 0 to 11 characters, most of them ones a shell or `sbatch` would read.
    fn name(&mut self) -> String {
        const CHARS: &[char] = &[
            '$',
            '(',
            ')',
            '`',
            ';',
            '&',
            '>',
            '<',
            '|',
            '"',
            '\'',
            '%',
            '\\',
            ' ',
            '\t',
            '\n',
            '\r',
            '!',
            '*',
            '?',
            '[',
            ']',
            '{',
            '}',
            '~',
            '#',
            '=',
            '/',
            '-',
            '.',
            'a',
            'Z',
            '0',
            'é',
            '\u{85}',
            '\u{2028}',
            '\u{1f600}',
            '\u{7f}',
            '\u{1b}',
            '\0',
            'x',
            'q',
        ];
        let len = self.next() % 12;
        (0..len).map(|_| CHARS[(self.next() % CHARS.len() as u64) as usize]).collect()
    }
}

/// The stand-in for the fuzz target `slurm_script` (same check): random names, fixed seed.
#[test]
fn c1_slurm_script_words_round_trip_for_random_names() {
    let cases = if cfg!(debug_assertions) { 20_000 } else { 300_000 };
    let mut rng = Mix(39);
    for _ in 0..cases {
        let flags = rng.next();
        let plain = |s: String, keep: bool| if keep { Some(s) } else { None };
        let spec = ballast_cli::SlurmScriptSpec {
            id: format!("{}/{}", rng.name(), rng.name()),
            config: rng.name(),
            out: rng.name(),
            logs: if flags & 4 == 0 { format!("/abs/{}", rng.name()) } else { "/abs/logs".into() },
            workdir: if flags & 8 == 0 { rng.name() } else { "/work/dir".into() },
            ballast: rng.name(),
            shards: 3,
            cpus: 2,
            mem: "4G".into(),
            time: "04:00:00".into(),
            partition: plain(rng.name(), flags & 1 != 0),
            account: plain(rng.name(), flags & 2 != 0),
            scale: [None, Some("--quick"), Some("--reduced")][(flags >> 4) as usize % 3],
        };
        if let Err(e) = slurm_words::check(&spec) {
            panic!("{e}\nspec: {spec:?}");
        }
    }
}

/// Asserts exit 2 with every needle in stderr.
fn refused(o: &Output, what: &str, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "{what}: {err}");
    for n in needles {
        assert!(err.contains(n), "{what}: `{n}` not in stderr:\n{err}");
    }
}

#[test]
fn c4_outputs_never_replace_inputs() {
    let dir = scratch("hostile", "over-inputs");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    ok(&run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out", "--no-checkpoint"]));
    std::fs::hard_link(dir.join("out/demo/ok.csv"), dir.join("linked.csv")).unwrap();
    let entries = tree(&dir);
    let before: Vec<(PathBuf, Vec<u8>)> = tree(&dir)
        .into_iter()
        .filter(|p| dir.join(p).is_file())
        .map(|p| (p.clone(), std::fs::read(dir.join(p)).unwrap()))
        .collect();
    for (input, out) in [
        ("out/demo/ok.csv", "out/demo/ok.csv"),
        ("out/demo/ok.csv", "out/demo/ok.json"),
        ("out/demo/ok.svg", "./out/demo/../demo/ok.csv"),
        ("out/demo/ok.json", "linked.csv"),
    ] {
        let o = run_in(&dir, &["plot", input, "-o", out]);
        refused(&o, &format!("plot {input} -o {out}"), &[out, "(-o)", "same file"]);
    }
    let o = run_in(
        &dir,
        &["slurm", "configs/demo/ok.toml", "--shards", "2", "-o", "configs/demo/ok.toml"],
    );
    refused(&o, "slurm -o config", &["configs/demo/ok.toml", "(the config)"]);
    // A config whose outputs would land on itself, and a "shard" that is an output.
    std::fs::write(dir.join("configs/demo/x.csv"), BASE).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/x.csv", "--out", "configs", "--no-checkpoint"]);
    refused(&o, "run over its config", &["configs/demo/x.csv", "(the config)"]);
    std::fs::remove_file(dir.join("configs/demo/x.csv")).unwrap();
    let o = run_in(&dir, &["merge", "configs/demo/ok.toml", "out/demo/ok.md", "--out", "out"]);
    refused(&o, "merge over a shard", &["out/demo/ok.md", "(a shard file)"]);
    for (p, bytes) in &before {
        assert_eq!(&std::fs::read(dir.join(p)).unwrap(), bytes, "{} changed", p.display());
    }
    assert_eq!(tree(&dir), entries, "files written despite the errors");
    // A plot elsewhere is written, atomically: no temporary is left beside it.
    ok(&run_in(&dir, &["plot", "out/demo/ok.csv", "-o", "figs/a.svg"]));
    let figs: Vec<_> = std::fs::read_dir(dir.join("figs")).unwrap().flatten().collect();
    assert_eq!(figs.len(), 1, "{figs:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `ballast args…` in `dir` with standard output going to `out`.
fn run_to(dir: &Path, args: &[&str], out: impl Into<std::process::Stdio>) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ballast"))
        .args(args)
        .current_dir(dir)
        .stdout(out)
        .output()
        .unwrap()
}

#[test]
fn c11_standard_output_failures_are_reported_not_panics() {
    let dir = scratch("hostile", "stdout");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    let simulate = ["simulate", "--process", "two_choice", "--n", "10", "--m", "100", "--json"];
    let commands: [&[&str]; 3] =
        [&simulate, &["list"], &["slurm", "configs/demo/ok.toml", "--shards", "2"]];
    for args in commands {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let o = run_to(&dir, args, full);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?} > /dev/full: {err}");
        assert!(err.contains("cannot write to standard output"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        // A pipe whose reader is gone: quiet, with the status of SIGPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = run_to(&dir, args, writer);
        assert_eq!(o.status.code(), Some(141), "{args:?} | (closed): {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn c11_thread_and_progress_variables_are_checked_like_options() {
    let dir = scratch("hostile", "env");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    let before = tree(&dir);
    let with_env = |args: &[&str], k: &str, v: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ballast"))
            .args(args)
            .current_dir(&dir)
            .env(k, v)
            .output()
            .unwrap()
    };
    let simulate = ["simulate", "--process", "two_choice", "--n", "10", "--m", "100"];
    let run = ["run", "configs/demo/ok.toml", "--out", "out"];
    for v in ["100000", "abc", "-1"] {
        let o = with_env(&simulate, "RAYON_NUM_THREADS", v);
        refused(&o, v, &["RAYON_NUM_THREADS", v, "1 to 1024"]);
        refused(&with_env(&run, "RAYON_NUM_THREADS", v), v, &["RAYON_NUM_THREADS"]);
    }
    for v in ["abc", "-5", "1.5"] {
        let o = with_env(&run, "BALLAST_PROGRESS_SECS", v);
        refused(&o, v, &["BALLAST_PROGRESS_SECS", v, "whole number of seconds"]);
    }
    assert_eq!(tree(&dir), before, "files written despite the errors");
    // --threads wins over the variable (rayon does not read it then); good values run.
    let mut threads = simulate.to_vec();
    threads.extend(["--threads", "2"]);
    ok(&with_env(&threads, "RAYON_NUM_THREADS", "100000"));
    ok(&with_env(&simulate, "RAYON_NUM_THREADS", "2"));
    ok(&with_env(&simulate, "BALLAST_PROGRESS_SECS", "0"));
    std::fs::remove_dir_all(&dir).unwrap();
}

// Classes 5, 7, 8 and 10 of the third battery: input files (never quoted, bounded, checked
// at validation) and time linear in the number of series.

/// A value set in the environment of the `ballast` processes below, which must never appear
/// in their messages (a config naming `/proc/self/environ` used to print it).
const SECRET: &str = "ballast-hostile-secret-7f3a9c";

/// `ballast args…` in `dir` with [`SECRET`] in its environment.
fn run_secret(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ballast"))
        .args(args)
        .current_dir(dir)
        .env("BALLAST_HOSTILE_SECRET", SECRET)
        .output()
        .expect("spawning ballast")
}

/// `config` with `from` replaced by `to` (which must occur).
fn with(config: &str, from: &str, to: &str) -> String {
    assert!(config.contains(from), "`{from}` not in the config");
    config.replacen(from, to, 1)
}

/// `text` as a TOML basic string.
fn toml_str(text: &str) -> String {
    toml::Value::String(text.to_owned()).to_string()
}

/// An allocation config whose series (or reference) names the file `path`: `start`,
/// `sampling` or `reference`.
fn alloc_naming(kind: &str, path: &str) -> String {
    let p = toml_str(path);
    match kind {
        "start" => format!("{BASE}start = {{ kind = \"file\", path = {p} }}\n"),
        "sampling" => format!("{BASE}sampling = {{ kind = \"file\", path = {p} }}\n"),
        _ => with(
            BASE,
            "[[series]]",
            &format!("[[reference]]\nfile = {p}\nlabel = \"published\"\n\n[[series]]"),
        ),
    }
}

/// A graph config whose topology is the edge list `path` (a table, or the shorthand).
fn graph_naming(path: &str, table: bool) -> String {
    let graph = if table {
        format!("{{ kind = \"file\", path = {} }}", toml_str(path))
    } else {
        toml_str(&format!("file:{path}"))
    };
    format!(
        "kind = \"graph\"\ntitle = \"t\"\nseed = 1\nruns = 2\nx = {{ variable = \"n\" }}\n\
         grid = {{ n = [4] }}\n\n[point]\nm = \"10 * n\"\n\n[[series]]\nname = \"s\"\n\
         graph = {graph}\nstatistic = \"final_gap\"\nprocess = {{ kind = \"two_choice\" }}\n"
    )
}

/// `bad.toml:line:column` of the first occurrence of `needle` in `config`.
fn place(config: &str, needle: &str) -> String {
    let at = config.find(needle).expect("needle in config");
    let line = config[..at].matches('\n').count() + 1;
    let col = config[..at].rsplit('\n').next().unwrap().chars().count() + 1;
    format!("configs/demo/bad.toml:{line}:{col}: ")
}

/// The kinds of input file [`refused_input`] tries.
const ALL_INPUTS: [&str; 5] = ["start", "sampling", "reference", "graph-table", "graph-shorthand"];

/// Every config naming `path` as each of `kinds` of input file is refused at validation: exit
/// 2, the config's place of the path, each needle, nothing written, and neither [`SECRET`]
/// nor any longer value of the environment in stderr.
fn refused_input(name: &str, path: &str, kinds: &[&str], needles: &[&str]) {
    let quoted = toml_str(path);
    let configs = [
        ("start", alloc_naming("start", path), quoted.clone()),
        ("sampling", alloc_naming("sampling", path), quoted.clone()),
        ("reference", alloc_naming("reference", path), quoted.clone()),
        ("graph-table", graph_naming(path, true), quoted.clone()),
        ("graph-shorthand", graph_naming(path, false), toml_str(&format!("file:{path}"))),
    ];
    for (kind, config, value) in configs.into_iter().filter(|(k, _, _)| kinds.contains(k)) {
        let dir = scratch("hostile", &format!("{name}-{kind}"));
        std::fs::write(dir.join("configs/demo/bad.toml"), &config).unwrap();
        std::fs::write(dir.join("configs/demo/edges.txt"), "0 1\n1 2\n2 3\n3 0\n").unwrap();
        let before = tree(&dir);
        let o = run_secret(&dir, &["run", "configs/demo/bad.toml", "--out", "out"]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name} as {kind}: {err}");
        let mut all = vec![place(&config, &value)];
        all.extend(needles.iter().map(|n| n.to_string()));
        for n in all {
            assert!(err.contains(&n), "{name} as {kind}: `{n}` not in stderr:\n{err}");
        }
        assert!(!err.contains(SECRET), "{name} as {kind}: the environment leaked:\n{err}");
        for (k, v) in std::env::vars() {
            assert!(v.len() < 16 || !err.contains(&v), "{name} as {kind}: ${k} in:\n{err}");
        }
        assert_eq!(tree(&dir), before, "{name} as {kind}: files written");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn inputs_environ_is_named_never_quoted_as_any_input_file() {
    let environ = "/proc/self/environ";
    if !Path::new(environ).exists() {
        return;
    }
    refused_input("environ", environ, &ALL_INPUTS, &["`/proc/self/environ`"]);
    // The same through the command line's flags.
    let dir = scratch("hostile", "environ-flags");
    let sim = ["simulate", "--process", "two_choice", "--n", "4", "--m", "8"];
    for flag in [
        ["--start", "file:path=/proc/self/environ"],
        ["--sampling", "file:path=/proc/self/environ"],
        ["--graph", "file:/proc/self/environ"],
    ] {
        let args: Vec<&str> = sim.iter().chain(&flag).copied().collect();
        let o = run_secret(&dir, &args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flag:?}: {err}");
        assert!(err.contains("`/proc/self/environ`: line 1, column 1"), "{flag:?}: {err}");
        assert!(!err.contains(SECRET), "{flag:?}: the environment leaked:\n{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inputs_special_and_oversized_files_are_refused_before_reading() {
    if Path::new("/dev/zero").exists() {
        // Read until memory ran out (abort) as a reference table.
        refused_input("zero", "/dev/zero", &ALL_INPUTS, &["`/dev/zero`: is not a regular file"]);
    }
    let dir = scratch("hostile", "inputs-big");
    // Sparse files one byte over each limit: refused by their size, not read.
    let big = |name: &str, len: u64| {
        let p = dir.join(name);
        std::fs::File::create(&p).unwrap().set_len(len).unwrap();
        p.display().to_string()
    };
    let small = big("small.bin", (64 << 20) + 1);
    let kinds = ["start", "sampling", "reference"];
    refused_input("big", &small, &kinds, &["is larger than 64 MiB, the limit for this kind"]);
    let huge = big("huge.bin", (256 << 20) + 1);
    let graphs = ["graph-table", "graph-shorthand"];
    refused_input("huge", &huge, &graphs, &["is larger than 256 MiB, the limit for this kind"]);
    // A FIFO with no writer: opening it would wait for ever.
    let fifo = dir.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        refused_input("fifo", &fifo.display().to_string(), &ALL_INPUTS, &["not a regular file"]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn inputs_file_problems_are_validation_errors_at_the_key() {
    let dir = scratch("hostile", "inputs-dirs");
    let d = dir.display().to_string();
    refused_input("dir", &d, &ALL_INPUTS, &["is a directory, expected a regular file"]);
    let missing = format!("{d}/nowhere.txt");
    refused_input("missing", &missing, &ALL_INPUTS, &["nowhere.txt`: no such file"]);
    refused_input("nul", "a\0b", &ALL_INPUTS, &["a\\0b`: the path contains a NUL byte"]);
    std::fs::remove_dir_all(&dir).unwrap();
    // A malformed edge list: the config's place, then the line and column in the file
    // (relative paths of graph files are read from the working directory).
    for (name, edges, needles) in [
        ("bad-id", "0 1\n1 2\n2 x3\n", &["line 3, column 3: a field of 2 characters"][..]),
        ("loop", "0 1\n1 1\n", &["line 2, column 1: a loop"][..]),
        ("wrong-n", "0 1\n1 2\n2 0\n", &["n = 4 but graph file `e.txt` has 3 vertices"][..]),
    ] {
        for table in [true, false] {
            let config = graph_naming("e.txt", table);
            let value = if table { "\"e.txt\"" } else { "\"file:e.txt\"" };
            let dir = scratch("hostile", &format!("graph-{name}-{table}"));
            std::fs::write(dir.join("e.txt"), edges).unwrap();
            std::fs::write(dir.join("configs/demo/bad.toml"), &config).unwrap();
            let before = tree(&dir);
            let o = run_in(&dir, &["run", "configs/demo/bad.toml", "--out", "out"]);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{name}: {err}");
            for n in [place(&config, value).as_str(), "graph file `e.txt`"].iter().chain(needles) {
                assert!(err.contains(n), "{name}: `{n}` not in stderr:\n{err}");
            }
            assert!(!err.contains("x3"), "{name}: the file's text in:\n{err}");
            assert_eq!(tree(&dir), before, "{name}: files written");
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

#[test]
fn inputs_two_thousand_one_point_series_run() {
    // Validation parsed the whole config once per series (quadratic: 1000 series took 12 s,
    // 2000 over a minute); `validation_parses_the_config_a_bounded_number_of_times` in the
    // runner counts the parses, this runs such an item end to end.
    let mut config = String::from(
        "title = \"many\"\nseed = 1\nruns = 1\nx = { variable = \"k\" }\ngrid = { k = [1] }\n\
         point = { n = 20, m = 200 }\n",
    );
    for i in 0..2000 {
        config.push_str(&format!(
            "\n[[series]]\nname = \"s{i}\"\nprocess = {{ kind = \"two_choice\" }}\n"
        ));
    }
    let dir = scratch("hostile", "many-series");
    std::fs::write(dir.join("configs/demo/many.toml"), config).unwrap();
    let o = run_in(&dir, &["run", "configs/demo/many.toml", "--out", "out", "--no-checkpoint"]);
    ok(&o);
    let csv = std::fs::read_to_string(dir.join("out/demo/many.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2001, "one row per series and a header");
    assert!(csv.lines().any(|l| l.starts_with("s1999,20,,200,")));
    std::fs::remove_dir_all(&dir).unwrap();
}

// Classes 2, 3, 6 and 12 (issue 39): temporaries, their clean-up, output sets, the report.

/// Names of the entries of `dir` (hidden ones included), sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Runs `ballast args...` in `dir` through `sh`, which first makes a symbolic link to
/// `victim` at each of `names` (relative to `dir`, `$$` standing for the pid ballast will
/// have: `exec` keeps it).
#[cfg(unix)]
fn run_with_links(dir: &Path, victim: &Path, names: &[String], args: &[&str]) -> Output {
    let links: Vec<String> =
        names.iter().map(|n| format!("ln -s '{}' \"{n}\" || exit 99;", victim.display())).collect();
    std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{} exec \"$0\" \"$@\"", links.join(" ")))
        .arg(env!("CARGO_BIN_EXE_ballast"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[cfg(unix)]
#[test]
fn c2_links_at_the_temporary_names_are_never_followed() {
    let dir = scratch("hostile", "tmp-links");
    std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    // A first run gives the checkpoint names; they are then removed so they are written again.
    ok(&run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out"]));
    let ckpt = dir.join("out/.checkpoint");
    let mut names: Vec<String> = Vec::new();
    for n in entries(&ckpt).into_iter().filter(|n| n.ends_with(".bin")) {
        std::fs::remove_file(ckpt.join(&n)).unwrap();
        names.push(format!("out/.checkpoint/.{n}.$$.tmp"));
    }
    assert!(!names.is_empty());
    for ext in ["csv", "json", "svg", "md"] {
        names.push(format!("out/demo/.ok.{ext}.$$.tmp"));
        names.push(format!("out/demo/.ok.{ext}.tmp"));
    }
    let o = run_with_links(&dir, &victim, &names, &["run", "configs/demo/ok.toml", "--out", "out"]);
    ok(&o);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious", "a link was followed");
    let written = std::fs::read_to_string(dir.join("out/demo/ok.md")).unwrap();
    assert!(written.starts_with("# demo/ok"), "{written}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn c3_clean_up_spares_other_items_user_files_and_live_writers() {
    let dir = scratch("hostile", "tmp-cleanup");
    std::fs::write(dir.join("configs/demo/a.toml"), BASE).unwrap();
    std::fs::write(dir.join("configs/demo/a.b.toml"), BASE).unwrap();
    let out = dir.join("out/demo");
    std::fs::create_dir_all(&out).unwrap();
    let dead = 4_000_000_000u32;
    let user = out.join(".a.x.tmp");
    let user2 = out.join(".a.csv.12.tmp");
    let other_item = out.join(format!(".a.b.csv.ballast-tmp-{dead}-00000000000000aa.tmp"));
    let stale = out.join(format!(".a.csv.ballast-tmp-{dead}-00000000000000bb.tmp"));
    // A live writer of item a.b (this test process, holding the lock as ballast does), and
    // one that claims item a but is still locked.
    let live = out.join(format!(".a.b.md.ballast-tmp-{}-00000000000000cc.tmp", std::process::id()));
    let live_a = out.join(format!(".a.md.ballast-tmp-{}-00000000000000dd.tmp", std::process::id()));
    for p in [&user, &user2, &other_item, &stale] {
        std::fs::write(p, "not yours").unwrap();
    }
    let hold = std::fs::File::create(&live).unwrap();
    hold.try_lock().unwrap();
    let hold_a = std::fs::File::create(&live_a).unwrap();
    hold_a.try_lock().unwrap();
    ok(&run_in(&dir, &["run", "configs/demo/a.toml", "--out", "out"]));
    assert!(!stale.exists(), "a's own stale temporary kept");
    for p in [&user, &user2, &other_item, &live, &live_a] {
        assert!(p.exists(), "{} removed", p.display());
    }
    drop((hold, hold_a));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn c6_a_directory_at_an_output_name_leaves_the_previous_set() {
    for ext in ["svg", "md"] {
        let dir = scratch("hostile", &format!("set-{ext}"));
        std::fs::write(dir.join("configs/demo/ok.toml"), BASE).unwrap();
        ok(&run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out"]));
        let out = dir.join("out/demo");
        std::fs::remove_file(out.join(format!("ok.{ext}"))).unwrap();
        std::fs::create_dir_all(out.join(format!("ok.{ext}/inside"))).unwrap();
        let before: Vec<(String, Vec<u8>)> = entries(&out)
            .into_iter()
            .filter(|n| out.join(n).is_file())
            .map(|n| (n.clone(), std::fs::read(out.join(&n)).unwrap()))
            .collect();
        assert_eq!(before.len(), 3);
        std::fs::write(dir.join("configs/demo/ok.toml"), BASE.replace("seed = 7", "seed = 8"))
            .unwrap();
        let o = run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out"]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("ok.{ext}: exists and is a directory")),
            "{}",
            stderr(&o)
        );
        for (n, bytes) in &before {
            assert_eq!(&std::fs::read(out.join(n)).unwrap(), bytes, "{n} changed");
        }
        let names = entries(&out);
        assert_eq!(names.len(), 4, "temporaries left: {names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn c12_config_texts_cannot_change_the_report_structure() {
    let dir = scratch("hostile", "report-md");
    let config = BASE
        .replace("hostile (test)", "T\\n# injected heading")
        .replace("name = \"Two-Choice\"", "name = \"a|b <!-- hidden\"");
    std::fs::write(dir.join("configs/demo/ok.toml"), config).unwrap();
    ok(&run_in(&dir, &["run", "configs/demo/ok.toml", "--out", "out"]));
    let md = std::fs::read_to_string(dir.join("out/demo/ok.md")).unwrap();
    assert!(md.starts_with("# demo/ok: T \\# injected heading\n"), "{md}");
    assert!(!md.lines().any(|l| l.starts_with("# injected")), "{md}");
    assert!(md.contains("### a\\|b \\<!-- hidden\n") && !md.contains(" <!--"), "{md}");
    std::fs::remove_dir_all(&dir).unwrap();
}
