//! Running small experiments: thread-count determinism, reference matching, outputs.

use std::path::{Path, PathBuf};

use ballast_runner::{run_experiment, Experiment, RunOptions};

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reference")
}

const SMALL: &str = r#"
title = "small fig8_1"
seed = 42
runs = 6
x = { variable = "k", label = "b/n" }
grid = { k = [1, 2] }
point = { n = 1000, b = "k*n", batches = 3 }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }

[[series]]
name = "Three-Choice"
process = { kind = "three_choice" }
tie_break = "position"

[[reference]]
file = "batched22_fig8_1_paper.csv"
label = "published"

[[reference]]
file = "batched22_fig8_1.csv"
label = "raw.out"
"#;

fn opts(threads: usize) -> RunOptions {
    let mut o = RunOptions::new(reference_dir());
    o.threads = threads;
    o.progress = false;
    o.command = Some("test".into());
    o
}

#[test]
fn csv_is_identical_for_one_and_two_threads() {
    let exp = Experiment::parse("batched22/small", Path::new("small.toml"), SMALL).unwrap();
    let a = run_experiment(&exp, &opts(1)).unwrap();
    let b = run_experiment(&exp, &opts(2)).unwrap();
    assert_eq!(a.meta.threads, 1);
    assert_eq!(b.meta.threads, 2);
    assert_eq!(a.to_csv(), b.to_csv());
    assert_eq!(a.rows.len(), 4);
}

#[test]
fn references_are_matched_by_series_n_and_x() {
    let exp = Experiment::parse("batched22/small", Path::new("small.toml"), SMALL).unwrap();
    let r = run_experiment(&exp, &opts(2)).unwrap();
    let row = r.rows.iter().find(|r| r.series == "Two-Choice" && r.x == 2.0).unwrap();
    let published = row.refs[0].clone().unwrap();
    let raw = row.refs[1].clone().unwrap();
    assert_eq!((published.value, published.runs), (10.79, 100));
    assert_eq!((raw.value, raw.runs), (10.64, 50));
    let z =
        (row.summary.mean - 10.79) / (row.summary.stderr.powi(2) + published.stderr.powi(2)).sqrt();
    approx::assert_relative_eq!(published.z.unwrap(), z);
    let csv = r.to_csv();
    let head = csv.lines().next().unwrap();
    assert_eq!(
        head,
        "series,n,b,m,x,statistic,value,stderr,ci95_low,ci95_high,runs,reference,z,reference_raw_out,z_raw_out"
    );
    assert!(
        csv.lines().nth(2).unwrap().starts_with("Two-Choice,1000,2000,6000,2,max_gap,"),
        "{csv}"
    );
}

#[test]
fn write_produces_four_files_and_no_temporaries() {
    let exp = Experiment::parse("batched22/small", Path::new("small.toml"), SMALL).unwrap();
    let r = run_experiment(&exp, &opts(2)).unwrap();
    let dir = std::env::temp_dir().join(format!("ballast-runner-test-{}", std::process::id()));
    let files = r.write(&dir).unwrap();
    assert_eq!(files.len(), 4);
    let names: Vec<String> = std::fs::read_dir(dir.join("batched22"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    let svg = std::fs::read_to_string(dir.join("batched22/small.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("published") && svg.contains("Three-Choice"));
    // The references have z values, so the figure has the z panel below the chart.
    assert!(svg.contains("z vs published (clamped to ±10)") && svg.contains("height=\"880\""));
    // Four legend entries (two lines, two references) stay inside the chart.
    assert!(svg.contains("width=\"960\""), "the legend should stay inside");
    let md = std::fs::read_to_string(dir.join("batched22/small.md")).unwrap();
    assert!(md.contains("## Verdict") && md.contains("10.79"), "{md}");
    assert!(md.contains("differ by up to about 2 gap units"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("batched22/small.json")).unwrap())
            .unwrap();
    assert_eq!(json["metadata"]["engine"], "bins");
    assert_eq!(json["metadata"]["seed"], 42);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_reference_fails_before_running() {
    let src = SMALL.replace("batched22_fig8_1.csv", "no_such_file.csv");
    let exp = Experiment::parse("batched22/small", Path::new("small.toml"), &src).unwrap();
    let e = run_experiment(&exp, &opts(1)).unwrap_err().to_string();
    assert!(e.contains("no_such_file.csv"), "{e}");
}

#[test]
fn a_long_legend_goes_right_of_the_chart_and_the_eleventh_line_is_dashed() {
    // Eleven lines (one per value of `c`, a grid variable other than x): more than the 8
    // legend entries that fit inside, and one line more than there are colors.
    let src = r#"
title = "many lines"
seed = 1
runs = 2
x = { variable = "n", log = true }
grid = { n = [100, 200], c = { from = 1, to = 11 } }
point = { m = "c * n" }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }
reference = ""
"#;
    let exp = Experiment::parse("t/many", Path::new("many.toml"), src).unwrap();
    let r = run_experiment(&exp, &opts(1)).unwrap();
    let dir = std::env::temp_dir().join(format!("ballast-legend-test-{}", std::process::id()));
    r.write(&dir).unwrap();
    let svg = std::fs::read_to_string(dir.join("t/many.svg")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(svg.contains("width=\"1300\""), "legend column missing");
    for c in 1..=11 {
        assert_eq!(svg.matches(&format!("Two-Choice, c={c}\n</text>")).count(), 1, "c={c}");
    }
    // The eleventh line is drawn in the first line's color, dashed: as many short segments
    // (one <polyline> each) as dashes, so that color has far more polylines than one line's.
    let blue = svg.matches("stroke=\"#1F77B4\"").count();
    assert!(blue > 10, "{blue} elements in the first color: the eleventh line is not dashed");
}
