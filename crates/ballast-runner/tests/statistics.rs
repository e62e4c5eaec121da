//! The statistics added for the batched and noise papers: running max per batch, rounding
//! rules, gap distributions beside a published table, the blocks sampling protocol, the
//! `[reduced]` scale and the point cache.

use std::path::{Path, PathBuf};

use ballast_runner::stats::Rounding;
use ballast_runner::{
    distribution_cells, percent_z, run_experiment, running_max, Experiment, RunOptions, Scale,
    Statistic,
};

fn reference_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reference")
}

fn opts() -> RunOptions {
    let mut o = RunOptions::new(reference_dir());
    o.threads = 2;
    o.progress = false;
    o
}

fn parse(src: &str) -> Experiment {
    Experiment::parse("test/stats", Path::new("stats.toml"), src).unwrap_or_else(|e| panic!("{e}"))
}

fn parse_err(src: &str) -> String {
    Experiment::parse("test/stats", Path::new("stats.toml"), src).unwrap_err().to_string()
}

#[test]
fn running_max_is_the_prefix_maximum() {
    assert_eq!(running_max(&[]), Vec::<f64>::new());
    assert_eq!(running_max(&[5.0, 2.0, 7.0, 7.0, 1.0]), vec![5.0, 5.0, 7.0, 7.0, 7.0]);
}

const RUNNING: &str = r#"
title = "running max"
seed = 5
runs = 8
x = { variable = "k", label = "batch" }
grid = { k = [2] }
point = { n = 100, b = "k*n", batches = 6 }

[[series]]
name = "Two-Choice without random tie-breaking"
process = { kind = "two_choice" }
tie_break = "position"
statistic = "running_max_gap"

[[reference]]
file = "batched22_fig8_4_paper.csv"
label = "published"
x_shift = -1
"#;

