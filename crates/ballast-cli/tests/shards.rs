//! Determinism and crash safety end to end: the same config gives the same outputs on 1 and 2
//! threads, as 3 merged shards, through the generated Slurm script, and after an interrupt
//! (SIGINT) and a resume. "The same" means: CSV and SVG byte-identical, the report identical
//! above its `## Run` section, and the JSON identical after removing the execution fields
//! (`Metadata::EXECUTION_FIELDS`: command, threads, wall and CPU time, cached points, shards,
//! git).

use std::path::Path;
use std::process::{Command, Stdio};

mod common;
use common::{ok, run_in, scratch};
use std::time::{Duration, Instant};

/// An allocation item: 2 series × 3 points × 5 runs, batched, with a `distribution` series.
const ALLOCATION: &str = r#"
title = "Shard test"
seed = 11
runs = 5
x = { variable = "k", label = "b/n" }
grid = { k = [1, 2, 3] }
point = { n = 40, b = "k*n", batches = 6 }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }

[[series]]
name = "(1+beta)"
process = { kind = "one_plus_beta", beta = 0.5 }
statistic = "distribution"
"#;

/// A dynamic (round-based) item: the kinds go through the same unit runner.
const DYNAMIC: &str = r#"
kind = "dynamic"
title = "RBB shard test"
seed = 5
runs = 4
x = { variable = "n" }
grid = { n = [20, 40] }
point = { m = "2*n", burn_in = 50, rounds = 200, batches = 4 }

[[series]]
name = "RBB"
process = { kind = "rbb" }
statistic = "avg_max_load"
"#;

fn json_without_execution(path: &Path) -> serde_json::Value {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let meta = v.get_mut("metadata").and_then(|m| m.as_object_mut()).expect("metadata object");
    for &f in ballast_runner::Metadata::EXECUTION_FIELDS {
        meta.remove(f);
    }
    v
}

fn report_above_run(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let i = text.find("\n## Run\n").expect("report has a ## Run section");
    text[..i].to_string()
}

/// Asserts that two output directories hold the same result of `demo/<item>`.
fn assert_same(a: &Path, b: &Path, item: &str) {
    let f = |d: &Path, ext: &str| d.join(format!("demo/{item}.{ext}"));
    for ext in ["csv", "svg"] {
        let (x, y) = (std::fs::read(f(a, ext)).unwrap(), std::fs::read(f(b, ext)).unwrap());
        assert!(x == y, "{item}.{ext} differs between {} and {}", a.display(), b.display());
    }
    assert_eq!(report_above_run(&f(a, "md")), report_above_run(&f(b, "md")), "{item}.md");
    assert_eq!(json_without_execution(&f(a, "json")), json_without_execution(&f(b, "json")));
}

