//! Start states, `recovery_time` and `empty_bins` in allocation configs: the series key
//! `start = { kind = …, … }` read through the core registry (file starts relative to the
//! config, errors at their line and column or naming the file and line), the pair
//! `statistic = "recovery_time"` / `recovery_target`, censored runs reported, and the
//! per-run values equal to the core's on the plan's seeds.

use std::path::{Path, PathBuf};

use ballast_core::recovery::simulate_recovery;
use ballast_core::{sim_rng, simulate_seeded, Start};
use ballast_runner::{run_experiment, Error, Experiment, Plan, RunOptions, Statistic};

fn opts() -> RunOptions {
    let mut o = RunOptions::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reference"));
    o.threads = 2;
    o.progress = false;
    o
}

const RECOVERY: &str = r#"
title = "recovery"
seed = 3
runs = 6
x = { variable = "n", label = "n" }
grid = { n = [8] }
point = { m = 400 }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
start = { kind = "one_bin", balls = 40 }
statistic = "recovery_time"
recovery_target = "ln(n)"
also = ["empty_bins", "final_gap"]
"#;

fn parse_at(path: &Path, src: &str) -> Result<Experiment, Error> {
    Experiment::parse("test/recovery", path, src)
}

fn errors(src: &str) -> Vec<String> {
    match parse_at(Path::new("item.toml"), src) {
        Err(Error::Config { errors, .. }) => errors.iter().map(ToString::to_string).collect(),
        Err(e) => panic!("not a config error: {e}"),
        Ok(_) => panic!("config should be rejected:\n{src}"),
    }
}

fn has(errors: &[String], needles: &[&str]) {
    let hits: Vec<&String> =
        errors.iter().filter(|e| needles.iter().all(|n| e.contains(n))).collect();
    assert_eq!(hits.len(), 1, "want one message with {needles:?} in {errors:#?}");
}

