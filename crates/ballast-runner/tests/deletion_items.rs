//! Deletion models in `kind = "dynamic"` configs: the runs are the model's own on the plan's
//! seeds (discrepancy and overload as `simulate` gives them); a schedule file is read
//! relative to the config's directory and a bad one is refused naming the file, line and
//! column but none of its text; the level engine refuses what needs ball identities.

use std::path::Path;

use ballast_core::sim_rng;
use ballast_dynamic::workload::{Beta, Workload};
use ballast_dynamic::{simulate, DeletionConfig, DynamicSpec, Horizon};
use ballast_runner::{run_experiment, Experiment, Plan, RunOptions};

const ID: &str = "test/deletion_items";
const SEED: u64 = 7;
const RUNS: u64 = 3;

fn config(statistic: &str, process: &str) -> String {
    format!(
        "kind = \"dynamic\"\ntitle = \"t\"\nseed = {SEED}\nruns = {RUNS}\n\
         x = {{ variable = \"n\" }}\ngrid = {{ n = [50] }}\n\
         [point]\nm = 100\nburn_in = 5\nrounds = 40\n\n\
         [[series]]\nname = \"s\"\nprocess = {process}\nstatistic = \"{statistic}\"\n"
    )
}

fn run(path: &Path, text: &str) -> ballast_runner::ItemResult {
    let mut o = RunOptions::new(path.parent().unwrap());
    o.progress = false;
    o.threads = 2;
    o.command = Some("test".into());
    let exp = Experiment::parse(ID, path, text).unwrap();
    run_experiment(&exp, &o).unwrap()
}

#[test]
fn random_deletions_run_as_the_model_says() {
    let process = "{ kind = \"random_deletions\", beta = \"0.5 + 0.25 * min(1, t / (10 * n))\" }";
    let dir = tempdir();
    for (stat, overload) in [("avg_discrepancy", false), ("avg_overload", true)] {
        let got = run(&dir.join("d.toml"), &config(stat, process)).rows[0].summary.mean;
        let beta = Beta::parse("0.5 + 0.25 * min(1, t / (10 * n))").unwrap();
        let spec = DynamicSpec::Deletions(DeletionConfig::new(50, Workload::Random(beta)));
        let want = (0..RUNS)
            .map(|r| {
                let mut rng = sim_rng(Plan::unit_seed(SEED, ID, 0, r));
                let out = simulate(&spec, &Horizon::new(5, 40), &mut rng).unwrap();
                if overload {
                    out.overload.mean
                } else {
                    out.discrepancy.mean
                }
            })
            .sum::<f64>()
            / RUNS as f64;
        assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{stat}: {got} vs {want}");
        assert!(got > 0.0, "{stat}: {got}");
    }
}

fn tempdir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ballast-deletion-items-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_schedule_file_is_read_beside_the_config_and_refused_with_its_place() {
    let dir = tempdir().join("sched");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("w.txt"), "# fill\n+100\n*\n-\n+\n").unwrap();
    let process = "{ kind = \"insert_delete\", workload = \"schedule\", schedule = \"w.txt\", \
                   deletion = \"oldest\", reinsert = true }";
    let r = run(&dir.join("d.toml"), &config("avg_system_load", process));
    // 100 balls, then delete/insert pairs: at a round end (50 steps: even) 100 balls again.
    assert_eq!(r.rows[0].summary.mean, 100.0, "{:?}", r.rows[0]);
    std::fs::write(dir.join("bad.txt"), "+10\n  secret-text\n").unwrap();
    let process = process.replace("w.txt", "bad.txt");
    let e = Experiment::parse(ID, &dir.join("d.toml"), &config("avg_max_load", &process))
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.txt") && e.contains("line 2") && e.contains("column 3"), "{e}");
    assert!(!e.contains("secret"), "the message quotes the file: {e}");
    let missing = config("avg_max_load", &process.replace("bad.txt", "none.txt"));
    let e = Experiment::parse(ID, &dir.join("d.toml"), &missing).unwrap_err().to_string();
    assert!(e.contains("none.txt"), "{e}");
}

#[test]
fn the_level_engine_refuses_oldest_first_with_the_reason() {
    let process = "{ kind = \"insert_delete\", deletion = \"oldest\", engine = \"levels\" }";
    let e = Experiment::parse(ID, Path::new("d.toml"), &config("avg_max_load", process))
        .unwrap_err()
        .to_string();
    assert!(e.contains("oldest-first") && e.contains("engine = \"bins\""), "{e}");
    // The level engine runs (its own random stream: another value than the bin engine's,
    // close to it in law).
    let levels = "{ kind = \"random_deletions\", beta = 0.6, engine = \"levels\" }";
    let bins = "{ kind = \"random_deletions\", beta = 0.6 }";
    let a = run(&tempdir().join("d.toml"), &config("avg_system_load", levels)).rows[0].summary.mean;
    let b = run(&tempdir().join("d.toml"), &config("avg_system_load", bins)).rows[0].summary.mean;
    assert!(a != b && a > 0.0 && b > 0.0, "levels {a}, bins {b}");
    let e = Experiment::parse(
        ID,
        Path::new("d.toml"),
        &config("avg_max_load", "{ kind = \"random_deletions\", beta = 1.5 }"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("beta") && e.contains("[0, 1]"), "{e}");
}
