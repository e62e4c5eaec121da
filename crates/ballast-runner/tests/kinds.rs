//! The graph, dynamic and potential item kinds: their configs validate, their quick variants
//! run through the shared writers, outputs do not depend on the thread count, and bad input
//! is reported with the field and the allowed values.

use std::path::{Path, PathBuf};

use ballast_runner::{run_experiment, Experiment, RunOptions};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const ITEMS: [&str; 7] = [
    "graphs/gap_vs_topology",
    "czumaj97/offline",
    "rbb23/max_load",
    "rbb23/empty_bins",
    "selfstab16/max_load_vs_lambda",
    "potentials/batched_gamma",
    "potentials/drift",
];

fn quick(id: &str, threads: usize) -> ballast_runner::ItemResult {
    let path = root().join(format!("configs/{id}.toml"));
    let exp = Experiment::from_path(&path).unwrap();
    assert_eq!(exp.id(), id);
    let mut opts = RunOptions::new(root().join("reference"));
    opts.quick = true;
    opts.progress = false;
    opts.threads = threads;
    opts.command = Some("test".into());
    run_experiment(&exp, &opts).unwrap()
}

#[test]
fn quick_items_are_identical_for_any_thread_count() {
    for id in ITEMS {
        let a = quick(id, 1);
        let b = quick(id, 2);
        assert!(!a.rows.is_empty(), "{id}: no rows");
        assert_eq!(a.to_csv(), b.to_csv(), "{id}: CSV differs between 1 and 2 threads");
        assert!(a.to_csv().starts_with("series,"), "{id}");
        assert!(a.to_report().contains("## Values"), "{id}");
        let dir = std::env::temp_dir().join(format!("ballast-kinds-test-{}", std::process::id()));
        let files = a.write(&dir).unwrap();
        assert_eq!(files.len(), 4, "{id}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn references_and_closed_forms_are_compared() {
    // RBB with n = 100, m = n: the empty fraction is near sqrt(2) - 1 and the published table
    // has a value at (100, 1).
    let r = quick("rbb23/empty_bins", 0);
    let row = r.rows.iter().find(|r| r.n == 100 && r.x == 1.0).unwrap();
    assert_eq!(row.statistic.name(), "avg_fraction_empty_bins");
    let published = row.refs[0].as_ref().unwrap();
    assert_eq!(published.value, 0.4117);
    let theory = row.refs[1].as_ref().unwrap();
    assert!((theory.value - (2f64.sqrt() - 1.0)).abs() < 1e-12);
    assert!((row.summary.mean - 0.41).abs() < 0.02, "{}", row.summary.mean);
    // The caveat on the authors' two runs differing by gap units is for gap statistics only.
    assert!(!r.to_report().contains("gap units"));
    // The off-line optimum of m = n balls with 2 choices is 2, as predicted.
    let r = quick("czumaj97/offline", 0);
    for row in r.rows.iter().filter(|r| r.series == "optimum d=2" && r.m == r.n) {
        assert_eq!(row.summary.mean, 2.0);
        assert_eq!(row.refs[0].as_ref().unwrap().value, 2.0);
    }
}

fn parse(src: &str) -> Result<Experiment, String> {
    Experiment::parse("t/x", Path::new("x.toml"), src).map_err(|e| e.to_string())
}

const GRAPH: &str = r#"
kind = "graph"
title = "t"
seed = 1
runs = 2
x = { variable = "n" }
grid = { n = [64] }
point = { m = "10*n" }
[[series]]
name = "cycle"
graph = "cycle"
process = { kind = "two_choice" }
statistic = "final_gap"
"#;

#[test]
fn bad_kind_configs_are_reported() {
    assert!(parse(GRAPH).is_ok());
    let e = parse(&GRAPH.replace("kind = \"graph\"", "kind = \"graphs\"")).unwrap_err();
    assert!(e.contains("unknown item kind `graphs`") && e.contains("dynamic"), "{e}");
    let e = parse(&GRAPH.replace("\"final_gap\"", "\"avg_max_load\"")).unwrap_err();
    assert!(e.contains("unknown statistic `avg_max_load`") && e.contains("offline_optimum"), "{e}");
    let e = parse(&GRAPH.replace("\"cycle\"\nprocess", "\"cycles\"\nprocess")).unwrap_err();
    assert!(e.contains("`graph`") && e.contains("torus"), "{e}");
    let e = parse(&GRAPH.replace("m = \"10*n\"", "m = \"10*n\", lambda = 1")).unwrap_err();
    assert!(e.contains("unknown parameter `lambda`"), "{e}");
    let e = parse(&GRAPH.replace("runs = 2", "runs = 2\nbogus = 1")).unwrap_err();
    assert!(e.contains("x.toml:") && e.contains("bogus"), "{e}");
}
