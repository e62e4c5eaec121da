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
        ("ref-inf", "Two-Choice,50,1,inf,10\n", "`value` = inf is not a finite number"),
        ("ref-nan", "Two-Choice,50,1,NaN,10\n", "`value` = NaN is not a finite number"),
        ("ref-dup", "Two-Choice,50,1,3,10\nTwo-Choice,50,1,4,10\n", "row 3: a second row"),
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
