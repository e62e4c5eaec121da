//! The per-series stopping rule for multi-ball steps (`stop = "truncate" | "finish"`): parsed
//! into the run spec, recorded in the metadata for the series where it matters, and part of
//! the checkpoint key only when it is `finish`.

use std::path::Path;

use ballast_core::Stop;
use ballast_runner::{run_experiment, Experiment, ItemResult, RunOptions};

fn config(stop_packing: &str) -> String {
    config_with(stop_packing, "finish")
}

fn config_with(stop_packing: &str, stop_two: &str) -> String {
    format!(
        r#"
title = "test"
seed = 5
runs = 4
x = {{ variable = "n", log = true }}
grid = {{ n = [100, 200] }}
point = {{ m = "20 * n" }}

[[series]]
name = "Packing"
process = {{ kind = "packing" }}
statistic = "final_gap"
also = ["samples_per_ball"]
reference = ""
{stop_packing}

[[series]]
name = "Twinning"
process = {{ kind = "twinning" }}
statistic = "final_gap"
reference = ""

[[series]]
name = "Two-Choice"
process = {{ kind = "two_choice" }}
statistic = "final_gap"
reference = ""
stop = "{stop_two}"
"#
    )
}

fn parse(src: &str) -> Result<Experiment, String> {
    Experiment::parse("t/stop", Path::new("configs/t/stop.toml"), src).map_err(|e| e.to_string())
}

fn run(src: &str, cache: Option<&Path>) -> ItemResult {
    let exp = parse(src).unwrap_or_else(|e| panic!("{e}"));
    let mut opts = RunOptions::new("reference");
    opts.progress = false;
    opts.threads = 2;
    opts.cache_dir = cache.map(Path::to_path_buf);
    run_experiment(&exp, &opts).unwrap()
}

#[test]
fn stop_reaches_the_spec_and_the_metadata() {
    let exp = parse(&config(r#"stop = "finish""#)).unwrap();
    let plan = exp.plan(false).unwrap();
    let stops: Vec<(usize, Stop)> = plan.points.iter().map(|p| (p.series, p.spec.stop)).collect();
    assert!(stops
        .iter()
        .all(|&(s, stop)| stop == if s == 1 { Stop::Truncate } else { Stop::Finish }));
    let r = run(&config(r#"stop = "finish""#), None);
    // Only the multi-ball series are listed (Two-Choice's rule has no effect).
    assert_eq!(
        r.meta.stopping,
        vec![("Packing".to_string(), "finish".to_string()), ("Twinning".into(), "truncate".into())]
    );
    let json = serde_json::to_value(&r.meta).unwrap();
    assert_eq!(json["stopping"][0][1], "finish");
    // No multi-ball series: no field.
    let plain = config("")
        .replace(r#"kind = "packing""#, r#"kind = "one_choice""#)
        .replace(r#"kind = "twinning""#, r#"kind = "d_choice", d = 3"#);
    let r = run(&plain, None);
    assert!(r.meta.stopping.is_empty());
    assert!(serde_json::to_value(&r.meta).unwrap().get("stopping").is_none());
}

#[test]
fn unknown_stop_rule_is_rejected_with_the_choices() {
    let Err(e) = parse(&config(r#"stop = "finsh""#)) else { panic!("accepted") };
    assert!(e.contains("stop") && e.contains("truncate, finish"), "{e}");
}

#[test]
fn finish_gets_its_own_checkpoints_and_truncate_keeps_the_old_ones() {
    let dir = std::env::temp_dir().join(format!("ballast-stop-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let truncate = run(&config(""), Some(&dir));
    assert_eq!(truncate.meta.cached_points, 0);
    // The explicit default is the same run: every point comes from the checkpoints.
    let again = run(&config_with(r#"stop = "truncate""#, "truncate"), Some(&dir));
    assert_eq!(again.meta.cached_points, again.meta.points);
    // Finish on Packing: its two points are new; the others are cached (Two-Choice's
    // `finish` has no effect and is not part of its key).
    let finish = run(&config(r#"stop = "finish""#), Some(&dir));
    assert_eq!(finish.meta.cached_points, finish.meta.points - 2);
    let _ = std::fs::remove_dir_all(&dir);
}