#[test]
fn running_max_gap_rows_are_per_batch_and_nondecreasing() {
    let r = run_experiment(&parse(RUNNING), &opts()).unwrap();
    let xs: Vec<f64> = r.rows.iter().map(|r| r.x).collect();
    assert_eq!(xs, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert!(r.rows.windows(2).all(|w| w[1].summary.mean >= w[0].summary.mean));
    assert!(r.rows.iter().all(|r| r.statistic == Statistic::RunningMaxGap));
    // n = 100 is not in the reference: nothing matched, whatever the shift.
    assert!(r.rows.iter().all(|r| r.refs[0].is_none()));
}

#[test]
fn x_shift_maps_published_plot_positions_to_batches() {
    // The published Figure 8.4 plots batch j at x = j + 1.
    let src =
        RUNNING.replace("n = 100, b = \"k*n\"", "n = 1000, b = \"k*n\"").replace("[2]", "[25]");
    let src = src.replace("batches = 6", "batches = 2").replace("runs = 8", "runs = 2");
    let r = run_experiment(&parse(&src), &opts()).unwrap();
    // Batch 1 is the published point at x = 2 (41.41), batch 2 the one at x = 3.
    assert_eq!(r.rows[0].refs[0].as_ref().map(|c| c.value), Some(41.41));
    assert_eq!(r.rows[1].x, 2.0);
    assert!(r.rows[1].refs[0].is_some());
}

#[test]
fn rounding_rules() {
    assert_eq!(Rounding::Floor.apply(7.99), 7);
    assert_eq!(Rounding::Ceil.apply(7.01), 8);
    assert_eq!(Rounding::Ceil.apply(7.0), 7);
    assert_eq!(Rounding::Floor.apply(-0.5), -1);
    let src = |round: &str| {
        format!(
            r#"
title = "rounding"
seed = 9
runs = 10
x = {{ variable = "k" }}
grid = {{ k = [1] }}
point = {{ n = 50, m = 525 }}

[[series]]
name = "Two-Choice"
process = {{ kind = "two_choice" }}
statistic = "final_gap"
{round}
"#
        )
    };
    let raw = run_experiment(&parse(&src("")), &opts()).unwrap();
    let floor = run_experiment(&parse(&src("round = \"floor\"")), &opts()).unwrap();
    let ceil = run_experiment(&parse(&src("round = \"ceil\"")), &opts()).unwrap();
    let (r, f, c) =
        (raw.rows[0].summary.mean, floor.rows[0].summary.mean, ceil.rows[0].summary.mean);
    // Same seeds, so the same runs; with W/n = 10.5 every gap is an integer plus 1/2, so
    // rounding down and up are exactly 1/2 below and above.
    assert!((r - f - 0.5).abs() < 1e-9 && (c - r - 0.5).abs() < 1e-9, "{f} {r} {c}");
    assert!((f * 10.0).fract().abs() < 1e-9 && (c * 10.0).fract().abs() < 1e-9);
    assert_eq!(floor.rows[0].summary.rounding, Rounding::Floor);
    assert!(parse_err(&src("round = \"nearest\"")).contains("floor"));
}

#[test]
fn distribution_cells_and_binomial_z() {
    let cells = distribution_cells(&[3.2, 3.9, 4.0, 5.5], Rounding::Ceil, &[2, 4]);
    let got: Vec<(i64, usize)> = cells.iter().map(|c| (c.gap, c.count)).collect();
    assert_eq!(got, vec![(2, 0), (4, 3), (6, 1)]);
    assert_eq!(cells.iter().map(|c| c.percent).sum::<f64>(), 100.0);
    assert!((cells[1].stderr - 100.0 * (0.75f64 * 0.25 / 4.0).sqrt()).abs() < 1e-12);
    assert!(percent_z(50.0, 100, 50.0, 100).unwrap().abs() < 1e-12);
    assert!(percent_z(100.0, 100, 0.0, 100).unwrap() > 10.0);
}

const DIST: &str = r#"
title = "distribution"
seed = 11
runs = 20
x = { variable = "g", label = "gap" }
grid = { n = [10000], g = [0, 4] }
point = { n = "n", m = "20 * n" }

[[series]]
name = "g-Bounded"
process = { kind = "g_bounded", g = "g" }
statistic = "distribution"
round = "floor"
reference = "g-Bounded n={n} g={g}"

[[reference]]
file = "noise22_dist_g_bounded.csv"
label = "published"
"#;

#[test]
fn distributions_sum_to_100_and_cover_the_published_support() {
    let r = run_experiment(&parse(DIST), &opts()).unwrap();
    for g in [0.0, 4.0] {
        let rows: Vec<_> = r
            .rows
            .iter()
            .filter(|row| row.group.iter().any(|(k, v)| k == "g" && *v == g))
            .collect();
        let total: f64 = rows.iter().map(|row| row.summary.mean).sum();
        assert!((total - 100.0).abs() < 1e-9, "g = {g}: {total}");
        assert!(rows.iter().all(|row| row.summary.runs == 20));
        // Every published gap value has a row (0 % when we never saw it), with a reference.
        let published: &[f64] = if g == 0.0 { &[2.0, 3.0] } else { &[8.0, 9.0, 10.0] };
        for x in published {
            let row = rows.iter().find(|row| row.x == *x).expect("published value has a row");
            assert!(row.refs[0].is_some());
        }
        // Values we saw but the paper did not list compare with 0 %.
        for row in rows.iter().filter(|row| !published.contains(&row.x)) {
            assert_eq!(row.refs[0].as_ref().map(|c| c.value), Some(0.0));
        }
    }
    let md = r.to_report();
    assert!(md.contains("## Distribution: g-Bounded"), "{md}");
    assert!(md.contains("mean: published"), "{md}");
}

#[test]
fn blocks_sampling_gives_one_sample_per_block() {
    let src = DIST.replace("runs = 20", "runs = 2\nsampling = { blocks = 5 }");
    let exp = parse(&src);
    let plan = exp.plan(false).unwrap();
    let p = &plan.points[0];
    assert_eq!((p.m, p.spec.m, p.spec.observe_every), (200_000, 1_000_000, Some(200_000)));
    assert!(p.spec.record_trajectory);
    let r = run_experiment(&exp, &opts()).unwrap();
    assert!(r.rows.iter().all(|row| row.summary.runs == 10));
    assert_eq!(r.meta.sampling.map(|s| s.blocks), Some(5));
    assert!(r.to_report().contains("consecutive blocks"));
    // Blocks need a sequential final-gap or distribution statistic.
    let bad = src.replace("statistic = \"distribution\"", "statistic = \"max_gap\"");
    assert!(parse_err(&bad).contains("sampling"), "{}", parse_err(&bad));
    assert!(parse_err(&DIST.replace("runs = 20", "runs = 2\nsampling = { blocks = 0 }"))
        .contains("blocks"));
}

#[test]
fn reduced_scale_is_documented_and_optional() {
    let src = format!("{DIST}\n[reduced]\nruns = 3\ngrid = {{ g = [4] }}\n");
    let exp = parse(&src);
    assert!(exp.has_reduced());
    let plan = exp.plan_at(Scale::Reduced).unwrap();
    assert_eq!((plan.runs, plan.points.len()), (3, 1));
    let what = exp.scale_changes(Scale::Reduced);
    assert!(what.contains("runs 3 (full: 20)") && what.contains("grid g = [4]"), "{what}");
    let mut o = opts();
    o.reduced = true;
    let r = run_experiment(&exp, &o).unwrap();
    assert_eq!(r.meta.scale, Scale::Reduced);
    assert!(r.to_report().contains("**reduced scale**"));
    // Without a [reduced] table, --reduced runs the full scale.
    let r = run_experiment(&parse(DIST), &o).unwrap();
    assert_eq!((r.meta.scale, r.meta.runs), (Scale::Full, 20));
}

#[test]
fn point_cache_resumes_with_identical_results() {
    let dir = std::env::temp_dir().join(format!("ballast-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut o = opts();
    o.cache_dir = Some(dir.clone());
    let exp = parse(DIST);
    let first = run_experiment(&exp, &o).unwrap();
    assert_eq!(first.meta.cached_points, 0);
    // A later invocation (new options: no checkpoint written by them yet) reads them as
    // cached.
    let mut later = opts();
    later.cache_dir = Some(dir.clone());
    let second = run_experiment(&exp, &later).unwrap();
    assert_eq!((second.meta.cached_points, second.meta.shared_points), (2, 0));
    assert_eq!(first.to_csv(), second.to_csv());
    // The options that wrote them read them as shared: written in the same invocation.
    let third = run_experiment(&exp, &o).unwrap();
    assert_eq!((third.meta.cached_points, third.meta.shared_points), (0, 2));
    assert_eq!(first.to_csv(), third.to_csv());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn new_config_fields_parse() {
    let src = r#"
title = "fields"
seed = 1
runs = 2
x = { variable = "bsize", label = "b", log = true }
grid = { bsize = [10, 1000] }
point = { n = 1000, b = "bsize", m = "n * (50 + 950 * min(1, floor(bsize / n)))" }

[[series]]
name = "b-Batch"
process = { kind = "two_choice" }
statistic = "final_gap"
round = "ceil"

[[series]]
name = "σ-Noisy-Load"
process = { kind = "sigma_noisy_load", sigma = 2, truncate = true }
setting = "sequential"
m = "10 * n"
statistic = "distribution"

[[series]]
name = "g-Myopic"
process = { kind = "g_myopic", g = "1 + 1" }
setting = "sequential"
m = "10 * n"

[report]
mark_minima = true
"#;
    let exp = parse(src);
    let plan = exp.plan(false).unwrap();
    let ms: Vec<u64> = plan.points.iter().take(2).map(|p| p.m).collect();
    assert_eq!(ms, vec![50_000, 1_000_000]);
    assert_eq!(plan.series[0].round, Some(Rounding::Ceil));
    assert_eq!(plan.series[1].statistic, Statistic::Distribution);
    assert!(matches!(
        plan.points[2].spec.process,
        ballast_core::ProcessSpec::SigmaNoisyLoad { sigma, truncate: true } if sigma == 2.0
    ));
    assert!(matches!(
        plan.points[4].spec.process,
        ballast_core::ProcessSpec::GMyopic { g } if g == 2.0
    ));
    let r = run_experiment(&exp, &opts()).unwrap();
    assert!(r.x_log && r.mark_minima);
    assert!(r.to_report().contains("## Minima"));
    let svg = {
        let dir = std::env::temp_dir().join(format!("ballast-fields-{}", std::process::id()));
        let files = r.write(&dir).unwrap();
        let svg = std::fs::read_to_string(
            files.iter().find(|f| f.extension().unwrap() == "svg").unwrap(),
        )
        .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        svg
    };
    assert!(svg.contains("minimum (ours)"));
    let e = parse_err(&src.replace("log = true", "log = 1"));
    assert!(e.contains("stats.toml:5:"), "{e}");
    let e = parse_err(&src.replace("mark_minima", "mark_minimum"));
    assert!(e.contains("mark_minima"), "{e}");
}