#[test]
fn recovery_time_and_empty_bins_are_the_cores_values_on_the_plan_seeds() {
    let exp = parse_at(Path::new("item.toml"), RECOVERY).unwrap();
    let plan = exp.plan(false).unwrap();
    assert_eq!(plan.points[0].spec.start, Start::OneBin { balls: 40 });
    let target = 8f64.ln();
    assert_eq!(plan.points[0].recovery_target, Some(target));
    let r = run_experiment(&exp, &opts()).unwrap();
    let row = |s: Statistic| r.rows.iter().find(|r| r.statistic == s).unwrap().summary.mean;
    let spec = &plan.points[0].spec;
    let (mut rec, mut empty, mut gap) = (0.0, 0.0, 0.0);
    for run in 0..6 {
        let seed = Plan::unit_seed(3, "test/recovery", 0, run);
        let (out, t) = simulate_recovery(spec, &mut sim_rng(seed), target).unwrap();
        rec += t.expect("recovers within m") as f64 / 6.0;
        empty += out.finals.empty_bins as f64 / 6.0;
        gap += out.final_gap / 6.0;
        // Watching the gap does not change the bin engine's values.
        assert_eq!(simulate_seeded(spec, seed).unwrap(), out);
    }
    assert!((row(Statistic::RecoveryTime) - rec).abs() < 1e-9);
    assert!((row(Statistic::EmptyBins) - empty).abs() < 1e-9);
    assert!((row(Statistic::FinalGap) - gap).abs() < 1e-9);
    // From one bin of 40 the other 7 bins need about 35 · 8/7 balls before the gap is ln 8.
    assert!(rec > 200.0 && rec < 400.0, "{rec}");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn censored_runs_count_as_m_and_are_reported() {
    let src = RECOVERY.replace("m = 400", "m = 50");
    let r = run_experiment(&parse_at(Path::new("item.toml"), &src).unwrap(), &opts()).unwrap();
    let rec = r.rows.iter().find(|r| r.statistic == Statistic::RecoveryTime).unwrap();
    assert_eq!(rec.summary.mean, 50.0);
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    assert!(r.warnings[0].contains("6 of 6 runs never brought the gap"), "{}", r.warnings[0]);
}

#[test]
fn file_starts_are_read_next_to_the_config() {
    let dir = tempdir();
    std::fs::write(dir.join("loads.txt"), "# one load per line\n5\n0\n0\n0\n").unwrap();
    let src = RECOVERY
        .replace("n = [8]", "n = [4]")
        .replace("{ kind = \"one_bin\", balls = 40 }", "{ kind = \"file\", path = \"loads.txt\" }");
    let exp = parse_at(&dir.join("item.toml"), &src).unwrap();
    let plan = exp.plan(false).unwrap();
    assert_eq!(plan.points[0].spec.start, Start::Loads(vec![5, 0, 0, 0]));
    // A bad line: the file and its line.
    std::fs::write(dir.join("loads.txt"), "5\nfive\n0\n0\n").unwrap();
    let e = parse_at(&dir.join("item.toml"), &src).unwrap_err().to_string();
    assert!(e.contains("loads.txt`: line 2, column 1") && e.contains("is not a load"), "{e}");
    assert!(!e.contains("five"), "{e}");
    // As many loads as bins.
    std::fs::write(dir.join("loads.txt"), "5\n0\n").unwrap();
    let e = parse_at(&dir.join("item.toml"), &src).unwrap_err().to_string();
    assert!(e.contains("one load per bin"), "{e}");
    std::fs::remove_file(dir.join("loads.txt")).unwrap();
    let e = parse_at(&dir.join("item.toml"), &src).unwrap_err().to_string();
    assert!(e.contains("loads.txt`: no such file"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_starts_and_targets_are_located_errors() {
    let with = |start: &str| RECOVERY.replace("{ kind = \"one_bin\", balls = 40 }", start);
    has(
        &errors(&with("{ kind = \"one_bin\", ball = 40 }")),
        &["item.toml:12:", "did you mean `balls`"],
    );
    has(
        &errors(&with("{ kind = \"unifrom\", k = 2 }")),
        &["item.toml:12:", "did you mean `uniform`"],
    );
    has(&errors(&with("{ k = 2 }")), &["needs `kind`", "one_bin"]);
    has(&errors(&with("{ kind = \"uniform\", k = -1 }")), &["item.toml:12:", "0..=4294967295"]);
    // Weighted runs from a start are refused, at the start.
    let weighted = with("{ kind = \"uniform\", k = 2 }\nweights = { kind = \"exp\" }");
    has(&errors(&weighted), &["item.toml:12:", "start"]);
    // The target without the statistic, and the statistic without the target.
    let no_stat = RECOVERY.replace("statistic = \"recovery_time\"", "statistic = \"final_gap\"");
    let no_stat = no_stat.replace("also = [\"empty_bins\", \"final_gap\"]", "");
    has(&errors(&no_stat), &["item.toml:14:", "applies to the statistic \"recovery_time\""]);
    let no_target = RECOVERY.replace("recovery_target = \"ln(n)\"", "");
    has(&errors(&no_target), &["needs `recovery_target`"]);
    has(
        &errors(&RECOVERY.replace("\"ln(n)\"", "\"ln(q)\"")),
        &["item.toml:14:", "recovery_target"],
    );
}

/// A fresh scratch directory under the target dir.
fn tempdir() -> PathBuf {
    let base = std::env::temp_dir().join(format!("ballast-starts-{}", std::process::id()));
    std::fs::create_dir_all(&base).unwrap();
    base
}

#[test]
fn a_start_with_blocks_is_warned_about() {
    let src = RECOVERY
        .replace("statistic = \"recovery_time\"", "statistic = \"final_gap\"")
        .replace("recovery_target = \"ln(n)\"", "sampling = { blocks = 3 }")
        .replace("also = [\"empty_bins\", \"final_gap\"]", "");
    // `sampling` is a top-level key: move it before the series.
    let src = src
        .replace("sampling = { blocks = 3 }\n", "")
        .replace("point = { m = 400 }", "point = { m = 400 }\nsampling = { blocks = 3 }");
    let plan = parse_at(Path::new("item.toml"), &src).unwrap().plan(false).unwrap();
    assert!(
        plan.warnings.iter().any(|w| w.contains("only the first block starts from `start`")),
        "{:?}",
        plan.warnings
    );
}

#[test]
fn recovery_rows_are_the_same_on_one_and_two_threads() {
    let exp = parse_at(Path::new("item.toml"), RECOVERY).unwrap();
    let mut one = opts();
    one.threads = 1;
    let a = run_experiment(&exp, &one).unwrap();
    let b = run_experiment(&exp, &opts()).unwrap();
    let means = |r: &ballast_runner::ItemResult| {
        r.rows.iter().map(|r| (r.statistic, r.summary.mean, r.summary.sd)).collect::<Vec<_>>()
    };
    assert_eq!(means(&a), means(&b));
}
