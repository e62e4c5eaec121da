//! `ballast plot`: the figure re-drawn from a run's outputs is the SVG the run wrote, byte for
//! byte; overlays label each input's lines; `--series`, `--log-y` and bad inputs.

use std::path::Path;

mod common;
use common::{ok, run_in, scratch};

/// Two series over a log x axis, one with a reference column, so the figure has markers,
/// a z panel and power-of-ten ticks.
const CONFIG: &str = r#"
title = "Plot test"
seed = 9
runs = 3
x = { variable = "n", log = true, label = "n (bins)" }
grid = { n = [10, 100, 1000] }
point = { m = "20 * n" }

[[series]]
name = "Two-Choice"
process = { kind = "two_choice" }

[[series]]
name = "One-Choice"
process = { kind = "one_choice" }
"#;

fn setup(name: &str) -> std::path::PathBuf {
    let dir = scratch("plot", name);
    std::fs::write(dir.join("configs/demo/fig.toml"), CONFIG).unwrap();
    let seed2 = CONFIG.replace("seed = 9", "seed = 10");
    std::fs::write(dir.join("configs/demo/fig2.toml"), seed2).unwrap();
    ok(&run_in(&dir, &["-q", "run", "configs/demo/fig.toml", "--out", "a"]));
    ok(&run_in(&dir, &["-q", "run", "configs/demo/fig2.toml", "--out", "b"]));
    dir
}

fn read(dir: &Path, p: &str) -> String {
    std::fs::read_to_string(dir.join(p)).unwrap()
}

#[test]
fn replot_of_one_result_is_the_runs_svg() {
    let dir = setup("same");
    for input in ["a/demo/fig.csv", "a/demo/fig.json", "a/demo/fig.svg"] {
        let _ = std::fs::remove_file(dir.join("re.svg"));
        ok(&run_in(&dir, &["plot", input, "-o", "re.svg"]));
        assert_eq!(read(&dir, "re.svg"), read(&dir, "a/demo/fig.svg"), "from {input}");
    }
    let svg = read(&dir, "re.svg");
    assert!(svg.contains("10³") && !svg.contains("1000.0"), "log ticks as powers");
}

#[test]
fn overlay_labels_each_inputs_lines_and_series_filter() {
    let dir = setup("overlay");
    let o = run_in(
        &dir,
        &[
            "plot",
            "a/demo/fig.csv",
            "b/demo/fig2.csv",
            "--label",
            "seed 9",
            "--label",
            "seed 10",
            "--series",
            "Two-Choice",
            "--log-y",
            "-o",
            "ov.svg",
        ],
    );
    ok(&o);
    let svg = read(&dir, "ov.svg");
    assert!(svg.contains("seed 9: Two-Choice") && svg.contains("seed 10: Two-Choice"));
    assert!(!svg.contains("One-Choice"));
    assert_ne!(svg, read(&dir, "a/demo/fig.svg"));
}

#[test]
fn bad_inputs_exit_2_and_write_nothing() {
    let dir = setup("bad");
    let cases: [&[&str]; 3] = [
        &["plot", "a/demo/fig.csv", "--series", "Three-Choice", "-o", "x.svg"],
        &["plot", "a/demo/nothing.csv", "-o", "x.svg"],
        &["plot", "a/demo/fig.csv", "b/demo/fig2.csv", "--label", "one", "-o", "x.svg"],
    ];
    for args in cases {
        let o = run_in(&dir, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(!dir.join("x.svg").exists(), "{args:?} wrote a file");
    }
    let o = run_in(&dir, cases[0]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Two-Choice") && err.contains("One-Choice"), "lists the series: {err}");
}

#[test]
fn a_changed_config_gives_a_plain_frame_with_a_warning() {
    let dir = setup("changed");
    std::fs::write(dir.join("configs/demo/fig.toml"), CONFIG.replace("Plot test", "Other"))
        .unwrap();
    let o = run_in(&dir, &["plot", "a/demo/fig.csv", "-o", "w.svg"]);
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("warning:") && err.contains("changed since"), "{err}");
}