fn one_two_threads_and_three_shards(name: &str, config: &str) {
    let dir = scratch("shards", name);
    let cfg = format!("configs/demo/{name}.toml");
    std::fs::write(dir.join(&cfg), config).unwrap();
    ok(&run_in(&dir, &["run", &cfg, "--out", "t1", "--threads", "1", "--no-checkpoint"]));
    ok(&run_in(&dir, &["run", &cfg, "--out", "t2", "--threads", "2", "--no-checkpoint"]));
    let mut shard_files = Vec::new();
    for i in 1..=3 {
        let o = run_in(&dir, &["run", &cfg, "--out", "sh", "--shard", &format!("{i}/3")]);
        ok(&o);
        let path = String::from_utf8_lossy(&o.stdout).trim().to_string();
        assert!(path.ends_with(&format!("{name}.shard-{i}-of-3.bin")), "{path}");
        shard_files.push(path);
    }
    // A shard writes no item outputs.
    assert!(!dir.join(format!("sh/demo/{name}.csv")).exists());
    // Any order of the shard files.
    shard_files.reverse();
    let mut args = vec!["merge", cfg.as_str(), "--out", "merged"];
    args.extend(shard_files.iter().map(String::as_str));
    ok(&run_in(&dir, &args));
    assert_same(&dir.join("t1"), &dir.join("t2"), name);
    assert_same(&dir.join("t1"), &dir.join("merged"), name);
    let meta: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("merged/demo/{name}.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(meta["metadata"]["shards"], 3);
    // A merge reports the CPU time its shards recorded for their runs (format 10 on; left
    // out before). These items take milliseconds, so only its presence is checked here; its
    // value is checked in ballast-runner's `units` tests.
    assert!(meta["metadata"]["cpu_time_s"].as_f64().is_some(), "{meta}");

    // Merging with a shard missing, or a shard given twice, is bad input (exit 2).
    let o = run_in(&dir, &["merge", &cfg, "--out", "bad", &shard_files[0], &shard_files[1]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing shard files"));
    let o = run_in(&dir, &["merge", &cfg, "--out", "bad", &shard_files[0], &shard_files[0]]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("given twice"));
    // A shard of another version of the config is refused.
    std::fs::write(dir.join(&cfg), config.replacen("seed = ", "seed = 1", 1)).unwrap();
    let mut args = vec!["merge", cfg.as_str(), "--out", "bad"];
    args.extend(shard_files.iter().map(String::as_str));
    let o = run_in(&dir, &args);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("different version"));
    assert!(!dir.join("bad").exists(), "a failed merge wrote outputs");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn allocation_outputs_are_identical_on_1_and_2_threads_and_3_merged_shards() {
    one_two_threads_and_three_shards("alloc", ALLOCATION);
}

#[test]
fn dynamic_outputs_are_identical_on_1_and_2_threads_and_3_merged_shards() {
    one_two_threads_and_three_shards("dyn", DYNAMIC);
}

/// A config long enough (a few seconds on one thread) to be interrupted mid-way: 60 points of
/// one run each, so checkpoints appear early.
const LONG: &str = r#"
title = "Interrupt test"
seed = 3
runs = 2
x = { variable = "k" }
grid = { k = { from = 1, to = 30 } }
point = { n = 1000, m = "2000000 + k" }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }

[[series]]
name = "One-Choice"
process = { kind = "one_choice" }
"#;

#[test]
fn sigint_stops_cleanly_and_the_same_command_resumes_to_the_same_bytes() {
    signal_stops_cleanly_and_the_same_command_resumes("INT");
}

/// SIGTERM (what Slurm sends at the time limit) behaves like the first Ctrl-C.
#[test]
fn sigterm_stops_cleanly_and_the_same_command_resumes_to_the_same_bytes() {
    signal_stops_cleanly_and_the_same_command_resumes("TERM");
}

fn signal_stops_cleanly_and_the_same_command_resumes(signal: &str) {
    let dir = scratch("shards", &format!("sig{signal}"));
    let cfg = "configs/demo/long.toml";
    std::fs::write(dir.join(cfg), LONG).unwrap();
    ok(&run_in(&dir, &["run", cfg, "--out", "straight", "--threads", "1", "--no-checkpoint"]));

    let args = ["run", cfg, "--out", "resumed", "--threads", "1", "--checkpoint", "ckpt"];
    let child = Command::new(env!("CARGO_BIN_EXE_ballast"))
        .args(args)
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first checkpoint, then interrupt.
    let start = Instant::now();
    let ckpt = dir.join("ckpt");
    // (The item's lock file appears at once: count checkpoints only.)
    let bins = |d: std::fs::ReadDir| {
        d.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "bin")).count()
    };
    while std::fs::read_dir(&ckpt).map_or(0, bins) == 0 {
        assert!(start.elapsed() < Duration::from_secs(60), "no checkpoint appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
    let kill = Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status();
    let kill = kill.unwrap();
    assert!(kill.success());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(0) {
        // The run finished before the signal arrived: nothing to resume; the outputs must
        // still be right.
        eprintln!("note: the run finished before SIG{signal} arrived");
    } else {
        assert_eq!(o.status.code(), Some(130), "stderr: {err}");
        assert!(err.contains("interrupted") && err.contains("resume"), "{err}");
        // Nothing half-written: no outputs at all, no temporary files in the checkpoints.
        assert!(!dir.join("resumed/demo").exists(), "outputs written by an interrupted run");
        for e in std::fs::read_dir(&ckpt).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            // The checkpoints, and the item's lock file (kept: its lock is what counts).
            let kept = name.ends_with(".bin") || name.ends_with(".lock");
            assert!(kept, "stray file {name} in the checkpoints");
        }
        // Resume.
        let o = run_in(&dir, &args);
        ok(&o);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("resuming from checkpoints"), "no resume notice: {err}");
        let meta: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join("resumed/demo/long.json")).unwrap(),
        )
        .unwrap();
        assert!(meta["metadata"]["cached_points"].as_u64().unwrap() > 0, "nothing was resumed");
    }
    assert_same(&dir.join("straight"), &dir.join("resumed"), "long");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A stand-in for Slurm's `sbatch` that runs jobs at once: an array script once per task
/// (with `SLURM_ARRAY_TASK_ID` set), a `--wrap` command with `sh` as Slurm does; prints a
/// job id.
const FAKE_SBATCH: &str = r#"#!/bin/bash
set -e
echo "sbatch $*" >> "$FAKE_SBATCH_LOG"
wrap=""; script=""
for a in "$@"; do
    case "$a" in
        --wrap=*) wrap="${a#--wrap=}" ;;
        -*) ;;
        *) script="$a" ;;
    esac
done
if [ -n "$wrap" ]; then
    sh -c "$wrap" >&2
    echo 1002
    exit 0
fi
k="$(sed -n 's/^#SBATCH --array=1-\([0-9]*\)$/\1/p' "$script")"
for i in $(seq 1 "$k"); do
    SLURM_ARRAY_TASK_ID="$i" SLURM_CPUS_PER_TASK=1 bash "$script" >&2
done
echo 1001
"#;

#[test]
fn the_slurm_script_runs_the_shards_and_the_merge() {
    let dir = scratch("shards", "slurm");
    let cfg = "configs/demo/alloc.toml";
    std::fs::write(dir.join(cfg), ALLOCATION).unwrap();
    let o = run_in(
        &dir,
        &["slurm", cfg, "--shards", "3", "--out", "cluster", "--cpus", "2", "--time", "00:20:00"],
    );
    ok(&o);
    let script = String::from_utf8_lossy(&o.stdout).into_owned();
    for needle in [
        "#!/bin/bash",
        "#SBATCH --array=1-3",
        "#SBATCH --cpus-per-task=2",
        "--shard \"$SLURM_ARRAY_TASK_ID/$SHARDS\"",
        "--dependency=afterok:\"$array_id\"",
        "merge \"$CONFIG\"",
        ".shard-*-of-3.bin",
        "#SBATCH --time=00:20:00",
    ] {
        assert!(script.contains(needle), "script lacks {needle:?}:\n{script}");
    }
    // The script's own path may contain spaces and quotes: the merge job's `--wrap` command
    // (run by `sh`) quotes it. Under a real Slurm the unquoted path failed with exit 127.
    let jobs = dir.join("it's my jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    std::fs::write(jobs.join("run.sh"), &script).unwrap();
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("sbatch"), FAKE_SBATCH).unwrap();
    let chmod = Command::new("chmod").args(["+x", "bin/sbatch"]).current_dir(&dir).status();
    assert!(chmod.unwrap().success());
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let o = Command::new("bash")
        .arg("it's my jobs/run.sh")
        .current_dir(&dir)
        .env("PATH", path)
        .env("FAKE_SBATCH_LOG", dir.join("sbatch.log"))
        .output()
        .unwrap();
    ok(&o);
    let log = std::fs::read_to_string(dir.join("sbatch.log")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    let merge = log.lines().nth(1).unwrap();
    assert!(merge.contains("--dependency=afterok:1001"), "{log}");
    // A failed shard cancels the merge instead of leaving it pending for ever, and the merge
    // asks for the shards' time limit (a fixed one may exceed the partition's MaxTime).
    assert!(merge.contains("--kill-on-invalid-dep=yes"), "{log}");
    assert!(merge.contains("--time=00:20:00"), "{log}");
    ok(&run_in(&dir, &["run", cfg, "--out", "local", "--no-checkpoint"]));
    assert_same(&dir.join("local"), &dir.join("cluster"), "alloc");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_shard_arguments_exit_2() {
    let dir = scratch("shards", "badshard");
    let cfg = "configs/demo/alloc.toml";
    std::fs::write(dir.join(cfg), ALLOCATION).unwrap();
    for bad in ["0/3", "4/3", "x/3", "3"] {
        let o = run_in(&dir, &["run", cfg, "--shard", bad]);
        assert_eq!(o.status.code(), Some(2), "--shard {bad}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("i/k"), "--shard {bad}");
    }
    std::fs::write(dir.join("junk.bin"), b"not a shard").unwrap();
    let o = run_in(&dir, &["merge", cfg, "junk.bin"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a ballast shard file"));
    std::fs::remove_dir_all(&dir).unwrap();
}
